/* tune.c: the fastest variant per size range of a sweep, and the schedules that select it. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fdio.h"
#include "gen.h"
#include "parse.h"
#include "report.h"
#include "sweeprun.h"
#include "tune.h"
#include "verify.h"
#include "xml.h"

static int cmp_obs(const void *a, const void *b)
{
    const struct cs_tune_obs *x = a, *y = b;

    if (x->size_bytes != y->size_bytes)
        return x->size_bytes < y->size_bytes ? -1 : 1;
    return x->variant < y->variant ? -1 : x->variant > y->variant;
}

int cs_tune_ranges(const struct cs_tune_obs *obs, long n, struct cs_tune_range **out, int *nout,
                   struct cs_error *err)
{
    struct cs_tune_obs *o = NULL;
    struct cs_tune_range *r = NULL;
    int nr = 0, prev_gap = 1, rc = CS_ERR_INVALID;
    long long dead = 0; /* the last size where no variant finished */

    if (n <= 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0, "no predictions to choose from");
    if ((o = malloc(sizeof(*o) * (size_t)n)) == NULL ||
        (r = malloc(sizeof(*r) * (size_t)n)) == NULL) {
        rc = CS_ERR_NOMEM;
        goto done;
    }
    for (long i = 0; i < n; i++) {
        o[i] = obs[i];
        if (o[i].size_bytes <= 0 || (o[i].ok && !(o[i].time_us > 0 && isfinite(o[i].time_us)))) {
            cs_error_set(err, NULL, 0, "variant %d: size %lld: bad size or time", o[i].variant,
                         o[i].size_bytes);
            goto done;
        }
    }
    qsort(o, (size_t)n, sizeof(*o), cmp_obs);
    for (long i = 0; i < n;) {
        long j = i;
        int best = -1;
        double best_t = 0;

        for (; j < n && o[j].size_bytes == o[i].size_bytes; j++) {
            if (j > i && o[j].variant == o[j - 1].variant) {
                cs_error_set(err, NULL, 0, "variant %d: size %lld predicted twice", o[j].variant,
                             o[j].size_bytes);
                goto done;
            }
            if (o[j].ok && (best < 0 || o[j].time_us < best_t)) {
                best = o[j].variant;
                best_t = o[j].time_us;
            }
        }
        if (best < 0) {
            if (nr > 0 && !prev_gap)
                r[nr - 1].dead_above = o[i].size_bytes;
            dead = o[i].size_bytes;
            prev_gap = 1;
        } else if (!prev_gap && r[nr - 1].variant == best) {
            r[nr - 1].max_bytes = r[nr - 1].last_size = o[i].size_bytes;
        } else {
            if (!prev_gap)
                r[nr - 1].max_bytes = o[i].size_bytes - 1;
            r[nr++] = (struct cs_tune_range){
                o[i].size_bytes, o[i].size_bytes, best, o[i].size_bytes, o[i].size_bytes, dead, 0};
            prev_gap = 0;
        }
        i = j;
    }
    if (nr == 0) {
        cs_error_set(err, NULL, 0, "no variant finishes at any size");
        goto done;
    }
    *out = r;
    *nout = nr;
    r = NULL;
    rc = 0;
done:
    free(o);
    free(r);
    return rc;
}

/* Columns that pick the schedule (the variant); the other axis columns describe the platform. */
static int is_variant_col(const char *c)
{
    return strcmp(c, "schedule") == 0 || strncmp(c, "gen.", 4) == 0 || strcmp(c, "protocol") == 0;
}

/* "sched-basename protocol", "ring gpus=8 LL": the variant's values, "-" left out. */
static void describe(const struct cs_tune_sweep *sw, long row, char *buf, size_t len)
{
    const struct cs_table *t = sw->t;
    size_t n = 0;

    buf[0] = '\0';
    for (int c = 1; c < sw->naxes && n < len; c++) {
        const char *k = t->cols[c], *v = cs_table_get(t, row, c);
        const char *sep = n ? " " : "";

        if (!is_variant_col(k) || strcmp(v, "-") == 0)
            continue;
        if (strcmp(k, "schedule") == 0) {
            const char *b = strrchr(v, '/') ? strrchr(v, '/') + 1 : v;
            size_t bl = strlen(b);

            if (bl > 4 && strcmp(b + bl - 4, ".xml") == 0)
                bl -= 4;
            n += (size_t)snprintf(buf + n, len - n, "%s%.*s", sep, (int)bl, b);
        } else if (strcmp(k, "gen.algorithm") == 0 || strcmp(k, "protocol") == 0) {
            n += (size_t)snprintf(buf + n, len - n, "%s%s", sep, v);
        } else {
            n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", sep, k + 4, v);
        }
    }
}

