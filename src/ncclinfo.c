/* ncclinfo.c: the NCCL INFO log reader: NCCL's own lines, nccl-tests' banner and table. */
#include "ncclinfo.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "meas.h"
#include "parse.h"

/* Longest line looked at: a ring of 4096 ranks is about 25 KB. */
#define MAX_LINE (256 * 1024)
#define MAX_CONNS 1000000
#define MAX_AFFINITIES 4096

/* "Setting affinity for GPU D to MASK", seen before the rank of (host, D) is known. */
struct affinity {
    int host, dev, line;
    char mask[96];
};

struct rd {
    struct cs_ncclinfo *log;
    const char *name;
    struct cs_error *err;
    int line;
    int host; /* the current line's host (index into log->hosts), -1 if none */
    int dev;  /* the current line's [dev], -1 if none */
    int naff;
    struct affinity *aff;
    char using_net[64]; /* the first "Using network X" line's X, and its line */
    int using_line;
};

static int fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct rd *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_error_fail(r->err, CS_ERR_INVALID, r->name, r->line, "%s", msg);
}

static const char *skip_blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A decimal integer at *s (an optional '-'), within [lo, hi], advancing *s past it: 0, or -1. */
static int take_int(const char **s, long lo, long hi, int *out)
{
    char *end;
    long v;

    if (!isdigit((unsigned char)**s) && !(**s == '-' && isdigit((unsigned char)(*s)[1])))
        return -1;
    v = strtol(*s, &end, 10);
    if (v < lo || v > hi)
        return -1;
    *s = end;
    *out = (int)v;
    return 0;
}

/* The host of a line, added to the log's hosts when new: its index, or -1 when full. */
static int host_index(struct cs_ncclinfo *log, const char *name, size_t len)
{
    char(*grown)[64];

    if (len == 0 || len >= sizeof(log->hosts[0]))
        return -1;
    for (int i = 0; i < log->nhosts; i++)
        if (strlen(log->hosts[i]) == len && memcmp(log->hosts[i], name, len) == 0)
            return i;
    if (log->nhosts == CS_NCCLINFO_MAX_HOSTS ||
        (grown = realloc(log->hosts, (size_t)(log->nhosts + 1) * sizeof(*grown))) == NULL)
        return -1;
    log->hosts = grown;
    memcpy(log->hosts[log->nhosts], name, len);
    log->hosts[log->nhosts][len] = '\0';
    return log->nhosts++;
}

/* The message of an NCCL line: what follows "NCCL INFO ", after "HOST:PID:TID [DEV] " whose host
 * and device go into r. NULL when the line is not NCCL's. */
static const char *info_message(struct rd *r, const char *body)
{
    const char *info = strstr(body, "NCCL INFO ");
    const char *colon, *br;

    r->host = r->dev = -1;
    if (info == NULL)
        return NULL;
    colon = memchr(body, ':', (size_t)(info - body));
    if (colon != NULL && colon > body && memchr(body, ' ', (size_t)(colon - body)) == NULL)
        r->host = host_index(r->log, body, (size_t)(colon - body));
    for (br = info; br > body && br[-1] == ' '; br--)
        ;
    if (br > body && br[-1] == ']') {
        const char *open = br - 1;

        while (open > body && open[-1] != '[')
            open--;
        if (open > body) {
            const char *p = open;

            if (take_int(&p, 0, 1 << 20, &r->dev) != 0 || *p != ']')
                r->dev = -1;
        }
    }
    return info + strlen("NCCL INFO ");
}

static struct cs_ncclinfo_rank *rank_of(struct cs_ncclinfo *log, int r)
{
    return log->ranks != NULL && r >= 0 && r < log->nranks ? &log->ranks[r] : NULL;
}

/* Rank r is named on the current line: remember the first line, and its host when the line is
 * its own (mine). */
static void note_rank(struct rd *r, int rank, int mine)
{
    struct cs_ncclinfo_rank *rk = rank_of(r->log, rank);

    if (rk == NULL)
        return;
    if (rk->line == 0)
        rk->line = r->line;
    if (mine && rk->host < 0 && r->host >= 0)
        rk->host = r->host;
    if (mine && rk->cuda_dev < 0 && r->dev >= 0)
        rk->cuda_dev = r->dev;
}

/* A PCI bus id as NCCL prints it in hex without separators (101c0: 0000:10:1c.0), into busid. */
static int busid_from_hex(const char *hex, size_t n, char busid[16])
{
    char pad[10];

    if (n < 4 || n > 9)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)hex[i]))
            return -1;
    memset(pad, '0', 9);
    for (size_t i = 0; i < n; i++)
        pad[9 - n + i] = (char)tolower((unsigned char)hex[i]);
    snprintf(busid, 16, "%.4s:%.2s:%.2s.%c", pad, pad + 4, pad + 6, pad[8]);
    return 0;
}

