/* main.cu: collsim-harness, the CUDA calibration harness: options, device discovery, the run. */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "parse.h"

static const char usage_text[] =
    "usage: collsim-harness [--quick] [OPTIONS]\n"
    "\n"
    "Measure the GPUs of this machine for collsim's timing model and write one CSV row per sample\n"
    "(calibration.md 3.3) to OUTDIR/calib-HOST-UTC.csv; `collsim calibrate fit` reads it.\n"
    "\n"
    "Tests (calibration.md 3.2):\n"
    "  env     T0 devices, clocks, peer access: the CSV's '#' lines (always runs)\n"
    "  launch  T1 kernel launch overhead: back-to-back, isolated, CUDA graph, parameter bytes\n"
    "  timer   T2 event resolution, %globaltimer tick, event time of fixed spins\n"
    "  mem     T3 HBM copy (copy engine) and per-CTA copy and k-input reduce throughput\n"
    "  proto   T4 LL, LL128 and Simple FIFOs of 8 slots between producer and consumer CTAs\n"
    "  p2p     T5/T6 per GPU pair: bandwidth, flag ping-pong latency, protocol kernels over\n"
    "          the link (needs two or more GPUs with peer access)\n"
    "  exec    T9 MSCCL XML executor: one CTA per <tb>; on one GPU the ranks are virtual; the\n"
    "          output is checked against the collective's reference; per-size times are printed\n"
    "          and written to OUTDIR/exec-NAME.csv in `collsim predict`'s CSV columns\n"
    "\n"
    "Options:\n"
    "  --quick              all single-GPU tests and the executor on a few schedules, designed to\n"
    "                       take under 3 minutes on one H200 (time limit 400 s)\n"
    "  --tests LIST         comma-separated tests to run (default: all)\n"
    "  --xml FILE           schedule for the executor (repeatable; default: six small reference\n"
    "                       XMLs from the source tree's tests/data/msccl-xml/, the published\n"
    "                       (wrong) hierarchical seed among them)\n"
    "  --exec-sizes MIN:MAX executor sizes in bytes (units K, M, G as in collsim), all ranks'\n"
    "                       data (default 4096:16777216 quick, 1024:268435456 otherwise)\n"
    "  --trace-size BYTES   executor: run the size BYTES rounds down to once more with per-step\n"
    "                       %globaltimer stamps (each threadblock's wait and calls per step, a\n"
    "                       block barrier after each step in that run only) and write them as\n"
    "                       OUTDIR/exec-NAME-SIZE.trace.json, the layout of `collsim predict\n"
    "                       --trace`, for `collsim tracediff` (default 1M with --quick, else\n"
    "                       none; 0 for none)\n"
    "  --virtual-ranks      executor: all ranks on GPU 0 even when there is one GPU per rank (by\n"
    "                       default a schedule runs one rank per GPU when there are enough GPUs\n"
    "                       with peer access, and as virtual ranks on GPU 0 otherwise)\n"
    "  --samples N          samples per point after a warm-up (default 5)\n"
    "  --time-limit S       stop starting new points after S seconds (default 400 quick, 3600)\n"
    "  --spin-timeout S     bound of every device wait, seconds (default 2); a schedule that\n"
    "                       deadlocks reports status timeout at that size\n"
    "  --gpus N             use at most N GPUs\n"
    "  --seed N             order of the points (default 1)\n"
    "  -o, --outdir DIR     where the CSVs go (default: .)\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit status: 0 all samples ok (or, for the executor, deadlock / wrong_schedule where the CPU\n"
    "emulation of the same plan agrees); 1 some sample failed its data check, timed out, or did\n"
    "not fit; 2 usage error; 77 no usable CUDA device (test suites treat that as a skip).\n";

double hx_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int hx_time_left(hx_ctx *c)
{
    if (hx_now_s() - c->t0_s < c->o->time_limit_s)
        return 1;
    c->skipped++;
    return 0;
}

