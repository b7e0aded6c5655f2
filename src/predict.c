/* predict.c: the prediction pipeline (load, sizes, plan, replay) as one library call. */
#define _GNU_SOURCE /* syscall */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "gen.h"
#include "meas.h"
#include "period.h"
#include "predict.h"
#include "util.h"
#include "verify.h"
#include "xml.h"

/* Apply "KEY=VALUE" overrides to a platform's parameters. */
static int apply_sets(struct cs_platform *plat, const char *const *sets, int n,
                      struct cs_error *err)
{
    for (int k = 0; k < n; k++) {
        const char *eq = strchr(sets[k], '=');
        char key[256];

        if (eq == NULL || eq == sets[k] || (size_t)(eq - sets[k]) >= sizeof(key)) {
            cs_error_set(err, NULL, 0, "--set takes KEY=VALUE, not '%s'", sets[k]);
            return CS_ERR_USAGE;
        }
        memcpy(key, sets[k], (size_t)(eq - sets[k]));
        key[eq - sets[k]] = '\0';
        if (cs_platform_check_settable(key, err) != 0)
            return CS_ERR_USAGE;
        if (cs_params_set(&plat->params, key, eq + 1, err) != 0)
            return CS_ERR_INVALID;
    }
    return 0;
}

int cs_predict_load(const struct cs_predict_input *in, struct cs_sched **sched,
                    struct cs_platform **plat, struct cs_error *err)
{
    struct cs_sched *s = NULL;
    struct cs_platform *p = NULL;
    int rc;

    if ((in->sched_path == NULL) == (in->gen_spec == NULL) || in->plat_path == NULL) {
        cs_error_set(err, NULL, 0,
                     "a prediction needs one schedule (a file or a generator "
                     "spec) and a platform");
        return CS_ERR_USAGE;
    }
    rc = in->gen_spec ? cs_gen_from_spec_reps(in->gen_spec, in->verify ? 0 : in->reps, &s, err)
                      : cs_sched_read_xml(in->sched_path, &s, err);
    /* a tb over its steps: a what-if; a ring written by its representatives was checked as it
     * was written (its limits, each GPU an image, each connection's two ends), and verify, which
     * reads every GPU, cannot take it */
    if (rc == 0 && s->rep_gpus == 0)
        rc = (in->verify ? cs_verify_refuse_wrong : cs_verify_refuse_invalid_steps)(
            s, in->gen_spec ? in->gen_spec : in->sched_path, 1, err);
    if (rc == 0)
        rc = cs_platform_read(in->plat_path, &p, err);
    if (rc == 0)
        rc = apply_sets(p, in->sets, in->nsets, err);
    if (rc == 0 && s->ngpus > p->ngpus) {
        cs_error_set(err, NULL, 0, "%s: the schedule needs %d GPUs but the platform has %d",
                     in->plat_path, s->ngpus, p->ngpus);
        rc = CS_ERR_INVALID;
    }
    if (rc != 0) {
        cs_platform_free(p);
        cs_sched_free(s);
        return rc;
    }
    *sched = s;
    *plat = p;
    return 0;
}

/* Sizes.
 *
 * nccl-tests turns a requested size into whole elements, rounding down (common.cu setupArgs:
 * count = size / wordSize), and the gathering and scattering collectives into a count per rank
 * rounded down to 16 bytes, times the ranks; it prints the whole buffer. The executor runs a
 * collective with MSCCL only when nchunksperloop divides its whole count (msccl_lifecycle.cc
 * falls back to NCCL otherwise, runtime-audit.md 0 #9). So predict simulates nccl-tests' size
 * rounded down to a multiple of both: the largest size at most the one asked that nccl-tests
 * can run and the executor runs with MSCCL. */
long long cs_predict_nccl_size(enum cs_coll coll, int ngpus, int type_bytes, long long size_bytes)
{
    long long count = size_bytes / type_bytes, per_rank, align;

    if (ngpus < 1 ||
        (coll != CS_COLL_ALLGATHER && coll != CS_COLL_REDUCE_SCATTER && coll != CS_COLL_ALLTOALL))
        return count * type_bytes;
    /* (count / nranks) & -(16 / eltSize): whole 16-byte groups per rank */
    align = type_bytes < 16 ? 16 / type_bytes : 1;
    per_rank = count / ngpus / align * align;
    return per_rank * ngpus * type_bytes;
}

static long long gcd(long long a, long long b)
{
    while (b != 0) {
        long long t = a % b;

        a = b;
        b = t;
    }
    return a;
}

long long cs_predict_granularity(const struct cs_sched *sched, int type_bytes)
{
    /* NCCL's own kernel (gen nccl) runs any count */
    long long exec =
        (long long)(sched->nchunksperloop > 0 && !sched->nccl_kernel ? sched->nchunksperloop : 1) *
        type_bytes;
    long long step = type_bytes;

    /* nccl-tests' sizes are the multiples of its smallest nonzero one */
    if (sched->coll == CS_COLL_ALLGATHER || sched->coll == CS_COLL_REDUCE_SCATTER ||
        sched->coll == CS_COLL_ALLTOALL)
        step = (long long)(sched->ngpus > 0 ? sched->ngpus : 1) *
               (type_bytes < 16 ? 16 / type_bytes : 1) * type_bytes;
    return exec / gcd(exec, step) * step;
}

long long cs_predict_align(const struct cs_sched *sched, int type_bytes, long long size_bytes)
{
    long long g = cs_predict_granularity(sched, type_bytes);
    long long s = cs_predict_nccl_size(sched->coll, sched->ngpus, type_bytes, size_bytes);

    return s / g * g;
}

void cs_predict_sizes_note(const struct cs_sched *sched, int type_bytes, int nzero, char *buf,
                           size_t len)
{
    int per_rank = sched->coll == CS_COLL_ALLGATHER || sched->coll == CS_COLL_REDUCE_SCATTER ||
                   sched->coll == CS_COLL_ALLTOALL;
    int n = snprintf(buf, len,
                     "sizes as nccl-tests runs them (whole elements%s, rounded down), then down "
                     "to a multiple of ",
                     per_rank ? ", 16 bytes per rank" : "");

    if (n < 0 || (size_t)n >= len)
        return;
    if (type_bytes > 0)
        n += snprintf(buf + n, len - (size_t)n, "%lld bytes",
                      cs_predict_granularity(sched, type_bytes));
    else
        n += snprintf(buf + n, len - (size_t)n, "the granularity of each type");
    if (n < 0 || (size_t)n >= len)
        return;
    n += snprintf(buf + n, len - (size_t)n,
                  ": the executor runs MSCCL only on counts that nchunksperloop (%d) divides",
                  sched->nchunksperloop);
    if (nzero > 0 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; %d size%s below that skipped", nzero,
                 nzero > 1 ? "s" : "");
}

int cs_predict_file_hash(const char *path, char hex[17], struct cs_error *err)
{
    unsigned long long h = 14695981039346656037ULL; /* FNV-1a 64 offset basis */
    char *buf = NULL;
    size_t len = 0;
    int rc = cs_file_read(path, 1L << 30, &buf, &len, err);

    if (rc != 0)
        return rc;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)buf[i]) * 1099511628211ULL; /* FNV prime */
    free(buf);
    snprintf(hex, 17, "%016llx", h);
    return 0;
}

/* Append x to *v (length *k, capacity *cap): 0 or CS_ERR_NOMEM. */
static int push_size(long long **v, int *k, int *cap, long long x)
{
    long long *slot = cs_array_slot((void **)v, *k, cap, sizeof(**v));

    if (slot == NULL)
        return CS_ERR_NOMEM;
    *slot = x;
    (*k)++;
    return 0;
}

