/* check_regress.c: reading and grouping a baseline, what counts as a moved prediction, geometric
 * size runs, predicting a group again, rewriting the baseline, building one from predict and
 * sweep CSVs (--init), and the JUnit report. */
#include <check.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "regress.h"
#include "report.h"
#include "runner.h"
#include "testutil.h"

/* Tolerances of pct percent and abs_us microseconds. */
#define TOL(pct, abs_us) (&(struct cs_regress_tol){(pct), (abs_us)})

START_TEST(moved)
{
    double ch;

    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 100.9, TOL(1, 0), &ch), 0);
    ck_assert(fabs(ch - 0.9) < 1e-9);
    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 101.1, TOL(1, 0), &ch), 1);
    ck_assert(fabs(ch - 1.1) < 1e-9);
    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 98, TOL(1, 0), &ch), 1);
    ck_assert(fabs(ch + 2) < 1e-9);
    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 100, TOL(0, 0), NULL), 0);
    /* a status change always moves; two deadlocks do not, whatever their times */
    ck_assert_int_eq(cs_regress_moved("ok", 100, "deadlock", 100, TOL(50, 0), &ch), 1);
    ck_assert_int_eq(cs_regress_moved("deadlock", INFINITY, "ok", 5, TOL(50, 0), NULL), 1);
    ck_assert_int_eq(cs_regress_moved("deadlock", INFINITY, "deadlock", NAN, TOL(0, 0), NULL), 0);
    /* an empty baseline cell (never measured) moves */
    ck_assert_int_eq(cs_regress_moved("", 0, "ok", 5, TOL(50, 0), NULL), 1);
    ck_assert_int_eq(cs_regress_moved("ok", 0, "ok", 5, TOL(50, 0), NULL), 1);
    /* an absolute tolerance too: a time moves only beyond both */
    ck_assert_int_eq(cs_regress_moved("ok", 2, "ok", 2.4, TOL(1, 0.5), &ch), 0); /* +20%, 0.4 us */
    ck_assert(fabs(ch - 20) < 1e-9);
    ck_assert_int_eq(cs_regress_moved("ok", 2, "ok", 2.6, TOL(1, 0.5), NULL), 1);
    ck_assert_int_eq(cs_regress_moved("ok", 1000, "ok", 1005, TOL(1, 0.5), NULL), 0); /* +0.5% */
    ck_assert_int_eq(cs_regress_moved("ok", 1000, "ok", 1011, TOL(1, 0.5), NULL), 1);
    ck_assert_int_eq(cs_regress_moved("ok", 0, "ok", 0.3, TOL(1, 0.5), NULL), 0);
    ck_assert_int_eq(cs_regress_moved("ok", 0, "ok", 0.7, TOL(1, 0.5), NULL), 1);
    /* a status change moves whatever the tolerances */
    ck_assert_int_eq(cs_regress_moved("ok", 2, "deadlock", 2, TOL(1e6, 1e6), NULL), 1);
}
END_TEST

START_TEST(geometric)
{
    long long f = 0;
    const long long a[] = {1024, 4096, 16384, 65536};
    const long long b[] = {1024, 2048, 8192};
    const long long c[] = {1000, 3000, 9000};
    const long long d[] = {1024, 1536};
    const long long e[] = {7};

    ck_assert_int_eq(cs_regress_geometric(a, 4, &f), 1);
    ck_assert_int_eq(f, 4);
    ck_assert_int_eq(cs_regress_geometric(b, 3, &f), 0);
    ck_assert_int_eq(cs_regress_geometric(c, 3, &f), 1);
    ck_assert_int_eq(f, 3);
    ck_assert_int_eq(cs_regress_geometric(d, 2, &f), 0);
    ck_assert_int_eq(cs_regress_geometric(e, 1, &f), 1);
    ck_assert_int_eq(cs_regress_geometric(e, 0, &f), 0);
}
END_TEST

#define HEADER "schedule,platform,protocol,size_bytes,time_us,busbw_GBps,status\n"

/* A baseline file of this text in a fresh temporary folder; its path is returned (static). */
static const char *write_baseline(const char *text)
{
    static char path[4096];
    char dir[] = "/tmp/check_regress.XXXXXX";
    FILE *fp;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/baseline.csv", dir);
    ck_assert_ptr_nonnull(fp = fopen(path, "w"));
    fputs(text, fp);
    ck_assert_int_eq(fclose(fp), 0);
    return path;
}

