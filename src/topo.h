/* topo.h: a machine as it describes itself, in the forms NCCL reads: NCCL's topology XML (a
 * vendor's NCCL_TOPO_FILE skeleton or an NCCL_TOPO_DUMP_FILE dump), `nvidia-smi topo -m` and an
 * NCCL_DEBUG=INFO log, several files of one machine combined; contradictions refused with their
 * line, what no file says taken from the GPU's priors, each named. The machine then gives the
 * links and the GPU-to-GPU routes of its SimGrid platform, which platform.c writes (family
 * `from`). Plain C: the XML arrives as xml.h's element tree.
 *
 * One node is described; the platform repeats it (--nodes, or the log's nodes). GPU i of node k
 * is host gpu(k n + i), the GPUs of a node in bus-id order (CUDA's and nvidia-smi's), or in the
 * order of the log's ranks when a log names their bus ids. */
#ifndef CS_TOPO_H
#define CS_TOPO_H

#include <stddef.h>

#include "error.h"
#include "ncclinfo.h"
#include "params.h"
#include "platform.h"
#include "xml.h"

#define CS_TOPO_MAX_FILES 16
#define CS_TOPO_MAX_BYTES (16L * 1024 * 1024) /* largest topology file or matrix read */
#define CS_TOPO_MAX_DEVS 4096                 /* CPUs, switches, GPUs and NICs of a node */
#define CS_TOPO_MAX_GPUS 256                  /* GPUs of a node */
#define CS_TOPO_MAX_HOPS 96                   /* links of one route */

enum cs_topo_kind {
    CS_TOPO_CPU = 1, /* a CPU socket or NUMA node: the root of its PCIe tree */
    CS_TOPO_SWITCH,  /* a PCIe switch or bridge */
    CS_TOPO_GPU,
    CS_TOPO_NIC, /* a network device with its ports */
};

/* PCIe distance between two devices, as nvidia-smi names it (NCCL's path types). */
enum cs_topo_level {
    CS_TOPO_PIX = 1, /* through one PCIe switch */
    CS_TOPO_PXB,     /* through several switches, not the host bridge */
    CS_TOPO_PHB,     /* through the CPU's root complex (PHB or NODE: one NUMA node) */
    CS_TOPO_SYS,     /* across CPUs (NUMA nodes, sockets) */
};

/* One device as the files describe it; -1, 0 or "" where they say nothing. */
struct cs_topo_dev {
    enum cs_topo_kind kind;
    int parent;      /* the device it hangs off (index into dev); -1 for a CPU */
    int file, line;  /* where it is declared */
    char busid[16];  /* "0000:10:1c.0", lower case */
    char name[32];   /* NIC: its first port ("mlx5_0"); in a matrix, its column ("GPU3") */
    double link_GTs; /* its PCIe link up to the parent: GT/s per lane, and lanes */
    int link_width;
    int numa;        /* CPU: NUMA node id */
    char vendor[16]; /* CPU: GenuineIntel, AuthenticAMD, ... */
    int cpu_family, cpu_model;
    int pci_vendor; /* GPU, NIC: PCI ids */
    int pci_device;
    int cuda_dev;     /* GPU: <gpu dev>, CUDA's index */
    int sm;           /* GPU: <gpu sm>, compute capability x 10 */
    int gdr;          /* GPU, NIC: GPUDirect RDMA 1 supported, 0 not */
    int nvs_links;    /* GPU: NVLinks to NVSwitches */
    double speed_bps; /* NIC: line rate of its ports together (bit/s) */
    int nports;       /* NIC */
    int net_dev;      /* NIC: NCCL's net device index of its first port */
};

/* NVLinks between two GPUs (device indices), read at file:line. */
struct cs_topo_nvl {
    int a, b, count;
    int file, line;
};

/* A PCIe relation a matrix states between a GPU and another device: checked against a tree. */
struct cs_topo_rel {
    int a, b;
    enum cs_topo_level level;
    int file, line;
};

