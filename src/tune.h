/* tune.h: choosing the fastest schedule variant per size range from predicted timings. */
#ifndef CS_TUNE_H
#define CS_TUNE_H

#include "error.h"

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
};

/* For every measured size, the finished variant with the least time (ties: the lower variant);
 * consecutive sizes with the same winner form one range. A range ends one byte below the next
 * range's first size; a size where no variant finishes leaves a gap (the range before it ends at
 * its last measured size). Observations may come in any order; a (variant, size) given twice or a
 * non-positive size or time is CS_ERR_INVALID. On success *out (caller frees) holds *nout ranges,
 * ordered by size. */
int cs_tune_ranges(const struct cs_tune_obs *obs, long n, struct cs_tune_range **out, int *nout,
                   struct cs_error *err);

#endif
