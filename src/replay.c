/* replay.c: the SimGrid replay of an execution plan: threadblocks as state machines driven by one
 * actor, 8-slot credit windows per directed connection, flags between threadblocks, protocol
 * costs, deadlock report.
 *
 * Timing model of one primitive call (DESIGN.md "Replay: the timing model"; the executor facts in
 * the shared reference runtime-audit.md):
 *  - the call moves in units (2 slices for Simple, 1 for LL/LL128); per unit a receiver waits
 *    for the unit's data, a sender takes slots (2 per Simple slice, 1 per LL/LL128 call) from
 *    the connection's window (CS_NCCL_STEPS; a network connection holds CS_NET_PROXY_DEPTH more,
 *    the proxy's), fused ops do both;
 *  - once its first unit has its data and its slots, a sending call pays cs.call_s.PROTO.CLASS
 *    (CLASS: the slowest link class on the route), what its protocol adds to LL's per-hop cost;
 *  - a unit's wire bytes (data x 2 LL, x 128/120 LL128), over cs.link_eff.PROTO.CLASS (the share
 *    of a link the protocol's stores get), go over the route as one SimGrid transfer whose rate
 *    is bounded by one CTA's, cs.tb_Bps.PROTO of data, so concurrent
 *    transfers share links max-min and a CTA-bound one leaves the rest to the others; the unit
 *    also takes at least its local memory traffic / cs.copy_Bps or cs.reduce_Bps;
 *  - each hop costs its latency once: cs.link_lat_s.CLASS of the route's class (NCCL's hwLat is a
 *    whole hop), however many links the route crosses (SimGrid's link latencies are set to 0);
 *  - LL and LL128 stream: the receiver polls each line's flag, a pass of its threads' lines at a
 *    time (cs.pass_bytes.PROTO of data, 0: line by line; prims_ll.h loops over the lines with
 *    offset += nthreads and a warp goes on when all its threads have their line), so it starts
 *    on a unit a hop latency and one pass (min(unit, pass_bytes) at the CTA's rate) after the
 *    sender started it and is done no earlier than that after the sender finished it (a
 *    forwarding chain costs a hop latency and a pass per hop plus the unit once; a unit within
 *    one pass is store-and-forward); Simple posts whole slices, so its receiver starts a hop
 *    latency after the slice was posted;
 *  - the receiver frees the slots when it has consumed the unit; the sender is never held back
 *    by a unit in flight, only by its slots and its own rate;
 *  - NCCL's own Simple kernels between GPUs of one process over P2P (nccl-tests -g) receive in
 *    place: the chunk's last receive waits for its data and copies nothing (in_place);
 *  - on the MSCCL executor (not NCCL's own kernels, gen nccl): each threadblock pays
 *    cs.prologue_s before its first step (its step table into shared memory), a transmission
 *    that waited on dependency flags cs.dep_s (the last poll) and cs.barrier_s (the block
 *    barrier), a hasdep step cs.barrier_s and cs.flag_s before its flag is seen (fence and
 *    store); its LL CTAs have 640 threads (NCCL's 512: a pass of 640 lines);
 *  - a CTA's rate is 1 / (1/cs.tb_Bps + cs.pass_s / cs.pass_bytes): its lines at the SM's rate
 *    and a fixed cost per pass (the poll round trip), which is also part of each hop's first
 *    pass;
 *  - cpy costs 2 x bytes / cs.copy_Bps, a fused re of n sources (n + 2) x bytes / cs.reduce_Bps;
 *  - a throughput parameter of 0 means unlimited (no cost);
 *  - the collective adds cs.launch_s + cs.deploy_s; a process driving cs.gpus_per_process GPUs
 *    starts the kernel of its k-th one k x cs.launch_gpu_s late (nccl-tests -g);
 *  - back to back (cs_replay_opts.back_to_back, asked by predict where one replay's GPUs end
 *    apart): nccl-tests times 20 collectives launched with no sync between them (calibration.md
 *    1.3), so a GPU whose part ended early starts its next kernel cs.launch_s after it, its
 *    connections as the last one left them; the time is nccl-tests' mean over the ranks of
 *    (cs.launch_s + the end of the 20th) / 20. Where every GPU ends together that is
 *    cs.launch_s + the makespan, as alone.
 * SimGrid keeps one engine per process whose clock never resets, so each replay runs in a forked
 * child (cs_replay_run) that pipes its result back.
 *
 * The engine: one SimGrid actor runs every threadblock, each a state machine (enum phase) that
 * goes on until it must wait: for FIFO credits or data (counters of its connections), a flag
 * (a list of waiters per threadblock), a timer (a cost, a hop latency, the CTA's pace; SimGrid's
 * kernel timers, at least SIM_PRECISION_S as SimGrid's own sleeps) or its transfer (SimGrid's
 * network model). Whoever ends the wait puts it back on the run queue; timers and transfers end
 * in SimGrid's kernel, which wakes the actor when it waits with nothing to run. The times are
 * those of one actor per threadblock, its former design; waits of no duration at an instant
 * where several threadblocks go on may be recorded differently (which of them ran first).
 * A direct replay (direct_ok) goes without SimGrid's engine: a heap of timers and transfer ends,
 * advanced as SimGrid's clock advances, and the max-min shares SimGrid's network model (CM02, no
 * cross traffic, no latency in the links) gives the transfers: a transfer alone on its links that
 * share moves at its route's slowest link or its own bound; where it meets others, the shares of
 * every transfer linked to it through such links are solved again by progressive filling, as
 * SimGrid's solver does (direct_solve), each transfer's bytes moved until then at its former
 * rate. The same times to the digit. It runs in a process of its own; where SimGrid's precision
 * would round a link's rest to nothing while others still wait for a share of it (a quirk not
 * copied), that process ends and the replay runs again on SimGrid's engine (simulate). */
#include "replay.h"

#include "fdio.h"
#include "fold.h"
#include "sgrate.h"
#include "util.h"
#include "xml.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/semaphore.h>
#include <simgrid/version.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xbt/config.h>
#include <xbt/dynar.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

/* --- validation (parent side, before anything reaches SimGrid) --- */

struct conn_key {
    int src, dst, chan;
};

static int key_cmp(const void *a, const void *b)
{
    const struct conn_key *x = a, *y = b;
    int xs[] = {x->src, x->dst, x->chan}, ys[] = {y->src, y->dst, y->chan};

    return cs_cmp_ints(xs, ys, 3);
}

/* Sort keys; return the index of the first one equal to its predecessor, or 0 if none is. */
static int first_dup(struct conn_key *keys, int n)
{
    qsort(keys, (size_t)n, sizeof(*keys), key_cmp);
    for (int i = 1; i < n; i++)
        if (key_cmp(&keys[i - 1], &keys[i]) == 0)
            return i;
    return 0;
}

int cs_replay_check(const struct cs_plan *plan, const struct cs_platform *plat,
                    struct cs_error *err)
{
    struct conn_key *snd, *rcv;
    int ns = 0, nr = 0, rc = 0, i;

    if (plan->ngpus > plat->ngpus) {
        cs_error_set(err, plat->path, 0,
                     "the schedule needs %d GPUs but the platform has %d GPU hosts (gpu0..)",
                     plan->ngpus, plat->ngpus);
        return CS_ERR_INVALID;
    }
    snd = calloc((size_t)plan->ntbs + 1, sizeof(*snd));
    rcv = calloc((size_t)plan->ntbs + 1, sizeof(*rcv));
    if (snd == NULL || rcv == NULL) {
        free(snd);
        free(rcv);
        cs_error_set(err, NULL, 0, "out of memory");
        return CS_ERR_NOMEM;
    }
    for (int t = 0; t < plan->ntbs && rc == 0; t++) {
        const struct cs_plan_tb *tb = &plan->tbs[t];
        int ntb = plan->gpu_tb0[tb->gpu + 1] - plan->gpu_tb0[tb->gpu];

        if (tb->send >= plan->ngpus || tb->recv >= plan->ngpus || tb->send == tb->gpu ||
            tb->recv == tb->gpu || tb->chan < 0 || tb->chan >= CS_MAX_CHANNELS) {
            cs_error_set(err, NULL, 0,
                         "gpu %d tb %d: bad peer or channel (send %d recv %d chan %d)", tb->gpu,
                         tb->id, tb->send, tb->recv, tb->chan);
            rc = CS_ERR_INVALID;
            break;
        }
        if (tb->send >= 0)
            snd[ns++] = (struct conn_key){tb->gpu, tb->send, tb->chan};
        if (tb->recv >= 0)
            rcv[nr++] = (struct conn_key){tb->recv, tb->gpu, tb->chan};
        for (int k = 0; k < tb->nops && rc == 0; k++) {
            const struct cs_plan_op *op = &tb->ops[k];

            if ((cs_step_sends(op->type) && tb->send < 0) ||
                (cs_step_recvs(op->type) && tb->recv < 0)) {
                cs_error_set(err, NULL, 0, "gpu %d tb %d step %d: a %s needs a %s peer", tb->gpu,
                             tb->id, op->step, cs_step_type_name(op->type),
                             cs_step_sends(op->type) && tb->send < 0 ? "send" : "recv");
                rc = CS_ERR_INVALID;
            }
            for (int d = 0; d < op->ndeps && rc == 0; d++)
                if (op->deps[d].tb < 0 || op->deps[d].tb >= ntb) {
                    cs_error_set(err, NULL, 0, "gpu %d tb %d step %d: depends on missing tb %d",
                                 tb->gpu, tb->id, op->step, op->deps[d].tb);
                    rc = CS_ERR_INVALID;
                }
        }
    }
    if (rc == 0 && (i = first_dup(snd, ns)) > 0) {
        cs_error_set(err, NULL, 0,
                     "two tbs of gpu %d send to %d on channel %d; the runtime gives each "
                     "connection one tb",
                     snd[i].src, snd[i].dst, snd[i].chan);
        rc = CS_ERR_INVALID;
    } else if (rc == 0 && (i = first_dup(rcv, nr)) > 0) {
        cs_error_set(err, NULL, 0,
                     "two tbs of gpu %d receive from %d on channel %d; the runtime gives each "
                     "connection one tb",
                     rcv[i].dst, rcv[i].src, rcv[i].chan);
        rc = CS_ERR_INVALID;
    }
    free(snd);
    free(rcv);
    return rc;
}

/* --- the simulation (child side) --- */

/* The engine's time resolution (surf/precision): a wait shorter than this is rounding. */
#define SIM_PRECISION_S 1e-12

enum wait_kind { W_NONE = 0, W_CREDIT, W_DATA, W_FLAG };

/* Units a connection can hold in flight: one slot each at most, and a network connection has
 * the proxy's window on top of the FIFO (net_window). */
#define MAX_INFLIGHT (CS_NCCL_STEPS + CS_NET_PROXY_DEPTH)

/* Counters of a connection: each has one taker (credit: the sender; ready and ended: the
 * receiver), so a tb that waits for n of them goes on when n are there. */
struct conn {
    struct conn_key key;
    int credit;   /* free slots: window (below) less those in use */
    int window;   /* CS_NCCL_STEPS, plus the proxy's CS_NET_PROXY_DEPTH on the network */
    int ready;    /* units whose first bytes are on their way and not yet taken */
    int ended;    /* units whose sender has finished them and not yet consumed */
    int sender;   /* global tb index, or -1 */
    int receiver; /* global tb index, or -1 */
    enum cs_link_class cls;
    int in_place;   /* a Simple receive copies nothing out of it (in_place, below) */
    double lat_s;   /* the hop latency: the sum of its route's link latencies in the platform */
    double Bps;     /* a direct replay's rate of a lone transfer: its route's slowest link */
    double fat_Bps; /* the slowest of its route's links that do not share (0: none) */
    int shared0, nshared; /* and its route's links that share: S.shared[shared0..+nshared) */
    /* per unit in flight, in posting order (index seq % MAX_INFLIGHT): when its first byte and
     * its last byte reach the receiver (start or end of the sender's pass + lat_s) */
    double first_at[MAX_INFLIGHT], last_at[MAX_INFLIGHT];
    long long posted, finished, taken; /* units started, ended, taken by the receiver */
};

/* Where a tb resumes (its state machine): each phase runs until the tb must wait for a counter,
 * a flag, a timer or a transfer, and names the phase that follows the wait. */
enum phase {
    PH_START = 1, /* the kernel launch (late on a process's later GPUs) */
    PH_OP,        /* op (iter, op) begins: its dependency flags from dep on */
    PH_BODY,      /* the dependency barrier is paid: the op's local work or its first call */
    PH_LOCAL,     /* the local op's time is over */
    PH_CALL,      /* call `call` begins */
    PH_TAKE,      /* unit `unit`: a receiver waits for its data */
    PH_CREDIT,    /* its first bytes are in: a sender waits for slots */
    PH_SEND,      /* the issue cost is paid: the CTA works on its unit */
    PH_XFER,      /* a unit of one pass has been worked (staged): it goes on the wire */
    PH_SENT,      /* its transfer has ended */
    PH_FINISH,    /* its tb-throughput time is over: a receiver waits for its end */
    PH_UNIT_END,  /* its last bytes are in */
    PH_OP_END,    /* the op's work is done */
    PH_PUBLISH,   /* the flag's cost is paid: the op's flag goes up */
    PH_DONE
};

