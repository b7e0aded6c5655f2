/* stats.c: link and threadblock statistics and the critical path of a replay timeline. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

static int is_work(int kind)
{
    return kind == CS_TL_OVERHEAD || kind == CS_TL_UNIT || kind == CS_TL_LOCAL ||
           kind == CS_TL_LATENCY || kind == CS_TL_LAUNCH;
}

static int is_wait(int kind)
{
    return kind == CS_TL_WAIT_DATA || kind == CS_TL_WAIT_CREDIT || kind == CS_TL_WAIT_FLAG;
}

/* The keys an event is grouped under (*k points at them); returns how many. */
typedef int keys_fn(const struct cs_timeline *tl, const struct cs_tl_event *e, const int **k);

/* A tb's work and wait events: what the critical path walks. */
static int tb_key(const struct cs_timeline *tl, const struct cs_tl_event *e, const int **k)
{
    (void)tl;
    *k = &e->tb;
    return is_work(e->kind) || is_wait(e->kind);
}

/* The links of the route of a unit that puts bytes on the wire. */
static int link_keys(const struct cs_timeline *tl, const struct cs_tl_event *e, const int **k)
{
    if (e->kind != CS_TL_UNIT || e->out_conn < 0 || (e->wire_bytes <= 0 && e->wire_s <= 0))
        return 0;
    *k = &tl->route[tl->conns[e->out_conn].route0];
    return tl->conns[e->out_conn].nroute;
}

/* Group the events by key, in timeline order, an event under each of its keys in 0 .. nkeys - 1.
 * 0 and g filled, or CS_ERR_NOMEM (g untouched). */
static int group(const struct cs_timeline *tl, int nkeys, keys_fn *keys, struct cs_link_units *g)
{
    long long *first = calloc((size_t)nkeys + 2, sizeof(*first)), *ev, max = 0;
    const int *k;

    if (first == NULL)
        return CS_ERR_NOMEM;
    /* Count each key's events, then place them; first[k + 1] is the fill pointer of key k while
     * placing, and ends as where key k + 1 starts. */
    for (long long i = 0; i < tl->nevents; i++)
        for (int j = 0, n = keys(tl, &tl->events[i], &k); j < n; j++)
            if (k[j] >= 0 && k[j] < nkeys)
                first[k[j] + 2]++;
    for (int l = 0; l < nkeys; l++) {
        max = first[l + 2] > max ? first[l + 2] : max;
        first[l + 2] += first[l + 1];
    }
    if ((ev = malloc((size_t)(first[nkeys + 1] + 1) * sizeof(*ev))) == NULL) {
        free(first);
        return CS_ERR_NOMEM;
    }
    for (long long i = 0; i < tl->nevents; i++)
        for (int j = 0, n = keys(tl, &tl->events[i], &k); j < n; j++)
            if (k[j] >= 0 && k[j] < nkeys)
                ev[first[k[j] + 1]++] = i;
    *g = (struct cs_link_units){first, ev, max};
    return 0;
}

/* The event of tb t that covers instant t_s (start < t_s <= end), or -1. */
static long long covering(const struct cs_timeline *tl, const struct cs_link_units *x, int t,
                          double t_s)
{
    long long lo = x->first[t], hi = x->first[t + 1];

    /* first event whose end >= t_s (ends are non-decreasing per tb) */
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;

        if (tl->events[x->ev[mid]].end_s < t_s)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < x->first[t + 1] && tl->events[x->ev[lo]].start_s < t_s)
        return x->ev[lo];
    return -1;
}

static int push(struct cs_critpath *cp, int *cap, struct cs_crit_part p)
{
    struct cs_crit_part *slot = cs_array_slot((void **)&cp->parts, cp->nparts, cap, sizeof(p));

    if (slot == NULL)
        return CS_ERR_NOMEM;
    *slot = p;
    cp->nparts++;
    return 0;
}

int cs_stats_critical_path(const struct cs_plan *plan, const struct cs_timeline *tl,
                           struct cs_critpath *cp)
{
    struct cs_link_units x; /* the events of each tb */
    int cap = 0, cur = -1, via = 0, rc, jumps = 0;
    double t, last = -1;

