/* nccl.h: what NCCL itself runs for a collective (the rule of versions 2.8 to 2.18, later 2.x
 * versions taken with 2.18's): its channels and threads per size and protocol, and the size window
 * over which that choice holds. Plain C. */
#ifndef CS_NCCL_H
#define CS_NCCL_H

#include "error.h"
#include "proto.h"
#include "sched.h"

/* NCCL versions whose channel and thread choice cs_nccl_width reproduces: 2.8.0 up to the last
 * 2.18 (enqueue.cc, the algorithm-info step; ../shared/reference/nccl-a100.md 1.6b). Codes are
 * major x 10000 + minor x 100 + patch, as NCCL_VERSION_CODE from 2.9 on. */
#define CS_NCCL_RULE_MIN 20800
#define CS_NCCL_RULE_END 21900 /* first version past the rule's sources */
/* Versions read: 2.8.0 up to the last 2.x. Those from CS_NCCL_RULE_END on (2.19 and later, what
 * most machines run now) are taken with 2.18's channel and thread rule and tuning model, the
 * newest that the sources cover, and cs_nccl_rule_note says so wherever one is used: the
 * schedule's warnings, predict's and calibrate's reports. A user who knows the version's rule
 * differs names another version (spec key nccl, --nccl). */
#define CS_NCCL_VERSION_END 30000

/* The version compared with when none is named: 2.12.12, the NCCL that MSCCL is built on
 * (nccl-a100.md 0). */
#define CS_NCCL_DEFAULT_VERSION 21212

/* The communicator's channels when none are named: 24, an HGX A100 8-GPU node's ("Channel
 * 23/24" in NVIDIA/nccl-tests#100; nccl-a100.md 2). */
#define CS_NCCL_DEFAULT_CHANNELS 24

/* Read an NCCL version "MAJOR.MINOR" or "MAJOR.MINOR.PATCH" into *code. 0, or CS_ERR_INVALID
 * with err set when it is not one, or lies outside 2.8 to 2.x (CS_NCCL_VERSION_END). */
int cs_nccl_version_parse(const char *s, int *code, struct cs_error *err);

/* Whether version code is past the rule's sources (2.19 on): it is taken with 2.18's rule. */
int cs_nccl_past_rule(int code);

/* What taking a version past the rule's sources means, into buf (len bytes); NULL (buf empty)
 * for a version the rule covers. */
const char *cs_nccl_rule_note(int code, char *buf, size_t len);

/* A version code as "MAJOR.MINOR.PATCH" into buf (len bytes). */
void cs_nccl_version_name(int code, char *buf, unsigned len);

/* NCCL's algorithms for a collective: ring, or (AllReduce) tree: a double binary tree between
 * nodes and a chain inside each node. Starts at 1 so that 0 is "NCCL's choice". */
enum cs_nccl_algo {
    CS_NCCL_ALGO_RING = 1,
    CS_NCCL_ALGO_TREE,
};

/* What NCCL runs one collective with. */
struct cs_nccl_width {
    enum cs_nccl_algo algo; /* ring or tree (0 where NCCL runs neither: AllToAll) */
    int channels;           /* channels (rings) used */
    int threads;            /* data threads per channel (Simple adds one sync warp to these) */
    int max_threads;        /* the protocol's thread count at full width */
};

/* NCCL's channels and threads for a ring collective of nbytes (NCCL's nBytes: the whole buffer,
 * as nccl-tests' size column) over nranks ranks of a communicator of comm_channels channels,
 * with protocol proto, in NCCL version `version` (a code as above). From comm_channels and the
 * protocol's maximum threads (LL 512, LL128 640, Simple 512), while nbytes < channels x threads
 * x threshold: one channel fewer while there are 2 or more, else half the threads while they are
 * a multiple of 128, else stop. Thresholds per thread: LL 8 x nranks, LL128 8, Simple 64 bytes.
 * 0 and *out, or CS_ERR_INVALID with err set (a version outside the rule's, a bad argument). */
int cs_nccl_width(int version, enum cs_proto proto, long long nbytes, int nranks, int comm_channels,
                  struct cs_nccl_width *out, struct cs_error *err);

/* The sizes (nBytes, as cs_nccl_width takes them) over which NCCL keeps the width it picks at
 * nbytes: *lo the least, *hi the largest, or 0 when every larger size keeps it (the full width).
 * 0, or what cs_nccl_width returns. */
int cs_nccl_window(int version, enum cs_proto proto, long long nbytes, int nranks,
                   int comm_channels, long long *lo, long long *hi, struct cs_error *err);

/* ring or tree into *algo: 0, or -1 for another name. */
int cs_nccl_algo_parse(const char *name, enum cs_nccl_algo *algo);
const char *cs_nccl_algo_name(enum cs_nccl_algo algo);

