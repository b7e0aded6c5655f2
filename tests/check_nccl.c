/* check_nccl.c: NCCL's channels and threads per size and protocol, versions, size windows, its
 * double binary tree, its tuning model's algorithm choice, and the tree gen nccl writes. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "gen.h"
#include "nccl.h"
#include "runner.h"
#include "verify.h"

/* NCCL's channels and threads for (protocol, size) on 8 ranks and 24 channels: the worked values of
 * nccl-a100.md 1.6b, each at its boundary. */
static struct cs_nccl_width width(enum cs_proto proto, long long nbytes, int nranks, int nc)
{
    struct cs_nccl_width w = {0, 0, 0, 0};
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_nccl_width(21205, proto, nbytes, nranks, nc, &w, &err) == 0, "%s", err.msg);
    return w;
}

#define ASSERT_WIDTH(w, nc, nt, max)                                                               \
    do {                                                                                           \
        struct cs_nccl_width w_ = (w);                                                             \
        ck_assert_int_eq(w_.channels, nc);                                                         \
        ck_assert_int_eq(w_.threads, nt);                                                          \
        ck_assert_int_eq(w_.max_threads, max);                                                     \
    } while (0)

START_TEST(test_nccl_width)
{
    struct cs_nccl_width w;
    struct cs_error err;
    int code = 0;
    char note[512];

    /* Ring LL: 8 bytes x 8 ranks per thread, 512 threads: full width from 24 x 512 x 64 B. */
    ASSERT_WIDTH(width(CS_PROTO_LL, 786432, 8, 24), 24, 512, 512); /* 768 KiB */
    ASSERT_WIDTH(width(CS_PROTO_LL, 786431, 8, 24), 23, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 524288, 8, 24), 16, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 65536, 8, 24), 2, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 65535, 8, 24), 1, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 32768, 8, 24), 1, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 32767, 8, 24), 1, 256, 512); /* then fewer threads */
    ASSERT_WIDTH(width(CS_PROTO_LL, 16384, 8, 24), 1, 256, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 8192, 8, 24), 1, 128, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 4096, 8, 24), 1, 64, 512); /* 64: not a multiple of 128 */
    ASSERT_WIDTH(width(CS_PROTO_LL, 0, 8, 24), 1, 64, 512);
    /* The LL threshold grows with the ranks: 2 ranks reach 24 channels at 192 KiB. */
    ASSERT_WIDTH(width(CS_PROTO_LL, 196608, 2, 24), 24, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_LL, 196607, 2, 24), 23, 512, 512);
    /* LL128: 8 bytes per thread, 640 threads: full from 120 KiB; 640 -> 320, then stop. */
    ASSERT_WIDTH(width(CS_PROTO_LL128, 122880, 8, 24), 24, 640, 640);
    ASSERT_WIDTH(width(CS_PROTO_LL128, 122879, 8, 24), 23, 640, 640);
    ASSERT_WIDTH(width(CS_PROTO_LL128, 5120, 8, 24), 1, 640, 640);
    ASSERT_WIDTH(width(CS_PROTO_LL128, 5119, 8, 24), 1, 320, 640);
    ASSERT_WIDTH(width(CS_PROTO_LL128, 1, 8, 24), 1, 320, 640);
    /* Simple: 64 bytes per thread, 512 threads: full from 768 KiB, whatever the ranks. */
    ASSERT_WIDTH(width(CS_PROTO_SIMPLE, 786432, 8, 24), 24, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_SIMPLE, 786431, 8, 24), 23, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_SIMPLE, 786432, 64, 24), 24, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_SIMPLE, 65536, 8, 24), 2, 512, 512);
    ASSERT_WIDTH(width(CS_PROTO_SIMPLE, 1 << 30, 8, 24), 24, 512, 512);
    /* A communicator of fewer channels is never widened. */
    ASSERT_WIDTH(width(CS_PROTO_SIMPLE, 1 << 30, 8, 1), 1, 512, 512);

    /* Versions: 2.8.0 to the last 2.x; those past 2.18 take 2.18's rule, with a note. */
    ck_assert_int_eq(cs_nccl_version_parse("2.8", &code, NULL), 0);
    ck_assert_int_eq(code, 20800);
    ck_assert_int_eq(cs_nccl_version_parse("2.18.5", &code, NULL), 0);
    ck_assert_int_eq(code, 21805);
    ck_assert_int_eq(cs_nccl_version_parse("2.12.12", &code, NULL), 0);
    ck_assert_int_eq(code, 21212);
    ck_assert(!cs_nccl_past_rule(code));
    ck_assert_ptr_null(cs_nccl_rule_note(code, note, sizeof(note)));
    ck_assert_str_eq(note, "");
    ck_assert_int_eq(cs_nccl_version_parse("2.18.99", &code, NULL), 0);
    ck_assert(!cs_nccl_past_rule(code));
    ck_assert_int_eq(cs_nccl_version_parse("2.19", &code, NULL), 0);
    ck_assert_int_eq(code, 21900);
    ck_assert(cs_nccl_past_rule(code));
    ck_assert_int_eq(cs_nccl_version_parse("2.26.2", &code, NULL), 0);
    ck_assert_int_eq(code, 22602);
    ck_assert(cs_nccl_past_rule(code));
    ck_assert_ptr_nonnull(cs_nccl_rule_note(code, note, sizeof(note)));
    ck_assert_ptr_nonnull(strstr(note, "NCCL 2.26.2 is newer than the versions"));
    ck_assert_ptr_nonnull(strstr(note, "taken with 2.18's"));
    /* past the rule, the width and the tuning model are 2.18's */
    {
        struct cs_nccl_width a, b;
        struct cs_nccl_machine m;
        enum cs_nccl_algo aa, ab;
        enum cs_proto pa, pb;

        cs_nccl_machine_default(&m, 8);
        for (long long n = 1; n <= 1LL << 30; n *= 4) {
            ck_assert_int_eq(cs_nccl_width(21805, CS_PROTO_LL, n, 16, 16, &a, NULL), 0);
            ck_assert_int_eq(cs_nccl_width(22602, CS_PROTO_LL, n, 16, 16, &b, NULL), 0);
            ck_assert_int_eq(a.channels, b.channels);
            ck_assert_int_eq(a.threads, b.threads);
            ck_assert_int_eq(
                cs_nccl_pick(21805, &m, CS_COLL_ALLREDUCE, n, 16, 2, 16, 0, &aa, &pa, NULL), 0);
            ck_assert_int_eq(
                cs_nccl_pick(22602, &m, CS_COLL_ALLREDUCE, n, 16, 2, 16, 0, &ab, &pb, NULL), 0);
            ck_assert_int_eq(aa, ab);
            ck_assert_int_eq(pa, pb);
        }
    }
    cs_error_init(&err);
    ck_assert_int_eq(cs_nccl_version_parse("2.7.8", &code, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "NCCL 2.7.8: collsim reproduces NCCL 2.8 and later 2.x"));
    ck_assert_int_eq(cs_nccl_version_parse("3.0", &code, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(code, 22602); /* unchanged on failure */
    for (const char *const *b = (const char *const[]){"2", "2.", "2.8.", "2..8", "2.8.4.1", "2.8x",
                                                      "v2.8", "2.100", "", NULL};
         *b != NULL; b++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_nccl_version_parse(*b, &code, &err), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(err.msg, "MAJOR.MINOR or MAJOR.MINOR.PATCH"));
    }
    cs_error_init(&err);
    ck_assert_int_eq(cs_nccl_width(30000, CS_PROTO_LL, 1024, 8, 24, &w, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a version from 2.8 on"));
    ck_assert_int_eq(cs_nccl_width(29999, CS_PROTO_LL, 1024, 8, 24, &w, NULL), 0);
    ck_assert_int_eq(cs_nccl_width(20799, CS_PROTO_LL, 1024, 8, 24, &w, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_nccl_width(20800, CS_PROTO_LL, 1024, 8, 0, &w, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_nccl_width(20800, CS_PROTO_LL, 1024, 0, 24, &w, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_nccl_width(20800, 0, 1024, 8, 24, &w, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_nccl_width(20800, CS_PROTO_LL, -1, 8, 24, &w, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_nccl_width(21899, CS_PROTO_LL, 1024, 8, 24, &w, NULL), 0);
}
END_TEST

/* The window of a size: every size in it gets the same width, the sizes just outside another. */
static void check_window(enum cs_proto proto, long long nbytes, int nranks, int nc, long long lo,
                         long long hi)
{
    struct cs_nccl_width w, e;
    long long l = -1, h = -1;

    ck_assert_int_eq(cs_nccl_window(21212, proto, nbytes, nranks, nc, &l, &h, NULL), 0);
    ck_assert_int_eq(l, lo);
    ck_assert_int_eq(h, hi);
    w = width(proto, nbytes, nranks, nc);
    e = width(proto, lo, nranks, nc);
    ck_assert(e.channels == w.channels && e.threads == w.threads);
    if (lo > 0) {
        e = width(proto, lo - 1, nranks, nc);
        ck_assert(e.channels != w.channels || e.threads != w.threads);
    }
    if (hi > 0) {
        e = width(proto, hi, nranks, nc);
        ck_assert(e.channels == w.channels && e.threads == w.threads);
        e = width(proto, hi + 1, nranks, nc);
        ck_assert(e.channels != w.channels || e.threads != w.threads);
    }
}

START_TEST(test_nccl_window)
{
    /* Ring LL on 8 ranks: 2 channels from 64 KiB up to 3 x 32 KiB - 1. */
    check_window(CS_PROTO_LL, 70000, 8, 24, 65536, 98303);
    /* the full width from 768 KiB on, for every larger size */
    check_window(CS_PROTO_LL, 786432, 8, 24, 786432, 0);
    check_window(CS_PROTO_SIMPLE, 1 << 30, 8, 24, 786432, 0);
    /* the narrowest: from 0 */
    check_window(CS_PROTO_LL, 100, 8, 24, 0, 8191);
    check_window(CS_PROTO_LL128, 1, 8, 24, 0, 5119);
    check_window(CS_PROTO_LL128, 5120, 8, 24, 5120, 10239);
    /* one channel: only the threads change */
    check_window(CS_PROTO_SIMPLE, 40000, 8, 1, 32768, 0);
    ck_assert_int_eq(
        cs_nccl_window(30000, CS_PROTO_LL, 1, 8, 24, &(long long){0}, &(long long){0}, NULL),
        CS_ERR_INVALID);
    ck_assert_int_eq(
        cs_nccl_window(20799, CS_PROTO_LL, 1, 8, 24, &(long long){0}, &(long long){0}, NULL),
        CS_ERR_INVALID);
}
END_TEST

START_TEST(test_nccl_version_name)
{
    char buf[16];

    cs_nccl_version_name(21212, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2.12.12");
    cs_nccl_version_name(20800, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2.8.0");
}
END_TEST

/* The tree's LL threshold is 8 bytes per thread whatever the ranks (the ring's is 8 x ranks). */
START_TEST(test_nccl_tree_width)
{
    struct cs_nccl_width w;

    ck_assert_int_eq(
        cs_nccl_algo_width(21212, CS_NCCL_ALGO_TREE, CS_PROTO_LL, 98304, 16, 24, &w, NULL), 0);
    ASSERT_WIDTH(w, 24, 512, 512); /* 24 x 512 x 8 B */
    ck_assert_int_eq(w.algo, CS_NCCL_ALGO_TREE);
    ck_assert_int_eq(
        cs_nccl_algo_width(21212, CS_NCCL_ALGO_TREE, CS_PROTO_LL, 98303, 16, 24, &w, NULL), 0);
    ASSERT_WIDTH(w, 23, 512, 512);
    ck_assert_int_eq(
        cs_nccl_algo_width(21212, CS_NCCL_ALGO_RING, CS_PROTO_LL, 98304, 16, 24, &w, NULL), 0);
    ASSERT_WIDTH(w, 1, 512, 512); /* 16 ranks: 65536 B per channel */
    ck_assert_int_eq(w.algo, CS_NCCL_ALGO_RING);
    ck_assert_int_eq(cs_nccl_algo_width(21212, 0, CS_PROTO_LL, 1, 16, 24, &w, NULL),
                     CS_ERR_INVALID);
}
END_TEST

/* Each tree of the pair spans the n nodes (one root, every node reached once from it, parents
 * and children agree) and, n even, a node inner in one tree is a leaf in the other. */
START_TEST(test_nccl_dtree)
{
    for (int n = 1; n <= 33; n++) {
        int inner[2][64] = {{0}};

        for (int t = 0; t < 2; t++) {
            int roots = 0, seen[64] = {0}, queue[64], head = 0, tail = 0;

            for (int v = 0; v < n; v++) {
                int up, down[2];

                cs_nccl_dtree(n, v, t, &up, down);
                roots += up < 0;
                if (up < 0)
                    queue[tail++] = v;
                inner[t][v] = down[0] >= 0 || down[1] >= 0;
                for (int d = 0; d < 2; d++)
                    if (down[d] >= 0) {
                        int cu, cd[2];

                        ck_assert_int_lt(down[d], n);
                        cs_nccl_dtree(n, down[d], t, &cu, cd);
                        ck_assert_msg(cu == v, "n %d tree %d: %d's child %d has parent %d", n, t, v,
                                      down[d], cu);
                    }
            }
            ck_assert_int_eq(roots, 1);
            while (head < tail) {
                int v = queue[head++], up, down[2];

                ck_assert_int_eq(seen[v]++, 0);
                cs_nccl_dtree(n, v, t, &up, down);
                for (int d = 0; d < 2; d++)
                    if (down[d] >= 0)
                        queue[tail++] = down[d];
            }
            ck_assert_int_eq(tail, n);
        }
        for (int v = 0; v < n && n % 2 == 0; v++)
            ck_assert_msg(!(inner[0][v] && inner[1][v]), "n %d: node %d inner in both trees", n, v);
    }
    /* NCCL's tree 0 over 4 nodes: 0 -> 2 -> {1, 3} */
    {
        int up, down[2];

        cs_nccl_dtree(4, 2, 0, &up, down);
        ck_assert_int_eq(up, 0);
        ck_assert_int_eq(down[0], 1);
        ck_assert_int_eq(down[1], 3);
        cs_nccl_dtree(4, 1, 1, &up, down); /* mirrored: node 1 plays 2 */
        ck_assert_int_eq(up, 3);
        ck_assert_int_eq(down[0], 2);
        ck_assert_int_eq(down[1], 0);
    }
}
END_TEST

/* NCCL's model reproduces the worked example of nccl-a100.md 1.6 (2.12.12, 8 x A100 on one node,
 * NVLink, 240 GB/s capped at 235): latency and algorithm bandwidth per protocol, and 8052 us at
 * 1 GiB in Simple (8165 us measured on OCI BM.GPU4.8). */
START_TEST(test_nccl_model_worked_example)
{
    struct cs_nccl_machine m;
    static const double lat[] = {10.18, 36.6, 56.0}, bw[] = {33.57, 123.54, 134.29};
    double t0, t1;

    cs_nccl_machine_default(&m, 8);
    for (int p = CS_PROTO_LL; p <= CS_PROTO_SIMPLE; p++) {
        ck_assert_int_eq(cs_nccl_model_time(21212, &m, CS_COLL_ALLREDUCE, CS_NCCL_ALGO_RING, p, 0,
                                            8, 1, 24, &t0, NULL),
                         0);
        ck_assert_int_eq(cs_nccl_model_time(21212, &m, CS_COLL_ALLREDUCE, CS_NCCL_ALGO_RING, p,
                                            1000000000, 8, 1, 24, &t1, NULL),
                         0);
        ck_assert_msg(fabs(t0 - lat[p - 1]) < 0.005, "proto %d: latency %.3f us", p, t0);
        ck_assert_msg(fabs(1e6 / (t1 - t0) - bw[p - 1]) < 0.01, "proto %d: %.3f GB/s", p,
                      1e6 / (t1 - t0));
    }
    ck_assert_int_eq(cs_nccl_model_time(21212, &m, CS_COLL_ALLREDUCE, CS_NCCL_ALGO_RING,
                                        CS_PROTO_SIMPLE, 1LL << 30, 8, 1, 24, &t1, NULL),
                     0);
    ck_assert_msg(fabs(t1 - 8052) < 1, "1 GiB: %.1f us", t1);
    /* no tree but for AllReduce */
    ck_assert_int_eq(cs_nccl_model_time(21212, &m, CS_COLL_ALLGATHER, CS_NCCL_ALGO_TREE,
                                        CS_PROTO_LL, 1024, 8, 1, 24, &t1, NULL),
                     0);
    ck_assert(t1 < 0);
    ck_assert_int_eq(cs_nccl_model_time(21212, &m, CS_COLL_ALLREDUCE, CS_NCCL_ALGO_RING,
                                        CS_PROTO_LL, 1024, 8, 3, 24, &t1, NULL),
                     CS_ERR_INVALID); /* 3 nodes do not divide 8 ranks */
}
END_TEST

/* Across 2 nodes of 8 (NCCL 2.12.12, the default machine): at 64 KiB in LL the tree (27.5 us of
 * latency against the ring's 36.4: 2 x (7 chain hops x 0.52 x 1.8 + 5.0) + 4.4, against 3.6 +
 * 26 x 0.47 x 1.8 + 4 x 2.7); at 1 GiB in Simple the ring (its bandwidth 125 against the tree's
 * 108 GB/s); on one node always the ring; AllGather never the tree. */
START_TEST(test_nccl_pick_algo)
{
    struct cs_nccl_machine m;
    enum cs_nccl_algo a;

    cs_nccl_machine_default(&m, 8);
    ck_assert_int_eq(
        cs_nccl_pick_algo(21212, &m, CS_COLL_ALLREDUCE, CS_PROTO_LL, 65536, 16, 2, 24, &a, NULL),
        0);
    ck_assert_int_eq(a, CS_NCCL_ALGO_TREE);
    ck_assert_int_eq(cs_nccl_pick_algo(21212, &m, CS_COLL_ALLREDUCE, CS_PROTO_SIMPLE, 1LL << 30, 16,
                                       2, 24, &a, NULL),
                     0);
    ck_assert_int_eq(a, CS_NCCL_ALGO_RING);
    ck_assert_int_eq(
        cs_nccl_pick_algo(21212, &m, CS_COLL_ALLREDUCE, CS_PROTO_LL, 65536, 8, 1, 24, &a, NULL), 0);
    ck_assert_int_eq(a, CS_NCCL_ALGO_RING);
    ck_assert_int_eq(
        cs_nccl_pick_algo(21212, &m, CS_COLL_ALLGATHER, CS_PROTO_LL, 65536, 16, 2, 24, &a, NULL),
        0);
    ck_assert_int_eq(a, CS_NCCL_ALGO_RING);
}
END_TEST

/* NCCL's own protocol per size (no NCCL_PROTO): on one HGX A100 node, NCCL 2.12's model has
 * LL at 10.18 us + S / 33.57 GB/s, LL128 at 36.6 us + S / 123.54 GB/s and Simple at 56 us +
 * S / 134.29 GB/s (nccl-a100.md 1.6), so LL up to 1.218 MB, LL128 up to 29.96 MB, then Simple;
 * with LL128 off (PCIe paths, pci=1 ll128=0 on a 24 GB/s bus of 4 GPUs: LL 9.6 us + S / 4 GB/s,
 * Simple 42.6 us + S / 16 GB/s) LL up to 176 KB. */
START_TEST(test_nccl_pick)
{
    struct cs_nccl_machine m, pci;
    const double ll128_at = 26.42e3 / (1 / (58.75 * 8 / 14) - 1 / (216.2 * 8 / 14));
    const double simple_at = 19.4e3 / (1 / (216.2 * 8 / 14) - 1 / (235.0 * 8 / 14));
    const double pci_at = 33.0e3 / (1 / (24.0 / 4 * 4 / 6) - 1 / (24.0 * 4 / 6));
    struct {
        double size;
        enum cs_proto want;
        int pci;
    } cases[] = {
        {0.99 * ll128_at, CS_PROTO_LL, 0},
        {1.01 * ll128_at, CS_PROTO_LL128, 0},
        {0.99 * simple_at, CS_PROTO_LL128, 0},
        {1.01 * simple_at, CS_PROTO_SIMPLE, 0},
        {128, CS_PROTO_LL, 0},
        {1LL << 30, CS_PROTO_SIMPLE, 0},
        {0.99 * pci_at, CS_PROTO_LL, 1},
        {1.01 * pci_at, CS_PROTO_SIMPLE, 1},
    };
    enum cs_nccl_algo a;
    enum cs_proto q;
    char spec[256];

    cs_nccl_machine_default(&m, 8);
    pci = (struct cs_nccl_machine){24, 24 * 4, 1, 0, 1};
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int G = cases[i].pci ? 4 : 8;

        ck_assert_int_eq(cs_nccl_pick(21212, cases[i].pci ? &pci : &m, CS_COLL_ALLREDUCE,
                                      (long long)cases[i].size, G, 1, 24, 0, &a, &q, NULL),
                         0);
        ck_assert_msg(q == cases[i].want, "%.0f B on %d GPUs: %s, not %s", cases[i].size, G,
                      cs_proto_name(q), cs_proto_name(cases[i].want));
        ck_assert_int_eq(a, CS_NCCL_ALGO_RING);
        /* the same through gen nccl's spec, whose machine keys tell the model what it sees */
        snprintf(spec, sizeof(spec), "nccl:gpus=%d,channels=24,nccl=2.12.12,size=%.0f%s", G,
                 cases[i].size, cases[i].pci ? ",pci=1,ll128=0,bus=24" : "");
        ck_assert_int_eq(cs_gen_nccl_spec_pick(spec, &q, NULL), 0);
        ck_assert_int_eq(q, cases[i].want);
    }
    ck_assert(ll128_at > 1.2e6 && ll128_at < 1.23e6 && simple_at > 29.9e6 && simple_at < 30e6);
    /* across nodes the tree comes in for small sizes (and an algo= forces the ring) */
    ck_assert_int_eq(cs_nccl_pick(21212, &m, CS_COLL_ALLREDUCE, 65536, 16, 2, 24, 0, &a, &q, NULL),
                     0);
    ck_assert_int_eq(a, CS_NCCL_ALGO_TREE);
    ck_assert_int_eq(cs_nccl_pick(21212, &m, CS_COLL_ALLREDUCE, 65536, 16, 2, 24, CS_NCCL_ALGO_RING,
                                  &a, &q, NULL),
                     0);
    ck_assert_int_eq(a, CS_NCCL_ALGO_RING);
}
END_TEST

/* gen nccl's tree: every shape of 1 to 5 nodes of 1 to 8 GPUs, 1 to 4 channels, each protocol,
 * is within the runtime's limits and correct under verify (structure, deadlock, data). */
START_TEST(test_nccl_gen_tree)
{
    static const int per[] = {1, 2, 3, 8};

    for (int nodes = 1; nodes <= 5; nodes++)
        for (size_t i = 0; i < sizeof(per) / sizeof(per[0]); i++)
            for (int ch = 1; ch <= 4; ch++) {
                struct cs_gen_opts o = {.gpus = nodes * per[i],
                                        .channels = ch,
                                        .nodes = nodes,
                                        .size_bytes = 1LL << 30,
                                        .proto = (enum cs_proto)(1 + ch % 3),
                                        .nccl_algo = CS_NCCL_ALGO_TREE};
                struct cs_verify_opts vo = {
                    .max_diags = 4, .runtime = CS_VERIFY_ANY, .gpu_sms = -1};
                struct cs_verify_result *res = NULL;
                struct cs_sched *s = NULL;
                struct cs_nccl_width w;
                struct cs_error err;

                if (o.gpus < 2)
                    continue;
                cs_error_init(&err);
                ck_assert_msg(cs_gen_nccl(&o, &s, &w, &err) == 0, "%d x %d: %s", nodes, per[i],
                              err.msg);
                ck_assert_int_eq(w.algo, CS_NCCL_ALGO_TREE);
                ck_assert_int_eq(w.channels, ch);
                ck_assert_int_eq(cs_verify_check_opts(s, &vo, &res), 0);
                ck_assert_msg(res->verdict == CS_VERIFY_OK, "%d nodes x %d, %d ch: %s", nodes,
                              per[i], ch, res->ndiags ? res->diags[0].msg : "");
                cs_verify_result_free(res);
                ck_assert(strstr(s->name, "_tree_") != NULL);
                cs_sched_free(s);
            }
}
END_TEST

/* The tree forwards as NCCL's kernel does, one fused step per direction: on one node of 8 GPUs
 * (channel 0: the chain 0 - 1 - ... - 7, GPU 0 its root), GPU 0 reduces and sends back down in
 * one rrcs, each inner GPU r streams up (rrs: from r + 1 to r - 1) and down (rcs: from r - 1 to
 * r + 1), and the tail sends up and receives its result (s, r). */
START_TEST(test_nccl_gen_tree_fused)
{
    struct cs_gen_opts o = {.gpus = 8,
                            .channels = 1,
                            .nodes = 1,
                            .size_bytes = 1 << 20,
                            .proto = CS_PROTO_LL,
                            .nccl_algo = CS_NCCL_ALGO_TREE};
    struct cs_sched *s = NULL;
    struct cs_nccl_width w;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_gen_nccl(&o, &s, &w, &err) == 0, "%s", err.msg);
    for (int r = 0; r < 8; r++) {
        const struct cs_gpu *g = cs_sched_find_gpu(s, r);
        int up = 0, down = 0;

        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(g->ntbs, r == 0 || r == 7 ? 1 : 2);
        for (int t = 0; t < g->ntbs; t++) {
            const struct cs_tb *tb = &g->tbs[t];

            for (int i = 0; i < tb->nsteps; i++) {
                enum cs_step_type ty = tb->steps[i].type;

                if (r == 0) {
                    ck_assert(ty == CS_STEP_RRCS && tb->recv == 1 && tb->send == 1);
                    up++, down++;
                } else if (r == 7) {
                    ck_assert(tb->recv == 6 && tb->send == 6);
                    ck_assert_int_eq(ty, i == 0 ? CS_STEP_S : CS_STEP_R);
                    i == 0 ? up++ : down++;
                } else if (ty == CS_STEP_RRS) {
                    ck_assert(tb->recv == r + 1 && tb->send == r - 1);
                    up++;
                } else {
                    ck_assert_int_eq(ty, CS_STEP_RCS);
                    ck_assert(tb->recv == r - 1 && tb->send == r + 1);
                    down++;
                }
            }
        }
        ck_assert_msg(up == 1 && down == 1, "gpu %d: %d up and %d down steps", r, up, down);
    }
    cs_sched_free(s);
}
END_TEST

/* The tree is for AllReduce, and gen nccl picks it where the model does. */
START_TEST(test_nccl_gen_choice)
{
    struct cs_gen_opts o = {.gpus = 16, .nodes = 2, .size_bytes = 65536, .proto = CS_PROTO_LL};
    struct cs_sched *s = NULL;
    struct cs_nccl_width w;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_gen_nccl(&o, &s, &w, &err), 0);
    ck_assert_int_eq(w.algo, CS_NCCL_ALGO_TREE);
    cs_sched_free(s);
    o.size_bytes = 1LL << 30;
    o.proto = CS_PROTO_SIMPLE;
    ck_assert_int_eq(cs_gen_nccl(&o, &s, &w, &err), 0);
    ck_assert_int_eq(w.algo, CS_NCCL_ALGO_RING);
    ck_assert(strstr(s->name, "_ring_") != NULL);
    cs_sched_free(s);
    o.coll = CS_COLL_ALLGATHER;
    o.nccl_algo = CS_NCCL_ALGO_TREE;
    ck_assert_int_eq(cs_gen_nccl(&o, &s, &w, &err), CS_ERR_USAGE);
    ck_assert(strstr(err.msg, "AllReduce only") != NULL);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_nccl_width, 1},      {test_nccl_window, 1},   {test_nccl_version_name, 1},
        {test_nccl_tree_width, 1}, {test_nccl_dtree, 1},    {test_nccl_model_worked_example, 1},
        {test_nccl_pick_algo, 1},  {test_nccl_gen_tree, 1}, {test_nccl_gen_tree_fused, 1},
        {test_nccl_gen_choice, 1}, {test_nccl_pick, 1},     {NULL, 0},
    };

    return test_run("nccl", 0, tests, NULL);
}
