/* xplan.c: the plan laid out in flat arrays for the GPU executor and the CPU emulation, with the
 * buffer, dependency, connection and call-matching checks the executor relies on. */
#include "xplan.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

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
    cs_free_each(7, plan->ranks, plan->tbs, plan->steps, plan->deps, plan->srcs, plan->conns, plan);
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
    case CS_BUF_INPUT:
        return rk->in_chunks;
    case CS_BUF_OUTPUT:
        return rk->out_chunks;
    case CS_BUF_SCRATCH:
        return rk->scratch_chunks;
    }
    return 0;
}

static int check_range(const struct cs_sched *sched, const struct cs_xplan_rank *rk, int rank,
                       const struct cs_plan_op *op, int buf, int off, struct cs_error *err)
{
    int size = buf_chunks(rk, buf);

    if (off < 0 || op->cnt < 0 || off + op->cnt > size) {
        cs_error_set(err, sched_file(sched), op->line,
                     "rank %d step %d (%s): chunks [%d, %d) of buffer %c outside its %d chunks",
                     rank, op->step, cs_step_type_name(op->type), off, off + op->cnt,
                     cs_buf_char(buf), size);
        return CS_ERR_INVALID;
    }
    return 0;
}

/* What the executor relies on for one transmission of tb t: a peer for what it sends or
 * receives, operands inside the rank's buffers, dependencies on existing steps of the rank. */
static int check_op(const struct cs_sched *sched, const struct cs_xplan *p,
                    const struct cs_plan_tb *t, const struct cs_plan_op *op, struct cs_error *err)
{
    const struct cs_xplan_rank *rk = &p->ranks[t->gpu];
    const struct cs_gpu *gpu = cs_sched_find_gpu(sched, t->gpu);
    int rc = 0;

    if ((cs_step_sends(op->type) && t->send < 0) || (cs_step_recvs(op->type) && t->recv < 0)) {
        cs_error_set(err, sched_file(sched), op->line,
                     "rank %d tb %d step %d %s but the tb has %s=-1", t->gpu, t->id, op->step,
                     cs_step_sends(op->type) && t->send < 0 ? "sends" : "receives",
                     cs_step_sends(op->type) && t->send < 0 ? "send" : "recv");
        return CS_ERR_INVALID;
    }
    for (int j = 0; j < op->nsrc && rc == 0 && cs_step_reads_src(op->type); j++)
        rc = check_range(sched, rk, t->gpu, op, op->srcbuf, op->srcoff[j], err);
    if (rc == 0 && cs_step_writes_dst(op->type))
        rc = check_range(sched, rk, t->gpu, op, op->dstbuf, op->dstoff, err);
    for (int d = 0; d < op->ndeps && rc == 0; d++) {
        const struct cs_tb *xd = cs_gpu_find_tb(gpu, op->deps[d].tb);

        if (xd == NULL) {
            cs_error_set(err, sched_file(sched), op->line, "rank %d: depid %d names no tb", t->gpu,
                         op->deps[d].tb);
            rc = CS_ERR_INVALID;
        } else if (op->deps[d].step < 0 || op->deps[d].step >= xd->nsteps) {
            cs_error_set(err, sched_file(sched), op->line,
                         "rank %d tb %d depends on step %d of tb %d, which has %d steps", t->gpu,
                         t->id, op->deps[d].step, op->deps[d].tb, xd->nsteps);
            rc = CS_ERR_INVALID;
        }
    }
    return rc;
}

struct layout {
    struct cs_xplan *p;
    int cap_steps, cap_deps, cap_srcs;
};

/* Append the transmissions of plan tb t (global index g) to the flat arrays. */
static int lay_out_tb(struct layout *l, const struct cs_plan_tb *t, int g)
{
    struct cs_xplan *p = l->p;
    int tb0 = p->ranks[t->gpu].tb_first;

    p->tbs[g] = (struct cs_xplan_tb){t->gpu, t->id, t->chan, -1, -1, p->nsteps, t->nops};
    for (int i = 0; i < t->nops; i++) {
        const struct cs_plan_op *op = &t->ops[i];
        struct cs_xplan_step *st;

        if (push((void **)&p->steps, &p->nsteps, &l->cap_steps, sizeof(*st)))
            return CS_ERR_NOMEM;
        st = &p->steps[p->nsteps - 1];
        *st = (struct cs_xplan_step){op->type,   op->srcbuf, op->srcoff[0], op->dstbuf, op->dstoff,
                                     op->cnt,    p->nsrcs,   op->nsrc - 1,  p->ndeps,   op->ndeps,
                                     op->hasdep, op->step,   op->line};
        for (int j = 1; j < op->nsrc; j++) {
            if (push((void **)&p->srcs, &p->nsrcs, &l->cap_srcs, sizeof(int)))
                return CS_ERR_NOMEM;
            p->srcs[p->nsrcs - 1] = op->srcoff[j];
        }
        for (int d = 0; d < op->ndeps; d++) {
            if (push((void **)&p->deps, &p->ndeps, &l->cap_deps, sizeof(*p->deps)))
                return CS_ERR_NOMEM;
            p->deps[p->ndeps - 1] = (struct cs_xplan_dep){tb0 + op->deps[d].tb, op->deps[d].step};
        }
    }
    return 0;
}

