/* check_sweep.c: sweep files: parsing, checks with file:line, and expansion into points. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "sweep.h"
#include "testutil.h"

static struct cs_sweep *parse_ok(const char *text)
{
    struct cs_sweep *sw = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sweep_parse(text, "t.sweep", "/d", &sw, &err) == 0, "%s:%d: %s", err.file,
                  err.line, err.msg);
    return sw;
}

/* Parse must fail at `line` with a message containing `what`. */
static void parse_bad(const char *text, int line, const char *what)
{
    struct cs_sweep *sw = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sweep_parse(text, "t.sweep", "/d", &sw, &err) != 0, "accepted: %s", text);
    ck_assert_ptr_null(sw);
    ck_assert_str_eq(err.file, "t.sweep");
    ck_assert_msg(err.line == line, "line %d, want %d (%s)", err.line, line, err.msg);
    ck_assert_msg(strstr(err.msg, what) != NULL, "message '%s' lacks '%s'", err.msg, what);
}

static const char base[] = "gen.algorithm = hierarchical\n"
                           "platform.family = a100-hier\n"
                           "sizes = 1K..1M\n";

START_TEST(product_order)
{
    struct cs_sweep *sw = parse_ok("# comment\n"
                                   "gen.algorithm = hierarchical   # trailing comment\n"
                                   "protocol = LL LL128 Simple\n"
                                   "platform.family = a100-hier\n"
                                   "set.cs.link_Bps.pcie = 12e9 24e9\n"
                                   "sizes = 1K..1M x4 8M\n");
    const char *v[CS_SWEEP_MAX_KEYS];
    int ip = cs_sweep_find_key(sw, "protocol"), ib = cs_sweep_find_key(sw, "set.cs.link_Bps.pcie");

    ck_assert_int_eq(sw->nkeys, 4);
    ck_assert_str_eq(sw->keys[0], "gen.algorithm");
    ck_assert_str_eq(sw->keys[3], "set.cs.link_Bps.pcie");
    ck_assert_int_eq(sw->npoints, 6);
    /* the first axis varies slowest */
    ck_assert_int_eq(cs_sweep_point(sw, 0, v), 0);
    ck_assert_str_eq(v[ip], "LL");
    ck_assert_str_eq(v[ib], "12e9");
    cs_sweep_point(sw, 1, v);
    ck_assert_str_eq(v[ip], "LL");
    ck_assert_str_eq(v[ib], "24e9");
    cs_sweep_point(sw, 4, v);
    ck_assert_str_eq(v[ip], "Simple");
    ck_assert_str_eq(v[ib], "12e9");
    ck_assert_str_eq(v[0], "hierarchical");
    ck_assert_int_eq(cs_sweep_point(sw, 6, v), CS_ERR_USAGE);
    ck_assert_int_eq(cs_sweep_point(sw, -1, v), CS_ERR_USAGE);
    /* sizes */
    ck_assert_int_eq(sw->nsizes, 2);
    ck_assert_int_eq(sw->sizes[0].min_bytes, 1024);
    ck_assert_int_eq(sw->sizes[0].max_bytes, 1 << 20);
    ck_assert(sw->sizes[0].factor == 4);
    ck_assert_int_eq(sw->sizes[1].min_bytes, 8 << 20);
    ck_assert_int_eq(sw->sizes[1].max_bytes, 8 << 20);
    ck_assert_str_eq(sw->dir, "/d");
    cs_sweep_free(sw);
}
END_TEST

