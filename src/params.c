/* params.c: the timing model's parameters: defaults with their sources, lookup by key. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "parse.h"
#include "verify.h"

static const char *const link_keys[CS_NLINK] = {NULL, "nvlink", "pcie", "net", "hbm"};

const char *cs_link_class_name(enum cs_link_class c)
{
    return (int)c > 0 && (int)c < CS_NLINK ? link_keys[c] : NULL;
}

int cs_link_class_slower(enum cs_link_class a, enum cs_link_class b)
{
    static const int rank[CS_NLINK] = {
        [CS_LINK_HBM] = 1, [CS_LINK_NVLINK] = 2, [CS_LINK_PCIE] = 3, [CS_LINK_NET] = 4};

    return rank[a] > rank[b];
}

enum cs_link_class cs_link_class_parse(const char *s)
{
    for (int i = 1; i < CS_NLINK; i++)
        if (strcmp(s, link_keys[i]) == 0)
            return (enum cs_link_class)i;
    return 0;
}

/* NCCL ring hwLat (us) per link class and protocol: NVIDIA/nccl src/graph/tuning.cc
 * hwLatencies (HEAD 5067397) = 2.12.12 hwLat for LL/LL128; see shared reference nccl-a100.md 1.1.
 */
static const double ring_hw_lat_us[CS_NLINK][CS_NPROTO] = {
    [CS_LINK_NVLINK] = {0, 0.6, 1.9, 3.4},
    [CS_LINK_PCIE] = {0, 1.0, 2.5, 5.7},
    [CS_LINK_NET] = {0, 2.7, 4.0, 14.0},
};

