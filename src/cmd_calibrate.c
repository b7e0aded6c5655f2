/* cmd_calibrate.c: `collsim calibrate fit`: platform parameters from measurement CSVs.
 *
 * Two input kinds, told apart by their header:
 *  - measurement tables (size_bytes,time_us,algbw_GBps,busbw_GBps,placement,...): nccl-tests
 *    collective times. A ring collective over n ranks takes nsteps = 2(n-1) (AllReduce) or n-1
 *    (AllGather, ReduceScatter) steps, each moving S/n bytes over every rank's link, so
 *        t(S) = launch + deploy + nsteps * call + (nsteps * S / n) / B
 *    is a straight line in the per-rank link bytes x = nsteps * S / n: its slope gives the
 *    link's bus bandwidth B (nccl-tests busbw in the limit) and its intercept the fixed costs.
 *    A table of time against ring steps at a tiny size (n_gpus,ring_steps columns) gives
 *    launch (intercept) and call (slope) directly.
 *  - harness per-sample CSVs (calibration.md 3.3: test,mech,op,src,dst,...,bytes,ops,sample,
 *    time_s,...,status): per-op time = time_s / ops against bytes, one series per
 *    (test, mech, op, src, dst, concurrent, nblocks, nthreads, chunk_bytes).
 * Every series gets a segmented weighted fit (fit.h). The mapping of fits to parameter keys is
 * printed in the usage text and in the report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "csv.h"
#include "fit.h"
#include "params.h"

const char cmd_calibrate_usage[] =
    "usage: collsim calibrate fit FILE... [--link nvlink|pcie|net] [--proto LL|LL128|Simple|auto]\n"
    "           [--collective allreduce|allgather|reducescatter|sendrecv] [--ranks N]\n"
    "           [--sizes MIN:MAX] [--segments auto|1..4] [--min-sizes K] [--robust]\n"
    "           [--intercept step|deploy] [--set KEY=VALUE]... [--only-fitted]\n"
    "           [-o PARAMS] [--report FILE]\n"
    "\n"
    "Fit platform parameters to measurements and write them as <prop> lines (the keys of\n"
    "src/params.h; -o, default stdout), each after a comment naming the fit and the data; keys\n"
    "no series fits keep their prior (omitted with --only-fitted). --report FILE (- for stdout)\n"
    "writes a Markdown report: per series the segments with alpha and beta, 95% intervals,\n"
    "flags, and the residual at every size.\n"
    "\n"
    "Fit: t = alpha + x/beta by weighted least squares (weights 1/t^2), alpha >= 0 and\n"
    "1/beta >= 0 (clamped and flagged), up to 4 segments with breakpoints at measured sizes\n"
    "chosen by BIC (--segments fixes the number, --min-sizes the sizes per segment, default 3),\n"
    "--robust adds Huber reweighting. Intervals: Student t on the WLS covariance.\n"
    "\n"
    "Inputs, told apart by their header:\n"
    "  measurement tables (size_bytes,time_us,algbw_GBps,busbw_GBps,placement,...): a ring\n"
    "    collective over n ranks (--ranks, else inferred from busbw/algbw) takes nsteps steps\n"
    "    (AllReduce 2(n-1), AllGather and ReduceScatter n-1) of S/n bytes, so the fit is on\n"
    "    x = nsteps*S/n: t = launch + deploy + nsteps*call + x/B. Segments map to protocols in\n"
    "    NCCL's order by size (LL, [LL128 on nvlink], Simple; --proto forces one).\n"
    "      cs.call_s.P.LINK   (segment intercept - cs.launch_s - cs.deploy_s) / nsteps\n"
    "      cs.deploy_s        with --intercept deploy: first intercept - launch - nsteps*call\n"
    "      cs.link_Bps.LINK   B of the last (Simple) segment: the ring's bus bandwidth\n"
    "    Time missing: derived from busbw. Tables with n_gpus,ring_steps columns fit\n"
    "    t = launch + steps*call: cs.launch_s and cs.call_s.P.LINK (P default LL); they are read\n"
    "    first and their launch attributes the other tables' intercepts.\n"
    "  harness CSVs (calibration.md 3.3): per-op time = time_s/ops against bytes, one series per\n"
    "    test/mech/op/src/dst/concurrent/nblocks/nthreads/chunk_bytes (chunk_bytes equal to\n"
    "    bytes, as in protocol tests, joins the sizes into one series); rows not ok are skipped.\n"
    "      mech launch                  cs.launch_s (median)\n"
    "      mech ll|ll128|simple         cs.tb_Bps.P (1 block: last segment's beta),\n"
    "                                   cs.call_s.P.LINK (first intercept; needs --link)\n"
    "      op copy, local, 1 block      cs.copy_Bps = 2 beta (read + write)\n"
    "      op reduce|reduce2, local,    cs.reduce_Bps = 3 beta (two reads, one write)\n"
    "        1 block\n"
    "      op copy, src != dst          cs.link_Bps.LINK\n"
    "      flag_pingpong, src != dst    cs.link_lat_s.LINK = intercept / 2\n"
    "    Several series on one key: the median.\n"
    "--set KEY=VALUE changes a prior (e.g. cs.launch_s used to attribute intercepts).\n";

enum coll {
    COLL_ALLREDUCE = 1,
    COLL_ALLGATHER,
    COLL_REDUCESCATTER,
    COLL_SENDRECV,
};

static const char *const coll_names[] = {NULL, "allreduce", "allgather", "reducescatter",
                                         "sendrecv"};

static enum coll coll_parse(const char *s)
{
    if (strcmp(s, "all_reduce") == 0)
        return COLL_ALLREDUCE;
    if (strcmp(s, "all_gather") == 0)
        return COLL_ALLGATHER;
    if (strcmp(s, "reduce_scatter") == 0)
        return COLL_REDUCESCATTER;
    for (int i = 1; i <= COLL_SENDRECV; i++)
        if (strcmp(s, coll_names[i]) == 0)
            return (enum coll)i;
    return 0;
}

/* Physical per-direction peaks, to flag impossible fits: NVLink3 12 x 25 GB/s; PCIe Gen4 x16
 * 31.5 GB/s; one 200 Gb/s HDR NIC 25 GB/s (nccl-a100.md section 2). */
