/* check_topo.c: machines from their own files: every shared topology file pinned (GPUs, NICs,
 * links, GPU-NIC paths), routes, priors, files combined and their contradictions. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "runner.h"
#include "topo.h"

#define T(f) "topology/" f

/* The machine of the files (tests/data/ paths), with --gpu gpu (or NULL): 0 and *out, or the
 * error code with err. */
static int machine(const char *const *files, int n, const char *gpu, struct cs_topo **out,
                   struct cs_error *err)
{
    char paths[CS_TOPO_MAX_FILES][4096];
    const char *p[CS_TOPO_MAX_FILES];
    struct cs_topo_opts o = {{0}, NULL, {0}};

    for (int i = 0; i < n; i++) {
        snprintf(paths[i], sizeof(paths[i]), "%s", test_data(files[i]));
        p[i] = paths[i];
    }
    if (gpu != NULL)
        ck_assert_int_eq(cs_topo_gpu_parse(gpu, &o.gpu), 0);
    cs_error_init(err);
    return cs_topo_read(p, n, &o, out, NULL, NULL, err);
}

/* The machine of text files in memory, named a.xml, b.txt, ... */
static int machine_mem(const char *const *texts, const char *const *names, int n, const char *gpu,
                       struct cs_topo **out, struct cs_error *err)
{
    size_t lens[CS_TOPO_MAX_FILES];
    struct cs_topo_opts o = {{0}, NULL, {0}};

    for (int i = 0; i < n; i++)
        lens[i] = strlen(texts[i]);
    if (gpu != NULL)
        ck_assert_int_eq(cs_topo_gpu_parse(gpu, &o.gpu), 0);
    cs_error_init(err);
    return cs_topo_read_mem(names, texts, lens, n, &o, out, err);
}

static int count_kind(const struct cs_topo *t, enum cs_topo_kind k)
{
    int n = 0;

    for (int d = 0; d < t->ndev; d++)
        n += t->dev[d].kind == k && (k != CS_TOPO_NIC || t->head[d] == d);
    return n;
}

/* Hops as "id^ id_" (^ up, _ down), into buf. */
static const char *hops_text(const struct cs_topo_hop *hop, int n, char *buf, size_t len)
{
    size_t k = 0;

    buf[0] = '\0';
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s%s", i ? " " : "", hop[i].id,
                              hop[i].up ? "^" : "_");
    return buf;
}

static const char *nic_path(const struct cs_topo *t, int i, char *buf, size_t len)
{
    struct cs_topo_hop hop[CS_TOPO_MAX_HOPS];
    int n;

    if (cs_topo_nic_path(t, i, hop, &n) < 0)
        return "none";
    return hops_text(hop, n, buf, len);
}

static const char *route(const struct cs_topo *t, int a, int b, char *buf, size_t len)
{
    struct cs_topo_hop hop[CS_TOPO_MAX_HOPS];
    int n;

    cs_topo_route(t, a, b, hop, &n);
    return hops_text(hop, n, buf, len);
}

/* What each shared topology file (the copies in tests/data/topology) gives: GPUs, kind, NICs,
 * switches, CPUs, links of a node, the log's nodes, GPU 0's and GPU 1's paths to their NICs
 * (^ up, _ down), whether they share their NIC, GPU 0's network bandwidth. */
