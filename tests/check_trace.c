/* check_trace.c: replay timelines: the Chrome trace is valid JSON with a slice per call and a
 * finished flow per sent unit, and the critical path adds up to the predicted time (exactly the
 * launch plus the transfer for a lone transfer). Synthetic timelines test the writers without
 * SimGrid; replays fork a SimGrid child each. */
#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "plan.h"
#include "platform.h"
#include "replay.h"
#include "runner.h"
#include "stats.h"
#include "testplat.h"
#include "testutil.h"
#include "timeline.h"
#include "trace.h"
#include "xml.h"

/* --- a small strict JSON validator (RFC 8259): value, then end of input --- */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL; /* also catches the end of input */
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i]))
                        return NULL;
                p += 4;
            } else if (strchr("\"\\/bfnrt", *p) == NULL || *p == '\0') {
                return NULL;
            }
        }
        p++;
    }
    return p + 1;
}

static const char *number(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p))
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return p;
}

static const char *value(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    p = ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';

        p = ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                p = string(ws(p));
                if (p == NULL)
                    return NULL;
                p = ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = value(p, depth + 1);
            if (p == NULL)
                return NULL;
            p = ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"')
        return string(p);
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    return number(p);
}

static int json_valid(const char *text)
{
    const char *p = value(text, 0);

    return p != NULL && *ws(p) == '\0';
}

START_TEST(test_validator)
{
    ck_assert(json_valid("{\"a\":[1,-2.5e3,\"x\\n\\u00e9\",true,null,{}]}"));
    ck_assert(!json_valid("{\"a\":[1,]}"));
    ck_assert(!json_valid("{\"a\":\"tab\there\"}"));
    ck_assert(!json_valid("{\"a\":1} x"));
    ck_assert(!json_valid("{\"a\" 1}"));
    ck_assert(!json_valid("[01]"));
}
END_TEST

/* The trace of plan/tl as a string (malloc'd). */
static char *trace_text(const struct cs_plan *plan, const struct cs_timeline *tl)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(cs_trace_write(fp, plan, tl), 0);
    fclose(fp);
    return buf;
}

/* Lines (one event each) containing every needle; pid/tid filters when >= 0. */
static int count_lines(const char *text, const char *n1, const char *n2, int pid, int tid)
{
    int n = 0;
    char key[64];

    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, len);

        if (strstr(line, n1) && (n2 == NULL || strstr(line, n2))) {
            int ok = 1;

            if (pid >= 0) {
                snprintf(key, sizeof(key), "\"pid\":%d,", pid);
                ok &= strstr(line, key) != NULL;
            }
            if (tid >= 0) {
                snprintf(key, sizeof(key), "\"tid\":%d,", tid);
                ok &= strstr(line, key) != NULL;
            }
            n += ok;
        }
        free(line);
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

struct xslice {
    int pid, tid;
    double a, b;
};

static int xslice_cmp(const void *x, const void *y)
{
    const struct xslice *p = x, *q = y;

    if (p->pid != q->pid)
        return p->pid - q->pid;
    if (p->tid != q->tid)
        return p->tid - q->tid;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b > q->b ? -1 : p->b < q->b; /* the enclosing slice first */
}

/* Number of complete slices that overlap a slice of their track without nesting in it. */
static int bad_nesting(const char *text)
{
    struct xslice *v = NULL, *stack;
    int n = 0, cap = 0, bad = 0, top = 0;

    for (const char *p = strstr(text, "\"ph\":\"X\""); p; p = strstr(p + 1, "\"ph\":\"X\"")) {
        const char *pid = strstr(p, "\"pid\":"), *tid = strstr(p, "\"tid\":"),
                   *ts = strstr(p, "\"ts\":"), *dur = strstr(p, "\"dur\":");

        ck_assert(pid && tid && ts && dur);
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            v = realloc(v, (size_t)cap * sizeof(*v));
            ck_assert_ptr_nonnull(v);
        }
        v[n].pid = atoi(pid + 6);
        v[n].tid = atoi(tid + 6);
        v[n].a = strtod(ts + 5, NULL);
        v[n].b = v[n].a + strtod(dur + 6, NULL);
        n++;
    }
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), xslice_cmp);
    stack = calloc((size_t)n, sizeof(*stack));
    ck_assert_ptr_nonnull(stack);
    for (int i = 0; i < n; i++) {
        while (top > 0 && (stack[top - 1].pid != v[i].pid || stack[top - 1].tid != v[i].tid ||
                           stack[top - 1].b <= v[i].a + 1e-7))
            top--;
        /* 1e-7 us: the printed figures are exact to the picosecond (1e-6 us); ts + dur read
         * back as doubles is not */
        if (top > 0 && v[i].b > stack[top - 1].b + 1e-7)
            bad++;
        stack[top++] = v[i];
    }
    free(stack);
    free(v);
    return bad;
}

