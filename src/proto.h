/* proto.h: the MSCCL executor's protocol table, each number written once; plain C, included by the
 * replay's plan, the CPU emulation and the CUDA harness alike. */
#ifndef CS_PROTO_H
#define CS_PROTO_H

/* Sources: executor = Azure/msccl-executor-nccl @ c6f6b36, as read in the shared reference
 * runtime-audit.md section 1 and msccl.md sections 3.1 and 3.2. */

#ifdef __CUDACC__
#define CS_HOST_DEVICE __host__ __device__
#else
#define CS_HOST_DEVICE
#endif

enum cs_proto {
    CS_PROTO_LL = 1,
    CS_PROTO_LL128,
    CS_PROTO_SIMPLE,
};

/* FIFO slots per connection: NCCL_STEPS (executor src/include/device.h:27). */
#define CS_NCCL_STEPS 8
/* A network connection holds more: the sender's slots come back when the network send is done
 * (executor src/transport/net.cc:1109,1118,1287-1297), and the receiver's proxy posts receives
 * up to maxDepth = min(NCCL_STEPS, 16 / nsubs) ahead of what its GPU consumed (:1373,1384); one
 * sub per MSCCL connection, so NCCL_STEPS more units in flight. */
#define CS_NET_PROXY_DEPTH 8
/* cnt < MSCCL_MAX_COUNT; maxAllowedCount is clamped to [1, MSCCL_MAX_COUNT - 1]
 * (executor src/misc/msccl/msccl_setup.cc:55-62). */
#define CS_MAX_CNT 72
#define CS_MAX_ALLOWED_COUNT (CS_MAX_CNT - 1)
/* Consecutive re the parser fuses into one transmission: MSCCL_MAX_REDUCE_FUSION
 * (executor src/misc/msccl/msccl_parser.cc:636-643). */
#define CS_MAX_REDUCE_FUSION 16
/* Flags: COMPUTE_FLAG(work, iter, step) = (work x MSCCL_MAX_ITER + iter) x steps + step
 * (executor src/device/msccl_kernel.cu:24-25), so flags compare as (launch, iteration, step).
 * More iterations than MSCCL_MAX_ITER alias the next launch: collsim refuses them. A flag here
 * has room for 256 steps, the legacy runtime's limit (the executor's is 64). */
#define CS_FLAG_ITERS 65536
#define CS_FLAG_STEPS 256
#define CS_MAX_ITERATIONS (CS_FLAG_ITERS - 1)

/* The flag a tb publishes after step `step` of iteration iter of launch work. */
static inline CS_HOST_DEVICE unsigned long long cs_proto_flag(unsigned work, int iter, int step)
{
    return ((unsigned long long)work * CS_FLAG_ITERS + (unsigned)iter) * CS_FLAG_STEPS +
           (unsigned)step;
}

/* Line layouts (executor src/include/device.h): an LL line is 16 B, two 4-B data words each with
 * its flag word; an LL128 line is 128 B of which 8 B are flag. */
#define CS_LL_LINE_BYTES 16
#define CS_LL_LINE_DATA_BYTES 8
#define CS_LL128_LINE_BYTES 128
#define CS_LL128_LINE_DATA_BYTES 120

/* Default buffers (executor src/init.cc:614-633): Simple 4 MiB; LL 8 lines per thread x 512
 * threads x 8 steps of 16-B lines (512 KiB); LL128 120 u64 per thread x 640 threads x 8 steps
 * (4,915,200 B). */
#define CS_BUFF_BYTES_SIMPLE (4L * 1024 * 1024)
#define CS_BUFF_BYTES_LL (8L * 512 * CS_NCCL_STEPS * CS_LL_LINE_BYTES)
#define CS_BUFF_BYTES_LL128 (120L * 640 * CS_NCCL_STEPS * 8)

/* Threads of a CTA: NCCL's LL kernels run NCCL_LL_MAX_NTHREADS (512, device.h), the MSCCL
 * executor launches 640 for LL and LL128 and 544 for Simple, 512 of them moving data
 * (msccl_setup.cc:457-465; runtime-audit.md 3). */
#define CS_NCCL_LL_THREADS 512
#define CS_MSCCL_LL_THREADS 640

/* NCCL's own ring kernels cut a loop of fewer elements than a full one into chunks of
 * ceil(count / chunks) rounded up to 16 bytes (all_reduce.h runRing: alignUp(divUp(remCount,
 * nranks), 16 / sizeof(T))), the chunks past the count empty: at 8 B on 8 ranks one chunk has
 * the data and seven none. */
#define CS_NCCL_CHUNK_ALIGN 16

/* Simple calls: ProtoSimple<2,2>, 2 slices of 2 steps each (executor msccl_kernel.cu:332); a loop
 * chunk is MSCCL_CHUNKSTEPS steps (:181); slices are multiples of 16 elements and at least
 * stepSize x SLICESTEPS / 32 (prims_simple.h:211-212). */
#define CS_SIMPLE_SLICES_PER_CALL 2
#define CS_SIMPLE_STEPS_PER_SLICE 2
#define CS_SIMPLE_CHUNK_STEPS 4
#define CS_SIMPLE_SLICE_ALIGN 16

/* FIFO bytes of one step: buffSize / NCCL_STEPS (msccl_setup.cc:44-64). */
static inline CS_HOST_DEVICE long cs_proto_step_bytes(int proto)
{
    return (proto == CS_PROTO_SIMPLE ? CS_BUFF_BYTES_SIMPLE
            : proto == CS_PROTO_LL   ? CS_BUFF_BYTES_LL
                                     : CS_BUFF_BYTES_LL128) /
           CS_NCCL_STEPS;
}

