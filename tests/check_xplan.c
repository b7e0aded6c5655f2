/* check_xplan.c: executor plan layout, buffers, connections, sizing and call matching. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "runner.h"
#include "testutil.h"
#include "xplantest.h"

/* Transmissions a tb should have: its non-nop steps minus the re fused into a previous re. */
static int count_real_steps(const struct cs_tb *tb)
{
    int n = 0;

    for (int k = 0; k < tb->nsteps; k++)
        if (tb->steps[k].type != CS_STEP_NOP)
            n++;
    return n;
}

START_TEST(test_ring_plan_shape)
{
    struct cs_sched *s = load(test_data("msccl-xml/simple_allreduce_ring.4gpu.1inst.xml"));
    struct cs_xplan *p = plan_of(s);

    ck_assert_int_eq(p->nranks, 4);
    ck_assert_int_eq(p->nchunks, 4);
    ck_assert_int_eq(p->proto, CS_PROTO_SIMPLE);
    ck_assert_int_eq(p->ntbs, 4);
    ck_assert_int_eq(p->nconns, 4);
    ck_assert_int_eq(p->nsteps, 28);
    for (int c = 0; c < p->nconns; c++) {
        const struct cs_xplan_conn *cn = &p->conns[c];

        ck_assert_int_eq(cn->dst, (cn->src + 1) % 4);
        ck_assert_int_eq(p->tbs[cn->send_tb].rank, cn->src);
        ck_assert_int_eq(p->tbs[cn->recv_tb].rank, cn->dst);
        ck_assert_int_eq(p->tbs[cn->send_tb].send_conn, c);
        ck_assert_int_eq(p->tbs[cn->recv_tb].recv_conn, c);
    }
    /* In-place allreduce: the output is the input. */
    ck_assert_int_eq(p->ranks[2].out_alias, 0);
    ck_assert_int_eq(p->ranks[2].in_alias, -1);
    /* Rank 0 step 1 is rrs i[3]: it reads its source, writes nothing locally. */
    ck_assert_int_eq(p->steps[1].type, CS_STEP_RRS);
    ck_assert_int_eq(p->steps[1].srcbuf, CS_BUF_INPUT);
    ck_assert_int_eq(p->steps[1].srcoff, 3);
    ck_assert_int_eq(p->steps[1].dstbuf, 0);
    cs_xplan_free(p);
    cs_sched_free(s);
}
END_TEST

/* The seed schedule (dependence nops, fused re): nops fold into the next step's dependencies, and
 * consecutive re into one destination fuse as the runtime's parser does. */
START_TEST(test_hierarchical_nops_and_fusion)
{
    struct cs_sched *s =
        load(test_data("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml"));
    struct cs_xplan *p = plan_of(s);
    int fused = 0, folded = 0, total_real = 0, with_deps = 0;

    for (int g = 0; g < s->ngpus; g++)
        for (int t = 0; t < s->gpus[g].ntbs; t++) {
            const struct cs_tb *tb = &s->gpus[g].tbs[t];

            total_real += count_real_steps(tb);
            for (int k = 0; k < tb->nsteps; k++)
                if (tb->steps[k].type == CS_STEP_NOP && tb->steps[k].depid >= 0)
                    folded++;
        }
    for (int i = 0; i < p->nsteps; i++) {
        ck_assert_int_ne(p->steps[i].type, CS_STEP_NOP);
        ck_assert_int_le(p->steps[i].nsrcs + 1, CS_MAX_REDUCE_FUSION);
        fused += p->steps[i].nsrcs;
        with_deps += p->steps[i].ndeps;
        if (p->steps[i].nsrcs > 0)
            ck_assert_int_eq(p->steps[i].type, CS_STEP_RE);
    }
    ck_assert_int_gt(folded, 0);
    ck_assert_int_eq(p->nsteps + fused, total_real);
    ck_assert_int_eq(p->nsrcs, fused);
    /* Every nop dependency survives, on the step after it. */
    {
        int xml_deps = 0;

        for (int g = 0; g < s->ngpus; g++)
            for (int t = 0; t < s->gpus[g].ntbs; t++)
                for (int k = 0; k < s->gpus[g].tbs[t].nsteps; k++)
                    xml_deps += s->gpus[g].tbs[t].steps[k].depid >= 0;
        ck_assert_int_eq(with_deps, xml_deps);
    }
    cs_xplan_free(p);
    cs_sched_free(s);
}
END_TEST

