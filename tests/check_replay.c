/* check_replay.c: the replay against closed forms (protocol overheads zero), flow control and
 * deadlock detection. Each test runs in its own process (Check's fork mode); cs_replay_run forks
 * again for SimGrid. */
#include <check.h>
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/version.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xbt/config.h>

#include "gen.h"
#include "plan.h"
#include "platform.h"
#include "replay.h"
#include "runner.h"
#include "sgrate.h"
#include "testplat.h"
#include "testutil.h"
#include "xml.h"

#define HOP 1e-6 /* per hop (cs.link_lat_s of the route's slowest class), once per unit */
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
    p.link_lat_s[CS_LINK_NVLINK] = HOP;
    p.link_Bps[CS_LINK_PCIE] = PCIE_BW;
    p.link_lat_s[CS_LINK_PCIE] = HOP;
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

/* Equal to within 1e-9, or the engine's rounding: a few picoseconds per rate-bounded transfer. */
static void assert_rel(double got, double want)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * want || fabs(got - want) <= 1e-11,
                  "got %.15e want %.15e (rel %.3e)", got, want, fabs(got - want) / want);
}

/* The replay's definition evaluated by hand for a ring whose GPUs all do the same thing: the
 * units of tb 0 in order, each starting when the tb is free, its data has begun to arrive (the
 * n-th unit received is the predecessor's n-th posted one, started and ended at the same times as
 * this tb's own n-th by symmetry; its first byte arrives the route latency HOP after the sender
 * started it for LL and LL128, which stream lines, after the sender ended it for Simple, which
 * posts whole slices) and, to send, its slots are free (the successor has consumed the unit
 * 8 / slots posts back, as this tb consumed its received unit of that rank); a sending unit then
 * takes share x wire / BW on the links; a receiving one is done no earlier than the sender's end
 * plus HOP. */
static double symmetric_ring_time(const struct cs_plan *plan, double share)
{
    const struct cs_plan_tb *tb = &plan->tbs[0];
    int window = CS_NCCL_STEPS / (plan->slots_per_call / plan->units_per_call);
    int streams = plan->proto != CS_PROTO_SIMPLE;
    long long n = 0, ns = 0, nr = 0;
    double *first, *last, *used, t = 0;

    for (int it = 0; it < plan->sz.niter; it++)
        for (int k = 0; k < tb->nops; k++)
            n += (long long)tb->ops[k].ncalls * plan->units_per_call;
    first = calloc((size_t)n + 1, sizeof(double));
    last = calloc((size_t)n + 1, sizeof(double));
    used = calloc((size_t)n + 1, sizeof(double));
    ck_assert(first != NULL && last != NULL && used != NULL);
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
                        ck_assert(nr < ns); /* it was started already */
                        if (first[nr] + HOP > t)
                            t = first[nr] + HOP;
                    }
                    if (sends && ns >= window) {
                        ck_assert(ns - window < nr);
                        if (used[ns - window] > t)
                            t = used[ns - window];
                    }
                    if (sends)
                        first[ns] = t;
                    if (sends && u[j] > 0)
                        t += share * cs_plan_wire_bytes(plan, u[j]) / BW;
                    if (recvs) {
                        if (last[nr] + HOP > t)
                            t = last[nr] + HOP;
                        used[nr++] = t;
                    }
                    if (sends) {
                        last[ns] = t;
                        if (!streams)
                            first[ns] = t;
                        ns++;
                    }
                }
            }
        }
    free(first);
    free(last);
    free(used);
    return t;
}

