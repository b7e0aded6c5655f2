/* check_platform.c: the platform writer's NIC types, which parameters a loaded platform takes, and
 * the reader's hosts and link classes for SimGrid clusters and split-duplex links.
 */
#include <check.h>
#include <simgrid/engine.h>
#include <simgrid/link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params.h"
#include "platform.h"
#include "runner.h"

/* Only the keys the writer turns into <link> bandwidths (and the socket link's latency) are refused
 * on a loaded platform, with a message naming `collsim platform --set`; every other key, known or
 * not, passes. */
START_TEST(link_keys_refused)
{
    static const char *const links[] = {"cs.link_Bps.nvlink", "cs.link_Bps.pcie", "cs.link_Bps.net",
                                        "cs.sys_Bps", "cs.sys_lat_s"};
    /* cs.link_lat_s is each hop's latency, which the replay takes from the parameters */
    static const char *const others[] = {
        "cs.launch_s",          "cs.deploy_s",       "cs.call_s.LL.net", "cs.tb_Bps.Simple",
        "cs.copy_Bps",          "cs.reduce_Bps",     "cs.link_Bps.ib",   "cs.sys_Bps.pcie",
        "cs.link_lat_s.nvlink", "cs.link_lat_s.net", "cs.nope"};
    struct cs_error err;
    char want[128];

    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_platform_check_settable(links[i], &err), CS_ERR_USAGE);
        snprintf(want, sizeof(want), "`collsim platform FAMILY --set %s=VALUE`", links[i]);
        ck_assert_msg(strstr(err.msg, want) != NULL, "%s: %s", links[i], err.msg);
    }
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        cs_error_init(&err);
        ck_assert_msg(cs_platform_check_settable(others[i], &err) == 0, "%s", others[i]);
        ck_assert_str_eq(err.msg, "");
    }
}
END_TEST

/* Each NIC type sets cs.link_Bps.net to its per-GPU figure, noting the source; names round-trip
 * and unknown ones are 0. */
START_TEST(nic_types)
{
    static const struct {
        const char *name;
        double Bps;
        const char *source;
    } want[] = {
        {"hdr", 24e9, "nccl-tests#252"},
        {"roce100", 12e9, "NCCL NET_BW 12.0 GB/s \"100Gbit\" (topo.h"},
        {"2x100", 24e9, "OCI BM.GPU4.8: 16 x 100 Gb/s for 8 GPUs"},
    };
    struct cs_param_notes *notes = calloc(1, sizeof(*notes));
    struct cs_params p, def;

    ck_assert_ptr_nonnull(notes);
    cs_params_init(&def);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        enum cs_platform_nic nic = cs_platform_nic_parse(want[i].name);
        const char *note;

        ck_assert_int_eq(nic, (int)i + CS_NIC_HDR);
        cs_params_init(&p);
        p.link_Bps[CS_LINK_NET] = 1;
        ck_assert_int_eq(cs_platform_set_nic(nic, &p, notes), 0);
        ck_assert_double_eq(p.link_Bps[CS_LINK_NET], want[i].Bps);
        note = cs_param_notes_get(notes, "cs.link_Bps.net");
        ck_assert_ptr_nonnull(note);
        ck_assert_msg(strstr(note, want[i].source) != NULL, "%s: %s", want[i].name, note);
        /* nothing else moves */
        p.link_Bps[CS_LINK_NET] = def.link_Bps[CS_LINK_NET];
        ck_assert_mem_eq(&p, &def, sizeof(p));
        ck_assert_int_eq(cs_platform_set_nic(nic, &p, NULL), 0);
    }
    ck_assert_int_eq(notes->n, 1);
    ck_assert_int_eq(cs_platform_nic_parse("ndr"), 0);
    ck_assert_int_eq(cs_platform_nic_parse("HDR"), 0);
    ck_assert_int_eq(cs_platform_family_parse("a100-pcie-net"), CS_FAM_PCIE_NET);
    ck_assert_str_eq(cs_platform_family_name(CS_FAM_PCIE_NET), "a100-pcie-net");
    free(notes);
}
END_TEST

