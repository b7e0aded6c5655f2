/* period.c: a replay's loop iterations compared pairwise from per-iteration digests and
 * snapshots. */
#include "period.h"

#include "fdio.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A sum kept with its rounding (Neumaier's compensated summation): the moments of an iteration
 * of thousands of events stay exact to about one rounding of their total. */
struct csum {
    double s, c;
};

static void csum_add(struct csum *a, double x)
{
    double t = a->s + x;

    a->c += fabs(a->s) >= fabs(x) ? (a->s - t) + x : (x - t) + a->s;
    a->s = t;
}

static double csum_get(const struct csum *a)
{
    return a->s + a->c;
}

/* What the comparison keeps of one iteration of one tb. */
struct digest {
    long long count;  /* events (waits of no duration left out) */
    long long nwire;  /* of them, units sent */
    uint64_t hash;    /* over each event's kind, op, call, other and bytes (mix) */
    double t0;        /* the start of its first event (NaN: none yet) */
    double t1;        /* the end of its last */
    struct csum m1;   /* sum of the offsets from t0 of every start and end */
    struct csum m2;   /* sum of their squares */
    struct csum wire; /* sum of the units' network seconds */
    int has_snap;
    struct cs_period_snap snap;
};

/* A tb's digests: its iteration j in d[j % (maxp + 1)]; the one being filled is iter's, the maxp
 * before it are closed and wait to be compared with the ones that follow. */
