/* refit.c: cs.launch_s and cs.link_Bps fitted through the model (refit.h says how). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "plan.h"
#include "predict.h"
#include "refit.h"
#include "util.h"

void cs_refit_bands(struct cs_refit_point *pts, int n, const struct cs_fit_result *R, double nsteps,
                    double nranks, const double *lat_range, const double *bw_range)
{
    double A = R->seg[0].alpha_s, B = R->seg[R->nseg - 1].beta_Bps;

    for (int i = 0; i < n; i++) {
        double S = pts[i].size_bytes, bw_s = isfinite(B) ? S * nsteps / nranks / B : 0;

        pts[i].band = CS_REFIT_NONE;
        if (lat_range ? S >= lat_range[0] && S <= lat_range[1] : bw_s <= CS_REFIT_DOMINANT * A)
            pts[i].band = CS_REFIT_LATENCY;
        else if (bw_range ? S >= bw_range[0] && S <= bw_range[1] : A <= CS_REFIT_DOMINANT * bw_s)
            pts[i].band = CS_REFIT_BANDWIDTH;
    }
}

void cs_refit_extra_bands(struct cs_refit_point *pts, int n, const struct cs_refit_opts *o)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < o->nextra; j++)
            if (pts[i].size_bytes >= o->extra[j].lo && pts[i].size_bytes <= o->extra[j].hi)
                pts[i].band = CS_REFIT_EXTRA + j;
}

void cs_refit_first_guess(struct cs_params *p, enum cs_link_class link,
                          const struct cs_fit_result *R, int nsteps, int nranks)
{
    double later = p->gpus_per_process < nranks ? p->gpus_per_process : nranks;
    double launch = R->seg[0].alpha_s - nsteps * p->link_lat_s[link] -
                    (later > 1 ? later - 1 : 0) * p->launch_gpu_s;

    p->launch_s = launch > 0 ? launch : 0;
    if (isfinite(R->seg[R->nseg - 1].beta_Bps))
        p->link_Bps[link] = R->seg[R->nseg - 1].beta_Bps;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The median of f(point) over the points of band with a prediction; NAN when none. f: 0 gives
 * measured - predicted (s), 1 predicted / measured, 2 (predicted - measured) / measured. */
static double band_median(const struct cs_refit_point *pts, int n, int band, int f)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v)), m = NAN;
    int k = 0;

    if (v == NULL)
        return NAN;
    for (int i = 0; i < n; i++) {
        const struct cs_refit_point *q = &pts[i];

        if ((band >= 0 && q->band != band) || !isfinite(q->pred_s))
            continue;
        v[k++] = f == 0   ? q->meas_s - q->pred_s
                 : f == 1 ? q->pred_s / q->meas_s
                 : f == 2 ? (q->pred_s - q->meas_s) / q->meas_s
                          : fabs(q->pred_s - q->meas_s) / q->meas_s;
    }
    if (k > 0) {
        qsort(v, (size_t)k, sizeof(*v), cmp_double);
        m = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    }
    free(v);
    return m;
}

void cs_refit_stats(const struct cs_refit_point *pts, int n, int band, double *median_abs,
                    double *max_abs, int *npred)
{
    int k = 0;

    *max_abs = NAN;
    for (int i = 0; i < n; i++) {
        double e;

        if ((band >= 0 && pts[i].band != band) || !isfinite(pts[i].pred_s))
            continue;
        e = fabs(pts[i].pred_s - pts[i].meas_s) / pts[i].meas_s;
        *max_abs = k++ == 0 || e > *max_abs ? e : *max_abs;
    }
    *npred = k;
    *median_abs = band_median(pts, n, band, 3);
}

/* Predict the points of the two bands (copied into sub, then back). */
static int predict_bands(const struct cs_params *p, struct cs_refit_point *pts, int n,
                         struct cs_refit_point *sub, cs_refit_predict_fn fn, void *ctx,
                         struct cs_error *err)
{
    int k = 0, rc;

