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

/* A subcommand: takes argv with argv[0] the subcommand name, returns an exit code. */
struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage; /* full help text, printed by `collsim help NAME` and `NAME --help` */
};

/* The table, NULL-terminated (main.c). */
extern const struct cmd cs_cmds[];

/* Print "collsim: <err>" on stderr. */
void cmd_print_error(const struct cs_error *err);
/* Print "collsim: <fmt...>" on stderr and return CS_EXIT_USAGE. */
int cmd_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a subcommand's usage text on stdout. */
void cmd_print_help(const char *name);
/* Read a schedule from a path, or from stdin when path is "-". Prints the error and returns NULL
 * on failure. */
struct cs_sched *cmd_load_sched(const char *path);
/* For a command that takes exactly n schedule files, argv[1..n]: read them into out[0..n-1].
 * On a wrong count prints "collsim: CMD takes WHAT; see 'collsim help CMD'"; on a bad file its
 * error. 0, or CS_EXIT_USAGE with nothing to free. */
int cmd_load_scheds(int argc, char **argv, int n, const char *what, struct cs_sched **out);
/* True when argv holds -h or --help before any "--". */
int cmd_wants_help(int argc, char **argv);

/* getopt_long for a subcommand (argv[0] its name), with collsim's messages. Call with
 * *started = 0 before the first option (it restarts getopt's scan); returns the option's value
 * (its short letter, or the `val` of a long option), -1 at the end of the options (positional
 * arguments then start at optind; GNU permutation moves them there), or '?' after printing
 * "collsim: CMD: unknown option '-x'" or "option '--y' needs a value" (return CS_EXIT_USAGE then).
 * Values may be attached: -b1K, --minbytes=1K. */
int cmd_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
               int *started);

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

/* Each command's usage text, beside its code (cmd_NAME.c). */
extern const char cmd_fmt_usage[];
extern const char cmd_info_usage[];
extern const char cmd_calibrate_usage[];
extern const char cmd_validate_usage[];
extern const char cmd_verify_usage[];
extern const char cmd_gen_usage[];
extern const char cmd_diff_usage[];
extern const char cmd_platform_usage[];
extern const char cmd_predict_usage[];
extern const char cmd_sweep_usage[];
extern const char cmd_tune_usage[];
extern const char cmd_regress_usage[];
extern const char cmd_plot_usage[];

int cmd_fmt(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_platform(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_regress(int argc, char **argv);
int cmd_plot(int argc, char **argv);

#endif
