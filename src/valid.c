/* valid.c: measured times per size and error statistics per size band. */
#include "valid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "fit.h"
#include "meas.h"
#include "nccl.h"
#include "parse.h"

const char *cs_band_name(enum cs_band b)
{
    static const char *const names[CS_NBANDS] = {"all sizes", "<= 64 KiB", "64 KiB - 4 MiB",
                                                 ">= 4 MiB"};

    return (int)b >= 0 && b < CS_NBANDS ? names[b] : NULL;
}

enum cs_band cs_band_of(double size_bytes)
{
    if (size_bytes <= 65536)
        return CS_BAND_SMALL;
    if (size_bytes < 4194304)
        return CS_BAND_MID;
    return CS_BAND_LARGE;
}

/* Rows by GPU count, then size, then time: the rows of one point are adjacent, times sorted. */
static int cmp_row(const void *a, const void *b)
{
    const struct cs_meas_row *p = a, *q = b;
    int d = (p->ngpus > q->ngpus) - (p->ngpus < q->ngpus);

    if (d == 0)
        d = (p->size_bytes > q->size_bytes) - (p->size_bytes < q->size_bytes);
    return d ? d : (p->time_s > q->time_s) - (p->time_s < q->time_s);
}

/* The median time of the rows k..e-1 (sorted by time) of one placement (0: every row); NAN when
 * none is of it. */
static double median_of(const struct cs_meas_row *rows, int k, int e, int placement)
{
    double v[64];
    int m = 0;

    for (int i = k; i < e && m < 64; i++)
        if (placement == 0 || rows[i].placement == placement)
            v[m++] = rows[i].time_s;
    return m == 0 ? NAN : m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* One point per run of equal sizes (or counts) of the sorted rows: the median time. */
static int points_of(const struct cs_meas_row *rows, int n, struct cs_valid_point *pts)
{
    int np = 0;

    for (int k = 0; k < n;) {
        int e = k, h;

        while (e < n && rows[e].ngpus == rows[k].ngpus && rows[e].size_bytes == rows[k].size_bytes)
            e++;
        h = k + (e - k) / 2;
        pts[np++] = (struct cs_valid_point){
            .size_bytes = rows[k].size_bytes,
            .meas_s = (e - k) % 2 ? rows[h].time_s : 0.5 * (rows[h - 1].time_s + rows[h].time_s),
            .pred_s = NAN,
            .held_out = 1,
            .ranks = rows[k].ngpus,
            .oop_s = median_of(rows, k, e, CS_MEAS_OUT_OF_PLACE),
            .ip_s = median_of(rows, k, e, CS_MEAS_IN_PLACE)};
        k = e;
    }
    return np;
}

void cs_valid_mark_contradictions(struct cs_valid_point *p, int n)
{
    for (int i = 0; i < n; i++) {
        double a = p[i].oop_s, b = p[i].ip_s;

        if (isfinite(a) && isfinite(b) && fabs(a - b) > CS_VALID_CONTRA_SHARE * fmin(a, b))
            p[i].contra |= CS_VALID_SPLIT;
        for (int j = i + 1; j < n && p[i].ranks == 0; j++)
            if (p[j].size_bytes == 2 * p[i].size_bytes &&
                p[i].meas_s - p[j].meas_s > CS_VALID_CONTRA_SHARE * p[i].meas_s) {
                p[i].contra |= CS_VALID_FALLS;
                p[j].contra |= CS_VALID_FALLS;
            }
    }
}

void cs_valid_contradiction_text(const struct cs_valid_point *p, int n, int i, char *buf,
                                 size_t len)
{
    size_t k = 0;

    buf[0] = '\0';
    if (p[i].contra & CS_VALID_SPLIT)
        k += (size_t)snprintf(buf, len, "in place %.4g us, out of place %.4g us (%.0f%% apart)",
                              p[i].ip_s * 1e6, p[i].oop_s * 1e6,
                              100 * fabs(p[i].ip_s - p[i].oop_s) / fmin(p[i].ip_s, p[i].oop_s));
    for (int j = 0; j < n && (p[i].contra & CS_VALID_FALLS) && k < len; j++) {
        const struct cs_valid_point *a = NULL, *b = NULL;

        if (p[j].size_bytes == 2 * p[i].size_bytes)
            a = &p[i], b = &p[j];
        else if (2 * p[j].size_bytes == p[i].size_bytes)
            a = &p[j], b = &p[i];
        if (a == NULL || !(a->meas_s - b->meas_s > CS_VALID_CONTRA_SHARE * a->meas_s))
            continue;
        k += (size_t)snprintf(buf + k, len - k, "%sthe time falls by %.0f%% from %.0f B to %.0f B",
                              k ? "; " : "", 100 * (a->meas_s - b->meas_s) / a->meas_s,
                              a->size_bytes, b->size_bytes);
    }
}

/* A table whose collective column names another collective than c (each row's, where given) is
 * not a measurement of what the case predicts: CS_ERR_INVALID at that row's line. */
static int check_collective(const struct cs_csv *t, enum cs_meas_coll c, struct cs_error *err)
{
    int cc = cs_csv_col_find(t, "collective");

    for (int r = 0; cc >= 0 && r < t->nrows; r++) {
        const char *v = cs_csv_cell(t, r, cc);

        if (v[0] != '\0' && cs_meas_coll_parse(v) != c)
            return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                                 "the table measures '%s', the case predicts %s (its coll=)", v,
                                 cs_meas_coll_name(c));
    }
    return 0;
}

