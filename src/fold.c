/* fold.c: rank shifts that map a plan and its network onto themselves, and the folded plan.
 *
 * Why a folded replay is exact. Let s be the shift r -> r + k (mod n), k | n, and G the group it
 * generates, of order m = n / k: every orbit holds exactly one of the ranks 0..k-1. The replay is
 * a deterministic function of the tbs' programs, the connections' routes and the links. When s
 * maps every tb of rank r onto a tb of rank s(r), the one on the shifted connection, with the same
 * program, its dependencies mapped alike (cs_fold_plan_shifts), and every route onto the route of
 * the image pair under a map of links that keeps what SimGrid shares them by (cs_fold_check_net,
 * (1)), the full replay commutes with s: the image under s^j of a tb of rank r runs its events
 * at the same times, and a connection
 * (a, b) carries the units of (s^-j(a), s^-j(b)). The folded replay keeps the tbs of ranks
 * 0..k-1 and one FIFO per orbit of connections, named after its member sent from ranks 0..k-1:
 * a tb of rank r < k receiving from q reads the FIFO of (q, r)'s image, filled by the tb of rank
 * < k that sends it, which is what the full replay's counterpart receives, shifted. The flows on
 * the network are those of the connections sent from ranks 0..k-1, over their own routes. By
 * (2), no link they share with anything is shared with a flow of another rank, so at every
 * instant each link carries the same flows as in the full replay (a flow's images use the images
 * of its links, which by (2) are other links): SimGrid's max-min sharing, solved on the same
 * constraints, gives the same rates. */
#include "fold.h"

#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

static int shift_rank(int r, int k, int n)
{
    return r < 0 ? -1 : (r + k) % n;
}

/* Whether every dependency of a, its tb through m, is one of b's. */
static int deps_within(const struct cs_plan_op *a, const struct cs_plan_op *b, const int *m,
                       int ntb)
{
    for (int d = 0; d < a->ndeps; d++) {
        int t = a->deps[d].tb, found = 0;

        if (t < 0 || t >= ntb)
            return 0;
        for (int e = 0; e < b->ndeps && !found; e++)
            found = b->deps[e].tb == (m ? m[t] : t) && b->deps[e].step == a->deps[d].step;
        if (!found)
            return 0;
    }
    return 1;
}

/* What the replay reads of an op (replay.c), equal in a and b, a's dependencies mapped by m (the
 * tbs of a's GPU onto b's) and m's inverse mi: the same set of flags to wait for. */
static int ops_equal(const struct cs_plan_op *a, const struct cs_plan_op *b, const int *m,
                     const int *mi, int ntb)
{
    return a->type == b->type && a->step == b->step && a->cnt == b->cnt && a->nsrc == b->nsrc &&
           a->hasdep == b->hasdep && a->ncalls == b->ncalls && a->ndeps == b->ndeps &&
           deps_within(a, b, m, ntb) && deps_within(b, a, mi, ntb);
}

/* A tb's place among its GPU's: its connection (send peer, recv peer, channel), and for tbs
 * without a peer their order among those. */
struct tbkey {
    int send, recv, chan, nth, index;
};

static int tbkey_cmp(const void *x, const void *y)
{
    const struct tbkey *a = x, *b = y;
    int xs[] = {a->send, a->recv, a->chan, a->nth}, ys[] = {b->send, b->recv, b->chan, b->nth};

    return cs_cmp_ints(xs, ys, 4);
}

static struct tbkey key_of(const struct cs_plan_tb *tb, int k, int n, int *npeerless, int index)
{
    struct tbkey key = {shift_rank(tb->send, k, n), shift_rank(tb->recv, k, n), tb->chan, 0, index};

    if (tb->send < 0 && tb->recv < 0)
        key.nth = (*npeerless)++;
    return key;
}

/* m[i]: the tb of rank q (index within q's) that tb i of rank r is under the shift by k (q = r + k
 * mod n): the one on the shifted connection (tbs without a peer in their order), and mi the
 * inverse. 1, or 0 when some tb has no image (why says which). keys: room for q's tbs. */
static int match_tbs(const struct cs_plan *plan, int r, int q, int k, int *m, int *mi,
                     struct tbkey *keys, char *why, size_t len)
{
    int n = plan->ngpus, a0 = plan->gpu_tb0[r], b0 = plan->gpu_tb0[q];
    int na = plan->gpu_tb0[r + 1] - a0, nb = plan->gpu_tb0[q + 1] - b0, pa = 0, pb = 0;

