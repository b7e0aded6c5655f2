/* exec.cu: run MSCCL XML schedules on the GPU (test T9): one CTA per <tb>, 8-slot FIFOs per
 * connection in the protocol of the schedule, dependency flags as the MSCCL runtime uses them;
 * N virtual ranks on one GPU, or one rank per GPU; outputs checked against the CPU reference. */
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "harness.h"
#include "proto.cuh"

extern "C" {
#include "emulate.h"
#include "report.h"
#include "tracecmp.h"
#include "verify.h"
#include "xml.h"
}

struct hx_exec_args {
    const cs_xplan_tb *tbs;
    const cs_xplan_step *steps;
    const cs_xplan_dep *deps;
    const int *srcs;
    hx_conn *const *conns;                          /* per connection, on its receiver's device */
    unsigned long long *flags;                      /* one per global tb */
    float *const *in, *const *out, *const *scratch; /* per rank */
    int tb_offset;
    int proto;
    unsigned work;
    long chunk_elems, loop_elems;
    int niter, max_allowed;
    hx_ctl ctl;
    /* Per-step timestamps (%globaltimer, ns), or NULL: for loop iteration i and the plan's step k
     * (global index), stamps[2 (i nsteps + k)] when its tb starts waiting on its dependencies and
     * [.. + 1] when its last call (and flag) is done, after a block barrier. */
    unsigned long long *stamps;
    int nsteps;
};

__device__ __forceinline__ float *hx_buf(const hx_exec_args &a, int rank, int buf)
{
    return buf == CS_BUF_INPUT ? a.in[rank] : buf == CS_BUF_OUTPUT ? a.out[rank] : a.scratch[rank];
}

__global__ void __launch_bounds__(HX_MAX_NTHREADS) hx_exec_kernel(hx_exec_args a)
{
    __shared__ int flag;
    int bid = a.tb_offset + blockIdx.x;
    const cs_xplan_tb tb = a.tbs[bid];
    hx_conn *rc = tb.recv_conn >= 0 ? a.conns[tb.recv_conn] : NULL;
    hx_conn *sc = tb.send_conn >= 0 ? a.conns[tb.send_conn] : NULL;
    unsigned long long sstep = sc ? sc->send_step : 0, rstep = rc ? rc->recv_step : 0;

    for (int iter = 0; iter < a.niter; iter++) {
        for (int i = 0; i < tb.nsteps; i++) {
            const cs_xplan_step st = a.steps[tb.step_first + i];
            cs_step_type ty = (cs_step_type)st.type;
            int calls = cs_proto_step_calls(st.cnt, a.max_allowed);
            long stamp = 2 * ((long)iter * a.nsteps + tb.step_first + i);

            if (a.stamps != NULL && threadIdx.x == 0)
                a.stamps[stamp] = hx_gtimer();

            /* Dependencies: thread d waits for dependency d (msccl_kernel.cu). */
            if ((int)threadIdx.x < st.ndeps) {
                const cs_xplan_dep dp = a.deps[st.dep_first + threadIdx.x];

                if (hx_spin_ge(&a.flags[dp.tb], cs_proto_flag(a.work, iter, dp.s), a.ctl))
                    __threadfence();
            }
            if (hx_block_aborted(a.ctl, &flag))
                return;
            for (int k = 0; k < calls; k++) {
                long start, len, dstart = 0, dlen = 0;

                cs_proto_call_region(a.chunk_elems, a.loop_elems, a.max_allowed, iter, st.srcoff,
                                     st.cnt, k, &start, &len);
                cs_proto_call_region(a.chunk_elems, a.loop_elems, a.max_allowed, iter, st.dstoff,
                                     st.cnt, k, &dstart, &dlen);
                hx_op op = {cs_step_reads_src(ty) ? hx_buf(a, tb.rank, st.srcbuf) + start : NULL,
                            cs_step_writes_dst(ty) ? hx_buf(a, tb.rank, st.dstbuf) + dstart : NULL,
                            cs_step_recvs(ty) ? rc : NULL, cs_step_sends(ty) ? sc : NULL, len};
                if (st.type == CS_STEP_CPY || st.type == CS_STEP_RE) {
                    const float *base = hx_buf(a, tb.rank, st.srcbuf);

                    for (long e = threadIdx.x; e < len; e += blockDim.x) {
                        float v = hx_ld(op.src + e);

                        if (st.type == CS_STEP_RE) {
                            v += hx_ld(op.dst + e);
                            for (int j = 0; j < st.nsrcs; j++)
                                v += hx_ld(base + (long)a.srcs[st.src_first + j] * a.chunk_elems +
                                           (start - (long)st.srcoff * a.chunk_elems) + e);
                        }
                        op.dst[e] = v;
                    }
                    __syncthreads();
                } else if (!hx_prim(a.proto, op, sstep, rstep, a.ctl, &flag)) {
                    return;
                }
            }
            if (st.hasdep) {
                __syncthreads();
                if (threadIdx.x == 0) {
                    __threadfence();
                    *(volatile unsigned long long *)&a.flags[bid] =
                        cs_proto_flag(a.work, iter, st.s);
                }
            }
            if (a.stamps != NULL) {
                __syncthreads();
                if (threadIdx.x == 0)
                    a.stamps[stamp + 1] = hx_gtimer();
            }
        }
    }
    if (threadIdx.x == 0) {
        if (sc)
            sc->send_step = sstep;
        if (rc)
            rc->recv_step = rstep;
    }
}

