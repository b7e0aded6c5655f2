/* table.c: CSV tables with a header line, parsed by csv.c and written back. */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "util.h"

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
    cs_free_each(4, t->cols, t->cells, t->lines, t);
}

int cs_table_add_row(struct cs_table *t, const char *const *vals, int line)
{
    char **row;

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
    row = &t->cells[t->nrows * t->ncols];
    for (int i = 0; i < t->ncols; i++)
        if ((row[i] = strdup(vals[i])) == NULL) {
            while (i-- > 0)
                free(row[i]);
            return CS_ERR_NOMEM;
        }
    t->lines[t->nrows++] = line;
    return 0;
}

/* Move a parsed CSV into a new table; the CSV is freed either way. */
static int from_csv(int rc, struct cs_csv *c, const char *name, struct cs_table **out,
                    struct cs_error *err)
{
    struct cs_table *t = NULL;

    if (rc == 0 && c->ncols == 0)
        rc = cs_error_fail(err, CS_ERR_PARSE, name, 0, "empty table (no header line)");
    else if (rc == 0 && (t = calloc(1, sizeof(*t))) == NULL)
        rc = CS_ERR_NOMEM;
    if (t != NULL) {
        *t = (struct cs_table){.ncols = c->ncols,
                               .cols = c->header,
                               .nrows = c->nrows,
                               .cap_rows = c->nrows,
                               .cells = c->cells,
                               .lines = c->lines};
        c->header = c->cells = NULL;
        c->lines = NULL;
        c->ncols = c->nrows = 0;
        *out = t;
    }
    cs_csv_free(c);
    return rc;
}

int cs_table_parse(const char *text, size_t len, const char *name, struct cs_table **out,
                   struct cs_error *err)
{
    struct cs_csv *c = NULL;
    int rc = cs_csv_parse(text, len, name, 0, &c, err);

    return from_csv(rc, c, name, out, err);
}

int cs_table_read(const char *path, struct cs_table **out, struct cs_error *err)
{
    struct cs_csv *c = NULL;
    int rc = cs_csv_read_file(path, 0, &c, err);

    return from_csv(rc, c, path, out, err);
}

int cs_table_find_col(const struct cs_table *t, const char *name)
{
    return cs_name_index(t->cols, t->ncols, name);
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

static void write_row(FILE *fp, char *const *fields, int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', fp);
        cs_table_write_field(fp, fields[i]);
    }
    fputc('\n', fp);
}

int cs_table_write(const struct cs_table *t, FILE *fp)
{
    write_row(fp, t->cols, t->ncols);
    for (long r = 0; r < t->nrows; r++)
        write_row(fp, &t->cells[r * t->ncols], t->ncols);
    return ferror(fp) ? CS_ERR_IO : 0;
}
