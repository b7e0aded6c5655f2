/* platform.c: write SimGrid platform XML for the A100 and Hopper families; read back what collsim
 * needs. */
#include "platform.h"

#include <assert.h>
#include <errno.h>
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlwriter.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "parse.h"
#include "topo.h"
#include "util.h"
#include "xml.h"

#define MAX_GPU_ID 65535        /* the largest N of a host gpuN the reader accepts */
#define MAX_CLUSTER_HOSTS 65536 /* hosts one <cluster>'s radical may name */
#define DGX_GPUS 8              /* GPUs per DGX A100 / NDv4 node */

static const char *const fam_names[] = {NULL,
                                        "a100-pcie-4gpu",
                                        "a100-pcie-nvbridge",
                                        "a100-hier",
                                        "dgx-a100",
                                        "a100-pcie-net",
                                        "virtual",
                                        "from"};

/* Other names of a family, with the GPU they stand for. */
static const struct alias {
    const char *name;
    enum cs_platform_family fam;
    enum cs_gpu_kind gpu;
} aliases[] = {
    {"ndv4", CS_FAM_DGX, CS_GPU_A100},
    {"hgx-h100", CS_FAM_DGX, CS_GPU_H100},
    {"hgx-h200", CS_FAM_DGX, CS_GPU_H200},
    {"h100-pcie", CS_FAM_PCIE_4GPU, CS_GPU_H100_PCIE},
    {"h100-pcie-nvbridge", CS_FAM_NVBRIDGE, CS_GPU_H100_PCIE},
};

/* Each GPU: what sets its parameters apart from the A100 defaults of cs_params_init, with
 * sources. NVLink: NCCL's SM90_NVLINK_BW, 20.6 GB/s per NVLink4 link and direction (topo.h),
 * times the links; PCIe Gen5 x16 in NCCL's model, 16 x 240 / 80 = 48 GB/s (topo.cc
 * kvDictPciGen "32 GT/s", nccl-a100.md 1.4). Per-CTA rates (cs.tb_Bps.*, cs.copy_Bps,
 * cs.reduce_Bps) are A100's scaled by the SM boost clock: a CTA's issue rate follows its clock;
 * they are priors the calibration harness's loopback tests replace. */
static const struct gpu {
    const char *name, *what; /* option name; how the header comment names it */
    int sms;
    double nvlink_Bps, hbm_Bps, mhz; /* per direction per GPU; HBM read+write; boost clock */
    const char *sms_src, *nvlink_src, *hbm_src;
} gpus[] = {
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
    {"a100", "A100", 108, 240e9, 2039e9, 1410, NULL, NULL, NULL},
    {"h100", "H100 SXM5", 132, 18 * 20.6e9, 3.35e12, 1980,
     "H100 SXM5: 132 SMs (NVIDIA H100 datasheet; runtime-audit.md 0 row 2)",
     "NCCL SM90_NVLINK_BW 20.6 GB/s (topo.h) x 18 NVLink4 links (H100 SXM5: 900 GB/s "
     "bidirectional, NVIDIA H100 datasheet)",
     "half of H100 SXM5 HBM3 3.35 TB/s (NVIDIA H100 datasheet): each FIFO byte written and read "
     "once"},
    {"h100-pcie", "H100 PCIe", 114, 12 * 20.6e9, 2.0e12, 1755,
     "H100 PCIe: 114 SMs (NVIDIA H100 datasheet)",
     "NCCL SM90_NVLINK_BW 20.6 GB/s (topo.h) x 12 NVLink4 links of the bridge (H100 PCIe: 600 "
     "GB/s bidirectional, NVIDIA H100 datasheet)",
     "half of H100 PCIe HBM2e 2.0 TB/s (NVIDIA H100 datasheet): each FIFO byte written and read "
     "once"},
    {"h200", "H200 SXM", 132, 18 * 20.6e9, 4.8e12, 1980,
     "H200: 132 SMs (runtime-audit.md 0 row 2 and 4.5)",
     "NCCL SM90_NVLINK_BW 20.6 GB/s (topo.h) x 18 NVLink4 links (H200 SXM: 900 GB/s "
     "bidirectional, NVIDIA H200 datasheet)",
     "half of H200 HBM3e 4.8 TB/s (NVIDIA H200 datasheet; ~4.3 TB/s read+write measured, "
     "calibration.md 3.4): each FIFO byte written and read once"},
};
#define GPU_PCIE_GEN5_BPS 48e9
#define GPU_PCIE_GEN5_SRC                                                                          \
    "PCIe Gen5 x16 in NCCL's model: 16 x 240 / 80 = 48 GB/s (topo.cc kvDictPciGen, nccl-a100.md "  \
    "1.4)"

/* Each NIC type: the per-GPU bandwidth of its network link and the source of that figure (hdr's
 * is cs.link_Bps.net's default and its source), and how the header comment names it. */
static const struct nic {
    const char *name, *what, *source;
    double Bps;
} nics[] = {
    {NULL, NULL, NULL, 0},
    {"hdr", "one HDR NIC", "HDR IB ~24 GB/s effective per NIC (nccl-tests#252)", 24e9},
    {"roce100", "one 100 Gb/s RoCE NIC",
     "100 Gb/s RoCE NIC: NCCL NET_BW 12.0 GB/s \"100Gbit\" (topo.h, nccl-a100.md 1.4)", 12e9},
    {"2x100", "two 100 Gb/s RoCE NICs",
     "two 100 Gb/s RoCE NICs per GPU (OCI BM.GPU4.8: 16 x 100 Gb/s for 8 GPUs, nccl-a100.md 2), "
     "one link at their sum: 2 x NCCL NET_BW 12.0 GB/s \"100Gbit\" (topo.h, nccl-a100.md 1.4)",
     24e9},
};

enum cs_platform_nic cs_platform_nic_parse(const char *name)
{
    for (int i = 1; i <= CS_NIC_2X100; i++)
        if (strcmp(name, nics[i].name) == 0)
            return (enum cs_platform_nic)i;
    return 0;
}

int cs_platform_set_nic(enum cs_platform_nic nic, struct cs_params *p, struct cs_param_notes *notes)
{
    assert(nic >= CS_NIC_HDR && nic <= CS_NIC_2X100);
    p->link_Bps[CS_LINK_NET] = nics[nic].Bps;
    return notes != NULL ? cs_param_notes_put(notes, "cs.link_Bps.net", nics[nic].source) : 0;
}

enum cs_platform_family cs_platform_family_parse(const char *name)
{
    for (int i = 1; i <= CS_FAM_TOPO; i++)
        if (strcmp(name, fam_names[i]) == 0)
            return (enum cs_platform_family)i;
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(name, aliases[i].name) == 0)
            return aliases[i].fam;
    return 0;
}

const char *cs_platform_family_name(enum cs_platform_family fam)
{
    return (int)fam >= 1 && (int)fam <= CS_FAM_TOPO ? fam_names[fam] : NULL;
}

enum cs_gpu_kind cs_platform_family_gpu(const char *name)
{
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(name, aliases[i].name) == 0)
            return aliases[i].gpu;
    return cs_platform_family_parse(name) ? CS_GPU_A100 : 0;
}

enum cs_gpu_kind cs_gpu_kind_parse(const char *name)
{
    for (int i = 1; i <= CS_GPU_H200; i++)
        if (strcmp(name, gpus[i].name) == 0)
            return (enum cs_gpu_kind)i;
    return 0;
}

const char *cs_gpu_kind_name(enum cs_gpu_kind gpu)
{
    return (int)gpu >= 1 && (int)gpu <= CS_GPU_H200 ? gpus[gpu].name : NULL;
}

/* Set key to v with its source, unless notes hold it already (the user set it). */
static int spec_param(struct cs_params *p, struct cs_param_notes *notes, const char *key, double v,
                      const char *src)
{
    char buf[64];
    struct cs_error err;

    if (notes != NULL && cs_param_notes_get(notes, key) != NULL)
        return 0;
    snprintf(buf, sizeof(buf), "%.17g", v);
    cs_error_init(&err);
    if (cs_params_set(p, key, buf, &err) != 0)
        return -1;
    return notes != NULL ? cs_param_notes_put(notes, key, src) : 0;
}

/* A Hopper GPU's per-CTA rates: A100's defaults scaled by the SM boost clock. */
static int gpu_cta_params(const struct gpu *g, struct cs_params *p, struct cs_param_notes *notes)
{
    static const char *const keys[] = {"cs.tb_Bps.LL", "cs.tb_Bps.LL128", "cs.tb_Bps.Simple",
                                       "cs.copy_Bps", "cs.reduce_Bps"};
    struct cs_params a100;
    char src[512];
    int rc = 0;

    cs_params_init(&a100);
    snprintf(src, sizeof(src),
             "A100's per-CTA figure x SM boost clock %.0f / 1410 MHz (%s datasheet; A100 1410 "
             "MHz, runtime-audit.md 4.5): unmeasured on this GPU, the harness's loopback tests "
             "measure it",
             g->mhz, g->what);
    for (size_t i = 0; rc == 0 && i < sizeof(keys) / sizeof(keys[0]); i++) {
        double v;

        cs_params_get(&a100, keys[i], &v);
        rc = spec_param(p, notes, keys[i], v * g->mhz / 1410, src);
    }
    return rc;
}

