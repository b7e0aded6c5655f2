/* xplan.c: compile an MSCCL schedule into the executor's flat plan; reference results; CPU emulation. */
#include "xplan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Flag value of (iteration, XML step): compares lexicographically, as COMPUTE_FLAG does. */
#define FLAG(iter, s) ((long long)(iter) * CS_MAX_STEPS_LEGACY + (s))

struct builder {
    struct cs_xplan *p;
    int cap_steps, cap_deps, cap_srcs;
    const char *file;
};

static const char *sched_file(const struct cs_sched *sched)
{
    return sched->path ? sched->path : "";
}

static int push(void **arr, int *n, int *cap, size_t sz)
{
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 64;
        void *q = realloc(*arr, (size_t)ncap * sz);

        if (q == NULL)
            return CS_ERR_NOMEM;
        *arr = q;
        *cap = ncap;
    }
    memset((char *)*arr + (size_t)*n * sz, 0, sz);
    (*n)++;
    return 0;
}

void cs_xplan_free(struct cs_xplan *plan)
{
    if (plan == NULL)
        return;
    free(plan->ranks);
    free(plan->tbs);
    free(plan->steps);
    free(plan->deps);
    free(plan->srcs);
    free(plan->conns);
    free(plan);
}

/* Nominal buffer sizes and aliasing of rank r (msccl.md 4.1). */
static int set_buffers(const struct cs_sched *sched, const struct cs_gpu *gpu, int r,
                       struct cs_xplan_rank *rk, struct cs_error *err)
{
    int c = sched->nchunksperloop, n = sched->ngpus;

    rk->in_alias = rk->out_alias = -1;
    rk->scratch_chunks = gpu->s_chunks;
    if (sched->coll != CS_COLL_ALLREDUCE && sched->coll != CS_COLL_CUSTOM && c % n != 0) {
        cs_error_set(err, sched_file(sched), sched->line,
                     "nchunksperloop %d is not a multiple of ngpus %d, as %s requires", c, n,
                     cs_coll_name(sched->coll));
        return CS_ERR_INVALID;
    }
    switch (sched->coll) {
    case CS_COLL_ALLREDUCE:
    case CS_COLL_ALLTOALL:
        rk->in_chunks = rk->out_chunks = c;
        if (sched->inplace)
            rk->out_alias = 0;
        break;
    case CS_COLL_ALLGATHER:
        rk->in_chunks = c / n;
        rk->out_chunks = c;
        if (sched->inplace)
            rk->in_alias = r * (c / n);
        break;
    case CS_COLL_REDUCE_SCATTER:
        rk->in_chunks = c;
        rk->out_chunks = c / n;
        if (sched->inplace)
            rk->out_alias = r * (c / n);
        break;
    default: /* custom: what the XML declares, separate buffers */
        rk->in_chunks = gpu->i_chunks;
        rk->out_chunks = gpu->o_chunks;
        break;
    }
    return 0;
}

static int buf_chunks(const struct cs_xplan_rank *rk, int buf)
{
    switch (buf) {
    case CS_BUF_INPUT: return rk->in_chunks;
    case CS_BUF_OUTPUT: return rk->out_chunks;
    case CS_BUF_SCRATCH: return rk->scratch_chunks;
    }
    return 0;
}

static int check_range(const struct cs_sched *sched, const struct cs_xplan_rank *rk, int rank,
                       const struct cs_step *xs, int buf, int off, int cnt, struct cs_error *err)
{
    int size = buf_chunks(rk, buf);

    if (off < 0 || cnt < 0 || off + cnt > size) {
        cs_error_set(err, sched_file(sched), xs->line,
                     "rank %d step %d (%s): chunks [%d, %d) of buffer %c outside its %d chunks", rank,
                     xs->s, cs_step_type_name(xs->type), off, off + cnt, cs_buf_char(buf), size);
        return CS_ERR_INVALID;
    }
    return 0;
}

/* Fold one tb's XML steps into transmissions (msccl.md 2.1, 2.2). */
static int build_tb(struct builder *b, const struct cs_sched *sched, int rank, const struct cs_tb *tb,
                    struct cs_error *err)
{
    struct cs_xplan *p = b->p;
    const struct cs_xplan_rank *rk = &p->ranks[rank];
    struct cs_xplan_dep pending[CS_MAX_STEPS_LEGACY + 1];
    int npending = 0, rc, prev_xml_re = -1; /* plan index of a transmission that is the previous XML step's re */

