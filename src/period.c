/* period.c: a replay's loop iterations compared pairwise as its events stream in. */
#include "period.h"

#include "fdio.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What comparing needs of an event. */
struct pev {
    double start_s, end_s, wire_s;
    long long bytes;
    int op, call, other, kind;
};

/* A tb's events of iteration j sit in ev[j % maxp], index k for its k-th event: event k of
 * iteration i is compared with event k of iterations i - 1 .. i - maxp, then overwrites the one
 * of i - maxp, which nothing needs any more. */
struct cs_period_tb {
    int iter; /* the iteration it is in (its events there: count[tb * m + iter]) */
    struct pev **ev;
    int *cap;
};

static void free_tbs(struct cs_period *pd)
{
    if (pd->tbs != NULL)
        for (int t = 0; t < pd->ntbs; t++) {
            for (int r = 0; pd->tbs[t].ev != NULL && r < pd->maxp; r++)
                free(pd->tbs[t].ev[r]);
            cs_free_each(2, pd->tbs[t].ev, pd->tbs[t].cap);
        }
    free(pd->tbs);
    pd->tbs = NULL;
    free(pd->count);
    pd->count = NULL;
}

void cs_period_cleanup(struct cs_period *pd)
{
    free_tbs(pd);
    cs_free_each(4, pd->pairs, pd->ncalls, pd->ntransfers, pd->last_end);
    memset(pd, 0, sizeof(*pd));
}

int cs_period_init(struct cs_period *pd, int ntbs, int m, int maxp, long long max_live)
{
    size_t cells = (size_t)ntbs * (size_t)m;

    memset(pd, 0, sizeof(*pd));
    if (ntbs < 1 || m < 1 || maxp < 1)
        return -1;
    pd->ntbs = ntbs;
    pd->m = m;
    pd->maxp = maxp;
    pd->max_live = max_live;
    pd->pairs = malloc((size_t)m * (size_t)maxp * sizeof(*pd->pairs));
    pd->ncalls = calloc((size_t)m, sizeof(*pd->ncalls));
    pd->ntransfers = calloc((size_t)m, sizeof(*pd->ntransfers));
    pd->last_end = malloc(cells * sizeof(*pd->last_end));
    pd->count = calloc(cells, sizeof(*pd->count));
    pd->tbs = calloc((size_t)ntbs, sizeof(*pd->tbs));
    if (pd->pairs == NULL || pd->ncalls == NULL || pd->ntransfers == NULL || pd->last_end == NULL ||
        pd->count == NULL || pd->tbs == NULL) {
        cs_period_cleanup(pd);
        return -1;
    }
    for (int x = 0; x < m * maxp; x++)
        pd->pairs[x] = (struct cs_period_pair){.dmin = HUGE_VAL, .dmax = -HUGE_VAL};
    for (size_t c = 0; c < cells; c++)
        pd->last_end[c] = NAN;
    return 0;
}

/* Compare e, event k of tb t in iteration i, with event k of each of the tb's iterations before. */
static void compare(struct cs_period *pd, const struct cs_period_tb *tb, int t, int i, int k,
                    const struct pev *e)
{
    for (int p = 1; p <= pd->maxp && i - p >= 0; p++) {
        int j = i - p;
        struct cs_period_pair *pr = &pd->pairs[j * pd->maxp + p - 1];
        const struct pev *a;
        double ds, de;

        if (pr->differ)
            continue;
        if (k >= pd->count[(size_t)t * pd->m + j]) {
            pr->differ = 1;
            continue;
        }
        a = &tb->ev[j % pd->maxp][k];
        if (a->kind != e->kind || a->op != e->op || a->call != e->call || a->other != e->other ||
            a->bytes != e->bytes) {
            pr->differ = 1;
            continue;
        }
        ds = e->start_s - a->start_s;
        de = e->end_s - a->end_s;
        pr->dmin = fmin(pr->dmin, fmin(ds, de));
        pr->dmax = fmax(pr->dmax, fmax(ds, de));
        pr->wdev = fmax(pr->wdev, fabs(e->wire_s - a->wire_s));
    }
}

