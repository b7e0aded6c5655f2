/* check_period.c: iterations compared as events stream in: exact shifts and deviations, events
 * and counts that differ, events of another plan, the cap on kept events, the pipe, and a
 * replay's streamed comparison equal to the one of its recorded timeline. */
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

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 2, 0), 0);
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
    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 2, 0), 0);
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
    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1, 0), 0);
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

    ck_assert_int_eq(cs_period_init(&pd, 1, 6, 2, 0), 0);
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
        ck_assert_int_eq(cs_period_init(&pd, 1, 5, 1, 0), 0);
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

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1, 0), 0);
    ck_assert_int_eq(cs_period_add(&pd, &e), 0);
    ck_assert(pd.invalid);
    cs_period_cleanup(&pd);

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1, 0), 0);
    e = ev(0, 1, 0, 1e-5, 0);
    ck_assert_int_eq(cs_period_add(&pd, &e), 0);
    e = ev(0, 0, 0, 1e-5, 0);
    ck_assert_int_eq(cs_period_add(&pd, &e), 0);
    ck_assert(pd.invalid);
    cs_period_cleanup(&pd);

    ck_assert_int_eq(cs_period_init(&pd, 0, 4, 1, 0), -1);
    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 0, 0), -1);
}
END_TEST

/* Past max_live kept events nothing more is compared; events and calls are still counted. */
START_TEST(test_cap)
{
    struct cs_period pd;

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1, 20), 0);
    feed(&pd, 4, 1e-5, 0);
    cs_period_finish(&pd);
    ck_assert(pd.truncated);
    ck_assert_int_eq(pd.nevents, 16);
    ck_assert_int_eq(pd.ncalls[3], 2);
    cs_period_cleanup(&pd);

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 1, 32), 0);
    feed(&pd, 4, 1e-5, 0);
    cs_period_finish(&pd);
    ck_assert(!pd.truncated);
    /* from the second iteration on, each tb keeps room for exactly its 2 events */
    ck_assert_int_eq(pd.live, 4);
    cs_period_cleanup(&pd);
}
END_TEST

START_TEST(test_pipe)
{
    struct cs_period pd, back;
    int fds[2];

    ck_assert_int_eq(cs_period_init(&pd, 2, 4, 2, 0), 0);
    feed(&pd, 4, 1e-5, 1e-9);
    cs_period_finish(&pd);
    pd.makespan_s = 4e-5;
    pd.complete = 1;
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(cs_period_write(fds[1], &pd), 0);
    close(fds[1]);
    ck_assert_int_eq(cs_period_init(&back, 1, 1, 1, 0), 0);
    ck_assert_int_eq(cs_period_read(fds[0], &back), 0);
    close(fds[0]);
    ck_assert_int_eq(back.ntbs, 2);
    ck_assert_int_eq(back.m, 4);
    ck_assert_int_eq(back.maxp, 2);
    ck_assert(back.makespan_s == 4e-5 && back.complete);
    ck_assert(memcmp(back.pairs, pd.pairs, 8 * sizeof(*pd.pairs)) == 0);
    ck_assert(memcmp(back.last_end, pd.last_end, 8 * sizeof(*pd.last_end)) == 0);
    ck_assert(memcmp(back.ncalls, pd.ncalls, 4 * sizeof(*pd.ncalls)) == 0);
    ck_assert(back.count == NULL && back.tbs == NULL);
    cs_period_cleanup(&back);
    /* a pipe cut short */
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], &pd, 8), 8);
    close(fds[1]);
    ck_assert_int_eq(cs_period_init(&back, 1, 1, 1, 0), 0);
    ck_assert_int_eq(cs_period_read(fds[0], &back), -1);
    close(fds[0]);
    cs_period_cleanup(&back);
    cs_period_cleanup(&pd);
}
END_TEST

static int same_pairs(const struct cs_period *a, const struct cs_period *b)
{
    size_t np = (size_t)a->m * a->maxp, nc = (size_t)a->ntbs * a->m;

    for (size_t x = 0; x < np; x++)
        if (a->pairs[x].differ != b->pairs[x].differ ||
            (!a->pairs[x].differ &&
             (a->pairs[x].dmin != b->pairs[x].dmin || a->pairs[x].dmax != b->pairs[x].dmax ||
              a->pairs[x].wdev != b->pairs[x].wdev)))
            return 0;
    for (size_t c = 0; c < nc; c++)
        if (!(a->last_end[c] == b->last_end[c] || (isnan(a->last_end[c]) && isnan(b->last_end[c]))))
            return 0;
    return memcmp(a->ncalls, b->ncalls, (size_t)a->m * sizeof(*a->ncalls)) == 0 &&
           memcmp(a->ntransfers, b->ntransfers, (size_t)a->m * sizeof(*a->ntransfers)) == 0;
}

/* A replay streaming its comparison gives the one of its recorded timeline, bit for bit. */
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
        ck_assert_int_eq(cs_period_init(&streamed, plan->ntbs, plan->sz.niter, 3, 0), 0);
        o2.period = &streamed;
        ck_assert_int_eq(cs_replay_run(plan, plat, &o2, &r2, NULL), 0);
        ck_assert(r1.time_s == r2.time_s);
        ck_assert_int_eq(cs_period_from_timeline(&recorded, &tl, plan->ntbs, plan->sz.niter, 3), 0);
        ck_assert(!streamed.invalid && !streamed.truncated && streamed.complete);
        ck_assert_int_eq(streamed.nevents, tl.nevents);
        ck_assert(streamed.makespan_s == tl.makespan_s && streamed.offset_s == tl.offset_s);
        ck_assert_msg(same_pairs(&streamed, &recorded), "%s", specs[s]);
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

int main(void)
{
    const struct test_case tests[] = {
        {test_shift, 1},      {test_differ, 1},        {test_alternating, 1},
        {test_zero_waits, 1}, {test_invalid, 1},       {test_cap, 1},
        {test_pipe, 1},       {test_replay_stream, 1}, {NULL, 0},
    };

    return test_run("period", 120, tests, NULL);
}