static const double link_peak_Bps[CS_NLINK] = {0, 300e9, 31.5e9, 25e9};

struct opts {
    enum cs_link_class link; /* 0: not given */
    enum cs_proto proto;     /* 0: auto */
    enum coll coll;          /* 0: from the file, else allreduce */
    int ranks;               /* 0: inferred */
    double size_min, size_max;
    struct cs_fit_opts fo;
    int intercept_deploy;
    int only_fitted;
    struct cs_params base;  /* working values: a steps table's launch replaces the prior */
    struct cs_params prior; /* defaults and --set, for the report */
};

/* A fitted parameter: the values every series gave (median taken) and how. */
#define MAX_KEYS 48
#define MAX_VALS 64
struct fitted {
    char key[64];
    double v[MAX_VALS];
    int n;
    char how[1024];
};

struct state {
    struct opts o;
    struct fitted keys[MAX_KEYS];
    int nkeys;
    FILE *rep;
    char files[2048];
};

static void put(struct state *st, const char *key, double v, const char *how)
{
    struct fitted *f = NULL;

    if (!isfinite(v) || v < 0)
        return;
    for (int i = 0; i < st->nkeys; i++)
        if (strcmp(st->keys[i].key, key) == 0)
            f = &st->keys[i];
    if (f == NULL) {
        if (st->nkeys == MAX_KEYS)
            return;
        f = &st->keys[st->nkeys++];
        memset(f, 0, sizeof(*f));
        snprintf(f->key, sizeof(f->key), "%s", key);
    }
    if (f->n < MAX_VALS)
        f->v[f->n++] = v;
    if (f->how[0] == '\0')
        snprintf(f->how, sizeof(f->how), "%s", how);
    else if (strlen(f->how) + strlen(how) + 3 < sizeof(f->how))
        strcat(strcat(f->how, "; "), how);
    fprintf(st->rep, "- `%s` = %.6g from %s\n", key, v, how);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double fitted_value(struct fitted *f)
{
    qsort(f->v, (size_t)f->n, sizeof(double), cmp_d);
    return f->n % 2 ? f->v[f->n / 2] : 0.5 * (f->v[f->n / 2 - 1] + f->v[f->n / 2]);
}

/* Printing helpers for the report. */
static const char *fmt_s(double s, char *buf, size_t len)
{
    if (!isfinite(s))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.3f us", s * 1e6);
    return buf;
}

static const char *fmt_bw(double b, char *buf, size_t len)
{
    if (isinf(b))
        snprintf(buf, len, "inf");
    else if (!isfinite(b))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.4g GB/s", b / 1e9);
    return buf;
}

/* One series of (x, t) samples. */
struct series {
    char label[512];
    double *x, *t, *size; /* size: the original message size (bytes) for the residual table */
    int n, cap;
};

static int series_add(struct series *s, double x, double t, double size)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        double *nx = realloc(s->x, (size_t)cap * sizeof(double));

        if (nx == NULL)
            return CS_ERR_NOMEM;
        s->x = nx;
        nx = realloc(s->t, (size_t)cap * sizeof(double));
        if (nx == NULL)
            return CS_ERR_NOMEM;
        s->t = nx;
        nx = realloc(s->size, (size_t)cap * sizeof(double));
        if (nx == NULL)
            return CS_ERR_NOMEM;
        s->size = nx;
        s->cap = cap;
    }
    s->x[s->n] = x;
    s->t[s->n] = t;
    s->size[s->n] = size;
    s->n++;
    return 0;
}

static void series_cleanup(struct series *s)
{
    free(s->x);
    free(s->t);
    free(s->size);
    memset(s, 0, sizeof(*s));
}

/* Fit a series and print its segments and residuals. x_scale turns x into the message size for
 * the residual table (x = scale * size). Returns 0 or an error code (message printed). */
static int fit_series(struct state *st, const struct series *s, const char *xunit,
                      struct cs_fit_result *R)
{
    struct cs_error err;
    struct cs_fit_resid *res = NULL;
    int nres, rc;
    char a[64], b[64], c[64], d[64], e[64];

    cs_error_init(&err);
    rc = cs_fit_segmented(s->x, s->t, s->n, &st->o.fo, R, &err);
    if (rc != 0) {
        fprintf(stderr, "collsim: %s: %s\n", s->label, err.msg);
        return rc;
    }
    fprintf(st->rep, "\nWeighted least squares (weights 1/t^2), %d points, %d segment%s chosen by "
                     "BIC (",
            s->n, R->nseg, R->nseg == 1 ? "" : "s");
    for (int m = 1; m <= CS_FIT_MAX_SEG; m++) {
        if (isnan(R->bic_by_m[m]))
            fprintf(st->rep, "%sm=%d: -", m > 1 ? ", " : "", m);
        else
            fprintf(st->rep, "%sm=%d: %.1f", m > 1 ? ", " : "", m, R->bic_by_m[m]);
    }
    fprintf(st->rep, "). 95%% intervals from the WLS covariance, Student t.\n\n");
    fprintf(st->rep, "| seg | %s range | alpha (95%% CI) | beta [95%% CI] | n_half | rms rel | "
                     "max rel | flags |\n|---|---|---|---|---|---|---|---|\n",
            xunit);
    for (int k = 0; k < R->nseg; k++) {
        const struct cs_fit_line *L = &R->seg[k];
        char flags[256] = "";

        if (L->alpha_clamped)
            strcat(flags, "alpha<0 clamped; ");
        if (L->slope_clamped)
            strcat(flags, "slope<0 clamped; ");
        if (L->max_rel > 0.10)
            strcat(flags, "max residual >10%; ");
        if (L->dof == 0)
            strcat(flags, "no dof for intervals; ");
        fprintf(st->rep, "| %d | %.6g .. %.6g | %s ± %s | %s [%s, %s] | %.4g | %.2f%% | %.2f%% | %s |\n",
                k, L->x_min, L->x_max, fmt_s(L->alpha_s, a, sizeof(a)),
                fmt_s(L->alpha_ci_s, b, sizeof(b)), fmt_bw(L->beta_Bps, c, sizeof(c)),
                fmt_bw(L->beta_lo_Bps, d, sizeof(d)), fmt_bw(L->beta_hi_Bps, e, sizeof(e)),
                L->alpha_s * L->beta_Bps,
                100 * L->rms_rel, 100 * L->max_rel, flags);
    }
    if (cs_fit_residuals(R, s->x, s->t, s->n, &res, &nres) != 0) {
        fprintf(stderr, "collsim: out of memory\n");
        return CS_ERR_NOMEM;
    }
    fprintf(st->rep, "\n| size (B) | %s | samples | measured (median) | fitted | error |\n"
                     "|---|---|---|---|---|---|\n",
            xunit);
    for (int i = 0; i < nres; i++) {
        double size = NAN;

        for (int j = 0; j < s->n; j++)
            if (s->x[j] == res[i].x)
                size = s->size[j];
        fprintf(st->rep, "| %.0f | %.6g | %d | %s | %s | %+.2f%% |\n", size, res[i].x,
                res[i].nsamples, fmt_s(res[i].t_meas_s, a, sizeof(a)),
                fmt_s(res[i].t_pred_s, b, sizeof(b)), 100 * res[i].err_rel);
    }
    free(res);
    return 0;
}

