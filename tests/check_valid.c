/* check_valid.c: measured times per size, size bands and error statistics. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "testutil.h"
#include "valid.h"

static const char *write_tmp(const char *text)
{
    static char path[64];
    FILE *fp;

    snprintf(path, sizeof(path), "/tmp/check_valid_%d.csv", (int)getpid());
    fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
    return path;
}

START_TEST(test_bands)
{
    ck_assert_int_eq(cs_band_of(65536), CS_BAND_SMALL);
    ck_assert_int_eq(cs_band_of(65537), CS_BAND_MID);
    ck_assert_int_eq(cs_band_of(4194303), CS_BAND_MID);
    ck_assert_int_eq(cs_band_of(4194304), CS_BAND_LARGE);
    ck_assert_str_eq(cs_band_name(CS_BAND_ALL), "all sizes");
    ck_assert_ptr_null(cs_band_name(CS_NBANDS));
}
END_TEST

START_TEST(test_stats)
{
    struct cs_valid_point p[] = {
        {1024, 10e-6, 11e-6, 1, 0, "LL", NAN, NAN, 0},        /* +10% */
        {2048, 10e-6, 9.5e-6, 1, 0, "LL", NAN, NAN, 0},       /* -5% */
        {1 << 20, 100e-6, 130e-6, 0, 0, "LL", NAN, NAN, 0},   /* +30%, used in the fit */
        {1 << 23, 1000e-6, NAN, 1, 0, "LL", NAN, NAN, 0},     /* deadlock */
        {1 << 24, 2000e-6, 2040e-6, 1, 0, "LL", NAN, NAN, 0}, /* +2% */
    };
    struct cs_valid_stats s;

    cs_valid_stats(p, 5, CS_BAND_ALL, 0, &s);
    ck_assert_int_eq(s.n, 4);
    ck_assert_int_eq(s.missing, 1);
    ck_assert(fabs(s.median_abs - 0.075) < 1e-12);
    ck_assert(fabs(s.max_abs - 0.30) < 1e-12 && s.max_size == 1 << 20);
    cs_valid_stats(p, 5, CS_BAND_ALL, 1, &s);
    ck_assert_int_eq(s.n, 3);
    ck_assert(fabs(s.median_abs - 0.05) < 1e-12 && fabs(s.max_abs - 0.10) < 1e-12);
    cs_valid_stats(p, 5, CS_BAND_LARGE, 0, &s);
    ck_assert_int_eq(s.n, 1);
    ck_assert_int_eq(s.missing, 1);
    ck_assert(fabs(s.median_abs - 0.02) < 1e-12);
    cs_valid_stats(p, 5, CS_BAND_MID, 1, &s);
    ck_assert_int_eq(s.n, 0);
    ck_assert(isnan(s.median_abs));
}
END_TEST

