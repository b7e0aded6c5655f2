/* plot.c: gnuplot scripts for prediction and sweep tables: the rows grouped into variants by the
 * axis columns that vary, then time and bus bandwidth lines or the fastest-variant map. */
#include "plot.h"

#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "parse.h"
#include "report.h"

#define MAX_AXES 64
#define AXIS_LEN 128
#define MAX_LABELS 512
#define LABEL_LEN 256
#define NONE MAX_LABELS /* the map's "no variant finishes" class */

/* A row's outcome: finished, or why not (the status column); enum cs_plot_status order. */
enum { ST_OK = 1, ST_DEADLOCK, ST_HANG, ST_UNSUPPORTED, ST_N };
static const char *const status_names[ST_N] = {NULL, "ok", "deadlock", "hang", "unsupported"};
static const char *const status_legend[ST_N] = {NULL, NULL, "deadlock (no time, 0 GB/s)", "hang",
                                                "unsupported size"};
static const int status_pt[ST_N] = {0, 0, 2, 6, 8}; /* gnuplot point types: x, circle, triangle */

/* Columns that are not axes: values of a row, not what names its variant. */
static const char *const value_cols[] = {"point", "nominal_bytes", "measured_us", "error_pct"};

/* Metadata keys that `# KEY: VALUE` lines before a prediction CSV's header may carry, read as
 * columns of one value. */
static const char *const meta_keys[] = {"schedule", "platform", "protocol", "gpus"};
#define NMETA 4

/* One plotted row. */
struct pt {
    int label;
    int param; /* index of the map parameter's value, or -1 */
    long long size;
    double time_us;
    double busbw;
    int status; /* ST_* */
};

struct cs_plot {
    struct cs_plot_opts o;
    char title[512];
    char axes[MAX_AXES][AXIS_LEN]; /* axis columns over all tables (not point, not predict ones) */
    int naxes;
    int varies[MAX_AXES];            /* over the rows kept: those name the variants */
    char first[MAX_AXES][LABEL_LEN]; /* each axis column's value in the first row kept */
    char labels[MAX_LABELS][LABEL_LEN];
    int nlabels;
    char params[MAX_LABELS][LABEL_LEN];
    int nparams;
    int label_tab[MAX_LABELS]; /* the table that first drew each label */
    struct pt *pts;            /* room for every row of the tables */
    long npts;
};

static int is_value_col(const char *c)
{
    for (int i = 0; i < CS_REPORT_CSV_NCOLS; i++)
        if (strcmp(cs_report_csv_cols[i], c) == 0)
            return 1;
    for (size_t i = 0; i < sizeof(value_cols) / sizeof(value_cols[0]); i++)
        if (strcmp(value_cols[i], c) == 0)
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

        if (is_value_col(k) || find_axis(p, k, strlen(k)) >= 0)
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
                if (!have_first) {
                    first[a] = cell(tabs[f], r, p->axes[a]);
                    snprintf(p->first[a], LABEL_LEN, "%s", first[a]);
                } else if (strcmp(first[a], cell(tabs[f], r, p->axes[a])) != 0)
                    p->varies[a] = 1;
            }
            if (p->o.best != NULL)
                find_or_add(p->params, &p->nparams, cell(tabs[f], r, p->o.best));
            have_first = 1;
        }
}

/* The legend of row r: its varying columns (not the map's parameter); the table's name when
 * nothing varies. */