/* Keep e as event k of the tb's iteration i (in ev[i % maxp]); prev: the tb's events in
 * iteration i - 1, which a settled replay repeats, so the room for them is set at once (the
 * first iteration grows by half as it goes). 0, or -1 out of memory. */
static int keep(struct cs_period *pd, struct cs_period_tb *tb, int i, int k, int prev,
                const struct pev *e)
{
    int r = i % pd->maxp, ncap = tb->cap[r];

    /* At its first event, iteration i gets the room iteration i - 1 took; the list still holds
     * iteration i - maxp, whose events are compared until overwritten, so it shrinks only when
     * that is iteration i - 1 itself. */
    if (k == 0 && prev > 0 && (prev > ncap || (pd->maxp == 1 && prev < ncap))) {
        struct pev *n = realloc(tb->ev[r], (size_t)prev * sizeof(*n));

        if (n == NULL)
            return -1;
        pd->live += prev - tb->cap[r];
        tb->ev[r] = n;
        tb->cap[r] = ncap = prev;
    }
    if (k >= ncap)
        ncap = ncap + ncap / 2 > 16 ? ncap + ncap / 2 : 16;
    if (ncap > tb->cap[r]) {
        struct pev *n;

        if (pd->max_live > 0 && pd->live + (ncap - tb->cap[r]) > pd->max_live) {
            pd->truncated = 1;
            return 0;
        }
        n = realloc(tb->ev[r], (size_t)ncap * sizeof(*n));
        if (n == NULL)
            return -1;
        pd->live += ncap - tb->cap[r];
        tb->ev[r] = n;
        tb->cap[r] = ncap;
    }
    tb->ev[r][k] = *e;
    return 0;
}

int cs_period_add(struct cs_period *pd, const struct cs_tl_event *ev)
{
    struct cs_period_tb *tb;
    struct pev e;
    size_t c;
    int k;

    pd->nevents++;
    if (pd->invalid || pd->tbs == NULL)
        return 0;
    /* A wait of no duration: the tb blocked and was woken at the same instant, which it records
     * or not depending on which of the tbs going on at that instant ran first (period.h). */
    if (ev->kind >= CS_TL_WAIT_DATA && ev->kind <= CS_TL_WAIT_FLAG && ev->end_s == ev->start_s)
        return 0;
    if (ev->tb < 0 || ev->tb >= pd->ntbs || ev->iter < 0 || ev->iter >= pd->m ||
        ev->iter < pd->tbs[ev->tb].iter) {
        pd->invalid = 1;
        return 0;
    }
    tb = &pd->tbs[ev->tb];
    tb->iter = ev->iter;
    c = (size_t)ev->tb * pd->m + ev->iter;
    k = pd->count[c]++;
    pd->last_end[c] = ev->end_s;
    pd->ncalls[ev->iter] += ev->kind == CS_TL_CALL;
    pd->ntransfers[ev->iter] += ev->kind == CS_TL_UNIT && ev->out_conn >= 0 && ev->bytes > 0;
    if (pd->truncated)
        return 0;
    if (tb->ev == NULL) {
        tb->ev = calloc((size_t)pd->maxp, sizeof(*tb->ev));
        tb->cap = calloc((size_t)pd->maxp, sizeof(*tb->cap));
        if (tb->ev == NULL || tb->cap == NULL)
            return -1;
    }
    e = (struct pev){.start_s = ev->start_s,
                     .end_s = ev->end_s,
                     .wire_s = ev->wire_s,
                     .bytes = ev->bytes,
                     .op = ev->op,
                     .call = ev->call,
                     .other = ev->other,
                     .kind = ev->kind};
    compare(pd, tb, ev->tb, ev->iter, k, &e);
    return keep(pd, tb, ev->iter, k, ev->iter > 0 ? pd->count[c - 1] : 0, &e);
}