/* Buffers per rank, then every tb checked and laid out. */
static int lay_out(struct cs_xplan *p, const struct cs_sched *sched, const struct cs_plan *cp,
                   struct cs_error *err)
{
    struct layout l = {p, 0, 0, 0};
    int rc;

    p->ranks = calloc((size_t)p->nranks, sizeof(*p->ranks));
    p->tbs = calloc(cp->ntbs > 0 ? (size_t)cp->ntbs : 1, sizeof(*p->tbs));
    if (p->ranks == NULL || p->tbs == NULL)
        return CS_ERR_NOMEM;
    p->ntbs = cp->ntbs;
    for (int r = 0; r < p->nranks; r++) {
        if ((rc = set_buffers(sched, cs_sched_find_gpu(sched, r), r, &p->ranks[r], err)) != 0)
            return rc;
        p->ranks[r].tb_first = cp->gpu_tb0[r];
        p->ranks[r].ntbs = cp->gpu_tb0[r + 1] - cp->gpu_tb0[r];
    }
    for (int t = 0; t < cp->ntbs; t++) {
        for (int i = 0; i < cp->tbs[t].nops; i++)
            if ((rc = check_op(sched, p, &cp->tbs[t], &cp->tbs[t].ops[i], err)) != 0)
                return rc;
        if ((rc = lay_out_tb(&l, &cp->tbs[t], t)) != 0)
            return rc;
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
            cs_error_set(
                err, sched_file(sched), xa->line,
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
            cs_error_set(
                err, sched_file(sched), xa->line,
                "rank %d tb %d receives from rank %d on channel %d, where no tb sends to it",
                a->rank, a->id, xa->recv, xa->chan);
            return CS_ERR_INVALID;
        }
    }
    return 0;
}

int cs_xplan_build(const struct cs_sched *sched, struct cs_xplan **out, struct cs_error *err)
{
    struct cs_plan *cp = NULL;
    struct cs_xplan *p;
    int rc = cs_plan_compile(sched, 0, &cp, err);

    if (rc != 0)
        return rc;
    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        cs_plan_free(cp);
        return CS_ERR_NOMEM;
    }
    p->nranks = sched->ngpus;
    p->nchunks = sched->nchunksperloop;
    p->proto = sched->proto;
    p->coll = sched->coll;
    p->inplace = sched->inplace;
    rc = lay_out(p, sched, cp, err);
    cs_plan_free(cp);
    if (rc == 0)
        rc = build_conns(p, sched, err);
    if (rc != 0) {
        if (rc == CS_ERR_NOMEM)
            cs_error_set(err, sched_file(sched), 0, "out of memory compiling the plan");
        cs_xplan_free(p);
        return rc;
    }
    *out = p;
    return 0;
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
        calls = cs_proto_step_calls(st->cnt, max_count);
        if (want >= n && want < n + calls) {
            long start, len; /* in chunks: one-element chunks, one iteration */

            cs_proto_call_region(1, 1, max_count, 0, 0, st->cnt, (int)(want - n), &start, &len);
            *nk = (int)len;
        }
        n += calls;
    }
    return n;
}

int cs_xplan_size(const struct cs_xplan *plan, long long size_bytes, int elem_bytes,
                  long iter_bytes, struct cs_xplan_sizing *out, struct cs_error *err)
{
    struct cs_xplan_sizing sz = {0};
    int rc = cs_plan_sizing_init(&sz.run, plan->nchunks, plan->proto, size_bytes, elem_bytes,
                                 iter_bytes, err);

    if (rc != 0)
        return rc;
    sz.count = plan->coll == CS_COLL_ALLREDUCE || plan->coll == CS_COLL_CUSTOM
                   ? sz.run.count
                   : sz.run.count / plan->nranks;
    for (int c = 0; c < plan->nconns; c++) {
        const struct cs_xplan_conn *cn = &plan->conns[c];
        long ns = conn_calls(plan, cn->send_tb, cs_step_sends, sz.run.max_allowed, -1, NULL);
        long nr = conn_calls(plan, cn->recv_tb, cs_step_recvs, sz.run.max_allowed, -1, NULL);

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

            conn_calls(plan, cn->send_tb, cs_step_sends, sz.run.max_allowed, k, &a);
            conn_calls(plan, cn->recv_tb, cs_step_recvs, sz.run.max_allowed, k, &b);
            if (a != b) {
                cs_error_set(
                    err, "", 0,
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
