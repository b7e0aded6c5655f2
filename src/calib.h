/* calib.h: which fitted series or segment sets which platform parameter (`collsim calibrate
 * fit`), the values each key collected (several series on one key: their median), and the
 * parameters written back as <prop> lines. The mapping is the one the calibrate usage lists. */
#ifndef CS_CALIB_H
#define CS_CALIB_H

#include <stddef.h>
#include <stdio.h>

#include "fit.h"
#include "params.h"

#define CS_CALIB_MAX_KEYS 48
#define CS_CALIB_MAX_VALS 64

/* A fitted parameter: the values series gave, and how (joined with "; "). */
struct cs_calib_key {
    char key[64];
    double v[CS_CALIB_MAX_VALS];
    int n;
    char how[1024];
};

struct cs_calib {
    struct cs_calib_key keys[CS_CALIB_MAX_KEYS];
    int nkeys;
    FILE *log; /* each value and each series not mapped gets a Markdown line here (may be NULL) */
};

void cs_calib_init(struct cs_calib *c, FILE *log);

/* Add a value of key, found as `how`. Values that are not finite or negative are dropped, as
 * are keys past CS_CALIB_MAX_KEYS and values past CS_CALIB_MAX_VALS. */
void cs_calib_put(struct cs_calib *c, const char *key, double v, const char *how);

/* The key's entry, or NULL. */
const struct cs_calib_key *cs_calib_find(const struct cs_calib *c, const char *key);

/* The median of a key's values. */
double cs_calib_value(const struct cs_calib_key *k);

/* "1.234 us" or "n/a"; "12.3 GB/s", "inf" or "n/a". Return buf. */
const char *cs_calib_fmt_time(double s, char *buf, size_t len);
const char *cs_calib_fmt_bw(double Bps, char *buf, size_t len);

/* The protocol of segment k of m segments fitted to a collective over links of class link
 * (forced: the --proto, 0 for auto): NCCL switches LL, [LL128 on NVLink], Simple as size grows.
 * A lone segment is Simple when its smallest message is 1 MiB or more, else LL. 0: not mapped
 * (a transition regime). */
enum cs_proto cs_calib_seg_proto(enum cs_proto forced, enum cs_link_class link, int k, int m,
                                 double min_msg_bytes);

/* A table of time against ring steps fitted to t = launch + steps * call: cs.launch_s and
 * cs.call_s.PROTO.LINK. */
void cs_calib_map_steps(struct cs_calib *c, const struct cs_fit_line *L, enum cs_proto proto,
                        enum cs_link_class link, const char *file);

/* A ring collective's segmented fit on x = nsteps * S / n bytes per link. */
struct cs_calib_ring {
    const char *file;
    enum cs_link_class link;
    enum cs_proto forced; /* 0: segments in NCCL's order */
    int nsteps, nranks;
    int intercept_deploy;         /* the first intercept gives cs.deploy_s, not cs.call_s */
    const struct cs_params *base; /* launch, deploy and call costs that attribute intercepts */
};

/* Segments to cs.call_s.P.LINK (or cs.deploy_s), the last Simple one to cs.link_Bps.LINK. */
void cs_calib_map_ring(struct cs_calib *c, const struct cs_calib_ring *r,
                       const struct cs_fit_result *R);

/* A harness series: what one test measured. */
struct cs_calib_harness {
    const char *test, *mech, *op;
    long src, dst;           /* device ordinals: equal for a loopback on one GPU */
    long concurrent;         /* flows (protocol pairs) at once */
    long nblocks;            /* threadblocks per flow */
    enum cs_link_class link; /* of src-dst (--link); 0 when not given */
    const char *how;         /* the series, for the comments */
};

/* The harness mapping of the series that are not protocol series: the isolated launch of one
 * threadblock (cs.launch_s; the other launch rows are reported only), local copy and reduce of
 * one threadblock (cs.copy_Bps, cs.reduce_Bps), remote copy (cs.link_Bps) and flag ping-pong
 * (cs.link_lat_s). Whole schedules (test exec) and protocol series are only noted. */
void cs_calib_map_harness(struct cs_calib *c, const struct cs_calib_harness *h,
                          const struct cs_fit_result *R);

/* 1 when the harness mechanism names a protocol (ll, ll8, ll128, simple in any case). */
int cs_calib_is_proto(const char *mech);

/* A protocol series (send_recv of one pair, one threadblock: the others are contended or another
 * operation and are only noted) fitted to t = launch + ops x (call + bytes / rate):
 *   loopback (src == dst): cs.tb_Bps.P = rate; its per-call cost has no link and is only noted;
 *   between GPUs, with 2 or more call counts and a link class: cs.call_s.P.LINK = its per-call
 *   cost - ll_call_s (LL's per-call cost on the same pair, NAN when unknown), for LL128 and
 *   Simple: what P adds to LL's per-hop cost, which is the hop latency (cs.link_lat_s).
 * F->nops == 1: launch and call are not separable (F->call_s NAN); the rate still maps. */
void cs_calib_map_proto(struct cs_calib *c, const struct cs_calib_harness *h,
                        const struct cs_fit_calls *F, double ll_call_s);

/* The parameters as <prop> lines, each after a comment: fitted keys with how they were found,
 * the others with their value in base and its source (omitted when only_fitted). The first line
 * names the inputs. 0, or CS_ERR_IO. */
int cs_calib_write_props(struct cs_calib *c, const struct cs_params *base, int only_fitted,
                         const char *inputs, FILE *fp);

#endif
