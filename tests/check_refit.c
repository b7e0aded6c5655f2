/* check_refit.c: the fit through the model: bands, first guesses, the loop on analytic models,
 * and the replay as its predictor. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "plan.h"
#include "refit.h"
#include "runner.h"

/* An analytic ring: t = launch + fixed_s + S * nsteps / nranks / link_Bps.nvlink, 14 steps of
 * S/8; calls counts the predictions, fail makes the next one fail, none predicts nothing. */
struct ring {
    double fixed_s;
    int calls, fail, none;
};

static int ring_predict(void *ctx, const struct cs_params *p, struct cs_refit_point *pts, int n,
                        struct cs_error *err)
{
    struct ring *r = ctx;

    r->calls++;
    if (r->fail)
        return cs_error_fail(err, CS_ERR_INVALID, "x.xml", 3, "broken");
    for (int i = 0; i < n; i++) {
        pts[i].pred_s = r->none ? NAN
                                : p->launch_s + r->fixed_s +
                                      pts[i].size_bytes * 14 / 8 / p->link_Bps[CS_LINK_NVLINK];
        snprintf(pts[i].proto, sizeof(pts[i].proto), "LL");
    }
    return 0;
}

/* Sizes 64 B .. 8 GiB, doubling, measured on the analytic ring with launch and bw. */
static int measure(struct cs_refit_point *pts, double launch, double fixed, double bw)
{
    int n = 0;

    for (double S = 64; S <= 8589934592.0; S *= 2)
        pts[n++] = (struct cs_refit_point){S, launch + fixed + S * 14 / 8 / bw, NAN, "", 0};
    return n;
}

/* The loop's start on the points of an 8-rank ring, as the command makes it: the first-guess fit,
 * the first guess from it into p (defaults first), and the points' bands. */
static void start(struct cs_refit_point *pts, int n, struct cs_params *p)
{
    struct cs_fit_pt fp[64];
    struct cs_fit_opts fo = {0};
    struct cs_fit_result R;
    struct cs_error err;

    for (int i = 0; i < n; i++)
        fp[i] = (struct cs_fit_pt){pts[i].size_bytes * 14 / 8, pts[i].meas_s};
    cs_error_init(&err);
    ck_assert_int_eq(cs_fit_segmented(fp, n, &fo, &R, &err), 0);
    cs_params_init(p);
    cs_refit_first_guess(p, CS_LINK_NVLINK, &R, 14, 8);
    cs_refit_bands(pts, n, &R, 14, 8, NULL, NULL);
}

static void one_line(struct cs_fit_result *R, double alpha, double beta)
{
    memset(R, 0, sizeof(*R));
    R->nseg = 1;
    R->seg[0].alpha_s = alpha;
    R->seg[0].beta_Bps = beta;
}

START_TEST(test_bands)
{
    struct cs_refit_point pts[4] = {
        {1024, 1, NAN, "", 0}, {1e6, 1, NAN, "", 0}, {1e9, 1, NAN, "", 0}, {8e9, 1, NAN, "", 0}};
    struct cs_fit_result R;
    double lat[2] = {1e6, 1e6}, bw[2] = {1024, 1024};

    /* A = 10 us, B = 100 GB/s, x = 14 S / 8: latency while x / B <= 0.1 us (S <= 5714 B),
     * bandwidth while x / B >= 1 ms (S >= 57.1 MB). */
    one_line(&R, 10e-6, 100e9);
    cs_refit_bands(pts, 4, &R, 14, 8, NULL, NULL);
    ck_assert_int_eq(pts[0].band, CS_REFIT_LATENCY);
    ck_assert_int_eq(pts[1].band, CS_REFIT_NONE);
    ck_assert_int_eq(pts[2].band, CS_REFIT_BANDWIDTH);
    ck_assert_int_eq(pts[3].band, CS_REFIT_BANDWIDTH);
    /* Given ranges replace the rule (the latency range first). */
    cs_refit_bands(pts, 4, &R, 14, 8, lat, bw);
    ck_assert_int_eq(pts[0].band, CS_REFIT_BANDWIDTH);
    ck_assert_int_eq(pts[1].band, CS_REFIT_LATENCY);
    ck_assert_int_eq(pts[2].band, CS_REFIT_NONE);
}
END_TEST

