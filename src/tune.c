/* tune.c: the fastest variant per size range of a sweep, and the schedules that select it. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "gen.h"
#include "parse.h"
#include "platform.h"
#include "predict.h"
#include "report.h"
#include "sweep.h"
#include "sweeprun.h"
#include "tune.h"
#include "util.h"
#include "verify.h"
#include "xml.h"

/* The size an observation competes at: the nominal one when known. */
static long long key(const struct cs_tune_obs *o)
{
    return o->nominal_bytes > 0 ? o->nominal_bytes : o->size_bytes;
}

static int cmp_obs(const void *a, const void *b)
{
    const struct cs_tune_obs *x = a, *y = b;
    int c = cs_cmp_ll(key(x), key(y));

    return c ? c : cs_cmp_ll(x->variant, y->variant);
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
        if (o[i].size_bytes <= 0 || o[i].nominal_bytes < 0 ||
            (o[i].ok && !(o[i].time_us > 0 && isfinite(o[i].time_us)))) {
            cs_error_set(err, NULL, 0, "variant %d: size %lld: bad size or time", o[i].variant,
                         o[i].size_bytes);
            goto done;
        }
    }
    qsort(o, (size_t)n, sizeof(*o), cmp_obs);
    for (long i = 0; i < n;) {
        long j = i;
        long long k = key(&o[i]);
        int best = -1;
        double best_t = 0;

        for (; j < n && key(&o[j]) == k; j++) {
            if (j > i && o[j].variant == o[j - 1].variant) {
                cs_error_set(err, NULL, 0, "variant %d: size %lld predicted twice", o[j].variant,
                             k);
                goto done;
            }
            if (o[j].ok && (best < 0 || o[j].time_us < best_t)) {
                best = o[j].variant;
                best_t = o[j].time_us;
            }
        }
        if (best < 0) {
            if (nr > 0 && !prev_gap)
                r[nr - 1].dead_above = k;
            dead = k;
            prev_gap = 1;
        } else if (!prev_gap && r[nr - 1].variant == best) {
            r[nr - 1].max_bytes = r[nr - 1].last_size = k;
        } else {
            if (!prev_gap)
                r[nr - 1].max_bytes = k - 1;
            r[nr++] = (struct cs_tune_range){k, k, best, k, k, dead, 0};
            prev_gap = 0;
        }
        i = j;
    }
    if (nr == 0) {
        long k = 0;

        while (k < n && !obs[k].to_nccl)
            k++;
        if (k == n) { /* nothing finished; where NCCL won, no window is the plan */
            cs_error_set(err, NULL, 0, "no variant finishes at any size");
            goto done;
        }
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
    int c_nom = cs_table_find_col(t, "nominal_bytes");
    const char *size = cs_table_get(t, r, cs_table_find_col(t, "size_bytes"));
    const char *time = cs_table_get(t, r, cs_table_find_col(t, "time_us")), *status;
    struct cs_tune_obs *o = &sw->obs[sw->nobs];

    o->variant = v;
    if (cs_parse_ll(size, LLONG_MIN, LLONG_MAX, &o->size_bytes) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, t->lines[r], "bad size_bytes '%s'", size);
    o->nominal_bytes = 0;
    if (c_nom >= 0 && cs_parse_ll(cs_table_get(t, r, c_nom), 1, LLONG_MAX, &o->nominal_bytes) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, t->lines[r], "bad nominal_bytes '%s'",
                             cs_table_get(t, r, c_nom));
    status = cs_table_get(t, r, cs_table_find_col(t, "status"));
    if (strcmp(status, "ok") != 0 && strcmp(status, "deadlock") != 0 &&
        strcmp(status, "hang") != 0 && strcmp(status, "unsupported") != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, t->lines[r],
                             "bad status '%s' (ok, deadlock, hang or unsupported, as predict "
                             "writes it)",
                             status);
    o->ok = strcmp(status, "ok") == 0;
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
    int c_size = cs_table_find_col(t, "size_bytes"), c_nom = cs_table_find_col(t, "nominal_bytes");
    int rc;

    if (c_size < 1 || cs_table_find_col(t, "time_us") < 0 || cs_table_find_col(t, "status") < 0 ||
        strcmp(t->cols[0], "point") != 0)
        return cs_error_fail(err, CS_ERR_PARSE, name, 0,
                             "not a sweep CSV (point, axis columns, then %s)",
                             CS_REPORT_CSV_HEADER);
    /* the axes end where the predict columns begin, whichever comes first */
    sw.naxes = c_nom >= 1 && c_nom < c_size ? c_nom : c_size;
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
    free(sw->nccl);
    memset(sw, 0, sizeof(*sw));
}

