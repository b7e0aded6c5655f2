/* lower.c: the lowering pipeline of msccl-tools (shared reference msccl.md section 4), in C. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "util.h"

enum inst {
    I_SEND = 1,
    I_RECV,
    I_COPY,
    I_REDUCE,
    I_RRC,
    I_RCS,
    I_RRS,
    I_RRCS,
};

/* What each instruction does: its XML step type (msccl-tools' start op is none: see dag_read),
 * whether it sends to or receives from a peer, and whether it reads its source or writes its
 * destination locally. */
static const struct inst_class {
    enum cs_step_type type;
    int send, recv, local_src, local_dst;
} insts[] = {
    [I_SEND] = {CS_STEP_S, 1, 0, 1, 0},   [I_RECV] = {CS_STEP_R, 0, 1, 0, 1},
    [I_COPY] = {CS_STEP_CPY, 0, 0, 1, 1}, [I_REDUCE] = {CS_STEP_RE, 0, 0, 1, 1},
    [I_RRC] = {CS_STEP_RRC, 0, 1, 0, 1},  [I_RCS] = {CS_STEP_RCS, 1, 1, 0, 1},
    [I_RRS] = {CS_STEP_RRS, 1, 1, 0, 1},  [I_RRCS] = {CS_STEP_RRCS, 1, 1, 0, 1},
};

/* A vector of ints that keeps up to IVEC_INLINE of them in place (most hold one or two: an op's
 * predecessors, a slot's readers) and the rest on the heap, which saves a block per vector at
 * millions of ops. Zeroed is empty. IV(v) is its first entry. Aligned as an int, so that the
 * structs holding one have no padding (a slot is 20 bytes, not 24). */
#define IVEC_INLINE 2
struct ivec {
    int n, cap; /* cap <= IVEC_INLINE: the entries are in `in` */
    union {
        int *heap;
        int in[IVEC_INLINE];
    } u;
} __attribute__((packed, aligned(4)));
#define IV(x) ((x)->cap > IVEC_INLINE ? (x)->u.heap : (x)->u.in)

/* An op of the program: 60 bytes, millions of them for a large hierarchical grid (1.3 million for
 * the 1024-GPU hierarchical AllReduce). Its source and destination share their size; what only
 * the passes need lies in arrays beside the ops, made once the buffers' slots are freed
 * (cs_prog.next, .keys, .place). */
struct op {
    unsigned char inst; /* enum inst */
    unsigned char removed;
    unsigned char srcbuf, dstbuf; /* enum cs_buf */
    int rank;
    int size; /* chunks */
    int srcrank, srcindex, dstrank, dstindex;
    int tb, ch; /* as given, -1 for none */
    /* its predecessors in the DAG; once infer_deps has run, its dependencies (a subset, in the
     * same storage) */
    struct ivec prev;
    int recv_match, send_match; /* op index or -1 */
};

/* An op's keys in the instruction order (metadata): chunk_step and priority. */
struct op_keys {
    int cs, prio;
};

/* An op's place (assign_tbs): the index of its tb in the rank's tb list, its position there. */
struct op_place {
    int tbi, step;
};

struct slot {
    int last_writer; /* op index, NEVER_WRITTEN or INITIAL (an input chunk's own value) */
    struct ivec readers;
};

#define NEVER_WRITTEN (-1)
#define INITIAL (-2)

struct slots {
    struct slot *s;
    int n, cap;
};

/* A threadblock of one rank before replication, in order of first use. */
struct ltb {
    int id; /* the program's tb number */
    int send, recv, chan;
    struct ivec ops;
};

struct prog_rank {
    struct slots buf[3]; /* by enum cs_buf - 1 */
    struct ltb *tbs;
    int ntbs, cap_tbs;
    int *tbidx, ntbidx; /* the program's tb id -> 1 + its index in tbs (0: none yet) */
    int nchan;
    int scratch_size; /* scratch chunks of one instance */
};

struct cs_prog {
    struct cs_prog_opts o;
    char *name;
    struct op *ops;
    int nops, cap_ops;
    struct ivec *next;    /* nops: each op's successors, from make_next to the instruction order */
    struct op_keys *keys; /* nops, from metadata to the instruction order */
    struct op_place *place; /* nops, from assign_tbs to infer_deps */
    struct prog_rank *ranks;
    int failed;
    struct cs_error err;
    int started; /* the input chunks hold their initial values (add_starts) */
    int lowered;
};

/* Past IVEC_INLINE entries the vector moves to the heap and doubles. */
static int ivec_push(struct ivec *v, int x)
{
    if (v->n == (v->cap > IVEC_INLINE ? v->cap : IVEC_INLINE)) {
        int ncap = v->cap > IVEC_INLINE ? v->cap * 2 : 2 * IVEC_INLINE;
        int *p = v->cap > IVEC_INLINE ? realloc(v->u.heap, (size_t)ncap * sizeof(*p))
                                      : malloc((size_t)ncap * sizeof(*p));

        if (p == NULL)
            return CS_ERR_NOMEM;
        if (v->cap <= IVEC_INLINE)
            memcpy(p, v->u.in, sizeof(v->u.in));
        v->u.heap = p;
        v->cap = ncap;
    }
    IV(v)[v->n++] = x;
    return 0;
}

static int ivec_has(const struct ivec *v, int x)
{
    for (int i = 0; i < v->n; i++)
        if (IV(v)[i] == x)
            return 1;
    return 0;
}

static int ivec_add(struct ivec *v, int x)
{
    return ivec_has(v, x) ? 0 : ivec_push(v, x);
}

static void ivec_del(struct ivec *v, int x)
{
    int *e = IV(v);

    for (int i = 0; i < v->n; i++)
        if (e[i] == x) {
            memmove(e + i, e + i + 1, (size_t)(v->n - i - 1) * sizeof(int));
            v->n--;
            return;
        }
}

static void ivec_free(struct ivec *v)
{
    if (v->cap > IVEC_INLINE)
        free(v->u.heap);
    *v = (struct ivec){0};
}

/* Record the first failure (the message, then the chunk reference r if any); returns code. */
static int fail(struct cs_prog *p, int code, const struct cs_ref *r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct cs_prog *p, int code, const struct cs_ref *r, const char *fmt, ...)
{
    char msg[sizeof(p->err.msg)];
    va_list ap;

    if (p->failed)
        return code;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (r)
        cs_error_set(&p->err, "", 0, "%s (rank %d, buffer %c, chunk %d, size %d)", msg, r->rank,
                     cs_buf_char(r->buf), r->index, r->size);
    else
        cs_error_set(&p->err, "", 0, "%s", msg);
    p->failed = code;
    return code;
}

static int nomem(struct cs_prog *p)
{
    return fail(p, CS_ERR_NOMEM, NULL, "out of memory");
}

struct cs_prog *cs_prog_new(const struct cs_prog_opts *opts)
{
    struct cs_prog *p;