struct tbstate {
    const struct cs_plan_tb *tb;
    struct conn *out, *in;
    int flag_iter, flag_step; /* last published flag */
    int waiters;              /* first tb waiting on this tb's flag, -1 none (list: next_waiter) */
    int next_waiter;
    int listed; /* on some tb's waiter list */
    int done;
    /* where it is and what it waits for, for the deadlock report */
    int iter, op;
    enum wait_kind wait;
    int wait_tb, wait_step, wait_iter; /* W_FLAG: global tb index, step and iteration */
    int blocked; /* the current wait did block: the timeline gets it when it ends */
    /* the state machine */
    enum phase phase;
    int dep, unit, queued;
    int napping, nap_kind, nap_other; /* after a timer: the timeline's event of the time */
    long long elems, units[2];
    double call_t0, t0, took, local_s;
    struct cs_sg_transfer *xfer;
    /* recording (timeline requested): its index, the end of its last recorded interval, the
     * current call and units sent and received on its connections */
    int index;
    double mark;
    int call;
    int out_seq, in_seq;
};

/* A direct replay's event (struct sim's heap, below): a date's bits and a key. */
struct devent {
    uint64_t at, key;
};

static struct sim {
    const struct cs_plan *plan;
    const struct cs_platform *plat;
    struct cs_params par; /* plat's, for this plan's runtime (MSCCL's LL threads) */
    struct tbstate *tbs;
    struct conn *conns;
    int nconns;
    sg_host_t *hosts;
    long long ncalls, ntransfers;
    struct cs_timeline *tl; /* NULL: record nothing */
    struct cs_period *pd;   /* non-NULL: tl holds one event at a time, passed on to pd */
    struct cs_timeline one; /* that tl */
    /* The one actor's run queue (a ring of ntbs tbs), its tbs not done yet, and its wake-up
     * when it waits for a timer or a transfer (idle). */
    int *queue, qhead, qlen;
    /* Tbs that entered an iteration at this instant, their snapshots not taken yet (snap_iter:
     * the iteration, -1 when not pending). */
    int *snap_pending, nsnap, *snap_iter;
    int nleft;
    int idle;
    sg_sem_t wakeup;
    /* Per GPU (of plan): its tbs not done in the collective it runs, the collectives it has
     * finished, and ends[c * ngpus + g], when it finished collective c; ncoll collectives run
     * back to back (cs_replay_opts.back_to_back), each GPU's next cs.launch_s after its last. */
    int ncoll, *gpu_left, *gpu_coll;
    double *ends;
    /* Non-NULL: a folded replay (fold.h): plan holds ranks 0..shift-1 and each connection is the
     * one of its orbit sent from them. */
    const struct cs_fold *fold;
    /* A direct replay (direct_ok): its clock, and its timers and transfers in flight. An event
     * is its date's bits (a date is never negative, so its bits order as the date does) and
     * seq << 24 | tb << 1 | xfer (seq: the order it was set), so (at, key) orders as (at, seq).
     * The events of one date wait in buckets, each a list in the order they were set; a 4-ary
     * heap (the children of i are 4i+1 to 4i+4) orders the buckets by their first event. The
     * events leave by (date, seq) however they are spread over buckets; a symmetric schedule
     * sets many at one date, which then cost a list, not the heap. */
    int direct;
    double now;
    struct dslot {
        struct devent e; /* its bucket's first event */
        int b;
    } * heap;
    int nheap, capheap;
    struct dbucket {
        uint64_t at;
        int head, tail, live;
    } * bk;
    int nbk, capbk, freebk; /* freebk: a list through head, -1 ends it (0: none yet) */
    struct dnode {
        uint64_t key;
        int next;
    } * nodes;
    int nnodes, capnodes, freenode; /* freenode: a list through next, as freebk */
    int bcache[64];                 /* a bucket of a recent date, by the date's hash (+1) */
    long long seq;
    int *shared; /* conn.shared0's links */
    /* per tb, its transfer in flight: remains bytes at date last, moving at rate (at most cap:
     * its own bound and the links that do not share), its end the heap's event seq (-1: none
     * yet) */
    struct dflow {
        double remains, rate, cap, last;
        long long seq;
        int on, mark;
    } * flow;
    /* per link that shares (link_index): the tbs whose transfers are on it; a share of its
     * bandwidth is solved again (direct_solve) when one comes or goes while others are on it */
    struct dlink {
        int n, room, *tb;
        int dirty, mark, sat;
        double Bps, left, users;
    } * dl;
    int *dirty, ndirty; /* the links to solve again */
    int *comp, *clinks; /* a component of transfers and links (room: tbs, links) */
    int mark;
} S;

/* The exit status of a direct replay that cannot give SimGrid's times (simulate): a share where
 * SimGrid's max-min would round a link's rest to nothing (its precision), or out of memory. */
#define DIRECT_MET 5

/* The replay's clock: SimGrid's, or a direct replay's own. */
static double sim_now(void)
{
    return S.direct ? S.now : simgrid_get_clock();
}

/* A direct replay's plans have fewer tbs than this (direct_ok), and fewer events than 2^40. */
#define DEVENT_TBS (1 << 23)

static int devent_before(const struct devent *a, const struct devent *b)
{
    return (a->at < b->at) | ((a->at == b->at) & (a->key < b->key));
}

static uint64_t devent_bits(double at)
{
    uint64_t u;

    memcpy(&u, &at, sizeof(u));
    return u;
}

static double devent_at(const struct devent *e)
{
    double at;

    memcpy(&at, &e->at, sizeof(at));
    return at;
}

static int devent_tb(const struct devent *e)
{
    return (int)((e->key >> 1) & (DEVENT_TBS - 1));
}

static int devent_xfer(const struct devent *e)
{
    return (int)(e->key & 1);
}

/* Room for one more element in *arr (room *cap, n used, each size bytes), grown by doubling;
 * out of memory ends the direct replay's process. */
static void *direct_room(void *arr, int *cap, int n, size_t size)
{
    if (n < *cap)
        return arr;
    int ncap = 2 * *cap + 64;
    void *a = realloc(arr, (size_t)ncap * size);

    if (a == NULL) {
        fprintf(stderr, "collsim: out of memory\n");
        _exit(3);
    }
    *cap = ncap;
    return a;
}

static int direct_node(uint64_t key)
{
    int k;

    if (S.freenode > 0) {
        k = S.freenode - 1;
        S.freenode = S.nodes[k].next + 1;
    } else {
        S.nodes = direct_room(S.nodes, &S.capnodes, S.nnodes, sizeof(*S.nodes));
        k = S.nnodes++;
    }
    S.nodes[k].key = key;
    S.nodes[k].next = -1;
    return k;
}

static void direct_sift_down(int i)
{
    struct dslot x = S.heap[i];
    int n = S.nheap;

    for (int l = 4 * i + 1; l < n; l = 4 * i + 1) {
        int m = l, end = l + 4 < n ? l + 4 : n;

        for (int c = l + 1; c < end; c++)
            m = devent_before(&S.heap[c].e, &S.heap[m].e) ? c : m;
        if (!devent_before(&S.heap[m].e, &x.e))
            break;
        S.heap[i] = S.heap[m];
        i = m;
    }
    S.heap[i] = x;
}

/* A direct replay's timer or transfer (xfer) of tb ends at date at: ordered by (date, seq), a
 * total order (each pool grown as needed: a tb has one event in flight, and a transfer whose
 * share changed a stale one more). */
static void direct_push(double at, int tb, int xfer)
{
    struct devent e = {devent_bits(at + 0.0),
                       (uint64_t)S.seq++ << 24 | (uint64_t)tb << 1 | (uint64_t)(xfer != 0)};
    int h = (int)(((e.at ^ (e.at >> 29)) * 0x9e3779b97f4a7c15ull) >> 58), b = S.bcache[h] - 1;
    int k = direct_node(e.key), i;

    if (b >= 0 && S.bk[b].live && S.bk[b].at == e.at) {
        /* later than every event of the bucket: its first, and its place in the heap, stay */
        S.nodes[S.bk[b].tail].next = k;
        S.bk[b].tail = k;
        return;
    }
    if (S.freebk > 0) {
        b = S.freebk - 1;
        S.freebk = S.bk[b].head + 1;
    } else {
        S.bk = direct_room(S.bk, &S.capbk, S.nbk, sizeof(*S.bk));
        b = S.nbk++;
    }
    S.bk[b] = (struct dbucket){e.at, k, k, 1};
    S.bcache[h] = b + 1;
    S.heap = direct_room(S.heap, &S.capheap, S.nheap, sizeof(*S.heap));
    for (i = S.nheap++; i > 0 && devent_before(&e, &S.heap[(i - 1) / 4].e); i = (i - 1) / 4)
        S.heap[i] = S.heap[(i - 1) / 4];
    S.heap[i] = (struct dslot){e, b};
}

/* The earliest event in flight (S.heap[0].e) leaves. */
static struct devent direct_pop(void)
{
    struct devent top = S.heap[0].e;
    int b = S.heap[0].b, k = S.bk[b].head;

    S.bk[b].head = S.nodes[k].next;
    S.nodes[k].next = S.freenode - 1;
    S.freenode = k + 1;
    if (S.bk[b].head >= 0) {
        S.heap[0].e.key = S.nodes[S.bk[b].head].key;
    } else {
        S.bk[b].live = 0;
        S.bk[b].head = S.freebk - 1;
        S.freebk = b + 1;
        S.heap[0] = S.heap[--S.nheap];
    }
    if (S.nheap > 0)
        direct_sift_down(0);
    return top;
}

/* A direct replay's transfer end that a new share of its links has replaced. */
static int direct_stale(const struct devent *e)
{
    return devent_xfer(e) && (long long)(e->key >> 24) != S.flow[devent_tb(e)].seq;
}

static void direct_dirty(int l)
{
    if (!S.dl[l].dirty) {
        S.dl[l].dirty = 1;
        S.dirty[S.ndirty++] = l;
    }
}

/* A direct replay's transfer of bytes from tb ts, at most bound B/s (0: none). Alone on its links
 * that share, it moves at the rate SimGrid's max-min gives a lone flow (its route's slowest link
 * or its bound) and its end is set at once; with others on one of them, the shares of every
 * transfer linked to it are solved again before the clock moves (direct_solve). */
static void direct_start(struct tbstate *ts, double bytes, double bound)
{
    const struct conn *c = ts->out;
    struct dflow *f = &S.flow[ts->index];
    int lone = 1;

    for (int i = 0; i < c->nshared; i++) {
        struct dlink *d = &S.dl[S.shared[c->shared0 + i]];

        if (d->n > 0)
            lone = 0;
        if (d->n == d->room) {
            int room = 2 * d->room + 4, *tb = realloc(d->tb, (size_t)room * sizeof(*tb));

            if (tb == NULL) {
                fprintf(stderr, "collsim: out of memory\n");
                _exit(3);
            }
            d->tb = tb;
            d->room = room;
        }
        d->tb[d->n++] = ts->index;
    }
    f->remains = bytes;
    f->last = S.now;
    f->cap = bound > 0 && bound < c->fat_Bps ? bound : c->fat_Bps;
    f->on = 1;
    f->rate = 0;
    f->seq = -1;
    if (lone) {
        f->rate = bound > 0 && bound < c->Bps ? bound : c->Bps;
        f->seq = S.seq;
        direct_push(S.now + bytes / f->rate, ts->index, 1);
    } else {
        direct_dirty(S.shared[c->shared0]);
    }
}

/* The transfer of tb t has ended: off its links, whose other transfers get a new share. */
static void direct_end(int t)
{
    const struct conn *c = S.tbs[t].out;

    S.flow[t].on = 0;
    S.flow[t].seq = -1;
    for (int i = 0; i < c->nshared; i++) {
        int l = S.shared[c->shared0 + i];
        struct dlink *d = &S.dl[l];

        for (int j = 0; j < d->n; j++)
            if (d->tb[j] == t) {
                memmove(d->tb + j, d->tb + j + 1, (size_t)(d->n - j - 1) * sizeof(*d->tb));
                d->n--;
                break;
            }
        if (d->n > 0)
            direct_dirty(l);
    }
}

/* Transfer t gets rate r: its links that share have r less to give, and one user less. A link
 * whose rest SimGrid would round to nothing (at most its maxmin precision, 1e-5 of its
 * bandwidth) while others still wait for a share would leave them none there: SimGrid's quirk,
 * not copied; the replay runs on SimGrid's engine instead. Progressive filling never lowers a
 * link's rest per waiting transfer below its bandwidth over its transfers, so this takes some
 * 100,000 transfers on one link. */
static void direct_fix(int t, double r)
{
    const struct conn *c = S.tbs[t].out;

    S.flow[t].rate = r;
    for (int i = 0; i < c->nshared; i++) {
        struct dlink *d = &S.dl[S.shared[c->shared0 + i]];

        d->left -= r;
        d->users -= 1;
        if (d->users > 0 && d->left <= d->Bps * 1e-5)
            _exit(DIRECT_MET);
    }
}

