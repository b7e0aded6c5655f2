/* tune.h: choosing the fastest schedule variant per size range from predicted timings. */
#ifndef CS_TUNE_H
#define CS_TUNE_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "plan.h"
#include "sched.h"
#include "table.h"
#include "verify.h"

/* One prediction: variant (0-based), buffer size, predicted time, and whether it finished.
 * Variants compete at the nominal size (the size asked for, before predict rounded it to the
 * variant's chunk multiple); 0 there means size_bytes. */
struct cs_tune_obs {
    int variant;
    long long size_bytes;
    double time_us;
    int ok; /* 0: deadlocked, or at or above the variant's credit limit (never a candidate) */
    long long nominal_bytes;
    int capped;     /* not ok because of the variant's FIFO credit limit, not the sweep */
    int off_nvlink; /* not ok because the variant runs LL128 where NCCL refuses it */
    int to_nccl;    /* not ok because NCCL's own choice is faster at its size (the baseline) */
};

/* A size window [min_bytes, max_bytes] (both inclusive, as the MSCCL executor tests them) and the
 * variant that wins in it. Its sizes are the nominal ones (struct cs_tune_obs). */
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

/* For every measured (nominal) size, the finished variant with the least time (ties: the lower
 * variant); consecutive sizes with the same winner form one range. A range ends one byte below the
 * next range's first size; a size where no variant finishes leaves a gap (the range before it ends
 * at its last measured size). Observations may come in any order; a (variant, size) given twice or
 * a non-positive size or time is CS_ERR_INVALID, and so is a sweep where no variant finishes at
 * any size, unless NCCL's own choice took those sizes (to_nccl): then no range is the plan. On
 * success *out (caller frees) holds *nout ranges (0 or more), ordered by size. */
int cs_tune_ranges(const struct cs_tune_obs *obs, long n, struct cs_tune_range **out, int *nout,
                   struct cs_error *err);

#define CS_TUNE_DESC_LEN 512
#define CS_TUNE_MAX_VARIANTS 4096

/* Where the FIFO credits bound a schedule's sizes (runtime-audit.md 2.1-2.4). A send step of cnt
 * chunks makes ceil(cnt / maxAllowedCount) calls per iteration of 1 (LL, LL128) or 4 (Simple)
 * slots each, and a connection has CS_NCCL_STEPS slots: above some size such a step fills the
 * FIFO and finishes only while its receive drains it. It deadlocks when that receive starts only
 * after the send ends (a cycle through tb order, dependencies and matching); when the receive
 * forwards what it gets (rcs, rrs, rrcs) it drains only as fast as its own connection, which the
 * closed form does not follow: "may deadlock". A plain receive that starts on its own drains it. */
struct cs_tune_credit {
    long long first_bytes; /* the smallest size at which some send step overfills (0: none) */
    long long limit_bytes; /* the smallest size from which it deadlocks or may (0: none) */
    int deadlock;          /* at limit_bytes: 1 a proven cycle, 0 may deadlock */
    int gpu, tb, step, cnt, line; /* the overfull send step at limit_bytes */
};

/* The credit limit of a compiled plan (cs_plan_compile: its protocol and nchunksperloop), for
 * every buffer size at once: limit_bytes is nchunksperloop x floor(loop bytes / m) + 1 for the
 * first step that crosses there (m = ceil(cnt / (CS_NCCL_STEPS / slots per call))). 0, or
 * CS_ERR_NOMEM. */
int cs_tune_credit_limit(const struct cs_plan *p, struct cs_tune_credit *out);

/* A variant: the values of the schedule columns (schedule or gen.*, and protocol). */
struct cs_tune_variant {
    long row;                     /* a sweep row holding it */
    char desc[CS_TUNE_DESC_LEN];  /* e.g. "ring gpus=8 LL" or "allreduce_x.4gpu LL128" */
    struct cs_tune_credit credit; /* after cs_tune_check_credits */
    int unchecked;                /* its schedule could not be read: credit not known */
    char off_nvlink[1024];        /* LL128 on a path within a node that is not all NVLink: why */
};

