/* check_nccl.c: NCCL's channels and threads per size and protocol, versions, size windows. */
#include <check.h>
#include <string.h>

#include "nccl.h"
#include "runner.h"

/* NCCL's channels and threads for (protocol, size) on 8 ranks and 24 channels: the worked values of
 * nccl-a100.md 1.6b, each at its boundary. */
static struct cs_nccl_width width(enum cs_proto proto, long long nbytes, int nranks, int nc)
{
    struct cs_nccl_width w = {0, 0, 0};
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

    /* Versions: 2.8.0 to the last 2.18; outside that range the rule is refused. */
    ck_assert_int_eq(cs_nccl_version_parse("2.8", &code, NULL), 0);
    ck_assert_int_eq(code, 20800);
    ck_assert_int_eq(cs_nccl_version_parse("2.18.5", &code, NULL), 0);
    ck_assert_int_eq(code, 21805);
    ck_assert_int_eq(cs_nccl_version_parse("2.12.12", &code, NULL), 0);
    ck_assert_int_eq(code, 21212);
    cs_error_init(&err);
    ck_assert_int_eq(cs_nccl_version_parse("2.19", &code, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "NCCL 2.19: the channel and thread rule is sourced for "
                                          "NCCL 2.8 to 2.18 only"));
    ck_assert_int_eq(cs_nccl_version_parse("2.7.8", &code, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_nccl_version_parse("3.0", &code, NULL), CS_ERR_INVALID);
    ck_assert_int_eq(code, 21212); /* unchanged on failure */
    for (const char *const *b = (const char *const[]){"2", "2.", "2.8.", "2..8", "2.8.4.1", "2.8x",
                                                      "v2.8", "2.100", "", NULL};
         *b != NULL; b++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_nccl_version_parse(*b, &code, &err), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(err.msg, "MAJOR.MINOR or MAJOR.MINOR.PATCH"));
    }
    cs_error_init(&err);
    ck_assert_int_eq(cs_nccl_width(21900, CS_PROTO_LL, 1024, 8, 24, &w, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "NCCL 2.8 to 2.18 only"));
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
        cs_nccl_window(21900, CS_PROTO_LL, 1, 8, 24, &(long long){0}, &(long long){0}, NULL),
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

int main(void)
{
    const struct test_case tests[] = {
        {test_nccl_width, 1},
        {test_nccl_window, 1},
        {test_nccl_version_name, 1},
        {NULL, 0},
    };

    return test_run("nccl", 0, tests, NULL);
}
