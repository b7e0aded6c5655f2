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
    "                  in path order, selects them by size. Generator variants are generated\n"
    "                  as 'collsim gen' generates them.\n"
    "  --where K=V     keep only rows whose column K is V (repeatable)\n"
    "  --schedule-dir DIR  resolve relative 'schedule' values there (the sweep file's folder)\n"
    "  --extend        the first window starts at 0 bytes and the last has no upper limit\n"
    "                  (maxBytes 0), instead of stopping at the smallest and largest sizes\n"
    "                  measured\n";

#define MAX_WHERE 32

struct tune_args {
    const char *csv, *outdir, *sched_dir;
    const char *where[MAX_WHERE];
    int nwhere, extend;
};

static int parse_args(int argc, char **argv, struct tune_args *a)
{
    static const struct option longopts[] = {
        {"where", required_argument, NULL, 'w'},
        {"schedule-dir", required_argument, NULL, 'd'},
        {"extend", no_argument, NULL, 'x'},
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
        else
            return CS_EXIT_USAGE;
    }
    if (optind == argc)
        return cmd_usage_error("tune: no sweep CSV; see 'collsim help tune'");
    if (optind + 1 < argc)
        return cmd_usage_error("tune: one CSV only");
    a->csv = argv[optind];
    return 0;
}

/* With -o: the schedules, then plan.txt, beside them. */
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
    snprintf(path, sizeof(path), "%s/plan.txt", a->outdir);
    if (cs_outfile_open(&out, path, &err) == 0) {
        cs_tune_plan_write(out.fp, a->csv, sw, r, nr, files, a->extend);
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
        rc = CS_EXIT_OK;
    }
    free(files);
    free(ranges);
    cs_tune_cleanup(&sw);
    cs_table_free(t);
    return rc;
}
