/* tests.cu: the harness's measurements T0-T6 (shared reference calibration.md 3.2): environment,
 * launch overhead, timer self-check, HBM and per-CTA copy/reduce, protocol kernels in loopback,
 * and with two or more GPUs per-pair bandwidth, latency and protocol kernels across the link. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "harness.h"
#include "proto.cuh"

#ifndef CS_GIT_SHA
#define CS_GIT_SHA "unknown"
#endif

/* ---------------- kernels ---------------- */

__global__ void k_empty(void)
{
}

template <int N> struct hx_params {
    char b[N];
};

template <int N> __global__ void k_params(hx_params<N> p)
{
    if (p.b[0] == 127 && threadIdx.x == 1023)
        asm volatile("trap;");
}

/* Measure the SM clock: cycles of clock64 over ns of %globaltimer while spinning for ns. */
__global__ void k_clock(unsigned long long *out, unsigned long long ns)
{
    unsigned long long t0 = hx_gtimer(), c0 = clock64(), t;

    do {
        t = hx_gtimer();
    } while (t - t0 < ns);
    out[0] = clock64() - c0;
    out[1] = t - t0;
}

/* Smallest nonzero step of %globaltimer seen in n reads. */
__global__ void k_tick(unsigned long long *out, int n)
{
    unsigned long long prev = hx_gtimer(), best = ~0ull;

    for (int i = 0; i < n; i++) {
        unsigned long long t = hx_gtimer();

        if (t != prev && t - prev < best)
            best = t - prev;
        prev = t;
    }
    out[0] = best;
}

__global__ void k_spin(unsigned long long ns)
{
    unsigned long long t0 = hx_gtimer();

    while (hx_gtimer() - t0 < ns)
        ;
}

/* Integer-valued pattern: sums of up to 8 stay exact in float. */
__device__ __forceinline__ float hx_pat(long i, int k)
{
    return (float)((i * 7 + (long)k * 131 + (i >> 10) * 3) % 61 - 30);
}

__global__ void k_fill(float *p, long n, int k)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x)
        p[i] = hx_pat(i, k);
}

__global__ void k_copy(const float4 *__restrict__ s, float4 *__restrict__ d, long n4)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4;
         i += (long)gridDim.x * blockDim.x)
        d[i] = s[i];
}

struct hx_srcs {
    const float4 *p[8];
};

__global__ void k_reduce(hx_srcs s, int k, float4 *__restrict__ d, long n4)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4;
         i += (long)gridDim.x * blockDim.x) {
        float4 v = s.p[0][i];

        for (int j = 1; j < k; j++)
            v = hx_add4(v, s.p[j][i]);
        d[i] = v;
    }
}

/* Count elements of d[0..n) that differ from the sum of patterns 0..k-1. */
__global__ void k_verify(const float *d, long n, int k, unsigned long long *bad)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)gridDim.x * blockDim.x) {
        float v = 0.0f;

        for (int q = 0; q < k; q++)
            v += hx_pat(i, q);
        if (!(__ldcg(d + i) == v))
            atomicAdd(bad, 1ull);
    }
}

/* Protocol test: P producer/consumer pairs, each pair with its own connection; the producer
 * sends nsteps calls of n floats (slot k % 8 of its source), the consumer receives them into
 * slot k % 8 of its destination, reducing with its local operand when reduce is set.
 * role 0: one grid of 2P blocks (loopback, co-resident); 1: producers only; 2: consumers only. */
struct hx_pt_args {
    hx_conn *conns;
    const float *src, *lsrc;
    float *dst;
    long n;
    int nsteps, proto, role, reduce, npairs;
    hx_ctl ctl;
};

__global__ void __launch_bounds__(HX_MAX_NTHREADS) k_proto(hx_pt_args a)
{
    __shared__ int flag;
    int b = blockIdx.x;
    int producer = a.role == 1 || (a.role == 0 && b < a.npairs);
    int pair = a.role == 0 && b >= a.npairs ? b - a.npairs : b;
    unsigned long long sstep = 0, rstep = 0;

    for (int k = 0; k < a.nsteps; k++) {
        long off = ((long)pair * CS_NCCL_STEPS + k % CS_NCCL_STEPS) * a.n;
        hx_op op = {a.src + off, NULL, NULL, &a.conns[pair], a.n};

        if (!producer)
            op = {a.reduce ? a.lsrc + off : NULL, a.dst + off, &a.conns[pair], NULL, a.n};
        if (!hx_prim(a.proto, op, sstep, rstep, a.ctl, &flag))
            return;
    }
}

