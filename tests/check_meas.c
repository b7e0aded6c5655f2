/* check_meas.c: measurement tables: collectives, ring steps, rank inference and rows. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "meas.h"
#include "runner.h"

/* A table parsed from text. */
static struct cs_csv *table(const char *text)
{
    struct cs_csv *t = NULL;

    ck_assert_int_eq(cs_csv_read_mem(text, strlen(text), "m.csv", &t, NULL), 0);
    return t;
}

START_TEST(test_coll)
{
    ck_assert_int_eq(cs_meas_coll_parse("all_reduce"), CS_MEAS_ALLREDUCE);
    ck_assert_int_eq(cs_meas_coll_parse("reducescatter"), CS_MEAS_REDUCESCATTER);
    ck_assert_int_eq(cs_meas_coll_parse("alltoall"), 0);
    ck_assert_str_eq(cs_meas_coll_name(CS_MEAS_SENDRECV), "sendrecv");
    ck_assert_ptr_null(cs_meas_coll_name(0));
    ck_assert_int_eq(cs_meas_ring_steps(CS_MEAS_ALLREDUCE, 8), 14);
    ck_assert_int_eq(cs_meas_ring_steps(CS_MEAS_ALLGATHER, 8), 7);
    ck_assert_int_eq(cs_meas_ring_steps(CS_MEAS_SENDRECV, 8), 1);
}
END_TEST

START_TEST(test_range)
{
    double lo = -1, hi = -1;

    ck_assert_int_eq(cs_meas_parse_range("64K:1M", &lo, &hi), 0);
    ck_assert(lo == 65536 && hi == 1048576);
    ck_assert_int_eq(cs_meas_parse_range(":", &lo, &hi), 0);
    ck_assert(lo == 0 && isinf(hi));
    ck_assert_int_eq(cs_meas_parse_range("256M:", &lo, &hi), 0);
    ck_assert(lo == 268435456 && isinf(hi));
    lo = hi = -1;
    ck_assert_int_eq(cs_meas_parse_range("9:1", &lo, &hi), CS_ERR_PARSE);
    ck_assert_int_eq(cs_meas_parse_range("12", &lo, &hi), CS_ERR_PARSE);
    ck_assert_int_eq(cs_meas_parse_range("1.5K:", &lo, &hi), CS_ERR_PARSE);
    ck_assert_int_eq(cs_meas_parse_range("1e30:", &lo, &hi), CS_ERR_PARSE);
    ck_assert_int_eq(cs_meas_parse_range(":17179869185G", &lo, &hi), CS_ERR_PARSE);
    ck_assert(lo == -1 && hi == -1);
}
END_TEST

START_TEST(test_infer)
{
    /* busbw/algbw = 2(n-1)/n = 1.75 for 8 ranks at the largest size (the small one is noise). */
    struct cs_csv *t = table("size_bytes,time_us,algbw_GBps,busbw_GBps\n"
                             "1024,10,0.5,0.6\n"
                             "1048576,50,20,35\n");

    ck_assert_int_eq(cs_meas_infer_ranks(t, CS_MEAS_ALLREDUCE), 8);
    ck_assert_int_eq(cs_meas_infer_ranks(t, CS_MEAS_ALLGATHER), 0); /* 1.75 > (n-1)/n */
    ck_assert_int_eq(cs_meas_infer_ranks(t, CS_MEAS_SENDRECV), 2);
    cs_csv_free(t);
    t = table("size_bytes,time_us,algbw_GBps,busbw_GBps\n1024,10,,\n");
    ck_assert_int_eq(cs_meas_infer_ranks(t, CS_MEAS_ALLREDUCE), 0);
    cs_csv_free(t);
}
END_TEST