    if (na != nb) {
        say(why, len, "rank %d has %d tbs, rank %d has %d", r, na, q, nb);
        return 0;
    }
    for (int j = 0; j < nb; j++)
        keys[j] = key_of(&plan->tbs[b0 + j], 0, n, &pb, j);
    qsort(keys, (size_t)nb, sizeof(*keys), tbkey_cmp);
    for (int i = 0; i < na; i++) {
        const struct cs_plan_tb *a = &plan->tbs[a0 + i];
        struct tbkey key = key_of(a, k, n, &pa, i), *hit;

        hit = bsearch(&key, keys, (size_t)nb, sizeof(*keys), tbkey_cmp);
        if (hit == NULL) {
            say(why, len, "rank %d has no tb like rank %d's tb %d shifted (peers %d and %d)", q, r,
                a->id, a->send, a->recv);
            return 0;
        }
        m[i] = hit->index;
        mi[hit->index] = i;
    }
    return 1;
}

/* The launch delay of rank r's kernel (replay.c's run_tb): its place among its process's GPUs. */
static int launch_slot(const struct cs_params *par, int r)
{
    int per = cs_params_gpus_per_process(par);

    return par->launch_gpu_s > 0 ? r % per : 0;
}

/* Whether the shift by k maps every process's GPUs (cs.gpus_per_process in rank order) onto one
 * process: NCCL's own Simple kernels receive in place between GPUs of one process (replay.c's
 * in_place), so a fold keeps which pairs share one. */
static int keeps_processes(const struct cs_plan *plan, const struct cs_params *par, int k)
{
    int per = cs_params_gpus_per_process(par), n = plan->ngpus;

    if (!plan->nccl_kernel || plan->proto != CS_PROTO_SIMPLE || per <= 1 || per >= n)
        return 1;
    return n % per == 0 && k % per == 0;
}

/* Scratch room for match_tbs over the tbs of any one GPU. */
struct scratch {
    int *m, *mi;
    struct tbkey *keys;
};

static int scratch_init(struct scratch *sc, const struct cs_plan *plan)
{
    int most = 1;

    for (int g = 0; g < plan->ngpus; g++)
        if (plan->gpu_tb0[g + 1] - plan->gpu_tb0[g] > most)
            most = plan->gpu_tb0[g + 1] - plan->gpu_tb0[g];
    sc->m = malloc((size_t)most * sizeof(int));
    sc->mi = malloc((size_t)most * sizeof(int));
    sc->keys = malloc((size_t)most * sizeof(*sc->keys));
    if (sc->m == NULL || sc->mi == NULL || sc->keys == NULL) {
        cs_free_each(3, sc->m, sc->mi, sc->keys);
        return -1;
    }
    return 0;
}

static void scratch_cleanup(struct scratch *sc)
{
    cs_free_each(3, sc->m, sc->mi, sc->keys);
}

/* Whether the shift by k maps the plan onto itself; when not, why says where it breaks. */
static int plan_shifts_by(const struct cs_plan *plan, const struct cs_params *par, int k,
                          struct scratch *sc, char *why, size_t len)
{
    int n = plan->ngpus;

    if (!keeps_processes(plan, par, k)) {
        say(why, len, "the shift by %d splits the processes of %d GPUs", k,
            cs_params_gpus_per_process(par));
        return 0;
    }
    for (int r = 0; r < n; r++) {
        int q = (r + k) % n, a0 = plan->gpu_tb0[r], b0 = plan->gpu_tb0[q];
        int na = plan->gpu_tb0[r + 1] - a0;

        if (launch_slot(par, r) != launch_slot(par, q)) {
            say(why, len, "ranks %d and %d launch at different places of their process", r, q);
            return 0;
        }
        if (!match_tbs(plan, r, q, k, sc->m, sc->mi, sc->keys, why, len))
            return 0;
        for (int i = 0; i < na; i++) {
            const struct cs_plan_tb *a = &plan->tbs[a0 + i], *b = &plan->tbs[b0 + sc->m[i]];

            if (a->nops != b->nops) {
                say(why, len, "rank %d tb %d has %d steps, rank %d tb %d %d", q, b->id, b->nops, r,
                    a->id, a->nops);
                return 0;
            }
            for (int o = 0; o < a->nops; o++)
                if (!ops_equal(&a->ops[o], &b->ops[o], sc->m, sc->mi, na)) {
                    say(why, len, "rank %d tb %d step %d differs from rank %d tb %d's", q, b->id,
                        b->ops[o].step, r, a->id);
                    return 0;
                }
        }
    }
    return 1;
}