    memset(cp, 0, sizeof(*cp));
    if (tl->truncated || !tl->complete)
        return CS_ERR_USAGE;
    rc = group(tl, plan->ntbs, tb_key, &x);
    if (rc != 0)
        return rc;
    /* The tb that finishes last. */
    for (int k = 0; k < plan->ntbs; k++)
        if (x.first[k + 1] > x.first[k] && tl->events[x.ev[x.first[k + 1] - 1]].end_s > last) {
            last = tl->events[x.ev[x.first[k + 1] - 1]].end_s;
            cur = k;
        }
    t = cur >= 0 ? tl->makespan_s : 0;
    /* Walk back; parts are collected latest first and reversed at the end. */
    while (t > 0 && rc == 0) {
        long long i = covering(tl, &x, cur, t);
        const struct cs_tl_event *e = i >= 0 ? &tl->events[i] : NULL;

        if (e != NULL && is_wait(e->kind) && e->other >= 0 && e->other < plan->ntbs &&
            jumps <= plan->ntbs) {
            /* The instant the wait ended, the other tb did what ended it. */
            cur = e->other;
            via = e->kind;
            jumps++;
            continue;
        }
        if (e == NULL || !is_work(e->kind)) {
            cp->unattributed_s = t;
            break;
        }
        rc = push(cp, &cap, (struct cs_crit_part){i, e->start_s, t - e->start_s, via});
        via = 0;
        jumps = 0;
        t = e->start_s;
    }
    if (rc == 0)
        rc = push(cp, &cap, (struct cs_crit_part){-1, -tl->offset_s, tl->offset_s, via});
    cs_link_units_cleanup(&x);
    if (rc != 0) {
        cs_critpath_cleanup(cp);
        return rc;
    }
    for (int a = 0, b = cp->nparts - 1; a < b; a++, b--) {
        struct cs_crit_part p = cp->parts[a];

        cp->parts[a] = cp->parts[b];
        cp->parts[b] = p;
    }
    for (int k = 0; k < cp->nparts; k++)
        cp->total_s += cp->parts[k].dur_s;
    cp->total_s += cp->unattributed_s;
    return 0;
}

void cs_critpath_cleanup(struct cs_critpath *cp)
{
    if (cp == NULL)
        return;
    free(cp->parts);
    memset(cp, 0, sizeof(*cp));
}

static const char *via_name(int kind)
{
    static const char *const names[] = {
        "its data ends a wait of", "its freed credits end a wait of", "its flag ends a wait of"};

    return is_wait(kind) ? names[kind - CS_TL_WAIT_DATA] : "";
}

int cs_stats_link_units(const struct cs_timeline *tl, struct cs_link_units *lu)
{
    return group(tl, tl->nlinks, link_keys, lu);
}

void cs_link_units_cleanup(struct cs_link_units *lu)
{
    free(lu->first);
    free(lu->ev);
    lu->first = lu->ev = NULL;
}

struct span {
    double a, b;
};

static int span_cmp(const void *x, const void *y)
{
    const struct span *p = x, *q = y;

    return p->a < q->a ? -1 : p->a > q->a;
}

/* The time covered by the union of n spans (sorted here). */
static double busy_time(struct span *sp, long long n)
{
    double busy = 0, end = -1;

    qsort(sp, (size_t)n, sizeof(*sp), span_cmp);
    for (long long k = 0; k < n; k++) {
        double s = sp[k].a > end ? sp[k].a : end;

        if (sp[k].b > s)
            busy += sp[k].b - s;
        if (sp[k].b > end)
            end = sp[k].b;
    }
    return busy;
}

static int write_links(FILE *fp, const struct cs_timeline *tl)
{
    struct cs_link_units lu;
    struct span *sp;
    double T = tl->makespan_s;
    int rc = cs_stats_link_units(tl, &lu);

    if (rc != 0)
        return rc;
    if ((sp = malloc((size_t)(lu.max + 1) * sizeof(*sp))) == NULL) {
        cs_link_units_cleanup(&lu);
        return CS_ERR_NOMEM;
    }
    fprintf(fp,
            "links (wire bytes; busy: share of the replay's %.3f us with a transfer on the "
            "link; rate: bytes over that time)\n",
            T * 1e6);
    fprintf(fp, "  %-28s %14s %7s %10s %10s %6s\n", "link", "bytes", "busy", "GB/s", "cap GB/s",
            "util");
    for (int l = 0; l < tl->nlinks; l++) {
        long long n = 0;
        double bytes = 0, busy, rate;

        for (long long k = lu.first[l]; k < lu.first[l + 1]; k++) {
            const struct cs_tl_event *e = &tl->events[lu.ev[k]];

            if (e->wire_bytes <= 0)
                continue;
            bytes += e->wire_bytes;
            sp[n++] = (struct span){e->start_s, e->start_s + e->wire_s};
        }
        if (n == 0)
            continue;
        busy = busy_time(sp, n);
        rate = T > 0 ? bytes / T : 0;
        fprintf(fp, "  %-28s %14.0f %6.1f%% %10.3f %10.3f %5.1f%%\n", tl->links[l].name, bytes,
                T > 0 ? 100 * busy / T : 0, rate / 1e9, tl->links[l].bw_Bps / 1e9,
                tl->links[l].bw_Bps > 0 ? 100 * rate / tl->links[l].bw_Bps : 0);
    }
    free(sp);
    cs_link_units_cleanup(&lu);
    return 0;
}

