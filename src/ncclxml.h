/* ncclxml.h: NCCL's topology XML read into a machine view: the files NCCL loads with
 * NCCL_TOPO_FILE (vendors' skeletons of <cpu> and <pci>, GPUs by PCI class 0x03) and writes with
 * NCCL_TOPO_DUMP_FILE (<gpu>, <nvlink>, <nic><net>); and its graph files (NCCL_GRAPH_FILE)
 * checked against a machine. Plain C, on xml.h's element tree. */
#ifndef CS_NCCLXML_H
#define CS_NCCLXML_H

#include "error.h"
#include "topo.h"
#include "xml.h"

/* Read the topology XML whose root element is e (<system>) into view t, naming files[file] in
 * errors. CPUs (<cpu>), PCIe switches (<pci> of class 0x0604), GPUs (<pci> of class 0x03..,
 * NVIDIA's or of no vendor; with a dump's <gpu dev sm gdr> and its <nvlink target count
 * tclass>), NICs (<pci> of class 0x02.. or a <nic> of <net> ports), each at its line; other PCI
 * devices and elements are skipped. 0, or CS_ERR_INVALID at file:line: a GPU of another vendor
 * (an AMD or Intel one: collsim has no model for it, CS_ERR_USAGE), a bus id given twice, an
 * <nvlink> to no GPU of the file, NVLink counts that differ by direction, an attribute that is
 * not a number where NCCL writes one, a PCIe rate that is not a PCIe generation's, a root that is
 * not <system>. */
int cs_ncclxml_read(const struct cs_xml_elem *e, struct cs_topo *t, int file, struct cs_error *err);

/* Check an NCCL graph file (root <graphs>: <graph typeintra ...> of <channel>s of <gpu dev>)
 * against machine t: each channel's GPUs exist, and the paths between consecutive GPUs are no
 * further than typeintra (NVL: NVLink; PIX, PXB, PHB, NODE, SYS: PCIe). 0, or CS_ERR_INVALID at
 * name:line. */
int cs_ncclxml_check_graph(const struct cs_xml_elem *e, const struct cs_topo *t, const char *name,
                           struct cs_error *err);

#endif
