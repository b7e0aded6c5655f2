/* plot.c: gnuplot scripts for prediction and sweep tables: the rows grouped into variants by the
 * axis columns that vary, then time and bus bandwidth lines or the fastest-variant map. */
#include "plot.h"

#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "report.h"

#define MAX_AXES 64
#define AXIS_LEN 128
#define MAX_LABELS 512
#define LABEL_LEN 256
#define NONE MAX_LABELS /* the map's "no variant finishes" class */

/* One plotted row. */
struct pt {
    int label;
    int param; /* index of the map parameter's value, or -1 */
    long long size;
    double time_us;
    double busbw;
    int ok;
};

struct cs_plot {
    struct cs_plot_opts o;
    char title[512];
    char axes[MAX_AXES][AXIS_LEN]; /* axis columns over all tables (not point, not predict ones) */
    int naxes;
    int varies[MAX_AXES]; /* over the rows kept: those name the variants */
    char labels[MAX_LABELS][LABEL_LEN];
    int nlabels;
    char params[MAX_LABELS][LABEL_LEN];
    int nparams;
    struct pt *pts; /* room for every row of the tables */
    long npts;
};

static int is_predict_col(const char *c)
{
    for (int i = 0; i < CS_REPORT_CSV_NCOLS; i++)
        if (strcmp(cs_report_csv_cols[i], c) == 0)
            return 1;
    /* predict --compare's columns (CS_REPORT_CSV_COMPARE) are not axes either */
    return strcmp(c, "measured_us") == 0 || strcmp(c, "error_pct") == 0;
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
    /* the prefix dropped from a key: the first that matches; "scale.cs." keys read "KEY xF" */
    static const char *const prefixes[] = {"scale.cs.", "set.cs.", "gen.", "platform.", ""};
    const char *const *p = prefixes;
    int path = strcmp(key, "schedule") == 0 || strcmp(key, "platform") == 0, n;

    if (path || strcmp(key, "gen.algorithm") == 0 || strcmp(key, "protocol") == 0 ||
        strcmp(key, "platform.family") == 0) {
        n = snprintf(buf, len, "%s%s", sep, path ? base_name(val) : val);
    } else {
        while (strncmp(key, *p, strlen(*p)) != 0)
            p++;
        n = snprintf(buf, len, p == prefixes ? "%s%s x%s" : "%s%s=%s", sep, key + strlen(*p), val);
    }
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

/* The axis column named by the first keylen bytes of key, or -1. */
static int find_axis(const struct cs_plot *p, const char *key, size_t keylen)
{
    for (int a = 0; a < p->naxes; a++)
        if (strlen(p->axes[a]) == keylen && strncmp(p->axes[a], key, keylen) == 0)
            return a;
    return -1;
}

/* Check that a table holds predictions, and gather its axis columns. */
static int add_axes(struct cs_plot *p, const struct cs_table *t, const char *name,
                    struct cs_error *err)
{
    static const char *const need[] = {"size_bytes", "time_us", "busbw_GBps", "status"};

    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
        if (cs_table_find_col(t, need[i]) < 0) {
            cs_error_set(err, name, 0, "not a prediction or sweep CSV (needs %s)",
                         CS_REPORT_CSV_HEADER);
            return CS_ERR_INVALID;
        }
    for (int c = 0; c < t->ncols; c++) {
        const char *k = t->cols[c];

        if (strcmp(k, "point") == 0 || is_predict_col(k) || find_axis(p, k, strlen(k)) >= 0)
            continue;
        if (p->naxes < MAX_AXES)
            snprintf(p->axes[p->naxes++], AXIS_LEN, "%s", k);
    }
    return 0;
}

/* Check that --best and every --where name an axis column. */
static int check_options(const struct cs_plot *p, int ntabs, struct cs_error *err)
{
    const struct cs_plot_opts *o = &p->o;

    if (o->best != NULL && find_axis(p, o->best, strlen(o->best)) < 0) {
        cs_error_set(err, NULL, 0, "--best %s: no such axis column in the CSV%s", o->best,
                     ntabs > 1 ? "s" : "");
        return CS_ERR_INVALID;
    }
    for (int w = 0; w < o->nwhere; w++) {
        const char *eq = strchr(o->where[w], '=');

        if (eq == NULL || find_axis(p, o->where[w], (size_t)(eq - o->where[w])) < 0) {
            cs_error_set(err, NULL, 0, "--where %s: no such axis column", o->where[w]);
            return CS_ERR_INVALID;
        }
    }
    return 0;
}

/* Whether row r passes every --where (checked KEY=VALUE by now). */
static int row_kept(const struct cs_plot *p, const struct cs_table *t, long r)
{
    for (int w = 0; w < p->o.nwhere; w++) {
        const char *kv = p->o.where[w], *eq = strchr(kv, '=');
        char key[AXIS_LEN];

        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        if (strcmp(cell(t, r, key), eq + 1) != 0)
            return 0;
    }
    return 1;
}

/* Mark the axis columns whose value changes over the rows kept, and gather the values of the
 * map's parameter (past MAX_LABELS, add_row says so). */
static void find_varying(struct cs_plot *p, const struct cs_table *const *tabs, int ntabs)
{
    const char *first[MAX_AXES];
    int have_first = 0;

    for (int f = 0; f < ntabs; f++)
        for (long r = 0; r < tabs[f]->nrows; r++) {
            if (!row_kept(p, tabs[f], r))
                continue;
            for (int a = 0; a < p->naxes; a++) {
                if (!have_first)
                    first[a] = cell(tabs[f], r, p->axes[a]);
                else if (strcmp(first[a], cell(tabs[f], r, p->axes[a])) != 0)
                    p->varies[a] = 1;
            }
            if (p->o.best != NULL)
                find_or_add(p->params, &p->nparams, cell(tabs[f], r, p->o.best));
            have_first = 1;
        }
}

/* The legend of row r: its varying columns (not the map's parameter), after the table's name
 * when several plain prediction tables are drawn; the table's name when nothing varies. */
static void row_label(const struct cs_plot *p, const struct cs_table *t, const char *name,
                      int ntabs, long r, char *label, size_t len)
{
    size_t n = 0;

    label[0] = '\0';
    if (ntabs > 1 && t->ncols == CS_REPORT_CSV_NCOLS)
        n += (size_t)snprintf(label, len, "%s", base_name(name));
    for (int a = 0; a < p->naxes && n < len; a++) {
        if (!p->varies[a] || (p->o.best && strcmp(p->axes[a], p->o.best) == 0))
            continue;
        n += label_part(label + n, len - n, n ? " " : "", p->axes[a], cell(t, r, p->axes[a]));
    }
    if (n == 0)
        snprintf(label, len, "%s", base_name(name));
}

/* Size, status, time and bandwidth of row r. */
static int row_values(const struct cs_table *t, const char *name, long r, struct pt *q,
                      struct cs_error *err)
{
    if (cs_parse_ll(cell(t, r, "size_bytes"), 1, LLONG_MAX, &q->size) != 0) {
        cs_error_set(err, name, t->lines[r], "bad size_bytes");
        return CS_ERR_PARSE;
    }
    q->ok = strcmp(cell(t, r, "status"), "ok") == 0;
    q->time_us = q->busbw = 0;
    if (q->ok && (cs_parse_double(cell(t, r, "time_us"), 0, DBL_MAX, &q->time_us) != 0 ||
                  cs_parse_double(cell(t, r, "busbw_GBps"), 0, DBL_MAX, &q->busbw) != 0 ||
                  q->time_us <= 0 || q->busbw <= 0)) {
        cs_error_set(err, name, t->lines[r],
                     "status ok but time or busbw is not a positive number");
        return CS_ERR_PARSE;
    }
    return 0;
}

static int add_row(struct cs_plot *p, const struct cs_table *t, const char *name, int ntabs, long r,
                   struct cs_error *err)
{
    char label[LABEL_LEN];
    struct pt q;
    int rc;

    row_label(p, t, name, ntabs, r, label, sizeof(label));
    q.label = find_or_add(p->labels, &p->nlabels, label);
    q.param = p->o.best ? find_or_add(p->params, &p->nparams, cell(t, r, p->o.best)) : -1;
    if (q.label < 0 || (p->o.best && q.param < 0)) {
        cs_error_set(err, NULL, 0, "more than %d variants to plot", MAX_LABELS);
        return CS_ERR_INVALID;
    }
    if ((rc = row_values(t, name, r, &q, err)) != 0)
        return rc;
    p->pts[p->npts++] = q;
    return 0;
}

/* Parameter values in order, numerically when both are numbers. */
static int cmp_param(const void *a, const void *b)
{
    const char *x = a, *y = b;
    char *ex, *ey;
    double dx = strtod(x, &ex), dy = strtod(y, &ey);

    if (*ex == '\0' && *ey == '\0' && ex != x && ey != y)
        return dx < dy ? -1 : dx > dy;
    return strcmp(x, y);
}

static void default_title(struct cs_plot *p, const char *const *names, int ntabs)
{
    const char *best = p->o.best;

    snprintf(p->title, sizeof(p->title), "%s%s%s", best ? "Fastest variant per size and " : "",
             best ? best : "", best ? ": " : "");
    for (int f = 0; f < ntabs; f++) {
        size_t n = strlen(p->title);

        snprintf(p->title + n, sizeof(p->title) - n, "%s%s", f ? ", " : "", base_name(names[f]));
    }
}

static int collect(struct cs_plot *p, const struct cs_table *const *tabs, const char *const *names,
                   int ntabs, struct cs_error *err)
{
    long nrows = 0;
    int rc;

    for (int f = 0; f < ntabs; f++) {
        if ((rc = add_axes(p, tabs[f], names[f], err)) != 0)
            return rc;
        nrows += tabs[f]->nrows;
    }
    if ((p->pts = malloc(sizeof(*p->pts) * (size_t)(nrows + 1))) == NULL) {
        cs_error_set(err, NULL, 0, "out of memory");
        return CS_ERR_NOMEM;
    }
    if ((rc = check_options(p, ntabs, err)) != 0)
        return rc;
    find_varying(p, tabs, ntabs);
    qsort(p->params, (size_t)p->nparams, sizeof(p->params[0]), cmp_param);
    for (int f = 0; f < ntabs; f++)
        for (long r = 0; r < tabs[f]->nrows; r++)
            if (row_kept(p, tabs[f], r) && (rc = add_row(p, tabs[f], names[f], ntabs, r, err)))
                return rc;
    if (p->npts == 0) {
        cs_error_set(err, NULL, 0, "nothing to plot%s", p->o.nwhere ? " (check --where)" : "");
        return CS_ERR_INVALID;
    }
    return 0;
}

int cs_plot_new(const struct cs_table *const *tabs, const char *const *names, int ntabs,
                const struct cs_plot_opts *o, struct cs_plot **out, struct cs_error *err)
{
    struct cs_plot *p = calloc(1, sizeof(*p));
    int rc;

    if (p == NULL) {
        cs_error_set(err, NULL, 0, "out of memory");
        return CS_ERR_NOMEM;
    }
    p->o = *o;
    if (p->o.metric == NULL)
        p->o.metric = "both";
    if ((rc = collect(p, tabs, names, ntabs, err)) != 0) {
        cs_plot_free(p);
        return rc;
    }
    if (o->title != NULL)
        snprintf(p->title, sizeof(p->title), "%s", o->title);
    else
        default_title(p, names, ntabs);
    *out = p;
    return 0;
}

void cs_plot_free(struct cs_plot *p)
{
    if (p == NULL)
        return;
    free(p->pts);
    free(p);
}

/* before, s as a gnuplot string literal (single quotes, in which only '' needs escaping), after. */
static void gp_str(FILE *fp, const char *before, const char *s, const char *after)
{
    const char *q;

    fprintf(fp, "%s'", before);
    while ((q = strchr(s, '\'')) != NULL) {
        fwrite(s, 1, (size_t)(q - s) + 1, fp);
        fputc('\'', fp);
        s = q + 1;
    }
    fprintf(fp, "%s'%s", s, after);
}

static void style(FILE *fp, int i)
{
    /* eight colours, then dash patterns and point shapes, so that many variants stay apart */
    fprintf(fp, "lc %d dt %d pt %d", i % 8 + 1, i / 8 % 5 + 1, i % 13 + 1);
}

static void write_terminal(FILE *fp, const struct cs_plot_opts *o, int w, int h)
{
    const char *out = o->out;
    size_t n = strlen(out);

    if (n > 4 && strcmp(out + n - 4, ".svg") == 0)
        fprintf(fp,
                "set terminal svg size %d,%d dynamic noenhanced font 'Sans,12' background "
                "'white'\n",
                w, h);
    else
        fprintf(fp, "set terminal pngcairo size %d,%d noenhanced font 'Sans,11'\n", w, h);
    gp_str(fp, "set output ", o->write_to != NULL ? o->write_to : out, "\n");
}

static void write_size_axis(FILE *fp)
{
    fputs("set logscale x 2\n"
          "set format x '%.0b%B'\n"
          "set xlabel 'Buffer size (bytes; ki, Mi, Gi = 2^10, 2^20, 2^30)'\n"
          "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n",
          fp);
}

/* One panel of the lines figure: time (column 2 of the data) or bus bandwidth (column 3). */
static void write_panel(FILE *fp, const struct cs_plot *p, int is_time, int both)
{
    fprintf(fp, "set logscale y 10\nset format y '%%g'\nset ylabel '%s'\nset title '%s'\n",
            is_time ? "Time (us)" : "Bus bandwidth (GB/s)",
            is_time ? "Predicted time" : "Bus bandwidth");
    /* fixed panel margins, and the legend once, in the space right of the last panel */
    if (both)
        fprintf(fp, "set lmargin at screen %s\nset rmargin at screen %s\n",
                is_time ? "0.05" : "0.42", is_time ? "0.36" : "0.73");
    else
        fputs("set lmargin at screen 0.08\nset rmargin at screen 0.62\n", fp);
    if (!both || !is_time)
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
        gp_str(fp, " title ", p->labels[l], "");
    }
    fputc('\n', fp);
}

