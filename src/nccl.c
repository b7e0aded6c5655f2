/* nccl.c: NCCL's channels and threads per size and protocol, and the windows they hold over. */
#include "nccl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MAJOR.MINOR[.PATCH], one or two digits each, into part[]: 0, or -1 when it is not that. */
static int version_parts(const char *s, int part[3])
{
    for (int n = 0; n < 3;) {
        size_t len = strspn(s, "0123456789");

        if (len == 0 || len > 2)
            return -1;
        part[n++] = atoi(s);
        s += len;
        if (*s == '\0')
            return n >= 2 ? 0 : -1;
        if (*s++ != '.')
            return -1;
    }
    return -1;
}

int cs_nccl_version_parse(const char *s, int *code, struct cs_error *err)
{
    int part[3] = {0, 0, 0}, v;

    if (s == NULL || version_parts(s, part) != 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL version '%s': MAJOR.MINOR or MAJOR.MINOR.PATCH", s ? s : "");
    v = part[0] * 10000 + part[1] * 100 + part[2];
    if (v < CS_NCCL_RULE_MIN || v >= CS_NCCL_VERSION_END)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL %s: collsim reproduces NCCL 2.8 and later 2.x versions (the "
                             "channel and thread rule of 2.8 to 2.18, enqueue.cc; nccl-a100.md "
                             "1.6b)",
                             s);
    *code = v;
    return 0;
}

int cs_nccl_past_rule(int code)
{
    return code >= CS_NCCL_RULE_END && code < CS_NCCL_VERSION_END;
}

const char *cs_nccl_rule_note(int code, char *buf, size_t len)
{
    char v[16];

    if (len > 0)
        buf[0] = '\0';
    if (!cs_nccl_past_rule(code))
        return NULL;
    cs_nccl_version_name(code, v, sizeof(v));
    snprintf(buf, len,
             "NCCL %s is newer than the versions whose channel and thread rule and tuning "
             "model collsim reproduces from their sources (2.8 to 2.18, nccl-a100.md 1.6b): "
             "taken with 2.18's (name another version with nccl= or --nccl where its rule is "
             "known to differ)",
             v);
    return buf;
}

void cs_nccl_version_name(int code, char *buf, unsigned len)
{
    snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
}

int cs_nccl_algo_width(int version, enum cs_nccl_algo algo, enum cs_proto proto, long long nbytes,
                       int nranks, int comm_channels, struct cs_nccl_width *out,
                       struct cs_error *err)
{
    /* NCCL_{LL,LL128,SIMPLE}_MAX_NTHREADS and NCCL_*_THREAD_THRESHOLD (device.h, comm.h;
     * nccl-a100.md 1.5); the LL threshold is multiplied by nRanks for Ring (tuning.cc). */
    static const int max_threads[] = {
        [CS_PROTO_LL] = 512, [CS_PROTO_LL128] = 640, [CS_PROTO_SIMPLE] = 512};
    static const long long threshold[] = {
        [CS_PROTO_LL] = 8, [CS_PROTO_LL128] = 8, [CS_PROTO_SIMPLE] = 64};
    long long per_thread;
    int nc = comm_channels, nt;

    if (version < CS_NCCL_RULE_MIN || version >= CS_NCCL_VERSION_END)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL version code %d: not a version from 2.8 on (nccl-a100.md 1.6b)",
                             version);
    if (proto < CS_PROTO_LL || proto > CS_PROTO_SIMPLE || nbytes < 0 || nranks < 1 ||
        comm_channels < 1 || (algo != CS_NCCL_ALGO_RING && algo != CS_NCCL_ALGO_TREE))
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL width: bad algorithm, protocol, size, rank or channel count");
    nt = max_threads[proto];
    per_thread =
        threshold[proto] * (proto == CS_PROTO_LL && algo == CS_NCCL_ALGO_RING ? nranks : 1);
    while (nbytes < (long long)nc * nt * per_thread) {
        if (nc >= 2)
            nc--;
        else if (nt % 128 == 0)
            nt /= 2;
        else
            break;
    }
    *out = (struct cs_nccl_width){algo, nc, nt, max_threads[proto]};
    return 0;
}

int cs_nccl_width(int version, enum cs_proto proto, long long nbytes, int nranks, int comm_channels,
                  struct cs_nccl_width *out, struct cs_error *err)
{
    return cs_nccl_algo_width(version, CS_NCCL_ALGO_RING, proto, nbytes, nranks, comm_channels, out,
                              err);
}

