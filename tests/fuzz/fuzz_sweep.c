/* fuzz_sweep.c: libFuzzer target for the sweep file parser, then every point of the sweep. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Points walked per input, then the last one: a sweep may multiply out to millions. */
#define MAX_POINTS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_sweep *sw = NULL;
    struct cs_error err;
    char *text = malloc(size + 1);

    /* cs_sweep_parse reads a C string: an embedded NUL ends the text, as in a file read. */
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cs_error_init(&err);
    if (cs_sweep_parse(text, "fuzz.sweep", "/nonexistent", &sw, &err) == 0) {
        const char **vals = calloc((size_t)sw->nkeys + 1, sizeof(*vals));

        for (long k = 0; vals != NULL && k < sw->npoints && k < MAX_POINTS; k++)
            cs_sweep_point(sw, k, vals);
        if (vals != NULL && sw->npoints > 0)
            cs_sweep_point(sw, sw->npoints - 1, vals);
        free(vals);
        cs_sweep_free(sw);
    }
    free(text);
    return 0;
}
