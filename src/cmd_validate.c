/* cmd_validate.c: `collsim validate`: predictions against published measurements, per case.
 *
 * Each case runs `collsim predict` (this same binary, /proc/self/exe, one child process per
 * protocol: SimGrid keeps one engine per process) over the measured sizes, matches every
 * measured size with its prediction, and writes CASE.csv, CASE.svg (gnuplot, when installed),
 * summary.md and summary.csv (the numbers a baseline is compared with).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "csv.h"
#include "valid.h"

const char cmd_validate_usage[] =
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

#define MAX_CASES 64
#define MAX_SETS 48
#define MAX_PROTOS 3

struct vcase {
    char name[128];
    char meas[1024];
    char meas_label[1024]; /* as written in the case file */
    char sched[1024]; /* a path, or gen:SPEC */
    char platform[1024];
    char protos[MAX_PROTOS][8];
    int nprotos;
    int fastest;
    int ranks;
    char coll[32];
    char *sets[MAX_SETS];
    int nsets;
    int has_fit;               /* a fit= range was given */
    double fit_min, fit_max;   /* sizes used to fit the platform: not held out */
    double size_min, size_max; /* sizes compared */
    char target[32];           /* nvswitch8 or other */
    double point_size;         /* size= for tables of time against GPU count (bytes) */
    char *notes;               /* `#: NAME: text` lines of the case file, for the summary */
    int line;
};

static void case_cleanup(struct vcase *c)
{
    free(c->notes);
    c->notes = NULL;
    for (int i = 0; i < c->nsets; i++)
        free(c->sets[i]);
    c->nsets = 0;
}

static int parse_bytes(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || v < 0 || !isfinite(v))
        return -1;
    if (*end == 'K')
        v *= 1024, end++;
    else if (*end == 'M')
        v *= 1048576, end++;
    else if (*end == 'G')
        v *= 1073741824.0, end++;
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_range(const char *s, double *lo, double *hi)
{
    char buf[128], *colon;

    snprintf(buf, sizeof(buf), "%s", s);
    colon = strchr(buf, ':');
    if (colon == NULL)
        return -1;
    *colon = '\0';
    *lo = 0;
    *hi = INFINITY;
    if ((buf[0] && parse_bytes(buf, lo) != 0) || (colon[1] && parse_bytes(colon + 1, hi) != 0) ||
        *lo > *hi)
        return -1;
    return 0;
}

/* Add `--set KEY=VALUE` for every <prop id="KEY" value="VALUE"/> in a params file. */
static int add_params_file(struct vcase *c, const char *path, const char *file, int line)
{
    FILE *fp = fopen(path, "r");
    char buf[4096];

    if (fp == NULL) {
        fprintf(stderr, "collsim: %s:%d: cannot open params file %s: %s\n", file, line, path,
                strerror(errno));
        return -1;
    }
    while (fgets(buf, sizeof(buf), fp) != NULL) {
        char *id = strstr(buf, "<prop id=\""), *val, *e1, *e2;

        if (id == NULL)
            continue;
        id += 10;
        e1 = strchr(id, '"');
        val = e1 ? strstr(e1, "value=\"") : NULL;
        if (val == NULL)
            continue;
        val += 7;
        e2 = strchr(val, '"');
        if (e2 == NULL || c->nsets == MAX_SETS)
            continue;
        *e1 = *e2 = '\0';
        c->sets[c->nsets] = malloc(strlen(id) + strlen(val) + 2);
        if (c->sets[c->nsets] == NULL) {
            fclose(fp);
            return -1;
        }
        sprintf(c->sets[c->nsets++], "%s=%s", id, val);
    }
    fclose(fp);
    return 0;
}

static const char *shared_dir(void)
{
    const char *d = getenv("CS_SHARED_DATA");

    return d && *d ? d : "../shared/data";
}

