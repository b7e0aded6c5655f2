/* check_mfit.c: the regularised Levenberg-Marquardt fit on closed-form models: exact recovery,
 * priors holding what the data do not decide, keys the data cannot tell apart, ranges, missing
 * predictions, the reweighting towards the largest errors, and the linear algebra under it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfit.h"
#include "runner.h"

/* Models: t = theta0 + x / theta1 (a launch and a bandwidth), the x of each point in its tag
 * (bytes); variants for the tests below. */
enum { M_LINE = 1, M_PRODUCT, M_LINE_PLUS_UNUSED, M_FAIL, M_HOLE, M_KINK };

struct model {
    int kind;
    int calls;
};

static int model_fn(void *ctx, const double *th, struct cs_mfit_point *pts, int n,
                    struct cs_error *err)
{
    struct model *m = ctx;

    m->calls++;
    if (m->kind == M_FAIL && m->calls > 3)
        return cs_error_fail(err, CS_ERR_SIM, "m.xml", 7, "the model broke");
    for (int i = 0; i < n; i++) {
        double x = pts[i].tag;

        switch (m->kind) {
        case M_PRODUCT: /* only theta0 * theta1 matters */
            pts[i].pred = 1e-6 + x * th[0] * th[1];
            break;
        case M_HOLE: /* point 0 never predicts */
            pts[i].pred = i == 0 ? NAN : th[0] + x / th[1];
            break;
        case M_KINK: /* a line the data bend away from at the largest size */
            pts[i].pred = th[0] + x / th[1];
            break;
        default:
            pts[i].pred = th[0] + x / th[1];
        }
    }
    return 0;
}

/* Points of the line 5 us + x / 20 GB/s at x = 1 KiB .. 1 GiB (x in the tag). */
static int line_points(struct cs_mfit_point *p, double a, double b)
{
    int n = 0;

    for (double x = 1024; x <= 1073741824.0; x *= 4)
        p[n++] = (struct cs_mfit_point){a + x / b, 1, NAN, (int)fmin(x, 2e9), 0};
    return n;
}

static void key(struct cs_mfit_key *k, const char *name, double prior, double lo, double hi,
                double width)
{
    memset(k, 0, sizeof(*k));
    snprintf(k->key, sizeof(k->key), "%s", name);
    k->prior = prior;
    k->lo = lo;
    k->hi = hi;
    k->width = width;
}

START_TEST(test_solve)
{
    /* A = [[4, 2], [2, 3]], b = [2, 1]: x = [0.5, 0], A^-1 = [[3, -2], [-2, 4]] / 8 */
    double A[4] = {4, 2, 2, 3}, b[2] = {2, 1}, inv[4];
    double B[4] = {1, 2, 2, 1}; /* indefinite */

    ck_assert_int_eq(cs_mfit_solve(A, b, inv, 2), 0);
    ck_assert_double_eq_tol(b[0], 0.5, 1e-12);
    ck_assert_double_eq_tol(b[1], 0, 1e-12);
    ck_assert_double_eq_tol(inv[0], 3.0 / 8, 1e-12);
    ck_assert_double_eq_tol(inv[1], -2.0 / 8, 1e-12);
    ck_assert_double_eq_tol(inv[3], 4.0 / 8, 1e-12);
    ck_assert_int_eq(cs_mfit_solve(B, NULL, NULL, 2), -1);
}
END_TEST

/* From priors a factor 3 off, the fit lands on the truth, both keys identified, the intervals
 * around it, every point predicted exactly. */
START_TEST(test_recovers)
{
    struct cs_mfit_point p[16];
    struct cs_mfit_key k[2];
    struct cs_mfit_opts o = {0};
    struct cs_mfit_result r;
    struct model m = {M_LINE, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);

    key(&k[0], "cs.launch_s", 15e-6, 1e-7, 1e-3, log(4));
    key(&k[1], "cs.link_Bps.nvlink", 60e9, 1e9, 1e12, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), 0);
    ck_assert_double_eq_tol(k[0].value / 5e-6, 1, 1e-3);
    ck_assert_double_eq_tol(k[1].value / 20e9, 1, 1e-3);
    ck_assert(k[0].identified && k[1].identified);
    ck_assert(!k[0].at_bound && !k[1].insensitive);
    ck_assert(k[0].ci_lo <= k[0].value && k[0].value <= k[0].ci_hi);
    ck_assert(k[1].ci_lo <= 20e9 * 1.01 && 20e9 * 0.99 <= k[1].ci_hi);
    ck_assert(r.converged);
    ck_assert_int_eq(r.npred, n);
    ck_assert_int_eq(r.npairs, 0);
    ck_assert(k[0].identified && !cs_mfit_weak(&k[0]));
    ck_assert(k[1].identified && !cs_mfit_weak(&k[1]));
    for (int i = 0; i < n; i++)
        ck_assert_double_eq_tol(p[i].pred / p[i].meas, 1, 2e-3);
    ck_assert_int_eq(r.evals, m.calls);
}
END_TEST

