/* check_gen.c: the native generators: the seed reproduced exactly, the corrected hierarchical
 * algorithm, ring and all-pairs over a grid of parameters and collectives, NCCL's schedule per
 * size, and their bad parameters. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "gen.h"
#include "lower.h"
#include "runner.h"
#include "schedcheck.h"
#include "testutil.h"
#include "verify.h"
#include "xml.h"

static struct cs_sched *gen(const char *spec)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_gen_from_spec(spec, &s, &err) == 0, "%s: %s", spec, err.msg);
    return s;
}

/* s's <algo> header is the one the executor requires: outofplace the complement of inplace, and
 * the window min..max bytes. */
static void assert_header(const struct cs_sched *s, long long min, long long max)
{
    ck_assert(s->has_outofplace && s->has_min_bytes && s->has_max_bytes);
    ck_assert_int_eq(s->outofplace, !s->inplace);
    ck_assert_int_eq(s->min_bytes, min);
    ck_assert_int_eq(s->max_bytes, max);
}

/* Generate from spec and compare with the reference file; 1 when the file is absent. A reference
 * as microsoft/msccl-tools writes it lacks outofplace, minBytes and maxBytes: once the generated
 * header is checked, it gets the same values, and everything else is compared. */
static int compare_ref(const char *spec, const char *path)
{
    struct cs_sched *a, *b = NULL;
    struct cs_sched_diff d;
    struct cs_error err;

    if (access(path, R_OK) != 0)
        return 1;
    cs_error_init(&err);
    ck_assert_msg(cs_sched_read_xml(path, &b, &err) == 0, "%s: %s", path, err.msg);
    a = gen(spec);
    assert_header(a, 0, 0);
    if (!b->has_outofplace && !b->has_min_bytes && !b->has_max_bytes) {
        b->has_outofplace = b->has_min_bytes = b->has_max_bytes = 1;
        b->outofplace = !b->inplace;
        b->min_bytes = b->max_bytes = 0;
    }
    ck_assert_msg(cs_sched_compare(a, b, &d) == 0, "%s vs %s: gpu %d tb %d step %d %s: %s vs %s",
                  spec, path, d.gpu, d.tb, d.step, d.attr, d.a, d.b);
    cs_sched_free(a);
    cs_sched_free(b);
    return 0;
}

static const int ref_sets[][2] = {{4, 1}, {4, 2}, {8, 1}, {8, 2}, {8, 4}, {16, 1}, {16, 2}};
static const char *const protos[] = {"LL", "LL128", "Simple"};

/* For each of the 21 seed XMLs, as microsoft/msccl-tools and as Azure/msccl-tools (with the
 * executor's header attributes) write it: gen --msccl-tools-compat equals it after
 * normalisation. */
START_TEST(test_compat_equals_references)
{
    const char *data = test_shared_data();
    int n = 0;

    ck_assert_ptr_nonnull(data);
    for (size_t k = 0; k < sizeof(ref_sets) / sizeof(ref_sets[0]); k++)
        for (int p = 0; p < 3; p++)
            for (int azure = 0; azure < 2; azure++) {
                char spec[128], path[8192];

                snprintf(spec, sizeof(spec),
                         "hierarchical:gpus=%d,instances=%d,protocol=%s,compat=1", ref_sets[k][0],
                         ref_sets[k][1], protos[p]);
                snprintf(path, sizeof(path),
                         "%s/msccl-xml/%sallreduce_a100_pcie_hierarchical.%dgpu.%dinst.%s.xml",
                         data, azure ? "azure-msccl-tools/" : "", ref_sets[k][0], ref_sets[k][1],
                         protos[p]);
                n += compare_ref(spec, path) == 0;
            }
    ck_assert_int_eq(n, 42);
}
END_TEST

/* v1, the corrected seed, equals msccl-tools' output of the patched seed (fixed-example/). */
START_TEST(test_corrected_equals_fixed_example)
{
    const char *data = test_shared_data();
    int n = 0;

    ck_assert_ptr_nonnull(data);
    for (size_t k = 0; k < sizeof(ref_sets) / sizeof(ref_sets[0]); k++)
        for (int p = 0; p < 3; p++) {
            char spec[128], path[8192];

            snprintf(spec, sizeof(spec), "hierarchical:gpus=%d,instances=%d,protocol=%s,variant=v1",
                     ref_sets[k][0], ref_sets[k][1], protos[p]);
            snprintf(path, sizeof(path),
                     "%s/msccl-xml/fixed-example/"
                     "allreduce_a100_pcie_hierarchical_fixed.%dgpu.%dinst.%s.xml",
                     data, ref_sets[k][0], ref_sets[k][1], protos[p]);
            n += compare_ref(spec, path) == 0;
        }
    ck_assert_int_eq(n, 21);
}
END_TEST

/* The small reference copy in tests/data works without the shared folder. */
START_TEST(test_compat_local_reference)
{
    ck_assert_int_eq(
        compare_ref("hierarchical:gpus=4,instances=1,protocol=LL,compat=1",
                    test_data("msccl-xml/allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml")),
        0);
    ck_assert_int_eq(
        compare_ref(
            "hierarchical:gpus=4,instances=1,protocol=LL,compat=1",
            test_data("msccl-xml/azure.allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml")),
        0);
    ck_assert_int_eq(
        compare_ref(
            "hierarchical:gpus=4,instances=1,protocol=LL,variant=v1",
            test_data("msccl-xml/allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml")),
        0);
}
END_TEST

/* verify's verdict on the generator's structure and data. Co-residency is left out: 4 instances of
 * the larger grids have up to 128 threadblocks per GPU, more than an A100 holds (check_verify
 * tests that error); they are correct schedules for a GPU of that many SMs. */
static enum cs_verify_verdict verdict(const struct cs_sched *s, char *first, size_t len)
{
    struct cs_verify_opts o = {.max_diags = 4, .runtime = CS_VERIFY_ANY, .gpu_sms = -1};
    struct cs_verify_result *res = NULL;
    enum cs_verify_verdict v;

    ck_assert_int_eq(cs_verify_check_opts(s, &o, &res), 0);
    v = res->verdict;
    snprintf(first, len, "%s", res->ndiags ? res->diags[0].msg : "");
    cs_verify_result_free(res);
    return v;
}

/* Within the runtime's limits, runs to completion with the right sum in the independent replay,
 * and passes collsim verify. */
static void assert_correct(const char *spec)
{
    struct cs_sched *s = gen(spec);
    struct cs_error err;
    char why[512];

    cs_error_init(&err);
    ck_assert_msg(cs_sched_check_limits(s, &err) == 0, "%s: %s", spec, err.msg);
    ck_assert_msg(sc_check_allreduce(s, why, sizeof(why)) == 0, "%s: %s", spec, why);
    ck_assert_msg(verdict(s, why, sizeof(why)) == CS_VERIFY_OK, "%s: verify: %s", spec, why);
    cs_sched_free(s);
}

/* Within the runtime's limits and correct under verify (for any collective; the independent
 * replay checks AllReduce only). */
static void assert_correct_coll(const char *spec)
{
    struct cs_sched *s = gen(spec);
    struct cs_error err;
    char why[512];

    cs_error_init(&err);
    ck_assert_msg(cs_sched_check_limits(s, &err) == 0, "%s: %s", spec, err.msg);
    ck_assert_msg(verdict(s, why, sizeof(why)) == CS_VERIFY_OK, "%s: verify: %s", spec, why);
    cs_sched_free(s);
}

