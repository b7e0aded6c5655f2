/* check_xplan.c: executor plan compilation, sizing, reference results and the CPU emulation. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "testutil.h"
#include "xml.h"
#include "xplan.h"

static struct cs_sched *load(const char *path)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sched_read_xml(path, &s, &err) == 0, "%s:%d: %s", err.file, err.line, err.msg);
    return s;
}

static struct cs_xplan *plan_of(const struct cs_sched *s)
{
    struct cs_xplan *p = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_xplan_build(s, &p, &err) == 0, "%s:%d: %s", err.file, err.line, err.msg);
    return p;
}

/* Emulate at size_bytes (iter_bytes 0: the protocol's default). Returns the emulation's code and
 * stores the number of wrong output elements (or -1 when there is no reference) in *wrong. */
static int emulate(const struct cs_xplan *p, long long size_bytes, long iter_bytes, long *wrong,
                   char *msg, size_t msglen)
{
    struct cs_xplan_sizing sz;
    struct cs_xplan_bufs *b;
    struct cs_error err;
    int rc;

    cs_error_init(&err);
    ck_assert_msg(cs_xplan_size(p, size_bytes, 4, iter_bytes, &sz, &err) == 0, "%s", err.msg);
    b = cs_xplan_bufs_new(p, sz.chunk_elems);
    ck_assert_ptr_nonnull(b);
    rc = cs_xplan_emulate(p, &sz, b, &err);
    *wrong = -1;
    if (rc == 0 && cs_xplan_has_reference(p))
        *wrong = cs_xplan_check_output(p, b, &err);
    if (msg)
        snprintf(msg, msglen, "%s", err.msg);
    cs_xplan_bufs_free(b);
    return rc;
}

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
        ck_assert_int_le(p->steps[i].nsrcs + 1, CS_XPLAN_MAX_SRCS);
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
    ck_assert_int_eq(sz.chunk_elems, (1 << 20) / 4 / 2);
    ck_assert_int_eq(sz.iter_elems, 32 * 1024 / 4);
    ck_assert_int_eq(sz.niters, 16);
    ck_assert_int_eq(sz.max_count, 1);
    ck_assert_int_eq(sz.count, (1 << 20) / 4);
    ck_assert_int_eq(cs_xplan_size(p, 1024, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.niters, 1);
    ck_assert_int_eq(sz.max_count, 64); /* 32 KiB / 512 B */
    ck_assert_int_eq(cs_xplan_size(p, 8, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.max_count, 71); /* clamped below MSCCL_MAX_COUNT */
    /* 12 B do not split into 2 chunks of floats. */
    ck_assert_int_eq(cs_xplan_size(p, 12, 4, 0, &sz, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not split"));
    cs_xplan_free(p);
    cs_sched_free(s);

    s = load(test_data("msccl-xml/allgather_a100_pcie.4gpu.1inst.LL128.xml"));
    p = plan_of(s);
    ck_assert_int_eq(cs_xplan_size(p, 4 * 576000 * 3, 4, 0, &sz, &err), 0);
    ck_assert_int_eq(sz.niters, 3);
    ck_assert_int_eq(sz.count, 576000 * 3 / 4);
    /* In-place allgather: rank r's input is its slice of the output. */
    ck_assert_int_eq(p->ranks[3].in_alias, 3);
    ck_assert_int_eq(p->ranks[3].in_chunks, 1);
    ck_assert_int_eq(p->ranks[3].out_chunks, 4);
    ck_assert_int_eq(cs_xplan_proto_slots(CS_PROTO_SIMPLE), 4);
    ck_assert_int_eq(cs_xplan_proto_slots(CS_PROTO_LL128), 1);
    cs_xplan_free(p);
    cs_sched_free(s);
}
END_TEST

START_TEST(test_reference_values)
{
    struct cs_sched *s = load(test_data("msccl-xml/alltoall_allpairs.8gpu.1inst.LL128.xml"));
    struct cs_xplan *p = plan_of(s);
    float out[8 * 3];

    /* alltoall, 8 chunks of 3 elements: rank 2's output chunk q is rank q's input chunk 2. */
    ck_assert_int_eq(cs_xplan_expect_output(p, 2, 3, out), 0);
    for (int q = 0; q < 8; q++)
        for (int j = 0; j < 3; j++)
            ck_assert(out[q * 3 + j] == cs_xplan_input_value(q, 2 * 3 + j));
    cs_xplan_free(p);
    cs_sched_free(s);
    for (int r = 0; r < 4; r++)
        for (long e = 0; e < 5000; e += 7) {
            float v = cs_xplan_input_value(r, e);

            ck_assert(v == floorf(v) && v >= -30 && v <= 30);
        }
}
END_TEST

/* The CPU emulation of the compiled plan gives the collective's result for correct schedules, at
 * one iteration with multi-chunk calls, at several iterations, and with a partial last iteration. */
START_TEST(test_emulate_reference_xmls)
{
    static const char *good[] = {
        "simple_allreduce_ring.4gpu.1inst.xml",
        "allreduce_a100_ncv4.4gpu.1inst.LL.xml",
        "allgather_a100_pcie.4gpu.1inst.LL128.xml",
        "alltoall_allpairs.8gpu.1inst.LL128.xml",
        "allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml",
    };
    char path[512], msg[1024];

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct cs_sched *s;
        struct cs_xplan *p;
        long wrong;
        long long n = 0;

        snprintf(path, sizeof(path), "msccl-xml/%s", good[i]);
        s = load(test_data(path));
        p = plan_of(s);
        n = (long long)p->nchunks * 4;
        /* 1 element per chunk; 24 elements per chunk with 8-element iterations; 20 with 8 (partial). */
        ck_assert_msg(emulate(p, n * 1, 0, &wrong, msg, sizeof(msg)) == 0, "%s: %s", good[i], msg);
        ck_assert_msg(wrong == 0, "%s: %ld wrong: %s", good[i], wrong, msg);
        ck_assert_msg(emulate(p, n * 24, 32, &wrong, msg, sizeof(msg)) == 0, "%s: %s", good[i], msg);
        ck_assert_msg(wrong == 0, "%s: %ld wrong: %s", good[i], wrong, msg);
        ck_assert_msg(emulate(p, n * 20, 32, &wrong, msg, sizeof(msg)) == 0, "%s: %s", good[i], msg);
        ck_assert_msg(wrong == 0, "%s: %ld wrong: %s", good[i], wrong, msg);
        cs_xplan_free(p);
        cs_sched_free(s);
    }
}
END_TEST

/* The published seed is wrong (DESIGN.md): its result must fail the check, naming an element. */
START_TEST(test_emulate_seed_is_wrong)
{
    struct cs_sched *s =
        load(test_data("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml"));
    struct cs_xplan *p = plan_of(s);
    char msg[1024];
    long wrong;

    ck_assert_int_eq(emulate(p, (long long)p->nchunks * 4 * 8, 0, &wrong, msg, sizeof(msg)), 0);
    ck_assert_int_gt(wrong, 0);
    ck_assert_ptr_nonnull(strstr(msg, "expected"));
    cs_xplan_free(p);
    cs_sched_free(s);
}
END_TEST

START_TEST(test_custom_has_no_reference)
{
    struct cs_sched *s = load(test_data("msccl-xml/simple_custom_collective.prog1.xml"));
    struct cs_xplan *p = plan_of(s);
    long wrong;

    ck_assert(!cs_xplan_has_reference(p));
    ck_assert_int_eq(emulate(p, (long long)p->nchunks * 4 * 4, 0, &wrong, NULL, 0), 0);
    ck_assert_int_eq(wrong, -1);
    ck_assert_int_eq(cs_xplan_expect_output(p, 0, 4, NULL), CS_ERR_USAGE);
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

/* A connection whose sender sends two chunks in one step and whose receiver takes them in two
 * steps matches at one call per chunk but not when two chunks fit one call. */
START_TEST(test_call_count_mismatch)
{
    static const char xml[] =
        HEAD "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
             "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", "i", 0, "o", 0, 2, -1, -1, 0)
             "</tb>\n</gpu>\n<gpu id=\"1\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
             "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", "i", 0, "o", 0, 1, -1, -1, 0)
             STEP(1, "r", "i", 1, "o", 1, 1, -1, -1, 0) "</tb>\n</gpu>\n</algo>\n";
    struct cs_sched *s = NULL;
    struct cs_xplan *p = NULL;
    struct cs_xplan_sizing sz;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_sched_read_xml_mem(xml, sizeof(xml) - 1, "m.xml", &s, &err), 0);
    ck_assert_int_eq(cs_xplan_build(s, &p, &err), 0);
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
        "<algo name=\"x\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"3\" ngpus=\"2\" coll=\"custom\" inplace=\"0\">\n"
        "<gpu id=\"0\" i_chunks=\"3\" o_chunks=\"3\" s_chunks=\"0\">\n"
        "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", "i", 0, "o", 0, 2, -1, -1, 0)
        STEP(1, "s", "i", 2, "o", 2, 1, -1, -1, 0) "</tb>\n</gpu>\n"
        "<gpu id=\"1\" i_chunks=\"3\" o_chunks=\"3\" s_chunks=\"0\">\n"
        "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", "i", 0, "o", 0, 1, -1, -1, 0)
        STEP(1, "r", "i", 1, "o", 1, 2, -1, -1, 0) "</tb>\n</gpu>\n</algo>\n";
    struct cs_sched *s = NULL;
    struct cs_xplan *p = NULL;
    struct cs_xplan_sizing sz;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_sched_read_xml_mem(xml, sizeof(xml) - 1, "m.xml", &s, &err), 0);
    ck_assert_int_eq(cs_xplan_build(s, &p, &err), 0);
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

