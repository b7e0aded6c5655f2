/* verify.c: structural checks, static deadlock detection and the symbolic data execution of a
 * schedule (DESIGN.md "Verification"; shared reference msccl.md sections 1, 2 and 4.8-4.10). */
#include "verify.h"
#include "util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Most steps a schedule may have for the indices below to stay in int32_t. */
#define MAX_TOTAL_STEPS (INT32_MAX / 2)

/* The checker's state: an index of every tb and step by a global number, the connection
 * matching, and the dependency graph. */
struct vctx {
    const struct cs_sched *sc;
    const struct cs_verify_opts *opts;
    struct cs_verify_result *res;
    int max_diags, cap_diags;
    int oom;
    int nfatal;        /* structural errors after which the graph or the execution makes no sense */
    int steps_what_if; /* a tb over the runtimes' steps is no error (predict's what-if) */
    int nodata;        /* problems that make the data check meaningless (but not the graph) */
    int ngpus;
    const struct cs_gpu **gpu; /* by gpu id */
    int32_t *gtb0;             /* first global tb number of each gpu id; ngpus + 1 entries */
    int32_t ntbs;
    const struct cs_tb **tb; /* by global tb number (gpu id, then tb id) */
    int32_t *tb_gpu;         /* gpu id of each global tb */
    int32_t *step0;          /* first global step number of each global tb; ntbs + 1 entries */
    int32_t nsteps;
    int32_t nreal;      /* steps that are not nops */
    int32_t *step_tb;   /* global tb of each step */
    int32_t *send_to;   /* per step: the receive step matching this send, or -1 */
    int32_t *recv_from; /* per step: the send step matching this receive, or -1 */
    /* per send step: the receive whose consumption frees the FIFO slots it needs at the smallest
     * size (one call per step), or -1; and per receive step the send it frees, or -1 */
    int32_t *credit_from, *credit_to;
    int32_t *wait_off; /* per step (CSR into wait): the steps whose passing it waits for */
    int32_t *wait;
    int32_t *signal; /* per step: first real hasdep step at or after it in its tb, or -1 */
    int32_t *indeg;  /* per step: unmet predecessors left after the topological sort */
    int32_t *order;  /* real steps in an order that respects every wait; norder entries */
    /* per step: its place in another such order (depth first, last tb first), -1 for a nop;
     * the race search's, and the second execution's order */
    int32_t *pos2;
    int32_t norder;
    int32_t *dep_off; /* dependents of each step (CSR): the steps waiting on its signal */
    int32_t *dep_list;
};

/* What a finding is: its severity and class, and what it stops (FATAL: the later passes, whose
 * index or graph it breaks; NODATA: the data check). */
enum kind { NOTE = 1, WARN, SERROR, FATAL, NODATA, DWARN, DERROR };

static const struct cs_step *step_at(const struct vctx *v, int32_t id)
{
    int32_t t = v->step_tb[id];

    return &v->tb[t]->steps[id - v->step0[t]];
}

static int step_index(const struct vctx *v, int32_t id)
{
    return id - v->step0[v->step_tb[id]];
}

static void *xcalloc(struct vctx *v, size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);

    if (p == NULL)
        v->oom = 1;
    return p;
}

/* n int32_t, each -1 ("none"). */
static int32_t *xnone(struct vctx *v, size_t n)
{
    int32_t *p = xcalloc(v, n, sizeof(*p));

    if (p != NULL)
        memset(p, 0xff, n * sizeof(*p));
    return p;
}

static const char *buf_name(enum cs_buf b)
{
    static const char *const names[] = {"?", "input", "output", "scratch"};

    return (int)b > 0 && (int)b <= CS_BUF_SCRATCH ? names[b] : "?";
}

/* "rank R tb T step S (type)", with ", line L" before the ')' when with_line. */
static const char *step_name(const struct vctx *v, int32_t id, int with_line, char *buf, size_t len)
{
    int32_t t = v->step_tb[id];
    const struct cs_step *st = step_at(v, id);
    const char *type = cs_step_type_name(st->type);
    char at[32] = "";

    if (with_line && st->line > 0)
        snprintf(at, sizeof(at), ", line %d", st->line);
    snprintf(buf, len, "rank %d tb %d step %d (%s%s)", v->tb_gpu[t], v->tb[t]->id,
             step_index(v, id), type ? type : "?", at);
    return buf;
}

/* Count a finding and keep it while fewer than max_diags are kept; its message is the name of
 * step `step` (when >= 0) followed by fmt. */
static void __attribute__((format(printf, 5, 0)))
vdiag(struct vctx *v, enum kind k, int line, int32_t step, const char *fmt, va_list ap)
{
    struct cs_verify_result *r = v->res;
    struct cs_verify_diag *d;
    char *msg = NULL, name[96];
    size_t len = 0;
    FILE *fp;

    v->nfatal += k == FATAL;
    v->nodata += k == NODATA;
    r->nstructure_errors += k == SERROR || k == FATAL || k == NODATA;
    r->ndata_errors += k == DERROR;
    r->nwarnings += k == WARN || k == DWARN;
    if (r->ndiags >= v->max_diags) {
        r->ndropped++;
        return;
    }
    d = cs_array_slot((void **)&r->diags, r->ndiags, &v->cap_diags, sizeof(*d));
    if (d != NULL && (fp = open_memstream(&msg, &len)) != NULL) {
        if (step >= 0)
            fputs(step_name(v, step, 0, name, sizeof(name)), fp);
        vfprintf(fp, fmt, ap);
        if (fclose(fp) == 0) {
            d->severity = k == NOTE                 ? CS_VERIFY_NOTE
                          : k == WARN || k == DWARN ? CS_VERIFY_WARNING
                                                    : CS_VERIFY_ERROR;
            d->cls = k >= DWARN ? CS_VERIFY_DATA : CS_VERIFY_STRUCTURE;
            d->line = line;
            d->msg = msg;
            r->ndiags++;
            return;
        }
    }
    v->oom = 1;
    free(msg);
}

/* A finding at file line `line` (0: none). */
static void __attribute__((format(printf, 4, 5)))
diag(struct vctx *v, enum kind k, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdiag(v, k, line, -1, fmt, ap);
    va_end(ap);
}

/* A finding about step id, at its line, the message starting "rank R tb T step S (type)". */
static void __attribute__((format(printf, 4, 5)))
step_diag(struct vctx *v, enum kind k, int32_t id, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vdiag(v, k, step_at(v, id)->line, id, fmt, ap);
    va_end(ap);
}

/* ---- indexing ---------------------------------------------------------------------------- */

/* Number gpus by id, tbs by (gpu, id) and steps by (tb, index); check the ids are dense. */
static void build_index(struct vctx *v)
{
    const struct cs_sched *sc = v->sc;
    long long ntbs = 0, nsteps = 0;

    v->ngpus = sc->ngpus;
    if (sc->ngpus < 1 || sc->ngpus != sc->ngpus_alloc) {
        diag(v, FATAL, sc->line, "<algo>: ngpus=\"%d\" but %d <gpu> elements", sc->ngpus,
             sc->ngpus_alloc);
        return;
    }
    if ((v->gpu = xcalloc(v, (size_t)v->ngpus, sizeof(*v->gpu))) == NULL ||
        (v->gtb0 = xcalloc(v, (size_t)v->ngpus + 1, sizeof(*v->gtb0))) == NULL)
        return;
    for (int g = 0; g < sc->ngpus_alloc; g++) {
        const struct cs_gpu *gpu = &sc->gpus[g];

        if (gpu->id < 0 || gpu->id >= v->ngpus || v->gpu[gpu->id] != NULL) {
            diag(v, FATAL, gpu->line, "<gpu>: %s id=\"%d\" (gpu ids must be 0..%d, each once)",
                 gpu->id < 0 || gpu->id >= v->ngpus ? "out of range" : "duplicate", gpu->id,
                 v->ngpus - 1);
            return;
        }
        v->gpu[gpu->id] = gpu;
        ntbs += gpu->ntbs;
        for (int t = 0; t < gpu->ntbs; t++)
            nsteps += gpu->tbs[t].nsteps;
    }
    if (ntbs > MAX_TOTAL_STEPS || nsteps > MAX_TOTAL_STEPS) {
        diag(v, FATAL, sc->line, "the schedule is too large to check (%lld tbs, %lld steps)", ntbs,
             nsteps);
        return;
    }
    for (int g = 0; g < v->ngpus; g++)
        v->gtb0[g + 1] = v->gtb0[g] + v->gpu[g]->ntbs;
    v->ntbs = (int32_t)ntbs;
    v->nsteps = (int32_t)nsteps;
    if ((v->tb = xcalloc(v, (size_t)ntbs, sizeof(*v->tb))) == NULL ||
        (v->tb_gpu = xcalloc(v, (size_t)ntbs, sizeof(*v->tb_gpu))) == NULL ||
        (v->step0 = xcalloc(v, (size_t)ntbs + 1, sizeof(*v->step0))) == NULL ||
        (v->step_tb = xcalloc(v, (size_t)nsteps, sizeof(*v->step_tb))) == NULL)
        return;
    for (int g = 0; g < v->ngpus; g++) {
        const struct cs_gpu *gpu = v->gpu[g];

        for (int t = 0; t < gpu->ntbs; t++) {
            const struct cs_tb *tb = &gpu->tbs[t];

            if (tb->id < 0 || tb->id >= gpu->ntbs || v->tb[v->gtb0[g] + tb->id] != NULL) {
                diag(v, FATAL, tb->line,
                     "<tb>: %s id=\"%d\" on gpu %d (tb ids must be 0..%d, each once: dense)",
                     tb->id < 0 || tb->id >= gpu->ntbs ? "out of range" : "duplicate", tb->id, g,
                     gpu->ntbs - 1);
                return;
            }
            v->tb[v->gtb0[g] + tb->id] = tb;
            v->tb_gpu[v->gtb0[g] + tb->id] = g;
        }
    }
    nsteps = 0;
    for (int32_t t = 0; t < v->ntbs; t++) {
        v->step0[t] = (int32_t)nsteps;
        for (int i = 0; i < v->tb[t]->nsteps; i++) {
            v->step_tb[nsteps + i] = t;
            v->nreal += v->tb[t]->steps[i].type != CS_STEP_NOP;
        }
        nsteps += v->tb[t]->nsteps;
    }
    v->step0[v->ntbs] = (int32_t)nsteps;
}

/* ---- per-tb and per-step rules ------------------------------------------------------------ */

/* Step id of gpu reads or writes (`what`) chunks off.. of buffer b: within what gpu declares? */
static void check_range(struct vctx *v, const struct cs_gpu *gpu, int32_t id, const char *what,
                        enum cs_buf b, int off)
{
    long end = (long)off + step_at(v, id)->cnt;
    int n = b == CS_BUF_INPUT ? gpu->i_chunks : b == CS_BUF_OUTPUT ? gpu->o_chunks : gpu->s_chunks;

    if (end > n)
        step_diag(v, NODATA, id,
                  " %s %s chunks %d..%ld, outside the %d %s chunks declared by <gpu id=\"%d\"> "
                  "(%c_chunks)",
                  what, buf_name(b), off, end - 1, n, buf_name(b), gpu->id, cs_buf_char(b));
}

