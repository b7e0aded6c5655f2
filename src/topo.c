/* topo.c: a machine from what its files say (views combined, priors), and its platform's links
 * and routes. */
#include "topo.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "ncclxml.h"
#include "smitopo.h"
#include "util.h"

/* ---- GPUs collsim has priors for */

/* PCI device ids of NVIDIA (vendor 10de) from the PCI ID Repository (pci-ids.ucw.cz), and the
 * names CUDA gives them (nccl-tests' banner prints these); 20b0 (p4d), 20b5 (NC A100 v4) and
 * 2330 (OCI BM.GPU.H100.8) are also those of the shared topology files. */
static const struct model {
    int device;
    const char *what;
    enum cs_gpu_kind kind;
    int sxm;
} models[] = {
    {0x20b0, "A100 SXM4 40GB", CS_GPU_A100, 1}, {0x20b2, "A100 SXM4 80GB", CS_GPU_A100, 1},
    {0x20b1, "A100 PCIe 40GB", CS_GPU_A100, 0}, {0x20f1, "A100 PCIe 40GB", CS_GPU_A100, 0},
    {0x20b5, "A100 PCIe 80GB", CS_GPU_A100, 0}, {0x2330, "H100 SXM5 80GB", CS_GPU_H100, 1},
    {0x2331, "H100 PCIe", CS_GPU_H100_PCIE, 0}, {0x2335, "H200 SXM 141GB", CS_GPU_H200, 1},
};

/* Each kind's NVLinks (the most a GPU has), one link's bandwidth in NCCL's model, and its PCIe
 * generation: A100 12 NVLink3 at SM80_NVLINK_BW 20 GB/s, PCIe Gen4 (nccl-a100.md 1.4, 2);
 * Hopper 18 NVLink4 (SXM; 12 on an H100 PCIe's bridge) at SM90_NVLINK_BW 20.6 GB/s, PCIe Gen5
 * (platform.c's priors). */
static int kind_links(const struct cs_topo_gpu *g)
{
    return g->kind == CS_GPU_A100 || g->kind == CS_GPU_H100_PCIE ? 12 : 18;
}

static double kind_rate(const struct cs_topo_gpu *g)
{
    return g->kind == CS_GPU_A100 ? 20e9 : 20.6e9;
}

static double kind_GTs(const struct cs_topo_gpu *g)
{
    return g->kind == CS_GPU_A100 ? 16 : 32;
}

static const char *kind_what(const struct cs_topo_gpu *g)
{
    switch (g->kind) {
    case CS_GPU_A100:
        return g->sxm ? "A100 SXM4" : "A100 PCIe";
    case CS_GPU_H100:
        return "H100 SXM5";
    case CS_GPU_H100_PCIE:
        return "H100 PCIe";
    case CS_GPU_H200:
        return "H200 SXM";
    }
    return "unknown GPU";
}

int cs_topo_gpu_parse(const char *name, struct cs_topo_gpu *g)
{
    memset(g, 0, sizeof(*g));
    g->sxm = 1;
    if (strcmp(name, "a100-pcie") == 0) {
        g->kind = CS_GPU_A100;
        g->sxm = 0;
    } else if ((g->kind = cs_gpu_kind_parse(name)) == 0) {
        return -1;
    }
    g->sxm = strcmp(name, "a100-pcie") != 0 && g->kind != CS_GPU_H100_PCIE;
    snprintf(g->what, sizeof(g->what), "the gpu option, %s", name);
    return 0;
}

int cs_topo_gpu_by_device(int device, struct cs_topo_gpu *g)
{
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        if (models[i].device == device) {
            memset(g, 0, sizeof(*g));
            g->kind = models[i].kind;
            g->sxm = models[i].sxm;
            snprintf(g->what, sizeof(g->what), "PCI 10de:%04x, %s", device, models[i].what);
            return 1;
        }
    return 0;
}

/* Whether s holds word, case aside. */
static int has_word(const char *s, const char *word)
{
    size_t n = strlen(word);

    for (; *s; s++)
        if (strncasecmp(s, word, n) == 0)
            return 1;
    return 0;
}

int cs_topo_gpu_by_name(const char *name, struct cs_topo_gpu *g)
{
    memset(g, 0, sizeof(*g));
    /* A800, H800, H20, GH200 and the NVL cards have other NVLinks or memories */
    if (has_word(name, "A800") || has_word(name, "H800") || has_word(name, "GH200") ||
        has_word(name, "H20 ") || has_word(name, "NVL"))
        return 0;
    if (has_word(name, "A100")) {
        g->kind = CS_GPU_A100;
        g->sxm = !has_word(name, "PCIE");
    } else if (has_word(name, "H100")) {
        g->kind = has_word(name, "PCIE") ? CS_GPU_H100_PCIE : CS_GPU_H100;
        g->sxm = g->kind == CS_GPU_H100;
    } else if (has_word(name, "H200")) {
        g->kind = CS_GPU_H200;
        g->sxm = 1;
    } else {
        return 0;
    }
    snprintf(g->what, sizeof(g->what), "\"%.60s\"", name);
    return 1;
}

/* ---- views */

void cs_topo_init(struct cs_topo *t)
{
    memset(t, 0, sizeof(*t));
    t->log_file = -1;
}

void cs_topo_cleanup(struct cs_topo *t)
{
    cs_free_each(12, t->dev, t->nvl, t->rel, t->gpus, t->nic_of, t->head, t->gdr, t->via, t->up_Bps,
                 t->net_Bps, t->nvs_Bps, t->notes);
    cs_topo_init(t);
}

void cs_topo_free(struct cs_topo *t)
{
    if (t != NULL) {
        cs_topo_cleanup(t);
        free(t);
    }
}

int cs_topo_add_file(struct cs_topo *t, const char *name)
{
    if (t->nfiles == CS_TOPO_MAX_FILES)
        return -1;
    snprintf(t->files[t->nfiles], sizeof(t->files[0]), "%s", name);
    return t->nfiles++;
}

void cs_topo_dev_init(struct cs_topo_dev *d, enum cs_topo_kind kind, int parent, int file, int line)
{
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->parent = parent;
    d->file = file;
    d->line = line;
    d->numa = d->cuda_dev = d->gdr = d->nvs_links = d->net_dev = -1;
    d->cpu_family = d->cpu_model = -1;
}

int cs_topo_add_dev(struct cs_topo *t, const struct cs_topo_dev *d)
{
    struct cs_topo_dev *slot;

    if (t->ndev == CS_TOPO_MAX_DEVS ||
        (slot = cs_array_slot((void **)&t->dev, t->ndev, &t->cap_dev, sizeof(*slot))) == NULL)
        return -1;
    *slot = *d;
    return t->ndev++;
}

int cs_topo_add_nvl(struct cs_topo *t, int a, int b, int count, int file, int line)
{
    struct cs_topo_nvl *slot;

    if (t->nnvl == CS_TOPO_MAX_DEVS * 8 ||
        (slot = cs_array_slot((void **)&t->nvl, t->nnvl, &t->cap_nvl, sizeof(*slot))) == NULL)
        return -1;
    *slot = (struct cs_topo_nvl){a < b ? a : b, a < b ? b : a, count, file, line};
    return t->nnvl++;
}

int cs_topo_add_rel(struct cs_topo *t, int a, int b, enum cs_topo_level level, int file, int line)
{
    struct cs_topo_rel *slot;

    if (t->nrel == CS_TOPO_MAX_DEVS * 64 ||
        (slot = cs_array_slot((void **)&t->rel, t->nrel, &t->cap_rel, sizeof(*slot))) == NULL)
        return -1;
    *slot = (struct cs_topo_rel){a, b, level, file, line};
    return t->nrel++;
}

int cs_topo_note(struct cs_topo *t, const char *fmt, ...)
{
    char(*grown)[400];
    va_list ap;

    if (t->nnotes == 256)
        return -1;
    if ((grown = realloc(t->notes, (size_t)(t->nnotes + 1) * sizeof(*grown))) == NULL)
        return -1;
    t->notes = grown;
    va_start(ap, fmt);
    vsnprintf(t->notes[t->nnotes], sizeof(t->notes[0]), fmt, ap);
    va_end(ap);
    t->nnotes++;
    return 0;
}

/* ---- the PCIe tree */

int cs_topo_cpu_of(const struct cs_topo *t, int d)
{
    for (int hops = 0; d >= 0 && hops <= t->ndev; hops++) {
        if (t->dev[d].kind == CS_TOPO_CPU)
            return d;
        d = t->dev[d].parent;
    }
    return -1;
}

/* How many devices lie above d. */
static int depth(const struct cs_topo *t, int d)
{
    int n = 0;

    for (d = t->dev[d].parent; d >= 0 && n <= t->ndev; d = t->dev[d].parent)
        n++;
    return n;
}

/* The lowest device above (or equal to) both a and b, or -1 (different CPUs): the deeper one
 * climbs to the other's depth, then both climb together. */
static int common(const struct cs_topo *t, int a, int b)
{
    int da = depth(t, a), db = depth(t, b);

    for (; da > db && a >= 0; da--)
        a = t->dev[a].parent;
    for (; db > da && b >= 0; db--)
        b = t->dev[b].parent;
    while (a != b && a >= 0 && b >= 0) {
        a = t->dev[a].parent;
        b = t->dev[b].parent;
    }
    return a == b ? a : -1;
}

