/* refit.c: a platform fitted through the model (refit.h says how). */
#include "refit.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "fit.h"
#include "topo.h"

/* The fit's ranges and prior widths, by key pattern (PROTO and CLASS stand for any protocol and
 * link class; the first match wins). Ranges are what the hardware allows, wide on purpose: a
 * fitted value at an edge is reported as such. Widths say how far from the prior the data must
 * pull a key: ln 4 (a factor 4 for one standard deviation) for the NCCL priors, which are a
 * tuner's round figures; ln 2 for datasheet link rates and for a hop's latency within a node
 * (a store's flight through NVLink or PCIe and the poll that sees it: NCCL's hwLat, and the
 * nccltests123 DGX table's 1.9 us ring step less a later launch; across a network it varies
 * with the NIC, ln 4); ln 8 for the MSCCL executor's start, estimated, not measured. A table of
 * one GPU count cannot tell the launch from 2(n-1) hop latencies, nor an MSCCL table's extra
 * start from either: the widths decide how it is shared. */
static const struct keydef {
    const char *pattern;
    double lo, hi, width;
} keydefs[] = {
    {"cs.launch_s", 0.2e-6, 500e-6, 1.386},
    {"cs.launch_gpu_s", 0.05e-6, 100e-6, 1.386},
    {"cs.link_lat_s.net", 0.02e-6, 100e-6, 1.386},
    {"cs.link_lat_s.CLASS", 0.02e-6, 100e-6, 0.693},
    {"cs.link_Bps.CLASS", 0.05e9, 5000e9, 0.693},
    {"cs.sys_Bps", 0.05e9, 500e9, 0.693},
    {"cs.call_s.PROTO.CLASS", 0.005e-6, 200e-6, 1.386},
    {"cs.tb_Bps.PROTO", 0.05e9, 2000e9, 1.386},
    {"cs.pass_bytes.PROTO", 64, 1 << 20, 1.386},
    {"cs.pass_s.PROTO", 0.005e-6, 20e-6, 1.386},
    {"cs.link_eff.PROTO.CLASS", 0.002, 1, 1.386},
    {"cs.copy_Bps", 1e9, 20000e9, 1.386},
    {"cs.reduce_Bps", 1e9, 20000e9, 1.386},
    {"cs.prologue_s", 0.005e-6, 100e-6, 2.079},
    {"cs.dep_s", 0.005e-6, 50e-6, 1.386},
    {"cs.barrier_s", 0.001e-6, 20e-6, 1.386},
    {"cs.flag_s", 0.005e-6, 50e-6, 1.386},
};

/* Whether key matches pattern, PROTO and CLASS matching any one dotted part. */
static int matches(const char *pattern, const char *key)
{
    while (*pattern && *key) {
        if (strncmp(pattern, "PROTO", 5) == 0 || strncmp(pattern, "CLASS", 5) == 0) {
            pattern += 5;
            key += strcspn(key, ".");
            continue;
        }
        if (*pattern++ != *key++)
            return 0;
    }
    return *pattern == '\0' && *key == '\0';
}

int cs_refit_key_limits(const char *key, double *lo, double *hi, double *width)
{
    for (size_t i = 0; i < sizeof(keydefs) / sizeof(keydefs[0]); i++)
        if (matches(keydefs[i].pattern, key)) {
            *lo = keydefs[i].lo;
            *hi = keydefs[i].hi;
            *width = keydefs[i].width;
            return 0;
        }
    return -1;
}

/* Add key to keys unless it is there, has no positive value in p or no limits, or a table sets
 * it (set=). */
