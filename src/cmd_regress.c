/* cmd_regress.c: `collsim regress`: re-runs every prediction of a baseline table and reports
 * what moved beyond a tolerance (or rewrites the baseline with --update). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "regress.h"
#include "spawn.h"
#include "table.h"

const char cmd_regress_usage[] =
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

#define PATH_LEN 4096

/* Baseline columns, in this order. */
static const char *const cols[] = {"schedule", "platform",   "protocol", "size_bytes",
                                   "time_us",  "busbw_GBps", "status"};
enum { C_SCHED, C_PLAT, C_PROTO, C_SIZE, C_TIME, C_BUSBW, C_STATUS, NCOLS };

struct group {
    long first; /* first baseline row of the group */
    long *rows; /* its rows, sizes ascending */
    int nrows;
    long long *sizes;
    int nsizes;
    int ncalls; /* predict calls: 1 for a geometric run, else one per size */
    long long factor;
    pid_t pid;
    int call; /* the call running */
    char out[PATH_LEN];
    char err[PATH_LEN];
    struct cs_table *result; /* rows of every call, appended */
    int failed;
};

/* A path of the baseline: absolute, or relative to the baseline's folder or one of its parents
 * (so that `schedules/x.xml` is found from results/regression/). */
static int resolve(const char *base_dir, const char *rel, char *buf, size_t len)
{
    char dir[PATH_LEN / 2];

    if (rel[0] == '/') {
        snprintf(buf, len, "%s", rel);
        return access(buf, R_OK) == 0 ? 0 : -1;
    }
    snprintf(dir, sizeof(dir), "%s", base_dir);
    for (;;) {
        char *slash;

        if ((size_t)snprintf(buf, len, "%s/%s", dir, rel) < len && access(buf, R_OK) == 0)
            return 0;
        if (strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0)
            break;
        if ((slash = strrchr(dir, '/')) == NULL)
            strcpy(dir, ".");
        else if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
    }
    snprintf(buf, len, "%s", rel);
    return access(buf, R_OK) == 0 ? 0 : -1;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;

    return x < y ? -1 : x > y;
}

static int same_group(const struct cs_table *t, long a, long b)
{
    return strcmp(cs_table_get(t, a, C_SCHED), cs_table_get(t, b, C_SCHED)) == 0 &&
           strcmp(cs_table_get(t, a, C_PLAT), cs_table_get(t, b, C_PLAT)) == 0 &&
           strcmp(cs_table_get(t, a, C_PROTO), cs_table_get(t, b, C_PROTO)) == 0;
}

/* Start call g->call of a group. */
static int start_call(const struct cs_table *t, struct group *g, const char *base_dir,
                      const char *tmpdir, long gi)
{
    const char *sched = cs_table_get(t, g->first, C_SCHED);
    const char *proto = cs_table_get(t, g->first, C_PROTO);
    char sp[PATH_LEN], pp[PATH_LEN], b[32], e[32], f[32];
    char *args[20];
    int n = 0;

    args[n++] = "predict";
    if (strncmp(sched, "gen:", 4) == 0) {
        args[n++] = "--gen";
        args[n++] = (char *)sched + 4;
    } else {
        resolve(base_dir, sched, sp, sizeof(sp));
        args[n++] = sp;
    }
    resolve(base_dir, cs_table_get(t, g->first, C_PLAT), pp, sizeof(pp));
    args[n++] = "--platform";
    args[n++] = pp;
    if (strcmp(proto, "-") != 0 && proto[0] != '\0') {
        args[n++] = "--protocol";
        args[n++] = (char *)proto;
    }
    if (g->ncalls == 1) {
        snprintf(b, sizeof(b), "%lld", g->sizes[0]);
        snprintf(e, sizeof(e), "%lld", g->sizes[g->nsizes - 1]);
        snprintf(f, sizeof(f), "%lld", g->factor);
    } else {
        snprintf(b, sizeof(b), "%lld", g->sizes[g->call]);
        snprintf(e, sizeof(e), "%lld", g->sizes[g->call]);
        snprintf(f, sizeof(f), "2");
    }
    args[n++] = "-b";
    args[n++] = b;
    args[n++] = "-e";
    args[n++] = e;
    args[n++] = "-f";
    args[n++] = f;
    args[n++] = "--format";
    args[n++] = "csv";
    args[n] = NULL;
    snprintf(g->out, sizeof(g->out), "%s/group-%ld.csv", tmpdir, gi);
    snprintf(g->err, sizeof(g->err), "%s/group-%ld.err", tmpdir, gi);
    /* stderr kept aside: a deadlock's wait-for report is no news here, a failure's message is */
    g->pid = cs_spawn_start(args, g->out, g->err);
    return g->pid < 0 ? -1 : 0;
}