/* Why v1 drops msccl-tools' dependence nops: with them it has a cycle. */
START_TEST(test_corrected_with_nops_deadlocks)
{
    struct cs_sched *s = gen("hierarchical:gpus=8,nops=1,variant=v1");
    char why[512];

    ck_assert_int_eq(verdict(s, why, sizeof(why)), CS_VERIFY_INVALID);
    ck_assert_msg(strstr(why, "cycle") != NULL, "%s", why);
    ck_assert_int_ne(sc_check_allreduce(s, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "deadlock") != NULL, "%s", why);
    cs_sched_free(s);
    /* and the seed without them is still wrong, only differently ordered */
    s = gen("hierarchical:gpus=8,compat=1,nops=2");
    ck_assert_int_eq(verdict(s, why, sizeof(why)), CS_VERIFY_WRONG);
    cs_sched_free(s);
}
END_TEST

/* The seed is wrong, and the replay helper sees it (so the grid below can fail). */
START_TEST(test_compat_is_wrong)
{
    struct cs_sched *s = gen("hierarchical:gpus=8,compat=1");
    char why[512];

    ck_assert_int_ne(sc_check_allreduce(s, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "does not hold") != NULL, "%s", why);
    ck_assert_int_eq(verdict(s, why, sizeof(why)), CS_VERIFY_WRONG);
    cs_sched_free(s);
}
END_TEST

static void assert_usage_error(const char *spec, const char *needle)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_gen_from_spec(spec, &s, &err), CS_ERR_USAGE);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "%s: '%s' lacks '%s'", spec, err.msg, needle);
}

/* The default's threadblocks per GPU: a send and a receive tb per peer and instance. */
static int split_tbs(int g, int c, int i)
{
    return 2 * (g / c + c - 2) * i;
}

/* Hierarchical, the default where its tbs stay resident on an A100 (refused with the count
 * beyond) and v1 (on a GPU of 128 SMs, which holds its 4-instance layouts): every even G from 4 to
 * 64 with 2 columns, 1 to 4 instances. */
START_TEST(test_hierarchical_grid_two_columns)
{
    int g = 4 + 2 * _i;

    for (int i = 1; i <= 4; i++) {
        char spec[128];

        snprintf(spec, sizeof(spec), "hierarchical:gpus=%d,instances=%d", g, i);
        if (split_tbs(g, 2, i) <= CS_VERIFY_GPU_SMS)
            assert_correct(spec);
        else
            assert_usage_error(spec,
                               split_tbs(g, 2, i) > 128 ? "threadblocks per GPU" : "co-resident");
        snprintf(spec, sizeof(spec), "hierarchical:gpus=%d,instances=%d,variant=v1,sms=128", g, i);
        assert_correct(spec);
    }
}
END_TEST

/* Other column counts dividing G with at least 2 rows, instances varying, both variants. */
START_TEST(test_hierarchical_grid_columns)
{
    int g = 4 + 2 * _i;

    for (int c = 3; c <= g / 2; c++) {
        if (g % c)
            continue;
        char spec[128];
        /* instances 1 to 4 over the grid; the default at most as many as stay resident */
        int i = 1 + (g / 2 + c) % 4;

        while (split_tbs(g, c, i) > CS_VERIFY_GPU_SMS)
            i--;
        snprintf(spec, sizeof(spec), "hierarchical:gpus=%d,columns=%d,instances=%d", g, c, i);
        assert_correct(spec);
        snprintf(spec, sizeof(spec),
                 "hierarchical:gpus=%d,columns=%d,instances=%d,variant=v1,sms=128", g, c,
                 1 + (g / 2 + c) % 4);
        assert_correct(spec);
    }
}
END_TEST

/* The default's shape: on every GPU each tb either only receives (r steps, from one peer) or
 * never receives, so every connection's receiver drains without waiting on a send; 2 x peers
 * tbs. v1 at 8 GPUs has a tb that sends before it receives on the same connection. */
START_TEST(test_hierarchical_split_shape)
{
    static const int shapes[][2] = {{4, 2}, {8, 2}, {16, 4}, {64, 2}, {24, 3}};

    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        char spec[128];
        struct cs_sched *s;
        int g = shapes[k][0], c = shapes[k][1];

        snprintf(spec, sizeof(spec), "hierarchical:gpus=%d,columns=%d,protocol=LL", g, c);
        s = gen(spec);
        for (int r = 0; r < s->ngpus; r++) {
            const struct cs_gpu *gpu = &s->gpus[r];
            int recv_tbs = 0;

            ck_assert_int_eq(gpu->ntbs, split_tbs(g, c, 1));
            for (int t = 0; t < gpu->ntbs; t++) {
                const struct cs_tb *tb = &gpu->tbs[t];

                ck_assert_msg(tb->send < 0 || tb->recv < 0, "%s gpu %d tb %d sends and receives",
                              spec, r, t);
                if (tb->recv < 0)
                    continue;
                recv_tbs++;
                /* receives, waiting at most on a send tb of the own GPU (a send that the data
                 * received depends on anyway) */
                for (int st = 0; st < tb->nsteps; st++) {
                    const struct cs_step *x = &tb->steps[st];

                    ck_assert_msg(x->type == CS_STEP_R || x->type == CS_STEP_NOP,
                                  "%s gpu %d tb %d step %d", spec, r, t, st);
                    ck_assert_msg(x->depid < 0 || gpu->tbs[x->depid].recv < 0,
                                  "%s gpu %d tb %d step %d waits on a receiving tb", spec, r, t,
                                  st);
                }
            }
            ck_assert_int_eq(recv_tbs, g / c + c - 2);
        }
        cs_sched_free(s);
    }
    {
        struct cs_sched *s = gen("hierarchical:gpus=8,protocol=LL,variant=v1");
        int both = 0;

        for (int t = 0; t < s->gpus[0].ntbs; t++)
            both += s->gpus[0].tbs[t].send >= 0 && s->gpus[0].tbs[t].send == s->gpus[0].tbs[t].recv;
        ck_assert_int_gt(both, 0);
        cs_sched_free(s);
    }
}
END_TEST

/* Every generator refuses more tbs per GPU than an A100 keeps resident, with the count and the
 * limit; sms raises the limit. */
START_TEST(test_residency)
{
    struct cs_sched *s;

    assert_usage_error("hierarchical:gpus=64,instances=2", "128 threadblocks; at most 108");
    assert_usage_error("allpairs:gpus=64,instances=2", "128 threadblocks; at most 108");
    assert_usage_error("hierarchical:gpus=16,instances=4,compat=1",
                       "128 threadblocks; at most 108");
    assert_usage_error("hierarchical:gpus=8,sms=0", "at least 1");
    assert_usage_error("hierarchical:gpus=8,sms=7", "at most 7 are co-resident");
    s = gen("allpairs:gpus=64,instances=2,sms=132");
    ck_assert_int_eq(s->gpus[0].ntbs, 128);
    cs_sched_free(s);
    s = gen("hierarchical:gpus=64,instances=2,sms=132");
    ck_assert_int_eq(s->gpus[0].ntbs, 128);
    cs_sched_free(s);
}
END_TEST