/* Switches strictly between d and anc (above d). */
static int switches_between(const struct cs_topo *t, int d, int anc)
{
    int n = 0;

    for (int x = t->dev[d].parent, hops = 0; x >= 0 && x != anc && hops <= t->ndev;
         x = t->dev[x].parent, hops++)
        n += t->dev[x].kind == CS_TOPO_SWITCH;
    return n;
}

enum cs_topo_level cs_topo_level(const struct cs_topo *t, int a, int b)
{
    int c = common(t, a, b);

    if (c < 0)
        return CS_TOPO_SYS;
    if (t->dev[c].kind != CS_TOPO_SWITCH)
        return CS_TOPO_PHB;
    return switches_between(t, a, c) + switches_between(t, b, c) == 0 ? CS_TOPO_PIX : CS_TOPO_PXB;
}

const char *cs_topo_level_name(enum cs_topo_level l)
{
    static const char *const names[] = {NULL, "PIX", "PXB", "PHB", "SYS"};

    return (int)l >= CS_TOPO_PIX && (int)l <= CS_TOPO_SYS ? names[l] : "?";
}

/* ---- combining views */

static int at(struct cs_error *err, const struct cs_topo *t, int file, int line, int code,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Fail with err at files[file]:line. */
static int at(struct cs_error *err, const struct cs_topo *t, int file, int line, int code,
              const char *fmt, ...)
{
    char msg[900];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_error_fail(err, code, file >= 0 && file < t->nfiles ? t->files[file] : NULL, line,
                         "%s", msg);
}

/* Order of two bus ids "dddd:bb:dd.f" (as strings, lower case, zero-padded: text order is
 * numeric order). */
static int gpu_cmp(const struct cs_topo *t, int a, int b)
{
    const struct cs_topo_dev *x = &t->dev[a], *y = &t->dev[b];

    if (x->cuda_dev >= 0 && y->cuda_dev >= 0 && x->cuda_dev != y->cuda_dev)
        return x->cuda_dev - y->cuda_dev;
    if (x->busid[0] && y->busid[0])
        return strcmp(x->busid, y->busid);
    return a - b;
}

int cs_topo_order_gpus(struct cs_topo *t)
{
    t->ngpus = 0;
    free(t->gpus);
    if ((t->gpus = malloc((size_t)(t->ndev + 1) * sizeof(int))) == NULL)
        return CS_ERR_NOMEM;
    for (int d = 0; d < t->ndev; d++)
        if (t->dev[d].kind == CS_TOPO_GPU) {
            int i = t->ngpus++;

            /* insertion: a node has at most a few hundred GPUs */
            while (i > 0 && gpu_cmp(t, t->gpus[i - 1], d) > 0) {
                t->gpus[i] = t->gpus[i - 1];
                i--;
            }
            t->gpus[i] = d;
        }
    return 0;
}

/* Local index of GPU device d, or -1. */
static int gpu_index(const struct cs_topo *t, int d)
{
    for (int i = 0; i < t->ngpus; i++)
        if (t->gpus[i] == d)
            return i;
    return -1;
}

/* The NVLinks between devices a and b (any order) in t, or 0; *line where they are read. */
static int nvl_count(const struct cs_topo *t, int a, int b, int *line)
{
    for (int k = 0; k < t->nnvl; k++)
        if ((t->nvl[k].a == a && t->nvl[k].b == b) || (t->nvl[k].a == b && t->nvl[k].b == a)) {
            if (line)
                *line = t->nvl[k].line;
            return t->nvl[k].count;
        }
    return 0;
}

/* A NIC device whose ports include name. */
static int nic_named(const struct cs_topo *t, const char *name)
{
    size_t n = strlen(name);

    for (int d = 0; d < t->ndev && n > 0; d++) {
        const char *p = t->dev[d].name;

        if (t->dev[d].kind != CS_TOPO_NIC)
            continue;
        for (; (p = strstr(p, name)) != NULL; p += n)
            if ((p == t->dev[d].name || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
                return d;
    }
    return -1;
}

/* A matrix (view m) against the base (view b): the same GPUs (by order), NVLinks, relations
 * and NUMA nodes; the matrix's NVLinks fill a base that has none. */
static int check_matrix(struct cs_topo *b, const struct cs_topo *m, struct cs_error *err)
{
    int line0 = m->ngpus ? m->dev[m->gpus[0]].line : 0,
        file = m->ngpus ? m->dev[m->gpus[0]].file : 0;

    if (m->ngpus != b->ngpus)
        return at(err, b, file, line0, CS_ERR_INVALID,
                  "%d GPUs, but %s describes %d: not the same machine", m->ngpus,
                  b->files[b->dev[b->gpus[0]].file], b->ngpus);
    for (int i = 0; i < m->ngpus; i++)
        for (int j = i + 1; j < m->ngpus; j++) {
            int lb = 0, lm = 0, cm = nvl_count(m, m->gpus[i], m->gpus[j], &lm);
            int cb = nvl_count(b, b->gpus[i], b->gpus[j], &lb);
            const struct cs_topo_dev *gi = &b->dev[b->gpus[i]], *gj = &b->dev[b->gpus[j]];
            const struct cs_topo_dev *mi = &m->dev[m->gpus[i]];

            if (b->nvl_known && cm == 0 && cb == 0 && mi->nvs_links > 0 && gi->nvs_links > 0 &&
                gj->nvs_links > 0)
                continue;
            if (!b->nvl_known)
                continue;
            if (cm == 0 && mi->nvs_links > 0)
                cm = mi->nvs_links; /* through the NVSwitches */
            if (cb == 0 && gi->nvs_links > 0 && gj->nvs_links > 0)
                cb = gi->nvs_links < gj->nvs_links ? gi->nvs_links : gj->nvs_links;
            if (cm != cb)
                return at(err, b, file, lm ? lm : line0, CS_ERR_INVALID,
                          "GPU%d-GPU%d: %d NVLinks, but %s:%d gives %d", i, j, cm,
                          b->files[gi->file], lb ? lb : gi->line, cb);
        }
    for (int k = 0; k < m->nrel; k++) {
        const struct cs_topo_rel *r = &m->rel[k];
        int bi = gpu_index(m, r->a), bj, x, y;
        enum cs_topo_level l;

        if (bi < 0)
            continue;
        x = b->gpus[bi];
        if ((bj = gpu_index(m, r->b)) >= 0)
            y = b->gpus[bj];
        else if ((y = nic_named(b, m->dev[r->b].name)) < 0)
            continue;
        if (!b->tree_known)
            continue;
        l = cs_topo_level(b, x, y);
        if (l != r->level)
            return at(err, b, r->file, r->line, CS_ERR_INVALID,
                      "%s-%s is %s, but %s places them %s apart (%s:%d, %s:%d)", m->dev[r->a].name,
                      m->dev[r->b].name, cs_topo_level_name(r->level), b->files[b->dev[x].file],
                      cs_topo_level_name(l), b->files[b->dev[x].file], b->dev[x].line,
                      b->files[b->dev[y].file], b->dev[y].line);
    }
    for (int i = 0; i < m->ngpus; i++) {
        int cm = cs_topo_cpu_of(m, m->gpus[i]), cb = cs_topo_cpu_of(b, b->gpus[i]);

        if (cm >= 0 && cb >= 0 && m->dev[cm].numa >= 0 && b->dev[cb].numa >= 0 &&
            m->dev[cm].numa != b->dev[cb].numa && b->tree_known)
            return at(err, b, m->dev[m->gpus[i]].file, m->dev[m->gpus[i]].line, CS_ERR_INVALID,
                      "GPU%d is on NUMA node %d, but %s:%d puts it on NUMA node %d", i,
                      m->dev[cm].numa, b->files[b->dev[b->gpus[i]].file], b->dev[b->gpus[i]].line,
                      b->dev[cb].numa);
    }
    if (!b->nvl_known && m->nvl_known) {
        for (int k = 0; k < m->nnvl; k++)
            if (cs_topo_add_nvl(b, b->gpus[gpu_index(m, m->nvl[k].a)],
                                b->gpus[gpu_index(m, m->nvl[k].b)], m->nvl[k].count, m->nvl[k].file,
                                m->nvl[k].line) < 0)
                return CS_ERR_NOMEM;
        for (int i = 0; i < m->ngpus; i++)
            b->dev[b->gpus[i]].nvs_links = m->dev[m->gpus[i]].nvs_links;
        b->nvl_known = 1;
    }
    if (b->gpu.kind == 0)
        b->gpu = m->gpu;
    return 0;
}

/* Copy view v's devices, NVLinks and relations into the empty machine t. */
static int take_view(struct cs_topo *t, const struct cs_topo *v)
{
    for (int d = 0; d < v->ndev; d++)
        if (cs_topo_add_dev(t, &v->dev[d]) < 0)
            return CS_ERR_NOMEM;
    for (int k = 0; k < v->nnvl; k++)
        if (cs_topo_add_nvl(t, v->nvl[k].a, v->nvl[k].b, v->nvl[k].count, v->nvl[k].file,
                            v->nvl[k].line) < 0)
            return CS_ERR_NOMEM;
    t->nvl_known = v->nvl_known;
    t->tree_known = v->tree_known;
    t->gpu = v->gpu;
    for (int k = 0; k < v->nnotes; k++)
        if (cs_topo_note(t, "%s", v->notes[k]) != 0)
            return CS_ERR_NOMEM;
    return cs_topo_order_gpus(t);
}

/* The ranks of the log's first node, in rank order, into node0 (*n of them): those on rank 0's
 * host when the log names every rank's, else the first local ranks. */
static void log_node0(const struct cs_ncclinfo *log, int *node0, int *n)
{
    int host = log->nranks > 0 ? log->ranks[0].host : -1, local = log->local_ranks;

    *n = 0;
    if (local == 0)
        local = log->nnodes > 0 && log->nranks % log->nnodes == 0 ? log->nranks / log->nnodes
                                                                  : log->nranks;
    for (int r = 0; r < log->nranks && host >= 0; r++)
        host = log->ranks[r].host < 0 ? -1 : host;
    for (int r = 0; r < log->nranks && *n < local && *n < CS_TOPO_MAX_GPUS; r++)
        if (host < 0 || log->ranks[r].host == host)
            node0[(*n)++] = r;
}

/* The NIC (of k) a GPU i of n uses when nothing says: the i-th share, in order (NCCL picks the
 * nearest NICs, and vendors pair GPUs and NICs in order). */
static int share(int i, int n, int k)
{
    return (int)((long)i * k / n);
}

/* A machine from a log alone: its GPUs (the first node's ranks), CPUs by the GPUs' affinity,
 * its NICs (listed, else the NET devices used), each NIC on a switch with the GPUs that use it
 * (the DGX/HGX layout, a prior). */
static int view_from_log(struct cs_topo *t, const struct cs_ncclinfo *log, int file)
{
    int node0[CS_TOPO_MAX_GPUS], n, cpu[CS_TOPO_MAX_GPUS], ncpu = 0;
    int nic[CS_NCCLINFO_MAX_NETS], label[CS_NCCLINFO_MAX_NETS], sw[CS_NCCLINFO_MAX_NETS], k = 0;
    unsigned long long used = 0;
    struct cs_topo_dev d;

    log_node0(log, node0, &n);
    if (n == 0)
        return 0;
    for (int i = 0; i < n; i++) {
        const struct cs_ncclinfo_rank *rk = &log->ranks[node0[i]];
        int c = -1;

        used |= rk->nets;
        for (int j = 0; j < i && c < 0; j++)
            if (strcmp(log->ranks[node0[j]].affinity, rk->affinity) == 0)
                c = cpu[j];
        if (c < 0) {
            cs_topo_dev_init(&d, CS_TOPO_CPU, -1, file, 0);
            if ((c = cs_topo_add_dev(t, &d)) < 0)
                return CS_ERR_NOMEM;
            ncpu++;
        }
        cpu[i] = c;
    }
    if (ncpu > 1 && cs_topo_note(t, "%d CPUs, one per CPU affinity of the GPUs in %s", ncpu,
                                 t->files[file]) != 0)
        return CS_ERR_NOMEM;
    for (int j = 0; j < (log->nnets ? log->nnets : 64); j++) {
        if (!log->nnets && !(used >> j & 1))
            continue;
        cs_topo_dev_init(&d, CS_TOPO_NIC, cpu[0], file, log->nnets ? log->nets[j].line : 0);
        d.net_dev = log->nnets ? log->nets[j].dev : j;
        d.nports = 1;
        if (strcmp(log->network, "AWS Libfabric") == 0) { /* aws-ofi-nccl: EFA */
            d.pci_vendor = 0x1d0f;
            d.pci_device = 0xefa0;
        }
        if (log->nnets)
            snprintf(d.name, sizeof(d.name), "%s", log->nets[j].name);
        label[k] = d.net_dev;
        sw[k] = -1;
        if ((nic[k++] = cs_topo_add_dev(t, &d)) < 0)
            return CS_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        int j = -1;

        for (int x = 0; x < k && j < 0; x++)
            if (label[x] < 64 && log->ranks[node0[i]].nets >> label[x] & 1)
                j = x;
        if (j < 0 && k > 0)
            j = share(i, n, k);
        cs_topo_dev_init(&d, CS_TOPO_GPU, cpu[i], file, log->ranks[node0[i]].line);
        snprintf(d.busid, sizeof(d.busid), "%s", log->ranks[node0[i]].busid);
        d.cuda_dev = log->ranks[node0[i]].cuda_dev;
        if (j >= 0) {
            if (sw[j] < 0) {
                struct cs_topo_dev s;

                cs_topo_dev_init(&s, CS_TOPO_SWITCH, cpu[i], file, 0);
                if ((sw[j] = cs_topo_add_dev(t, &s)) < 0)
                    return CS_ERR_NOMEM;
                t->dev[nic[j]].parent = sw[j];
            }
            d.parent = sw[j];
        }
        if (cs_topo_add_dev(t, &d) < 0)
            return CS_ERR_NOMEM;
    }
    /* NICs no GPU took (more NICs than GPUs): with the GPU whose share they are */
    for (int j = 0; j < k; j++)
        if (sw[j] < 0 && k > n && sw[share(share(j, k, n), n, k)] >= 0)
            t->dev[nic[j]].parent = sw[share(share(j, k, n), n, k)];
    if (cs_topo_note(t,
                     "PCIe layout not in %s: prior: each NIC on a PCIe switch of its own with "
                     "the GPUs that use it (the DGX and HGX layout)",
                     t->files[file]) != 0 ||
        (strcmp(log->network, "AWS Libfabric") == 0 &&
         cs_topo_note(t, "NICs: AWS EFA (the log's network is AWS Libfabric, aws-ofi-nccl's)") !=
             0))
        return CS_ERR_NOMEM;
    return cs_topo_order_gpus(t);
}

/* ---- the log on a machine */

/* The log's first node on machine t: as many ranks as GPUs, each rank's GPU by its bus id (the
 * machine's GPUs then in rank order), the log's nodes. */
static int apply_log(struct cs_topo *t, const struct cs_ncclinfo *log, int file,
                     struct cs_error *err)
{
    int node0[CS_TOPO_MAX_GPUS], n, order[CS_TOPO_MAX_GPUS], mapped = 0;

    log_node0(log, node0, &n);
    if (n != t->ngpus)
        return at(err, t, file, log->comm_line, CS_ERR_INVALID,
                  "%d ranks on the first node (%d ranks, %d nodes), but %s describes %d GPUs: not "
                  "the same machine",
                  n, log->nranks, log->nnodes, t->files[t->ngpus ? t->dev[t->gpus[0]].file : 0],
                  t->ngpus);
    for (int j = 0; j < n; j++) {
        const struct cs_ncclinfo_rank *rk = &log->ranks[node0[j]];
        int found = -1, any = 0;

        for (int i = 0; i < t->ngpus; i++) {
            any |= t->dev[t->gpus[i]].busid[0] != '\0';
            if (rk->busid[0] && strcmp(t->dev[t->gpus[i]].busid, rk->busid) == 0)
                found = t->gpus[i];
        }
        if (rk->busid[0] && any && found < 0)
            return at(err, t, file, rk->line, CS_ERR_INVALID,
                      "rank %d runs on GPU %s, which is not a GPU of %s", node0[j], rk->busid,
                      t->files[t->dev[t->gpus[0]].file]);
        for (int i = 0; i < j && found >= 0; i++)
            if (order[i] == found)
                return at(err, t, file, rk->line, CS_ERR_INVALID,
                          "ranks %d and %d run on one GPU (%s)", node0[i], node0[j], rk->busid);
        order[j] = found;
        mapped += found >= 0;
    }
    if (mapped == n && n > 0) {
        memcpy(t->gpus, order, (size_t)n * sizeof(int));
        if (cs_topo_note(t,
                         "GPU i of a node is the GPU of rank i of the log's first node (%s, by "
                         "bus id)",
                         t->files[file]) != 0)
            return CS_ERR_NOMEM;
    }
    if (t->log == NULL) {
        char vias[200] = "";
        size_t k = 0;

        t->log = log;
        t->log_file = file;
        t->nodes = log->nnodes > 0 ? log->nnodes : 1;
        for (int v = 1; v < CS_NCCLINFO_NVIA && k < sizeof(vias) - 40; v++)
            if (log->nvia[v])
                k += (size_t)snprintf(vias + k, sizeof(vias) - k, "%s%s %d", k ? ", " : "",
                                      cs_ncclinfo_via_name((enum cs_ncclinfo_via)v), log->nvia[v]);
        if (k > 0 &&
            cs_topo_note(t,
                         "the log's connections (%s): %s; a P2P read takes the route a write "
                         "does (the receiver reads over it), an SHM pair goes through the host, "
                         "NET within a node through the NICs, NET GDR or host as below",
                         t->files[file], vias) != 0)
            return CS_ERR_NOMEM;
    }
    return 0;
}

/* ---- priors */

/* The GPU: --gpu, else the PCI device id, else the log's name, else the compute capability or
 * the matrix's NVLinks; each must agree with the others. CS_ERR_USAGE when none says, or what
 * says is not a GPU collsim has a model for. */
static int resolve_gpu(struct cs_topo *t, const struct cs_topo_opts *o,
                       const struct cs_ncclinfo *const *logs, const int *log_files, int nlogs,
                       struct cs_error *err)
{
    struct cs_topo_gpu dev = {0}, name = {0}, sm = {0}, g;
    int dline = 0, dfile = 0, nline = 0, nfile = 0, smv = 0, sline = 0, sfile = 0;
    char unknown[200] = "";

    for (int i = 0; i < t->ngpus; i++) {
        const struct cs_topo_dev *d = &t->dev[t->gpus[i]];

        if (d->pci_device != 0) {
            if (!cs_topo_gpu_by_device(d->pci_device, &g)) {
                if (unknown[0] == '\0')
                    snprintf(unknown, sizeof(unknown), "%s:%d: GPU PCI 10de:%04x",
                             t->files[d->file], d->line, d->pci_device);
            } else if (dev.kind == 0) {
                dev = g;
                dline = d->line;
                dfile = d->file;
            } else if (dev.kind != g.kind || dev.sxm != g.sxm) {
                return at(err, t, d->file, d->line, CS_ERR_INVALID,
                          "%s, but the GPU at line %d is %s: collsim models one kind of GPU per "
                          "machine",
                          g.what, dline, dev.what);
            }
        }
        if (d->sm > 0 && smv == 0) {
            smv = d->sm;
            sline = d->line;
            sfile = d->file;
        }
    }
    for (int k = 0; k < nlogs; k++)
        for (int r = 0; r < logs[k]->nranks; r++) {
            const struct cs_ncclinfo_rank *rk = &logs[k]->ranks[r];

            if (rk->gpu[0] == '\0')
                continue;
            if (!cs_topo_gpu_by_name(rk->gpu, &g)) {
                if (unknown[0] == '\0')
                    snprintf(unknown, sizeof(unknown), "%s:%d: GPU \"%s\"", t->files[log_files[k]],
                             rk->gpu_line, rk->gpu);
            } else if (name.kind == 0) {
                name = g;
                nline = rk->gpu_line;
                nfile = log_files[k];
            } else if (name.kind != g.kind || name.sxm != g.sxm) {
                return at(err, t, log_files[k], rk->gpu_line, CS_ERR_INVALID,
                          "rank %d's GPU is %s, but line %d names %s", r, g.what, nline, name.what);
            }
        }
    if (dev.kind && name.kind && (dev.kind != name.kind || dev.sxm != name.sxm))
        return at(err, t, nfile, nline, CS_ERR_INVALID, "the GPU is %s, but %s:%d is %s", name.what,
                  t->files[dfile], dline, dev.what);
    if (smv == 80 || smv == 90) {
        sm.kind = smv == 80 ? CS_GPU_A100 : CS_GPU_H100;
        snprintf(sm.what, sizeof(sm.what), "compute capability %d.%d (%s:%d)", smv / 10, smv % 10,
                 t->files[sfile], sline);
    } else if (smv > 0 && unknown[0] == '\0') {
        snprintf(unknown, sizeof(unknown), "%s:%d: a GPU of compute capability %d.%d",
                 t->files[sfile], sline, smv / 10, smv % 10);
    }
    g = dev.kind ? dev : name;
    if (g.kind && o->gpu.kind && (g.kind != o->gpu.kind || g.sxm != o->gpu.sxm))
        return at(err, t, dev.kind ? dfile : nfile, dev.kind ? dline : nline, CS_ERR_INVALID,
                  "%s contradicts %s here", o->gpu.what, g.what);
    if (o->gpu.kind)
        g = o->gpu;
    if (g.kind && sm.kind && (g.kind == CS_GPU_A100) != (sm.kind == CS_GPU_A100))
        return at(err, t, sfile, sline, CS_ERR_INVALID, "%s, but the GPU is %s", sm.what, g.what);
    if (g.kind == 0 && sm.kind && unknown[0] == '\0') {
        g = sm;
        g.sxm = t->nvl_known && (t->nnvl > 0 || t->dev[t->gpus[0]].nvs_links > 0);
        if (g.kind == CS_GPU_H100 && !g.sxm)
            g.kind = CS_GPU_H100_PCIE;
    }
    if (g.kind == 0 && t->gpu.kind && unknown[0] == '\0')
        g = t->gpu; /* inferred from a matrix's NVLinks */
    if (g.kind == 0 && unknown[0])
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "%s is not one collsim has a model for (A100 SXM4 or PCIe, H100 "
                             "SXM5 or PCIe, H200 SXM); --gpu a100|a100-pcie|h100|h100-pcie|h200 "
                             "takes one's priors",
                             unknown);
    if (g.kind == 0)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "%s: nothing says which GPU (no PCI device id, GPU name or compute "
                             "capability): give --gpu a100|a100-pcie|h100|h100-pcie|h200",
                             t->files[t->dev[t->gpus[0]].file]);
    t->gpu = g;
    return cs_topo_note(t, "GPU: %s (%s)", kind_what(&g), g.what) == 0 ? 0 : CS_ERR_NOMEM;
}

/* NVLinks: a GPU has at most its kind's; without any NVLink in the files, an SXM GPU reaches
 * NVSwitches with all of its (a prior), a PCIe card has none. */
static int resolve_nvlink(struct cs_topo *t, struct cs_error *err)
{
    int most = kind_links(&t->gpu);

    for (int i = 0; i < t->ngpus && t->nvl_known; i++) {
        int d = t->gpus[i], total = t->dev[d].nvs_links > 0 ? t->dev[d].nvs_links : 0, line = 0;

        for (int k = 0; k < t->nnvl; k++)
            if (t->nvl[k].a == d || t->nvl[k].b == d) {
                total += t->nvl[k].count;
                line = t->nvl[k].line;
            }
        if (total > most)
            return at(err, t, t->dev[d].file, line ? line : t->dev[d].line, CS_ERR_INVALID,
                      "GPU %d has %d NVLinks: an %s has %d", i, total, kind_what(&t->gpu), most);
    }
    if (t->nvl_known)
        return 0;
    if (!t->gpu.sxm)
        return cs_topo_note(t,
                            "NVLink: none in the files: the %s cards' NVLink bridges, if any, "
                            "are not known (nvidia-smi topo -m shows them as NV#)",
                            kind_what(&t->gpu));
    for (int i = 0; i < t->ngpus; i++)
        t->dev[t->gpus[i]].nvs_links = most;
    t->nvl_known = 1;
    return cs_topo_note(t,
                        "NVLink: not in the files: prior: every %s on NVSwitch with its %d NVLinks "
                        "(the HGX board of 8; a board of 4 joins its GPUs directly instead: "
                        "nvidia-smi topo -m says which)",
                        kind_what(&t->gpu), most);
}

/* NCCL's PCIe bandwidth of a link: lanes x the generation's per-lane figure / 80 GB/s (topo.cc
 * kvDictPciGen: 2.5 GT/s 15, 5 GT/s 30, 8 GT/s 60, 16 GT/s 120, 32 GT/s 240, 64 GT/s 480;
 * nccl-a100.md 1.4): Gen4 x16 24 GB/s. Gen1 and Gen2 lose 8b/10b of their rate, later ones
 * 128b/130b. */
static double pcie_Bps(double GTs, int width)
{
    return width * GTs * (GTs <= 5 ? 6 : 7.5) / 80 * 1e9;
}

/* A NIC's line rate when the files do not give it: its PCI id's, else the GPU generation's
 * InfiniBand (A100: 200 Gb/s HDR; Hopper: 400 Gb/s NDR). *what says which. */
static double nic_prior_bps(const struct cs_topo *t, const struct cs_topo_dev *d, const char **what)
{
    if (d->pci_vendor == 0x1d0f && d->pci_device == 0xefa0) {
        *what = "AWS EFA (PCI 1d0f:efa0): 100 Gb/s (p4d.24xlarge: 4 x 100 Gb/s)";
        return 100e9;
    }
    if (d->pci_vendor == 0x1d0f) {
        *what = "an AWS network device (PCI vendor 1d0f): 100 Gb/s, p4d's EFA";
        return 100e9;
    }
    if (d->pci_vendor == 0x15b3 && d->pci_device == 0x101b) {
        *what = "ConnectX-6 (PCI 15b3:101b): 200 Gb/s HDR";
        return 200e9;
    }
    if (d->pci_vendor == 0x15b3 && d->pci_device == 0x1021) {
        *what = "ConnectX-7 (PCI 15b3:1021): 400 Gb/s NDR";
        return 400e9;
    }
    if (t->gpu.kind == CS_GPU_A100) {
        *what = "an A100 machine's InfiniBand: 200 Gb/s HDR (DGX A100, NDv4)";
        return 200e9;
    }
    *what = "a Hopper machine's InfiniBand: 400 Gb/s NDR (DGX H100: ConnectX-7)";
    return 400e9;
}

/* Effective network bandwidth of a line rate: 96%, HDR's ~24 GB/s of 25 (nccl-tests#252), which
 * is also NCCL's NET_BW 12 GB/s for 100 Gb/s (topo.h). */
#define NET_EFFICIENCY 0.96

/* Each link's bandwidth: the files' rates, else priors (each named once), else the user's. */
static int rate_links(struct cs_topo *t, const struct cs_topo_opts *o)
{
    int pcie_prior = 0, width_prior = 0;
    const char *nic_what[8] = {0};
    int nnic_what = 0;
    double GTs = kind_GTs(&t->gpu);

    t->nvl_rate = kind_rate(&t->gpu);
    t->sys_Bps = o->params ? o->params->sys_Bps : 10e9;
    for (int d = 0; d < t->ndev; d++) {
        struct cs_topo_dev *x = &t->dev[d];

        if (x->kind != CS_TOPO_CPU) {
            pcie_prior |= x->link_GTs <= 0;
            width_prior |= x->link_GTs > 0 && x->link_width <= 0;
            t->up_Bps[d] = pcie_Bps(x->link_GTs > 0 ? x->link_GTs : GTs,
                                    x->link_width > 0 ? x->link_width : 16);
        }
        if (x->kind == CS_TOPO_NIC) {
            const char *what = NULL;
            double bps = x->speed_bps > 0 ? x->speed_bps : nic_prior_bps(t, x, &what);

            t->net_Bps[d] = bps / 8 * NET_EFFICIENCY;
            for (int k = 0; what && k < nnic_what; k++)
                if (nic_what[k] == what)
                    what = NULL;
            if (what && nnic_what < 8)
                nic_what[nnic_what++] = what;
        }
        if (x->kind == CS_TOPO_GPU && x->nvs_links > 0)
            t->nvs_Bps[d] = x->nvs_links * t->nvl_rate;
    }
    if (pcie_prior &&
        cs_topo_note(t,
                     "PCIe links the files do not rate: prior: the %s's, %.0f GT/s x16, %.0f GB/s "
                     "in NCCL's model (width x rate / 80, topo.cc)",
                     kind_what(&t->gpu), GTs, pcie_Bps(GTs, 16) / 1e9) != 0)
        return CS_ERR_NOMEM;
    if (width_prior && cs_topo_note(t, "PCIe links without a width: prior x16") != 0)
        return CS_ERR_NOMEM;
    for (int k = 0; k < nnic_what; k++)
        if (cs_topo_note(t, "NIC speed not in the files: prior: %s, %.0f%% of it effective",
                         nic_what[k], NET_EFFICIENCY * 100) != 0)
            return CS_ERR_NOMEM;
    /* NICs joined to one GPU: one link of their sum */
    for (int d = 0; d < t->ndev; d++)
        if (t->head[d] != d) {
            t->up_Bps[t->head[d]] += t->up_Bps[d];
            t->net_Bps[t->head[d]] += t->net_Bps[d];
        }
    for (int d = 0; d < t->ndev; d++) {
        if (o->user_Bps[CS_LINK_PCIE] && t->dev[d].kind != CS_TOPO_CPU)
            t->up_Bps[d] = o->params->link_Bps[CS_LINK_PCIE];
        if (o->user_Bps[CS_LINK_NET] && t->dev[d].kind == CS_TOPO_NIC)
            t->net_Bps[d] = o->params->link_Bps[CS_LINK_NET];
        if (o->user_Bps[CS_LINK_NVLINK] && t->nvs_Bps[d] > 0)
            t->nvs_Bps[d] = o->params->link_Bps[CS_LINK_NVLINK];
    }
    return 0;
}

/* ---- GPUs and their NICs */

/* NIC device of the log's NET device label, by the port names the log lists, the files' NET
 * device numbers, else the nearest free NIC to the GPUs that used it: -1 when there is none, or
 * CS_ERR_INVALID with err set. */
static int label_nic(struct cs_topo *t, const struct cs_ncclinfo *log, int label, const int *node0,
                     int n, const unsigned char *taken, struct cs_error *err)
{
    int best = -1, named = 0;
    enum cs_topo_level bl = CS_TOPO_SYS + 1;

    for (int d = 0; d < t->ndev; d++)
        named |= t->dev[d].kind == CS_TOPO_NIC && t->dev[d].name[0] != '\0';
    for (int k = 0; k < log->nnets && named; k++)
        if (log->nets[k].dev == label) {
            int d = nic_named(t, log->nets[k].name);

            if (d < 0)
                return at(err, t, t->log_file, log->nets[k].line, CS_ERR_INVALID,
                          "NIC %s is not one of the machine's", log->nets[k].name);
            return d;
        }
    for (int d = 0; d < t->ndev; d++)
        if (t->dev[d].kind == CS_TOPO_NIC && t->dev[d].net_dev == label && t->dev[d].net_dev >= 0)
            return d;
    for (int d = 0; d < t->ndev; d++) {
        enum cs_topo_level l = CS_TOPO_PIX;

        if (t->dev[d].kind != CS_TOPO_NIC || taken[d])
            continue;
        for (int i = 0; i < n; i++)
            if (label < 64 && log->ranks[node0[i]].nets >> label & 1) {
                enum cs_topo_level li = cs_topo_level(t, t->gpus[i], d);

                if (li > l)
                    l = li;
            }
        if (l < bl) {
            bl = l;
            best = d;
        }
    }
    return best;
}

/* The NICs the log's first-node ranks used: nic_of, and GDR as the connections show it. */
static int nics_from_log(struct cs_topo *t, struct cs_error *err)
{
    const struct cs_ncclinfo *log = t->log;
    int node0[CS_TOPO_MAX_GPUS], n, map[64];
    unsigned char *taken = calloc((size_t)t->ndev + 1, 1);
    int rc = 0;

    if (taken == NULL)
        return CS_ERR_NOMEM;
    log_node0(log, node0, &n);
    for (int l = 0; l < 64 && rc == 0; l++) {
        int users = 0;

        map[l] = -1;
        for (int i = 0; i < n; i++)
            users += (int)(log->ranks[node0[i]].nets >> l & 1);
        if (users == 0)
            continue;
        if ((map[l] = label_nic(t, log, l, node0, n, taken, err)) < 0 && map[l] != -1)
            rc = map[l];
        else if (map[l] < 0)
            rc = at(err, t, t->log_file, log->ranks[node0[0]].net_line, CS_ERR_INVALID,
                    "the log's ranks use NET device %d, and the machine has no NIC left for it", l);
        else
            taken[map[l]] = 1;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        const struct cs_ncclinfo_rank *rk = &log->ranks[node0[i]];
        int gdr = 0, host = 0, gline = 0;

        for (int l = 0; l < 64 && t->nic_of[i] < 0; l++)
            if (rk->nets >> l & 1)
                t->nic_of[i] = map[l];
        for (int c = 0; c < log->nconns; c++) {
            const struct cs_ncclinfo_conn *cn = &log->conns[c];
            int local = cn->send == 0 ? cn->to : cn->from;

            if (local != node0[i] || (cn->via != CS_VIA_NET_GDR && cn->via != CS_VIA_NET_HOST))
                continue;
            gdr += cn->via == CS_VIA_NET_GDR;
            host += cn->via == CS_VIA_NET_HOST;
            if (cn->via == CS_VIA_NET_GDR && gline == 0)
                gline = cn->line;
        }
        if (gdr && t->nic_of[i] >= 0 && t->dev[t->nic_of[i]].gdr == 0)
            rc = at(err, t, t->log_file, gline, CS_ERR_INVALID,
                    "rank %d's network connections use GPUDirect RDMA (GDRDMA), but %s:%d says "
                    "its NIC has none (gdr=\"0\")",
                    node0[i], t->files[t->dev[t->nic_of[i]].file], t->dev[t->nic_of[i]].line);
        else if (gdr && t->dev[t->gpus[i]].gdr == 0)
            rc = at(err, t, t->log_file, gline, CS_ERR_INVALID,
                    "rank %d's network connections use GPUDirect RDMA (GDRDMA), but %s:%d says "
                    "its GPU has none (gdr=\"0\")",
                    node0[i], t->files[t->dev[t->gpus[i]].file], t->dev[t->gpus[i]].line);
        t->gdr[i] = gdr + host ? gdr >= host : 2; /* 2: the log does not say */
    }
    free(taken);
    return rc;
}

/* GPUs the log does not place take the nearest NICs: the GPUs whose nearest NICs are the same
 * share them in order (2 GPUs, 1 NIC: both use it; 1 GPU, 4 NICs: one link of their sum). */
static int nics_by_distance(struct cs_topo *t)
{
    int n = t->ngpus, *cand = malloc((size_t)n * (size_t)(t->ndev + 1) * sizeof(int)), *nc, *users;
    enum cs_topo_level *lv = malloc((size_t)n * sizeof(*lv));
    unsigned char *done = calloc((size_t)n, 1);

    nc = calloc((size_t)n, sizeof(int));
    users = calloc((size_t)t->ndev + 1, sizeof(int));
    if (cand == NULL || lv == NULL || done == NULL || nc == NULL || users == NULL) {
        cs_free_each(5, cand, lv, done, nc, users);
        return CS_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        lv[i] = CS_TOPO_SYS + 1;
        for (int d = 0; d < t->ndev; d++) {
            enum cs_topo_level l;

            if (t->dev[d].kind != CS_TOPO_NIC)
                continue;
            l = cs_topo_level(t, t->gpus[i], d);
            if (l < lv[i]) {
                lv[i] = l;
                nc[i] = 0;
            }
            if (l == lv[i])
                cand[i * (t->ndev + 1) + nc[i]++] = d;
        }
        /* how many of the GPUs still to place have each NIC among their nearest */
        for (int y = 0; y < nc[i] && t->nic_of[i] < 0; y++)
            users[cand[i * (t->ndev + 1) + y]]++;
    }
    for (int i = 0; i < n; i++) {
        int g[CS_TOPO_MAX_GPUS], ng = 0, *c = cand + i * (t->ndev + 1), k = nc[i];

        if (done[i] || t->nic_of[i] >= 0 || k == 0)
            continue;
        for (int j = i; j < n; j++)
            if (!done[j] && t->nic_of[j] < 0 && nc[j] == k &&
                memcmp(cand + j * (t->ndev + 1), c, (size_t)k * sizeof(int)) == 0) {
                g[ng++] = j;
                done[j] = 1;
            }
        for (int m = 0; m < ng; m++) {
            t->nic_of[g[m]] = c[share(m, ng, k)];
            /* the rest of its share joins it, when no other GPU is near them */
            for (int x = share(m, ng, k) + 1; k > ng && x < share(m + 1, ng, k); x++)
                if (users[c[x]] == ng)
                    t->head[c[x]] = c[share(m, ng, k)];
        }
    }
    cs_free_each(5, cand, lv, done, nc, users);
    return 0;
}

/* Whether GPU i's NIC traffic goes straight to the NIC: the log's word, else both support
 * GPUDirect RDMA (unknown: yes) and they share a PCIe switch (NCCL's default
 * NCCL_NET_GDR_LEVEL, PXB). */
static void resolve_gdr(struct cs_topo *t)
{
    for (int i = 0; i < t->ngpus; i++) {
        int nic = t->nic_of[i];

        if (nic < 0)
            t->gdr[i] = 0;
        if (t->gdr[i] != 2)
            continue;
        t->gdr[i] = t->dev[t->gpus[i]].gdr != 0 && t->dev[nic].gdr != 0 &&
                    cs_topo_level(t, t->gpus[i], nic) <= CS_TOPO_PXB;
    }
}

/* The transports of the log's connections between the first node's GPUs. */
static void log_vias(struct cs_topo *t)
{
    const struct cs_ncclinfo *log = t->log;
    int node0[CS_TOPO_MAX_GPUS], n, local[CS_NCCLINFO_MAX_RANKS];

    log_node0(log, node0, &n);
    for (int r = 0; r < log->nranks; r++)
        local[r] = -1;
    for (int i = 0; i < n; i++)
        local[node0[i]] = i;
    for (int c = 0; c < log->nconns; c++) {
        const struct cs_ncclinfo_conn *cn = &log->conns[c];
        int a = local[cn->from], b = local[cn->to];
        unsigned char *v;

        if (a < 0 || b < 0 || a == b || cn->via == CS_VIA_COLLNET)
            continue;
        v = &t->via[a < b ? a * n + b : b * n + a];
        if (*v == 0)
            *v = (unsigned char)cn->via;
    }
}

static int assign_nics(struct cs_topo *t, struct cs_error *err)
{
    int rc = 0;

    for (int d = 0; d < t->ndev; d++)
        t->head[d] = d;
    for (int i = 0; i < t->ngpus; i++) {
        t->nic_of[i] = -1;
        t->gdr[i] = 2;
    }
    if (t->log != NULL) {
        if ((rc = nics_from_log(t, err)) != 0)
            return rc;
        log_vias(t);
    }
    if ((rc = nics_by_distance(t)) != 0)
        return rc;
    resolve_gdr(t);
    return 0;
}

/* ---- reading and combining */

/* Whether text starts (after blanks, a byte-order mark, an XML declaration or comments) with an
 * element: an XML file. */
static int looks_xml(const char *text, size_t len)
{
    size_t i = 0;

    if (len >= 3 && (unsigned char)text[0] == 0xef && (unsigned char)text[1] == 0xbb &&
        (unsigned char)text[2] == 0xbf)
        i = 3;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    return i < len && text[i] == '<';
}

/* Whether a line of text[0..len) starts, after blanks, with "GPU0" and a blank. */
static int smi_header(const char *text, size_t len)
{
    for (size_t i = 0; i + 5 <= len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len, k = i;

        while (k < end && (text[k] == ' ' || text[k] == '\t' || text[k] == 0x1b)) {
            if (text[k++] != 0x1b)
                continue;
            while (k < end && !isalpha((unsigned char)text[k])) /* ESC [ ... letter */
                k++;
            k++;
        }
        if (k + 5 <= end && memcmp(text + k, "GPU0", 4) == 0 && isspace((unsigned char)text[k + 4]))
            return 1;
        i = end + 1;
    }
    return 0;
}

/* Whether text[0..len) holds word. */
static int has_text(const char *text, size_t len, const char *word)
{
    size_t n = strlen(word);

    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(text + i, word, n) == 0)
            return 1;
    return 0;
}

