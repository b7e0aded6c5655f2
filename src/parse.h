/* parse.h: numbers from command lines and text files: byte sizes with unit suffixes, integers and
 * reals, each checked for range and overflow. The one parser every command and reader uses. */
#ifndef CS_PARSE_H
#define CS_PARSE_H

#ifdef __cplusplus
extern "C" {
#endif

/* A byte count: decimal digits, then optionally a unit K, M, G or T (powers of 1024, as
 * nccl-tests reads -b and -e), in either case, written as K, Ki, KB or KiB; blanks around the
 * number are refused. 0 and *out, or CS_ERR_PARSE when s is not such a count, or CS_ERR_INVALID
 * when it overflows or lies outside [min, max]; *out is written only on success. */
int cs_parse_size(const char *s, long long min, long long max, long long *out);

/* A decimal integer (optional sign, no suffix) within [min, max]. 0, CS_ERR_PARSE or
 * CS_ERR_INVALID (out of range, overflow included). */
int cs_parse_ll(const char *s, long long min, long long max, long long *out);
int cs_parse_int(const char *s, int min, int max, int *out);

/* A finite real number (strtod syntax, subnormals and underflow to a tiny value allowed) within
 * [min, max]. 0, CS_ERR_PARSE (not a number, inf, nan, trailing text) or CS_ERR_INVALID. */
int cs_parse_double(const char *s, double min, double max, double *out);

/* An English phrase for a failed parse, to follow the value in a message: "is not a number",
 * "is out of range". */
const char *cs_parse_why(int code);

#ifdef __cplusplus
}
#endif

#endif