/* Flag ping-pong between two GPUs: side 0 writes peer[0] = 2k+1 and waits for mine >= 2k+2;
 * side 1 waits for mine >= 2k+1 and writes peer = 2k+2. */
__global__ void k_pingpong(volatile unsigned long long *mine, volatile unsigned long long *peer,
                           int side, int n, hx_ctl ctl)
{
    for (int k = 0; k < n; k++) {
        if (side == 0) {
            *peer = 2ull * k + 1;
            __threadfence_system();
            if (!hx_spin_ge(mine, 2ull * k + 2, ctl))
                return;
        } else {
            if (!hx_spin_ge(mine, 2ull * k + 1, ctl))
                return;
            *peer = 2ull * k + 2;
            __threadfence_system();
        }
    }
}

/* ---------------- helpers ---------------- */

static int grid_for(long n, int nt)
{
    long g = (n + nt - 1) / nt;

    return g < 1 ? 1 : g > 4096 ? 4096 : (int)g;
}

int hx_sm_mhz(int dev)
{
    unsigned long long *d, h[2] = {0, 0};

    if (cudaSetDevice(dev) != cudaSuccess || cudaMalloc((void **)&d, 2 * sizeof(*d)) != cudaSuccess)
        return 0;
    k_clock<<<1, 1>>>(d, 200000);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    cudaFree(d);
    return h[1] ? (int)(h[0] * 1000.0 / h[1] + 0.5) : 0;
}

/* Event-timed batch: start event, fn(i) for i < ops, stop event. Seconds, or < 0 on error. */
template <typename F> static double time_ops(cudaStream_t s, long ops, F fn)
{
    cudaEvent_t e0, e1;
    float ms = -1;

    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)
        return -1;
    cudaEventRecord(e0, s);
    for (long i = 0; i < ops; i++)
        fn(i);
    cudaEventRecord(e1, s);
    if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
        ms = -1;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ms < 0 ? -1 : ms * 1e-3;
}

/* Ops per sample so that a sample lasts about 100 us (calibration.md 3.1: >= 50 us). */
static long ops_for(double one_s, long max_ops)
{
    long k = one_s > 0 ? (long)(100e-6 / one_s) + 1 : max_ops;

    return k < 1 ? 1 : k > max_ops ? max_ops : k;
}

/* Run launch(bad), a kernel counting wrong elements into *bad: the count, ~0 on a CUDA error. */
template <typename F> static unsigned long long count_bad(F launch)
{
    unsigned long long *bad, h = ~0ull;

    if (cudaMalloc((void **)&bad, sizeof(*bad)) != cudaSuccess)
        return h;
    cudaMemset(bad, 0, sizeof(*bad));
    launch(bad);
    cudaMemcpy(&h, bad, sizeof(h), cudaMemcpyDeviceToHost);
    cudaFree(bad);
    return h;
}

/* The status of a sample: error when its timing failed (t <= 0), else bad_data when its check
 * counted bad elements (0 when nothing is checked), else ok. */
static const char *checked(double t, unsigned long long bad)
{
    return t <= 0 ? "error" : bad ? "bad_data" : "ok";
}

/* A copy or reduce point: the fields of its rows, and the k patterns whose sum it writes. */
struct copy_pt {
    const char *test, *mech, *op;
    int src, dst; /* devices: dst holds the destination */
    int nblocks, nthreads;
    long long bytes;
    int k;
};

/* The samples of a point after a warm-up that sets the calls per sample: each resets the
 * destination to NaN, times the calls op(i) on stream s of device dev and checks the result. */
template <typename F>
static void copy_samples(hx_ctx *c, const copy_pt &q, int dev, cudaStream_t s, float *dst, int mhz,
                         F op)
{
    long ops;

    cudaSetDevice(dev);
    ops = ops_for(time_ops(s, 1, op), 1000);
    for (int smp = 0; smp < c->o->samples; smp++) {
        double t;
        unsigned long long bad;

        cudaSetDevice(q.dst);
        cudaMemset(dst, 0xff, q.bytes);
        cudaDeviceSynchronize();
        cudaSetDevice(dev);
        t = time_ops(s, ops, op);
        cudaSetDevice(q.dst);
        bad = count_bad([&](unsigned long long *b) {
            k_verify<<<grid_for(q.bytes / 4, 256), 256>>>(dst, q.bytes / 4, q.k, b);
        });
        hx_emit(c, q.test, q.mech, q.op, q.src, q.dst, 1, q.nblocks, q.nthreads, 0, q.bytes, ops,
                smp, t, mhz, checked(t, bad));
    }
}

