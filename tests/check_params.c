/* check_params.c: parameter props files and notes, and the props a platform file carries. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params.h"
#include "platform.h"
#include "runner.h"

/* Write text to a new temporary file whose path goes to path (at least 32 bytes). */
static void write_tmp(char *path, const char *suffix, const char *text)
{
    int fd;
    FILE *fp;

    snprintf(path, 32, "/tmp/cs-params-XXXXXX%s", suffix);
    fd = mkstemps(path, (int)strlen(suffix));
    ck_assert_int_ge(fd, 0);
    fp = fdopen(fd, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Collects every key of cs_params_each, to put them all into notes. */
struct keys {
    int n;
    char key[64][64];
};

static void add_key(const char *key, double value, const char *source, void *ctx)
{
    struct keys *k = ctx;

    (void)value;
    (void)source;
    snprintf(k->key[k->n++], sizeof(k->key[0]), "%s", key);
}

START_TEST(notes_hold_every_key)
{
    struct cs_params p;
    struct keys k = {0};
    struct cs_param_notes *notes = calloc(1, sizeof(*notes));
    char extra[32];

    cs_params_init(&p);
    cs_params_each(&p, add_key, &k);
    ck_assert_int_le(k.n, CS_MAX_PARAM_NOTES);
    for (int i = 0; i < k.n; i++)
        ck_assert_int_eq(cs_param_notes_put(notes, k.key[i], "first"), 0);
    for (int i = 0; i < k.n; i++)
        ck_assert_int_eq(cs_param_notes_put(notes, k.key[i], "second"), 0);
    ck_assert_int_eq(notes->n, k.n);
    ck_assert_str_eq(cs_param_notes_get(notes, k.key[k.n - 1]), "second");
    ck_assert_ptr_null(cs_param_notes_get(notes, "cs.nothing"));
    ck_assert_ptr_null(cs_param_notes_get(NULL, "cs.launch_s"));
    /* Past the fixed slots a new key fails loudly rather than vanish. */
    for (int i = notes->n; i < CS_MAX_PARAM_NOTES; i++) {
        snprintf(extra, sizeof(extra), "k%d", i);
        ck_assert_int_eq(cs_param_notes_put(notes, extra, "x"), 0);
    }
    ck_assert_int_eq(cs_param_notes_put(notes, "one.too.many", "x"), -1);
    ck_assert_ptr_null(cs_param_notes_get(notes, "one.too.many"));
    free(notes);
}
END_TEST

START_TEST(set_values)
{
    struct cs_params p;
    struct cs_error err;

    cs_params_init(&p);
    ck_assert_int_eq(cs_params_set(&p, "cs.copy_Bps", "5e10", NULL), 0);
    ck_assert(p.copy_Bps == 5e10);
    ck_assert_int_eq(cs_params_set(&p, "cs.launch_s", "1e-400", NULL), 0);
    ck_assert(p.launch_s == 0);
    ck_assert_int_eq(cs_params_set(&p, "cs.call_s.LL128.net", "2e-6", NULL), 0);
    ck_assert(p.call_s[CS_PROTO_LL128][CS_LINK_NET] == 2e-6);
    for (const char *const *v = (const char *const[]){"1e400", "-1", "inf", "nan", "", "5x", NULL};
         *v != NULL; v++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_params_set(&p, "cs.copy_Bps", *v, &err), CS_ERR_INVALID);
        ck_assert_msg(strstr(err.msg, "is not a non-negative number") != NULL, "%s", err.msg);
    }
    ck_assert(p.copy_Bps == 5e10);
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_set(&p, "cs.call_s.LL128", "1", &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "unknown platform parameter") != NULL, "%s", err.msg);
    ck_assert_int_eq(cs_params_set(&p, "cs.tb_Bps.LL256", "1", NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_params_set(&p, "launch_s", "1", NULL), CS_ERR_INVALID);
    /* SMs per GPU and CTAs per SM are whole numbers from 1: an A100 by default. */
    ck_assert(p.gpu_sms == 108 && p.ctas_per_sm == 1);
    ck_assert_int_eq(cs_params_set(&p, "cs.gpu_sms", "132", NULL), 0);
    ck_assert_int_eq(cs_params_set(&p, "cs.ctas_per_sm", "2", NULL), 0);
    ck_assert(p.gpu_sms == 132 && p.ctas_per_sm == 2);
    for (const char *const *v = (const char *const[]){"0", "1.5", "1e3", "2000000", NULL};
         *v != NULL; v++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_params_set(&p, "cs.gpu_sms", *v, &err), CS_ERR_INVALID);
        ck_assert_msg(strstr(err.msg, "is not a whole number from 1 to 1048576") != NULL, "%s",
                      err.msg);
    }
    ck_assert_int_eq(cs_params_set(&p, "cs.ctas_per_sm", "0", NULL), CS_ERR_INVALID);
    ck_assert(p.gpu_sms == 132 && p.ctas_per_sm == 2);
    /* what hardware allows, by unit, with the unit in the message */
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_set(&p, "cs.link_Bps.nvlink", "1e-300", &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "a bandwidth from 1e3 to 1e15 B/s") != NULL, "%s", err.msg);
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_set(&p, "cs.tb_Bps.LL", "2e15", &err), CS_ERR_INVALID);
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_set(&p, "cs.launch_s", "1e300", &err), CS_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "a time from 0 to 1 s") != NULL, "%s", err.msg);
    ck_assert_int_eq(cs_params_set(&p, "cs.call_s.Simple.nvlink", "1.5", NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_params_set(&p, "cs.pass_bytes.LL", "2e9", NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_params_set(&p, "cs.launch_s", "0x10", NULL), CS_ERR_INVALID);
    ck_assert_int_eq(cs_params_set(&p, "cs.launch_s", "1", NULL), 0);
    ck_assert_int_eq(cs_params_set(&p, "cs.link_Bps.net", "1e3", NULL), 0);
}
END_TEST

static void in_range_cb(const char *key, double value, const char *source, void *ctx)
{
    (void)source;
    (void)ctx;
    ck_assert_msg(cs_params_in_range(key, value), "default %s = %g outside %s", key, value,
                  cs_params_range(key));
}

/* Every prior is within the range cs_params_set allows, so a platform collsim writes reads. */
START_TEST(defaults_in_range)
{
    struct cs_params p;

    cs_params_init(&p);
    cs_params_each(&p, in_range_cb, NULL);
}
END_TEST

START_TEST(read_props_file)
{
    char path[32];
    struct cs_params p;
    struct cs_param_notes notes = {0};
    struct cs_error err;
    double v;

    write_tmp(path, ".xml",
              "# fitted\n"
              "<!-- fit: a.csv -->\n"
              "<!--   second line  -->\n"
              "  <prop id=\"cs.launch_s\" value=\"1e-5\"/>\n"
              "\n"
              "<prop id=\"cs.tb_Bps.LL\" value=\"5e9\"/>\n"
              "<prop id=\"cs.launch_s\" value=\"2e-5\"/>\n");
    cs_params_init(&p);
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_read_props(&p, path, &notes, &err), 0);
    ck_assert_int_eq(cs_params_get(&p, "cs.launch_s", &v), 0);
    ck_assert(v == 2e-5);
    ck_assert(p.tb_Bps[CS_PROTO_LL] == 5e9);
    ck_assert_str_eq(cs_param_notes_get(&notes, "cs.tb_Bps.LL"), path);
    ck_assert_str_eq(cs_param_notes_get(&notes, "cs.launch_s"), path);
    unlink(path);

    write_tmp(path, ".xml", "<!-- a --><!-- b -->\n");
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_read_props(&p, path, NULL, &err), 0);
    unlink(path);

    write_tmp(path, ".xml", "<!-- ok -->\n<prop id=\"cs.launch_s\" value=\"-1\"/>\n");
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_read_props(&p, path, NULL, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 2);
    ck_assert_str_eq(err.file, path);
    unlink(path);

    write_tmp(path, ".xml", "<prop id=\"cs.launch_s\" value=\"1\"/>\n<zone/>\n");
    cs_error_init(&err);
    ck_assert_int_eq(cs_params_read_props(&p, path, NULL, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 2);
    ck_assert_msg(strstr(err.msg, "expected") != NULL, "%s", err.msg);
    unlink(path);

    cs_error_init(&err);
    ck_assert_int_eq(cs_params_read_props(&p, "/nonexistent/p.xml", NULL, &err), CS_ERR_IO);
}
END_TEST

