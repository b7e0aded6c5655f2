/* check_calib.c: which fitted series or segment sets which platform parameter. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "runner.h"

/* The median value of key, NAN when absent. */
static double value(const struct cs_calib *c, const char *key)
{
    const struct cs_calib_key *k = cs_calib_find(c, key);

    return k ? cs_calib_value(k) : NAN;
}

static int near(double got, double want)
{
    return fabs(got - want) <= 1e-12 * fabs(want);
}

/* A fit result of m segments with intercepts alpha[k] (s) and bandwidths beta[k] (B/s). */
static void result(struct cs_fit_result *R, int m, const double *alpha, const double *beta,
                   const double *xmin)
{
    memset(R, 0, sizeof(*R));
    R->nseg = m;
    for (int k = 0; k < m; k++) {
        R->seg[k].alpha_s = alpha[k];
        R->seg[k].alpha_ci_s = alpha[k] / 10;
        R->seg[k].beta_Bps = beta[k];
        R->seg[k].slope_s_per_B = 1 / beta[k];
        R->seg[k].x_min = xmin[k];
        R->seg[k].x_max = 2 * xmin[k];
    }
}

START_TEST(test_put)
{
    struct cs_calib c;

    cs_calib_init(&c, NULL);
    cs_calib_put(&c, "cs.copy_Bps", 3, "a");
    cs_calib_put(&c, "cs.copy_Bps", 1, "b");
    cs_calib_put(&c, "cs.copy_Bps", -1, "negative: dropped");
    cs_calib_put(&c, "cs.copy_Bps", NAN, "not finite: dropped");
    cs_calib_put(&c, "cs.copy_Bps", 10, "c");
    cs_calib_put(&c, "cs.launch_s", 2, "d");
    ck_assert_int_eq(c.nkeys, 2);
    ck_assert_int_eq(cs_calib_find(&c, "cs.copy_Bps")->n, 3);
    ck_assert_str_eq(cs_calib_find(&c, "cs.copy_Bps")->how, "a; b; c");
    ck_assert(value(&c, "cs.copy_Bps") == 3);
    cs_calib_put(&c, "cs.copy_Bps", 5, "e");
    ck_assert(value(&c, "cs.copy_Bps") == 4); /* median of 1 3 5 10 */
    ck_assert_ptr_null(cs_calib_find(&c, "cs.reduce_Bps"));
}
END_TEST

START_TEST(test_seg_proto)
{
    /* NVLink: LL, LL128, Simple in order of size; PCIe has no LL128. */
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_NVLINK, 0, 3, 0), CS_PROTO_LL);
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_NVLINK, 1, 3, 0), CS_PROTO_LL128);
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_NVLINK, 2, 3, 0), CS_PROTO_SIMPLE);
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_PCIE, 1, 3, 0), 0);
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_NVLINK, 1, 4, 0), 0);
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_PCIE, 1, 2, 0), CS_PROTO_SIMPLE);
    /* One segment: Simple from 1 MiB messages up, else LL; --proto wins. */
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_NVLINK, 0, 1, 1048576), CS_PROTO_SIMPLE);
    ck_assert_int_eq(cs_calib_seg_proto(0, CS_LINK_NVLINK, 0, 1, 1048575), CS_PROTO_LL);
    ck_assert_int_eq(cs_calib_seg_proto(CS_PROTO_LL128, CS_LINK_PCIE, 0, 1, 0), CS_PROTO_LL128);
}
END_TEST

START_TEST(test_steps)
{
    struct cs_calib c;
    struct cs_fit_line L = {0};

    L.alpha_s = 6e-6;
    L.slope_s_per_B = 1.9e-6;
    cs_calib_init(&c, NULL);
    cs_calib_map_steps(&c, &L, CS_PROTO_LL, CS_LINK_NVLINK, "lat.csv");
    ck_assert(value(&c, "cs.launch_s") == 6e-6);
    ck_assert(value(&c, "cs.call_s.LL.nvlink") == 1.9e-6);
    ck_assert_str_eq(cs_calib_find(&c, "cs.launch_s")->how,
                     "intercept of time vs ring steps, lat.csv");
}
END_TEST

