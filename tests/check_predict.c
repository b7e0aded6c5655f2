/* check_predict.c: the predict API (sizes, load, run) and the report formats. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "predict.h"
#include "report.h"
#include "runner.h"
#include "testplat.h"

/* nccl-tests stepping, rounded to the executor's granularity, duplicates dropped. */
START_TEST(test_sizes)
{
    struct cs_sched *s = NULL;
    long long *v = NULL;
    int n = 0, rounded = -1;

    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=8,channels=1,protocol=LL", &s, NULL), 0);
    /* nchunksperloop 8 x 4 bytes: 32-byte granularity */
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1024, 8192, 2, &v, &n, &rounded), 0);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(v[0], 1024);
    ck_assert_int_eq(v[3], 8192);
    ck_assert_int_eq(rounded, 0);
    free(v);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1, 64, 2, &v, &n, &rounded), 0);
    /* 1, 2, 4, 8, 16, 32 all round to 32; 64 stays */
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(v[0], 32);
    ck_assert_int_eq(v[1], 64);
    ck_assert_int_eq(rounded, 1);
    free(v);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1000, 1000, 3, &v, &n, NULL), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(v[0], 1024);
    free(v);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 2048, 1024, 2, &v, &n, NULL), CS_ERR_USAGE);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1024, 2048, 1, &v, &n, NULL), CS_ERR_USAGE);
    cs_sched_free(s);
}
END_TEST

/* Load: generator spec, platform, overrides; the GPU count and bad overrides are refused. */
START_TEST(test_load)
{
    char path[64];
    struct cs_params p;
    struct cs_platform *tp, *plat = NULL;
    struct cs_sched *s = NULL;
    struct cs_error err;
    const char *sets[] = {"cs.launch_s=7e-6"}, *bad[] = {"cs.launch_s"};
    struct cs_predict_input in = {NULL, "ring:gpus=4,channels=1", path, sets, 1};

    cs_params_init(&p);
    tp = test_platform_hier(2, 2, &p, path);
    cs_platform_free(tp);
    cs_error_init(&err);
    ck_assert_int_eq(cs_predict_load(&in, &s, &plat, &err), 0);
    ck_assert_int_eq(s->ngpus, 4);
    ck_assert(plat->params.launch_s == 7e-6);
    cs_sched_free(s);
    cs_platform_free(plat);

    in.gen_spec = "ring:gpus=8,channels=1";
    s = NULL, plat = NULL;
    ck_assert_int_eq(cs_predict_load(&in, &s, &plat, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(s);
    ck_assert_ptr_null(plat);
    ck_assert_ptr_nonnull(strstr(err.msg, "needs 8 GPUs but the platform has 4"));

    in.gen_spec = "ring:gpus=4,channels=1";
    in.sets = bad;
    cs_error_init(&err);
    ck_assert_int_eq(cs_predict_load(&in, &s, &plat, &err), CS_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "KEY=VALUE"));

    /* Link parameters live in the platform's <link>s: a --set of one would change nothing. */
    {
        const char *link[] = {"cs.launch_s=1e-6", "cs.link_Bps.nvlink=1e9"};

        in.sets = link;
        in.nsets = 2;
        cs_error_init(&err);
        ck_assert_int_eq(cs_predict_load(&in, &s, &plat, &err), CS_ERR_USAGE);
        ck_assert_ptr_nonnull(strstr(err.msg, "collsim platform FAMILY --set cs.link_Bps.nvlink"));
        link[1] = "cs.sys_lat_s=0";
        cs_error_init(&err);
        ck_assert_int_eq(cs_predict_load(&in, &s, &plat, &err), CS_ERR_USAGE);
        in.nsets = 1;
        ck_assert_int_eq(cs_predict_load(&in, &s, &plat, &err), 0);
        cs_sched_free(s);
        cs_platform_free(plat);
    }

    in.sched_path = "x.xml";
    ck_assert_int_eq(cs_predict_load(&in, &s, &plat, NULL), CS_ERR_USAGE);
    unlink(path);
}
END_TEST

/* A run fills one row per size; the bus bandwidth is algbw x 2(n-1)/n for AllReduce; the
 * progress callback sees every row. */
static int seen;
static void count_rows(void *ctx, int k, int n, const struct cs_predict_row *row)
{
    (void)ctx;
    ck_assert_int_eq(k, ++seen);
    ck_assert_int_le(k, n);
    ck_assert(row->size_bytes > 0);
}

START_TEST(test_predict_run)
{
    char path[64];
    struct cs_params p;
    struct cs_platform *plat;
    struct cs_sched *s = NULL;
    struct cs_predict_row rows[2];
    long long sizes[2] = {4096, 65536};
    struct cs_predict_opts o = {0};

    cs_params_init(&p);
    plat = test_platform_hier(4, 1, &p, path);
    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=4,channels=1,protocol=Simple", &s, NULL), 0);
    o.type_bytes = 4;
    o.progress = count_rows;
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 2, rows, NULL), 0);
    ck_assert_int_eq(seen, 2);
    for (int k = 0; k < 2; k++) {
        ck_assert_str_eq(cs_predict_status_name(&rows[k]), "ok");
        ck_assert_int_eq(rows[k].count, sizes[k] / 4);
        ck_assert(fabs(rows[k].time_us - rows[k].res.time_s * 1e6) < 1e-9);
        ck_assert(fabs(rows[k].algbw_GBps * rows[k].time_us * 1e3 - sizes[k]) < 1e-6 * sizes[k]);
        ck_assert(fabs(rows[k].busbw_GBps - rows[k].algbw_GBps * 1.5) < 1e-12);
    }
    ck_assert(rows[1].time_us > rows[0].time_us);
    cs_predict_row_cleanup(&rows[0]);
    cs_predict_row_cleanup(&rows[1]);
    /* 1 TiB of a 4-GPU Simple ring needs 131,072 loop iterations: an error, or with
     * keep_going an unsupported row after an ordinary one. */
    sizes[1] = 1LL << 40;
    o.progress = NULL;
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 2, rows, NULL), CS_ERR_INVALID);
    o.keep_going = 1;
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 2, rows, NULL), 0);
    ck_assert_str_eq(cs_predict_status_name(&rows[0]), "ok");
    ck_assert_str_eq(cs_predict_status_name(&rows[1]), "unsupported");
    ck_assert_ptr_nonnull(strstr(rows[1].refused, "131072 loop iterations"));
    cs_predict_row_cleanup(&rows[0]);
    cs_predict_row_cleanup(&rows[1]);
    cs_sched_free(s);
    cs_platform_free(plat);
    unlink(path);
}
END_TEST

