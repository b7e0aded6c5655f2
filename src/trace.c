/* trace.c: Chrome / Perfetto trace of a replay timeline (Trace Event Format, JSON object form). */
#include "trace.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "stats.h"

void cs_trace_json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(fp, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(fp, "\\u%04x", c);
        else
            fputc(c, fp);
    }
    fputc('"', fp);
}

/* A time on the replay's clock in whole picoseconds from the launch. Slices are printed from
 * these integers, so equal times print equal and ts + dur is exact: nested slices stay nested. */
static long long ps(const struct cs_timeline *tl, double t_s)
{
    return llround((tl->offset_s + t_s) * 1e12);
}

/* Picoseconds as microseconds with 6 decimals, in buf (at least 32 bytes). */
static const char *us(char *buf, long long p)
{
    snprintf(buf, 32, "%s%lld.%06lld", p < 0 ? "-" : "", llabs(p) / 1000000, llabs(p) % 1000000);
    return buf;
}

struct delta {
    double t_s, rate;
};

static int delta_cmp(const void *a, const void *b)
{
    const struct delta *x = a, *y = b;

    return x->t_s < y->t_s ? -1 : x->t_s > y->t_s;
}

static void counter(FILE *fp, const struct cs_timeline *tl, int l, int pid, double t_s, double u)
{
    char name[80], b[32];

    snprintf(name, sizeof(name), "link %s", tl->links[l].name);
    fprintf(fp, ",\n{\"name\":");
    cs_trace_json_str(fp, name);
    fprintf(fp, ",\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"ts\":%s,\"args\":{\"utilisation\":%.6g}}",
            pid, us(b, ps(tl, t_s)), u);
}

/* The counter track of link l from its n rate changes d (sorted here). */
static void link_counter(FILE *fp, const struct cs_timeline *tl, int l, int pid, struct delta *d,
                         long long n)
{
    double level = 0, bw = tl->links[l].bw_Bps;

    qsort(d, (size_t)n, sizeof(*d), delta_cmp);
    counter(fp, tl, l, pid, 0, 0);
    for (long long i = 0; i < n;) {
        double t = d[i].t_s;

        while (i < n && d[i].t_s == t)
            level += d[i++].rate;
        if (level < 1e-9 * bw)
            level = 0; /* rounding left over when every transfer has ended */
        counter(fp, tl, l, pid, t, bw > 0 ? level / bw : 0);
    }
}

/* One counter track per link that carried bytes: the sum of the average rates of the transfers
 * on it, as a share of its bandwidth. */
static int write_counters(FILE *fp, const struct cs_timeline *tl, int pid)
{
    struct cs_link_units lu;
    struct delta *d;
    int rc = cs_stats_link_units(tl, &lu);

    if (rc != 0)
        return rc;
    if ((d = malloc((size_t)(2 * lu.max + 1) * sizeof(*d))) == NULL) {
        cs_link_units_cleanup(&lu);
        return CS_ERR_NOMEM;
    }
    for (int l = 0; l < tl->nlinks; l++) {
        long long n = 0;

        for (long long k = lu.first[l]; k < lu.first[l + 1]; k++) {
            const struct cs_tl_event *e = &tl->events[lu.ev[k]];

            if (e->wire_s <= 0)
                continue;
            d[n++] = (struct delta){e->start_s, e->wire_bytes / e->wire_s};
            d[n++] = (struct delta){e->start_s + e->wire_s, -e->wire_bytes / e->wire_s};
        }
        if (n > 0)
            link_counter(fp, tl, l, pid, d, n);
    }
    free(d);
    cs_link_units_cleanup(&lu);
    return 0;
}

/* A metadata event with args {ARGS...} (printf format); `sep` goes before it (",\n" but for the
 * first event). */
static void __attribute__((format(printf, 6, 7)))
meta(FILE *fp, const char *sep, const char *name, int pid, int tid, const char *args, ...)
{
    va_list ap;

    fprintf(fp, "%s{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{", sep, name, pid,
            tid);
    va_start(ap, args);
    vfprintf(fp, args, ap);
    va_end(ap);
    fputs("}}", fp);
}

