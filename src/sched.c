/* sched.c: construction, lookup and naming for the schedule model. */
#include "sched.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

/* The size sched.h promises (millions of steps in a large schedule). */
_Static_assert(sizeof(struct cs_step) == 32, "struct cs_step is 32 bytes");

struct cs_sched *cs_sched_new(void)
{
    struct cs_sched *sched = calloc(1, sizeof(*sched));

    if (sched == NULL)
        return NULL;
    sched->proto = CS_PROTO_SIMPLE;
    sched->coll = CS_COLL_ALLREDUCE;
    return sched;
}

void cs_sched_free(struct cs_sched *sched)
{
    if (sched == NULL)
        return;
    for (int g = 0; g < sched->ngpus_alloc; g++) {
        for (int t = 0; t < sched->gpus[g].ntbs; t++)
            free(sched->gpus[g].tbs[t].steps);
        free(sched->gpus[g].tbs);
    }
    for (int i = 0; i < sched->nwarnings_kept; i++)
        free(sched->warnings[i].msg);
    cs_free_each(4, sched->gpus, sched->name, sched->path, sched);
}

int cs_sched_set_name(struct cs_sched *sched, const char *name)
{
    char *copy = strdup(name);

    if (copy == NULL)
        return CS_ERR_NOMEM;
    free(sched->name);
    sched->name = copy;
    return 0;
}

int cs_sched_add_warning(struct cs_sched *sched, int line, const char *fmt, ...)
{
    struct cs_sched_warning *w = &sched->warnings[sched->nwarnings_kept];
    va_list ap;
    char buf[512];

    sched->nwarnings++;
    if (sched->nwarnings_kept == CS_SCHED_MAX_WARNINGS)
        return 0;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if ((w->msg = strdup(buf)) == NULL) {
        sched->nwarnings--;
        return CS_ERR_NOMEM;
    }
    w->line = line;
    sched->nwarnings_kept++;
    return 0;
}

struct cs_gpu *cs_sched_add_gpu(struct cs_sched *sched)
{
    struct cs_gpu *gpu =
        cs_array_slot((void **)&sched->gpus, sched->ngpus_alloc, &sched->cap_gpus, sizeof(*gpu));

    if (gpu != NULL)
        sched->ngpus_alloc++;
    return gpu;
}

struct cs_tb *cs_gpu_add_tb(struct cs_gpu *gpu)
{
    struct cs_tb *tb = cs_array_slot((void **)&gpu->tbs, gpu->ntbs, &gpu->cap_tbs, sizeof(*tb));

    if (tb != NULL) {
        gpu->ntbs++;
        tb->send = -1;
        tb->recv = -1;
    }
    return tb;
}

struct cs_step *cs_tb_add_step(struct cs_tb *tb)
{
    struct cs_step *st =
        cs_array_slot((void **)&tb->steps, tb->nsteps, &tb->cap_steps, sizeof(*st));

    if (st != NULL) {
        tb->nsteps++;
        st->depid = -1;
        st->deps = -1;
    }
    return st;
}

/* Shrink *arr of n elements of `size` bytes, capacity *cap, to n (kept as it is when realloc
 * fails: it only gives memory back). */
static void shrink(void **arr, int n, int *cap, size_t size)
{
    void *p;

    if (n >= *cap || n == 0)
        return;
    if ((p = realloc(*arr, (size_t)n * size)) != NULL) {
        *arr = p;
        *cap = n;
    }
}

void cs_tb_shrink(struct cs_tb *tb)
{
    shrink((void **)&tb->steps, tb->nsteps, &tb->cap_steps, sizeof(struct cs_step));
}

void cs_sched_shrink(struct cs_sched *sched)
{
    for (int g = 0; g < sched->ngpus_alloc; g++) {
        struct cs_gpu *gpu = &sched->gpus[g];

        for (int t = 0; t < gpu->ntbs; t++)
            cs_tb_shrink(&gpu->tbs[t]);
        shrink((void **)&gpu->tbs, gpu->ntbs, &gpu->cap_tbs, sizeof(struct cs_tb));
    }
}

/* Both finds try index id first (ids are dense once a schedule is checked), then scan from 0. */
struct cs_gpu *cs_sched_find_gpu(const struct cs_sched *sched, int id)
{
    int g = id >= 0 && id < sched->ngpus_alloc && sched->gpus[id].id == id ? id : 0;

    while (g < sched->ngpus_alloc && sched->gpus[g].id != id)
        g++;
    return g < sched->ngpus_alloc ? &sched->gpus[g] : NULL;
}

struct cs_tb *cs_gpu_find_tb(const struct cs_gpu *gpu, int id)
{
    int t = id >= 0 && id < gpu->ntbs && gpu->tbs[id].id == id ? id : 0;

    while (t < gpu->ntbs && gpu->tbs[t].id != id)
        t++;
    return t < gpu->ntbs ? &gpu->tbs[t] : NULL;
}

int cs_tb_step_deps(const struct cs_tb *tb, int i, struct cs_dep *out, int max)
{
    int first = i, n = 0;

    if (tb->steps[i].type == CS_STEP_NOP)
        return 0;
    while (first > 0 && tb->steps[first - 1].type == CS_STEP_NOP)
        first--;
    for (int k = first; k <= i; k++) {
        const struct cs_step *st = &tb->steps[k];

        if (st->depid < 0)
            continue;
        if (n < max) {
            out[n].tb = st->depid;
            out[n].step = st->deps;
        }
        n++;
    }
    return n;
}