/* Every point appears exactly once: the expansion is a bijection onto the product. */
START_TEST(product_complete)
{
    struct cs_sweep *sw = parse_ok("gen.algorithm = ring allpairs\n"
                                   "gen.gpus = 4 8 16\n"
                                   "protocol = LL Simple\n"
                                   "platform.family = dgx-a100\n"
                                   "platform.nodes = 1 2\n"
                                   "platform.between = pcie\n"
                                   "sizes = 64K\n");
    const char *v[CS_SWEEP_MAX_KEYS];
    char seen[24][64];

    ck_assert_int_eq(sw->npoints, 24);
    for (long k = 0; k < sw->npoints; k++) {
        cs_sweep_point(sw, k, v);
        snprintf(seen[k], sizeof(seen[k]), "%s/%s/%s/%s", v[0], v[1], v[2], v[4]);
        for (long j = 0; j < k; j++)
            ck_assert_str_ne(seen[j], seen[k]);
    }
    cs_sweep_free(sw);
}
END_TEST

START_TEST(linked_axes)
{
    struct cs_sweep *sw = parse_ok("gen.algorithm = hierarchical\n"
                                   "gen.columns = 2\n"
                                   "platform.rows gen.gpus = 2,4 4,8 8,16\n"
                                   "protocol = LL Simple\n"
                                   "platform.family = a100-hier\n"
                                   "sizes = 1K\n");
    const char *v[CS_SWEEP_MAX_KEYS];
    int ir = cs_sweep_find_key(sw, "platform.rows"), ig = cs_sweep_find_key(sw, "gen.gpus");

    ck_assert_int_eq(sw->npoints, 6);
    for (long k = 0; k < 6; k++) {
        cs_sweep_point(sw, k, v);
        ck_assert_int_eq(atoi(v[ig]), 2 * atoi(v[ir]));
    }
    cs_sweep_point(sw, 5, v);
    ck_assert_str_eq(v[ig], "16");
    ck_assert_str_eq(v[cs_sweep_find_key(sw, "protocol")], "Simple");
    cs_sweep_free(sw);
}
END_TEST

/* Listed points: one linked axis over every varying key. */
START_TEST(listed_points)
{
    struct cs_sweep *sw = parse_ok("gen.algorithm protocol gen.instances gen.channels = \\\n"
                                   "    ring,LL,1,4 \\\n"
                                   "    allpairs,LL128,2,-\n"
                                   "platform.family = dgx-a100\n"
                                   "sizes = 1K\n");
    const char *v[CS_SWEEP_MAX_KEYS];

    ck_assert_int_eq(sw->npoints, 2);
    cs_sweep_point(sw, 1, v);
    ck_assert_str_eq(v[0], "allpairs");
    ck_assert_str_eq(v[1], "LL128");
    ck_assert_str_eq(v[2], "2");
    ck_assert_str_eq(v[3], "-");
    cs_sweep_free(sw);
}
END_TEST

START_TEST(files_and_scale)
{
    struct cs_sweep *sw = parse_ok("schedule = a.xml b.xml\n"
                                   "platform.family = a100-pcie-4gpu\n"
                                   "scale.cs.link_Bps.pcie = 0.5 1 2\n"
                                   "scale.cs.link_lat_s.pcie = 2\n"
                                   "dtype = half\n"
                                   "sizes = 4096\n");

    ck_assert_int_eq(sw->npoints, 6);
    cs_sweep_free(sw);
    sw = parse_ok("schedule = s.xml\nplatform = p.xml\nsizes = 1G\n");
    ck_assert_int_eq(sw->npoints, 1);
    ck_assert_int_eq(sw->sizes[0].min_bytes, 1LL << 30);
    cs_sweep_free(sw);
}
END_TEST