/* ---------------- host side ---------------- */

#define HX_REF_XML(file) CS_SRCDIR "/tests/data/msccl-xml/" file

static const char *const hx_default_xmls[] = {
    HX_REF_XML("simple_allreduce_ring.4gpu.1inst.xml"),
    HX_REF_XML("allreduce_a100_ncv4.4gpu.1inst.LL.xml"),
    HX_REF_XML("allgather_a100_pcie.4gpu.1inst.LL128.xml"),
    HX_REF_XML("alltoall_allpairs.8gpu.1inst.LL128.xml"),
    HX_REF_XML("allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml"),
    /* The published seed: its output is wrong by design (DESIGN.md), so its rows must say
     * wrong_schedule, which checks the executor's check. */
    HX_REF_XML("allreduce_a100_pcie_hierarchical.4gpu.1inst.LL.xml"),
};

/* One schedule: its device state, sized for its largest call, and what its sizes share. Rank r
 * runs on device r with one rank per GPU (multi), all ranks on device 0 otherwise. */
struct hx_xrun {
    const cs_xplan *p;
    const char *name; /* the file name without .xml: the rows' op */
    int multi;
    int ndev;             /* devices used */
    int nthreads;         /* per tb */
    FILE *sum;            /* OUTDIR/exec-NAME.csv, or NULL when it cannot be created */
    long long timeout_at; /* size that timed out or deadlocked (larger are skipped), or -1 */
    std::vector<float *> in_mem, out_mem, scratch, in, out; /* per rank */
    std::vector<hx_conn> conns_h;   /* reset image (FIFO pointer set, counters zero) */
    std::vector<hx_conn *> conns_d; /* each on its receiver's device */
    std::vector<char *> fifos;
    std::vector<hx_exec_args> args;    /* per device: the plan and the pointer tables there */
    std::vector<cudaStream_t> streams; /* per device */
};

/* One size: the plan's sizing, the inputs' image, the CPU emulation's result of the same plan and
 * size (NULL when the emulation deadlocks), the GPU's output, and why a sample was not ok. */
struct hx_xsize {
    cs_xplan_sizing sz;
    cs_emulate_bufs *img, *emu, *got;
    char why[1200];
};

static int rank_dev(const hx_xrun &x, int rank)
{
    return x.multi ? rank : 0;
}

/* Copy host memory to the device: 0, or -1 after a message. */
static int to_gpu(void *d, const void *h, size_t bytes)
{
    return HX_CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice)) ? -1 : 0;
}

/* A device copy of n host values (at least one slot, so that it is never NULL). */
template <typename T> static int to_dev(const T **d, const T *h, size_t n)
{
    T *q;

    if (HX_CK(cudaMalloc((void **)&q, (n ? n : 1) * sizeof(T))))
        return -1;
    *d = q;
    return n ? to_gpu(q, h, n * sizeof(T)) : 0;
}

