/* emulate.c: the plan run sequentially on the CPU with the executor's rules, on buffers filled with
 * known inputs, and the collective's reference output to check it against. */
#include "emulate.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Flag value of (iteration, XML step) in one launch; -1 before the first. */
#define FLAG(iter, s) ((long long)cs_proto_flag(0, iter, s))

/* The plan's call k of a step at chunk offset off, in iteration iter: [*start, *start + *len). */
static void call_region(const struct cs_xplan_sizing *sz, int off, int cnt, int k, int iter,
                        long *start, long *len)
{
    cs_proto_call_region((long)sz->run.chunk_elems, (long)sz->run.loop_elems, sz->run.max_allowed,
                         iter, off, cnt, k, start, len);
}

int cs_emulate_has_reference(const struct cs_xplan *plan)
{
    return plan->coll != CS_COLL_CUSTOM;
}

float cs_emulate_input_value(int rank, long e)
{
    /* Integers in [-30, 30]: sums over up to 2^18 ranks stay exact in float. */
    return (float)(((long)rank * 131 + e * 7 + (e >> 9) * 3) % 61 - 30);
}

/* Fill rank r's input (in_chunks x chunk_elems floats) with cs_emulate_input_value. */
static void fill_input(const struct cs_xplan *plan, int rank, long chunk_elems, float *in)
{
    long n = (long)plan->ranks[rank].in_chunks * chunk_elems;

    for (long e = 0; e < n; e++)
        in[e] = cs_emulate_input_value(rank, e);
}

int cs_emulate_expect_output(const struct cs_xplan *plan, int rank, long chunk_elems, float *out)
{
    long n = (long)plan->ranks[rank].out_chunks * chunk_elems;
    long per = (long)(plan->nchunks / plan->nranks) * chunk_elems; /* one rank's share */
    /* Reduce-scatter and all-to-all keep this rank's share of each input, at rank x per. */
    long base =
        plan->coll == CS_COLL_REDUCE_SCATTER || plan->coll == CS_COLL_ALLTOALL ? rank * per : 0;

    switch (plan->coll) {
    case CS_COLL_ALLREDUCE:
    case CS_COLL_REDUCE_SCATTER:
        for (long e = 0; e < n; e++) {
            float v = 0;

            for (int q = 0; q < plan->nranks; q++)
                v += cs_emulate_input_value(q, base + e);
            out[e] = v;
        }
        return 0;
    case CS_COLL_ALLGATHER:
    case CS_COLL_ALLTOALL:
        for (long e = 0; e < n; e++)
            out[e] = cs_emulate_input_value((int)(e / per), base + e % per);
        return 0;
    }
    return CS_ERR_USAGE;
}

void cs_emulate_bufs_free(struct cs_emulate_bufs *bufs)
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
    cs_free_each(6, bufs->in, bufs->out, bufs->scratch, bufs->in_mem, bufs->out_mem, bufs);
}

/* Allocate n floats (at least one), owned through *mem; the buffer, or NULL when out of memory. */
static float *own_floats(float **mem, size_t n)
{
    *mem = malloc((n ? n : 1) * sizeof(float));
    return *mem;
}

struct cs_emulate_bufs *cs_emulate_bufs_new(const struct cs_xplan *plan, long chunk_elems)
{
    struct cs_emulate_bufs *b = calloc(1, sizeof(*b));
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
            if ((b->out[r] = own_floats(&b->out_mem[r], no)) == NULL)
                goto fail;
            b->in[r] = b->out[r] + (size_t)rk->in_alias * (size_t)chunk_elems;
        } else {
            if ((b->in[r] = own_floats(&b->in_mem[r], ni)) == NULL)
                goto fail;
            if (rk->out_alias >= 0)
                b->out[r] = b->in[r] + (size_t)rk->out_alias * (size_t)chunk_elems;
            else if ((b->out[r] = own_floats(&b->out_mem[r], no)) == NULL)
                goto fail;
        }
        if (b->out_mem[r])
            for (size_t e = 0; e < no; e++)
                b->out[r][e] = NAN;
        fill_input(plan, r, chunk_elems, b->in[r]);
    }
    return b;
