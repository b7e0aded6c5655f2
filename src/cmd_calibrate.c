/* cmd_calibrate.c: `collsim calibrate fit`: platform parameters from measurement CSVs (the two
 * input kinds and the mapping are in the usage text). Every series gets a segmented weighted fit
 * (fit.h), a harness protocol series of several call counts a launch + calls fit, that calib.h
 * maps to parameter keys; this file reads the inputs and writes the report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "calib.h"
#include "cmd.h"
#include "cmd_calibrate.h"
#include "csv.h"
#include "fdio.h"
#include "fit.h"
#include "meas.h"
#include "params.h"
#include "parse.h"
#include "plan.h"
#include "platform.h"
#include "util.h"

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
    "  measurement tables (size_bytes,time_us,algbw_GBps,busbw_GBps,placement,...), or the raw\n"
    "    output of an nccl-tests binary (both placements become rows): a ring\n"
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
    "    bytes, as in protocol tests, joins the sizes into one series); rows not ok are skipped,\n"
    "    exec rows (whole schedules) are counted and left out. A protocol series of several\n"
    "    call counts fits t = launch + ops x (call + bytes/rate) over its launches.\n"
    "      launch isolated, 1 block     cs.launch_s (median; other launch rows reported only)\n"
    "      ll|ll128|simple send_recv,   cs.tb_Bps.P = rate (loopback, 1 pair, 1 block);\n"
    "        1 pair, 1 block            between GPUs: cs.call_s.P.LINK = call(P) - call(LL) of\n"
    "                                   the pair for LL128, Simple (needs --link); loopback\n"
    "                                   calls and other protocol series reported only\n"
    "      op copy, local, 1 block      cs.copy_Bps = 2 beta (read + write)\n"
    "      op reduce|reduce2, local,    cs.reduce_Bps = 3 beta (two reads, one write)\n"
    "        1 block\n"
    "      op copy, src != dst          cs.link_Bps.LINK\n"
    "      flag_pingpong, src != dst    cs.link_lat_s.LINK = intercept / 2\n"
    "    Several series on one key: the median.\n"
    "--set KEY=VALUE changes a prior (e.g. cs.launch_s used to attribute intercepts).\n"
    "\n" CS_CALIBRATE_PLATFORM_USAGE;

struct opts {
    enum cs_link_class link; /* 0: not given */
    enum cs_proto proto;     /* 0: auto */
    enum cs_meas_coll coll;  /* 0: from the file, else allreduce */
    int ranks;               /* 0: inferred */
    double size_min, size_max;
    struct cs_fit_opts fo;
    int intercept_deploy;
    int only_fitted;
    struct cs_params base;  /* working values: a steps table's launch replaces the prior */
    struct cs_params prior; /* defaults and --set, for the report */
    const char *out, *report;
    const char **files;
    int nfiles;
};

struct state {
    struct opts o;
    struct cs_calib cal;
    FILE *rep;
};

/* One series of samples; a point's message size (the residual table's) is x * bytes_per_x. */
struct series {
    char label[512];
    struct cs_fit_pt *p;
    int n, cap;
    double bytes_per_x;
};

static int series_add(struct series *s, double x, double t)
{
    struct cs_fit_pt *p = cs_array_slot((void **)&s->p, s->n, &s->cap, sizeof(*p));

    if (p == NULL)
        return CS_ERR_NOMEM;
    *p = (struct cs_fit_pt){x, t};
    s->n++;
    return 0;
}

/* The report's table of segments: alpha and beta with intervals, residuals, flags. */
static void report_segments(FILE *rep, const struct cs_fit_result *R, int npoints,
                            const char *xunit)
{
    char a[64], b[64], c[64], d[64], e[64];

    fprintf(rep,
            "\nWeighted least squares (weights 1/t^2), %d points, %d segment%s chosen by BIC (",
            npoints, R->nseg, R->nseg == 1 ? "" : "s");
    for (int m = 1; m <= CS_FIT_MAX_SEG; m++) {
        if (isnan(R->bic_by_m[m]))
            fprintf(rep, "%sm=%d: -", m > 1 ? ", " : "", m);
        else
            fprintf(rep, "%sm=%d: %.1f", m > 1 ? ", " : "", m, R->bic_by_m[m]);
    }
    fprintf(rep, "). 95%% intervals from the WLS covariance, Student t.\n\n");
    fprintf(rep,
            "| seg | %s range | alpha (95%% CI) | beta [95%% CI] | n_half | rms rel | "
            "max rel | flags |\n|---|---|---|---|---|---|---|---|\n",
            xunit);
    for (int k = 0; k < R->nseg; k++) {
        const struct cs_fit_line *L = &R->seg[k];
        char flags[256];

        snprintf(flags, sizeof(flags), "%s%s%s%s", L->alpha_clamped ? "alpha<0 clamped; " : "",
                 L->slope_clamped ? "slope<0 clamped; " : "",
                 L->max_rel > 0.10 ? "max residual >10%; " : "",
                 L->dof == 0 ? "no dof for intervals; " : "");
        fprintf(rep,
                "| %d | %.6g .. %.6g | %s ± %s | %s [%s, %s] | %.4g | %.2f%% | %.2f%% | %s |\n", k,
                L->x_min, L->x_max, cs_calib_fmt_time(L->alpha_s, a, sizeof(a)),
                cs_calib_fmt_time(L->alpha_ci_s, b, sizeof(b)),
                cs_calib_fmt_bw(L->beta_Bps, c, sizeof(c)),
                cs_calib_fmt_bw(L->beta_lo_Bps, d, sizeof(d)),
                cs_calib_fmt_bw(L->beta_hi_Bps, e, sizeof(e)), L->alpha_s * L->beta_Bps,
                100 * L->rms_rel, 100 * L->max_rel, flags);
    }
}

