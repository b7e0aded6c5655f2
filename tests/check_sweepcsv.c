/* check_sweepcsv.c: sweep CSV headers, point files, and joining files by point. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "runner.h"
#include "sweepcsv.h"

#define HDR "point,protocol," CS_REPORT_CSV_HEADER "\n"
#define ROW(p, proto, size, status)                                                                \
#p "," proto "," #size ",256,float,1.0,1.0,1.0," status "," #size "\n"

static struct cs_table *table(const char *text)
{
    struct cs_table *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_table_parse(text, strlen(text), "t.csv", &t, &err) == 0, "%s", err.msg);
    return t;
}

START_TEST(header)
{
    struct cs_table *t = table(HDR);

    ck_assert_int_eq(cs_sweepcsv_check(t), 0);
    cs_table_free(t);
    t = table("point," CS_REPORT_CSV_HEADER "\n");
    ck_assert_int_eq(cs_sweepcsv_check(t), 0);
    cs_table_free(t);
    t = table(CS_REPORT_CSV_HEADER "\n"); /* a predict CSV: no point column */
    ck_assert_int_eq(cs_sweepcsv_check(t), CS_ERR_PARSE);
    cs_table_free(t);
    t = table("point,protocol,size_bytes,count,type,time_us,algbw_GBps,busbw_GBps\n");
    ck_assert_int_eq(cs_sweepcsv_check(t), CS_ERR_PARSE);
    cs_table_free(t);
}
END_TEST

/* A point file holds its point: the sweep's keys, its number and values in every row. */
START_TEST(point_file)
{
    struct cs_sweep *sw = NULL;
    struct cs_table *t;

    ck_assert_int_eq(cs_sweep_parse("schedule = s.xml\nplatform = p.xml\nprotocol = LL Simple\n"
                                    "sizes = 1K\n",
                                    "t.sweep", "/d", &sw, NULL),
                     0);
    t = table("point,schedule,platform,protocol," CS_REPORT_CSV_HEADER "\n"
              "1,s.xml,p.xml,Simple,1024,256,float,1.0,1.0,1.0,ok,1024\n");
    ck_assert_int_eq(cs_sweepcsv_check_point(sw, 1, t), 0);
    ck_assert_int_eq(cs_sweepcsv_check_point(sw, 0, t), CS_ERR_INVALID);
    ck_assert_int_eq(cs_sweepcsv_check_point(sw, 2, t), CS_ERR_INVALID);
    cs_table_free(t);
    t = table("point,schedule,platform,protocol," CS_REPORT_CSV_HEADER "\n");
    ck_assert_int_eq(cs_sweepcsv_check_point(sw, 1, t), CS_ERR_INVALID); /* no rows */
    cs_table_free(t);
    t = table("point,protocol," CS_REPORT_CSV_HEADER "\n1,Simple,1024,256,float,1,1,1,ok,1024\n");
    ck_assert_int_eq(cs_sweepcsv_check_point(sw, 1, t), CS_ERR_INVALID); /* other keys */
    cs_table_free(t);
    cs_sweep_free(sw);
}
END_TEST

static int nrepeat;
static long repeat_point;

static void on_repeat(void *ctx, long point, int first, int file)
{
    ck_assert_ptr_null(ctx);
    ck_assert_int_eq(first, 0);
    ck_assert_int_eq(file, 2);
    repeat_point = point;
    nrepeat++;
}

/* Rows ordered by point, each file's rows in order; a repeated point kept once; deadlocks and
 * hangs counted. */
