/* diff.c: schedule comparison with each real step's dependency set normalised. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static int differ(struct cs_sched_diff *d, int gpu, int tb, int step, const char *attr,
                  const char *a, const char *b)
{
    if (d) {
        d->gpu = gpu;
        d->tb = tb;
        d->step = step;
        snprintf(d->attr, sizeof(d->attr), "%s", attr);
        snprintf(d->a, sizeof(d->a), "%s", a);
        snprintf(d->b, sizeof(d->b), "%s", b);
    }
    return 1;
}

static int differ_int(struct cs_sched_diff *d, int gpu, int tb, int step, const char *attr,
                      long long a, long long b)
{
    char x[32], y[32];

    snprintf(x, sizeof(x), "%lld", a);
    snprintf(y, sizeof(y), "%lld", b);
    return differ(d, gpu, tb, step, attr, x, y);
}

#define CMP_INT(g, t, s, name, x, y)                                                               \
    do {                                                                                           \
        if ((x) != (y))                                                                            \
            return differ_int(d, g, t, s, name, (long long)(x), (long long)(y));                   \
    } while (0)

static int dep_cmp(const void *a, const void *b)
{
    const struct cs_dep *x = a, *y = b;

    if (x->tb != y->tb)
        return x->tb < y->tb ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
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

static int cmp_step(const struct cs_tb *ta, const struct cs_tb *tb, int g, int t, int s,
                    struct cs_sched_diff *d)
{
    const struct cs_step *x = &ta->steps[s], *y = &tb->steps[s];
    struct cs_dep *dx, *dy;
    int nx, ny, rc = 0;

    CMP_INT(g, t, s, "s", x->s, y->s);
    if (x->type != y->type)
        return differ(d, g, t, s, "type", str(cs_step_type_name(x->type)),
                      str(cs_step_type_name(y->type)));
    if (x->type == CS_STEP_NOP)
        return 0; /* its dependency belongs to the next real step's set */
    if (x->srcbuf != y->srcbuf)
        return differ(d, g, t, s, "srcbuf", (char[2]){cs_buf_char(x->srcbuf), 0},
                      (char[2]){cs_buf_char(y->srcbuf), 0});
    CMP_INT(g, t, s, "srcoff", x->srcoff, y->srcoff);
    if (x->dstbuf != y->dstbuf)
        return differ(d, g, t, s, "dstbuf", (char[2]){cs_buf_char(x->dstbuf), 0},
                      (char[2]){cs_buf_char(y->dstbuf), 0});
    CMP_INT(g, t, s, "dstoff", x->dstoff, y->dstoff);
    CMP_INT(g, t, s, "cnt", x->cnt, y->cnt);
    CMP_INT(g, t, s, "hasdep", x->hasdep, y->hasdep);
    dx = dep_set(ta, s, &nx);
    dy = dep_set(tb, s, &ny);
    if ((nx > 0 && dx == NULL) || (ny > 0 && dy == NULL)) {
        rc = differ(d, g, t, s, "deps", "(out of memory)", "(out of memory)");
    } else if (nx != ny || (nx > 0 && memcmp(dx, dy, (size_t)nx * sizeof(*dx)) != 0)) {
        char a[256], b[256];

        format_deps(a, sizeof(a), dx, nx);
        format_deps(b, sizeof(b), dy, ny);
        rc = differ(d, g, t, s, "deps", a, b);
    }
    free(dx);
    free(dy);
    return rc;
}

int cs_sched_compare(const struct cs_sched *a, const struct cs_sched *b, struct cs_sched_diff *d)
{
    if (strcmp(str(a->name), str(b->name)) != 0)
        return differ(d, -1, -1, -1, "name", str(a->name), str(b->name));
    if (a->proto != b->proto)
        return differ(d, -1, -1, -1, "proto", str(cs_proto_name(a->proto)),
                      str(cs_proto_name(b->proto)));
    CMP_INT(-1, -1, -1, "nchannels", a->nchannels, b->nchannels);
    CMP_INT(-1, -1, -1, "nchunksperloop", a->nchunksperloop, b->nchunksperloop);
    CMP_INT(-1, -1, -1, "ngpus", a->ngpus, b->ngpus);
    if (a->coll != b->coll)
        return differ(d, -1, -1, -1, "coll", str(cs_coll_name(a->coll)),
                      str(cs_coll_name(b->coll)));
    CMP_INT(-1, -1, -1, "inplace", a->inplace, b->inplace);
    if (a->has_outofplace != b->has_outofplace || a->outofplace != b->outofplace)
        return differ(d, -1, -1, -1, "outofplace",
                      a->has_outofplace ? (a->outofplace ? "1" : "0") : "(absent)",
                      b->has_outofplace ? (b->outofplace ? "1" : "0") : "(absent)");
    if (a->has_min_bytes != b->has_min_bytes)
        return differ(d, -1, -1, -1, "minBytes", present(a->has_min_bytes),
                      present(b->has_min_bytes));
    CMP_INT(-1, -1, -1, "minBytes", a->min_bytes, b->min_bytes);
    if (a->has_max_bytes != b->has_max_bytes)
        return differ(d, -1, -1, -1, "maxBytes", present(a->has_max_bytes),
                      present(b->has_max_bytes));
    CMP_INT(-1, -1, -1, "maxBytes", a->max_bytes, b->max_bytes);
    for (int g = 0; g < a->ngpus; g++) {
        const struct cs_gpu *ga = &a->gpus[g], *gb = &b->gpus[g];

        CMP_INT(g, -1, -1, "id", ga->id, gb->id);
        CMP_INT(g, -1, -1, "i_chunks", ga->i_chunks, gb->i_chunks);
        CMP_INT(g, -1, -1, "o_chunks", ga->o_chunks, gb->o_chunks);
        CMP_INT(g, -1, -1, "s_chunks", ga->s_chunks, gb->s_chunks);
        CMP_INT(g, -1, -1, "tbs", ga->ntbs, gb->ntbs);
        for (int t = 0; t < ga->ntbs; t++) {
            const struct cs_tb *ta = &ga->tbs[t], *tb = &gb->tbs[t];

            CMP_INT(g, t, -1, "id", ta->id, tb->id);
            CMP_INT(g, t, -1, "send", ta->send, tb->send);
            CMP_INT(g, t, -1, "recv", ta->recv, tb->recv);
            CMP_INT(g, t, -1, "chan", ta->chan, tb->chan);
            for (int s = 0; s < ta->nsteps && s < tb->nsteps; s++)
                if (cmp_step(ta, tb, g, t, s, d))
                    return 1;
            CMP_INT(g, t, -1, "steps", ta->nsteps, tb->nsteps);
        }
    }
    return 0;
}
