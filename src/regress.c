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
#include "report.h"
#include "sched.h"
#include "sweepcsv.h"
#include "sweeprun.h"
#include "util.h"

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

    if (c == 0)
        c = cs_cmp_ll(x->size, y->size);
    return c ? c : cs_cmp_ll(x->row, y->row);
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

/* The file row r came from, for messages. */
static const char *row_path(const struct cs_regress_base *b, long r)
{
    return b->row_file != NULL ? b->row_file[r] : b->path;
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
 * time_us and busbw_GBps numbers >= 0 where given, time_us given and > 0 when the status is
 * ok. Anything else would be compared as a move. */
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
        return cs_error_fail(err, CS_ERR_PARSE, row_path(b, r), t->lines[r],
                             "bad status '%s' (ok, deadlock, hang, unsupported, or empty before "
                             "the first --update)",
                             status);
    for (int c = CS_REGRESS_TIME; c <= CS_REGRESS_BUSBW; c++) {
        const char *cell = cs_table_get(t, r, c);

        if (cell[0] == '\0' && c == CS_REGRESS_TIME && strcmp(status, "ok") == 0)
            return cs_error_fail(err, CS_ERR_PARSE, row_path(b, r), t->lines[r],
                                 "status ok without a time_us");
        if (cell[0] != '\0' && cs_parse_double(cell, 0, HUGE_VAL, &v) != 0)
            return cs_error_fail(err, CS_ERR_PARSE, row_path(b, r), t->lines[r],
                                 "%s '%s' is not a number >= 0", cols[c], cell);
        /* a collective that finished took some time: a change from 0 has no size */
        if (cell[0] != '\0' && c == CS_REGRESS_TIME && strcmp(status, "ok") == 0 && !(v > 0))
            return cs_error_fail(err, CS_ERR_PARSE, row_path(b, r), t->lines[r],
                                 "status ok with time_us %s: a finished collective takes more "
                                 "than 0 us",
                                 cell);
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
        return cs_error_fail(err, CS_ERR_INVALID, row_path(b, r), t->lines[r],
                             "bad protocol '%s' (LL, LL128, Simple or -)", proto);
    if (check_result(b, r, err) != 0)
        return CS_ERR_PARSE;
    for (int c = CS_REGRESS_SCHED; c <= CS_REGRESS_PLAT; c++) {
        const char *rel = cs_table_get(t, r, c);

        if ((c == CS_REGRESS_PLAT || strncmp(rel, "gen:", 4) != 0) &&
            cs_regress_resolve(b->dir, rel, buf, sizeof(buf)) != 0)
            return cs_error_fail(err, CS_ERR_IO, row_path(b, r), t->lines[r],
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
            rc = cs_error_fail(err, CS_ERR_PARSE, row_path(b, r), t->lines[r],
                               "bad size_bytes '%s'", cell);
        else
            rc = check_row(b, r, err);
        for (int c = CS_REGRESS_SCHED; c <= CS_REGRESS_PROTO; c++)
            k->group[c - CS_REGRESS_SCHED] = cs_table_get(t, r, c);
        k->row = r;
    }
    if (rc == 0)
        qsort(keys, (size_t)t->nrows, sizeof(*keys), cmp_row_key);
    if (rc == 0 && find_repeat(keys, t->nrows, &at))
        rc = cs_error_fail(err, CS_ERR_INVALID, row_path(b, keys[at].row), t->lines[keys[at].row],
                           "size %lld repeats %s%s%d", keys[at].size,
                           b->row_file ? row_path(b, keys[at - 1].row) : "line ",
                           b->row_file ? ":" : "", t->lines[keys[at - 1].row]);
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
                     const struct cs_regress_tol *tol, double *change_pct)
{
    double ch = 0;
    int moved;

    if (strcmp(old_status, new_status) != 0) {
        moved = 1;
    } else if (strcmp(old_status, "ok") != 0) {
        moved = 0;
    } else if (!isfinite(old_us) || !isfinite(new_us)) {
        moved = old_us != new_us;
    } else if (!(old_us > 0)) {
        moved = fabs(new_us - old_us) > tol->abs_us && old_us != new_us;
    } else {
        ch = (new_us - old_us) / old_us * 100.0;
        moved = fabs(ch) > tol->pct && fabs(new_us - old_us) > tol->abs_us;
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
                       const struct cs_regress_group *g, long long **sizes, long long **nominal,
                       int *n)
{
    long long f, *v, *w;
    int k = 0;

    *nominal = NULL;
    if (cs_regress_geometric(g->sizes, g->n, &f))
        return cs_predict_sizes(sched, type_bytes, g->sizes[0], g->sizes[g->n - 1], f, sizes, n,
                                NULL);
    v = malloc(sizeof(*v) * (size_t)g->n);
    w = malloc(sizeof(*w) * (size_t)g->n);
    if (v == NULL || w == NULL) {
        free(v);
        free(w);
        return CS_ERR_NOMEM;
    }
    for (int i = 0; i < g->n; i++) {
        long long r = cs_plan_round_size(sched, g->sizes[i], type_bytes);

        if (k == 0 || v[k - 1] != r) {
            w[k] = g->sizes[i]; /* the row's size, which the comparison looks up */
            v[k++] = r;
        }
    }
    *sizes = v;
    *nominal = w;
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
    long long *sizes = NULL, *nominal = NULL;
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
    rc = group_sizes(s, opts.type_bytes, g, &sizes, &nominal, &ns);
    opts.nominal = nominal;
    if (rc == 0 && (r = calloc((size_t)ns, sizeof(*r))) == NULL)
        rc = CS_ERR_NOMEM;
    if (rc == 0 && (rc = cs_predict_run(s, p, &opts, sizes, ns, r, err)) == 0) {
        *rows = r;
        *n = ns;
    } else {
        free(r);
    }
    free(sizes);
    free(nominal);
    cs_sched_free(s);
    cs_platform_free(p);
    return rc;
}

void cs_regress_compare(const struct cs_regress_base *b, long row, const struct cs_table *res,
                        const struct cs_regress_tol *tol, struct cs_regress_cmp *out)
{
    const char *os = cs_table_get(b->t, row, CS_REGRESS_STATUS);
    const char *ot = cs_table_get(b->t, row, CS_REGRESS_TIME);
    /* a row's size is the size asked for, nominal_bytes where it has one (a size the schedule
     * does not divide runs aligned, and its row keeps the size asked there), else size_bytes */
    int cs = res ? cs_table_find_col(res, "size_bytes") : -1;
    int cn = res ? cs_table_find_col(res, "nominal_bytes") : -1;
    char s[32];

    memset(out, 0, sizeof(*out));
    out->row = row;
    cs_parse_ll(cs_table_get(b->t, row, CS_REGRESS_SIZE), 1, (1LL << 62), &out->size_bytes);
    snprintf(s, sizeof(s), "%lld", out->size_bytes);
    for (long r = 0; cs >= 0 && r < res->nrows && out->time_us == NULL; r++) {
        const char *nom = cn >= 0 ? cs_table_get(res, r, cn) : "";
        const char *at = nom[0] != '\0' && strcmp(nom, "0") != 0 ? nom : cs_table_get(res, r, cs);

        if (strcmp(at, s) == 0) {
            out->time_us = cs_table_get(res, r, cs_table_find_col(res, "time_us"));
            out->busbw_GBps = cs_table_get(res, r, cs_table_find_col(res, "busbw_GBps"));
            out->status = cs_table_get(res, r, cs_table_find_col(res, "status"));
        }
    }
    if (out->time_us == NULL) {
        out->moved = 1;
        snprintf(out->change, sizeof(out->change), "missing");
        return;
    }
    out->moved = cs_regress_moved(os, strtod(ot, NULL), out->status, strtod(out->time_us, NULL),
                                  tol, &out->change_pct);
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

    cs_input_forget(b->path); /* --update rewrites the baseline it read, on purpose */
    if ((rc = cs_outfile_open(&out, b->path, err)) != 0)
        return rc;
    cs_table_write(b->t, out.fp); /* a failed write fails the close */
    return cs_outfile_close(&out, err);
}

/* --- building a baseline from predict or sweep CSVs (--init) -------------------------------- */

/* A CSV a baseline is built from: where its columns are (-1: absent). */
struct init_src {
    const struct cs_table *t;
    const char *name;
    int sched, plat, proto, gen, type, pred; /* pred: the first prediction column */
};

/* Whether t has exactly the columns of `collsim predict --format csv`. */
static int is_predict_csv(const struct cs_table *t)
{
    int ok = t->ncols == CS_REPORT_CSV_NCOLS;

    for (int i = 0; ok && i < CS_REPORT_CSV_NCOLS; i++)
        ok = strcmp(t->cols[i], cs_report_csv_cols[i]) == 0;
    return ok;
}

/* Where s's key columns are; refuses keys a baseline row cannot name. */
static int init_keys(struct init_src *s, struct cs_error *err)
{
    for (int i = 1; i < s->pred; i++) {
        const char *k = s->t->cols[i];

        if (strcmp(k, "schedule") == 0)
            s->sched = i;
        else if (strcmp(k, "platform") == 0)
            s->plat = i;
        else if (strcmp(k, "protocol") == 0)
            s->proto = i;
        else if (strcmp(k, "gen.algorithm") == 0)
            s->gen = i;
        else if (strncmp(k, "gen.", 4) != 0 && strcmp(k, "dtype") != 0)
            return cs_error_fail(err, CS_ERR_INVALID, s->name, 1,
                                 "key '%s': a baseline row names a schedule, a platform file and a "
                                 "protocol only (write such a platform with 'collsim platform')",
                                 k);
    }
    return 0;
}

/* Find s's columns and check them against the options. */
static int init_columns(struct init_src *s, const struct cs_regress_init_opts *o,
                        struct cs_error *err)
{
    static const char *const what[] = {"schedule", "platform", "protocol"};
    const char *opt[3] = {o->sched, o->plat, o->proto};
    int rc, *col[3] = {&s->sched, &s->plat, &s->proto};

    s->sched = s->plat = s->proto = s->gen = -1;
    s->pred = s->t->ncols - CS_REPORT_CSV_NCOLS;
    if (!is_predict_csv(s->t) && cs_sweepcsv_check(s->t) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, s->name, 1,
                             "neither a predict CSV (%s) nor a sweep CSV (point,KEYS...,%s)",
                             CS_REPORT_CSV_HEADER, CS_REPORT_CSV_HEADER);
    s->type = s->pred + 2; /* size_bytes,count,type */
    if ((rc = init_keys(s, err)) != 0)
        return rc;
    if (s->gen >= 0)
        s->sched = s->gen;
    for (int i = 0; i < 3; i++) {
        if (*col[i] >= 0 && opt[i] != NULL)
            return cs_error_fail(err, CS_ERR_USAGE, s->name, 1, "has a %s column; drop --%s",
                                 what[i], what[i]);
        if (*col[i] < 0 && opt[i] == NULL && i < 2)
            return cs_error_fail(err, CS_ERR_USAGE, s->name, 1, "no %s column: give --%s %s",
                                 what[i], what[i], i == 0 ? "FILE|gen:SPEC" : "FILE");
    }
    return 0;
}

/* Append row r of s to t as a baseline row. */
static int init_row(const struct init_src *s, long r, const struct cs_regress_init_opts *o,
                    struct cs_table *t, struct cs_error *err)
{
    const struct cs_table *f = s->t;
    const char *vals[CS_REGRESS_NCOLS], *type = cs_table_get(f, r, s->type);
    char spec[4096] = "gen:";
    const char **cells = (const char **)&f->cells[r * f->ncols];

    if (strcmp(type, "float") != 0)
        return cs_error_fail(err, CS_ERR_INVALID, s->name, f->lines[r],
                             "type '%s': a baseline predicts float only (predict -d float)", type);
    if (s->gen >= 0 &&
        cs_sweeprun_gen_spec(f->cols, cells, f->ncols, spec + 4, sizeof(spec) - 4) != 0)
        return cs_error_fail(err, CS_ERR_INVALID, s->name, f->lines[r], "generator spec too long");
    vals[CS_REGRESS_SCHED] = s->gen >= 0 ? spec : s->sched >= 0 ? cells[s->sched] : o->sched;
    vals[CS_REGRESS_PLAT] = s->plat >= 0 ? cells[s->plat] : o->plat;
    vals[CS_REGRESS_PROTO] = s->proto >= 0 ? cells[s->proto] : o->proto ? o->proto : "-";
    vals[CS_REGRESS_SIZE] = cells[s->pred];
    vals[CS_REGRESS_TIME] = cells[s->pred + 3];
    vals[CS_REGRESS_BUSBW] = cells[s->pred + 5];
    vals[CS_REGRESS_STATUS] = cells[s->pred + 6];
    return cs_table_add_row(t, vals, f->lines[r]);
}

/* Append the rows of the CSV at name to b's table, their file to files (grown). */
static int init_file(struct cs_regress_base *b, const char *name, const char ***files,
                     const struct cs_regress_init_opts *o, struct cs_error *err)
{
    struct init_src s = {.name = name};
    struct cs_table *f = NULL;
    const char **grown;
    int rc;

    if ((rc = cs_table_read(name, &f, err)) != 0)
        return rc;
    s.t = f;
    rc = init_columns(&s, o, err);
    if (rc == 0 &&
        (grown = realloc(*files, sizeof(*grown) * (size_t)(b->t->nrows + f->nrows + 1))) == NULL)
        rc = CS_ERR_NOMEM;
    else if (rc == 0)
        *files = grown;
    for (long r = 0; rc == 0 && r < f->nrows; r++) {
        (*files)[b->t->nrows] = name;
        rc = init_row(&s, r, o, b->t, err);
    }
    cs_table_free(f);
    return rc;
}

int cs_regress_init(const char *path, const char *const *from, int nfrom,
                    const struct cs_regress_init_opts *o, struct cs_regress_base **out,
                    struct cs_error *err)
{
    struct cs_regress_base *b = calloc(1, sizeof(*b));
    const char **files = NULL;
    int rc = 0;

    if (b == NULL || (b->t = cs_table_new(CS_REGRESS_NCOLS, cols)) == NULL) {
        cs_regress_free(b);
        return CS_ERR_NOMEM;
    }
    snprintf(b->path, sizeof(b->path), "%s", path);
    snprintf(b->dir, sizeof(b->dir), "%s", path);
    dir_of(b->dir);
    if (o->proto != NULL && strcmp(o->proto, "-") != 0 && cs_proto_parse(o->proto) == 0)
        rc = cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                           "--protocol takes LL, LL128, Simple or -, not '%s'", o->proto);
    for (int i = 0; rc == 0 && i < nfrom; i++)
        rc = init_file(b, from[i], &files, o, err);
    if (rc == 0 && b->t->nrows == 0)
        rc = cs_error_fail(err, CS_ERR_PARSE, nfrom > 0 ? from[0] : path, 0,
                           "no rows: a baseline without predictions would let every change pass");
    b->row_file = files;
    if (rc == 0)
        rc = group_rows(b, err);
    b->row_file = NULL;
    free(files);
    if (rc != 0) {
        if (rc == CS_ERR_NOMEM)
            cs_error_set(err, NULL, 0, "out of memory");
        cs_regress_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/* --- JUnit XML ------------------------------------------------------------------------------ */

/* s as XML character data or an attribute value: markup escaped, control characters (which XML
 * 1.0 does not allow) written as '?'. */
static void xml_text(FILE *fp, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '&')
            fputs("&amp;", fp);
        else if (c == '<')
            fputs("&lt;", fp);
        else if (c == '>')
            fputs("&gt;", fp);
        else if (c == '"')
            fputs("&quot;", fp);
        else
            fputc(c < 0x20 || c == 0x7f ? '?' : c, fp);
    }
}

void cs_regress_junit_begin(FILE *fp, const char *name, long tests, long failures, long errors)
{
    fprintf(fp,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"collsim regress\" tests=\"%ld\" failures=\"%ld\" "
            "errors=\"%ld\">\n  <testsuite name=\"",
            tests, failures, errors);
    xml_text(fp, name);
    fprintf(fp, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"0\">\n", tests,
            failures, errors);
}

/* "<testcase classname="SCHED on PLAT, PROTO" name="SIZE bytes"", left open. */
static void case_open(FILE *fp, const struct cs_regress_base *b, long row)
{
    fputs("    <testcase classname=\"", fp);
    xml_text(fp, cs_table_get(b->t, row, CS_REGRESS_SCHED));
    fputs(" on ", fp);
    xml_text(fp, cs_table_get(b->t, row, CS_REGRESS_PLAT));
    fputs(", ", fp);
    xml_text(fp, cs_table_get(b->t, row, CS_REGRESS_PROTO));
    fputs("\" name=\"", fp);
    xml_text(fp, cs_table_get(b->t, row, CS_REGRESS_SIZE));
    fputs(" bytes\"", fp);
}

/* `<TAG type=... message="MSG">MSG</TAG></testcase>` after case_open. */
static void case_close(FILE *fp, const char *tag, const char *type, const char *msg)
{
    fprintf(fp, ">\n      <%s type=\"%s\" message=\"", tag, type);
    xml_text(fp, msg);
    fputs("\">", fp);
    xml_text(fp, msg);
    fprintf(fp, "</%s>\n    </testcase>\n", tag);
}

void cs_regress_junit_case(FILE *fp, const struct cs_regress_base *b,
                           const struct cs_regress_cmp *c, const struct cs_regress_tol *tol)
{
    const char *ot = cs_table_get(b->t, c->row, CS_REGRESS_TIME);
    const char *os = cs_table_get(b->t, c->row, CS_REGRESS_STATUS);
    char msg[1024];

    case_open(fp, b, c->row);
    if (!c->moved) {
        fputs("/>\n", fp);
        return;
    }
    snprintf(msg, sizeof(msg),
             "old %s us (%s), new %s us (%s), change %s; allowed: %g%% or %g us, whichever is "
             "larger",
             ot[0] ? ot : "-", os[0] ? os : "none", c->time_us && c->time_us[0] ? c->time_us : "-",
             c->status ? c->status : "missing", c->change, tol->pct, tol->abs_us);
    case_close(fp, "failure", "moved", msg);
}

void cs_regress_junit_error(FILE *fp, const struct cs_regress_base *b, long row, const char *why)
{
    case_open(fp, b, row);
    case_close(fp, "error", "prediction", why);
}

void cs_regress_junit_end(FILE *fp)
{
    fputs("  </testsuite>\n</testsuites>\n", fp);
}
