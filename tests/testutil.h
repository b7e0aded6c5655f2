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

/* The shared data folder (../shared/data beside the repository), or NULL when absent: tests that
 * need it print a message and skip. */
static inline const char *test_shared_data(void)
{
    static char buf[4096];
    struct stat st;
    const char *d = getenv("CS_SHARED_DATA");

    if (d && *d)
        snprintf(buf, sizeof(buf), "%s", d);
    else
        snprintf(buf, sizeof(buf), "%s/../shared/data", test_srcdir());
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return buf;
}

#endif