    if (opts->ngpus < 1 || opts->instances < 1 || opts->in_chunks < 0 || opts->out_chunks < 0 ||
        opts->in_chunks + opts->out_chunks == 0)
        return NULL;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->o = *opts;
    p->name = strdup(opts->name ? opts->name : "custom");
    p->ranks = calloc((size_t)opts->ngpus, sizeof(*p->ranks));
    if (p->name == NULL || p->ranks == NULL) {
        cs_prog_free(p);
        return NULL;
    }
    p->o.name = p->name;
    cs_error_init(&p->err);
    for (int r = 0; r < opts->ngpus; r++)
        p->ranks[r].nchan = 1;
    return p;
}

void cs_prog_free(struct cs_prog *p)
{
    if (p == NULL)
        return;
    for (int i = 0; p->ops != NULL && i < p->nops; i++) /* NULL once lowered (compact_ops) */
        ivec_free(&p->ops[i].prev);
    for (int i = 0; p->next != NULL && i < p->nops; i++)
        ivec_free(&p->next[i]);
    cs_free_each(4, p->ops, p->next, p->keys, p->place);
    if (p->ranks) {
        for (int r = 0; r < p->o.ngpus; r++) {
            struct prog_rank *pr = &p->ranks[r];

            for (int b = 0; b < 3; b++) {
                for (int i = 0; i < pr->buf[b].n; i++)
                    ivec_free(&pr->buf[b].s[i].readers);
                free(pr->buf[b].s);
            }
            for (int t = 0; pr->tbs != NULL && t < pr->ntbs; t++)
                ivec_free(&pr->tbs[t].ops);
            free(pr->tbs);
            free(pr->tbidx);
        }
    }
    free(p->ranks);
    free(p->name);
    free(p);
}

/* The slot (rank, buf, index), growing the scratch buffer on demand; NULL when out of range. */
static struct slot *get_slot(struct cs_prog *p, int rank, enum cs_buf buf, int index)
{
    struct slots *ss = &p->ranks[rank].buf[buf - 1];
    int limit = buf == CS_BUF_INPUT    ? p->o.in_chunks
                : buf == CS_BUF_OUTPUT ? p->o.out_chunks
                                       : 1 << 15;

    if (index < 0 || index >= limit)
        return NULL;
    while (index >= ss->n) {
        struct slot *sl = cs_array_slot((void **)&ss->s, ss->n, &ss->cap, sizeof(*sl));

        if (sl == NULL)
            return NULL;
        sl->last_writer = NEVER_WRITTEN;
        ss->n++;
    }
    return &ss->s[index];
}

static int check_ref(struct cs_prog *p, const struct cs_ref *r)
{
    if (r->rank < 0 || r->rank >= p->o.ngpus)
        return fail(p, CS_ERR_USAGE, r, "reference to a rank that does not exist");
    if (r->buf < CS_BUF_INPUT || r->buf > CS_BUF_SCRATCH || r->size < 1)
        return fail(p, CS_ERR_USAGE, r, "invalid chunk reference");
    for (int i = r->index; i < r->index + r->size; i++)
        if (get_slot(p, r->rank, r->buf, i) == NULL)
            return fail(p, CS_ERR_USAGE, r, "chunk reference outside its buffer");
    if (r->buf == CS_BUF_SCRATCH && r->index + r->size > p->ranks[r->rank].scratch_size)
        p->ranks[r->rank].scratch_size = r->index + r->size;
    return 0;
}

static int new_op(struct cs_prog *p, enum inst inst, int rank, struct cs_ref src, struct cs_ref dst,
                  int tb, int ch)
{
    struct op *o = cs_array_slot((void **)&p->ops, p->nops, &p->cap_ops, sizeof(*o));

    if (o == NULL)
        return nomem(p);
    /* src.size == dst.size (prologue) */
    *o = (struct op){.inst = inst,
                     .srcbuf = (unsigned char)src.buf,
                     .dstbuf = (unsigned char)dst.buf,
                     .rank = rank,
                     .size = src.size,
                     .srcrank = src.rank,
                     .srcindex = src.index,
                     .dstrank = dst.rank,
                     .dstindex = dst.index,
                     .tb = tb,
                     .ch = ch};
    o->recv_match = o->send_match = -1;
    return p->nops++;
}

static struct cs_ref op_dst(const struct op *o)
{
    return (struct cs_ref){o->dstrank, (enum cs_buf)o->dstbuf, o->dstindex, o->size};
}

/* While the program is built only the predecessors are kept (make_next makes the successors). */
static int link_ops(struct cs_prog *p, int from, int to)
{
    if ((p->next != NULL && ivec_add(&p->next[from], to)) || ivec_add(&p->ops[to].prev, from))
        return nomem(p);
    return 0;
}

/* A read depends on each slot's last writer (msccl-tools InstructionDAG._read). msccl-tools
 * writes each input chunk's initial value with a start op; here the slot says INITIAL instead,
 * which orders nothing: a start op has no predecessor and is always already done. */
static int dag_read(struct cs_prog *p, const struct cs_ref *r, int op)
{
    for (int i = r->index; i < r->index + r->size; i++) {
        struct slot *s = get_slot(p, r->rank, r->buf, i);

        if (s->last_writer == NEVER_WRITTEN)
            return fail(p, CS_ERR_USAGE, r, "a chunk is read before anything wrote it");
        if ((s->last_writer >= 0 && link_ops(p, s->last_writer, op)) || ivec_push(&s->readers, op))
            return nomem(p);
    }
    return 0;
}

/* A write depends on the readers since the last write, or else on the last writer. */
static int dag_write(struct cs_prog *p, const struct cs_ref *r, int op, int reads)
{
    for (int i = r->index; i < r->index + r->size; i++) {
        struct slot *s = get_slot(p, r->rank, r->buf, i);

        if (reads && s->last_writer == NEVER_WRITTEN)
            return fail(p, CS_ERR_USAGE, r, "a reduction into a chunk nothing wrote before");
        for (int k = 0; k < s->readers.n; k++)
            if (link_ops(p, IV(&s->readers)[k], op))
                return p->failed;
        if (s->readers.n == 0 && s->last_writer >= 0 && link_ops(p, s->last_writer, op))
            return p->failed;
        s->last_writer = op;
        s->readers.n = 0;
    }
    return 0;
}

/* In-place AllGather: a rank's input is its slice of the output (msccl-tools get_buffer_index). */
static void alias(const struct cs_prog *p, struct cs_ref *r)
{
    if (p->o.coll == CS_COLL_ALLGATHER && p->o.inplace && r->buf == CS_BUF_INPUT) {
        r->buf = CS_BUF_OUTPUT;
        r->index += r->rank * p->o.in_chunks;
    }
}

/* Every input chunk of every rank holds its initial value. */
static int add_starts(struct cs_prog *p)
{
    if (p->started)
        return 0;
    p->started = 1;
    for (int r = 0; r < p->o.ngpus; r++)
        for (int i = 0; i < p->o.in_chunks; i++) {
            struct cs_ref ref = {r, CS_BUF_INPUT, i, 1};
            struct slot *sl;

            alias(p, &ref);
            sl = get_slot(p, r, ref.buf, ref.index);
            if (sl == NULL)
                return fail(p, CS_ERR_USAGE, &ref,
                            "the output buffer cannot hold the aliased input");
            sl->last_writer = INITIAL;
        }
    return 0;
}