START_TEST(test_ring)
{
    /* 8 ranks AllReduce: 14 steps. Intercepts = launch 5 us + 14 x call. */
    const double alpha[] = {5e-6 + 14 * 1e-6, 5e-6 + 14 * 2e-6, 5e-6 + 14 * 3e-6},
                 beta[] = {50e9, 150e9, 230e9}, xmin[] = {1e3, 1e5, 1e7};
    struct cs_params base;
    struct cs_calib_ring r = {"oci.csv", CS_LINK_NVLINK, 0, 14, 8, 0, &base};
    struct cs_fit_result R;
    struct cs_calib c;

    cs_params_init(&base);
    base.launch_s = 5e-6;
    base.deploy_s = 0;
    result(&R, 3, alpha, beta, xmin);
    cs_calib_init(&c, NULL);
    cs_calib_map_ring(&c, &r, &R);
    ck_assert(near(value(&c, "cs.call_s.LL.nvlink"), 1e-6));
    ck_assert(near(value(&c, "cs.call_s.LL128.nvlink"), 2e-6));
    ck_assert(near(value(&c, "cs.call_s.Simple.nvlink"), 3e-6));
    ck_assert(value(&c, "cs.link_Bps.nvlink") == 230e9); /* the last, Simple, segment */
    ck_assert_int_eq(c.nkeys, 4);
    /* --intercept deploy: the first intercept less launch and 14 base LL calls. */
    r.intercept_deploy = 1;
    cs_calib_init(&c, NULL);
    cs_calib_map_ring(&c, &r, &R);
    ck_assert(near(value(&c, "cs.deploy_s"), alpha[0] - 5e-6 - 14 * base.call_s[CS_PROTO_LL][1]));
    ck_assert(isnan(value(&c, "cs.call_s.LL.nvlink")));
    /* An intercept below launch sets nothing. */
    r.intercept_deploy = 0;
    base.launch_s = 1;
    cs_calib_init(&c, NULL);
    cs_calib_map_ring(&c, &r, &R);
    ck_assert_int_eq(c.nkeys, 1);
}
END_TEST

START_TEST(test_harness)
{
    const double alpha[] = {1.5e-6}, beta[] = {40e9}, xmin[] = {1024};
    struct cs_calib_harness h = {"mem", "ce", "copy", 0, 0, 1, 1, CS_LINK_NVLINK, "s"};
    struct cs_fit_result R;
    struct cs_calib c;
    char *log = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&log, &len);

    result(&R, 1, alpha, beta, xmin);
    cs_calib_init(&c, fp);
    cs_calib_map_harness(&c, &h, &R); /* local copy: read + write */
    ck_assert(value(&c, "cs.copy_Bps") == 80e9);
    h.op = "reduce2"; /* two reads, one write */
    cs_calib_map_harness(&c, &h, &R);
    ck_assert(value(&c, "cs.reduce_Bps") == 120e9);
    h.mech = "flag_pingpong";
    h.dst = 1; /* a round trip is two latencies */
    cs_calib_map_harness(&c, &h, &R);
    ck_assert(value(&c, "cs.link_lat_s.nvlink") == 0.75e-6);
    h.mech = "ce";
    h.op = "copy";
    cs_calib_map_harness(&c, &h, &R);
    ck_assert(value(&c, "cs.link_Bps.nvlink") == 40e9);
    ck_assert_int_eq(c.nkeys, 4);
    /* cs.launch_s: the isolated launch of one threadblock, no other launch row. */
    h = (struct cs_calib_harness){"launch", "launch", "back_to_back", 0, 0, 1, 1, 0, "s"};
    cs_calib_map_harness(&c, &h, &R);
    h.op = "params_4096";
    cs_calib_map_harness(&c, &h, &R);
    h.op = "isolated";
    h.nblocks = 108;
    cs_calib_map_harness(&c, &h, &R);
    ck_assert_ptr_null(cs_calib_find(&c, "cs.launch_s"));
    h.nblocks = 1;
    cs_calib_map_harness(&c, &h, &R);
    ck_assert(near(value(&c, "cs.launch_s"), 1.5e-6 + 1024 / 40e9));
    ck_assert_int_eq(c.nkeys, 5);
    /* Whole schedules and protocol series set nothing here; nor does a remote series without a
     * link class. */
    h = (struct cs_calib_harness){"exec", "ll", "allreduce_ring", 0, 0, 8, 8, CS_LINK_NVLINK, "s"};
    cs_calib_map_harness(&c, &h, &R);
    h.test = "proto";
    cs_calib_map_harness(&c, &h, &R);
    h = (struct cs_calib_harness){"p2p_lat", "flag_pingpong", "rtt", 0, 1, 1, 1, 0, "s"};
    cs_calib_map_harness(&c, &h, &R);
    h.mech = "ce";
    h.op = "memset";
    cs_calib_map_harness(&c, &h, &R);
    ck_assert_int_eq(c.nkeys, 5);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(log, "- `cs.copy_Bps` = 8e+10 from s\n"));
    ck_assert_ptr_nonnull(strstr(log, "- launch op back_to_back of 1 threadblocks: reported only"));
    ck_assert_ptr_nonnull(strstr(log, "- a whole schedule (exec): compared with a prediction"));
    ck_assert_ptr_nonnull(strstr(log, "- round trip not mapped: give --link for the class\n"));
    ck_assert_ptr_nonnull(strstr(log, "- not mapped to a parameter (reported only)\n"));
    free(log);
}
END_TEST