/* The column a "KEY=VALUE" filter names, or -1. */
static int where_col(const struct cs_table *t, const char *w)
{
    char key[256];

    snprintf(key, sizeof(key), "%.*s", (int)(strchr(w, '=') - w), w);
    return cs_table_find_col(t, key);
}

/* Whether row r passes every --where filter. */
static int kept(const struct cs_table *t, long r, const char *const *where, int nwhere)
{
    for (int w = 0; w < nwhere; w++)
        if (strcmp(cs_table_get(t, r, where_col(t, where[w])), strchr(where[w], '=') + 1) != 0)
            return 0;
    return 1;
}

static int check_where(const struct cs_tune_sweep *sw, const char *name, const char *const *where,
                       int nwhere, struct cs_error *err)
{
    for (int w = 0; w < nwhere; w++) {
        const char *eq = strchr(where[w], '=');
        int c = eq ? where_col(sw->t, where[w]) : -1;

        if (c < 0 || c >= sw->naxes)
            return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                                 "--where %s: %s has no axis column '%.*s'", where[w], name,
                                 eq ? (int)(eq - where[w]) : (int)strlen(where[w]), where[w]);
    }
    return 0;
}

/* Row r on the platform of row `first`, or an error naming the column that differs. */
static int same_platform(const struct cs_tune_sweep *sw, const char *name, long first, long r,
                         struct cs_error *err)
{
    const struct cs_table *t = sw->t;

    for (int c = 1; c < sw->naxes; c++)
        if (!is_variant_col(t->cols[c]) &&
            strcmp(cs_table_get(t, r, c), cs_table_get(t, first, c)) != 0)
            return cs_error_fail(err, CS_ERR_INVALID, name, 0,
                                 "more than one platform ('%s' is %s on line %d, %s on line %d); "
                                 "pick one with --where %s=VALUE",
                                 t->cols[c], cs_table_get(t, first, c), t->lines[first],
                                 cs_table_get(t, r, c), t->lines[r], t->cols[c]);
    return 0;
}

/* The variant of row r, added when new. Its index, or a CS_ERR_*. */
static int variant_of(struct cs_tune_sweep *sw, const char *name, long r, struct cs_error *err)
{
    char d[CS_TUNE_DESC_LEN];
    int v;

    describe(sw, r, d, sizeof(d));
    for (v = 0; v < sw->nvar && strcmp(sw->var[v].desc, d) != 0; v++)
        ;
    if (v < sw->nvar)
        return v;
    if (sw->nvar == CS_TUNE_MAX_VARIANTS)
        return cs_error_fail(err, CS_ERR_INVALID, name, 0, "more than %d variants",
                             CS_TUNE_MAX_VARIANTS);
    sw->var[v].row = r;
    snprintf(sw->var[v].desc, sizeof(sw->var[v].desc), "%s", d);
    return sw->nvar++;
}

/* Row r's size, time and status as an observation of variant v. */
static int observe(struct cs_tune_sweep *sw, const char *name, long r, int v, struct cs_error *err)
{
    const struct cs_table *t = sw->t;
    const char *size = cs_table_get(t, r, sw->naxes);
    const char *time = cs_table_get(t, r, cs_table_find_col(t, "time_us"));
    struct cs_tune_obs *o = &sw->obs[sw->nobs];

    o->variant = v;
    if (cs_parse_ll(size, LLONG_MIN, LLONG_MAX, &o->size_bytes) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, t->lines[r], "bad size_bytes '%s'", size);
    o->ok = strcmp(cs_table_get(t, r, cs_table_find_col(t, "status")), "ok") == 0;
    o->time_us = 0;
    if (o->ok && cs_parse_double(time, -HUGE_VAL, HUGE_VAL, &o->time_us) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, t->lines[r], "bad time_us '%s'", time);
    sw->nobs++;
    return 0;
}

/* The rows kept, their variants and observations, and one platform. */
static int collect(struct cs_tune_sweep *sw, const char *name, const char *const *where, int nwhere,
                   struct cs_error *err)
{
    const struct cs_table *t = sw->t;
    long first = -1;
    int rc = 0, v;