/* The shares of the transfers linked (through links that share) to a link where one came or
 * went, as SimGrid's max-min gives them (progressive filling: the link whose rest per waiting
 * transfer is the least saturates first, or a transfer's own bound if lower), each transfer's
 * bytes moved at its former rate until now, and its end at the new one. */
static void direct_solve(void)
{
    int round;

    if (S.ndirty == 0)
        return;
    round = ++S.mark;
    for (int k = 0; k < S.ndirty; k++) {
        int l0 = S.dirty[k], nc = 0, nl = 0, nfree;

        S.dl[l0].dirty = 0;
        if (S.dl[l0].n == 0 || S.dl[l0].mark == round)
            continue;
        S.dl[l0].mark = round;
        S.clinks[nl++] = l0;
        for (int i = 0; i < nl; i++) {
            const struct dlink *d = &S.dl[S.clinks[i]];

            for (int j = 0; j < d->n; j++) {
                int t = d->tb[j];
                const struct conn *c = S.tbs[t].out;

                if (S.flow[t].mark == round)
                    continue;
                S.flow[t].mark = round;
                S.comp[nc++] = t;
                for (int h = 0; h < c->nshared; h++) {
                    int l = S.shared[c->shared0 + h];

                    if (S.dl[l].mark != round) {
                        S.dl[l].mark = round;
                        S.clinks[nl++] = l;
                    }
                }
            }
        }
        for (int i = 0; i < nl; i++) {
            struct dlink *d = &S.dl[S.clinks[i]];

            d->left = d->Bps;
            d->users = d->n;
        }
        for (int i = 0; i < nc; i++) {
            struct dflow *f = &S.flow[S.comp[i]];

            if (f->remains > 0) {
                f->remains -= f->rate * (S.now - f->last);
                if (f->remains < SIM_PRECISION_S * 1e-5)
                    f->remains = 0;
            }
            f->last = S.now;
            f->rate = -1; /* no share yet */
        }
        for (nfree = nc; nfree > 0;) {
            double share = INFINITY, bound = INFINITY;

            for (int i = 0; i < nl; i++) {
                const struct dlink *d = &S.dl[S.clinks[i]];

                if (d->users > 0 && d->left / d->users < share)
                    share = d->left / d->users;
            }
            for (int i = 0; i < nc; i++) {
                const struct dflow *f = &S.flow[S.comp[i]];

                if (f->rate < 0 && f->cap < bound)
                    bound = f->cap;
            }
            if (bound < share) {
                for (int i = 0; i < nc; i++)
                    if (S.flow[S.comp[i]].rate < 0 && S.flow[S.comp[i]].cap == bound) {
                        direct_fix(S.comp[i], bound);
                        nfree--;
                    }
                continue;
            }
            /* the links that saturate at share, then their transfers */
            int nsat = 0;

            for (int i = 0; i < nl; i++) {
                struct dlink *d = &S.dl[S.clinks[i]];

                d->sat = d->users > 0 && d->left / d->users == share;
                nsat += d->sat;
            }
            if (nsat == 0)
                _exit(DIRECT_MET); /* not reached: every waiting transfer is on some link */
            for (int i = 0; nsat > 0 && i < nl; i++) {
                struct dlink *d = &S.dl[S.clinks[i]];

                if (!d->sat)
                    continue;
                d->sat = 0;
                nsat--;
                for (int j = 0; j < d->n; j++)
                    if (S.flow[d->tb[j]].rate < 0) {
                        direct_fix(d->tb[j], share);
                        nfree--;
                    }
            }
        }
        for (int i = 0; i < nc; i++) {
            struct dflow *f = &S.flow[S.comp[i]];

            f->seq = S.seq;
            direct_push(S.now + (f->remains > 0 ? f->remains / f->rate : 0), S.comp[i], 1);
        }
    }
    S.ndirty = 0;
}

static double rate_time(double bytes, double Bps)
{
    return Bps > 0 && bytes > 0 ? bytes / Bps : 0;
}

/* The event held for the comparison is complete (its recorder filled it in at once): on to it. */
static void flush_event(void)
{
    if (S.pd != NULL && S.tl->nevents > 0) {
        if (cs_period_add(S.pd, &S.tl->events[0]) != 0)
            S.pd->invalid = 1;
        S.tl->nevents = 0;
    }
}

/* A connection's part of a snapshot: its counters (slots, data, units in flight) in ints[0..5)
 * and the sums of the arrival times of its units in flight, relative to now, in times[0..2). An
 * arrival already past counts as now: the receiver then goes on at once whenever it was
 * (arrive), so its time is no part of the state. */
static void snap_conn(const struct conn *c, double now, long long *ints, double *times)
{
    if (c == NULL) {
        for (int k = 0; k < 5; k++)
            ints[k] = -1;
        return;
    }
    ints[0] = c->credit;
    ints[1] = c->ready;
    ints[2] = c->ended;
    ints[3] = c->posted - c->taken;
    ints[4] = c->finished - c->taken;
    for (long long u = c->taken; u < c->posted; u++)
        times[0] += fmax(c->first_at[u % MAX_INFLIGHT] - now, 0);
    for (long long u = c->taken; u < c->finished; u++)
        times[1] += fmax(c->last_at[u % MAX_INFLIGHT] - now, 0);
}

/* The comparison gets the state of tb t as it entered iteration iter at this instant (period.h):
 * its two connections and its flag, relative to that iteration and to now. */
static void snapshot(int t, int iter)
{
    const struct tbstate *ts = &S.tbs[t];
    struct cs_period_snap sn;
    double now = sim_now();

    flush_event();
    memset(&sn, 0, sizeof(sn));
    sn.at_s = now;
    snap_conn(ts->out, now, sn.ints, sn.times_s);
    snap_conn(ts->in, now, sn.ints + 5, sn.times_s + 2);
    sn.ints[10] = ts->flag_iter < 0 ? -1 : iter - ts->flag_iter;
    sn.ints[11] = ts->flag_step;
    cs_period_snap_add(S.pd, t, iter, &sn);
}

/* The snapshots of the tbs that entered an iteration at this instant, taken once every tb that
 * goes on at this instant has run: the counters a tb shares with its peers then do not depend
 * on which of them ran first (the order period.h says changes no time). */
static void take_snapshots(void)
{
    for (int k = 0; k < S.nsnap; k++) {
        int t = S.snap_pending[k];

        snapshot(t, S.snap_iter[t]);
        S.snap_iter[t] = -1;
    }
    S.nsnap = 0;
}

/* Tb ts enters iteration ts->iter now: its snapshot waits for the end of the instant (one
 * pending before, of an iteration it went through at this instant, is taken at once). */
static void snapshot_later(const struct tbstate *ts)
{
    int t = ts->index;

    if (S.snap_iter[t] >= 0)
        snapshot(t, S.snap_iter[t]);
    else
        S.snap_pending[S.nsnap++] = t;
    S.snap_iter[t] = ts->iter;
}

/* Add an event of kind for the tb from start_s to now (callers check S.tl first, so that nothing
 * is paid when no timeline is requested). Returns the event to complete, or NULL when the log is
 * full. */
static struct cs_tl_event *add_event(const struct tbstate *ts, double start_s, enum cs_tl_kind kind,
                                     int other)
{
    struct cs_tl_event ev;

    flush_event();
    memset(&ev, 0, sizeof(ev));
    ev.start_s = start_s;
    ev.end_s = sim_now();
    ev.kind = kind;
    ev.tb = ts->index;
    ev.iter = ts->iter;
    ev.op = ts->op;
    ev.call = ts->call;
    ev.other = other;
    ev.out_conn = ev.out_seq = ev.in_conn = ev.in_seq = -1;
    if (cs_timeline_add(S.tl, &ev) != 0)
        return NULL;
    return &S.tl->events[S.tl->nevents - 1];
}

/* Record the interval from the tb's last mark to now, which becomes its new mark. */
static struct cs_tl_event *record(struct tbstate *ts, enum cs_tl_kind kind, int other)
{
    double start_s = ts->mark;

    ts->mark = sim_now();
    return add_event(ts, start_s, kind, other);
}

static enum cs_tl_kind wait_event(enum wait_kind kind)
{
    if (kind == W_DATA)
        return CS_TL_WAIT_DATA;
    return kind == W_CREDIT ? CS_TL_WAIT_CREDIT : CS_TL_WAIT_FLAG;
}

/* Make tb t runnable now (once, however often it is woken before it runs), and wake the actor
 * if it waits. Called by the actor and, when a timer or a transfer of t is over, by SimGrid's
 * kernel between two rounds of the actor. */
static void wake(int t)
{
    if (S.tbs[t].queued)
        return;
    S.tbs[t].queued = 1;
    S.queue[(S.qhead + S.qlen++) % S.plan->ntbs] = t;
    if (S.idle) {
        S.idle = 0;
        sg_sem_release(S.wakeup);
    }
}

/* The tb sleeps for d > 0 seconds, at least the engine's resolution as SimGrid's own sleeps;
 * when it wakes, the timeline gets the time as an event of kind (0: none) and other, and the tb
 * goes on at phase next. Returns 0 (the tb waits). */
static int nap(struct tbstate *ts, double d, int kind, int other, enum phase next)
{
    double at = sim_now() + (d > SIM_PRECISION_S ? d : SIM_PRECISION_S);

    if (S.direct)
        direct_push(at, ts->index, 0);
    else
        cs_sg_timer_at(at, ts->index, wake);
    ts->napping = 1;
    ts->nap_kind = kind;
    ts->nap_other = other;
    ts->phase = next;
    return 0;
}

/* Take n from a counter whose only taker is ts: 1 when done, 0 when ts must wait (for what: kind;
 * whoever adds to the counter wakes it). The wait goes to the timeline when it ends. */
static int take(struct tbstate *ts, int *count, enum wait_kind kind, int n)
{
    if (*count < n) {
        ts->wait = kind;
        ts->blocked = 1;
        return 0;
    }
    *count -= n;
    ts->wait = W_NONE;
    if (ts->blocked && S.tl)
        record(ts, wait_event(kind), kind == W_DATA ? ts->in->sender : ts->out->receiver);
    ts->blocked = 0;
    return 1;
}

/* Add n to a counter whose taker (a global tb index, or -1) may wait for it. */
static void give(int *count, int n, int taker, enum wait_kind kind)
{
    *count += n;
    if (taker >= 0 && S.tbs[taker].wait == kind)
        wake(taker);
}

static int flag_before(const struct tbstate *o, int iter, int step)
{
    return o->flag_iter < iter || (o->flag_iter == iter && o->flag_step < step);
}

/* 1 when the flag dep names is up for iteration iter; else ts waits on it (0). */
static int flag_up(struct tbstate *ts, int iter, const struct cs_dep *dep)
{
    int o = S.plan->gpu_tb0[ts->tb->gpu] + dep->tb;

    if (flag_before(&S.tbs[o], iter, dep->step)) {
        ts->wait = W_FLAG;
        ts->wait_tb = o;
        ts->wait_step = dep->step;
        ts->wait_iter = iter;
        ts->blocked = 1;
        if (!ts->listed) {
            ts->listed = 1;
            ts->next_waiter = S.tbs[o].waiters;
            S.tbs[o].waiters = ts->index;
        }
        return 0;
    }
    ts->wait = W_NONE;
    if (ts->blocked && S.tl)
        record(ts, CS_TL_WAIT_FLAG, o);
    ts->blocked = 0;
    return 1;
}

/* Raise ts's flag to (iter, step) and wake every tb waiting on it. */
static void publish(struct tbstate *ts, int iter, int step)
{
    ts->flag_iter = iter;
    ts->flag_step = step;
    while (ts->waiters >= 0) {
        struct tbstate *w = &S.tbs[ts->waiters];

        ts->waiters = w->next_waiter;
        w->listed = 0;
        wake(w->index);
    }
}

/* Local memory bytes touched per data byte by a FIFO op (reads + writes on this GPU). */
static double mem_factor(enum cs_step_type t)
{
    switch (t) {
    case CS_STEP_S:
        return 1; /* read src; the write goes over the link */
    case CS_STEP_R:
    case CS_STEP_RCS:
        return 2; /* read FIFO, write dst */
    case CS_STEP_RRS:
        return 2; /* read FIFO and src */
    case CS_STEP_RRC:
    case CS_STEP_RRCS:
        return 3; /* read FIFO and src, write dst */
    default:
        return 0;
    }
}

/* Record the call (or local op) that started at t0 as a whole: the trace's step slice. */
static void record_call(struct tbstate *ts, double t0, long long bytes)
{
    struct cs_tl_event *ev = add_event(ts, t0, CS_TL_CALL, -1);

    if (ev != NULL)
        ev->bytes = bytes;
}

/* Go on at phase next once the clock reaches t, a unit's first or last bytes reaching the
 * receiver: at once (1) unless t is ahead by more than the engine's rounding. */
static int arrive(struct tbstate *ts, double t, enum phase next)
{
    ts->phase = next;
    if (t - sim_now() > SIM_PRECISION_S)
        return nap(ts, t - sim_now(), CS_TL_LATENCY, ts->in->sender, next);
    return 1;
}