int cs_platform_spec_params(const struct cs_platform_spec *spec, struct cs_params *p,
                            struct cs_param_notes *notes)
{
    const struct gpu *g =
        &gpus[spec->gpu >= CS_GPU_A100 && spec->gpu <= CS_GPU_H200 ? spec->gpu : CS_GPU_A100];
    int rc = 0;

    if (spec->family == CS_FAM_VIRTUAL)
        rc = spec_param(p, notes, "cs.ranks_per_gpu", spec->ranks,
                        "virtual ranks: every rank of the platform on one GPU");
    if (rc != 0 || g->sms_src == NULL) /* A100: cs_params_init's defaults */
        return rc;
    if ((rc = spec_param(p, notes, "cs.gpu_sms", g->sms, g->sms_src)) == 0 &&
        (rc = spec_param(p, notes, "cs.link_Bps.nvlink", g->nvlink_Bps, g->nvlink_src)) == 0 &&
        (rc = spec_param(p, notes, "cs.link_Bps.pcie", GPU_PCIE_GEN5_BPS, GPU_PCIE_GEN5_SRC)) ==
            0 &&
        (rc = spec_param(p, notes, "cs.link_Bps.hbm", g->hbm_Bps / 2, g->hbm_src)) == 0)
        rc = gpu_cta_params(g, p, notes);
    return rc;
}

void cs_platform_spec_init(struct cs_platform_spec *spec, enum cs_platform_family fam)
{
    memset(spec, 0, sizeof(*spec));
    spec->family = fam;
    spec->nodes = fam == CS_FAM_PCIE_NET ? 2 : 1;
    spec->gpus_per_node = fam == CS_FAM_DGX ? DGX_GPUS : fam == CS_FAM_PCIE_NET ? 1 : 4;
    spec->rows = 4;
    spec->columns = 2;
    spec->between = CS_LINK_PCIE;
    spec->nic = CS_NIC_HDR;
    spec->gpu = CS_GPU_A100;
    spec->ranks = 8;
}

/* --- reading --- */

void cs_platform_free(struct cs_platform *plat)
{
    if (plat == NULL)
        return;
    for (int i = 0; i < plat->nlinks; i++)
        free(plat->links[i].id);
    cs_free_each(5, plat->links, plat->by_id, plat->rules, plat->path, plat);
}

static enum cs_link_class guess_class(const char *id)
{
    if (strstr(id, "nvl") || strstr(id, "nvsw") || strstr(id, "bridge"))
        return CS_LINK_NVLINK;
    if (strstr(id, "net") || strstr(id, "nic") || strstr(id, "ib"))
        return CS_LINK_NET;
    return CS_LINK_PCIE;
}

/* The length of name without SimGrid's split-duplex suffix _UP or _DOWN (strlen(name) if none). */
static size_t base_len(const char *name)
{
    size_t n = strlen(name);

    if (n > 3 && strcmp(name + n - 3, "_UP") == 0)
        return n - 3;
    if (n > 5 && strcmp(name + n - 5, "_DOWN") == 0)
        return n - 5;
    return n;
}

