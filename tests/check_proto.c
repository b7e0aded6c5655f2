/* check_proto.c: the protocol table and the plan against the worked examples of the shared
 * reference runtime-audit.md section 1 (executor msccl_setup.cc, msccl_kernel.cu, primitives.h). */
#include <check.h>
#include <stdlib.h>

#include "emulate.h"
#include "gen.h"
#include "plan.h"
#include "runner.h"

#define MiB (1024LL * 1024)

/* NCCL's default buffers over 8 steps, and the data per loop chunk the kernel derives from them. */
START_TEST(test_table)
{
    long start, len;

    ck_assert_int_eq(cs_proto_step_bytes(CS_PROTO_SIMPLE), 512 * 1024);
    ck_assert_int_eq(cs_proto_step_bytes(CS_PROTO_LL), 64 * 1024);
    ck_assert_int_eq(cs_proto_step_bytes(CS_PROTO_LL128), 614400);
    ck_assert_int_eq(cs_proto_loop_bytes(CS_PROTO_SIMPLE), 2 * MiB);
    ck_assert_int_eq(cs_proto_loop_bytes(CS_PROTO_LL), 32768);
    ck_assert_int_eq(cs_proto_loop_bytes(CS_PROTO_LL128), 576000);
    ck_assert_int_eq(cs_proto_slots_per_call(CS_PROTO_SIMPLE), 4);
    ck_assert_int_eq(cs_proto_slots_per_call(CS_PROTO_LL), 1);
    ck_assert_int_eq(cs_proto_slots_per_call(CS_PROTO_LL128), 1);
    ck_assert_int_eq(cs_proto_units_per_call(CS_PROTO_SIMPLE), 2);
    ck_assert_int_eq(cs_proto_units_per_call(CS_PROTO_LL128), 1);
    ck_assert_int_eq(cs_proto_simple_min_slice_bytes(), 32768);
    ck_assert_int_eq(cs_proto_wire_bytes(CS_PROTO_LL, 8), 16);
    ck_assert_int_eq(cs_proto_wire_bytes(CS_PROTO_LL, 9), 32);
    ck_assert_int_eq(cs_proto_wire_bytes(CS_PROTO_LL128, 120), 128);
    ck_assert_int_eq(cs_proto_wire_bytes(CS_PROTO_LL128, 121), 256);
    ck_assert_int_eq(cs_proto_wire_bytes(CS_PROTO_SIMPLE, 121), 121);
    ck_assert_double_eq(cs_proto_wire_factor(CS_PROTO_LL), 2.0);
    ck_assert_double_eq(cs_proto_wire_factor(CS_PROTO_LL128), 128.0 / 120.0);
    ck_assert_double_eq(cs_proto_wire_factor(CS_PROTO_SIMPLE), 1.0);
    /* maxAllowedCount is clamped to [1, 71]. */
    ck_assert_int_eq(cs_proto_max_allowed(576000, 131072), 4);
    ck_assert_int_eq(cs_proto_max_allowed(32768, 65536), 1);
    ck_assert_int_eq(cs_proto_max_allowed(32768, 4), 71);
    /* Flags compare as (launch, iteration, step). */
    ck_assert(cs_proto_flag(0, 1, 0) > cs_proto_flag(0, 0, CS_FLAG_STEPS - 1));
    ck_assert(cs_proto_flag(1, 0, 0) > cs_proto_flag(0, CS_MAX_ITERATIONS, CS_FLAG_STEPS - 1));
    ck_assert(cs_proto_flag(0, 2, 5) > cs_proto_flag(0, 2, 4));
    ck_assert_int_eq(CS_MAX_ITERATIONS, 65535);
    ck_assert_int_eq(cs_proto_step_calls(16, 1), 16);
    ck_assert_int_eq(cs_proto_step_calls(16, 3), 6);
    /* 10 chunks of 100 elements, one iteration, 3 chunks per call: call 3 is chunk 9 alone. */
    cs_proto_call_region(100, 1000, 3, 0, 0, 10, 3, &start, &len);
    ck_assert_int_eq(start, 900);
    ck_assert_int_eq(len, 100);
    /* 250-element chunks in 100-element iterations: iteration 2 moves the last 50. */
    cs_proto_call_region(250, 100, 1, 2, 1, 1, 0, &start, &len);
    ck_assert_int_eq(start, 450);
    ck_assert_int_eq(len, 50);
}
END_TEST

