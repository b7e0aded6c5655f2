/* table.c: CSV tables with a header line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

#define MAX_COLS 256
#define MAX_FIELD 4096
#define MAX_TABLE_BYTES (256L << 20)

struct cs_table *cs_table_new(int ncols, const char *const *cols)
{
    struct cs_table *t = calloc(1, sizeof(*t));

    if (t == NULL || (t->cols = calloc((size_t)ncols, sizeof(char *))) == NULL) {
        free(t);
        return NULL;
    }
    t->ncols = ncols;
    for (int i = 0; i < ncols; i++)
        if ((t->cols[i] = strdup(cols[i])) == NULL) {
            cs_table_free(t);
            return NULL;
        }
    return t;
}

void cs_table_free(struct cs_table *t)
{
    if (t == NULL)
        return;
    for (int i = 0; t->cols && i < t->ncols; i++)
        free(t->cols[i]);
    for (long i = 0; t->cells && i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cols);
    free(t->cells);
    free(t->lines);
    free(t);
}

int cs_table_add_row(struct cs_table *t, const char *const *vals, int line)
{
    if (t->nrows == t->cap_rows) {
        long ncap = t->cap_rows ? t->cap_rows * 2 : 64;
        char **nc = realloc(t->cells, sizeof(char *) * (size_t)ncap * (size_t)t->ncols);
        int *nl;

        if (nc == NULL)
            return CS_ERR_NOMEM;
        t->cells = nc;
        if ((nl = realloc(t->lines, sizeof(int) * (size_t)ncap)) == NULL)
            return CS_ERR_NOMEM;
        t->lines = nl;
        t->cap_rows = ncap;
    }
    for (int i = 0; i < t->ncols; i++)
        if ((t->cells[t->nrows * t->ncols + i] = strdup(vals[i])) == NULL) {
            for (int j = 0; j < i; j++)
                free(t->cells[t->nrows * t->ncols + j]);
            return CS_ERR_NOMEM;
        }
    t->lines[t->nrows++] = line;
    return 0;
}

/* Split one record starting at *pp into fields (at most MAX_COLS). Advances *pp past the record
 * and *line by the lines it spans. Returns the field count, or a negative error. */
static int split_record(const char **pp, const char *end, char **fields, int *line,
                        const char *name, struct cs_error *err)
{
    const char *p = *pp;
    int n = 0, start_line = *line;
    char buf[MAX_FIELD];

    for (;;) {
        size_t len = 0;

        if (n >= MAX_COLS) {
            cs_error_set(err, name, start_line, "more than %d fields", MAX_COLS);
            goto fail;
        }
        if (p < end && *p == '"') {
            p++;
            for (;;) {
                if (p >= end) {
                    cs_error_set(err, name, start_line, "unterminated quoted field");
                    goto fail;
                }
                if (*p == '"') {
                    if (p + 1 < end && p[1] == '"') {
                        p += 2;
                        if (len + 1 >= sizeof(buf))
                            goto toolong;
                        buf[len++] = '"';
                        continue;
                    }
                    p++;
                    break;
                }
                if (*p == '\n')
                    (*line)++;
                if (len + 1 >= sizeof(buf))
                    goto toolong;
                buf[len++] = *p++;
            }
            if (p < end && *p != ',' && *p != '\n' && *p != '\r') {
                cs_error_set(err, name, start_line, "text after a closing quote");
                goto fail;
            }
        } else {
            while (p < end && *p != ',' && *p != '\n' && *p != '\r') {
                if (*p == '"') {
                    cs_error_set(err, name, start_line, "quote inside an unquoted field");
                    goto fail;
                }
                if (len + 1 >= sizeof(buf))
                    goto toolong;
                buf[len++] = *p++;
            }
        }
        buf[len] = '\0';
        if ((fields[n++] = strdup(buf)) == NULL) {
            cs_error_set(err, name, start_line, "out of memory");
            goto fail;
        }
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '\r')
            p++;
        if (p < end && *p == '\n') {
            p++;
            (*line)++;
        }
        break;
    }
    *pp = p;
    return n;
