/* smitopo.c: `nvidia-smi topo -m` into a machine view: its devices, NVLinks, and the PCIe tree
 * its distances describe. */
#include "smitopo.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meas.h"
#include "parse.h"

#define MAX_COLS 512 /* devices of a matrix */
#define MAX_TOKENS (MAX_COLS + 16)

/* A cell: its distance (0 when unknown or NVLink), or its NVLinks. */
struct cell {
    int level, nvl, line;
};

struct matrix {
    int n; /* devices (columns) */
    char name[MAX_COLS][32];
    int is_gpu[MAX_COLS];
    int row_line[MAX_COLS];  /* 0: no row */
    int numa[MAX_COLS];      /* a GPU row's NUMA affinity, -1 */
    char cpus[MAX_COLS][48]; /* a GPU row's CPU affinity, "" */
    int header_line;
    int ncol_extra;    /* CPU Affinity, NUMA Affinity, GPU NUMA ID columns */
    int numa_col;      /* which extra column is NUMA Affinity, -1 */
    int cpu_col;       /* which is CPU Affinity, -1 */
    struct cell *cell; /* n x n */
};

/* A line without the launcher's prefix, the terminal's escape codes and the carriage return,
 * split at blanks into tokens (pointers into buf). */
static int tokens(const char *line, size_t len, char *buf, size_t cap, char **tok)
{
    size_t k = 0, b = cs_meas_line_body(line, len);
    int n = 0;

    for (size_t i = b; i < len && k + 1 < cap; i++) {
        if (line[i] == 0x1b) { /* ESC [ ... letter */
            if (i + 1 < len && line[i + 1] == '[') {
                for (i += 2; i < len && !isalpha((unsigned char)line[i]); i++)
                    ;
            }
            continue;
        }
        buf[k++] = line[i] == '\t' || line[i] == '\r' ? ' ' : line[i];
    }
    buf[k] = '\0';
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && n < MAX_TOKENS;
         w = strtok_r(NULL, " ", &save))
        tok[n++] = w;
    return n;
}

/* A cell's word: X (-1), NV# (its count in *nvl), PIX, PXB, PHB, NODE, SYS, SOC (a level), or
 * 0 when it is none of them. */
static int cell_word(const char *w, int *nvl)
{
    static const struct {
        const char *w;
        int level;
    } words[] = {{"PIX", CS_TOPO_PIX},  {"PXB", CS_TOPO_PXB}, {"PHB", CS_TOPO_PHB},
                 {"NODE", CS_TOPO_PHB}, {"SYS", CS_TOPO_SYS}, {"SOC", CS_TOPO_SYS}};

    *nvl = 0;
    if (strcmp(w, "X") == 0)
        return -1;
    if (strncmp(w, "NV", 2) == 0 && cs_parse_int(w + 2, 1, 64, nvl) == 0)
        return CS_TOPO_SYS + 1;
    for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
        if (strcmp(w, words[k].w) == 0)
            return words[k].level;
    return 0;
}

/* Whether tok[0..n) is a header: GPU0 first, device names, then the affinity columns. */
static int read_header(struct matrix *m, char **tok, int n, int line)
{
    int k = 0, nvl;

    if (n < 1 || strcmp(tok[0], "GPU0") != 0 || (n > 1 && cell_word(tok[1], &nvl) != 0))
        return 0;
    m->n = 0;
    m->ncol_extra = 0;
    m->numa_col = -1;
    m->cpu_col = -1;
    for (; k < n && m->n < MAX_COLS; k++) {
        const char *w = tok[k];

        if (strcmp(w, "CPU") == 0 || strcmp(w, "NUMA") == 0 || strcmp(w, "GPU") == 0)
            break;
        snprintf(m->name[m->n], sizeof(m->name[0]), "%s", w);
        m->is_gpu[m->n] = strncmp(w, "GPU", 3) == 0 && isdigit((unsigned char)w[3]);
        m->row_line[m->n] = 0;
        m->cpus[m->n][0] = '\0';
        m->numa[m->n++] = -1;
    }
    /* "CPU Affinity", "NUMA Affinity", "GPU NUMA ID": one value each in a GPU's row */
    for (; k < n; k++)
        if (strcmp(tok[k], "Affinity") == 0 || strcmp(tok[k], "ID") == 0) {
            if (strcmp(tok[k - 1], "NUMA") == 0 && strcmp(tok[k], "Affinity") == 0)
                m->numa_col = m->ncol_extra;
            if (strcmp(tok[k - 1], "CPU") == 0 && strcmp(tok[k], "Affinity") == 0)
                m->cpu_col = m->ncol_extra;
            m->ncol_extra++;
        }
    m->header_line = line;
    return 1;
}

