/* check_parse.c: sizes, integers and reals from text, with their overflow and range checks. */
#include <check.h>
#include <limits.h>
#include <math.h>

#include "error.h"
#include "parse.h"
#include "runner.h"

START_TEST(test_sizes)
{
    static const struct {
        const char *s;
        long long v;
    } ok[] = {
        {"8", 8},          {"1K", 1024},      {"1k", 1024},        {"1Ki", 1024},
        {"1KB", 1024},     {"1KiB", 1024},    {"64K", 65536},      {"128M", 128LL << 20},
        {"1G", 1LL << 30}, {"2T", 2LL << 40}, {"1gib", 1LL << 30}, {"0", 0},
    };
    static const char *const bad[] = {"",    "K",     "-1",   "+1",   " 1",  "1 ",  "1X",
                                      "1KK", "1KiBB", "1.5K", "0x10", "1e3", "1iB", NULL};
    long long v = -7;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ck_assert_msg(cs_parse_size(ok[i].s, 0, LLONG_MAX, &v) == 0, "%s", ok[i].s);
        ck_assert_int_eq(v, ok[i].v);
    }
    for (int i = 0; bad[i] != NULL; i++) {
        v = -7;
        ck_assert_msg(cs_parse_size(bad[i], 0, LLONG_MAX, &v) == CS_ERR_PARSE, "%s", bad[i]);
        ck_assert_int_eq(v, -7);
    }
}
END_TEST

START_TEST(test_size_overflow)
{
    long long v = -7;

    /* 17179869185 G is 2^64 + 2^30: it must not wrap to 1 GiB. */
    ck_assert_int_eq(cs_parse_size("17179869185G", 1, LLONG_MAX, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_size("99999999999999999999", 1, LLONG_MAX, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_size("8589934592G", 1, LLONG_MAX, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_size("8589934591G", 1, LLONG_MAX, &v), 0);
    ck_assert_int_eq(v, 8589934591LL << 30);
    ck_assert_int_eq(cs_parse_size("0", 1, 100, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_size("101", 1, 100, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_size("100", 1, 100, &v), 0);
    ck_assert_int_eq(v, 100);
}
END_TEST

START_TEST(test_integers)
{
    long long v = 0;
    int i = 0;

    ck_assert_int_eq(cs_parse_ll("-12", -100, 100, &v), 0);
    ck_assert_int_eq(v, -12);
    ck_assert_int_eq(cs_parse_ll("+12", -100, 100, &v), 0);
    ck_assert_int_eq(v, 12);
    ck_assert_int_eq(cs_parse_ll("9223372036854775807", 0, LLONG_MAX, &v), 0);
    ck_assert_int_eq(v, LLONG_MAX);
    ck_assert_int_eq(cs_parse_ll("9223372036854775808", 0, LLONG_MAX, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_int("99999999999", 0, INT_MAX, &i), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_int("8abc", 0, INT_MAX, &i), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_int("", 0, INT_MAX, &i), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_int(" 8", 0, INT_MAX, &i), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_int("-", 0, INT_MAX, &i), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_int("1K", 0, INT_MAX, &i), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_int("0", 1, 8, &i), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_int("8", 1, 8, &i), 0);
    ck_assert_int_eq(i, 8);
}
END_TEST

START_TEST(test_reals)
{
    double v = 0;

    ck_assert_int_eq(cs_parse_double("1e-308", 0, 1, &v), 0);
    ck_assert(v == 1e-308);
    ck_assert_int_eq(cs_parse_double("1e-320", 0, 1, &v), 0); /* subnormal */
    ck_assert(v > 0 && v < 1e-300);
    ck_assert_int_eq(cs_parse_double("2.5", 0, 10, &v), 0);
    ck_assert(v == 2.5);
    ck_assert_int_eq(cs_parse_double("1e30", 0, 1e20, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_double("1e400", 0, INFINITY, &v), CS_ERR_INVALID);
    ck_assert_int_eq(cs_parse_double("inf", -INFINITY, INFINITY, &v), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_double("nan", -INFINITY, INFINITY, &v), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_double("1.5x", 0, 10, &v), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_double("", 0, 10, &v), CS_ERR_PARSE);
    ck_assert_int_eq(cs_parse_double(" 1", 0, 10, &v), CS_ERR_PARSE);
    /* decimal only: strtod's hexadecimal and words are no numbers here */
    for (const char *const *bad = (const char *const[]){"0x10", "0X1p3", "1e", "1e+", ".", "+",
                                                        "--1", "1..2", "infinity", "1 ", NULL};
         *bad != NULL; bad++)
        ck_assert_msg(cs_parse_double(*bad, -10, 1e9, &v) == CS_ERR_PARSE, "'%s' accepted", *bad);
    ck_assert_int_eq(cs_parse_double("+.5", 0, 10, &v), 0);
    ck_assert(v == 0.5);
    ck_assert_int_eq(cs_parse_double("5.", 0, 10, &v), 0);
    ck_assert(v == 5);
    ck_assert_int_eq(cs_parse_double("2.5E-1", 0, 10, &v), 0);
    ck_assert(v == 0.25);
    ck_assert_int_eq(cs_parse_double("-1", 0, 10, &v), CS_ERR_INVALID);
    ck_assert_str_eq(cs_parse_why(CS_ERR_INVALID), "is out of range");
    ck_assert_str_eq(cs_parse_why(CS_ERR_PARSE), "is not a number");
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_sizes, 1}, {test_size_overflow, 1}, {test_integers, 1}, {test_reals, 1}, {NULL, 0},
    };

    return test_run("parse", 0, tests, NULL);
}
