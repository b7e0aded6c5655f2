/* fuzz_table.c: libFuzzer target for the sweep and regression CSV table parser (cs_table_parse). */
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_table *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    if (cs_table_parse((const char *)data, size, "fuzz.csv", &t, &err) == 0)
        cs_table_free(t);
    return 0;
}