/* The trace's header (what was replayed) and its process and thread names and orders. */
static void write_meta(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl,
                       int pid_coll)
{
    char b0[32];

    fprintf(fp,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"collective\":\"%s\",\"protocol\":\"%s\","
            "\"gpus\":%d,\"size_bytes\":%lld,\"iterations\":%d,\"status\":\"%s\","
            "\"predicted_us\":%s},\"traceEvents\":[\n",
            cs_coll_name(plan->coll) ? cs_coll_name(plan->coll) : "unknown",
            cs_proto_name(plan->proto) ? cs_proto_name(plan->proto) : "unknown", plan->ngpus,
            plan->sz.size_bytes, plan->sz.niter, tl->complete ? "ok" : "deadlock",
            tl->complete ? us(b0, ps(tl, tl->makespan_s)) : "null");
    meta(fp, "", "process_name", pid_coll, 0, "\"name\":\"collective\"");
    meta(fp, ",\n", "process_sort_index", pid_coll, 0, "\"sort_index\":-1");
    meta(fp, ",\n", "thread_name", pid_coll, 0, "\"name\":\"launch\"");
    for (int g = 0; g < plan->ngpus; g++) {
        meta(fp, ",\n", "process_name", g, 0, "\"name\":\"gpu %d\"", g);
        meta(fp, ",\n", "process_sort_index", g, 0, "\"sort_index\":%d", g);
    }
    for (int t = 0; t < plan->ntbs; t++) {
        const struct cs_plan_tb *tb = &plan->tbs[t];

        meta(fp, ",\n", "thread_name", tb->gpu, tb->id,
             "\"name\":\"tb %d (send %d, recv %d, chan %d)\"", tb->id, tb->send, tb->recv,
             tb->chan);
        meta(fp, ",\n", "thread_sort_index", tb->gpu, tb->id, "\"sort_index\":%d", tb->id);
    }
    if (tl->offset_s > 0)
        fprintf(fp,
                ",\n{\"name\":\"launch + deploy\",\"cat\":\"launch\",\"ph\":\"X\",\"pid\":%d,"
                "\"tid\":0,\"ts\":0,\"dur\":%s}",
                pid_coll, us(b0, ps(tl, 0)));
}

/* The start of a complete ("X") slice on tb, up to its duration; the caller closes it. */
static void slice(FILE *fp, const char *name, const char *cat, const struct cs_plan_tb *tb,
                  const char *ts, const char *dur)
{
    fprintf(fp,
            ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%s,"
            "\"dur\":%s",
            name, cat, tb->gpu, tb->id, ts, dur);
}

/* One end of a unit's flow arrow: ph is the phase with its binding point, the id pairs the seq-th
 * unit sent on connection conn with the seq-th received on it. */
static void flow(FILE *fp, const char *ph, int conn, int seq, const struct cs_plan_tb *tb,
                 const char *ts)
{
    fprintf(fp,
            ",\n{\"name\":\"unit\",\"cat\":\"flow\",\"ph\":%s,\"id\":%lld,\"pid\":%d,\"tid\":%d,"
            "\"ts\":%s}",
            ph, ((long long)conn << 32) | (unsigned)seq, tb->gpu, tb->id, ts);
}

/* The unit as a slice inside its call, and a flow per unit from the middle of the sender's slice
 * to the middle of the receiver's (inside both, so each end binds to its unit); the id pairs the
 * n-th unit sent on a connection with the n-th received on it. */
