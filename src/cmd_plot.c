/* cmd_plot.c: `collsim plot`: gnuplot figures of prediction and sweep CSVs: time and bus
 * bandwidth against size per variant, and a map of the fastest variant per (size, parameter). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "table.h"

const char cmd_plot_usage[] =
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

#define MAX_FILES 64
#define MAX_AXES 64
#define MAX_LABELS 512
#define LABEL_LEN 256
#define MAX_WHERE 32

/* One plotted row. */
struct pt {
    int label;
    int param; /* index of the --best parameter's value, or -1 */
    long long size;
    double time_us;
    double busbw;
    int ok;
};

struct plot {
    char axes[MAX_AXES][128]; /* axis columns over all files (not point, not predict columns) */
    int naxes;
    char labels[MAX_LABELS][LABEL_LEN];
    int nlabels;
    char params[MAX_LABELS][LABEL_LEN];
    int nparams;
    struct pt *pts;
    long npts, cap;
};

static int is_predict_col(const char *c)
{
    static const char *const pc[] = {"size_bytes", "count",      "type",   "time_us",
                                     "algbw_GBps", "busbw_GBps", "status", NULL};

    for (int i = 0; pc[i]; i++)
        if (strcmp(pc[i], c) == 0)
            return 1;
    return 0;
}

static const char *cell(const struct cs_table *t, long r, const char *col)
{
    int c = cs_table_find_col(t, col);

    return c < 0 ? "-" : cs_table_get(t, r, c);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');

    return s ? s + 1 : p;
}

/* A short "key=value" for a legend: schedule file base names, generator and protocol values
 * alone, parameters without their prefixes, scale factors as "KEY xF". */
static size_t label_part(char *buf, size_t len, const char *sep, const char *key, const char *val)
{
    int n;

    if (strcmp(key, "schedule") == 0 || strcmp(key, "platform") == 0)
        n = snprintf(buf, len, "%s%s", sep, base_name(val));
    else if (strcmp(key, "gen.algorithm") == 0 || strcmp(key, "protocol") == 0 ||
             strcmp(key, "platform.family") == 0)
        n = snprintf(buf, len, "%s%s", sep, val);
    else if (strncmp(key, "scale.cs.", 9) == 0)
        n = snprintf(buf, len, "%s%s x%s", sep, key + 9, val);
    else if (strncmp(key, "set.cs.", 7) == 0)
        n = snprintf(buf, len, "%s%s=%s", sep, key + 7, val);
    else if (strncmp(key, "gen.", 4) == 0)
        n = snprintf(buf, len, "%s%s=%s", sep, key + 4, val);
    else if (strncmp(key, "platform.", 9) == 0)
        n = snprintf(buf, len, "%s%s=%s", sep, key + 9, val);
    else
        n = snprintf(buf, len, "%s%s=%s", sep, key, val);
    return n < 0 ? 0 : (size_t)n;
}

static int find_or_add(char (*list)[LABEL_LEN], int *n, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(list[i], s) == 0)
            return i;
    if (*n == MAX_LABELS)
        return -1;
    snprintf(list[*n], LABEL_LEN, "%s", s);
    return (*n)++;
}

static int cmp_param(const void *a, const void *b)
{
    const char *x = a, *y = b;
    char *ex, *ey;
    double dx = strtod(x, &ex), dy = strtod(y, &ey);

    if (*ex == '\0' && *ey == '\0' && ex != x && ey != y)
        return dx < dy ? -1 : dx > dy;
    return strcmp(x, y);
}

/* gnuplot string literal (single quotes: only '' needs escaping). */
static void gp_str(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', fp);
        fputc(*s, fp);
    }
    fputc('\'', fp);
}

static void style(FILE *fp, int i)
{
    /* eight colours, then dash patterns and point shapes, so that many variants stay apart */
    fprintf(fp, "lc %d dt %d pt %d", i % 8 + 1, i / 8 % 5 + 1, i % 13 + 1);
}

static void write_terminal(FILE *fp, const char *out, int w, int h)
{
    size_t n = strlen(out);

    if (n > 4 && strcmp(out + n - 4, ".svg") == 0)
        fprintf(fp,
                "set terminal svg size %d,%d dynamic noenhanced font 'Sans,12' background "
                "'white'\n",
                w, h);
    else
        fprintf(fp, "set terminal pngcairo size %d,%d noenhanced font 'Sans,11'\n", w, h);
    fputs("set output ", fp);
    gp_str(fp, out);
    fputc('\n', fp);
}