    for (int k = 0; k < tb->nsteps; k++) {
        const struct cs_step *xs = &tb->steps[k];
        struct cs_xplan_step *st;
        struct cs_xplan_dep own = {-1, -1};

        if (xs->depid >= 0) {
            if (xs->depid >= rk->ntbs) {
                cs_error_set(err, sched_file(sched), xs->line, "rank %d: depid %d names no tb",
                             rank, xs->depid);
                return CS_ERR_INVALID;
            }
            own.tb = rk->tb_first + xs->depid;
            own.s = xs->deps;
        }
        if (xs->type == CS_STEP_NOP) {
            if (own.tb >= 0 && npending < (int)(sizeof(pending) / sizeof(pending[0])))
                pending[npending++] = own;
            prev_xml_re = -1;
            continue;
        }
        if (xs->type == CS_STEP_RE && prev_xml_re >= 0 && npending == 0) {
            struct cs_xplan_step *pr = &p->steps[prev_xml_re];

            if (pr->dstbuf == (int)xs->dstbuf && pr->dstoff == xs->dstoff &&
                pr->srcbuf == (int)xs->srcbuf && xs->depid < 0 && !pr->hasdep &&
                pr->nsrcs + 1 < CS_XPLAN_MAX_SRCS) {
                if ((rc = check_range(sched, rk, rank, xs, xs->srcbuf, xs->srcoff, xs->cnt, err)) ||
                    (rc = check_range(sched, rk, rank, xs, xs->dstbuf, xs->dstoff, xs->cnt, err)))
                    return rc;
                if (push((void **)&p->srcs, &p->nsrcs, &b->cap_srcs, sizeof(int)))
                    return CS_ERR_NOMEM;
                pr = &p->steps[prev_xml_re];
                p->srcs[p->nsrcs - 1] = xs->srcoff;
                pr->nsrcs++;
                pr->cnt = xs->cnt;
                pr->hasdep = xs->hasdep;
                pr->s = xs->s;
                pr->line = xs->line;
                continue;
            }
        }
        if (npending > 0 && own.tb < 0) {
            cs_error_set(err, sched_file(sched), xs->line,
                         "rank %d tb %d step %d inherits dependencies from the nops before it but has "
                         "no depid of its own (the MSCCL runtime rejects this)",
                         rank, tb->id, xs->s);
            return CS_ERR_INVALID;
        }
        if (cs_step_sends(xs->type) && tb->send < 0) {
            cs_error_set(err, sched_file(sched), xs->line, "rank %d tb %d step %d sends but the tb has send=-1",
                         rank, tb->id, xs->s);
            return CS_ERR_INVALID;
        }
        if (cs_step_recvs(xs->type) && tb->recv < 0) {
            cs_error_set(err, sched_file(sched), xs->line,
                         "rank %d tb %d step %d receives but the tb has recv=-1", rank, tb->id, xs->s);
            return CS_ERR_INVALID;
        }
        if (cs_step_reads_src(xs->type) &&
            (rc = check_range(sched, rk, rank, xs, xs->srcbuf, xs->srcoff, xs->cnt, err)))
            return rc;
        if (cs_step_writes_dst(xs->type) &&
            (rc = check_range(sched, rk, rank, xs, xs->dstbuf, xs->dstoff, xs->cnt, err)))
            return rc;
        if (push((void **)&p->steps, &p->nsteps, &b->cap_steps, sizeof(*st)))
            return CS_ERR_NOMEM;
        st = &p->steps[p->nsteps - 1];
        st->type = xs->type;
        if (cs_step_reads_src(xs->type)) {
            st->srcbuf = xs->srcbuf;
            st->srcoff = xs->srcoff;
        }
        if (cs_step_writes_dst(xs->type)) {
            st->dstbuf = xs->dstbuf;
            st->dstoff = xs->dstoff;
        }
        st->cnt = xs->cnt;
        st->src_first = p->nsrcs;
        st->hasdep = xs->hasdep;
        st->s = xs->s;
        st->line = xs->line;
        st->dep_first = p->ndeps;
        if (own.tb >= 0)
            pending[npending++] = own;
        for (int d = 0; d < npending; d++) {
            if (push((void **)&p->deps, &p->ndeps, &b->cap_deps, sizeof(*p->deps)))
                return CS_ERR_NOMEM;
            p->deps[p->ndeps - 1] = pending[d];
        }
        p->steps[p->nsteps - 1].ndeps = npending;
        npending = 0;
        prev_xml_re = xs->type == CS_STEP_RE ? p->nsteps - 1 : -1;
    }
    return 0;
}