/* The link of plat->by_id named by the n bytes at name, or NULL. */
static const struct cs_platform_link *link_by_id(const struct cs_platform *plat, const char *name,
                                                 size_t n)
{
    int lo = 0, hi = plat->nby_id;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, c = strncmp(plat->by_id[mid]->id, name, n);

        if (c == 0 && plat->by_id[mid]->id[n] != '\0')
            c = 1; /* longer than name: after it */
        if (c == 0)
            return plat->by_id[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int cs_platform_link_find(const struct cs_platform *plat, const char *name, enum cs_link_class *cls)
{
    const struct cs_platform_link *l = link_by_id(plat, name, strlen(name)), *rule = NULL;
    size_t n = strlen(name);

    if (l == NULL) /* a half of a split-duplex link, by its link's id */
        l = link_by_id(plat, name, base_len(name));
    if (l != NULL) {
        *cls = l->cls;
        return 1;
    }
    for (int i = 0; i < plat->nrules; i++) {
        const struct cs_platform_link *r = plat->rules[i];
        size_t k = strlen(r->id);

        if (k <= n && strncmp(r->id, name, k) == 0 && (rule == NULL || k > strlen(rule->id)))
            rule = r;
    }
    if (rule != NULL) {
        *cls = rule->cls;
        return 1;
    }
    return 0;
}

enum cs_link_class cs_platform_link_class(const struct cs_platform *plat, const char *link_id)
{
    enum cs_link_class cls;

    return cs_platform_link_find(plat, link_id, &cls) ? cls : guess_class(link_id);
}

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static char *attr(const xmlNode *n, const char *name)
{
    return (char *)xmlGetProp((xmlNode *)n, (const xmlChar *)name);
}

struct reader {
    struct cs_platform *plat;
    const char *path;
    unsigned char *gpu_seen; /* MAX_GPU_ID + 1 flags: host gpuN declared */
    int nhosts_gpu, cap_links;
    int root_cluster; /* the root zone is a <cluster>: its cs.class prop is its links' class */
    struct cs_error *err;
};

/* Calls fn(ctx, prop, id, value) for every <prop> child of n (id and value NULL when absent);
 * stops at and returns the first non-zero result. */
static int each_prop(const xmlNode *n,
                     int (*fn)(void *ctx, const xmlNode *prop, const char *id, const char *value),
                     void *ctx)
{
    int rc = 0;

    for (const xmlNode *c = n->children; c != NULL && rc == 0; c = c->next) {
        char *id, *val;

        if (!is_elem(c, "prop"))
            continue;
        id = attr(c, "id");
        val = attr(c, "value");
        rc = fn(ctx, c, id, val);
        xmlFree(id);
        xmlFree(val);
    }
    return rc;
}

/* A cs.class prop of the link just added sets its class. */
static int link_prop(void *ctx, const xmlNode *prop, const char *id, const char *value)
{
    struct reader *r = ctx;
    struct cs_platform_link *l = &r->plat->links[r->plat->nlinks - 1];

    if (id == NULL || value == NULL || strcmp(id, "cs.class") != 0)
        return 0;
    if ((l->cls = cs_link_class_parse(value)) == 0)
        return cs_error_fail(r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(prop),
                             "link '%s': cs.class \"%s\" is not nvlink, pcie or net", l->id, value);
    return 0;
}

/* SimGrid aborts on a zero or invalid bandwidth or host speed and takes a negative latency as
 * it comes: each comma-separated value of attribute name of element n (kind id) must start with
 * a finite number, positive or (nonneg) at least 0. The unit after it is SimGrid's to read. */
/* A quantity's value in B/s or s from its number and SimGrid's unit (Bps, kBps ... TBps,
 * KiBps ... TiBps, bps ... Tbps; s, ms, us, ns, ps, m, h, d, w): 0 when the unit is none of them.
 */
static int in_unit(double x, const char *unit, int time, double *out)
{
    static const struct {
        const char *u;
        double f;
    } bw[] = {{"Bps", 1},
              {"kBps", 1e3},
              {"KBps", 1e3},
              {"MBps", 1e6},
              {"GBps", 1e9},
              {"TBps", 1e12},
              {"KiBps", 1024.0},
              {"MiBps", 1048576.0},
              {"GiBps", 1073741824.0},
              {"TiBps", 1099511627776.0},
              {"bps", 0.125},
              {"kbps", 125},
              {"Kbps", 125},
              {"Mbps", 125e3},
              {"Gbps", 125e6},
              {"Tbps", 125e9},
              {"Kibps", 128.0},
              {"Mibps", 131072.0},
              {"Gibps", 134217728.0},
              {"Tibps", 137438953472.0}},
      tm[] = {{"s", 1},  {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12},
              {"m", 60}, {"h", 3600},  {"d", 86400}, {"w", 604800}};
    size_t n = time ? sizeof(tm) / sizeof(tm[0]) : sizeof(bw) / sizeof(bw[0]);

    for (size_t i = 0; i < n; i++)
        if (strcmp(unit, time ? tm[i].u : bw[i].u) == 0) {
            *out = x * (time ? tm[i].f : bw[i].f);
            return 1;
        }
    return 0;
}

/* A link's bandwidth or latency (several, comma-separated, for SPLITDUPLEX's two): a number
 * with its unit, within what hardware does: a bandwidth from 1 kB/s to 1 PB/s, a latency from 0
 * to 1 s (a unit SimGrid knows but not listed here is left to it). */
static int check_quantity(struct reader *r, const xmlNode *n, const char *kind, const char *id,
                          const char *name, int nonneg)
{
    char *v = attr(n, name), *end;
    int rc = 0;

    for (const char *p = v; p != NULL && rc == 0;) {
        double x = strtod(p, &end), si;
        char unit[16];
        size_t ul = strcspn(end, ",");

        snprintf(unit, sizeof(unit), "%.*s", (int)(ul < sizeof(unit) ? ul : sizeof(unit) - 1), end);
        if (end == p || !isfinite(x) || x < 0 || (x == 0 && !nonneg))
            rc = cs_error_fail(r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(n),
                               "%s '%s': %s=\"%s\" must be a %s number with its unit", kind, id,
                               name, v, nonneg ? "non-negative" : "positive");
        else if (in_unit(x, unit, nonneg, &si) && (nonneg ? si > 1 : (si < 1e3 || si > 1e15)))
            rc = cs_error_fail(
                r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(n),
                "%s '%s': %s=\"%s\" is outside what hardware does (%s)", kind, id, name, v,
                nonneg ? "a latency from 0 to 1 s" : "a bandwidth from 1 kB/s to 1 PB/s");
        if ((p = strchr(end, ',')) != NULL)
            p++;
    }
    xmlFree(v);
    return rc;
}

/* A link with an id: its class is guessed from the id unless a cs.class prop gives it. */
static int add_link(struct reader *r, const xmlNode *n)
{
    struct cs_platform *p = r->plat;
    char *id = attr(n, "id");
    struct cs_platform_link *l;
    int rc;

    if (id == NULL)
        return 0;
    if ((rc = check_quantity(r, n, "link", id, "bandwidth", 0)) != 0 ||
        (rc = check_quantity(r, n, "link", id, "latency", 1)) != 0) {
        xmlFree(id);
        return rc;
    }
    l = cs_array_slot((void **)&p->links, p->nlinks, &r->cap_links, sizeof(*l));
    if (l != NULL && (l->id = strdup(id)) != NULL) {
        l->cls = guess_class(id);
        l->prefix = 0;
        l->line = (int)xmlGetLineNo(n);
        p->nlinks++;
    }
    xmlFree(id);
    return l == NULL || l->id == NULL ? CS_ERR_NOMEM : each_prop(n, link_prop, r);
}

/* A host named gpuN (N up to MAX_GPU_ID) is GPU N, declared once (by element n); other hosts are
 * CPUs, switches or NICs. */
static int add_host_id(struct reader *r, const xmlNode *n, const char *id)
{
    int g;

    if (strncmp(id, "gpu", 3) != 0 || id[3] < '0' || id[3] > '9' ||
        cs_parse_int(id + 3, 0, MAX_GPU_ID, &g) != 0)
        return 0;
    if (r->gpu_seen[g])
        return cs_error_fail(r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(n),
                             "host %s is declared twice", id);
    r->gpu_seen[g] = 1;
    r->nhosts_gpu++;
    return 0;
}

/* A host's or cluster's core="N": SimGrid aborts on anything but a whole number >= 1. */
static int check_cores(struct reader *r, const xmlNode *n, const char *what, const char *id)
{
    char *v = attr(n, "core");
    int cores, rc = 0;

    if (v != NULL && cs_parse_int(v, 1, 1 << 20, &cores) != 0)
        rc = cs_error_fail(r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(n),
                           "%s '%s': core=\"%.40s\" is not a whole number of cores from 1", what,
                           id ? id : "", v);
    xmlFree(v);
    return rc;
}

static int add_host(struct reader *r, const xmlNode *n)
{
    char *id = attr(n, "id");
    int rc = id ? check_quantity(r, n, "host", id, "speed", 0) : 0;

    if (rc == 0)
        rc = check_cores(r, n, "host", id);

    if (rc == 0 && id != NULL)
        rc = add_host_id(r, n, id);
    xmlFree(id);
    return rc;
}

/* A rule for the links a cluster creates: every link whose name starts with prefix has class cls.
 */
static int add_rule(struct reader *r, const char *prefix, enum cs_link_class cls)
{
    struct cs_platform *p = r->plat;
    struct cs_platform_link *l =
        cs_array_slot((void **)&p->links, p->nlinks, &r->cap_links, sizeof(*l));

    if (l == NULL || (l->id = strdup(prefix)) == NULL)
        return CS_ERR_NOMEM;
    l->cls = cls;
    l->prefix = 1;
    l->line = 0;
    p->nlinks++;
    return 0;
}

static int by_id_cmp(const void *a, const void *b)
{
    const struct cs_platform_link *x = *(const struct cs_platform_link *const *)a;
    const struct cs_platform_link *y = *(const struct cs_platform_link *const *)b;
    int c = strcmp(x->id, y->id);

    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* The links' index (by_id, rules) once every link is read; a link declared twice, which SimGrid
 * aborts on, is an error at its second declaration. */
static int index_links(struct reader *r)
{
    struct cs_platform *p = r->plat;

    p->by_id = malloc(((size_t)p->nlinks + 1) * sizeof(*p->by_id));
    p->rules = malloc(((size_t)p->nlinks + 1) * sizeof(*p->rules));
    if (p->by_id == NULL || p->rules == NULL)
        return CS_ERR_NOMEM;
    for (int i = 0; i < p->nlinks; i++)
        if (p->links[i].prefix)
            p->rules[p->nrules++] = &p->links[i];
        else
            p->by_id[p->nby_id++] = &p->links[i];
    qsort(p->by_id, (size_t)p->nby_id, sizeof(*p->by_id), by_id_cmp);
    for (int i = 1; i < p->nby_id; i++)
        if (strcmp(p->by_id[i - 1]->id, p->by_id[i]->id) == 0)
            return cs_error_fail(r->err, CS_ERR_INVALID, r->path, p->by_id[i]->line,
                                 "link '%s' is declared twice", p->by_id[i]->id);
    return 0;
}

/* A cluster's cs.class prop, into the class its ctx points to. */
struct cluster {
    struct reader *r;
    const char *id;
    enum cs_link_class cls;
};

static int cluster_prop(void *ctx, const xmlNode *prop, const char *id, const char *value)
{
    struct cluster *c = ctx;

    if (id == NULL || value == NULL || strcmp(id, "cs.class") != 0)
        return 0;
    if ((c->cls = cs_link_class_parse(value)) == 0)
        return cs_error_fail(c->r->err, CS_ERR_INVALID, c->r->path, xmlGetLineNo(prop),
                             "cluster '%s': cs.class \"%s\" is not nvlink, pcie or net", c->id,
                             value);
    return 0;
}

/* The hosts of cluster n (id), PREFIX N SUFFIX for each N of its radical: numbers and ranges
 * "A-B", comma-separated ("0-7,9"), as SimGrid 3.32 expands it. */
static int cluster_hosts(struct reader *r, const xmlNode *n, const char *id, const char *radical,
                         const char *prefix, const char *suffix)
{
    long total = 0;
    int rc = 0;

    for (const char *p = radical; rc == 0;) {
        size_t len = strcspn(p, ",");
        char piece[32], name[512], *dash;
        int a, b;

        snprintf(piece, sizeof(piece), "%.*s", (int)(len < 31 ? len : 31), p);
        if ((dash = strchr(piece + 1, '-')) != NULL)
            *dash = '\0';
        if (len > 30 || cs_parse_int(piece, 0, INT_MAX, &a) != 0 ||
            cs_parse_int(dash ? dash + 1 : piece, a, INT_MAX, &b) != 0 ||
            (total += (long)b - a + 1) > MAX_CLUSTER_HOSTS)
            return cs_error_fail(r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(n),
                                 "cluster '%s': radical=\"%s\" is not a list of numbers and "
                                 "ranges such as \"0-7,9\" (at most %d hosts)",
                                 id, radical, MAX_CLUSTER_HOSTS);
        for (long k = a; k <= b && rc == 0; k++) {
            snprintf(name, sizeof(name), "%.200s%ld%.200s", prefix, k, suffix);
            rc = add_host_id(r, n, name);
        }
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return rc;
}

/* SimGrid 3.32 names a cluster's links ID_link_N (its private links, with _UP/_DOWN when
 * split-duplex, _loopback and _limiter), ID_backbone and, for a torus, ID_link_from_A_to_B; but
 * a fat tree's and a dragonfly's links carry no cluster id (link_from_...,
 * local_link_from_router_..., and so on). tests/check_platform.c checks every link SimGrid creates
 * against these rules. */
static const char *const fat_tree_links[] = {"link_from_", NULL};
static const char *const dragonfly_links[] = {"local_link_from_router_", "green_link_in_chassis_",
                                              "black_link_in_group_", "blue_link_between_group_",
                                              NULL};

/* The attributes SimGrid requires of a <cluster>, and its quantities: each comma-separated value
 * checked as check_quantity does, a non-negative one where nonneg is set; an absent or empty
 * optional one is SimGrid's default. */
static int check_cluster_attrs(struct reader *r, const xmlNode *n, const char *id)
{
    static const char *const required[] = {"id",    "prefix", "suffix", "radical",
                                           "speed", "bw",     "lat"};
    static const struct {
        const char *name;
        int nonneg;
    } qty[] = {{"speed", 0},  {"bw", 0},          {"lat", 1},          {"bb_bw", 0},
               {"bb_lat", 1}, {"loopback_bw", 0}, {"loopback_lat", 1}, {"limiter_link", 0}};
    int rc = 0;

    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (!xmlHasProp((xmlNode *)n, (const xmlChar *)required[i]))
            return cs_error_fail(r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(n),
                                 "cluster '%s': no %s=\"...\", which SimGrid requires",
                                 id ? id : "", required[i]);
    for (size_t i = 0; i < sizeof(qty) / sizeof(qty[0]) && rc == 0; i++) {
        char *v = attr(n, qty[i].name);

        if (v != NULL && v[0] != '\0')
            rc = check_quantity(r, n, "cluster", id, qty[i].name, qty[i].nonneg);
        xmlFree(v);
    }
    return rc == 0 ? check_cores(r, n, "cluster", id) : rc;
}

/* A <cluster>: its hosts (gpuN among them are GPUs) and a class for every link it creates, its
 * cs.class prop or net. */
static int add_cluster(struct reader *r, const xmlNode *n)
{
    char *id = attr(n, "id"), *prefix = attr(n, "prefix"), *suffix = attr(n, "suffix");
    char *radical = attr(n, "radical"), *topo = attr(n, "topology"), own[280];
    const char *const *extra = NULL;
    struct cluster c = {r, id, CS_LINK_NET};
    int rc = check_cluster_attrs(r, n, id);

    if (rc == 0)
        rc = each_prop(n, cluster_prop, &c);
    if (topo != NULL && strcmp(topo, "FAT_TREE") == 0)
        extra = fat_tree_links;
    else if (topo != NULL && strcmp(topo, "DRAGONFLY") == 0)
        extra = dragonfly_links;
    snprintf(own, sizeof(own), "%.256s_", id ? id : "");
    if (rc == 0)
        rc = add_rule(r, own, c.cls);
    for (int i = 0; rc == 0 && extra != NULL && extra[i] != NULL; i++)
        rc = add_rule(r, extra[i], c.cls);
    if (rc == 0)
        rc = cluster_hosts(r, n, id, radical, prefix, suffix);
    xmlFree(id);
    xmlFree(prefix);
    xmlFree(suffix);
    xmlFree(radical);
    xmlFree(topo);
    return rc;
}

/* Whether link n (or a <trace_connect>) makes a link vary in time, or is a WIFI link. */
static int varies(const xmlNode *n)
{
    static const char *const files[] = {"bandwidth_file", "latency_file", "state_file"};
    char *policy;
    int v = 0;

    if (is_elem(n, "trace_connect"))
        return 1;
    if (!is_elem(n, "link"))
        return 0;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        v |= xmlHasProp((xmlNode *)n, (const xmlChar *)files[i]) != NULL;
    if ((policy = attr(n, "sharing_policy")) != NULL) {
        v |= strcmp(policy, "WIFI") == 0;
        xmlFree(policy);
    }
    return v;
}

static int walk(struct reader *r, const xmlNode *n)
{
    for (; n; n = n->next) {
        int rc = 0;

        if (r->plat->varying_line == 0 && varies(n))
            r->plat->varying_line = (int)xmlGetLineNo(n) > 0 ? (int)xmlGetLineNo(n) : 1;
        if (is_elem(n, "link"))
            rc = add_link(r, n);
        else if (is_elem(n, "host"))
            rc = add_host(r, n);
        else if (is_elem(n, "cluster"))
            rc = add_cluster(r, n);
        if (rc == 0 && n->children)
            rc = walk(r, n->children);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A root-zone prop: cs.* keys set the timing model's parameters. */
static int zone_prop(void *ctx, const xmlNode *prop, const char *id, const char *value)
{
    struct reader *r = ctx;
    struct cs_error e2;

    if (id == NULL || strncmp(id, "cs.", 3) != 0 ||
        (r->root_cluster && strcmp(id, "cs.class") == 0))
        return 0;
    cs_error_init(&e2);
    if (value == NULL || cs_params_set(&r->plat->params, id, value, &e2) != 0)
        return cs_error_fail(r->err, CS_ERR_INVALID, r->path, xmlGetLineNo(prop), "%s",
                             value ? e2.msg : "<prop> without value");
    return 0;
}

/* What the parser's hooks refused, and where: the first refusal stops the parser. The input is
 * fed to the parser from buf + pos as it asks. */
struct guard {
    int line;
    char what[160];
    xmlParserCtxtPtr ctxt;
    const char *buf;
    size_t len, pos;
    int skip; /* depth inside a route element, whose nodes the tree does not keep */
};

/* Attributes in one start tag: libxml2 checks them for duplicates pairwise (400,000: minutes). */

/* Stop the parser with refusal what at its current line; the first refusal wins. */
static void refuse(xmlParserCtxtPtr ctxt, const char *what)
{
    struct guard *g = ctxt->_private;

    if (g->what[0] == '\0') {
        g->line = xmlSAX2GetLineNumber(ctxt);
        snprintf(g->what, sizeof(g->what), "%s", what);
    }
    xmlStopParser(ctxt);
}

/* <!DOCTYPE, reported with the parser just past the external id: an internal subset ('[' there)
 * is where entities would be declared, and SimGrid's own parser aborts on one. */
static void on_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                       const xmlChar *system_id)
{
    xmlParserCtxtPtr ctxt = ctx;

    if (ctxt->input != NULL && ctxt->input->cur != NULL && *ctxt->input->cur == '[')
        refuse(ctxt, "a platform's DOCTYPE may name its DTD (SYSTEM \"...\") but not declare "
                     "anything: no internal subset, so no entities");
    else
        xmlSAX2InternalSubset(ctx, name, external_id, system_id);
}

/* Asked for every reference to an entity other than the five predefined ones (and, with
 * prefix '%', to a parameter entity): none is allowed, declared (impossible, see above) or not
 * (libxml2 would drop it silently when a DTD is named). */
static xmlEntityPtr refuse_entity(void *ctx, const xmlChar *name, char prefix)
{
    char what[160];

    snprintf(what, sizeof(what), "entity references are not allowed in a platform (%c%.80s;)",
             prefix, (const char *)name);
    refuse(ctx, what);
    return NULL;
}

static xmlEntityPtr on_get_entity(void *ctx, const xmlChar *name)
{
    return refuse_entity(ctx, name, '&');
}

static xmlEntityPtr on_get_pentity(void *ctx, const xmlChar *name)
{
    return refuse_entity(ctx, name, '%');
}

/* Routes: the reader needs none of them (links, hosts, clusters and props are what it reads;
 * SimGrid reads the routes itself), and a platform that lists every pair's route holds most of
 * its bytes there (a 256-GPU one: 65,280 routes, 8 MB of text, 150 MB as a tree). Their
 * elements and whatever they hold are parsed, and checked as XML, but not kept. */
static int is_route(const xmlChar *name)
{
    static const char *const routes[] = {"route",       "zoneRoute",       "ASroute",
                                         "bypassRoute", "bypassZoneRoute", "bypassASroute"};

    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp((const char *)name, routes[i]) == 0)
            return 1;
    return 0;
}

static void on_start(void *ctx, const xmlChar *name, const xmlChar *prefix, const xmlChar *uri,
                     int nns, const xmlChar **ns, int nattrs, int ndefaulted, const xmlChar **attrs)
{
    struct guard *g = ((xmlParserCtxtPtr)ctx)->_private;

    if (g->skip > 0 || is_route(name))
        g->skip++;
    else
        xmlSAX2StartElementNs(ctx, name, prefix, uri, nns, ns, nattrs, ndefaulted, attrs);
}

static void on_end(void *ctx, const xmlChar *name, const xmlChar *prefix, const xmlChar *uri)
{
    struct guard *g = ((xmlParserCtxtPtr)ctx)->_private;

    if (g->skip > 0)
        g->skip--;
    else
        xmlSAX2EndElementNs(ctx, name, prefix, uri);
}

static void on_text(void *ctx, const xmlChar *text, int len)
{
    struct guard *g = ((xmlParserCtxtPtr)ctx)->_private;

    if (g->skip == 0)
        xmlSAX2Characters(ctx, text, len);
}

static void on_comment(void *ctx, const xmlChar *text)
{
    struct guard *g = ((xmlParserCtxtPtr)ctx)->_private;

    if (g->skip == 0)
        xmlSAX2Comment(ctx, text);
}

/* The parser's read callback: the next piece of the file. The parser asks as it goes, inside a
 * start tag too, which is where a tag with too many attributes is cut off. */
static int feed(void *ctx, char *out, int len)
{
    struct guard *g = ctx;

    if (g->ctxt->maxatts > 5 * CS_XML_MAX_ATTRS) {
        if (g->what[0] == '\0') {
            g->line = xmlSAX2GetLineNumber(g->ctxt);
            snprintf(g->what, sizeof(g->what),
                     "cannot read platform: a start tag with more than %d attributes",
                     CS_XML_MAX_ATTRS);
        }
        return -1;
    }
    return cs_xml_feed(g->buf, g->len, &g->pos, out, len);
}

/* Parse path into a document whose root is <platform>; NULL (err set) otherwise. A platform file
 * is at most CS_XML_MAX_BYTES. SimGrid's platforms start with <!DOCTYPE platform SYSTEM
 * "https://simgrid.org/simgrid.dtd">: a DOCTYPE naming an external DTD is accepted and never loaded
 * (no DTDLOAD, no external-subset handler, no network), but an internal subset ([...], where
 * entities are declared) and any entity reference other than the five predefined ones stop the
 * parser. No NOENT, no XINCLUDE, no HUGE (libxml2's limits stay). A NUL byte, which the parser
 * takes for the end of the text, and an encoding other than UTF-8 (or ASCII) are errors. */
static xmlDoc *read_doc(const char *path, struct cs_error *err)
{
    struct guard g = {.what = ""};
    xmlParserCtxtPtr ctxt;
    const xmlParserInput *in;
    xmlDoc *doc = NULL;
    xmlNode *root;
    char *buf;
    size_t len;
    int ok = 0;

    if (cs_file_read(path, CS_XML_MAX_BYTES, &buf, &len, err) != 0)
        return NULL;
    cs_xml_quiet();
    if ((ctxt = xmlNewParserCtxt()) == NULL) {
        free(buf);
        cs_error_set(err, path, 0, "out of memory");
        return NULL;
    }
    ctxt->_private = &g;
    g.ctxt = ctxt;
    g.buf = buf;
    g.len = len;
    ctxt->sax->internalSubset = on_doctype;
    ctxt->sax->externalSubset = NULL;
    ctxt->sax->getEntity = on_get_entity;
    ctxt->sax->getParameterEntity = on_get_pentity;
    ctxt->sax->startElementNs = on_start;
    ctxt->sax->endElementNs = on_end;
    ctxt->sax->characters = on_text;
    ctxt->sax->ignorableWhitespace = on_text;
    ctxt->sax->comment = on_comment;
    if (len > 0)
        doc = xmlCtxtReadIO(ctxt, feed, NULL, &g, path, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                XML_PARSE_BIG_LINES);
    in = ctxt->input;
    if (g.what[0] != '\0') {
        cs_error_set(err, path, g.line, "%s", g.what);
    } else if (len == 0) {
        cs_error_set(err, path, 1, "cannot read platform: Document is empty");
    } else if (cs_xml_stopped_at_nul(ctxt)) {
        cs_error_set(err, path, in->line,
                     "cannot read platform: a NUL byte, which XML does not allow (the text after "
                     "it would be ignored)");
    } else if (doc == NULL) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        const char *msg = e && e->message ? e->message : "not well-formed XML";
        int n = (int)strlen(msg);

        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
            n--;
        cs_error_set(err, path, e ? e->line : 0, "cannot read platform: %.*s", n, msg);
    } else if (in != NULL && in->buf != NULL && in->buf->encoder != NULL) {
        /* SimGrid reads the same file as bytes and aborts on UTF-16 (or any other encoding that
         * libxml2 had to decode). */
        cs_error_set(err, path, 1, "a platform must be UTF-8 (SimGrid reads its bytes), not %s",
                     in->buf->encoder->name);
    } else {
        ok = 1;
    }
    if (!ok) {
        xmlFreeDoc(doc);
        doc = NULL;
    }
    free(buf);
    xmlFreeParserCtxt(ctxt);
    if (doc == NULL)
        return NULL;
    root = xmlDocGetRootElement(doc);
    if (root == NULL || !is_elem(root, "platform")) {
        cs_error_set(err, path, root ? xmlGetLineNo(root) : 0,
                     "not a SimGrid platform (root element must be <platform>)");
        xmlFreeDoc(doc);
        return NULL;
    }
    return doc;
}

/* The GPU hosts seen by walk() must be gpu0..gpuN-1, N > 0; sets the platform's ngpus. */
static int check_gpus(struct reader *r)
{
    for (int g = 0; g < r->nhosts_gpu; g++)
        if (!r->gpu_seen[g])
            return cs_error_fail(
                r->err, CS_ERR_INVALID, r->path, 0,
                "GPU hosts must be named gpu0..gpu%d without gaps; gpu%d is missing",
                r->nhosts_gpu - 1, g);
    r->plat->ngpus = r->nhosts_gpu;
    if (r->plat->ngpus == 0)
        return cs_error_fail(r->err, CS_ERR_INVALID, r->path, 0,
                             "the platform has no GPU host (hosts named gpu0, gpu1, ...)");
    return 0;
}

int cs_platform_read(const char *path, struct cs_platform **out, struct cs_error *err)
{
    xmlDoc *doc = read_doc(path, err);
    xmlNode *root, *zone = NULL;
    struct reader r = {0};
    int rc = 0;

    if (doc == NULL)
        return CS_ERR_PARSE;
    root = xmlDocGetRootElement(doc);
    for (xmlNode *c = root->children; c; c = c->next)
        if (is_elem(c, "zone") || is_elem(c, "AS") || is_elem(c, "cluster")) {
            zone = c;
            r.root_cluster = is_elem(c, "cluster");
            break;
        }
    r.plat = calloc(1, sizeof(*r.plat));
    r.gpu_seen = calloc(MAX_GPU_ID + 1, 1);
    r.path = path;
    r.err = err;
    if (r.plat == NULL || r.gpu_seen == NULL || (r.plat->path = strdup(path)) == NULL) {
        rc = CS_ERR_NOMEM;
    } else {
        cs_params_init(&r.plat->params);
        if (zone != NULL)
            rc = each_prop(zone, zone_prop, &r);
        if (rc == 0)
            rc = walk(&r, root);
        if (rc == 0)
            rc = index_links(&r);
        if (rc == 0)
            rc = check_gpus(&r);
    }
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, NULL, 0, "out of memory");
    free(r.gpu_seen);
    xmlFreeDoc(doc);
    if (rc == 0)
        *out = r.plat;
    else
        cs_platform_free(r.plat);
    return rc;
}

int cs_platform_check_settable(const char *key, struct cs_error *err)
{
    /* the keys cs_platform_write turns into <link> bandwidth and latency attributes; the replay
     * takes each hop's latency from cs.link_lat_s itself, so that one is settable anywhere */
    static const char *const link_keys[] = {"cs.link_Bps.", "cs.sys_Bps", "cs.sys_lat_s"};
    struct cs_params any;
    double v;

    cs_params_init(&any);
    if (cs_params_get(&any, key, &v) != 0)
        return 0;
    for (size_t i = 0; i < sizeof(link_keys) / sizeof(link_keys[0]); i++)
        if (strncmp(key, link_keys[i], strlen(link_keys[i])) == 0)
            return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                                 "%s is a link parameter: SimGrid reads bandwidths from the "
                                 "platform's <link>s, so set it when writing the "
                                 "platform (`collsim platform FAMILY --set %s=VALUE` or "
                                 "--params FILE)",
                                 key, key);
    return 0;
}

/* --- writing --- */

struct w {
    xmlTextWriterPtr x;
    int bad;
    const struct cs_param_notes *notes;
};

static void start(struct w *w, const char *name)
{
    w->bad |= xmlTextWriterStartElement(w->x, (const xmlChar *)name) < 0;
}

static void end(struct w *w)
{
    w->bad |= xmlTextWriterEndElement(w->x) < 0;
}

static void at(struct w *w, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void at(struct w *w, const char *name, const char *fmt, ...)
{
    char buf[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    w->bad |= xmlTextWriterWriteAttribute(w->x, (const xmlChar *)name, (const xmlChar *)buf) < 0;
}

/* An XML comment; "--" (not allowed inside one) becomes "- -". */
static void comment(struct w *w, const char *text)
{
    char buf[1100];
    size_t n = 0;

    for (const char *c = text; *c != '\0' && n + 3 < sizeof(buf); c++) {
        buf[n++] = *c;
        if (*c == '-' && (c[1] == '-' || c[1] == '\0'))
            buf[n++] = ' ';
    }
    buf[n] = '\0';
    w->bad |= xmlTextWriterWriteComment(w->x, (const xmlChar *)buf) < 0;
}

static void prop_cb(const char *key, double value, const char *source, void *ctx)
{
    struct w *w = ctx;
    char buf[600];
    const char *note = cs_param_notes_get(w->notes, key);

    snprintf(buf, sizeof(buf), " %s ", note ? note : source);
    comment(w, buf);
    start(w, "prop");
    at(w, "id", "%s", key);
    at(w, "value", "%.9g", value);
    end(w);
}

/* A link: split-duplex (each direction its bandwidth), or shared by both directions (policy
 * "SHARED": a GPU's memory, whichever way the data go). */
static void link_policy_el(struct w *w, const char *id, double bw, double lat,
                           enum cs_link_class cls, const char *policy)
{
    start(w, "link");
    at(w, "id", "%s", id);
    at(w, "bandwidth", "%.9gBps", bw);
    at(w, "latency", "%.9gs", lat);
    at(w, "sharing_policy", "%s", policy);
    start(w, "prop");
    at(w, "id", "cs.class");
    at(w, "value", "%s", cs_link_class_name(cls));
    end(w);
    end(w);
}

static void link_el(struct w *w, const char *id, double bw, double lat, enum cs_link_class cls)
{
    link_policy_el(w, id, bw, lat, cls, "SPLITDUPLEX");
}

static void host_el(struct w *w, int g, const struct cs_params *p)
{
    start(w, "host");
    at(w, "id", "gpu%d", g);
    /* Unused by the replay (costs are times, not flops); a core per SM. */
    at(w, "speed", "1e12f");
    at(w, "core", "%.0f", p->gpu_sms);
    end(w);
}

/* The link_ctn of the link named id, UP (from the route's source) or DOWN. */
static void ctn(struct w *w, const char *id, int up)
{
    start(w, "link_ctn");
    at(w, "id", "%s", id);
    if (up >= 0) /* a shared link has no directions */
        at(w, "direction", up ? "UP" : "DOWN");
    end(w);
}

/* The link_ctn of GPU g's link named gpu<g>_<suffix>, UP (from the GPU) or DOWN. */
static void gpu_ctn(struct w *w, int g, const char *suffix, int up)
{
    char id[64];

    snprintf(id, sizeof(id), "gpu%d_%s", g, suffix);
    ctn(w, id, up);
}

/* The suffixes of a GPU's own links (gpu<g>_<suffix>), returning how many: NVLink within a group
 * (column or node), then the links between groups when there are several groups (a GPU's path to
 * its NIC: PCIe, the crossing between CPU sockets when the NIC is on the other one, the NIC); a
 * PCIe card in one machine has one link. */
static int gpu_ports(const struct cs_platform_spec *s, const char *sfx[4])
{
    int n = 0;

    switch (s->family) {
    case CS_FAM_HIER:
        sfx[0] = "nvl";
        sfx[1] = s->between == CS_LINK_NET ? "nic" : "pcie";
        return s->columns > 1 ? 2 : 1;
    case CS_FAM_DGX:
    case CS_FAM_PCIE_NET:
        if (s->family == CS_FAM_DGX)
            sfx[n++] = "nvl";
        if (s->family == CS_FAM_DGX && s->nodes == 1)
            return n;
        sfx[n++] = "pcie";
        if (s->nic_other_socket)
            sfx[n++] = "sys";
        sfx[n++] = "nic";
        return n;
    case CS_FAM_VIRTUAL:
        return 0;
    default:
        sfx[0] = "pcie";
        return 1;
    }
}

/* Routes: one per unordered pair a < b; SimGrid mirrors it for b -> a (flipping directions). A
 * route goes up n of a's links, through a shared link (the pair's NVLink bridge or the link
 * between CPU sockets) when it needs one, and down the same links of b in reverse order. */
static void route_pair(struct w *w, const struct cs_platform_spec *s, int a, int b)
{
    const char *sfx[4];
    char shared[64] = "";
    int n = gpu_ports(s, sfx), far = 0;
    int group = s->family == CS_FAM_HIER ? s->rows : DGX_GPUS; /* GPUs on one NVLink fabric */

    if (s->family == CS_FAM_VIRTUAL) {
        snprintf(shared, sizeof(shared), "hbm");
    } else if (s->family == CS_FAM_NVBRIDGE && a / 2 == b / 2) {
        n = 0;
        snprintf(shared, sizeof(shared), "bridge%d", a / 2);
    } else if (s->family == CS_FAM_HIER || s->family == CS_FAM_DGX) {
        far = a / group != b / group; /* the links between groups, else NVLink alone */
        n = far ? n - 1 : 1;
    } else if (s->family == CS_FAM_PCIE_NET) {
        /* one GPU per server: every pair goes through all of both GPUs' links */
    } else if (!s->one_socket && (a < s->gpus_per_node / 2) != (b < s->gpus_per_node / 2)) {
        snprintf(shared, sizeof(shared), "xsocket");
    }
    start(w, "route");
    at(w, "src", "gpu%d", a);
    at(w, "dst", "gpu%d", b);
    for (int i = 0; i < n; i++)
        gpu_ctn(w, a, sfx[far + i], 1);
    if (shared[0] != '\0')
        ctn(w, shared, s->family == CS_FAM_VIRTUAL ? -1 : 1);
    for (int i = n - 1; i >= 0; i--)
        gpu_ctn(w, b, sfx[far + i], 0);
    end(w);
}

/* Whether routing (a spec's) routes through switches: Floyd or Dijkstra. */
static int graph_routing(int routing)
{
    return routing == CS_ROUTING_GRAPH || routing == CS_ROUTING_FLOYD;
}

/* The GPUs that share an NVLink switch in a graph-routed platform (a column, a node; 0 for none:
 * PCIe cards), or 0 when the family is not routed as a graph. */
static int graph_group(const struct cs_platform_spec *s)
{
    return s->family == CS_FAM_HIER ? s->rows : s->family == CS_FAM_DGX ? DGX_GPUS : 0;
}

/* How many NVLink switches a graph-routed platform has (at least 1 for a100-pcie-net, which has
 * none but is routed as a graph), or 0 when the family lists every pair. */
static int graph_groups(const struct cs_platform_spec *s)
{
    switch (s->family) {
    case CS_FAM_HIER:
        return s->columns;
    case CS_FAM_DGX:
        return s->nodes;
    case CS_FAM_PCIE_NET:
        return 1;
    default:
        return 0;
    }
}

/* Routes through switches, for SimGrid's Floyd or Dijkstra routing (fewest links first): GPU g to
 * router nvswitchK of its column or node over its NVLink, and to router network over its links
 * between groups (gpu_ports). Every pair then gets route_pair's links: two GPUs of a group meet at
 * their switch (2 links, fewer than any path through the network), others at the network. The
 * routes between a100-hier's columns have a single link per GPU, which would tie with NVLink: each
 * GPU's way to the network also crosses a FATPIPE link gpuG_between of its own at the link's
 * bandwidth (zero latency), which never binds, every transfer through it crossing a GPU link of
 * that bandwidth too. One per GPU, not one per column: a link that many GPUs' transfers share ties
 * them into one system for SimGrid's max-min solver, which then solves them all at every event. */
static void graph_routes(struct w *w, const struct cs_platform_spec *s, int n)
{
    const char *sfx[4];
    int np = gpu_ports(s, sfx), group = graph_group(s), nvl = group > 0;
    int far = np > nvl; /* links between groups: to the network */
    char id[64];

    for (int k = 0; nvl && k < graph_groups(s); k++) {
        snprintf(id, sizeof(id), "nvswitch%d", k);
        start(w, "router");
        at(w, "id", "%s", id);
        end(w);
    }
    if (far) {
        start(w, "router");
        at(w, "id", "network");
        end(w);
    }
    for (int g = 0; g < n; g++) {
        if (nvl) {
            start(w, "route");
            at(w, "src", "gpu%d", g);
            at(w, "dst", "nvswitch%d", g / group);
            gpu_ctn(w, g, sfx[0], 1);
            end(w);
        }
        if (!far)
            continue;
        start(w, "route");
        at(w, "src", "gpu%d", g);
        at(w, "dst", "network");
        for (int i = nvl; i < np; i++)
            gpu_ctn(w, g, sfx[i], 1);
        if (s->family == CS_FAM_HIER && s->columns > 1) {
            snprintf(id, sizeof(id), "gpu%d_between", g);
            ctn(w, id, -1);
        }
        end(w);
    }
}

/* The FATPIPE links of graph_routes between a100-hier's columns, one per GPU. */
static void graph_links(struct w *w, const struct cs_platform_spec *s, const struct cs_params *p,
                        int n)
{
    char id[64];

    for (int g = 0; s->family == CS_FAM_HIER && s->columns > 1 && g < n; g++) {
        snprintf(id, sizeof(id), "gpu%d_between", g);
        link_policy_el(w, id, p->link_Bps[s->between], 0, s->between, "FATPIPE");
    }
}

/* The routing a spec's platform is written with: the one asked for, else Full up to
 * CS_PLATFORM_FULL_GPUS, above it zones for a100-hier and dgx-a100, Floyd for a100-pcie-net. */
static int routing_of(const struct cs_platform_spec *s, int n)
{
    if (s->routing != 0)
        return s->routing;
    if (n <= CS_PLATFORM_FULL_GPUS)
        return CS_ROUTING_FULL;
    return s->family == CS_FAM_HIER || s->family == CS_FAM_DGX ? CS_ROUTING_ZONES
                                                               : CS_ROUTING_FLOYD;
}

/* The zone of NVLink group k (a100-hier's column, dgx-a100's node), or its gateway (gw). */
static void group_name(const struct cs_platform_spec *s, int k, int gw, char *buf, size_t len)
{
    snprintf(buf, len, "%s%d%s", s->family == CS_FAM_HIER ? "column" : "node", k, gw ? "_gw" : "");
}

static int spec_gpus(const struct cs_platform_spec *s)
{
    switch (s->family) {
    case CS_FAM_HIER:
        return s->rows * s->columns;
    case CS_FAM_DGX:
        return s->nodes * DGX_GPUS;
    case CS_FAM_PCIE_NET:
        return s->nodes;
    case CS_FAM_VIRTUAL:
        return s->ranks;
    case CS_FAM_TOPO:
        return s->topo != NULL ? s->nodes * s->topo->ngpus : 0;
    default:
        return s->gpus_per_node;
    }
}

static const char *describe_family(const struct cs_platform_spec *s, const struct cs_params *p,
                                   char *buf, size_t len)
{
    int a100 = s->gpu == CS_GPU_A100;
    const char *what = gpus[a100 ? CS_GPU_A100 : s->gpu].what;

    switch (s->family) {
    case CS_FAM_TOPO:
        cs_topo_describe(s->topo, s->nodes, buf, len);
        break;
    case CS_FAM_VIRTUAL:
        snprintf(buf, len,
                 " %d virtual ranks on one %s (hosts gpu0.. are ranks, not GPUs), as the "
                 "calibration harness runs a schedule on one GPU: they meet in its memory, one "
                 "link hbm shared by both directions (cs.link_Bps.hbm: half the HBM bandwidth, "
                 "each FIFO byte written and read once), and all their threadblocks share its %.0f "
                 "SMs (cs.ranks_per_gpu). ",
                 s->ranks, what, p->gpu_sms);
        break;
    case CS_FAM_PCIE_4GPU:
        snprintf(buf, len, " %d %s PCIe cards, %s. ", s->gpus_per_node, a100 ? "A100" : what,
                 s->one_socket ? "on one CPU package (one socket: its NUMA nodes on one IO die, "
                                 "no inter-socket link): every pair crosses the root complex"
                               : "half behind each of two CPU sockets: every pair crosses a root "
                                 "complex; pairs on different sockets also cross the inter-socket "
                                 "link (xsocket, cs.sys_Bps)");
        break;
    case CS_FAM_NVBRIDGE:
        snprintf(buf, len,
                 " %d %s PCIe cards in NVLink-bridged pairs (bridgeK, %s, cs.link_Bps.nvlink),"
                 " pairs joined by PCIe through %s%s. ",
                 s->gpus_per_node, a100 ? "A100" : what, a100 ? "NV12" : "NVLink4 x 12",
                 s->one_socket ? "the NUMA nodes of one CPU package (one socket: one IO die, no "
                                 "inter-socket link; a pair's path is the two GPUs' PCIe links)"
                               : "two CPU sockets",
                 a100 ? " (Azure NC A100 v4)" : "");
        break;
    case CS_FAM_HIER:
        snprintf(buf, len,
                 " %d x %d %s grid: gpu c*%d+r is row r of column c; GPUs of a column share an "
                 "NVLink fabric (one nvlink port each); columns are joined by %s (one %s link per "
                 "GPU). ",
                 s->rows, s->columns, what, s->rows,
                 s->between == CS_LINK_NET ? "the network" : "PCIe",
                 s->between == CS_LINK_NET ? "NIC" : "PCIe");
        break;
    case CS_FAM_DGX:
        snprintf(buf, len,
                 " %d node(s) of 8 %s on NVSwitch (one %.0f GB/s port per GPU in NCCL's "
                 "model), %s per GPU, %s. Across nodes a GPU uses its own NIC (rail): %s. ",
                 s->nodes, a100 ? "A100 SXM4" : what,
                 gpus[a100 ? CS_GPU_A100 : s->gpu].nvlink_Bps / 1e9, nics[s->nic].what,
                 s->nic_other_socket ? "each on the other CPU socket than its GPU (one PCIe link "
                                       "per GPU, then its path across the sockets, gpuN_sys, "
                                       "cs.sys_Bps)"
                 : a100              ? "two GPUs and two NICs per PCIe Gen4 switch (modelled "
                                       "non-blocking: one PCIe link per GPU)"
                                     : "GPUs and NICs on PCIe Gen5 switches (modelled "
                                       "non-blocking: one PCIe link per GPU)",
                 s->nic_other_socket ? "gpu pcie, sys, nic, peer nic, peer sys, peer pcie"
                                     : "gpu pcie, nic, peer nic, peer pcie");
        break;
    case CS_FAM_PCIE_NET:
        snprintf(buf, len,
                 " %d server(s), each with one A100 PCIe card and %s on %s CPU socket %s the "
                 "GPU (nccl-tests#293's system, one A100 PCIe 40GB and a ConnectX-6 HDR NIC per "
                 "server, is nic hdr, nic-socket other). Every pair goes %s. ",
                 s->nodes, nics[s->nic].what, s->nic_other_socket ? "the other" : "the same",
                 s->nic_other_socket ? "than" : "as",
                 s->nic_other_socket
                     ? "gpu pcie, sys (across the sockets, cs.sys_Bps), nic, peer nic, peer sys, "
                       "peer pcie"
                     : "gpu pcie, nic, peer nic, peer pcie");
        break;
    }
    return buf;
}

/* Whether a family can hold a GPU kind: SXM parts on NVSwitch, PCIe cards in the PCIe families;
 * a grid and virtual ranks take any. */
static int gpu_fits(enum cs_platform_family fam, enum cs_gpu_kind gpu)
{
    switch (fam) {
    case CS_FAM_DGX:
        return gpu != CS_GPU_H100_PCIE;
    case CS_FAM_PCIE_4GPU:
    case CS_FAM_NVBRIDGE:
        return gpu == CS_GPU_A100 || gpu == CS_GPU_H100_PCIE;
    case CS_FAM_PCIE_NET:
        return gpu == CS_GPU_A100;
    default:
        return 1;
    }
}

/* The spec must name a family and a size the writer supports. */
static int check_spec(const struct cs_platform_spec *s, int n, struct cs_error *err)
{
    if (cs_platform_family_name(s->family) == NULL)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "unknown platform family");
    if (s->family == CS_FAM_TOPO && s->topo == NULL)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "the from family needs the machine's files (collsim platform from "
                             "FILE...)");
    if (s->family == CS_FAM_TOPO &&
        (graph_routing(s->routing) || s->routing == CS_ROUTING_ZONES || n > CS_PLATFORM_FULL_GPUS))
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "%d GPUs: a platform from a machine's files lists every pair's route, "
                             "up to %d GPUs",
                             n, CS_PLATFORM_FULL_GPUS);
    if (s->family == CS_FAM_HIER && (s->rows < 1 || s->columns < 1))
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "--rows and --columns must be at least 1");
    if (s->family == CS_FAM_NVBRIDGE && (s->gpus_per_node < 2 || s->gpus_per_node % 2))
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "a100-pcie-nvbridge needs an even number of GPUs (pairs)");
    if ((int)s->nic < CS_NIC_HDR || (int)s->nic > CS_NIC_2X100)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "unknown NIC type");
    if (cs_gpu_kind_name(s->gpu) == NULL)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "unknown GPU kind");
    if (!gpu_fits(s->family, s->gpu))
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "%s is not a GPU of the %s family: %s",
                             cs_gpu_kind_name(s->gpu), cs_platform_family_name(s->family),
                             s->family == CS_FAM_DGX ? "an NVSwitch node holds SXM GPUs (a100, "
                                                       "h100, h200)"
                             : s->family == CS_FAM_PCIE_NET
                                 ? "it models nccl-tests#293's A100 PCIe servers (a100)"
                                 : "it holds PCIe cards (a100, h100-pcie)");
    if (n < 1 || n > CS_PLATFORM_MAX_GPUS ||
        ((s->family == CS_FAM_DGX || s->family == CS_FAM_PCIE_NET) && s->nodes < 1))
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "%d GPUs: a platform has 1 to %d GPUs", n,
                             CS_PLATFORM_MAX_GPUS);
    if (graph_groups(s) == 0 && graph_routing(s->routing))
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "routing through switches (Floyd, Dijkstra) is for a100-hier, "
                             "dgx-a100 and "
                             "a100-pcie-net, not %s",
                             cs_platform_family_name(s->family));
    if (s->routing == CS_ROUTING_ZONES && s->family != CS_FAM_HIER && s->family != CS_FAM_DGX)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "routing by zones (a zone per NVLink group) is for a100-hier and "
                             "dgx-a100, not %s",
                             cs_platform_family_name(s->family));
    if (n > CS_PLATFORM_GRAPH_GPUS && routing_of(s, n) != CS_ROUTING_ZONES)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "%d GPUs: above %d a platform is routed by zones (a100-hier and "
                             "dgx-a100, to %d GPUs); a graph's routes (floyd, dijkstra, "
                             "a100-pcie-net) take too long to compute",
                             n, CS_PLATFORM_GRAPH_GPUS, CS_PLATFORM_MAX_GPUS);
    if (n > CS_PLATFORM_FULL_GPUS && (graph_groups(s) == 0 || s->routing == CS_ROUTING_FULL))
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0,
                             "%d GPUs: Full routing lists every pair, up to %d GPUs (a100-hier, "
                             "dgx-a100 and a100-pcie-net route through switches, to %d)",
                             n, CS_PLATFORM_FULL_GPUS, CS_PLATFORM_GRAPH_GPUS);
    return 0;
}

