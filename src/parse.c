/* parse.c: numbers from text with range and overflow checks (sizes, integers, reals). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "parse.h"

/* Multiplier of a unit suffix: "", K, Ki, KB, KiB (and M, G, T), any case; 0 when unknown. */
static long long unit_mul(const char *u)
{
    static const char letters[] = "KMGT";
    const char *p;
    long long mul = 1;

    if (*u == '\0')
        return 1;
    p = strchr(letters, toupper((unsigned char)*u));
    if (p == NULL)
        return 0;
    for (const char *q = letters; q <= p; q++)
        mul *= 1024;
    u++;
    if (*u == 'i' || *u == 'I')
        u++;
    if (*u == 'B' || *u == 'b')
        u++;
    return *u == '\0' ? mul : 0;
}

int cs_parse_size(const char *s, long long min, long long max, long long *out)
{
    unsigned long long v;
    long long mul;
    char *end;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return CS_ERR_PARSE;
    errno = 0;
    v = strtoull(s, &end, 10);
    mul = unit_mul(end);
    if (mul == 0)
        return CS_ERR_PARSE;
    if (errno == ERANGE || v > (unsigned long long)LLONG_MAX / (unsigned long long)mul)
        return CS_ERR_INVALID;
    v *= (unsigned long long)mul;
    if ((long long)v < min || (long long)v > max)
        return CS_ERR_INVALID;
    *out = (long long)v;
    return 0;
}

int cs_parse_ll(const char *s, long long min, long long max, long long *out)
{
    long long v;
    char *end;

    if (s == NULL || (!isdigit((unsigned char)s[0]) &&
                      !((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))))
        return CS_ERR_PARSE;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (*end != '\0')
        return CS_ERR_PARSE;
    if (errno == ERANGE || v < min || v > max)
        return CS_ERR_INVALID;
    *out = v;
    return 0;
}

int cs_parse_int(const char *s, int min, int max, int *out)
{
    long long v;
    int rc = cs_parse_ll(s, min, max, &v);

    if (rc == 0)
        *out = (int)v;
    return rc;
}

/* A decimal number as people write one: [+-] digits [. digits] [(e|E) [+-] digits], with a digit
 * before or after the point; no hexadecimal (strtod's 0x10), inf or nan. */
static int decimal(const char *s)
{
    int digits = 0;

    s += *s == '+' || *s == '-';
    for (; isdigit((unsigned char)*s); s++)
        digits++;
    if (*s == '.')
        for (s++; isdigit((unsigned char)*s); s++)
            digits++;
    if (digits == 0)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        if (!isdigit((unsigned char)*s))
            return 0;
        while (isdigit((unsigned char)*s))
            s++;
    }
    return *s == '\0';
}

int cs_parse_double(const char *s, double min, double max, double *out)
{
    double v;
    char *end;

    if (s == NULL || *s == '\0' || isspace((unsigned char)*s) || !decimal(s))
        return CS_ERR_PARSE;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0')
        return CS_ERR_PARSE;
    /* ERANGE with a finite result is underflow (1e-400 -> 0 or a subnormal): a number still;
     * with an infinite one, overflow (1e400). A written inf or nan is no number. */
    if (!isfinite(v))
        return errno == ERANGE ? CS_ERR_INVALID : CS_ERR_PARSE;
    if (v < min || v > max)
        return CS_ERR_INVALID;
    *out = v;
    return 0;
}

const char *cs_parse_why(int code)
{
    return code == CS_ERR_INVALID ? "is out of range" : "is not a number";
}