/* Collect the rows of a finished call. */
static int collect(struct group *g, int code)
{
    struct cs_table *t = NULL;
    struct cs_error err;
    int rc = 0;

    if (code != 0 && code != 1) {
        FILE *fp = fopen(g->err, "r");
        char buf[4096];
        size_t n;

        while (fp != NULL && (n = fread(buf, 1, sizeof(buf), fp)) > 0)
            fwrite(buf, 1, n, stderr);
        if (fp != NULL)
            fclose(fp);
        g->failed = 1;
        unlink(g->out);
        unlink(g->err);
        return -1;
    }
    unlink(g->err);
    cs_error_init(&err);
    if (cs_table_read(g->out, &t, &err) != 0 || t->ncols != CS_TABLE_PREDICT_NCOLS) {
        if (err.msg[0])
            cmd_print_error(&err);
        g->failed = 1;
        cs_table_free(t);
        unlink(g->out);
        return -1;
    }
    if (g->result == NULL) {
        g->result = t;
    } else {
        for (long r = 0; r < t->nrows && rc == 0; r++)
            rc = cs_table_add_row(g->result, (const char *const *)&t->cells[r * t->ncols], 0);
        cs_table_free(t);
    }
    unlink(g->out);
    return rc;
}

static const char *find_new(const struct group *g, long long size, int col)
{
    char s[32];

    if (g->result == NULL)
        return NULL;
    snprintf(s, sizeof(s), "%lld", size);
    for (long r = 0; r < g->result->nrows; r++)
        if (strcmp(cs_table_get(g->result, r, 0), s) == 0)
            return cs_table_get(g->result, r, col);
    return NULL;
}

static void usage_cols(const char *path)
{
    fprintf(stderr, "collsim: %s: a baseline has the columns", path);
    for (int i = 0; i < NCOLS; i++)
        fprintf(stderr, "%s%s", i ? "," : " ", cols[i]);
    fputc('\n', stderr);
}