static void check_step(struct vctx *v, const struct cs_gpu *gpu, const struct cs_tb *tb, int i)
{
    const struct cs_step *st = &tb->steps[i];
    int32_t id = v->step0[v->gtb0[gpu->id] + tb->id] + i;

    if (st->s != i)
        diag(v, SERROR, st->line, "rank %d tb %d: s=\"%d\" but this is step %d of its tb", gpu->id,
             tb->id, st->s, i);
    if (cs_step_type_name(st->type) == NULL || cs_buf_char(st->srcbuf) == '?' ||
        cs_buf_char(st->dstbuf) == '?') {
        diag(v, FATAL, st->line, "rank %d tb %d step %d: invalid step type or buffer", gpu->id,
             tb->id, i);
        return;
    }
    if ((st->depid < 0) != (st->deps < 0)) {
        step_diag(v, FATAL, id, ": depid=\"%d\" and deps=\"%d\" must both be -1 or both be set",
                  st->depid, st->deps);
    } else if (st->depid >= 0) {
        const struct cs_tb *dep = cs_gpu_find_tb(gpu, st->depid);

        if (dep == NULL || st->deps >= dep->nsteps)
            step_diag(v, FATAL, id, ": depends on tb %d step %d, which does not exist", st->depid,
                      st->deps);
        else if (st->depid > CS_MAX_DEPID)
            step_diag(v, SERROR, id,
                      ": depends on tb %d, but the runtime stores a dependency's tb in an int8_t "
                      "(at most %d)",
                      st->depid, CS_MAX_DEPID);
    }
    if (st->type == CS_STEP_NOP) {
        /* the executor folds a nop into the next step's dependencies (msccl.md 4.10) */
        if (st->cnt != 0)
            step_diag(v, SERROR, id, ": a nop moves nothing, but cnt=\"%d\" (must be 0)", st->cnt);
        if (st->depid < 0)
            step_diag(v, SERROR, id, ": a nop carries a dependency, but depid=\"-1\"");
        return;
    }
    if (st->cnt < 1 || st->srcoff < 0 || st->dstoff < 0) {
        step_diag(v, FATAL, id,
                  ": cnt=\"%d\" srcoff=\"%d\" dstoff=\"%d\": a step that moves data needs cnt >= 1 "
                  "and offsets >= 0",
                  st->cnt, st->srcoff, st->dstoff);
        return;
    }
    if (st->cnt >= CS_MAX_CNT)
        step_diag(v, SERROR, id, ": cnt=\"%d\", but the runtime allows at most %d", st->cnt,
                  CS_MAX_CNT - 1);
    if (cs_step_sends(st->type) && tb->send < 0)
        step_diag(v, FATAL, id, " sends, but tb %d has send=\"-1\"", tb->id);
    if (cs_step_recvs(st->type) && tb->recv < 0)
        step_diag(v, FATAL, id, " receives, but tb %d has recv=\"-1\"", tb->id);
    /* Only the operands the executing GPU touches: a receive's src and a send's dst name the
     * peer's buffers (msccl.md 1.2). */
    if (cs_step_reads_src(st->type))
        check_range(v, gpu, id, "reads", st->srcbuf, st->srcoff);
    if (cs_step_writes_dst(st->type))
        check_range(v, gpu, id, "writes", st->dstbuf, st->dstoff);
    if (st->depid < 0 && i > 0 && tb->steps[i - 1].type == CS_STEP_NOP &&
        tb->steps[i - 1].depid >= 0)
        step_diag(v, SERROR, id,
                  " follows nops that carry dependencies but has depid=\"-1\" itself; the "
                  "executor rejects this (the first dependency belongs on the step)");
}

/* A tb's peers, channel and step count against the runtime's limits; then each of its steps.
 * -1 when its peers or channel are out of range (its steps unchecked). */
static int check_tb(struct vctx *v, const struct cs_gpu *gpu, const struct cs_tb *tb,
                    int ntbs[2][CS_MAX_CHANNELS])
{
    const struct cs_sched *sc = v->sc;
    int g = gpu->id, peer[2] = {tb->send, tb->recv}, steps = tb->nsteps;

    if (tb->send < -1 || tb->send >= v->ngpus || tb->recv < -1 || tb->recv >= v->ngpus) {
        diag(v, FATAL, tb->line,
             "rank %d tb %d: send=\"%d\" recv=\"%d\": peers must be -1 or 0..%d", g, tb->id,
             tb->send, tb->recv, v->ngpus - 1);
        return -1;
    }
    if (tb->send == g || tb->recv == g)
        diag(v, FATAL, tb->line, "rank %d tb %d: %s itself", g, tb->id,
             tb->send == g ? "sends to" : "receives from");
    if (tb->chan < 0 || tb->chan >= CS_MAX_CHANNELS) {
        diag(v, FATAL, tb->line,
             "rank %d tb %d: chan=\"%d\" is outside 0..%d: the runtimes have %d channels "
             "(MAXCHANNELS)",
             g, tb->id, tb->chan, CS_MAX_CHANNELS - 1, CS_MAX_CHANNELS);
        return -1;
    }
    if (tb->chan >= sc->nchannels && (tb->send >= 0 || tb->recv >= 0))
        diag(v, SERROR, tb->line,
             "rank %d tb %d uses channel %d, but nchannels=\"%d\": the runtime sets up "
             "connections on channels 0..%d only",
             g, tb->id, tb->chan, sc->nchannels, sc->nchannels - 1);
    /* The runtime's per-channel peer tables hold 32 of each (msccl.md 2.4). */
    for (int d = 0; d < 2; d++)
        if (peer[d] >= 0 && ++ntbs[d][tb->chan] == 33)
            diag(v, SERROR, tb->line, "rank %d: more than 32 tbs %s on channel %d", g,
                 d ? "receive" : "send", tb->chan);
    if (v->steps_what_if) /* simulated past the runtimes' steps: not checked */
        steps = 0;
    if (steps > CS_MAX_STEPS_LEGACY)
        diag(v, SERROR, tb->line,
             "rank %d tb %d has %d steps; the runtimes allow at most %d (executor default) or %d "
             "(legacy)",
             g, tb->id, tb->nsteps, CS_MAX_STEPS, CS_MAX_STEPS_LEGACY);
    else if (steps > CS_MAX_STEPS)
        diag(v, v->opts->runtime == CS_VERIFY_EXECUTOR ? SERROR : WARN, tb->line,
             "rank %d tb %d has %d steps: over the executor's default limit of %d "
             "(MSCCL_MAX_NUM_STEPS, a build option), within the legacy runtime's %d",
             g, tb->id, tb->nsteps, CS_MAX_STEPS, CS_MAX_STEPS_LEGACY);
    for (int i = 0; i < tb->nsteps; i++)
        check_step(v, gpu, tb, i);
    return 0;
}

static void check_tbs(struct vctx *v)
{
    const struct cs_sched *sc = v->sc;
    int maxchan = -1, badchan = 0; /* badchan: a tb's peers or channel out of range */

    if (sc->nchannels < 1 || sc->nchannels > CS_MAX_CHANNELS)
        diag(v, FATAL, sc->line,
             "<algo>: nchannels=\"%d\" is outside 1..%d: the runtimes set up connections on "
             "channels 0..nchannels-1 of a communicator that has at most %d (MAXCHANNELS)",
             sc->nchannels, CS_MAX_CHANNELS, CS_MAX_CHANNELS);
    else if (v->opts->comm_channels > 0 && sc->nchannels > v->opts->comm_channels)
        diag(v, SERROR, sc->line,
             "<algo>: nchannels=\"%d\" but the communicator has %d channels: the executor sets "
             "up the schedule's connections on channels 0..%d of the communicator and requires "
             "nchannels <= comm->nChannels",
             sc->nchannels, v->opts->comm_channels, sc->nchannels - 1);
    if (sc->nchunksperloop < 1)
        diag(v, FATAL, sc->line, "<algo>: nchunksperloop=\"%d\" must be at least 1",
             sc->nchunksperloop);
    for (int g = 0; g < v->ngpus; g++) {
        const struct cs_gpu *gpu = v->gpu[g];
        int ntbs[2][CS_MAX_CHANNELS] = {{0}}; /* tbs sending and receiving per channel */

        if (gpu->i_chunks < 0 || gpu->o_chunks < 0 || gpu->s_chunks < 0)
            diag(v, FATAL, gpu->line, "<gpu id=\"%d\">: negative chunk count", g);
        if (gpu->ntbs > CS_MAX_TBS)
            diag(v, SERROR, gpu->line,
                 "rank %d has %d tbs: the runtimes allow at most %d (32 x MAXCHANNELS)", g,
                 gpu->ntbs, CS_MAX_TBS);
        for (int t = 0; t < gpu->ntbs; t++)
            if (check_tb(v, gpu, &gpu->tbs[t], ntbs) != 0)
                badchan = 1;
            else if (gpu->tbs[t].chan > maxchan)
                maxchan = gpu->tbs[t].chan;
    }
    if (!badchan && maxchan >= 0 && maxchan + 1 < sc->nchannels)
        diag(v, WARN, sc->line, "nchannels=\"%d\" but no tb uses a channel above %d", sc->nchannels,
             maxchan);
}

/* ---- connections: one tb per (peer, chan) and direction; FIFO matching --------------------- */

struct endpoint {
    int32_t src, dst, chan, is_recv, gtb;
};

static int cmp_endpoint(const void *pa, const void *pb)
{
    const struct endpoint *a = pa, *b = pb;
    int as[] = {a->src, a->dst, a->chan, a->is_recv, a->gtb};
    int bs[] = {b->src, b->dst, b->chan, b->is_recv, b->gtb};

    return cs_cmp_ints(as, bs, 5);
}

/* How many steps of tb t send (or receive), or 0 for no tb (t < 0). */
static int32_t count_steps(const struct vctx *v, int32_t t, int sending)
{
    int32_t n = 0;

    for (int i = 0; t >= 0 && i < v->tb[t]->nsteps; i++) {
        enum cs_step_type ty = v->tb[t]->steps[i].type;

        n += sending ? cs_step_sends(ty) : cs_step_recvs(ty);
    }
    return n;
}

/* "rank R tb T", or "no tb of rank R sends there" for t < 0. */
static const char *end_name(const struct vctx *v, int32_t t, int rank, const char *verb, char *buf,
                            size_t len)
{
    if (t >= 0)
        snprintf(buf, len, "rank %d tb %d", rank, v->tb[t]->id);
    else
        snprintf(buf, len, "no tb of rank %d %s there", rank, verb);
    return buf;
}

/* A connection's FIFO at the smallest size, where every step is one call: a send holds
 * cs_proto_slots_per_call slots of CS_NCCL_STEPS until its receive consumes it, so the k-th send
 * needs the (k - CS_NCCL_STEPS / slots)-th receive done (runtime-audit.md 2.1). Larger sizes make
 * more calls per step and hold more slots: a credit cycle here is one at every size. */
struct fifo {
    int32_t recv[CS_NCCL_STEPS]; /* the last `depth` receives, a ring */
    int n, depth;
};

static void credit(struct vctx *v, int32_t send, int32_t recv, struct fifo *f)
{
    if (f->n >= f->depth) {
        int32_t freer = f->recv[f->n % f->depth];

        v->credit_from[send] = freer;
        v->credit_to[freer] = send;
    }
    f->recv[f->n++ % f->depth] = recv;
}

