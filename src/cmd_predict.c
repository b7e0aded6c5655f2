/* cmd_predict.c: `collsim predict`: completion time of a schedule per buffer size, like nccl-tests.
 *
 * Sizes are aligned down as nccl-tests aligns them, then to a multiple of the schedule's
 * granularity (cs_predict_align: the executor runs MSCCL on no other count); the aligned size is
 * what is simulated and printed, the size asked for is nominal_bytes in CSV and JSON. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "fdio.h"
#include "gen.h"
#include "gitsha.h" /* CS_BUILD_GIT_SHA: the commit make saw, as --version names it */
#include "nccl.h"
#include "predict.h"
#include "progress.h"
#include "report.h"
#include "stats.h"
#include "timeline.h"
#include "trace.h"
#include "util.h"
#include "xml.h"

const char cmd_predict_usage[] =
    "usage: collsim predict SCHEDULE.xml|--gen SPEC --platform FILE [--protocol LL|LL128|Simple]\n"
    "                       [-b MIN] [-e MAX] [-f FACTOR] [-d TYPE|all]\n"
    "                       [--format table|csv|json] [--set KEY=VALUE ...] [--verbose]\n"
    "                       [--trace FILE.json] [--stats] [--max-events N] [--no-extrapolate]\n"
    "                       [--no-fold] [--no-direct] [--representatives] [--compare LOG]\n"
    "                       [--vs-nccl [--nccl-version V] [--nccl-channels K] [--nccl-nodes M]\n"
    "                        [--nccl-algo ring|tree] [--nccl-log LOG]]\n"
    "                       [--quiet] [--verify]\n"
    "\n"
    "Replay the schedule on the platform (SimGrid) for buffer sizes MIN, MIN*FACTOR, ... up to\n"
    "MAX (bytes of the whole buffer as nccl-tests prints them; suffixes K, M, G; defaults 1K,\n"
    "1G, 2) and print the predicted time, algbw and busbw (nccl-tests factors) and a status:\n"
    "ok, or deadlock when the 8-slot FIFO credits or the flags never let it finish; then the\n"
    "first deadlock's wait-for report. hang (no time, at every size): a GPU has more\n"
    "threadblocks than it keeps resident, the platform's cs.gpu_sms x cs.ctas_per_sm (108 x 1 on\n"
    "an A100: the executor's kernel fits one per SM); they wait on each other, so the runtime\n"
    "would hang. An LL128 schedule whose connections cross PCIe within a node (NCCL enables LL128\n"
    "on NVLink paths only: \"may cause silent data corruption\") is predicted with a warning on\n"
    "stderr and after the table (JSON: a warning field per row); routes that cross the network\n"
    "are not flagged. --protocol overrides the schedule's (for --gen nccl it goes into the spec:\n"
    "NCCL's channels and threads at the size are that protocol's); --set overrides platform\n"
    "parameters.\n"
    "--platform takes any SimGrid 3.32 platform whose GPUs are hosts gpu0..gpuN-1 (<host>s or\n"
    "a <cluster>'s, of any topology); - reads it from stdin.\n"
    "Sizes are aligned down as nccl-tests aligns them (whole elements; 16 bytes per rank for\n"
    "allgather, reduce_scatter and alltoall), then down to a multiple of nchunksperloop\n"
    "elements, the only counts the executor runs with MSCCL (a note under the table says the\n"
    "granularity); sizes that align down to 0 are skipped. The aligned size is simulated and\n"
    "printed; the size asked for is nominal_bytes.\n"
    "CSV header: size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status,nominal_bytes;\n"
    "CSV's and JSON's count is the whole buffer's elements (size_bytes / the type's size),\n"
    "the table's nccl-tests' count (per rank for allgather, reduce_scatter and alltoall).\n"
    "The table's header names collsim's version and git commit, SimGrid's and libxml2's\n"
    "versions and the platform file's FNV-1a 64 hash; JSON has them in a metadata object, CSV\n"
    "(which every collsim reader must take as a plain table) on stderr, that `#` line first\n"
    "among the notes after the rows.\n"
    "--compare LOG adds measured times from LOG, a measurement table (size_bytes,time_us,...,\n"
    "placement) or raw nccl-tests output: matched by size (the aligned one, else the nominal),\n"
    "out-of-place rows where the log has both placements (the median of repeated rows), and\n"
    "the error of the prediction, 100 (predicted - measured) / measured: table columns\n"
    "measured (us) and error (%) after the nccl-tests columns, CSV columns measured_us,error_pct\n"
    "appended, JSON fields measured_us, error_pct (and measured_in_place_us,\n"
    "error_in_place_pct) and a compare object; a size the log lacks shows `-` (CSV: empty,\n"
    "JSON: null). A summary line gives the median and largest |error|.\n"
    "--trace FILE.json writes a Chrome/Perfetto trace (open it in ui.perfetto.dev or\n"
    "chrome://tracing) of the largest size: a process per GPU, a track per threadblock, a\n"
    "slice per primitive call with its waits, flow arrows from sends to receives, link\n"
    "utilisation counters; microseconds of simulated time. --stats prints, for the largest size,\n"
    "bytes and utilisation per link, busy and waiting time per threadblock, and the critical\n"
    "path (after the table; on stderr with --format csv or json). Both record at most\n"
    "--max-events events (default 1000000) and fail with exit 2 beyond: trace one size with\n"
    "-b S -e S.\n"
    "Long loops are extrapolated: a replay of 5 loop iterations (19 to 26 when that one has not\n"
    "settled, or 8 when those would have too many events) compares its iterations as it goes,\n"
    "from a digest of each threadblock's events and a snapshot of its FIFO state where each\n"
    "iteration begins, and stops as soon as a pair of iterations it needs differs; once every\n"
    "threadblock repeats its events of one iteration (or a period of up to 8) a fixed time\n"
    "later, the remaining ones add that time each (within 1e-6 of the full replay; --trace and\n"
    "--stats replay in full). --no-extrapolate replays every iteration.\n"
    "Symmetric runs are folded: when shifting every rank by k maps the schedule, its routes\n"
    "and their links onto themselves (proven before each replay), ranks 0..k-1 are replayed for\n"
    "all, with the same results; a folded run that deadlocks is replayed in full for its\n"
    "report, and --trace replays every rank. --no-fold replays every rank; --verbose and a `#`\n"
    "line after the table say which symmetry was used.\n"
    "A --gen ring too large to write whole (over 8388608 steps: 2048 GPUs and up, to 8192) is\n"
    "written by its representatives: its first GPUs only (up to 2^20 steps), each other GPU\n"
    "generated in turn, proven the image of one of them under a rank shift, and dropped; it is\n"
    "replayed folded only (not with --no-fold, --trace, --stats or --verify, which need every\n"
    "GPU). --representatives writes any --gen ring so.\n"
    "Where no link changes in time, the replay keeps its own clock and events instead of\n"
    "SimGrid's engine, and gives each transfer the share of its links SimGrid's max-min\n"
    "sharing gives it: the same times (--verbose says `direct`; not with --trace or --stats,\n"
    "whose events at one instant it would order differently); --no-direct runs SimGrid's\n"
    "engine always.\n"
    "The table has nccl-tests' columns (busbw is field 8, as `awk '{print $8}'` expects), units\n"
    "line and `# Avg bus bandwidth` footer; count is per rank for allgather, reduce_scatter and\n"
    "alltoall, as nccl-tests prints it. -d takes nccl-tests' types (int8 uint8 int32 uint32\n"
    "int64 uint64 half float double bfloat16 f8e4m3 f8e5m2) or all (each type in turn).\n"
    "-g G (nccl-tests' GPUs per thread) sets cs.gpus_per_process: one thread launches its G\n"
    "GPUs' kernels in turn, cs.launch_gpu_s apart (default 1: a process per GPU, as mpirun).\n"
    "nccl-tests options a simulation has no use for are accepted and ignored, so that a pasted\n"
    "command line runs: -n -w -m -c -t -G -a -z -y -T -C -R -r N (iterations, warm-up,\n"
    "aggregation, data check, threads per process, CUDA graphs, averaging, blocking,\n"
    "null stream, timeout, CPU time, buffer registration, root) and -o sum|prod|min|max|avg|all\n"
    "(every reduction costs the same in the model). -i (linear steps) is refused: use -f.\n"
    "--vs-nccl also predicts, at each size, what NCCL V (2.8 on, default 2.12.12) runs\n"
    "for the schedule's collective on the same platform and GPUs (`collsim gen nccl`): a ring\n"
    "in rank order 0..G-1 on NCCL's channels and threads at that size out of a communicator\n"
    "of K channels (default 24); with --nccl-nodes M, node by node, ring k rotated by k\n"
    "inside each node, so the rings leave a node through different GPUs and NICs, and for\n"
    "AllReduce NCCL's tree where NCCL's tuning model, per protocol, finds it faster (the\n"
    "model sees the platform's NVLink or PCIe link within a node and one NIC per GPU;\n"
    "--nccl-algo ring|tree forces one); AllToAll as all pairs in Simple. It runs the protocol\n"
    "NCCL's tuning model picks there (of those NCCL enables: LL128 on NVLink only), its\n"
    "threadblock narrowed to NCCL's threads, at the row's size (NCCL's kernel runs any whole\n"
    "count: a ring's chunks rounded up to 16 B, the last ones short or empty). Its protocol,\n"
    "channels, threads, time and the speed-up (NCCL time / schedule time; above 1: the\n"
    "schedule is faster) are added: in the table after the nccl-tests columns (busbw stays\n"
    "field 8), in CSV as the last columns\n"
    "nccl_protocol,nccl_channels,nccl_threads,nccl_time_us,speedup, in JSON as nccl and\n"
    "speedup members (nccl.algorithm: ring, tree or p2p; the table's and CSV's protocol reads\n"
    "PROTOCOL/tree for the tree). A custom collective exits 2. --nccl-log LOG (an\n"
    "NCCL_DEBUG=INFO log, `collsim nccl-log`) takes NCCL's communicator from the log: its\n"
    "nodes, channels and version where the options do not give them, and its rings' rank\n"
    "orders (the schedule's GPUs must be the log's ranks).\n"
    "--platform also takes a machine's own files (NCCL's topology XML, nvidia-smi topo -m,\n"
    "an INFO log) as `collsim platform from FILE` writes them: one file, the node count the\n"
    "log's (else 1).\n"
    "Rows are printed as each size is predicted, with progress and an ETA on stderr (one\n"
    "updating line on a terminal, else a line every 10 s, COLLSIM_PROGRESS_INTERVAL=SECONDS;\n"
    "--quiet or --verbose: none). A size the executor cannot run (more loop\n"
    "iterations than its flags count) is an `unsupported` row, with the reason after the table.\n"
    "Before the replay a schedule gets verify's structural checks (a generated one goes to the\n"
    "plan as the generator built it, with no XML written or read); --verify adds verify's\n"
    "symbolic data check and refuses (exit 2) a schedule whose result is wrong. Without it\n"
    "the data check is not run: the generators are tested for correctness, and a wrong result\n"
    "changes no time.\n"
    "Exit status: 0 all sizes finish, 1 some size deadlocks or hangs, 2 bad input (including a\n"
    "platform with fewer GPUs than the schedule, an unsupported size, sizes that all align\n"
    "down to 0, a --compare LOG that cannot be read, a schedule that\n"
    "`collsim verify` finds structurally invalid for another reason than a deadlock or too many\n"
    "threadblocks, and with --verify one whose data result is wrong).\n";