/* A spec with a NIC type out of range is refused before anything is written. */
START_TEST(bad_nic_refused)
{
    struct cs_platform_spec spec;
    struct cs_params p;
    struct cs_error err;
    char path[] = "/tmp/cs-platform-nic-XXXXXX";
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    close(fd);
    cs_params_init(&p);
    cs_platform_spec_init(&spec, CS_FAM_PCIE_NET);
    ck_assert_int_eq(spec.nodes, 2);
    ck_assert_int_eq(spec.nic, CS_NIC_HDR);
    spec.nic = CS_NIC_2X100 + 1;
    cs_error_init(&err);
    ck_assert_int_eq(cs_platform_write(&spec, &p, path, &err), CS_ERR_USAGE);
    ck_assert_str_eq(err.msg, "unknown NIC type");
    spec.nic = CS_NIC_ROCE100;
    ck_assert_int_eq(cs_platform_write(&spec, &p, path, &err), 0);
    unlink(path);
}
END_TEST

/* The platforms of tests/data/platforms, with the class of their links (nested8's wire is net). */
static const struct {
    const char *file;
    enum cs_link_class cls;
} plats[] = {
    {"platforms/cluster8.xml", CS_LINK_NET},    {"platforms/flat8.xml", CS_LINK_NET},
    {"platforms/fattree8.xml", CS_LINK_NVLINK}, {"platforms/torus8.xml", CS_LINK_PCIE},
    {"platforms/nested8.xml", CS_LINK_NVLINK},
};
#define NPLATS ((int)(sizeof(plats) / sizeof(plats[0])))

static struct cs_platform *read_ok(const char *path)
{
    struct cs_platform *plat = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_platform_read(path, &plat, &err) == 0, "%s: %s", path, err.msg);
    return plat;
}

static enum cs_link_class found(const struct cs_platform *plat, const char *name)
{
    enum cs_link_class cls = 0;

    ck_assert_msg(cs_platform_link_find(plat, name, &cls) == 1, "%s not found", name);
    return cls;
}

/* A cluster's hosts are GPUs (radical lists and ranges in any order, clusters in zones), and its
 * links take its cs.class (net without one) under SimGrid 3.32's names; a split-duplex link's
 * halves take its class; root props still set parameters beside clusters. */
START_TEST(cluster_hosts_and_classes)
{
    struct cs_platform *plat;
    enum cs_link_class cls;

    for (int i = 0; i < NPLATS; i++) {
        plat = read_ok(test_data(plats[i].file));
        ck_assert_int_eq(plat->ngpus, 8);
        cs_platform_free(plat);
    }
    plat = read_ok(test_data("platforms/cluster8.xml"));
    ck_assert_int_eq(found(plat, "c_link_3_UP"), CS_LINK_NET);
    ck_assert_int_eq(found(plat, "c_link_7_DOWN"), CS_LINK_NET);
    ck_assert_int_eq(cs_platform_link_find(plat, "d_link_0_UP", &cls), 0);
    cs_platform_free(plat);
    plat = read_ok(test_data("platforms/flat8.xml"));
    ck_assert_int_eq(found(plat, "port2_UP"), CS_LINK_NET);
    ck_assert_int_eq(found(plat, "port2_DOWN"), CS_LINK_NET);
    ck_assert_int_eq(found(plat, "port2"), CS_LINK_NET);
    /* without its prop, port2_UP would be guessed pcie */
    ck_assert_int_eq(cs_platform_link_find(plat, "port2_SIDE", &cls), 0);
    ck_assert_int_eq(cs_platform_link_class(plat, "port2_SIDE"), CS_LINK_PCIE);
    cs_platform_free(plat);
    plat = read_ok(test_data("platforms/fattree8.xml"));
    ck_assert_int_eq(found(plat, "link_from_1_15_1_UP"), CS_LINK_NVLINK);
    ck_assert_int_eq(found(plat, "ft_link_1_limiter"), CS_LINK_NVLINK);
    ck_assert_int_eq(found(plat, "ft_link_1_loopback"), CS_LINK_NVLINK);
    cs_platform_free(plat);
    plat = read_ok(test_data("platforms/torus8.xml"));
    ck_assert_int_eq(found(plat, "t_link_from_4_to_5_DOWN"), CS_LINK_PCIE);
    cs_platform_free(plat);
    plat = read_ok(test_data("platforms/nested8.xml"));
    ck_assert_int_eq(found(plat, "node0_link_1_UP"), CS_LINK_NVLINK);
    ck_assert_int_eq(found(plat, "node1_backbone"), CS_LINK_NVLINK);
    ck_assert_int_eq(found(plat, "wire_UP"), CS_LINK_NET);
    ck_assert_double_eq(plat->params.link_lat_s[CS_LINK_NET], 3e-6);
    cs_platform_free(plat);
}
END_TEST