/* Pair the k-th send of connection e (tb s sends, tb r receives; -1 for none) with its k-th
 * receive, and each send with the receive that frees its slots. */
static void match_connection(struct vctx *v, const struct endpoint *e, int32_t s, int32_t r)
{
    int32_t ns = count_steps(v, s, 1), nr = count_steps(v, r, 0);
    struct fifo fifo = {{0}, 0, CS_NCCL_STEPS / cs_proto_slots_per_call(v->sc->proto)};
    char a[64], b[64];

    if (ns != nr) {
        diag(v, FATAL, s >= 0 ? v->tb[s]->line : v->tb[r]->line,
             "connection %d->%d channel %d: %d sends (%s) but %d receives (%s)", e->src, e->dst,
             e->chan, ns, end_name(v, s, e->src, "sends", a, sizeof(a)), nr,
             end_name(v, r, e->dst, "receives", b, sizeof(b)));
        return;
    }
    /* Equal counts: every send has its receive. */
    for (int i = 0, j = 0; ns > 0 && i < v->tb[s]->nsteps; i++) {
        const struct cs_step *x = &v->tb[s]->steps[i], *y;

        if (!cs_step_sends(x->type))
            continue;
        while (!cs_step_recvs(v->tb[r]->steps[j].type))
            j++;
        y = &v->tb[r]->steps[j];
        if (x->cnt != y->cnt) {
            diag(v, FATAL, y->line,
                 "connection %d->%d channel %d: rank %d tb %d step %d receives cnt=%d chunks, but "
                 "the matching send, rank %d tb %d step %d (line %d), sends cnt=%d",
                 e->src, e->dst, e->chan, e->dst, v->tb[r]->id, j, y->cnt, e->src, v->tb[s]->id, i,
                 x->line, x->cnt);
            return;
        }
        v->send_to[v->step0[s] + i] = v->step0[r] + j;
        v->recv_from[v->step0[r] + j] = v->step0[s] + i;
        credit(v, v->step0[s] + i, v->step0[r] + j, &fifo);
        j++;
    }
}

static void check_connections(struct vctx *v)
{
    struct endpoint *ep;
    int32_t n = 0;

    if ((v->send_to = xnone(v, (size_t)v->nsteps)) == NULL ||
        (v->recv_from = xnone(v, (size_t)v->nsteps)) == NULL ||
        (v->credit_from = xnone(v, (size_t)v->nsteps)) == NULL ||
        (v->credit_to = xnone(v, (size_t)v->nsteps)) == NULL ||
        (ep = xcalloc(v, 2 * (size_t)v->ntbs, sizeof(*ep))) == NULL)
        return;
    for (int32_t t = 0; t < v->ntbs; t++) {
        const struct cs_tb *tb = v->tb[t];
        int32_t g = v->tb_gpu[t];

        if (tb->send >= 0)
            ep[n++] = (struct endpoint){g, tb->send, tb->chan, 0, t};
        if (tb->recv >= 0)
            ep[n++] = (struct endpoint){tb->recv, g, tb->chan, 1, t};
    }
    qsort(ep, (size_t)n, sizeof(*ep), cmp_endpoint);
    /* Each run of equal (src, dst, chan) is one connection: its senders, then its receivers. */
    for (int32_t k = 0, m; k < n; k = m) {
        int32_t tb[2] = {-1, -1}; /* the first sending and receiving tbs */
        int dup = 0;

        for (m = k;
             m < n && ep[m].src == ep[k].src && ep[m].dst == ep[k].dst && ep[m].chan == ep[k].chan;
             m++) {
            const struct endpoint *e = &ep[m];

            if (tb[e->is_recv] < 0) {
                tb[e->is_recv] = e->gtb;
                continue;
            }
            diag(v, FATAL, v->tb[e->gtb]->line,
                 "rank %d: tbs %d and %d both %s rank %d on channel %d (a connection belongs to "
                 "one tb)",
                 e->is_recv ? e->dst : e->src, v->tb[tb[e->is_recv]]->id, v->tb[e->gtb]->id,
                 e->is_recv ? "receive from" : "send to", e->is_recv ? e->src : e->dst, e->chan);
            dup = 1;
        }
        if (!dup)
            match_connection(v, &ep[k], tb[0], tb[1]);
    }
    free(ep);
}

/* ---- dependencies and the static deadlock check ------------------------------------------- */

/* Each real step's waits as the global numbers of the steps waited for: its own dependency and
 * those of the nops just before it (msccl.md 2.3). */
static void index_waits(struct vctx *v)
{
    struct cs_dep *deps;
    int max = 0;

    if ((v->wait_off = xcalloc(v, (size_t)v->nsteps + 1, sizeof(int32_t))) == NULL)
        return;
    for (int32_t id = 0; id < v->nsteps; id++) {
        int n = cs_tb_step_deps(v->tb[v->step_tb[id]], step_index(v, id), NULL, 0);

        max = n > max ? n : max;
        v->wait_off[id + 1] = v->wait_off[id] + n;
    }
    if ((v->wait = xcalloc(v, (size_t)v->wait_off[v->nsteps], sizeof(int32_t))) == NULL ||
        (deps = xcalloc(v, (size_t)max, sizeof(*deps))) == NULL)
        return;
    for (int32_t id = 0; id < v->nsteps; id++) {
        int32_t t = v->step_tb[id], g0 = v->gtb0[v->tb_gpu[t]];
        int n = cs_tb_step_deps(v->tb[t], step_index(v, id), deps, max);

        for (int k = 0; k < n; k++)
            v->wait[v->wait_off[id] + k] = v->step0[g0 + deps[k].tb] + deps[k].step;
    }
    free(deps);
}

/* The nearest real (non-nop) step of id's tb before it (dir -1) or after it (dir 1), or -1. */
static int32_t near_real(const struct vctx *v, int32_t id, int dir)
{
    int32_t first = v->step0[v->step_tb[id]], end = v->step0[v->step_tb[id] + 1];

    for (int32_t p = id + dir; p >= first && p < end; p += dir)
        if (step_at(v, p)->type != CS_STEP_NOP)
            return p;
    return -1;
}

/* Kinds of wait, for naming a cycle. */
enum wait_kind { WAIT_PROGRAM = 1, WAIT_DEP, WAIT_RECV, WAIT_CREDIT };

struct hop {
    int32_t from, to; /* `from` waits for `to` */
    enum wait_kind kind;
    int32_t dep; /* WAIT_DEP: the step waited for, whose tb signals with step `to` */
};

/* Walk from a blocked step along what each step waits for until a step repeats: the waits go to
 * hops (*nh of them), the cycle starts at hop *start. 0, or -1 (cannot happen: a blocked step has
 * a blocked predecessor). */
static int find_cycle(struct vctx *v, int32_t *pos, struct hop *hops, int32_t *nh, int32_t *start)
{
    int32_t x = -1;

    for (int32_t id = 0; id < v->nsteps && x < 0; id++)
        if (v->indeg[id] > 0)
            x = id;
    for (*nh = 0;;) {
        struct hop h = {x, -1, WAIT_DEP, -1};

        pos[x] = *nh;
        for (int32_t k = v->wait_off[x]; k < v->wait_off[x + 1] && h.to < 0; k++)
            if (v->indeg[v->signal[v->wait[k]]] > 0) {
                h.dep = v->wait[k];
                h.to = v->signal[h.dep];
            }
        if (h.to < 0 && v->recv_from[x] >= 0 && v->indeg[v->recv_from[x]] > 0) {
            h.to = v->recv_from[x];
            h.kind = WAIT_RECV;
        } else if (h.to < 0 && v->credit_from[x] >= 0 && v->indeg[v->credit_from[x]] > 0) {
            h.to = v->credit_from[x];
            h.kind = WAIT_CREDIT;
        } else if (h.to < 0) {
            h.to = near_real(v, x, -1);
            h.kind = WAIT_PROGRAM;
        }
        if (h.to < 0)
            return -1;
        hops[(*nh)++] = h;
        if (pos[h.to] >= 0) {
            *start = pos[h.to];
            return 0;
        }
        x = h.to;
    }
}

/* Append hop h (waiting for step `to`, labelled b) to the cycle's message. */
static void append_hop(struct vctx *v, const struct hop *h, int32_t to, const char *b, FILE *fp)
{
    int32_t ft = v->step_tb[h->from];

    if (h->kind == WAIT_PROGRAM)
        fprintf(fp, ", which comes after %s in its tb", b);
    else if (h->kind == WAIT_DEP && to == h->dep)
        fprintf(fp, ", which depends on %s", b);
    else if (h->kind == WAIT_DEP)
        fprintf(fp, ", which depends on tb %d step %d, signalled by %s",
                v->tb[v->step_tb[h->dep]]->id, step_index(v, h->dep), b);
    else if (h->kind == WAIT_RECV)
        fprintf(fp, ", which receives on connection %d->%d channel %d from %s",
                v->tb_gpu[v->step_tb[to]], v->tb_gpu[ft], v->tb[ft]->chan, b);
    else
        fprintf(fp,
                ", which sends on connection %d->%d channel %d when all %d FIFO slots are in "
                "use until %s consumes",
                v->tb_gpu[ft], v->tb_gpu[v->step_tb[to]], v->tb[ft]->chan, CS_NCCL_STEPS, b);
}

static void report_cycle(struct vctx *v)
{
    int32_t *pos = xnone(v, (size_t)v->nsteps), nh = 0, start = 0;
    struct hop *hops = xcalloc(v, (size_t)v->nreal + 1, sizeof(*hops));
    char *msg = NULL, a[128], b[128];
    size_t len = 0;
    FILE *fp = open_memstream(&msg, &len);

    if (fp == NULL)
        v->oom = 1;
    if (v->oom || find_cycle(v, pos, hops, &nh, &start) != 0)
        goto out;
    fprintf(fp, "deadlock: %d of %d steps can never run; they wait in a cycle: %s",
            v->nreal - v->norder, v->nreal, step_name(v, hops[start].from, 1, a, sizeof(a)));
    for (int32_t h = start, shown = 0; h < nh; h++, shown++) {
        int32_t to = hops[h].to;

        if (shown == 24) {
            fprintf(fp, " ... (%d more waits) ... which waits for %s", nh - h,
                    step_name(v, hops[nh - 1].to, 1, b, sizeof(b)));
            break;
        }
        /* Fold a run of program-order waits into one. */
        while (hops[h].kind == WAIT_PROGRAM && h + 1 < nh && hops[h + 1].kind == WAIT_PROGRAM)
            to = hops[++h].to;
        append_hop(v, &hops[h], to, step_name(v, to, 1, b, sizeof(b)), fp);
    }
    if (fclose(fp) == 0)
        diag(v, FATAL, step_at(v, hops[start].from)->line, "%s", msg);
    else
        v->oom = 1;
    fp = NULL;
out:
    if (fp != NULL)
        fclose(fp);
    cs_free_each(3, pos, hops, msg);
}

/* Kahn's algorithm over the real steps, consuming indeg (unmet waits per step); writes the order
 * to out and returns its length (short of nreal when steps wait in a cycle). Without a stack,
 * breadth first from the lowest step number (out is the queue); with one (nreal entries), depth
 * first from the highest: one tb runs as far as it can before another starts. */