static int prologue(struct cs_prog *p, struct cs_ref *a, struct cs_ref *b)
{
    alias(p, a);
    alias(p, b);
    if (p->failed)
        return p->failed;
    if (p->lowered)
        return fail(p, CS_ERR_USAGE, NULL, "the program was already lowered");
    if (add_starts(p) || check_ref(p, a) || check_ref(p, b))
        return p->failed;
    if (a->size != b->size)
        return fail(p, CS_ERR_USAGE, b, "source and destination sizes differ");
    return 0;
}

/* Copy (or with `reduce`, add) src into dst: one local op on a rank, else a send on src's rank
 * matched with a receive on dst's. */
static int move(struct cs_prog *p, struct cs_ref src, struct cs_ref dst, int reduce, int sendtb,
                int recvtb, int ch)
{
    int s, r;

    if (prologue(p, &src, &dst))
        return p->failed;
    if (src.rank == dst.rank) {
        if (!reduce && src.buf == dst.buf && src.index == dst.index)
            return 0;
        s = new_op(p, reduce ? I_REDUCE : I_COPY, src.rank, src, dst, sendtb, ch);
        return s < 0 || dag_read(p, &src, s) || dag_write(p, &dst, s, reduce) ? p->failed : 0;
    }
    s = new_op(p, I_SEND, src.rank, src, dst, sendtb, ch);
    if (s < 0 || dag_read(p, &src, s))
        return p->failed;
    r = new_op(p, reduce ? I_RRC : I_RECV, dst.rank, src, dst, recvtb, ch);
    if (r < 0 || dag_write(p, &dst, r, reduce))
        return p->failed;
    p->ops[s].recv_match = r;
    p->ops[r].send_match = s;
    return 0;
}

int cs_prog_copy(struct cs_prog *p, struct cs_ref src, struct cs_ref dst, int sendtb, int recvtb,
                 int ch)
{
    return move(p, src, dst, 0, sendtb, recvtb, ch);
}

int cs_prog_reduce(struct cs_prog *p, struct cs_ref dst, struct cs_ref src, int sendtb, int recvtb,
                   int ch)
{
    return move(p, src, dst, 1, sendtb, recvtb, ch);
}

/* ---- fusion (InstructionDAG.optimize) */

/* a and b may fuse: same tb and channel, same size, same destination. */
static int fuse_ok(const struct op *a, const struct op *b)
{
    return a->tb == b->tb && a->ch == b->ch && a->size == b->size && a->dstbuf == b->dstbuf &&
           a->dstindex == b->dstindex;
}

/* Splice op x out of the DAG, joining its predecessors to its successors. */
static int remove_op(struct cs_prog *p, int x)
{
    struct op *o = &p->ops[x];
    struct ivec *next = &p->next[x];

    for (int i = 0; i < o->prev.n; i++) {
        ivec_del(&p->next[IV(&o->prev)[i]], x);
        for (int k = 0; k < next->n; k++)
            if (link_ops(p, IV(&o->prev)[i], IV(next)[k]))
                return p->failed;
    }
    for (int k = 0; k < next->n; k++)
        ivec_del(&p->ops[IV(next)[k]].prev, x);
    o->removed = 1;
    return 0;
}

/* Fold send x into the receive op a that forwards it. */
static int fold_send(struct cs_prog *p, int a, int x, enum inst inst)
{
    struct op *op = &p->ops[a];
    struct op *sx = &p->ops[x];

    op->inst = inst;
    op->dstbuf = sx->dstbuf; /* the size is the same (fuse_ok) */
    op->dstrank = sx->dstrank;
    op->dstindex = sx->dstindex;
    op->recv_match = sx->recv_match;
    p->ops[sx->recv_match].send_match = a;
    return remove_op(p, x);
}

static int fuse(struct cs_prog *p)
{
    /* rrc + send -> rrs (the slot is overwritten by a receive next) or rrcs */
    for (int a = 0; a < p->nops; a++) {
        struct op *op = &p->ops[a];
        struct op *nx;
        int x;

        if (op->removed || op->inst != I_RRC || p->next[a].n != 1)
            continue;
        x = IV(&p->next[a])[0];
        nx = &p->ops[x];
        if (nx->inst != I_SEND || !fuse_ok(op, nx))
            continue;
        if (p->next[x].n == 1 && p->ops[IV(&p->next[x])[0]].inst == I_RECV) {
            if (fold_send(p, a, x, I_RRS))
                return p->failed;
        } else if (fold_send(p, a, x, I_RRCS))
            return p->failed;
    }
    /* recv + send -> rcs */
    for (int a = 0; a < p->nops; a++) {
        struct op *op = &p->ops[a];

        if (op->removed || op->inst != I_RECV)
            continue;
        for (int k = 0; k < p->next[a].n; k++) {
            struct op *nx = &p->ops[IV(&p->next[a])[k]];

            if (nx->inst == I_SEND && fuse_ok(op, nx)) {
                if (fold_send(p, a, IV(&p->next[a])[k], I_RCS))
                    return p->failed;
                break;
            }
        }
    }
    return 0;
}

/* Drop the ops fusion removed, keeping the others in order (the order breaks the ties of the
 * instruction order), and give back their room: a fused ring holds half the ops it was written
 * with. */
static int compact(struct cs_prog *p)
{
    int n = 0, *map = malloc(((size_t)p->nops + 1) * sizeof(int));

    if (map == NULL)
        return nomem(p);
    for (int i = 0; i < p->nops; i++) {
        if (p->ops[i].removed) {
            ivec_free(&p->ops[i].prev);
            ivec_free(&p->next[i]);
            map[i] = -1;
            continue;
        }
        map[i] = n;
        if (n != i) {
            p->ops[n] = p->ops[i];
            p->next[n] = p->next[i];
        }
        n++;
    }
    for (int i = 0; i < n; i++) {
        struct op *o = &p->ops[i];
        struct ivec *lists[] = {&o->prev, &p->next[i]};

        /* fusion spliced every removed op out of the DAG and the matching */
        for (int l = 0; l < 2; l++)
            for (int k = 0; k < lists[l]->n; k++) {
                IV(lists[l])[k] = map[IV(lists[l])[k]];
                assert(IV(lists[l])[k] >= 0);
            }
        if (o->recv_match >= 0) {
            o->recv_match = map[o->recv_match];
            assert(o->recv_match >= 0);
        }
        if (o->send_match >= 0) {
            o->send_match = map[o->send_match];
            assert(o->send_match >= 0);
        }
    }
    free(map);
    if (n < p->nops) {
        struct op *shrunk = realloc(p->ops, (size_t)(n ? n : 1) * sizeof(*shrunk));
        struct ivec *next = realloc(p->next, (size_t)(n ? n : 1) * sizeof(*next));

        p->nops = n;
        if (shrunk != NULL) {
            p->ops = shrunk;
            p->cap_ops = n ? n : 1;
        }
        if (next != NULL)
            p->next = next;
    }
    return 0;
}

