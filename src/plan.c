/* plan.c: from schedule and size to the executor's loop, calls, folded nops and fused reductions. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

static long long loop_bytes(enum cs_proto proto)
{
    switch (proto) {
    case CS_PROTO_LL:
        return CS_LOOP_BYTES_LL;
    case CS_PROTO_LL128:
        return CS_LOOP_BYTES_LL128;
    default:
        return CS_LOOP_BYTES_SIMPLE;
    }
}

int cs_dtype_bytes(const char *name)
{
    if (strcmp(name, "float") == 0 || strcmp(name, "float32") == 0)
        return 4;
    if (strcmp(name, "half") == 0 || strcmp(name, "float16") == 0 ||
        strcmp(name, "bfloat16") == 0)
        return 2;
    if (strcmp(name, "double") == 0 || strcmp(name, "float64") == 0)
        return 8;
    return 0;
}

double cs_busbw_factor(enum cs_coll coll, int n)
{
    if (n <= 0)
        return 1;
    switch (coll) {
    case CS_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case CS_COLL_ALLGATHER:
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1;
    }
}

long long cs_plan_round_size(const struct cs_sched *sched, long long size_bytes, int type_bytes)
{
    long long unit = (long long)sched->nchunksperloop * type_bytes;

    if (unit <= 0)
        return size_bytes;
    if (size_bytes < unit)
        return unit;
    return (size_bytes + unit - 1) / unit * unit;
}

void cs_plan_free(struct cs_plan *plan)
{
    if (plan == NULL)
        return;
    for (int t = 0; t < plan->ntbs; t++) {
        for (int k = 0; k < plan->tbs[t].nops; k++)
            free(plan->tbs[t].ops[k].deps);
        free(plan->tbs[t].ops);
    }
    free(plan->tbs);
    free(plan->gpu_tb0);
    free(plan);
}

/* Fold one tb's steps into transmissions, as mscclGetAlgoFromXmlFile does: nops add their
 * dependency to the next transmission; consecutive re into one destination fuse. */
static int fold_tb(const struct cs_plan *plan, const struct cs_gpu *gpu, const struct cs_tb *tb,
                   struct cs_plan_tb *out, struct cs_error *err)
{
    struct cs_dep *pending = NULL;
    int npending = 0, first = -1;

    out->ops = calloc(tb->nsteps > 0 ? (size_t)tb->nsteps : 1, sizeof(*out->ops));
    pending = calloc((size_t)tb->nsteps + 1, sizeof(*pending));
    if (out->ops == NULL || pending == NULL) {
        free(pending);
        cs_error_set(err, NULL, 0, "out of memory");
        return CS_ERR_NOMEM;
    }
    for (int i = 0; i < tb->nsteps; i++) {
        const struct cs_step *st = &tb->steps[i];
        struct cs_plan_op *prev = out->nops > 0 ? &out->ops[out->nops - 1] : NULL;
        const struct cs_step *prevst = NULL;
        struct cs_plan_op *op;

        if (first < 0)
            first = st->s;
        if (st->type == CS_STEP_NOP) {
            pending[npending].tb = st->depid;
            pending[npending].step = st->deps;
            npending++;
            continue;
        }
        if (prev != NULL)
            for (int k = i - 1; k >= 0; k--)
                if (tb->steps[k].type != CS_STEP_NOP) {
                    prevst = &tb->steps[k];
                    break;
                }
        if (st->type == CS_STEP_RE && npending == 0 && prev != NULL && prev->type == CS_STEP_RE &&
            prevst != NULL && prevst->dstbuf == st->dstbuf && prevst->dstoff == st->dstoff &&
            prevst->srcbuf == st->srcbuf && st->depid < 0 && !prevst->hasdep &&
            prev->nsrc < CS_MAX_REDUCE_FUSION) {
            prev->nsrc++;
            prev->step = st->s;
            prev->cnt = st->cnt;
            prev->hasdep = st->hasdep;
            prev->ncalls = (st->cnt + plan->max_allowed - 1) / plan->max_allowed;
            first = -1;
            continue;
        }
        if (npending > 0 && st->depid < 0) {
            cs_error_set(err, NULL, st->line,
                         "gpu %d tb %d step %d: nops carry dependencies but the step after them "
                         "has depid=-1, which the MSCCL executor rejects",
                         gpu->id, tb->id, st->s);
            free(pending);
            return CS_ERR_INVALID;
        }
        op = &out->ops[out->nops++];
        op->type = st->type;
        op->first_step = first;
        op->step = st->s;
        op->cnt = st->cnt;
        op->nsrc = 1;
        op->hasdep = st->hasdep;
        op->ncalls = (st->cnt + plan->max_allowed - 1) / plan->max_allowed;
        if (st->depid >= 0) {
            pending[npending].tb = st->depid;
            pending[npending].step = st->deps;
            npending++;
        }
        op->ndeps = npending;
        if (npending > 0) {
            op->deps = malloc((size_t)npending * sizeof(*op->deps));
            if (op->deps == NULL) {
                free(pending);
                cs_error_set(err, NULL, 0, "out of memory");
                return CS_ERR_NOMEM;
            }
            /* The op's own dependency first, then the nops' (order does not matter). */
            op->deps[0] = pending[npending - 1];
            memcpy(op->deps + 1, pending, (size_t)(npending - 1) * sizeof(*op->deps));
        }
        npending = 0;
        first = -1;
    }
    free(pending);
    return 0;
}

