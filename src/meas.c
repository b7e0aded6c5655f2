/* meas.c: measurement tables of the shared schema: collectives, ring steps, rows. */
#include "meas.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "parse.h"

/* Every spelling taken: collsim's (each collective's first, its name) and nccl-tests'
 * (all_reduce_perf). */
static const struct {
    const char *name;
    enum cs_meas_coll coll;
} spellings[] = {
    {"allreduce", CS_MEAS_ALLREDUCE},         {"all_reduce", CS_MEAS_ALLREDUCE},
    {"allgather", CS_MEAS_ALLGATHER},         {"all_gather", CS_MEAS_ALLGATHER},
    {"reducescatter", CS_MEAS_REDUCESCATTER}, {"reduce_scatter", CS_MEAS_REDUCESCATTER},
    {"sendrecv", CS_MEAS_SENDRECV},
};

enum cs_meas_coll cs_meas_coll_parse(const char *s)
{
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
        if (strcmp(s, spellings[i].name) == 0)
            return spellings[i].coll;
    return 0;
}

const char *cs_meas_coll_name(enum cs_meas_coll c)
{
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++)
        if (spellings[i].coll == c)
            return spellings[i].name;
    return NULL;
}

int cs_meas_ring_steps(enum cs_meas_coll c, int n)
{
    switch (c) {
    case CS_MEAS_ALLREDUCE:
        return 2 * (n - 1);
    case CS_MEAS_ALLGATHER:
    case CS_MEAS_REDUCESCATTER:
        return n - 1;
    case CS_MEAS_SENDRECV:
        return 1;
    }
    return 0;
}

int cs_meas_read_bytes(const struct cs_csv *t, int row, int col, double *out, struct cs_error *err)
{
    double v;
    int rc = cs_csv_get_double(t, row, col, &v, err);

    if (rc != 0)
        return rc;
    if (v != floor(v) || v < 0 || v > CS_MEAS_MAX_SIZE)
        return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[row],
                             "%s '%s' is not a whole number of bytes (0 to 1 PiB)", t->header[col],
                             cs_csv_cell(t, row, col));
    *out = v;
    return 0;
}

int cs_meas_parse_range(const char *s, double *lo, double *hi)
{
    const char *colon = strchr(s, ':');
    char min[64];
    long long a = 0, b = 0;

    if (colon == NULL || colon - s >= (long)sizeof(min))
        return CS_ERR_PARSE;
    snprintf(min, sizeof(min), "%.*s", (int)(colon - s), s);
    if ((min[0] && cs_parse_size(min, 0, (long long)CS_MEAS_MAX_SIZE, &a) != 0) ||
        (colon[1] && cs_parse_size(colon + 1, 0, (long long)CS_MEAS_MAX_SIZE, &b) != 0) ||
        (colon[1] && a > b))
        return CS_ERR_PARSE;
    *lo = (double)a;
    *hi = colon[1] ? (double)b : INFINITY;
    return 0;
}

int cs_meas_infer_ranks(const struct cs_csv *t, enum cs_meas_coll c)
{
    int cs = cs_csv_col_find(t, "size_bytes"), ca = cs_csv_col_find(t, "algbw_GBps"),
        cb = cs_csv_col_find(t, "busbw_GBps");
    double best = -1, ratio = 0, n;

    for (int r = 0; r < t->nrows; r++) {
        double s, a, b;

        if (cs_csv_get_double(t, r, cs, &s, NULL) == 0 &&
            cs_csv_get_double(t, r, ca, &a, NULL) == 0 &&
            cs_csv_get_double(t, r, cb, &b, NULL) == 0 && a > 1 && b > 0 && s > best) {
            best = s;
            ratio = b / a;
        }
    }
    if (best < 0)
        return 0;
    if (c == CS_MEAS_ALLREDUCE)
        n = ratio < 2 ? 2 / (2 - ratio) : 0; /* ratio = 2(n-1)/n */
    else if (c == CS_MEAS_ALLGATHER || c == CS_MEAS_REDUCESCATTER)
        n = ratio < 1 ? 1 / (1 - ratio) : 0; /* ratio = (n-1)/n */
    else
        return 2;
    if (n < 1.5 || fabs(n - round(n)) > 0.15)
        return 0;
    return (int)round(n);
}

/* Columns of a measurement table; -1 when absent. */
struct cols {
    int size, time, busbw, ngpus, placement, algbw;
};

