/* check_replay.c: the replay against closed forms (protocol overheads zero), flow control and
 * deadlock detection. Each test runs in its own process (Check's fork mode); cs_replay_run forks
 * again for SimGrid. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "plan.h"
#include "platform.h"
#include "replay.h"
#include "runner.h"
#include "testplat.h"
#include "testutil.h"
#include "xml.h"

#define LAT 1e-6 /* per link: a GPU-to-GPU route crosses two */
#define BW 100e9 /* nvlink links */
#define PCIE_BW 20e9

static char plat_path[64];

/* A one-column a100-hier platform of n GPUs (route i->j: gpu_i_nvl UP, gpu_j_nvl DOWN), read
 * back with every protocol overhead set to zero. */
static struct cs_platform *column(int rows, int columns)
{
    struct cs_params p;
    struct cs_platform *plat;

    cs_params_init(&p);
    p.link_Bps[CS_LINK_NVLINK] = BW;
    p.link_lat_s[CS_LINK_NVLINK] = LAT;
    p.link_Bps[CS_LINK_PCIE] = PCIE_BW;
    p.link_lat_s[CS_LINK_PCIE] = LAT;
    plat = test_platform_hier(rows, columns, &p, plat_path);
    ck_assert_int_eq(plat->ngpus, rows * columns);
    plat->params.launch_s = 0;
    test_platform_bare(plat);
    return plat;
}

static void drop(struct cs_platform *plat)
{
    unlink(plat_path);
    cs_platform_free(plat);
}

static struct cs_tb *add_tb(struct cs_gpu *g, int send, int recv)
{
    struct cs_tb *tb = cs_gpu_add_tb(g);

    tb->id = g->ntbs - 1;
    tb->send = send;
    tb->recv = recv;
    return tb;
}

static void add_step(struct cs_tb *tb, enum cs_step_type type, int cnt, int depid, int deps,
                     int hasdep)
{
    struct cs_step *st = cs_tb_add_step(tb);

    st->s = tb->nsteps - 1;
    st->type = type;
    st->srcbuf = st->dstbuf = CS_BUF_INPUT;
    st->cnt = cnt;
    st->depid = depid;
    st->deps = deps;
    st->hasdep = hasdep;
}

static struct cs_sched *new_sched(int ngpus, int nchunks)
{
    struct cs_sched *s = cs_sched_new();

    s->ngpus = ngpus;
    s->nchannels = 1;
    s->nchunksperloop = nchunks;
    for (int g = 0; g < ngpus; g++)
        cs_sched_add_gpu(s)->id = g;
    return s;
}

static struct cs_replay_result run(const struct cs_sched *s, const struct cs_platform *plat,
                                   long long size, enum cs_proto proto)
{
    struct cs_plan *plan = NULL;
    struct cs_replay_result res;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_plan_build(s, size, 4, proto, &plan, &err), 0);
    ck_assert_msg(cs_replay_run(plan, plat, NULL, &res, &err) == 0, "%s", err.msg);
    cs_plan_free(plan);
    return res;
}

static void assert_rel(double got, double want)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * want, "got %.15e want %.15e (rel %.3e)", got, want,
                  fabs(got - want) / want);
}

/* The replay's definition evaluated by hand for a ring whose GPUs all do the same thing: the
 * units of tb 0 in order, each starting when the tb is free, its data has arrived (the n-th unit
 * received is the predecessor's n-th posted one, at the same time as this tb's own n-th post by
 * symmetry, plus the route latency 2 LAT) and, to send, its slots are free (the successor has
 * consumed the unit 8 / slots posts back, as this tb consumed its received unit of that rank); a
 * sending unit then takes share x wire / BW on the links and is posted when it ends. */