/* Parse one case line (already split into fields). */
static int parse_case(struct vcase *c, char **f, int nf, const char *file, int line)
{
    memset(c, 0, sizeof(*c));
    c->line = line;
    c->size_max = c->fit_max = INFINITY;
    snprintf(c->coll, sizeof(c->coll), "allreduce");
    snprintf(c->target, sizeof(c->target), "other");
    c->point_size = 128;
    if (nf < 5) {
        fprintf(stderr, "collsim: %s:%d: a case is NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL "
                        "[OPTION=VALUE...]\n",
                file, line);
        return -1;
    }
    for (const char *p = f[0]; *p; p++)
        if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') ||
              (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
            fprintf(stderr, "collsim: %s:%d: case name '%s': letters, digits, . _ - only\n",
                    file, line, f[0]);
            return -1;
        }
    snprintf(c->name, sizeof(c->name), "%s", f[0]);
    snprintf(c->meas_label, sizeof(c->meas_label), "%s", f[1]);
    if (strncmp(f[1], "shared:", 7) == 0)
        snprintf(c->meas, sizeof(c->meas), "%s/measurements/%s", shared_dir(), f[1] + 7);
    else
        snprintf(c->meas, sizeof(c->meas), "%s", f[1]);
    snprintf(c->sched, sizeof(c->sched), "%s", f[2]);
    snprintf(c->platform, sizeof(c->platform), "%s", f[3]);
    if (strncmp(f[4], "fastest", 7) == 0) {
        const char *list = f[4][7] == ':' ? f[4] + 8 : "LL,LL128,Simple";
        char buf[64], *tok, *save;

        if (f[4][7] != '\0' && f[4][7] != ':')
            goto badproto;
        c->fastest = 1;
        snprintf(buf, sizeof(buf), "%s", list);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (c->nprotos == MAX_PROTOS || cs_proto_parse(tok) == 0)
                goto badproto;
            snprintf(c->protos[c->nprotos++], sizeof(c->protos[0]), "%s", tok);
        }
        if (c->nprotos == 0)
            goto badproto;
    } else if (cs_proto_parse(f[4]) != 0) {
        snprintf(c->protos[c->nprotos++], sizeof(c->protos[0]), "%s", f[4]);
    } else {
        goto badproto;
    }
    for (int i = 5; i < nf; i++) {
        char *eq = strchr(f[i], '=');
        const char *k = f[i], *v = eq ? eq + 1 : NULL;

        if (eq == NULL)
            goto badopt;
        *eq = '\0';
        if (strcmp(k, "ranks") == 0) {
            c->ranks = atoi(v);
            if (c->ranks < 2)
                goto badopt;
        } else if (strcmp(k, "coll") == 0) {
            if (strcmp(v, "allreduce") && strcmp(v, "allgather") && strcmp(v, "reducescatter"))
                goto badopt;
            snprintf(c->coll, sizeof(c->coll), "%s", v);
        } else if (strcmp(k, "set") == 0) {
            if (c->nsets == MAX_SETS || strchr(v, '=') == NULL)
                goto badopt;
            c->sets[c->nsets++] = strdup(v);
        } else if (strcmp(k, "params") == 0) {
            if (add_params_file(c, v, file, line) != 0)
                return -1;
        } else if (strcmp(k, "fit") == 0) {
            if (parse_range(v, &c->fit_min, &c->fit_max) != 0)
                goto badopt;
            c->has_fit = 1;
        } else if (strcmp(k, "sizes") == 0) {
            if (parse_range(v, &c->size_min, &c->size_max) != 0)
                goto badopt;
        } else if (strcmp(k, "size") == 0) {
            if (parse_bytes(v, &c->point_size) != 0 || c->point_size <= 0)
                goto badopt;
        } else if (strcmp(k, "target") == 0) {
            if (strcmp(v, "nvswitch8") && strcmp(v, "other"))
                goto badopt;
            snprintf(c->target, sizeof(c->target), "%s", v);
        } else {
            *eq = '=';
            goto badopt;
        }
        *eq = '=';
        continue;
    badopt:
        if (eq)
            *eq = '=';
        fprintf(stderr, "collsim: %s:%d: bad case option '%s' (ranks=N, coll=..., set=KEY=VALUE, "
                        "params=FILE, fit=MIN:MAX, sizes=MIN:MAX, size=N, target=nvswitch8|other)\n",
                file, line, f[i]);
        return -1;
    }
    return 0;
