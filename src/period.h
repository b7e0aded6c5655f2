/* period.h: a replay's loop iterations compared pairwise as its events stream in, so that
 * predict's steady-state extrapolation needs no timeline of the whole replay. */
#ifndef CS_PERIOD_H
#define CS_PERIOD_H

#include "timeline.h"

/* How iteration i + p compares with iteration i over every threadblock: each event of a tb in
 * i + p against the event of the same rank in i (kind, op, call, bytes and the tb that ended a
 * wait must agree; then the start and end shifts and the change in network time). */
struct cs_period_pair {
    int differ;        /* some event or event count differs */
    double dmin, dmax; /* the smallest and largest start or end shift over the events (dmin >
                        * dmax: no events) */
    double wdev;       /* the largest change of an event's network seconds */
};

/* Per-threadblock streaming state (period.c). */
struct cs_period_tb;

/* The comparisons of a replay of m loop iterations of a plan with ntbs threadblocks, for periods
 * 1 .. maxp. Events are given in the order the replay records them; each tb keeps the events of
 * its last maxp iterations (about 48 bytes each) while it streams, at most max_live in all.
 * Waits of no duration are left out: the replay records one when a tb found it had to wait and
 * was woken at the same instant, which depends on the order in which the tbs that go on at one
 * instant run, and that order changes no time (every counter a tb waits on has that tb as its
 * only taker, flags are not consumed, and SimGrid shares links whatever the order transfers
 * start in), so it may differ between iterations whose every other event repeats. */
struct cs_period {
    int ntbs, m, maxp;
    int invalid;       /* an event outside ntbs x m, or a tb going back an iteration */
    int truncated;     /* more than max_live events were to be kept: nothing to compare */
    long long nevents; /* events given */
    long long max_live, live;
    double makespan_s, offset_s;  /* as the timeline's (set by the replay) */
    int complete;                 /* every tb finished */
    struct cs_period_pair *pairs; /* m x maxp: pair (i, i + p) at i * maxp + p - 1 */
    long long *ncalls;            /* m: CALL events of the iteration, over all tbs */
    long long *ntransfers;        /* m: sending UNIT events with data, over all tbs */
    double *last_end;             /* ntbs x m: the end of tb t's last event of iteration i (at
                                   * t * m + i); NaN when it has none */
    int *count;                   /* ntbs x m: events of tb t in iteration i; NULL once finished */
    struct cs_period_tb *tbs;     /* NULL once finished */
};

/* Set pd up for ntbs threadblocks, m iterations and periods up to maxp (>= 1); max_live <= 0:
 * no cap. 0, or -1 (bad arguments, out of memory: pd is left clean). */
int cs_period_init(struct cs_period *pd, int ntbs, int m, int maxp, long long max_live);

/* Compare event ev with the tb's events maxp iterations back, then keep it. 0, or -1 when out of
 * memory. */
int cs_period_add(struct cs_period *pd, const struct cs_tl_event *ev);

/* After the last event: iterations whose event counts differ mark their pairs, and the streaming
 * state is freed. */
void cs_period_finish(struct cs_period *pd);

void cs_period_cleanup(struct cs_period *pd);

/* The comparisons of a recorded timeline, its events given in order (finished). 0 or -1. */
int cs_period_from_timeline(struct cs_period *pd, const struct cs_timeline *tl, int ntbs, int m,
                            int maxp);

/* How far, at most, every tb's iteration i + p is from its iteration i shifted by step_s:
 * HUGE_VAL when some event differs. */
double cs_period_dev(const struct cs_period *pd, int i, int p, double step_s);

/* A finished pd through a pipe (the replay's child to its parent). 0, or -1. */
int cs_period_write(int fd, const struct cs_period *pd);
int cs_period_read(int fd, struct cs_period *pd);

#endif
