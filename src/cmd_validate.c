/* cmd_validate.c: `collsim validate`: predictions against published measurements, per case.
 *
 * Each case predicts the measured sizes in process (cs_predict_run, once per protocol; the
 * replay forks its own simulating child per size), matches every measured size with its
 * prediction, and writes CASE.csv, CASE.svg (gnuplot, when installed), summary.md and
 * summary.csv (the numbers a baseline is compared with).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cases.h"
#include "cmd.h"
#include "fdio.h"
#include "gen.h"
#include "meas.h"
#include "nccl.h"
#include "params.h"
#include "parse.h"
#include "plan.h"
#include "platform.h"
#include "predict.h"
#include "progress.h"
#include "spawn.h"
#include "valid.h"

const char cmd_validate_usage[] =
    "usage: collsim validate CASES [-o DIR] [--baseline FILE] [--tolerance FRACTION]\n"
    "                        [--before FILE] [--quiet]\n"
    "\n"
    "Compare predictions with published measurements. CASES has one case per line (# starts\n"
    "a comment; `#: NAME: text` after a case adds a note to its section of the summary):\n"
    "  NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL [OPTION=VALUE...]\n"
    "MEASUREMENT is a table in the shared measurements schema (shared:FILE reads\n"
    "$CS_SHARED_DATA/measurements/FILE, default ../shared/data), or what an nccl-tests\n"
    "binary prints (an NCCL INFO log around it included); SCHEDULE an MSCCL XML (shared:FILE\n"
    "reads $CS_SHARED_DATA/msccl-xml/FILE) or gen:SPEC (collsim predict --gen SPEC); PLATFORM\n"
    "a platform file; PROTOCOL LL, LL128,\n"
    "Simple, fastest[:P,P...] (predict each, keep the fastest per size; default all three), or\n"
    "nccl (a gen:nccl schedule: the protocol NCCL's own tuning model picks at each size). The\n"
    "same case file, PLATFORM - in every case, fits a platform: `collsim calibrate platform\n"
    "--cases FILE`.\n"
    "Options: ranks=N and coll=allreduce|allgather|reducescatter (to derive times from busbw),\n"
    "set=KEY=VALUE (as predict --set), params=FILE (every <prop> of a calibrate fit\n"
    "output, in order with the set= options), fit=MIN:MAX (sizes used to fit the platform: the "
    "summary reports the\n"
    "others, held out), sizes=MIN:MAX (sizes compared), target=nvswitch8|other.\n"
    "A gen:nccl:... SCHEDULE (gpus, channels: the communicator's, nodes, coll, algo, nccl: the\n"
    "version, log: an NCCL INFO log giving them and its rings' orders; no size or protocol)\n"
    "predicts, per size and protocol, what `collsim gen nccl` writes there (NCCL's ring or\n"
    "tree, channels and threads; the replay narrows the protocol's CTA to those threads).\n"
    "nccl=VERSION (NCCL 2.8 on, a gen:ring schedule of one instance) runs NCCL's channel\n"
    "and thread choice (enqueue.cc): the ring's channels= is the communicator's, and each size\n"
    "and protocol is predicted on the ring with the channels NCCL uses at that size, with the\n"
    "protocol's cs.tb_Bps and cs.pass_bytes scaled by threads / maximum threads when NCCL uses\n"
    "fewer threads (a CTA's throughput and pass taken as proportional to its threads).\n"
    "Each case predicts as `collsim predict` does, once per protocol, then writes into DIR\n"
    "(default: the directory of CASES) NAME.csv (size, measured, predicted, error %),\n"
    "NAME.gp and NAME.svg (gnuplot, log-log), summary.md (median and max |error| per size\n"
    "band, targets met or missed by how much) and summary.csv. With --baseline (a committed\n"
    "summary.csv) it exits 1 when a median or max |error| exceeds the baseline's by more\n"
    "than the tolerance (default 0.02, i.e. 2 points). With --before (an earlier summary.csv,\n"
    "as a run before a model change wrote) summary.md shows each band's median and max\n"
    "|error| as BEFORE -> AFTER, BEFORE \"-\" where FILE lacks the case or band; summary.csv\n"
    "is unchanged. A bad FILE exits 2 with FILE:LINE before anything is predicted.\n"
    "Progress and an ETA over the cases go to stderr (one updating line on a terminal, else a\n"
    "line every 10 s, COLLSIM_PROGRESS_INTERVAL=SECONDS); --quiet turns them off.\n";

/* In a child: gnuplot on a script in the case's output folder (what gnuplot_in gets). */
struct gp_job {
    const char *dir, *script;
};