long cs_tune_uneven(const struct cs_tune_sweep *sw)
{
    long uneven = 0;

    for (long i = 0; i < sw->nobs; i++) {
        int n = 0;

        for (long j = 0; j < sw->nobs; j++)
            n += key(&sw->obs[j]) == key(&sw->obs[i]);
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

int cs_tune_check_credits(struct cs_tune_sweep *sw, const char *sched_dir, int need_all,
                          struct cs_error *err)
{
    for (int v = 0; v < sw->nvar; v++) {
        struct cs_sched *s = NULL;
        struct cs_plan *p = NULL;
        long long lim;
        int rc;

        if ((rc = cs_tune_variant_sched(sw, v, sched_dir, &s, err)) != 0 && !need_all &&
            rc != CS_ERR_NOMEM) {
            sw->var[v].unchecked = 1;
            cs_error_init(err);
            continue;
        }
        if (rc != 0 || (rc = cs_plan_compile(s, 0, &p, err)) != 0 ||
            (rc = cs_tune_credit_limit(p, &sw->var[v].credit)) != 0) {
            if (rc == CS_ERR_NOMEM)
                cs_error_set(err, NULL, 0, "out of memory");
            cs_plan_free(p);
            cs_sched_free(s);
            return rc;
        }
        cs_plan_free(p);
        cs_sched_free(s);
        lim = sw->var[v].credit.limit_bytes;
        for (long i = 0; i < sw->nobs; i++)
            if (sw->obs[i].variant == v && lim > 0 && sw->obs[i].size_bytes >= lim && sw->obs[i].ok)
                sw->obs[i].ok = 0, sw->obs[i].capped = 1;
    }
    return 0;
}

/* ---- LL128 off NVLink ---------------------------------------------------------------------- */

/* The sweep's platform: the file its platform column names (relative to dir), or the one its
 * family keys describe, written to the temporary file tmp (a mkstemp template; replays load it,
 * so the caller removes it when tmp[0] is not '\0' after use). */
static int sweep_platform(const struct cs_tune_sweep *sw, const char *dir, char *tmp, int *made,
                          struct cs_platform **out, struct cs_error *err)
{
    const struct cs_table *t = sw->t;
    const char *const *vals = (const char *const *)t->cells + sw->var[0].row * t->ncols + 1;
    struct cs_sweep *ks = calloc(1, sizeof(*ks));
    struct cs_platform_spec spec;
    struct cs_params params;
    char path[4096];
    const char *pv;
    int fd, rc;

    if (ks == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    ks->dir = (char *)dir;
    for (int c = 1; c < sw->naxes && ks->nkeys < CS_SWEEP_MAX_KEYS; c++)
        ks->keys[ks->nkeys++] = t->cols[c];
    if ((pv = cs_sweep_value(ks, vals, "platform")) != NULL) {
        rc = cs_sweep_path(ks, pv, path, sizeof(path)) == 0
                 ? cs_platform_read(path, out, err)
                 : cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "platform path too long");
    } else if (cs_sweep_value(ks, vals, "platform.family") == NULL) {
        rc = cs_error_fail(err, CS_ERR_INVALID, NULL, 0, "no platform or platform.family column");
    } else if ((fd = cs_cleanup_mkstemps(tmp, 0)) < 0) { /* removed on a signal too */
        rc = cs_error_fail(err, CS_ERR_IO, NULL, 0, "temporary platform file: %s", strerror(errno));
    } else {
        *made = 1;
        close(fd);
        if ((rc = cs_sweeprun_platform(ks, vals, &spec, &params, err)) == 0 &&
            (rc = cs_platform_write(&spec, &params, tmp, err)) == 0)
            rc = cs_platform_read(tmp, out, err);
    }
    free(ks);
    return rc;
}

/* Whether variant v's schedule, planned at its smallest size, runs LL128 over a path within a
 * node that is not all NVLink; the warning (cs_predict_check_ll128) into var's note. */
static int variant_ll128(struct cs_tune_sweep *sw, int v, const struct cs_platform *plat,
                         const char *sched_dir, struct cs_error *err)
{
    struct cs_sched *s = NULL;
    struct cs_plan *p = NULL;
    char *msg = NULL;
    long long size = 0;
    int rc;

    for (long i = 0; i < sw->nobs; i++)
        if (sw->obs[i].variant == v && (size == 0 || sw->obs[i].size_bytes < size))
            size = sw->obs[i].size_bytes;
    if ((rc = cs_tune_variant_sched(sw, v, sched_dir, &s, err)) != 0)
        return rc == CS_ERR_NOMEM ? rc : 0; /* unread: check_credits said so */
    if (s->proto == CS_PROTO_LL128 &&
        (rc = cs_plan_build(s, cs_plan_round_size(s, size, 1), 1, 0, &p, err)) == 0 &&
        (rc = cs_predict_check_ll128(p, plat, &msg, err)) == 0 && msg != NULL) {
        snprintf(sw->var[v].off_nvlink, sizeof(sw->var[v].off_nvlink), "%s", msg);
        for (long i = 0; i < sw->nobs; i++)
            if (sw->obs[i].variant == v && sw->obs[i].ok)
                sw->obs[i].ok = 0, sw->obs[i].off_nvlink = 1;
    }
    free(msg);
    cs_plan_free(p);
    cs_sched_free(s);
    return rc;
}

int cs_tune_check_ll128(struct cs_tune_sweep *sw, const char *sched_dir, struct cs_error *err)
{
    struct cs_platform *plat = NULL;
    char tmp[] = "/tmp/collsim-tune-XXXXXX";
    int rc = 0, any = 0, made = 0;

    for (int v = 0; v < sw->nvar; v++)
        any |= strstr(sw->var[v].desc, "LL128") != NULL;
    if (!any)
        return 0;
    if ((rc = sweep_platform(sw, sched_dir, tmp, &made, &plat, err)) == 0)
        for (int v = 0; v < sw->nvar && rc == 0; v++)
            if (!sw->var[v].unchecked)
                rc = variant_ll128(sw, v, plat, sched_dir, err);
    cs_platform_free(plat);
    if (made) { /* mkstemp may well write an X into the name: whether it made one decides */
        unlink(tmp);
        cs_cleanup_drop(tmp);
    }
    return rc;
}

/* ---- NCCL's own choice as the baseline ----------------------------------------------------- */

static int cmp_ll(const void *a, const void *b)
{
    return cs_cmp_ll(*(const long long *)a, *(const long long *)b);
}

/* The sweep's distinct (nominal) sizes, ascending, into *out (new) and *n. */
static int sweep_sizes(const struct cs_tune_sweep *sw, long long **out, long *n)
{
    long long *v = malloc((size_t)(sw->nobs ? sw->nobs : 1) * sizeof(*v));
    long k = 0;

    if (v == NULL)
        return CS_ERR_NOMEM;
    for (long i = 0; i < sw->nobs; i++)
        v[k++] = key(&sw->obs[i]);
    qsort(v, (size_t)k, sizeof(*v), cmp_ll);
    *n = 0;
    for (long i = 0; i < k; i++)
        if (*n == 0 || v[*n - 1] != v[i])
            v[(*n)++] = v[i];
    *out = v;
    return 0;
}

int cs_tune_nccl_baseline(struct cs_tune_sweep *sw, const char *sched_dir, const char *plat,
                          const struct cs_predict_vs_nccl *vs, double margin, struct cs_error *err)
{
    struct cs_platform *p = NULL;
    struct cs_sched *s = NULL;
    struct cs_predict_opts o = {.type_bytes = 4, .vs_nccl = vs};
    char tmp[] = "/tmp/collsim-tune-XXXXXX";
    long long *sizes = NULL;
    long n = 0;
    int v = 0, rc, made = 0;

    if (plat == NULL && cs_table_find_col(sw->t, "platform") < 0 &&
        cs_table_find_col(sw->t, "platform.family") < 0) {
        snprintf(sw->no_nccl, sizeof(sw->no_nccl),
                 "the sweep names no platform (--nccl-platform P.xml names one)");
        return 0;
    }
    while (v < sw->nvar && sw->var[v].unchecked)
        v++;
    if (v == sw->nvar)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL's baseline needs a variant's schedule (--schedule-dir), or "
                             "--no-nccl");
    if ((rc = plat ? cs_platform_read(plat, &p, err)
                   : sweep_platform(sw, sched_dir, tmp, &made, &p, err)) ||
        (rc = cs_tune_variant_sched(sw, v, sched_dir, &s, err)) ||
        (rc = sweep_sizes(sw, &sizes, &n)) ||
        ((sw->nccl = calloc((size_t)n, sizeof(*sw->nccl))) == NULL && (rc = CS_ERR_NOMEM)))
        goto done;
    sw->nnccl = n;
    sw->margin = margin;
    for (long i = 0; i < n && rc == 0; i++) {
        struct cs_predict_nccl b;
        double best = 0;

        if ((rc = cs_predict_nccl_at(s, p, &o, sizes[i], &b, err)) != 0)
            break;
        sw->nccl[i] = (struct cs_tune_nccl){sizes[i], b.time_us, "", b.channels};
        snprintf(sw->nccl[i].proto, sizeof(sw->nccl[i].proto), "%s",
                 b.proto ? cs_proto_name(b.proto) : "-");
        for (long k = 0; k < sw->nobs; k++)
            if (key(&sw->obs[k]) == sizes[i] && sw->obs[k].ok &&
                (best == 0 || sw->obs[k].time_us < best))
                best = sw->obs[k].time_us;
        if (b.time_us > 0 && best > 0 && !(best < b.time_us * (1 - margin)))
            for (long k = 0; k < sw->nobs; k++)
                if (key(&sw->obs[k]) == sizes[i] && sw->obs[k].ok)
                    sw->obs[k].ok = 0, sw->obs[k].to_nccl = 1;
    }
done:
    free(sizes);
    cs_sched_free(s);
    cs_platform_free(p);
    if (made) { /* mkstemp may well write an X into the name: whether it made one decides */
        unlink(tmp);
        cs_cleanup_drop(tmp);
    }
    return rc == CS_ERR_NOMEM ? cs_error_fail(err, rc, NULL, 0, "out of memory") : rc;
}

/* NCCL's baseline at a size, or NULL. */
static const struct cs_tune_nccl *nccl_at(const struct cs_tune_sweep *sw, long long size)
{
    for (long i = 0; i < sw->nnccl; i++)
        if (sw->nccl[i].size_bytes == size)
            return &sw->nccl[i];
    return NULL;
}

void cs_tune_window(const struct cs_tune_range *r, int i, int nr, int extend, long long *min_bytes,
                    long long *max_bytes)
{
    *min_bytes = extend && i == 0 ? (r[i].dead_below ? r[i].dead_below + 1 : 0) : r[i].min_bytes;
    *max_bytes =
        extend && i == nr - 1 ? (r[i].dead_above ? r[i].dead_above - 1 : 0) : r[i].max_bytes;
}

int cs_tune_window_safe(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, int i,
                        int nr, int extend, long long *min_bytes, long long *max_bytes)
{
    int v = r[i].variant, cap = 0;
    long long lo, hi, lim = sw->var[v].credit.limit_bytes;

    cs_tune_window(r, i, nr, extend, &lo, &hi);
    if (hi == 0)
        hi = LLONG_MAX;
    /* A deadlocked size of v lies outside the sizes it won (sizes grow with the nominal ones):
     * the window ends below it or starts above it. */
    for (long k = 0; k < sw->nobs; k++) {
        const struct cs_tune_obs *o = &sw->obs[k];

        if (o->variant != v || o->ok || o->capped || o->to_nccl || o->off_nvlink ||
            o->size_bytes < lo || o->size_bytes > hi)
            continue;
        if (key(o) > r[i].last_size)
            hi = o->size_bytes - 1;
        else
            lo = o->size_bytes + 1;
        cap |= CS_TUNE_CAP_SWEEP;
    }
    if (lim > 0 && hi >= lim) {
        hi = lim - 1;
        cap |= CS_TUNE_CAP_CREDIT;
    }
    *min_bytes = lo;
    *max_bytes = hi == LLONG_MAX ? 0 : hi;
    return cap;
}

int cs_tune_check_runtime(int nr, enum cs_verify_runtime rt, struct cs_error *err)
{
    if (rt == CS_VERIFY_LEGACY && nr > CS_TUNE_LEGACY_MAX_ALGOS)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "the plan has %d windows, but the legacy runtime loads at most %d "
                             "algorithms (MSCCL_MAX_NUM_ALGOS): narrow the sweep's variants or "
                             "sizes (--where), or use the executor",
                             nr, CS_TUNE_LEGACY_MAX_ALGOS);
    return 0;
}

