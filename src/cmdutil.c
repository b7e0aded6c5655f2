/* cmdutil.c: helpers shared by the subcommands: error printing, help, schedule loading. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "parse.h"
#include "xml.h"

void cmd_print_error(const struct cs_error *err)
{
    char buf[2048];

    fprintf(stderr, "collsim: %s\n", cs_error_format(err, buf, sizeof(buf)));
}

int cmd_usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("collsim: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CS_EXIT_USAGE;
}

/* Read a schedule from a path, or from stdin when path is "-"; prints the error. */
struct cs_sched *cmd_load_sched(const char *path)
{
    struct cs_error err;
    struct cs_sched *sched = NULL;

    cs_error_init(&err);
    if (cs_sched_read_xml(path, &sched, &err) != 0) {
        cmd_print_error(&err);
        return NULL;
    }
    return sched;
}

int cmd_load_scheds(int argc, char **argv, int n, const char *what, struct cs_sched **out)
{
    if (argc != n + 1)
        return cmd_usage_error("%s takes %s; see 'collsim help %s'", argv[0], what, argv[0]);
    for (int i = 0; i < n; i++) {
        out[i] = cmd_load_sched(argv[i + 1]);
        if (out[i] == NULL) {
            while (i-- > 0)
                cs_sched_free(out[i]);
            return CS_EXIT_USAGE;
        }
    }
    return 0;
}

const char *cmd_opt_long_name(const struct option *longopts, int val)
{
    for (const struct option *o = longopts; o->name != NULL; o++)
        if (o->val == val)
            return o->name;
    return NULL;
}

/* The option that getopt_long just refused, as the user wrote it: "--name" (abbreviations
 * completed) or "-x". A refused long option is always argv[optind - 1]; a short one may sit inside
 * a cluster, where optind has not moved on, so a "--" word there names it only when it is the
 * option getopt reports in optopt (0 for an unknown long option). Returns 1 for a known long
 * option (refused for a missing value, or for one it does not take), else 0. */
static int refused_name(char *buf, size_t len, char **argv, const struct option *longopts)
{
    const char *a = argv[optind - 1];
    size_t n = strcspn(a, "=");

    if (strncmp(a, "--", 2) == 0) {
        for (const struct option *o = longopts; o != NULL && o->name != NULL; o++)
            if (o->val == optopt && n > 2 && strncmp(o->name, a + 2, n - 2) == 0) {
                snprintf(buf, len, "--%s", o->name);
                return 1;
            }
        if (optopt == 0) {
            snprintf(buf, len, "%.*s", (int)(n < 80 ? n : 80), a);
            return 0;
        }
    }
    if (optopt > 0 && optopt < 128 && isgraph(optopt))
        snprintf(buf, len, "-%c", optopt);
    else
        snprintf(buf, len, "%.80s", a);
    return 0;
}

int cmd_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
               int *started)
{
    char spec[128], name[96];
    int c, known;

    /* A leading ':' makes getopt report a missing value apart from an unknown option, and
     * opterr = 0 leaves every message to us. */
    snprintf(spec, sizeof(spec), ":%s", shortopts);
    if (!*started) {
        optind = 0; /* glibc: rescan from argv[1], forgetting any earlier command's state */
        *started = 1;
    }
    opterr = 0;
    c = getopt_long(argc, argv, spec, longopts, NULL);
    if (c != '?' && c != ':')
        return c;
    known = refused_name(name, sizeof(name), argv, longopts);
    if (c == '?' && known)
        cmd_usage_error("%s: option '%s' takes no value; see 'collsim help %s'", argv[0], name,
                        argv[0]);
    else if (c == '?')
        cmd_usage_error("%s: unknown option '%s'; see 'collsim help %s'", argv[0], name, argv[0]);
    else
        cmd_usage_error("%s: option '%s' needs a value; see 'collsim help %s'", argv[0], name,
                        argv[0]);
    return '?';
}

int cmd_getopts(int argc, char **argv, const char *shortopts, const struct option *longopts,
                int (*take)(void *ctx, int c, const char *value), void *ctx)
{
    int c, started = 0, rc;

    while ((c = cmd_getopt(argc, argv, shortopts, longopts, &started)) != -1) {
        if (c == '?')
            return CS_EXIT_USAGE;
        if ((rc = take(ctx, c, optarg)) != 0)
            return rc;
    }
    return 0;
}

/* 0 when a parse.h parser returned 0, else the option's error printed and CS_EXIT_USAGE. */
static int opt_check(int code, const char *opt, const char *val, const char *what)
{
    return code ? cmd_usage_error("%s: '%s' %s (%s)", opt, val, cs_parse_why(code), what) : 0;
}

int cmd_opt_size(const char *opt, const char *val, long long min, long long max, long long *out,
                 const char *what)
{
    return opt_check(cs_parse_size(val, min, max, out), opt, val, what);
}

int cmd_opt_ll(const char *opt, const char *val, long long min, long long max, long long *out,
               const char *what)
{
    return opt_check(cs_parse_ll(val, min, max, out), opt, val, what);
}

int cmd_opt_int(const char *opt, const char *val, int min, int max, int *out, const char *what)
{
    return opt_check(cs_parse_int(val, min, max, out), opt, val, what);
}

int cmd_opt_double(const char *opt, const char *val, double min, double max, double *out,
                   const char *what)
{
    return opt_check(cs_parse_double(val, min, max, out), opt, val, what);
}
