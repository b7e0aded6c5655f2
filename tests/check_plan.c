/* check_plan.c: the execution plan against cases worked by hand from msccl.md section 3. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "runner.h"
#include "testutil.h"
#include "xml.h"

#define MiB (1024LL * 1024)

/* A one-GPU schedule with nchunksperloop chunks and one tb of the given steps. */
static struct cs_sched *one_tb(int nchunks, int nsteps, const struct cs_step *steps)
{
    struct cs_sched *s = cs_sched_new();
    struct cs_gpu *g = cs_sched_add_gpu(s);
    struct cs_tb *tb = cs_gpu_add_tb(g);

    s->ngpus = 1;
    s->nchannels = 1;
    s->nchunksperloop = nchunks;
    tb->send = tb->recv = -1;
    for (int i = 0; i < nsteps; i++) {
        struct cs_step *st = cs_tb_add_step(tb);

        *st = steps[i];
        st->s = i;
    }
    return s;
}

/* A step as the XML gives it (s is set by one_tb). */
static struct cs_step step(enum cs_step_type type, enum cs_buf srcbuf, int srcoff,
                           enum cs_buf dstbuf, int dstoff, int cnt, int depid, int deps, int hasdep,
                           int line)
{
    return (struct cs_step){.type = type,
                            .srcbuf = srcbuf,
                            .srcoff = srcoff,
                            .dstbuf = dstbuf,
                            .dstoff = dstoff,
                            .cnt = cnt,
                            .depid = depid,
                            .deps = deps,
                            .hasdep = (unsigned)hasdep,
                            .line = line};
}

static struct cs_step re_step(int srcoff, int dstoff, int depid, int deps, int hasdep)
{
    struct cs_step st =
        step(CS_STEP_RE, CS_BUF_SCRATCH, srcoff, CS_BUF_INPUT, dstoff, 1, depid, deps, hasdep, 0);
    return st;
}

static struct cs_sched *load(const char *rel)
{
    struct cs_sched *s = NULL;

    ck_assert_int_eq(cs_sched_read_xml(test_data(rel), &s, NULL), 0);
    return s;
}

/* 8 GPUs, nchunksperloop 64 (the seed at 8 GPUs): LL 1 MiB float: S = 262144/64 = 4096 elements
 * (16 KiB), one iteration of a 8192-element loop chunk, maxAllowedCount = 32768/16384 = 2, so a
 * cnt-16 step is 8 calls; 4 MiB: S = 64 KiB, 2 iterations, maxAllowedCount 1, 16 calls. */
