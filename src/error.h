/* error.h: error codes and the error record that carries a message with its file and line. */
#ifndef CS_ERROR_H
#define CS_ERROR_H

/* Fallible functions return 0 or one of these. */
enum {
    CS_OK = 0,
    CS_ERR_NOMEM = -1,   /* allocation failed */
    CS_ERR_IO = -2,      /* a file could not be opened, read or written */
    CS_ERR_PARSE = -3,   /* malformed input (XML, CSV, option values) */
    CS_ERR_INVALID = -4, /* well-formed input that breaks a rule of the model */
    CS_ERR_USAGE = -5,   /* a caller asked for something that cannot work */
    CS_ERR_SIM = -6,     /* the simulation could not be set up or run */
};

/* Where and why a call failed. `file` may be empty, `line` 0 when unknown. */
struct cs_error {
    char file[512];
    int line;
    char msg[1024];
};

/* Clear an error record. */
void cs_error_init(struct cs_error *err);

/* Record a failure. No-op when err is NULL or already holds a message (the first failure wins). */
void cs_error_set(struct cs_error *err, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record a failure as cs_error_set does and return code, so a failing path is one statement. */
int cs_error_fail(struct cs_error *err, int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Format "file:line: msg" (or the parts that are known) into buf. Returns buf. */
const char *cs_error_format(const struct cs_error *err, char *buf, unsigned long len);

/* A short English name of an error code. */
const char *cs_error_name(int code);

#endif
