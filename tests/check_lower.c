/* check_lower.c: the lowering pipeline (hazards, fusion, order, threadblocks, dependencies, nops,
 * replication) and schedule comparison. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "lower.h"
#include "runner.h"
#include "schedcheck.h"
#include "testutil.h"
#include "xml.h"

static struct cs_prog_opts opts(int ngpus, int in_chunks)
{
    struct cs_prog_opts o;

    memset(&o, 0, sizeof(o));
    o.name = "test";
    o.coll = CS_COLL_ALLREDUCE;
    o.ngpus = ngpus;
    o.in_chunks = in_chunks;
    o.inplace = 1;
    o.proto = CS_PROTO_LL;
    o.instances = 1;
    o.fusion = 1;
    return o;
}

static struct cs_ref ref(int rank, enum cs_buf buf, int index, int size)
{
    struct cs_ref r = {rank, buf, index, size};

    return r;
}

static struct cs_sched *lower(struct cs_prog *p)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_prog_lower(p, &s, &err) == 0, "%s", err.msg);
    cs_prog_free(p);
    return s;
}

static int lower_fails(struct cs_prog *p, const char *needle)
{
    struct cs_sched *s = NULL;
    struct cs_error err;
    int rc;

    cs_error_init(&err);
    rc = cs_prog_lower(p, &s, &err);
    cs_prog_free(p);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' lacks '%s'", err.msg, needle);
    return rc;
}

START_TEST(test_copy_is_send_and_recv)
{
    struct cs_prog_opts o = opts(2, 2);
    struct cs_prog *p = cs_prog_new(&o);
    struct cs_sched *s;
    const struct cs_step *st;

    ck_assert_int_eq(
        cs_prog_copy(p, ref(0, CS_BUF_INPUT, 1, 1), ref(1, CS_BUF_SCRATCH, 0, 1), 0, 0, -1), 0);
    s = lower(p);
    ck_assert_int_eq(s->ngpus, 2);
    ck_assert_int_eq(s->nchannels, 1);
    ck_assert_int_eq(s->nchunksperloop, 2);
    ck_assert_int_eq(s->gpus[0].ntbs, 1);
    ck_assert_int_eq(s->gpus[0].tbs[0].send, 1);
    ck_assert_int_eq(s->gpus[0].tbs[0].recv, -1);
    st = &s->gpus[0].tbs[0].steps[0];
    ck_assert_int_eq(st->type, CS_STEP_S);
    ck_assert_int_eq(st->srcbuf, CS_BUF_INPUT);
    ck_assert_int_eq(st->srcoff, 1);
    ck_assert_int_eq(st->dstbuf,
                     CS_BUF_SCRATCH); /* the remote destination, as msccl-tools writes */
    ck_assert_int_eq(st->dstoff, 0);
    ck_assert_int_eq(s->gpus[1].tbs[0].recv, 0);
    st = &s->gpus[1].tbs[0].steps[0];
    ck_assert_int_eq(st->type, CS_STEP_R);
    ck_assert_int_eq(st->srcoff, 1);
    ck_assert_int_eq(s->gpus[1].s_chunks, 1);
    ck_assert_int_eq(s->gpus[1].i_chunks, 0); /* only local accesses count */
    cs_sched_free(s);
}
END_TEST

/* A local reduce after a receive on another tb waits for it; tbs sort by (send, recv, chan). */
START_TEST(test_hazard_dependency_and_tb_sort)
{
    struct cs_prog_opts o = opts(2, 1);
    struct cs_prog *p = cs_prog_new(&o);
    struct cs_sched *s;
    const struct cs_gpu *g;

    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 0, 1), ref(1, CS_BUF_SCRATCH, 0, 1), 5, 5, -1);
    cs_prog_reduce(p, ref(1, CS_BUF_INPUT, 0, 1), ref(1, CS_BUF_SCRATCH, 0, 1), 7, -1, -1);
    s = lower(p);
    g = &s->gpus[1];
    ck_assert_int_eq(g->ntbs, 2);
    ck_assert_int_eq(g->tbs[0].recv, -1); /* the local tb 7 sorts first */
    ck_assert_int_eq(g->tbs[1].recv, 0);
    ck_assert_int_eq(g->tbs[0].steps[0].type, CS_STEP_RE);
    ck_assert_int_eq(g->tbs[0].steps[0].depid, 1);
    ck_assert_int_eq(g->tbs[0].steps[0].deps, 0);
    ck_assert_int_eq(g->tbs[1].steps[0].hasdep, 1);
    ck_assert_int_eq(g->tbs[0].steps[0].hasdep, 0);
    cs_sched_free(s);
}
END_TEST