int cs_plan_build(const struct cs_sched *sched, long long size_bytes, int type_bytes,
                  enum cs_proto proto, struct cs_plan **out, struct cs_error *err)
{
    struct cs_plan *p;
    long long unit, lb, chunk_bytes_ceil, ma;
    int rc;

    if (proto == 0)
        proto = sched->proto;
    if (type_bytes <= 0 || sched->nchunksperloop <= 0 || sched->ngpus <= 0 ||
        sched->ngpus_alloc != sched->ngpus) {
        cs_error_set(err, NULL, 0, "schedule or datatype not usable for a plan");
        return CS_ERR_INVALID;
    }
    unit = (long long)sched->nchunksperloop * type_bytes;
    if (size_bytes <= 0 || size_bytes % unit != 0) {
        cs_error_set(err, NULL, 0,
                     "%lld bytes is not a positive multiple of nchunksperloop (%d) x %d-byte "
                     "elements; the MSCCL executor would not select this schedule",
                     size_bytes, sched->nchunksperloop, type_bytes);
        return CS_ERR_INVALID;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        cs_error_set(err, NULL, 0, "out of memory");
        return CS_ERR_NOMEM;
    }
    p->proto = proto;
    p->coll = sched->coll;
    p->ngpus = sched->ngpus;
    p->nchannels = sched->nchannels;
    p->nchunksperloop = sched->nchunksperloop;
    p->size_bytes = size_bytes;
    p->type_bytes = type_bytes;
    p->count = size_bytes / type_bytes;
    p->chunk_elems = p->count / sched->nchunksperloop;
    lb = loop_bytes(proto);
    p->loop_elems = lb / type_bytes;
    p->niter = (int)((p->chunk_elems + p->loop_elems - 1) / p->loop_elems);
    if ((p->chunk_elems + p->loop_elems - 1) / p->loop_elems >= 65536) {
        cs_error_set(err, NULL, 0,
                     "%lld bytes needs %lld loop iterations; the executor's flags allow 65535",
                     size_bytes, (p->chunk_elems + p->loop_elems - 1) / p->loop_elems);
        free(p);
        return CS_ERR_INVALID;
    }
    p->last_elems = p->chunk_elems - (long long)(p->niter - 1) * p->loop_elems;
    /* mscclSetupCount: chunkEffectiveSize / ceil(nBytes / nchunksperloop), clamped to [1, 71]. */
    chunk_bytes_ceil = (size_bytes + sched->nchunksperloop - 1) / sched->nchunksperloop;
    ma = lb / chunk_bytes_ceil;
    p->max_allowed = (int)(ma < 1 ? 1 : ma > CS_MAX_ALLOWED_COUNT ? CS_MAX_ALLOWED_COUNT : ma);
    p->slots_per_call = proto == CS_PROTO_SIMPLE ? 4 : 1;
    p->units_per_call = proto == CS_PROTO_SIMPLE ? 2 : 1;
    p->wire_factor = proto == CS_PROTO_LL ? 2.0 : proto == CS_PROTO_LL128 ? 128.0 / 120.0 : 1.0;
    p->gpu_tb0 = calloc((size_t)sched->ngpus + 1, sizeof(int));
    for (int g = 0; g < sched->ngpus; g++)
        p->ntbs += sched->gpus[g].ntbs;
    p->tbs = calloc(p->ntbs > 0 ? (size_t)p->ntbs : 1, sizeof(*p->tbs));
    if (p->gpu_tb0 == NULL || p->tbs == NULL) {
        cs_plan_free(p);
        cs_error_set(err, NULL, 0, "out of memory");
        return CS_ERR_NOMEM;
    }
    {
        int ntbs = p->ntbs, k = 0;

        p->ntbs = 0; /* counts tbs whose ops are allocated, for cs_plan_free on failure */
        for (int g = 0; g < sched->ngpus; g++) {
            const struct cs_gpu *gpu = cs_sched_find_gpu(sched, g);

            if (gpu == NULL) {
                cs_plan_free(p);
                cs_error_set(err, NULL, 0, "schedule has no gpu %d", g);
                return CS_ERR_INVALID;
            }
            p->gpu_tb0[g] = k;
            for (int t = 0; t < gpu->ntbs; t++) {
                const struct cs_tb *tb = cs_gpu_find_tb(gpu, t);
                struct cs_plan_tb *pt = &p->tbs[k];

                if (tb == NULL) {
                    cs_plan_free(p);
                    cs_error_set(err, NULL, 0, "gpu %d has no tb %d (ids must be dense)", g, t);
                    return CS_ERR_INVALID;
                }
                pt->gpu = g;
                pt->id = t;
                pt->send = tb->send;
                pt->recv = tb->recv;
                pt->chan = tb->chan;
                p->ntbs = k + 1;
                rc = fold_tb(p, gpu, tb, pt, err);
                if (rc != 0) {
                    cs_plan_free(p);
                    return rc;
                }
                for (int i = 0; i < pt->nops; i++)
                    p->ncalls_total += (long long)pt->ops[i].ncalls * p->niter;
                k++;
            }
        }
        p->gpu_tb0[sched->ngpus] = k;
        (void)ntbs;
    }
    *out = p;
    return 0;
}