void cs_params_init(struct cs_params *p)
{
    memset(p, 0, sizeof(*p));
    /* NCCL Ring baseLat for Simple, 8.4 us (tuning.cc, all versions): the one-off cost of a
     * collective launch. */
    p->launch_s = 8.4e-6;
    p->deploy_s = 0;
    /* One process driving G GPUs (nccl-tests -g G) launches their kernels in turn. On one A100
     * SXM 8-GPU machine the small-size floor is about 39 us with -g 8 and about 21 us with one
     * process per GPU (thanos-notes-a100sxm80-1node-8gpu-1proc and -mpi, same run): 18 us over
     * 7 later launches, 2.6 us each. One process per GPU by default. */
    p->launch_gpu_s = 2.6e-6;
    p->gpus_per_process = 1;
    /* A hop costs NCCL's hwLat once: its LL figure is the hop latency (link_lat_s below), and
     * what a heavier protocol adds on the same path (LL128's warp-wide 128-B lines, Simple's
     * fence and head/tail handshake) is its per-call cost, hwLat(proto) - hwLat(LL). */
    for (int c = 1; c <= CS_LINK_NET; c++)
        for (int q = 1; q < CS_NPROTO; q++)
            p->call_s[q][c] = (ring_hw_lat_us[c][q] - ring_hw_lat_us[c][CS_PROTO_LL]) * 1e-6;
    /* Per-channel (one CTA) ceilings from NCCL's Ampere model (tuning.cc): LL128 20 GB/s per
     * channel; Simple ring per-channel bandwidth 24 GB/s (ringBw at sm80 / nchannels), LL at 0.5
     * of Simple's data rate. See nccl-a100.md 1.2. */
    p->tb_Bps[CS_PROTO_LL] = 12e9;
    p->tb_Bps[CS_PROTO_LL128] = 20e9;
    p->tb_Bps[CS_PROTO_SIMPLE] = 24e9;
    /* LL: each of NCCL's 512 LL threads polls, reduces and forwards one 16-B line (8 B of data)
     * per pass (prims_ll.h's loop over the lines, offset += nthreads; a warp goes on when all its
     * threads have their line), so a unit streams to the next hop a pass of 4 KiB at a time.
     * LL128 and Simple: 0 (LL128 line by line, unmeasured; Simple posts whole slices). */
    p->pass_bytes[CS_PROTO_LL] = 512 * 8;
    /* The fixed part of an LL pass: each thread's poll of its line's flags until they match
     * (readLL: a volatile 16-B load, again until the line has landed), a round trip to memory
     * however many threads poll. From the NDv4 table (NCCL 2.8.4, mpirun) one-channel LL ring
     * steps: a pass of 64 threads about 0.42 us, of 512 about 1.2 us, so about 0.3 us fixed and
     * the rest at the line rate; LL128 and Simple: none (their rate in proportion to their
     * threads). */
    p->pass_s[CS_PROTO_LL] = 0.3e-6;
    /* The MSCCL executor's own costs (msccl_kernel.cu, runtime-audit.md 3; msccl.md 2.3).
     * Estimates of the order of the GPU's memory round trips, not measured: an MSCCL table
     * decides them (calibrate platform). The prologue: each threadblock copies its 5,384-B
     * mscclThreadBlock into shared memory (a few dependent global loads per thread, then a
     * barrier), about 1 us. A dependency wait ends with a poll of another CTA's flag in global
     * memory, seen one round trip after its store: about 0.5 us. bar.sync of 640 threads: about
     * 0.05 us. Publishing: the store of the flag (and __threadfence where NET or SHM transports
     * are in use), about 0.3 us before a poller can see it. */
    p->prologue_s = 1e-6;
    p->dep_s = 0.5e-6;
    p->barrier_s = 0.05e-6;
    p->flag_s = 0.3e-6;
    /* One CTA streaming HBM on A100: about 100 GB/s of combined read+write traffic per SM-sized
     * block (1555 GB/s HBM2 over 108 SMs, with a single block reaching ~7x its fair share). */
    p->copy_Bps = 100e9;
    p->reduce_Bps = 100e9;
    /* Links: NVSwitch/NVLink3 240 GB/s per GPU port as NCCL models it (nccl-a100.md: SM80 nvlink
     * bw 20 GB/s x 12 links); PCIe Gen4 x16 24 GB/s effective (NCCL PCI bw for Gen4 x16);
     * HDR InfiniBand 200 Gb/s, about 24 GB/s effective per NIC (nccl-tests#252, nccl-a100.md 2).
     * Latencies: one per hop (GPU to GPU, whatever the links on the route), NCCL's hwLat LL
     * figure of the hop's slowest link class. */
    p->link_Bps[CS_LINK_NVLINK] = 240e9;
    p->link_Bps[CS_LINK_PCIE] = 24e9;
    p->link_Bps[CS_LINK_NET] = 24e9;
    p->link_lat_s[CS_LINK_NVLINK] = 0.6e-6;
    p->link_lat_s[CS_LINK_PCIE] = 1.0e-6;
    p->link_lat_s[CS_LINK_NET] = 2.7e-6;
    /* Ranks sharing one GPU (virtual ranks) meet in its memory: every FIFO byte is written once
     * and read once, so the memory carries half its bandwidth of FIFO data, A100 80GB SXM HBM2e
     * 2039 GB/s (NVIDIA A100 datasheet; platform.c sets other GPUs'). The hop latency, a flag
     * seen through L2 by another SM, is unmeasured: NVLink's LL figure is its prior, an upper
     * bound for a path that crosses no link (the harness's loopback flag ping-pong measures it).
     * A protocol's per-call machinery (LL128's warp lines, Simple's fence and handshake) runs on
     * the SMs whatever the path: NVLink's figures. */
    p->link_Bps[CS_LINK_HBM] = 2039e9 / 2;
    p->link_lat_s[CS_LINK_HBM] = p->link_lat_s[CS_LINK_NVLINK];
    for (int q = 1; q < CS_NPROTO; q++)
        p->call_s[q][CS_LINK_HBM] = p->call_s[q][CS_LINK_NVLINK];
    p->ranks_per_gpu = 1;
    /* What a protocol's stores get of a link beyond its line layout: NCCL 2.12's ring model
     * gives LL a quarter of the bus bandwidth (tuning.cc, nccl-a100.md 1.2), of which its
     * 8-of-16-byte lines explain half: LL's 16-B stores get half the link; LL128 0.92 where its
     * 120-of-128-byte lines explain 0.9375; Simple all of it. */
    for (int c = 1; c < CS_NLINK; c++) {
        p->link_eff[CS_PROTO_LL][c] = 0.5;
        p->link_eff[CS_PROTO_LL128][c] = 0.92 / 0.9375;
        p->link_eff[CS_PROTO_SIMPLE][c] = 1;
    }
    /* A100 PCIe P2P between sockets (SYS path): unidirectional P2P writes 7.7-10.3 GB/s,
     * p2pBandwidthLatencyTest on 4x A100-PCIE-40GB (nccl-a100.md 2, sm02). The measured P2P
     * latency, 1.9-2.0 us, is already two PCIe hops of 1.0 us: the socket link adds none. */
    p->sys_Bps = 10e9;
    p->sys_lat_s = 0;
    /* Residency: an A100 has 108 SMs, and the executor's kernel fits one CTA per SM (96
     * registers x 640 threads, runtime-audit.md 0 row 2); see verify.h. */
    p->gpu_sms = CS_VERIFY_GPU_SMS;
    p->ctas_per_sm = CS_VERIFY_CTAS_PER_SM;
}

