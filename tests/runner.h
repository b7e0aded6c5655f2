/* runner.h: the one main() of the Check suites, which skips (exit 77) what needs ../shared/data. */
#ifndef CS_RUNNER_H
#define CS_RUNNER_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

/* automake's exit status for a skipped test. */
#define TEST_EXIT_SKIP 77

/* One entry of a suite: a START_TEST test run nruns times, with _i = 0 .. nruns - 1 (1 for a plain
 * test, n for a Check loop test). A list ends with {NULL, 0}. */
struct test_case {
    const TTest *test;
    int nruns;
};

/* Add the tests of a {NULL, 0}-terminated list to a new test case of s called name. */
static inline void test_add_tcase(Suite *s, const char *name, int timeout_s,
                                  const struct test_case *tests)
{
    TCase *tc = tcase_create(name);

    if (timeout_s > 0)
        tcase_set_timeout(tc, timeout_s);
    for (const struct test_case *t = tests; t->test; t++)
        tcase_add_loop_test(tc, t->test, 0, t->nruns);
    suite_add_tcase(s, tc);
}

/* Run the suite called name in Check's fork mode and return main()'s exit status: EXIT_FAILURE if a
 * test failed, else TEST_EXIT_SKIP if shared (the tests that read ../shared/data, may be NULL)
 * could not run because that folder is absent, else EXIT_SUCCESS. timeout_s > 0 replaces Check's
 * default per-test timeout. The runner asks for the shared data before adding those tests, since a
 * test that returns early in its forked child cannot tell the parent it skipped. */
static inline int test_run(const char *name, int timeout_s, const struct test_case *tests,
                           const struct test_case *shared)
{
    Suite *s = suite_create(name);
    SRunner *sr;
    int skipped = 0, failed;

    test_add_tcase(s, "core", timeout_s, tests);
    if (shared && shared->test) {
        if (test_shared_data())
            test_add_tcase(s, "shared", timeout_s, shared);
        else
            skipped = 1;
    }
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (failed)
        return EXIT_FAILURE;
    if (skipped) {
        printf("check_%s: SKIP: %s absent; not run:", name, test_shared_path());
        for (const struct test_case *t = shared; t->test; t++)
            printf(" %s", t->test->name);
        printf("\n");
        return TEST_EXIT_SKIP;
    }
    return EXIT_SUCCESS;
}

#endif