/* Time and bus bandwidth against size, one line per variant; deadlocked sizes left out. */
static void write_lines(FILE *fp, const struct cs_plot *p)
{
    const char *metric = p->o.metric;
    int both = strcmp(metric, "both") == 0;

    for (int l = 0; l < p->nlabels; l++) {
        fprintf(fp, "$d%d << EOD\n", l);
        for (long i = 0; i < p->npts; i++)
            if (p->pts[i].label == l && p->pts[i].ok)
                fprintf(fp, "%lld %.9g %.9g\n", p->pts[i].size, p->pts[i].time_us, p->pts[i].busbw);
        fputs("EOD\n", fp);
    }
    write_terminal(fp, &p->o, both ? 2200 : 1400, 760);
    fprintf(fp, "set multiplot layout 1,%d", both ? 2 : 1);
    gp_str(fp, " title ", p->title, "\n");
    write_size_axis(fp);
    if (strcmp(metric, "busbw") != 0)
        write_panel(fp, p, 1, both);
    if (strcmp(metric, "time") != 0)
        write_panel(fp, p, 0, both);
    fputs("unset multiplot\n", fp);
}

/* For every (size, parameter value) cell, at the cell's first point, the variant with the least
 * time that finished, or NONE; -1 at the cell's other points. used[v] marks the classes seen. */
