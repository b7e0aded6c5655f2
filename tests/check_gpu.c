/* check_gpu.c: the platform writer's GPU kinds (A100, H100, H200) and virtual-rank platforms:
 * which priors each GPU sets, that a user's settings win, and what the files hold when read back.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params.h"
#include "platform.h"
#include "runner.h"

static double get(const struct cs_params *p, const char *key)
{
    double v = -1;

    ck_assert_int_eq(cs_params_get(p, key, &v), 0);
    return v;
}

/* A100 keeps cs_params_init's defaults; Hopper sets its SMs, NVLink4 (20.6 GB/s x links), PCIe
 * Gen5 (48 GB/s), half its HBM as cs.link_Bps.hbm and A100's per-CTA rates scaled by its clock,
 * each with a source; keys the user set stay. */
START_TEST(gpu_priors)
{
    static const struct {
        enum cs_gpu_kind gpu;
        double sms, nvlink, hbm, clock;
    } want[] = {
        {CS_GPU_H100, 132, 18 * 20.6e9, 3.35e12 / 2, 1980.0 / 1410},
        {CS_GPU_H100_PCIE, 114, 12 * 20.6e9, 2.0e12 / 2, 1755.0 / 1410},
        {CS_GPU_H200, 132, 18 * 20.6e9, 4.8e12 / 2, 1980.0 / 1410},
    };
    struct cs_param_notes *notes = calloc(1, sizeof(*notes));
    struct cs_platform_spec spec;
    struct cs_params p, def;

    ck_assert_ptr_nonnull(notes);
    cs_params_init(&def);
    cs_platform_spec_init(&spec, CS_FAM_DGX);
    ck_assert_int_eq(spec.gpu, CS_GPU_A100);
    cs_params_init(&p);
    ck_assert_int_eq(cs_platform_spec_params(&spec, &p, notes), 0);
    ck_assert(memcmp(&p, &def, sizeof(p)) == 0);
    ck_assert_int_eq(notes->n, 0);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        memset(notes, 0, sizeof(*notes));
        cs_params_init(&p);
        spec.gpu = want[i].gpu;
        ck_assert_int_eq(cs_platform_spec_params(&spec, &p, notes), 0);
        ck_assert_double_eq(get(&p, "cs.gpu_sms"), want[i].sms);
        ck_assert_double_eq_tol(get(&p, "cs.link_Bps.nvlink"), want[i].nvlink, 1);
        ck_assert_double_eq_tol(get(&p, "cs.link_Bps.pcie"), 48e9, 1);
        ck_assert_double_eq_tol(get(&p, "cs.link_Bps.hbm"), want[i].hbm, 1);
        ck_assert_double_eq_tol(get(&p, "cs.tb_Bps.LL128"), 20e9 * want[i].clock, 1);
        ck_assert_double_eq_tol(get(&p, "cs.copy_Bps"), def.copy_Bps * want[i].clock, 1);
        /* not GPU-dependent in NCCL's model: hop latencies, launch, the network */
        ck_assert_double_eq(get(&p, "cs.link_lat_s.nvlink"), def.link_lat_s[CS_LINK_NVLINK]);
        ck_assert_double_eq(get(&p, "cs.launch_s"), def.launch_s);
        ck_assert_double_eq(get(&p, "cs.link_Bps.net"), def.link_Bps[CS_LINK_NET]);
        ck_assert_ptr_nonnull(
            strstr(cs_param_notes_get(notes, "cs.link_Bps.nvlink"), "SM90_NVLINK_BW 20.6"));
        ck_assert_ptr_nonnull(strstr(cs_param_notes_get(notes, "cs.tb_Bps.LL"), "boost clock"));
    }
    /* a key the user set (noted) is left alone */
    memset(notes, 0, sizeof(*notes));
    cs_params_init(&p);
    p.link_Bps[CS_LINK_NVLINK] = 1e9;
    ck_assert_int_eq(cs_param_notes_put(notes, "cs.link_Bps.nvlink", "set by hand"), 0);
    spec.gpu = CS_GPU_H200;
    ck_assert_int_eq(cs_platform_spec_params(&spec, &p, notes), 0);
    ck_assert_double_eq(p.link_Bps[CS_LINK_NVLINK], 1e9);
    ck_assert_str_eq(cs_param_notes_get(notes, "cs.link_Bps.nvlink"), "set by hand");
    ck_assert_double_eq(p.gpu_sms, 132);
    free(notes);
}
END_TEST