/* ---- chunk_step and priority: longest paths over next and send -> receive edges */

static int succ_count(const struct cs_prog *p, int x)
{
    const struct op *o = &p->ops[x];

    return p->next[x].n + (insts[o->inst].send && o->recv_match >= 0);
}

static int succ(const struct cs_prog *p, int x, int k)
{
    return k < p->next[x].n ? IV(&p->next[x])[k] : p->ops[x].recv_match;
}

static int metadata(struct cs_prog *p)
{
    int n = p->nops, head = 0, tail = 0, alive = 0;
    int *indeg = calloc((size_t)n + 1, sizeof(int));
    int *order = malloc(((size_t)n + 1) * sizeof(int));

    p->keys = malloc(((size_t)n + 1) * sizeof(*p->keys));
    if (indeg == NULL || order == NULL || p->keys == NULL) {
        free(indeg);
        free(order);
        return nomem(p);
    }
    for (int i = 0; i < n; i++) {
        p->keys[i] = (struct op_keys){-1, -1};
        if (p->ops[i].removed)
            continue;
        alive++;
        for (int k = 0; k < succ_count(p, i); k++)
            indeg[succ(p, i, k)]++;
    }
    for (int i = 0; i < n; i++)
        if (!p->ops[i].removed && indeg[i] == 0)
            order[tail++] = i;
    while (head < tail) {
        int x = order[head++];

        for (int k = 0; k < succ_count(p, x); k++)
            if (--indeg[succ(p, x, k)] == 0)
                order[tail++] = succ(p, x, k);
    }
    free(indeg);
    if (tail != alive) {
        free(order);
        return fail(p, CS_ERR_INVALID, NULL, "the program's instruction graph has a cycle");
    }
    for (int i = 0; i < tail; i++) {
        int x = order[i];
        struct op_keys *o = &p->keys[x];

        if (o->cs < 0)
            o->cs = 0;
        for (int k = 0; k < succ_count(p, x); k++) {
            struct op_keys *s = &p->keys[succ(p, x, k)];

            if (s->cs < o->cs + 1)
                s->cs = o->cs + 1;
        }
    }
    for (int i = tail - 1; i >= 0; i--) {
        int x = order[i];
        struct op_keys *o = &p->keys[x];

        o->prio = 0;
        for (int k = 0; k < succ_count(p, x); k++) {
            int sp = p->keys[succ(p, x, k)].prio + 1;

            if (sp > o->prio)
                o->prio = sp;
        }
    }
    free(order);
    return 0;
}

/* ---- instruction order (topo_sort_instrs): a heap keyed by (chunk_step, -priority, dst index,
 * src index); the rank and creation order break the ties msccl-tools leaves to set order. */

/* A heap entry: an op's keys, copied when it is pushed (they are fixed by then), so that sifting
 * reads the heap alone and not the ops it names. */
struct hent {
    int cs, prio, dst, src, rank, op;
};

static int hent_less(const struct hent *x, const struct hent *y)
{
    if (x->cs != y->cs)
        return x->cs < y->cs;
    if (x->prio != y->prio)
        return x->prio > y->prio;
    if (x->dst != y->dst)
        return x->dst < y->dst;
    if (x->src != y->src)
        return x->src < y->src;
    if (x->rank != y->rank)
        return x->rank < y->rank;
    return x->op < y->op;
}

struct heap {
    struct hent *e;
    int n, cap;
};