/* -1, 0 or 1 as a is narrower than, as wide as or wider than b: the rule lowers channels first,
 * then threads, so a larger size never gets a narrower width. */
static int width_cmp(const struct cs_nccl_width *a, const struct cs_nccl_width *b)
{
    if (a->channels != b->channels)
        return a->channels < b->channels ? -1 : 1;
    return a->threads < b->threads ? -1 : a->threads > b->threads;
}

int cs_nccl_algo_window(int version, enum cs_nccl_algo algo, enum cs_proto proto, long long nbytes,
                        int nranks, int comm_channels, long long *lo, long long *hi,
                        struct cs_error *err)
{
    struct cs_nccl_width w, m;
    long long a = 0, b = nbytes, top;
    int rc = cs_nccl_algo_width(version, algo, proto, nbytes, nranks, comm_channels, &w, err);

    if (rc != 0)
        return rc;
    /* the least size as wide as nbytes: in (a, b] once a is narrower */
    cs_nccl_algo_width(version, algo, proto, 0, nranks, comm_channels, &m, NULL);
    if (width_cmp(&m, &w) == 0)
        b = 0;
    while (b - a > 1) {
        long long mid = a + (b - a) / 2;

        cs_nccl_algo_width(version, algo, proto, mid, nranks, comm_channels, &m, NULL);
        if (width_cmp(&m, &w) < 0)
            a = mid;
        else
            b = mid;
    }
    *lo = b;
    /* the full width holds for every larger size; else the largest size still as narrow */
    if (w.channels == comm_channels && w.threads == w.max_threads) {
        *hi = 0;
        return 0;
    }
    a = nbytes;
    top = (long long)comm_channels * w.max_threads * (64 + 8LL * nranks); /* full width */
    while (top - a > 1) {
        long long mid = a + (top - a) / 2;

        cs_nccl_algo_width(version, algo, proto, mid, nranks, comm_channels, &m, NULL);
        if (width_cmp(&m, &w) > 0)
            top = mid;
        else
            a = mid;
    }
    *hi = a;
    return 0;
}

int cs_nccl_window(int version, enum cs_proto proto, long long nbytes, int nranks,
                   int comm_channels, long long *lo, long long *hi, struct cs_error *err)
{
    return cs_nccl_algo_window(version, CS_NCCL_ALGO_RING, proto, nbytes, nranks, comm_channels, lo,
                               hi, err);
}

/* ---- algorithms and NCCL's tuning model */

int cs_nccl_algo_parse(const char *name, enum cs_nccl_algo *algo)
{
    if (strcmp(name, "ring") == 0)
        *algo = CS_NCCL_ALGO_RING;
    else if (strcmp(name, "tree") == 0)
        *algo = CS_NCCL_ALGO_TREE;
    else
        return -1;
    return 0;
}

const char *cs_nccl_algo_name(enum cs_nccl_algo algo)
{
    return algo == CS_NCCL_ALGO_TREE ? "tree" : algo == CS_NCCL_ALGO_RING ? "ring" : "?";
}

/* ncclGetBtree: the binary tree over n ranks rooted at 0 whose rank r hangs under the rank that
 * differs in r's lowest set bit and the one above it (or in the lowest bit alone past n). */
static void btree(int n, int r, int *up, int down[2])
{
    int bit, low;

    for (bit = 1; bit < n; bit <<= 1)
        if (bit & r)
            break;
    down[0] = down[1] = -1;
    if (r == 0) {
        *up = -1;
        down[1] = n > 1 ? bit >> 1 : -1; /* the root has one child */
        return;
    }
    *up = (r ^ bit) | (bit << 1);
    if (*up >= n)
        *up = r ^ bit;
    low = bit >> 1;
    if (low == 0)
        return;
    down[0] = r - low;
    while (low > 0 && r + low >= n)
        low >>= 1;
    down[1] = low > 0 ? r + low : -1;
}

void cs_nccl_dtree(int n, int node, int t, int *up, int down[2])
{
    int v = t == 0 ? node : n % 2 ? (node - 1 + n) % n : n - 1 - node;

    btree(n, v, up, down);
    if (t == 0)
        return;
    /* map the other tree's ranks back: shift by one (n odd) or mirror (n even) */
    *up = *up < 0 ? -1 : n % 2 ? (*up + 1) % n : n - 1 - *up;
    for (int i = 0; i < 2; i++)
        down[i] = down[i] < 0 ? -1 : n % 2 ? (down[i] + 1) % n : n - 1 - down[i];
}

void cs_nccl_machine_default(struct cs_nccl_machine *m, int gpus_per_node)
{
    *m = (struct cs_nccl_machine){240.0, 24.0 * gpus_per_node, 0, 0, 0};
}