static void xrun_free(hx_xrun &x)
{
    for (size_t r = 0; r < x.in_mem.size(); r++) {
        cudaSetDevice(rank_dev(x, (int)r));
        cudaFree(x.in_mem[r]);
        cudaFree(x.out_mem[r]);
        cudaFree(x.scratch[r]);
    }
    for (size_t c = 0; c < x.fifos.size(); c++) {
        cudaFree(x.fifos[c]);
        cudaFree(x.conns_d[c]);
    }
    for (size_t d = 0; d < x.args.size(); d++) {
        const hx_exec_args &a = x.args[d];
        const void *mem[] = {a.tbs,   a.steps, a.deps, a.srcs,   a.conns,
                             a.flags, a.in,    a.out,  a.scratch};

        cudaSetDevice((int)d);
        for (const void *m : mem)
            cudaFree((void *)m);
        if (x.streams[d])
            cudaStreamDestroy(x.streams[d]);
    }
}

/* Buffers for chunks of max_chunk_elems, FIFOs, flags and the plan on every device used. */
static int xrun_setup(hx_ctx *c, hx_xrun &x, long max_chunk_elems)
{
    const cs_xplan *p = x.p;
    size_t S = (size_t)max_chunk_elems;
    long sb = cs_proto_step_bytes(p->proto);

    x.ndev = x.multi ? p->nranks : 1;
    x.in_mem.assign(p->nranks, NULL);
    x.out_mem.assign(p->nranks, NULL);
    x.scratch.assign(p->nranks, NULL);
    for (int r = 0; r < p->nranks; r++) {
        const cs_xplan_rank &rk = p->ranks[r];

        /* An aliased buffer has no memory of its own: xrun_size points it into the other. */
        if (HX_CK(cudaSetDevice(rank_dev(x, r))) ||
            HX_CK(cudaMalloc((void **)&x.scratch[r], (rk.scratch_chunks * S + 1) * 4)) ||
            (rk.in_alias < 0 &&
             HX_CK(cudaMalloc((void **)&x.in_mem[r], (rk.in_chunks * S + 1) * 4))) ||
            ((rk.in_alias >= 0 || rk.out_alias < 0) &&
             HX_CK(cudaMalloc((void **)&x.out_mem[r], (rk.out_chunks * S + 1) * 4))))
            return -1;
    }
    x.in = x.in_mem;
    x.out = x.out_mem;
    /* Connections and FIFOs live on the receiver's device. */
    x.conns_h.assign(p->nconns, hx_conn());
    x.fifos.assign(p->nconns, NULL);
    x.conns_d.assign(p->nconns, NULL);
    for (int k = 0; k < p->nconns; k++) {
        if (HX_CK(cudaSetDevice(rank_dev(x, p->conns[k].dst))) ||
            HX_CK(cudaMalloc((void **)&x.fifos[k], (size_t)sb * CS_NCCL_STEPS)) ||
            HX_CK(cudaMalloc((void **)&x.conns_d[k], sizeof(hx_conn))))
            return -1;
        x.conns_h[k].fifo = x.fifos[k];
        x.conns_h[k].slot_bytes = sb;
    }
    x.args.assign(x.ndev, hx_exec_args());
    x.streams.assign(x.ndev, NULL);
    for (int d = 0; d < x.ndev; d++) {
        hx_exec_args &a = x.args[d];

        if (HX_CK(cudaSetDevice(d)) || to_dev(&a.tbs, p->tbs, p->ntbs) ||
            to_dev(&a.steps, p->steps, p->nsteps) || to_dev(&a.deps, p->deps, p->ndeps) ||
            to_dev(&a.srcs, p->srcs, p->nsrcs) ||
            to_dev(&a.conns, x.conns_d.data(), x.conns_d.size()) ||
            to_dev(&a.in, x.in.data(), p->nranks) || to_dev(&a.out, x.out.data(), p->nranks) ||
            to_dev(&a.scratch, x.scratch.data(), p->nranks) ||
            HX_CK(cudaMalloc((void **)&a.flags, (p->ntbs + 1) * sizeof(unsigned long long))) ||
            HX_CK(cudaStreamCreateWithFlags(&x.streams[d], cudaStreamNonBlocking)))
            return -1;
        a.proto = p->proto;
        a.nsteps = p->nsteps;
        a.stamps = NULL;
        a.work = 1;
        a.ctl.abort = c->d_abort[d];
        a.ctl.timeout_ns = (unsigned long long)(c->o->spin_timeout_s * 1e9);
    }
    return 0;
}

