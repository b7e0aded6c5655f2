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

static const char calibrate_usage[] =
    "usage: collsim calibrate fit FILE... [--link nvlink|pcie|net] [--proto LL|LL128|Simple|auto]\n"
    "           [--collective allreduce|allgather|reducescatter|sendrecv] [--ranks N]\n"
    "           [--sizes MIN:MAX] [--segments auto|1..4] [--min-sizes K] [--robust]\n"
    "           [--intercept step|deploy] [--set KEY=VALUE]... [--only-fitted]\n"
    "           [-o PARAMS] [--report FILE]\n"
    "\n"
    "Fit platform parameters to measurements and write them as <prop> lines (the keys of\n"
    "src/params.h; -o, default stdout), each after a comment naming the fit and the data; keys\n"
    "no series fits keep their prior (omitted with --only-fitted). --report FILE (- for stdout)\n"
    "writes a Markdown report: per series the segments with alpha and beta, 95% intervals,\n"
    "flags, and the residual at every size.\n"
    "\n"
    "Fit: t = alpha + x/beta by weighted least squares (weights 1/t^2), alpha >= 0 and\n"
    "1/beta >= 0 (clamped and flagged), up to 4 segments with breakpoints at measured sizes\n"
    "chosen by BIC (--segments fixes the number, --min-sizes the sizes per segment, default 3),\n"
    "--robust adds Huber reweighting. Intervals: Student t on the WLS covariance.\n"
    "\n"
    "Inputs, told apart by their header:\n"
    "  measurement tables (size_bytes,time_us,algbw_GBps,busbw_GBps,placement,...): a ring\n"
    "    collective over n ranks (--ranks, else inferred from busbw/algbw) takes nsteps steps\n"
    "    (AllReduce 2(n-1), AllGather and ReduceScatter n-1) of S/n bytes, so the fit is on\n"
    "    x = nsteps*S/n: t = launch + deploy + nsteps*call + x/B. Segments map to protocols in\n"
    "    NCCL's order by size (LL, [LL128 on nvlink], Simple; --proto forces one).\n"
    "      cs.call_s.P.LINK   (segment intercept - cs.launch_s - cs.deploy_s) / nsteps\n"
    "      cs.deploy_s        with --intercept deploy: first intercept - launch - nsteps*call\n"
    "      cs.link_Bps.LINK   B of the last (Simple) segment: the ring's bus bandwidth\n"
    "    Time missing: derived from busbw. Tables with n_gpus,ring_steps columns fit\n"
    "    t = launch + steps*call: cs.launch_s and cs.call_s.P.LINK (P default LL); they are read\n"
    "    first and their launch attributes the other tables' intercepts.\n"
    "  harness CSVs (calibration.md 3.3): per-op time = time_s/ops against bytes, one series per\n"
    "    test/mech/op/src/dst/concurrent/nblocks/nthreads/chunk_bytes (chunk_bytes equal to\n"
    "    bytes, as in protocol tests, joins the sizes into one series); rows not ok are skipped.\n"
    "      mech launch                  cs.launch_s (median)\n"
    "      mech ll|ll128|simple         cs.tb_Bps.P (1 block: last segment's beta),\n"
    "                                   cs.call_s.P.LINK (first intercept; needs --link)\n"
    "      op copy, local, 1 block      cs.copy_Bps = 2 beta (read + write)\n"
    "      op reduce|reduce2, local,    cs.reduce_Bps = 3 beta (two reads, one write)\n"
    "        1 block\n"
    "      op copy, src != dst          cs.link_Bps.LINK\n"
    "      flag_pingpong, src != dst    cs.link_lat_s.LINK = intercept / 2\n"
    "    Several series on one key: the median.\n"
    "--set KEY=VALUE changes a prior (e.g. cs.launch_s used to attribute intercepts).\n";

static const char validate_usage[] =
    "usage: collsim validate CASES [-o DIR] [--baseline FILE] [--tolerance FRACTION]\n"
    "\n"
    "Compare predictions with published measurements. CASES has one case per line (# starts\n"
    "a comment; `#: NAME: text` after a case adds a note to its section of the summary):\n"
    "  NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL [OPTION=VALUE...]\n"
    "MEASUREMENT is a table in the shared measurements schema (shared:FILE reads\n"
    "$CS_SHARED_DATA/measurements/FILE, default ../shared/data); SCHEDULE an MSCCL XML or\n"
    "gen:SPEC (collsim predict --gen SPEC); PLATFORM a platform file; PROTOCOL LL, LL128,\n"
    "Simple, or fastest[:P,P...] (predict each, keep the fastest per size; default all three).\n"
    "Options: ranks=N and coll=allreduce|allgather|reducescatter (to derive times from busbw),\n"
    "set=KEY=VALUE (passed to predict --set), params=FILE (every <prop> of a calibrate fit\n"
    "output as --set), fit=MIN:MAX (sizes used to fit the platform: the summary reports the\n"
    "others, held out), sizes=MIN:MAX (sizes compared), target=nvswitch8|other.\n"
    "Each case runs `collsim predict` (this binary) once per protocol, then writes into DIR\n"
    "(default: the directory of CASES) NAME.csv (size, measured, predicted, error %),\n"
    "NAME.gp and NAME.svg (gnuplot, log-log), summary.md (median and max |error| per size\n"
    "band, targets met or missed by how much) and summary.csv. With --baseline (a committed\n"
    "summary.csv) it exits 1 when a median or max |error| exceeds the baseline's by more\n"
    "than the tolerance (default 0.02, i.e. 2 points).\n";