START_TEST(test_first_guess)
{
    struct cs_params p;
    struct cs_fit_result R;

    cs_params_init(&p);
    p.link_lat_s[CS_LINK_NVLINK] = 0.5e-6;
    p.launch_gpu_s = 2e-6;
    p.gpus_per_process = 4; /* 3 later launches on 8 GPUs */
    one_line(&R, 20e-6, 200e9);
    cs_refit_first_guess(&p, CS_LINK_NVLINK, &R, 14, 8);
    ck_assert_double_eq_tol(p.launch_s, 20e-6 - 7e-6 - 6e-6, 1e-15);
    ck_assert_double_eq(p.link_Bps[CS_LINK_NVLINK], 200e9);
    /* More GPUs per process than the ring has: only the ring's. */
    p.gpus_per_process = 16;
    one_line(&R, 10e-6, INFINITY);
    cs_refit_first_guess(&p, CS_LINK_NVLINK, &R, 2, 2);
    ck_assert_double_eq_tol(p.launch_s, 10e-6 - 1e-6 - 2e-6, 1e-15);
    ck_assert_double_eq(p.link_Bps[CS_LINK_NVLINK], 200e9); /* no slope: kept */
    /* Never below 0. */
    one_line(&R, 1e-6, 100e9);
    cs_refit_first_guess(&p, CS_LINK_NVLINK, &R, 14, 8);
    ck_assert_double_eq(p.launch_s, 0);
}
END_TEST

/* On an analytic ring whose fixed part the first guess does not know, the loop finds the launch
 * and bandwidth that generated the table, in a few iterations. */
START_TEST(test_recovers)
{
    struct cs_refit_point pts[64];
    struct ring r = {9e-6, 0, 0, 0};
    struct cs_refit_opts o = {.link = CS_LINK_NVLINK, .max_iter = 8, .tol = 1e-4};
    struct cs_refit_result res;
    struct cs_params p;
    struct cs_error err;
    double med, max;
    int n = measure(pts, 6e-6, 9e-6, 230e9), np;

    cs_error_init(&err);
    start(pts, n, &p);
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, ring_predict, &r, &res, &err), 0);
    ck_assert_int_eq(res.converged, 1);
    ck_assert_int_le(res.iters, 4);
    ck_assert_int_eq(r.calls, res.iters + 1); /* and one of every size at the end */
    ck_assert_int_eq(res.nkeys, 2);
    ck_assert_str_eq(res.keys[0].key, "cs.launch_s");
    ck_assert_str_eq(res.keys[1].key, "cs.link_Bps.nvlink");
    ck_assert_double_eq_tol(res.keys[0].final, 6e-6, 6e-6 * 1e-3);
    ck_assert_double_eq_tol(res.keys[1].final, 230e9, 230e9 * 1e-3);
    ck_assert_double_eq(res.keys[0].final, p.launch_s);
    ck_assert(res.keys[0].first != res.keys[0].final);
    ck_assert_double_eq(res.hist[0].launch_s, res.keys[0].first);
    ck_assert_double_eq(res.hist[0].link_Bps, res.keys[1].first);
    /* Every size predicted with the final parameters. */
    cs_refit_stats(pts, n, -1, &med, &max, &np);
    ck_assert_int_eq(np, n);
    ck_assert(max < 2e-3);
}
END_TEST

/* The launch never goes negative: a table faster than the model's fixed part stops at 0, and
 * the loop reports that it did not converge after max_iter. */
START_TEST(test_clamp_and_bound)
{
    struct cs_refit_point pts[64];
    struct ring r = {40e-6, 0, 0, 0};
    struct cs_refit_opts o = {.link = CS_LINK_NVLINK, .max_iter = 3, .tol = 1e-3};
    struct cs_refit_result res;
    struct cs_params p;
    struct cs_error err;
    int n = measure(pts, 5e-6, 0, 230e9);

    cs_error_init(&err);
    start(pts, n, &p);
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, ring_predict, &r, &res, &err), 0);
    ck_assert_int_eq(res.iters, 3);
    ck_assert_int_eq(res.converged, 0);
    ck_assert_double_eq(p.launch_s, 0);
    ck_assert(res.band_err[CS_REFIT_LATENCY] > 0.5);
}
END_TEST