/* verify's first error under the executor, with its verdict. */
static enum cs_verify_verdict executor_verdict(const struct cs_sched *s, char *first, size_t len)
{
    struct cs_verify_opts o = {.max_diags = 4, .runtime = CS_VERIFY_EXECUTOR, .gpu_sms = -1};
    struct cs_verify_result *res = NULL;
    enum cs_verify_verdict v;

    ck_assert_int_eq(cs_verify_check_opts(s, &o, &res), 0);
    v = res->verdict;
    first[0] = '\0';
    for (int k = 0; k < res->ndiags && !first[0]; k++)
        if (res->diags[k].severity == CS_VERIFY_ERROR)
            snprintf(first, len, "%s", res->diags[k].msg);
    cs_verify_result_free(res);
    return v;
}

/* The executor's 64 steps per tb bound the runtime, not the generators: a ring of G > 64 GPUs has
 * tbs of G steps, written with a warning naming the tb, the count and both limits; verify accepts
 * it for the legacy runtime up to 256 (a warning) and refuses it under the executor, and predict's
 * check lets it through as a what-if where the one for the harness does not. */
START_TEST(test_steps_what_if)
{
    struct cs_sched *s = gen("ring:gpus=64,protocol=LL");
    struct cs_error err;
    char buf[512];

    ck_assert_ptr_null(cs_sched_steps_warning(s, buf, sizeof(buf))); /* 64 steps: the limit */
    cs_sched_free(s);
    assert_correct("ring:gpus=100,channels=2");
    s = gen("ring:gpus=100");
    ck_assert_ptr_nonnull(cs_sched_steps_warning(s, buf, sizeof(buf)));
    ck_assert_msg(strstr(buf, "gpu 0 tb 0 has 100 steps") && strstr(buf, "limit of 64") &&
                      strstr(buf, "legacy runtime takes 256"),
                  "%s", buf);
    ck_assert_int_eq(executor_verdict(s, buf, sizeof(buf)), CS_VERIFY_INVALID);
    ck_assert_msg(strstr(buf, "tb 0 has 100 steps") && strstr(buf, "limit of 64"), "%s", buf);
    cs_sched_free(s);
    s = gen("ring:gpus=300,coll=allgather");
    ck_assert_ptr_nonnull(cs_sched_steps_warning(s, buf, sizeof(buf)));
    ck_assert_msg(strstr(buf, "has 300 steps") && strstr(buf, "256 (legacy)"), "%s", buf);
    cs_error_init(&err);
    ck_assert_int_eq(cs_verify_refuse_invalid(s, "ring300", &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "has 300 steps"), "%s", err.msg);
    ck_assert_int_eq(cs_verify_refuse_invalid_steps(s, "ring300", 1, &err), 0);
    cs_sched_free(s);
}
END_TEST

/* Hierarchical grids whose R-1 + C-1 peers exceed the runtime's 32 connections per channel: the
 * column peers on one channel, the row peers on the next, every tb within 64 steps (the row
 * reductions on the second column peer's send tb), correct under verify and the independent
 * replay; v1 spreads its peers the same way. */
START_TEST(test_hierarchical_spread)
{
    static const int shapes[][2] = {{400, 20}, {66, 2}, {66, 33}, {384, 16}};

    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        int g = shapes[k][0], c = shapes[k][1], r = g / c;
        char spec[128], buf[512];
        struct cs_sched *s;

        snprintf(spec, sizeof(spec), "hierarchical:gpus=%d,columns=%d,sms=1000", g, c);
        s = gen(spec);
        ck_assert_int_eq(s->nchannels, r - 1 + c - 1 > 32 ? 2 : 1);
        for (int t = 0; t < s->gpus[0].ntbs; t++) {
            const struct cs_tb *tb = &s->gpus[0].tbs[t];
            int peer = tb->send >= 0 ? tb->send : tb->recv;

            /* gpu 0's column peers are 1..R-1 */
            ck_assert_int_eq(tb->chan, s->nchannels == 2 && peer >= r ? 1 : 0);
        }
        /* a second column peer takes the row reductions: within 64 steps */
        ck_assert_msg((cs_sched_steps_warning(s, buf, sizeof(buf)) == NULL) == (r > 2), "%s: %s",
                      spec, r > 2 ? buf : "no warning");
        ck_assert_msg(verdict(s, buf, sizeof(buf)) == CS_VERIFY_OK, "%s: %s", spec, buf);
        ck_assert_msg(g > 400 || sc_check_allreduce(s, buf, sizeof(buf)) == 0, "%s: %s", spec, buf);
        cs_sched_free(s);
    }
    assert_correct("hierarchical:gpus=400,columns=20,variant=v1,sms=1000");
}
END_TEST

/* 1024 GPUs: the 32 x 32 grid's 124 threadblocks per GPU are refused on an A100's 108 SMs, before
 * the lowering, with the count and the limit; 132 SMs (Hopper) hold them. */
START_TEST(test_hierarchical_1024)
{
    struct cs_sched *s;
    char buf[512];

    assert_usage_error("hierarchical:gpus=1024,columns=32",
                       "124 threadblocks; at most 108 are co-resident");
    s = gen("hierarchical:gpus=1024,columns=32,sms=132");
    ck_assert_int_eq(s->ngpus, 1024);
    ck_assert_int_eq(s->gpus[1023].ntbs, 124);
    ck_assert_int_eq(s->nchannels, 2);
    ck_assert_ptr_null(cs_sched_steps_warning(s, buf, sizeof(buf)));
    cs_sched_free(s);
}
END_TEST

/* Ring and all-pairs for every G from 2 to 64; channels and instances vary with G. */
START_TEST(test_ring_grid)
{
    int g = 2 + _i;
    char spec[128];

    snprintf(spec, sizeof(spec), "ring:gpus=%d", g);
    assert_correct(spec);
    snprintf(spec, sizeof(spec), "ring:gpus=%d,channels=%d,instances=%d", g, 1 + g % 4, 1 + g % 2);
    assert_correct(spec);
}
END_TEST

/* The XML of s, in a new string. */
static char *xml_of(const struct cs_sched *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(cs_sched_write_xml(s, fp), 0);
    ck_assert_int_eq(fclose(fp), 0);
    return buf;
}

/* The ring written out directly is the lowering of the ring's program: for every collective,
 * GPU count (both sides of the split above 32 GPUs), rings, instances, GPUs per node and ring
 * orders given (each ring a shuffle of the GPUs), the two schedules are equal and write the same
 * XML byte for byte. */
/* 0..n-1 in a random order: Fisher-Yates with a fixed LCG from *seed. */
static void shuffled(int *a, int n, unsigned *seed)
{
    for (int p = 0; p < n; p++)
        a[p] = p;
    for (int p = n - 1; p > 0; p--) {
        int j, t;

        *seed = *seed * 1103515245u + 12345u;
        j = (int)((*seed >> 16) % (unsigned)(p + 1));
        t = a[p];
        a[p] = a[j];
        a[j] = t;
    }
}

