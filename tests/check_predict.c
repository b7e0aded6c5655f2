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
#include "testutil.h"
#include "util.h"

/* nccl-tests stepping, aligned down to the executor's granularity, zeros and duplicates dropped. */
START_TEST(test_sizes)
{
    struct cs_sched *s = NULL;
    long long *v = NULL, *nom = NULL;
    int n = 0, rounded = -1, zero = -1;

    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=8,channels=1,protocol=LL", &s, NULL), 0);
    /* nchunksperloop 8 x 4 bytes: 32-byte granularity */
    ck_assert_int_eq(cs_predict_granularity(s, 4), 32);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1024, 8192, 2, &v, &n, &rounded), 0);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(v[0], 1024);
    ck_assert_int_eq(v[3], 8192);
    ck_assert_int_eq(rounded, 0);
    free(v);
    ck_assert_int_eq(cs_predict_size_list(s, 4, 1, 64, 2, &v, &nom, &n, &zero), 0);
    /* 1, 2, 4, 8, 16 align down to 0 (skipped); 32 and 64 stay */
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(zero, 5);
    ck_assert_int_eq(v[0], 32);
    ck_assert_int_eq(v[1], 64);
    ck_assert_int_eq(nom[0], 32);
    cs_free_each(2, v, nom);
    /* validate's and regress's sizes round up: 1 .. 16 become 32 */
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1, 64, 2, &v, &n, &rounded), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(v[0], 32);
    ck_assert_int_eq(rounded, 1);
    free(v);
    /* 1000 is 250 floats; predict aligns down to 992 (31 x 32), validate rounds up to 1024 */
    ck_assert_int_eq(cs_predict_size_list(s, 4, 1000, 1000, 3, &v, &nom, &n, NULL), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(v[0], 992);
    ck_assert_int_eq(nom[0], 1000);
    cs_free_each(2, v, nom);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1000, 1000, 3, &v, &n, NULL), 0);
    ck_assert_int_eq(v[0], 1024);
    free(v);
    /* every size below the granularity: no size */
    ck_assert_int_eq(cs_predict_size_list(s, 4, 1, 16, 2, &v, NULL, &n, &zero), 0);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(zero, 5);
    free(v);
    ck_assert_int_eq(cs_predict_size_list(s, 4, 2048, 1024, 2, &v, NULL, &n, NULL), CS_ERR_USAGE);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 2048, 1024, 2, &v, &n, NULL), CS_ERR_USAGE);
    ck_assert_int_eq(cs_predict_sizes(s, 4, 1024, 2048, 1, &v, &n, NULL), CS_ERR_USAGE);
    cs_sched_free(s);
}
END_TEST

/* nccl-tests' own alignment (common.cu setupArgs, all_gather.cu): whole elements down; for the
 * gathering and scattering collectives 16 bytes per rank down, times the ranks. */
