/* smitopo.h: `nvidia-smi topo -m` read into a machine view: the GPUs and NICs of its header, the
 * NVLinks (NV#) and PCIe distances (PIX, PXB, PHB, NODE, SYS; SOC in old drivers) between them,
 * each GPU's NUMA node, and the PCIe tree those distances describe. Plain C. */
#ifndef CS_SMITOPO_H
#define CS_SMITOPO_H

#include <stddef.h>

#include "error.h"
#include "topo.h"

/* Read the matrix in text[0..len) (any text around it: the legend, prompts, a log) into view t,
 * naming files[file] in errors. Tab- or blank-separated, with or without the terminal's escape
 * codes; NIC columns by name (mlx5_0) or as NIC0.. with the "NIC Legend". 1 when the text holds
 * no matrix (t untouched), 0, or CS_ERR_INVALID at file:line: a row of another width than the
 * header, a cell nvidia-smi does not print, a matrix that is not symmetric, relations no PCIe
 * tree gives, a GPU's NUMA affinity against its relations. */
int cs_smitopo_read(const char *text, size_t len, struct cs_topo *t, int file,
                    struct cs_error *err);

#endif
