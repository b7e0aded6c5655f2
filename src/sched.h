/* sched.h: the in-memory MSCCL schedule, one to one with the XML (algo, gpu, tb, step). */
#ifndef CS_SCHED_H
#define CS_SCHED_H

#include <stdio.h>

#include "proto.h"

/* Runtime limits of the MSCCL executor (Azure/msccl-executor-nccl; see shared reference
 * msccl.md 1.2, 2.4); the protocol's own limits are in proto.h. The steps per threadblock bound
 * the runtimes only: verify reports a tb over them, predict simulates it as a what-if with a
 * warning, and the schedule, its lowering, plan and replay take any number. */
#define CS_MAX_CHANNELS 32      /* chan < 32 */
#define CS_MAX_STEPS 64         /* s < 64 (MSCCL_MAX_NUM_STEPS, executor build default) */
#define CS_MAX_STEPS_LEGACY 256 /* s < 256 in the legacy runtime */
#define CS_MAX_TBS 1024         /* tbs per GPU (32 x MAXCHANNELS) */
#define CS_MAX_DEPID 127        /* depid is an int8_t */

enum cs_coll {
    CS_COLL_ALLREDUCE = 1,
    CS_COLL_ALLGATHER,
    CS_COLL_REDUCE_SCATTER,
    CS_COLL_ALLTOALL,
    CS_COLL_CUSTOM,
};

enum cs_step_type {
    CS_STEP_S = 1, /* send */
    CS_STEP_R,     /* receive */
    CS_STEP_RCS,   /* receive, copy, send */
    CS_STEP_RRC,   /* receive, reduce, copy */
    CS_STEP_RRS,   /* receive, reduce, send */
    CS_STEP_RRCS,  /* receive, reduce, copy, send */
    CS_STEP_CPY,   /* local copy */
    CS_STEP_RE,    /* local reduce */
    CS_STEP_NOP,   /* dependency carrier */
};

enum cs_buf {
    CS_BUF_INPUT = 1, /* "i" */
    CS_BUF_OUTPUT,    /* "o" */
    CS_BUF_SCRATCH,   /* "s" */
};

/* 32 bytes: a large schedule has millions (the 1024-GPU hierarchical AllReduce 2.3 million); the
 * enums and hasdep (0 or 1) share one word. */
struct cs_step {
    int s; /* index in the tb, counting nops */
    int srcoff;
    int dstoff;
    int cnt;
    int depid; /* tb id of the cross-tb dependency, or -1 */
    int deps;  /* step index in tb depid, or -1 */
    int line;  /* source line of the <step>, 0 when generated */
    enum cs_step_type type : 8;
    enum cs_buf srcbuf : 8;
    enum cs_buf dstbuf : 8;
    unsigned hasdep : 8;
};

struct cs_tb {
    int id;
    int send; /* peer rank, or -1 */
    int recv; /* peer rank, or -1 */
    int chan;
    int nsteps;
    int cap_steps;
    struct cs_step *steps;
    int line;
};

struct cs_gpu {
    int id;
    int i_chunks;
    int o_chunks;
    int s_chunks;
    int ntbs;
    int cap_tbs;
    struct cs_tb *tbs;
    int line;
};

/* A problem the reader tolerated (an unknown attribute, which the runtimes ignore): its file line
 * and message, reported by verify and info as warnings. */
struct cs_sched_warning {
    int line;
    char *msg;
};

/* Reader warnings kept per schedule; the rest are only counted. */
#define CS_SCHED_MAX_WARNINGS 64

struct cs_sched {
    char *name;
    enum cs_proto proto;
    int nchannels;
    int nchunksperloop;
    int ngpus;
    enum cs_coll coll;
    int coll_exec_spelling; /* reduce-scatter written "reducescatter" (executor) not
                               "reduce_scatter" */
    int inplace;
    int has_outofplace; /* Azure msccl-tools adds outofplace, minBytes, maxBytes */
    int outofplace;
    int has_min_bytes;
    long long min_bytes;
    int has_max_bytes;
    long long max_bytes;
    int nccl_kernel;      /* 1: what NCCL's own kernels run (gen nccl), replayed without the MSCCL
                           * executor's own costs (its prologue, dependency flags); 0: an MSCCL
                           * schedule, run by the executor. Not written to XML: a file read back is
                           * an MSCCL schedule. */
    int nccl_threads;     /* with nccl_kernel: NCCL's data threads per channel at the size it */
    int nccl_max_threads; /* was made for, and its protocol's at full width (0: full width) */
    /* A ring written by its representatives (gen.h cs_gen_from_spec_reps): only GPUs
     * 0..rep_gpus-1 hold tbs, each GPU g being the image of GPU g mod rep_shift under the rank
     * shift by g - g mod rep_shift; 0 and 0 for a whole schedule. */
    int rep_gpus, rep_shift;
    int ngpus_alloc; /* gpus[] entries in use (== ngpus once complete) */
    int cap_gpus;
    struct cs_gpu *gpus;
    int line;
    char *path;    /* where it was read from, for messages; NULL when generated */
    int nwarnings; /* reader warnings, counting those not kept */
    int nwarnings_kept;
    struct cs_sched_warning warnings[CS_SCHED_MAX_WARNINGS];
};