static struct cs_prog *ring3(int fusion)
{
    struct cs_prog_opts o = opts(3, 3);
    struct cs_prog *p;

    o.fusion = fusion;
    p = cs_prog_new(&o);
    for (int b = 0; b < 3; b++) {
        int prev = (b + 1) % 3;

        for (int k = 1; k < 3; k++) {
            int r = (b + 1 + k) % 3;

            ck_assert_int_eq(cs_prog_reduce(p, ref(r, CS_BUF_INPUT, b, 1),
                                            ref(prev, CS_BUF_INPUT, b, 1), 0, 0, -1),
                             0);
            prev = r;
        }
        for (int k = 1; k < 3; k++) {
            int r = (b + k) % 3;

            ck_assert_int_eq(cs_prog_copy(p, ref(prev, CS_BUF_INPUT, b, 1),
                                          ref(r, CS_BUF_INPUT, b, 1), 0, 0, -1),
                             0);
            prev = r;
        }
    }
    return p;
}

static int count_type(const struct cs_sched *s, enum cs_step_type t)
{
    int n = 0;

    for (int g = 0; g < s->ngpus; g++)
        for (int k = 0; k < s->gpus[g].ntbs; k++)
            for (int i = 0; i < s->gpus[g].tbs[k].nsteps; i++)
                n += s->gpus[g].tbs[k].steps[i].type == t;
    return n;
}

START_TEST(test_fusion)
{
    struct cs_sched *s = lower(ring3(1)), *u = lower(ring3(0));
    char why[512];

    ck_assert_int_eq(count_type(s, CS_STEP_S), 3);
    ck_assert_int_eq(count_type(s, CS_STEP_RRS), 3);
    ck_assert_int_eq(count_type(s, CS_STEP_RRCS), 3);
    ck_assert_int_eq(count_type(s, CS_STEP_RCS), 3);
    ck_assert_int_eq(count_type(s, CS_STEP_R), 3);
    ck_assert_int_eq(count_type(u, CS_STEP_RRC), 6);
    ck_assert_int_eq(count_type(u, CS_STEP_S), 12);
    ck_assert_int_eq(count_type(u, CS_STEP_R), 6);
    ck_assert_msg(sc_check_allreduce(s, why, sizeof(why)) == 0, "%s", why);
    ck_assert_msg(sc_check_allreduce(u, why, sizeof(why)) == 0, "%s", why);
    cs_sched_free(s);
    cs_sched_free(u);
}
END_TEST

/* Two receives reduced into one chunk on a third tb: without dependence nops each re carries its
 * own dependency; with them the first re waits for both (one nop) and the second for none. */
static struct cs_sched *two_reduces(int dependence_nop)
{
    struct cs_prog_opts o = opts(3, 1);
    struct cs_prog *p;

    o.dependence_nop = dependence_nop;
    p = cs_prog_new(&o);
    cs_prog_copy(p, ref(1, CS_BUF_INPUT, 0, 1), ref(0, CS_BUF_SCRATCH, 0, 1), 0, 1, -1);
    cs_prog_copy(p, ref(2, CS_BUF_INPUT, 0, 1), ref(0, CS_BUF_SCRATCH, 1, 1), 0, 2, -1);
    cs_prog_reduce(p, ref(0, CS_BUF_INPUT, 0, 1), ref(0, CS_BUF_SCRATCH, 0, 1), 3, -1, -1);
    cs_prog_reduce(p, ref(0, CS_BUF_INPUT, 0, 1), ref(0, CS_BUF_SCRATCH, 1, 1), 3, -1, -1);
    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 0, 1), ref(1, CS_BUF_INPUT, 0, 1), 1, 0, -1);
    return lower(p);
}

