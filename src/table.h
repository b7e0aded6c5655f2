/* table.h: CSV tables with a header line (prediction, sweep and baseline files), read and written.
 */
#ifndef CS_TABLE_H
#define CS_TABLE_H

#include <stdio.h>

#include "error.h"

struct cs_table {
    int ncols;
    char **cols;
    long nrows;
    long cap_rows;
    char **cells; /* nrows * ncols, row-major */
    int *lines;   /* source line of each row */
};

/* Parse CSV text with csv.h's parser, without comment lines (RFC 4180 quoting; CRLF accepted;
 * blank lines skipped). The first line is the header; every row must have as many fields. `name`
 * names the source in messages. */
int cs_table_parse(const char *text, size_t len, const char *name, struct cs_table **out,
                   struct cs_error *err);
/* Read a CSV file ("-" is stdin). */
int cs_table_read(const char *path, struct cs_table **out, struct cs_error *err);
void cs_table_free(struct cs_table *t);

/* An empty table with these columns (copied). NULL on OOM. */
struct cs_table *cs_table_new(int ncols, const char *const *cols);
/* Append a row of ncols values (copied). 0 or CS_ERR_NOMEM. */
int cs_table_add_row(struct cs_table *t, const char *const *vals, int line);

/* The index of a column, or -1. */
int cs_table_find_col(const struct cs_table *t, const char *name);
/* The cell at (row, col). */
const char *cs_table_get(const struct cs_table *t, long row, int col);

/* Write one field, quoted when it holds a comma, quote or line break. */
void cs_table_write_field(FILE *fp, const char *s);
/* Write the header and rows. 0, or CS_ERR_IO when the stream fails. */
int cs_table_write(const struct cs_table *t, FILE *fp);

#endif
