/* diff.c: schedule comparison with each real step's dependency set normalised. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util.h"

/* The walk: every difference goes to fn (when set) unless its attribute is ignored; the first one
 * is kept in *first (when set). */
struct walk {
    const struct cs_diff_opts *opts;
    cs_diff_fn fn;
    void *ctx;
    struct cs_sched_diff *first;
    long n;
};

static int ignored(const struct walk *w, const char *attr)
{
    for (int i = 0; w->opts != NULL && i < w->opts->nignore; i++)
        if (strcmp(w->opts->ignore[i], attr) == 0)
            return 1;
    return 0;
}

static int differ(struct walk *w, int gpu, int tb, int step, const char *attr, const char *a,
                  const char *b)
{
    struct cs_sched_diff d = {gpu, tb, step, "", "", ""};

    if (ignored(w, attr))
        return 0;
    snprintf(d.attr, sizeof(d.attr), "%s", attr);
    snprintf(d.a, sizeof(d.a), "%s", a);
    snprintf(d.b, sizeof(d.b), "%s", b);
    if (w->n++ == 0 && w->first != NULL)
        *w->first = d;
    if (w->fn != NULL)
        w->fn(w->ctx, &d);
    return 1;
}

static int differ_int(struct walk *w, int gpu, int tb, int step, const char *attr, long long a,
                      long long b)
{
    char x[32], y[32];

    if (a == b)
        return 0;
    snprintf(x, sizeof(x), "%lld", a);
    snprintf(y, sizeof(y), "%lld", b);
    return differ(w, gpu, tb, step, attr, x, y);
}

static int dep_cmp(const void *a, const void *b)
{
    const struct cs_dep *x = a, *y = b;
    int c = cs_cmp_ll(x->tb, y->tb);

    return c ? c : cs_cmp_ll(x->step, y->step);
}

/* The sorted dependency set of step i, in a malloc'd array; *n its size. NULL on OOM with n > 0. */
static struct cs_dep *dep_set(const struct cs_tb *tb, int i, int *n)
{
    int k = cs_tb_step_deps(tb, i, NULL, 0);
    struct cs_dep *v;

    *n = k;
    if (k == 0)
        return NULL;
    v = malloc((size_t)k * sizeof(*v));
    if (v == NULL)
        return NULL;
    cs_tb_step_deps(tb, i, v, k);
    qsort(v, (size_t)k, sizeof(*v), dep_cmp);
    return v;
}

static void format_deps(char *buf, size_t len, const struct cs_dep *v, int n)
{
    size_t used = 0;

    snprintf(buf, len, "none");
    for (int i = 0; i < n && used < len; i++)
        used +=
            (size_t)snprintf(buf + used, len - used, "%s%d:%d", i ? " " : "", v[i].tb, v[i].step);
}

static const char *str(const char *s)
{
    return s ? s : "";
}

static const char *present(int has)
{
    return has ? "present" : "(absent)";
}

static void cmp_step(struct walk *w, const struct cs_tb *ta, const struct cs_tb *tb, int g, int t,
                     int s)
{
    const struct cs_step *x = &ta->steps[s], *y = &tb->steps[s];
    struct cs_dep *dx, *dy;
    int nx, ny;

    differ_int(w, g, t, s, "s", x->s, y->s);
    if (x->type != y->type) {
        differ(w, g, t, s, "type", str(cs_step_type_name(x->type)),
               str(cs_step_type_name(y->type)));
        return; /* the other attributes mean other things */
    }
    if (x->type == CS_STEP_NOP)
        return; /* its dependency belongs to the next real step's set */
    if (x->srcbuf != y->srcbuf)
        differ(w, g, t, s, "srcbuf", (char[2]){cs_buf_char(x->srcbuf), 0},
               (char[2]){cs_buf_char(y->srcbuf), 0});
    differ_int(w, g, t, s, "srcoff", x->srcoff, y->srcoff);
    if (x->dstbuf != y->dstbuf)
        differ(w, g, t, s, "dstbuf", (char[2]){cs_buf_char(x->dstbuf), 0},
               (char[2]){cs_buf_char(y->dstbuf), 0});
    differ_int(w, g, t, s, "dstoff", x->dstoff, y->dstoff);
    differ_int(w, g, t, s, "cnt", x->cnt, y->cnt);
    differ_int(w, g, t, s, "hasdep", x->hasdep, y->hasdep);
    dx = dep_set(ta, s, &nx);
    dy = dep_set(tb, s, &ny);
    if ((nx > 0 && dx == NULL) || (ny > 0 && dy == NULL)) {
        differ(w, g, t, s, "deps", "(out of memory)", "(out of memory)");
    } else if (nx != ny || (nx > 0 && memcmp(dx, dy, (size_t)nx * sizeof(*dx)) != 0)) {
        char a[256], b[256];

        format_deps(a, sizeof(a), dx, nx);
        format_deps(b, sizeof(b), dy, ny);
        differ(w, g, t, s, "deps", a, b);
    }
    free(dx);
    free(dy);
}

