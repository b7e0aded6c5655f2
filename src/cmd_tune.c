/* cmd_tune.c: `collsim tune`: from a sweep's predictions, the fastest schedule variant per size
 * range, written as a plan of MSCCL XML files with minBytes/maxBytes windows. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "fdio.h"
#include "nccl.h"
#include "predict.h"
#include "table.h"
#include "tune.h"

const char cmd_tune_usage[] =
    "usage: collsim tune SWEEP.csv [--where KEY=VALUE]... [-o DIR [--plan FILE]]\n"
    "                    [--schedule-dir DIR] [--extend] [--runtime executor|legacy]\n"
    "                    [--nccl-platform P.xml] [--nccl VERSION] [--nccl-channels N]\n"
    "                    [--nccl-nodes N] [--margin PERCENT] [--no-nccl]\n"
    "\n"
    "From the predictions of a sweep (a CSV of 'collsim sweep'), pick for every size the\n"
    "fastest variant (the schedule columns: schedule or gen.*, and protocol) that does not\n"
    "deadlock, and join consecutive sizes with the same winner into size ranges. Variants\n"
    "compete at the size asked for (the nominal_bytes column when the sweep has it, else\n"
    "size_bytes). The other axis columns describe the platform and must hold one value: select\n"
    "one with --where.\n"
    "\n"
    "No window covers a size where the sweep saw its variant deadlock, nor the sizes from which\n"
    "the FIFO credits deadlock it or may (a send step of more calls than a connection has slots,\n"
    "to a receive that starts only after it, or that forwards it); the plan says where and why.\n"
    "Every variant's schedule is read for this (without -o, one not found is a warning and its\n"
    "windows go unchecked). An LL128 variant whose connections cross a path within a node\n"
    "that is not all NVLink (where NCCL refuses LL128; MSCCL runs it unchecked) competes on\n"
    "no size: the plan names it and the path.\n"
    "\n"
    "NCCL's own choice is the baseline: at every size, what NCCL runs on the sweep's platform\n"
    "(its platform file, or the one its family keys describe; --nccl-platform P.xml another),\n"
    "as `predict --vs-nccl` computes it (--nccl VERSION, --nccl-channels, --nccl-nodes as\n"
    "there), for the collective and GPUs of the variants. A size is left to NCCL, in no window,\n"
    "unless the fastest variant beats NCCL's time by --margin (default 5%, about what a\n"
    "calibrated prediction is off); the plan lists those sizes with both times. --no-nccl\n"
    "compares the variants with each other only.\n"
    "\n"
    "Prints the plan: each range's byte window, the sizes measured in it, its variant and its\n"
    "speed-up over NCCL there (NCCL's time over the variant's, smallest and largest).\n"
    "  -o DIR          also write, per range, DIR/NN-VARIANT.xml: the schedule with\n"
    "                  minBytes/maxBytes set to the window, outofplace=1 when an out-of-place\n"
    "                  call computes the right result without writing its input (verify's\n"
    "                  symbolic execution; \"+out-of-place\" in the plan), else the complement of\n"
    "                  inplace; numbered so that the MSCCL executor, which takes the first\n"
    "                  matching file in path order, selects them by size; DIR holds nothing\n"
    "                  else, so that it serves as MSCCL_ALGO_DIR. Each schedule must pass\n"
    "                  `collsim verify --runtime R` (else exit 2). Generator variants are\n"
    "                  generated as 'collsim gen' generates them. The plan, with how to deploy\n"
    "                  it, goes to DIR.plan.txt beside the folder (--plan FILE: there). DIR is\n"
    "                  tune's own: a folder holding a file that no earlier plan of it wrote\n"
    "                  is refused, and a new plan removes the earlier plan's schedules it does\n"
    "                  not write again (the executor runs every file of the folder).\n"
    "  --runtime R     executor (default: Azure/msccl-executor-nccl) or legacy (microsoft/msccl:\n"
    "                  windows written half-open, minBytes <= nBytes < maxBytes, an open one up\n"
    "                  to 2^40 bytes; a name on every schedule; deployed by listing the files in\n"
    "                  MSCCL_XML_FILES with NCCL_ALGO naming MSCCL; more than 4 windows, the\n"
    "                  most that runtime loads, is an error)\n"
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
    enum cs_verify_runtime runtime;
    int no_nccl;
    const char *nccl_platform;
    struct cs_predict_vs_nccl vs;
    double margin;
};

static int parse_args(int argc, char **argv, struct tune_args *a)
{
    int c, started = 0;
    struct cmd_opts t;

    cmd_opts_init(&t, "where=w: schedule-dir=d: extend=x plan=p: runtime=r: no-nccl=N "
                      "nccl-platform=P: nccl=v: nccl-channels=c: nccl-nodes=n: margin=m:");
    while ((c = cmd_getopt(argc, argv, "o:", t.opt, &started)) != -1) {
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
        else if (c == 'N')
            a->no_nccl = 1;
        else if (c == 'P')
            a->nccl_platform = optarg;
        else if (c == 'v') {
            struct cs_error e;

            cs_error_init(&e);
            if (cs_nccl_version_parse(optarg, &a->vs.version, &e) != 0)
                return cmd_usage_error("tune: --nccl: %s", e.msg);
        } else if (c == 'c') {
            if (cmd_opt_int("--nccl-channels", optarg, 1, 32, &a->vs.channels, "1 to 32"))
                return CS_EXIT_USAGE;
        } else if (c == 'n') {
            if (cmd_opt_int("--nccl-nodes", optarg, 1, 1024, &a->vs.nodes, "1 to 1024"))
                return CS_EXIT_USAGE;
        } else if (c == 'm') {
            if (cmd_opt_double("--margin", optarg, 0, 90, &a->margin, "a percentage, 0 to 90"))
                return CS_EXIT_USAGE;
            a->margin /= 100;
        } else if (c == 'r' && (a->runtime = cs_verify_runtime_parse(optarg)) == CS_VERIFY_ANY)
            return cmd_usage_error("tune: --runtime takes executor or legacy, not '%s'", optarg);
        else if (c != 'r')
            return CS_EXIT_USAGE;
    }
    if (optind == argc)
        return cmd_usage_error("tune: no sweep CSV; see 'collsim help tune'");
    if (optind + 1 < argc)
        return cmd_usage_error("tune: one CSV only");
    a->csv = argv[optind];
    if (a->plan != NULL && a->outdir == NULL)
        return cmd_usage_error("tune: --plan goes with -o DIR");
    if (a->no_nccl && (a->nccl_platform || a->vs.version || a->vs.channels || a->vs.nodes))
        return cmd_usage_error("tune: --no-nccl excludes the NCCL baseline's options");
    return 0;
}

/* How to deploy the folder of schedules (msccl.md 3.6; for the legacy runtime its README and
 * nccl-a100.md 1.7), after the plan. */
