/* fuzz_ncclinfo.c: libFuzzer target for NCCL INFO logs: the reader, its table, rings and trees,
 * the machine a log alone gives and a log on another machine's file. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ncclinfo.h"
#include "topofuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    struct cs_ncclinfo *log;
    struct cs_error err;

    if (fuzz_is_xml(data, size)) /* XML is fuzz_topoxml's */
        return 0;
    if (sink == NULL && (sink = fopen("/dev/null", "w")) == NULL)
        abort();
    cs_error_init(&err);
    if (cs_ncclinfo_read_mem((const char *)data, size, "fuzz.log", &log, &err) == 0) {
        int up, down[3];

        cs_ncclinfo_write_table(log, sink);
        for (int k = 0; k < log->nrings; k++)
            (void)cs_ncclinfo_ring(log, k);
        for (int r = 0; r < log->nranks && r < 64; r++)
            for (int k = 0; k < log->ntrees; k++)
                cs_ncclinfo_tree(log, r, k, &up, down);
        cs_ncclinfo_free(log);
    }
    fuzz_machines(data, size, "fuzz.log");
    return 0;
}