static int tb_uses(const struct cs_tb *tb, int (*pred)(enum cs_step_type))
{
    for (int k = 0; k < tb->nsteps; k++)
        if (pred(tb->steps[k].type))
            return 1;
    return 0;
}

/* Pair every sending tb with the receiving tb of its connection. */
static int build_conns(struct cs_xplan *p, const struct cs_sched *sched, struct cs_error *err)
{
    int cap = 0;

    for (int t = 0; t < p->ntbs; t++)
        p->tbs[t].send_conn = p->tbs[t].recv_conn = -1;
    for (int t = 0; t < p->ntbs; t++) {
        struct cs_xplan_tb *a = &p->tbs[t];
        const struct cs_gpu *ga = cs_sched_find_gpu(sched, a->rank);
        const struct cs_tb *xa = cs_gpu_find_tb(ga, a->id);
        const struct cs_xplan_rank *rd;
        int peer = xa->send, found = -1;

        for (int u = p->ranks[a->rank].tb_first; u < t; u++) {
            const struct cs_tb *xu = cs_gpu_find_tb(ga, p->tbs[u].id);

            if ((peer >= 0 && xu->send == peer && xu->chan == xa->chan) ||
                (xa->recv >= 0 && xu->recv == xa->recv && xu->chan == xa->chan)) {
                cs_error_set(err, sched_file(sched), xa->line,
                             "rank %d: tbs %d and %d share a connection on channel %d", a->rank,
                             p->tbs[u].id, a->id, xa->chan);
                return CS_ERR_INVALID;
            }
        }
        if (peer < 0)
            continue;
        if (peer >= p->nranks || peer == a->rank) {
            cs_error_set(err, sched_file(sched), xa->line, "rank %d tb %d: invalid send peer %d",
                         a->rank, a->id, peer);
            return CS_ERR_INVALID;
        }
        rd = &p->ranks[peer];
        for (int u = rd->tb_first; u < rd->tb_first + rd->ntbs; u++) {
            const struct cs_tb *xu = cs_gpu_find_tb(cs_sched_find_gpu(sched, peer), p->tbs[u].id);

            if (xu->recv == a->rank && xu->chan == xa->chan) {
                found = u;
                break;
            }
        }
        if (found < 0) {
            if (!tb_uses(xa, cs_step_sends))
                continue;
            cs_error_set(err, sched_file(sched), xa->line,
                         "rank %d tb %d sends to rank %d on channel %d, where no tb receives from it",
                         a->rank, a->id, peer, xa->chan);
            return CS_ERR_INVALID;
        }
        if (push((void **)&p->conns, &p->nconns, &cap, sizeof(*p->conns)))
            return CS_ERR_NOMEM;
        p->conns[p->nconns - 1] = (struct cs_xplan_conn){a->rank, peer, xa->chan, t, found};
        a->send_conn = p->nconns - 1;
        p->tbs[found].recv_conn = p->nconns - 1;
    }
    for (int t = 0; t < p->ntbs; t++) {
        const struct cs_xplan_tb *a = &p->tbs[t];
        const struct cs_tb *xa = cs_gpu_find_tb(cs_sched_find_gpu(sched, a->rank), a->id);

        if (xa->recv >= 0 && a->recv_conn < 0 && tb_uses(xa, cs_step_recvs)) {
            cs_error_set(err, sched_file(sched), xa->line,
                         "rank %d tb %d receives from rank %d on channel %d, where no tb sends to it",
                         a->rank, a->id, xa->recv, xa->chan);
            return CS_ERR_INVALID;
        }
    }
    return 0;
}

