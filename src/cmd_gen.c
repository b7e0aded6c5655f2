/* cmd_gen.c: `collsim gen`: write a natively generated schedule as MSCCL XML. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "gen.h"
#include "xml.h"

const char cmd_gen_usage[] =
    "usage: collsim gen hierarchical|ring|allpairs --gpus G [--coll C] [--columns C]\n"
    "                  [--instances I] [--channels K] [--per-node N]\n"
    "                  [--protocol LL|LL128|Simple]\n"
    "                  [--msccl-tools-compat] [--dependence-nops on|off]\n"
    "                  [--variant split|v1] [--sms N] [--min-bytes N] [--max-bytes N]\n"
    "                  [-o FILE]\n"
    "       collsim gen nccl --gpus G --size BYTES [--coll C] [--nodes M]\n"
    "                  [--algo ring|tree] [--nccl-version V] [--channels K] [--log FILE]\n"
    "                  [--protocol LL|LL128|Simple]\n"
    "                  [--sms N] [-o FILE]\n"
    "\n"
    "Generate a schedule natively and write it as MSCCL XML (stdout without -o).\n"
    "--coll allreduce|allgather|reducescatter|alltoall picks the collective (default\n"
    "allreduce; spec key coll): ring writes AllReduce, AllGather (G-1 steps of copy-forward)\n"
    "and ReduceScatter (G-1 steps of reduce-forward); allpairs all four (each GPU sends its\n"
    "chunk for each peer directly); hierarchical AllReduce only. AllGather and ReduceScatter\n"
    "are in place, AllToAll out of place.\n"
    "  hierarchical  GPUs in G/C rows of C columns (default C = 2): reduce-scatter in each\n"
    "                column, then across each row, all-gather across rows, then in each\n"
    "                column. Default (--variant split): the corrected algorithm with a\n"
    "                send and a receive threadblock per peer, free of FIFO credit deadlocks\n"
    "                at every size (2 x (G/C + C - 2) threadblocks per GPU and instance);\n"
    "                --variant v1: one threadblock per peer, as msccl-tools lowers the\n"
    "                corrected seed (deadlocks above 1 MiB in LL at 8 GPUs);\n"
    "                --msccl-tools-compat: the published seed\n"
    "                allreduce_a100_pcie_hierarchical.py exactly as msccl-tools lowers it,\n"
    "                bug included (C = 2 only). --dependence-nops overrides msccl-tools'\n"
    "                dependence_nop (on for the seed, off by default: with it v1 has a\n"
    "                dependency cycle).\n"
    "  ring          NCCL-style ring: K rings (--channels, default 1), each over its share of\n"
    "                the buffer, reduce-scatter then all-gather. --per-node N (GPUs per node,\n"
    "                dividing G) visits the GPUs node by node with ring k starting each node\n"
    "                at its GPU k mod N, so the rings leave each node through different GPUs\n"
    "                and NICs, as NCCL spreads its channels (spec key per_node).\n"
    "  allpairs      each rank reduces its 1/G of the buffer from all others, then sends it\n"
    "                to all.\n"
    "  nccl          what NCCL V (2.8 on, 2.19 on as 2.18; default 2.12.12, MSCCL's)\n"
    "                runs for the collective at --size BYTES (the whole buffer, as\n"
    "                nccl-tests' size column): a ring over the GPUs in rank order 0..G-1\n"
    "                (on every platform family an order NCCL's locality search can pick;\n"
    "                with --nodes M, node by node, ring k rotated by k inside each node), or\n"
    "                for AllReduce across nodes NCCL's tree (a double binary tree between\n"
    "                nodes, a chain inside each) where NCCL's tuning model (2.12.12's\n"
    "                tuning.cc, on an HGX A100 with one HDR NIC per GPU) finds it faster at\n"
    "                that size and protocol; --algo ring|tree forces one (tree: AllReduce,\n"
    "                at most 64 GPUs). On the channels NCCL uses at that size out of the\n"
    "                communicator's K (--channels, default 24, an HGX A100 node's; at most\n"
    "                32, 16 above 32 GPUs for a ring AllReduce); AllToAll, which NCCL runs as\n"
    "                point-to-point sends: allpairs in Simple. NCCL lowers channels, then\n"
    "                threads, while the size is under channels x threads x 8 x G (ring LL),\n"
    "                8 (tree LL, LL128) or 64 (Simple) bytes. The protocol is --protocol\n"
    "                (default Simple): NCCL picks it with a cost model of the machine\n"
    "                (`predict --vs-nccl` keeps the fastest on the platform). minBytes/maxBytes\n"
    "                are the sizes over which NCCL keeps those channels and threads (maxBytes\n"
    "                0: every larger size); MSCCL XML has no thread count, so the name records\n"
    "                it, with the algorithm, channels and version\n"
    "                (allreduce_nccl_2.12.12_ring_2ch_512thr). --log FILE (an NCCL_DEBUG=INFO\n"
    "                log, `collsim nccl-log`) takes the log's communicator where the options\n"
    "                do not say otherwise: its ranks (--gpus), nodes, channels and NCCL version\n"
    "                (one the rule covers; else give --nccl-version), and the ring's channel k\n"
    "                visits the ranks in the order of the log's ring k. Spec keys size, nccl,\n"
    "                nodes, algo, log.\n"
    "--instances replicates the schedule on its own channels and threadblocks (default 1);\n"
    "--protocol defaults to Simple. Every schedule's <algo> carries what the MSCCL executor\n"
    "requires: inplace, outofplace (its complement) and the size window minBytes/maxBytes,\n"
    "set by --min-bytes and --max-bytes (sizes such as 64K or 1G, at most 1T; inclusive, on the\n"
    "collective's bytes; default 0 and 0, where maxBytes 0 means no limit, as Azure\n"
    "msccl-tools writes; min at most max unless max is 0; spec keys min_bytes, max_bytes).\n"
    "Parameters that cannot work, or a schedule beyond the runtime's limits (32 channels,\n"
    "32 connections per channel, cnt < 72, depid <= 127) or with more threadblocks on a GPU\n"
    "than stay resident (--sms N SMs x 1 CTA per SM; default 108, an A100; 132 for an H100\n"
    "or H200; spec key sms), exit 2. A threadblock over the executor's 64 steps (a ring\n"
    "above 64 GPUs) is written with a warning: verify --runtime executor refuses it and\n"
    "predict simulates it as a what-if. ring, hierarchical (33 x 33 at most) and nccl go to\n"
    "1024 GPUs, allpairs to 128 (its reducing threadblock waits on every receiving one).\n";

/* The field of a count option (--gpus, --columns, --instances, --channels, --per-node, --sms,
 * --nodes), or NULL; *min is the least count it takes. */