static double symmetric_ring_time(const struct cs_plan *plan, double share)
{
    const struct cs_plan_tb *tb = &plan->tbs[0];
    int window = CS_NCCL_STEPS / (plan->slots_per_call / plan->units_per_call);
    long long n = 0, ns = 0, nr = 0;
    double *post, *used, t = 0;

    for (int it = 0; it < plan->sz.niter; it++)
        for (int k = 0; k < tb->nops; k++)
            n += (long long)tb->ops[k].ncalls * plan->units_per_call;
    post = calloc((size_t)n + 1, sizeof(double));
    used = calloc((size_t)n + 1, sizeof(double));
    ck_assert(post != NULL && used != NULL);
    for (int it = 0; it < plan->sz.niter; it++)
        for (int k = 0; k < tb->nops; k++) {
            const struct cs_plan_op *op = &tb->ops[k];
            int sends = cs_step_sends(op->type), recvs = cs_step_recvs(op->type);

            if (!sends && !recvs)
                continue;
            for (int c = 0; c < op->ncalls; c++) {
                long long u[2];

                cs_plan_call_units(plan, cs_plan_call_elems(plan, op, it, c), u);
                for (int j = 0; j < plan->units_per_call; j++) {
                    if (recvs) {
                        ck_assert(nr < ns); /* its data was posted already */
                        if (post[nr] + 2 * LAT > t)
                            t = post[nr] + 2 * LAT;
                    }
                    if (sends && ns >= window) {
                        ck_assert(ns - window < nr);
                        if (used[ns - window] > t)
                            t = used[ns - window];
                    }
                    if (sends && u[j] > 0)
                        t += share * cs_plan_wire_bytes(plan, u[j]) / BW;
                    if (recvs)
                        used[nr++] = t;
                    if (sends)
                        post[ns++] = t;
                }
            }
        }
    free(post);
    free(used);
    return t;
}