    for (long r = 0; r < t->nrows && rc == 0; r++) {
        if (!kept(t, r, where, nwhere))
            continue;
        if (first < 0)
            first = r;
        if ((rc = same_platform(sw, name, first, r, err)) == 0 &&
            (rc = v = variant_of(sw, name, r, err)) >= 0)
            rc = observe(sw, name, r, v, err);
    }
    if (rc == 0 && first < 0)
        rc = cs_error_fail(err, CS_ERR_INVALID, name, 0, "no rows%s",
                           nwhere ? " match --where" : "");
    for (int c = 1; rc == 0 && c < sw->naxes; c++)
        if (!is_variant_col(t->cols[c])) {
            size_t n = strlen(sw->platform);

            snprintf(sw->platform + n, sizeof(sw->platform) - n, "%s%s=%s", n ? " " : "",
                     t->cols[c], cs_table_get(t, first, c));
        }
    return rc;
}

int cs_tune_read(const struct cs_table *t, const char *name, const char *const *where, int nwhere,
                 struct cs_tune_sweep *out, struct cs_error *err)
{
    struct cs_tune_sweep sw = {.t = t};
    int c_size = cs_table_find_col(t, "size_bytes");
    int rc;

    if (c_size < 1 || cs_table_find_col(t, "time_us") < 0 || cs_table_find_col(t, "status") < 0 ||
        strcmp(t->cols[0], "point") != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, 0,
                             "not a sweep CSV (point, axis columns, then %s)",
                             CS_REPORT_CSV_HEADER);
    sw.naxes = c_size;
    if ((rc = check_where(&sw, name, where, nwhere, err)) != 0)
        return rc;
    sw.var = calloc(CS_TUNE_MAX_VARIANTS, sizeof(*sw.var));
    sw.obs = calloc((size_t)t->nrows + 1, sizeof(*sw.obs));
    rc = sw.var == NULL || sw.obs == NULL ? CS_ERR_NOMEM : collect(&sw, name, where, nwhere, err);
    if (rc != 0) {
        cs_tune_cleanup(&sw);
        return rc;
    }
    *out = sw;
    return 0;
}

void cs_tune_cleanup(struct cs_tune_sweep *sw)
{
    free(sw->var);
    free(sw->obs);
    memset(sw, 0, sizeof(*sw));
}

long cs_tune_uneven(const struct cs_tune_sweep *sw)
{
    long uneven = 0;

    for (long i = 0; i < sw->nobs; i++) {
        int n = 0;

        for (long j = 0; j < sw->nobs; j++)
            n += sw->obs[j].size_bytes == sw->obs[i].size_bytes;
        uneven += n < sw->nvar;
    }
    return uneven;
}

int cs_tune_variant_sched(const struct cs_tune_sweep *sw, int v, const char *sched_dir,
                          struct cs_sched **out, struct cs_error *err)
{
    const struct cs_table *t = sw->t;
    long row = sw->var[v].row;
    int cs = cs_table_find_col(t, "schedule"), cp = cs_table_find_col(t, "protocol");
    const char *proto = cp >= 0 && cp < sw->naxes ? cs_table_get(t, row, cp) : "-";
    char buf[4096];
    int rc;

    if (cs >= 0 && cs < sw->naxes) {
        const char *path = cs_table_get(t, row, cs);

        if (path[0] != '/')
            snprintf(buf, sizeof(buf), "%s/%s", sched_dir, path);
        else
            snprintf(buf, sizeof(buf), "%s", path);
        rc = cs_sched_read_xml(buf, out, err);
    } else if (cs_sweeprun_gen_spec(t->cols + 1, (const char *const *)t->cells + row * t->ncols + 1,
                                    sw->naxes - 1, buf, sizeof(buf)) != 0) {
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "generator spec too long");
    } else {
        rc = cs_gen_from_spec(buf, out, err);
    }
    if (rc == 0 && strcmp(proto, "-") != 0)
        (*out)->proto = cs_proto_parse(proto);
    return rc;
}

void cs_tune_window(const struct cs_tune_range *r, int i, int nr, int extend, long long *min_bytes,
                    long long *max_bytes)
{
    *min_bytes = extend && i == 0 ? (r[i].dead_below ? r[i].dead_below + 1 : 0) : r[i].min_bytes;
    *max_bytes =
        extend && i == nr - 1 ? (r[i].dead_above ? r[i].dead_above - 1 : 0) : r[i].max_bytes;
}

