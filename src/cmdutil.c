/* cmdutil.c: helpers shared by the subcommands: error printing, help, schedule loading. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
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

void cmd_print_help(const char *name)
{
    for (const struct cmd *c = cs_cmds; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            fputs(c->usage, stdout);
}

int cmd_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

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
