/* regress.c: comparing predictions with a baseline. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "parse.h"
#include "plan.h"
#include "platform.h"
#include "regress.h"
#include "sched.h"

/* The baseline's columns, in the order of the CS_REGRESS_* indices. */
static const char *const cols[CS_REGRESS_NCOLS] = {
    "schedule", "platform", "protocol", "size_bytes", "time_us", "busbw_GBps", "status"};

/* Strip the last component of a path: "a/b" -> "a", "b" -> ".", "/b" -> "/". */
static void dir_of(char *path)
{
    char *slash = strrchr(path, '/');

    if (slash == NULL)
        strcpy(path, ".");
    else if (slash == path)
        path[1] = '\0';
    else
        *slash = '\0';
}

int cs_regress_resolve(const char *dir, const char *rel, char *buf, size_t len)
{
    char d[2048];

    if (rel[0] != '/') {
        snprintf(d, sizeof(d), "%s", dir);
        for (;;) {
            if ((size_t)snprintf(buf, len, "%s/%s", d, rel) < len && access(buf, R_OK) == 0)
                return 0;
            if (strcmp(d, "/") == 0 || strcmp(d, ".") == 0)
                break;
            dir_of(d);
        }
    }
    snprintf(buf, len, "%s", rel);
    return access(buf, R_OK) == 0 ? 0 : CS_ERR_IO;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;

    return x < y ? -1 : x > y;
}

static int same_group(const struct cs_table *t, long a, long b)
{
    for (int c = CS_REGRESS_SCHED; c <= CS_REGRESS_PROTO; c++)
        if (strcmp(cs_table_get(t, a, c), cs_table_get(t, b, c)) != 0)
            return 0;
    return 1;
}

static int check_header(const struct cs_table *t, const char *path, struct cs_error *err)
{
    int ok = t->ncols == CS_REGRESS_NCOLS;

    for (int i = 0; ok && i < CS_REGRESS_NCOLS; i++)
        ok = strcmp(t->cols[i], cols[i]) == 0;
    return ok ? 0
              : cs_error_fail(err, CS_ERR_PARSE, path, 0,
                              "a baseline has the columns %s,%s,%s,%s,%s,%s,%s", cols[0], cols[1],
                              cols[2], cols[3], cols[4], cols[5], cols[6]);
}

/* Check one row's protocol and paths. */
static int check_row(const struct cs_regress_base *b, long r, struct cs_error *err)
{
    const struct cs_table *t = b->t;
    const char *proto = cs_table_get(t, r, CS_REGRESS_PROTO);
    char buf[4096];

    if (strcmp(proto, "-") != 0 && cs_proto_parse(proto) == 0)
        return cs_error_fail(err, CS_ERR_INVALID, b->path, t->lines[r],
                             "bad protocol '%s' (LL, LL128, Simple or -)", proto);
    for (int c = CS_REGRESS_SCHED; c <= CS_REGRESS_PLAT; c++) {
        const char *rel = cs_table_get(t, r, c);

        if ((c == CS_REGRESS_PLAT || strncmp(rel, "gen:", 4) != 0) &&
            cs_regress_resolve(b->dir, rel, buf, sizeof(buf)) != 0)
            return cs_error_fail(err, CS_ERR_IO, b->path, t->lines[r],
                                 "%s '%s' not found beside the baseline or in a folder above it",
                                 cols[c], rel);
    }
    return 0;
}

/* Add row r of size `size` to group g (its size not yet there). */
static int group_add(struct cs_regress_base *b, struct cs_regress_group *g, long r, long long size,
                     struct cs_error *err)
{
    long long *ns;
    long *nr;

    for (int s = 0; s < g->n; s++)
        if (g->sizes[s] == size)
            return cs_error_fail(err, CS_ERR_INVALID, b->path, b->t->lines[r],
                                 "size %lld repeats line %d", size, b->t->lines[g->rows[s]]);
    if ((ns = realloc(g->sizes, sizeof(*ns) * (size_t)(g->n + 1))) != NULL)
        g->sizes = ns;
    if ((nr = realloc(g->rows, sizeof(*nr) * (size_t)(g->n + 1))) != NULL)
        g->rows = nr;
    if (ns == NULL || nr == NULL)
        return CS_ERR_NOMEM;
    g->sizes[g->n] = size;
    g->rows[g->n++] = r;
    return 0;
}

