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
    struct cs_sched *a, *b;
    struct cs_sched_diff d;
    int rc;

    if (argc != 3)
        return cmd_usage_error("diff takes two schedule files; see 'collsim help diff'");
    a = cmd_load_sched(argv[1]);
    if (a == NULL)
        return CS_EXIT_USAGE;
    b = cmd_load_sched(argv[2]);
    if (b == NULL) {
        cs_sched_free(a);
        return CS_EXIT_USAGE;
    }
    rc = cs_sched_compare(a, b, &d);
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
    cs_sched_free(a);
    cs_sched_free(b);
    return rc ? CS_EXIT_NEGATIVE : CS_EXIT_OK;
}