/* One transfer gpu0 -> gpu1 of S bytes in one unit: HOP + S x wire / BW. */
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
        assert_rel(r.time_s, HOP + cases[i].size * cases[i].wire / BW);
    }
    /* Simple 1 MiB: one call in two slices of 512 KiB, sent one after the other; the sender
     * does not wait out the hop latency of the first, so only the last one's latency shows. */
    {
        struct cs_replay_result r = run(s, plat, 1 << 20, CS_PROTO_SIMPLE);

        ck_assert_int_eq(r.ntransfers, 2);
        assert_rel(r.time_s, HOP + (1 << 20) / BW);
    }
    /* A protocol that gets a quarter of the link takes four times the wire time. */
    plat->params.link_eff[CS_PROTO_LL][CS_LINK_NVLINK] = 0.25;
    {
        struct cs_replay_result r = run(s, plat, 32768, CS_PROTO_LL);

        assert_rel(r.time_s, HOP + 4 * 65536 / BW);
    }
    plat->params.link_eff[CS_PROTO_LL][CS_LINK_NVLINK] = 1;
    /* The launch latency adds once. */
    plat->params.launch_s = 5e-6;
    {
        struct cs_replay_result r = run(s, plat, 32768, CS_PROTO_LL);

        assert_rel(r.time_s, 5e-6 + HOP + 65536 / BW);
    }
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* A forwarding chain of G GPUs (s, G-2 x rcs, r), one call of S bytes, each tb bounded by a
 * rate R below its links' (per-tb cap), and the receivers' local memory free. LL and LL128 stream:
 * a tb forwards what lands a pass of its threads at a time (cs.pass_bytes P; 0: line by line), so
 * each hop costs its latency and one pass, and the chain takes (G-1) x (HOP + min(S, P) / R) +
 * S / R: one pass of store-and-forward per hop, the rest streamed (at S <= P, store-and-forward).
 * Simple posts whole slices, so each hop waits for the previous one: (G-1) x (HOP + S / R) +
 * S / R (the last receiver's own pass). */
START_TEST(test_chain_streams)
{
    enum { G = 8 };
    const double rate = 5e9;
    /* the MSCCL executor runs LL on 640 threads, NCCL's cs.tb_Bps and cs.pass_bytes are for 512:
     * with no fixed part in a pass, the rate and the pass grow with the threads */
    const double wide = (double)CS_MSCCL_LL_THREADS / CS_NCCL_LL_THREADS;
    struct cs_platform *plat = column(G, 1);
    struct cs_sched *s = new_sched(G, 1);
    struct {
        enum cs_proto proto;
        long long size;
        double pass_bytes; /* cs.pass_bytes of the protocol */
        int streams;       /* 1 streams, 0 store-and-forward, 2 staged (one pass) */
    } cases[] = {
        {CS_PROTO_LL, 32768, 4096, 1}, /* 7 passes of 640 lines: each hop waits for the first */
        {CS_PROTO_LL, 2048, 4096, 2},  /* one pass: staged, worked then sent */
        {CS_PROTO_LL, 32768, 0, 1},    /* line by line */
        {CS_PROTO_LL128, 512 * 1024, 0, 1}, {CS_PROTO_SIMPLE, 32768, 0, 0},
    };

    add_step(add_tb(&s->gpus[0], 1, -1), CS_STEP_S, 1, -1, -1, 0);
    for (int g = 1; g < G - 1; g++)
        add_step(add_tb(&s->gpus[g], g + 1, g - 1), CS_STEP_RCS, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[G - 1], -1, G - 2), CS_STEP_R, 1, -1, -1, 0);
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double f = cases[i].proto == CS_PROTO_LL ? wide : 1, pass = cases[i].pass_bytes * f;
        double whole = cases[i].size / (rate * f), want;
        double first = (pass < cases[i].size ? pass : cases[i].size) / (rate * f); /* a pass */
        double transit = cases[i].size * 2 / BW; /* LL lines over the link */
        struct cs_replay_result r;

        plat->params.tb_Bps[cases[i].proto] = rate;
        plat->params.pass_bytes[cases[i].proto] = cases[i].pass_bytes;
        r = run(s, plat, cases[i].size, cases[i].proto);
        want = cases[i].streams == 1   ? (G - 1) * (HOP + first) + whole
               : cases[i].streams == 2 ? (G - 1) * (whole + transit + HOP) + whole
                                       : (G - 1) * (HOP + whole) + whole;
        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        assert_rel(r.time_s, want);
    }
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* The same chain with a fixed part in each LL pass (cs.pass_s): a CTA moves data at
 * R = 1 / (1/tb_Bps + pass_s / pass_bytes), a pass reaches the next hop pass_s + pass / tb_Bps
 * after it started; many passes stream (each hop waits for the first pass), a unit of one pass
 * is staged (worked at R, then its lines cross the link, posted no earlier than its pass). The
 * MSCCL executor's 640 threads make a pass of 640 lines; the line rate stays (four warps or more
 * use every processing block of the SM). Two chains side by side on channels 0 and 1 share every
 * link: a staged unit's transit takes twice as long. */
START_TEST(test_pass_model)
{
    enum { G = 6 };
    const double tb = 40e9, ps = 0.02e-6, pb = 4096 * (double)CS_MSCCL_LL_THREADS / 512;
    const double R = 1 / (1 / tb + ps / pb);
    struct cs_platform *plat = column(G, 1);
    long long sizes[] = {65536, 2048};

    plat->params.tb_Bps[CS_PROTO_LL] = tb;
    plat->params.pass_bytes[CS_PROTO_LL] = 4096;
    plat->params.pass_s[CS_PROTO_LL] = ps;
    for (int chans = 1; chans <= 2; chans++) {
        struct cs_sched *s = new_sched(G, chans);

        s->nchannels = chans;
        for (int c = 0; c < chans; c++) {
            struct cs_tb *t = add_tb(&s->gpus[0], 1, -1);

            t->chan = c;
            add_step(t, CS_STEP_S, 1, -1, -1, 0);
            for (int g = 1; g < G - 1; g++) {
                t = add_tb(&s->gpus[g], g + 1, g - 1);
                t->chan = c;
                add_step(t, CS_STEP_RCS, 1, -1, -1, 0);
            }
            t = add_tb(&s->gpus[G - 1], -1, G - 2);
            t->chan = c;
            add_step(t, CS_STEP_R, 1, -1, -1, 0);
        }
        for (int i = chans - 1; i < 2; i++) { /* two chains: the staged size only */
            double b = sizes[i] / chans, whole = b / R, first = ps + (b < pb ? b : pb) / tb;
            double transit = 2 * b * chans / BW, want;
            struct cs_replay_result r = run(s, plat, sizes[i], CS_PROTO_LL);

            if (b > pb) /* streams, the CTA's rate below the link's */
                want = (G - 1) * (HOP + first) + whole;
            else /* staged: worked, sent over the shared links, posted after its pass */
                want = (G - 1) * (fmax(whole + transit, first) + HOP) + whole;
            ck_assert(b > pb || whole + transit > first); /* the links' time shows */
            ck_assert_int_eq(r.status, CS_REPLAY_OK);
            assert_rel(r.time_s, want);
        }
        cs_sched_free(s);
    }
    drop(plat);
}
END_TEST

