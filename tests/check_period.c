/* check_period.c: iterations compared as events stream in: exact shifts and deviations, events
 * and counts that differ, events of another plan, memory bounded by the tbs not the events, the
 * stop rule, snapshots, the pipe, and a replay's streamed comparison against the one of its
 * recorded timeline. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "period.h"
#include "plan.h"
#include "platform.h"
#include "replay.h"
#include "runner.h"
#include "testplat.h"
#include "timeline.h"

/* Event k (0: a sending unit, 1: its call) of tb t in iteration i, shifted by step_s an iteration,
 * plus extra_s on its end. */
static struct cs_tl_event ev(int t, int i, int k, double step_s, double extra_s)
{
    struct cs_tl_event e;

    memset(&e, 0, sizeof(e));
    e.tb = t;
    e.iter = i;
    e.op = 0;
    e.call = 0;
    e.other = -1;
    e.kind = k == 0 ? CS_TL_UNIT : CS_TL_CALL;
    e.bytes = 4096;
    e.start_s = i * step_s + t * 1e-7 + k * 2e-6;
    e.end_s = e.start_s + 3e-6 + extra_s;
    e.wire_s = k == 0 ? 2e-6 : 0;
    e.out_conn = k == 0 ? t : -1;
    e.in_conn = e.out_seq = e.in_seq = -1;
    return e;
}

/* Feed 2 tbs x m iterations of 2 events each, tb by tb within an iteration. */
static void feed(struct cs_period *pd, int m, double step_s, double extra_s)
{
    for (int i = 0; i < m; i++)
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 2; k++) {
                struct cs_tl_event e = ev(t, i, k, step_s, t == 1 && i == 2 ? extra_s : 0);

                ck_assert_int_eq(cs_period_add(pd, &e), 0);
            }
}

START_TEST(test_shift)
{
    struct cs_period pd;

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 2), 0);
    feed(&pd, 4, 1e-5, 1e-9);
    cs_period_finish(&pd);
    ck_assert(!pd.invalid && !pd.truncated);
    ck_assert_int_eq(pd.nevents, 16);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pd.ncalls[i], 2);
        ck_assert_int_eq(pd.ntransfers[i], 2);
        ck_assert(pd.last_end[0 * 4 + i] == ev(0, i, 1, 1e-5, 0).end_s);
    }
    /* iterations 0 and 1 shift by one step, up to the rounding of the sums */
    ck_assert(cs_period_dev(&pd, 0, 1, 1e-5) < 1e-18);
    /* tb 1 ends 1 ns late in iteration 2: the pairs with it are off by that much */
    ck_assert(fabs(cs_period_dev(&pd, 1, 1, 1e-5) - 1e-9) < 1e-15);
    ck_assert(fabs(cs_period_dev(&pd, 2, 1, 1e-5) - 1e-9) < 1e-15);
    ck_assert(fabs(cs_period_dev(&pd, 0, 2, 2e-5) - 1e-9) < 1e-15);
    ck_assert(cs_period_dev(&pd, 1, 2, 2e-5) < 1e-15);
    /* against another step */
    ck_assert(fabs(cs_period_dev(&pd, 0, 1, 1.1e-5) - 1e-6) < 1e-15);
    cs_period_cleanup(&pd);
}
END_TEST

START_TEST(test_differ)
{
    struct cs_period pd;
    struct cs_tl_event e;

    /* one event of another kind in iteration 2 */
    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 2), 0);
    for (int i = 0; i < 4; i++)
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 2; k++) {
                e = ev(t, i, k, 1e-5, 0);
                if (i == 2 && t == 0 && k == 1)
                    e.kind = CS_TL_WAIT_DATA;
                ck_assert_int_eq(cs_period_add(&pd, &e), 0);
            }
    cs_period_finish(&pd);
    ck_assert(cs_period_dev(&pd, 1, 1, 1e-5) == HUGE_VAL);
    ck_assert(cs_period_dev(&pd, 2, 1, 1e-5) == HUGE_VAL);
    ck_assert(cs_period_dev(&pd, 0, 2, 2e-5) == HUGE_VAL);
    ck_assert(cs_period_dev(&pd, 0, 1, 1e-5) < 1e-15);
    ck_assert(cs_period_dev(&pd, 1, 2, 2e-5) < 1e-15);
    cs_period_cleanup(&pd);

    /* tb 1 has one event more in iteration 3, one fewer in iteration 1 */
    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1), 0);
    for (int i = 0; i < 4; i++)
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < (t == 1 ? (i == 3 ? 3 : i == 1 ? 1 : 2) : 2); k++) {
                e = ev(t, i, k > 1 ? 1 : k, 1e-5, 0);
                ck_assert_int_eq(cs_period_add(&pd, &e), 0);
            }
    cs_period_finish(&pd);
    ck_assert(cs_period_dev(&pd, 0, 1, 1e-5) == HUGE_VAL);
    ck_assert(cs_period_dev(&pd, 1, 1, 1e-5) == HUGE_VAL);
    ck_assert(cs_period_dev(&pd, 2, 1, 1e-5) == HUGE_VAL);
    ck_assert_int_eq(pd.ncalls[3], 3);
    cs_period_cleanup(&pd);
}
END_TEST

