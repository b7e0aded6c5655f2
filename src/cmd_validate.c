/* cmd_validate.c: `collsim validate`: predictions against published measurements, per case.
 *
 * Each case predicts the measured sizes in process (cs_predict_run, once per protocol; the
 * replay forks its own simulating child per size), matches every measured size with its
 * prediction, and writes CASE.csv, CASE.svg (gnuplot, when installed), summary.md and
 * summary.csv (the numbers a baseline is compared with).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "fdio.h"
#include "gen.h"
#include "meas.h"
#include "nccl.h"
#include "params.h"
#include "parse.h"
#include "plan.h"
#include "platform.h"
#include "predict.h"
#include "progress.h"
#include "spawn.h"
#include "valid.h"

const char cmd_validate_usage[] =
    "usage: collsim validate CASES [-o DIR] [--baseline FILE] [--tolerance FRACTION]\n"
    "                        [--before FILE] [--quiet]\n"
    "\n"
    "Compare predictions with published measurements. CASES has one case per line (# starts\n"
    "a comment; `#: NAME: text` after a case adds a note to its section of the summary):\n"
    "  NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL [OPTION=VALUE...]\n"
    "MEASUREMENT is a table in the shared measurements schema (shared:FILE reads\n"
    "$CS_SHARED_DATA/measurements/FILE, default ../shared/data); SCHEDULE an MSCCL XML or\n"
    "gen:SPEC (collsim predict --gen SPEC); PLATFORM a platform file; PROTOCOL LL, LL128,\n"
    "Simple, or fastest[:P,P...] (predict each, keep the fastest per size; default all three).\n"
    "Options: ranks=N and coll=allreduce|allgather|reducescatter (to derive times from busbw),\n"
    "set=KEY=VALUE (as predict --set), params=FILE (every <prop> of a calibrate fit\n"
    "output, in order with the set= options), fit=MIN:MAX (sizes used to fit the platform: the "
    "summary reports the\n"
    "others, held out), sizes=MIN:MAX (sizes compared), target=nvswitch8|other.\n"
    "A gen:nccl:... SCHEDULE (gpus, channels: the communicator's, nodes, coll, algo, nccl: the\n"
    "version; no size or protocol) predicts, per size and protocol, what `collsim gen nccl`\n"
    "writes there (NCCL's ring or tree, channels and threads), the protocol's cs.tb_Bps and\n"
    "cs.pass_bytes scaled by threads / maximum threads as below.\n"
    "nccl=VERSION (NCCL 2.8 to 2.18, a gen:ring schedule of one instance) runs NCCL's channel\n"
    "and thread choice (enqueue.cc): the ring's channels= is the communicator's, and each size\n"
    "and protocol is predicted on the ring with the channels NCCL uses at that size, with the\n"
    "protocol's cs.tb_Bps and cs.pass_bytes scaled by threads / maximum threads when NCCL uses\n"
    "fewer threads (a CTA's throughput and pass taken as proportional to its threads).\n"
    "Each case predicts as `collsim predict` does, once per protocol, then writes into DIR\n"
    "(default: the directory of CASES) NAME.csv (size, measured, predicted, error %),\n"
    "NAME.gp and NAME.svg (gnuplot, log-log), summary.md (median and max |error| per size\n"
    "band, targets met or missed by how much) and summary.csv. With --baseline (a committed\n"
    "summary.csv) it exits 1 when a median or max |error| exceeds the baseline's by more\n"
    "than the tolerance (default 0.02, i.e. 2 points). With --before (an earlier summary.csv,\n"
    "as a run before a model change wrote) summary.md shows each band's median and max\n"
    "|error| as BEFORE -> AFTER, BEFORE \"-\" where FILE lacks the case or band; summary.csv\n"
    "is unchanged. A bad FILE exits 2 with FILE:LINE before anything is predicted.\n"
    "Progress and an ETA over the cases go to stderr (one updating line on a terminal, else a\n"
    "line every 10 s, COLLSIM_PROGRESS_INTERVAL=SECONDS); --quiet turns them off.\n";

#define MAX_CASES 64
#define MAX_OPS 48
#define MAX_PROTOS 3

/* A change to the platform's parameters, applied in the case line's order after loading it. */
struct param_op {
    char *arg;   /* set=KEY=VALUE: "KEY=VALUE"; params=FILE: the path */
    int is_file; /* params=FILE, read with cs_params_read_props */
};

struct vcase {
    struct cs_valid_case vc; /* as the case file writes it; vc.notes is notes */
    char meas[1024];         /* the measurement's path */
    char proto[MAX_PROTOS][8];
    int nprotos;
    int ranks;
    char coll[32];
    struct param_op ops[MAX_OPS];
    int nops;
    double size_min, size_max; /* sizes compared */
    double point_size;         /* size= for tables of time against GPU count (bytes) */
    int nccl;                  /* nccl=VERSION: its code (cs_nccl_version_parse), else 0 */
    int gen_nccl;              /* a gen:nccl schedule (its version in nccl) */
    char *notes;               /* `#: NAME: text` lines of the case file, for the summary */
    int line;
};