/* The minBytes/maxBytes written for runtime rt from an inclusive window (max 0: none): the
 * legacy runtime tests [minBytes, maxBytes) and has no unlimited value. */
static void runtime_window(enum cs_verify_runtime rt, long long lo, long long hi,
                           long long *min_bytes, long long *max_bytes)
{
    *min_bytes = lo;
    *max_bytes = rt != CS_VERIFY_LEGACY ? hi : hi == 0 ? CS_TUNE_LEGACY_OPEN_MAX : hi + 1;
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

/* Whether runtime rt loads s: verify's structural checks with its rules; 0 or CS_ERR_INVALID
 * naming the variant and verify's first error. */
static int runtime_loads(const struct cs_sched *s, const char *desc, enum cs_verify_runtime rt,
                         struct cs_error *err)
{
    /* Co-residency depends on the platform: the prediction reports it (status hang). */
    struct cs_verify_opts o = {.max_diags = 1000, .runtime = rt, .gpu_sms = -1};
    struct cs_verify_result *vr = NULL;
    int rc = 0;

    if (cs_verify_check_opts(s, &o, &vr) != 0)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    for (int k = 0; k < vr->ndiags && rc == 0; k++)
        if (vr->diags[k].severity == CS_VERIFY_ERROR && vr->diags[k].cls == CS_VERIFY_STRUCTURE)
            rc = cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                               "variant %s: the %s would not load it (`collsim verify "
                               "--runtime %s`): line %d: %s",
                               desc,
                               rt == CS_VERIFY_LEGACY ? "legacy MSCCL runtime" : "MSCCL executor",
                               rt == CS_VERIFY_LEGACY ? "legacy" : "executor", vr->diags[k].line,
                               vr->diags[k].msg);
    cs_verify_result_free(vr);
    return rc;
}