int cs_predict_size_list(const struct cs_sched *sched, int type_bytes, long long min_bytes,
                         long long max_bytes, long long factor, long long **sizes,
                         long long **nominal, int *n, int *nzero)
{
    long long *v = NULL, *nom = NULL;
    int cap = 0, ncap = 0, k = 0, nk = 0, zero = 0, rc = 0;

    if (min_bytes < 1 || min_bytes > max_bytes || factor < 2 || type_bytes < 1)
        return CS_ERR_USAGE;
    for (long long s = min_bytes; rc == 0; s *= factor) {
        long long r = cs_predict_align(sched, type_bytes, s);

        if (r == 0)
            zero++;
        else if (k == 0 || v[k - 1] != r) {
            rc = push_size(&v, &k, &cap, r);
            if (rc == 0)
                rc = push_size(&nom, &nk, &ncap, s);
        }
        if (s > max_bytes / factor)
            break;
    }
    if (rc != 0) {
        cs_free_each(2, v, nom);
        return rc;
    }
    *sizes = v;
    if (nominal != NULL)
        *nominal = nom;
    else
        free(nom);
    *n = k;
    if (nzero != NULL)
        *nzero = zero;
    return 0;
}

int cs_predict_sizes(const struct cs_sched *sched, int type_bytes, long long min_bytes,
                     long long max_bytes, long long factor, long long **sizes, int *n, int *rounded)
{
    long long *v = NULL;
    int cap = 0, k = 0, any = 0;

    if (min_bytes < 1 || min_bytes > max_bytes || factor < 2 || type_bytes < 1)
        return CS_ERR_USAGE;
    for (long long s = min_bytes;; s *= factor) {
        long long r = cs_plan_round_size(sched, s, type_bytes);

        any |= r != s;
        if ((k == 0 || v[k - 1] != r) && push_size(&v, &k, &cap, r) != 0) {
            free(v);
            return CS_ERR_NOMEM;
        }
        if (s > max_bytes / factor)
            break;
    }
    *sizes = v;
    *n = k;
    if (rounded != NULL)
        *rounded = any;
    return 0;
}

/* Steady-state extrapolation.
 *
 * Every loop iteration of a plan runs the same ops with the same calls (maxAllowedCount is fixed
 * per size); only the last one may carry fewer elements. So a replay of m iterations (m - 1 full
 * ones and the real last one) is the full replay cut short: both run the same events until the
 * short one's last iteration starts to differ. One short replay compares each threadblock's
 * iterations as its events stream in and sends back how each pair of iterations compares
 * (period.c). It keeps no events: per tb and iteration, a digest of the event sequence (kind, op,
 * call, bytes, the tb that ended a wait; the moments of their offsets from the iteration's start
 * and their network seconds) and a snapshot of the tb's state where the iteration begins (its
 * connections' free slots, data and units in flight, when those units arrive, its flag), taken
 * once every tb going on at that instant has run; memory is a few hundred bytes per tb however
 * many events. Once the pipeline and the FIFO credits settle, the replay is periodic: for some
 * period p, every threadblock enters iteration i + p in the state it entered iteration i, shifted
 * by the same time step, and runs the same events (waits of no duration aside: period.h says why
 * they may come and go). The replay is a deterministic function of that state: the counters a
 * tb waits on have it as their only taker, its flag is its own, the units in flight on its
 * connections arrive at the snapshot's times, and the flows its peers have on the links at that
 * instant are their own iterations' events, which agree as well. So the full replay repeats the
 * window too until its own last iteration, which starts in the same phase as the short one's
 * when p divides n - m. The remaining periods are then added to the short replay's time, calls
 * and transfers.
 *
 * The comparison is exact where it can be: a different event, event count, counter or flag marks
 * the pair as different at once, and a replay of p = 1 only (the first, the medium one) then
 * stops as soon as one of the two pairs it needs to agree is marked (period.h): it cannot settle
 * any more, and the rest of it is not simulated. Times agree within the rounding below.
 *
 * The check wants p + 1 consecutive periodic pairs of iterations, from iteration 1 (iteration 0
 * fills the pipeline) to the one before the last (which may feel the short replay's end). A first
 * replay of CS_EXTRAP_SHORT iterations tries p = 1, the usual case; when it does not settle, a
 * second one long enough for periods up to CS_NCCL_STEPS (a connection's slots refill within that
 * many iterations, each taking at least one) and for the credit stalls of the first window to show
 * tries again, with m chosen so that n - m is a multiple of 8 (periods 3, 5, 6 and 7 take one
 * more replay with the right residue). (A 16-GPU AllGather ring in Simple at 1 GiB settles only
 * from iteration 7, once its credit stalls have shifted into place.) When the first replay's
 * events say the second would have too many (CS_EXTRAP_MAX_EVENTS), a medium one of
 * CS_EXTRAP_MEDIUM iterations tries p = 1 again, from a later iteration: a ring over 64 DGX
 * nodes settles from iteration 2 or 3. A first replay that stops early (above) does so only past
 * the events that already choose the medium one, so that stopping changes no choice.
 *
 * Some schedules approach their steady state slowly: a ring whose one slower connection throttles
 * the threadblocks before it one by one, a slot at a time, while the makespan already grows by
 * the slow connection's time per iteration. For those the fallback is what extrapolation was
 * before: the makespans of short replays of 2 to 18 iterations, each on its own; when, for some
 * p up to CS_NCCL_STEPS, every increment over p in the second half agrees closely enough that the
 * remaining periods cannot move the total by more than CS_EXTRAP_REL_ERR, the remaining periods
 * are added to the short replay whose m has n's residue. When nothing settles, or the short
 * replays would cost more than half the full one, the full replay runs.
 *
 * A later deadlock is ruled out: every wait of iteration i (a FIFO slot freed by an earlier call of
 * the same connection, a flag of the same iteration, the previous op of the same threadblock)
 * points to an event of iteration i or earlier, so a cycle of waits lies within one iteration,
 * and every iteration has the same waits as the first. A short replay that completes has none;
 * one that deadlocks falls back to the full replay, which reports it. */
/* The events of a settled schedule still differ by the engine's rounding (about 1e-12 s each,
 * SimGrid's surf/precision), and the full replay's own time drifts by up to about 1e-7 of itself
 * over a long loop: the step is averaged over the periodic window, and the window accepted only
 * when what the events' spread allows the step to be off by, over the remaining periods, stays
 * within this much of the total. */
#define CS_EXTRAP_REL_ERR 1e-7
#define CS_EXTRAP_SHORT 5                      /* iterations of the first replay: p = 1 */
#define CS_EXTRAP_LONG (2 * CS_NCCL_STEPS + 3) /* at least, of the second: p up to 8 */
/* Of the second when the long one would have too many events: p = 1 only, but room for the
 * pipeline to settle over as many iterations as a connection has slots (a ring over many nodes,
 * whose slower network connections throttle the threadblocks before them for a few iterations) */
#define CS_EXTRAP_MEDIUM CS_NCCL_STEPS
/* The long second replay runs only when the first gave fewer than this many events for every
 * CS_EXTRAP_SHORT of its iterations per iteration of the second (what the timeline it once
 * recorded whole could hold; now a bound on its wall time). */
#define CS_EXTRAP_MAX_EVENTS 2000000LL
/* The first replay stops as soon as a pair it needs differs (period.h), once it has given this
 * many events: enough that the second is the medium one whatever n (CS_EXTRAP_LONG iterations or
 * more at nev / CS_EXTRAP_SHORT events each would be over CS_EXTRAP_MAX_EVENTS), so that stopping
 * changes neither which replay comes next nor any result. */
#define CS_EXTRAP_STOP_EVENTS                                                                      \
    ((CS_EXTRAP_MAX_EVENTS + CS_EXTRAP_LONG - 1) / CS_EXTRAP_LONG * CS_EXTRAP_SHORT)

/* When tb t's last event of iteration j ends minus when its last of iteration i does, for the
 * first tb with events in both; 0 when there is none. */
static double iter_gap(const struct cs_period *pd, int i, int j)
{
    for (int t = 0; t < pd->ntbs; t++) {
        double a = pd->last_end[(size_t)t * pd->m + i], b = pd->last_end[(size_t)t * pd->m + j];

        if (!isnan(a) && !isnan(b))
            return b - a;
    }
    return 0;
}