static int fail(const struct cs_topo *t, int file, int line, struct cs_error *err, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static int fail(const struct cs_topo *t, int file, int line, struct cs_error *err, const char *fmt,
                ...)
{
    char msg[700];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_error_fail(err, CS_ERR_INVALID, t->files[file], line, "%s", msg);
}

/* A row: the device, its cells, and (a GPU's) its affinity columns. */
static int read_row(struct matrix *m, int r, char **tok, int n, int line, const struct cs_topo *t,
                    int file, struct cs_error *err)
{
    if (n < 1 + m->n || n > 1 + m->n + m->ncol_extra + 2)
        return fail(t, file, line, err, "a row of %d cells under a header of %d devices (line %d)",
                    n - 1, m->n, m->header_line);
    if (m->row_line[r] != 0)
        return fail(t, file, line, err, "a second row for %s (line %d)", m->name[r],
                    m->row_line[r]);
    m->row_line[r] = line;
    for (int c = 0; c < m->n; c++) {
        int nvl, w = cell_word(tok[1 + c], &nvl);
        struct cell *x = &m->cell[r * m->n + c];

        if (w == 0 || (w == -1) != (c == r))
            return fail(t, file, line, err, "%s-%s: '%.20s' is not %s", m->name[r], m->name[c],
                        tok[1 + c],
                        c == r ? "X (the device itself)"
                               : "one of nvidia-smi's NV#, PIX, PXB, PHB, NODE, SYS");
        if (w > CS_TOPO_SYS && (!m->is_gpu[r] || !m->is_gpu[c]))
            return fail(t, file, line, err, "%s-%s: NVLink %s between a GPU and a NIC", m->name[r],
                        m->name[c], tok[1 + c]);
        *x = (struct cell){w > CS_TOPO_SYS ? 0 : w < 0 ? 0 : w, nvl, line};
    }
    if (m->is_gpu[r] && m->cpu_col >= 0 && n > 1 + m->n + m->cpu_col &&
        strcmp(tok[1 + m->n + m->cpu_col], "N/A") != 0)
        snprintf(m->cpus[r], sizeof(m->cpus[r]), "%s", tok[1 + m->n + m->cpu_col]);
    if (m->is_gpu[r] && m->numa_col >= 0 && n > 1 + m->n + m->numa_col) {
        const char *v = tok[1 + m->n + m->numa_col];
        char first[16];

        snprintf(first, sizeof(first), "%.*s", (int)strcspn(v, "-,"), v);
        if (cs_parse_int(first, 0, 1 << 20, &m->numa[r]) != 0)
            m->numa[r] = -1;
    }
    return 0;
}

/* "  NIC0: mlx5_0" of the NIC Legend: NIC columns by their devices' names. */
static void legend(struct matrix *m, char **tok, int n)
{
    if (n != 2 || strncmp(tok[0], "NIC", 3) != 0 || tok[0][strlen(tok[0]) - 1] != ':')
        return;
    tok[0][strlen(tok[0]) - 1] = '\0';
    for (int c = 0; c < m->n; c++)
        if (strcmp(m->name[c], tok[0]) == 0)
            snprintf(m->name[c], sizeof(m->name[0]), "%s", tok[1]);
}

/* Union-find over the columns. */
static int root(int *uf, int x)
{
    while (uf[x] != x)
        x = uf[x] = uf[uf[x]];
    return x;
}

static void join(int *uf, int a, int b)
{
    uf[root(uf, a)] = root(uf, b);
}

/* The matrix's NVLinks into t: all GPU pairs NV# of one count, three GPUs or more, more links
 * than a GPU has (18) were it direct: NVSwitch ports of that many; else pairs. */
static int nvlinks(const struct matrix *m, struct cs_topo *t, const int *dev, int file)
{
    int c = -1, all = 1, ngpu = 0;

    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++)
            if (m->is_gpu[i] && m->is_gpu[j] && i != j) {
                int v = m->cell[i * m->n + j].nvl;

                all &= v > 0 && (c < 0 || v == c);
                c = v;
            }
    for (int i = 0; i < m->n; i++)
        ngpu += m->is_gpu[i];
    t->nvl_known = 1;
    if (all && ngpu >= 3 && c * (ngpu - 1) > 18) {
        for (int i = 0; i < m->n; i++)
            if (m->is_gpu[i])
                t->dev[dev[i]].nvs_links = c;
        if (c == 12) {
            t->gpu.kind = CS_GPU_A100;
            t->gpu.sxm = 1;
            snprintf(t->gpu.what, sizeof(t->gpu.what),
                     "NV12 between every pair (%s:%d): 12 NVLinks to NVSwitch, an A100 SXM4's "
                     "(H100 and H200 have 18)",
                     t->files[file], m->header_line);
        }
        return 0;
    }
    for (int i = 0; i < m->n; i++)
        for (int j = i + 1; j < m->n; j++) {
            const struct cell *x = &m->cell[i * m->n + j];

            if (x->nvl > 0 && cs_topo_add_nvl(t, dev[i], dev[j], x->nvl, file, x->line) < 0)
                return CS_ERR_NOMEM;
        }
    return 0;
}