/* The model's constants, [tree 0, ring 1][LL, LL128, Simple] as NCCL indexes them (tuning.cc of
 * 2.12.12; nccl-a100.md 1.1, 1.2). */
enum { M_TREE, M_RING };
static const double base_lat_212[2][3] = {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}};
static const double base_lat_218[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};
/* hwLat[NVLINK, PCI, NET][tree, ring][proto]; 2.18.3 has 4, 6 and 14 for Tree Simple */
static const double hw_lat_212[3][2][3] = {{{.52, 1.25, 28}, {.47, 1.9, 3.4}},
                                           {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
                                           {{5.0, 8.5, 28}, {2.7, 4.0, 28}}};
static const double tree_simple_218[3] = {4, 6, 14};
/* llMaxBws[Volta/Intel, Ampere/AMD][1 node, 2 nodes, more]; perChMaxTreeBws for Ampere */
static const double ll_max_bw[2][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}};
static const double tree_max_bw_per_ch[3] = {24.0, 23.6, 17.8};
/* treeCorrectionFactor[proto][log2(nBytes / 64)] of tuning.cc 2.12.12 ("Trees are not perfectly
 * sticking to the model for medium sizes", powers of two from 64 B to 256 MiB; nccl-a100.md 1.3
 * gives their range, 0.4-1.0) */
static const double tree_corr[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
     .8,  .8,  .8,  .7,  .6,  .6,  .6,  .6,  .6,  .6,  .6},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

static int log2i(long long n)
{
    int l = 0;

    while (n >>= 1)
        l++;
    return l;
}

/* The algorithm bandwidth (GB/s) of ncclTopoTuneModel for algorithm a, protocol p (0-based). */
static double model_bw(const struct cs_nccl_machine *m, enum cs_coll coll, int a, int p, int nranks,
                       int nnodes, int nch)
{
    int ni = nnodes == 1 ? 0 : nnodes == 2 ? 1 : 2, nsteps;
    double bus = nnodes <= 2 ? m->intra_GBps : m->inter_GBps;
    double llmax = ll_max_bw[nnodes == 1 ? 1 : !m->intel][ni], ppn = (double)nranks / nnodes;

    nsteps = coll == CS_COLL_ALLREDUCE ? 2 * (nranks - 1) : nranks - 1;
    bus = fmin(bus, 235.0); /* sm80's cap (2.12.12) */
    if (a == M_RING && p == 0)
        bus = fmin(llmax, bus * (nnodes > 1 || coll == CS_COLL_ALLREDUCE ? 1.0 / 4 : 1.0 / 3));
    if (a == M_RING && p == 1)
        bus = fmin(bus * (ppn < 2 ? 0.7 : 0.92), 20.0 * nch);
    if (a == M_TREE)
        bus = fmin(bus * .92, nch * tree_max_bw_per_ch[ni]);
    if (a == M_TREE && p == 0)
        bus = fmin(bus / 3.8, llmax);
    if (a == M_TREE && p == 1)
        bus = fmin(bus * (nnodes == 1 ? 7.0 / 9 : 120.0 / 128), 20.0 * nch);
    return bus * (a == M_RING ? (double)nranks / nsteps : .5);
}

/* The latency (us) of ncclTopoTuneModel for algorithm a, protocol p. */
static double model_lat(int version, const struct cs_nccl_machine *m, enum cs_coll coll, int a,
                        int p, int nranks, int nnodes)
{
    int v218 = version >= 21300, hw = m->intra_pci ? 1 : 0, nsteps, ninter;
    double intra = hw_lat_212[hw][a][p], inter = hw_lat_212[2][a][p];
    double lat = v218 ? base_lat_218[a][p] : base_lat_212[a][p];

    if (v218 && a == M_TREE && p == 2) {
        intra = tree_simple_218[hw];
        inter = tree_simple_218[2];
    }
    if (nnodes > 1 && p == 0)
        intra *= 1.8;
    if (a == M_TREE)
        return lat + 2 * ((nranks / nnodes - 1) * intra + log2i(nnodes) * inter);
    nsteps = coll == CS_COLL_ALLREDUCE ? 2 * (nranks - 1) : nranks - 1;
    ninter = coll == CS_COLL_ALLREDUCE ? (nnodes > 1 ? 2 * nnodes : 0) : nnodes - 1;
    return lat + (nsteps - ninter) * intra + ninter * inter;
}