START_TEST(test_chunking_ll)
{
    struct cs_step st = step(CS_STEP_CPY, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16, -1, -1, 0, 0);
    struct cs_sched *s = one_tb(64, 1, &st);
    struct cs_plan *p = NULL;

    ck_assert_int_eq(cs_plan_build(s, 1 * MiB, 4, CS_PROTO_LL, &p, NULL), 0);
    ck_assert_int_eq(p->sz.chunk_elems, 4096);
    ck_assert_int_eq(p->sz.loop_elems, 8192);
    ck_assert_int_eq(p->sz.niter, 1);
    ck_assert_int_eq(p->sz.last_elems, 4096);
    ck_assert_int_eq(p->sz.max_allowed, 2);
    ck_assert_int_eq(p->tbs[0].ops[0].ncalls, 8);
    ck_assert_int_eq(p->slots_per_call, 1);
    ck_assert_double_eq(p->wire_factor, 2.0);
    ck_assert_int_eq(cs_plan_call_elems(p, &p->tbs[0].ops[0], 0, 7), 8192);
    ck_assert_double_eq(cs_plan_wire_bytes(p, 32768), 65536.0);
    ck_assert_double_eq(cs_plan_wire_bytes(p, 4), 16.0); /* one 16 B line */
    cs_plan_free(p);

    ck_assert_int_eq(cs_plan_build(s, 4 * MiB, 4, CS_PROTO_LL, &p, NULL), 0);
    ck_assert_int_eq(p->sz.chunk_elems, 16384);
    ck_assert_int_eq(p->sz.niter, 2);
    ck_assert_int_eq(p->sz.last_elems, 8192);
    ck_assert_int_eq(p->sz.max_allowed, 1);
    ck_assert_int_eq(p->tbs[0].ops[0].ncalls, 16);
    ck_assert_int_eq(p->ncalls_total, 32);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* Simple, 64 chunks: 16 MiB -> S = 256 KiB, maxAllowedCount = 2 MiB / 256 KiB = 8, cnt 16 is 2
 * calls (8 slots, fits); 64 MiB -> S = 1 MiB, maxAllowedCount 2, 8 calls; 1 GiB -> S = 16 MiB,
 * 8 iterations of 2 MiB (524288 floats), maxAllowedCount 1. */
START_TEST(test_chunking_simple)
{
    struct cs_step st = step(CS_STEP_S, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16, -1, -1, 0, 0);
    struct cs_sched *s = one_tb(64, 1, &st);
    struct cs_plan *p = NULL;

    ck_assert_int_eq(cs_plan_build(s, 16 * MiB, 4, CS_PROTO_SIMPLE, &p, NULL), 0);
    ck_assert_int_eq(p->sz.max_allowed, 8);
    ck_assert_int_eq(p->tbs[0].ops[0].ncalls, 2);
    ck_assert_int_eq(p->slots_per_call, 4);
    ck_assert_int_eq(p->units_per_call, 2);
    cs_plan_free(p);
    ck_assert_int_eq(cs_plan_build(s, 64 * MiB, 4, CS_PROTO_SIMPLE, &p, NULL), 0);
    ck_assert_int_eq(p->sz.max_allowed, 2);
    ck_assert_int_eq(p->tbs[0].ops[0].ncalls, 8);
    cs_plan_free(p);
    ck_assert_int_eq(cs_plan_build(s, 1024 * MiB, 4, CS_PROTO_SIMPLE, &p, NULL), 0);
    ck_assert_int_eq(p->sz.niter, 8);
    ck_assert_int_eq(p->sz.loop_elems, 524288);
    ck_assert_int_eq(p->sz.last_elems, 524288);
    ck_assert_int_eq(p->sz.max_allowed, 1);
    cs_plan_free(p);
    /* Small sizes: 64 x 4 B = one float per chunk; maxAllowedCount clamps at 71. */
    ck_assert_int_eq(cs_plan_build(s, 256, 4, CS_PROTO_SIMPLE, &p, NULL), 0);
    ck_assert_int_eq(p->sz.chunk_elems, 1);
    ck_assert_int_eq(p->sz.max_allowed, 71);
    ck_assert_int_eq(p->tbs[0].ops[0].ncalls, 1);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* LL128 with a partial last iteration: 16 chunks of 1,000,000 B floats = 250,000 elements; loop
 * chunk 576,000 B = 144,000 floats; 2 iterations, the last of 106,000; maxAllowedCount 1. Wire
 * bytes are 128/120 of the data. Doubles: 2-byte halves double the element counts. */
START_TEST(test_chunking_ll128_partial)
{
    struct cs_step st = step(CS_STEP_S, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 3, -1, -1, 0, 0);
    struct cs_sched *s = one_tb(16, 1, &st);
    struct cs_plan *p = NULL;

    ck_assert_int_eq(cs_plan_build(s, 16000000, 4, CS_PROTO_LL128, &p, NULL), 0);
    ck_assert_int_eq(p->sz.chunk_elems, 250000);
    ck_assert_int_eq(p->sz.loop_elems, 144000);
    ck_assert_int_eq(p->sz.niter, 2);
    ck_assert_int_eq(p->sz.last_elems, 106000);
    ck_assert_int_eq(p->sz.max_allowed, 1);
    ck_assert_int_eq(p->tbs[0].ops[0].ncalls, 3);
    ck_assert_int_eq(cs_plan_call_elems(p, &p->tbs[0].ops[0], 1, 2), 106000);
    ck_assert_double_eq_tol(cs_plan_wire_bytes(p, 120), 128.0, 1e-12);
    ck_assert_double_eq_tol(cs_plan_wire_bytes(p, 121), 256.0, 1e-12); /* whole 128 B lines */
    cs_plan_free(p);
    ck_assert_int_eq(cs_plan_build(s, 16000000, 2, CS_PROTO_LL128, &p, NULL), 0);
    ck_assert_int_eq(p->sz.chunk_elems, 500000);
    ck_assert_int_eq(p->sz.loop_elems, 288000);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

START_TEST(test_bad_sizes)
{
    struct cs_step st = step(CS_STEP_S, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 1, -1, -1, 0, 0);
    struct cs_sched *s = one_tb(64, 1, &st);
    struct cs_plan *p = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_plan_build(s, 1000, 4, CS_PROTO_LL, &p, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(err.msg, "nchunksperloop"));
    ck_assert_int_eq(cs_plan_build(s, 0, 4, CS_PROTO_LL, &p, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_plan_round_size(s, 1000, 4), 1024);
    ck_assert_int_eq(cs_plan_round_size(s, 8, 4), 256);
    ck_assert_int_eq(cs_plan_round_size(s, 256, 4), 256);
    cs_sched_free(s);
}
END_TEST

/* Simple slices: 1024 floats -> first slice max(512, 8192) capped at 1024: all in slice 1;
 * 262144 floats -> 131072 + 131072; 10000 floats -> 8192 + 1808. */
START_TEST(test_simple_slices)
{
    struct cs_step st = step(CS_STEP_S, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 1, -1, -1, 0, 0);
    struct cs_sched *s = one_tb(1, 1, &st);
    struct cs_plan *p = NULL;
    long long u[2];

    ck_assert_int_eq(cs_plan_build(s, 4 * MiB, 4, CS_PROTO_SIMPLE, &p, NULL), 0);
    cs_plan_call_units(p, 1024, u);
    ck_assert_int_eq(u[0], 4096);
    ck_assert_int_eq(u[1], 0);
    cs_plan_call_units(p, 262144, u);
    ck_assert_int_eq(u[0], 524288);
    ck_assert_int_eq(u[1], 524288);
    cs_plan_call_units(p, 10000, u);
    ck_assert_int_eq(u[0], 32768);
    ck_assert_int_eq(u[1], 7232);
    cs_plan_free(p);
    ck_assert_int_eq(cs_plan_build(s, 4 * MiB, 4, CS_PROTO_LL, &p, NULL), 0);
    cs_plan_call_units(p, 10000, u);
    ck_assert_int_eq(u[0], 40000);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* The seed at 4 GPUs (msccl.md 6.1), gpu 0: tb 0 = re(dep 6/1) + re into i[0]: one fused
 * transmission of 2 sources publishing step 1. tb 6 = s, r, re+re fused, nop(1/1), nop(7/10),
 * s(dep 0/1), r: 5 transmissions; the second send carries 3 dependencies and spans s 4..6. */
START_TEST(test_fold_seed)
{
    struct cs_sched *s = load("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml");
    struct cs_plan *p = NULL;
    const struct cs_plan_tb *tb;
    int seen[3] = {0, 0, 0};

    ck_assert_int_eq(cs_plan_build(s, 16 * 4 * 1024, 4, 0, &p, NULL), 0);
    ck_assert_int_eq(p->proto, CS_PROTO_LL);
    ck_assert_int_eq(p->ntbs, 32);
    tb = &p->tbs[0];
    ck_assert_int_eq(tb->nops, 1);
    ck_assert_int_eq(tb->ops[0].type, CS_STEP_RE);
    ck_assert_int_eq(tb->ops[0].nsrc, 2);
    ck_assert_int_eq(tb->ops[0].step, 1);
    ck_assert_int_eq(tb->ops[0].hasdep, 1);
    ck_assert_int_eq(tb->ops[0].ndeps, 1);
    ck_assert_int_eq(tb->ops[0].deps[0].tb, 6);
    tb = &p->tbs[p->gpu_tb0[0] + 6];
    ck_assert_int_eq(tb->nops, 5);
    ck_assert_int_eq(tb->ops[2].type, CS_STEP_RE);
    ck_assert_int_eq(tb->ops[2].nsrc, 2);
    ck_assert_int_eq(tb->ops[3].type, CS_STEP_S);
    ck_assert_int_eq(tb->ops[3].first_step, 4);
    ck_assert_int_eq(tb->ops[3].step, 6);
    ck_assert_int_eq(tb->ops[3].ndeps, 3);
    for (int k = 0; k < 3; k++) {
        const struct cs_dep *d = &tb->ops[3].deps[k];

        if (d->tb == 0 && d->step == 1)
            seen[0] = 1;
        if (d->tb == 1 && d->step == 1)
            seen[1] = 1;
        if (d->tb == 7 && d->step == 10)
            seen[2] = 1;
    }
    ck_assert(seen[0] && seen[1] && seen[2]);
    /* 1 KiB x 64 floats: chunk 256 B, maxAllowedCount 71: one call per step. */
    ck_assert_int_eq(tb->ops[0].ncalls, 1);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* Plans a and b are the same: every tb's ops, their dependencies and sources, and the sizing. */
static void same_plans(const struct cs_plan *a, const struct cs_plan *b)
{
    ck_assert_int_eq(a->ntbs, b->ntbs);
    ck_assert_int_eq(a->type_bytes, b->type_bytes);
    ck_assert(memcmp(&a->sz, &b->sz, sizeof(a->sz)) == 0);
    ck_assert_int_eq(a->ncalls_total, b->ncalls_total);
    for (int t = 0; t < a->ntbs; t++) {
        const struct cs_plan_tb *x = &a->tbs[t], *y = &b->tbs[t];

        ck_assert_int_eq(x->nops, y->nops);
        for (int i = 0; i < x->nops; i++) {
            const struct cs_plan_op *o = &x->ops[i], *q = &y->ops[i];

            ck_assert(o->type == q->type && o->first_step == q->first_step && o->step == q->step &&
                      o->cnt == q->cnt && o->ncalls == q->ncalls && o->dstoff == q->dstoff &&
                      o->nsrc == q->nsrc && o->hasdep == q->hasdep);
            ck_assert_int_eq(o->ndeps, q->ndeps);
            /* an op without dependencies or sources may hold NULL there */
            ck_assert(o->ndeps == 0 ||
                      memcmp(o->deps, q->deps, (size_t)o->ndeps * sizeof(*o->deps)) == 0);
            ck_assert((o->srcoff == NULL) == (q->srcoff == NULL));
            ck_assert(o->srcoff == NULL ||
                      memcmp(o->srcoff, q->srcoff, o->nsrc * sizeof(*o->srcoff)) == 0);
        }
    }
}

/* A plan compiled once, releasing the schedule's steps, and sized for one size then another is
 * the plan cs_plan_build builds at each; the schedule keeps its tbs, with no steps. */
START_TEST(test_compile_release_resize)
{
    struct cs_sched *s = load("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml");
    struct cs_plan *small = NULL, *large = NULL, *p = NULL;
    struct cs_plan_sizing sz;
    int ntbs = 0;

    ck_assert_int_eq(cs_plan_build(s, 16 * 4 * 1024, 4, 0, &small, NULL), 0);
    ck_assert_int_eq(cs_plan_build(s, 64 * MiB, 4, 0, &large, NULL), 0);
    ck_assert_int_eq(cs_plan_compile_release(s, 0, &p, NULL), 0);
    for (int g = 0; g < s->ngpus; g++)
        for (int t = 0; t < s->gpus[g].ntbs; t++, ntbs++)
            ck_assert(s->gpus[g].tbs[t].steps == NULL && s->gpus[g].tbs[t].nsteps == 0);
    ck_assert_int_eq(ntbs, p->ntbs);
    ck_assert_int_eq(cs_plan_sizing_init(&sz, s->nchunksperloop, s->proto, 64 * MiB, 4, 0, NULL),
                     0);
    cs_plan_resize(p, &sz, 4);
    same_plans(p, large);
    ck_assert_int_eq(
        cs_plan_sizing_init(&sz, s->nchunksperloop, s->proto, 16 * 4 * 1024, 4, 0, NULL), 0);
    cs_plan_resize(p, &sz, 4);
    same_plans(p, small);
    cs_plan_free(p);
    cs_plan_free(small);
    cs_plan_free(large);
    cs_sched_free(s);
}
END_TEST

/* re fusion stops at 16, at a different destination, after a hasdep step, and at a step with its
 * own dependency. */
START_TEST(test_re_fusion_rules)
{
    struct cs_step st[24];
    struct cs_sched *s;
    struct cs_plan *p = NULL;

    for (int i = 0; i < 20; i++)
        st[i] = re_step(i, 0, -1, -1, 0);
    st[20] = re_step(20, 1, -1, -1, 1); /* other destination; publishes */
    st[21] = re_step(21, 1, -1, -1, 0); /* after a hasdep step: no fusion */
    st[22] = re_step(22, 1, 0, 21, 0);  /* own dependency: no fusion */
    st[23] = re_step(23, 1, -1, -1, 1);
    s = one_tb(64, 24, st);
    ck_assert_int_eq(cs_plan_build(s, 64 * 4, 4, CS_PROTO_LL, &p, NULL), 0);
    ck_assert_int_eq(p->tbs[0].nops, 5);
    ck_assert_int_eq(p->tbs[0].ops[0].nsrc, 16);
    ck_assert_int_eq(p->tbs[0].ops[0].step, 15);
    ck_assert_int_eq(p->tbs[0].ops[1].nsrc, 4);
    ck_assert_int_eq(p->tbs[0].ops[1].first_step, 16);
    ck_assert_int_eq(p->tbs[0].ops[2].nsrc, 1);
    ck_assert_int_eq(p->tbs[0].ops[2].hasdep, 1);
    ck_assert_int_eq(p->tbs[0].ops[3].nsrc, 1);
    ck_assert_int_eq(p->tbs[0].ops[4].nsrc, 2);
    ck_assert_int_eq(p->tbs[0].ops[4].ndeps, 1);
    ck_assert_int_eq(p->tbs[0].ops[4].hasdep, 1);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* The executor rejects nops followed by a transmission without depid. */
START_TEST(test_nop_without_carrier)
{
    struct cs_step st[2] = {
        step(CS_STEP_NOP, CS_BUF_INPUT, -1, CS_BUF_OUTPUT, -1, 0, 0, 0, 0, 7),
        step(CS_STEP_CPY, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 1, -1, -1, 0, 8),
    };
    struct cs_sched *s = one_tb(1, 2, st);
    struct cs_plan *p = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_plan_build(s, 4, 4, CS_PROTO_LL, &p, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 8);
    ck_assert_ptr_nonnull(strstr(err.msg, "depid"));
    cs_sched_free(s);
}
END_TEST

START_TEST(test_dtype_busbw)
{
    ck_assert_int_eq(cs_dtype_bytes("float"), 4);
    ck_assert_int_eq(cs_dtype_bytes("half"), 2);
    ck_assert_int_eq(cs_dtype_bytes("bfloat16"), 2);
    ck_assert_int_eq(cs_dtype_bytes("double"), 8);
    ck_assert_int_eq(cs_dtype_bytes("int"), 0);
    ck_assert_double_eq_tol(cs_busbw_factor(CS_COLL_ALLREDUCE, 8), 1.75, 1e-15);
    ck_assert_double_eq_tol(cs_busbw_factor(CS_COLL_ALLGATHER, 8), 0.875, 1e-15);
    ck_assert_double_eq_tol(cs_busbw_factor(CS_COLL_ALLTOALL, 4), 0.75, 1e-15);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_chunking_ll, 1},
        {test_chunking_simple, 1},
        {test_chunking_ll128_partial, 1},
        {test_bad_sizes, 1},
        {test_simple_slices, 1},
        {test_fold_seed, 1},
        {test_compile_release_resize, 1},
        {test_re_fusion_rules, 1},
        {test_nop_without_carrier, 1},
        {test_dtype_busbw, 1},
        {NULL, 0},
    };

    return test_run("plan", 0, tests, NULL);
}
