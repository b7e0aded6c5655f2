/* check_smitopo.c: nvidia-smi topo -m matrices: the shared DGX A100 one, the forms of other
 * drivers and terminals, NVLink meshes and bridges, partial and inconsistent matrices. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "runner.h"
#include "smitopo.h"

static int view(const char *text, size_t len, struct cs_topo *t, struct cs_error *err)
{
    int rc;

    cs_topo_init(t);
    cs_topo_add_file(t, "m.txt");
    cs_error_init(err);
    rc = cs_smitopo_read(text, len, t, 0, err);
    if (rc == 0)
        cs_topo_order_gpus(t);
    return rc;
}

static int named(const struct cs_topo *t, const char *name)
{
    for (int d = 0; d < t->ndev; d++)
        if (strcmp(t->dev[d].name, name) == 0)
            return d;
    return -1;
}

static int count(const struct cs_topo *t, enum cs_topo_kind k)
{
    int n = 0;

    for (int d = 0; d < t->ndev; d++)
        n += t->dev[d].kind == k;
    return n;
}

START_TEST(test_dgx)
{
    char *text;
    size_t len;
    struct cs_topo t;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_file_read(test_data("topology/dgxa100-oci-nvidia-smi-topo.txt"), 1 << 20,
                                  &text, &len, &err),
                     0);
    ck_assert_msg(view(text, len, &t, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(count(&t, CS_TOPO_GPU), 8);
    ck_assert_int_eq(count(&t, CS_TOPO_NIC), 12);
    ck_assert_int_eq(count(&t, CS_TOPO_CPU), 6);
    ck_assert_int_eq(t.nnvl, 0);
    ck_assert_int_eq(t.dev[named(&t, "GPU5")].nvs_links, 12);
    ck_assert_int_eq(t.gpu.kind, CS_GPU_A100);
    ck_assert_int_eq(t.dev[cs_topo_cpu_of(&t, named(&t, "GPU0"))].numa, 3);
    ck_assert_int_eq(t.dev[cs_topo_cpu_of(&t, named(&t, "mlx5_9"))].numa, 5);
    ck_assert_int_eq(t.dev[cs_topo_cpu_of(&t, named(&t, "mlx5_4"))].numa, -1);
    ck_assert_int_eq(cs_topo_level(&t, named(&t, "GPU0"), named(&t, "mlx5_1")), CS_TOPO_PXB);
    ck_assert_int_eq(cs_topo_level(&t, named(&t, "mlx5_10"), named(&t, "mlx5_11")), CS_TOPO_PIX);
    ck_assert_int_eq(cs_topo_level(&t, named(&t, "GPU0"), named(&t, "GPU2")), CS_TOPO_SYS);
    ck_assert_int_eq(t.nrel, 8 * 19 - 8 * 7 + 0); /* each GPU row's 12 NIC cells */
    free(text);
    cs_topo_cleanup(&t);
}
END_TEST

/* Another driver's form: blanks, escape codes, the NIC legend, NODE and PHB, a 4-GPU NVLink mesh
 * (NV4 to each peer: direct links, not switches), GPU NUMA ID, an Open MPI prefix. */
