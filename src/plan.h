/* plan.h: a schedule, a buffer size, a datatype and a protocol turned into what the MSCCL executor
 * runs: chunk size, loop iterations, calls per step, folded dependencies and fused reductions
 * (shared reference msccl.md sections 2 and 3). The one executor model: the replay consumes it,
 * xplan.h lays it out for the CPU emulation and the CUDA harness; the numbers are in proto.h. */
#ifndef CS_PLAN_H
#define CS_PLAN_H

#include "error.h"
#include "proto.h"
#include "sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One transmission as the executor's parser builds it: a real step with the dependencies of the
 * nops before it (those with a depid), or a chain of up to 16 fused `re` steps. 48 bytes: a large
 * plan has millions; its dependencies and sources lie in its tb's pools, its small fields share
 * one word. */
struct cs_plan_op {
    struct cs_dep *deps; /* ndeps flags (tb of the same GPU, step) to wait for */
    int *srcoff;         /* source chunk of each of the nsrc passes; srcoff[0] 0 if unused */
    int first_step;      /* XML s of the first step folded in (its first nop, if any) */
    int step;            /* XML s of the last step folded in: the flag value it publishes */
    int cnt;             /* chunks (the last merged step's cnt for fused re) */
    int ndeps;
    int ncalls; /* primitive calls per iteration: ceil(cnt / max_allowed) */
    int dstoff;
    int line;                   /* XML line of the last step folded in */
    enum cs_step_type type : 8; /* never CS_STEP_NOP */
    unsigned nsrc : 8;          /* re: local sources reduced in one pass (1..16); 1 otherwise */
    unsigned hasdep : 8;        /* publishes its flag when done */
    enum cs_buf srcbuf : 4, dstbuf : 4; /* local operands; 0 when the type has none */
};

struct cs_plan_tb {
    int gpu, id;    /* rank and tb id */
    int send, recv; /* peer ranks or -1 */
    int chan;
    int line; /* XML line of the <tb> */
    int nops;
    struct cs_plan_op *ops;
    struct cs_dep *dep_pool; /* every op's deps, in order */
    int *src_pool;           /* every op's srcoff, in order */
};

/* How a call of one size runs: the MSCCL chunk, the loop and maxAllowedCount (msccl.md 3.1). */
struct cs_plan_sizing {
    long long size_bytes;  /* whole buffer */
    long long count;       /* elements in the whole buffer */
    long long chunk_elems; /* S: elements per MSCCL chunk */
    long long loop_elems;  /* elements per chunk per loop iteration */
    long long last_elems;  /* elements per chunk in the last (maybe partial) iteration */
    int niter;             /* ceil(S / loop_elems), at most CS_MAX_ITERATIONS */
    int max_allowed;       /* maxAllowedCount */
};

struct cs_plan {
    enum cs_proto proto;
    enum cs_coll coll;
    int ngpus, nchannels, nchunksperloop;
    int nccl_kernel; /* the schedule's (sched.h): NCCL's own kernel, not the MSCCL executor */
    int nccl_threads, nccl_max_threads; /* the schedule's: NCCL's threads per channel */
    struct cs_plan_sizing sz;           /* size_bytes: count x sizeMultiplier x type size */
    int type_bytes;
    int slots_per_call;     /* FIFO slots a call takes: 4 Simple, 1 LL/LL128 */
    int units_per_call;     /* transfers per call: 2 slices (Simple) or 1 */
    double wire_factor;     /* wire bytes per data byte: 2 LL, 128/120 LL128, 1 Simple */
    int ntbs;               /* over all GPUs */
    struct cs_plan_tb *tbs; /* GPU by GPU, tb ids ascending */
    int *gpu_tb0;           /* ngpus+1 entries: tbs of GPU g are [gpu_tb0[g], gpu_tb0[g+1]) */
    long long ncalls_total; /* primitive calls over the whole run, all tbs */
    /* The schedule's (sched.h): only GPUs 0..rep_gpus-1 hold tbs, the others being their images
     * under the shift by rep_shift; ncalls_total counts every GPU. 0 and 0: every GPU's tbs. */
    int rep_gpus, rep_shift;
};

/* Size a run of size_bytes (the whole buffer) of type_bytes elements over nchunks chunks per loop,
 * with loop_bytes of data per chunk per iteration (0: the protocol's default). 0, or
 * CS_ERR_INVALID with err set when the size does not split into nchunks whole chunks or needs
 * more loop iterations than the flags allow. */
int cs_plan_sizing_init(struct cs_plan_sizing *sz, int nchunks, int proto, long long size_bytes,
                        int type_bytes, long loop_bytes, struct cs_error *err);