/* The report's table of residuals, one row per distinct size. */
static int report_residuals(FILE *rep, const struct cs_fit_result *R, const struct series *s,
                            const char *xunit)
{
    struct cs_fit_resid *res = NULL;
    char a[64], b[64];
    int nres;

    if (cs_fit_residuals(R, s->p, s->n, &res, &nres) != 0)
        return cmd_usage_error("out of memory");
    fprintf(rep,
            "\n| size (B) | %s | samples | measured (median) | fitted | error |\n"
            "|---|---|---|---|---|---|\n",
            xunit);
    for (int i = 0; i < nres; i++)
        fprintf(rep, "| %.0f | %.6g | %d | %s | %s | %+.2f%% |\n", res[i].x * s->bytes_per_x,
                res[i].x, res[i].nsamples, cs_calib_fmt_time(res[i].t_meas_s, a, sizeof(a)),
                cs_calib_fmt_time(res[i].t_pred_s, b, sizeof(b)), 100 * res[i].err_rel);
    free(res);
    return 0;
}

/* Fit a series and report its segments and residuals. Returns 0 or an error code (message
 * printed). */
static int fit_series(struct state *st, const struct series *s, const char *xunit,
                      struct cs_fit_result *R)
{
    struct cs_error err;

    cs_error_init(&err);
    if (cs_fit_segmented(s->p, s->n, &st->o.fo, R, &err) != 0)
        return cmd_usage_error("%s: %s", s->label, err.msg);
    report_segments(st->rep, R, s->n, xunit);
    return report_residuals(st->rep, R, s, xunit);
}

/* --- tables of time against ring steps ------------------------------------------------- */

/* The (steps, time) points of a steps table into p: 0, or an error (message printed). */
static int read_steps(const struct cs_csv *t, struct cs_fit_pt *p, int *n)
{
    int cn = cs_csv_col_find(t, "n_gpus"), cs = cs_csv_col_find(t, "ring_steps"),
        ct = cs_csv_col_find(t, "time_us"), rc = 0;

    *n = 0;
    for (int r = 0; r < t->nrows; r++) {
        struct cs_error err;
        double g, s = NAN, us = NAN;

        cs_error_init(&err);
        if ((rc = cs_csv_get_double(t, r, cs, &s, &err)) < 0 ||
            (rc = cs_csv_get_double(t, r, ct, &us, &err)) < 0 ||
            (rc = cs_csv_get_double(t, r, cn, &g, &err)) < 0) {
            cmd_print_error(&err);
            return rc;
        }
        if (rc == 1)
            continue;
        if (s != 2 * (g - 1) || us <= 0)
            return cmd_usage_error("%s:%d: ring_steps %g is not 2(n_gpus-1) for %g GPUs, or time "
                                   "not positive",
                                   t->name, t->lines[r], s, g);
        p[(*n)++] = (struct cs_fit_pt){s, us * 1e-6};
    }
    return 0;
}

/* Time against ring steps (n_gpus, ring_steps columns): launch and per-step cost. */
static int fit_steps_table(struct state *st, const struct cs_csv *t)
{
    struct cs_fit_pt *p = malloc((size_t)(t->nrows + 1) * sizeof(*p));
    struct cs_fit_line L;
    struct cs_error err;
    char a[64], b[64];
    int n = 0, rc = p ? read_steps(t, p, &n) : CS_ERR_NOMEM;

    cs_error_init(&err);
    if (rc == 0 && (rc = cs_fit_line(p, n, st->o.fo.robust, &L, &err)) != 0)
        fprintf(stderr, "collsim: %s: %s\n", t->name, err.msg);
    if (rc != 0)
        goto done;
    fprintf(st->rep,
            "\n## %s\n\nTime against ring steps 2(n-1) at a tiny message (LL regime): "
            "t = launch + steps * call, WLS (weights 1/t^2), %d points.\n\n",
            t->name, n);
    fprintf(st->rep, "- launch (intercept): %s ± %s (95%%, Student t, %d dof)\n",
            cs_calib_fmt_time(L.alpha_s, a, sizeof(a)),
            cs_calib_fmt_time(L.alpha_ci_s, b, sizeof(b)), L.dof);
    fprintf(st->rep, "- per step (slope): %s ± %s\n",
            cs_calib_fmt_time(L.slope_s_per_B, a, sizeof(a)),
            cs_calib_fmt_time(L.slope_ci, b, sizeof(b)));
    fprintf(st->rep, "- rms relative residual %.2f%%, max %.2f%%\n\n", 100 * L.rms_rel,
            100 * L.max_rel);
    for (int i = 0; i < n; i++)
        fprintf(st->rep, "  steps %2.0f: measured %s, fitted %s (%+.2f%%)\n", p[i].x,
                cs_calib_fmt_time(p[i].t, a, sizeof(a)),
                cs_calib_fmt_time(L.alpha_s + L.slope_s_per_B * p[i].x, b, sizeof(b)),
                100 * (L.alpha_s + L.slope_s_per_B * p[i].x - p[i].t) / p[i].t);
    fprintf(st->rep, "\n");
    cs_calib_map_steps(&st->cal, &L, st->o.proto ? st->o.proto : CS_PROTO_LL,
                       st->o.link ? st->o.link : CS_LINK_NVLINK, t->name);
    /* Later tables attribute their intercepts with this launch cost. */
    st->o.base.launch_s = L.alpha_s;
done:
    free(p);
    return rc;
}