/* Calls and transfers of iterations [first, first + p), as the replay counts them: a CALL event
 * is a call (or a local op), a sending UNIT event with data a transfer. */
static void period_counts(const struct cs_period *pd, struct cs_predict_period *per)
{
    per->ncalls = per->ntransfers = 0;
    for (int i = per->first; i < per->first + per->p; i++) {
        per->ncalls += pd->ncalls[i];
        per->ntransfers += pd->ntransfers[i];
    }
}

/* The earliest iteration from which pairs (i, i + p) up to i = last agree with step0 closely
 * enough for q more periods (see cs_predict_find_period), or -1. */
static int settled_from(const struct cs_period *pd, int p, long long q, double step0,
                        double budget_s)
{
    int last = pd->m - 2 - p, first = -1;
    double dev = 0;

    for (int i = last; i >= 1; i--) {
        double d = cs_period_dev(pd, i, p, step0);
        int k = (last + p - i) / p; /* whole periods from i to the last compared iteration */

        if (!(d <= budget_s))
            break;
        dev = fmax(dev, d);
        /* the step averaged over k periods is off by at most 2 dev / k, q times over */
        if (last - i >= p && (double)q * 2 * dev / k + dev <= budget_s)
            first = i;
    }
    return first;
}

/* cs_predict_find_period on the comparisons of the replay: 1, or 0 (none, or pd is not a whole
 * replay's). */
static int find_period(const struct cs_period *pd, int n, int max_period, double rel_err,
                       struct cs_predict_period *out)
{
    int m = pd->m;

    if (pd->invalid || pd->truncated || n < m)
        return 0;
    for (int p = 1; p <= max_period && p <= pd->maxp; p++) {
        int last = m - 2 - p, first, k;
        long long q = (n - m) / p;
        double step = last >= 1 ? iter_gap(pd, last, last + p) : 0;

        if (last - p < 1 || !(step > 0))
            continue;
        first = settled_from(pd, p, q, step,
                             rel_err * (pd->makespan_s + pd->offset_s + (double)q * step));
        if (first < 0)
            continue;
        k = (last + p - first) / p;
        *out = (struct cs_predict_period){
            .p = p, .first = first, .step_s = iter_gap(pd, first, first + k * p) / k};
        period_counts(pd, out);
        return 1;
    }
    return 0;
}

int cs_predict_find_period(const struct cs_timeline *tl, int ntbs, int m, int n, int max_period,
                           double rel_err, struct cs_predict_period *out)
{
    struct cs_period pd;
    int found;

    if (ntbs < 1 || m < 1 || max_period < 1 || n < m)
        return 0;
    if (cs_period_from_timeline(&pd, tl, ntbs, m, max_period) != 0)
        return CS_ERR_NOMEM;
    found = find_period(&pd, n, max_period, rel_err, out);
    cs_period_cleanup(&pd);
    return found;
}

/* Replay plan cut to m iterations (the last one as in the full plan), comparing its iterations
 * into pd (set up by the caller) when pd is non-NULL. */
static int replay_iters(struct cs_plan *plan, int m, const struct cs_platform *plat,
                        const struct cs_replay_opts *ropts, struct cs_period *pd,
                        struct cs_replay_result *res, struct cs_error *err)
{
    struct cs_plan_sizing full = plan->sz;
    struct cs_replay_opts o = *ropts;
    int rc;

    o.timeline = NULL;
    o.period = pd;
    plan->sz.niter = m;
    plan->sz.chunk_elems = (long long)(m - 1) * full.loop_elems + full.last_elems;
    rc = cs_replay_run(plan, plat, &o, res, err);
    plan->sz = full;
    return rc;
}

/* A recorded replay kept across the sizes of one cs_predict_run: the replay of m iterations
 * depends on the size only through loop_elems, last_elems and max_allowed (the schedule,
 * platform, protocol and type being the same), so the large sizes of a sweep, whole loops of the
 * same length, share it. Only complete replays with every call recorded are kept. */
struct extrap_rec {
    long long loop_elems, last_elems;
    int max_allowed, m; /* m 0: empty */
    struct cs_replay_result r;
    struct cs_period pd;
};

/* One per stage of by_events. */
struct extrap_cache {
    struct extrap_rec rec[2];
};

static void rec_clear(struct extrap_rec *rec)
{
    if (rec->m > 0)
        cs_period_cleanup(&rec->pd);
    cs_replay_result_cleanup(&rec->r);
    memset(rec, 0, sizeof(*rec));
}

static void cache_cleanup(struct extrap_cache *c)
{
    for (int k = 0; k < 2; k++)
        rec_clear(&c->rec[k]);
}

/* rec filled with the iterations of a replay of plan cut to m iterations compared for periods up
 * to maxp, unless it holds them already; with maxp 1 the replay stops early once it cannot
 * settle and has given stop_events events. 0 (rec->m 0 when the replay is not one to keep: it
 * deadlocked, or its events miss calls; one that stopped early is kept, marked so), or a
 * CS_ERR_*. *spent adds the simulation's wall and peak memory and takes its status; *nevents is
 * set to the events the replay gave. */
static int record_iters(struct cs_plan *plan, int m, int maxp, long long stop_events,
                        const struct cs_platform *plat, const struct cs_replay_opts *ropts,
                        struct extrap_rec *rec, struct cs_replay_result *spent, long long *nevents,
                        struct cs_error *err)
{
    long long calls = 0, transfers = 0;
    int rc;

    if (rec->m == m && rec->loop_elems == plan->sz.loop_elems &&
        rec->last_elems == plan->sz.last_elems && rec->max_allowed == plan->sz.max_allowed) {
        /* no wall spent; the memory of the simulation the result comes from */
        spent->maxrss_kb =
            rec->r.maxrss_kb > spent->maxrss_kb ? rec->r.maxrss_kb : spent->maxrss_kb;
        spent->status = rec->r.status;
        *nevents = rec->pd.nevents;
        return 0;
    }
    rec_clear(rec);
    if (cs_period_init(&rec->pd, plan->ntbs, m, maxp) != 0)
        return cs_error_fail(err, CS_ERR_NOMEM, "", 0, "out of memory");
    rec->m = m; /* rec_clear frees pd from here on */
    if (maxp == 1 && m >= 5) {
        /* settling for p = 1 needs pairs m - 4 and m - 3 (find_period) */
        rec->pd.stop_pairs = m - 4;
        rec->pd.stop_events = stop_events;
    }
    if ((rc = replay_iters(plan, m, plat, ropts, &rec->pd, &rec->r, err)) != 0) {
        rec_clear(rec);
        return rc;
    }
    spent->wall_s += rec->r.wall_s;
    spent->maxrss_kb = rec->r.maxrss_kb > spent->maxrss_kb ? rec->r.maxrss_kb : spent->maxrss_kb;
    spent->status = rec->r.status;
    *nevents = rec->pd.nevents;
    for (int i = 0; i < m; i++) {
        calls += rec->pd.ncalls[i];
        transfers += rec->pd.ntransfers[i];
    }
    /* The events must account for every call and transfer the replay counted. */
    if (rec->r.status == CS_REPLAY_OK && !rec->pd.truncated && !rec->pd.invalid &&
        (rec->pd.stopped || (calls == rec->r.ncalls && transfers == rec->r.ntransfers))) {
        rec->loop_elems = plan->sz.loop_elems;
        rec->last_elems = plan->sz.last_elems;
        rec->max_allowed = plan->sz.max_allowed;
    } else
        rec_clear(rec);
    return 0;
}

/* A recorded replay of m iterations (rec's when it holds it) and its period up to max_period: 1
 * with *r (a copy of rec's, owning nothing) and *per filled, 0 when it did not settle (or
 * deadlocked, or stopped early), or a CS_ERR_*. spent and nevents as record_iters. */