START_TEST(test_nccl_size)
{
    struct cs_sched *s = NULL;

    ck_assert_int_eq(cs_predict_nccl_size(CS_COLL_ALLREDUCE, 8, 4, 1023), 1020);
    ck_assert_int_eq(cs_predict_nccl_size(CS_COLL_ALLREDUCE, 8, 8, 7), 0);
    ck_assert_int_eq(cs_predict_nccl_size(CS_COLL_CUSTOM, 3, 2, 5), 4);
    /* 1000 floats over 8 ranks: 125 per rank, down to 124 (16 bytes = 4 floats) */
    ck_assert_int_eq(cs_predict_nccl_size(CS_COLL_ALLGATHER, 8, 4, 4000), 124 * 8 * 4);
    /* int8: 16 elements per rank; double: 2 */
    ck_assert_int_eq(cs_predict_nccl_size(CS_COLL_REDUCE_SCATTER, 4, 1, 100), 64);
    ck_assert_int_eq(cs_predict_nccl_size(CS_COLL_ALLTOALL, 4, 8, 100), 64);
    ck_assert_int_eq(cs_predict_nccl_size(CS_COLL_ALLGATHER, 8, 4, 127), 0);
    /* an 8-GPU allgather ring has nchunksperloop 8: nccl-tests' 8 x 16 bytes is the finer grain
     * for float (8 x 4 = 32 bytes); lcm 128 */
    ck_assert_int_eq(
        cs_gen_from_spec("ring:gpus=8,channels=1,protocol=LL,coll=allgather", &s, NULL), 0);
    ck_assert_int_eq(s->coll, CS_COLL_ALLGATHER);
    ck_assert_int_eq(cs_predict_granularity(s, 4), 128);
    ck_assert_int_eq(cs_predict_align(s, 4, 1000), 896);
    ck_assert_int_eq(cs_predict_align(s, 4, 1024), 1024);
    ck_assert_int_eq(cs_predict_align(s, 4, 100), 0);
    cs_sched_free(s);
    /* a 3-channel 8-GPU allreduce ring: 24 chunks per loop, 96 bytes of floats */
    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=8,channels=3,protocol=LL", &s, NULL), 0);
    ck_assert_int_eq(cs_predict_align(s, 4, 1024), 960);
    ck_assert_int_eq(cs_predict_align(s, 1, 1024), 1008);
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
    struct cs_predict_input in = {
        .gen_spec = "ring:gpus=4,channels=1", .plat_path = path, .sets = sets, .nsets = 1};

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

/* Co-residency: a GPU with as many threadblocks as SMs x CTAs per SM is predicted; one more
 * threadblock than that hangs at every size (no replay, no time), with the count in the reason;
 * a size the executor refuses stays unsupported. The generator's 8-GPU hierarchical schedule with
 * 8 instances has 128 per GPU: load accepts it, and it hangs on an A100. */
START_TEST(test_hang)
{
    char path[64], want[256];
    struct cs_params p;
    struct cs_platform *plat;
    struct cs_sched *s = NULL;
    struct cs_predict_row rows[2];
    long long sizes[2] = {4096, 1LL << 40};
    struct cs_predict_opts o = {0};
    struct cs_predict_input in = {
        .gen_spec = "hierarchical:gpus=8,instances=8,protocol=LL,variant=v1,sms=128",
        .plat_path = path};
    int ntbs;

    cs_params_init(&p);
    ck_assert(p.gpu_sms == 108 && p.ctas_per_sm == 1);
    plat = test_platform_hier(4, 2, &p, path);
    ck_assert(plat->params.gpu_sms == 108 && plat->params.ctas_per_sm == 1);
    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=4,channels=2,protocol=Simple", &s, NULL), 0);
    ntbs = s->gpus[0].ntbs;
    for (int g = 0; g < s->ngpus; g++)
        ck_assert_int_eq(s->gpus[g].ntbs, ntbs);
    o.type_bytes = 4;
    o.keep_going = 1;
    /* At the limit: replayed. */
    plat->params.gpu_sms = ntbs;
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 1, rows, NULL), 0);
    ck_assert_str_eq(cs_predict_status_name(&rows[0]), "ok");
    ck_assert_ptr_null(rows[0].hang);
    cs_predict_row_cleanup(&rows[0]);
    /* Two CTAs per SM on half the SMs: the same limit. */
    plat->params.gpu_sms = ntbs / 2;
    plat->params.ctas_per_sm = 2;
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 1, rows, NULL), 0);
    ck_assert_str_eq(cs_predict_status_name(&rows[0]), "ok");
    cs_predict_row_cleanup(&rows[0]);
    /* One threadblock over it: a hang, except at the size the executor refuses. */
    plat->params.gpu_sms = ntbs - 1;
    plat->params.ctas_per_sm = 1;
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 2, rows, NULL), 0);
    ck_assert_str_eq(cs_predict_status_name(&rows[0]), "hang");
    snprintf(want, sizeof(want),
             "gpu 0 has %d threadblocks; at most %d are co-resident on this GPU (%d SMs x 1 CTA "
             "per SM): the runtime would hang",
             ntbs, ntbs - 1, ntbs - 1);
    ck_assert_str_eq(rows[0].hang, want);
    ck_assert(rows[0].res.status != CS_REPLAY_OK && rows[0].time_us == 0);
    ck_assert(rows[0].res.ncalls == 0 && rows[0].busbw_GBps == 0);
    ck_assert_int_eq(rows[0].niter, 1);
    ck_assert_str_eq(cs_predict_status_name(&rows[1]), "unsupported");
    cs_predict_row_cleanup(&rows[0]);
    cs_predict_row_cleanup(&rows[1]);
    cs_sched_free(s);
    cs_platform_free(plat);

    /* runtime-audit.md section 0 row 2: 128 threadblocks per GPU on an A100, 132 SMs enough. */
    s = NULL;
    plat = NULL;
    ck_assert_int_eq(cs_predict_load(&in, &s, &plat, NULL), 0);
    ck_assert_int_eq(s->gpus[0].ntbs, 128);
    sizes[0] = 65536;
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 1, rows, NULL), 0);
    ck_assert_str_eq(rows[0].hang, "gpu 0 has 128 threadblocks; at most 108 are co-resident on "
                                   "this GPU (108 SMs x 1 CTA per SM): the runtime would hang");
    cs_predict_row_cleanup(&rows[0]);
    ck_assert_int_eq(cs_params_set(&plat->params, "cs.gpu_sms", "132", NULL), 0);
    ck_assert_int_eq(cs_predict_run(s, plat, &o, sizes, 1, rows, NULL), 0);
    ck_assert_str_eq(cs_predict_status_name(&rows[0]), "ok");
    cs_predict_row_cleanup(&rows[0]);
    cs_sched_free(s);
    cs_platform_free(plat);
    unlink(path);
}
END_TEST

/* The LL128 warning of spec on a platform: NULL or the message (caller frees), checked to be on
 * every row of a two-size run. */