/* The share of an SM's issue rate a CTA of `threads` gets: an A100 or Hopper SM is four
 * processing blocks, each with its own warp scheduler and load/store units (NVIDIA A100 Tensor
 * Core GPU Architecture whitepaper, "four processing blocks per SM"; the same in H100's), and a
 * warp runs on one: fewer than four warps leave blocks idle. */
static double warp_share(int threads)
{
    double w = threads / 32.0;

    return w < 4 ? w / 4 : 1;
}

void cs_params_narrow(struct cs_params *p, enum cs_proto q, int threads, int max_threads)
{
    double f = threads > 0 && max_threads > 0 ? (double)threads / max_threads : 1;

    if (!(p->pass_s[q] > 0))
        p->tb_Bps[q] *= f;
    else if (threads > 0 && max_threads > 0)
        p->tb_Bps[q] *= warp_share(threads) / warp_share(max_threads);
    p->pass_bytes[q] *= f;
}

int cs_params_gpus_per_process(const struct cs_params *p)
{
    return p->gpus_per_process >= 1 ? (int)p->gpus_per_process : 1;
}

double cs_params_cta_Bps(const struct cs_params *p, enum cs_proto q)
{
    double tb = p->tb_Bps[q], pb = p->pass_bytes[q], ps = p->pass_s[q];

    if (!(tb > 0))
        return 0;
    return pb > 0 && ps > 0 ? 1 / (1 / tb + ps / pb) : tb;
}

double cs_params_pass_time(const struct cs_params *p, enum cs_proto q, double b)
{
    double pb = p->pass_bytes[q], tb = p->tb_Bps[q];

    if (!(pb > 0))
        return 0;
    return p->pass_s[q] + (tb > 0 ? (b < pb ? b : pb) / tb : 0);
}

/* Each parameter: its key after "cs." and where it sits, which indices its key carries (a
 * protocol, a link class or both, in that order) and the source of its default. Listed in the
 * order cs_params_each reports them. */
