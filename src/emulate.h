/* emulate.h: a sequential CPU emulation of the executor plan (xplan.h) that checks the compilation,
 * with known inputs and the reference output of each collective. */
#ifndef CS_EMULATE_H
#define CS_EMULATE_H

#include "error.h"
#include "xplan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the collective has a reference result (custom has none). */
int cs_emulate_has_reference(const struct cs_xplan *plan);

/* The value of element e of rank r's input: a small integer, so float sums are exact. */
float cs_emulate_input_value(int rank, long e);

/* Expected output of rank r (out_chunks * chunk_elems floats) for the collective, or
 * CS_ERR_USAGE for custom. When the output aliases the input, the expected output covers the
 * output region only. */
int cs_emulate_expect_output(const struct cs_xplan *plan, int rank, long chunk_elems, float *out);

/* Per-rank buffers for the CPU emulation: allocated by cs_emulate_bufs_new, inputs filled,
 * outputs set to NaN, scratch to 0, aliases honoured. */
struct cs_emulate_bufs {
    int nranks;
    long chunk_elems;
    float **in, **out, **scratch; /* per rank; in/out may point into each other */
    float **in_mem, **out_mem;    /* what was allocated (NULL where aliased) */
};
struct cs_emulate_bufs *cs_emulate_bufs_new(const struct cs_xplan *plan, long chunk_elems);
void cs_emulate_bufs_free(struct cs_emulate_bufs *bufs);

/* Compare every rank's output with the reference. Returns the number of wrong elements and
 * describes the first one in err (may be NULL); CS_ERR_USAGE for custom; CS_ERR_NOMEM. */
long cs_emulate_check_output(const struct cs_xplan *plan, const struct cs_emulate_bufs *bufs,
                             struct cs_error *err);

/* Run the plan sequentially on the CPU with the runtime's rules (per-tb program order, dependency
 * flags, 8-slot FIFOs, calls per step) on bufs. Returns 0 when every tb finished, CS_ERR_SIM
 * with err naming a waiting tb when no tb can make progress (deadlock), CS_ERR_NOMEM. */
int cs_emulate_run(const struct cs_xplan *plan, const struct cs_xplan_sizing *sz,
                   struct cs_emulate_bufs *bufs, struct cs_error *err);

#ifdef __cplusplus
}
#endif

#endif