/* cs_fold_plan_shifts for a plan of representatives (plan->rep_gpus > 0), whose invariance under
 * the shift by rep_shift its generator proved: the multiples of rep_shift that divide n, lie
 * below it and keep the replayed ranks among the representatives, where every rank launches at
 * the place of its image. */
static int rep_shifts(const struct cs_plan *plan, const struct cs_params *par, int *ks, int nmax,
                      char *why, size_t len)
{
    int n = plan->ngpus, count = 0;

    for (int k = plan->rep_shift; k < n && k <= plan->rep_gpus && count < nmax;
         k += plan->rep_shift) {
        int ok = n % k == 0 && keeps_processes(plan, par, k);

        for (int r = 0; ok && r < n; r++)
            ok = launch_slot(par, r) == launch_slot(par, (r + k) % n);
        if (ok)
            ks[count++] = k;
    }
    if (count == 0)
        say(why, len, "no shift by a multiple of %d up to the %d GPUs written keeps the launches",
            plan->rep_shift, plan->rep_gpus);
    return count;
}

int cs_fold_plan_shifts(const struct cs_plan *plan, const struct cs_params *par, int *ks, int nmax,
                        char *why, size_t len)
{
    int n = plan->ngpus, count = 0, last = 0;
    struct scratch sc;

    if (why != NULL && len > 0)
        why[0] = '\0';
    if (plan->rep_gpus > 0)
        return rep_shifts(plan, par, ks, nmax, why, len);
    if (scratch_init(&sc, plan) != 0) {
        say(why, len, "out of memory");
        return 0;
    }
    for (int k = 1; k < n && count < nmax; k++) {
        if (n % k != 0)
            continue;
        last = k;
        /* The shifts that map the plan onto itself are a group: with the smallest, ks[0], every
         * multiple of it is one (its powers), and no other divisor of n is (with ks[0] it would
         * give their gcd, a smaller one), so only the ones before ks[0] need the walk. */
        if (count > 0 ? k % ks[0] == 0 : plan_shifts_by(plan, par, k, &sc, NULL, 0))
            ks[count++] = k;
    }
    if (count == 0 && last > 0)
        plan_shifts_by(plan, par, last, &sc, why, len);
    else if (count == 0)
        say(why, len, "one GPU");
    scratch_cleanup(&sc);
    return count;
}

static int pair_cmp(const void *a, const void *b)
{
    return cs_cmp_ints(a, b, 2);
}

int cs_fold_plan_pairs(const struct cs_plan *plan, int (**pairs)[2])
{
    /* a plan of representatives: the pairs of ranks 0..rep_shift-1, and their images under every
     * power of the shift, are all of the schedule's */
    int ntbs = plan->rep_gpus > 0 ? plan->gpu_tb0[plan->rep_shift] : plan->ntbs,
        images = plan->rep_gpus > 0 ? plan->ngpus / plan->rep_shift : 1, n = plan->ngpus;
    int(*p)[2] = malloc(2 * ((size_t)ntbs * (size_t)images + 1) * sizeof(*p));
    int np = 0, out = 0;

    if (p == NULL)
        return -1;
    for (int j = 0; j < images; j++)
        for (int t = 0; t < ntbs; t++) {
            const struct cs_plan_tb *tb = &plan->tbs[t];
            int by = j * plan->rep_shift;

            if (tb->send >= 0) {
                p[np][0] = (tb->gpu + by) % n;
                p[np++][1] = (tb->send + by) % n;
            }
            if (tb->recv >= 0) {
                p[np][0] = (tb->recv + by) % n;
                p[np++][1] = (tb->gpu + by) % n;
            }
        }
    qsort(p, (size_t)np, sizeof(*p), pair_cmp);
    for (int i = 0; i < np; i++)
        if (out == 0 || pair_cmp(p[i], p[out - 1]) != 0) {
            p[out][0] = p[i][0];
            p[out++][1] = p[i][1];
        }
    *pairs = p;
    return out;
}