int cs_xplan_build(const struct cs_sched *sched, struct cs_xplan **out, struct cs_error *err)
{
    struct builder b = {0};
    struct cs_xplan *p = calloc(1, sizeof(*p));
    int rc = CS_ERR_NOMEM, ntbs = 0;

    if (p == NULL)
        return CS_ERR_NOMEM;
    b.p = p;
    if (sched->ngpus <= 0 || sched->ngpus_alloc != sched->ngpus || sched->nchunksperloop <= 0) {
        cs_error_set(err, sched_file(sched), sched->line, "schedule is incomplete (ngpus %d, %d <gpu>s)",
                     sched->ngpus, sched->ngpus_alloc);
        rc = CS_ERR_INVALID;
        goto fail;
    }
    p->nranks = sched->ngpus;
    p->nchunks = sched->nchunksperloop;
    p->proto = sched->proto;
    p->coll = sched->coll;
    p->inplace = sched->inplace;
    p->ranks = calloc((size_t)p->nranks, sizeof(*p->ranks));
    if (p->ranks == NULL)
        goto fail;
    for (int r = 0; r < p->nranks; r++) {
        const struct cs_gpu *gpu = cs_sched_find_gpu(sched, r);

        if (gpu == NULL) {
            cs_error_set(err, sched_file(sched), sched->line, "no <gpu id=\"%d\">", r);
            rc = CS_ERR_INVALID;
            goto fail;
        }
        if ((rc = set_buffers(sched, gpu, r, &p->ranks[r], err)) != 0)
            goto fail;
        p->ranks[r].tb_first = ntbs;
        p->ranks[r].ntbs = gpu->ntbs;
        ntbs += gpu->ntbs;
    }
    p->tbs = calloc(ntbs > 0 ? (size_t)ntbs : 1, sizeof(*p->tbs));
    if (p->tbs == NULL) {
        rc = CS_ERR_NOMEM;
        goto fail;
    }
    p->ntbs = ntbs;
    for (int r = 0; r < p->nranks; r++) {
        const struct cs_gpu *gpu = cs_sched_find_gpu(sched, r);

        for (int id = 0; id < gpu->ntbs; id++) {
            const struct cs_tb *tb = cs_gpu_find_tb(gpu, id);
            struct cs_xplan_tb *pt = &p->tbs[p->ranks[r].tb_first + id];

            if (tb == NULL) {
                cs_error_set(err, sched_file(sched), gpu->line, "rank %d: tb %d is missing", r, id);
                rc = CS_ERR_INVALID;
                goto fail;
            }
            pt->rank = r;
            pt->id = id;
            pt->chan = tb->chan;
            pt->step_first = p->nsteps;
            if ((rc = build_tb(&b, sched, r, tb, err)) != 0)
                goto fail;
            p->tbs[p->ranks[r].tb_first + id].nsteps = p->nsteps - pt->step_first;
        }
    }
    /* Dependencies must name a step that exists in the target tb. */
    for (int t = 0; t < p->ntbs; t++) {
        const struct cs_tb *xt =
            cs_gpu_find_tb(cs_sched_find_gpu(sched, p->tbs[t].rank), p->tbs[t].id);

        for (int i = p->tbs[t].step_first; i < p->tbs[t].step_first + p->tbs[t].nsteps; i++)
            for (int d = p->steps[i].dep_first; d < p->steps[i].dep_first + p->steps[i].ndeps; d++) {
                const struct cs_xplan_dep *dp = &p->deps[d];
                const struct cs_tb *xd = cs_gpu_find_tb(cs_sched_find_gpu(sched, p->tbs[t].rank),
                                                        p->tbs[dp->tb].id);

                if (dp->s < 0 || dp->s >= xd->nsteps) {
                    cs_error_set(err, sched_file(sched), p->steps[i].line ? p->steps[i].line : xt->line,
                                 "rank %d tb %d depends on step %d of tb %d, which has %d steps",
                                 p->tbs[t].rank, p->tbs[t].id, dp->s, p->tbs[dp->tb].id, xd->nsteps);
                    rc = CS_ERR_INVALID;
                    goto fail;
                }
            }
    }
    if ((rc = build_conns(p, sched, err)) != 0)
        goto fail;
    *out = p;
    return 0;
fail:
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, sched_file(sched), 0, "out of memory compiling the plan");
    cs_xplan_free(p);
    return rc;
}

long cs_xplan_proto_chunk_bytes(int proto)
{
    switch (proto) {
    case CS_PROTO_SIMPLE: return CS_XPLAN_CHUNK_BYTES_SIMPLE;
    case CS_PROTO_LL: return CS_XPLAN_CHUNK_BYTES_LL;
    case CS_PROTO_LL128: return CS_XPLAN_CHUNK_BYTES_LL128;
    }
    return 0;
}

int cs_xplan_proto_slots(int proto)
{
    return proto == CS_PROTO_SIMPLE ? CS_XPLAN_SLOTS_SIMPLE : CS_XPLAN_SLOTS_LL;
}

int cs_xplan_step_calls(const struct cs_xplan_step *st, int max_count)
{
    return (st->cnt + max_count - 1) / max_count;
}