/* Protocols in the order NCCL switches to them as size grows: LL128 only on NVLink paths
 * (nccl-a100.md 1.5, "LL128 default enablement"). */
static int proto_order(enum cs_link_class link, enum cs_proto *out)
{
    out[0] = CS_PROTO_LL;
    if (link == CS_LINK_NVLINK) {
        out[1] = CS_PROTO_LL128;
        out[2] = CS_PROTO_SIMPLE;
        return 3;
    }
    out[1] = CS_PROTO_SIMPLE;
    return 2;
}

/* The protocol of segment k of m (0: not mapped). A lone segment is Simple when its smallest
 * message is 1 MiB or more (NCCL's LL and LL128 ranges end below that on A100), else LL. */
static enum cs_proto seg_proto(const struct opts *o, int k, int m, double min_msg_bytes)
{
    enum cs_proto order[3];
    int q;

    if (o->proto)
        return o->proto;
    q = proto_order(o->link ? o->link : CS_LINK_NVLINK, order);
    if (m == 1)
        return min_msg_bytes >= 1048576 ? order[q - 1] : order[0];
    if (k == 0)
        return order[0];
    if (k == m - 1)
        return order[q - 1];
    if (m == 3 && q == 3 && k == 1)
        return order[1];
    return 0;
}

static int nsteps_of(enum coll c, int n)
{
    switch (c) {
    case COLL_ALLREDUCE: return 2 * (n - 1);
    case COLL_ALLGATHER:
    case COLL_REDUCESCATTER: return n - 1;
    case COLL_SENDRECV: return 1;
    }
    return 0;
}

/* --- measurement tables ----------------------------------------------------------------- */

/* Ranks from busbw / algbw at the largest size that has both (nccl-tests factors). */
static int infer_ranks(const struct cs_csv *t, enum coll c)
{
    int cs = cs_csv_col_find(t, "size_bytes"), ca = cs_csv_col_find(t, "algbw_GBps"),
        cb = cs_csv_col_find(t, "busbw_GBps");
    double best = -1, ratio = 0, n;

    for (int r = 0; r < t->nrows; r++) {
        double s, a, b;

        if (cs_csv_get_double(t, r, cs, &s, NULL) == 0 &&
            cs_csv_get_double(t, r, ca, &a, NULL) == 0 &&
            cs_csv_get_double(t, r, cb, &b, NULL) == 0 && a > 1 && b > 0 && s > best) {
            best = s;
            ratio = b / a;
        }
    }
    if (best < 0)
        return 0;
    if (c == COLL_ALLREDUCE)
        n = ratio < 2 ? 2 / (2 - ratio) : 0; /* ratio = 2(n-1)/n */
    else if (c == COLL_ALLGATHER || c == COLL_REDUCESCATTER)
        n = ratio < 1 ? 1 / (1 - ratio) : 0; /* ratio = (n-1)/n */
    else
        return 2;
    if (n < 1.5 || fabs(n - round(n)) > 0.15)
        return 0;
    return (int)round(n);
}

/* Time against ring steps (n_gpus, ring_steps columns): launch and per-step cost. */
static int fit_steps_table(struct state *st, const struct cs_csv *t)
{
    int cn = cs_csv_col_find(t, "n_gpus"), cs = cs_csv_col_find(t, "ring_steps"),
        ct = cs_csv_col_find(t, "time_us"), rc;
    double *x = malloc((size_t)t->nrows * sizeof(double)),
           *y = malloc((size_t)t->nrows * sizeof(double));
    struct cs_fit_line L;
    struct cs_error err;
    enum cs_proto p = st->o.proto ? st->o.proto : CS_PROTO_LL;
    enum cs_link_class link = st->o.link ? st->o.link : CS_LINK_NVLINK;
    char key[64], how[512], a[64], b[64];
    int n = 0;

    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return CS_ERR_NOMEM;
    }
    for (int r = 0; r < t->nrows; r++) {
        double g, s, us;

        cs_error_init(&err);
        if ((rc = cs_csv_get_double(t, r, cs, &s, &err)) < 0 ||
            (rc = cs_csv_get_double(t, r, ct, &us, &err)) < 0 ||
            (rc = cs_csv_get_double(t, r, cn, &g, &err)) < 0) {
            cmd_print_error(&err);
            goto fail;
        }
        if (rc == 1)
            continue;
        if (s != 2 * (g - 1) || us <= 0) {
            fprintf(stderr, "collsim: %s:%d: ring_steps %g is not 2(n_gpus-1) for %g GPUs, or "
                            "time not positive\n",
                    t->name, t->lines[r], s, g);
            rc = CS_ERR_INVALID;
            goto fail;
        }
        x[n] = s;
        y[n] = us * 1e-6;
        n++;
    }
    cs_error_init(&err);
    if ((rc = cs_fit_line(x, y, n, st->o.fo.robust, &L, &err)) != 0) {
        fprintf(stderr, "collsim: %s: %s\n", t->name, err.msg);
        goto fail;
    }
    fprintf(st->rep, "\n## %s\n\nTime against ring steps 2(n-1) at a tiny message (LL regime): "
                     "t = launch + steps * call, WLS (weights 1/t^2), %d points.\n\n",
            t->name, n);
    fprintf(st->rep, "- launch (intercept): %s ± %s (95%%, Student t, %d dof)\n",
            fmt_s(L.alpha_s, a, sizeof(a)), fmt_s(L.alpha_ci_s, b, sizeof(b)), L.dof);
    fprintf(st->rep, "- per step (slope): %s ± %s\n", fmt_s(L.slope_s_per_B, a, sizeof(a)),
            fmt_s(L.slope_ci, b, sizeof(b)));
    fprintf(st->rep, "- rms relative residual %.2f%%, max %.2f%%\n\n", 100 * L.rms_rel,
            100 * L.max_rel);
    for (int i = 0; i < n; i++)
        fprintf(st->rep, "  steps %2.0f: measured %s, fitted %s (%+.2f%%)\n", x[i],
                fmt_s(y[i], a, sizeof(a)), fmt_s(L.alpha_s + L.slope_s_per_B * x[i], b, sizeof(b)),
                100 * (L.alpha_s + L.slope_s_per_B * x[i] - y[i]) / y[i]);
    fprintf(st->rep, "\n");
    snprintf(how, sizeof(how), "intercept of time vs ring steps, %s", t->name);
    put(st, "cs.launch_s", L.alpha_s, how);
    /* Later tables attribute their intercepts with this launch cost. */
    st->o.base.launch_s = L.alpha_s;
    snprintf(key, sizeof(key), "cs.call_s.%s.%s", cs_proto_name(p), cs_link_class_name(link));
    snprintf(how, sizeof(how), "slope of time vs ring steps, %s", t->name);
    put(st, key, L.slope_s_per_B, how);
    free(x);
    free(y);
    return 0;