static int find_pair(const struct cs_fold_net *net, int src, int dst)
{
    int key[2] = {src, dst};
    int(*hit)[2] = bsearch(key, net->pairs, (size_t)net->npairs, sizeof(*net->pairs), pair_cmp);

    return hit == NULL ? -1 : (int)(hit - net->pairs);
}

static int links_alike(const struct cs_fold_link *a, const struct cs_fold_link *b)
{
    return a->bw_Bps == b->bw_Bps && a->lat_s == b->lat_s && a->shared == b->shared &&
           a->cls == b->cls;
}

/* (1) of cs_fold_check_net: each route onto its image's under one link map, one to one, into
 * img (the image of each link on some route; -1 for the others). 1, or 0 with why. */
static int map_links(const struct cs_fold_net *net, int ngpus, int k, int *img, int *pre, char *why,
                     size_t len)
{
    for (int l = 0; l < net->nlinks; l++)
        img[l] = pre[l] = -1;
    for (int i = 0; i < net->npairs; i++) {
        int s = net->pairs[i][0], d = net->pairs[i][1];
        int j = find_pair(net, (s + k) % ngpus, (d + k) % ngpus);
        int na = net->first[i + 1] - net->first[i];

        if (j < 0 || net->first[j + 1] - net->first[j] != na) {
            say(why, len, "the route %d->%d has no image of the same length at %d->%d", s, d,
                (s + k) % ngpus, (d + k) % ngpus);
            return 0;
        }
        for (int h = 0; h < na; h++) {
            int a = net->route[net->first[i] + h], b = net->route[net->first[j] + h];

            if ((img[a] >= 0 && img[a] != b) || (pre[b] >= 0 && pre[b] != a) ||
                !links_alike(&net->links[a], &net->links[b])) {
                say(why, len,
                    "link %d of the route %d->%d does not map onto link %d of %d->%d (another "
                    "image, bandwidth, latency, sharing or class)",
                    h, s, d, h, (s + k) % ngpus, (d + k) % ngpus);
                return 0;
            }
            img[a] = b;
            pre[b] = a;
        }
    }
    return 1;
}

/* Scratch of the proofs: three ints per link. */
static int *link_scratch(const struct cs_fold_net *net, int **pre, int **aux)
{
    int *img = malloc(3 * ((size_t)net->nlinks + 1) * sizeof(int));

    if (img != NULL) {
        *pre = img + net->nlinks + 1;
        *aux = *pre + net->nlinks + 1;
    }
    return img;
}

int cs_fold_check_net(const struct cs_fold_net *net, int ngpus, int k, char *why, size_t len)
{
    int *pre, *owner, *img = link_scratch(net, &pre, &owner);
    int ok;

    if (img == NULL)
        return -1;
    ok = map_links(net, ngpus, k, img, pre, why, len);
    for (int l = 0; l < net->nlinks; l++)
        owner[l] = -1;
    /* (2) a shared link carries flows sent from ranks 0..k-1 only, or none of them */
    for (int i = 0; i < net->npairs && ok; i++) {
        int rep = net->pairs[i][0] < k;

        for (int h = net->first[i]; h < net->first[i + 1] && ok; h++) {
            int l = net->route[h], tag = rep ? 1 : 2;

            if (!net->links[l].shared)
                continue;
            if (owner[l] >= 0 && owner[l] != tag) {
                say(why, len,
                    "a shared link of the route %d->%d also carries flows of other orbits",
                    net->pairs[i][0], net->pairs[i][1]);
                ok = 0;
            }
            owner[l] = tag;
        }
    }
    free(img);
    return ok;
}