void cs_period_finish(struct cs_period *pd)
{
    if (pd->count == NULL)
        return;
    for (int t = 0; t < pd->ntbs; t++)
        for (int i = 0; i < pd->m; i++)
            for (int p = 1; p <= pd->maxp && i + p < pd->m; p++)
                if (pd->count[(size_t)t * pd->m + i] != pd->count[(size_t)t * pd->m + i + p])
                    pd->pairs[i * pd->maxp + p - 1].differ = 1;
    free_tbs(pd);
}

int cs_period_from_timeline(struct cs_period *pd, const struct cs_timeline *tl, int ntbs, int m,
                            int maxp)
{
    if (cs_period_init(pd, ntbs, m, maxp, 0) != 0)
        return -1;
    for (long long e = 0; e < tl->nevents; e++)
        if (cs_period_add(pd, &tl->events[e]) != 0) {
            cs_period_cleanup(pd);
            return -1;
        }
    cs_period_finish(pd);
    pd->makespan_s = tl->makespan_s;
    pd->offset_s = tl->offset_s;
    pd->complete = tl->complete;
    pd->truncated |= tl->truncated;
    return 0;
}

double cs_period_dev(const struct cs_period *pd, int i, int p, double step_s)
{
    const struct cs_period_pair *pr = &pd->pairs[i * pd->maxp + p - 1];

    if (pr->differ)
        return HUGE_VAL;
    if (pr->dmin > pr->dmax)
        return pr->wdev;
    return fmax(fmax(fabs(pr->dmax - step_s), fabs(pr->dmin - step_s)), pr->wdev);
}

/* The fixed part of the stream: the struct with its pointers zeroed. */
int cs_period_write(int fd, const struct cs_period *pd)
{
    struct cs_period h = *pd;
    size_t cells = (size_t)pd->ntbs * (size_t)pd->m;

    h.pairs = NULL;
    h.ncalls = h.ntransfers = NULL;
    h.last_end = NULL;
    h.count = NULL;
    h.tbs = NULL;
    if (cs_fd_write_all(fd, &h, sizeof(h)) != 0 ||
        cs_fd_write_all(fd, pd->pairs, (size_t)pd->m * pd->maxp * sizeof(*pd->pairs)) != 0 ||
        cs_fd_write_all(fd, pd->ncalls, (size_t)pd->m * sizeof(*pd->ncalls)) != 0 ||
        cs_fd_write_all(fd, pd->ntransfers, (size_t)pd->m * sizeof(*pd->ntransfers)) != 0 ||
        cs_fd_write_all(fd, pd->last_end, cells * sizeof(*pd->last_end)) != 0)
        return -1;
    return 0;
}

int cs_period_read(int fd, struct cs_period *pd)
{
    struct cs_period h, n;
    size_t cells;

    if (cs_fd_read_all(fd, &h, sizeof(h)) != 0 || cs_period_init(&n, h.ntbs, h.m, h.maxp, 0) != 0)
        return -1;
    free_tbs(&n);
    cells = (size_t)h.ntbs * (size_t)h.m;
    if (cs_fd_read_all(fd, n.pairs, (size_t)h.m * h.maxp * sizeof(*n.pairs)) != 0 ||
        cs_fd_read_all(fd, n.ncalls, (size_t)h.m * sizeof(*n.ncalls)) != 0 ||
        cs_fd_read_all(fd, n.ntransfers, (size_t)h.m * sizeof(*n.ntransfers)) != 0 ||
        cs_fd_read_all(fd, n.last_end, cells * sizeof(*n.last_end)) != 0) {
        cs_period_cleanup(&n);
        return -1;
    }
    h.pairs = n.pairs;
    h.ncalls = n.ncalls;
    h.ntransfers = n.ntransfers;
    h.last_end = n.last_end;
    h.count = NULL;
    h.tbs = NULL;
    cs_period_cleanup(pd);
    *pd = h;
    return 0;
}
