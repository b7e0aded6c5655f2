/* check_emulate.c: the CPU emulation of executor plans, its inputs and the reference results. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"
#include "runner.h"
#include "testutil.h"
#include "xplantest.h"

/* Emulate at size_bytes (iter_bytes 0: the protocol's default). Returns the emulation's code and
 * stores the number of wrong output elements (or -1 when there is no reference) in *wrong. */
static int emulate(const struct cs_xplan *p, long long size_bytes, long iter_bytes, long *wrong,
                   char *msg, size_t msglen)
{
    struct cs_xplan_sizing sz;
    struct cs_emulate_bufs *b;
    struct cs_error err;
    int rc;

    cs_error_init(&err);
    ck_assert_msg(cs_xplan_size(p, size_bytes, 4, iter_bytes, &sz, &err) == 0, "%s", err.msg);
    b = cs_emulate_bufs_new(p, sz.run.chunk_elems);
    ck_assert_ptr_nonnull(b);
    rc = cs_emulate_run(p, &sz, b, &err);
    *wrong = -1;
    if (rc == 0 && cs_emulate_has_reference(p))
        *wrong = cs_emulate_check_output(p, b, &err);
    if (msg)
        snprintf(msg, msglen, "%s", err.msg);
    cs_emulate_bufs_free(b);
    return rc;
}

START_TEST(test_reference_values)
{
    struct cs_sched *s = load(test_data("msccl-xml/alltoall_allpairs.8gpu.1inst.LL128.xml"));
    struct cs_xplan *p = plan_of(s);
    float out[8 * 3];

    /* alltoall, 8 chunks of 3 elements: rank 2's output chunk q is rank q's input chunk 2. */
    ck_assert_int_eq(cs_emulate_expect_output(p, 2, 3, out), 0);
    for (int q = 0; q < 8; q++)
        for (int j = 0; j < 3; j++)
            ck_assert(out[q * 3 + j] == cs_emulate_input_value(q, 2 * 3 + j));
    cs_xplan_free(p);
    cs_sched_free(s);
    for (int r = 0; r < 4; r++)
        for (long e = 0; e < 5000; e += 7) {
            float v = cs_emulate_input_value(r, e);

            ck_assert(v == floorf(v) && v >= -30 && v <= 30);
        }
}
END_TEST

/* The CPU emulation of the compiled plan gives the collective's result for correct schedules, at
 * one iteration with multi-chunk calls, at several iterations, and with a partial last iteration.
 */
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
        /* 1 element per chunk; 24 elements per chunk with 8-element iterations; 20 with 8
         * (partial). */
        ck_assert_msg(emulate(p, n * 1, 0, &wrong, msg, sizeof(msg)) == 0, "%s: %s", good[i], msg);
        ck_assert_msg(wrong == 0, "%s: %ld wrong: %s", good[i], wrong, msg);
        ck_assert_msg(emulate(p, n * 24, 32, &wrong, msg, sizeof(msg)) == 0, "%s: %s", good[i],
                      msg);
        ck_assert_msg(wrong == 0, "%s: %ld wrong: %s", good[i], wrong, msg);
        ck_assert_msg(emulate(p, n * 20, 32, &wrong, msg, sizeof(msg)) == 0, "%s: %s", good[i],
                      msg);
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

    ck_assert(!cs_emulate_has_reference(p));
    ck_assert_int_eq(emulate(p, (long long)p->nchunks * 4 * 4, 0, &wrong, NULL, 0), 0);
    ck_assert_int_eq(wrong, -1);
    ck_assert_int_eq(cs_emulate_expect_output(p, 0, 4, NULL), CS_ERR_USAGE);
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
        ck_assert_int_eq(p->ntbs,
                         (int)(p->ranks[p->nranks - 1].tb_first + p->ranks[p->nranks - 1].ntbs));
        ck_assert_msg(emulate(p, (long long)p->nchunks * 4 * 2, 0, &wrong, msg, sizeof(msg)) == 0,
                      "%s: %s", rel, msg);
        snprintf(dir, sizeof(dir), "%s/msccl-xml", top);
        ok = manifest_ok(dir, rel);
        snprintf(dir, sizeof(dir), "%s/msccl-xml%s%s", top, *sub ? "/" : "", sub);
        if (cs_emulate_has_reference(p) && ok == 1)
            ck_assert_msg(wrong == 0, "%s: %ld wrong: %s", rel, wrong, msg);
        if (cs_emulate_has_reference(p) && ok == 0)
            ck_assert_msg(wrong > 0,
                          "%s: the manifest says Check() fails, the emulation agrees not", rel);
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
        ck_assert_msg(emulate(p, 1048576, 0, &wrong, msg, sizeof(msg)) == 0, "%s: %s", files[i],
                      msg);
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
        {test_reference_values, 1},
        {test_emulate_reference_xmls, 1},
        {test_emulate_seed_is_wrong, 1},
        {test_custom_has_no_reference, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_shared_corpus, 1},
        {test_shared_deadlock_scan, 1},
        {NULL, 0},
    };

    return test_run("emulate", 120, tests, shared);
}