START_TEST(join)
{
    struct cs_table *tabs[3] = {
        table(HDR ROW(2, "LL", 1024, "ok") ROW(0, "LL", 1024, "ok") ROW(0, "LL", 2048, "ok")),
        table(HDR ROW(1, "Simple", 1024, "deadlock") ROW(3, "LL", 1024, "hang")),
        table(HDR ROW(2, "LL", 1024, "ok")),
    };
    const char *names[] = {"a.csv", "b.csv", "c.csv"};
    struct cs_sweepcsv_join info;
    struct cs_table *out = NULL;
    struct cs_error err;

    cs_error_init(&err);
    nrepeat = 0;
    ck_assert_int_eq(cs_sweepcsv_join(tabs, names, 3, on_repeat, NULL, &out, &info, &err), 0);
    ck_assert_int_eq(nrepeat, 1);
    ck_assert_int_eq(repeat_point, 2);
    ck_assert_int_eq(info.npoints, 4);
    ck_assert_int_eq(info.nrows, 6);
    ck_assert_int_eq(info.ndeadlock, 2); /* a hang counts as a deadlock */
    ck_assert_int_eq(info.max_point, 3);
    ck_assert_int_eq(out->nrows, 5);
    ck_assert_int_eq(out->ncols, tabs[0]->ncols);
    ck_assert_str_eq(cs_table_get(out, 0, 0), "0");
    ck_assert_str_eq(cs_table_get(out, 0, 2), "1024");
    ck_assert_str_eq(cs_table_get(out, 1, 2), "2048");
    ck_assert_str_eq(cs_table_get(out, 2, 0), "1");
    ck_assert_str_eq(cs_table_get(out, 3, 0), "2");
    ck_assert_str_eq(cs_table_get(out, 4, 0), "3");
    cs_table_free(out);
    for (int f = 0; f < 3; f++)
        cs_table_free(tabs[f]);
}
END_TEST

/* Join must fail with code and a message holding what (and file:line when given). */
static void join_bad(const char *a, const char *b, int code, const char *file, int line,
                     const char *what)
{
    struct cs_table *tabs[2] = {table(a), table(b)}, *out = NULL;
    const char *names[] = {"a.csv", "b.csv"};
    struct cs_sweepcsv_join info;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_sweepcsv_join(tabs, names, 2, NULL, NULL, &out, &info, &err), code);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(err.file, file);
    ck_assert_int_eq(err.line, line);
    ck_assert_msg(strstr(err.msg, what) != NULL, "'%s' lacks '%s'", err.msg, what);
    cs_table_free(tabs[0]);
    cs_table_free(tabs[1]);
}

START_TEST(join_refused)
{
    join_bad(HDR ROW(0, "LL", 1024, "ok"), HDR ROW(0, "LL", 1024, "deadlock"), CS_ERR_INVALID, "",
             0, "point 0: a.csv and b.csv disagree");
    join_bad(HDR ROW(0, "LL", 1024, "ok"), HDR ROW(0, "LL", 1024, "ok") ROW(0, "LL", 2048, "ok"),
             CS_ERR_INVALID, "", 0, "disagree");
    join_bad(HDR ROW(0, "LL", 1024, "ok"), HDR "\n" ROW(x, "LL", 1024, "ok"), CS_ERR_PARSE, "b.csv",
             3, "bad point number 'x'");
    join_bad(HDR, "point,dtype," CS_REPORT_CSV_HEADER "\n", CS_ERR_PARSE, "b.csv", 0,
             "header differs from a.csv's");
    join_bad(CS_REPORT_CSV_HEADER "\n", HDR, CS_ERR_PARSE, "a.csv", 0, "not a sweep CSV");
}
END_TEST

START_TEST(join_nothing)
{
    struct cs_table *out = NULL;
    struct cs_sweepcsv_join info;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_sweepcsv_join(NULL, NULL, 0, NULL, NULL, &out, &info, &err), CS_ERR_USAGE);
    ck_assert_ptr_null(out);
}
END_TEST

#define SHDR "point,npoints,protocol," CS_REPORT_CSV_HEADER "\n"
#define SROW(p, n, size) #p "," #n ",LL," #size ",256,float,1.0,1.0,1.0,ok," #size "\n"

/* Shards: their npoints column goes to info.total, not to the joined table; shards that disagree
 * on it, or hold a point beyond it, are refused with FILE:LINE. */