long long cs_plan_iter_elems(const struct cs_plan *plan, int iter)
{
    return iter == plan->niter - 1 ? plan->last_elems : plan->loop_elems;
}

long long cs_plan_call_elems(const struct cs_plan *plan, const struct cs_plan_op *op, int iter,
                             int call)
{
    long long left = (long long)op->cnt - (long long)call * plan->max_allowed;
    long long n = left < plan->max_allowed ? left : plan->max_allowed;

    if (n < 0)
        n = 0;
    return n * cs_plan_iter_elems(plan, iter);
}

void cs_plan_call_units(const struct cs_plan *plan, long long elems, long long unit_bytes[2])
{
    if (plan->proto != CS_PROTO_SIMPLE) {
        unit_bytes[0] = elems * plan->type_bytes;
        unit_bytes[1] = 0;
        return;
    }
    /* ProtoSimple<2,2>: sliceSize = max(DIVUP(nelem, 32) x 16, stepSize x 2 / 32) elements with
     * stepSize = 512 KiB worth, i.e. at least 32 KiB worth (prims_simple.h). */
    long long slice = (elems + 31) / 32 * 16;
    long long min_slice = 32768 / plan->type_bytes;

    if (slice < min_slice)
        slice = min_slice;
    if (slice > elems)
        slice = elems;
    unit_bytes[0] = slice * plan->type_bytes;
    unit_bytes[1] = (elems - slice) * plan->type_bytes;
}

double cs_plan_wire_bytes(const struct cs_plan *plan, long long data_bytes)
{
    /* Whole lines: LL 16 B carrying 8 B of data, LL128 128 B carrying 120 B (device.h). */
    switch (plan->proto) {
    case CS_PROTO_LL:
        return (double)((data_bytes + 7) / 8 * 16);
    case CS_PROTO_LL128:
        return (double)((data_bytes + 119) / 120 * 128);
    default:
        return (double)data_bytes;
    }
}