/* Reads MANIFEST.tsv's status for a file: 1 OK, 0 check failed, -1 unknown. */
static int manifest_ok(const char *dir, const char *rel)
{
    char path[8192], line[8192];
    FILE *fp;
    int st = -1;

    snprintf(path, sizeof(path), "%s/MANIFEST.tsv", dir);
    fp = fopen(path, "r");
    if (fp == NULL)
        return -1;
    while (fgets(line, sizeof(line), fp)) {
        char *tab = strchr(line, '\t'), *f;

        if (tab == NULL)
            continue;
        *tab = '\0';
        if (strcmp(line, rel) != 0)
            continue;
        f = strchr(tab + 1, '\t'); /* commit */
        f = f ? strchr(f + 1, '\t') : NULL;
        if (f)
            st = strncmp(f + 1, "OK\t", 3) == 0 ? 1 : 0;
        break;
    }
    fclose(fp);
    return st;
}

static int plan_dir(const char *top, const char *sub)
{
    char dir[4096], path[8192], rel[4096], msg[1024];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(dir, sizeof(dir), "%s/msccl-xml%s%s", top, *sub ? "/" : "", sub);
    d = opendir(dir);
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        struct cs_sched *s;
        struct cs_xplan *p;
        long wrong;
        int ok;

        if (l < 5 || strcmp(e->d_name + l - 4, ".xml") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        snprintf(rel, sizeof(rel), "%s%s%s", sub, *sub ? "/" : "", e->d_name);
        s = load(path);
        p = plan_of(s);
        ck_assert_int_eq(p->nranks, s->ngpus);
        ck_assert_int_eq(p->ntbs, (int)(p->ranks[p->nranks - 1].tb_first + p->ranks[p->nranks - 1].ntbs));
        ck_assert_msg(emulate(p, (long long)p->nchunks * 4 * 2, 0, &wrong, msg, sizeof(msg)) == 0,
                      "%s: %s", rel, msg);
        snprintf(dir, sizeof(dir), "%s/msccl-xml", top);
        ok = manifest_ok(dir, rel);
        snprintf(dir, sizeof(dir), "%s/msccl-xml%s%s", top, *sub ? "/" : "", sub);
        if (cs_xplan_has_reference(p) && ok == 1)
            ck_assert_msg(wrong == 0, "%s: %ld wrong: %s", rel, wrong, msg);
        if (cs_xplan_has_reference(p) && ok == 0)
            ck_assert_msg(wrong > 0, "%s: the manifest says Check() fails, the emulation agrees not", rel);
        cs_xplan_free(p);
        cs_sched_free(s);
        n++;
    }
    closedir(d);
    return n;
}