START_TEST(test_rows)
{
    struct cs_csv *t = table("size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n"
                             "2048,20,,,out_of_place\n"
                             "4096,,,1.75,in_place\n");
    struct cs_meas_row *r = NULL;
    struct cs_error err;
    int n = 0, derived = 0;

    cs_error_init(&err);
    ck_assert_int_eq(cs_meas_read_rows(t, 14, 8, &r, &n, &derived, &err), 0);
    ck_assert_int_eq(n, 2);
    ck_assert(r[0].size_bytes == 2048 && fabs(r[0].time_s - 20e-6) < 1e-18 && r[0].line == 2);
    /* busbw 1.75 GB/s, 14 steps of S/8: t = 4096 * 14 / 8 / 1.75e9 = 4.096 us */
    ck_assert(fabs(r[1].time_s - 4.096e-6) < 1e-15 && r[1].ngpus == 0 && derived == 1);
    free(r);
    /* Without a rank count the busbw row has no time: an error at its line. */
    ck_assert_int_eq(cs_meas_read_rows(t, 14, 0, &r, &n, NULL, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "no time_us"));
    cs_csv_free(t);
}
END_TEST

START_TEST(test_cell)
{
    /* Blanks around a number are fine; a tiny time that underflows is still a number (the cells
     * are read by cs_csv_get_double). */
    struct cs_csv *t = table("size_bytes,time_us\n 1024 ,1e-308\n");
    struct cs_meas_row *r = NULL;
    double v = -1;
    int n = 0;

    ck_assert_int_eq(cs_csv_get_double(t, 0, 0, &v, NULL), 0);
    ck_assert(v == 1024);
    ck_assert_int_eq(cs_csv_get_double(t, 0, -1, &v, NULL), 1);
    ck_assert(v == 1024);
    ck_assert_int_eq(cs_meas_read_rows(t, 14, 8, &r, &n, NULL, NULL), 0);
    ck_assert(n == 1 && r[0].time_s > 0 && r[0].time_s < 1e-313);
    free(r);
    cs_csv_free(t);
}
END_TEST

/* Byte counts are whole numbers from 0 to 1 PiB, in any number syntax. */
START_TEST(test_bytes)
{
    struct cs_csv *t = table("bytes\n4096\n 1e3 \n0\n\n1e30\n1024.5\n-8\n1e-308\nx\n");
    static const char *const bad[] = {"1e30", "1024.5", "-8", "1e-308"};
    struct cs_error err;
    double v = -1;

    ck_assert_int_eq(cs_meas_read_bytes(t, 0, 0, &v, NULL), 0);
    ck_assert(v == 4096);
    ck_assert_int_eq(cs_meas_read_bytes(t, 1, 0, &v, NULL), 0);
    ck_assert(v == 1000);
    ck_assert_int_eq(cs_meas_read_bytes(t, 2, 0, &v, NULL), 0);
    ck_assert(v == 0);
    ck_assert_int_eq(cs_meas_read_bytes(t, 0, -1, &v, NULL), 1);
    ck_assert(v == 0);
    for (int r = 3; r < 7; r++) {
        char want[64];

        cs_error_init(&err);
        ck_assert_int_eq(cs_meas_read_bytes(t, r, 0, &v, &err), CS_ERR_INVALID);
        snprintf(want, sizeof(want), "bytes '%s' is not a whole number of bytes", bad[r - 3]);
        ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
        ck_assert_int_eq(err.line, t->lines[r]);
    }
    cs_error_init(&err);
    ck_assert_int_eq(cs_meas_read_bytes(t, 7, 0, &v, &err), CS_ERR_PARSE);
    ck_assert(v == 0);
    cs_csv_free(t);
}
END_TEST

START_TEST(test_gpus)
{
    struct cs_csv *t = table("size_bytes,time_us,n_gpus,ring_steps\n,33.7,8,14\n,10,2,2\n");
    struct cs_meas_row *r = NULL;
    int n = 0;

    ck_assert_int_eq(cs_meas_read_rows(t, 0, 0, &r, &n, NULL, NULL), 0);
    ck_assert(n == 2 && r[0].ngpus == 8 && r[0].size_bytes == 0 && r[1].ngpus == 2);
    free(r);
    cs_csv_free(t);
}
END_TEST