static int gnuplot_in(void *ctx)
{
    const struct gp_job *j = ctx;

    if (chdir(j->dir) != 0)
        return 127;
    execl("/usr/bin/gnuplot", "gnuplot", j->script, (char *)NULL);
    return 127;
}

/* The case's gnuplot script, drawing into image (a name in the case's folder). */
static void plot_script(FILE *fp, const struct cs_case *c, int by_n, const char *image)
{
    fprintf(fp,
            "# gnuplot script written by collsim validate\n"
            "set terminal svg size 720,480 dynamic\n"
            "set output '%s'\n"
            "set datafile separator ','\n"
            "%s"
            "set key top left\n"
            "set grid\n"
            "set title \"%s: measured vs predicted\" noenhanced\n"
            "set xlabel '%s'\n"
            "set ylabel 'time (us)'\n"
            "plot '%s.csv' skip 1 using 1:2 with linespoints title 'measured', \\\n"
            "     '%s.csv' skip 1 using 1:3 with linespoints title 'predicted (%s)'\n",
            image, by_n ? "set logscale y\n" : "set logscale xy\n", c->vc.name,
            by_n ? "GPUs" : "size (bytes)", c->vc.name, c->vc.name,
            c->vc.fastest ? "fastest protocol"
            : c->by_nccl  ? "NCCL''s protocol" /* '' : a quote in gnuplot's single quotes */
                          : c->proto[0]);
}

/* Whether path holds a whole SVG: its closing tag near the end (a full disk leaves none, or a
 * cut file). */
static int svg_complete(const char *path)
{
    FILE *fp = cs_fopen_read(path);
    char tail[64] = "";
    size_t n = 0;

    if (fp == NULL)
        return 0;
    if (fseek(fp, -(long)(sizeof(tail) - 1), SEEK_END) != 0)
        rewind(fp);
    n = fread(tail, 1, sizeof(tail) - 1, fp);
    fclose(fp);
    tail[n] = '\0';
    return strstr(tail, "</svg>") != NULL;
}

/* A gnuplot script per case (NAME.gp, drawing NAME.svg), and the SVG when gnuplot is installed:
 * drawn into a temporary file by a copy of the script, which replaces NAME.svg only when gnuplot
 * exits 0 and the SVG is whole. Returns 0, 1 without gnuplot, -1 on failure. */
static int write_plot(const char *dir, const struct cs_case *c, int by_n)
{
    char path[2048], run[2200], image[1200], final[2200], tmpimg[2400], script[1200];
    struct gp_job job = {dir, script};
    pid_t pid;
    struct cs_outfile out;
    struct cs_error err;
    FILE *fp;
    int ok;

    cs_error_init(&err);
    if (snprintf(path, sizeof(path), "%s/%s.gp", dir, c->vc.name) >= (int)sizeof(path) ||
        snprintf(image, sizeof(image), "%s.svg.tmp.%ld", c->vc.name, (long)getpid()) >=
            (int)sizeof(image) ||
        snprintf(script, sizeof(script), "%s.gp.tmp.%ld", c->vc.name, (long)getpid()) >=
            (int)sizeof(script) ||
        snprintf(run, sizeof(run), "%s/%s", dir, script) >= (int)sizeof(run) ||
        snprintf(final, sizeof(final), "%s/%s.svg", dir, c->vc.name) >= (int)sizeof(final) ||
        snprintf(tmpimg, sizeof(tmpimg), "%s/%s", dir, image) >= (int)sizeof(tmpimg))
        return -1;
    if (cs_outfile_open(&out, path, &err) != 0) {
        cmd_print_error(&err);
        return -1;
    }
    {
        char name[1200];

        snprintf(name, sizeof(name), "%s.svg", c->vc.name);
        plot_script(out.fp, c, by_n, name);
    }
    if (cs_outfile_close(&out, &err) != 0) {
        cmd_print_error(&err);
        return -1;
    }
    if (access("/usr/bin/gnuplot", X_OK) != 0)
        return 1;
    if ((fp = fopen(run, "w")) == NULL)
        return -1;
    plot_script(fp, c, by_n, image);
    if (fclose(fp) != 0) {
        unlink(run);
        return -1;
    }
    /* no shell between: a folder or case name may hold any character */
    pid = cs_spawn_fn(gnuplot_in, &job, NULL, "/dev/null");
    ok = pid > 0 && cs_spawn_wait(pid) == 0 && svg_complete(tmpimg) && rename(tmpimg, final) == 0;
    unlink(run);
    if (!ok)
        unlink(tmpimg);
    return ok ? 0 : -1;
}

