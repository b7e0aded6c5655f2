/* refit.h: platform parameters fitted through the model (`collsim calibrate platform`): from the
 * alpha-beta fit's first guess, cs.launch_s and one link class's cs.link_Bps are moved until the
 * predicted times match the measured ones at the sizes each of them dominates.
 *
 * The two keys and their bands (sizes), from the first-guess fit of the measured table
 * (t = alpha + x / beta on x = nsteps S / n, fit.h): with A the first segment's intercept and B
 * the last segment's beta,
 *   latency band   x / B <= CS_REFIT_DOMINANT x A   cs.launch_s, once per collective: the
 *                  predicted time moves 1:1 with it, so each step adds the median of
 *                  measured - predicted over the band (a Newton step, exact when nothing else
 *                  moves), clamped at 0;
 *   bandwidth band A <= CS_REFIT_DOMINANT x x / B   cs.link_Bps.CLASS: the predicted time is
 *                  inversely proportional to it but for at most that share, so each step
 *                  multiplies it by the median of predicted / measured over the band (a fixed
 *                  point that contracts by that share per step).
 * Both keys move in each iteration, from one prediction of both bands; the loop stops when the
 * median relative error of each band is within tol, or after max_iter iterations.
 */
#ifndef CS_REFIT_H
#define CS_REFIT_H

#include "error.h"
#include "fit.h"
#include "params.h"
#include "platform.h"

/* A term dominates a time when the other is at most this share of it (1%). */
#define CS_REFIT_DOMINANT 0.01

enum cs_refit_band {
    CS_REFIT_NONE = 0, /* reported only */
    CS_REFIT_LATENCY,
    CS_REFIT_BANDWIDTH,
    CS_REFIT_EXTRA, /* CS_REFIT_EXTRA + j: the sizes of extra key j (cs_refit_opts.extra) */
};

/* Extra keys (`calibrate platform --fit KEY=MIN:MAX`): any positive parameter, fitted over the
 * measured sizes MIN..MAX (those sizes leave the other bands). Each iteration moves it by a
 * secant step in log(value) on its band's median relative error (the first step a 10% probe, a
 * step at most a factor 2), from the same prediction as the other keys: the key must move its
 * band's times monotonically, and it stops (not converged) when it moves them by nothing. */
#define CS_REFIT_MAX_EXTRA 4
#define CS_REFIT_NBANDS (CS_REFIT_EXTRA + CS_REFIT_MAX_EXTRA)

/* One measured size and what the model predicts there. */
struct cs_refit_point {
    double size_bytes;
    double meas_s; /* the median of the table's rows at that size */
    double pred_s; /* NAN when not predicted (deadlock, nothing the executor runs) */
    char proto[8]; /* the protocol of the prediction kept, "" when none */
    int band;      /* an enum cs_refit_band */
};

/* The model's times under parameters p at the n points' sizes: fills pts[i].pred_s (NAN when
 * none) and pts[i].proto. 0, or a CS_ERR_* with err set. */
typedef int (*cs_refit_predict_fn)(void *ctx, const struct cs_params *p, struct cs_refit_point *pts,
                                   int n, struct cs_error *err);

/* A key the loop adjusted. */
struct cs_refit_key {
    char key[64];
    double first, final;
    int npoints; /* sizes of its band */
};

struct cs_refit_opts {
    enum cs_link_class link; /* whose cs.link_Bps is fitted */
    int max_iter;            /* 1 .. CS_REFIT_MAX_ITER */
    double tol;              /* median relative error of a band to stop at, > 0 */
    int nextra;
    struct {
        char key[64];
        double lo, hi; /* sizes (bytes), inclusive */
    } extra[CS_REFIT_MAX_EXTRA];
};

#define CS_REFIT_MAX_ITER 32

struct cs_refit_result {
    /* launch, then bandwidth (only those whose band has sizes), then the extra keys */
    struct cs_refit_key keys[2 + CS_REFIT_MAX_EXTRA];
    int nkeys;
    int iters;                        /* iterations run (predictions of the bands) */
    int converged;                    /* every band within tol at the last prediction */
    int stuck;                        /* an extra key whose band did not move (-1: none) */
    double band_err[CS_REFIT_NBANDS]; /* the last median relative error per band (NAN: none) */
    struct {
        double launch_s, link_Bps;        /* predicted with */
        double extra[CS_REFIT_MAX_EXTRA]; /* the extra keys, predicted with */
        double err[CS_REFIT_NBANDS];      /* median relative error per band (NAN: none) */
    } hist[CS_REFIT_MAX_ITER];
};

/* Set the band of each point (sorted or not) from the first-guess fit R of the table, on
 * x = size * nsteps / nranks; a point whose size lies in a given range (lo <= size <= hi) takes
 * that band instead when the range is not NULL. */
void cs_refit_bands(struct cs_refit_point *pts, int n, const struct cs_fit_result *R, double nsteps,
                    double nranks, const double *lat_range, const double *bw_range);

struct cs_refit_opts;

/* The points in extra key j's range (the last such key's, when ranges overlap) take band
 * CS_REFIT_EXTRA + j. */
void cs_refit_extra_bands(struct cs_refit_point *pts, int n, const struct cs_refit_opts *o);

/* The first guesses from the fit R of a ring of nsteps steps over nranks GPUs:
 * cs.launch_s = the first intercept less nsteps hop latencies (p's cs.link_lat_s.CLASS) and
 * the later launches of the GPUs one process drives (min(cs.gpus_per_process, nranks) - 1 of
 * cs.launch_gpu_s), at least 0; cs.link_Bps.CLASS = the last segment's beta (the ring's bus
 * bandwidth). Sets them in p. */
void cs_refit_first_guess(struct cs_params *p, enum cs_link_class link,
                          const struct cs_fit_result *R, int nsteps, int nranks);

/* Run the loop on p (first guesses already in it) with the predictor fn. The points in an extra
 * key's range take its band first. At the end every point holds the prediction under the final
 * p (one more prediction of every size after the loop). 0 and *out, or a CS_ERR_* from fn;
 * CS_ERR_INVALID when no point lies in any band, an extra key has no size, is unknown or not
 * positive, or leaves its range, or a band predicts nothing. */
int cs_refit_run(struct cs_params *p, struct cs_refit_point *pts, int n,
                 const struct cs_refit_opts *o, cs_refit_predict_fn fn, void *ctx,
                 struct cs_refit_result *out, struct cs_error *err);

/* Median and largest |relative error| over the points with a prediction (band < 0: all, else
 * that band); *npred the count. NAN when none. */
void cs_refit_stats(const struct cs_refit_point *pts, int n, int band, double *median_abs,
                    double *max_abs, int *npred);

/* The replay as the predictor: the family's platform written with the parameters, the
 * schedule loaded (a file or a generator spec), each point predicted at its size rounded up to
 * one the executor accepts, with each protocol of protos, keeping the fastest (a row the
 * executor refuses, that would hang or deadlock, or that carries a warning, such as LL128 on a
 * route NCCL runs without it, is no prediction). */
struct cs_refit_model {
    const struct cs_platform_spec *spec;
    const char *sched_path; /* or */
    const char *gen_spec;
    enum cs_proto protos[CS_NPROTO];
    int nprotos;
    int type_bytes;
    const char *plat_path; /* where the platform is written each time (a temporary file) */
};

/* A cs_refit_predict_fn; ctx is a struct cs_refit_model. */
int cs_refit_model_predict(void *ctx, const struct cs_params *p, struct cs_refit_point *pts, int n,
                           struct cs_error *err);

#endif
