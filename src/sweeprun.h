/* sweeprun.h: one point of a sweep predicted in process: its platform (a file the sweep names, or
 * one written from the family keys), its schedule (a file or a generator spec) and its rows of
 * the sweep CSV (point, the keys, the prediction columns of src/report.h). */
#ifndef CS_SWEEPRUN_H
#define CS_SWEEPRUN_H

#include <stdio.h>

#include "error.h"
#include "params.h"
#include "platform.h"
#include "sweep.h"

/* The generator spec `ALGO:key=value,...,protocol=P` of n keys and their values (a point's, or
 * the axis columns of a sweep CSV row): gen.compat other than 1 and keys left out with '-'
 * omitted. 0, or CS_ERR_USAGE when it does not fit in len bytes. */
int cs_sweeprun_gen_spec(char *const *keys, const char *const *vals, int n, char *buf, size_t len);

/* The platform a point's family keys describe: platform.family and platform.* into spec, set.*
 * and scale.* into params (a scale factor multiplies the value the family file holds, to the
 * nine digits the platform writer prints). 0, or CS_ERR_INVALID with err set when the family
 * is unknown or a key does not apply to it. */
int cs_sweeprun_platform(const struct cs_sweep *sw, const char *const *vals,
                         struct cs_platform_spec *spec, struct cs_params *params,
                         struct cs_error *err);

/* The header line of a sweep CSV: point, the keys, CS_REPORT_CSV_HEADER. */
void cs_sweeprun_header(const struct cs_sweep *sw, FILE *fp);

/* Predict point k (0 <= k < npoints) and write the header and its rows to fp. A platform built
 * from family keys is written to tmp_platform (a path the caller owns and removes). Deadlocked
 * sizes are rows (status deadlock). 0, or a CS_ERR_* with err set: a missing file, a refused
 * schedule or platform, a failed simulation. */
int cs_sweeprun_point(const struct cs_sweep *sw, long k, const char *tmp_platform, FILE *fp,
                      struct cs_error *err);

/* The column of a shard that holds the sweep's point count (after point). */
#define CS_SWEEPRUN_NPOINTS "npoints"

/* As cs_sweeprun_point, for a shard run on its own (`sweep --point K --out FILE`): a column
 * npoints after point holds the sweep's point count, so that merging shards finds the points
 * missing at the end of the range too (cs_sweepcsv_join). */
int cs_sweeprun_shard(const struct cs_sweep *sw, long k, const char *tmp_platform, FILE *fp,
                      struct cs_error *err);

#endif