static const struct pin {
    const char *files[2];
    int nfiles;
    const char *gpu;
    int ngpus;
    enum cs_gpu_kind kind;
    int sxm, nics, switches, cpus, links, nodes;
    const char *path0, *path1;
    int shared;
    double net_Bps;
} pins[] = {
    {{T("aws-p4d-a100-topo.xml")},
     1,
     NULL,
     8,
     CS_GPU_A100,
     1,
     4,
     4,
     2,
     29,
     1,
     "gpu0_pcie^ n0_nic0_pcie_",
     "gpu1_pcie^ n0_nic0_pcie_",
     1,
     12e9},
    {{T("aws-p4d-a100-topo.xml"), T("awsp4d-efa-2node-ncclinfo-nccl2.9.9.log")},
     2,
     NULL,
     8,
     CS_GPU_A100,
     1,
     4,
     4,
     2,
     29,
     2,
     "gpu0_pcie^ n0_nic0_pcie_",
     "gpu1_pcie^ n0_nic0_pcie_",
     1,
     12e9},
    {{T("awsp4d-efa-2node-ncclinfo-nccl2.9.9.log")},
     1,
     NULL,
     8,
     CS_GPU_A100,
     1,
     4,
     4,
     2,
     29,
     2,
     "gpu0_pcie^ n0_nic1_pcie_",
     "gpu1_pcie^ n0_nic1_pcie_",
     1,
     12e9},
    {{T("azure-ncv4-a100pcie-topo.xml")},
     1,
     NULL,
     4,
     CS_GPU_A100,
     0,
     1,
     0,
     4,
     12,
     1,
     "gpu0_pcie^ n0_nic0_pcie_",
     "gpu1_pcie^ n0_sys0_1_ n0_nic0_pcie_",
     1,
     12e9},
    {{T("azure-ncv4-a100pcie-topo.xml"), T("azure-ncv4-a100pcie-graph.xml")},
     2,
     NULL,
     4,
     CS_GPU_A100,
     0,
     1,
     0,
     4,
     12,
     1,
     "gpu0_pcie^ n0_nic0_pcie_",
     "gpu1_pcie^ n0_sys0_1_ n0_nic0_pcie_",
     1,
     12e9},
    {{T("azure-ndv4-a100-topo.xml")},
     1,
     "a100",
     8,
     CS_GPU_A100,
     1,
     8,
     4,
     4,
     42,
     1,
     "gpu0_pcie^ n0_nic2_pcie_",
     "gpu1_pcie^ n0_nic3_pcie_",
     0,
     24e9},
    {{T("dgxa100-oci-nvidia-smi-topo.txt")},
     1,
     NULL,
     8,
     CS_GPU_A100,
     1,
     12,
     22,
     6,
     77,
     1,
     "gpu0_pcie^ n0_sw1^ n0_sw12_ n0_nic0_pcie_",
     "gpu1_pcie^ n0_sw2^ n0_sw13_ n0_nic1_pcie_",
     0,
     24e9},
    {{T("hgxh100-supermicro-2node-ncclinfo-nccl2.26.2-excerpt.log")},
     1,
     NULL,
     8,
     CS_GPU_H100,
     1,
     8,
     8,
     1,
     40,
     2,
     "gpu0_pcie^ n0_nic0_pcie_",
     "gpu1_pcie^ n0_nic1_pcie_",
     0,
     48e9},
    {{T("oci-bmgpuh100-topo.xml")},
     1,
     NULL,
     8,
     CS_GPU_H100,
     1,
     8,
     24,
     2,
     57,
     1,
     "gpu0_pcie^ n0_sw1^ n0_sw2_ n0_nic0_pcie_",
     "gpu1_pcie^ n0_sw4^ n0_sw5_ n0_nic1_pcie_",
     0,
     2 * 180e9 / 8 * 0.96},
};