/* --- measurement tables ----------------------------------------------------------------- */

/* The collective (--collective, else the table's collective column, else AllReduce) and the
 * rank count (--ranks, else inferred from busbw/algbw). 0, or an error (message printed). */
static int table_ring(const struct state *st, const struct cs_csv *t, enum cs_meas_coll *coll,
                      int *n)
{
    int cc = cs_csv_col_find(t, "collective");

    *coll = st->o.coll;
    if (*coll == 0 && cc >= 0 && t->nrows > 0) {
        *coll = cs_meas_coll_parse(cs_csv_cell(t, 0, cc));
        if (*coll == 0)
            return cmd_usage_error("%s:%d: unknown collective '%s'", t->name, t->lines[0],
                                   cs_csv_cell(t, 0, cc));
    }
    if (*coll == 0)
        *coll = CS_MEAS_ALLREDUCE;
    *n = st->o.ranks ? st->o.ranks : cs_meas_infer_ranks(t, *coll);
    if (*n < 2)
        return cmd_usage_error(
            "%s: cannot infer the number of ranks from busbw/algbw; give --ranks", t->name);
    return 0;
}

/* The table's rows within --sizes as a series in x = nsteps * S / n. */
static int table_series(const struct state *st, const struct cs_csv *t, int nsteps, int n,
                        struct series *s, int *derived)
{
    struct cs_meas_row *rows = NULL;
    struct cs_error err;
    int nrows = 0, rc;

    cs_error_init(&err);
    if ((rc = cs_meas_read_rows(t, nsteps, n, &rows, &nrows, derived, &err)) != 0) {
        cmd_print_error(&err);
        return rc;
    }
    for (int r = 0; r < nrows && rc == 0; r++) {
        double size = rows[r].size_bytes;

        if (rows[r].ngpus > 0)
            rc = cmd_usage_error("%s:%d: empty size_bytes", t->name, rows[r].line);
        else if (size >= st->o.size_min && size <= st->o.size_max)
            rc = series_add(s, nsteps * size / n, rows[r].time_s);
    }
    free(rows);
    snprintf(s->label, sizeof(s->label), "%s", t->name);
    s->bytes_per_x = (double)n / nsteps;
    return rc;
}

static int fit_measurement_table(struct state *st, const struct cs_csv *t)
{
    enum cs_link_class link = st->o.link ? st->o.link : CS_LINK_NVLINK;
    struct cs_calib_ring ring = {t->name,    link, st->o.proto, 0, 0, st->o.intercept_deploy,
                                 &st->o.base};
    struct series s = {0};
    struct cs_fit_result R;
    enum cs_meas_coll coll;
    int rc, derived = 0;
    char a[64];

    if ((rc = table_ring(st, t, &coll, &ring.nranks)) != 0)
        return rc;
    ring.nsteps = cs_meas_ring_steps(coll, ring.nranks);
    if ((rc = table_series(st, t, ring.nsteps, ring.nranks, &s, &derived)) != 0)
        goto done;
    fprintf(st->rep,
            "\n## %s\n\n%s ring over %d ranks: %d steps of S/%d bytes; fitted "
            "t = A + x / B with x = %d S / %d (bytes over each rank's link).%s\n",
            t->name, cs_meas_coll_name(coll), ring.nranks, ring.nsteps, ring.nranks, ring.nsteps,
            ring.nranks,
            derived ? " Times derived from busbw (the table has no time column): t = "
                      "S*nsteps/(n*busbw); busbw rounding limits small-size precision."
                    : "");
    if (st->o.size_min > 0 || st->o.size_max < INFINITY)
        fprintf(st->rep, "Sizes restricted to %.0f .. %.0f B.\n", st->o.size_min, st->o.size_max);
    if ((rc = fit_series(st, &s, "x (B/link)", &R)) != 0)
        goto done;
    fprintf(st->rep,
            "\nParameters (segments mapped to protocols in NCCL's order for %s: "
            "first = LL, last = Simple%s; intercept attributed with launch %s%s):\n\n",
            cs_link_class_name(link), link == CS_LINK_NVLINK ? ", middle of 3 = LL128" : "",
            cs_calib_fmt_time(st->o.base.launch_s, a, sizeof(a)),
            st->o.intercept_deploy ? " and the base per-step cost" : "");
    cs_calib_map_ring(&st->cal, &ring, &R);
done:
    free(s.p);
    return rc;
}

/* --- harness per-sample CSVs ------------------------------------------------------------ */

/* The columns a harness CSV needs: a series' identity test..nthreads, the six integers src..ops
 * in a row. */
