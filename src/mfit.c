/* mfit.c: regularised Levenberg-Marquardt in log space, with intervals (mfit.h says how). */
#include "mfit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

int cs_mfit_solve(double *A, double *b, double *inv, int n)
{
    /* Cholesky A = L L' in the lower triangle. */
    for (int j = 0; j < n; j++) {
        double d = A[j * n + j];

        for (int k = 0; k < j; k++)
            d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0))
            return -1;
        A[j * n + j] = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double s = A[i * n + j];

            for (int k = 0; k < j; k++)
                s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / A[j * n + j];
        }
    }
    if (b != NULL) {
        for (int i = 0; i < n; i++) { /* L y = b */
            for (int k = 0; k < i; k++)
                b[i] -= A[i * n + k] * b[k];
            b[i] /= A[i * n + i];
        }
        for (int i = n - 1; i >= 0; i--) { /* L' x = y */
            for (int k = i + 1; k < n; k++)
                b[i] -= A[k * n + i] * b[k];
            b[i] /= A[i * n + i];
        }
    }
    if (inv != NULL)
        for (int c = 0; c < n; c++) {
            double *x = inv + (size_t)c * n;

            for (int i = 0; i < n; i++) {
                x[i] = i == c;
                for (int k = 0; k < i; k++)
                    x[i] -= A[i * n + k] * x[k];
                x[i] /= A[i * n + i];
            }
            for (int i = n - 1; i >= 0; i--) {
                for (int k = i + 1; k < n; k++)
                    x[i] -= A[k * n + i] * x[k];
                x[i] /= A[i * n + i];
            }
        }
    return 0;
}

/* The fit's working state. */
struct lm {
    struct cs_mfit_key *keys;
    int nk, n;
    struct cs_mfit_point *pts;
    cs_mfit_model_fn fn;
    void *ctx;
    const struct cs_mfit_opts *o;
    int *free_k; /* indices of the keys that move */
    int nf;      /* their count */
    char *skip;  /* points missing at the start: left out of every cost */
    double *u;   /* ln theta, every key */
    double *r;   /* data residuals at u */
    double *J;   /* n x nf */
    double *tmp; /* scratch residuals */
    double *theta;
    double noise; /* nu */
    int evals;
};

/* The model at u into res (n residuals; NAN where missing). */
static int eval(struct lm *L, const double *u, double *res, struct cs_error *err)
{
    int rc;

    for (int k = 0; k < L->nk; k++)
        L->theta[k] = exp(u[k]);
    for (int i = 0; i < L->n; i++)
        L->pts[i].pred = NAN;
    if ((rc = L->fn(L->ctx, L->theta, L->pts, L->n, err)) != 0)
        return rc;
    L->evals++;
    for (int i = 0; i < L->n; i++) {
        const struct cs_mfit_point *p = &L->pts[i];

        res[i] =
            p->pred > 0 && isfinite(p->pred) ? p->weight * log(p->pred / p->meas) / L->noise : NAN;
    }
    return 0;
}

/* The cost of residuals res at u; INFINITY when a point not skipped has no prediction. */
static double cost_of(const struct lm *L, const double *u, const double *res)
{
    double s = 0;

    for (int i = 0; i < L->n; i++) {
        if (L->skip[i])
            continue;
        if (!isfinite(res[i]))
            return INFINITY;
        s += res[i] * res[i];
    }
    for (int k = 0; k < L->nk; k++)
        if (L->keys[k].width > 0) {
            double z = (u[k] - log(L->keys[k].prior)) / L->keys[k].width;

            s += z * z;
        }
    return s;
}

/* The Jacobian of the data residuals at L->u (residuals L->r), by forward differences (backward
 * at the top of a key's range); the columns predicted together when the options give a batch. */
