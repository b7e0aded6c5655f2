/* xplan.h: the plan (plan.h) laid out in flat arrays of plain ints for the GPU executor and the CPU
 * emulation, with the buffers, connections and call matching the executor relies on. */
#ifndef CS_XPLAN_H
#define CS_XPLAN_H

#include "error.h"
#include "plan.h"
#include "sched.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    struct cs_plan_sizing run; /* chunk, loop, iterations, maxAllowedCount, as the plan has them */
    long long count;           /* nccl-tests count per rank (elements) */
    long max_call_calls;       /* most prim calls any connection carries per iteration */
};

/* Compile a schedule with cs_plan_compile and lay it out. Checks what the executor relies on: every
 * transmission's operands inside the rank's buffers, dependencies on existing steps of the same
 * rank, nop folding as the runtime's parser accepts it, one tb per (send peer, chan) and per (recv
 * peer, chan), a receiving tb for every sending one. On success stores a new plan in *out (caller
 * frees with cs_xplan_free) and returns 0; otherwise CS_ERR_INVALID or CS_ERR_NOMEM with err set
 * (file:line of the offending XML element when known). */
int cs_xplan_build(const struct cs_sched *sched, struct cs_xplan **out, struct cs_error *err);
void cs_xplan_free(struct cs_xplan *plan);

/* The sizing of a call of size_bytes (all ranks' data, nccl-tests convention) with elements of
 * elem_bytes, using iter_bytes of payload per loop chunk (0: the protocol's default), by
 * cs_plan_sizing_init. Checks also that every connection's sender and receiver issue
 * the same number of prim calls. 0, or CS_ERR_INVALID with err set. */
int cs_xplan_size(const struct cs_xplan *plan, long long size_bytes, int elem_bytes,
                  long iter_bytes, struct cs_xplan_sizing *out, struct cs_error *err);

#ifdef __cplusplus
}
#endif

#endif