int cs_topo_detect(const char *text, size_t len)
{
    if (looks_xml(text, len)) {
        size_t n = len < 4096 ? len : 4096;

        return has_text(text, n, "<system") || has_text(text, n, "<graphs");
    }
    return cs_ncclinfo_detect(text, len) || smi_header(text, len);
}

struct files {
    struct cs_topo views[CS_TOPO_MAX_FILES];
    int nviews, xml_view; /* xml_view: the topology XML's view, -1 none */
    int xml_file;         /* and its file */
    struct cs_xml_elem *graphs[CS_TOPO_MAX_FILES];
    int graph_file[CS_TOPO_MAX_FILES], ngraphs;
    struct cs_ncclinfo *logs[CS_TOPO_MAX_FILES];
    int log_file[CS_TOPO_MAX_FILES], nlogs;
};

/* One file: an XML (topology or graph), or text with a matrix, a log, or both. */
static int read_one(struct files *f, struct cs_topo *t, int file, const char *text, size_t len,
                    struct cs_error *err)
{
    const char *name = t->files[file];
    int rc, got = 0;

    if (looks_xml(text, len)) {
        struct cs_xml_elem *root;

        if (!cs_topo_detect(text, len) && has_text(text, len < 4096 ? len : 4096, "<platform"))
            return cs_error_fail(err, CS_ERR_INVALID, name, 0,
                                 "a SimGrid platform already (give it to --platform)");
        if ((rc = cs_xml_tree_read(text, len, name, &root, err)) != 0)
            return rc;
        if (strcmp(root->name, "graphs") == 0) {
            f->graphs[f->ngraphs] = root;
            f->graph_file[f->ngraphs++] = file;
            return 0;
        }
        if (strcmp(root->name, "platform") == 0) {
            cs_xml_tree_free(root);
            return cs_error_fail(err, CS_ERR_INVALID, name, 1,
                                 "a SimGrid platform already (give it to --platform)");
        }
        if (f->xml_view >= 0) {
            int line = root->line;

            cs_xml_tree_free(root);
            return at(err, t, file, line, CS_ERR_INVALID,
                      "a second topology XML (%s is one): give one per machine",
                      t->files[f->xml_file]);
        }
        cs_topo_init(&f->views[f->nviews]);
        memcpy(f->views[f->nviews].files, t->files, sizeof(t->files));
        f->views[f->nviews].nfiles = t->nfiles;
        rc = cs_ncclxml_read(root, &f->views[f->nviews], file, err);
        cs_xml_tree_free(root);
        if (rc == 0 && cs_topo_order_gpus(&f->views[f->nviews]) != 0)
            rc = cs_error_fail(err, CS_ERR_NOMEM, name, 0, "out of memory");
        if (rc != 0) {
            cs_topo_cleanup(&f->views[f->nviews]);
            return rc;
        }
        f->xml_file = file;
        f->xml_view = f->nviews++;
        return 0;
    }
    cs_topo_init(&f->views[f->nviews]);
    memcpy(f->views[f->nviews].files, t->files, sizeof(t->files));
    f->views[f->nviews].nfiles = t->nfiles;
    rc = cs_smitopo_read(text, len, &f->views[f->nviews], file, err);
    if (rc == 0 && cs_topo_order_gpus(&f->views[f->nviews]) != 0)
        rc = cs_error_fail(err, CS_ERR_NOMEM, name, 0, "out of memory");
    if (rc < 0) {
        cs_topo_cleanup(&f->views[f->nviews]);
        return rc;
    }
    if (rc == 0) {
        f->nviews++;
        got = 1;
    } else {
        cs_topo_cleanup(&f->views[f->nviews]);
    }
    if (cs_ncclinfo_detect(text, len)) {
        if ((rc = cs_ncclinfo_read_mem(text, len, name, &f->logs[f->nlogs], err)) != 0)
            return rc;
        f->log_file[f->nlogs++] = file;
        got = 1;
    }
    if (!got)
        return cs_error_fail(err, CS_ERR_INVALID, name, 0,
                             "neither an NCCL topology XML (<system>), an nvidia-smi topo -m "
                             "matrix nor an NCCL INFO log");
    return 0;
}