/* "NCCL version 2.9.9+cuda11.2" */
static int read_version(struct rd *r, const char *v)
{
    int maj, min, patch = 0;
    const char *p = skip_blank(v);
    size_t n = strcspn(p, " \t\r");

    if (take_int(&p, 1, 99, &maj) != 0 || *p++ != '.' || take_int(&p, 0, 99, &min) != 0)
        return 0;
    if (*p == '.' && (p++, take_int(&p, 0, 99, &patch)) != 0)
        return 0;
    if (r->log->version != 0) /* every rank prints it: one version, or two runs joined */
        return r->log->version == maj * 10000 + min * 100 + patch
                   ? 0
                   : fail(r,
                          "NCCL %d.%d.%d, after NCCL %s on line %d: the logs of two runs; "
                          "give one run's",
                          maj, min, patch, r->log->version_text, r->log->version_line);
    r->log->version = maj * 10000 + min * 100 + patch;
    snprintf(r->log->version_text, sizeof(r->log->version_text), "%.*s",
             (int)(n < sizeof(r->log->version_text) ? n : sizeof(r->log->version_text) - 1),
             skip_blank(v));
    r->log->version_line = r->line;
    return 0;
}

/* Whether msg holds word followed by a blank (as word_int reads it). */
static int has_word(const char *msg, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = msg; (p = strstr(p, word)) != NULL; p += n)
        if ((p == msg || p[-1] == ' ') && p[n] == ' ')
            return 1;
    return 0;
}

/* The value after word in the blank-separated msg ("rank 3 nranks 16"): 0 and *out, or -1. */
static int word_int(const char *msg, const char *word, long lo, long hi, int *out)
{
    size_t n = strlen(word);

    for (const char *p = msg; (p = strstr(p, word)) != NULL; p += n) {
        const char *v = p + n;

        if ((p == msg || p[-1] == ' ') && *v == ' ') {
            v = skip_blank(v);
            return take_int(&v, lo, hi, out);
        }
    }
    return -1;
}

/* The communicator's rank count: the first "comm ... nRanks|nranks N" line, else the nccl-tests
 * banner's ranks, else the first ring's length. */
static int find_nranks(const char *text, size_t len)
{
    int banner = 0, ring = 0;

    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
        char buf[512];
        const char *info, *p;
        int n, rk;

        snprintf(buf, sizeof(buf), "%.*s", (int)(l < sizeof(buf) - 1 ? l : sizeof(buf) - 1),
                 text + i);
        i += l + 1;
        info = strstr(buf, "NCCL INFO ");
        if (info != NULL && starts(info + 10, "comm 0x") &&
            (word_int(info, "nRanks", 1, CS_NCCLINFO_MAX_RANKS, &n) == 0 ||
             word_int(info, "nranks", 1, CS_NCCLINFO_MAX_RANKS, &n) == 0))
            return n;
        if ((p = strstr(buf, "#")) != NULL && (p = strstr(p, " Rank ")) != NULL &&
            strstr(p, " on ") != NULL && strstr(p, " device ") != NULL) {
            p = skip_blank(p + 6);
            if (take_int(&p, 0, CS_NCCLINFO_MAX_RANKS - 1, &rk) == 0 && rk + 1 > banner)
                banner = rk + 1;
        }
        if (ring == 0 && info != NULL &&
            (starts(info + 10, "Channel ") || starts(info + 10, "Ring ")) &&
            strstr(info, "->") == NULL && (p = strstr(info, " : ")) != NULL) {
            for (p += 3; *(p = skip_blank(p)) != '\0' && take_int(&p, 0, 1 << 20, &rk) == 0;)
                ring++;
            if (ring > CS_NCCLINFO_MAX_RANKS)
                ring = 0;
        }
    }
    return banner ? banner : ring;
}

/* "Channel 00/08 :    0   7   6 ...", "Ring 00 : 0 1 2": one ring of the communicator. A ring
 * of another length is another communicator's; the same channel printed again in another order
 * too. */
static int read_ring(struct rd *r, int k, const char *list)
{
    struct cs_ncclinfo *log = r->log;
    int n = 0, rk, rc = 0, *ring;
    unsigned char *seen;
    const char *p = list;

    if (log->nranks == 0 || log->rings == NULL)
        return 0;
    ring = calloc((size_t)log->nranks + 1, sizeof(int));
    seen = calloc((size_t)log->nranks, 1);
    if (ring == NULL || seen == NULL) {
        rc = cs_error_fail(r->err, CS_ERR_NOMEM, r->name, r->line, "out of memory");
        goto done;
    }
    for (; *(p = skip_blank(p)) != '\0' && take_int(&p, 0, 1 << 20, &rk) == 0 && n <= log->nranks;
         n++)
        ring[n] = rk;
    if (n != log->nranks) {
        log->other_lines++;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (ring[i] >= log->nranks || seen[ring[i]]) {
            rc = fail(r, "ring %d: rank %d %s in a ring of the %d ranks", k, ring[i],
                      ring[i] >= log->nranks ? "is not one" : "comes twice", log->nranks);
            goto done;
        }
        seen[ring[i]] = 1;
    }
    if (log->ring_line[k] != 0) {
        log->other_lines += memcmp(ring, cs_ncclinfo_ring(log, k), (size_t)n * sizeof(int)) != 0;
        goto done;
    }
    memcpy(log->rings + (size_t)k * (size_t)log->nranks, ring, (size_t)n * sizeof(int));
    log->ring_line[k] = r->line;
    if (k + 1 > log->nrings)
        log->nrings = k + 1;
done:
    free(ring);
    free(seen);
    return rc;
}