toolong:
    cs_error_set(err, name, start_line, "field longer than %d bytes", MAX_FIELD - 1);
fail:
    for (int i = 0; i < n; i++)
        free(fields[i]);
    return CS_ERR_PARSE;
}

int cs_table_parse(const char *text, size_t len, const char *name, struct cs_table **out,
                   struct cs_error *err)
{
    const char *p = text, *end = text + len;
    char *fields[MAX_COLS];
    struct cs_table *t = NULL;
    int line = 1, n, rc = 0;

    if (memchr(text, '\0', len) != NULL) {
        cs_error_set(err, name, 0, "binary file (NUL byte)");
        return CS_ERR_PARSE;
    }
    while (p < end) {
        int rec_line;

        if (*p == '\n' || *p == '\r') { /* blank line */
            if (*p == '\n')
                line++;
            p++;
            continue;
        }
        rec_line = line;
        if ((n = split_record(&p, end, fields, &line, name, err)) < 0) {
            rc = n;
            break;
        }
        if (t == NULL) {
            t = cs_table_new(n, (const char *const *)fields);
            for (int i = 0; i < n; i++)
                free(fields[i]);
            if (t == NULL) {
                rc = CS_ERR_NOMEM;
                break;
            }
            continue;
        }
        if (n != t->ncols) {
            cs_error_set(err, name, rec_line, "%d fields, the header has %d", n, t->ncols);
            rc = CS_ERR_PARSE;
        } else {
            rc = cs_table_add_row(t, (const char *const *)fields, rec_line);
        }
        for (int i = 0; i < n; i++)
            free(fields[i]);
        if (rc != 0)
            break;
    }
    if (rc == 0 && t == NULL) {
        cs_error_set(err, name, 0, "empty table (no header line)");
        rc = CS_ERR_PARSE;
    }
    if (rc != 0) {
        if (rc == CS_ERR_NOMEM)
            cs_error_set(err, name, line, "out of memory");
        cs_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int cs_table_read(const char *path, struct cs_table **out, struct cs_error *err)
{
    FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    int rc;

    if (fp == NULL) {
        cs_error_set(err, path, 0, "cannot open: %s", strerror(errno));
        return CS_ERR_IO;
    }
    for (;;) {
        if (len + 65536 > cap) {
            char *nb;

            if (cap >= (size_t)MAX_TABLE_BYTES) {
                cs_error_set(err, path, 0, "larger than %ld bytes", MAX_TABLE_BYTES);
                rc = CS_ERR_INVALID;
                goto done;
            }
            if ((nb = realloc(buf, cap = cap * 2 + 65536)) == NULL) {
                rc = CS_ERR_NOMEM;
                goto done;
            }
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len, fp);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(fp)) {
        cs_error_set(err, path, 0, "cannot read: %s", strerror(errno));
        rc = CS_ERR_IO;
        goto done;
    }
    rc = cs_table_parse(buf, len, path, out, err);
done:
    if (fp != stdin)
        fclose(fp);
    free(buf);
    return rc;
}

int cs_table_find_col(const struct cs_table *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i], name) == 0)
            return i;
    return -1;
}

const char *cs_table_get(const struct cs_table *t, long row, int col)
{
    return t->cells[row * t->ncols + col];
}

void cs_table_write_field(FILE *fp, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

int cs_table_write(const struct cs_table *t, FILE *fp)
{
    for (int i = 0; i < t->ncols; i++) {
        if (i)
            fputc(',', fp);
        cs_table_write_field(fp, t->cols[i]);
    }
    fputc('\n', fp);
    for (long r = 0; r < t->nrows; r++) {
        for (int i = 0; i < t->ncols; i++) {
            if (i)
                fputc(',', fp);
            cs_table_write_field(fp, cs_table_get(t, r, i));
        }
        fputc('\n', fp);
    }
    return ferror(fp) ? CS_ERR_IO : 0;
}
