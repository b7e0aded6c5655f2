/* sweeprun.c: one point of a sweep predicted in process, written as rows of the sweep CSV. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "predict.h"
#include "report.h"
#include "sweeprun.h"
#include "table.h"
#include "util.h"

#define PATH_LEN 4096
#define MAX_COUNT 4096 /* GPUs, nodes, rows or columns of a platform, as `collsim platform` */

int cs_sweeprun_gen_spec(char *const *keys, const char *const *vals, int n, char *buf, size_t len)
{
    int a = cs_name_index(keys, n, "gen.algorithm"), p = cs_name_index(keys, n, "protocol");
    size_t m = (size_t)snprintf(buf, len, "%s:", a >= 0 ? vals[a] : "");
    const char *sep = "";

    for (int i = 0; i < n && m < len; i++) {
        if (strncmp(keys[i], "gen.", 4) != 0 || i == a || strcmp(vals[i], "-") == 0 ||
            (strcmp(keys[i], "gen.compat") == 0 && strcmp(vals[i], "1") != 0))
            continue;
        m += (size_t)snprintf(buf + m, len - m, "%s%s=%s", sep, keys[i] + 4, vals[i]);
        sep = ",";
    }
    if (p >= 0 && strcmp(vals[p], "-") != 0 && m < len)
        m += (size_t)snprintf(buf + m, len - m, "%sprotocol=%s", sep, vals[p]);
    return m < len ? 0 : CS_ERR_USAGE;
}

/* platform.* counts into spec, each checked against the family as `collsim platform` does. */
static int family_counts(const struct cs_sweep *sw, const char *const *vals,
                         struct cs_platform_spec *spec, struct cs_error *err)
{
    static const struct {
        const char *key;
        size_t off;
        enum cs_platform_family only; /* 0: any family but a100-hier */
    } counts[] = {
        {"platform.nodes", offsetof(struct cs_platform_spec, nodes), CS_FAM_DGX},
        {"platform.rows", offsetof(struct cs_platform_spec, rows), CS_FAM_HIER},
        {"platform.columns", offsetof(struct cs_platform_spec, columns), CS_FAM_HIER},
        {"platform.gpus_per_node", offsetof(struct cs_platform_spec, gpus_per_node), 0},
        {"platform.ranks", offsetof(struct cs_platform_spec, ranks), CS_FAM_VIRTUAL},
    };

    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        const char *v = cs_sweep_value(sw, vals, counts[i].key);
        int *field = (int *)((char *)spec + counts[i].off);

        if (v == NULL)
            continue;
        if (counts[i].only ? spec->family != counts[i].only : spec->family == CS_FAM_HIER)
            return cs_error_fail(err, CS_ERR_INVALID, sw->path, 0, "%s does not apply to %s",
                                 counts[i].key, cs_platform_family_name(spec->family));
        if (cs_parse_int(v, 1, MAX_COUNT, field) != 0 ||
            (spec->family == CS_FAM_DGX && *field != 8 && field == &spec->gpus_per_node))
            return cs_error_fail(
                err, CS_ERR_INVALID, sw->path, 0, "%s: '%s' is not a count %s", counts[i].key, v,
                spec->family == CS_FAM_DGX ? "(dgx-a100 has 8 GPUs per node)" : "in 1..4096");
    }
    return 0;
}

/* set.* keys as they are; scale.* keys as factors of the value the family file holds (a sweep
 * never gives both set.K and scale.K, so their order does not matter). */
static int family_params(const struct cs_sweep *sw, const char *const *vals,
                         struct cs_params *params, struct cs_error *err)
{
    for (int i = 0; i < sw->nkeys; i++) {
        const char *key = sw->keys[i];
        char buf[64];
        double v;

        if (strcmp(vals[i], "-") == 0)
            continue;
        if (strncmp(key, "set.", 4) == 0 && cs_params_set(params, key + 4, vals[i], err) != 0)
            return CS_ERR_INVALID;
        if (strncmp(key, "scale.", 6) != 0)
            continue;
        /* the file holds nine significant digits; the scaled value is set exactly */
        cs_params_get(params, key + 6, &v);
        snprintf(buf, sizeof(buf), "%.9g", v);
        snprintf(buf, sizeof(buf), "%.17g", strtod(buf, NULL) * strtod(vals[i], NULL));
        if (cs_params_set(params, key + 6, buf, err) != 0)
            return CS_ERR_INVALID;
    }
    return 0;
}