/* The links of GPU g, each with its class's bandwidth and latency (the class the reader guesses
 * from the id) but the crossing between CPU sockets (a pcie link at cs.sys_Bps and cs.sys_lat_s),
 * and the NVLink bridge of its pair. */
static void gpu_links(struct w *w, const struct cs_platform_spec *s, const struct cs_params *p,
                      int g)
{
    const char *sfx[4];
    char id[64];
    int n = gpu_ports(s, sfx);
    enum cs_link_class c;

    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "gpu%d_%s", g, sfx[i]);
        c = guess_class(id);
        if (strcmp(sfx[i], "sys") == 0)
            link_el(w, id, p->sys_Bps, p->sys_lat_s, CS_LINK_PCIE);
        else
            link_el(w, id, p->link_Bps[c], p->link_lat_s[c], c);
    }
    if (s->family == CS_FAM_NVBRIDGE && g % 2 == 0) {
        snprintf(id, sizeof(id), "bridge%d", g / 2);
        link_el(w, id, p->link_Bps[CS_LINK_NVLINK], p->link_lat_s[CS_LINK_NVLINK], CS_LINK_NVLINK);
    }
}

/* A link of a machine from its files, with its class's latency. */
struct topo_w {
    struct w *w;
    const struct cs_params *p;
};

