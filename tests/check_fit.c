/* check_fit.c: alpha-beta fits: recovery of known parameters, breakpoints, constraints,
 * intervals, bad input, and sanity on the shared measurements. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "fit.h"
#include "runner.h"
#include "testutil.h"

/* Deterministic noise: xorshift64* and Box-Muller. */
static unsigned long long rng_state;

static double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
    double u = uniform(), v = uniform();

    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Sizes 8 B .. 1 GiB, 3 per octave, `samples` each; t from a piecewise model with
 * multiplicative Gaussian noise of relative sd `noise`. Returns the count. */
struct regime {
    double upto_bytes, alpha_s, beta_Bps;
};

static int synth(const struct regime *rg, int nrg, double lo, double hi, int samples, double noise,
                 struct cs_fit_pt *p)
{
    int n = 0;

    for (double s = lo; s <= hi * 1.0001; s *= pow(2.0, 1.0 / 3)) {
        double size = floor(s);
        int k = 0;

        while (k < nrg - 1 && size > rg[k].upto_bytes)
            k++;
        for (int j = 0; j < samples; j++) {
            p[n].x = size;
            p[n].t = (rg[k].alpha_s + size / rg[k].beta_Bps) * (1 + noise * gauss());
            n++;
        }
    }
    return n;
}