START_TEST(test_ring_direct_equals_lowered)
{
    static const enum cs_coll colls[] = {CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER,
                                         CS_COLL_REDUCE_SCATTER};
    static const int gpus[] = {2, 3, 4, 5, 8, 12, 16, 32, 33, 34, 40};
    int G = gpus[_i], compared = 0;
    unsigned seed = 12345u + (unsigned)G;
    int *rings = malloc(3 * (size_t)G * sizeof(*rings));

    ck_assert_ptr_nonnull(rings);
    for (int r = 0; r < 3; r++)
        shuffled(rings + r * G, G, &seed);
    for (size_t c = 0; c < sizeof(colls) / sizeof(colls[0]); c++)
        for (int K = 1; K <= 3; K++)
            for (int I = 1; I <= 2; I++)
                for (int layout = 0; layout < 4; layout++) {
                    struct cs_gen_opts o = {.gpus = G,
                                            .channels = K,
                                            .instances = I,
                                            .coll = colls[c],
                                            .proto = CS_PROTO_LL128,
                                            .sms = 1024};
                    struct cs_sched *a = NULL, *b = NULL;
                    struct cs_sched_diff d;
                    struct cs_error ea, eb;
                    int ra, rb;
                    char *xa, *xb;

                    if (layout == 1 && G % 4 == 0)
                        o.per_node = 4;
                    else if (layout == 2)
                        o.rings = rings, o.nrings = 1;
                    else if (layout == 3)
                        o.rings = rings, o.nrings = 3;
                    else if (layout != 0)
                        continue;
                    cs_error_init(&ea);
                    cs_error_init(&eb);
                    ra = cs_gen_ring(&o, &a, &ea);
                    rb = cs_gen_ring_lowered(&o, &b, &eb);
                    ck_assert_int_eq(ra, rb);
                    ck_assert_str_eq(ea.msg, eb.msg);
                    if (ra != 0)
                        continue;
                    ck_assert_msg(cs_sched_compare(a, b, &d) == 0,
                                  "coll %d G %d K %d I %d layout %d: gpu %d tb %d step %d %s: %s "
                                  "vs %s",
                                  (int)colls[c], G, K, I, layout, d.gpu, d.tb, d.step, d.attr, d.a,
                                  d.b);
                    xa = xml_of(a);
                    xb = xml_of(b);
                    ck_assert_msg(strcmp(xa, xb) == 0, "coll %d G %d K %d I %d layout %d: XML",
                                  (int)colls[c], G, K, I, layout);
                    free(xa);
                    free(xb);
                    cs_sched_free(a);
                    cs_sched_free(b);
                    compared++;
                }
    ck_assert_int_gt(compared, 0);
    free(rings);
}
END_TEST

/* A ring written by its representatives (reps): GPUs 0..R-1 as the whole schedule's, R the
 * largest divisor of G below it, the others empty; where the proof accepts a shift s, the whole
 * schedule's GPU g is GPU g mod s with its peers shifted by g - g mod s (steps equal but for the
 * chunk offsets); where it refuses (rings in a random order), the message says so. */
START_TEST(test_ring_reps)
{
    static const enum cs_coll colls[] = {CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER,
                                         CS_COLL_REDUCE_SCATTER};
    static const int gpus[] = {4, 6, 8, 12, 16, 64};
    int G = gpus[_i], R = 1, proven = 0, refused = 0;
    int *rings = malloc((size_t)G * sizeof(*rings));
    unsigned seed = 777u + (unsigned)G;

    ck_assert_ptr_nonnull(rings);
    for (int r = 1; r < G; r++)
        R = G % r == 0 ? r : R;
    shuffled(rings, G, &seed);
    for (size_t c = 0; c < sizeof(colls) / sizeof(colls[0]); c++)
        for (int K = 1; K <= 2; K++)
            for (int I = 1; I <= 2; I++)
                for (int layout = 0; layout < 3; layout++) {
                    struct cs_gen_opts o = {.gpus = G,
                                            .channels = K,
                                            .instances = I,
                                            .coll = colls[c],
                                            .proto = CS_PROTO_LL,
                                            .sms = 1024};
                    struct cs_sched *w = NULL, *r = NULL;
                    struct cs_error ew, er;
                    int rc, sh;

                    if (layout == 1 && G % 4 == 0)
                        o.per_node = 4;
                    else if (layout == 2)
                        o.rings = rings, o.nrings = 1;
                    else if (layout != 0)
                        continue;
                    cs_error_init(&ew);
                    cs_error_init(&er);
                    ck_assert_int_eq(cs_gen_ring(&o, &w, &ew), 0);
                    o.reps = CS_GEN_REPS_ALWAYS;
                    rc = cs_gen_ring(&o, &r, &er);
                    if (rc != 0) {
                        ck_assert_int_eq(rc, CS_ERR_USAGE);
                        ck_assert_msg(strstr(er.msg, "cannot be written by its representatives"),
                                      "%s", er.msg);
                        ck_assert_int_ne(layout, 0); /* the plain ring always folds */
                        refused++;
                        cs_sched_free(w);
                        continue;
                    }
                    sh = r->rep_shift;
                    ck_assert_int_eq(r->rep_gpus, R);
                    ck_assert(sh >= 1 && R % sh == 0);
                    ck_assert_int_eq(r->ngpus, G);
                    ck_assert_int_eq(r->nchunksperloop, w->nchunksperloop);
                    for (int g = 0; g < G; g++) {
                        const struct cs_gpu *a = &w->gpus[g], *b = &r->gpus[g];
                        const struct cs_gpu *rep = &w->gpus[g % sh];
                        int by = g - g % sh;

                        ck_assert_int_eq(b->ntbs, g < R ? a->ntbs : 0);
                        for (int t = 0; t < b->ntbs; t++) {
                            ck_assert_int_eq(b->tbs[t].nsteps, a->tbs[t].nsteps);
                            ck_assert(memcmp(b->tbs[t].steps, a->tbs[t].steps,
                                             (size_t)a->tbs[t].nsteps * sizeof(struct cs_step)) ==
                                      0);
                            ck_assert_int_eq(b->tbs[t].send, a->tbs[t].send);
                            ck_assert_int_eq(b->tbs[t].chan, a->tbs[t].chan);
                        }
                        /* the whole schedule is invariant under the shift proven */
                        ck_assert_int_eq(a->ntbs, rep->ntbs);
                        for (int t = 0; t < rep->ntbs; t++) {
                            const struct cs_tb *x = &rep->tbs[t], *y = NULL;

                            for (int u = 0; u < a->ntbs; u++)
                                if (a->tbs[u].chan == x->chan)
                                    y = &a->tbs[u];
                            ck_assert_ptr_nonnull(y);
                            ck_assert_int_eq(y->send, (x->send + by) % G);
                            ck_assert_int_eq(y->recv, (x->recv + by) % G);
                            ck_assert_int_eq(y->nsteps, x->nsteps);
                            for (int h = 0; h < x->nsteps; h++) {
                                ck_assert_int_eq(y->steps[h].type, x->steps[h].type);
                                ck_assert_int_eq(y->steps[h].cnt, x->steps[h].cnt);
                                ck_assert_int_eq(y->steps[h].deps, x->steps[h].deps);
                                ck_assert_int_eq(y->steps[h].hasdep, x->steps[h].hasdep);
                            }
                        }
                    }
                    proven++;
                    cs_sched_free(w);
                    cs_sched_free(r);
                }
    ck_assert_int_gt(proven, 0);
    if (G > 4)
        ck_assert_int_gt(refused, 0);
    free(rings);
}
END_TEST

