/* csv.c: strict CSV reader with line numbers (see csv.h for the accepted format). */
#include "csv.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "parse.h"
#include "util.h"

/* A growable array of strings. */
struct strvec {
    char **v;
    int n, cap;
};

/* Append str, taking it (freed when it cannot be kept; NULL means memory ran out). */
static int strvec_push(struct strvec *s, char *str)
{
    char **slot = str ? cs_array_slot((void **)&s->v, s->n, &s->cap, sizeof(*s->v)) : NULL;

    if (slot == NULL) {
        free(str);
        return CS_ERR_NOMEM;
    }
    *slot = str;
    s->n++;
    return 0;
}

static void strvec_cleanup(struct strvec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* Parser state over the input. */
struct parser {
    const char *s;
    size_t len, pos;
    int line;
    const char *name;
    struct cs_error *err;
};

static int at_eol(const struct parser *p)
{
    return p->pos >= p->len || p->s[p->pos] == '\n' ||
           (p->s[p->pos] == '\r' && (p->pos + 1 >= p->len || p->s[p->pos + 1] == '\n'));
}

static void skip_eol(struct parser *p)
{
    if (p->pos < p->len && p->s[p->pos] == '\r')
        p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '\n') {
        p->pos++;
        p->line++;
    }
}

/* Read the quoted field at p->pos into a new string in *f: its text between the quotes, where
 * `""` is a quote and line breaks are kept. Returns 0, 1 for a NUL byte, or a CS_ERR_* code. */
static int parse_quoted(struct parser *p, char **f)
{
    size_t b = p->pos + 1, e = b, n = 0;
    int qline = p->line;

    for (;; e++) {
        if (e >= p->len)
            return cs_error_fail(p->err, CS_ERR_PARSE, p->name, qline, "unterminated quoted field");
        if (p->s[e] == '\0')
            return 1;
        if (p->s[e] == '"' && (e + 1 >= p->len || p->s[e + 1] != '"'))
            break;
        e += p->s[e] == '"';
        p->line += p->s[e] == '\n';
    }
    p->pos = e + 1;
    if (!at_eol(p) && p->s[p->pos] != ',')
        return cs_error_fail(p->err, CS_ERR_PARSE, p->name, p->line, "text after a closing quote");
    if ((*f = malloc(e - b + 1)) == NULL)
        return CS_ERR_NOMEM;
    for (size_t i = b; i < e; i++) {
        (*f)[n++] = p->s[i];
        i += p->s[i] == '"';
    }
    (*f)[n] = '\0';
    return 0;
}

/* Read the field at p->pos, up to the next comma or line end, into a new string in *f. Returns 0,
 * 1 for a NUL byte, or a CS_ERR_* code. */
static int parse_field(struct parser *p, char **f)
{
    size_t b = p->pos;

    if (p->pos < p->len && p->s[p->pos] == '"')
        return parse_quoted(p, f);
    for (; !at_eol(p) && p->s[p->pos] != ','; p->pos++) {
        if (p->s[p->pos] == '\0')
            return 1;
        if (p->s[p->pos] == '"')
            return cs_error_fail(p->err, CS_ERR_PARSE, p->name, p->line,
                                 "quote inside an unquoted field");
    }
    return (*f = strndup(p->s + b, p->pos - b)) == NULL ? CS_ERR_NOMEM : 0;
}

/* Parse one record (a row of fields) starting at p->pos, which is at the start of a line that is
 * neither blank nor a comment. */
static int parse_record(struct parser *p, struct strvec *fields)
{
    int start_line = p->line;

    for (;;) {
        char *f = NULL;
        int rc = parse_field(p, &f);

        if (rc > 0)
            return cs_error_fail(p->err, CS_ERR_PARSE, p->name, start_line,
                                 "NUL byte in a CSV file");
        if (rc != 0 || (rc = strvec_push(fields, f)) != 0)
            return rc;
        if (at_eol(p)) {
            skip_eol(p);
            return 0;
        }
        p->pos++; /* the comma */
    }
}