/* The PCIe tree the distances give: a CPU per set of devices joined by PHB or closer (and GPUs
 * of one NUMA node), a switch per set joined by PXB or closer (two or more devices), under it a
 * switch per PIX set, each device alone on one when the PXB set holds several. */
static int build_tree(const struct matrix *m, struct cs_topo *t, int *dev, int file,
                      struct cs_error *err)
{
    int n = m->n, numa[MAX_COLS], top[MAX_COLS], pix[MAX_COLS];
    int cpu_of[MAX_COLS], sw_of[MAX_COLS], leaf_of[MAX_COLS];
    struct cs_topo_dev d;

    for (int i = 0; i < n; i++)
        numa[i] = top[i] = pix[i] = i, cpu_of[i] = sw_of[i] = leaf_of[i] = -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int l = m->cell[i * n + j].level;

            if (i == j || l == 0)
                continue;
            if (l <= CS_TOPO_PHB)
                join(numa, i, j);
            if (l <= CS_TOPO_PXB)
                join(top, i, j);
            if (l == CS_TOPO_PIX)
                join(pix, i, j);
        }
    /* GPUs of one NUMA node, or of the same CPUs, hang off one CPU */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if ((m->numa[i] >= 0 && m->numa[i] == m->numa[j]) ||
                (m->cpus[i][0] != '\0' && strcmp(m->cpus[i], m->cpus[j]) == 0))
                join(numa, i, j);
    for (int i = 0; i < n; i++) {
        int r = root(numa, i), nu = -1;

        if (cpu_of[r] >= 0) {
            cpu_of[i] = cpu_of[r];
            continue;
        }
        for (int j = 0; j < n; j++)
            if (root(numa, j) == r && m->numa[j] >= 0) {
                if (nu >= 0 && m->numa[j] != nu)
                    return fail(t, file, m->row_line[j], err,
                                "%s is on NUMA node %d, but its PCIe distances put it with a GPU "
                                "of NUMA node %d",
                                m->name[j], m->numa[j], nu);
                nu = m->numa[j];
            }
        cs_topo_dev_init(&d, CS_TOPO_CPU, -1, file, m->header_line);
        d.numa = nu;
        if ((cpu_of[r] = cs_topo_add_dev(t, &d)) < 0)
            return CS_ERR_NOMEM;
        cpu_of[i] = cpu_of[r];
    }
    for (int i = 0; i < n; i++) {
        int r = root(top, i), size = 0, npix = 0, parent;

        for (int j = 0; j < n; j++)
            if (root(top, j) == r) {
                size++;
                npix += root(pix, j) == j;
            }
        parent = cpu_of[i];
        if (size >= 2) {
            if (sw_of[r] < 0) {
                cs_topo_dev_init(&d, CS_TOPO_SWITCH, cpu_of[i], file, m->header_line);
                if ((sw_of[r] = cs_topo_add_dev(t, &d)) < 0)
                    return CS_ERR_NOMEM;
            }
            parent = sw_of[r];
            if (npix >= 2) {
                int p = root(pix, i);

                if (leaf_of[p] < 0) {
                    cs_topo_dev_init(&d, CS_TOPO_SWITCH, sw_of[r], file, m->header_line);
                    if ((leaf_of[p] = cs_topo_add_dev(t, &d)) < 0)
                        return CS_ERR_NOMEM;
                }
                parent = leaf_of[p];
            }
        }
        cs_topo_dev_init(&d, m->is_gpu[i] ? CS_TOPO_GPU : CS_TOPO_NIC, parent, file,
                         m->row_line[i] ? m->row_line[i] : m->header_line);
        snprintf(d.name, sizeof(d.name), "%s", m->name[i]);
        if (!m->is_gpu[i])
            d.nports = 1;
        else
            d.cuda_dev = atoi(m->name[i] + 3);
        if ((dev[i] = cs_topo_add_dev(t, &d)) < 0)
            return CS_ERR_NOMEM;
    }
    /* every distance stated must be the tree's */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const struct cell *x = &m->cell[i * n + j];

            if (i == j || x->level == 0)
                continue;
            if (cs_topo_level(t, dev[i], dev[j]) != (enum cs_topo_level)x->level)
                return fail(t, file, x->line, err,
                            "%s-%s is %s, which no PCIe tree with the matrix's other distances "
                            "gives",
                            m->name[i], m->name[j],
                            cs_topo_level_name((enum cs_topo_level)x->level));
            if (m->is_gpu[i] &&
                cs_topo_add_rel(t, dev[i], dev[j], (enum cs_topo_level)x->level, file, x->line) < 0)
                return CS_ERR_NOMEM;
        }
    return 0;
}