int cs_valid_read_measurement(const char *path, const char *coll, int ranks,
                              struct cs_valid_point **out, int *nout, struct cs_error *err)
{
    struct cs_csv *t = NULL;
    struct cs_meas_row *rows = NULL;
    struct cs_valid_point *pts = NULL;
    enum cs_meas_coll c = coll ? cs_meas_coll_parse(coll) : CS_MEAS_ALLREDUCE;
    int rc, n = 0, np;

    if ((rc = cs_meas_read(path, &t, err)) != 0)
        return rc;
    if (c == 0 || c == CS_MEAS_SENDRECV) {
        cs_error_set(err, t->name, 0, "unknown collective '%s'", coll);
        rc = CS_ERR_INVALID;
    } else if ((rc = check_collective(t, c, err)) != 0) {
    } else {
        rc = cs_meas_read_rows(t, cs_meas_ring_steps(c, ranks), ranks, &rows, &n, NULL, err);
    }
    if (rc == 0 && n == 0) {
        cs_error_set(err, t->name, 0, "no rows");
        rc = CS_ERR_INVALID;
    }
    if (rc == 0 && (pts = calloc((size_t)n, sizeof(*pts))) == NULL)
        rc = CS_ERR_NOMEM;
    if (rc == 0) {
        qsort(rows, (size_t)n, sizeof(*rows), cmp_row);
        np = points_of(rows, n, pts);
        *out = pts;
        *nout = np;
    }
    free(rows);
    cs_csv_free(t);
    return rc;
}

void cs_valid_stats(const struct cs_valid_point *p, int n, enum cs_band b, int held_out_only,
                    struct cs_valid_stats *out)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof(*e));
    int k = 0;

    memset(out, 0, sizeof(*out));
    out->median_abs = out->max_abs = out->max_size = out->max_kept = out->max_kept_size = NAN;
    if (e == NULL)
        return;
    for (int i = 0; i < n; i++) {
        double a;

        if (b != CS_BAND_ALL && cs_band_of(p[i].size_bytes) != b)
            continue;
        if (held_out_only && !p[i].held_out)
            continue;
        if (!isfinite(p[i].pred_s)) {
            out->missing++;
            continue;
        }
        a = fabs(p[i].pred_s - p[i].meas_s) / p[i].meas_s;
        if (k == 0 || a > out->max_abs) {
            out->max_abs = a;
            out->max_size = p[i].size_bytes;
            out->max_ranks = p[i].ranks;
        }
        if (p[i].contra)
            out->ncontra++;
        else if (!(a <= out->max_kept)) {
            out->max_kept = a;
            out->max_kept_size = p[i].size_bytes;
        }
        e[k++] = a;
    }
    out->n = k;
    if (k > 0)
        out->median_abs = cs_fit_median(e, k);
    free(e);
}