START_TEST(test_forms)
{
    static const char text[] =
        "$ nvidia-smi topo -m\n"
        "\x1b[4m        GPU0    GPU1    GPU2    GPU3    NIC0    NIC1    CPU Affinity    NUMA "
        "Affinity    GPU NUMA ID\x1b[0m\n"
        "GPU0     X      NV4     NV4     NV4     PIX     SYS     0-31    0               N/A\n"
        "GPU1    NV4      X      NV4     NV4     NODE    SYS     0-31    0               N/A\n"
        "GPU2    NV4     NV4      X      NV4     SYS     PHB     32-63   1               N/A\n"
        "GPU3    NV4     NV4     NV4      X      SYS     PHB     32-63   1               N/A\n"
        "NIC0    PIX     NODE    SYS     SYS      X      SYS\n"
        "NIC1    SYS     SYS     PHB     PHB     SYS      X\n"
        "\n"
        "Legend:\n"
        "\n"
        "  X    = Self\n"
        "\n"
        "NIC Legend:\n"
        "\n"
        "  NIC0: mlx5_0\n"
        "  NIC1: mlx5_1\n";
    struct cs_topo t;
    struct cs_error err;

    ck_assert_msg(view(text, strlen(text), &t, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(count(&t, CS_TOPO_GPU), 4);
    ck_assert_int_eq(count(&t, CS_TOPO_NIC), 2);
    ck_assert_int_eq(count(&t, CS_TOPO_CPU), 2);
    ck_assert_int_eq(t.nnvl, 6);
    ck_assert_int_eq(t.nvl[0].count, 4);
    ck_assert_int_eq(t.gpu.kind, 0); /* NV4 says no GPU kind */
    ck_assert_int_ge(named(&t, "mlx5_0"), 0);
    ck_assert_int_eq(cs_topo_level(&t, named(&t, "GPU0"), named(&t, "mlx5_0")), CS_TOPO_PIX);
    ck_assert_int_eq(cs_topo_level(&t, named(&t, "GPU3"), named(&t, "mlx5_1")), CS_TOPO_PHB);
    ck_assert_int_eq(t.dev[named(&t, "GPU0")].line, 3);
    cs_topo_cleanup(&t);
}
END_TEST

/* Old drivers: SOC for SYS, no NUMA column; NV12 bridged pairs; a 1-GPU machine; a partial
 * matrix (rows cut): the header's GPUs, their columns used. */
START_TEST(test_pairs_and_partial)
{
    static const char pairs[] = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n"
                                "GPU0\t X \tNV12\tSOC\tSOC\t0-47\n"
                                "GPU1\tNV12\t X \tSOC\tSOC\t0-47\n"
                                "GPU2\tSOC\tSOC\t X \tNV12\t48-95\n"
                                "GPU3\tSOC\tSOC\tNV12\t X \t48-95\n";
    static const char one[] = "        GPU0    CPU Affinity    NUMA Affinity\n"
                              "GPU0     X      0-15    0\n";
    static const char cut[] = "\tGPU0\tGPU1\tGPU2\tmlx5_0\tCPU Affinity\tNUMA Affinity\n"
                              "GPU0\t X \tPIX\tSYS\tPIX\t0-7\t0\n";
    struct cs_topo t;
    struct cs_error err;

    ck_assert_int_eq(view(pairs, strlen(pairs), &t, &err), 0);
    ck_assert_int_eq(t.nnvl, 2);
    ck_assert_int_eq(count(&t, CS_TOPO_CPU), 2);
    cs_topo_cleanup(&t);
    ck_assert_int_eq(view(one, strlen(one), &t, &err), 0);
    ck_assert_int_eq(count(&t, CS_TOPO_GPU), 1);
    cs_topo_cleanup(&t);
    ck_assert_int_eq(view(cut, strlen(cut), &t, &err), 0);
    ck_assert_int_eq(count(&t, CS_TOPO_GPU), 3);
    ck_assert_int_eq(cs_topo_level(&t, named(&t, "GPU1"), named(&t, "mlx5_0")), CS_TOPO_PIX);
    ck_assert_int_eq(t.nnotes, 3);
    ck_assert_ptr_nonnull(strstr(t.notes[0], "m.txt:1: the matrix has no row for GPU1"));
    cs_topo_cleanup(&t);
    ck_assert_int_eq(view("no matrix here\nGPU0 is busy\n", 28, &t, &err), 1);
    cs_topo_cleanup(&t);
}
END_TEST

START_TEST(test_bad)
{
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } bad[] = {
        {"\tGPU0\tGPU1\n"
         "GPU0\t X \tNV2\n"
         "GPU1\tNV2\n",
         3, "a row of 1 cells under a header of 2 devices (line 1)"},
        {"\tGPU0\tGPU1\n"
         "GPU0\t X \tPIX\n"
         "GPU1\tFOO\t X \n",
         3, "GPU1-GPU0: 'FOO' is not one of nvidia-smi's"},
        {"\tGPU0\tGPU1\n"
         "GPU0\tPIX\tPIX\n",
         2, "GPU0-GPU0: 'PIX' is not X"},
        {"\tGPU0\tGPU1\n"
         "GPU0\t X \tPIX\n"
         "GPU1\tPXB\t X \n",
         3, "GPU0-GPU1 and GPU1-GPU0 differ"},
        {"\tGPU0\tmlx5_0\n"
         "GPU0\t X \tNV4\n",
         2, "NVLink NV4 between a GPU and a NIC"},
        {"\tGPU0\tGPU1\tGPU2\n"
         "GPU0\t X \tPIX\tSYS\n"
         "GPU1\tPIX\t X \tPIX\n"
         "GPU2\tSYS\tPIX\t X \n",
         2, "GPU0-GPU2 is SYS, which no PCIe tree"},
        {"\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
         "GPU0\t X \tPIX\t0-7\t0\n"
         "GPU1\tPIX\t X \t8-15\t1\n",
         3, "GPU1 is on NUMA node 1, but its PCIe distances put it with a GPU of NUMA node 0"},
        {"\tGPU0\tGPU1\n"
         "GPU0\t X \tPIX\n"
         "GPU0\t X \tPIX\n",
         3, "a second row for GPU0 (line 2)"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cs_topo t;
        struct cs_error err;

        ck_assert_int_eq(view(bad[i].text, strlen(bad[i].text), &t, &err), CS_ERR_INVALID);
        ck_assert_int_eq(err.line, bad[i].line);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%zu: %s", i, err.msg);
        cs_topo_cleanup(&t);
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_dgx, 1}, {test_forms, 1}, {test_pairs_and_partial, 1}, {test_bad, 1}, {NULL, 0},
    };

    return test_run("smitopo", 0, tests, NULL);
}
