/* check_xml.c: the XML reader and writer: round trips, attribute checks, safety. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "testutil.h"
#include "xml.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    char *buf;
    long n;

    if (fp == NULL)
        return NULL;
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        fclose(fp);
        return NULL;
    }
    fclose(fp);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Read path, write it back to memory, compare bytes. Returns 1 when identical. */
static int round_trips(const char *path)
{
    struct cs_sched *s = NULL;
    struct cs_error err;
    size_t len, olen;
    char *in = read_file(path, &len), *out = NULL;
    FILE *mem;
    int same;

    cs_error_init(&err);
    ck_assert_msg(in != NULL, "cannot read %s", path);
    ck_assert_msg(cs_sched_read_xml_mem(in, len, path, &s, &err) == 0, "%s:%d: %s", err.file,
                  err.line, err.msg);
    mem = open_memstream(&out, &olen);
    ck_assert_int_eq(cs_sched_write_xml(s, mem), 0);
    fclose(mem);
    same = olen == len && memcmp(in, out, len) == 0;
    free(in);
    free(out);
    cs_sched_free(s);
    return same;
}

static int round_trip_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    char path[8192];

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);

        if (l < 5 || strcmp(e->d_name + l - 4, ".xml") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        ck_assert_msg(round_trips(path), "fmt output differs from %s", path);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(test_round_trip_local)
{
    char dir[8192];

    snprintf(dir, sizeof(dir), "%s/tests/data/msccl-xml", test_srcdir());
    ck_assert_int_gt(round_trip_dir(dir), 0);
}
END_TEST

START_TEST(test_round_trip_shared)
{
    const char *shared = test_shared_data();
    char dir[8192];
    int n = 0;

    ck_assert_ptr_nonnull(shared);
    snprintf(dir, sizeof(dir), "%s/msccl-xml", shared);
    n += round_trip_dir(dir);
    snprintf(dir, sizeof(dir), "%s/msccl-xml/azure-msccl-tools", shared);
    n += round_trip_dir(dir);
    snprintf(dir, sizeof(dir), "%s/msccl-xml/fixed-example", shared);
    n += round_trip_dir(dir);
    ck_assert_int_ge(n, 90);
}
END_TEST

static int read_str(const char *xml, struct cs_error *err)
{
    struct cs_sched *s = NULL;
    int rc;

    cs_error_init(err);
    rc = cs_sched_read_xml_mem(xml, strlen(xml), "t.xml", &s, err);
    cs_sched_free(s);
    return rc;
}

#define HEAD                                                                                       \
    "<algo name=\"t\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"2\" "              \
    "coll=\"allgather\" inplace=\"0\">\n"

START_TEST(test_errors_have_lines)
{
    struct cs_error err;

    ck_assert_int_eq(read_str(HEAD "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
                                   "    <tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
                                   "      <step s=\"0\" type=\"sendd\" srcbuf=\"i\" srcoff=\"0\" "
                                   "dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" "
                                   "hasdep=\"0\"/>\n",
                              &err),
                     CS_ERR_PARSE);
    ck_assert_int_eq(read_str(HEAD
                              "  <gpu id=\"0\" i_chunks=\"x\" o_chunks=\"2\" s_chunks=\"0\"/>\n"
                              "  <gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"/>\n"
                              "</algo>\n",
                              &err),
                     CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "i_chunks"));
    ck_assert_int_eq(read_str("<!DOCTYPE a [<!ENTITY x \"y\">]>\n<algo/>", &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 1);
}
END_TEST

/* Integer attributes are digits with an optional '-': no '+', blanks or overflow. */
START_TEST(test_integer_attributes)
{
    static const struct {
        const char *value, *msg;
    } cases[] = {
        {"+1", "is not an integer"},
        {" 1", "is not an integer"},
        {"1 ", "is not an integer"},
        {"-", "is not an integer"},
        {"", "is not an integer"},
        {"4096", "out of range [-1, 4095]"},
        {"-2", "out of range"},
        {"99999999999999999999", "out of range"},
        {"-99999999999999999999", "out of range"},
    };
    char xml[512];
    struct cs_error err;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(xml, sizeof(xml),
                 "<algo name=\"t\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"1\" "
                 "ngpus=\"1\" coll=\"allgather\" inplace=\"0\">\n"
                 "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
                 "    <tb id=\"0\" send=\"%s\" recv=\"-1\" chan=\"0\"/>\n"
                 "  </gpu>\n</algo>\n",
                 cases[i].value);
        ck_assert_int_eq(read_str(xml, &err), CS_ERR_INVALID);
        ck_assert_int_eq(err.line, 3);
        ck_assert_msg(strstr(err.msg, cases[i].msg) != NULL, "'%s': %s", cases[i].value, err.msg);
    }
}
END_TEST

