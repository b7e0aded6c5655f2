/* gen.h: native schedule generators (hierarchical, ring, all-pairs) built on lower.h. */
#ifndef CS_GEN_H
#define CS_GEN_H

#include "error.h"
#include "nccl.h"
#include "sched.h"

/* Generator parameters; 0 means "the generator's default". */
struct cs_gen_opts {
    int gpus;
    int columns;   /* hierarchical: GPUs per row (default 2) */
    int instances; /* default 1 */
    int channels;  /* ring: rings (default 1) */
    int per_node;  /* ring: GPUs per node; > 0 rotates ring k inside every node by k (default 0) */
    enum cs_proto proto; /* default Simple */
    int compat;          /* hierarchical: the seed exactly as msccl-tools lowers it, bug included */
    int nops;    /* hierarchical dependence nops: 0 the mode's choice (seed on, corrected off),
                  * 1 on, 2 off */
    int variant; /* hierarchical: 0 split, the default (a send and a receive tb per peer, free
                  * of credit deadlocks), 1 v1 (the corrected seed, one tb per peer, which
                  * deadlocks on the FIFO credits at large sizes) */
    int sms;     /* SMs per GPU: more threadblocks on a GPU than sms x CS_VERIFY_CTAS_PER_SM are
                  * refused (default CS_VERIFY_GPU_SMS, an A100's 108; 132 for an H100 or H200) */
    /* The size window written into <algo> minBytes/maxBytes, inclusive, in bytes of
     * count * type size (the executor's selection rule); max_bytes 0 means no limit. Default
     * 0 and 0, as Azure msccl-tools writes: every size. */
    long long min_bytes;
    long long max_bytes;
    enum cs_coll coll; /* ring, allpairs: the collective (default AllReduce) */
    /* nccl: the size NCCL picks for (nBytes: the whole buffer, as nccl-tests' size column), the
     * version (a cs_nccl_version_parse code; 0: CS_NCCL_DEFAULT_VERSION) and the nodes the GPUs
     * lie on (default 1); channels is then the communicator's (default CS_NCCL_DEFAULT_CHANNELS) */
    long long size_bytes;
    int nccl_version;
    int nodes;
    /* nccl: the algorithm (0: NCCL's choice, cs_nccl_pick_algo) and the machine its model sees
     * (NULL: cs_nccl_machine_default) */
    enum cs_nccl_algo nccl_algo;
    const struct cs_nccl_machine *nccl_machine;
    /* nccl: the machine from the spec's keys (bus, netbus, pci, ll128, cpu), used when
     * nccl_machine is NULL and machine_set is 1 */
    struct cs_nccl_machine machine;
    int machine_set;
    /* nccl: an NCCL INFO log (ncclinfo.h) whose communicator the schedule follows: its ranks
     * (gpus), nodes, channels and version where not given, and its rings' orders */
    const char *nccl_log;
    /* ring: ring k visits rings[(k mod nrings) x gpus ...] in order, each a permutation of the
     * GPUs (NULL: rank order, or per_node) */
    const int *rings;
    int nrings;
    /* ring: write only GPUs 0..R-1 of the schedule, R a divisor of gpus, and prove the others
     * their images under a rank shift (cs_gen_from_spec_reps): CS_GEN_REPS_AUTO when the whole
     * schedule would have more than CS_GEN_MAX_STEPS, CS_GEN_REPS_ALWAYS at every size; 0 never.
     * Other generators write every GPU. */
    int reps;
};

#define CS_GEN_REPS_AUTO 1
#define CS_GEN_REPS_ALWAYS 2

/* The most GPUs a ring written by its representatives may have (1024 for every other schedule),
 * and the most steps its representatives hold together (2^20, about 120 MB to plan). */
#define CS_GEN_MAX_REP_GPUS 8192
#define CS_GEN_REP_STEPS 1048576

/* The most steps a generator writes (2^23): about what the 1 GiB a schedule file may have holds
 * (125 bytes a step), and 3 GB to lower; checked before the lowering. */
#define CS_GEN_MAX_STEPS 8388608

/* The largest minBytes/maxBytes a generator writes (1 TiB). */
#define CS_GEN_MAX_WINDOW_BYTES (1LL << 40)

/* Every generator writes the <algo> header the MSCCL executor requires: inplace, outofplace (its
 * complement), minBytes and maxBytes from opts. */

/* The hierarchical AllReduce of the seed (allreduce_a100_pcie_hierarchical.py): GPUs in a grid of
 * gpus/columns rows, reduce-scatter inside each column, then across each row, all-gather across
 * rows, then inside columns. Default: the corrected algorithm; compat: the seed. 0 or a CS_ERR_*
 * code (CS_ERR_USAGE for parameters that cannot work) with err set; *out is the caller's. */
int cs_gen_hierarchical(const struct cs_gen_opts *opts, struct cs_sched **out,
                        struct cs_error *err);

