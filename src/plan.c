/* plan.c: from schedule and size to the executor's loop, calls, folded nops and fused reductions.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

/* The size plan.h promises (millions of ops in a large plan). */
_Static_assert(sizeof(struct cs_plan_op) == 32 + 2 * sizeof(void *),
               "struct cs_plan_op is 48 bytes on 64-bit machines");

/* nccl-tests' type names (-d), then the aliases collsim has taken before. */
const char *const cs_dtype_names[CS_NDTYPES] = {
    "int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
    "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2",
};
static const signed char dtype_sizes[CS_NDTYPES] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

int cs_dtype_bytes(const char *name)
{
    static const struct {
        const char *alias, *name;
    } aliases[] = {{"float32", "float"}, {"float16", "half"}, {"float64", "double"}};

    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(name, aliases[i].alias) == 0)
            name = aliases[i].name;
    for (int i = 0; i < CS_NDTYPES; i++)
        if (strcmp(name, cs_dtype_names[i]) == 0)
            return dtype_sizes[i];
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
    long long unit = (long long)(sched->nccl_kernel ? 1 : sched->nchunksperloop) * type_bytes;

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
        free(plan->tbs[t].ops);
        free(plan->tbs[t].dep_pool);
        free(plan->tbs[t].src_pool);
    }
    free(plan->tbs);
    free(plan->gpu_tb0);
    free(plan);
}

static int nomem(struct cs_error *err)
{
    cs_error_set(err, NULL, 0, "out of memory");
    return CS_ERR_NOMEM;
}

/* Whether step st fuses into op, the transmission of the previous XML step: both re, same
 * destination and source buffer, st without a dependency of its own, op not publishing and not
 * yet MSCCL_MAX_REDUCE_FUSION sources (msccl_parser.cc:556-566, 636-643). */
static int fuses(const struct cs_plan_op *op, const struct cs_step *st)
{
    return op != NULL && st->type == CS_STEP_RE && op->type == CS_STEP_RE &&
           op->dstbuf == (int)st->dstbuf && op->dstoff == st->dstoff &&
           op->srcbuf == (int)st->srcbuf && st->depid < 0 && !op->hasdep &&
           op->nsrc < CS_MAX_REDUCE_FUSION;
}

/* A new transmission for step st, first_step the XML s of the first step folded in, taking the
 * npending dependencies of the nops before it after its own; its deps and its first source go to
 * the ends of the tb's pools (*ndeps and *nsrcs entries used). */
static void add_op(struct cs_plan_tb *out, const struct cs_step *st, int first_step,
                   const struct cs_dep *pending, int npending, int *ndeps, int *nsrcs)
{
    struct cs_plan_op *op = &out->ops[out->nops++];
    int own = st->depid >= 0;

    op->type = st->type;
    op->first_step = first_step;
    op->step = st->s;
    op->cnt = st->cnt;
    op->nsrc = 1;
    op->hasdep = st->hasdep;
    op->line = st->line;
    op->srcoff = &out->src_pool[(*nsrcs)++];
    if (cs_step_reads_src(st->type)) {
        op->srcbuf = st->srcbuf;
        op->srcoff[0] = st->srcoff;
    }
    if (cs_step_writes_dst(st->type)) {
        op->dstbuf = st->dstbuf;
        op->dstoff = st->dstoff;
    }
    op->ndeps = npending + own;
    if (op->ndeps == 0)
        return;
    op->deps = &out->dep_pool[*ndeps];
    *ndeps += op->ndeps;
    if (own)
        op->deps[0] = (struct cs_dep){st->depid, st->deps};
    memcpy(op->deps + own, pending, (size_t)npending * sizeof(*op->deps));
}

/* Fold one tb's steps into transmissions, as mscclGetAlgoFromXmlFile does: every step with a
 * depid, nops included, adds a dependency that the next transmission waits for; consecutive re
 * fuse. Each step gives at most one dependency and one source, so the pools are sized by the
 * steps. */
static int fold_tb(const struct cs_sched *sched, int gpu, const struct cs_tb *tb,
                   struct cs_plan_tb *out, struct cs_error *err)
{
    int npending = 0, first = -1, prev_re = 0, rc = 0, real = 0, withdep = 0, ndeps = 0, nsrcs = 0;
    struct cs_dep *pending;