static int32_t topo_sort(struct vctx *v, int32_t *indeg, int32_t *out, int32_t *stack)
{
    int32_t *ready = stack != NULL ? stack : out, n = 0, head = 0, top = 0;

    for (int32_t id = 0; id < v->nsteps; id++)
        if (step_at(v, id)->type != CS_STEP_NOP && indeg[id] == 0)
            ready[top++] = id;
    while (stack != NULL ? top > 0 : head < top) {
        int32_t id = stack != NULL ? (out[n++] = stack[--top]) : out[head++];
        int32_t succ[3] = {v->send_to[id], near_real(v, id, 1), v->credit_to[id]};

        for (int32_t k = v->dep_off[id]; k < v->dep_off[id + 1]; k++)
            if (--indeg[v->dep_list[k]] == 0)
                ready[top++] = v->dep_list[k];
        for (int k = 0; k < 3; k++)
            if (succ[k] >= 0 && --indeg[succ[k]] == 0)
                ready[top++] = succ[k];
    }
    return stack != NULL ? n : top;
}

/* The step whose completion signals each step's passing (signal); a wait that none meets is a
 * deadlock. */
static void check_signals(struct vctx *v)
{
    char a[96];

    if ((v->signal = xcalloc(v, (size_t)v->nsteps, sizeof(int32_t))) == NULL)
        return;
    for (int32_t t = 0; t < v->ntbs; t++) {
        int32_t next = -1;

        for (int32_t id = v->step0[t + 1] - 1; id >= v->step0[t]; id--) {
            const struct cs_step *st = step_at(v, id);

            if (st->type != CS_STEP_NOP && st->hasdep)
                next = id;
            v->signal[id] = next;
        }
    }
    for (int32_t id = 0; id < v->nsteps; id++)
        for (int32_t k = v->wait_off[id]; k < v->wait_off[id + 1]; k++)
            if (v->signal[v->wait[k]] < 0)
                diag(v, FATAL, step_at(v, id)->line,
                     "deadlock: %s waits for tb %d step %d, which never signals (neither it nor "
                     "any later real step of tb %d has hasdep=\"1\")",
                     step_name(v, id, 0, a, sizeof(a)), v->tb[v->step_tb[v->wait[k]]]->id,
                     step_index(v, v->wait[k]), v->tb[v->step_tb[v->wait[k]]]->id);
}

/* Order the real steps so that every wait (program order, dependency, send before its matching
 * receive, FIFO slots freed) is met by an earlier step; report a cycle when there is none. */
static void check_deadlock(struct vctx *v)
{
    int32_t *fill = NULL, *indeg0 = NULL, *stack = NULL, *order2 = NULL;

    index_waits(v);
    if (!v->oom)
        check_signals(v);
    if (v->nfatal || v->oom ||
        (v->indeg = xcalloc(v, (size_t)v->nsteps, sizeof(int32_t))) == NULL ||
        (v->order = xcalloc(v, (size_t)v->nsteps, sizeof(int32_t))) == NULL ||
        (v->dep_off = xcalloc(v, (size_t)v->nsteps + 1, sizeof(int32_t))) == NULL)
        return;
    /* Each step waits for the real step before it, its dependencies' signals, its send and the
     * receive that frees its FIFO slots. */
    for (int32_t id = 0; id < v->nsteps; id++) {
        if (step_at(v, id)->type == CS_STEP_NOP)
            continue;
        for (int32_t k = v->wait_off[id]; k < v->wait_off[id + 1]; k++)
            v->dep_off[v->signal[v->wait[k]] + 1]++;
        v->indeg[id] = v->wait_off[id + 1] - v->wait_off[id] + (near_real(v, id, -1) >= 0) +
                       (v->recv_from[id] >= 0) + (v->credit_from[id] >= 0);
    }
    for (int32_t id = 0; id < v->nsteps; id++)
        v->dep_off[id + 1] += v->dep_off[id];
    if ((v->dep_list = xcalloc(v, (size_t)v->dep_off[v->nsteps], sizeof(int32_t))) == NULL ||
        (fill = xcalloc(v, (size_t)v->nsteps, sizeof(int32_t))) == NULL)
        goto out;
    memcpy(fill, v->dep_off, (size_t)v->nsteps * sizeof(int32_t));
    for (int32_t id = 0; id < v->nsteps; id++)
        for (int32_t k = v->wait_off[id]; k < v->wait_off[id + 1]; k++)
            v->dep_list[fill[v->signal[v->wait[k]]]++] = id;
    /* the second order serves the data check's race search only */
    if (!v->opts->structure_only) {
        if ((indeg0 = xcalloc(v, (size_t)v->nsteps, sizeof(int32_t))) == NULL)
            goto out;
        memcpy(indeg0, v->indeg, (size_t)v->nsteps * sizeof(int32_t));
    }
    free(fill);
    fill = NULL;
    v->norder = topo_sort(v, v->indeg, v->order, NULL);
    if (v->norder < v->nreal)
        report_cycle(v);
    else if (indeg0 != NULL && (order2 = xcalloc(v, (size_t)v->nreal, sizeof(int32_t))) != NULL &&
             (stack = xcalloc(v, (size_t)v->nreal, sizeof(int32_t))) != NULL) {
        int32_t n2 = topo_sort(v, indeg0, order2, stack);

        /* kept as each step's place (in indeg0's room, spent by the sort): an order costs the
         * data check no more room while the first execution runs */
        for (int32_t id = 0; id < v->nsteps; id++)
            indeg0[id] = -1;
        for (int32_t k = 0; k < n2; k++)
            indeg0[order2[k]] = k;
        v->pos2 = indeg0;
        indeg0 = NULL;
    }
out:
    cs_free_each(4, fill, indeg0, stack, order2);
}

/* ---- data: symbolic execution ------------------------------------------------------------- */

/* A value is a node of a DAG: a leaf (an input chunk of a rank) or the sum of two nodes. Copies
 * share nodes; every reduction makes one. A node's fingerprint is the sum over its leaves (with
 * multiplicity) of a 128-bit hash of each leaf, so two values are equal as multisets exactly when
 * their fingerprints and sizes are, up to a 2^-128 chance; the multiset itself is rebuilt from the
 * DAG only to explain an error. The leaves are the ids after POISON, input chunk k of rank r at
 * POISON + 1 + r x in_n + k, and are not stored (their fingerprint is their hash); the sums follow
 * them, stored in 28 bytes each: the symbolic execution's memory is about that per reduction,
 * 16 bytes per chunk of the buffers and 12 per step. */
struct node {
    uint64_t h1, h2; /* fingerprint */
    uint32_t a, b;   /* the two operands (smaller node ids) */
    uint32_t n;      /* number of leaves, with multiplicity (saturating) */
} __attribute__((packed));

#define UNSET 0u  /* a slot never written */
#define POISON 1u /* a value computed from an unset slot (already reported) */

/* The output chunks' final values of one execution (rank-major), for the second execution to
 * compare its own with. */
struct outvals {
    uint64_t *h;     /* a digest of its fingerprint and leaves (value_digest), when a value */
    int32_t *writer; /* last step that wrote it, -1 for none */
    uint8_t *state;  /* OUT_UNSET, OUT_POISON or OUT_VALUE, | OUT_RIGHT when it is what the
                      * collective requires */
};

enum { OUT_UNSET, OUT_POISON, OUT_VALUE, OUT_RIGHT = 4 };

struct dctx {
    struct vctx *v;
    int quiet;                 /* report nothing but a difference with ref: the second execution */
    struct outvals *rec;       /* the first execution records its output chunks here */
    const struct outvals *ref; /* the second compares its own with these */
    uint64_t *colsum;          /* per input chunk: fingerprint of its sum over all ranks (h1, h2) */
    const struct cs_sched *sc;
    int inplace;
    const char *mode; /* "" or " (in-place call)" / " (out-of-place call)" */
    int N, C, in_n, out_n;
    uint32_t sum0;       /* the first sum's id: POISON + 1 + the leaves */
    struct node *nodes;  /* the sums, from id sum0 */
    uint32_t nnodes;     /* ids in use, leaves included */
    uint32_t cap_nodes;  /* sums the array holds */
    long *base;          /* per (buffer - 1, rank), rank fastest: its first chunk in val and wr */
    uint32_t *val;       /* node id per chunk */
    int32_t *wr;         /* last writer step per chunk, -1 for the initial input */
    const int32_t *pos2; /* per step: its place in the second order (NULL: no race search) */
    int32_t *rdr;       /* per chunk: since its last write, the reader latest in the second order */
    uint32_t *prev;     /* per chunk: its value before the last write (with pos2) */
    int32_t race_step;  /* the step being executed has reported a race (one per step) */
    uint32_t *sent_off; /* per step: where its values start in sent, when it sends */
    uint32_t *sent;     /* the values each send put on its connection, in order */
    uint64_t *mult;     /* scratch for rebuilding a multiset */
    int warned_input;
};