static int settle(struct cs_plan *plan, int m, int max_period, long long stop_events,
                  const struct cs_platform *plat, const struct cs_replay_opts *ropts,
                  struct extrap_rec *rec, struct cs_replay_result *r, struct cs_predict_period *per,
                  struct cs_replay_result *spent, long long *nevents, struct cs_error *err)
{
    int rc = record_iters(plan, m, max_period, stop_events, plat, ropts, rec, spent, nevents, err);

    if (rc != 0 || rec->m == 0 || rec->pd.stopped)
        return rc;
    rc = find_period(&rec->pd, plan->sz.niter, max_period, CS_EXTRAP_REL_ERR, per);
    if (rc == 1) {
        *r = rec->r;
        r->report = NULL;
    }
    return rc;
}

/* The fallback: the makespans of short replays of CS_EXTRAP_FIRST ... CS_EXTRAP_FIRST +
 * CS_EXTRAP_N - 1 iterations, each replayed on its own. */
#define CS_EXTRAP_FIRST 2
#define CS_EXTRAP_N (2 * CS_NCCL_STEPS + 1)
#define CS_EXTRAP_JOBS 4 /* at most this many at once: each child holds a whole simulation */

/* Start a replay of plan cut to m iterations (the last one as in the full plan). */
static int start_iters(struct cs_plan *plan, int m, const struct cs_platform *plat,
                       const struct cs_replay_opts *ropts, struct cs_replay_job *job,
                       struct cs_error *err)
{
    struct cs_plan_sizing full = plan->sz;
    int rc;

    plan->sz.niter = m;
    plan->sz.chunk_elems = (long long)(m - 1) * full.loop_elems + full.last_elems;
    rc = cs_replay_start(plan, plat, ropts, job, err);
    plan->sz = full;
    return rc;
}

/* The short replays r[k] of CS_EXTRAP_FIRST + k iterations, k < CS_EXTRAP_N, several at once
 * (one child each, up to the CPUs online, at most CS_EXTRAP_JOBS). 0 (some may have deadlocked),
 * or a CS_ERR_*. */
static int short_replays(struct cs_plan *plan, const struct cs_platform *plat,
                         const struct cs_replay_opts *ropts, struct cs_replay_result *r,
                         struct cs_error *err)
{
    struct cs_replay_job jobs[CS_EXTRAP_N];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int width = cpus < 1 ? 1 : cpus > CS_EXTRAP_JOBS ? CS_EXTRAP_JOBS : (int)cpus;
    int started = 0, done = 0, rc = 0;

    while (done < CS_EXTRAP_N) {
        while (rc == 0 && started < CS_EXTRAP_N && started - done < width) {
            rc = start_iters(plan, CS_EXTRAP_FIRST + started, plat, ropts, &jobs[started], err);
            started += rc == 0;
        }
        if (done == started)
            break;
        if (cs_replay_finish(&jobs[done], &r[done], err) != 0 && rc == 0)
            rc = CS_ERR_SIM;
        done++;
    }
    return rc;
}

/* With the short replays r[k] of CS_EXTRAP_FIRST + k iterations, whether every increment over p
 * agrees to within what n iterations allow; if so *res is the extrapolated result. */
static int periodic(const struct cs_replay_result *r, int p, int n, struct cs_replay_result *res)
{
    int last = CS_EXTRAP_N - 1, b = last - (last + CS_EXTRAP_FIRST - n % p) % p;
    long long q = (n - CS_EXTRAP_FIRST - b) / p; /* periods left after r[b] */
    double step = r[b].time_s - r[b - p].time_s, wobble = 0;

    /* The first window fills the slots: the increments must agree over the second. */
    for (int k = last - CS_NCCL_STEPS; k + p <= last; k++)
        wobble = fmax(wobble, fabs(r[k + p].time_s - r[k].time_s - step));
    if (wobble * (double)q > CS_EXTRAP_REL_ERR * (r[b].time_s + step * (double)q))
        return 0;
    *res = r[b];
    res->report = NULL;
    res->time_s += step * (double)q;
    res->sim_s += (r[b].sim_s - r[b - p].sim_s) * (double)q;
    res->ncalls += (r[b].ncalls - r[b - p].ncalls) * q;
    res->ntransfers += (r[b].ntransfers - r[b - p].ntransfers) * q;
    res->wall_s = 0;
    for (int k = 0; k <= last; k++) {
        res->wall_s += r[k].wall_s;
        res->maxrss_kb = r[k].maxrss_kb > res->maxrss_kb ? r[k].maxrss_kb : res->maxrss_kb;
    }
    return 1;
}

static void free_results(struct cs_replay_result *r, int n)
{
    for (int k = 0; k < n; k++)
        cs_replay_result_cleanup(&r[k]);
}

/* The fallback: 1 with *res extrapolated from the makespans of the short replays and *replayed
 * set to the longest, 0 when they do not settle, or a CS_ERR_*. */
static int by_increments(struct cs_plan *plan, const struct cs_platform *plat,
                         const struct cs_replay_opts *ropts, struct cs_replay_result *res,
                         int *replayed, struct cs_error *err)
{
    struct cs_replay_result r[CS_EXTRAP_N] = {{0}};
    int n = plan->sz.niter, k, rc = 0, done = 0, dead = 0;

    rc = short_replays(plan, plat, ropts, r, err);
    for (k = 0; k < CS_EXTRAP_N && rc == 0; k++)
        dead |= r[k].status != CS_REPLAY_OK;
    for (int p = 1; p <= CS_NCCL_STEPS && rc == 0 && !dead && !done; p++)
        done = periodic(r, p, n, res);
    if (done)
        *replayed = CS_EXTRAP_FIRST + CS_EXTRAP_N - 1;
    free_results(r, CS_EXTRAP_N);
    return rc != 0 ? rc : done;
}

/* Extrapolation from the events of one or two recorded replays: 1 with *res filled and
 * *replayed set to the longest replay, 0 when they do not settle (or deadlock: spent->status),
 * or a CS_ERR_*. *cost counts the iterations replayed, spent their wall and peak memory. */
static int by_events(struct cs_plan *plan, const struct cs_platform *plat,
                     const struct cs_replay_opts *ropts, struct extrap_cache *cache,
                     struct cs_replay_result *res, int *replayed, int *cost,
                     struct cs_replay_result *spent, struct cs_error *err)
{
    int n = plan->sz.niter, m = 0, maxp = 1, rc = 0;
    struct cs_replay_result r = {0};
    struct cs_predict_period per;
    long long q, nev = 0;

    for (int stage = 0; stage < 2 && rc == 0 && spent->status != CS_REPLAY_DEADLOCK; stage++) {
        /* the second replay's n - m a multiple of 8: periods 1, 2, 4 and 8 need no other */
        m = stage == 0 ? CS_EXTRAP_SHORT : CS_EXTRAP_LONG + ((n - CS_EXTRAP_LONG) % 8 + 8) % 8;
        maxp = stage == 0 ? 1 : CS_NCCL_STEPS;
        /* too many events (about m / 5 times the first's): the medium one */
        if (stage == 1 && nev / CS_EXTRAP_SHORT * m >= CS_EXTRAP_MAX_EVENTS) {
            m = CS_EXTRAP_MEDIUM;
            maxp = 1;
        }
        if (2 * (*cost + m) > n) /* not worth it */
            return 0;
        *cost += m;
        rc = settle(plan, m, maxp, stage == 0 ? CS_EXTRAP_STOP_EVENTS : 0, plat, ropts,
                    &cache->rec[stage], &r, &per, spent, &nev, err);
    }
    if (rc != 1)
        return rc;
    if ((n - m) % per.p != 0) {
        /* one more replay, whose last iteration starts in the full replay's phase */
        cs_replay_result_cleanup(&r);
        m += (n - m) % per.p;
        if ((rc = replay_iters(plan, m, plat, ropts, NULL, &r, err)) != 0)
            return rc;
        spent->wall_s += r.wall_s;
        spent->maxrss_kb = r.maxrss_kb > spent->maxrss_kb ? r.maxrss_kb : spent->maxrss_kb;
        if (r.status != CS_REPLAY_OK) {
            cs_replay_result_cleanup(&r);
            return 0;
        }
    }
    q = (n - m) / per.p;
    *res = r;
    res->time_s += per.step_s * (double)q;
    res->sim_s += per.step_s * (double)q;
    res->ncalls += per.ncalls * q;
    res->ntransfers += per.ntransfers * q;
    res->wall_s = 0; /* spent's */
    res->maxrss_kb = 0;
    *replayed = m;
    return 1;
}