START_TEST(bad_input)
{
    parse_bad("gen.algorithm = x\nfoo = 1\n", 2, "unknown key 'foo'");
    parse_bad("gen.algorithm = x\nprotocol = LL\nprotocol = LL128\n", 3, "given twice");
    parse_bad("gen.algorithm = x\nprotocol = LL LL129\n", 2, "invalid value 'LL129'");
    parse_bad("gen.algorithm = x\ngen.gpus = 0\n", 2, "not an integer");
    parse_bad("gen.algorithm = x\ngen.gpus = 8x\n", 2, "not an integer");
    parse_bad("gen.algorithm = x\ngen.compat = 2\n", 2, "not 0 or 1");
    parse_bad("gen.algorithm = x\nplatform.between = pcie nvlink\n", 2, "invalid value 'nvlink'");
    parse_bad("gen.algorithm = x\nset.cs.nope = 1\n", 2, "unknown key 'set.cs.nope'");
    parse_bad("gen.algorithm = x\nset.cs.link_Bps.pcie = -1\n", 2, "set.cs.link_Bps.pcie");
    parse_bad("gen.algorithm = x\nscale.cs.link_Bps.pcie = 0\n", 2, "positive");
    parse_bad("gen.algorithm = x\nplatform.rows gen.gpus = 2,4 4\n", 2, "2 comma-separated");
    parse_bad("gen.algorithm = x\nplatform.rows gen.gpus = 2,4,5\n", 2, "2 comma-separated");
    parse_bad("gen.algorithm = x\nprotocol = LL,Simple\n", 2, "1 comma-separated value");
    parse_bad("gen.algorithm = x\nprotocol = LL LL\n", 2, "repeats");
    parse_bad("gen.algorithm = x\nprotocol =\n", 2, "no value");
    parse_bad("gen.algorithm = x\n= LL\n", 2, "no key");
    parse_bad("gen.algorithm = x\nprotocol LL\n", 2, "expected 'KEY = VALUE");
    parse_bad("gen.algorithm = x\nsizes = 1K..\n", 2, "not a size");
    parse_bad("gen.algorithm = x\nsizes = 2K..1K\n", 2, "not a size");
    parse_bad("gen.algorithm = x\nsizes = 1K..1Mx1\n", 2, "not a size");
    parse_bad("gen.algorithm = x\nsizes = 0\n", 2, "not a size");
    parse_bad("gen.algorithm = x\nsizes = x4\n", 2, "'x4' is not a size");
    parse_bad("gen.algorithm = x\nsizes = 1K x4\n", 2, "'x4' is not a size");
    parse_bad("gen.algorithm = x\nsizes = 1K..2Kx2 x4\n", 2, "'x4' is not a size");
    parse_bad("gen.algorithm = x\nsizes = 1T\n", 2, "not a size");
    parse_bad("gen.algorithm = x\nsizes = 1K\nsizes = 2K\n", 3, "twice");
    parse_bad("gen.algorithm = x\nprotocol sizes = LL,1K\n", 2, "cannot be linked");
    parse_bad("schedule = 'a b'.xml\n", 1, "quote");
    parse_bad("gen.algorithm = -\n", 1, "cannot be left out");
    /* whole-file rules (line 0) */
    parse_bad("platform.family = a\nsizes = 1K\n", 0, "no schedule");
    parse_bad("schedule = a.xml\ngen.algorithm = ring\nplatform.family = a\nsizes = 1K\n", 0,
              "not both");
    parse_bad("schedule = a.xml\nsizes = 1K\n", 0, "no platform");
    parse_bad("schedule = a.xml\nplatform = p.xml\nplatform.nodes = 2\nsizes = 1K\n", 0,
              "needs 'platform.family'");
    parse_bad("schedule = a.xml\ngen.gpus = 8\nplatform.family = a\nsizes = 1K\n", 0,
              "needs 'gen.algorithm'");
    parse_bad("schedule = a.xml\nplatform.family = a\n", 0, "no 'sizes'");
    parse_bad("schedule = a.xml\nplatform.family = a\nsizes = 1K\n"
              "set.cs.link_Bps.pcie = 1e9\nscale.cs.link_Bps.pcie = 2\n",
              0, "both given");
    parse_bad("schedule = a.xml\nplatform.family = a\nsizes = 1K\n"
              "gen.algorithm = a\n",
              0, "not both");
}
END_TEST

