/* cmd.h: the subcommands of the collsim program and the helpers they share. */
#ifndef CS_CMD_H
#define CS_CMD_H

#include <getopt.h>

#include "error.h"
#include "sched.h"

/* Exit codes shared by every subcommand. */
enum {
    CS_EXIT_OK = 0,       /* success */
    CS_EXIT_NEGATIVE = 1, /* valid input, negative answer (verify failed, prediction deadlocked) */
    CS_EXIT_USAGE = 2,    /* usage error, or unreadable or invalid input */
};

/* The subcommands in `collsim --help` order: X(NAME, SUMMARY) for each; a '_' in NAME is a '-'
 * on the command line (nccl_log is `collsim nccl-log`). */
#define CS_CMDS(X)                                                                                 \
    X(fmt, "print a schedule back as MSCCL XML")                                                   \
    X(info, "summarise a schedule")                                                                \
    X(calibrate, "fit platform parameters to measurements")                                        \
    X(validate, "compare predictions with measurements")                                           \
    X(verify, "check a schedule's structure and data")                                             \
    X(gen, "generate a schedule (hierarchical, ring, allpairs, nccl)")                             \
    X(diff, "compare two schedules up to dependency order")                                        \
    X(tracediff, "compare a measured trace with a predicted one step by step")                     \
    X(platform, "write a SimGrid platform file for an A100 or Hopper machine")                     \
    X(nccl_log, "print what an NCCL INFO log says (version, ranks, rings, transports)")            \
    X(predict, "predict a schedule's time per buffer size on a platform")                          \
    X(sweep, "run a what-if sweep of predictions")                                                 \
    X(tune, "pick the fastest schedule per size range from a sweep")                               \
    X(regress, "re-run a baseline of predictions and report what moved")                           \
    X(plot, "draw prediction or sweep CSVs with gnuplot")

/* Each command, in cmd_NAME.c: its entry point (argv[0] the command's name; returns an exit code)
 * and its full help text, printed by `collsim help NAME` and `NAME --help`. */
#define CS_CMD_DECLARE(name, summary)                                                              \
    int cmd_##name(int argc, char **argv);                                                         \
    extern const char cmd_##name##_usage[];
CS_CMDS(CS_CMD_DECLARE)

/* Print "collsim: <err>" on stderr. */
void cmd_print_error(const struct cs_error *err);
/* The reader's warnings of sched (unknown attributes, ...) on stderr, FILE:LINE: warning: ... */
void cmd_print_sched_warnings(const struct cs_sched *sched);
/* Print "collsim: <fmt...>" on stderr and return CS_EXIT_USAGE. */
int cmd_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Read a schedule from a path, or stdin for "-"; NULL after printing the error. */
struct cs_sched *cmd_load_sched(const char *path);

/* The platform file an option names: path itself, or for "-" a temporary copy of stdin
 * (SimGrid loads platforms by path), removed at exit and when SIGINT, SIGTERM or SIGHUP kills the
 * process; stdin is read once. A machine's own file (topo.h: a topology XML, nvidia-smi output,
 * an INFO log) becomes a temporary platform written from it the same way. NULL after printing why
 * (empty stdin, a read or write error). */
const char *cmd_platform_path(const char *path);

/* Write the platform of a machine's own files (`collsim platform from FILE...`, its defaults)
 * to out. 0, or CS_EXIT_USAGE after printing why. */
int cmd_platform_from(const char *const *files, int n, const char *out);

/* For a command that takes exactly n schedule files, argv[1..n]: read them into out[0..n-1].
 * On a wrong count prints "collsim: CMD takes WHAT; see 'collsim help CMD'"; on a bad file its
 * error. 0, or CS_EXIT_USAGE with nothing to free. */
int cmd_load_scheds(int argc, char **argv, int n, const char *what, struct cs_sched **out);

/* getopt_long for a subcommand (argv[0] its name), with collsim's messages. Call with
 * *started = 0 before the first option (it restarts getopt's scan); returns the option's value
 * (its short letter, or the `val` of a long option), -1 at the end of the options (positional
 * arguments then start at optind; GNU permutation moves them there), or '?' after printing
 * "collsim: CMD: unknown option '-x'" or "option '--y' needs a value" (return CS_EXIT_USAGE then).
 * Values may be attached: -b1K, --minbytes=1K. */
int cmd_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
               int *started);

/* Run cmd_getopt over argv, handing each option's value (its optarg, or NULL) to
 * take(ctx, c, value); positional arguments then start at optind. 0, or the first nonzero exit
 * code: take's, or CS_EXIT_USAGE after cmd_getopt's message. */
int cmd_getopts(int argc, char **argv, const char *shortopts, const struct option *longopts,
                int (*take)(void *ctx, int c, const char *value), void *ctx);

/* A getopt_long table built from a spec of space-separated NAME=V words, V the option's value (a
 * character outside the command's short options) followed by ':' when the option takes a value,
 * as in getopt's short options: "link=l: robust=R". opt ends with a row of zeros. (predict, sweep
 * and regress, whose long-only options have named values above 255, keep struct option tables.) */
#define CMD_MAX_OPTS 64
struct cmd_opts {
    struct option opt[CMD_MAX_OPTS + 1];
    char names[1024]; /* the spec, cut into the options' names */
};
/* Fill t from spec (a literal in the command's code: a malformed one is an assert). */
void cmd_opts_init(struct cmd_opts *t, const char *spec);

/* The long name of the option whose getopt value is val, or NULL. */
const char *cmd_opt_long_name(const struct option *longopts, int val);

/* Parse an option's value with src/parse.h; on failure print "collsim: OPT: 'VAL' is not a
 * number (WHAT)" or "... is out of range (WHAT)" and return CS_EXIT_USAGE; 0 on success. `what`
 * says what is expected, e.g. "a size such as 64K or 1G, at most 1T". */
int cmd_opt_size(const char *opt, const char *val, long long min, long long max, long long *out,
                 const char *what);
int cmd_opt_ll(const char *opt, const char *val, long long min, long long max, long long *out,
               const char *what);
int cmd_opt_int(const char *opt, const char *val, int min, int max, int *out, const char *what);
int cmd_opt_double(const char *opt, const char *val, double min, double max, double *out,
                   const char *what);

#endif