#define MAX_SETS 64

struct predict_args {
    struct cs_predict_input in;
    const char *sets[MAX_SETS];
    const char *dtype;
    long long minb, maxb, factor, max_events;
    enum cs_proto proto;
    enum cs_report_fmt fmt;
    int verbose, want_stats, no_extrapolate, quiet, no_fold, no_direct, reps;
    const char *trace_path;
    const char *compare;  /* --compare LOG */
    char gpus_set[64];    /* -g G: cs.gpus_per_process=G */
    char nccl_spec[4096]; /* --gen nccl:... with --protocol: the spec with protocol= added */
    int vs_nccl;          /* --vs-nccl: compare with nccl (version, channels) */
    struct cs_predict_vs_nccl nccl;
};

enum {
    OPT_GEN = 256,
    OPT_PROTOCOL,
    OPT_FORMAT,
    OPT_TRACE,
    OPT_MAX_EVENTS,
    OPT_SET,
    OPT_STATS,
    OPT_NO_EXTRAP,
    OPT_NO_FOLD,
    OPT_REPS,
    OPT_NO_DIRECT,
    OPT_IGNORED,
    OPT_PARALLEL_INIT,
    OPT_COMPARE,
    OPT_VS_NCCL,
    OPT_NCCL_VERSION,
    OPT_NCCL_CHANNELS,
    OPT_NCCL_NODES,
    OPT_NCCL_ALGO,
    OPT_NCCL_LOG,
    OPT_QUIET,
    OPT_VERIFY,
};