START_TEST(too_many_points)
{
    char text[4096] = "gen.algorithm = x\nplatform.family = a\nsizes = 1K\n";

    for (int a = 0; a < 3; a++) {
        strcat(text, a == 0 ? "gen.gpus =" : a == 1 ? "gen.columns =" : "gen.instances =");
        for (int i = 1; i <= 101; i++) {
            char v[8];

            snprintf(v, sizeof(v), " %d", i);
            strcat(text, v);
        }
        strcat(text, "\n");
    }
    parse_bad(text, 6, "more than 1000000 points");
}
END_TEST

/* Sizes are read by cs_parse_size: K, M, G units (also Ki, KB), no sign, no overflow, below 1 TiB.
 */
static long long one_size(const char *tok)
{
    char text[256];
    struct cs_sweep *sw;
    long long v;

    snprintf(text, sizeof(text), "%ssizes = %s\n", "gen.algorithm = x\nplatform.family = a\n", tok);
    sw = parse_ok(text);
    v = sw->sizes[0].min_bytes;
    ck_assert_int_eq(sw->sizes[0].max_bytes, v);
    cs_sweep_free(sw);
    return v;
}

START_TEST(bytes)
{
    ck_assert_int_eq(one_size("4096"), 4096);
    ck_assert_int_eq(one_size("64K"), 65536);
    ck_assert_int_eq(one_size("2G"), 2LL << 30);
    ck_assert_int_eq(one_size("1KB"), 1024);
    ck_assert_int_eq(one_size("1023G"), 1023LL << 30);
    parse_bad("gen.algorithm = x\nsizes = -1\n", 2, "'-1' is not a size");
    parse_bad("gen.algorithm = x\nsizes = K\n", 2, "'K' is not a size");
    parse_bad("gen.algorithm = x\nsizes = 99999999999999999999\n", 2, "not a size");
    parse_bad("gen.algorithm = x\nsizes = 9999999999999G\n", 2, "not a size");
    parse_bad("gen.algorithm = x\nsizes = 1K..17179869185G\n", 2, "not a size");
}
END_TEST

/* A UTF-8 byte order mark at the start of a sweep file is skipped: it is not part of the first
 * key, and lines are counted as without it. */
START_TEST(byte_order_mark)
{
    char text[512];
    struct cs_sweep *sw;

    snprintf(text, sizeof(text), "\xef\xbb\xbf%s", base);
    sw = parse_ok(text);
    ck_assert_str_eq(sw->keys[0], "gen.algorithm");
    ck_assert_int_eq(cs_sweep_find_key(sw, "gen.algorithm"), 0);
    cs_sweep_free(sw);
    parse_bad("\xef\xbb\xbf\ngen.algorithm = x\nfoo = 1\n", 3, "unknown key 'foo'");
    /* elsewhere it is no blank */
    parse_bad("gen.algorithm = x\n\xef\xbb\xbfprotocol = LL\n", 2, "unknown key");
}
END_TEST

/* A repeated value names the first value that repeats an earlier one, and the first it repeats. */
START_TEST(repeats)
{
    parse_bad("gen.algorithm = x\nprotocol = LL Simple LL128 Simple LL\n", 2,
              "value 4 repeats value 2");
    parse_bad("gen.algorithm = x\nplatform.rows gen.gpus = 2,4 4,4 2,8 4,4 2,4\n", 2,
              "value 4 repeats value 2");
    parse_bad("gen.algorithm = x\ngen.gpus = 8 4 2 2 2\n", 2, "value 4 repeats value 3");
}
END_TEST

/* An axis of 200,000 values, and one more repeating the first: the repeat check sorts, where
 * comparing every pair took minutes (this test's timeout is Check's default). */
START_TEST(large_axis)
{
    const int n = 200000;
    size_t cap = (size_t)n * 12 + 256, len;
    char *text = malloc(cap);
    struct cs_sweep *sw;

    ck_assert_ptr_nonnull(text);
    len = (size_t)snprintf(text, cap, "platform.family = a\nsizes = 1K\ngen.algorithm =");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, " a%d", i);
    snprintf(text + len, cap - len, "\n");
    sw = parse_ok(text);
    ck_assert_int_eq(sw->npoints, n);
    ck_assert_int_eq(sw->axes[1].nvals, n);
    cs_sweep_free(sw);
    snprintf(text + len, cap - len, " a0\n");
    parse_bad(text, 3, "value 200001 repeats value 1");
    free(text);
}
END_TEST

