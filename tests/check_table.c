/* check_table.c: CSV tables: quoting, line numbers of bad rows, writing back. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "table.h"

static struct cs_table *parse_ok(const char *text)
{
    struct cs_table *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_table_parse(text, strlen(text), "t.csv", &t, &err) == 0, "%d: %s", err.line,
                  err.msg);
    return t;
}

static void parse_bad(const char *text, int line, const char *what)
{
    struct cs_table *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_ne(cs_table_parse(text, strlen(text), "t.csv", &t, &err), 0);
    ck_assert_ptr_null(t);
    ck_assert_msg(err.line == line, "line %d, want %d (%s)", err.line, line, err.msg);
    ck_assert_msg(strstr(err.msg, what) != NULL, "'%s' lacks '%s'", err.msg, what);
}

START_TEST(basic)
{
    struct cs_table *t = parse_ok("a,b,c\r\n1,2,3\n\n4,\"x,\"\"y\"\"\",\n");

    ck_assert_int_eq(t->ncols, 3);
    ck_assert_int_eq(t->nrows, 2);
    ck_assert_int_eq(cs_table_find_col(t, "c"), 2);
    ck_assert_int_eq(cs_table_find_col(t, "d"), -1);
    ck_assert_str_eq(cs_table_get(t, 0, 2), "3");
    ck_assert_str_eq(cs_table_get(t, 1, 1), "x,\"y\"");
    ck_assert_str_eq(cs_table_get(t, 1, 2), "");
    ck_assert_int_eq(t->lines[1], 4);
    cs_table_free(t);
}
END_TEST

START_TEST(round_trip)
{
    const char *text = "p,name\n0,\"a,b\"\n1,\"q\"\"\"\n2,plain\n";
    struct cs_table *t = parse_ok(text);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);

    ck_assert_int_eq(cs_table_write(t, fp), 0);
    fclose(fp);
    ck_assert_str_eq(buf, text);
    free(buf);
    cs_table_free(t);
}
END_TEST

START_TEST(build)
{
    const char *cols[] = {"x", "y"};
    const char *r[] = {"1", "2"};
    struct cs_table *t = cs_table_new(2, cols);

    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(cs_table_add_row(t, r, 7), 0);
    ck_assert_int_eq(t->nrows, 1);
    ck_assert_str_eq(cs_table_get(t, 0, 1), "2");
    cs_table_free(t);
    cs_table_free(NULL);
}
END_TEST

START_TEST(bad)
{
    parse_bad("", 0, "empty");
    parse_bad("a,b\n1,2\n3\n", 3, "1 fields, the header has 2");
    parse_bad("a,b\n1,2,3\n", 2, "3 fields");
    parse_bad("a,b\n1,\"2\n", 2, "unterminated");
    parse_bad("a,b\n1,\"2\"x\n", 2, "after a closing quote");
    parse_bad("a,b\n1,2\"\n", 2, "quote inside");
    {
        struct cs_table *t = NULL;
        struct cs_error err;

        cs_error_init(&err);
        ck_assert_int_eq(cs_table_read("/nonexistent/x.csv", &t, &err), CS_ERR_IO);
        ck_assert_int_ne(cs_table_parse("a\0b\n", 4, "t.csv", &t, &err), 0);
    }
}
END_TEST

/* Tables have no comment lines: a leading `#` is part of a field, and a BOM is not. */
START_TEST(hash_is_data)
{
    struct cs_table *t = parse_ok("\xef\xbb\xbf#a,b\n#1,2\n");

    ck_assert_int_eq(cs_table_find_col(t, "#a"), 0);
    ck_assert_int_eq(t->nrows, 1);
    ck_assert_str_eq(cs_table_get(t, 0, 0), "#1");
    ck_assert_int_eq(t->lines[0], 2);
    cs_table_free(t);
    parse_bad("a,b\n1,2\n# note\n", 3, "1 fields, the header has 2");
}
END_TEST

/* Rows added after a parse grow the parsed arrays. */
START_TEST(add_after_parse)
{
    struct cs_table *t = parse_ok("x,y\n");
    const char *r[] = {"1", "2"};

    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(cs_table_add_row(t, r, i), 0);
    ck_assert_int_eq(t->nrows, 100);
    ck_assert_str_eq(cs_table_get(t, 99, 1), "2");
    ck_assert_int_eq(t->lines[99], 99);
    cs_table_free(t);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {basic, 1},        {round_trip, 1},      {build, 1}, {bad, 1},
        {hash_is_data, 1}, {add_after_parse, 1}, {NULL, 0},
    };

    return test_run("table", 0, tests, NULL);
}
