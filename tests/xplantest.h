/* xplantest.h: loading a schedule and compiling its executor plan, for the xplan and emulate
 * suites. */
#ifndef CS_XPLANTEST_H
#define CS_XPLANTEST_H

#include <check.h>

#include "xml.h"
#include "xplan.h"

static inline struct cs_sched *load(const char *path)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sched_read_xml(path, &s, &err) == 0, "%s:%d: %s", err.file, err.line, err.msg);
    return s;
}

static inline struct cs_xplan *plan_of(const struct cs_sched *s)
{
    struct cs_xplan *p = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_xplan_build(s, &p, &err) == 0, "%s:%d: %s", err.file, err.line, err.msg);
    return p;
}

#endif