/* Every shared reference XML compiles; its emulation finishes; its result agrees with the
 * MANIFEST's msccl-tools Check() verdict. */
START_TEST(test_shared_corpus)
{
    const char *top = test_shared_data();
    int n;

    ck_assert_ptr_nonnull(top);
    n = plan_dir(top, "") + plan_dir(top, "fixed-example") + plan_dir(top, "azure-msccl-tools");
    ck_assert_int_gt(n, 50);
}
END_TEST

/* DEADLOCK_SCAN.tsv (an independent untimed replay of the executor's FIFO rules): the emulation
 * finishes at each LL schedule's last good size and deadlocks at its first bad one. */
START_TEST(test_shared_deadlock_scan)
{
    static const char *files[] = {
        "allreduce_a100_pcie_hierarchical.8gpu.1inst.LL.xml",
        "fixed-example/allreduce_a100_pcie_hierarchical_fixed.8gpu.1inst.LL.xml",
        "fixed-example/allreduce_a100_pcie_hierarchical_fixed.8gpu.2inst.LL.xml",
    };
    const char *top = test_shared_data();
    char path[8192], msg[1024];

    ck_assert_ptr_nonnull(top);
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        struct cs_sched *s;
        struct cs_xplan *p;
        long wrong;

        snprintf(path, sizeof(path), "%s/msccl-xml/%s", top, files[i]);
        s = load(path);
        p = plan_of(s);
        ck_assert_msg(emulate(p, 1048576, 0, &wrong, msg, sizeof(msg)) == 0, "%s: %s", files[i], msg);
        ck_assert_int_eq(emulate(p, 4194304, 0, &wrong, msg, sizeof(msg)), CS_ERR_SIM);
        ck_assert_ptr_nonnull(strstr(msg, "deadlock"));
        cs_xplan_free(p);
        cs_sched_free(s);
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_ring_plan_shape, 1},
        {test_hierarchical_nops_and_fusion, 1},
        {test_sizing, 1},
        {test_reference_values, 1},
        {test_emulate_reference_xmls, 1},
        {test_emulate_seed_is_wrong, 1},
        {test_custom_has_no_reference, 1},
        {test_bad_plans, (int)(sizeof(bad_cases) / sizeof(bad_cases[0]))},
        {test_call_count_mismatch, 1},
        {test_call_size_mismatch, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_shared_corpus, 1},
        {test_shared_deadlock_scan, 1},
        {NULL, 0},
    };

    return test_run("xplan", 120, tests, shared);
}
