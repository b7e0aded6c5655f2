/* main.c: the collsim program: dispatches subcommands, git style. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "fdio.h"
#include "gitsha.h" /* CS_BUILD_GIT_SHA: the commit make saw (Makefile.am writes it) */
#include "replay.h"
#include "xml.h"

/* A subcommand: its name, entry point, one-line summary and full help text. */
static const struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage;
} cmds[] = {
#define CMD_ENTRY(name, summary) {#name, cmd_##name, summary, cmd_##name##_usage},
    CS_CMDS(CMD_ENTRY)};
#define CMDS_END (cmds + sizeof(cmds) / sizeof(cmds[0]))

/* A command's name as typed: its C name with '-' for '_' (buf holds 32 bytes). */
static const char *cmd_name(const struct cmd *c, char *buf)
{
    snprintf(buf, 32, "%s", c->name);
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = '-';
    return buf;
}

static void print_main_help(void)
{
    printf("usage: collsim [--version] [--help] COMMAND [ARGS]\n"
           "\n"
           "collsim simulates GPU collective schedules (MSCCL XML) on SimGrid models of A100\n"
           "fabrics: it checks them, generates them and predicts how long they take.\n"
           "\n"
           "Commands:\n");
    for (const struct cmd *c = cmds; c < CMDS_END; c++) {
        char buf[32];

        printf("  %-10s %s\n", cmd_name(c, buf), c->summary);
    }
    printf("\n"
           "'collsim help COMMAND' or 'collsim COMMAND --help' describes one command.\n"
           "Exit status: 0 success; 1 valid input but a negative answer (verify found errors,\n"
           "a prediction deadlocked); 2 usage errors and unreadable or invalid input.\n");
}

static const struct cmd *find_cmd(const char *name)
{
    char buf[32];

    for (const struct cmd *c = cmds; c < CMDS_END; c++)
        if (strcmp(cmd_name(c, buf), name) == 0)
            return c;
    return NULL;
}

/* True when argv holds -h or --help before any "--". */
static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

/* Exit code rc, unless stdout or stderr lost output: then 2, after saying so where possible (a
 * command that exits 0 or 1 must not hide a full disk or another write error). */
static int finish(int rc)
{
    struct cs_error err;

    cs_error_init(&err);
    if (cs_stream_check(stdout, "<stdout>", &err) != 0) {
        cmd_print_error(&err);
        rc = CS_EXIT_USAGE;
    }
    if (cs_stream_check(stderr, "<stderr>", NULL) != 0)
        rc = CS_EXIT_USAGE;
    return rc;
}

static int run(int argc, char **argv)
{
    const struct cmd *c;
    int help;

    if (argc < 2) {
        print_main_help();
        return CS_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_main_help();
        return CS_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        char sg[32];

        cs_replay_simgrid_version(sg, sizeof(sg));
        printf("collsim %s (git %s)\nSimGrid %s, libxml2 %s\n", PACKAGE_VERSION, CS_BUILD_GIT_SHA,
               sg, cs_xml_library_version());
        return CS_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0 && argc < 3) {
        print_main_help();
        return CS_EXIT_OK;
    }
    help = strcmp(argv[1], "help") == 0;
    if ((c = find_cmd(argv[1 + help])) == NULL)
        return cmd_usage_error("'%s' is not a collsim command; see 'collsim --help'",
                               argv[1 + help]);
    if (help || wants_help(argc - 1, argv + 1)) {
        fputs(c->usage, stdout);
        return CS_EXIT_OK;
    }
    return c->run(argc - 1, argv + 1);
}

/* Standard streams closed at start (`>&-`): each is opened on /dev/null, so that no file collsim
 * opens lands on fd 0, 1 or 2 (a lock file on fd 1 would receive the output), and a closed stdout
 * or stderr is an error: exit 2, said on the other stream where it is open. */
static int streams_open(void)
{
    int closed[3] = {0};

    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            closed[fd] = 1;
            if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
                return CS_EXIT_USAGE;
        }
    if (closed[1] && !closed[2])
        fputs("collsim: standard output is closed\n", stderr);
    if (closed[2] && !closed[1])
        fputs("collsim: standard error is closed\n", stdout);
    return closed[1] || closed[2] ? CS_EXIT_USAGE : 0;
}

int main(int argc, char **argv)
{
    int rc = streams_open();

    if (rc != 0)
        return rc;
    return finish(run(argc, argv));
}