fail:
    cs_emulate_bufs_free(b);
    return NULL;
}

long cs_emulate_check_output(const struct cs_xplan *plan, const struct cs_emulate_bufs *bufs,
                             struct cs_error *err)
{
    long wrong = 0, maxn = 0;
    float *exp;

    if (!cs_emulate_has_reference(plan))
        return CS_ERR_USAGE;
    for (int r = 0; r < plan->nranks; r++)
        if ((long)plan->ranks[r].out_chunks * bufs->chunk_elems > maxn)
            maxn = (long)plan->ranks[r].out_chunks * bufs->chunk_elems;
    exp = malloc((size_t)(maxn ? maxn : 1) * sizeof(float));
    if (exp == NULL)
        return CS_ERR_NOMEM;
    for (int r = 0; r < plan->nranks; r++) {
        long n = (long)plan->ranks[r].out_chunks * bufs->chunk_elems;

        cs_emulate_expect_output(plan, r, bufs->chunk_elems, exp);
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

static float *buf_ptr(const struct cs_emulate_bufs *b, int rank, int buf)
{
    switch (buf) {
    case CS_BUF_INPUT:
        return b->in[rank];
    case CS_BUF_OUTPUT:
        return b->out[rank];
    case CS_BUF_SCRATCH:
        return b->scratch[rank];
    }
    return NULL;
}

/* The values of one call: what arrives (plus the source when reducing), or the source; a fused
 * re adds its other sources, found at the same place of other chunks (base: chunk 0 there). */
static void apply(const struct cs_xplan *p, const struct cs_xplan_step *st, const float *src,
                  const float *rx, const float *base, long chunk_elems, float *dst, float *tx,
                  long len)
{
    for (long i = 0; i < len; i++) {
        float v;

        if (st->type == CS_STEP_RE) {
            v = dst[i] + src[i];
            for (int j = 0; j < st->nsrcs; j++)
                v += base[(long)p->srcs[st->src_first + j] * chunk_elems + i];
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
}

/* One call of tb t if it can run now: 1 when done, 0 when blocked. */
static int emu_call(const struct cs_xplan *p, const struct cs_xplan_sizing *sz,
                    struct cs_emulate_bufs *b, struct emu_conn *conns, struct emu_tb *es,
                    long long *flags, int t)
{
    const struct cs_xplan_tb *tb = &p->tbs[t];
    struct emu_tb *e = &es[t];
    const struct cs_xplan_step *st = &p->steps[tb->step_first + e->step];
    int slots = cs_proto_slots_per_call(p->proto);
    int calls = cs_proto_step_calls(st->cnt, sz->run.max_allowed);
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
        apply(p, st, src, rx, src ? src - (long)st->srcoff * sz->run.chunk_elems : NULL,
              (long)sz->run.chunk_elems, dst, tx, len);
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
            if (++e->iter >= sz->run.niter)
                e->done = 1;
        }
    }
    return 1;
}

int cs_emulate_run(const struct cs_xplan *p, const struct cs_xplan_sizing *sz,
                   struct cs_emulate_bufs *b, struct cs_error *err)
{
    struct emu_conn *conns = calloc((size_t)(p->nconns ? p->nconns : 1), sizeof(*conns));
    struct emu_tb *es = calloc((size_t)(p->ntbs ? p->ntbs : 1), sizeof(*es));
    long long *flags = malloc((size_t)(p->ntbs ? p->ntbs : 1) * sizeof(*flags));
    long call_elems =
        (long)sz->run.max_allowed *
        (sz->run.loop_elems < sz->run.chunk_elems ? sz->run.loop_elems : sz->run.chunk_elems);
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