/* Whether the comma-separated list holds the name of n characters. */
static int in_list(const char *list, const char *name, size_t n)
{
    for (const char *p = list;; p++) {
        size_t l = strcspn(p, ",");

        if (l == n && strncmp(p, name, n) == 0)
            return 1;
        p += l;
        if (*p == '\0')
            return 0;
    }
}

void hx_emit(hx_ctx *c, const char *test, const char *mech, const char *op, int src, int dst,
             int concurrent, int nblocks, int nthreads, long long chunk_bytes, long long bytes,
             long long ops, int sample, double time_s, int sm_mhz, const char *status)
{
    hx_row r = {test,        mech,  op,  src,    dst,    concurrent, nblocks, nthreads,
                chunk_bytes, bytes, ops, sample, time_s, sm_mhz,     status};

    hx_csv_row(&c->csv, &r);
    /* deadlock and wrong_schedule describe the schedule (the CPU emulation agrees), not a fault. */
    if (strcmp(status, "ok") != 0 && strcmp(status, "deadlock") != 0 &&
        strcmp(status, "wrong_schedule") != 0)
        c->failures++;
}

unsigned hx_rand(hx_ctx *c)
{
    /* xorshift32 */
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 17;
    c->rng ^= c->rng << 5;
    return c->rng;
}

int hx_cuda_fail(cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "collsim-harness: %s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
    return 1;
}

int hx_abort_clear(hx_ctx *c, int dev)
{
    if (HX_CK(cudaSetDevice(dev)) || HX_CK(cudaMemset(c->d_abort[dev], 0, sizeof(int))))
        return -1;
    return HX_CK(cudaDeviceSynchronize()) ? -1 : 0;
}

int hx_abort_read(hx_ctx *c, int dev)
{
    int ab = 0;

    if (HX_CK(cudaSetDevice(dev)) ||
        HX_CK(cudaMemcpy(&ab, c->d_abort[dev], sizeof(int), cudaMemcpyDeviceToHost)))
        return -1;
    return ab != 0;
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "collsim-harness: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    fprintf(stderr, "Try 'collsim-harness --help'.\n");
    return HX_EXIT_USAGE;
}

/* Whether every name of the comma-separated list is a test. */
static int known_tests(const char *list)
{
    for (const char *p = list; *p; p++) {
        size_t n = strcspn(p, ",");

        if (!in_list("env,launch,timer,mem,proto,p2p,exec", p, n))
            return 0;
        p += n;
        if (*p == '\0')
            break;
    }
    return 1;
}

/* --exec-sizes MIN:MAX, each a byte size (units K, M, G as collsim reads them). */
static int parse_sizes(const char *arg, hx_opts *o)
{
    char buf[64], *colon;

    snprintf(buf, sizeof(buf), "%s", arg);
    colon = strchr(buf, ':');
    if (colon == NULL)
        return usage_error("--exec-sizes wants MIN:MAX", arg);
    *colon = '\0';
    if (cs_parse_size(buf, 1, LLONG_MAX, &o->exec_min_bytes) != 0 ||
        cs_parse_size(colon + 1, o->exec_min_bytes, LLONG_MAX, &o->exec_max_bytes) != 0)
        return usage_error("invalid --exec-sizes (MIN:MAX bytes, 1 <= MIN <= MAX)", arg);
    return 0;
}