static char *ll128_warning(const char *spec, const struct cs_platform *plat)
{
    struct cs_sched *s = NULL;
    struct cs_predict_row rows[2];
    long long sizes[2] = {65536, 131072};
    struct cs_predict_opts o = {0};
    struct cs_error err;
    char *w;

    cs_error_init(&err);
    ck_assert_int_eq(cs_gen_from_spec(spec, &s, NULL), 0);
    o.type_bytes = 4;
    ck_assert_msg(cs_predict_run(s, plat, &o, sizes, 2, rows, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(cs_predict_status_name(&rows[0]), "ok");
    w = rows[0].warning ? strdup(rows[0].warning) : NULL;
    if (w != NULL)
        ck_assert_str_eq(rows[1].warning, w);
    else
        ck_assert_ptr_null(rows[1].warning);
    cs_predict_row_cleanup(&rows[0]);
    cs_predict_row_cleanup(&rows[1]);
    cs_sched_free(s);
    return w;
}

/* LL128 off NVLink: on a 4 x 2 a100-hier platform (columns joined by PCIe) an 8-GPU ring crosses
 * PCIe on exactly two of its 8 connections (3 -> 4 and 7 -> 0); a 4-GPU ring stays on the first
 * column's NVLink; LL does not care. Across the network (two DGX nodes: the GPU-NIC links are
 * PCIe) NCCL allows LL128: nothing flagged. */
START_TEST(test_ll128_off_nvlink)
{
    static const char first[] =
        "LL128 over a path that is not NVLink: connection gpu 3 -> gpu 4 channel 0 crosses "
        "gpu3_pcie";
    char path[64], *w;
    struct cs_params p;
    struct cs_platform *plat;
    struct cs_platform_spec spec;

    cs_params_init(&p);
    plat = test_platform_hier(4, 2, &p, path);
    w = ll128_warning("ring:gpus=8,channels=1,protocol=LL128", plat);
    ck_assert_ptr_nonnull(w);
    ck_assert_msg(strncmp(w, first, strlen(first)) == 0, "%s", w);
    ck_assert_msg(strstr(w, "(pcie), like 1 more of the 8 connections; NCCL enables LL128 only "
                            "where every path within a node is NVLink") != NULL,
                  "%s", w);
    free(w);
    ck_assert_ptr_null(ll128_warning("ring:gpus=8,channels=1,protocol=LL", plat));
    ck_assert_ptr_null(ll128_warning("ring:gpus=4,channels=1,protocol=LL128", plat));
    cs_platform_free(plat);
    unlink(path);

    cs_platform_spec_init(&spec, CS_FAM_DGX);
    spec.nodes = 2;
    snprintf(path, sizeof(path), "/tmp/cs-plat-XXXXXX");
    close(mkstemp(path));
    ck_assert_int_eq(cs_platform_write(&spec, &p, path, NULL), 0);
    ck_assert_int_eq(cs_platform_read(path, &plat, NULL), 0);
    ck_assert_ptr_null(ll128_warning("ring:gpus=16,channels=1,protocol=LL128", plat));
    cs_platform_free(plat);
    unlink(path);
}
END_TEST

/* Steady-state extrapolation: the same verdicts as the full replay and times within 1e-6, a ring
 * whose first recorded replay (5 iterations) settles with a period of one iteration, and a
 * schedule that deadlocks. The full replay's clock gathers SimGrid's rounding over long runs (up
 * to about 1e-7). */
START_TEST(test_extrapolate)
{
    static const char *const specs[] = {"ring:gpus=8,channels=1,protocol=LL",
                                        "hierarchical:gpus=8,protocol=LL,variant=v1"};
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
                ck_assert_int_eq(x[k].replayed_iters, 5);
                /* 512 MiB extrapolates from 128 MiB's replay: no simulation of its own, and
                 * the same result as alone */
                if (k == 1) {
                    struct cs_predict_row one;

                    ck_assert(x[1].res.wall_s == 0);
                    o.no_extrapolate = 0;
                    ck_assert_int_eq(cs_predict_run(s, plat, &o, &sizes[1], 1, &one, NULL), 0);
                    ck_assert(one.res.wall_s > 0);
                    ck_assert(one.res.time_s == x[1].res.time_s);
                    ck_assert_int_eq(one.res.ncalls, x[1].res.ncalls);
                    cs_predict_row_cleanup(&one);
                }
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

/* A synthetic timeline of ntbs tbs and m iterations: each tb runs one call per iteration of
 * `len` seconds, tb t's iteration i starting at i x step + t x 1e-7, plus drift(i, t) seconds; a
 * period-2 pattern when alt (odd iterations take twice as long). */
static void synth_timeline(struct cs_timeline *tl, int ntbs, int m, double step, int alt,
                           double (*drift)(int i, int t))
{
    cs_timeline_init(tl, 0);
    for (int i = 0; i < m; i++)
        for (int t = 0; t < ntbs; t++) {
            /* alt: iterations pair up as (1, 2) x step, period 2 of 3 x step */
            double t0 = (alt ? (i / 2) * 3 * step + (i % 2) * step : i * step) + t * 1e-7 +
                        (drift ? drift(i, t) : 0);
            double len = alt && i % 2 ? 2 * step : step;
            struct cs_tl_event ev = {.start_s = t0,
                                     .end_s = t0 + len * 0.9,
                                     .kind = CS_TL_CALL,
                                     .tb = t,
                                     .iter = i,
                                     .other = -1,
                                     .bytes = 4096};

            ck_assert_int_eq(cs_timeline_add(tl, &ev), 0);
            ev.kind = CS_TL_UNIT;
            ev.out_conn = t;
            ck_assert_int_eq(cs_timeline_add(tl, &ev), 0);
        }
    tl->makespan_s = tl->events[tl->nevents - 1].end_s;
}

static double slow_tb1(int i, int t)
{
    return t == 1 ? i * 1e-9 : 0; /* tb 1 a little slower every iteration */
}

static double jitter(int i, int t)
{
    return (i + t) % 2 ? 1e-12 : 0; /* the engine's rounding */
}

static double late_start(int i, int t)
{
    (void)t;
    return i == 0 ? -5e-7 : 0; /* the first iteration fills the pipeline */
}

static double settle_at_3(int i, int t)
{
    (void)t;
    /* the pipeline fills in 3 iterations: 500, 300, then 100 ns longer than the steady one */
    return i < 3 ? -(3 - i) * (3 - i) * 1e-7 : 0;
}

/* The steady state found in recorded events: the period, where it starts, the step, the calls
 * and transfers per period; none where a tb drifts, where rounding would grow past the budget
 * over many periods, or where the events are not of this plan. */
START_TEST(test_find_period)
{
    struct cs_timeline tl;
    struct cs_predict_period per;

    synth_timeline(&tl, 3, 5, 1e-5, 0, late_start);
    ck_assert_int_eq(cs_predict_find_period(&tl, 3, 5, 512, 1, 1e-7, &per), 1);
    ck_assert_int_eq(per.p, 1);
    ck_assert_int_eq(per.first, 1);
    ck_assert(fabs(per.step_s - 1e-5) < 1e-15);
    ck_assert_int_eq(per.ncalls, 3);
    ck_assert_int_eq(per.ntransfers, 3);
    /* events beyond 3 tbs x 5 iterations: another plan's */
    ck_assert_int_eq(cs_predict_find_period(&tl, 2, 5, 512, 1, 1e-7, &per), 0);
    ck_assert_int_eq(cs_predict_find_period(&tl, 3, 4, 512, 1, 1e-7, &per), 0);
    cs_timeline_cleanup(&tl);

    /* settled from iteration 3: pairs (3, 4) and (4, 5) are the first two that agree, which a
     * replay of 7 iterations or more compares (up to the pair before its last iteration) and one
     * of 6 does not; the step is the steady one exactly */
    for (int m = 5; m <= 8; m++) {
        synth_timeline(&tl, 2, m, 1e-5, 0, settle_at_3);
        ck_assert_int_eq(cs_predict_find_period(&tl, 2, m, 1000, 1, 1e-7, &per), m >= 7);
        if (m >= 7) {
            ck_assert_int_eq(per.p, 1);
            ck_assert_int_eq(per.first, 3);
            ck_assert(fabs(per.step_s - 1e-5) < 1e-15);
        }
        cs_timeline_cleanup(&tl);
    }

    /* period 2: not with p = 1 only, nor with too few iterations for 3 pairs */
    synth_timeline(&tl, 2, 9, 1e-5, 1, NULL);
    ck_assert_int_eq(cs_predict_find_period(&tl, 2, 9, 1001, 1, 1e-7, &per), 0);
    ck_assert_int_eq(cs_predict_find_period(&tl, 2, 9, 1001, 8, 1e-7, &per), 1);
    ck_assert_int_eq(per.p, 2);
    ck_assert_int_eq(per.first, 1);
    ck_assert(fabs(per.step_s - 3e-5) < 1e-15);
    ck_assert_int_eq(per.ncalls, 4);
    cs_timeline_cleanup(&tl);
    synth_timeline(&tl, 2, 6, 1e-5, 1, NULL);
    ck_assert_int_eq(cs_predict_find_period(&tl, 2, 6, 1000, 8, 1e-7, &per), 0);
    cs_timeline_cleanup(&tl);

    /* tb 1 falls behind by 1 ns an iteration: not periodic */
    synth_timeline(&tl, 2, 19, 1e-5, 0, slow_tb1);
    ck_assert_int_eq(cs_predict_find_period(&tl, 2, 19, 1000, 8, 1e-7, &per), 0);
    cs_timeline_cleanup(&tl);

    /* rounding of 1e-12 s: fine in periods of 100 us, too much in periods of 10 ns when many */
    synth_timeline(&tl, 2, 5, 1e-4, 0, jitter);
    ck_assert_int_eq(cs_predict_find_period(&tl, 2, 5, 10000000, 1, 1e-7, &per), 1);
    cs_timeline_cleanup(&tl);
    synth_timeline(&tl, 2, 5, 1e-8, 0, jitter);
    ck_assert_int_eq(cs_predict_find_period(&tl, 2, 5, 500, 1, 1e-7, &per), 0);
    cs_timeline_cleanup(&tl);
}
END_TEST

/* The three formats of a report with one finished and one deadlocked row; unsupported and hung
 * rows and a warning. */
START_TEST(test_report)
{
    static char report[] = "gpu 0 waits\ngpu 1 waits";
    struct cs_predict_row rows[2];
    struct cs_report_meta m = {
        "s.xml", "p.xml", CS_PROTO_LL, CS_COLL_ALLREDUCE, 8, "float", NULL, NULL, NULL, NULL, NULL,
        NULL,    NULL,    NULL};
    char *buf = NULL;
    size_t len = 0;
    FILE *fp;

    memset(rows, 0, sizeof(rows));
    rows[0].size_bytes = 1024, rows[0].count = 256, rows[0].res.status = CS_REPLAY_OK;
    rows[0].time_us = 10, rows[0].algbw_GBps = 0.1024, rows[0].busbw_GBps = 0.1792;
    rows[0].nominal_bytes = 1100, rows[1].nominal_bytes = 2048;
    rows[1].size_bytes = 2048, rows[1].count = 512, rows[1].res.status = CS_REPLAY_DEADLOCK;
    rows[1].res.report = report;

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, fp, CS_REPORT_CSV, &m, rows, 2), 0);
    fclose(fp);
    ck_assert_str_eq(buf,
                     CS_REPORT_CSV_HEADER "\n"
                                          "1024,256,float,10.000000,0.102400,0.179200,ok,1100\n"
                                          "2048,512,float,,,,deadlock,2048\n"
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
    ck_assert_ptr_nonnull(strstr(buf, "\"type\": \"float\", \"nominal_bytes\": 1100, "));
    /* no versions given: no metadata object */
    ck_assert_ptr_null(strstr(buf, "metadata"));
    free(buf);

    /* An unsupported size after them: its row, and its reason with the notes. */
    {
        static char why[] = "needs 65536 loop iterations";
        struct cs_predict_row r3[3] = {rows[0], rows[1], {0}};

        r3[2].size_bytes = 4096, r3[2].count = 1024, r3[2].refused = why;
        r3[2].nominal_bytes = 4096;
        fp = open_memstream(&buf, &len);
        ck_assert_int_eq(cs_report_write(fp, fp, CS_REPORT_CSV, &m, r3, 3), 0);
        fclose(fp);
        ck_assert_ptr_nonnull(strstr(buf, "\n4096,1024,float,,,,unsupported,4096\n"));
        ck_assert_ptr_nonnull(
            strstr(buf, "\n# at 4096 bytes: unsupported: needs 65536 loop iterations\n"));
        free(buf);
        ck_assert_str_eq(cs_predict_status_name(&r3[2]), "unsupported");
    }

    /* Two hung sizes with a warning: one note each, whatever the number of rows. */
    {
        static char why[] = "gpu 0 has 128 threadblocks", warn[] = "LL128 over PCIe";
        struct cs_predict_row h[2] = {{0}, {0}};

        for (int k = 0; k < 2; k++) {
            h[k].size_bytes = h[k].nominal_bytes = 1024 << k, h[k].count = 256 << k;
            h[k].hang = why, h[k].warning = warn;
        }
        fp = open_memstream(&buf, &len);
        ck_assert_int_eq(cs_report_write(fp, fp, CS_REPORT_CSV, &m, h, 2), 0);
        fclose(fp);
        ck_assert_str_eq(buf, CS_REPORT_CSV_HEADER
                         "\n"
                         "1024,256,float,,,,hang,1024\n2048,512,float,,,,hang,2048\n"
                         "# warning: LL128 over PCIe\n"
                         "# hang (at every size): gpu 0 has 128 threadblocks\n");
        free(buf);
        fp = open_memstream(&buf, &len);
        ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_TABLE, &m, h, 2), 0);
        fclose(fp);
        ck_assert_ptr_nonnull(strstr(buf, "     N/A        -       -       -     N/A  hang\n"));
        ck_assert_ptr_nonnull(strstr(buf, "# Avg bus bandwidth    : 0 \n#\n"
                                          "# warning: LL128 over PCIe\n"
                                          "# hang (at every size): gpu 0 has 128 threadblocks\n"));
        free(buf);
        fp = open_memstream(&buf, &len);
        ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_JSON, &m, h, 2), 0);
        fclose(fp);
        ck_assert_ptr_nonnull(strstr(buf, "\"status\": \"hang\", \"report\": \"gpu 0 has 128 "
                                          "threadblocks\", \"warning\": \"LL128 over PCIe\"}\n]}"));
        free(buf);
        /* A finished row keeps its warning in JSON too. */
        rows[0].warning = warn;
        fp = open_memstream(&buf, &len);
        ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_JSON, &m, rows, 1), 0);
        fclose(fp);
        ck_assert_ptr_nonnull(
            strstr(buf, "\"status\": \"ok\", \"warning\": \"LL128 over PCIe\"}\n]}"));
        free(buf);
        rows[0].warning = NULL;
        ck_assert_str_eq(cs_predict_status_name(&h[0]), "hang");
    }

    ck_assert_int_eq(cs_report_fmt_parse("json"), CS_REPORT_JSON);
    ck_assert_int_eq(cs_report_fmt_parse("xml"), 0);
    for (int c = 0; c < CS_REPORT_CSV_NCOLS; c++)
        ck_assert_ptr_nonnull(strstr(CS_REPORT_CSV_HEADER, cs_report_csv_cols[c]));
}
END_TEST