/* A key the model ignores: screened out (insensitive), left at its prior, not identified; the
 * others still recovered. */
START_TEST(test_insensitive)
{
    struct cs_mfit_point p[16];
    struct cs_mfit_key k[3];
    struct cs_mfit_opts o = {.screen = 1e-4};
    struct cs_mfit_result r;
    struct model m = {M_LINE_PLUS_UNUSED, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);

    key(&k[0], "cs.launch_s", 8e-6, 1e-7, 1e-3, log(4));
    key(&k[1], "cs.link_Bps.nvlink", 30e9, 1e9, 1e12, log(4));
    key(&k[2], "cs.dep_s", 0.5e-6, 1e-9, 1e-4, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 3, p, n, model_fn, &m, &o, &r, &err), 0);
    ck_assert(k[2].insensitive && !k[2].identified);
    ck_assert_double_eq(k[2].value, 0.5e-6);
    ck_assert_double_eq_tol(k[0].value / 5e-6, 1, 1e-3);
    ck_assert_double_eq_tol(k[1].value / 20e9, 1, 1e-3);
}
END_TEST

/* Two keys whose product alone the data fix: the pair is reported, the product is right, and the
 * priors (equal widths) split it evenly in ln. */
START_TEST(test_pair)
{
    struct cs_mfit_point p[16];
    struct cs_mfit_key k[2];
    struct cs_mfit_opts o = {0};
    struct cs_mfit_result r;
    struct model m = {M_PRODUCT, 0};
    struct cs_error err;
    int n = 0;

    for (double x = 1024; x <= 1073741824.0; x *= 4) /* 1 us + x * 4e-11 */
        p[n++] = (struct cs_mfit_point){1e-6 + x * 4e-11, 1, NAN, (int)x, 0};
    key(&k[0], "cs.a", 1e-5, 1e-9, 1, log(4));
    key(&k[1], "cs.b", 1e-5, 1e-9, 1, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), 0);
    ck_assert_double_eq_tol(k[0].value * k[1].value / 4e-11, 1, 1e-3);
    ck_assert_double_eq_tol(k[0].value / k[1].value, 1, 1e-3);
    ck_assert_int_eq(r.npairs, 1);
    ck_assert(r.pairs[0].corr < -CS_MFIT_CORR);
    /* each alone is only as sure as its prior allows (about 1 / sqrt 2 of its width): weak */
    ck_assert(k[0].identified && cs_mfit_weak(&k[0]));
    ck_assert(k[1].identified && cs_mfit_weak(&k[1]));
}
END_TEST

/* The truth beyond a key's range: the fit ends on the edge and says so. */
START_TEST(test_bound)
{
    struct cs_mfit_point p[16];
    struct cs_mfit_key k[2];
    struct cs_mfit_opts o = {0};
    struct cs_mfit_result r;
    struct model m = {M_LINE, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);

    key(&k[0], "cs.launch_s", 2e-6, 1e-7, 3e-6, log(4)); /* at most 3 us: the truth is 5 */
    key(&k[1], "cs.link_Bps.nvlink", 30e9, 1e9, 1e12, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), 0);
    ck_assert_double_eq_tol(k[0].value, 3e-6, 1e-12);
    ck_assert(k[0].at_bound);
    ck_assert(k[0].ci_hi <= 3e-6);
}
END_TEST

/* A point the model never predicts is left out; the rest decide the keys. */
START_TEST(test_missing)
{
    struct cs_mfit_point p[16];
    struct cs_mfit_key k[2];
    struct cs_mfit_opts o = {0};
    struct cs_mfit_result r;
    struct model m = {M_HOLE, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);

    key(&k[0], "cs.launch_s", 8e-6, 1e-7, 1e-3, log(4));
    key(&k[1], "cs.link_Bps.nvlink", 30e9, 1e9, 1e12, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), 0);
    ck_assert_int_eq(r.npred, n - 1);
    ck_assert(isnan(p[0].pred));
    ck_assert_double_eq_tol(k[1].value / 20e9, 1, 1e-3);
}
END_TEST

/* One size off the line by 40%: least squares spreads it; the reweighting towards the largest
 * errors (max_rel) lowers the largest |error| (the median's target so wide that the rounds'
 * score is the largest error alone). */