static const char *const harness_cols[] = {
    "test",     "mech", "op",          "src",   "dst",    "concurrent", "nblocks",
    "nthreads", "ops",  "chunk_bytes", "bytes", "time_s", "status",     "sample"};
#define NHCOLS ((int)(sizeof(harness_cols) / sizeof(harness_cols[0])))
enum { H_TEST, H_MECH, H_OP, H_SRC, H_OPS = H_SRC + 5, H_CHUNK, H_BYTES, H_TIME, H_STATUS };

struct hseries {
    char key[512];
    int row;         /* its first row: mech and op */
    long long id[5]; /* src, dst, concurrent, nblocks, nthreads */
    struct series s; /* per-op time against bytes */
    /* A protocol series: each launch's calls and total time, and their fit (calls.nops 0 until
     * fitted; 1: one call count, only the rate known). */
    struct cs_fit_call_pt *cp;
    int ncp, capcp;
    struct cs_fit_calls calls;
};

/* A harness table: its columns and its series so far. */
struct harness {
    const struct cs_csv *t;
    int col[NHCOLS];
    struct hseries *hs;
    int nh, skipped, exec; /* rows not ok; whole-schedule rows, left out of the fit */
};

/* A protocol test whose FIFO call size is its payload on every row (chunk_bytes == bytes)
 * sweeps the call size: its sizes form one series instead of one series per chunk size.
 * 1 when row r belongs to such a group (same test..nthreads cells). */
static int sweeps(const struct harness *h, int r)
{
    const struct cs_csv *t = h->t;

    for (int q = 0; q < t->nrows; q++) {
        int same = 1;

        for (int c = H_TEST; c < H_OPS && same; c++)
            same = strcmp(cs_csv_cell(t, r, h->col[c]), cs_csv_cell(t, q, h->col[c])) == 0;
        if (same &&
            strcmp(cs_csv_cell(t, q, h->col[H_CHUNK]), cs_csv_cell(t, q, h->col[H_BYTES])) != 0)
            return 0;
    }
    return 1;
}

/* The series named key, created with row r's identity when new. */
static struct hseries *series_of(struct harness *h, int r, const char *key, const long long *id)
{
    struct hseries *s;

    for (int i = 0; i < h->nh; i++)
        if (strcmp(h->hs[i].key, key) == 0)
            return &h->hs[i];
    s = &h->hs[h->nh++];
    snprintf(s->key, sizeof(s->key), "%s", key);
    s->row = r;
    memcpy(s->id, id, sizeof(s->id));
    s->s.bytes_per_x = 1;
    return s;
}

/* Row r into its series (rows not ok are counted and skipped). 0, or an error (printed). */
static int harness_row(struct state *st, struct harness *h, int r)
{
    const struct cs_csv *t = h->t;
    long long id[6]; /* src, dst, concurrent, nblocks, nthreads, ops */
    double bytes, ts, chunk;
    struct cs_error err;
    char key[512], chunk_s[32] = "bytes";
    struct hseries *hs;

    if (strcmp(cs_csv_cell(t, r, h->col[H_STATUS]), "ok") != 0) {
        h->skipped++;
        return 0;
    }
    /* A whole schedule's time is a prediction's to match, not a per-call cost. */
    if (strcmp(cs_csv_cell(t, r, h->col[H_TEST]), "exec") == 0) {
        h->exec++;
        return 0;
    }
    for (int i = 0; i < 6; i++) {
        int c = h->col[H_SRC + i];

        if (cs_parse_ll(cs_csv_cell(t, r, c), -2147483647LL, 2147483647LL, &id[i]) != 0)
            return cmd_usage_error("%s:%d: column %s: '%s' is not an integer", t->name, t->lines[r],
                                   t->header[c], cs_csv_cell(t, r, c));
    }
    cs_error_init(&err);
    if (cs_meas_read_bytes(t, r, h->col[H_BYTES], &bytes, &err) != 0 ||
        cs_csv_get_double(t, r, h->col[H_TIME], &ts, &err) != 0 ||
        cs_csv_get_double(t, r, h->col[H_CHUNK], &chunk, &err) != 0) {
        cs_error_set(&err, t->name, t->lines[r], "empty bytes, time_s or chunk_bytes");
        cmd_print_error(&err);
        return CS_ERR_PARSE;
    }
    if (id[5] < 1 || ts <= 0 || bytes < 0)
        return cmd_usage_error("%s:%d: ops %lld, time_s %g, bytes %g: need ops >= 1, time > 0, "
                               "bytes >= 0",
                               t->name, t->lines[r], id[5], ts, bytes);
    if (bytes < st->o.size_min || bytes > st->o.size_max)
        return 0;
    if (!sweeps(h, r))
        snprintf(chunk_s, sizeof(chunk_s), "%.0f", chunk);
    snprintf(key, sizeof(key),
             "%s/%s/%s src=%lld dst=%lld conc=%lld blocks=%lld threads=%lld chunk=%s",
             cs_csv_cell(t, r, h->col[H_TEST]), cs_csv_cell(t, r, h->col[H_MECH]),
             cs_csv_cell(t, r, h->col[H_OP]), id[0], id[1], id[2], id[3], id[4], chunk_s);
    hs = series_of(h, r, key, id);
    if (cs_calib_is_proto(cs_csv_cell(t, r, h->col[H_MECH]))) {
        struct cs_fit_call_pt *q = cs_array_slot((void **)&hs->cp, hs->ncp, &hs->capcp, sizeof(*q));

        if (q == NULL)
            return CS_ERR_NOMEM;
        *q = (struct cs_fit_call_pt){(double)id[5], bytes, ts};
        hs->ncp++;
    }
    return series_add(&hs->s, bytes, ts / (double)id[5]);
}