static void topo_link(void *ctx, const char *id, double Bps, enum cs_link_class cls)
{
    const struct topo_w *tw = ctx;

    link_el(tw->w, id, Bps, tw->p->link_lat_s[cls], cls);
}

/* The route of GPUs a < b of a machine from its files (topo.h's). */
static void topo_route(struct w *w, const struct cs_topo *t, int a, int b)
{
    struct cs_topo_hop hop[CS_TOPO_MAX_HOPS];
    int n;

    cs_topo_route(t, a, b, hop, &n);
    start(w, "route");
    at(w, "src", "gpu%d", a);
    at(w, "dst", "gpu%d", b);
    for (int i = 0; i < n; i++)
        ctn(w, hop[i].id, hop[i].up);
    end(w);
}

/* Zones (CS_ROUTING_ZONES): each NVLink group in a zone of its own (Full: its pairs as
 * route_pair lists them, and each GPU's way out over its links between groups to the group's
 * gateway, which SimGrid mirrors for the way in), and in the root zone a route between every
 * two groups, gateway to gateway, over a FATPIPE link fabricA_B of its own (in the zone fabric,
 * which has no hosts and no routes): SimGrid refuses an
 * empty route, and a link no faster than the links between groups that every route through it
 * crosses would bind nothing (no latency; one per pair of groups, so that it ties no other
 * transfers to one another in SimGrid's max-min solver). A pair's route is then route_pair's
 * with that link in the middle, and SimGrid resolves it from two small tables, with nothing
 * to compute when the platform loads. */