static void write_tbs(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl)
{
    /* per tb: busy, wait data, wait credit, wait flag (the column of each kind of event: a unit in
     * flight for the hop latency is, to its receiver, a wait for data), then end */
    static const int col[] = {
        [CS_TL_OVERHEAD] = 0,  [CS_TL_UNIT] = 0,        [CS_TL_LOCAL] = 0,     [CS_TL_LATENCY] = 1,
        [CS_TL_WAIT_DATA] = 1, [CS_TL_WAIT_CREDIT] = 2, [CS_TL_WAIT_FLAG] = 3, [CS_TL_LAUNCH] = 0};
    double *acc = calloc((size_t)plan->ntbs * 5 + 1, sizeof(*acc)), *a;

    if (acc == NULL)
        return;
    for (long long i = 0; i < tl->nevents; i++) {
        const struct cs_tl_event *e = &tl->events[i];

        if (e->tb < 0 || e->tb >= plan->ntbs || !(is_work(e->kind) || is_wait(e->kind)))
            continue;
        a = &acc[5 * e->tb];
        a[col[e->kind]] += e->end_s - e->start_s;
        if (e->end_s > a[4])
            a[4] = e->end_s;
    }
    fprintf(fp, "threadblocks (us; waits by what they wait for; %s)\n",
            tl->complete ? "end: when its last step finished"
                         : "deadlocked: unfinished tbs stop at their last recorded event");
    fprintf(fp, "  %4s %4s %5s %5s %5s %12s %12s %12s %12s %12s\n", "gpu", "tb", "send", "recv",
            "chan", "busy", "wait-data", "wait-credit", "wait-flag", "end");
    for (int t = 0; t < plan->ntbs; t++) {
        const struct cs_plan_tb *tb = &plan->tbs[t];

        a = &acc[5 * t];

        fprintf(fp, "  %4d %4d %5d %5d %5d %12.3f %12.3f %12.3f %12.3f %12.3f\n", tb->gpu, tb->id,
                tb->send, tb->recv, tb->chan, a[0] * 1e6, a[1] * 1e6, a[2] * 1e6, a[3] * 1e6,
                a[4] * 1e6);
    }
    free(acc);
}

/* What a part of the critical path is, in words. */
/* What the time of the critical path goes to: by[BY_*]. */
enum { BY_OVERHEAD, BY_NETWORK, BY_RATE, BY_LOCAL, BY_LAUNCH, NBY };

static void part_kind(const struct cs_timeline *tl, const struct cs_crit_part *p, double *by)
{
    const struct cs_tl_event *e = &tl->events[p->ev];

    switch (e->kind) {
    case CS_TL_OVERHEAD:
        by[BY_OVERHEAD] += p->dur_s;
        break;
    case CS_TL_LOCAL:
        by[BY_LOCAL] += p->dur_s;
        break;
    case CS_TL_LAUNCH:
        by[BY_LAUNCH] += p->dur_s;
        break;
    case CS_TL_LATENCY:
        by[BY_NETWORK] += p->dur_s; /* the hop latency of the route */
        break;
    default: {
        /* A unit's network time runs from its start; whatever follows is the tb's own rate. */
        double w = e->out_conn >= 0 ? e->wire_s - (p->start_s - e->start_s) : 0;

        if (w < 0)
            w = 0;
        if (w > p->dur_s)
            w = p->dur_s;
        by[BY_NETWORK] += w;
        by[BY_RATE] += p->dur_s - w;
    }
    }
}

static void write_segment(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl,
                          const struct cs_critpath *cp, int a, int b, double total)
{
    static const char *const names[NBY] = {"call overhead", "network", "tb copy/reduce rate",
                                           "local op", "tb start"};
    double by[NBY] = {0}, dur = 0;
    const struct cs_tl_event *e0 = &tl->events[cp->parts[a].ev];
    const struct cs_plan_tb *tb = &plan->tbs[e0->tb];
    const struct cs_plan_op *op = &tb->ops[e0->op];
    int c0 = e0->call, c1 = tl->events[cp->parts[b - 1].ev].call;

    for (int k = a; k < b; k++) {
        part_kind(tl, &cp->parts[k], by);
        dur += cp->parts[k].dur_s;
    }
    fprintf(fp, "  %12.3f %6.2f%%  gpu %d tb %d iteration %d step %d %s", dur * 1e6,
            100 * dur / total, tb->gpu, tb->id, e0->iter, op->step, cs_step_type_name(op->type));
    if (c0 != c1)
        fprintf(fp, " calls %d-%d", c0, c1);
    else if (op->ncalls > 1 && op->type != CS_STEP_CPY && op->type != CS_STEP_RE)
        fprintf(fp, " call %d", c0);
    if (cs_step_sends(op->type))
        fprintf(fp, " to gpu %d", tb->send);
    if (cs_step_recvs(op->type))
        fprintf(fp, " from gpu %d", tb->recv);
    fprintf(fp, ":");
    for (int k = 0; k < NBY; k++)
        if (by[k] > 0)
            fprintf(fp, " %s %.3f", names[k], by[k] * 1e6);
    fprintf(fp, "\n");
    if (cp->parts[b - 1].via && b < cp->nparts && cp->parts[b].ev >= 0) {
        const struct cs_plan_tb *nt = &plan->tbs[tl->events[cp->parts[b].ev].tb];

        fprintf(fp, "  %12s %7s    -> %s gpu %d tb %d\n", "", "", via_name(cp->parts[b - 1].via),
                nt->gpu, nt->id);
    }
}