/* Past 1024 GPUs and CS_GEN_MAX_STEPS a ring goes by its representatives (AUTO), to 8192 GPUs. */
START_TEST(test_ring_reps_auto)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(
        cs_gen_from_spec_reps("ring:gpus=4096,protocol=Simple", CS_GEN_REPS_AUTO, &s, &err), 0);
    ck_assert_int_eq(s->ngpus, 4096);
    ck_assert_int_eq(s->rep_gpus, 128); /* 128 x 2 tbs x 4096 steps = 2^20 */
    ck_assert_int_eq(s->rep_shift, 1);
    ck_assert_int_eq(s->gpus[127].ntbs, 2);
    ck_assert_int_eq(s->gpus[128].ntbs, 0);
    cs_sched_free(s);
    /* within the limit, AUTO writes every GPU */
    ck_assert_int_eq(cs_gen_from_spec_reps("ring:gpus=64", CS_GEN_REPS_AUTO, &s, &err), 0);
    ck_assert_int_eq(s->rep_gpus, 0);
    ck_assert_int_eq(s->gpus[63].ntbs, 2);
    cs_sched_free(s);
    /* other generators never */
    ck_assert_int_eq(cs_gen_from_spec_reps("allpairs:gpus=8", CS_GEN_REPS_ALWAYS, &s, &err), 0);
    ck_assert_int_eq(s->rep_gpus, 0);
    cs_sched_free(s);
    s = NULL;
    ck_assert_int_eq(cs_gen_from_spec_reps("ring:gpus=8193", CS_GEN_REPS_AUTO, &s, &err),
                     CS_ERR_USAGE);
    ck_assert_msg(strstr(err.msg, "at most 8192") != NULL, "%s", err.msg);
    cs_error_init(&err);
    ck_assert_int_eq(cs_gen_from_spec_reps("hierarchical:gpus=2048", CS_GEN_REPS_AUTO, &s, &err),
                     CS_ERR_USAGE);
    ck_assert_msg(strstr(err.msg, "at most 1024") != NULL, "%s", err.msg);
    ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_allpairs_grid)
{
    int g = 2 + _i;
    char spec[128];

    snprintf(spec, sizeof(spec), "allpairs:gpus=%d,instances=%d,sms=128", g, 1 + g % 2);
    assert_correct(spec);
}
END_TEST

/* NCCL's ring shape: per tb s, rrs..., rrcs, rcs..., r. */
START_TEST(test_ring_shape)
{
    struct cs_sched *s = gen("ring:gpus=8,channels=4,protocol=LL");
    static const enum cs_step_type want[] = {CS_STEP_S,   CS_STEP_RRS, CS_STEP_RRS, CS_STEP_RRS,
                                             CS_STEP_RRS, CS_STEP_RRS, CS_STEP_RRS, CS_STEP_RRCS,
                                             CS_STEP_RCS, CS_STEP_RCS, CS_STEP_RCS, CS_STEP_RCS,
                                             CS_STEP_RCS, CS_STEP_RCS, CS_STEP_R};

    ck_assert_int_eq(s->nchannels, 4);
    ck_assert_int_eq(s->nchunksperloop, 32);
    ck_assert_int_eq(s->proto, CS_PROTO_LL);
    for (int g = 0; g < 8; g++) {
        ck_assert_int_eq(s->gpus[g].ntbs, 4);
        for (int t = 0; t < 4; t++) {
            const struct cs_tb *tb = &s->gpus[g].tbs[t];

            ck_assert_int_eq(tb->send, (g + 1) % 8);
            ck_assert_int_eq(tb->recv, (g + 7) % 8);
            ck_assert_int_eq(tb->nsteps, 15);
            for (int k = 0; k < 15; k++)
                ck_assert_int_eq(tb->steps[k].type, want[k]);
        }
    }
    cs_sched_free(s);
}
END_TEST

/* per_node: every ring is correct, keeps NCCL's shape, and ring k leaves node j from GPU
 * j*N + (k + N - 1) mod N: the rings cross nodes through different GPUs. */
START_TEST(test_ring_per_node)
{
    static const int sets[][3] = {{16, 16, 8}, {16, 3, 8}, {8, 4, 4}, {12, 5, 4}, {64, 4, 8}};

    for (unsigned i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        int G = sets[i][0], K = sets[i][1], N = sets[i][2];
        char spec[128];
        struct cs_sched *s;

        snprintf(spec, sizeof(spec), "ring:gpus=%d,channels=%d,per_node=%d", G, K, N);
        assert_correct(spec);
        s = gen(spec);
        for (int g = 0; g < G; g++) {
            int crossings = 0;

            for (int t = 0; t < s->gpus[g].ntbs; t++) {
                const struct cs_tb *tb = &s->gpus[g].tbs[t];
                int k = tb->chan % K, last = (k + N - 1) % N;

                /* the tb's ring neighbours: the next GPU in its node, or the next node's first */
                if (g % N == last) {
                    ck_assert_int_eq(tb->send, (g / N + 1) % (G / N) * N + k % N);
                    crossings++;
                } else {
                    ck_assert_int_eq(tb->send, g / N * N + (g % N + 1) % N);
                }
            }
            /* GPU g leaves its node on the rings k with k = g + 1 mod N: K/N of them, rounded
             * up (two tbs per ring above 32 GPUs, one per phase) */
            ck_assert_int_le(crossings, (K + N - 1) / N * (G > 32 ? 2 : 1));
        }
        cs_sched_free(s);
    }
}
END_TEST

/* AllGather, ReduceScatter and AllToAll of ring and all-pairs for 2 to 64 GPUs: within the
 * runtime's limits, and verify finds structure and data correct (each collective's postcondition);
 * ring also with 2 rings per node pair and 2 instances. */
START_TEST(test_coll_grid)
{
    static const int gpus[] = {2, 3, 4, 8, 16, 64};
    static const char *const colls[] = {"allgather", "reducescatter", "alltoall"};
    static const char *const extra[] = {"", ",instances=2", ",channels=2,instances=2"};

    for (size_t c = 0; c < sizeof(colls) / sizeof(colls[0]); c++)
        for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++)
            for (size_t x = 0; x < sizeof(extra) / sizeof(extra[0]); x++)
                for (int ring = 0; ring < 2; ring++) {
                    char spec[128];
                    struct cs_sched *s;

                    if (ring ? c == 2 : x == 2) /* no ring AllToAll; channels are ring's */
                        continue;
                    /* all-pairs at 64 GPUs x 2 instances has 126 tbs per GPU: an H100's 132
                     * SMs keep them resident, an A100's 108 do not (gen refuses) */
                    snprintf(spec, sizeof(spec), "%s:gpus=%d,coll=%s%s%s",
                             ring ? "ring" : "allpairs", gpus[g], colls[c], extra[x],
                             !ring && gpus[g] == 64 && x == 1 ? ",sms=132" : "");
                    s = gen(spec);
                    ck_assert_msg(s->coll == cs_gen_coll_parse(colls[c]), "%s", spec);
                    cs_sched_free(s);
                    assert_correct_coll(spec);
                }
}
END_TEST