/* The columns of summary.csv, which an earlier one (--before) must have too. */
static const char *const summary_cols[] = {"case", "band", "n", "median_abs", "max_abs", "missing"};

#define SUMMARY_NCOLS ((int)(sizeof(summary_cols) / sizeof(summary_cols[0])))

/* Row r of an earlier summary into *row: 0, or CS_ERR_PARSE with err at its line. */
static int before_row(const struct cs_csv *t, int r, struct cs_valid_before_row *row,
                      struct cs_error *err)
{
    const char *name = cs_csv_cell(t, r, 0);
    int line = t->lines[r];

    if (name[0] == '\0' || strlen(name) >= sizeof(row->name))
        return cs_error_fail(err, CS_ERR_PARSE, t->name, line, "case name empty or too long");
    snprintf(row->name, sizeof(row->name), "%s", name);
    if (cs_parse_int(cs_csv_cell(t, r, 1), 0, CS_NBANDS - 1, &row->band) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, t->name, line, "band '%s': 0 to %d",
                             cs_csv_cell(t, r, 1), CS_NBANDS - 1);
    if (cs_parse_int(cs_csv_cell(t, r, 2), 0, 1000000000, &row->n) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, t->name, line, "n '%s': a count",
                             cs_csv_cell(t, r, 2));
    row->median_abs = row->max_abs = NAN;
    if (row->n == 0) /* nothing predicted: the writer's median and max are nan */
        return 0;
    if (cs_parse_double(cs_csv_cell(t, r, 3), 0, INFINITY, &row->median_abs) != 0 ||
        cs_parse_double(cs_csv_cell(t, r, 4), 0, INFINITY, &row->max_abs) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, t->name, line,
                             "median_abs '%s' and max_abs '%s': fractions >= 0 where n > 0",
                             cs_csv_cell(t, r, 3), cs_csv_cell(t, r, 4));
    return 0;
}

/* The rows of an earlier summary, each case and band once: 0 or CS_ERR_PARSE at file:line. */
static int before_rows(const struct cs_csv *t, struct cs_valid_before_row *rows,
                       struct cs_error *err)
{
    if (t->ncols != SUMMARY_NCOLS)
        return cs_error_fail(err, CS_ERR_PARSE, t->name, 1,
                             "not a validate summary.csv: the header is not "
                             "case,band,n,median_abs,max_abs,missing");
    for (int c = 0; c < SUMMARY_NCOLS; c++)
        if (strcmp(t->header[c], summary_cols[c]) != 0)
            return cs_error_fail(err, CS_ERR_PARSE, t->name, 1,
                                 "not a validate summary.csv: column %d is '%s', not '%s'", c + 1,
                                 t->header[c], summary_cols[c]);
    for (int r = 0; r < t->nrows; r++) {
        int rc = before_row(t, r, &rows[r], err);

        if (rc != 0)
            return rc;
        for (int q = 0; q < r; q++)
            if (rows[q].band == rows[r].band && strcmp(rows[q].name, rows[r].name) == 0)
                return cs_error_fail(err, CS_ERR_PARSE, t->name, t->lines[r],
                                     "case %s band %d again (first on line %d)", rows[r].name,
                                     rows[r].band, t->lines[q]);
    }
    return 0;
}