/* Every parameter of the root zone is read back from a written platform, however many props. */
START_TEST(platform_props_round_trip)
{
    struct cs_platform_spec spec;
    struct cs_platform *plat = NULL;
    struct cs_params p;
    struct keys k = {0};
    double want[sizeof(k.key) / sizeof(k.key[0])];
    char path[32] = "/tmp/cs-params-XXXXXX";
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    close(fd);
    cs_params_init(&p);
    cs_params_each(&p, add_key, &k);
    /* i + 1 (ns for times, MB/s for bandwidths), a 64th for a share */
    for (int i = 0; i < k.n; i++) {
        char val[32];
        size_t nl = strcspn(k.key[i] + 3, ".");
        const char *u = strstr(k.key[i], "_Bps") != NULL ? "e6" : "";

        if (nl > 2 && strncmp(k.key[i] + 3 + nl - 2, "_s", 2) == 0) /* a time: the name ends _s */
            u = "e-9";
        snprintf(val, sizeof(val), "%d%s", i + 1, u);
        if (strncmp(k.key[i], "cs.link_eff.", 12) == 0)
            snprintf(val, sizeof(val), "%.17g", (i % 64 + 1) / 64.0);
        want[i] = strtod(val, NULL);
        ck_assert_msg(cs_params_set(&p, k.key[i], val, NULL) == 0, "%s=%s", k.key[i], val);
    }
    cs_platform_spec_init(&spec, CS_FAM_DGX);
    spec.nodes = 2;
    ck_assert_int_eq(cs_platform_write(&spec, &p, path, NULL), 0);
    ck_assert_int_eq(cs_platform_read(path, &plat, NULL), 0);
    ck_assert_int_eq(plat->ngpus, 16);
    for (int i = 0; i < k.n; i++) {
        double v;

        ck_assert_int_eq(cs_params_get(&plat->params, k.key[i], &v), 0);
        ck_assert_msg(v == want[i], "%s = %g, want %g", k.key[i], v, want[i]);
    }
    ck_assert_int_eq(cs_platform_link_class(plat, "gpu3_nic"), CS_LINK_NET);
    ck_assert_int_eq(cs_platform_link_class(plat, "gpu3_pcie"), CS_LINK_PCIE);
    ck_assert_int_eq(cs_platform_link_class(plat, "gpu15_nvl"), CS_LINK_NVLINK);
    cs_platform_free(plat);
    unlink(path);
}
END_TEST

