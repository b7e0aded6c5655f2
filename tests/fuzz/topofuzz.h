/* topofuzz.h: what the topology fuzz targets share: a machine read from the input (and from the
 * input beside a fixed machine's file), its links and routes written out in memory. */
#ifndef CS_TOPOFUZZ_H
#define CS_TOPOFUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "topo.h"

/* A 4-GPU A100 PCIe machine (NC A100 v4's layout, with a NIC under a switch) for the input to be
 * checked against: a graph file, a matrix or a log of the same machine. */
static const char fuzz_machine[] =
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\" vendor=\"AuthenticAMD\" familyid=\"25\" modelid=\"1\">\n"
    "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n"
    "      <pci busid=\"0001:00:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b5\"/>\n"
    "      <pci busid=\"0101:00:00.0\" class=\"0x020700\"/>\n"
    "    </pci>\n"
    "    <pci busid=\"0002:00:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b5\"/>\n"
    "  </cpu>\n"
    "  <cpu numaid=\"1\">\n"
    "    <pci busid=\"0003:00:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b5\"/>\n"
    "    <pci busid=\"0004:00:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b5\"/>\n"
    "  </cpu>\n"
    "</system>\n";

/* Whether the input starts, after blanks, with '<': the XML form (fuzz_topoxml's), else text. */
static int fuzz_is_xml(const uint8_t *data, size_t size)
{
    size_t i = 0;

    while (i < size && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r'))
        i++;
    return i < size && data[i] == '<';
}

static void fuzz_count_link(void *ctx, const char *id, double Bps, enum cs_link_class cls)
{
    (void)id, (void)Bps, (void)cls;
    ++*(int *)ctx;
}

/* Everything platform.c asks of a machine, for up to 2 nodes of its first 16 GPUs. */
static void fuzz_use(const struct cs_topo *t)
{
    struct cs_topo_hop hop[CS_TOPO_MAX_HOPS];
    struct cs_params p;
    char buf[2048];
    int n = 0, g = t->ngpus < 16 ? t->ngpus : 16;

    cs_topo_each_link(t, 1, fuzz_count_link, &n);
    for (int a = 0; a < g; a++) {
        cs_topo_nic_path(t, a, hop, &n);
        for (int b = 0; b < g; b++)
            if (a != b) {
                cs_topo_route(t, a, b, hop, &n);
                cs_topo_route(t, a, t->ngpus + b, hop, &n);
            }
    }
    cs_topo_describe(t, 2, buf, sizeof(buf));
    cs_params_init(&p);
    cs_topo_params(t, &p, NULL);
}

/* The input alone (as a file named name), with --gpu a100 when gpu, and after fuzz_machine. */
static void fuzz_machines(const uint8_t *data, size_t size, const char *name)
{
    const char *names[2] = {name, "machine.xml"}, *texts[2];
    size_t lens[2];
    struct cs_topo_opts o;
    struct cs_topo *t;
    struct cs_error err;

    for (int k = 0; k < 3; k++) {
        int two = k == 2;

        memset(&o, 0, sizeof(o));
        if (k == 1)
            cs_topo_gpu_parse("a100", &o.gpu);
        texts[0] = two ? fuzz_machine : (const char *)data;
        lens[0] = two ? sizeof(fuzz_machine) - 1 : size;
        names[0] = two ? "machine.xml" : name;
        texts[1] = (const char *)data;
        lens[1] = size;
        names[1] = name;
        cs_error_init(&err);
        if (cs_topo_read_mem(names, texts, lens, two ? 2 : 1, &o, &t, &err) == 0) {
            fuzz_use(t);
            cs_topo_free(t);
        }
    }
}

#endif