/* --compare: a measurement table's times by size and placement (the median of repeated rows),
 * the columns each format adds and the summary; the metadata. */
START_TEST(test_compare)
{
    static const char log[] = "size_bytes,time_us,algbw_GBps,busbw_GBps,placement\n"
                              "1024,10,,,out_of_place\n"
                              "1024,12,,,in_place\n"
                              "2048,30,,,out_of_place\n"
                              "2048,20,,,out_of_place\n"
                              "2048,22,,,out_of_place\n"
                              "8192,,,1.75,out_of_place\n";
    char path[] = "/tmp/check_predict_cmpXXXXXX";
    struct cs_predict_meas *m = NULL;
    const struct cs_predict_meas_point *p;
    struct cs_report_meta meta = {
        "s.xml",  "p.xml",  CS_PROTO_LL, CS_COLL_ALLREDUCE, 8,    "float", "9.9", "abc1234",
        "3.32.0", "2.9.14", "00ff",      "m.csv",           NULL, NULL};
    struct cs_predict_row rows[3];
    struct cs_error err;
    char *buf = NULL;
    size_t len = 0;
    double e;
    int fd = mkstemp(path);
    FILE *fp;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, log, sizeof(log) - 1), (int)sizeof(log) - 1);
    close(fd);
    cs_error_init(&err);
    ck_assert_int_eq(cs_predict_meas_read(path, CS_COLL_ALLREDUCE, 8, &m, &err), 0);
    ck_assert_int_eq(m->n, 3);
    p = cs_predict_meas_find(m, 1024);
    ck_assert_ptr_nonnull(p);
    ck_assert_double_eq(p->oop_us, 10);
    ck_assert_double_eq(p->ip_us, 12);
    ck_assert_double_eq(cs_predict_meas_find(m, 2048)->oop_us, 22); /* median of 30, 20, 22 */
    ck_assert_double_eq(cs_predict_meas_find(m, 2048)->ip_us, 0);
    /* from busbw: 8192 B x 2 x 7 / 8 / 1.75 GB/s = 8.192 us */
    ck_assert_double_eq_tol(cs_predict_meas_find(m, 8192)->oop_us, 8.192, 1e-9);
    ck_assert_ptr_null(cs_predict_meas_find(m, 4096));
    cs_predict_meas_free(m);
    unlink(path);

    memset(rows, 0, sizeof(rows));
    for (int k = 0; k < 3; k++) {
        rows[k].size_bytes = rows[k].nominal_bytes = 1024 << k;
        rows[k].count = 256 << k;
        rows[k].res.status = CS_REPLAY_OK;
        rows[k].time_us = 11 << k;
    }
    rows[0].measured_us = 10, rows[0].measured_ip_us = 12; /* +10% */
    rows[1].measured_us = 22;                              /* 0% */
    ck_assert_int_eq(cs_report_error_pct(&rows[0], &e), 0);
    ck_assert_double_eq_tol(e, 10, 1e-12);
    ck_assert_int_eq(cs_report_error_pct(&rows[2], &e), -1);

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, fp, CS_REPORT_CSV, &meta, rows, 3), 0);
    fclose(fp);
    ck_assert_str_eq(buf, CS_REPORT_CSV_HEADER
                     ",measured_us,error_pct\n"
                     "1024,256,float,11.000000,0.000000,0.000000,ok,1024,10.000000,10.0000\n"
                     "2048,512,float,22.000000,0.000000,0.000000,ok,2048,22.000000,0.0000\n"
                     "4096,1024,float,44.000000,0.000000,0.000000,ok,4096,,\n"
                     "# collsim 9.9 (git abc1234), SimGrid 3.32.0, libxml2 2.9.14, "
                     "platform FNV-1a 64 00ff\n"
                     "# compared with m.csv: 2 of 3 sizes measured, |error| median 5.0%, "
                     "max 10.0% (at 1024 bytes)\n");
    free(buf);

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_TABLE, &meta, rows, 3), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(buf, "# collsim 9.9 (git abc1234), SimGrid 3.32.0, libxml2 "
                                      "2.9.14, platform FNV-1a 64 00ff\n"));
    ck_assert_ptr_nonnull(strstr(buf, "  #wrong   measured    error  status\n"));
    /* busbw stays field 8; measured and error after the in-place #wrong */
    ck_assert_ptr_nonnull(strstr(buf, "     N/A      10.00    +10.0  ok\n"));
    ck_assert_ptr_nonnull(strstr(buf, "     N/A          -        -  ok\n"));
    ck_assert_ptr_nonnull(strstr(buf, "# compared with m.csv: 2 of 3 sizes measured"));
    free(buf);

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_JSON, &meta, rows, 3), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(buf, "\"metadata\": {\"collsim\": \"9.9\", \"git\": \"abc1234\", "
                                      "\"simgrid\": \"3.32.0\", \"libxml2\": \"2.9.14\", "
                                      "\"platform_fnv1a64\": \"00ff\"}, \"results\": ["));
    ck_assert_ptr_nonnull(strstr(buf, "\"measured_us\": 10.000000, \"error_pct\": 10.0000, "
                                      "\"measured_in_place_us\": 12.000000"));
    ck_assert_ptr_nonnull(strstr(buf, "\"measured_us\": null, \"error_pct\": null}"));
    ck_assert_ptr_nonnull(strstr(buf, "\"compare\": {\"log\": \"m.csv\", \"sizes\": 3, "
                                      "\"measured\": 2, \"median_abs_error_pct\": 5.0000"));
    free(buf);
}
END_TEST