/* verify sees a wrong result of a generated collective (so the grid above can fail): the last
 * receive of ring AllGather's GPU 0 written one chunk off, AllToAll's local copy into the wrong
 * output chunk. */
START_TEST(test_coll_wrong_seen)
{
    static const char *const specs[] = {"ring:gpus=8,coll=allgather",
                                        "allpairs:gpus=4,coll=alltoall"};

    for (int i = 0; i < 2; i++) {
        struct cs_sched *s = gen(specs[i]);
        struct cs_step *last = NULL;
        char why[512];

        for (int t = 0; t < s->gpus[0].ntbs; t++)
            for (int k = 0; k < s->gpus[0].tbs[t].nsteps; k++) {
                struct cs_step *st = &s->gpus[0].tbs[t].steps[k];

                if (st->type == (i == 0 ? CS_STEP_R : CS_STEP_CPY))
                    last = st;
            }
        ck_assert_ptr_nonnull(last);
        ck_assert_int_eq(verdict(s, why, sizeof(why)), CS_VERIFY_OK);
        last->dstoff = (last->dstoff + 1) % s->nchunksperloop;
        ck_assert_msg(verdict(s, why, sizeof(why)) == CS_VERIFY_WRONG, "%s: %s", specs[i], why);
        cs_sched_free(s);
    }
}
END_TEST

/* The step types of every tb of s: want[0..n-1] on each. */
static void assert_tb_types(const struct cs_sched *s, const enum cs_step_type *want, int n)
{
    for (int g = 0; g < s->ngpus; g++)
        for (int t = 0; t < s->gpus[g].ntbs; t++) {
            const struct cs_tb *tb = &s->gpus[g].tbs[t];

            ck_assert_int_eq(tb->nsteps, n);
            for (int k = 0; k < n; k++)
                ck_assert_int_eq(tb->steps[k].type, want[k]);
        }
}

/* The <algo> line of s as written. */
static void assert_algo_line(const struct cs_sched *s, const char *want)
{
    char *text = xml_of(s);

    ck_assert_msg(strstr(text, want) != NULL, "no '%s' in %.300s", want, text);
    free(text);
}

/* Ring AllGather and ReduceScatter hop by hop (s, then rcs or rrcs at each hop, r or rrc at the
 * last; rrcs, not NCCL's rrs, since msccl-tools fuses to rrs only where a receive overwrites the
 * slot next), with msccl-tools' buffers: AllGather in place on the output (G*K chunks), input
 * unnamed; ReduceScatter in place on the input (G*K chunks) as the executor reads its name. */
START_TEST(test_ring_coll_shape)
{
    static const enum cs_step_type ag[] = {CS_STEP_S,   CS_STEP_RCS, CS_STEP_RCS, CS_STEP_RCS,
                                           CS_STEP_RCS, CS_STEP_RCS, CS_STEP_RCS, CS_STEP_R};
    static const enum cs_step_type rs[] = {CS_STEP_S,    CS_STEP_RRCS, CS_STEP_RRCS, CS_STEP_RRCS,
                                           CS_STEP_RRCS, CS_STEP_RRCS, CS_STEP_RRCS, CS_STEP_RRC};
    struct cs_sched *s = gen("ring:gpus=8,channels=4,coll=allgather,protocol=LL128");

    ck_assert_int_eq(s->coll, CS_COLL_ALLGATHER);
    ck_assert_int_eq(s->nchannels, 4);
    ck_assert_int_eq(s->nchunksperloop, 32);
    assert_tb_types(s, ag, 8);
    for (int g = 0; g < 8; g++) {
        ck_assert_int_eq(s->gpus[g].i_chunks, 0);
        ck_assert_int_eq(s->gpus[g].o_chunks, 32);
        ck_assert_int_eq(s->gpus[g].s_chunks, 0);
        /* tb k sends GPU g's chunk k first: output chunk g*4 + k */
        for (int t = 0; t < 4; t++)
            ck_assert_int_eq(s->gpus[g].tbs[t].steps[0].srcoff, g * 4 + s->gpus[g].tbs[t].chan);
    }
    assert_algo_line(s, "nchunksperloop=\"32\" ngpus=\"8\" coll=\"allgather\" inplace=\"1\" "
                        "outofplace=\"0\"");
    cs_sched_free(s);
    s = gen("ring:gpus=8,channels=4,coll=reducescatter");
    ck_assert_int_eq(s->coll, CS_COLL_REDUCE_SCATTER);
    ck_assert_int_eq(s->nchunksperloop, 32);
    assert_tb_types(s, rs, 8);
    for (int g = 0; g < 8; g++) {
        ck_assert_int_eq(s->gpus[g].i_chunks, 32);
        ck_assert_int_eq(s->gpus[g].o_chunks, 0);
        /* the sum of GPU g's part k ends on tb k: input chunk g*4 + k */
        for (int t = 0; t < 4; t++)
            ck_assert_int_eq(s->gpus[g].tbs[t].steps[7].dstoff, g * 4 + s->gpus[g].tbs[t].chan);
    }
    assert_algo_line(s, "coll=\"reducescatter\" inplace=\"1\" outofplace=\"0\"");
    cs_sched_free(s);
}
END_TEST

/* All-pairs: one tb per peer; AllToAll out of place (G chunks in and out, one local copy per GPU),
 * AllGather in place on the output, ReduceScatter in place on the input with a reducing tb. */
START_TEST(test_allpairs_coll_shape)
{
    struct cs_sched *s = gen("allpairs:gpus=8,coll=alltoall,instances=2");

    ck_assert_int_eq(s->coll, CS_COLL_ALLTOALL);
    ck_assert_int_eq(s->inplace, 0);
    ck_assert_int_eq(s->nchunksperloop, 16);
    for (int g = 0; g < 8; g++) {
        int cpy = 0;

        ck_assert_int_eq(s->gpus[g].ntbs, 14);
        ck_assert_int_eq(s->gpus[g].i_chunks, 16);
        ck_assert_int_eq(s->gpus[g].o_chunks, 16);
        for (int t = 0; t < 14; t++)
            for (int k = 0; k < s->gpus[g].tbs[t].nsteps; k++)
                if (s->gpus[g].tbs[t].steps[k].type == CS_STEP_CPY) {
                    /* interleaved instances: chunk g of the rank's part becomes g*2 + i */
                    ck_assert_int_eq(s->gpus[g].tbs[t].steps[k].srcoff / 2, g);
                    ck_assert_int_eq(s->gpus[g].tbs[t].steps[k].dstoff / 2, g);
                    cpy++;
                }
        ck_assert_int_eq(cpy, 2);
    }
    assert_algo_line(s, "coll=\"alltoall\" inplace=\"0\" outofplace=\"1\"");
    cs_sched_free(s);
    s = gen("allpairs:gpus=8,coll=allgather");
    ck_assert_int_eq(s->nchunksperloop, 8);
    for (int g = 0; g < 8; g++) {
        ck_assert_int_eq(s->gpus[g].ntbs, 7);
        ck_assert_int_eq(s->gpus[g].i_chunks, 0);
        ck_assert_int_eq(s->gpus[g].o_chunks, 8);
    }
    cs_sched_free(s);
    s = gen("allpairs:gpus=8,coll=reducescatter");
    for (int g = 0; g < 8; g++) {
        ck_assert_int_eq(s->gpus[g].ntbs, 8);
        ck_assert_int_eq(s->gpus[g].i_chunks, 8);
        ck_assert_int_eq(s->gpus[g].o_chunks, 0);
        ck_assert_int_eq(s->gpus[g].s_chunks, 7);
    }
    assert_algo_line(s, "coll=\"reducescatter\" inplace=\"1\"");
    cs_sched_free(s);
}
END_TEST