/* Row r's size, or its GPU count in a table of time against GPU count. */
static int row_size(const struct cs_csv *t, const struct cols *c, int r, struct cs_meas_row *out,
                    struct cs_error *err)
{
    double g;
    int rc = cs_meas_read_bytes(t, r, c->size, &out->size_bytes, err);

    if (rc <= 0)
        return rc;
    if (c->ngpus < 0)
        return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r], "empty size_bytes");
    if (cs_csv_get_double(t, r, c->ngpus, &g, NULL) != 0 || g < 2 || g != floor(g) || g > 1e6)
        return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                             "n_gpus '%s' is not a count >= 2", cs_csv_cell(t, r, c->ngpus));
    out->size_bytes = 0;
    out->ngpus = (int)g;
    return 0;
}

/* Row r's time in us, from time_us or else from busbw (nccl-tests: busbw = S/t * nsteps/n). */
static int row_time(const struct cs_csv *t, const struct cols *c, int r, double size, int nsteps,
                    int ranks, double *us, int *derived, struct cs_error *err)
{
    double bus;
    int rc = cs_csv_get_double(t, r, c->time, us, err);

    if (rc <= 0)
        return rc;
    rc = cs_csv_get_double(t, r, c->busbw, &bus, err);
    if (rc < 0)
        return rc;
    if (rc == 1 || bus <= 0 || ranks < 2)
        return cs_error_fail(
            err, CS_ERR_INVALID, t->name, t->lines[r],
            "no time_us, and no positive busbw_GBps with a rank count to derive it from");
    *us = size * nsteps / ranks / (bus * 1e9) * 1e6;
    *derived = 1;
    return 0;
}

/* Row r's time against its algbw, where it has both (nccl-tests prints algbw = S / t in GB/s, to
 * two decimals): 0, or CS_ERR_INVALID when they disagree by more than 10% and the rounding, the
 * mark of a time that is not in microseconds (a table converted from ms or s) or of a column
 * that holds something else. An algbw of 0 (what a table that does not give it may hold) is not
 * checked. */
static int row_algbw(const struct cs_csv *t, const struct cols *c, int r, double size, double us,
                     struct cs_error *err)
{
    double alg, own;

    if (c->algbw < 0 || size <= 0 || !(us > 0) || cs_csv_get_double(t, r, c->algbw, &alg, NULL))
        return 0;
    own = size / us * 1e-3;
    if (!(alg > 0) || fabs(own - alg) <= 0.0051 + 0.1 * alg)
        return 0;
    return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                         "size %g B in %g us is %.3g GB/s, but algbw_GBps says %g: time_us must be "
                         "the time in microseconds (nccl-tests: algbw = size / time)",
                         size, us, own, alg);
}

int cs_meas_read_rows(const struct cs_csv *t, int nsteps, int ranks, struct cs_meas_row **rows,
                      int *n, int *derived, struct cs_error *err)
{
    struct cols c = {cs_csv_col_find(t, "size_bytes"), cs_csv_col_find(t, "time_us"),
                     cs_csv_col_find(t, "busbw_GBps"), cs_csv_col_find(t, "n_gpus"),
                     cs_csv_col_find(t, "placement"),  cs_csv_col_find(t, "algbw_GBps")};
    struct cs_meas_row *v;
    int any = 0, rc = 0;

    if (c.size < 0 || c.time < 0)
        return cs_error_fail(err, CS_ERR_PARSE, t->name, 1,
                             "not a measurement table (size_bytes, time_us columns)");
    if ((v = calloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*v))) == NULL)
        return CS_ERR_NOMEM;
    for (int r = 0; r < t->nrows && rc == 0; r++) {
        double us = 0;
        int der = 0;

        v[r].line = t->lines[r];
        rc = row_size(t, &c, r, &v[r], err);
        if (rc == 0)
            rc = row_time(t, &c, r, v[r].size_bytes, nsteps, ranks, &us, &der, err);
        any |= der;
        if (rc == 0 && ((v[r].ngpus == 0 && v[r].size_bytes <= 0) || us <= 0))
            rc = cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                               "size %g B, time %g us: both must be positive", v[r].size_bytes, us);
        if (rc == 0 && !der)
            rc = row_algbw(t, &c, r, v[r].size_bytes, us, err);
        v[r].time_s = us * 1e-6;
        if (c.placement >= 0) {
            const char *pl = cs_csv_cell(t, r, c.placement);

            v[r].placement = strcmp(pl, "out_of_place") == 0 ? CS_MEAS_OUT_OF_PLACE
                             : strcmp(pl, "in_place") == 0   ? CS_MEAS_IN_PLACE
                                                             : 0;
        }
    }
    if (rc != 0) {
        free(v);
        return rc;
    }
    *rows = v;
    *n = t->nrows;
    if (derived != NULL)
        *derived = any;
    return 0;
}