/* A GPU kind and form: the priors' key. */
struct cs_topo_gpu {
    enum cs_gpu_kind kind; /* 0: unknown */
    int sxm;               /* 1 an SXM module (NVSwitch or a board's NVLinks), 0 a PCIe card */
    char what[200];        /* how it was known, for the comments ("PCI 10de:20b0 at f:12") */
};

/* What one file says (a view), or the machine all files say together (after cs_topo_combine). */
struct cs_topo {
    int nfiles;
    char files[CS_TOPO_MAX_FILES][512];
    int ndev, cap_dev;
    struct cs_topo_dev *dev;
    int nnvl, cap_nvl;
    struct cs_topo_nvl *nvl;
    int nrel, cap_rel;
    struct cs_topo_rel *rel;
    int nvl_known;  /* the view says which NVLinks there are (a dump's <nvlink>s, a matrix) */
    int tree_known; /* the view says where devices sit in PCIe (an XML, a matrix) */
    struct cs_topo_gpu gpu;
    const struct cs_ncclinfo *log; /* the first log combined (not owned) */
    int log_file;

    /* the machine (cs_topo_combine): */
    int ngpus;          /* per node */
    int *gpus;          /* device index of local GPU i */
    int nodes;          /* the log's nodes, else 1 */
    int *nic_of;        /* per local GPU: the device index of its NIC, -1 none */
    int *head;          /* per device: for a NIC joined to another (several NICs of one GPU,
                         * one link of their sum), that NIC; else the device itself */
    unsigned char *gdr; /* per local GPU: 1 its NIC reads GPU memory, 0 staged via the host */
    unsigned char *via; /* per pair of local GPUs (a n + b): enum cs_ncclinfo_via, 0 P2P */
    double *up_Bps;     /* per device: its link to its parent (PCIe) */
    double *net_Bps;    /* per device (NICs): its network link */
    double *nvs_Bps;    /* per device (GPUs): its NVSwitch port, 0 none */
    double nvl_rate;    /* one NVLink's bandwidth (B/s) */
    double sys_Bps;     /* between two CPUs */
    int nnotes;
    char (*notes)[400]; /* facts and priors, for the platform's comments */
};

/* Options of cs_topo_combine. */
struct cs_topo_opts {
    struct cs_topo_gpu gpu;         /* --gpu (kind 0: none) */
    const struct cs_params *params; /* cs.sys_Bps, and the link classes' bandwidths where
                                     * user_Bps[class] is set (the user set them); may be NULL */
    int user_Bps[CS_NLINK];
};

/* A GPU name as --gpu takes it (a100, a100-pcie, h100, h100-pcie, h200) into g: 0, or -1. */
int cs_topo_gpu_parse(const char *name, struct cs_topo_gpu *g);

/* The GPU a PCI device id (vendor 10de) or a CUDA name ("A100-SXM4-40GB", "NVIDIA H100 80GB
 * HBM3") stands for: 1 with *g filled, 0 when collsim has no model for it. */
int cs_topo_gpu_by_device(int device, struct cs_topo_gpu *g);
int cs_topo_gpu_by_name(const char *name, struct cs_topo_gpu *g);

/* A view: zeroed, then filled by a reader; cs_topo_cleanup releases it. */
void cs_topo_init(struct cs_topo *t);
void cs_topo_cleanup(struct cs_topo *t);

/* Add a file's name (its index for dev.file and err messages), a device (its index), NVLinks,
 * a relation, a note. -1 when full or out of memory. */