/* A table of time against GPU count has no size to compare with; a missing log is an error. */
START_TEST(test_compare_bad)
{
    struct cs_predict_meas *m = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_predict_meas_read(
                         test_data("validation/nccltests123-dgxa100-ring-1ch-smallmsg-latency.csv"),
                         CS_COLL_ALLREDUCE, 8, &m, &err),
                     CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "GPU count"));
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_null(m);
    cs_error_init(&err);
    ck_assert_int_ne(cs_predict_meas_read("/nonexistent/log.csv", CS_COLL_ALLREDUCE, 8, &m, &err),
                     0);
    ck_assert_ptr_null(m);
}
END_TEST

/* FNV-1a 64 of a file: the published test vector of "a". */
START_TEST(test_file_hash)
{
    char path[] = "/tmp/check_predict_hashXXXXXX", hex[17];
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "a", 1), 1);
    close(fd);
    ck_assert_int_eq(cs_predict_file_hash(path, hex, NULL), 0);
    ck_assert_str_eq(hex, "af63dc4c8601ec8c");
    unlink(path);
    ck_assert_int_ne(cs_predict_file_hash(path, hex, NULL), 0);
}
END_TEST

/* ---- NCCL's baseline (--vs-nccl) */

/* NCCL's columns in the three formats: after the status in CSV (the speed-up NCCL time /
 * schedule time, none on a deadlocked row), before it in the table (busbw still field 8), and
 * nccl and speedup members in JSON. */