static int *count_field(struct cs_gen_opts *o, int c, int *min)
{
    *min = c == 'g' ? 0 : c == 'c' ? 2 : 1;
    return c == 'g'   ? &o->gpus
           : c == 'c' ? &o->columns
           : c == 'i' ? &o->instances
           : c == 'k' ? &o->channels
           : c == 'n' ? &o->per_node
           : c == 'S' ? &o->sms
           : c == 'd' ? &o->nodes
                      : NULL;
}

static const char gen_opts[] = "gpus=g: coll=L: columns=c: instances=i: channels=k: per-node=n: "
                               "protocol=p: msccl-tools-compat=C dependence-nops=N: variant=V: "
                               "sms=S: min-bytes=m: max-bytes=M: size=z: nodes=d: nccl-version=v: "
                               "algo=A: log=l:";

/* A count's value (option --name): an integer from min to 1000000. */
static int count_arg(const char *name, const char *val, int min, int *out)
{
    char opt[32];

    snprintf(opt, sizeof(opt), "gen --%s", name);
    if (cmd_opt_int(opt, val, 0, 1000000, out, "a non-negative integer") != 0)
        return CS_EXIT_USAGE;
    if (*out < min)
        return cmd_usage_error("gen: --%s must be at least %d", name, min);
    return 0;
}

/* Parse the options into o and *path; the generator is left at optind. */
static int parse_args(int argc, char **argv, struct cs_gen_opts *o, const char **path)
{
    struct cmd_opts t;
    int c, min, rc = 0, started = 0;

    cmd_opts_init(&t, gen_opts);
    while (rc == 0 && (c = cmd_getopt(argc, argv, "o:", t.opt, &started)) != -1) {
        int *count = count_field(o, c, &min);

        if (count != NULL) {
            rc = count_arg(cmd_opt_long_name(t.opt, c), optarg, min, count);
        } else if (c == 'p') {
            o->proto = cs_proto_parse(optarg);
            if (o->proto == 0)
                rc = cmd_usage_error("gen: unknown protocol '%s' (LL, LL128, Simple)", optarg);
        } else if (c == 'L') {
            o->coll = cs_gen_coll_parse(optarg);
            if (o->coll == 0)
                rc = cmd_usage_error(
                    "gen: unknown collective '%s' (allreduce, allgather, reducescatter, alltoall)",
                    optarg);
        } else if (c == 'N') {
            if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
                rc = cmd_usage_error("gen: --dependence-nops takes on or off");
            o->nops = strcmp(optarg, "on") == 0 ? 1 : 2;
        } else if (c == 'V') {
            o->variant = cs_gen_variant_parse(optarg);
            if (o->variant < 0)
                rc = cmd_usage_error("gen: --variant takes split or v1");
        } else if (c == 'm' || c == 'M') {
            rc = cmd_opt_size(c == 'm' ? "gen --min-bytes" : "gen --max-bytes", optarg, 0,
                              CS_GEN_MAX_WINDOW_BYTES, c == 'm' ? &o->min_bytes : &o->max_bytes,
                              "a size such as 64K or 1G, at most 1T");
        } else if (c == 'z') {
            rc = cmd_opt_size("gen --size", optarg, 1, CS_GEN_MAX_WINDOW_BYTES, &o->size_bytes,
                              "a size such as 64K or 1G, at most 1T");
        } else if (c == 'v') {
            struct cs_error e;

            cs_error_init(&e);
            if (cs_nccl_version_parse(optarg, &o->nccl_version, &e) != 0)
                rc = cmd_usage_error("gen --nccl-version: %s", e.msg);
        } else if (c == 'A') {
            if (cs_nccl_algo_parse(optarg, &o->nccl_algo) != 0)
                rc = cmd_usage_error("gen --algo takes ring or tree, not '%s'", optarg);
        } else if (c == 'l') {
            o->nccl_log = optarg;
        } else if (c == 'C') {
            o->compat = 1;
        } else if (c == 'o') {
            *path = optarg;
        } else {
            rc = CS_EXIT_USAGE;
        }
    }
    if (rc == 0 && optind == argc)
        rc = cmd_usage_error("gen needs a generator (hierarchical, ring, allpairs, nccl); see "
                             "'collsim help gen'");
    else if (rc == 0 && argc - optind > 1)
        rc = cmd_usage_error("gen: one generator only ('%s' and '%s')", argv[optind],
                             argv[optind + 1]);
    return rc;
}