/* One option and its value into *o. -1 to go on, or the exit status (--help, usage error). */
static int take_option(int opt, const char *arg, hx_opts *o)
{
    long long seed;

    switch (opt) {
    case 'q':
        o->quick = 1;
        break;
    case 't':
        if (!known_tests(arg))
            return usage_error("unknown test in --tests", arg);
        o->tests = arg;
        break;
    case 'x':
        if (o->nxml >= HX_MAX_XML)
            return usage_error("too many --xml", NULL);
        o->xmls[o->nxml++] = arg;
        break;
    case 'S':
        if (parse_sizes(arg, o) != 0)
            return HX_EXIT_USAGE;
        break;
    case 'V':
        o->exec_multi = 0;
        break;
    case 'R':
        if (cs_parse_size(arg, 0, LLONG_MAX, &o->trace_bytes) != 0)
            return usage_error("invalid --trace-size (bytes, K, M, G)", arg);
        o->trace_set = 1;
        break;
    case 'n':
        if (cs_parse_int(arg, 1, 60, &o->samples) != 0)
            return usage_error("--samples wants 1..60", arg);
        break;
    case 'L':
        if (cs_parse_double(arg, DBL_MIN, DBL_MAX, &o->time_limit_s) != 0)
            return usage_error("invalid --time-limit", arg);
        break;
    case 'T':
        if (cs_parse_double(arg, DBL_MIN, 600, &o->spin_timeout_s) != 0)
            return usage_error("--spin-timeout wants (0, 600] seconds", arg);
        break;
    case 'g':
        if (cs_parse_int(arg, 1, INT_MAX, &o->max_gpus) != 0)
            return usage_error("invalid --gpus", arg);
        break;
    case 's':
        if (cs_parse_ll(arg, 1, 0xffffffffll, &seed) != 0)
            return usage_error("invalid --seed", arg);
        o->seed = (unsigned)seed;
        break;
    case 'o':
        o->outdir = arg;
        break;
    case 'h':
        fputs(usage_text, stdout);
        return HX_EXIT_OK;
    default:
        return usage_error("invalid option", NULL);
    }
    return -1;
}