/* The streaming reader decodes references in attribute values as the tree did: '&' (which the
 * parser hands over as "&#38;"), the other predefined entities and character references. */
START_TEST(test_attribute_references)
{
    static const char xml[] = "<algo name=\"a&amp;b&#38;c&lt;&#x41;&amp;#38;\" proto=\"LL\" "
                              "nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"1\" "
                              "coll=\"allgather\" inplace=\"0\">\n"
                              "  <gpu id=\"&#48;\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\"/>\n"
                              "</algo>\n";
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_sched_read_xml_mem(xml, sizeof(xml) - 1, "t.xml", &s, &err), 0);
    ck_assert_str_eq(s->name, "a&b&c<A&#38;");
    ck_assert_int_eq(s->gpus[0].id, 0);
    cs_sched_free(s);
}
END_TEST

/* The DOCTYPE is refused by the parser, not by a scan of the bytes: a processing instruction
 * holding a comment opener does not hide it, and neither does UTF-16. A NUL byte after the root
 * is an error, not the end of the file. */
START_TEST(test_doctype_and_nul)
{
    static const char pi[] = "<?x <!-- ?>\n<!DOCTYPE algo [<!ENTITY a \"b\">]>\n<algo/>\n";
    static const char nul[] = "<algo name=\"t\"/>\n\0<x>";
    char utf16[256];
    size_t n = 0;
    struct cs_sched *s = NULL;
    struct cs_error err;

    ck_assert_int_eq(read_str(pi, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "document type declarations"));
    utf16[n++] = '\xff';
    utf16[n++] = '\xfe';
    for (const char *p = pi + 12; *p; p++) {
        utf16[n++] = *p;
        utf16[n++] = '\0';
    }
    cs_error_init(&err);
    ck_assert_int_eq(cs_sched_read_xml_mem(utf16, n, "t.xml", &s, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 1);
    ck_assert_ptr_nonnull(strstr(err.msg, "document type declarations"));
    cs_error_init(&err);
    ck_assert_int_eq(cs_sched_read_xml_mem(nul, sizeof(nul) - 1, "t.xml", &s, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "NUL byte"));
}
END_TEST

/* What breaks a rule of the model or the runtime, but not the syntax or an attribute's type, is
 * read: verify reports it (a 48-channel file, a gpu that sends to itself, a step index that is
 * off, sparse tb ids, a dependency on a missing step, ngpus against the <gpu> count). */
START_TEST(test_validity_left_to_verify)
{
    static const char *const bodies[] = {
        "<algo name=\"t\" proto=\"LL\" nchannels=\"48\" nchunksperloop=\"1\" ngpus=\"1\" "
        "coll=\"allgather\" inplace=\"0\">\n<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" "
        "s_chunks=\"0\"><tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"47\"/></gpu></algo>",
        HEAD "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\"><tb id=\"5\" "
             "send=\"0\" recv=\"3\" chan=\"0\"><step s=\"7\" type=\"nop\" srcbuf=\"i\" "
             "srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"3\" depid=\"9\" deps=\"-1\" "
             "hasdep=\"0\"/></tb></gpu></algo>",
    };
    struct cs_sched *s = NULL;
    struct cs_error err;

    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        cs_error_init(&err);
        ck_assert_msg(cs_sched_read_xml_mem(bodies[i], strlen(bodies[i]), "t.xml", &s, &err) == 0,
                      "%zu: %d: %s", i, err.line, err.msg);
        ck_assert_int_eq(s->ngpus_alloc, 1);
        cs_sched_free(s);
        s = NULL;
    }
}
END_TEST