int cmd_regress(int argc, char **argv)
{
    const char *path = NULL;
    double tol = 1.0;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN), subset = 0;
    int update = 0, rc = CS_EXIT_USAGE, ngroups = 0, running = 0, failed = 0;
    long moved = 0, checked = 0;
    struct cs_table *t = NULL;
    struct cs_error err;
    struct group *g = NULL;
    char base_dir[PATH_LEN], tmpdir[] = "/tmp/collsim-regress.XXXXXX", *slash;
    int *order = NULL, nsel = 0, next = 0;
    int have_tmp = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end;

        if (strcmp(a, "--update") == 0) {
            update = 1;
        } else if (strcmp(a, "--tolerance") == 0 && i + 1 < argc) {
            tol = strtod(argv[++i], &end);
            if (*end != '\0' || end == argv[i] || !(tol >= 0) || tol > 1e6)
                return cmd_usage_error("regress: --tolerance takes a percentage >= 0");
        } else if (strcmp(a, "--subset") == 0 && i + 1 < argc) {
            subset = strtol(argv[++i], &end, 10);
            if (*end != '\0' || end == argv[i] || subset < 1)
                return cmd_usage_error("regress: --subset takes a number of groups >= 1");
        } else if (strcmp(a, "-j") == 0 && i + 1 < argc) {
            jobs = strtol(argv[++i], &end, 10);
            if (*end != '\0' || end == argv[i] || jobs < 1 || jobs > 1024)
                return cmd_usage_error("regress: -j takes a number of processes in 1..1024");
        } else if (a[0] == '-' && a[1] != '\0') {
            return cmd_usage_error("regress: unknown option or missing value '%s'; see 'collsim "
                                   "help regress'",
                                   a);
        } else if (path == NULL) {
            path = a;
        } else {
            return cmd_usage_error("regress: one baseline only");
        }
    }
    if (path == NULL)
        return cmd_usage_error("regress: no baseline; see 'collsim help regress'");
    if (update && subset)
        return cmd_usage_error("regress: --update rewrites the whole baseline; drop --subset");
    if (jobs < 1)
        jobs = 1;
    cs_error_init(&err);
    if (cs_table_read(path, &t, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if (t->ncols != NCOLS) {
        usage_cols(path);
        goto done;
    }
    for (int i = 0; i < NCOLS; i++)
        if (strcmp(t->cols[i], cols[i]) != 0) {
            usage_cols(path);
            goto done;
        }
    snprintf(base_dir, sizeof(base_dir), "%s", path);
    if ((slash = strrchr(base_dir, '/')) == NULL)
        strcpy(base_dir, ".");
    else if (slash == base_dir)
        base_dir[1] = '\0';
    else
        *slash = '\0';
    /* groups: one (schedule, platform, protocol); check every row first */
    if ((g = calloc((size_t)t->nrows + 1, sizeof(*g))) == NULL)
        goto done;
    for (long r = 0; r < t->nrows; r++) {
        const char *sched = cs_table_get(t, r, C_SCHED), *proto = cs_table_get(t, r, C_PROTO);
        char buf[PATH_LEN], *end;
        long long size = strtoll(cs_table_get(t, r, C_SIZE), &end, 10);
        int k;

        if (*end != '\0' || size < 1) {
            fprintf(stderr, "collsim: %s:%d: bad size_bytes '%s'\n", path, t->lines[r],
                    cs_table_get(t, r, C_SIZE));
            goto done;
        }
        if (strcmp(proto, "-") != 0 && strcmp(proto, "LL") != 0 && strcmp(proto, "LL128") != 0 &&
            strcmp(proto, "Simple") != 0) {
            fprintf(stderr, "collsim: %s:%d: bad protocol '%s' (LL, LL128, Simple or -)\n", path,
                    t->lines[r], proto);
            goto done;
        }
        if (strncmp(sched, "gen:", 4) != 0 && resolve(base_dir, sched, buf, sizeof(buf)) != 0) {
            fprintf(stderr,
                    "collsim: %s:%d: schedule '%s' not found beside the baseline or "
                    "in a folder above it\n",
                    path, t->lines[r], sched);
            goto done;
        }
        if (resolve(base_dir, cs_table_get(t, r, C_PLAT), buf, sizeof(buf)) != 0) {
            fprintf(stderr,
                    "collsim: %s:%d: platform '%s' not found beside the baseline or "
                    "in a folder above it\n",
                    path, t->lines[r], cs_table_get(t, r, C_PLAT));
            goto done;
        }
        for (k = 0; k < ngroups && !same_group(t, g[k].first, r); k++)
            ;
        if (k == ngroups)
            g[ngroups++].first = r;
        for (int s = 0; s < g[k].nsizes; s++)
            if (g[k].sizes[s] == size) {
                fprintf(stderr, "collsim: %s:%d: size %lld repeats line %d\n", path, t->lines[r],
                        size, t->lines[g[k].rows[s]]);
                goto done;
            }
        {
            long long *ns = realloc(g[k].sizes, sizeof(long long) * (size_t)(g[k].nsizes + 1));
            long *nr = realloc(g[k].rows, sizeof(long) * (size_t)(g[k].nrows + 1));

            if (ns != NULL)
                g[k].sizes = ns;
            if (nr != NULL)
                g[k].rows = nr;
            if (ns == NULL || nr == NULL)
                goto done;
            g[k].sizes[g[k].nsizes++] = size;
            g[k].rows[g[k].nrows++] = r;
        }
    }
    for (int k = 0; k < ngroups; k++) {
        qsort(g[k].sizes, (size_t)g[k].nsizes, sizeof(long long), cmp_ll);
        g[k].ncalls = cs_regress_geometric(g[k].sizes, g[k].nsizes, &g[k].factor) ? 1 : g[k].nsizes;
    }
    /* the groups to run: all, or `subset` of them spread over the table */
    if ((order = calloc((size_t)ngroups + 1, sizeof(int))) == NULL)
        goto done;
    if (subset == 0 || subset >= ngroups) {
        for (int k = 0; k < ngroups; k++)
            order[nsel++] = k;
    } else {
        for (long i = 0; i < subset; i++)
            order[nsel++] = (int)(i * ngroups / subset);
    }
    if (mkdtemp(tmpdir) == NULL) {
        fprintf(stderr, "collsim: %s: %s\n", tmpdir, strerror(errno));
        goto done;
    }
    have_tmp = 1;
    /* run: up to `jobs` predict calls at once; a group's calls run one after the other */
    for (;;) {
        while (running < jobs && next < nsel) {
            struct group *x = &g[order[next]];

            if (start_call(t, x, base_dir, tmpdir, order[next]) != 0) {
                fprintf(stderr, "collsim: cannot start 'collsim predict'\n");
                goto done;
            }
            next++;
            running++;
        }
        if (running == 0)
            break;
        {
            int st;
            pid_t pid = waitpid(-1, &st, 0);

            if (pid < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            for (int i = 0; i < nsel; i++) {
                struct group *x = &g[order[i]];

                if (x->pid != pid)
                    continue;
                x->pid = 0;
                running--;
                if (collect(x, cs_spawn_code(st)) != 0) {
                    fprintf(stderr,
                            "collsim: %s:%d: 'collsim predict' failed (exit %d) for %s "
                            "on %s\n",
                            path, t->lines[x->first], cs_spawn_code(st),
                            cs_table_get(t, x->first, C_SCHED), cs_table_get(t, x->first, C_PLAT));
                    failed++;
                } else if (++x->call < x->ncalls) {
                    if (start_call(t, x, base_dir, tmpdir, order[i]) != 0)
                        goto done;
                    running++;
                }
            }
        }
    }
    /* compare */
    for (int i = 0; i < nsel; i++) {
        struct group *x = &g[order[i]];

        if (x->failed)
            continue;
        for (int j = 0; j < x->nrows; j++) {
            long r = x->rows[j];
            long long size = strtoll(cs_table_get(t, r, C_SIZE), NULL, 10);
            const char *nt = find_new(x, size, 3), *ns = find_new(x, size, 6);
            const char *ot = cs_table_get(t, r, C_TIME), *os = cs_table_get(t, r, C_STATUS);
            double ch = 0;
            int mv;

            checked++;
            if (nt == NULL) {
                mv = 1;
            } else {
                mv = cs_regress_moved(os, strtod(ot, NULL), ns, strtod(nt, NULL), tol, &ch);
            }
            if (!mv)
                continue;
            if (moved++ == 0)
                printf("%-52s %-28s %-6s %12s %12s %12s %9s\n", "schedule", "platform", "proto",
                       "size_bytes", "old_us", "new_us", "change");
            {
                char chs[32];

                if (nt == NULL)
                    snprintf(chs, sizeof(chs), "missing");
                else if (strcmp(os, ns) != 0)
                    snprintf(chs, sizeof(chs), "%s>%s", os[0] ? os : "none", ns);
                else
                    snprintf(chs, sizeof(chs), "%+.2f%%", ch);
                printf("%-52s %-28s %-6s %12lld %12s %12s %9s\n", cs_table_get(t, r, C_SCHED),
                       cs_table_get(t, r, C_PLAT), cs_table_get(t, r, C_PROTO), size,
                       ot[0] ? ot : "-", nt ? nt : "-", chs);
            }
            if (update && nt != NULL) {
                /* cells are owned by the table: replace in place */
                char **cell = &t->cells[r * t->ncols];
                char *a = strdup(nt), *b = strdup(find_new(x, size, 5)), *c = strdup(ns);

                if (a == NULL || b == NULL || c == NULL) {
                    free(a), free(b), free(c);
                    goto done;
                }
                free(cell[C_TIME]), free(cell[C_BUSBW]), free(cell[C_STATUS]);
                cell[C_TIME] = a, cell[C_BUSBW] = b, cell[C_STATUS] = c;
            }
        }
    }
    if (failed) {
        fprintf(stderr, "collsim: %d prediction group%s failed; %s not compared\n", failed,
                failed > 1 ? "s" : "", update ? "baseline not rewritten," : "they were");
        rc = CS_EXIT_USAGE;
        goto done;
    }
    if (update) {
        char tmp[PATH_LEN + 32];
        FILE *fp;

        snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
        if ((fp = fopen(tmp, "w")) == NULL || cs_table_write(t, fp) != 0 || fflush(fp) != 0 ||
            fsync(fileno(fp)) != 0 || fclose(fp) != 0 || rename(tmp, path) != 0) {
            fprintf(stderr, "collsim: %s: cannot rewrite: %s\n", path, strerror(errno));
            unlink(tmp);
            goto done;
        }
        printf("%s: %ld of %ld predictions updated (tolerance %g%%)\n", path, moved, checked, tol);
        rc = CS_EXIT_OK;
        goto done;
    }
    printf("%s: %ld of %ld predictions (%d of %d groups) moved by more than %g%%\n", path, moved,
           checked, nsel, ngroups, tol);
    rc = moved ? CS_EXIT_NEGATIVE : CS_EXIT_OK;
done:
    if (have_tmp)
        rmdir(tmpdir);
    for (int k = 0; g != NULL && k < ngroups; k++) {
        free(g[k].rows);
        free(g[k].sizes);
        cs_table_free(g[k].result);
    }
    free(g);
    free(order);
    cs_table_free(t);
    return rc;
}