START_TEST(test_dependence_nops)
{
    struct cs_sched *a = two_reduces(0), *b = two_reduces(1);
    const struct cs_tb *ta = &a->gpus[0].tbs[0], *tb = &b->gpus[0].tbs[0];
    struct cs_dep d[4];

    ck_assert_int_eq(ta->send, -1);
    ck_assert_int_eq(ta->nsteps, 2);
    ck_assert_int_eq(cs_tb_step_deps(ta, 0, d, 4), 1);
    ck_assert_int_eq(cs_tb_step_deps(ta, 1, d, 4), 1);
    ck_assert_int_eq(tb->nsteps, 3);
    ck_assert_int_eq(tb->steps[0].type, CS_STEP_NOP);
    ck_assert_int_eq(cs_tb_step_deps(tb, 1, d, 4), 2);
    ck_assert_int_eq(cs_tb_step_deps(tb, 2, d, 4), 0);
    ck_assert_int_eq(tb->steps[2].depid, -1);
    /* the send back to rank 1 (tb sorted last) waits for the last reduce: step 1 without nops,
     * step 2 with */
    ck_assert_int_eq(a->gpus[0].tbs[2].send, 1);
    ck_assert_int_eq(a->gpus[0].tbs[2].steps[1].type, CS_STEP_S);
    ck_assert_int_eq(a->gpus[0].tbs[2].steps[1].depid, 0);
    ck_assert_int_eq(a->gpus[0].tbs[2].steps[1].deps, 1);
    ck_assert_int_eq(b->gpus[0].tbs[2].steps[1].deps, 2);
    cs_sched_free(a);
    cs_sched_free(b);
}
END_TEST

/* An op with several dependencies keeps one and gets a nop per extra one just before it. */
START_TEST(test_nop_expansion)
{
    struct cs_prog_opts o = opts(3, 2);
    struct cs_prog *p = cs_prog_new(&o);
    struct cs_sched *s;
    const struct cs_tb *t;
    struct cs_dep d[4];

    cs_prog_copy(p, ref(1, CS_BUF_INPUT, 0, 1), ref(0, CS_BUF_INPUT, 0, 1), 0, 1, -1);
    cs_prog_copy(p, ref(2, CS_BUF_INPUT, 1, 1), ref(0, CS_BUF_INPUT, 1, 1), 0, 2, -1);
    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 0, 2), ref(1, CS_BUF_INPUT, 0, 2), 1, 0, -1);
    s = lower(p);
    t = &s->gpus[0].tbs[0]; /* (send 1, recv 1) sorts before (send -1, recv 2)? no: -1 first */
    ck_assert_int_eq(t->send, -1);
    t = &s->gpus[0].tbs[1];
    ck_assert_int_eq(t->send, 1);
    /* r from 1 (step 0), then nop + s waiting on the receive from 2 and its own tb's receive */
    ck_assert_int_eq(t->steps[0].type, CS_STEP_R);
    ck_assert_int_eq(t->steps[1].type, CS_STEP_S);
    ck_assert_int_eq(cs_tb_step_deps(t, 1, d, 4), 1); /* same-tb dependency dropped */
    cs_sched_free(s);
}
END_TEST

static struct cs_sched *replicated(int interleaved)
{
    struct cs_prog_opts o = opts(2, 2);
    struct cs_prog *p;

    o.instances = 2;
    o.interleaved = interleaved;
    p = cs_prog_new(&o);
    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 1, 1), ref(1, CS_BUF_SCRATCH, 0, 1), 0, 0, -1);
    cs_prog_reduce(p, ref(1, CS_BUF_INPUT, 1, 1), ref(1, CS_BUF_SCRATCH, 0, 1), 1, -1, -1);
    return lower(p);
}

START_TEST(test_instances)
{
    struct cs_sched *a = replicated(0), *b = replicated(1);
    const struct cs_gpu *g = &a->gpus[1];

    ck_assert_int_eq(a->nchannels, 2);
    ck_assert_int_eq(a->nchunksperloop, 4);
    ck_assert_int_eq(g->ntbs, 4);
    /* local tbs (both instances, by channel), then the receiving ones */
    ck_assert_int_eq(g->tbs[0].chan, 0);
    ck_assert_int_eq(g->tbs[1].chan, 1);
    ck_assert_int_eq(g->tbs[0].steps[0].dstoff, 1);
    ck_assert_int_eq(g->tbs[1].steps[0].dstoff, 3); /* len(buffer)*i + index */
    ck_assert_int_eq(g->tbs[1].steps[0].srcoff, 1); /* scratch: instance size * i + index */
    ck_assert_int_eq(g->tbs[1].steps[0].depid, 3);
    ck_assert_int_eq(g->s_chunks, 2);
    ck_assert_int_eq(b->gpus[1].tbs[0].steps[0].dstoff, 2); /* index*instances + i */
    ck_assert_int_eq(b->gpus[1].tbs[1].steps[0].dstoff, 3);
    cs_sched_free(a);
    cs_sched_free(b);
}
END_TEST