fail:
    free(x);
    free(y);
    return rc;
}

static int fit_measurement_table(struct state *st, const struct cs_csv *t)
{
    int cs = cs_csv_col_find(t, "size_bytes"), ct = cs_csv_col_find(t, "time_us"),
        cb = cs_csv_col_find(t, "busbw_GBps"), cc = cs_csv_col_find(t, "collective"), rc = 0;
    enum coll coll = st->o.coll;
    enum cs_link_class link = st->o.link ? st->o.link : CS_LINK_NVLINK;
    int n = st->o.ranks, nsteps, derived = 0;
    struct series s = {0};
    struct cs_fit_result R;
    char key[64], how[1024], a[64], b[64];

    if (cs_csv_col_find(t, "ring_steps") >= 0 && cs_csv_col_find(t, "n_gpus") >= 0)
        return fit_steps_table(st, t);
    if (coll == 0 && cc >= 0 && t->nrows > 0) {
        coll = coll_parse(cs_csv_cell(t, 0, cc));
        if (coll == 0) {
            fprintf(stderr, "collsim: %s:%d: unknown collective '%s'\n", t->name, t->lines[0],
                    cs_csv_cell(t, 0, cc));
            return CS_ERR_INVALID;
        }
    }
    if (coll == 0)
        coll = COLL_ALLREDUCE;
    if (n == 0)
        n = infer_ranks(t, coll);
    if (n < 2) {
        fprintf(stderr, "collsim: %s: cannot infer the number of ranks from busbw/algbw; give "
                        "--ranks\n",
                t->name);
        return CS_ERR_INVALID;
    }
    nsteps = nsteps_of(coll, n);
    for (int r = 0; r < t->nrows; r++) {
        struct cs_error err;
        double size, us, bus, tt;
        int r1, r2;

        cs_error_init(&err);
        r1 = cs_csv_get_double(t, r, cs, &size, &err);
        r2 = r1 < 0 ? 0 : cs_csv_get_double(t, r, ct, &us, &err);
        if (r1 < 0 || r2 < 0) {
            cmd_print_error(&err);
            rc = CS_ERR_PARSE;
            goto done;
        }
        if (r1 == 1) {
            fprintf(stderr, "collsim: %s:%d: empty size_bytes\n", t->name, t->lines[r]);
            rc = CS_ERR_INVALID;
            goto done;
        }
        if (r2 == 1) {
            /* No time: derive it from busbw (nccl-tests: busbw = S/t * nsteps/n). */
            int r3 = cs_csv_get_double(t, r, cb, &bus, &err);

            if (r3 < 0) {
                cmd_print_error(&err);
                rc = CS_ERR_PARSE;
                goto done;
            }
            if (r3 == 1 || bus <= 0) {
                fprintf(stderr, "collsim: %s:%d: neither time_us nor a positive busbw_GBps\n",
                        t->name, t->lines[r]);
                rc = CS_ERR_INVALID;
                goto done;
            }
            us = size * nsteps / n / (bus * 1e9) * 1e6;
            derived = 1;
        }
        if (size <= 0 || us <= 0) {
            fprintf(stderr, "collsim: %s:%d: size %g B, time %g us: both must be positive\n",
                    t->name, t->lines[r], size, us);
            rc = CS_ERR_INVALID;
            goto done;
        }
        if (size < st->o.size_min || size > st->o.size_max)
            continue;
        tt = us * 1e-6;
        if ((rc = series_add(&s, nsteps * size / n, tt, size)) != 0)
            goto done;
    }
    snprintf(s.label, sizeof(s.label), "%s", t->name);
    fprintf(st->rep, "\n## %s\n\n%s ring over %d ranks: %d steps of S/%d bytes; fitted "
                     "t = A + x / B with x = %d S / %d (bytes over each rank's link).%s\n",
            t->name, coll_names[coll], n, nsteps, n, nsteps, n,
            derived ? " Times derived from busbw (the table has no time column): t = "
                      "S*nsteps/(n*busbw); busbw rounding limits small-size precision."
                    : "");
    if (st->o.size_min > 0 || st->o.size_max < INFINITY)
        fprintf(st->rep, "Sizes restricted to %.0f .. %.0f B.\n", st->o.size_min,
                st->o.size_max);
    if ((rc = fit_series(st, &s, "x (B/link)", &R)) != 0)
        goto done;
    fprintf(st->rep, "\nParameters (segments mapped to protocols in NCCL's order for %s: "
                     "first = LL, last = Simple%s; intercept attributed with launch %s%s):\n\n",
            cs_link_class_name(link), link == CS_LINK_NVLINK ? ", middle of 3 = LL128" : "",
            fmt_s(st->o.base.launch_s, a, sizeof(a)),
            st->o.intercept_deploy ? " and the base per-step cost" : "");
    for (int k = 0; k < R.nseg; k++) {
        const struct cs_fit_line *L = &R.seg[k];
        enum cs_proto p = seg_proto(&st->o, k, R.nseg, L->x_min * n / nsteps);

        if (p == 0) {
            fprintf(st->rep, "- segment %d: not mapped to a protocol (transition regime)\n", k);
            continue;
        }
        if (st->o.intercept_deploy && k == 0 && p != CS_PROTO_SIMPLE) {
            double dep = L->alpha_s - st->o.base.launch_s - nsteps * st->o.base.call_s[p][link];

            snprintf(how, sizeof(how),
                     "%s: intercept %s of segment 0 minus launch and %d x base %s step cost", t->name,
                     fmt_s(L->alpha_s, a, sizeof(a)), nsteps, cs_proto_name(p));
            put(st, "cs.deploy_s", dep > 0 ? dep : 0, how);
        } else if (!st->o.intercept_deploy) {
            double call = (L->alpha_s - st->o.base.launch_s - st->o.base.deploy_s) / nsteps;

            snprintf(key, sizeof(key), "cs.call_s.%s.%s", cs_proto_name(p),
                     cs_link_class_name(link));
            snprintf(how, sizeof(how), "%s: (intercept %s of segment %d - launch) / %d steps",
                     t->name, fmt_s(L->alpha_s, a, sizeof(a)), k, nsteps);
            if (call < 0)
                fprintf(st->rep, "- segment %d: intercept below launch + deploy: %s not set\n", k,
                        key);
            else if (!(L->alpha_ci_s < L->alpha_s))
                fprintf(st->rep, "- segment %d: intercept %s not determined (95%% interval "
                                 "wider than the value): %s not set\n",
                        k, fmt_s(L->alpha_s, a, sizeof(a)), key);
            else
                put(st, key, call, how);
        }
        if (p == CS_PROTO_SIMPLE && (k == R.nseg - 1 || st->o.proto)) {
            snprintf(key, sizeof(key), "cs.link_Bps.%s", cs_link_class_name(link));
            snprintf(how, sizeof(how), "%s: bus bandwidth of segment %d (%.3g .. %.3g B/link), "
                                       "95%% CI [%s, %s]",
                     t->name, k, L->x_min, L->x_max, fmt_bw(L->beta_lo_Bps, a, sizeof(a)),
                     fmt_bw(L->beta_hi_Bps, b, sizeof(b)));
            put(st, key, L->beta_Bps, how);
            if (L->beta_Bps > link_peak_Bps[link])
                fprintf(st->rep, "- flag: bus bandwidth %s is above one %s link's peak %s: the "
                                 "ring's bottleneck is shared or not this link class; the value "
                                 "is an effective one\n",
                        fmt_bw(L->beta_Bps, a, sizeof(a)), cs_link_class_name(link),
                        fmt_bw(link_peak_Bps[link], b, sizeof(b)));
        } else if (isfinite(L->beta_Bps)) {
            fprintf(st->rep, "- segment %d (%s): bus bandwidth %s (reported, no parameter key)\n",
                    k, cs_proto_name(p), fmt_bw(L->beta_Bps, a, sizeof(a)));
        }
    }
done:
    series_cleanup(&s);
    return rc;
}