/* A 1-channel LL ring of G GPUs at 8 bytes per GPU: 2(G-1) steps, each one hop. A step costs
 * the hop latency once (HOP, cs.link_lat_s.nvlink, though the route crosses two links) plus the
 * protocol's per-call cost; the line's wire time shows once, as each GPU forwards the line as it
 * lands (LL streams); with a process driving all G GPUs, GPU k's
 * kernel starts k x cs.launch_gpu_s late, and the ring waits for the last one. */
START_TEST(test_ring_hop_once)
{
    enum { G = 6 };
    struct cs_platform *plat = column(G, 1);
    struct cs_sched *s = NULL;
    struct cs_plan *plan = NULL;
    struct cs_replay_result r, one, staggered;
    const double call = 0.25e-6, stagger = 3e-6;
    double wire;

    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=6,channels=1,protocol=LL", &s, NULL), 0);
    ck_assert_int_eq(cs_plan_build(s, 8 * G, 4, CS_PROTO_LL, &plan, NULL), 0);
    ck_assert_int_eq(plan->sz.niter, 1);
    wire = cs_plan_wire_bytes(plan, 2) / BW; /* one float per GPU and step: one LL line */
    cs_plan_free(plan);
    r = run(s, plat, 8 * G, CS_PROTO_LL);
    assert_rel(r.time_s, 2 * (G - 1) * HOP + wire);
    plat->params.call_s[CS_PROTO_LL][CS_LINK_NVLINK] = call;
    one = run(s, plat, 8 * G, CS_PROTO_LL);
    assert_rel(one.time_s, 2 * (G - 1) * (HOP + call) + wire);
    plat->params.launch_gpu_s = stagger;
    one = run(s, plat, 8 * G, CS_PROTO_LL);
    assert_rel(one.time_s, 2 * (G - 1) * (HOP + call) + wire); /* one process per GPU */
    plat->params.gpus_per_process = G;
    staggered = run(s, plat, 8 * G, CS_PROTO_LL);
    ck_assert(staggered.time_s > one.time_s + (G - 2) * stagger);
    ck_assert(staggered.time_s <= one.time_s + (G - 1) * stagger + 1e-12);
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
    assert_rel(r.time_s, HOP + 2 * w / BW);

    add_step(add_tb(&opp->gpus[0], 1, 1), CS_STEP_S, 1, -1, -1, 0);
    add_step(&opp->gpus[0].tbs[0], CS_STEP_R, 1, -1, -1, 0);
    add_step(add_tb(&opp->gpus[1], 0, 0), CS_STEP_S, 1, -1, -1, 0);
    add_step(&opp->gpus[1].tbs[0], CS_STEP_R, 1, -1, -1, 0);
    r = run(opp, plat, (long long)S, CS_PROTO_LL);
    ck_assert_int_eq(r.status, CS_REPLAY_OK);
    assert_rel(r.time_s, HOP + w / BW);
    cs_sched_free(in);
    cs_sched_free(opp);
    drop(plat);
}
END_TEST

/* Progressive filling, and a share that grows when a transfer ends: gpus 0, 1 and 2 send one
 * chunk (wire w) each into gpu 3 while gpu 0 also sends four chunks (4w) to gpu 1. gpu 3's DOWN
 * link is the tightest (a third each), so gpu 0's UP link gives the fourth transfer the other two
 * thirds; once the three have ended (3w / BW), it has 2w left, alone at BW: the last byte lands
 * at HOP + 5w / BW. Direct and on SimGrid's engine alike. */
START_TEST(test_sharing_fill)
{
    struct cs_platform *plat = column(4, 1);
    struct cs_sched *s = new_sched(4, 4);
    const double S = 32768, w = 2 * S / 4;
    struct cs_replay_opts direct = {0}, sg = {.no_direct = 1};
    struct cs_plan *plan = NULL;
    struct cs_replay_result a, b;

    for (int g = 0; g < 3; g++)
        add_step(add_tb(&s->gpus[g], 3, -1), CS_STEP_S, 1, -1, -1, 0);
    for (int g = 0; g < 3; g++)
        add_step(add_tb(&s->gpus[3], -1, g), CS_STEP_R, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[0], 1, -1), CS_STEP_S, 4, -1, -1, 0);
    add_step(add_tb(&s->gpus[1], -1, 0), CS_STEP_R, 4, -1, -1, 0);
    ck_assert_int_eq(cs_plan_build(s, (long long)S, 4, CS_PROTO_LL, &plan, NULL), 0);
    ck_assert_int_eq(cs_replay_run(plan, plat, &direct, &a, NULL), 0);
    ck_assert_int_eq(cs_replay_run(plan, plat, &sg, &b, NULL), 0);
    ck_assert_int_eq(a.status, CS_REPLAY_OK);
    ck_assert_int_eq(a.direct, 1);
    ck_assert_int_eq(b.direct, 0);
    ck_assert_int_eq(a.ntransfers, 4);
    assert_rel(a.time_s, HOP + 5 * w / BW);
    ck_assert_msg(a.time_s == b.time_s, "%.17g and %.17g", a.time_s, b.time_s);
    cs_replay_result_cleanup(&a);
    cs_replay_result_cleanup(&b);
    cs_plan_free(plan);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* The per-threadblock cap is a bound on the transfer's rate: two LL flows into gpu2's DOWN
 * link, each capped at 0.3 of the link (in wire bytes), run side by side at their caps for the
 * whole transfer (the timeline's wire time is wire / cap, the link carries 0.6 of its bandwidth
 * meanwhile), rather than splitting the link in halves and then sleeping. With a cap above half
 * the link, the link's max-min share binds instead. */