/* The chunks per rank of the input and output buffers the runtime gives the collective. */
static void coll_chunks(const struct cs_sched *sc, int *in_n, int *out_n)
{
    int N = sc->nchunksperloop, C = N / sc->ngpus;

    *in_n = sc->coll == CS_COLL_ALLGATHER ? C : N;
    *out_n = sc->coll == CS_COLL_REDUCE_SCATTER ? C : N;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void leaf_hash(uint32_t rank, uint32_t chunk, uint64_t *h1, uint64_t *h2)
{
    uint64_t k = (uint64_t)rank << 32 | chunk;

    *h1 = mix64(k ^ 0x243f6a8885a308d3ULL);
    *h2 = mix64(mix64(k) ^ 0x13198a2e03707344ULL);
}

/* One word for a value's fingerprint and leaf count, all the second execution compares an
 * output with: two values that differ share it with odds of about 2^-64, and every output
 * the first execution finds wrong is reported from the whole fingerprint. */
static uint64_t value_digest(uint64_t h1, uint64_t h2, uint32_t n)
{
    return mix64(h1 ^ mix64(h2 ^ ((uint64_t)n << 32 | n)));
}

/* The id of input chunk `chunk` of rank `rank`. */
static uint32_t leaf_id(const struct dctx *d, int rank, long chunk)
{
    return POISON + 1 + (uint32_t)rank * (uint32_t)d->in_n + (uint32_t)chunk;
}

/* The fingerprint and leaf count of value id (> POISON). */
static void fingerprint(const struct dctx *d, uint32_t id, uint64_t *h1, uint64_t *h2, uint32_t *n)
{
    if (id < d->sum0) {
        uint32_t k = id - (POISON + 1);

        leaf_hash(k / (uint32_t)d->in_n, k % (uint32_t)d->in_n, h1, h2);
        *n = 1;
    } else {
        const struct node *x = &d->nodes[id - d->sum0];

        *h1 = x->h1;
        *h2 = x->h2;
        *n = x->n;
    }
}

static uint32_t make_sum(struct dctx *d, uint32_t a, uint32_t b)
{
    uint64_t p1, p2, q1, q2;
    uint32_t pn, qn, k;

    if (a <= POISON || b <= POISON)
        return POISON;
    k = d->nnodes - d->sum0;
    if (k == d->cap_nodes) {
        uint32_t ncap = d->cap_nodes ? 2 * d->cap_nodes : 1024;
        struct node *nn;

        if (ncap < d->cap_nodes || ncap > UINT32_MAX - d->sum0 ||
            (nn = realloc(d->nodes, (size_t)ncap * sizeof(*nn))) == NULL) {
            d->v->oom = 1;
            return POISON;
        }
        d->nodes = nn;
        d->cap_nodes = ncap;
    }
    fingerprint(d, a, &p1, &p2, &pn);
    fingerprint(d, b, &q1, &q2, &qn);
    d->nodes[k] = (struct node){
        .h1 = p1 + q1, .h2 = p2 + q2, .a = a, .b = b, .n = pn + qn < pn ? UINT32_MAX : pn + qn};
    return d->nnodes++;
}

static long logical_size(const struct dctx *d, int rank, enum cs_buf b)
{
    return b == CS_BUF_INPUT ? d->in_n : b == CS_BUF_OUTPUT ? d->out_n : d->v->gpu[rank]->s_chunks;
}

/* The index in val and wr of chunk `off` of buffer b on rank, after in-place aliasing; -1 when
 * the runtime buffer has no such chunk. */
static long slot(const struct dctx *d, int rank, enum cs_buf b, long off)
{
    enum cs_coll coll = d->sc->coll;
    int phys = b - 1;
    long idx = off;

    if (b < CS_BUF_INPUT || b > CS_BUF_SCRATCH || off < 0 || off >= logical_size(d, rank, b))
        return -1;
    if (d->inplace && b == CS_BUF_INPUT && coll == CS_COLL_ALLGATHER) {
        phys = CS_BUF_OUTPUT - 1;
        idx = (long)rank * d->C + off;
    } else if (d->inplace && b == CS_BUF_OUTPUT && coll != CS_COLL_ALLGATHER) {
        phys = CS_BUF_INPUT - 1;
        if (coll == CS_COLL_REDUCE_SCATTER)
            idx = (long)rank * d->C + off;
    }
    return d->base[phys * d->sc->ngpus + rank] + idx;
}

/* What a step found wrong, reported once per step: how many reads of never written chunks, reads
 * and writes outside the runtime's buffers, and the first offset of each. */
enum { T_UNSET, T_READ, T_WRITE };

struct step_trouble {
    int n[3];
    long first[3];
    enum cs_buf unset_buf;
};

static void trouble(struct step_trouble *tr, int what, long off)
{
    if (tr->n[what]++ == 0)
        tr->first[what] = off;
}

static void race_check(struct dctx *d, int32_t id, long i, enum cs_buf b, long off, int writes,
                       uint32_t nv);

static uint32_t load(struct dctx *d, int rank, enum cs_buf b, long off, struct step_trouble *tr,
                     int32_t id)
{
    long i = slot(d, rank, b, off);

    if (i >= 0)
        race_check(d, id, i, b, off, 0, UNSET);
    if (i >= 0 && d->val[i] != UNSET)
        return d->val[i];
    if (i >= 0 && tr->n[T_UNSET] == 0)
        tr->unset_buf = b;
    trouble(tr, i < 0 ? T_READ : T_UNSET, off);
    return POISON;
}

static void store(struct dctx *d, int rank, enum cs_buf b, long off, uint32_t val, int32_t id,
                  struct step_trouble *tr)
{
    long i = slot(d, rank, b, off);

    if (i < 0) {
        trouble(tr, T_WRITE, off);
        return;
    }
    race_check(d, id, i, b, off, 1, val);
    d->val[i] = val;
    d->wr[i] = id;
}

/* Two steps touch one chunk, one of them writing, and no wait orders them: the two orders of
 * check_data run them in opposite orders. `first` ran first in the order executed and wrote
 * (first_writes) or read it; `second` wrote or read it after. Reported at the writer's line with
 * the other step and the dependency that would order them (a read waits for the write; two
 * writes, or a write after a read, may be meant either way round), once per step. */
static void report_race(struct dctx *d, int32_t first, int first_writes, int32_t second,
                        int second_writes, enum cs_buf b, long off)
{
    struct vctx *v = d->v;
    int32_t writer = first_writes ? first : second, other = writer == first ? second : first;
    int other_writes = other == first ? first_writes : second_writes;
    int rank = v->tb_gpu[v->step_tb[first]], ftb = v->tb[v->step_tb[first]]->id;
    int stb = v->tb[v->step_tb[second]]->id, fs = step_index(v, first), ss = step_index(v, second);
    char wn[128], on[128], fix[384];

    v->res->nraces++;
    d->race_step = second;
    if (second_writes)
        snprintf(fix, sizeof(fix),
                 "one must wait for the other: depid=\"%d\" deps=\"%d\" on rank %d tb %d step %d "
                 "to run it after, or depid=\"%d\" deps=\"%d\" on rank %d tb %d step %d to run it "
                 "before (hasdep=\"1\" on the step waited for)",
                 ftb, fs, rank, stb, ss, stb, ss, rank, ftb, fs);
    else
        snprintf(fix, sizeof(fix),
                 "rank %d tb %d step %d must wait for the write: depid=\"%d\" deps=\"%d\" on it%s",
                 rank, stb, ss, ftb, fs,
                 step_at(v, first)->hasdep ? "" : ", and hasdep=\"1\" on the writing step");
    diag(v, DERROR, step_at(v, writer)->line,
         "race on rank %d %s chunk %ld%s: %s writes it and %s %s, but no wait orders them (they "
         "run in either order); missing dependency: %s (on a nop just before the waiting step if "
         "it has a dependency already)",
         rank, buf_name(b), off, d->mode, step_name(v, writer, 1, wn, sizeof(wn)),
         step_name(v, other, 1, on, sizeof(on)), other_writes ? "writes it too" : "reads it", fix);
}

/* Whether two values are the same multiset of input chunks. */
static int same_value(const struct dctx *d, uint32_t a, uint32_t b)
{
    uint64_t x1, x2, y1, y2;
    uint32_t xn, yn;

    if (a == b)
        return 1;
    if (a <= POISON || b <= POISON)
        return 0;
    fingerprint(d, a, &x1, &x2, &xn);
    fingerprint(d, b, &y1, &y2, &yn);
    return x1 == y1 && x2 == y2 && xn == yn;
}

/* Step id reads (writes == 0) or writes (the value nv) chunk slot i of buffer b (chunk off): a
 * race with the chunk's last writer, or for a write with a reader since, when the second order
 * runs the two the other way round and the value seen or left would differ (a write of the value
 * already there is harmless). */
static void race_check(struct dctx *d, int32_t id, long i, enum cs_buf b, long off, int writes,
                       uint32_t nv)
{
    struct vctx *v = d->v;
    int32_t w, r;
    uint32_t old;

    if (d->pos2 == NULL)
        return;
    w = d->wr[i];
    r = d->rdr[i];
    old = d->val[i];
    if (d->race_step != id) {
        int changes = writes ? !same_value(d, old, nv) : !same_value(d, d->prev[i], old);

        if (changes && w >= 0 && v->step_tb[w] != v->step_tb[id] && d->pos2[id] < d->pos2[w])
            report_race(d, w, 1, id, writes, b, off);
        else if (changes && writes && r >= 0 && v->step_tb[r] != v->step_tb[id] &&
                 d->pos2[id] < d->pos2[r])
            report_race(d, r, 0, id, 1, b, off);
    }
    if (writes) {
        d->rdr[i] = -1;
        d->prev[i] = old;
    } else if (r < 0 || d->pos2[id] > d->pos2[r]) {
        d->rdr[i] = id;
    }
}

static void exec_step(struct dctx *d, int32_t id)
{
    struct vctx *v = d->v;
    const struct cs_step *st = step_at(v, id);
    int rank = v->tb_gpu[v->step_tb[id]];
    struct step_trouble tr = {.n = {0}};
    enum cs_buf oob_buf[] = {[T_READ] = st->srcbuf, [T_WRITE] = st->dstbuf};

    for (long k = 0; k < st->cnt; k++) {
        long so = st->srcoff + k, dof = st->dstoff + k;
        uint32_t x = UNSET;

        if (st->type == CS_STEP_RE) {
            uint32_t old = load(d, rank, st->dstbuf, dof, &tr, id);

            x = make_sum(d, old, load(d, rank, st->srcbuf, so, &tr, id));
        } else if (cs_step_reads_src(st->type)) {
            x = load(d, rank, st->srcbuf, so, &tr, id);
        }
        /* The topological order runs each send before its matching receive. */
        if (cs_step_recvs(st->type)) {
            uint32_t r = d->sent[d->sent_off[v->recv_from[id]] + k];

            x = cs_step_reduces(st->type) ? make_sum(d, x, r) : r;
        }
        if (cs_step_writes_dst(st->type))
            store(d, rank, st->dstbuf, dof, x, id, &tr);
        if (cs_step_sends(st->type))
            d->sent[d->sent_off[id] + k] = x;
        if (!d->quiet && !d->inplace && !d->warned_input && st->dstbuf == CS_BUF_INPUT &&
            cs_step_writes_dst(st->type)) {
            d->warned_input = 1;
            step_diag(v, DWARN, id,
                      " writes input chunk %ld%s: NCCL's send buffer is const in an out-of-place "
                      "call",
                      dof, d->mode);
        }
    }
    if (d->quiet)
        return;
    v->res->nbad_accesses += (tr.n[T_UNSET] > 0) + (tr.n[T_READ] > 0) + (tr.n[T_WRITE] > 0);
    if (tr.n[T_UNSET])
        step_diag(v, DERROR, id, " reads %s chunk %ld%s, which was never written%s%s",
                  buf_name(tr.unset_buf), tr.first[T_UNSET],
                  tr.n[T_UNSET] > 1 ? " (and more of its chunks)" : "",
                  tr.unset_buf == CS_BUF_INPUT ? "" : " (uninitialised)", d->mode);
    for (int w = T_READ; w <= T_WRITE; w++)
        if (tr.n[w])
            step_diag(v, DERROR, id,
                      " %s %s chunk %ld, outside the runtime's %ld-chunk %s buffer%s",
                      w == T_READ ? "reads" : "writes", buf_name(oob_buf[w]), tr.first[w],
                      logical_size(d, rank, oob_buf[w]), buf_name(oob_buf[w]), d->mode);
}

struct term {
    uint32_t rank, chunk;
    uint64_t mult;
};

static int cmp_term(const void *pa, const void *pb)
{
    const struct term *a = pa, *b = pb;

    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->chunk < b->chunk ? -1 : a->chunk > b->chunk;
}

/* The multiset a node stands for, sorted by (rank, chunk). Caller frees; NULL on OOM. */
static struct term *expand(struct dctx *d, uint32_t root, int *nterms)
{
    struct term *terms = NULL, *tm;
    int n = 0, cap = 0;

    if (d->mult == NULL && (d->mult = calloc(d->nnodes, sizeof(*d->mult))) == NULL)
        return NULL;
    d->mult[root] = 1;
    /* Operands have smaller ids than their sums: one pass down the ids propagates counts. */
    for (uint32_t id = root + 1; id-- > POISON + 1;) {
        uint64_t m = d->mult[id];

        if (m == 0)
            continue;
        d->mult[id] = 0;
        if (id >= d->sum0) {
            d->mult[d->nodes[id - d->sum0].a] += m;
            d->mult[d->nodes[id - d->sum0].b] += m;
            continue;
        }
        if ((tm = cs_array_slot((void **)&terms, n++, &cap, sizeof(*tm))) == NULL) {
            free(terms);
            return NULL;
        }
        *tm = (struct term){(id - (POISON + 1)) / (uint32_t)d->in_n,
                            (id - (POISON + 1)) % (uint32_t)d->in_n, m};
    }
    if (n > 0)
        qsort(terms, (size_t)n, sizeof(*terms), cmp_term);
    *nterms = n;
    return terms;
}

/* Say how a sum differs from that of input chunk `chunk` of every rank, each once. */
static void describe_errors(struct dctx *d, const struct term *t, int nt, long chunk, FILE *fp)
{
    int G = d->sc->ngpus, nmissing = 0, ndup = 0, nforeign = 0;
    char *seen = calloc((size_t)G, 1);

    if (seen == NULL)
        return;
    for (int k = 0; k < nt; k++)
        if ((long)t[k].chunk == chunk && t[k].rank < (uint32_t)G)
            seen[t[k].rank] = 1;
    for (int k = 0; k < nt; k++)
        if ((long)t[k].chunk == chunk && t[k].rank < (uint32_t)G && t[k].mult > 1 && ndup++ < 8)
            fprintf(fp, "%s rank %u", ndup > 1 ? "," : "; counted more than once:", t[k].rank);
    for (int k = 0; k < nt; k++)
        if (((long)t[k].chunk != chunk || t[k].rank >= (uint32_t)G) && nforeign++ < 8)
            fprintf(fp, "%s rank %u chunk %u",
                    nforeign > 1 ? "," : "; not belonging here:", t[k].rank, t[k].chunk);
    for (int r = 0; r < G; r++)
        nmissing += !seen[r];
    for (int r = 0, listed = 0; r < G && listed < 8; r++)
        if (!seen[r])
            fprintf(fp, "%s %d",
                    listed++       ? ","
                    : nmissing > 1 ? "; missing ranks"
                                   : "; missing rank",
                    r);
    if (ndup > 8 || nforeign > 8 || nmissing > 8)
        fprintf(fp, " (lists cut at 8)");
    free(seen);
}

/* Describe a value and, for a reduction, how it differs from the sum of input chunk `chunk` of
 * every rank (chunk < 0: a single expected leaf, nothing more to say). */
static void describe(struct dctx *d, uint32_t val, long chunk, FILE *fp)
{
    struct term *t;
    int nt;
    uint64_t total = 0;

    if (val <= POISON) {
        fputs(val == UNSET ? "nothing (never written)"
                           : "a value computed from uninitialised chunks (reported above)",
              fp);
        return;
    }
    if ((t = expand(d, val, &nt)) == NULL) {
        uint64_t h1, h2;
        uint32_t n;

        fingerprint(d, val, &h1, &h2, &n);
        fprintf(fp, "a value of %llu terms", (unsigned long long)n);
        return;
    }
    for (int k = 0; k < nt; k++)
        total += t[k].mult;
    if (nt == 1 && t[0].mult == 1) {
        fprintf(fp, "input chunk %u of rank %u", t[0].chunk, t[0].rank);
    } else {
        fprintf(fp, "a sum of %llu terms:", (unsigned long long)total);
        for (int k = 0; k < nt && k < 8; k++) {
            fprintf(fp, "%s rank %u chunk %u", k ? "," : "", t[k].rank, t[k].chunk);
            if (t[k].mult > 1)
                fprintf(fp, " x%llu", (unsigned long long)t[k].mult);
        }
        if (nt > 8)
            fprintf(fp, ", ...");
    }
    if (chunk >= 0)
        describe_errors(d, t, nt, chunk, fp);
    free(t);
}

/* What output chunk k of rank r must hold: the sum of input chunk `sumchunk` of every rank, or
 * input chunk src_chunk of rank src_rank; with the hashes and term count of that value. */
struct expect {
    long sumchunk, src_rank, src_chunk;
    uint64_t h1, h2, n;
};

/* The expected value of output chunk k of rank r (the collective is not custom). */
static void expected(const struct dctx *d, int r, long k, struct expect *x)
{
    enum cs_coll coll = d->sc->coll;

    *x = (struct expect){-1, -1, -1, 0, 0, 0};
    if (coll == CS_COLL_ALLREDUCE || coll == CS_COLL_REDUCE_SCATTER) {
        x->sumchunk = (coll == CS_COLL_REDUCE_SCATTER ? (long)r * d->C : 0) + k;
        x->h1 = d->colsum[2 * x->sumchunk];
        x->h2 = d->colsum[2 * x->sumchunk + 1];
        x->n = (uint64_t)d->sc->ngpus;
    } else { /* allgather, alltoall */
        x->src_rank = k / d->C;
        x->src_chunk = (coll == CS_COLL_ALLTOALL ? (long)r * d->C : 0) + k % d->C;
        leaf_hash((uint32_t)x->src_rank, (uint32_t)x->src_chunk, &x->h1, &x->h2);
        x->n = 1;
    }
}

/* " (last written by STEP)", or "" for no step (w < 0). */
static const char *written_by(const struct vctx *v, int32_t w, char *buf, size_t len)
{
    char a[128];

    if (w < 0)
        return "";
    snprintf(buf, len, " (last written by %s)", step_name(v, w, 1, a, sizeof(a)));
    return buf;
}

/* The diagnostic of a wrong output chunk: what it should hold, what it holds, who wrote it. */
static void report_wrong(struct dctx *d, int r, long k, uint32_t val, int32_t w,
                         const struct expect *x)
{
    struct vctx *v = d->v;
    char a[160], *msg = NULL;
    size_t len = 0;
    FILE *fp;
    int line = w >= 0 ? step_at(v, w)->line : v->gpu[r]->line;

    v->res->nwrong_outputs++;
    /* The explanation is expensive: skipped when the diagnostic will not be kept. */
    if (v->res->ndiags >= v->max_diags) {
        diag(v, DERROR, line, "rank %d output chunk %ld", r, k);
        return;
    }
    if ((fp = open_memstream(&msg, &len)) == NULL) {
        v->oom = 1;
        return;
    }
    fprintf(fp, "rank %d output chunk %ld is wrong%s: expected ", r, k, d->mode);
    if (x->sumchunk >= 0)
        fprintf(fp, "the sum of input chunk %ld of all %d ranks, each once; found ", x->sumchunk,
                d->sc->ngpus);
    else
        fprintf(fp, "input chunk %ld of rank %ld; found ", x->src_chunk, x->src_rank);
    describe(d, val, x->sumchunk, fp);
    fputs(w < 0 && val > POISON ? " (the initial input, never overwritten)"
                                : written_by(v, w, a, sizeof(a)),
          fp);
    if (fclose(fp) == 0)
        diag(v, DERROR, line, "%s", msg);
    else
        v->oom = 1;
    free(msg);
}

static const char *outval_words(uint8_t state)
{
    return (state & 3) == OUT_UNSET    ? "is never written"
           : (state & 3) == OUT_POISON ? "holds a value computed from uninitialised chunks"
           : state & OUT_RIGHT         ? "holds the right value"
                                       : "holds a wrong value";
}

/* Output chunk i (rank r, chunk k) holds value val written by w in the second execution, with
 * state y, where the first left what d->ref holds: a difference is a missing dependency. */
static void compare_output(struct dctx *d, size_t i, int r, long k, uint32_t val, int32_t w,
                           uint8_t y)
{
    struct vctx *v = d->v;
    const struct outvals *ref = d->ref;
    uint8_t x = ref->state[i];
    int32_t xw = ref->writer[i], bad = x & OUT_RIGHT ? w : xw;
    char wa[160], wb[160];

    if ((x & 3) == (y & 3)) {
        uint64_t h1, h2;
        uint32_t n;

        /* Equal values from different writers are a harmless race: not reported. */
        if ((x & 3) != OUT_VALUE)
            return;
        fingerprint(d, val, &h1, &h2, &n);
        if (ref->h[i] == value_digest(h1, h2, n))
            return;
    }
    v->res->norder_outputs++;
    diag(v, DERROR, bad >= 0 ? step_at(v, bad)->line : v->gpu[r]->line,
         "rank %d output chunk %ld depends on the order of execution%s, a missing "
         "dependency: in one order that meets every wait it %s%s, in another it %s%s",
         r, k, d->mode, outval_words(x), written_by(v, xw, wa, sizeof(wa)), outval_words(y),
         written_by(v, w, wb, sizeof(wb)));
}

/* Compare every output chunk with what the collective must leave there: the first execution
 * reports the wrong ones and records them all in d->rec, the second reports where it differs
 * from d->ref. */
static void check_outputs(struct dctx *d)
{
    for (int r = 0; r < d->sc->ngpus; r++) {
        for (long k = 0; k < d->out_n && !d->v->oom; k++) {
            long i = slot(d, r, CS_BUF_OUTPUT, k);
            size_t o = (size_t)r * (size_t)d->out_n + (size_t)k;
            uint32_t val = d->val[i];
            uint64_t h1 = 0, h2 = 0;
            uint32_t n = 0;
            uint8_t state = val == UNSET ? OUT_UNSET : val == POISON ? OUT_POISON : OUT_VALUE;
            struct expect x;

            expected(d, r, k, &x);
            if (state == OUT_VALUE)
                fingerprint(d, val, &h1, &h2, &n);
            if (state == OUT_VALUE && h1 == x.h1 && h2 == x.h2 && n == x.n)
                state |= OUT_RIGHT;
            if (d->rec != NULL) {
                d->rec->h[o] = value_digest(h1, h2, n);
                d->rec->writer[o] = d->wr[i];
                d->rec->state[o] = state;
            }
            if (!(state & OUT_RIGHT) && !d->quiet)
                report_wrong(d, r, k, val, d->wr[i], &x);
            if (d->ref != NULL)
                compare_output(d, o, r, k, val, d->wr[i], state);
        }
    }
}

/* The chunks buffer b of rank takes in val and wr: its logical size, or none when the call's
 * in-place aliasing puts it inside another buffer (slot). */
static long phys_size(const struct dctx *d, int rank, enum cs_buf b)
{
    enum cs_coll coll = d->sc->coll;

    if (d->inplace && ((b == CS_BUF_INPUT && coll == CS_COLL_ALLGATHER) ||
                       (b == CS_BUF_OUTPUT && coll != CS_COLL_ALLGATHER)))
        return 0;
    return logical_size(d, rank, b);
}

/* Execute the steps in `order` for an in-place or out-of-place call, then check the outputs:
 * the first execution (rec) reports and records them, the second (quiet, ref) compares. */
static void run_data(struct vctx *v, int inplace, const char *mode, const int32_t *order, int quiet,
                     struct outvals *rec, const struct outvals *ref)
{
    const struct cs_sched *sc = v->sc;
    struct dctx d = {
        .v = v, .sc = sc, .inplace = inplace, .mode = mode, .quiet = quiet, .rec = rec, .ref = ref};
    int G = sc->ngpus;
    uint64_t nsent = 0;

    d.race_step = -1;

    d.N = sc->nchunksperloop;
    d.C = d.N / G;
    coll_chunks(sc, &d.in_n, &d.out_n);
    if ((uint64_t)G * (uint64_t)(d.in_n > 0 ? d.in_n : 0) >= UINT32_MAX / 2) {
        v->oom = 1; /* more input chunks than value ids */
        return;
    }
    d.sum0 = d.nnodes = POISON + 1 + (uint32_t)G * (uint32_t)d.in_n;
    if ((d.base = xcalloc(v, 3 * (size_t)G + 1, sizeof(long))) == NULL ||
        (d.sent_off = xcalloc(v, (size_t)v->nsteps + 1, sizeof(uint32_t))) == NULL)
        goto out;
    for (int i = 0; i < 3 * G; i++)
        d.base[i + 1] = d.base[i] + phys_size(&d, i % G, (enum cs_buf)(i / G + 1));
    for (int32_t id = 0; id < v->nsteps; id++) {
        nsent += cs_step_sends(step_at(v, id)->type) ? (uint64_t)step_at(v, id)->cnt : 0;
        if (nsent > UINT32_MAX) {
            v->oom = 1; /* more values in flight than the offsets count */
            goto out;
        }
        d.sent_off[id + 1] = (uint32_t)nsent;
    }
    if ((d.val = xcalloc(v, (size_t)d.base[3 * G], sizeof(uint32_t))) == NULL ||
        (d.wr = xnone(v, (size_t)d.base[3 * G])) == NULL ||
        (d.sent = xcalloc(v, (size_t)nsent, sizeof(uint32_t))) == NULL ||
        (d.colsum = xcalloc(v, 2 * (size_t)d.N, sizeof(uint64_t))) == NULL)
        goto out;
    /* Races: accesses the second order runs the other way round (check_data's first run). */
    if (!quiet && v->pos2 != NULL) {
        d.pos2 = v->pos2;
        if ((d.rdr = xnone(v, (size_t)d.base[3 * G])) == NULL ||
            (d.prev = xcalloc(v, (size_t)d.base[3 * G], sizeof(uint32_t))) == NULL)
            goto out;
    }
    for (long c = 0; c < d.N; c++)
        for (int r = 0; r < G; r++) {
            uint64_t h1, h2;

            leaf_hash((uint32_t)r, (uint32_t)c, &h1, &h2);
            d.colsum[2 * c] += h1;
            d.colsum[2 * c + 1] += h2;
        }
    for (int r = 0; r < G; r++)
        for (long k = 0; k < d.in_n; k++)
            d.val[slot(&d, r, CS_BUF_INPUT, k)] = leaf_id(&d, r, k);
    for (int32_t k = 0; k < v->norder && !v->oom; k++)
        exec_step(&d, order[k]);
    if (!v->oom)
        check_outputs(&d);
out:
    cs_free_each(10, d.sent_off, d.sent, d.nodes, d.mult, d.colsum, d.base, d.val, d.wr, d.rdr,
                 d.prev);
}

/* Execute the schedule in two orders that both respect every wait; outputs that differ betray a
 * missing dependency (a race), which one order alone could hide. */
static void check_data(struct vctx *v, int inplace, const char *mode)
{
    int in_n, out_n;
    size_t n;
    struct outvals a = {0};
    int32_t *order2 = NULL;

    coll_chunks(v->sc, &in_n, &out_n);
    n = (size_t)v->ngpus * (size_t)out_n;
    if ((a.h = xcalloc(v, n, sizeof(*a.h))) == NULL ||
        (a.writer = xcalloc(v, n, sizeof(*a.writer))) == NULL ||
        (a.state = xcalloc(v, n, sizeof(*a.state))) == NULL)
        goto out;
    run_data(v, inplace, mode, v->order, 0, &a, NULL);
    /* the second order, from each step's place in it (a sort of the same graph as the first:
     * norder steps too) */
    if (!v->oom && v->pos2 != NULL &&
        (order2 = xcalloc(v, (size_t)v->norder, sizeof(int32_t))) != NULL) {
        for (int32_t id = 0; id < v->nsteps; id++)
            if (v->pos2[id] >= 0)
                order2[v->pos2[id]] = id;
        run_data(v, inplace, mode, order2, 1, NULL, &a);
    }
out:
    cs_free_each(4, a.h, a.writer, a.state, order2);
}

/* Buffer sizes the runtime gives each collective, against what the gpus declare. */
static void check_sizes(struct vctx *v)
{
    const struct cs_sched *sc = v->sc;
    int N = sc->nchunksperloop, G = sc->ngpus, in_n, out_n;

    if (sc->coll != CS_COLL_ALLREDUCE && N % G != 0) {
        diag(v, NODATA, sc->line,
             "nchunksperloop=\"%d\" is not a multiple of ngpus=\"%d\": %s splits its buffers into "
             "one part per rank",
             N, G, cs_coll_name(sc->coll));
        return;
    }
    coll_chunks(sc, &in_n, &out_n);
    for (int g = 0; g < G; g++) {
        const struct cs_gpu *gpu = v->gpu[g];

        if (gpu->i_chunks > in_n || gpu->o_chunks > out_n)
            diag(v, NODATA, gpu->line,
                 "<gpu id=\"%d\">: i_chunks=\"%d\" o_chunks=\"%d\", but an %s of "
                 "nchunksperloop=\"%d\" has %d input and %d output chunks per rank",
                 g, gpu->i_chunks, gpu->o_chunks, cs_coll_name(sc->coll), N, in_n, out_n);
    }
}

/* ---- what a runtime loads ------------------------------------------------------------------ */

/* Tokenizer limits of the runtimes (msccl.md 1.1 and 2.4). */
#define EXEC_MAX_NODES 4096 /* tb and step nodes loaded per rank (MAX_NODES) */
#define LEGACY_MAX_TBS 216  /* tbs per GPU in the legacy runtime */

enum cs_verify_runtime cs_verify_runtime_parse(const char *name)
{
    return strcmp(name, "executor") == 0 ? CS_VERIFY_EXECUTOR
           : strcmp(name, "legacy") == 0 ? CS_VERIFY_LEGACY
                                         : CS_VERIFY_ANY;
}

void cs_verify_tokens_init(struct cs_verify_tokens *t)
{
    memset(t, 0, sizeof(*t));
    t->line = 1;
}

static void token_rule(struct cs_verify_tokens *t, int rule, int line)
{
    if (t->seen[rule]++)
        return;
    t->rule[t->n] = rule;
    t->at[t->n++] = line;
}

void cs_verify_tokens_feed(struct cs_verify_tokens *t, const char *piece, size_t n)
{
    static const char open[] = "<!--";

    for (size_t i = 0; i < n; i++) {
        char c = piece[i];

        if (c == '\n')
            t->line++;
        if (t->in_comment) { /* until "-->" */
            if (c == '>' && t->dashes >= 2)
                t->in_comment = 0;
            t->dashes = c == '-' ? t->dashes + 1 : 0;
            continue;
        }
        if (t->after_lt && c == '?')
            token_rule(t, 0, t->line);
        t->after_lt = 0;
        if (t->eq_line > 0 && c != ' ') {
            if (c == '\'')
                token_rule(t, 2, t->eq_line);
            t->eq_line = 0;
        }
        if (t->open > 0) { /* "<!--" opens a comment, not a tag */
            t->open = c == open[t->open] ? t->open + 1 : 0;
            if (t->open == 4) {
                t->open = t->in_tag = 0;
                t->in_comment = 1;
                t->dashes = 0;
                continue;
            }
        }
        if (c == '<' && !t->in_tag) {
            t->in_tag = t->after_lt = t->open = 1;
        } else if (c == '>') {
            t->in_tag = 0;
        } else if (t->in_tag && c == '\t') {
            token_rule(t, 1, t->line);
        } else if (t->in_tag && c == '=') {
            t->eq_line = t->line;
        }
    }
}

/* The tokenizer rules the file broke, in the order found. */
static void check_tokens(struct vctx *v)
{
    const struct cs_verify_tokens *t = v->opts->tokens;

    for (int k = 0; k < t->n; k++)
        diag(v, SERROR, t->at[k], "%s",
             t->rule[k] == 0
                 ? "an <?xml ... ?> declaration: the executor's parser (msccl_parser.h) "
                   "fails on it; remove the line"
             : t->rule[k] == 1 ? "a tab inside a tag: the executor's parser separates attributes "
                                 "by spaces only"
                               : "a single-quoted attribute value: the executor's parser reads "
                                 "double-quoted values only");
}

/* Required <algo> attributes, collective names and limits of the chosen runtime. */
static void check_runtime(struct vctx *v)
{
    const struct cs_sched *sc = v->sc;
    int exec = v->opts->runtime == CS_VERIFY_EXECUTOR;

    if (v->opts->runtime == CS_VERIFY_ANY)
        return;
    if (exec && (!sc->has_min_bytes || !sc->has_max_bytes || !sc->has_outofplace))
        diag(v, SERROR, sc->line,
             "<algo> lacks%s%s%s: the executor requires minBytes, maxBytes and outofplace "
             "(\"Attribute ... not found\"); `collsim tune` writes them",
             sc->has_min_bytes ? "" : " minBytes", sc->has_max_bytes ? "" : " maxBytes",
             sc->has_outofplace ? "" : " outofplace");
    if (!exec && sc->name == NULL)
        diag(v, SERROR, sc->line, "<algo> lacks name: the legacy runtime requires it");
    if (exec && (sc->coll == CS_COLL_CUSTOM ||
                 (sc->coll == CS_COLL_REDUCE_SCATTER && !sc->coll_exec_spelling)))
        diag(v, SERROR, sc->line,
             "coll=\"%s\": the executor refuses it (it reads reducescatter, not reduce_scatter, "
             "and has no custom collective)",
             sc->coll == CS_COLL_CUSTOM ? "custom" : "reduce_scatter");
    for (int g = 0; g < v->ngpus; g++) {
        const struct cs_gpu *gpu = v->gpu[g];
        long nodes = gpu->ntbs;

        for (int t = 0; t < gpu->ntbs; t++)
            nodes += gpu->tbs[t].nsteps;
        if (exec && nodes > EXEC_MAX_NODES)
            diag(v, SERROR, gpu->line,
                 "rank %d has %ld tb and step elements: the executor loads at most %d per rank "
                 "(MAX_NODES)",
                 g, nodes, EXEC_MAX_NODES);
        if (!exec && gpu->ntbs > LEGACY_MAX_TBS)
            diag(v, SERROR, gpu->line, "rank %d has %d tbs: the legacy runtime allows %d", g,
                 gpu->ntbs, LEGACY_MAX_TBS);
    }
    if (exec && v->opts->tokens != NULL)
        check_tokens(v);
}

int cs_verify_find_overfull(const struct cs_sched *sched, int from, int gpu_sms, int ctas_per_sm,
                            char *msg, size_t len)
{
    long resident = (long)gpu_sms * ctas_per_sm;

    for (int g = from < 0 ? 0 : from; g < sched->ngpus; g++) {
        const struct cs_gpu *gpu = &sched->gpus[g];

        if (gpu->ntbs <= resident)
            continue;
        snprintf(msg, len,
                 "gpu %d has %d threadblocks; at most %ld are co-resident on this GPU (%d SMs x "
                 "%d CTA%s per SM): the runtime would hang",
                 gpu->id, gpu->ntbs, resident, gpu_sms, ctas_per_sm, ctas_per_sm == 1 ? "" : "s");
        return g;
    }
    return -1;
}

/* Every GPU whose threadblocks cannot all be resident at once: the runtime would hang. */
static void check_residency(struct vctx *v)
{
    int sms = v->opts->gpu_sms ? v->opts->gpu_sms : CS_VERIFY_GPU_SMS;
    int per_sm = v->opts->ctas_per_sm > 0 ? v->opts->ctas_per_sm : CS_VERIFY_CTAS_PER_SM;
    char msg[256];

    if (sms < 0)
        return;
    for (int g = cs_verify_find_overfull(v->sc, 0, sms, per_sm, msg, sizeof(msg)); g >= 0;
         g = cs_verify_find_overfull(v->sc, g + 1, sms, per_sm, msg, sizeof(msg)))
        diag(v, SERROR, v->sc->gpus[g].line, "%s", msg);
}

/* Free the dependency graph, which the data check does not use: only the index, the matching of
 * receives to sends and the two orders stay. */
static void free_graph(struct vctx *v)
{
    int32_t **owned[] = {&v->send_to, &v->wait_off, &v->wait,        &v->signal,   &v->indeg,
                         &v->dep_off, &v->dep_list, &v->credit_from, &v->credit_to};

    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        free(*owned[i]);
        *owned[i] = NULL;
    }
}