/* The options into *o, defaults included. -1 to run, or the exit status (--help, usage error). */
static int parse_options(int argc, char **argv, hx_opts *o)
{
    static const struct option longopts[] = {{"quick", no_argument, NULL, 'q'},
                                             {"tests", required_argument, NULL, 't'},
                                             {"xml", required_argument, NULL, 'x'},
                                             {"exec-sizes", required_argument, NULL, 'S'},
                                             {"virtual-ranks", no_argument, NULL, 'V'},
                                             {"trace-size", required_argument, NULL, 'R'},
                                             {"samples", required_argument, NULL, 'n'},
                                             {"time-limit", required_argument, NULL, 'L'},
                                             {"spin-timeout", required_argument, NULL, 'T'},
                                             {"gpus", required_argument, NULL, 'g'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"outdir", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int opt, rc;
    struct stat st;

    memset(o, 0, sizeof(*o));
    o->samples = 5;
    o->exec_multi = 1;
    o->spin_timeout_s = 2.0;
    o->seed = 1;
    o->outdir = ".";
    while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1)
        if ((rc = take_option(opt, optarg, o)) >= 0)
            return rc;
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    if (o->exec_max_bytes == 0) {
        o->exec_min_bytes = o->quick ? 4096 : 1024;
        o->exec_max_bytes = o->quick ? (16ll << 20) : (256ll << 20);
    }
    if (o->time_limit_s == 0)
        o->time_limit_s = o->quick ? 400 : 3600;
    if (!o->trace_set && o->quick)
        o->trace_bytes = 1ll << 20;
    if (stat(o->outdir, &st) != 0 || !S_ISDIR(st.st_mode))
        return usage_error("output directory does not exist", o->outdir);
    return -1;
}

/* The devices (at most --gpus), their SM counts and abort flags, peer access between all pairs.
 * HX_EXIT_NODEV after a message when there is no usable device, else 0. */
static int open_devices(hx_ctx *c, hx_opts *o)
{
    int ndev = 0, peer_all = 1;
    cudaError_t e = cudaGetDeviceCount(&ndev);

    if (e != cudaSuccess || ndev == 0) {
        fprintf(stderr, "collsim-harness: no CUDA device: %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0");
        return HX_EXIT_NODEV;
    }
    if (o->max_gpus > 0 && ndev > o->max_gpus)
        ndev = o->max_gpus;
    if (ndev > HX_MAX_DEV)
        ndev = HX_MAX_DEV;
    c->ndev = ndev;
    for (int dv = 0; dv < ndev; dv++) {
        if (HX_CK(cudaSetDevice(dv)) ||
            HX_CK(cudaDeviceGetAttribute(&c->nsm[dv], cudaDevAttrMultiProcessorCount, dv)) ||
            HX_CK(cudaMalloc((void **)&c->d_abort[dv], sizeof(int))))
            return HX_EXIT_NODEV;
        for (int p = 0; p < ndev; p++) {
            int acc = 0;

            if (p == dv)
                continue;
            cudaDeviceCanAccessPeer(&acc, dv, p);
            c->peer[dv][p] = acc;
            if (acc) {
                cudaError_t pe = cudaDeviceEnablePeerAccess(p, 0);

                acc = pe == cudaSuccess || pe == cudaErrorPeerAccessAlreadyEnabled;
                cudaGetLastError();
            }
            peer_all &= acc;
        }
    }
    if (o->exec_multi && ndev > 1 && !peer_all) {
        fprintf(stderr, "collsim-harness: not every GPU pair has peer access: the executor uses "
                        "virtual ranks\n");
        o->exec_multi = 0;
    }
    return 0;
}

/* OUTDIR/calib-HOST-UTC.csv, the host name reduced to [A-Za-z0-9-]. */
static void csv_path(const hx_opts *o, char *path, size_t len)
{
    char host[128] = "host", stamp[32];
    time_t now = time(NULL);

    gethostname(host, sizeof(host) - 1);
    for (char *p = host; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-'))
            *p = '_';
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(path, len, "%s/calib-%s-%s.csv", o->outdir, host, stamp);
}

/* The selected tests after env, in order; -1 when one stops on a CUDA error. */
static int run_tests(hx_ctx *c)
{
    static const struct {
        const char *name;
        int (*fn)(hx_ctx *);
    } tests[] = {{"launch", hx_launch}, {"timer", hx_timer}, {"mem", hx_mem},
                 {"proto", hx_proto},   {"p2p", hx_p2p},     {"exec", hx_exec}};

    if (hx_env(c) != 0)
        return -1;
    hx_csv_header(&c->csv);
    for (size_t k = 0; k < sizeof(tests) / sizeof(tests[0]); k++) {
        double t0 = hx_now_s();

        if (c->o->tests && !in_list(c->o->tests, tests[k].name, strlen(tests[k].name)))
            continue;
        if (tests[k].fn(c) != 0)
            return -1;
        printf("# %s: %.1f s, %ld rows so far\n", tests[k].name, hx_now_s() - t0, c->csv.rows);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    hx_opts o;
    hx_ctx c;
    int rc = parse_options(argc, argv, &o);
    char path[4096];

    if (rc >= 0)
        return rc;
    memset(&c, 0, sizeof(c));
    c.o = &o;
    if ((rc = open_devices(&c, &o)) != 0)
        return rc;
    c.rng = o.seed;
    c.t0_s = hx_now_s();
    csv_path(&o, path, sizeof(path));
    if (hx_csv_open(&c.csv, path) != 0) {
        fprintf(stderr, "collsim-harness: cannot create %s: %s\n", path, strerror(errno));
        return HX_EXIT_USAGE;
    }
    printf("# collsim-harness %s: %d GPU(s), writing %s\n", o.quick ? "--quick" : "(full)", c.ndev,
           path);
    rc = run_tests(&c);
    hx_csv_comment(&c.csv,
                   "end rows=%ld failures=%ld skipped_points=%ld elapsed_s=%.1f sm_mhz_now=%d",
                   c.csv.rows, c.failures, c.skipped, hx_now_s() - c.t0_s, hx_sm_mhz(0));
    if (hx_csv_close(&c.csv) != 0) {
        fprintf(stderr, "collsim-harness: write error on %s\n", path);
        rc = -1;
    }
    printf("# done: %ld rows, %ld not ok, %ld points skipped by the time limit, %.1f s\n",
           c.csv.rows, c.failures, c.skipped, hx_now_s() - c.t0_s);
    if (rc != 0) {
        fprintf(stderr, "collsim-harness: stopped by a CUDA error (see above)\n");
        return HX_EXIT_FAILED;
    }
    return c.failures ? HX_EXIT_FAILED : HX_EXIT_OK;
}