void cs_tune_file_name(const char *desc, int i, char *buf, size_t len)
{
    char slug[CS_TUNE_DESC_LEN];
    size_t n = 0;

    for (const char *p = desc; *p && n + 1 < sizeof(slug); p++) {
        char c = *p;

        if (c == '=')
            continue;
        if (c == ' ')
            c = '-';
        else if (!isalnum((unsigned char)c) && c != '.' && c != '_' && c != '-')
            c = '_';
        slug[n++] = c;
    }
    slug[n] = '\0';
    snprintf(buf, len, "%02d-%.200s.xml", i, slug);
}

/* Write s as MSCCL XML to path through cs_outfile_open: complete, or not at all. */
static int write_sched(const struct cs_sched *s, const char *path, struct cs_error *err)
{
    struct cs_outfile out;
    int rc;

    if ((rc = cs_outfile_open(&out, path, err)) != 0)
        return rc;
    cs_sched_write_xml(s, out.fp); /* a failed write fails the close */
    return cs_outfile_close(&out, err);
}

/* Whether the executor loads s: verify's structural checks with its rules; 0 or CS_ERR_INVALID
 * naming the variant and verify's first error. */
static int executor_loads(const struct cs_sched *s, const char *desc, struct cs_error *err)
{
    /* Co-residency depends on the platform: the prediction reports it (status hang). */
    struct cs_verify_opts o = {1000, CS_VERIFY_EXECUTOR, NULL, 0, -1, 0, 0};
    struct cs_verify_result *vr = NULL;
    int rc = 0;

    if (cs_verify_check_opts(s, &o, &vr) != 0)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    for (int k = 0; k < vr->ndiags && rc == 0; k++)
        if (vr->diags[k].severity == CS_VERIFY_ERROR && vr->diags[k].cls == CS_VERIFY_STRUCTURE)
            rc = cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                               "variant %s: the MSCCL executor would not load it (`collsim verify "
                               "--runtime executor`): line %d: %s",
                               desc, vr->diags[k].line, vr->diags[k].msg);
    cs_verify_result_free(vr);
    return rc;
}

int cs_tune_write_schedules(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, int nr,
                            int extend, const char *sched_dir, const char *outdir,
                            char (*files)[CS_TUNE_DESC_LEN], struct cs_error *err)
{
    char path[4096 + CS_TUNE_DESC_LEN];
    int rc = 0;

    if (mkdir(outdir, 0755) != 0 && errno != EEXIST)
        return cs_error_fail(err, CS_ERR_IO, outdir, 0, "cannot create: %s", strerror(errno));
    for (int i = 0; i < nr && rc == 0; i++) {
        struct cs_sched *s = NULL;

        if ((rc = cs_tune_variant_sched(sw, r[i].variant, sched_dir, &s, err)) != 0)
            break;
        s->has_min_bytes = s->has_max_bytes = 1;
        cs_tune_window(r, i, nr, extend, &s->min_bytes, &s->max_bytes);
        if (!s->has_outofplace) {
            /* the executor requires it; Azure msccl-tools writes the complement of inplace */
            s->has_outofplace = 1;
            s->outofplace = !s->inplace;
        }
        if ((rc = executor_loads(s, sw->var[r[i].variant].desc, err)) != 0) {
            cs_sched_free(s);
            break;
        }
        cs_tune_file_name(sw->var[r[i].variant].desc, i, files[i], sizeof(files[i]));
        snprintf(path, sizeof(path), "%s/%s", outdir, files[i]);
        rc = write_sched(s, path, err);
        cs_sched_free(s);
    }
    return rc;
}

void cs_tune_plan_write(FILE *fp, const char *csv, const struct cs_tune_sweep *sw,
                        const struct cs_tune_range *r, int nr, char (*files)[CS_TUNE_DESC_LEN],
                        int extend)
{
    fprintf(fp, "# collsim tune %s: the fastest variant per size range%s%s\n", csv,
            sw->platform[0] ? " on " : "", sw->platform);
    fprintf(fp, "# min_bytes/max_bytes: the window written into each schedule (inclusive; 0 as "
                "max_bytes: no limit)\n");
    fprintf(fp, "%12s %12s  %-25s  %-40s %s\n", "min_bytes", "max_bytes", "measured sizes",
            "variant", "file");
    for (int i = 0; i < nr; i++) {
        char meas[64];
        long long lo, hi;

        cs_tune_window(r, i, nr, extend, &lo, &hi);
        snprintf(meas, sizeof(meas), "%lld..%lld", r[i].first_size, r[i].last_size);
        fprintf(fp, "%12lld %12lld  %-25s  %-40s %s\n", lo, hi, meas, sw->var[r[i].variant].desc,
                files ? files[i] : "-");
    }
}
