/* fuzz_meas.c: libFuzzer target for the measurement readers as calibrate and validate use them:
 * the raw nccl-tests output reader (cs_meas_read_raw: NCCL's log lines, launcher prefixes, every
 * nccl-tests layout), else the schema CSV; then the rows (times from busbw included), the ranks
 * behind busbw/algbw and the launch pattern of the header. */
#include "memfd.h"

#include "csv.h"
#include "error.h"
#include "meas.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_csv *t = NULL;
    struct cs_meas_row *rows = NULL;
    struct cs_error err;
    int n = 0, derived = 0, rc;

    cs_error_init(&err);
    rc = cs_meas_read_raw((const char *)data, size, "fuzz.log", &t, &err);
    if (rc == 1)
        rc = cs_csv_read_mem((const char *)data, size, "fuzz.csv", &t, &err);
    if (rc != 0)
        return 0;
    cs_meas_infer_ranks(t, CS_MEAS_ALLREDUCE);
    cs_error_init(&err);
    if (cs_meas_read_rows(t, 14, 8, &rows, &n, &derived, &err) == 0)
        free(rows);
    cs_csv_free(t);
    cs_meas_gpus_per_thread(fuzz_input_path(data, size));
    return 0;
}
