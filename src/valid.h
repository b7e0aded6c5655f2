/* valid.h: validation of predictions against measurements: measured times per size, matching,
 * and error statistics per size band. Plain C, no I/O beyond reading the measurement CSV. */
#ifndef CS_VALID_H
#define CS_VALID_H

#include "error.h"

/* Size bands of the validation summary (issue 5): up to 64 KiB, 64 KiB to 4 MiB, 4 MiB and up. */
enum cs_band {
    CS_BAND_ALL = 0,
    CS_BAND_SMALL, /* size <= 64 KiB */
    CS_BAND_MID,   /* 64 KiB < size < 4 MiB */
    CS_BAND_LARGE, /* size >= 4 MiB */
    CS_NBANDS,
};

const char *cs_band_name(enum cs_band b);
enum cs_band cs_band_of(double size_bytes);

/* One size: the measured time (median of the table's rows at that size), the prediction. */
struct cs_valid_point {
    double size_bytes;
    double meas_s;
    double pred_s;  /* NAN when the prediction deadlocked or is missing */
    int held_out;   /* 1 when the size was not used to fit the platform */
    int ranks;      /* tables of time against GPU count (n_gpus column, no size): the count */
};

/* Statistics of |error| = |pred - meas| / meas over a set of points. */
struct cs_valid_stats {
    int n;          /* points with a prediction */
    int missing;    /* points without one (deadlock, not predicted) */
    double median_abs;
    double max_abs;
    double max_size; /* size of the largest |error| */
    int max_ranks;   /* its GPU count, for tables of time against GPU count */
};

/* Read a measurement table (the shared measurements schema): the median time per size, sorted
 * by size. A table with an n_gpus column and empty sizes gives one point per GPU count instead
 * (size_bytes 0, ranks set), sorted by count. Rows without a time take it from busbw: t = S * nsteps / (n * busbw), with nsteps and n
 * from `coll` ("allreduce", "allgather", "reducescatter") and `ranks` (needed only then).
 * *out is a new array of *n points (pred_s = NAN, held_out = 1). CS_ERR_PARSE / CS_ERR_INVALID with
 * file:line on bad rows, CS_ERR_IO when unreadable. */
int cs_valid_read_measurement(const char *path, const char *coll, int ranks,
                              struct cs_valid_point **out, int *n, struct cs_error *err);

/* Statistics over the points in band b (CS_BAND_ALL: every point); only held-out points when
 * held_out_only. */
void cs_valid_stats(const struct cs_valid_point *p, int n, enum cs_band b, int held_out_only,
                    struct cs_valid_stats *out);

#endif
