/* ncclinfo.h: what an NCCL_DEBUG=INFO log says about the run and the machine: NCCL's version, the
 * communicator's ranks, nodes and channels, each ring's rank order and each rank's trees, the
 * transports of its connections (P2P read or write, shared memory, the network with GPUDirect
 * RDMA or staged through the host), the NICs it used, the GPUs the nccl-tests banner names, and
 * the nccl-tests table when the log holds one. Plain C.
 *
 * For the calibration (cmd_calibrate.c) and anything else that takes a log as ground truth:
 *
 *     struct cs_ncclinfo *log;
 *     if (cs_ncclinfo_read(path, &log, &err) == 0) {
 *         log->version        NCCL_VERSION_CODE (2.9.9 -> 20909), 0 when not printed
 *         log->nranks         the communicator's ranks; log->nnodes its nodes; 0 when unknown
 *         log->nchannels      its collective channels (rings)
 *         cs_ncclinfo_ring(log, k)  ring k's ranks in order (nranks of them), NULL when unread
 *         log->table          the nccl-tests rows (cs_meas_read's table), NULL when none
 *         cs_ncclinfo_free(log);
 *     }
 *
 * A log is any text: lines of other programs are skipped, and so are the prefixes launchers put
 * before NCCL's (cs_meas_line_body; "host:pid:tid [dev] NCCL INFO" is NCCL's own). Only the
 * first communicator is read (the first rank count seen in a "comm ... nRanks" line or a ring);
 * lines of others (another size, or a ring printed again in another order) are counted in
 * other_lines. */
#ifndef CS_NCCLINFO_H
#define CS_NCCLINFO_H

#include <stdio.h>

#include "csv.h"
#include "error.h"

/* Most ranks, hosts, channels and NIC ports a log may describe. */
#define CS_NCCLINFO_MAX_RANKS 4096
#define CS_NCCLINFO_MAX_HOSTS 1024
#define CS_NCCLINFO_MAX_CHANNELS 64 /* NCCL's MAXCHANNELS (2.13 on) */
#define CS_NCCLINFO_MAX_NETS 64
/* Largest log read, in bytes. */
#define CS_NCCLINFO_MAX_BYTES (64L * 1024 * 1024)

/* How a connection between two ranks moves its data ("via ..." in a Channel line). */
enum cs_ncclinfo_via {
    CS_VIA_P2P_WRITE = 1, /* P2P/IPC, P2P/direct pointer, P2P/CUMEM: the sender writes */
    CS_VIA_P2P_READ,      /* .../read: the receiver reads the sender's buffer */
    CS_VIA_SHM,           /* shared host memory */
    CS_VIA_NET_GDR,       /* the network, the NIC reading and writing GPU memory (GDRDMA) */
    CS_VIA_NET_HOST,      /* the network, staged through host memory */
    CS_VIA_COLLNET,       /* CollNet or NVLS (NCCL's in-network or NVSwitch reductions) */
};
#define CS_NCCLINFO_NVIA 7

/* A connection the log names: ranks, channel, transport, NET device (-1 for others), line. */
struct cs_ncclinfo_conn {
    int from, to, channel;
    enum cs_ncclinfo_via via;
    int net_dev;
    int send; /* 1 [send], 0 [receive], -1 neither (a connection within a node) */
    int line;
};

/* What the log says of one rank (-1 or "" where it says nothing). */
struct cs_ncclinfo_rank {
    int host;                /* index into hosts */
    int cuda_dev;            /* its CUDA device */
    char busid[16];          /* its GPU's PCI bus id, "0000:10:1c.0" */
    char gpu[64];            /* the GPU's name in nccl-tests' banner ("A100-SXM4-40GB") */
    int gpu_line;            /* that line, 0 when none */
    char affinity[96];       /* "Setting affinity for GPU N to MASK" */
    unsigned long long nets; /* the NET devices (bits 0..63) of its network connections */
    int net_line;            /* the first line naming one */
    int line;                /* the first line that names the rank */
};