/* The machine from the files read: a base view (the topology XML, else the first matrix, else
 * the first log's), the others checked against it. */
static int combine(struct files *f, struct cs_topo *t, const struct cs_topo_opts *o,
                   struct cs_error *err)
{
    int base = f->xml_view >= 0 ? f->xml_view : f->nviews > 0 ? 0 : -1, rc;
    struct cs_topo logview;

    if (base >= 0) {
        rc = take_view(t, &f->views[base]);
    } else if (f->nlogs > 0) {
        cs_topo_init(&logview);
        memcpy(logview.files, t->files, sizeof(t->files));
        logview.nfiles = t->nfiles;
        rc = view_from_log(&logview, f->logs[0], f->log_file[0]);
        if (rc == 0)
            rc = take_view(t, &logview);
        cs_topo_cleanup(&logview);
    } else {
        rc = 0;
    }
    if (rc != 0)
        return cs_error_fail(err, rc, NULL, 0, "out of memory");
    t->nodes = 1;
    if (t->ngpus == 0)
        return cs_error_fail(err, CS_ERR_USAGE, t->files[0], 0, "%s: nothing to simulate",
                             f->ngraphs == t->nfiles
                                 ? "an NCCL graph file (NCCL_GRAPH_FILE) lists NCCL's channels, "
                                   "not the machine: give it with the machine's topology file"
                             : t->nfiles > 1 ? "no GPU in these files"
                                             : "no GPU in the file");
    if (t->ngpus > CS_TOPO_MAX_GPUS)
        return cs_error_fail(err, CS_ERR_INVALID, t->files[0], 0, "%d GPUs in one node: at most %d",
                             t->ngpus, CS_TOPO_MAX_GPUS);
    for (int v = 0; v < f->nviews; v++)
        if (v != base && (rc = check_matrix(t, &f->views[v], err)) != 0)
            return rc;
    for (int k = 0; k < f->nlogs; k++)
        if ((rc = apply_log(t, f->logs[k], f->log_file[k], err)) != 0)
            return rc;
    return resolve_gpu(t, o, (const struct cs_ncclinfo *const *)f->logs, f->log_file, f->nlogs,
                       err);
}