static void remove_baseline(const char *path)
{
    char dir[4096];

    snprintf(dir, sizeof(dir), "%s", path);
    *strrchr(dir, '/') = '\0';
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}

/* The error cs_regress_read gives for a baseline of this text. */
static int read_error(const char *text, struct cs_error *err)
{
    const char *path = write_baseline(text);
    struct cs_regress_base *b = NULL;
    int rc;

    cs_error_init(err);
    rc = cs_regress_read(path, &b, err);
    ck_assert_ptr_null(b);
    remove_baseline(path);
    return rc;
}

START_TEST(resolve)
{
    char dir[4096], buf[4096];

    snprintf(dir, sizeof(dir), "%s/results/regression", test_srcdir());
    ck_assert_int_eq(cs_regress_resolve(dir, "platforms/dgx-a100.xml", buf, sizeof(buf)), 0);
    ck_assert_int_eq(access(buf, R_OK), 0);
    ck_assert_ptr_nonnull(strstr(buf, "/platforms/dgx-a100.xml"));
    ck_assert_int_eq(cs_regress_resolve(dir, "platforms/none.xml", buf, sizeof(buf)), CS_ERR_IO);
    ck_assert_int_eq(cs_regress_resolve(dir, "/none/x.xml", buf, sizeof(buf)), CS_ERR_IO);
}
END_TEST

/* The committed baseline: 60 groups of 8 sizes each, sizes ascending. */
START_TEST(read_committed)
{
    char path[4096];
    struct cs_regress_base *b = NULL;
    struct cs_error err;

    snprintf(path, sizeof(path), "%s/results/regression/baseline.csv", test_srcdir());
    cs_error_init(&err);
    ck_assert_msg(cs_regress_read(path, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(b->t->nrows, 480);
    ck_assert_int_eq(b->ngroups, 60);
    for (int k = 0; k < b->ngroups; k++) {
        ck_assert_int_eq(b->groups[k].n, 8);
        for (int i = 1; i < b->groups[k].n; i++)
            ck_assert(b->groups[k].sizes[i - 1] < b->groups[k].sizes[i]);
    }
    ck_assert_int_eq(b->groups[1].first, 8);
    ck_assert_int_eq(b->groups[1].rows[7], 15);
    ck_assert_ptr_nonnull(strstr(b->dir, "results/regression"));
    cs_regress_free(b);
}
END_TEST

START_TEST(read_refused)
{
    struct cs_error err;
    char text[8192], plat[1024];

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    ck_assert_int_eq(read_error("schedule,platform\nx,y\n", &err), CS_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "a baseline has the columns schedule,platform,"));
    snprintf(text, sizeof(text), HEADER "gen:ring:gpus=4,%s,LL,12x,1,1,ok\n", plat);
    ck_assert_int_eq(read_error(text, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_str_eq(err.msg, "bad size_bytes '12x'");
    snprintf(text, sizeof(text),
             HEADER "gen:ring:gpus=4,%s,LL,1024,1,1,ok\ngen:ring:gpus=4,%s,LL,1024,1,1,ok\n", plat,
             plat);
    ck_assert_int_eq(read_error(text, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 3);
    ck_assert_str_eq(err.msg, "size 1024 repeats line 2");
    snprintf(text, sizeof(text), HEADER "gen:ring:gpus=4,%s,ll,1024,1,1,ok\n", plat);
    ck_assert_int_eq(read_error(text, &err), CS_ERR_INVALID);
    ck_assert_str_eq(err.msg, "bad protocol 'll' (LL, LL128, Simple or -)");
    ck_assert_int_eq(read_error(HEADER "gen:ring:gpus=4,platforms/none.xml,LL,1024,1,1,ok\n", &err),
                     CS_ERR_IO);
    ck_assert_str_eq(err.msg, "platform 'platforms/none.xml' not found beside the baseline or in "
                              "a folder above it");
    snprintf(text, sizeof(text), HEADER "schedules/none.xml,%s,-,1024,1,1,ok\n", plat);
    ck_assert_int_eq(read_error(text, &err), CS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err.msg, "schedule 'schedules/none.xml' not found"));
}
END_TEST

/* A recorded prediction that cannot be compared is bad input, not a move; a baseline without rows
 * would let every change pass. */
START_TEST(read_refused_results)
{
    static const struct {
        const char *time, *busbw, *status, *msg;
    } bad[] = {
        {"12.5us", "1", "ok", "time_us '12.5us' is not a number >= 0"},
        {"abc", "", "deadlock", "time_us 'abc' is not a number >= 0"},
        {"-3", "1", "ok", "time_us '-3' is not a number >= 0"},
        {"nan", "1", "ok", "time_us 'nan' is not a number >= 0"},
        {"1e999", "1", "ok", "time_us '1e999' is not a number >= 0"},
        {"12", "fast", "ok", "busbw_GBps 'fast' is not a number >= 0"},
        {"", "", "ok", "status ok without a time_us"},
        {"12", "1", "OK",
         "bad status 'OK' (ok, deadlock, hang, unsupported, or empty before the first "
         "--update)"},
        {"12", "1", "timeout", "bad status 'timeout'"},
    };
    struct cs_error err;
    char text[8192], plat[1024];

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(text, sizeof(text),
                 HEADER "gen:ring:gpus=4,%s,LL,1024,1,1,ok\n"
                        "gen:ring:gpus=4,%s,LL,2048,%s,%s,%s\n",
                 plat, plat, bad[i].time, bad[i].busbw, bad[i].status);
        ck_assert_int_eq(read_error(text, &err), CS_ERR_PARSE);
        ck_assert_int_eq(err.line, 3);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%s: %s", bad[i].msg, err.msg);
    }
    ck_assert_int_eq(read_error(HEADER, &err), CS_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "no rows"));
    ck_assert_int_eq(read_error(HEADER "\n\n", &err), CS_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "no rows"));
}
END_TEST