/* Consume the `#` line at p->pos, keeping its text (without the `#`, leading blanks and CR) in
 * `comments` when not NULL. */
static int read_comment(struct parser *p, struct strvec *comments)
{
    size_t e = p->pos + 1, b = p->pos + 1, l;

    while (e < p->len && p->s[e] != '\n')
        e++;
    if (memchr(p->s + p->pos, '\0', e - p->pos) != NULL)
        return cs_error_fail(p->err, CS_ERR_PARSE, p->name, p->line, "NUL byte in a CSV file");
    while (b < e && (p->s[b] == ' ' || p->s[b] == '\t'))
        b++;
    l = e - b;
    if (l > 0 && p->s[b + l - 1] == '\r')
        l--;
    if (comments != NULL && strvec_push(comments, strndup(p->s + b, l)) != 0)
        return CS_ERR_NOMEM;
    p->pos = e;
    skip_eol(p);
    return 0;
}

/* Skip blank lines; with CS_CSV_COMMENTS a `#` line becomes a comment (kept in `comments` when
 * not NULL). Returns 1 when a record starts at p->pos, 0 at the end of input, <0 on error. */
static int next_record(struct parser *p, int flags, struct strvec *comments)
{
    while (p->pos < p->len) {
        size_t q = p->pos;
        int rc;

        while (q < p->len && (p->s[q] == ' ' || p->s[q] == '\t'))
            q++;
        if (q >= p->len) {
            p->pos = q;
            return 0;
        }
        if (p->s[q] == '\n' || p->s[q] == '\r') {
            p->pos = q;
            if (at_eol(p)) {
                skip_eol(p);
                continue;
            }
            return 1; /* a bare CR: let the record parser see it */
        }
        if (!(flags & CS_CSV_COMMENTS) || p->s[q] != '#' || p->pos != q)
            return 1;
        if ((rc = read_comment(p, comments)) != 0)
            return rc;
    }
    return 0;
}

/* Drop the blanks around s, in place. */
static void trim(char *s)
{
    size_t b = strspn(s, " \t"), e = strlen(s);

    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
        e--;
    memmove(s, s + b, e - b);
    s[e - b] = '\0';
}

/* Parse the header record into `header`: names trimmed, none empty, none repeated. */
static int read_header(struct parser *p, struct strvec *header)
{
    int hline = p->line, rc = parse_record(p, header);

    for (int i = 0; rc == 0 && i < header->n; i++) {
        trim(header->v[i]);
        if (header->v[i][0] == '\0')
            return cs_error_fail(p->err, CS_ERR_PARSE, p->name, hline,
                                 "empty column name (column %d)", i + 1);
        for (int j = 0; j < i; j++)
            if (strcmp(header->v[j], header->v[i]) == 0)
                return cs_error_fail(p->err, CS_ERR_PARSE, p->name, hline,
                                     "duplicate column name '%s'", header->v[i]);
    }
    return rc;
}

/* Parse the data record at p->pos onto `cells` and its line into t, checking its field count. */
static int read_row(struct parser *p, struct cs_csv *t, struct strvec *cells, int *cap)
{
    int line = p->line, first = cells->n, rc = parse_record(p, cells), *line_slot;

    if (rc != 0)
        return rc;
    if (cells->n - first != t->ncols)
        return cs_error_fail(p->err, CS_ERR_PARSE, p->name, line, "%d fields, the header has %d",
                             cells->n - first, t->ncols);
    if ((line_slot = cs_array_slot((void **)&t->lines, t->nrows, cap, sizeof(int))) == NULL)
        return CS_ERR_NOMEM;
    *line_slot = line;
    t->nrows++;
    return 0;
}

int cs_csv_parse(const char *buf, size_t len, const char *name, int flags, struct cs_csv **out,
                 struct cs_error *err)
{
    struct parser p = {buf, len, 0, 1, name ? name : "", err};
    struct strvec comments = {0}, header = {0}, cells = {0};
    struct cs_csv *t = calloc(1, sizeof(*t));
    int cap = 0, rc;