    for (int i = 0; i < tb->nsteps; i++) {
        real += tb->steps[i].type != CS_STEP_NOP;
        withdep += tb->steps[i].depid >= 0;
    }
    pending = malloc(((size_t)withdep + 1) * sizeof(*pending));
    out->ops = calloc(real > 0 ? (size_t)real : 1, sizeof(*out->ops));
    out->src_pool = calloc(real > 0 ? (size_t)real : 1, sizeof(*out->src_pool));
    out->dep_pool = malloc(((size_t)withdep + 1) * sizeof(*out->dep_pool));
    if (out->ops == NULL || out->src_pool == NULL || out->dep_pool == NULL || pending == NULL) {
        free(pending);
        return nomem(err);
    }
    for (int i = 0; i < tb->nsteps && rc == 0; i++) {
        const struct cs_step *st = &tb->steps[i];
        struct cs_plan_op *prev = prev_re ? &out->ops[out->nops - 1] : NULL;

        if (first < 0)
            first = st->s;
        prev_re = 0;
        if (st->type == CS_STEP_NOP) {
            if (st->depid >= 0)
                pending[npending++] = (struct cs_dep){st->depid, st->deps};
            continue;
        }
        if (npending == 0 && fuses(prev, st)) {
            /* prev is the tb's last op so far: its sources end the pool */
            prev->srcoff[prev->nsrc++] = st->srcoff;
            nsrcs++;
            prev->step = st->s;
            prev->cnt = st->cnt;
            prev->hasdep = st->hasdep;
            prev->line = st->line;
            first = -1;
            prev_re = 1;
            continue;
        }
        if (npending > 0 && st->depid < 0) {
            cs_error_set(err, sched->path, st->line,
                         "gpu %d tb %d step %d inherits dependencies from the nops before it but "
                         "has no depid of its own (the MSCCL runtime rejects this)",
                         gpu, tb->id, st->s);
            rc = CS_ERR_INVALID;
            break;
        }
        add_op(out, st, first, pending, npending, &ndeps, &nsrcs);
        npending = 0;
        first = -1;
        prev_re = st->type == CS_STEP_RE;
    }
    free(pending);
    return rc;
}

/* Allocate and fold every tb, GPU by GPU; ids must be dense. With release each tb's steps are
 * freed once it is folded. */
static int compile_tbs(const struct cs_sched *sched, int release, struct cs_plan *p,
                       struct cs_error *err)
{
    int ntbs = 0, rc;

    p->gpu_tb0 = calloc((size_t)sched->ngpus + 1, sizeof(int));
    for (int g = 0; g < sched->ngpus; g++) {
        const struct cs_gpu *gpu = cs_sched_find_gpu(sched, g);

        if (gpu == NULL) {
            cs_error_set(err, sched->path, sched->line, "no <gpu id=\"%d\">", g);
            return CS_ERR_INVALID;
        }
        ntbs += gpu->ntbs;
    }
    p->tbs = calloc(ntbs > 0 ? (size_t)ntbs : 1, sizeof(*p->tbs));
    if (p->gpu_tb0 == NULL || p->tbs == NULL)
        return nomem(err);
    for (int g = 0; g < sched->ngpus; g++) {
        const struct cs_gpu *gpu = cs_sched_find_gpu(sched, g);

        p->gpu_tb0[g] = p->ntbs;
        for (int t = 0; t < gpu->ntbs; t++) {
            struct cs_tb *tb = cs_gpu_find_tb(gpu, t);
            struct cs_plan_tb *pt = &p->tbs[p->ntbs];

            if (tb == NULL) {
                cs_error_set(err, sched->path, gpu->line, "gpu %d: tb %d is missing", g, t);
                return CS_ERR_INVALID;
            }
            *pt = (struct cs_plan_tb){.gpu = g,
                                      .id = t,
                                      .send = tb->send,
                                      .recv = tb->recv,
                                      .chan = tb->chan,
                                      .line = tb->line};
            p->ntbs++; /* counts tbs whose ops are allocated, for cs_plan_free on failure */
            if ((rc = fold_tb(sched, g, tb, pt, err)) != 0)
                return rc;
            if (release) {
                free(tb->steps);
                tb->steps = NULL;
                tb->nsteps = tb->cap_steps = 0;
            }
        }
    }
    p->gpu_tb0[sched->ngpus] = p->ntbs;
    return 0;
}

static int compile(const struct cs_sched *sched, int release, enum cs_proto proto,
                   struct cs_plan **out, struct cs_error *err)
{
    struct cs_plan *p;
    int rc;