/* Whether an in-place schedule also serves out-of-place calls: with outofplace set, verify's
 * symbolic execution runs the out-of-place call too (input and output apart), and reports a
 * wrong result or a write into NCCL's const send buffer as data diagnostics. 1, 0, or a negative
 * CS_ERR_NOMEM. */
static int outofplace_ok(struct cs_sched *s)
{
    struct cs_verify_result *vr = NULL;
    int ok, old = s->outofplace;

    s->outofplace = 1;
    if (cs_verify_check(s, 1000, &vr) != 0) {
        s->outofplace = old;
        return CS_ERR_NOMEM;
    }
    ok = vr->data_checked && vr->verdict == CS_VERIFY_OK;
    for (int k = 0; k < vr->ndiags && ok; k++)
        ok = vr->diags[k].cls != CS_VERIFY_DATA;
    ok = ok && vr->ndropped == 0;
    cs_verify_result_free(vr);
    s->outofplace = old;
    return ok;
}

/* Range i's schedule as runtime rt selects it: window, outofplace, and a name for legacy. */
static int prepare(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, int i, int nr,
                   int extend, enum cs_verify_runtime rt, struct cs_sched *s, struct cs_error *err)
{
    long long lo, hi;
    int oop;

    cs_tune_window_safe(sw, r, i, nr, extend, &lo, &hi);
    if (hi != 0 && lo > hi)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "variant %s: no window left for sizes %lld..%lld",
                             sw->var[r[i].variant].desc, r[i].first_size, r[i].last_size);
    s->has_min_bytes = s->has_max_bytes = 1;
    runtime_window(rt, lo, hi, &s->min_bytes, &s->max_bytes);
    if (!s->has_outofplace) {
        /* the executor requires it; Azure msccl-tools writes the complement of inplace */
        s->has_outofplace = 1;
        s->outofplace = !s->inplace;
    }
    if (s->inplace && !s->outofplace && s->coll != CS_COLL_CUSTOM) {
        if ((oop = outofplace_ok(s)) < 0)
            return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
        s->outofplace = oop;
    }
    if (rt == CS_VERIFY_LEGACY && s->name == NULL &&
        (s->name = strdup(sw->var[r[i].variant].desc)) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    return runtime_loads(s, sw->var[r[i].variant].desc, rt, err);
}