/* The transport of a connection ("P2P/IPC/read", "NET/IB/0/GDRDMA", "SHM/direct/direct"), its
 * NET device into *dev (-1 for others): the transport, or 0 when unknown. */
static enum cs_ncclinfo_via parse_via(const char *via, int *dev, char *net, size_t netlen)
{
    char buf[256], *seg[16], *save = NULL;
    int n = 0, d = -1, gdr = 0, di = -1;

    *dev = -1;
    snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(via, "\r\n"), via);
    if (starts(buf, "P2P"))
        return strstr(buf, "/read") ? CS_VIA_P2P_READ : CS_VIA_P2P_WRITE;
    if (starts(buf, "SHM"))
        return CS_VIA_SHM;
    if (starts(buf, "COLLNET") || starts(buf, "CollNet") || starts(buf, "NVLS"))
        return CS_VIA_COLLNET;
    if (!starts(buf, "NET/"))
        return 0;
    for (char *s = strtok_r(buf + 4, "/", &save); s && n < 16; s = strtok_r(NULL, "/", &save))
        seg[n++] = s;
    for (int i = 0; i < n; i++) {
        const char *p = seg[i];

        if (di < 0 && i > 0 && take_int(&p, 0, 1 << 20, &d) == 0 && (*p == '\0' || *p == '('))
            di = i;
        else if (strcmp(seg[i], "GDRDMA") == 0)
            gdr = 1;
    }
    if (di < 0)
        return 0;
    if (net != NULL && net[0] == '\0') {
        size_t k = 0;

        for (int i = 0; i < di && k + 1 < netlen; i++)
            k += (size_t)snprintf(net + k, netlen - k, "%s%s", i ? "/" : "", seg[i]);
    }
    *dev = d;
    return gdr ? CS_VIA_NET_GDR : CS_VIA_NET_HOST;
}

/* A rank with its bus id or device in brackets ("2[201c0]", "0[0]", or "7" in older logs) at *s:
 * the rank into *rk, a bus id into busid (else ""). 0, or -1. */
static int take_peer(const char **s, int *rk, char busid[16])
{
    busid[0] = '\0';
    if (take_int(s, 0, 1 << 20, rk) != 0)
        return -1;
    if (**s == '[') {
        const char *close = strchr(*s, ']');

        if (close == NULL)
            return -1;
        busid_from_hex(*s + 1, (size_t)(close - *s - 1), busid);
        *s = close + 1;
    }
    return 0;
}

static void set_busid(struct cs_ncclinfo_rank *rk, const char *busid)
{
    if (rk != NULL && rk->busid[0] == '\0' && busid[0] != '\0')
        snprintf(rk->busid, sizeof(rk->busid), "%s", busid);
}

/* "Channel 01 : 2[201c0] -> 7[a01d0] via P2P/IPC/read", "... [send] via NET/IB/0/GDRDMA". */
static int read_conn(struct rd *r, int k, const char *s)
{
    struct cs_ncclinfo *log = r->log;
    struct cs_ncclinfo_conn c = {0};
    char ba[16], bb[16];
    const char *via;
    int local;

    s = skip_blank(s);
    if (take_peer(&s, &c.from, ba) != 0 || !starts(s = skip_blank(s), "->"))
        return 0;
    s = skip_blank(s + 2);
    if (take_peer(&s, &c.to, bb) != 0 || (via = strstr(s, "via ")) == NULL)
        return 0;
    c.send = strstr(s, "[send]") && strstr(s, "[send]") < via         ? 1
             : strstr(s, "[receive]") && strstr(s, "[receive]") < via ? 0
                                                                      : -1;
    if (log->nranks == 0 || c.from >= log->nranks || c.to >= log->nranks) {
        log->other_lines++;
        return 0;
    }
    if ((c.via = parse_via(via + 4, &c.net_dev, log->network, sizeof(log->network))) == 0)
        return 0;
    c.channel = k;
    c.line = r->line;
    local = c.send == 0 ? c.to : c.from;
    note_rank(r, c.from, local == c.from);
    note_rank(r, c.to, local == c.to);
    set_busid(rank_of(log, c.from), ba);
    set_busid(rank_of(log, c.to), bb);
    if (c.net_dev >= 0 && c.net_dev < 64) {
        struct cs_ncclinfo_rank *rk = rank_of(log, local);

        rk->nets |= 1ULL << c.net_dev;
        if (rk->net_line == 0)
            rk->net_line = r->line;
    }
    log->nvia[c.via]++;
    if (log->nconns < MAX_CONNS) {
        struct cs_ncclinfo_conn *grown = log->conns;

        if ((log->nconns & (log->nconns - 1)) == 0 &&
            (grown = realloc(log->conns, (size_t)(log->nconns ? 2 * log->nconns : 16) *
                                             sizeof(*grown))) == NULL)
            return cs_error_fail(r->err, CS_ERR_NOMEM, r->name, r->line, "out of memory");
        log->conns = grown;
        log->conns[log->nconns++] = c;
    }
    return 0;
}