static const struct option predict_opts[] = {
    {"verbose", no_argument, NULL, 'v'},
    {"stats", no_argument, NULL, OPT_STATS},
    {"no-extrapolate", no_argument, NULL, OPT_NO_EXTRAP},
    {"no-fold", no_argument, NULL, OPT_NO_FOLD},
    {"representatives", no_argument, NULL, OPT_REPS},
    {"no-direct", no_argument, NULL, OPT_NO_DIRECT},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"platform", required_argument, NULL, 'p'},
    {"gen", required_argument, NULL, OPT_GEN},
    {"protocol", required_argument, NULL, OPT_PROTOCOL},
    {"minbytes", required_argument, NULL, 'b'},
    {"maxbytes", required_argument, NULL, 'e'},
    {"stepfactor", required_argument, NULL, 'f'},
    {"datatype", required_argument, NULL, 'd'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"max-events", required_argument, NULL, OPT_MAX_EVENTS},
    {"set", required_argument, NULL, OPT_SET},
    {"compare", required_argument, NULL, OPT_COMPARE},
    {"vs-nccl", no_argument, NULL, OPT_VS_NCCL},
    {"nccl-version", required_argument, NULL, OPT_NCCL_VERSION},
    {"nccl-channels", required_argument, NULL, OPT_NCCL_CHANNELS},
    {"nccl-nodes", required_argument, NULL, OPT_NCCL_NODES},
    {"nccl-algo", required_argument, NULL, OPT_NCCL_ALGO},
    {"nccl-log", required_argument, NULL, OPT_NCCL_LOG},
    /* nccl-tests' options that mean nothing to a simulation (accepted, checked, ignored) */
    {"iters", required_argument, NULL, 'n'},
    {"warmup_iters", required_argument, NULL, 'w'},
    {"agg_iters", required_argument, NULL, 'm'},
    {"check", required_argument, NULL, 'c'},
    {"ngpus", required_argument, NULL, 'g'},
    {"nthreads", required_argument, NULL, 't'},
    {"cudagraph", required_argument, NULL, 'G'},
    {"average", required_argument, NULL, 'a'},
    {"blocking", required_argument, NULL, 'z'},
    {"stream_null", required_argument, NULL, 'y'},
    {"timeout", required_argument, NULL, 'T'},
    {"report_cputime", required_argument, NULL, 'C'},
    {"local_register", required_argument, NULL, 'R'},
    {"root", required_argument, NULL, 'r'},
    {"op", required_argument, NULL, 'o'},
    {"parallel_init", required_argument, NULL, OPT_PARALLEL_INIT},
    {"stepbytes", required_argument, NULL, 'i'},
    {NULL, 0, NULL, 0},
};