START_TEST(test_report_vs_nccl)
{
    struct cs_predict_row rows[2];
    struct cs_report_meta m = {.schedule = "s.xml",
                               .platform = "p.xml",
                               .proto = CS_PROTO_LL,
                               .coll = CS_COLL_ALLREDUCE,
                               .ngpus = 8,
                               .dtype = "float",
                               .vs_nccl = "2.12.12"};
    char *buf = NULL;
    size_t len = 0;
    FILE *fp;

    memset(rows, 0, sizeof(rows));
    rows[0].size_bytes = 1024, rows[0].count = 256, rows[0].res.status = CS_REPLAY_OK;
    rows[0].time_us = 10, rows[0].algbw_GBps = 0.1024, rows[0].busbw_GBps = 0.1792;
    rows[0].nccl = (struct cs_predict_nccl){CS_PROTO_LL, 2, 512, 1024, 20, CS_NCCL_ALGO_RING};
    rows[1].size_bytes = 2048, rows[1].count = 512, rows[1].res.status = CS_REPLAY_DEADLOCK;
    rows[1].nccl = (struct cs_predict_nccl){CS_PROTO_SIMPLE, 1, 256, 2048, 30, CS_NCCL_ALGO_TREE};
    rows[0].nominal_bytes = 1024, rows[1].nominal_bytes = 2048;

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, fp, CS_REPORT_CSV, &m, rows, 2), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(buf, CS_REPORT_CSV_HEADER
                                 "," CS_REPORT_NCCL_CSV_COLS "\n"
                                 "1024,256,float,10.000000,0.102400,0.179200,ok,1024,LL,2,512,"
                                 "20.000000,2.000000\n"
                                 "2048,512,float,,,,deadlock,2048,Simple/tree,1,256,30.000000,\n"));
    free(buf);

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_TABLE, &m, rows, 2), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(buf, "# vs NCCL 2.12.12: "));
    ck_assert_ptr_nonnull(strstr(buf, "#wrong    nccl   ch   thr     time  speedup  status\n"));
    ck_assert_ptr_nonnull(strstr(buf,
                                 "        1024           256     float     sum      -1    10.00"
                                 "    0.10    0.18     N/A    10.00    0.10    0.18     N/A"
                                 "      LL    2   512    20.00     2.00  ok\n"));
    ck_assert_ptr_nonnull(
        strstr(buf, "     N/A  Simple/tree    1   256    30.00        -  deadlock\n"));
    free(buf);

    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_report_write(fp, NULL, CS_REPORT_JSON, &m, rows, 2), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(buf, "\"gpus\": 8, \"vs_nccl\": \"2.12.12\", \"results\": ["));
    ck_assert_ptr_nonnull(strstr(
        buf, "\"status\": \"ok\", \"nccl\": {\"protocol\": \"LL\", "
             "\"algorithm\": \"ring\", \"channels\": 2, \"threads\": 512, \"size_bytes\": 1024, "
             "\"time_us\": 20.000000}, \"speedup\": 2.000000}"));
    ck_assert_ptr_nonnull(strstr(buf, "\"algorithm\": \"tree\", \"channels\": 1,"));
    ck_assert_ptr_nonnull(strstr(buf, "\"time_us\": 30.000000}, \"speedup\": null}"));
    free(buf);
}
END_TEST

