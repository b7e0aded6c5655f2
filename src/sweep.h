/* sweep.h: sweep files (what-if studies): keys, axes, sizes, and their expansion into points.
 *
 * A sweep file is a list of `KEYS = VALUES` lines (docs/sweep.md). A line with one key and one
 * value fixes that key; several values make an axis; several keys (`k1 k2 = a,b c,d`) make a
 * linked axis whose values vary together (a list of points). The value `-` leaves an optional key
 * out of a point (e.g. `gen.channels` for a generator that takes none). Points are the Cartesian
 * product of the axes, the first axis varying slowest. `sizes` is not an axis: every point predicts
 * every size.
 */
#ifndef CS_SWEEP_H
#define CS_SWEEP_H

#include <stddef.h>

#include "error.h"

#define CS_SWEEP_MAX_KEYS 64
#define CS_SWEEP_MAX_POINTS 1000000L
#define CS_SWEEP_MAX_SIZES 64                /* size items (single sizes or ranges) */
#define CS_SWEEP_MAX_BYTES ((1LL << 40) - 1) /* sizes are below 1 TiB */

/* One axis: nkeys keys (indices into cs_sweep.keys) and nvals tuples of nkeys values each. */
struct cs_sweep_axis {
    int nkeys;
    int keys[CS_SWEEP_MAX_KEYS];
    int nvals;
    char **vals; /* nvals * nkeys strings, tuple-major */
    int line;
};

/* One size item: a single size (min == max) or a geometric range min, min*factor, ... <= max. */
struct cs_sweep_size {
    long long min_bytes;
    long long max_bytes;
    double factor;
};

struct cs_sweep {
    char *path; /* as given; NULL when parsed from memory */
    char *dir;  /* directory that relative schedule and platform paths are resolved against */
    int nkeys;
    char *keys[CS_SWEEP_MAX_KEYS]; /* in order of first appearance: the CSV's axis columns */
    int naxes;
    struct cs_sweep_axis axes[CS_SWEEP_MAX_KEYS];
    int nsizes;
    struct cs_sweep_size sizes[CS_SWEEP_MAX_SIZES];
    long npoints;
};

/* Parse a sweep file (path) or text (name is used in messages; dir resolves relative paths).
 * A UTF-8 byte order mark at the start is skipped. Checks every key and value (an axis's values
 * are distinct); errors carry the file and line. Caller frees with cs_sweep_free. */
int cs_sweep_read(const char *path, struct cs_sweep **out, struct cs_error *err);
int cs_sweep_parse(const char *text, const char *name, const char *dir, struct cs_sweep **out,
                   struct cs_error *err);
void cs_sweep_free(struct cs_sweep *sw);

/* The values of point k (0 <= k < npoints): vals[i] is the value of keys[i]. The strings belong to
 * the sweep. Returns 0, or CS_ERR_USAGE when k is out of range. */
int cs_sweep_point(const struct cs_sweep *sw, long k, const char **vals);

/* The index of a key, or -1. */
int cs_sweep_find_key(const struct cs_sweep *sw, const char *key);

/* The value of key in a point's vals, or NULL when the sweep lacks the key or the point leaves
 * it out ('-'). */
const char *cs_sweep_value(const struct cs_sweep *sw, const char *const *vals, const char *key);

/* A schedule or platform path of the sweep as the program opens it: absolute paths as they are,
 * others relative to sw->dir. 0, or CS_ERR_USAGE when it does not fit in len bytes. */
int cs_sweep_path(const struct cs_sweep *sw, const char *val, char *buf, size_t len);

#endif
