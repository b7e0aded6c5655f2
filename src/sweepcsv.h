/* sweepcsv.h: sweep CSV files (point, the sweep's keys, the prediction columns of src/report.h):
 * their header, whether one holds a given point, and joining point files or shards by point. */
#ifndef CS_SWEEPCSV_H
#define CS_SWEEPCSV_H

#include "error.h"
#include "sweep.h"
#include "table.h"

/* Whether t has a sweep CSV header: point first, the prediction columns last. 0, or
 * CS_ERR_PARSE. */
int cs_sweepcsv_check(const struct cs_table *t);

/* Whether t holds point k of sw, as a finished point file does: sw's header and at least one row,
 * every row of point k with its values. 0, or CS_ERR_INVALID. */
int cs_sweepcsv_check_point(const struct cs_sweep *sw, long k, const struct cs_table *t);

/* What a join found. */
struct cs_sweepcsv_join {
    long npoints;   /* distinct points */
    long nrows;     /* rows read, those of repeated points included */
    long ndeadlock; /* joined rows whose status is deadlock or hang */
    long max_point;
    long total; /* the sweep's point count that shards carry (npoints column), else -1 */
};

/* Called for a point that file `file` repeats from file `first` (same rows, kept once). */
typedef void (*cs_sweepcsv_repeat_fn)(void *ctx, long point, int first, int file);

/* Join n sweep CSVs (names[i] names tabs[i] in messages) into *out (new; free with
 * cs_table_free): one header, the rows ordered by point, each file's rows in order. Shards
 * (cs_sweeprun_shard: an npoints column after point) must agree on npoints, which goes to
 * info->total and not to *out. A point in
 * several files must have the same rows in each; it is kept from the first (repeat, when not
 * NULL, hears of the others). 0, or CS_ERR_PARSE (not a sweep CSV, a header that differs, a bad
 * point number), CS_ERR_INVALID (files that disagree), CS_ERR_USAGE (n < 1) or CS_ERR_NOMEM,
 * with err set. */
int cs_sweepcsv_join(struct cs_table *const *tabs, const char *const *names, int n,
                     cs_sweepcsv_repeat_fn repeat, void *ctx, struct cs_table **out,
                     struct cs_sweepcsv_join *info, struct cs_error *err);

/* The point numbers missing from t (a joined sweep CSV, ordered by point) among 0..total-1, or
 * below its last point when total < 0: their count, and their ranges ("3, 5-9"; "..." when they
 * do not fit) in buf. */
long cs_sweepcsv_missing(const struct cs_table *t, long total, char *buf, size_t len);

#endif