    for (int i = 0; i < n; i++)
        if (pts[i].band != CS_REFIT_NONE)
            sub[k++] = pts[i];
    if ((rc = fn(ctx, p, sub, k, err)) != 0)
        return rc;
    k = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].band != CS_REFIT_NONE)
            pts[i] = sub[k++];
    return 0;
}

/* The keys the bands fit, with their first guesses; CS_ERR_INVALID when no band has sizes or an
 * extra key has none, is unknown or not positive. */
static int init_keys(const struct cs_params *p, const struct cs_refit_point *pts, int n,
                     const struct cs_refit_opts *o, struct cs_refit_result *out,
                     struct cs_error *err)
{
    int nb[CS_REFIT_NBANDS] = {0};

    memset(out, 0, sizeof(*out));
    out->stuck = -1;
    for (int i = 0; i < n; i++)
        nb[pts[i].band]++;
    if (nb[CS_REFIT_LATENCY] > 0)
        out->keys[out->nkeys++] =
            (struct cs_refit_key){"cs.launch_s", p->launch_s, p->launch_s, nb[CS_REFIT_LATENCY]};
    if (nb[CS_REFIT_BANDWIDTH] > 0) {
        struct cs_refit_key *k = &out->keys[out->nkeys++];

        snprintf(k->key, sizeof(k->key), "cs.link_Bps.%s", cs_link_class_name(o->link));
        k->first = k->final = p->link_Bps[o->link];
        k->npoints = nb[CS_REFIT_BANDWIDTH];
    }
    for (int j = 0; j < o->nextra; j++) {
        struct cs_refit_key *k = &out->keys[out->nkeys++];

        snprintf(k->key, sizeof(k->key), "%s", o->extra[j].key);
        k->npoints = nb[CS_REFIT_EXTRA + j];
        if (cs_params_get(p, k->key, &k->first) != 0 || !(k->first > 0))
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "--fit %s: not a parameter with a positive value", k->key);
        if (k->npoints == 0)
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "--fit %s: no measured size from %.0f to %.0f B", k->key,
                                 o->extra[j].lo, o->extra[j].hi);
        k->final = k->first;
    }
    if (out->nkeys == 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "no measured size is dominated by the latency or the bandwidth");
    return 0;
}

/* The secant state of the extra keys, in log(value). */
struct secant {
    double lv[CS_REFIT_MAX_EXTRA], prev_lv[CS_REFIT_MAX_EXTRA], prev_e[CS_REFIT_MAX_EXTRA];
    int has_prev[CS_REFIT_MAX_EXTRA];
};

/* Move extra key j of error e by a secant step (refit.h); 1 when its band did not move. */
static int step_extra(struct secant *s, int j, double e)
{
    double d = 0.1, slope;

    if (s->has_prev[j]) {
        slope = (e - s->prev_e[j]) / (s->lv[j] - s->prev_lv[j]);
        if (!isfinite(slope) || fabs(slope) < 1e-9)
            return 1;
        d = -e / slope;
        d = fmin(fmax(d, -log(2.0)), log(2.0));
    }
    s->prev_lv[j] = s->lv[j];
    s->prev_e[j] = e;
    s->has_prev[j] = 1;
    s->lv[j] += d;
    return 0;
}