static const char verify_usage[] =
    "usage: collsim verify [--max-errors N] [-q] FILE...\n"
    "\n"
    "Check MSCCL XML schedules (FILE, or - for stdin). Structure: dense ids, one threadblock per\n"
    "connection, sends and receives matching per connection, offsets within the buffers, the\n"
    "runtime's limits, and no deadlock (a cycle through dependencies, threadblock order and\n"
    "send/receive matching). Data: a symbolic execution of every chunk, like msccl-tools Check():\n"
    "each output chunk must hold exactly what the collective requires (allreduce, allgather,\n"
    "reduce_scatter, alltoall; custom gets the structural checks only). The schedule runs in two\n"
    "orders that both meet every wait; outputs that differ reveal a missing dependency (a race).\n"
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

static const char diff_usage[] =
    "usage: collsim diff A.xml B.xml\n"
    "\n"
    "Compare two schedules. Each real step's dependencies count as a set (its own plus those of\n"
    "the nops before it), since msccl-tools orders them arbitrarily. Exit 0 when equal; 1 when\n"
    "they differ, naming the first difference (GPU, threadblock, step, attribute, both values);\n"
    "2 when a file cannot be read.\n";
static const char platform_usage[] =
    "usage: collsim platform FAMILY [--nodes N] [--gpus-per-node N] [--rows R --columns C]\n"
    "                        [--between pcie|net] [--params FILE ...] [--set KEY=VALUE ...]\n"
    "                        [-o FILE]\n"
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
    "--params FILE sets parameters from a props file (what `collsim calibrate fit` writes:\n"
    "<!-- SOURCE --> and <prop id=\"KEY\" value=\"V\"/> lines); each prop's comment becomes its\n"
    "source in the platform. --set KEY=VALUE overrides any parameter (keys in src/params.h,\n"
    "e.g. cs.link_Bps.pcie=16e9). Options apply in order; the last setting of a key wins.\n"
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
static const char sweep_usage[] =
    "usage: collsim sweep SPEC [-j N] [-o OUT.csv] [--results DIR] [--quiet]\n"
    "       collsim sweep SPEC --point K --out FILE.csv\n"
    "       collsim sweep --list SPEC [--shard-dir DIR]\n"
    "       collsim sweep --merge OUT.csv SHARD.csv...\n"
    "\n"
    "Run a what-if sweep: SPEC (format in docs/sweep.md) names the axes (schedule file or\n"
    "generator and its parameters, protocol, platform family and its parameters, absolute or\n"
    "scaled link bandwidths and latencies) and the sizes. Every point of the Cartesian product\n"
    "runs 'collsim platform' and 'collsim predict' as child processes; the result is one CSV\n"
    "with a column per key (point first) and the columns of 'collsim predict --format csv'.\n"
    "\n"
    "  -j N            points run in parallel (default: the number of cores)\n"
    "  -o OUT.csv      write the joined CSV there (atomically) instead of stdout\n"
    "  --results DIR   one file per finished point (default: ./NAME.results for NAME.sweep).\n"
    "                  Running the same command again skips finished points: a killed sweep\n"
    "                  loses only the points that were running.\n"
    "  --point K --out FILE   run point K (0-based) alone and write its rows to FILE\n"
    "  --list          print one shell command per point (for GNU parallel or a Slurm array)\n"
    "  --shard-dir DIR where the listed commands write shard-K.csv (default: .)\n"
    "  --merge OUT.csv SHARD.csv...   join shards, ordered by point (OUT.csv - is stdout)\n"
    "  --quiet         no progress or summary on stderr\n"
    "\n"
    "Progress and an ETA go to stderr when it is a terminal. A point whose prediction\n"
    "deadlocks is a result (status deadlock), not a failure. Exit 2 when a point fails.\n";

