/* cmd_tune.c: `collsim tune`: from a sweep's predictions, the fastest schedule variant per size
 * range, written as a plan of MSCCL XML files with minBytes/maxBytes windows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fdio.h"
#include "table.h"
#include "tune.h"

const char cmd_tune_usage[] =
    "usage: collsim tune SWEEP.csv [--where KEY=VALUE]... [-o DIR [--plan FILE]]\n"
    "                    [--schedule-dir DIR] [--extend]\n"
    "\n"
    "From the predictions of a sweep (a CSV of 'collsim sweep'), pick for every size the\n"
    "fastest variant (the schedule columns: schedule or gen.*, and protocol) that does not\n"
    "deadlock, and join consecutive sizes with the same winner into size ranges. The other axis\n"
    "columns describe the platform and must hold one value: select one with --where.\n"
    "\n"
    "Prints the plan: each range's byte window, the sizes measured in it and its variant.\n"
    "  -o DIR          also write, per range, DIR/NN-VARIANT.xml: the schedule with\n"
    "                  minBytes/maxBytes set to the window (and outofplace when missing),\n"
    "                  numbered so that the MSCCL executor, which takes the first matching file\n"
    "                  in path order, selects them by size; DIR holds nothing else, so that it\n"
    "                  serves as MSCCL_ALGO_DIR. Each schedule must pass `collsim verify\n"
    "                  --runtime executor` (else exit 2). Generator variants are generated as\n"
    "                  'collsim gen' generates them. The plan, with how to deploy it, goes to\n"
    "                  DIR.plan.txt beside the folder (--plan FILE: there).\n"
    "  --where K=V     keep only rows whose column K is V (repeatable)\n"
    "  --schedule-dir DIR  resolve relative 'schedule' values there (the sweep file's folder)\n"
    "  --extend        the first window starts at 0 bytes and the last has no upper limit\n"
    "                  (maxBytes 0), instead of stopping at the smallest and largest sizes\n"
    "                  measured; never across a size where every variant deadlocked (the\n"
    "                  window then stops one byte short of it)\n";

#define MAX_WHERE 32

struct tune_args {
    const char *csv, *outdir, *sched_dir, *plan;
    const char *where[MAX_WHERE];
    int nwhere, extend;
};

static int parse_args(int argc, char **argv, struct tune_args *a)
{
    static const struct option longopts[] = {
        {"where", required_argument, NULL, 'w'},
        {"schedule-dir", required_argument, NULL, 'd'},
        {"extend", no_argument, NULL, 'x'},
        {"plan", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    int c, started = 0;

    while ((c = cmd_getopt(argc, argv, "o:", longopts, &started)) != -1) {
        if (c == 'w' && (a->nwhere == MAX_WHERE || strchr(optarg, '=') == NULL))
            return cmd_usage_error("tune: --where takes KEY=VALUE (at most %d)", MAX_WHERE);
        if (c == 'w')
            a->where[a->nwhere++] = optarg;
        else if (c == 'o')
            a->outdir = optarg;
        else if (c == 'd')
            a->sched_dir = optarg;
        else if (c == 'x')
            a->extend = 1;
        else if (c == 'p')
            a->plan = optarg;
        else
            return CS_EXIT_USAGE;
    }
    if (optind == argc)
        return cmd_usage_error("tune: no sweep CSV; see 'collsim help tune'");
    if (optind + 1 < argc)
        return cmd_usage_error("tune: one CSV only");
    a->csv = argv[optind];
    if (a->plan != NULL && a->outdir == NULL)
        return cmd_usage_error("tune: --plan goes with -o DIR");
    return 0;
}

/* How to deploy the folder of schedules (msccl.md 3.6), after the plan. */
static void deploy_note(FILE *fp, const char *outdir)
{
    fprintf(fp,
            "# deploy: MSCCL_ALGO_DIR=%s for the MSCCL executor, which reads every file there in\n"
            "# path order and runs the first whose window holds the call's bytes and whose\n"
            "# inplace/outofplace fits the call (NCCL's own algorithms otherwise)\n",
            outdir);
}

/* The plan's file: --plan, else DIR.plan.txt beside the folder. */
static const char *plan_path(const struct tune_args *a, char *buf, size_t len)
{
    size_t n = strlen(a->outdir);

    if (a->plan != NULL)
        return a->plan;
    while (n > 1 && a->outdir[n - 1] == '/')
        n--;
    snprintf(buf, len, "%.*s.plan.txt", (int)n, a->outdir);
    return buf;
}

/* With -o: the schedules, then the plan beside their folder. */
static int write_plan(const struct tune_args *a, const struct cs_tune_sweep *sw,
                      const struct cs_tune_range *r, int nr, char (*files)[CS_TUNE_DESC_LEN])
{
    struct cs_error err;
    struct cs_outfile out;
    char path[4096];

    cs_error_init(&err);
    if (cs_tune_write_schedules(sw, r, nr, a->extend, a->sched_dir, a->outdir, files, &err)) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if (cs_outfile_open(&out, plan_path(a, path, sizeof(path)), &err) == 0) {
        cs_tune_plan_write(out.fp, a->csv, sw, r, nr, files, a->extend);
        deploy_note(out.fp, a->outdir);
        cs_outfile_close(&out, &err); /* a failed write fails the close */
    }
    if (err.msg[0] != '\0') {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

int cmd_tune(int argc, char **argv)
{
    struct tune_args a = {.sched_dir = "."};
    struct cs_table *t = NULL;
    struct cs_tune_sweep sw = {0};
    struct cs_tune_range *ranges = NULL;
    struct cs_error err;
    char(*files)[CS_TUNE_DESC_LEN] = NULL;
    int nr = 0, rc;
    long uneven;

    if ((rc = parse_args(argc, argv, &a)) != 0)
        return rc;
    cs_error_init(&err);
    if (cs_table_read(a.csv, &t, &err) != 0 ||
        cs_tune_read(t, a.csv, a.where, a.nwhere, &sw, &err) != 0) {
        cmd_print_error(&err);
        cs_table_free(t);
        return CS_EXIT_USAGE;
    }
    /* predict rounds sizes up to a multiple of each schedule's chunk count: variants measured at
     * different sizes are not compared with each other there */
    if ((uneven = cs_tune_uneven(&sw)) > 0)
        fprintf(stderr,
                "collsim: warning: %s: %ld predictions are at sizes not every variant "
                "was predicted at (predict rounds sizes to each schedule's chunk multiple); "
                "they compete only with the variants predicted there\n",
                a.csv, uneven);
    rc = CS_EXIT_USAGE;
    if (cs_tune_ranges(sw.obs, sw.nobs, &ranges, &nr, &err) != 0)
        fprintf(stderr, "collsim: %s: %s\n", a.csv, err.msg);
    else if (a.outdir != NULL && (files = calloc((size_t)nr, sizeof(*files))) == NULL)
        fprintf(stderr, "collsim: out of memory\n");
    else if (a.outdir == NULL || (rc = write_plan(&a, &sw, ranges, nr, files)) == 0) {
        cs_tune_plan_write(stdout, a.csv, &sw, ranges, nr, files, a.extend);
        if (a.outdir != NULL)
            deploy_note(stdout, a.outdir);
        rc = CS_EXIT_OK;
    }
    free(files);
    free(ranges);
    cs_tune_cleanup(&sw);
    cs_table_free(t);
    return rc;
}