static int gen_nccl(const struct cs_gen_opts *o, struct cs_sched **out, struct cs_error *err)
{
    return cs_gen_nccl(o, out, NULL, err);
}

/* Options that belong to another generator than name: an exit code, or 0. */
static int check_generator_opts(const char *name, const struct cs_gen_opts *o)
{
    int ring = strcmp(name, "ring") == 0, nccl = strcmp(name, "nccl") == 0;

    if (strcmp(name, "hierarchical") != 0 && (o->columns || o->compat || o->nops || o->variant))
        return cmd_usage_error("gen %s: --columns, --msccl-tools-compat, --dependence-nops and "
                               "--variant are for hierarchical",
                               name);
    if (!ring && (o->per_node || (!nccl && o->channels)))
        return cmd_usage_error("gen %s: --channels and --per-node are for ring (--channels also "
                               "for nccl)",
                               name);
    if (!nccl && (o->size_bytes || o->nodes || o->nccl_version || o->nccl_algo || o->nccl_log))
        return cmd_usage_error("gen %s: --size, --nodes, --nccl-version, --algo and --log are for "
                               "nccl",
                               name);
    if (nccl && o->size_bytes == 0)
        return cmd_usage_error("gen nccl: --size is required (NCCL's choice depends on it)");
    if (strcmp(name, "hierarchical") == 0 && o->coll && o->coll != CS_COLL_ALLREDUCE)
        return cmd_usage_error("gen hierarchical writes allreduce only (see --coll)");
    /* written on purpose (what msccl-tools' lowering with its nops gives), but said */
    if (strcmp(name, "hierarchical") == 0 && o->variant == 1 && o->nops == 1 && !o->compat)
        fprintf(stderr, "collsim: gen hierarchical: warning: --variant v1 with --dependence-nops "
                        "on has a dependency cycle: the schedule deadlocks at every size (collsim "
                        "verify shows it)\n");
    return 0;
}

int cmd_gen(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(const struct cs_gen_opts *, struct cs_sched **, struct cs_error *);
    } gens[] = {
        {"hierarchical", cs_gen_hierarchical},
        {"ring", cs_gen_ring},
        {"allpairs", cs_gen_allpairs},
        {"nccl", gen_nccl},
    };
    enum { NGENS = sizeof(gens) / sizeof(gens[0]) };
    struct cs_gen_opts o = {0};
    struct cs_sched *sched = NULL;
    struct cs_error err;
    const char *name, *path = "-";
    char warning[512];
    int rc = parse_args(argc, argv, &o, &path), g = 0;

    if (rc != 0)
        return rc;
    name = argv[optind];
    while (g < NGENS && strcmp(gens[g].name, name) != 0)
        g++;
    if (g == NGENS)
        return cmd_usage_error("gen: unknown generator '%s' (hierarchical, ring, allpairs, nccl)",
                               name);
    if (o.gpus == 0 && o.nccl_log == NULL)
        return cmd_usage_error("gen: --gpus is required");
    if ((rc = check_generator_opts(name, &o)) != 0)
        return rc;
    cs_error_init(&err);
    if (gens[g].fn(&o, &sched, &err) != 0) {
        fprintf(stderr, "collsim: gen %s: %s\n", name, err.msg);
        return CS_EXIT_USAGE;
    }
    for (int i = 0; i < sched->nwarnings_kept; i++)
        fprintf(stderr, "collsim: gen %s: warning: %s\n", name, sched->warnings[i].msg);
    if (cs_sched_steps_warning(sched, warning, sizeof(warning)) != NULL)
        fprintf(stderr, "collsim: gen %s: warning: %s (predict simulates it as a what-if)\n", name,
                warning);
    rc = cs_sched_write_xml_file(sched, path, &err);
    cs_sched_free(sched);
    if (rc) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}