/* Predict one case and write NAME.csv, its plot and its part of the summaries. Returns 0 or 1
 * (a target missed), or -1 after printing why. */
static int run_case(const struct cs_case *c, const char *cases_path, const char *outdir, FILE *md,
                    FILE *scsv, const struct cs_valid_before *before, struct cs_progress *bar)
{
    struct cs_valid_point *p = NULL;
    int n = 0;
    char path[2200];
    int rc = -1;
    struct cs_outfile cf;
    struct cs_error err;

    (void)cases_path;
    cs_error_init(&err);
    if (cs_case_read_points(c, &p, &n, &err) != 0 || cs_case_predict(c, NULL, 0, p, n, &err) != 0) {
        cmd_print_error(&err);
        fprintf(stderr, "collsim: case %s: the prediction failed\n", c->vc.name);
        goto done;
    }
    if (snprintf(path, sizeof(path), "%s/%s.csv", outdir, c->vc.name) >= (int)sizeof(path) ||
        cs_outfile_open(&cf, path, &err) != 0) {
        if (err.msg[0])
            cmd_print_error(&err);
        else
            fprintf(stderr, "collsim: cannot write %s\n", path);
        goto done;
    }
    cs_valid_case_csv(cf.fp, p, n);
    if (cs_outfile_close(&cf, &err) != 0) {
        cmd_print_error(&err);
        goto done;
    }
    if (write_plot(outdir, c, p[0].ranks > 0) < 0)
        fprintf(stderr, "collsim: case %s: gnuplot failed; the .gp script is in %s\n", c->vc.name,
                outdir);
    rc = cs_valid_summary_case(md, scsv, &c->vc, p, n, before);
    cs_progress_clear(bar); /* its line is on the terminal until now */
    printf("validate: %s: %d sizes\n", c->vc.name, n);
done:
    free(p);
    return rc;
}

/* Whether a and b name one existing file (the same device and inode). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* An output of the run that is one of its inputs (a case named like its measurement table in
 * the cases' own folder, -o at the measurements): exit status 2 with both named, before anything
 * is written; 0 when none is. */
static int outputs_clear(const struct cs_case *cases, int ncases, const char *cases_path,
                         const char *before_path, const char *outdir)
{
    static const char *const ext[] = {"csv", "gp", "svg"};
    char out[2048];

    for (int k = 0; k <= ncases; k++)
        for (int e = 0; e < (k < ncases ? 3 : 2); e++) {
            const char *in[3 + CS_CASE_MAX_OPS + 2];
            int nin = 0;

            if (k < ncases)
                snprintf(out, sizeof(out), "%s/%s.%s", outdir, cases[k].vc.name, ext[e]);
            else
                snprintf(out, sizeof(out), "%s/summary.%s", outdir, e ? "csv" : "md");
            in[nin++] = cases_path;
            if (before_path != NULL)
                in[nin++] = before_path;
            for (int j = 0; j < ncases; j++) {
                const struct cs_case *c = &cases[j];

                for (int i = 0; i < 3; i++) {
                    const char *v = i == 0 ? c->meas : i == 1 ? c->vc.sched : c->vc.platform;

                    if (strncmp(v, "gen:", 4) != 0 && same_file(out, v)) {
                        fprintf(stderr,
                                "collsim: %s:%d: case %s: validate would write %s over %s, an "
                                "input of case %s: give -o DIR (a folder of its own)\n",
                                cases_path, cases[k < ncases ? k : j].line,
                                k < ncases ? cases[k].vc.name : "summary", out, v, c->vc.name);
                        return CS_EXIT_USAGE;
                    }
                }
                for (int i = 0; i < c->nops; i++)
                    if (c->ops[i].is_file && same_file(out, c->ops[i].arg)) {
                        fprintf(stderr,
                                "collsim: %s:%d: validate would write %s over %s, a params= file "
                                "of case %s: give -o DIR\n",
                                cases_path, c->line, out, c->ops[i].arg, c->vc.name);
                        return CS_EXIT_USAGE;
                    }
            }
            for (int i = 0; i < nin; i++)
                if (same_file(out, in[i])) {
                    fprintf(stderr,
                            "collsim: validate would write %s over %s, its input: give -o DIR\n",
                            out, in[i]);
                    return CS_EXIT_USAGE;
                }
        }
    return 0;
}

/* Run every case into outdir's summaries, beside the earlier summary `before` (or NULL): 0 or 1
 * (some target missed), -1 on failure. */