static void add_key(const struct cs_refit *r, const char *key, char (*keys)[64], int max, int *n)
{
    double v, lo, hi, w;

    if (*n >= max || cs_params_get(&r->base, key, &v) != 0 || !(v > 0) ||
        cs_refit_key_limits(key, &lo, &hi, &w) != 0)
        return;
    for (int i = 0; i < *n; i++)
        if (strcmp(keys[i], key) == 0)
            return;
    for (int t = 0; t < r->ntables; t++)
        for (int k = 0; k < r->tables[t].c.nops; k++) {
            const char *arg = r->tables[t].c.ops[k].arg;

            if (!r->tables[t].c.ops[k].is_file && strncmp(arg, key, strlen(key)) == 0 &&
                arg[strlen(key)] == '=')
                return;
        }
    snprintf(keys[(*n)++], 64, "%s", key);
}

/* The link classes a family's platform has. */
static int family_classes(const struct cs_platform_spec *s, enum cs_link_class *cls, int *sys)
{
    int n = 0;

    *sys = 0;
    switch (s->family) {
    case CS_FAM_DGX:
        cls[n++] = CS_LINK_NVLINK;
        if (s->nodes > 1)
            cls[n++] = CS_LINK_NET;
        *sys = s->nic_other_socket && s->nodes > 1;
        break;
    case CS_FAM_PCIE_4GPU:
        cls[n++] = CS_LINK_PCIE;
        *sys = !s->one_socket;
        break;
    case CS_FAM_NVBRIDGE:
        cls[n++] = CS_LINK_NVLINK;
        cls[n++] = CS_LINK_PCIE;
        *sys = !s->one_socket;
        break;
    case CS_FAM_HIER:
        cls[n++] = CS_LINK_NVLINK;
        cls[n++] = s->between == CS_LINK_NET ? CS_LINK_NET : CS_LINK_PCIE;
        break;
    case CS_FAM_PCIE_NET:
        cls[n++] = CS_LINK_NET;
        if (s->gpus_per_node > 1)
            cls[n++] = CS_LINK_PCIE;
        *sys = s->nic_other_socket;
        break;
    case CS_FAM_VIRTUAL:
        cls[n++] = CS_LINK_HBM;
        break;
    case CS_FAM_TOPO:
        /* a machine from its files: NVLink where GPUs have NVLinks or NVSwitch ports, PCIe
         * always (GPUs and NICs hang off it), the network across nodes, the CPU link where the
         * files name more than one CPU */
        if (s->topo != NULL && (s->topo->nnvl > 0 || s->topo->nvl_rate > 0))
            cls[n++] = CS_LINK_NVLINK;
        cls[n++] = CS_LINK_PCIE;
        if (s->nodes > 1)
            cls[n++] = CS_LINK_NET;
        for (int d = 0, cpus = 0; s->topo != NULL && d < s->topo->ndev; d++)
            if (s->topo->dev[d].kind == CS_TOPO_CPU && ++cpus > 1)
                *sys = 1;
        break;
    }
    return n;
}

