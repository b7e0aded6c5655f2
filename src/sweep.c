/* sweep.c: parsing and expansion of sweep files (format in docs/sweep.md). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "params.h"
#include "sched.h"
#include "sweep.h"

#define MAX_FILE_BYTES (4L << 20)
#define MAX_INT_VALUE 65536

static const char *const gen_keys[] = {"algorithm", "gpus",   "columns", "instances",
                                       "channels",  "compat", NULL};
static const char *const platform_keys[] = {"family",  "nodes", "gpus_per_node", "rows", "columns",
                                            "between", NULL};
static const char *const betweens[] = {"pcie", "net", NULL};
static const char *const dtypes[] = {"float", "half", "bfloat16", "double", NULL};

static int in_list(const char *const *list, const char *s)
{
    for (int i = 0; list[i] != NULL; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

int cs_sweep_key_valid(const char *key)
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
    if (strncmp(key, "set.", 4) == 0)
        return cs_params_get(&p, key + 4, &v) == 0;
    if (strncmp(key, "scale.", 6) == 0)
        return cs_params_get(&p, key + 6, &v) == 0;
    return 0;
}

int cs_sweep_parse_bytes(const char *s, long long *out)
{
    char *end;
    unsigned long long v, mul = 1;

    if (!isdigit((unsigned char)s[0]))
        return CS_ERR_PARSE;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0)
        return CS_ERR_PARSE;
    if (*end == 'K' || *end == 'k')
        mul = 1ULL << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ULL << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1ULL << 30, end++;
    if (*end != '\0' || v > (unsigned long long)LLONG_MAX / mul)
        return CS_ERR_PARSE;
    *out = (long long)(v * mul);
    return 0;
}

static int parse_number(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
        return CS_ERR_PARSE;
    *out = v;
    return 0;
}

static int parse_posint(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v;

    if (!isdigit((unsigned char)s[0]))
        return CS_ERR_PARSE;
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end != '\0' || errno != 0 || v < lo || v > hi)
        return CS_ERR_PARSE;
    *out = (int)v;
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
    double d;
    int n;

    for (const char *c = val; *c; c++)
        if (iscntrl((unsigned char)*c) || *c == '"' || *c == '\'' || *c == '\\') {
            cs_error_set(err, name, line,
                         "%s: value '%s' holds a quote, backslash or control "
                         "character",
                         key, val);
            return CS_ERR_INVALID;
        }
    if (strcmp(val, "-") == 0) {
        if (strcmp(key, "schedule") == 0 || strcmp(key, "platform") == 0 ||
            strcmp(key, "gen.algorithm") == 0 || strcmp(key, "platform.family") == 0) {
            cs_error_set(err, name, line, "%s: cannot be left out ('-')", key);
            return CS_ERR_INVALID;
        }
        return 0;
    }
    if (strcmp(key, "protocol") == 0) {
        if (cs_proto_parse(val) == 0)
            goto bad_enum;
    } else if (strcmp(key, "dtype") == 0) {
        if (!in_list(dtypes, val))
            goto bad_enum;
    } else if (strcmp(key, "gen.algorithm") == 0 || strcmp(key, "platform.family") == 0) {
        if (!is_word(val))
            goto bad_enum;
    } else if (strcmp(key, "platform.between") == 0) {
        if (!in_list(betweens, val))
            goto bad_enum;
    } else if (strcmp(key, "gen.compat") == 0) {
        if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0) {
            cs_error_set(err, name, line, "%s: '%s' is not 0 or 1", key, val);
            return CS_ERR_INVALID;
        }
    } else if (strncmp(key, "gen.", 4) == 0 || strncmp(key, "platform.", 9) == 0) {
        if (parse_posint(val, 1, MAX_INT_VALUE, &n) != 0) {
            cs_error_set(err, name, line, "%s: '%s' is not an integer in 1..%d", key, val,
                         MAX_INT_VALUE);
            return CS_ERR_INVALID;
        }
    } else if (strncmp(key, "set.", 4) == 0) {
        struct cs_error perr;

        cs_params_init(&p);
        cs_error_init(&perr);
        if (cs_params_set(&p, key + 4, val, &perr) != 0) {
            cs_error_set(err, name, line, "%s: %s", key, perr.msg);
            return CS_ERR_INVALID;
        }
    } else if (strncmp(key, "scale.", 6) == 0) {
        if (parse_number(val, &d) != 0 || !(d > 0)) {
            cs_error_set(err, name, line, "%s: scale factor '%s' is not a positive number", key,
                         val);
            return CS_ERR_INVALID;
        }
    }
    return 0;
bad_enum:
    cs_error_set(err, name, line, "%s: invalid value '%s'", key, val);
    return CS_ERR_INVALID;
}

static int add_key(struct cs_sweep *sw, const char *name, int line, const char *key,
                   struct cs_error *err)
{
    if (!cs_sweep_key_valid(key)) {
        cs_error_set(err, name, line, "unknown key '%s' (see docs/sweep.md)", key);
        return CS_ERR_INVALID;
    }
    if (cs_sweep_find_key(sw, key) >= 0) {
        cs_error_set(err, name, line, "key '%s' given twice", key);
        return CS_ERR_INVALID;
    }
    if (sw->nkeys >= CS_SWEEP_MAX_KEYS) {
        cs_error_set(err, name, line, "more than %d keys", CS_SWEEP_MAX_KEYS);
        return CS_ERR_INVALID;
    }
    if ((sw->keys[sw->nkeys] = strdup(key)) == NULL)
        return CS_ERR_NOMEM;
    return sw->nkeys++;
}

static int parse_sizes(struct cs_sweep *sw, const char *name, int line, char *rhs,
                       struct cs_error *err)
{
    char *save = NULL;
    int last_range_open = 0;

    if (sw->nsizes > 0) {
        cs_error_set(err, name, line, "key 'sizes' given twice");
        return CS_ERR_INVALID;
    }
    for (char *tok = strtok_r(rhs, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        struct cs_sweep_size *z;
        char *dots = strstr(tok, ".."), *x;
        int f = 2;

        if (sw->nsizes >= CS_SWEEP_MAX_SIZES) {
            cs_error_set(err, name, line, "more than %d size items", CS_SWEEP_MAX_SIZES);
            return CS_ERR_INVALID;
        }
        z = &sw->sizes[sw->nsizes];
        if (tok[0] == 'x' && last_range_open) { /* "1K..1M x4": the factor of the range before */
            if (parse_posint(tok + 1, 2, 1024, &f) != 0)
                goto bad;
            sw->sizes[sw->nsizes - 1].factor = f;
            last_range_open = 0;
            continue;
        }
        last_range_open = 0;
        if (dots == NULL) {
            if (cs_sweep_parse_bytes(tok, &z->min_bytes) != 0 || z->min_bytes < 1)
                goto bad;
            z->max_bytes = z->min_bytes;
            z->factor = 2;
        } else {
            *dots = '\0';
            x = strchr(dots + 2, 'x');
            if (x != NULL) {
                *x = '\0';
                if (parse_posint(x + 1, 2, 1024, &f) != 0) {
                    *dots = '.';
                    *x = 'x';
                    goto bad;
                }
            }
            if (cs_sweep_parse_bytes(tok, &z->min_bytes) != 0 ||
                cs_sweep_parse_bytes(dots + 2, &z->max_bytes) != 0 || z->min_bytes < 1 ||
                z->max_bytes < z->min_bytes) {
                *dots = '.';
                if (x)
                    *x = 'x';
                goto bad;
            }
            z->factor = f;
            last_range_open = x == NULL;
        }
        sw->nsizes++;
        continue;
    bad:
        cs_error_set(err, name, line,
                     "sizes: '%s' is not a size (e.g. 4096, 64K) or range (1K..1G, 1K..1Gx4)", tok);
        return CS_ERR_INVALID;
    }
    if (sw->nsizes == 0) {
        cs_error_set(err, name, line, "sizes: no value");
        return CS_ERR_INVALID;
    }
    return 0;
}