/* Calls per iteration a tb issues on steps matching pred; with want >= 0, also stores the chunk
 * count of call number `want` in *nk. */
static long conn_calls(const struct cs_xplan *plan, int tb, int (*pred)(enum cs_step_type),
                       int max_count, long want, int *nk)
{
    const struct cs_xplan_tb *t = &plan->tbs[tb];
    long n = 0;

    for (int i = t->step_first; i < t->step_first + t->nsteps; i++) {
        const struct cs_xplan_step *st = &plan->steps[i];
        int calls;

        if (!pred((enum cs_step_type)st->type))
            continue;
        calls = cs_xplan_step_calls(st, max_count);
        if (want >= n && want < n + calls) {
            long k = want - n;

            *nk = st->cnt - (int)k * max_count < max_count ? st->cnt - (int)k * max_count : max_count;
        }
        n += calls;
    }
    return n;
}

int cs_xplan_size(const struct cs_xplan *plan, long long size_bytes, int elem_bytes,
                  long iter_bytes, struct cs_xplan_sizing *out, struct cs_error *err)
{
    struct cs_xplan_sizing sz = {0};
    long long per_chunk;
    long mc;

    if (iter_bytes <= 0)
        iter_bytes = cs_xplan_proto_chunk_bytes(plan->proto);
    if (elem_bytes <= 0 || size_bytes <= 0 || iter_bytes < elem_bytes ||
        size_bytes % ((long long)plan->nchunks * elem_bytes) != 0) {
        cs_error_set(err, "", 0, "size %lld B does not split into %d chunks of %d-byte elements",
                     size_bytes, plan->nchunks, elem_bytes);
        return CS_ERR_INVALID;
    }
    sz.size_bytes = size_bytes;
    sz.chunk_elems = (long)(size_bytes / elem_bytes / plan->nchunks);
    per_chunk = (long long)sz.chunk_elems * elem_bytes;
    sz.count = plan->coll == CS_COLL_ALLREDUCE || plan->coll == CS_COLL_CUSTOM
                   ? size_bytes / elem_bytes
                   : size_bytes / elem_bytes / plan->nranks;
    sz.iter_elems = iter_bytes / elem_bytes;
    sz.niters = (int)((sz.chunk_elems + sz.iter_elems - 1) / sz.iter_elems);
    mc = (long)(iter_bytes / per_chunk);
    sz.max_count = mc < 1 ? 1 : mc > CS_MAX_CNT - 1 ? CS_MAX_CNT - 1 : (int)mc;
    for (int c = 0; c < plan->nconns; c++) {
        const struct cs_xplan_conn *cn = &plan->conns[c];
        long ns = conn_calls(plan, cn->send_tb, cs_step_sends, sz.max_count, -1, NULL);
        long nr = conn_calls(plan, cn->recv_tb, cs_step_recvs, sz.max_count, -1, NULL);

        if (ns != nr) {
            cs_error_set(err, "", 0,
                         "connection %d->%d channel %d: the sender issues %ld calls per iteration, "
                         "the receiver %ld (the run would hang)",
                         cn->src, cn->dst, cn->chan, ns, nr);
            return CS_ERR_INVALID;
        }
        /* The k-th send and the k-th receive must move the same number of chunks. */
        for (long k = 0; k < ns; k++) {
            int a = 0, b = 0;

            conn_calls(plan, cn->send_tb, cs_step_sends, sz.max_count, k, &a);
            conn_calls(plan, cn->recv_tb, cs_step_recvs, sz.max_count, k, &b);
            if (a != b) {
                cs_error_set(err, "", 0,
                             "connection %d->%d channel %d: call %ld sends %d chunks but receives %d",
                             cn->src, cn->dst, cn->chan, k, a, b);
                return CS_ERR_INVALID;
            }
        }
        if (ns > sz.max_call_calls)
            sz.max_call_calls = ns;
    }
    *out = sz;
    return 0;
}

int cs_xplan_has_reference(const struct cs_xplan *plan)
{
    return plan->coll != CS_COLL_CUSTOM;
}

float cs_xplan_input_value(int rank, long e)
{
    /* Integers in [-30, 30]: sums over up to 2^18 ranks stay exact in float. */
    return (float)(((long)rank * 131 + e * 7 + (e >> 9) * 3) % 61 - 30);
}

void cs_xplan_fill_input(const struct cs_xplan *plan, int rank, long chunk_elems, float *in)
{
    long n = (long)plan->ranks[rank].in_chunks * chunk_elems;

    for (long e = 0; e < n; e++)
        in[e] = cs_xplan_input_value(rank, e);
}

