/* cmd_diff.c: `collsim diff`: compare two schedules up to dependency order. */
#include <stdio.h>

#include "cmd.h"
#include "diff.h"

const char cmd_diff_usage[] =
    "usage: collsim diff [--ignore ATTR]... [--max-differences N] A.xml B.xml\n"
    "\n"
    "Compare two schedules. Each real step's dependencies count as a set (its own plus those of\n"
    "the nops before it), since msccl-tools orders them arbitrarily. Every difference is one\n"
    "line (GPU, threadblock, step, attribute, both values), at most N of them (default 20; the\n"
    "rest are counted); where GPU, threadblock or step counts differ, the common part is\n"
    "compared. --ignore leaves an attribute out (name, minBytes, maxBytes, outofplace, ...;\n"
    "repeatable). Exit 0 when equal; 1 when they differ; 2 when a file cannot be read.\n";

#define MAX_IGNORE 32

struct show {
    const char *a, *b;
    long shown, max;
};

static void show_diff(void *ctx, const struct cs_sched_diff *d)
{
    struct show *s = ctx;

    if (s->shown++ >= s->max)
        return;
    printf("%s and %s differ at ", s->a, s->b);
    if (d->gpu < 0)
        printf("algo");
    else if (d->tb < 0)
        printf("gpu %d", d->gpu);
    else if (d->step < 0)
        printf("gpu %d tb %d", d->gpu, d->tb);
    else
        printf("gpu %d tb %d step %d", d->gpu, d->tb, d->step);
    printf(": %s: %s vs %s\n", d->attr, d->a, d->b);
}

int cmd_diff(int argc, char **argv)
{
    const char *ignore[MAX_IGNORE];
    struct cs_diff_opts o = {ignore, 0};
    struct show show = {NULL, NULL, 0, 20};
    struct cs_sched *s[2] = {NULL, NULL};
    int c, started = 0, max = 20;
    long n;
    struct cmd_opts t;

    cmd_opts_init(&t, "ignore=i: max-differences=m:");
    while ((c = cmd_getopt(argc, argv, "", t.opt, &started)) != -1) {
        if (c == 'i' && o.nignore == MAX_IGNORE)
            return cmd_usage_error("diff: at most %d --ignore", MAX_IGNORE);
        if (c == 'i')
            ignore[o.nignore++] = optarg;
        else if (c != 'm' || cmd_opt_int("--max-differences", optarg, 1, 1000000000, &max,
                                         "a number from 1 to 1e9") != 0)
            return CS_EXIT_USAGE;
    }
    if (argc - optind != 2)
        return cmd_usage_error("diff takes two schedule files; see 'collsim help diff'");
    for (int i = 0; i < 2; i++)
        if ((s[i] = cmd_load_sched(argv[optind + i])) == NULL) {
            cs_sched_free(s[0]);
            return CS_EXIT_USAGE;
        }
    show.a = argv[optind];
    show.b = argv[optind + 1];
    show.max = max;
    n = cs_sched_compare_all(s[0], s[1], &o, show_diff, &show, NULL);
    if (n > max)
        printf("... and %ld more difference%s (--max-differences N shows more)\n", n - max,
               n - max > 1 ? "s" : "");
    cs_sched_free(s[0]);
    cs_sched_free(s[1]);
    return n ? CS_EXIT_NEGATIVE : CS_EXIT_OK;
}