int cs_sweeprun_platform(const struct cs_sweep *sw, const char *const *vals,
                         struct cs_platform_spec *spec, struct cs_params *params,
                         struct cs_error *err)
{
    const char *name = cs_sweep_value(sw, vals, "platform.family");
    const char *between = cs_sweep_value(sw, vals, "platform.between");
    enum cs_platform_family fam = name ? cs_platform_family_parse(name) : 0;
    int rc;

    if (fam == 0)
        return cs_error_fail(err, CS_ERR_INVALID, sw->path, 0, "unknown platform family '%s'",
                             name ? name : "");
    cs_platform_spec_init(spec, fam);
    cs_params_init(params);
    spec->gpu = cs_platform_family_gpu(name);
    if (between != NULL && fam != CS_FAM_HIER)
        return cs_error_fail(err, CS_ERR_INVALID, sw->path, 0,
                             "platform.between does not apply to %s (a100-hier only)", name);
    if (between != NULL)
        spec->between = cs_link_class_parse(between);
    if ((rc = family_counts(sw, vals, spec, err)) != 0)
        return rc;
    if (cs_platform_spec_params(spec, params, NULL) != 0)
        return cs_error_fail(err, CS_ERR_INVALID, sw->path, 0, "platform parameters");
    return family_params(sw, vals, params, err);
}

/* The header, with the npoints column of a shard when shard is set. */
static void header(const struct cs_sweep *sw, int shard, FILE *fp)
{
    fputs(shard ? "point," CS_SWEEPRUN_NPOINTS : "point", fp);
    for (int i = 0; i < sw->nkeys; i++) {
        fputc(',', fp);
        cs_table_write_field(fp, sw->keys[i]);
    }
    fputs("," CS_REPORT_CSV_HEADER "\n", fp);
}

void cs_sweeprun_header(const struct cs_sweep *sw, FILE *fp)
{
    header(sw, 0, fp);
}

/* The input of a point's prediction: the schedule file or generator spec, the platform file
 * (written to tmp_platform from the family keys when the sweep names none). */
static int point_input(const struct cs_sweep *sw, const char *const *vals, const char *tmp_platform,
                       struct cs_predict_input *in, char *sched, char *spec, char *plat,
                       struct cs_error *err)
{
    const char *sv = cs_sweep_value(sw, vals, "schedule");
    const char *pv = cs_sweep_value(sw, vals, "platform");
    struct cs_platform_spec ps;
    struct cs_params params;
    int rc;

    memset(in, 0, sizeof(*in));
    if (sv != NULL ? cs_sweep_path(sw, sv, sched, PATH_LEN)
                   : cs_sweeprun_gen_spec(sw->keys, vals, sw->nkeys, spec, PATH_LEN))
        return cs_error_fail(err, CS_ERR_USAGE, sw->path, 0, "%s too long",
                             sv ? "schedule path" : "generator spec");
    in->sched_path = sv ? sched : NULL;
    in->gen_spec = sv ? NULL : spec;
    in->plat_path = plat;
    if (pv != NULL)
        return cs_sweep_path(sw, pv, plat, PATH_LEN) == 0
                   ? 0
                   : cs_error_fail(err, CS_ERR_USAGE, sw->path, 0, "platform path too long");
    snprintf(plat, PATH_LEN, "%s", tmp_platform);
    if ((rc = cs_sweeprun_platform(sw, vals, &ps, &params, err)) != 0)
        return rc;
    return cs_platform_write(&ps, &params, plat, err);
}

/* Predict one size item of the sweep and write its rows, prefixed by the point's columns (and
 * the point count of a shard). */