int cs_xplan_expect_output(const struct cs_xplan *plan, int rank, long chunk_elems, float *out)
{
    long n = (long)plan->ranks[rank].out_chunks * chunk_elems;
    long per = (long)(plan->nchunks / plan->nranks) * chunk_elems; /* one rank's share */

    switch (plan->coll) {
    case CS_COLL_ALLREDUCE:
        for (long e = 0; e < n; e++) {
            float v = 0;

            for (int q = 0; q < plan->nranks; q++)
                v += cs_xplan_input_value(q, e);
            out[e] = v;
        }
        return 0;
    case CS_COLL_ALLGATHER:
        for (long e = 0; e < n; e++)
            out[e] = cs_xplan_input_value((int)(e / per), e % per);
        return 0;
    case CS_COLL_REDUCE_SCATTER:
        for (long e = 0; e < n; e++) {
            float v = 0;

            for (int q = 0; q < plan->nranks; q++)
                v += cs_xplan_input_value(q, rank * per + e);
            out[e] = v;
        }
        return 0;
    case CS_COLL_ALLTOALL:
        for (long e = 0; e < n; e++)
            out[e] = cs_xplan_input_value((int)(e / per), rank * per + e % per);
        return 0;
    }
    return CS_ERR_USAGE;
}

void cs_xplan_bufs_free(struct cs_xplan_bufs *bufs)
{
    if (bufs == NULL)
        return;
    for (int r = 0; r < bufs->nranks; r++) {
        if (bufs->in_mem)
            free(bufs->in_mem[r]);
        if (bufs->out_mem)
            free(bufs->out_mem[r]);
        if (bufs->scratch)
            free(bufs->scratch[r]);
    }
    free(bufs->in);
    free(bufs->out);
    free(bufs->scratch);
    free(bufs->in_mem);
    free(bufs->out_mem);
    free(bufs);
}

struct cs_xplan_bufs *cs_xplan_bufs_new(const struct cs_xplan *plan, long chunk_elems)
{
    struct cs_xplan_bufs *b = calloc(1, sizeof(*b));
    size_t n = (size_t)plan->nranks;

    if (b == NULL)
        return NULL;
    b->nranks = plan->nranks;
    b->chunk_elems = chunk_elems;
    b->in = calloc(n, sizeof(float *));
    b->out = calloc(n, sizeof(float *));
    b->scratch = calloc(n, sizeof(float *));
    b->in_mem = calloc(n, sizeof(float *));
    b->out_mem = calloc(n, sizeof(float *));
    if (!b->in || !b->out || !b->scratch || !b->in_mem || !b->out_mem)
        goto fail;
    for (int r = 0; r < plan->nranks; r++) {
        const struct cs_xplan_rank *rk = &plan->ranks[r];
        size_t ni = (size_t)rk->in_chunks * (size_t)chunk_elems;
        size_t no = (size_t)rk->out_chunks * (size_t)chunk_elems;
        size_t ns = (size_t)rk->scratch_chunks * (size_t)chunk_elems;

        b->scratch[r] = calloc(ns ? ns : 1, sizeof(float));
        if (b->scratch[r] == NULL)
            goto fail;
        if (rk->in_alias >= 0) {
            b->out_mem[r] = malloc((no ? no : 1) * sizeof(float));
            if (b->out_mem[r] == NULL)
                goto fail;
            b->out[r] = b->out_mem[r];
            b->in[r] = b->out[r] + (size_t)rk->in_alias * (size_t)chunk_elems;
        } else {
            b->in_mem[r] = malloc((ni ? ni : 1) * sizeof(float));
            if (b->in_mem[r] == NULL)
                goto fail;
            b->in[r] = b->in_mem[r];
            if (rk->out_alias >= 0) {
                b->out[r] = b->in[r] + (size_t)rk->out_alias * (size_t)chunk_elems;
            } else {
                b->out_mem[r] = malloc((no ? no : 1) * sizeof(float));
                if (b->out_mem[r] == NULL)
                    goto fail;
                b->out[r] = b->out_mem[r];
            }
        }
        if (b->out_mem[r])
            for (size_t e = 0; e < no; e++)
                b->out[r][e] = NAN;
        cs_xplan_fill_input(plan, r, chunk_elems, b->in[r]);
    }
    return b;
fail:
    cs_xplan_bufs_free(b);
    return NULL;
}

