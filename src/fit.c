/* fit.c: weighted least-squares alpha-beta fits, segmented by BIC (model in fit.h). */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cs_fit_opts_init(struct cs_fit_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->max_segments = CS_FIT_MAX_SEG;
    o->min_sizes = 3;
}

double cs_fit_t975(int dof)
{
    /* Student's t, 0.975 quantile, 1..30 degrees of freedom (standard tables). */
    static const double tab[31] = {
        NAN,    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
        2.2010, 2.1788,  2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796,
        2.0739, 2.0687,  2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    };
    double z = 1.959963985, v = dof, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;

    if (dof < 1)
        return NAN;
    if (dof <= 30)
        return tab[dof];
    /* Cornish-Fisher expansion of t in powers of 1/v (Abramowitz & Stegun 26.7.5). */
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

static double weight(const double *t, const double *rw, int i)
{
    return (rw ? rw[i] : 1.0) / (t[i] * t[i]);
}

/* Solve the (possibly constrained) WLS problem over x[0..n-1]; rw: optional robustness weights. */
static void solve(const double *x, const double *t, int n, const double *rw, struct cs_fit_line *L)
{
    double s0 = 0, sx = 0, st = 0, xm, tm, sxx = 0, sxt = 0, a, b, ssr = 0, s2, tq;
    int p = 2;

    for (int i = 0; i < n; i++) {
        double w = weight(t, rw, i);

        s0 += w;
        sx += w * x[i];
        st += w * t[i];
    }
    xm = sx / s0;
    tm = st / s0;
    for (int i = 0; i < n; i++) {
        double w = weight(t, rw, i), dx = x[i] - xm;

        sxx += w * dx * dx;
        sxt += w * dx * (t[i] - tm);
    }
    b = sxx > 0 ? sxt / sxx : 0;
    a = tm - b * xm;
    L->alpha_clamped = L->slope_clamped = 0;
    if (a < 0) {
        /* Through the origin: minimise sum w (t - b x)^2. */
        double sxx0 = 0, sxt0 = 0;

        for (int i = 0; i < n; i++) {
            double w = weight(t, rw, i);

            sxx0 += w * x[i] * x[i];
            sxt0 += w * x[i] * t[i];
        }
        a = 0;
        b = sxt0 / sxx0;
        L->alpha_clamped = 1;
        p = 1;
        sxx = sxx0; /* for the slope variance below (no intercept) */
        xm = 0;
    }
    if (b < 0) {
        b = 0;
        a = tm;
        L->slope_clamped = 1;
        L->alpha_clamped = 0;
        p = 1;
    }
    for (int i = 0; i < n; i++) {
        double r = (t[i] - a - b * x[i]) / t[i];

        ssr += (rw ? rw[i] : 1.0) * r * r;
    }
    L->alpha_s = a;
    L->slope_s_per_B = b;
    L->beta_Bps = b > 0 ? 1.0 / b : INFINITY;
    L->ssr = ssr;
    L->n = n;
    L->dof = n - p;
    s2 = L->dof > 0 ? ssr / L->dof : NAN;
    tq = L->dof > 0 ? cs_fit_t975(L->dof) : NAN;
    if (L->slope_clamped) {
        L->slope_ci = 0;
        L->alpha_ci_s = tq * sqrt(s2 / s0);
    } else if (L->alpha_clamped) {
        L->alpha_ci_s = 0;
        L->slope_ci = tq * sqrt(s2 / sxx);
    } else {
        L->slope_ci = tq * sqrt(s2 / sxx);
        L->alpha_ci_s = tq * sqrt(s2 * (1.0 / s0 + xm * xm / sxx));
    }
    L->beta_lo_Bps = b + L->slope_ci > 0 ? 1.0 / (b + L->slope_ci) : INFINITY;
    L->beta_hi_Bps = b - L->slope_ci > 0 ? 1.0 / (b - L->slope_ci) : INFINITY;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double cs_fit_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The relative residual of point i against line L. */
static double rel_resid(const struct cs_fit_line *L, const double *x, const double *t, int i)
{
    return (t[i] - L->alpha_s - L->slope_s_per_B * x[i]) / t[i];
}

/* Fit over points x[0..n-1], t[0..n-1] (already checked, sorted by size for the size count). */
static int fit_pts(const double *x, const double *t, int n, int robust, struct cs_fit_line *L)
{
    double *rw = NULL, *r = NULL;

    memset(L, 0, sizeof(*L));
    solve(x, t, n, NULL, L);
    if (robust && L->dof > 0) {
        /* Huber IRLS on relative residuals. */
        rw = malloc((size_t)n * sizeof(*rw));
        r = malloc((size_t)n * sizeof(*r));
        if (rw == NULL || r == NULL) {
            free(rw);
            free(r);
            return CS_ERR_NOMEM;
        }
        for (int iter = 0; iter < 50; iter++) {
            double scale, a0 = L->alpha_s, b0 = L->slope_s_per_B;

            for (int i = 0; i < n; i++)
                r[i] = fabs(rel_resid(L, x, t, i));
            scale = 1.4826 * cs_fit_median(r, n);
            if (!(scale > 1e-12))
                break;
            for (int i = 0; i < n; i++) {
                double u = fabs(rel_resid(L, x, t, i)) / scale;

                rw[i] = u <= 1.345 ? 1.0 : 1.345 / u;
            }
            solve(x, t, n, rw, L);
            if (fabs(L->alpha_s - a0) <= 1e-12 * (fabs(a0) + 1e-30) + 1e-18 &&
                fabs(L->slope_s_per_B - b0) <= 1e-12 * fabs(b0) + 1e-30)
                break;
        }
    }
    L->x_min = INFINITY;
    L->x_max = -INFINITY;
    L->max_rel = 0;
    L->ssr = 0;
    for (int i = 0; i < n; i++) {
        double e = rel_resid(L, x, t, i);

        L->ssr += e * e;
        if (fabs(e) > L->max_rel)
            L->max_rel = fabs(e);
        if (x[i] < L->x_min)
            L->x_min = x[i];
        if (x[i] > L->x_max)
            L->x_max = x[i];
    }
    L->rms_rel = sqrt(L->ssr / n);
    L->nsizes = 0;
    for (int k = 0; k < n; k++)
        L->nsizes += k == 0 || x[k] != x[k - 1];
    free(rw);
    free(r);
    return 0;
}

/* A point, for sorting by size. */
struct pt {
    double x, t;
};

static int cmp_pt(const void *a, const void *b)
{
    const struct pt *p = a, *q = b;

    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->t > q->t) - (p->t < q->t);
}

/* Sorted copies of the points: *xs and *ts (one allocation, free *xs). */
static int sorted_copy(const double *x, const double *t, int n, double **xs, double **ts)
{
    struct pt *p = malloc((size_t)n * sizeof(*p));
    double *buf = malloc(2 * (size_t)n * sizeof(*buf));

    if (p == NULL || buf == NULL) {
        free(p);
        free(buf);
        return CS_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        p[i].x = x[i];
        p[i].t = t[i];
    }
    qsort(p, (size_t)n, sizeof(*p), cmp_pt);
    for (int i = 0; i < n; i++) {
        buf[i] = p[i].x;
        buf[n + i] = p[i].t;
    }
    free(p);
    *xs = buf;
    *ts = buf + n;
    return 0;
}

/* A fit's input checked (at least 3 points, sizes finite and >= 0, times finite and > 0) and
 * sorted by size as sorted_copy does. */
static int sorted_input(const double *x, const double *t, int n, double **xs, double **ts,
                        struct cs_error *err)
{
    if (n < 3) {
        cs_error_set(err, NULL, 0, "%d points: an alpha-beta fit needs at least 3", n);
        return CS_ERR_INVALID;
    }
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || x[i] < 0) {
            cs_error_set(err, NULL, 0, "point %d: size %g is not a finite non-negative number", i,
                         x[i]);
            return CS_ERR_INVALID;
        }
        if (!isfinite(t[i]) || t[i] <= 0) {
            cs_error_set(err, NULL, 0, "point %d: time %g is not a finite positive number", i,
                         t[i]);
            return CS_ERR_INVALID;
        }
    }
    return sorted_copy(x, t, n, xs, ts);
}