START_TEST(test_pins)
{
    const struct pin *p = &pins[_i];
    struct cs_topo *t = NULL;
    struct cs_error err;
    char b0[512], b1[512];
    int rc = machine(p->files, p->nfiles, p->gpu, &t, &err);

    ck_assert_msg(rc == 0, "%s: %s", p->files[0], err.msg);
    ck_assert_int_eq(t->ngpus, p->ngpus);
    ck_assert_int_eq(t->gpu.kind, p->kind);
    ck_assert_int_eq(t->gpu.sxm, p->sxm);
    ck_assert_int_eq(count_kind(t, CS_TOPO_NIC), p->nics);
    ck_assert_int_eq(count_kind(t, CS_TOPO_SWITCH), p->switches);
    ck_assert_int_eq(count_kind(t, CS_TOPO_CPU), p->cpus);
    ck_assert_int_eq(cs_topo_nlinks(t), p->links);
    ck_assert_int_eq(t->nodes, p->nodes);
    ck_assert_str_eq(nic_path(t, 0, b0, sizeof(b0)), p->path0);
    ck_assert_str_eq(nic_path(t, 1, b1, sizeof(b1)), p->path1);
    ck_assert_int_eq(t->nic_of[0] == t->nic_of[1], p->shared);
    ck_assert_double_eq_tol(t->net_Bps[t->head[t->nic_of[0]]], p->net_Bps, 1);
    /* every GPU has a NIC, and a route to every other is the mirror of the way back */
    for (int a = 0; a < 2 * t->ngpus; a++) {
        ck_assert_int_ge(t->nic_of[a % t->ngpus], 0);
        for (int b = 0; b < 2 * t->ngpus; b++) {
            struct cs_topo_hop x[CS_TOPO_MAX_HOPS], y[CS_TOPO_MAX_HOPS];
            int nx, ny;

            if (a == b)
                continue;
            cs_topo_route(t, a, b, x, &nx);
            cs_topo_route(t, b, a, y, &ny);
            ck_assert_int_gt(nx, 0);
            ck_assert_int_eq(nx, ny);
            for (int k = 0; k < nx; k++) {
                ck_assert_str_eq(x[k].id, y[nx - 1 - k].id);
                ck_assert_int_eq(x[k].up, !y[nx - 1 - k].up);
            }
        }
    }
    cs_topo_free(t);
}
END_TEST

/* The p4d file's 2 GPUs per EFA NIC across nodes; NVSwitch within; NC A100 v4's PCIe. */
START_TEST(test_routes)
{
    const char *p4d[] = {T("aws-p4d-a100-topo.xml")}, *ncv4[] = {T("azure-ncv4-a100pcie-topo.xml")};
    struct cs_topo *t;
    struct cs_error err;
    char b[512];

    ck_assert_int_eq(machine(p4d, 1, NULL, &t, &err), 0);
    ck_assert_str_eq(route(t, 0, 1, b, sizeof(b)), "gpu0_nvl^ gpu1_nvl_");
    ck_assert_str_eq(route(t, 0, 8, b, sizeof(b)),
                     "gpu0_pcie^ n0_nic0_pcie_ n0_nic0_net^ n1_nic0_net_ n1_nic0_pcie^ gpu8_pcie_");
    ck_assert_str_eq(route(t, 1, 9, b, sizeof(b)),
                     "gpu1_pcie^ n0_nic0_pcie_ n0_nic0_net^ n1_nic0_net_ n1_nic0_pcie^ gpu9_pcie_");
    ck_assert_str_eq(
        route(t, 7, 14, b, sizeof(b)),
        "gpu7_pcie^ n0_nic3_pcie_ n0_nic3_net^ n1_nic3_net_ n1_nic3_pcie^ gpu14_pcie_");
    cs_topo_free(t);
    ck_assert_int_eq(machine(ncv4, 1, NULL, &t, &err), 0);
    ck_assert_str_eq(route(t, 0, 1, b, sizeof(b)), "gpu0_pcie^ n0_sys0_1^ gpu1_pcie_");
    ck_assert_str_eq(route(t, 3, 2, b, sizeof(b)), "gpu3_pcie^ n0_sys2_3_ gpu2_pcie_");
    /* across nodes through the host: gdr="0" on the NIC */
    ck_assert_str_eq(route(t, 1, 4, b, sizeof(b)),
                     "gpu1_pcie^ n0_sys0_1_ n0_nic0_pcie_ n0_nic0_net^ n1_nic0_net_ n1_nic0_pcie^ "
                     "gpu4_pcie_");
    ck_assert_int_eq(t->gdr[0], 0);
    cs_topo_free(t);
}
END_TEST

/* What the files leave out, each prior named in a note. */
static int has_note(const struct cs_topo *t, const char *what)
{
    for (int k = 0; k < t->nnotes; k++)
        if (strstr(t->notes[k], what) != NULL)
            return 1;
    return 0;
}

