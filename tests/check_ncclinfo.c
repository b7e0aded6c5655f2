/* check_ncclinfo.c: NCCL INFO logs: the shared p4d and H100 logs field by field, the forms of
 * other NCCL versions and launchers, other communicators, and what NCCL would not print. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclinfo.h"
#include "runner.h"

static struct cs_ncclinfo *read_file(const char *rel)
{
    struct cs_ncclinfo *log = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_ncclinfo_read(test_data(rel), &log, &err) == 0, "%s: %s", rel, err.msg);
    return log;
}

static struct cs_ncclinfo *read_text(const char *text, struct cs_error *err, int *rc)
{
    struct cs_ncclinfo *log = NULL;

    cs_error_init(err);
    *rc = cs_ncclinfo_read_mem(text, strlen(text), "l.log", &log, err);
    return log;
}

START_TEST(test_p4d)
{
    struct cs_ncclinfo *log = read_file("topology/awsp4d-efa-2node-ncclinfo-nccl2.9.9.log");
    static const int ring0[] = {0, 7, 6, 5, 4, 3, 2, 1, 8, 15, 14, 13, 12, 11, 10, 9};
    static const int ring3[] = {0, 5, 4, 7, 14, 11, 10, 9, 8, 13, 12, 15, 6, 3, 2, 1};
    int up, down[3];

    ck_assert_int_eq(log->version, 20909);
    ck_assert_str_eq(log->version_text, "2.9.9+cuda11.2");
    ck_assert_int_eq(log->version_line, 35);
    ck_assert_int_eq(log->nranks, 16);
    ck_assert_int_eq(log->nnodes, 2);
    ck_assert_int_eq(log->local_ranks, 8);
    ck_assert_int_eq(log->nchannels, 8);
    ck_assert_int_eq(log->nrings, 8);
    ck_assert_mem_eq(cs_ncclinfo_ring(log, 0), ring0, sizeof(ring0));
    ck_assert_mem_eq(cs_ncclinfo_ring(log, 3), ring3, sizeof(ring3));
    ck_assert_mem_eq(cs_ncclinfo_ring(log, 7), ring3, sizeof(ring3));
    ck_assert_ptr_null(cs_ncclinfo_ring(log, 8));
    /* rank 0 heads tree 0 (children 1 and 8), rank 8 hangs off it */
    ck_assert_int_eq(cs_ncclinfo_tree(log, 0, 0, &up, down), 0);
    ck_assert(up == -1 && down[0] == 1 && down[1] == 8 && down[2] == -1);
    ck_assert_int_eq(cs_ncclinfo_tree(log, 8, 0, &up, down), 0);
    ck_assert(up == 0 && down[0] == 9 && down[1] == -1);
    ck_assert_int_eq(log->ntrees, 8);
    ck_assert_int_eq(log->tree_ranks, 16);
    ck_assert_int_eq(log->nvia[CS_VIA_P2P_READ], 256);
    ck_assert_int_eq(log->nvia[CS_VIA_NET_GDR], 64);
    ck_assert_int_eq(log->nvia[CS_VIA_NET_HOST] + log->nvia[CS_VIA_P2P_WRITE], 0);
    ck_assert_str_eq(log->network, "AWS Libfabric");
    ck_assert_int_eq(log->nnets, 0);
    /* the NET devices each GPU's connections use: two GPUs per EFA NIC */
    ck_assert_uint_eq(log->ranks[0].nets, 1u << 1);
    ck_assert_uint_eq(log->ranks[1].nets, 1u << 1);
    ck_assert_uint_eq(log->ranks[2].nets, 1u << 3);
    ck_assert_uint_eq(log->ranks[5].nets, 1u << 0);
    ck_assert_uint_eq(log->ranks[14].nets, 1u << 2);
    ck_assert_str_eq(log->ranks[1].busid, "0000:10:1d.0");
    ck_assert_str_eq(log->ranks[15].busid, "0000:a0:1d.0");
    ck_assert_str_eq(log->ranks[9].gpu, "A100-SXM4-40GB");
    ck_assert_str_eq(log->hosts[log->ranks[9].host], "nccl-tests-efa-16-worker-1");
    ck_assert_int_eq(log->ranks[9].cuda_dev, 1);
    ck_assert_str_eq(log->ranks[12].affinity, "ffffff00,0000ffff,ff000000");
    ck_assert_int_eq(log->other_lines, 0);
    ck_assert_ptr_nonnull(log->table);
    ck_assert_int_eq(log->table->nrows, 60);
    cs_ncclinfo_free(log);
}
END_TEST