/* --- harness per-sample CSVs ------------------------------------------------------------ */

static const char *const harness_cols[] = {"test", "mech", "op", "src", "dst", "concurrent",
                                           "nblocks", "nthreads", "chunk_bytes", "bytes", "ops",
                                           "sample", "time_s", "status"};
#define NHCOLS ((int)(sizeof(harness_cols) / sizeof(harness_cols[0])))

struct hseries {
    char key[512];
    char test[64], mech[32], op[64];
    long src, dst, nblocks;
    struct series s;
};

static int parse_long(const struct cs_csv *t, int r, int c, long *out)
{
    const char *s = cs_csv_cell(t, r, c);
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0') {
        fprintf(stderr, "collsim: %s:%d: column %s: '%s' is not an integer\n", t->name,
                t->lines[r], t->header[c], s);
        return CS_ERR_PARSE;
    }
    *out = v;
    return 0;
}

static void map_harness(struct state *st, const struct hseries *h, const struct cs_fit_result *R,
                        const char *file)
{
    const struct cs_fit_line *first = &R->seg[0], *last = &R->seg[R->nseg - 1];
    enum cs_proto p = cs_proto_parse(h->mech);
    const char *ln = st->o.link ? cs_link_class_name(st->o.link) : NULL;
    char key[64], how[1024];
    int local = h->src == h->dst;

    if (p == 0) {
        if (strcmp(h->mech, "ll") == 0 || strcmp(h->mech, "ll8") == 0)
            p = CS_PROTO_LL;
        else if (strcmp(h->mech, "ll128") == 0)
            p = CS_PROTO_LL128;
        else if (strcmp(h->mech, "simple") == 0)
            p = CS_PROTO_SIMPLE;
    }
    snprintf(how, sizeof(how), "%s series %s", file, h->key);
    if (strcmp(h->mech, "launch") == 0) {
        put(st, "cs.launch_s", first->alpha_s + first->slope_s_per_B * first->x_min, how);
    } else if (p != 0) {
        snprintf(key, sizeof(key), "cs.tb_Bps.%s", cs_proto_name(p));
        if (h->nblocks == 1)
            put(st, key, last->beta_Bps, how);
        if (ln != NULL) {
            snprintf(key, sizeof(key), "cs.call_s.%s.%s", cs_proto_name(p), ln);
            put(st, key, first->alpha_s, how);
        } else {
            fprintf(st->rep, "- per-call cost %.3f us not mapped: give --link for the class\n",
                    first->alpha_s * 1e6);
        }
    } else if (local && h->nblocks == 1 && strcmp(h->op, "copy") == 0) {
        /* copy_Bps counts read + write traffic: 2 bytes moved per payload byte. */
        put(st, "cs.copy_Bps", 2 * last->beta_Bps, how);
    } else if (local && h->nblocks == 1 &&
               (strcmp(h->op, "reduce") == 0 || strcmp(h->op, "reduce2") == 0)) {
        /* reduce_Bps counts HBM traffic: two reads and one write per output byte. */
        put(st, "cs.reduce_Bps", 3 * last->beta_Bps, how);
    } else if (!local && strcmp(h->mech, "flag_pingpong") == 0) {
        if (ln == NULL) {
            fprintf(st->rep, "- round trip not mapped: give --link for the class\n");
        } else {
            snprintf(key, sizeof(key), "cs.link_lat_s.%s", ln);
            /* A ping-pong round trip is two one-way latencies. */
            put(st, key, first->alpha_s / 2, how);
        }
    } else if (!local && strcmp(h->op, "copy") == 0) {
        if (ln == NULL) {
            fprintf(st->rep, "- link bandwidth not mapped: give --link for the class\n");
        } else {
            snprintf(key, sizeof(key), "cs.link_Bps.%s", ln);
            put(st, key, last->beta_Bps, how);
        }
    } else {
        fprintf(st->rep, "- not mapped to a parameter (reported only)\n");
    }
}