/* --- synthetic timeline: no SimGrid --- */

static struct cs_tl_event ev(int kind, int tb, double a, double b)
{
    struct cs_tl_event e;

    memset(&e, 0, sizeof(e));
    e.kind = kind;
    e.tb = tb;
    e.start_s = a;
    e.end_s = b;
    e.other = e.out_conn = e.out_seq = e.in_conn = e.in_seq = -1;
    return e;
}

/* gpu0 tb0 sends one unit (overhead 1 us, wire 3 us), gpu1 tb0 waits for it, then receives for
 * 2 us. Critical path: launch 5 + 1 + 3 + 2. */
START_TEST(test_synthetic)
{
    struct cs_sched *s = cs_sched_new();
    struct cs_plan *plan = NULL;
    struct cs_timeline tl;
    struct cs_tl_event e;
    struct cs_tl_conn c = {0, 1, 0, 0, 1, 0, 0};
    struct cs_critpath cp;
    int link, route[1];
    char *text;

    s->ngpus = 2;
    s->nchannels = 1;
    s->nchunksperloop = 1;
    for (int g = 0; g < 2; g++) {
        struct cs_gpu *gpu = cs_sched_add_gpu(s);
        struct cs_tb *tb = cs_gpu_add_tb(gpu);
        struct cs_step *st = cs_tb_add_step(tb);

        gpu->id = g;
        tb->id = 0;
        tb->send = g == 0 ? 1 : -1;
        tb->recv = g == 0 ? -1 : 0;
        st->s = 0;
        st->type = g == 0 ? CS_STEP_S : CS_STEP_R;
        st->srcbuf = st->dstbuf = CS_BUF_INPUT;
        st->cnt = 1;
        st->depid = st->deps = -1;
    }
    ck_assert_int_eq(cs_plan_build(s, 1024, 4, CS_PROTO_LL, &plan, NULL), 0);
    cs_timeline_init(&tl, 0);
    link = cs_timeline_add_link(&tl, "nv\"link\\0", 100e9);
    route[0] = link;
    ck_assert_int_eq(cs_timeline_add_conn(&tl, &c, route, 1), 0);
    e = ev(CS_TL_OVERHEAD, 0, 0, 1e-6);
    cs_timeline_add(&tl, &e);
    e = ev(CS_TL_UNIT, 0, 1e-6, 4e-6);
    e.out_conn = 0;
    e.out_seq = 0;
    e.wire_bytes = 2048;
    e.wire_s = 3e-6;
    e.bytes = 1024;
    cs_timeline_add(&tl, &e);
    e = ev(CS_TL_CALL, 0, 0, 4e-6);
    e.bytes = 1024;
    cs_timeline_add(&tl, &e);
    e = ev(CS_TL_WAIT_DATA, 1, 0, 4e-6);
    e.other = 0;
    cs_timeline_add(&tl, &e);
    e = ev(CS_TL_UNIT, 1, 4e-6, 6e-6);
    e.in_conn = 0;
    e.in_seq = 0;
    e.bytes = 1024;
    cs_timeline_add(&tl, &e);
    e = ev(CS_TL_CALL, 1, 0, 6e-6);
    e.bytes = 1024;
    cs_timeline_add(&tl, &e);
    tl.makespan_s = 6e-6;
    tl.offset_s = 5e-6;
    tl.complete = 1;

    text = trace_text(plan, &tl);
    ck_assert_msg(json_valid(text), "invalid JSON:\n%s", text);
    ck_assert_int_eq(count_lines(text, "\"cat\":\"step\"", "\"ph\":\"X\"", 0, 0), 1);
    ck_assert_int_eq(count_lines(text, "\"cat\":\"step\"", "\"ph\":\"X\"", 1, 0), 1);
    ck_assert_int_eq(count_lines(text, "\"name\":\"wait data\"", NULL, 1, 0), 1);
    ck_assert_int_eq(count_lines(text, "\"ph\":\"s\"", NULL, 0, 0), 1);
    ck_assert_int_eq(count_lines(text, "\"ph\":\"f\"", "\"bp\":\"e\"", 1, 0), 1);
    ck_assert_int_eq(count_lines(text, "\"ph\":\"C\"", "nv\\\"link\\\\0", -1, -1), 3);
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"tb 0 (send 1, recv -1, chan 0)\""));
    /* the sender's call, placed after the 5 us launch */
    ck_assert_ptr_nonnull(strstr(text, "\"pid\":0,\"tid\":0,\"ts\":5.000000,\"dur\":4.000000"));
    free(text);

    ck_assert_int_eq(cs_stats_critical_path(plan, &tl, &cp), 0);
    ck_assert_int_eq(cp.nparts, 4);
    ck_assert_double_eq_tol(cp.parts[0].dur_s, 5e-6, 1e-18);
    ck_assert_double_eq_tol(cp.parts[1].dur_s, 1e-6, 1e-18);
    ck_assert_double_eq_tol(cp.parts[2].dur_s, 3e-6, 1e-18);
    ck_assert_int_eq(cp.parts[2].via, CS_TL_WAIT_DATA);
    ck_assert_double_eq_tol(cp.parts[3].dur_s, 2e-6, 1e-18);
    ck_assert_double_eq_tol(cp.total_s, 11e-6, 1e-18);
    ck_assert(cp.unattributed_s == 0);
    cs_critpath_cleanup(&cp);

    /* The statistics name the path, the link's share and the receiver's wait. */
    {
        char *buf = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&buf, &len);

        ck_assert_int_eq(cs_stats_write(fp, plan, &tl, 0), 0);
        fclose(fp);
        ck_assert_msg(strstr(buf, "critical path: 4 parts in 3 segments, 11.000 us") != NULL, "%s",
                      buf);
        ck_assert_msg(strstr(buf, "5.000  45.45%  launch + deploy\n") != NULL, "%s", buf);
        ck_assert_msg(strstr(buf, "4.000  36.36%  gpu 0 tb 0 iteration 0 step 0 s to gpu 1: call "
                                  "overhead 1.000 network 3.000\n") != NULL,
                      "%s", buf);
        ck_assert_msg(strstr(buf, "-> its data ends a wait of gpu 1 tb 0\n") != NULL, "%s", buf);
        ck_assert_msg(strstr(buf, "2.000  18.18%  gpu 1 tb 0 iteration 0 step 0 r from gpu 0: tb "
                                  "copy/reduce rate 2.000\n") != NULL,
                      "%s", buf);
        /* 2048 wire bytes over 6 us, busy 3 of them */
        ck_assert_msg(strstr(buf, "2048   50.0%      0.341    100.000   0.3%") != NULL, "%s", buf);
        ck_assert_msg(strstr(buf, "1    0    -1     0     0        2.000        4.000        "
                                  "0.000        0.000        6.000") != NULL,
                      "%s", buf);
        free(buf);
    }

    /* A truncated log is refused. */
    tl.truncated = 1;
    ck_assert_int_eq(cs_trace_write(stderr, plan, &tl), CS_ERR_USAGE);
    ck_assert_int_eq(cs_stats_critical_path(plan, &tl, &cp), CS_ERR_USAGE);
    cs_timeline_cleanup(&tl);
    cs_plan_free(plan);
    cs_sched_free(s);
}
END_TEST

