/* report.c: prediction rows as an nccl-tests style table, CSV or JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *const cs_report_csv_cols[CS_REPORT_CSV_NCOLS] = {
    "size_bytes", "count", "type", "time_us", "algbw_GBps", "busbw_GBps", "status", "nominal_bytes",
};

enum cs_report_fmt cs_report_fmt_parse(const char *s)
{
    static const char *const names[] = {NULL, "table", "csv", "json"};

    for (int f = CS_REPORT_TABLE; f <= CS_REPORT_JSON; f++)
        if (strcmp(s, names[f]) == 0)
            return (enum cs_report_fmt)f;
    return 0;
}

static void json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(fp, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", fp);
        else if ((unsigned char)*s < 0x20)
            fprintf(fp, "\\u%04x", *s);
        else
            fputc(*s, fp);
    }
    fputc('"', fp);
}

static int ok(const struct cs_predict_row *row)
{
    return row->res.status == CS_REPLAY_OK;
}

void cs_report_csv_fields(FILE *fp, const struct cs_predict_row *row, const char *dtype)
{
    if (ok(row))
        fprintf(fp, "%lld,%lld,%s,%.6f,%.6f,%.6f,ok", row->size_bytes, row->count, dtype,
                row->time_us, row->algbw_GBps, row->busbw_GBps);
    else
        fprintf(fp, "%lld,%lld,%s,,,,%s", row->size_bytes, row->count, dtype,
                cs_predict_status_name(row));
    fprintf(fp, ",%lld", row->nominal_bytes);
}

/* ---- metadata and the comparison with measurements (--compare) ---------------------------- */

void cs_report_meta_line(FILE *fp, const struct cs_report_meta *m)
{
    if (m->version == NULL)
        return;
    fprintf(fp, "# collsim %s (git %s), SimGrid %s, libxml2 %s", m->version,
            m->git ? m->git : "unknown", m->simgrid ? m->simgrid : "unknown",
            m->libxml2 ? m->libxml2 : "unknown");
    if (m->platform_hash != NULL)
        fprintf(fp, ", platform FNV-1a 64 %s", m->platform_hash);
    fputc('\n', fp);
}

static void json_metadata(FILE *fp, const struct cs_report_meta *m)
{
    const char *keys[] = {"collsim", "git", "simgrid", "libxml2", "platform_fnv1a64"};
    const char *vals[] = {m->version, m->git, m->simgrid, m->libxml2, m->platform_hash};

    if (m->version == NULL)
        return;
    fputs(", \"metadata\": {", fp);
    for (int k = 0, first = 1; k < 5; k++)
        if (vals[k] != NULL) {
            fprintf(fp, "%s\"%s\": ", first ? "" : ", ", keys[k]);
            json_str(fp, vals[k]);
            first = 0;
        }
    fputc('}', fp);
}

int cs_report_error_pct(const struct cs_predict_row *row, double *pct)
{
    if (!ok(row) || row->measured_us <= 0)
        return -1;
    *pct = 100 * (row->time_us - row->measured_us) / row->measured_us;
    return 0;
}