int cs_topo_add_file(struct cs_topo *t, const char *name);
int cs_topo_add_dev(struct cs_topo *t, const struct cs_topo_dev *d);
int cs_topo_add_nvl(struct cs_topo *t, int a, int b, int count, int file, int line);
int cs_topo_add_rel(struct cs_topo *t, int a, int b, enum cs_topo_level level, int file, int line);
int cs_topo_note(struct cs_topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A device of kind with every field unknown. */
void cs_topo_dev_init(struct cs_topo_dev *d, enum cs_topo_kind kind, int parent, int file,
                      int line);

/* The GPUs of t in their order (CUDA's index, else the bus id, else the file's) into t->gpus and
 * t->ngpus. 0, or CS_ERR_NOMEM. */
int cs_topo_order_gpus(struct cs_topo *t);

/* The PCIe distance between devices a and b of t's tree. */
enum cs_topo_level cs_topo_level(const struct cs_topo *t, int a, int b);
const char *cs_topo_level_name(enum cs_topo_level l);

/* The CPU above device d (d itself for a CPU), or -1. */
int cs_topo_cpu_of(const struct cs_topo *t, int d);

/* Whether text[0..len) (a file's start) is a machine's own file: an XML whose root is NCCL's
 * <system> or <graphs> (not a SimGrid <platform>), or text holding an nvidia-smi topo -m header
 * or an NCCL log line. 1 or 0. */
int cs_topo_detect(const char *text, size_t len);

/* Read every file (a topology XML, a graph XML, nvidia-smi output, an INFO log, told apart by
 * content; text files may hold a matrix and a log both) and combine them into machine *out
 * (cs_topo_free): checks, priors, GPU-NIC assignment, link bandwidths. Logs read are kept in
 * logs[0..*nlogs) for the caller (cs_ncclinfo_free each; logs may be NULL). 0, or CS_ERR_IO,
 * CS_ERR_PARSE or CS_ERR_INVALID with err at file:line; CS_ERR_USAGE when no GPU, or a GPU
 * collsim has no model for, or nothing says which GPU. */
int cs_topo_read(const char *const *paths, int npaths, const struct cs_topo_opts *opts,
                 struct cs_topo **out, struct cs_ncclinfo **logs, int *nlogs, struct cs_error *err);
/* The same on files in memory (name, text and length of each), for tests and fuzzing. */
int cs_topo_read_mem(const char *const *names, const char *const *texts, const size_t *lens, int n,
                     const struct cs_topo_opts *opts, struct cs_topo **out, struct cs_error *err);
void cs_topo_free(struct cs_topo *t);

/* ---- the platform of a machine (platform.c's family `from`) */

/* The links of node k of a machine: calls fn(ctx, id, Bps, class) for each, in a fixed order. */
void cs_topo_each_link(const struct cs_topo *t, int node,
                       void (*fn)(void *ctx, const char *id, double Bps, enum cs_link_class cls),
                       void *ctx);
int cs_topo_nlinks(const struct cs_topo *t);

/* One link of a route, from its source to its end: its id and direction (up: from the child to
 * its parent, from GPU a's side of a pair's NVLink, from CPU a to CPU b of n<k>_sys<a>_<b>, from
 * the NIC to the network). */
struct cs_topo_hop {
    char id[40];
    int up;
};

/* The route between global GPUs a and b (host gpuA, gpuB): *n hops into hop[0..). Within a node:
 * a direct NVLink, else both GPUs' NVSwitch ports, else PCIe up to their common switch, the root
 * complex, or across the CPUs, and through the host for a pair the log says talks over SHM;
 * across nodes (or over NET within one): each GPU's path to its NIC (directly with GDR, else
 * through its CPU), the NIC's network link. Reversed, it is b's route to a. */
void cs_topo_route(const struct cs_topo *t, int a, int b, struct cs_topo_hop *hop, int *n);

/* The path of local GPU i to its NIC, as a route (no network link), and its NIC's device index
 * (-1 when it has none: then *n is 0). */
int cs_topo_nic_path(const struct cs_topo *t, int i, struct cs_topo_hop *hop, int *n);

/* A sentence on the machine (GPUs, NVLink, PCIe, CPUs, NICs) for the platform's header, into
 * buf. */
void cs_topo_describe(const struct cs_topo *t, int nodes, char *buf, size_t len);

/* The parameters the machine sets (cs.link_Bps.{nvlink,pcie,net}: the GPU's NVLink port or
 * pair link, its PCIe link, its NIC's share), with sources, unless notes hold them (the user
 * set them). 0, or -1 when notes are full. */
int cs_topo_params(const struct cs_topo *t, struct cs_params *p, struct cs_param_notes *notes);

#endif