static int predict_item(const struct cs_sweep *sw, long k, int shard, const char *const *vals,
                        const struct cs_sweep_size *z, const struct cs_sched *sched,
                        const struct cs_platform *plat, const struct cs_predict_opts *opts,
                        const char *dtype, FILE *fp, int *nrows, struct cs_error *err)
{
    struct cs_predict_row *rows = NULL;
    struct cs_predict_opts o = *opts;
    long long *sizes = NULL, *nominal = NULL;
    int n = 0, rc;

    rc = cs_predict_size_list(sched, opts->type_bytes, z->min_bytes, z->max_bytes,
                              (long long)z->factor, &sizes, &nominal, &n, NULL);
    if (rc == 0 && (rows = calloc((size_t)n + 1, sizeof(*rows))) == NULL)
        rc = CS_ERR_NOMEM;
    o.nominal = nominal; /* the sweep's sizes, before alignment: nominal_bytes */
    if (rc == 0)
        rc = cs_predict_run(sched, plat, &o, sizes, n, rows, err);
    if (rc == 0)
        *nrows += n;
    for (int r = 0; rc == 0 && r < n; r++) {
        fprintf(fp, "%ld", k);
        if (shard)
            fprintf(fp, ",%ld", sw->npoints);
        for (int i = 0; i < sw->nkeys; i++) {
            fputc(',', fp);
            cs_table_write_field(fp, vals[i]);
        }
        fputc(',', fp);
        cs_report_csv_fields(fp, &rows[r], dtype);
        fputc('\n', fp);
    }
    for (int r = 0; rc == 0 && r < n; r++)
        cs_predict_row_cleanup(&rows[r]);
    free(rows);
    free(sizes);
    free(nominal);
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, NULL, 0, "out of memory");
    return rc;
}

/* cs_sweeprun_point, or cs_sweeprun_shard when shard is set. */
static int run_point(const struct cs_sweep *sw, long k, int shard, const char *tmp_platform,
                     FILE *fp, struct cs_error *err)
{
    const char *vals[CS_SWEEP_MAX_KEYS], *dtype, *proto;
    char sched_path[PATH_LEN], spec[PATH_LEN], plat_path[PATH_LEN];
    struct cs_predict_input in;
    struct cs_predict_opts opts = {0};
    struct cs_sched *sched = NULL;
    struct cs_platform *plat = NULL;
    int rc, nrows = 0;

    if (cs_sweep_point(sw, k, vals) != 0)
        return cs_error_fail(err, CS_ERR_USAGE, sw->path, 0, "no point %ld", k);
    dtype = cs_sweep_value(sw, vals, "dtype");
    proto = cs_sweep_value(sw, vals, "protocol");
    dtype = dtype ? dtype : "float";
    opts.proto = proto ? cs_proto_parse(proto) : 0;
    opts.type_bytes = cs_dtype_bytes(dtype);
    rc = point_input(sw, vals, tmp_platform, &in, sched_path, spec, plat_path, err);
    if (rc == 0)
        rc = cs_predict_load(&in, &sched, &plat, err);
    if (rc == 0)
        header(sw, shard, fp);
    for (int z = 0; rc == 0 && z < sw->nsizes; z++)
        rc = predict_item(sw, k, shard, vals, &sw->sizes[z], sched, plat, &opts, dtype, fp, &nrows,
                          err);
    if (rc == 0 && nrows == 0) {
        char note[256];

        /* as predict refuses -b/-e: no size of sizes= is a whole element of the schedule */
        cs_predict_sizes_note(sched, opts.type_bytes, 0, note, sizeof(note));
        rc = cs_error_fail(err, CS_ERR_USAGE, sw->path, 0,
                           "every size of sizes= aligns down to 0: %s", note);
    }
    cs_platform_free(plat);
    cs_sched_free(sched);
    return rc;
}

int cs_sweeprun_point(const struct cs_sweep *sw, long k, const char *tmp_platform, FILE *fp,
                      struct cs_error *err)
{
    return run_point(sw, k, 0, tmp_platform, fp, err);
}

int cs_sweeprun_shard(const struct cs_sweep *sw, long k, const char *tmp_platform, FILE *fp,
                      struct cs_error *err)
{
    return run_point(sw, k, 1, tmp_platform, fp, err);
}