/* A series of one size (a launch test, say): the median time is the whole answer. */
static int one_size(struct state *st, const struct series *s, struct cs_fit_result *R)
{
    double *t = malloc((size_t)s->n * sizeof(*t));

    if (t == NULL)
        return cmd_usage_error("out of memory");
    for (int i = 0; i < s->n; i++)
        t[i] = s->p[i].t;
    memset(R, 0, sizeof(*R));
    R->nseg = 1;
    R->seg[0].alpha_s = cs_fit_median(t, s->n);
    R->seg[0].x_min = R->seg[0].x_max = s->p[0].x;
    R->seg[0].beta_Bps = INFINITY;
    fprintf(st->rep, "\nOne size (%.0f B), %d samples: median per-op time %.4g us.\n\n", s->p[0].x,
            s->n, R->seg[0].alpha_s * 1e6);
    free(t);
    return 0;
}

static int cmp_call_pt(const void *a, const void *b)
{
    const struct cs_fit_call_pt *p = a, *q = b;
    int c = cs_cmp_ll(p->ops, q->ops);

    return c ? c : (c = cs_cmp_dbl(p->x, q->x)) ? c : cs_cmp_dbl(p->t, q->t);
}

/* The launch + calls fit of a protocol series of several call counts into hs->calls, reported
 * with the residual at every call count and size; a series the fit cannot take is reported so
 * (hs->calls.nops 0). */
static void calls_fit(struct state *st, struct hseries *hs)
{
    struct cs_fit_calls *F = &hs->calls;
    struct cs_error err;
    char a[64], b[64], c[64];

    cs_error_init(&err);
    if (cs_fit_calls(hs->cp, hs->ncp, F, &err) != 0) {
        fprintf(st->rep, "\nLaunch + calls fit not possible: %s.\n\n", err.msg);
        *F = (struct cs_fit_calls){NAN, NAN, NAN, NAN, NAN, NAN, hs->ncp, 0, 0};
        return;
    }
    fprintf(st->rep,
            "\nLaunch + calls fit, t = launch + ops x (call + bytes / rate), WLS (weights 1/t^2), "
            "%d launches of %d call counts: launch %s, per call %s, rate %s; rms rel %.2f%%, max "
            "%.2f%%%s%s%s.\n\n| ops | bytes | samples | measured (median) | fitted | error |\n"
            "|---|---|---|---|---|---|\n",
            F->n, F->nops, cs_calib_fmt_time(F->launch_s, a, sizeof(a)),
            cs_calib_fmt_time(F->call_s, b, sizeof(b)), cs_calib_fmt_bw(F->beta_Bps, c, sizeof(c)),
            100 * F->rms_rel, 100 * F->max_rel, F->clamped & 1 ? "; launch<0 clamped" : "",
            F->clamped & 2 ? "; call<0 clamped" : "", F->clamped & 4 ? "; slope<0 clamped" : "");
    qsort(hs->cp, (size_t)hs->ncp, sizeof(*hs->cp), cmp_call_pt);
    for (int k = 0; k < hs->ncp;) {
        const struct cs_fit_call_pt *q = &hs->cp[k];
        int e = k, m;
        double meas, fit;

        while (e < hs->ncp && hs->cp[e].ops == q->ops && hs->cp[e].x == q->x)
            e++;
        m = e - k;
        meas = m % 2 ? hs->cp[k + m / 2].t : 0.5 * (hs->cp[k + m / 2 - 1].t + hs->cp[k + m / 2].t);
        fit = F->launch_s + q->ops * (F->call_s + q->x * F->slope_s_per_B);
        fprintf(st->rep, "| %.0f | %.0f | %d | %s | %s | %+.2f%% |\n", q->ops, q->x, m,
                cs_calib_fmt_time(meas, a, sizeof(a)), cs_calib_fmt_time(fit, b, sizeof(b)),
                100 * (fit - meas) / meas);
        k = e;
    }
    fprintf(st->rep, "\n");
}

/* The number of distinct call counts of a protocol series, up to 2. */
static int call_counts(const struct hseries *hs)
{
    for (int i = 1; i < hs->ncp; i++)
        if (hs->cp[i].ops != hs->cp[0].ops)
            return 2;
    return hs->ncp > 0;
}

/* The mapping's view of series hs (how: its comment text, of len bytes). */
static struct cs_calib_harness harness_of(const struct state *st, const struct harness *h,
                                          const struct hseries *hs, char *how, size_t len)
{
    const struct cs_csv *t = h->t;

    snprintf(how, len, "%s series %s", t->name, hs->key);
    return (struct cs_calib_harness){cs_csv_cell(t, hs->row, h->col[H_TEST]),
                                     cs_csv_cell(t, hs->row, h->col[H_MECH]),
                                     cs_csv_cell(t, hs->row, h->col[H_OP]),
                                     hs->id[0],
                                     hs->id[1],
                                     hs->id[2],
                                     hs->id[3],
                                     st->o.link,
                                     how};
}

