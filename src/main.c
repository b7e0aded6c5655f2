/* main.c: the collsim program: dispatches subcommands, git style. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"

const struct cmd cs_cmds[] = {
    {"fmt", cmd_fmt, "print a schedule back as MSCCL XML", cmd_fmt_usage},
    {"info", cmd_info, "summarise a schedule", cmd_info_usage},
    {"calibrate", cmd_calibrate, "fit platform parameters to measurements", cmd_calibrate_usage},
    {"validate", cmd_validate, "compare predictions with measurements", cmd_validate_usage},
    {"verify", cmd_verify, "check a schedule's structure and data", cmd_verify_usage},
    {"gen", cmd_gen, "generate a schedule (hierarchical, ring, allpairs)", cmd_gen_usage},
    {"diff", cmd_diff, "compare two schedules up to dependency order", cmd_diff_usage},
    {"platform", cmd_platform, "write a SimGrid platform file for an A100 machine",
     cmd_platform_usage},
    {"predict", cmd_predict, "predict a schedule's time per buffer size on a platform",
     cmd_predict_usage},
    {"sweep", cmd_sweep, "run a what-if sweep of predictions", cmd_sweep_usage},
    {"tune", cmd_tune, "pick the fastest schedule per size range from a sweep", cmd_tune_usage},
    {"regress", cmd_regress, "re-run a baseline of predictions and report what moved",
     cmd_regress_usage},
    {"plot", cmd_plot, "draw prediction or sweep CSVs with gnuplot", cmd_plot_usage},
    {NULL, NULL, NULL, NULL},
};

static void print_main_help(void)
{
    printf("usage: collsim [--version] [--help] COMMAND [ARGS]\n"
           "\n"
           "collsim simulates GPU collective schedules (MSCCL XML) on SimGrid models of A100\n"
           "fabrics: it checks them, generates them and predicts how long they take.\n"
           "\n"
           "Commands:\n");
    for (const struct cmd *c = cs_cmds; c->name != NULL; c++)
        printf("  %-10s %s\n", c->name, c->summary);
    printf("\n"
           "'collsim help COMMAND' or 'collsim COMMAND --help' describes one command.\n"
           "Exit status: 0 success; 1 valid input but a negative answer (verify found errors,\n"
           "a prediction deadlocked); 2 usage errors and unreadable or invalid input.\n");
}

static const struct cmd *find_cmd(const char *name)
{
    for (const struct cmd *c = cs_cmds; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

int main(int argc, char **argv)
{
    const struct cmd *c;

    if (argc < 2) {
        print_main_help();
        return CS_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_main_help();
        return CS_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("collsim %s\n", PACKAGE_VERSION);
        return CS_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) {
            print_main_help();
            return CS_EXIT_OK;
        }
        if (find_cmd(argv[2]) == NULL)
            return cmd_usage_error("'%s' is not a collsim command; see 'collsim --help'", argv[2]);
        cmd_print_help(argv[2]);
        return CS_EXIT_OK;
    }
    c = find_cmd(argv[1]);
    if (c == NULL)
        return cmd_usage_error("'%s' is not a collsim command; see 'collsim --help'", argv[1]);
    if (cmd_wants_help(argc - 1, argv + 1)) {
        cmd_print_help(c->name);
        return CS_EXIT_OK;
    }
    return c->run(argc - 1, argv + 1);
}
