/* csvout.c: writer of the harness's per-sample CSV. */
#include "csvout.h"

#include <stdarg.h>
#include <string.h>

int hx_csv_open(struct hx_csv *csv, const char *path)
{
    memset(csv, 0, sizeof(*csv));
    csv->fp = fopen(path, "w");
    return csv->fp ? 0 : -1;
}

void hx_csv_comment(struct hx_csv *csv, const char *fmt, ...)
{
    va_list ap;

    fputs("# ", csv->fp);
    va_start(ap, fmt);
    vfprintf(csv->fp, fmt, ap);
    va_end(ap);
    fputc('\n', csv->fp);
}

void hx_csv_header(struct hx_csv *csv)
{
    fputs(HX_CSV_HEADER "\n", csv->fp);
}

static void field(FILE *fp, const char *s)
{
    for (; s && *s; s++)
        fputc(*s == ',' || *s == '\n' || *s == '\r' || *s == '"' ? '_' : *s, fp);
}

void hx_csv_row(struct hx_csv *csv, const struct hx_row *r)
{
    field(csv->fp, r->test);
    fputc(',', csv->fp);
    field(csv->fp, r->mech);
    fputc(',', csv->fp);
    field(csv->fp, r->op);
    fprintf(csv->fp, ",%d,%d,%d,%d,%d,%lld,%lld,%lld,%d,%.6e,%d,", r->src, r->dst, r->concurrent,
            r->nblocks, r->nthreads, r->chunk_bytes, r->bytes, r->ops, r->sample, r->time_s,
            r->sm_mhz);
    field(csv->fp, r->status);
    fputc('\n', csv->fp);
    fflush(csv->fp);
    csv->rows++;
}

int hx_csv_close(struct hx_csv *csv)
{
    int rc = 0;

    if (csv->fp == NULL)
        return 0;
    if (ferror(csv->fp))
        rc = -1;
    if (fclose(csv->fp) != 0)
        rc = -1;
    csv->fp = NULL;
    return rc;
}