int cs_fold_check_quotient(const struct cs_fold_net *net, int ngpus, int k, int *rep, char *why,
                           size_t len)
{
    int *pre, *seen, *img = link_scratch(net, &pre, &seen);
    int order = ngpus / k, ok;

    if (img == NULL)
        return -1;
    ok = map_links(net, ngpus, k, img, pre, why, len);
    /* each link's orbit under the shift's powers (img's cycles: the shift by n maps every route
     * onto itself, so img^order is the identity on the links of routes); the representative is
     * the orbit's smallest index */
    for (int l = 0; l < net->nlinks; l++) {
        int m = l, size = 0;

        rep[l] = seen[l] = -1;
        if (img[l] < 0 || !ok)
            continue;
        do {
            m = img[m];
            size++;
            if (m < rep[l] || rep[l] < 0)
                rep[l] = m;
        } while (m != l && size <= order);
        if (m != l) {
            say(why, len, "link %d is not on a cycle of the shift by %d", l, k);
            ok = 0;
        }
        pre[l] = size; /* img's preimages are no longer needed */
    }
    /* a folded route crosses each orbit of shared links once, and each of those orbits has order
     * links (no shift of the group fixes one: it would carry several images of a folded flow);
     * the representative then carries, for every link of its orbit, the images of the flows on
     * that link, one each */
    for (int i = 0; i < net->npairs && ok; i++) {
        if (net->pairs[i][0] >= k)
            continue;
        for (int h = net->first[i]; h < net->first[i + 1] && ok; h++) {
            int l = net->route[h];

            if (!net->links[l].shared)
                continue;
            if (pre[l] != order) {
                say(why, len,
                    "a shared link of the route %d->%d is its own image under the shift by %d (an "
                    "orbit of %d links, not %d)",
                    net->pairs[i][0], net->pairs[i][1], k * pre[l], pre[l], order);
                ok = 0;
            } else if (seen[rep[l]] == i) {
                say(why, len, "the route %d->%d crosses two shared links of one orbit",
                    net->pairs[i][0], net->pairs[i][1]);
                ok = 0;
            }
            seen[rep[l]] = i;
        }
    }
    free(img);
    return ok;
}

void cs_fold_conn(const struct cs_fold *f, int *src, int *dst)
{
    int base = *src - *src % f->shift;

    *src -= base;
    *dst = ((*dst - base) % f->ngpus + f->ngpus) % f->ngpus;
}

int cs_fold_plan_init(struct cs_plan *folded, const struct cs_plan *plan, const struct cs_fold *f)
{
    int *tb0 = malloc(((size_t)plan->ngpus + 1) * sizeof(*tb0));
    int end = plan->gpu_tb0[f->shift];

    if (tb0 == NULL)
        return -1;
    *folded = *plan;
    for (int g = 0; g <= plan->ngpus; g++)
        tb0[g] = plan->gpu_tb0[g] < end ? plan->gpu_tb0[g] : end;
    folded->gpu_tb0 = tb0;
    folded->ntbs = end;
    folded->ncalls_total = plan->ncalls_total / f->order;
    return 0;
}

void cs_fold_plan_cleanup(struct cs_plan *folded)
{
    free(folded->gpu_tb0);
    folded->gpu_tb0 = NULL;
    folded->tbs = NULL;
    folded->ntbs = 0;
}

int cs_fold_expand_period(const struct cs_fold *f, const struct cs_plan *plan, struct cs_period *pd)
{
    struct scratch sc;

    if (scratch_init(&sc, plan) != 0)
        return -1;
    for (int i = 0; i < pd->m; i++) {
        pd->ncalls[i] *= f->order;
        pd->ntransfers[i] *= f->order;
    }
    pd->nevents *= f->order;
    /* tb i of rank rep < k is tb m[i] of rank r = rep + base under the shift by base */
    for (int r = f->shift; r < (plan->rep_gpus > 0 ? plan->rep_gpus : plan->ngpus) &&
                           plan->gpu_tb0[r + 1] <= pd->ntbs;
         r++) {
        int rep = r % f->shift, base = r - rep;

        if (!match_tbs(plan, rep, r, base, sc.m, sc.mi, sc.keys, NULL, 0))
            continue; /* not a plan the fold proved */
        for (int i = 0; i < plan->gpu_tb0[rep + 1] - plan->gpu_tb0[rep]; i++)
            memcpy(&pd->last_end[(size_t)(plan->gpu_tb0[r] + sc.m[i]) * pd->m],
                   &pd->last_end[(size_t)(plan->gpu_tb0[rep] + i) * pd->m],
                   (size_t)pd->m * sizeof(*pd->last_end));
    }
    scratch_cleanup(&sc);
    return 0;
}

void cs_fold_describe(const struct cs_fold *f, char *buf, size_t len)
{
    const char *q = f->quotient ? ", on the quotient network (each link's orbit one link)" : "";

    if (f->shift == 1)
        snprintf(buf, len, "ranks shifted by 1 (r -> r+1 mod %d, a group of %d): rank 0 replayed%s",
                 f->ngpus, f->order, q);
    else
        snprintf(buf, len,
                 "ranks shifted by %d (r -> r+%d mod %d, a group of %d): ranks 0-%d replayed%s",
                 f->shift, f->shift, f->ngpus, f->order, f->shift - 1, q);
}
