/* regress.c: comparing predictions with a baseline. */
#include <math.h>
#include <string.h>

#include "regress.h"

int cs_regress_moved(const char *old_status, double old_us, const char *new_status, double new_us,
                     double tol_pct, double *change_pct)
{
    double ch = 0;
    int moved;

    if (strcmp(old_status, new_status) != 0) {
        moved = 1;
    } else if (strcmp(old_status, "ok") != 0) {
        moved = 0;
    } else if (!(old_us > 0) || !isfinite(old_us) || !isfinite(new_us)) {
        moved = old_us != new_us;
    } else {
        ch = (new_us - old_us) / old_us * 100.0;
        moved = fabs(ch) > tol_pct;
    }
    if (change_pct != NULL)
        *change_pct = ch;
    return moved;
}

int cs_regress_geometric(const long long *sizes, int n, long long *factor)
{
    long long f;

    if (n <= 0)
        return 0;
    if (n == 1) {
        *factor = 2;
        return 1;
    }
    if (sizes[0] <= 0 || sizes[1] % sizes[0] != 0 || (f = sizes[1] / sizes[0]) < 2)
        return 0;
    for (int i = 2; i < n; i++)
        if (sizes[i - 1] > sizes[i] / f || sizes[i] != sizes[i - 1] * f)
            return 0;
    *factor = f;
    return 1;
}
