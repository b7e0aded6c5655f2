/* platform.h: SimGrid platform files for A100 and Hopper machines: written from a family and a few
 * parameters, and read back (timing-model props, GPU hosts, link classes) before SimGrid loads
 * them. Uses libxml2 only. */
#ifndef CS_PLATFORM_H
#define CS_PLATFORM_H

#include "error.h"
#include "params.h"

/* What collsim needs to know about a platform file besides what SimGrid reads itself. */
struct cs_platform {
    char *path;
    struct cs_params params; /* defaults overridden by the root zone's <prop id="cs.*"> */
    int ngpus;               /* hosts gpu0..gpuN-1 */
    /* 0, or the line of the first link whose bandwidth, latency or state changes in time (a
     * bandwidth_file, latency_file or state_file, a <trace_connect>) or that is a WIFI link:
     * what the fold's proof (which compares links as they are at the start) does not cover */
    int varying_line;
    int nlinks;
    struct cs_platform_link {
        char *id;               /* a <link>'s id, or (prefix) how a cluster's link names start */
        enum cs_link_class cls; /* its <prop id="cs.class">, else from its id (a cluster's: net) */
        int prefix;             /* a rule for the links of a <cluster> */
        int line;               /* where it is declared */
    } * links;
    /* the links that are not rules, sorted by id (cs_platform_link_find's binary search), and
     * the rules */
    const struct cs_platform_link **by_id, **rules;
    int nby_id, nrules;
};

/* Read a platform file: the root zone's cs.* props (unknown cs.* keys or bad values are errors
 * with file:line), the GPU hosts (gpu0.. must be dense) and each link's class. Hosts are <host>s
 * and the hosts of each <cluster> (PREFIX N SUFFIX for each N of its radical, any topology, in
 * any zone); a cluster's links all take its <prop id="cs.class">, or net. No network; a
 * DOCTYPE may name a DTD, which is never loaded, but not declare anything (no internal subset, so
 * no entities); a NUL byte, an encoding other than UTF-8 and a file over CS_XML_MAX_BYTES are
 * errors. On success stores a new platform in *out (free with cs_platform_free). */
int cs_platform_read(const char *path, struct cs_platform **out, struct cs_error *err);
void cs_platform_free(struct cs_platform *plat);

/* The class of a link as SimGrid names it in a route: a <link> by its id, each half of a
 * split-duplex one (ID_UP, ID_DOWN) by ID, a cluster's links by the cluster (SimGrid 3.32's names:
 * ID_link_N..., ID_backbone, and a fat tree's or dragonfly's unprefixed ones). Returns 1 and sets
 * *cls when the platform declares the link, else 0. */
int cs_platform_link_find(const struct cs_platform *plat, const char *name,
                          enum cs_link_class *cls);

/* Class of a link by name: cs_platform_link_find's, else guessed from the name ("nvl"/"nvsw"/
 * "bridge" -> nvlink, "net"/"nic"/"ib" -> net, anything else pcie). */
enum cs_link_class cs_platform_link_class(const struct cs_platform *plat, const char *link_id);

/* Whether key may be set on a platform already read: 0 for every key but the link parameters
 * (cs.link_Bps.*, cs.link_lat_s.*, cs.sys_Bps, cs.sys_lat_s), which cs_platform_write turns into
 * <link> attributes that SimGrid reads from the file; for those CS_ERR_USAGE, err naming
 * `collsim platform --set`. Unknown keys are 0 here (cs_params_set refuses them). */
int cs_platform_check_settable(const char *key, struct cs_error *err);

enum cs_platform_family {
    CS_FAM_PCIE_4GPU = 1, /* a100-pcie-4gpu: PCIe cards behind two CPU sockets */
    CS_FAM_NVBRIDGE,      /* a100-pcie-nvbridge: NVLink-bridged pairs joined by PCIe */
    CS_FAM_HIER,          /* a100-hier: R GPUs per column on NVLink, columns over PCIe or net */
    CS_FAM_DGX,           /* dgx-a100 / ndv4: 8 SXM on NVSwitch, a NIC per GPU, N nodes */
    CS_FAM_PCIE_NET,      /* a100-pcie-net: N servers of one PCIe card and one NIC each */
    CS_FAM_VIRTUAL,       /* virtual: N ranks sharing one GPU, meeting in its memory (harness) */
    CS_FAM_TOPO,          /* from: a machine as its files describe it (topo.h), N nodes */
};

struct cs_topo;

/* The GPU of a platform, which sets its SM count, NVLink and PCIe generation, HBM and per-CTA
 * rates (cs_platform_spec_params). */
enum cs_gpu_kind {
    CS_GPU_A100 = 1,  /* a100: A100 SXM4 / PCIe, 108 SMs, NVLink3, PCIe Gen4 (the defaults) */
    CS_GPU_H100,      /* h100: H100 SXM5, 132 SMs, NVLink4 x 18, PCIe Gen5, HBM3 */
    CS_GPU_H100_PCIE, /* h100-pcie: H100 PCIe, 114 SMs, NVLink4 bridge x 12, PCIe Gen5, HBM2e */
    CS_GPU_H200,      /* h200: H200 SXM, 132 SMs, NVLink4 x 18, PCIe Gen5, HBM3e */
};

/* The NIC of each GPU, which sets the network links' bandwidth (cs.link_Bps.net). */
enum cs_platform_nic {
    CS_NIC_HDR = 1, /* hdr: one 200 Gb/s HDR InfiniBand NIC, ~24 GB/s effective */
    CS_NIC_ROCE100, /* roce100: one 100 Gb/s RoCE NIC, 12 GB/s in NCCL's model */
    CS_NIC_2X100,   /* 2x100: two 100 Gb/s RoCE NICs, one link at their sum, 24 GB/s */
};