static void write_critpath(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl,
                           const struct cs_critpath *cp, int max_segments)
{
    int nseg = 0, *seg = malloc(((size_t)cp->nparts + 1) * sizeof(int)), skip_from, skip_to;
    double by[NBY] = {0}, total = cp->total_s;
    const struct cs_tl_event *e, *f;

    if (seg == NULL)
        return;
    for (int k = 0; k < cp->nparts; k++) {
        const struct cs_crit_part *p = &cp->parts[k];

        if (p->ev < 0)
            continue;
        part_kind(tl, p, by);
        /* a new segment where the tb, iteration or op changes (the launch part is the first) */
        e = &tl->events[p->ev];
        f = nseg > 0 ? &tl->events[cp->parts[k - 1].ev] : NULL;
        if (f == NULL || e->tb != f->tb || e->iter != f->iter || e->op != f->op)
            seg[nseg++] = k;
    }
    fprintf(fp, "critical path: %d parts in %d segments, %.3f us (the predicted time)\n",
            cp->nparts, nseg + 1, total * 1e6);
    fprintf(fp,
            "  by kind: launch + deploy %.3f us (%.2f%%), call overhead %.3f (%.2f%%),\n"
            "           network %.3f (%.2f%%), tb copy/reduce rate %.3f (%.2f%%), local ops "
            "%.3f (%.2f%%)",
            tl->offset_s * 1e6, 100 * tl->offset_s / total, by[BY_OVERHEAD] * 1e6,
            100 * by[BY_OVERHEAD] / total, by[BY_NETWORK] * 1e6, 100 * by[BY_NETWORK] / total,
            by[BY_RATE] * 1e6, 100 * by[BY_RATE] / total, by[BY_LOCAL] * 1e6,
            100 * by[BY_LOCAL] / total);
    if (by[BY_LAUNCH] > 0)
        fprintf(fp, ",\n           tb start (later launch, step table) %.3f (%.2f%%)",
                by[BY_LAUNCH] * 1e6, 100 * by[BY_LAUNCH] / total);
    if (cp->unattributed_s > 0)
        fprintf(fp, ", unattributed %.3f (%.2f%%)", cp->unattributed_s * 1e6,
                100 * cp->unattributed_s / total);
    fprintf(fp, "\n  %12s %7s  %s\n", "us", "share", "part");
    fprintf(fp, "  %12.3f %6.2f%%  launch + deploy\n", tl->offset_s * 1e6,
            100 * tl->offset_s / total);
    /* beyond max_segments: the first and last halves, one line for the segments between */
    skip_from = max_segments > 0 && nseg > max_segments ? max_segments / 2 : nseg;
    skip_to = skip_from < nseg ? nseg - (max_segments - skip_from) : nseg;
    for (int s = 0; s < nseg; s++) {
        int a = seg[s], b = s + 1 < nseg ? seg[s + 1] : cp->nparts;

        if (s == skip_from && skip_to > skip_from) {
            double d = 0;

            for (int k = seg[skip_from]; k < seg[skip_to]; k++)
                d += cp->parts[k].dur_s;
            fprintf(fp, "  %12.3f %6.2f%%  ... %d more segments ...\n", d * 1e6, 100 * d / total,
                    skip_to - skip_from);
            s = skip_to - 1;
            continue;
        }
        write_segment(fp, plan, tl, cp, a, b, total);
    }
    free(seg);
}

int cs_stats_write(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl,
                   int max_segments)
{
    struct cs_critpath cp;
    int rc;

    if (tl->truncated)
        return CS_ERR_USAGE;
    rc = write_links(fp, tl);
    if (rc != 0)
        return rc;
    write_tbs(fp, plan, tl);
    if (!tl->complete) {
        fprintf(fp, "critical path: none (the replay deadlocked)\n");
    } else {
        rc = cs_stats_critical_path(plan, tl, &cp);
        if (rc != 0)
            return rc;
        write_critpath(fp, plan, tl, &cp, max_segments);
        cs_critpath_cleanup(&cp);
    }
    return ferror(fp) ? CS_ERR_IO : 0;
}
