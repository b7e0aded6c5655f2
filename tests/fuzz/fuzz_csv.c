/* fuzz_csv.c: libFuzzer target for the measurement CSV reader (cs_csv_read_mem). */
#include <stddef.h>
#include <stdint.h>

#include "csv.h"
#include "error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_csv *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    if (cs_csv_read_mem((const char *)data, size, "fuzz.csv", &t, &err) == 0) {
        cs_csv_col_find(t, "size_bytes");
        cs_csv_free(t);
    }
    return 0;
}