/* ---------------- T0 environment ---------------- */

int hx_env(hx_ctx *c)
{
    int drv = 0, rt = 0;
    char host[256] = "unknown", utc[64];
    time_t now = time(NULL);

    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    gethostname(host, sizeof(host) - 1);
    strftime(utc, sizeof(utc), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    hx_csv_comment(
        &c->csv,
        "calib_format=1 git=%s driver=%d runtime=%d host=%s utc=%s tool=collsim-harness-%s",
        CS_GIT_SHA, drv, rt, host, utc, CS_VERSION);
    hx_csv_comment(&c->csv, "mode=%s samples=%d seed=%u spin_timeout_s=%g",
                   c->o->quick ? "quick" : "full", c->o->samples, c->o->seed, c->o->spin_timeout_s);
    for (int d = 0; d < c->ndev; d++) {
        cudaDeviceProp p;
        char pci[32] = "";
        int clk = 0, mclk = 0, coop = 0;

        if (HX_CK(cudaGetDeviceProperties(&p, d)))
            return -1;
        cudaDeviceGetPCIBusId(pci, sizeof(pci), d);
        cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, d);
        cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, d);
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, d);
        hx_csv_comment(
            &c->csv,
            "device=%d name=\"%s\" sm=%d%d nsm=%d l2=%d pci=%s mem_bytes=%zu sm_mhz_max=%d "
            "mem_mhz_max=%d coop=%d sm_mhz_now=%d",
            d, p.name, p.major, p.minor, p.multiProcessorCount, p.l2CacheSize, pci,
            p.totalGlobalMem, clk / 1000, mclk / 1000, coop, hx_sm_mhz(d));
        printf("# device %d: %s, sm_%d%d, %d SMs, %zu MiB\n", d, p.name, p.major, p.minor,
               p.multiProcessorCount, p.totalGlobalMem >> 20);
    }
    for (int i = 0; i < c->ndev; i++)
        for (int j = 0; j < c->ndev; j++) {
            int rank = 0, atom = 0;

            if (i == j)
                continue;
            cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j);
            cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, i, j);
            hx_csv_comment(
                &c->csv,
                "p2p src=%d dst=%d access=%d perf_rank=%d native_atomics=%d nvlink=unknown", i, j,
                c->peer[i][j], rank, atom);
        }
    return 0;
}

/* ---------------- T1 launch overhead ---------------- */

/* One sample of ops launches of a kernel with an N-byte parameter. */
template <int N> static void launch_params(hx_ctx *c, cudaStream_t s, int ops, int smp, int mhz)
{
    hx_params<N> p = {};
    char op[32];
    double t;

    snprintf(op, sizeof(op), "params_%d", N);
    t = time_ops(s, ops, [&](long) { k_params<N><<<1, 32, 0, s>>>(p); });
    hx_emit(c, "launch", "launch", op, 0, 0, 1, 1, 32, 0, N, ops, smp, t, mhz, checked(t, 0));
}

