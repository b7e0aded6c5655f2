/* cmd_verify.c: `collsim verify`: check schedules' structure and data, one verdict per file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fdio.h"
#include "platform.h"
#include "predict.h"
#include "verify.h"
#include "xml.h"

const char cmd_verify_usage[] =
    "usage: collsim verify [--max-errors N] [-q] [--runtime executor|legacy] [--sms N]\n"
    "                      [--channels N] [--platform FILE] FILE...\n"
    "\n"
    "Check MSCCL XML schedules (FILE, or - for stdin). Structure: dense ids, one threadblock per\n"
    "connection, sends and receives matching per connection, offsets within the buffers, the\n"
    "runtime's limits, and no deadlock (a cycle through dependencies, threadblock order,\n"
    "send/receive matching and the 8 FIFO slots of each connection as the smallest buffer uses\n"
    "them, one call per step: such a cycle deadlocks at every size). Larger buffers make more\n"
    "calls per step and can run out of slots where the smallest does not; verify does not check\n"
    "them: `collsim predict` shows at which sizes a schedule deadlocks.\n"
    "Data: a symbolic execution of every chunk, like msccl-tools Check():\n"
    "each output chunk must hold exactly what the collective requires (allreduce, allgather,\n"
    "reduce_scatter, alltoall; custom gets the structural checks only). The schedule runs in two\n"
    "orders that both meet every wait: two steps of a rank that touch one chunk, one writing,\n"
    "and run in opposite orders are a race, reported at the writer's line with the other step\n"
    "and the depid/deps that would order them; outputs that differ are reported too.\n"
    "Attributes collsim does not know (nthreads) are warnings: the runtimes ignore them.\n"
    "\n"
    "Each problem is one line on stderr, FILE:LINE: message, with the rank, threadblock, step,\n"
    "buffer and chunk concerned; then a verdict line per file on stdout, with the kinds of\n"
    "errors: wrong output chunks, races, order-dependent outputs, reads of unwritten data.\n"
    "\n"
    "  --max-errors N  show at most N problems per file (default 20), count the rest\n"
    "  -q, --quiet     show errors only, no warnings or notes\n"
    "  --runtime R     also what runtime R loads and refuses (msccl.md 1.1-1.2): executor\n"
    "                  (Azure/msccl-executor-nccl: minBytes, maxBytes and outofplace required,\n"
    "                  no custom or reduce_scatter, at most 64 steps per tb and 4096 tb and step\n"
    "                  elements per rank, no <?xml?> line, tabs or single quotes in tags) or\n"
    "                  legacy (microsoft/msccl: name required, at most 216 tbs per GPU).\n"
    "                  Always: nchannels <= 32 (MAXCHANNELS). With --platform, an LL128\n"
    "                  schedule on a route within a node that is not all NVLink is an error\n"
    "                  of the executor's report (wrong data: NCCL's \"silent data corruption\");\n"
    "                  without --platform a note says the routes were not checked.\n"
    "  --channels N    the communicator's channels (1..32, comm->nChannels): nchannels above\n"
    "                  N is an error, the executor sets up connections on channels\n"
    "                  0..nchannels-1. Without it, not checked: the executor's internal\n"
    "                  scheduler raises the communicator's channels to nchannels.\n"
    "  --sms N         SMs per GPU for the co-residency check (default 108, an A100; 132 for\n"
    "                  H100 SXM and H200). The runtime launches a GPU's threadblocks together\n"
    "                  and they wait on each other, but the executor's kernel fits one per SM\n"
    "                  (96 registers x 640 threads): more threadblocks on a GPU than SMs x CTAs\n"
    "                  per SM is an error, the runtime would hang.\n"
    "  --platform FILE take cs.gpu_sms and cs.ctas_per_sm from a platform file (--sms wins),\n"
    "                  and warn about LL128 on a connection whose route within a node is not\n"
    "                  all NVLink (NCCL enables LL128 on NVLink paths only: \"may cause silent\n"
    "                  data corruption\"); a warning, the exit status stays, unless --runtime\n"
    "                  executor makes it an error. Routes that cross the network are not\n"
    "                  flagged (NCCL allows LL128 there). - reads the platform from stdin.\n"
    "\n"
    "Exit status: 0 every file is correct; 1 some file is structurally valid but computes the\n"
    "wrong data; 2 some file is unreadable (not well-formed XML, a required attribute missing\n"
    "or not a number) or structurally invalid (a deadlock included).\n";

static void print_diag(const char *name, const struct cs_verify_diag *d)
{
    static const char *const sev[] = {
        [CS_VERIFY_NOTE] = "note: ", [CS_VERIFY_WARNING] = "warning: ", [CS_VERIFY_ERROR] = ""};

    if (d->line > 0)
        fprintf(stderr, "%s:%d: %s%s\n", name, d->line, sev[d->severity], d->msg);
    else
        fprintf(stderr, "%s: %s%s\n", name, sev[d->severity], d->msg);
}

/* With a platform, a schedule of more GPUs than it has: refused; an LL128 schedule whose
 * connections cross PCIe within a node: a warning, an error of the executor's report with
 * --runtime executor, added to res. Without a platform, a note under --runtime executor. 0, or
 * an exit code after printing why the check failed. */