/* Each bad table names its line and what is wrong. */
START_TEST(test_bad)
{
    static const struct {
        const char *text;
        int rc, line;
        const char *msg;
    } bad[] = {
        {"a,b\n1,2\n", CS_ERR_PARSE, 1, "not a measurement table"},
        {"size_bytes,time_us\n1024,abc\n", CS_ERR_PARSE, 2, "'abc' is not a finite number"},
        {"size_bytes,time_us\n1024,10\n,12\n", CS_ERR_INVALID, 3, "empty size_bytes"},
        {"size_bytes,time_us\n1024,0\n", CS_ERR_INVALID, 2, "size 1024 B, time 0 us"},
        {"size_bytes,time_us\n-8,3\n", CS_ERR_INVALID, 2, "'-8' is not a whole number of bytes"},
        {"size_bytes,time_us\n0,3\n", CS_ERR_INVALID, 2, "both must be positive"},
        {"size_bytes,time_us,n_gpus\n,3,1\n", CS_ERR_INVALID, 2, "n_gpus '1' is not a count"},
        {"size_bytes,time_us,n_gpus\n,3,2.5\n", CS_ERR_INVALID, 2, "is not a count"},
        {"size_bytes,time_us\n1024.5,3\n", CS_ERR_INVALID, 2, "'1024.5' is not a whole number"},
        {"size_bytes,time_us\n1e30,3\n", CS_ERR_INVALID, 2, "'1e30' is not a whole number"},
        {"size_bytes,time_us\n1024,inf\n", CS_ERR_PARSE, 2, "'inf' is not a finite number"},
        {"size_bytes,time_us\n1024,1e999\n", CS_ERR_PARSE, 2, "'1e999' is not a finite number"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cs_csv *t = table(bad[i].text);
        struct cs_meas_row *r = NULL;
        struct cs_error err;
        int n = -1;

        cs_error_init(&err);
        ck_assert_int_eq(cs_meas_read_rows(t, 14, 8, &r, &n, NULL, &err), bad[i].rc);
        ck_assert_int_eq(err.line, bad[i].line);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%s", err.msg);
        ck_assert(r == NULL && n == -1);
        cs_csv_free(t);
    }
}
END_TEST

/* Raw nccl-tests output of each layout (tests/data/nccl-tests/): rows, placements and lines. */
START_TEST(test_raw_layouts)
{
    static const struct {
        const char *file;
        int nrows, line0, line_last;
        double size0, time0, time_last;
    } ok[] = {
        /* nccl-tests 2.0 (NCCL 2.8): `error` columns (the largest deviation), redop, no root */
        {"nccl-tests/allreduce-v2.0-error.out", 14, 12, 18, 8, 40.69, 129.8},
        /* an AllGather of then: no redop or root */
        {"nccl-tests/allgather-v2.0-error.out", 8, 8, 11, 1024, 20.11, 29.88},
        /* nccl-tests 2.13 (NCCL 2.23) under NCCL's log, host names starting with digits; an
         * in-place time N/A is no row */
        {"nccl-tests/sendrecv-v2.13-log.out", 5, 13, 15, 1024, 12.31, 28.70},
    };
    struct cs_csv *t = NULL;
    struct cs_meas_row *r = NULL;
    struct cs_error err;
    int n;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cs_error_init(&err);
        ck_assert_msg(cs_meas_read(test_data(ok[i].file), &t, &err) == 0, "%s: %s", ok[i].file,
                      err.msg);
        ck_assert_int_eq(t->nrows, ok[i].nrows);
        ck_assert_int_eq(t->lines[0], ok[i].line0);
        ck_assert_int_eq(t->lines[t->nrows - 1], ok[i].line_last);
        ck_assert_int_eq(cs_meas_read_rows(t, 2, 2, &r, &n, NULL, &err), 0);
        ck_assert_int_eq(n, ok[i].nrows);
        ck_assert_double_eq(r[0].size_bytes, ok[i].size0);
        ck_assert_double_eq_tol(r[0].time_s, ok[i].time0 * 1e-6, 1e-15);
        ck_assert_double_eq_tol(r[n - 1].time_s, ok[i].time_last * 1e-6, 1e-15);
        free(r);
        cs_csv_free(t);
    }
}
END_TEST

