/* cmd_platform.c: `collsim platform`: write a SimGrid platform file for an A100 or Hopper family.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "platform.h"
#include "topo.h"

const char cmd_platform_usage[] =
    "usage: collsim platform FAMILY [--nodes N] [--gpus-per-node N] [--rows R --columns C]\n"
    "                        [--between pcie|net] [--nic hdr|roce100|2x100]\n"
    "                        [--nic-socket same|other] [--sockets 1|2]\n"
    "                        [--gpu a100|h100|h100-pcie|h200]\n"
    "                        [--ranks N] [--routing full|floyd|dijkstra|zones]\n"
    "                        [--params FILE ...] [--set KEY=VALUE ...] [-o FILE]\n"
    "       collsim platform from FILE... [--nodes N] [--gpu a100|a100-pcie|h100|h100-pcie|h200]\n"
    "                        [--params FILE ...] [--set KEY=VALUE ...] [-o FILE]\n"
    "\n"
    "Write a SimGrid platform file (DTD 4.1) for an A100 or Hopper machine, with the timing\n"
    "model's parameters as <prop>s on the root zone, each after a comment naming its source.\n"
    "One host per GPU (gpu0, gpu1, ...), split-duplex links carrying a cs.class prop\n"
    "(nvlink, pcie, net, or hbm for ranks on one GPU) that selects the per-call overhead.\n"
    "FAMILY is one of:\n"
    "  a100-pcie-4gpu      A100 PCIe cards (--gpus-per-node, default 4) behind two CPU sockets\n"
    "  a100-pcie-nvbridge  NVLink-bridged pairs of A100 PCIe cards joined by PCIe\n"
    "  a100-hier           --rows R GPUs per column on NVLink, --columns C joined by\n"
    "                      --between pcie (default) or net; gpu c*R+r is row r of column c\n"
    "  dgx-a100, ndv4      8 A100 SXM on NVSwitch, one NIC per GPU; --nodes N nodes\n"
    "  a100-pcie-net       --nodes N (default 2) servers of one A100 PCIe card and one NIC\n"
    "  hgx-h100, hgx-h200  dgx-a100's NVSwitch node with 8 H100 SXM5 or H200 (--gpu h100|h200)\n"
    "  h100-pcie, h100-pcie-nvbridge  the PCIe families with H100 PCIe cards (--gpu h100-pcie)\n"
    "  virtual             --ranks N (default 8) ranks on one GPU (--gpu, default a100), as the\n"
    "                      calibration harness runs a schedule: they meet in the GPU's memory\n"
    "                      (one shared link of class hbm, half the HBM bandwidth) and share its\n"
    "                      SMs (cs.ranks_per_gpu: all their threadblocks must be co-resident)\n"
    "  from FILE...        the machine its own files describe, told apart by content and\n"
    "                      combined (one machine): NCCL's topology XML (a vendor's\n"
    "                      NCCL_TOPO_FILE skeleton: GPUs by PCI class 0x03, or an\n"
    "                      NCCL_TOPO_DUMP_FILE dump with <gpu>, <nvlink>, <nic><net>), the\n"
    "                      output of `nvidia-smi topo -m`, an NCCL_DEBUG=INFO log (its nodes,\n"
    "                      ranks' GPUs, NICs, GPUDirect RDMA and transports), an NCCL graph\n"
    "                      file (checked against the machine). GPUs, NVLinks (count x the\n"
    "                      GPU's per-link rate: NCCL's 20 GB/s on A100, 20.6 on Hopper; a port\n"
    "                      gpuN_nvl when the GPUs reach NVSwitches, a link per NVLinked pair\n"
    "                      otherwise), PCIe switches and root ports with their rate (lanes x\n"
    "                      GT/s, NCCL's width x speed / 80), CPUs (NUMA nodes) joined pairwise\n"
    "                      at cs.sys_Bps, NICs at 96% of their line rate; each GPU's NIC is\n"
    "                      the one the log says, else its nearest (GPUs sharing the nearest\n"
    "                      NICs share them in order), reached directly with GPUDirect RDMA\n"
    "                      (the log's word, else both support it within a PCIe switch), else\n"
    "                      through the CPU. What no file says comes from the GPU's priors,\n"
    "                      each named in a comment; the GPU from --gpu, the PCI device id, the\n"
    "                      log's GPU name or the compute capability. A contradiction between\n"
    "                      the files (or with --gpu) is an error naming the line; no GPU, a\n"
    "                      GPU collsim has no model for, or none named: exit 2. --nodes N\n"
    "                      repeats the node N times (default: the log's nodes, else 1); up to\n"
    "                      256 GPUs.\n"
    "--gpu sets the GPU's priors: SMs, NVLink (NCCL's 20.6 GB/s per NVLink4 link on Hopper),\n"
    "PCIe (Gen5 x16, 48 GB/s in NCCL's model, on Hopper), HBM, and per-CTA rates (A100's scaled\n"
    "by the SM clock on Hopper: priors until the harness measures them); each names its source.\n"
    "--nic sets the network links' bandwidth (cs.link_Bps.net) per GPU: hdr, one 200 Gb/s HDR\n"
    "InfiniBand NIC, 24 GB/s effective (the default); roce100, one 100 Gb/s RoCE NIC, 12 GB/s\n"
    "(NCCL's NET_BW); 2x100, two 100 Gb/s RoCE NICs, one link of 24 GB/s (OCI BM.GPU4.8).\n"
    "--nic-socket other puts each GPU's NIC on the other CPU socket (dgx-a100, a100-pcie-net):\n"
    "its route to the NIC crosses the sockets, a link gpuN_sys at cs.sys_Bps (default same).\n"
    "--sockets 1 (a100-pcie-4gpu, a100-pcie-nvbridge and their H100 forms; default 2) puts\n"
    "the GPUs' root ports on one CPU package whose NUMA nodes share one IO die (AMD EPYC\n"
    "7003, NPS4): no inter-socket link, so a pair's path across NUMA nodes is bound by the\n"
    "two GPUs' own PCIe links (cs.link_Bps.pcie: Gen4 x16, 24 GB/s in NCCL's model), not\n"
    "cs.sys_Bps (platforms/README).\n"
    "A platform has up to 256 GPUs with every pair's route listed (SimGrid's Full routing),\n"
    "up to 1024 routed as a graph (a100-hier, dgx-a100 / hgx, a100-pcie-net), or up to 4096\n"
    "routed by zones (a100-hier, dgx-a100 / hgx; above 1024, the zones' pairwise routes make\n"
    "a file of about 40 MB that SimGrid takes some 10 s to load at 4096). Above 256, or with\n"
    "--routing:\n"
    "  zones     (a100-hier, dgx-a100; the default above 256) a zone per column or node with\n"
    "            its pairs listed and each GPU's route out to the zone's gateway nodeK_gw (or\n"
    "            columnK_gw), the zones joined pair by pair through a FATPIPE link fabricA_B\n"
    "            of their own that never limits a transfer: nothing to compute at load, a\n"
    "            route is two table lookups;\n"
    "  floyd     (a100-pcie-net's default above 256) each GPU has a route to its column's or\n"
    "            node's router nvswitchK over its NVLink and one to the router network over\n"
    "            its other links, and SimGrid takes the path of fewest links, computing every\n"
    "            path once when the platform loads ((GPUs + switches)^3 steps: 1 s at 1024\n"
    "            GPUs); between a100-hier's columns a FATPIPE link gpuG_between per GPU that\n"
    "            never limits a transfer keeps the paths apart;\n"
    "  dijkstra  the same graph, each route rebuilt at every transfer (DijkstraCache).\n"
    "Every way gives the same links per pair (zones add the pair's fabric link, floyd and\n"
    "dijkstra a100-hier's gpuG_between) and the same predictions.\n"
    "--params FILE sets parameters from a props file (what `collsim calibrate fit` writes:\n"
    "<!-- SOURCE --> and <prop id=\"KEY\" value=\"V\"/> lines); each prop's comment becomes its\n"
    "source in the platform. --set KEY=VALUE overrides any parameter (keys in src/params.h,\n"
    "e.g. cs.link_Bps.pcie=16e9). Options apply in order; the last setting of a key wins.\n"
    "Without -o the file goes to stdout.\n";

/* The command line: the spec's counts as given (0 when not), parameters and their sources. */
struct platform_args {
    int nodes, gpus_per_node, rows, columns;
    enum cs_link_class between;
    enum cs_platform_nic nic; /* 0 when not given */
    int nic_socket;           /* 0 when not given, 1 same, 2 other */
    int sockets;              /* 0 when not given, else 1 or 2 */
    enum cs_gpu_kind gpu;     /* 0 when not given */
    const char *gpu_name;     /* --gpu as given */
    int ranks;                /* 0 when not given */
    int routing;              /* 0 when not given, else CS_ROUTING_* */
    struct cs_params params;
    struct cs_param_notes notes;
    char origin[1024]; /* "OPTION VALUE, ..." in order, for the file's header comment */
    const char *out;
};