/* One step of each key from the band medians; 1 when every band is within tol. */
static int step_keys(struct cs_params *p, const struct cs_refit_point *pts, int n,
                     const struct cs_refit_opts *o, struct secant *sc, struct cs_refit_result *out)
{
    double d = band_median(pts, n, CS_REFIT_LATENCY, 0);
    double r = band_median(pts, n, CS_REFIT_BANDWIDTH, 1);
    int done = 1;

    for (int b = CS_REFIT_LATENCY; b < CS_REFIT_EXTRA + o->nextra; b++) {
        out->band_err[b] = band_median(pts, n, b, 2);
        if (isfinite(out->band_err[b]) && fabs(out->band_err[b]) > o->tol)
            done = 0;
    }
    if (done)
        return 1;
    if (isfinite(d))
        p->launch_s = p->launch_s + d > 0 ? p->launch_s + d : 0;
    if (isfinite(r) && r > 0)
        p->link_Bps[o->link] *= r;
    for (int j = 0; j < o->nextra; j++) {
        double e = out->band_err[CS_REFIT_EXTRA + j];

        if (isfinite(e) && fabs(e) > o->tol && step_extra(sc, j, e) && out->stuck < 0)
            out->stuck = j;
    }
    return 0;
}

/* Set the extra keys in p from the secant state; a value out of the key's range is brought back
 * toward the last one by halving the step (at most 30 times); CS_ERR_INVALID when it stays out. */
static int set_extra(struct cs_params *p, const struct cs_refit_opts *o, struct secant *sc,
                     struct cs_error *err)
{
    for (int j = 0; j < o->nextra; j++) {
        char v[64], why[sizeof(err->msg)];
        int tries = 0, rc;

        for (;;) {
            snprintf(v, sizeof(v), "%.9g", exp(sc->lv[j]));
            if ((rc = cs_params_set(p, o->extra[j].key, v, err)) == 0 || ++tries > 30)
                break;
            cs_error_init(err); /* brought back: not an error yet */
            sc->lv[j] = 0.5 * (sc->lv[j] + sc->prev_lv[j]);
        }
        if (rc != 0) {
            snprintf(why, sizeof(why), "%s", err->msg);
            cs_error_init(err);
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "--fit %s: the fit moved it to %s, out of its range (%.900s)",
                                 o->extra[j].key, v, why);
        }
    }
    return 0;
}

/* CS_ERR_INVALID when a band with sizes has no prediction at any of them. */
static int check_predicted(const struct cs_refit_point *pts, int n, struct cs_error *err)
{
    static const char *const name[] = {"", "latency", "bandwidth", "--fit"};

    for (int b = CS_REFIT_LATENCY; b < CS_REFIT_NBANDS; b++) {
        int has = 0, pred = 0;

        for (int i = 0; i < n; i++)
            if (pts[i].band == b) {
                has++;
                pred += isfinite(pts[i].pred_s) != 0;
            }
        if (has > 0 && pred == 0)
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "the model predicts none of the %d sizes of the %s band", has,
                                 name[b < CS_REFIT_EXTRA ? b : CS_REFIT_EXTRA]);
    }
    return 0;
}

int cs_refit_run(struct cs_params *p, struct cs_refit_point *pts, int n,
                 const struct cs_refit_opts *o, cs_refit_predict_fn fn, void *ctx,
                 struct cs_refit_result *out, struct cs_error *err)
{
    struct cs_refit_point *sub;
    struct secant sc;
    int max_iter = o->max_iter < CS_REFIT_MAX_ITER ? o->max_iter : CS_REFIT_MAX_ITER, rc;

