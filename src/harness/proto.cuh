/* proto.cuh: device code of the three NCCL protocols as MSCCL uses them (8-slot FIFOs, LL 16-byte
 * lines, LL128 128-byte lines, Simple slices with step counters), bounded spin loops, and the
 * generic prim call that the protocol tests and the XML executor share. */
#ifndef CS_HARNESS_PROTO_CUH
#define CS_HARNESS_PROTO_CUH

#include <stdint.h>

#include "proto.h"

/* Threads per CTA of the protocol kernels: 640 for LL and LL128, as the executor launches them
 * (runtime-audit.md 0, row 2); 512 for Simple. */
#define HX_MAX_NTHREADS 640
static inline int hx_nthreads(int proto)
{
    return proto == CS_PROTO_SIMPLE ? 512 : HX_MAX_NTHREADS;
}

/* The CSV's mech column for a protocol. */
static inline const char *hx_proto_mech(int proto)
{
    return proto == CS_PROTO_SIMPLE ? "simple" : proto == CS_PROTO_LL ? "ll" : "ll128";
}

/* Floats of data per LL128 line. */
#define HX_LL128_LINE_FLOATS (CS_LL128_LINE_DATA_BYTES / (int)sizeof(float))

/* One directed connection. head is written by the receiver only, tail by the sender only; each
 * sits on its own 128-byte line. The FIFO lives in the receiver's memory. The step counters are
 * the count of FIFO steps each side has used since the connection was reset. */
struct hx_conn {
    volatile unsigned long long head; /* steps the receiver has freed */
    char pad0[120];
    volatile unsigned long long tail; /* steps the sender has filled (Simple) */
    char pad1[120];
    unsigned long long send_step, recv_step; /* persisted by the owning tb at kernel end */
    char *fifo;                              /* CS_NCCL_STEPS slots of slot_bytes */
    long long slot_bytes;
};

/* Spin-loop control: every wait gives up after timeout_ns and raises *abort, which makes every
 * other wait on the device give up too, so a deadlock ends the kernel instead of hanging it. */
struct hx_ctl {
    int *abort;
    unsigned long long timeout_ns;
};