int hx_launch(hx_ctx *c)
{
    const int K = 1000, KG = 100;
    int grids[3] = {1, c->nsm[0], 2 * c->nsm[0]};
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    int mhz;

    if (HX_CK(cudaSetDevice(0)) || HX_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)))
        return -1;
    mhz = hx_sm_mhz(0);
    k_empty<<<1, 1, 0, s>>>();
    cudaStreamSynchronize(s);
    for (int gr : grids)
        for (int smp = 0; smp < c->o->samples && hx_time_left(c); smp++) {
            double t = time_ops(s, K, [&](long) { k_empty<<<gr, 128, 0, s>>>(); });
            double t1 = time_ops(s, 1, [&](long) { k_empty<<<gr, 128, 0, s>>>(); });

            hx_emit(c, "launch", "launch", "back_to_back", 0, 0, 1, gr, 128, 0, 0, K, smp, t, mhz,
                    checked(t, 0));
            hx_emit(c, "launch", "launch", "isolated", 0, 0, 1, gr, 128, 0, 0, 1, smp, t1, mhz,
                    checked(t1, 0));
        }
    /* Parameter bytes (comm_scope's kernel-argument test). */
    for (int smp = 0; smp < c->o->samples && hx_time_left(c); smp++) {
        launch_params<256>(c, s, K, smp, mhz);
        launch_params<1024>(c, s, K, smp, mhz);
        launch_params<4096>(c, s, K, smp, mhz);
    }
    /* Graph of KG kernel nodes. */
    if (HX_CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)))
        return -1;
    for (int i = 0; i < KG; i++)
        k_empty<<<1, 128, 0, s>>>();
    if (HX_CK(cudaStreamEndCapture(s, &g)) || HX_CK(cudaGraphInstantiate(&ge, g, 0)))
        return -1;
    cudaGraphLaunch(ge, s);
    cudaStreamSynchronize(s);
    for (int smp = 0; smp < c->o->samples && hx_time_left(c); smp++) {
        double t = time_ops(s, 1, [&](long) { cudaGraphLaunch(ge, s); });

        hx_emit(c, "launch", "graph_launch", "back_to_back", 0, 0, 1, 1, 128, 0, 0, KG, smp, t, mhz,
                checked(t, 0));
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    return HX_CK(cudaGetLastError());
}

/* ---------------- T2 timer self-check ---------------- */

int hx_timer(hx_ctx *c)
{
    unsigned long long *d, tick = 0;
    cudaStream_t s;
    int mhz;
    static const unsigned long long spins_ns[] = {10000, 100000, 1000000};

    if (HX_CK(cudaSetDevice(0)) || HX_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) ||
        HX_CK(cudaMalloc((void **)&d, sizeof(*d))))
        return -1;
    mhz = hx_sm_mhz(0);
    for (int smp = 0; smp < c->o->samples; smp++) {
        double t = time_ops(s, 0, [&](long) {});

        hx_emit(c, "timer", "event", "event_pair", 0, 0, 1, 0, 0, 0, 0, 1, smp, t, mhz,
                t >= 0 ? "ok" : "error");
    }
    for (int smp = 0; smp < c->o->samples; smp++) {
        k_tick<<<1, 1, 0, s>>>(d, 100000);
        if (HX_CK(cudaStreamSynchronize(s)) ||
            HX_CK(cudaMemcpy(&tick, d, sizeof(tick), cudaMemcpyDeviceToHost)))
            return -1;
        hx_emit(c, "timer", "globaltimer", "tick", 0, 0, 1, 1, 1, 0, 0, 1, smp, tick * 1e-9, mhz,
                tick != ~0ull ? "ok" : "error");
    }
    /* Event time of a kernel that spins a fixed %globaltimer interval: op names the interval. */
    for (unsigned long long ns : spins_ns)
        for (int smp = 0; smp < c->o->samples; smp++) {
            char op[32];
            double t = time_ops(s, 1, [&](long) { k_spin<<<1, 1, 0, s>>>(ns); });

            snprintf(op, sizeof(op), "spin_%lluns", ns);
            hx_emit(c, "timer", "globaltimer", op, 0, 0, 1, 1, 1, 0, 0, 1, smp, t, mhz,
                    checked(t, 0));
        }
    cudaFree(d);
    cudaStreamDestroy(s);
    return HX_CK(cudaGetLastError());
}

/* ---------------- T3 HBM and per-CTA copy/reduce ---------------- */

struct mem_pt {
    int kind; /* 0 CE copy, 1 SM copy, 2 SM reduce */
    long long bytes;
    int nb, nt, k;
};

