/* check_sched.c: the schedule model: construction, copies, names, dependency sets. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "sched.h"

static struct cs_sched *two_tb(void)
{
    struct cs_sched *s = cs_sched_new();
    struct cs_gpu *g = cs_sched_add_gpu(s);
    struct cs_tb *tb;
    struct cs_step *st;

    s->ngpus = 1;
    tb = cs_gpu_add_tb(g);
    tb->id = 0;
    st = cs_tb_add_step(tb);
    st->type = CS_STEP_CPY;
    st->hasdep = 1;
    tb = cs_gpu_add_tb(g);
    tb->id = 1;
    for (int i = 0; i < 3; i++) {
        st = cs_tb_add_step(tb);
        st->s = i;
        st->type = i < 2 ? CS_STEP_NOP : CS_STEP_RE;
        st->depid = 0;
        st->deps = 0;
    }
    return s;
}

START_TEST(test_build_and_free)
{
    struct cs_sched *s = two_tb();

    ck_assert_int_eq(s->ngpus_alloc, 1);
    ck_assert_int_eq(s->gpus[0].ntbs, 2);
    ck_assert_int_eq(s->gpus[0].tbs[1].nsteps, 3);
    ck_assert_int_eq(s->gpus[0].tbs[0].send, -1);
    ck_assert_int_eq(cs_sched_count_steps(s), 4);
    cs_sched_free(s);
    cs_sched_free(NULL);
}
END_TEST

START_TEST(test_step_deps)
{
    struct cs_sched *s = two_tb();
    struct cs_dep d[4];
    const struct cs_tb *tb = &s->gpus[0].tbs[1];

    ck_assert_int_eq(cs_tb_step_deps(tb, 2, d, 4), 3);
    ck_assert_int_eq(d[0].tb, 0);
    ck_assert_int_eq(cs_tb_step_deps(tb, 0, d, 4), 0);
    ck_assert_int_eq(cs_tb_step_deps(tb, 2, d, 1), 3);
    cs_sched_free(s);
}
END_TEST

START_TEST(test_find_tb)
{
    struct cs_sched *s = two_tb();

    ck_assert_ptr_eq(cs_gpu_find_tb(&s->gpus[0], 1), &s->gpus[0].tbs[1]);
    ck_assert_ptr_null(cs_gpu_find_tb(&s->gpus[0], 2));
    cs_sched_free(s);
}
END_TEST

START_TEST(test_names)
{
    int exec = 0;

    ck_assert_int_eq(cs_coll_parse("reducescatter", &exec), CS_COLL_REDUCE_SCATTER);
    ck_assert_int_eq(exec, 1);
    ck_assert_int_eq(cs_coll_parse("reduce_scatter", &exec), CS_COLL_REDUCE_SCATTER);
    ck_assert_int_eq(exec, 0);
    ck_assert_int_eq(cs_coll_parse("bcast", NULL), 0);
    ck_assert_int_eq(cs_proto_parse("LL128"), CS_PROTO_LL128);
    ck_assert_int_eq(cs_proto_parse("ll"), 0);
    ck_assert_int_eq(cs_step_type_parse("rrcs"), CS_STEP_RRCS);
    ck_assert_int_eq(cs_step_type_parse("ra"), 0);
    ck_assert_str_eq(cs_step_type_name(CS_STEP_NOP), "nop");
    ck_assert_ptr_null(cs_step_type_name(0));
    ck_assert_int_eq(cs_buf_char(CS_BUF_SCRATCH), 's');
    ck_assert(cs_step_sends(CS_STEP_RRS) && !cs_step_writes_dst(CS_STEP_RRS));
    ck_assert(cs_step_recvs(CS_STEP_RCS) && cs_step_writes_dst(CS_STEP_RCS));
    ck_assert(!cs_step_reads_src(CS_STEP_R) && cs_step_reads_src(CS_STEP_S));
}
END_TEST

/* Shrinking gives back the room kept for growth and keeps every step; an empty tb stays as it
 * is. */
START_TEST(test_shrink)
{
    struct cs_sched *s = two_tb();
    struct cs_gpu *g = &s->gpus[0];
    struct cs_tb *tb;

    ck_assert_int_gt(g->tbs[1].cap_steps, 3);
    ck_assert_int_gt(g->cap_tbs, 2);
    tb = cs_gpu_add_tb(g);
    tb->id = 2;
    for (int i = 0; i < 9; i++)
        cs_tb_add_step(tb)->s = i;
    cs_tb_shrink(tb);
    ck_assert_int_eq(tb->cap_steps, 9);
    s->ngpus = 3; /* what an <algo> may claim with one <gpu>: only gpus[0] exists */
    cs_sched_shrink(s);
    ck_assert_int_eq(g->cap_tbs, 3);
    ck_assert_int_eq(g->tbs[0].cap_steps, 1);
    ck_assert_int_eq(g->tbs[1].cap_steps, 3);
    ck_assert_int_eq(g->tbs[1].steps[2].type, CS_STEP_RE);
    ck_assert_int_eq(g->tbs[2].steps[8].s, 8);
    cs_tb_add_step(&g->tbs[1])->s = 3; /* it grows again */
    ck_assert_int_eq(g->tbs[1].nsteps, 4);
    ck_assert_int_eq(g->tbs[1].steps[3].s, 3);
    ck_assert_int_eq(cs_sched_count_steps(s), 14);
    cs_sched_free(s);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_build_and_free, 1}, {test_step_deps, 1}, {test_find_tb, 1},
        {test_names, 1},          {test_shrink, 1},    {NULL, 0},
    };

    return test_run("sched", 0, tests, NULL);
}