START_TEST(test_h100)
{
    struct cs_ncclinfo *log =
        read_file("topology/hgxh100-supermicro-2node-ncclinfo-nccl2.26.2-excerpt.log");
    static const int ring15[] = {0, 1, 2, 3, 4, 5, 6, 14, 13, 12, 11, 10, 9, 8, 15, 7};
    int up, down[3];

    ck_assert_int_eq(log->version, 22602);
    ck_assert_int_eq(log->nranks, 16);
    ck_assert_int_eq(log->nnodes, 2);
    ck_assert_int_eq(log->local_ranks, 8);
    ck_assert_int_eq(log->comm_line, 94);
    ck_assert_int_eq(log->nchannels, 16);
    ck_assert_int_eq(log->nrings, 16);
    ck_assert_mem_eq(cs_ncclinfo_ring(log, 15), ring15, sizeof(ring15));
    ck_assert_int_eq(log->nnets, 8);
    ck_assert_str_eq(log->nets[3].name, "mlx5_4");
    ck_assert_int_eq(log->nets[3].dev, 3);
    ck_assert_int_eq(log->nets[3].port, 1);
    ck_assert_str_eq(log->nets[3].kind, "IB");
    ck_assert_str_eq(log->nets[7].name, "mlx5_11");
    ck_assert_str_eq(log->network, "IB");
    ck_assert_int_eq(log->nvls, 1);
    ck_assert_int_eq(log->tree_ranks, 1);
    ck_assert_int_eq(cs_ncclinfo_tree(log, 0, 0, &up, down), 0);
    ck_assert(up == -1 && down[0] == 1 && down[1] == 8);
    ck_assert_int_eq(cs_ncclinfo_tree(log, 0, 8, &up, down), 0);
    ck_assert(up == 8 && down[0] == 1 && down[1] == -1);
    ck_assert_int_eq(cs_ncclinfo_tree(log, 1, 0, &up, down), -1);
    ck_assert_str_eq(log->ranks[3].busid, "0000:5d:00.0");
    ck_assert_str_eq(log->ranks[3].gpu, "NVIDIA H100 80GB HBM3");
    ck_assert_str_eq(log->ranks[8].affinity, "ffff,ffffffff,00000000,0000ffff,ffffffff");
    ck_assert_int_eq(log->nconns, 0);
    ck_assert_int_eq(log->table->nrows, 64);
    cs_ncclinfo_free(log);
}
END_TEST

/* NCCL 2.4-2.6's Ring lines and trees the other way, srun's prefixes. */
START_TEST(test_old_forms)
{
    static const char text[] =
        "0: node1:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB "
        "ib0:10.0.0.1<0>\n"
        "0: NCCL version 2.4.8+cuda10.1\n"
        "0: node1:100:120 [0] NCCL INFO Ring 00 :    0   1   2   3\n"
        "0: node1:100:120 [0] NCCL INFO Ring 01 :    0   3   2   1\n"
        "0: node1:100:120 [0] NCCL INFO Trees [0] -1->0->1/-1/-1|-1->0->1/-1/-1 [1] "
        "-1->0->3/-1/-1|-1->0->3/-1/-1\n"
        "1: node2:200:220 [0] NCCL INFO Ring 00 : 1 -> 2 [send] via NET/IB/1\n"
        "0: node1:100:120 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0/GDRDMA\n"
        "0: node1:100:120 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\n"
        "0: node1:100:120 [0] NCCL INFO comm 0x7f rank 0 nranks 4 cudaDev 0 nvmlDev 0 - Init "
        "COMPLETE\n";
    static const int ring1[] = {0, 3, 2, 1};
    struct cs_error err;
    int rc, up, down[3];
    struct cs_ncclinfo *log = read_text(text, &err, &rc);

    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_int_eq(log->version, 20408);
    ck_assert_int_eq(log->nranks, 4);
    ck_assert_int_eq(log->nrings, 2);
    ck_assert_mem_eq(cs_ncclinfo_ring(log, 1), ring1, sizeof(ring1));
    ck_assert_int_eq(cs_ncclinfo_tree(log, 0, 1, &up, down), 0);
    ck_assert(up == -1 && down[0] == 3 && down[1] == -1);
    ck_assert_int_eq(log->nvia[CS_VIA_NET_HOST], 1);
    ck_assert_int_eq(log->nvia[CS_VIA_NET_GDR], 1);
    ck_assert_int_eq(log->nvia[CS_VIA_P2P_WRITE], 1);
    ck_assert_uint_eq(log->ranks[1].nets, 1u << 1);
    ck_assert_uint_eq(log->ranks[0].nets, 1u << 0);
    ck_assert_str_eq(log->hosts[log->ranks[1].host], "node2");
    ck_assert_int_eq(log->nnodes, 2);
    ck_assert_str_eq(log->nets[1].kind, "RoCE");
    ck_assert_ptr_null(log->table);
    cs_ncclinfo_free(log);
}
END_TEST

