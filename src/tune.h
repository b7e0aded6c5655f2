/* tune.h: choosing the fastest schedule variant per size range from predicted timings. */
#ifndef CS_TUNE_H
#define CS_TUNE_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "sched.h"
#include "table.h"

/* One prediction: variant (0-based), buffer size, predicted time, and whether it finished. */
struct cs_tune_obs {
    int variant;
    long long size_bytes;
    double time_us;
    int ok; /* 0: deadlocked (never a candidate) */
};

/* A size window [min_bytes, max_bytes] (both inclusive, as the MSCCL executor tests them) and the
 * variant that wins in it. */
struct cs_tune_range {
    long long min_bytes;
    long long max_bytes;
    int variant;
    long long first_size; /* the measured sizes it covers */
    long long last_size;
    /* a measured size next to the range at which no variant finishes (0: none): --extend does
     * not reach across it */
    long long dead_below, dead_above;
};

/* For every measured size, the finished variant with the least time (ties: the lower variant);
 * consecutive sizes with the same winner form one range. A range ends one byte below the next
 * range's first size; a size where no variant finishes leaves a gap (the range before it ends at
 * its last measured size). Observations may come in any order; a (variant, size) given twice or a
 * non-positive size or time is CS_ERR_INVALID. On success *out (caller frees) holds *nout ranges,
 * ordered by size. */
int cs_tune_ranges(const struct cs_tune_obs *obs, long n, struct cs_tune_range **out, int *nout,
                   struct cs_error *err);

#define CS_TUNE_DESC_LEN 512
#define CS_TUNE_MAX_VARIANTS 4096

/* A variant: the values of the schedule columns (schedule or gen.*, and protocol). */
struct cs_tune_variant {
    long row;                    /* a sweep row holding it */
    char desc[CS_TUNE_DESC_LEN]; /* e.g. "ring gpus=8 LL" or "allreduce_x.4gpu LL128" */
};

/* A sweep's predictions on one platform, read for tuning. */
struct cs_tune_sweep {
    const struct cs_table *t; /* the sweep table (borrowed) */
    int naxes;                /* columns 1..naxes-1 are the axes; size_bytes is column naxes */
    struct cs_tune_variant *var;
    int nvar;
    struct cs_tune_obs *obs; /* one per row kept, obs[i].variant indexes var */
    long nobs;
    char platform[2048]; /* the platform columns as "KEY=VALUE ..." */
};

/* Read a sweep table (a CSV of `collsim sweep`: point, axis columns, then the predict columns)
 * named `name` in messages: keep the rows whose column K is V for every "K=V" of where (K an axis
 * column), check that they share one platform (every axis column other than schedule, gen.* and
 * protocol holds one value), and collect the variants and observations into *out (caller cleans
 * up with cs_tune_cleanup). 0, or CS_ERR_* with err set. */
int cs_tune_read(const struct cs_table *t, const char *name, const char *const *where, int nwhere,
                 struct cs_tune_sweep *out, struct cs_error *err);
void cs_tune_cleanup(struct cs_tune_sweep *sw);

/* How many observations are at a size that not every variant was predicted at (predict rounds
 * sizes to each schedule's chunk multiple: those compete only with the variants measured there). */
long cs_tune_uneven(const struct cs_tune_sweep *sw);

/* The schedule of variant v: its file (relative paths under sched_dir) or its generator run
 * (gen.algorithm and the other gen.* columns as a cs_gen_from_spec spec), with the variant's
 * protocol when it has one. *out is new (cs_sched_free). 0 or CS_ERR_* with err set. */
int cs_tune_variant_sched(const struct cs_tune_sweep *sw, int v, const char *sched_dir,
                          struct cs_sched **out, struct cs_error *err);

/* The byte window written for range i of nr: the range's own, or with extend the first from 0 and
 * the last without an upper limit (max 0), unless the sweep saw every variant deadlock beyond
 * them (then up to one byte short of that size). */
void cs_tune_window(const struct cs_tune_range *r, int i, int nr, int extend, long long *min_bytes,
                    long long *max_bytes);

/* The file name of range i: "NN-DESC.xml", DESC made file-safe, numbered so that the MSCCL
 * executor, which takes the first matching file in path order, selects them by size. */
void cs_tune_file_name(const char *desc, int i, char *buf, size_t len);

/* Write into outdir (created when missing) range i's schedule as files[i] (cs_tune_file_name):
 * the variant's schedule with minBytes/maxBytes set to its window and outofplace set when missing,
 * each checked first as `verify --runtime executor` checks it (a schedule the executor would
 * refuse is CS_ERR_INVALID with verify's message). files has nr entries. 0 or CS_ERR_* with err
 * set. */
int cs_tune_write_schedules(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, int nr,
                            int extend, const char *sched_dir, const char *outdir,
                            char (*files)[CS_TUNE_DESC_LEN], struct cs_error *err);

/* Write the plan of `csv` to fp: a comment header, then per range its window, measured sizes,
 * variant and file (files may be NULL: "-"). */
void cs_tune_plan_write(FILE *fp, const char *csv, const struct cs_tune_sweep *sw,
                        const struct cs_tune_range *r, int nr, char (*files)[CS_TUNE_DESC_LEN],
                        int extend);

#endif