/* A harness mechanism names its protocol as collsim does, in lower case, or as ll8. */
START_TEST(test_mech_spellings)
{
    const char *mechs[] = {"ll8", "LL128", "simple"};
    const char *keys[] = {"cs.tb_Bps.LL", "cs.tb_Bps.LL128", "cs.tb_Bps.Simple"};
    struct cs_calib_harness h = {"proto", NULL, "send_recv", 0, 0, 1, 1, 0, "s"};
    struct cs_fit_calls F = {5e-6, 1e-6, 1e-10, 10e9, 0, 0, 12, 3, 0};
    struct cs_calib c;

    cs_calib_init(&c, NULL);
    for (int i = 0; i < 3; i++) {
        h.mech = mechs[i];
        ck_assert(cs_calib_is_proto(h.mech));
        cs_calib_map_proto(&c, &h, &F, NAN);
        ck_assert(value(&c, keys[i]) == 10e9);
    }
    ck_assert(!cs_calib_is_proto("ll64"));
    ck_assert(!cs_calib_is_proto("launch"));
    ck_assert_int_eq(c.nkeys, 3);
}
END_TEST

/* Protocol series: the rate of one loopback pair is cs.tb_Bps; contended pairs, other ops and
 * rates between GPUs are only noted; between GPUs what LL128 and Simple add to LL's per-call cost
 * is cs.call_s.P.LINK, LL's own is the hop latency's, and a loopback's has no link. */