/* The kernel's sizing of a call, and the aliased buffers, which move with the chunk size. */
static int xrun_size(hx_xrun &x, const cs_xplan_sizing &sz)
{
    const cs_xplan *p = x.p;
    size_t S = (size_t)sz.run.chunk_elems, n = p->nranks * sizeof(float *);

    for (int r = 0; r < p->nranks; r++) {
        const cs_xplan_rank &rk = p->ranks[r];

        if (rk.in_alias >= 0)
            x.in[r] = x.out[r] + (size_t)rk.in_alias * S;
        else if (rk.out_alias >= 0)
            x.out[r] = x.in[r] + (size_t)rk.out_alias * S;
    }
    for (int d = 0; d < x.ndev; d++) {
        hx_exec_args &a = x.args[d];

        a.chunk_elems = sz.run.chunk_elems;
        a.loop_elems = sz.run.loop_elems;
        a.niter = sz.run.niter;
        a.max_allowed = sz.run.max_allowed;
        if (HX_CK(cudaSetDevice(d)) || to_gpu((void *)a.in, x.in.data(), n) ||
            to_gpu((void *)a.out, x.out.data(), n))
            return -1;
    }
    return 0;
}

/* Reset what a run touches: inputs from the image, outputs NaN, scratch 0, FIFOs, conns, flags. */
static int xrun_reset(hx_ctx *c, hx_xrun &x, const cs_emulate_bufs *img)
{
    const cs_xplan *p = x.p;
    long S = img->chunk_elems;

    for (int r = 0; r < p->nranks; r++) {
        const cs_xplan_rank &rk = p->ranks[r];
        size_t in_bytes = (size_t)rk.in_chunks * S * 4;

        if (HX_CK(cudaSetDevice(rank_dev(x, r))) ||
            (x.out_mem[r] &&
             to_gpu(x.out_mem[r], img->out_mem[r], (size_t)rk.out_chunks * S * 4)) ||
            (x.in_mem[r] && to_gpu(x.in_mem[r], img->in_mem[r], in_bytes)) ||
            (rk.in_alias >= 0 && to_gpu(x.in[r], img->in[r], in_bytes)) ||
            HX_CK(cudaMemset(x.scratch[r], 0, (size_t)rk.scratch_chunks * S * 4 + 4)))
            return -1;
    }
    for (int k = 0; k < p->nconns; k++)
        if (HX_CK(cudaSetDevice(rank_dev(x, p->conns[k].dst))) ||
            HX_CK(
                cudaMemset(x.fifos[k], 0, (size_t)cs_proto_step_bytes(p->proto) * CS_NCCL_STEPS)) ||
            to_gpu(x.conns_d[k], &x.conns_h[k], sizeof(hx_conn)))
            return -1;
    for (int d = 0; d < x.ndev; d++)
        if (HX_CK(cudaSetDevice(d)) ||
            HX_CK(cudaMemset(x.args[d].flags, 0, (p->ntbs + 1) * sizeof(unsigned long long))) ||
            hx_abort_clear(c, d))
            return -1;
    return 0;
}

static int launch(hx_exec_args a, int tb_offset, int grid, int nthreads, cudaStream_t s)
{
    void *params[] = {&a};

    a.tb_offset = tb_offset;
    return HX_CK(cudaLaunchCooperativeKernel((const void *)hx_exec_kernel, dim3(grid),
                                             dim3(nthreads), params, 0, s));
}

/* The status of a run that finished, from its output s.got: ok; wrong_schedule when it is the
 * CPU emulation's but not the collective's; bad_data when it is neither. */
static void judge(const cs_xplan *p, hx_xsize &s, const char **status)
{
    cs_error err;
    long wrong = 0, differ = 0;

    cs_error_init(&err);
    if (cs_emulate_has_reference(p))
        wrong = cs_emulate_check_output(p, s.got, &err);
    /* Bit for bit against the emulation: inputs are small integers, so sums are exact in any
     * order, and unwritten elements stay NaN in both. */
    for (int r = 0; s.emu && r < p->nranks; r++)
        for (long e = 0; e < (long)p->ranks[r].out_chunks * s.sz.run.chunk_elems; e++)
            differ += memcmp(&s.got->out[r][e], &s.emu->out[r][e], sizeof(float)) != 0;
    if (differ > 0) {
        *status = "bad_data";
        snprintf(s.why, sizeof(s.why),
                 "%ld output elements differ from the CPU emulation of the plan (%ld from the "
                 "reference%s%s)",
                 differ, wrong, wrong ? "; first: " : "", wrong ? err.msg : "");
    } else if (wrong > 0) {
        *status = s.emu ? "wrong_schedule" : "bad_data";
        snprintf(s.why, sizeof(s.why), "%ld wrong elements%s; first: %s", wrong,
                 s.emu ? ", as in the CPU emulation: the schedule itself is wrong" : "", err.msg);
    } else if (s.emu == NULL) {
        snprintf(s.why, sizeof(s.why), "finished although the CPU emulation of the plan deadlocks");
    }
}

