/* predict.h: the prediction pipeline as a library call: a schedule and a platform in, one
 * result per buffer size out (sizes as nccl-tests steps them, plan, replay, status). Every
 * command that predicts (predict, sweep, regress, validate, tune) calls it in process; the
 * replay forks its own simulating child per size, so it may be called any number of times. */
#ifndef CS_PREDICT_H
#define CS_PREDICT_H

#include "error.h"
#include "nccl.h"
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
    int verify; /* run verify's symbolic data check too, refusing a schedule whose result is wrong
                 * (predict --verify); else the structural checks alone: generators are tested
                 * for correctness, and a file's data result changes no prediction */
    int reps;   /* a generated ring: written by its representatives (gen.h CS_GEN_REPS_AUTO or
                 * CS_GEN_REPS_ALWAYS), for the folded replay only; 0 (and with verify): whole */
};

/* Load what in names: *sched and *plat are new (caller frees with cs_sched_free and
 * cs_platform_free); the sets are applied to (*plat)->params, and the platform is checked to
 * have enough GPUs for the schedule. A generated schedule goes to the plan as the generator built
 * it, a file's as read; both are refused when structurally invalid (cs_verify_refuse_invalid_steps)
 * and, with in->verify, when their data result is wrong (cs_verify_refuse_wrong). 0, or a CS_ERR_*
 * with err set (file:line where known); on failure nothing is returned. */
int cs_predict_load(const struct cs_predict_input *in, struct cs_sched **sched,
                    struct cs_platform **plat, struct cs_error *err);

/* The whole-buffer size nccl-tests runs when asked for size_bytes (its common.cu setupArgs):
 * count = size / type_bytes, rounded down; for allgather, reduce_scatter and alltoall the count
 * per rank is count / ngpus rounded down to 16 bytes (all_gather.cu AllGatherGetCollByteCount),
 * and the buffer is ngpus of them. 0 when nothing is left. */
long long cs_predict_nccl_size(enum cs_coll coll, int ngpus, int type_bytes, long long size_bytes);

/* The granularity of sched's sizes in bytes: the smallest whole buffer that nccl-tests can produce
 * (cs_predict_nccl_size) and that the executor runs with MSCCL (a count that nchunksperloop
 * divides; others fall back to NCCL). Every size predict simulates is a multiple of it. */
long long cs_predict_granularity(const struct cs_sched *sched, int type_bytes);

/* size_bytes as nccl-tests runs it, then rounded down to a multiple of the granularity: the size
 * predict simulates and prints; 0 when it aligns down to nothing. */
long long cs_predict_align(const struct cs_sched *sched, int type_bytes, long long size_bytes);

/* The sizes nccl-tests -b min -e max -f factor visits, each aligned down (cs_predict_align), the
 * sizes that align to 0 dropped (*nzero of them), duplicates dropped, ascending. *sizes and
 * *nominal (the size asked for, before alignment, of each) are new (caller frees; nominal may be
 * NULL), *n their length (0 when every size aligns to 0). 0, CS_ERR_USAGE (min > max, min < 1,
 * factor < 2) or CS_ERR_NOMEM; nothing is returned on failure. */
int cs_predict_size_list(const struct cs_sched *sched, int type_bytes, long long min_bytes,
                         long long max_bytes, long long factor, long long **sizes,
                         long long **nominal, int *n, int *nzero);

/* The sizes nccl-tests -b min -e max -f factor visits, each rounded UP to one the executor
 * accepts (cs_plan_round_size), duplicates dropped, ascending: what validate and regress look
 * measured and baseline sizes up in (the smallest predicted size at or above each); predict and
 * sweep align down instead (cs_predict_size_list). *sizes is new (caller frees), *n its length
 * (>= 1). 0, CS_ERR_USAGE (min > max, min < 1, factor < 2) or CS_ERR_NOMEM. *rounded is set to 1
 * when some size was rounded (may be NULL). */
int cs_predict_sizes(const struct cs_sched *sched, int type_bytes, long long min_bytes,
                     long long max_bytes, long long factor, long long **sizes, int *n,
                     int *rounded);

/* ---- NCCL's baseline (predict --vs-nccl) */

