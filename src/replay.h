/* replay.h: replay an execution plan on a SimGrid platform, one actor per threadblock, with the
 * executor's FIFO credits and flags, and report the completion time or the deadlock. The only
 * module that includes SimGrid. */
#ifndef CS_REPLAY_H
#define CS_REPLAY_H

#include <stdio.h>

#include "error.h"
#include "period.h"
#include "plan.h"
#include "platform.h"
#include "timeline.h"

enum cs_replay_status {
    CS_REPLAY_OK = 1,
    CS_REPLAY_DEADLOCK,
};

struct cs_replay_opts {
    int verbose; /* let SimGrid log (info level) on stderr */
    /* When non-NULL (initialised by the caller), the replay records its events into it: the
     * simulating child sends them back with the result. NULL records nothing. */
    struct cs_timeline *timeline;
    /* When non-NULL and timeline is NULL (set up by the caller with cs_period_init), the replay
     * compares its loop iterations into it as the events stream in, with a snapshot of each tb's
     * state where it enters an iteration, keeping no timeline, and the child sends it back
     * finished. With period->stop_pairs it stops once it cannot settle (period.h): then the
     * result is no deadlock, and no time to use. */
    struct cs_period *period;
    /* 0: replay one representative per orbit of the largest rank shift proven to map plan and
     * platform onto themselves (fold.h), when no timeline is recorded; 1: every rank. */
    int no_fold;
    /* 0: without SimGrid's engine where no link can carry two tbs' transfers at once (each
     * then moves alone: the replay's own clock and events, the same times) and no timeline is
     * recorded; 1: SimGrid always. */
    int no_direct;
    /* 1: a timeline does not stop the fold; the folded replay records the replayed ranks'
     * connections and events only (their routes are their images', class for class, by the
     * fold's proof). For a plan of representatives (plan.h rep_gpus), which has no full replay. */
    int fold_timeline;
    /* N > 1: N collectives back to back, as nccl-tests times them (one process per GPU): each
     * GPU launches its next kernel cs.launch_s after its last one ended, its connections as the
     * last one left them, and time_s is nccl-tests' mean of CS_NCCLTESTS_ITERS of them (the
     * later ones a period apart, from the last of the N). Not with a timeline or a period. */
    int back_to_back;
};

/* nccl-tests' timed iterations (-n, its default; calibration.md 3.2). */
#define CS_NCCLTESTS_ITERS 20

struct cs_replay_result {
    enum cs_replay_status status;
    double time_s;        /* launch + deploy + simulated makespan; 0 on deadlock */
    double sim_s;         /* simulated time reached (the makespan, or where it stopped) */
    long long ncalls;     /* primitive calls completed */
    long long ntransfers; /* transfers put on the network model */
    int nblocked;         /* threadblocks that never finished (deadlock) */
    double wall_s;        /* wall-clock seconds of the simulation */
    long maxrss_kb;       /* peak resident memory of the simulating process */
    char *report;         /* deadlock report (malloc'd), NULL when ok */
    /* The symmetry the replay used: ranks shifted by fold_shift, each replayed rank standing for
     * fold_order (1 and 0: every rank replayed); fold says which, or why none (may be ""). */
    int fold_shift, fold_order;
    char fold[240];
    int direct;      /* 1: replayed without SimGrid's engine (its own events, cs_replay_opts) */
    double spread_s; /* the latest GPU's end of the first collective less the earliest's */
    int colls;       /* collectives replayed back to back (cs_replay_opts.back_to_back) */
};

/* Check that a plan can run on a platform: enough GPU hosts, peers and dependencies in range,
 * one tb per directed connection end. 0, or CS_ERR_INVALID with err set. */
int cs_replay_check(const struct cs_plan *plan, const struct cs_platform *plat,
                    struct cs_error *err);

/* Replay plan on plat with plat->params. SimGrid allows one engine per process, so every call
 * runs the simulation in a forked child that sends the result back through a pipe: callers may
 * call it any number of times. Returns 0 and fills *res (free with cs_replay_result_cleanup), or
 * a CS_ERR_* with err set (invalid input: see cs_replay_check; CS_ERR_SIM if the simulation
 * process failed). */
int cs_replay_run(const struct cs_plan *plan, const struct cs_platform *plat,
                  const struct cs_replay_opts *opts, struct cs_replay_result *res,
                  struct cs_error *err);
void cs_replay_result_cleanup(struct cs_replay_result *res);

/* The version of the SimGrid library the replay runs on, "3.32.0". */
void cs_replay_simgrid_version(char *buf, size_t len);

/* cs_replay_run in two halves, so that several replays run at once (each in its own child):
 * start forks the simulation of plan (0, or a CS_ERR_* with err set and nothing to finish);
 * finish waits for it and fills *res as cs_replay_run does. Every started job must be finished.
 * opts must live until the job is finished; plan and plat are copied into the child at start. */
struct cs_replay_job {
    const struct cs_replay_opts *opts;
    const char *plat_path;
    int fd;
    int pid;
    FILE *errf;
};

int cs_replay_start(const struct cs_plan *plan, const struct cs_platform *plat,
                    const struct cs_replay_opts *opts, struct cs_replay_job *job,
                    struct cs_error *err);
int cs_replay_finish(struct cs_replay_job *job, struct cs_replay_result *res, struct cs_error *err);
/* A started job whose result is no longer wanted: its simulation is killed and waited for. */
void cs_replay_cancel(struct cs_replay_job *job);

#endif
