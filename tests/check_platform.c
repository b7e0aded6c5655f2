/* check_platform.c: the platform writer's choices and which parameters a loaded platform takes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "platform.h"
#include "runner.h"

/* Only the keys the writer turns into <link> attributes are refused on a loaded platform, with a
 * message naming `collsim platform --set`; every other key, known or not, passes. */
START_TEST(link_keys_refused)
{
    static const char *const links[] = {
        "cs.link_Bps.nvlink", "cs.link_Bps.pcie",  "cs.link_Bps.net", "cs.link_lat_s.nvlink",
        "cs.link_lat_s.pcie", "cs.link_lat_s.net", "cs.sys_Bps",      "cs.sys_lat_s"};
    static const char *const others[] = {"cs.launch_s",      "cs.deploy_s",     "cs.call_s.LL.net",
                                         "cs.tb_Bps.Simple", "cs.copy_Bps",     "cs.reduce_Bps",
                                         "cs.link_Bps.ib",   "cs.sys_Bps.pcie", "cs.nope"};
    struct cs_error err;
    char want[128];

    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        cs_error_init(&err);
        ck_assert_int_eq(cs_platform_check_settable(links[i], &err), CS_ERR_USAGE);
        snprintf(want, sizeof(want), "`collsim platform FAMILY --set %s=VALUE`", links[i]);
        ck_assert_msg(strstr(err.msg, want) != NULL, "%s: %s", links[i], err.msg);
    }
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        cs_error_init(&err);
        ck_assert_msg(cs_platform_check_settable(others[i], &err) == 0, "%s", others[i]);
        ck_assert_str_eq(err.msg, "");
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {link_keys_refused, 1},
        {NULL, 0},
    };

    return test_run("platform", 0, tests, NULL);
}
