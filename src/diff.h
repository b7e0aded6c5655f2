/* diff.h: compare two schedules up to the order of each real step's dependencies. */
#ifndef CS_DIFF_H
#define CS_DIFF_H

#include "sched.h"

/* Where two schedules differ. gpu, tb and step are -1 where the difference is above them. */
struct cs_sched_diff {
    int gpu, tb, step;
    char attr[32]; /* attribute name, or a short word: "gpus", "tbs", "steps", "deps" */
    char a[256];   /* value in the first schedule */
    char b[256];   /* value in the second */
};

/* What to leave out of a comparison: attributes by name ("name", "minBytes", ...). */
struct cs_diff_opts {
    const char *const *ignore;
    int nignore;
};

typedef void (*cs_diff_fn)(void *ctx, const struct cs_sched_diff *d);

/* Compare a and b: algo attributes, then per GPU, threadblock and step every attribute, where a
 * real step's dependencies count as the set of (tb, step) it waits on (its own and those of the
 * nops just before it) and nops are compared by position only. Where GPU, threadblock or step
 * counts differ, the common part is compared and the counts reported. Every difference not
 * ignored (opts may be NULL) goes to fn (may be NULL), the first also to *first (may be NULL).
 * Returns how many there are: 0 when equal. */
long cs_sched_compare_all(const struct cs_sched *a, const struct cs_sched *b,
                          const struct cs_diff_opts *opts, cs_diff_fn fn, void *ctx,
                          struct cs_sched_diff *first);

/* The first difference only: 0 when equal, 1 when they differ (then *d, may be NULL). */
int cs_sched_compare(const struct cs_sched *a, const struct cs_sched *b, struct cs_sched_diff *d);

#endif
