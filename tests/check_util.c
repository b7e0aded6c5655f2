/* check_util.c: tuple comparison, growable arrays, freeing several pointers, name lookup. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "util.h"

START_TEST(test_cmp_ints)
{
    int a[] = {1, 2, 3}, b[] = {1, 2, 4}, c[] = {0, 9, 9};

    ck_assert_int_eq(cs_cmp_ints(a, b, 3), -1);
    ck_assert_int_eq(cs_cmp_ints(b, a, 3), 1);
    ck_assert_int_eq(cs_cmp_ints(a, b, 2), 0);
    ck_assert_int_eq(cs_cmp_ints(c, a, 3), -1); /* the first element decides */
    ck_assert_int_eq(cs_cmp_ints(a, a, 3), 0);
}
END_TEST

START_TEST(test_array_slot)
{
    long *v = NULL;
    int n = 0, cap = 0;

    for (int i = 0; i < 100; i++) {
        long *slot = cs_array_slot((void **)&v, n, &cap, sizeof(*v));

        ck_assert_ptr_nonnull(slot);
        ck_assert_int_eq(*slot, 0);
        *slot = 10 * i;
        n++;
        ck_assert_int_ge(cap, n);
    }
    ck_assert_int_eq(cap, 128);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(v[i], 10 * i);
    cs_free_each(3, v, NULL, strdup("x")); /* valgrind and ASan see the frees */
}
END_TEST

START_TEST(test_name_index)
{
    char a[] = "size_bytes", b[] = "time_us", c[] = "status";
    char *names[] = {a, b, c};

    ck_assert_int_eq(cs_name_index(names, 3, "time_us"), 1);
    ck_assert_int_eq(cs_name_index(names, 3, "status"), 2);
    ck_assert_int_eq(cs_name_index(names, 2, "status"), -1);
    ck_assert_int_eq(cs_name_index(names, 0, "size_bytes"), -1);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_cmp_ints, 1},
        {test_array_slot, 1},
        {test_name_index, 1},
        {NULL, 0},
    };

    return test_run("util", 0, tests, NULL);
}
