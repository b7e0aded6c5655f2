/* fit.c: weighted least-squares alpha-beta fits, segmented by BIC (model in fit.h). */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

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

static double weight(const struct cs_fit_pt *p, const double *rw, int i)
{
    return (rw ? rw[i] : 1.0) / (p[i].t * p[i].t);
}

/* Solve the (possibly constrained) WLS problem over p[0..n-1]; rw: optional robustness weights. */
static void solve(const struct cs_fit_pt *p, int n, const double *rw, struct cs_fit_line *L)
{
    double s0 = 0, sx = 0, st = 0, xm, tm, sxx = 0, sxt = 0, a, b, ssr = 0, s2, tq;

    for (int i = 0; i < n; i++) {
        double w = weight(p, rw, i);

        s0 += w;
        sx += w * p[i].x;
        st += w * p[i].t;
    }
    xm = sx / s0;
    tm = st / s0;
    for (int i = 0; i < n; i++) {
        double w = weight(p, rw, i), dx = p[i].x - xm;

        sxx += w * dx * dx;
        sxt += w * dx * (p[i].t - tm);
    }
    b = sxx > 0 ? sxt / sxx : 0;
    a = tm - b * xm;
    L->alpha_clamped = L->slope_clamped = 0;
    if (a < 0) {
        /* Through the origin: minimise sum w (t - b x)^2; sxx, now about the origin, gives the
         * slope variance below. */
        double sxt0 = 0;

        sxx = 0;
        for (int i = 0; i < n; i++) {
            double w = weight(p, rw, i);

            sxx += w * p[i].x * p[i].x;
            sxt0 += w * p[i].x * p[i].t;
        }
        a = 0;
        b = sxt0 / sxx;
        L->alpha_clamped = 1;
        xm = 0;
    }
    if (b < 0) {
        b = 0;
        a = tm;
        L->slope_clamped = 1;
        L->alpha_clamped = 0;
    }
    for (int i = 0; i < n; i++) {
        double r = (p[i].t - a - b * p[i].x) / p[i].t;

        ssr += (rw ? rw[i] : 1.0) * r * r;
    }
    L->alpha_s = a;
    L->slope_s_per_B = b;
    L->beta_Bps = b > 0 ? 1.0 / b : INFINITY;
    L->ssr = ssr;
    L->n = n;
    L->dof = n - 2 + (L->alpha_clamped || L->slope_clamped); /* a clamped parameter is not free */
    s2 = L->dof > 0 ? ssr / L->dof : NAN;
    tq = L->dof > 0 ? cs_fit_t975(L->dof) : NAN;
    L->slope_ci = L->slope_clamped ? 0 : tq * sqrt(s2 / sxx);
    if (L->slope_clamped)
        L->alpha_ci_s = tq * sqrt(s2 / s0);
    else
        L->alpha_ci_s = L->alpha_clamped ? 0 : tq * sqrt(s2 * (1.0 / s0 + xm * xm / sxx));
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

/* The relative residual of point p against line L. */
static double rel_resid(const struct cs_fit_line *L, const struct cs_fit_pt *p)
{
    return (p->t - L->alpha_s - L->slope_s_per_B * p->x) / p->t;
}

/* Fit over points p[0..n-1] (already checked and sorted by size). */
static int fit_pts(const struct cs_fit_pt *p, int n, int robust, struct cs_fit_line *L)
{
    double *rw = NULL, *r;

    memset(L, 0, sizeof(*L));
    solve(p, n, NULL, L);
    if (robust && L->dof > 0) {
        /* Huber IRLS on relative residuals. */
        if ((rw = malloc(2 * (size_t)n * sizeof(*rw))) == NULL)
            return CS_ERR_NOMEM;
        r = rw + n;
        for (int iter = 0; iter < 50; iter++) {
            double scale, a0 = L->alpha_s, b0 = L->slope_s_per_B;

            for (int i = 0; i < n; i++)
                r[i] = fabs(rel_resid(L, &p[i]));
            scale = 1.4826 * cs_fit_median(r, n);
            if (!(scale > 1e-12))
                break;
            for (int i = 0; i < n; i++) {
                double u = fabs(rel_resid(L, &p[i])) / scale;

                rw[i] = u <= 1.345 ? 1.0 : 1.345 / u;
            }
            solve(p, n, rw, L);
            if (fabs(L->alpha_s - a0) <= 1e-12 * (fabs(a0) + 1e-30) + 1e-18 &&
                fabs(L->slope_s_per_B - b0) <= 1e-12 * fabs(b0) + 1e-30)
                break;
        }
    }
    L->x_min = p[0].x;
    L->x_max = p[n - 1].x;
    L->max_rel = L->ssr = 0;
    for (int i = 0; i < n; i++) {
        double e = rel_resid(L, &p[i]);

        L->ssr += e * e;
        L->max_rel = fmax(L->max_rel, fabs(e));
    }
    L->rms_rel = sqrt(L->ssr / n);
    free(rw);
    return 0;
}

static int cmp_pt(const void *a, const void *b)
{
    const struct cs_fit_pt *p = a, *q = b;
    int c = cs_cmp_dbl(p->x, q->x);

    return c ? c : cs_cmp_dbl(p->t, q->t);
}

/* A copy of the n >= 1 points in *out sorted by size, then time (caller frees). */
static int sorted_copy(const struct cs_fit_pt *p, int n, struct cs_fit_pt **out)
{
    if ((*out = malloc((size_t)n * sizeof(*p))) == NULL)
        return CS_ERR_NOMEM;
    memcpy(*out, p, (size_t)n * sizeof(*p));
    qsort(*out, (size_t)n, sizeof(*p), cmp_pt);
    return 0;
}

/* A fit's input checked (at least 3 points, sizes finite and >= 0, times finite and > 0) and
 * sorted as sorted_copy does. */
static int sorted_input(const struct cs_fit_pt *p, int n, struct cs_fit_pt **out,
                        struct cs_error *err)
{
    if (n < 3)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "%d points: an alpha-beta fit needs at least 3", n);
    for (int i = 0; i < n; i++) {
        if (!isfinite(p[i].x) || p[i].x < 0)
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "point %d: size %g is not a finite non-negative number", i,
                                 p[i].x);
        if (!isfinite(p[i].t) || p[i].t <= 0)
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "point %d: time %g is not a finite positive number", i, p[i].t);
    }
    return sorted_copy(p, n, out);
}