static int heap_push(const struct cs_prog *p, struct heap *h, int x)
{
    const struct op *o = &p->ops[x];
    struct hent v = {p->keys[x].cs, p->keys[x].prio, o->dstindex, o->srcindex, o->rank, x};
    int i;

    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 64;
        struct hent *e = realloc(h->e, (size_t)cap * sizeof(*e));

        if (e == NULL)
            return CS_ERR_NOMEM;
        h->e = e;
        h->cap = cap;
    }
    i = h->n++;
    while (i > 0 && hent_less(&v, &h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = v;
    return 0;
}

static int heap_pop(struct heap *h)
{
    int top = h->e[0].op, i = 0;
    struct hent x = h->e[--h->n];

    for (;;) {
        int c = 2 * i + 1;

        if (c >= h->n)
            break;
        if (c + 1 < h->n && hent_less(&h->e[c + 1], &h->e[c]))
            c++;
        if (!hent_less(&h->e[c], &x))
            break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n > 0)
        h->e[i] = x;
    return top;
}

/* Whether op x's predecessors are all in the order already (vis: a byte per op, apart from the
 * ops so that these checks stay in cache). */
static int all_prev_visited(const struct cs_prog *p, const unsigned char *vis, int x)
{
    const struct op *o = &p->ops[x];

    for (int k = 0; k < o->prev.n; k++)
        if (!vis[IV(&o->prev)[k]])
            return 0;
    return 1;
}

static int topo_sort(struct cs_prog *p, int **out, int *nout)
{
    struct heap h = {0};
    int *ord = malloc((size_t)(p->nops + 1) * sizeof(int));
    unsigned char *vis = calloc((size_t)p->nops + 1, 1);
    int n = 0, alive = 0;

    if (ord == NULL || vis == NULL)
        goto nomem;
    for (int i = 0; i < p->nops; i++) {
        struct op *o = &p->ops[i];

        if (o->removed)
            continue;
        alive++;
        /* seeds: sends and copies that only read initial values */
        if ((o->inst == I_SEND || o->inst == I_COPY) && o->prev.n == 0)
            if (heap_push(p, &h, i))
                goto nomem;
    }
    while (h.n > 0) {
        int x = heap_pop(&h);
        struct op *o = &p->ops[x];

        if (vis[x])
            continue;
        vis[x] = 1;
        ord[n++] = x;
        if (insts[o->inst].send && o->recv_match >= 0 && all_prev_visited(p, vis, o->recv_match))
            if (heap_push(p, &h, o->recv_match))
                goto nomem;
        for (int k = 0; k < p->next[x].n; k++)
            if (!vis[IV(&p->next[x])[k]] && all_prev_visited(p, vis, IV(&p->next[x])[k]))
                if (heap_push(p, &h, IV(&p->next[x])[k]))
                    goto nomem;
    }
    free(h.e);
    free(vis);
    if (n != alive) {
        free(ord);
        /* msccl-tools silently drops these (a local reduce of start values is never scheduled) */
        return fail(p, CS_ERR_USAGE, NULL,
                    "some operations can never be scheduled (a local reduce or receive whose "
                    "inputs are all initial values)");
    }
    *out = ord;
    *nout = n;
    return 0;
nomem:
    free(h.e);
    free(ord);
    free(vis);
    return nomem(p);
}

/* ---- threadblock assignment */

static int op_send_peer(const struct op *o)
{
    return insts[o->inst].send ? o->dstrank : -1;
}

static int op_recv_peer(const struct op *o)
{
    return insts[o->inst].recv ? o->srcrank : -1;
}

static struct ltb *rank_tb_add(struct prog_rank *pr, int id, int chan)
{
    struct ltb *t = cs_array_slot((void **)&pr->tbs, pr->ntbs, &pr->cap_tbs, sizeof(*t));

    if (t == NULL)
        return NULL;
    pr->ntbs++;
    *t = (struct ltb){.id = id, .send = -1, .recv = -1, .chan = chan};
    return t;
}

static int tb_append(struct cs_prog *p, struct prog_rank *pr, int ti, int x)
{
    struct ltb *t = &pr->tbs[ti];
    struct op *o = &p->ops[x];

    if (ivec_push(&t->ops, x))
        return nomem(p);
    t->chan = o->ch >= 0 ? o->ch : 0;
    if (op_send_peer(o) >= 0)
        t->send = op_send_peer(o);
    if (op_recv_peer(o) >= 0)
        t->recv = op_recv_peer(o);
    p->place[x] = (struct op_place){ti, t->ops.n - 1};
    if (o->ch + 1 > pr->nchan)
        pr->nchan = o->ch + 1;
    return 0;
}

/* The index in pr->tbs of the program's tb id (0 .. MAX_TB_ID), added (with channel ch) on first
 * use; -1 out of memory. Ids index a table (the generators number their tbs from 0). */
#define MAX_TB_ID (1 << 20)
static int rank_tb(struct prog_rank *pr, int id, int ch)
{
    if (id >= pr->ntbidx) {
        int n = id + 1 > 2 * pr->ntbidx ? id + 1 : 2 * pr->ntbidx;
        int *v = realloc(pr->tbidx, (size_t)n * sizeof(*v));

        if (v == NULL)
            return -1;
        memset(v + pr->ntbidx, 0, (size_t)(n - pr->ntbidx) * sizeof(*v));
        pr->tbidx = v;
        pr->ntbidx = n;
    }
    if (pr->tbidx[id] == 0) {
        if (rank_tb_add(pr, id, ch) == NULL)
            return -1;
        pr->tbidx[id] = pr->ntbs;
    }
    return pr->tbidx[id] - 1;
}

/* Each op to the tb the program gave it (msccl-tools manual_assign_tbs): a tb keeps one send peer,
 * one receive peer and one channel. */
static int assign_tbs(struct cs_prog *p, const int *ord, int n)
{
    p->place = malloc(((size_t)p->nops + 1) * sizeof(*p->place));
    if (p->place == NULL)
        return nomem(p);
    for (int i = 0; i < n; i++) {
        struct op *o = &p->ops[ord[i]];
        struct prog_rank *pr = &p->ranks[o->rank];
        int ti, s = op_send_peer(o), r = op_recv_peer(o);
        struct cs_ref dst = op_dst(o);
        struct ltb *t;

        if (o->tb < 0)
            return fail(p, CS_ERR_USAGE, &dst, "an operation has no tb (each move names its tbs)");
        if (o->tb > MAX_TB_ID)
            return fail(p, CS_ERR_USAGE, &dst, "tb %d: tb ids go up to %d", o->tb, MAX_TB_ID);
        if ((ti = rank_tb(pr, o->tb, o->ch)) < 0)
            return nomem(p);
        t = &pr->tbs[ti];
        if (!((t->send == s || s < 0 || t->send < 0) && (t->recv == r || r < 0 || t->recv < 0) &&
              (t->chan == o->ch || t->chan < 0 || o->ch < 0)))
            return fail(p, CS_ERR_USAGE, NULL,
                        "illegal threadblock assignment: tb %d of rank %d (send %d, recv %d, chan "
                        "%d) cannot take an op sending to %d and receiving from %d on channel %d",
                        o->tb, o->rank, t->send, t->recv, t->chan, s, r, o->ch);
        if (tb_append(p, pr, ti, ord[i]))
            return p->failed;
    }
    return 0;
}

/* ---- dependencies: per predecessor tb keep the latest op (infer_dependencies) */

static int infer_deps(struct cs_prog *p, const int *ord, int n)
{
    for (int i = 0; i < n; i++) {
        struct op *o = &p->ops[ord[i]];
        int *e = IV(&o->prev), w = 0;

        /* The dependencies are kept in the predecessors' place: entry w is written only after
         * entry k >= w was read. */
        for (int k = 0; k < o->prev.n; k++) {
            int d = e[k], placed = 0;
            const struct op_place *dop = &p->place[d];

            for (int j = 0; j < w; j++) {
                const struct op_place *x = &p->place[e[j]];

                if (x->tbi == dop->tbi) {
                    if (dop->step > x->step)
                        e[j] = d;
                    placed = 1;
                }
            }
            if (!placed)
                e[w++] = d;
        }
        o->prev.n = w;
    }
    return 0;
}

/* ---- replication and XML lowering */

/* An instanced threadblock of one rank. */
struct itb {
    int ltb, inst;
    int send, recv, chan;
    int id; /* after the sort */
    int order;
};

/* An entry of an instanced tb: an op of instance `inst` or a nop carrying one dependency. */
struct ent {
    int op;  /* op index, or -1 for a nop */
    int dep; /* nop: the instanced op it waits for (op*instances + inst) */
};

static int itb_cmp(const void *a, const void *b)
{
    const struct itb *x = a, *y = b;
    int xs[] = {x->send, x->recv, x->chan, x->order}, ys[] = {y->send, y->recv, y->chan, y->order};

    return cs_cmp_ints(xs, ys, 4);
}

static struct cs_ref inst_ref(const struct cs_prog *p, struct cs_ref r, int i)
{
    int n = p->o.instances;

    if (r.buf == CS_BUF_SCRATCH)
        r.index = p->ranks[r.rank].scratch_size * i + r.index;
    else if (p->o.interleaved)
        r.index = r.index * n + i * r.size;
    else
        r.index = (r.buf == CS_BUF_INPUT ? p->o.in_chunks : p->o.out_chunks) * i + r.index;
    return r;
}

/* What emission reads of an op: its instruction and operands, 24 bytes where the op has 60
 * (compact_ops). */
struct eop {
    unsigned char inst, srcbuf, dstbuf;
    int size, srcrank, srcindex, dstrank, dstindex;
};

static struct cs_ref eop_src(const struct eop *o)
{
    return (struct cs_ref){o->srcrank, (enum cs_buf)o->srcbuf, o->srcindex, o->size};
}

static struct cs_ref eop_dst(const struct eop *o)
{
    return (struct cs_ref){o->dstrank, (enum cs_buf)o->dstbuf, o->dstindex, o->size};
}

/* An instanced op's flags: someone depends on it; an earlier op of the tb prune_deps is at
 * depends on it (cleared once that tb is done). */
#define F_HASDEP 1
#define F_SEEN 2

struct emit {
    struct cs_prog *p;
    struct eop *eops;     /* the program's ops, once compacted (the program's own are freed) */
    int ni;               /* instances */
    int *iop_tbid;        /* instanced op -> final tb id */
    int *iop_step;        /* instanced op -> final step */
    unsigned char *flags; /* instanced op -> F_* */
    struct ivec *ideps;   /* instanced op -> dependencies (instanced ops) */
};

/* The instanced threadblocks of rank pr, in their final order (by send, recv, channel); records
 * each instanced op's tb id in e->iop_tbid. */
static void instance_tbs(struct emit *e, const struct prog_rank *pr, struct itb *tbs)
{
    const struct cs_prog *p = e->p;
    int ni = e->ni, nt = pr->ntbs * ni, maxch = 1;

    for (int r = 0; r < p->o.ngpus; r++)
        if (p->ranks[r].nchan > maxch)
            maxch = p->ranks[r].nchan;
    for (int i = 0, k = 0; i < ni; i++)
        for (int t = 0; t < pr->ntbs; t++, k++) {
            tbs[k].ltb = t;
            tbs[k].inst = i;
            tbs[k].send = pr->tbs[t].send;
            tbs[k].recv = pr->tbs[t].recv;
            tbs[k].chan = maxch * i + pr->tbs[t].chan;
            tbs[k].order = k;
        }
    qsort(tbs, (size_t)nt, sizeof(*tbs), itb_cmp);
    for (int k = 0; k < nt; k++) {
        const struct ltb *t = &pr->tbs[tbs[k].ltb];

        tbs[k].id = k;
        for (int s = 0; s < t->ops.n; s++)
            e->iop_tbid[IV(&t->ops)[s] * ni + tbs[k].inst] = k;
    }
}

/* Dependencies of instanced tb k: drop those on the same tb, then those an earlier op of the tb
 * already has; mark the ops that remain depended on. */
static int prune_deps(struct emit *e, const struct ltb *t, const struct itb *tb)
{
    for (int s = 0; s < t->ops.n; s++) {
        struct ivec *d = &e->ideps[IV(&t->ops)[s] * e->ni + tb->inst];
        int w = 0;

        for (int j = 0; j < d->n; j++) {
            if (e->iop_tbid[IV(d)[j]] == tb->id || (e->flags[IV(d)[j]] & F_SEEN))
                continue;
            IV(d)[w++] = IV(d)[j];
        }
        d->n = w;
        for (int j = 0; j < d->n; j++)
            e->flags[IV(d)[j]] |= F_SEEN | F_HASDEP;
    }
    /* the ops marked seen are the dependencies that remain */
    for (int s = 0; s < t->ops.n; s++) {
        const struct ivec *d = &e->ideps[IV(&t->ops)[s] * e->ni + tb->inst];

        for (int j = 0; j < d->n; j++)
            e->flags[IV(d)[j]] &= (unsigned char)~F_SEEN;
    }
    return 0;
}

/* Split tb's ops into `pre` and `after` (from the first reduce on, when dependence nops are on);
 * a reduce's dependencies move to nops in `pre`, except the first, which the first reduce keeps. */
static int split_entries(struct emit *e, const struct ltb *t, int inst, struct ent *pre, int *npre,
                         struct ent *after, int *nafter)
{
    struct cs_prog *p = e->p;
    int first_re = -1, first_dep = -1;

    for (int s = 0; s < t->ops.n; s++) {
        int x = IV(&t->ops)[s];
        struct ivec *d = &e->ideps[x * e->ni + inst];

        if (p->o.dependence_nop && e->eops[x].inst == I_REDUCE) {
            for (int j = 0; j < d->n; j++) {
                if (first_dep < 0)
                    first_dep = IV(d)[j];
                else
                    pre[(*npre)++] = (struct ent){-1, IV(d)[j]};
            }
            d->n = 0;
            if (first_re < 0)
                first_re = x;
        }
        if (first_re >= 0)
            after[(*nafter)++] = (struct ent){x, -1};
        else
            pre[(*npre)++] = (struct ent){x, -1};
    }
    if (first_dep >= 0) {
        struct ivec *d = &e->ideps[first_re * e->ni + inst];

        d->n = 0;
        if (ivec_push(d, first_dep))
            return nomem(p);
    }
    return 0;
}

/* Grow the gpu's chunk count of r's buffer to cover r. */
static void cover_chunks(struct cs_gpu *gpu, struct cs_ref r)
{
    int *sz = r.buf == CS_BUF_INPUT    ? &gpu->i_chunks
              : r.buf == CS_BUF_OUTPUT ? &gpu->o_chunks
                                       : &gpu->s_chunks;

    if (r.index + r.size > *sz)
        *sz = r.index + r.size;
}
/* Append the step of entry en of instance inst to tb: an op, or a nop whose dependency (an
 * instanced op) is resolved to (tb, step) once every rank is lowered (deps -2 marks those). Grows
 * gpu's chunk counts to cover the op's local chunks. */
static int add_step(const struct emit *e, struct cs_gpu *gpu, struct cs_tb *tb, struct ent en,
                    int inst)
{
    struct cs_step *st = cs_tb_add_step(tb);
    const struct eop *o;
    const struct ivec *d;
    struct cs_ref a, b;

    if (st == NULL)
        return nomem(e->p);
    if (en.op < 0) {
        *st = (struct cs_step){.s = tb->nsteps - 1,
                               .type = CS_STEP_NOP,
                               .srcbuf = CS_BUF_INPUT,
                               .srcoff = -1,
                               .dstbuf = CS_BUF_OUTPUT,
                               .dstoff = -1,
                               .depid = en.dep,
                               .deps = -2};
        return 0;
    }
    o = &e->eops[en.op];
    d = &e->ideps[en.op * e->ni + inst];
    a = inst_ref(e->p, eop_src(o), inst);
    b = inst_ref(e->p, eop_dst(o), inst);
    if (insts[o->inst].local_src)
        cover_chunks(gpu, a);
    if (insts[o->inst].local_dst)
        cover_chunks(gpu, b);
    *st = (struct cs_step){.s = tb->nsteps - 1,
                           .type = insts[o->inst].type,
                           .srcbuf = a.buf,
                           .srcoff = a.index,
                           .dstbuf = b.buf,
                           .dstoff = b.index,
                           .cnt = a.size,
                           .depid = d->n > 0 ? IV(d)[0] : -1,
                           .deps = d->n > 0 ? -2 : -1,
                           .hasdep = e->flags[en.op * e->ni + inst] & F_HASDEP};
    return 0;
}

/* Add instanced tb itb (program tb t) to gpu with its steps: the dependence nops first, then each
 * op after one nop per dependency beyond its first. */
static int emit_tb(struct emit *e, struct cs_gpu *gpu, const struct itb *itb, const struct ltb *t)
{
    int cap = 0, npre = 0, nafter = 0, inst = itb->inst, rc;
    struct cs_tb *tb = cs_gpu_add_tb(gpu);
    struct ent *pre, *after;

    for (int s = 0; s < t->ops.n; s++)
        cap += 1 + e->ideps[IV(&t->ops)[s] * e->ni + inst].n;
    pre = malloc((size_t)(cap + 1) * sizeof(*pre));
    after = malloc((size_t)(cap + 1) * sizeof(*after));
    rc = tb == NULL || pre == NULL || after == NULL
             ? nomem(e->p)
             : split_entries(e, t, inst, pre, &npre, after, &nafter);
    if (rc == 0) {
        tb->id = itb->id;
        tb->send = itb->send;
        tb->recv = itb->recv;
        tb->chan = itb->chan;
    }
    for (int j = 0; rc == 0 && j < npre + nafter; j++) {
        struct ent en = j < npre ? pre[j] : after[j - npre];

        if (en.op >= 0) {
            struct ivec *d = &e->ideps[en.op * e->ni + inst];

            for (int q = 1; rc == 0 && q < d->n; q++)
                rc = add_step(e, gpu, tb, (struct ent){-1, IV(d)[q]}, inst);
            e->iop_step[en.op * e->ni + inst] = tb->nsteps;
        }
        rc = rc ? rc : add_step(e, gpu, tb, en, inst);
    }
    if (rc == 0)
        cs_tb_shrink(tb);
    cs_free_each(2, pre, after);
    return rc;
}

/* What only the emission of rank pr reads, once it is emitted: its tbs and its ops'
 * dependencies, whose room goes to the steps of the ranks after it (2.2 million tb entries and
 * 127 thousand tbs for the 1024-GPU hierarchical AllReduce). */
static void release_rank(struct emit *e, struct prog_rank *pr)
{
    for (int t = 0; t < pr->ntbs; t++) {
        struct ltb *lt = &pr->tbs[t];

        for (int s = 0; s < lt->ops.n; s++)
            for (int i = 0; i < e->ni; i++)
                ivec_free(&e->ideps[IV(&lt->ops)[s] * e->ni + i]);
        ivec_free(&lt->ops);
    }
    free(pr->tbs);
    pr->tbs = NULL;
    pr->ntbs = pr->cap_tbs = 0;
}

static int lower_rank(struct emit *e, int rank, struct cs_gpu *gpu)
{
    struct cs_prog *p = e->p;
    struct prog_rank *pr = &p->ranks[rank];
    int nt = pr->ntbs * e->ni, rc = 0;
    struct itb *tbs = calloc((size_t)(nt ? nt : 1), sizeof(*tbs));

    if (tbs == NULL)
        return nomem(p);
    instance_tbs(e, pr, tbs);
    /* every tb's dependencies are pruned (and hasdep known) before any tb is emitted */
    for (int k = 0; k < nt && rc == 0; k++)
        rc = prune_deps(e, &pr->tbs[tbs[k].ltb], &tbs[k]);
    gpu->id = rank;
    for (int k = 0; k < nt && rc == 0; k++)
        rc = emit_tb(e, gpu, &tbs[k], &pr->tbs[tbs[k].ltb]);
    free(tbs);
    if (rc == 0)
        release_rank(e, pr);
    return rc;
}

/* The buffers' slots (each chunk's last writer and readers), which only the building of the DAG
 * reads: freed once the program is whole, before the passes (2 million of them, 50 MB, for the
 * 1024-GPU hierarchical AllReduce). */
static void release_slots(struct cs_prog *p)
{
    for (int r = 0; r < p->o.ngpus; r++)
        for (int b = 0; b < 3; b++) {
            struct slots *ss = &p->ranks[r].buf[b];

            for (int i = 0; i < ss->n; i++)
                ivec_free(&ss->s[i].readers);
            free(ss->s);
            *ss = (struct slots){0};
        }
}

/* What only the instruction order reads, freed before the tbs are assigned: each op's successors
 * and keys. */
static void release_dag(struct cs_prog *p)
{
    for (int i = 0; p->next != NULL && i < p->nops; i++)
        ivec_free(&p->next[i]);
    free(p->next);
    free(p->keys);
    p->next = NULL;
    p->keys = NULL;
}

/* Each op's successors, from the predecessors: every edge was made to the op newest then (move),
 * so an op's successors, in the order they were linked, are the ops naming it as a predecessor in
 * ascending order. Not kept while the program is built, beside the buffers' slots. */
static int make_next(struct cs_prog *p)
{
    p->next = calloc((size_t)p->nops + 1, sizeof(*p->next));
    if (p->next == NULL)
        return nomem(p);
    for (int i = 0; i < p->nops; i++)
        for (int k = 0; k < p->ops[i].prev.n; k++)
            if (ivec_push(&p->next[IV(&p->ops[i].prev)[k]], i))
                return nomem(p);
    return 0;
}

/* The tb-id tables, which only assign_tbs reads (3 million entries for the 1024-GPU
 * hierarchical AllReduce). */
static void release_tbidx(struct cs_prog *p)
{
    for (int r = 0; r < p->o.ngpus; r++) {
        free(p->ranks[r].tbidx);
        p->ranks[r].tbidx = NULL;
        p->ranks[r].ntbidx = 0;
    }
}

/* The lowering passes before emission; *ord (n ops) is the topological order. */
static int passes(struct cs_prog *p, int **ord, int *n)
{
    if (p->failed)
        return p->failed;
    if (p->lowered)
        return fail(p, CS_ERR_USAGE, NULL, "the program was already lowered");
    p->lowered = 1;
    if (add_starts(p))
        return p->failed;
    release_slots(p);
    cs_give_back_memory(); /* their pages, before the passes allocate theirs */
    if (make_next(p) || (p->o.fusion && (fuse(p) || compact(p))) || metadata(p) ||
        topo_sort(p, ord, n))
        return p->failed;
    release_dag(p);
    if (assign_tbs(p, *ord, *n))
        return p->failed;
    release_tbidx(p);
    if (infer_deps(p, *ord, *n))
        return p->failed;
    free(p->place);
    p->place = NULL;
    cs_give_back_memory();
    return 0;
}

/* Rewrite the program's ops, whose dependencies are gone by now (emit_init), as the emission's
 * eops, in place (eop i ends before op i + 1 begins, so each op is read before anything
 * overwrites it) and shrunk: the 1024-GPU hierarchical AllReduce's 1.3 million ops from 78 MB to
 * 31 MB while its schedule is written. */
static void compact_ops(struct emit *e, struct cs_prog *p)
{
    char *base = (char *)p->ops;
    struct eop *eops;

    for (int i = 0; i < p->nops; i++) {
        struct op o;
        struct eop x;

        memcpy(&o, base + (size_t)i * sizeof(o), sizeof(o));
        ivec_free(&o.prev);
        x = (struct eop){.inst = o.inst,
                         .srcbuf = o.srcbuf,
                         .dstbuf = o.dstbuf,
                         .size = o.size,
                         .srcrank = o.srcrank,
                         .srcindex = o.srcindex,
                         .dstrank = o.dstrank,
                         .dstindex = o.dstindex};
        memcpy(base + (size_t)i * sizeof(x), &x, sizeof(x));
    }
    eops = realloc(base, (p->nops ? (size_t)p->nops : 1) * sizeof(*eops));
    e->eops = eops != NULL ? eops : (struct eop *)(void *)base;
    p->ops = NULL;
    p->cap_ops = 0;
}

/* Replicate every op's dependencies per instance, compact the ops, then allocate e's other
 * per-instanced-op arrays (after the ops have shrunk). */
static int emit_init(struct emit *e, struct cs_prog *p, const int *ord, int n)
{
    int ni = p->o.instances;
    size_t nio = (size_t)p->nops * (size_t)ni;

    e->p = p;
    e->ni = ni;
    e->ideps = calloc(nio ? nio : 1, sizeof(struct ivec));
    if (e->ideps == NULL)
        return nomem(p);
    for (int i = 0; i < n; i++) {
        struct op *o = &p->ops[ord[i]];

        /* its dependencies (infer_deps), which nothing reads in the op from here on: handed
         * over as they are with one instance, else replicated per instance and freed */
        if (ni == 1) {
            e->ideps[ord[i]] = o->prev;
            o->prev = (struct ivec){0};
            continue;
        }
        for (int k = 0; k < ni; k++)
            for (int j = 0; j < o->prev.n; j++)
                if (ivec_push(&e->ideps[ord[i] * ni + k], IV(&o->prev)[j] * ni + k))
                    return nomem(p);
        ivec_free(&o->prev);
    }
    compact_ops(e, p);
    cs_give_back_memory();
    e->iop_tbid = malloc((nio ? nio : 1) * sizeof(int));
    e->iop_step = malloc((nio ? nio : 1) * sizeof(int));
    e->flags = calloc(nio ? nio : 1, 1);
    if (e->iop_tbid == NULL || e->iop_step == NULL || e->flags == NULL)
        return nomem(p);
    return 0;
}

static void emit_cleanup(struct emit *e)
{
    if (e->ideps)
        for (int i = 0; i < e->p->nops * e->ni; i++)
            ivec_free(&e->ideps[i]);
    cs_free_each(5, e->ideps, e->iop_tbid, e->iop_step, e->flags, e->eops);
}

/* Resolve nop and op dependencies to (tb id, step) now that every step index is known; set the
 * schedule's channel and chunk counts. */
static void resolve_deps(struct cs_sched *sched, const struct emit *e)
{
    sched->nchannels = 1;
    for (int r = 0; r < sched->ngpus; r++) {
        struct cs_gpu *gpu = &sched->gpus[r];

        if (gpu->i_chunks > sched->nchunksperloop)
            sched->nchunksperloop = gpu->i_chunks;
        if (gpu->o_chunks > sched->nchunksperloop)
            sched->nchunksperloop = gpu->o_chunks;
        for (int t = 0; t < gpu->ntbs; t++) {
            struct cs_tb *tb = &gpu->tbs[t];

            if (tb->chan + 1 > sched->nchannels)
                sched->nchannels = tb->chan + 1;
            for (int s = 0; s < tb->nsteps; s++) {
                struct cs_step *st = &tb->steps[s];

                if (st->deps == -2) {
                    int d = st->depid;

                    st->depid = e->iop_tbid[d];
                    st->deps = e->iop_step[d];
                }
            }
        }
    }
}

/* Emit every rank of the lowered program p into a new schedule. */
static int emit(struct emit *e, struct cs_prog *p, struct cs_sched **out)
{
    struct cs_sched *sched = cs_sched_new();

    if (sched == NULL || cs_sched_set_name(sched, p->o.name)) {
        cs_sched_free(sched);
        return nomem(p);
    }
    sched->proto = p->o.proto;
    sched->ngpus = p->o.ngpus;
    sched->coll = p->o.coll;
    sched->inplace = p->o.inplace;
    for (int r = 0; r < p->o.ngpus; r++) {
        struct cs_gpu *gpu = cs_sched_add_gpu(sched);

        if (gpu == NULL || lower_rank(e, r, gpu)) {
            cs_sched_free(sched);
            return gpu == NULL ? nomem(p) : p->failed;
        }
    }
    sched->ngpus_alloc = p->o.ngpus;
    resolve_deps(sched, e);
    cs_sched_shrink(sched);
    *out = sched;
    return 0;
}

int cs_prog_lower(struct cs_prog *p, struct cs_sched **out, struct cs_error *err)
{
    int *ord = NULL, n = 0, rc;
    struct emit e = {.p = p};

    rc = passes(p, &ord, &n);
    if (rc == 0)
        rc = emit_init(&e, p, ord, n);
    free(ord); /* before the schedule takes its room */
    if (rc == 0)
        rc = emit(&e, p, out);
    if (rc != 0) {
        rc = p->failed ? p->failed : CS_ERR_USAGE;
        if (err)
            cs_error_set(err, p->err.file, p->err.line, "%s", p->err.msg);
    }
    emit_cleanup(&e);
    cs_give_back_memory(); /* the passes' pages, before the plan is compiled into them */
    return rc;
}

/* A schedule the runtime cannot load: CS_ERR_INVALID with the limit it breaks. */
#define over_limit(err, ...) cs_error_fail((err), CS_ERR_INVALID, "", 0, __VA_ARGS__)

int cs_sched_check_limits(const struct cs_sched *sched, struct cs_error *err)
{
    if (sched->nchannels > CS_MAX_CHANNELS)
        return over_limit(err, "%d channels, more than the runtime's %d", sched->nchannels,
                          CS_MAX_CHANNELS);
    for (int g = 0; g < sched->ngpus; g++) {
        const struct cs_gpu *gpu = &sched->gpus[g];

        if (gpu->ntbs > CS_MAX_TBS)
            return over_limit(err, "gpu %d: %d threadblocks, more than the runtime's %d", g,
                              gpu->ntbs, CS_MAX_TBS);
        if (gpu->i_chunks > 32767 || gpu->o_chunks > 32767 || gpu->s_chunks > 32767)
            return over_limit(err, "gpu %d: chunk offsets beyond the runtime's int16_t", g);
        for (int c = 0; c < sched->nchannels; c++) {
            int ns = 0, nr = 0;

            for (int t = 0; t < gpu->ntbs; t++) {
                ns += gpu->tbs[t].chan == c && gpu->tbs[t].send >= 0;
                nr += gpu->tbs[t].chan == c && gpu->tbs[t].recv >= 0;
            }
            if (ns > 32 || nr > 32)
                return over_limit(err,
                                  "gpu %d channel %d: %d sending and %d receiving tbs, the runtime "
                                  "allows 32 of each per channel",
                                  g, c, ns, nr);
        }
        for (int t = 0; t < gpu->ntbs; t++) {
            const struct cs_tb *tb = &gpu->tbs[t];

            for (int s = 0; s < tb->nsteps; s++) {
                const struct cs_step *st = &tb->steps[s];

                if (st->cnt >= CS_MAX_CNT)
                    return over_limit(err, "gpu %d tb %d step %d: cnt %d, the runtime allows < %d",
                                      g, t, s, st->cnt, CS_MAX_CNT);
                if (st->depid > CS_MAX_DEPID)
                    return over_limit(
                        err, "gpu %d tb %d step %d: depends on tb %d, the runtime allows <= %d", g,
                        t, s, st->depid, CS_MAX_DEPID);
            }
        }
    }
    return 0;
}