/* Iterations of 3 and 2 events in turn: period 2, whose pairs keep every event of the iteration
 * two back however many events the iteration between takes. */
START_TEST(test_alternating)
{
    struct cs_period pd;

    ck_assert_int_eq(cs_period_init(&pd, 1, 6, 2), 0);
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < (i % 2 ? 2 : 3); k++) {
            struct cs_tl_event e = ev(0, i, k > 1 ? 1 : k, 1e-5, 0);

            e.call = k;
            ck_assert_int_eq(cs_period_add(&pd, &e), 0);
        }
    cs_period_finish(&pd);
    for (int i = 0; i + 2 < 6; i++) {
        ck_assert(cs_period_dev(&pd, i, 1, 1e-5) == HUGE_VAL);
        ck_assert(cs_period_dev(&pd, i, 2, 2e-5) < 1e-15);
    }
    cs_period_cleanup(&pd);
}
END_TEST

/* A wait of no duration in some iterations and not in others changes nothing; one that lasts
 * does. */
START_TEST(test_zero_waits)
{
    struct cs_period pd;

    for (double len = 0; len <= 1e-9; len += 1e-9) {
        ck_assert_int_eq(cs_period_init(&pd, 1, 5, 1), 0);
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < 2; k++) {
                struct cs_tl_event e = ev(0, i, k, 1e-5, 0);

                if (i % 2 == 1 && k == 1) {
                    struct cs_tl_event w = e;

                    w.kind = CS_TL_WAIT_FLAG;
                    w.other = 3;
                    w.end_s = w.start_s + len;
                    ck_assert_int_eq(cs_period_add(&pd, &w), 0);
                }
                ck_assert_int_eq(cs_period_add(&pd, &e), 0);
            }
        cs_period_finish(&pd);
        ck_assert_int_eq(pd.nevents, 12);
        for (int i = 0; i < 4; i++)
            ck_assert(len > 0 ? cs_period_dev(&pd, i, 1, 1e-5) == HUGE_VAL
                              : cs_period_dev(&pd, i, 1, 1e-5) < 1e-15);
        cs_period_cleanup(&pd);
    }
}
END_TEST

/* Events outside ntbs x m, or a tb back in an earlier iteration: not this plan's replay. */
START_TEST(test_invalid)
{
    struct cs_period pd;
    struct cs_tl_event e = ev(2, 0, 0, 1e-5, 0);

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1), 0);
    ck_assert_int_eq(cs_period_add(&pd, &e), 0);
    ck_assert(pd.invalid);
    cs_period_cleanup(&pd);

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1), 0);
    e = ev(0, 1, 0, 1e-5, 0);
    ck_assert_int_eq(cs_period_add(&pd, &e), 0);
    e = ev(0, 0, 0, 1e-5, 0);
    ck_assert_int_eq(cs_period_add(&pd, &e), 0);
    ck_assert(pd.invalid);
    cs_period_cleanup(&pd);

    ck_assert_int_eq(cs_period_init(&pd, 0, 4, 1), -1);
    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 0), -1);
}
END_TEST

/* A tb of 100,000 events an iteration (offsets up to 0.25 s) compares like one of 2: its digests
 * keep the moments exact to a rounding of their totals, with no event kept. */