/* The log survives the pipe; the cap truncates. */
/* Units are indexed under every link of their route, in timeline order; others are not. */
START_TEST(test_link_units)
{
    struct cs_timeline tl;
    struct cs_tl_conn c0 = {0, 1, 0, 0, 1, 0, 0}, c1 = {1, 0, 0, 1, 0, 0, 0};
    struct cs_link_units lu;
    struct cs_tl_event e;
    int both[2], one[1];

    cs_timeline_init(&tl, 0);
    both[0] = cs_timeline_add_link(&tl, "a", 1e9);
    both[1] = cs_timeline_add_link(&tl, "b", 1e9);
    cs_timeline_add_link(&tl, "idle", 1e9);
    one[0] = both[1];
    ck_assert_int_eq(cs_timeline_add_conn(&tl, &c0, both, 2), 0);
    ck_assert_int_eq(cs_timeline_add_conn(&tl, &c1, one, 1), 1);
    for (int i = 0; i < 5; i++) {
        e = ev(i == 3 ? CS_TL_CALL : CS_TL_UNIT, 0, i, i + 1);
        e.out_conn = i == 2 ? -1 : i % 2;
        e.wire_bytes = i == 4 ? 0 : 100;
        e.wire_s = i == 4 ? 0 : 1e-7;
        ck_assert_int_eq(cs_timeline_add(&tl, &e), 0);
    }
    ck_assert_int_eq(cs_stats_link_units(&tl, &lu), 0);
    /* event 0 (conn 0) on a and b, event 1 (conn 1) on b; 2 has no out_conn, 3 is a call, 4
     * carries nothing */
    ck_assert_int_eq(lu.first[0], 0);
    ck_assert_int_eq(lu.first[1], 1);
    ck_assert_int_eq(lu.first[2], 3);
    ck_assert_int_eq(lu.first[3], 3);
    ck_assert_int_eq(lu.ev[0], 0);
    ck_assert_int_eq(lu.ev[1], 0);
    ck_assert_int_eq(lu.ev[2], 1);
    ck_assert_int_eq(lu.max, 2);
    cs_link_units_cleanup(&lu);
    cs_link_units_cleanup(&lu);
    cs_timeline_cleanup(&tl);
}
END_TEST