START_TEST(test_priors)
{
    const char *ndv4[] = {T("azure-ndv4-a100-topo.xml")}, *oci[] = {T("oci-bmgpuh100-topo.xml")};
    struct cs_topo *t;
    struct cs_error err;

    ck_assert_int_eq(machine(ndv4, 1, "a100", &t, &err), 0);
    ck_assert(has_note(t, "NVLink: not in the files: prior: every A100 SXM4 on NVSwitch with its "
                          "12 NVLinks"));
    ck_assert(has_note(t, "prior: an A100 machine's InfiniBand: 200 Gb/s HDR"));
    ck_assert(!has_note(t, "PCIe links the files do not rate")); /* 16 GT/s x16 in the file */
    ck_assert_double_eq_tol(t->nvs_Bps[t->gpus[0]], 240e9, 1);
    ck_assert_double_eq_tol(t->up_Bps[t->gpus[0]], 24e9, 1);
    ck_assert_int_eq(t->gdr[0], 1);
    cs_topo_free(t);
    /* a dump: 18 NVLinks to 4 NVSwitches; the top switches' 5 GT/s uplinks as the file says */
    ck_assert_int_eq(machine(oci, 1, NULL, &t, &err), 0);
    ck_assert_int_eq(t->dev[t->gpus[0]].nvs_links, 18);
    ck_assert_double_eq_tol(t->nvs_Bps[t->gpus[0]], 18 * 20.6e9, 1);
    ck_assert_double_eq_tol(t->up_Bps[t->dev[t->dev[t->gpus[0]].parent].parent],
                            16 * 30 / 80.0 * 1e9, 1);
    ck_assert(!has_note(t, "prior"));
    cs_topo_free(t);
}
END_TEST

/* Files that contradict each other, or --gpu: an error at the line. */
START_TEST(test_contradictions)
{
    static const char matrix4[] = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
                                  "GPU0\t X \tSYS\tSYS\tSYS\t0-23\t0\n"
                                  "GPU1\tSYS\t X \tSYS\tSYS\t24-47\t1\n"
                                  "GPU2\tSYS\tSYS\t X \tSYS\t48-71\t2\n"
                                  "GPU3\tSYS\tSYS\tSYS\t X \t72-95\t3\n";
    static const char matrix4_numa[] = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
                                       "GPU0\t X \tSYS\tSYS\tSYS\t0-23\t0\n"
                                       "GPU1\tSYS\t X \tSYS\tSYS\t24-47\t2\n"
                                       "GPU2\tSYS\tSYS\t X \tSYS\t48-71\t1\n"
                                       "GPU3\tSYS\tSYS\tSYS\t X \t72-95\t3\n";
    static const char matrix4_nv[] = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
                                     "GPU0\t X \tNV12\tSYS\tSYS\t0-23\t0\n"
                                     "GPU1\tNV12\t X \tSYS\tSYS\t24-47\t1\n"
                                     "GPU2\tSYS\tSYS\t X \tNV12\t48-71\t2\n"
                                     "GPU3\tSYS\tSYS\tNV12\t X \t72-95\t3\n";
    static const char log3[] = "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 10000 "
                               "- Init COMPLETE\n"
                               "h:1:1 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 1 busId 20000 "
                               "- Init COMPLETE\n";
    static const char log4[] =
        "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 1 localRanks 4 "
        "localRank 0 MNNVL 0\n"
        "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 4 cudaDev 0 busId 100000 "
        "- Init COMPLETE\n"
        "h:1:1 [1] NCCL INFO comm 0x1 rank 1 nranks 4 cudaDev 1 busId 500000 "
        "- Init COMPLETE\n";
    static const char gdr_log[] =
        "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 2 localRanks "
        "4 localRank 0 MNNVL 0\n"
        "h:1:1 [0] NCCL INFO Channel 00 : 4[100000] -> 0[100000] [receive] "
        "via NET/Socket/0/GDRDMA\n";
    char ncv4_text[4096], *buf;
    size_t len;
    struct cs_topo *t = NULL;
    struct cs_error err;
    const char *names[] = {"ncv4.xml", "m.txt"};
    const char *texts[2];

    cs_error_init(&err);
    ck_assert_int_eq(
        cs_file_read(test_data(T("azure-ncv4-a100pcie-topo.xml")), 1 << 20, &buf, &len, &err), 0);
    snprintf(ncv4_text, sizeof(ncv4_text), "%s", buf);
    free(buf);
    texts[0] = ncv4_text;
    /* the same machine: every pair SYS, each GPU on its own NUMA node */
    texts[1] = matrix4;
    ck_assert_msg(machine_mem(texts, names, 2, NULL, &t, &err) == 0, "%s", err.msg);
    cs_topo_free(t);
    /* NUMA nodes swapped */
    texts[1] = matrix4_numa;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_str_eq(err.file, "m.txt");
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "GPU1 is on NUMA node 2, but ncv4.xml:13 puts it on NUMA "
                                          "node 1"));
    /* NVLink bridges the file does not have (its <nvlink>s point at each GPU itself) */
    texts[1] = matrix4_nv;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "GPU0-GPU1: 12 NVLinks, but ncv4.xml:3 gives 0"));
    /* a log of 2 ranks on a machine of 4 GPUs */
    texts[1] = log3;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "2 ranks on the first node"));
    ck_assert_int_eq(err.line, 1);
    /* a rank on a GPU the file does not have */
    texts[1] = log4;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_str_eq(err.file, "m.txt");
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "rank 1 runs on GPU 0005:00:00.0, which is not a GPU"));
    /* GPUDirect RDMA over a NIC that has none */
    texts[1] = gdr_log;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "GPUDirect RDMA (GDRDMA), but ncv4.xml:8 says its NIC "
                                          "has none"));
    /* --gpu against the PCI device id */
    ck_assert_int_eq(machine_mem(texts, names, 1, "h100", &t, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "the gpu option, h100 contradicts PCI 10de:20b5"));
    /* two topology files */
    texts[1] = ncv4_text;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "a second topology XML"));
}
END_TEST