/* A receiving tb's unit: wait until the sender has started it (its first bytes on the way) or,
 * with last, ended it, then until those bytes reach the tb; then phase next. A tb that does not
 * receive goes on at once. 1 to go on, 0 when the tb waits. */
static int receive(struct tbstate *ts, int recvs, int last, enum phase next)
{
    if (!recvs) {
        ts->phase = next;
        return 1;
    }
    if (!take(ts, last ? &ts->in->ended : &ts->in->ready, W_DATA, 1))
        return 0;
    return arrive(ts, (last ? ts->in->last_at : ts->in->first_at)[ts->in->taken % MAX_INFLIGHT],
                  next);
}

/* The time a streamed unit of b data bytes takes to fill one pass of the CTA's threads over
 * their lines (cs.pass_bytes at cs.tb_Bps): its receiver works a pass at a time. */
static double pass_time(double b)
{
    return cs_params_pass_time(&S.par, S.plan->proto, b);
}

/* Whether a streamed unit of b data bytes fits one pass of the CTA's threads: it is then posted
 * whole, as its receiver's pass takes its lines together. */
static int one_pass(double b)
{
    double pb = S.par.pass_bytes[S.plan->proto];

    return pb > 0 && b <= pb;
}

/* A sender's unit of b bytes starts now: streamed protocols put its first pass on the way, so
 * the receiver can start on it a pass and a hop latency later (a unit of one pass waits for its
 * end). */
static void start_unit(struct conn *out, int streams, double b)
{
    if (!streams || one_pass(b))
        return;
    out->first_at[out->posted++ % MAX_INFLIGHT] = sim_now() + out->lat_s + pass_time(b);
    give(&out->ready, 1, out->receiver, W_DATA);
}

/* The sender's unit of b bytes, started at t0, ends now: its last byte reaches the receiver a hop
 * latency later, which is done with it a pass after that (streamed); a store-and-forward unit
 * (Simple) is posted whole only now, and so is a streamed unit of one pass: its receiver starts
 * on it a hop latency after the later of its transfer's end (the link it shares may have slowed
 * it) and its pass. */
static void end_unit(struct conn *out, int streams, double b, double t0)
{
    double now = sim_now(), at = now + out->lat_s + (streams ? pass_time(b) : 0);

    if (streams && one_pass(b)) {
        at = (now > t0 + pass_time(b) ? now : t0 + pass_time(b)) + out->lat_s;
        streams = 0;
    }
    if (!streams) {
        out->first_at[out->posted++ % MAX_INFLIGHT] = at;
        give(&out->ready, 1, out->receiver, W_DATA);
    }
    out->last_at[out->finished++ % MAX_INFLIGHT] = at;
    give(&out->ended, 1, out->receiver, W_DATA);
}

/* The timeline's record of one transfer unit of `bytes` data bytes: sent over the wire in
 * wire_s seconds (wire_s < 0: not sent), received when recvs. */
static void record_unit(struct tbstate *ts, long long bytes, double wire_s, int recvs)
{
    struct cs_tl_event *ev = record(ts, CS_TL_UNIT, -1);

    if (ev == NULL)
        return;
    ev->bytes = bytes;
    if (wire_s >= 0) {
        ev->out_conn = (int)(ts->out - S.conns);
        ev->out_seq = ts->out_seq++;
        ev->wire_bytes = bytes > 0 ? cs_plan_wire_bytes(S.plan, bytes) : 0;
        ev->wire_s = wire_s;
    }
    if (recvs) {
        ev->in_conn = (int)(ts->in - S.conns);
        ev->in_seq = ts->in_seq++;
    }
}

/* The unit's wire bytes take 1 / link_eff of the links (the protocol's stores get that share of
 * a link). One CTA moves at most its rate of data: a bound on the transfer's rate, so a CTA-bound
 * flow leaves the rest of its links to the others; a staged unit (one pass, already worked) has
 * no bound of its own. */
static void send_unit(struct tbstate *ts, long long bytes, int staged)
{
    const struct cs_plan *p = S.plan;
    const struct cs_params *par = &S.par;
    double eff = par->link_eff[p->proto][ts->out->cls];
    double wire = (double)cs_plan_wire_bytes(p, bytes) / (eff > 0 ? eff : 1);
    double bound = staged ? 0 : cs_params_cta_Bps(par, p->proto) * wire / bytes;

    S.ntransfers++;
    if (S.direct) {
        direct_start(ts, (double)(uint64_t)wire, bound);
        return;
    }
    ts->xfer =
        cs_sg_transfer_start(S.hosts[ts->tb->gpu], S.hosts[ts->tb->send], wire, bound, ts->index);
}

/* Whether connection c is written in place: NCCL's own Simple kernels between two GPUs of one
 * process (nccl-tests -g; cs.gpus_per_process GPUs in rank order) over P2P, not the network, use
 * the peer's user buffers (P2P/direct pointer), so the sender's stores land in the receiver's
 * output and the chunk's last receive (directRecv) copies nothing: it waits for the data and
 * frees the slots. Across processes the data lands in the FIFO and the receive copies it out.
 * LL and LL128 always go through the FIFO's flagged lines. A folded replay keeps each process's
 * GPUs together (fold.c), so c's orbit agrees. */
static int in_place(const struct conn *c)
{
    int per = cs_params_gpus_per_process(&S.par);

    return S.plan->nccl_kernel && S.plan->proto == CS_PROTO_SIMPLE && per > 1 &&
           c->cls != CS_LINK_NET && c->key.src / per == c->key.dst / per;
}

/* The time a unit of b data bytes of ts's op takes at least: one CTA's rate, local memory
 * traffic; nothing for a receive written in place. */
static double unit_need(const struct tbstate *ts, const struct cs_plan_op *op, double b)
{
    const struct cs_params *par = &S.par;
    double mem_Bps = cs_step_reduces(op->type) ? par->reduce_Bps : par->copy_Bps;
    double need;

    if (op->type == CS_STEP_R && ts->in->in_place)
        return 0;
    need = rate_time(b, cs_params_cta_Bps(par, S.plan->proto));
    if (rate_time(b * mem_factor(op->type), mem_Bps) > need)
        need = rate_time(b * mem_factor(op->type), mem_Bps);
    return need;
}

/* The unit is over: the receiver frees its slots, the sender ends it; then the next unit, or
 * the next call, or the op's end. */
static void unit_end(struct tbstate *ts, const struct cs_plan_op *op)
{
    const struct cs_plan *p = S.plan;
    int sends = cs_step_sends(op->type), recvs = cs_step_recvs(op->type);
    int slots = p->slots_per_call / p->units_per_call;

    if (recvs)
        ts->in->taken++;
    if (S.tl)
        record_unit(ts, ts->units[ts->unit], sends ? ts->took : -1, recvs);
    if (recvs)
        give(&ts->in->credit, slots, ts->in->sender, W_CREDIT);
    if (sends)
        end_unit(ts->out, p->proto != CS_PROTO_SIMPLE, (double)ts->units[ts->unit], ts->t0);
    ts->phase = PH_TAKE;
    if (++ts->unit < p->units_per_call)
        return;
    S.ncalls++;
    if (S.tl)
        record_call(ts, ts->call_t0, ts->elems * p->type_bytes);
    ts->phase = PH_CALL;
    if (++ts->call >= op->ncalls)
        ts->phase = PH_OP_END;
}

/* Whether op's unit of b bytes is staged: a streamed unit of one pass that is sent. */
static int staged(const struct cs_plan_op *op, double b)
{
    return cs_step_sends(op->type) && S.plan->proto != CS_PROTO_SIMPLE && one_pass(b);
}

/* One phase of a unit of a primitive call (DESIGN.md's timing model, above): 1 to go on, 0 when
 * the tb waits. */
static int unit_phase(struct tbstate *ts, const struct cs_plan_op *op)
{
    const struct cs_plan *p = S.plan;
    const struct cs_params *par = &S.par;
    int sends = cs_step_sends(op->type), recvs = cs_step_recvs(op->type);
    double b = (double)ts->units[ts->unit], now = sim_now();

    switch (ts->phase) {
    case PH_TAKE:
        return receive(ts, recvs, 0, PH_CREDIT);
    case PH_CREDIT:
        if (sends && !take(ts, &ts->out->credit, W_CREDIT, p->slots_per_call / p->units_per_call))
            return 0;
        /* The call's issue cost, once its first unit has data to send and room for it. */
        if (sends && ts->unit == 0 && par->call_s[p->proto][ts->out->cls] > 0)
            return nap(ts, par->call_s[p->proto][ts->out->cls], CS_TL_OVERHEAD, -1, PH_SEND);
        ts->phase = PH_SEND;
        return 1;
    case PH_SEND:
        /* A streamed unit of one pass is staged: the CTA's threads work its lines (load,
         * reduce, store), then the lines cross the links; nothing within one pass overlaps. */
        ts->t0 = now;
        ts->phase = PH_XFER;
        if (staged(op, b) && unit_need(ts, op, b) > 0)
            return nap(ts, unit_need(ts, op, b), 0, -1, PH_XFER);
        return 1;
    case PH_XFER:
        ts->phase = PH_SENT;
        if (sends)
            start_unit(ts->out, p->proto != CS_PROTO_SIMPLE, b);
        if (sends && b > 0) {
            send_unit(ts, ts->units[ts->unit], staged(op, b));
            return 0;
        }
        return 1;
    case PH_SENT:
        cs_sg_transfer_free(ts->xfer);
        ts->xfer = NULL;
        ts->took = now - ts->t0 - (staged(op, b) ? unit_need(ts, op, b) : 0);
        ts->phase = PH_FINISH;
        if (!staged(op, b) && unit_need(ts, op, b) > ts->took)
            return nap(ts, unit_need(ts, op, b) - ts->took, 0, -1, PH_FINISH);
        return 1;
    case PH_FINISH:
        return receive(ts, recvs, 1, PH_UNIT_END);
    default: /* PH_UNIT_END */
        unit_end(ts, op);
        return 1;
    }
}

/* The op's local work (cpy, or a fused re of nsrc sources): 1 to go on, 0 when the tb sleeps. */
static int local_begin(struct tbstate *ts, const struct cs_plan_op *op)
{
    const struct cs_params *par = &S.par;
    double b;

    ts->elems = (long long)op->cnt * cs_plan_iter_elems(S.plan, ts->iter);
    b = (double)ts->elems * S.plan->type_bytes;
    ts->call_t0 = sim_now();
    ts->local_s = 0;
    if (op->type == CS_STEP_CPY)
        ts->local_s = rate_time(2 * b, par->copy_Bps);
    else if (op->type == CS_STEP_RE)
        ts->local_s = rate_time((op->nsrc + 2) * b, par->reduce_Bps);
    if (ts->local_s > 0)
        return nap(ts, ts->local_s, 0, -1, PH_LOCAL);
    ts->phase = PH_LOCAL;
    return 1;
}

static void local_end(struct tbstate *ts)
{
    long long bytes = ts->elems * S.plan->type_bytes;

    if (S.tl) {
        struct cs_tl_event *ev = ts->local_s > 0 ? record(ts, CS_TL_LOCAL, -1) : NULL;

        if (ev != NULL)
            ev->bytes = bytes;
        record_call(ts, ts->call_t0, bytes);
    }
    S.ncalls++;
    ts->phase = PH_OP_END;
}

/* GPU g's next collective: its tbs start again cs.launch_s from now (its stream's next kernel),
 * their step tables and flags fresh, their connections where the last one left them. */
static void relaunch(int g)
{
    for (int t = S.plan->gpu_tb0[g]; t < S.plan->gpu_tb0[g + 1]; t++) {
        struct tbstate *ts = &S.tbs[t];

        ts->done = 0;
        ts->iter = ts->op = ts->dep = 0;
        ts->flag_iter = ts->flag_step = -1;
        ts->wait = W_NONE;
        ts->blocked = 0;
        S.nleft++;
        S.gpu_left[g]++;
        nap(ts, S.par.launch_s, CS_TL_LAUNCH, -1, PH_START);
    }
}

static void tb_done(struct tbstate *ts)
{
    int g = ts->tb->gpu;

    ts->phase = PH_DONE;
    ts->done = 1;
    S.nleft--;
    if (--S.gpu_left[g] > 0)
        return;
    S.ends[(size_t)S.gpu_coll[g] * (size_t)S.plan->ngpus + (size_t)g] = sim_now();
    if (++S.gpu_coll[g] < S.ncoll)
        relaunch(g);
}

/* The tb's next op, the next iteration's first, or its end. */
static void next_op(struct tbstate *ts)
{
    ts->phase = PH_OP;
    ts->dep = 0;
    if (++ts->op < ts->tb->nops)
        return;
    ts->op = 0;
    if (++ts->iter < S.plan->sz.niter) {
        if (S.pd != NULL)
            snapshot_later(ts);
        return;
    }
    /* As the loops leave them, for the report. */
    ts->iter = S.plan->sz.niter - 1;
    ts->op = ts->tb->nops - 1;
    tb_done(ts);
}

/* One phase of the tb at the op level (the units are unit_phase's): 1 to go on, 0 when the tb
 * waits or is done. */