__device__ __forceinline__ unsigned long long hx_gtimer(void)
{
    unsigned long long t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ int hx_aborted(const hx_ctl &ctl)
{
    return *(volatile int *)ctl.abort != 0;
}

/* Whether a poll loop at its n-th try, begun at *t0, should give up: checked every 1024 tries,
 * after timeout_ns or once another wait on the device gave up. Raises the abort flag when so. */
__device__ __forceinline__ int hx_give_up(unsigned n, unsigned long long *t0, const hx_ctl &ctl)
{
    unsigned long long t;

    if ((n & 1023) != 0)
        return 0;
    t = hx_gtimer();
    if (n == 0) {
        *t0 = t;
        return 0;
    }
    if (t - *t0 <= ctl.timeout_ns && !hx_aborted(ctl))
        return 0;
    atomicExch(ctl.abort, 1);
    __threadfence_system();
    return 1;
}

/* One thread waits until *p >= v. 1 when reached, 0 after a timeout or abort. */
__device__ __forceinline__ int hx_spin_ge(const volatile unsigned long long *p,
                                          unsigned long long v, const hx_ctl &ctl)
{
    unsigned long long t0 = 0;

    for (unsigned n = 0; *p < v; n++)
        if (hx_give_up(n, &t0, ctl))
            return 0;
    return 1;
}

/* Block-wide: thread 0's v, in every thread. `flag` is a __shared__ int owned by the caller. */
__device__ __forceinline__ int hx_bcast(int v, volatile int *flag)
{
    if (threadIdx.x == 0)
        *flag = v;
    __syncthreads();
    v = *flag;
    __syncthreads();
    return v;
}

/* Block-wide: thread 0 waits until *p >= v, then acquires (fence) and the block proceeds. Every
 * thread returns the same answer. */
__device__ __forceinline__ int hx_block_wait_ge(const volatile unsigned long long *p,
                                                unsigned long long v, const hx_ctl &ctl,
                                                volatile int *flag)
{
    int ok = 0;

    if (threadIdx.x == 0) {
        ok = hx_spin_ge(p, v, ctl);
        __threadfence();
    }
    return hx_bcast(ok, flag);
}

/* Block-wide: did any wait on the device give up? Same answer in every thread. */
__device__ __forceinline__ int hx_block_aborted(const hx_ctl &ctl, volatile int *flag)
{
    __syncthreads();
    return hx_bcast(threadIdx.x == 0 && hx_aborted(ctl), flag);
}

/* Loads that bypass L1: FIFO slots and buffers are rewritten by other SMs or GPUs. */
__device__ __forceinline__ float hx_ld(const float *p)
{
    return __ldcg(p);
}

__device__ __forceinline__ float4 hx_add4(float4 a, float4 b)
{
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

/* What a prim call does with its operands (MSCCL step types that use a connection). */
struct hx_op {
    const float *src; /* local operand: sent (s), or reduced with what arrives (rrc, rrs, rrcs) */
    float *dst;       /* local result (r, rcs, rrc, rrcs), or NULL */
    hx_conn *rc;      /* receive connection, or NULL */
    hx_conn *sc;      /* send connection, or NULL */
    long n;           /* elements (floats) */
};

/* The value of element i of a call: received (plus src when reducing) or src. `in` is what
 * arrived for it (ignored when nothing is received). */
__device__ __forceinline__ float hx_value(const hx_op &op, long i, float in)
{
    if (op.rc == NULL)
        return hx_ld(op.src + i);
    return op.src ? in + hx_ld(op.src + i) : in;
}

/* Find the FIFO slots of a use of k steps: wait for the slot to read (Simple only: LL and LL128
 * poll the flags in the lines instead) and for a free slot to write. 0 when a wait gave up. */
template <typename T>
static __device__ int hx_slots(const hx_op &op, unsigned long long sstep, unsigned long long rstep,
                               int k, const hx_ctl &ctl, volatile int *flag, const T **in, T **out)
{
    if (op.rc) {
        if (k > 1 && !hx_block_wait_ge(&op.rc->tail, rstep + k, ctl, flag))
            return 0;
        *in = (const T *)(op.rc->fifo + (rstep % CS_NCCL_STEPS) * op.rc->slot_bytes);
    }
    if (op.sc) {
        /* Space for k more steps: head + 8 >= sstep + k. */
        if (sstep + k > CS_NCCL_STEPS &&
            !hx_block_wait_ge(&op.sc->head, sstep + k - CS_NCCL_STEPS, ctl, flag))
            return 0;
        *out = (T *)(op.sc->fifo + (sstep % CS_NCCL_STEPS) * op.sc->slot_bytes);
    }
    return 1;
}

/* After a use of k steps: the sender posts tail (Simple, k > 1) after a system fence, the
 * receiver hands the slot back; both sides count the steps. */
static __device__ void hx_post(const hx_op &op, unsigned long long &sstep,
                               unsigned long long &rstep, int k)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        if (op.sc && k > 1) {
            __threadfence_system(); /* data before the step counter, also across the link */
            op.sc->tail = sstep + k;
        }
        if (op.rc) {
            __threadfence(); /* reads of the slot are done before it is handed back */
            op.rc->head = rstep + k;
        }
    }
    if (op.sc)
        sstep += k;
    if (op.rc)
        rstep += k;
}

/* ---- Simple: two slices per call, each filling CS_SIMPLE_STEPS_PER_SLICE FIFO steps
 * (prims_simple.h). ---- */
static_assert(CS_SIMPLE_SLICES_PER_CALL == 2, "hx_prim_simple splits a call in two halves");
static_assert(CS_SIMPLE_STEPS_PER_SLICE > 1, "hx_slots and hx_post tell Simple by k > 1");