void cs_refit_candidates(const struct cs_refit *r, char (*keys)[64], int max, int *n)
{
    enum cs_link_class cls[4];
    int protos[CS_NPROTO] = {0}, ncls, sys, later = 0, locals = 0;
    char k[64];

    *n = 0;
    ncls = family_classes(r->spec, cls, &sys);
    for (int t = 0; t < r->ntables; t++) {
        const struct cs_case *c = &r->tables[t].c;
        struct cs_params p = r->base;

        if (r->tables[t].held_out)
            continue;
        for (int q = 0; q < c->nprotos; q++)
            protos[cs_proto_parse(c->proto[q])] = 1;
        if (cs_case_apply_params(c, &p, NULL) == 0 && p.gpus_per_process > 1)
            later = 1;
        /* a schedule of its own (MSCCL XML) runs local copies and reductions, dependency
         * flags and the runtime's own costs */
        locals |= !c->gen_nccl && !c->nccl;
    }
    add_key(r, "cs.launch_s", keys, max, n);
    if (later)
        add_key(r, "cs.launch_gpu_s", keys, max, n);
    for (int i = 0; i < ncls; i++) {
        const char *cn = cs_link_class_name(cls[i]);

        snprintf(k, sizeof(k), "cs.link_lat_s.%s", cn);
        add_key(r, k, keys, max, n);
        snprintf(k, sizeof(k), "cs.link_Bps.%s", cn);
        add_key(r, k, keys, max, n);
    }
    if (sys)
        add_key(r, "cs.sys_Bps", keys, max, n);
    for (int q = CS_PROTO_LL; q <= CS_PROTO_SIMPLE; q++) {
        const char *pn = cs_proto_name((enum cs_proto)q);

        if (!protos[q])
            continue;
        snprintf(k, sizeof(k), "cs.tb_Bps.%s", pn);
        add_key(r, k, keys, max, n);
        /* a pass is one line per thread (the code's, not a fitted quantity): its fixed time */
        snprintf(k, sizeof(k), "cs.pass_s.%s", pn);
        add_key(r, k, keys, max, n);
        for (int i = 0; i < ncls; i++) {
            const char *cn = cs_link_class_name(cls[i]);

            snprintf(k, sizeof(k), "cs.call_s.%s.%s", pn, cn);
            add_key(r, k, keys, max, n);
            if (q != CS_PROTO_SIMPLE) {
                snprintf(k, sizeof(k), "cs.link_eff.%s.%s", pn, cn);
                add_key(r, k, keys, max, n);
            }
        }
    }
    if (locals) {
        add_key(r, "cs.reduce_Bps", keys, max, n);
        add_key(r, "cs.copy_Bps", keys, max, n);
        add_key(r, "cs.prologue_s", keys, max, n);
        add_key(r, "cs.dep_s", keys, max, n);
        add_key(r, "cs.barrier_s", keys, max, n);
        add_key(r, "cs.flag_s", keys, max, n);
    }
}

int cs_refit_predict(const struct cs_refit *r, const struct cs_params *p, int held_out,
                     struct cs_error *err)
{
    int rc = cs_platform_write(r->spec, p, r->plat_path, err);

    for (int t = 0; t < r->ntables && rc == 0; t++) {
        struct cs_refit_table *T = &r->tables[t];

        if (T->held_out && !held_out)
            continue;
        rc = cs_case_predict(&T->c, r->plat_path, 1, T->p, T->n, err);
    }
    return rc;
}

/* The model of cs_mfit_run: keys set in a copy of the base parameters, every fitted table
 * predicted, its points in order. */
struct model {
    struct cs_refit *r;
    const struct cs_mfit_key *keys;
    int nkeys;
};

/* The parameters under keys theta: the base with each key set. */
static int params_at(const struct model *m, const double *theta, struct cs_params *p,
                     struct cs_error *err)
{
    *p = m->r->base;
    for (int k = 0; k < m->nkeys; k++) {
        char v[64];
        int rc;

        snprintf(v, sizeof(v), "%.17g", theta[k]);
        if ((rc = cs_params_set(p, m->keys[k].key, v, err)) != 0)
            return rc;
    }
    return 0;
}

/* Every fitted table predicted under theta, the points' predictions in order into pred[0..n). */
static int predict_at(const struct model *m, const struct cs_refit *r, const double *theta,
                      double *pred, int n, struct cs_error *err)
{
    struct cs_params p;
    int rc, i = 0;

    if ((rc = params_at(m, theta, &p, err)) != 0 || (rc = cs_refit_predict(r, &p, 0, err)) != 0)
        return rc;
    for (int t = 0; t < r->ntables; t++)
        for (int j = 0; j < r->tables[t].n && !r->tables[t].held_out && i < n; j++)
            pred[i++] = r->tables[t].p[j].pred_s;
    return 0;
}

static int model_fn(void *ctx, const double *theta, struct cs_mfit_point *pts, int n,
                    struct cs_error *err)
{
    const struct model *m = ctx;
    double *pred = malloc((size_t)n * sizeof(*pred));
    int rc;