static struct cs_sched *gen(const char *spec)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_gen_from_spec(spec, &s, &err) == 0, "%s: %s", spec, err.msg);
    return s;
}

static struct cs_plan *plan(const struct cs_sched *s, long long size_bytes)
{
    struct cs_plan *p = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_plan_build(s, size_bytes, 4, 0, &p, &err) == 0, "%s", err.msg);
    return p;
}

/* Example A: an 8-GPU ring of nchunksperloop 64 with cnt 1 (as ndv4/r48ll128.xml), LL128, 8 MiB:
 * S 32,768, a loop chunk of 144,000 elements, 1 iteration, maxAllowedCount 576,000 / 131,072 = 4,
 * one call of 1,093 lines (139,904 B) per step; at 20 MiB S 81,920 and maxAllowedCount 1. */
START_TEST(test_example_a_ring_ll128)
{
    struct cs_sched *s = gen("ring:gpus=8,channels=4,instances=2,protocol=LL128");
    struct cs_plan *p;
    const struct cs_plan_op *op;

    ck_assert_int_eq(s->nchunksperloop, 64);
    p = plan(s, 8 * MiB);
    op = &p->tbs[0].ops[0];
    ck_assert_int_eq(p->sz.count, 2097152);
    ck_assert_int_eq(p->sz.chunk_elems, 32768);
    ck_assert_int_eq(p->sz.loop_elems, 144000);
    ck_assert_int_eq(p->sz.niter, 1);
    ck_assert_int_eq(p->sz.last_elems, 32768);
    ck_assert_int_eq(p->sz.max_allowed, 4);
    ck_assert_int_eq(op->cnt, 1);
    ck_assert_int_eq(op->ncalls, 1);
    ck_assert_int_eq(p->slots_per_call, 1);
    ck_assert_int_eq(cs_plan_call_elems(p, op, 0, 0), 32768);
    ck_assert_double_eq(cs_plan_wire_bytes(p, cs_plan_call_elems(p, op, 0, 0) * 4), 139904.0);
    cs_plan_free(p);
    p = plan(s, 20 * MiB);
    ck_assert_int_eq(p->sz.chunk_elems, 81920);
    ck_assert_int_eq(p->sz.niter, 1);
    ck_assert_int_eq(p->sz.max_allowed, 1);
    ck_assert_int_eq(cs_plan_call_elems(p, &p->tbs[0].ops[0], 0, 0) * 4, 320 * 1024);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* Example B: the corrected hierarchical AllReduce, 8 GPUs, LL. Gpu 0 tb 12 starts with a send of
 * 16 chunks. 4 MiB: S 16,384, loop 8,192, 2 iterations, maxAllowedCount 1, 16 calls of 32 KiB;
 * 1 MiB: 1 iteration, maxAllowedCount 2, 8 calls; 1,048,832 B: maxAllowedCount 1, 16 calls. */
START_TEST(test_example_b_hierarchical_ll)
{
    struct cs_sched *s = gen("hierarchical:gpus=8,protocol=LL,variant=v1");
    struct cs_plan *p = plan(s, 4 * MiB);
    const struct cs_plan_op *op = &p->tbs[p->gpu_tb0[0] + 12].ops[0];

    ck_assert_int_eq(op->type, CS_STEP_S);
    ck_assert_int_eq(op->cnt, 16);
    ck_assert_int_eq(p->sz.chunk_elems, 16384);
    ck_assert_int_eq(p->sz.loop_elems, 8192);
    ck_assert_int_eq(p->sz.niter, 2);
    ck_assert_int_eq(p->sz.last_elems, 8192);
    ck_assert_int_eq(p->sz.max_allowed, 1);
    ck_assert_int_eq(op->ncalls, 16);
    for (int it = 0; it < 2; it++)
        ck_assert_int_eq(cs_plan_call_elems(p, op, it, 15), 8192);
    cs_plan_free(p);
    p = plan(s, 1 * MiB);
    op = &p->tbs[p->gpu_tb0[0] + 12].ops[0];
    ck_assert_int_eq(p->sz.chunk_elems, 4096);
    ck_assert_int_eq(p->sz.niter, 1);
    ck_assert_int_eq(p->sz.max_allowed, 2);
    ck_assert_int_eq(op->ncalls, 8);
    cs_plan_free(p);
    p = plan(s, 1048832);
    op = &p->tbs[p->gpu_tb0[0] + 12].ops[0];
    ck_assert_int_eq(p->sz.chunk_elems, 4097);
    ck_assert_int_eq(p->sz.max_allowed, 1);
    ck_assert_int_eq(op->ncalls, 16);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* The same boundary in the CPU emulation: 8 calls fill the 8 slots and finish; 16 deadlock. */
START_TEST(test_example_b_emulation)
{
    static const long long sizes[] = {1 * MiB, 1048832};
    struct cs_sched *s = gen("hierarchical:gpus=8,protocol=LL,variant=v1");
    struct cs_xplan *x = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_xplan_build(s, &x, &err), 0);
    for (int i = 0; i < 2; i++) {
        struct cs_xplan_sizing sz;
        struct cs_emulate_bufs *b;

        ck_assert_int_eq(cs_xplan_size(x, sizes[i], 4, 0, &sz, &err), 0);
        ck_assert_int_eq(sz.run.max_allowed, i == 0 ? 2 : 1);
        b = cs_emulate_bufs_new(x, (long)sz.run.chunk_elems);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(cs_emulate_run(x, &sz, b, &err), i == 0 ? 0 : CS_ERR_SIM);
        if (i == 0)
            ck_assert_int_eq(cs_emulate_check_output(x, b, &err), 0);
        cs_emulate_bufs_free(b);
    }
    cs_xplan_free(x);
    cs_sched_free(s);
}
END_TEST

/* Hierarchical LL128 at 64 MiB: S 262,144 in 144,000-element loop chunks, so 2 iterations and a
 * partial last one of 118,144 elements (min(144,000, 25 x 4,800, 118,144) in the kernel). */
START_TEST(test_ll128_partial_last_iteration)
{
    struct cs_sched *s = gen("hierarchical:gpus=8,protocol=LL128,variant=v1");
    struct cs_plan *p = plan(s, 64 * MiB);

    ck_assert_int_eq(p->sz.chunk_elems, 262144);
    ck_assert_int_eq(p->sz.niter, 2);
    ck_assert_int_eq(p->sz.last_elems, 118144);
    ck_assert_int_eq(cs_plan_iter_elems(p, 0), 144000);
    ck_assert_int_eq(cs_plan_iter_elems(p, 1), 118144);
    ck_assert_int_eq(cs_plan_call_elems(p, &p->tbs[0].ops[0], 1, 0), 118144);
    cs_plan_free(p);
    cs_sched_free(s);
}
END_TEST

/* More loop iterations than the flags tell apart are refused: 65,535 pass, 65,536 do not. */
START_TEST(test_iteration_limit)
{
    struct cs_plan_sizing sz;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_plan_sizing_init(&sz, 1, CS_PROTO_LL, 65535LL * 32768, 4, 0, &err), 0);
    ck_assert_int_eq(sz.niter, 65535);
    ck_assert_int_eq(cs_plan_sizing_init(&sz, 1, CS_PROTO_LL, 65535LL * 32768 + 4, 4, 0, &err),
                     CS_ERR_INVALID);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_table, 1},
        {test_example_a_ring_ll128, 1},
        {test_example_b_hierarchical_ll, 1},
        {test_example_b_emulation, 1},
        {test_ll128_partial_last_iteration, 1},
        {test_iteration_limit, 1},
        {NULL, 0},
    };

    return test_run("proto", 60, tests, NULL);
}