static int op_phase(struct tbstate *ts)
{
    const struct cs_params *par = &S.par;
    const struct cs_plan_op *op = &ts->tb->ops[ts->op];
    double now = sim_now();

    switch (ts->phase) {
    case PH_OP:
        for (; ts->dep < op->ndeps; ts->dep++)
            if (!flag_up(ts, ts->iter, &op->deps[ts->dep]))
                return 0;
        if (op->ndeps > 0 && !S.plan->nccl_kernel && par->dep_s + par->barrier_s > 0)
            return nap(ts, par->dep_s + par->barrier_s, CS_TL_OVERHEAD, -1, PH_BODY);
        ts->phase = PH_BODY;
        return 1;
    case PH_BODY:
        ts->call = 0;
        if (op->type == CS_STEP_CPY || op->type == CS_STEP_RE)
            return local_begin(ts, op);
        ts->phase = op->ncalls > 0 ? PH_CALL : PH_OP_END;
        return 1;
    case PH_LOCAL:
        local_end(ts);
        return 1;
    case PH_CALL:
        ts->call_t0 = now;
        ts->elems = cs_plan_call_elems(S.plan, op, ts->iter, ts->call);
        if (ts->elems == 0 && S.plan->nccl_kernel && S.plan->proto != CS_PROTO_SIMPLE) {
            /* NCCL's LL and LL128 primitives read and write no line of an empty chunk, so
             * nothing waits (Simple still posts and waits for its step) */
            S.ncalls++;
            ts->phase = ++ts->call >= op->ncalls ? PH_OP_END : PH_CALL;
            return 1;
        }
        cs_plan_call_units(S.plan, ts->elems, ts->units);
        ts->unit = 0;
        ts->phase = PH_TAKE;
        return 1;
    case PH_OP_END:
        if (op->hasdep && !S.plan->nccl_kernel && par->barrier_s + par->flag_s > 0)
            return nap(ts, par->barrier_s + par->flag_s, CS_TL_OVERHEAD, -1, PH_PUBLISH);
        ts->phase = PH_PUBLISH;
        return 1;
    case PH_PUBLISH:
        if (op->hasdep)
            publish(ts, ts->iter, op->step);
        next_op(ts);
        return !ts->done && !ts->napping; /* done, or relaunched for the next collective */
    default:
        return unit_phase(ts, op);
    }
}

/* Run tb ts from where it stopped until it waits or is done. */
static void run_tb(struct tbstate *ts)
{
    const struct cs_params *par = &S.par;
    int per = cs_params_gpus_per_process(par);

    if (ts->napping) {
        ts->napping = 0;
        if (S.tl && ts->nap_kind)
            record(ts, ts->nap_kind, ts->nap_other);
    }
    if (ts->phase == PH_START) {
        /* A process driving several GPUs launches their kernels in turn; an MSCCL threadblock
         * then loads its step table. */
        double late = ts->tb->gpu % per * par->launch_gpu_s;
        double pro = S.plan->nccl_kernel ? 0 : par->prologue_s;

        if (S.pd != NULL && S.plan->sz.niter > 0)
            snapshot_later(ts);
        ts->phase = PH_OP;
        if (late + pro > 0) {
            nap(ts, late + pro, CS_TL_LAUNCH, -1, PH_OP);
            return;
        }
    }
    if (S.plan->sz.niter <= 0 || ts->tb->nops <= 0) {
        tb_done(ts);
        return;
    }
    while (op_phase(ts))
        ;
}

/* A direct replay's next instant: the clock moves to the earliest date as SimGrid's engine moves
 * it (by the difference), every timer due then ends, and every transfer due within the engine's
 * precision (SimGrid ends those together); each wakes its tb. 0 when nothing is in flight. */
static int direct_advance(void)
{
    direct_solve();
    while (S.nheap > 0 && direct_stale(&S.heap[0].e))
        direct_pop();
    if (S.nheap == 0)
        return 0;
    S.now = S.now + (devent_at(&S.heap[0].e) - S.now);
    while (S.nheap > 0 &&
           (devent_at(&S.heap[0].e) <= S.now ||
            (devent_xfer(&S.heap[0].e) && devent_at(&S.heap[0].e) - S.now < SIM_PRECISION_S))) {
        struct devent e = direct_pop();

        if (direct_stale(&e))
            continue;
        if (devent_xfer(&e))
            direct_end(devent_tb(&e));
        wake(devent_tb(&e));
    }
    return 1;
}

/* The one actor: runs the tbs that can go on, then waits for a timer or a transfer to wake it,
 * until every tb is done. Left waiting when nothing else happens, it is a deadlock (SimGrid's
 * run ends with it blocked). One actor, not one per tb or per GPU: SimGrid's cost per actor,
 * context switch and simcall dominated the replay. */
static void replay_main(int argc, char **argv)
{
    int n = S.plan->ntbs;

    (void)argc;
    (void)argv;
    S.nleft = n;
    for (int t = 0; t < n; t++)
        wake(t);
    while (S.nleft > 0) {
        while (S.qlen > 0) {
            struct tbstate *ts = &S.tbs[S.queue[S.qhead]];

            S.qhead = (S.qhead + 1) % n;
            S.qlen--;
            ts->queued = 0;
            run_tb(ts);
            /* This replay cannot settle any more (period.h): the rest is not worth simulating. */
            if (S.pd != NULL && S.pd->doomed && S.pd->nevents >= S.pd->stop_events) {
                S.pd->stopped = 1;
                return;
            }
        }
        if (S.pd != NULL)
            take_snapshots();
        if (S.nleft > 0 && S.direct && !direct_advance())
            return; /* nothing more happens: a deadlock */
        if (S.nleft > 0 && !S.direct) {
            S.idle = 1;
            sg_sem_acquire(S.wakeup);
        }
    }
}

/* The connection (src, dst, chan) as the replay holds it: itself, or in a folded replay the
 * member of its orbit sent from a replayed rank. */
static struct conn_key conn_of(int src, int dst, int chan)
{
    if (S.fold != NULL)
        cs_fold_conn(S.fold, &src, &dst);
    return (struct conn_key){src, dst, chan};
}

static int conn_cmp(const void *a, const void *b)
{
    return key_cmp(&((const struct conn *)a)->key, &((const struct conn *)b)->key);
}

static struct conn *find_conn(int src, int dst, int chan)
{
    struct conn probe = {.key = conn_of(src, dst, chan)};

    return bsearch(&probe, S.conns, (size_t)S.nconns, sizeof(*S.conns), conn_cmp);
}

/* The route of connection c: its slowest link class (net > pcie > nvlink > hbm) names the hop,
 * whose latency is the class's per-hop figure cs.link_lat_s.CLASS, counted once per hop whatever
 * the number of links on the route (NCCL's hwLat is a whole hop). */
static int route_conn(struct conn *c)
{
    xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
    enum cs_link_class cls = 0;

    sg_host_get_route(S.hosts[c->key.src], S.hosts[c->key.dst], links);
    /* SimGrid aborts at the first transfer over a missing route: say which one first. */
    if (xbt_dynar_is_empty(links)) {
        xbt_dynar_free(&links);
        return -1;
    }
    for (unsigned long i = 0; i < xbt_dynar_length(links); i++) {
        sg_link_t l = xbt_dynar_get_as(links, i, sg_link_t);
        /* a link's class is looked up by name once, then kept on the link (1024 GPUs: 127k
         * connections over 4k links) */
        enum cs_link_class lc = (enum cs_link_class)(intptr_t)sg_link_get_data(l);

        if (lc == 0) {
            lc = cs_platform_link_class(S.plat, sg_link_get_name(l));
            sg_link_set_data(l, (void *)(intptr_t)lc);
        }
        if (cs_link_class_slower(lc, cls))
            cls = lc;
    }
    xbt_dynar_free(&links);
    c->cls = cls ? cls : CS_LINK_PCIE;
    c->lat_s = S.plat->params.link_lat_s[c->cls];
    return 0;
}