static const char platform_opts[] = "nodes=n: gpus-per-node=g: rows=r: columns=c: between=b: "
                                    "params=p: set=s: nic=N: nic-socket=S: gpu=G: ranks=R: "
                                    "sockets=K: routing=T:";

/* --set KEY=VALUE: the parameter, noted as set on the command line. */
static int set_param(struct platform_args *a, const char *kv)
{
    char key[256], note[400];
    const char *eq = strchr(kv, '=');
    struct cs_error err;

    if (eq == NULL)
        return cmd_usage_error("--set takes KEY=VALUE, not '%s'", kv);
    snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
    snprintf(note, sizeof(note), "set %.300s on the command line", kv);
    cs_error_init(&err);
    if (cs_params_set(&a->params, key, eq + 1, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if (cs_param_notes_put(&a->notes, key, note) != 0)
        return cmd_usage_error("too many --set and --params parameters");
    return 0;
}

/* Apply one option; `name` is its long name. */
static int apply_option(struct platform_args *a, int c, const char *name, const char *val)
{
    int *count = c == 'n'   ? &a->nodes
                 : c == 'g' ? &a->gpus_per_node
                 : c == 'r' ? &a->rows
                 : c == 'c' ? &a->columns
                 : c == 'R' ? &a->ranks
                            : NULL;
    struct cs_error err;
    char opt[32];

    snprintf(opt, sizeof(opt), "--%s", name);
    if (count != NULL)
        return cmd_opt_int(opt, val, 1, 4096, count, "a positive integer, at most 4096");
    if (c == 'b') {
        a->between = cs_link_class_parse(val);
        if (a->between != CS_LINK_PCIE && a->between != CS_LINK_NET)
            return cmd_usage_error("--between takes pcie or net, not '%s'", val);
        return 0;
    }
    if (c == 's')
        return set_param(a, val);
    if (c == 'G') {
        struct cs_topo_gpu g;

        a->gpu_name = val;
        if (cs_topo_gpu_parse(val, &g) != 0)
            return cmd_usage_error("--gpu takes a100, a100-pcie (from), h100, h100-pcie or h200, "
                                   "not '%s'",
                                   val);
        a->gpu = g.kind;
        return 0;
    }
    if (c == 'N') {
        if ((a->nic = cs_platform_nic_parse(val)) == 0)
            return cmd_usage_error("--nic takes hdr, roce100 or 2x100, not '%s'", val);
        if (cs_platform_set_nic(a->nic, &a->params, &a->notes) != 0)
            return cmd_usage_error("too many --set and --params parameters");
        return 0;
    }
    if (c == 'K') {
        a->sockets = strcmp(val, "1") == 0 ? 1 : strcmp(val, "2") == 0 ? 2 : 0;
        return a->sockets ? 0 : cmd_usage_error("--sockets takes 1 or 2, not '%s'", val);
    }
    if (c == 'T') {
        a->routing = strcmp(val, "full") == 0       ? CS_ROUTING_FULL
                     : strcmp(val, "floyd") == 0    ? CS_ROUTING_FLOYD
                     : strcmp(val, "dijkstra") == 0 ? CS_ROUTING_GRAPH
                     : strcmp(val, "zones") == 0    ? CS_ROUTING_ZONES
                                                    : 0;
        return a->routing ? 0
                          : cmd_usage_error(
                                "--routing takes full, floyd, dijkstra or zones, not '%s'", val);
    }
    if (c == 'S') {
        a->nic_socket = strcmp(val, "same") == 0 ? 1 : strcmp(val, "other") == 0 ? 2 : 0;
        return a->nic_socket ? 0
                             : cmd_usage_error("--nic-socket takes same or other, not '%s'", val);
    }
    /* --params FILE */
    cs_error_init(&err);
    if (cs_params_read_props(&a->params, val, &a->notes, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

/* Parse the options in order; the family is left at optind. */
static int parse_args(int argc, char **argv, struct platform_args *a)
{
    struct cmd_opts t;
    int c, rc = 0, started = 0;

    cmd_opts_init(&t, platform_opts);
    while (rc == 0 && (c = cmd_getopt(argc, argv, "o:", t.opt, &started)) != -1) {
        const char *name = cmd_opt_long_name(t.opt, c);
        size_t used = strlen(a->origin);

        if (c == 'o') {
            a->out = optarg;
            continue;
        }
        if (name == NULL) /* '?': cmd_getopt said why */
            return CS_EXIT_USAGE;
        /* option names without their dashes: XML comments cannot hold "--" */
        snprintf(a->origin + used, sizeof(a->origin) - used, "%s%s %s", used ? ", " : "", name,
                 optarg);
        rc = apply_option(a, c, name, optarg);
    }
    if (rc == 0 && optind == argc)
        rc = cmd_usage_error("platform needs a FAMILY; see 'collsim help platform'");
    else if (rc == 0 && strcmp(argv[optind], "from") == 0 && argc - optind < 2)
        rc = cmd_usage_error("platform from needs the machine's FILE...; see 'collsim help "
                             "platform'");
    else if (rc == 0 && argc - optind > 1 && strcmp(argv[optind], "from") != 0)
        rc = cmd_usage_error("platform: one FAMILY only ('%s' and '%s')", argv[optind],
                             argv[optind + 1]);
    return rc;
}

/* The family's spec with the counts given, when they apply to it. */
static int make_spec(const struct platform_args *a, const char *name, struct cs_platform_spec *spec)
{
    enum cs_platform_family fam = cs_platform_family_parse(name);

    if (fam == 0)
        return cmd_usage_error("unknown platform family '%s' (a100-pcie-4gpu, a100-pcie-nvbridge, "
                               "a100-hier, dgx-a100, ndv4, a100-pcie-net, hgx-h100, hgx-h200, "
                               "h100-pcie, h100-pcie-nvbridge, virtual)",
                               name);
    if (a->gpu_name != NULL && strcmp(a->gpu_name, "a100-pcie") == 0)
        return cmd_usage_error("--gpu a100-pcie is for platform from (a family's a100 is either "
                               "form)");
    if (a->ranks && fam != CS_FAM_VIRTUAL)
        return cmd_usage_error("--ranks applies to virtual only");
    if (a->gpu && cs_platform_family_gpu(name) != CS_GPU_A100 &&
        a->gpu != cs_platform_family_gpu(name))
        return cmd_usage_error("%s is a %s platform; --gpu %s contradicts it", name,
                               cs_gpu_kind_name(cs_platform_family_gpu(name)),
                               cs_gpu_kind_name(a->gpu));
    if ((a->rows || a->columns) && fam != CS_FAM_HIER)
        return cmd_usage_error("--rows and --columns apply to a100-hier only");
    if (a->nodes && fam != CS_FAM_DGX && fam != CS_FAM_PCIE_NET)
        return cmd_usage_error("--nodes applies to dgx-a100 / ndv4 and a100-pcie-net only");
    if (a->gpus_per_node && fam == CS_FAM_DGX && a->gpus_per_node != 8)
        return cmd_usage_error("dgx-a100 has 8 GPUs per node");
    if (a->gpus_per_node && fam == CS_FAM_PCIE_NET && a->gpus_per_node != 1)
        return cmd_usage_error("a100-pcie-net has one GPU per server");
    if (a->nic && fam != CS_FAM_DGX && fam != CS_FAM_PCIE_NET &&
        !(fam == CS_FAM_HIER && a->between == CS_LINK_NET))
        return cmd_usage_error("--nic applies to platforms with NICs (dgx-a100 / ndv4, "
                               "a100-pcie-net, a100-hier --between net)");
    if (a->nic_socket && fam != CS_FAM_DGX && fam != CS_FAM_PCIE_NET)
        return cmd_usage_error("--nic-socket applies to dgx-a100 / ndv4 and a100-pcie-net only");
    if (a->sockets && fam != CS_FAM_PCIE_4GPU && fam != CS_FAM_NVBRIDGE)
        return cmd_usage_error("--sockets applies to a100-pcie-4gpu and a100-pcie-nvbridge "
                               "(h100-pcie, h100-pcie-nvbridge) only");
    if (a->gpus_per_node && fam == CS_FAM_HIER)
        return cmd_usage_error("a100-hier takes --rows and --columns");
    if (a->between && fam != CS_FAM_HIER)
        return cmd_usage_error("--between applies to a100-hier only (what joins its columns)");
    if (a->gpus_per_node && fam == CS_FAM_VIRTUAL)
        return cmd_usage_error("virtual takes --ranks (its ranks share one GPU)");
    cs_platform_spec_init(spec, fam);
    spec->nodes = a->nodes ? a->nodes : spec->nodes;
    spec->gpus_per_node = a->gpus_per_node ? a->gpus_per_node : spec->gpus_per_node;
    spec->rows = a->rows ? a->rows : spec->rows;
    spec->columns = a->columns ? a->columns : spec->columns;
    spec->between = a->between ? a->between : spec->between;
    spec->nic = a->nic ? a->nic : spec->nic;
    spec->nic_other_socket = a->nic_socket == 2;
    spec->one_socket = a->sockets == 1;
    spec->gpu = a->gpu ? a->gpu : cs_platform_family_gpu(name);
    spec->ranks = a->ranks ? a->ranks : spec->ranks;
    spec->routing = a->routing;
    spec->notes = &a->notes;
    spec->origin = a->origin[0] ? a->origin : NULL;
    return 0;
}

/* `platform from FILE...`: the machine (a->topo), its spec and parameters. An exit code. */
static int make_from(struct platform_args *a, int nfiles, char **files, struct cs_topo **topo,
                     struct cs_platform_spec *spec)
{
    static const char *const keys[CS_NLINK] = {NULL, "cs.link_Bps.nvlink", "cs.link_Bps.pcie",
                                               "cs.link_Bps.net", NULL};
    struct cs_topo_opts o = {{0}, &a->params, {0}};
    struct cs_error err;
    size_t used = strlen(a->origin);

    if (a->gpus_per_node || a->rows || a->columns || a->between || a->nic || a->nic_socket ||
        a->sockets || a->ranks || a->routing)
        return cmd_usage_error("platform from takes --nodes, --gpu, --params and --set (the "
                               "machine's files say the rest)");
    if (a->gpu_name != NULL)
        cs_topo_gpu_parse(a->gpu_name, &o.gpu);
    for (int c = 1; c < CS_NLINK; c++)
        o.user_Bps[c] = keys[c] != NULL && cs_param_notes_get(&a->notes, keys[c]) != NULL;
    cs_error_init(&err);
    if (cs_topo_read((const char *const *)files, nfiles, &o, topo, NULL, NULL, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    cs_platform_spec_init(spec, CS_FAM_TOPO);
    spec->topo = *topo;
    spec->nodes = a->nodes ? a->nodes : (*topo)->nodes;
    spec->gpu = (*topo)->gpu.kind;
    spec->notes = &a->notes;
    for (int i = 0; i < (*topo)->ngpus && spec->nodes > 1; i++)
        if ((*topo)->nic_of[i] < 0)
            return cmd_usage_error("platform from: GPU %d of the machine has no NIC in its files: "
                                   "%d nodes cannot be joined (give the file that lists the "
                                   "NICs)",
                                   i, spec->nodes);
    for (int i = 0; i < nfiles && used < sizeof(a->origin) - 8; i++, used = strlen(a->origin))
        snprintf(a->origin + used, sizeof(a->origin) - used, "%s%s", used ? ", " : "", files[i]);
    if (!a->nodes && spec->nodes > 1)
        snprintf(a->origin + used, sizeof(a->origin) - used, ", nodes %d (the log's)", spec->nodes);
    spec->origin = a->origin;
    return 0;
}

int cmd_platform(int argc, char **argv)
{
    struct platform_args *a = calloc(1, sizeof(*a));
    struct cs_platform_spec spec;
    struct cs_topo *topo = NULL;
    struct cs_error err;
    int rc = CS_EXIT_USAGE;

    if (a == NULL) {
        fprintf(stderr, "collsim: out of memory\n");
        return CS_EXIT_USAGE;
    }
    a->out = "-";
    cs_params_init(&a->params);
    cs_error_init(&err);
    if (parse_args(argc, argv, a) == 0 &&
        (strcmp(argv[optind], "from") == 0
             ? make_from(a, argc - optind - 1, argv + optind + 1, &topo, &spec)
             : make_spec(a, argv[optind], &spec)) == 0) {
        if (cs_platform_spec_params(&spec, &a->params, &a->notes) != 0 ||
            (topo != NULL && cs_topo_params(topo, &a->params, &a->notes) != 0)) {
            rc = cmd_usage_error("too many --set and --params parameters");
        } else {
            rc = cs_platform_write(&spec, &a->params, a->out, &err) == 0 ? CS_EXIT_OK
                                                                         : CS_EXIT_USAGE;
            if (rc != CS_EXIT_OK)
                cmd_print_error(&err);
        }
    }
    cs_topo_free(topo);
    free(a);
    return rc;
}

int cmd_platform_from(const char *const *files, int n, const char *out)
{
    struct platform_args *a = calloc(1, sizeof(*a));
    struct cs_platform_spec spec;
    struct cs_topo *topo = NULL;
    struct cs_error err;
    int rc = CS_EXIT_USAGE;

    if (a == NULL)
        return cmd_usage_error("out of memory");
    cs_params_init(&a->params);
    cs_error_init(&err);
    if (make_from(a, n, (char **)files, &topo, &spec) == 0) {
        if (cs_platform_spec_params(&spec, &a->params, &a->notes) != 0 ||
            cs_topo_params(topo, &a->params, &a->notes) != 0)
            rc = cmd_usage_error("too many parameters");
        else if ((rc = cs_platform_write(&spec, &a->params, out, &err)) != 0)
            cmd_print_error(&err);
        rc = rc == 0 ? 0 : CS_EXIT_USAGE;
    }
    cs_topo_free(topo);
    free(a);
    return rc;
}