/* An nccl-tests option a simulation ignores: its value must still be one nccl-tests takes. */
static int ignored_option(int c, const char *v)
{
    static const char *const ops[] = {"sum", "prod", "min", "max", "avg", "all"};
    char name[4] = {'-', (char)c, '\0', '\0'};
    long long x;

    if (c == 'i')
        return cmd_usage_error("-i (sizes in linear steps) is not supported; use -f FACTOR");
    if (c != 'o')
        return cmd_opt_ll(c == OPT_PARALLEL_INIT ? "--parallel_init" : name, v, c == 'r' ? -1 : 0,
                          1LL << 40, &x, "a whole number (nccl-tests' option; ignored here)");
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
        if (strcmp(v, ops[k]) == 0)
            return 0;
    return cmd_usage_error("-o takes sum, prod, min, max, avg or all, not '%s'", v);
}

/* One option into a; 0, or an exit code. */
static int take_option(void *ctx, int c, const char *v)
{
    struct predict_args *a = ctx;
    static const char size_what[] = "a size such as 8, 64K, 128M or 1G, at most 1T";

    switch (c) {
    case 'v':
        a->verbose = 1;
        return 0;
    case OPT_STATS:
        a->want_stats = 1;
        return 0;
    case OPT_NO_FOLD:
        a->no_fold = 1;
        return 0;
    case OPT_REPS:
        a->reps = 1;
        return 0;
    case OPT_NO_DIRECT:
        a->no_direct = 1;
        return 0;
    case OPT_NO_EXTRAP:
        a->no_extrapolate = 1;
        return 0;
    case OPT_VS_NCCL:
        a->vs_nccl = 1;
        return 0;
    case OPT_NCCL_VERSION: {
        struct cs_error err;

        cs_error_init(&err);
        return cs_nccl_version_parse(v, &a->nccl.version, &err) == 0
                   ? 0
                   : cmd_usage_error("--nccl-version: %s", err.msg);
    }
    case OPT_NCCL_CHANNELS:
        return cmd_opt_int("--nccl-channels", v, 1, 64, &a->nccl.channels,
                           "a channel count from 1 to 64");
    case OPT_NCCL_NODES:
        return cmd_opt_int("--nccl-nodes", v, 1, 1024, &a->nccl.nodes,
                           "a node count from 1 to 1024");
    case OPT_NCCL_ALGO:
        return cs_nccl_algo_parse(v, &a->nccl.algo) == 0
                   ? 0
                   : cmd_usage_error("--nccl-algo takes ring or tree, not '%s'", v);
    case OPT_NCCL_LOG:
        a->nccl.log = v;
        return 0;
    case OPT_QUIET:
        a->quiet = 1;
        return 0;
    case OPT_VERIFY:
        a->in.verify = 1;
        return 0;
    case 'p':
        a->in.plat_path = v;
        return 0;
    case OPT_GEN:
        a->in.gen_spec = v;
        return 0;
    case OPT_PROTOCOL:
        a->proto = cs_proto_parse(v);
        return a->proto ? 0 : cmd_usage_error("--protocol takes LL, LL128 or Simple, not '%s'", v);
    case 'b':
        return cmd_opt_size("-b", v, 1, 1LL << 40, &a->minb, size_what);
    case 'e':
        return cmd_opt_size("-e", v, 1, 1LL << 40, &a->maxb, size_what);
    case 'f':
        return cmd_opt_ll("-f", v, 2, 1024, &a->factor, "an integer factor from 2 to 1024");
    case 'd':
        a->dtype = v;
        return 0;
    case OPT_FORMAT:
        a->fmt = cs_report_fmt_parse(v);
        return a->fmt ? 0 : cmd_usage_error("--format takes table, csv or json, not '%s'", v);
    case OPT_TRACE:
        a->trace_path = v;
        return 0;
    case OPT_COMPARE:
        a->compare = v;
        return 0;
    case OPT_MAX_EVENTS:
        return cmd_opt_ll("--max-events", v, 1, 1000000000LL, &a->max_events,
                          "a count from 1 to 1e9");
    case OPT_SET:
        if (a->in.nsets == MAX_SETS)
            return cmd_usage_error("too many --set options");
        a->sets[a->in.nsets++] = v;
        return 0;
    case 'g': {
        /* nccl-tests' GPUs per thread: one thread launches them in turn */
        long long g;
        int rc = cmd_opt_ll("-g", v, 1, 1024, &g, "a GPU count from 1 to 1024");

        if (rc != 0)
            return rc;
        if (a->in.nsets == MAX_SETS)
            return cmd_usage_error("too many --set options");
        snprintf(a->gpus_set, sizeof(a->gpus_set), "cs.gpus_per_process=%lld", g);
        a->sets[a->in.nsets++] = a->gpus_set;
        return 0;
    }
    }
    return strchr("nwmctGazyTCRrio", c) != NULL || c == OPT_PARALLEL_INIT ? ignored_option(c, v)
                                                                          : CS_EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct predict_args *a)
{
    int rc;

    memset(a, 0, sizeof(*a));
    a->in.sets = a->sets;
    a->dtype = "float";
    a->minb = 1024;
    a->maxb = 1024LL * 1024 * 1024;
    a->factor = 2;
    a->max_events = CS_TL_DEFAULT_MAX_EVENTS;
    a->fmt = CS_REPORT_TABLE;
    if ((rc = cmd_getopts(argc, argv, "vp:b:e:f:d:n:w:m:c:g:t:G:a:z:y:T:C:R:r:o:i:", predict_opts,
                          take_option, a)) != 0)
        return rc;
    for (int i = optind; i < argc; i++) {
        if (a->in.sched_path != NULL)
            return cmd_usage_error("predict takes one schedule; '%s' is extra", argv[i]);
        a->in.sched_path = argv[i];
    }
    if (cs_dtype_bytes(a->dtype) == 0 && strcmp(a->dtype, "all") != 0)
        return cmd_usage_error("-d takes int8, uint8, int32, uint32, int64, uint64, half, float, "
                               "double, bfloat16, f8e4m3, f8e5m2 or all, not '%s'",
                               a->dtype);
    if (strcmp(a->dtype, "all") == 0 && (a->trace_path != NULL || a->want_stats))
        return cmd_usage_error("--trace and --stats record one size of one type: not with -d all");
    if ((a->in.sched_path == NULL) == (a->in.gen_spec == NULL))
        return cmd_usage_error("predict takes a SCHEDULE.xml or --gen SPEC (one of them)");
    /* gen nccl picks its channels and threads for the protocol it writes: --protocol goes
     * into the spec, so that NCCL's width at the size is the protocol's */
    if (a->in.gen_spec != NULL && a->proto &&
        (strcmp(a->in.gen_spec, "nccl") == 0 || strncmp(a->in.gen_spec, "nccl:", 5) == 0) &&
        strstr(a->in.gen_spec, "protocol=") == NULL) {
        int n = snprintf(a->nccl_spec, sizeof(a->nccl_spec), "%s%sprotocol=%s", a->in.gen_spec,
                         strchr(a->in.gen_spec, ':') ? "," : ":", cs_proto_name(a->proto));

        if (n < 0 || (size_t)n >= sizeof(a->nccl_spec))
            return cmd_usage_error("--gen: spec too long");
        a->in.gen_spec = a->nccl_spec;
    }
    if (a->in.plat_path == NULL)
        return cmd_usage_error("predict needs --platform FILE (see platforms/ or 'collsim "
                               "platform')");
    if (a->minb > a->maxb)
        return cmd_usage_error("-b %lld is larger than -e %lld", a->minb, a->maxb);
    if (a->in.sched_path != NULL && strcmp(a->in.sched_path, "-") == 0 &&
        strcmp(a->in.plat_path, "-") == 0)
        return cmd_usage_error("predict: the schedule and --platform cannot both be stdin (-)");
    if (!a->vs_nccl &&
        (a->nccl.version || a->nccl.channels || a->nccl.nodes || a->nccl.algo || a->nccl.log))
        return cmd_usage_error("--nccl-version, --nccl-channels, --nccl-nodes, --nccl-algo and "
                               "--nccl-log go with --vs-nccl");
    return (a->in.plat_path = cmd_platform_path(a->in.plat_path)) != NULL ? 0 : CS_EXIT_USAGE;
}

