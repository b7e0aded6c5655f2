/* stats.h: what a replay's timeline says about a prediction: bytes and utilisation per link, busy
 * and waiting time per threadblock, and the critical path that sets the completion time. */
#ifndef CS_STATS_H
#define CS_STATS_H

#include <stdio.h>

#include "plan.h"
#include "timeline.h"

/* One part of the critical path: an interval of work on one tb (or the launch). */
struct cs_crit_part {
    long long ev;   /* work event in the timeline, or -1 for launch + deploy */
    double start_s; /* on the replay's clock (the launch part starts at -offset) */
    double dur_s;
    int via; /* CS_TL_WAIT_* this part ended on the tb of the next part; 0: none */
};

/* Parts in time order; their durations add up to offset + makespan, the predicted time. */
struct cs_critpath {
    int nparts;
    struct cs_crit_part *parts;
    double total_s;        /* sum of the parts */
    double unattributed_s; /* time the walk could not attribute (0 for a consistent log) */
};

/* Walk back from the tb that finishes last: work is a part; a wait jumps to the tb whose action
 * ended it (the sender of the data, the receiver freeing credits, the publisher of the flag) at
 * the same instant; down to time 0, then the launch. 0 and *cp filled (free with
 * cs_critpath_cleanup); CS_ERR_USAGE for a truncated or incomplete (deadlocked) timeline;
 * CS_ERR_NOMEM. */
int cs_stats_critical_path(const struct cs_plan *plan, const struct cs_timeline *tl,
                           struct cs_critpath *cp);
void cs_critpath_cleanup(struct cs_critpath *cp);

/* The units that put bytes on the wire (out_conn >= 0, wire_bytes or wire_s > 0), grouped by the
 * links of their routes: link l carried the timeline events ev[first[l] .. first[l+1]-1], in
 * timeline order; max is the most events of one link. */
struct cs_link_units {
    long long *first; /* nlinks + 1 offsets into ev */
    long long *ev;
    long long max;
};

/* Fill lu (free with cs_link_units_cleanup). 0 or CS_ERR_NOMEM (lu then owes nothing). */
int cs_stats_link_units(const struct cs_timeline *tl, struct cs_link_units *lu);
void cs_link_units_cleanup(struct cs_link_units *lu);

/* Print the statistics as text to fp: links, threadblocks, then the critical path grouped into
 * segments (consecutive parts of one step of one tb), at most max_segments of them (the first
 * and last halves; <= 0: all). A deadlocked timeline gets no critical path. 0, CS_ERR_USAGE for
 * a truncated timeline, CS_ERR_NOMEM or CS_ERR_IO. */
int cs_stats_write(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl,
                   int max_segments);

#endif
