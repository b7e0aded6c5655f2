/* sweepcsv.c: sweep CSV headers, point files, and joining files by point. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "report.h"
#include "sweepcsv.h"
#include "sweeprun.h"
#include "util.h"

int cs_sweepcsv_check(const struct cs_table *t)
{
    if (t->ncols < 1 + CS_REPORT_CSV_NCOLS || strcmp(t->cols[0], "point") != 0)
        return CS_ERR_PARSE;
    for (int i = 0; i < CS_REPORT_CSV_NCOLS; i++)
        if (strcmp(t->cols[t->ncols - CS_REPORT_CSV_NCOLS + i], cs_report_csv_cols[i]) != 0)
            return CS_ERR_PARSE;
    return 0;
}

int cs_sweepcsv_check_point(const struct cs_sweep *sw, long k, const struct cs_table *t)
{
    const char *vals[CS_SWEEP_MAX_KEYS];
    char ks[32];
    int ok;

    if (cs_sweep_point(sw, k, vals) != 0)
        return CS_ERR_INVALID;
    snprintf(ks, sizeof(ks), "%ld", k);
    ok = cs_sweepcsv_check(t) == 0 && t->ncols == 1 + sw->nkeys + CS_REPORT_CSV_NCOLS &&
         t->nrows > 0;
    for (int i = 0; ok && i < sw->nkeys; i++)
        ok = strcmp(t->cols[1 + i], sw->keys[i]) == 0;
    for (long r = 0; ok && r < t->nrows; r++) {
        ok = strcmp(cs_table_get(t, r, 0), ks) == 0;
        for (int i = 0; ok && i < sw->nkeys; i++)
            ok = strcmp(cs_table_get(t, r, 1 + i), vals[i]) == 0;
    }
    return ok ? 0 : CS_ERR_INVALID;
}

/* A row of one of the files joined; seq keeps file and row order among a point's rows. */
struct row_ref {
    long point;
    long seq;
    int file;
    long row;
};

static int cmp_row_ref(const void *a, const void *b)
{
    const struct row_ref *x = a, *y = b;
    int c = cs_cmp_ll(x->point, y->point);

    return c ? c : cs_cmp_ll(x->seq, y->seq);
}

/* The files being joined and their rows, sorted by point. */
struct join {
    struct cs_table *const *tabs;
    const char *const *names;
    int n;
    struct row_ref *refs;
    long nrefs;
    int shards;  /* the files have an npoints column (column 1), left out of the join */
    long total;  /* its value, -1 until read */
    int total_f; /* the file it was first read from */
};

/* Check row r of file f's npoints cell: one count for every row of every file, above the row's
 * point. */
static int check_total(struct join *j, int f, long r, long long p, struct cs_error *err)
{
    const struct cs_table *t = j->tabs[f];
    const char *cell = cs_table_get(t, r, 1);
    long long n;

    if (cs_parse_ll(cell, 1, LONG_MAX, &n) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, j->names[f], t->lines[r],
                             "bad " CS_SWEEPRUN_NPOINTS " '%s'", cell);
    if (j->total >= 0 && n != j->total)
        return cs_error_fail(err, CS_ERR_INVALID, j->names[f], t->lines[r],
                             CS_SWEEPRUN_NPOINTS " %lld differs from %s's %ld: shards of another "
                                                 "sweep",
                             n, j->names[j->total_f], j->total);
    if (p >= n)
        return cs_error_fail(err, CS_ERR_INVALID, j->names[f], t->lines[r],
                             "point %lld of a sweep of %lld points", p, n);
    j->total = (long)n;
    j->total_f = f;
    return 0;
}

/* Check file f's header and add its rows to j->refs. */
static int add_file(struct join *j, int f, long *cap, struct cs_error *err)
{
    const struct cs_table *t = j->tabs[f], *t0 = j->tabs[0];
    int same = t->ncols == t0->ncols;

    if (cs_sweepcsv_check(t) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, j->names[f], 0,
                             "not a sweep CSV (header must be point,...,%s)", CS_REPORT_CSV_HEADER);
    for (int c = 0; same && c < t0->ncols; c++)
        same = strcmp(t->cols[c], t0->cols[c]) == 0;
    if (!same)
        return cs_error_fail(err, CS_ERR_PARSE, j->names[f], 0, "header differs from %s's",
                             j->names[0]);
    for (long r = 0; r < t->nrows; r++) {
        long long p;

        int rc;

        if (cs_parse_ll(cs_table_get(t, r, 0), 0, LONG_MAX, &p) != 0)
            return cs_error_fail(err, CS_ERR_PARSE, j->names[f], t->lines[r],
                                 "bad point number '%s'", cs_table_get(t, r, 0));
        if (j->shards && (rc = check_total(j, f, r, p, err)) != 0)
            return rc;
        if (j->nrefs == *cap) {
            struct row_ref *nr = realloc(j->refs, sizeof(*nr) * (size_t)(*cap = *cap * 2 + 256));

            if (nr == NULL)
                return CS_ERR_NOMEM;
            j->refs = nr;
        }
        j->refs[j->nrefs] = (struct row_ref){(long)p, j->nrefs, f, r};
        j->nrefs++;
    }
    return 0;
}

/* Whether the n rows at a and b (of their files) are the same. */
static int same_rows(const struct join *j, const struct row_ref *a, const struct row_ref *b, long n)
{
    for (long m = 0; m < n; m++)
        for (int c = 0; c < j->tabs[0]->ncols; c++)
            if (strcmp(cs_table_get(j->tabs[a[m].file], a[m].row, c),
                       cs_table_get(j->tabs[b[m].file], b[m].row, c)) != 0)
                return 0;
    return 1;
}