/* The per-GPU and per-device arrays of the machine. */
static int alloc_machine(struct cs_topo *t)
{
    size_t n = (size_t)t->ngpus, d = (size_t)t->ndev;

    t->nic_of = malloc(n * sizeof(int));
    t->gdr = malloc(n);
    t->via = calloc(n * n, 1);
    t->head = malloc(d * sizeof(int));
    t->up_Bps = calloc(d, sizeof(double));
    t->net_Bps = calloc(d, sizeof(double));
    t->nvs_Bps = calloc(d, sizeof(double));
    return t->nic_of && t->gdr && t->via && t->head && t->up_Bps && t->net_Bps && t->nvs_Bps
               ? 0
               : CS_ERR_NOMEM;
}

/* Notes on each GPU's way to its NIC. */
static int note_paths(struct cs_topo *t)
{
    for (int i = 0; i < t->ngpus; i++) {
        struct cs_topo_hop hop[CS_TOPO_MAX_HOPS];
        char path[300], nicname[48], more[64];
        int n, k = 0, joined, nic = cs_topo_nic_path(t, i, hop, &n);
        const struct cs_topo_dev *g = &t->dev[t->gpus[i]];

        if (nic < 0)
            continue;
        path[0] = '\0';
        for (int h = 0; h < n && k < (int)sizeof(path) - 48; h++)
            k += snprintf(path + k, sizeof(path) - (size_t)k, "%s%s", h ? " " : "", hop[h].id);
        joined = 0;
        for (int d = 0; d < t->ndev; d++)
            joined += t->head[d] == nic && d != nic;
        if (joined > 0)
            snprintf(more, sizeof(more), " and %d more NICs (one link of their sum)", joined);
        else
            more[0] = '\0';
        if (t->dev[nic].name[0] == '\0' && t->dev[nic].busid[0] == '\0')
            snprintf(nicname, sizeof(nicname), "NET device %d", t->dev[nic].net_dev);
        else
            snprintf(nicname, sizeof(nicname), "%s",
                     t->dev[nic].name[0] ? t->dev[nic].name : t->dev[nic].busid);
        if (cs_topo_note(t, "GPU %d%s%s%s -> NIC %s%s (%s, %s): %s", i, g->busid[0] ? " (" : "",
                         g->busid, g->busid[0] ? ")" : "", nicname, more,
                         cs_topo_level_name(cs_topo_level(t, t->gpus[i], nic)),
                         t->gdr[i] ? "GPUDirect RDMA" : "through host memory", path) != 0)
            return CS_ERR_NOMEM;
    }
    return 0;
}