/* ---- raw nccl-tests output ---------------------------------------------------------------- */

#define NT_MAX_FIELDS 32

/* Split a line (len bytes, no newline) at blanks into at most NT_MAX_FIELDS fields of buf
 * (NUL-terminated copies); the field count. */
static int split_blank(const char *line, size_t len, char *buf, size_t cap, char **f)
{
    int n = 0;
    size_t k = 0;

    for (size_t i = 0; i < len && n < NT_MAX_FIELDS;) {
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            i++;
        if (i == len || k + 1 >= cap)
            break;
        f[n++] = buf + k;
        while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && k + 1 < cap)
            buf[k++] = line[i++];
        buf[k++] = '\0';
    }
    return n;
}

/* The column layout of an nccl-tests header: "# size count type [redop] [root] time algbw busbw
 * #wrong|error time algbw busbw #wrong|error" (nccl-tests before 2.10 print `error`, the largest
 * deviation, and only the redop and root columns the collective has; later ones `#wrong`, the
 * count of wrong elements, and always both): the size field, the first field of each placement,
 * the type and redop fields (-1 when absent), and whether the check column is `error`. */
struct nt_layout {
    int nfields, size, place[2], type, redop, error;
};

static int nt_header(const char *line, size_t len, struct nt_layout *lay)
{
    char buf[512], *f[NT_MAX_FIELDS];
    int n, np = 0;

    if (len == 0 || line[0] != '#')
        return 0;
    n = split_blank(line + 1, len - 1, buf, sizeof(buf), f);
    lay->size = lay->type = lay->redop = -1;
    lay->error = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(f[i], "size") == 0)
            lay->size = i;
        else if (strcmp(f[i], "type") == 0)
            lay->type = i;
        else if (strcmp(f[i], "redop") == 0)
            lay->redop = i;
        else if (strcmp(f[i], "time") == 0 && np < 2 && i + 2 < n &&
                 strcmp(f[i + 1], "algbw") == 0 && strcmp(f[i + 2], "busbw") == 0) {
            lay->place[np++] = i;
            lay->error |= i + 3 < n && strcmp(f[i + 3], "error") == 0;
        }
    }
    lay->nfields = n;
    return lay->size == 0 && np == 2;
}

size_t cs_meas_line_body(const char *line, size_t len)
{
    static const char *const streams[] = {"<stdout>:", "<stderr>:", "<stddiag>:"};
    size_t i = 0, d;

    /* Open MPI's --tag-output: [JOB,RANK]<stdout>: */
    if (len > 0 && line[0] == '[') {
        for (i = 1; i < len && ((line[i] >= '0' && line[i] <= '9') || line[i] == ','); i++)
            ;
        if (i < len && line[i] == ']' && i > 1)
            for (size_t k = 0; k < sizeof(streams) / sizeof(streams[0]); k++) {
                size_t n = strlen(streams[k]);

                if (len - i - 1 >= n && memcmp(line + i + 1, streams[k], n) == 0)
                    return i + 1 + n;
            }
        return 0;
    }
    /* srun --label: RANK: */
    for (d = 0; d < len && line[d] >= '0' && line[d] <= '9'; d++)
        ;
    if (d > 0 && d + 1 < len && line[d] == ':' && line[d + 1] == ' ')
        return d + 2;
    return 0;
}