/* "Channel NN/TT : ..." and "Ring NN : ...": a ring or a connection. */
static int read_channel(struct rd *r, const char *msg)
{
    const char *p = msg + (starts(msg, "Ring ") ? 5 : 8), *colon;
    int k, total = 0;

    if (take_int(&p, 0, 1 << 20, &k) != 0)
        return 0;
    if (*p == '/' && (p++, take_int(&p, 0, 1 << 20, &total)) != 0)
        return 0;
    if ((colon = strstr(p, " : ")) == NULL)
        return 0;
    if (k >= CS_NCCLINFO_MAX_CHANNELS || total > CS_NCCLINFO_MAX_CHANNELS)
        return fail(r, "channel %d of %d: NCCL has at most %d channels", k, total,
                    CS_NCCLINFO_MAX_CHANNELS);
    if (strstr(colon, "->") != NULL)
        return read_conn(r, k, colon + 3);
    if (total > 0 && r->log->nchannels == 0 && starts(msg, "Channel ")) {
        r->log->nchannels = total;
        r->log->channels_line = r->line;
    }
    return read_ring(r, k, colon + 3);
}

/* One tree entry: "d0/d1/d2->r->up" (NCCL 2.7 on) or "up->r->d0/d1/d2" (older), the first of a
 * double tree "a|b". */
static int parse_tree(const char *s, int *rank, int t[4])
{
    char buf[128], *a, *b, *c, *kids, *parent;
    int n = 0;

    snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(s, " |\t\r"), s);
    if ((a = strstr(buf, "->")) == NULL || (b = strstr(a + 2, "->")) == NULL)
        return -1;
    *a = *b = '\0';
    c = b + 2;
    kids = strchr(buf, '/') ? buf : c;
    parent = kids == buf ? c : buf;
    {
        const char *p = a + 2, *q = parent;

        if (take_int(&p, 0, 1 << 20, rank) != 0 || *p != '\0' ||
            take_int(&q, -1, 1 << 20, &t[0]) != 0 || *q != '\0')
            return -1;
    }
    for (char *save = NULL, *w = strtok_r(kids, "/", &save); w; w = strtok_r(NULL, "/", &save)) {
        const char *p = w;

        if (n == 3 || take_int(&p, -1, 1 << 20, &t[1 + n]) != 0 || *p != '\0')
            return -1;
        n++;
    }
    for (; n < 3; n++)
        t[1 + n] = -1;
    return 0;
}

/* "Trees [0] 2/-1/-1->1->0 [1] -1/-1/-1->1->0 ..." */
static int read_trees(struct rd *r, const char *msg)
{
    struct cs_ncclinfo *log = r->log;
    int got = 0;

    for (const char *p = strchr(msg, '['); p != NULL; p = strchr(p + 1, '[')) {
        const char *q = p + 1;
        int k, rank, t[4];

        if (take_int(&q, 0, 1 << 20, &k) != 0 || *q != ']')
            continue;
        if (k >= CS_NCCLINFO_MAX_CHANNELS)
            return fail(r, "tree of channel %d: NCCL has at most %d channels", k,
                        CS_NCCLINFO_MAX_CHANNELS);
        if (parse_tree(skip_blank(q + 1), &rank, t) != 0 || log->trees == NULL)
            continue;
        if (rank >= log->nranks || t[0] >= log->nranks || t[1] >= log->nranks ||
            t[2] >= log->nranks || t[3] >= log->nranks) {
            log->other_lines++;
            return 0;
        }
        {
            int *dst = log->trees + ((size_t)rank * CS_NCCLINFO_MAX_CHANNELS + (size_t)k) * 4;

            if (dst[0] != -2)
                continue; /* printed again (another communicator of this size) */
            memcpy(dst, t, sizeof(t));
            if (k + 1 > log->ntrees)
                log->ntrees = k + 1;
            if (!got++)
                log->tree_ranks++;
            note_rank(r, rank, 1);
        }
    }
    return 0;
}

/* "comm 0x... rank R nRanks N nNodes M localRanks L localRank l" (2.12 on) and "comm 0x... rank
 * R nranks N cudaDev D [nvmlDev X] busId B ... Init COMPLETE". */
static int read_comm(struct rd *r, const char *msg)
{
    struct cs_ncclinfo *log = r->log;
    int rank, n, v;
    struct cs_ncclinfo_rank *rk;
    const char *b;
    const char *nw = has_word(msg, "nRanks") ? "nRanks" : "nranks";

    if (!has_word(msg, "rank") || !has_word(msg, nw))
        return 0;
    if (word_int(msg, "rank", 0, CS_NCCLINFO_MAX_RANKS - 1, &rank) != 0 ||
        word_int(msg, nw, 1, CS_NCCLINFO_MAX_RANKS, &n) != 0)
        return fail(r, "a communicator's rank or %s is not a count (ranks 0 to %d)", nw,
                    CS_NCCLINFO_MAX_RANKS - 1);
    if (rank >= n)
        return fail(r, "rank %d in a communicator of %d ranks", rank, n);
    if (n != log->nranks || (rk = rank_of(log, rank)) == NULL) {
        log->other_lines++;
        return 0;
    }
    if (log->comm_line == 0)
        log->comm_line = r->line;
    note_rank(r, rank, 1);
    if (word_int(msg, "nNodes", 1, CS_NCCLINFO_MAX_RANKS, &v) == 0 && log->nnodes == 0)
        log->nnodes = v;
    if (word_int(msg, "localRanks", 1, CS_NCCLINFO_MAX_RANKS, &v) == 0 && log->local_ranks == 0)
        log->local_ranks = v;
    if (word_int(msg, "cudaDev", 0, 1 << 20, &v) == 0 && rk->cuda_dev < 0)
        rk->cuda_dev = v;
    if ((b = strstr(msg, " busId ")) != NULL) {
        char busid[16];

        b = skip_blank(b + 7);
        if (busid_from_hex(b, strcspn(b, " \t\r"), busid) == 0) {
            /* the rank's own line names its GPU: its channels must have said the same */
            if (rk->busid[0] != '\0' && strcmp(rk->busid, busid) != 0)
                return fail(r, "rank %d's busId %s, where its channels say %s", rank, busid,
                            rk->busid);
            set_busid(rk, busid);
        }
    }
    return 0;
}