/* Free the checker's index and graph; the result stays with the caller. */
static void vctx_cleanup(struct vctx *v)
{
    void *owned[] = {v->gpu,      v->gtb0,        v->tb,        v->tb_gpu,   v->step0,
                     v->step_tb,  v->send_to,     v->recv_from, v->wait_off, v->wait,
                     v->signal,   v->indeg,       v->order,     v->pos2,     v->dep_off,
                     v->dep_list, v->credit_from, v->credit_to};

    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        free(owned[i]);
}

int cs_verify_check(const struct cs_sched *sched, int max_diags, struct cs_verify_result **out)
{
    struct cs_verify_opts o = {.max_diags = max_diags, .runtime = CS_VERIFY_ANY};

    return cs_verify_check_opts(sched, &o, out);
}

/* cs_verify_check_opts; steps_what_if: a tb over the runtimes' steps is no error; npasses: the
 * passes to run, in order (NPASSES: all of them; one less leaves out the deadlock check). */
#define NPASSES 6
static int check_all(const struct cs_sched *sched, const struct cs_verify_opts *opts,
                     int steps_what_if, size_t npasses, struct cs_verify_result **out)
{
    static void (*const passes[NPASSES])(struct vctx *) = {
        build_index, check_tbs, check_runtime, check_residency, check_connections, check_deadlock};
    struct vctx v = {.sc = sched,
                     .opts = opts,
                     .steps_what_if = steps_what_if,
                     .max_diags = opts->max_diags > 0 ? opts->max_diags : CS_VERIFY_MAX_DIAGS};
    struct cs_verify_result *res = calloc(1, sizeof(*res));

    if (res == NULL)
        return CS_ERR_NOMEM;
    v.res = res;
    for (int i = 0; i < sched->nwarnings_kept; i++)
        diag(&v, WARN, sched->warnings[i].line, "%s", sched->warnings[i].msg);
    if (sched->nwarnings > sched->nwarnings_kept)
        diag(&v, WARN, sched->line, "%d more reader warnings (unknown attributes) not shown",
             sched->nwarnings - sched->nwarnings_kept);
    if (sched->coll == CS_COLL_CUSTOM)
        diag(&v, NOTE, sched->line, "coll=\"custom\" defines no result: structural checks only");
    /* Each pass needs its predecessors' structure intact. */
    for (size_t i = 0; i < npasses && i < NPASSES && !v.nfatal && !v.oom; i++)
        passes[i](&v);
    if (!v.nfatal && !v.oom && sched->coll != CS_COLL_CUSTOM) {
        check_sizes(&v);
        if (!v.nodata && !v.oom && !opts->structure_only) {
            int in = sched->inplace,
                out_ = !sched->inplace || (sched->has_outofplace && sched->outofplace);

            res->data_checked = 1;
            free_graph(&v);
            if (in)
                check_data(&v, 1, out_ ? " (in-place call)" : "");
            if (out_ && !v.oom)
                check_data(&v, 0, in ? " (out-of-place call)" : "");
        }
    }
    vctx_cleanup(&v);
    if (v.oom) {
        cs_verify_result_free(res);
        return CS_ERR_NOMEM;
    }
    res->verdict = res->nstructure_errors ? CS_VERIFY_INVALID
                   : res->ndata_errors    ? CS_VERIFY_WRONG
                                          : CS_VERIFY_OK;
    *out = res;
    return 0;
}

