/* check_tune.c: the fastest variant per size range. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "runner.h"
#include "tune.h"

#define N(a) ((long)(sizeof(a) / sizeof((a)[0])))

static struct cs_tune_range *ranges(const struct cs_tune_obs *o, long n, int *nr)
{
    struct cs_tune_range *r = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_tune_ranges(o, n, &r, nr, &err) == 0, "%s", err.msg);
    return r;
}

/* Three variants, each fastest somewhere; input shuffled. */
START_TEST(known_fastest)
{
    const struct cs_tune_obs o[] = {
        {2, 1048576, 100, 1}, {0, 1024, 5, 1},      {1, 1024, 9, 1},    {2, 1024, 20, 1},
        {0, 4096, 6, 1},      {1, 4096, 9.5, 1},    {2, 4096, 20, 1},   {0, 16384, 30, 1},
        {1, 16384, 11, 1},    {2, 16384, 21, 1},    {0, 65536, 90, 1},  {1, 65536, 20, 1},
        {2, 65536, 24, 1},    {0, 262144, 1, 0},    {1, 262144, 60, 1}, {2, 262144, 40, 1},
        {0, 1048576, 1, 0},   {1, 1048576, 200, 1},
    };
    int nr;
    struct cs_tune_range *r = ranges(o, N(o), &nr);

    ck_assert_int_eq(nr, 3);
    ck_assert_int_eq(r[0].variant, 0);
    ck_assert_int_eq(r[0].min_bytes, 1024);
    ck_assert_int_eq(r[0].max_bytes, 16383);
    ck_assert_int_eq(r[0].last_size, 4096);
    ck_assert_int_eq(r[1].variant, 1);
    ck_assert_int_eq(r[1].min_bytes, 16384);
    ck_assert_int_eq(r[1].max_bytes, 262143);
    /* variant 0 is "fastest" at 256K only if deadlocks counted: they must not */
    ck_assert_int_eq(r[2].variant, 2);
    ck_assert_int_eq(r[2].min_bytes, 262144);
    ck_assert_int_eq(r[2].max_bytes, 1048576);
    free(r);
}
END_TEST

/* A size where every variant deadlocks leaves a gap; ties go to the lower variant. */
START_TEST(gaps_and_ties)
{
    const struct cs_tune_obs o[] = {
        {0, 1024, 5, 1}, {1, 1024, 5, 1}, {0, 2048, 1, 0}, {1, 2048, 1, 0},
        {0, 4096, 7, 1}, {1, 4096, 6, 1}, {0, 8192, 8, 1}, {1, 8192, 9, 1},
    };
    int nr;
    struct cs_tune_range *r = ranges(o, N(o), &nr);

    ck_assert_int_eq(nr, 3);
    ck_assert_int_eq(r[0].variant, 0);
    ck_assert_int_eq(r[0].max_bytes, 1024); /* ends at its last size: 2048 has no winner */
    ck_assert_int_eq(r[1].variant, 1);
    ck_assert_int_eq(r[1].min_bytes, 4096);
    ck_assert_int_eq(r[1].max_bytes, 8191);
    ck_assert_int_eq(r[2].variant, 0);
    ck_assert_int_eq(r[2].min_bytes, 8192);
    free(r);
}
END_TEST

/* A variant winning twice, apart, gives two ranges. */
START_TEST(same_winner_twice)
{
    const struct cs_tune_obs o[] = {
        {0, 1, 1, 1}, {1, 1, 2, 1}, {0, 2, 3, 1}, {1, 2, 2, 1}, {0, 4, 1, 1}, {1, 4, 2, 1},
    };
    int nr;
    struct cs_tune_range *r = ranges(o, N(o), &nr);

    ck_assert_int_eq(nr, 3);
    ck_assert_int_eq(r[0].variant, 0);
    ck_assert_int_eq(r[1].variant, 1);
    ck_assert_int_eq(r[2].variant, 0);
    ck_assert_int_eq(r[2].max_bytes, 4);
    free(r);
}
END_TEST

START_TEST(bad)
{
    struct cs_tune_range *r = NULL;
    struct cs_error err;
    int nr = -1;
    const struct cs_tune_obs dup[] = {{0, 1024, 5, 1}, {0, 1024, 6, 1}};
    const struct cs_tune_obs none[] = {{0, 1024, 5, 0}, {1, 1024, 6, 0}};
    const struct cs_tune_obs neg[] = {{0, 1024, -5, 1}};
    const struct cs_tune_obs nan_t[] = {{0, 1024, NAN, 1}};
    const struct cs_tune_obs zero[] = {{0, 0, 5, 1}};

    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_ranges(dup, 2, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(cs_tune_ranges(none, 2, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(neg, 1, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(nan_t, 1, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(zero, 1, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(dup, 0, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(nr, -1);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {known_fastest, 1}, {gaps_and_ties, 1}, {same_winner_twice, 1}, {bad, 1}, {NULL, 0},
    };

    return test_run("tune", 0, tests, NULL);
}