/* An unknown attribute is a warning kept in the schedule, with its line; a bad value of a known
 * one is still an error. */
START_TEST(test_unknown_attribute_warns)
{
    static const char xml[] = HEAD "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
                                   "<tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\" "
                                   "nthreads=\"512\"/></gpu>\n</algo>\n";
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_sched_read_xml_mem(xml, sizeof(xml) - 1, "t.xml", &s, &err), 0);
    ck_assert_int_eq(s->nwarnings, 1);
    ck_assert_int_eq(s->warnings[0].line, 3);
    ck_assert_ptr_nonnull(strstr(s->warnings[0].msg, "<tb>: unknown attribute 'nthreads'"));
    cs_sched_free(s);
    ck_assert_int_eq(read_str(HEAD "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
                                   "<tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"x\"/></gpu>\n"
                                   "</algo>\n",
                              &err),
                     CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "chan=\"x\" is not an integer"));
}
END_TEST

/* The stream reader: the tap sees every byte once, in order; the schedule is the one read from
 * memory; a stream that gives more than its limit is refused as too large. */
struct tapped {
    char *buf;
    size_t n, cap, pieces;
};

static void tap_copy(void *ctx, const char *piece, size_t n)
{
    struct tapped *t = ctx;

    if (t->n + n > t->cap) {
        t->cap = 2 * (t->n + n);
        t->buf = realloc(t->buf, t->cap);
        ck_assert_ptr_nonnull(t->buf);
    }
    memcpy(t->buf + t->n, piece, n);
    t->n += n;
    t->pieces++;
}

START_TEST(test_stream)
{
    char path[8192], *in, *a = NULL, *b = NULL;
    size_t len, alen, blen;
    struct cs_sched *s = NULL, *m = NULL;
    struct tapped t = {0};
    struct cs_error err;
    FILE *fp;

    snprintf(path, sizeof(path), "%s/tests/data/msccl-xml/alltoall_allpairs.8gpu.1inst.LL128.xml",
             test_srcdir());
    ck_assert_ptr_nonnull(in = read_file(path, &len));
    ck_assert_uint_gt(len, 16384); /* more than one piece */
    cs_error_init(&err);
    ck_assert_ptr_nonnull(fp = fmemopen(in, len, "rb"));
    ck_assert_msg(cs_sched_read_xml_stream(fp, "f.xml", (long)len, tap_copy, &t, &s, &err) == 0,
                  "%s", err.msg);
    fclose(fp);
    ck_assert_uint_eq(t.n, len);
    ck_assert_uint_gt(t.pieces, 1);
    ck_assert(memcmp(t.buf, in, len) == 0);
    ck_assert_int_eq(cs_sched_read_xml_mem(in, len, "f.xml", &m, &err), 0);
    ck_assert_ptr_nonnull(fp = open_memstream(&a, &alen));
    ck_assert_int_eq(cs_sched_write_xml(s, fp), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(fp = open_memstream(&b, &blen));
    ck_assert_int_eq(cs_sched_write_xml(m, fp), 0);
    fclose(fp);
    ck_assert_uint_eq(alen, blen);
    ck_assert(memcmp(a, b, alen) == 0);
    cs_sched_free(s);
    cs_sched_free(m);
    s = NULL;
    ck_assert_ptr_nonnull(fp = fmemopen(in, len, "rb"));
    ck_assert_int_eq(cs_sched_read_xml_stream(fp, "f.xml", (long)len - 1, NULL, NULL, &s, &err),
                     CS_ERR_INVALID);
    fclose(fp);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err.msg, "file is larger than") != NULL, "%s", err.msg);
    free(t.buf);
    free(a);
    free(b);
    free(in);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_round_trip_local, 1},
        {test_errors_have_lines, 1},
        {test_integer_attributes, 1},
        {test_attribute_references, 1},
        {test_doctype_and_nul, 1},
        {test_validity_left_to_verify, 1},
        {test_unknown_attribute_warns, 1},
        {test_stream, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {
        {test_round_trip_shared, 1},
        {NULL, 0},
    };

    return test_run("xml", 120, tests, shared);
}