    if (sched->nchunksperloop <= 0 || sched->ngpus <= 0 || sched->ngpus_alloc != sched->ngpus) {
        cs_error_set(err, sched->path, sched->line, "schedule is incomplete (ngpus %d, %d <gpu>s)",
                     sched->ngpus, sched->ngpus_alloc);
        return CS_ERR_INVALID;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return nomem(err);
    p->proto = proto != 0 ? proto : sched->proto;
    p->coll = sched->coll;
    p->ngpus = sched->ngpus;
    p->nchannels = sched->nchannels;
    p->nchunksperloop = sched->nchunksperloop;
    p->nccl_kernel = sched->nccl_kernel;
    p->nccl_threads = sched->nccl_threads;
    p->nccl_max_threads = sched->nccl_max_threads;
    p->rep_gpus = sched->rep_gpus;
    p->rep_shift = sched->rep_shift;
    p->slots_per_call = cs_proto_slots_per_call(p->proto);
    p->units_per_call = cs_proto_units_per_call(p->proto);
    p->wire_factor = cs_proto_wire_factor(p->proto);
    if ((rc = compile_tbs(sched, release, p, err)) != 0) {
        cs_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int cs_plan_compile(const struct cs_sched *sched, enum cs_proto proto, struct cs_plan **out,
                    struct cs_error *err)
{
    return compile(sched, 0, proto, out, err);
}

int cs_plan_compile_release(struct cs_sched *sched, enum cs_proto proto, struct cs_plan **out,
                            struct cs_error *err)
{
    return compile(sched, 1, proto, out, err);
}

void cs_plan_resize(struct cs_plan *p, const struct cs_plan_sizing *sz, int type_bytes)
{
    p->sz = *sz;
    p->type_bytes = type_bytes;
    p->ncalls_total = 0;
    for (int t = 0; t < p->ntbs; t++)
        for (int i = 0; i < p->tbs[t].nops; i++) {
            struct cs_plan_op *op = &p->tbs[t].ops[i];

            op->ncalls = cs_proto_step_calls(op->cnt, p->sz.max_allowed);
            p->ncalls_total += (long long)op->ncalls * p->sz.niter;
        }
    if (p->rep_gpus > 0) /* every rep_gpus GPUs make as many calls as the representatives */
        p->ncalls_total *= p->ngpus / p->rep_gpus;
}

int cs_plan_sizing_init(struct cs_plan_sizing *sz, int nchunks, int proto, long long size_bytes,
                        int type_bytes, long loop_bytes, struct cs_error *err)
{
    struct cs_plan_sizing s = {0};
    long long unit = (long long)nchunks * type_bytes;

    if (loop_bytes <= 0)
        loop_bytes = cs_proto_loop_bytes(proto);
    if (type_bytes <= 0 || nchunks <= 0 || size_bytes <= 0 || loop_bytes < type_bytes ||
        size_bytes % unit != 0) {
        cs_error_set(err, NULL, 0,
                     "%lld bytes does not split into nchunksperloop (%d) chunks of %d-byte "
                     "elements; the MSCCL executor would not select this schedule",
                     size_bytes, nchunks, type_bytes);
        return CS_ERR_INVALID;
    }
    s.size_bytes = size_bytes;
    s.count = size_bytes / type_bytes;
    s.chunk_elems = s.count / nchunks;
    s.loop_elems = loop_bytes / type_bytes;
    if ((s.chunk_elems + s.loop_elems - 1) / s.loop_elems > CS_MAX_ITERATIONS) {
        cs_error_set(
            err, NULL, 0, "%lld bytes needs %lld loop iterations; the executor's flags allow %d",
            size_bytes, (s.chunk_elems + s.loop_elems - 1) / s.loop_elems, CS_MAX_ITERATIONS);
        return CS_ERR_INVALID;
    }
    s.niter = (int)((s.chunk_elems + s.loop_elems - 1) / s.loop_elems);
    s.last_elems = s.chunk_elems - (long long)(s.niter - 1) * s.loop_elems;
    s.max_allowed = cs_proto_max_allowed(loop_bytes, (size_bytes + nchunks - 1) / nchunks);
    *sz = s;
    return 0;
}

int cs_plan_sizing_sched(struct cs_plan_sizing *sz, const struct cs_sched *sched, int proto,
                         long long size_bytes, int type_bytes, struct cs_error *err)
{
    long long unit = (long long)sched->nchunksperloop * type_bytes, up = size_bytes;
    int rc;

    if (sched->nccl_kernel && type_bytes > 0 && unit > 0 && size_bytes > 0 &&
        size_bytes % type_bytes == 0)
        up = (size_bytes + unit - 1) / unit * unit;
    if ((rc = cs_plan_sizing_init(sz, sched->nchunksperloop, proto, up, type_bytes, 0, err)) != 0)
        return rc;
    sz->size_bytes = size_bytes;
    sz->count = size_bytes / type_bytes;
    return 0;
}

int cs_plan_build(const struct cs_sched *sched, long long size_bytes, int type_bytes,
                  enum cs_proto proto, struct cs_plan **out, struct cs_error *err)
{
    struct cs_plan_sizing sz;
    struct cs_plan *p;
    int rc;

    if ((rc = cs_plan_sizing_sched(&sz, sched, proto != 0 ? proto : sched->proto, size_bytes,
                                   type_bytes, err)) != 0 ||
        (rc = cs_plan_compile(sched, proto, &p, err)) != 0)
        return rc;
    cs_plan_resize(p, &sz, type_bytes);
    *out = p;
    return 0;
}

long long cs_plan_iter_elems(const struct cs_plan *plan, int iter)
{
    return cs_proto_iter_elems((long)plan->sz.chunk_elems, (long)plan->sz.loop_elems, iter);
}

/* Elements of chunk j (channel-major: channel j / per, its chunk j % per) in NCCL's own ring
 * AllReduce (a chunk per rank and channel) run in one loop iteration: each channel's part of
 * the count, then each chunk's, the quotient rounded up to CS_NCCL_CHUNK_ALIGN bytes, the
 * chunks in order until the count runs out, the rest empty (NCCL's ring kernels: chunkCount =
 * alignUp(divUp(remCount, nranks), 16 / sizeof(T)), nelem = min(chunkCount, remCount -
 * chunkOffset)); -1 where the plan is not one such (another collective or algorithm, or
 * several iterations). */
static long long nccl_chunk_elems(const struct cs_plan *plan, int j)
{
    int nc = plan->nchannels > 0 ? plan->nchannels : 1, per = plan->nchunksperloop / nc;
    long long a = CS_NCCL_CHUNK_ALIGN / plan->type_bytes, part, mine, chunk;

    if (!plan->nccl_kernel || plan->coll != CS_COLL_ALLREDUCE || plan->sz.niter != 1 ||
        per != plan->ngpus || per * nc != plan->nchunksperloop || j < 0 ||
        j >= plan->nchunksperloop)
        return -1;
    if (a < 1)
        a = 1;
    part = (plan->sz.count + nc - 1) / nc;
    part = (part + a - 1) / a * a;
    mine = plan->sz.count - (long long)(j / per) * part;
    mine = mine < 0 ? 0 : mine < part ? mine : part;
    chunk = (mine + per - 1) / per;
    chunk = (chunk + a - 1) / a * a;
    mine -= (long long)(j % per) * chunk;
    return mine < 0 ? 0 : mine < chunk ? mine : chunk;
}

int cs_plan_chunks_even(const struct cs_plan *plan)
{
    long long first = nccl_chunk_elems(plan, 0);

    for (int j = 1; first >= 0 && j < plan->nchunksperloop; j++)
        if (nccl_chunk_elems(plan, j) != first)
            return 0;
    return 1;
}

long long cs_plan_call_elems(const struct cs_plan *plan, const struct cs_plan_op *op, int iter,
                             int call)
{
    long start, len;
    int chunk = cs_step_reads_src(op->type) ? op->srcoff[0] : op->dstoff;
    long long n = op->cnt == 1 ? nccl_chunk_elems(plan, chunk) : -1;

    if (n >= 0)
        return n;

    cs_proto_call_region((long)plan->sz.chunk_elems, (long)plan->sz.loop_elems,
                         plan->sz.max_allowed, iter, 0, op->cnt, call, &start, &len);
    return len;
}

void cs_plan_call_units(const struct cs_plan *plan, long long elems, long long unit_bytes[2])
{
    long long slice = (elems + CS_SIMPLE_SLICES_PER_CALL * CS_SIMPLE_SLICE_ALIGN - 1) /
                      (CS_SIMPLE_SLICES_PER_CALL * CS_SIMPLE_SLICE_ALIGN) * CS_SIMPLE_SLICE_ALIGN;
    long long min_slice = cs_proto_simple_min_slice_bytes() / plan->type_bytes;

    if (plan->proto != CS_PROTO_SIMPLE) {
        unit_bytes[0] = elems * plan->type_bytes;
        unit_bytes[1] = 0;
        return;
    }
    /* ProtoSimple<2,2>: sliceSize = max(DIVUP(nelem, 16 x slices) x 16, the smallest slice), capped
     * at the call (prims_simple.h:211-212). */
    if (slice < min_slice)
        slice = min_slice;
    if (slice > elems)
        slice = elems;
    unit_bytes[0] = slice * plan->type_bytes;
    unit_bytes[1] = (elems - slice) * plan->type_bytes;
}

double cs_plan_wire_bytes(const struct cs_plan *plan, long long data_bytes)
{
    return (double)cs_proto_wire_bytes(plan->proto, data_bytes);
}