/* "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ...", "NET/Socket : Using
 * [0]eth0:10.0.0.1<0>": the ports NCCL uses, read once. */
static void read_nets(struct rd *r, const char *msg)
{
    struct cs_ncclinfo *log = r->log;
    const char *using = strstr(msg, " : Using "), *end;

    if (using == NULL)
        return;
    if (log->network[0] == '\0')
        snprintf(log->network, sizeof(log->network), "%.*s", (int)(using - msg - 4), msg + 4);
    if (log->nnets > 0)
        return;
    end = strchr(using, ';');
    for (const char *p = strchr(using, '[');
         p != NULL && (end == NULL || p < end) && log->nnets < CS_NCCLINFO_MAX_NETS;
         p = strchr(p + 1, '[')) {
        struct cs_ncclinfo_net *net = &log->nets[log->nnets];
        const char *q = p + 1, *name;
        size_t len;

        if (take_int(&q, 0, 1 << 20, &net->dev) != 0 || *q != ']')
            continue;
        name = q + 1;
        len = strcspn(name, ":/ \t<");
        if (len == 0 || len >= sizeof(net->name))
            continue;
        memcpy(net->name, name, len);
        net->name[len] = '\0';
        net->port = 0;
        net->kind[0] = '\0';
        q = name + len;
        if (*q == ':' && isdigit((unsigned char)q[1]) &&
            strchr("/ \t\r", q[1 + strspn(q + 1, "0123456789")])) {
            q++;
            take_int(&q, 0, 1 << 20, &net->port);
        }
        if (*q == '/')
            snprintf(net->kind, sizeof(net->kind), "%.*s", (int)strcspn(q + 1, "/ \t;"), q + 1);
        net->line = r->line;
        log->nnets++;
    }
}

/* nccl-tests' banner: "#   Rank  0 Pid 25 on HOST device  0 [0x10] A100-SXM4-40GB" and
 * (2.13 on) "#  Rank  0 Group  0 Pid 3660022 on HOST device  0 [0000:18:00] NVIDIA H100 ...". */
static void read_banner(struct rd *r, const char *line)
{
    const char *p = strstr(line, " Rank "), *on, *dev, *br, *close;
    struct cs_ncclinfo_rank *rk;
    int rank, d;
    size_t hl;

    if (p == NULL || (on = strstr(p, " on ")) == NULL || (dev = strstr(on, " device ")) == NULL)
        return;
    p = skip_blank(p + 6);
    if (take_int(&p, 0, CS_NCCLINFO_MAX_RANKS - 1, &rank) != 0 ||
        (rk = rank_of(r->log, rank)) == NULL)
        return;
    on = skip_blank(on + 4);
    hl = strcspn(on, " \t");
    if (rk->host < 0)
        rk->host = host_index(r->log, on, hl);
    p = skip_blank(dev + 8);
    if (take_int(&p, 0, 1 << 20, &d) == 0 && rk->cuda_dev < 0)
        rk->cuda_dev = d;
    if ((br = strchr(p, '[')) == NULL || (close = strchr(br, ']')) == NULL)
        return;
    if (close - br == 11 && br[5] == ':' && br[8] == ':' && rk->busid[0] == '\0')
        snprintf(rk->busid, sizeof(rk->busid), "%.10s.0", br + 1);
    for (size_t i = 0; rk->busid[i]; i++)
        rk->busid[i] = (char)tolower((unsigned char)rk->busid[i]);
    p = skip_blank(close + 1);
    if (*p != '\0' && rk->gpu[0] == '\0') {
        size_t n = strcspn(p, "\r");

        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        snprintf(rk->gpu, sizeof(rk->gpu), "%.*s", (int)(n < 63 ? n : 63), p);
        rk->gpu_line = r->line;
    }
    if (rk->line == 0)
        rk->line = r->line;
}

static int add_affinity(struct rd *r, const char *msg)
{
    const char *p = msg + strlen("Setting affinity for GPU ");
    struct affinity *a;
    int dev;

    if (take_int(&p, 0, 1 << 20, &dev) != 0 || !starts(p, " to ") || r->naff == MAX_AFFINITIES)
        return 0;
    if ((r->naff & (r->naff - 1)) == 0) {
        struct affinity *grown =
            realloc(r->aff, (size_t)(r->naff ? 2 * r->naff : 8) * sizeof(*grown));

        if (grown == NULL)
            return cs_error_fail(r->err, CS_ERR_NOMEM, r->name, r->line, "out of memory");
        r->aff = grown;
    }
    a = &r->aff[r->naff++];
    a->host = r->host;
    a->dev = dev;
    a->line = r->line;
    snprintf(a->mask, sizeof(a->mask), "%.*s", (int)strcspn(p + 4, " \t\r"), p + 4);
    return 0;
}