static void row_label(const struct cs_plot *p, const struct cs_table *t, const char *name, long r,
                      char *label, size_t len)
{
    size_t n = 0;

    label[0] = '\0';
    for (int a = 0; a < p->naxes && n < len; a++) {
        /* "-": a key the row's generator does not take, or metadata its CSV lacks */
        if (!p->varies[a] || (p->o.best && strcmp(p->axes[a], p->o.best) == 0) ||
            strcmp(cell(t, r, p->axes[a]), "-") == 0)
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
    const char *st = cell(t, r, "status");

    if (cs_parse_ll(cell(t, r, "size_bytes"), 1, LLONG_MAX, &q->size) != 0) {
        cs_error_set(err, name, t->lines[r], "bad size_bytes");
        return CS_ERR_PARSE;
    }
    for (q->status = ST_OK; q->status < ST_N && strcmp(st, status_names[q->status]) != 0;)
        q->status++;
    if (q->status == ST_N) {
        cs_error_set(err, name, t->lines[r],
                     "unknown status '%s' (ok, deadlock, hang or unsupported)", st);
        return CS_ERR_PARSE;
    }
    q->time_us = q->busbw = 0;
    if (q->status == ST_OK &&
        (cs_parse_double(cell(t, r, "time_us"), 0, DBL_MAX, &q->time_us) != 0 ||
         cs_parse_double(cell(t, r, "busbw_GBps"), 0, DBL_MAX, &q->busbw) != 0 || q->time_us <= 0 ||
         q->busbw <= 0)) {
        cs_error_set(err, name, t->lines[r],
                     "status ok but time or busbw is not a positive number");
        return CS_ERR_PARSE;
    }
    return 0;
}

/* Add row r of table f. Rows of different prediction CSVs (no point column) that the varying
 * columns name alike are told apart by their file names. */
static int add_row(struct cs_plot *p, const struct cs_table *t, const char *name, int f, long r,
                   struct cs_error *err)
{
    char label[LABEL_LEN], named[LABEL_LEN + 8];
    int nl = p->nlabels, rc;
    struct pt q;

    row_label(p, t, name, r, label, sizeof(label));
    q.label = find_or_add(p->labels, &p->nlabels, label);
    if (q.label >= 0 && q.label < nl && p->label_tab[q.label] != f &&
        cs_table_find_col(t, "point") < 0 && strcmp(label, base_name(name)) != 0) {
        snprintf(named, sizeof(named), "%s: %s", base_name(name), label);
        q.label = find_or_add(p->labels, &p->nlabels, named);
    }
    if (q.label >= nl)
        p->label_tab[q.label] = f;
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

/* Append the columns of one value in class cls (0 schedule: schedule and gen.*; 1 platform:
 * platform, platform.*, scale.*, set.*; 2 the rest) to buf, as legends write them, the schedule,
 * generator, platform and family first. Whether one of those four was written. */
static int title_part(const struct cs_plot *p, int cls, char *buf, size_t len)
{
    static const char *const lead[] = {"schedule", "gen.algorithm", "platform", "platform.family"};
    size_t n = strlen(buf), n0 = n;
    int leads = 0;

    for (int pass = 0; pass < 2; pass++)
        for (int a = 0; a < p->naxes && n < len; a++) {
            const char *k = p->axes[a];
            int c = strcmp(k, "schedule") == 0 || strncmp(k, "gen.", 4) == 0 ? 0
                    : strncmp(k, "platform", 8) == 0 || strncmp(k, "scale.", 6) == 0 ||
                            strncmp(k, "set.", 4) == 0
                        ? 1
                        : 2,
                is_lead = 0;

            for (int i = 0; i < 4; i++)
                is_lead |= strcmp(k, lead[i]) == 0;
            if (c == cls && is_lead == !pass && !p->varies[a] && strcmp(p->first[a], "-") != 0) {
                n += label_part(buf + n, len - n, n > n0 ? " " : "", k, p->first[a]);
                leads += is_lead;
            }
        }
    return leads;
}

/* "Fastest variant per size and COLUMN: " for the map, then what the rows share: "SCHEDULE on
 * PLATFORM, REST" when the tables say either, else the tables' names. */
static void default_title(struct cs_plot *p, const char *const *names, int ntabs)
{
    const char *best = p->o.best;
    char sched[LABEL_LEN] = "", plat[LABEL_LEN] = "", rest[LABEL_LEN] = "";
    size_t n;
    int leads;

    snprintf(p->title, sizeof(p->title), "%s%s%s", best ? "Fastest variant per size and " : "",
             best ? best : "", best ? ": " : "");
    n = strlen(p->title);
    leads = title_part(p, 0, sched, sizeof(sched)) + title_part(p, 1, plat, sizeof(plat));
    title_part(p, 2, rest, sizeof(rest));
    if (leads > 0) {
        snprintf(p->title + n, sizeof(p->title) - n, "%s%s%s%s%s", sched,
                 *sched && *plat ? " on " : "", plat, *rest ? ", " : "", rest);
        return;
    }
    for (int f = 0; f < ntabs; f++) {
        n = strlen(p->title);
        snprintf(p->title + n, sizeof(p->title) - n, "%s%s", f ? ", " : "", base_name(names[f]));
    }
}

/* The map compares times of different variants: refuse rows of different GPU counts (the
 * gen.gpus column or gpus metadata) unless the map's parameter is that count. */
static int check_gpus(const struct cs_plot *p, const struct cs_table *const *tabs, int ntabs,
                      struct cs_error *err)
{
    int a = find_axis(p, "gen.gpus", 8), n = 0;
    char seen[8][AXIS_LEN], list[8 * (AXIS_LEN + 2)] = "";

    if (a < 0)
        a = find_axis(p, "gpus", 4);
    if (p->o.best == NULL || a < 0 || !p->varies[a] || strcmp(p->o.best, p->axes[a]) == 0)
        return 0;
    for (int f = 0; f < ntabs; f++)
        for (long r = 0; r < tabs[f]->nrows && n < 8; r++) {
            const char *v = cell(tabs[f], r, p->axes[a]);
            int i = 0;

            while (i < n && strcmp(seen[i], v) != 0)
                i++;
            if (i == n && strcmp(v, "-") != 0 && row_kept(p, tabs[f], r)) {
                snprintf(seen[n++], AXIS_LEN, "%s", v);
                strcat(strcat(list, n > 1 ? ", " : ""), seen[n - 1]);
            }
        }
    if (n < 2)
        return 0;
    cs_error_set(err, NULL, 0,
                 "--best %s: the rows mix GPU counts (%s: %s); choose one with --where %s=N",
                 p->o.best, p->axes[a], list, p->axes[a]);
    return CS_ERR_INVALID;
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
    if ((rc = check_gpus(p, tabs, ntabs, err)) != 0)
        return rc;
    qsort(p->params, (size_t)p->nparams, sizeof(p->params[0]), cmp_param);
    for (int f = 0; f < ntabs; f++)
        for (long r = 0; r < tabs[f]->nrows; r++)
            if (row_kept(p, tabs[f], r) && (rc = add_row(p, tabs[f], names[f], f, r, err)))
                return rc;
    if (p->npts == 0) {
        cs_error_set(err, NULL, 0, "nothing to plot%s", p->o.nwhere ? " (check --where)" : "");
        return CS_ERR_INVALID;
    }
    return 0;
}

/* The metadata in one comment line, into vals[NMETA] (the last value of a key wins): "KEY: VALUE"
 * or "KEY=VALUE" for the keys of meta_keys ("ngpus" is gpus), or the header line of predict's
 * table, "collsim predict: SCHEDULE on PLATFORM, PROTOCOL, N GPUs, TYPE". */
static void read_meta(const char *line, char (*vals)[LABEL_LEN])
{
    static const char head[] = "collsim predict: ";
    size_t k = strcspn(line, ":=");
    const char *on = strstr(line, " on "), *c1, *c2;

    if (strncmp(line, head, sizeof(head) - 1) == 0 && on != NULL &&
        (c1 = strstr(on, ", ")) != NULL && (c2 = strstr(c1 + 2, ", ")) != NULL) {
        snprintf(vals[0], LABEL_LEN, "%.*s", (int)(on - line - (sizeof(head) - 1)),
                 line + sizeof(head) - 1);
        snprintf(vals[1], LABEL_LEN, "%.*s", (int)(c1 - on - 4), on + 4);
        snprintf(vals[2], LABEL_LEN, "%.*s", (int)(c2 - c1 - 2), c1 + 2);
        snprintf(vals[3], LABEL_LEN, "%.*s", (int)strspn(c2 + 2, "0123456789"), c2 + 2);
        return;
    }
    if (line[k] == '\0')
        return;
    for (int m = 0; m < NMETA; m++) {
        const char *v = line + k + 1;

        if ((strlen(meta_keys[m]) == k && strncmp(line, meta_keys[m], k) == 0) ||
            (m == 3 && k == 5 && strncmp(line, "ngpus", 5) == 0)) {
            v += strspn(v, " \t");
            snprintf(vals[m], LABEL_LEN, "%.*s", (int)strcspn(v, "\r\n"), v);
        }
    }
}

/* The table of c, with a column of one value for each metadata key its comments give and its
 * header lacks. */
static int table_with_meta(const struct cs_csv *c, struct cs_table **out, struct cs_error *err)
{
    char vals[NMETA][LABEL_LEN] = {{0}};
    int n = c->ncols, extra[NMETA], nextra = 0, rc = CS_ERR_NOMEM;
    const char **cols = malloc(sizeof(*cols) * (size_t)(n + NMETA));
    const char **row = malloc(sizeof(*row) * (size_t)(n + NMETA));
    struct cs_table *t = NULL;

    for (int i = 0; i < c->ncomments; i++)
        read_meta(c->comments[i], vals);
    for (int m = 0; m < NMETA; m++)
        if (vals[m][0] != '\0' && cs_csv_col_find(c, meta_keys[m]) < 0)
            extra[nextra++] = m;
    for (int i = 0; cols != NULL && i < n + nextra; i++)
        cols[i] = i < n ? c->header[i] : meta_keys[extra[i - n]];
    if (cols == NULL || row == NULL || (t = cs_table_new(n + nextra, cols)) == NULL)
        goto out;
    for (int r = 0; r < c->nrows; r++) {
        for (int i = 0; i < n + nextra; i++)
            row[i] = i < n ? cs_csv_cell(c, r, i) : vals[extra[i - n]];
        if (cs_table_add_row(t, row, c->lines[r]) != 0)
            goto out;
    }
    *out = t;
    t = NULL;
    rc = 0;
out:
    if (rc != 0)
        cs_error_set(err, NULL, 0, "out of memory");
    cs_table_free(t);
    free(cols);
    free(row);
    return rc;
}

int cs_plot_read(const char *path, struct cs_table **out, struct cs_error *err)
{
    struct cs_csv *c = NULL;
    int rc = cs_csv_read(path, &c, err);

    if (rc == 0)
        rc = table_with_meta(c, out, err);
    cs_csv_free(c);
    return rc;
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

/* before, s as a gnuplot string literal (single quotes, in which only '' needs escaping and no
 * substitution happens), after. A control byte (a newline would end the command, and what
 * follows would run as gnuplot's, system() included) becomes a space. */
static void gp_str(FILE *fp, const char *before, const char *s, const char *after)
{
    fprintf(fp, "%s'", before);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '\'')
            fputs("''", fp);
        else
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, fp);
    }
    fprintf(fp, "'%s", after);
}

