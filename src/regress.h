/* regress.h: comparing predictions with a committed baseline (regression of predicted timings). */
#ifndef CS_REGRESS_H
#define CS_REGRESS_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "predict.h"
#include "table.h"

/* Baseline columns, in this order. */
enum {
    CS_REGRESS_SCHED,
    CS_REGRESS_PLAT,
    CS_REGRESS_PROTO,
    CS_REGRESS_SIZE,
    CS_REGRESS_TIME,
    CS_REGRESS_BUSBW,
    CS_REGRESS_STATUS,
    CS_REGRESS_NCOLS
};

/* The rows of one (schedule, platform, protocol): what one prediction pipeline computes. */
struct cs_regress_group {
    long first;       /* its first baseline row */
    long *rows;       /* its rows, in table order */
    long long *sizes; /* their sizes, ascending (a copy, sorted) */
    int n;
};

/* A baseline read and checked: every row's size, protocol and paths are valid. */
struct cs_regress_base {
    struct cs_table *t;
    char path[2048];
    char dir[2048]; /* the baseline's folder: relative paths are looked up from there upwards */
    struct cs_regress_group *groups;
    int ngroups;
    const char *const *row_file; /* while --init builds it: the CSV each row came from (lines in
                                  * t->lines are that file's), named in messages; else NULL */
};

/* Read the baseline at path: check its columns, that it has rows, and every row (size_bytes an
 * integer >= 1, once per group; protocol LL, LL128, Simple or -; schedule a gen:SPEC or a file and
 * platform a file that cs_regress_resolve finds; status ok, deadlock, unsupported or empty;
 * time_us and busbw_GBps empty or numbers >= 0, time_us given when ok) and group its rows. *out is
 * new (cs_regress_free). 0, or CS_ERR_* with err set (file:line of the bad row). */
int cs_regress_read(const char *path, struct cs_regress_base **out, struct cs_error *err);
void cs_regress_free(struct cs_regress_base *b);

/* A path of the baseline: absolute, or relative to dir or one of its parents (so that
 * `schedules/x.xml` is found from results/regression/), else to the working folder. Writes the
 * readable path into buf; 0, or CS_ERR_IO when none is readable. */
int cs_regress_resolve(const char *dir, const char *rel, char *buf, size_t len);

/* The groups to check: all of ngroups when subset is 0 or not smaller, else `subset` of them spread
 * evenly over the table. Writes their indices to order (ngroups long) and returns how many. */
int cs_regress_select(int ngroups, long subset, int *order);

/* How far a time may move: a prediction moves only when its change exceeds both, pct percent of
 * the old time and abs_us microseconds (so that microsecond rows do not flap on relative noise). */
struct cs_regress_tol {
    double pct;
    double abs_us;
};

/* Whether a prediction moved from its baseline: the status differs (ok, deadlock), or both are ok
 * and the time changed by more than both tolerances. *change_pct (may be NULL) gets the relative
 * change in percent (0 when either is not ok or the old time is 0). */
int cs_regress_moved(const char *old_status, double old_us, const char *new_status, double new_us,
                     const struct cs_regress_tol *tol, double *change_pct);

/* Whether n sorted distinct sizes are min, min*f, min*f^2, ... for one integer f >= 2 (what one
 * `predict -b -e -f` call produces). A single size is geometric with f = 2. */
int cs_regress_geometric(const long long *sizes, int n, long long *factor);

/* Predict group g of the baseline again, as `collsim predict --format csv` with the group's
 * schedule (file or gen:SPEC), platform and protocol and float elements: one run over the group's
 * sizes when they are geometric (cs_regress_geometric), else one per size; sizes are rounded as
 * predict rounds them. *rows is new (cleanup each with cs_predict_row_cleanup, then free), *n its
 * length. 0 or CS_ERR_* with err set. */
int cs_regress_predict(const struct cs_regress_base *b, const struct cs_regress_group *g,
                       struct cs_predict_row **rows, int *n, struct cs_error *err);

/* A baseline row against a new prediction. */
struct cs_regress_cmp {
    long row;
    long long size_bytes;
    const char *time_us; /* the new prediction's cells (in the results table), NULL when missing */
    const char *busbw_GBps;
    const char *status;
    double change_pct;
    int moved;
    char change[32]; /* as reported: "+1.23%", "ok>deadlock" or "missing" */
};

/* Compare baseline row `row` with its size's row in res (a table with the predict CSV columns,
 * cs_report_csv_cols, or NULL when the group failed to predict). */
void cs_regress_compare(const struct cs_regress_base *b, long row, const struct cs_table *res,
                        const struct cs_regress_tol *tol, struct cs_regress_cmp *out);

/* Take a compared row's new time, busbw and status into the baseline. 0 or CS_ERR_NOMEM (the row
 * unchanged). A missing prediction changes nothing. */
int cs_regress_update(struct cs_regress_base *b, const struct cs_regress_cmp *c);

/* Rewrite the baseline file (through a temporary file renamed over it). 0 or CS_ERR_IO with err
 * set. */
int cs_regress_write(const struct cs_regress_base *b, struct cs_error *err);

/* What --init takes from the command line for the columns a CSV lacks (NULL: not given). */
struct cs_regress_init_opts {
    const char *sched; /* a schedule file or gen:SPEC */
    const char *plat;  /* a platform file */
    const char *proto; /* LL, LL128, Simple or - */
};

/* Build a baseline for `path` from nfrom CSVs: predict CSVs (`collsim predict --format csv`, whose
 * schedule, platform and protocol come from o; protocol - when not given) or sweep CSVs (their
 * schedule or gen.* columns, platform and protocol; o fills the columns they lack). Only float
 * rows (the type baselines predict). Every row is checked as cs_regress_read checks it, paths
 * resolved from path's folder. *out is new (write it with cs_regress_write). 0, or CS_ERR_* with
 * err naming FROM.csv:LINE (a missing column, an option that repeats a column, a sweep CSV whose
 * platform is built from platform.* or changed by set.* or scale.* keys, a bad row). */
int cs_regress_init(const char *path, const char *const *from, int nfrom,
                    const struct cs_regress_init_opts *o, struct cs_regress_base **out,
                    struct cs_error *err);

/* A JUnit XML report (what CI systems read) of a regress run: begin with the counts, then one
 * testcase per compared baseline row (a failure with the old and new time and the change when it
 * moved) or per row of a group that failed to predict (an error), then end. */
void cs_regress_junit_begin(FILE *fp, const char *name, long tests, long failures, long errors);
void cs_regress_junit_case(FILE *fp, const struct cs_regress_base *b,
                           const struct cs_regress_cmp *c, const struct cs_regress_tol *tol);
void cs_regress_junit_error(FILE *fp, const struct cs_regress_base *b, long row, const char *why);
void cs_regress_junit_end(FILE *fp);

#endif