int cs_fit_line(const double *x, const double *t, int n, int robust, struct cs_fit_line *out,
                struct cs_error *err)
{
    struct cs_fit_line L;
    double *xs, *ts;
    int rc;

    if ((rc = sorted_input(x, t, n, &xs, &ts, err)) != 0)
        return rc;
    if (xs[0] == xs[n - 1]) {
        cs_error_set(err, NULL, 0, "all %d points have the same size: need 2 distinct sizes", n);
        rc = CS_ERR_INVALID;
    } else {
        rc = fit_pts(xs, ts, n, robust, &L);
    }
    free(xs);
    if (rc == 0)
        *out = L;
    return rc;
}

static double bic_of(double ssr, int n, int m)
{
    double v = ssr / n;

    /* Relative residuals below 1e-12 are rounding: floor there so exact data still pick the
     * simplest model. */
    if (v < 1e-24)
        v = 1e-24;
    return n * log(v) + (3.0 * m - 1) * log((double)n);
}

/* The search of a segmented fit over G distinct sizes (groups of points gstart[g] ..
 * gstart[g + 1] - 1 of the sorted points xs, ts). */
struct search {
    const double *xs, *ts;
    int *gstart, G, maxm, robust;
    double *cost; /* cost[i*(G+1)+j]: weighted SSR of one line over groups i..j-1 */
    double *dp;   /* dp[m*(G+1)+j]: least SSR of m segments over groups 0..j-1 */
    int *from;    /* from[m*(G+1)+j]: where the last of those m segments starts */
};