/* One sample: reset, run, time, check. Sets *status: ok; wrong_schedule (the output is the
 * emulation's, which is not the collective's); deadlock (both time out); timeout or bad_data
 * (the GPU disagrees with the emulation). Returns -1 on a CUDA error. */
static int xrun_sample(hx_ctx *c, hx_xrun &x, hx_xsize &s, double *time_s, const char **status)
{
    const cs_xplan *p = x.p;
    cudaEvent_t e0, e1;
    int aborted = 0;

    if (xrun_reset(c, x, s.img))
        return -1;
    if (!x.multi) {
        float ms = 0;
        cudaStream_t st = x.streams[0];

        if (HX_CK(cudaSetDevice(0)) || HX_CK(cudaEventCreate(&e0)) || HX_CK(cudaEventCreate(&e1)))
            return -1;
        if (HX_CK(cudaEventRecord(e0, st)) || launch(x.args[0], 0, p->ntbs, x.nthreads, st) ||
            HX_CK(cudaEventRecord(e1, st)) || HX_CK(cudaEventSynchronize(e1)) ||
            HX_CK(cudaEventElapsedTime(&ms, e0, e1)))
            return -1;
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        *time_s = ms * 1e-3;
    } else {
        double t0 = hx_now_s();

        for (int r = 0; r < p->nranks; r++)
            if (HX_CK(cudaSetDevice(r)) ||
                launch(x.args[r], p->ranks[r].tb_first, p->ranks[r].ntbs, x.nthreads, x.streams[r]))
                return -1;
        for (int r = 0; r < p->nranks; r++)
            if (HX_CK(cudaSetDevice(r)) || HX_CK(cudaStreamSynchronize(x.streams[r])))
                return -1;
        *time_s = hx_now_s() - t0;
    }
    for (int d = 0; d < x.ndev; d++) {
        int ab = hx_abort_read(c, d);

        if (ab < 0)
            return -1;
        aborted |= ab;
    }
    if (aborted) {
        *status = s.emu == NULL ? "deadlock" : "timeout";
        snprintf(s.why, sizeof(s.why), "a wait exceeded %.1f s%s", c->o->spin_timeout_s,
                 s.emu == NULL ? "; the CPU emulation of the plan deadlocks at this size too"
                               : " but the CPU emulation of the plan finishes");
        return 0;
    }
    *status = "ok";
    for (int r = 0; r < p->nranks; r++)
        if (HX_CK(cudaSetDevice(rank_dev(x, r))) ||
            HX_CK(cudaMemcpy(s.got->out[r], x.out[r],
                             (size_t)p->ranks[r].out_chunks * s.sz.run.chunk_elems * 4,
                             cudaMemcpyDeviceToHost)))
            return -1;
    judge(p, s, status);
    return 0;
}

/* Whether every tb of the schedule can be resident at once (the kernel spins across blocks); when
 * not, reports a too_big row and returns 1. */
static int too_big(hx_ctx *c, const hx_xrun &x, int maxb)
{
    const cs_xplan *p = x.p;
    int need = 0;

    for (int r = 0; r < p->nranks; r++)
        need = x.multi ? (p->ranks[r].ntbs > need ? p->ranks[r].ntbs : need) : p->ntbs;
    if (need <= maxb * c->nsm[0])
        return 0;

    fprintf(stderr,
            "collsim-harness: %s: %d thread blocks cannot all be resident (%d per SM x %d SMs)\n",
            x.name, need, maxb, c->nsm[0]);
    hx_emit(c, "exec", hx_proto_mech(p->proto), x.name, 0, 0, p->nranks, need, x.nthreads, 0, 0, 0,
            0, 0.0, 0, "too_big");
    return 1;
}

/* The sizes to run: powers of two (of four with --quick) from the options' range, rounded down
 * to a multiple of unit, at most 64, shuffled. Returns their count. */
