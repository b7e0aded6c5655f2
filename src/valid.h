/* valid.h: validation of predictions against measurements: measured times per size, matching,
 * and error statistics per size band. Plain C, no I/O beyond reading the measurement CSV. */
#ifndef CS_VALID_H
#define CS_VALID_H

#include <stdio.h>

#include "error.h"
#include "proto.h"

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
    double pred_s;      /* NAN when the prediction deadlocked or is missing */
    int held_out;       /* 1 when the size was not used to fit the platform */
    int ranks;          /* tables of time against GPU count (n_gpus column, no size): the count */
    char proto[8];      /* the protocol of the prediction kept (the fastest), "" when none */
    double oop_s, ip_s; /* the medians of its out-of-place and in-place rows; NAN where none */
    int contra;         /* CS_VALID_SPLIT | CS_VALID_FALLS: the table contradicts itself here */
};

/* Where a table contradicts itself, a size may be left out of a largest |error| (never out of a
 * median): its in-place and out-of-place times differ by more than CS_VALID_CONTRA_SHARE of the
 * smaller (SPLIT), or its time and that of the size twice as large differ the wrong way, the
 * larger size faster by more than CS_VALID_CONTRA_SHARE of the smaller's time (FALLS: both sizes
 * of the pair). */
enum { CS_VALID_SPLIT = 1, CS_VALID_FALLS = 2 };
#define CS_VALID_CONTRA_SHARE 0.15

/* Mark p[0..n) (ascending sizes) with the contradictions above. */
void cs_valid_mark_contradictions(struct cs_valid_point *p, int n);

/* The rule behind contra flags, in words, into buf: "in-place and out-of-place differ by 21%",
 * "the time falls by 89% from 1048576 B to 2097152 B"; "" when none. */
void cs_valid_contradiction_text(const struct cs_valid_point *p, int n, int i, char *buf,
                                 size_t len);

/* Statistics of |error| = |pred - meas| / meas over a set of points. */
struct cs_valid_stats {
    int n;       /* points with a prediction */
    int missing; /* points without one (deadlock, not predicted) */
    double median_abs;
    double max_abs;
    double max_size; /* size of the largest |error| */
    int max_ranks;   /* its GPU count, for tables of time against GPU count */
    double max_kept; /* the largest |error| over the sizes where the table does not contradict
                      * itself (contra 0), its size, and how many sizes were left out of it */
    double max_kept_size;
    int ncontra;
};

/* Read a measurement table (the shared measurements schema): the median time per size, sorted
 * by size. A table with an n_gpus column and empty sizes gives one point per GPU count instead
 * (size_bytes 0, ranks set), sorted by count. Rows without a time take it from busbw: t = S *
 * nsteps / (n * busbw), with nsteps and n from `coll` ("allreduce", "allgather", "reducescatter")
 * and `ranks` (needed only then). *out is a new array of *n points (pred_s = NAN, held_out = 1).
 * CS_ERR_PARSE / CS_ERR_INVALID with file:line on bad rows, CS_ERR_IO when unreadable. */
int cs_valid_read_measurement(const char *path, const char *coll, int ranks,
                              struct cs_valid_point **out, int *n, struct cs_error *err);

/* Statistics over the points in band b (CS_BAND_ALL: every point); only held-out points when
 * held_out_only. */
void cs_valid_stats(const struct cs_valid_point *p, int n, enum cs_band b, int held_out_only,
                    struct cs_valid_stats *out);

/* One case of a validation, as its summary describes it. */
struct cs_valid_case {
    char name[128];
    char meas_label[1024]; /* the measurement as the case file names it */
    char sched[1024];      /* a path or gen:SPEC */
    char platform[1024];
    char protos[64]; /* the protocols predicted, "LL/LL128/Simple" */
    int fastest;     /* the fastest of them per size is kept */
    char target[32]; /* "nvswitch8" (median <= 10%, <= 5% at 4 MiB and up) or "other" */
    int has_fit;     /* sizes in [fit_min, fit_max] fitted the platform: report the others */
    double fit_min, fit_max;
    const char *notes; /* Markdown lines for the case's section, or NULL */
    char nccl[16];     /* NCCL version whose channel and thread rule set the ring, or "" */
};

/* One case and band of an earlier summary.csv. */
struct cs_valid_before_row {
    char name[128];
    int band; /* an enum cs_band */
    int n;    /* points with a prediction then; 0: median and max are NAN */
    double median_abs, max_abs;
};

/* An earlier summary.csv (validate --before), shown beside a new run's numbers. */
struct cs_valid_before {
    char *path; /* as given, for the summary's head */
    int n;
    struct cs_valid_before_row *rows;
};

/* Read an earlier summary.csv (header case,band,n,median_abs,max_abs,missing; a band 0 to
 * CS_NBANDS - 1; n a count; median and max finite fractions >= 0 where n > 0; each case and band
 * once). *out is new (cs_valid_before_free). CS_ERR_IO when unreadable, CS_ERR_PARSE with
 * file:line on a bad header or row, CS_ERR_NOMEM. */
int cs_valid_before_read(const char *path, struct cs_valid_before **out, struct cs_error *err);

/* The row of case `name` and band b, or NULL when the earlier summary has none. */
const struct cs_valid_before_row *cs_valid_before_find(const struct cs_valid_before *bf,
                                                       const char *name, enum cs_band b);

void cs_valid_before_free(struct cs_valid_before *bf);

/* The head of summary.md (naming the case file, and the earlier summary when before is not
 * NULL) and of summary.csv. */
void cs_valid_summary_begin(FILE *md, FILE *csv, const char *cases_path,
                            const struct cs_valid_before *before);

/* A case's section of summary.md (per band: median and max |error|, then the targets met or
 * missed) and its rows of summary.csv (case,band,n,median_abs,max_abs,missing). With `before`
 * (NULL: none) each median and max reads "BEFORE -> AFTER", BEFORE "-" where the earlier summary
 * lacks the case or band (or predicted nothing there); summary.csv is the same either way.
 * Returns 1 when a target is missed or nothing was predicted, else 0. */
int cs_valid_summary_case(FILE *md, FILE *csv, const struct cs_valid_case *c,
                          const struct cs_valid_point *p, int n,
                          const struct cs_valid_before *before);

/* A case's table: size (or GPU count), measured and predicted us, error %, protocol, held out. */
void cs_valid_case_csv(FILE *fp, const struct cs_valid_point *p, int n);

/* Compare a summary.csv with a baseline one: every case and band of the baseline must be there
 * with a median and max |error| at most tol (a fraction) above the baseline's; each one that is
 * not gets a line on out. 0 when all are within, 1 when some are not, or a CS_ERR_* with err
 * set when a file cannot be read. */
int cs_valid_baseline_check(const char *summary, const char *baseline, double tol, FILE *out,
                            struct cs_error *err);

#endif