/* Try to extrapolate plan's replay from short ones (recorded ones from cache when it holds them,
 * and kept there): 1 with *res filled and *replayed set to the longest short replay, 0 when the
 * full replay must run, or a CS_ERR_*. */
static int extrapolate(struct cs_plan *plan, const struct cs_platform *plat,
                       const struct cs_replay_opts *ropts, struct extrap_cache *cache,
                       struct cs_replay_result *res, int *replayed, struct cs_error *err)
{
    struct cs_replay_result spent = {0};
    int cost = 0, rc;

    /* Calls of several chunks happen only in one-iteration plans (proto.h). */
    if (plan->sz.max_allowed != 1)
        return 0;
    rc = by_events(plan, plat, ropts, cache, res, replayed, &cost, &spent, err);
    for (int k = 0; k < CS_EXTRAP_N; k++)
        cost += CS_EXTRAP_FIRST + k;
    /* A deadlock in a short replay is one in the full replay too: let that one report it. */
    if (rc == 0 && spent.status != CS_REPLAY_DEADLOCK && 2 * cost <= plan->sz.niter)
        rc = by_increments(plan, plat, ropts, res, replayed, err);
    if (rc == 1) {
        res->wall_s += spent.wall_s;
        res->maxrss_kb = spent.maxrss_kb > res->maxrss_kb ? spent.maxrss_kb : res->maxrss_kb;
    }
    return rc;
}

/* A replay of at least this many primitive calls (all ranks, the whole run: seconds) is started
 * beside the extrapolation's short replays, which then cost no wall time when they do not
 * settle (the 512-GPU ring LL at 1 GiB unfolded: 33M calls, short replays of 13 iterations that
 * never settle). */
#define CS_SPECULATE_CALLS 4000000LL

/* The CPUs this process may run on (taskset, a container's cpuset), at least 1: the kernel's
 * affinity mask, asked directly (src/sched.h is the schedule's, not the C library's). */
static int cpus_free(void)
{
    unsigned long mask[64] = {0};
    long n = syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
    int cpus = 0;

    for (long i = 0; n > 0 && i < n / (long)sizeof(mask[0]); i++)
        cpus += __builtin_popcountl(mask[i]);
    return cpus > 0 ? cpus : 1;
}

/* The first rank of a physical GPU whose threadblocks cannot all be resident at once, or -1:
 * with cs.ranks_per_gpu N > 1 (virtual ranks), ranks k*N .. k*N+N-1 share one GPU's SMs. */
static int find_overfull(const struct cs_sched *sched, const struct cs_params *p, char *msg,
                         size_t len)
{
    int per = (int)p->ranks_per_gpu;
    long resident = (long)p->gpu_sms * (long)p->ctas_per_sm;

    if (per <= 1)
        return cs_verify_find_overfull(sched, 0, (int)p->gpu_sms, (int)p->ctas_per_sm, msg, len);
    for (int g0 = 0; g0 < sched->ngpus; g0 += per) {
        int last = g0 + per < sched->ngpus ? g0 + per - 1 : sched->ngpus - 1;
        long n = 0;

        for (int g = g0; g <= last; g++)
            n += sched->gpus[g].ntbs;
        if (n <= resident)
            continue;
        snprintf(msg, len,
                 "ranks %d-%d share one GPU (cs.ranks_per_gpu %d) and have %ld threadblocks; at "
                 "most %ld are co-resident on it (%.0f SMs x %.0f CTAs per SM): the runtime would "
                 "hang",
                 g0, last, per, n, resident, p->gpu_sms, p->ctas_per_sm);
        return g0;
    }
    return -1;
}

/* The schedule's plan, compiled (or its failure: the code crc, the error cerr), sized for size
 * bytes of type_bytes elements: 0, or what cs_plan_build would return there, with why set. */
static int size_plan(const struct cs_sched *sched, struct cs_plan *plan, int crc,
                     const struct cs_error *cerr, long long size, int type_bytes,
                     enum cs_proto proto, struct cs_error *why)
{
    struct cs_plan_sizing sz;
    int rc = cs_plan_sizing_sched(&sz, sched, proto, size, type_bytes, why);

    if (rc != 0)
        return rc;
    if (crc != 0) {
        *why = *cerr;
        return crc;
    }
    cs_plan_resize(plan, &sz, type_bytes);
    return 0;
}

/* nccl-tests runs the collective back to back, and with a process per GPU nothing holds a GPU
 * whose part ended early from starting the next one: where the GPUs of one replay end apart
 * (by more than CS_B2B_SPREAD of it), res becomes the replay of CS_B2B_COLLS collectives back
 * to back (cs_replay_opts.back_to_back). Where they end together each collective is the last
 * one shifted, as is the time. Not for a plan long enough to extrapolate (its loop of
 * 2 x CS_EXTRAP_SHORT iterations or more), so that a size has one time whichever way it is
 * replayed: a GPU gains at most the tail of its last iterations there. Not beyond CS_B2B_CALLS
 * calls. One process driving several GPUs (-g) launches their kernels in turn, which paces
 * each collective (replay.c): kept as one. */
#define CS_B2B_COLLS 4
#define CS_B2B_SPREAD 1e-4
#define CS_B2B_CALLS 2000000LL
static int back_to_back(const struct cs_plan *plan, const struct cs_platform *plat,
                        const struct cs_replay_opts *ropts, struct cs_replay_result *res,
                        struct cs_error *err)
{
    struct cs_replay_opts o = *ropts;
    struct cs_replay_result b2b;
    int rc;

    if (res->status != CS_REPLAY_OK || ropts->timeline != NULL || ropts->back_to_back > 1 ||
        plat->params.gpus_per_process > 1 || !(res->spread_s > CS_B2B_SPREAD * res->sim_s) ||
        plan->sz.niter >= 2 * CS_EXTRAP_SHORT || res->ncalls * CS_B2B_COLLS > CS_B2B_CALLS)
        return 0;
    o.back_to_back = CS_B2B_COLLS;
    o.period = NULL;
    if ((rc = cs_replay_run(plan, plat, &o, &b2b, err)) != 0)
        return rc;
    cs_replay_result_cleanup(res);
    *res = b2b;
    return 0;
}

/* Size the compiled plan (failed with crc and cerr when crc is not 0), replay it for one size
 * into row (extrapolating with cache); *keep is set to the plan when keep is non-NULL. */
static int predict_one(const struct cs_sched *sched, struct cs_plan *plan, int crc,
                       const struct cs_error *cerr, const struct cs_platform *plat,
                       const struct cs_predict_opts *opts, const struct cs_replay_opts *ropts,
                       struct extrap_cache *cache, long long size, struct cs_predict_row *row,
                       struct cs_plan **keep, struct cs_error *err)
{
    enum cs_proto proto = opts->proto ? opts->proto : sched->proto;
    struct cs_replay_job full;
    struct cs_error why;
    int rc, spec = 0;