/* Parse one logical line "KEYS = VALUES" (comments and continuations already removed). */
static int parse_line(struct cs_sweep *sw, const char *name, int line, char *text,
                      struct cs_error *err)
{
    char *eq = strchr(text, '='), *save = NULL, *tok;
    struct cs_sweep_axis *ax;
    int keys[CS_SWEEP_MAX_KEYS], nk = 0, cap = 0, rc;
    char *lhs;

    if (eq == NULL) {
        cs_error_set(err, name, line, "expected 'KEY = VALUE...'");
        return CS_ERR_PARSE;
    }
    *eq = '\0';
    lhs = text;
    /* sizes is not an axis */
    {
        size_t n = strlen(lhs);

        while (n > 0 && (lhs[n - 1] == ' ' || lhs[n - 1] == '\t'))
            lhs[--n] = '\0';
        if (strcmp(lhs, "sizes") == 0)
            return parse_sizes(sw, name, line, eq + 1, err);
    }
    for (tok = strtok_r(lhs, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (strcmp(tok, "sizes") == 0) {
            cs_error_set(err, name, line, "'sizes' cannot be linked with other keys");
            return CS_ERR_INVALID;
        }
        if ((rc = add_key(sw, name, line, tok, err)) < 0)
            return rc;
        keys[nk++] = rc;
    }
    if (nk == 0) {
        cs_error_set(err, name, line, "no key before '='");
        return CS_ERR_PARSE;
    }
    ax = &sw->axes[sw->naxes];
    memset(ax, 0, sizeof(*ax));
    ax->line = line;
    ax->nkeys = nk;
    if ((ax->keys = malloc(sizeof(int) * (size_t)nk)) == NULL)
        return CS_ERR_NOMEM;
    memcpy(ax->keys, keys, sizeof(int) * (size_t)nk);
    sw->naxes++; /* owned by sw from here, freed with it */
    save = NULL;
    for (tok = strtok_r(eq + 1, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *p = tok;

        if (ax->nvals == cap) {
            int ncap = cap ? cap * 2 : 8;
            char **nv = realloc(ax->vals, sizeof(char *) * (size_t)ncap * (size_t)nk);

            if (nv == NULL)
                return CS_ERR_NOMEM;
            ax->vals = nv;
            cap = ncap;
        }
        for (int i = 0; i < nk; i++) {
            char *comma = strchr(p, ',');
            char **slot = &ax->vals[(size_t)ax->nvals * (size_t)nk + (size_t)i];

            if ((comma == NULL) != (i == nk - 1)) {
                cs_error_set(err, name, line, "'%s': expected %d comma-separated value%s", tok, nk,
                             nk > 1 ? "s" : "");
                /* free the part of this tuple filled so far */
                for (int j = 0; j < i; j++)
                    free(ax->vals[(size_t)ax->nvals * (size_t)nk + (size_t)j]);
                return CS_ERR_PARSE;
            }
            if (comma)
                *comma = '\0';
            if ((rc = check_value(name, line, sw->keys[keys[i]], p, err)) != 0 ||
                (*slot = strdup(p)) == NULL) {
                for (int j = 0; j < i; j++)
                    free(ax->vals[(size_t)ax->nvals * (size_t)nk + (size_t)j]);
                return rc ? rc : CS_ERR_NOMEM;
            }
            if (comma)
                p = comma + 1;
        }
        ax->nvals++;
    }
    if (ax->nvals == 0) {
        cs_error_set(err, name, line, "no value after '='");
        return CS_ERR_PARSE;
    }
    for (int i = 0; i < ax->nvals; i++)
        for (int j = 0; j < i; j++) {
            int same = 1;

            for (int k = 0; k < nk && same; k++)
                same = strcmp(ax->vals[(size_t)i * nk + k], ax->vals[(size_t)j * nk + k]) == 0;
            if (same) {
                cs_error_set(err, name, line, "value %d repeats value %d", i + 1, j + 1);
                return CS_ERR_INVALID;
            }
        }
    return 0;
}

/* The whole-file rules: what must be present, and what needs what. */
static int check_complete(const struct cs_sweep *sw, const char *name, struct cs_error *err)
{
    int has_sched = cs_sweep_find_key(sw, "schedule") >= 0;
    int has_gen = cs_sweep_find_key(sw, "gen.algorithm") >= 0;
    int has_plat = cs_sweep_find_key(sw, "platform") >= 0;
    int has_family = cs_sweep_find_key(sw, "platform.family") >= 0;

    if (has_sched == has_gen) {
        cs_error_set(err, name, 0,
                     has_sched ? "give 'schedule' or 'gen.algorithm', not both"
                               : "no schedule: give 'schedule' or 'gen.algorithm'");
        return CS_ERR_INVALID;
    }
    if (has_plat == has_family) {
        cs_error_set(err, name, 0,
                     has_plat ? "give 'platform' or 'platform.family', not both"
                              : "no platform: give 'platform' or 'platform.family'");
        return CS_ERR_INVALID;
    }
    for (int i = 0; i < sw->nkeys; i++) {
        const char *k = sw->keys[i];

        if (strncmp(k, "gen.", 4) == 0 && !has_gen) {
            cs_error_set(err, name, 0, "'%s' needs 'gen.algorithm'", k);
            return CS_ERR_INVALID;
        }
        if ((strncmp(k, "platform.", 9) == 0 || strncmp(k, "set.", 4) == 0 ||
             strncmp(k, "scale.", 6) == 0) &&
            !has_family) {
            cs_error_set(err, name, 0, "'%s' needs 'platform.family'", k);
            return CS_ERR_INVALID;
        }
        if (strncmp(k, "scale.", 6) == 0) {
            char set[128];

            snprintf(set, sizeof(set), "set.%s", k + 6);
            if (cs_sweep_find_key(sw, set) >= 0) {
                cs_error_set(err, name, 0, "'%s' and '%s' both given", k, set);
                return CS_ERR_INVALID;
            }
        }
    }
    if (sw->nsizes == 0) {
        cs_error_set(err, name, 0, "no 'sizes'");
        return CS_ERR_INVALID;
    }
    return 0;
}

int cs_sweep_parse(const char *text, const char *name, const char *dir, struct cs_sweep **out,
                   struct cs_error *err)
{
    struct cs_sweep *sw = calloc(1, sizeof(*sw));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int line = 1, start = 1, rc = 0;
    const char *p = text;

    if (name == NULL)
        name = "<sweep>";
    if (sw == NULL || (sw->keys = calloc(CS_SWEEP_MAX_KEYS, sizeof(char *))) == NULL ||
        (sw->axes = calloc(CS_SWEEP_MAX_KEYS, sizeof(*sw->axes))) == NULL ||
        (sw->dir = strdup(dir ? dir : ".")) == NULL) {
        cs_sweep_free(sw);
        return CS_ERR_NOMEM;
    }
    /* Join continuation lines, drop comments, then parse each logical line. */
    for (;;) {
        char c = *p;
        int end = c == '\0' || c == '\n';

        if (c == '\\' && p[1] == '\n') {
            p += 2;
            line++;
            if (len + 1 >= cap || buf == NULL) {
                char *nb = realloc(buf, cap = cap * 2 + 64);

                if (nb == NULL) {
                    rc = CS_ERR_NOMEM;
                    break;
                }
                buf = nb;
            }
            buf[len++] = ' ';
            continue;
        }
        if (!end) {
            if (len + 2 >= cap || buf == NULL) {
                char *nb = realloc(buf, cap = cap * 2 + 64);

                if (nb == NULL) {
                    rc = CS_ERR_NOMEM;
                    break;
                }
                buf = nb;
            }
            buf[len++] = c;
            p++;
            continue;
        }
        if (buf != NULL) {
            char *hash, *q;

            buf[len] = '\0';
            if ((hash = strchr(buf, '#')) != NULL)
                *hash = '\0';
            for (q = buf; *q == ' ' || *q == '\t' || *q == '\r'; q++)
                ;
            for (char *e = q + strlen(q); e > q && isspace((unsigned char)e[-1]); e--)
                e[-1] = '\0';
            for (char *r = q; *r; r++)
                if (*r == '\r')
                    *r = ' ';
            if (*q != '\0' && (rc = parse_line(sw, name, start, q, err)) != 0)
                break;
        }
        len = 0;
        if (c == '\0')
            break;
        p++;
        line++;
        start = line;
    }
    free(buf);
    if (rc == 0)
        rc = check_complete(sw, name, err);
    if (rc == 0) {
        sw->npoints = 1;
        for (int i = 0; i < sw->naxes; i++) {
            sw->npoints *= sw->axes[i].nvals;
            if (sw->npoints > CS_SWEEP_MAX_POINTS) {
                cs_error_set(err, name, sw->axes[i].line, "more than %ld points",
                             CS_SWEEP_MAX_POINTS);
                rc = CS_ERR_INVALID;
                break;
            }
        }
    }
    if (rc != 0) {
        if (rc == CS_ERR_NOMEM)
            cs_error_set(err, name, line, "out of memory");
        cs_sweep_free(sw);
        return rc;
    }
    *out = sw;
    return 0;
}

int cs_sweep_read(const char *path, struct cs_sweep **out, struct cs_error *err)
{
    FILE *fp = fopen(path, "rb");
    char *text, *dir, *slash;
    struct stat st;
    long n;
    int rc;

    if (fp == NULL) {
        cs_error_set(err, path, 0, "cannot open: %s", strerror(errno));
        return CS_ERR_IO;
    }
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(fp);
        cs_error_set(err, path, 0, "not a regular file");
        return CS_ERR_IO;
    }
    if (fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        fclose(fp);
        cs_error_set(err, path, 0, "cannot read (not a regular file?)");
        return CS_ERR_IO;
    }
    if (n > MAX_FILE_BYTES) {
        fclose(fp);
        cs_error_set(err, path, 0, "larger than %ld bytes", MAX_FILE_BYTES);
        return CS_ERR_INVALID;
    }
    if ((text = malloc((size_t)n + 1)) == NULL) {
        fclose(fp);
        return CS_ERR_NOMEM;
    }
    if (fread(text, 1, (size_t)n, fp) != (size_t)n) {
        fclose(fp);
        free(text);
        cs_error_set(err, path, 0, "cannot read");
        return CS_ERR_IO;
    }
    fclose(fp);
    text[n] = '\0';
    if (memchr(text, '\0', (size_t)n) != NULL) {
        free(text);
        cs_error_set(err, path, 0, "binary file (NUL byte)");
        return CS_ERR_PARSE;
    }
    if ((dir = strdup(path)) == NULL) {
        free(text);
        return CS_ERR_NOMEM;
    }
    slash = strrchr(dir, '/');
    if (slash == NULL)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    rc = cs_sweep_parse(text, path, dir, out, err);
    free(text);
    free(dir);
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
    if (sw->axes)
        for (int i = 0; i < sw->naxes; i++) {
            struct cs_sweep_axis *ax = &sw->axes[i];

            for (long j = 0; j < (long)ax->nvals * ax->nkeys; j++)
                free(ax->vals[j]);
            free(ax->vals);
            free(ax->keys);
        }
    if (sw->keys)
        for (int i = 0; i < sw->nkeys; i++)
            free(sw->keys[i]);
    free(sw->keys);
    free(sw->axes);
    free(sw->path);
    free(sw->dir);
    free(sw);
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