int cs_topo_read_mem(const char *const *names, const char *const *texts, const size_t *lens, int n,
                     const struct cs_topo_opts *opts, struct cs_topo **out, struct cs_error *err)
{
    static const struct cs_topo_opts none = {{0}, NULL, {0}};
    struct files *f = calloc(1, sizeof(*f));
    struct cs_topo *t = calloc(1, sizeof(*t));
    int rc = 0;

    if (opts == NULL)
        opts = &none;
    if (f == NULL || t == NULL) {
        free(f);
        free(t);
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    }
    cs_topo_init(t);
    f->xml_view = -1;
    if (n < 1 || n > CS_TOPO_MAX_FILES)
        rc = cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "1 to %d files of one machine",
                           CS_TOPO_MAX_FILES);
    for (int i = 0; i < n && rc == 0; i++)
        if (cs_topo_add_file(t, names[i]) < 0)
            rc = CS_ERR_NOMEM;
    for (int i = 0; i < n && rc == 0; i++)
        rc = read_one(f, t, i, texts[i], lens[i], err);
    if (rc == 0)
        rc = combine(f, t, opts, err);
    if (rc == 0 && (rc = resolve_nvlink(t, err)) == 0 && (rc = alloc_machine(t)) == 0 &&
        (rc = assign_nics(t, err)) == 0 && (rc = rate_links(t, opts)) == 0)
        rc = note_paths(t);
    for (int g = 0; g < f->ngraphs && rc == 0; g++)
        rc = cs_ncclxml_check_graph(f->graphs[g], t, t->files[f->graph_file[g]], err);
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, NULL, 0, "out of memory");
    for (int v = 0; v < f->nviews; v++)
        cs_topo_cleanup(&f->views[v]);
    for (int g = 0; g < f->ngraphs; g++)
        cs_xml_tree_free(f->graphs[g]);
    if (rc == 0 && t->log != NULL) {
        /* the machine keeps what it needs of its first log; the caller may keep them all */
        t->log = NULL;
    }
    for (int k = 0; k < f->nlogs; k++)
        cs_ncclinfo_free(f->logs[k]);
    free(f);
    if (rc != 0) {
        cs_topo_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int cs_topo_read(const char *const *paths, int npaths, const struct cs_topo_opts *opts,
                 struct cs_topo **out, struct cs_ncclinfo **logs, int *nlogs, struct cs_error *err)
{
    char *texts[CS_TOPO_MAX_FILES] = {0};
    size_t lens[CS_TOPO_MAX_FILES];
    const char *names[CS_TOPO_MAX_FILES];
    int rc = 0, k = 0;

    if (npaths < 1 || npaths > CS_TOPO_MAX_FILES)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "1 to %d files of one machine",
                             CS_TOPO_MAX_FILES);
    for (int i = 0; i < npaths && rc == 0; i++) {
        names[i] = strcmp(paths[i], "-") == 0 ? "<stdin>" : paths[i];
        rc = cs_file_read(paths[i], CS_TOPO_MAX_BYTES, &texts[i], &lens[i], err);
    }
    if (rc == 0)
        rc = cs_topo_read_mem(names, (const char *const *)texts, lens, npaths, opts, out, err);
    /* the logs again, for the caller's schedule (gen nccl) */
    for (int i = 0; i < npaths && rc == 0 && logs != NULL; i++)
        if (cs_ncclinfo_detect(texts[i], lens[i]) && !looks_xml(texts[i], lens[i])) {
            if ((rc = cs_ncclinfo_read_mem(texts[i], lens[i], names[i], &logs[k], err)) != 0)
                cs_topo_free(*out);
            else
                k++;
        }
    if (nlogs != NULL)
        *nlogs = rc == 0 ? k : 0;
    if (rc != 0)
        for (int i = 0; i < k; i++)
            cs_ncclinfo_free(logs[i]);
    for (int i = 0; i < npaths; i++)
        free(texts[i]);
    return rc;
}