/* The timeline's links and the route of every connection (recording only). */
static int timeline_routes(void)
{
    for (int i = 0; i < S.nconns; i++) {
        const struct conn *c = &S.conns[i];
        struct cs_tl_conn tc = {c->key.src, c->key.dst, c->key.chan, c->sender, c->receiver, 0, 0};
        xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
        int idx[64], n = 0, rc;

        sg_host_get_route(S.hosts[c->key.src], S.hosts[c->key.dst], links);
        for (unsigned long k = 0; k < xbt_dynar_length(links) && n < 64; k++) {
            sg_link_t l = xbt_dynar_get_as(links, k, sg_link_t);
            const char *name = sg_link_get_name(l);
            int j = 0;

            while (j < S.tl->nlinks && strncmp(S.tl->links[j].name, name, 63) != 0)
                j++;
            if (j == S.tl->nlinks)
                j = cs_timeline_add_link(S.tl, name, sg_link_get_bandwidth(l));
            if (j < 0) {
                xbt_dynar_free(&links);
                return -1;
            }
            idx[n++] = j;
        }
        xbt_dynar_free(&links);
        rc = cs_timeline_add_conn(S.tl, &tc, idx, n);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Describe one blocked tb in an indented line of the report. */
static void describe(FILE *fp, int t)
{
    const struct tbstate *ts = &S.tbs[t];
    const struct cs_plan_tb *tb = ts->tb;
    const struct cs_plan_op *op = ts->op < tb->nops ? &tb->ops[ts->op] : NULL;

    fprintf(fp, "  gpu %d tb %d (iteration %d, step %d %s) ", tb->gpu, tb->id, ts->iter,
            op ? op->step : -1, op ? cs_step_type_name(op->type) : "-");
    switch (ts->wait) {
    case W_CREDIT:
        fprintf(fp, "waits for credits on connection %d->%d channel %d (all %d slots in use)\n",
                ts->out->key.src, ts->out->key.dst, ts->out->key.chan, ts->out->window);
        break;
    case W_DATA:
        fprintf(fp, "waits for data from gpu %d on channel %d\n", ts->in->key.src,
                ts->in->key.chan);
        break;
    case W_FLAG:
        fprintf(fp, "waits for the flag of tb %d step %d (iteration %d)\n",
                S.tbs[ts->wait_tb].tb->id, ts->wait_step, ts->wait_iter);
        break;
    default:
        fputs("is blocked\n", fp);
    }
}

/* The tb a blocked tb waits on, or -1. */
static int blocker(int t)
{
    const struct tbstate *ts = &S.tbs[t];

    switch (ts->wait) {
    case W_CREDIT:
        return ts->out->receiver;
    case W_DATA:
        return ts->in->sender;
    case W_FLAG:
        return ts->wait_tb;
    default:
        return -1;
    }
}

/* The deadlock report: the wait-for cycle if there is one, else every blocked tb (capped). */
static char *deadlock_report(int *nblocked)
{
    int ntbs = S.plan->ntbs, cycle_start = -1;
    int *mark = calloc((size_t)ntbs, sizeof(int));
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);

    *nblocked = 0;
    for (int t = 0; t < ntbs; t++)
        *nblocked += !S.tbs[t].done;
    if (fp == NULL) {
        free(mark);
        return NULL;
    }
    fprintf(fp, "deadlock: %d of %d threadblocks never finish\n", *nblocked, ntbs);
    if (mark == NULL) {
        fclose(fp);
        return buf;
    }
    /* Each blocked tb waits on one tb: walk the functional graph to find a cycle. */
    for (int t = 0; t < ntbs && cycle_start < 0; t++) {
        int v = t;

        if (S.tbs[t].done || mark[t])
            continue;
        while (v >= 0 && !S.tbs[v].done && mark[v] == 0) {
            mark[v] = t + 1;
            v = blocker(v);
        }
        if (v >= 0 && !S.tbs[v].done && mark[v] == t + 1)
            cycle_start = v;
    }
    if (cycle_start >= 0) {
        int v = cycle_start, n = 0;

        fputs("wait-for cycle:\n", fp);
        do {
            describe(fp, v);
            v = blocker(v);
        } while (v != cycle_start && ++n < ntbs);
    } else {
        int shown = 0;

        fputs("no wait-for cycle; blocked threadblocks:\n", fp);
        for (int t = 0; t < ntbs && shown < 32; t++)
            if (!S.tbs[t].done) {
                describe(fp, t);
                shown++;
            }
        if (shown < *nblocked)
            fprintf(fp, "  ... and %d more\n", *nblocked - shown);
    }
    fclose(fp);
    free(mark);
    return buf;
}

/* The result as it crosses the pipe. */
struct wire_result {
    struct cs_replay_result res; /* res.report stays NULL: report_len bytes of it follow */
    int report_len;
    char error[1024];
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* SimGrid, with the settings that make a lone flow take exactly latency + size / bandwidth
 * (simgrid.md 3), on the platform. 0, or -1 with SimGrid's refusal of the platform in msg. */
static int start_engine(const struct cs_platform *plat, int verbose, char *msg, size_t len)
{
    char why[400];

    int ac = 1;
    char arg0[] = "collsim", *av[] = {arg0, NULL};

    if (!verbose)
        xbt_log_control_set("root.thresh:critical"); /* stderr is captured by the parent */
    simgrid_init(&ac, av);
    sg_cfg_set_string("network/model", "CM02");
    sg_cfg_set_boolean("network/crosstraffic", "no");
    sg_cfg_set_double("network/TCP-gamma", 0.0);
    sg_cfg_set_double("surf/precision", SIM_PRECISION_S);
    if (cs_sg_load_platform(plat->path, why, sizeof(why)) != 0) {
        snprintf(msg, len, "%s: SimGrid cannot load the platform: %s", plat->path, why);
        return -1;
    }
    /* Seal the platform (no actor runs yet): a graph's routes (Dijkstra routing, the families
     * above 256 GPUs) exist only then, and the replay asks for them before simgrid_run(). */
    simgrid_run_until(0.0);
    return 0;
}

/* S.hosts: GPU g is host gpu<g>. 0, or a message in msg. */
static int map_hosts(const struct cs_plan *plan, const struct cs_platform *plat, char *msg,
                     size_t len)
{
    for (int g = 0; g < plan->ngpus; g++) {
        char name[32];

        snprintf(name, sizeof(name), "gpu%d", g);
        S.hosts[g] = sg_host_by_name(name);
        if (S.hosts[g] == NULL) {
            snprintf(msg, len, "%s: SimGrid found no host %s", plat->path, name);
            return -1;
        }
    }
    return 0;
}

/* The directed connections of the plan with their routes: 0, -1 out of memory (msg empty) or a
 * GPU pair without a route (msg says which). */
static int build_conns(const struct cs_plan *plan, char *msg, size_t len)
{
    struct conn_key *keys = calloc(2 * (size_t)plan->ntbs + 1, sizeof(*keys));
    int nk = 0;

    S.conns = calloc(2 * (size_t)plan->ntbs + 1, sizeof(*S.conns));
    if (keys == NULL || S.conns == NULL) {
        free(keys);
        return -1;
    }
    for (int t = 0; t < plan->ntbs; t++) {
        const struct cs_plan_tb *tb = &plan->tbs[t];

        if (tb->send >= 0)
            keys[nk++] = conn_of(tb->gpu, tb->send, tb->chan);
        if (tb->recv >= 0)
            keys[nk++] = conn_of(tb->recv, tb->gpu, tb->chan);
    }
    qsort(keys, (size_t)nk, sizeof(*keys), key_cmp);
    for (int i = 0; i < nk; i++)
        if (S.nconns == 0 || key_cmp(&keys[i], &S.conns[S.nconns - 1].key) != 0) {
            struct conn *c = &S.conns[S.nconns++];

            c->key = keys[i];
            c->sender = c->receiver = -1;
            if (route_conn(c) != 0) {
                snprintf(msg, len, "%s: no route from gpu%d to gpu%d (channel %d)", S.plat->path,
                         c->key.src, c->key.dst, c->key.chan);
                free(keys);
                return -1;
            }
            c->window = CS_NCCL_STEPS + (c->cls == CS_LINK_NET ? CS_NET_PROXY_DEPTH : 0);
            c->credit = c->window;
            c->in_place = in_place(c);
        }
    free(keys);
    qsort(S.conns, (size_t)S.nconns, sizeof(*S.conns), conn_cmp);
    return 0;
}

/* Transfers carry bytes only: the hop latency delays the receiver (avail), never the sender, so
 * the links' own latencies go to zero once every route has been summed (build_conns). */
static void zero_link_latencies(void)
{
    int nl = (int)sg_link_count();
    sg_link_t *ls = sg_link_list();

    for (int i = 0; i < nl; i++)
        sg_link_set_latency(ls[i], 0);
    xbt_free(ls);
}

/* S.tbs: each tb's state, tied to the connections it sends and receives on. */
static void build_tbs(const struct cs_plan *plan)
{
    for (int t = 0; t < plan->ntbs; t++) {
        struct tbstate *ts = &S.tbs[t];
        const struct cs_plan_tb *tb = &plan->tbs[t];

        ts->tb = tb;
        ts->index = t;
        ts->flag_iter = ts->flag_step = -1;
        ts->waiters = ts->next_waiter = -1;
        ts->phase = PH_START;
        if (tb->send >= 0) {
            ts->out = find_conn(tb->gpu, tb->send, tb->chan);
            ts->out->sender = t;
        }
        if (tb->recv >= 0) {
            ts->in = find_conn(tb->recv, tb->gpu, tb->chan);
            ts->in->receiver = t;
        }
    }
}

/* The replay's one actor (on gpu0's host: it starts transfers between any two hosts). */
static void start_actor(void)
{
    S.wakeup = sg_sem_init(0);
    cs_sg_on_transfer_end(wake);
    sg_actor_create_("replay", S.hosts[0], replay_main, 0, NULL);
}

/* How far apart the GPUs finished their first collective (those with tbs). */
static void end_spread(const struct cs_plan *plan, struct cs_replay_result *res)
{
    double lo = INFINITY, hi = -INFINITY;

    for (int g = 0; g < plan->ngpus; g++)
        if (plan->gpu_tb0[g + 1] > plan->gpu_tb0[g]) {
            lo = fmin(lo, S.ends[g]);
            hi = fmax(hi, S.ends[g]);
        }
    res->spread_s = hi > lo ? hi - lo : 0;
}

/* The ranks' times are summed in whole femtoseconds, exactly, so that a folded replay's
 * representatives give the mean of every rank to the digit (a rank's time under 9000 s). */
#define B2B_QUANTUM_S 1e-15

/* nccl-tests' time of one collective among CS_NCCLTESTS_ITERS back to back (its -n), each GPU's
 * kernel launch_s after its last: per rank, (launch_s + the end of its last) / iterations,
 * averaged over the ranks (nccl-tests' -a 1). The replay ran S.ncoll of them; from there each
 * GPU's collectives end a period apart: over its last two (a cycle of 1 or 2 kernels). */
static double back_to_back_time(const struct cs_plan *plan, double launch_s)
{
    int k = S.ncoll, n = CS_NCCLTESTS_ITERS > k ? CS_NCCLTESTS_ITERS : k, m = 0;
    int p = k >= 3 ? 2 : 1;
    size_t ng = (size_t)plan->ngpus;
    __int128 sum = 0;

    for (int g = 0; g < plan->ngpus; g++) {
        double last = S.ends[(size_t)(k - 1) * ng + (size_t)g], period;

        if (plan->gpu_tb0[g + 1] == plan->gpu_tb0[g])
            continue;
        period = (last - S.ends[(size_t)(k - 1 - p) * ng + (size_t)g]) / p;
        sum += (__int128)llround((launch_s + last + (n - k) * period) / n / B2B_QUANTUM_S);
        m++;
    }
    return m > 0 ? (double)((long double)sum / m) * B2B_QUANTUM_S : 0;
}

/* After simgrid_run: the status and time, or the deadlock's report (returned, malloc'd); the
 * timeline closes with the waits that never ended. */
static char *collect(const struct cs_plan *plan, const struct cs_platform *plat,
                     struct cs_replay_result *res)
{
    double fixed_s = plat->params.launch_s + plat->params.deploy_s;
    int all = 1;

    res->sim_s = sim_now();
    res->ncalls = S.ncalls;
    res->ntransfers = S.ntransfers;
    for (int t = 0; t < plan->ntbs; t++)
        all &= S.tbs[t].done;
    if (S.tl) {
        for (int t = 0; t < plan->ntbs; t++)
            if (!S.tbs[t].done && S.tbs[t].wait != W_NONE)
                record(&S.tbs[t], wait_event(S.tbs[t].wait), blocker(t));
        S.tl->makespan_s = res->sim_s;
        S.tl->offset_s = fixed_s;
        S.tl->complete = all;
    }
    if (S.pd != NULL) {
        take_snapshots();
        flush_event();
        cs_period_finish(S.pd);
        S.pd->makespan_s = res->sim_s;
        S.pd->offset_s = fixed_s;
        S.pd->complete = all;
        S.pd->truncated |= S.tl->truncated;
    }
    if (!all && !(S.pd != NULL && S.pd->stopped)) {
        res->status = CS_REPLAY_DEADLOCK;
        return deadlock_report(&res->nblocked);
    }
    res->status = CS_REPLAY_OK;
    res->time_s = res->sim_s + fixed_s;
    end_spread(plan, res);
    if (S.ncoll > 1)
        res->time_s = plat->params.deploy_s + back_to_back_time(plan, plat->params.launch_s);
    res->colls = S.ncoll;
    return NULL;
}

/* Link indices of SimGrid's links, for the fold's proof: the links sorted by address. */
static sg_link_t *sorted_links;
static int nsorted_links;

static int link_ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const sg_link_t *)a, y = (uintptr_t) * (const sg_link_t *)b;

    return (x > y) - (x < y);
}

/* sorted_links, once. 0, or -1 (out of memory). */
static int sort_links(void)
{
    if (sorted_links == NULL) {
        nsorted_links = (int)sg_link_count();
        sorted_links = sg_link_list();
        if (sorted_links == NULL)
            return -1;
        qsort(sorted_links, (size_t)nsorted_links, sizeof(*sorted_links), link_ptr_cmp);
    }
    return 0;
}

static int link_index(sg_link_t l)
{
    sg_link_t *hit =
        bsearch(&l, sorted_links, (size_t)nsorted_links, sizeof(*sorted_links), link_ptr_cmp);

    return hit == NULL ? -1 : (int)(hit - sorted_links);
}

/* Whether the replay can try to do without SimGrid's network model: no link changes in time and
 * no route takes a link twice. Each sending connection gets its route's slowest link (Bps: the
 * rate SimGrid's max-min gives a lone flow there, less its own bound if lower) and its links
 * that share (SHARED, or a SPLITDUPLEX direction): while a transfer is on one of them, another
 * that would start on it ends the attempt (direct_claim). */
static int direct_ok(const struct cs_plan *plan)
{
    xbt_dynar_t links;
    int *seen, ok = 1, n = 0, cap = 0;

    if (S.plat->varying_line > 0 || plan->ntbs >= DEVENT_TBS || sort_links() != 0)
        return 0;
    seen = malloc(((size_t)nsorted_links + 1) * sizeof(*seen));
    S.dl = calloc((size_t)nsorted_links + 1, sizeof(*S.dl));
    S.dirty = malloc(((size_t)nsorted_links + 1) * sizeof(*S.dirty));
    S.clinks = malloc(((size_t)nsorted_links + 1) * sizeof(*S.clinks));
    S.flow = calloc((size_t)plan->ntbs + 1, sizeof(*S.flow));
    S.comp = malloc(((size_t)plan->ntbs + 1) * sizeof(*S.comp));
    if (seen == NULL || S.dl == NULL || S.dirty == NULL || S.clinks == NULL || S.flow == NULL ||
        S.comp == NULL) {
        free(seen);
        return 0;
    }
    for (int l = 0; l < nsorted_links; l++) {
        seen[l] = -1;
        S.dl[l].Bps = sg_link_get_bandwidth(sorted_links[l]);
    }
    links = xbt_dynar_new(sizeof(sg_link_t), NULL);
    for (int t = 0; ok && t < plan->ntbs; t++) {
        struct conn *c = S.tbs[t].out;

        if (c == NULL || c->sender != t)
            continue;
        c->Bps = 0;
        c->fat_Bps = INFINITY;
        c->shared0 = n;
        xbt_dynar_reset(links);
        sg_host_get_route(S.hosts[c->key.src], S.hosts[c->key.dst], links);
        for (unsigned long h = 0; ok && h < xbt_dynar_length(links); h++) {
            sg_link_t k = xbt_dynar_get_as(links, h, sg_link_t);
            int l = link_index(k);
            double bw = sg_link_get_bandwidth(k);

            ok = l >= 0 && bw > 0 && seen[l] != t;
            if (!ok)
                break;
            seen[l] = t;
            if (c->Bps == 0 || bw < c->Bps)
                c->Bps = bw;
            if (!sg_link_is_shared(k)) {
                if (bw < c->fat_Bps)
                    c->fat_Bps = bw;
                continue;
            }
            if (n == cap) {
                int *g = realloc(S.shared, (size_t)(2 * cap + 64) * sizeof(*g));

                ok = g != NULL;
                if (!ok)
                    break;
                S.shared = g;
                cap = 2 * cap + 64;
            }
            S.shared[n++] = l;
        }
        c->nshared = n - c->shared0;
        ok = ok && c->Bps > 0;
    }
    xbt_dynar_free(&links);
    free(seen);
    return ok;
}

/* The network of plan's connections as fold.h's proof wants it (SimGrid's routes and links):
 * 0, or -1 (out of memory, or a pair without a route: the full replay says which). */