/* Print "collsim: FILE:LINE: <fmt...>" on stderr and return -1. */
static int __attribute__((format(printf, 3, 4)))
bad_line(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "collsim: %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

static void case_cleanup(struct vcase *c)
{
    free(c->notes);
    c->notes = NULL;
    for (int i = 0; i < c->nops; i++)
        free(c->ops[i].arg);
    c->nops = 0;
}

/* A set= or params= key the loaded platform cannot take (a link parameter, which SimGrid reads
 * from the platform's <link>s): -2 after printing why, else 0. `from` names a params= file or
 * is NULL. */
static int refuse_link_key(const char *key, const char *from, const char *file, int line)
{
    struct cs_error err;

    cs_error_init(&err);
    if (cs_platform_check_settable(key, &err) == 0)
        return 0;
    bad_line(file, line, "%s%s%s", from ? "params file " : "set=", from ? from : "", err.msg);
    return -2;
}

/* A params= file must read cleanly now, so that a bad one names the case line; a link parameter
 * in it is refused as in set=. */
static int check_params_file(const char *path, const char *file, int line)
{
    struct cs_params scratch;
    struct cs_param_notes *keys = calloc(1, sizeof(*keys)); /* the keys the file sets */
    struct cs_error err;
    char buf[2048], from[1100];
    int rc;

    if (keys == NULL)
        return bad_line(file, line, "out of memory");
    cs_params_init(&scratch);
    cs_error_init(&err);
    rc = cs_params_read_props(&scratch, path, keys, &err);
    if (rc == CS_ERR_IO)
        bad_line(file, line, "cannot open params file %s: %s", path, err.msg);
    else if (rc != 0)
        bad_line(file, line, "params file: %s", cs_error_format(&err, buf, sizeof(buf)));
    snprintf(from, sizeof(from), "%s: ", path);
    for (int i = 0; i < keys->n && rc == 0; i++)
        rc = refuse_link_key(keys->key[i], from, file, line);
    free(keys);
    return rc;
}

static const char *shared_dir(void)
{
    const char *d = getenv("CS_SHARED_DATA");

    return d && *d ? d : "../shared/data";
}

/* PROTOCOL: one of LL, LL128, Simple, or fastest[:P,P...]. 0 or -1. */
static int parse_protocols(struct vcase *c, const char *f)
{
    int fastest = strncmp(f, "fastest", 7) == 0;
    char buf[64], *tok, *save;

    if (fastest ? f[7] != '\0' && f[7] != ':' : strchr(f, ',') != NULL)
        return -1;
    c->vc.fastest = fastest;
    snprintf(buf, sizeof(buf), "%s", !fastest ? f : f[7] == ':' ? f + 8 : "LL,LL128,Simple");
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(c->vc.protos);

        if (c->nprotos == MAX_PROTOS || cs_proto_parse(tok) == 0)
            return -1;
        snprintf(c->proto[c->nprotos++], sizeof(c->proto[0]), "%s", tok);
        snprintf(c->vc.protos + n, sizeof(c->vc.protos) - n, "%s%s", n ? "/" : "", tok);
    }
    return c->nprotos > 0 ? 0 : -1;
}

/* Queue set=KEY=VALUE or params=FILE. */
static int add_op(struct vcase *c, const char *arg, int is_file)
{
    if (c->nops == MAX_OPS || (c->ops[c->nops].arg = strdup(arg)) == NULL)
        return -1;
    c->ops[c->nops++].is_file = is_file;
    return 0;
}

/* Queue set=KEY=VALUE unless KEY is a link parameter: 0, -1 without '=', -2 when refused. */
static int add_set(struct vcase *c, const char *kv, const char *file, int line)
{
    const char *eq = strchr(kv, '=');
    char key[256];

    if (eq == NULL)
        return -1;
    snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
    return refuse_link_key(key, NULL, file, line) != 0 ? -2 : add_op(c, kv, 0);
}

/* Copy v to out (len bytes) when it is one of the NULL-terminated words: 0, else -1. */
static int one_of(const char *v, const char *const *words, char *out, size_t len)
{
    for (; *words != NULL; words++)
        if (strcmp(v, *words) == 0) {
            snprintf(out, len, "%s", v);
            return 0;
        }
    return -1;
}