/* The time of gen nccl's schedule for proto at size on plat (NCCL's width there: w). */
static double nccl_sched_time(const struct cs_platform *plat, enum cs_proto proto, long long size,
                              const struct cs_nccl_width *w)
{
    struct cs_platform p = *plat;
    struct cs_predict_opts o = {.type_bytes = 4};
    struct cs_predict_row row = {0};
    struct cs_sched *s = NULL;
    char spec[128];
    double t;

    snprintf(spec, sizeof(spec), "nccl:gpus=4,size=%lld,protocol=%s", size, cs_proto_name(proto));
    ck_assert_int_eq(cs_gen_from_spec(spec, &s, NULL), 0);
    /* the schedule carries NCCL's threads there; the replay narrows the CTA to them */
    ck_assert_int_eq(s->nccl_threads, w->threads);
    ck_assert_int_eq(s->nccl_max_threads, w->max_threads);
    ck_assert_int_eq(cs_predict_run(s, &p, &o, &size, 1, &row, NULL), 0);
    ck_assert_str_eq(cs_predict_status_name(&row), "ok");
    t = row.time_us;
    cs_predict_row_cleanup(&row);
    cs_sched_free(s);
    return t;
}

/* cs_predict_nccl_at: the protocol NCCL's own tuning model picks on the platform's machine, its
 * width there; its time is gen nccl's schedule at that size replayed (the schedule carries NCCL's
 * threads, to which the replay narrows the threadblock; none at full width); a custom collective
 * is refused. */
