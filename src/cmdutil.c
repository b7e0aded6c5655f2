/* cmdutil.c: helpers shared by the subcommands: error printing, help, schedule loading. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "fdio.h"
#include "parse.h"
#include "topo.h"
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

void cmd_print_sched_warnings(const struct cs_sched *sched)
{
    const char *name = sched->path ? sched->path : "<stdin>";

    for (int i = 0; i < sched->nwarnings_kept; i++)
        if (sched->warnings[i].line > 0)
            fprintf(stderr, "%s:%d: warning: %s\n", name, sched->warnings[i].line,
                    sched->warnings[i].msg);
        else /* of the schedule as a whole (a generator's) */
            fprintf(stderr, "%s: warning: %s\n", name, sched->warnings[i].msg);
    if (sched->nwarnings > sched->nwarnings_kept)
        fprintf(stderr, "%s: ... and %d more warnings\n", name,
                sched->nwarnings - sched->nwarnings_kept);
}

/* The copy of stdin a `--platform -` made, and the platform written from a machine's own file,
 * removed at exit (and by fdio on a signal) by the process that made them: a forked worker that
 * exits leaves them to its parent. */
static char stdin_platform[4096], from_platform[4096];
static pid_t stdin_platform_owner, from_platform_owner;

static void remove_stdin_platform(void)
{
    if (getpid() != stdin_platform_owner || stdin_platform[0] == '\0')
        return;
    cs_cleanup_drop(stdin_platform);
    unlink(stdin_platform);
}

static void remove_from_platform(void)
{
    if (getpid() != from_platform_owner || from_platform[0] == '\0')
        return;
    cs_cleanup_drop(from_platform);
    unlink(from_platform);
}

/* path itself when it is not a machine's own file (a topology XML, nvidia-smi output, an INFO
 * log), else a temporary platform written from it (`collsim platform from path`). */
static const char *from_machine(const char *path)
{
    const char *dir = getenv("TMPDIR");
    char head[65536];
    size_t n = 0;
    FILE *fp = cs_fopen_read(path);
    int fd;

    if (fp != NULL) {
        n = fread(head, 1, sizeof(head), fp);
        fclose(fp);
    }
    if (n == 0 || !cs_topo_detect(head, n))
        return path;
    if (from_platform[0] != '\0') {
        cmd_usage_error("--platform %s: one machine's file per run", path);
        return NULL;
    }
    snprintf(from_platform, sizeof(from_platform), "%s/collsim-from-platform-XXXXXX.xml",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    from_platform_owner = getpid();
    if ((fd = cs_cleanup_mkstemps(from_platform, 4)) < 0 || atexit(remove_from_platform) != 0 ||
        close(fd) != 0) {
        cmd_usage_error("--platform %s: cannot write %s: %s", path, from_platform,
                        strerror(errno ? errno : EIO));
        from_platform[0] = '\0';
        return NULL;
    }
    if (cmd_platform_from(&path, 1, from_platform) != 0) {
        remove_from_platform();
        from_platform[0] = '\0';
        return NULL;
    }
    return from_platform;
}

const char *cmd_platform_path(const char *path)
{
    const char *dir = getenv("TMPDIR");
    struct cs_error err;
    char *buf;
    size_t len;
    int fd;

    if (strcmp(path, "-") != 0)
        return from_machine(path);
    if (stdin_platform[0] != '\0')
        return stdin_platform; /* stdin is read once */
    cs_error_init(&err);
    if (cs_file_read("-", CS_XML_MAX_BYTES, &buf, &len, &err) != 0) {
        cmd_print_error(&err);
        return NULL;
    }
    if (len == 0) {
        free(buf);
        cmd_usage_error("--platform -: stdin is empty (a SimGrid platform file was expected)");
        return NULL;
    }
    /* SimGrid loads a platform by its path: stdin goes to a temporary file first. */
    snprintf(stdin_platform, sizeof(stdin_platform), "%s/collsim-stdin-platform-XXXXXX.xml",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    stdin_platform_owner = getpid();
    if ((fd = cs_cleanup_mkstemps(stdin_platform, 4)) < 0 || atexit(remove_stdin_platform) != 0 ||
        cs_fd_write_all(fd, buf, len) != 0 || close(fd) != 0) {
        cmd_usage_error("--platform -: cannot write %s: %s", stdin_platform,
                        strerror(errno ? errno : EIO));
        if (fd >= 0) {
            close(fd);
            remove_stdin_platform();
        }
        stdin_platform[0] = '\0';
        free(buf);
        return NULL;
    }
    free(buf);
    return from_machine(stdin_platform);
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

void cmd_opts_init(struct cmd_opts *t, const char *spec)
{
    char *p = t->names;
    int n = 0;

    assert(strlen(spec) < sizeof(t->names));
    strcpy(t->names, spec);
    while (*(p += strspn(p, " ")) != '\0') {
        char *eq = strchr(p, '=');
        int arg;

        assert(eq != NULL && eq[1] != '\0' && n < CMD_MAX_OPTS);
        *eq = '\0';
        arg = eq[2] == ':';
        t->opt[n++] = (struct option){p, arg ? required_argument : no_argument, NULL, eq[1]};
        p = eq + 2 + arg;
        assert(*p == ' ' || *p == '\0');
        if (*p == ' ')
            *p++ = '\0';
    }
    t->opt[n] = (struct option){NULL, 0, NULL, 0};
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
