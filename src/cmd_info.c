/* cmd_info.c: `collsim info`: a summary of a schedule's shape, and whether verify accepts it. */
#include <stdio.h>

#include "cmd.h"
#include "verify.h"

const char cmd_info_usage[] =
    "usage: collsim info FILE\n"
    "\n"
    "Summarise an MSCCL XML schedule (FILE, or - for stdin): collective, protocol, GPUs,\n"
    "channels, chunks per loop, threadblocks per GPU, steps per threadblock, step types and\n"
    "connections. Any file the reader can parse is summarised, valid or not (48 channels, a\n"
    "missing dependency); then the verdict of `collsim verify` (default options), and on\n"
    "stderr its first 10 problems, FILE:LINE: message (`collsim verify FILE` lists them all).\n"
    "\n"
    "Exit status, as verify's: 0 the schedule is correct; 1 it computes the wrong data; 2 it\n"
    "is unreadable or structurally invalid.\n";

/* Problems info shows; verify shows the rest. */
#define INFO_MAX_PROBLEMS 10

static void print_summary(const struct cs_sched *sched)
{
    long types[CS_STEP_NOP + 1] = {0};
    int min_tbs = -1, max_tbs = 0, max_steps = 0, max_cnt = 0, nconn = 0;
    long nsteps = 0, ntbs = 0;

    for (int g = 0; g < sched->ngpus_alloc; g++) {
        const struct cs_gpu *gpu = &sched->gpus[g];

        if (min_tbs < 0 || gpu->ntbs < min_tbs)
            min_tbs = gpu->ntbs;
        if (gpu->ntbs > max_tbs)
            max_tbs = gpu->ntbs;
        ntbs += gpu->ntbs;
        for (int t = 0; t < gpu->ntbs; t++) {
            const struct cs_tb *tb = &gpu->tbs[t];

            nconn += tb->send >= 0;
            if (tb->nsteps > max_steps)
                max_steps = tb->nsteps;
            nsteps += tb->nsteps;
            for (int i = 0; i < tb->nsteps; i++) {
                types[tb->steps[i].type]++;
                if (tb->steps[i].cnt > max_cnt)
                    max_cnt = tb->steps[i].cnt;
            }
        }
    }
    printf("name:            %s\n", sched->name ? sched->name : "");
    printf("collective:      %s%s\n", cs_coll_name(sched->coll),
           sched->inplace ? " (in place)" : " (out of place)");
    printf("protocol:        %s\n", cs_proto_name(sched->proto));
    printf("gpus:            %d\n", sched->ngpus);
    printf("channels:        %d\n", sched->nchannels);
    printf("chunks per loop: %d\n", sched->nchunksperloop);
    printf("threadblocks:    %ld in all, %d to %d per gpu\n", ntbs, min_tbs < 0 ? 0 : min_tbs,
           max_tbs);
    printf("steps:           %ld in all, at most %d per threadblock, cnt at most %d\n", nsteps,
           max_steps, max_cnt);
    printf("step types:     ");
    for (int k = CS_STEP_S; k <= CS_STEP_NOP; k++)
        if (types[k])
            printf(" %s:%ld", cs_step_type_name((enum cs_step_type)k), types[k]);
    printf("\n");
    printf("connections:     %d directed (src -> dst, channel)\n", nconn);
    for (int g = 0; g < sched->ngpus_alloc; g++) {
        const struct cs_gpu *gpu = &sched->gpus[g];
        int sends = 0;

        printf("  gpu %d: %d tbs, chunks i=%d o=%d s=%d, sends to", gpu->id, gpu->ntbs,
               gpu->i_chunks, gpu->o_chunks, gpu->s_chunks);
        for (int t = 0; t < gpu->ntbs; t++)
            if (gpu->tbs[t].send >= 0) {
                printf(" %d/c%d", gpu->tbs[t].send, gpu->tbs[t].chan);
                sends++;
            }
        printf("%s\n", sends ? "" : " nobody");
    }
}

/* verify's verdict on stdout, its errors and warnings on stderr; returns verify's exit code. */
static int print_verdict(const char *name, const struct cs_sched *sched)
{
    struct cs_verify_opts o = {.max_diags = INFO_MAX_PROBLEMS, .runtime = CS_VERIFY_ANY};
    struct cs_verify_result *res = NULL;
    char buf[512];
    long shown = 0;
    int rc;

    if (cs_verify_check_opts(sched, &o, &res) != 0) {
        fprintf(stderr, "%s: out of memory while verifying\n", name);
        return CS_EXIT_USAGE;
    }
    for (int i = 0; i < res->ndiags; i++) {
        const struct cs_verify_diag *d = &res->diags[i];

        if (d->severity == CS_VERIFY_NOTE)
            continue;
        shown++;
        if (d->line > 0)
            fprintf(stderr, "%s:%d: %s%s\n", name, d->line,
                    d->severity == CS_VERIFY_WARNING ? "warning: " : "", d->msg);
        else
            fprintf(stderr, "%s: %s%s\n", name, d->severity == CS_VERIFY_WARNING ? "warning: " : "",
                    d->msg);
    }
    if (res->verdict == CS_VERIFY_OK)
        printf("verdict:         ok (collsim verify)%s\n",
               shown ? ", with warnings on stderr" : "");
    else
        printf("verdict:         %s: %s; %s\n",
               res->verdict == CS_VERIFY_WRONG ? "wrong" : "invalid",
               cs_verify_summary(res, buf, sizeof(buf)),
               res->ndropped ? "the first on stderr, `collsim verify FILE` lists them all"
                             : "each on stderr");
    rc = res->verdict == CS_VERIFY_OK      ? CS_EXIT_OK
         : res->verdict == CS_VERIFY_WRONG ? CS_EXIT_NEGATIVE
                                           : CS_EXIT_USAGE;
    cs_verify_result_free(res);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    struct cs_sched *sched;
    int rc = cmd_load_scheds(argc, argv, 1, "one schedule file (or -)", &sched);

    if (rc != 0)
        return rc;
    print_summary(sched);
    rc = print_verdict(sched->path ? sched->path : "<stdin>", sched);
    cs_sched_free(sched);
    return rc;
}