static void write_unit(FILE *fp, const struct cs_tl_event *e, const struct cs_plan_tb *tb,
                       long long p0, long long p1)
{
    char b0[32], b1[32], mid[32];

    us(mid, p0 + (p1 - p0) / 2);
    slice(fp,
          e->out_conn >= 0 && e->in_conn >= 0 ? "recv+send unit"
          : e->out_conn >= 0                  ? "send unit"
                                              : "recv unit",
          "unit", tb, us(b0, p0), us(b1, p1 - p0));
    fprintf(fp, ",\"args\":{\"bytes\":%lld", e->bytes);
    if (e->out_conn >= 0)
        fprintf(fp, ",\"wire_bytes\":%.0f,\"network_us\":%.6f", e->wire_bytes, e->wire_s * 1e6);
    fprintf(fp, "}}");
    if (e->in_conn >= 0)
        flow(fp, "\"f\",\"bp\":\"e\"", e->in_conn, e->in_seq, tb, mid);
    if (e->out_conn >= 0)
        flow(fp, "\"s\"", e->out_conn, e->out_seq, tb, mid);
}

/* The slice (and flows) of one timeline event. */
static void write_event(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl,
                        const struct cs_tl_event *e)
{
    static const char *const wait_names[] = {"wait data", "wait credit", "wait flag"};
    const struct cs_plan_tb *tb = &plan->tbs[e->tb];
    const struct cs_plan_op *op = e->op >= 0 && e->op < tb->nops ? &tb->ops[e->op] : NULL;
    const struct cs_plan_tb *other =
        e->other >= 0 && e->other < plan->ntbs ? &plan->tbs[e->other] : NULL;
    long long p0 = ps(tl, e->start_s), p1 = ps(tl, e->end_s);
    char b0[32], b1[32];

    us(b0, p0);
    us(b1, p1 - p0);
    switch (e->kind) {
    case CS_TL_CALL:
        if (op == NULL)
            break;
        slice(fp, cs_step_type_name(op->type), "step", tb, b0, b1);
        fprintf(fp, ",\"args\":{");
        if (cs_step_sends(op->type))
            fprintf(fp, "\"send_peer\":%d,", tb->send);
        if (cs_step_recvs(op->type))
            fprintf(fp, "\"recv_peer\":%d,", tb->recv);
        fprintf(fp, "\"bytes\":%lld,\"iteration\":%d,\"step\":%d,\"call\":%d,\"chunks\":%d}}",
                e->bytes, e->iter, op->step, e->call, op->cnt);
        break;
    case CS_TL_WAIT_DATA:
    case CS_TL_WAIT_CREDIT:
    case CS_TL_WAIT_FLAG:
        slice(fp, wait_names[e->kind - CS_TL_WAIT_DATA], "wait", tb, b0, b1);
        fprintf(fp, ",\"args\":{\"iteration\":%d,\"step\":%d", e->iter, op ? op->step : -1);
        if (other != NULL)
            fprintf(fp, ",\"ended_by\":\"gpu %d tb %d\"", other->gpu, other->id);
        fprintf(fp, "}}");
        break;
    case CS_TL_LATENCY:
    case CS_TL_OVERHEAD:
    case CS_TL_LAUNCH: {
        const char *name = e->kind == CS_TL_LATENCY    ? "hop latency"
                           : e->kind == CS_TL_OVERHEAD ? "call overhead"
                                                       : "tb start";

        slice(fp, name, strchr(name, ' ') + 1, tb, b0, b1); /* the category: the name's last word */
        if (e->kind == CS_TL_LATENCY && other != NULL)
            fprintf(fp, ",\"args\":{\"from\":\"gpu %d tb %d\"}", other->gpu, other->id);
        fprintf(fp, "}");
        break;
    }
    case CS_TL_UNIT:
        write_unit(fp, e, tb, p0, p1);
        break;
    default:
        break;
    }
}

int cs_trace_write(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl)
{
    int pid_coll = plan->ngpus, rc;

    if (tl->truncated)
        return CS_ERR_USAGE;
    write_meta(fp, plan, tl, pid_coll);
    for (long long i = 0; i < tl->nevents; i++)
        if (tl->events[i].tb >= 0 && tl->events[i].tb < plan->ntbs)
            write_event(fp, plan, tl, &tl->events[i]);
    rc = write_counters(fp, tl, pid_coll);
    fprintf(fp, "\n]}\n");
    if (rc != 0)
        return rc;
    return ferror(fp) ? CS_ERR_IO : 0;
}