/* Every generator, seed and corrected, writes the executor's <algo> header: outofplace="0" and
 * minBytes/maxBytes (0 and 0 by default, else the spec's sizes), and they read back. */
START_TEST(test_algo_header)
{
    static const struct {
        const char *spec;
        long long min, max;
    } cases[] = {
        {"hierarchical:gpus=8,protocol=LL", 0, 0},
        {"hierarchical:gpus=8,compat=1", 0, 0},
        {"hierarchical:gpus=12,columns=3,instances=2", 0, 0},
        {"ring:gpus=8,channels=4,per_node=4", 0, 0},
        {"allpairs:gpus=8,protocol=LL128", 0, 0},
        {"ring:gpus=8,min_bytes=64K,max_bytes=1M", 65536, 1048576},
        {"allpairs:gpus=4,min_bytes=1G", 1LL << 30, 0},
        {"hierarchical:gpus=4,compat=1,min_bytes=4K,max_bytes=4K", 4096, 4096},
        {"ring:gpus=4,max_bytes=1T", 0, 1LL << 40},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_sched *s = gen(cases[i].spec), *back = NULL;
        struct cs_error err;
        char *text = NULL, want[128];
        size_t len = 0;
        FILE *fp = open_memstream(&text, &len);

        assert_header(s, cases[i].min, cases[i].max);
        ck_assert_ptr_nonnull(fp);
        ck_assert_int_eq(cs_sched_write_xml(s, fp), 0);
        ck_assert_int_eq(fclose(fp), 0);
        snprintf(want, sizeof(want),
                 " inplace=\"1\" outofplace=\"0\" minBytes=\"%lld\" maxBytes=\"%lld\">",
                 cases[i].min, cases[i].max);
        ck_assert_msg(strstr(text, want) != NULL, "%s: no '%s' in %.300s", cases[i].spec, want,
                      text);
        cs_error_init(&err);
        ck_assert_msg(cs_sched_read_xml_mem(text, len, "gen", &back, &err) == 0, "%s", err.msg);
        assert_header(back, cases[i].min, cases[i].max);
        cs_sched_free(back);
        cs_sched_free(s);
        free(text);
    }
}
END_TEST

START_TEST(test_bad_parameters)
{
    assert_usage_error("hierarchical:gpus=2", "at least 4");
    assert_usage_error("hierarchical:gpus=8,columns=3", "does not divide");
    assert_usage_error("hierarchical:gpus=8,columns=8", "single row");
    assert_usage_error("hierarchical:gpus=8,columns=1", "at least 2");
    assert_usage_error("hierarchical:gpus=8,instances=0", "at least 1");
    assert_usage_error("hierarchical:gpus=8,instances=33", "channels");
    assert_usage_error("hierarchical:gpus=8,columns=4,compat=1", "2 columns");
    assert_usage_error("hierarchical:gpus=36,compat=1", "cnt 72");
    assert_usage_error("ring:gpus=8,channels=16,instances=4", "channels");
    assert_usage_error("ring:gpus=1", "at least 2");
    assert_usage_error("ring:gpus=1025", "at most 1024");
    assert_usage_error("allpairs:gpus=129,sms=1024", "the runtime's dependency ids stop at 127");
    assert_usage_error("hierarchical:gpus=68", "34 rows x 2 columns");
    assert_usage_error("hierarchical:gpus=1024,columns=16", "32 connections per channel");
    assert_usage_error("hierarchical:gpus=1024,columns=64", "at most 33 rows and 33 columns");
    assert_usage_error("hierarchical:gpus=1000,compat=1", "32 connections per channel");
    assert_usage_error("allpairs:gpus=64,instances=4", "dependency ids stop at 127");
    assert_usage_error("tree:gpus=8", "unknown generator");
    assert_usage_error("hierarchical:gpus=8,nops=3", "dependence nops");
    assert_usage_error("hierarchical:gpus=8,variant=v2", "not split or v1");
    assert_usage_error("ring:gpus=8,variant=v1", "for hierarchical");
    assert_usage_error("hierarchical:gpus=8,channels=2", "are for ring");
    assert_usage_error("allpairs:gpus=8,per_node=4", "are for ring");
    assert_usage_error("ring:gpus=12,per_node=8", "does not divide");
    assert_usage_error("ring:gpus=8,per_node=16", "does not divide");
    assert_usage_error("allpairs:gpus=8,columns=2", "for hierarchical");
    assert_usage_error("ring:gpus=8,colour=red", "unknown key");
    assert_usage_error("ring:gpus=eight", "not a count");
    assert_usage_error("ring:gpus=4294967304", "not a count");
    assert_usage_error("ring:gpus=-8", "not a count");
    assert_usage_error("ring:gpus=8,instances=", "not a count");
    assert_usage_error("ring:gpus=8,protocol=LL256", "unknown protocol");
    assert_usage_error("ring:gpus=8,min_bytes=1M,max_bytes=64K", "exceeds --max-bytes");
    assert_usage_error("ring:gpus=8,min_bytes=-1", "not a size");
    assert_usage_error("ring:gpus=8,max_bytes=2T", "not a size");
    assert_usage_error("ring:gpus=8,max_bytes=lots", "not a size");
    assert_usage_error("ring:gpus=8,coll=alltoall", "ring has no AllToAll");
    assert_usage_error("allpairs:gpus=8,coll=broadcast", "unknown collective 'broadcast'");
    assert_usage_error("ring:gpus=8,coll=reduce_scatter", "unknown collective");
    assert_usage_error("hierarchical:gpus=8,coll=allgather", "allreduce only");
    assert_usage_error("ring:gpus=8,channels=16,instances=3,coll=allgather", "48 channels");
}
END_TEST

/* ---- gen nccl */

/* The worked values of nccl-a100.md 1.6b on an 8-GPU, 24-channel communicator, each at its
 * boundary: the ring has NCCL's channels, protocol, window and name. */
