/* trace.c: Chrome / Perfetto trace of a replay timeline (Trace Event Format, JSON object form). */
#include "trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

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

static const char *wait_name(int kind)
{
    switch (kind) {
    case CS_TL_WAIT_DATA:
        return "wait data";
    case CS_TL_WAIT_CREDIT:
        return "wait credit";
    default:
        return "wait flag";
    }
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

/* One counter track per link that carried bytes: the sum of the average rates of the transfers
 * on it, as a share of its bandwidth. */
static int write_counters(FILE *fp, const struct cs_timeline *tl, int pid)
{
    long long *n0 = calloc((size_t)tl->nlinks + 1, sizeof(*n0)), *fill, total = 0;
    struct delta *d = NULL;

    fill = calloc((size_t)tl->nlinks + 1, sizeof(*fill));
    if (n0 == NULL || fill == NULL)
        goto nomem;
    /* Count, then place, each transfer's start and end on every link of its route. */
    for (long long i = 0; i < tl->nevents; i++) {
        const struct cs_tl_event *e = &tl->events[i];

        if (e->kind == CS_TL_UNIT && e->out_conn >= 0 && e->wire_s > 0)
            for (int k = 0; k < tl->conns[e->out_conn].nroute; k++)
                n0[tl->route[tl->conns[e->out_conn].route0 + k]] += 2;
    }
    for (int l = 0; l < tl->nlinks; l++) {
        long long c = n0[l];

        n0[l] = total;
        fill[l] = total;
        total += c;
    }
    n0[tl->nlinks] = total;
    d = malloc((size_t)(total + 1) * sizeof(*d));
    if (d == NULL)
        goto nomem;
    for (long long i = 0; i < tl->nevents; i++) {
        const struct cs_tl_event *e = &tl->events[i];

        if (e->kind != CS_TL_UNIT || e->out_conn < 0 || e->wire_s <= 0)
            continue;
        for (int k = 0; k < tl->conns[e->out_conn].nroute; k++) {
            int l = tl->route[tl->conns[e->out_conn].route0 + k];

            d[fill[l]++] = (struct delta){e->start_s, e->wire_bytes / e->wire_s};
            d[fill[l]++] = (struct delta){e->start_s + e->wire_s, -e->wire_bytes / e->wire_s};
        }
    }
    for (int l = 0; l < tl->nlinks; l++) {
        struct delta *dl = d + n0[l];
        long long n = n0[l + 1] - n0[l];
        double level = 0;

        if (n == 0)
            continue;
        qsort(dl, (size_t)n, sizeof(*dl), delta_cmp);
        counter(fp, tl, l, pid, 0, 0);
        for (long long i = 0; i < n;) {
            double t = dl[i].t_s;

            while (i < n && dl[i].t_s == t)
                level += dl[i++].rate;
            if (level < 1e-9 * tl->links[l].bw_Bps)
                level = 0; /* rounding left over when every transfer has ended */
            counter(fp, tl, l, pid, t, tl->links[l].bw_Bps > 0 ? level / tl->links[l].bw_Bps : 0);
        }
    }
    free(n0);
    free(fill);
    free(d);
    return 0;
nomem:
    free(n0);
    free(fill);
    free(d);
    return CS_ERR_NOMEM;
}

int cs_trace_write(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl)
{
    int pid_coll = plan->ngpus, rc;
    char b0[32], b1[32];

    if (tl->truncated)
        return CS_ERR_USAGE;
    fprintf(fp,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"collective\":\"%s\",\"protocol\":\"%s\","
            "\"gpus\":%d,\"size_bytes\":%lld,\"iterations\":%d,\"status\":\"%s\","
            "\"predicted_us\":%s},\"traceEvents\":[\n",
            cs_coll_name(plan->coll) ? cs_coll_name(plan->coll) : "unknown",
            cs_proto_name(plan->proto) ? cs_proto_name(plan->proto) : "unknown", plan->ngpus,
            plan->size_bytes, plan->niter, tl->complete ? "ok" : "deadlock",
            tl->complete ? us(b0, ps(tl, tl->makespan_s)) : "null");
    fprintf(fp,
            "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"name\":\"collective\"}}",
            pid_coll);
    fprintf(fp,
            ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"sort_index\":-1}}",
            pid_coll);
    fprintf(fp,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"name\":\"launch\"}}",
            pid_coll);
    for (int g = 0; g < plan->ngpus; g++) {
        fprintf(fp,
                ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":\"gpu %d\"}}",
                g, g);
        fprintf(fp,
                ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"sort_index\":%d}}",
                g, g);
    }
    for (int t = 0; t < plan->ntbs; t++) {
        const struct cs_plan_tb *tb = &plan->tbs[t];

        fprintf(fp,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"name\":\"tb %d (send %d, recv %d, chan %d)\"}}",
                tb->gpu, tb->id, tb->id, tb->send, tb->recv, tb->chan);
        fprintf(fp,
                ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"sort_index\":%d}}",
                tb->gpu, tb->id, tb->id);
    }
    if (tl->offset_s > 0)
        fprintf(fp,
                ",\n{\"name\":\"launch + deploy\",\"cat\":\"launch\",\"ph\":\"X\",\"pid\":%d,"
                "\"tid\":0,\"ts\":0,\"dur\":%s}",
                pid_coll, us(b0, ps(tl, 0)));
    for (long long i = 0; i < tl->nevents; i++) {
        const struct cs_tl_event *e = &tl->events[i];
        const struct cs_plan_tb *tb;
        const struct cs_plan_op *op;
        long long p0 = ps(tl, e->start_s), p1 = ps(tl, e->end_s);

        if (e->tb < 0 || e->tb >= plan->ntbs)
            continue;
        us(b0, p0);
        us(b1, p1 - p0);
        tb = &plan->tbs[e->tb];
        op = e->op >= 0 && e->op < tb->nops ? &tb->ops[e->op] : NULL;
        switch (e->kind) {
        case CS_TL_CALL:
            if (op == NULL)
                break;
            fprintf(fp,
                    ",\n{\"name\":\"%s\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                    "\"ts\":%s,\"dur\":%s,\"args\":{",
                    cs_step_type_name(op->type), tb->gpu, tb->id, b0, b1);
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
            fprintf(fp,
                    ",\n{\"name\":\"%s\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                    "\"ts\":%s,\"dur\":%s,\"args\":{\"iteration\":%d,\"step\":%d",
                    wait_name(e->kind), tb->gpu, tb->id, b0, b1, e->iter, op ? op->step : -1);
            if (e->other >= 0 && e->other < plan->ntbs)
                fprintf(fp, ",\"ended_by\":\"gpu %d tb %d\"", plan->tbs[e->other].gpu,
                        plan->tbs[e->other].id);
            fprintf(fp, "}}");
            break;
        case CS_TL_LATENCY:
            fprintf(fp,
                    ",\n{\"name\":\"hop latency\",\"cat\":\"latency\",\"ph\":\"X\",\"pid\":%d,"
                    "\"tid\":%d,\"ts\":%s,\"dur\":%s",
                    tb->gpu, tb->id, b0, b1);
            if (e->other >= 0 && e->other < plan->ntbs)
                fprintf(fp, ",\"args\":{\"from\":\"gpu %d tb %d\"}", plan->tbs[e->other].gpu,
                        plan->tbs[e->other].id);
            fprintf(fp, "}");
            break;
        case CS_TL_OVERHEAD:
            fprintf(fp,
                    ",\n{\"name\":\"call overhead\",\"cat\":\"overhead\",\"ph\":\"X\",\"pid\":%d,"
                    "\"tid\":%d,\"ts\":%s,\"dur\":%s}",
                    tb->gpu, tb->id, b0, b1);
            break;
        case CS_TL_UNIT: {
            /* The unit as a slice inside its call, and a flow per unit from the middle of the
             * sender's slice to the middle of the receiver's (inside both, so each end binds
             * to its unit); the id pairs the n-th unit sent on a connection with the n-th
             * received on it. */
            char mid[32];

            us(mid, p0 + (p1 - p0) / 2);

            fprintf(fp,
                    ",\n{\"name\":\"%s\",\"cat\":\"unit\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
                    "\"ts\":%s,\"dur\":%s,\"args\":{\"bytes\":%lld",
                    e->out_conn >= 0 && e->in_conn >= 0 ? "recv+send unit"
                    : e->out_conn >= 0                  ? "send unit"
                                                        : "recv unit",
                    tb->gpu, tb->id, b0, b1, e->bytes);
            if (e->out_conn >= 0)
                fprintf(fp, ",\"wire_bytes\":%.0f,\"network_us\":%.6f", e->wire_bytes,
                        e->wire_s * 1e6);
            fprintf(fp, "}}");
            if (e->in_conn >= 0)
                fprintf(fp,
                        ",\n{\"name\":\"unit\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\","
                        "\"id\":%lld,\"pid\":%d,\"tid\":%d,\"ts\":%s}",
                        ((long long)e->in_conn << 32) | (unsigned)e->in_seq, tb->gpu, tb->id, mid);
            if (e->out_conn >= 0)
                fprintf(fp,
                        ",\n{\"name\":\"unit\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":%lld,"
                        "\"pid\":%d,\"tid\":%d,\"ts\":%s}",
                        ((long long)e->out_conn << 32) | (unsigned)e->out_seq, tb->gpu, tb->id,
                        mid);
            break;
        }
        default:
            break;
        }
    }
    rc = write_counters(fp, tl, pid_coll);
    fprintf(fp, "\n]}\n");
    if (rc != 0)
        return rc;
    return ferror(fp) ? CS_ERR_IO : 0;
}