/* The measured time and error of row in fmt's columns (nothing measured: blank, "-", null). */
static void compare_fields(FILE *fp, enum cs_report_fmt fmt, const struct cs_predict_row *row)
{
    double e = 0;
    int has_e = cs_report_error_pct(row, &e) == 0, has_m = row->measured_us > 0;

    if (fmt == CS_REPORT_TABLE) {
        char mu[32] = "-", ep[32] = "-";

        if (has_m)
            snprintf(mu, sizeof(mu), "%.*f", row->measured_us < 10000 ? 2 : 0, row->measured_us);
        if (has_e)
            snprintf(ep, sizeof(ep), "%+.1f", e);
        fprintf(fp, "  %9s  %7s", mu, ep);
    } else if (fmt == CS_REPORT_CSV) {
        if (has_m)
            fprintf(fp, ",%.6f", row->measured_us);
        else
            fputc(',', fp);
        if (has_e)
            fprintf(fp, ",%.4f", e);
        else
            fputc(',', fp);
    } else {
        double ip = 0;
        int has_ip = row->measured_ip_us > 0 && ok(row);

        fprintf(fp, has_m ? ", \"measured_us\": %.6f" : ", \"measured_us\": null",
                row->measured_us);
        fprintf(fp, has_e ? ", \"error_pct\": %.4f" : ", \"error_pct\": null", e);
        if (row->measured_ip_us > 0)
            fprintf(fp, ", \"measured_in_place_us\": %.6f", row->measured_ip_us);
        if (has_ip) {
            ip = 100 * (row->time_us - row->measured_ip_us) / row->measured_ip_us;
            fprintf(fp, ", \"error_in_place_pct\": %.4f", ip);
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The summary of the comparison over rows: how many sizes were measured, the median and the
 * largest |error|. */
static void compare_summary(FILE *fp, enum cs_report_fmt fmt, const struct cs_report_meta *m,
                            const struct cs_predict_row *rows, int n)
{
    double *abs_e = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), med = 0, max = 0;
    long long at = 0;
    int k = 0;

    for (int i = 0; i < n && abs_e != NULL; i++) {
        double e;

        if (cs_report_error_pct(&rows[i], &e) != 0)
            continue;
        if (k == 0 || fabs(e) > max)
            max = fabs(e), at = rows[i].size_bytes;
        abs_e[k++] = fabs(e);
    }
    if (k > 0) {
        qsort(abs_e, (size_t)k, sizeof(*abs_e), cmp_double);
        med = k % 2 ? abs_e[k / 2] : (abs_e[k / 2 - 1] + abs_e[k / 2]) / 2;
    }
    free(abs_e);
    if (fmt == CS_REPORT_JSON) {
        fputs(",\n\"compare\": {\"log\": ", fp);
        json_str(fp, m->compare);
        fprintf(fp, ", \"sizes\": %d, \"measured\": %d", n, k);
        if (k > 0)
            fprintf(fp,
                    ", \"median_abs_error_pct\": %.4f, \"max_abs_error_pct\": %.4f, "
                    "\"max_at_bytes\": %lld",
                    med, max, at);
        fputc('}', fp);
    } else if (k > 0) {
        fprintf(fp,
                "# compared with %s: %d of %d sizes measured, |error| median %.1f%%, max %.1f%% "
                "(at %lld bytes)\n",
                m->compare, k, n, med, max, at);
    } else {
        fprintf(fp, "# compared with %s: none of the %d sizes measured (or predicted)\n",
                m->compare, n);
    }
}

/* ---- predict --vs-nccl: NCCL's baseline columns */

/* NCCL's time over the schedule's at this row, or 0 when either is missing. */
static double nccl_speedup(const struct cs_predict_row *row)
{
    return row->res.status == CS_REPLAY_OK && row->refused == NULL && row->hang == NULL &&
                   row->nccl.proto && row->time_us > 0
               ? row->nccl.time_us / row->time_us
               : 0;
}

/* The table's header words (two lines: names, units) after the in-place #wrong. */
static void nccl_table_head(FILE *fp, int units)
{
    if (units)
        fprintf(fp, "  %6s  %3s  %4s  %7s", "", "", "", "(us)");
    else
        fprintf(fp, "  %6s  %3s  %4s  %7s  %7s", "nccl", "ch", "thr", "time", "speedup");
}

/* The row's NCCL columns in fmt: table words, CSV fields (leading commas), JSON members. */
static void nccl_fields(FILE *fp, enum cs_report_fmt fmt, const struct cs_predict_row *row)
{
    const struct cs_predict_nccl *n = &row->nccl;
    double sp = nccl_speedup(row);
    char pn[32]; /* the protocol, "/tree" after it when NCCL's tree runs */

    snprintf(pn, sizeof(pn), "%s%s", n->proto ? cs_proto_name(n->proto) : "",
             n->algo == CS_NCCL_ALGO_TREE ? "/tree" : "");

    if (fmt == CS_REPORT_TABLE && n->proto) {
        char t[32], x[32] = "-";

        snprintf(t, sizeof(t), "%.*f",
                 n->time_us < 100     ? 2
                 : n->time_us < 10000 ? 1
                                      : 0,
                 n->time_us);
        if (sp > 0)
            snprintf(x, sizeof(x), "%.2f", sp);
        fprintf(fp, "  %6s  %3d  %4d  %7s  %7s", pn, n->channels, n->threads, t, x);
    } else if (fmt == CS_REPORT_TABLE) {
        fprintf(fp, "  %6s  %3s  %4s  %7s  %7s", "-", "-", "-", "-", "-");
    } else if (fmt == CS_REPORT_CSV && n->proto) {
        fprintf(fp, ",%s,%d,%d,%.6f,", pn, n->channels, n->threads, n->time_us);
        if (sp > 0)
            fprintf(fp, "%.6f", sp);
    } else if (fmt == CS_REPORT_CSV) {
        fputs(",,,,,", fp);
    } else if (n->proto) {
        fprintf(fp,
                ", \"nccl\": {\"protocol\": \"%s\", \"algorithm\": \"%s\", \"channels\": %d, "
                "\"threads\": %d, \"size_bytes\": %lld, \"time_us\": %.6f}",
                cs_proto_name(n->proto), n->algo ? cs_nccl_algo_name(n->algo) : "p2p", n->channels,
                n->threads, n->size_bytes, n->time_us);
        if (sp > 0)
            fprintf(fp, ", \"speedup\": %.6f", sp);
        else
            fputs(", \"speedup\": null", fp);
    } else {
        fputs(", \"nccl\": null, \"speedup\": null", fp);
    }
}

/* ---- */

static void write_header(FILE *fp, enum cs_report_fmt fmt, const struct cs_report_meta *m)
{
    if (fmt == CS_REPORT_TABLE) {
        fprintf(fp, "# collsim predict: %s on %s, %s, %d GPUs, %s\n", m->schedule, m->platform,
                cs_proto_name(m->proto), m->ngpus, cs_coll_name(m->coll));
        cs_report_meta_line(fp, m);
        fputs("# nccl-tests columns; out-of-place and in-place show the same replay, #wrong is N/A "
              "(no data is checked)\n",
              fp);
        if (m->vs_nccl != NULL)
            fprintf(fp,
                    "# vs NCCL %s: what NCCL runs at each size (ring in rank order, its channels "
                    "and threads, the fastest protocol it enables); speedup = NCCL time / "
                    "schedule time\n",
                    m->vs_nccl);
        fputs("#\n", fp);
        fprintf(fp, "# %64s %38s\n", "out-of-place", "in-place");
        fprintf(fp, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s", "size",
                "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
                "algbw", "busbw", "#wrong");
        if (m->compare != NULL)
            fprintf(fp, "  %9s  %7s", "measured", "error");
        if (m->vs_nccl != NULL)
            nccl_table_head(fp, 0);
        fputs("  status\n", fp);
        fprintf(fp, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                "(GB/s)");
        if (m->compare != NULL)
            fprintf(fp, "  %6s  %9s  %7s", "", "(us)", "(%)");
        if (m->vs_nccl != NULL) {
            fprintf(fp, "  %6s", "");
            nccl_table_head(fp, 1);
        }
        fputc('\n', fp);
    } else if (fmt == CS_REPORT_CSV) {
        fputs(CS_REPORT_CSV_HEADER, fp);
        if (m->compare != NULL)
            fputs("," CS_REPORT_CSV_COMPARE, fp);
        fputs(m->vs_nccl != NULL ? "," CS_REPORT_NCCL_CSV_COLS "\n" : "\n", fp);
    } else {
        fputs("{\"schedule\": ", fp);
        json_str(fp, m->schedule);
        fputs(", \"platform\": ", fp);
        json_str(fp, m->platform);
        fprintf(fp, ", \"protocol\": \"%s\", \"collective\": \"%s\", \"gpus\": %d",
                cs_proto_name(m->proto), cs_coll_name(m->coll), m->ngpus);
        if (m->vs_nccl != NULL)
            fprintf(fp, ", \"vs_nccl\": \"%s\"", m->vs_nccl);
        json_metadata(fp, m);
        fputs(", \"results\": [", fp);
    }
}

/* The count column as nccl-tests prints it: elements per rank's send buffer for the gathering and
 * scattering collectives, of the whole buffer otherwise. */
static long long table_count(const struct cs_report_meta *m, const struct cs_predict_row *row)
{
    int per_rank = m->coll == CS_COLL_ALLGATHER || m->coll == CS_COLL_REDUCE_SCATTER ||
                   m->coll == CS_COLL_ALLTOALL;

    return per_rank && m->ngpus > 0 ? row->count / m->ngpus : row->count;
}

static const char *table_redop(const struct cs_report_meta *m)
{
    return m->coll == CS_COLL_ALLREDUCE || m->coll == CS_COLL_REDUCE_SCATTER ? "sum" : "none";
}

static void write_row(FILE *fp, enum cs_report_fmt fmt, const struct cs_report_meta *m,
                      const char *dtype, const struct cs_predict_row *row, int first)
{
    if (fmt == CS_REPORT_TABLE) {
        char t[32] = "-", a[32] = "-", b[32] = "-";

        if (ok(row)) {
            /* nccl-tests keeps the time 7 wide: fewer decimals as it grows. */
            snprintf(t, sizeof(t), "%.*f",
                     row->time_us < 100     ? 2
                     : row->time_us < 10000 ? 1
                                            : 0,
                     row->time_us);
            snprintf(a, sizeof(a), "%.2f", row->algbw_GBps);
            snprintf(b, sizeof(b), "%.2f", row->busbw_GBps);
        }
        fprintf(fp, "%12lld  %12lld  %8s  %6s  %6d  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s",
                row->size_bytes, table_count(m, row), dtype, table_redop(m), -1, t, a, b, "N/A", t,
                a, b, "N/A");
        if (m->compare != NULL)
            compare_fields(fp, fmt, row);
        if (m->vs_nccl != NULL)
            nccl_fields(fp, fmt, row);
        fprintf(fp, "  %s\n", cs_predict_status_name(row));
    } else if (fmt == CS_REPORT_CSV) {
        cs_report_csv_fields(fp, row, dtype);
        if (m->compare != NULL)
            compare_fields(fp, fmt, row);
        if (m->vs_nccl != NULL)
            nccl_fields(fp, fmt, row);
        fputc('\n', fp);
    } else {
        fprintf(fp,
                "%s\n  {\"size_bytes\": %lld, \"count\": %lld, \"type\": \"%s\", "
                "\"nominal_bytes\": %lld, ",
                first ? "" : ",", row->size_bytes, row->count, dtype, row->nominal_bytes);
        if (ok(row)) {
            fprintf(fp,
                    "\"time_us\": %.6f, \"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f, "
                    "\"status\": \"ok\"",
                    row->time_us, row->algbw_GBps, row->busbw_GBps);
        } else {
            fprintf(fp,
                    "\"time_us\": null, \"algbw_GBps\": null, \"busbw_GBps\": null, "
                    "\"status\": \"%s\", \"report\": ",
                    cs_predict_status_name(row));
            json_str(fp, row->refused      ? row->refused
                         : row->hang       ? row->hang
                         : row->res.report ? row->res.report
                                           : "");
        }
        if (row->warning != NULL) {
            fputs(", \"warning\": ", fp);
            json_str(fp, row->warning);
        }
        if (m->compare != NULL)
            compare_fields(fp, fmt, row);
        if (m->vs_nccl != NULL)
            nccl_fields(fp, fmt, row);
        fputc('}', fp);
    }
}

/* Which symmetry the folded replays used (fold.h), as one `#` line: the first folded row's, with
 * how many of the rows it covers; nothing when no row was folded. */
static void write_fold_note(FILE *fp, const struct cs_predict_row *rows, int n)
{
    int first = -1, nfolded = 0;

    for (int k = 0; k < n; k++)
        if (rows[k].refused == NULL && rows[k].hang == NULL && rows[k].res.fold_order > 1) {
            if (first < 0)
                first = k;
            nfolded++;
        }
    if (first < 0)
        return;
    if (nfolded == n)
        fprintf(fp, "# folded replay (every size): %s\n", rows[first].res.fold);
    else
        fprintf(fp, "# folded replay (%d of %d sizes): %s\n", nfolded, n, rows[first].res.fold);
}

/* The first deadlock's wait-for report as `#` lines (the others are the same schedule at larger
 * sizes), why each unsupported size is refused, why the runtime would hang and the warning (the
 * same at every size: once each). */
static void write_notes(FILE *fp, const struct cs_predict_row *rows, int n)
{
    int deadlock = 0, hang = 0, warning = 0;

    for (int k = 0; k < n; k++) {
        const char *p = rows[k].res.report ? rows[k].res.report : "";

        if (rows[k].warning != NULL && !warning++)
            fprintf(fp, "# warning: %s\n", rows[k].warning);
        if (rows[k].refused != NULL) {
            fprintf(fp, "# at %lld bytes: unsupported: %s\n", rows[k].size_bytes, rows[k].refused);
            continue;
        }
        if (rows[k].hang != NULL) {
            if (!hang++)
                fprintf(fp, "# hang (at every size): %s\n", rows[k].hang);
            continue;
        }
        if (ok(&rows[k]) || deadlock++)
            continue;
        fprintf(fp, "# at %lld bytes:\n", rows[k].size_bytes);
        while (*p) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);

            fprintf(fp, "#   %.*s\n", len, p);
            p += len + (nl != NULL);
        }
    }
}