/* Each row as it is predicted, with progress or the per-size details with --verbose on
 * stderr. */
struct progress {
    struct cs_progress bar;
    int verbose, ntypes_left; /* types still to predict, this one included (-d all) */
    enum cs_report_fmt fmt;
    const struct cs_report_meta *meta;
    int index0; /* rows reported before this run (-d all) */
};

static void show_progress(void *ctx, int k, int n, const struct cs_predict_row *row)
{
    struct progress *p = ctx;
    char at[48];

    cs_progress_clear(&p->bar);
    if (p->verbose && row->refused == NULL)
        fprintf(stderr,
                "collsim: %lld bytes: %d iterations, maxAllowedCount %d, %lld calls, "
                "%lld transfers%s, %.3f s wall, %ld KiB peak RSS, %s",
                row->size_bytes, row->niter, row->max_allowed, row->res.ncalls, row->res.ntransfers,
                row->res.direct ? " (direct: without SimGrid's engine)" : "", row->res.wall_s,
                row->res.maxrss_kb, cs_predict_status_name(row));
    if (p->verbose && row->refused == NULL && row->replayed_iters)
        fprintf(stderr, " (extrapolated from %d iterations%s)\n", row->replayed_iters,
                row->beside ? "; the full replay beside them stopped" : "");
    else if (p->verbose && row->refused == NULL)
        fprintf(stderr, "%s\n",
                row->beside ? " (the full replay, run beside short ones that did not settle)" : "");
    if (p->verbose && row->refused == NULL && row->res.fold[0])
        fprintf(stderr, "collsim: %lld bytes: %s%s\n", row->size_bytes,
                row->res.fold_order > 1 ? "folded: " : "", row->res.fold);
    cs_report_row(stdout, p->fmt, p->meta, row, p->index0 + k - 1);
    snprintf(at, sizeof(at), "%lld bytes", row->size_bytes);
    if (k < n)
        cs_progress_update(&p->bar, p->index0 + k, at);
}

