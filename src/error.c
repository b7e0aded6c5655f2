/* error.c: error records with file and line. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cs_error_init(struct cs_error *err)
{
    if (err == NULL)
        return;
    err->file[0] = '\0';
    err->line = 0;
    err->msg[0] = '\0';
}

static void verror_set(struct cs_error *err, const char *file, int line, const char *fmt,
                       va_list ap) __attribute__((format(printf, 4, 0)));

static void verror_set(struct cs_error *err, const char *file, int line, const char *fmt,
                       va_list ap)
{
    if (err == NULL || err->msg[0] != '\0')
        return;
    snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
    err->line = line;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

void cs_error_set(struct cs_error *err, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verror_set(err, file, line, fmt, ap);
    va_end(ap);
}

int cs_error_fail(struct cs_error *err, int code, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verror_set(err, file, line, fmt, ap);
    va_end(ap);
    return code;
}

const char *cs_error_format(const struct cs_error *err, char *buf, unsigned long len)
{
    if (err->file[0] != '\0' && err->line > 0)
        snprintf(buf, len, "%s:%d: %s", err->file, err->line, err->msg);
    else if (err->file[0] != '\0')
        snprintf(buf, len, "%s: %s", err->file, err->msg);
    else
        snprintf(buf, len, "%s", err->msg);
    return buf;
}

const char *cs_error_name(int code)
{
    switch (code) {
    case CS_OK:
        return "success";
    case CS_ERR_NOMEM:
        return "out of memory";
    case CS_ERR_IO:
        return "input/output error";
    case CS_ERR_PARSE:
        return "malformed input";
    case CS_ERR_INVALID:
        return "invalid input";
    case CS_ERR_USAGE:
        return "usage error";
    case CS_ERR_SIM:
        return "simulation error";
    default:
        return "unknown error";
    }
}