int cs_verify_check_opts(const struct cs_sched *sched, const struct cs_verify_opts *opts,
                         struct cs_verify_result **out)
{
    return check_all(sched, opts, 0, NPASSES, out);
}

void cs_verify_result_free(struct cs_verify_result *res)
{
    if (res == NULL)
        return;
    for (int i = 0; i < res->ndiags; i++)
        free(res->diags[i].msg);
    free(res->diags);
    free(res);
}

int cs_verify_result_add(struct cs_verify_result *res, enum cs_verify_severity severity,
                         enum cs_verify_class cls, int line, const char *msg)
{
    struct cs_verify_diag *d = realloc(res->diags, (size_t)(res->ndiags + 1) * sizeof(*d));

    if (d == NULL)
        return CS_ERR_NOMEM;
    res->diags = d;
    d += res->ndiags;
    if ((d->msg = strdup(msg)) == NULL)
        return CS_ERR_NOMEM;
    d->severity = severity;
    d->cls = cls;
    d->line = line;
    res->ndiags++;
    if (severity == CS_VERIFY_WARNING)
        res->nwarnings++;
    else if (severity == CS_VERIFY_ERROR && cls == CS_VERIFY_STRUCTURE)
        res->nstructure_errors++;
    else if (severity == CS_VERIFY_ERROR)
        res->ndata_errors++;
    res->verdict = res->nstructure_errors ? CS_VERIFY_INVALID
                   : res->ndata_errors    ? CS_VERIFY_WRONG
                                          : CS_VERIFY_OK;
    return 0;
}