static const char *const coll_names[] = {
    [CS_COLL_ALLREDUCE] = "allreduce",
    [CS_COLL_ALLGATHER] = "allgather",
    [CS_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [CS_COLL_ALLTOALL] = "alltoall",
    [CS_COLL_CUSTOM] = "custom",
};

static const char *const proto_names[] = {
    [CS_PROTO_LL] = "LL",
    [CS_PROTO_LL128] = "LL128",
    [CS_PROTO_SIMPLE] = "Simple",
};

static const char *const step_names[] = {
    [CS_STEP_S] = "s",     [CS_STEP_R] = "r",     [CS_STEP_RCS] = "rcs",
    [CS_STEP_RRC] = "rrc", [CS_STEP_RRS] = "rrs", [CS_STEP_RRCS] = "rrcs",
    [CS_STEP_CPY] = "cpy", [CS_STEP_RE] = "re",   [CS_STEP_NOP] = "nop",
};

#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* names[i] for 0 < i < n, else NULL. */
static const char *name_of(const char *const *names, int n, int i)
{
    return i > 0 && i < n ? names[i] : NULL;
}

/* The index i (0 < i < n) of s in names, or 0. */
static int index_of(const char *const *names, int n, const char *s)
{
    for (int i = 1; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return 0;
}

const char *cs_coll_name(enum cs_coll coll)
{
    return name_of(coll_names, NELEMS(coll_names), (int)coll);
}

const char *cs_proto_name(enum cs_proto proto)
{
    return name_of(proto_names, NELEMS(proto_names), (int)proto);
}

const char *cs_step_type_name(enum cs_step_type type)
{
    return name_of(step_names, NELEMS(step_names), (int)type);
}

char cs_buf_char(enum cs_buf buf)
{
    return (int)buf > 0 && (int)buf <= CS_BUF_SCRATCH ? "?ios"[buf] : '?';
}

enum cs_coll cs_coll_parse(const char *s, int *exec_spelling)
{
    int exec = strcmp(s, "reducescatter") == 0;

    if (exec_spelling)
        *exec_spelling = exec;
    return exec ? CS_COLL_REDUCE_SCATTER
                : (enum cs_coll)index_of(coll_names, NELEMS(coll_names), s);
}

enum cs_proto cs_proto_parse(const char *s)
{
    return (enum cs_proto)index_of(proto_names, NELEMS(proto_names), s);
}

enum cs_step_type cs_step_type_parse(const char *s)
{
    return (enum cs_step_type)index_of(step_names, NELEMS(step_names), s);
}

enum cs_buf cs_buf_parse(const char *s)
{
    for (int b = CS_BUF_INPUT; b <= CS_BUF_SCRATCH; b++)
        if (s[0] == cs_buf_char((enum cs_buf)b) && s[1] == '\0')
            return (enum cs_buf)b;
    return 0;
}

long cs_sched_count_steps(const struct cs_sched *sched)
{
    long n = 0;

    for (int g = 0; g < sched->ngpus_alloc; g++)
        for (int t = 0; t < sched->gpus[g].ntbs; t++)
            n += sched->gpus[g].tbs[t].nsteps;
    return n;
}

const struct cs_tb *cs_sched_find_tb_over(const struct cs_sched *sched, int limit, int *gpu)
{
    const struct cs_tb *best = NULL;
    int best_gpu = -1;

    for (int g = 0; g < sched->ngpus_alloc; g++)
        for (int t = 0; t < sched->gpus[g].ntbs; t++) {
            const struct cs_tb *tb = &sched->gpus[g].tbs[t];

            if (tb->nsteps > limit && (best == NULL || tb->nsteps > best->nsteps)) {
                best = tb;
                best_gpu = sched->gpus[g].id;
            }
        }
    if (best != NULL && gpu != NULL)
        *gpu = best_gpu;
    return best;
}

const char *cs_sched_steps_warning(const struct cs_sched *sched, char *buf, size_t len)
{
    int g = -1;
    const struct cs_tb *tb = cs_sched_find_tb_over(sched, CS_MAX_STEPS, &g);

    if (tb == NULL)
        return NULL;
    if (tb->nsteps > CS_MAX_STEPS_LEGACY)
        snprintf(buf, len,
                 "gpu %d tb %d has %d steps, over the runtimes' limits of %d per threadblock "
                 "(the executor's MSCCL_MAX_NUM_STEPS) and %d (legacy), which refuse the schedule",
                 g, tb->id, tb->nsteps, CS_MAX_STEPS, CS_MAX_STEPS_LEGACY);
    else
        snprintf(buf, len,
                 "gpu %d tb %d has %d steps, over the MSCCL executor's limit of %d per threadblock "
                 "(MSCCL_MAX_NUM_STEPS, a build option; the legacy runtime takes %d), which "
                 "refuses the schedule",
                 g, tb->id, tb->nsteps, CS_MAX_STEPS, CS_MAX_STEPS_LEGACY);
    return buf;
}