static void zone_routes(struct w *w, const struct cs_platform_spec *s, const struct cs_params *p,
                        int n)
{
    const char *sfx[4];
    int np = gpu_ports(s, sfx), group = graph_group(s), groups = graph_groups(s);
    double bw = 0;
    char id[64], gw[64];

    for (int i = 1; i < np; i++) {
        double b = strcmp(sfx[i], "sys") == 0 ? p->sys_Bps : p->link_Bps[guess_class(sfx[i])];

        bw = b > bw ? b : bw;
    }
    /* the fabric links first, in a zone of their own with no routes: SimGrid checks a new
     * link's name against every zone made before it, and 130816 of them after 512 node zones
     * took it 10 s to load (4096 GPUs) */
    if (groups > 1) {
        start(w, "zone");
        at(w, "id", "fabric");
        at(w, "routing", "None");
    }
    for (int a = 0; a < groups; a++)
        for (int b = a + 1; b < groups; b++) {
            snprintf(id, sizeof(id), "fabric%d_%d", a, b);
            link_policy_el(w, id, bw, 0, s->family == CS_FAM_HIER ? s->between : CS_LINK_NET,
                           "FATPIPE");
        }
    if (groups > 1)
        end(w);
    for (int k = 0; k < groups; k++) {
        start(w, "zone");
        group_name(s, k, 0, id, sizeof(id));
        at(w, "id", "%s", id);
        at(w, "routing", "Full");
        for (int g = k * group; g < (k + 1) * group && g < n; g++)
            host_el(w, g, p);
        for (int g = k * group; g < (k + 1) * group && g < n; g++)
            gpu_links(w, s, p, g);
        group_name(s, k, 1, gw, sizeof(gw));
        if (groups > 1) {
            start(w, "router");
            at(w, "id", "%s", gw);
            end(w);
        }
        for (int a = k * group; a < (k + 1) * group && a < n; a++) {
            for (int b = a + 1; b < (k + 1) * group && b < n; b++)
                route_pair(w, s, a, b);
            if (groups == 1)
                continue;
            start(w, "route");
            at(w, "src", "gpu%d", a);
            at(w, "dst", "%s", gw);
            for (int i = 1; i < np; i++)
                gpu_ctn(w, a, sfx[i], 1);
            end(w);
        }
        end(w);
    }
    for (int a = 0; a < groups; a++)
        for (int b = a + 1; b < groups; b++) {
            start(w, "zoneRoute");
            group_name(s, a, 0, id, sizeof(id));
            at(w, "src", "%s", id);
            group_name(s, b, 0, id, sizeof(id));
            at(w, "dst", "%s", id);
            group_name(s, a, 1, id, sizeof(id));
            at(w, "gw_src", "%s", id);
            group_name(s, b, 1, id, sizeof(id));
            at(w, "gw_dst", "%s", id);
            snprintf(id, sizeof(id), "fabric%d_%d", a, b);
            ctn(w, id, -1);
            end(w);
        }
}