START_TEST(test_serialise_and_cap)
{
    struct cs_timeline a, b;
    struct cs_tl_conn c = {0, 1, 0, 0, 1, 0, 0};
    int fds[2], route[2];

    cs_timeline_init(&a, 3);
    route[0] = cs_timeline_add_link(&a, "up", 1e9);
    route[1] = cs_timeline_add_link(&a, "down", 2e9);
    ck_assert_int_eq(cs_timeline_add_conn(&a, &c, route, 2), 0);
    for (int i = 0; i < 3; i++) {
        struct cs_tl_event e = ev(CS_TL_OVERHEAD, 0, i, i + 1);

        ck_assert_int_eq(cs_timeline_add(&a, &e), 0);
    }
    {
        struct cs_tl_event e = ev(CS_TL_OVERHEAD, 0, 3, 4);

        ck_assert_int_eq(cs_timeline_add(&a, &e), -1);
        ck_assert_int_eq(a.truncated, 1);
    }
    a.makespan_s = 3;
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(cs_timeline_write(fds[1], &a), 0);
    close(fds[1]);
    cs_timeline_init(&b, 0);
    ck_assert_int_eq(cs_timeline_read(fds[0], &b), 0);
    close(fds[0]);
    ck_assert_int_eq(b.nevents, 3);
    ck_assert_int_eq(b.truncated, 1);
    ck_assert_int_eq(b.nconns, 1);
    ck_assert_int_eq(b.conns[0].nroute, 2);
    ck_assert_str_eq(b.links[b.route[1]].name, "down");
    ck_assert(b.events[2].end_s == 3 && b.makespan_s == 3);
    cs_timeline_cleanup(&a);
    cs_timeline_cleanup(&b);
}
END_TEST

/* --- replays --- */

static char plat_path[64];

/* A rows x columns a100-hier platform with default parameters, or with every protocol overhead
 * zero and exact link figures (bare = 1). */
static struct cs_platform *hier(int rows, int columns, int bare)
{
    struct cs_params p;
    struct cs_platform *plat;

    cs_params_init(&p);
    if (bare) {
        p.link_Bps[CS_LINK_NVLINK] = 100e9;
        p.link_lat_s[CS_LINK_NVLINK] = 2e-6; /* per hop */
    }
    plat = test_platform_hier(rows, columns, &p, plat_path);
    if (bare)
        test_platform_bare(plat);
    return plat;
}

static void drop(struct cs_platform *plat)
{
    unlink(plat_path);
    cs_platform_free(plat);
}

static void assert_rel(double got, double want)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * want, "got %.15e want %.15e (rel %.3e)", got, want,
                  fabs(got - want) / want);
}

/* Replay with a timeline and check everything the trace and the critical path promise. */
static void check_replay(const struct cs_sched *s, const struct cs_platform *plat, long long size,
                         enum cs_proto proto, const char *what)
{
    struct cs_plan *plan = NULL;
    struct cs_replay_result res, plain;
    struct cs_replay_opts opts = {0};
    struct cs_timeline tl;
    struct cs_critpath cp;
    struct cs_error err;
    long long nsend = 0, nrecv = 0;
    char *text;