/* Bad props and hosts name their line; a cs.class overrides the class the link id suggests. */
START_TEST(platform_read_errors)
{
    static const struct {
        const char *zone;
        int line;
        const char *msg;
    } cases[] = {
        {"<prop id=\"cs.launch_s\" value=\"x\"/>", 3, "cs.launch_s"},
        {"<prop id=\"cs.launch_s\"/>", 3, "without value"},
        {"<link id=\"gpu0_nvl\" bandwidth=\"1GBps\"><prop id=\"cs.class\" value=\"usb\"/></link>",
         3, "is not nvlink, pcie or net"},
        {"<link id=\"gpu0_nvl\" bandwidth=\"1e-300Bps\"/>", 3,
         "is outside what hardware does (a bandwidth from 1 kB/s to 1 PB/s)"},
        {"<link id=\"gpu0_nvl\" bandwidth=\"1GBps\" latency=\"2s\"/>", 3,
         "is outside what hardware does (a latency from 0 to 1 s)"},
        {"<link id=\"gpu0_nvl\" bandwidth=\"8bps\"/>", 3, "a bandwidth from 1 kB/s"},
        {"<host id=\"gpu0\" speed=\"1f\"/><host id=\"gpu0\" speed=\"1f\"/>", 3, "declared twice"},
        {"<host id=\"gpu1\" speed=\"1f\"/>", 0, "gpu0 is missing"},
        {"<host id=\"gpu99999\" speed=\"1f\"/>", 0, "no GPU host"},
    };
    char path[32], text[512];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_platform *plat = NULL;
        struct cs_error err;

        snprintf(text, sizeof(text),
                 "<?xml version=\"1.0\"?>\n<platform version=\"4.1\"><zone id=\"z\" "
                 "routing=\"Full\">\n%s\n</zone></platform>\n",
                 cases[i].zone);
        write_tmp(path, ".xml", text);
        cs_error_init(&err);
        ck_assert_int_ne(cs_platform_read(path, &plat, &err), 0);
        ck_assert_ptr_null(plat);
        ck_assert_msg(err.line == cases[i].line, "case %zu: line %d", i, err.line);
        ck_assert_msg(strstr(err.msg, cases[i].msg) != NULL, "case %zu: %s", i, err.msg);
        unlink(path);
    }
    {
        struct cs_platform *plat = NULL;

        write_tmp(path, ".xml",
                  "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n"
                  "<host id=\"gpu0\" speed=\"1f\"/><host id=\"cpu0\" speed=\"1f\"/>\n"
                  "<link id=\"gpu0_nvl\" bandwidth=\"1GBps\"><prop id=\"cs.class\" "
                  "value=\"net\"/></link>\n</zone></platform>\n");
        ck_assert_int_eq(cs_platform_read(path, &plat, NULL), 0);
        ck_assert_int_eq(plat->ngpus, 1);
        ck_assert_int_eq(cs_platform_link_class(plat, "gpu0_nvl"), CS_LINK_NET);
        cs_platform_free(plat);
        unlink(path);
    }
}
END_TEST