/* Which NCCL a prediction is compared with. */
struct cs_predict_vs_nccl {
    int version;  /* a cs_nccl_version_parse code; 0: CS_NCCL_DEFAULT_VERSION */
    int channels; /* the communicator's channels; 0: CS_NCCL_DEFAULT_CHANNELS */
    int nodes;    /* the nodes the GPUs lie on (cs_gen_opts.nodes: rings node by node); 0: 1 */
    enum cs_nccl_algo algo; /* ring or tree; 0: NCCL's model picks (cs_nccl_pick_algo) */
    const char *log; /* an NCCL INFO log: its communicator and ring orders (cs_gen_opts.nccl_log) */
};

/* What NCCL runs at a row's size (cs_gen_nccl) and its predicted time. */
struct cs_predict_nccl {
    enum cs_proto proto; /* the fastest protocol NCCL enables; 0 when none finished */
    int channels;        /* NCCL's channels and threads per channel at that size */
    int threads;
    long long size_bytes; /* the size replayed: the row's, aligned down to one NCCL's ring takes (up
                             if that is 0) */
    double time_us;       /* 0 when none finished */
    enum cs_nccl_algo algo; /* ring or tree (0 for AllToAll's point-to-point sends) */
};

/* ---- */

/* One predicted size. */
struct cs_predict_row {
    long long size_bytes;    /* the whole buffer, as nccl-tests prints it */
    long long count;         /* elements: size_bytes / type_bytes */
    long long nominal_bytes; /* the size asked for, before alignment (cs_predict_align) */
    double measured_us;      /* with opts.measured: the log's out-of-place time; 0: none */
    double measured_ip_us;   /* and its in-place time; 0: none */
    struct cs_replay_result res;
    double time_us;    /* res.time_s in microseconds; 0 unless ok */
    double algbw_GBps; /* size / time; 0 unless ok */
    double busbw_GBps; /* algbw x the nccl-tests bus factor of the collective; 0 unless ok */
    int niter;         /* the plan's loop iterations, maxAllowedCount: for messages */
    int max_allowed;
    int replayed_iters; /* iterations replayed before extrapolating the rest; 0: full replay */
    int beside;    /* 1: the full replay ran beside the extrapolation's short replays (a long one,
                    * a CPU free): stopped if they settled, its result taken if not */
    char *refused; /* with keep_going: why the executor refuses this size (then no res) */
    char *hang;    /* why the runtime would hang: more threadblocks on a GPU than it keeps resident
                    * (cs_verify_find_overfull with the platform's cs.gpu_sms, cs.ctas_per_sm);
                    * then no res */
    char *warning; /* what the time assumes that the runtime may not do (cs_predict_check_ll128),
                    * the same on every row of a run; NULL when nothing */
    const char *dtype;           /* the type name reports print; NULL: the report's own */
    struct cs_predict_nccl nccl; /* with cs_predict_opts.vs_nccl: NCCL's baseline, else zero */
};

/* Measured times by size (predict --compare): a measurement table or raw nccl-tests output
 * (cs_meas_read), the rows of each size and placement reduced to their median. */
struct cs_predict_meas_point {
    long long size_bytes;
    double oop_us; /* out of place (or no placement given); 0: none */
    double ip_us;  /* in place; 0: none */
};
struct cs_predict_meas {
    int n;
    struct cs_predict_meas_point *pts; /* ascending sizes */
};

/* Read path's measured times; a row without time_us takes it from busbw with coll's nccl-tests
 * factor over ngpus ranks. *out is new (cs_predict_meas_free). 0, or a CS_ERR_* with err at
 * file:line (as cs_meas_read and cs_meas_read_rows; a table of time against GPU count, or one
 * without a row, is CS_ERR_INVALID). */
int cs_predict_meas_read(const char *path, enum cs_coll coll, int ngpus,
                         struct cs_predict_meas **out, struct cs_error *err);
void cs_predict_meas_free(struct cs_predict_meas *m);

/* The measured point at size_bytes, or NULL. */
const struct cs_predict_meas_point *cs_predict_meas_find(const struct cs_predict_meas *m,
                                                         long long size_bytes);

