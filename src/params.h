/* params.h: the timing model's platform parameters (protocol, GPU and link constants), by name.
 *
 * These travel in a SimGrid platform file as <prop id="KEY" value="VALUE"/> on the root zone, are
 * written by `collsim calibrate fit` and `collsim platform`, and read by the replay. Keys:
 *
 *   cs.launch_s                    kernel launch and collective set-up, once per collective (s)
 *   cs.launch_gpu_s                host time for one process to launch the collective on one more
 *                                  of its GPUs (s): with cs.gpus_per_process = G, the kernel of
 *                                  its k-th GPU (k = gpu mod G) starts k x this later
 *   cs.gpus_per_process            GPUs one process drives (nccl-tests -g G); 1: one process per
 *                                  GPU (mpirun, MSCCL deployments)
 *   cs.call_s.PROTO.CLASS          what a call of protocol PROTO costs on a hop of class CLASS
 *                                  beyond the hop latency (LL128 lines, Simple's fence and
 *                                  head/tail handshake), once per sending call (s)
 *   cs.prologue_s                  an MSCCL executor threadblock's start: loading its step table
 *                                  (mscclThreadBlock) into shared memory before its first step (s)
 *   cs.dep_s                       a transmission that waited on dependency flags: the last poll of
 *                                  another threadblock's flag, a round trip within the GPU (s)
 *   cs.barrier_s                   the block barrier (bar.sync of the CTA's threads) after such a
 *                                  wait and before a flag is published (s)
 *   cs.flag_s                      publishing a flag after a hasdep step: the store (with the
 *                                  fence the executor issues), before other threadblocks see it (s)
 *                                  (prologue, dependency, barrier and flag: the MSCCL executor's
 *                                  own costs, not charged to NCCL's kernels, gen nccl)
 *   cs.tb_Bps.PROTO                one threadblock's data throughput through a FIFO (B/s of data)
 *   cs.pass_bytes.PROTO            the data a threadblock's threads move in one pass over their
 *                                  lines at the protocol's full threads (B): a streamed unit
 *                                  reaches the next hop a pass at a time (0: line by line)
 *   cs.pass_s.PROTO                the fixed part of one pass (the poll of a line's flag, a round
 *                                  trip to memory), whatever its threads (s): with it, a CTA of
 *                                  fewer threads makes smaller passes at the same line rate
 *                                  (cs.tb_Bps), so its rate is 1 / (1/tb_Bps + pass_s /
 *                                  pass_bytes); 0: its rate is in proportion to its threads
 *   cs.copy_Bps                    one threadblock's local copy throughput (B/s read+write)
 *   cs.reduce_Bps                  one threadblock's local reduce throughput (B/s of HBM traffic)
 *   cs.link_Bps.CLASS              bandwidth of one link of class CLASS (B/s), used by `platform`
 *   cs.link_lat_s.CLASS            latency of one hop (GPU to GPU) whose slowest link is of class
 *                                  CLASS (s), once per unit on the connection
 *   cs.link_eff.PROTO.CLASS        the share of a CLASS link's bandwidth that PROTO's stores get
 *                                  (its wire bytes take 1 / this of the link; 0 means 1)
 *   cs.deploy_s                    per-system deployment overhead per collective (container, VM)
 *   cs.sys_Bps                     GPU-to-GPU P2P bandwidth between CPU sockets (B/s), used by
 *                                  `platform` for the inter-socket link of PCIe machines
 *   cs.sys_lat_s                   latency of that inter-socket link (s)
 *   cs.gpu_sms                     streaming multiprocessors per GPU (a whole number)
 *   cs.ctas_per_sm                 MSCCL kernel CTAs (threadblocks) co-resident on one SM (a
 *                                  whole number); the two bound the threadblocks per GPU
 *   cs.ranks_per_gpu               ranks sharing one physical GPU (a whole number; 1, or N on a
 *                                  virtual-rank platform): ranks k*N .. k*N+N-1 are one GPU, whose
 *                                  SMs hold all their threadblocks
 *
 * PROTO is LL, LL128 or Simple; CLASS is nvlink, pcie, net or hbm (ranks on one GPU).
 */
#ifndef CS_PARAMS_H
#define CS_PARAMS_H

#include <stdio.h>

#include "error.h"
#include "sched.h"

enum cs_link_class {
    CS_LINK_NVLINK = 1, /* NVLink bridge or NVSwitch */
    CS_LINK_PCIE,       /* PCIe, through a switch or the CPU root complex */
    CS_LINK_NET,        /* InfiniBand or RoCE between nodes */
    CS_LINK_HBM,        /* no link: ranks sharing one GPU meet in its memory (virtual ranks) */
};
#define CS_NPROTO 4 /* indexed by enum cs_proto, 0 unused */
#define CS_NLINK 5  /* indexed by enum cs_link_class, 0 unused */