int cs_valid_before_read(const char *path, struct cs_valid_before **out, struct cs_error *err)
{
    struct cs_csv *t = NULL;
    struct cs_valid_before *bf = NULL;
    int rc;

    if ((rc = cs_csv_read_file(path, 0, &t, err)) != 0)
        return rc;
    if ((bf = calloc(1, sizeof(*bf))) == NULL || (bf->path = strdup(path)) == NULL ||
        (bf->rows = calloc((size_t)(t->nrows > 0 ? t->nrows : 1), sizeof(*bf->rows))) == NULL)
        rc = CS_ERR_NOMEM;
    else if (t->ncols == 0)
        rc = cs_error_fail(err, CS_ERR_PARSE, t->name, 1, "empty: no header row");
    else
        rc = before_rows(t, bf->rows, err);
    if (rc == 0) {
        bf->n = t->nrows;
        *out = bf;
    } else {
        cs_valid_before_free(bf);
    }
    cs_csv_free(t);
    return rc;
}

const struct cs_valid_before_row *cs_valid_before_find(const struct cs_valid_before *bf,
                                                       const char *name, enum cs_band b)
{
    for (int i = 0; bf != NULL && i < bf->n; i++)
        if (bf->rows[i].band == (int)b && strcmp(bf->rows[i].name, name) == 0)
            return &bf->rows[i];
    return NULL;
}

void cs_valid_before_free(struct cs_valid_before *bf)
{
    if (bf == NULL)
        return;
    free(bf->path);
    free(bf->rows);
    free(bf);
}

void cs_valid_summary_begin(FILE *md, FILE *csv, const char *cases_path,
                            const struct cs_valid_before *before)
{
    fprintf(md,
            "# Validation: predicted against measured times\n\n"
            "Written by `collsim validate %s%s%s`. Error = (predicted - measured) / measured, "
            "measured = the median of the table's rows at a size (in and out of place). "
            "Bands: <= 64 KiB, 64 KiB - 4 MiB, >= 4 MiB. Targets (issue 5): median |error| "
            "<= 10%% over all sizes and <= 5%% at >= 4 MiB on the 8-GPU NVSwitch systems, "
            "<= 15%% on the others.\n",
            cases_path, before ? " --before " : "", before ? before->path : "");
    if (before != NULL)
        fprintf(md,
                "\nBefore -> after: each median and max |error| reads BEFORE -> AFTER, BEFORE "
                "from the earlier summary `%s` (over its own sizes; the size of the max is "
                "AFTER's), - where it has no such case or band or predicted nothing there.\n",
                before->path);
    fprintf(csv, "case,band,n,median_abs,max_abs,missing\n");
}

/* The case's heading: what was compared, and which sizes were held out. */
static void case_heading(FILE *md, const struct cs_valid_case *c)
{
    fprintf(md, "\n### %s\n\nMeasurement `%s`; schedule `%s`; platform `%s`; protocol %s%s.",
            c->name, c->meas_label, c->sched, c->platform, c->fastest ? "fastest of " : "",
            c->protos);
    if (c->nccl[0]) {
        int code = 0;
        char note[400];

        cs_nccl_version_parse(c->nccl, &code, NULL);
        fprintf(md,
                " Channels and threads per size and protocol: NCCL %s's rule%s (enqueue.cc, "
                "NCCL 2.8-2.18; nccl-a100.md 1.6b): from the ring's channels and the protocol's "
                "threads, one channel fewer, then half the threads, while the size is below "
                "channels x threads x threshold (LL 8 B x ranks, LL128 8 B, Simple 64 B); each "
                "protocol's per-threadblock rate (cs.tb_Bps) and pass (cs.pass_bytes) scaled by "
                "threads / maximum threads.",
                c->nccl, cs_nccl_past_rule(code) ? ", as 2.18's" : "");
        if (cs_nccl_rule_note(code, note, sizeof(note)) != NULL)
            fprintf(md, " Note: %s.", note);
    }
    if (strncmp(c->sched, "gen:nccl", 8) == 0)
        fprintf(md, " The schedule at each size and protocol is what `collsim gen nccl` writes "
                    "there: NCCL's ring, or across nodes its tree where NCCL's tuning model picks "
                    "it (the tree's LL threshold is 8 B, not 8 B x ranks).");
    if (c->has_fit && !(c->fit_min > 0) && !isfinite(c->fit_max)) {
        fprintf(md, " Every row was used to fit the platform: none is held out.");
    } else if (c->has_fit) {
        char hi[64] = "up";

        if (isfinite(c->fit_max))
            snprintf(hi, sizeof(hi), "to %.0f B", c->fit_max);
        fprintf(md,
                " Sizes from %.0f B %s were used to fit the platform; the table reports the "
                "other sizes (held out).",
                c->fit_min, hi);
    }
}

