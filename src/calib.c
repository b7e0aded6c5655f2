/* calib.c: fitted series to platform parameters, and the parameters written as <prop> lines. */
#include "calib.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Physical per-direction peaks, to flag impossible fits: NVLink3 12 x 25 GB/s; PCIe Gen4 x16
 * 31.5 GB/s; one 200 Gb/s HDR NIC 25 GB/s (nccl-a100.md section 2); ranks on one GPU: the
 * fastest HBM of the GPUs collsim knows, H200's 4.8 TB/s (NVIDIA H200 datasheet). */
static const double link_peak_Bps[CS_NLINK] = {0, 300e9, 31.5e9, 25e9, 4.8e12};

static void note(const struct cs_calib *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void note(const struct cs_calib *c, const char *fmt, ...)
{
    va_list ap;

    if (c->log == NULL)
        return;
    va_start(ap, fmt);
    vfprintf(c->log, fmt, ap);
    va_end(ap);
}

void cs_calib_init(struct cs_calib *c, FILE *log)
{
    memset(c, 0, sizeof(*c));
    c->log = log;
}

const struct cs_calib_key *cs_calib_find(const struct cs_calib *c, const char *key)
{
    for (int i = 0; i < c->nkeys; i++)
        if (strcmp(c->keys[i].key, key) == 0)
            return &c->keys[i];
    return NULL;
}

void cs_calib_put(struct cs_calib *c, const char *key, double v, const char *how)
{
    struct cs_calib_key *f = (struct cs_calib_key *)cs_calib_find(c, key);

    if (!isfinite(v) || v < 0)
        return;
    if (f == NULL) {
        if (c->nkeys == CS_CALIB_MAX_KEYS)
            return;
        f = &c->keys[c->nkeys++];
        memset(f, 0, sizeof(*f));
        snprintf(f->key, sizeof(f->key), "%s", key);
    }
    if (f->n < CS_CALIB_MAX_VALS)
        f->v[f->n++] = v;
    if (f->how[0] == '\0')
        snprintf(f->how, sizeof(f->how), "%s", how);
    else if (strlen(f->how) + strlen(how) + 3 < sizeof(f->how))
        strcat(strcat(f->how, "; "), how);
    note(c, "- `%s` = %.6g from %s\n", key, v, how);
}

double cs_calib_value(const struct cs_calib_key *k)
{
    double v[CS_CALIB_MAX_VALS];

    if (k->n == 0)
        return NAN;
    memcpy(v, k->v, (size_t)k->n * sizeof(double));
    return cs_fit_median(v, k->n);
}

const char *cs_calib_fmt_time(double s, char *buf, size_t len)
{
    if (!isfinite(s))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.3f us", s * 1e6);
    return buf;
}

const char *cs_calib_fmt_bw(double b, char *buf, size_t len)
{
    if (isinf(b))
        snprintf(buf, len, "inf");
    else if (!isfinite(b))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.4g GB/s", b / 1e9);
    return buf;
}

enum cs_proto cs_calib_seg_proto(enum cs_proto forced, enum cs_link_class link, int k, int m,
                                 double min_msg_bytes)
{
    /* LL128 only on NVLink paths (nccl-a100.md 1.5, "LL128 default enablement"). */
    int nvlink = link == 0 || link == CS_LINK_NVLINK;

    if (forced)
        return forced;
    if (m == 1)
        return min_msg_bytes >= 1048576 ? CS_PROTO_SIMPLE : CS_PROTO_LL;
    if (k == 0)
        return CS_PROTO_LL;
    if (k == m - 1)
        return CS_PROTO_SIMPLE;
    if (m == 3 && nvlink && k == 1)
        return CS_PROTO_LL128;
    return 0;
}

void cs_calib_map_steps(struct cs_calib *c, const struct cs_fit_line *L, enum cs_proto proto,
                        enum cs_link_class link, const char *file)
{
    char key[64], how[512];

    snprintf(how, sizeof(how), "intercept of time vs ring steps, %s", file);
    cs_calib_put(c, "cs.launch_s", L->alpha_s, how);
    snprintf(key, sizeof(key), "cs.call_s.%s.%s", cs_proto_name(proto), cs_link_class_name(link));
    snprintf(how, sizeof(how), "slope of time vs ring steps, %s", file);
    cs_calib_put(c, key, L->slope_s_per_B, how);
}

/* Segment k's intercept: the per-call cost of its protocol, or (first segment, with
 * intercept_deploy) the deployment overhead. */
static void map_intercept(struct cs_calib *c, const struct cs_calib_ring *r, int k,
                          const struct cs_fit_line *L, enum cs_proto p)
{
    const struct cs_params *b = r->base;
    char key[64], how[1024], a[64];
    double call;

    cs_calib_fmt_time(L->alpha_s, a, sizeof(a));
    if (r->intercept_deploy) {
        double dep = L->alpha_s - b->launch_s - r->nsteps * b->call_s[p][r->link];

        if (k != 0 || p == CS_PROTO_SIMPLE)
            return;
        snprintf(how, sizeof(how),
                 "%s: intercept %s of segment 0 minus launch and %d x base %s step cost", r->file,
                 a, r->nsteps, cs_proto_name(p));
        cs_calib_put(c, "cs.deploy_s", dep > 0 ? dep : 0, how);
        return;
    }
    call = (L->alpha_s - b->launch_s - b->deploy_s) / r->nsteps;
    snprintf(key, sizeof(key), "cs.call_s.%s.%s", cs_proto_name(p), cs_link_class_name(r->link));
    snprintf(how, sizeof(how), "%s: (intercept %s of segment %d - launch) / %d steps", r->file, a,
             k, r->nsteps);
    if (call < 0)
        note(c, "- segment %d: intercept below launch + deploy: %s not set\n", k, key);
    else if (!(L->alpha_ci_s < L->alpha_s))
        note(c,
             "- segment %d: intercept %s not determined (95%% interval wider than the value): "
             "%s not set\n",
             k, a, key);
    else
        cs_calib_put(c, key, call, how);
}

/* Segment k's slope: the ring's bus bandwidth when it is the Simple one, else reported. */
static void map_slope(struct cs_calib *c, const struct cs_calib_ring *r, int k, int last,
                      const struct cs_fit_line *L, enum cs_proto p)
{
    char key[64], how[1024], a[64], b[64];

    if (p == CS_PROTO_SIMPLE && (last || r->forced)) {
        snprintf(key, sizeof(key), "cs.link_Bps.%s", cs_link_class_name(r->link));
        snprintf(how, sizeof(how),
                 "%s: bus bandwidth of segment %d (%.3g .. %.3g B/link), 95%% CI [%s, %s]", r->file,
                 k, L->x_min, L->x_max, cs_calib_fmt_bw(L->beta_lo_Bps, a, sizeof(a)),
                 cs_calib_fmt_bw(L->beta_hi_Bps, b, sizeof(b)));
        cs_calib_put(c, key, L->beta_Bps, how);
        if (L->beta_Bps > link_peak_Bps[r->link])
            note(c,
                 "- flag: bus bandwidth %s is above one %s link's peak %s: the ring's bottleneck "
                 "is shared or not this link class; the value is an effective one\n",
                 cs_calib_fmt_bw(L->beta_Bps, a, sizeof(a)), cs_link_class_name(r->link),
                 cs_calib_fmt_bw(link_peak_Bps[r->link], b, sizeof(b)));
    } else if (isfinite(L->beta_Bps)) {
        note(c, "- segment %d (%s): bus bandwidth %s (reported, no parameter key)\n", k,
             cs_proto_name(p), cs_calib_fmt_bw(L->beta_Bps, a, sizeof(a)));
    }
}

void cs_calib_map_ring(struct cs_calib *c, const struct cs_calib_ring *r,
                       const struct cs_fit_result *R)
{
    for (int k = 0; k < R->nseg; k++) {
        const struct cs_fit_line *L = &R->seg[k];
        enum cs_proto p =
            cs_calib_seg_proto(r->forced, r->link, k, R->nseg, L->x_min * r->nranks / r->nsteps);

        if (p == 0) {
            note(c, "- segment %d: not mapped to a protocol (transition regime)\n", k);
            continue;
        }
        map_intercept(c, r, k, L, p);
        map_slope(c, r, k, k == R->nseg - 1, L, p);
    }
}

/* The protocol a harness mechanism names: LL, LL128 or Simple in any case, or ll8; else 0. */
static enum cs_proto mech_proto(const char *mech)
{
    for (enum cs_proto p = CS_PROTO_LL; p <= CS_PROTO_SIMPLE; p++)
        if (strcasecmp(mech, cs_proto_name(p)) == 0)
            return p;
    return strcmp(mech, "ll8") == 0 ? CS_PROTO_LL : 0;
}

int cs_calib_is_proto(const char *mech)
{
    return mech_proto(mech) != 0;
}

/* A series between two GPUs: `prefix`.LINK (the link's latency, bandwidth or per-call cost),
 * found as how. */
static void map_link(struct cs_calib *c, const struct cs_calib_harness *h, const char *what,
                     const char *prefix, double v, const char *how)
{
    char key[128];

    if (h->link == 0) {
        note(c, "- %s not mapped: give --link for the class\n", what);
        return;
    }
    snprintf(key, sizeof(key), "%s.%s", prefix, cs_link_class_name(h->link));
    cs_calib_put(c, key, v, how);
}

void cs_calib_map_proto(struct cs_calib *c, const struct cs_calib_harness *h,
                        const struct cs_fit_calls *F, double ll_call_s)
{
    enum cs_proto p = mech_proto(h->mech);
    char key[64], how[1024], a[64], b[64];

    assert(p != 0);
    cs_calib_fmt_time(F->call_s, a, sizeof(a));
    if (strcmp(h->op, "send_recv") != 0) {
        note(c, "- op %s: reported only (cs.tb_Bps and cs.call_s come from send_recv)\n", h->op);
        return;
    }
    if (h->concurrent != 1 || h->nblocks != 1) {
        note(c,
             "- %ld pairs of %ld threadblocks at once: contended, reported only (cs.tb_Bps and "
             "cs.call_s come from one pair)\n",
             h->concurrent, h->nblocks);
        return;
    }
    if (h->src == h->dst) {
        snprintf(key, sizeof(key), "cs.tb_Bps.%s", cs_proto_name(p));
        snprintf(how, sizeof(how), "%s: rate of one uncontended pair on one GPU", h->how);
        cs_calib_put(c, key, F->beta_Bps, how);
        note(c,
             "- per-call cost %s: a loopback on one GPU crosses no link, so it is no link "
             "class's cs.call_s (reported only)\n",
             a);
        return;
    }
    note(c, "- rate %s between GPUs: reported only (cs.tb_Bps comes from loopback pairs)\n",
         cs_calib_fmt_bw(F->beta_Bps, b, sizeof(b)));
    if (F->nops < 2) {
        note(c, "- one call count: launch and per-call cost not separable, cs.call_s not set\n");
    } else if (p == CS_PROTO_LL) {
        note(c,
             "- LL per-call cost %s: LL's per-hop cost is the hop latency (cs.link_lat_s, from "
             "the flag ping-pong); reported only\n",
             a);
    } else if (!isfinite(ll_call_s)) {
        note(c,
             "- no LL series of the same pair: what %s adds to LL not known, cs.call_s not set\n",
             cs_proto_name(p));
    } else if (F->call_s < ll_call_s) {
        note(c, "- per-call cost %s below LL's %s: cs.call_s not set\n", a,
             cs_calib_fmt_time(ll_call_s, b, sizeof(b)));
    } else {
        snprintf(key, sizeof(key), "cs.call_s.%s", cs_proto_name(p));
        snprintf(how, sizeof(how), "%s: per-call cost %s less LL's %s on the same pair", h->how, a,
                 cs_calib_fmt_time(ll_call_s, b, sizeof(b)));
        map_link(c, h, "per-call cost", key, F->call_s - ll_call_s, how);
    }
}

void cs_calib_map_harness(struct cs_calib *c, const struct cs_calib_harness *h,
                          const struct cs_fit_result *R)
{
    const struct cs_fit_line *first = &R->seg[0], *last = &R->seg[R->nseg - 1];
    int local = h->src == h->dst, one = local && h->nblocks == 1;

    if (strcmp(h->test, "exec") == 0)
        note(c, "- a whole schedule (exec): compared with a prediction, not fitted to a "
                "parameter\n");
    else if (mech_proto(h->mech) != 0)
        note(c, "- a protocol series: see cs_calib_map_proto\n");
    else if (strcmp(h->mech, "launch") == 0 && strcmp(h->op, "isolated") == 0 && h->nblocks == 1)
        /* One launch of one threadblock between two events: the once-per-collective cost. */
        cs_calib_put(c, "cs.launch_s", first->alpha_s + first->slope_s_per_B * first->x_min,
                     h->how);
    else if (strcmp(h->mech, "launch") == 0)
        note(c,
             "- launch op %s of %ld threadblocks: reported only (cs.launch_s comes from the "
             "isolated launch of one threadblock)\n",
             h->op, h->nblocks);
    else if (one && strcmp(h->op, "copy") == 0)
        /* copy_Bps counts read + write traffic: 2 bytes moved per payload byte. */
        cs_calib_put(c, "cs.copy_Bps", 2 * last->beta_Bps, h->how);
    else if (one && (strcmp(h->op, "reduce") == 0 || strcmp(h->op, "reduce2") == 0))
        /* reduce_Bps counts HBM traffic: two reads and one write per output byte. */
        cs_calib_put(c, "cs.reduce_Bps", 3 * last->beta_Bps, h->how);
    else if (!local && strcmp(h->mech, "flag_pingpong") == 0)
        /* A ping-pong round trip is two one-way latencies. */
        map_link(c, h, "round trip", "cs.link_lat_s", first->alpha_s / 2, h->how);
    else if (!local && strcmp(h->op, "copy") == 0)
        map_link(c, h, "link bandwidth", "cs.link_Bps", last->beta_Bps, h->how);
    else
        note(c, "- not mapped to a parameter (reported only)\n");
}

struct write_ctx {
    FILE *fp;
    struct cs_calib *c;
    int only_fitted;
};

static void write_prop(const char *key, double value, const char *source, void *ctx)
{
    struct write_ctx *w = ctx;
    struct cs_calib_key *f = (struct cs_calib_key *)cs_calib_find(w->c, key);

    if (f == NULL) {
        if (!w->only_fitted)
            fprintf(w->fp, "<!-- not fitted; prior: %s -->\n<prop id=\"%s\" value=\"%.9g\"/>\n",
                    source, key, value);
        return;
    }
    /* "--" may not appear inside an XML comment. */
    for (char *p = strstr(f->how, "--"); p != NULL; p = strstr(p, "--"))
        p[1] = '_';
    fprintf(w->fp, "<!-- fit (collsim calibrate fit, WLS 1/t^2): %s%s -->\n", f->how,
            f->n > 1 ? " (median of the values)" : "");
    fprintf(w->fp, "<prop id=\"%s\" value=\"%.9g\"/>\n", key, cs_calib_value(f));
}

int cs_calib_write_props(struct cs_calib *c, const struct cs_params *base, int only_fitted,
                         const char *inputs, FILE *fp)
{
    struct write_ctx w = {fp, c, only_fitted};

    fprintf(fp, "<!-- collsim calibrate fit: %s -->\n", inputs);
    cs_params_each(base, write_prop, &w);
    return ferror(fp) ? CS_ERR_IO : 0;
}