/* One transfer gpu0 -> gpu1 of S bytes in one unit: 2 x LAT + S x wire / BW. */
START_TEST(test_one_transfer)
{
    struct cs_platform *plat = column(2, 1);
    struct cs_sched *s = new_sched(2, 1);
    struct {
        enum cs_proto proto;
        long long size;
        double wire;
    } cases[] = {
        {CS_PROTO_LL, 32768, 2.0},
        {CS_PROTO_LL, 8, 2.0},
        {CS_PROTO_LL128, 576000, 128.0 / 120.0},
        {CS_PROTO_SIMPLE, 32768, 1.0},
    };

    add_step(add_tb(&s->gpus[0], 1, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[1], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_replay_result r = run(s, plat, cases[i].size, cases[i].proto);

        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        ck_assert_int_eq(r.ntransfers, 1);
        assert_rel(r.time_s, 2 * LAT + cases[i].size * cases[i].wire / BW);
    }
    /* Simple 1 MiB: one call in two slices of 512 KiB, sent one after the other; the sender
     * does not wait out the hop latency of the first, so only the last one's latency shows. */
    {
        struct cs_replay_result r = run(s, plat, 1 << 20, CS_PROTO_SIMPLE);

        ck_assert_int_eq(r.ntransfers, 2);
        assert_rel(r.time_s, 2 * LAT + (1 << 20) / BW);
    }
    /* The launch latency adds once. */
    plat->params.launch_s = 5e-6;
    {
        struct cs_replay_result r = run(s, plat, 32768, CS_PROTO_LL);

        assert_rel(r.time_s, 5e-6 + 2 * LAT + 65536 / BW);
    }
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* Two flows into gpu2 share its DOWN link: each at half rate. Two flows in opposite directions
 * between gpu0 and gpu1 do not interfere. */
START_TEST(test_sharing)
{
    struct cs_platform *plat = column(3, 1);
    struct cs_sched *in = new_sched(3, 1), *opp = new_sched(2, 1);
    struct cs_replay_result r;
    double S = 32768, w = 2 * S;

    add_step(add_tb(&in->gpus[0], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&in->gpus[1], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&in->gpus[2], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    add_step(add_tb(&in->gpus[2], -1, 1), CS_STEP_R, 1, -1, -1, 0);
    r = run(in, plat, (long long)S, CS_PROTO_LL);
    ck_assert_int_eq(r.status, CS_REPLAY_OK);
    assert_rel(r.time_s, 2 * LAT + 2 * w / BW);

    add_step(add_tb(&opp->gpus[0], 1, 1), CS_STEP_S, 1, -1, -1, 0);
    add_step(&opp->gpus[0].tbs[0], CS_STEP_R, 1, -1, -1, 0);
    add_step(add_tb(&opp->gpus[1], 0, 0), CS_STEP_S, 1, -1, -1, 0);
    add_step(&opp->gpus[1].tbs[0], CS_STEP_R, 1, -1, -1, 0);
    r = run(opp, plat, (long long)S, CS_PROTO_LL);
    ck_assert_int_eq(r.status, CS_REPLAY_OK);
    assert_rel(r.time_s, 2 * LAT + w / BW);
    cs_sched_free(in);
    cs_sched_free(opp);
    drop(plat);
}
END_TEST

/* The msccl-tools ring AllReduce on 4 GPUs of one NVLink column: every GPU's tb does the same,
 * so the time is symmetric_ring_time (each unit's hop latency 2 LAT delays its receiver only,
 * so one unit's latency overlaps the wire time of the next). */
START_TEST(test_ring_closed_form)
{
    struct cs_platform *plat = column(4, 1);
    struct cs_sched *s = NULL;
    const enum cs_proto protos[] = {CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE};
    const long long sizes[] = {1024, 65536, 1 << 20, 3 * 1000 * 1000 * 4, 64LL << 20};

    ck_assert_int_eq(
        cs_sched_read_xml(test_data("msccl-xml/simple_allreduce_ring.4gpu.1inst.xml"), &s, NULL),
        0);
    for (unsigned q = 0; q < 3; q++)
        for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            struct cs_plan *plan = NULL;
            struct cs_replay_result r;
            double want;

            if (protos[q] == CS_PROTO_LL && sizes[k] > (1 << 20))
                continue; /* many small calls: slow under sanitizers, nothing new */
            ck_assert_int_eq(cs_plan_build(s, sizes[k], 4, protos[q], &plan, NULL), 0);
            want = symmetric_ring_time(plan, 1);
            cs_plan_free(plan);
            r = run(s, plat, sizes[k], protos[q]);
            ck_assert_int_eq(r.status, CS_REPLAY_OK);
            assert_rel(r.time_s, want);
        }
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* Generated NCCL-style rings on one NVLink column of G GPUs. All K channels' rings run the same
 * direction in step, so K flows share every link at 1/K of its bandwidth: the time is
 * symmetric_ring_time with K x wire / BW per unit. */
/* Jobs started together finish with what cs_replay_run gives each alone; the plan may change
 * between starts (the child keeps its own copy), as the extrapolation's short replays do. */
START_TEST(test_jobs)
{
    struct cs_platform *plat = column(4, 1);
    struct cs_sched *s = NULL;
    struct cs_plan *plan = NULL;
    struct cs_replay_job jobs[3];
    struct cs_replay_result alone[3], together[3];
    const long long sizes[] = {4096, 1 << 20, 8 << 20};

    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=4,channels=1,protocol=Simple", &s, NULL), 0);
    for (int k = 0; k < 3; k++)
        alone[k] = run(s, plat, sizes[k], 0);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(cs_plan_build(s, sizes[k], 4, 0, &plan, NULL), 0);
        ck_assert_int_eq(cs_replay_start(plan, plat, NULL, &jobs[k], NULL), 0);
        cs_plan_free(plan);
    }
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(cs_replay_finish(&jobs[k], &together[k], NULL), 0);
        ck_assert_int_eq(together[k].status, CS_REPLAY_OK);
        ck_assert(together[k].time_s == alone[k].time_s);
        ck_assert_int_eq(together[k].ncalls, alone[k].ncalls);
    }
    ck_assert(together[2].time_s > together[0].time_s);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

START_TEST(test_gen_ring_closed_form)
{
    const int gpus[] = {4, 8};
    const char *protos[] = {"LL", "LL128", "Simple"};
    const long long sizes[] = {4096, 1 << 20, 48LL << 20};

    for (unsigned gi = 0; gi < 2; gi++) {
        struct cs_platform *plat = column(gpus[gi], 1);

        for (int ch = 1; ch <= 2; ch++)
            for (unsigned q = 0; q < 3; q++)
                for (unsigned k = 0; k < 3; k++) {
                    struct cs_sched *s = NULL;
                    struct cs_plan *plan = NULL;
                    struct cs_replay_result r;
                    char spec[128];
                    double want;

                    if (q == 0 && sizes[k] > (1 << 20))
                        continue; /* LL: many small calls, slow under sanitizers */
                    snprintf(spec, sizeof(spec), "ring:gpus=%d,channels=%d,instances=1,protocol=%s",
                             gpus[gi], ch, protos[q]);
                    ck_assert_int_eq(cs_gen_from_spec(spec, &s, NULL), 0);
                    ck_assert_int_eq(cs_plan_build(s, sizes[k], 4, 0, &plan, NULL), 0);
                    want = symmetric_ring_time(plan, ch);
                    cs_plan_free(plan);
                    r = run(s, plat, sizes[k], 0);
                    ck_assert_msg(r.status == CS_REPLAY_OK, "%s %lld", spec, sizes[k]);
                    assert_rel(r.time_s, want);
                    cs_sched_free(s);
                }
        drop(plat);
    }
}
END_TEST

/* A sender with 16 LL calls and 8 credits: the receiver waits for a flag set at time D by a
 * reduce on its GPU. The sender's first 8 calls go at once; the 9th waits for the receiver to
 * consume at D; the last 8 then go back to back (the sender does not wait out their hop
 * latency) and the last arrives at D + 8 T + 2 LAT. With 8 calls the end is D. */
START_TEST(test_credits_block)
{
    struct cs_platform *plat = column(2, 1);
    double T = 2 * 32768 / BW, D;

    plat->params.reduce_Bps = 1e9;
    D = 3 * 32768 / 1e9; /* re of one source: (1 + 2) x bytes */
    ck_assert(D > 8 * T);
    for (int cnt = 8; cnt <= 16; cnt += 8) {
        struct cs_sched *s = new_sched(2, 16);
        struct cs_tb *rt;
        struct cs_replay_result r;

        add_step(add_tb(&s->gpus[0], 1, -1), CS_STEP_S, cnt, -1, -1, 0);
        rt = add_tb(&s->gpus[1], -1, 0);
        add_step(add_tb(&s->gpus[1], -1, -1), CS_STEP_RE, 1, -1, -1, 1);
        add_step(rt, CS_STEP_R, cnt, 1, 0, 0);
        /* 16 chunks of 32 KiB: maxAllowedCount 1, so cnt calls of 32 KiB in one iteration. */
        r = run(s, plat, 16 * 32768, CS_PROTO_LL);
        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        ck_assert_int_eq(r.ntransfers, cnt);
        assert_rel(r.time_s, cnt == 8 ? D : D + 8 * T + 2 * LAT);
        cs_sched_free(s);
    }
    drop(plat);
}
END_TEST

/* The seed at 4 GPUs, Simple: 4 MiB finishes, 16 MiB deadlocks (DEADLOCK_SCAN.tsv), with the
 * two send tbs waiting on each other's credits. */
START_TEST(test_seed_deadlock)
{
    struct cs_platform *plat = column(2, 2);
    struct cs_sched *s = NULL;
    struct cs_replay_result r;

    ck_assert_int_eq(cs_sched_read_xml(test_data("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu"
                                                 ".1inst.LL.xml"),
                                       &s, NULL),
                     0);
    r = run(s, plat, 4 << 20, CS_PROTO_SIMPLE);
    ck_assert_int_eq(r.status, CS_REPLAY_OK);
    ck_assert_ptr_null(r.report);
    r = run(s, plat, 16 << 20, CS_PROTO_SIMPLE);
    ck_assert_int_eq(r.status, CS_REPLAY_DEADLOCK);
    ck_assert_ptr_nonnull(r.report);
    ck_assert_ptr_nonnull(strstr(r.report, "wait-for cycle"));
    ck_assert_ptr_nonnull(strstr(r.report, "waits for credits on connection 0->1 channel 0"));
    ck_assert_ptr_nonnull(strstr(r.report, "waits for credits on connection 1->0 channel 0"));
    cs_replay_result_cleanup(&r);
    /* LL never deadlocks at 4 GPUs (cnt 8 fits 8 slots). */
    r = run(s, plat, 16 << 20, CS_PROTO_LL);
    ck_assert_int_eq(r.status, CS_REPLAY_OK);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* A receive with no sender waits for data forever: a deadlock without a cycle, reported. A flag
 * never published blocks likewise. */
START_TEST(test_deadlock_no_cycle)
{
    struct cs_platform *plat = column(2, 1);
    struct cs_sched *s = new_sched(2, 1);
    struct cs_replay_result r;

    add_step(add_tb(&s->gpus[1], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[0], -1, -1), CS_STEP_CPY, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[0], -1, -1), CS_STEP_CPY, 1, 0, 0, 0);
    r = run(s, plat, 4, CS_PROTO_LL);
    ck_assert_int_eq(r.status, CS_REPLAY_DEADLOCK);
    ck_assert_int_eq(r.nblocked, 2);
    ck_assert_ptr_nonnull(strstr(r.report, "no wait-for cycle"));
    ck_assert_ptr_nonnull(strstr(r.report, "waits for data from gpu 0 on channel 0"));
    ck_assert_ptr_nonnull(strstr(r.report, "waits for the flag of tb 0 step 0"));
    cs_replay_result_cleanup(&r);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* Too few GPU hosts, or two tbs on one connection: refused before SimGrid starts. */
START_TEST(test_refused)
{
    struct cs_platform *plat = column(2, 1);
    struct cs_sched *s = new_sched(3, 1), *t = new_sched(2, 1);
    struct cs_plan *plan = NULL;
    struct cs_replay_result r;
    struct cs_error err;

    cs_error_init(&err);
    add_step(add_tb(&s->gpus[0], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[2], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    ck_assert_int_eq(cs_plan_build(s, 4, 4, 0, &plan, NULL), 0);
    ck_assert_int_eq(cs_replay_run(plan, plat, NULL, &r, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "needs 3 GPUs"));
    cs_plan_free(plan);
    add_step(add_tb(&t->gpus[0], 1, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&t->gpus[0], 1, -1), CS_STEP_S, 1, -1, -1, 0);
    ck_assert_int_eq(cs_plan_build(t, 4, 4, 0, &plan, NULL), 0);
    cs_error_init(&err);
    ck_assert_int_eq(cs_replay_run(plan, plat, NULL, &r, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "one tb"));
    cs_plan_free(plan);
    cs_sched_free(s);
    cs_sched_free(t);
    drop(plat);
}
END_TEST

/* Crossing columns uses the PCIe links: a lone transfer gpu0 -> gpu2 on a 2 x 2 grid. */
START_TEST(test_pcie_route)
{
    struct cs_platform *plat = column(2, 2);
    struct cs_sched *s = new_sched(3, 1);
    struct cs_replay_result r;

    add_step(add_tb(&s->gpus[0], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[2], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    r = run(s, plat, 32768, CS_PROTO_LL);
    assert_rel(r.time_s, 2 * LAT + 65536 / PCIE_BW);
    /* The per-call overhead follows the route's class. */
    plat->params.call_s[CS_PROTO_LL][CS_LINK_PCIE] = 3e-6;
    plat->params.call_s[CS_PROTO_LL][CS_LINK_NVLINK] = 1;
    r = run(s, plat, 32768, CS_PROTO_LL);
    assert_rel(r.time_s, 3e-6 + 2 * LAT + 65536 / PCIE_BW);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_one_transfer, 1},
        {test_sharing, 1},
        {test_ring_closed_form, 1},
        {test_gen_ring_closed_form, 1},
        {test_credits_block, 1},
        {test_seed_deadlock, 1},
        {test_deadlock_no_cycle, 1},
        {test_refused, 1},
        {test_pcie_route, 1},
        {test_jobs, 1},
        {NULL, 0},
    };

    return test_run("replay", 120, tests, NULL);
}