static int jacobian(struct lm *L, struct cs_error *err)
{
    int nf = L->nf, nk = L->nk, n = L->n, rc = 0;
    double *u2 = malloc((size_t)(nk ? nk : 1) * (nf ? nf : 1) * sizeof(*u2));
    double *h = malloc((size_t)(nf ? nf : 1) * sizeof(*h));
    double *pred = L->o->batch ? malloc((size_t)n * (nf ? nf : 1) * sizeof(*pred)) : NULL;

    if (u2 == NULL || h == NULL || (L->o->batch && pred == NULL)) {
        free(u2);
        free(h);
        free(pred);
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (int j = 0; j < nf; j++) {
        int k = L->free_k[j];
        double *u = u2 + (size_t)j * nk;

        memcpy(u, L->u, (size_t)nk * sizeof(*u));
        h[j] = u[k] + CS_MFIT_DIFF > log(L->keys[k].hi) ? -CS_MFIT_DIFF : CS_MFIT_DIFF;
        u[k] += h[j];
        for (int i = 0; i < nk; i++)
            u[i] = exp(u[i]); /* the batch takes values */
    }
    if (L->o->batch) {
        rc = L->o->batch(L->ctx, u2, nf, nk, pred, n, err);
        L->evals += nf;
    }
    for (int j = 0; j < nf && rc == 0; j++) {
        if (L->o->batch) {
            for (int i = 0; i < n; i++) {
                double q = pred[(size_t)j * n + i];

                L->tmp[i] = q > 0 && isfinite(q)
                                ? L->pts[i].weight * log(q / L->pts[i].meas) / L->noise
                                : NAN;
            }
        } else {
            double *u = u2 + (size_t)j * nk;

            for (int i = 0; i < nk; i++)
                u[i] = log(u[i]);
            if ((rc = eval(L, u, L->tmp, err)) != 0)
                break;
        }
        for (int i = 0; i < n; i++) {
            double d = (L->tmp[i] - L->r[i]) / h[j];

            L->J[(size_t)i * nf + j] = L->skip[i] || !isfinite(d) ? 0 : d;
        }
    }
    free(u2);
    free(h);
    free(pred);
    return rc;
}

/* A = J'J + P over the free keys, g = J'r + P (u - ln prior). */
static void normal_eq(const struct lm *L, double *A, double *g)
{
    int nf = L->nf;

    memset(A, 0, (size_t)nf * nf * sizeof(*A));
    memset(g, 0, (size_t)nf * sizeof(*g));
    for (int i = 0; i < L->n; i++) {
        const double *Ji = L->J + (size_t)i * nf;

        if (L->skip[i] || !isfinite(L->r[i]))
            continue;
        for (int a = 0; a < nf; a++) {
            g[a] += Ji[a] * L->r[i];
            for (int b = 0; b < nf; b++)
                A[a * nf + b] += Ji[a] * Ji[b];
        }
    }
    for (int a = 0; a < nf; a++) {
        const struct cs_mfit_key *K = &L->keys[L->free_k[a]];
        double w2 = 1 / (K->width * K->width);

        A[a * nf + a] += w2;
        g[a] += w2 * (L->u[L->free_k[a]] - log(K->prior));
    }
}

static int check_input(const struct cs_mfit_key *keys, int nk, const struct cs_mfit_point *pts,
                       int n, struct cs_error *err)
{
    if (nk < 0 || nk > CS_MFIT_MAX_KEYS || n < 1)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "model fit: %d keys (at most %d) and %d points (at least 1)", nk,
                             CS_MFIT_MAX_KEYS, n);
    for (int k = 0; k < nk; k++) {
        const struct cs_mfit_key *K = &keys[k];

        if (!(K->lo > 0 && K->lo <= K->prior && K->prior <= K->hi && isfinite(K->hi)) ||
            !(K->width >= 0 && isfinite(K->width)))
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "model fit: %s: prior %g, range %g to %g, width %g: need "
                                 "0 < min <= prior <= max and a width >= 0",
                                 K->key, K->prior, K->lo, K->hi, K->width);
    }
    for (int i = 0; i < n; i++)
        if (!(pts[i].meas > 0 && isfinite(pts[i].meas) && pts[i].weight > 0 &&
              isfinite(pts[i].weight)))
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "model fit: point %d: measured %g, weight %g: both must be "
                                 "positive",
                                 i, pts[i].meas, pts[i].weight);
    return 0;
}

