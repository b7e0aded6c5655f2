/* fuzz_smitopo.c: libFuzzer target for `nvidia-smi topo -m` output: the matrix into a view, and
 * the machine combined from it (alone, with --gpu, beside another machine's file), with its
 * links and routes. */
#include <stddef.h>
#include <stdint.h>

#include "smitopo.h"
#include "topofuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_topo t;
    struct cs_error err;

    if (fuzz_is_xml(data, size)) /* XML is fuzz_topoxml's */
        return 0;
    cs_topo_init(&t);
    cs_topo_add_file(&t, "fuzz.txt");
    cs_error_init(&err);
    if (cs_smitopo_read((const char *)data, size, &t, 0, &err) == 0)
        cs_topo_order_gpus(&t);
    cs_topo_cleanup(&t);
    fuzz_machines(data, size, "fuzz.txt");
    return 0;
}
