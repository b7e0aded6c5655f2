/* check_csv.c: the CSV reader: quoting, comments, line numbers, errors, the shared tables. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "runner.h"
#include "testutil.h"

static struct cs_csv *parse(const char *text, struct cs_error *err, int *rc)
{
    struct cs_csv *t = NULL;

    cs_error_init(err);
    *rc = cs_csv_read_mem(text, strlen(text), "mem.csv", &t, err);
    return t;
}

START_TEST(test_basic)
{
    struct cs_error err;
    int rc;
    struct cs_csv *t = parse("# calib_format=1 host=x\n"
                             "#  device=0 name=\"A\"\r\n"
                             "a,b,c\r\n"
                             "1,2,3\r\n"
                             "\n"
                             "# a comment between rows\n"
                             "4,,\"x,\"\"y\"\"\nz\"\n"
                             "7,8,9",
                             &err, &rc);
    double v = -1;

    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_int_eq(t->ncols, 3);
    ck_assert_int_eq(t->nrows, 3);
    ck_assert_int_eq(t->ncomments, 2);
    ck_assert_str_eq(t->comments[0], "calib_format=1 host=x");
    ck_assert_str_eq(t->comments[1], "device=0 name=\"A\"");
    ck_assert_int_eq(cs_csv_col_find(t, "b"), 1);
    ck_assert_int_eq(cs_csv_col_find(t, "d"), -1);
    ck_assert_str_eq(cs_csv_cell(t, 0, 2), "3");
    ck_assert_str_eq(cs_csv_cell(t, 1, 2), "x,\"y\"\nz");
    ck_assert_int_eq(t->lines[0], 4);
    ck_assert_int_eq(t->lines[1], 7);
    ck_assert_int_eq(t->lines[2], 9);
    ck_assert_int_eq(cs_csv_get_double(t, 0, 1, &v, &err), 0);
    ck_assert(v == 2.0);
    ck_assert_int_eq(cs_csv_get_double(t, 1, 1, &v, &err), 1);  /* empty */
    ck_assert_int_eq(cs_csv_get_double(t, 1, -1, &v, &err), 1); /* absent column */
    ck_assert_int_eq(cs_csv_get_double(t, 1, 2, &v, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 7);
    ck_assert_msg(strstr(err.msg, "column c") != NULL, "%s", err.msg);
    cs_csv_free(t);
    cs_csv_free(NULL);
}
END_TEST

START_TEST(test_numbers)
{
    struct cs_error err;
    int rc;
    struct cs_csv *t =
        parse("x\n 1.5e-6 \nnan\ninf\n1e999\n12abc\n1e-308\n\t-4e-400 \n1 2\n", &err, &rc);
    double v;

    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(cs_csv_get_double(t, 0, 0, &v, &err), 0);
    ck_assert(v == 1.5e-6);
    for (int r = 1; r < 5; r++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_csv_get_double(t, r, 0, &v, &err), CS_ERR_PARSE);
        ck_assert_int_eq(err.line, r + 2);
    }
    /* values that underflow (subnormal, or to zero) are numbers */
    ck_assert_int_eq(cs_csv_get_double(t, 5, 0, &v, &err), 0);
    ck_assert(v > 0 && v < 1.1e-308);
    ck_assert_int_eq(cs_csv_get_double(t, 6, 0, &v, &err), 0);
    ck_assert(v == 0);
    cs_error_init(&err);
    ck_assert_int_eq(cs_csv_get_double(t, 7, 0, &v, &err), CS_ERR_PARSE);
    ck_assert_str_eq(err.msg, "column x: '1 2' is not a finite number");
    cs_csv_free(t);
}
END_TEST

/* Each bad input names its error and the line. */
START_TEST(test_errors)
{
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } cases[] = {
        {"", 1, "no header row"},
        {"# only comments\n\n", 3, "no header row"},
        {"a,b\n1,2\n1,2,3\n", 3, "3 fields, the header has 2"},
        {"a,b\n1\n", 2, "1 fields"},
        {"a,b\n1,\"2\n3\n", 2, "unterminated quoted field"},
        {"a,b\n1,\"2\"x\n", 2, "text after a closing quote"},
        {"a,b\n1,2\"\n", 2, "quote inside an unquoted field"},
        {"a,,c\n", 1, "empty column name"},
        {"a,b,a\n", 1, "duplicate column name 'a'"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_error err;
        int rc;
        struct cs_csv *t = parse(cases[i].text, &err, &rc);

        ck_assert_msg(rc == CS_ERR_PARSE && t == NULL, "case %zu: rc %d", i, rc);
        ck_assert_msg(err.line == cases[i].line, "case %zu: line %d", i, err.line);
        ck_assert_msg(strstr(err.msg, cases[i].msg) != NULL, "case %zu: %s", i, err.msg);
        ck_assert_str_eq(err.file, "mem.csv");
    }
}
END_TEST