static void style(FILE *fp, int i)
{
    /* eight colours, then dash patterns and point shapes, so that many variants stay apart */
    fprintf(fp, "lc %d dt %d pt %d", i % 8 + 1, i / 8 % 5 + 1, i % 13 + 1);
}

/* The gnuplot script stops, saying why, when gnuplot lacks the terminal (a build without cairo). */
static void need_terminal(FILE *fp, const char *term, const char *what)
{
    fprintf(fp,
            "if (strstrt(GPVAL_TERMINALS.' ', ' %s ') == 0) {\n"
            "    print 'collsim: this gnuplot has no %s terminal: it cannot write %s (install a "
            "gnuplot built with cairo, e.g. Debian gnuplot-nox)'\n"
            "    exit status 3\n"
            "}\n",
            term, term, what);
}

/* The terminal for o->out's extension at w x h pixels (PDF: a hundredth of an inch each). */
static void write_terminal(FILE *fp, const struct cs_plot_opts *o, int w, int h)
{
    const char *out = o->out;
    size_t n = strlen(out);

    if (n > 4 && strcmp(out + n - 4, ".svg") == 0) {
        fprintf(fp,
                "set terminal svg size %d,%d dynamic noenhanced font 'Sans,12' background "
                "'white'\n",
                w, h);
    } else if (n > 4 && strcmp(out + n - 4, ".pdf") == 0) {
        need_terminal(fp, "pdfcairo", "PDF");
        fprintf(fp, "set terminal pdfcairo size %.2fin,%.2fin noenhanced font 'Sans,11'\n",
                w / 100.0, h / 100.0);
    } else {
        need_terminal(fp, "pngcairo", "PNG");
        fprintf(fp, "set terminal pngcairo size %d,%d noenhanced font 'Sans,11'\n", w, h);
    }
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

/* A legend of n entries, the longest maxlen characters, below the plots of a w-pixel-wide canvas:
 * as many columns as fit (10-point text is about 7 pixels a character). Its height in pixels,
 * and its rows in *nrows. */
static int key_height(int n, size_t maxlen, int w, int *nrows)
{
    int colw = (int)(maxlen + 6) * 7 + 20, c = (w - 80) / colw;

    c = c < 1 ? 1 : c > n ? n : c;
    *nrows = (n + c - 1) / c;
    return *nrows * 19 + 16;
}

/* Where the lines figure draws what did not finish: above every time, and at zero bus bandwidth
 * (log axis: below every bandwidth). */
struct fail_y {
    double time, busbw;
    int used[ST_N];         /* the statuses present */
    int failed[MAX_LABELS]; /* variants with sizes that did not finish */
};

static void find_fail_y(const struct cs_plot *p, struct fail_y *f)
{
    double tmax = 0, bmin = DBL_MAX;

    memset(f, 0, sizeof(*f));
    for (long i = 0; i < p->npts; i++) {
        const struct pt *q = &p->pts[i];

        f->used[q->status] = 1;
        f->failed[q->label] |= q->status != ST_OK;
        if (q->status == ST_OK && q->time_us > tmax)
            tmax = q->time_us;
        if (q->status == ST_OK && q->busbw < bmin)
            bmin = q->busbw;
    }
    f->time = tmax > 0 ? 2 * tmax : 1;
    f->busbw = !p->o.busbw_log ? 0 : bmin < DBL_MAX ? bmin / 2 : 1;
}

/* One panel of the lines figure: time (column 2 of the data) or bus bandwidth (column 3), and
 * the sizes that did not finish as points at fail_y; the legend below the last panel. */
static void write_panel(FILE *fp, const struct cs_plot *p, const struct fail_y *f, int is_time,
                        int last, int key_rows)
{
    int both = strcmp(p->o.metric, "both") == 0, lin = !is_time && !p->o.busbw_log, nf = 0;
    double fy = is_time ? f->time : f->busbw;

    fprintf(fp, "%s\nset ylabel '%s'\nset title '%s'\nunset label\n",
            lin ? "unset logscale y\nset yrange [0:*]\nset format y '%g'"
                : "set logscale y 10\nset autoscale y\nset format y '%g'",
            is_time ? "Time (us)" : "Bus bandwidth (GB/s)",
            is_time ? "Predicted time" : "Bus bandwidth");
    fprintf(fp, "set lmargin at screen %s\nset rmargin at screen %s\n",
            !both     ? "0.07"
            : is_time ? "0.05"
                      : "0.56",
            !both     ? "0.97"
            : is_time ? "0.46"
                      : "0.97");
    for (int st = ST_DEADLOCK; st < ST_N; st++)
        nf += f->used[st];
    if (nf > 0 && is_time)
        fprintf(fp,
                "set label 'not finished' at graph 0.01, first %.9g left offset 0,0.9 font ',9' "
                "tc rgb '#555555'\n",
                fy);
    if (last)
        fprintf(fp,
                "set key at screen 0.5, screen 0 center bottom vertical maxrows %d Left reverse "
                "font ',10' spacing 1.1 box lc rgb '#bbbbbb'\n",
                key_rows);
    else
        fputs("unset key\n", fp);
    fputs("plot ", fp);
    for (int l = 0; l < p->nlabels; l++) {
        fprintf(fp, "%s$d%d using 1:%d with linespoints ", l ? ", \\\n     " : "", l,
                is_time ? 2 : 3);
        style(fp, l);
        gp_str(fp, " title ", p->labels[l], "");
        if (f->failed[l])
            fprintf(fp,
                    ", \\\n     $f%d using 1:(%.9g):2 with points lc %d pt variable ps 1.6 "
                    "notitle",
                    l, fy, l % 8 + 1);
    }
    for (int st = ST_DEADLOCK; st < ST_N; st++)
        if (f->used[st])
            fprintf(fp, ", \\\n     NaN with points lc rgb 'black' pt %d ps 1.6 title '%s'",
                    status_pt[st], status_legend[st]);
    fputc('\n', fp);
}

/* The data blocks of the lines figure: $dL the finished sizes of variant L (size, time, busbw),
 * $fL the others (size, point type of the status). */
static void write_line_data(FILE *fp, const struct cs_plot *p, const struct fail_y *f)
{
    for (int l = 0; l < p->nlabels; l++) {
        fprintf(fp, "$d%d << EOD\n", l);
        for (long i = 0; i < p->npts; i++)
            if (p->pts[i].label == l && p->pts[i].status == ST_OK)
                fprintf(fp, "%lld %.9g %.9g\n", p->pts[i].size, p->pts[i].time_us, p->pts[i].busbw);
        fputs("EOD\n", fp);
        if (!f->failed[l])
            continue;
        fprintf(fp, "$f%d << EOD\n", l);
        for (long i = 0; i < p->npts; i++)
            if (p->pts[i].label == l && p->pts[i].status != ST_OK)
                fprintf(fp, "%lld %d\n", p->pts[i].size, status_pt[p->pts[i].status]);
        fputs("EOD\n", fp);
    }
}

/* Time and bus bandwidth against size, one line per variant; sizes that did not finish marked
 * at the top of the time panel and at zero bus bandwidth; the legend below. */
static void write_lines(FILE *fp, const struct cs_plot *p)
{
    const char *metric = p->o.metric;
    int both = strcmp(metric, "both") == 0, w = both ? 2200 : 1400, n = p->nlabels, rows, h;
    size_t maxlen = 16;
    struct fail_y f;

    find_fail_y(p, &f);
    for (int st = ST_DEADLOCK; st < ST_N; st++)
        n += f.used[st];
    for (int l = 0; l < p->nlabels; l++)
        if (strlen(p->labels[l]) > maxlen)
            maxlen = strlen(p->labels[l]);
    h = key_height(n, maxlen, w, &rows);
    write_line_data(fp, p, &f);
    write_terminal(fp, &p->o, w, 700 + h);
    fprintf(fp, "set multiplot layout 1,%d", both ? 2 : 1);
    gp_str(fp, " title ", p->title, "\n");
    fprintf(fp, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", 1 - 70.0 / (700 + h),
            (h + 70.0) / (700 + h));
    write_size_axis(fp);
    if (strcmp(metric, "busbw") != 0)
        write_panel(fp, p, &f, 1, !both, rows);
    if (strcmp(metric, "time") != 0)
        write_panel(fp, p, &f, 0, 1, rows);
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

            if (b->size == a->size && b->param == a->param && b->status == ST_OK &&
                (win[i] == NONE || b->time_us < bt)) {
                win[i] = b->label;
                bt = b->time_us;
            }
        }
        used[win[i]] = 1;
    }
}

/* The map's axes and the legend of its classes, below it. */
static void write_best_axes(FILE *fp, const struct cs_plot *p, const int *used)
{
    char yl[300];
    const char *sep = "";
    size_t maxlen = 24;
    int n = 0, rows, h;

    for (int l = 0; l <= NONE; l++)
        if (used[l]) {
            n++;
            if (l < NONE && strlen(p->labels[l]) > maxlen)
                maxlen = strlen(p->labels[l]);
        }
    h = key_height(n, maxlen, 1500, &rows);
    write_terminal(fp, &p->o, 1500, 300 + 60 * p->nparams + h);
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
    fprintf(fp,
            ")\nset offsets graph 0.03, graph 0.03, 0, 0\n"
            "set key outside below center vertical maxrows %d Left reverse font ',10' "
            "spacing 1.3 title 'fastest variant'\n"
            "plot ",
            rows);
    for (int l = 0; l <= NONE; l++) {
        if (!used[l])
            continue;
        fprintf(fp, "%s$b%d using 1:2 with points ", sep, l);
        if (l == NONE) {
            fputs("lc rgb 'black' pt 2 ps 2.5 title 'none finishes (deadlock, hang or "
                  "unsupported)'",
                  fp);
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
