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

/* A baseline row as grouping sees it: its (schedule, platform, protocol) and size. */
struct row_key {
    const char *group[3];
    long long size;
    long row;
};

static int cmp_group(const struct row_key *x, const struct row_key *y)
{
    int c = 0;

    for (int i = 0; i < 3 && c == 0; i++)
        c = strcmp(x->group[i], y->group[i]);
    return c;
}

/* By group, then size, then row. */
static int cmp_row_key(const void *a, const void *b)
{
    const struct row_key *x = a, *y = b;
    int c = cmp_group(x, y);

    if (c != 0)
        return c;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return (x > y) - (x < y);
}

static int cmp_first(const void *a, const void *b)
{
    const struct cs_regress_group *x = a, *y = b;

    return (x->first > y->first) - (x->first < y->first);
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

/* Check one row's recorded prediction: a known status (empty until the first --update), and
 * time_us and busbw_GBps numbers >= 0 where given, time_us given when the status is ok. Anything
 * else would be compared as a move. */
static int check_result(const struct cs_regress_base *b, long r, struct cs_error *err)
{
    static const char *const statuses[] = {"", "ok", "deadlock", "hang", "unsupported"};
    const struct cs_table *t = b->t;
    const char *status = cs_table_get(t, r, CS_REGRESS_STATUS);
    size_t k = 0;
    double v;

    while (k < sizeof(statuses) / sizeof(statuses[0]) && strcmp(status, statuses[k]) != 0)
        k++;
    if (k == sizeof(statuses) / sizeof(statuses[0]))
        return cs_error_fail(err, CS_ERR_PARSE, b->path, t->lines[r],
                             "bad status '%s' (ok, deadlock, hang, unsupported, or empty before "
                             "the first --update)",
                             status);
    for (int c = CS_REGRESS_TIME; c <= CS_REGRESS_BUSBW; c++) {
        const char *cell = cs_table_get(t, r, c);

        if (cell[0] == '\0' && c == CS_REGRESS_TIME && strcmp(status, "ok") == 0)
            return cs_error_fail(err, CS_ERR_PARSE, b->path, t->lines[r],
                                 "status ok without a time_us");
        if (cell[0] != '\0' && cs_parse_double(cell, 0, HUGE_VAL, &v) != 0)
            return cs_error_fail(err, CS_ERR_PARSE, b->path, t->lines[r],
                                 "%s '%s' is not a number >= 0", cols[c], cell);
    }
    return 0;
}

/* Check one row's protocol, paths and recorded prediction. */
static int check_row(const struct cs_regress_base *b, long r, struct cs_error *err)
{
    const struct cs_table *t = b->t;
    const char *proto = cs_table_get(t, r, CS_REGRESS_PROTO);
    char buf[4096];

    if (strcmp(proto, "-") != 0 && cs_proto_parse(proto) == 0)
        return cs_error_fail(err, CS_ERR_INVALID, b->path, t->lines[r],
                             "bad protocol '%s' (LL, LL128, Simple or -)", proto);
    if (check_result(b, r, err) != 0)
        return CS_ERR_PARSE;
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

/* The key of the first row (in table order) whose size repeats an earlier row's in its group,
 * in *at: in keys sorted by cmp_row_key, the second of a run of one size, the earlier row before
 * it. 1 when found, else 0. */
static int find_repeat(const struct row_key *keys, long n, long *at)
{
    int found = 0;

    for (long i = 1; i < n; i++)
        if (cmp_group(&keys[i - 1], &keys[i]) == 0 && keys[i - 1].size == keys[i].size &&
            (i == 1 || cmp_group(&keys[i - 2], &keys[i]) != 0 ||
             keys[i - 2].size != keys[i].size) &&
            (!found || keys[i].row < keys[*at].row)) {
            *at = i;
            found = 1;
        }
    return found;
}

/* Make group g of the n keys of one group (sorted by size): its sizes ascending, its rows in
 * table order. */
static int group_make(struct cs_regress_group *g, const struct row_key *keys, long n)
{
    g->sizes = malloc(sizeof(*g->sizes) * (size_t)n);
    g->rows = malloc(sizeof(*g->rows) * (size_t)n);
    if (g->sizes == NULL || g->rows == NULL)
        return CS_ERR_NOMEM;
    for (long i = 0; i < n; i++) {
        g->sizes[i] = keys[i].size;
        g->rows[i] = keys[i].row;
    }
    qsort(g->rows, (size_t)n, sizeof(*g->rows), cmp_long);
    g->first = g->rows[0];
    g->n = (int)n;
    return 0;
}

/* Check every row and group the rows, by sorting (baselines of many rows or groups): groups in
 * the order of their first rows. */
static int group_rows(struct cs_regress_base *b, struct cs_error *err)
{
    const struct cs_table *t = b->t;
    struct row_key *keys = malloc(sizeof(*keys) * (size_t)(t->nrows + 1));
    long at = 0;
    int rc = 0;

    if (keys == NULL || (b->groups = calloc((size_t)t->nrows + 1, sizeof(*b->groups))) == NULL) {
        free(keys);
        return CS_ERR_NOMEM;
    }
    for (long r = 0; r < t->nrows && rc == 0; r++) {
        const char *cell = cs_table_get(t, r, CS_REGRESS_SIZE);
        struct row_key *k = &keys[r];

        if (cs_parse_ll(cell, 1, (1LL << 62), &k->size) != 0)
            rc =
                cs_error_fail(err, CS_ERR_PARSE, b->path, t->lines[r], "bad size_bytes '%s'", cell);
        else
            rc = check_row(b, r, err);
        for (int c = CS_REGRESS_SCHED; c <= CS_REGRESS_PROTO; c++)
            k->group[c - CS_REGRESS_SCHED] = cs_table_get(t, r, c);
        k->row = r;
    }
    if (rc == 0)
        qsort(keys, (size_t)t->nrows, sizeof(*keys), cmp_row_key);
    if (rc == 0 && find_repeat(keys, t->nrows, &at))
        rc = cs_error_fail(err, CS_ERR_INVALID, b->path, t->lines[keys[at].row],
                           "size %lld repeats line %d", keys[at].size, t->lines[keys[at - 1].row]);
    for (long i = 0, e; rc == 0 && i < t->nrows; i = e) {
        for (e = i + 1; e < t->nrows && cmp_group(&keys[i], &keys[e]) == 0; e++)
            ;
        rc = group_make(&b->groups[b->ngroups++], keys + i, e - i);
    }
    if (rc == 0)
        qsort(b->groups, (size_t)b->ngroups, sizeof(*b->groups), cmp_first);
    free(keys);
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
    if ((rc = cs_table_read(path, &b->t, err)) == 0 && (rc = check_header(b->t, path, err)) == 0 &&
        b->t->nrows == 0)
        rc = cs_error_fail(err, CS_ERR_PARSE, path, 0,
                           "no rows: a baseline without predictions would let every change pass");
    if (rc == 0)
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