static const char tune_usage[] =
    "usage: collsim tune SWEEP.csv [--where KEY=VALUE]... [-o DIR] [--schedule-dir DIR]\n"
    "                    [--extend]\n"
    "\n"
    "From the predictions of a sweep (a CSV of 'collsim sweep'), pick for every size the\n"
    "fastest variant (the schedule columns: schedule or gen.*, and protocol) that does not\n"
    "deadlock, and join consecutive sizes with the same winner into size ranges. The other axis\n"
    "columns describe the platform and must hold one value: select one with --where.\n"
    "\n"
    "Prints the plan: each range's byte window, the sizes measured in it and its variant.\n"
    "  -o DIR          also write DIR/plan.txt and, per range, DIR/NN-VARIANT.xml: the schedule\n"
    "                  with minBytes/maxBytes set to the window (and outofplace when missing),\n"
    "                  numbered so that the MSCCL executor, which takes the first matching file\n"
    "                  in path order, selects them by size. Generator variants run 'collsim gen'.\n"
    "  --where K=V     keep only rows whose column K is V (repeatable)\n"
    "  --schedule-dir DIR  resolve relative 'schedule' values there (the sweep file's folder)\n"
    "  --extend        the first window starts at 0 bytes and the last has no upper limit\n"
    "                  (maxBytes 0), instead of stopping at the smallest and largest sizes\n"
    "                  measured\n";

static const char regress_usage[] =
    "usage: collsim regress BASELINE.csv [--tolerance PCT] [--update] [--subset N] [-j N]\n"
    "\n"
    "Re-run every prediction of a baseline table and report those that moved. The baseline's\n"
    "columns: schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status. schedule is an\n"
    "MSCCL XML path or gen:SPEC (a generator spec, as 'predict --gen'); platform a platform\n"
    "file; protocol LL, LL128, Simple or - (the schedule's own). Relative paths are looked up\n"
    "beside the baseline, then in each folder above it (schedules/ and platforms/ of the\n"
    "repository for results/regression/baseline.csv).\n"
    "\n"
    "Prints a table of the predictions whose time moved by more than the tolerance or whose\n"
    "status changed (ok, deadlock), with old and new time and the change, then a summary.\n"
    "  --tolerance PCT  relative change allowed, in percent (default 1)\n"
    "  --update         rewrite the baseline with the new predictions (after a deliberate\n"
    "                   change); exit 0\n"
    "  --subset N       check only N (schedule, platform, protocol) groups, spread over the\n"
    "                   table (a quick check, as 'make check' runs)\n"
    "  -j N             predictions run in parallel (default: the number of cores)\n"
    "Exit 0: nothing moved; 1: something moved; 2: bad baseline or a prediction failed.\n";

static const char plot_usage[] =
    "usage: collsim plot CSV... [-o OUT.png|OUT.svg] [--metric time|busbw|both]\n"
    "                    [--best COLUMN] [--where KEY=VALUE]... [--title T] [--script FILE]\n"
    "\n"
    "Draw prediction CSVs ('collsim predict --format csv') or sweep CSVs ('collsim sweep') with\n"
    "gnuplot. One line per variant: the axis columns that vary name it (several plain\n"
    "prediction CSVs: their file names). Deadlocked sizes are left out of the lines.\n"
    "  -o OUT          PNG or SVG, by extension (default: the first CSV's name, .png)\n"
    "  --metric M      time and bus bandwidth against size, log-log, side by side (both, the\n"
    "                  default), or one of them\n"
    "  --best COLUMN   instead, a map: for each size (x) and value of COLUMN (y), the variant\n"
    "                  (the other varying columns) with the least time; cells where every\n"
    "                  variant deadlocks are marked\n"
    "  --where K=V     plot only rows whose column K is V (repeatable)\n"
    "  --title T       the figure's title\n"
    "  --script FILE   write the gnuplot script (data inline) there instead of running gnuplot\n"
    "gnuplot is found in PATH, or named by $GNUPLOT.\n";

const struct cmd cs_cmds[] = {
    {"fmt", cmd_fmt, "print a schedule back as MSCCL XML", fmt_usage},
    {"info", cmd_info, "summarise a schedule", info_usage},
    {"calibrate", cmd_calibrate, "fit platform parameters to measurements", calibrate_usage},
    {"validate", cmd_validate, "compare predictions with measurements", validate_usage},
    {"verify", cmd_verify, "check a schedule's structure and data", verify_usage},
    {"gen", cmd_gen, "generate a schedule (hierarchical, ring, allpairs)", gen_usage},
    {"diff", cmd_diff, "compare two schedules up to dependency order", diff_usage},
    {"platform", cmd_platform, "write a SimGrid platform file for an A100 machine", platform_usage},
    {"predict", cmd_predict, "predict a schedule's time per buffer size on a platform",
     predict_usage},
    {"sweep", cmd_sweep, "run a what-if sweep of predictions", sweep_usage},
    {"tune", cmd_tune, "pick the fastest schedule per size range from a sweep", tune_usage},
    {"regress", cmd_regress, "re-run a baseline of predictions and report what moved",
     regress_usage},
    {"plot", cmd_plot, "draw prediction or sweep CSVs with gnuplot", plot_usage},
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
