/* predict.h: the prediction pipeline as a library call: a schedule and a platform in, one
 * result per buffer size out (sizes as nccl-tests steps them, plan, replay, status). Every
 * command that predicts (predict, sweep, regress, validate, tune) calls it in process; the
 * replay forks its own simulating child per size, so it may be called any number of times. */
#ifndef CS_PREDICT_H
#define CS_PREDICT_H

#include "error.h"
#include "plan.h"
#include "platform.h"
#include "replay.h"
#include "sched.h"

/* What to predict on: a schedule file ("-" is stdin) or a generator spec (exactly one), a
 * platform file, and platform parameter overrides "KEY=VALUE" applied in order. */
struct cs_predict_input {
    const char *sched_path;
    const char *gen_spec; /* `collsim gen` spec, e.g. "ring:gpus=8,channels=4,protocol=LL" */
    const char *plat_path;
    const char *const *sets;
    int nsets;
};

/* Load what in names: *sched and *plat are new (caller frees with cs_sched_free and
 * cs_platform_free); the sets are applied to (*plat)->params, and the platform is checked to
 * have enough GPUs for the schedule. 0, or a CS_ERR_* with err set (file:line where known);
 * on failure nothing is returned. */
int cs_predict_load(const struct cs_predict_input *in, struct cs_sched **sched,
                    struct cs_platform **plat, struct cs_error *err);

/* The sizes nccl-tests -b min -e max -f factor visits, each rounded up to one the executor
 * accepts for this schedule and type (cs_plan_round_size), duplicates dropped, ascending.
 * *sizes is new (caller frees), *n its length (>= 1). 0, CS_ERR_USAGE (min > max, min < 1,
 * factor < 2) or CS_ERR_NOMEM. *rounded is set to 1 when some size was rounded (may be NULL). */
int cs_predict_sizes(const struct cs_sched *sched, int type_bytes, long long min_bytes,
                     long long max_bytes, long long factor, long long **sizes, int *n,
                     int *rounded);

/* ---- NCCL's baseline (predict --vs-nccl) */

/* Which NCCL a prediction is compared with. */
struct cs_predict_vs_nccl {
    int version;  /* a cs_nccl_version_parse code; 0: CS_NCCL_DEFAULT_VERSION */
    int channels; /* the communicator's channels; 0: CS_NCCL_DEFAULT_CHANNELS */
    int nodes;    /* the nodes the GPUs lie on (cs_gen_opts.nodes: rings node by node); 0: 1 */
};

/* What NCCL runs at a row's size (cs_gen_nccl) and its predicted time. */
struct cs_predict_nccl {
    enum cs_proto proto; /* the fastest protocol NCCL enables; 0 when none finished */
    int channels;        /* NCCL's channels and threads per channel at that size */
    int threads;
    long long size_bytes; /* the size replayed: the row's, rounded up to one NCCL's ring takes */
    double time_us;       /* 0 when none finished */
};

/* ---- */

/* One predicted size. */
struct cs_predict_row {
    long long size_bytes; /* the whole buffer, as nccl-tests prints it */
    long long count;      /* elements: size_bytes / type_bytes */
    struct cs_replay_result res;
    double time_us;    /* res.time_s in microseconds; 0 unless ok */
    double algbw_GBps; /* size / time; 0 unless ok */
    double busbw_GBps; /* algbw x the nccl-tests bus factor of the collective; 0 unless ok */
    int niter;         /* the plan's loop iterations, maxAllowedCount: for messages */
    int max_allowed;
    int replayed_iters; /* iterations replayed before extrapolating the rest; 0: full replay */
    char *refused;      /* with keep_going: why the executor refuses this size (then no res) */
    char *hang;    /* why the runtime would hang: more threadblocks on a GPU than it keeps resident
                    * (cs_verify_find_overfull with the platform's cs.gpu_sms, cs.ctas_per_sm);
                    * then no res */
    char *warning; /* what the time assumes that the runtime may not do (cs_predict_check_ll128),
                    * the same on every row of a run; NULL when nothing */
    const char *dtype;           /* the type name reports print; NULL: the report's own */
    struct cs_predict_nccl nccl; /* with cs_predict_opts.vs_nccl: NCCL's baseline, else zero */
};

