/* fuzz_cases.c: libFuzzer target for the case file reader (cs_cases_read: what `collsim validate`
 * and `calibrate platform --cases` read), with a platform of - allowed as calibrate takes it. */
#include "memfd.h"

#include "cases.h"
#include "error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_case *cases = NULL;
    struct cs_error err;
    int n = 0;

    cs_error_init(&err);
    if (cs_cases_read(fuzz_input_path(data, size), 1, &cases, &n, &err) == 0)
        cs_cases_free(cases, n);
    return 0;
}