#define FIELD(f) #f, offsetof(struct cs_params, f)
enum {
    BY_PROTO = 1,
    BY_LINK = 2,
    WHOLE = 4 /* a whole number, at least 1 */,
    SHARE = 8 /* (0, 1] */
};
static const struct param {
    const char *name;
    size_t offset;
    int by;
    const char *source; /* NULL: link_Bps_sources */
} params[] = {
    {FIELD(launch_s), 0, "NCCL Ring baseLat Simple 8.4 us (tuning.cc)"},
    {FIELD(deploy_s), 0, "per-system deployment overhead; 0 for bare metal"},
    {FIELD(launch_gpu_s), 0,
     "-g 8 against one process per GPU, same A100 machine: (39 - 21) us / 7 (thanos-notes)"},
    {FIELD(gpus_per_process), WHOLE, "deployment: GPUs one process drives (nccl-tests -g); 1"},
    {FIELD(call_s), BY_PROTO | BY_LINK,
     "NCCL Ring hwLat of the protocol less that of LL (tuning.cc hwLatencies); hbm: NVLink's"},
    {FIELD(prologue_s), 0,
     "estimate: a tb copies its 5,384-B step table to shared memory (msccl_kernel.cu:92-95)"},
    {FIELD(dep_s), 0,
     "estimate: the last poll of another CTA's flag, a memory round trip "
     "(msccl_kernel.cu:226-239)"},
    {FIELD(barrier_s), 0, "estimate: bar.sync of the CTA after a wait and before a publish"},
    {FIELD(flag_s), 0,
     "estimate: flag store (+ __threadfence on NET/SHM) until seen (msccl_kernel.cu:313-318)"},
    {FIELD(tb_Bps), BY_PROTO, "NCCL Ampere per-channel bandwidth (tuning.cc)"},
    {FIELD(pass_bytes), BY_PROTO,
     "LL: 512 threads x one 16-B line of 8 data bytes per pass (prims_ll.h, NCCL_LL_MAX_NTHREADS); "
     "LL128, Simple: 0 (line by line; whole slices)"},
    {FIELD(pass_s), BY_PROTO,
     "LL: the poll round trip of a pass, 0.3 us (NDv4 one-channel LL steps: 0.42 us at 64 threads, "
     "1.2 us at 512); LL128, Simple: 0"},
    {FIELD(copy_Bps), 0, "one CTA streaming A100 HBM2"},
    {FIELD(reduce_Bps), 0, "one CTA streaming A100 HBM2"},
    {FIELD(link_Bps), BY_LINK, NULL},
    {FIELD(link_lat_s), BY_LINK,
     "per hop: NCCL Ring hwLat LL (tuning.cc); hbm, no link: NVLink's as a bound, unmeasured"},
    {FIELD(link_eff), BY_PROTO | BY_LINK | SHARE,
     "NCCL 2.12 ring bandwidth factor over the line layout: LL 1/4 / 1/2, LL128 0.92 / 0.9375"},
    {FIELD(sys_Bps), 0,
     "A100 PCIe P2P write across CPU sockets 7.7-10.3 GB/s (p2pBandwidthLatencyTest, sm02)"},
    {FIELD(sys_lat_s), 0, "0: measured SYS P2P latency 1.9-2.0 us is two PCIe hops (sm02)"},
    {FIELD(gpu_sms), WHOLE, "A100: 108 SMs (nccl-a100.md 2); H100 SXM and H200: 132"},
    {FIELD(ctas_per_sm), WHOLE,
     "MSCCL kernel: 96 registers x 544-640 threads, 1 CTA per SM (executor makefiles/common.mk:70, "
     "msccl_setup.cc:457-465; runtime-audit.md 0 row 2)"},
    {FIELD(ranks_per_gpu), WHOLE, "one rank per GPU; a virtual-rank platform sets its ranks"},
};
static const char *const link_Bps_sources[CS_NLINK] = {
    NULL, "NCCL SM80_NVLINK_BW 20 GB/s x 12 links (topo.h)",
    "NCCL PCIe Gen4 x16 model 24 GB/s (topo.cc width*speed/80)",
    "HDR IB ~24 GB/s effective per NIC (nccl-tests#252)",
    "half of A100 80GB SXM HBM2e 2039 GB/s (datasheet): each FIFO byte written and read once"};

/* The double of parameter d for protocol q and link class c (0 where its key has none);
 * call_s[q][c] is row-major. */
static double *value_of(const struct cs_params *p, const struct param *d, int q, int c)
{
    int i = (d->by & BY_PROTO ? q : 0) * (d->by & BY_LINK ? CS_NLINK : 1) + c;

    return (double *)((const char *)p + d->offset) + i;
}

/* Resolve a key to the double it names, or NULL; *def (if def is not NULL) is its parameter. */
static double *slot(const struct cs_params *p, const char *key, const struct param **def)
{
    char buf[128], *parts[4], *save;
    int n = 0;

    if (strlen(key) >= sizeof(buf) || strncmp(key, "cs.", 3) != 0)
        return NULL;
    strcpy(buf, key + 3);
    for (char *tok = strtok_r(buf, ".", &save); tok != NULL && n < 4;
         tok = strtok_r(NULL, ".", &save))
        parts[n++] = tok;
    for (size_t i = 0; n > 0 && i < sizeof(params) / sizeof(params[0]); i++) {
        const struct param *d = &params[i];
        int q, c;

        if (strcmp(parts[0], d->name) != 0)
            continue;
        if (n != 1 + !!(d->by & BY_PROTO) + !!(d->by & BY_LINK))
            return NULL;
        q = d->by & BY_PROTO ? (int)cs_proto_parse(parts[1]) : 0;
        c = d->by & BY_LINK ? (int)cs_link_class_parse(parts[n - 1]) : 0;
        if (def != NULL)
            *def = d;
        return (d->by & BY_PROTO && !q) || (d->by & BY_LINK && !c) ? NULL : value_of(p, d, q, c);
    }
    return NULL;
}