static int fold_net(const struct cs_plan *plan, struct cs_fold_net *net)
{
    xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
    size_t cap = 1024;
    int rc = 0;

    memset(net, 0, sizeof(*net));
    if (sort_links() != 0) {
        xbt_dynar_free(&links);
        return -1;
    }
    net->nlinks = nsorted_links;
    net->links = calloc((size_t)nsorted_links + 1, sizeof(*net->links));
    net->npairs = cs_fold_plan_pairs(plan, &net->pairs);
    net->route = malloc(cap * sizeof(*net->route));
    if (net->npairs < 0 || net->links == NULL || net->route == NULL)
        rc = -1;
    else
        net->first = malloc(((size_t)net->npairs + 1) * sizeof(*net->first));
    if (net->first == NULL)
        rc = -1;
    for (int l = 0; l < nsorted_links && rc == 0; l++) {
        sg_link_t k = sorted_links[l];

        net->links[l] = (struct cs_fold_link){
            sg_link_get_bandwidth(k), sg_link_get_latency(k), sg_link_is_shared(k),
            (int)cs_platform_link_class(S.plat, sg_link_get_name(k))};
    }
    for (int i = 0, n = 0; i < net->npairs && rc == 0; i++) {
        xbt_dynar_reset(links);
        sg_host_get_route(S.hosts[net->pairs[i][0]], S.hosts[net->pairs[i][1]], links);
        if (xbt_dynar_is_empty(links)) {
            rc = -1;
            break;
        }
        net->first[i] = n;
        for (unsigned long h = 0; h < xbt_dynar_length(links); h++) {
            if ((size_t)n == cap) {
                int *r = realloc(net->route, 2 * cap * sizeof(*r));

                if (r == NULL) {
                    rc = -1;
                    break;
                }
                net->route = r;
                cap *= 2;
            }
            net->route[n++] = link_index(xbt_dynar_get_as(links, h, sg_link_t));
            if (net->route[n - 1] < 0)
                rc = -1;
        }
        net->first[i + 1] = n;
    }
    xbt_dynar_free(&links);
    return rc;
}

static void fold_net_cleanup(struct cs_fold_net *net)
{
    cs_free_each(4, net->pairs, net->first, net->route, net->links);
    xbt_free(sorted_links);
    sorted_links = NULL;
}

/* The quotient network of a proven quotient fold (fold.h) as a SimGrid platform, into fd: every
 * GPU's host, the representative of each orbit of links the folded routes cross (its SimGrid name,
 * bandwidth, latency and sharing), and the route of each pair sent from ranks 0..k-1 over the
 * representatives, link for link. 0, or -1. */
static int write_quotient(const struct cs_fold_net *net, int ngpus, int k, const int *rep, int fd)
{
    int dfd = dup(fd);
    FILE *f = dfd < 0 ? NULL : fdopen(dfd, "w");
    char *used = calloc((size_t)net->nlinks + 1, 1);
    int rc = 0;

    if (f == NULL || used == NULL) {
        if (f != NULL)
            fclose(f);
        else if (dfd >= 0)
            close(dfd);
        free(used);
        return -1;
    }
    fputs("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
          "<platform version=\"4.1\">\n<zone id=\"quotient\" routing=\"Full\">\n",
          f);
    for (int g = 0; g < ngpus; g++)
        fprintf(f, "<host id=\"gpu%d\" speed=\"1Gf\"/>\n", g);
    for (int i = 0; i < net->npairs; i++)
        for (int h = net->first[i]; net->pairs[i][0] < k && h < net->first[i + 1]; h++)
            used[rep[net->route[h]]] = 1;
    for (int l = 0; l < net->nlinks; l++) {
        if (!used[l])
            continue;
        fputs("<link id=\"", f);
        cs_xml_put_escaped(f, sg_link_get_name(sorted_links[l]));
        fprintf(f, "\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"%s\"/>\n",
                net->links[l].bw_Bps, net->links[l].lat_s,
                net->links[l].shared ? "SHARED" : "FATPIPE");
    }
    for (int i = 0; i < net->npairs; i++) {
        if (net->pairs[i][0] >= k)
            continue;
        fprintf(f, "<route src=\"gpu%d\" dst=\"gpu%d\" symmetrical=\"NO\">", net->pairs[i][0],
                net->pairs[i][1]);
        for (int h = net->first[i]; h < net->first[i + 1]; h++) {
            fputs("<link_ctn id=\"", f);
            cs_xml_put_escaped(f, sg_link_get_name(sorted_links[rep[net->route[h]]]));
            fputs("\"/>", f);
        }
        fputs("</route>\n", f);
    }
    fputs("</zone>\n</platform>\n", f);
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0)
        rc = -1;
    free(used);
    return rc;
}

/* The smallest of the shifts ks[0..nk) (ascending) that the routes and links keep (fold.h), into
 * *f: 1 with *quotient 0, or, where the folded flows share links with the others, one whose
 * quotient network is exact (qfd >= 0: written there, *quotient 1); else 0 with why (about the
 * largest shift). */
static int prove_fold(const struct cs_plan *plan, const int *ks, int nk, int qfd, struct cs_fold *f,
                      int *quotient, char *why, size_t len)
{
    struct cs_fold_net net;
    int found = 0, *rep = NULL;

    *quotient = 0;
    if (fold_net(plan, &net) != 0 ||
        (qfd >= 0 && (rep = malloc(((size_t)net.nlinks + 1) * sizeof(*rep))) == NULL)) {
        snprintf(why, len, "the routes could not be compared");
        fold_net_cleanup(&net);
        return 0;
    }
    for (int i = 0; i < nk && !found; i++) {
        int ok = cs_fold_check_net(&net, plan->ngpus, ks[i], NULL, 0);

        if (ok < 0)
            break;
        if (ok == 0 && rep != NULL) {
            ok = cs_fold_check_quotient(&net, plan->ngpus, ks[i], rep, NULL, 0);
            if (ok < 0)
                break;
            if (ok == 1 && write_quotient(&net, plan->ngpus, ks[i], rep, qfd) != 0)
                break;
            *quotient = ok;
        }
        if (ok == 1) {
            *f = (struct cs_fold){plan->ngpus, ks[i], plan->ngpus / ks[i], *quotient};
            found = 1;
        }
    }
    if (!found && nk > 0 && cs_fold_check_net(&net, plan->ngpus, ks[nk - 1], why, len) == 0 &&
        rep != NULL) {
        /* the reason the quotient of the largest shift gives, when it is not the routes' map */
        char qwhy[200];

        if (cs_fold_check_quotient(&net, plan->ngpus, ks[nk - 1], rep, qwhy, sizeof(qwhy)) == 0 &&
            strstr(why, "carries flows of other orbits") != NULL) {
            size_t n = strlen(why);

            snprintf(why + n, len - n, "; %s", qwhy);
        }
    }
    free(rep);
    fold_net_cleanup(&net);
    return found;
}

/* What a folded attempt tells the child before anything else. */
enum fold_verdict { FOLD_USED = 1, FOLD_REFUSED, FOLD_DEADLOCK, FOLD_FAILED, FOLD_QUOTIENT };
struct fold_head {
    int verdict;
    struct cs_fold fold;
    char note[240];
};

/* A folded attempt: the candidate shifts (ascending), where a quotient network goes, or the fold
 * already proven whose quotient network the platform is. */
struct fold_try {
    const int *ks;
    int nk;
    int qfd;                     /* -1: no quotient */
    const struct cs_fold *given; /* non-NULL: replay folded by it, no proof */
};

/* Set SimGrid up, replay, write the result to fd; the exit status. With a folded attempt ft, the
 * result follows a fold_head, and is written only when the folded replay is proven (or given) and
 * completes; a proven quotient fold writes its network to ft->qfd and only the head (verdict
 * FOLD_QUOTIENT): its replay is another process's, on that network (ft->given). */
static int simulate(const struct cs_plan *plan, const struct cs_platform *plat,
                    const struct cs_replay_opts *opts, const struct fold_try *ft, const char *note,
                    int fd)
{
    struct wire_result wr;
    struct fold_head head;
    struct cs_plan folded;
    struct cs_fold fold;
    const struct cs_plan *full = plan;
    char *report = NULL;
    struct rusage ru;
    long long stop_events = 0;
    double t0;

    memset(&wr, 0, sizeof(wr));
    memset(&S, 0, sizeof(S));
    memset(&head, 0, sizeof(head));
    memset(&folded, 0, sizeof(folded));
    if (note != NULL)
        snprintf(wr.res.fold, sizeof(wr.res.fold), "%s", note);
    S.plan = plan;
    S.plat = plat;
    S.par = plat->params;
    /* the CTA's threads against the ones the protocol's rates are given for: the MSCCL
     * executor's LL runs more than NCCL's; NCCL runs fewer at small sizes (gen nccl) */
    if (!plan->nccl_kernel && plan->proto == CS_PROTO_LL)
        cs_params_narrow(&S.par, CS_PROTO_LL, CS_MSCCL_LL_THREADS, CS_NCCL_LL_THREADS);
    else if (plan->nccl_kernel && plan->nccl_threads > 0 &&
             plan->nccl_threads != plan->nccl_max_threads)
        cs_params_narrow(&S.par, plan->proto, plan->nccl_threads, plan->nccl_max_threads);
    S.tl = opts->timeline;
    if (S.tl == NULL && opts->period != NULL) {
        S.pd = opts->period;
        cs_timeline_init(&S.one, 2);
        S.tl = &S.one;
    }
    S.hosts = calloc((size_t)plan->ngpus, sizeof(*S.hosts));
    S.tbs = calloc((size_t)plan->ntbs + 1, sizeof(*S.tbs));
    S.queue = calloc((size_t)plan->ntbs + 1, sizeof(*S.queue));
    if (S.pd != NULL) {
        S.snap_pending = calloc((size_t)plan->ntbs + 1, sizeof(*S.snap_pending));
        S.snap_iter = malloc(((size_t)plan->ntbs + 1) * sizeof(*S.snap_iter));
        for (int t = 0; S.snap_iter != NULL && t <= plan->ntbs; t++)
            S.snap_iter[t] = -1;
    }
    if (start_engine(plat, opts->verbose, wr.error, sizeof(wr.error)) != 0 || S.hosts == NULL ||
        S.tbs == NULL || S.queue == NULL ||
        (S.pd != NULL && (S.snap_pending == NULL || S.snap_iter == NULL))) {
        if (!wr.error[0])
            snprintf(wr.error, sizeof(wr.error), "out of memory");
    } else if (map_hosts(plan, plat, wr.error, sizeof(wr.error)) != 0) {
        /* wr.error says why */
    } else if (ft != NULL) {
        /* A folded attempt: the proof on the routes, then the replay of ranks 0..k-1. */
        int quotient = 0;

        if (ft->given != NULL) {
            fold = *ft->given;
        } else if (!prove_fold(plan, ft->ks, ft->nk, ft->qfd, &fold, &quotient, head.note,
                               sizeof(head.note))) {
            head.verdict = FOLD_REFUSED;
            return cs_fd_write_all(fd, &head, sizeof(head)) != 0 ? 3 : 0;
        } else if (quotient) {
            head.verdict = FOLD_QUOTIENT;
            head.fold = fold;
            return cs_fd_write_all(fd, &head, sizeof(head)) != 0 ? 3 : 0;
        }
        if (cs_fold_plan_init(&folded, plan, &fold) != 0) {
            head.verdict = FOLD_FAILED;
            return cs_fd_write_all(fd, &head, sizeof(head)) != 0 ? 3 : 0;
        }
        S.fold = &fold;
        S.plan = plan = &folded;
        /* the early stop's event count, as the full replay would reach it: order times fewer
         * (rounded up, so the events expanded below are at least as many as the full's) */
        if (S.pd != NULL && S.pd->stop_events > 0) {
            stop_events = S.pd->stop_events;
            S.pd->stop_events = (stop_events + fold.order - 1) / fold.order;
        }
    }
    if (!wr.error[0] && build_conns(plan, wr.error, sizeof(wr.error)) != 0 && !wr.error[0])
        snprintf(wr.error, sizeof(wr.error), "out of memory");
    if (!wr.error[0]) {
        S.ncoll = opts->back_to_back > 1 && S.tl == NULL && S.pd == NULL ? opts->back_to_back : 1;
        S.gpu_left = calloc((size_t)plan->ngpus + 1, sizeof(*S.gpu_left));
        S.gpu_coll = calloc((size_t)plan->ngpus + 1, sizeof(*S.gpu_coll));
        S.ends = calloc((size_t)S.ncoll * (size_t)plan->ngpus + 1, sizeof(*S.ends));
        if (S.gpu_left == NULL || S.gpu_coll == NULL || S.ends == NULL)
            snprintf(wr.error, sizeof(wr.error), "out of memory");
        for (int g = 0; S.gpu_left != NULL && g < plan->ngpus; g++)
            S.gpu_left[g] = plan->gpu_tb0[g + 1] - plan->gpu_tb0[g];
    }
    if (!wr.error[0]) {
        zero_link_latencies();
        build_tbs(plan);
        if (opts->timeline && timeline_routes() != 0)
            snprintf(wr.error, sizeof(wr.error), "out of memory");
    }
    if (!wr.error[0] && !opts->no_direct && opts->timeline == NULL && direct_ok(plan)) {
        /* The direct attempt runs in a process of its own, which writes the result; should two
         * links' shares need SimGrid's rounding, it ends with DIRECT_MET and this one runs
         * SimGrid's engine.
         * Not with a timeline: its events at one instant would be in another order than the
         * engine's (which tb SimGrid wakes first), the same times, another trace file. */
        pid_t pid = fork();

        if (pid == 0) {
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
                _exit(127);
            S.direct = 1;
        } else if (pid > 0) {
            int st;

            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != DIRECT_MET)
                return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
        }
    }
    if (!wr.error[0]) {
        wr.res.direct = S.direct;
        t0 = now_s();
        if (S.direct) {
            replay_main(0, NULL);
        } else {
            start_actor();
            simgrid_run();
        }
        wr.res.wall_s = now_s() - t0;
        report = collect(plan, plat, &wr.res);
    }
    if (S.fold != NULL) {
        /* A deadlock is reported by the full replay, whose report names every rank. */
        if (wr.error[0] || wr.res.status != CS_REPLAY_OK) {
            head.verdict = wr.error[0] ? FOLD_FAILED : FOLD_DEADLOCK;
            snprintf(head.note, sizeof(head.note), "%.200s",
                     wr.error[0] ? wr.error : "the folded replay deadlocks");
            return cs_fd_write_all(fd, &head, sizeof(head)) != 0 ? 3 : 0;
        }
        wr.res.ncalls *= fold.order;
        wr.res.ntransfers *= fold.order;
        if (S.pd != NULL) {
            if (stop_events > 0)
                S.pd->stop_events = stop_events;
            if (cs_fold_expand_period(&fold, full, S.pd) != 0)
                S.pd->invalid = 1;
        }
        head.verdict = FOLD_USED;
        head.fold = fold;
        cs_fold_describe(&fold, head.note, sizeof(head.note));
        wr.res.fold_shift = fold.shift;
        wr.res.fold_order = fold.order;
        snprintf(wr.res.fold, sizeof(wr.res.fold), "%s", head.note);
        if (cs_fd_write_all(fd, &head, sizeof(head)) != 0)
            return 3;
    }
    getrusage(RUSAGE_SELF, &ru);
    wr.res.maxrss_kb = ru.ru_maxrss;
    wr.report_len = report ? (int)strlen(report) : 0;
    if (cs_fd_write_all(fd, &wr, sizeof(wr)) != 0 ||
        (wr.report_len > 0 && cs_fd_write_all(fd, report, (size_t)wr.report_len) != 0) ||
        (opts->timeline && !wr.error[0] && cs_timeline_write(fd, S.tl) != 0) ||
        (S.pd && !wr.error[0] && cs_period_write(fd, S.pd) != 0))
        return 3;
    /* SimGrid objects and this process go away together; nothing else to release. */
    free(report);
    return wr.error[0] ? 1 : 0;
}

