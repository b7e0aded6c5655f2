/* diff.h: compare two schedules up to the order of each real step's dependencies. */
#ifndef CS_DIFF_H
#define CS_DIFF_H

#include "sched.h"

/* Where two schedules first differ. gpu, tb and step are -1 where the difference is above them. */
struct cs_sched_diff {
    int gpu, tb, step;
    char attr[32]; /* attribute name, or a short word: "gpus", "tbs", "steps", "deps" */
    char a[256];   /* value in the first schedule */
    char b[256];   /* value in the second */
};

/* Compare a and b: algo attributes, then per GPU, threadblock and step every attribute, where a
 * real step's dependencies count as the set of (tb, step) it waits on (its own and those of the
 * nops just before it) and nops are compared by position only. Returns 0 when equal, 1 when they
 * differ (the first difference in *d, may be NULL). */
int cs_sched_compare(const struct cs_sched *a, const struct cs_sched *b, struct cs_sched_diff *d);

#endif