long cs_xplan_check_output(const struct cs_xplan *plan, const struct cs_xplan_bufs *bufs,
                           struct cs_error *err)
{
    long wrong = 0, maxn = 0;
    float *exp;

    if (!cs_xplan_has_reference(plan))
        return CS_ERR_USAGE;
    for (int r = 0; r < plan->nranks; r++)
        if ((long)plan->ranks[r].out_chunks * bufs->chunk_elems > maxn)
            maxn = (long)plan->ranks[r].out_chunks * bufs->chunk_elems;
    exp = malloc((size_t)(maxn ? maxn : 1) * sizeof(float));
    if (exp == NULL)
        return CS_ERR_NOMEM;
    for (int r = 0; r < plan->nranks; r++) {
        long n = (long)plan->ranks[r].out_chunks * bufs->chunk_elems;

        cs_xplan_expect_output(plan, r, bufs->chunk_elems, exp);
        for (long e = 0; e < n; e++)
            if (!(bufs->out[r][e] == exp[e])) {
                if (wrong == 0)
                    cs_error_set(err, "", 0,
                                 "rank %d output chunk %ld element %ld: expected %g, found %g", r,
                                 e / bufs->chunk_elems, e % bufs->chunk_elems, (double)exp[e],
                                 (double)bufs->out[r][e]);
                wrong++;
            }
    }
    free(exp);
    return wrong;
}

/* ---- CPU emulation ---- */

struct emu_conn {
    float *slots[CS_NCCL_STEPS]; /* one payload per queued call */
    long len[CS_NCCL_STEPS];
    int head, ncalls; /* queue of calls */
};

struct emu_tb {
    int step, call, iter, done;
};

static float *buf_ptr(const struct cs_xplan_bufs *b, int rank, int buf)
{
    switch (buf) {
    case CS_BUF_INPUT: return b->in[rank];
    case CS_BUF_OUTPUT: return b->out[rank];
    case CS_BUF_SCRATCH: return b->scratch[rank];
    }
    return NULL;
}

/* Elements [*start, *start + *len) of a chunk-relative call region: call k of a step at chunk
 * offset off, in iteration iter. Calls of several chunks only happen with one iteration, where a
 * chunk slice is the whole chunk, so the region is contiguous. */
static void call_region(const struct cs_xplan_sizing *sz, int off, int cnt, int k, int iter,
                        long *start, long *len)
{
    long g = (long)iter * sz->iter_elems;
    long nelem = sz->chunk_elems - g < sz->iter_elems ? sz->chunk_elems - g : sz->iter_elems;
    int c0 = off + k * sz->max_count;
    int nk = cnt - k * sz->max_count < sz->max_count ? cnt - k * sz->max_count : sz->max_count;

    *start = (long)c0 * sz->chunk_elems + g;
    *len = (long)(nk - 1) * sz->chunk_elems + nelem;
}