int cs_tune_write_schedules(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, int nr,
                            int extend, enum cs_verify_runtime rt, const char *sched_dir,
                            const char *outdir, struct cs_tune_file *files, struct cs_error *err)
{
    char path[4096 + CS_TUNE_DESC_LEN];
    int rc;

    if ((rc = cs_tune_check_runtime(nr, rt, err)) != 0)
        return rc;
    /* one plan serves one communicator: a window of another GPU count would never run (checked
     * before anything is written) */
    for (int i = 0, ngpus = 0; i < nr && rc == 0; i++) {
        struct cs_sched *s = NULL;

        if ((rc = cs_tune_variant_sched(sw, r[i].variant, sched_dir, &s, err)) != 0)
            return rc;
        if (i > 0 && s->ngpus != ngpus)
            rc = cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                               "window %d's schedule (%s) is for %d GPUs, window 0's for %d: one "
                               "plan serves one communicator size (is --schedule-dir the folder "
                               "the sweep read?)",
                               i, sw->var[r[i].variant].desc, s->ngpus, ngpus);
        ngpus = s->ngpus;
        cs_sched_free(s);
    }
    if (rc != 0)
        return rc;
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST)
        return cs_error_fail(err, CS_ERR_IO, outdir, 0, "cannot create: %s", strerror(errno));
    for (int i = 0; i < nr && rc == 0; i++) {
        struct cs_sched *s = NULL;

        if ((rc = cs_tune_variant_sched(sw, r[i].variant, sched_dir, &s, err)) != 0)
            break;
        if ((rc = prepare(sw, r, i, nr, extend, rt, s, err)) == 0) {
            cs_tune_file_name(sw->var[r[i].variant].desc, i, files[i].name, sizeof(files[i].name));
            files[i].outofplace = s->outofplace;
            snprintf(path, sizeof(path), "%s/%s", outdir, files[i].name);
            rc = write_sched(s, path, err);
        }
        cs_sched_free(s);
    }
    return rc;
}

/* Why range i's window stops short: the variant's credit limit and the sweep's deadlocks. */
static void plan_notes(FILE *fp, const struct cs_tune_sweep *sw, const struct cs_tune_range *r,
                       int i, int cap)
{
    const struct cs_tune_credit *c = &sw->var[r[i].variant].credit;

    if (cap & CS_TUNE_CAP_CREDIT)
        fprintf(fp,
                "#   window %d stops below %lld bytes: from there the FIFO credits %s (gpu %d tb "
                "%d step %d, cnt=%d, sends more than %d slots per iteration to a receive that "
                "%s)\n",
                i, c->limit_bytes, c->deadlock ? "deadlock" : "may deadlock", c->gpu, c->tb,
                c->step, c->cnt, CS_NCCL_STEPS,
                c->deadlock ? "starts only after it ends"
                            : "forwards it; the closed form cannot tell, so the window stays "
                              "below it");
    if (cap & CS_TUNE_CAP_SWEEP)
        fprintf(fp, "#   window %d stops short of a size where the sweep saw %s deadlock\n", i,
                sw->var[r[i].variant].desc);
}

/* The variants whose predictions at or above their credit limit were left out. */
static void capped_notes(FILE *fp, const struct cs_tune_sweep *sw)
{
    for (int v = 0; v < sw->nvar; v++) {
        const struct cs_tune_credit *c = &sw->var[v].credit;
        long n = 0;

        for (long i = 0; i < sw->nobs; i++)
            n += sw->obs[i].variant == v && sw->obs[i].capped;
        if (n > 0)
            fprintf(fp,
                    "# %s: %ld prediction%s at or above %lld bytes left out: the FIFO credits %s "
                    "there (gpu %d tb %d step %d, cnt=%d)\n",
                    sw->var[v].desc, n, n == 1 ? "" : "s", c->limit_bytes,
                    c->deadlock ? "deadlock" : "may deadlock", c->gpu, c->tb, c->step, c->cnt);
    }
}

/* The time of range i's variant at each of its sizes against NCCL's there: "1.23x-1.56x" (NCCL's
 * time over the variant's), into buf; "-" without a baseline. */
