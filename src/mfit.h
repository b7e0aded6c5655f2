/* mfit.h: parameters fitted through a model by regularised nonlinear least squares: many keys at
 * once, each kept near its prior unless the data say otherwise, with intervals and a verdict on
 * what the data identify. Plain C; the model is a callback (refit.c's replay, or a closed form in
 * the tests).
 *
 * The fit works on u_k = ln(theta_k), so every parameter stays positive and a step is a relative
 * change. It minimises
 *     S(u) = sum_i (w_i ln(pred_i(u) / meas_i))^2 + sum_k ((u_k - ln prior_k) / s_k)^2,
 * the squared log errors of the measured points plus one prior term per key (s_k: the prior's
 * width, a factor e^s_k for one standard deviation; 0 fixes the key). Levenberg-Marquardt with a
 * forward-difference Jacobian (a step of CS_MFIT_DIFF in u); every u_k is kept in its key's range.
 * A point whose prediction is missing (NAN: a deadlock, a size the executor refuses) is left out
 * of a step's cost when it was missing at the start too; a step that loses a prediction is
 * refused.
 *
 * At the end, from the Jacobian there:
 *  - 95% intervals: u_k +- t_975 sqrt(C_kk), C = (J'J / s^2 + P)^-1 (J the data residuals'
 *    Jacobian, P the priors' diagonal), s^2 = the data's squared residuals over their degrees of
 *    freedom, at least 1 (the noise nu: a perfect fit is no more certain than the data);
 *  - identified: the data's information on u_k, sum_i J_ik^2 / s^2, exceeds the prior's,
 *    1 / s_k^2 (else the key "stayed at its prior");
 *  - pairs that cannot be told apart: keys both identified whose correlation in C is beyond
 *    CS_MFIT_CORR in magnitude (the data fix a combination, not each; for two keys the data see
 *    alike, one not identified leaves their correlation below 1 / sqrt 2);
 *  - weak (cs_mfit_weak): an identified key whose 95% interval still spans more than
 *    CS_MFIT_WEAK of its prior's (the data move it, they do not pin it).
 */
#ifndef CS_MFIT_H
#define CS_MFIT_H

#include "error.h"

#define CS_MFIT_MAX_KEYS 32
#define CS_MFIT_DIFF 0.03 /* the Jacobian's step in ln(theta): 3% */
#define CS_MFIT_CORR 0.95
#define CS_MFIT_NOISE 0.02 /* nccl-tests' run-to-run spread at a size: about 1-3% */
#define CS_MFIT_WEAK 0.5

/* One fitted key. */
struct cs_mfit_key {
    char key[64];
    double prior;        /* its value before the fit (> 0) */
    double lo, hi;       /* its physical range (0 < lo <= prior <= hi) */
    double width;        /* s: the prior's width in ln units; 0 fixes the key at the prior */
    double value;        /* fitted */
    double ci_lo, ci_hi; /* 95% interval (the value itself when fixed) */
    double info_data;    /* the data's information on ln(value) (see above) */
    int identified;      /* 1: the data decide it; 0: it stayed at (or near) its prior */
    int at_bound;        /* 1: the fit ended on its range's edge */
    int insensitive;     /* 1: no point moved by more than opts.screen at the start: fixed */
};

/* One measured point. */
struct cs_mfit_point {
    double meas;   /* measured (> 0) */
    double weight; /* w_i (> 0); 1 by default */
    double pred;   /* the model's, under the fitted keys; NAN when missing */
    int tag;       /* the caller's (a table, a size index, ...) */
    int aside;     /* 1: in the cost, but neither weighed up nor counted in the IRLS rounds'
                    * largest error (a point its own table contradicts) */
};

/* The model under keys theta[0..nkeys): fills pts[i].pred (NAN where it predicts nothing). 0, or
 * a CS_ERR_* with err set, which ends the fit. */
typedef int (*cs_mfit_model_fn)(void *ctx, const double *theta, struct cs_mfit_point *pts, int n,
                                struct cs_error *err);

/* The model under m sets of keys at once (the Jacobian's columns): thetas[j * nkeys ..] the j-th
 * set, its predictions into preds[j * n ..] (NAN where missing). 0, or a CS_ERR_* with err set.
 * Optional: without it the columns are predicted one after another with cs_mfit_model_fn. */
typedef int (*cs_mfit_batch_fn)(void *ctx, const double *thetas, int m, int nkeys, double *preds,
                                int n, struct cs_error *err);

/* Called after each accepted or refused step: iteration, cost, lambda; may print progress. */
typedef void (*cs_mfit_progress_fn)(void *ctx, int iter, double cost, double lambda, int evals);

struct cs_mfit_opts {
    int max_iter;         /* Levenberg-Marquardt iterations, >= 1 (0: 30) */
    double noise;         /* nu, the measurements' relative noise (0: CS_MFIT_NOISE) */
    double ftol;          /* stop when a step lowers the cost by less than this share (0: 1e-3) */
    double max_rel;       /* > 0: then refit with weights that grow with |error| beyond this (IRLS
                           * towards the largest errors), up to 4 rounds; the round kept is the one
                           * with the smallest score max(median |error| / target_median,
                           * max |error| / target_max) over the points not aside */
    double target_median; /* the score's targets (0: 0.05 and 0.15, a calibration's aims: a */
    double target_max;    /* table's median and largest |error|) */
    double screen; /* > 0: a key whose CS_MFIT_DIFF step moves no point's ln(pred) by more than
                    * this at the start is fixed at its prior (insensitive) */
    cs_mfit_progress_fn progress;
    void *progress_ctx;
    cs_mfit_batch_fn batch; /* NULL: one prediction at a time (its ctx: cs_mfit_run's) */
};

struct cs_mfit_result {
    int iters, evals;
    int converged; /* the cost stopped falling before max_iter */
    double cost;   /* S at the end */
    double sigma;  /* the data's residual scale, sqrt(sum ln(pred/meas)^2 / dof) (a share) */
    int dof;
    int npred; /* points with a prediction at the end */
    /* pairs of keys that cannot be told apart (indices), and their correlation */
    int npairs;
    struct {
        int a, b;
        double corr;
    } pairs[CS_MFIT_MAX_KEYS];
};

/* Fit keys[0..nkeys) (prior, range, width set; value ignored) to pts[0..n) through fn. On
 * success (0) every key has its value, interval and verdict, every point its prediction under
 * the fitted keys, and *out the summary. CS_ERR_INVALID for bad keys or points (err says which),
 * CS_ERR_NOMEM, or what fn returns. */
int cs_mfit_run(struct cs_mfit_key *keys, int nkeys, struct cs_mfit_point *pts, int n,
                cs_mfit_model_fn fn, void *ctx, const struct cs_mfit_opts *o,
                struct cs_mfit_result *out, struct cs_error *err);

/* Solve the n x n symmetric positive definite system A x = b in place (A is destroyed, b becomes
 * x) by Cholesky; with inv non-NULL also write A^-1 there. 0, or -1 when A is not positive
 * definite. Exposed for the tests. */
int cs_mfit_solve(double *A, double *b, double *inv, int n);

/* Whether an identified key's 95% interval spans more than CS_MFIT_WEAK of its prior's 95% range
 * (e^(+-1.96 width)), in ln units. */
int cs_mfit_weak(const struct cs_mfit_key *K);

#endif
