/* tune.c: the fastest variant per size range. */
#include <math.h>
#include <stdlib.h>

#include "tune.h"

static int cmp_obs(const void *a, const void *b)
{
    const struct cs_tune_obs *x = a, *y = b;

    if (x->size_bytes != y->size_bytes)
        return x->size_bytes < y->size_bytes ? -1 : 1;
    return x->variant < y->variant ? -1 : x->variant > y->variant;
}

int cs_tune_ranges(const struct cs_tune_obs *obs, long n, struct cs_tune_range **out, int *nout,
                   struct cs_error *err)
{
    struct cs_tune_obs *o;
    struct cs_tune_range *r;
    int nr = 0, prev_gap = 1;

    if (n <= 0) {
        cs_error_set(err, NULL, 0, "no predictions to choose from");
        return CS_ERR_INVALID;
    }
    if ((o = malloc(sizeof(*o) * (size_t)n)) == NULL ||
        (r = malloc(sizeof(*r) * (size_t)n)) == NULL) {
        free(o);
        return CS_ERR_NOMEM;
    }
    for (long i = 0; i < n; i++) {
        o[i] = obs[i];
        if (o[i].size_bytes <= 0 || (o[i].ok && !(o[i].time_us > 0 && isfinite(o[i].time_us)))) {
            cs_error_set(err, NULL, 0, "variant %d: size %lld: bad size or time", o[i].variant,
                         o[i].size_bytes);
            free(o);
            free(r);
            return CS_ERR_INVALID;
        }
    }
    qsort(o, (size_t)n, sizeof(*o), cmp_obs);
    for (long i = 0; i < n;) {
        long j = i;
        int best = -1;
        double best_t = 0;

        for (; j < n && o[j].size_bytes == o[i].size_bytes; j++) {
            if (j > i && o[j].variant == o[j - 1].variant) {
                cs_error_set(err, NULL, 0, "variant %d: size %lld predicted twice", o[j].variant,
                             o[j].size_bytes);
                free(o);
                free(r);
                return CS_ERR_INVALID;
            }
            if (o[j].ok && (best < 0 || o[j].time_us < best_t)) {
                best = o[j].variant;
                best_t = o[j].time_us;
            }
        }
        if (best < 0) {
            prev_gap = 1;
        } else if (!prev_gap && r[nr - 1].variant == best) {
            r[nr - 1].max_bytes = r[nr - 1].last_size = o[i].size_bytes;
        } else {
            if (!prev_gap)
                r[nr - 1].max_bytes = o[i].size_bytes - 1;
            r[nr++] = (struct cs_tune_range){o[i].size_bytes, o[i].size_bytes, best,
                                             o[i].size_bytes, o[i].size_bytes};
            prev_gap = 0;
        }
        i = j;
    }
    free(o);
    if (nr == 0) {
        cs_error_set(err, NULL, 0, "no variant finishes at any size");
        free(r);
        return CS_ERR_INVALID;
    }
    *out = r;
    *nout = nr;
    return 0;
}