static int check_ll128(const char *name, const struct cs_sched *sched,
                       const struct cs_platform *plat, enum cs_verify_runtime runtime,
                       struct cs_verify_result *res)
{
    int exec = runtime == CS_VERIFY_EXECUTOR;
    struct cs_plan *plan = NULL;
    struct cs_error err;
    char *msg = NULL, buf[2048];
    int rc;

    if (plat != NULL && sched->ngpus > plat->ngpus) { /* any protocol: no GPU to run on */
        fprintf(stderr, "%s: the schedule needs %d GPUs but %s has %d\n", name, sched->ngpus,
                plat->path, plat->ngpus);
        return CS_EXIT_USAGE;
    }
    if (sched->proto != CS_PROTO_LL128 || res->verdict == CS_VERIFY_INVALID)
        return 0;
    if (plat == NULL) {
        rc = exec ? cs_verify_result_add(res, CS_VERIFY_NOTE, CS_VERIFY_DATA, 0,
                                         "LL128 routes not checked: --platform FILE names the "
                                         "platform whose links the connections use")
                  : 0;
        return rc == 0 ? 0 : CS_EXIT_USAGE;
    }
    cs_error_init(&err);
    rc = cs_plan_build(sched, cs_plan_round_size(sched, 1, 4), 4, CS_PROTO_LL128, &plan, &err);
    if (rc == 0)
        rc = cs_predict_check_ll128(plan, plat, &msg, &err);
    cs_plan_free(plan);
    if (rc != 0) {
        fprintf(stderr, "%s: LL128 paths not checked: %s\n", name,
                cs_error_format(&err, buf, sizeof(buf)));
        return CS_EXIT_USAGE;
    }
    if (msg != NULL) {
        rc = cs_verify_result_add(res, exec ? CS_VERIFY_ERROR : CS_VERIFY_WARNING, CS_VERIFY_DATA,
                                  0, msg);
    }
    free(msg);
    return rc == 0 ? 0 : CS_EXIT_USAGE;
}

/* The reader's tap: the file's bytes through the runtime's tokenizer rules. */
static void tap_tokens(void *ctx, const char *piece, size_t n)
{
    cs_verify_tokens_feed(ctx, piece, n);
}