/* Append ", N WHAT" (or " (N WHAT" for the first) when n > 0, WHAT plural unless n is 1. */
static void kind_words(FILE *fp, long n, const char *one, const char *many, int *first)
{
    if (n <= 0)
        return;
    fprintf(fp, "%s%ld %s", *first ? " (" : ", ", n, n == 1 ? one : many);
    *first = 0;
}

const char *cs_verify_summary(const struct cs_verify_result *res, char *buf, size_t len)
{
    FILE *fp = fmemopen(buf, len, "w");
    long other = res->ndata_errors - res->nwrong_outputs - res->nraces - res->norder_outputs -
                 res->nbad_accesses;
    int first = 1;

    if (fp == NULL) {
        snprintf(buf, len, "%ld structural and %ld data errors", res->nstructure_errors,
                 res->ndata_errors);
        return buf;
    }
    if (res->verdict == CS_VERIFY_INVALID) {
        fprintf(fp, "%ld structural error%s%s", res->nstructure_errors,
                res->nstructure_errors == 1 ? "" : "s",
                res->data_checked && res->ndata_errors ? " (and data errors)" : "");
    } else {
        fprintf(fp, "%ld data error%s", res->ndata_errors, res->ndata_errors == 1 ? "" : "s");
        kind_words(fp, res->nwrong_outputs, "wrong output chunk", "wrong output chunks", &first);
        kind_words(fp, res->nraces, "race between unordered steps", "races between unordered steps",
                   &first);
        kind_words(fp, res->norder_outputs, "output chunk that depends on the order of execution",
                   "output chunks that depend on the order of execution", &first);
        kind_words(fp, res->nbad_accesses, "read of unwritten data or access outside a buffer",
                   "reads of unwritten data or accesses outside a buffer", &first);
        kind_words(fp, other, "other, see the messages", "others, see the messages", &first);
        if (!first)
            fputc(')', fp);
    }
    fclose(fp);
    return buf;
}

/* Refuse a schedule that verify finds structurally invalid for another reason than a deadlock
 * (unmatched sends and receives, counts over the runtime's limit, chunks past a buffer): the
 * replay would time what the executor refuses. A static deadlock stays a prediction result, and
 * so does a GPU with more threadblocks than it keeps resident (a hang, on the platform's GPU). */
int cs_verify_refuse_invalid(const struct cs_sched *s, const char *name, struct cs_error *err)
{
    return cs_verify_refuse_invalid_steps(s, name, 0, err);
}

/* The refusal of both: structural errors other than a deadlock, and with data the data errors. */
static int refuse(const struct cs_sched *s, const char *name, int what_if, int data,
                  struct cs_error *err)
{
    struct cs_verify_result *vr = NULL;
    int rc = 0;

    /* Co-residency depends on the platform's GPU: cs_predict_run makes it a hang status. */
    struct cs_verify_opts o = {.runtime = CS_VERIFY_ANY, .gpu_sms = -1, .structure_only = !data};

    /* A deadlock is no refusal (the replay shows it), and the later passes' messages are data
     * notes: without the data check, the deadlock check (about 40 bytes a step) is left out. */
    if (check_all(s, &o, what_if, data ? NPASSES : NPASSES - 1, &vr) != 0)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory verifying %s", name);
    for (int k = 0; k < vr->ndiags && rc == 0; k++) {
        const struct cs_verify_diag *d = &vr->diags[k];

        if (d->severity == CS_VERIFY_ERROR && d->cls == CS_VERIFY_STRUCTURE &&
            strncmp(d->msg, "deadlock", 8) != 0)
            rc = cs_error_fail(err, CS_ERR_INVALID, name, d->line,
                               "%s (the executor would refuse this schedule; `collsim verify` "
                               "lists every problem)",
                               d->msg);
    }
    for (int k = 0; data && k < vr->ndiags && rc == 0; k++) {
        const struct cs_verify_diag *d = &vr->diags[k];

        if (d->severity == CS_VERIFY_ERROR && d->cls == CS_VERIFY_DATA)
            rc = cs_error_fail(err, CS_ERR_INVALID, name, d->line,
                               "%s (the schedule computes a wrong result; `collsim verify` lists "
                               "every problem)",
                               d->msg);
    }
    if (rc == 0 && data && vr->ndata_errors > 0) /* none of them kept */
        rc = cs_error_fail(err, CS_ERR_INVALID, name, 0,
                           "%ld data errors (the schedule computes a wrong result; `collsim "
                           "verify` lists them)",
                           vr->ndata_errors);
    cs_verify_result_free(vr);
    return rc;
}

int cs_verify_refuse_invalid_steps(const struct cs_sched *s, const char *name, int what_if,
                                   struct cs_error *err)
{
    return refuse(s, name, what_if, 0, err);
}

int cs_verify_refuse_wrong(const struct cs_sched *s, const char *name, int what_if,
                           struct cs_error *err)
{
    return refuse(s, name, what_if, 1, err);
}
