/* xplan.h: an MSCCL schedule compiled into flat arrays for the GPU executor, plus the CPU reference
 * of its collective and a sequential CPU emulation of the plan that checks the compilation. */
#ifndef CS_XPLAN_H
#define CS_XPLAN_H

#include "error.h"
#include "sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest number of local sources of one fused re (the runtime's MSCCL_MAX_REDUCE_FUSION). */
#define CS_XPLAN_MAX_SRCS CS_MAX_REDUCE_FUSION

/* FIFO slots taken by one prim call (msccl.md 3.2): Simple 2 slices x 2 steps, LL/LL128 one. */
#define CS_XPLAN_SLOTS_SIMPLE 4
#define CS_XPLAN_SLOTS_LL 1

/* Payload bytes of one loop chunk per protocol (msccl.md 3.1: NCCL default buffers). */
#define CS_XPLAN_CHUNK_BYTES_SIMPLE (2L * 1024 * 1024)
#define CS_XPLAN_CHUNK_BYTES_LL (32L * 1024)
#define CS_XPLAN_CHUNK_BYTES_LL128 576000L

/* One transmission of a tb, as the runtime's parser builds it: the nops before it folded into its
 * dependencies, consecutive re into one destination fused. All fields are plain ints so that the
 * arrays copy to the GPU unchanged. */
struct cs_xplan_step {
    int type;             /* enum cs_step_type, never CS_STEP_NOP */
    int srcbuf, srcoff;   /* local read operand (enum cs_buf, chunk index); 0, 0 when unused */
    int dstbuf, dstoff;   /* local write operand; 0, 0 when unused */
    int cnt;              /* chunks moved */
    int src_first, nsrcs; /* fused re: extra source offsets in plan->srcs[src_first..+nsrcs) */
    int dep_first, ndeps; /* dependencies in plan->deps[dep_first..+ndeps) */
    int hasdep;           /* publish the tb's flag after this transmission */
    int s;                /* XML index of the last step folded in: the flag value */
    int line;             /* XML line of that step, for messages */
};

/* A dependency: global tb index and XML step index in it. */
struct cs_xplan_dep {
    int tb;
    int s;
};

/* One <tb>; global index = position in plan->tbs (ranks in order, tb ids in order). */
struct cs_xplan_tb {
    int rank, id, chan;
    int send_conn, recv_conn; /* connection indices, or -1 */
    int step_first, nsteps;   /* transmissions in plan->steps */
};

/* A directed connection (src rank -> dst rank, channel) with its two tbs (global indices). */
struct cs_xplan_conn {
    int src, dst, chan;
    int send_tb, recv_tb;
};

/* Per rank, buffer sizes in chunks and the in-place aliasing of input and output. */
struct cs_xplan_rank {
    int in_chunks, out_chunks, scratch_chunks; /* allocation sizes */
    int tb_first, ntbs;
    /* In-place collectives share memory between input and output (msccl-tools get_buffer_index):
     * when in_alias >= 0 the input is the output at chunk in_alias; when out_alias >= 0 the
     * output is the input at chunk out_alias. At most one is >= 0. */
    int in_alias, out_alias;
};

struct cs_xplan {
    int nranks, nchunks; /* ngpus, nchunksperloop */
    int proto;           /* enum cs_proto */
    int coll;            /* enum cs_coll */
    int inplace;
    int ntbs, nsteps, ndeps, nsrcs, nconns;
    struct cs_xplan_rank *ranks;
    struct cs_xplan_tb *tbs;
    struct cs_xplan_step *steps;
    struct cs_xplan_dep *deps;
    int *srcs;
    struct cs_xplan_conn *conns;
};

/* How one collective call of a given size runs (msccl.md 3.1). */
struct cs_xplan_sizing {
    long long size_bytes; /* nccl-tests size: nchunks * chunk_elems * elem_bytes */
    long long count;      /* nccl-tests count per rank (elements) */
    long chunk_elems;     /* S: elements per MSCCL chunk */
    long iter_elems;      /* elements of a chunk moved per loop iteration */
    int niters;           /* ceil(S / iter_elems) */
    int max_count;        /* maxAllowedCount: chunks per prim call, 1..71 */
    long max_call_calls;  /* most prim calls any connection carries per iteration */
};