/* Levenberg-Marquardt from L->u (residuals L->r, cost *cost) until the cost stops falling;
 * j_fresh: L->J is already the Jacobian at L->u. */
static int minimise(struct lm *L, double *cost, int j_fresh, struct cs_mfit_result *out,
                    struct cs_error *err)
{
    int nf = L->nf, rc = 0, max_iter = L->o->max_iter > 0 ? L->o->max_iter : 30;
    double ftol = L->o->ftol > 0 ? L->o->ftol : 1e-3, lambda = 1e-3;
    double *A = malloc((size_t)(nf ? nf * nf : 1) * sizeof(*A));
    double *M = malloc((size_t)(nf ? nf * nf : 1) * sizeof(*M));
    double *g = malloc((size_t)(nf ? nf : 1) * sizeof(*g));
    double *d = malloc((size_t)(nf ? nf : 1) * sizeof(*d));
    double *u2 = malloc((size_t)(L->nk ? L->nk : 1) * sizeof(*u2));
    double *r2 = malloc((size_t)L->n * sizeof(*r2));

    if (A == NULL || M == NULL || g == NULL || d == NULL || u2 == NULL || r2 == NULL)
        rc = CS_ERR_NOMEM;
    out->converged = L->nf == 0;
    for (int it = 0; rc == 0 && nf > 0 && it < max_iter && !out->converged; it++) {
        int accepted = 0;

        if (!(it == 0 && j_fresh) && (rc = jacobian(L, err)) != 0)
            break;
        normal_eq(L, A, g);
        for (int tries = 0; tries < 12 && !accepted; tries++) {
            double c2;

            memcpy(M, A, (size_t)nf * nf * sizeof(*M));
            for (int a = 0; a < nf; a++) {
                M[a * nf + a] += lambda * (A[a * nf + a] + 1e-9);
                d[a] = -g[a];
            }
            if (cs_mfit_solve(M, d, NULL, nf) != 0) {
                lambda *= 10;
                continue;
            }
            memcpy(u2, L->u, (size_t)L->nk * sizeof(*u2));
            for (int a = 0; a < nf; a++) {
                int k = L->free_k[a];
                double step = fmax(-1.0, fmin(1.0, d[a])); /* a factor e at most */

                u2[k] = fmax(log(L->keys[k].lo), fmin(log(L->keys[k].hi), u2[k] + step));
            }
            if ((rc = eval(L, u2, r2, err)) != 0)
                break;
            c2 = cost_of(L, u2, r2);
            if (c2 < *cost) {
                double gain = (*cost - c2) / fmax(*cost, 1e-300);

                memcpy(L->u, u2, (size_t)L->nk * sizeof(*u2));
                memcpy(L->r, r2, (size_t)L->n * sizeof(*r2));
                *cost = c2;
                lambda = fmax(lambda / 3, 1e-7);
                accepted = 1;
                if (gain < ftol)
                    out->converged = 1;
            } else {
                lambda *= 4;
            }
            if (L->o->progress)
                L->o->progress(L->o->progress_ctx, out->iters + 1, *cost, lambda, L->evals);
        }
        out->iters++;
        if (rc == 0 && !accepted)
            out->converged = 1; /* no step lowers the cost: a minimum at this resolution */
    }
    free(A);
    free(M);
    free(g);
    free(d);
    free(u2);
    free(r2);
    return rc == CS_ERR_NOMEM ? cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory") : rc;
}