static int exec_sizes(hx_ctx *c, long long unit, long long sizes[64])
{
    const hx_opts *o = c->o;
    int n = 0;

    for (long long s = o->exec_min_bytes; s <= o->exec_max_bytes && n < 64; s *= o->quick ? 4 : 2) {
        long long v = s / unit * unit;

        if (v < unit)
            v = unit;
        if (n == 0 || sizes[n - 1] != v)
            sizes[n++] = v;
    }
    hx_shuffle(c, sizes, n);
    return n;
}

/* The samples of one size (the first one a warm-up when it runs), each emitted as a row. Sets
 * *worst to the last status other than ok, stores the times of runs that finished in times and
 * their number in *nt, and sets x.timeout_at when a run times out or deadlocks. -1 on a CUDA
 * error. */
static int exec_samples(hx_ctx *c, hx_xrun &x, hx_xsize &s, double times[64], int *nt,
                        const char **worst)
{
    const cs_xplan *p = x.p;
    int mhz = hx_sm_mhz(0);

    for (int smp = 0; smp <= c->o->samples && smp < 64; smp++) {
        double t = 0;
        const char *st = "ok";

        if (xrun_sample(c, x, s, &t, &st))
            return -1;
        /* A run that finished, with the collective's output or the emulation's. */
        int ran = strcmp(st, "ok") == 0 || strcmp(st, "wrong_schedule") == 0;

        if (smp == 0 && ran)
            continue; /* warm-up: module load, first touch, clocks */

        hx_emit(c, "exec", hx_proto_mech(p->proto), x.name, 0, x.multi ? p->nranks - 1 : 0,
                p->nranks, x.multi ? p->ntbs / p->nranks : p->ntbs, x.nthreads,
                (long long)s.sz.run.chunk_elems * 4, s.sz.run.size_bytes, 1, smp, t, mhz, st);
        if (strcmp(st, "ok") != 0)
            *worst = st;
        if (ran) {
            times[(*nt)++] = t;
        } else if (strcmp(st, "timeout") == 0 || strcmp(st, "deadlock") == 0) {
            x.timeout_at = s.sz.run.size_bytes;
            break;
        }
    }
    return 0;
}

/* The size traced for a schedule of nchunks x 4-byte unit: --trace-size rounded down as
 * exec_sizes rounds, or 0 for none. */
static long long trace_size(const hx_opts *o, long long unit)
{
    long long v = o->trace_bytes / unit * unit;

    return o->trace_bytes <= 0 ? 0 : v < unit ? unit : v;
}

/* The stamps h of one traced run as OUTDIR/exec-NAME-SIZE.trace.json, on a clock that starts at
 * the first stamp (the raw %globaltimer is too large for a double's microseconds). 0 or -1. */
static int write_trace(hx_ctx *c, const hx_xrun &x, const hx_xsize &s,
                       const std::vector<unsigned long long> &h)
{
    const cs_xplan *p = x.p;
    cs_step_trace t;
    unsigned long long t0 = ~0ull;
    char path[4600];
    FILE *fp;
    int rc = 0;

    memset(&t, 0, sizeof(t));
    snprintf(t.coll, sizeof(t.coll), "%s", cs_coll_name((cs_coll)p->coll));
    snprintf(t.proto, sizeof(t.proto), "%s", cs_proto_name((cs_proto)p->proto));
    snprintf(t.source, sizeof(t.source), "collsim-harness");
    t.gpus = p->nranks;
    t.iterations = s.sz.run.niter;
    t.size_bytes = s.sz.run.size_bytes;
    for (size_t k = 0; k < h.size(); k++)
        t0 = h[k] != 0 && h[k] < t0 ? h[k] : t0;
    for (int b = 0; b < p->ntbs && rc == 0; b++) {
        const cs_xplan_tb &tb = p->tbs[b];

        for (int it = 0; it < s.sz.run.niter && rc == 0; it++)
            for (int i = 0; i < tb.nsteps && rc == 0; i++) {
                size_t k = 2 * ((size_t)it * p->nsteps + tb.step_first + i);
                const cs_xplan_step &st = p->steps[tb.step_first + i];
                cs_step_span sp;

                if (h[k] == 0 || h[k + 1] < h[k])
                    continue; /* not reached */
                memset(&sp, 0, sizeof(sp));
                sp.rank = tb.rank;
                sp.tb = tb.id;
                sp.iter = it;
                sp.step = st.s;
                sp.t0_us = (double)(h[k] - t0) * 1e-3;
                sp.t1_us = (double)(h[k + 1] - t0) * 1e-3;
                snprintf(sp.type, sizeof(sp.type), "%s", cs_step_type_name((cs_step_type)st.type));
                rc = cs_step_trace_add(&t, &sp) == 0 ? 0 : -1;
            }
    }
    snprintf(path, sizeof(path), "%s/exec-%s-%lld.trace.json", c->o->outdir, x.name,
             s.sz.run.size_bytes);
    if (rc == 0 && (fp = fopen(path, "w")) != NULL) {
        rc = cs_step_trace_write(fp, &t) == 0 ? 0 : -1;
        rc = fclose(fp) != 0 ? -1 : rc;
        printf("# trace %s: %ld steps\n", path, t.n);
    } else if (rc == 0) {
        fprintf(stderr, "collsim-harness: cannot write %s\n", path);
    }
    cs_step_trace_free(&t);
    return rc;
}