static double relerr(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

START_TEST(test_t_quantile)
{
    ck_assert(fabs(cs_fit_t975(1) - 12.7062) < 1e-4);
    ck_assert(fabs(cs_fit_t975(10) - 2.2281) < 1e-4);
    ck_assert(fabs(cs_fit_t975(31) - 2.0395) < 2e-4);
    ck_assert(fabs(cs_fit_t975(60) - 2.0003) < 2e-4);
    ck_assert(fabs(cs_fit_t975(120) - 1.9799) < 2e-4);
    ck_assert(fabs(cs_fit_t975(100000) - 1.96) < 1e-3);
    ck_assert(isnan(cs_fit_t975(0)));
}
END_TEST

/* Exact data: the fit is exact and the intervals collapse. */
START_TEST(test_exact_line)
{
    struct cs_fit_pt p[100];
    struct cs_fit_line L;
    struct regime rg = {INFINITY, 5e-6, 50e9};
    int n = synth(&rg, 1, 8, 1 << 30, 1, 0, p);

    ck_assert_int_le(n, 100);
    ck_assert_int_eq(cs_fit_line(p, n, 0, &L, NULL), 0);
    ck_assert(relerr(L.alpha_s, 5e-6) < 1e-9);
    ck_assert(relerr(L.beta_Bps, 50e9) < 1e-9);
    ck_assert(L.alpha_ci_s < 1e-15 && L.max_rel < 1e-9);
    ck_assert(!L.alpha_clamped && !L.slope_clamped);
    ck_assert_int_eq(L.n, n);
    ck_assert_int_eq(L.dof, n - 2);
}
END_TEST

/* calibration.md 3.5's synthetic check: alpha 2 us, beta 150 GB/s, 2% noise, 8 B..1 GiB, 3 per
 * octave, 10 samples; both recovered within 2%, and the 95% intervals hold the truth. */
START_TEST(test_recover_noisy)
{
    static struct cs_fit_pt p[2000];
    struct cs_fit_line L;
    int n, held = 0;

    for (int trial = 0; trial < 20; trial++) {
        struct regime rg = {INFINITY, 2e-6, 150e9};

        rng_state = 0x9e3779b97f4a7c15ULL + (unsigned long long)trial;
        n = synth(&rg, 1, 8, 1 << 30, 10, 0.02, p);
        ck_assert_int_eq(cs_fit_line(p, n, 0, &L, NULL), 0);
        ck_assert_msg(relerr(L.alpha_s, 2e-6) < 0.02, "trial %d alpha %g", trial, L.alpha_s);
        ck_assert_msg(relerr(L.beta_Bps, 150e9) < 0.02, "trial %d beta %g", trial, L.beta_Bps);
        held += fabs(L.alpha_s - 2e-6) <= L.alpha_ci_s &&
                fabs(L.slope_s_per_B - 1 / 150e9) <= L.slope_ci;
        ck_assert(L.beta_lo_Bps < L.beta_Bps && L.beta_Bps < L.beta_hi_Bps);
    }
    /* Two 95% intervals jointly: expect about 18 of 20; 15 leaves room for chance. */
    ck_assert_int_ge(held, 15);
}
END_TEST

/* Outliers (3% of samples 5..30 us late): Huber IRLS keeps alpha within 2%, plain WLS does not
 * need to. */
START_TEST(test_robust_outliers)
{
    static struct cs_fit_pt p[2000];
    struct regime rg = {INFINITY, 2e-6, 150e9};
    struct cs_fit_line L;
    int n;

    rng_state = 12345;
    n = synth(&rg, 1, 8, 1 << 30, 10, 0.005, p);
    for (int i = 0; i < n; i++)
        if (uniform() < 0.03)
            p[i].t += 5e-6 + 25e-6 * uniform();
    ck_assert_int_eq(cs_fit_line(p, n, 1, &L, NULL), 0);
    ck_assert_msg(relerr(L.alpha_s, 2e-6) < 0.02, "alpha %g", L.alpha_s);
    ck_assert_msg(relerr(L.beta_Bps, 150e9) < 0.02, "beta %g", L.beta_Bps);
}
END_TEST

/* A negative intercept is clamped to 0 and flagged; a falling curve gets slope 0. */
START_TEST(test_constraints)
{
    struct cs_fit_pt p[] = {{1e3, 0}, {1e4, 0}, {1e5, 0}, {1e6, 0}};
    struct cs_fit_pt p2[] = {{1e3, 4e-6}, {1e4, 3.9e-6}, {1e5, 3.8e-6}, {1e6, 3.7e-6}};
    struct cs_fit_line L;

    for (int i = 0; i < 4; i++)
        p[i].t =
            p[i].x / 10e9 - 2e-9 * (i == 0); /* the smallest point pulls the intercept below 0 */
    ck_assert_int_eq(cs_fit_line(p, 4, 0, &L, NULL), 0);
    ck_assert(L.alpha_clamped && L.alpha_s == 0 && L.alpha_ci_s == 0);
    ck_assert(relerr(L.beta_Bps, 10e9) < 0.01);
    ck_assert_int_eq(L.dof, 3);
    ck_assert_int_eq(cs_fit_line(p2, 4, 0, &L, NULL), 0);
    ck_assert(L.slope_clamped && L.slope_s_per_B == 0 && isinf(L.beta_Bps));
    ck_assert(L.alpha_s > 3.7e-6 && L.alpha_s < 4e-6);
}
END_TEST

/* Three regimes like LL / LL128 / Simple: the segmented fit finds them and their parameters. */
START_TEST(test_breakpoints)
{
    static struct cs_fit_pt p[1000];
    static const struct regime rg[] = {
        {65536, 10e-6, 30e9},
        {4194304, 25e-6, 120e9},
        {INFINITY, 60e-6, 200e9},
    };
    struct cs_fit_result R;
    struct cs_fit_resid *res;
    int n, nres;

    rng_state = 777;
    n = synth(rg, 3, 64, 1 << 30, 5, 0.01, p);
    ck_assert_int_eq(cs_fit_segmented(p, n, NULL, &R, NULL), 0);
    ck_assert_int_eq(R.nseg, 3);
    ck_assert(R.bic_by_m[3] < R.bic_by_m[2] && R.bic_by_m[3] < R.bic_by_m[1]);
    for (int k = 0; k < 3; k++) {
        ck_assert_msg(relerr(R.seg[k].alpha_s, rg[k].alpha_s) < 0.03, "seg %d alpha %g", k,
                      R.seg[k].alpha_s);
        ck_assert_msg(relerr(R.seg[k].beta_Bps, rg[k].beta_Bps) < 0.03, "seg %d beta %g", k,
                      R.seg[k].beta_Bps);
    }
    /* The breakpoints sit at the true regime edges (the last size at or below them). */
    ck_assert(R.seg[0].x_max <= 65536 && R.seg[1].x_min > 65536);
    ck_assert(R.seg[0].x_max * pow(2, 1.0 / 3) > 65536);
    ck_assert(R.seg[1].x_max <= 4194304 && R.seg[2].x_min > 4194304);
    ck_assert_int_eq(cs_fit_residuals(&R, p, n, &res, &nres), 0);
    ck_assert_int_eq(nres, n / 5);
    for (int i = 0; i < nres; i++) {
        ck_assert_int_eq(res[i].nsamples, 5);
        ck_assert(fabs(res[i].err_rel) < 0.03);
        ck_assert(i == 0 || res[i].x > res[i - 1].x);
    }
    free(res);
    /* One straight line stays one segment. */
    n = synth(rg + 2, 1, 64, 1 << 30, 5, 0.01, p);
    ck_assert_int_eq(cs_fit_segmented(p, n, NULL, &R, NULL), 0);
    ck_assert_int_eq(R.nseg, 1);
}
END_TEST

START_TEST(test_forced_segments)
{
    static struct cs_fit_pt p[300];
    static const struct regime rg[] = {{1e6, 5e-6, 10e9}, {INFINITY, 50e-6, 20e9}};
    struct cs_fit_opts o = {.nsegments = 2};
    struct cs_fit_result R;
    int n;

    rng_state = 99;
    n = synth(rg, 2, 1024, 1 << 28, 2, 0.0, p);
    ck_assert_int_eq(cs_fit_segmented(p, n, &o, &R, NULL), 0);
    ck_assert_int_eq(R.nseg, 2);
    ck_assert(isnan(R.bic_by_m[1]));
    ck_assert(relerr(cs_fit_eval(&R, 4096), 5e-6 + 4096 / 10e9) < 1e-9);
    ck_assert(relerr(cs_fit_eval(&R, 1 << 28), 50e-6 + (1 << 28) / 20e9) < 1e-9);
    o.nsegments = 1;
    ck_assert_int_eq(cs_fit_segmented(p, n, &o, &R, NULL), 0);
    ck_assert_int_eq(R.nseg, 1);
}
END_TEST

/* Bad input is an error with a message, never a crash or a number. */
START_TEST(test_degenerate)
{
    struct cs_fit_pt p[] = {{1, 1e-6}, {2, 2e-6}, {3, 3e-6}, {4, 4e-6}};
    struct cs_fit_pt same[] = {{8, 1e-6}, {8, 2e-6}, {8, 3e-6}, {8, 4e-6}};
    struct cs_fit_line L;
    struct cs_fit_result R;
    struct cs_fit_opts o = {0};
    struct cs_error err;
    double saved;

    cs_error_init(&err);
    ck_assert_int_eq(cs_fit_line(p, 2, 0, &L, &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "at least 3") != NULL, "%s", err.msg);
    ck_assert_int_eq(cs_fit_line(p, 0, 0, &L, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_fit_segmented(p, 0, NULL, &R, NULL), CS_ERR_INVALID);
    cs_error_init(&err);
    ck_assert_int_eq(cs_fit_line(same, 4, 0, &L, &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "same size") != NULL, "%s", err.msg);
    ck_assert_int_eq(cs_fit_segmented(same, 4, NULL, &R, NULL), CS_ERR_INVALID);
    for (int bad = 0; bad < 5; bad++) {
        double *v = bad < 3 ? &p[2].t : &p[2].x;
        double vals[] = {0, NAN, -1e-6, INFINITY, -1};

        saved = *v;
        *v = vals[bad];
        cs_error_init(&err);
        ck_assert_int_eq(cs_fit_line(p, 4, 0, &L, &err), CS_ERR_INVALID);
        ck_assert_msg(strstr(err.msg, "point 2") != NULL, "%s", err.msg);
        ck_assert_int_eq(cs_fit_segmented(p, 4, NULL, &R, NULL), CS_ERR_INVALID);
        *v = saved;
    }
    o.nsegments = CS_FIT_MAX_SEG + 1;
    ck_assert_int_eq(cs_fit_segmented(p, 4, &o, &R, NULL), CS_ERR_INVALID);
    o.min_sizes = 1;
    o.nsegments = 0;
    ck_assert_int_eq(cs_fit_segmented(p, 4, &o, &R, NULL), CS_ERR_INVALID);
    o.min_sizes = 0;
    o.nsegments = 3; /* 4 sizes cannot hold 3 segments of 3 */
    cs_error_init(&err);
    ck_assert_int_eq(cs_fit_segmented(p, 4, &o, &R, &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "too few") != NULL, "%s", err.msg);
    /* Two sizes with repeats: one segment fits, exactly determined sizes still give a line. */
    {
        struct cs_fit_pt p2[] = {{10, 1e-6}, {10, 1.1e-6}, {20, 2e-6}, {20, 2.1e-6}};

        ck_assert_int_eq(cs_fit_segmented(p2, 4, NULL, &R, NULL), 0);
        ck_assert_int_eq(R.nseg, 1);
    }
}
END_TEST

/* Fits on the shared measurements give physically sane numbers. */
static int load_times(const char *name, struct cs_fit_pt *p, int max)
{
    const char *shared = test_shared_data();
    char path[4300];
    struct cs_csv *tab = NULL;
    int n = 0;

    if (shared == NULL)
        return -1;
    snprintf(path, sizeof(path), "%s/measurements/%s", shared, name);
    if (cs_csv_read(path, &tab, NULL) != 0)
        return -1;
    for (int r = 0; r < tab->nrows && n < max; r++) {
        double s, us;

        if (cs_csv_get_double(tab, r, 0, &s, NULL) == 0 &&
            cs_csv_get_double(tab, r, 1, &us, NULL) == 0) {
            p[n].x = s;
            p[n].t = us * 1e-6;
            n++;
        }
    }
    cs_csv_free(tab);
    return n;
}

START_TEST(test_shared_measurements)
{
    struct cs_fit_pt p[200];
    struct cs_fit_result R;
    int n = load_times("oci-bmgpu48-a100sxm40-1node-8gpu.csv", p, 200);
    const struct cs_fit_line *last;

    ck_assert_int_eq(n, 56);
    ck_assert_int_eq(cs_fit_segmented(p, n, NULL, &R, NULL), 0);
    ck_assert_int_ge(R.nseg, 2);
    /* Small sizes: the ~32 us floor of this containerised system. */
    ck_assert(R.seg[0].alpha_s > 25e-6 && R.seg[0].alpha_s < 40e-6);
    /* Large sizes: algorithm bandwidth near 134 GB/s (busbw 235 GB/s for 8 ranks). */
    last = &R.seg[R.nseg - 1];
    ck_assert_msg(last->beta_Bps > 120e9 && last->beta_Bps < 140e9, "beta %g", last->beta_Bps);
    for (int k = 0; k < R.nseg; k++)
        ck_assert(R.seg[k].alpha_s >= 0 && R.seg[k].beta_Bps > 0);

    n = load_times("sm02-a100pcie40-1node-4gpu-sys.csv", p, 200);
    ck_assert_int_eq(cs_fit_segmented(p, n, NULL, &R, NULL), 0);
    last = &R.seg[R.nseg - 1];
    /* 4 ranks all-SYS: busbw ~5 GB/s, algbw ~3.4 GB/s. */
    ck_assert_msg(last->beta_Bps > 2.5e9 && last->beta_Bps < 4.5e9, "beta %g", last->beta_Bps);
    ck_assert(R.seg[0].alpha_s > 18e-6 && R.seg[0].alpha_s < 28e-6);
}
END_TEST

/* Launches of `ops` calls of each size, 1 KiB .. 1 MiB by 4, 5 samples: t = launch + ops * (call
 * + x / beta), with multiplicative noise of relative sd `noise`. Returns the count. */
static int synth_calls(double launch, double call, double beta, const double *ops, int nops,
                       double noise, struct cs_fit_call_pt *p)
{
    int n = 0;

    for (int o = 0; o < nops; o++)
        for (double x = 1024; x <= 1048576; x *= 4)
            for (int j = 0; j < 5; j++, n++)
                p[n] = (struct cs_fit_call_pt){
                    ops[o], x, (launch + ops[o] * (call + x / beta)) * (1 + noise * gauss())};
    return n;
}

/* Issue 15's truth: 1.5 us per call + bytes / 10 GB/s with a 5 us launch, over 1, 8 and 64 calls
 * per launch: exact data give it back to rounding, 0.5% noise within 2%. The per-op fit of the
 * same points as one series (the old mapping) misses it by more than 2%. */
START_TEST(test_calls_truth)
{
    static struct cs_fit_call_pt p[200];
    static struct cs_fit_pt q[200];
    const double ops[] = {1, 8, 64};
    struct cs_fit_calls F;
    struct cs_fit_line L;
    int n = synth_calls(5e-6, 1.5e-6, 10e9, ops, 3, 0, p);

    ck_assert_int_eq(cs_fit_calls(p, n, &F, NULL), 0);
    ck_assert(relerr(F.launch_s, 5e-6) < 1e-9 && relerr(F.call_s, 1.5e-6) < 1e-9);
    ck_assert(relerr(F.beta_Bps, 10e9) < 1e-9);
    ck_assert_int_eq(F.n, n);
    ck_assert_int_eq(F.nops, 3);
    ck_assert_int_eq(F.clamped, 0);
    ck_assert(F.max_rel < 1e-9);
    for (int trial = 0; trial < 10; trial++) {
        rng_state = 0x2545f4914f6cdd1dULL + (unsigned long long)trial;
        n = synth_calls(5e-6, 1.5e-6, 10e9, ops, 3, 0.005, p);
        ck_assert_int_eq(cs_fit_calls(p, n, &F, NULL), 0);
        ck_assert_msg(relerr(F.launch_s, 5e-6) < 0.02, "trial %d launch %g", trial, F.launch_s);
        ck_assert_msg(relerr(F.call_s, 1.5e-6) < 0.02, "trial %d call %g", trial, F.call_s);
        ck_assert_msg(relerr(F.beta_Bps, 10e9) < 0.02, "trial %d beta %g", trial, F.beta_Bps);
    }
    n = synth_calls(5e-6, 1.5e-6, 10e9, ops, 3, 0, p);
    for (int i = 0; i < n; i++)
        q[i] = (struct cs_fit_pt){p[i].x, p[i].t / p[i].ops};
    ck_assert_int_eq(cs_fit_line(q, n, 0, &L, NULL), 0);
    ck_assert(relerr(L.alpha_s, 1.5e-6) > 0.02 && relerr(L.beta_Bps, 10e9) > 0.02);
}
END_TEST

/* A negative parameter is fixed at 0 and flagged; too few call counts, sizes or points, and bad
 * points, are errors that say why. */
START_TEST(test_calls_constraints)
{
    static struct cs_fit_call_pt p[200];
    const double ops[] = {1, 8, 64}, one[] = {64};
    struct cs_fit_calls F;
    struct cs_error err;
    int n = synth_calls(0, 2e-6, 20e9, ops, 3, 0, p);

    /* Times 1% below the truth at one call per launch pull the launch cost below 0. */
    for (int i = 0; i < n; i++)
        if (p[i].ops == 1)
            p[i].t *= 0.99;
    ck_assert_int_eq(cs_fit_calls(p, n, &F, NULL), 0);
    ck_assert_int_eq(F.clamped, 1);
    ck_assert(F.launch_s == 0 && F.call_s > 0 && F.slope_s_per_B > 0);
    cs_error_init(&err);
    n = synth_calls(5e-6, 1.5e-6, 10e9, one, 1, 0, p);
    ck_assert_int_eq(cs_fit_calls(p, n, &F, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "2 distinct call counts and 2 distinct sizes"));
    cs_error_init(&err);
    ck_assert_int_eq(cs_fit_calls(p, 3, &F, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "3 points: a launch + calls fit needs at least 4"));
    n = synth_calls(5e-6, 1.5e-6, 10e9, ops, 3, 0, p);
    p[7].ops = 0;
    cs_error_init(&err);
    ck_assert_int_eq(cs_fit_calls(p, n, &F, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "point 7: ops 0"));
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_t_quantile, 1},
        {test_exact_line, 1},
        {test_recover_noisy, 1},
        {test_robust_outliers, 1},
        {test_constraints, 1},
        {test_breakpoints, 1},
        {test_forced_segments, 1},
        {test_degenerate, 1},
        {test_calls_truth, 1},
        {test_calls_constraints, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_shared_measurements, 1},
        {NULL, 0},
    };

    return test_run("fit", 60, tests, shared);
}