/* NCCL's fewer threads narrow a protocol's threadblock: its pass in proportion; a protocol whose
 * pass has a fixed part (LL) keeps its line rate down to four warps and halves it at two (an SM's
 * processing blocks), one without (LL128, Simple) has its rate in proportion; the other
 * protocols untouched; a width with no threads leaves it as it is. */
START_TEST(narrow_width)
{
    struct cs_params p, q;

    cs_params_init(&p);
    ck_assert(p.pass_s[CS_PROTO_LL] > 0 && p.pass_s[CS_PROTO_LL128] == 0);
    q = p;
    cs_params_narrow(&q, CS_PROTO_LL, 64, 512);
    ck_assert_double_eq(q.tb_Bps[CS_PROTO_LL], p.tb_Bps[CS_PROTO_LL] / 2);
    ck_assert_double_eq(q.pass_bytes[CS_PROTO_LL], 512);
    ck_assert_double_eq(q.pass_s[CS_PROTO_LL], p.pass_s[CS_PROTO_LL]);
    ck_assert_double_eq(q.tb_Bps[CS_PROTO_SIMPLE], p.tb_Bps[CS_PROTO_SIMPLE]);
    ck_assert_double_eq(q.pass_bytes[CS_PROTO_SIMPLE], 0);
    q = p;
    cs_params_narrow(&q, CS_PROTO_LL, 128, 512);
    ck_assert_double_eq(q.tb_Bps[CS_PROTO_LL], p.tb_Bps[CS_PROTO_LL]);
    ck_assert_double_eq(q.pass_bytes[CS_PROTO_LL], 1024);
    cs_params_narrow(&q, CS_PROTO_LL128, 320, 640);
    ck_assert_double_eq(q.tb_Bps[CS_PROTO_LL128], p.tb_Bps[CS_PROTO_LL128] / 2);
    q = p;
    cs_params_narrow(&q, CS_PROTO_LL128, 0, 640);
    ck_assert_double_eq(q.tb_Bps[CS_PROTO_LL128], p.tb_Bps[CS_PROTO_LL128]);
}
END_TEST

/* A CTA's rate with a fixed cost per pass: 1 / (1/tb_Bps + pass_s / pass_bytes); one pass of b
 * bytes reaches the next hop pass_s + min(b, pass_bytes) / tb_Bps after it starts. */
START_TEST(cta_rate)
{
    struct cs_params p;

    cs_params_init(&p);
    p.tb_Bps[CS_PROTO_LL] = 8e9;
    p.pass_bytes[CS_PROTO_LL] = 4096;
    p.pass_s[CS_PROTO_LL] = 0.256e-6;
    ck_assert_double_eq_tol(cs_params_cta_Bps(&p, CS_PROTO_LL), 1 / (1 / 8e9 + 0.256e-6 / 4096), 1);
    ck_assert_double_eq_tol(cs_params_pass_time(&p, CS_PROTO_LL, 1024), 0.256e-6 + 1024 / 8e9,
                            1e-15);
    ck_assert_double_eq_tol(cs_params_pass_time(&p, CS_PROTO_LL, 65536), 0.256e-6 + 4096 / 8e9,
                            1e-15);
    p.pass_s[CS_PROTO_LL] = 0;
    ck_assert_double_eq(cs_params_cta_Bps(&p, CS_PROTO_LL), 8e9);
    p.pass_bytes[CS_PROTO_LL] = 0; /* line by line: no pass */
    ck_assert_double_eq(cs_params_pass_time(&p, CS_PROTO_LL, 1024), 0);
    p.tb_Bps[CS_PROTO_LL] = 0; /* unlimited */
    ck_assert_double_eq(cs_params_cta_Bps(&p, CS_PROTO_LL), 0);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {defaults_in_range, 1},
        {notes_hold_every_key, 1},
        {set_values, 1},
        {read_props_file, 1},
        {platform_props_round_trip, 1},
        {platform_read_errors, 1},
        {narrow_width, 1},
        {cta_rate, 1},
        {NULL, 0},
    };

    return test_run("params", 0, tests, NULL);
}