    cs_refit_extra_bands(pts, n, o);
    if ((rc = init_keys(p, pts, n, o, out, err)) != 0)
        return rc;
    memset(&sc, 0, sizeof(sc));
    for (int j = 0; j < o->nextra; j++)
        sc.lv[j] = log(out->keys[out->nkeys - o->nextra + j].first);
    if ((sub = malloc((size_t)n * sizeof(*sub))) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    for (int b = 0; b < CS_REFIT_NBANDS; b++)
        out->band_err[b] = NAN;
    while (rc == 0 && out->iters < max_iter && !out->converged && out->stuck < 0) {
        if ((rc = predict_bands(p, pts, n, sub, fn, ctx, err)) == 0 &&
            (rc = check_predicted(pts, n, err)) == 0) {
            double launch = p->launch_s, bw = p->link_Bps[o->link];

            for (int j = 0; j < o->nextra; j++)
                out->hist[out->iters].extra[j] = exp(sc.lv[j]);
            out->converged = step_keys(p, pts, n, o, &sc, out);
            out->hist[out->iters].launch_s = launch;
            out->hist[out->iters].link_Bps = bw;
            memcpy(out->hist[out->iters].err, out->band_err, sizeof(out->band_err));
            out->iters++;
            if (!out->converged && out->stuck < 0)
                rc = set_extra(p, o, &sc, err);
        }
    }
    free(sub);
    if (rc == 0)
        rc = fn(ctx, p, pts, n, err);
    for (int k = 0; k < out->nkeys; k++)
        if (cs_params_get(p, out->keys[k].key, &out->keys[k].final) != 0)
            out->keys[k].final = NAN;
    return rc;
}

/* Predict the rounded sizes with protocol q and keep, per point, the fastest so far. */
static int model_proto(const struct cs_refit_model *m, enum cs_proto q,
                       const struct cs_sched *sched, const struct cs_platform *plat,
                       struct cs_refit_point *pts, int n, const long long *sizes, const int *at,
                       int ns, struct cs_error *err)
{
    struct cs_predict_opts o = {0};
    struct cs_predict_row *rows = calloc((size_t)ns, sizeof(*rows));
    int rc;

    if (rows == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    o.proto = q;
    o.type_bytes = m->type_bytes;
    o.keep_going = 1;
    if ((rc = cs_predict_run(sched, plat, &o, sizes, ns, rows, err)) == 0) {
        for (int i = 0; i < n; i++) {
            const struct cs_predict_row *r = &rows[at[i]];
            double t = r->time_us * 1e-6;

            if (r->refused || r->hang || r->warning || r->res.status != CS_REPLAY_OK)
                continue;
            if (!(t >= pts[i].pred_s)) {
                pts[i].pred_s = t;
                snprintf(pts[i].proto, sizeof(pts[i].proto), "%s", cs_proto_name(q));
            }
        }
        for (int k = 0; k < ns; k++)
            cs_predict_row_cleanup(&rows[k]);
    }
    free(rows);
    return rc;
}

/* The points' sizes rounded for sched, distinct and ascending, into sizes[0..*ns); at[i] is
 * point i's index there. */
static void round_sizes(const struct cs_sched *sched, int type_bytes,
                        const struct cs_refit_point *pts, int n, long long *sizes, int *at, int *ns)
{
    *ns = 0;
    for (int i = 0; i < n; i++) {
        long long r = cs_plan_round_size(sched, (long long)llround(pts[i].size_bytes), type_bytes);
        int k = 0, j;

        while (k < *ns && sizes[k] < r)
            k++;
        if (k == *ns || sizes[k] != r) {
            for (j = *ns; j > k; j--)
                sizes[j] = sizes[j - 1];
            sizes[k] = r;
            ++*ns;
            for (j = 0; j < i; j++)
                at[j] += at[j] >= k;
        }
        at[i] = k;
    }
}

/* A gen spec "nccl:..." with no size: NCCL's width changes with the size, so each size is
 * predicted on what `gen nccl` writes there (validate's gen:nccl). */
static int is_nccl_by_size(const char *gen)
{
    return gen != NULL && strncmp(gen, "nccl", 4) == 0 && (gen[4] == '\0' || gen[4] == ':') &&
           strstr(gen, "size=") == NULL && strstr(gen, "protocol=") == NULL;
}

/* The spec of what NCCL runs with protocol q at size bytes. */
static void nccl_spec(char *buf, size_t len, const char *gen, enum cs_proto q, double size)
{
    snprintf(buf, len, "%s%cprotocol=%s,size=%.0f", gen, strchr(gen, ':') ? ',' : ':',
             cs_proto_name(q), size);
}

/* Predict points pts[0..n) (ascending sizes) with protocol q on the schedule `gen` writes at the
 * first's size, its NCCL width w: the protocol's cs.tb_Bps and cs.pass_bytes scaled by threads /
 * maximum threads (validate's rule). */
static int model_nccl_run(const struct cs_refit_model *m, enum cs_proto q, const char *spec,
                          const struct cs_nccl_width *w, struct cs_refit_point *pts, int n,
                          long long *sizes, int *at, struct cs_error *err)
{
    struct cs_predict_input in = {NULL, spec, m->plat_path, NULL, 0};
    struct cs_sched *sched = NULL;
    struct cs_platform *plat = NULL;
    int ns = 0, rc = cs_predict_load(&in, &sched, &plat, err);

    if (rc == 0) {
        cs_params_narrow(&plat->params, q, w->threads, w->max_threads);
        round_sizes(sched, m->type_bytes, pts, n, sizes, at, &ns);
        rc = model_proto(m, q, sched, plat, pts, n, sizes, at, ns, err);
    }
    cs_platform_free(plat);
    cs_sched_free(sched);
    return rc;
}

/* gen nccl by size: per protocol, runs of points over which NCCL keeps its algorithm, channels
 * and threads. */
static int model_nccl(const struct cs_refit_model *m, struct cs_refit_point *pts, int n,
                      long long *sizes, int *at, struct cs_error *err)
{
    int rc = 0;

    for (int k = 0; k < m->nprotos && rc == 0; k++) {
        enum cs_proto q = m->protos[k];

        for (int j = 0, e; j < n && rc == 0; j = e) {
            struct cs_nccl_width w, wj;
            char spec[1300];

            nccl_spec(spec, sizeof(spec), m->gen_spec, q, pts[j].size_bytes);
            if ((rc = cs_gen_nccl_spec_width(spec, &w, err)) != 0)
                break;
            for (e = j + 1; e < n; e++) {
                char sj[1300];

                nccl_spec(sj, sizeof(sj), m->gen_spec, q, pts[e].size_bytes);
                if ((rc = cs_gen_nccl_spec_width(sj, &wj, err)) != 0 || wj.algo != w.algo ||
                    wj.channels != w.channels || wj.threads != w.threads)
                    break;
            }
            if (rc == 0)
                rc = model_nccl_run(m, q, spec, &w, pts + j, e - j, sizes, at, err);
        }
    }
    return rc;
}

int cs_refit_model_predict(void *ctx, const struct cs_params *p, struct cs_refit_point *pts, int n,
                           struct cs_error *err)
{
    const struct cs_refit_model *m = ctx;
    struct cs_predict_input in = {m->sched_path, m->gen_spec, m->plat_path, NULL, 0};
    struct cs_sched *sched = NULL;
    struct cs_platform *plat = NULL;
    long long *sizes = malloc((size_t)(n > 0 ? n : 1) * sizeof(*sizes));
    int *at = malloc((size_t)(n > 0 ? n : 1) * sizeof(*at)), ns = 0, rc;

    for (int i = 0; i < n; i++) {
        pts[i].pred_s = NAN;
        pts[i].proto[0] = '\0';
    }
    if (sizes == NULL || at == NULL)
        rc = cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    else if ((rc = cs_platform_write(m->spec, p, m->plat_path, err)) == 0 &&
             is_nccl_by_size(m->gen_spec))
        rc = model_nccl(m, pts, n, sizes, at, err);
    else if (rc == 0 && (rc = cs_predict_load(&in, &sched, &plat, err)) == 0) {
        round_sizes(sched, m->type_bytes, pts, n, sizes, at, &ns);
        for (int q = 0; q < m->nprotos && rc == 0; q++)
            rc = model_proto(m, m->protos[q], sched, plat, pts, n, sizes, at, ns, err);
    }
    cs_platform_free(plat);
    cs_sched_free(sched);
    free(sizes);
    free(at);
    return rc;
}
