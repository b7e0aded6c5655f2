/* fuzz_platform.c: libFuzzer target for the SimGrid platform reader, fed through a memfd. */
#include "memfd.h"

#include "error.h"
#include "platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_platform *plat = NULL;
    struct cs_error err;

    cs_error_init(&err);
    if (cs_platform_read(fuzz_input_path(data, size), &plat, &err) == 0)
        cs_platform_free(plat);
    return 0;
}
