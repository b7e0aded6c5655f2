/* sweep.c: parsing and expansion of sweep files (format in docs/sweep.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fdio.h"
#include "params.h"
#include "parse.h"
#include "sched.h"
#include "sweep.h"
#include "util.h"

#define MAX_FILE_BYTES (4L << 20)
#define MAX_INT_VALUE 65536

static const char *const gen_keys[] = {"algorithm", "gpus",   "columns", "instances",
                                       "channels",  "compat", NULL};
static const char *const platform_keys[] = {"family",  "nodes", "gpus_per_node", "rows", "columns",
                                            "between", NULL};
static const char *const betweens[] = {"pcie", "net", NULL};
static const char *const dtypes[] = {"float", "half", "bfloat16", "double", NULL};
/* keys every point needs: '-' may not leave them out */
static const char *const required[] = {"schedule", "platform", "gen.algorithm", "platform.family",
                                       NULL};

static int in_list(const char *const *list, const char *s)
{
    for (int i = 0; list[i] != NULL; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

/* Whether a key is one a sweep file accepts (see docs/sweep.md). */
static int key_valid(const char *key)
{
    struct cs_params p;
    double v;

    if (strcmp(key, "schedule") == 0 || strcmp(key, "platform") == 0 ||
        strcmp(key, "protocol") == 0 || strcmp(key, "dtype") == 0)
        return 1;
    if (strncmp(key, "gen.", 4) == 0)
        return in_list(gen_keys, key + 4);
    if (strncmp(key, "platform.", 9) == 0)
        return in_list(platform_keys, key + 9);
    cs_params_init(&p);
    if (strncmp(key, "set.", 4) == 0 || strncmp(key, "scale.", 6) == 0)
        return cs_params_get(&p, strchr(key, '.') + 1, &v) == 0;
    return 0;
}

static int is_word(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
            return 0;
    return 1;
}

/* Check one value of one key. Returns 0 or CS_ERR_INVALID with err set. */
static int check_value(const char *name, int line, const char *key, const char *val,
                       struct cs_error *err)
{
    struct cs_params p;
    struct cs_error perr;
    double d;
    int n, ok = 1;

    for (const char *c = val; *c; c++)
        if (iscntrl((unsigned char)*c) || strchr("\"'\\", *c) != NULL)
            return cs_error_fail(err, CS_ERR_INVALID, name, line,
                                 "%s: value '%s' holds a quote, backslash or control character",
                                 key, val);
    if (strcmp(val, "-") == 0)
        return in_list(required, key) ? cs_error_fail(err, CS_ERR_INVALID, name, line,
                                                      "%s: cannot be left out ('-')", key)
                                      : 0;
    if (strcmp(key, "protocol") == 0)
        ok = cs_proto_parse(val) != 0;
    else if (strcmp(key, "dtype") == 0)
        ok = in_list(dtypes, val);
    else if (strcmp(key, "gen.algorithm") == 0 || strcmp(key, "platform.family") == 0)
        ok = is_word(val);
    else if (strcmp(key, "platform.between") == 0)
        ok = in_list(betweens, val);
    else if (strcmp(key, "gen.compat") == 0) {
        if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
            return cs_error_fail(err, CS_ERR_INVALID, name, line, "%s: '%s' is not 0 or 1", key,
                                 val);
    } else if (strncmp(key, "gen.", 4) == 0 || strncmp(key, "platform.", 9) == 0) {
        if (!isdigit((unsigned char)val[0]) || cs_parse_int(val, 1, MAX_INT_VALUE, &n) != 0)
            return cs_error_fail(err, CS_ERR_INVALID, name, line,
                                 "%s: '%s' is not an integer in 1..%d", key, val, MAX_INT_VALUE);
    } else if (strncmp(key, "set.", 4) == 0) {
        cs_params_init(&p);
        cs_error_init(&perr);
        if (cs_params_set(&p, key + 4, val, &perr) != 0)
            return cs_error_fail(err, CS_ERR_INVALID, name, line, "%s: %s", key, perr.msg);
    } else if (strncmp(key, "scale.", 6) == 0) {
        if (cs_parse_double(val, 0, HUGE_VAL, &d) != 0 || !(d > 0))
            return cs_error_fail(err, CS_ERR_INVALID, name, line,
                                 "%s: scale factor '%s' is not a positive number", key, val);
    }
    return ok ? 0
              : cs_error_fail(err, CS_ERR_INVALID, name, line, "%s: invalid value '%s'", key, val);
}

static int add_key(struct cs_sweep *sw, const char *name, int line, const char *key,
                   struct cs_error *err)
{
    if (!key_valid(key))
        return cs_error_fail(err, CS_ERR_INVALID, name, line,
                             "unknown key '%s' (see docs/sweep.md)", key);
    if (cs_sweep_find_key(sw, key) >= 0)
        return cs_error_fail(err, CS_ERR_INVALID, name, line, "key '%s' given twice", key);
    if (sw->nkeys >= CS_SWEEP_MAX_KEYS)
        return cs_error_fail(err, CS_ERR_INVALID, name, line, "more than %d keys",
                             CS_SWEEP_MAX_KEYS);
    if ((sw->keys[sw->nkeys] = strdup(key)) == NULL)
        return CS_ERR_NOMEM;
    return sw->nkeys++;
}

/* One size item: "N" or "MIN..MAX" with an optional factor "xF" (default 2). *open is set when
 * a range has no factor, which a next item "xF" may give. 0, or -1 when tok is no size item. */
static int parse_size_item(const char *tok, struct cs_sweep_size *z, int *open)
{
    char buf[64], *dots, *x;
    int f = 2;

    if (snprintf(buf, sizeof(buf), "%s", tok) >= (int)sizeof(buf))
        return -1;
    z->factor = 2;
    *open = 0;
    if ((dots = strstr(buf, "..")) == NULL) {
        if (cs_parse_size(buf, 1, CS_SWEEP_MAX_BYTES, &z->min_bytes) != 0)
            return -1;
        z->max_bytes = z->min_bytes;
        return 0;
    }
    *dots = '\0';
    if ((x = strchr(dots + 2, 'x')) != NULL) {
        *x = '\0';
        if (cs_parse_int(x + 1, 2, 1024, &f) != 0)
            return -1;
    }
    if (cs_parse_size(buf, 1, CS_SWEEP_MAX_BYTES, &z->min_bytes) != 0 ||
        cs_parse_size(dots + 2, z->min_bytes, CS_SWEEP_MAX_BYTES, &z->max_bytes) != 0)
        return -1;
    z->factor = f;
    *open = x == NULL;
    return 0;
}

static int parse_sizes(struct cs_sweep *sw, const char *name, int line, char *rhs,
                       struct cs_error *err)
{
    char *save = NULL;
    int open = 0, f;

    if (sw->nsizes > 0)
        return cs_error_fail(err, CS_ERR_INVALID, name, line, "key 'sizes' given twice");
    for (char *tok = strtok_r(rhs, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (sw->nsizes >= CS_SWEEP_MAX_SIZES)
            return cs_error_fail(err, CS_ERR_INVALID, name, line, "more than %d size items",
                                 CS_SWEEP_MAX_SIZES);
        if (tok[0] == 'x' && open && cs_parse_int(tok + 1, 2, 1024, &f) == 0) {
            /* "1K..1M x4": the factor of the range before */
            sw->sizes[sw->nsizes - 1].factor = f;
            open = 0;
        } else if (parse_size_item(tok, &sw->sizes[sw->nsizes], &open) == 0) {
            sw->nsizes++;
        } else {
            return cs_error_fail(
                err, CS_ERR_INVALID, name, line,
                "sizes: '%s' is not a size (e.g. 4096, 64K) or range (1K..1G, 1K..1Gx4)", tok);
        }
    }
    return sw->nsizes > 0 ? 0 : cs_error_fail(err, CS_ERR_INVALID, name, line, "sizes: no value");
}

/* The keys left of '=' into keys[] (indices into sw->keys); *nk is their number. */
static int parse_keys(struct cs_sweep *sw, const char *name, int line, char *lhs, int *keys,
                      int *nk, struct cs_error *err)
{
    char *save = NULL;
    int rc;

    *nk = 0;
    for (char *tok = strtok_r(lhs, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (strcmp(tok, "sizes") == 0)
            return cs_error_fail(err, CS_ERR_INVALID, name, line,
                                 "'sizes' cannot be linked with other keys");
        if ((rc = add_key(sw, name, line, tok, err)) < 0)
            return rc;
        keys[(*nk)++] = rc;
    }
    return *nk > 0 ? 0 : cs_error_fail(err, CS_ERR_PARSE, name, line, "no key before '='");
}

/* One value tuple "v1,v2,..." of an axis, checked and appended to ax->vals (room for it made by
 * the caller). On failure the tuple's values copied so far are freed. */
static int parse_tuple(const struct cs_sweep *sw, struct cs_sweep_axis *ax, const char *name,
                       int line, char *tok, struct cs_error *err)
{
    char **tuple = &ax->vals[(size_t)ax->nvals * (size_t)ax->nkeys];
    char *p = tok;
    int rc = 0, filled = 0;

    for (int i = 0; i < ax->nkeys && rc == 0; i++) {
        char *comma = strchr(p, ',');

        if ((comma == NULL) != (i == ax->nkeys - 1)) {
            rc = cs_error_fail(err, CS_ERR_PARSE, name, line,
                               "'%s': expected %d comma-separated value%s", tok, ax->nkeys,
                               ax->nkeys > 1 ? "s" : "");
            break;
        }
        if (comma)
            *comma = '\0';
        if ((rc = check_value(name, line, sw->keys[ax->keys[i]], p, err)) == 0 &&
            (tuple[i] = strdup(p)) == NULL)
            rc = CS_ERR_NOMEM;
        filled += rc == 0;
        if (comma)
            p = comma + 1;
    }
    if (rc != 0) {
        while (filled > 0)
            free(tuple[--filled]);
        return rc;
    }
    ax->nvals++;
    return 0;
}

/* A value tuple of an axis and its position, to find repeats by sorting. */
struct tuple_ref {
    char *const *vals;
    int nkeys;
    int index;
};

/* Compare two tuples' values. */
static int cmp_tuple_vals(const struct tuple_ref *x, const struct tuple_ref *y)
{
    int c = 0;

    for (int k = 0; k < x->nkeys && c == 0; k++)
        c = strcmp(x->vals[k], y->vals[k]);
    return c;
}

/* Order by the tuples' values, then by position. */
static int cmp_tuple_ref(const void *a, const void *b)
{
    const struct tuple_ref *x = a, *y = b;
    int c = cmp_tuple_vals(x, y);

    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* The first tuple of ax (in order) that repeats an earlier one, in *i, and the first one it
 * repeats, in *j (what the quadratic scan found), by a sort: O(n log n) for axes of many values.
 * 1 when found, 0 when the tuples are distinct, CS_ERR_NOMEM. */
static int find_repeat(const struct cs_sweep_axis *ax, int *i, int *j)
{
    struct tuple_ref *refs = malloc(sizeof(*refs) * (size_t)ax->nvals);
    int found = 0;

    if (refs == NULL)
        return CS_ERR_NOMEM;
    for (int v = 0; v < ax->nvals; v++)
        refs[v] = (struct tuple_ref){&ax->vals[(size_t)v * (size_t)ax->nkeys], ax->nkeys, v};
    qsort(refs, (size_t)ax->nvals, sizeof(*refs), cmp_tuple_ref);
    /* a run of equal tuples is in position order: its second repeats its first */
    for (int v = 1; v < ax->nvals; v++)
        if (cmp_tuple_vals(&refs[v - 1], &refs[v]) == 0 &&
            (v == 1 || cmp_tuple_vals(&refs[v - 2], &refs[v - 1]) != 0) &&
            (!found || refs[v].index < *i)) {
            *i = refs[v].index;
            *j = refs[v - 1].index;
            found = 1;
        }
    free(refs);
    return found;
}

/* The values right of '=': tuples separated by blanks, none repeated. */
static int parse_values(const struct cs_sweep *sw, struct cs_sweep_axis *ax, const char *name,
                        int line, char *rhs, struct cs_error *err)
{
    char *save = NULL;
    int cap = 0, nk = ax->nkeys, rc, i = 0, j = 0;

    for (char *tok = strtok_r(rhs, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        /* a slot of nk strings for the tuple */
        if (cs_array_slot((void **)&ax->vals, ax->nvals, &cap, sizeof(char *) * (size_t)nk) == NULL)
            return CS_ERR_NOMEM;
        if ((rc = parse_tuple(sw, ax, name, line, tok, err)) != 0)
            return rc;
    }
    if (ax->nvals == 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, line, "no value after '='");
    if ((rc = find_repeat(ax, &i, &j)) > 0)
        return cs_error_fail(err, CS_ERR_INVALID, name, line, "value %d repeats value %d", i + 1,
                             j + 1);
    return rc;
}

/* Parse one logical line "KEYS = VALUES" (comments and continuations already removed). */
static int parse_line(struct cs_sweep *sw, const char *name, int line, char *text,
                      struct cs_error *err)
{
    char *eq = strchr(text, '=');
    struct cs_sweep_axis *ax;
    int keys[CS_SWEEP_MAX_KEYS], nk, rc;
    size_t n;

    if (eq == NULL)
        return cs_error_fail(err, CS_ERR_PARSE, name, line, "expected 'KEY = VALUE...'");
    *eq = '\0';
    n = strlen(text);
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        text[--n] = '\0';
    if (strcmp(text, "sizes") == 0) /* sizes is not an axis */
        return parse_sizes(sw, name, line, eq + 1, err);
    if ((rc = parse_keys(sw, name, line, text, keys, &nk, err)) != 0)
        return rc;
    ax = &sw->axes[sw->naxes++]; /* owned by sw from here, freed with it */
    ax->line = line;
    ax->nkeys = nk;
    memcpy(ax->keys, keys, sizeof(int) * (size_t)nk);
    return parse_values(sw, ax, name, line, eq + 1, err);
}

/* The whole-file rules: what must be present, and what needs what. */
static int check_complete(const struct cs_sweep *sw, const char *name, struct cs_error *err)
{
    /* a schedule and a platform, each given by a file or by the keys that make one */
    static const char *const either[2][2] = {{"schedule", "gen.algorithm"},
                                             {"platform", "platform.family"}};
    int made[2]; /* whether gen.algorithm, platform.family are given */

    for (int i = 0; i < 2; i++) {
        const char *file = either[i][0], *maker = either[i][1];
        int has_file = cs_sweep_find_key(sw, file) >= 0;

        made[i] = cs_sweep_find_key(sw, maker) >= 0;
        if (has_file && made[i])
            return cs_error_fail(err, CS_ERR_INVALID, name, 0, "give '%s' or '%s', not both", file,
                                 maker);
        if (!has_file && !made[i])
            return cs_error_fail(err, CS_ERR_INVALID, name, 0, "no %s: give '%s' or '%s'", file,
                                 file, maker);
    }
    for (int i = 0; i < sw->nkeys; i++) {
        const char *k = sw->keys[i];
        char set[128];

        if (strncmp(k, "gen.", 4) == 0 && !made[0])
            return cs_error_fail(err, CS_ERR_INVALID, name, 0, "'%s' needs 'gen.algorithm'", k);
        if ((strncmp(k, "platform.", 9) == 0 || strncmp(k, "set.", 4) == 0 ||
             strncmp(k, "scale.", 6) == 0) &&
            !made[1])
            return cs_error_fail(err, CS_ERR_INVALID, name, 0, "'%s' needs 'platform.family'", k);
        if (strncmp(k, "scale.", 6) != 0)
            continue;
        snprintf(set, sizeof(set), "set.%s", k + 6);
        if (cs_sweep_find_key(sw, set) >= 0)
            return cs_error_fail(err, CS_ERR_INVALID, name, 0, "'%s' and '%s' both given", k, set);
    }
    return sw->nsizes > 0 ? 0 : cs_error_fail(err, CS_ERR_INVALID, name, 0, "no 'sizes'");
}

/* The next logical line of text at *p, in place: continuations ("\\\n") joined (line counts
 * them), the comment cut, blanks trimmed and carriage returns made blanks. Advances *p past the
 * line; *last is set at the end of the text. */
static char *logical_line(char **p, int *line, int *last)
{
    char *s = *p, *q = s, *hash, *e;

    for (; *q != '\0' && *q != '\n'; q++)
        if (q[0] == '\\' && q[1] == '\n') {
            q[0] = q[1] = ' ';
            ++*line;
            q++;
        }
    *last = *q == '\0';
    *q = '\0';
    *p = *last ? q : q + 1;
    if ((hash = strchr(s, '#')) != NULL)
        *hash = '\0';
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
        e[-1] = '\0';
    for (char *r = s; *r; r++)
        if (*r == '\r')
            *r = ' ';
    return s;
}

/* The number of points: the product of the axes' lengths, at most CS_SWEEP_MAX_POINTS. */
static int count_points(struct cs_sweep *sw, const char *name, struct cs_error *err)
{
    sw->npoints = 1;
    for (int i = 0; i < sw->naxes; i++)
        if ((sw->npoints *= sw->axes[i].nvals) > CS_SWEEP_MAX_POINTS)
            return cs_error_fail(err, CS_ERR_INVALID, name, sw->axes[i].line,
                                 "more than %ld points", CS_SWEEP_MAX_POINTS);
    return 0;
}

int cs_sweep_parse(const char *text, const char *name, const char *dir, struct cs_sweep **out,
                   struct cs_error *err)
{
    struct cs_sweep *sw = calloc(1, sizeof(*sw));
    char *copy = strdup(text), *p = copy;
    int line = 1, last = 0, rc = 0;

    if (name == NULL)
        name = "<sweep>";
    if (sw == NULL || copy == NULL || (sw->dir = strdup(dir ? dir : ".")) == NULL)
        rc = CS_ERR_NOMEM;
    else if (strncmp(p, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark is not text */
        p += 3;
    while (rc == 0 && !last) {
        int start = line;
        char *l = logical_line(&p, &line, &last);

        if (*l != '\0')
            rc = parse_line(sw, name, start, l, err);
        line++;
    }
    free(copy);
    if (rc == 0)
        rc = check_complete(sw, name, err);
    if (rc == 0)
        rc = count_points(sw, name, err);
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, name, line, "out of memory");
    if (rc != 0)
        cs_sweep_free(sw);
    else
        *out = sw;
    return rc;
}

/* The whole of a regular file of at most MAX_FILE_BYTES, NUL-terminated, in *text (new). */
static int read_text(const char *path, char **text, struct cs_error *err)
{
    struct stat st;
    size_t n;
    int rc;

    if (stat(path, &st) != 0)
        return cs_error_fail(err, CS_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cs_error_fail(err, CS_ERR_IO, path, 0, "not a regular file");
    if ((rc = cs_file_read(path, MAX_FILE_BYTES, text, &n, err)) == 0 && memchr(*text, 0, n)) {
        free(*text);
        return cs_error_fail(err, CS_ERR_PARSE, path, 0, "binary file (NUL byte)");
    }
    return rc;
}

int cs_sweep_read(const char *path, struct cs_sweep **out, struct cs_error *err)
{
    const char *slash = strrchr(path, '/');
    char *text = NULL, dir[4096] = ".";
    int rc = read_text(path, &text, err);

    if (rc != 0)
        return rc;
    if (slash != NULL) /* the directory part of path; "/" for a file at the root */
        snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    rc = cs_sweep_parse(text, path, dir, out, err);
    free(text);
    if (rc == 0 && ((*out)->path = strdup(path)) == NULL) {
        cs_sweep_free(*out);
        *out = NULL;
        return CS_ERR_NOMEM;
    }
    return rc;
}

void cs_sweep_free(struct cs_sweep *sw)
{
    if (sw == NULL)
        return;
    for (int i = 0; i < sw->naxes; i++) {
        struct cs_sweep_axis *ax = &sw->axes[i];

        for (long j = 0; j < (long)ax->nvals * ax->nkeys; j++)
            free(ax->vals[j]);
        free(ax->vals);
    }
    for (int i = 0; i < sw->nkeys; i++)
        free(sw->keys[i]);
    cs_free_each(3, sw->path, sw->dir, sw);
}

int cs_sweep_point(const struct cs_sweep *sw, long k, const char **vals)
{
    if (k < 0 || k >= sw->npoints)
        return CS_ERR_USAGE;
    /* mixed radix, the last axis varying fastest */
    for (int i = sw->naxes - 1; i >= 0; i--) {
        const struct cs_sweep_axis *ax = &sw->axes[i];
        long v = k % ax->nvals;

        k /= ax->nvals;
        for (int j = 0; j < ax->nkeys; j++)
            vals[ax->keys[j]] = ax->vals[v * ax->nkeys + j];
    }
    return 0;
}

int cs_sweep_find_key(const struct cs_sweep *sw, const char *key)
{
    for (int i = 0; i < sw->nkeys; i++)
        if (strcmp(sw->keys[i], key) == 0)
            return i;
    return -1;
}

const char *cs_sweep_value(const struct cs_sweep *sw, const char *const *vals, const char *key)
{
    int i = cs_sweep_find_key(sw, key);

    return i < 0 || strcmp(vals[i], "-") == 0 ? NULL : vals[i];
}

int cs_sweep_path(const struct cs_sweep *sw, const char *val, char *buf, size_t len)
{
    int n =
        val[0] == '/' ? snprintf(buf, len, "%s", val) : snprintf(buf, len, "%s/%s", sw->dir, val);

    return n < 0 || (size_t)n >= len ? CS_ERR_USAGE : 0;
}