START_TEST(test_read)
{
    struct cs_valid_point *p = NULL;
    struct cs_error err;
    int n = 0;
    const char *path = write_tmp("size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n"
                                 "2048,20,,,out_of_place\n"
                                 "1024,10,,,out_of_place\n"
                                 "1024,12,,,in_place\n"
                                 "1024,30,,,in_place\n"
                                 "4096,,,1.75,in_place\n");

    cs_error_init(&err);
    ck_assert_msg(cs_valid_read_measurement(path, "allreduce", 8, &p, &n, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(n, 3);
    ck_assert(p[0].size_bytes == 1024 && fabs(p[0].meas_s - 12e-6) < 1e-15);
    ck_assert(p[1].size_bytes == 2048 && fabs(p[1].meas_s - 20e-6) < 1e-15);
    /* busbw 1.75 GB/s for 8 ranks: t = 4096 * 14 / 8 / 1.75e9 = 4.096 us */
    ck_assert(fabs(p[2].meas_s - 4.096e-6) < 1e-12);
    ck_assert(isnan(p[0].pred_s) && p[0].held_out && p[0].ranks == 0);
    free(p);
    /* Without ranks a busbw-only row is an error at its line. */
    cs_error_init(&err);
    ck_assert_int_eq(cs_valid_read_measurement(path, "allreduce", 0, &p, &n, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 6);
    path = write_tmp("size_bytes,time_us,algbw_GBps,busbw_GBps,placement,n_gpus,ring_steps\n"
                     ",33.7,,,unspecified,8,14\n"
                     ",10,,,unspecified,2,2\n"
                     ",13.76,,,unspecified,3,4\n");
    ck_assert_int_eq(cs_valid_read_measurement(path, NULL, 0, &p, &n, &err), 0);
    ck_assert_int_eq(n, 3);
    ck_assert(p[0].ranks == 2 && p[1].ranks == 3 && p[2].ranks == 8);
    ck_assert(p[0].size_bytes == 0 && fabs(p[2].meas_s - 33.7e-6) < 1e-15);
    free(p);
    path = write_tmp("size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n1024,-1,,,in_place\n");
    cs_error_init(&err);
    ck_assert_int_eq(cs_valid_read_measurement(path, NULL, 8, &p, &n, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 2);
    path = write_tmp("a,b\n1,2\n");
    cs_error_init(&err);
    ck_assert_int_eq(cs_valid_read_measurement(path, NULL, 8, &p, &n, &err), CS_ERR_PARSE);
    cs_error_init(&err);
    ck_assert_int_eq(cs_valid_read_measurement("/nonexistent.csv", NULL, 8, &p, &n, &err),
                     CS_ERR_IO);
    unlink(path);
}
END_TEST

START_TEST(test_shared)
{
    const char *shared = test_shared_data();
    char path[4300];
    struct cs_valid_point *p = NULL;
    int n;

    ck_assert_ptr_nonnull(shared);
    snprintf(path, sizeof(path), "%s/measurements/oci-bmgpu48-a100sxm40-1node-8gpu.csv", shared);
    ck_assert_int_eq(cs_valid_read_measurement(path, "allreduce", 8, &p, &n, NULL), 0);
    ck_assert_int_eq(n, 28);
    ck_assert(fabs(p[n - 1].meas_s - 63920e-6) < 1e-9); /* median of 63929 and 63911 */
    free(p);
    snprintf(path, sizeof(path), "%s/measurements/azure-aibench-ndv4-a100sxm80-1node-8gpu.csv",
             shared);
    ck_assert_int_eq(cs_valid_read_measurement(path, "allreduce", 8, &p, &n, NULL), 0);
    ck_assert_int_eq(n, 24);
    free(p);
}
END_TEST

/* The text a stream received, as a new string. */
static char *slurp(FILE *fp)
{
    long len = ftell(fp);
    char *s = malloc((size_t)len + 1);

    ck_assert_ptr_nonnull(s);
    rewind(fp);
    ck_assert_int_eq(fread(s, 1, (size_t)len, fp), len);
    s[len] = '\0';
    fclose(fp);
    return s;
}

START_TEST(test_summary)
{
    struct cs_valid_point p[] = {
        {1024, 10e-6, 11e-6, 1, 0, "LL", NAN, NAN, 0},
        {2048, 10e-6, 9.5e-6, 1, 0, "LL", NAN, NAN, 0},
        {1 << 23, 1000e-6, NAN, 1, 0, "", NAN, NAN, 0},
        {1 << 24, 2000e-6, 2140e-6, 1, 0, "Simple", NAN, NAN, 0},
    };
    struct cs_valid_case c = {"c1",        "m.csv", "gen:ring", "p.xml",  "LL/Simple", 1,
                              "nvswitch8", 0,       0,          INFINITY, "A note.\n", ""};
    FILE *md = tmpfile(), *csv = tmpfile(), *cf = tmpfile();
    char *a, *b, *d;

    ck_assert_int_eq(cs_valid_summary_case(md, csv, &c, p, 4, NULL), 1); /* 7% >= 4 MiB: missed */
    cs_valid_case_csv(cf, p, 4);
    a = slurp(md);
    b = slurp(csv);
    d = slurp(cf);
    ck_assert_ptr_nonnull(strstr(a, "### c1\n\nMeasurement `m.csv`; schedule `gen:ring`; "
                                    "platform `p.xml`; protocol fastest of LL/Simple."));
    ck_assert_ptr_nonnull(strstr(a, "| all sizes | 3 | 7.0% | 10.0% (1024 B) | 1 |"));
    ck_assert_ptr_nonnull(strstr(a, "all sizes met (7.0%); >= 4 MiB missed by 2.0 points (7.0%)."));
    ck_assert_ptr_nonnull(strstr(a, "A note.\n\n![c1](c1.svg)"));
    ck_assert_ptr_nonnull(strstr(b, "c1,0,3,0.070000,0.100000,1\n"));
    ck_assert_ptr_nonnull(strstr(b, "c1,3,1,0.070000,0.070000,1\n"));
    ck_assert_str_eq(d, "size_bytes,measured_us,predicted_us,error_pct,protocol,held_out\n"
                        "1024,10.0000,11.0000,10.00,LL,1\n"
                        "2048,10.0000,9.5000,-5.00,LL,1\n"
                        "8388608,1000.0000,,,none,1\n"
                        "16777216,2000.0000,2140.0000,7.00,Simple,1\n");
    free(a);
    free(b);
    free(d);
    /* With NCCL's channel rule the heading names it. */
    snprintf(c.nccl, sizeof(c.nccl), "2.8.4");
    md = tmpfile();
    csv = tmpfile();
    cs_valid_summary_case(md, csv, &c, p, 4, NULL);
    fclose(csv);
    a = slurp(md);
    ck_assert_ptr_nonnull(strstr(a, "protocol fastest of LL/Simple. Channels and threads per size "
                                    "and protocol: NCCL 2.8.4's rule (enqueue.cc"));
    ck_assert_ptr_nonnull(strstr(a, "scaled by threads / maximum threads."));
    free(a);
}
END_TEST

/* An earlier summary read back, then shown beside a new run's numbers. */
START_TEST(test_before)
{
    struct cs_valid_point p[] = {
        {1024, 10e-6, 11e-6, 1, 0, "LL", NAN, NAN, 0},
        {2048, 10e-6, 9.5e-6, 1, 0, "LL", NAN, NAN, 0},
        {1 << 23, 1000e-6, NAN, 1, 0, "", NAN, NAN, 0},
        {1 << 24, 2000e-6, 2140e-6, 1, 0, "Simple", NAN, NAN, 0},
    };
    struct cs_valid_case c = {"c1",        "m.csv", "gen:ring", "p.xml",  "LL/Simple", 1,
                              "nvswitch8", 0,       0,          INFINITY, NULL,        ""};
    struct cs_valid_before *bf = NULL;
    const struct cs_valid_before_row *row;
    struct cs_error err;
    FILE *md, *csv, *plain_csv;
    char *a, *b, *plain;
    const char *path = write_tmp("case,band,n,median_abs,max_abs,missing\n"
                                 "c1,0,4,0.2,0.5,0\n"
                                 "c1,3,0,nan,-nan,2\n"
                                 "other,1,1,0.01,0.01,0\n");

    cs_error_init(&err);
    ck_assert_msg(cs_valid_before_read(path, &bf, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(bf->n, 3);
    row = cs_valid_before_find(bf, "c1", CS_BAND_ALL);
    ck_assert(row != NULL && row->n == 4 && row->median_abs == 0.2 && row->max_abs == 0.5);
    row = cs_valid_before_find(bf, "c1", CS_BAND_LARGE);
    ck_assert(row != NULL && row->n == 0 && isnan(row->median_abs) && isnan(row->max_abs));
    ck_assert_ptr_null(cs_valid_before_find(bf, "c1", CS_BAND_SMALL));
    ck_assert_ptr_null(cs_valid_before_find(bf, "c2", CS_BAND_ALL));
    ck_assert_ptr_null(cs_valid_before_find(NULL, "c1", CS_BAND_ALL));

    md = tmpfile();
    csv = tmpfile();
    cs_valid_summary_begin(md, csv, "cases.txt", bf);
    cs_valid_summary_case(md, csv, &c, p, 4, bf);
    a = slurp(md);
    b = slurp(csv);
    ck_assert_ptr_nonnull(strstr(a, "Written by `collsim validate cases.txt --before "));
    ck_assert_ptr_nonnull(strstr(a, "| band | sizes | median abs error (before -> after) | max abs "
                                    "error (before -> after, at size) | missing |\n"));
    ck_assert_ptr_nonnull(
        strstr(a, "| all sizes | 3 | 20.0% -> 7.0% | 50.0% -> 10.0% (1024 B) | 1 |\n"));
    ck_assert_ptr_nonnull(strstr(a, "| <= 64 KiB | 2 | - -> 7.5% | - -> 10.0% (1024 B) | 0 |\n"));
    ck_assert_ptr_nonnull(strstr(a, "| >= 4 MiB | 1 | - -> 7.0% | - -> 7.0% (16777216 B) | 1 |\n"));
    /* summary.csv is the same with and without the earlier summary. */
    md = tmpfile();
    plain_csv = tmpfile();
    cs_valid_summary_begin(md, plain_csv, "cases.txt", NULL);
    cs_valid_summary_case(md, plain_csv, &c, p, 4, NULL);
    fclose(md);
    plain = slurp(plain_csv);
    ck_assert_str_eq(b, plain);
    free(a);
    free(b);
    free(plain);
    cs_valid_before_free(bf);
    cs_valid_before_free(NULL);
    unlink(path);
}
END_TEST

/* A bad earlier summary: the error and its line, and *out untouched. */
static void before_bad(const char *text, int code, int line, const char *msg)
{
    struct cs_valid_before *bf = (struct cs_valid_before *)&bf;
    struct cs_error err;
    const char *path = write_tmp(text);

    cs_error_init(&err);
    ck_assert_int_eq(cs_valid_before_read(path, &bf, &err), code);
    ck_assert_int_eq(err.line, line);
    ck_assert_msg(strstr(err.msg, msg) != NULL, "'%s' lacks '%s'", err.msg, msg);
    ck_assert_ptr_eq(bf, (struct cs_valid_before *)&bf);
    unlink(path);
}

START_TEST(test_before_bad)
{
    struct cs_valid_before *bf = NULL;
    struct cs_error err;
    const char *head = "case,band,n,median_abs,max_abs,missing\n";
    char text[256];

    before_bad("", CS_ERR_PARSE, 1, "no header row");
    before_bad("size_bytes,time_us\n1024,10\n", CS_ERR_PARSE, 1, "header is not case,band");
    before_bad("case,band,n,median,max_abs,missing\n", CS_ERR_PARSE, 1,
               "column 4 is 'median', not 'median_abs'");
    snprintf(text, sizeof(text), "%sc1,0,1,0.1,0.1,0\nc1,4,1,0.1,0.1,0\n", head);
    before_bad(text, CS_ERR_PARSE, 3, "band '4': 0 to 3");
    snprintf(text, sizeof(text), "%sc1,0,x,0.1,0.1,0\n", head);
    before_bad(text, CS_ERR_PARSE, 2, "n 'x': a count");
    snprintf(text, sizeof(text), "%sc1,0,2,abc,0.1,0\n", head);
    before_bad(text, CS_ERR_PARSE, 2, "median_abs 'abc'");
    snprintf(text, sizeof(text), "%sc1,0,2,0.1,nan,0\n", head);
    before_bad(text, CS_ERR_PARSE, 2, "max_abs 'nan'");
    snprintf(text, sizeof(text), "%sc1,0,2,-0.1,0.1,0\n", head);
    before_bad(text, CS_ERR_PARSE, 2, "fractions >= 0 where n > 0");
    snprintf(text, sizeof(text), "%s,0,2,0.1,0.1,0\n", head);
    before_bad(text, CS_ERR_PARSE, 2, "case name empty");
    snprintf(text, sizeof(text), "%sc1,1,2,0.1,0.1,0\nc2,1,2,0.1,0.1,0\n\nc1,1,1,0.2,0.2,0\n",
             head);
    before_bad(text, CS_ERR_PARSE, 5, "case c1 band 1 again (first on line 2)");
    before_bad("case,band\n1,2,3\n", CS_ERR_PARSE, 2, "");
    cs_error_init(&err);
    ck_assert_int_eq(cs_valid_before_read("/nonexistent.csv", &bf, &err), CS_ERR_IO);
    ck_assert_ptr_null(bf);
    /* A header alone is an earlier summary without cases: every band shows "-". */
    ck_assert_int_eq(cs_valid_before_read(write_tmp(head), &bf, NULL), 0);
    ck_assert_int_eq(bf->n, 0);
    ck_assert_ptr_null(cs_valid_before_find(bf, "c1", CS_BAND_ALL));
    cs_valid_before_free(bf);
}
END_TEST

START_TEST(test_baseline)
{
    char sum[64], base[64];
    FILE *fp, *out;
    struct cs_error err;
    char *text;

    snprintf(sum, sizeof(sum), "/tmp/check_valid_s%d.csv", (int)getpid());
    snprintf(base, sizeof(base), "/tmp/check_valid_b%d.csv", (int)getpid());
    fp = fopen(sum, "w");
    fputs("case,band,n,median_abs,max_abs,missing\nc1,0,3,0.05,0.10,0\nc1,1,2,0.20,0.30,0\n", fp);
    fclose(fp);
    fp = fopen(base, "w");
    fputs("case,band,n,median_abs,max_abs,missing\nc1,0,3,0.04,0.09,0\nc1,1,2,0.1,0.3,0\n"
          "c2,0,1,0.1,0.1,0\n",
          fp);
    fclose(fp);
    out = tmpfile();
    cs_error_init(&err);
    ck_assert_int_eq(cs_valid_baseline_check(sum, base, 0.02, out, &err), 1);
    text = slurp(out);
    ck_assert_ptr_null(strstr(text, "band all sizes")); /* within 2 points */
    ck_assert_ptr_nonnull(strstr(text, "c1 band <= 64 KiB: median 20.00% max 30.00% "
                                       "(baseline 10.00% 30.00%, tolerance 2.00 points)"));
    ck_assert_ptr_nonnull(strstr(text, "c2 band 0: in the baseline, not in this run"));
    free(text);
    out = tmpfile();
    ck_assert_int_eq(cs_valid_baseline_check(sum, sum, 0, out, &err), 0);
    fclose(out);
    ck_assert_int_eq(cs_valid_baseline_check(sum, "/nonexistent.csv", 0, stdout, &err), CS_ERR_IO);
    unlink(sum);
    unlink(base);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_bands, 1},  {test_stats, 1},      {test_read, 1},     {test_summary, 1},
        {test_before, 1}, {test_before_bad, 1}, {test_baseline, 1}, {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_shared, 1},
        {NULL, 0},
    };

    return test_run("valid", 0, tests, shared);
}
