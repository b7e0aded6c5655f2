/* check_ncclxml.c: NCCL topology XML: skeletons and dumps, devices by class, ports, NVLinks, and
 * what NCCL could not have written. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncclxml.h"
#include "runner.h"

/* The view of xml text (named t.xml): 0 and t (cs_topo_cleanup it), or the error code. */
static int view(const char *text, struct cs_topo *t, struct cs_error *err)
{
    struct cs_xml_elem *root = NULL;
    int rc;

    cs_topo_init(t);
    cs_topo_add_file(t, "t.xml");
    cs_error_init(err);
    if ((rc = cs_xml_tree_read(text, strlen(text), "t.xml", &root, err)) != 0)
        return rc;
    rc = cs_ncclxml_read(root, t, 0, err);
    cs_xml_tree_free(root);
    if (rc == 0)
        cs_topo_order_gpus(t);
    return rc;
}

static int count(const struct cs_topo *t, enum cs_topo_kind k)
{
    int n = 0;

    for (int d = 0; d < t->ndev; d++)
        n += t->dev[d].kind == k;
    return n;
}

/* A vendor skeleton: GPUs by class (vendor or not), NICs by class, switches, a BMC's display
 * skipped, an NVMe drive skipped. */
START_TEST(test_skeleton)
{
    static const char xml[] =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"1\" affinity=\"ff\" arch=\"x86_64\" vendor=\"GenuineIntel\" "
        "familyid=\"6\" modelid=\"143\">\n"
        "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\" vendor=\"0xffff\" device=\"0xffff\" "
        "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <pci busid=\"0000:1B:00.0\" class=\"0x030200\" link_speed=\"32 GT/s\" "
        "link_width=\"16\"/>\n"
        "      <pci busid=\"0000:1c:00.0\" class=\"0x030000\" vendor=\"0x10de\" "
        "device=\"0x2330\"/>\n"
        "      <pci busid=\"0000:1d:00.0\" class=\"0x020700\"/>\n"
        "    </pci>\n"
        "    <pci busid=\"0000:02:00.0\" class=\"0x030000\" vendor=\"0x1a03\" device=\"0x2000\"/>\n"
        "    <pci busid=\"0000:03:00.0\" class=\"0x010802\"/>\n"
        "  </cpu>\n"
        "</system>\n";
    struct cs_topo t;
    struct cs_error err;

    ck_assert_msg(view(xml, &t, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(count(&t, CS_TOPO_CPU), 1);
    ck_assert_int_eq(count(&t, CS_TOPO_SWITCH), 1);
    ck_assert_int_eq(count(&t, CS_TOPO_GPU), 2);
    ck_assert_int_eq(count(&t, CS_TOPO_NIC), 1);
    ck_assert_int_eq(t.nvl_known, 0); /* no <gpu>: NVLinks unknown */
    ck_assert_str_eq(t.dev[t.gpus[0]].busid, "0000:1b:00.0");
    ck_assert(t.dev[t.gpus[0]].link_GTs == 32 && t.dev[t.gpus[0]].link_width == 16);
    ck_assert_int_eq(t.dev[t.gpus[1]].pci_device, 0x2330);
    ck_assert_int_eq(t.dev[0].numa, 1);
    ck_assert_str_eq(t.dev[0].vendor, "GenuineIntel");
    ck_assert_int_eq(t.dev[0].cpu_model, 143);
    ck_assert(t.dev[1].link_GTs == 16 && t.dev[1].pci_vendor == 0); /* the skeleton's 0xffff */
    ck_assert_int_eq(cs_topo_level(&t, t.gpus[0], t.gpus[1]), CS_TOPO_PIX);
    cs_topo_cleanup(&t);
}
END_TEST

/* A dump: <gpu> with NVLinks to NVSwitches and to a peer, a dual-port <nic>, a <nic> of a CPU. */
START_TEST(test_dump)
{
    static const char xml[] =
        "<system version=\"1\">\n"
        "<cpu numaid=\"0\">\n"
        "<pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b0\">\n"
        "  <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">\n"
        "    <nvlink target=\"0000:c7:00.0\" count=\"6\" tclass=\"0x068000\"/>\n"
        "    <nvlink target=\"0000:c8:00.0\" count=\"4\" tclass=\"0x068000\"/>\n"
        "    <nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
        "  </gpu>\n"
        "</pci>\n"
        "<pci busid=\"0000:02:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b0\">\n"
        "  <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"0\">\n"
        "    <nvlink target=\"0000:01:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
        "    <nvlink target=\"0000:00:00.0\" count=\"2\" tclass=\"0x060400\"/>\n"
        "  </gpu>\n"
        "</pci>\n"
        "<pci busid=\"0000:0c:00.0\" class=\"0x020000\" vendor=\"0x15b3\" device=\"0x1021\">\n"
        "  <nic>\n"
        "    <net name=\"mlx5_0\" dev=\"4\" speed=\"200000\" port=\"1\" gdr=\"1\"/>\n"
        "    <net name=\"mlx5_1\" dev=\"5\" speed=\"-1\" port=\"2\" gdr=\"1\"/>\n"
        "  </nic>\n"
        "</pci>\n"
        "<nic><net name=\"eth0\" dev=\"6\" speed=\"100000\" gdr=\"0\"/></nic>\n"
        "</cpu>\n"
        "</system>\n";
    struct cs_topo t;
    struct cs_error err;
    const struct cs_topo_dev *g0, *g1, *nic = NULL, *eth = NULL;

    ck_assert_msg(view(xml, &t, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(t.nvl_known, 1);
    g0 = &t.dev[t.gpus[0]]; /* by <gpu dev>: 0000:02 */
    g1 = &t.dev[t.gpus[1]];
    ck_assert_str_eq(g0->busid, "0000:02:00.0");
    ck_assert_int_eq(g0->gdr, 0);
    ck_assert_int_eq(g1->nvs_links, 10);
    ck_assert_int_le(g0->nvs_links, 0);
    ck_assert_int_eq(t.nnvl, 1); /* both directions: one pair */
    ck_assert_int_eq(t.nvl[0].count, 2);
    for (int d = 0; d < t.ndev; d++)
        if (t.dev[d].kind == CS_TOPO_NIC)
            *(t.dev[d].nports == 2 ? &nic : &eth) = &t.dev[d];
    ck_assert_ptr_nonnull(nic);
    ck_assert_str_eq(nic->name, "mlx5_0,mlx5_1");
    ck_assert(nic->speed_bps == 200e9); /* speed -1: unknown, not counted */
    ck_assert_int_eq(nic->net_dev, 4);
    ck_assert_int_eq(nic->gdr, 1);
    ck_assert_ptr_nonnull(eth);
    ck_assert_int_eq(eth->parent, 0);
    ck_assert_int_eq(eth->gdr, 0);
    ck_assert_int_eq(t.nnotes, 1); /* the NVLink to the CPU */
    ck_assert_ptr_nonnull(strstr(t.notes[0], "t.xml:13: an NVLink to a CPU"));
    cs_topo_cleanup(&t);
}
END_TEST

/* What NCCL would not write: an error at the line. */
START_TEST(test_bad)
{
    static const struct {
        const char *xml;
        int code, line;
        const char *msg;
    } bad[] = {
        {"<system>\n<cpu>\n<pci busid=\"0000:01:00.0\" class=\"0x030200\"/>\n"
         "<pci busid=\"0000:01:00.0\" class=\"0x020000\"/></cpu></system>",
         CS_ERR_INVALID, 4, "bus id 0000:01:00.0 is given twice (line 3)"},
        {"<system>\n<cpu>\n<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"20 GT/s\"/>"
         "</cpu></system>",
         CS_ERR_INVALID, 3, "link_speed=\"20 GT/s\" is not a PCIe generation's rate"},
        {"<system>\n<cpu>\n<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"fast\"/>"
         "</cpu></system>",
         CS_ERR_INVALID, 3, "link_speed=\"fast\" is not a PCIe rate"},
        {"<system>\n<cpu numaid=\"x\"/></system>", CS_ERR_INVALID, 2,
         "numaid=\"x\" is not an integer"},
        {"<system>\n<cpu>\n<pci busid=\"zz:01:00.0\" class=\"0x030200\"/></cpu></system>",
         CS_ERR_INVALID, 3, "busid=\"zz:01:00.0\" is not a PCI bus id"},
        {"<system>\n<cpu>\n<pci busid=\"0000:01:00.0\" class=\"0x03020g\"/></cpu></system>",
         CS_ERR_INVALID, 3, "class=\"0x03020g\" is not a hexadecimal number"},
        {"<system><cpu><pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"0\">\n"
         "<nvlink target=\"0000:09:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu></pci></cpu>"
         "</system>",
         CS_ERR_INVALID, 2, "target 0000:09:00.0 is no GPU of the file"},
        {"<system><cpu><pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"0\">\n"
         "<nvlink target=\"0000:02:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu></pci>\n"
         "<pci busid=\"0000:02:00.0\" class=\"0x030200\"><gpu dev=\"1\">\n"
         "<nvlink target=\"0000:01:00.0\" count=\"2\" tclass=\"0x030200\"/></gpu></pci></cpu>"
         "</system>",
         CS_ERR_INVALID, 4, "2 NVLinks to 0000:01:00.0, but line 2 gives 4 the other way"},
        {"<system><cpu><pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"0\">\n"
         "<nvlink target=\"0000:01:00.0\" count=\"99\"/></gpu></pci></cpu></system>",
         CS_ERR_INVALID, 2, "count=\"99\" is not an integer from 1 to 64"},
        {"<system><cpu><pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"0\"/></pci>\n"
         "<pci busid=\"0000:02:00.0\" class=\"0x030200\"><gpu dev=\"0\"/></pci></cpu></system>",
         CS_ERR_INVALID, 2, "dev=\"0\" is given twice (line 1)"},
        {"<system><cpu>\n<pci busid=\"0000:01:00.0\" class=\"0x038000\" vendor=\"0x8086\" "
         "device=\"0x0bd5\"/></cpu></system>",
         CS_ERR_USAGE, 2, "a GPU of Intel (PCI 8086:0bd5)"},
        {"\n<topology/>", CS_ERR_INVALID, 2, "<topology>: not NCCL's topology"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cs_topo t;
        struct cs_error err;

        ck_assert_int_eq(view(bad[i].xml, &t, &err), bad[i].code);
        ck_assert_int_eq(err.line, bad[i].line);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%zu: %s", i, err.msg);
        ck_assert_str_eq(err.file, "t.xml");
        cs_topo_cleanup(&t);
    }
}
END_TEST

/* The reader's safety: no DOCTYPE (entities), no NUL, malformed XML at its line. */
START_TEST(test_tree)
{
    static const char doctype[] = "<?xml version=\"1.0\"?>\n<!DOCTYPE system [<!ENTITY a \"b\">]>\n"
                                  "<system/>";
    static const char nul[] = "<system>\n<cpu/>\0</system>";
    static const char cut[] = "<system>\n<cpu numaid=\"0\">\n<pci busid=";
    static const char ok[] = "<a x=\"1\"><b/>text<c y=\"&amp;\"/></a>";
    struct cs_xml_elem *root;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_xml_tree_read(doctype, strlen(doctype), "d.xml", &root, &err),
                     CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "document type declarations and entities"));
    cs_error_init(&err);
    ck_assert_int_eq(cs_xml_tree_read(nul, sizeof(nul) - 1, "n.xml", &root, &err), CS_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "a NUL byte"));
    cs_error_init(&err);
    ck_assert_int_eq(cs_xml_tree_read(cut, strlen(cut), "c.xml", &root, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "malformed XML"));
    cs_error_init(&err);
    ck_assert_int_eq(cs_xml_tree_read("", 0, "e.xml", &root, &err), CS_ERR_PARSE);
    cs_error_init(&err);
    ck_assert_int_eq(cs_xml_tree_read(ok, strlen(ok), "ok.xml", &root, &err), 0);
    ck_assert_str_eq(root->name, "a");
    ck_assert_str_eq(cs_xml_attr(root, "x"), "1");
    ck_assert_str_eq(root->child->next->name, "c");
    ck_assert_str_eq(cs_xml_attr(root->child->next, "y"), "&");
    ck_assert_ptr_null(cs_xml_attr(root, "y"));
    cs_xml_tree_free(root);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_skeleton, 1}, {test_dump, 1}, {test_bad, 1}, {test_tree, 1}, {NULL, 0},
    };

    return test_run("ncclxml", 0, tests, NULL);
}