/* The cells of a row the matrix lacks, from their mirror; a mismatch between a cell and its
 * mirror is an error. */
static int mirror(struct matrix *m, const struct cs_topo *t, int file, struct cs_error *err)
{
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++) {
            struct cell *a = &m->cell[i * m->n + j], *b = &m->cell[j * m->n + i];

            if (i == j)
                continue;
            if (m->row_line[i] == 0 && m->row_line[j] != 0)
                *a = *b;
            else if (m->row_line[i] != 0 && m->row_line[j] != 0 &&
                     (a->level != b->level || a->nvl != b->nvl))
                return fail(t, file, a->line > b->line ? a->line : b->line, err,
                            "%s-%s and %s-%s differ: the matrix is not symmetric", m->name[i],
                            m->name[j], m->name[j], m->name[i]);
        }
    return 0;
}

int cs_smitopo_read(const char *text, size_t len, struct cs_topo *t, int file, struct cs_error *err)
{
    struct matrix *m = calloc(1, sizeof(*m));
    char *buf = NULL, *tok[MAX_TOKENS];
    int line = 0, rows = 0, in_rows = 0, rc = 1, dev[MAX_COLS];
    size_t cap = 0;

    if (m == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, t->files[file], 0, "out of memory");
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
        int n, r = -1;

        line++;
        if (l + 1 > cap) {
            char *grown = realloc(buf, l + 1);

            if (grown == NULL) {
                rc = cs_error_fail(err, CS_ERR_NOMEM, t->files[file], line, "out of memory");
                break;
            }
            buf = grown;
            cap = l + 1;
        }
        n = tokens(text + i, l, buf, cap, tok);
        i = nl ? (size_t)(nl - text) + 1 : len;
        if (m->n == 0 || (!in_rows && rows == 0)) {
            if (read_header(m, tok, n, line)) {
                free(m->cell);
                if ((m->cell = calloc((size_t)m->n * (size_t)m->n, sizeof(*m->cell))) == NULL) {
                    rc = cs_error_fail(err, CS_ERR_NOMEM, t->files[file], line, "out of memory");
                    break;
                }
                in_rows = 1;
                continue;
            }
        }
        if (m->n > 0 && n > 0)
            for (int c = 0; c < m->n && r < 0; c++)
                if (strcmp(tok[0], m->name[c]) == 0)
                    r = c;
        if (in_rows && r >= 0) {
            if ((rc = read_row(m, r, tok, n, line, t, file, err)) != 0)
                break;
            rc = 1;
            rows++;
            continue;
        }
        if (rows > 0)
            in_rows = 0;
        if (rows > 0)
            legend(m, tok, n);
    }
    free(buf);
    if (rc == 1 && rows > 0) {
        rc = mirror(m, t, file, err);
        if (rc == 0)
            rc = build_tree(m, t, dev, file, err);
        if (rc == 0)
            rc = nvlinks(m, t, dev, file);
        if (rc == CS_ERR_NOMEM)
            cs_error_set(err, t->files[file], 0, "out of memory");
        t->tree_known = 1;
        if (rc == 0) {
            for (int c = 0; c < m->n; c++)
                if (m->row_line[c] == 0 &&
                    cs_topo_note(t, "%s:%d: the matrix has no row for %s (its column used)",
                                 t->files[file], m->header_line, m->name[c]) != 0)
                    rc = CS_ERR_NOMEM;
        }
    }
    free(m->cell);
    free(m);
    return rc;
}