/* What launchers put before each line: Open MPI's --tag-output, srun --label. */
START_TEST(test_raw_prefixes)
{
    static const char text[] =
        "[1,0]<stdout>:#       size         count    type   redop     time   algbw   busbw  error"
        "     time   algbw   busbw  error\n"
        "[1,3]<stdout>:host:25:25 [3] NCCL INFO Launch mode Parallel\n"
        "[1,0]<stdout>:     1048576        262144   float     sum    485.3    2.16    4.05  5e-07"
        "    486.3    2.16    4.04  5e-07\n"
        "0:      2097152        524288   float     sum    662.3    3.17    5.94  5e-07    666.4    "
        "3.15    5.90  5e-07\n";
    struct cs_csv *t = NULL;
    struct cs_error err;

    ck_assert_int_eq(cs_meas_line_body("[1,0]<stdout>:x", 15), 14);
    ck_assert_int_eq(cs_meas_line_body("[1,12]<stderr>:x", 16), 15);
    ck_assert_int_eq(cs_meas_line_body("12: x", 5), 4);
    ck_assert_int_eq(cs_meas_line_body("[1,0] x", 7), 0);
    ck_assert_int_eq(cs_meas_line_body("8 2 float", 9), 0);
    cs_error_init(&err);
    ck_assert_int_eq(cs_meas_read_raw(text, strlen(text), "p.log", &t, &err), 0);
    ck_assert_int_eq(t->nrows, 4);
    ck_assert_int_eq(t->lines[0], 3);
    ck_assert_int_eq(t->lines[3], 4);
    cs_csv_free(t);
    ck_assert_int_eq(cs_meas_read_raw("size,time\n", 10, "p.csv", &t, &err), 1);
    /* a header and no row (a log cut after it): a table of no rows */
    ck_assert_int_eq(cs_meas_read_raw(text, strchr(text, '\n') - text + 1, "h.log", &t, &err), 0);
    ck_assert_int_eq(t->nrows, 0);
    cs_csv_free(t);
}
END_TEST

/* A field that is no plain token (a quote joining two rows for the CSV reader, a comma): refused
 * at its line, before the table is built; the rows' lines stay one to one with the table's. */
START_TEST(test_raw_quote)
{
    static const char *const rows[] = {
        "     1048576        262144   float     sum    \"485.3    2.16    4.05  5e-07"
        "    486.3    2.16    4.04  5e-07\n"
        "     2097152        524288   float     sum    662.3\"    3.17    5.94  5e-07    666.4    "
        "3.15    5.90  5e-07\n",
        "     1048576        262144   float     sum    485.3    2.16    4.05  5e-07"
        "    486,3    2.16    4.04  5e-07\n",
    };
    static const char head[] = "#       size         count    type   redop     time   algbw   busbw"
                               "  error     time   algbw   busbw  error\n";
    char text[1024];
    struct cs_csv *t = NULL;
    struct cs_error err;

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        snprintf(text, sizeof(text), "%s%s", head, rows[i]);
        cs_error_init(&err);
        ck_assert_int_eq(cs_meas_read_raw(text, strlen(text), "q.log", &t, &err), CS_ERR_PARSE);
        ck_assert_int_eq(err.line, 2);
        ck_assert_msg(strstr(err.msg, "is not a number") != NULL, "%s", err.msg);
        ck_assert_ptr_null(t);
    }
}
END_TEST

/* Raw output that is no single measurement: file:line and why. */
START_TEST(test_raw_refused)
{
    static const struct {
        const char *file;
        int line;
        const char *msg;
    } bad[] = {
        {"nccl-tests/allreduce-d-all.out", 8,
         "type and redop 'float sum' after 'int8 sum' (-d all or -o all)"},
        {"nccl-tests/allreduce-o-all.out", 8, "type and redop 'float prod' after 'float sum'"},
        {"nccl-tests/allreduce-oob.out", 7, "nccl-tests reports out of bounds values (6)"},
    };
    struct cs_csv *t = NULL;
    struct cs_error err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_meas_read(test_data(bad[i].file), &t, &err), CS_ERR_PARSE);
        ck_assert_int_eq(err.line, bad[i].line);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%s", err.msg);
        ck_assert_ptr_nonnull(strstr(err.file, bad[i].file));
        ck_assert_ptr_null(t);
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_coll, 1},
        {test_range, 1},
        {test_infer, 1},
        {test_rows, 1},
        {test_cell, 1},
        {test_bytes, 1},
        {test_gpus, 1},
        {test_bad, 1},
        {test_raw_layouts, 1},
        {test_raw_refused, 1},
        {test_raw_prefixes, 1},
        {test_raw_quote, 1},
        {NULL, 0},
    };

    return test_run("meas", 0, tests, NULL);
}