/* One more run of this size with per-step timestamps (write_trace); a run that does not finish
 * writes none. 0, or -1 on a CUDA or memory error. */
static int exec_trace(hx_ctx *c, hx_xrun &x, hx_xsize &s)
{
    const cs_xplan *p = x.p;
    size_t n = 2 * (size_t)s.sz.run.niter * p->nsteps + 2;
    std::vector<unsigned long long> h(n, 0), part(n);
    std::vector<unsigned long long *> d(x.ndev, NULL);
    const char *st = "ok";
    double t = 0;
    int rc = 0;

    for (int k = 0; k < x.ndev && rc == 0; k++) {
        if (HX_CK(cudaSetDevice(k)) || HX_CK(cudaMalloc((void **)&d[k], n * 8)) ||
            HX_CK(cudaMemset(d[k], 0, n * 8)))
            rc = -1;
        else
            x.args[k].stamps = d[k];
    }
    if (rc == 0)
        rc = xrun_sample(c, x, s, &t, &st);
    for (int k = 0; k < x.ndev; k++)
        x.args[k].stamps = NULL;
    /* each device's kernel runs its own ranks' threadblocks: their stamps are disjoint */
    for (int k = 0; k < x.ndev && rc == 0; k++) {
        if (HX_CK(cudaSetDevice(k)) ||
            HX_CK(cudaMemcpy(part.data(), d[k], n * 8, cudaMemcpyDeviceToHost)))
            rc = -1;
        for (size_t i = 0; rc == 0 && i < n; i++)
            h[i] = part[i] ? part[i] : h[i];
    }
    for (int k = 0; k < x.ndev; k++)
        if (d[k] != NULL) {
            cudaSetDevice(k);
            cudaFree(d[k]);
        }
    if (rc == 0 && (strcmp(st, "ok") == 0 || strcmp(st, "wrong_schedule") == 0))
        rc = write_trace(c, x, s, h);
    return rc;
}

/* One size: emulate it on the CPU, sample it on the GPU, print and write its summary line. 0,
 * 1 when the size is skipped, -1 on a CUDA or memory error. */
static int exec_size(hx_ctx *c, hx_xrun &x, long long size)
{
    const cs_xplan *p = x.p;
    hx_xsize s = {};
    cs_error err;
    double times[64], med = 0, algbw = 0, bf = cs_busbw_factor((cs_coll)p->coll, p->nranks);
    int nt = 0, rc;
    const char *worst = "ok";

    cs_error_init(&err);
    if (cs_xplan_size(p, size, 4, 0, &s.sz, &err) != 0) {
        fprintf(stderr, "collsim-harness: %s at %lld B: %s\n", x.name, size, err.msg);
        return 1;
    }
    s.img = cs_emulate_bufs_new(p, s.sz.run.chunk_elems);
    s.got = cs_emulate_bufs_new(p, s.sz.run.chunk_elems);
    s.emu = cs_emulate_bufs_new(p, s.sz.run.chunk_elems);
    rc = s.img == NULL || s.got == NULL || s.emu == NULL || xrun_size(x, s.sz) ? -1 : 0;
    if (rc == 0 && cs_emulate_run(p, &s.sz, s.emu, &err) != 0) {
        cs_emulate_bufs_free(s.emu);
        s.emu = NULL;
    }
    if (rc == 0)
        rc = exec_samples(c, x, s, times, &nt, &worst);
    if (rc == 0 && nt > 0 && size == trace_size(c->o, (long long)p->nchunks * 4))
        rc = exec_trace(c, x, s);
    if (rc == 0) {
        if (nt > 0) {
            std::sort(times, times + nt);
            med = times[nt / 2];
            algbw = size / med / 1e9;
        }
        printf("  %12lld %12lld %6s %12.2f %10.3f %10.3f  %s%s%s\n", size, s.sz.count, "float",
               med * 1e6, algbw, algbw * bf, worst, s.why[0] ? ": " : "", s.why);
        if (x.sum)
            fprintf(x.sum, "%lld,%lld,float,%.3f,%.4f,%.4f,%s,%lld\n", size, s.sz.count, med * 1e6,
                    algbw, algbw * bf, worst, size);
    }
    cs_emulate_bufs_free(s.img);
    cs_emulate_bufs_free(s.got);
    cs_emulate_bufs_free(s.emu);
    return rc;
}

