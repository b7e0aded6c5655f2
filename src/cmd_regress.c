/* cmd_regress.c: `collsim regress`: re-runs every prediction of a baseline table and reports
 * what moved beyond a tolerance (or rewrites the baseline with --update). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "fdio.h"
#include "progress.h"
#include "regress.h"
#include "report.h"
#include "spawn.h"
#include "table.h"

const char cmd_regress_usage[] =
    "usage: collsim regress BASELINE.csv [--tolerance PCT] [--abs-tolerance US] [--update]\n"
    "                       [--subset N] [-j N] [--junit FILE.xml] [--quiet]\n"
    "       collsim regress --init BASELINE.csv FROM.csv... [--schedule FILE|gen:SPEC]\n"
    "                       [--platform FILE] [--protocol LL|LL128|Simple|-]\n"
    "\n"
    "Re-run every prediction of a baseline table and report those that moved. The baseline's\n"
    "columns: schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status. schedule is an\n"
    "MSCCL XML path or gen:SPEC (a generator spec, as 'predict --gen'); platform a platform\n"
    "file; protocol LL, LL128, Simple or - (the schedule's own). Relative paths are looked up\n"
    "beside the baseline, then in each folder above it (schedules/ and platforms/ of the\n"
    "repository for results/regression/baseline.csv).\n"
    "\n"
    "Prints a table of the predictions whose time moved beyond the tolerances or whose status\n"
    "changed (ok, deadlock), with old and new time and the change, then a summary. A time\n"
    "moves only when its change exceeds both tolerances, PCT percent of the old time and US\n"
    "microseconds, so that microsecond rows do not flap.\n"
    "  --tolerance PCT  relative change allowed, in percent (default 1)\n"
    "  --abs-tolerance US  absolute change allowed, in microseconds (default 0)\n"
    "  --update         rewrite the baseline with the new predictions (after a deliberate\n"
    "                   change); exit 0\n"
    "  --subset N       check only N (schedule, platform, protocol) groups, spread over the\n"
    "                   table (a quick check, as 'make check' runs)\n"
    "  -j N             predictions run in parallel (default: the number of cores)\n"
    "  --junit FILE.xml also write a JUnit XML report for CI: one testcase per baseline row\n"
    "                   checked, a failure (old, new, change) per row that moved, an error\n"
    "                   per row whose prediction failed\n"
    "  --quiet          no progress on stderr (by default one updating line on a terminal,\n"
    "                   else a line every 10 s, COLLSIM_PROGRESS_INTERVAL=SECONDS)\n"
    "\n"
    "--init writes BASELINE.csv from the rows of predict CSVs ('collsim predict --format csv',\n"
    "which name no schedule or platform: give --schedule and --platform, and --protocol\n"
    "unless the schedule's own, -) or sweep CSVs (their schedule or gen.* columns, platform\n"
    "and protocol; an option may give a column a sweep lacks). Float rows only. Paths are\n"
    "written as the CSVs or options give them and must be found from BASELINE.csv's folder\n"
    "(or one above it, or the working folder); the rows' times become the baseline.\n"
    "Exit 0: nothing moved; 1: something moved; 2: bad baseline or a prediction failed.\n";

#define PATH_LEN 4096

struct regress_args {
    const char *path, *junit;
    struct cs_regress_tol tol;
    struct cs_regress_init_opts init_opts;
    long long jobs, subset;
    int update, quiet, init;
    char **from; /* --init: the CSVs */
    int nfrom;
};

enum { OPT_ABS = 256, OPT_JUNIT, OPT_INIT, OPT_SCHEDULE, OPT_PLATFORM, OPT_PROTOCOL };

/* One group's predictions, made by a forked worker (the groups run in parallel) that writes them
 * as predict CSV to `out`. */
struct job {
    const struct cs_regress_base *b;
    const struct cs_regress_group *g;
    pid_t pid;
    char out[PATH_LEN];
    char err[PATH_LEN];
    struct cs_table *res; /* the new predictions; NULL when they failed */
};

static const struct option regress_opts[] = {
    {"tolerance", required_argument, NULL, 't'},
    {"abs-tolerance", required_argument, NULL, OPT_ABS},
    {"update", no_argument, NULL, 'u'},
    {"subset", required_argument, NULL, 's'},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"quiet", no_argument, NULL, 'q'},
    {"init", no_argument, NULL, OPT_INIT},
    {"schedule", required_argument, NULL, OPT_SCHEDULE},
    {"platform", required_argument, NULL, OPT_PLATFORM},
    {"protocol", required_argument, NULL, OPT_PROTOCOL},
    {NULL, 0, NULL, 0},
};