int hx_mem(hx_ctx *c)
{
    const hx_opts *o = c->o;
    long long maxb = o->quick ? (256ll << 20) : (1ll << 30);
    std::vector<mem_pt> pts;
    std::vector<int> nbs = {1, 4, 16, 64, c->nsm[0]};
    std::vector<int> nts = o->quick ? std::vector<int>{512} : std::vector<int>{128, 256, 512, 640};
    std::vector<int> ks =
        o->quick ? std::vector<int>{2, 4, 8} : std::vector<int>{2, 3, 4, 5, 6, 7, 8};
    float *src[8], *dst;
    hx_srcs ss;
    cudaStream_t s;
    int mhz;

    if (!o->quick)
        nbs.push_back(2 * c->nsm[0]);
    for (long long b = 4096; b <= maxb; b *= o->quick ? 4 : 2) {
        pts.push_back({0, b, 0, 0, 1});
        for (int nb : nbs)
            for (int nt : nts)
                pts.push_back({1, b, nb, nt, 1});
        for (int k : ks) {
            pts.push_back({2, b, 1, 512, k});
            pts.push_back({2, b, c->nsm[0], 512, k});
        }
    }
    hx_shuffle(c, pts.data(), pts.size());
    if (HX_CK(cudaSetDevice(0)) || HX_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)))
        return -1;
    for (int k = 0; k < 8; k++) {
        if (HX_CK(cudaMalloc((void **)&src[k], maxb)))
            return -1;
        k_fill<<<1024, 256>>>(src[k], maxb / 4, k);
        ss.p[k] = (const float4 *)src[k];
    }
    if (HX_CK(cudaMalloc((void **)&dst, maxb)) || HX_CK(cudaDeviceSynchronize()))
        return -1;
    mhz = hx_sm_mhz(0);
    for (size_t i = 0; i < pts.size() && hx_time_left(c); i++) {
        const mem_pt &pt = pts[i];
        long n4 = (long)(pt.bytes / 16);
        auto op = [&](long) {
            if (pt.kind == 0)
                cudaMemcpyAsync(dst, src[0], pt.bytes, cudaMemcpyDeviceToDevice, s);
            else if (pt.kind == 1)
                k_copy<<<pt.nb, pt.nt, 0, s>>>((const float4 *)src[0], (float4 *)dst, n4);
            else
                k_reduce<<<pt.nb, pt.nt, 0, s>>>(ss, pt.k, (float4 *)dst, n4);
        };
        char opname[16] = "copy";

        if (pt.kind == 2)
            snprintf(opname, sizeof(opname), "reduce%d", pt.k);
        if (i % 16 == 0)
            mhz = hx_sm_mhz(0);
        copy_pt q = {"mem", pt.kind == 0 ? "ce" : "sm", opname, 0, 0, pt.nb, pt.nt, pt.bytes, pt.k};

        copy_samples(c, q, 0, s, dst, mhz, op);
    }
    for (int k = 0; k < 8; k++)
        cudaFree(src[k]);
    cudaFree(dst);
    cudaStreamDestroy(s);
    return HX_CK(cudaGetLastError());
}

/* ---------------- T4 / T6 protocol kernels ---------------- */

/* Buffers of one protocol test: on `sdev` the producers' source, on `rdev` the connections,
 * FIFOs, the consumers' local operand and destination. */
struct proto_bufs {
    hx_conn *conns;
    char *fifo;
    float *src, *lsrc, *dst;
};

static int proto_alloc(proto_bufs &b, int sdev, int rdev, int npairs, long maxn, int proto)
{
    size_t per = (size_t)npairs * CS_NCCL_STEPS * maxn * sizeof(float);

    memset(&b, 0, sizeof(b));
    if (HX_CK(cudaSetDevice(sdev)) || HX_CK(cudaMalloc((void **)&b.src, per)))
        return -1;
    k_fill<<<1024, 256>>>(b.src, (long)(per / 4), 0);
    if (HX_CK(cudaSetDevice(rdev)) || HX_CK(cudaMalloc((void **)&b.lsrc, per)) ||
        HX_CK(cudaMalloc((void **)&b.dst, per)) ||
        HX_CK(cudaMalloc((void **)&b.conns, npairs * sizeof(hx_conn))) ||
        HX_CK(cudaMalloc((void **)&b.fifo,
                         (size_t)npairs * CS_NCCL_STEPS * cs_proto_step_bytes(proto))))
        return -1;
    k_fill<<<1024, 256>>>(b.lsrc, (long)(per / 4), 1);
    return HX_CK(cudaDeviceSynchronize());
}

static void proto_free(proto_bufs &b)
{
    for (void *m : std::initializer_list<void *>{b.src, b.lsrc, b.dst, b.conns, b.fifo})
        cudaFree(m);
}

