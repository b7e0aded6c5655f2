/* predict.c: the prediction pipeline (load, sizes, plan, replay) as one library call. */
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "predict.h"
#include "xml.h"

/* Apply "KEY=VALUE" overrides to a platform's parameters. */
static int apply_sets(struct cs_platform *plat, const char *const *sets, int n,
                      struct cs_error *err)
{
    for (int k = 0; k < n; k++) {
        const char *eq = strchr(sets[k], '=');
        char key[256];

        if (eq == NULL || eq == sets[k] || (size_t)(eq - sets[k]) >= sizeof(key)) {
            cs_error_set(err, NULL, 0, "--set takes KEY=VALUE, not '%s'", sets[k]);
            return CS_ERR_USAGE;
        }
        memcpy(key, sets[k], (size_t)(eq - sets[k]));
        key[eq - sets[k]] = '\0';
        /* SimGrid reads bandwidths and latencies from the platform's <link> attributes, which
         * `collsim platform` writes from these keys: set here, they would change nothing. */
        if (strncmp(key, "cs.link_", 8) == 0 || strncmp(key, "cs.sys_", 7) == 0) {
            cs_error_set(err, NULL, 0,
                         "--set %s: link parameters are part of the platform's links; write a "
                         "platform with `collsim platform FAMILY --set %s=...` instead",
                         key, key);
            return CS_ERR_USAGE;
        }
        if (cs_params_set(&plat->params, key, eq + 1, err) != 0)
            return CS_ERR_INVALID;
    }
    return 0;
}

int cs_predict_load(const struct cs_predict_input *in, struct cs_sched **sched,
                    struct cs_platform **plat, struct cs_error *err)
{
    struct cs_sched *s = NULL;
    struct cs_platform *p = NULL;
    int rc;

    if ((in->sched_path == NULL) == (in->gen_spec == NULL) || in->plat_path == NULL) {
        cs_error_set(err, NULL, 0,
                     "a prediction needs one schedule (a file or a generator "
                     "spec) and a platform");
        return CS_ERR_USAGE;
    }
    rc = in->gen_spec ? cs_gen_from_spec(in->gen_spec, &s, err)
                      : cs_sched_read_xml(in->sched_path, &s, err);
    if (rc == 0)
        rc = cs_platform_read(in->plat_path, &p, err);
    if (rc == 0)
        rc = apply_sets(p, in->sets, in->nsets, err);
    if (rc == 0 && s->ngpus > p->ngpus) {
        cs_error_set(err, NULL, 0, "%s: the schedule needs %d GPUs but the platform has %d",
                     in->plat_path, s->ngpus, p->ngpus);
        rc = CS_ERR_INVALID;
    }
    if (rc != 0) {
        cs_platform_free(p);
        cs_sched_free(s);
        return rc;
    }
    *sched = s;
    *plat = p;
    return 0;
}

int cs_predict_sizes(const struct cs_sched *sched, int type_bytes, long long min_bytes,
                     long long max_bytes, long long factor, long long **sizes, int *n, int *rounded)
{
    long long *v = NULL;
    int cap = 0, k = 0, any = 0;

    if (min_bytes < 1 || min_bytes > max_bytes || factor < 2 || type_bytes < 1)
        return CS_ERR_USAGE;
    for (long long s = min_bytes;; s *= factor) {
        long long r = cs_plan_round_size(sched, s, type_bytes);

        any |= r != s;
        if (k == 0 || v[k - 1] != r) {
            if (k == cap) {
                long long *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 32) * sizeof(*v));

                if (nv == NULL) {
                    free(v);
                    return CS_ERR_NOMEM;
                }
                v = nv;
            }
            v[k++] = r;
        }
        if (s > max_bytes / factor)
            break;
    }
    *sizes = v;
    *n = k;
    if (rounded != NULL)
        *rounded = any;
    return 0;
}

/* Plan and replay one size into row; the plan is returned when keep is set. */
static int predict_one(const struct cs_sched *sched, const struct cs_platform *plat,
                       const struct cs_predict_opts *opts, const struct cs_replay_opts *ropts,
                       long long size, struct cs_predict_row *row, struct cs_plan **keep,
                       struct cs_error *err)
{
    enum cs_proto proto = opts->proto ? opts->proto : sched->proto;
    struct cs_plan *plan = NULL;
    int rc;

    memset(row, 0, sizeof(*row));
    row->size_bytes = size;
    row->count = size / opts->type_bytes;
    rc = cs_plan_build(sched, size, opts->type_bytes, proto, &plan, err);
    if (rc == 0)
        rc = cs_replay_run(plan, plat, ropts, &row->res, err);
    if (rc != 0) {
        cs_plan_free(plan);
        return rc;
    }
    row->niter = plan->sz.niter;
    row->max_allowed = plan->sz.max_allowed;
    if (row->res.status == CS_REPLAY_OK) {
        row->time_us = row->res.time_s * 1e6;
        row->algbw_GBps = size / row->res.time_s / 1e9;
        row->busbw_GBps = row->algbw_GBps * cs_busbw_factor(sched->coll, sched->ngpus);
    }
    if (keep != NULL)
        *keep = plan;
    else
        cs_plan_free(plan);
    return 0;
}

int cs_predict_run(const struct cs_sched *sched, const struct cs_platform *plat,
                   const struct cs_predict_opts *opts, const long long *sizes, int n,
                   struct cs_predict_row *rows, struct cs_error *err)
{
    for (int k = 0; k < n; k++) {
        struct cs_replay_opts ropts = opts->replay;
        int last = k == n - 1 && opts->timeline != NULL;
        int rc;

        /* --trace and --stats record the largest size only. */
        ropts.timeline = last ? opts->timeline : NULL;
        rc = predict_one(sched, plat, opts, &ropts, sizes[k], &rows[k],
                         last ? opts->trace_plan : NULL, err);
        if (rc != 0) {
            while (k-- > 0)
                cs_predict_row_cleanup(&rows[k]);
            return rc;
        }
        if (opts->progress != NULL)
            opts->progress(opts->progress_ctx, k + 1, n, &rows[k]);
    }
    return 0;
}

void cs_predict_row_cleanup(struct cs_predict_row *row)
{
    cs_replay_result_cleanup(&row->res);
}

const char *cs_predict_status_name(const struct cs_predict_row *row)
{
    return row->res.status == CS_REPLAY_OK ? "ok" : "deadlock";
}