static const char *opt01(int has, int v)
{
    return has ? (v ? "1" : "0") : "(absent)";
}

static void cmp_algo(struct walk *w, const struct cs_sched *a, const struct cs_sched *b)
{
    if (strcmp(str(a->name), str(b->name)) != 0)
        differ(w, -1, -1, -1, "name", str(a->name), str(b->name));
    if (a->proto != b->proto)
        differ(w, -1, -1, -1, "proto", str(cs_proto_name(a->proto)), str(cs_proto_name(b->proto)));
    differ_int(w, -1, -1, -1, "nchannels", a->nchannels, b->nchannels);
    differ_int(w, -1, -1, -1, "nchunksperloop", a->nchunksperloop, b->nchunksperloop);
    differ_int(w, -1, -1, -1, "ngpus", a->ngpus, b->ngpus);
    if (a->coll != b->coll)
        differ(w, -1, -1, -1, "coll", str(cs_coll_name(a->coll)), str(cs_coll_name(b->coll)));
    differ_int(w, -1, -1, -1, "inplace", a->inplace, b->inplace);
    if (a->has_outofplace != b->has_outofplace || a->outofplace != b->outofplace)
        differ(w, -1, -1, -1, "outofplace", opt01(a->has_outofplace, a->outofplace),
               opt01(b->has_outofplace, b->outofplace));
    if (a->has_min_bytes != b->has_min_bytes)
        differ(w, -1, -1, -1, "minBytes", present(a->has_min_bytes), present(b->has_min_bytes));
    else
        differ_int(w, -1, -1, -1, "minBytes", a->min_bytes, b->min_bytes);
    if (a->has_max_bytes != b->has_max_bytes)
        differ(w, -1, -1, -1, "maxBytes", present(a->has_max_bytes), present(b->has_max_bytes));
    else
        differ_int(w, -1, -1, -1, "maxBytes", a->max_bytes, b->max_bytes);
}

long cs_sched_compare_all(const struct cs_sched *a, const struct cs_sched *b,
                          const struct cs_diff_opts *opts, cs_diff_fn fn, void *ctx,
                          struct cs_sched_diff *first)
{
    struct walk w = {opts, fn, ctx, first, 0};
    int ngpus = a->ngpus < b->ngpus ? a->ngpus : b->ngpus;

    cmp_algo(&w, a, b);
    /* Where counts differ, the common part is compared and the count reported. */
    for (int g = 0; g < ngpus; g++) {
        const struct cs_gpu *ga = &a->gpus[g], *gb = &b->gpus[g];
        int ntbs = ga->ntbs < gb->ntbs ? ga->ntbs : gb->ntbs;

        differ_int(&w, g, -1, -1, "id", ga->id, gb->id);
        differ_int(&w, g, -1, -1, "i_chunks", ga->i_chunks, gb->i_chunks);
        differ_int(&w, g, -1, -1, "o_chunks", ga->o_chunks, gb->o_chunks);
        differ_int(&w, g, -1, -1, "s_chunks", ga->s_chunks, gb->s_chunks);
        differ_int(&w, g, -1, -1, "tbs", ga->ntbs, gb->ntbs);
        for (int t = 0; t < ntbs; t++) {
            const struct cs_tb *ta = &ga->tbs[t], *tb = &gb->tbs[t];

            differ_int(&w, g, t, -1, "id", ta->id, tb->id);
            differ_int(&w, g, t, -1, "send", ta->send, tb->send);
            differ_int(&w, g, t, -1, "recv", ta->recv, tb->recv);
            differ_int(&w, g, t, -1, "chan", ta->chan, tb->chan);
            for (int s = 0; s < ta->nsteps && s < tb->nsteps; s++)
                cmp_step(&w, ta, tb, g, t, s);
            differ_int(&w, g, t, -1, "steps", ta->nsteps, tb->nsteps);
        }
    }
    return w.n;
}

int cs_sched_compare(const struct cs_sched *a, const struct cs_sched *b, struct cs_sched_diff *d)
{
    return cs_sched_compare_all(a, b, NULL, NULL, NULL, d) > 0;
}