START_TEST(test_errors)
{
    struct cs_prog_opts o = opts(3, 2);
    struct cs_prog *p;

    p = cs_prog_new(&o);
    ck_assert_int_ne(
        cs_prog_copy(p, ref(0, CS_BUF_SCRATCH, 0, 1), ref(1, CS_BUF_INPUT, 0, 1), 0, 0, -1), 0);
    lower_fails(p, "read before anything wrote");

    p = cs_prog_new(&o);
    ck_assert_int_ne(
        cs_prog_copy(p, ref(0, CS_BUF_INPUT, 1, 2), ref(1, CS_BUF_INPUT, 0, 2), 0, 0, -1), 0);
    lower_fails(p, "outside its buffer");

    p = cs_prog_new(&o);
    ck_assert_int_ne(
        cs_prog_copy(p, ref(3, CS_BUF_INPUT, 0, 1), ref(1, CS_BUF_INPUT, 0, 1), 0, 0, -1), 0);
    lower_fails(p, "rank that does not exist");

    p = cs_prog_new(&o);
    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 0, 1), ref(1, CS_BUF_INPUT, 0, 1), 0, 0, -1);
    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 1, 1), ref(2, CS_BUF_INPUT, 1, 1), 0, 0, -1);
    lower_fails(p, "illegal threadblock assignment");

    p = cs_prog_new(&o);
    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 0, 1), ref(1, CS_BUF_INPUT, 0, 1), -1, -1, -1);
    lower_fails(p, "no tb");

    /* tb ids index a table: a huge one is refused, not allocated */
    p = cs_prog_new(&o);
    cs_prog_copy(p, ref(0, CS_BUF_INPUT, 0, 1), ref(1, CS_BUF_INPUT, 0, 1), 2000000000, 0, -1);
    lower_fails(p, "tb ids go up to");

    /* msccl-tools would silently drop a reduce of two initial values */
    p = cs_prog_new(&o);
    cs_prog_reduce(p, ref(0, CS_BUF_INPUT, 0, 1), ref(0, CS_BUF_INPUT, 1, 1), 0, -1, -1);
    lower_fails(p, "never be scheduled");

    o.instances = 0;
    ck_assert_ptr_null(cs_prog_new(&o));
}
END_TEST

/* msccl-tools' allgather_ring.py (in place, the input aliased into the output): for each step and
 * index, chunk(rank, output, index).copy(next, output, index) on channel index % K; rcs fusion,
 * tb per channel as the script assigns them, interleaved instances. */
static int allgather_equals(int g, int k, int inst, const char *proto, const char *path)
{
    struct cs_prog_opts o = opts(g, 1);
    struct cs_prog *p;
    struct cs_sched *s, *want = NULL;
    struct cs_sched_diff d;
    struct cs_error err;
    char name[64];
    FILE *fp = fopen(path, "r");

    if (fp == NULL)
        return 0;
    fclose(fp);
    snprintf(name, sizeof(name), "allgather_ring_%dchannelsperring", k);
    o.name = name;
    o.coll = CS_COLL_ALLGATHER;
    o.out_chunks = g;
    o.proto = cs_proto_parse(proto);
    o.instances = inst;
    o.interleaved = 1;
    p = cs_prog_new(&o);
    for (int step = 0; step < g - 1; step++)
        for (int i = 0; i < g; i++) {
            int r = (i + step) % g, next = (r + 1) % g, ch = i % k;

            ck_assert_int_eq(cs_prog_copy(p, ref(r, CS_BUF_OUTPUT, i, 1),
                                          ref(next, CS_BUF_OUTPUT, i, 1), ch, ch, ch),
                             0);
        }
    s = lower(p);
    cs_error_init(&err);
    ck_assert_msg(cs_sched_read_xml(path, &want, &err) == 0, "%s", err.msg);
    ck_assert_msg(cs_sched_compare(s, want, &d) == 0, "%s: gpu %d tb %d step %d %s: %s vs %s", path,
                  d.gpu, d.tb, d.step, d.attr, d.a, d.b);
    cs_sched_free(s);
    cs_sched_free(want);
    return 1;
}

