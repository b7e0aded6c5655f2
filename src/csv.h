/* csv.h: a small strict CSV reader for measurement tables and the harness per-sample CSV.
 *
 * The format: an optional run of `#` comment lines (kept, they carry the harness's metadata),
 * one header row, then data rows with exactly as many fields as the header. Fields are separated
 * by commas; a field may be quoted with `"` and then hold commas, newlines and `""` for a quote.
 * CRLF and LF line ends are both accepted; blank lines and `#` lines between rows are skipped.
 * Every row remembers the line it started on, so that later checks can report file:line.
 * The same parser reads collsim's own tables (table.h), where `#` starts an ordinary field.
 */
#ifndef CS_CSV_H
#define CS_CSV_H

#include <stddef.h>

#include "error.h"

/* Largest file the reader accepts (bytes). */
#define CS_CSV_MAX_BYTES (256L * 1024 * 1024)

/* Flags of cs_csv_parse: `#` lines (at column 1) are comments; those before the header are kept
 * in `comments`. */
#define CS_CSV_COMMENTS 1

struct cs_csv {
    char *name;    /* file name used in messages */
    int ncols;     /* header fields */
    char **header; /* ncols names */
    int nrows;     /* data rows */
    char **cells;  /* nrows * ncols strings, row-major */
    int *lines;    /* line of each data row (1-based) */
    int ncomments; /* `#` lines before the header, without the `#` and leading blanks */
    char **comments;
    int end_line; /* line of the end of the input */
};

/* Parse a CSV held in memory, with the CS_CSV_* `flags`; `name` is used in error messages. A
 * header row is optional here: without one (empty input) *out has ncols 0 and no rows. On success
 * *out is a new table (free with cs_csv_free). Errors: CS_ERR_PARSE with err at file:line
 * (unterminated quote, text after a closing quote, wrong field count, NUL byte, empty or
 * duplicate header name), CS_ERR_NOMEM. */
int cs_csv_parse(const char *buf, size_t len, const char *name, int flags, struct cs_csv **out,
                 struct cs_error *err);

/* Read a file ("-" is stdin, named "<stdin>") and parse it as cs_csv_parse. CS_ERR_IO when it
 * cannot be read or exceeds CS_CSV_MAX_BYTES. */
int cs_csv_read_file(const char *path, int flags, struct cs_csv **out, struct cs_error *err);

/* Parse a measurement table held in memory: cs_csv_parse with CS_CSV_COMMENTS, where a missing
 * header row is CS_ERR_PARSE ("no header row"). */
int cs_csv_read_mem(const char *buf, size_t len, const char *name, struct cs_csv **out,
                    struct cs_error *err);

/* Read and parse a measurement table file ("-" is stdin): cs_csv_read_file, then as
 * cs_csv_read_mem. */
int cs_csv_read(const char *path, struct cs_csv **out, struct cs_error *err);

void cs_csv_free(struct cs_csv *t);

/* Index of the column named `name`, or -1. */
int cs_csv_col_find(const struct cs_csv *t, const char *name);

/* The cell at (row, col); "" for col < 0. */
const char *cs_csv_cell(const struct cs_csv *t, int row, int col);

/* Parse the cell at (row, col) as a finite number (cs_parse_double: surrounding blanks allowed,
 * tiny values that underflow, as 1e-308, are numbers). Returns 0 and *out; 1 when the cell is
 * empty or the column absent (col < 0), *out untouched; CS_ERR_PARSE (err at file:line naming the
 * column) when it is not a finite number; CS_ERR_NOMEM. */
int cs_csv_get_double(const struct cs_csv *t, int row, int col, double *out, struct cs_error *err);

#endif
