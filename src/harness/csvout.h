/* csvout.h: the harness's per-sample CSV (shared reference calibration.md 3.3): '#' metadata
 * lines, one header line, one row per sample. */
#ifndef CS_HARNESS_CSVOUT_H
#define CS_HARNESS_CSVOUT_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The column header, exactly as calibration.md 3.3 gives it. */
#define HX_CSV_HEADER                                                                              \
    "test,mech,op,src,dst,concurrent,nblocks,nthreads,chunk_bytes,bytes,ops,sample,time_s,sm_mhz," \
    "status"

/* One sample. time_s covers `ops` operations of `bytes` payload bytes each (per direction, per
 * flow); src/dst are device ordinals (dst == src: local, -1: the host). */
struct hx_row {
    const char *test, *mech, *op;
    int src, dst;
    int concurrent; /* flows running at once */
    int nblocks;    /* CTAs per flow (per side for producer/consumer tests) */
    int nthreads;   /* threads per CTA */
    long long chunk_bytes, bytes, ops;
    int sample;
    double time_s;
    int sm_mhz;
    const char *status; /* ok, bad_data, timeout, error, too_big */
};

struct hx_csv {
    FILE *fp;
    long rows;
};

/* Open path for writing (the parent directory must exist). 0 or -1 with errno set. */
int hx_csv_open(struct hx_csv *csv, const char *path);
/* A '#' metadata line (the '# ' prefix and newline are added). */
void hx_csv_comment(struct hx_csv *csv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hx_csv_header(struct hx_csv *csv);
/* Write one row; fields that could hold a comma or newline are replaced by '_' characters. */
void hx_csv_row(struct hx_csv *csv, const struct hx_row *row);
/* Flush and close. 0, or -1 when a write failed. */
int hx_csv_close(struct hx_csv *csv);

#ifdef __cplusplus
}
#endif

#endif