    if (pred == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    if ((rc = predict_at(m, m->r, theta, pred, n, err)) == 0)
        for (int i = 0; i < n; i++)
            pts[i].pred = pred[i];
    free(pred);
    return rc;
}

/* A worker's answer: its status and error, then n predictions. */
struct answer {
    int rc;
    struct cs_error err;
};

/* In a child: theta's predictions (on a platform file of its own) down fd. */
static void worker(const struct model *m, const double *theta, int n, int k, int fd)
{
    struct cs_refit r = *m->r;
    char path[1100];
    struct answer a;
    double *pred = calloc((size_t)n, sizeof(*pred));

    snprintf(path, sizeof(path), "%s.w%d", m->r->plat_path, k);
    r.plat_path = path;
    cs_error_init(&a.err);
    /* a signal to the fit (its process group) removes this child's platform file too */
    a.rc = pred == NULL || cs_cleanup_add(path) != 0 ? CS_ERR_NOMEM
                                                     : predict_at(m, &r, theta, pred, n, &a.err);
    unlink(path);
    cs_cleanup_drop(path);
    if (cs_fd_write_all(fd, &a, sizeof(a)) != 0 ||
        (a.rc == 0 && cs_fd_write_all(fd, pred, (size_t)n * sizeof(*pred)) != 0))
        _exit(3);
    _exit(0);
}

/* The Jacobian's columns predicted by up to r->workers forked children at a time (each replay
 * forks its own simulating child as well). */
static int batch_fn(void *ctx, const double *thetas, int mcount, int nkeys, double *preds, int n,
                    struct cs_error *err)
{
    const struct model *m = ctx;
    int w = m->r->workers > 1 ? m->r->workers : 1, rc = 0;

    for (int j0 = 0; j0 < mcount && rc == 0; j0 += w) {
        int nj = mcount - j0 < w ? mcount - j0 : w, fds[64];
        pid_t pids[64];
        static char wpath[64][1100]; /* each worker's platform file, removed on a signal */

        for (int j = 0; j < nj; j++)
            wpath[j][0] = '\0';
        for (int j = 0; j < nj; j++) {
            int pfd[2];

            pids[j] = -1;
            fds[j] = -1;
            if (pipe(pfd) != 0) {
                rc = cs_error_fail(err, CS_ERR_SIM, NULL, 0, "cannot make a pipe");
                break;
            }
            snprintf(wpath[j], sizeof(wpath[j]), "%s.w%d", m->r->plat_path, j0 + j);
            if (cs_cleanup_add(wpath[j]) != 0) {
                close(pfd[0]);
                close(pfd[1]);
                wpath[j][0] = '\0';
                rc = cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
                break;
            }
            fflush(NULL);
            pids[j] = fork();
            if (pids[j] == 0) {
                close(pfd[0]);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                worker(m, thetas + (size_t)(j0 + j) * nkeys, n, j0 + j, pfd[1]);
            }
            close(pfd[1]);
            fds[j] = pfd[0];
            if (pids[j] < 0) {
                close(pfd[0]);
                fds[j] = -1;
                rc = cs_error_fail(err, CS_ERR_SIM, NULL, 0, "cannot fork a worker");
                break;
            }
        }
        for (int j = 0; j < nj; j++) {
            struct answer a;

            if (fds[j] >= 0) {
                if (rc == 0 && cs_fd_read_all(fds[j], &a, sizeof(a)) != 0)
                    rc = cs_error_fail(err, CS_ERR_SIM, NULL, 0, "a worker of the fit died");
                else if (rc == 0 && a.rc != 0) {
                    *err = a.err;
                    rc = a.rc;
                } else if (rc == 0 && cs_fd_read_all(fds[j], preds + (size_t)(j0 + j) * n,
                                                     (size_t)n * sizeof(*preds)) != 0)
                    rc = cs_error_fail(err, CS_ERR_SIM, NULL, 0, "a worker of the fit died");
                close(fds[j]);
            }
            if (pids[j] > 0)
                waitpid(pids[j], NULL, 0);
            if (wpath[j][0] != '\0') {
                unlink(wpath[j]); /* the worker's own unlink, should it have died first */
                cs_cleanup_drop(wpath[j]);
            }
        }
    }
    return rc;
}

int cs_refit_run(struct cs_refit *r, struct cs_mfit_key *keys, int nkeys, int *insensitive,
                 const struct cs_mfit_opts *o, struct cs_mfit_result *res, struct cs_params *out,
                 struct cs_error *err)
{
    struct model m = {r, keys, nkeys};
    struct cs_mfit_point *pts;
    struct cs_mfit_opts mo = *o;
    struct cs_params p = r->base;
    int n = 0, i = 0, rc;