int cs_fit_line(const struct cs_fit_pt *p, int n, int robust, struct cs_fit_line *out,
                struct cs_error *err)
{
    struct cs_fit_line L;
    struct cs_fit_pt *s;
    int rc = sorted_input(p, n, &s, err);

    if (rc != 0)
        return rc;
    if (s[0].x == s[n - 1].x)
        rc = cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                           "all %d points have the same size: need 2 distinct sizes", n);
    else if ((rc = fit_pts(s, n, robust, &L)) == 0)
        *out = L;
    free(s);
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
 * gstart[g + 1] - 1 of the sorted points ps). */
struct search {
    const struct cs_fit_pt *ps;
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
        if (k == 0 || w->ps[k].x != w->ps[k - 1].x)
            w->gstart[w->G++] = k;
    w->gstart[w->G] = n;
    if (w->G < 2)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "all %d points have the same size: need 2 distinct sizes", n);
    if (w->G > CS_FIT_MAX_SIZES)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "%d distinct sizes: a segmented fit takes at most %d", w->G,
                             CS_FIT_MAX_SIZES);
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
            rc = fit_pts(w->ps + w->gstart[i], np, w->robust, &L);
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
    double best = INFINITY;

    memset(R, 0, sizeof(*R));
    for (int m = 0; m <= CS_FIT_MAX_SEG; m++)
        R->bic_by_m[m] = NAN;
    for (int m = minm; m <= w->maxm; m++) {
        double s = w->dp[m * (G + 1) + G];

        if (!isfinite(s))
            continue;
        R->bic_by_m[m] = bic_of(s, n, m);
        if (R->bic_by_m[m] < best) {
            best = R->bic_by_m[m];
            best_m = m;
        }
    }
    R->nseg = best_m;
    for (int m = best_m, j = G; m >= 1; m--) {
        int i = w->from[m * (G + 1) + j];

        rc = fit_pts(w->ps + w->gstart[i], w->gstart[j] - w->gstart[i], w->robust, &R->seg[m - 1]);
        if (rc != 0)
            return rc;
        j = i;
    }
    return 0;
}