/* Reset the connections (on rdev) for a run of npairs. */
static int proto_reset(proto_bufs &b, int rdev, int npairs, int proto, long n)
{
    std::vector<hx_conn> h(npairs);

    for (int i = 0; i < npairs; i++) {
        h[i].fifo = b.fifo + (size_t)i * CS_NCCL_STEPS * cs_proto_step_bytes(proto);
        h[i].slot_bytes = cs_proto_step_bytes(proto);
    }
    if (HX_CK(cudaSetDevice(rdev)) ||
        HX_CK(cudaMemset(b.fifo, 0, (size_t)npairs * CS_NCCL_STEPS * cs_proto_step_bytes(proto))) ||
        HX_CK(cudaMemcpy(b.conns, h.data(), npairs * sizeof(hx_conn), cudaMemcpyHostToDevice)) ||
        HX_CK(cudaMemset(b.dst, 0xff, (size_t)npairs * CS_NCCL_STEPS * n * sizeof(float))))
        return -1;
    return HX_CK(cudaDeviceSynchronize());
}

/* Verify the consumers' destinations: slot j of pair p holds src (+ lsrc) of that slot. The
 * pattern index is the element's position in the pair-major layout, as k_fill wrote it. */
__global__ void k_verify_proto(const float *dst, long n, int npairs, int nslots, int reduce,
                               unsigned long long *bad)
{
    long total = (long)npairs * nslots * n;

    for (long t = blockIdx.x * (long)blockDim.x + threadIdx.x; t < total;
         t += (long)gridDim.x * blockDim.x) {
        long p = t / (nslots * n), r = t % (nslots * n);
        long i = (p * CS_NCCL_STEPS) * n + r;
        float v = hx_pat(i, 0) + (reduce ? hx_pat(i, 1) : 0.0f);

        if (!(__ldcg(dst + i) == v))
            atomicAdd(bad, 1ull);
    }
}

/* A point of the sweep: `pairs` producer/consumer pairs each make `steps` calls of n floats. */
struct proto_pt {
    long n;
    int steps, pairs, reduce, nthreads;
};

/* One protocol sample: loopback when sdev == rdev. Returns seconds (< 0 on error) and status. */
static double proto_sample(hx_ctx *c, proto_bufs &b, int sdev, int rdev, int proto,
                           const proto_pt &q, const char **status)
{
    /* The roles and the abort flags (a.ctl) depend on the sides: set below. */
    hx_pt_args a = {b.conns, b.src, b.lsrc, b.dst, q.n, q.steps, proto, 0, q.reduce, q.pairs, {}};
    cudaEvent_t e0, e1;
    float ms = -1;
    unsigned long long nbad;

    if (proto_reset(b, rdev, q.pairs, proto, q.n))
        return -1;
    hx_abort_clear(c, sdev);
    hx_abort_clear(c, rdev);
    a.ctl.timeout_ns = (unsigned long long)(c->o->spin_timeout_s * 1e9);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    if (sdev == rdev) {
        void *params[] = {&a};

        a.role = 0;
        a.ctl.abort = c->d_abort[rdev];
        cudaEventRecord(e0, 0);
        if (cudaLaunchCooperativeKernel((const void *)k_proto, dim3(2 * q.pairs), dim3(q.nthreads),
                                        params, 0, 0) != cudaSuccess) {
            cudaGetLastError();
            *status = "too_big";
            cudaEventDestroy(e0);
            cudaEventDestroy(e1);
            return 0;
        }
        cudaEventRecord(e1, 0);
    } else {
        /* Consumers first (they wait), then producers; the events bracket the consumers. */
        hx_pt_args ap = a;

        a.role = 2;
        a.ctl.abort = c->d_abort[rdev];
        ap.role = 1;
        ap.ctl.abort = c->d_abort[sdev];
        cudaSetDevice(rdev);
        cudaEventRecord(e0, 0);
        k_proto<<<q.pairs, q.nthreads>>>(a);
        cudaEventRecord(e1, 0);
        cudaSetDevice(sdev);
        k_proto<<<q.pairs, q.nthreads>>>(ap);
        cudaDeviceSynchronize();
        cudaSetDevice(rdev);
    }
    if (HX_CK(cudaEventSynchronize(e1)) || HX_CK(cudaEventElapsedTime(&ms, e0, e1)))
        return -1;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    /* rdev last: the check below runs there. */
    if (hx_abort_read(c, sdev) | hx_abort_read(c, rdev)) {
        *status = "timeout";
        return ms * 1e-3;
    }
    nbad = count_bad([&](unsigned long long *bad) {
        k_verify_proto<<<1024, 256>>>(b.dst, q.n, q.pairs, std::min(q.steps, CS_NCCL_STEPS),
                                      q.reduce, bad);
    });
    *status = nbad ? "bad_data" : "ok";
    return ms * 1e-3;
}