/* Analytic rings, ctx a struct analytic: with by_eff (LL128), t = launch + S * 14 / 8 /
 * (link_Bps x link_eff.LL128.nvlink); else (Simple) sizes from 1 MiB pay a per-step cost, as if
 * another protocol ran them: t = launch + [S >= 1 MiB] 14 call + S * 14 / 8 / link_Bps, call
 * cs.call_s.Simple.nvlink, and link_eff.LL128.nvlink moves nothing. */
struct analytic {
    int calls, by_eff;
};

static int analytic_predict(void *ctx, const struct cs_params *p, struct cs_refit_point *pts, int n,
                            struct cs_error *err)
{
    struct analytic *a = ctx;
    double call = p->call_s[CS_PROTO_SIMPLE][CS_LINK_NVLINK];
    double bw =
        p->link_Bps[CS_LINK_NVLINK] * (a->by_eff ? p->link_eff[CS_PROTO_LL128][CS_LINK_NVLINK] : 1);

    (void)err;
    a->calls++;
    for (int i = 0; i < n; i++) {
        double S = pts[i].size_bytes;

        pts[i].pred_s = p->launch_s + (!a->by_eff && S >= 1 << 20) * 14 * call + S * 14 / 8 / bw;
        snprintf(pts[i].proto, sizeof(pts[i].proto), "%s", a->by_eff ? "LL128" : "Simple");
    }
    return 0;
}

/* --fit: a per-step cost that only the middle sizes show is recovered with the launch (latency
 * band) and the bandwidth, its band taken from the others. */
START_TEST(test_extra_key)
{
    struct cs_refit_point pts[64];
    struct cs_refit_opts o = {.link = CS_LINK_NVLINK, .max_iter = 32, .tol = 1e-5, .nextra = 1};
    struct cs_refit_result res;
    struct cs_params p;
    struct cs_error err;
    int n = measure(pts, 6e-6, 14 * 9e-6, 230e9), nmid = 0;
    struct analytic an = {0, 0};

    snprintf(o.extra[0].key, sizeof(o.extra[0].key), "cs.call_s.Simple.nvlink");
    o.extra[0].lo = 4 << 20;
    o.extra[0].hi = 64 << 20;
    cs_error_init(&err);
    for (int i = 0; i < n; i++) /* the per-step cost from 1 MiB only */
        pts[i].meas_s -= (pts[i].size_bytes < 1 << 20) * 14 * 9e-6;
    start(pts, n, &p);
    for (int i = 0; i < n; i++) {
        pts[i].band = pts[i].size_bytes <= 4096  ? CS_REFIT_LATENCY
                      : pts[i].size_bytes >= 1e9 ? CS_REFIT_BANDWIDTH
                                                 : CS_REFIT_NONE;
        nmid += pts[i].size_bytes >= 4 << 20 && pts[i].size_bytes <= 64 << 20;
    }
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, analytic_predict, &an, &res, &err), 0);
    ck_assert_int_eq(res.converged, 1);
    ck_assert_int_eq(res.stuck, -1);
    ck_assert_int_eq(res.nkeys, 3);
    ck_assert_str_eq(res.keys[2].key, "cs.call_s.Simple.nvlink");
    ck_assert_int_eq(res.keys[2].npoints, nmid);
    ck_assert_double_eq(res.keys[2].first, 2.8e-6);
    ck_assert_double_eq_tol(res.hist[0].extra[0], 2.8e-6, 1e-18);
    ck_assert_double_eq(res.keys[2].final, p.call_s[CS_PROTO_SIMPLE][CS_LINK_NVLINK]);
    ck_assert_double_eq_tol(p.launch_s, 6e-6, 6e-6 * 1e-3);
    ck_assert_double_eq_tol(res.keys[2].final, 9e-6, 9e-6 * 1e-3);
    ck_assert_double_eq_tol(res.keys[1].final, 230e9, 230e9 * 1e-3);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(pts[i].band, pts[i].size_bytes >= 4 << 20 && pts[i].size_bytes <= 64 << 20
                                          ? CS_REFIT_EXTRA
                                      : pts[i].size_bytes <= 4096 ? CS_REFIT_LATENCY
                                      : pts[i].size_bytes >= 1e9  ? CS_REFIT_BANDWIDTH
                                                                  : CS_REFIT_NONE);
}
END_TEST

/* --fit: a key that moves nothing stops the loop, not converged; an unknown key, a key with no
 * size and a key moved out of its range are errors. */
