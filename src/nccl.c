/* nccl.c: NCCL's channels and threads per size and protocol, and the windows they hold over. */
#include "nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MAJOR.MINOR[.PATCH], one or two digits each, into part[]: 0, or -1 when it is not that. */
static int version_parts(const char *s, int part[3])
{
    for (int n = 0; n < 3;) {
        size_t len = strspn(s, "0123456789");

        if (len == 0 || len > 2)
            return -1;
        part[n++] = atoi(s);
        s += len;
        if (*s == '\0')
            return n >= 2 ? 0 : -1;
        if (*s++ != '.')
            return -1;
    }
    return -1;
}

int cs_nccl_version_parse(const char *s, int *code, struct cs_error *err)
{
    int part[3] = {0, 0, 0}, v;

    if (s == NULL || version_parts(s, part) != 0)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL version '%s': MAJOR.MINOR or MAJOR.MINOR.PATCH", s ? s : "");
    v = part[0] * 10000 + part[1] * 100 + part[2];
    if (v < CS_NCCL_RULE_MIN || v >= CS_NCCL_RULE_END)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL %s: the channel and thread rule is sourced for NCCL 2.8 to "
                             "2.18 only (enqueue.cc; nccl-a100.md 1.6b)",
                             s);
    *code = v;
    return 0;
}

void cs_nccl_version_name(int code, char *buf, unsigned len)
{
    snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
}

int cs_nccl_width(int version, enum cs_proto proto, long long nbytes, int nranks, int comm_channels,
                  struct cs_nccl_width *out, struct cs_error *err)
{
    /* NCCL_{LL,LL128,SIMPLE}_MAX_NTHREADS and NCCL_*_THREAD_THRESHOLD (device.h, comm.h;
     * nccl-a100.md 1.5); the LL threshold is multiplied by nRanks for Ring (tuning.cc). */
    static const int max_threads[] = {
        [CS_PROTO_LL] = 512, [CS_PROTO_LL128] = 640, [CS_PROTO_SIMPLE] = 512};
    static const long long threshold[] = {
        [CS_PROTO_LL] = 8, [CS_PROTO_LL128] = 8, [CS_PROTO_SIMPLE] = 64};
    long long per_thread;
    int nc = comm_channels, nt;

    if (version < CS_NCCL_RULE_MIN || version >= CS_NCCL_RULE_END)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL version code %d: the channel and thread rule is sourced for "
                             "NCCL 2.8 to 2.18 only (nccl-a100.md 1.6b)",
                             version);
    if (proto < CS_PROTO_LL || proto > CS_PROTO_SIMPLE || nbytes < 0 || nranks < 1 ||
        comm_channels < 1)
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0,
                             "NCCL width: bad protocol, size, rank or channel count");
    nt = max_threads[proto];
    per_thread = threshold[proto] * (proto == CS_PROTO_LL ? nranks : 1);
    while (nbytes < (long long)nc * nt * per_thread) {
        if (nc >= 2)
            nc--;
        else if (nt % 128 == 0)
            nt /= 2;
        else
            break;
    }
    *out = (struct cs_nccl_width){nc, nt, max_threads[proto]};
    return 0;
}

/* -1, 0 or 1 as a is narrower than, as wide as or wider than b: the rule lowers channels first,
 * then threads, so a larger size never gets a narrower width. */
static int width_cmp(const struct cs_nccl_width *a, const struct cs_nccl_width *b)
{
    if (a->channels != b->channels)
        return a->channels < b->channels ? -1 : 1;
    return a->threads < b->threads ? -1 : a->threads > b->threads;
}

int cs_nccl_window(int version, enum cs_proto proto, long long nbytes, int nranks,
                   int comm_channels, long long *lo, long long *hi, struct cs_error *err)
{
    struct cs_nccl_width w, m;
    long long a = 0, b = nbytes, top;
    int rc = cs_nccl_width(version, proto, nbytes, nranks, comm_channels, &w, err);

    if (rc != 0)
        return rc;
    /* the least size as wide as nbytes: in (a, b] once a is narrower */
    cs_nccl_width(version, proto, 0, nranks, comm_channels, &m, NULL);
    if (width_cmp(&m, &w) == 0)
        b = 0;
    while (b - a > 1) {
        long long mid = a + (b - a) / 2;

        cs_nccl_width(version, proto, mid, nranks, comm_channels, &m, NULL);
        if (width_cmp(&m, &w) < 0)
            a = mid;
        else
            b = mid;
    }
    *lo = b;
    /* the full width holds for every larger size; else the largest size still as narrow */
    if (w.channels == comm_channels && w.threads == w.max_threads) {
        *hi = 0;
        return 0;
    }
    a = nbytes;
    top = (long long)comm_channels * w.max_threads * (64 + 8LL * nranks); /* full width */
    while (top - a > 1) {
        long long mid = a + (top - a) / 2;

        cs_nccl_width(version, proto, mid, nranks, comm_channels, &m, NULL);
        if (width_cmp(&m, &w) > 0)
            top = mid;
        else
            a = mid;
    }
    *hi = a;
    return 0;
}