/* The sizes of a schedule that fits, its buffers set up for the largest: their rows, printed
 * summary and OUTDIR/exec-NAME.csv. 0, or -1 on a CUDA or memory error. */
static int exec_run(hx_ctx *c, hx_xrun &x)
{
    const cs_xplan *p = x.p;
    long long sizes[64], unit = (long long)p->nchunks * 4, mx = 0;
    int nsizes = exec_sizes(c, unit, sizes), rc = 0;
    char csvpath[4600];

    for (int i = 0; i < nsizes; i++)
        mx = std::max(mx, sizes[i]);
    if (xrun_setup(c, x, (long)(mx / unit)))
        return -1;
    snprintf(csvpath, sizeof(csvpath), "%s/exec-%s.csv", c->o->outdir, x.name);
    x.sum = fopen(csvpath, "w");
    if (x.sum)
        fprintf(x.sum, CS_REPORT_CSV_HEADER "\n");
    printf("# exec %s: %s, %d ranks (%s), %d tbs, %d connections, %d threads per tb\n", x.name,
           cs_proto_name((enum cs_proto)p->proto), p->nranks,
           x.multi ? "one per GPU" : "virtual, one GPU", p->ntbs, p->nconns, x.nthreads);
    printf("# %12s %12s %6s %12s %10s %10s  %s\n", "size(B)", "count", "type", "time(us)", "algbw",
           "busbw", "status");
    for (int i = 0; i < nsizes && rc >= 0 && hx_time_left(c); i++)
        if (x.timeout_at < 0 || sizes[i] < x.timeout_at)
            rc = exec_size(c, x, sizes[i]);
    if (x.sum)
        fclose(x.sum);
    return rc < 0 ? rc : 0;
}

/* One schedule file: read, compile, check that it fits, run. A file that does not read counts as
 * a failure; -1 only on a CUDA or memory error. */
static int exec_one(hx_ctx *c, const char *path)
{
    cs_sched *sched = NULL;
    cs_xplan *p = NULL;
    cs_error err;
    char name[256];
    hx_xrun x;
    int maxb = 0, rc = 0;

    cs_error_init(&err);
    snprintf(name, sizeof(name), "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    if (strlen(name) > 4 && strcmp(name + strlen(name) - 4, ".xml") == 0)
        name[strlen(name) - 4] = '\0';
    if (cs_sched_read_xml(path, &sched, &err) != 0 ||
        cs_verify_refuse_invalid(sched, path, &err) != 0 || cs_xplan_build(sched, &p, &err) != 0) {
        fprintf(stderr, "collsim-harness: %s:%d: %s\n", err.file[0] ? err.file : path, err.line,
                err.msg);
        cs_sched_free(sched);
        c->failures++;
        return 0;
    }
    cs_sched_free(sched);
    x.p = p;
    x.name = name;
    x.multi = c->o->exec_multi && c->ndev >= p->nranks;
    x.nthreads = hx_nthreads(p->proto);
    x.timeout_at = -1;
    if (HX_CK(cudaSetDevice(0)) ||
        HX_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&maxb, hx_exec_kernel, x.nthreads, 0)))
        rc = -1;
    else if (!too_big(c, x, maxb))
        rc = exec_run(c, x);
    xrun_free(x);
    cs_xplan_free(p);
    return rc;
}

int hx_exec(hx_ctx *c)
{
    const hx_opts *o = c->o;
    int n = o->nxml > 0 ? o->nxml : (int)(sizeof(hx_default_xmls) / sizeof(hx_default_xmls[0]));

    for (int i = 0; i < n; i++)
        if (exec_one(c, o->nxml > 0 ? o->xmls[i] : hx_default_xmls[i]))
            return -1;
    return 0;
}