/* Names: the Hopper family names stand for a family and a GPU; kinds round-trip. */
START_TEST(names)
{
    ck_assert_int_eq(cs_platform_family_parse("hgx-h100"), CS_FAM_DGX);
    ck_assert_int_eq(cs_platform_family_gpu("hgx-h100"), CS_GPU_H100);
    ck_assert_int_eq(cs_platform_family_gpu("hgx-h200"), CS_GPU_H200);
    ck_assert_int_eq(cs_platform_family_parse("h100-pcie"), CS_FAM_PCIE_4GPU);
    ck_assert_int_eq(cs_platform_family_gpu("h100-pcie-nvbridge"), CS_GPU_H100_PCIE);
    ck_assert_int_eq(cs_platform_family_gpu("dgx-a100"), CS_GPU_A100);
    ck_assert_int_eq(cs_platform_family_parse("virtual"), CS_FAM_VIRTUAL);
    ck_assert_int_eq(cs_platform_family_gpu("nope"), 0);
    for (int g = CS_GPU_A100; g <= CS_GPU_H200; g++)
        ck_assert_int_eq(cs_gpu_kind_parse(cs_gpu_kind_name((enum cs_gpu_kind)g)), g);
    ck_assert_int_eq(cs_gpu_kind_parse("v100"), 0);
    ck_assert_int_eq(cs_link_class_parse("hbm"), CS_LINK_HBM);
    ck_assert(cs_link_class_slower(CS_LINK_NVLINK, CS_LINK_HBM));
    ck_assert(cs_link_class_slower(CS_LINK_NET, CS_LINK_PCIE));
    ck_assert(!cs_link_class_slower(CS_LINK_HBM, CS_LINK_NVLINK));
    ck_assert(cs_link_class_slower(CS_LINK_HBM, 0));
}
END_TEST

/* Write spec with its priors to a temporary file and read it back. */
static struct cs_platform *write_read(const struct cs_platform_spec *spec, char *path)
{
    struct cs_params p;
    struct cs_platform *plat = NULL;
    struct cs_error err;
    int fd;

    strcpy(path, "/tmp/check_gpu.XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    cs_params_init(&p);
    ck_assert_int_eq(cs_platform_spec_params(spec, &p, NULL), 0);
    cs_error_init(&err);
    ck_assert_msg(cs_platform_write(spec, &p, path, &err) == 0, "%s", err.msg);
    ck_assert_msg(cs_platform_read(path, &plat, &err) == 0, "%s", err.msg);
    return plat;
}

/* A virtual platform: N ranks, one link of class hbm shared by both directions, the GPU's SMs,
 * cs.ranks_per_gpu N; the GPU's priors travel in the file. */
START_TEST(virtual_platform)
{
    struct cs_platform_spec spec;
    struct cs_platform *plat;
    char path[64], line[512];
    int shared = 0, cores = 0;
    FILE *fp;

    cs_platform_spec_init(&spec, CS_FAM_VIRTUAL);
    spec.ranks = 6;
    spec.gpu = CS_GPU_H200;
    plat = write_read(&spec, path);
    ck_assert_int_eq(plat->ngpus, 6);
    ck_assert_int_eq(plat->nlinks, 1);
    ck_assert_str_eq(plat->links[0].id, "hbm");
    ck_assert_int_eq(plat->links[0].cls, CS_LINK_HBM);
    ck_assert_double_eq(plat->params.ranks_per_gpu, 6);
    ck_assert_double_eq(plat->params.gpu_sms, 132);
    ck_assert_double_eq_tol(plat->params.link_Bps[CS_LINK_HBM], 2.4e12, 1);
    fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    while (fgets(line, sizeof(line), fp) != NULL) {
        shared += strstr(line, "sharing_policy=\"SHARED\"") != NULL;
        cores += strstr(line, "core=\"132\"") != NULL;
        ck_assert_msg(strstr(line, "direction=") == NULL, "a shared link has no direction: %s",
                      line);
    }
    fclose(fp);
    ck_assert_int_eq(shared, 1);
    ck_assert_int_eq(cores, 6);
    cs_platform_free(plat);
    unlink(path);
}
END_TEST

/* Families refuse GPUs they cannot hold. */
START_TEST(gpu_fits)
{
    static const struct {
        enum cs_platform_family fam;
        enum cs_gpu_kind gpu;
        int ok;
    } cases[] = {
        {CS_FAM_DGX, CS_GPU_H100, 1},       {CS_FAM_DGX, CS_GPU_H100_PCIE, 0},
        {CS_FAM_PCIE_4GPU, CS_GPU_H100, 0}, {CS_FAM_PCIE_4GPU, CS_GPU_H100_PCIE, 1},
        {CS_FAM_PCIE_NET, CS_GPU_H200, 0},  {CS_FAM_HIER, CS_GPU_H200, 1},
        {CS_FAM_VIRTUAL, CS_GPU_A100, 1},
    };
    struct cs_platform_spec spec;
    struct cs_params p;
    struct cs_error err;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cs_platform_spec_init(&spec, cases[i].fam);
        spec.gpu = cases[i].gpu;
        cs_params_init(&p);
        cs_error_init(&err);
        ck_assert_int_eq(cs_platform_write(&spec, &p, "/dev/null", &err),
                         cases[i].ok ? 0 : CS_ERR_USAGE);
        if (!cases[i].ok)
            ck_assert_ptr_nonnull(strstr(err.msg, "is not a GPU of the"));
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {gpu_priors, 1}, {names, 1}, {virtual_platform, 1}, {gpu_fits, 1}, {NULL, 0},
    };

    return test_run("gpu", 0, tests, NULL);
}