/* One port of the network NCCL uses ("NET/IB : Using [0]mlx5_0:1/IB"). */
struct cs_ncclinfo_net {
    int dev;       /* NCCL's net device index */
    char name[32]; /* mlx5_0, eth0 */
    int port;      /* 1, or 0 when not printed */
    char kind[16]; /* IB, RoCE, or "" */
    int line;
};

struct cs_ncclinfo {
    char *path;
    int version;           /* NCCL_VERSION_CODE: major x 10000 + minor x 100 + patch */
    char version_text[40]; /* as printed, "2.9.9+cuda11.2" */
    int version_line;
    int nranks, nnodes, local_ranks; /* 0 when unknown (nnodes from hosts when not printed) */
    int comm_line;                   /* the line that gave nranks */
    int nchannels;                   /* collective channels ("8 coll channels", "Channel 00/08") */
    int channels_line;
    int nrings; /* rings read: ring k for k < nrings when ring_line[k] > 0 */
    int *rings; /* CS_NCCLINFO_MAX_CHANNELS rings of nranks ranks */
    int ring_line[CS_NCCLINFO_MAX_CHANNELS];
    int *trees;     /* per rank and channel: up, down[3] (-1 none); -2 where not printed */
    int ntrees;     /* channels with a tree line of some rank */
    int tree_ranks; /* ranks with a Trees line */
    struct cs_ncclinfo_rank *ranks; /* nranks of them */
    int nhosts;
    char (*hosts)[64];
    char network[40]; /* "IB", "Socket", "AWS Libfabric", from "Using network" or the NET lines */
    int nnets;
    struct cs_ncclinfo_net nets[CS_NCCLINFO_MAX_NETS];
    int nvia[CS_NCCLINFO_NVIA]; /* connections of each transport */
    int nconns;
    struct cs_ncclinfo_conn *conns;
    int nvls;             /* "NVLS multicast support is available": NVSwitch with NVLS */
    int other_lines;      /* lines of another communicator, skipped */
    struct cs_csv *table; /* the nccl-tests rows (cs_meas_read_raw), NULL when none */
    int info_lines;       /* lines read as NCCL's */
};

/* Read an NCCL INFO log from path ("-" for stdin), or from text[0..len) (name for messages). 0
 * and *out (cs_ncclinfo_free), CS_ERR_INVALID with err at file:line for what NCCL would not print
 * (a rank outside the communicator, a ring that is not a permutation of its ranks, a channel past
 * 64) or a log without anything of NCCL's, cs_meas_read_raw's errors for a bad nccl-tests table,
 * CS_ERR_IO, CS_ERR_NOMEM. */
int cs_ncclinfo_read(const char *path, struct cs_ncclinfo **out, struct cs_error *err);
int cs_ncclinfo_read_mem(const char *text, size_t len, const char *name, struct cs_ncclinfo **out,
                         struct cs_error *err);
void cs_ncclinfo_free(struct cs_ncclinfo *log);

/* Whether text[0..len) holds something of an NCCL log or of nccl-tests' banner (what
 * cs_ncclinfo_read takes): 1 or 0. */
int cs_ncclinfo_detect(const char *text, size_t len);

/* Ring k's ranks in order (log->nranks of them), or NULL when the log does not print it. */
const int *cs_ncclinfo_ring(const struct cs_ncclinfo *log, int k);

/* Rank r's tree on channel k: 0 with *up and down[0..2] (-1 where none), or -1 when not printed. */
int cs_ncclinfo_tree(const struct cs_ncclinfo *log, int r, int k, int *up, int down[3]);

/* The transport's word, as the table prints it: "P2P write", "P2P read", "SHM", "NET GDR",
 * "NET host", "CollNet". */
const char *cs_ncclinfo_via_name(enum cs_ncclinfo_via via);

/* Write what was read as a table of fields (version, ranks, nodes, channels, network, NICs,
 * transports, GPUs, table), each with the line it came from, then the rings, each rank's host,
 * GPU, bus id and NET devices, and the trees: the output of `collsim nccl-log`. 0, or CS_ERR_IO
 * when the stream reports an error. */
int cs_ncclinfo_write_table(const struct cs_ncclinfo *log, FILE *fp);

#endif