static void speedup(const struct cs_tune_sweep *sw, const struct cs_tune_range *r, char *buf,
                    size_t len)
{
    double lo = 0, hi = 0;

    snprintf(buf, len, "-");
    for (long k = 0; k < sw->nobs && sw->nccl; k++) {
        const struct cs_tune_obs *o = &sw->obs[k];
        const struct cs_tune_nccl *b = nccl_at(sw, key(o));
        double x;

        if (o->variant != r->variant || !o->ok || key(o) < r->first_size || key(o) > r->last_size ||
            b == NULL || !(b->time_us > 0))
            continue;
        x = b->time_us / o->time_us;
        lo = lo == 0 || x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    if (lo > 0)
        snprintf(buf, len, "%.2fx-%.2fx", lo, hi);
}

/* The sizes left to NCCL, each with NCCL's choice and time and the fastest variant's. */
static void nccl_notes(FILE *fp, const struct cs_tune_sweep *sw)
{
    int head = 0;

    for (long i = 0; i < sw->nnccl; i++) {
        const struct cs_tune_nccl *b = &sw->nccl[i];
        double best = 0;
        int v = -1, left = 0;

        for (long k = 0; k < sw->nobs; k++) {
            const struct cs_tune_obs *o = &sw->obs[k];

            if (key(o) != b->size_bytes || !o->to_nccl)
                continue;
            left = 1;
            if (best == 0 || o->time_us < best)
                best = o->time_us, v = o->variant;
        }
        if (!left)
            continue;
        if (!head++)
            fprintf(fp,
                    "# left to NCCL (its own choice on this platform is faster, or within %.0f%% "
                    "of the fastest variant; no window covers these sizes):\n",
                    100 * sw->margin);
        fprintf(fp, "#   %lld bytes: NCCL %s on %d channels %.2f us, best variant %s %.2f us\n",
                b->size_bytes, b->proto, b->channels, b->time_us, sw->var[v].desc, best);
    }
}

void cs_tune_plan_write(FILE *fp, const char *csv, const struct cs_tune_sweep *sw,
                        const struct cs_tune_range *r, int nr, const struct cs_tune_file *files,
                        int extend, enum cs_verify_runtime rt)
{
    int *caps = calloc((size_t)nr + 1, sizeof(int)), any = 0;

    fprintf(fp, "# collsim tune %s: the fastest variant per size range%s%s\n", csv,
            sw->platform[0] ? " on " : "", sw->platform);
    if (rt == CS_VERIFY_LEGACY)
        fprintf(fp, "# min_bytes/max_bytes: the window written into each schedule for the legacy "
                    "runtime (minBytes <= nBytes < maxBytes)\n");
    else
        fprintf(fp, "# min_bytes/max_bytes: the window written into each schedule (inclusive; 0 "
                    "as max_bytes: no limit)\n");
    if (sw->nccl)
        fprintf(fp, "# vs NCCL: NCCL's time over the variant's at the sizes of the window (its own "
                    "choice on this platform)\n");
    else
        fprintf(fp, "# no NCCL baseline compared (%s)\n",
                sw->no_nccl[0] ? sw->no_nccl : "--no-nccl");
    fprintf(fp, "%12s %12s  %-25s  %-40s %-13s %s\n", "min_bytes", "max_bytes", "measured sizes",
            "variant", "vs NCCL", "file");
    if (nr == 0)
        fprintf(fp, "# no window: NCCL's own choice is faster at every size (or within the "
                    "margin); nothing to deploy\n");
    for (int i = 0; i < nr; i++) {
        char meas[64], file[CS_TUNE_DESC_LEN + 32], sp[64];
        long long lo, hi, wlo, whi;
        int cap = cs_tune_window_safe(sw, r, i, nr, extend, &lo, &hi);

        if (caps)
            caps[i] = cap;
        any |= cap;
        runtime_window(rt, lo, hi, &wlo, &whi);
        snprintf(meas, sizeof(meas), "%lld..%lld", r[i].first_size, r[i].last_size);
        snprintf(file, sizeof(file), "%s%s", files ? files[i].name : "-",
                 files && files[i].outofplace ? " (+out-of-place)" : "");
        speedup(sw, &r[i], sp, sizeof(sp));
        fprintf(fp, "%12lld %12lld  %-25s  %-40s %-13s %s\n", wlo, whi, meas,
                sw->var[r[i].variant].desc, sp, file);
    }
    if (any)
        fprintf(fp, "# windows cut short:\n");
    for (int i = 0; i < nr && caps; i++)
        plan_notes(fp, sw, r, i, caps[i]);
    capped_notes(fp, sw);
    nccl_notes(fp, sw);
    for (int v = 0; v < sw->nvar; v++)
        if (sw->var[v].off_nvlink[0] != '\0')
            fprintf(fp, "# %s left out: LL128 where NCCL refuses it (%s)\n", sw->var[v].desc,
                    sw->var[v].off_nvlink);
    for (int i = 0; i < nr; i++)
        if (sw->var[r[i].variant].unchecked)
            fprintf(fp,
                    "# window %d: the FIFO credits of %s are not checked (its schedule was "
                    "not found: --schedule-dir)\n",
                    i, sw->var[r[i].variant].desc);
    free(caps);
}

/* ---- FIFO credits ------------------------------------------------------------------------- */

/* The smallest buffer size at which a step of cnt chunks takes more than CS_NCCL_STEPS slots per
 * iteration, or 0 when none does. It makes ceil(cnt / maxAllowedCount) calls of slots each, so it
 * fits while maxAllowedCount >= m = ceil(cnt / (CS_NCCL_STEPS / slots)); maxAllowedCount =
 * floor(loop / ceil(size / nchunks)) (clamped to [1, 71]) is at least m exactly while size <=
 * nchunks x floor(loop / m). */
static long long overfull_bytes(int cnt, int nchunks, int proto)
{
    int calls = CS_NCCL_STEPS / cs_proto_slots_per_call(proto);
    long long m = (cnt + calls - 1) / calls;

    if (cnt <= calls)
        return 0;
    if (m > CS_MAX_ALLOWED_COUNT)
        return 1; /* over the cap at every size */
    return (long long)nchunks * (cs_proto_loop_bytes(proto) / m) + 1;
}

/* The compiled plan's ops as a graph of start and end events: node 2k is op k's start, 2k + 1
 * its end. An edge says a node cannot happen before another. */
struct cgraph {
    const struct cs_plan *p;
    int *op0; /* first op number of each tb; ntbs + 1 entries */
    int nops;
    int *peer;             /* per op: the matching receive of a send, or -1 */
    int *sender;           /* per op: the matching send of a receive, or -1 */
    long long *full_bytes; /* per op: overfull_bytes of a send, 0 otherwise */
    int *adj0, *adj, nadj; /* edges out of each node (what it waits for), CSR */
};

static const struct cs_plan_op *op_at(const struct cgraph *g, int k)
{
    int t = 0;

    while (g->op0[t + 1] <= k)
        t++;
    return &g->p->tbs[t].ops[k - g->op0[t]];
}

/* The op of tb t that holds XML step s (the first op whose last step is at or after s), or -1. */
static int op_of_step(const struct cgraph *g, int t, int s)
{
    const struct cs_plan_tb *tb = &g->p->tbs[t];

    for (int i = 0; i < tb->nops; i++)
        if (tb->ops[i].step >= s)
            return g->op0[t] + i;
    return -1;
}

/* The tb of gpu that receives from src on chan, or -1. */
static int receiver(const struct cs_plan *p, int gpu, int src, int chan)
{
    if (gpu < 0 || gpu >= p->ngpus)
        return -1;
    for (int t = p->gpu_tb0[gpu]; t < p->gpu_tb0[gpu + 1]; t++)
        if (p->tbs[t].recv == src && p->tbs[t].chan == chan)
            return t;
    return -1;
}

/* Pair the k-th send of every connection with its k-th receive (the counts differing leaves
 * both unpaired: verify reports it). */
static void pair_connections(struct cgraph *g)
{
    const struct cs_plan *p = g->p;

    for (int t = 0; t < p->ntbs; t++) {
        const struct cs_plan_tb *tb = &p->tbs[t];
        int r = receiver(p, tb->send, tb->gpu, tb->chan), i = 0, j = 0, ns = 0, nr = 0;

        if (tb->send < 0 || r < 0)
            continue;
        for (int k = 0; k < tb->nops; k++)
            ns += cs_step_sends(tb->ops[k].type);
        for (int k = 0; k < p->tbs[r].nops; k++)
            nr += cs_step_recvs(p->tbs[r].ops[k].type);
        for (; ns == nr && i < tb->nops; i++) {
            if (!cs_step_sends(tb->ops[i].type))
                continue;
            while (!cs_step_recvs(p->tbs[r].ops[j].type))
                j++;
            g->peer[g->op0[t] + i] = g->op0[r] + j;
            g->sender[g->op0[r] + j] = g->op0[t] + i;
            j++;
        }
    }
}

/* The edges at size_bytes: an op starts after the op before it in its tb and the ops it depends
 * on end; a receive ends after its send ends; a send that takes more than the FIFO's slots at
 * this size ends only after its receive has started to drain it. */
static void build_edges(struct cgraph *g, long long size_bytes)
{
    const struct cs_plan *p = g->p;

    g->nadj = 0;
    for (int t = 0; t < p->ntbs; t++)
        for (int i = 0; i < p->tbs[t].nops; i++) {
            const struct cs_plan_op *op = &p->tbs[t].ops[i];
            int k = g->op0[t] + i, gpu0 = p->gpu_tb0[p->tbs[t].gpu];

            g->adj0[2 * k] = g->nadj;
            if (i > 0)
                g->adj[g->nadj++] = 2 * (k - 1) + 1;
            for (int d = 0; d < op->ndeps; d++) {
                int x = op_of_step(g, gpu0 + op->deps[d].tb, op->deps[d].step);

                if (x >= 0)
                    g->adj[g->nadj++] = 2 * x + 1;
            }
            g->adj0[2 * k + 1] = g->nadj;
            g->adj[g->nadj++] = 2 * k;
            if (g->sender[k] >= 0)
                g->adj[g->nadj++] = 2 * g->sender[k] + 1;
            if (g->peer[k] >= 0 && g->full_bytes[k] && g->full_bytes[k] <= size_bytes)
                g->adj[g->nadj++] = 2 * g->peer[k];
        }
    g->adj0[2 * g->nops] = g->nadj;
}

/* Whether the wait-for graph has a cycle (an iterative depth-first search; colour 1 on the
 * stack, 2 done). */
static int has_cycle(const struct cgraph *g, char *colour, int *stack, int *next)
{
    int n = 2 * g->nops;

    memset(colour, 0, (size_t)n);
    for (int s = 0; s < n; s++) {
        int sp = 0;

        if (colour[s])
            continue;
        stack[sp++] = s;
        colour[s] = 1;
        next[s] = g->adj0[s];
        while (sp > 0) {
            int u = stack[sp - 1];

            if (next[u] == g->adj0[u + 1]) {
                colour[u] = 2;
                sp--;
                continue;
            }
            int w = g->adj[next[u]++];

            if (colour[w] == 1)
                return 1;
            if (colour[w] == 0) {
                colour[w] = 1;
                next[w] = g->adj0[w];
                stack[sp++] = w;
            }
        }
    }
    return 0;
}

static void cgraph_cleanup(struct cgraph *g)
{
    free(g->op0);
    free(g->peer);
    free(g->sender);
    free(g->full_bytes);
    free(g->adj0);
    free(g->adj);
}

/* The graph's arrays, every op's overfull size, and the connections paired. */
static int cgraph_init(struct cgraph *g, const struct cs_plan *p)
{
    long nedges = 0;

    *g = (struct cgraph){.p = p};
    if ((g->op0 = calloc((size_t)p->ntbs + 1, sizeof(int))) == NULL)
        return CS_ERR_NOMEM;
    for (int t = 0; t < p->ntbs; t++) {
        g->op0[t + 1] = g->op0[t] + p->tbs[t].nops;
        for (int i = 0; i < p->tbs[t].nops; i++)
            nedges += p->tbs[t].ops[i].ndeps + 4;
    }
    g->nops = g->op0[p->ntbs];
    g->peer = malloc(sizeof(int) * ((size_t)g->nops + 1));
    g->sender = malloc(sizeof(int) * ((size_t)g->nops + 1));
    g->full_bytes = calloc((size_t)g->nops + 1, sizeof(long long));
    g->adj0 = calloc(2 * (size_t)g->nops + 1, sizeof(int));
    g->adj = malloc(sizeof(int) * ((size_t)nedges + 1));
    if (g->peer == NULL || g->sender == NULL || g->full_bytes == NULL || g->adj0 == NULL ||
        g->adj == NULL)
        return CS_ERR_NOMEM;
    for (int t = 0; t < p->ntbs; t++)
        for (int i = 0; i < p->tbs[t].nops; i++) {
            const struct cs_plan_op *op = &p->tbs[t].ops[i];
            int k = g->op0[t] + i;

            g->peer[k] = g->sender[k] = -1;
            if (cs_step_sends(op->type))
                g->full_bytes[k] = overfull_bytes(op->cnt, p->nchunksperloop, p->proto);
        }
    pair_connections(g);
    return 0;
}

/* The op of the smallest overfull size above `above` (its size in *bytes), or -1 when none. */
static int next_overfull(const struct cgraph *g, long long above, long long *bytes)
{
    int best = -1;

    for (int k = 0; k < g->nops; k++)
        if (g->full_bytes[k] > above && (best < 0 || g->full_bytes[k] < g->full_bytes[best]))
            best = k;
    if (best >= 0)
        *bytes = g->full_bytes[best];
    return best;
}

/* At size T, an overfull send whose receive is not a plain receive (it forwards, so it drains
 * only as fast as its own connection does) or has none: the closed form cannot tell. */
static int undecided(const struct cgraph *g, long long size_bytes)
{
    for (int k = 0; k < g->nops; k++)
        if (g->full_bytes[k] && g->full_bytes[k] <= size_bytes &&
            (g->peer[k] < 0 || cs_step_sends(op_at(g, g->peer[k])->type)))
            return k;
    return -1;
}

/* Fill out's step fields from op k. */
static void credit_step(const struct cgraph *g, int k, struct cs_tune_credit *out)
{
    const struct cs_plan_op *op = op_at(g, k);
    int t = 0;

    while (g->op0[t + 1] <= k)
        t++;
    out->gpu = g->p->tbs[t].gpu;
    out->tb = g->p->tbs[t].id;
    out->step = op->step;
    out->cnt = op->cnt;
    out->line = op->line;
}

int cs_tune_credit_limit(const struct cs_plan *p, struct cs_tune_credit *out)
{
    struct cgraph g;
    char *colour = NULL;
    int *stack = NULL, *next = NULL, rc, k;
    struct cs_tune_credit c = {0};
    long long size = 0;

    if ((rc = cgraph_init(&g, p)) != 0 || (colour = malloc(2 * (size_t)g.nops + 1)) == NULL ||
        (stack = malloc(sizeof(int) * (2 * (size_t)g.nops + 1))) == NULL ||
        (next = malloc(sizeof(int) * (2 * (size_t)g.nops + 1))) == NULL) {
        rc = CS_ERR_NOMEM;
        goto done;
    }
    /* Overfull steps only get more as the size grows (maxAllowedCount never rises): the first
     * size with a cycle, or with an overfull step that may not drain, is the limit. */
    while ((k = next_overfull(&g, size, &size)) >= 0) {
        int u;

        if (c.first_bytes == 0)
            c.first_bytes = size;
        build_edges(&g, size);
        if (has_cycle(&g, colour, stack, next)) {
            c.limit_bytes = size;
            c.deadlock = 1;
        } else if ((u = undecided(&g, size)) >= 0) {
            c.limit_bytes = size;
            k = u;
        }
        if (c.limit_bytes) {
            credit_step(&g, k, &c);
            break;
        }
    }
    *out = c;
done:
    free(colour);
    free(stack);
    free(next);
    cgraph_cleanup(&g);
    return rc;
}
