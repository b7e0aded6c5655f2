/* check_regress.c: what counts as a moved prediction, and geometric size runs. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "regress.h"
#include "runner.h"

START_TEST(moved)
{
    double ch;

    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 100.9, 1, &ch), 0);
    ck_assert(fabs(ch - 0.9) < 1e-9);
    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 101.1, 1, &ch), 1);
    ck_assert(fabs(ch - 1.1) < 1e-9);
    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 98, 1, &ch), 1);
    ck_assert(fabs(ch + 2) < 1e-9);
    ck_assert_int_eq(cs_regress_moved("ok", 100, "ok", 100, 0, NULL), 0);
    /* a status change always moves; two deadlocks do not, whatever their times */
    ck_assert_int_eq(cs_regress_moved("ok", 100, "deadlock", 100, 50, &ch), 1);
    ck_assert_int_eq(cs_regress_moved("deadlock", INFINITY, "ok", 5, 50, NULL), 1);
    ck_assert_int_eq(cs_regress_moved("deadlock", INFINITY, "deadlock", NAN, 0, NULL), 0);
    /* an empty baseline cell (never measured) moves */
    ck_assert_int_eq(cs_regress_moved("", 0, "ok", 5, 50, NULL), 1);
    ck_assert_int_eq(cs_regress_moved("ok", 0, "ok", 5, 50, NULL), 1);
}
END_TEST

START_TEST(geometric)
{
    long long f = 0;
    const long long a[] = {1024, 4096, 16384, 65536};
    const long long b[] = {1024, 2048, 8192};
    const long long c[] = {1000, 3000, 9000};
    const long long d[] = {1024, 1536};
    const long long e[] = {7};

    ck_assert_int_eq(cs_regress_geometric(a, 4, &f), 1);
    ck_assert_int_eq(f, 4);
    ck_assert_int_eq(cs_regress_geometric(b, 3, &f), 0);
    ck_assert_int_eq(cs_regress_geometric(c, 3, &f), 1);
    ck_assert_int_eq(f, 3);
    ck_assert_int_eq(cs_regress_geometric(d, 2, &f), 0);
    ck_assert_int_eq(cs_regress_geometric(e, 1, &f), 1);
    ck_assert_int_eq(cs_regress_geometric(e, 0, &f), 0);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {moved, 1},
        {geometric, 1},
        {NULL, 0},
    };

    return test_run("regress", 0, tests, NULL);
}