/* --trace and --stats for the largest size: an exit code. */
static int write_extras(const struct predict_args *a, const struct cs_plan *tplan,
                        const struct cs_timeline *tl, long long size)
{
    int rc = CS_EXIT_OK;

    if (tl->truncated) {
        fprintf(stderr,
                "collsim: --trace/--stats: the replay at %lld bytes has more than %lld events; "
                "choose a smaller size with -b/-e or raise --max-events\n",
                size, a->max_events);
        return CS_EXIT_USAGE;
    }
    if (a->trace_path != NULL) {
        struct cs_outfile out;
        struct cs_error err;
        int wrc;

        cs_error_init(&err);
        if ((wrc = cs_outfile_open(&out, a->trace_path, &err)) == 0) {
            /* a failed write fails the close, which leaves no truncated trace behind */
            cs_trace_write(out.fp, tplan, tl);
            wrc = cs_outfile_close(&out, &err);
        }
        if (wrc != 0) {
            const char *why = err.msg;

            if (strncmp(why, "cannot write: ", 14) == 0)
                why += 14;
            fprintf(stderr, "collsim: %s: cannot write the trace (%s)\n", a->trace_path, why);
            rc = CS_EXIT_USAGE;
        } else if (a->fmt == CS_REPORT_TABLE) {
            printf("# trace of %lld bytes written to %s (%lld events)\n", size, a->trace_path,
                   tl->nevents);
        }
    }
    if (a->want_stats) {
        /* After the table on stdout; on stderr when stdout is CSV or JSON. */
        FILE *fp = a->fmt == CS_REPORT_TABLE ? stdout : stderr;

        fprintf(fp, "\n# statistics at %lld bytes\n", size);
        if (cs_stats_write(fp, tplan, tl, 40) != 0) {
            fprintf(stderr, "collsim: --stats: cannot write the statistics\n");
            rc = CS_EXIT_USAGE;
        }
    }
    return rc;
}

/* Predict every size of one type (meta->dtype) into *rows (grown by *n) and stream them: 0, or
 * CS_EXIT_USAGE after printing why. *nzero counts the sizes that align down to 0. */