/* Fix the keys whose column of the Jacobian at the start moves no point by more than `min` per
 * step (insensitive), and keep the Jacobian of the others in L->J. */
static int screen(struct lm *L, double min, struct cs_error *err)
{
    int rc = jacobian(L, err), nf = 0;

    if (rc != 0)
        return rc;
    for (int j = 0; j < L->nf; j++) {
        double m = 0;

        for (int i = 0; i < L->n; i++)
            m = fmax(m, fabs(L->J[(size_t)i * L->nf + j]) * CS_MFIT_DIFF);
        if (m <= min) {
            L->keys[L->free_k[j]].insensitive = 1;
            continue;
        }
        for (int i = 0; i < L->n; i++)
            L->J[(size_t)i * L->nf + nf] = L->J[(size_t)i * L->nf + j];
        L->free_k[nf++] = L->free_k[j];
    }
    /* the rows were laid out with L->nf columns: close the gaps row by row */
    for (int i = 1; i < L->n && nf < L->nf; i++)
        memmove(L->J + (size_t)i * nf, L->J + (size_t)i * L->nf, (size_t)nf * sizeof(*L->J));
    L->nf = nf;
    return 0;
}

/* The largest |relative error| over the points not skipped. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The IRLS rounds' score of the current residuals: max(median |error| / target_median,
 * max |error| / target_max) over the points with a prediction that are not aside; tmp is scratch of
 * n doubles. Sets *mx to the largest |error|. */
static double score_of(const struct lm *L, double *tmp, double *mx)
{
    double tm = L->o->target_median > 0 ? L->o->target_median : 0.05;
    double tx = L->o->target_max > 0 ? L->o->target_max : 0.15, med;
    int m = 0;

    *mx = 0;
    for (int i = 0; i < L->n; i++)
        if (!L->skip[i] && isfinite(L->r[i]) && !L->pts[i].aside) {
            tmp[m] = fabs(expm1(L->r[i] * L->noise / L->pts[i].weight));
            *mx = fmax(*mx, tmp[m++]);
        }
    if (m == 0)
        return 0;
    qsort(tmp, (size_t)m, sizeof(*tmp), cmp_double);
    med = m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
    return fmax(med / tm, *mx / tx);
}