static void find_winners(const struct cs_plot *p, int *win, int *used)
{
    for (long i = 0; i < p->npts; i++) {
        const struct pt *a = &p->pts[i];
        double bt = 0;
        long j;

        win[i] = -1;
        for (j = 0; j < i; j++)
            if (p->pts[j].size == a->size && p->pts[j].param == a->param)
                break;
        if (j < i)
            continue;
        win[i] = NONE;
        for (j = i; j < p->npts; j++) {
            const struct pt *b = &p->pts[j];

            if (b->size == a->size && b->param == a->param && b->ok &&
                (win[i] == NONE || b->time_us < bt)) {
                win[i] = b->label;
                bt = b->time_us;
            }
        }
        used[win[i]] = 1;
    }
}

/* The map's axes and the legend of its classes. */
static void write_best_axes(FILE *fp, const struct cs_plot *p, const int *used)
{
    char yl[300];
    const char *sep = "";

    write_terminal(fp, &p->o, 1500, 300 + 60 * p->nparams);
    gp_str(fp, "set title ", p->title, "\n");
    write_size_axis(fp);
    snprintf(yl, sizeof(yl), "%s%s", p->o.best,
             strncmp(p->o.best, "scale.", 6) == 0 ? " (factor of the family default)" : "");
    gp_str(fp, "set ylabel ", yl, "\n");
    fprintf(fp, "set yrange [-0.5:%d.5]\nset ytics (", p->nparams - 1);
    for (int v = 0; v < p->nparams; v++) {
        gp_str(fp, v ? ", " : "", p->params[v], "");
        fprintf(fp, " %d", v);
    }
    fputs(")\nset offsets graph 0.03, graph 0.03, 0, 0\n"
          "set key outside right top vertical Left reverse font ',10' spacing 2.2 title 'fastest "
          "variant'\n"
          "plot ",
          fp);
    for (int l = 0; l <= NONE; l++) {
        if (!used[l])
            continue;
        fprintf(fp, "%s$b%d using 1:2 with points ", sep, l);
        if (l == NONE) {
            fputs("lc rgb 'black' pt 2 ps 2.5 title 'none finishes (deadlock)'", fp);
        } else {
            fprintf(fp, "lc %d pt %d ps 3.5", l % 8 + 1, 5 + 2 * (l / 8 % 5));
            gp_str(fp, " title ", p->labels[l], "");
        }
        sep = ", \\\n     ";
    }
    fputc('\n', fp);
}

/* The map: for every (size, parameter value), the variant with the least time that finished. */
static int write_best(FILE *fp, const struct cs_plot *p)
{
    int *win = malloc(sizeof(int) * (size_t)(p->npts + 1));
    int used[NONE + 1] = {0};

    if (win == NULL)
        return CS_ERR_NOMEM;
    find_winners(p, win, used);
    for (int l = 0; l <= NONE; l++) {
        if (!used[l])
            continue;
        fprintf(fp, "$b%d << EOD\n", l);
        for (long i = 0; i < p->npts; i++)
            if (win[i] == l)
                fprintf(fp, "%lld %d\n", p->pts[i].size, p->pts[i].param);
        fputs("EOD\n", fp);
    }
    write_best_axes(fp, p, used);
    free(win);
    return 0;
}

int cs_plot_write(const struct cs_plot *p, FILE *fp)
{
    fputs("# gnuplot script written by collsim plot\n", fp);
    if (p->o.best != NULL) {
        if (write_best(fp, p) != 0)
            return CS_ERR_NOMEM;
    } else {
        write_lines(fp, p);
    }
    return ferror(fp) ? CS_ERR_IO : 0;
}