    cs_error_init(&err);
    cs_timeline_init(&tl, 0);
    opts.timeline = &tl;
    ck_assert_int_eq(cs_plan_build(s, size, 4, proto, &plan, &err), 0);
    ck_assert_msg(cs_replay_run(plan, plat, &opts, &res, &err) == 0, "%s: %s", what, err.msg);
    ck_assert_msg(res.status == CS_REPLAY_OK, "%s deadlocks", what);
    ck_assert(!tl.truncated && tl.complete);
    /* Recording does not change the prediction. */
    ck_assert_int_eq(cs_replay_run(plan, plat, NULL, &plain, &err), 0);
    ck_assert_msg(plain.time_s == res.time_s, "%s: %.17g with a timeline, %.17g without", what,
                  res.time_s, plain.time_s);

    /* Critical path: its parts add up to the predicted time. */
    ck_assert_int_eq(cs_stats_critical_path(plan, &tl, &cp), 0);
    ck_assert_msg(cp.unattributed_s == 0, "%s: %.3e s unattributed", what, cp.unattributed_s);
    assert_rel(cp.total_s, res.time_s);
    ck_assert(cp.nparts >= 2 && cp.parts[0].ev == -1);
    cs_critpath_cleanup(&cp);

    /* Trace: valid JSON, one step slice per call (local op: per iteration), a flow finish per
     * flow start. */
    text = trace_text(plan, &tl);
    ck_assert_msg(json_valid(text), "%s: the trace is not valid JSON", what);
    for (int t = 0; t < plan->ntbs; t++) {
        const struct cs_plan_tb *tb = &plan->tbs[t];
        int want = 0;

        for (int k = 0; k < tb->nops; k++)
            want += tb->ops[k].type == CS_STEP_CPY || tb->ops[k].type == CS_STEP_RE
                        ? 1
                        : tb->ops[k].ncalls;
        want *= plan->sz.niter;
        ck_assert_msg(count_lines(text, "\"cat\":\"step\"", "\"ph\":\"X\"", tb->gpu, tb->id) ==
                          want,
                      "%s: gpu %d tb %d: %d step slices, want %d", what, tb->gpu, tb->id,
                      count_lines(text, "\"cat\":\"step\"", "\"ph\":\"X\"", tb->gpu, tb->id), want);
    }
    ck_assert_int_eq(count_lines(text, "\"ph\":\"s\"", NULL, -1, -1),
                     count_lines(text, "\"ph\":\"f\"", "\"bp\":\"e\"", -1, -1));
    ck_assert_msg(bad_nesting(text) == 0, "%s: %d slices overlap without nesting", what,
                  bad_nesting(text));
    /* every sent unit is received: per connection, units 0..n-1 both ways, in order */
    {
        int *sent = calloc((size_t)tl.nconns + 1, sizeof(int));
        int *got = calloc((size_t)tl.nconns + 1, sizeof(int));

        for (long long i = 0; i < tl.nevents; i++) {
            const struct cs_tl_event *e = &tl.events[i];

            if (e->out_conn >= 0) {
                ck_assert_int_eq(e->out_seq, sent[e->out_conn]++);
                nsend++;
            }
            if (e->in_conn >= 0) {
                ck_assert_int_eq(e->in_seq, got[e->in_conn]++);
                ck_assert_int_eq(tl.conns[e->in_conn].receiver, e->tb);
                nrecv++;
            }
        }
        for (int c = 0; c < tl.nconns; c++)
            ck_assert_int_eq(sent[c], got[c]);
        free(sent);
        free(got);
    }
    ck_assert_int_eq(nsend, nrecv);
    ck_assert_int_eq(count_lines(text, "\"ph\":\"s\"", NULL, -1, -1), nsend);
    free(text);
    cs_timeline_cleanup(&tl);
    cs_replay_result_cleanup(&res);
    cs_replay_result_cleanup(&plain);
    cs_plan_free(plan);
}

/* gpu0 -> gpu1, one LL chunk, no protocol costs: the critical path is the launch and the
 * receiver's two waits, for the first line (the hop latency, 2 x 1 us) and for the last (the
 * sender's transfer, bytes x wire / 100 GB/s, later). */
