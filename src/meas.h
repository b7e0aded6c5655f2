/* meas.h: measurement tables of the shared schema (size_bytes,time_us,algbw_GBps,busbw_GBps,...):
 * the collectives they measure, ring steps, and their rows as sizes and times in seconds. The one
 * reader of these tables, used by calibration and validation. */
#ifndef CS_MEAS_H
#define CS_MEAS_H

#include "csv.h"
#include "error.h"

/* The largest size a table may hold: 1 PiB. */
#define CS_MEAS_MAX_SIZE 1125899906842624.0

/* A range of sizes MIN:MAX (cs_parse_size: bytes with K/M/G/T units), either side optional:
 * 0 and INFINITY then. 0, or CS_ERR_PARSE when s is not such a range or MIN > MAX (*lo and *hi
 * untouched). */
int cs_meas_parse_range(const char *s, double *lo, double *hi);

/* The collectives of nccl-tests tables (enums start at 1). */
enum cs_meas_coll {
    CS_MEAS_ALLREDUCE = 1,
    CS_MEAS_ALLGATHER,
    CS_MEAS_REDUCESCATTER,
    CS_MEAS_SENDRECV,
};

/* "allreduce", "allgather", "reducescatter", "sendrecv" (also all_reduce, all_gather,
 * reduce_scatter); 0 when unknown. */
enum cs_meas_coll cs_meas_coll_parse(const char *s);
const char *cs_meas_coll_name(enum cs_meas_coll c);

/* Steps of a ring collective over n ranks, each moving S/n bytes over every rank's link:
 * 2(n-1) for AllReduce, n-1 for AllGather and ReduceScatter, 1 for SendRecv. */
int cs_meas_ring_steps(enum cs_meas_coll c, int n);

/* Cell (row, col) of t as a byte count: cs_csv_get_double, then a whole number in
 * 0..CS_MEAS_MAX_SIZE. 0 and *out; 1 when the cell is empty or col < 0, *out untouched;
 * CS_ERR_PARSE (not a number) or CS_ERR_INVALID (a fraction, negative or too large) with err at
 * file:line naming the column. */
int cs_meas_read_bytes(const struct cs_csv *t, int row, int col, double *out, struct cs_error *err);

/* The rank count behind a table's busbw/algbw ratio (nccl-tests factors) at the largest size
 * that has both; 0 when there is none or the ratio fits no whole count. */
int cs_meas_infer_ranks(const struct cs_csv *t, enum cs_meas_coll c);

/* One row: a size (bytes) and its time (s), or, in a table of time against GPU count (n_gpus
 * column, empty size), the count with size 0. */
struct cs_meas_row {
    double size_bytes;
    int ngpus; /* 0 for a size row */
    double time_s;
    int line;      /* in the file */
    int placement; /* CS_MEAS_OUT_OF_PLACE, CS_MEAS_IN_PLACE, or 0 (no placement column, or
                    * "unspecified") */
};

enum { CS_MEAS_OUT_OF_PLACE = 1, CS_MEAS_IN_PLACE };

/* Read a measurement table: a CSV of the shared schema (cs_csv_read), or the raw output of an
 * nccl-tests binary (found by its `#` header naming size ... time algbw busbw for both
 * placements, anywhere in the file; the layouts of nccl-tests 2.0 to 2.13, NCCL 2.8 to 2.23:
 * with or without the redop and root columns, `error` or `#wrong` checks), turned into the
 * schema's columns size_bytes,time_us,algbw_GBps,busbw_GBps and placement (out_of_place,
 * in_place: one row each per size, none for a time of N/A), each row at its line in the output.
 * Lines that are not rows (comments, NCCL's log lines) are skipped, and so is what a launcher puts
 * before each line (cs_meas_line_body). CS_ERR_PARSE at file:line
 * for a row that does not match the header, reports wrong values (#wrong not 0 or N/A, an error
 * that is not a number), is of another type or redop than the first row (-d all, -o all), or an
 * "Out of bounds values" line that is not 0; otherwise as cs_csv_read. */
int cs_meas_read(const char *path, struct cs_csv **out, struct cs_error *err);

/* The raw nccl-tests output in text[0..len) (name for messages), as cs_meas_read reads it: 0 and
 * *out, 1 when the text holds no nccl-tests header (then nothing is returned), or cs_meas_read's
 * errors. */
int cs_meas_read_raw(const char *text, size_t len, const char *name, struct cs_csv **out,
                     struct cs_error *err);

/* Where the text of a log line starts after what a launcher puts before it: Open MPI's
 * --tag-output "[1,0]<stdout>:" (or <stderr>:, <stddiag>:) and srun --label's "0: ". The
 * offset into line (len bytes), 0 when there is no such prefix. cs_meas_read skips them. */
size_t cs_meas_line_body(const char *line, size_t len);

/* The rows of a measurement table, in file order, each with its placement (a placement column's
 * out_of_place or in_place; any other value, or none, is 0). A row without time_us takes it from
 * busbw: t = S * nsteps / (ranks * busbw), which needs ranks >= 2 (*derived is then set to 1; may
 * be NULL). *rows is new (caller frees), *n its length. CS_ERR_PARSE (no size_bytes or time_us
 * column, a cell that is not a number) or CS_ERR_INVALID (an empty size outside a GPU-count
 * table, a size that is not a whole number of bytes up to CS_MEAS_MAX_SIZE, a count < 2, no
 * time, a size or time not positive, a time_us that disagrees with the row's nonzero algbw_GBps
 * by more than 10% and its rounding: not microseconds), with file:line; CS_ERR_NOMEM. */
int cs_meas_read_rows(const struct cs_csv *t, int nsteps, int ranks, struct cs_meas_row **rows,
                      int *n, int *derived, struct cs_error *err);

/* The GPUs each thread of an nccl-tests run drives, from its raw output's header ("# nThread 1
 * nGpus 8 ..."): 8 for -g 8, whose launches one thread issues in turn; 0 when the file is not
 * raw output or does not say. */
int cs_meas_gpus_per_thread(const char *path);

/* The NCCL version code (major x 10000 + minor x 100 + patch) an nccl-tests run names in its
 * header ("# nccl-tests version 2.13.9 nccl-headers=21805 nccl-library=21805": the library's,
 * the one that ran, in NCCL_VERSION_CODE's forms before and from 2.9); 0 when the file is not
 * such output or does not say. */
int cs_meas_nccl_library(const char *path);

#endif