/* An earlier fraction as "12.3% -> ", "- -> " when there is none. */
static void before_cell(FILE *md, const struct cs_valid_before_row *row, int is_max)
{
    if (row == NULL || row->n == 0)
        fprintf(md, "- -> ");
    else
        fprintf(md, "%.1f%% -> ", 100 * (is_max ? row->max_abs : row->median_abs));
}

/* One row per band with points: summary.md's table (with the earlier numbers when before is
 * not NULL) and summary.csv. */
static void band_rows(FILE *md, FILE *csv, const struct cs_valid_case *c,
                      const struct cs_valid_point *p, int n, const struct cs_valid_before *before)
{
    int held = c->has_fit;

    if (before != NULL)
        fprintf(md, "\n\n| band | sizes | median abs error (before -> after) | max abs error "
                    "(before -> after, at size) | missing |\n"
                    "|---|---|---|---|---|\n");
    else
        fprintf(md, "\n\n| band | sizes | median abs error | max abs error (at size) | missing |\n"
                    "|---|---|---|---|---|\n");
    for (int b = 0; b < CS_NBANDS; b++) {
        const struct cs_valid_before_row *row = cs_valid_before_find(before, c->name, b);
        struct cs_valid_stats s;

        cs_valid_stats(p, n, (enum cs_band)b, held, &s);
        if (s.n == 0 && s.missing == 0)
            continue;
        fprintf(md, "| %s%s | %d | ", cs_band_name((enum cs_band)b), held ? " (held out)" : "",
                s.n);
        if (before != NULL)
            before_cell(md, row, 0);
        if (s.n > 0)
            fprintf(md, "%.1f%% | ", 100 * s.median_abs);
        else
            fprintf(md, "- | ");
        if (before != NULL)
            before_cell(md, row, 1);
        if (s.n > 0 && s.max_ranks > 0)
            fprintf(md, "%.1f%% (%d GPUs) | %d |\n", 100 * s.max_abs, s.max_ranks, s.missing);
        else if (s.n > 0)
            fprintf(md, "%.1f%% (%.0f B) | %d |\n", 100 * s.max_abs, s.max_size, s.missing);
        else
            fprintf(md, "- | %d |\n", s.missing);
        fprintf(csv, "%s,%d,%d,%.6f,%.6f,%d\n", c->name, b, s.n, s.n ? s.median_abs : NAN,
                s.n ? s.max_abs : NAN, s.missing);
    }
}

/* One target line: met, or missed by how many points; 1 when missed. */
static int target(FILE *md, const char *what, double median, double limit)
{
    if (median <= limit) {
        fprintf(md, "%s met (%.1f%%)", what, 100 * median);
        return 0;
    }
    fprintf(md, "%s missed by %.1f points (%.1f%%)", what, 100 * (median - limit), 100 * median);
    return 1;
}

