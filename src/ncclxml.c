/* ncclxml.c: NCCL's topology XML (skeletons and dumps) into a machine view; graph files checked. */
#include "ncclxml.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* An <nvlink> of a GPU, resolved once every GPU of the file is known. */
struct pending {
    int gpu, count, tclass, line;
    char target[16];
};

struct xr {
    struct cs_topo *t;
    int file;
    struct cs_error *err;
    const char *name;
    struct pending *nvl;
    int nnvl, cap;
    int dumped; /* the file has <gpu> elements: its NVLinks are all there */
};

static int bad(struct xr *x, const struct cs_xml_elem *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(struct xr *x, const struct cs_xml_elem *e, int code, const char *fmt, ...)
{
    char msg[700];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_error_fail(x->err, code, x->name, e->line, "<%s>: %s", e->name, msg);
}

/* A decimal attribute in [lo, hi] into *out, unchanged when absent or empty. */
static int int_attr(struct xr *x, const struct cs_xml_elem *e, const char *name, int lo, int hi,
                    int *out)
{
    const char *v = cs_xml_attr(e, name);

    if (v == NULL || v[0] == '\0')
        return 0;
    if (cs_parse_int(v, lo, hi, out) != 0)
        return bad(x, e, CS_ERR_INVALID, "%s=\"%.40s\" is not an integer from %d to %d", name, v,
                   lo, hi);
    return 0;
}

/* A hexadecimal attribute ("0x10de", as NCCL writes them) into *out, unchanged when absent or
 * empty. */
static int hex_attr(struct xr *x, const struct cs_xml_elem *e, const char *name, int *out)
{
    const char *v = cs_xml_attr(e, name), *p;
    long val = 0;
    int n = 0;

    if (v == NULL || v[0] == '\0')
        return 0;
    p = v[0] == '0' && (v[1] == 'x' || v[1] == 'X') ? v + 2 : v;
    for (; *p && n <= 8; p++, n++) {
        if (!isxdigit((unsigned char)*p))
            break;
        val = val * 16 +
              (isdigit((unsigned char)*p) ? *p - '0' : tolower((unsigned char)*p) - 'a' + 10);
    }
    if (*p != '\0' || n == 0 || n > 8 || val > 0x7fffffffL)
        return bad(x, e, CS_ERR_INVALID, "%s=\"%.40s\" is not a hexadecimal number", name, v);
    *out = (int)val;
    return 0;
}

/* A PCI bus id "dddd:bb:dd.f" (or "bb:dd.f"), lower case, into busid[16]. 0, or -1. */
static int norm_busid(const char *v, char busid[16])
{
    unsigned dom = 0, bus, dev, fn;
    char tail;

    if (strlen(v) > 16)
        return -1;
    for (const char *p = v; *p; p++)
        if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
            return -1;
    if (sscanf(v, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 ||
        (dom = 0, sscanf(v, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3)) {
        if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
            return -1;
        snprintf(busid, 16, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return 0;
    }
    return -1;
}

/* link_speed: "16 GT/s", "16.0 GT/s PCIe", "" or "Unknown" (0: unknown); a rate must be a PCIe
 * generation's (2.5, 5, 8, 16, 32 or 64 GT/s per lane). */
static int speed_attr(struct xr *x, const struct cs_xml_elem *e, double *GTs)
{
    static const double rates[] = {2.5, 5, 8, 16, 32, 64};
    const char *v = cs_xml_attr(e, "link_speed");
    char *end;
    double r;

    *GTs = 0;
    if (v == NULL || v[0] == '\0' || strcmp(v, "Unknown") == 0 || strcmp(v, "N/A") == 0 ||
        strncmp(v, "Unknown", 7) == 0)
        return 0;
    r = strtod(v, &end);
    while (*end == ' ')
        end++;
    if (end == v || (*end != '\0' && strncmp(end, "GT/s", 4) != 0))
        return bad(x, e, CS_ERR_INVALID, "link_speed=\"%.40s\" is not a PCIe rate (GT/s)", v);
    for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++)
        if (fabs(r - rates[k]) < 1e-9)
            *GTs = r;
    if (*GTs == 0)
        return bad(x, e, CS_ERR_INVALID,
                   "link_speed=\"%.40s\" is not a PCIe generation's rate (2.5, 5, 8, 16, 32, 64 "
                   "GT/s)",
                   v);
    return 0;
}

/* The PCIe link of <pci> e (its link to the parent): rate, lanes, bus id, PCI ids. */
static int pci_attrs(struct xr *x, const struct cs_xml_elem *e, struct cs_topo_dev *d)
{
    const char *b = cs_xml_attr(e, "busid");
    int rc;

    if (b != NULL && b[0] != '\0' && norm_busid(b, d->busid) != 0)
        return bad(x, e, CS_ERR_INVALID, "busid=\"%.40s\" is not a PCI bus id (dddd:bb:dd.f)", b);
    if ((rc = speed_attr(x, e, &d->link_GTs)) != 0 ||
        (rc = int_attr(x, e, "link_width", 0, 32, &d->link_width)) != 0 ||
        (rc = hex_attr(x, e, "vendor", &d->pci_vendor)) != 0 ||
        (rc = hex_attr(x, e, "device", &d->pci_device)) != 0)
        return rc;
    if (d->pci_vendor == 0xffff) /* a vendor skeleton's switch: no real device */
        d->pci_vendor = d->pci_device = 0;
    /* the widths PCIe defines (0: not given, as skeletons leave it) */
    if (d->link_width > 0 && d->link_width != 1 && d->link_width != 2 && d->link_width != 4 &&
        d->link_width != 8 && d->link_width != 12 && d->link_width != 16 && d->link_width != 32)
        return bad(x, e, CS_ERR_INVALID,
                   "link_width=\"%d\" is not a PCIe link's lanes (1, 2, 4, 8, "
                   "12, 16 or 32)",
                   d->link_width);
    for (int i = 0; i < x->t->ndev && d->busid[0]; i++)
        if (strcmp(x->t->dev[i].busid, d->busid) == 0)
            return bad(x, e, CS_ERR_INVALID, "bus id %s is given twice (line %d)", d->busid,
                       x->t->dev[i].line);
    return 0;
}

static int add(struct xr *x, const struct cs_xml_elem *e, const struct cs_topo_dev *d)
{
    int i = cs_topo_add_dev(x->t, d);

    if (i < 0)
        return bad(x, e, CS_ERR_INVALID, "more than %d devices", CS_TOPO_MAX_DEVS);
    return i;
}

/* The <net> ports of a <nic> (e) into NIC device i. */
static int read_ports(struct xr *x, const struct cs_xml_elem *e, int i)
{
    for (const struct cs_xml_elem *c = e->child; c != NULL; c = c->next) {
        struct cs_topo_dev *d = &x->t->dev[i];
        int dev = -1, speed = 0, gdr = -1, rc;
        const char *name = cs_xml_attr(c, "name");

        if (strcmp(c->name, "net") != 0)
            continue;
        if ((rc = int_attr(x, c, "dev", 0, 1 << 20, &dev)) != 0 ||
            (rc = int_attr(x, c, "speed", -1, 100000000, &speed)) != 0 ||
            (rc = int_attr(x, c, "gdr", 0, 1, &gdr)) != 0)
            return rc;
        if (d->nports == 0)
            d->net_dev = dev;
        d->nports++;
        /* NCCL: "Some NICs define speed = -1" (then 10 Gb/s); 0 and -1 are unknown here */
        if (speed > 0)
            d->speed_bps += speed * 1e6;
        if (gdr >= 0)
            d->gdr = d->gdr == 1 ? 1 : gdr;
        if (name != NULL && name[0] != '\0' &&
            strlen(d->name) + strlen(name) + 2 <= sizeof(d->name))
            snprintf(d->name + strlen(d->name), sizeof(d->name) - strlen(d->name), "%s%s",
                     d->name[0] ? "," : "", name);
    }
    return 0;
}

/* A <gpu> (e) of GPU device i: its CUDA index, compute capability, GPUDirect, NVLinks. */
static int read_gpu(struct xr *x, const struct cs_xml_elem *e, int i)
{
    struct cs_topo_dev *d = &x->t->dev[i];
    int rc;

    x->dumped = 1;
    if ((rc = int_attr(x, e, "dev", 0, 1 << 20, &d->cuda_dev)) != 0 ||
        (rc = int_attr(x, e, "sm", 0, 10000, &d->sm)) != 0 ||
        (rc = int_attr(x, e, "gdr", 0, 1, &d->gdr)) != 0)
        return rc;
    for (int j = 0; j < x->t->ndev; j++)
        if (j != i && x->t->dev[j].kind == CS_TOPO_GPU && d->cuda_dev >= 0 &&
            x->t->dev[j].cuda_dev == d->cuda_dev)
            return bad(x, e, CS_ERR_INVALID, "dev=\"%d\" is given twice (line %d)", d->cuda_dev,
                       x->t->dev[j].line);
    for (const struct cs_xml_elem *c = e->child; c != NULL; c = c->next) {
        struct pending *p;
        const char *target = cs_xml_attr(c, "target");
        int count = 1, tclass = -1;

        if (strcmp(c->name, "nvlink") != 0)
            continue;
        if ((rc = int_attr(x, c, "count", 1, 64, &count)) != 0 ||
            (rc = hex_attr(x, c, "tclass", &tclass)) != 0)
            return rc;
        if (x->nnvl == x->cap) {
            int cap = x->cap ? 2 * x->cap : 16;
            struct pending *grown =
                cap > 65536 ? NULL : realloc(x->nvl, (size_t)cap * sizeof(*grown));

            if (grown == NULL)
                return bad(x, c, CS_ERR_INVALID, "too many NVLinks");
            x->nvl = grown;
            x->cap = cap;
        }
        p = &x->nvl[x->nnvl++];
        p->gpu = i;
        p->count = count;
        p->tclass = tclass;
        p->line = c->line;
        if (target == NULL || norm_busid(target, p->target) != 0)
            return bad(x, c, CS_ERR_INVALID, "target=\"%.40s\" is not a PCI bus id",
                       target ? target : "");
    }
    return 0;
}

/* A GPU's vendor: NVIDIA's, or none given (a skeleton). AMD's and Intel's GPUs are refused;
 * other display controllers (a server's BMC) are not GPUs. 1 a GPU, 0 not, or an error. */
static int gpu_vendor(struct xr *x, const struct cs_xml_elem *e, const struct cs_topo_dev *d)
{
    if (d->pci_vendor == 0 || d->pci_vendor == 0x10de)
        return 1;
    if (d->pci_vendor == 0x1002 || d->pci_vendor == 0x8086)
        return bad(x, e, CS_ERR_USAGE,
                   "a GPU of %s (PCI %04x:%04x): collsim has models for NVIDIA A100, H100 and H200 "
                   "only",
                   d->pci_vendor == 0x1002 ? "AMD" : "Intel", d->pci_vendor, d->pci_device);
    return 0;
}

static int read_pci(struct xr *x, const struct cs_xml_elem *e, int parent);

/* The children of a switch or CPU (i) that NCCL nests: <pci>, <nic>, <gpu>. */
static int read_children(struct xr *x, const struct cs_xml_elem *e, int i)
{
    for (const struct cs_xml_elem *c = e->child; c != NULL; c = c->next) {
        int rc = 0;

        if (strcmp(c->name, "pci") == 0) {
            rc = read_pci(x, c, i);
        } else if (strcmp(c->name, "nic") == 0) {
            struct cs_topo_dev d;
            int k;

            cs_topo_dev_init(&d, CS_TOPO_NIC, i, x->file, c->line);
            if ((k = add(x, c, &d)) < 0)
                return k;
            rc = read_ports(x, c, k);
        } else if (strcmp(c->name, "gpu") == 0) {
            struct cs_topo_dev d;
            int k;

            cs_topo_dev_init(&d, CS_TOPO_GPU, i, x->file, c->line);
            if ((k = add(x, c, &d)) < 0)
                return k;
            rc = read_gpu(x, c, k);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Whether e has a child element named name. */
static int has_child(const struct cs_xml_elem *e, const char *name)
{
    for (const struct cs_xml_elem *c = e->child; c != NULL; c = c->next)
        if (strcmp(c->name, name) == 0)
            return 1;
    return 0;
}

/* A <pci> device under parent: a switch (class 0x0604..), a GPU (0x03....), a NIC (0x02....);
 * without a class, what its children say. Other devices are skipped. */
static int read_pci(struct xr *x, const struct cs_xml_elem *e, int parent)
{
    struct cs_topo_dev d;
    int cls = -1, rc, k, kind = 0;

    cs_topo_dev_init(&d, CS_TOPO_SWITCH, parent, x->file, e->line);
    if ((rc = hex_attr(x, e, "class", &cls)) != 0 || (rc = pci_attrs(x, e, &d)) != 0)
        return rc;
    if (cls >= 0)
        kind = cls >> 16 == 0x03    ? CS_TOPO_GPU
               : cls >> 8 == 0x0604 ? CS_TOPO_SWITCH
               : cls >> 16 == 0x02  ? CS_TOPO_NIC
                                    : 0;
    else
        kind = has_child(e, "gpu")   ? CS_TOPO_GPU
               : has_child(e, "nic") ? CS_TOPO_NIC
               : has_child(e, "pci") ? CS_TOPO_SWITCH
                                     : 0;
    if (kind == CS_TOPO_GPU && (rc = gpu_vendor(x, e, &d)) <= 0)
        return rc;
    if (kind == 0)
        return 0;
    d.kind = (enum cs_topo_kind)kind;
    if ((k = add(x, e, &d)) < 0)
        return k;
    if (kind == CS_TOPO_SWITCH)
        return read_children(x, e, k);
    for (const struct cs_xml_elem *c = e->child; c != NULL; c = c->next)
        if (kind == CS_TOPO_GPU && strcmp(c->name, "gpu") == 0 && (rc = read_gpu(x, c, k)) != 0)
            return rc;
        else if (kind == CS_TOPO_NIC && strcmp(c->name, "nic") == 0 &&
                 (rc = read_ports(x, c, k)) != 0)
            return rc;
    return 0;
}

/* <cpu numaid affinity arch vendor familyid modelid>, and what hangs off it. */
static int read_cpu(struct xr *x, const struct cs_xml_elem *e)
{
    struct cs_topo_dev d;
    const char *vendor = cs_xml_attr(e, "vendor");
    int rc, k;

    cs_topo_dev_init(&d, CS_TOPO_CPU, -1, x->file, e->line);
    if ((rc = int_attr(x, e, "numaid", -1, 1 << 20, &d.numa)) != 0 ||
        (rc = int_attr(x, e, "familyid", -1, 1 << 20, &d.cpu_family)) != 0 ||
        (rc = int_attr(x, e, "modelid", -1, 1 << 20, &d.cpu_model)) != 0)
        return rc;
    snprintf(d.vendor, sizeof(d.vendor), "%s", vendor ? vendor : "");
    for (int i = 0; i < x->t->ndev && d.numa >= 0; i++) /* one machine: one CPU per NUMA node */
        if (x->t->dev[i].kind == CS_TOPO_CPU && x->t->dev[i].file == x->file &&
            x->t->dev[i].numa == d.numa)
            return bad(x, e, CS_ERR_INVALID, "numaid=\"%d\" is given twice (line %d)", d.numa,
                       x->t->dev[i].line);
    if ((k = add(x, e, &d)) < 0)
        return k;
    return read_children(x, e, k);
}

/* Per ordered pair of GPUs, the NVLinks each side lists (a dump lists both directions). */
static int resolve_nvlinks(struct xr *x)
{
    struct cs_topo *t = x->t;

    for (int k = 0; k < x->nnvl; k++) {
        struct pending *p = &x->nvl[k];
        int peer = -1;

        for (int d = 0; d < t->ndev && peer < 0; d++)
            if (t->dev[d].kind == CS_TOPO_GPU && strcmp(t->dev[d].busid, p->target) == 0)
                peer = d;
        if (peer == p->gpu) {
            if (cs_topo_note(t,
                             "%s:%d: an NVLink from GPU %s to itself (NCCL joins nothing): "
                             "ignored",
                             x->name, p->line, p->target) != 0)
                return CS_ERR_NOMEM;
            continue;
        }
        if (peer >= 0) {
            int dup = 0;

            for (int j = 0; j < k; j++)
                if (x->nvl[j].gpu == p->gpu && strcmp(x->nvl[j].target, p->target) == 0 &&
                    x->nvl[j].count >= 0)
                    dup = 1;
            if (dup)
                return cs_error_fail(x->err, CS_ERR_INVALID, x->name, p->line,
                                     "<nvlink>: a second <nvlink> to %s from this GPU", p->target);
            for (int j = 0; j < t->nnvl; j++)
                if ((t->nvl[j].a == p->gpu && t->nvl[j].b == peer) ||
                    (t->nvl[j].b == p->gpu && t->nvl[j].a == peer)) {
                    if (t->nvl[j].count != p->count)
                        return cs_error_fail(x->err, CS_ERR_INVALID, x->name, p->line,
                                             "<nvlink>: %d NVLinks to %s, but line %d gives %d "
                                             "the other way",
                                             p->count, p->target, t->nvl[j].line, t->nvl[j].count);
                    peer = -2;
                }
            if (peer >= 0 && cs_topo_add_nvl(t, p->gpu, peer, p->count, x->file, p->line) < 0)
                return CS_ERR_NOMEM;
            continue;
        }
        if (p->tclass >> 8 == 0x0680) { /* an NVSwitch */
            int *n = &t->dev[p->gpu].nvs_links;

            *n = (*n > 0 ? *n : 0) + p->count;
        } else if (p->tclass >> 16 == 0x06) {
            if (cs_topo_note(t, "%s:%d: an NVLink to a CPU (%s): host traffic only, not modelled",
                             x->name, p->line, p->target) != 0)
                return CS_ERR_NOMEM;
        } else {
            return cs_error_fail(x->err, CS_ERR_INVALID, x->name, p->line,
                                 "<nvlink>: target %s is no GPU of the file%s", p->target,
                                 p->tclass < 0 ? " (and no tclass says what it is)" : "");
        }
    }
    return 0;
}

int cs_ncclxml_read(const struct cs_xml_elem *e, struct cs_topo *t, int file, struct cs_error *err)
{
    struct xr x = {t, file, err, t->files[file], NULL, 0, 0, 0};
    int rc = 0;

    if (strcmp(e->name, "system") != 0)
        return cs_error_fail(err, CS_ERR_INVALID, x.name, e->line,
                             "<%s>: not NCCL's topology (its root is <system>)", e->name);
    for (const struct cs_xml_elem *c = e->child; c != NULL && rc == 0; c = c->next)
        if (strcmp(c->name, "cpu") == 0)
            rc = read_cpu(&x, c);
    if (rc == 0)
        rc = resolve_nvlinks(&x);
    if (rc == CS_ERR_NOMEM)
        cs_error_set(err, x.name, 0, "out of memory");
    free(x.nvl);
    t->nvl_known = x.dumped;
    t->tree_known = 1;
    return rc;
}

/* ---- graph files */

/* A graph's typeintra as a distance: 0 NVLink (NVL, NVB), else PCIe's (PIX .. SYS; NODE is
 * PHB here), -1 when unknown. */
static int type_level(const char *s)
{
    static const struct {
        const char *name;
        int level;
    } types[] = {{"LOC", 0},           {"NVL", 0},           {"NVB", 0},
                 {"C2C", 0},           {"PIX", CS_TOPO_PIX}, {"PXB", CS_TOPO_PXB},
                 {"PXN", CS_TOPO_PXB}, {"PHB", CS_TOPO_PHB}, {"NODE", CS_TOPO_PHB},
                 {"SYS", CS_TOPO_SYS}, {"NET", CS_TOPO_SYS}};

    for (size_t k = 0; s != NULL && k < sizeof(types) / sizeof(types[0]); k++)
        if (strcmp(s, types[k].name) == 0)
            return types[k].level;
    return -1;
}

/* The machine's local index of CUDA device dev: by <gpu dev> when the GPUs carry it, else dev. */
static int gpu_of_dev(const struct cs_topo *t, int dev)
{
    for (int i = 0; i < t->ngpus; i++)
        if (t->dev[t->gpus[i]].cuda_dev == dev)
            return i;
    return dev < t->ngpus && t->dev[t->gpus[0]].cuda_dev < 0 ? dev : -1;
}

/* The distance of two local GPUs: 0 over NVLink, else PCIe's. */
static int pair_level(const struct cs_topo *t, int i, int j)
{
    int a = t->gpus[i], b = t->gpus[j];

    for (int k = 0; k < t->nnvl; k++)
        if ((t->nvl[k].a == a && t->nvl[k].b == b) || (t->nvl[k].a == b && t->nvl[k].b == a))
            return 0;
    if (t->nvs_Bps != NULL && t->nvs_Bps[a] > 0 && t->nvs_Bps[b] > 0)
        return 0;
    return (int)cs_topo_level(t, a, b);
}

int cs_ncclxml_check_graph(const struct cs_xml_elem *e, const struct cs_topo *t, const char *name,
                           struct cs_error *err)
{
    if (strcmp(e->name, "graphs") != 0)
        return cs_error_fail(err, CS_ERR_INVALID, name, e->line, "<%s>: not an NCCL graph file",
                             e->name);
    for (const struct cs_xml_elem *g = e->child; g != NULL; g = g->next) {
        const char *type = cs_xml_attr(g, "typeintra");
        int most = type_level(type);

        if (strcmp(g->name, "graph") != 0)
            continue;
        if (type != NULL && most < 0)
            return cs_error_fail(err, CS_ERR_INVALID, name, g->line,
                                 "<graph>: typeintra=\"%.20s\" is not one of NCCL's path types",
                                 type);
        for (const struct cs_xml_elem *c = g->child; c != NULL; c = c->next) {
            int ring[CS_TOPO_MAX_GPUS], n = 0;

            if (strcmp(c->name, "channel") != 0)
                continue;
            for (const struct cs_xml_elem *d = c->child; d != NULL; d = d->next) {
                const char *v = cs_xml_attr(d, "dev");
                int dev, i;

                if (strcmp(d->name, "gpu") != 0)
                    continue;
                if (v == NULL || cs_parse_int(v, 0, 1 << 20, &dev) != 0 ||
                    (i = gpu_of_dev(t, dev)) < 0)
                    return cs_error_fail(err, CS_ERR_INVALID, name, d->line,
                                         "<gpu>: dev=\"%.20s\" is not a GPU of the machine (%d "
                                         "GPUs)",
                                         v ? v : "", t->ngpus);
                if (n < CS_TOPO_MAX_GPUS)
                    ring[n++] = i;
            }
            for (int k = 0; k + 1 < n && most >= 0; k++) {
                int l = pair_level(t, ring[k], ring[k + 1]);

                if (l > most)
                    return cs_error_fail(err, CS_ERR_INVALID, name, c->line,
                                         "<channel>: GPUs %d and %d are %s apart on the machine, "
                                         "beyond the graph's typeintra %s (line %d)",
                                         ring[k], ring[k + 1],
                                         cs_topo_level_name((enum cs_topo_level)l), type, g->line);
            }
        }
    }
    return 0;
}