/* No GPU, a GPU without a model, nothing that says which: exit 2's CS_ERR_USAGE. */
START_TEST(test_gpus)
{
    static const char v100[] =
        "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:3b:00.0\" class=\"0x030200\" "
        "vendor=\"0x10de\" device=\"0x1db1\"/></cpu></system>\n";
    static const char amd[] =
        "<system version=\"1\"><cpu numaid=\"0\">\n<pci busid=\"0000:3b:00.0\" class=\"0x038000\" "
        "vendor=\"0x1002\" device=\"0x740c\"/></cpu></system>\n";
    static const char none[] =
        "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:3b:00.0\" "
        "class=\"0x020000\"/></cpu></system>\n";
    static const char skeleton[] =
        "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:3b:00.0\" "
        "class=\"0x030200\"/></cpu></system>\n";
    static const char volta[] =
        "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:3b:00.0\" class=\"0x030200\">"
        "<gpu dev=\"0\" sm=\"70\" rank=\"0\" gdr=\"1\"/></pci></cpu></system>\n";
    static const char ampere[] =
        "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:3b:00.0\" class=\"0x030200\">"
        "<gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/></pci></cpu></system>\n";
    const char *names[] = {"a.xml"};
    const char *texts[1];
    struct cs_topo *t;
    struct cs_error err;

    texts[0] = v100;
    ck_assert_int_eq(machine_mem(texts, names, 1, NULL, &t, &err), CS_ERR_USAGE);
    ck_assert_ptr_nonnull(
        strstr(err.msg, "a.xml:1: GPU PCI 10de:1db1 is not one collsim has a model"));
    /* --gpu takes one's priors */
    ck_assert_int_eq(machine_mem(texts, names, 1, "a100", &t, &err), 0);
    ck_assert_int_eq(t->gpu.kind, CS_GPU_A100);
    cs_topo_free(t);
    texts[0] = amd;
    ck_assert_int_eq(machine_mem(texts, names, 1, NULL, &t, &err), CS_ERR_USAGE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "a GPU of AMD (PCI 1002:740c)"));
    texts[0] = none;
    ck_assert_int_eq(machine_mem(texts, names, 1, NULL, &t, &err), CS_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "no GPU in the file"));
    texts[0] = skeleton;
    ck_assert_int_eq(machine_mem(texts, names, 1, NULL, &t, &err), CS_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "nothing says which GPU"));
    ck_assert_int_eq(machine_mem(texts, names, 1, "a100-pcie", &t, &err), 0);
    ck_assert(has_note(t, "NVLink: none in the files"));
    ck_assert_int_eq(t->nnvl, 0);
    ck_assert(t->nvs_Bps[t->gpus[0]] == 0);
    cs_topo_free(t);
    texts[0] = volta;
    ck_assert_int_eq(machine_mem(texts, names, 1, NULL, &t, &err), CS_ERR_USAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "a GPU of compute capability 7.0"));
    texts[0] = ampere; /* no NVLink in a dump: a PCIe card */
    ck_assert_int_eq(machine_mem(texts, names, 1, NULL, &t, &err), 0);
    ck_assert_int_eq(t->gpu.kind, CS_GPU_A100);
    ck_assert_int_eq(t->gpu.sxm, 0);
    cs_topo_free(t);
    ck_assert_int_eq(machine_mem(texts, names, 1, "h100", &t, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "compute capability 8.0 (a.xml:1), but the GPU is"));
}
END_TEST