int cs_valid_summary_case(FILE *md, FILE *csv, const struct cs_valid_case *c,
                          const struct cs_valid_point *p, int n,
                          const struct cs_valid_before *before)
{
    int nvs = strcmp(c->target, "nvswitch8") == 0, missed;
    double t_all = nvs ? 0.10 : 0.15;
    struct cs_valid_stats all, large;

    case_heading(md, c);
    band_rows(md, csv, c, p, n, before);
    cs_valid_stats(p, n, CS_BAND_ALL, c->has_fit, &all);
    cs_valid_stats(p, n, CS_BAND_LARGE, c->has_fit, &large);
    fprintf(md, "\nTarget (%s): median at most %.0f%% over all sizes", c->target, 100 * t_all);
    if (nvs)
        fprintf(md, ", at most 5%% at 4 MiB and up");
    fprintf(md, ": ");
    if (all.n == 0) {
        fprintf(md, "no predictions.\n");
        return 1;
    }
    missed = target(md, "all sizes", all.median_abs, t_all);
    if (nvs && large.n > 0) {
        fprintf(md, "; ");
        missed |= target(md, ">= 4 MiB", large.median_abs, 0.05);
    }
    fprintf(md, ".\n\n");
    if (c->notes != NULL)
        fprintf(md, "%s\n", c->notes);
    fprintf(md, "![%s](%s.svg)\n", c->name, c->name);
    return missed;
}

void cs_valid_case_csv(FILE *fp, const struct cs_valid_point *p, int n)
{
    int by_n = n > 0 && p[0].ranks > 0;

    fprintf(fp, "%s,measured_us,predicted_us,error_pct,protocol,held_out\n",
            by_n ? "n_gpus" : "size_bytes");
    for (int i = 0; i < n; i++) {
        double x = by_n ? p[i].ranks : p[i].size_bytes;

        if (isfinite(p[i].pred_s))
            fprintf(fp, "%.0f,%.4f,%.4f,%.2f,%s,%d\n", x, p[i].meas_s * 1e6, p[i].pred_s * 1e6,
                    100 * (p[i].pred_s - p[i].meas_s) / p[i].meas_s, p[i].proto, p[i].held_out);
        else
            fprintf(fp, "%.0f,%.4f,,,none,%d\n", x, p[i].meas_s * 1e6, p[i].held_out);
    }
}

/* Row r of baseline b against row q of summary s (same case and band): 1 when worse. */
static int band_worse(const struct cs_csv *b, int r, const struct cs_csv *s, int q, double tol,
                      FILE *out)
{
    double bm, bx, sm = NAN, sx = NAN;

    if (cs_csv_get_double(b, r, 3, &bm, NULL) != 0 || cs_csv_get_double(b, r, 4, &bx, NULL) != 0)
        return 0;
    if (cs_csv_get_double(s, q, 3, &sm, NULL) == 0 && cs_csv_get_double(s, q, 4, &sx, NULL) == 0 &&
        sm <= bm + tol && sx <= bx + tol)
        return 0;
    fprintf(out,
            "validate: %s band %s: median %.2f%% max %.2f%% (baseline %.2f%% %.2f%%, "
            "tolerance %.2f points)\n",
            cs_csv_cell(s, q, 0), cs_band_name(atoi(cs_csv_cell(s, q, 1))), 100 * sm, 100 * sx,
            100 * bm, 100 * bx, 100 * tol);
    return 1;
}

int cs_valid_baseline_check(const char *summary, const char *baseline, double tol, FILE *out,
                            struct cs_error *err)
{
    struct cs_csv *s = NULL, *b = NULL;
    int worse = 0, rc;

    if ((rc = cs_csv_read(summary, &s, err)) != 0 || (rc = cs_csv_read(baseline, &b, err)) != 0) {
        cs_csv_free(s);
        return rc;
    }
    for (int r = 0; r < b->nrows; r++) {
        int q = 0;

        while (q < s->nrows && (strcmp(cs_csv_cell(b, r, 0), cs_csv_cell(s, q, 0)) != 0 ||
                                strcmp(cs_csv_cell(b, r, 1), cs_csv_cell(s, q, 1)) != 0))
            q++;
        if (q == s->nrows) {
            fprintf(out, "validate: %s band %s: in the baseline, not in this run\n",
                    cs_csv_cell(b, r, 0), cs_csv_cell(b, r, 1));
            worse = 1;
        } else {
            worse |= band_worse(b, r, s, q, tol, out);
        }
    }
    cs_csv_free(s);
    cs_csv_free(b);
    return worse;
}