/* NCCL-style ring: `channels` rings, each over its share of the buffer. AllReduce: reduce-scatter
 * then all-gather; AllGather: G-1 steps of copy-forward; ReduceScatter: G-1 steps of
 * reduce-forward (the first half of the AllReduce); no AllToAll (CS_ERR_USAGE). Ring k visits the
 * GPUs in order 0..G-1, or with per_node = N (dividing G) node by node, starting each node at its
 * GPU k mod N, so ring k leaves a node from its GPU (k + N - 1) mod N: the rings cross nodes
 * through different GPUs and NICs (as NCCL spreads its channels); or in the orders of rings. */
int cs_gen_ring(const struct cs_gen_opts *opts, struct cs_sched **out, struct cs_error *err);

/* The same schedule made the long way, by lowering the ring's program as msccl-tools would
 * (lower.h); cs_gen_ring writes the steps out directly. The tests hold the two equal. */
int cs_gen_ring_lowered(const struct cs_gen_opts *opts, struct cs_sched **out,
                        struct cs_error *err);

/* What NCCL runs for o's collective of o->size_bytes (nccl-a100.md 1.6b): a ring (cs_gen_ring)
 * over the GPUs in order 0..G-1 (with nodes M > 1, node by node, ring k rotated by k inside
 * each node, per_node G/M) on NCCL's channels for that size and protocol, out of the
 * communicator's o->channels (capped at the runtime's 32 channels, 16 when a ring's two phases
 * take a channel each above 32 GPUs); AllToAll, which NCCL runs as point-to-point sends: the
 * all-pairs schedule, Simple. The protocol is o->proto (default Simple): NCCL picks it with a
 * cost model of the machine, which predict --vs-nccl replays. minBytes/maxBytes are the sizes
 * over which NCCL keeps those channels and threads (cs_nccl_window), and the name records the
 * channels, threads and version ("allreduce_nccl_2.12.12_ring_2ch_512thr"): MSCCL XML has no
 * thread count. With nccl_log, the log's communicator where o does not say otherwise (its
 * ranks must be o's GPUs): its nodes, channels, NCCL version (a log of a version the channel
 * rule is not sourced for needs nccl_version), and for the ring its channels' rank orders
 * (channel k of the schedule is the log's ring k). *w (may be NULL) receives the width. 0, or
 * CS_ERR_USAGE with err set. */
int cs_gen_nccl(const struct cs_gen_opts *opts, struct cs_sched **out, struct cs_nccl_width *w,
                struct cs_error *err);

/* All-pairs: every rank talks to every other directly. AllReduce: each rank reduces its 1/G of
 * the buffer from all others, then sends the result to all; AllGather: each rank sends its chunk
 * to every other; ReduceScatter: each rank reduces its chunk from all others; AllToAll: each
 * rank sends its chunk for each peer to that peer. */
int cs_gen_allpairs(const struct cs_gen_opts *opts, struct cs_sched **out, struct cs_error *err);

/* The collective of `gen --coll` and the spec key coll: allreduce, allgather, reducescatter or
 * alltoall; 0 for any other name. */
enum cs_coll cs_gen_coll_parse(const char *name);

/* The hierarchical variant named `name` (split 0, v1 1), or -1. */
int cs_gen_variant_parse(const char *name);

/* Generate from a spec "NAME:key=value,...", NAME in hierarchical, ring, allpairs, nccl; keys
 * gpus, coll (ring, allpairs and nccl), columns, instances, channels, per_node (ring), protocol,
 * compat, nops (1 on, 2 off), variant (hierarchical: split or v1), sms, the sizes (such as 64K)
 * min_bytes and max_bytes, and for nccl size (required), nccl (a version), nodes, algo (ring
 * or tree) and log (an NCCL INFO log: cs_gen_nccl's nccl_log). */
int cs_gen_from_spec(const char *spec, struct cs_sched **out, struct cs_error *err);

/* cs_gen_from_spec, a ring written by its representatives as reps says (cs_gen_opts): the
 * schedule's GPUs rep_gpus.. hold no tb, and every GPU g is the image of GPU g mod rep_shift under
 * the shift by g - g mod rep_shift, proved GPU by GPU as each is written and dropped (peers,
 * channels, steps and dependencies; chunk offsets are not compared, which no replay reads). Such
 * a schedule is for the folded replay only: nothing that reads every GPU (XML, verify, a trace,
 * --no-fold) takes it. */
int cs_gen_from_spec_reps(const char *spec, int reps, struct cs_sched **out, struct cs_error *err);

/* What `nccl:...` spec's schedule runs (cs_gen_nccl's algorithm and width, without writing it):
 * 0 and *w, or CS_ERR_USAGE with err set. */
int cs_gen_nccl_spec_width(const char *spec, struct cs_nccl_width *w, struct cs_error *err);

/* The protocol NCCL's tuning model picks for `nccl:...` spec's collective at its size, with no
 * NCCL_PROTO (cs_nccl_pick on the spec's machine, its algo= when forced; the spec's protocol is
 * ignored): 0 and *proto, or CS_ERR_USAGE with err set. */
int cs_gen_nccl_spec_pick(const char *spec, enum cs_proto *proto, struct cs_error *err);

#endif