static int fit_harness(struct state *st, const struct cs_csv *t)
{
    int col[NHCOLS], nh = 0, rc = 0, skipped = 0;
    struct hseries *hs = NULL;
    char *sweep = NULL;

    for (int i = 0; i < NHCOLS; i++)
        if ((col[i] = cs_csv_col_find(t, harness_cols[i])) < 0) {
            fprintf(stderr, "collsim: %s: harness CSV without a '%s' column\n", t->name,
                    harness_cols[i]);
            return CS_ERR_PARSE;
        }
    hs = calloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*hs));
    sweep = calloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*sweep));
    if (hs == NULL || sweep == NULL) {
        free(hs);
        free(sweep);
        return CS_ERR_NOMEM;
    }
    /* A protocol test whose FIFO call size is its payload on every row (chunk_bytes == bytes)
     * sweeps the call size: its sizes form one series instead of one series per chunk size.
     * sweep[r]: row r belongs to such a group (same test..nthreads cells). */
    for (int r = 0; r < t->nrows; r++) {
        sweep[r] = 1;
        for (int q = 0; q < t->nrows && sweep[r]; q++) {
            int same = 1;

            for (int c = 0; c <= 7 && same; c++)
                same = strcmp(cs_csv_cell(t, r, col[c]), cs_csv_cell(t, q, col[c])) == 0;
            if (same && strcmp(cs_csv_cell(t, q, col[8]), cs_csv_cell(t, q, col[9])) != 0)
                sweep[r] = 0;
        }
    }
    for (int r = 0; r < t->nrows; r++) {
        struct cs_error err;
        long src, dst, nblocks, conc, nthreads, ops;
        double bytes, ts, chunk;
        char key[512];
        struct hseries *h = NULL;

        if (strcmp(cs_csv_cell(t, r, col[13]), "ok") != 0) {
            skipped++;
            continue;
        }
        cs_error_init(&err);
        if ((rc = parse_long(t, r, col[3], &src)) || (rc = parse_long(t, r, col[4], &dst)) ||
            (rc = parse_long(t, r, col[5], &conc)) || (rc = parse_long(t, r, col[6], &nblocks)) ||
            (rc = parse_long(t, r, col[7], &nthreads)) || (rc = parse_long(t, r, col[10], &ops)))
            goto done;
        if (cs_csv_get_double(t, r, col[9], &bytes, &err) != 0 ||
            cs_csv_get_double(t, r, col[12], &ts, &err) != 0 ||
            cs_csv_get_double(t, r, col[8], &chunk, &err) != 0) {
            if (err.msg[0] == '\0')
                cs_error_set(&err, t->name, t->lines[r], "empty bytes, time_s or chunk_bytes");
            cmd_print_error(&err);
            rc = CS_ERR_PARSE;
            goto done;
        }
        if (ops < 1 || ts <= 0 || bytes < 0) {
            fprintf(stderr, "collsim: %s:%d: ops %ld, time_s %g, bytes %g: need ops >= 1, "
                            "time > 0, bytes >= 0\n",
                    t->name, t->lines[r], ops, ts, bytes);
            rc = CS_ERR_INVALID;
            goto done;
        }
        if (bytes < st->o.size_min || bytes > st->o.size_max)
            continue;
        if (sweep[r])
            snprintf(key, sizeof(key), "%s/%s/%s src=%ld dst=%ld conc=%ld blocks=%ld threads=%ld "
                                       "chunk=bytes",
                     cs_csv_cell(t, r, col[0]), cs_csv_cell(t, r, col[1]),
                     cs_csv_cell(t, r, col[2]), src, dst, conc, nblocks, nthreads);
        else
            snprintf(key, sizeof(key), "%s/%s/%s src=%ld dst=%ld conc=%ld blocks=%ld threads=%ld "
                                       "chunk=%.0f",
                     cs_csv_cell(t, r, col[0]), cs_csv_cell(t, r, col[1]),
                     cs_csv_cell(t, r, col[2]), src, dst, conc, nblocks, nthreads, chunk);
        for (int i = 0; i < nh && h == NULL; i++)
            if (strcmp(hs[i].key, key) == 0)
                h = &hs[i];
        if (h == NULL) {
            h = &hs[nh++];
            snprintf(h->key, sizeof(h->key), "%s", key);
            snprintf(h->test, sizeof(h->test), "%s", cs_csv_cell(t, r, col[0]));
            snprintf(h->mech, sizeof(h->mech), "%s", cs_csv_cell(t, r, col[1]));
            snprintf(h->op, sizeof(h->op), "%s", cs_csv_cell(t, r, col[2]));
            h->src = src;
            h->dst = dst;
            h->nblocks = nblocks;
        }
        if ((rc = series_add(&h->s, bytes, ts / (double)ops, bytes)) != 0)
            goto done;
    }
    fprintf(st->rep, "\n## %s\n\nHarness per-sample CSV: %d series, %d rows not ok skipped. "
                     "Per-op time = time_s / ops against bytes.\n",
            t->name, nh, skipped);
    for (int c = 0; c < t->ncomments; c++)
        fprintf(st->rep, "%s`# %s`\n", c == 0 ? "\n" : "", t->comments[c]);
    for (int i = 0; i < nh; i++) {
        struct cs_fit_result R;
        struct hseries *h = &hs[i];
        int distinct = 0;

        snprintf(h->s.label, sizeof(h->s.label), "%s: %s", t->name, h->key);
        fprintf(st->rep, "\n### %s\n", h->key);
        for (int j = 1; j < h->s.n && !distinct; j++)
            distinct = h->s.x[j] != h->s.x[0];
        if (!distinct && h->s.n > 0) {
            /* One size (a launch test, say): the median time is the whole answer. */
            double *v = malloc((size_t)h->s.n * sizeof(double));

            if (v == NULL) {
                rc = CS_ERR_NOMEM;
                goto done;
            }
            memcpy(v, h->s.t, (size_t)h->s.n * sizeof(double));
            qsort(v, (size_t)h->s.n, sizeof(double), cmp_d);
            memset(&R, 0, sizeof(R));
            R.nseg = 1;
            R.seg[0].alpha_s = h->s.n % 2 ? v[h->s.n / 2]
                                          : 0.5 * (v[h->s.n / 2 - 1] + v[h->s.n / 2]);
            R.seg[0].x_min = R.seg[0].x_max = h->s.x[0];
            R.seg[0].beta_Bps = INFINITY;
            free(v);
            fprintf(st->rep, "\nOne size (%.0f B), %d samples: median per-op time %.4g us.\n\n",
                    h->s.x[0], h->s.n, R.seg[0].alpha_s * 1e6);
        } else if ((rc = fit_series(st, &h->s, "bytes", &R)) != 0) {
            goto done;
        } else {
            fprintf(st->rep, "\n");
        }
        map_harness(st, h, &R, t->name);
    }