/* One NCCL message (what follows "NCCL INFO "). */
static int read_message(struct rd *r, const char *msg)
{
    struct cs_ncclinfo *log = r->log;
    int n;

    log->info_lines++;
    if (starts(msg, "NCCL version "))
        return read_version(r, msg + 13);
    else if (starts(msg, "comm 0x"))
        return read_comm(r, msg);
    else if (starts(msg, "Channel ") || starts(msg, "Ring "))
        return read_channel(r, msg);
    else if (starts(msg, "Trees "))
        return read_trees(r, msg);
    else if (starts(msg, "NET/"))
        read_nets(r, msg);
    else if (starts(msg, "Using network ")) {
        char net[64];

        snprintf(net, sizeof(net), "%.*s", (int)strcspn(msg + 14, "\r"), msg + 14);
        if (r->using_net[0] == '\0') {
            snprintf(r->using_net, sizeof(r->using_net), "%s", net);
            r->using_line = r->line;
        } else if (strcmp(r->using_net, net) != 0) { /* every rank says it: one network */
            return fail(r,
                        "network %s, after %s on line %d: the logs of two runs; give one "
                        "run's",
                        net, r->using_net, r->using_line);
        }
        if (log->network[0] == '\0')
            snprintf(log->network, sizeof(log->network), "%.*s", (int)strcspn(msg + 14, "\r"),
                     msg + 14);
    } else if (starts(msg, "Setting affinity for GPU "))
        return add_affinity(r, msg);
    else if (strstr(msg, "NVLS multicast support is available"))
        log->nvls = 1;
    else if (isdigit((unsigned char)msg[0]) && strstr(msg, " coll channels")) {
        const char *p = msg;

        if (take_int(&p, 0, 1 << 20, &n) == 0 && starts(p, " coll channels")) {
            if (n < 1 || n > CS_NCCLINFO_MAX_CHANNELS)
                return fail(r, "%d coll channels: NCCL has 1 to %d", n, CS_NCCLINFO_MAX_CHANNELS);
            if (log->channels_line == 0 || log->nchannels != n) {
                log->nchannels = n;
                log->channels_line = r->line;
            }
        }
    }
    return 0;
}

/* One line of the log (a NUL-terminated copy, without the newline). */
static int read_line(struct rd *r, char *line, size_t len)
{
    const char *body = line + cs_meas_line_body(line, len), *msg;

    if ((msg = info_message(r, body)) != NULL)
        return read_message(r, msg);
    body = skip_blank(body);
    if (starts(body, "NCCL version ")) {
        r->log->info_lines++;
        return read_version(r, body + 13);
    } else if (body[0] == '#') {
        read_banner(r, body);
    }
    return 0;
}

/* The hosts the ranks ran on, their counts, and affinities by host and device. */
static void finish(struct rd *r)
{
    struct cs_ncclinfo *log = r->log;
    int *per = calloc((size_t)log->nhosts + 1, sizeof(int)), nodes = 0, most = 0;

    for (int k = 0; k < log->nranks; k++) {
        struct cs_ncclinfo_rank *rk = &log->ranks[k];

        for (int a = 0; a < r->naff && rk->affinity[0] == '\0'; a++)
            if (r->aff[a].host == rk->host && r->aff[a].host >= 0 && r->aff[a].dev == rk->cuda_dev)
                snprintf(rk->affinity, sizeof(rk->affinity), "%s", r->aff[a].mask);
        if (per != NULL && rk->host >= 0) {
            nodes += per[rk->host]++ == 0;
            if (per[rk->host] > most)
                most = per[rk->host];
        }
    }
    free(per);
    if (log->nnodes == 0)
        log->nnodes = nodes;
    if (log->local_ranks == 0 && nodes > 0 && most * nodes == log->nranks)
        log->local_ranks = most;
}

int cs_ncclinfo_detect(const char *text, size_t len)
{
    static const char *const marks[] = {"NCCL INFO ", "NCCL version ", "# Using devices"};

    for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++) {
        size_t n = strlen(marks[k]);

        for (size_t i = 0; i + n <= len; i++) {
            const char *hit = memchr(text + i, marks[k][0], len - i);

            if (hit == NULL || (size_t)(hit - text) + n > len)
                break;
            if (memcmp(hit, marks[k], n) == 0)
                return 1;
            i = (size_t)(hit - text);
        }
    }
    return 0;
}

static int alloc_ranks(struct cs_ncclinfo *log)
{
    size_t n = (size_t)log->nranks;

    log->ranks = calloc(n, sizeof(*log->ranks));
    log->rings = calloc(CS_NCCLINFO_MAX_CHANNELS * n, sizeof(int));
    log->trees = malloc(CS_NCCLINFO_MAX_CHANNELS * 4 * n * sizeof(int));
    if (log->ranks == NULL || log->rings == NULL || log->trees == NULL)
        return CS_ERR_NOMEM;
    for (size_t i = 0; i < CS_NCCLINFO_MAX_CHANNELS * 4 * n; i++)
        log->trees[i] = -2;
    for (size_t k = 0; k < n; k++)
        log->ranks[k].host = log->ranks[k].cuda_dev = -1;
    return 0;
}