/* 2.19's forms (Channel NN/M with devices in brackets, CUMEM, PXN), SHM, another communicator. */
START_TEST(test_new_forms)
{
    static const char text[] =
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO comm 0x55 rank 0 nRanks 4 nNodes 2 localRanks 2 "
        "localRank 0 MNNVL 0\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO Channel 01/02 :    0   1   3   2\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
        "[1,1]<stdout>:h:1:1 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via "
        "NET/IB/0(0)/GDRDMA\n"
        "[1,1]<stdout>:h:1:1 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via "
        "NET/IBext_v8/1/GDRDMA/Shared\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO comm 0x66 rank 0 nRanks 2 nNodes 1 localRanks 2 "
        "localRank 0 MNNVL 0\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO Channel 00/02 :    0   1\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO Channel 01/02 :    0   2   1   3\n"
        "[1,0]<stdout>:h:1:1 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls channels, "
        "2 p2p channels, 2 p2p channels per peer\n";
    struct cs_error err;
    int rc;
    struct cs_ncclinfo *log = read_text(text, &err, &rc);

    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_int_eq(log->nranks, 4);
    ck_assert_int_eq(log->local_ranks, 2);
    ck_assert_int_eq(log->nchannels, 2);
    ck_assert_int_eq(log->nvia[CS_VIA_P2P_READ], 1);
    ck_assert_int_eq(log->nvia[CS_VIA_SHM], 1);
    ck_assert_int_eq(log->nvia[CS_VIA_NET_GDR], 2);
    ck_assert_uint_eq(log->ranks[1].nets, 3u);
    ck_assert_str_eq(log->network, "IB");
    ck_assert_str_eq(log->ranks[0].busid, ""); /* [0] is a device, not a bus id */
    /* the second communicator's comm line, its 2-rank ring and its channel 1 printed again in
     * another order */
    ck_assert_int_eq(log->other_lines, 3);
    ck_assert_int_eq(cs_ncclinfo_ring(log, 1)[2], 3);
    cs_ncclinfo_free(log);
}
END_TEST

/* What NCCL would not print: errors at the line. */
START_TEST(test_bad)
{
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } bad[] = {
        {"NCCL version 2.12.12+cuda11.6\n"
         "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   1   3\n",
         2, "ring 0: rank 1 comes twice in a ring of the 4 ranks"},
        {"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0\n"
         "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   7\n",
         2, "ring 0: rank 7 is not one in a ring of the 4 ranks"},
        {"h:1:1 [0] NCCL INFO Channel 70/80 :    0   1\n", 1, "NCCL has at most 64 channels"},
        {"h:1:1 [0] NCCL INFO 0 coll channels, 1 p2p channels\n", 1,
         "0 coll channels: NCCL has 1 "
         "to 64"},
        {"just some text\nand more\n", 0, "no line of an NCCL log"},
        {"NCCL version 2.9.9\n#       size         count    type   redop     time   algbw   busbw"
         "  error     time   algbw   busbw  error\n"
         "           8             2   float     sum    179.1    0.00    0.00  2e-07    176.3 "
         "0.00\n",
         3, "an nccl-tests row of 10 fields under a header of 12"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cs_error err;
        int rc;
        struct cs_ncclinfo *log = read_text(bad[i].text, &err, &rc);

        ck_assert_ptr_null(log);
        ck_assert_int_ne(rc, 0);
        ck_assert_int_eq(err.line, bad[i].line);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%zu: %s", i, err.msg);
        ck_assert_str_eq(err.file, "l.log");
    }
}
END_TEST

START_TEST(test_detect_and_table)
{
    struct cs_ncclinfo *log = read_file("topology/awsp4d-efa-2node-ncclinfo-nccl2.9.9.log");
    char *out = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&out, &len);

    ck_assert(cs_ncclinfo_detect("x NCCL INFO y", 13));
    ck_assert(cs_ncclinfo_detect("# Using devices\n", 16));
    ck_assert(!cs_ncclinfo_detect("<system version=\"1\"/>", 21));
    ck_assert_int_eq(cs_ncclinfo_write_table(log, fp), 0);
    fclose(fp);
    ck_assert_ptr_nonnull(strstr(out, "version            2.9.9 (2.9.9+cuda11.2)"));
    ck_assert_ptr_nonnull(strstr(out, "connections        P2P read 256, NET GDR 64"));
    ck_assert_ptr_nonnull(strstr(out, "NET devices used   0,1,2,3"));
    ck_assert_ptr_nonnull(strstr(out, "\n1    134    0 3 10 15 14 13 12 9 8 11 2 7 6 5 4 1\n"));
    ck_assert_ptr_nonnull(strstr(out, "nccl-tests table   60 rows"));
    ck_assert_str_eq(cs_ncclinfo_via_name(CS_VIA_NET_HOST), "NET host");
    free(out);
    cs_ncclinfo_free(log);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_p4d, 1},       {test_h100, 1}, {test_old_forms, 1},
        {test_new_forms, 1}, {test_bad, 1},  {test_detect_and_table, 1},
        {NULL, 0},
    };

    return test_run("ncclinfo", 0, tests, NULL);
}