/* Copy everything from one descriptor to another until the end: 0, or -1. */
static int relay(int from, int to)
{
    char buf[65536];
    ssize_t n;

    while ((n = read(from, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || cs_fd_write_all(to, buf, (size_t)n) != 0)
            return -1;
    }
    return 0;
}

/* One folded attempt in a process of its own: *head as it says, and when the folded replay was
 * used its result relayed to fd (*status 3 when that failed). */
static void fold_child(const struct cs_plan *plan, const struct cs_platform *plat,
                       const struct cs_replay_opts *opts, const struct fold_try *ft,
                       struct fold_head *head, int fd, int *status)
{
    int fds[2], st;
    pid_t pid, parent = getpid();

    memset(head, 0, sizeof(*head));
    head->verdict = FOLD_FAILED;
    if (pipe(fds) != 0)
        return;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        close(fds[0]);
        _exit(simulate(plan, plat, opts, ft, NULL, fds[1]));
    }
    close(fds[1]);
    if (cs_fd_read_all(fds[0], head, sizeof(*head)) != 0)
        head->verdict = FOLD_FAILED;
    if (head->verdict == FOLD_USED && relay(fds[0], fd) != 0)
        *status = 3;
    close(fds[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (head->verdict == FOLD_USED && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
        *status = 3;
    if (head->verdict == FOLD_QUOTIENT && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
        head->verdict = FOLD_FAILED;
    head->note[sizeof(head->note) - 1] = '\0';
}

/* A temporary file for the quotient network, already unlinked (its descriptor is its name, for
 * the process that loads it: /proc/self/fd/N): the descriptor, or -1. */
static int quotient_file(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/collsim-quotient-XXXXXX", dir && *dir ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* The folded attempt, in a process of its own (SimGrid's engine loads one platform once, and
 * the full replay may follow), and for a quotient fold one more on the quotient network: 1 when
 * it replayed folded and its result went to fd (*status set to 3 when that failed), else 0 with
 * note saying why the full replay runs. */
static int try_fold(const struct cs_plan *plan, const struct cs_platform *plat,
                    const struct cs_replay_opts *opts, int fd, char *note, size_t len, int *status)
{
    int ks[64], nk;
    struct fold_head head;
    struct fold_try ft = {0};

    note[0] = '\0';
    if (opts->no_fold) {
        snprintf(note, len, "not folded: --no-fold");
        return 0;
    }
    if (opts->timeline != NULL && !opts->fold_timeline) {
        snprintf(note, len, "not folded: the trace records every rank");
        return 0;
    }
    if (plan->ngpus < 2)
        return 0;
    if (!cs_plan_chunks_even(plan)) {
        snprintf(note, len, "not folded: NCCL's chunks at this count are not all the same size");
        return 0;
    }
    if (plat->varying_line > 0) {
        snprintf(note, len,
                 "not folded: a link at %.100s:%d changes in time or is a WIFI link, which the "
                 "proof does not compare",
                 plat->path, plat->varying_line);
        return 0;
    }
    nk = cs_fold_plan_shifts(plan, &plat->params, ks, (int)(sizeof(ks) / sizeof(ks[0])), note, len);
    if (nk == 0) {
        char why[200];

        snprintf(why, sizeof(why), "%s", note);
        snprintf(note, len, "not folded: no rank shift maps the schedule onto itself (%.150s)",
                 why);
        return 0;
    }
    ft.ks = ks;
    ft.nk = nk;
    ft.qfd = quotient_file();
    fold_child(plan, plat, opts, &ft, &head, fd, status);
    if (head.verdict == FOLD_QUOTIENT) {
        struct cs_platform q = *plat;
        struct cs_fold given = head.fold;
        char qpath[64];

        snprintf(qpath, sizeof(qpath), "/proc/self/fd/%d", ft.qfd);
        q.path = qpath;
        ft.given = &given;
        fold_child(plan, &q, opts, &ft, &head, fd, status);
    }
    if (ft.qfd >= 0)
        close(ft.qfd);
    if (head.verdict == FOLD_USED)
        return 1;
    if (head.verdict == FOLD_REFUSED)
        snprintf(note, len,
                 "not folded: the platform breaks every rank shift of the schedule (%.150s)",
                 head.note);
    else if (head.verdict == FOLD_DEADLOCK)
        snprintf(note, len, "not folded: %.150s; every rank replayed for the report", head.note);
    else
        snprintf(note, len, "not folded: the folded replay failed (%.150s)",
                 head.note[0] ? head.note : "no result");
    return 0;
}

/* Runs in the child: the folded replay when a symmetry is proven and it completes, else the
 * full one, whose result carries why it was not folded. Returns the exit status. */
static int child_run(const struct cs_plan *plan, const struct cs_platform *plat,
                     const struct cs_replay_opts *opts, int fd)
{
    char note[240];
    int status = 0;

    if (try_fold(plan, plat, opts, fd, note, sizeof(note), &status))
        return status;
    if (plan->rep_gpus > 0) { /* the other GPUs' tbs were never written: no full replay */
        struct wire_result wr;

        memset(&wr, 0, sizeof(wr));
        snprintf(wr.error, sizeof(wr.error),
                 "the schedule holds its first %d GPUs only, for the folded replay, which did not "
                 "run (%.150s)",
                 plan->rep_gpus, note[0] ? note : "no fold");
        return cs_fd_write_all(fd, &wr, sizeof(wr)) != 0 ? 3 : 1;
    }
    return simulate(plan, plat, opts, NULL, note, fd);
}

/* The first meaningful line the failed child wrote on stderr (SimGrid's message, without its
 * log prefix and backtrace), or "". */
static void child_stderr(FILE *f, char *buf, size_t len)
{
    char line[512];

    buf[0] = '\0';
    if (f == NULL)
        return;
    rewind(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        char *p = line, *q;

        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || strncmp(line, "  ->", 4) == 0 ||
            strncmp(line, "Backtrace", 9) == 0 || strstr(line, "__asan_handle_no_return") ||
            strstr(line, "False positive") || strstr(line, "google/sanitizers"))
            continue;
        if ((q = strstr(p, "CRITICAL] ")) != NULL)
            p = q + 10;
        snprintf(buf, len, "%s", p);
        return;
    }
}

/* What the simulating child sends back through fd: its result, the deadlock report (a new string
 * in *report, or NULL) and the timeline, or else the comparisons, when asked for. 0, or -1 when it
 * is cut short. */
static int read_child(int fd, const struct cs_replay_opts *opts, struct wire_result *wr,
                      char **report)
{
    memset(wr, 0, sizeof(*wr));
    if (cs_fd_read_all(fd, wr, sizeof(*wr)) != 0)
        return -1;
    if (wr->report_len > 0) {
        if ((*report = malloc((size_t)wr->report_len + 1)) == NULL ||
            cs_fd_read_all(fd, *report, (size_t)wr->report_len) != 0)
            return -1;
        (*report)[wr->report_len] = '\0';
    }
    if (opts->timeline != NULL && !wr->error[0] && cs_timeline_read(fd, opts->timeline) != 0)
        return -1;
    if (opts->timeline == NULL && opts->period != NULL && !wr->error[0] &&
        cs_period_read(fd, opts->period) != 0)
        return -1;
    return 0;
}

int cs_replay_start(const struct cs_plan *plan, const struct cs_platform *plat,
                    const struct cs_replay_opts *opts, struct cs_replay_job *job,
                    struct cs_error *err)
{
    static const struct cs_replay_opts defopts = {0};
    int fds[2], rc;
    pid_t parent;

    memset(job, 0, sizeof(*job));
    job->opts = opts != NULL ? opts : &defopts;
    job->plat_path = plat->path;
    job->fd = -1;
    rc = cs_replay_check(plan, plat, err);
    if (rc != 0)
        return rc;
    if (pipe(fds) != 0)
        return cs_error_fail(err, CS_ERR_SIM, NULL, 0, "pipe: %s", strerror(errno));
    /* Without --verbose the child's stderr (SimGrid's critical messages, such as its own deadlock
     * notice) goes to a temporary file, shown only if the child fails. */
    job->errf = job->opts->verbose ? NULL : tmpfile();
    fflush(NULL);
    parent = getpid();
    job->pid = fork();
    if (job->pid < 0) {
        if (job->errf)
            fclose(job->errf);
        close(fds[0]);
        close(fds[1]);
        return cs_error_fail(err, CS_ERR_SIM, NULL, 0, "fork: %s", strerror(errno));
    }
    if (job->pid == 0) {
        /* The simulation dies with whoever asked for it (a killed predict or sweep worker). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        close(fds[0]);
        if (job->errf)
            dup2(fileno(job->errf), 2);
        _exit(child_run(plan, plat, job->opts, fds[1]));
    }
    close(fds[1]);
    job->fd = fds[0];
    return 0;
}

int cs_replay_finish(struct cs_replay_job *job, struct cs_replay_result *res, struct cs_error *err)
{
    struct wire_result wr;
    char *report = NULL;
    int rc, status;

    rc = read_child(job->fd, job->opts, &wr, &report);
    close(job->fd);
    while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(report);
        if (wr.error[0])
            cs_error_set(err, NULL, 0, "%s", wr.error);
        else {
            char why[600];

            child_stderr(job->errf, why, sizeof(why));
            if (WIFSIGNALED(status))
                cs_error_set(err, job->plat_path, 0, "the simulation process died of signal %d%s%s",
                             WTERMSIG(status), why[0] ? ": " : "", why);
            else
                cs_error_set(err, job->plat_path, 0, "the simulation process failed (exit %d)%s%s",
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1, why[0] ? ": " : "", why);
        }
        rc = CS_ERR_SIM;
    } else {
        *res = wr.res;
        res->report = report;
    }
    if (job->errf)
        fclose(job->errf);
    return rc;
}

void cs_replay_cancel(struct cs_replay_job *job)
{
    int status;

    kill(job->pid, SIGKILL);
    close(job->fd);
    while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (job->errf)
        fclose(job->errf);
}

int cs_replay_run(const struct cs_plan *plan, const struct cs_platform *plat,
                  const struct cs_replay_opts *opts, struct cs_replay_result *res,
                  struct cs_error *err)
{
    struct cs_replay_job job;
    int rc = cs_replay_start(plan, plat, opts, &job, err);

    return rc != 0 ? rc : cs_replay_finish(&job, res, err);
}

void cs_replay_simgrid_version(char *buf, size_t len)
{
    int major, minor, patch;

    sg_version_get(&major, &minor, &patch);
    snprintf(buf, len, "%d.%d.%d", major, minor, patch);
}

void cs_replay_result_cleanup(struct cs_replay_result *res)
{
    if (res == NULL)
        return;
    free(res->report);
    res->report = NULL;
}