/* Sweep protocol x op x chunk x steps x pairs between sdev and rdev. */
static int proto_sweep(hx_ctx *c, int sdev, int rdev, const char *test)
{
    const hx_opts *o = c->o;
    int maxpairs = c->nsm[rdev] / 2 > 1 ? c->nsm[rdev] / 2 : 1;
    std::vector<int> pairs =
        o->quick ? std::vector<int>{1, 16, maxpairs} : std::vector<int>{1, 4, 16, 64, maxpairs};
    std::vector<int> steps =
        o->quick ? std::vector<int>{1, 8, 64} : std::vector<int>{1, 2, 8, 32, 128};

    if (sdev != rdev)
        pairs = o->quick ? std::vector<int>{1, 8} : std::vector<int>{1, 4, 16};
    for (int proto : {CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE}) {
        long maxbytes = cs_proto_loop_bytes(proto);
        std::vector<long> chunks;
        proto_bufs b;
        std::vector<proto_pt> pts;

        for (long cb = maxbytes; cb >= 1024 && chunks.size() < (o->quick ? 3u : 6u);
             cb /= o->quick ? 8 : 4)
            chunks.push_back(cb / 16 * 16 / 4);
        for (long n : chunks)
            for (int st : steps)
                for (int p : pairs)
                    for (int red = 0; red < 2; red++) {
                        if (o->quick)
                            pts.push_back({n, st, p, red, hx_nthreads(proto)});
                        else
                            for (int nt : {256, 512, 640})
                                pts.push_back({n, st, p, red, nt});
                    }
        hx_shuffle(c, pts.data(), pts.size());
        if (proto_alloc(b, sdev, rdev, *std::max_element(pairs.begin(), pairs.end()), maxbytes / 4,
                        proto))
            return -1;
        for (size_t i = 0; i < pts.size() && hx_time_left(c); i++) {
            const proto_pt &q = pts[i];
            const char *st = "ok";
            int mhz = hx_sm_mhz(rdev);

            /* warm-up sample, not written */
            if (proto_sample(c, b, sdev, rdev, proto, q, &st) < 0)
                return -1;
            for (int smp = 0; smp < o->samples && strcmp(st, "too_big") != 0; smp++) {
                double t = proto_sample(c, b, sdev, rdev, proto, q, &st);

                if (t < 0)
                    return -1;
                hx_emit(c, test, hx_proto_mech(proto), q.reduce ? "recv_reduce_copy" : "send_recv",
                        sdev, rdev, q.pairs, 1, q.nthreads, q.n * 4, q.n * 4, q.steps, smp, t, mhz,
                        st);
                if (strcmp(st, "timeout") == 0)
                    break;
            }
        }
        cudaSetDevice(sdev);
        proto_free(b);
    }
    return HX_CK(cudaGetLastError());
}

int hx_proto(hx_ctx *c)
{
    return proto_sweep(c, 0, 0, "proto");
}

/* ---------------- T5 / T6 across GPU pairs ---------------- */

/* One-way latency between GPUs i and j: a flag ping-pong of N round trips on flags fi (on i) and
 * fj (on j), one row per sample after a warm-up; round trip / 2 is the fit's business. -1 on a
 * CUDA error. */
