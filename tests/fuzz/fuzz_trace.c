/* fuzz_trace.c: libFuzzer target for the trace JSON reader of `collsim tracediff`
 * (cs_step_trace_read: predict's and the harness's Chrome/Perfetto traces), then the comparison
 * of what it read with itself. */
#include "memfd.h"

#include <string.h>

#include "error.h"
#include "tracecmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_step_trace t;
    struct cs_trace_cmp c;
    struct cs_error err;

    memset(&t, 0, sizeof(t));
    cs_error_init(&err);
    if (cs_step_trace_read(fuzz_input_path(data, size), &t, &err) == 0) {
        memset(&c, 0, sizeof(c));
        if (cs_trace_compare(&t, &t, &c) == 0)
            cs_trace_cmp_free(&c);
    }
    cs_step_trace_free(&t);
    return 0;
}