/* Called after each size when non-NULL (progress): k of n done. */
typedef void (*cs_predict_progress_fn)(void *ctx, int k, int n, const struct cs_predict_row *row);

struct cs_predict_opts {
    enum cs_proto proto; /* 0: the schedule's own */
    int type_bytes;      /* element size (cs_dtype_bytes) */
    struct cs_replay_opts replay;
    int no_extrapolate; /* replay every loop iteration (see predict.c on extrapolation) */
    int keep_going;     /* a size the executor refuses is an "unsupported" row, not an error */
    /* When non-NULL, the largest size's replay records into this timeline (initialised by the
     * caller) and *trace_plan receives that size's plan (caller frees with cs_plan_free). */
    struct cs_timeline *timeline;
    struct cs_plan **trace_plan;
    cs_predict_progress_fn progress;
    void *progress_ctx;
    /* Non-NULL: each row also gets NCCL's baseline at its size (cs_predict_nccl_at). */
    const struct cs_predict_vs_nccl *vs_nccl;
};

/* Plan and replay sched on plat at each of n sizes (from cs_predict_sizes), in order, filling
 * rows[0..n) (caller frees each with cs_predict_row_cleanup). A deadlock is a result, not an
 * error, and so is a hang (a GPU with more threadblocks than the platform's GPU keeps resident:
 * no replay). An LL128 plan on routes that are not all NVLink is predicted, with the warning on
 * every row. 0, or a CS_ERR_* with err set (a schedule or size the executor refuses, a failed
 * simulation); then rows already filled are cleaned up. */
int cs_predict_run(const struct cs_sched *sched, const struct cs_platform *plat,
                   const struct cs_predict_opts *opts, const long long *sizes, int n,
                   struct cs_predict_row *rows, struct cs_error *err);
void cs_predict_row_cleanup(struct cs_predict_row *row);

/* NCCL's baseline for sched's collective at size_bytes on plat: for each protocol NCCL enables
 * (LL, LL128 where the ring's routes are NVLink, Simple; AllToAll Simple only), the schedule
 * NCCL runs (cs_gen_nccl, on the schedule's GPUs in rank order, node by node) with the protocol's
 * per-threadblock rate scaled by NCCL's threads over the full count (as validate's nccl=),
 * predicted as cs_predict_run does at the size rounded up to one the ring takes; the fastest is
 * kept (NCCL picks its protocol with its own cost model, which aims at the same). The type, the
 * replay and extrapolation options come from opts. 0 and *out (proto 0 when no protocol
 * finished), or a CS_ERR_* with err set: CS_ERR_USAGE for a collective NCCL has no counterpart
 * for (custom) or a ring the runtime cannot run. */
int cs_predict_nccl_at(const struct cs_sched *sched, const struct cs_platform *plat,
                       const struct cs_predict_opts *opts, long long size_bytes,
                       struct cs_predict_nccl *out, struct cs_error *err);

/* Whether the LL128 plan runs a connection over a route within a node that is not all NVLink,
 * where NCCL refuses LL128 (predict.c says why; routes that cross the network are not flagged).
 * Costs one replay of one loop iteration when plat has PCIe links, none otherwise. 0 with *msg a
 * new message naming the first such connection, its link and how many there are (caller frees),
 * or NULL when there is none or the plan is not LL128; or a CS_ERR_* with err set (the replay
 * failed). */
int cs_predict_check_ll128(const struct cs_plan *plan, const struct cs_platform *plat, char **msg,
                           struct cs_error *err);

/* The status word of a row, as every report and table spells it: "ok", "deadlock", "hang" or
 * (with keep_going) "unsupported". */
const char *cs_predict_status_name(const struct cs_predict_row *row);

#endif
