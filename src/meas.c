/* meas.c: measurement tables of the shared schema: collectives, ring steps, rows. */
#include "meas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* Every spelling taken: collsim's (each collective's first, its name) and nccl-tests'
 * (all_reduce_perf). */
static const struct {
    const char *name;
    enum cs_meas_coll coll;
} spellings[] = {
    {"allreduce", CS_MEAS_ALLREDUCE},         {"all_reduce", CS_MEAS_ALLREDUCE},
    {"allgather", CS_MEAS_ALLGATHER},         {"all_gather", CS_MEAS_ALLGATHER},
    {"reducescatter", CS_MEAS_REDUCESCATTER}, {"reduce_scatter", CS_MEAS_REDUCESCATTER},
    {"sendrecv", CS_MEAS_SENDRECV},
};

enum cs_meas_coll cs_meas_coll_parse(const char *s)
{
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
        if (strcmp(s, spellings[i].name) == 0)
            return spellings[i].coll;
    return 0;
}

const char *cs_meas_coll_name(enum cs_meas_coll c)
{
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
        if (spellings[i].coll == c)
            return spellings[i].name;
    return NULL;
}

int cs_meas_ring_steps(enum cs_meas_coll c, int n)
{
    switch (c) {
    case CS_MEAS_ALLREDUCE:
        return 2 * (n - 1);
    case CS_MEAS_ALLGATHER:
    case CS_MEAS_REDUCESCATTER:
        return n - 1;
    case CS_MEAS_SENDRECV:
        return 1;
    }
    return 0;
}

int cs_meas_read_bytes(const struct cs_csv *t, int row, int col, double *out, struct cs_error *err)
{
    double v;
    int rc = cs_csv_get_double(t, row, col, &v, err);

    if (rc != 0)
        return rc;
    if (v != floor(v) || v < 0 || v > CS_MEAS_MAX_SIZE)
        return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[row],
                             "%s '%s' is not a whole number of bytes (0 to 1 PiB)", t->header[col],
                             cs_csv_cell(t, row, col));
    *out = v;
    return 0;
}

int cs_meas_parse_range(const char *s, double *lo, double *hi)
{
    const char *colon = strchr(s, ':');
    char min[64];
    long long a = 0, b = 0;

    if (colon == NULL || colon - s >= (long)sizeof(min))
        return CS_ERR_PARSE;
    snprintf(min, sizeof(min), "%.*s", (int)(colon - s), s);
    if ((min[0] && cs_parse_size(min, 0, (long long)CS_MEAS_MAX_SIZE, &a) != 0) ||
        (colon[1] && cs_parse_size(colon + 1, 0, (long long)CS_MEAS_MAX_SIZE, &b) != 0) ||
        (colon[1] && a > b))
        return CS_ERR_PARSE;
    *lo = (double)a;
    *hi = colon[1] ? (double)b : INFINITY;
    return 0;
}

int cs_meas_infer_ranks(const struct cs_csv *t, enum cs_meas_coll c)
{
    int cs = cs_csv_col_find(t, "size_bytes"), ca = cs_csv_col_find(t, "algbw_GBps"),
        cb = cs_csv_col_find(t, "busbw_GBps");
    double best = -1, ratio = 0, n;

    for (int r = 0; r < t->nrows; r++) {
        double s, a, b;

        if (cs_csv_get_double(t, r, cs, &s, NULL) == 0 &&
            cs_csv_get_double(t, r, ca, &a, NULL) == 0 &&
            cs_csv_get_double(t, r, cb, &b, NULL) == 0 && a > 1 && b > 0 && s > best) {
            best = s;
            ratio = b / a;
        }
    }
    if (best < 0)
        return 0;
    if (c == CS_MEAS_ALLREDUCE)
        n = ratio < 2 ? 2 / (2 - ratio) : 0; /* ratio = 2(n-1)/n */
    else if (c == CS_MEAS_ALLGATHER || c == CS_MEAS_REDUCESCATTER)
        n = ratio < 1 ? 1 / (1 - ratio) : 0; /* ratio = (n-1)/n */
    else
        return 2;
    if (n < 1.5 || fabs(n - round(n)) > 0.15)
        return 0;
    return (int)round(n);
}

/* Columns of a measurement table; -1 when absent. */
struct cols {
    int size, time, busbw, ngpus;
};

/* Row r's size, or its GPU count in a table of time against GPU count. */
static int row_size(const struct cs_csv *t, const struct cols *c, int r, struct cs_meas_row *out,
                    struct cs_error *err)
{
    double g;
    int rc = cs_meas_read_bytes(t, r, c->size, &out->size_bytes, err);

    if (rc <= 0)
        return rc;
    if (c->ngpus < 0)
        return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r], "empty size_bytes");
    if (cs_csv_get_double(t, r, c->ngpus, &g, NULL) != 0 || g < 2 || g != floor(g) || g > 1e6)
        return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                             "n_gpus '%s' is not a count >= 2", cs_csv_cell(t, r, c->ngpus));
    out->size_bytes = 0;
    out->ngpus = (int)g;
    return 0;
}

/* Row r's time in us, from time_us or else from busbw (nccl-tests: busbw = S/t * nsteps/n). */
static int row_time(const struct cs_csv *t, const struct cols *c, int r, double size, int nsteps,
                    int ranks, double *us, int *derived, struct cs_error *err)
{
    double bus;
    int rc = cs_csv_get_double(t, r, c->time, us, err);

    if (rc <= 0)
        return rc;
    rc = cs_csv_get_double(t, r, c->busbw, &bus, err);
    if (rc < 0)
        return rc;
    if (rc == 1 || bus <= 0 || ranks < 2)
        return cs_error_fail(
            err, CS_ERR_INVALID, t->name, t->lines[r],
            "no time_us, and no positive busbw_GBps with a rank count to derive it from");
    *us = size * nsteps / ranks / (bus * 1e9) * 1e6;
    *derived = 1;
    return 0;
}

int cs_meas_read_rows(const struct cs_csv *t, int nsteps, int ranks, struct cs_meas_row **rows,
                      int *n, int *derived, struct cs_error *err)
{
    struct cols c = {cs_csv_col_find(t, "size_bytes"), cs_csv_col_find(t, "time_us"),
                     cs_csv_col_find(t, "busbw_GBps"), cs_csv_col_find(t, "n_gpus")};
    struct cs_meas_row *v;
    int any = 0, rc = 0;

    if (c.size < 0 || c.time < 0)
        return cs_error_fail(err, CS_ERR_PARSE, t->name, 1,
                             "not a measurement table (size_bytes, time_us columns)");
    if ((v = calloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*v))) == NULL)
        return CS_ERR_NOMEM;
    for (int r = 0; r < t->nrows && rc == 0; r++) {
        double us = 0;

        v[r].line = t->lines[r];
        rc = row_size(t, &c, r, &v[r], err);
        if (rc == 0)
            rc = row_time(t, &c, r, v[r].size_bytes, nsteps, ranks, &us, &any, err);
        if (rc == 0 && ((v[r].ngpus == 0 && v[r].size_bytes <= 0) || us <= 0))
            rc = cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                               "size %g B, time %g us: both must be positive", v[r].size_bytes, us);
        v[r].time_s = us * 1e-6;
    }
    if (rc != 0) {
        free(v);
        return rc;
    }
    *rows = v;
    *n = t->nrows;
    if (derived != NULL)
        *derived = any;
    return 0;
}