badproto:
    fprintf(stderr, "collsim: %s:%d: protocol '%s': LL, LL128, Simple, fastest or "
                    "fastest:P,P...\n",
            file, line, f[4]);
    return -1;
}

/* Run `collsim predict` for one protocol; on success *out holds its CSV table. */
static int run_predict(const struct vcase *c, const char *sched, const char *platform,
                       const char *proto, double lo, double hi, struct cs_csv **out)
{
    char *argv[16 + 2 * MAX_SETS], bmin[32], bmax[32], name[256];
    int argc = 0, pfd[2], status;
    char *data = NULL;
    size_t len = 0, cap = 0;
    pid_t pid;
    struct cs_error err;

    snprintf(bmin, sizeof(bmin), "%.0f", lo);
    snprintf(bmax, sizeof(bmax), "%.0f", hi);
    argv[argc++] = "collsim";
    argv[argc++] = "predict";
    if (strncmp(sched, "gen:", 4) == 0) {
        argv[argc++] = "--gen";
        argv[argc++] = (char *)sched + 4;
    } else {
        argv[argc++] = (char *)sched;
    }
    argv[argc++] = "--platform";
    argv[argc++] = (char *)platform;
    argv[argc++] = "--protocol";
    argv[argc++] = (char *)proto;
    argv[argc++] = "-b";
    argv[argc++] = bmin;
    argv[argc++] = "-e";
    argv[argc++] = bmax;
    argv[argc++] = "-f";
    argv[argc++] = "2";
    argv[argc++] = "--format";
    argv[argc++] = "csv";
    for (int i = 0; i < c->nsets; i++) {
        argv[argc++] = "--set";
        argv[argc++] = c->sets[i];
    }
    argv[argc] = NULL;
    if (pipe(pfd) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(pfd[1]);
    for (;;) {
        ssize_t r;

        if (len + 4096 > cap) {
            char *d = realloc(data, cap = cap ? 2 * cap : 65536);

            if (d == NULL) {
                free(data);
                close(pfd[0]);
                waitpid(pid, &status, 0);
                return -1;
            }
            data = d;
        }
        r = read(pfd[0], data + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(pfd[0]);
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
        (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1)) {
        fprintf(stderr, "collsim: case %s: predict --protocol %s failed (status %d)\n", c->name,
                proto, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        free(data);
        return -1;
    }
    snprintf(name, sizeof(name), "predict(%s, %s)", c->name, proto);
    cs_error_init(&err);
    if (cs_csv_read_mem(data ? data : "", len, name, out, &err) != 0) {
        cmd_print_error(&err);
        free(data);
        return -1;
    }
    free(data);
    return 0;
}

struct result {
    struct cs_valid_point *p;
    char (*won)[8];
    int n;
};

/* Replace every {n} in `in` by n. */
static void subst_n(char *out, size_t len, const char *in, int n)
{
    size_t k = 0;

    for (const char *p = in; *p && k + 12 < len; p++) {
        if (strncmp(p, "{n}", 3) == 0) {
            k += (size_t)snprintf(out + k, len - k, "%d", n);
            p += 2;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

/* The prediction at the smallest predicted size at or above `size` (predict rounds a requested
 * size up to whole chunks of the schedule, so a size below the schedule's granularity is
 * predicted at the rounded-up size): the time in s, NAN on deadlock, INFINITY when absent. */
static double lookup(const struct cs_csv *t, double size)
{
    int cs = cs_csv_col_find(t, "size_bytes"), ct = cs_csv_col_find(t, "time_us"),
        cst = cs_csv_col_find(t, "status");
    double best = INFINITY, bsize = INFINITY;

    for (int r = 0; r < t->nrows; r++) {
        double s, us;

        if (cs_csv_get_double(t, r, cs, &s, NULL) != 0 || s < size || s >= bsize)
            continue;
        bsize = s;
        best = strcmp(cs_csv_cell(t, r, cst), "ok") == 0 &&
                       cs_csv_get_double(t, r, ct, &us, NULL) == 0
                   ? us * 1e-6
                   : NAN;
    }
    return best;
}

/* Fill predictions, the fastest over the case's protocols. A size sweep runs one predict per
 * protocol over the measured range; a table of time against GPU count runs one per count, with
 * {n} in the schedule and platform replaced by the count, at the case's size (size=, default
 * 128 B). */
static int predict_case(const struct vcase *c, struct result *res)
{
    double lo = INFINITY, hi = 0;

    for (int i = 0; i < res->n; i++) {
        if (res->p[i].size_bytes < lo)
            lo = res->p[i].size_bytes;
        if (res->p[i].size_bytes > hi)
            hi = res->p[i].size_bytes;
    }
    for (int q = 0; q < c->nprotos; q++) {
        for (int i = 0; i < res->n; i++) {
            struct cs_csv *t = NULL;
            char sched[1200], plat[1200];
            int n = res->p[i].ranks;

            if (n == 0 && i > 0)
                break; /* a size sweep: the whole range was predicted at i == 0 */
            subst_n(sched, sizeof(sched), c->sched, n);
            subst_n(plat, sizeof(plat), c->platform, n);
            if (run_predict(c, sched, plat, c->protos[q], n ? c->point_size : lo,
                            n ? c->point_size : hi * 1.01, &t) != 0)
                return -1;
            if (cs_csv_col_find(t, "size_bytes") < 0 || cs_csv_col_find(t, "time_us") < 0 ||
                cs_csv_col_find(t, "status") < 0) {
                fprintf(stderr, "collsim: case %s: predict printed no size_bytes,time_us,status\n",
                        c->name);
                cs_csv_free(t);
                return -1;
            }
            for (int j = n ? i : 0; j < (n ? i + 1 : res->n); j++) {
                double v = lookup(t, n ? c->point_size : res->p[j].size_bytes);

                if (isfinite(v) && !(v >= res->p[j].pred_s)) {
                    res->p[j].pred_s = v;
                    snprintf(res->won[j], 8, "%s", c->protos[q]);
                }
            }
            cs_csv_free(t);
        }
    }
    return 0;
}

static void write_case_csv(FILE *fp, const struct result *res)
{
    int by_n = res->n > 0 && res->p[0].ranks > 0;

    fprintf(fp, "%s,measured_us,predicted_us,error_pct,protocol,held_out\n",
            by_n ? "n_gpus" : "size_bytes");
    for (int i = 0; i < res->n; i++) {
        const struct cs_valid_point *p = &res->p[i];
        double x = by_n ? p->ranks : p->size_bytes;

        if (isfinite(p->pred_s))
            fprintf(fp, "%.0f,%.4f,%.4f,%.2f,%s,%d\n", x, p->meas_s * 1e6, p->pred_s * 1e6,
                    100 * (p->pred_s - p->meas_s) / p->meas_s, res->won[i], p->held_out);
        else
            fprintf(fp, "%.0f,%.4f,,,none,%d\n", x, p->meas_s * 1e6, p->held_out);
    }
}

/* A gnuplot script per case, and the SVG when gnuplot is installed. Returns 0, 1 without
 * gnuplot, -1 on failure. */
static int write_plot(const char *dir, const struct vcase *c, int by_n)
{
    char path[2048], cmd[4400];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/%s.gp", dir, c->name);
    fp = fopen(path, "w");
    if (fp == NULL)
        return -1;
    fprintf(fp, "# gnuplot script written by collsim validate\n"
                "set terminal svg size 720,480 dynamic\n"
                "set output '%s.svg'\n"
                "set datafile separator ','\n"
                "%s"
                "set key top left\n"
                "set grid\n"
                "set title \"%s: measured vs predicted\" noenhanced\n"
                "set xlabel '%s'\n"
                "set ylabel 'time (us)'\n"
                "plot '%s.csv' skip 1 using 1:2 with linespoints title 'measured', \\\n"
                "     '%s.csv' skip 1 using 1:3 with linespoints title 'predicted (%s)'\n",
            c->name, by_n ? "set logscale y\n" : "set logscale xy\n", c->name,
            by_n ? "GPUs" : "size (bytes)", c->name, c->name,
            c->fastest ? "fastest protocol" : c->protos[0]);
    if (fclose(fp) != 0)
        return -1;
    if (access("/usr/bin/gnuplot", X_OK) != 0)
        return 1;
    snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot '%s.gp' 2>/dev/null", dir, c->name);
    return system(cmd) == 0 ? 0 : -1;
}

/* Summary statistics of one case into the Markdown and CSV summaries. */
static int summarise(FILE *md, FILE *csv, const struct vcase *c, const struct result *res)
{
    int missed = 0;
    int held = c->has_fit;

    char pdesc[64] = "";

    for (int q = 0; q < c->nprotos; q++)
        snprintf(pdesc + strlen(pdesc), sizeof(pdesc) - strlen(pdesc), "%s%s", q ? "/" : "",
                 c->protos[q]);
    fprintf(md, "\n### %s\n\nMeasurement `%s`; schedule `%s`; platform `%s`; protocol %s%s.",
            c->name, c->meas_label, c->sched, c->platform, c->fastest ? "fastest of " : "",
            pdesc);
    if (held)
    {
        char hi[64] = "up";

        if (isfinite(c->fit_max))
            snprintf(hi, sizeof(hi), "to %.0f B", c->fit_max);
        fprintf(md, " Sizes from %.0f B %s were used to fit the platform; the table reports the "
                    "other sizes (held out).",
                c->fit_min, hi);
    }
    fprintf(md, "\n\n| band | sizes | median abs error | max abs error (at size) | missing |\n"
                "|---|---|---|---|---|\n");
    for (int b = 0; b < CS_NBANDS; b++) {
        struct cs_valid_stats s;

        cs_valid_stats(res->p, res->n, (enum cs_band)b, held, &s);
        if (s.n == 0 && s.missing == 0)
            continue;
        fprintf(md, "| %s%s | %d | ", cs_band_name((enum cs_band)b), held ? " (held out)" : "",
                s.n);
        if (s.n > 0 && s.max_ranks > 0)
            fprintf(md, "%.1f%% | %.1f%% (%d GPUs) | %d |\n", 100 * s.median_abs,
                    100 * s.max_abs, s.max_ranks, s.missing);
        else if (s.n > 0)
            fprintf(md, "%.1f%% | %.1f%% (%.0f B) | %d |\n", 100 * s.median_abs, 100 * s.max_abs,
                    s.max_size, s.missing);
        else
            fprintf(md, "- | - | %d |\n", s.missing);
        fprintf(csv, "%s,%d,%d,%.6f,%.6f,%d\n", c->name, b, s.n, s.n ? s.median_abs : NAN,
                s.n ? s.max_abs : NAN, s.missing);
    }
    {
        struct cs_valid_stats all, large;
        double t_all = strcmp(c->target, "nvswitch8") == 0 ? 0.10 : 0.15;

        cs_valid_stats(res->p, res->n, CS_BAND_ALL, held, &all);
        cs_valid_stats(res->p, res->n, CS_BAND_LARGE, held, &large);
        fprintf(md, "\nTarget (%s): median at most %.0f%% over all sizes", c->target, 100 * t_all);
        if (strcmp(c->target, "nvswitch8") == 0)
            fprintf(md, ", at most 5%% at 4 MiB and up");
        fprintf(md, ": ");
        if (all.n == 0) {
            fprintf(md, "no predictions.\n");
            return 1;
        }
        if (all.median_abs <= t_all)
            fprintf(md, "all sizes met (%.1f%%)", 100 * all.median_abs);
        else {
            fprintf(md, "all sizes missed by %.1f points (%.1f%%)",
                    100 * (all.median_abs - t_all), 100 * all.median_abs);
            missed = 1;
        }
        if (strcmp(c->target, "nvswitch8") == 0 && large.n > 0) {
            if (large.median_abs <= 0.05)
                fprintf(md, "; >= 4 MiB met (%.1f%%)", 100 * large.median_abs);
            else {
                fprintf(md, "; >= 4 MiB missed by %.1f points (%.1f%%)",
                        100 * (large.median_abs - 0.05), 100 * large.median_abs);
                missed = 1;
            }
        }
        fprintf(md, ".\n\n");
        if (c->notes != NULL)
            fprintf(md, "%s\n", c->notes);
        fprintf(md, "![%s](%s.svg)\n", c->name, c->name);
    }
    return missed;
}

/* Compare summary.csv rows with a baseline: fail when a median or max |error| grows by more than
 * tol (absolute, as a fraction) or a case/band disappears. */
static int check_baseline(const char *summary, const char *baseline, double tol)
{
    struct cs_csv *s = NULL, *b = NULL;
    struct cs_error err;
    int worse = 0;

    cs_error_init(&err);
    if (cs_csv_read(summary, &s, &err) != 0 || cs_csv_read(baseline, &b, &err) != 0) {
        cmd_print_error(&err);
        cs_csv_free(s);
        return -1;
    }
    for (int r = 0; r < b->nrows; r++) {
        int found = 0;

        for (int q = 0; q < s->nrows && !found; q++) {
            double bm, bx, sm, sx;

            if (strcmp(cs_csv_cell(b, r, 0), cs_csv_cell(s, q, 0)) != 0 ||
                strcmp(cs_csv_cell(b, r, 1), cs_csv_cell(s, q, 1)) != 0)
                continue;
            found = 1;
            if (cs_csv_get_double(b, r, 3, &bm, NULL) != 0 ||
                cs_csv_get_double(b, r, 4, &bx, NULL) != 0)
                continue;
            if (cs_csv_get_double(s, q, 3, &sm, NULL) != 0 ||
                cs_csv_get_double(s, q, 4, &sx, NULL) != 0 || sm > bm + tol || sx > bx + tol) {
                printf("validate: %s band %s: median %.2f%% max %.2f%% (baseline %.2f%% %.2f%%, "
                       "tolerance %.2f points)\n",
                       cs_csv_cell(s, q, 0), cs_band_name(atoi(cs_csv_cell(s, q, 1))), 100 * sm,
                       100 * sx, 100 * bm, 100 * bx, 100 * tol);
                worse = 1;
            }
        }
        if (!found) {
            printf("validate: %s band %s: in the baseline, not in this run\n",
                   cs_csv_cell(b, r, 0), cs_csv_cell(b, r, 1));
            worse = 1;
        }
    }
    cs_csv_free(s);
    cs_csv_free(b);
    return worse;
}

int cmd_validate(int argc, char **argv)
{
    const char *cases_path = NULL, *outdir = NULL, *baseline = NULL;
    double tol = 0.02;
    static struct vcase cases[MAX_CASES];
    int ncases = 0, rc = CS_EXIT_OK, line = 0, any_fail = 0;
    char dirbuf[1024], path[2200];
    FILE *fp, *md = NULL, *scsv = NULL;
    char buf[8192];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            outdir = argv[++i];
        else if (strcmp(argv[i], "--baseline") == 0 && i + 1 < argc)
            baseline = argv[++i];
        else if (strcmp(argv[i], "--tolerance") == 0 && i + 1 < argc) {
            char *end;

            tol = strtod(argv[++i], &end);
            if (*end != '\0' || !(tol >= 0 && tol < 10))
                return cmd_usage_error("--tolerance: '%s' is not a fraction >= 0", argv[i]);
        } else if (argv[i][0] == '-')
            return cmd_usage_error("validate: unknown option or missing value '%s'", argv[i]);
        else if (cases_path == NULL)
            cases_path = argv[i];
        else
            return cmd_usage_error("validate takes one case file");
    }
    if (cases_path == NULL)
        return cmd_usage_error("validate needs a case file; see 'collsim help validate'");
    if (outdir == NULL) {
        const char *slash = strrchr(cases_path, '/');

        snprintf(dirbuf, sizeof(dirbuf), "%.*s", slash ? (int)(slash - cases_path) : 1,
                 slash ? cases_path : ".");
        outdir = dirbuf;
    }
    fp = fopen(cases_path, "r");
    if (fp == NULL) {
        fprintf(stderr, "collsim: %s: cannot open: %s\n", cases_path, strerror(errno));
        return CS_EXIT_USAGE;
    }
    while (fgets(buf, sizeof(buf), fp) != NULL) {
        char *f[64], *save, *tok;
        int nf = 0;

        line++;
        if (strchr(buf, '\n') == NULL && !feof(fp)) {
            fprintf(stderr, "collsim: %s:%d: line too long\n", cases_path, line);
            rc = CS_EXIT_USAGE;
            break;
        }
        if (strncmp(buf, "#:", 2) == 0) {
            /* A note for a case defined above: `#: NAME: text`. */
            char *name = buf + 2, *colon, *text;
            int k;

            while (*name == ' ')
                name++;
            colon = strchr(name, ':');
            if (colon == NULL)
                continue;
            *colon = '\0';
            text = colon + 1;
            while (*text == ' ')
                text++;
            text[strcspn(text, "\r\n")] = '\0';
            for (k = 0; k < ncases && strcmp(cases[k].name, name) != 0; k++)
                ;
            if (k == ncases) {
                fprintf(stderr, "collsim: %s:%d: note for an unknown case '%s'\n", cases_path,
                        line, name);
                rc = CS_EXIT_USAGE;
                break;
            }
            {
                size_t old_len = cases[k].notes ? strlen(cases[k].notes) : 0;
                char *nn = realloc(cases[k].notes, old_len + strlen(text) + 2);

                if (nn == NULL) {
                    rc = CS_EXIT_USAGE;
                    break;
                }
                if (old_len == 0)
                    nn[0] = '\0';
                strcat(strcat(nn, text), "\n");
                cases[k].notes = nn;
            }
            continue;
        }
        for (tok = strtok_r(buf, " \t\r\n", &save); tok && nf < 64;
             tok = strtok_r(NULL, " \t\r\n", &save)) {
            if (tok[0] == '#')
                break;
            f[nf++] = tok;
        }
        if (nf == 0)
            continue;
        if (ncases == MAX_CASES) {
            fprintf(stderr, "collsim: %s:%d: more than %d cases\n", cases_path, line, MAX_CASES);
            rc = CS_EXIT_USAGE;
            break;
        }
        if (parse_case(&cases[ncases], f, nf, cases_path, line) != 0) {
            case_cleanup(&cases[ncases]);
            rc = CS_EXIT_USAGE;
            break;
        }
        for (int k = 0; k < ncases; k++)
            if (strcmp(cases[k].name, cases[ncases].name) == 0) {
                fprintf(stderr, "collsim: %s:%d: case '%s' again (first on line %d)\n",
                        cases_path, line, cases[k].name, cases[k].line);
                rc = CS_EXIT_USAGE;
            }
        ncases++;
        if (rc != CS_EXIT_OK)
            break;
    }
    fclose(fp);
    if (rc == CS_EXIT_OK && ncases == 0) {
        fprintf(stderr, "collsim: %s: no cases\n", cases_path);
        rc = CS_EXIT_USAGE;
    }
    if (rc != CS_EXIT_OK)
        goto done;
    mkdir(outdir, 0777);
    snprintf(path, sizeof(path), "%s/summary.md", outdir);
    md = fopen(path, "w");
    snprintf(path, sizeof(path), "%s/summary.csv", outdir);
    scsv = fopen(path, "w");
    if (md == NULL || scsv == NULL) {
        fprintf(stderr, "collsim: cannot write the summary in %s\n", outdir);
        rc = CS_EXIT_USAGE;
        goto done;
    }
    fprintf(md, "# Validation: predicted against measured times\n\n"
                "Written by `collsim validate %s`. Error = (predicted - measured) / measured, "
                "measured = the median of the table's rows at a size (in and out of place). "
                "Bands: <= 64 KiB, 64 KiB - 4 MiB, >= 4 MiB. Targets (issue 5): median |error| "
                "<= 10%% over all sizes and <= 5%% at >= 4 MiB on the 8-GPU NVSwitch systems, "
                "<= 15%% on the others.\n",
            cases_path);
    fprintf(scsv, "case,band,n,median_abs,max_abs,missing\n");
    for (int k = 0; k < ncases; k++) {
        struct vcase *c = &cases[k];
        struct result res = {0};
        struct cs_error err;
        FILE *cf;

        cs_error_init(&err);
        if (cs_valid_read_measurement(c->meas, c->coll, c->ranks, &res.p, &res.n, &err) != 0) {
            cmd_print_error(&err);
            rc = CS_EXIT_USAGE;
            goto done;
        }
        /* Keep the compared sizes; mark the fitted ones. */
        {
            int m = 0;

            for (int i = 0; i < res.n; i++)
                if (res.p[i].size_bytes >= c->size_min && res.p[i].size_bytes <= c->size_max) {
                    res.p[m] = res.p[i];
                    res.p[m].held_out = !c->has_fit || !(res.p[m].size_bytes >= c->fit_min &&
                                                         res.p[m].size_bytes <= c->fit_max);
                    m++;
                }
            res.n = m;
        }
        res.won = calloc((size_t)(res.n ? res.n : 1), sizeof(*res.won));
        if (res.won == NULL || res.n == 0 || predict_case(c, &res) != 0) {
            if (res.n == 0)
                fprintf(stderr, "collsim: %s:%d: case %s: no measured sizes in range\n",
                        cases_path, c->line, c->name);
            free(res.p);
            free(res.won);
            rc = CS_EXIT_USAGE;
            goto done;
        }
        snprintf(path, sizeof(path), "%s/%s.csv", outdir, c->name);
        cf = fopen(path, "w");
        if (cf == NULL) {
            fprintf(stderr, "collsim: cannot write %s\n", path);
            free(res.p);
            free(res.won);
            rc = CS_EXIT_USAGE;
            goto done;
        }
        write_case_csv(cf, &res);
        fclose(cf);
        if (write_plot(outdir, c, res.n > 0 && res.p[0].ranks > 0) < 0)
            fprintf(stderr, "collsim: case %s: gnuplot failed; the .gp script is in %s\n",
                    c->name, outdir);
        any_fail |= summarise(md, scsv, c, &res);
        printf("validate: %s: %d sizes\n", c->name, res.n);
        free(res.p);
        free(res.won);
    }
    fclose(md);
    fclose(scsv);
    md = scsv = NULL;
    printf("validate: wrote %s/summary.md%s\n", outdir,
           any_fail ? " (some targets not met: see the summary)" : "");
    if (baseline != NULL) {
        int w;

        snprintf(path, sizeof(path), "%s/summary.csv", outdir);
        w = check_baseline(path, baseline, tol);
        if (w < 0)
            rc = CS_EXIT_USAGE;
        else if (w > 0)
            rc = CS_EXIT_NEGATIVE;
        else
            printf("validate: within %.1f points of the baseline %s\n", 100 * tol, baseline);
    }
done:
    if (md)
        fclose(md);
    if (scsv)
        fclose(scsv);
    for (int k = 0; k < ncases; k++)
        case_cleanup(&cases[k]);
    return rc;
}
