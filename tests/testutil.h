/* testutil.h: paths to test data for the Check suites. */
#ifndef CS_TESTUTIL_H
#define CS_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The source tree (CS_SRCDIR from the environment, else the configure-time value). */
static inline const char *test_srcdir(void)
{
    const char *d = getenv("CS_SRCDIR");

    return d && *d ? d : CS_SRCDIR;
}

/* Path of a file under the source tree's tests/data/. */
static inline const char *test_data(const char *rel)
{
    static char buf[4096];

    snprintf(buf, sizeof(buf), "%s/tests/data/%s", test_srcdir(), rel);
    return buf;
}

/* Where the shared data folder is looked for: CS_SHARED_DATA from the environment, else
 * ../shared/data beside the source tree. */
static inline const char *test_shared_path(void)
{
    static char buf[4096];
    const char *d = getenv("CS_SHARED_DATA");

    if (d && *d)
        snprintf(buf, sizeof(buf), "%s", d);
    else
        snprintf(buf, sizeof(buf), "%s/../shared/data", test_srcdir());
    return buf;
}

/* The shared data folder, or NULL when absent: test_run() in runner.h then skips the tests that
 * need it. */
static inline const char *test_shared_data(void)
{
    const char *d = test_shared_path();
    struct stat st;

    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return d;
}

#endif