static void write_size_axis(FILE *fp)
{
    fputs("set logscale x 2\n"
          "set format x '%.0b%B'\n"
          "set xlabel 'Buffer size (bytes; ki, Mi, Gi = 2^10, 2^20, 2^30)'\n"
          "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n",
          fp);
}

static void write_lines(FILE *fp, const struct plot *p, const char *title, const char *out,
                        const char *metric)
{
    int both = strcmp(metric, "both") == 0;
    int panels = both ? 2 : 1;

    for (int l = 0; l < p->nlabels; l++) {
        fprintf(fp, "$d%d << EOD\n", l);
        for (long i = 0; i < p->npts; i++)
            if (p->pts[i].label == l && p->pts[i].ok)
                fprintf(fp, "%lld %.9g %.9g\n", p->pts[i].size, p->pts[i].time_us, p->pts[i].busbw);
        fputs("EOD\n", fp);
    }
    write_terminal(fp, out, both ? 2200 : 1400, 760);
    fputs("set multiplot layout 1,", fp);
    fprintf(fp, "%d title ", panels);
    gp_str(fp, title);
    fputc('\n', fp);
    write_size_axis(fp);
    for (int k = 0; k < 2; k++) {
        int is_time = k == 0;

        if ((is_time && strcmp(metric, "busbw") == 0) || (!is_time && strcmp(metric, "time") == 0))
            continue;
        fputs(is_time ? "set logscale y 10\nset format y '%g'\nset ylabel 'Time (us)'\n"
                      : "set logscale y 10\nset format y '%g'\n"
                        "set ylabel 'Bus bandwidth (GB/s)'\n",
              fp);
        fputs(is_time ? "set title 'Predicted time'\n" : "set title 'Bus bandwidth'\n", fp);
        /* fixed panel margins, and the legend once, in the space right of the last panel */
        if (both)
            fprintf(fp, "set lmargin at screen %s\nset rmargin at screen %s\n",
                    is_time ? "0.05" : "0.42", is_time ? "0.36" : "0.73");
        else
            fputs("set lmargin at screen 0.08\nset rmargin at screen 0.62\n", fp);
        if ((both && !is_time) || !both)
            fprintf(fp,
                    "set key at screen %s,0.90 left top vertical Left reverse font ',10' "
                    "spacing 1.1 box lc rgb '#bbbbbb'\n",
                    both ? "0.75" : "0.64");
        else
            fputs("unset key\n", fp);
        fputs("plot ", fp);
        for (int l = 0; l < p->nlabels; l++) {
            fprintf(fp, "%s$d%d using 1:%d with linespoints ", l ? ", \\\n     " : "", l,
                    is_time ? 2 : 3);
            style(fp, l);
            fputs(" title ", fp);
            gp_str(fp, p->labels[l]);
        }
        fputc('\n', fp);
    }
    fputs("unset multiplot\n", fp);
}