/* A GPU's NVLinks: no more than its kind has. */
START_TEST(test_nvlink_count)
{
    static const char two[] =
        "<system version=\"1\"><cpu numaid=\"0\">\n"
        "<pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b5\">\n"
        "<gpu dev=\"0\" sm=\"80\"><nvlink target=\"0000:02:00.0\" count=\"14\" "
        "tclass=\"0x030200\"/></gpu></pci>\n"
        "<pci busid=\"0000:02:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b5\">\n"
        "<gpu dev=\"1\" sm=\"80\"><nvlink target=\"0000:01:00.0\" count=\"14\" "
        "tclass=\"0x030200\"/></gpu></pci></cpu></system>\n";
    const char *names[] = {"a.xml"}, *texts[] = {two};
    struct cs_topo *t;
    struct cs_error err;

    ck_assert_int_eq(machine_mem(texts, names, 1, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "GPU 0 has 14 NVLinks: an A100 PCIe has 12"));
}
END_TEST

/* An NCCL graph file against the machine. */
START_TEST(test_graph)
{
    static const char nvl[] = "<graphs version=\"1\">\n"
                              "<graph id=\"0\" pattern=\"4\" nchannels=\"1\" typeintra=\"NVL\">\n"
                              "<channel><gpu dev=\"0\"/><gpu dev=\"1\"/></channel></graph>\n"
                              "</graphs>\n";
    static const char far[] = "<graphs version=\"1\">\n"
                              "<graph id=\"0\" pattern=\"4\" nchannels=\"1\" typeintra=\"SYS\">\n"
                              "<channel><gpu dev=\"0\"/><gpu dev=\"9\"/></channel></graph>\n"
                              "</graphs>\n";
    char *buf;
    size_t len;
    const char *names[] = {"ncv4.xml", "g.xml"}, *texts[2];
    struct cs_topo *t;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(
        cs_file_read(test_data(T("azure-ncv4-a100pcie-topo.xml")), 1 << 20, &buf, &len, &err), 0);
    texts[0] = buf;
    texts[1] = nvl;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_str_eq(err.file, "g.xml");
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "GPUs 0 and 1 are SYS apart on the machine, beyond the "
                                          "graph's typeintra NVL"));
    texts[1] = far;
    ck_assert_int_eq(machine_mem(texts, names, 2, NULL, &t, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "dev=\"9\" is not a GPU of the machine (4 GPUs)"));
    free(buf);
}
END_TEST