START_TEST(test_extra_errors)
{
    struct cs_refit_point pts[64];
    struct cs_refit_opts o = {.link = CS_LINK_NVLINK, .max_iter = 32, .tol = 1e-5, .nextra = 1};
    struct cs_refit_result res;
    struct cs_params p;
    struct cs_error err;
    int n = measure(pts, 6e-6, 14 * 9e-6, 230e9);
    struct analytic an = {0, 0}, eff = {0, 1};

    snprintf(o.extra[0].key, sizeof(o.extra[0].key), "cs.link_eff.LL128.nvlink");
    o.extra[0].lo = 4 << 20;
    o.extra[0].hi = 64 << 20;
    cs_error_init(&err);
    start(pts, n, &p);
    for (int i = 0; i < n; i++) /* the middle sizes 20% slower than the other bands say */
        if (pts[i].size_bytes >= 4 << 20 && pts[i].size_bytes <= 64 << 20)
            pts[i].meas_s *= 1.2;
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, analytic_predict, &an, &res, &err), 0);
    ck_assert_int_eq(res.converged, 0);
    ck_assert_int_eq(res.stuck, 0);
    ck_assert_int_lt(res.iters, 32);

    snprintf(o.extra[0].key, sizeof(o.extra[0].key), "cs.nope");
    start(pts, n, &p);
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, analytic_predict, &an, &res, &err),
                     CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "--fit cs.nope: not a parameter") != NULL, "%s", err.msg);

    snprintf(o.extra[0].key, sizeof(o.extra[0].key), "cs.call_s.Simple.nvlink");
    o.extra[0].lo = o.extra[0].hi = 3;
    start(pts, n, &p);
    cs_error_init(&err);
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, analytic_predict, &an, &res, &err),
                     CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no measured size from 3 to 3 B"));

    /* A share can not pass 1: the middle sizes want LL128 4x faster than the link the other
     * bands fit; the share stays at most 1 and the fit ends not converged. */
    snprintf(o.extra[0].key, sizeof(o.extra[0].key), "cs.link_eff.LL128.nvlink");
    o.extra[0].lo = 4 << 20;
    o.extra[0].hi = 64 << 20;
    start(pts, n, &p);
    cs_error_init(&err);
    {
        struct cs_refit_point q[64];

        memcpy(q, pts, sizeof(q));
        for (int i = 0; i < n; i++)
            if (q[i].size_bytes >= 4 << 20 && q[i].size_bytes <= 64 << 20)
                q[i].meas_s /= 4;
        ck_assert_int_eq(cs_refit_run(&p, q, n, &o, analytic_predict, &eff, &res, &err), 0);
    }
    ck_assert_int_eq(res.converged, 0);
    ck_assert(p.link_eff[CS_PROTO_LL128][CS_LINK_NVLINK] <= 1);
}
END_TEST

START_TEST(test_errors)
{
    struct cs_refit_point pts[64];
    struct ring r = {0, 0, 0, 0};
    struct cs_refit_opts o = {.link = CS_LINK_NVLINK, .max_iter = 4, .tol = 1e-3};
    struct cs_refit_result res;
    struct cs_params p;
    struct cs_error err;
    int n = measure(pts, 5e-6, 0, 230e9);

    cs_params_init(&p);
    cs_error_init(&err);
    /* No size in a band. */
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, ring_predict, &r, &res, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no measured size"));
    ck_assert_int_eq(r.calls, 0);
    /* A band the model predicts nothing of. */
    pts[0].band = CS_REFIT_LATENCY;
    r.none = 1;
    cs_error_init(&err);
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, ring_predict, &r, &res, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "predicts none of the 1 sizes of the latency band"));
    /* The predictor's error, as it gave it. */
    r.none = 0;
    r.fail = 1;
    cs_error_init(&err);
    ck_assert_int_eq(cs_refit_run(&p, pts, n, &o, ring_predict, &r, &res, &err), CS_ERR_INVALID);
    ck_assert_str_eq(err.file, "x.xml");
    ck_assert_int_eq(err.line, 3);
}
END_TEST

/* The replay predictor's setup: a temporary platform path, the DGX family, default
 * parameters. */