int cs_params_set(struct cs_params *p, const char *key, const char *value, struct cs_error *err)
{
    const struct param *def = NULL;
    double *d = slot(p, key, &def);
    double v;
    int whole;

    if (d == NULL)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0, "unknown platform parameter '%s'", key);
    if (cs_parse_double(value, 0, DBL_MAX, &v) != 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "platform parameter %s=\"%s\" is not a non-negative number", key,
                             value);
    if (def->by & WHOLE && cs_parse_int(value, 1, 1 << 20, &whole) != 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "platform parameter %s=\"%s\" is not a whole number from 1 to %d", key,
                             value, 1 << 20);
    if (def->by & SHARE && !(v > 0 && v <= 1))
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "platform parameter %s=\"%s\" is not a share (above 0, at most 1)",
                             key, value);
    if (!cs_params_in_range(key, v))
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "platform parameter %s=\"%s\" is outside what the hardware allows: %s",
                             key, value, cs_params_range(key));
    *d = v;
    return 0;
}

/* The physical range of a key by its unit (its name's suffix): a time from 0 to 1 s, a
 * bandwidth from 1 kB/s to 1 PB/s, a byte count up to 1 GiB, a count up to 2^20. */
static int range_of(const char *key, double *lo, double *hi, const char **what)
{
    size_t n = strlen(key);
    char base[64];

    /* the parameter's name: the part after "cs." up to its protocol or link class */
    snprintf(base, sizeof(base), "%s", n > 3 ? key + 3 : key);
    base[strcspn(base, ".")] = '\0';
    n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, "_Bps") == 0) {
        *lo = 1e3, *hi = 1e15, *what = "a bandwidth from 1e3 to 1e15 B/s (1 kB/s to 1 PB/s)";
        return 1;
    }
    if (n > 2 && strcmp(base + n - 2, "_s") == 0) {
        *lo = 0, *hi = 1, *what = "a time from 0 to 1 s";
        return 1;
    }
    if (strcmp(base, "pass_bytes") == 0) {
        *lo = 0, *hi = 1073741824.0, *what = "a byte count from 0 to 1 GiB";
        return 1;
    }
    if (strcmp(base, "gpus_per_process") == 0 || strcmp(base, "gpu_sms") == 0 ||
        strcmp(base, "ctas_per_sm") == 0 || strcmp(base, "ranks_per_gpu") == 0) {
        *lo = 0, *hi = 1 << 20, *what = "a count from 0 to 1048576";
        return 1;
    }
    return 0;
}

int cs_params_in_range(const char *key, double v)
{
    double lo, hi;
    const char *what;

    return !range_of(key, &lo, &hi, &what) || (v >= lo && v <= hi && isfinite(v));
}

const char *cs_params_range(const char *key)
{
    double lo, hi;
    const char *what = "any non-negative number";

    range_of(key, &lo, &hi, &what);
    return what;
}

int cs_params_get(const struct cs_params *p, const char *key, double *out)
{
    double *d = slot(p, key, NULL);

    if (d == NULL)
        return CS_ERR_INVALID;
    *out = *d;
    return 0;
}

void cs_params_each(const struct cs_params *p,
                    void (*fn)(const char *key, double value, const char *source, void *ctx),
                    void *ctx)
{
    char key[128];

    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        const struct param *d = &params[i];

        for (int q = d->by & BY_PROTO ? 1 : 0; q < (d->by & BY_PROTO ? CS_NPROTO : 1); q++)
            for (int c = d->by & BY_LINK ? 1 : 0; c < (d->by & BY_LINK ? CS_NLINK : 1); c++) {
                snprintf(key, sizeof(key), "cs.%s%s%s%s%s", d->name, q ? "." : "",
                         q ? cs_proto_name((enum cs_proto)q) : "", c ? "." : "",
                         c ? link_keys[c] : "");
                fn(key, *value_of(p, d, q, c), d->source ? d->source : link_Bps_sources[c], ctx);
            }
    }
}