/* The FNV-1a 64 hash of the file at path, as 16 hex digits in hex (what reports name a platform
 * file by). 0, or cs_file_read's error with err set. */
int cs_predict_file_hash(const char *path, char hex[17], struct cs_error *err);

/* How cs_predict_align moved the sizes of sched for type_bytes (0: every nccl-tests type, for
 * -d all), nzero of them to 0, as one line of text in buf (len bytes): the granularity and why. */
void cs_predict_sizes_note(const struct cs_sched *sched, int type_bytes, int nzero, char *buf,
                           size_t len);

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
    const long long *nominal;               /* the nominal size of each size; NULL: the size */
    const struct cs_predict_meas *measured; /* times to compare with (predict --compare) */
    /* Non-NULL: each row also gets NCCL's baseline at its size (cs_predict_nccl_at). */
    const struct cs_predict_vs_nccl *vs_nccl;
    /* Non-NULL: the schedule given to cs_predict_run, whose steps its caller reads no more; they
     * are freed as the plan is compiled, which takes their room (cs_plan_compile_release). */
    struct cs_sched *release_steps;
};

/* Plan and replay sched on plat at each of n sizes (from cs_predict_sizes), in order (one plan,
 * compiled once and sized for each), filling
 * rows[0..n) (caller frees each with cs_predict_row_cleanup). A deadlock is a result, not an
 * error, and so is a hang (a GPU with more threadblocks than the platform's GPU keeps resident:
 * no replay). An LL128 plan on routes that are not all NVLink, or a tb over the executor's steps
 * (cs_sched_steps_warning), is predicted, with the warning on every row. 0, or a CS_ERR_* with
 * err set (a schedule or size the executor refuses, a failed simulation); then rows already
 * filled are cleaned up. */
int cs_predict_run(const struct cs_sched *sched, const struct cs_platform *plat,
                   const struct cs_predict_opts *opts, const long long *sizes, int n,
                   struct cs_predict_row *rows, struct cs_error *err);
void cs_predict_row_cleanup(struct cs_predict_row *row);

/* NCCL's baseline for sched's collective at size_bytes on plat: the protocol NCCL's own tuning
 * model picks there (cs_nccl_pick on the machine the platform describes: its NVLink port within a
 * node, else PCIe and no LL128, one NIC per GPU between nodes; AllToAll Simple only) and the
 * schedule NCCL runs with it (cs_gen_nccl, on the schedule's GPUs in rank order, node by node)
 * with the protocol's threadblock narrowed to NCCL's threads (as validate's nccl=), predicted as
 * cs_predict_run does at the size rounded up to one the ring takes. The type, the replay and
 * extrapolation options come from opts. 0 and *out (proto 0 when it did not finish), or a
 * CS_ERR_* with err set: CS_ERR_USAGE for a collective NCCL has no counterpart for (custom) or a
 * ring the runtime cannot run. */
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

/* The steady state of a replay (predict.c on extrapolation). */
struct cs_predict_period {
    int p;                        /* loop iterations per period */
    int first;                    /* the first periodic iteration */
    double step_s;                /* simulated seconds per period */
    long long ncalls, ntransfers; /* calls and transfers per period */
};

/* The steady state of a complete replay of m of the n loop iterations of a plan with ntbs
 * threadblocks, recorded in tl: the smallest period p <= max_period such that, for at least p + 1
 * consecutive iterations i from some first >= 1 up to m - 2 - p (so that i + p comes before the
 * last iteration), every event of every threadblock in iteration i + p is its event of iteration
 * i (kind, op, call, bytes, the tb that ended a wait) shifted by one time step, closely enough
 * that extrapolating (n - m) / p more periods from the step averaged over the window keeps
 * within rel_err of the total. 1 with *out filled, 0 when there is none (or tl has events beyond
 * ntbs x m), or CS_ERR_NOMEM. */
int cs_predict_find_period(const struct cs_timeline *tl, int ntbs, int m, int n, int max_period,
                           double rel_err, struct cs_predict_period *out);

/* The status word of a row, as every report and table spells it: "ok", "deadlock", "hang" or
 * (with keep_going) "unsupported". */
const char *cs_predict_status_name(const struct cs_predict_row *row);

#endif
