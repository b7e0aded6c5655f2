/* params.h: the timing model's platform parameters (protocol, GPU and link constants), by name.
 *
 * These travel in a SimGrid platform file as <prop id="KEY" value="VALUE"/> on the root zone, are
 * written by `collsim calibrate fit` and `collsim platform`, and read by the replay. Keys:
 *
 *   cs.launch_s                    kernel launch and collective set-up, once per collective (s)
 *   cs.call_s.PROTO.CLASS          fixed cost of one primitive call (credit wait, barrier, flag
 *                                  polling) of protocol PROTO over a link of class CLASS (s)
 *   cs.tb_Bps.PROTO                one threadblock's data throughput through a FIFO (B/s of data)
 *   cs.copy_Bps                    one threadblock's local copy throughput (B/s read+write)
 *   cs.reduce_Bps                  one threadblock's local reduce throughput (B/s of HBM traffic)
 *   cs.link_Bps.CLASS              bandwidth of one link of class CLASS (B/s), used by `platform`
 *   cs.link_lat_s.CLASS            latency of one link of class CLASS (s), used by `platform`
 *   cs.deploy_s                    per-system deployment overhead per collective (container, VM)
 *   cs.sys_Bps                     GPU-to-GPU P2P bandwidth between CPU sockets (B/s), used by
 *                                  `platform` for the inter-socket link of PCIe machines
 *   cs.sys_lat_s                   latency of that inter-socket link (s)
 *
 * PROTO is LL, LL128 or Simple; CLASS is nvlink, pcie or net.
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
};
#define CS_NPROTO 4 /* indexed by enum cs_proto, 0 unused */
#define CS_NLINK 4  /* indexed by enum cs_link_class, 0 unused */

struct cs_params {
    double launch_s;
    double deploy_s;
    double call_s[CS_NPROTO][CS_NLINK];
    double tb_Bps[CS_NPROTO];
    double copy_Bps;
    double reduce_Bps;
    double link_Bps[CS_NLINK];
    double link_lat_s[CS_NLINK];
    double sys_Bps;
    double sys_lat_s;
};

/* The defaults: NCCL's published constants and A100 datasheet figures (sources in params.c). */
void cs_params_init(struct cs_params *p);

/* Set one parameter by key from a decimal string. Unknown keys, non-numbers, negative values and
 * non-finite values are CS_ERR_INVALID (err names the key). */
int cs_params_set(struct cs_params *p, const char *key, const char *value, struct cs_error *err);

/* Get one parameter by key: 0 and *out, or CS_ERR_INVALID for an unknown key. */
int cs_params_get(const struct cs_params *p, const char *key, double *out);

/* Calls fn(key, value, source, ctx) for every parameter in a fixed order; `source` is the comment
 * naming where the default comes from. */
void cs_params_each(const struct cs_params *p,
                    void (*fn)(const char *key, double value, const char *source, void *ctx),
                    void *ctx);

/* Write every parameter as `<prop id=... value=.../>` lines, each after an XML comment naming its
 * source; `note` (may be NULL) replaces the default source comments (e.g. "fit: FILE"). */
int cs_params_write_props(const struct cs_params *p, FILE *fp, const char *indent, const char *note);

const char *cs_link_class_name(enum cs_link_class c);
enum cs_link_class cs_link_class_parse(const char *s);

#endif