const char *cs_param_notes_get(const struct cs_param_notes *notes, const char *key)
{
    if (notes == NULL)
        return NULL;
    for (int i = 0; i < notes->n; i++)
        if (strcmp(notes->key[i], key) == 0)
            return notes->text[i];
    return NULL;
}

int cs_param_notes_put(struct cs_param_notes *notes, const char *key, const char *text)
{
    int i;

    for (i = 0; i < notes->n; i++)
        if (strcmp(notes->key[i], key) == 0)
            break;
    if (i == notes->n) {
        if (notes->n == CS_MAX_PARAM_NOTES)
            return -1;
        notes->n++;
    }
    snprintf(notes->key[i], sizeof(notes->key[i]), "%.63s", key);
    snprintf(notes->text[i], sizeof(notes->text[i]), "%.511s", text);
    return 0;
}

/* Copy the value of attribute NAME="..." found in line into out; 0 or -1. */
static int attr(const char *line, const char *name, char *out, size_t size)
{
    char pat[32];
    const char *s, *e;

    snprintf(pat, sizeof(pat), " %s=\"", name);
    s = strstr(line, pat);
    if (s == NULL)
        return -1;
    s += strlen(pat);
    e = strchr(s, '"');
    if (e == NULL || (size_t)(e - s) >= size)
        return -1;
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = '\0';
    return 0;
}

/* Trim blanks from both ends of s in place; returns the trimmed start. */
static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* A props line s (trimmed): a comment joins `pending`; a prop sets its key, noting `pending` (or
 * path) as its source. Returns 0, or CS_ERR_INVALID (err without file and line) for anything
 * else. */
static int props_line(struct cs_params *p, char *s, char *pending, size_t size, const char *path,
                      struct cs_param_notes *notes, struct cs_error *err)
{
    size_t len = strlen(s), used = strlen(pending);
    char key[128], val[128];

    if (strncmp(s, "<!--", 4) == 0 && len >= 7 && strcmp(s + len - 3, "-->") == 0) {
        s[len - 3] = '\0';
        snprintf(pending + used, size - used, "%s%s", used ? "; " : "", trim(s + 4));
        return 0;
    }
    if (strncmp(s, "<prop ", 6) == 0 && strcmp(s + len - 2, "/>") == 0 &&
        attr(s, "id", key, sizeof(key)) == 0 && attr(s, "value", val, sizeof(val)) == 0) {
        if (cs_params_set(p, key, val, err) != 0)
            return CS_ERR_INVALID;
        if (notes != NULL && cs_param_notes_put(notes, key, pending[0] ? pending : path) != 0)
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0, "more than %d parameters",
                                 CS_MAX_PARAM_NOTES);
        pending[0] = '\0';
        return 0;
    }
    return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                         "expected <!-- comment --> or <prop id=\"KEY\" value=\"V\"/>, not '%.60s'",
                         s);
}

int cs_params_read_props(struct cs_params *p, const char *path, struct cs_param_notes *notes,
                         struct cs_error *err)
{
    FILE *fp = cs_fopen_read(path);
    char line[1024], pending[512] = "";
    int lineno = 0, rc = 0;

    if (fp == NULL)
        return cs_error_fail(err, CS_ERR_IO, path, 0, "cannot read: %s", strerror(errno));
    cs_input_note(path);
    while (rc == 0 && fgets(line, sizeof(line), fp) != NULL) {
        char *s;

        lineno++;
        if (strchr(line, '\n') == NULL && !feof(fp)) {
            cs_error_set(err, path, lineno, "line longer than %zu bytes", sizeof(line) - 2);
            rc = CS_ERR_INVALID;
            break;
        }
        s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        rc = props_line(p, s, pending, sizeof(pending), path, notes, err);
        if (rc != 0 && err != NULL) {
            snprintf(err->file, sizeof(err->file), "%s", path);
            err->line = lineno;
        }
    }
    if (rc == 0 && ferror(fp)) {
        cs_error_set(err, path, 0, "read error");
        rc = CS_ERR_IO;
    }
    fclose(fp);
    return rc;
}