/* The map: for every (size, parameter value), the label with the least time that finished. */
static void write_best(FILE *fp, const struct plot *p, const char *title, const char *out,
                       const char *param)
{
    long n = p->npts;
    int *win = malloc(sizeof(int) * (size_t)(n + 1));
    int used[MAX_LABELS + 1] = {0};

    for (long i = 0; i < n; i++) {
        win[i] = -2; /* not the representative of its cell */
        for (long j = 0; j < i; j++)
            if (p->pts[j].size == p->pts[i].size && p->pts[j].param == p->pts[i].param)
                goto next;
        win[i] = -1;
        {
            double bt = 0;

            for (long j = i; j < n; j++)
                if (p->pts[j].size == p->pts[i].size && p->pts[j].param == p->pts[i].param &&
                    p->pts[j].ok && (win[i] < 0 || p->pts[j].time_us < bt)) {
                    win[i] = p->pts[j].label;
                    bt = p->pts[j].time_us;
                }
        }
        used[win[i] < 0 ? MAX_LABELS : win[i]] = 1;
    next:;
    }
    for (int l = 0; l <= MAX_LABELS; l++) {
        if (!used[l])
            continue;
        fprintf(fp, "$b%d << EOD\n", l);
        for (long i = 0; i < n; i++)
            if (win[i] != -2 && (win[i] < 0 ? MAX_LABELS : win[i]) == l)
                fprintf(fp, "%lld %d\n", p->pts[i].size, p->pts[i].param);
        fputs("EOD\n", fp);
    }
    write_terminal(fp, out, 1500, 300 + 60 * p->nparams);
    fputs("set title ", fp);
    gp_str(fp, title);
    fputc('\n', fp);
    write_size_axis(fp);
    {
        char yl[300];

        snprintf(yl, sizeof(yl), "%s%s", param,
                 strncmp(param, "scale.", 6) == 0 ? " (factor of the family default)" : "");
        fputs("set ylabel ", fp);
        gp_str(fp, yl);
    }
    fprintf(fp, "\nset yrange [-0.5:%d.5]\nset ytics (", p->nparams - 1);
    for (int v = 0; v < p->nparams; v++) {
        fputs(v ? ", " : "", fp);
        gp_str(fp, p->params[v]);
        fprintf(fp, " %d", v);
    }
    fputs(")\nset offsets graph 0.03, graph 0.03, 0, 0\n"
          "set key outside right top vertical Left reverse font ',10' spacing 2.2 title 'fastest "
          "variant'\n"
          "plot ",
          fp);
    {
        int first = 1;

        for (int l = 0; l <= MAX_LABELS; l++) {
            if (!used[l])
                continue;
            fprintf(fp, "%s$b%d using 1:2 with points ", first ? "" : ", \\\n     ", l);
            if (l == MAX_LABELS)
                fputs("lc rgb 'black' pt 2 ps 2.5 title 'none finishes (deadlock)'", fp);
            else {
                fprintf(fp, "lc %d pt %d ps 3.5 title ", l % 8 + 1, 5 + 2 * (l / 8 % 5));
                gp_str(fp, p->labels[l]);
            }
            first = 0;
        }
    }
    fputc('\n', fp);
    free(win);
}

