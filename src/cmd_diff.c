/* cmd_diff.c: `collsim diff`: compare two schedules up to dependency order. */
#include <stdio.h>

#include "cmd.h"
#include "diff.h"

const char cmd_diff_usage[] =
    "usage: collsim diff A.xml B.xml\n"
    "\n"
    "Compare two schedules. Each real step's dependencies count as a set (its own plus those of\n"
    "the nops before it), since msccl-tools orders them arbitrarily. Exit 0 when equal; 1 when\n"
    "they differ, naming the first difference (GPU, threadblock, step, attribute, both values);\n"
    "2 when a file cannot be read.\n";

int cmd_diff(int argc, char **argv)
{
    struct cs_sched *s[2];
    struct cs_sched_diff d;
    int rc = cmd_load_scheds(argc, argv, 2, "two schedule files", s);

    if (rc != 0)
        return rc;
    rc = cs_sched_compare(s[0], s[1], &d);
    if (rc) {
        printf("%s and %s differ at ", argv[1], argv[2]);
        if (d.gpu < 0)
            printf("algo");
        else if (d.tb < 0)
            printf("gpu %d", d.gpu);
        else if (d.step < 0)
            printf("gpu %d tb %d", d.gpu, d.tb);
        else
            printf("gpu %d tb %d step %d", d.gpu, d.tb, d.step);
        printf(": %s: %s vs %s\n", d.attr, d.a, d.b);
    }
    cs_sched_free(s[0]);
    cs_sched_free(s[1]);
    return rc ? CS_EXIT_NEGATIVE : CS_EXIT_OK;
}