/* Fit one harness series and report it; map it to its parameter unless it is a protocol series
 * (whose mapping needs the LL series of the same pair: proto_params). */
static int harness_fit(struct state *st, const struct harness *h, struct hseries *hs)
{
    char how[1024];
    struct cs_calib_harness ch = harness_of(st, h, hs, how, sizeof(how));
    struct series *s = &hs->s;
    struct cs_fit_result R;
    int distinct = 0, rc = 0, proto = cs_calib_is_proto(ch.mech);

    snprintf(s->label, sizeof(s->label), "%.200s: %.300s", h->t->name, hs->key);
    fprintf(st->rep, "\n### %s\n", hs->key);
    if (proto && call_counts(hs) == 2) {
        calls_fit(st, hs);
        return 0;
    }
    for (int j = 1; j < s->n && !distinct; j++)
        distinct = s->p[j].x != s->p[0].x;
    if (!distinct && s->n > 0)
        rc = one_size(st, s, &R);
    else if ((rc = fit_series(st, s, "bytes", &R)) == 0)
        fprintf(st->rep, "\n");
    if (rc != 0)
        return rc;
    if (proto) {
        /* One call count: the launch is in every per-call intercept; only the rate is clean. */
        const struct cs_fit_line *L = &R.seg[R.nseg - 1];

        hs->calls = (struct cs_fit_calls){
            NAN, NAN, L->slope_s_per_B, L->beta_Bps, L->rms_rel, L->max_rel, s->n, 1, 0};
        fprintf(st->rep,
                "One call count (%.0f per launch): the intercept holds the launch cost / %.0f; "
                "only the rate maps.\n",
                hs->cp[0].ops, hs->cp[0].ops);
    } else {
        cs_calib_map_harness(&st->cal, &ch, &R);
    }
    return 0;
}

/* LL's per-call cost on the pair of protocol series hs (same test, op, src, dst, pairs and
 * threadblocks), from a launch + calls fit; NAN when there is none. */
static double ll_call(const struct harness *h, const struct hseries *hs)
{
    const struct cs_csv *t = h->t;

    for (int i = 0; i < h->nh; i++) {
        const struct hseries *q = &h->hs[i];
        const char *mech = cs_csv_cell(t, q->row, h->col[H_MECH]);

        if ((strcasecmp(mech, "ll") == 0 || strcmp(mech, "ll8") == 0) && q->calls.nops >= 2 &&
            memcmp(q->id, hs->id, 4 * sizeof(q->id[0])) == 0 &&
            strcmp(cs_csv_cell(t, q->row, h->col[H_TEST]),
                   cs_csv_cell(t, hs->row, h->col[H_TEST])) == 0 &&
            strcmp(cs_csv_cell(t, q->row, h->col[H_OP]), cs_csv_cell(t, hs->row, h->col[H_OP])) ==
                0)
            return q->calls.call_s;
    }
    return NAN;
}

/* The protocol series' parameters, once all are fitted. */
static void proto_params(struct state *st, const struct harness *h)
{
    int header = 0;

    for (int i = 0; i < h->nh; i++) {
        const struct hseries *hs = &h->hs[i];
        char how[1024];
        struct cs_calib_harness ch = harness_of(st, h, hs, how, sizeof(how));

        if (!cs_calib_is_proto(ch.mech))
            continue;
        if (!header++)
            fprintf(st->rep, "\n### Protocol series to parameters\n");
        fprintf(st->rep, "\n%s:\n\n", hs->key);
        cs_calib_map_proto(&st->cal, &ch, &hs->calls, ll_call(h, hs));
    }
}

static int fit_harness(struct state *st, const struct cs_csv *t)
{
    struct harness h = {t, {0}, NULL, 0, 0, 0};
    int rc = 0;

    for (int i = 0; i < NHCOLS; i++)
        if ((h.col[i] = cs_csv_col_find(t, harness_cols[i])) < 0)
            return cmd_usage_error("%s: harness CSV without a '%s' column", t->name,
                                   harness_cols[i]);
    if ((h.hs = calloc((size_t)(t->nrows ? t->nrows : 1), sizeof(*h.hs))) == NULL)
        rc = CS_ERR_NOMEM;
    for (int r = 0; r < t->nrows && rc == 0; r++)
        rc = harness_row(st, &h, r);
    if (rc == 0) {
        fprintf(st->rep,
                "\n## %s\n\nHarness per-sample CSV: %d series, %d rows not ok skipped. "
                "Per-op time = time_s / ops against bytes.\n",
                t->name, h.nh, h.skipped);
        if (h.exec > 0)
            fprintf(st->rep,
                    "%d exec rows (whole schedules) left out of the fit: a schedule's time is "
                    "compared with `collsim predict`, not fitted to a parameter.\n",
                    h.exec);
        for (int c = 0; c < t->ncomments; c++)
            fprintf(st->rep, "%s`# %s`\n", c == 0 ? "\n" : "", t->comments[c]);
    }
    for (int i = 0; i < h.nh && rc == 0; i++)
        rc = harness_fit(st, &h, &h.hs[i]);
    if (rc == 0)
        proto_params(st, &h);
    for (int i = 0; i < h.nh; i++) {
        free(h.hs[i].s.p);
        free(h.hs[i].cp);
    }
    free(h.hs);
    return rc;
}

