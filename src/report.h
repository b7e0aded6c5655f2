/* report.h: prediction results as people and tools read them: an nccl-tests style table, CSV
 * and JSON. Each format's header is written here and nowhere else. */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stdio.h>

#include "predict.h"

enum cs_report_fmt {
    CS_REPORT_TABLE = 1,
    CS_REPORT_CSV,
    CS_REPORT_JSON,
};

/* Columns of a prediction row in CSV, in order (predict --format csv; sweep and regress files
 * end with them). nominal_bytes is the size asked for, before alignment (cs_predict_align). */
#define CS_REPORT_CSV_HEADER                                                                       \
    "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status,nominal_bytes"
#define CS_REPORT_CSV_NCOLS 8
/* Appended to predict's CSV with --compare. */
#define CS_REPORT_CSV_COMPARE "measured_us,error_pct"
extern const char *const cs_report_csv_cols[CS_REPORT_CSV_NCOLS];

/* What a report says about the run as a whole. */
struct cs_report_meta {
    const char *schedule; /* path or generator spec */
    const char *platform; /* path */
    enum cs_proto proto;
    enum cs_coll coll;
    int ngpus;
    const char *dtype; /* type name printed in rows */
    /* What made the report (the table's header, JSON's metadata; NULL: not written). */
    const char *version; /* collsim's */
    const char *git;     /* the commit it was built from */
    const char *simgrid; /* library versions */
    const char *libxml2;
    const char *platform_hash; /* FNV-1a 64 of the platform file's bytes, in hex */
    const char *compare;       /* the measurements compared with (--compare LOG); NULL: none */
    const char *sizes_note;    /* how sizes were aligned: a line after the table; NULL: none */
    /* predict --vs-nccl: the NCCL version compared with ("2.12.12"); each format then adds
     * NCCL's protocol, channels, threads and time and the speed-up (NCCL time / schedule time)
     * per row from row->nccl (CS_REPORT_NCCL_CSV_COLS at the end of CSV rows). NULL: none. */
    const char *vs_nccl;
};

/* The columns --vs-nccl appends to CSV rows. */
#define CS_REPORT_NCCL_CSV_COLS "nccl_protocol,nccl_channels,nccl_threads,nccl_time_us,speedup"

/* "table", "csv" or "json"; 0 when unknown. */
enum cs_report_fmt cs_report_fmt_parse(const char *s);

/* Write a whole report of n rows to fp: header, rows, and (table, CSV on stderr via `notes`)
 * the first deadlock's wait-for report and why each unsupported size is refused, as `#` lines.
 * `notes` receives what is not data in CSV mode (may be the same as fp for the table). 0, or
 * CS_ERR_IO when fp fails. */
int cs_report_write(FILE *fp, FILE *notes, enum cs_report_fmt fmt,
                    const struct cs_report_meta *meta, const struct cs_predict_row *rows, int n);

/* The same report streamed as rows come: the header (flushed), each row with its index (flushed),
 * then the end with the notes over all n rows; cs_report_end returns what cs_report_write does. */
void cs_report_begin(FILE *fp, enum cs_report_fmt fmt, const struct cs_report_meta *meta);
void cs_report_row(FILE *fp, enum cs_report_fmt fmt, const struct cs_report_meta *meta,
                   const struct cs_predict_row *row, int index);
int cs_report_end(FILE *fp, FILE *notes, enum cs_report_fmt fmt, const struct cs_predict_row *rows,
                  int n);
/* cs_report_end with what meta adds at the end: for CSV the version line (cs_report_meta_line)
 * first on notes, the comparison's summary (median and max |error| over the sizes measured; JSON:
 * a top-level "compare" object) and the sizes note (after the table's footer, or on notes). meta
 * may be NULL. */
int cs_report_end_meta(FILE *fp, FILE *notes, enum cs_report_fmt fmt,
                       const struct cs_report_meta *meta, const struct cs_predict_row *rows, int n);

/* meta's version line ("# collsim V (git G), SimGrid S, libxml2 L, platform FNV-1a 64 H"), as the
 * table's header writes it; nothing when meta->version is NULL. CSV, which has no room for it,
 * has it first among the notes (cs_report_end_meta). */
void cs_report_meta_line(FILE *fp, const struct cs_report_meta *meta);

/* The signed error of row's prediction against its out-of-place measurement, in percent:
 * 100 (predicted - measured) / measured. 0 with *pct, or -1 when the row has no time or no
 * measurement. */
int cs_report_error_pct(const struct cs_predict_row *row, double *pct);

/* The CS_REPORT_CSV_NCOLS CSV fields of one row (no line end), for tables that prefix their own
 * columns (sweep points). */
void cs_report_csv_fields(FILE *fp, const struct cs_predict_row *row, const char *dtype);

#endif