/* Compile a schedule. Checks what the executor relies on: every transmission's operands inside
 * the rank's buffers, dependencies on existing steps of the same rank, nop folding as the
 * runtime's parser accepts it, one tb per (send peer, chan) and per (recv peer, chan), a
 * receiving tb for every sending one. On success stores a new plan in *out (caller frees with
 * cs_xplan_free) and returns 0; otherwise CS_ERR_INVALID or CS_ERR_NOMEM with err set (file:line
 * of the offending XML element when known). */
int cs_xplan_build(const struct cs_sched *sched, struct cs_xplan **out, struct cs_error *err);
void cs_xplan_free(struct cs_xplan *plan);

/* Payload bytes per loop chunk of a protocol (enum cs_proto), or 0 for an invalid one. */
long cs_xplan_proto_chunk_bytes(int proto);
/* FIFO slots per prim call of a protocol. */
int cs_xplan_proto_slots(int proto);

/* The sizing of a call of size_bytes (all ranks' data, nccl-tests convention) with elements of
 * elem_bytes, using iter_bytes of payload per loop chunk (0: the protocol's default). Checks that
 * the size splits into nchunks equal chunks and that every connection's sender and receiver issue
 * the same number of prim calls. 0, or CS_ERR_INVALID with err set. */
int cs_xplan_size(const struct cs_xplan *plan, long long size_bytes, int elem_bytes,
                  long iter_bytes, struct cs_xplan_sizing *out, struct cs_error *err);

/* Prim calls a step issues per iteration: ceil(cnt / max_count). */
int cs_xplan_step_calls(const struct cs_xplan_step *st, int max_count);

/* Whether the collective has a reference result (custom has none). */
int cs_xplan_has_reference(const struct cs_xplan *plan);

/* The value of element e of rank r's input: a small integer, so float sums are exact. */
float cs_xplan_input_value(int rank, long e);

/* Fill rank r's input (in_chunks * chunk_elems floats) with cs_xplan_input_value. */
void cs_xplan_fill_input(const struct cs_xplan *plan, int rank, long chunk_elems, float *in);

/* Expected output of rank r (out_chunks * chunk_elems floats) for the collective, or
 * CS_ERR_USAGE for custom. When the output aliases the input, the expected output covers the
 * output region only. */
int cs_xplan_expect_output(const struct cs_xplan *plan, int rank, long chunk_elems, float *out);

/* Per-rank buffers for the CPU emulation: allocated by cs_xplan_bufs_new, inputs filled,
 * outputs set to NaN, scratch to 0, aliases honoured. */
struct cs_xplan_bufs {
    int nranks;
    long chunk_elems;
    float **in, **out, **scratch; /* per rank; in/out may point into each other */
    float **in_mem, **out_mem;    /* what was allocated (NULL where aliased) */
};
struct cs_xplan_bufs *cs_xplan_bufs_new(const struct cs_xplan *plan, long chunk_elems);
void cs_xplan_bufs_free(struct cs_xplan_bufs *bufs);

/* Compare every rank's output with the reference. Returns the number of wrong elements and
 * describes the first one in err (may be NULL); CS_ERR_USAGE for custom; CS_ERR_NOMEM. */
long cs_xplan_check_output(const struct cs_xplan *plan, const struct cs_xplan_bufs *bufs,
                           struct cs_error *err);

/* Run the plan sequentially on the CPU with the runtime's rules (per-tb program order, dependency
 * flags, 8-slot FIFOs, calls per step) on bufs. Returns 0 when every tb finished, CS_ERR_SIM
 * with err naming a waiting tb when no tb can make progress (deadlock), CS_ERR_NOMEM. */
int cs_xplan_emulate(const struct cs_xplan *plan, const struct cs_xplan_sizing *sz,
                     struct cs_xplan_bufs *bufs, struct cs_error *err);

#ifdef __cplusplus
}
#endif

#endif