done:
    for (int i = 0; i < nh; i++)
        series_cleanup(&hs[i].s);
    free(hs);
    free(sweep);
    return rc;
}

/* --- output ----------------------------------------------------------------------------- */

struct write_ctx {
    FILE *fp;
    struct state *st;
};

static void write_prop(const char *key, double value, const char *source, void *ctx)
{
    struct write_ctx *w = ctx;

    for (int i = 0; i < w->st->nkeys; i++)
        if (strcmp(w->st->keys[i].key, key) == 0) {
            struct fitted *f = &w->st->keys[i];
            double v = fitted_value(f);

            /* "--" may not appear inside an XML comment. */
            for (char *p = strstr(f->how, "--"); p != NULL; p = strstr(p, "--"))
                p[1] = '_';
            fprintf(w->fp, "<!-- fit (collsim calibrate fit, WLS 1/t^2): %s%s -->\n", f->how,
                    f->n > 1 ? " (median of the values)" : "");
            fprintf(w->fp, "<prop id=\"%s\" value=\"%.9g\"/>\n", key, v);
            return;
        }
    if (!w->st->o.only_fitted)
        fprintf(w->fp, "<!-- not fitted; prior: %s -->\n<prop id=\"%s\" value=\"%.9g\"/>\n",
                source, key, value);
}