START_TEST(test_sizing)
{
    struct cs_sched *s = load(test_data("msccl-xml/allreduce_a100_ncv4.4gpu.1inst.LL.xml"));
    struct cs_xplan *p = plan_of(s);
    struct cs_xplan_sizing sz;
    struct cs_error err;

    /* nchunksperloop 2, LL: 32 KiB per loop chunk. */
    cs_error_init(&err);
    ck_assert_int_eq(cs_xplan_size(p, 1 << 20, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.run.chunk_elems, (1 << 20) / 4 / 2);
    ck_assert_int_eq(sz.run.loop_elems, 32 * 1024 / 4);
    ck_assert_int_eq(sz.run.niter, 16);
    ck_assert_int_eq(sz.run.max_allowed, 1);
    ck_assert_int_eq(sz.count, (1 << 20) / 4);
    ck_assert_int_eq(cs_xplan_size(p, 1024, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.run.niter, 1);
    ck_assert_int_eq(sz.run.max_allowed, 64); /* 32 KiB / 512 B */
    ck_assert_int_eq(cs_xplan_size(p, 8, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.run.max_allowed, 71); /* clamped below MSCCL_MAX_COUNT */
    /* 12 B do not split into 2 chunks of floats. */
    ck_assert_int_eq(cs_xplan_size(p, 12, 4, 0, &sz, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not split"));
    cs_xplan_free(p);
    cs_sched_free(s);

    s = load(test_data("msccl-xml/allgather_a100_pcie.4gpu.1inst.LL128.xml"));
    p = plan_of(s);
    ck_assert_int_eq(cs_xplan_size(p, 4 * 576000 * 3, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.run.niter, 3);
    ck_assert_int_eq(sz.count, 576000 * 3 / 4);
    /* In-place allgather: rank r's input is its slice of the output. */
    ck_assert_int_eq(p->ranks[3].in_alias, 3);
    ck_assert_int_eq(p->ranks[3].in_chunks, 1);
    ck_assert_int_eq(p->ranks[3].out_chunks, 4);
    ck_assert_int_eq(cs_proto_slots_per_call(CS_PROTO_SIMPLE), 4);
    ck_assert_int_eq(cs_proto_slots_per_call(CS_PROTO_LL128), 1);
    cs_xplan_free(p);
    cs_sched_free(s);
}
END_TEST

/* Bad schedules: each names the problem and the XML line. */
struct bad_case {
    const char *xml;
    int line;
    const char *what;
};

/* The bad schedules keep one XML element per source line. */
/* clang-format off */
#define HEAD "<algo name=\"x\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allreduce\" inplace=\"0\">\n"
#define STEP(s, t, sb, so, db, dof, c, di, ds, h)                                                          \
    "<step s=\"" #s "\" type=\"" t "\" srcbuf=\"" sb "\" srcoff=\"" #so "\" dstbuf=\"" db              \
    "\" dstoff=\"" #dof "\" cnt=\"" #c "\" depid=\"" #di "\" deps=\"" #ds "\" hasdep=\"" #h "\"/>\n"
#define NOP(s, di, ds) STEP(s, "nop", "i", -1, "o", -1, 0, di, ds, 0)
#define RECV1 "<gpu id=\"1\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", "i", 0, "o", 0, 1, -1, -1, 0) "</tb>\n</gpu>\n"

static const struct bad_case bad_cases[] = {
    {HEAD "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
          "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", "i", 1, "o", 0, 2, -1, -1, 0)
          "</tb>\n</gpu>\n" RECV1 "</algo>\n",
     4, "outside"},
    {HEAD "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
          "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", "i", 0, "o", 0, 1, -1, -1, 1)
          "</tb>\n<tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">\n" NOP(0, 0, 0)
          STEP(1, "cpy", "i", 0, "o", 0, 1, -1, -1, 0) "</tb>\n</gpu>\n" RECV1 "</algo>\n",
     8, "no depid"},
    {HEAD "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
          "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", "i", 0, "o", 0, 1, -1, -1, 0)
          "</tb>\n</gpu>\n<gpu id=\"1\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
          "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"1\">\n" STEP(0, "r", "i", 0, "o", 0, 1, -1, -1, 0)
          "</tb>\n</gpu>\n</algo>\n",
     3, "no tb receives"},
    {HEAD "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
          "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", "i", 0, "o", 0, 1, -1, -1, 0)
          "</tb>\n<tb id=\"1\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
          STEP(0, "s", "i", 1, "o", 1, 1, -1, -1, 0) "</tb>\n</gpu>\n" RECV1 "</algo>\n",
     6, "share a connection"},
};
/* clang-format on */

START_TEST(test_bad_plans)
{
    const struct bad_case *bc = &bad_cases[_i];
    struct cs_sched *s = NULL;
    struct cs_xplan *p = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sched_read_xml_mem(bc->xml, strlen(bc->xml), "bad.xml", &s, &err) == 0,
                  "case %d: reader: %d: %s", _i, err.line, err.msg);
    ck_assert_int_eq(cs_xplan_build(s, &p, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err.msg, bc->what) != NULL, "case %d: %s", _i, err.msg);
    ck_assert_msg(err.line == bc->line, "case %d: line %d, want %d (%s)", _i, err.line, bc->line,
                  err.msg);
    cs_sched_free(s);
}
END_TEST

/* The schedule in xml[0..len), read as m.xml. */
static struct cs_sched *load_mem(const char *xml, size_t len)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sched_read_xml_mem(xml, len, "m.xml", &s, &err) == 0, "%s", err.msg);
    return s;
}