/* A log alone: the GPUs from its first node, CPUs by affinity, NICs by the NET devices. */
START_TEST(test_log_alone)
{
    const char *p4d[] = {T("awsp4d-efa-2node-ncclinfo-nccl2.9.9.log")};
    struct cs_topo *t;
    struct cs_error err;

    ck_assert_int_eq(machine(p4d, 1, NULL, &t, &err), 0);
    /* ranks 0, 1 used NET device 1; 4, 5 device 0 */
    ck_assert_int_eq(t->dev[t->nic_of[0]].net_dev, 1);
    ck_assert_int_eq(t->dev[t->nic_of[4]].net_dev, 0);
    ck_assert_int_eq(t->dev[t->nic_of[5]].net_dev, 0);
    ck_assert_int_eq(cs_topo_cpu_of(t, t->gpus[0]) == cs_topo_cpu_of(t, t->gpus[3]), 1);
    ck_assert_int_eq(cs_topo_cpu_of(t, t->gpus[0]) == cs_topo_cpu_of(t, t->gpus[4]), 0);
    ck_assert_str_eq(t->dev[t->gpus[2]].busid, "0000:20:1c.0");
    ck_assert(has_note(t, "NICs: AWS EFA"));
    cs_topo_free(t);
}
END_TEST

/* Several NICs nearest one GPU (a hand-made p5.48xlarge-like file: 4 EFA devices beside each
 * H100 on its switch) join into one link of their sum; PCIe links at the file's Gen5 rate. */
START_TEST(test_nics_joined)
{
    const char *p5[] = {T("p5-like-4nics-per-gpu.xml")};
    struct cs_topo *t;
    struct cs_error err;
    int nic, members = 0;

    ck_assert_int_eq(machine(p5, 1, NULL, &t, &err), 0);
    ck_assert_int_eq(t->ngpus, 8);
    nic = t->nic_of[0];
    for (int d = 0; d < t->ndev; d++)
        members += t->head[d] == nic;
    ck_assert_int_eq(members, 4);
    ck_assert_int_eq(count_kind(t, CS_TOPO_NIC), 8);
    ck_assert_double_eq_tol(t->net_Bps[nic], 4 * 100e9 / 8 * 0.96, 1);
    ck_assert_double_eq_tol(t->up_Bps[nic], 4 * 48e9, 1);
    ck_assert(has_note(t, "GPU 0 (0000:50:00.0) -> NIC 0000:51:00.0 and 3 more NICs (one link of "
                          "their sum)"));
    ck_assert(has_note(t, "an AWS network device (PCI vendor 1d0f): 100 Gb/s"));
    cs_topo_free(t);
}
END_TEST

/* Every shared topology file of an A100 or Hopper machine reads (a new one must be pinned
 * above), and the copies in tests/data are the shared files. */
START_TEST(test_shared)
{
    char dir[8192], path[8448], rel[300], *a, *b;
    struct dirent *de;
    DIR *d;
    int n = 0;

    snprintf(dir, sizeof(dir), "%s/topology", test_shared_data());
    ck_assert_ptr_nonnull(d = opendir(dir));
    while ((de = readdir(d)) != NULL) {
        size_t la, lb;
        struct cs_error err;
        int pinned = 0;

        if (de->d_name[0] == '.' || strcmp(de->d_name, "README.md") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        cs_error_init(&err);
        ck_assert_int_eq(cs_file_read(path, 1 << 24, &a, &la, &err), 0);
        snprintf(rel, sizeof(rel), "topology/%.200s", de->d_name);
        ck_assert_msg(cs_file_read(test_data(rel), 1 << 24, &b, &lb, &err) == 0,
                      "%s is not copied into tests/data/topology", de->d_name);
        ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "tests/data/%s differs from shared", rel);
        free(a);
        free(b);
        for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++)
            for (int f = 0; f < pins[i].nfiles; f++)
                pinned |= strcmp(pins[i].files[f], rel) == 0;
        ck_assert_msg(pinned, "%s: not pinned in check_topo.c", de->d_name);
        n++;
    }
    closedir(d);
    ck_assert_int_eq(n, 8);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_pins, (int)(sizeof(pins) / sizeof(pins[0]))},
        {test_routes, 1},
        {test_priors, 1},
        {test_contradictions, 1},
        {test_gpus, 1},
        {test_nvlink_count, 1},
        {test_graph, 1},
        {test_log_alone, 1},
        {test_nics_joined, 1},
        {NULL, 0},
    };
    const struct test_case shared[] = {{test_shared, 1}, {NULL, 0}};

    return test_run("topo", 0, tests, shared);
}