    memset(row, 0, sizeof(*row));
    row->size_bytes = size;
    row->count = size / opts->type_bytes;
    cs_error_init(&why);
    rc = size_plan(sched, plan, crc, cerr, size, opts->type_bytes, proto, &why);
    if (rc == CS_ERR_INVALID && opts->keep_going) {
        row->refused = strdup(why.msg);
        return row->refused != NULL ? 0 : CS_ERR_NOMEM;
    }
    if (rc != 0 && err != NULL && err->msg[0] == '\0')
        *err = why;
    if (rc == 0 && find_overfull(sched, &plat->params, why.msg, sizeof(why.msg)) >= 0) {
        /* The runtime would hang at every size it runs: nothing to replay. */
        row->niter = plan->sz.niter;
        row->max_allowed = plan->sz.max_allowed;
        row->hang = strdup(why.msg);
        return row->hang != NULL ? 0 : CS_ERR_NOMEM;
    }
    if (rc == 0 && !opts->no_extrapolate && ropts->timeline == NULL) {
        /* A long replay starts at once beside the short ones when a CPU is free for it: should
         * they not settle, it is on its way; should they, it is killed. */
        if (plan->ncalls_total >= CS_SPECULATE_CALLS && cpus_free() >= 2) {
            rc = cs_replay_start(plan, plat, ropts, &full, err);
            spec = row->beside = rc == 0;
        }
        if (rc == 0)
            rc = extrapolate(plan, plat, ropts, cache, &row->res, &row->replayed_iters, err);
    }
    if (rc == 0 && spec)
        rc = cs_replay_finish(&full, &row->res, err);
    else if (rc == 0)
        rc = cs_replay_run(plan, plat, ropts, &row->res, err);
    else if (spec)
        cs_replay_cancel(&full);
    if (rc == 1)
        rc = 0;
    if (rc == 0 && !row->replayed_iters)
        rc = back_to_back(plan, plat, ropts, &row->res, err);
    if (rc != 0)
        return rc;
    row->niter = plan->sz.niter;
    row->max_allowed = plan->sz.max_allowed;
    if (row->res.status == CS_REPLAY_OK && !(isfinite(row->res.time_s) && row->res.time_s > 0)) {
        return cs_error_fail(err, CS_ERR_SIM, NULL, 0,
                             "%lld bytes: the replay's time is %g s, not a finite positive time "
                             "(a platform parameter out of any hardware's range?)",
                             size, row->res.time_s);
    }
    if (row->res.status == CS_REPLAY_OK) {
        row->time_us = row->res.time_s * 1e6;
        row->algbw_GBps = size / row->res.time_s / 1e9;
        row->busbw_GBps = row->algbw_GBps * cs_busbw_factor(sched->coll, sched->ngpus);
    }
    if (keep != NULL)
        *keep = plan;
    return 0;
}

/* LL128 off NVLink.
 *
 * NCCL enables LL128 only where every GPU-to-GPU path within a node is NVLink (typeIntra <=
 * PATH_NVB) and every GPU-NIC path crosses PCIe switches at most (typeInter <= PATH_PXB): "Other
 * cases are not tested and may cause silent data corruption" (executor src/graph/tuning.cc:324-325;
 * nccl-a100.md 1.5). LL128 relies on 128-byte stores arriving in order, which NVLink gives and
 * PCIe does not. MSCCL runs whatever protocol the XML names. A connection's class is its route's
 * slowest link (net > pcie > nvlink, the replay's rule for cs.call_s): pcie is a path within a node
 * that is not all NVLink, flagged; net crosses nodes, where NCCL allows LL128 with the NIC behind a
 * PCIe switch, which is where every platform family puts it (a platform cannot say otherwise), so
 * it is not flagged. The routes come from a replay of one loop iteration that records only them
 * (a timeline of one event). */
int cs_predict_check_ll128(const struct cs_plan *plan, const struct cs_platform *plat, char **msg,
                           struct cs_error *err)
{
    struct cs_plan one = *plan;
    struct cs_replay_opts ro = {0};
    struct cs_replay_result res;
    struct cs_timeline tl;
    int pcie = 0, nflagged = 0, first = -1, order, rc;
    const char *link = "";
    char buf[1024];

    *msg = NULL;
    for (int i = 0; i < plat->nlinks; i++)
        pcie |= plat->links[i].cls == CS_LINK_PCIE;
    if (plan->proto != CS_PROTO_LL128 || !pcie)
        return 0;
    one.sz.niter = 1;
    one.sz.chunk_elems = one.sz.last_elems;
    cs_timeline_init(&tl, 1);
    ro.timeline = &tl;
    /* a plan of representatives replays folded: its connections stand for order each */
    ro.fold_timeline = plan->rep_gpus > 0;
    if ((rc = cs_replay_run(&one, plat, &ro, &res, err)) != 0) {
        cs_timeline_cleanup(&tl);
        return rc;
    }
    order = ro.fold_timeline && res.fold_order > 1 ? res.fold_order : 1;
    cs_replay_result_cleanup(&res);
    for (int c = 0; c < tl.nconns; c++) {
        const struct cs_tl_conn *tc = &tl.conns[c];
        enum cs_link_class cls = 0;
        const char *off = NULL;

        for (int k = 0; k < tc->nroute; k++) {
            const char *name = tl.links[tl.route[tc->route0 + k]].name;
            enum cs_link_class lc = cs_platform_link_class(plat, name);

            cls = cs_link_class_slower(lc, cls) ? lc : cls;
            off = off == NULL && lc != CS_LINK_NVLINK ? name : off;
        }
        if (cls != CS_LINK_PCIE)
            continue;
        if (nflagged++ == 0) {
            first = c;
            link = off;
        }
    }
    if (nflagged > 0)
        snprintf(buf, sizeof(buf),
                 "LL128 over a path that is not NVLink: connection gpu %d -> gpu %d channel %d "
                 "crosses %s (%s)%s%.0d%s of the %d connections; NCCL enables LL128 only where "
                 "every path within a node is NVLink (tuning.cc, nccl-a100.md 1.5: \"Other cases "
                 "are not tested and may cause silent data corruption\"); MSCCL runs the protocol "
                 "the schedule names",
                 tl.conns[first].src, tl.conns[first].dst, tl.conns[first].chan, link,
                 cs_link_class_name(CS_LINK_PCIE), nflagged * order > 1 ? ", like " : "",
                 nflagged * order > 1 ? nflagged * order - 1 : 0,
                 nflagged * order > 1 ? " more" : "", tl.nconns * order);
    cs_timeline_cleanup(&tl);
    if (nflagged > 0 && (*msg = strdup(buf)) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    return 0;
}

/* The LL128 warning of sched on plat at the smallest of the sizes (a new string, or NULL). The
 * routes do not depend on the size; a size the executor refuses leaves nothing to check. */
static int ll128_warning(const struct cs_sched *sched, const struct cs_platform *plat,
                         const struct cs_predict_opts *opts, long long size, char **msg,
                         struct cs_error *err)
{
    enum cs_proto proto = opts->proto ? opts->proto : sched->proto;
    struct cs_plan *plan = NULL;
    int rc;

    *msg = NULL;
    if (proto != CS_PROTO_LL128 ||
        cs_plan_build(sched, size, opts->type_bytes, proto, &plan, NULL) != 0)
        return 0;
    rc = cs_predict_check_ll128(plan, plat, msg, err);
    cs_plan_free(plan);
    return rc;
}

/* Row k's nominal size and, with opts->measured, its measured times. */
static void set_nominal_measured(const struct cs_predict_opts *opts, int k,
                                 struct cs_predict_row *row)
{
    const struct cs_predict_meas_point *p;