int cs_ncclinfo_read_mem(const char *text, size_t len, const char *name, struct cs_ncclinfo **out,
                         struct cs_error *err)
{
    struct cs_ncclinfo *log = calloc(1, sizeof(*log));
    struct rd r = {log, name ? name : "<memory>", err, 0, -1, -1, 0, NULL, "", 0};
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;

    if (log == NULL || (log->path = strdup(r.name)) == NULL) {
        cs_ncclinfo_free(log);
        return cs_error_fail(err, CS_ERR_NOMEM, r.name, 0, "out of memory");
    }
    log->nranks = find_nranks(text, len);
    if (log->nranks > 0 && alloc_ranks(log) != 0)
        rc = cs_error_fail(err, CS_ERR_NOMEM, r.name, 0, "out of memory");
    for (size_t i = 0; i < len && rc == 0;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t l = nl ? (size_t)(nl - (text + i)) : len - i;

        r.line++;
        if (l > MAX_LINE)
            l = MAX_LINE;
        if (l + 1 > cap) {
            char *grown = realloc(line, l + 1);

            if (grown == NULL) {
                rc = cs_error_fail(err, CS_ERR_NOMEM, r.name, r.line, "out of memory");
                break;
            }
            line = grown;
            cap = l + 1;
        }
        memcpy(line, text + i, l);
        line[l] = '\0';
        /* a NUL inside a line ends what is looked at of it */
        rc = read_line(&r, line, strlen(line));
        i = nl ? (size_t)(nl - text) + 1 : len;
    }
    free(line);
    if (rc == 0 && log->info_lines == 0 && log->nranks == 0)
        rc = cs_error_fail(err, CS_ERR_INVALID, r.name, 0,
                           "no line of an NCCL log (NCCL INFO ..., NCCL version ...) or of "
                           "nccl-tests' banner");
    if (rc == 0) {
        finish(&r);
        rc = cs_meas_read_raw(text, len, r.name, &log->table, err);
        rc = rc == 1 ? 0 : rc;
    }
    free(r.aff);
    if (rc != 0) {
        cs_ncclinfo_free(log);
        return rc;
    }
    *out = log;
    return 0;
}

int cs_ncclinfo_read(const char *path, struct cs_ncclinfo **out, struct cs_error *err)
{
    char *text;
    size_t len;
    int rc = cs_file_read(path, CS_NCCLINFO_MAX_BYTES, &text, &len, err);

    if (rc != 0)
        return rc;
    rc = cs_ncclinfo_read_mem(text, len, strcmp(path, "-") == 0 ? "<stdin>" : path, out, err);
    free(text);
    return rc;
}

void cs_ncclinfo_free(struct cs_ncclinfo *log)
{
    if (log == NULL)
        return;
    cs_csv_free(log->table);
    free(log->path);
    free(log->rings);
    free(log->trees);
    free(log->ranks);
    free(log->hosts);
    free(log->conns);
    free(log);
}

const int *cs_ncclinfo_ring(const struct cs_ncclinfo *log, int k)
{
    if (k < 0 || k >= CS_NCCLINFO_MAX_CHANNELS || log->ring_line[k] == 0)
        return NULL;
    return log->rings + (size_t)k * (size_t)log->nranks;
}

int cs_ncclinfo_tree(const struct cs_ncclinfo *log, int r, int k, int *up, int down[3])
{
    const int *t;

    if (log->trees == NULL || r < 0 || r >= log->nranks || k < 0 || k >= CS_NCCLINFO_MAX_CHANNELS)
        return -1;
    t = log->trees + ((size_t)r * CS_NCCLINFO_MAX_CHANNELS + (size_t)k) * 4;
    if (t[0] == -2)
        return -1;
    *up = t[0];
    memcpy(down, t + 1, 3 * sizeof(int));
    return 0;
}

const char *cs_ncclinfo_via_name(enum cs_ncclinfo_via via)
{
    static const char *const names[CS_NCCLINFO_NVIA] = {NULL,      "P2P write", "P2P read", "SHM",
                                                        "NET GDR", "NET host",  "CollNet"};

    return (int)via > 0 && (int)via < CS_NCCLINFO_NVIA ? names[via] : NULL;
}