struct cs_period_tb {
    int iter; /* the iteration being filled; -1 before any event or snapshot */
    struct digest *d;
};

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* One field into the digest, a whole word at a time (FNV-1a's step on 64-bit words): for a given
 * digest so far each step is a bijection of the field, so two sequences that differ in one
 * field always end in different digests. */
static uint64_t mix(uint64_t h, long long v)
{
    return (h ^ (uint64_t)v) * FNV_PRIME;
}

static void digest_clear(struct digest *d)
{
    memset(d, 0, sizeof(*d));
    d->hash = FNV_OFFSET;
    d->t0 = d->t1 = NAN;
}

static void free_tbs(struct cs_period *pd)
{
    if (pd->tbs != NULL)
        for (int t = 0; t < pd->ntbs; t++)
            free(pd->tbs[t].d);
    free(pd->tbs);
    pd->tbs = NULL;
}

void cs_period_cleanup(struct cs_period *pd)
{
    free_tbs(pd);
    cs_free_each(4, pd->pairs, pd->ncalls, pd->ntransfers, pd->last_end);
    memset(pd, 0, sizeof(*pd));
}

int cs_period_init(struct cs_period *pd, int ntbs, int m, int maxp)
{
    size_t cells = (size_t)ntbs * (size_t)m;

    memset(pd, 0, sizeof(*pd));
    if (ntbs < 1 || m < 1 || maxp < 1)
        return -1;
    pd->ntbs = ntbs;
    pd->m = m;
    pd->maxp = maxp;
    pd->pairs = malloc((size_t)m * (size_t)maxp * sizeof(*pd->pairs));
    pd->ncalls = calloc((size_t)m, sizeof(*pd->ncalls));
    pd->ntransfers = calloc((size_t)m, sizeof(*pd->ntransfers));
    pd->last_end = malloc(cells * sizeof(*pd->last_end));
    pd->tbs = calloc((size_t)ntbs, sizeof(*pd->tbs));
    if (pd->pairs == NULL || pd->ncalls == NULL || pd->ntransfers == NULL || pd->last_end == NULL ||
        pd->tbs == NULL) {
        cs_period_cleanup(pd);
        return -1;
    }
    for (int x = 0; x < m * maxp; x++)
        pd->pairs[x] = (struct cs_period_pair){.dmin = HUGE_VAL, .dmax = -HUGE_VAL};
    for (size_t c = 0; c < cells; c++)
        pd->last_end[c] = NAN;
    for (int t = 0; t < ntbs; t++)
        pd->tbs[t].iter = -1;
    return 0;
}

/* The tb's digests, made on first use. */
static struct digest *digests(struct cs_period *pd, struct cs_period_tb *tb)
{
    if (tb->d == NULL) {
        tb->d = malloc((size_t)(pd->maxp + 1) * sizeof(*tb->d));
        if (tb->d == NULL)
            return NULL;
        for (int r = 0; r <= pd->maxp; r++)
            digest_clear(&tb->d[r]);
    }
    return tb->d;
}

static void shift(struct cs_period_pair *pr, double a, double b)
{
    if (isnan(a) || isnan(b))
        return;
    pr->dmin = fmin(pr->dmin, b - a);
    pr->dmax = fmax(pr->dmax, b - a);
}

/* The largest change of a mean between two digests of the same events: of the offsets, of the
 * offsets weighted by themselves (the second moment's change over twice the first: both are
 * moved by a change of some events' times unless it cancels in both), of the network seconds. */
static double moment_dev(const struct digest *a, const struct digest *e)
{
    double dev = 0, s1 = csum_get(&a->m1);

    if (a->count > 0)
        dev = fabs(csum_get(&e->m1) - s1) / (2.0 * (double)a->count);
    if (s1 > 0)
        dev = fmax(dev, fabs(csum_get(&e->m2) - csum_get(&a->m2)) / (2 * s1));
    if (a->nwire > 0)
        dev = fmax(dev, fabs(csum_get(&e->wire) - csum_get(&a->wire)) / (double)a->nwire);
    return dev;
}

/* Compare e, tb t's closed iteration i, with its iterations i - 1 .. i - maxp. */
static void compare(struct cs_period *pd, const struct cs_period_tb *tb, int i)
{
    const struct digest *e = &tb->d[i % (pd->maxp + 1)];

    for (int p = 1; p <= pd->maxp && i - p >= 0; p++) {
        int j = i - p;
        struct cs_period_pair *pr = &pd->pairs[j * pd->maxp + p - 1];
        const struct digest *a = &tb->d[j % (pd->maxp + 1)];

        if (pr->differ)
            continue;
        if (a->count != e->count || a->nwire != e->nwire || a->hash != e->hash ||
            a->has_snap != e->has_snap ||
            (a->has_snap && memcmp(a->snap.ints, e->snap.ints, sizeof(a->snap.ints)) != 0)) {
            pr->differ = 1;
            if (p == 1 && pd->stop_pairs > 0 && j >= pd->stop_pairs && j <= pd->m - 3)
                pd->doomed = 1;
            continue;
        }
        shift(pr, a->t0, e->t0);
        shift(pr, a->t1, e->t1);
        pr->wdev = fmax(pr->wdev, moment_dev(a, e));
        if (a->has_snap) {
            shift(pr, a->snap.at_s, e->snap.at_s);
            for (int k = 0; k < CS_PERIOD_SNAP_TIMES; k++)
                pr->sdev = fmax(pr->sdev, fabs(e->snap.times_s[k] - a->snap.times_s[k]));
        }
    }
}

/* Bring tb t to iteration iter: its iterations before are closed and compared, and the digest of
 * iter (which overwrites the one of iter - maxp - 1, compared already) is cleared. */
static void advance(struct cs_period *pd, struct cs_period_tb *tb, int iter)
{
    while (tb->iter < iter) {
        if (tb->iter >= 0)
            compare(pd, tb, tb->iter);
        tb->iter++;
        digest_clear(&tb->d[tb->iter % (pd->maxp + 1)]);
    }
}

/* Whether tb and iter belong to pd's plan (a tb never goes back an iteration); else invalid. */
static int in_range(struct cs_period *pd, int tb, int iter)
{
    if (tb < 0 || tb >= pd->ntbs || iter < 0 || iter >= pd->m || iter < pd->tbs[tb].iter) {
        pd->invalid = 1;
        return 0;
    }
    return 1;
}

int cs_period_add(struct cs_period *pd, const struct cs_tl_event *ev)
{
    struct cs_period_tb *tb;
    struct digest *d;
    uint64_t h;

    pd->nevents++;
    if (pd->invalid || pd->tbs == NULL)
        return 0;
    /* A wait of no duration: the tb blocked and was woken at the same instant, which it records
     * or not depending on which of the tbs going on at that instant ran first (period.h). */
    if (ev->kind >= CS_TL_WAIT_DATA && ev->kind <= CS_TL_WAIT_FLAG && ev->end_s == ev->start_s)
        return 0;
    if (!in_range(pd, ev->tb, ev->iter))
        return 0;
    tb = &pd->tbs[ev->tb];
    if (digests(pd, tb) == NULL)
        return -1;
    advance(pd, tb, ev->iter);
    d = &tb->d[ev->iter % (pd->maxp + 1)];
    pd->last_end[(size_t)ev->tb * pd->m + ev->iter] = ev->end_s;
    pd->ncalls[ev->iter] += ev->kind == CS_TL_CALL;
    pd->ntransfers[ev->iter] += ev->kind == CS_TL_UNIT && ev->out_conn >= 0 && ev->bytes > 0;
    if (d->count == 0)
        d->t0 = ev->start_s;
    d->count++;
    d->t1 = ev->end_s;
    h = mix(d->hash, ev->kind);
    h = mix(h, ev->op);
    h = mix(h, ev->call);
    h = mix(h, ev->other);
    d->hash = mix(h, ev->bytes);
    csum_add(&d->m1, ev->start_s - d->t0);
    csum_add(&d->m1, ev->end_s - d->t0);
    csum_add(&d->m2, (ev->start_s - d->t0) * (ev->start_s - d->t0));
    csum_add(&d->m2, (ev->end_s - d->t0) * (ev->end_s - d->t0));
    if (ev->kind == CS_TL_UNIT && ev->out_conn >= 0) {
        d->nwire++;
        csum_add(&d->wire, ev->wire_s);
    }
    return 0;
}

void cs_period_snap_add(struct cs_period *pd, int t, int iter, const struct cs_period_snap *s)
{
    struct cs_period_tb *tb;
    struct digest *d;

    if (pd->invalid || pd->tbs == NULL || !in_range(pd, t, iter))
        return;
    tb = &pd->tbs[t];
    if (digests(pd, tb) == NULL) {
        pd->invalid = 1;
        return;
    }
    advance(pd, tb, iter);
    d = &tb->d[iter % (pd->maxp + 1)];
    d->has_snap = 1;
    d->snap = *s;
}

void cs_period_finish(struct cs_period *pd)
{
    struct cs_period_tb none = {.iter = -1};

    if (pd->tbs == NULL)
        return;
    /* every tb's iterations closed, the ones it never reached included (no events: they differ
     * from any iteration with some); a tb with no event nor snapshot is closed in one shared set
     * of digests, cleared for each: a folded replay reaches only its representatives' tbs, and a
     * set for each of the others would cost the 1024-GPU hierarchical AllReduce 58 MB */
    for (int t = 0; t < pd->ntbs && !pd->invalid; t++) {
        struct cs_period_tb *tb = &pd->tbs[t];

        if (tb->d == NULL && tb->iter < 0) {
            none.iter = -1;
            if (none.d != NULL)
                for (int r = 0; r <= pd->maxp; r++)
                    digest_clear(&none.d[r]);
            tb = &none;
        }
        if (digests(pd, tb) == NULL) {
            pd->invalid = 1;
            break;
        }
        advance(pd, tb, pd->m - 1);
        compare(pd, tb, pd->m - 1);
    }
    free(none.d);
    free_tbs(pd);
}

int cs_period_from_timeline(struct cs_period *pd, const struct cs_timeline *tl, int ntbs, int m,
                            int maxp)
{
    if (cs_period_init(pd, ntbs, m, maxp) != 0)
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
    double dev = fmax(pr->wdev, pr->sdev);

    if (pr->differ)
        return HUGE_VAL;
    if (pr->dmin > pr->dmax)
        return dev;
    return fmax(fmax(fabs(pr->dmax - step_s), fabs(pr->dmin - step_s)), dev);
}

/* The fixed part of the stream: the struct with its pointers zeroed. */
int cs_period_write(int fd, const struct cs_period *pd)
{
    struct cs_period h = *pd;
    size_t cells = (size_t)pd->ntbs * (size_t)pd->m;

    h.pairs = NULL;
    h.ncalls = h.ntransfers = NULL;
    h.last_end = NULL;
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

    if (cs_fd_read_all(fd, &h, sizeof(h)) != 0 || cs_period_init(&n, h.ntbs, h.m, h.maxp) != 0)
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
    h.tbs = NULL;
    cs_period_cleanup(pd);
    *pd = h;
    return 0;
}