START_TEST(test_rate_cap)
{
    struct cs_platform *plat = column(3, 1);
    struct cs_sched *in = new_sched(3, 1);
    const double S = 32768, w = 2 * S;
    const double caps[] = {0.3, 0.7}; /* of the link, in wire bytes */

    add_step(add_tb(&in->gpus[0], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&in->gpus[1], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&in->gpus[2], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    add_step(add_tb(&in->gpus[2], -1, 1), CS_STEP_R, 1, -1, -1, 0);
    for (int k = 0; k < 2; k++) {
        struct cs_plan *plan = NULL;
        struct cs_replay_opts opts = {0};
        struct cs_replay_result r;
        struct cs_timeline tl;
        /* the cap in wire bytes per second; the MSCCL executor's 640 LL threads raise NCCL's
         * cs.tb_Bps of 512 in proportion (no fixed part in a pass) */
        double cap = caps[k] * (double)CS_MSCCL_LL_THREADS / CS_NCCL_LL_THREADS;
        double rate = cap < 0.5 ? cap * BW : BW / 2;
        int nunits = 0;

        plat->params.tb_Bps[CS_PROTO_LL] = caps[k] * BW / 2; /* data: LL lines are half data */
        plat->params.pass_bytes[CS_PROTO_LL] = 0;            /* line by line: the cap alone */
        ck_assert_int_eq(cs_plan_build(in, (long long)S, 4, CS_PROTO_LL, &plan, NULL), 0);
        cs_timeline_init(&tl, 0);
        opts.timeline = &tl;
        ck_assert_int_eq(cs_replay_run(plan, plat, &opts, &r, NULL), 0);
        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        assert_rel(r.time_s, HOP + w / rate);
        for (long long i = 0; i < tl.nevents; i++)
            if (tl.events[i].kind == CS_TL_UNIT && tl.events[i].out_conn >= 0) {
                assert_rel(tl.events[i].wire_s, w / rate);
                nunits++;
            }
        ck_assert_int_eq(nunits, 2);
        cs_timeline_cleanup(&tl);
        cs_replay_result_cleanup(&r);
        /* the same without a timeline: the direct replay's shares bound the same */
        opts.timeline = NULL;
        ck_assert_int_eq(cs_replay_run(plan, plat, &opts, &r, NULL), 0);
        ck_assert_int_eq(r.direct, 1);
        assert_rel(r.time_s, HOP + w / rate);
        cs_replay_result_cleanup(&r);
        cs_plan_free(plan);
    }
    cs_sched_free(in);
    drop(plat);
}
END_TEST

/* The msccl-tools ring AllReduce on 4 GPUs of one NVLink column: every GPU's tb does the same,
 * so the time is symmetric_ring_time (each unit's hop latency HOP delays its receiver only,
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

/* nccl-tests' loop, back to back (cs_replay_opts.back_to_back): gpu0 sends S bytes to gpu1
 * each collective. Alone, gpu0 ends when its bytes are on the wire (W = S x wire / BW) and gpu1
 * a hop later; the collective takes L + W + HOP. Back to back, each GPU's next kernel L after
 * its last: gpu0's collectives end L + W apart, gpu1's each HOP after gpu0's (its data is
 * there by then). Over 20 of them, rank 0 takes L + W each and rank 1 HOP / 20 more: the mean
 * is L + W + HOP / 40, the same with 2 to 6 collectives replayed (periodic from the first). The
 * symmetric ring ends every GPU together, so back to back it takes what one collective takes. */
START_TEST(test_back_to_back)
{
    struct cs_platform *plat = column(4, 1);
    struct cs_sched *s = new_sched(2, 1), *ring = NULL;
    const double L = 5e-6, W = 32768 * 2.0 / BW;
    struct cs_replay_opts o = {0};
    struct cs_plan *plan = NULL;
    struct cs_replay_result r, one;

    plat->params.launch_s = L;
    add_step(add_tb(&s->gpus[0], 1, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&s->gpus[1], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    ck_assert_int_eq(cs_plan_build(s, 32768, 4, CS_PROTO_LL, &plan, NULL), 0);
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &one, NULL), 0);
    assert_rel(one.time_s, L + W + HOP);
    assert_rel(one.spread_s, HOP);
    ck_assert_int_eq(one.colls, 1);
    for (int k = 2; k <= 6; k++) {
        o.back_to_back = k;
        ck_assert_int_eq(cs_replay_run(plan, plat, &o, &r, NULL), 0);
        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        ck_assert_int_eq(r.colls, k);
        ck_assert_int_eq(r.ncalls, 2 * k);
        assert_rel(r.time_s, L + W + HOP / 40);
        o.no_direct = 1; /* SimGrid's engine: the same */
        ck_assert_int_eq(cs_replay_run(plan, plat, &o, &r, NULL), 0);
        ck_assert_int_eq(r.direct, 0);
        assert_rel(r.time_s, L + W + HOP / 40);
        o.no_direct = 0;
    }
    cs_plan_free(plan);
    ck_assert_int_eq(
        cs_sched_read_xml(test_data("msccl-xml/simple_allreduce_ring.4gpu.1inst.xml"), &ring, NULL),
        0);
    ck_assert_int_eq(cs_plan_build(ring, 65536, 4, CS_PROTO_LL, &plan, NULL), 0);
    o.back_to_back = 1;
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &one, NULL), 0);
    ck_assert(one.spread_s == 0);
    o.back_to_back = 4;
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &r, NULL), 0);
    assert_rel(r.time_s, one.time_s);
    cs_plan_free(plan);
    cs_sched_free(ring);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* NCCL's own kernel below a loop (cs_plan_call_elems): each chunk ceil(count / chunks) rounded
 * up to 16 bytes, filled in order, the chunks past the count empty; its LL primitives read and
 * write no line of an empty chunk, so nothing waits on one. The 2-GPU ring (1 channel) at 16 B:
 * chunk 0 holds the 4 floats, chunk 1 none. gpu1 sends chunk 0, gpu0 reduces it in and sends it
 * back, gpu1 receives it; the other three steps are empty. Alone, with a unit's wire time
 * w = 32 B / BW: gpu0 ends at HOP + w (it streams the lines on as they land, the protocol's
 * pass costing nothing here), gpu1 at 2 HOP + w, the collective L + 2 HOP + w. Back to back
 * every collective starts and ends on gpu1, L later: 20 of them take L + 2 HOP + w each on
 * gpu1 and HOP / 20 less on gpu0, L + 2 HOP + w - HOP / 40 on average. */