/* --init and its options: what else they go with. */
static int check_init(int argc, char **argv, struct regress_args *a)
{
    const struct cs_regress_init_opts *o = &a->init_opts;

    if (!a->init && (o->sched || o->plat || o->proto))
        return cmd_usage_error("regress: --schedule, --platform and --protocol go with --init");
    if (!a->init)
        return 0;
    if (a->update || a->subset || a->junit)
        return cmd_usage_error("regress: --init writes a baseline; it takes no --update, "
                               "--subset or --junit");
    if (argc - optind < 2)
        return cmd_usage_error("usage: collsim regress --init BASELINE.csv FROM.csv...");
    a->path = argv[optind];
    a->from = argv + optind + 1;
    a->nfrom = argc - optind - 1;
    return 0;
}

static int parse_args(int argc, char **argv, struct regress_args *a)
{
    int c, started = 0, rc = 0;

    while (rc == 0 && (c = cmd_getopt(argc, argv, "j:", regress_opts, &started)) != -1) {
        if (c == 't')
            rc = cmd_opt_double("--tolerance", optarg, 0, 1e6, &a->tol.pct, "a percentage >= 0");
        else if (c == OPT_ABS)
            rc = cmd_opt_double("--abs-tolerance", optarg, 0, 1e12, &a->tol.abs_us,
                                "microseconds >= 0");
        else if (c == OPT_JUNIT)
            a->junit = optarg;
        else if (c == 'q')
            a->quiet = 1;
        else if (c == OPT_INIT)
            a->init = 1;
        else if (c == OPT_SCHEDULE)
            a->init_opts.sched = optarg;
        else if (c == OPT_PLATFORM)
            a->init_opts.plat = optarg;
        else if (c == OPT_PROTOCOL)
            a->init_opts.proto = optarg;
        else if (c == 's')
            rc = cmd_opt_ll("--subset", optarg, 1, 1L << 30, &a->subset, "a number of groups >= 1");
        else if (c == 'j')
            rc = cmd_opt_ll("-j", optarg, 1, 1024, &a->jobs, "a number of processes in 1..1024");
        else if (c == 'u')
            a->update = 1;
        else
            rc = CS_EXIT_USAGE;
    }
    if (rc != 0 || (rc = check_init(argc, argv, a)) != 0 || a->init)
        return rc;
    if (optind == argc)
        return cmd_usage_error("regress: no baseline; see 'collsim help regress'");
    if (optind + 1 < argc)
        return cmd_usage_error("regress: one baseline only");
    if (a->update && a->subset)
        return cmd_usage_error("regress: --update rewrites the whole baseline; drop --subset");
    a->path = argv[optind];
    return 0;
}

