/* regress.h: comparing predictions with a committed baseline (regression of predicted timings). */
#ifndef CS_REGRESS_H
#define CS_REGRESS_H

/* Whether a prediction moved from its baseline: the status differs (ok, deadlock), or both are ok
 * and the time changed by more than tol_pct percent of the old time. *change_pct (may be NULL)
 * gets the relative change in percent (0 when either is not ok). */
int cs_regress_moved(const char *old_status, double old_us, const char *new_status, double new_us,
                     double tol_pct, double *change_pct);

/* Whether n sorted distinct sizes are min, min*f, min*f^2, ... for one integer f >= 2 (what one
 * `predict -b -e -f` call produces). A single size is geometric with f = 2. */
int cs_regress_geometric(const long long *sizes, int n, long long *factor);

#endif
