/* check_refit.c: the fit through the model: key limits, the keys a calibration fits for its
 * tables, and the residual statistics with the sizes a table contradicts (the fit through the
 * replay itself: tests/calibrate_platform.sh). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "refit.h"
#include "runner.h"

START_TEST(test_key_limits)
{
    double lo, hi, w;

    ck_assert_int_eq(cs_refit_key_limits("cs.launch_s", &lo, &hi, &w), 0);
    ck_assert(lo > 0 && lo < 8.4e-6 && hi > 8.4e-6 && w > 0);
    ck_assert_int_eq(cs_refit_key_limits("cs.call_s.LL128.nvlink", &lo, &hi, &w), 0);
    ck_assert_int_eq(cs_refit_key_limits("cs.link_eff.LL.net", &lo, &hi, &w), 0);
    ck_assert(hi == 1);
    ck_assert_int_eq(cs_refit_key_limits("cs.pass_s.LL", &lo, &hi, &w), 0);
    /* counts and deployment choices are not fitted */
    ck_assert_int_eq(cs_refit_key_limits("cs.gpus_per_process", &lo, &hi, &w), -1);
    ck_assert_int_eq(cs_refit_key_limits("cs.gpu_sms", &lo, &hi, &w), -1);
    ck_assert_int_eq(cs_refit_key_limits("cs.launch_s.LL", &lo, &hi, &w), -1);
}
END_TEST

/* A case from a line's fields (blank-separated). */
static void case_of(struct cs_case *c, const char *line)
{
    char buf[512], *f[16], *save = NULL;
    int nf = 0;
    struct cs_error err;

    snprintf(buf, sizeof(buf), "%s", line);
    for (char *t = strtok_r(buf, " ", &save); t != NULL && nf < 16; t = strtok_r(NULL, " ", &save))
        f[nf++] = t;
    cs_error_init(&err);
    ck_assert_msg(cs_case_parse(c, f, nf, 1, "cases.txt", 1, &err) == 0, "%s: %s", line, err.msg);
}

static int has(char (*keys)[64], int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], key) == 0)
            return 1;
    return 0;
}

/* The keys follow the tables: NCCL's kernel runs no MSCCL executor costs; a schedule of its own
 * adds them; one process driving several GPUs adds their later launches; a case's own set= and a
 * held-out table add nothing; the family's link classes name the rest. */
START_TEST(test_candidates)
{
    struct cs_platform_spec spec;
    struct cs_refit_table t[2];
    struct cs_params base;
    struct cs_refit r;
    char keys[64][64];
    int n;

    memset(t, 0, sizeof(t));
    cs_platform_spec_init(&spec, CS_FAM_DGX);
    cs_params_init(&base);
    ck_assert_int_eq(cs_platform_spec_params(&spec, &base, NULL), 0);
    case_of(&t[0].c, "nccl m.csv gen:nccl:gpus=8,channels=24,nccl=2.12.12 - nccl");
    case_of(&t[1].c, "ap m2.csv ap.xml - LL set=cs.gpus_per_process=8 set=cs.copy_Bps=1e11");
    r = (struct cs_refit){&spec, base, t, 1, "/nonexistent", 1};
    cs_refit_candidates(&r, keys, 64, &n);
    ck_assert(has(keys, n, "cs.launch_s") && has(keys, n, "cs.link_lat_s.nvlink") &&
              has(keys, n, "cs.link_Bps.nvlink") && has(keys, n, "cs.tb_Bps.LL") &&
              has(keys, n, "cs.pass_s.LL") && has(keys, n, "cs.tb_Bps.LL128") &&
              has(keys, n, "cs.call_s.Simple.nvlink") && has(keys, n, "cs.link_eff.LL.nvlink"));
    ck_assert(!has(keys, n, "cs.link_eff.Simple.nvlink")); /* Simple has no line efficiency */
    ck_assert(!has(keys, n, "cs.prologue_s") && !has(keys, n, "cs.reduce_Bps") &&
              !has(keys, n, "cs.launch_gpu_s"));
    ck_assert(!has(keys, n, "cs.link_Bps.pcie") && !has(keys, n, "cs.link_Bps.net"));
    r.ntables = 2;
    cs_refit_candidates(&r, keys, 64, &n);
    ck_assert(has(keys, n, "cs.prologue_s") && has(keys, n, "cs.reduce_Bps") &&
              has(keys, n, "cs.dep_s") && has(keys, n, "cs.launch_gpu_s"));
    ck_assert(!has(keys, n, "cs.copy_Bps")); /* the case sets it */
    t[1].held_out = 1;
    cs_refit_candidates(&r, keys, 64, &n);
    ck_assert(!has(keys, n, "cs.prologue_s") && !has(keys, n, "cs.launch_gpu_s"));
    cs_refit_candidates(&r, keys, 3, &n); /* at most max */
    ck_assert_int_eq(n, 3);
    cs_case_cleanup(&t[0].c);
    cs_case_cleanup(&t[1].c);
}
END_TEST

/* Median and max over the fitted or held-out tables; the max kept leaves out the sizes a table
 * contradicts and names the worst size left; a missing prediction counts as a size, not an
 * error. */
START_TEST(test_stats)
{
    struct cs_valid_point a[4], b[2];
    struct cs_refit_table t[2];
    struct cs_refit r = {0};
    struct cs_refit_stats st;

    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    memset(t, 0, sizeof(t));
    for (int i = 0; i < 4; i++) {
        a[i].size_bytes = 1024 << i;
        a[i].meas_s = 1e-5;
    }
    a[0].pred_s = 1.01e-5;
    a[1].pred_s = 0.97e-5;
    a[2].pred_s = 1.5e-5; /* contradicted: out of the max kept */
    a[2].contra = 1;
    a[3].pred_s = NAN;
    b[0] = a[0];
    b[0].pred_s = 2e-5;
    b[1] = a[1];
    t[0].p = a;
    t[0].n = 4;
    t[1].p = b;
    t[1].n = 2;
    t[1].held_out = 1;
    r.tables = t;
    r.ntables = 2;
    cs_refit_stats(&r, 0, &st);
    ck_assert_int_eq(st.n, 4);
    ck_assert_int_eq(st.npred, 3);
    ck_assert_int_eq(st.ncontra, 1);
    ck_assert_double_eq_tol(st.median, 0.03, 1e-9);
    ck_assert_double_eq_tol(st.max, 0.5, 1e-9);
    ck_assert_double_eq_tol(st.max_kept, 0.03, 1e-9);
    ck_assert_int_eq(st.max_kept_table, 0);
    ck_assert_double_eq(st.max_kept_size, 2048);
    cs_refit_stats(&r, 1, &st);
    ck_assert_int_eq(st.n, 2);
    ck_assert_double_eq_tol(st.max, 1, 1e-9);
    cs_refit_stats(&r, -1, &st);
    ck_assert_int_eq(st.n, 6);
    ck_assert_int_eq(st.npred, 5);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_key_limits, 1},
        {test_candidates, 1},
        {test_stats, 1},
        {NULL, 0},
    };

    return test_run("refit", 600, tests, NULL);
}
