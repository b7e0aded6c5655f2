/* cmd_gen.c: `collsim gen`: write a natively generated schedule as MSCCL XML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "gen.h"
#include "xml.h"

const char cmd_gen_usage[] =
    "usage: collsim gen hierarchical|ring|allpairs --gpus G [--columns C] [--instances I]\n"
    "                  [--channels K] [--per-node N] [--protocol LL|LL128|Simple]\n"
    "                  [--msccl-tools-compat] [--dependence-nops on|off] [-o FILE]\n"
    "\n"
    "Generate an AllReduce schedule natively and write it as MSCCL XML (stdout without -o).\n"
    "  hierarchical  GPUs in G/C rows of C columns (default C = 2): reduce-scatter in each column,\n"
    "                then across each row, all-gather across rows, then in each column. Default:\n"
    "                the corrected algorithm; --msccl-tools-compat: the published seed\n"
    "                allreduce_a100_pcie_hierarchical.py exactly as msccl-tools lowers it, bug\n"
    "                included (C = 2 only). --dependence-nops overrides msccl-tools'\n"
    "                dependence_nop (on for the seed, off by default: with it the corrected\n"
    "                algorithm has a dependency cycle).\n"
    "  ring          NCCL-style ring: K rings (--channels, default 1), each over its share of the\n"
    "                buffer, reduce-scatter then all-gather. --per-node N (GPUs per node, dividing\n"
    "                G) visits the GPUs node by node with ring k starting each node at its GPU\n"
    "                k mod N, so the rings leave each node through different GPUs and NICs, as\n"
    "                NCCL spreads its channels (spec key per_node).\n"
    "  allpairs      each rank reduces its 1/G of the buffer from all others, then sends it to all.\n"
    "--instances replicates the schedule on its own channels and threadblocks (default 1);\n"
    "--protocol defaults to Simple. Parameters that cannot work, or a schedule beyond the runtime's\n"
    "limits (32 channels, 64 steps per threadblock, cnt < 72, depid <= 127), exit 2.\n";

static int count_arg(const char *opt, const char *v, int *out)
{
    char *end;
    long x;

    if (v == NULL)
        return cmd_usage_error("gen: %s needs a value", opt);
    x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < 0 || x > 1000000)
        return cmd_usage_error("gen: %s wants a non-negative integer, not '%s'", opt, v);
    *out = (int)x;
    return 0;
}

int cmd_gen(int argc, char **argv)
{
    struct cs_gen_opts o;
    struct cs_sched *sched = NULL;
    struct cs_error err;
    const char *name, *path = "-";
    int rc, inst_given = 0;

    if (argc < 2)
        return cmd_usage_error("gen needs a generator (hierarchical, ring, allpairs); see 'collsim "
                               "help gen'");
    name = argv[1];
    memset(&o, 0, sizeof(o));
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--gpus") == 0) {
            if (count_arg(a, v, &o.gpus))
                return CS_EXIT_USAGE;
            i++;
        } else if (strcmp(a, "--columns") == 0) {
            if (count_arg(a, v, &o.columns))
                return CS_EXIT_USAGE;
            if (o.columns == 0)
                return cmd_usage_error("gen: --columns must be at least 2");
            i++;
        } else if (strcmp(a, "--instances") == 0) {
            if (count_arg(a, v, &o.instances))
                return CS_EXIT_USAGE;
            inst_given = 1;
            i++;
        } else if (strcmp(a, "--channels") == 0) {
            if (count_arg(a, v, &o.channels))
                return CS_EXIT_USAGE;
            if (o.channels == 0)
                return cmd_usage_error("gen: --channels must be at least 1");
            i++;
        } else if (strcmp(a, "--per-node") == 0) {
            if (count_arg(a, v, &o.per_node))
                return CS_EXIT_USAGE;
            if (o.per_node == 0)
                return cmd_usage_error("gen: --per-node must be at least 1");
            i++;
        } else if (strcmp(a, "--protocol") == 0) {
            if (v == NULL)
                return cmd_usage_error("gen: --protocol needs LL, LL128 or Simple");
            o.proto = cs_proto_parse(v);
            if (o.proto == 0)
                return cmd_usage_error("gen: unknown protocol '%s' (LL, LL128, Simple)", v);
            i++;
        } else if (strcmp(a, "--msccl-tools-compat") == 0) {
            o.compat = 1;
        } else if (strcmp(a, "--dependence-nops") == 0) {
            if (v == NULL || (strcmp(v, "on") != 0 && strcmp(v, "off") != 0))
                return cmd_usage_error("gen: --dependence-nops takes on or off");
            o.nops = strcmp(v, "on") == 0 ? 1 : 2;
            i++;
        } else if (strcmp(a, "-o") == 0) {
            if (v == NULL)
                return cmd_usage_error("gen: -o needs a file name");
            path = v;
            i++;
        } else {
            return cmd_usage_error("gen: unknown option '%s'; see 'collsim help gen'", a);
        }
    }
    if (o.gpus == 0)
        return cmd_usage_error("gen: --gpus is required");
    if (inst_given && o.instances == 0)
        return cmd_usage_error("gen: --instances must be at least 1");
    if (strcmp(name, "hierarchical") != 0 && (o.columns || o.compat || o.nops))
        return cmd_usage_error(
            "gen %s: --columns, --msccl-tools-compat and --dependence-nops are for hierarchical",
            name);
    if (strcmp(name, "ring") != 0 && (o.channels || o.per_node))
        return cmd_usage_error("gen %s: --channels and --per-node are for ring", name);
    cs_error_init(&err);
    if (strcmp(name, "hierarchical") == 0)
        rc = cs_gen_hierarchical(&o, &sched, &err);
    else if (strcmp(name, "ring") == 0)
        rc = cs_gen_ring(&o, &sched, &err);
    else if (strcmp(name, "allpairs") == 0)
        rc = cs_gen_allpairs(&o, &sched, &err);
    else
        return cmd_usage_error("gen: unknown generator '%s' (hierarchical, ring, allpairs)", name);
    if (rc) {
        fprintf(stderr, "collsim: gen %s: %s\n", name, err.msg);
        return CS_EXIT_USAGE;
    }
    rc = cs_sched_write_xml_file(sched, path, &err);
    cs_sched_free(sched);
    if (rc) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}