/* Steady-state extrapolation: the same verdicts as the full replay and times within 1e-6, a ring
 * whose short replays settle with a period of two iterations and a schedule that deadlocks. The
 * full replay's clock gathers SimGrid's rounding over long runs (up to about 1e-7). */
START_TEST(test_extrapolate)
{
    static const char *const specs[] = {"ring:gpus=8,channels=1,protocol=LL",
                                        "hierarchical:gpus=8,protocol=LL"};
    char path[64];
    struct cs_params p;
    struct cs_platform *plat;
    long long sizes[2] = {128 << 20, 512 << 20};

    cs_params_init(&p);
    plat = test_platform_hier(4, 2, &p, path);
    for (int i = 0; i < 2; i++) {
        struct cs_sched *s = NULL;
        struct cs_predict_row x[2], f[2];
        struct cs_predict_opts o = {0};

        ck_assert_int_eq(cs_gen_from_spec(specs[i], &s, NULL), 0);
        o.type_bytes = 4;
        ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 2, x, NULL), 0);
        o.no_extrapolate = 1;
        ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 2, f, NULL), 0);
        for (int k = 0; k < 2; k++) {
            ck_assert_int_eq(f[k].replayed_iters, 0);
            ck_assert_int_eq(x[k].res.status, f[k].res.status);
            ck_assert(fabs(x[k].res.time_s - f[k].res.time_s) <= 1e-6 * f[k].res.time_s);
            if (i == 0) {
                /* 128 MiB: 512 iterations of 32 KiB chunks; 512 MiB: 2048 */
                ck_assert_int_gt(x[k].replayed_iters, 2);
                ck_assert_int_lt(x[k].replayed_iters, x[k].niter / 2);
                ck_assert_int_eq(x[k].res.ncalls, f[k].res.ncalls);
                ck_assert_int_eq(x[k].res.ntransfers, f[k].res.ntransfers);
            } else {
                ck_assert_int_eq(x[k].res.status, CS_REPLAY_DEADLOCK);
                ck_assert_int_eq(x[k].replayed_iters, 0);
                ck_assert_str_eq(x[k].res.report, f[k].res.report);
            }
            cs_predict_row_cleanup(&x[k]);
            cs_predict_row_cleanup(&f[k]);
        }
        cs_sched_free(s);
    }
    cs_platform_free(plat);
    unlink(path);
}
END_TEST