/* Data bytes per MSCCL chunk per loop iteration (calcBytePerStep, primitives.h:34-66): Simple 4
 * steps (2 MiB), LL the data half of a step (32 KiB), LL128 120/128 of a step (576,000 B). */
static inline CS_HOST_DEVICE long cs_proto_loop_bytes(int proto)
{
    long step = cs_proto_step_bytes(proto);

    if (proto == CS_PROTO_SIMPLE)
        return step * CS_SIMPLE_CHUNK_STEPS;
    if (proto == CS_PROTO_LL)
        return step / CS_LL_LINE_BYTES * CS_LL_LINE_DATA_BYTES;
    return step / CS_LL128_LINE_BYTES * CS_LL128_LINE_DATA_BYTES;
}

/* FIFO slots one prim call takes (runtime-audit.md 2.1): Simple 4, LL and LL128 1. */
static inline CS_HOST_DEVICE int cs_proto_slots_per_call(int proto)
{
    return proto == CS_PROTO_SIMPLE ? CS_SIMPLE_SLICES_PER_CALL * CS_SIMPLE_STEPS_PER_SLICE : 1;
}

/* Transfer units of one call: the Simple slices, or the one LL/LL128 call. */
static inline CS_HOST_DEVICE int cs_proto_units_per_call(int proto)
{
    return proto == CS_PROTO_SIMPLE ? CS_SIMPLE_SLICES_PER_CALL : 1;
}

/* Smallest Simple slice in bytes: stepSize x SLICESTEPS / 32 (32 KiB). */
static inline CS_HOST_DEVICE long cs_proto_simple_min_slice_bytes(void)
{
    return cs_proto_step_bytes(CS_PROTO_SIMPLE) * CS_SIMPLE_STEPS_PER_SLICE / 32;
}

/* Bytes on the wire for data_bytes of payload: whole LL or LL128 lines; the data for Simple. */
static inline CS_HOST_DEVICE long long cs_proto_wire_bytes(int proto, long long data_bytes)
{
    if (proto == CS_PROTO_LL)
        return (data_bytes + CS_LL_LINE_DATA_BYTES - 1) / CS_LL_LINE_DATA_BYTES * CS_LL_LINE_BYTES;
    if (proto == CS_PROTO_LL128)
        return (data_bytes + CS_LL128_LINE_DATA_BYTES - 1) / CS_LL128_LINE_DATA_BYTES *
               CS_LL128_LINE_BYTES;
    return data_bytes;
}

/* Wire bytes per data byte: 2 for LL, 128/120 for LL128, 1 for Simple. */
static inline CS_HOST_DEVICE double cs_proto_wire_factor(int proto)
{
    if (proto == CS_PROTO_LL)
        return (double)CS_LL_LINE_BYTES / CS_LL_LINE_DATA_BYTES;
    if (proto == CS_PROTO_LL128)
        return (double)CS_LL128_LINE_BYTES / CS_LL128_LINE_DATA_BYTES;
    return 1.0;
}

/* maxAllowedCount: chunks per prim call, loop bytes / ceil(nBytes / nchunksperloop) clamped to
 * [1, 71] (msccl_setup.cc:55-62). */
static inline CS_HOST_DEVICE int cs_proto_max_allowed(long long loop_bytes, long long chunk_bytes)
{
    long long ma = loop_bytes / chunk_bytes;

    return (int)(ma < 1 ? 1 : ma > CS_MAX_ALLOWED_COUNT ? CS_MAX_ALLOWED_COUNT : ma);
}

/* Prim calls a step of cnt chunks issues per iteration: ceil(cnt / maxAllowedCount)
 * (msccl_kernel.cu:245-249). */
static inline CS_HOST_DEVICE int cs_proto_step_calls(int cnt, int max_allowed)
{
    return (cnt + max_allowed - 1) / max_allowed;
}

/* Elements per chunk that iteration iter moves: the loop chunk, or what is left of the MSCCL
 * chunk in the last iteration (msccl_kernel.cu:207-217). */
static inline CS_HOST_DEVICE long cs_proto_iter_elems(long chunk_elems, long loop_elems, int iter)
{
    long left = chunk_elems - (long)iter * loop_elems;

    return left < loop_elems ? left : loop_elems;
}

/* Call k of a step at chunk offset off with cnt chunks, in iteration iter: *start is its first
 * element (from the buffer start) and *len its element count, nelem x min(max_allowed, cnt - k x
 * max_allowed) (msccl_kernel.cu:245-249). Calls of several chunks happen only with one iteration,
 * where nelem is the whole chunk, so the region is contiguous. */
static inline CS_HOST_DEVICE void cs_proto_call_region(long chunk_elems, long loop_elems,
                                                       int max_allowed, int iter, int off, int cnt,
                                                       int k, long *start, long *len)
{
    long nelem = cs_proto_iter_elems(chunk_elems, loop_elems, iter);
    int nk = cnt - k * max_allowed < max_allowed ? cnt - k * max_allowed : max_allowed;

    *start = (long)(off + k * max_allowed) * chunk_elems + (long)iter * loop_elems;
    *len = nk > 0 ? (long)(nk - 1) * chunk_elems + nelem : 0;
}

#endif