/* Whether s is a whole decimal number of bytes (a row's first field). */
static int all_digits(const char *s)
{
    for (const char *c = s; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    return *s != '\0';
}

/* A placement's check field: `#wrong` must be 0 (or N/A: not checked); `error`, the largest
 * deviation, a number, which nccl-tests itself judges per type in its "Out of bounds values"
 * line (nt_trailer). 0, or CS_ERR_PARSE at name:line. */
static int nt_check(const struct nt_layout *lay, const char *v, const char *place, const char *name,
                    int line, struct cs_error *err)
{
    char *end;

    if (strcmp(v, "N/A") == 0 || (!lay->error && strcmp(v, "0") == 0))
        return 0;
    if (lay->error && (strtod(v, &end), end != v && *end == '\0'))
        return 0;
    if (lay->error)
        return cs_error_fail(err, CS_ERR_PARSE, name, line,
                             "nccl-tests error column (%s) is '%s', not a number", place, v);
    return cs_error_fail(err, CS_ERR_PARSE, name, line,
                         "nccl-tests reports %s wrong values (%s): not a measurement", v, place);
}

/* "# Out of bounds values : N OK|FAILED": CS_ERR_PARSE at name:line unless N is 0; 0 for
 * other lines. */
static int nt_trailer(char **f, int n, const char *name, int line, struct cs_error *err)
{
    if (n < 6 || strcmp(f[0], "#") != 0 || strcmp(f[1], "Out") != 0 || strcmp(f[3], "bounds") != 0)
        return 0;
    if (strcmp(f[5], ":") == 0 && n >= 7 && strcmp(f[6], "0") == 0)
        return 0;
    return cs_error_fail(err, CS_ERR_PARSE, name, line,
                         "nccl-tests reports out of bounds values (%s): not a measurement",
                         n >= 7 ? f[6] : "?");
}

/* The first row's type and redop ("float sum"), into first; CS_ERR_PARSE at name:line when a
 * later row has others (nccl-tests -d all or -o all): one table is one type and operation. */
static int nt_same_kind(const struct nt_layout *lay, char **f, char *first, size_t len,
                        const char *name, int line, struct cs_error *err)
{
    char kind[128];

    snprintf(kind, sizeof(kind), "%s %s", lay->type >= 0 ? f[lay->type] : "-",
             lay->redop >= 0 ? f[lay->redop] : "-");
    if (first[0] == '\0')
        snprintf(first, len, "%s", kind);
    else if (strcmp(first, kind) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, line,
                             "nccl-tests rows of type and redop '%s' after '%s' (-d all or "
                             "-o all): keep the rows of one in a file of their own",
                             kind, first);
    return 0;
}

/* A field of an nccl-tests row as it may reach the schema's CSV: a number or N/A, letters,
 * digits and . + - / only (a quote, comma or control byte would change the rows the CSV reader
 * sees). */
static int nt_plain(const char *v)
{
    for (; *v; v++)
        if (!isalnum((unsigned char)*v) && !strchr(".+-/", *v))
            return 0;
    return 1;
}

/* One row's placements as schema rows on fp, their line appended to *lines (a placement whose
 * time is N/A, not measured, is left out). 0, or a CS_ERR_*. */
static int nt_row(const struct nt_layout *lay, char **f, int line, FILE *fp, int **lines,
                  int *nrows, const char *name, struct cs_error *err)
{
    static const char *const place[] = {"out_of_place", "in_place"};
    int rc = 0;

    for (int p = 0; p < 2 && rc == 0; p++) {
        const char *check = lay->place[p] + 3 < lay->nfields ? f[lay->place[p] + 3] : "0";
        int *grown;

        for (int k = 0; k < 3 && rc == 0; k++)
            if (!nt_plain(f[k == 0 ? lay->size : lay->place[p] + k - 1]))
                rc = cs_error_fail(err, CS_ERR_PARSE, name, line,
                                   "nccl-tests field '%.40s' (%s) is not a number",
                                   f[k == 0 ? lay->size : lay->place[p] + k - 1], place[p]);
        if (rc != 0 || (rc = nt_check(lay, check, place[p], name, line, err)) != 0 ||
            strcmp(f[lay->place[p]], "N/A") == 0)
            continue;
        fprintf(fp, "%s,%s,%s,%s,%s\n", f[lay->size], f[lay->place[p]], f[lay->place[p] + 1],
                f[lay->place[p] + 2], place[p]);
        if ((grown = realloc(*lines, (size_t)(*nrows + 1) * sizeof(**lines))) == NULL)
            return CS_ERR_NOMEM;
        (*lines = grown)[(*nrows)++] = line;
    }
    return rc;
}

/* Rows of raw nccl-tests output as the shared schema, one per placement, each remembering its
 * line in the original; CS_ERR_PARSE at file:line for a row that does not fit the header,
 * reports wrong values, or is of another type or operation than the first. */
static int nt_convert(const char *text, size_t len, const char *name, const struct nt_layout *lay,
                      size_t start, struct cs_csv **out, struct cs_error *err)
{
    char *csv = NULL, buf[1024], *f[NT_MAX_FIELDS], kind[128] = "";
    size_t clen = 0;
    FILE *fp = open_memstream(&csv, &clen);
    int *lines = NULL, nrows = 0, line = 1, rc = 0;

    if (fp == NULL)
        return CS_ERR_NOMEM;
    fputs("size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n", fp);
    for (size_t i = 0; i < start; i++)
        line += text[i] == '\n';
    for (size_t i = start; i < len && rc == 0; line++) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
        size_t b = cs_meas_line_body(text + i, l);
        int n = split_blank(text + i + b, l - b, buf, sizeof(buf), f);

        i += l + 1;
        /* Comments, blank lines and what NCCL logs between rows (host names that start with a
         * digit included) are not rows. */
        if (n == 0 || !all_digits(f[0])) {
            rc = nt_trailer(f, n, name, line, err);
            continue;
        }
        if (n != lay->nfields)
            rc = cs_error_fail(err, CS_ERR_PARSE, name, line,
                               "an nccl-tests row of %d fields under a header of %d", n,
                               lay->nfields);
        else if ((rc = nt_same_kind(lay, f, kind, sizeof(kind), name, line, err)) == 0)
            rc = nt_row(lay, f, line, fp, &lines, &nrows, name, err);
    }
    if (fclose(fp) != 0 && rc == 0)
        rc = CS_ERR_NOMEM;
    if (rc == 0 && (rc = cs_csv_read_mem(csv, clen, name, out, err)) == 0 && nrows > 0) {
        /* Every field was a plain token (nt_plain), so the table has exactly these rows. */
        if ((*out)->nrows != nrows) {
            int got = (*out)->nrows;

            cs_csv_free(*out);
            *out = NULL;
            rc = cs_error_fail(err, CS_ERR_PARSE, name, 0,
                               "nccl-tests rows: %d converted, %d read back", nrows, got);
        } else {
            memcpy((*out)->lines, lines, (size_t)nrows * sizeof(*lines));
        }
    }
    free(csv);
    free(lines);
    return rc;
}