START_TEST(test_many_events)
{
    struct cs_period pd;
    const int m = 5, per = 100000;

    ck_assert_int_eq(cs_period_init(&pd, 1, m, 1), 0);
    for (int i = 0; i < m; i++)
        for (int k = 0; k < per; k++) {
            struct cs_tl_event e = ev(0, i, k % 2, 1.0, 0);

            e.call = k / 2;
            e.start_s += (k / 2) * 5e-6;
            e.end_s += (k / 2) * 5e-6;
            ck_assert_int_eq(cs_period_add(&pd, &e), 0);
        }
    cs_period_finish(&pd);
    ck_assert_int_eq(pd.nevents, (long long)m * per);
    for (int i = 0; i + 1 < m; i++)
        ck_assert(cs_period_dev(&pd, i, 1, 1.0) < 1e-12);
    cs_period_cleanup(&pd);
}
END_TEST

/* Feed one tb 5 iterations, iteration bad with one event of another kind; return the iteration
 * the tb was in when doomed was first set (-1: never). */
static int doomed_at(struct cs_period *pd, int bad)
{
    int at = -1;

    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 2; k++) {
            struct cs_tl_event e = ev(0, i, k, 1e-5, 0);

            if (i == bad && k == 1)
                e.kind = CS_TL_LOCAL;
            ck_assert_int_eq(cs_period_add(pd, &e), 0);
            if (pd->doomed && at < 0)
                at = i;
        }
    return at;
}

/* The stop rule of a replay of 5 iterations for p = 1: pairs (1, 2) and (2, 3) must agree, so
 * an exact difference in iteration 1, 2 or 3 dooms it, once the iteration after is reached (the
 * digest closes then), and a difference in iteration 0 or 4 (the pipeline's fill, the short
 * replay's own end) does not; no stop_pairs, no stop. */
START_TEST(test_stop_rule)
{
    static const int expect[5] = {-1, 3, 3, 4, -1};

    for (int bad = 0; bad < 5; bad++) {
        struct cs_period pd;

        ck_assert_int_eq(cs_period_init(&pd, 1, 5, 1), 0);
        pd.stop_pairs = 1;
        ck_assert_int_eq(doomed_at(&pd, bad), expect[bad]);
        cs_period_finish(&pd);
        cs_period_cleanup(&pd);
        ck_assert_int_eq(cs_period_init(&pd, 1, 5, 1), 0);
        ck_assert_int_eq(doomed_at(&pd, bad), -1);
        cs_period_cleanup(&pd);
    }
}
END_TEST

/* Snapshots: an exact field that differs marks the pair, an arrival time that moves counts as
 * deviation, the snapshot's instant as a shift. */
START_TEST(test_snapshots)
{
    struct cs_period pd;

    ck_assert_int_eq(cs_period_init(&pd, 1, 4, 1), 0);
    for (int i = 0; i < 4; i++) {
        struct cs_period_snap sn;

        memset(&sn, 0, sizeof(sn));
        sn.at_s = i * 1e-5;
        sn.ints[0] = i == 2 ? 7 : 8; /* a slot still taken as iteration 2 begins */
        sn.times_s[1] = i == 3 ? 2e-9 : 1e-9;
        cs_period_snap_add(&pd, 0, i, &sn);
        for (int k = 0; k < 2; k++) {
            struct cs_tl_event e = ev(0, i, k, 1e-5, 0);

            ck_assert_int_eq(cs_period_add(&pd, &e), 0);
        }
    }
    cs_period_finish(&pd);
    ck_assert(cs_period_dev(&pd, 0, 1, 1e-5) < 1e-18);
    ck_assert(cs_period_dev(&pd, 1, 1, 1e-5) == HUGE_VAL);
    ck_assert(cs_period_dev(&pd, 2, 1, 1e-5) == HUGE_VAL);
    cs_period_cleanup(&pd);

    /* the same without the slot: only the arrival time of iteration 3 moves, by 1 ns */
    ck_assert_int_eq(cs_period_init(&pd, 1, 4, 1), 0);
    for (int i = 0; i < 4; i++) {
        struct cs_period_snap sn;

        memset(&sn, 0, sizeof(sn));
        sn.at_s = i * 1e-5;
        sn.times_s[1] = i == 3 ? 2e-9 : 1e-9;
        cs_period_snap_add(&pd, 0, i, &sn);
        for (int k = 0; k < 2; k++) {
            struct cs_tl_event e = ev(0, i, k, 1e-5, 0);

            ck_assert_int_eq(cs_period_add(&pd, &e), 0);
        }
    }
    cs_period_finish(&pd);
    ck_assert(cs_period_dev(&pd, 1, 1, 1e-5) < 1e-18);
    ck_assert(fabs(cs_period_dev(&pd, 2, 1, 1e-5) - 1e-9) < 1e-18);
    cs_period_cleanup(&pd);
}
END_TEST

