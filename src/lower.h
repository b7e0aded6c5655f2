/* lower.h: lower a program of chunk moves (the MSCCLang model) to an MSCCL schedule, as msccl-tools
 * does. */
#ifndef CS_LOWER_H
#define CS_LOWER_H

#include "error.h"
#include "sched.h"

/* The program-wide settings, the arguments of msccl-tools' MSCCLProgram. */
struct cs_prog_opts {
    const char *name;    /* algo name */
    enum cs_coll coll;   /* collective written in the XML */
    int ngpus;           /* ranks */
    int in_chunks;       /* input buffer chunks per rank, one instance */
    int out_chunks;      /* output buffer chunks per rank, one instance (0: none, in place) */
    int inplace;         /* the algo's inplace attribute; an in-place AllGather's input is the
                          * rank's slice of the output (out_chunks = ngpus * in_chunks) */
    enum cs_proto proto; /* protocol */
    int instances;       /* replicas, each on its own channels and threadblocks (>= 1) */
    int interleaved;     /* replicate chunk k to k*instances+i (else to len*i+k) */
    int fusion;          /* fuse into rcs, rrs, rrcs */
    int dependence_nop;  /* hoist the dependencies of local reduces into nops before the first */
};

/* A reference to `size` consecutive chunks of one buffer of one rank, from `index`. */
struct cs_ref {
    int rank;
    enum cs_buf buf;
    int index;
    int size;
};

struct cs_prog;

/* A new empty program, or NULL on OOM or invalid options (ngpus < 1, instances < 1, no buffer). */
struct cs_prog *cs_prog_new(const struct cs_prog_opts *opts);
void cs_prog_free(struct cs_prog *prog);

/* Copy src to dst, like chunk(src).copy(dst): a send on src.rank and a receive on dst.rank (on
 * threadblocks sendtb and recvtb, as msccl-tools' manual tb policy; channel ch, -1 for none), or a
 * local copy on sendtb. A copy of a reference onto itself does nothing. Returns 0, or a CS_ERR_*
 * code after recording the first failure in the program (then cs_prog_lower reports it). */
int cs_prog_copy(struct cs_prog *prog, struct cs_ref src, struct cs_ref dst, int sendtb, int recvtb,
                 int ch);

/* dst = dst + src, like chunk(dst).reduce(chunk(src)): a send on src.rank and a receive-reduce-copy
 * on dst.rank, or a local reduce on sendtb. Same returns as cs_prog_copy. */
int cs_prog_reduce(struct cs_prog *prog, struct cs_ref dst, struct cs_ref src, int sendtb,
                   int recvtb, int ch);

/* Lower the program: instruction DAG, fusion, instruction order, threadblock assignment,
 * dependencies, instance replication, threadblock sort and renumbering, dependency pruning, nops.
 * Stores a new schedule in *out (caller frees) and returns 0, or returns a CS_ERR_* code with err
 * set. The program may be lowered once. */
int cs_prog_lower(struct cs_prog *prog, struct cs_sched **out, struct cs_error *err);

/* Check a schedule against the executor's limits that the simulator shares (channels, tbs per
 * GPU, connections per channel, cnt, depid, offsets): 0, or CS_ERR_INVALID with the first
 * violation in err. Steps per tb are not among them: a longer tb is a what-if
 * (cs_sched_steps_warning). */
int cs_sched_check_limits(const struct cs_sched *sched, struct cs_error *err);

#endif