    row->nominal_bytes = opts->nominal != NULL ? opts->nominal[k] : row->size_bytes;
    if (opts->measured == NULL)
        return;
    /* a log holds what nccl-tests printed: the aligned size, or the one asked for */
    p = cs_predict_meas_find(opts->measured, row->size_bytes);
    if (p == NULL)
        p = cs_predict_meas_find(opts->measured, row->nominal_bytes);
    if (p != NULL) {
        /* the out-of-place rows, or the in-place ones of a size measured only in place (an
         * MSCCL run registers its schedules for in-place calls only) */
        row->measured_us = p->oop_us > 0 ? p->oop_us : p->ip_us;
        row->measured_ip_us = p->ip_us;
    }
}

/* Add to *warning (a new string, or NULL) the runtime's refusal of a tb over its steps: the
 * schedule is simulated all the same, as a what-if. 0 or CS_ERR_NOMEM. */
static int steps_warning(const struct cs_sched *sched, char **warning, struct cs_error *err)
{
    char buf[512], *both;
    size_t len;

    if (cs_sched_steps_warning(sched, buf, sizeof(buf)) == NULL)
        return 0;
    len = strlen(buf) + (*warning ? strlen(*warning) : 0) + 64;
    if ((both = malloc(len)) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    snprintf(both, len, "%s%s%s: simulated as a what-if", *warning ? *warning : "",
             *warning ? "; " : "", buf);
    free(*warning);
    *warning = both;
    return 0;
}

int cs_predict_run(const struct cs_sched *sched, const struct cs_platform *plat,
                   const struct cs_predict_opts *opts, const long long *sizes, int n,
                   struct cs_predict_row *rows, struct cs_error *err)
{
    enum cs_proto proto = opts->proto ? opts->proto : sched->proto;
    char *warning = NULL;
    struct extrap_cache cache = {0};
    struct cs_plan *plan = NULL, *kept = NULL;
    struct cs_error cerr;
    int crc = 0, rc = n > 0 ? ll128_warning(sched, plat, opts, sizes[0], &warning, err) : 0;

    if (rc == 0 && n > 0)
        rc = steps_warning(sched, &warning, err);
    if (rc != 0) {
        free(warning);
        return rc;
    }
    /* a size changes only the plan's sizing: one compile (its failure, a refusal at every size
     * the executor would otherwise take, reported at each) */
    cs_error_init(&cerr);
    if (n > 0)
        crc = opts->release_steps != NULL
                  ? cs_plan_compile_release(opts->release_steps, proto, &plan, &cerr)
                  : cs_plan_compile(sched, proto, &plan, &cerr);
    for (int k = 0; k < n; k++) {
        struct cs_replay_opts ropts = opts->replay;
        int last = k == n - 1 && opts->timeline != NULL;

        /* --trace and --stats record the largest size only. */
        ropts.timeline = last ? opts->timeline : NULL;
        rc = predict_one(sched, plan, crc, &cerr, plat, opts, &ropts, &cache, sizes[k], &rows[k],
                         last ? &kept : NULL, err);
        if (kept != NULL) {
            *opts->trace_plan = kept; /* the caller's */
            plan = kept = NULL;
        }
        if (rc == 0)
            set_nominal_measured(opts, k, &rows[k]);
        if (rc == 0 && warning != NULL && (rows[k].warning = strdup(warning)) == NULL) {
            cs_predict_row_cleanup(&rows[k]);
            rc = cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
        }
        if (rc == 0 && opts->vs_nccl != NULL &&
            (rc = cs_predict_nccl_at(sched, plat, opts, sizes[k], &rows[k].nccl, err)) != 0)
            cs_predict_row_cleanup(&rows[k]);
        if (rc != 0) {
            while (k-- > 0)
                cs_predict_row_cleanup(&rows[k]);
            free(warning);
            cache_cleanup(&cache);
            cs_plan_free(plan);
            return rc;
        }
        if (opts->progress != NULL)
            opts->progress(opts->progress_ctx, k + 1, n, &rows[k]);
    }
    free(warning);
    cache_cleanup(&cache);
    cs_plan_free(plan);
    return 0;
}

/* ---- NCCL's baseline */

/* The machine NCCL's tuning model sees on plat with G GPUs on `nodes` nodes: the GPU's NVLink
 * port (else its PCIe link) within a node, one NIC per GPU between nodes (every multi-node
 * family has one), as NCCL's topology search finds a channel per link's share. */
static void nccl_machine(const struct cs_platform *plat, int G, int nodes,
                         struct cs_nccl_machine *m)
{
    int nvlink = 0, net = 0;

    for (int i = 0; i < plat->nlinks; i++) {
        nvlink |= plat->links[i].cls == CS_LINK_NVLINK;
        net |= plat->links[i].cls == CS_LINK_NET;
    }
    cs_nccl_machine_default(m, G / nodes);
    m->intra_pci = !nvlink;
    m->no_ll128 = !nvlink;
    m->intra_GBps = plat->params.link_Bps[nvlink ? CS_LINK_NVLINK : CS_LINK_PCIE] / 1e9;
    m->inter_GBps =
        net ? (double)G / nodes * plat->params.link_Bps[CS_LINK_NET] / 1e9 : m->intra_GBps;
}

/* NCCL's schedule for protocol proto at size predicted on plat into *row (keep_going: a row
 * either way); *w its width, with the algorithm NCCL's model picks (cs_nccl_pick_algo) on the
 * platform's machine, or the one --nccl-algo forces. */
static int nccl_proto_at(const struct cs_sched *sched, const struct cs_platform *plat,
                         const struct cs_predict_opts *opts, enum cs_proto proto, long long size,
                         struct cs_nccl_width *w, long long *rsize, struct cs_predict_row *row,
                         struct cs_error *err)
{
    struct cs_nccl_machine m;
    struct cs_gen_opts g = {.gpus = sched->ngpus,
                            .coll = sched->coll,
                            .proto = proto,
                            .size_bytes = size,
                            .nccl_version = opts->vs_nccl->version,
                            .channels = opts->vs_nccl->channels,
                            .nodes = opts->vs_nccl->nodes,
                            .nccl_algo = opts->vs_nccl->algo,
                            .nccl_machine = &m,
                            .nccl_log = opts->vs_nccl->log};
    struct cs_predict_opts o = {.type_bytes = opts->type_bytes,
                                .replay = opts->replay,
                                .no_extrapolate = opts->no_extrapolate,
                                .keep_going = 1};
    struct cs_platform p = *plat; /* shares plat's strings and links, owns nothing */
    struct cs_sched *ring = NULL;
    struct cs_error e;
    int rc;

    nccl_machine(plat, sched->ngpus, g.nodes ? g.nodes : 1, &m);
    cs_error_init(&e);
    if (cs_gen_nccl(&g, &ring, w, &e) != 0)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "--vs-nccl: NCCL's %s %s: %s",
                             cs_coll_name(sched->coll), cs_proto_name(proto), e.msg);
    o.replay.timeline = NULL;
    /* aligned down as predict aligns its sizes; up only where that leaves nothing */
    *rsize = cs_predict_align(ring, opts->type_bytes, size);
    if (*rsize <= 0)
        *rsize = cs_plan_round_size(ring, size, opts->type_bytes);
    rc = cs_predict_run(ring, &p, &o, rsize, 1, row, err);
    cs_sched_free(ring);
    return rc;
}

int cs_predict_nccl_at(const struct cs_sched *sched, const struct cs_platform *plat,
                       const struct cs_predict_opts *opts, long long size_bytes,
                       struct cs_predict_nccl *out, struct cs_error *err)
{
    struct cs_predict_nccl best = {0};
    struct cs_predict_row row = {0};
    struct cs_nccl_machine m;
    struct cs_nccl_width w;
    enum cs_nccl_algo algo;
    enum cs_proto q = CS_PROTO_SIMPLE;
    const struct cs_predict_vs_nccl *vs = opts->vs_nccl;
    int nodes = vs->nodes ? vs->nodes : 1, rc;
    long long rsize;

    if (sched->coll < CS_COLL_ALLREDUCE || sched->coll > CS_COLL_ALLTOALL)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "--vs-nccl: a %s schedule has no NCCL collective to compare with "
                             "(allreduce, allgather, reducescatter, alltoall)",
                             cs_coll_name(sched->coll));
    /* the protocol NCCL's own tuning model picks there (AllToAll: point-to-point, Simple) */
    nccl_machine(plat, sched->ngpus, nodes, &m);
    if (sched->coll != CS_COLL_ALLTOALL &&
        cs_nccl_pick(vs->version ? vs->version : CS_NCCL_DEFAULT_VERSION, &m, sched->coll,
                     size_bytes, sched->ngpus, nodes,
                     vs->channels ? vs->channels : CS_NCCL_DEFAULT_CHANNELS, vs->algo, &algo, &q,
                     err) != 0)
        return CS_ERR_USAGE;
    if ((rc = nccl_proto_at(sched, plat, opts, q, size_bytes, &w, &rsize, &row, err)) != 0)
        return rc;
    if (row.refused == NULL && row.hang == NULL && row.res.status == CS_REPLAY_OK)
        best = (struct cs_predict_nccl){q, w.channels, w.threads, rsize, row.time_us, w.algo};
    cs_predict_row_cleanup(&row);
    *out = best;
    return 0;
}