struct cs_params {
    double launch_s;
    double deploy_s;
    double launch_gpu_s;
    double gpus_per_process;
    double call_s[CS_NPROTO][CS_NLINK];
    double prologue_s;
    double dep_s;
    double barrier_s;
    double flag_s;
    double tb_Bps[CS_NPROTO];
    double pass_bytes[CS_NPROTO];
    double pass_s[CS_NPROTO];
    double copy_Bps;
    double reduce_Bps;
    double link_Bps[CS_NLINK];
    double link_lat_s[CS_NLINK];
    double link_eff[CS_NPROTO][CS_NLINK];
    double sys_Bps;
    double sys_lat_s;
    double gpu_sms; /* whole numbers, at least 1 (cs_params_set checks) */
    double ctas_per_sm;
    double ranks_per_gpu;
};

/* The defaults: NCCL's published constants and A100 datasheet figures (sources in params.c). */
void cs_params_init(struct cs_params *p);

/* Protocol q's threadblock narrowed (or widened) to threads of its max_threads (NCCL's fewer
 * threads at small sizes; the MSCCL executor's 640 LL threads against NCCL's 512): its pass
 * (cs.pass_bytes) in proportion to the threads; its line rate (cs.tb_Bps) too when its pass has
 * no fixed part (cs.pass_s 0), else in proportion to its warps up to four (an SM's processing
 * blocks: fewer warps leave some idle), the passes' latency setting the rest of the rate. */
void cs_params_narrow(struct cs_params *p, enum cs_proto q, int threads, int max_threads);

/* The GPUs one process drives (cs.gpus_per_process, at least 1): the process of GPU g is
 * g / that, in rank order. */
int cs_params_gpus_per_process(const struct cs_params *p);

/* A CTA's data rate with protocol q (B/s): 1 / (1/tb_Bps + pass_s / pass_bytes), tb_Bps when
 * the pass has no fixed part or no size; 0 when tb_Bps is 0 (unlimited). */
double cs_params_cta_Bps(const struct cs_params *p, enum cs_proto q);

/* The time one pass of b data bytes takes to reach the next hop with protocol q (s): pass_s +
 * min(b, pass_bytes) / tb_Bps; 0 when q has no pass (pass_bytes 0). */
double cs_params_pass_time(const struct cs_params *p, enum cs_proto q, double b);

/* Set one parameter by key from a decimal string. Unknown keys, non-numbers, negative values and
 * non-finite values are CS_ERR_INVALID (err names the key). */
int cs_params_set(struct cs_params *p, const char *key, const char *value, struct cs_error *err);

/* Whether v is within what the hardware allows for key, by its unit: a time (keys ending in _s)
 * from 0 to 1 s, a bandwidth (_Bps) from 1 kB/s to 1 PB/s, pass_bytes up to 1 GiB, a count up
 * to 2^20; 1 for other keys. cs_params_set refuses values outside it; cs_params_range says it
 * in words, for messages. */
int cs_params_in_range(const char *key, double v);
const char *cs_params_range(const char *key);

/* Get one parameter by key: 0 and *out, or CS_ERR_INVALID for an unknown key. */
int cs_params_get(const struct cs_params *p, const char *key, double *out);

/* Calls fn(key, value, source, ctx) for every parameter in a fixed order; `source` is the comment
 * naming where the default comes from. */
void cs_params_each(const struct cs_params *p,
                    void (*fn)(const char *key, double value, const char *source, void *ctx),
                    void *ctx);

/* Sources of parameters that were set from a file rather than left at their defaults. */
#define CS_MAX_PARAM_NOTES 64
struct cs_param_notes {
    int n;
    char key[CS_MAX_PARAM_NOTES][64];
    char text[CS_MAX_PARAM_NOTES][512];
};

/* The source comment recorded for key, or NULL (notes may be NULL). */
const char *cs_param_notes_get(const struct cs_param_notes *notes, const char *key);

/* Record text as key's source (replacing an earlier one); 0, or -1 when notes are full. */
int cs_param_notes_put(struct cs_param_notes *notes, const char *key, const char *text);

/* Read a props file, the form `collsim calibrate fit` writes: lines
 * `<!-- SOURCE -->` and `<prop id="KEY" value="V"/>`, blank lines, and `#` comment lines. Each
 * prop sets KEY in p; the comment lines right before it (joined) are its source, recorded in notes
 * (may be NULL), else "PATH". A later prop of the same key wins. Anything else, unknown keys and
 * bad values are CS_ERR_INVALID with path:line; an unreadable file is CS_ERR_IO. */
int cs_params_read_props(struct cs_params *p, const char *path, struct cs_param_notes *notes,
                         struct cs_error *err);

const char *cs_link_class_name(enum cs_link_class c);
enum cs_link_class cs_link_class_parse(const char *s);

/* Whether class a is slower than class b (hbm < nvlink < pcie < net; 0, no class, below all): a
 * route's hop takes the latency of its slowest class. */
int cs_link_class_slower(enum cs_link_class a, enum cs_link_class b);

#endif