int cs_meas_read_raw(const char *text, size_t len, const char *name, struct cs_csv **out,
                     struct cs_error *err)
{
    size_t i = 0;

    /* nccl-tests output: a `#` header naming size ... time algbw busbw twice (NCCL's log may come
     * before it); its rows follow it. */
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
        size_t b = cs_meas_line_body(text + i, l);
        struct nt_layout lay;

        if (nt_header(text + i + b, l - b, &lay))
            return nt_convert(text, len, name, &lay, i + l, out, err);
        i += l + 1;
    }
    return 1;
}

int cs_meas_read(const char *path, struct cs_csv **out, struct cs_error *err)
{
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    char *text;
    size_t len;
    int rc = cs_file_read(path, CS_CSV_MAX_BYTES, &text, &len, err);

    if (rc != 0)
        return rc == CS_ERR_INVALID ? CS_ERR_IO : rc;
    if ((rc = cs_meas_read_raw(text, len, name, out, err)) == 1)
        rc = cs_csv_read_mem(text, len, name, out, err);
    free(text);
    return rc;
}

/* The first nonzero value of of(line) over the `#` lines of the file at path (each cut to 511
 * bytes), 0 when none or the file cannot be read. */
static int header_value(const char *path, int (*of)(const char *line))
{
    char *text;
    size_t len;
    int v = 0;

    if (cs_file_read(path, CS_CSV_MAX_BYTES, &text, &len, NULL) != 0)
        return 0;
    for (size_t i = 0; i < len && v == 0;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
        char line[512];

        snprintf(line, sizeof(line), "%.*s", (int)(l < 511 ? l : 511), text + i);
        if (line[0] == '#')
            v = of(line);
        i += l + 1;
    }
    free(text);
    return v;
}

/* nccl-tests' header: "# nThread 1 nGpus 8 minBytes ..." */
static int gpus_of(const char *line)
{
    const char *at = strstr(line, " nGpus ");
    int g;

    if (strstr(line, "nThread") == NULL || at == NULL)
        return 0;
    g = atoi(at + 7);
    return g >= 1 && g <= 1024 ? g : 0;
}

int cs_meas_gpus_per_thread(const char *path)
{
    return header_value(path, gpus_of);
}

/* nccl-tests' header: "# nccl-tests version 2.13.9 nccl-headers=21805 nccl-library=21805" */
static int library_of(const char *line)
{
    const char *at = strstr(line, "nccl-library=");
    long v;

    if (strstr(line, "nccl-tests version") == NULL || at == NULL)
        return 0;
    v = strtol(at + 13, NULL, 10);
    /* NCCL_VERSION_CODE: X * 10000 + Y * 100 + Z from 2.9, X * 1000 + Y * 100 + Z before */
    if (v >= 20900 && v < 100000)
        return (int)v;
    if (v >= 2000 && v < 2900)
        return (int)(v / 1000 * 10000 + v % 1000 / 100 * 100 + v % 100);
    return 0;
}

int cs_meas_nccl_library(const char *path)
{
    return header_value(path, library_of);
}
