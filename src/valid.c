/* valid.c: measured times per size and error statistics per size band. */
#include "valid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

const char *cs_band_name(enum cs_band b)
{
    static const char *const names[CS_NBANDS] = {"all sizes", "<= 64 KiB", "64 KiB - 4 MiB",
                                                 ">= 4 MiB"};

    return (int)b >= 0 && b < CS_NBANDS ? names[b] : NULL;
}

enum cs_band cs_band_of(double size_bytes)
{
    if (size_bytes <= 65536)
        return CS_BAND_SMALL;
    if (size_bytes < 4194304)
        return CS_BAND_MID;
    return CS_BAND_LARGE;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

struct st {
    double size, t;
};

static int cmp_st(const void *a, const void *b)
{
    const struct st *p = a, *q = b;

    if (p->size != q->size)
        return p->size < q->size ? -1 : 1;
    return (p->t > q->t) - (p->t < q->t);
}

int cs_valid_read_measurement(const char *path, const char *coll, int ranks,
                              struct cs_valid_point **out, int *nout, struct cs_error *err)
{
    struct cs_csv *t = NULL;
    struct st *rows = NULL;
    struct cs_valid_point *pts = NULL;
    int rc, cs, ct, cb, cn, n = 0, np = 0, nsteps;

    if ((rc = cs_csv_read(path, &t, err)) != 0)
        return rc;
    cs = cs_csv_col_find(t, "size_bytes");
    ct = cs_csv_col_find(t, "time_us");
    cb = cs_csv_col_find(t, "busbw_GBps");
    cn = cs_csv_col_find(t, "n_gpus");
    if (cs < 0 || ct < 0) {
        cs_error_set(err, t->name, 1, "not a measurement table (size_bytes, time_us columns)");
        rc = CS_ERR_PARSE;
        goto done;
    }
    if (coll == NULL || strcmp(coll, "allreduce") == 0)
        nsteps = 2 * (ranks - 1);
    else if (strcmp(coll, "allgather") == 0 || strcmp(coll, "reducescatter") == 0)
        nsteps = ranks - 1;
    else {
        cs_error_set(err, t->name, 0, "unknown collective '%s'", coll);
        rc = CS_ERR_INVALID;
        goto done;
    }
    rows = malloc((size_t)(t->nrows ? t->nrows : 1) * sizeof(*rows));
    pts = calloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*pts));
    if (rows == NULL || pts == NULL) {
        rc = CS_ERR_NOMEM;
        goto done;
    }
    for (int r = 0; r < t->nrows; r++) {
        double size, us, bus;
        int r1 = cs_csv_get_double(t, r, cs, &size, err), r2;

        if (r1 < 0) {
            rc = r1;
            goto done;
        }
        if (r1 == 1 && cn >= 0) {
            /* Time against GPU count: the count stands in for the size while sorting. */
            int r4 = cs_csv_get_double(t, r, cn, &size, err);

            if (r4 != 0 || size < 2 || size != floor(size) || size > 1e6) {
                cs_error_set(err, t->name, t->lines[r], "n_gpus '%s' is not a count >= 2",
                             cs_csv_cell(t, r, cn));
                rc = CS_ERR_INVALID;
                goto done;
            }
            size = -size;
        } else if (r1 == 1) {
            cs_error_set(err, t->name, t->lines[r], "empty size_bytes");
            rc = CS_ERR_INVALID;
            goto done;
        }
        r2 = cs_csv_get_double(t, r, ct, &us, err);
        if (r2 < 0) {
            rc = r2;
            goto done;
        }
        if (r2 == 1) {
            int r3 = cs_csv_get_double(t, r, cb, &bus, err);

            if (r3 < 0) {
                rc = r3;
                goto done;
            }
            if (r3 == 1 || bus <= 0 || ranks < 2) {
                cs_error_set(err, t->name, t->lines[r],
                             "no time_us, and no positive busbw_GBps with a rank count to derive "
                             "it from");
                rc = CS_ERR_INVALID;
                goto done;
            }
            us = size * nsteps / ranks / (bus * 1e9) * 1e6;
        }
        if (size == 0 || (size < 0 && cn < 0) || us <= 0) {
            cs_error_set(err, t->name, t->lines[r], "size %g B, time %g us: both must be positive",
                         size, us);
            rc = CS_ERR_INVALID;
            goto done;
        }
        rows[n].size = size;
        rows[n].t = us * 1e-6;
        n++;
    }
    qsort(rows, (size_t)n, sizeof(*rows), cmp_st);
    for (int k = 0; k < n;) {
        int e = k;

        while (e < n && rows[e].size == rows[k].size)
            e++;
        pts[np].size_bytes = rows[k].size > 0 ? rows[k].size : 0;
        pts[np].ranks = rows[k].size < 0 ? (int)-rows[k].size : 0;
        pts[np].meas_s = (e - k) % 2 ? rows[k + (e - k) / 2].t
                                     : 0.5 * (rows[k + (e - k) / 2 - 1].t + rows[k + (e - k) / 2].t);
        pts[np].pred_s = NAN;
        pts[np].held_out = 1;
        np++;
        k = e;
    }
    if (np > 0 && pts[0].ranks > 0)
        for (int i = 0; i < np / 2; i++) {
            struct cs_valid_point tmp = pts[i];

            pts[i] = pts[np - 1 - i];
            pts[np - 1 - i] = tmp;
        }
    if (np == 0) {
        cs_error_set(err, t->name, 0, "no rows");
        rc = CS_ERR_INVALID;
        goto done;
    }
    *out = pts;
    *nout = np;
    pts = NULL;
    rc = 0;
done:
    free(rows);
    free(pts);
    cs_csv_free(t);
    return rc;
}

void cs_valid_stats(const struct cs_valid_point *p, int n, enum cs_band b, int held_out_only,
                    struct cs_valid_stats *out)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof(*e));
    int k = 0;

    memset(out, 0, sizeof(*out));
    out->median_abs = out->max_abs = out->max_size = NAN;
    if (e == NULL)
        return;
    for (int i = 0; i < n; i++) {
        double a;

        if (b != CS_BAND_ALL && cs_band_of(p[i].size_bytes) != b)
            continue;
        if (held_out_only && !p[i].held_out)
            continue;
        if (!isfinite(p[i].pred_s)) {
            out->missing++;
            continue;
        }
        a = fabs(p[i].pred_s - p[i].meas_s) / p[i].meas_s;
        if (k == 0 || a > out->max_abs) {
            out->max_abs = a;
            out->max_size = p[i].size_bytes;
            out->max_ranks = p[i].ranks;
        }
        e[k++] = a;
    }
    out->n = k;
    if (k > 0) {
        qsort(e, (size_t)k, sizeof(*e), cmp_d);
        out->median_abs = k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2]);
    }
    free(e);
}