START_TEST(test_allgather_ring_inplace)
{
    const char *data = test_shared_data();
    static const struct {
        int g, k, inst;
        const char *proto;
    } refs[] = {{8, 1, 1, "LL128"},
                {8, 4, 1, "LL128"},
                {8, 8, 1, "Simple"},
                {8, 4, 2, "LL"},
                {16, 2, 1, "Simple"}};
    int n = 0;

    ck_assert_ptr_nonnull(data);
    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
        char path[8192];

        snprintf(path, sizeof(path), "%s/msccl-xml/allgather_ring.%dgpu.%dch.%dinst.%s.xml", data,
                 refs[i].g, refs[i].k, refs[i].inst, refs[i].proto);
        n += allgather_equals(refs[i].g, refs[i].k, refs[i].inst, refs[i].proto, path);
    }
    ck_assert_int_eq(n, 5);
}
END_TEST

/* diff: equal to itself, blind to dependency order, and names the first difference. */
START_TEST(test_compare)
{
    struct cs_sched *a = NULL, *b = NULL;
    struct cs_error err;
    struct cs_sched_diff d;
    struct cs_tb *t;
    int swapped = 0;

    cs_error_init(&err);
    ck_assert_int_eq(
        cs_sched_read_xml(test_data("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml"),
                          &a, &err),
        0);
    ck_assert_int_eq(
        cs_sched_read_xml(test_data("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml"),
                          &b, &err),
        0);
    ck_assert_int_eq(cs_sched_compare(a, b, &d), 0);
    /* swap the dependency of a nop with that of the real step after it */
    for (int k = 0; k < b->gpus[0].ntbs && !swapped; k++) {
        t = &b->gpus[0].tbs[k];
        for (int i = 0; i + 1 < t->nsteps && !swapped; i++)
            if (t->steps[i].type == CS_STEP_NOP && t->steps[i + 1].type != CS_STEP_NOP &&
                t->steps[i + 1].depid >= 0) {
                int x = t->steps[i].depid, y = t->steps[i].deps;

                t->steps[i].depid = t->steps[i + 1].depid;
                t->steps[i].deps = t->steps[i + 1].deps;
                t->steps[i + 1].depid = x;
                t->steps[i + 1].deps = y;
                swapped = 1;
            }
    }
    ck_assert(swapped);
    ck_assert_int_eq(cs_sched_compare(a, b, &d), 0);
    b->gpus[2].tbs[6].steps[5].cnt = 5;
    ck_assert_int_eq(cs_sched_compare(a, b, &d), 1);
    ck_assert_int_eq(d.gpu, 2);
    ck_assert_int_eq(d.tb, 6);
    ck_assert_int_eq(d.step, 5);
    ck_assert_str_eq(d.attr, "cnt");
    ck_assert_str_eq(d.a, "4");
    ck_assert_str_eq(d.b, "5");
    b->gpus[2].tbs[6].steps[5].cnt = 4;
    b->gpus[2].tbs[6].steps[5].deps = 3;
    ck_assert_int_eq(cs_sched_compare(a, b, &d), 1);
    ck_assert_str_eq(d.attr, "deps");
    b->gpus[2].tbs[6].steps[5].deps = a->gpus[2].tbs[6].steps[5].deps;
    b->nchannels = 2;
    ck_assert_int_eq(cs_sched_compare(a, b, &d), 1);
    ck_assert_int_eq(d.gpu, -1);
    ck_assert_str_eq(d.attr, "nchannels");
    cs_sched_free(a);
    cs_sched_free(b);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_copy_is_send_and_recv, 1},
        {test_hazard_dependency_and_tb_sort, 1},
        {test_fusion, 1},
        {test_dependence_nops, 1},
        {test_nop_expansion, 1},
        {test_instances, 1},
        {test_errors, 1},
        {test_compare, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_allgather_ring_inplace, 1},
        {NULL, 0},
    };

    return test_run("lower", 0, tests, shared);
}