START_TEST(test_lone_transfer)
{
    struct cs_platform *plat = hier(2, 1, 1);
    struct cs_sched *s = NULL;
    struct cs_plan *plan = NULL;
    struct cs_replay_opts opts = {0};
    struct cs_replay_result res;
    struct cs_timeline tl;
    struct cs_critpath cp;
    const char *xml =
        "<algo name=\"one\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"2\" "
        "coll=\"allreduce\" inplace=\"1\">\n"
        "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\">\n"
        "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
        "<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
        "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
        "</tb>\n</gpu>\n"
        "<gpu id=\"1\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\">\n"
        "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n"
        "<step s=\"0\" type=\"r\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
        "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
        "</tb>\n</gpu>\n</algo>\n";

    ck_assert_int_eq(cs_sched_read_xml_mem(xml, strlen(xml), "one.xml", &s, NULL), 0);
    plat->params.launch_s = 5e-6;
    ck_assert_int_eq(cs_plan_build(s, 32768, 4, CS_PROTO_LL, &plan, NULL), 0);
    cs_timeline_init(&tl, 0);
    opts.timeline = &tl;
    ck_assert_int_eq(cs_replay_run(plan, plat, &opts, &res, NULL), 0);
    assert_rel(res.time_s, 5e-6 + 2e-6 + 65536 / 100e9);
    ck_assert_int_eq(cs_stats_critical_path(plan, &tl, &cp), 0);
    /* LL streams: the receiver waits for the first line (the hop latency after the sender
     * started; its own pass is empty), then for the last line (the sender's pass later). */
    ck_assert_int_eq(cp.nparts, 3);
    ck_assert(cp.parts[0].ev == -1 && cp.parts[0].dur_s == 5e-6);
    for (int k = 1; k < 3; k++) {
        ck_assert_int_eq(tl.events[cp.parts[k].ev].tb, 1);
        ck_assert_int_eq(tl.events[cp.parts[k].ev].kind, CS_TL_LATENCY);
        ck_assert_int_eq(tl.events[cp.parts[k].ev].other, 0);
    }
    assert_rel(cp.parts[1].dur_s, 2e-6);
    assert_rel(cp.parts[2].dur_s, 65536 / 100e9);
    assert_rel(cp.total_s, res.time_s);
    cs_critpath_cleanup(&cp);
    cs_timeline_cleanup(&tl);
    cs_plan_free(plan);
    cs_sched_free(s);
    drop(plat);
}
END_TEST

START_TEST(test_ring)
{
    struct cs_platform *plat = hier(2, 2, 0);
    const enum cs_proto protos[] = {CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE};
    const long long sizes[] = {64 * 1024, 4 << 20};
    struct cs_sched *s = NULL;

    ck_assert_int_eq(cs_gen_from_spec("ring:gpus=4,channels=2,instances=1,protocol=LL", &s, NULL),
                     0);
    for (int p = 0; p < 3; p++)
        for (int k = 0; k < 2; k++) {
            char what[64];

            snprintf(what, sizeof(what), "ring %s %lld", cs_proto_name(protos[p]), sizes[k]);
            check_replay(s, plat, cs_plan_round_size(s, sizes[k], 4), protos[p], what);
        }
    cs_sched_free(s);
    drop(plat);
}
END_TEST

START_TEST(test_hierarchical)
{
    struct cs_platform *plat = hier(2, 2, 0);
    const char *protos[] = {"LL", "LL128", "Simple"};
    const long long sizes[] = {96 * 1024, 3 << 20};

    for (int p = 0; p < 3; p++) {
        struct cs_sched *s = NULL;
        char spec[128];

        snprintf(spec, sizeof(spec), "hierarchical:gpus=4,instances=1,columns=2,protocol=%s",
                 protos[p]);
        ck_assert_int_eq(cs_gen_from_spec(spec, &s, NULL), 0);
        for (int k = 0; k < 2; k++) {
            char what[160];

            snprintf(what, sizeof(what), "%s %lld", spec, sizes[k]);
            check_replay(s, plat, cs_plan_round_size(s, sizes[k], 4), s->proto, what);
        }
        cs_sched_free(s);
    }
    drop(plat);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_validator, 1},     {test_synthetic, 1},
        {test_link_units, 1},    {test_serialise_and_cap, 1},
        {test_lone_transfer, 1}, {test_ring, 1},
        {test_hierarchical, 1},  {NULL, 0},
    };

    return test_run("trace", 240, tests, NULL);
}