static int run_type(const struct predict_args *a, const struct cs_sched *sched,
                    const struct cs_platform *plat, struct progress *prog,
                    struct cs_predict_opts *o, struct cs_predict_row **rows, int *n,
                    long long *last_size, int *nzero)
{
    int type_bytes = cs_dtype_bytes(prog->meta->dtype), k = 0, zero = 0;
    long long *sizes = NULL, *nominal = NULL;
    struct cs_predict_row *grown = NULL;
    struct cs_error err;

    cs_error_init(&err);
    if (cs_predict_size_list(sched, type_bytes, a->minb, a->maxb, a->factor, &sizes, &nominal, &k,
                             &zero) != 0 ||
        (grown = realloc(*rows, (size_t)(*n + k + 1) * sizeof(**rows))) == NULL) {
        cs_free_each(2, sizes, nominal);
        fprintf(stderr, "collsim: out of memory\n");
        return CS_EXIT_USAGE;
    }
    *rows = grown;
    *nzero += zero;
    o->type_bytes = type_bytes;
    o->nominal = nominal;
    prog->index0 = *n;
    prog->bar.total = *n + (long)k * prog->ntypes_left--;
    if (cs_predict_run(sched, plat, o, sizes, k, *rows + *n, &err) != 0) {
        cs_progress_clear(&prog->bar);
        cmd_print_error(&err);
        cs_free_each(2, sizes, nominal);
        return CS_EXIT_USAGE;
    }
    *n += k;
    if (k > 0)
        *last_size = sizes[k - 1];
    o->nominal = NULL;
    cs_free_each(2, sizes, nominal);
    return 0;
}

/* What the report says: the run, how it was made (versions, the platform's hash) and the
 * measurements compared with (read into *measured). 0, or CS_EXIT_USAGE after printing why. */
static int report_meta(const struct predict_args *a, const struct cs_sched *sched,
                       struct cs_report_meta *meta, char *sg, size_t sglen, char hash[17],
                       struct cs_predict_meas **measured)
{
    struct cs_error err;