    if (t == NULL || (t->name = strdup(p.name)) == NULL) {
        free(t);
        return CS_ERR_NOMEM;
    }
    /* A UTF-8 byte order mark is not part of the first header name. */
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
        p.pos = 3;
    rc = next_record(&p, flags, &comments);
    if (rc > 0 && (rc = read_header(&p, &header)) == 0) {
        t->ncols = header.n;
        t->header = header.v;
        header.v = NULL;
        header.n = 0;
        while ((rc = next_record(&p, flags, NULL)) > 0)
            if ((rc = read_row(&p, t, &cells, &cap)) != 0)
                break;
    }
    t->cells = cells.v;
    t->ncomments = comments.n;
    t->comments = comments.v;
    t->end_line = p.line;
    strvec_cleanup(&header);
    if (rc != 0) {
        /* cells may end in a partial row: free them by count, not by nrows. */
        strvec_cleanup(&cells);
        t->cells = NULL;
        t->nrows = 0;
        cs_csv_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* A measurement table must have a header row: turn a parsed table without one into an error. */
static int need_header(int rc, struct cs_csv *t, struct cs_csv **out, struct cs_error *err)
{
    if (rc == 0 && t->ncols == 0) {
        cs_error_set(err, t->name, t->end_line, "no header row");
        cs_csv_free(t);
        return CS_ERR_PARSE;
    }
    if (rc == 0)
        *out = t;
    return rc;
}

int cs_csv_read_mem(const char *buf, size_t len, const char *name, struct cs_csv **out,
                    struct cs_error *err)
{
    struct cs_csv *t = NULL;
    int rc = cs_csv_parse(buf, len, name, CS_CSV_COMMENTS, &t, err);

    return need_header(rc, t, out, err);
}

int cs_csv_read(const char *path, struct cs_csv **out, struct cs_error *err)
{
    struct cs_csv *t = NULL;
    int rc = cs_csv_read_file(path, CS_CSV_COMMENTS, &t, err);

    return need_header(rc, t, out, err);
}

int cs_csv_read_file(const char *path, int flags, struct cs_csv **out, struct cs_error *err)
{
    char *data;
    size_t len;
    int rc = cs_file_read(path, CS_CSV_MAX_BYTES, &data, &len, err);

    if (rc != 0)
        return rc == CS_ERR_INVALID ? CS_ERR_IO : rc; /* too large: an I/O error, as documented */
    rc = cs_csv_parse(data, len, strcmp(path, "-") == 0 ? "<stdin>" : path, flags, out, err);
    free(data);
    return rc;
}

void cs_csv_free(struct cs_csv *t)
{
    if (t == NULL)
        return;
    for (int i = 0; i < t->ncols; i++)
        free(t->header[i]);
    for (long i = 0; i < (long)t->nrows * t->ncols; i++)
        free(t->cells[i]);
    for (int i = 0; i < t->ncomments; i++)
        free(t->comments[i]);
    cs_free_each(6, t->header, t->cells, t->comments, t->lines, t->name, t);
}

int cs_csv_col_find(const struct cs_csv *t, const char *name)
{
    return cs_name_index(t->header, t->ncols, name);
}

const char *cs_csv_cell(const struct cs_csv *t, int row, int col)
{
    if (col < 0 || col >= t->ncols || row < 0 || row >= t->nrows)
        return "";
    return t->cells[(long)row * t->ncols + col];
}

int cs_csv_get_double(const struct cs_csv *t, int row, int col, double *out, struct cs_error *err)
{
    const char *cell = cs_csv_cell(t, row, col), *s = cell + strspn(cell, " \t");
    size_t len = strlen(s);
    char *num;
    int rc;

    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len == 0)
        return 1;
    if ((num = strndup(s, len)) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, t->name, t->lines[row], "out of memory");
    rc = cs_parse_double(num, -DBL_MAX, DBL_MAX, out);
    free(num);
    if (rc != 0)
        return cs_error_fail(err, CS_ERR_PARSE, t->name, t->lines[row],
                             "column %s: '%s' is not a finite number", t->header[col], cell);
    return 0;
}