/* SimGrid 3.32 loads each platform, and every link it creates (but its own __loopback__) is one
 * the reader declared, with the expected class: the naming rules for clusters are SimGrid's. */
START_TEST(simgrid_links_declared)
{
    char arg0[] = "check_platform", *av[] = {arg0, NULL};
    int ac = 1;
    struct cs_platform *plat = read_ok(test_data(plats[_i].file));
    sg_link_t *links;
    int n;

    simgrid_init(&ac, av);
    simgrid_load_platform(test_data(plats[_i].file));
    n = (int)sg_link_count();
    links = sg_link_list();
    ck_assert_int_gt(n, 8);
    for (int k = 0; k < n; k++) {
        const char *name = sg_link_get_name(links[k]);
        enum cs_link_class cls = 0;

        if (strcmp(name, "__loopback__") == 0)
            continue;
        ck_assert_msg(cs_platform_link_find(plat, name, &cls) == 1, "%s: SimGrid's link %s",
                      plats[_i].file, name);
        ck_assert_msg(cls == (strncmp(name, "wire", 4) == 0 ? CS_LINK_NET : plats[_i].cls),
                      "%s: %s has class %d", plats[_i].file, name, cls);
    }
    free(links);
    cs_platform_free(plat);
}
END_TEST

/* Bad clusters are refused with file:line before SimGrid sees them. */
START_TEST(cluster_errors)
{
    static const struct {
        const char *attrs, *inner, *msg;
    } bad[] = {
        {"radical=\"0-x\"", "", "cluster 'c': radical=\"0-x\" is not a list of numbers"},
        {"radical=\"7-0\"", "", "radical=\"7-0\" is not a list"},
        {"radical=\"0-3,\"", "", "radical=\"0-3,\" is not a list"},
        {"radical=\"0-99999999\"", "", "(at most 65536 hosts)"},
        {"radical=\"0-3,2\"", "", "host gpu2 is declared twice"},
        {"radical=\"0-3\" loopback_bw=\"0GBps\"", "",
         "cluster 'c': loopback_bw=\"0GBps\" must be a positive"},
        {"radical=\"0-3\" bb_lat=\"-1us\"", "", "bb_lat=\"-1us\" must be a non-negative"},
        {"radical=\"0-3\"", "<prop id=\"cs.class\" value=\"ib\"/>",
         "cluster 'c': cs.class \"ib\" is not nvlink, pcie or net"},
        {"suffix=\"\"", "", "cluster 'c': no radical=\"...\", which SimGrid requires"},
    };
    char path[] = "/tmp/cs-platform-cluster-XXXXXX";
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    close(fd);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *fp = fopen(path, "w");
        struct cs_platform *plat = NULL;
        struct cs_error err;

        ck_assert_ptr_nonnull(fp);
        fprintf(fp,
                "<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
                "<cluster id=\"c\" prefix=\"gpu\" %s%s speed=\"1Gf\" bw=\"1GBps\" "
                "lat=\"1us\">\n%s</cluster>\n</platform>\n",
                strstr(bad[i].attrs, "suffix") ? "" : "suffix=\"\" ", bad[i].attrs, bad[i].inner);
        fclose(fp);
        cs_error_init(&err);
        ck_assert_msg(cs_platform_read(path, &plat, &err) == CS_ERR_INVALID &&
                          strstr(err.msg, bad[i].msg) != NULL,
                      "%zu: %s", i, err.msg);
        ck_assert_int_eq(err.line, strstr(bad[i].msg, "cs.class") ? 4 : 3);
    }
    unlink(path);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {link_keys_refused, 1},
        {nic_types, 1},
        {bad_nic_refused, 1},
        {cluster_hosts_and_classes, 1},
        {simgrid_links_declared, NPLATS},
        {cluster_errors, 1},
        {NULL, 0},
    };

    return test_run("platform", 0, tests, NULL);
}
