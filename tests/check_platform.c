/* check_platform.c: the platform writer's NIC types and which parameters a loaded platform takes.
 */
#include <check.h>
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

int main(void)
{
    const struct test_case tests[] = {
        {link_keys_refused, 1},
        {nic_types, 1},
        {bad_nic_refused, 1},
        {NULL, 0},
    };

    return test_run("platform", 0, tests, NULL);
}