/* cs_nccl_width for algorithm algo: the tree's LL threshold is not multiplied by the ranks
 * (tuning.cc multiplies the ring's only), the rest is the same rule. */
int cs_nccl_algo_width(int version, enum cs_nccl_algo algo, enum cs_proto proto, long long nbytes,
                       int nranks, int comm_channels, struct cs_nccl_width *out,
                       struct cs_error *err);

/* cs_nccl_window for algorithm algo. */
int cs_nccl_algo_window(int version, enum cs_nccl_algo algo, enum cs_proto proto, long long nbytes,
                        int nranks, int comm_channels, long long *lo, long long *hi,
                        struct cs_error *err);

/* NCCL's double binary tree over n nodes (trees.cc ncclGetBtree, ncclGetDtree): tree 0 is a
 * binary tree rooted at node 0, tree 1 its mirror (n even: node i plays n-1-i) or its shift by
 * one (n odd), so that a node inner in one tree is a leaf in the other. *up is the parent of
 * node in tree t (-1 at the root), down[0..1] its children (-1 where none). n >= 1. */
void cs_nccl_dtree(int n, int node, int t, int *up, int down[2]);

/* The machine NCCL's tuning model sees (ncclTopoTuneModel): the bus bandwidth of its graphs in
 * GB/s (nChannels x bw of the search), within a node and between nodes, the kind of the paths
 * within a node and the CPU vendor (LL's cap between nodes depends on it). */
struct cs_nccl_machine {
    double intra_GBps; /* nChannels x bwIntra */
    double inter_GBps; /* nChannels x bwInter (nodes > 2 use it) */
    int intra_pci;     /* 1: paths within a node are PCIe (hwLat PCI), else NVLink */
    int intel;         /* 1: Intel CPUs, else AMD (llMaxBws between nodes) */
    int no_ll128;      /* 1: NCCL keeps LL128 off (tuning.cc enables it by default only where the
                        * paths within a node are NVLink and each GPU's NIC is behind its PCIe
                        * switch, PATH_PXB at most; nccl-a100.md 1.5) */
};

/* An HGX A100 node of 8 GPUs joined by NVSwitch (12 NVLink x SM80_NVLINK_BW 20 GB/s = 240 GB/s,
 * nccl-a100.md 1.4) with one 200 Gb/s HDR NIC per GPU (24 GB/s each, 8 per node = 192 GB/s,
 * nccl-a100.md 2), on AMD EPYC (DGX A100, NDv4): what gen nccl models when no platform is
 * named. */
void cs_nccl_machine_default(struct cs_nccl_machine *m, int gpus_per_node);

/* What the collective coll (AllReduce, AllGather or ReduceScatter) of nbytes takes with algo and
 * proto over nranks ranks on nnodes nodes and comm_channels channels, in NCCL's own model
 * (tuning.cc ncclTopoTuneModel and ncclTopoGetAlgoTime of 2.12.12; 2.13 to 2.18 with 2.18.3's
 * base latencies and Tree Simple hardware latencies; nccl-a100.md 1.1-1.3), in us: *time_us, or
 * -1 where NCCL does not run that algorithm (a tree for anything but AllReduce). 0, or
 * CS_ERR_INVALID with err set. */
int cs_nccl_model_time(int version, const struct cs_nccl_machine *m, enum cs_coll coll,
                       enum cs_nccl_algo algo, enum cs_proto proto, long long nbytes, int nranks,
                       int nnodes, int comm_channels, double *time_us, struct cs_error *err);

/* NCCL's algorithm for the collective at nbytes with protocol proto (NCCL_PROTO=proto): the one of
 * least cs_nccl_model_time, the tree on a tie (NCCL_ALGO_TREE is 0, first in getAlgoInfo's loop,
 * which keeps the first strict minimum). The tree is weighed for AllReduce across nodes (nnodes
 * > 1) only: otherwise the ring. */
int cs_nccl_pick_algo(int version, const struct cs_nccl_machine *m, enum cs_coll coll,
                      enum cs_proto proto, long long nbytes, int nranks, int nnodes,
                      int comm_channels, enum cs_nccl_algo *algo, struct cs_error *err);

/* NCCL's algorithm and protocol for the collective at nbytes (no NCCL_ALGO or NCCL_PROTO set):
 * the pair of least cs_nccl_model_time over the algorithms cs_nccl_pick_algo weighs (only `only`
 * when it is not 0) and the protocols NCCL enables (LL128 unless m->no_ll128), the first of equal
 * times in getAlgoInfo's order (tree before ring, LL before LL128 before Simple). 0 and *algo,
 * *proto, or CS_ERR_INVALID with err set. */
int cs_nccl_pick(int version, const struct cs_nccl_machine *m, enum cs_coll coll, long long nbytes,
                 int nranks, int nnodes, int comm_channels, enum cs_nccl_algo only,
                 enum cs_nccl_algo *algo, enum cs_proto *proto, struct cs_error *err);

#endif