START_TEST(test_pipe)
{
    struct cs_period pd, back;
    int fds[2];

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 2), 0);
    feed(&pd, 4, 1e-5, 1e-9);
    cs_period_finish(&pd);
    pd.makespan_s = 4e-5;
    pd.complete = 1;
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(cs_period_write(fds[1], &pd), 0);
    close(fds[1]);
    ck_assert_int_eq(cs_period_init(&back, 1, 1, 1), 0);
    ck_assert_int_eq(cs_period_read(fds[0], &back), 0);
    close(fds[0]);
    ck_assert_int_eq(back.ntbs, 2);
    ck_assert_int_eq(back.m, 4);
    ck_assert_int_eq(back.maxp, 2);
    ck_assert(back.makespan_s == 4e-5 && back.complete);
    ck_assert(memcmp(back.pairs, pd.pairs, 8 * sizeof(*pd.pairs)) == 0);
    ck_assert(memcmp(back.last_end, pd.last_end, 8 * sizeof(*pd.last_end)) == 0);
    ck_assert(memcmp(back.ncalls, pd.ncalls, 4 * sizeof(*pd.ncalls)) == 0);
    ck_assert(back.tbs == NULL);
    cs_period_cleanup(&back);
    /* a pipe cut short */
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], &pd, 8), 8);
    close(fds[1]);
    ck_assert_int_eq(cs_period_init(&back, 1, 1, 1), 0);
    ck_assert_int_eq(cs_period_read(fds[0], &back), -1);
    close(fds[0]);
    cs_period_cleanup(&back);
    cs_period_cleanup(&pd);
}
END_TEST

/* The streamed comparison (a) is the recorded one (b) plus the snapshots': every pair b marks,
 * a marks too; where neither does, the event moments agree bit for bit and a's shifts take in
 * b's. */
static int same_pairs(const struct cs_period *a, const struct cs_period *b)
{
    size_t np = (size_t)a->m * a->maxp, nc = (size_t)a->ntbs * a->m;

    for (size_t x = 0; x < np; x++)
        if ((b->pairs[x].differ && !a->pairs[x].differ) ||
            (!a->pairs[x].differ &&
             (a->pairs[x].dmin > b->pairs[x].dmin || a->pairs[x].dmax < b->pairs[x].dmax ||
              a->pairs[x].wdev != b->pairs[x].wdev)))
            return 0;
    for (size_t c = 0; c < nc; c++)
        if (!(a->last_end[c] == b->last_end[c] || (isnan(a->last_end[c]) && isnan(b->last_end[c]))))
            return 0;
    return memcmp(a->ncalls, b->ncalls, (size_t)a->m * sizeof(*a->ncalls)) == 0 &&
           memcmp(a->ntransfers, b->ntransfers, (size_t)a->m * sizeof(*a->ntransfers)) == 0;
}

/* A replay streaming its comparison gives the one of its recorded timeline, and its snapshots
 * agree from the second iteration on (these replays settle). */