int cmd_plot(int argc, char **argv)
{
    const char *files[MAX_FILES], *out = NULL, *script = NULL, *best = NULL, *title = NULL;
    const char *metric = "both", *where[MAX_WHERE];
    int nfiles = 0, nwhere = 0, rc = CS_EXIT_USAGE;
    struct cs_table *tabs[MAX_FILES] = {0};
    struct plot *p = calloc(1, sizeof(*p));
    char scr_tmp[] = "/tmp/collsim-plot.XXXXXX", titlebuf[512];
    FILE *fp = NULL;

    if (p == NULL)
        return CS_EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;

        if (strcmp(a, "-o") == 0 && has) {
            out = argv[++i];
        } else if (strcmp(a, "--best") == 0 && has) {
            best = argv[++i];
        } else if (strcmp(a, "--metric") == 0 && has) {
            metric = argv[++i];
            if (strcmp(metric, "time") && strcmp(metric, "busbw") && strcmp(metric, "both")) {
                free(p);
                return cmd_usage_error("plot: --metric takes time, busbw or both");
            }
        } else if (strcmp(a, "--script") == 0 && has) {
            script = argv[++i];
        } else if (strcmp(a, "--title") == 0 && has) {
            title = argv[++i];
        } else if (strcmp(a, "--where") == 0 && has) {
            if (nwhere == MAX_WHERE || strchr(argv[i + 1], '=') == NULL) {
                free(p);
                return cmd_usage_error("plot: --where takes KEY=VALUE (at most %d)", MAX_WHERE);
            }
            where[nwhere++] = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            free(p);
            return cmd_usage_error("plot: unknown option or missing value '%s'; see 'collsim "
                                   "help plot'",
                                   a);
        } else if (nfiles == MAX_FILES) {
            free(p);
            return cmd_usage_error("plot: at most %d CSV files", MAX_FILES);
        } else {
            files[nfiles++] = a;
        }
    }
    if (nfiles == 0) {
        free(p);
        return cmd_usage_error("plot: no CSV; see 'collsim help plot'");
    }
    if (out == NULL) {
        const char *b = base_name(files[0]);
        const char *dot = strrchr(b, '.');
        static char def[1024];

        snprintf(def, sizeof(def), "%.*s%s.png", (int)(dot && dot != b ? dot - b : (long)strlen(b)),
                 b, best ? "-best" : "");
        out = def;
    }
    /* read, collect axis columns */
    for (int f = 0; f < nfiles; f++) {
        struct cs_error err;

        cs_error_init(&err);
        if (cs_table_read(files[f], &tabs[f], &err) != 0) {
            cmd_print_error(&err);
            goto done;
        }
        if (cs_table_find_col(tabs[f], "size_bytes") < 0 ||
            cs_table_find_col(tabs[f], "time_us") < 0 ||
            cs_table_find_col(tabs[f], "busbw_GBps") < 0 ||
            cs_table_find_col(tabs[f], "status") < 0) {
            fprintf(stderr, "collsim: %s: not a prediction or sweep CSV (needs %s)\n", files[f],
                    CS_TABLE_PREDICT_HEADER);
            goto done;
        }
        for (int c = 0; c < tabs[f]->ncols; c++) {
            const char *k = tabs[f]->cols[c];
            int seen = 0;

            if (strcmp(k, "point") == 0 || is_predict_col(k))
                continue;
            for (int a = 0; a < p->naxes && !seen; a++)
                seen = strcmp(p->axes[a], k) == 0;
            if (!seen && p->naxes < MAX_AXES)
                snprintf(p->axes[p->naxes++], sizeof(p->axes[0]), "%s", k);
        }
    }
    if (best != NULL) {
        int found = 0;

        for (int a = 0; a < p->naxes && !found; a++)
            found = strcmp(p->axes[a], best) == 0;
        if (!found) {
            fprintf(stderr, "collsim: --best %s: no such axis column in the CSV%s\n", best,
                    nfiles > 1 ? "s" : "");
            goto done;
        }
    }
    for (int w = 0; w < nwhere; w++) {
        int found = 0;

        for (int a = 0; a < p->naxes && !found; a++)
            found = strncmp(p->axes[a], where[w], strlen(p->axes[a])) == 0 &&
                    where[w][strlen(p->axes[a])] == '=';
        if (!found) {
            fprintf(stderr, "collsim: --where %s: no such axis column\n", where[w]);
            goto done;
        }
    }
    /* which axis columns vary (over the rows kept): those name the variants */
    {
        int varies[MAX_AXES] = {0};
        char firstv[MAX_AXES][128];
        int have_first = 0;

        for (int pass = 0; pass < 2; pass++)
            for (int f = 0; f < nfiles; f++)
                for (long r = 0; r < tabs[f]->nrows; r++) {
                    int keep = 1;
                    char label[LABEL_LEN] = "";
                    size_t n = 0;
                    struct pt q;
                    char *end;

                    for (int w = 0; w < nwhere && keep; w++) {
                        const char *eq = strchr(where[w], '=');
                        char key[128];

                        snprintf(key, sizeof(key), "%.*s", (int)(eq - where[w]), where[w]);
                        keep = strcmp(cell(tabs[f], r, key), eq + 1) == 0;
                    }
                    if (!keep)
                        continue;
                    if (pass == 0) {
                        for (int a = 0; a < p->naxes; a++) {
                            if (!have_first)
                                snprintf(firstv[a], sizeof(firstv[a]), "%s",
                                         cell(tabs[f], r, p->axes[a]));
                            else if (strcmp(firstv[a], cell(tabs[f], r, p->axes[a])) != 0)
                                varies[a] = 1;
                        }
                        have_first = 1;
                        continue;
                    }
                    if (nfiles > 1 && tabs[f]->ncols == CS_TABLE_PREDICT_NCOLS)
                        n += (size_t)snprintf(label, sizeof(label), "%s", base_name(files[f]));
                    for (int a = 0; a < p->naxes && n < sizeof(label); a++) {
                        if (!varies[a] || (best && strcmp(p->axes[a], best) == 0))
                            continue;
                        n += label_part(label + n, sizeof(label) - n, n ? " " : "", p->axes[a],
                                        cell(tabs[f], r, p->axes[a]));
                    }
                    if (n == 0)
                        snprintf(label, sizeof(label), "%s", base_name(files[f]));
                    q.label = find_or_add(p->labels, &p->nlabels, label);
                    q.param =
                        best ? find_or_add(p->params, &p->nparams, cell(tabs[f], r, best)) : -1;
                    if (q.label < 0 || (best && q.param < 0)) {
                        fprintf(stderr, "collsim: more than %d variants to plot\n", MAX_LABELS);
                        goto done;
                    }
                    q.size = strtoll(cell(tabs[f], r, "size_bytes"), &end, 10);
                    if (*end != '\0' || q.size < 1) {
                        fprintf(stderr, "collsim: %s:%d: bad size_bytes\n", files[f],
                                tabs[f]->lines[r]);
                        goto done;
                    }
                    q.ok = strcmp(cell(tabs[f], r, "status"), "ok") == 0;
                    q.time_us = strtod(cell(tabs[f], r, "time_us"), NULL);
                    q.busbw = strtod(cell(tabs[f], r, "busbw_GBps"), NULL);
                    if (q.ok && !(q.time_us > 0 && isfinite(q.time_us) && q.busbw > 0)) {
                        fprintf(stderr,
                                "collsim: %s:%d: status ok but time or busbw is not a "
                                "positive number\n",
                                files[f], tabs[f]->lines[r]);
                        goto done;
                    }
                    if (p->npts == p->cap) {
                        struct pt *np =
                            realloc(p->pts, sizeof(*np) * (size_t)(p->cap = p->cap * 2 + 256));

                        if (np == NULL)
                            goto done;
                        p->pts = np;
                    }
                    p->pts[p->npts++] = q;
                }
        if (p->npts == 0) {
            fprintf(stderr, "collsim: nothing to plot%s\n", nwhere ? " (check --where)" : "");
            goto done;
        }
    }
    if (best != NULL) {
        /* order the parameter values (numerically when they are numbers) and renumber */
        static char sorted[MAX_LABELS][LABEL_LEN];
        int map[MAX_LABELS];

        memcpy(sorted, p->params, sizeof(sorted));
        qsort(sorted, (size_t)p->nparams, sizeof(sorted[0]), cmp_param);
        for (int i = 0; i < p->nparams; i++)
            for (int j = 0; j < p->nparams; j++)
                if (strcmp(p->params[i], sorted[j]) == 0)
                    map[i] = j;
        for (long i = 0; i < p->npts; i++)
            p->pts[i].param = map[p->pts[i].param];
        memcpy(p->params, sorted, sizeof(sorted));
    }
    if (title == NULL) {
        snprintf(titlebuf, sizeof(titlebuf), "%s%s%s", best ? "Fastest variant per size and " : "",
                 best ? best : "", best ? ": " : "");
        for (int f = 0; f < nfiles; f++) {
            size_t n = strlen(titlebuf);

            snprintf(titlebuf + n, sizeof(titlebuf) - n, "%s%s", f ? ", " : "",
                     base_name(files[f]));
        }
        title = titlebuf;
    }
    /* the script */
    if (script != NULL) {
        fp = fopen(script, "w");
    } else {
        int fd = mkstemp(scr_tmp);

        fp = fd < 0 ? NULL : fdopen(fd, "w");
    }
    if (fp == NULL) {
        fprintf(stderr, "collsim: %s: %s\n", script ? script : scr_tmp, strerror(errno));
        goto done;
    }
    fputs("# gnuplot script written by collsim plot\n", fp);
    if (best != NULL)
        write_best(fp, p, title, out, best);
    else
        write_lines(fp, p, title, out, metric);
    if (fclose(fp) != 0) {
        fp = NULL;
        fprintf(stderr, "collsim: cannot write the gnuplot script\n");
        goto done;
    }
    fp = NULL;
    if (script != NULL) {
        rc = CS_EXIT_OK;
        goto done;
    }
    {
        const char *gp = getenv("GNUPLOT");
        pid_t pid;
        int st;

        if (gp == NULL || *gp == '\0')
            gp = "gnuplot";
        fflush(NULL);
        if ((pid = fork()) == 0) {
            execlp(gp, gp, scr_tmp, (char *)NULL);
            fprintf(stderr,
                    "collsim: cannot run %s: %s (install gnuplot, e.g. Debian "
                    "gnuplot-nox, or set GNUPLOT)\n",
                    gp, strerror(errno));
            _exit(127);
        }
        if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "collsim: gnuplot failed on %s\n", scr_tmp);
            goto done; /* the script is kept to look at */
        }
        unlink(scr_tmp);
        if (access(out, F_OK) != 0) {
            fprintf(stderr, "collsim: gnuplot wrote no %s\n", out);
            goto done;
        }
        fprintf(stderr, "collsim: wrote %s\n", out);
    }
    rc = CS_EXIT_OK;
done:
    for (int f = 0; f < nfiles; f++)
        cs_table_free(tabs[f]);
    free(p->pts);
    free(p);
    return rc;
}
