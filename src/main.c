/* main.c: the collsim program: dispatches subcommands, git style. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const char fmt_usage[] =
    "usage: collsim fmt FILE\n"
    "\n"
    "Read an MSCCL XML schedule (FILE, or - for stdin) and print it back in the form msccl-tools\n"
    "writes. For a file written by msccl-tools the output is byte-identical to the input.\n";

static const char info_usage[] =
    "usage: collsim info FILE\n"
    "\n"
    "Summarise an MSCCL XML schedule: collective, protocol, GPUs, channels, chunks per loop,\n"
    "threadblocks per GPU, steps per threadblock, step types and connections.\n";

static const char verify_usage[] =
    "usage: collsim verify [--max-errors N] [-q] FILE...\n"
    "\n"
    "Check MSCCL XML schedules (FILE, or - for stdin). Structure: dense ids, one threadblock per\n"
    "connection, sends and receives matching per connection, offsets within the buffers, the\n"
    "runtime's limits, and no deadlock (a cycle through dependencies, threadblock order and\n"
    "send/receive matching). Data: a symbolic execution of every chunk, like msccl-tools Check():\n"
    "each output chunk must hold exactly what the collective requires (allreduce, allgather,\n"
    "reduce_scatter, alltoall; custom gets the structural checks only).\n"
    "\n"
    "Each problem is one line on stderr, FILE:LINE: message, with the rank, threadblock, step,\n"
    "buffer and chunk concerned; then a verdict line per file on stdout.\n"
    "\n"
    "  --max-errors N  show at most N problems per file (default 20), count the rest\n"
    "  -q, --quiet     show errors only, no warnings or notes\n"
    "\n"
    "Exit status: 0 every file is correct; 1 some file is structurally valid but computes the\n"
    "wrong data; 2 some file is unreadable or structurally invalid (a deadlock included).\n";
static const char gen_usage[] =
    "usage: collsim gen hierarchical|ring|allpairs --gpus G [--columns C] [--instances I]\n"
    "                  [--channels K] [--protocol LL|LL128|Simple] [--msccl-tools-compat]\n"
    "                  [--dependence-nops on|off] [-o FILE]\n"
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
    "                buffer, reduce-scatter then all-gather.\n"
    "  allpairs      each rank reduces its 1/G of the buffer from all others, then sends it to all.\n"
    "--instances replicates the schedule on its own channels and threadblocks (default 1);\n"
    "--protocol defaults to Simple. Parameters that cannot work, or a schedule beyond the runtime's\n"
    "limits (32 channels, 64 steps per threadblock, cnt < 72, depid <= 127), exit 2.\n";

static const char diff_usage[] =
    "usage: collsim diff A.xml B.xml\n"
    "\n"
    "Compare two schedules. Each real step's dependencies count as a set (its own plus those of\n"
    "the nops before it), since msccl-tools orders them arbitrarily. Exit 0 when equal; 1 when\n"
    "they differ, naming the first difference (GPU, threadblock, step, attribute, both values);\n"
    "2 when a file cannot be read.\n";
static const char platform_usage[] =
    "usage: collsim platform FAMILY [--nodes N] [--gpus-per-node N] [--rows R --columns C]\n"
    "                        [--between pcie|net] [--set KEY=VALUE ...] [-o FILE]\n"
    "\n"
    "Write a SimGrid platform file (DTD 4.1) for an A100 machine, with the timing model's\n"
    "parameters as <prop>s on the root zone, each after a comment naming its source.\n"
    "One host per GPU (gpu0, gpu1, ...), split-duplex links carrying a cs.class prop\n"
    "(nvlink, pcie or net) that selects the per-call overhead. FAMILY is one of:\n"
    "  a100-pcie-4gpu      A100 PCIe cards (--gpus-per-node, default 4) behind two CPU sockets\n"
    "  a100-pcie-nvbridge  NVLink-bridged pairs of A100 PCIe cards joined by PCIe\n"
    "  a100-hier           --rows R GPUs per column on NVLink, --columns C joined by\n"
    "                      --between pcie (default) or net; gpu c*R+r is row r of column c\n"
    "  dgx-a100, ndv4      8 A100 SXM on NVSwitch, one HDR NIC per GPU; --nodes N nodes\n"
    "--set KEY=VALUE overrides any parameter (keys in src/params.h, e.g. cs.link_Bps.pcie=16e9).\n"
    "Without -o the file goes to stdout.\n";

static const char predict_usage[] =
    "usage: collsim predict SCHEDULE.xml|--gen SPEC --platform FILE [--protocol LL|LL128|Simple]\n"
    "                       [-b MIN] [-e MAX] [-f FACTOR] [-d float|half|bfloat16|double]\n"
    "                       [--format table|csv|json] [--set KEY=VALUE ...] [--verbose]\n"
    "                       [--trace FILE.json] [--stats] [--max-events N]\n"
    "\n"
    "Replay the schedule on the platform (SimGrid) for buffer sizes MIN, MIN*FACTOR, ... up to\n"
    "MAX (bytes of the whole buffer as nccl-tests prints them; suffixes K, M, G; defaults 1K,\n"
    "1G, 2) and print the predicted time, algbw and busbw (nccl-tests factors) and a status:\n"
    "ok, or deadlock when the 8-slot FIFO credits or the flags never let it finish; then the\n"
    "first deadlock's wait-for report. Sizes are rounded up to a multiple of nchunksperloop x\n"
    "the type size. --protocol overrides the schedule's; --set overrides platform parameters.\n"
    "CSV header: size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status.\n"
    "--trace FILE.json writes a Chrome/Perfetto trace (open it in ui.perfetto.dev or\n"
    "chrome://tracing) of the largest size: a process per GPU, a track per threadblock, a\n"
    "slice per primitive call with its waits, flow arrows from sends to receives, link\n"
    "utilisation counters; microseconds of simulated time. --stats prints, for the largest size,\n"
    "bytes and utilisation per link, busy and waiting time per threadblock, and the critical\n"
    "path (after the table; on stderr with --format csv or json). Both record at most\n"
    "--max-events events (default 1000000) and fail with exit 2 beyond: trace one size with\n"
    "-b S -e S.\n"
    "Exit status: 0 all sizes finish, 1 some size deadlocks, 2 bad input (including a platform\n"
    "with fewer GPUs than the schedule).\n";

const struct cmd cs_cmds[] = {
    {"fmt", cmd_fmt, "print a schedule back as MSCCL XML", fmt_usage},
    {"info", cmd_info, "summarise a schedule", info_usage},
    {"verify", cmd_verify, "check a schedule's structure and data", verify_usage},
    {"gen", cmd_gen, "generate a schedule (hierarchical, ring, allpairs)", gen_usage},
    {"diff", cmd_diff, "compare two schedules up to dependency order", diff_usage},
    {"platform", cmd_platform, "write a SimGrid platform file for an A100 machine", platform_usage},
    {"predict", cmd_predict, "predict a schedule's time per buffer size on a platform",
     predict_usage},
    {NULL, NULL, NULL, NULL},
};

static void print_main_help(void)
{
    printf("usage: collsim [--version] [--help] COMMAND [ARGS]\n"
           "\n"
           "collsim simulates GPU collective schedules (MSCCL XML) on SimGrid models of A100\n"
           "fabrics: it checks them, generates them and predicts how long they take.\n"
           "\n"
           "Commands:\n");
    for (const struct cmd *c = cs_cmds; c->name != NULL; c++)
        printf("  %-10s %s\n", c->name, c->summary);
    printf("\n"
           "'collsim help COMMAND' or 'collsim COMMAND --help' describes one command.\n"
           "Exit status: 0 success; 1 valid input but a negative answer (verify found errors,\n"
           "a prediction deadlocked); 2 usage errors and unreadable or invalid input.\n");
}

static const struct cmd *find_cmd(const char *name)
{
    for (const struct cmd *c = cs_cmds; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

int main(int argc, char **argv)
{
    const struct cmd *c;

    if (argc < 2) {
        print_main_help();
        return CS_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_main_help();
        return CS_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("collsim %s\n", PACKAGE_VERSION);
        return CS_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) {
            print_main_help();
            return CS_EXIT_OK;
        }
        if (find_cmd(argv[2]) == NULL)
            return cmd_usage_error("'%s' is not a collsim command; see 'collsim --help'", argv[2]);
        cmd_print_help(argv[2]);
        return CS_EXIT_OK;
    }
    c = find_cmd(argv[1]);
    if (c == NULL)
        return cmd_usage_error("'%s' is not a collsim command; see 'collsim --help'", argv[1]);
    if (cmd_wants_help(argc - 1, argv + 1)) {
        cmd_print_help(c->name);
        return CS_EXIT_OK;
    }
    return c->run(argc - 1, argv + 1);
}