/* cs_plan_sizing_init for sched at size_bytes: NCCL's own kernel (sched->nccl_kernel) runs any
 * whole count of elements, sized as the next multiple of nchunksperloop elements with the count
 * kept, its chunks filled as NCCL fills them (cs_plan_call_elems); the MSCCL executor only
 * whole chunks. */
int cs_plan_sizing_sched(struct cs_plan_sizing *sz, const struct cs_sched *sched, int proto,
                         long long size_bytes, int type_bytes, struct cs_error *err);

/* Compile a schedule, size-independently, for protocol proto (0: the schedule's own): nops folded
 * into the next transmission's dependencies, consecutive re fused, as the executor's parser does
 * (msccl.md 2.1, 2.2). The sizing fields stay 0 and every op's ncalls 0. On success stores a new
 * plan in *out (free with cs_plan_free) and returns 0; CS_ERR_INVALID or CS_ERR_NOMEM with err
 * set (file:line of the step) otherwise. */
int cs_plan_compile(const struct cs_sched *sched, enum cs_proto proto, struct cs_plan **out,
                    struct cs_error *err);

/* cs_plan_compile, freeing each tb's steps once it is folded, so that the plan takes their room:
 * for a schedule whose steps nothing reads afterwards (its gpus and tbs stay, with no steps; on
 * failure too, the tbs folded so far have lost theirs). */
int cs_plan_compile_release(struct cs_sched *sched, enum cs_proto proto, struct cs_plan **out,
                            struct cs_error *err);

/* Size a compiled plan, again or for the first time, for sz and elements of type_bytes: the
 * sizing, every op's ncalls and ncalls_total, as cs_plan_build sets them. */
void cs_plan_resize(struct cs_plan *plan, const struct cs_plan_sizing *sz, int type_bytes);

/* Build the plan for a buffer of size_bytes (the whole buffer, as nccl-tests prints it) of
 * elements of type_bytes, run with protocol proto (0: the schedule's own). size_bytes must be a
 * positive multiple of nchunksperloop x type_bytes. On success stores a new plan in *out (free
 * with cs_plan_free) and returns 0; CS_ERR_INVALID with err set for sizes or schedules the
 * executor would refuse. */
int cs_plan_build(const struct cs_sched *sched, long long size_bytes, int type_bytes,
                  enum cs_proto proto, struct cs_plan **out, struct cs_error *err);
void cs_plan_free(struct cs_plan *plan);

/* The smallest size >= size_bytes that the executor accepts for this schedule and type. */
long long cs_plan_round_size(const struct cs_sched *sched, long long size_bytes, int type_bytes);

/* Elements per chunk in iteration iter (0-based). */
long long cs_plan_iter_elems(const struct cs_plan *plan, int iter);

/* Elements moved by call `call` (0-based) of op in iteration iter:
 * min(max_allowed, cnt - call x max_allowed) x iter elements; in NCCL's own kernel run in one
 * iteration, a one-chunk op's chunk as NCCL fills it (the count from the first chunk on, in
 * chunks rounded up to CS_NCCL_CHUNK_ALIGN bytes: the last ones may be short or empty). */
long long cs_plan_call_elems(const struct cs_plan *plan, const struct cs_plan_op *op, int iter,
                             int call);

/* 0 where NCCL's own kernel fills its chunks unevenly at the plan's count (cs_plan_call_elems),
 * so that ranks doing the same steps move different amounts; else 1. */
int cs_plan_chunks_even(const struct cs_plan *plan);

/* Split a call of `elems` elements into its transfer units (the two Simple slices, or the one
 * LL/LL128 call); writes units_per_call byte counts of data to unit_bytes. Simple's first slice
 * is max(ceil(elems/32) x 16, 32 KiB worth) elements, capped at elems; the second the rest. */
void cs_plan_call_units(const struct cs_plan *plan, long long elems, long long unit_bytes[2]);

/* Bytes on the wire for data_bytes of payload: whole LL lines (16 B per 8 B of data) or LL128
 * lines (128 B per 120 B), i.e. wire_factor x data rounded up to a line; data for Simple. */
double cs_plan_wire_bytes(const struct cs_plan *plan, long long data_bytes);

/* The datatypes of nccl-tests (-d), in its order. */
#define CS_NDTYPES 12
extern const char *const cs_dtype_names[CS_NDTYPES];

/* Element size of a datatype name: nccl-tests' names (int8 1 ... bfloat16 2, f8e4m3 1) and the
 * aliases float32, float16, float64; 0 if unknown. */
int cs_dtype_bytes(const char *name);

/* nccl-tests bus-bandwidth factor for a collective on n ranks: allreduce 2(n-1)/n,
 * allgather/reduce_scatter/alltoall (n-1)/n, custom 1. */
double cs_busbw_factor(enum cs_coll coll, int nranks);

#ifdef __cplusplus
}
#endif

#endif