static int run_cases(const struct cs_case *cases, int ncases, const char *cases_path,
                     const char *outdir, const struct cs_valid_before *before, int quiet)
{
    struct cs_progress bar;
    char path[2][2200];
    struct cs_outfile out[2]; /* summary.md, summary.csv: replaced only when all is written */
    struct cs_error err;
    int any_fail = 0, open = 0;

    cs_error_init(&err);
    if (cs_progress_start(&bar, "validate", "cases", ncases, quiet, &err) != 0) {
        cmd_print_error(&err);
        return -1;
    }
    mkdir(outdir, 0777);
    snprintf(path[0], sizeof(path[0]), "%s/summary.md", outdir);
    snprintf(path[1], sizeof(path[1]), "%s/summary.csv", outdir);
    while (open < 2 && cs_outfile_open(&out[open], path[open], &err) == 0)
        open++;
    if (open < 2) {
        cmd_print_error(&err);
        any_fail = -1;
    } else {
        cs_valid_summary_begin(out[0].fp, out[1].fp, cases_path, before);
    }
    for (int k = 0; k < ncases && any_fail >= 0; k++) {
        int r;

        cs_progress_update(&bar, k, cases[k].vc.name);
        r = run_case(&cases[k], cases_path, outdir, out[0].fp, out[1].fp, before, &bar);
        any_fail = r < 0 ? -1 : any_fail | r;
    }
    if (any_fail >= 0)
        cs_progress_update(&bar, ncases, NULL);
    cs_progress_end(&bar);
    for (int k = 0; k < open; k++)
        if (any_fail < 0)
            cs_outfile_discard(&out[k]);
        else if (cs_outfile_close(&out[k], &err) != 0) {
            cmd_print_error(&err);
            any_fail = -1;
        }
    return any_fail;
}

static const char validate_opts[] = "baseline=B: tolerance=t: before=F: quiet=q";

int cmd_validate(int argc, char **argv)
{
    const char *cases_path = NULL, *outdir = NULL, *baseline = NULL, *before_path = NULL;
    struct cs_valid_before *before = NULL;
    double tol = 0.02;
    struct cs_case *cases = NULL;
    int ncases = 0, rc = CS_EXIT_OK, c, started = 0, r, quiet = 0;
    char dirbuf[1024], path[2200];
    struct cs_error err;
    struct cmd_opts t;

    cmd_opts_init(&t, validate_opts);
    while ((c = cmd_getopt(argc, argv, "o:", t.opt, &started)) != -1) {
        if (c == '?')
            return CS_EXIT_USAGE;
        if (c == 'o')
            outdir = optarg;
        else if (c == 'B')
            baseline = optarg;
        else if (c == 'F')
            before_path = optarg;
        else if (c == 'q')
            quiet = 1;
        else if (cmd_opt_double("--tolerance", optarg, 0, 9.999, &tol, "a fraction >= 0") != 0)
            return CS_EXIT_USAGE;
    }
    if (optind == argc)
        return cmd_usage_error("validate needs a case file; see 'collsim help validate'");
    if (optind + 1 < argc)
        return cmd_usage_error("validate takes one case file");
    cases_path = argv[optind];
    if (outdir == NULL) {
        const char *slash = strrchr(cases_path, '/');

        snprintf(dirbuf, sizeof(dirbuf), "%.*s", slash ? (int)(slash - cases_path) : 1,
                 slash ? cases_path : ".");
        outdir = dirbuf;
    }
    cs_error_init(&err);
    if (before_path != NULL && cs_valid_before_read(before_path, &before, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if (cs_cases_read(cases_path, 0, &cases, &ncases, &err) != 0 ||
        cs_cases_check(cases, ncases, cases_path, &err) != 0) {
        cmd_print_error(&err);
        rc = CS_EXIT_USAGE;
        goto done;
    }
    if ((rc = outputs_clear(cases, ncases, cases_path, before_path, outdir)) != 0)
        goto done;
    if ((r = run_cases(cases, ncases, cases_path, outdir, before, quiet)) < 0) {
        rc = CS_EXIT_USAGE;
        goto done;
    }
    printf("validate: wrote %s/summary.md%s\n", outdir,
           r ? " (some targets not met: see the summary)" : "");
    if (baseline != NULL) {
        snprintf(path, sizeof(path), "%s/summary.csv", outdir);
        cs_error_init(&err);
        r = cs_valid_baseline_check(path, baseline, tol, stdout, &err);
        if (r < 0)
            cmd_print_error(&err);
        if (r < 0)
            rc = CS_EXIT_USAGE;
        else if (r > 0)
            rc = CS_EXIT_NEGATIVE;
        else
            printf("validate: within %.1f points of the baseline %s\n", 100 * tol, baseline);
    }
done:
    cs_valid_before_free(before);
    cs_cases_free(cases, ncases);
    return rc;
}