START_TEST(join_shards)
{
    struct cs_table *tabs[2] = {table(SHDR SROW(2, 5, 1024)), table(SHDR SROW(0, 5, 1024))};
    const char *names[2] = {"a.csv", "b.csv"};
    struct cs_table *out = NULL;
    struct cs_sweepcsv_join info;
    struct cs_error err;
    char buf[64];

    cs_error_init(&err);
    ck_assert_int_eq(cs_sweepcsv_join(tabs, names, 2, NULL, NULL, &out, &info, &err), 0);
    ck_assert_int_eq(info.total, 5);
    ck_assert_int_eq(info.npoints, 2);
    ck_assert_int_eq(out->ncols, 2 + CS_REPORT_CSV_NCOLS);
    ck_assert_str_eq(out->cols[1], "protocol");
    ck_assert_str_eq(cs_table_get(out, 0, 0), "0");
    ck_assert_str_eq(cs_table_get(out, 0, 1), "LL");
    ck_assert_int_eq(cs_sweepcsv_missing(out, info.total, buf, sizeof(buf)), 3);
    ck_assert_str_eq(buf, "1, 3-4");
    ck_assert_int_eq(cs_sweepcsv_missing(out, -1, buf, sizeof(buf)), 1); /* below the last only */
    ck_assert_str_eq(buf, "1");
    cs_table_free(out);
    cs_table_free(tabs[1]);
    tabs[1] = table(SHDR SROW(0, 6, 1024));
    ck_assert_int_eq(cs_sweepcsv_join(tabs, names, 2, NULL, NULL, &out, &info, &err),
                     CS_ERR_INVALID);
    ck_assert_str_eq(err.file, "b.csv");
    ck_assert_int_eq(err.line, 2);
    ck_assert_str_eq(err.msg, "npoints 6 differs from a.csv's 5: shards of another sweep");
    cs_table_free(tabs[1]);
    tabs[1] = table(SHDR SROW(1, 5, 1024) SROW(7, 5, 1024));
    cs_error_init(&err);
    ck_assert_int_eq(cs_sweepcsv_join(tabs, names, 2, NULL, NULL, &out, &info, &err),
                     CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 3);
    ck_assert_str_eq(err.msg, "point 7 of a sweep of 5 points");
    cs_table_free(tabs[1]);
    tabs[1] = table(SHDR "1,x,LL,1024,256,float,1.0,1.0,1.0,ok,1024\n");
    cs_error_init(&err);
    ck_assert_int_eq(cs_sweepcsv_join(tabs, names, 2, NULL, NULL, &out, &info, &err), CS_ERR_PARSE);
    ck_assert_str_eq(err.msg, "bad npoints 'x'");
    cs_table_free(tabs[0]);
    cs_table_free(tabs[1]);
}
END_TEST

/* Missing points: none, all, and a list too long for the buffer ends in "...". */
START_TEST(missing)
{
    struct cs_table *t = table(HDR ROW(0, "LL", 1024, "ok") ROW(0, "LL", 2048, "ok")
                                   ROW(3, "LL", 1024, "ok") ROW(5, "LL", 1024, "ok"));
    struct cs_table *empty = table(HDR);
    char buf[16];

    ck_assert_int_eq(cs_sweepcsv_missing(t, 6, buf, sizeof(buf)), 3);
    ck_assert_str_eq(buf, "1-2, 4");
    ck_assert_int_eq(cs_sweepcsv_missing(t, -1, buf, sizeof(buf)), 3);
    ck_assert_int_eq(cs_sweepcsv_missing(t, 0, buf, sizeof(buf)), 3);
    ck_assert_int_eq(cs_sweepcsv_missing(empty, 3, buf, sizeof(buf)), 3);
    ck_assert_str_eq(buf, "0-2");
    ck_assert_int_eq(cs_sweepcsv_missing(empty, -1, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(cs_sweepcsv_missing(t, 100, buf, sizeof(buf)), 97);
    ck_assert_str_eq(buf, "1-2, 4, ...");
    cs_table_free(t);
    cs_table_free(empty);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {header, 1},       {point_file, 1},  {join, 1},    {join_refused, 1},
        {join_nothing, 1}, {join_shards, 1}, {missing, 1}, {NULL, 0},
    };

    return test_run("sweepcsv", 0, tests, NULL);
}
