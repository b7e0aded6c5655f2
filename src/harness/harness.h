/* harness.h: what the calibration harness's translation units share (options, context, tests). */
#ifndef CS_HARNESS_H
#define CS_HARNESS_H

#include <cuda_runtime.h>

#include <utility>

#include "csvout.h"

/* Exit codes: 77 tells automake's test driver to skip (no GPU). */
enum {
    HX_EXIT_OK = 0,
    HX_EXIT_FAILED = 1, /* some sample failed its data check or timed out */
    HX_EXIT_USAGE = 2,
    HX_EXIT_NODEV = 77,
};

#define HX_MAX_XML 64
#define HX_MAX_DEV 16

struct hx_opts {
    int quick;
    int samples;           /* samples per point */
    double time_limit_s;   /* wall-clock budget; remaining points are skipped past it */
    double spin_timeout_s; /* bound of every device spin loop */
    unsigned seed;         /* order of points */
    int max_gpus;          /* 0: all */
    const char *outdir;
    const char *tests; /* comma list: env,launch,timer,mem,proto,p2p,exec */
    const char *xmls[HX_MAX_XML];
    int nxml;
    long long exec_min_bytes, exec_max_bytes;
    int exec_multi;        /* executor: one rank per GPU when there are enough GPUs (default) */
    long long trace_bytes; /* executor: the size run once more with per-step stamps (0: none) */
    int trace_set;         /* --trace-size given */
};

/* Run state shared by all tests. */
struct hx_ctx {
    const struct hx_opts *o;
    struct hx_csv csv;
    int ndev;
    int nsm[HX_MAX_DEV];
    double t0_s;                      /* wall clock at start */
    long failures;                    /* samples with a status other than ok */
    long skipped;                     /* points dropped by the time limit */
    int *d_abort[HX_MAX_DEV];         /* per device: set by a spin loop that timed out */
    int peer[HX_MAX_DEV][HX_MAX_DEV]; /* device i can access device j's memory */
    unsigned rng;
};

/* Host wall clock (monotonic), seconds. */
double hx_now_s(void);
/* Whether the time budget still allows another point. Counts a skip when it does not. */
int hx_time_left(struct hx_ctx *c);
/* The SM clock now on device dev, measured in a kernel (clock64 against %globaltimer), MHz. */
int hx_sm_mhz(int dev);
/* Write a row, its fields in struct hx_row's order, and count failures. */
void hx_emit(struct hx_ctx *c, const char *test, const char *mech, const char *op, int src, int dst,
             int concurrent, int nblocks, int nthreads, long long chunk_bytes, long long bytes,
             long long ops, int sample, double time_s, int sm_mhz, const char *status);
/* Pseudo-random numbers from the run's seed (the order of points). */
unsigned hx_rand(struct hx_ctx *c);
/* Shuffle n values with hx_rand. */
template <typename T> void hx_shuffle(struct hx_ctx *c, T *v, size_t n)
{
    for (size_t i = n; i > 1; i--)
        std::swap(v[i - 1], v[hx_rand(c) % i]);
}

/* Make dev current and clear its abort flag (synchronously). 0, or -1 on a CUDA error. */
int hx_abort_clear(struct hx_ctx *c, int dev);
/* Make dev the current device; whether a wait there gave up since the flag was cleared: 1, 0, or
 * -1 on a CUDA error. */
int hx_abort_read(struct hx_ctx *c, int dev);

/* Report a CUDA error with its call site and return nonzero. */
int hx_cuda_fail(cudaError_t e, const char *what, const char *file, int line);
#define HX_CK(call) hx_cuda_fail((call), #call, __FILE__, __LINE__)

/* The tests (tests.cu, exec.cu). Each returns 0, or nonzero on a CUDA error that stops the run. */
int hx_env(struct hx_ctx *c);
int hx_launch(struct hx_ctx *c);
int hx_timer(struct hx_ctx *c);
int hx_mem(struct hx_ctx *c);
int hx_proto(struct hx_ctx *c);
int hx_p2p(struct hx_ctx *c);
int hx_exec(struct hx_ctx *c);

#endif
