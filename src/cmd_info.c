/* cmd_info.c: `collsim info`: a summary of a schedule's shape. */
#include <stdio.h>

#include "cmd.h"

const char cmd_info_usage[] =
    "usage: collsim info FILE\n"
    "\n"
    "Summarise an MSCCL XML schedule: collective, protocol, GPUs, channels, chunks per loop,\n"
    "threadblocks per GPU, steps per threadblock, step types and connections.\n";

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

int cmd_info(int argc, char **argv)
{
    struct cs_sched *sched;
    int rc = cmd_load_scheds(argc, argv, 1, "one schedule file (or -)", &sched);

    if (rc != 0)
        return rc;
    print_summary(sched);
    cs_sched_free(sched);
    return CS_EXIT_OK;
}
