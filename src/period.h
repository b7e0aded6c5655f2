/* period.h: a replay's loop iterations compared pairwise from a digest of each threadblock's
 * iteration and a snapshot of its state where the iteration begins, so that predict's
 * steady-state extrapolation needs neither a timeline nor the events of a whole iteration. */
#ifndef CS_PERIOD_H
#define CS_PERIOD_H

#include <stdint.h>

#include "timeline.h"

/* What "iteration i + p agrees with iteration i" means, per threadblock (predict.c says why this
 * makes the extrapolation exact):
 * - the same events in the same order: kind, op, call, bytes and the tb that ended a wait, taken
 *   as a 64-bit digest of the sequence (FNV-1a's step on whole fields: one field that differs
 *   always shows) and its length (waits of no duration left out: below);
 * - their times the same relative to the iteration's first event: the first two moments of the
 *   offsets of every start and end, and the sum of the network seconds, each within the
 *   deviation allowed;
 * - the same state where the tb enters the iteration (given by the replay, cs_period_snap): its
 *   connections' slot, data and in-flight counters and its flag exactly, the times at which the
 *   units in flight on them arrive relative to that instant within the deviation;
 * - the whole shifted by the same step: the shift of the first start, of the last end and of the
 *   snapshot's instant.
 * Memory is a few records per tb, whatever the number of events. */
struct cs_period_pair {
    int differ;        /* some event, event count or exact snapshot field differs */
    double dmin, dmax; /* the smallest and largest shift of a tb's first start, last end or
                        * snapshot instant (dmin > dmax: no events) */
    double wdev;       /* the largest change of a tb's mean event offset or network seconds */
    double sdev;       /* the largest change of a snapshot's arrival times */
};

/* A tb's state where it enters an iteration, as the replay sees it. */
#define CS_PERIOD_SNAP_INTS 12
#define CS_PERIOD_SNAP_TIMES 4
struct cs_period_snap {
    double at_s;                          /* the instant */
    long long ints[CS_PERIOD_SNAP_INTS];  /* compared exactly */
    double times_s[CS_PERIOD_SNAP_TIMES]; /* relative to at_s, compared within the deviation */
};

/* Per-threadblock streaming state (period.c). */
struct cs_period_tb;

/* The comparisons of a replay of m loop iterations of a plan with ntbs threadblocks, for periods
 * 1 .. maxp. Events are given in the order the replay records them; each tb keeps a digest of its
 * current iteration and of its last maxp (a hundred bytes or so each).
 * Waits of no duration are left out: the replay records one when a tb found it had to wait and
 * was woken at the same instant, which depends on the order in which the tbs that go on at one
 * instant run, and that order changes no time (every counter a tb waits on has that tb as its
 * only taker, flags are not consumed, and SimGrid shares links whatever the order transfers
 * start in), so it may differ between iterations whose every other event repeats.
 * With stop_pairs > 0 the replay may stop early: once a pair (i, i + 1) with stop_pairs <= i <=
 * m - 3 differs in its exact fields (doomed is set), a replay of these m iterations cannot settle
 * for p = 1 (predict.c), and the replay stops (stopped) as soon as it has also given at least
 * stop_events events. */
struct cs_period {
    int ntbs, m, maxp;
    int invalid;    /* an event outside ntbs x m, or a tb going back an iteration */
    int truncated;  /* the timeline compared was truncated (cs_period_from_timeline) */
    int stop_pairs; /* 0: run to the end; else the first pair that must agree (above) */
    long long stop_events;
    int doomed;                   /* a pair that stop_pairs names differs */
    int stopped;                  /* the replay stopped early: its comparisons are not whole */
    long long nevents;            /* events given */
    double makespan_s, offset_s;  /* as the timeline's (set by the replay) */
    int complete;                 /* every tb finished */
    struct cs_period_pair *pairs; /* m x maxp: pair (i, i + p) at i * maxp + p - 1 */
    long long *ncalls;            /* m: CALL events of the iteration, over all tbs */
    long long *ntransfers;        /* m: sending UNIT events with data, over all tbs */
    double *last_end;             /* ntbs x m: the end of tb t's last event of iteration i (at
                                   * t * m + i); NaN when it has none */
    struct cs_period_tb *tbs;     /* NULL once finished */
};

/* Set pd up for ntbs threadblocks, m iterations and periods up to maxp (>= 1). 0, or -1 (bad
 * arguments, out of memory: pd is left clean). */
int cs_period_init(struct cs_period *pd, int ntbs, int m, int maxp);

/* Take event ev into its tb's digest of its iteration; an event of a later iteration first
 * closes the tb's iterations before and compares them. 0, or -1 when out of memory. */
int cs_period_add(struct cs_period *pd, const struct cs_tl_event *ev);

/* The state of tb where it enters iteration iter (before any event of it). */
void cs_period_snap_add(struct cs_period *pd, int tb, int iter, const struct cs_period_snap *s);

/* After the last event: every tb's last iteration is closed and compared, iterations whose event
 * counts differ mark their pairs, and the streaming state is freed. */
void cs_period_finish(struct cs_period *pd);

void cs_period_cleanup(struct cs_period *pd);

/* The comparisons of a recorded timeline, its events given in order (finished; no snapshots).
 * 0 or -1. */
int cs_period_from_timeline(struct cs_period *pd, const struct cs_timeline *tl, int ntbs, int m,
                            int maxp);

/* How far, at most, every tb's iteration i + p is from its iteration i shifted by step_s:
 * HUGE_VAL when some event differs. */
double cs_period_dev(const struct cs_period *pd, int i, int p, double step_s);

/* A finished pd through a pipe (the replay's child to its parent). 0, or -1. */
int cs_period_write(int fd, const struct cs_period *pd);
int cs_period_read(int fd, struct cs_period *pd);

#endif