/* One cross-tb dependency: wait until tb `tb` of the same GPU has passed step `step`. */
struct cs_dep {
    int tb;
    int step;
};

/* A new empty schedule (proto Simple, coll allreduce, nothing else set). Caller frees. NULL on OOM.
 */
struct cs_sched *cs_sched_new(void);
void cs_sched_free(struct cs_sched *sched);

/* Set the algo name (copied). 0 or CS_ERR_NOMEM. */
int cs_sched_set_name(struct cs_sched *sched, const char *name);

/* Record a reader warning at file line `line` (kept while fewer than CS_SCHED_MAX_WARNINGS are,
 * counted always). 0 or CS_ERR_NOMEM. */
int cs_sched_add_warning(struct cs_sched *sched, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append a zeroed GPU / tb / step and return it, or NULL on OOM. The pointer stays valid until the
 * next append to the same parent array. Ids and indices are left for the caller to set. */
struct cs_gpu *cs_sched_add_gpu(struct cs_sched *sched);
struct cs_tb *cs_gpu_add_tb(struct cs_gpu *gpu);
struct cs_step *cs_tb_add_step(struct cs_tb *tb);

/* Give back the room the add functions kept for growth (their arrays double): a schedule read
 * whole holds its steps exactly. */
void cs_sched_shrink(struct cs_sched *sched);

/* The same for one tb's steps, once they are all added. */
void cs_tb_shrink(struct cs_tb *tb);

/* The gpu with this id, or NULL. */
struct cs_gpu *cs_sched_find_gpu(const struct cs_sched *sched, int id);
/* The tb with this id, or NULL. */
struct cs_tb *cs_gpu_find_tb(const struct cs_gpu *gpu, int id);

/* The dependency set of step `i` of tb as the runtime sees it: the (depid, deps) of the nops just
 * before it plus its own. Writes at most `max` entries to out and returns how many there are (may
 * exceed max). Nops themselves have no set of their own: returns 0 for a nop. */
int cs_tb_step_deps(const struct cs_tb *tb, int i, struct cs_dep *out, int max);

/* Names as written in the XML; NULL for an invalid value. */
const char *cs_coll_name(enum cs_coll coll);
const char *cs_proto_name(enum cs_proto proto);
const char *cs_step_type_name(enum cs_step_type type);
char cs_buf_char(enum cs_buf buf);

/* Parse the XML spellings; return 0 when unknown. cs_coll_parse accepts reduce_scatter and
 * reducescatter, and sets *exec_spelling (may be NULL) to 1 for the latter. */
enum cs_coll cs_coll_parse(const char *s, int *exec_spelling);
enum cs_proto cs_proto_parse(const char *s);
enum cs_step_type cs_step_type_parse(const char *s);
enum cs_buf cs_buf_parse(const char *s);

/* Step-type properties, inline so that the harness's device code uses them too. */
static inline CS_HOST_DEVICE int cs_step_sends(enum cs_step_type t) /* s, rcs, rrs, rrcs */
{
    return t == CS_STEP_S || t == CS_STEP_RCS || t == CS_STEP_RRS || t == CS_STEP_RRCS;
}

static inline CS_HOST_DEVICE int cs_step_recvs(enum cs_step_type t) /* r, rcs, rrc, rrs, rrcs */
{
    return t == CS_STEP_R || t == CS_STEP_RCS || t == CS_STEP_RRC || t == CS_STEP_RRS ||
           t == CS_STEP_RRCS;
}

static inline CS_HOST_DEVICE int cs_step_reduces(enum cs_step_type t) /* rrc, rrs, rrcs, re */
{
    return t == CS_STEP_RRC || t == CS_STEP_RRS || t == CS_STEP_RRCS || t == CS_STEP_RE;
}

/* Reads the local srcbuf: s, rrc, rrs, rrcs, cpy, re. */
static inline CS_HOST_DEVICE int cs_step_reads_src(enum cs_step_type t)
{
    return t == CS_STEP_S || t == CS_STEP_RRC || t == CS_STEP_RRS || t == CS_STEP_RRCS ||
           t == CS_STEP_CPY || t == CS_STEP_RE;
}

/* Writes the local dstbuf: r, rcs, rrc, rrcs, cpy, re. */
static inline CS_HOST_DEVICE int cs_step_writes_dst(enum cs_step_type t)
{
    return t == CS_STEP_R || t == CS_STEP_RCS || t == CS_STEP_RRC || t == CS_STEP_RRCS ||
           t == CS_STEP_CPY || t == CS_STEP_RE;
}

/* Number of steps over all GPUs and tbs. */
long cs_sched_count_steps(const struct cs_sched *sched);

/* The tb with the most steps, if it has more than `limit` (such as CS_MAX_STEPS), else NULL; the
 * first such in gpu and tb order. *gpu (may be NULL) receives its GPU's id. */
const struct cs_tb *cs_sched_find_tb_over(const struct cs_sched *sched, int limit, int *gpu);

/* A warning for a schedule over the executor's steps per threadblock (its longest tb, count and
 * both runtimes' limits) into buf, returning buf; NULL (buf untouched) when every tb is within
 * CS_MAX_STEPS. */
const char *cs_sched_steps_warning(const struct cs_sched *sched, char *buf, size_t len);

#endif