START_TEST(test_nul_and_io)
{
    static const char text[] = "a,b\n1,2\0\n";
    struct cs_csv *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_csv_read_mem(text, sizeof(text) - 1, "nul.csv", &t, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 2);
    cs_error_init(&err);
    ck_assert_int_eq(cs_csv_read("/nonexistent/x.csv", &t, &err), CS_ERR_IO);
    ck_assert_ptr_null(t);
}
END_TEST

/* Without CS_CSV_COMMENTS a `#` line is a row, and a missing header is an empty table. */
START_TEST(test_parse_flags)
{
    struct cs_csv *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_csv_parse("# a\n#1\n", 7, "f.csv", 0, &t, &err), 0);
    ck_assert_int_eq(t->ncols, 1);
    ck_assert_str_eq(t->header[0], "# a");
    ck_assert_int_eq(t->nrows, 1);
    ck_assert_int_eq(t->ncomments, 0);
    cs_csv_free(t);
    ck_assert_int_eq(cs_csv_parse("\n\n", 2, "f.csv", CS_CSV_COMMENTS, &t, &err), 0);
    ck_assert_int_eq(t->ncols, 0);
    ck_assert_int_eq(t->nrows, 0);
    ck_assert_int_eq(t->end_line, 3);
    cs_csv_free(t);
    ck_assert_int_eq(cs_csv_parse("a\n1\n2,3\n", 8, "f.csv", 0, &t, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 3);
}
END_TEST

/* A UTF-8 byte order mark at the start (as spreadsheets write) is not part of the first name or
 * comment, and lines count as without it; elsewhere it is text. */
START_TEST(test_byte_order_mark)
{
    struct cs_error err;
    int rc;
    struct cs_csv *t = parse("\xef\xbb\xbf# meta\nsize_bytes,time_us\n1024,2\n", &err, &rc);

    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(t->ncomments, 1);
    ck_assert_str_eq(t->comments[0], "meta");
    ck_assert_int_eq(cs_csv_col_find(t, "size_bytes"), 0);
    ck_assert_int_eq(t->lines[0], 3);
    cs_csv_free(t);
    t = parse("\xef\xbb\xbfsize_bytes,time_us\n1024,2\n", &err, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(cs_csv_col_find(t, "size_bytes"), 0);
    cs_csv_free(t);
    t = parse("a,b\n\xef\xbb\xbf"
              "1,2\n",
              &err, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(cs_csv_cell(t, 0, 0), "\xef\xbb\xbf"
                                           "1");
    cs_csv_free(t);
}
END_TEST

/* Every shared measurement table parses, with the common columns. */
START_TEST(test_shared_measurements)
{
    const char *shared = test_shared_data();
    char dir[4200], path[8400];
    DIR *d;
    struct dirent *e;
    int seen = 0;

    ck_assert_ptr_nonnull(shared);
    snprintf(dir, sizeof(dir), "%s/measurements", shared);
    d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        struct cs_csv *t = NULL;
        struct cs_error err;

        if (l < 5 || strcmp(e->d_name + l - 4, ".csv") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        cs_error_init(&err);
        ck_assert_msg(cs_csv_read(path, &t, &err) == 0, "%s:%d: %s", err.file, err.line, err.msg);
        ck_assert(t->nrows > 0);
        ck_assert_int_eq(cs_csv_col_find(t, "size_bytes"), 0);
        ck_assert_int_eq(cs_csv_col_find(t, "time_us"), 1);
        ck_assert(cs_csv_col_find(t, "placement") >= 0);
        cs_csv_free(t);
        seen++;
    }
    closedir(d);
    ck_assert_int_ge(seen, 9);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_basic, 1},       {test_numbers, 1},         {test_errors, 1}, {test_nul_and_io, 1},
        {test_parse_flags, 1}, {test_byte_order_mark, 1}, {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_shared_measurements, 1},
        {NULL, 0},
    };

    return test_run("csv", 0, tests, shared);
}