/* One call of tb t if it can run now: 1 when done, 0 when blocked. */
static int emu_call(const struct cs_xplan *p, const struct cs_xplan_sizing *sz,
                    struct cs_xplan_bufs *b, struct emu_conn *conns, struct emu_tb *es,
                    long long *flags, int t)
{
    const struct cs_xplan_tb *tb = &p->tbs[t];
    struct emu_tb *e = &es[t];
    const struct cs_xplan_step *st = &p->steps[tb->step_first + e->step];
    int slots = cs_xplan_proto_slots(p->proto), calls = cs_xplan_step_calls(st, sz->max_count);
    struct emu_conn *in = tb->recv_conn >= 0 ? &conns[tb->recv_conn] : NULL;
    struct emu_conn *outc = tb->send_conn >= 0 ? &conns[tb->send_conn] : NULL;
    long start, len, dstart = 0, dlen = 0;
    const float *rx = NULL;
    float *src = NULL, *dst = NULL, *tx = NULL;

    if (e->call == 0)
        for (int d = st->dep_first; d < st->dep_first + st->ndeps; d++)
            if (flags[p->deps[d].tb] < FLAG(e->iter, p->deps[d].s))
                return 0;
    if (calls > 0) {
        if (cs_step_recvs(st->type) && in->ncalls == 0)
            return 0;
        if (cs_step_sends(st->type) && (outc->ncalls + 1) * slots > CS_NCCL_STEPS)
            return 0;
        call_region(sz, st->srcoff, st->cnt, e->call, e->iter, &start, &len);
        if (cs_step_writes_dst(st->type))
            call_region(sz, st->dstoff, st->cnt, e->call, e->iter, &dstart, &dlen);
        if (cs_step_reads_src(st->type))
            src = buf_ptr(b, tb->rank, st->srcbuf) + start;
        if (cs_step_writes_dst(st->type))
            dst = buf_ptr(b, tb->rank, st->dstbuf) + dstart;
        if (cs_step_recvs(st->type)) {
            rx = in->slots[in->head];
            len = in->len[in->head];
        } else if (cs_step_writes_dst(st->type) && !cs_step_reads_src(st->type)) {
            len = dlen;
        }
        if (cs_step_sends(st->type)) {
            int slot = (outc->head + outc->ncalls) % CS_NCCL_STEPS;

            tx = outc->slots[slot];
            outc->len[slot] = len;
        }
        for (long i = 0; i < len; i++) {
            float v;

            if (st->type == CS_STEP_RE) {
                v = dst[i] + src[i];
                for (int j = 0; j < st->nsrcs; j++)
                    v += buf_ptr(b, tb->rank, st->srcbuf)[start - (long)st->srcoff * sz->chunk_elems +
                                                          (long)p->srcs[st->src_first + j] *
                                                              sz->chunk_elems + i];
            } else if (rx && cs_step_reduces(st->type)) {
                v = src[i] + rx[i];
            } else if (rx) {
                v = rx[i];
            } else {
                v = src[i];
            }
            if (dst)
                dst[i] = v;
            if (tx)
                tx[i] = v;
        }
        if (rx) {
            in->head = (in->head + 1) % CS_NCCL_STEPS;
            in->ncalls--;
        }
        if (tx)
            outc->ncalls++;
    }
    if (++e->call >= calls) {
        e->call = 0;
        if (st->hasdep)
            flags[t] = FLAG(e->iter, st->s);
        if (++e->step >= tb->nsteps) {
            e->step = 0;
            if (++e->iter >= sz->niters)
                e->done = 1;
        }
    }
    return 1;
}

int cs_xplan_emulate(const struct cs_xplan *p, const struct cs_xplan_sizing *sz,
                     struct cs_xplan_bufs *b, struct cs_error *err)
{
    struct emu_conn *conns = calloc((size_t)(p->nconns ? p->nconns : 1), sizeof(*conns));
    struct emu_tb *es = calloc((size_t)(p->ntbs ? p->ntbs : 1), sizeof(*es));
    long long *flags = malloc((size_t)(p->ntbs ? p->ntbs : 1) * sizeof(*flags));
    long call_elems = (long)sz->max_count *
                      (sz->iter_elems < sz->chunk_elems ? sz->iter_elems : sz->chunk_elems);
    int rc = CS_ERR_NOMEM, left = 0, progress = 1;

    if (conns == NULL || es == NULL || flags == NULL)
        goto out;
    for (int c = 0; c < p->nconns; c++)
        for (int s = 0; s < CS_NCCL_STEPS; s++)
            if ((conns[c].slots[s] = malloc((size_t)call_elems * sizeof(float))) == NULL)
                goto out;
    for (int t = 0; t < p->ntbs; t++) {
        flags[t] = -1;
        es[t].done = p->tbs[t].nsteps == 0;
        left += !es[t].done;
    }
    while (left > 0 && progress) {
        progress = 0;
        for (int t = 0; t < p->ntbs; t++) {
            if (es[t].done)
                continue;
            while (!es[t].done && emu_call(p, sz, b, conns, es, flags, t))
                progress = 1;
            left -= es[t].done;
        }
    }
    rc = 0;
    if (left > 0) {
        for (int t = 0; t < p->ntbs; t++)
            if (!es[t].done) {
                const struct cs_xplan_step *st = &p->steps[p->tbs[t].step_first + es[t].step];

                cs_error_set(err, "", st->line,
                             "deadlock: %d tbs cannot proceed; rank %d tb %d waits at step %d (%s) "
                             "call %d of iteration %d",
                             left, p->tbs[t].rank, p->tbs[t].id, st->s, cs_step_type_name(st->type),
                             es[t].call, es[t].iter);
                break;
            }
        rc = CS_ERR_SIM;
    }
out:
    if (conns)
        for (int c = 0; c < p->nconns; c++)
            for (int s = 0; s < CS_NCCL_STEPS; s++)
                free(conns[c].slots[s]);
    free(conns);
    free(es);
    free(flags);
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, "", 0, "out of memory in the emulation");
    return rc;
}