/* A connection whose sender sends two chunks in one step and whose receiver takes them in two
 * steps matches at one call per chunk but not when two chunks fit one call. */
START_TEST(test_call_count_mismatch)
{
    static const char xml[] =
        HEAD "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
             "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(
                 0, "s", "i", 0, "o", 0, 2, -1, -1,
                 0) "</tb>\n</gpu>\n<gpu id=\"1\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
                    "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", "i", 0, "o", 0,
                                                                             1, -1, -1, 0)
                        STEP(1, "r", "i", 1, "o", 1, 1, -1, -1, 0) "</tb>\n</gpu>\n</algo>\n";
    struct cs_sched *s = load_mem(xml, sizeof(xml) - 1);
    struct cs_xplan *p = plan_of(s);
    struct cs_xplan_sizing sz;
    struct cs_error err;

    cs_error_init(&err);
    /* 2 x 32 KiB chunks: one chunk per call, 2 calls each side. */
    ck_assert_int_eq(cs_xplan_size(p, 2 * 32768, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.max_call_calls, 2);
    /* 2 x 4 KiB: the sender's two chunks fit one call, the receiver still makes two. */
    ck_assert_int_eq(cs_xplan_size(p, 2 * 4096, 4, 0, &sz, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "would hang"));
    cs_xplan_free(p);
    cs_sched_free(s);
}
END_TEST

/* Equal call counts but different call sizes: sender 2+1 chunks, receiver 1+2, at 2 per call. */
START_TEST(test_call_size_mismatch)
{
    static const char xml[] =
        "<algo name=\"x\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"3\" ngpus=\"2\" "
        "coll=\"custom\" inplace=\"0\">\n"
        "<gpu id=\"0\" i_chunks=\"3\" o_chunks=\"3\" s_chunks=\"0\">\n"
        "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", "i", 0, "o", 0, 2, -1, -1,
                                                                 0)
            STEP(1, "s", "i", 2, "o", 2, 1, -1, -1,
                 0) "</tb>\n</gpu>\n"
                    "<gpu id=\"1\" i_chunks=\"3\" o_chunks=\"3\" s_chunks=\"0\">\n"
                    "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", "i", 0, "o", 0,
                                                                             1, -1, -1, 0)
                        STEP(1, "r", "i", 1, "o", 1, 2, -1, -1, 0) "</tb>\n</gpu>\n</algo>\n";
    struct cs_sched *s = load_mem(xml, sizeof(xml) - 1);
    struct cs_xplan *p = plan_of(s);
    struct cs_xplan_sizing sz;
    struct cs_error err;

    cs_error_init(&err);
    /* 3 chunks of 16 KiB: two fit a 32 KiB LL call. */
    ck_assert_int_eq(cs_xplan_size(p, 3 * 16384, 4, 0, &sz, &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "call 0 sends 2 chunks but receives 1") != NULL, "%s", err.msg);
    /* 3 chunks of 32 KiB: one chunk per call on both sides. */
    cs_error_init(&err);
    ck_assert_int_eq(cs_xplan_size(p, 3 * 32768, 4, 0, &sz, &err), 0);
    cs_xplan_free(p);
    cs_sched_free(s);
}
END_TEST

/* The flat executor arrays and the replay's plan of one schedule at one size: the same
 * transmissions, dependencies, fused sources, sizing and calls per step. */