int cs_fit_segmented(const struct cs_fit_pt *p, int n, const struct cs_fit_opts *o,
                     struct cs_fit_result *out, struct cs_error *err)
{
    static const struct cs_fit_opts defaults;
    struct search w = {0};
    struct cs_fit_pt *ps = NULL;
    int minm, ms, rc;
    struct cs_fit_result R;

    if (o == NULL)
        o = &defaults;
    minm = o->nsegments > 0 ? o->nsegments : 1;
    w.maxm = o->nsegments > 0 ? o->nsegments : CS_FIT_MAX_SEG;
    ms = o->min_sizes ? o->min_sizes : 3;
    w.robust = o->robust;
    if (w.maxm > CS_FIT_MAX_SEG || o->nsegments < 0 || ms < 2)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "bad segmented-fit options (segments 1..%d, min sizes >= 2)",
                             CS_FIT_MAX_SEG);
    if ((rc = sorted_input(p, n, &ps, err)) != 0)
        return rc;
    w.ps = ps;
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
    if (rc == 0 && R.nseg == 0)
        rc = cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                           "%d points over %d distinct sizes: too few for %d segment%s", n, w.G,
                           minm, minm == 1 ? "" : "s");
    if (rc == 0)
        *out = R;
    cs_free_each(5, ps, w.gstart, w.cost, w.dp, w.from);
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

int cs_fit_residuals(const struct cs_fit_result *r, const struct cs_fit_pt *p, int n,
                     struct cs_fit_resid **out, int *nout)
{
    struct cs_fit_resid *res;
    struct cs_fit_pt *s;
    int G = 0;

    if (n <= 0) {
        *out = NULL;
        *nout = 0;
        return 0;
    }
    res = calloc((size_t)n, sizeof(*res));
    if (res == NULL || sorted_copy(p, n, &s) != 0) {
        free(res);
        return CS_ERR_NOMEM;
    }
    for (int k = 0; k < n;) {
        int e = k, m;
        struct cs_fit_resid *q = &res[G++];

        while (e < n && s[e].x == s[k].x)
            e++;
        q->x = s[k].x;
        q->nsamples = m = e - k;
        /* The median of the times, sorted within a size. */
        q->t_meas_s = m % 2 ? s[k + m / 2].t : 0.5 * (s[k + m / 2 - 1].t + s[k + m / 2].t);
        q->t_pred_s = cs_fit_eval(r, q->x);
        q->err_rel = (q->t_pred_s - q->t_meas_s) / q->t_meas_s;
        k = e;
    }
    free(s);
    *out = res;
    *nout = G;
    return 0;
}

/* Solve the k x k system a x = b (k <= 3) by Gaussian elimination with partial pivoting; a and b
 * are overwritten. 0, or -1 when a is singular (a pivot below 1e-12 of the largest diagonal). */
static int solve_small(double a[3][3], double b[3], int k, double x[3])
{
    double big = 0;

    for (int i = 0; i < k; i++)
        big = fmax(big, fabs(a[i][i]));
    for (int c = 0; c < k; c++) {
        int piv = c;

        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c]))
                piv = r;
        if (!(fabs(a[piv][c]) > 1e-12 * big))
            return -1;
        for (int j = 0; j < k; j++) {
            double tmp = a[c][j];

            a[c][j] = a[piv][j];
            a[piv][j] = tmp;
        }
        {
            double tmp = b[c];

            b[c] = b[piv];
            b[piv] = tmp;
        }
        for (int r = c + 1; r < k; r++) {
            double f = a[r][c] / a[c][c];

            for (int j = c; j < k; j++)
                a[r][j] -= f * a[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int r = k - 1; r >= 0; r--) {
        double s = b[r];

        for (int j = r + 1; j < k; j++)
            s -= a[r][j] * x[j];
        x[r] = s / a[r][r];
    }
    return 0;
}

/* Regressor j of point q (1, ops, ops * x), scaled by scale[j]. */
static double regressor(const struct cs_fit_call_pt *q, int j, const double *scale)
{
    double v = j == 0 ? 1 : j == 1 ? q->ops : q->ops * q->x;

    return v / scale[j];
}