/* One field row: name, value, line ("-" when none). */
static void field(FILE *fp, const char *name, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void field(FILE *fp, const char *name, int line, const char *fmt, ...)
{
    va_list ap;
    char value[1024];

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    if (line > 0)
        fprintf(fp, "%-18s %-60s %d\n", name, value, line);
    else
        fprintf(fp, "%-18s %-60s -\n", name, value);
}

/* The NET devices of mask as "0,1,3", into buf. */
static const char *dev_list(unsigned long long mask, char *buf, size_t len)
{
    size_t k = 0;

    buf[0] = '\0';
    for (int d = 0; d < 64 && k + 4 < len; d++)
        if (mask >> d & 1)
            k += (size_t)snprintf(buf + k, len - k, "%s%d", k ? "," : "", d);
    if (k == 0)
        snprintf(buf, len, "-");
    return buf;
}

static void write_fields(const struct cs_ncclinfo *log, FILE *fp)
{
    char buf[1024], list[256];
    unsigned long long nets = 0;
    int gpu_line = 0, ngpu = 0, k = 0;
    const char *gpu = NULL;

    fprintf(fp, "%-18s %-60s %s\n", "field", "value", "line");
    if (log->version)
        field(fp, "version", log->version_line, "%d.%d.%d (%s)", log->version / 10000,
              log->version / 100 % 100, log->version % 100, log->version_text);
    else
        field(fp, "version", 0, "not printed");
    field(fp, "ranks", log->comm_line, "%d", log->nranks);
    field(fp, "nodes", 0, "%d", log->nnodes);
    field(fp, "local ranks", 0, "%d", log->local_ranks);
    for (int r = 0; r < log->nranks; r++) {
        nets |= log->ranks[r].nets;
        if (log->ranks[r].gpu[0] != '\0') {
            ngpu++;
            if (gpu == NULL) {
                gpu = log->ranks[r].gpu;
                gpu_line = log->ranks[r].gpu_line;
            }
        }
    }
    field(fp, "GPU", gpu_line, "%s (named for %d ranks)", gpu ? gpu : "not printed", ngpu);
    field(fp, "channels", log->channels_line, "%d", log->nchannels);
    for (int i = 0; i < log->nrings; i++)
        k += log->ring_line[i] > 0;
    field(fp, "rings", 0, "%d printed", k);
    field(fp, "trees", 0, "%d channels, %d ranks printed", log->ntrees, log->tree_ranks);
    field(fp, "network", 0, "%s", log->network[0] ? log->network : "none named");
    k = 0;
    buf[0] = '\0';
    for (int i = 0; i < log->nnets && k < (int)sizeof(buf) - 80; i++) {
        const struct cs_ncclinfo_net *net = &log->nets[i];

        k += snprintf(buf + k, sizeof(buf) - (size_t)k, "%s[%d]%s", i ? " " : "", net->dev,
                      net->name);
        if (net->port)
            k += snprintf(buf + k, sizeof(buf) - (size_t)k, ":%d", net->port);
        if (net->kind[0])
            k += snprintf(buf + k, sizeof(buf) - (size_t)k, "/%s", net->kind);
    }
    field(fp, "NICs", log->nnets ? log->nets[0].line : 0, "%s", log->nnets ? buf : "not listed");
    field(fp, "NET devices used", 0, "%s", dev_list(nets, list, sizeof(list)));
    k = 0;
    buf[0] = '\0';
    for (int v = 1; v < CS_NCCLINFO_NVIA; v++)
        if (log->nvia[v])
            k += snprintf(buf + k, sizeof(buf) - (size_t)k, "%s%s %d", k ? ", " : "",
                          cs_ncclinfo_via_name((enum cs_ncclinfo_via)v), log->nvia[v]);
    field(fp, "connections", 0, "%s", k ? buf : "none printed");
    field(fp, "NVLS", 0, "%s", log->nvls ? "available" : "not printed");
    if (log->table != NULL && log->table->nrows > 0)
        field(fp, "nccl-tests table", log->table->lines[0], "%d rows", log->table->nrows);
    else
        field(fp, "nccl-tests table", 0, "none");
    field(fp, "other lines", 0, "%d (another communicator's)", log->other_lines);
}

int cs_ncclinfo_write_table(const struct cs_ncclinfo *log, FILE *fp)
{
    char list[256];

    fprintf(fp, "# NCCL INFO log %s\n", log->path);
    write_fields(log, fp);
    fprintf(fp, "\n# rings: channel, line, ranks in order\n");
    for (int k = 0; k < log->nrings; k++) {
        const int *ring = cs_ncclinfo_ring(log, k);

        if (ring == NULL)
            continue;
        fprintf(fp, "%-4d %-6d", k, log->ring_line[k]);
        for (int i = 0; i < log->nranks; i++)
            fprintf(fp, " %d", ring[i]);
        fputc('\n', fp);
    }
    fprintf(fp, "\n# ranks: rank, host, CUDA device, bus id, GPU, NET devices, affinity\n");
    for (int r = 0; r < log->nranks; r++) {
        const struct cs_ncclinfo_rank *rk = &log->ranks[r];

        fprintf(fp, "%-4d %-28s %-3d %-13s %-24s %-8s %s\n", r,
                rk->host >= 0 ? log->hosts[rk->host] : "-", rk->cuda_dev,
                rk->busid[0] ? rk->busid : "-", rk->gpu[0] ? rk->gpu : "-",
                dev_list(rk->nets, list, sizeof(list)), rk->affinity[0] ? rk->affinity : "-");
    }
    fprintf(fp, "\n# trees: channel, rank, parent, children (-1 none)\n");
    for (int k = 0; k < log->ntrees; k++)
        for (int r = 0; r < log->nranks; r++) {
            int up, down[3];

            if (cs_ncclinfo_tree(log, r, k, &up, down) == 0)
                fprintf(fp, "%-4d %-4d %-4d %d %d %d\n", k, r, up, down[0], down[1], down[2]);
        }
    return ferror(fp) ? CS_ERR_IO : 0;
}
