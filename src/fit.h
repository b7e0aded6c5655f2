/* fit.h: alpha-beta fits of time against size: weighted least squares, breakpoints, intervals.
 *
 * The model of one regime is t(x) = alpha + x / beta (alpha in s, x in bytes, beta in B/s),
 * fitted by weighted least squares with weights 1/t^2, i.e. minimising the squared *relative*
 * residuals (calibration.md 3.5: variance grows with t). alpha and the slope 1/beta are
 * constrained to be non-negative: when the unconstrained fit gives a negative value, that
 * parameter is fixed at 0 and the other refitted (flagged in the result).
 *
 * Confidence intervals are 95%, two-sided, from the WLS covariance with the residual variance
 * estimated from the data (s^2 = sum w r^2 / (n - p)), using Student's t quantile with n - p
 * degrees of freedom (not the normal approximation), as for an ordinary regression. They assume
 * independent relative errors; repeated samples of one size that share a systematic offset make
 * them too narrow.
 *
 * A segmented fit splits the sorted sizes into up to CS_FIT_MAX_SEG contiguous regimes, each
 * with its own line, breakpoints at measured sizes, each segment with at least `min_sizes`
 * distinct sizes. The number of segments is chosen by BIC on the weighted residuals:
 * n ln(SSR/n) + (3m - 1) ln n (two parameters per segment plus m - 1 breakpoints).
 */
#ifndef CS_FIT_H
#define CS_FIT_H

#include "error.h"

#define CS_FIT_MAX_SEG 4
/* Most distinct sizes a segmented fit takes (the search is quadratic in them). */
#define CS_FIT_MAX_SIZES 512

/* Zeroed: the defaults (BIC over 1..CS_FIT_MAX_SEG segments, 3 sizes each, no IRLS). */
struct cs_fit_opts {
    int nsegments; /* >0: exactly this many segments, no BIC choice */
    int min_sizes; /* distinct sizes per segment, >= 2; 0 means 3 */
    int robust;    /* after WLS, Huber IRLS on relative residuals (c = 1.345, MAD scale) */
};

/* One regime's line. */
struct cs_fit_line {
    double alpha_s;       /* intercept (s), >= 0 */
    double slope_s_per_B; /* 1/beta (s/B), >= 0 */
    double beta_Bps;      /* 1/slope; INFINITY when the slope is 0 */
    double alpha_ci_s;    /* half-width of the 95% interval of alpha (0 when clamped) */
    double slope_ci;      /* half-width of the 95% interval of the slope */
    double beta_lo_Bps;   /* 95% interval of beta: 1/(slope + ci) .. 1/(slope - ci) */
    double beta_hi_Bps;   /* INFINITY when slope - ci <= 0 */
    double ssr;           /* sum of weighted squared residuals (relative residuals squared) */
    double rms_rel;       /* sqrt(ssr / n) */
    double max_rel;       /* largest |relative residual| */
    double x_min, x_max;  /* sizes covered (bytes) */
    int n;                /* points */
    int dof;              /* n - free parameters */
    int alpha_clamped;    /* unconstrained alpha was < 0: fixed at 0 */
    int slope_clamped;    /* unconstrained slope was < 0: fixed at 0 */
};

struct cs_fit_result {
    int nseg;
    struct cs_fit_line seg[CS_FIT_MAX_SEG]; /* by increasing size */
    double bic_by_m[CS_FIT_MAX_SEG + 1];    /* BIC for m segments; NAN when infeasible */
};

/* Residual of one distinct size: median measured time against the prediction. */
struct cs_fit_resid {
    double x;        /* size (bytes) */
    double t_meas_s; /* median of the samples at that size */
    double t_pred_s; /* the fitted segment's prediction */
    double err_rel;  /* (pred - meas) / meas */
    int nsamples;
};

/* A measured point: size x (bytes) and time t (s). */
struct cs_fit_pt {
    double x, t;
};

/* Fit one line to n points (x >= 0, t > 0, all finite). Needs at least 3 points and 2 distinct
 * sizes. CS_ERR_INVALID (err names the point index) otherwise. `robust` selects Huber IRLS after
 * the WLS fit. */
int cs_fit_line(const struct cs_fit_pt *p, int n, int robust, struct cs_fit_line *out,
                struct cs_error *err);

/* Segmented fit (see above). Points need not be sorted. CS_ERR_INVALID for bad points, too few
 * sizes for even one segment, more than CS_FIT_MAX_SIZES sizes, or bad options. */
int cs_fit_segmented(const struct cs_fit_pt *p, int n, const struct cs_fit_opts *o,
                     struct cs_fit_result *out, struct cs_error *err);

/* A sample of a launch of `ops` calls of x bytes each that took t seconds in all. */
struct cs_fit_call_pt {
    double ops, x, t;
};

/* A fit of t = launch + ops * (call + x * slope) over launches of several call counts: the
 * launch cost once per launch, the per-call cost and the rate once per call. */
struct cs_fit_calls {
    double launch_s;      /* once per launch (s), >= 0 */
    double call_s;        /* once per call (s), >= 0 */
    double slope_s_per_B; /* per byte of a call (s/B), >= 0 */
    double beta_Bps;      /* 1/slope; INFINITY when the slope is 0 */
    double rms_rel;       /* root mean square of the relative residuals */
    double max_rel;       /* largest |relative residual| */
    int n;                /* points */
    int nops;             /* distinct call counts */
    int clamped;          /* parameters fixed at 0 (a negative fit): 1 launch, 2 call, 4 slope */
};

/* Fit t = launch + ops * (call + x * slope) to n points by weighted least squares (weights
 * 1/t^2), each parameter >= 0 (the least-squares fit over every set of parameters fixed at 0,
 * the feasible one of least residual). Needs at least 4 points (ops >= 1, x >= 0, t > 0, all
 * finite) with 2 distinct call counts and 2 distinct sizes; CS_ERR_INVALID (err says why)
 * otherwise. */
int cs_fit_calls(const struct cs_fit_call_pt *p, int n, struct cs_fit_calls *out,
                 struct cs_error *err);

/* The fitted time at size x: the segment whose range holds x, or the nearest one. */
double cs_fit_eval(const struct cs_fit_result *r, double x);

/* Residuals per distinct size, by increasing size: *out is a new array of *nout entries (free).
 * CS_ERR_NOMEM on allocation failure. */
int cs_fit_residuals(const struct cs_fit_result *r, const struct cs_fit_pt *p, int n,
                     struct cs_fit_resid **out, int *nout);

/* The median of v[0..n-1] (n >= 1; sorts v in place). */
double cs_fit_median(double *v, int n);

/* Two-sided 95% quantile of Student's t with dof degrees of freedom (dof >= 1): exact table to
 * 30, Cornish-Fisher expansion beyond (error < 1e-4). */
double cs_fit_t975(int dof);

#endif