START_TEST(test_reweight)
{
    struct cs_mfit_point p[16], q[16];
    struct cs_mfit_key k[2], k2[2];
    struct cs_mfit_opts plain = {0}, rw = {.max_rel = 0.05, .target_median = 1};
    struct cs_mfit_result r;
    struct model m = {M_KINK, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);
    double max_plain = 0, max_rw = 0;

    p[n - 1].meas *= 1.4;
    memcpy(q, p, sizeof(p));
    key(&k[0], "cs.launch_s", 8e-6, 1e-7, 1e-3, log(4));
    key(&k[1], "cs.link_Bps.nvlink", 30e9, 1e9, 1e12, log(4));
    memcpy(k2, k, sizeof(k));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &plain, &r, &err), 0);
    ck_assert_int_eq(cs_mfit_run(k2, 2, q, n, model_fn, &m, &rw, &r, &err), 0);
    for (int i = 0; i < n; i++) {
        max_plain = fmax(max_plain, fabs(p[i].pred / p[i].meas - 1));
        max_rw = fmax(max_rw, fabs(q[i].pred / q[i].meas - 1));
    }
    ck_assert_msg(max_rw < max_plain - 0.01, "max |error| %g reweighted, %g plain", max_rw,
                  max_plain);
    for (int i = 0; i < n; i++) /* the weights are given back */
        ck_assert_double_eq(q[i].weight, 1);
}
END_TEST

/* The same bent size set aside (its table contradicts it): the rounds neither weigh it up nor
 * count it in the largest error, so the other sizes stay on their line; without aside the rounds
 * pull the line towards it. */
START_TEST(test_aside)
{
    struct cs_mfit_point p[16], q[16];
    struct cs_mfit_key k[2], k2[2];
    struct cs_mfit_opts rw = {.max_rel = 0.05};
    struct cs_mfit_result r;
    struct model m = {M_KINK, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);
    double rest_aside = 0, rest_chased = 0;

    p[n - 1].meas *= 1.4;
    memcpy(q, p, sizeof(p));
    q[n - 1].aside = 1;
    key(&k[0], "cs.launch_s", 8e-6, 1e-7, 1e-3, log(4));
    key(&k[1], "cs.link_Bps.nvlink", 30e9, 1e9, 1e12, log(4));
    memcpy(k2, k, sizeof(k));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &rw, &r, &err), 0);
    ck_assert_int_eq(cs_mfit_run(k2, 2, q, n, model_fn, &m, &rw, &r, &err), 0);
    for (int i = 0; i < n - 1; i++) {
        rest_chased = fmax(rest_chased, fabs(p[i].pred / p[i].meas - 1));
        rest_aside = fmax(rest_aside, fabs(q[i].pred / q[i].meas - 1));
    }
    ck_assert_msg(rest_aside < rest_chased, "other sizes' max |error| %g aside, %g chased",
                  rest_aside, rest_chased);
    ck_assert_msg(fabs(q[n - 1].pred / q[n - 1].meas - 1) > 0.1,
                  "the point aside was still fitted: %g", q[n - 1].pred / q[n - 1].meas - 1);
}
END_TEST

START_TEST(test_errors)
{
    struct cs_mfit_point p[16];
    struct cs_mfit_key k[2];
    struct cs_mfit_opts o = {0};
    struct cs_mfit_result r;
    struct model m = {M_FAIL, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);

    key(&k[0], "cs.launch_s", 8e-6, 1e-7, 1e-3, log(4));
    key(&k[1], "cs.link_Bps.nvlink", 30e9, 1e9, 1e12, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), CS_ERR_SIM);
    ck_assert_str_eq(err.msg, "the model broke");
    ck_assert_int_eq(err.line, 7);
    /* a prior outside its range, a point of no time */
    m.kind = M_LINE;
    key(&k[0], "cs.launch_s", 8e-6, 1e-5, 1e-3, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "cs.launch_s"));
    key(&k[0], "cs.launch_s", 8e-6, 1e-7, 1e-3, log(4));
    p[3].meas = 0;
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "point 3"));
}
END_TEST

/* Fixed keys (width 0) stay; the others fit around them. */
START_TEST(test_fixed)
{
    struct cs_mfit_point p[16];
    struct cs_mfit_key k[2];
    struct cs_mfit_opts o = {0};
    struct cs_mfit_result r;
    struct model m = {M_LINE, 0};
    struct cs_error err;
    int n = line_points(p, 5e-6, 20e9);

    key(&k[0], "cs.launch_s", 5e-6, 1e-7, 1e-3, 0);
    key(&k[1], "cs.link_Bps.nvlink", 30e9, 1e9, 1e12, log(4));
    cs_error_init(&err);
    ck_assert_int_eq(cs_mfit_run(k, 2, p, n, model_fn, &m, &o, &r, &err), 0);
    ck_assert_double_eq(k[0].value, 5e-6);
    ck_assert(!k[0].identified);
    ck_assert_double_eq_tol(k[1].value / 20e9, 1, 1e-3);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_solve, 1},    {test_recovers, 1}, {test_insensitive, 1},
        {test_pair, 1},     {test_bound, 1},    {test_missing, 1},
        {test_reweight, 1}, {test_aside, 1},    {test_errors, 1},
        {test_fixed, 1},    {NULL, 0},
    };

    return test_run("mfit", 60, tests, NULL);
}