static void deploy_note(FILE *fp, const struct tune_args *a, const struct cs_tune_file *files,
                        int nr)
{
    const char *outdir = a->outdir;
    size_t n = strlen(outdir);

    if (a->runtime == CS_VERIFY_LEGACY) {
        while (n > 1 && outdir[n - 1] == '/')
            n--;
        fprintf(fp, "# deploy (legacy runtime, microsoft/msccl): NCCL_ALGO must name MSCCL (e.g. "
                    "NCCL_ALGO=MSCCL,Ring,Tree) and\n# MSCCL_XML_FILES=");
        for (int i = 0; i < nr; i++)
            fprintf(fp, "%s%.*s/%s", i ? ":" : "", (int)n, outdir, files[i].name);
        fprintf(fp,
                "\n# it loads the listed files (at most %d) and runs the one whose window "
                "[minBytes, maxBytes)\n# holds the call's bytes\n",
                CS_TUNE_LEGACY_MAX_ALGOS);
        return;
    }
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

/* The schedule files an earlier plan lists (its table's last column), into names (up to max);
 * their count, 0 when there is no plan there. */
static int plan_files(const char *plan, char (*names)[CS_TUNE_DESC_LEN], int max)
{
    FILE *fp = cs_fopen_read(plan);
    char line[8192];
    int n = 0;

    if (fp == NULL)
        return 0;
    while (fgets(line, sizeof(line), fp) != NULL && n < max) {
        char *last = NULL, *tok, *save;

        if (!isdigit((unsigned char)line[strspn(line, " ")]))
            continue;
        for (tok = strtok_r(line, " \n", &save); tok != NULL; tok = strtok_r(NULL, " \n", &save))
            last = tok;
        if (last != NULL && strcmp(last, "-") != 0 && strchr(last, '/') == NULL)
            snprintf(names[n++], CS_TUNE_DESC_LEN, "%s", last);
    }
    fclose(fp);
    return n;
}

/* -o DIR is tune's own: every entry in it a plain file the earlier plan (beside it) wrote, so
 * that the plan replaces it whole and removes nothing else. 0, or exit status 2 with why. */
static int dir_is_ours(const struct tune_args *a, char (*old)[CS_TUNE_DESC_LEN], int nold)
{
    DIR *d = opendir(a->outdir);
    struct dirent *e;
    int rc = 0;

    if (d == NULL)
        return errno == ENOENT ? 0 : cmd_usage_error("tune: -o %s: %s", a->outdir, strerror(errno));
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char path[4096 + 256];
        struct stat st;
        int k = 0;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        while (k < nold && strcmp(old[k], e->d_name) != 0)
            k++;
        snprintf(path, sizeof(path), "%s/%s", a->outdir, e->d_name);
        if (k == nold || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            rc = cmd_usage_error("tune: -o %s holds %s, which no earlier plan of this folder "
                                 "wrote (the executor would run every file there): give a new "
                                 "or empty folder",
                                 a->outdir, e->d_name);
    }
    closedir(d);
    return rc;
}

/* With -o: the schedules, then the plan beside their folder; the earlier plan's schedules that
 * the new one does not write are removed. */
static int write_plan(const struct tune_args *a, const struct cs_tune_sweep *sw,
                      const struct cs_tune_range *r, int nr, struct cs_tune_file *files)
{
    struct cs_error err;
    struct cs_outfile out;
    char path[4096];
    static char old[256][CS_TUNE_DESC_LEN];
    const char *pp = plan_path(a, path, sizeof(path));
    int nold = plan_files(pp, old, 256), rc;
    struct stat sp, sc;

    if (stat(pp, &sp) == 0 && stat(a->csv, &sc) == 0 && sp.st_dev == sc.st_dev &&
        sp.st_ino == sc.st_ino)
        return cmd_usage_error("tune: the plan %s is the sweep CSV it reads: give another --plan",
                               pp);
    if ((rc = dir_is_ours(a, old, nold)) != 0)
        return rc;
    cs_error_init(&err);
    if (cs_tune_write_schedules(sw, r, nr, a->extend, a->runtime, a->sched_dir, a->outdir, files,
                                &err)) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    for (int k = 0; k < nold; k++) {
        int i = 0;

        while (i < nr && strcmp(files[i].name, old[k]) != 0)
            i++;
        if (i == nr) {
            char gone[4096 + CS_TUNE_DESC_LEN];

            if (snprintf(gone, sizeof(gone), "%s/%s", a->outdir, old[k]) < (int)sizeof(gone))
                unlink(gone);
        }
    }
    if (cs_outfile_open(&out, plan_path(a, path, sizeof(path)), &err) == 0) {
        cs_tune_plan_write(out.fp, a->csv, sw, r, nr, files, a->extend, a->runtime);
        deploy_note(out.fp, a, files, nr);
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
    struct tune_args a = {.sched_dir = ".", .runtime = CS_VERIFY_EXECUTOR, .margin = 0.05};
    struct cs_table *t = NULL;
    struct cs_tune_sweep sw = {0};
    struct cs_tune_range *ranges = NULL;
    struct cs_error err;
    struct cs_tune_file *files = NULL;
    int nr = 0, rc;
    long uneven;

    if ((rc = parse_args(argc, argv, &a)) != 0)
        return rc;
    cs_error_init(&err);
    if (cs_table_read(a.csv, &t, &err) != 0 ||
        cs_tune_read(t, a.csv, a.where, a.nwhere, &sw, &err) != 0 ||
        cs_tune_check_credits(&sw, a.sched_dir, a.outdir != NULL, &err) != 0 ||
        cs_tune_check_ll128(&sw, a.sched_dir, &err) != 0 ||
        (!a.no_nccl &&
         cs_tune_nccl_baseline(&sw, a.sched_dir, a.nccl_platform, &a.vs, a.margin, &err) != 0)) {
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
    for (int v = 0; v < sw.nvar; v++)
        if (sw.var[v].unchecked)
            fprintf(stderr,
                    "collsim: warning: %s: the schedule of %s is not found (--schedule-dir): "
                    "its FIFO credit limit is not checked\n",
                    a.csv, sw.var[v].desc);
    rc = CS_EXIT_USAGE;
    if (cs_tune_ranges(sw.obs, sw.nobs, &ranges, &nr, &err) != 0 ||
        cs_tune_check_runtime(nr, a.runtime, &err) != 0)
        fprintf(stderr, "collsim: %s: %s\n", a.csv, err.msg);
    else if (a.outdir != NULL && (files = calloc((size_t)nr + 1, sizeof(*files))) == NULL)
        fprintf(stderr, "collsim: out of memory\n");
    else if (a.outdir == NULL || (rc = write_plan(&a, &sw, ranges, nr, files)) == 0) {
        cs_tune_plan_write(stdout, a.csv, &sw, ranges, nr, files, a.extend, a.runtime);
        if (a.outdir != NULL)
            deploy_note(stdout, &a, files, nr);
        rc = CS_EXIT_OK;
    }
    free(files);
    free(ranges);
    cs_tune_cleanup(&sw);
    cs_table_free(t);
    return rc;
}
