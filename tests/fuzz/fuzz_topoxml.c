/* fuzz_topoxml.c: libFuzzer target for NCCL's topology XML (skeletons, dumps, graph files): the
 * element tree, the view, and the machine combined from it (alone, with --gpu, beside another
 * machine's file), with its links and routes. */
#include <stddef.h>
#include <stdint.h>

#include "ncclxml.h"
#include "topofuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_xml_elem *root;
    struct cs_error err;

    if (!fuzz_is_xml(data, size)) /* the other forms have targets of their own */
        return 0;
    cs_error_init(&err);
    if (cs_xml_tree_read((const char *)data, size, "fuzz.xml", &root, &err) == 0) {
        struct cs_topo t;

        cs_topo_init(&t);
        cs_topo_add_file(&t, "fuzz.xml");
        if (cs_ncclxml_read(root, &t, 0, &err) == 0)
            cs_topo_order_gpus(&t);
        cs_topo_cleanup(&t);
        cs_xml_tree_free(root);
    }
    fuzz_machines(data, size, "fuzz.xml");
    return 0;
}