/* ---- links and routes */

/* Ordinal of device d among the devices of its kind. */
static int ordinal(const struct cs_topo *t, int d)
{
    int k = 0;

    for (int x = 0; x < d; x++)
        k += t->dev[x].kind == t->dev[d].kind;
    return k;
}

/* The id of device d's link to its parent in node `node` (GPUs by global index). */
static void up_id(const struct cs_topo *t, int node, int d, char id[40])
{
    switch (t->dev[d].kind) {
    case CS_TOPO_GPU:
        snprintf(id, 40, "gpu%d_pcie", node * t->ngpus + gpu_index(t, d));
        break;
    case CS_TOPO_SWITCH:
        snprintf(id, 40, "n%d_sw%d", node, ordinal(t, d));
        break;
    case CS_TOPO_NIC:
        snprintf(id, 40, "n%d_nic%d_pcie", node, ordinal(t, d));
        break;
    default:
        id[0] = '\0';
    }
}

static void hop_add(struct cs_topo_hop *hop, int *n, const char *id, int up)
{
    if (*n < CS_TOPO_MAX_HOPS && id[0] != '\0') {
        snprintf(hop[*n].id, sizeof(hop[*n].id), "%s", id);
        hop[(*n)++].up = up;
    }
}

/* Devices from d up to, not including, stop (d's uplinks), appended UP; stop -1: to the CPU. */
static void climb(const struct cs_topo *t, int node, int d, int stop, struct cs_topo_hop *hop,
                  int *n)
{
    char id[40];

    for (int hops = 0; d >= 0 && d != stop && t->dev[d].kind != CS_TOPO_CPU && hops <= t->ndev;
         d = t->dev[d].parent, hops++) {
        up_id(t, node, t->head[d], id);
        hop_add(hop, n, id, 1);
    }
}

/* The same, down from stop to d (reversed, DOWN). */
static void descend(const struct cs_topo *t, int node, int d, int stop, struct cs_topo_hop *hop,
                    int *n)
{
    int start = *n;

    climb(t, node, d, stop, hop, n);
    for (int i = start, j = *n - 1; i < j; i++, j--) {
        struct cs_topo_hop x = hop[i];

        hop[i] = hop[j];
        hop[j] = x;
    }
    for (int i = start; i < *n; i++)
        hop[i].up = 0;
}

/* PCIe from device x to device y of one node: up to their common switch (through_cpu 0), or to
 * x's CPU, across to y's CPU when it is another, and down to y. */
static void pcie_path(const struct cs_topo *t, int node, int x, int y, int through_cpu,
                      struct cs_topo_hop *hop, int *n)
{
    int c = through_cpu ? -1 : common(t, x, y);
    int cx = cs_topo_cpu_of(t, x), cy = cs_topo_cpu_of(t, y);
    char id[40];

    if (c >= 0 && t->dev[c].kind != CS_TOPO_CPU) {
        climb(t, node, x, c, hop, n);
        descend(t, node, y, c, hop, n);
        return;
    }
    climb(t, node, x, -1, hop, n);
    if (cx != cy && cx >= 0 && cy >= 0) {
        int a = ordinal(t, cx), b = ordinal(t, cy);

        snprintf(id, sizeof(id), "n%d_sys%d_%d", node, a < b ? a : b, a < b ? b : a);
        hop_add(hop, n, id, a < b);
    }
    descend(t, node, y, -1, hop, n);
}