    cs_error_init(&err);
    memset(meta, 0, sizeof(*meta));
    meta->schedule = a->in.gen_spec ? a->in.gen_spec : a->in.sched_path;
    meta->platform = a->in.plat_path;
    meta->proto = a->proto ? a->proto : sched->proto;
    meta->coll = sched->coll;
    meta->ngpus = sched->ngpus;
    meta->dtype = strcmp(a->dtype, "all") == 0 ? cs_dtype_names[0] : a->dtype;
    cs_replay_simgrid_version(sg, sglen);
    meta->version = PACKAGE_VERSION;
    meta->git = CS_BUILD_GIT_SHA;
    meta->simgrid = sg;
    meta->libxml2 = cs_xml_library_version();
    if (strcmp(a->in.plat_path, "-") != 0 && cs_predict_file_hash(a->in.plat_path, hash, &err) == 0)
        meta->platform_hash = hash;
    meta->compare = a->compare;
    if (a->compare != NULL &&
        cs_predict_meas_read(a->compare, sched->coll, sched->ngpus, measured, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

/* Predict every size (of every type with -d all) and report each as it comes: an exit code.
 * The last type's plan takes the room of sched's steps, which nothing reads after it. */
static int run(const struct predict_args *a, struct cs_sched *sched, const struct cs_platform *plat)
{
    int all = strcmp(a->dtype, "all") == 0, n = 0, rc = 0, ndead = 0, nref = 0, nzero = 0;
    struct cs_report_meta meta;
    struct progress prog = {.verbose = a->verbose, .fmt = a->fmt, .meta = &meta};
    struct cs_predict_opts o = {0};
    struct cs_predict_row *rows = NULL;
    struct cs_predict_meas *measured = NULL;
    struct cs_plan *tplan = NULL;
    struct cs_timeline tl;
    long long last_size = 0;
    char sg[32], hash[17], note[512], nccl_name[16];
    struct cs_error err;

    if (report_meta(a, sched, &meta, sg, sizeof(sg), hash, &measured) != 0)
        return CS_EXIT_USAGE;
    if (a->vs_nccl) {
        cs_nccl_version_name(a->nccl.version ? a->nccl.version : CS_NCCL_DEFAULT_VERSION, nccl_name,
                             sizeof(nccl_name));
        meta.vs_nccl = nccl_name;
        o.vs_nccl = &a->nccl;
        if (cs_nccl_rule_note(a->nccl.version, note, sizeof(note)) != NULL)
            fprintf(stderr, "collsim: predict --vs-nccl: warning: %s\n", note);
    }
    cs_error_init(&err);
    if (cs_progress_start(&prog.bar, "predict", "sizes", 0, a->quiet || a->verbose, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    prog.ntypes_left = all ? CS_NDTYPES : 1;
    cs_timeline_init(&tl, a->max_events);
    o.proto = a->proto;
    o.replay.verbose = a->verbose;
    o.replay.no_fold = a->no_fold;
    o.replay.no_direct = a->no_direct;
    o.no_extrapolate = a->no_extrapolate;
    o.keep_going = 1;
    o.progress = show_progress;
    o.progress_ctx = &prog;
    o.measured = measured;
    if (a->trace_path != NULL || a->want_stats) {
        o.timeline = &tl;
        o.trace_plan = &tplan;
    }
    cs_report_begin(stdout, a->fmt, &meta);
    for (int t = 0; t < (all ? CS_NDTYPES : 1) && rc == 0; t++) {
        if (all)
            meta.dtype = cs_dtype_names[t];
        o.release_steps = t == (all ? CS_NDTYPES : 1) - 1 ? sched : NULL;
        rc = run_type(a, sched, plat, &prog, &o, &rows, &n, &last_size, &nzero);
    }
    cs_progress_end(&prog.bar);
    for (int k = 0; k < n; k++) {
        nref += rows[k].refused != NULL;
        ndead += rows[k].refused == NULL && rows[k].res.status != CS_REPLAY_OK;
    }
    cs_predict_sizes_note(sched, all ? 0 : cs_dtype_bytes(a->dtype), nzero, note, sizeof(note));
    meta.sizes_note = a->fmt == CS_REPORT_TABLE ? note : NULL;
    /* CSV puts its notes on stderr already. */
    if (rc == 0 && n > 0 && rows[0].warning != NULL && a->fmt != CS_REPORT_CSV)
        fprintf(stderr, "collsim: warning: %s\n", rows[0].warning);
    if (rc == 0 && n > 0 && rows[n - 1].hang != NULL && tplan == NULL && o.timeline != NULL)
        fprintf(stderr, "collsim: --trace/--stats: nothing replayed: the runtime would hang\n");
    if (rc == 0) {
        rc = cs_report_end_meta(stdout, stderr, a->fmt, &meta, rows, n) != 0 ? CS_EXIT_USAGE
             : nref                                                          ? CS_EXIT_USAGE
             : ndead                                                         ? CS_EXIT_NEGATIVE
                                                                             : CS_EXIT_OK;
        if (n == 0) {
            fprintf(stderr, "collsim: every size from -b %lld to -e %lld aligns down to 0: %s\n",
                    a->minb, a->maxb, note);
            rc = CS_EXIT_USAGE;
        }
        if (tplan != NULL && write_extras(a, tplan, &tl, last_size) != CS_EXIT_OK)
            rc = CS_EXIT_USAGE;
    }
    for (int k = 0; k < n; k++)
        cs_predict_row_cleanup(&rows[k]);
    cs_predict_meas_free(measured);
    cs_plan_free(tplan);
    cs_timeline_cleanup(&tl);
    free(rows);
    return rc;
}

int cmd_predict(int argc, char **argv)
{
    struct predict_args a;
    struct cs_sched *sched = NULL;
    struct cs_platform *plat = NULL;
    struct cs_error err;
    int rc = parse_args(argc, argv, &a);

    if (rc != 0)
        return rc;
    if (a.reps && (a.no_fold || a.trace_path || a.want_stats || a.in.verify || !a.in.gen_spec))
        return cmd_usage_error("--representatives: a --gen ring replayed folded only (not with "
                               "--no-fold, --trace, --stats or --verify)");
    /* a ring too large to write whole goes by its representatives, where a folded replay may run */
    if (!a.no_fold && !a.trace_path && !a.want_stats)
        a.in.reps = a.reps ? CS_GEN_REPS_ALWAYS : CS_GEN_REPS_AUTO;
    cs_error_init(&err);
    if (cs_predict_load(&a.in, &sched, &plat, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    cmd_print_sched_warnings(sched);
    if (a.verbose && sched->rep_gpus > 0)
        fprintf(stderr,
                "collsim: %s: written by its representatives: GPUs 0-%d of %d, every GPU g "
                "proven the image of GPU g mod %d under the shift by g - g mod %d\n",
                a.in.gen_spec, sched->rep_gpus - 1, sched->ngpus, sched->rep_shift,
                sched->rep_shift);
    if (a.vs_nccl && (sched->coll < CS_COLL_ALLREDUCE || sched->coll > CS_COLL_ALLTOALL)) {
        fprintf(stderr,
                "collsim: predict --vs-nccl: a %s schedule has no NCCL collective to compare "
                "with (allreduce, allgather, reducescatter, alltoall)\n",
                cs_coll_name(sched->coll));
        cs_platform_free(plat);
        cs_sched_free(sched);
        return CS_EXIT_USAGE;
    }
    rc = run(&a, sched, plat);
    cs_platform_free(plat);
    cs_sched_free(sched);
    return rc;
}