START_TEST(test_nccl_at)
{
    static const long long sizes[] = {4096, 65536, 64LL << 20};
    struct cs_predict_vs_nccl v = {0};
    struct cs_predict_opts o = {.type_bytes = 4, .vs_nccl = &v};
    struct cs_params p;
    struct cs_platform *plat;
    struct cs_sched *s = NULL;
    struct cs_error err;
    char path[64];

    cs_params_init(&p);
    plat = test_platform_hier(4, 1, &p, path);
    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=4,protocol=LL", &s, NULL), 0);
    for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        struct cs_predict_nccl n = {0};
        struct cs_nccl_width w;

        ck_assert_int_eq(cs_predict_nccl_at(s, plat, &o, sizes[k], &n, NULL), 0);
        ck_assert_int_ne(n.proto, 0);
        /* NCCL's own kernel runs any whole count: the row's size */
        ck_assert_int_eq(n.size_bytes, sizes[k]);
        ck_assert_int_eq(cs_nccl_width(21212, n.proto, sizes[k], 4, 24, &w, NULL), 0);
        ck_assert_int_eq(n.channels, w.channels);
        ck_assert_int_eq(n.threads, w.threads);
        ck_assert(fabs(n.time_us - nccl_sched_time(plat, n.proto, n.size_bytes, &w)) < 1e-9);
        if (k == 2)
            ck_assert(n.threads == w.max_threads && n.channels == 24);
        {
            /* the platform's machine: an NVLink column, 4 GPUs on one node */
            struct cs_nccl_machine m;
            enum cs_nccl_algo a;
            enum cs_proto q;

            cs_nccl_machine_default(&m, 4);
            m.intra_GBps = plat->params.link_Bps[CS_LINK_NVLINK] / 1e9;
            m.inter_GBps = m.intra_GBps;
            ck_assert_int_eq(
                cs_nccl_pick(21212, &m, CS_COLL_ALLREDUCE, sizes[k], 4, 1, 24, 0, &a, &q, NULL), 0);
            ck_assert_int_eq(n.proto, q);
        }
    }
    s->coll = CS_COLL_CUSTOM;
    cs_error_init(&err);
    ck_assert_int_eq(cs_predict_nccl_at(s, plat, &o, 4096, &(struct cs_predict_nccl){0}, &err),
                     CS_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "custom schedule has no NCCL collective"));
    cs_sched_free(s);
    cs_platform_free(plat);
    unlink(path);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_sizes, 1},          {test_nccl_size, 1},   {test_load, 1},
        {test_predict_run, 1},    {test_extrapolate, 1}, {test_find_period, 1},
        {test_report, 1},         {test_compare, 1},     {test_compare_bad, 1},
        {test_file_hash, 1},      {test_hang, 1},        {test_ll128_off_nvlink, 1},
        {test_report_vs_nccl, 1}, {test_nccl_at, 1},     {NULL, 0},
    };

    return test_run("predict", 60, tests, NULL);
}