int cs_topo_nic_path(const struct cs_topo *t, int i, struct cs_topo_hop *hop, int *n)
{
    int nic = t->nic_of[i];

    *n = 0;
    if (nic < 0)
        return -1;
    pcie_path(t, 0, t->gpus[i], nic, !t->gdr[i], hop, n);
    return nic;
}

/* GPU i of node `node` to the network: its path to its NIC and the NIC's network link, UP. */
static void to_network(const struct cs_topo *t, int node, int i, struct cs_topo_hop *hop, int *n)
{
    int nic = t->nic_of[i];
    char id[40];

    if (nic < 0)
        return;
    pcie_path(t, node, t->gpus[i], nic, !t->gdr[i], hop, n);
    snprintf(id, sizeof(id), "n%d_nic%d_net", node, ordinal(t, t->head[nic]));
    hop_add(hop, n, id, 1);
}

void cs_topo_route(const struct cs_topo *t, int a, int b, struct cs_topo_hop *hop, int *n)
{
    int g = t->ngpus, na = a / g, nb = b / g, i = a % g, j = b % g;
    int via = na == nb && i != j ? t->via[i < j ? i * g + j : j * g + i] : 0, k, line;
    char id[40];

    *n = 0;
    if (na == nb && via != CS_VIA_NET_GDR && via != CS_VIA_NET_HOST) {
        if (via != CS_VIA_SHM && (k = nvl_count(t, t->gpus[i], t->gpus[j], &line)) > 0) {
            snprintf(id, sizeof(id), "n%d_nvl%d_%d", na, i < j ? i : j, i < j ? j : i);
            hop_add(hop, n, id, i < j);
        } else if (via != CS_VIA_SHM && t->nvs_Bps[t->gpus[i]] > 0 && t->nvs_Bps[t->gpus[j]] > 0) {
            snprintf(id, sizeof(id), "gpu%d_nvl", a);
            hop_add(hop, n, id, 1);
            snprintf(id, sizeof(id), "gpu%d_nvl", b);
            hop_add(hop, n, id, 0);
        } else {
            pcie_path(t, na, t->gpus[i], t->gpus[j], via == CS_VIA_SHM, hop, n);
        }
        return;
    }
    to_network(t, na, i, hop, n);
    k = *n;
    to_network(t, nb, j, hop, n);
    /* b's side reversed: from the network down to b */
    for (int x = k, y = *n - 1; x < y; x++, y--) {
        struct cs_topo_hop h = hop[x];

        hop[x] = hop[y];
        hop[y] = h;
    }
    for (int x = k; x < *n; x++)
        hop[x].up = !hop[x].up;
}

void cs_topo_each_link(const struct cs_topo *t, int node,
                       void (*fn)(void *ctx, const char *id, double Bps, enum cs_link_class cls),
                       void *ctx)
{
    char id[40];

    for (int i = 0; i < t->ngpus; i++) {
        int d = t->gpus[i];

        up_id(t, node, d, id);
        fn(ctx, id, t->up_Bps[d], CS_LINK_PCIE);
        if (t->nvs_Bps[d] > 0) {
            snprintf(id, sizeof(id), "gpu%d_nvl", node * t->ngpus + i);
            fn(ctx, id, t->nvs_Bps[d], CS_LINK_NVLINK);
        }
    }
    for (int d = 0; d < t->ndev; d++) {
        if (t->dev[d].kind == CS_TOPO_SWITCH ||
            (t->dev[d].kind == CS_TOPO_NIC && t->head[d] == d)) {
            up_id(t, node, d, id);
            fn(ctx, id, t->up_Bps[d], CS_LINK_PCIE);
        }
        if (t->dev[d].kind == CS_TOPO_NIC && t->head[d] == d) {
            snprintf(id, sizeof(id), "n%d_nic%d_net", node, ordinal(t, d));
            fn(ctx, id, t->net_Bps[d], CS_LINK_NET);
        }
    }
    for (int k = 0; k < t->nnvl; k++) {
        int i = gpu_index(t, t->nvl[k].a), j = gpu_index(t, t->nvl[k].b);
        double Bps = t->nvl[k].count * t->nvl_rate;

        if (i < 0 || j < 0)
            continue;
        snprintf(id, sizeof(id), "n%d_nvl%d_%d", node, i < j ? i : j, i < j ? j : i);
        fn(ctx, id, Bps, CS_LINK_NVLINK);
    }
    for (int a = 0; a < t->ndev; a++)
        for (int b = a + 1; b < t->ndev && t->dev[a].kind == CS_TOPO_CPU; b++)
            if (t->dev[b].kind == CS_TOPO_CPU) {
                snprintf(id, sizeof(id), "n%d_sys%d_%d", node, ordinal(t, a), ordinal(t, b));
                fn(ctx, id, t->sys_Bps, CS_LINK_PCIE);
            }
}

static void count_link(void *ctx, const char *id, double Bps, enum cs_link_class cls)
{
    (void)id, (void)Bps, (void)cls;
    ++*(int *)ctx;
}

int cs_topo_nlinks(const struct cs_topo *t)
{
    int n = 0;

    cs_topo_each_link(t, 0, count_link, &n);
    return n;
}

void cs_topo_describe(const struct cs_topo *t, int nodes, char *buf, size_t len)
{
    int ncpu = 0, nsw = 0, nnic = 0, nlinks = 0, nvs = 0, pairs = 0, shared = 0;
    char nvl[160];

    for (int d = 0; d < t->ndev; d++) {
        ncpu += t->dev[d].kind == CS_TOPO_CPU;
        nsw += t->dev[d].kind == CS_TOPO_SWITCH;
        nnic += t->dev[d].kind == CS_TOPO_NIC;
        nlinks += t->dev[d].kind == CS_TOPO_NIC && t->head[d] == d;
    }
    for (int i = 0; i < t->ngpus; i++) {
        nvs += t->nvs_Bps[t->gpus[i]] > 0;
        for (int j = 0; j < t->ngpus; j++)
            shared += j != i && t->nic_of[i] >= 0 && t->nic_of[j] == t->nic_of[i];
    }
    pairs = t->nnvl;
    if (nvs > 0)
        snprintf(nvl, sizeof(nvl), "%d on NVSwitch (a port of %.1f GB/s each, gpuN_nvl)%s", nvs,
                 t->nvs_Bps[t->gpus[0]] / 1e9, pairs ? " and" : "");
    else
        nvl[0] = '\0';
    if (pairs > 0)
        snprintf(nvl + strlen(nvl), sizeof(nvl) - strlen(nvl),
                 "%s%d NVLinked pairs (%.1f GB/s per link, nK_nvlI_J)", nvs ? " " : "", pairs,
                 t->nvl_rate / 1e9);
    snprintf(
        buf, len,
        " %d node(s) of %d %s: NVLink: %s; PCIe: %d switches (nK_swI) under %d CPUs (NUMA "
        "nodes), joined pairwise at cs.sys_Bps (nK_sysA_B); %d NICs (%d pairs of links "
        "nK_nicI_pcie, nK_nicI_net)%s. Within a node a pair goes over its NVLink, else PCIe (up to "
        "their "
        "common switch, or through the CPUs); across nodes each GPU goes to its NIC (GPUDirect "
        "RDMA: straight; else through its CPU) and the network. ",
        nodes, t->ngpus, kind_what(&t->gpu), nvl[0] ? nvl : "none", nsw, ncpu, nnic, nlinks,
        shared ? ", some shared by GPUs" : "");
}

/* Set key to v with its source unless notes hold it (the user set it). */
static int machine_param(struct cs_params *p, struct cs_param_notes *notes, const char *key,
                         double v, const char *src)
{
    char buf[64];
    struct cs_error e;

    if (v <= 0 || (notes != NULL && cs_param_notes_get(notes, key) != NULL))
        return 0;
    snprintf(buf, sizeof(buf), "%.17g", v);
    cs_error_init(&e);
    if (cs_params_set(p, key, buf, &e) != 0)
        return -1;
    return notes != NULL ? cs_param_notes_put(notes, key, src) : 0;
}

int cs_topo_params(const struct cs_topo *t, struct cs_params *p, struct cs_param_notes *notes)
{
    int d = t->gpus[0], nic = t->nic_of[0];
    double nv = t->nvs_Bps[d], share = 0;

    for (int k = 0; k < t->nnvl && nv == 0; k++)
        if (t->nvl[k].a == d || t->nvl[k].b == d)
            nv = t->nvl[k].count * t->nvl_rate;
    if (nic >= 0) {
        int users = 0;

        for (int i = 0; i < t->ngpus; i++)
            users += t->nic_of[i] == nic;
        share = t->net_Bps[t->head[nic]] / users;
    }
    if (machine_param(p, notes, "cs.link_Bps.nvlink", nv,
                      "the machine's: GPU 0's NVSwitch port or NVLinked pair (the links carry "
                      "each their own bandwidth)") != 0 ||
        machine_param(p, notes, "cs.link_Bps.pcie", t->up_Bps[d],
                      "the machine's: GPU 0's PCIe link (the links carry each their own "
                      "bandwidth)") != 0 ||
        machine_param(p, notes, "cs.link_Bps.net", share,
                      "the machine's: GPU 0's share of its NIC (the links carry each their own "
                      "bandwidth)") != 0)
        return -1;
    return 0;
}