START_TEST(test_replay_stream)
{
    static const char *const specs[] = {"ring:gpus=4,channels=2,protocol=LL",
                                        "hierarchical:gpus=4,columns=2,protocol=Simple"};
    struct cs_params p;
    char path[64];
    struct cs_platform *plat;

    cs_params_init(&p);
    plat = test_platform_hier(2, 2, &p, path);
    for (int s = 0; s < 2; s++) {
        struct cs_sched *sched = NULL;
        struct cs_plan *plan = NULL;
        struct cs_replay_opts o1 = {0}, o2 = {0};
        struct cs_replay_result r1, r2;
        struct cs_timeline tl;
        struct cs_period streamed, recorded;

        ck_assert_int_eq(cs_gen_from_spec(specs[s], &sched, NULL), 0);
        ck_assert_int_eq(
            cs_plan_build(sched, cs_plan_round_size(sched, 64 << 20, 4), 4, 0, &plan, NULL), 0);
        ck_assert_int_ge(plan->sz.niter, 4);
        cs_timeline_init(&tl, 0);
        o1.timeline = &tl;
        ck_assert_int_eq(cs_replay_run(plan, plat, &o1, &r1, NULL), 0);
        ck_assert_int_eq(cs_period_init(&streamed, plan->ntbs, plan->sz.niter, 3), 0);
        o2.period = &streamed;
        ck_assert_int_eq(cs_replay_run(plan, plat, &o2, &r2, NULL), 0);
        ck_assert(r1.time_s == r2.time_s);
        ck_assert_int_eq(cs_period_from_timeline(&recorded, &tl, plan->ntbs, plan->sz.niter, 3), 0);
        ck_assert(!streamed.invalid && !streamed.truncated && streamed.complete);
        ck_assert_int_eq(streamed.nevents, tl.nevents);
        ck_assert(streamed.makespan_s == tl.makespan_s && streamed.offset_s == tl.offset_s);
        ck_assert_msg(same_pairs(&streamed, &recorded), "%s", specs[s]);
        ck_assert(!streamed.pairs[(plan->sz.niter - 3) * 3].differ);
        ck_assert(streamed.pairs[(plan->sz.niter - 3) * 3].sdev < 1e-12);
        cs_period_cleanup(&streamed);
        cs_period_cleanup(&recorded);
        cs_timeline_cleanup(&tl);
        cs_plan_free(plan);
        cs_sched_free(sched);
    }
    unlink(path);
    cs_platform_free(plat);
}
END_TEST

/* A real replay that stops: a 16-GPU ring over two DGX nodes, cut to 5 iterations, whose
 * iterations 1 and 2 differ exactly (its slots settle later): with stop_pairs it stops once the
 * tbs have closed iteration 2, before the end, and reports no deadlock; without, it runs to the
 * end with the same pair marked. */
START_TEST(test_replay_stop)
{
    struct cs_platform_spec spec;
    struct cs_params p;
    struct cs_platform *plat;
    struct cs_sched *sched = NULL;
    struct cs_plan *plan = NULL;
    char path[64];
    double full_s = 0;

    cs_params_init(&p);
    cs_platform_spec_init(&spec, CS_FAM_DGX);
    spec.nodes = 2;
    plat = test_platform_spec(&spec, &p, path);
    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=16,protocol=LL", &sched, NULL), 0);
    ck_assert_int_eq(
        cs_plan_build(sched, cs_plan_round_size(sched, 64 << 20, 4), 4, 0, &plan, NULL), 0);
    ck_assert_int_gt(plan->sz.niter, 5);
    plan->sz.chunk_elems = 4 * plan->sz.loop_elems + plan->sz.last_elems;
    plan->sz.niter = 5;
    for (int stop = 0; stop < 2; stop++) {
        struct cs_replay_opts o = {0};
        struct cs_replay_result r;
        struct cs_period pd;

        ck_assert_int_eq(cs_period_init(&pd, plan->ntbs, 5, 1), 0);
        pd.stop_pairs = stop;
        o.period = &pd;
        ck_assert_int_eq(cs_replay_run(plan, plat, &o, &r, NULL), 0);
        ck_assert_int_eq(r.status, CS_REPLAY_OK);
        ck_assert(pd.pairs[1].differ && pd.doomed == stop);
        ck_assert_int_eq(pd.stopped, stop);
        ck_assert_int_eq(pd.complete, !stop);
        if (stop)
            ck_assert(r.sim_s < full_s);
        else
            full_s = r.sim_s;
        cs_replay_result_cleanup(&r);
        cs_period_cleanup(&pd);
    }
    cs_plan_free(plan);
    cs_sched_free(sched);
    unlink(path);
    cs_platform_free(plat);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_shift, 1},   {test_differ, 1},        {test_alternating, 1}, {test_zero_waits, 1},
        {test_invalid, 1}, {test_many_events, 1},   {test_stop_rule, 1},   {test_snapshots, 1},
        {test_pipe, 1},    {test_replay_stream, 1}, {test_replay_stop, 1}, {NULL, 0},
    };

    return test_run("period", 120, tests, NULL);
}
