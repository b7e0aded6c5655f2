/* cmd_fmt.c: `collsim fmt`: read a schedule and print it back as MSCCL XML. */
#include <stdio.h>

#include "cmd.h"
#include "xml.h"

const char cmd_fmt_usage[] =
    "usage: collsim fmt FILE\n"
    "\n"
    "Read an MSCCL XML schedule (FILE, or - for stdin) and print it back in the form msccl-tools\n"
    "writes. For a file written by msccl-tools the output is byte-identical to the input. Any\n"
    "file the reader can parse is printed, valid or not (`collsim verify` checks it); attributes\n"
    "collsim does not know are left out, with a warning on stderr.\n";

int cmd_fmt(int argc, char **argv)
{
    struct cs_sched *sched;
    struct cs_error err;
    int rc = cmd_load_scheds(argc, argv, 1, "one schedule file (or -)", &sched);

    if (rc != 0)
        return rc;
    cmd_print_sched_warnings(sched);
    cs_error_init(&err);
    rc = cs_sched_write_xml_file(sched, "-", &err);
    cs_sched_free(sched);
    if (rc != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}