static void views_agree(const char *path, const struct cs_sched *s, long long size_bytes)
{
    struct cs_xplan *x = plan_of(s);
    struct cs_plan *p = NULL;
    struct cs_xplan_sizing sz;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_plan_build(s, size_bytes, 4, 0, &p, &err) == 0, "%s: %s", path, err.msg);
    if (cs_xplan_size(x, size_bytes, 4, 0, &sz, &err) == 0) {
        ck_assert_int_eq(sz.run.chunk_elems, p->sz.chunk_elems);
        ck_assert_int_eq(sz.run.loop_elems, p->sz.loop_elems);
        ck_assert_int_eq(sz.run.niter, p->sz.niter);
        ck_assert_int_eq(sz.run.last_elems, p->sz.last_elems);
        ck_assert_int_eq(sz.run.max_allowed, p->sz.max_allowed);
    }
    ck_assert_int_eq(x->ntbs, p->ntbs);
    for (int t = 0; t < p->ntbs; t++) {
        const struct cs_plan_tb *pt = &p->tbs[t];
        const struct cs_xplan_tb *xt = &x->tbs[t];

        ck_assert_msg(xt->rank == pt->gpu && xt->id == pt->id && xt->nsteps == pt->nops,
                      "%s: tb %d", path, t);
        for (int i = 0; i < pt->nops; i++) {
            const struct cs_plan_op *op = &pt->ops[i];
            const struct cs_xplan_step *st = &x->steps[xt->step_first + i];

            ck_assert_msg(st->type == (int)op->type && st->cnt == op->cnt && st->s == op->step &&
                              st->hasdep == op->hasdep && st->ndeps == op->ndeps &&
                              st->nsrcs == op->nsrc - 1 && st->srcoff == op->srcoff[0] &&
                              st->dstoff == op->dstoff,
                          "%s: gpu %d tb %d op %d", path, pt->gpu, pt->id, i);
            ck_assert_int_eq(cs_proto_step_calls(st->cnt, p->sz.max_allowed), op->ncalls);
            for (int j = 1; j < op->nsrc; j++)
                ck_assert_int_eq(x->srcs[st->src_first + j - 1], op->srcoff[j]);
            for (int d = 0; d < op->ndeps; d++) {
                ck_assert_int_eq(x->deps[st->dep_first + d].tb,
                                 p->gpu_tb0[pt->gpu] + op->deps[d].tb);
                ck_assert_int_eq(x->deps[st->dep_first + d].s, op->deps[d].step);
            }
        }
    }
    cs_plan_free(p);
    cs_xplan_free(x);
}

/* Every XML of a folder, at 1, 1,000, 16,384 and 262,147 elements per chunk. */
static int views_agree_dir(const char *dir)
{
    static const long long per_chunk[] = {1, 1000, 16384, 262147};
    char path[8192];
    struct dirent *e;
    DIR *d = opendir(dir);
    int n = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        struct cs_sched *s;

        if (l < 5 || strcmp(e->d_name + l - 4, ".xml") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        s = load(path);
        for (size_t k = 0; k < sizeof(per_chunk) / sizeof(per_chunk[0]); k++)
            views_agree(path, s, per_chunk[k] * s->nchunksperloop * 4);
        cs_sched_free(s);
        n++;
    }
    closedir(d);
    return n;
}

/* The two views agree on the reference XMLs of tests/data and, when present, ../shared/data. */
START_TEST(test_views_agree)
{
    char dir[8192];

    snprintf(dir, sizeof(dir), "%s", test_data("msccl-xml"));
    ck_assert_int_gt(views_agree_dir(dir), 5);
}
END_TEST

START_TEST(test_views_agree_shared)
{
    static const char *subs[] = {"", "/fixed-example", "/azure-msccl-tools"};
    const char *top = test_shared_data();
    char dir[8192];

    ck_assert_ptr_nonnull(top);
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        snprintf(dir, sizeof(dir), "%s/msccl-xml%s", top, subs[i]);
        views_agree_dir(dir);
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_ring_plan_shape, 1},
        {test_hierarchical_nops_and_fusion, 1},
        {test_sizing, 1},
        {test_bad_plans, (int)(sizeof(bad_cases) / sizeof(bad_cases[0]))},
        {test_call_count_mismatch, 1},
        {test_call_size_mismatch, 1},
        {test_views_agree, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_views_agree_shared, 1},
        {NULL, 0},
    };

    return test_run("xplan", 120, tests, shared);
}