static int parse_size(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || v < 0 || !isfinite(v))
        return -1;
    if (*end == 'K' || *end == 'k')
        v *= 1024, end++;
    else if (*end == 'M')
        v *= 1048576, end++;
    else if (*end == 'G')
        v *= 1073741824.0, end++;
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int calibrate_fit(int argc, char **argv)
{
    struct state *st = calloc(1, sizeof(*st));
    const char *out = NULL, *report = NULL;
    const char **files = NULL;
    int nfiles = 0, rc = CS_EXIT_OK;
    char *repbuf = NULL;
    size_t replen = 0;
    FILE *fp;

    if (st == NULL)
        return cmd_usage_error("out of memory");
    files = calloc((size_t)argc, sizeof(*files));
    if (files == NULL) {
        free(st);
        return cmd_usage_error("out of memory");
    }
    cs_params_init(&st->o.base);
    cs_fit_opts_init(&st->o.fo);
    st->o.size_max = INFINITY;
#define NEED_ARG()                                                                                 \
    do {                                                                                           \
        if (i + 1 >= argc) {                                                                       \
            rc = cmd_usage_error("%s needs a value; see 'collsim help calibrate'", argv[i]);       \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--link") == 0) {
            NEED_ARG();
            st->o.link = cs_link_class_parse(argv[++i]);
            if (st->o.link == 0) {
                rc = cmd_usage_error("--link: '%s' is not nvlink, pcie or net", argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--proto") == 0) {
            NEED_ARG();
            i++;
            if (strcmp(argv[i], "auto") == 0) {
                st->o.proto = 0;
            } else if ((st->o.proto = cs_proto_parse(argv[i])) == 0) {
                rc = cmd_usage_error("--proto: '%s' is not LL, LL128, Simple or auto", argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--collective") == 0) {
            NEED_ARG();
            if ((st->o.coll = coll_parse(argv[++i])) == 0) {
                rc = cmd_usage_error("--collective: '%s' is not allreduce, allgather, "
                                     "reducescatter or sendrecv",
                                     argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--ranks") == 0) {
            NEED_ARG();
            if (parse_int(argv[++i], 2, 1 << 20, &st->o.ranks) != 0) {
                rc = cmd_usage_error("--ranks: '%s' is not an integer >= 2", argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--sizes") == 0) {
            char buf[128], *colon;

            NEED_ARG();
            snprintf(buf, sizeof(buf), "%s", argv[++i]);
            colon = strchr(buf, ':');
            if (colon == NULL) {
                rc = cmd_usage_error("--sizes: '%s' is not MIN:MAX", argv[i]);
                goto done;
            }
            *colon = '\0';
            if ((buf[0] && parse_size(buf, &st->o.size_min) != 0) ||
                (colon[1] && parse_size(colon + 1, &st->o.size_max) != 0) ||
                st->o.size_min > st->o.size_max) {
                rc = cmd_usage_error("--sizes: '%s' is not MIN:MAX (bytes, K/M/G suffixes)",
                                     argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--segments") == 0) {
            NEED_ARG();
            i++;
            if (strcmp(argv[i], "auto") != 0 &&
                parse_int(argv[i], 1, CS_FIT_MAX_SEG, &st->o.fo.nsegments) != 0) {
                rc = cmd_usage_error("--segments: '%s' is not auto or 1..%d", argv[i],
                                     CS_FIT_MAX_SEG);
                goto done;
            }
        } else if (strcmp(a, "--min-sizes") == 0) {
            NEED_ARG();
            if (parse_int(argv[++i], 2, 1000, &st->o.fo.min_sizes) != 0) {
                rc = cmd_usage_error("--min-sizes: '%s' is not an integer >= 2", argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--robust") == 0) {
            st->o.fo.robust = 1;
        } else if (strcmp(a, "--intercept") == 0) {
            NEED_ARG();
            i++;
            if (strcmp(argv[i], "step") == 0)
                st->o.intercept_deploy = 0;
            else if (strcmp(argv[i], "deploy") == 0)
                st->o.intercept_deploy = 1;
            else {
                rc = cmd_usage_error("--intercept: '%s' is not step or deploy", argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--set") == 0) {
            char buf[256], *eq;
            struct cs_error err;

            NEED_ARG();
            snprintf(buf, sizeof(buf), "%s", argv[++i]);
            eq = strchr(buf, '=');
            cs_error_init(&err);
            if (eq == NULL) {
                rc = cmd_usage_error("--set: '%s' is not KEY=VALUE", argv[i]);
                goto done;
            }
            *eq = '\0';
            if (cs_params_set(&st->o.base, buf, eq + 1, &err) != 0) {
                cmd_print_error(&err);
                rc = CS_EXIT_USAGE;
                goto done;
            }
        } else if (strcmp(a, "--only-fitted") == 0) {
            st->o.only_fitted = 1;
        } else if (strcmp(a, "-o") == 0) {
            NEED_ARG();
            out = argv[++i];
        } else if (strcmp(a, "--report") == 0) {
            NEED_ARG();
            report = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = cmd_usage_error("calibrate fit: unknown option '%s'", a);
            goto done;
        } else {
            files[nfiles++] = a;
        }
    }
#undef NEED_ARG
    st->o.prior = st->o.base;
    if (nfiles == 0) {
        rc = cmd_usage_error("calibrate fit needs at least one CSV file; see 'collsim help "
                             "calibrate'");
        goto done;
    }
    st->rep = open_memstream(&repbuf, &replen);
    if (st->rep == NULL) {
        rc = cmd_usage_error("out of memory");
        goto done;
    }
    fprintf(st->rep, "# collsim calibrate fit report\n\nInputs:");
    for (int f = 0; f < nfiles; f++)
        fprintf(st->rep, " `%s`", files[f]);
    fprintf(st->rep, "\n\nLink class: %s. Protocol: %s.\n",
            st->o.link ? cs_link_class_name(st->o.link) : "nvlink (default)",
            st->o.proto ? cs_proto_name(st->o.proto) : "auto (segments in NCCL's order)");
    /* Two passes: tables of time against ring steps first, so that their launch cost
     * attributes the intercepts of the size sweeps. */
    for (int pass = 0; pass < 2 && rc == CS_EXIT_OK; pass++)
        for (int f = 0; f < nfiles && rc == CS_EXIT_OK; f++) {
            struct cs_csv *t = NULL;
            struct cs_error err;
            int steps, harness, r = 0;

            cs_error_init(&err);
            if (cs_csv_read(files[f], &t, &err) != 0) {
                cmd_print_error(&err);
                rc = CS_EXIT_USAGE;
                break;
            }
            steps = cs_csv_col_find(t, "ring_steps") >= 0;
            harness = cs_csv_col_find(t, "mech") >= 0 && cs_csv_col_find(t, "time_s") >= 0;
            if (!harness && (cs_csv_col_find(t, "size_bytes") < 0 ||
                             cs_csv_col_find(t, "time_us") < 0)) {
                fprintf(stderr, "collsim: %s:1: neither a measurement table (size_bytes,"
                                "time_us,...) nor a harness CSV (test,mech,...,time_s,...)\n",
                        t->name);
                rc = CS_EXIT_USAGE;
            } else if (pass == 0 && steps) {
                r = fit_steps_table(st, t);
            } else if (pass == 1 && harness) {
                r = fit_harness(st, t);
            } else if (pass == 1 && !steps) {
                r = fit_measurement_table(st, t);
            }
            if (r != 0)
                rc = CS_EXIT_USAGE;
            if (pass == 1 && rc == CS_EXIT_OK) {
                if (st->files[0])
                    strncat(st->files, " ", sizeof(st->files) - strlen(st->files) - 1);
                strncat(st->files, files[f], sizeof(st->files) - strlen(st->files) - 1);
            }
            cs_csv_free(t);
        }
    if (rc != CS_EXIT_OK)
        goto done;
    fprintf(st->rep, "\n## Parameters written\n\n");
    for (int i = 0; i < st->nkeys; i++) {
        double prior = NAN;

        cs_params_get(&st->o.prior, st->keys[i].key, &prior);
        fprintf(st->rep, "- `%s` = %.6g (%d value%s, median; prior %.6g)\n", st->keys[i].key,
                fitted_value(&st->keys[i]), st->keys[i].n, st->keys[i].n == 1 ? "" : "s", prior);
    }
    if (st->nkeys == 0)
        fprintf(st->rep, "- none: no series mapped to a parameter\n");
    fflush(st->rep);
    fp = out == NULL || strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
    if (fp == NULL) {
        rc = cmd_usage_error("cannot write %s", out);
        goto done;
    }
    {
        struct write_ctx w = {fp, st};

        fprintf(fp, "<!-- collsim calibrate fit: %s -->\n", st->files);
        cs_params_each(&st->o.base, write_prop, &w);
        if (fp != stdout && fclose(fp) != 0)
            rc = cmd_usage_error("cannot write %s", out);
        else if (fp == stdout)
            fflush(stdout);
    }
    if (report != NULL) {
        FILE *rf = strcmp(report, "-") == 0 ? stdout : fopen(report, "w");

        if (rf == NULL || fwrite(repbuf, 1, replen, rf) != replen) {
            rc = cmd_usage_error("cannot write %s", report);
        }
        if (rf != NULL && rf != stdout)
            fclose(rf);
    }
done:
    if (st->rep != NULL)
        fclose(st->rep);
    free(repbuf);
    free(files);
    free(st);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc < 2)
        return cmd_usage_error("calibrate needs a subcommand (fit); see 'collsim help "
                               "calibrate'");
    if (strcmp(argv[1], "fit") == 0)
        return calibrate_fit(argc - 1, argv + 1);
    return cmd_usage_error("calibrate: unknown subcommand '%s'; see 'collsim help calibrate'",
                           argv[1]);
}