/* The three formats of a report with one finished and one deadlocked row. */
START_TEST(test_report)
{
    static char report[] = "gpu 0 waits\ngpu 1 waits";
    struct cs_predict_row rows[2];
    struct cs_report_meta m = {"s.xml", "p.xml", CS_PROTO_LL, CS_COLL_ALLREDUCE, 8, "float"};
    char *buf = NULL;
    size_t len = 0;
    FILE *fp;

    memset(rows, 0, sizeof(rows));
    rows[0].size_bytes = 1024, rows[0].count = 256, rows[0].res.status = CS_REPLAY_OK;
    rows[0].time_us = 10, rows[0].algbw_GBps = 0.1024, rows[0].busbw_GBps = 0.1792;
    rows[1].size_bytes = 2048, rows[1].count = 512, rows[1].res.status = CS_REPLAY_DEADLOCK;
    rows[1].res.report = report;

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, fp, CS_REPORT_CSV, &m, rows, 2), 0);
    fclose(fp);
    ck_assert_str_eq(buf,
                     CS_REPORT_CSV_HEADER "\n"
                                          "1024,256,float,10.000000,0.102400,0.179200,ok\n"
                                          "2048,512,float,,,,deadlock\n"
                                          "# at 2048 bytes:\n#   gpu 0 waits\n#   gpu 1 waits\n");
    free(buf);

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_TABLE, &m, rows, 2), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(
        strstr(buf, "# collsim predict: s.xml on p.xml, LL, 8 GPUs, allreduce\n"));
    /* nccl-tests' columns: busbw is field 8, both placements, #wrong N/A, then the status */
    ck_assert_ptr_nonnull(strstr(buf,
                                 "        1024           256     float     sum      -1    10.00"
                                 "    0.10    0.18     N/A    10.00    0.10    0.18     N/A"
                                 "  ok\n"));
    ck_assert_ptr_nonnull(strstr(buf, "#        (B)    (elements)"));
    ck_assert_ptr_nonnull(strstr(buf, "     N/A  deadlock\n# Avg bus bandwidth    : 0.1792 \n#\n"
                                      "# at 2048 bytes:"));
    free(buf);

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_JSON, &m, rows, 2), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(buf, "\"status\": \"deadlock\", \"report\": \"gpu 0 waits\\n"
                                      "gpu 1 waits\"}\n]}\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\"time_us\": 10.000000"));
    free(buf);

    /* An unsupported size after them: its row, and its reason with the notes. */
    {
        static char why[] = "needs 65536 loop iterations";
        struct cs_predict_row r3[3] = {rows[0], rows[1], {0}};

        r3[2].size_bytes = 4096, r3[2].count = 1024, r3[2].refused = why;
        fp = open_memstream(&buf, &len);
        ck_assert_int_eq(cs_report_write(fp, fp, CS_REPORT_CSV, &m, r3, 3), 0);
        fclose(fp);
        ck_assert_ptr_nonnull(strstr(buf, "\n4096,1024,float,,,,unsupported\n"));
        ck_assert_ptr_nonnull(
            strstr(buf, "\n# at 4096 bytes: unsupported: needs 65536 loop iterations\n"));
        free(buf);
        ck_assert_str_eq(cs_predict_status_name(&r3[2]), "unsupported");
    }

    ck_assert_int_eq(cs_report_fmt_parse("json"), CS_REPORT_JSON);
    ck_assert_int_eq(cs_report_fmt_parse("xml"), 0);
    for (int c = 0; c < CS_REPORT_CSV_NCOLS; c++)
        ck_assert_ptr_nonnull(strstr(CS_REPORT_CSV_HEADER, cs_report_csv_cols[c]));
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_sizes, 1},       {test_load, 1},   {test_predict_run, 1},
        {test_extrapolate, 1}, {test_report, 1}, {NULL, 0},
    };

    return test_run("predict", 60, tests, NULL);
}