int cs_nccl_model_time(int version, const struct cs_nccl_machine *m, enum cs_coll coll,
                       enum cs_nccl_algo algo, enum cs_proto proto, long long nbytes, int nranks,
                       int nnodes, int comm_channels, double *time_us, struct cs_error *err)
{
    int a = algo == CS_NCCL_ALGO_TREE ? M_TREE : M_RING, p = (int)proto - CS_PROTO_LL, lg;
    double bw, lat;

    if (nranks >= 2 && nnodes >= 1 && nranks % nnodes != 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL's model: %d ranks do not split evenly over %d nodes", nranks,
                             nnodes);
    if (version < CS_NCCL_RULE_MIN || version >= CS_NCCL_VERSION_END || m == NULL ||
        (algo != CS_NCCL_ALGO_RING && algo != CS_NCCL_ALGO_TREE) || proto < CS_PROTO_LL ||
        proto > CS_PROTO_SIMPLE || nbytes < 0 || nranks < 2 || nnodes < 1 || nranks % nnodes != 0 ||
        comm_channels < 1 || !(m->intra_GBps > 0) || !(m->inter_GBps > 0))
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL's model: bad version, machine, algorithm, protocol, size, "
                             "ranks, nodes or channels");
    if (coll != CS_COLL_ALLREDUCE && coll != CS_COLL_ALLGATHER && coll != CS_COLL_REDUCE_SCATTER)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL's model: allreduce, allgather or reducescatter only");
    if (a == M_TREE && coll != CS_COLL_ALLREDUCE) {
        *time_us = -1;
        return 0;
    }
    bw = model_bw(m, coll, a, p, nranks, nnodes, comm_channels);
    lat = model_lat(version, m, coll, a, p, nranks, nnodes);
    lg = log2i(nbytes >> 6);
    if (a == M_TREE && lg < 23)
        bw *= tree_corr[p][lg];
    /* the ring's plateau in Simple across nodes (2.12.12 ncclTopoGetAlgoTime) */
    if (a == M_RING && p == 2 && nnodes > 1 && coll == CS_COLL_ALLREDUCE &&
        nbytes >= nranks / 16.0 * 65536)
        lat *= 1.9;
    *time_us = lat + (double)nbytes / (1000 * bw);
    return 0;
}

int cs_nccl_pick_algo(int version, const struct cs_nccl_machine *m, enum cs_coll coll,
                      enum cs_proto proto, long long nbytes, int nranks, int nnodes,
                      int comm_channels, enum cs_nccl_algo *algo, struct cs_error *err)
{
    double ring, tree = -1;
    int rc = cs_nccl_model_time(version, m, coll, CS_NCCL_ALGO_RING, proto, nbytes, nranks, nnodes,
                                comm_channels, &ring, err);

    if (rc == 0 && coll == CS_COLL_ALLREDUCE && nnodes > 1)
        rc = cs_nccl_model_time(version, m, coll, CS_NCCL_ALGO_TREE, proto, nbytes, nranks, nnodes,
                                comm_channels, &tree, err);
    if (rc != 0)
        return rc;
    *algo = tree >= 0 && tree <= ring ? CS_NCCL_ALGO_TREE : CS_NCCL_ALGO_RING;
    return 0;
}

int cs_nccl_pick(int version, const struct cs_nccl_machine *m, enum cs_coll coll, long long nbytes,
                 int nranks, int nnodes, int comm_channels, enum cs_nccl_algo only,
                 enum cs_nccl_algo *algo, enum cs_proto *proto, struct cs_error *err)
{
    static const enum cs_nccl_algo algos[] = {CS_NCCL_ALGO_TREE, CS_NCCL_ALGO_RING};
    double best = -1;

    for (int a = 0; a < 2; a++) {
        if ((only != 0 && algos[a] != only) ||
            (algos[a] == CS_NCCL_ALGO_TREE && (coll != CS_COLL_ALLREDUCE || nnodes < 2)))
            continue;
        for (int q = CS_PROTO_LL; q <= CS_PROTO_SIMPLE; q++) {
            double t;
            int rc;

            if (q == CS_PROTO_LL128 && m != NULL && m->no_ll128)
                continue;
            rc = cs_nccl_model_time(version, m, coll, algos[a], (enum cs_proto)q, nbytes, nranks,
                                    nnodes, comm_channels, &t, err);
            if (rc != 0)
                return rc;
            if (t >= 0 && (best < 0 || t < best)) {
                best = t;
                *algo = algos[a];
                *proto = (enum cs_proto)q;
            }
        }
    }
    if (best < 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL's model: no algorithm and protocol for this collective");
    return 0;
}