/* In the worker: predict the group and print its rows as predict CSV. */
static int worker(void *ctx)
{
    const struct job *j = ctx;
    struct cs_predict_row *rows = NULL;
    struct cs_error err;
    int n = 0;

    cs_error_init(&err);
    if (cs_regress_predict(j->b, j->g, &rows, &n, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    puts(CS_REPORT_CSV_HEADER);
    for (int k = 0; k < n; k++) {
        cs_report_csv_fields(stdout, &rows[k], "float");
        putchar('\n');
        cs_predict_row_cleanup(&rows[k]);
    }
    free(rows);
    return fflush(stdout) == 0 && !ferror(stdout) ? CS_EXIT_OK : CS_EXIT_USAGE;
}

/* Collect the rows of a finished worker, or pass its error on. */
static void finish(struct job *j, int code)
{
    const struct cs_table *t = j->b->t;
    struct cs_error err;
    char *text;
    size_t n;

    cs_error_init(&err);
    if (code != 0 || cs_table_read(j->out, &j->res, &err) != 0 ||
        j->res->ncols != CS_REPORT_CSV_NCOLS ||
        strcmp(j->res->cols[0], cs_report_csv_cols[0]) != 0) {
        cs_table_free(j->res);
        j->res = NULL;
        if (cs_file_read(j->err, LONG_MAX, &text, &n, NULL) == 0) {
            fwrite(text, 1, n, stderr);
            free(text);
        }
        if (err.msg[0])
            cmd_print_error(&err);
        fprintf(stderr, "collsim: %s:%d: the prediction failed (exit %d) for %s on %s\n",
                j->b->path, t->lines[j->g->first], code,
                cs_table_get(t, j->g->first, CS_REGRESS_SCHED),
                cs_table_get(t, j->g->first, CS_REGRESS_PLAT));
    }
    unlink(j->out);
    unlink(j->err);
    cs_cleanup_drop(j->err);
    cs_cleanup_drop(j->out);
}

/* Wait for a worker; unless --quiet, show the progress meanwhile when it is due. */
static pid_t wait_worker(struct cs_progress *bar, long done, int *st)
{
    pid_t pid;

    if (bar->fp == NULL)
        return waitpid(-1, st, 0);
    while ((pid = waitpid(-1, st, WNOHANG)) == 0) {
        struct timespec ts = {0, 200 * 1000 * 1000};

        nanosleep(&ts, NULL);
        cs_progress_update(bar, done, NULL);
    }
    return pid;
}

/* Run the jobs, up to `parallel` at once, with progress on bar. Returns how many failed, or -1
 * when one cannot start. */
static int run_jobs(struct job *jobs, int n, long long parallel, struct cs_progress *bar)
{
    long done = 0;
    const char *base = getenv("TMPDIR");
    char tmpdir[PATH_LEN - 32];
    int running = 0, next = 0, failed = 0;

    /* the workers' CSVs go to a private folder in $TMPDIR (or /tmp) */
    snprintf(tmpdir, sizeof(tmpdir), "%s/collsim-regress.XXXXXX",
             base != NULL && base[0] == '/' ? base : "/tmp");
    /* a signal removes the workers' files, then the directory (best effort past 4096 paths) */
    if (cs_cleanup_mkdtemp(tmpdir) != 0) {
        fprintf(stderr, "collsim: %s: %s\n", tmpdir, strerror(errno));
        return -1;
    }
    while (next < n || running > 0) {
        int st;
        pid_t pid;

        if (next < n && running < parallel) {
            struct job *j = &jobs[next];

            snprintf(j->out, sizeof(j->out), "%s/group-%d.csv", tmpdir, next);
            snprintf(j->err, sizeof(j->err), "%s/group-%d.err", tmpdir, next);
            (void)cs_cleanup_add(j->out);
            (void)cs_cleanup_add(j->err);
            if ((j->pid = cs_spawn_fn(worker, j, j->out, j->err)) < 0)
                break;
            next++, running++;
            continue;
        }
        if ((pid = wait_worker(bar, done, &st)) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < next; i++)
            if (jobs[i].pid == pid) {
                jobs[i].pid = 0;
                running--;
                cs_progress_clear(bar); /* for finish's messages */
                finish(&jobs[i], cs_spawn_code(st));
                failed += jobs[i].res == NULL;
                cs_progress_update(bar, ++done, NULL);
            }
    }
    cs_progress_end(bar);
    for (int i = 0; i <= next && i < n; i++) {
        cs_cleanup_drop(jobs[i].err); /* a no-op for the finished ones */
        cs_cleanup_drop(jobs[i].out);
    }
    rmdir(tmpdir);
    cs_cleanup_drop(tmpdir);
    if (next < n || running > 0) {
        fprintf(stderr, "collsim: cannot run the predictions: %s\n", strerror(errno));
        return -1;
    }
    return failed;
}

/* Compare every row of the groups predicted into cmps (by baseline row; `row` -1 where not
 * compared), print those that moved and (update) take their new values. Returns how many moved,
 * or -1 when out of memory. */
static long compare(struct cs_regress_base *b, const struct job *jobs, int n,
                    const struct regress_args *a, struct cs_regress_cmp *cmps, long *checked)
{
    long moved = 0;

    for (int i = 0; i < n; i++)
        for (int k = 0; jobs[i].res != NULL && k < jobs[i].g->n; k++) {
            long r = jobs[i].g->rows[k];
            const char *ot = cs_table_get(b->t, r, CS_REGRESS_TIME);
            struct cs_regress_cmp *c = &cmps[r];

            (*checked)++;
            cs_regress_compare(b, r, jobs[i].res, &a->tol, c);
            if (!c->moved)
                continue;
            if (moved++ == 0)
                printf("%-52s %-28s %-6s %12s %12s %12s %9s\n", "schedule", "platform", "proto",
                       "size_bytes", "old_us", "new_us", "change");
            printf("%-52s %-28s %-6s %12lld %12s %12s %9s\n",
                   cs_table_get(b->t, r, CS_REGRESS_SCHED), cs_table_get(b->t, r, CS_REGRESS_PLAT),
                   cs_table_get(b->t, r, CS_REGRESS_PROTO), c->size_bytes, ot[0] ? ot : "-",
                   c->time_us ? c->time_us : "-", c->change);
            if (a->update && cs_regress_update(b, c) != 0)
                return -1;
        }
    return moved;
}

/* Write the JUnit report of the groups run: 0, or CS_EXIT_USAGE after a message. */
static int write_junit(const struct regress_args *a, const struct cs_regress_base *b,
                       const struct job *jobs, int n, const struct cs_regress_cmp *cmps)
{
    struct cs_outfile out;
    struct cs_error err;
    long tests = 0, failures = 0, errors = 0;

    for (int i = 0; i < n; i++)
        for (int k = 0; k < jobs[i].g->n; k++) {
            tests++;
            errors += jobs[i].res == NULL;
            failures += jobs[i].res != NULL && cmps[jobs[i].g->rows[k]].moved;
        }
    cs_error_init(&err);
    if (cs_outfile_open(&out, a->junit, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    cs_regress_junit_begin(out.fp, b->path, tests, failures, errors);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < jobs[i].g->n; k++) {
            long r = jobs[i].g->rows[k];

            if (jobs[i].res == NULL)
                cs_regress_junit_error(out.fp, b, r, "the prediction failed (see the log)");
            else
                cs_regress_junit_case(out.fp, b, &cmps[r], &a->tol);
        }
    cs_regress_junit_end(out.fp);
    if (cs_outfile_close(&out, &err) != 0) { /* a failed write fails the close */
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

/* --init: build the baseline and write it. An exit code. */
static int init_baseline(const struct regress_args *a)
{
    struct cs_regress_base *b = NULL;
    struct cs_error err;
    int rc;

    cs_error_init(&err);
    if ((rc = cs_regress_init(a->path, (const char *const *)a->from, a->nfrom, &a->init_opts, &b,
                              &err)) == 0)
        rc = cs_regress_write(b, &err);
    if (rc != 0) {
        cmd_print_error(&err);
        cs_regress_free(b);
        return CS_EXIT_USAGE;
    }
    printf("%s: %ld predictions in %d (schedule, platform, protocol) groups\n", a->path,
           b->t->nrows, b->ngroups);
    cs_regress_free(b);
    return CS_EXIT_OK;
}

/* Report the outcome of a check: an exit code. */
static int conclude(const struct regress_args *a, struct cs_regress_base *b, int failed, long moved,
                    long checked, int nsel)
{
    struct cs_error err;

    cs_error_init(&err);
    if (failed) {
        fprintf(stderr, "collsim: %d prediction group%s failed; %s not compared\n", failed,
                failed > 1 ? "s" : "", a->update ? "baseline not rewritten," : "they were");
        return CS_EXIT_USAGE;
    }
    if (a->update) {
        if (cs_regress_write(b, &err) != 0) {
            cmd_print_error(&err);
            return CS_EXIT_USAGE;
        }
        printf("%s: %ld of %ld predictions updated (tolerance %g%%, %g us)\n", a->path, moved,
               checked, a->tol.pct, a->tol.abs_us);
        return CS_EXIT_OK;
    }
    printf("%s: %ld of %ld predictions (%d of %d groups) moved by more than %g%%", a->path, moved,
           checked, nsel, b->ngroups, a->tol.pct);
    if (a->tol.abs_us > 0)
        printf(" and %g us", a->tol.abs_us);
    putchar('\n');
    return moved ? CS_EXIT_NEGATIVE : CS_EXIT_OK;
}

int cmd_regress(int argc, char **argv)
{
    struct regress_args a = {.tol = {1.0, 0}, .jobs = sysconf(_SC_NPROCESSORS_ONLN)};
    struct cs_regress_base *b = NULL;
    struct cs_regress_cmp *cmps = NULL;
    struct cs_progress bar;
    struct cs_error err;
    struct job *jobs = NULL;
    int *order = NULL, nsel = 0, failed, rc;
    long moved = -1, checked = 0;

    if ((rc = parse_args(argc, argv, &a)) != 0)
        return rc;
    if (a.init)
        return init_baseline(&a);
    cs_error_init(&err);
    if (cs_regress_read(a.path, &b, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    rc = CS_EXIT_USAGE;
    order = calloc((size_t)b->ngroups + 1, sizeof(*order));
    jobs = calloc((size_t)b->ngroups + 1, sizeof(*jobs));
    cmps = calloc((size_t)b->t->nrows + 1, sizeof(*cmps));
    if (order == NULL || jobs == NULL || cmps == NULL)
        goto done;
    nsel = cs_regress_select(b->ngroups, (long)a.subset, order);
    for (int i = 0; i < nsel; i++)
        jobs[i] = (struct job){.b = b, .g = &b->groups[order[i]]};
    if (cs_progress_start(&bar, "regress", "groups", nsel, a.quiet, &err) != 0) {
        cmd_print_error(&err);
        goto done;
    }
    if ((failed = run_jobs(jobs, nsel, a.jobs > 0 ? a.jobs : 1, &bar)) < 0 ||
        (moved = compare(b, jobs, nsel, &a, cmps, &checked)) < 0)
        goto done;
    rc = conclude(&a, b, failed, moved, checked, nsel);
    if (a.junit != NULL && write_junit(&a, b, jobs, nsel, cmps) != 0)
        rc = CS_EXIT_USAGE;
done:
    for (int i = 0; jobs != NULL && i < nsel; i++)
        cs_table_free(jobs[i].res);
    free(jobs);
    free(cmps);
    free(order);
    cs_regress_free(b);
    return rc;
}