/* Intervals, information and pairs from the Jacobian at the final u. */
static int verdicts(struct lm *L, struct cs_mfit_result *out, struct cs_error *err)
{
    int nf = L->nf, np = 0, rc;
    double ss = 0, s2, t;
    double *A = malloc((size_t)(nf ? nf * nf : 1) * sizeof(*A));
    double *C = malloc((size_t)(nf ? nf * nf : 1) * sizeof(*C));
    double *g = malloc((size_t)(nf ? nf : 1) * sizeof(*g));

    if (A == NULL || C == NULL || g == NULL) {
        rc = cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    if (nf > 0 && (rc = jacobian(L, err)) != 0)
        goto done;
    for (int i = 0; i < L->n; i++)
        if (!L->skip[i] && isfinite(L->r[i])) {
            ss += L->r[i] * L->r[i];
            np++;
        }
    out->npred = np;
    out->dof = np - nf > 1 ? np - nf : 1;
    s2 = ss / out->dof;
    out->sigma = sqrt(s2) * L->noise;
    /* a perfect fit is no more certain than the measurements' noise */
    s2 = fmax(s2, 1);
    t = cs_fit_t975(out->dof);
    normal_eq(L, A, g);
    /* The posterior covariance in u: (J'J / s2 + P)^-1. */
    for (int a = 0; a < nf; a++)
        for (int b = 0; b < nf; b++) {
            const struct cs_mfit_key *K = &L->keys[L->free_k[a]];
            double prior = a == b ? 1 / (K->width * K->width) : 0;

            A[a * nf + b] = (A[a * nf + b] - prior) / s2 + prior;
        }
    for (int k = 0; k < L->nk; k++) {
        struct cs_mfit_key *K = &L->keys[k];

        K->value = K->width > 0 && !K->insensitive ? exp(L->u[k]) : K->prior;
        K->ci_lo = K->ci_hi = K->value;
        K->info_data = 0;
        K->identified = 0;
        K->at_bound = K->width > 0 &&
                      (fabs(L->u[k] - log(K->lo)) < 1e-9 || fabs(L->u[k] - log(K->hi)) < 1e-9);
    }
    for (int a = 0; a < nf; a++) {
        struct cs_mfit_key *K = &L->keys[L->free_k[a]];
        double info = 0;

        for (int i = 0; i < L->n; i++)
            info += L->J[(size_t)i * nf + a] * L->J[(size_t)i * nf + a];
        K->info_data = info / s2;
        K->identified = K->info_data > 1 / (K->width * K->width);
    }
    if (nf > 0 && cs_mfit_solve(A, NULL, C, nf) == 0) {
        for (int a = 0; a < nf; a++) {
            struct cs_mfit_key *K = &L->keys[L->free_k[a]];
            double sd = sqrt(C[a * nf + a]);

            K->ci_lo = fmax(K->lo, exp(L->u[L->free_k[a]] - t * sd));
            K->ci_hi = fmin(K->hi, exp(L->u[L->free_k[a]] + t * sd));
        }
        for (int a = 0; a < nf; a++)
            for (int b = a + 1; b < nf && out->npairs < CS_MFIT_MAX_KEYS; b++) {
                double c = C[a * nf + b] / sqrt(C[a * nf + a] * C[b * nf + b]);

                if (fabs(c) > CS_MFIT_CORR && L->keys[L->free_k[a]].identified &&
                    L->keys[L->free_k[b]].identified) {
                    out->pairs[out->npairs].a = L->free_k[a];
                    out->pairs[out->npairs].b = L->free_k[b];
                    out->pairs[out->npairs].corr = c;
                    out->npairs++;
                }
            }
    }
    rc = 0;
done:
    free(A);
    free(C);
    free(g);
    return rc;
}

int cs_mfit_run(struct cs_mfit_key *keys, int nkeys, struct cs_mfit_point *pts, int n,
                cs_mfit_model_fn fn, void *ctx, const struct cs_mfit_opts *o,
                struct cs_mfit_result *out, struct cs_error *err)
{
    struct lm L = {.keys = keys,
                   .nk = nkeys,
                   .n = n,
                   .pts = pts,
                   .fn = fn,
                   .ctx = ctx,
                   .o = o,
                   .noise = o->noise > 0 ? o->noise : CS_MFIT_NOISE};
    double cost, best_max = 0, best_score = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = check_input(keys, nkeys, pts, n, err)) != 0)
        return rc;
    L.free_k = malloc((size_t)(nkeys ? nkeys : 1) * sizeof(*L.free_k));
    L.skip = calloc((size_t)n, 1);
    L.u = malloc((size_t)(nkeys ? nkeys : 1) * sizeof(*L.u));
    L.theta = malloc((size_t)(nkeys ? nkeys : 1) * sizeof(*L.theta));
    L.r = malloc((size_t)n * sizeof(*L.r));
    L.tmp = malloc((size_t)n * sizeof(*L.tmp));
    L.J = malloc((size_t)n * (nkeys ? nkeys : 1) * sizeof(*L.J));
    if (!L.free_k || !L.skip || !L.u || !L.theta || !L.r || !L.tmp || !L.J) {
        rc = cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (int k = 0; k < nkeys; k++) {
        L.u[k] = log(keys[k].prior);
        if (keys[k].width > 0)
            L.free_k[L.nf++] = k;
    }
    if ((rc = eval(&L, L.u, L.r, err)) != 0)
        goto done;
    for (int i = 0; i < n; i++)
        L.skip[i] = !isfinite(L.r[i]);
    cost = cost_of(&L, L.u, L.r);
    if (o->screen > 0 && L.nf > 0 && (rc = screen(&L, o->screen, err)) != 0)
        goto done;
    if ((rc = minimise(&L, &cost, o->screen > 0, out, err)) != 0)
        goto done;
    /* Rounds of IRLS towards the largest errors: each round weighs a point by
     * sqrt(|error| / max_rel) where that is above 1 (a p = 3 norm, damped so that one large
     * error does not take over), from the last round's residuals; the round with the smallest
     * score (see cs_mfit_opts) is kept. Points aside keep their weight. */
    if (o->max_rel > 0) {
        double *ub = malloc((size_t)(nkeys ? nkeys : 1) * sizeof(*ub));
        double *rb = malloc((size_t)n * sizeof(*rb)), *w0 = malloc((size_t)n * sizeof(*w0));
        double ref = log1p(o->max_rel) / L.noise;

        if (ub == NULL || rb == NULL || w0 == NULL) {
            free(ub);
            free(rb);
            free(w0);
            rc = cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
            goto done;
        }
        best_score = score_of(&L, L.tmp, &best_max);
        memcpy(ub, L.u, (size_t)nkeys * sizeof(*ub));
        memcpy(rb, L.r, (size_t)n * sizeof(*rb));
        for (int i = 0; i < n; i++)
            w0[i] = pts[i].weight;
        for (int round = 0; rc == 0 && round < 4 && best_max > o->max_rel; round++) {
            double sc, mx;

            for (int i = 0; i < n; i++) {
                double w = w0[i];

                if (!L.skip[i] && isfinite(L.r[i]) && !pts[i].aside)
                    w *= sqrt(fmax(1, fabs(L.r[i] / pts[i].weight) / ref));
                L.r[i] = isfinite(L.r[i]) ? L.r[i] * w / pts[i].weight : L.r[i];
                pts[i].weight = w;
            }
            cost = cost_of(&L, L.u, L.r);
            rc = minimise(&L, &cost, 0, out, err);
            for (int i = 0; i < n; i++) { /* residuals back in the plain weights */
                L.r[i] = isfinite(L.r[i]) ? L.r[i] * w0[i] / pts[i].weight : L.r[i];
                pts[i].weight = w0[i];
            }
            sc = score_of(&L, L.tmp, &mx);
            if (rc == 0 && sc < best_score - 1e-4) {
                best_score = sc;
                best_max = mx;
                memcpy(ub, L.u, (size_t)nkeys * sizeof(*ub));
                memcpy(rb, L.r, (size_t)n * sizeof(*rb));
            }
        }
        memcpy(L.u, ub, (size_t)nkeys * sizeof(*ub));
        memcpy(L.r, rb, (size_t)n * sizeof(*rb));
        free(ub);
        free(rb);
        free(w0);
        if (rc != 0)
            goto done;
    }
    cost = cost_of(&L, L.u, L.r);
    out->cost = cost;
    /* The predictions at the final keys (the last evaluation may have been a refused step). */
    if ((rc = eval(&L, L.u, L.r, err)) == 0)
        rc = verdicts(&L, out, err);
    if (rc == 0 && (rc = eval(&L, L.u, L.r, err)) == 0)
        for (int k = 0; k < nkeys; k++)
            keys[k].value = keys[k].width > 0 && !keys[k].insensitive ? exp(L.u[k]) : keys[k].prior;
    out->evals = L.evals;
done:
    free(L.free_k);
    free(L.skip);
    free(L.u);
    free(L.theta);
    free(L.r);
    free(L.tmp);
    free(L.J);
    return rc;
}

int cs_mfit_weak(const struct cs_mfit_key *K)
{
    return K->identified && K->width > 0 && K->ci_lo > 0 && K->ci_hi > K->ci_lo &&
           log(K->ci_hi / K->ci_lo) > CS_MFIT_WEAK * 2 * 1.96 * K->width;
}
