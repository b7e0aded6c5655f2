/* check_sweeprun.c: a sweep point predicted in process: generator specs, family platforms and
 * the sweep CSV rows. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "runner.h"
#include "sweeprun.h"

static struct cs_sweep *parse(const char *text)
{
    struct cs_sweep *sw = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sweep_parse(text, "t.sweep", "/d", &sw, &err) == 0, "%s:%d: %s", err.file,
                  err.line, err.msg);
    return sw;
}

/* gen.* keys in file order, '-' and compat=0 left out, the protocol last. */
START_TEST(gen_spec)
{
    struct cs_sweep *sw = parse("gen.algorithm = ring allpairs\n"
                                "gen.gpus = 8\n"
                                "gen.channels gen.compat = 2,1 -,0\n"
                                "protocol = LL128\n"
                                "platform.family = dgx-a100\n"
                                "sizes = 1K\n");
    const char *v[CS_SWEEP_MAX_KEYS];
    char buf[256];

    cs_sweep_point(sw, 0, v);
    ck_assert_int_eq(cs_sweeprun_gen_spec(sw->keys, v, sw->nkeys, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "ring:gpus=8,channels=2,compat=1,protocol=LL128");
    cs_sweep_point(sw, 3, v);
    ck_assert_int_eq(cs_sweeprun_gen_spec(sw->keys, v, sw->nkeys, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "allpairs:gpus=8,protocol=LL128");
    ck_assert_int_eq(cs_sweeprun_gen_spec(sw->keys, v, sw->nkeys, buf, 12), CS_ERR_USAGE);
    cs_sweep_free(sw);
}
END_TEST

/* Family keys into the spec and parameters: set.* as given, scale.* times the default as the
 * platform file prints it (nine digits). */
START_TEST(family_platform)
{
    struct cs_sweep *sw = parse("schedule = s.xml\n"
                                "platform.family = a100-hier\n"
                                "platform.rows platform.columns = 2,4\n"
                                "platform.between = net\n"
                                "set.cs.launch_s = 7e-6\n"
                                "scale.cs.link_Bps.pcie = 3\n"
                                "sizes = 1K\n");
    const char *v[CS_SWEEP_MAX_KEYS];
    struct cs_platform_spec spec;
    struct cs_params p, def;
    struct cs_error err;
    char buf[64];

    cs_params_init(&def);
    cs_sweep_point(sw, 0, v);
    cs_error_init(&err);
    ck_assert_int_eq(cs_sweeprun_platform(sw, v, &spec, &p, &err), 0);
    ck_assert_int_eq(spec.family, CS_FAM_HIER);
    ck_assert_int_eq(spec.rows, 2);
    ck_assert_int_eq(spec.columns, 4);
    ck_assert_int_eq(spec.between, CS_LINK_NET);
    ck_assert(p.launch_s == 7e-6);
    snprintf(buf, sizeof(buf), "%.9g", def.link_Bps[CS_LINK_PCIE]);
    ck_assert(p.link_Bps[CS_LINK_PCIE] == strtod(buf, NULL) * 3);
    ck_assert(p.link_Bps[CS_LINK_NET] == def.link_Bps[CS_LINK_NET]);
    cs_sweep_free(sw);
}
END_TEST

/* Keys that do not apply to the family, and unknown families, are refused. */
START_TEST(family_refused)
{
    static const char *const bad[][2] = {
        {"platform.family = dgx-a100\nplatform.rows = 2\n", "platform.rows does not apply"},
        {"platform.family = a100-pcie-4gpu\nplatform.nodes = 2\n", "platform.nodes does not"},
        {"platform.family = a100-hier\nplatform.gpus_per_node = 4\n", "gpus_per_node does not"},
        {"platform.family = dgx-a100\nplatform.gpus_per_node = 4\n", "8 GPUs per node"},
        {"platform.family = a100-pcie-4gpu\nplatform.gpus_per_node = 5000\n", "in 1..4096"},
        {"platform.family = a200\n", "unknown platform family 'a200'"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[512];
        struct cs_sweep *sw;
        const char *v[CS_SWEEP_MAX_KEYS];
        struct cs_platform_spec spec;
        struct cs_params p;
        struct cs_error err;

        snprintf(text, sizeof(text), "schedule = s.xml\n%ssizes = 1K\n", bad[i][0]);
        sw = parse(text);
        cs_sweep_point(sw, 0, v);
        cs_error_init(&err);
        ck_assert_int_eq(cs_sweeprun_platform(sw, v, &spec, &p, &err), CS_ERR_INVALID);
        ck_assert_msg(strstr(err.msg, bad[i][1]) != NULL, "'%s' lacks '%s'", err.msg, bad[i][1]);
        cs_sweep_free(sw);
    }
}
END_TEST

/* A whole point: the header, then one row per size prefixed by the point and its values. */
START_TEST(point_rows)
{
    struct cs_sweep *sw = parse("gen.algorithm = ring\n"
                                "gen.gpus gen.channels = 4,1\n"
                                "protocol = LL Simple\n"
                                "dtype = half\n"
                                "platform.family = a100-pcie-4gpu\n"
                                "sizes = 1K..4K 64K\n");
    char path[] = "/tmp/check_sweeprun.XXXXXX", *text = NULL, line[512];
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    struct cs_error err;
    int fd = mkstemp(path), nrows = 0;

    ck_assert_int_ge(fd, 0);
    close(fd);
    cs_error_init(&err);
    ck_assert_msg(cs_sweeprun_point(sw, 1, path, fp, &err) == 0, "%s", err.msg);
    fclose(fp);
    unlink(path);
    fp = fmemopen(text, len, "r");
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
    ck_assert_str_eq(line, "point,gen.algorithm,gen.gpus,gen.channels,protocol,dtype,"
                           "platform.family," CS_REPORT_CSV_HEADER "\n");
    while (fgets(line, sizeof(line), fp) != NULL) {
        static const char *const sizes[] = {"1024", "2048", "4096", "65536"};
        char want[128];

        ck_assert_int_lt(nrows, 4);
        snprintf(want, sizeof(want), "1,ring,4,1,Simple,half,a100-pcie-4gpu,%s,", sizes[nrows]);
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "row %d: %s", nrows, line);
        snprintf(want, sizeof(want), ",ok,%s\n", sizes[nrows]); /* nominal_bytes last */
        ck_assert_msg(strstr(line, ",half,") && strstr(line, want), "row %d: %s", nrows, line);
        nrows++;
    }
    ck_assert_int_eq(nrows, 4);
    fclose(fp);
    free(text);
    /* a point out of range, and a schedule file that is not there */
    cs_error_init(&err);
    ck_assert_int_eq(cs_sweeprun_point(sw, 2, path, stdout, &err), CS_ERR_USAGE);
    cs_sweep_free(sw);
    sw = parse("schedule = nowhere.xml\nplatform.family = a100-pcie-4gpu\nsizes = 1K\n");
    cs_error_init(&err);
    ck_assert_int_ne(cs_sweeprun_point(sw, 0, path, stdout, &err), 0);
    ck_assert_msg(strstr(err.file, "/d/nowhere.xml") != NULL || strstr(err.msg, "nowhere.xml"),
                  "%s: %s", err.file, err.msg);
    unlink(path);
    cs_sweep_free(sw);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {gen_spec, 1}, {family_platform, 1}, {family_refused, 1}, {point_rows, 1}, {NULL, 0},
    };

    return test_run("sweeprun", 60, tests, NULL);
}