/* A sweep's predictions on one platform, read for tuning. */
/* NCCL's own choice at one size of the sweep (the baseline, cs_tune_nccl_baseline). */
struct cs_tune_nccl {
    long long size_bytes; /* the nominal size */
    double time_us;       /* 0: NCCL's schedule finished nowhere */
    char proto[8];
    int channels;
};

struct cs_tune_sweep {
    const struct cs_table *t; /* the sweep table (borrowed) */
    int naxes;                /* columns 1..naxes-1 are the axes; the predict columns follow */
    struct cs_tune_variant *var;
    int nvar;
    struct cs_tune_obs *obs; /* one per row kept, obs[i].variant indexes var */
    long nobs;
    char platform[2048];       /* the platform columns as "KEY=VALUE ..." */
    struct cs_tune_nccl *nccl; /* the baseline per size, or NULL (none compared) */
    long nnccl;
    double margin;     /* a variant wins a size only under NCCL's time x (1 - margin) */
    char no_nccl[256]; /* why no baseline was compared ("" when one was, or --no-nccl) */
};

/* Read a sweep table (a CSV of `collsim sweep`: point, axis columns, then the predict columns,
 * nominal_bytes among them or not) named `name` in messages: keep the rows whose column K is V for
 * every "K=V" of where (K an axis column), check that they share one platform (every axis column
 * other than schedule, gen.* and protocol holds one value), and collect the variants and
 * observations into *out (caller cleans up with cs_tune_cleanup). 0, or CS_ERR_* with err set. */
int cs_tune_read(const struct cs_table *t, const char *name, const char *const *where, int nwhere,
                 struct cs_tune_sweep *out, struct cs_error *err);
void cs_tune_cleanup(struct cs_tune_sweep *sw);

/* How many observations are at a (nominal) size that not every variant was predicted at: those
 * compete only with the variants measured there. Without a nominal_bytes column, sizes that
 * predict rounded to each schedule's chunk multiple. */
long cs_tune_uneven(const struct cs_tune_sweep *sw);

/* The schedule of variant v: its file (relative paths under sched_dir) or its generator run
 * (gen.algorithm and the other gen.* columns as a cs_gen_from_spec spec), with the variant's
 * protocol when it has one. *out is new (cs_sched_free). 0 or CS_ERR_* with err set. */
int cs_tune_variant_sched(const struct cs_tune_sweep *sw, int v, const char *sched_dir,
                          struct cs_sched **out, struct cs_error *err);

/* Load every variant's schedule, compute its credit limit (cs_tune_credit_limit) and take its
 * observations at or above the limit out of the competition (ok 0, capped 1). A schedule that
 * cannot be read is an error with need_all, else its variant is marked unchecked. 0 or CS_ERR_*
 * with err set. */
int cs_tune_check_credits(struct cs_tune_sweep *sw, const char *sched_dir, int need_all,
                          struct cs_error *err);

/* Take every LL128 variant whose connections cross a path within a node that is not all NVLink
 * (cs_predict_check_ll128 on the sweep's platform: its platform file, or the one its family keys
 * describe) out of the competition: NCCL refuses LL128 there, and MSCCL runs it unchecked. After
 * cs_tune_check_credits (variants whose schedule was not read are skipped). 0 or CS_ERR_* with
 * err set (the platform cannot be built or read). */
int cs_tune_check_ll128(struct cs_tune_sweep *sw, const char *sched_dir, struct cs_error *err);

/* NCCL's own choice as the baseline: at each size of the sweep, what NCCL runs on the sweep's
 * platform (cs_predict_nccl_at on the platform file plat, or NULL: the sweep's own, its file or
 * the one its family keys describe), for the collective and GPUs of the variants' schedules;
 * every observation at a size where the fastest variant does not beat NCCL's time by the share
 * margin (0 <= margin < 1) is taken out (to_nccl), so no window covers it and NCCL runs there.
 * A sweep that names no platform (no platform or platform.family column) and no plat: no
 * baseline, sw->no_nccl says so. After cs_tune_check_credits. 0 or CS_ERR_* with err set. */
