/* nccl.h: what NCCL itself runs for a collective (versions 2.8 to 2.18): its channels and threads
 * per size and protocol, and the size window over which that choice holds. Plain C. */
#ifndef CS_NCCL_H
#define CS_NCCL_H

#include "error.h"
#include "proto.h"

/* NCCL versions whose channel and thread choice cs_nccl_width reproduces: 2.8.0 up to the last
 * 2.18 (enqueue.cc, the algorithm-info step; ../shared/reference/nccl-a100.md 1.6b). Codes are
 * major x 10000 + minor x 100 + patch, as NCCL_VERSION_CODE from 2.9 on. */
#define CS_NCCL_RULE_MIN 20800
#define CS_NCCL_RULE_END 21900 /* first version not covered */

/* The version compared with when none is named: 2.12.12, the NCCL that MSCCL is built on
 * (nccl-a100.md 0). */
#define CS_NCCL_DEFAULT_VERSION 21212

/* The communicator's channels when none are named: 24, an HGX A100 8-GPU node's ("Channel
 * 23/24" in NVIDIA/nccl-tests#100; nccl-a100.md 2). */
#define CS_NCCL_DEFAULT_CHANNELS 24

/* Read an NCCL version "MAJOR.MINOR" or "MAJOR.MINOR.PATCH" into *code. 0, or CS_ERR_INVALID
 * with err set when it is not one, or lies outside the versions the rule is sourced for. */
int cs_nccl_version_parse(const char *s, int *code, struct cs_error *err);

/* A version code as "MAJOR.MINOR.PATCH" into buf (len bytes). */
void cs_nccl_version_name(int code, char *buf, unsigned len);

/* What NCCL runs one ring collective with. */
struct cs_nccl_width {
    int channels;    /* channels (rings) used */
    int threads;     /* data threads per channel (Simple adds one sync warp to these) */
    int max_threads; /* the protocol's thread count at full width */
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

#endif