/* Group the sorted sizes: 2 .. CS_FIT_MAX_SIZES distinct ones, else CS_ERR_INVALID. */
static int group_sizes(struct search *w, int n, struct cs_error *err)
{
    w->G = 0;
    for (int k = 0; k < n; k++)
        if (k == 0 || w->xs[k] != w->xs[k - 1])
            w->gstart[w->G++] = k;
    w->gstart[w->G] = n;
    if (w->G < 2) {
        cs_error_set(err, NULL, 0, "all %d points have the same size: need 2 distinct sizes", n);
        return CS_ERR_INVALID;
    }
    if (w->G > CS_FIT_MAX_SIZES) {
        cs_error_set(err, NULL, 0, "%d distinct sizes: a segmented fit takes at most %d", w->G,
                     CS_FIT_MAX_SIZES);
        return CS_ERR_INVALID;
    }
    return 0;
}

/* The cost of every segment: INFINITY when it has fewer than ms sizes (a single segment over
 * everything needs only 2, so that small sets still fit) or fewer than 3 points. */
static int fill_costs(struct search *w, int ms)
{
    int G = w->G, rc;

    for (int i = 0; i <= G; i++)
        for (int j = 0; j <= G; j++) {
            struct cs_fit_line L;
            int np = j > i ? w->gstart[j] - w->gstart[i] : 0;
            int need = (i == 0 && j == G) ? 2 : ms;

            w->cost[i * (G + 1) + j] = INFINITY;
            if (j - i < need || np < 3)
                continue;
            rc = fit_pts(w->xs + w->gstart[i], w->ts + w->gstart[i], np, w->robust, &L);
            if (rc != 0)
                return rc;
            w->cost[i * (G + 1) + j] = L.ssr;
        }
    return 0;
}

/* The best split into m = 1..maxm segments by dynamic programming over the costs. */
static void best_splits(struct search *w)
{
    int G = w->G;

    for (int m = 0; m <= w->maxm; m++)
        for (int j = 0; j <= G; j++) {
            w->dp[m * (G + 1) + j] = INFINITY;
            w->from[m * (G + 1) + j] = -1;
        }
    w->dp[0] = 0;
    for (int m = 1; m <= w->maxm; m++)
        for (int j = 1; j <= G; j++)
            for (int i = 0; i < j; i++) {
                double c = w->dp[(m - 1) * (G + 1) + i] + w->cost[i * (G + 1) + j];

                if (c < w->dp[m * (G + 1) + j]) {
                    w->dp[m * (G + 1) + j] = c;
                    w->from[m * (G + 1) + j] = i;
                }
            }
}

/* Choose the number of segments in minm..maxm by BIC (0 when none is feasible) and refit the
 * chosen segments into R. */
static int choose(const struct search *w, int n, int minm, struct cs_fit_result *R)
{
    int G = w->G, best_m = 0, rc;

    memset(R, 0, sizeof(*R));
    R->n = n;
    R->bic = INFINITY;
    for (int m = 0; m <= CS_FIT_MAX_SEG; m++)
        R->bic_by_m[m] = NAN;
    for (int m = minm; m <= w->maxm; m++) {
        double s = w->dp[m * (G + 1) + G];

        if (!isfinite(s))
            continue;
        R->bic_by_m[m] = bic_of(s, n, m);
        if (R->bic_by_m[m] < R->bic) {
            R->bic = R->bic_by_m[m];
            best_m = m;
        }
    }
    R->nseg = best_m;
    for (int m = best_m, j = G; m >= 1; m--) {
        int i = w->from[m * (G + 1) + j];

        rc = fit_pts(w->xs + w->gstart[i], w->ts + w->gstart[i], w->gstart[j] - w->gstart[i],
                     w->robust, &R->seg[m - 1]);
        if (rc != 0)
            return rc;
        j = i;
    }
    return 0;
}