/* --- options ---------------------------------------------------------------------------- */

/* Long options only: their values are letters outside the short options "o:". */
static const char calibrate_opts[] = "link=l: proto=p: collective=c: ranks=n: sizes=s: segments=g: "
                                     "min-sizes=m: robust=R intercept=i: set=S: only-fitted=F "
                                     "report=r:";

/* --set KEY=VALUE (v) into p, KEY copied to key[len]; 0, or an exit code. */
static int take_set(struct cs_params *p, const char *v, char *key, size_t len)
{
    const char *eq = strchr(v, '=');
    struct cs_error err;

    if (eq == NULL)
        return cmd_usage_error("--set: '%s' is not KEY=VALUE", v);
    snprintf(key, len, "%.*s", (int)(eq - v), v);
    cs_error_init(&err);
    if (cs_params_set(p, key, eq + 1, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

/* --link into *link; 0, or an exit code. */
static int take_link(enum cs_link_class *link, const char *v)
{
    *link = cs_link_class_parse(v);
    return *link ? 0 : cmd_usage_error("--link: '%s' is not nvlink, pcie or net", v);
}

/* One option into o; 0, or an exit code. */
static int take_option(void *ctx, int c, const char *v)
{
    struct opts *o = ctx;
    char key[256];

    switch (c) {
    case 'l':
        return take_link(&o->link, v);
    case 'p':
        o->proto = strcmp(v, "auto") == 0 ? 0 : cs_proto_parse(v);
        return o->proto || strcmp(v, "auto") == 0
                   ? 0
                   : cmd_usage_error("--proto: '%s' is not LL, LL128, Simple or auto", v);
    case 'c':
        o->coll = cs_meas_coll_parse(v);
        return o->coll ? 0
                       : cmd_usage_error("--collective: '%s' is not allreduce, allgather, "
                                         "reducescatter or sendrecv",
                                         v);
    case 'n':
        return cmd_opt_int("--ranks", v, 2, 1 << 20, &o->ranks, "an integer >= 2");
    case 's':
        if (cs_meas_parse_range(v, &o->size_min, &o->size_max) != 0)
            return cmd_usage_error("--sizes: '%s' is not MIN:MAX (bytes, K/M/G suffixes)", v);
        return 0;
    case 'g':
        o->fo.nsegments = 0;
        return strcmp(v, "auto") == 0 ? 0
                                      : cmd_opt_int("--segments", v, 1, CS_FIT_MAX_SEG,
                                                    &o->fo.nsegments, "auto or 1..4");
    case 'm':
        return cmd_opt_int("--min-sizes", v, 2, 1000, &o->fo.min_sizes, "an integer >= 2");
    case 'R':
        o->fo.robust = 1;
        return 0;
    case 'i':
        o->intercept_deploy = strcmp(v, "deploy") == 0;
        return o->intercept_deploy || strcmp(v, "step") == 0
                   ? 0
                   : cmd_usage_error("--intercept: '%s' is not step or deploy", v);
    case 'S':
        return take_set(&o->base, v, key, sizeof(key));
    case 'F':
        o->only_fitted = 1;
        return 0;
    case 'o':
        o->out = v;
        return 0;
    case 'r':
        o->report = v;
        return 0;
    }
    return CS_EXIT_USAGE;
}

/* argv of `calibrate fit` into o (o->files points into argv); 0, or an exit code. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    struct cmd_opts t;
    int rc;

    cs_params_init(&o->base);
    o->size_max = INFINITY;
    cmd_opts_init(&t, calibrate_opts);
    if ((rc = cmd_getopts(argc, argv, "o:", t.opt, take_option, o)) != 0)
        return rc;
    o->prior = o->base;
    o->files = (const char **)argv + optind;
    o->nfiles = argc - optind;
    if (o->nfiles == 0)
        return cmd_usage_error("calibrate fit needs at least one CSV file; see 'collsim help "
                               "calibrate'");
    return 0;
}

/* --- inputs and outputs ----------------------------------------------------------------- */

/* Read and fit one file in pass 0 (tables of time against ring steps, whose launch cost then
 * attributes the other tables' intercepts) or pass 1 (the others). 0, or an exit code. */
static int fit_file(struct state *st, const char *path, int pass)
{
    struct cs_csv *t = NULL;
    struct cs_error err;
    int steps, harness, r = 0;

    cs_error_init(&err);
    if (cs_meas_read(path, &t, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    steps = cs_csv_col_find(t, "ring_steps") >= 0;
    harness = cs_csv_col_find(t, "mech") >= 0 && cs_csv_col_find(t, "time_s") >= 0;
    if (!harness && (cs_csv_col_find(t, "size_bytes") < 0 || cs_csv_col_find(t, "time_us") < 0)) {
        r = cmd_usage_error("%s:1: neither a measurement table (size_bytes,time_us,...) nor a "
                            "harness CSV (test,mech,...,time_s,...)",
                            t->name);
    } else if (pass == 0 && steps) {
        r = fit_steps_table(st, t);
    } else if (pass == 1 && harness) {
        r = fit_harness(st, t);
    } else if (pass == 1 && !steps) {
        r = fit_measurement_table(st, t);
    }
    cs_csv_free(t);
    return r ? CS_EXIT_USAGE : CS_EXIT_OK;
}

/* The report's head and its closing list of the parameters written. */
static void report_head(struct state *st)
{
    fprintf(st->rep, "# collsim calibrate fit report\n\nInputs:");
    for (int f = 0; f < st->o.nfiles; f++)
        fprintf(st->rep, " `%s`", st->o.files[f]);
    fprintf(st->rep, "\n\nLink class: %s. Protocol: %s.\n",
            st->o.link ? cs_link_class_name(st->o.link) : "nvlink (default)",
            st->o.proto ? cs_proto_name(st->o.proto) : "auto (segments in NCCL's order)");
}

static void report_params(struct state *st)
{
    fprintf(st->rep, "\n## Parameters written\n\n");
    for (int i = 0; i < st->cal.nkeys; i++) {
        const struct cs_calib_key *k = &st->cal.keys[i];
        double prior = NAN;

        cs_params_get(&st->o.prior, k->key, &prior);
        fprintf(st->rep, "- `%s` = %.6g (%d value%s, median; prior %.6g)\n", k->key,
                cs_calib_value(k), k->n, k->n == 1 ? "" : "s", prior);
    }
    if (st->cal.nkeys == 0)
        fprintf(st->rep, "- none: no series mapped to a parameter\n");
    fflush(st->rep);
}

/* buf[0..len) into path through cs_outfile_open; 0, or an error in err. */
static int write_buffer(const char *path, const char *buf, size_t len, struct cs_error *err)
{
    struct cs_outfile of;
    int rc = cs_outfile_open(&of, path, err);

    if (rc != 0)
        return rc;
    fwrite(buf, 1, len, of.fp);
    return cs_outfile_close(&of, err); /* a failed write fails the close */
}

/* The parameters (-o) and the report (--report), each through cs_outfile_open ("-" or none:
 * stdout): an exit code. */
static int write_outputs(struct state *st, const char *repbuf, size_t replen)
{
    const char *out = st->o.out ? st->o.out : "-", *report = st->o.report;
    char files[2048] = "";
    struct cs_outfile of;
    struct cs_error err;

    cs_error_init(&err);
    /* a value no platform takes is not written: what the fit made of the tables is no GPU's */
    for (int k = 0; k < st->cal.nkeys; k++) {
        const struct cs_calib_key *f = &st->cal.keys[k];
        double v = cs_calib_value(f);

        if (!cs_params_in_range(f->key, v)) {
            fprintf(stderr,
                    "collsim: calibrate fit: %s = %.6g, outside what the hardware allows (%s), "
                    "from %s: the tables' times are not those of a GPU collective; nothing "
                    "written\n",
                    f->key, v, cs_params_range(f->key), f->how);
            return CS_EXIT_USAGE;
        }
    }
    for (int f = 0; f < st->o.nfiles; f++)
        snprintf(files + strlen(files), sizeof(files) - strlen(files), "%s%s", f ? " " : "",
                 st->o.files[f]);
    if (cs_outfile_open(&of, out, &err) == 0) {
        cs_calib_write_props(&st->cal, &st->o.base, st->o.only_fitted, files, of.fp);
        cs_outfile_close(&of, &err); /* a failed write fails the close */
    }
    if (err.msg[0] == '\0' && report != NULL)
        write_buffer(report, repbuf, replen, &err);
    if (err.msg[0] == '\0')
        return CS_EXIT_OK;
    cmd_print_error(&err);
    return CS_EXIT_USAGE;
}

static int calibrate_fit(int argc, char **argv)
{
    struct state *st = calloc(1, sizeof(*st));
    char *repbuf = NULL;
    size_t replen = 0;
    int rc;

    if (st == NULL)
        return cmd_usage_error("out of memory");
    if ((rc = parse_args(argc, argv, &st->o)) != 0)
        goto done;
    st->rep = open_memstream(&repbuf, &replen);
    if (st->rep == NULL) {
        rc = cmd_usage_error("out of memory");
        goto done;
    }
    cs_calib_init(&st->cal, st->rep);
    report_head(st);
    for (int pass = 0; pass < 2 && rc == CS_EXIT_OK; pass++)
        for (int f = 0; f < st->o.nfiles && rc == CS_EXIT_OK; f++)
            rc = fit_file(st, st->o.files[f], pass);
    if (rc == CS_EXIT_OK) {
        report_params(st);
        rc = write_outputs(st, repbuf, replen);
    }
done:
    if (st->rep != NULL)
        fclose(st->rep);
    free(repbuf);
    free(st);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc < 2)
        return cmd_usage_error("calibrate needs a subcommand (fit, platform); see 'collsim help "
                               "calibrate'");
    if (strcmp(argv[1], "fit") == 0)
        return calibrate_fit(argc - 1, argv + 1);
    if (strcmp(argv[1], "platform") == 0)
        return cmd_calibrate_platform(argc - 1, argv + 1);
    return cmd_usage_error("calibrate: unknown subcommand '%s'; see 'collsim help calibrate'",
                           argv[1]);
}
