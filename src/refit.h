/* refit.h: a platform fitted through the model (`collsim calibrate platform`): measured tables,
 * each a case (cases.h) with its schedule and protocol choice, predicted by the replay on a
 * family's platform written with trial parameters, and the parameters moved by the regularised
 * least squares of mfit.h until the predictions match.
 *
 * Each table is one case. The keys fitted are the platform parameters the cases' sizes depend
 * on (cs_refit_candidates), each with its physical range and a prior width (cs_refit_key_limits);
 * cs_refit_run screens out the keys no size moves, fits the rest, and reports which the data
 * identified. Held-out tables are predicted with the fitted platform, never fitted.
 */
#ifndef CS_REFIT_H
#define CS_REFIT_H

#include "cases.h"
#include "error.h"
#include "mfit.h"
#include "params.h"
#include "platform.h"

/* One table of a calibration: its case and measured points (predictions filled in). */
struct cs_refit_table {
    struct cs_case c;
    struct cs_valid_point *p;
    int n;
    int held_out; /* predicted with the final platform, not fitted */
};

/* A calibration: the family's platform, the parameters before the fit (priors, --params,
 * --set), the tables, and where each trial platform is written. */
struct cs_refit {
    const struct cs_platform_spec *spec;
    struct cs_params base;
    struct cs_refit_table *tables;
    int ntables;
    const char *plat_path;
    int workers; /* trial platforms predicted at once (the Jacobian's columns), >= 1 */
};

/* The fit's range and prior width (ln units) of key: 0 and *lo, *hi, *width, or -1 when key is
 * not one the fit moves (whole numbers, deployment choices, keys whose prior is 0). */
int cs_refit_key_limits(const char *key, double *lo, double *hi, double *width);

/* The keys the tables' predictions may depend on, for the family of r: the launch (and the later
 * launches when a table's process drives several GPUs), each link class's hop latency and
 * bandwidth, and the per-protocol costs of the protocols the tables run, into keys[0..*n) (at
 * most max). A key set by a table's own set= is left out. */
void cs_refit_candidates(const struct cs_refit *r, char (*keys)[64], int max, int *n);

/* Predict every table (with held_out, also the held-out ones) under parameters p: the platform
 * written once to r->plat_path, then each case. 0, or a CS_ERR_* with err set. */
int cs_refit_predict(const struct cs_refit *r, const struct cs_params *p, int held_out,
                     struct cs_error *err);

/* Fit keys[0..nkeys) (their key names set; prior, range and width filled from r->base and
 * cs_refit_key_limits unless width is already > 0) to the tables that are not held out, and
 * leave the fitted parameters in *out, every table predicted with them (held-out ones too). A
 * key no size moves by more than CS_REFIT_SCREEN per CS_MFIT_DIFF step is fixed at its prior
 * before the fit (insensitive set to 1). 0, or a CS_ERR_* with err set. */
#define CS_REFIT_SCREEN 1e-4
int cs_refit_run(struct cs_refit *r, struct cs_mfit_key *keys, int nkeys, int *insensitive,
                 const struct cs_mfit_opts *o, struct cs_mfit_result *res, struct cs_params *out,
                 struct cs_error *err);

/* Median and largest |relative error| over the predicted points of the tables (held-out ones
 * only when held_out is 1, fitted ones only when 0, all when -1), the largest also over the
 * sizes where a table does not contradict itself (*max_kept, its table and size). */
struct cs_refit_stats {
    int n, npred, ncontra;
    double median, max, max_kept, max_kept_size;
    int max_kept_table;
};
void cs_refit_stats(const struct cs_refit *r, int held_out, struct cs_refit_stats *out);

#endif