/* Check every row and put it in its group. */
static int group_rows(struct cs_regress_base *b, struct cs_error *err)
{
    const struct cs_table *t = b->t;
    int rc = 0;

    if ((b->groups = calloc((size_t)t->nrows + 1, sizeof(*b->groups))) == NULL)
        return CS_ERR_NOMEM;
    for (long r = 0; r < t->nrows && rc == 0; r++) {
        const char *cell = cs_table_get(t, r, CS_REGRESS_SIZE);
        long long size;
        int k;

        if (cs_parse_ll(cell, 1, (1LL << 62), &size) != 0)
            return cs_error_fail(err, CS_ERR_PARSE, b->path, t->lines[r], "bad size_bytes '%s'",
                                 cell);
        if ((rc = check_row(b, r, err)) != 0)
            return rc;
        for (k = 0; k < b->ngroups && !same_group(t, b->groups[k].first, r); k++)
            ;
        if (k == b->ngroups)
            b->groups[b->ngroups++].first = r;
        rc = group_add(b, &b->groups[k], r, size, err);
    }
    for (int k = 0; k < b->ngroups; k++)
        qsort(b->groups[k].sizes, (size_t)b->groups[k].n, sizeof(long long), cmp_ll);
    return rc;
}

int cs_regress_read(const char *path, struct cs_regress_base **out, struct cs_error *err)
{
    struct cs_regress_base *b = calloc(1, sizeof(*b));
    int rc;

    if (b == NULL)
        return CS_ERR_NOMEM;
    snprintf(b->path, sizeof(b->path), "%s", path);
    snprintf(b->dir, sizeof(b->dir), "%s", path);
    dir_of(b->dir);
    if ((rc = cs_table_read(path, &b->t, err)) == 0 && (rc = check_header(b->t, path, err)) == 0)
        rc = group_rows(b, err);
    if (rc != 0) {
        cs_regress_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

void cs_regress_free(struct cs_regress_base *b)
{
    if (b == NULL)
        return;
    for (int k = 0; b->groups != NULL && k < b->ngroups; k++) {
        free(b->groups[k].rows);
        free(b->groups[k].sizes);
    }
    free(b->groups);
    cs_table_free(b->t);
    free(b);
}

int cs_regress_select(int ngroups, long subset, int *order)
{
    long n = subset <= 0 || subset >= ngroups ? ngroups : subset;

    /* spread evenly; with n == ngroups, every group in order */
    for (long i = 0; i < n; i++)
        order[i] = (int)(i * ngroups / n);
    return (int)n;
}

int cs_regress_moved(const char *old_status, double old_us, const char *new_status, double new_us,
                     double tol_pct, double *change_pct)
{
    double ch = 0;
    int moved;

    if (strcmp(old_status, new_status) != 0) {
        moved = 1;
    } else if (strcmp(old_status, "ok") != 0) {
        moved = 0;
    } else if (!(old_us > 0) || !isfinite(old_us) || !isfinite(new_us)) {
        moved = old_us != new_us;
    } else {
        ch = (new_us - old_us) / old_us * 100.0;
        moved = fabs(ch) > tol_pct;
    }
    if (change_pct != NULL)
        *change_pct = ch;
    return moved;
}

int cs_regress_geometric(const long long *sizes, int n, long long *factor)
{
    long long f;

    if (n <= 0)
        return 0;
    if (n == 1) {
        *factor = 2;
        return 1;
    }
    if (sizes[0] <= 0 || sizes[1] % sizes[0] != 0 || (f = sizes[1] / sizes[0]) < 2)
        return 0;
    for (int i = 2; i < n; i++)
        if (sizes[i - 1] > sizes[i] / f || sizes[i] != sizes[i - 1] * f)
            return 0;
    *factor = f;
    return 1;
}

/* The sizes to predict for g, as predict -b -e -f would visit them (one run when geometric, else
 * one per size), rounded as predict rounds them. */
static int group_sizes(const struct cs_sched *sched, int type_bytes,
                       const struct cs_regress_group *g, long long **sizes, int *n)
{
    long long f, *v;
    int k = 0;

    if (cs_regress_geometric(g->sizes, g->n, &f))
        return cs_predict_sizes(sched, type_bytes, g->sizes[0], g->sizes[g->n - 1], f, sizes, n,
                                NULL);
    if ((v = malloc(sizeof(*v) * (size_t)g->n)) == NULL)
        return CS_ERR_NOMEM;
    for (int i = 0; i < g->n; i++) {
        long long r = cs_plan_round_size(sched, g->sizes[i], type_bytes);

        if (k == 0 || v[k - 1] != r)
            v[k++] = r;
    }
    *sizes = v;
    *n = k;
    return 0;
}

int cs_regress_predict(const struct cs_regress_base *b, const struct cs_regress_group *g,
                       struct cs_predict_row **rows, int *n, struct cs_error *err)
{
    const char *sched = cs_table_get(b->t, g->first, CS_REGRESS_SCHED);
    const char *proto = cs_table_get(b->t, g->first, CS_REGRESS_PROTO);
    char sp[4096], pp[4096];
    struct cs_predict_input in = {0};
    struct cs_predict_opts opts = {0};
    struct cs_sched *s = NULL;
    struct cs_platform *p = NULL;
    struct cs_predict_row *r = NULL;
    long long *sizes = NULL;
    int ns = 0, rc;

    if (strncmp(sched, "gen:", 4) == 0)
        in.gen_spec = sched + 4;
    else if (cs_regress_resolve(b->dir, sched, sp, sizeof(sp)) == 0)
        in.sched_path = sp;
    if (cs_regress_resolve(b->dir, cs_table_get(b->t, g->first, CS_REGRESS_PLAT), pp, sizeof(pp)) ==
        0)
        in.plat_path = pp;
    opts.proto = strcmp(proto, "-") == 0 ? 0 : cs_proto_parse(proto);
    opts.type_bytes = cs_dtype_bytes("float");
    if ((rc = cs_predict_load(&in, &s, &p, err)) != 0)
        return rc;
    rc = group_sizes(s, opts.type_bytes, g, &sizes, &ns);
    if (rc == 0 && (r = calloc((size_t)ns, sizeof(*r))) == NULL)
        rc = CS_ERR_NOMEM;
    if (rc == 0 && (rc = cs_predict_run(s, p, &opts, sizes, ns, r, err)) == 0) {
        *rows = r;
        *n = ns;
    } else {
        free(r);
    }
    free(sizes);
    cs_sched_free(s);
    cs_platform_free(p);
    return rc;
}

void cs_regress_compare(const struct cs_regress_base *b, long row, const struct cs_table *res,
                        double tol_pct, struct cs_regress_cmp *out)
{
    const char *os = cs_table_get(b->t, row, CS_REGRESS_STATUS);
    const char *ot = cs_table_get(b->t, row, CS_REGRESS_TIME);
    int cs = res ? cs_table_find_col(res, "size_bytes") : -1;
    char s[32];

    memset(out, 0, sizeof(*out));
    out->row = row;
    cs_parse_ll(cs_table_get(b->t, row, CS_REGRESS_SIZE), 1, (1LL << 62), &out->size_bytes);
    snprintf(s, sizeof(s), "%lld", out->size_bytes);
    for (long r = 0; cs >= 0 && r < res->nrows && out->time_us == NULL; r++)
        if (strcmp(cs_table_get(res, r, cs), s) == 0) {
            out->time_us = cs_table_get(res, r, cs_table_find_col(res, "time_us"));
            out->busbw_GBps = cs_table_get(res, r, cs_table_find_col(res, "busbw_GBps"));
            out->status = cs_table_get(res, r, cs_table_find_col(res, "status"));
        }
    if (out->time_us == NULL) {
        out->moved = 1;
        snprintf(out->change, sizeof(out->change), "missing");
        return;
    }
    out->moved = cs_regress_moved(os, strtod(ot, NULL), out->status, strtod(out->time_us, NULL),
                                  tol_pct, &out->change_pct);
    if (strcmp(os, out->status) != 0)
        snprintf(out->change, sizeof(out->change), "%s>%s", os[0] ? os : "none", out->status);
    else
        snprintf(out->change, sizeof(out->change), "%+.2f%%", out->change_pct);
}

int cs_regress_update(struct cs_regress_base *b, const struct cs_regress_cmp *c)
{
    /* cells are owned by the table: replace in place */
    char **cell = &b->t->cells[c->row * b->t->ncols];
    char *t, *bw, *st;

    if (c->time_us == NULL)
        return 0;
    t = strdup(c->time_us), bw = strdup(c->busbw_GBps), st = strdup(c->status);
    if (t == NULL || bw == NULL || st == NULL) {
        free(t), free(bw), free(st);
        return CS_ERR_NOMEM;
    }
    free(cell[CS_REGRESS_TIME]), free(cell[CS_REGRESS_BUSBW]), free(cell[CS_REGRESS_STATUS]);
    cell[CS_REGRESS_TIME] = t, cell[CS_REGRESS_BUSBW] = bw, cell[CS_REGRESS_STATUS] = st;
    return 0;
}

int cs_regress_write(const struct cs_regress_base *b, struct cs_error *err)
{
    struct cs_outfile out;
    int rc;

    if ((rc = cs_outfile_open(&out, b->path, err)) != 0)
        return rc;
    cs_table_write(b->t, out.fp); /* a failed write fails the close */
    return cs_outfile_close(&out, err);
}