/* The <platform> element: header comments, the zone with its parameter props, hosts, links and
 * routes. */
static void platform_el(struct w *w, const struct cs_platform_spec *s, const struct cs_params *p,
                        int n)
{
    char text[1024];
    int routing = routing_of(s, n), graph = graph_routing(routing);
    const char *name = cs_platform_family_name(s->family);

    /* a Hopper node by its own name (hgx-h100), else the family and the GPU */
    for (size_t i = 0; s->gpu != CS_GPU_A100 && i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (aliases[i].fam == s->family && aliases[i].gpu == s->gpu)
            name = aliases[i].name;
    start(w, "platform");
    at(w, "version", "4.1");
    snprintf(text, sizeof(text),
             " written by `collsim platform %s`%s%s%s%s%s; every <prop> below names its source; "
             "link cs.class props give the per-call overhead class ",
             name,
             s->gpu != CS_GPU_A100 && name == cs_platform_family_name(s->family) ? " for GPU " : "",
             s->gpu != CS_GPU_A100 && name == cs_platform_family_name(s->family)
                 ? cs_gpu_kind_name(s->gpu)
                 : "",
             s->origin ? " (" : "", s->origin ? s->origin : "", s->origin ? ")" : "");
    comment(w, text);
    comment(w, describe_family(s, p, text, sizeof(text)));
    for (int k = 0; s->family == CS_FAM_TOPO && k < s->topo->nnotes; k++) {
        snprintf(text, sizeof(text), " %s ", s->topo->notes[k]);
        comment(w, text);
    }
    start(w, "zone");
    at(w, "id", "%s", cs_platform_family_name(s->family));
    at(w, "routing", !graph ? "Full" : routing == CS_ROUTING_GRAPH ? "DijkstraCache" : "Floyd");
    w->notes = s->notes;
    cs_params_each(p, prop_cb, w);
    if (routing == CS_ROUTING_ZONES) {
        zone_routes(w, s, p, n);
        end(w); /* zone */
        end(w); /* platform */
        return;
    }
    for (int g = 0; g < n; g++)
        host_el(w, g, p);
    for (int g = 0; g < n && s->family != CS_FAM_TOPO; g++)
        gpu_links(w, s, p, g);
    for (int k = 0; s->family == CS_FAM_TOPO && k < s->nodes; k++)
        cs_topo_each_link(s->topo, k, topo_link, &(struct topo_w){w, p});
    if ((s->family == CS_FAM_PCIE_4GPU || s->family == CS_FAM_NVBRIDGE) && n > 1 && !s->one_socket)
        link_el(w, "xsocket", p->sys_Bps, p->sys_lat_s, CS_LINK_PCIE);
    if (s->family == CS_FAM_VIRTUAL && n > 1)
        link_policy_el(w, "hbm", p->link_Bps[CS_LINK_HBM], p->link_lat_s[CS_LINK_HBM], CS_LINK_HBM,
                       "SHARED");
    if (graph)
        graph_links(w, s, p, n);
    if (graph)
        graph_routes(w, s, n);
    for (int a = 0; a < n && !graph; a++)
        for (int b = a + 1; b < n; b++)
            if (s->family == CS_FAM_TOPO)
                topo_route(w, s->topo, a, b);
            else
                route_pair(w, s, a, b);
    end(w); /* zone */
    end(w); /* platform */
}

/* Write the formatted document to path ("-" is stdout) through cs_outfile_open. */
static int save(xmlBufferPtr buf, const char *path, struct cs_error *err)
{
    struct cs_outfile out;
    int rc;

    if ((rc = cs_outfile_open(&out, path, err)) != 0)
        return rc;
    fwrite(xmlBufferContent(buf), 1, (size_t)xmlBufferLength(buf), out.fp);
    return cs_outfile_close(&out, err); /* a failed write fails the close */
}

int cs_platform_write(const struct cs_platform_spec *s, const struct cs_params *p, const char *path,
                      struct cs_error *err)
{
    xmlBufferPtr buf;
    struct w w = {NULL, 0, NULL};
    int n = spec_gpus(s), rc;

    if ((rc = check_spec(s, n, err)) != 0)
        return rc;
    buf = xmlBufferCreate();
    w.x = buf ? xmlNewTextWriterMemory(buf, 0) : NULL;
    if (w.x == NULL) {
        xmlBufferFree(buf);
        return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
    }
    xmlTextWriterSetIndent(w.x, 1);
    xmlTextWriterSetIndentString(w.x, (const xmlChar *)"  ");
    w.bad |= xmlTextWriterStartDocument(w.x, NULL, "UTF-8", NULL) < 0;
    w.bad |= xmlTextWriterWriteDTD(w.x, (const xmlChar *)"platform", NULL,
                                   (const xmlChar *)"https://simgrid.org/simgrid.dtd", NULL) < 0;
    platform_el(&w, s, p, n);
    w.bad |= xmlTextWriterEndDocument(w.x) < 0;
    xmlFreeTextWriter(w.x);
    if (w.bad) {
        cs_error_set(err, NULL, 0, "could not format the platform XML");
        rc = CS_ERR_IO;
    } else {
        rc = save(buf, path, err);
    }
    xmlBufferFree(buf);
    return rc;
}