/* Each point's rows into t, from the first file that holds it; a later file holding it must hold
 * the same rows (repeat, when not NULL, hears of it). */
static int keep_once(const struct join *j, cs_sweepcsv_repeat_fn repeat, void *ctx,
                     struct cs_table *t, struct cs_sweepcsv_join *info, struct cs_error *err)
{
    const struct row_ref *refs = j->refs;
    const char **vals = calloc((size_t)t->ncols, sizeof(*vals));
    int rc = vals ? 0 : CS_ERR_NOMEM;

    for (long i = 0, e; rc == 0 && i < j->nrefs; i = e) {
        long n0 = 0;

        for (e = i; e < j->nrefs && refs[e].point == refs[i].point; e++)
            n0 += refs[e].file == refs[i].file;
        for (long x = i + n0, y; rc == 0 && x < e; x = y) {
            for (y = x; y < e && refs[y].file == refs[x].file;)
                y++;
            if (y - x != n0 || !same_rows(j, refs + i, refs + x, n0))
                rc = cs_error_fail(err, CS_ERR_INVALID, NULL, 0, "point %ld: %s and %s disagree",
                                   refs[i].point, j->names[refs[i].file], j->names[refs[x].file]);
            else if (repeat != NULL)
                repeat(ctx, refs[i].point, refs[i].file, refs[x].file);
        }
        for (long m = i; rc == 0 && m < i + n0; m++) {
            const struct cs_table *f = j->tabs[refs[m].file];

            /* a shard's npoints column (1) is left out */
            for (int c = 0; c < t->ncols; c++)
                vals[c] = cs_table_get(f, refs[m].row, c + (j->shards && c > 0));
            rc = cs_table_add_row(t, vals, f->lines[refs[m].row]);
            /* status: the 7th of the report's columns, which end every row */
            info->ndeadlock += strcmp(vals[t->ncols - CS_REPORT_CSV_NCOLS + 6], "deadlock") == 0 ||
                               strcmp(vals[t->ncols - CS_REPORT_CSV_NCOLS + 6], "hang") == 0;
        }
        info->npoints++;
    }
    free(vals);
    return rc;
}

int cs_sweepcsv_join(struct cs_table *const *tabs, const char *const *names, int n,
                     cs_sweepcsv_repeat_fn repeat, void *ctx, struct cs_table **out,
                     struct cs_sweepcsv_join *info, struct cs_error *err)
{
    struct join j = {tabs, names, n, NULL, 0, 0, -1, 0};
    struct cs_sweepcsv_join in = {0, 0, 0, -1, -1};
    struct cs_table *t = NULL;
    long cap = 0;
    int rc = 0;

    if (n < 1)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "no sweep CSV to join");
    j.shards = tabs[0]->ncols > 1 && strcmp(tabs[0]->cols[1], CS_SWEEPRUN_NPOINTS) == 0;
    for (int f = 0; rc == 0 && f < n; f++)
        rc = add_file(&j, f, &cap, err);
    if (rc == 0 && j.shards) {
        /* the columns without npoints */
        const char **cols = malloc(sizeof(*cols) * (size_t)tabs[0]->ncols);

        for (int c = 0; cols != NULL && c + 1 < tabs[0]->ncols; c++)
            cols[c] = tabs[0]->cols[c + (c > 0)];
        if (cols == NULL || (t = cs_table_new(tabs[0]->ncols - 1, cols)) == NULL)
            rc = CS_ERR_NOMEM;
        free(cols);
    } else if (rc == 0 &&
               (t = cs_table_new(tabs[0]->ncols, (const char *const *)tabs[0]->cols)) == NULL) {
        rc = CS_ERR_NOMEM;
    }
    if (rc == 0) {
        qsort(j.refs, (size_t)j.nrefs, sizeof(*j.refs), cmp_row_ref);
        rc = keep_once(&j, repeat, ctx, t, &in, err);
    }
    if (rc == 0) {
        in.nrows = j.nrefs;
        in.max_point = j.nrefs > 0 ? j.refs[j.nrefs - 1].point : -1;
        in.total = j.total;
        *info = in;
        *out = t;
    } else {
        cs_table_free(t);
        if (rc == CS_ERR_NOMEM)
            cs_error_set(err, NULL, 0, "out of memory");
    }
    free(j.refs);
    return rc;
}

/* Append "A" or "A-B" to buf (len bytes, *at used), comma-separated; "..." once it is full. */
static void add_range(char *buf, size_t len, size_t *at, long a, long b)
{
    char r[64];

    if (*at >= len)
        return;
    snprintf(r, sizeof(r), a == b ? "%s%ld" : "%s%ld-%ld", *at ? ", " : "", a, b);
    if (*at + strlen(r) + 6 < len) {
        *at += (size_t)snprintf(buf + *at, len - *at, "%s", r);
    } else {
        snprintf(buf + *at, len - *at, "%s...", *at ? ", " : "");
        *at = len;
    }
}

long cs_sweepcsv_missing(const struct cs_table *t, long total, char *buf, size_t len)
{
    long next = 0, missing = 0;
    size_t at = 0;

    if (len > 0)
        buf[0] = '\0';
    for (long r = 0; r <= t->nrows; r++) {
        long long p = total;

        /* past the last row: the end of the range, when it is known */
        if (r < t->nrows && cs_parse_ll(cs_table_get(t, r, 0), 0, LONG_MAX, &p) != 0)
            continue;
        if (r == t->nrows && total < 0)
            break;
        if (p > next) {
            missing += (long)p - next;
            if (len > 0)
                add_range(buf, len, &at, next, (long)p - 1);
        }
        if (p + 1 > next)
            next = (long)p + 1;
    }
    return missing;
}