static void model_setup(char *path, struct cs_platform_spec *spec, struct cs_params *p,
                        struct cs_error *err)
{
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    close(fd);
    cs_platform_spec_init(spec, CS_FAM_DGX);
    cs_params_init(p);
    cs_error_init(err);
}

/* The replay as the predictor: an 8-GPU ring on the DGX family, the fastest protocol per size;
 * a faster link moves the large size and not the small one, a slower launch the small one. */
START_TEST(test_model)
{
    char path[] = "/tmp/check_refit-XXXXXX";
    struct cs_platform_spec spec;
    struct cs_refit_model m = {&spec,
                               NULL,
                               "ring:gpus=8,channels=24,instances=1,protocol=Simple",
                               {CS_PROTO_LL, CS_PROTO_SIMPLE},
                               2,
                               4,
                               path};
    struct cs_refit_point a[2] = {{64, 1, NAN, "", 0}, {1 << 28, 1, NAN, "", 0}}, b[2];
    struct cs_params p;
    struct cs_error err;

    model_setup(path, &spec, &p, &err);
    memcpy(b, a, sizeof(a));
    ck_assert_int_eq(cs_refit_model_predict(&m, &p, a, 2, &err), 0);
    ck_assert(a[0].pred_s > p.launch_s && a[1].pred_s > a[0].pred_s);
    ck_assert_str_eq(a[0].proto, "LL");
    ck_assert_str_eq(a[1].proto, "Simple");
    p.link_Bps[CS_LINK_NVLINK] *= 2;
    p.launch_s += 1e-6;
    ck_assert_int_eq(cs_refit_model_predict(&m, &p, b, 2, &err), 0);
    ck_assert_double_eq_tol(b[0].pred_s - a[0].pred_s, 1e-6, 1e-8); /* SimGrid rounds its events */
    ck_assert(b[1].pred_s < 0.75 * a[1].pred_s);
    unlink(path);
}
END_TEST

/* A gen spec "nccl:..." without a size: each size is predicted on what `gen nccl` writes there
 * (its channels and threads), the protocol's rate and pass scaled by threads / maximum threads:
 * the same times as that schedule predicted alone with the scaled parameters. */
START_TEST(test_model_nccl)
{
    static const char gen[] = "nccl:gpus=8,channels=24,nccl=2.18.5";
    static const double sizes[] = {4096, 65536, 1 << 20};
    char path[] = "/tmp/check_refit-XXXXXX";
    struct cs_platform_spec spec;
    struct cs_refit_model m = {
        &spec, NULL, gen, {CS_PROTO_LL}, 1, 4, path,
    };
    struct cs_refit_point a[3];
    struct cs_params p;
    struct cs_error err;

    model_setup(path, &spec, &p, &err);
    for (int i = 0; i < 3; i++)
        a[i] = (struct cs_refit_point){sizes[i], 1, NAN, "", 0};
    ck_assert_int_eq(cs_refit_model_predict(&m, &p, a, 3, &err), 0);
    for (int i = 0; i < 3; i++) {
        char one[256];
        struct cs_refit_model m1 = m;
        struct cs_refit_point b = {sizes[i], 1, NAN, "", 0};
        struct cs_nccl_width w;
        struct cs_params q = p;

        snprintf(one, sizeof(one), "%s,protocol=LL,size=%.0f", gen, sizes[i]);
        ck_assert_int_eq(cs_gen_nccl_spec_width(one, &w, &err), 0);
        ck_assert_int_eq(w.channels, i == 0 ? 1 : i == 1 ? 2 : 24);
        q.tb_Bps[CS_PROTO_LL] *= (double)w.threads / w.max_threads; /* by hand, not narrow */
        q.pass_bytes[CS_PROTO_LL] *= (double)w.threads / w.max_threads;
        m1.gen_spec = one;
        ck_assert_int_eq(cs_refit_model_predict(&m1, &q, &b, 1, &err), 0);
        ck_assert_double_eq(a[i].pred_s, b.pred_s);
        ck_assert_str_eq(a[i].proto, "LL");
    }
    unlink(path);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_bands, 1},      {test_first_guess, 1},
        {test_recovers, 1},   {test_clamp_and_bound, 1},
        {test_errors, 1},     {test_model, 1},
        {test_extra_key, 1},  {test_extra_errors, 1},
        {test_model_nccl, 1}, {NULL, 0},
    };

    return test_run("refit", 120, tests, NULL);
}