static __device__ int hx_prim_simple(const hx_op &op, unsigned long long &sstep,
                                     unsigned long long &rstep, const hx_ctl &ctl,
                                     volatile int *flag)
{
    long half = (op.n + 1) / 2;
    long s0 = (half + 3) / 4 * 4;

    if (s0 > op.n)
        s0 = op.n;
    for (int slice = 0; slice < CS_SIMPLE_SLICES_PER_CALL; slice++) {
        long lo = slice == 0 ? 0 : s0, hi = slice == 0 ? s0 : op.n;
        const float *in = NULL;
        float *out = NULL;

        if (!hx_slots(op, sstep, rstep, CS_SIMPLE_STEPS_PER_SLICE, ctl, flag, &in, &out))
            return 0;
        /* 16-byte vectors where every operand is aligned (NCCL moves Simple data in 16-byte
         * units too), then the remainder element by element. */
        const float *sp = op.src ? op.src + lo : NULL;
        float *dp = op.dst ? op.dst + lo : NULL;
        long len = hi - lo;
        int vec = (((uintptr_t)sp | (uintptr_t)dp | (uintptr_t)in | (uintptr_t)out) & 15) == 0;
        long n4 = vec ? len / 4 : 0;

        for (long q = threadIdx.x; q < n4; q += blockDim.x) {
            float4 v;

            if (in) {
                v = __ldcg((const float4 *)in + q);
                if (sp)
                    v = hx_add4(v, __ldcg((const float4 *)sp + q));
            } else {
                v = __ldcg((const float4 *)sp + q);
            }
            if (dp)
                ((float4 *)dp)[q] = v;
            if (out)
                ((float4 *)out)[q] = v;
        }
        for (long i = n4 * 4 + threadIdx.x; i < len; i += blockDim.x) {
            float v = hx_value(op, lo + i, in ? hx_ld(in + i) : 0.0f);

            if (dp)
                dp[i] = v;
            if (out)
                out[i] = v;
        }
        hx_post(op, sstep, rstep, CS_SIMPLE_STEPS_PER_SLICE);
    }
    return 1;
}

/* ---- LL and LL128 take one FIFO step per call (prims_ll.h, prims_ll128.h); a call ends with a
 * block-wide check that no wait on the device gave up. ---- */

/* ---- LL: 16-byte lines {data0, flag, data1, flag} stored and polled with one volatile 16-byte
 * access; the flag is the call's step number + 1 (prims_ll.h). One FIFO step per call. ---- */
__device__ __forceinline__ void hx_ll_store(uint4 *p, unsigned d0, unsigned d1, unsigned f)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(d0), "r"(f),
                 "r"(d1), "r"(f)
                 : "memory");
}