static int p2p_latency(hx_ctx *c, int i, int j, unsigned long long *fi, unsigned long long *fj,
                       cudaStream_t si, cudaStream_t sj, int mhz)
{
    const hx_opts *o = c->o;

    for (int smp = 0; smp <= o->samples && hx_time_left(c); smp++) {
        const int N = o->quick ? 2000 : 20000;
        hx_ctl ci = {c->d_abort[i], (unsigned long long)(o->spin_timeout_s * 1e9)};
        hx_ctl cj = {c->d_abort[j], ci.timeout_ns};
        unsigned long long vi = 0, vj = 0;
        double t;
        int ab;

        cudaSetDevice(i);
        cudaMemset(fi, 0, 8);
        hx_abort_clear(c, i);
        cudaSetDevice(j);
        cudaMemset(fj, 0, 8);
        hx_abort_clear(c, j);
        k_pingpong<<<1, 1, 0, sj>>>(fj, fi, 1, N, cj);
        cudaSetDevice(i);
        t = time_ops(si, 1, [&](long) { k_pingpong<<<1, 1, 0, si>>>(fi, fj, 0, N, ci); });
        if (t < 0)
            return -1;
        ab = hx_abort_read(c, i);
        cudaMemcpy(&vi, fi, 8, cudaMemcpyDeviceToHost);
        cudaSetDevice(j);
        cudaDeviceSynchronize();
        ab |= hx_abort_read(c, j);
        cudaMemcpy(&vj, fj, 8, cudaMemcpyDeviceToHost);
        if (smp == 0)
            continue;
        hx_emit(c, "p2p_lat", "flag_pingpong", "rtt", i, j, 1, 1, 1, 0, 8, N, smp, t, mhz,
                ab                                       ? "timeout"
                : (vi == 2ull * N && vj == 2ull * N - 1) ? "ok"
                                                         : "bad_data");
    }
    return 0;
}

static int p2p_pair(hx_ctx *c, int i, int j)
{
    const hx_opts *o = c->o;
    long long maxb = o->quick ? (64ll << 20) : (1ll << 30);
    float *src, *dst;
    unsigned long long *fi, *fj;
    cudaStream_t si, sj;
    int mhz = hx_sm_mhz(i);
    std::vector<long long> sizes;

    for (long long b = 4096; b <= maxb; b *= o->quick ? 8 : 2)
        sizes.push_back(b);
    hx_shuffle(c, sizes.data(), sizes.size());
    if (HX_CK(cudaSetDevice(i)) || HX_CK(cudaMalloc((void **)&src, maxb)) ||
        HX_CK(cudaMalloc((void **)&fi, 8)) ||
        HX_CK(cudaStreamCreateWithFlags(&si, cudaStreamNonBlocking)))
        return -1;
    k_fill<<<1024, 256>>>(src, maxb / 4, 0);
    if (HX_CK(cudaDeviceSynchronize()) || HX_CK(cudaSetDevice(j)) ||
        HX_CK(cudaMalloc((void **)&dst, maxb)) || HX_CK(cudaMalloc((void **)&fj, 8)) ||
        HX_CK(cudaStreamCreateWithFlags(&sj, cudaStreamNonBlocking)))
        return -1;
    for (long long b : sizes) {
        long n4 = (long)(b / 16);
        struct {
            const char *mech;
            int nb;
        } kinds[] = {
            {"ce", 0},      {"sm_write", 1}, {"sm_write", 16},      {"sm_write", c->nsm[i]},
            {"sm_read", 1}, {"sm_read", 16}, {"sm_read", c->nsm[j]}};

        if (!hx_time_left(c))
            break;
        for (auto &k : kinds) {
            int dev = strcmp(k.mech, "sm_read") == 0 ? j : i;
            cudaStream_t s = dev == i ? si : sj;
            auto op = [&](long) {
                if (k.nb == 0)
                    cudaMemcpyPeerAsync(dst, j, src, i, b, s);
                else
                    k_copy<<<k.nb, 512, 0, s>>>((const float4 *)src, (float4 *)dst, n4);
            };
            copy_pt q = {"p2p_bw", k.mech, "copy", i, j, k.nb, k.nb ? 512 : 0, b, 1};

            copy_samples(c, q, dev, s, dst, mhz, op);
        }
    }
    if (p2p_latency(c, i, j, fi, fj, si, sj, mhz) != 0)
        return -1;
    cudaSetDevice(i);
    cudaFree(src);
    cudaFree(fi);
    cudaStreamDestroy(si);
    cudaSetDevice(j);
    cudaFree(dst);
    cudaFree(fj);
    cudaStreamDestroy(sj);
    return proto_sweep(c, i, j, "proto_link");
}

int hx_p2p(hx_ctx *c)
{
    if (c->ndev < 2) {
        printf("# p2p: one GPU, per-pair tests skipped (calibration.md 3.4)\n");
        return 0;
    }
    for (int i = 0; i < c->ndev; i++)
        for (int j = 0; j < c->ndev; j++) {
            if (i == j)
                continue;
            if (!c->peer[i][j]) {
                printf("# p2p: %d cannot access %d, pair skipped\n", i, j);
                continue;
            }
            if (p2p_pair(c, i, j))
                return -1;
        }
    return 0;
}