/* The weighted least-squares fit of the parameters in mask (bit j: regressor j free, the others
 * 0) into beta (unscaled); its weighted sum of squared relative residuals, or INFINITY when the
 * system is singular. */
static double fit_mask(const struct cs_fit_call_pt *p, int n, int mask, const double *scale,
                       double beta[3])
{
    double a[3][3] = {{0}}, b[3] = {0}, x[3] = {0}, ssr = 0;
    int idx[3], k = 0;

    for (int j = 0; j < 3; j++)
        if (mask & (1 << j))
            idx[k++] = j;
    /* Rows scaled by 1/t: the weights 1/t^2 make every target 1. */
    for (int i = 0; i < n; i++)
        for (int r = 0; r < k; r++) {
            double ur = regressor(&p[i], idx[r], scale) / p[i].t;

            b[r] += ur;
            for (int c = 0; c < k; c++)
                a[r][c] += ur * regressor(&p[i], idx[c], scale) / p[i].t;
        }
    if (solve_small(a, b, k, x) != 0)
        return INFINITY;
    beta[0] = beta[1] = beta[2] = 0;
    for (int r = 0; r < k; r++)
        beta[idx[r]] = x[r] / scale[idx[r]];
    for (int i = 0; i < n; i++) {
        double e = (p[i].t - beta[0] - beta[1] * p[i].ops - beta[2] * p[i].ops * p[i].x) / p[i].t;

        ssr += e * e;
    }
    return ssr;
}

/* The number of distinct values of field f (0 ops, 1 x) among p[0..n-1], counted up to 2. */
static int distinct2(const struct cs_fit_call_pt *p, int n, int f)
{
    for (int i = 1; i < n; i++)
        if ((f ? p[i].x != p[0].x : p[i].ops != p[0].ops))
            return 2;
    return n > 0;
}

int cs_fit_calls(const struct cs_fit_call_pt *p, int n, struct cs_fit_calls *out,
                 struct cs_error *err)
{
    double scale[3] = {1, 1, 1}, best = INFINITY, beta[3], bb[3] = {0};
    int best_mask = 0, nops = 0;
    struct cs_fit_calls F;

    if (n < 4)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "%d points: a launch + calls fit needs at least 4", n);
    for (int i = 0; i < n; i++) {
        if (!isfinite(p[i].ops) || p[i].ops < 1 || !isfinite(p[i].x) || p[i].x < 0 ||
            !isfinite(p[i].t) || p[i].t <= 0)
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "point %d: ops %g, size %g, time %g: need ops >= 1, size >= 0, "
                                 "time > 0",
                                 i, p[i].ops, p[i].x, p[i].t);
        scale[1] = fmax(scale[1], p[i].ops);
        scale[2] = fmax(scale[2], p[i].ops * p[i].x);
    }
    if (distinct2(p, n, 0) < 2 || distinct2(p, n, 1) < 2)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "%d points: a launch + calls fit needs 2 distinct call counts and 2 "
                             "distinct sizes",
                             n);
    /* Every face of the constraints: the feasible least-squares fit of least residual. */
    for (int mask = 1; mask < 8; mask++) {
        double ssr = fit_mask(p, n, mask, scale, beta);

        if (ssr < best && beta[0] >= 0 && beta[1] >= 0 && beta[2] >= 0) {
            best = ssr;
            best_mask = mask;
            memcpy(bb, beta, sizeof(bb));
        }
    }
    if (!isfinite(best))
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "%d points: no non-negative launch + calls fit", n);
    memset(&F, 0, sizeof(F));
    F.launch_s = bb[0];
    F.call_s = bb[1];
    F.slope_s_per_B = bb[2];
    F.beta_Bps = bb[2] > 0 ? 1.0 / bb[2] : INFINITY;
    F.clamped = 7 & ~best_mask;
    F.n = n;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        double e = (p[i].t - bb[0] - bb[1] * p[i].ops - bb[2] * p[i].ops * p[i].x) / p[i].t;

        for (int j = 0; j < i && !seen; j++)
            seen = p[j].ops == p[i].ops;
        nops += !seen;
        F.max_rel = fmax(F.max_rel, fabs(e));
    }
    F.rms_rel = sqrt(best / n);
    F.nops = nops;
    *out = F;
    return 0;
}