START_TEST(test_nccl_worked)
{
    static const struct {
        const char *spec;
        int channels;
        const char *name;
        long long min, max;
    } cases[] = {
        {"nccl:gpus=8,size=64K,protocol=LL", 2, "allreduce_nccl_2.12.12_ring_2ch_512thr", 65536,
         98303},
        {"nccl:gpus=8,size=65535,protocol=LL", 1, "allreduce_nccl_2.12.12_ring_1ch_512thr", 32768,
         65535},
        {"nccl:gpus=8,size=4K,protocol=LL", 1, "allreduce_nccl_2.12.12_ring_1ch_64thr", 0, 8191},
        {"nccl:gpus=8,size=768K,protocol=LL", 24, "allreduce_nccl_2.12.12_ring_24ch_512thr", 786432,
         0},
        {"nccl:gpus=8,size=120K,protocol=LL128,nccl=2.8", 24,
         "allreduce_nccl_2.8.0_ring_24ch_640thr", 122880, 0},
        {"nccl:gpus=8,size=122879,protocol=LL128,nccl=2.18.5", 23,
         "allreduce_nccl_2.18.5_ring_23ch_640thr", 117760, 122879},
        {"nccl:gpus=8,size=1G", 24, "allreduce_nccl_2.12.12_ring_24ch_512thr", 786432, 0},
        {"nccl:gpus=8,size=1G,channels=4", 4, "allreduce_nccl_2.12.12_ring_4ch_512thr", 131072, 0},
        {"nccl:gpus=8,size=786431,coll=allgather", 23, "allgather_nccl_2.12.12_ring_23ch_512thr",
         753664, 786431},
    };

    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_sched *s = gen(cases[i].spec);

        ck_assert_int_eq(s->nchannels, cases[i].channels);
        ck_assert_str_eq(s->name, cases[i].name);
        assert_header(s, cases[i].min, cases[i].max);
        for (int g = 0; g < 8; g++)
            ck_assert_int_eq(s->gpus[g].ntbs, cases[i].channels);
        cs_sched_free(s);
    }
}
END_TEST

/* Every version, collective, protocol, GPU count and size of a grid: the ring has the channels
 * and protocol NCCL's rule gives (cs_nccl_width), in rank order, within the runtime's limits
 * and correct under verify. */
START_TEST(test_nccl_rule_grid)
{
    static const char *const versions[] = {"2.8.4", "2.12.12", "2.18.5"};
    static const int codes[] = {20804, 21212, 21805};
    static const char *const colls[] = {"allreduce", "allgather", "reducescatter"};
    static const long long sizes[] = {1, 5000, 65536, 300000, 1 << 20, 1LL << 34};
    static const int gpus[] = {2, 8, 40};
    int v = _i % 3, c = _i / 3 % 3, g = _i / 9;

    for (int p = CS_PROTO_LL; p <= CS_PROTO_SIMPLE; p++)
        for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            int G = gpus[g], comm = G == 40 && c == 0 ? 16 : 24; /* 2 phases a ring above 32 */
            struct cs_nccl_width w;
            struct cs_sched *s;
            char spec[160];

            snprintf(spec, sizeof(spec), "nccl:gpus=%d,size=%lld,coll=%s,protocol=%s,nccl=%s", G,
                     sizes[k], colls[c], cs_proto_name(p), versions[v]);
            ck_assert_int_eq(cs_nccl_width(codes[v], p, sizes[k], G, comm, &w, NULL), 0);
            s = gen(spec);
            ck_assert_int_eq(s->proto, p);
            ck_assert_int_eq(s->coll, c == 0   ? CS_COLL_ALLREDUCE
                                      : c == 1 ? CS_COLL_ALLGATHER
                                               : CS_COLL_REDUCE_SCATTER);
            ck_assert_int_eq(s->nchannels, w.channels * (G == 40 && c == 0 ? 2 : 1));
            ck_assert_int_eq(s->gpus[0].tbs[0].send, 1);
            ck_assert_int_eq(s->gpus[0].tbs[0].recv, G - 1);
            cs_sched_free(s);
            if (k % 2 == 0 && G <= 8)
                assert_correct_coll(spec);
        }
}
END_TEST

/* Across nodes: the ring of ring:per_node, and AllToAll: the all-pairs schedule in Simple. */
START_TEST(test_nccl_nodes_alltoall)
{
    struct cs_sched *a = gen("nccl:gpus=16,nodes=2,size=1G");
    struct cs_sched *b = gen("ring:gpus=16,channels=24,per_node=8");

    ck_assert_int_eq(a->nchannels, b->nchannels);
    for (int g = 0; g < 16; g++)
        for (int t = 0; t < a->gpus[g].ntbs; t++) {
            ck_assert_int_eq(a->gpus[g].tbs[t].send, b->gpus[g].tbs[t].send);
            ck_assert_int_eq(a->gpus[g].tbs[t].recv, b->gpus[g].tbs[t].recv);
        }
    cs_sched_free(a);
    cs_sched_free(b);
    a = gen("nccl:gpus=8,size=1M,coll=alltoall");
    ck_assert_str_eq(a->name, "alltoall_nccl_2.12.12_p2p");
    ck_assert_int_eq(a->proto, CS_PROTO_SIMPLE);
    ck_assert_int_eq(a->coll, CS_COLL_ALLTOALL);
    assert_header(a, 0, 0);
    cs_sched_free(a);
    assert_correct_coll("nccl:gpus=8,size=1M,coll=alltoall");
}
END_TEST

START_TEST(test_nccl_bad_parameters)
{
    assert_usage_error("nccl:gpus=8", "needs the size");
    assert_usage_error("nccl:gpus=8,size=0", "not a size");
    assert_usage_error("nccl:gpus=8,size=1M,nccl=3.0", "NCCL 2.8 and later 2.x");
    assert_usage_error("nccl:gpus=8,size=1M,nccl=2.7", "NCCL 2.8 and later 2.x");
    assert_usage_error("nccl:gpus=8,size=1M,nccl=2.x", "MAJOR.MINOR or MAJOR.MINOR.PATCH");
    assert_usage_error("nccl:gpus=12,size=1M,nodes=5", "does not divide");
    assert_usage_error("nccl:gpus=8,size=1M,instances=2", "sets its own");
    assert_usage_error("nccl:gpus=8,size=1M,min_bytes=1K", "sets its own");
    assert_usage_error("nccl:gpus=8,size=1M,per_node=4", "are for ring");
    assert_usage_error("nccl:gpus=1,size=1M", "at least 2");
    assert_usage_error("nccl:gpus=1025,size=1M", "at most 1024");
    assert_usage_error("nccl:gpus=8,size=1M,coll=alltoall,protocol=LL", "point-to-point");
    assert_usage_error("ring:gpus=8,size=1M", "are for nccl");
    assert_usage_error("allpairs:gpus=8,nccl=2.12", "are for nccl");
    assert_usage_error("ring:gpus=8,nodes=2", "are for nccl");
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_compat_local_reference, 1},
        {test_compat_is_wrong, 1},
        {test_corrected_with_nops_deadlocks, 1},
        {test_hierarchical_grid_two_columns, 31},
        {test_hierarchical_grid_columns, 31},
        {test_hierarchical_split_shape, 1},
        {test_residency, 1},
        {test_steps_what_if, 1},
        {test_hierarchical_spread, 1},
        {test_hierarchical_1024, 1},
        {test_ring_grid, 63},
        {test_ring_direct_equals_lowered, 11},
        {test_ring_reps, 6},
        {test_ring_reps_auto, 1},
        {test_allpairs_grid, 63},
        {test_ring_shape, 1},
        {test_ring_per_node, 1},
        {test_coll_grid, 1},
        {test_coll_wrong_seen, 1},
        {test_ring_coll_shape, 1},
        {test_allpairs_coll_shape, 1},
        {test_algo_header, 1},
        {test_bad_parameters, 1},
        {test_nccl_worked, 1},
        {test_nccl_rule_grid, 27},
        {test_nccl_nodes_alltoall, 1},
        {test_nccl_bad_parameters, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_compat_equals_references, 1},
        {test_corrected_equals_fixed_example, 1},
        {NULL, 0},
    };

    return test_run("gen", 300, tests, shared);
}