struct cs_predict_vs_nccl;
int cs_tune_nccl_baseline(struct cs_tune_sweep *sw, const char *sched_dir, const char *plat,
                          const struct cs_predict_vs_nccl *vs, double margin, struct cs_error *err);

/* The byte window of range i of nr: the range's own, or with extend the first from 0 and the last
 * without an upper limit (max 0), unless the sweep saw every variant deadlock beyond them (then up
 * to one byte short of that size). */
void cs_tune_window(const struct cs_tune_range *r, int i, int nr, int extend, long long *min_bytes,
                    long long *max_bytes);

/* Why a window stops short of cs_tune_window's. */
enum {
    CS_TUNE_CAP_SWEEP = 1,  /* a size where the sweep saw the variant deadlock */
    CS_TUNE_CAP_CREDIT = 2, /* the variant's credit limit */
};

/* cs_tune_window, then kept off every size where the sweep saw the range's variant deadlock and
 * below its credit limit (sw after cs_tune_check_credits). Returns CS_TUNE_CAP_* flags of what
 * cut it; *max_bytes 0 still means no limit. An empty window (*min_bytes > *max_bytes, max not
 * 0) can result. */
int cs_tune_window_safe(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, int i,
                        int nr, int extend, long long *min_bytes, long long *max_bytes);

/* The legacy runtime (microsoft/msccl) loads at most this many algorithms (MSCCL_MAX_NUM_ALGOS,
 * nccl-a100.md 1.7), tests windows half-open, and has no unlimited maxBytes: an open window is
 * written up to CS_TUNE_LEGACY_OPEN_MAX. */
#define CS_TUNE_LEGACY_MAX_ALGOS 4
#define CS_TUNE_LEGACY_OPEN_MAX (1LL << 40)

/* A schedule file written for a range. */
struct cs_tune_file {
    char name[CS_TUNE_DESC_LEN];
    int outofplace; /* also serves out-of-place calls */
};

/* The file name of range i: "NN-DESC.xml", DESC made file-safe, numbered so that the MSCCL
 * executor, which takes the first matching file in path order, selects them by size. */
void cs_tune_file_name(const char *desc, int i, char *buf, size_t len);

/* Whether a plan of nr ranges suits runtime rt: 0, or CS_ERR_INVALID with err set when the legacy
 * runtime would load fewer algorithms than the plan has windows. */
int cs_tune_check_runtime(int nr, enum cs_verify_runtime rt, struct cs_error *err);

/* Write into outdir (created when missing) range i's schedule as files[i] (cs_tune_file_name):
 * the variant's schedule with minBytes/maxBytes set to its window (cs_tune_window_safe; for the
 * legacy runtime half-open, with a name), outofplace 1 when the symbolic execution of an
 * out-of-place call finds its result right and the input untouched, else the complement of
 * inplace; each checked first as `verify --runtime rt` checks it (a schedule the runtime would
 * refuse is CS_ERR_INVALID with verify's message). files has nr entries. 0 or CS_ERR_* with err
 * set. */
int cs_tune_write_schedules(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, int nr,
                            int extend, enum cs_verify_runtime rt, const char *sched_dir,
                            const char *outdir, struct cs_tune_file *files, struct cs_error *err);

/* Write the plan of `csv` to fp: a comment header, then per range the window written for runtime
 * rt, measured sizes, variant and file (files may be NULL: "-"), then a line per credit limit or
 * sweep deadlock that cut a window. */
void cs_tune_plan_write(FILE *fp, const char *csv, const struct cs_tune_sweep *sw,
                        const struct cs_tune_range *r, int nr, const struct cs_tune_file *files,
                        int extend, enum cs_verify_runtime rt);

#endif