int cs_fit_segmented(const double *x, const double *t, int n, const struct cs_fit_opts *o,
                     struct cs_fit_result *out, struct cs_error *err)
{
    struct cs_fit_opts d;
    struct search w = {0};
    double *xs = NULL, *ts = NULL;
    int minm = 1, ms, rc;
    struct cs_fit_result R;

    if (o == NULL) {
        cs_fit_opts_init(&d);
        o = &d;
    }
    w.maxm = o->max_segments ? o->max_segments : CS_FIT_MAX_SEG;
    if (o->nsegments > 0)
        minm = w.maxm = o->nsegments;
    ms = o->min_sizes ? o->min_sizes : 3;
    w.robust = o->robust;
    if (w.maxm < 1 || w.maxm > CS_FIT_MAX_SEG || o->nsegments < 0 || ms < 2) {
        cs_error_set(err, NULL, 0, "bad segmented-fit options (segments 1..%d, min sizes >= 2)",
                     CS_FIT_MAX_SEG);
        return CS_ERR_INVALID;
    }
    if ((rc = sorted_input(x, t, n, &xs, &ts, err)) != 0)
        return rc;
    w.xs = xs;
    w.ts = ts;
    if ((w.gstart = malloc((size_t)(n + 1) * sizeof(*w.gstart))) == NULL)
        rc = CS_ERR_NOMEM;
    if (rc == 0 && (rc = group_sizes(&w, n, err)) == 0) {
        size_t cells = (size_t)(w.maxm + 1) * (size_t)(w.G + 1);

        w.cost = malloc((size_t)(w.G + 1) * (size_t)(w.G + 1) * sizeof(*w.cost));
        w.dp = malloc(cells * sizeof(*w.dp));
        w.from = malloc(cells * sizeof(*w.from));
        rc = w.cost && w.dp && w.from ? fill_costs(&w, ms) : CS_ERR_NOMEM;
    }
    if (rc == 0) {
        best_splits(&w);
        rc = choose(&w, n, minm, &R);
    }
    if (rc == 0 && R.nseg == 0) {
        cs_error_set(err, NULL, 0, "%d points over %d distinct sizes: too few for %d segment%s", n,
                     w.G, minm, minm == 1 ? "" : "s");
        rc = CS_ERR_INVALID;
    }
    if (rc == 0)
        *out = R;
    free(xs);
    free(w.gstart);
    free(w.cost);
    free(w.dp);
    free(w.from);
    return rc;
}

/* Index of the segment used for size x: between two segments, the nearer one on a log scale. */
static int seg_of(const struct cs_fit_result *r, double x)
{
    for (int k = 0; k < r->nseg; k++) {
        if (x <= r->seg[k].x_max)
            return k;
        if (k + 1 < r->nseg && x < r->seg[k + 1].x_min)
            return x * x < r->seg[k].x_max * r->seg[k + 1].x_min ? k : k + 1;
    }
    return r->nseg - 1;
}

double cs_fit_eval(const struct cs_fit_result *r, double x)
{
    const struct cs_fit_line *L = &r->seg[seg_of(r, x)];

    return L->alpha_s + L->slope_s_per_B * x;
}

int cs_fit_residuals(const struct cs_fit_result *r, const double *x, const double *t, int n,
                     struct cs_fit_resid **out, int *nout)
{
    struct cs_fit_resid *res;
    double *xs, *ts;
    int G = 0;

    if (n <= 0) {
        *out = NULL;
        *nout = 0;
        return 0;
    }
    res = calloc((size_t)n, sizeof(*res));
    if (res == NULL || sorted_copy(x, t, n, &xs, &ts) != 0) {
        free(res);
        return CS_ERR_NOMEM;
    }
    for (int k = 0; k < n;) {
        int e = k;
        struct cs_fit_resid *q = &res[G++];

        while (e < n && xs[e] == xs[k])
            e++;
        q->x = xs[k];
        q->nsamples = e - k;
        q->t_meas_s = cs_fit_median(ts + k, e - k);
        q->seg = seg_of(r, q->x);
        q->t_pred_s = cs_fit_eval(r, q->x);
        q->err_rel = (q->t_pred_s - q->t_meas_s) / q->t_meas_s;
        k = e;
    }
    free(xs);
    *out = res;
    *nout = G;
    return 0;
}
