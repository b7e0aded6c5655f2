/* schedcheck.h: an independent untimed replay of a schedule for the generator tests: FIFO matching
 * per connection, dependencies, deadlock, and the AllReduce data result. */
#ifndef CS_SCHEDCHECK_H
#define CS_SCHEDCHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* A chunk's symbolic value: which chunk index it is a sum of (-1 mixed or empty) and how many
 * times each rank's copy of that chunk is in the sum. */
struct sc_val {
    int chunk;
    unsigned char *cnt; /* [ngpus] */
};

struct sc_msg {
    int cnt, dstoff;
    enum cs_buf dstbuf;
    unsigned char *vals; /* cnt values, each (1 + ngpus) bytes: chunk as a byte pair + counts */
};

struct sc_fifo {
    struct sc_msg *m;
    int head, n, cap;
};

struct sc_state {
    const struct cs_sched *s;
    int g;
    int **done;            /* [gpu][tb]: steps completed */
    struct sc_val **slots; /* [gpu][buf 0..2][index] flattened: per gpu i, o, s */
    int *off[3];           /* per gpu start of buffer b in slots */
    struct sc_fifo *fifo;  /* [src][dst][chan] */
    char msg[512];
};

static inline int sc_fail(struct sc_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline int sc_fail(struct sc_state *st, const char *fmt, ...)
{
    va_list ap;

    if (st->msg[0] == '\0') {
        va_start(ap, fmt);
        vsnprintf(st->msg, sizeof(st->msg), fmt, ap);
        va_end(ap);
    }
    return -1;
}

static inline struct sc_val *sc_slot(struct sc_state *st, int gpu, enum cs_buf buf, int i)
{
    const struct cs_gpu *gp = &st->s->gpus[gpu];
    int n = buf == CS_BUF_INPUT ? gp->i_chunks : buf == CS_BUF_OUTPUT ? gp->o_chunks : gp->s_chunks;

    if (i < 0 || i >= n)
        return NULL;
    return &st->slots[gpu][st->off[buf - 1][gpu] + i];
}

static inline void sc_add(struct sc_val *dst, const struct sc_val *a, int g)
{
    if (dst->chunk != a->chunk)
        dst->chunk = -1;
    for (int r = 0; r < g; r++)
        dst->cnt[r] += a->cnt[r];
}

/* Check that sched runs to completion (unbounded FIFOs) and leaves every input chunk c of every
 * rank holding chunk c of every rank exactly once (in-place AllReduce). 0 or -1 with *why set. */
static inline int sc_check_allreduce(const struct cs_sched *s, char *why, size_t whylen)
{
    struct sc_state st;
    int g = s->ngpus, nch = s->nchannels, rc = 0, progress = 1;
    size_t nf = (size_t)g * (size_t)g * (size_t)nch;

    memset(&st, 0, sizeof(st));
    st.s = s;
    st.g = g;
    st.done = calloc((size_t)g, sizeof(int *));
    st.slots = calloc((size_t)g, sizeof(struct sc_val *));
    for (int b = 0; b < 3; b++)
        st.off[b] = calloc((size_t)g, sizeof(int));
    st.fifo = calloc(nf, sizeof(struct sc_fifo));
    for (int r = 0; r < g; r++) {
        const struct cs_gpu *gp = &s->gpus[r];
        int n = gp->i_chunks + gp->o_chunks + gp->s_chunks;

        st.done[r] = calloc((size_t)gp->ntbs + 1, sizeof(int));
        st.off[0][r] = 0;
        st.off[1][r] = gp->i_chunks;
        st.off[2][r] = gp->i_chunks + gp->o_chunks;
        st.slots[r] = calloc((size_t)n + 1, sizeof(struct sc_val));
        for (int i = 0; i < n; i++) {
            st.slots[r][i].cnt = calloc((size_t)g, 1);
            st.slots[r][i].chunk = -1;
            if (i < gp->i_chunks) {
                st.slots[r][i].chunk = i;
                st.slots[r][i].cnt[r] = 1;
            }
        }
    }
    while (progress && rc == 0) {
        progress = 0;
        for (int r = 0; r < g && rc == 0; r++) {
            const struct cs_gpu *gp = &s->gpus[r];

            for (int t = 0; t < gp->ntbs && rc == 0; t++) {
                const struct cs_tb *tb = &gp->tbs[t];

                while (st.done[r][t] < tb->nsteps && rc == 0) {
                    const struct cs_step *sp = &tb->steps[st.done[r][t]];
                    struct sc_fifo *in = NULL, *out = NULL;
                    int ok = 1;

                    if (sp->depid >= 0 &&
                        (sp->depid >= gp->ntbs || st.done[r][sp->depid] <= sp->deps))
                        ok = 0;
                    if (sp->type == CS_STEP_NOP) {
                        if (!ok)
                            break;
                        st.done[r][t]++;
                        progress = 1;
                        continue;
                    }
                    if (cs_step_recvs(sp->type)) {
                        if (tb->recv < 0 || tb->recv >= g) {
                            rc = sc_fail(&st, "gpu %d tb %d step %d receives without a peer", r, t,
                                         sp->s);
                            break;
                        }
                        in = &st.fifo[((size_t)tb->recv * g + r) * nch + tb->chan];
                        if (in->head == in->n)
                            ok = 0;
                    }
                    if (cs_step_sends(sp->type)) {
                        if (tb->send < 0 || tb->send >= g) {
                            rc = sc_fail(&st, "gpu %d tb %d step %d sends without a peer", r, t,
                                         sp->s);
                            break;
                        }
                        out = &st.fifo[((size_t)r * g + tb->send) * nch + tb->chan];
                    }
                    if (!ok)
                        break;
                    {
                        int cnt = sp->cnt;
                        struct sc_msg *m = in ? &in->m[in->head] : NULL;
                        struct sc_val tmp;
                        unsigned char *outvals = NULL;

                        tmp.cnt = calloc((size_t)g, 1);
                        if (m &&
                            (m->cnt != cnt || m->dstoff != sp->dstoff || m->dstbuf != sp->dstbuf) &&
                            sp->type != CS_STEP_RRS) {
                            rc =
                                sc_fail(&st,
                                        "gpu %d tb %d step %d: the matching send (cnt %d) does not "
                                        "agree on count or destination",
                                        r, t, sp->s, m->cnt);
                            free(tmp.cnt);
                            break;
                        }
                        if (out)
                            outvals = malloc((size_t)cnt * (size_t)(g + 2));
                        for (int c = 0; c < cnt && rc == 0; c++) {
                            struct sc_val *src = NULL, *dst = NULL;

                            if (cs_step_reads_src(sp->type) || sp->type == CS_STEP_S) {
                                src = sc_slot(&st, r, sp->srcbuf, sp->srcoff + c);
                                if (src == NULL) {
                                    rc = sc_fail(
                                        &st,
                                        "gpu %d tb %d step %d: source chunk %d out of the buffer",
                                        r, t, sp->s, sp->srcoff + c);
                                    break;
                                }
                            }
                            if (cs_step_writes_dst(sp->type)) {
                                dst = sc_slot(&st, r, sp->dstbuf, sp->dstoff + c);
                                if (dst == NULL) {
                                    rc = sc_fail(&st,
                                                 "gpu %d tb %d step %d: destination chunk %d out "
                                                 "of the buffer",
                                                 r, t, sp->s, sp->dstoff + c);
                                    break;
                                }
                            }
                            /* tmp = the value this step produces for chunk c */
                            memset(tmp.cnt, 0, (size_t)g);
                            tmp.chunk = -2;
                            if (m) {
                                unsigned char *v = m->vals + (size_t)c * (size_t)(g + 2);

                                tmp.chunk = (v[0] | (v[1] << 8)) - 1;
                                memcpy(tmp.cnt, v + 2, (size_t)g);
                            }
                            if (sp->type == CS_STEP_S || sp->type == CS_STEP_CPY) {
                                tmp.chunk = src->chunk;
                                memcpy(tmp.cnt, src->cnt, (size_t)g);
                            } else if (sp->type == CS_STEP_RE) {
                                tmp.chunk = dst->chunk;
                                memcpy(tmp.cnt, dst->cnt, (size_t)g);
                                sc_add(&tmp, src, g);
                            } else if (cs_step_reduces(sp->type)) {
                                sc_add(&tmp, src, g);
                            }
                            if (dst) {
                                dst->chunk = tmp.chunk;
                                memcpy(dst->cnt, tmp.cnt, (size_t)g);
                            }
                            if (outvals) {
                                unsigned char *v = outvals + (size_t)c * (size_t)(g + 2);

                                v[0] = (unsigned char)((tmp.chunk + 1) & 0xff);
                                v[1] = (unsigned char)(((tmp.chunk + 1) >> 8) & 0xff);
                                memcpy(v + 2, tmp.cnt, (size_t)g);
                            }
                        }
                        free(tmp.cnt);
                        if (in) {
                            free(m->vals);
                            in->head++;
                        }
                        if (out && rc == 0) {
                            if (out->n == out->cap) {
                                out->cap = out->cap ? 2 * out->cap : 8;
                                out->m = realloc(out->m, (size_t)out->cap * sizeof(*out->m));
                            }
                            out->m[out->n].cnt = cnt;
                            out->m[out->n].dstoff = sp->dstoff;
                            out->m[out->n].dstbuf = sp->dstbuf;
                            out->m[out->n].vals = outvals;
                            out->n++;
                        } else {
                            free(outvals);
                        }
                    }
                    st.done[r][t]++;
                    progress = 1;
                }
            }
        }
    }
    for (int r = 0; r < g && rc == 0; r++)
        for (int t = 0; t < s->gpus[r].ntbs && rc == 0; t++)
            if (st.done[r][t] < s->gpus[r].tbs[t].nsteps)
                rc = sc_fail(&st, "deadlock: gpu %d tb %d stops at step %d of %d", r, t,
                             st.done[r][t], s->gpus[r].tbs[t].nsteps);
    for (size_t f = 0; f < nf && rc == 0; f++)
        if (st.fifo[f].head != st.fifo[f].n)
            rc = sc_fail(&st, "connection %d -> %d chan %d: %d sends never received",
                         (int)(f / (size_t)nch) / g, (int)(f / (size_t)nch) % g,
                         (int)(f % (size_t)nch), st.fifo[f].n - st.fifo[f].head);
    for (int r = 0; r < g && rc == 0; r++)
        for (int i = 0; i < s->nchunksperloop && rc == 0; i++) {
            struct sc_val *v = sc_slot(&st, r, CS_BUF_INPUT, i);
            int bad = v == NULL || v->chunk != i;

            for (int q = 0; q < g && !bad; q++)
                bad = v->cnt[q] != 1;
            if (bad)
                rc = sc_fail(&st,
                             "gpu %d input chunk %d does not hold the sum of chunk %d of every "
                             "rank once",
                             r, i, i);
        }
    for (int r = 0; r < g; r++) {
        const struct cs_gpu *gp = &s->gpus[r];
        int n = gp->i_chunks + gp->o_chunks + gp->s_chunks;

        for (int i = 0; i < n; i++)
            free(st.slots[r][i].cnt);
        free(st.slots[r]);
        free(st.done[r]);
    }
    for (size_t f = 0; f < nf; f++) {
        for (int k = st.fifo[f].head; k < st.fifo[f].n; k++)
            free(st.fifo[f].m[k].vals);
        free(st.fifo[f].m);
    }
    free(st.fifo);
    free(st.slots);
    free(st.done);
    for (int b = 0; b < 3; b++)
        free(st.off[b]);
    if (rc && why)
        snprintf(why, whylen, "%s", st.msg);
    return rc;
}

#endif