__device__ __forceinline__ uint4 hx_ll_load(const uint4 *p)
{
    uint4 v;

    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

static __device__ int hx_prim_ll(const hx_op &op, unsigned long long &sstep,
                                 unsigned long long &rstep, const hx_ctl &ctl, volatile int *flag)
{
    long nlines = (op.n + 1) / 2;
    const uint4 *in = NULL;
    uint4 *out = NULL;
    unsigned rflag = (unsigned)(rstep + 1), sflag = (unsigned)(sstep + 1);
    int timed_out = 0;

    if (!hx_slots(op, sstep, rstep, 1, ctl, flag, &in, &out))
        return 0;
    for (long l = threadIdx.x; l < nlines && !timed_out; l += blockDim.x) {
        long i = 2 * l;
        float a = 0.0f, b = 0.0f;

        if (in) {
            uint4 v;
            unsigned long long t0 = 0;

            for (unsigned n = 0;; n++) {
                v = hx_ll_load(in + l);
                if (v.y == rflag && v.w == rflag)
                    break;
                if (hx_give_up(n, &t0, ctl)) {
                    timed_out = 1;
                    break;
                }
            }
            if (timed_out)
                break;
            a = __uint_as_float(v.x);
            b = __uint_as_float(v.z);
        }
        a = hx_value(op, i, a);
        if (i + 1 < op.n)
            b = hx_value(op, i + 1, b);
        if (op.dst) {
            op.dst[i] = a;
            if (i + 1 < op.n)
                op.dst[i + 1] = b;
        }
        if (out)
            hx_ll_store(out + l, __float_as_uint(a), __float_as_uint(b), sflag);
    }
    hx_post(op, sstep, rstep, 1);
    return !hx_block_aborted(ctl, flag);
}

/* ---- LL128: 128-byte lines of 16 u64, written by 8 threads with one 16-byte volatile store
 * each; u64 15 (thread 7's second) is the flag, the other 15 carry 30 floats. Like NCCL, this
 * relies on a warp's 128-byte line store being seen whole by a 128-byte warp load (true for
 * local memory and NVLink, which is where NCCL enables LL128); every sample's data check is what
 * catches a torn line. One FIFO step per call. ---- */
__device__ __forceinline__ void hx_ll128_store(unsigned long long *p, unsigned long long a,
                                               unsigned long long b)
{
    asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}

__device__ __forceinline__ void hx_ll128_load(const unsigned long long *p, unsigned long long &a,
                                              unsigned long long &b)
{
    asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ unsigned long long hx_pack(float lo, float hi)
{
    return (unsigned long long)__float_as_uint(lo) |
           ((unsigned long long)__float_as_uint(hi) << 32);
}

static __device__ int hx_prim_ll128(const hx_op &op, unsigned long long &sstep,
                                    unsigned long long &rstep, const hx_ctl &ctl,
                                    volatile int *flag)
{
    long nlines = (op.n + HX_LL128_LINE_FLOATS - 1) / HX_LL128_LINE_FLOATS;
    const unsigned long long *in = NULL;
    unsigned long long *out = NULL;
    unsigned long long rflag = rstep + 1, sflag = sstep + 1;
    int lane = threadIdx.x & 31, j = lane & 7; /* thread j of the 8 that own a line */
    int nwarps = blockDim.x / 32, warp = threadIdx.x / 32;
    int timed_out = 0;

    if (!hx_slots(op, sstep, rstep, 1, ctl, flag, &in, &out))
        return 0;
    /* Whole warps iterate together (warp votes below); a warp handles 4 lines per round. */
    for (long base = (long)warp * 4; base < nlines && !timed_out; base += (long)nwarps * 4) {
        long line = base + lane / 8;
        int active = line < nlines;
        unsigned long long a = 0, b = 0;
        /* Floats of this thread: u64 2j and 2j+1 of the line, i.e. floats 4j..4j+3, except that
         * thread 7's second u64 is the flag (floats 28, 29 are its first u64). */
        long f0 = line * HX_LL128_LINE_FLOATS + 4 * j;
        int nf = j == 7 ? 2 : 4;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};

        if (in) {
            unsigned long long t0 = 0;

            for (unsigned n = 0;; n++) {
                int ok = 1;

                if (active) {
                    hx_ll128_load(in + line * 16 + 2 * j, a, b);
                    ok = j != 7 || b == rflag;
                }
                if (__all_sync(0xffffffffu, ok))
                    break;
                if (__any_sync(0xffffffffu, hx_give_up(n, &t0, ctl))) {
                    timed_out = 1;
                    break;
                }
            }
            if (timed_out)
                break;
            v[0] = __uint_as_float((unsigned)a);
            v[1] = __uint_as_float((unsigned)(a >> 32));
            v[2] = __uint_as_float((unsigned)b);
            v[3] = __uint_as_float((unsigned)(b >> 32));
        }
        if (active) {
            for (int k = 0; k < nf; k++)
                if (f0 + k < op.n) {
                    v[k] = hx_value(op, f0 + k, v[k]);
                    if (op.dst)
                        op.dst[f0 + k] = v[k];
                } else {
                    v[k] = 0.0f;
                }
            if (out)
                hx_ll128_store(out + line * 16 + 2 * j, hx_pack(v[0], v[1]),
                               j == 7 ? sflag : hx_pack(v[2], v[3]));
        }
    }
    hx_post(op, sstep, rstep, 1);
    return !hx_block_aborted(ctl, flag);
}

/* One prim call of protocol proto. 1 when done, 0 when a wait gave up. All threads of the block
 * must call it with the same arguments. */
__device__ __forceinline__ int hx_prim(int proto, const hx_op &op, unsigned long long &sstep,
                                       unsigned long long &rstep, const hx_ctl &ctl,
                                       volatile int *flag)
{
    if (proto == CS_PROTO_SIMPLE)
        return hx_prim_simple(op, sstep, rstep, ctl, flag);
    if (proto == CS_PROTO_LL)
        return hx_prim_ll(op, sstep, rstep, ctl, flag);
    return hx_prim_ll128(op, sstep, rstep, ctl, flag);
}

#endif