START_TEST(test_proto)
{
    struct cs_calib_harness h = {"proto", "ll", "send_recv", 0, 0, 16, 1, CS_LINK_NVLINK, "s"};
    struct cs_fit_calls F = {5e-6, 1.5e-6, 1e-10, 10e9, 0, 0, 45, 3, 0};
    struct cs_calib c;
    char *log = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&log, &len);

    cs_calib_init(&c, fp);
    cs_calib_map_proto(&c, &h, &F, NAN); /* 16 pairs */
    h.concurrent = 1;
    h.op = "recv_reduce_copy";
    cs_calib_map_proto(&c, &h, &F, NAN);
    ck_assert_int_eq(c.nkeys, 0);
    h.op = "send_recv";
    cs_calib_map_proto(&c, &h, &F, NAN); /* one loopback pair */
    ck_assert(value(&c, "cs.tb_Bps.LL") == 10e9);
    ck_assert_int_eq(c.nkeys, 1);
    /* Between GPUs: LL 2 us per call, LL128 2.8 us, Simple 6 us; the rates map to nothing. */
    h = (struct cs_calib_harness){"proto_link", "ll", "send_recv", 0, 1, 1, 1, CS_LINK_NVLINK, "s"};
    F.call_s = 2e-6;
    cs_calib_map_proto(&c, &h, &F, 2e-6);
    ck_assert_int_eq(c.nkeys, 1);
    h.mech = "ll128";
    F.call_s = 2.8e-6;
    cs_calib_map_proto(&c, &h, &F, NAN); /* no LL series of the pair */
    ck_assert_int_eq(c.nkeys, 1);
    cs_calib_map_proto(&c, &h, &F, 3e-6); /* below LL's */
    ck_assert_int_eq(c.nkeys, 1);
    cs_calib_map_proto(&c, &h, &F, 2e-6);
    ck_assert(near(value(&c, "cs.call_s.LL128.nvlink"), 0.8e-6));
    h.mech = "simple";
    F.call_s = 6e-6;
    F.nops = 1; /* one call count: launch and call not apart */
    cs_calib_map_proto(&c, &h, &F, 2e-6);
    ck_assert_int_eq(c.nkeys, 2);
    F.nops = 3;
    h.link = 0;
    cs_calib_map_proto(&c, &h, &F, 2e-6);
    ck_assert_int_eq(c.nkeys, 2);
    h.link = CS_LINK_PCIE;
    cs_calib_map_proto(&c, &h, &F, 2e-6);
    ck_assert(near(value(&c, "cs.call_s.Simple.pcie"), 4e-6));
    ck_assert_int_eq(c.nkeys, 3);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(log, "- 16 pairs of 1 threadblocks at once: contended"));
    ck_assert_ptr_nonnull(strstr(log, "- op recv_reduce_copy: reported only"));
    ck_assert_ptr_nonnull(strstr(log, "- per-call cost 1.500 us: a loopback on one GPU crosses no "
                                      "link, so it is no link class's cs.call_s"));
    ck_assert_ptr_nonnull(strstr(log, "- LL per-call cost 2.000 us: LL's per-hop cost is the hop "
                                      "latency"));
    ck_assert_ptr_nonnull(strstr(log, "- no LL series of the same pair: what LL128 adds to LL"));
    ck_assert_ptr_nonnull(strstr(log, "- per-call cost 2.800 us below LL's 3.000 us"));
    ck_assert_ptr_nonnull(strstr(log, "- one call count: launch and per-call cost not separable"));
    ck_assert_ptr_nonnull(strstr(log, "- per-call cost not mapped: give --link for the class\n"));
    ck_assert_ptr_nonnull(strstr(log, "- `cs.call_s.LL128.nvlink` = 8e-07 from s: per-call cost "
                                      "2.800 us less LL's 2.000 us on the same pair\n"));
    free(log);
}
END_TEST

START_TEST(test_write)
{
    struct cs_params base;
    struct cs_calib c;
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    cs_params_init(&base);
    cs_calib_init(&c, NULL);
    cs_calib_put(&c, "cs.launch_s", 4e-6, "fit of a--b.csv");
    cs_calib_put(&c, "cs.launch_s", 6e-6, "c.csv");
    ck_assert_int_eq(cs_calib_write_props(&c, &base, 1, "a--b.csv c.csv", fp), 0);
    fclose(fp);
    ck_assert_str_eq(text, "<!-- collsim calibrate fit: a--b.csv c.csv -->\n"
                           "<!-- fit (collsim calibrate fit, WLS 1/t^2): fit of a-_b.csv; c.csv "
                           "(median of the values) -->\n"
                           "<prop id=\"cs.launch_s\" value=\"5e-06\"/>\n");
    free(text);
    fp = open_memstream(&text, &len);
    ck_assert_int_eq(cs_calib_write_props(&c, &base, 0, "x", fp), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(text, "<!-- not fitted; prior: "));
    ck_assert_ptr_nonnull(strstr(text, "<prop id=\"cs.copy_Bps\""));
    free(text);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_put, 1},   {test_seg_proto, 1}, {test_steps, 1},
        {test_ring, 1},  {test_harness, 1},   {test_mech_spellings, 1},
        {test_proto, 1}, {test_write, 1},     {NULL, 0},
    };

    return test_run("calib", 0, tests, NULL);
}