void cs_predict_row_cleanup(struct cs_predict_row *row)
{
    cs_replay_result_cleanup(&row->res);
    cs_free_each(3, row->refused, row->hang, row->warning);
    row->refused = row->hang = row->warning = NULL;
}

const char *cs_predict_status_name(const struct cs_predict_row *row)
{
    return row->refused                      ? "unsupported"
           : row->hang                       ? "hang"
           : row->res.status == CS_REPLAY_OK ? "ok"
                                             : "deadlock";
}

/* Measured times (predict --compare). */

struct meas_sample {
    long long size_bytes;
    int in_place;
    double us;
};

static int cmp_sample(const void *a, const void *b)
{
    const struct meas_sample *x = a, *y = b;

    if (x->size_bytes != y->size_bytes)
        return x->size_bytes < y->size_bytes ? -1 : 1;
    if (x->in_place != y->in_place)
        return x->in_place - y->in_place;
    return (x->us > y->us) - (x->us < y->us);
}

/* The median of the sorted samples v[0..n). */
static double median_us(const struct meas_sample *v, int n)
{
    return n % 2 ? v[n / 2].us : (v[n / 2 - 1].us + v[n / 2].us) / 2;
}

/* The samples of t (rows in file order, one per row of t), sorted; *out is new. */
static int meas_samples(const struct cs_csv *t, const struct cs_meas_row *rows, int n,
                        struct meas_sample **out, struct cs_error *err)
{
    int place = cs_csv_col_find(t, "placement");
    struct meas_sample *v = calloc((size_t)(n ? n : 1), sizeof(*v));

    if (v == NULL)
        return CS_ERR_NOMEM;
    for (int r = 0; r < n; r++) {
        if (rows[r].ngpus > 0 || rows[r].size_bytes <= 0) {
            free(v);
            return cs_error_fail(err, CS_ERR_INVALID, t->name, rows[r].line,
                                 "a time against GPU count, not against a size: nothing to "
                                 "compare with");
        }
        v[r].size_bytes = (long long)rows[r].size_bytes;
        v[r].in_place = place >= 0 && strcmp(t->cells[r * t->ncols + place], "in_place") == 0;
        v[r].us = rows[r].time_s * 1e6;
    }
    qsort(v, (size_t)n, sizeof(*v), cmp_sample);
    *out = v;
    return 0;
}

/* Reduce sorted samples to one point per size: the median of each placement. */
static int meas_points(const struct meas_sample *v, int n, struct cs_predict_meas *m)
{
    if ((m->pts = calloc((size_t)(n ? n : 1), sizeof(*m->pts))) == NULL)
        return CS_ERR_NOMEM;
    for (int i = 0, j; i < n; i = j) {
        struct cs_predict_meas_point *p;

        for (j = i; j < n && v[j].size_bytes == v[i].size_bytes && v[j].in_place == v[i].in_place;)
            j++;
        if (m->n == 0 || m->pts[m->n - 1].size_bytes != v[i].size_bytes)
            m->pts[m->n++].size_bytes = v[i].size_bytes;
        p = &m->pts[m->n - 1];
        *(v[i].in_place ? &p->ip_us : &p->oop_us) = median_us(v + i, j - i);
    }
    return 0;
}

/* Whether table t measured the schedule's collective over its ngpus: its collective and gpus
 * columns where given, and the busbw/algbw ratio (nccl-tests' factor of the collective). 0, or
 * CS_ERR_INVALID with err at the table. */
static int meas_matches(const struct cs_csv *t, enum cs_coll coll, int ngpus, struct cs_error *err)
{
    const char *cname = cs_coll_name(coll);
    enum cs_meas_coll mc = cname ? cs_meas_coll_parse(cname) : 0;
    int cc = cs_csv_col_find(t, "collective"), gc = cs_csv_col_find(t, "gpus");
    int ca = cs_csv_col_find(t, "algbw_GBps"), cb = cs_csv_col_find(t, "busbw_GBps"), n;

    for (int r = 0; r < t->nrows; r++) {
        const char *v = cs_csv_cell(t, r, cc), *g = cs_csv_cell(t, r, gc);
        double a, b;

        if (cc >= 0 && v[0] != '\0' && cs_meas_coll_parse(v) != mc)
            return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                                 "the table measures '%s', the schedule is %s", v,
                                 cname ? cname : "another collective");
        if (gc >= 0 && g[0] != '\0' && atoi(g) != ngpus)
            return cs_error_fail(err, CS_ERR_INVALID, t->name, t->lines[r],
                                 "the table ran on %s GPUs, the schedule on %d", g, ngpus);
        /* a ratio to check: nccl-tests' factors exist for these collectives */
        if (mc != 0 && mc != CS_MEAS_SENDRECV && ca >= 0 && cb >= 0 && r == 0) {
            n = cs_meas_infer_ranks(t, mc);
            for (int q = 0; q < t->nrows && n != ngpus; q++)
                if (cs_csv_get_double(t, q, ca, &a, NULL) == 0 &&
                    cs_csv_get_double(t, q, cb, &b, NULL) == 0 && a > 1 && b > 0)
                    return n >= 2 ? cs_error_fail(err, CS_ERR_INVALID, t->name, 0,
                                                  "its busbw/algbw is an %s over %d ranks, the "
                                                  "schedule's over %d GPUs",
                                                  cname, n, ngpus)
                                  : cs_error_fail(err, CS_ERR_INVALID, t->name, 0,
                                                  "its busbw/algbw is an %s over no whole rank "
                                                  "count (another collective?), not over the "
                                                  "schedule's %d GPUs",
                                                  cname, ngpus);
        }
    }
    return 0;
}

int cs_predict_meas_read(const char *path, enum cs_coll coll, int ngpus,
                         struct cs_predict_meas **out, struct cs_error *err)
{
    struct cs_csv *t = NULL;
    struct cs_meas_row *rows = NULL;
    struct meas_sample *v = NULL;
    struct cs_predict_meas *m = NULL;
    int n = 0, nsteps = (int)lround(cs_busbw_factor(coll, ngpus) * ngpus);
    int rc = cs_meas_read(path, &t, err);

    if (rc == 0)
        rc = meas_matches(t, coll, ngpus, err);
    if (rc == 0)
        rc = cs_meas_read_rows(t, nsteps, ngpus, &rows, &n, NULL, err);
    if (rc == 0 && n == 0)
        rc = cs_error_fail(err, CS_ERR_INVALID, t->name, t->end_line,
                           "no measured row to compare with");
    if (rc == 0)
        rc = meas_samples(t, rows, n, &v, err);
    if (rc == 0 && (m = calloc(1, sizeof(*m))) == NULL)
        rc = CS_ERR_NOMEM;
    if (rc == 0)
        rc = meas_points(v, n, m);
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, NULL, 0, "out of memory");
    if (rc != 0) {
        cs_predict_meas_free(m);
        m = NULL;
    }
    cs_free_each(2, rows, v);
    cs_csv_free(t);
    if (rc == 0)
        *out = m;
    return rc;
}

void cs_predict_meas_free(struct cs_predict_meas *m)
{
    if (m == NULL)
        return;
    free(m->pts);
    free(m);
}

const struct cs_predict_meas_point *cs_predict_meas_find(const struct cs_predict_meas *m,
                                                         long long size_bytes)
{
    int lo = 0, hi = m->n;

    while (lo < hi) {
        int mid = (lo + hi) / 2;

        if (m->pts[mid].size_bytes < size_bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->pts[lo].size_bytes == size_bytes ? &m->pts[lo] : NULL;
}
