/* tracecmp.h: per-step spans of a schedule's run, measured (the calibration harness's
 * %globaltimer stamps) or predicted (`predict --trace`), as a Perfetto trace, read back from either
 * and compared step by step.
 *
 * A step span is one threadblock's time on one step of one loop iteration: from when it starts
 * waiting on the step's dependencies to the end of its last call. The harness writes one "X"
 * slice of category "step" per span; a predicted trace has a slice per call (category "step")
 * and per wait (category "wait"), each with args iteration and step, and a span is their union.
 * Each trace's times are taken from its first span's start, so a measured and a predicted trace
 * compare whatever their clocks. */
#ifndef CS_TRACECMP_H
#define CS_TRACECMP_H

#include <stdio.h>

#include "error.h"

struct cs_step_span {
    int rank, tb, iter, step;
    double t0_us, t1_us;
    char type[24]; /* the step type (s, r, rrc, ...), "" when the trace does not say */
};

struct cs_step_trace {
    char coll[32], proto[16], source[32]; /* from otherData; "" when absent */
    int gpus, iterations;
    long long size_bytes;
    long n, cap;
    struct cs_step_span *spans;
};

/* Add a span (the trace grows as needed). 0, or CS_ERR_NOMEM. */
int cs_step_trace_add(struct cs_step_trace *t, const struct cs_step_span *s);
void cs_step_trace_free(struct cs_step_trace *t);

/* Write t as a Chrome/Perfetto trace in predict --trace's layout: otherData (collective, protocol,
 * gpus, size_bytes, iterations, source), a process per rank, a track per threadblock, a "step"
 * slice per span with args iteration and step. 0, or CS_ERR_IO. */
int cs_step_trace_write(FILE *fp, const struct cs_step_trace *t);

/* Read a trace written by cs_step_trace_write or by `predict --trace` and collapse its "step"
 * and "wait" slices into spans, one per (rank, threadblock, iteration, step), sorted by that
 * key. Bad JSON, a slice without its fields and a file with no step slice are CS_ERR_INVALID
 * with path:line; an unreadable file CS_ERR_IO. */
int cs_step_trace_read(const char *path, struct cs_step_trace *t, struct cs_error *err);

/* The comparison of a measured trace (a) with a predicted one (b). */
struct cs_trace_cmp_row {
    int rank, tb, iter, step;
    char type[24];
    double a_start_us, a_dur_us, b_start_us, b_dur_us;
};

struct cs_trace_cmp {
    long matched, only_a, only_b;
    double a_span_us, b_span_us;   /* first start to last end */
    double a_busy_us, b_busy_us;   /* sum of matched durations */
    double med_abs_us, max_abs_us; /* |b_dur - a_dur| over matched steps */
    double med_rel, max_rel;       /* |b_dur - a_dur| / a_dur, steps with a_dur > 0 */
    struct cs_trace_cmp_row *rows; /* matched, by decreasing |b_dur - a_dur| */
    long type_diff;                /* matched steps whose types both traces name, differently */
    struct cs_trace_cmp_row first_diff; /* the first of them (its type: a's) */
    char first_diff_b[24];              /* and b's type there */
};

/* Compare a (measured) with b (predicted), both sorted as cs_step_trace_read leaves them. 0, or
 * CS_ERR_NOMEM. */
int cs_trace_compare(const struct cs_step_trace *a, const struct cs_step_trace *b,
                     struct cs_trace_cmp *out);
void cs_trace_cmp_free(struct cs_trace_cmp *c);

/* The report: the summary, then the top steps by difference (all with top < 0). */
void cs_trace_cmp_print(FILE *fp, const struct cs_trace_cmp *c, const char *a_name,
                        const char *b_name, int top);
/* Every matched step as CSV (header first). */
void cs_trace_cmp_csv(FILE *fp, const struct cs_trace_cmp *c);

#endif