/* Rows not yet predicted (empty status and times, as results/regression/cases.sh writes them),
 * deadlocks, hangs and unsupported sizes without times, and times in any number syntax are
 * accepted. */
START_TEST(read_results_accepted)
{
    struct cs_regress_base *b = NULL;
    struct cs_error err;
    char text[8192], plat[1024];
    const char *path;

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    snprintf(text, sizeof(text),
             HEADER
             "gen:ring:gpus=4,%s,LL,1024,,,\ngen:ring:gpus=4,%s,LL,2048,,,deadlock\n"
             "gen:ring:gpus=4,%s,LL,4096,,,unsupported\ngen:ring:gpus=4,%s,LL,8192,1e1,0,ok\n"
             "gen:ring:gpus=4,%s,LL,16384,,,hang\n",
             plat, plat, plat, plat, plat);
    path = write_baseline(text);
    cs_error_init(&err);
    ck_assert_msg(cs_regress_read(path, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(b->t->nrows, 5);
    cs_regress_free(b);
    remove_baseline(path);
}
END_TEST

/* A baseline of 40,000 groups of two rows each, the larger size first: grouping sorts (it
 * compared each row with every group before: minutes; this test's timeout is Check's default).
 * Groups keep the order of their first rows, sizes ascend, rows keep table order; a repeated size
 * names the first row that repeats and the row it repeats. */
START_TEST(read_large)
{
    const long ngroups = 40000;
    char plat[1024];
    size_t cap, len;
    char *text;
    struct cs_regress_base *b = NULL;
    struct cs_error err;
    const char *path;

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    cap = (size_t)(ngroups + 1) * 2 * (strlen(plat) + 64) + sizeof(HEADER);
    ck_assert_ptr_nonnull(text = malloc(cap));
    len = (size_t)snprintf(text, cap, HEADER);
    for (long g = 0; g < ngroups; g++)
        for (int k = 1; k >= 0; k--)
            len += (size_t)snprintf(text + len, cap - len,
                                    "\"gen:ring:gpus=8,channels=%ld\",%s,LL,%d,1,1,ok\n", g + 1,
                                    plat, 1024 << k);
    path = write_baseline(text);
    cs_error_init(&err);
    ck_assert_msg(cs_regress_read(path, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(b->ngroups, ngroups);
    for (long g = 0; g < ngroups; g += 3999) {
        ck_assert_int_eq(b->groups[g].first, 2 * g);
        ck_assert_int_eq(b->groups[g].n, 2);
        ck_assert_int_eq(b->groups[g].sizes[0], 1024);
        ck_assert_int_eq(b->groups[g].sizes[1], 2048);
        ck_assert_int_eq(b->groups[g].rows[0], 2 * g);
        ck_assert_int_eq(b->groups[g].rows[1], 2 * g + 1);
    }
    cs_regress_free(b);
    remove_baseline(path);
    /* group 3 again, at 2048 (its line 6) and 1024 (its line 7): the first repeat is reported */
    for (int k = 1; k >= 0; k--)
        len +=
            (size_t)snprintf(text + len, cap - len,
                             "\"gen:ring:gpus=8,channels=3\",%s,LL,%d,1,1,ok\n", plat, 1024 << k);
    ck_assert_int_eq(read_error(text, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 2 * ngroups + 2);
    ck_assert_str_eq(err.msg, "size 2048 repeats line 6");
    free(text);
}
END_TEST

START_TEST(select_groups)
{
    int order[10];

    ck_assert_int_eq(cs_regress_select(10, 0, order), 10);
    ck_assert_int_eq(order[9], 9);
    ck_assert_int_eq(cs_regress_select(10, 12, order), 10);
    ck_assert_int_eq(cs_regress_select(10, 4, order), 4);
    ck_assert_int_eq(order[0], 0);
    ck_assert_int_eq(order[1], 2);
    ck_assert_int_eq(order[2], 5);
    ck_assert_int_eq(order[3], 7);
}
END_TEST

/* Rows compared with new predictions: within tolerance, slower, a status change, missing; the
 * baseline takes the new values and is rewritten. */
START_TEST(compare_update_write)
{
    char text[8192], plat[1024];
    const char *path;
    const char *res_csv = "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status\n"
                          "1024,256,float,100.500000,1,2.000000,ok\n"
                          "2048,512,float,120.000000,1,3.000000,ok\n"
                          "4096,1024,float,,,,deadlock\n";
    struct cs_regress_base *b = NULL, *again = NULL;
    struct cs_table *res = NULL;
    struct cs_regress_cmp c[4];
    struct cs_error err;

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    snprintf(text, sizeof(text),
             HEADER "gen:ring:gpus=4,%s,-,1024,100,1,ok\ngen:ring:gpus=4,%s,-,2048,100,1,ok\n"
                    "gen:ring:gpus=4,%s,-,4096,100,1,ok\ngen:ring:gpus=4,%s,-,8192,100,1,ok\n",
             plat, plat, plat, plat);
    path = write_baseline(text);
    cs_error_init(&err);
    ck_assert_int_eq(cs_regress_read(path, &b, &err), 0);
    ck_assert_int_eq(cs_table_parse(res_csv, strlen(res_csv), "res", &res, &err), 0);
    for (int i = 0; i < 4; i++)
        cs_regress_compare(b, i, res, TOL(1, 0), &c[i]);
    ck_assert_int_eq(c[0].moved, 0);
    ck_assert_str_eq(c[0].change, "+0.50%");
    ck_assert_int_eq(c[1].moved, 1);
    ck_assert_str_eq(c[1].change, "+20.00%");
    ck_assert_str_eq(c[1].time_us, "120.000000");
    ck_assert_int_eq(c[2].moved, 1);
    ck_assert_str_eq(c[2].change, "ok>deadlock");
    ck_assert_int_eq(c[3].moved, 1);
    ck_assert_ptr_null(c[3].time_us);
    ck_assert_str_eq(c[3].change, "missing");
    cs_regress_compare(b, 0, NULL, TOL(1, 0), &c[0]);
    ck_assert_str_eq(c[0].change, "missing");
    for (int i = 1; i < 4; i++)
        ck_assert_int_eq(cs_regress_update(b, &c[i]), 0);
    ck_assert_int_eq(cs_regress_write(b, &err), 0);
    ck_assert_int_eq(cs_regress_read(path, &again, &err), 0);
    ck_assert_str_eq(cs_table_get(again->t, 0, CS_REGRESS_TIME), "100");
    ck_assert_str_eq(cs_table_get(again->t, 1, CS_REGRESS_TIME), "120.000000");
    ck_assert_str_eq(cs_table_get(again->t, 1, CS_REGRESS_BUSBW), "3.000000");
    ck_assert_str_eq(cs_table_get(again->t, 2, CS_REGRESS_TIME), "");
    ck_assert_str_eq(cs_table_get(again->t, 2, CS_REGRESS_STATUS), "deadlock");
    ck_assert_str_eq(cs_table_get(again->t, 3, CS_REGRESS_TIME), "100");
    cs_regress_free(again);
    cs_table_free(res);
    cs_regress_free(b);
    remove_baseline(path);
}
END_TEST

/* The first group of the committed baseline, predicted again, agrees with it within 1%; a
 * non-geometric group predicts each of its sizes. */
START_TEST(predict_group)
{
    char path[4096], text[8192];
    struct cs_regress_base *b = NULL;
    struct cs_predict_row *rows = NULL;
    struct cs_error err;
    int n = 0;

    snprintf(path, sizeof(path), "%s/results/regression/baseline.csv", test_srcdir());
    cs_error_init(&err);
    ck_assert_int_eq(cs_regress_read(path, &b, &err), 0);
    ck_assert_msg(cs_regress_predict(b, &b->groups[0], &rows, &n, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(n, 8);
    for (int k = 0; k < n; k++) {
        double old = strtod(cs_table_get(b->t, b->groups[0].rows[k], CS_REGRESS_TIME), NULL);

        ck_assert_int_eq(rows[k].size_bytes, b->groups[0].sizes[k]);
        ck_assert_int_eq(cs_regress_moved("ok", old, "ok", rows[k].time_us, TOL(1, 0), NULL), 0);
        cs_predict_row_cleanup(&rows[k]);
    }
    free(rows);
    cs_regress_free(b);
    snprintf(text, sizeof(text),
             HEADER "gen:ring:gpus=4,%s/platforms/dgx-a100.xml,Simple,1536,1,1,ok\n"
                    "gen:ring:gpus=4,%s/platforms/dgx-a100.xml,Simple,1024,1,1,ok\n",
             test_srcdir(), test_srcdir());
    ck_assert_int_eq(cs_regress_read(write_baseline(text), &b, &err), 0);
    ck_assert_msg(cs_regress_predict(b, &b->groups[0], &rows, &n, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(rows[0].size_bytes, 1024);
    ck_assert_int_eq(rows[1].size_bytes, 1536);
    ck_assert(rows[1].time_us > rows[0].time_us);
    for (int k = 0; k < n; k++)
        cs_predict_row_cleanup(&rows[k]);
    free(rows);
    remove_baseline(b->path);
    cs_regress_free(b);
}
END_TEST

/* A file of this text beside the baseline path (same folder); its path in buf. */
static const char *write_beside(const char *baseline, const char *name, const char *text, char *buf,
                                size_t len)
{
    FILE *fp;

    snprintf(buf, len, "%.*s/%s", (int)(strrchr(baseline, '/') - baseline), baseline, name);
    ck_assert_ptr_nonnull(fp = fopen(buf, "w"));
    fputs(text, fp);
    ck_assert_int_eq(fclose(fp), 0);
    return buf;
}

#define PRED_HDR CS_REPORT_CSV_HEADER "\n"

/* --init from a predict CSV (schedule, platform and protocol from the options) and a sweep CSV
 * (a generator spec from its gen.* columns, its platform and protocol columns). */
START_TEST(init_built)
{
    char plat[1024], text[4096], p1[4096], p2[4096], path[4096];
    const char *from[2];
    struct cs_regress_base *b = NULL, *again = NULL;
    struct cs_regress_init_opts o = {"gen:ring:gpus=4", plat, "LL"};
    struct cs_error err;

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    snprintf(path, sizeof(path), "%s", write_baseline(HEADER));
    from[0] = write_beside(path, "p.csv",
                           PRED_HDR "1024,256,float,10.5,0.1,0.2,ok,0\n"
                                    "2048,512,float,,,,deadlock,0\n",
                           p1, sizeof(p1));
    snprintf(text, sizeof(text),
             "point,gen.algorithm,gen.gpus,gen.compat,protocol,platform," PRED_HDR
             "0,ring,4,0,Simple,%s,4096,1024,float,20,1,2,ok,4096\n"
             "1,ring,4,0,LL128,%s,4096,1024,float,30,1,2,ok,4096\n",
             plat, plat);
    from[1] = write_beside(path, "s.csv", text, p2, sizeof(p2));
    cs_error_init(&err);
    ck_assert_msg(cs_regress_init(path, from, 1, &o, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(b->t->nrows, 2);
    ck_assert_int_eq(b->ngroups, 1);
    ck_assert_str_eq(cs_table_get(b->t, 0, CS_REGRESS_SCHED), "gen:ring:gpus=4");
    ck_assert_str_eq(cs_table_get(b->t, 0, CS_REGRESS_PLAT), plat);
    ck_assert_str_eq(cs_table_get(b->t, 0, CS_REGRESS_PROTO), "LL");
    ck_assert_str_eq(cs_table_get(b->t, 0, CS_REGRESS_TIME), "10.5");
    ck_assert_str_eq(cs_table_get(b->t, 0, CS_REGRESS_BUSBW), "0.2");
    ck_assert_str_eq(cs_table_get(b->t, 1, CS_REGRESS_STATUS), "deadlock");
    cs_regress_free(b);
    /* the sweep CSV alone: the options would repeat its columns */
    ck_assert_msg(cs_regress_init(path, from + 1, 1, &(struct cs_regress_init_opts){0}, &b, &err) ==
                      0,
                  "%s", err.msg);
    ck_assert_int_eq(b->ngroups, 2);
    ck_assert_str_eq(cs_table_get(b->t, 0, CS_REGRESS_SCHED), "gen:ring:gpus=4,protocol=Simple");
    ck_assert_str_eq(cs_table_get(b->t, 1, CS_REGRESS_PROTO), "LL128");
    ck_assert_int_eq(cs_regress_write(b, &err), 0);
    ck_assert_msg(cs_regress_read(path, &again, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(again->t->nrows, 2);
    cs_regress_free(again);
    cs_regress_free(b);
    unlink(p1);
    unlink(p2);
    remove_baseline(path);
}
END_TEST

/* The error --init gives for one CSV of this text and these options: FILE:LINE and the message. */
static void init_bad(const char *text, const struct cs_regress_init_opts *o, int line,
                     const char *want)
{
    char path[4096], f[4096];
    const char *from[1];
    struct cs_regress_base *b = NULL;
    struct cs_error err;

    snprintf(path, sizeof(path), "%s", write_baseline(HEADER));
    from[0] = write_beside(path, "in.csv", text, f, sizeof(f));
    cs_error_init(&err);
    ck_assert_int_ne(cs_regress_init(path, from, 1, o, &b, &err), 0);
    ck_assert_ptr_null(b);
    ck_assert_str_eq(err.file, f);
    ck_assert_int_eq(err.line, line);
    ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
    unlink(f);
    remove_baseline(path);
}

START_TEST(init_refused)
{
    char plat[1024], text[4096];
    struct cs_regress_init_opts none = {0}, both = {"gen:ring:gpus=4", plat, NULL};

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    init_bad(PRED_HDR "1024,256,float,1,1,1,ok,0\n", &none, 1,
             "no schedule column: give --schedule FILE|gen:SPEC");
    init_bad(PRED_HDR "1024,256,float,1,1,1,ok,0\n",
             &(struct cs_regress_init_opts){"gen:ring:gpus=4", NULL, NULL}, 1,
             "no platform column: give --platform FILE");
    init_bad("size_bytes,time_us\n1024,1\n", &both, 1, "neither a predict CSV");
    init_bad(PRED_HDR "1024,256,float,1,1,1,ok,0\n2048,1024,half,1,1,1,ok,0\n", &both, 3,
             "type 'half': a baseline predicts float only");
    init_bad(PRED_HDR "1024,256,float,1,1,1,ok,0\n1024,256,float,1,1,1,ok,0\n", &both, 3,
             "size 1024 repeats ");
    init_bad(PRED_HDR "1024,256,float,fast,1,1,ok,0\n", &both, 2, "time_us 'fast' is not a number");
    init_bad(PRED_HDR "1024,256,float,1,1,1,ok,0\n",
             &(struct cs_regress_init_opts){"gen:ring:gpus=4", "none.xml", NULL}, 2,
             "platform 'none.xml' not found");
    init_bad("point,schedule,platform,set.cs.link_Bps.pcie," PRED_HDR
             "0,s.xml,p.xml,1e9,1024,256,float,1,1,1,ok,0\n",
             &none, 1, "key 'set.cs.link_Bps.pcie'");
    snprintf(text, sizeof(text),
             "point,gen.algorithm,gen.gpus,platform," PRED_HDR
             "0,ring,4,%s,1024,256,float,1,1,1,ok,0\n",
             plat);
    init_bad(text, &both, 1, "has a schedule column; drop --schedule");
    init_bad(text, &(struct cs_regress_init_opts){NULL, plat, NULL}, 1,
             "has a platform column; drop --platform");
    init_bad(PRED_HDR, &both, 0, "no rows");
}
END_TEST

/* The JUnit report parses as XML, counts its testcases and failures, and says old, new and
 * change in each failure. */
START_TEST(junit)
{
    char text[8192], plat[1024], *xml = NULL;
    const char *res_csv = PRED_HDR "1024,256,float,100.5,1,2,ok,0\n"
                                   "2048,512,float,120,1,3,ok,0\n";
    struct cs_regress_base *b = NULL;
    struct cs_table *res = NULL;
    struct cs_regress_cmp c[3];
    struct cs_error err;
    size_t len = 0;
    FILE *fp = open_memstream(&xml, &len);
    xmlDocPtr doc;
    xmlXPathContextPtr ctx;
    xmlXPathObjectPtr o;

    snprintf(plat, sizeof(plat), "%s/platforms/dgx-a100.xml", test_srcdir());
    snprintf(text, sizeof(text),
             HEADER "gen:ring:gpus=4,%s,-,1024,100,1,ok\ngen:ring:gpus=4,%s,-,2048,100,1,ok\n"
                    "gen:ring:gpus=4,%s,LL,1024,100,1,ok\n",
             plat, plat, plat);
    cs_error_init(&err);
    ck_assert_int_eq(cs_regress_read(write_baseline(text), &b, &err), 0);
    ck_assert_int_eq(cs_table_parse(res_csv, strlen(res_csv), "res", &res, &err), 0);
    for (int i = 0; i < 2; i++)
        cs_regress_compare(b, i, res, TOL(1, 0), &c[i]);
    cs_regress_junit_begin(fp, "a&b<\"x\">.csv", 3, 1, 1);
    cs_regress_junit_case(fp, b, &c[0], TOL(1, 0));
    cs_regress_junit_case(fp, b, &c[1], TOL(1, 0));
    cs_regress_junit_error(fp, b, 2, "the prediction failed");
    cs_regress_junit_end(fp);
    ck_assert_int_eq(fclose(fp), 0);
    ck_assert_ptr_nonnull(doc = xmlReadMemory(xml, (int)len, "junit.xml", NULL, XML_PARSE_NONET));
    ck_assert_ptr_nonnull(ctx = xmlXPathNewContext(doc));
    o = xmlXPathEvalExpression(BAD_CAST "count(/testsuites[@tests='3'][@failures='1'][@errors='1']"
                                        "/testsuite[@name='a&b<\"x\">.csv']/testcase)",
                               ctx);
    ck_assert(o != NULL && o->floatval == 3);
    xmlXPathFreeObject(o);
    o = xmlXPathEvalExpression(BAD_CAST "string(//testcase[failure]/@name)", ctx);
    ck_assert_str_eq((const char *)o->stringval, "2048 bytes");
    xmlXPathFreeObject(o);
    o = xmlXPathEvalExpression(BAD_CAST "string(//testcase[failure]/@classname)", ctx);
    ck_assert_ptr_nonnull(strstr((const char *)o->stringval, "gen:ring:gpus=4 on "));
    xmlXPathFreeObject(o);
    o = xmlXPathEvalExpression(BAD_CAST "string(//failure/@message)", ctx);
    ck_assert_msg(strstr((const char *)o->stringval, "old 100 us (ok), new 120 us (ok), change "
                                                     "+20.00%") != NULL,
                  "%s", o->stringval);
    xmlXPathFreeObject(o);
    o = xmlXPathEvalExpression(BAD_CAST "string(//testcase[error]/@classname)", ctx);
    ck_assert_ptr_nonnull(strstr((const char *)o->stringval, ", LL"));
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    xmlFreeDoc(doc);
    free(xml);
    cs_table_free(res);
    remove_baseline(b->path);
    cs_regress_free(b);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {moved, 1},
        {geometric, 1},
        {resolve, 1},
        {read_committed, 1},
        {read_refused, 1},
        {read_refused_results, 1},
        {read_results_accepted, 1},
        {read_large, 1},
        {select_groups, 1},
        {compare_update_write, 1},
        {predict_group, 1},
        {init_built, 1},
        {init_refused, 1},
        {junit, 1},
        {NULL, 0},
    };

    /* a guard against hangs, not a speed test: read_large reads 80000 rows on a loaded machine */
    return test_run("regress", 60, tests, NULL);
}