struct cs_platform_spec {
    enum cs_platform_family family;
    int nodes;                  /* dgx: nodes (default 1) */
    int gpus_per_node;          /* pcie families: GPUs (default 4); dgx: 8 */
    int rows, columns;          /* hier: GPUs per column, columns (default 4 x 2) */
    enum cs_link_class between; /* hier: how columns are joined (pcie or net) */
    enum cs_platform_nic nic;   /* dgx, pcie-net: the NIC named in the header (hdr) */
    int nic_other_socket;       /* dgx, pcie-net: each GPU's NIC hangs off the other CPU socket, so
                                 * GPU-NIC traffic crosses the sockets (gpuN_sys, cs.sys_Bps) */
    enum cs_gpu_kind gpu;       /* the GPU (default: the family name's, else a100) */
    int one_socket;             /* pcie families: the GPUs' root ports on one CPU package, its
                                 * NUMA nodes on one IO die: no inter-socket link (xsocket) */
    int ranks;                  /* virtual: ranks on the GPU (default 8) */
    /* How routes are written: CS_ROUTING_FULL lists every pair (Full routing); CS_ROUTING_FLOYD
     * and CS_ROUTING_GRAPH (a100-hier, dgx-a100, a100-pcie-net) give each GPU a route to its
     * NVLink switch and to the network, the same links between every pair, resolved by SimGrid's
     * Floyd routing (shortest paths computed once, a route is a walk of its few hops) or
     * Dijkstra (DijkstraCache: each route rebuilt from a search tree, at every transfer);
     * CS_ROUTING_ZONES (a100-hier, dgx-a100) puts each NVLink group (column, node) in a zone of
     * its own with every pair of its GPUs listed and each GPU's route to the group's gateway,
     * the groups joined pair by pair in the root zone, each pair through a FATPIPE link of its
     * own that never limits (SimGrid refuses an empty route between zones); 0: Full up to
     * CS_PLATFORM_FULL_GPUS, above it zones (a100-hier, dgx-a100) or Floyd (a100-pcie-net).
     * Floyd's setup takes (GPUs + switches)^3 steps when SimGrid loads the platform (about
     * 0.2 s at 512 GPUs, 1 s at 1024); zones need none. */
    int routing;
    const struct cs_topo *topo;         /* from: the machine (one node; nodes of it) */
    const struct cs_param_notes *notes; /* sources of parameters set from files (or NULL) */
    const char *origin; /* how the parameters were chosen, for the header comment (or NULL) */
};

enum {
    CS_ROUTING_FULL = 1,
    CS_ROUTING_GRAPH,
    CS_ROUTING_FLOYD,
    CS_ROUTING_ZONES,
};

/* The most GPUs of a platform whose routes are listed pair by pair (Full), of one routed as a
 * graph (Floyd or Dijkstra: a100-hier, dgx-a100 and a100-pcie-net), and of any platform (zones:
 * a100-hier and dgx-a100, the default above CS_PLATFORM_FULL_GPUS). */
#define CS_PLATFORM_FULL_GPUS 256
#define CS_PLATFORM_GRAPH_GPUS 1024
#define CS_PLATFORM_MAX_GPUS 4096

/* Family by name (a100-pcie-4gpu, a100-pcie-nvbridge, a100-hier, dgx-a100, ndv4,
 * a100-pcie-net, virtual, from (which needs spec.topo), and the Hopper names hgx-h100, hgx-h200 for
 * dgx-a100's NVSwitch node, h100-pcie for a100-pcie-4gpu's and h100-pcie-nvbridge for
 * a100-pcie-nvbridge's); 0 if unknown. */
enum cs_platform_family cs_platform_family_parse(const char *name);
const char *cs_platform_family_name(enum cs_platform_family fam);
/* The GPU a family name stands for: h100 for hgx-h100, ..., a100 for the others (0 if unknown). */
enum cs_gpu_kind cs_platform_family_gpu(const char *name);

/* GPU kind by name (a100, h100, h100-pcie, h200); 0 if unknown. */
enum cs_gpu_kind cs_gpu_kind_parse(const char *name);
const char *cs_gpu_kind_name(enum cs_gpu_kind gpu);

/* Set the parameters spec implies in p, recording their sources in notes (may be NULL): its GPU's
 * SM count, NVLink, PCIe and HBM bandwidths and per-CTA rates (A100's are cs_params_init's), and
 * for the virtual family cs.ranks_per_gpu. Keys notes already holds (set by the user) are left
 * alone. 0, or -1 when notes are full. */
int cs_platform_spec_params(const struct cs_platform_spec *spec, struct cs_params *p,
                            struct cs_param_notes *notes);

/* NIC type by name (hdr, roce100, 2x100); 0 if unknown. */
enum cs_platform_nic cs_platform_nic_parse(const char *name);

/* Set the network links' bandwidth, cs.link_Bps.net in p, to the per-GPU figure of NIC type nic
 * and record its source in notes (may be NULL). 0, or -1 when notes are full. */
int cs_platform_set_nic(enum cs_platform_nic nic, struct cs_params *p,
                        struct cs_param_notes *notes);

/* Fill a spec with the family's defaults. */
void cs_platform_spec_init(struct cs_platform_spec *spec, enum cs_platform_family fam);

/* Write the SimGrid platform XML (DTD 4.1) for spec with the given parameters to path ("-" for
 * stdout). Returns 0, CS_ERR_USAGE for impossible specs, CS_ERR_IO; err says why. */
int cs_platform_write(const struct cs_platform_spec *spec, const struct cs_params *params,
                      const char *path, struct cs_error *err);

#endif