/* A point's values by key ('-' and absent keys are NULL), and paths resolved against the
 * sweep's folder. */
START_TEST(value_and_path)
{
    struct cs_sweep *sw = parse_ok("schedule = a.xml /abs/b.xml\n"
                                   "platform.family = dgx-a100\n"
                                   "platform.nodes = 2 -\n"
                                   "sizes = 1K\n");
    const char *v[CS_SWEEP_MAX_KEYS];
    char buf[16];

    cs_sweep_point(sw, 0, v);
    ck_assert_str_eq(cs_sweep_value(sw, v, "platform.nodes"), "2");
    ck_assert_ptr_null(cs_sweep_value(sw, v, "protocol"));
    ck_assert_int_eq(cs_sweep_path(sw, cs_sweep_value(sw, v, "schedule"), buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "/d/a.xml");
    cs_sweep_point(sw, 3, v);
    ck_assert_ptr_null(cs_sweep_value(sw, v, "platform.nodes"));
    ck_assert_int_eq(cs_sweep_path(sw, cs_sweep_value(sw, v, "schedule"), buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "/abs/b.xml");
    ck_assert_int_eq(cs_sweep_path(sw, "a-very-long-name.xml", buf, sizeof(buf)), CS_ERR_USAGE);
    cs_sweep_free(sw);
}
END_TEST

START_TEST(read_file)
{
    struct cs_sweep *sw = NULL;
    struct cs_error err;
    char path[256];
    FILE *fp;

    snprintf(path, sizeof(path), "/tmp/check_sweep.%d.sweep", (int)getpid());
    fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(base, fp);
    fclose(fp);
    cs_error_init(&err);
    ck_assert_int_eq(cs_sweep_read(path, &sw, &err), 0);
    ck_assert_str_eq(sw->dir, "/tmp");
    ck_assert_str_eq(sw->path, path);
    cs_sweep_free(sw);
    unlink(path);
    cs_error_init(&err);
    ck_assert_int_eq(cs_sweep_read(path, &sw, &err), CS_ERR_IO);
    ck_assert(strstr(err.msg, "cannot open") != NULL);
    cs_error_init(&err);
    ck_assert_int_eq(cs_sweep_read("/tmp", &sw, &err), CS_ERR_IO);
    ck_assert(strstr(err.msg, "not a regular file") != NULL);
    cs_sweep_free(NULL);
}
END_TEST

/* The example sweeps committed in results/sweeps/ parse. */
START_TEST(examples_parse)
{
    const char *ex[] = {"hier-pcie.sweep", "ndv4-plan.sweep", "listed.sweep"};

    for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
        char path[4096];
        struct cs_sweep *sw = NULL;
        struct cs_error err;

        snprintf(path, sizeof(path), "%s/results/sweeps/%s", test_srcdir(), ex[i]);
        cs_error_init(&err);
        ck_assert_msg(cs_sweep_read(path, &sw, &err) == 0, "%s:%d: %s", err.file, err.line,
                      err.msg);
        ck_assert_int_gt(sw->npoints, 1);
        cs_sweep_free(sw);
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {product_order, 1},
        {product_complete, 1},
        {linked_axes, 1},
        {listed_points, 1},
        {files_and_scale, 1},
        {bad_input, 1},
        {too_many_points, 1},
        {bytes, 1},
        {value_and_path, 1},
        {read_file, 1},
        {examples_parse, 1},
        {byte_order_mark, 1},
        {repeats, 1},
        {large_axis, 1},
        {NULL, 0},
    };

    return test_run("sweep", 0, tests, NULL);
}