    for (int t = 0; t < r->ntables; t++)
        n += r->tables[t].held_out ? 0 : r->tables[t].n;
    if (n == 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0, "no measured size to fit");
    for (int k = 0; k < nkeys; k++) {
        struct cs_mfit_key *K = &keys[k];
        double lo, hi, w;

        if (cs_params_get(&r->base, K->key, &K->prior) != 0 || !(K->prior > 0))
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "--fit %s: not a parameter with a positive value", K->key);
        if (cs_refit_key_limits(K->key, &lo, &hi, &w) != 0)
            return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                                 "--fit %s: not a parameter the fit moves (a count, a "
                                 "deployment choice)",
                                 K->key);
        K->lo = fmin(lo, K->prior);
        K->hi = fmax(hi, K->prior);
        if (!(K->width > 0))
            K->width = w;
    }
    if ((pts = calloc((size_t)n, sizeof(*pts))) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    for (int t = 0; t < r->ntables; t++)
        for (int j = 0; j < r->tables[t].n && !r->tables[t].held_out; j++, i++)
            pts[i] = (struct cs_mfit_point){r->tables[t].p[j].meas_s, 1, NAN, t,
                                            r->tables[t].p[j].contra != 0};
    mo.screen = mo.screen > 0 ? mo.screen : CS_REFIT_SCREEN;
    if (r->workers > 1)
        mo.batch = batch_fn;
    rc = cs_mfit_run(keys, nkeys, pts, n, model_fn, &m, &mo, res, err);
    free(pts);
    if (rc != 0)
        return rc;
    for (int k = 0; k < nkeys; k++) {
        char v[64];

        snprintf(v, sizeof(v), "%.17g", keys[k].value);
        if ((rc = cs_params_set(&p, keys[k].key, v, err)) != 0)
            return rc;
        if (insensitive != NULL)
            insensitive[k] = keys[k].insensitive;
    }
    if ((rc = cs_refit_predict(r, &p, 1, err)) != 0)
        return rc;
    *out = p;
    return 0;
}

void cs_refit_stats(const struct cs_refit *r, int held_out, struct cs_refit_stats *out)
{
    int total = 0, k = 0;
    double *e;

    memset(out, 0, sizeof(*out));
    out->median = out->max = out->max_kept = out->max_kept_size = NAN;
    out->max_kept_table = -1;
    for (int t = 0; t < r->ntables; t++)
        total += r->tables[t].n;
    if ((e = malloc((size_t)(total ? total : 1) * sizeof(*e))) == NULL)
        return;
    for (int t = 0; t < r->ntables; t++) {
        const struct cs_refit_table *T = &r->tables[t];

        if (held_out >= 0 && T->held_out != held_out)
            continue;
        for (int j = 0; j < T->n; j++) {
            const struct cs_valid_point *q = &T->p[j];
            double a;

            out->n++;
            if (!isfinite(q->pred_s))
                continue;
            a = fabs(q->pred_s - q->meas_s) / q->meas_s;
            e[k++] = a;
            out->max = k == 1 ? a : fmax(out->max, a);
            if (q->contra)
                out->ncontra++;
            else if (!(a <= out->max_kept)) {
                out->max_kept = a;
                out->max_kept_size = q->size_bytes;
                out->max_kept_table = t;
            }
        }
    }
    out->npred = k;
    if (k > 0)
        out->median = cs_fit_median(e, k);
    free(e);
}