void cs_report_begin(FILE *fp, enum cs_report_fmt fmt, const struct cs_report_meta *meta)
{
    write_header(fp, fmt, meta);
    fflush(fp);
}

void cs_report_row(FILE *fp, enum cs_report_fmt fmt, const struct cs_report_meta *meta,
                   const struct cs_predict_row *row, int index)
{
    write_row(fp, fmt, meta, row->dtype ? row->dtype : meta->dtype, row, index == 0);
    fflush(fp);
}

int cs_report_end_meta(FILE *fp, FILE *notes, enum cs_report_fmt fmt,
                       const struct cs_report_meta *meta, const struct cs_predict_row *rows, int n)
{
    FILE *nfp = fmt == CS_REPORT_TABLE ? fp : notes;

    if (fmt == CS_REPORT_TABLE) {
        double sum = 0;
        int nok = 0;

        for (int k = 0; k < n; k++)
            if (ok(&rows[k])) {
                sum += rows[k].busbw_GBps;
                nok++;
            }
        fprintf(fp, "# Avg bus bandwidth    : %g \n#\n", nok ? sum / nok : 0.0);
    }
    if (fmt == CS_REPORT_JSON) {
        fputs("\n]", fp);
        if (meta != NULL && meta->compare != NULL)
            compare_summary(fp, fmt, meta, rows, n);
        fputs("}\n", fp);
    } else {
        /* CSV has no room for the version line: it leads the notes */
        if (fmt == CS_REPORT_CSV && meta != NULL && nfp != NULL)
            cs_report_meta_line(nfp, meta);
        if (meta != NULL && meta->compare != NULL && nfp != NULL)
            compare_summary(nfp, fmt, meta, rows, n);
        if (meta != NULL && meta->sizes_note != NULL && nfp != NULL)
            fprintf(nfp, "# %s\n", meta->sizes_note);
        if (nfp != NULL)
            write_fold_note(nfp, rows, n);
        write_notes(nfp, rows, n);
    }
    return fflush(fp) != 0 || ferror(fp) ? CS_ERR_IO : 0;
}

int cs_report_end(FILE *fp, FILE *notes, enum cs_report_fmt fmt, const struct cs_predict_row *rows,
                  int n)
{
    return cs_report_end_meta(fp, notes, fmt, NULL, rows, n);
}

int cs_report_write(FILE *fp, FILE *notes, enum cs_report_fmt fmt,
                    const struct cs_report_meta *meta, const struct cs_predict_row *rows, int n)
{
    cs_report_begin(fp, fmt, meta);
    for (int k = 0; k < n; k++)
        cs_report_row(fp, fmt, meta, &rows[k], k);
    return cs_report_end_meta(fp, notes, fmt, meta, rows, n);
}