START_TEST(test_nccl_sparse_chunks)
{
    struct cs_platform *plat = column(2, 1);
    struct cs_gen_opts g = {.gpus = 2, .channels = 1, .nodes = 1, .size_bytes = 16};
    const double L = 5e-6, w = 32 / BW;
    struct cs_replay_opts o = {0};
    struct cs_sched *s = NULL, *eight = NULL;
    struct cs_plan *plan = NULL;
    struct cs_replay_result one, r;
    struct cs_error err;
    struct {
        int gpus, channels;
        long long bytes;
        long long want[8];
    } fill[] = {
        {8, 1, 8, {2, 0, 0, 0, 0, 0, 0, 0}},   /* 2 floats: the first 16-B chunk */
        {8, 1, 64, {4, 4, 4, 4, 0, 0, 0, 0}},  /* 16 floats: 4 chunks of 16 B */
        {8, 1, 100, {4, 4, 4, 4, 4, 4, 1, 0}}, /* 25 floats: ceil(25 / 8) = 4 */
        /* 8202 floats on 2 channels (NCCL's width at 32 KiB on 4 ranks): 4104 (4101 rounded up
         * to 16 B) and 4098; their chunks of 1028 (1026 rounded) and 1028 (1025 rounded) */
        {4, 2, 32808, {1028, 1028, 1028, 1020, 1028, 1028, 1028, 1014}},
        {4, 2, 32768, {1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}}, /* the MSCCL split */
    };

    cs_error_init(&err);
    for (unsigned i = 0; i < sizeof(fill) / sizeof(fill[0]); i++) {
        struct cs_gen_opts f = {.gpus = fill[i].gpus,
                                .channels = fill[i].channels,
                                .nodes = 1,
                                .size_bytes = fill[i].bytes,
                                .proto = CS_PROTO_LL,
                                .nccl_algo = CS_NCCL_ALGO_RING};
        int chunks[8] = {0}, seen = 0;

        ck_assert_msg(cs_gen_nccl(&f, &eight, NULL, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(eight->nchannels, fill[i].channels); /* NCCL's width at the size */
        ck_assert_msg(cs_plan_build(eight, fill[i].bytes, 4, 0, &plan, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(plan->sz.niter, 1);
        for (int t = 0; t < plan->ntbs; t++)
            for (int k = 0; k < plan->tbs[t].nops; k++) {
                const struct cs_plan_op *op = &plan->tbs[t].ops[k];
                long long n = cs_plan_call_elems(plan, op, 0, 0);

                int c = cs_step_reads_src(op->type) ? op->srcoff[0] : op->dstoff;

                ck_assert(c >= 0 && c < 8);
                ck_assert_msg(n == fill[i].want[c], "%lld B, chunk %d: %lld, want %lld",
                              fill[i].bytes, c, n, fill[i].want[c]);
                chunks[c] = 1;
                seen++;
            }
        for (int c = 0; c < fill[i].gpus * fill[i].channels; c++)
            ck_assert(chunks[c]); /* every chunk is some op's */
        ck_assert(seen > 0);
        cs_plan_free(plan);
        cs_sched_free(eight);
    }
    g.proto = CS_PROTO_LL;
    g.nccl_algo = CS_NCCL_ALGO_RING;
    ck_assert_msg(cs_gen_nccl(&g, &s, NULL, &err) == 0, "%s", err.msg);
    plat->params.launch_s = L;
    ck_assert_msg(cs_plan_build(s, 16, 4, 0, &plan, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &one, NULL), 0);
    ck_assert_int_eq(one.status, CS_REPLAY_OK);
    ck_assert_int_eq(one.ntransfers, 2);
    assert_rel(one.time_s, L + 2 * HOP + w);
    assert_rel(one.spread_s, HOP);
    o.back_to_back = 4;
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &r, NULL), 0);
    assert_rel(r.time_s, L + 2 * HOP + w - HOP / 40);
    cs_plan_free(plan);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* NCCL's Simple ring between the GPUs of one process receives in place. On 2 GPUs the AllGather
 * is one tb a GPU: a send of its half, two slices of Q bytes at the CTA's rate T, then a receive
 * of the other's. In one process the receive only waits for the peer's last slice: HOP + 2Q/T.
 * Across processes it copies both slices out of the FIFO, which arrived during the send, at T
 * after the send: 4Q/T. */
START_TEST(test_nccl_direct_recv)
{
    struct cs_platform *plat = column(2, 1);
    struct cs_gen_opts g = {.gpus = 2,
                            .channels = 1,
                            .nodes = 1,
                            .size_bytes = 1 << 20,
                            .proto = CS_PROTO_SIMPLE,
                            .coll = CS_COLL_ALLGATHER,
                            .nccl_algo = CS_NCCL_ALGO_RING};
    const double T = 5e9;
    struct cs_replay_opts o = {.no_direct = 1};
    struct cs_sched *s = NULL;
    struct cs_plan *plan = NULL;
    struct cs_replay_result apart, one, sg;
    struct cs_error err;
    long long units[2];
    double Q;

    cs_error_init(&err);
    ck_assert_msg(cs_gen_nccl(&g, &s, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(cs_plan_build(s, 1 << 20, 4, 0, &plan, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(plan->sz.niter, 1);
    ck_assert(plan->nccl_kernel);
    cs_plan_call_units(plan, (1 << 20) / 2 / 4, units);
    ck_assert(units[0] == units[1]); /* two equal slices of the half */
    Q = (double)units[1];            /* bytes */
    plat->params.tb_Bps[CS_PROTO_SIMPLE] = T;
    plat->params.gpus_per_process = 1;
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &apart, NULL), 0);
    plat->params.gpus_per_process = 2;
    plat->params.launch_gpu_s = 0;
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &one, NULL), 0);
    ck_assert_int_eq(apart.status, CS_REPLAY_OK);
    ck_assert_int_eq(one.status, CS_REPLAY_OK);
    assert_rel(one.time_s, HOP + 2 * Q / T);
    assert_rel(apart.time_s, 4 * Q / T);
    o.no_direct = 0; /* the direct engine agrees */
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &sg, NULL), 0);
    assert_rel(sg.time_s, one.time_s);
    cs_replay_result_cleanup(&apart);
    cs_replay_result_cleanup(&one);
    cs_replay_result_cleanup(&sg);
    cs_plan_free(plan);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* The direct replay and SimGrid's engine give the same times to the last bit: a ring of one tb
 * a GPU at every size and protocol; two senders into one GPU, whose transfers share its link; a
 * ring whose tbs all receive first deadlocks the same way both ways. */
START_TEST(test_direct)
{
    struct cs_platform *plat = column(4, 1);
    struct cs_sched *s = NULL, *two = new_sched(3, 1), *stuck = new_sched(2, 1);
    const enum cs_proto protos[] = {CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE};
    const long long sizes[] = {1024, 1 << 20, 64LL << 20};
    struct cs_replay_opts direct = {0}, sg = {.no_direct = 1};

    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=4,channels=1,protocol=LL", &s, NULL), 0);
    add_step(add_tb(&two->gpus[0], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&two->gpus[1], 2, -1), CS_STEP_S, 1, -1, -1, 0);
    add_step(add_tb(&two->gpus[2], -1, 0), CS_STEP_R, 1, -1, -1, 0);
    add_step(add_tb(&two->gpus[2], -1, 1), CS_STEP_R, 1, -1, -1, 0);
    for (int g = 0; g < 2; g++) {
        struct cs_tb *tb = add_tb(&stuck->gpus[g], 1 - g, 1 - g);

        add_step(tb, CS_STEP_R, 1, -1, -1, 0);
        add_step(tb, CS_STEP_S, 1, -1, -1, 0);
    }
    for (int k = 0; k < 3 * 3 + 2; k++) {
        const struct cs_sched *in = k < 9 ? s : k == 9 ? two : stuck;
        struct cs_plan *plan = NULL;
        struct cs_replay_result a, b;

        ck_assert_int_eq(cs_plan_build(in, k < 9 ? sizes[k % 3] : 32768, 4,
                                       k < 9 ? protos[k / 3] : CS_PROTO_LL, &plan, NULL),
                         0);
        ck_assert_int_eq(cs_replay_run(plan, plat, &direct, &a, NULL), 0);
        ck_assert_int_eq(cs_replay_run(plan, plat, &sg, &b, NULL), 0);
        ck_assert_int_eq(a.status, b.status);
        ck_assert_int_eq(a.status, k < 10 ? CS_REPLAY_OK : CS_REPLAY_DEADLOCK);
        ck_assert_msg(a.time_s == b.time_s && a.sim_s == b.sim_s, "case %d: %.17g and %.17g", k,
                      a.sim_s, b.sim_s);
        ck_assert_int_eq(a.ntransfers, b.ntransfers);
        ck_assert_int_eq(a.direct, 1);
        ck_assert_int_eq(b.direct, 0);
        if (k == 10)
            ck_assert_str_eq(a.report, b.report);
        cs_replay_result_cleanup(&a);
        cs_replay_result_cleanup(&b);
        cs_plan_free(plan);
    }
    cs_sched_free(s);
    cs_sched_free(two);
    cs_sched_free(stuck);
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

/* gpu0 sends cnt 32-KiB chunks to gpu1 in one step; gpu1's receive waits on the flag of a
 * reduce (one source) that gpu1's other tb runs first. nchunks chunks per loop. */
static struct cs_sched *credit_sched(int nchunks, int cnt)
{
    struct cs_sched *s = new_sched(2, nchunks);
    struct cs_tb *rt;

    add_step(add_tb(&s->gpus[0], 1, -1), CS_STEP_S, cnt, -1, -1, 0);
    rt = add_tb(&s->gpus[1], -1, 0);
    add_step(add_tb(&s->gpus[1], -1, -1), CS_STEP_RE, 1, -1, -1, 1);
    add_step(rt, CS_STEP_R, cnt, 1, 0, 0);
    return s;
}

/* A sender with 16 LL calls and 8 credits: the receiver waits for a flag set at time D by a
 * reduce on its GPU (plus the runtime's flag and dependency costs when they are set). The sender's
 * first 8 calls go at once; the 9th waits for the receiver to consume at D; the last 8 then go back
 * to back (the sender does not wait out their hop latency) and the last arrives at D + 8 T + HOP.
 * With 8 calls the end is D. */
START_TEST(test_credits_block)
{
    struct cs_platform *plat = column(2, 1);
    double T = 2 * 32768 / BW, D;

    plat->params.reduce_Bps = 1e9;
    D = 3 * 32768 / 1e9; /* re of one source: (1 + 2) x bytes */
    ck_assert(D > 8 * T);
    for (int cnt = 8; cnt <= 16; cnt += 8) {
        struct cs_sched *s = credit_sched(16, cnt);
        struct cs_replay_result r;

        /* 16 chunks of 32 KiB: maxAllowedCount 1, so cnt calls of 32 KiB in one iteration. */
        r = run(s, plat, 16 * 32768, CS_PROTO_LL);
        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        ck_assert_int_eq(r.ntransfers, cnt);
        assert_rel(r.time_s, cnt == 8 ? D : D + 8 * T + HOP);
        if (cnt == 8) {
            /* The executor's own costs: every tb loads its step table first (cs.prologue_s);
             * the reduce's flag shows a barrier and cs.flag_s late, and the receive that
             * waited on it pays cs.dep_s and a barrier before its calls. */
            plat->params.prologue_s = 1.5e-6;
            plat->params.flag_s = 0.5e-6;
            plat->params.dep_s = 0.25e-6;
            plat->params.barrier_s = 0.0625e-6;
            r = run(s, plat, 16 * 32768, CS_PROTO_LL);
            assert_rel(r.time_s, 1.5e-6 + D + 0.5e-6 + 0.25e-6 + 2 * 0.0625e-6);
            /* NCCL's own kernels (gen nccl) run no interpreter: none of these */
            s->nccl_kernel = 1;
            r = run(s, plat, 16 * 32768, CS_PROTO_LL);
            assert_rel(r.time_s, D);
            s->nccl_kernel = 0;
            plat->params.flag_s = plat->params.dep_s = plat->params.barrier_s = 0;
            plat->params.prologue_s = 0;
        }
        cs_sched_free(s);
    }
    drop(plat);
}
END_TEST

/* The same over the network (two a100-hier columns joined by net, one GPU each): the proxy's
 * window adds CS_NET_PROXY_DEPTH slots, so 16 calls go at once and end at D; the 17th of 24
 * waits for the receiver at D, and the last arrives at D + 8 T + HOP. */
START_TEST(test_net_window)
{
    struct cs_platform_spec spec;
    struct cs_platform *plat;
    struct cs_params p;
    double T = 2 * 32768 / BW, D;

    ck_assert_int_eq(CS_NCCL_STEPS + CS_NET_PROXY_DEPTH, 16);
    cs_params_init(&p);
    p.link_Bps[CS_LINK_NVLINK] = p.link_Bps[CS_LINK_PCIE] = p.link_Bps[CS_LINK_NET] = BW;
    p.link_lat_s[CS_LINK_NET] = HOP;
    cs_platform_spec_init(&spec, CS_FAM_HIER);
    spec.rows = 1;
    spec.columns = 2;
    spec.between = CS_LINK_NET;
    plat = test_platform_spec(&spec, &p, plat_path);
    plat->params.launch_s = 0;
    test_platform_bare(plat);
    plat->params.reduce_Bps = 1e9;
    D = 3 * 32768 / 1e9;
    ck_assert(D > 16 * T);
    for (int cnt = 16; cnt <= 24; cnt += 8) {
        struct cs_sched *s = credit_sched(24, cnt);
        struct cs_replay_result r;

        r = run(s, plat, 24 * 32768, CS_PROTO_LL);
        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        ck_assert_int_eq(r.ntransfers, cnt);
        assert_rel(r.time_s, cnt == 16 ? D : D + 8 * T + HOP);
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
    assert_rel(r.time_s, HOP + 65536 / PCIE_BW);
    /* The per-call overhead follows the route's class. */
    plat->params.call_s[CS_PROTO_LL][CS_LINK_PCIE] = 3e-6;
    plat->params.call_s[CS_PROTO_LL][CS_LINK_NVLINK] = 1;
    r = run(s, plat, 32768, CS_PROTO_LL);
    assert_rel(r.time_s, 3e-6 + HOP + 65536 / PCIE_BW);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* The timeline of a generated hierarchical AllReduce (flags between a GPU's tbs, credits and data
 * across GPUs) with every runtime cost on: each tb's work and waits tile [0, its end] without
 * gaps or overlaps, events are stored in the order they end, each call lies within its tb's
 * events, and recording leaves the time as it is. */
START_TEST(test_timeline_tiles)
{
    struct cs_platform *plat = column(4, 2);
    struct cs_sched *s = NULL;
    struct cs_plan *plan = NULL;
    struct cs_replay_opts opts = {0};
    struct cs_replay_result r, plain;
    struct cs_timeline tl;
    double *end;

    plat->params.call_s[CS_PROTO_LL][CS_LINK_NVLINK] = 0.3e-6;
    plat->params.call_s[CS_PROTO_LL][CS_LINK_PCIE] = 0.4e-6;
    plat->params.dep_s = 0.2e-6;
    plat->params.flag_s = 0.1e-6;
    plat->params.tb_Bps[CS_PROTO_LL] = 20e9;
    ck_assert_int_eq(
        cs_gen_from_spec("hierarchical:gpus=8,columns=2,instances=1,protocol=LL", &s, NULL), 0);
    ck_assert_int_eq(cs_plan_build(s, 1 << 20, 4, CS_PROTO_LL, &plan, NULL), 0);
    cs_timeline_init(&tl, 0);
    opts.timeline = &tl;
    ck_assert_int_eq(cs_replay_run(plan, plat, &opts, &r, NULL), 0);
    ck_assert_int_eq(cs_replay_run(plan, plat, NULL, &plain, NULL), 0);
    ck_assert_int_eq(r.status, CS_REPLAY_OK);
    ck_assert(r.time_s == plain.time_s);
    ck_assert(tl.complete && !tl.truncated && tl.nevents > plan->ntbs);
    end = calloc((size_t)plan->ntbs, sizeof(*end));
    ck_assert(end != NULL);
    for (long long i = 0; i < tl.nevents; i++) {
        const struct cs_tl_event *e = &tl.events[i];

        ck_assert(e->tb >= 0 && e->tb < plan->ntbs);
        ck_assert(e->start_s <= e->end_s && e->end_s <= r.sim_s);
        ck_assert(i == 0 || tl.events[i - 1].end_s <= e->end_s);
        if (e->kind == CS_TL_CALL) {
            ck_assert(e->end_s == end[e->tb]); /* recorded when its last part is */
            continue;
        }
        ck_assert_msg(e->start_s == end[e->tb], "tb %d: event %lld starts at %.17g, not %.17g",
                      e->tb, i, e->start_s, end[e->tb]);
        end[e->tb] = e->end_s;
    }
    for (int t = 0; t < plan->ntbs; t++)
        ck_assert(end[t] > 0);
    free(end);
    cs_timeline_cleanup(&tl);
    cs_plan_free(plan);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

/* sgrate's calls in an engine of the test's own (Check forks each test): a transfer reports its
 * end through the callback once its bytes are over, a timer fires at its date, and on SimGrid
 * 3.32 the transfer is a plain comm (sendto_init detaches it; sgrate undoes that, or every end
 * walks the list of detached comms in flight). This fails when a SimGrid release moves what
 * sgrate.cc reads. */
static double ended_at[2] = {-1, -1};

static void note_end(int tag)
{
    ended_at[tag] = simgrid_get_clock();
}

static void transfer_main(int argc, char **argv)
{
    struct cs_sg_transfer *t;

    (void)argc;
    (void)argv;
    t = cs_sg_transfer_start(sg_host_by_name("gpu0"), sg_host_by_name("gpu1"), 1e6, 0, 0);
    cs_sg_timer_at(0.25, 1, note_end);
    sg_actor_sleep_for(1);
    cs_sg_transfer_free(t);
}

START_TEST(test_transfer_end)
{
    struct cs_platform *plat = column(2, 1);
    char arg0[] = "check_replay", *av[] = {arg0, NULL};
    char msg[256];
    int ac = 1, major, minor, patch;

    simgrid_init(&ac, av);
    /* as the replay's engine: a lone flow takes its route's latency + size / bandwidth */
    sg_cfg_set_string("network/model", "CM02");
    sg_cfg_set_boolean("network/crosstraffic", "no");
    sg_cfg_set_double("network/TCP-gamma", 0.0);
    ck_assert_msg(cs_sg_load_platform(plat_path, msg, sizeof(msg)) == 0, "%s", msg);
    cs_sg_on_transfer_end(note_end);
    sg_actor_create_("t", sg_host_by_name("gpu0"), transfer_main, 0, NULL);
    simgrid_run();
    /* 1e6 bytes over BW, after the route's latencies (SimGrid's own here) */
    ck_assert_msg(ended_at[0] >= 1e6 / BW && ended_at[0] <= 1e6 / BW + 4 * HOP, "ended at %g",
                  ended_at[0]);
    ck_assert(ended_at[1] == 0.25);
    sg_version_get(&major, &minor, &patch);
    if (major == 3 && minor == 32)
        ck_assert_int_eq(cs_sg_transfers_undetached(), 1);
    drop(plat);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_one_transfer, 1},
        {test_chain_streams, 1},
        {test_pass_model, 1},
        {test_ring_hop_once, 1},
        {test_sharing, 1},
        {test_sharing_fill, 1},
        {test_rate_cap, 1},
        {test_direct, 1},
        {test_ring_closed_form, 1},
        {test_back_to_back, 1},
        {test_nccl_sparse_chunks, 1},
        {test_nccl_direct_recv, 1},
        {test_gen_ring_closed_form, 1},
        {test_credits_block, 1},
        {test_net_window, 1},
        {test_seed_deadlock, 1},
        {test_deadlock_no_cycle, 1},
        {test_refused, 1},
        {test_pcie_route, 1},
        {test_jobs, 1},
        {test_timeline_tiles, 1},
        {test_transfer_end, 1},
        {NULL, 0},
    };

    return test_run("replay", 120, tests, NULL);
}
