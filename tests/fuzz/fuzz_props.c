/* fuzz_props.c: libFuzzer target for the props reader (cs_params_read_props: what `calibrate`
 * writes and `platform --params` reads), with the notes it records. */
#include "memfd.h"

#include "error.h"
#include "params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cs_param_notes notes;
    struct cs_params p;
    struct cs_error err;

    cs_params_init(&p);
    notes.n = 0;
    cs_error_init(&err);
    cs_params_read_props(&p, fuzz_input_path(data, size), &notes, &err);
    return 0;
}