/* Replace every {n} in `in` by n. */
static void subst_n(char *out, size_t len, const char *in, int n)
{
    size_t k = 0;

    for (const char *p = in; *p && k + 12 < len; p++) {
        if (strncmp(p, "{n}", 3) == 0) {
            k += (size_t)snprintf(out + k, len - k, "%d", n);
            p += 2;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

/* The integer value of key in a gen:ring spec ("ring:k=v,k=v..."), dflt when absent: 0, or -1
 * when the value is not a count. */
static int spec_int(const char *spec, const char *key, int dflt, int *out)
{
    size_t klen = strlen(key);
    const char *p = strchr(spec, ':');

    *out = dflt;
    while (p != NULL) {
        p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            char v[32];

            snprintf(v, sizeof(v), "%.*s", (int)strcspn(p + klen + 1, ","), p + klen + 1);
            return cs_parse_int(v, 0, 1000000, out);
        }
        p = strchr(p, ',');
    }
    return 0;
}

/* nccl=VERSION: a version the rule is sourced for, on a gen:ring schedule of one instance with
 * its GPU count. 0, or -2 after printing why. */
static int nccl_option(struct vcase *c, const char *v, const char *file, int line)
{
    const char *spec = c->vc.sched + 4;
    char ring[1200];
    struct cs_error err;
    int gpus, instances;

    cs_error_init(&err);
    if (cs_nccl_version_parse(v, &c->nccl, &err) != 0) {
        bad_line(file, line, "nccl=%s: %s", v, err.msg);
        return -2;
    }
    if (strncmp(c->vc.sched, "gen:ring", 8) != 0 || (spec[4] != '\0' && spec[4] != ':')) {
        bad_line(file, line, "nccl= needs a gen:ring schedule, not '%s'", c->vc.sched);
        return -2;
    }
    subst_n(ring, sizeof(ring), spec, 2); /* gpus={n}: any count will do for the check */
    if (spec_int(ring, "gpus", 0, &gpus) != 0 || gpus < 1 ||
        spec_int(ring, "instances", 1, &instances) != 0 || instances != 1) {
        bad_line(file, line, "nccl= needs a ring spec with gpus=N and one instance, not '%s'",
                 spec);
        return -2;
    }
    snprintf(c->vc.nccl, sizeof(c->vc.nccl), "%s", v);
    return 0;
}

/* "nccl:..." (sched_s less its "gen:") with protocol proto and size bytes into buf. */
static void nccl_spec_at(char *buf, size_t len, const char *sched_s, const char *proto, double size)
{
    snprintf(buf, len, "%s%cprotocol=%s,size=%.0f", sched_s + 4,
             strchr(sched_s + 4, ':') ? ',' : ':', proto, size);
}

/* A gen:nccl schedule: NCCL's channels and threads per size as nccl= gives a ring, and its
 * algorithm, from the spec (its nccl= key the version, default CS_NCCL_DEFAULT_VERSION). The spec
 * must generate at 1 MiB ({n} as 2). 0, or -1 after printing why. */
static int gen_nccl_case(struct vcase *c, const char *file, int line)
{
    char spec[1200], at[1300];
    struct cs_nccl_width w;
    struct cs_error err;
    const char *v = strstr(c->vc.sched, "nccl=");

    cs_error_init(&err);
    subst_n(spec, sizeof(spec), c->vc.sched, 2);
    nccl_spec_at(at, sizeof(at), spec, "Simple", 1 << 20);
    if (cs_gen_nccl_spec_width(at, &w, &err) != 0)
        return bad_line(file, line, "%s: %s", c->vc.sched, err.msg);
    c->gen_nccl = 1;
    c->nccl = CS_NCCL_DEFAULT_VERSION;
    if (v != NULL) {
        char ver[16];

        snprintf(ver, sizeof(ver), "%.*s", (int)strcspn(v + 5, ","), v + 5);
        cs_nccl_version_parse(ver, &c->nccl, NULL); /* the generator checked it */
    }
    cs_nccl_version_name(c->nccl, c->vc.nccl, sizeof(c->vc.nccl));
    return 0;
}

/* One OPTION=VALUE of a case: 0, -1 when bad (the caller says so), -2 when already reported. */
static int parse_option(struct vcase *c, const char *k, const char *v, const char *file, int line)
{
    static const char *const colls[] = {"allreduce", "allgather", "reducescatter", NULL};
    static const char *const targets[] = {"nvswitch8", "other", NULL};
    long long size;

    if (strcmp(k, "ranks") == 0)
        return cs_parse_int(v, 2, 1000000, &c->ranks) == 0 ? 0 : -1;
    if (strcmp(k, "coll") == 0)
        return one_of(v, colls, c->coll, sizeof(c->coll));
    if (strcmp(k, "set") == 0)
        return add_set(c, v, file, line);
    if (strcmp(k, "params") == 0)
        return check_params_file(v, file, line) != 0 ? -2 : add_op(c, v, 1);
    if (strcmp(k, "fit") == 0) {
        c->vc.has_fit = 1;
        return cs_meas_parse_range(v, &c->vc.fit_min, &c->vc.fit_max) ? -1 : 0;
    }
    if (strcmp(k, "sizes") == 0)
        return cs_meas_parse_range(v, &c->size_min, &c->size_max) ? -1 : 0;
    if (strcmp(k, "size") == 0) {
        if (cs_parse_size(v, 1, (long long)CS_MEAS_MAX_SIZE, &size) != 0)
            return -1;
        c->point_size = (double)size;
        return 0;
    }
    if (strcmp(k, "target") == 0)
        return one_of(v, targets, c->vc.target, sizeof(c->vc.target));
    if (strcmp(k, "nccl") == 0)
        return nccl_option(c, v, file, line);
    return -1;
}

/* Parse one case line (already split into fields): 0, or -1 after printing file:line. */
static int parse_case(struct vcase *c, char **f, int nf, const char *file, int line)
{
    memset(c, 0, sizeof(*c));
    c->line = line;
    c->size_max = c->vc.fit_max = INFINITY;
    snprintf(c->coll, sizeof(c->coll), "allreduce");
    snprintf(c->vc.target, sizeof(c->vc.target), "other");
    c->point_size = 128;
    if (nf < 5)
        return bad_line(file, line,
                        "a case is NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL [OPTION=VALUE...]");
    if (f[0][strspn(f[0], "-_.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")])
        return bad_line(file, line, "case name '%s': letters, digits, . _ - only", f[0]);
    snprintf(c->vc.name, sizeof(c->vc.name), "%s", f[0]);
    snprintf(c->vc.meas_label, sizeof(c->vc.meas_label), "%s", f[1]);
    if (strncmp(f[1], "shared:", 7) == 0)
        snprintf(c->meas, sizeof(c->meas), "%s/measurements/%s", shared_dir(), f[1] + 7);
    else
        snprintf(c->meas, sizeof(c->meas), "%s", f[1]);
    snprintf(c->vc.sched, sizeof(c->vc.sched), "%s", f[2]);
    snprintf(c->vc.platform, sizeof(c->vc.platform), "%s", f[3]);
    if (strncmp(f[2], "gen:nccl", 8) == 0 && (f[2][8] == '\0' || f[2][8] == ':') &&
        gen_nccl_case(c, file, line) != 0)
        return -1;
    if (parse_protocols(c, f[4]) != 0)
        return bad_line(file, line, "protocol '%s': LL, LL128, Simple, fastest or fastest:P,P...",
                        f[4]);
    for (int i = 5; i < nf; i++) {
        char *eq = strchr(f[i], '=');
        int rc = -1;

        if (eq != NULL) {
            *eq = '\0';
            rc = parse_option(c, f[i], eq + 1, file, line);
            *eq = '=';
        }
        if (rc == -1)
            bad_line(file, line,
                     "bad case option '%s' (ranks=N, coll=..., set=KEY=VALUE, params=FILE, "
                     "fit=MIN:MAX, sizes=MIN:MAX, size=N, target=nvswitch8|other, "
                     "nccl=VERSION)",
                     f[i]);
        if (rc != 0)
            return -1;
    }
    return 0;
}

struct result {
    struct cs_valid_point *p;
    int n;
};

/* The case's set= and params= options, in order, on the loaded platform's parameters. */
static int apply_params(const struct vcase *c, struct cs_params *p, struct cs_error *err)
{
    for (int i = 0; i < c->nops; i++) {
        const char *arg = c->ops[i].arg, *eq = strchr(arg, '=');
        char key[256];
        int rc;

        if (c->ops[i].is_file) {
            rc = cs_params_read_props(p, arg, NULL, err);
        } else {
            snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
            rc = cs_params_set(p, key, eq + 1, err);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The prediction at the smallest predicted size at or above `size` (a requested size is rounded
 * up to whole chunks of the schedule, so a size below the schedule's granularity is predicted at
 * the rounded-up size): the time in s, NAN on deadlock, INFINITY when absent. rows ascend. */
static double lookup(const struct cs_predict_row *rows, int n, double size)
{
    for (int k = 0; k < n; k++)
        if (rows[k].size_bytes >= size)
            return rows[k].res.status == CS_REPLAY_OK ? rows[k].time_us * 1e-6 : NAN;
    return INFINITY;
}

/* What one load of a schedule and platform predicts: sizes lo..hi (bytes) for points
 * [from, to) of the result; `at` is the size looked up for them (0: each point's own size). */
struct span {
    double lo, hi, at;
    int from, to;
};

/* The size the points j of a span are predicted at. */
static double point_size(const struct span *sp, const struct result *res, int j)
{
    return sp->at > 0 ? sp->at : res->p[j].size_bytes;
}

/* The sizes to predict for a span: with nccl=, each point's own size rounded up to one the
 * executor accepts (the span's points share one ring); else nccl-tests' doubling sweep over
 * lo..hi, as `collsim predict` steps it. */
static int span_sizes(const struct vcase *c, const struct cs_sched *sched, int type_bytes,
                      const struct span *sp, const struct result *res, long long **sizes, int *n)
{
    long long *v;
    int k = 0;

    if (!c->nccl)
        return cs_predict_sizes(sched, type_bytes, (long long)nearbyint(sp->lo),
                                (long long)nearbyint(sp->hi), 2, sizes, n, NULL);
    if ((v = malloc((size_t)(sp->to - sp->from) * sizeof(*v))) == NULL)
        return CS_ERR_NOMEM;
    for (int j = sp->from; j < sp->to; j++) {
        long long r =
            cs_plan_round_size(sched, (long long)nearbyint(point_size(sp, res, j)), type_bytes);

        if (k == 0 || r > v[k - 1])
            v[k++] = r;
    }
    *sizes = v;
    *n = k;
    return 0;
}

/* Predict the span with protocol q and keep, per point, the fastest prediction so far. */
static int predict_proto(const struct vcase *c, int q, const struct cs_sched *sched,
                         const struct cs_platform *plat, const struct span *sp, struct result *res,
                         struct cs_error *err)
{
    struct cs_predict_opts o = {0};
    struct cs_predict_row *rows = NULL;
    long long *sizes = NULL;
    int n = 0, rc;

    o.proto = cs_proto_parse(c->proto[q]);
    o.type_bytes = cs_dtype_bytes("float");
    rc = span_sizes(c, sched, o.type_bytes, sp, res, &sizes, &n);
    if (rc == CS_ERR_USAGE)
        cs_error_set(err, NULL, 0, "sizes %.0f to %.0f B cannot be predicted", sp->lo, sp->hi);
    if (rc == 0 && (rows = calloc((size_t)n, sizeof(*rows))) == NULL)
        rc = CS_ERR_NOMEM;
    if (rc == 0 && (rc = cs_predict_run(sched, plat, &o, sizes, n, rows, err)) == 0) {
        for (int j = sp->from; j < sp->to; j++) {
            double v = lookup(rows, n, point_size(sp, res, j));

            if (isfinite(v) && !(v >= res->p[j].pred_s)) {
                res->p[j].pred_s = v;
                snprintf(res->p[j].proto, sizeof(res->p[j].proto), "%s", c->proto[q]);
            }
        }
        for (int k = 0; k < n; k++)
            cs_predict_row_cleanup(&rows[k]);
    }
    free(rows);
    free(sizes);
    return rc;
}

/* Load sched_s (a path or gen:SPEC) and plat_s, apply the case's parameters, and predict the
 * span with protocol `only` (an index of c->proto; -1: every protocol of the case). With a
 * width w, the protocol's threadblock is narrowed to w's threads (cs_params_narrow). */
static int load_and_predict(const struct vcase *c, const char *sched_s, const char *plat_s,
                            int only, const struct cs_nccl_width *w, const struct span *sp,
                            struct result *res, struct cs_error *err)
{
    struct cs_predict_input in = {0};
    struct cs_sched *sched = NULL;
    struct cs_platform *plat = NULL;
    int rc;

    if (strncmp(sched_s, "gen:", 4) == 0)
        in.gen_spec = sched_s + 4;
    else
        in.sched_path = sched_s;
    in.plat_path = plat_s;
    rc = cs_predict_load(&in, &sched, &plat, err);
    if (rc != 0)
        return rc;
    rc = apply_params(c, &plat->params, err);
    if (only >= 0 && w != NULL)
        cs_params_narrow(&plat->params, cs_proto_parse(c->proto[only]), w->threads, w->max_threads);
    for (int q = 0; q < c->nprotos && rc == 0; q++)
        if (only < 0 || q == only)
            rc = predict_proto(c, q, sched, plat, sp, res, err);
    cs_platform_free(plat);
    cs_sched_free(sched);
    return rc;
}

/* The spec "gen:ring:..." with channels=nc in place of its own (or added). */
static void ring_with_channels(char *out, size_t len, const char *ring, int nc)
{
    const char *p = strchr(ring + 4, ':');
    size_t k = (size_t)snprintf(out, len, "gen:ring:channels=%d", nc);

    while (p != NULL && k < len) {
        size_t tl = strcspn(p + 1, ",");

        if (strncmp(p + 1, "channels=", 9) != 0)
            k += (size_t)snprintf(out + k, len - k, ",%.*s", (int)tl, p + 1);
        p = p[1 + tl] ? p + 1 + tl : NULL;
    }
}

/* NCCL's width for protocol proto at size bytes on a ring of gpus ranks and nc channels. */
static int width_at(const struct vcase *c, enum cs_proto proto, double size, int gpus, int nc,
                    struct cs_nccl_width *w, struct cs_error *err)
{
    return cs_nccl_width(c->nccl, proto, (long long)nearbyint(size), gpus, nc, w, err);
}

/* nccl=: per protocol, the span's points in runs of the same NCCL channels and threads (sizes
 * ascend, so each run is contiguous); each run predicts on the ring with those channels, the
 * protocol's per-threadblock rate scaled by threads / maximum threads. */
static int predict_nccl(const struct vcase *c, const char *ring, const char *plat_s,
                        const struct span *sp, struct result *res, struct cs_error *err)
{
    int gpus, nc, rc = 0;

    spec_int(ring + 4, "gpus", 0, &gpus);
    spec_int(ring + 4, "channels", 1, &nc);
    for (int q = 0; q < c->nprotos && rc == 0; q++) {
        enum cs_proto proto = cs_proto_parse(c->proto[q]);

        for (int j = sp->from; j < sp->to && rc == 0;) {
            struct span run = {point_size(sp, res, j), 0, sp->at, j, j};
            struct cs_nccl_width w, wj;
            char spec[1300];

            rc = width_at(c, proto, run.lo, gpus, nc, &w, err);
            for (; rc == 0 && run.to < sp->to; run.to++) {
                rc = width_at(c, proto, point_size(sp, res, run.to), gpus, nc, &wj, err);
                if (rc != 0 || wj.channels != w.channels || wj.threads != w.threads)
                    break;
            }
            if (rc != 0)
                break;
            run.hi = point_size(sp, res, run.to - 1);
            ring_with_channels(spec, sizeof(spec), ring, w.channels);
            rc = load_and_predict(c, spec, plat_s, q, &w, &run, res, err);
            j = run.to;
        }
    }
    return rc;
}

/* What NCCL runs for gen:nccl schedule sched_s with protocol proto at size bytes. */
static int nccl_width_at(const char *sched_s, const char *proto, double size,
                         struct cs_nccl_width *w, struct cs_error *err)
{
    char spec[1300];

    nccl_spec_at(spec, sizeof(spec), sched_s, proto, size);
    return cs_gen_nccl_spec_width(spec, w, err);
}

/* gen:nccl: per protocol, the span's points in runs over which NCCL keeps its algorithm,
 * channels and threads (sizes ascend, so each run is contiguous); each run predicts the schedule
 * gen nccl writes at the run's first size, the protocol's per-threadblock rate scaled by threads
 * / maximum threads. */
static int predict_gen_nccl(const struct vcase *c, const char *sched_s, const char *plat_s,
                            const struct span *sp, struct result *res, struct cs_error *err)
{
    int rc = 0;

    for (int q = 0; q < c->nprotos && rc == 0; q++) {
        for (int j = sp->from; j < sp->to && rc == 0;) {
            struct span run = {point_size(sp, res, j), 0, sp->at, j, j};
            struct cs_nccl_width w, wj;
            char spec[1300];

            rc = nccl_width_at(sched_s, c->proto[q], run.lo, &w, err);
            for (; rc == 0 && run.to < sp->to; run.to++) {
                rc = nccl_width_at(sched_s, c->proto[q], point_size(sp, res, run.to), &wj, err);
                if (rc != 0 || wj.algo != w.algo || wj.channels != w.channels ||
                    wj.threads != w.threads)
                    break;
            }
            if (rc != 0)
                break;
            run.hi = point_size(sp, res, run.to - 1);
            snprintf(spec, sizeof(spec), "gen:");
            nccl_spec_at(spec + 4, sizeof(spec) - 4, sched_s, c->proto[q], run.lo);
            rc = load_and_predict(c, spec, plat_s, q, &w, &run, res, err);
            j = run.to;
        }
    }
    return rc;
}

/* Load the schedule and platform (with {n} replaced by n) and predict the span with every
 * protocol of the case (with nccl=, per size on NCCL's channels and threads). 0, or -1 after
 * printing why. */
static int predict_span(const struct vcase *c, int n, const struct span *sp, struct result *res)
{
    char sched_s[1200], plat_s[1200];
    struct cs_error err;
    int rc;

    subst_n(sched_s, sizeof(sched_s), c->vc.sched, n);
    subst_n(plat_s, sizeof(plat_s), c->vc.platform, n);
    cs_error_init(&err);
    if (c->gen_nccl)
        rc = predict_gen_nccl(c, sched_s, plat_s, sp, res, &err);
    else if (c->nccl)
        rc = predict_nccl(c, sched_s, plat_s, sp, res, &err);
    else
        rc = load_and_predict(c, sched_s, plat_s, -1, NULL, sp, res, &err);
    if (rc != 0) {
        cmd_print_error(&err);
        fprintf(stderr, "collsim: case %s: the prediction failed\n", c->vc.name);
        return -1;
    }
    return 0;
}

/* Fill predictions, the fastest over the case's protocols. A size sweep predicts the measured
 * range once per protocol; a table of time against GPU count predicts each count, with {n} in
 * the schedule and platform replaced by the count, at the case's size (size=, default 128 B). */
static int predict_case(const struct vcase *c, struct result *res)
{
    /* the measured points ascend by size */
    struct span sp = {res->p[0].size_bytes, 1.01 * res->p[res->n - 1].size_bytes, 0, 0, res->n};

    if (res->p[0].ranks == 0)
        return predict_span(c, 0, &sp, res);
    for (int i = 0; i < res->n; i++) {
        struct span one = {c->point_size, c->point_size, c->point_size, i, i + 1};

        if (predict_span(c, res->p[i].ranks, &one, res) != 0)
            return -1;
    }
    return 0;
}

/* A gnuplot script per case, and the SVG when gnuplot is installed. Returns 0, 1 without
 * gnuplot, -1 on failure. */
/* In a child: gnuplot on NAME.gp in the case's output folder (what gnuplot_in gets). */
struct gp_job {
    const char *dir, *script;
};

static int gnuplot_in(void *ctx)
{
    const struct gp_job *j = ctx;

    if (chdir(j->dir) != 0)
        return 127;
    execl("/usr/bin/gnuplot", "gnuplot", j->script, (char *)NULL);
    return 127;
}

static int write_plot(const char *dir, const struct vcase *c, int by_n)
{
    char path[2048], script[1100];
    struct gp_job job = {dir, script};
    pid_t pid;
    struct cs_outfile out;
    struct cs_error err;

    cs_error_init(&err);
    if (snprintf(path, sizeof(path), "%s/%s.gp", dir, c->vc.name) >= (int)sizeof(path))
        return -1;
    if (cs_outfile_open(&out, path, &err) != 0) {
        cmd_print_error(&err);
        return -1;
    }
    fprintf(out.fp,
            "# gnuplot script written by collsim validate\n"
            "set terminal svg size 720,480 dynamic\n"
            "set output '%s.svg'\n"
            "set datafile separator ','\n"
            "%s"
            "set key top left\n"
            "set grid\n"
            "set title \"%s: measured vs predicted\" noenhanced\n"
            "set xlabel '%s'\n"
            "set ylabel 'time (us)'\n"
            "plot '%s.csv' skip 1 using 1:2 with linespoints title 'measured', \\\n"
            "     '%s.csv' skip 1 using 1:3 with linespoints title 'predicted (%s)'\n",
            c->vc.name, by_n ? "set logscale y\n" : "set logscale xy\n", c->vc.name,
            by_n ? "GPUs" : "size (bytes)", c->vc.name, c->vc.name,
            c->vc.fastest ? "fastest protocol" : c->proto[0]);
    if (cs_outfile_close(&out, &err) != 0) {
        cmd_print_error(&err);
        return -1;
    }
    if (access("/usr/bin/gnuplot", X_OK) != 0)
        return 1;
    /* no shell between: a folder or case name may hold any character */
    if (snprintf(script, sizeof(script), "%s.gp", c->vc.name) >= (int)sizeof(script))
        return -1;
    pid = cs_spawn_fn(gnuplot_in, &job, NULL, "/dev/null");
    return pid > 0 && cs_spawn_wait(pid) == 0 ? 0 : -1;
}

/* A note for a case defined above: `#: NAME: text`. 0, or -1 after printing why. */
static int add_note(struct vcase *cases, int ncases, char *buf, const char *file, int line)
{
    char *name = buf + 2 + strspn(buf + 2, " "), *colon = strchr(name, ':'), *text, *nn;
    size_t old_len;
    int k = 0;

    if (colon == NULL)
        return 0;
    *colon = '\0';
    text = colon + 1 + strspn(colon + 1, " ");
    text[strcspn(text, "\r\n")] = '\0';
    while (k < ncases && strcmp(cases[k].vc.name, name) != 0)
        k++;
    if (k == ncases)
        return bad_line(file, line, "note for an unknown case '%s'", name);
    old_len = cases[k].notes ? strlen(cases[k].notes) : 0;
    if ((nn = realloc(cases[k].notes, old_len + strlen(text) + 2)) == NULL)
        return -1;
    snprintf(nn + old_len, strlen(text) + 2, "%s\n", text);
    cases[k].notes = nn;
    cases[k].vc.notes = nn;
    return 0;
}

/* One line that is not a note: a case (appended to cases), or blank. 0, or -1 after printing. */
static int add_case(struct vcase *cases, int *ncases, char *buf, const char *file, int line)
{
    char *f[64], *save, *tok;
    struct vcase *c = &cases[*ncases];
    int nf = 0;

    for (tok = strtok_r(buf, " \t\r\n", &save); tok && tok[0] != '#' && nf < 64;
         tok = strtok_r(NULL, " \t\r\n", &save))
        f[nf++] = tok;
    if (nf == 0)
        return 0;
    if (*ncases == MAX_CASES)
        return bad_line(file, line, "more than %d cases", MAX_CASES);
    if (parse_case(c, f, nf, file, line) != 0) {
        case_cleanup(c);
        return -1;
    }
    (*ncases)++;
    for (int k = 0; k < *ncases - 1; k++)
        if (strcmp(cases[k].vc.name, c->vc.name) == 0)
            return bad_line(file, line, "case '%s' again (first on line %d)", c->vc.name,
                            cases[k].line);
    return 0;
}

/* Read the case file into cases[0..*ncases). 0, or -1 after printing file:line. */
static int read_cases(const char *path, struct vcase *cases, int *ncases)
{
    FILE *fp = fopen(path, "r");
    char buf[8192];
    int line = 0, rc = 0;

    if (fp == NULL) {
        fprintf(stderr, "collsim: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && fgets(buf, sizeof(buf), fp) != NULL) {
        line++;
        if (strchr(buf, '\n') == NULL && !feof(fp))
            rc = bad_line(path, line, "line too long");
        else if (strncmp(buf, "#:", 2) == 0)
            rc = add_note(cases, *ncases, buf, path, line);
        else
            rc = add_case(cases, ncases, buf, path, line);
    }
    fclose(fp);
    if (rc == 0 && *ncases == 0) {
        fprintf(stderr, "collsim: %s: no cases\n", path);
        rc = -1;
    }
    return rc;
}

/* The measured points of a case within its sizes=, held out unless within its fit=. */
static int read_points(const struct vcase *c, const char *cases_path, struct result *res)
{
    struct cs_error err;
    int m = 0;

    cs_error_init(&err);
    if (cs_valid_read_measurement(c->meas, c->coll, c->ranks, &res->p, &res->n, &err) != 0) {
        cmd_print_error(&err);
        return -1;
    }
    for (int i = 0; i < res->n; i++) {
        double s = res->p[i].size_bytes;

        if (s >= c->size_min && s <= c->size_max) {
            res->p[m] = res->p[i];
            res->p[m++].held_out = !c->vc.has_fit || !(s >= c->vc.fit_min && s <= c->vc.fit_max);
        }
    }
    res->n = m;
    return m > 0 ? 0
                 : bad_line(cases_path, c->line, "case %s: no measured sizes in range", c->vc.name);
}

/* Predict one case and write NAME.csv, its plot and its part of the summaries. Returns 0 or 1
 * (a target missed), or -1 after printing why. */
static int run_case(const struct vcase *c, const char *cases_path, const char *outdir, FILE *md,
                    FILE *scsv, const struct cs_valid_before *before, struct cs_progress *bar)
{
    struct result res = {0};
    char path[2200];
    int rc = -1;
    struct cs_outfile cf;
    struct cs_error err;

    cs_error_init(&err);
    if (read_points(c, cases_path, &res) != 0 || predict_case(c, &res) != 0)
        goto done;
    if (snprintf(path, sizeof(path), "%s/%s.csv", outdir, c->vc.name) >= (int)sizeof(path) ||
        cs_outfile_open(&cf, path, &err) != 0) {
        if (err.msg[0])
            cmd_print_error(&err);
        else
            fprintf(stderr, "collsim: cannot write %s\n", path);
        goto done;
    }
    cs_valid_case_csv(cf.fp, res.p, res.n);
    if (cs_outfile_close(&cf, &err) != 0) {
        cmd_print_error(&err);
        goto done;
    }
    if (write_plot(outdir, c, res.p[0].ranks > 0) < 0)
        fprintf(stderr, "collsim: case %s: gnuplot failed; the .gp script is in %s\n", c->vc.name,
                outdir);
    rc = cs_valid_summary_case(md, scsv, &c->vc, res.p, res.n, before);
    cs_progress_clear(bar); /* its line is on the terminal until now */
    printf("validate: %s: %d sizes\n", c->vc.name, res.n);
done:
    free(res.p);
    return rc;
}

/* Run every case into outdir's summaries, beside the earlier summary `before` (or NULL): 0 or 1
 * (some target missed), -1 on failure. */
static int run_cases(const struct vcase *cases, int ncases, const char *cases_path,
                     const char *outdir, const struct cs_valid_before *before, int quiet)
{
    struct cs_progress bar;
    char path[2][2200];
    struct cs_outfile out[2]; /* summary.md, summary.csv: replaced only when all is written */
    struct cs_error err;
    int any_fail = 0, open = 0;

    cs_error_init(&err);
    if (cs_progress_start(&bar, "validate", "cases", ncases, quiet, &err) != 0) {
        cmd_print_error(&err);
        return -1;
    }
    mkdir(outdir, 0777);
    snprintf(path[0], sizeof(path[0]), "%s/summary.md", outdir);
    snprintf(path[1], sizeof(path[1]), "%s/summary.csv", outdir);
    while (open < 2 && cs_outfile_open(&out[open], path[open], &err) == 0)
        open++;
    if (open < 2) {
        cmd_print_error(&err);
        any_fail = -1;
    } else {
        cs_valid_summary_begin(out[0].fp, out[1].fp, cases_path, before);
    }
    for (int k = 0; k < ncases && any_fail >= 0; k++) {
        int r;

        cs_progress_update(&bar, k, cases[k].vc.name);
        r = run_case(&cases[k], cases_path, outdir, out[0].fp, out[1].fp, before, &bar);
        any_fail = r < 0 ? -1 : any_fail | r;
    }
    if (any_fail >= 0)
        cs_progress_update(&bar, ncases, NULL);
    cs_progress_end(&bar);
    for (int k = 0; k < open; k++)
        if (any_fail < 0)
            cs_outfile_discard(&out[k]);
        else if (cs_outfile_close(&out[k], &err) != 0) {
            cmd_print_error(&err);
            any_fail = -1;
        }
    return any_fail;
}

static const char validate_opts[] = "baseline=B: tolerance=t: before=F: quiet=q";

int cmd_validate(int argc, char **argv)
{
    const char *cases_path = NULL, *outdir = NULL, *baseline = NULL, *before_path = NULL;
    struct cs_valid_before *before = NULL;
    double tol = 0.02;
    static struct vcase cases[MAX_CASES];
    int ncases = 0, rc = CS_EXIT_OK, c, started = 0, r, quiet = 0;
    char dirbuf[1024], path[2200];
    struct cs_error err;
    struct cmd_opts t;

    cmd_opts_init(&t, validate_opts);
    while ((c = cmd_getopt(argc, argv, "o:", t.opt, &started)) != -1) {
        if (c == '?')
            return CS_EXIT_USAGE;
        if (c == 'o')
            outdir = optarg;
        else if (c == 'B')
            baseline = optarg;
        else if (c == 'F')
            before_path = optarg;
        else if (c == 'q')
            quiet = 1;
        else if (cmd_opt_double("--tolerance", optarg, 0, 9.999, &tol, "a fraction >= 0") != 0)
            return CS_EXIT_USAGE;
    }
    if (optind == argc)
        return cmd_usage_error("validate needs a case file; see 'collsim help validate'");
    if (optind + 1 < argc)
        return cmd_usage_error("validate takes one case file");
    cases_path = argv[optind];
    if (outdir == NULL) {
        const char *slash = strrchr(cases_path, '/');

        snprintf(dirbuf, sizeof(dirbuf), "%.*s", slash ? (int)(slash - cases_path) : 1,
                 slash ? cases_path : ".");
        outdir = dirbuf;
    }
    cs_error_init(&err);
    if (before_path != NULL && cs_valid_before_read(before_path, &before, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if (read_cases(cases_path, cases, &ncases) != 0 ||
        (r = run_cases(cases, ncases, cases_path, outdir, before, quiet)) < 0) {
        rc = CS_EXIT_USAGE;
        goto done;
    }
    printf("validate: wrote %s/summary.md%s\n", outdir,
           r ? " (some targets not met: see the summary)" : "");
    if (baseline != NULL) {
        snprintf(path, sizeof(path), "%s/summary.csv", outdir);
        cs_error_init(&err);
        r = cs_valid_baseline_check(path, baseline, tol, stdout, &err);
        if (r < 0)
            cmd_print_error(&err);
        if (r < 0)
            rc = CS_EXIT_USAGE;
        else if (r > 0)
            rc = CS_EXIT_NEGATIVE;
        else
            printf("validate: within %.1f points of the baseline %s\n", 100 * tol, baseline);
    }
done:
    cs_valid_before_free(before);
    for (int k = 0; k < ncases; k++)
        case_cleanup(&cases[k]);
    return rc;
}