/* Verify one file (against plat's routes when not NULL); returns its exit code. */
static int verify_file(const char *path, struct cs_verify_opts o, const struct cs_platform *plat,
                       int quiet)
{
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    struct cs_sched *sched = NULL;
    struct cs_verify_result *res = NULL;
    struct cs_verify_tokens tokens;
    struct cs_error err;
    char buf[2048];
    int rc, lrc;

    cs_error_init(&err);
    cs_verify_tokens_init(&tokens);
    if (cs_sched_read_xml_tap(path, tap_tokens, &tokens, &sched, &err) != 0) {
        fprintf(stderr, "%s\n", cs_error_format(&err, buf, sizeof(buf)));
        printf("%s: invalid: unreadable schedule\n", name);
        return CS_EXIT_USAGE;
    }
    o.tokens = &tokens;
    rc = cs_verify_check_opts(sched, &o, &res);
    if (rc != 0) {
        fprintf(stderr, "%s: out of memory while verifying\n", name);
        printf("%s: invalid: could not be checked\n", name);
        cs_sched_free(sched);
        return CS_EXIT_USAGE;
    }
    lrc = check_ll128(name, sched, plat, o.runtime, res);
    for (int i = 0; i < res->ndiags; i++)
        if (!quiet || res->diags[i].severity == CS_VERIFY_ERROR)
            print_diag(name, &res->diags[i]);
    if (res->ndropped > 0)
        fprintf(stderr, "%s: ... and %ld more problem%s (--max-errors N shows more)\n", name,
                res->ndropped, res->ndropped > 1 ? "s" : "");
    if (res->verdict == CS_VERIFY_OK)
        printf("%s: ok: %s on %d gpus, %ld steps: %s\n", name, cs_coll_name(sched->coll),
               sched->ngpus, cs_sched_count_steps(sched),
               res->data_checked ? "structure and data correct"
                                 : "structure correct (custom collective: no data check)");
    else
        printf("%s: %s: %s\n", name, res->verdict == CS_VERIFY_WRONG ? "wrong" : "invalid",
               cs_verify_summary(res, buf, sizeof(buf)));
    rc = res->verdict == CS_VERIFY_OK      ? CS_EXIT_OK
         : res->verdict == CS_VERIFY_WRONG ? CS_EXIT_NEGATIVE
                                           : CS_EXIT_USAGE;
    rc = lrc > rc ? lrc : rc;
    cs_verify_result_free(res);
    cs_sched_free(sched);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    struct cs_verify_opts o = {.max_diags = CS_VERIFY_MAX_DIAGS, .runtime = CS_VERIFY_ANY};
    struct cs_platform *plat = NULL;
    const char *plat_path = NULL;
    int quiet = 0, worst = CS_EXIT_OK, c, started = 0, sms = 0;
    struct cmd_opts t;

    cmd_opts_init(&t, "max-errors=m: quiet=q runtime=r: sms=s: platform=p: channels=c:");
    while ((c = cmd_getopt(argc, argv, "q", t.opt, &started)) != -1) {
        if (c == 'q')
            quiet = 1;
        else if (c == '?')
            return CS_EXIT_USAGE;
        else if (c == 'r' && (o.runtime = cs_verify_runtime_parse(optarg)) == CS_VERIFY_ANY)
            return cmd_usage_error("--runtime takes executor or legacy, not '%s'", optarg);
        else if (c == 'm' && cmd_opt_int("--max-errors", optarg, 1, 1000000, &o.max_diags,
                                         "a number from 1 to 1000000") != 0)
            return CS_EXIT_USAGE;
        else if (c == 's' && cmd_opt_int("--sms", optarg, 1, 1 << 20, &sms,
                                         "a number of SMs from 1 to 1048576") != 0)
            return CS_EXIT_USAGE;
        else if (c == 'c' && cmd_opt_int("--channels", optarg, 1, CS_MAX_CHANNELS, &o.comm_channels,
                                         "a number of channels from 1 to 32") != 0)
            return CS_EXIT_USAGE;
        else if (c == 'p')
            plat_path = optarg;
    }
    if (optind == argc)
        return cmd_usage_error("verify needs at least one schedule file (or -); see 'collsim "
                               "help verify'");
    for (int i = optind; plat_path != NULL && strcmp(plat_path, "-") == 0 && i < argc; i++)
        if (strcmp(argv[i], "-") == 0)
            return cmd_usage_error("verify: a schedule and --platform cannot both be stdin (-)");
    if (plat_path != NULL) {
        struct cs_error err;

        if ((plat_path = cmd_platform_path(plat_path)) == NULL)
            return CS_EXIT_USAGE;
        cs_error_init(&err);
        if (cs_platform_read(plat_path, &plat, &err) != 0) {
            cmd_print_error(&err);
            return CS_EXIT_USAGE;
        }
        o.gpu_sms = (int)plat->params.gpu_sms;
        o.ctas_per_sm = (int)plat->params.ctas_per_sm;
    }
    if (sms > 0)
        o.gpu_sms = sms;
    /* The worst verdict wins: the exit codes grow with the severity. */
    for (int i = optind; i < argc; i++) {
        int rc = verify_file(argv[i], o, plat, quiet);

        worst = rc > worst ? rc : worst;
    }
    cs_platform_free(plat);
    return worst;
}
