/* tracecmp.c: per-step spans as a Perfetto trace (written for the harness, read from it or from
 * predict --trace), and a measured trace compared with a predicted one step by step. */
#include "tracecmp.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "trace.h"
#include "util.h"

#define JSON_MAX_DEPTH 64
/* predict --trace stops at 1M events by default, about 250 bytes each */
#define CS_TRACE_MAX_BYTES (1L << 30)

int cs_step_trace_add(struct cs_step_trace *t, const struct cs_step_span *s)
{
    if (t->n == t->cap) {
        long cap = t->cap ? 2 * t->cap : 256;
        struct cs_step_span *g = realloc(t->spans, (size_t)cap * sizeof(*g));

        if (g == NULL)
            return CS_ERR_NOMEM;
        t->spans = g;
        t->cap = cap;
    }
    t->spans[t->n++] = *s;
    return 0;
}

void cs_step_trace_free(struct cs_step_trace *t)
{
    free(t->spans);
    memset(t, 0, sizeof(*t));
}

int cs_step_trace_write(FILE *fp, const struct cs_step_trace *t)
{
    int maxtb[1024] = {0}, nranks = t->gpus;

    fprintf(fp, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"collective\":");
    cs_trace_json_str(fp, t->coll);
    fprintf(fp, ",\"protocol\":");
    cs_trace_json_str(fp, t->proto);
    fprintf(fp, ",\"gpus\":%d,\"size_bytes\":%lld,\"iterations\":%d,\"source\":", t->gpus,
            t->size_bytes, t->iterations);
    cs_trace_json_str(fp, t->source);
    fprintf(fp, "},\"traceEvents\":[\n");
    for (long i = 0; i < t->n; i++) {
        const struct cs_step_span *s = &t->spans[i];

        if (s->rank >= 0 && s->rank < 1024 && s->tb + 1 > maxtb[s->rank])
            maxtb[s->rank] = s->tb + 1;
        nranks = s->rank + 1 > nranks ? s->rank + 1 : nranks;
    }
    for (int r = 0; r < nranks && r < 1024; r++) {
        fprintf(fp,
                "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{"
                "\"name\":\"gpu %d\"}}",
                r ? ",\n" : "", r, r);
        for (int b = 0; b < maxtb[r]; b++)
            fprintf(fp,
                    ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{"
                    "\"name\":\"tb %d\"}}",
                    r, b, b);
    }
    for (long i = 0; i < t->n; i++) {
        const struct cs_step_span *s = &t->spans[i];

        fprintf(fp, "%s{\"name\":", i || nranks ? ",\n" : "");
        cs_trace_json_str(fp, s->type[0] ? s->type : "step");
        fprintf(fp,
                ",\"cat\":\"step\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                "\"args\":{\"iteration\":%d,\"step\":%d}}",
                s->rank, s->tb, s->t0_us, s->t1_us - s->t0_us, s->iter, s->step);
    }
    fprintf(fp, "\n]}\n");
    return ferror(fp) ? CS_ERR_IO : 0;
}

/* --- a JSON reader for trace files: values are walked, never stored --- */

struct jp {
    const char *base, *p, *end, *path;
    struct cs_error *err;
    int depth;
};

static int jp_fail(struct jp *j, const char *what)
{
    int line = 1;

    for (const char *c = j->base; c < j->p && c < j->end; c++)
        line += *c == '\n';
    return cs_error_fail(j->err, CS_ERR_INVALID, j->path, line, "%s", what);
}

static void ws(struct jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

/* Whether the next character (after blanks) is c; consumes it if so. */
static int eat(struct jp *j, char c)
{
    ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

/* Four hex digits of a \uXXXX escape at j->p: the code unit, or -1. */
static long hex4(struct jp *j)
{
    long v = 0;

    for (int k = 0; k < 4; k++, j->p++) {
        const char *d = j->p < j->end && *j->p != '\0'
                            ? strchr("0123456789abcdef", tolower((unsigned char)*j->p))
                            : NULL;

        if (d == NULL)
            return -1;
        v = v * 16 + (d - "0123456789abcdef");
    }
    return v;
}

/* A string into out (size bytes, truncated at a whole character; out may be NULL). An escape
 * stands for the character it names: \uXXXX (and a surrogate pair) as UTF-8, a control
 * character (\n, \t, \u0001...) as '?'. */
static int jstring(struct jp *j, char *out, size_t size)
{
    size_t n = 0;
    int full = 0;

    if (!eat(j, '"'))
        return jp_fail(j, "expected a string");
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++, u[4];
        int nu = 1;

        if ((unsigned char)c < 0x20)
            return jp_fail(j, "control character in a string");
        u[0] = c;
        if (c == '\\') {
            const char *esc = "\"\\/bfnrt", *lit = "\"\\/\b\f\n\r\t", *e;
            long cp;

            if (j->p >= j->end)
                break;
            c = *j->p++;
            if (c == 'u') {
                if ((cp = hex4(j)) < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
                    return jp_fail(j, "bad \\u escape in a string");
                if (cp >= 0xd800 && cp <= 0xdbff) { /* a pair: the low half follows */
                    long lo;

                    if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
                        return jp_fail(j, "bad \\u escape in a string");
                    j->p += 2;
                    if ((lo = hex4(j)) < 0xdc00 || lo > 0xdfff)
                        return jp_fail(j, "bad \\u escape in a string");
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                }
                if (cp == 0)
                    return jp_fail(j, "\\u0000 in a string");
                if (cp < 0x80) {
                    u[0] = (char)cp;
                } else if (cp < 0x800) {
                    u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), nu = 2;
                } else if (cp < 0x10000) {
                    u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
                    u[2] = (char)(0x80 | (cp & 0x3f)), nu = 3;
                } else {
                    u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
                    u[2] = (char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f));
                    nu = 4;
                }
            } else if ((e = strchr(esc, c)) != NULL && c != '\0') {
                u[0] = lit[e - esc];
            } else {
                return jp_fail(j, "bad escape in a string");
            }
        }
        if (nu == 1 && (unsigned char)u[0] < 0x20)
            u[0] = '?'; /* a name is printed in tables and CSV: no control character */
        if (out != NULL && !full && n + (size_t)nu < size) {
            memcpy(out + n, u, (size_t)nu);
            n += (size_t)nu;
        } else {
            full = 1; /* truncated before a character that does not fit, and nothing after */
        }
    }
    if (out != NULL && size > 0)
        out[n] = '\0';
    if (j->p >= j->end)
        return jp_fail(j, "unterminated string");
    j->p++;
    return 0;
}

/* The largest time stamp or duration of a slice read (us): one day. */
#define CS_TRACE_MAX_US 8.64e10

static int jnumber(struct jp *j, double *v)
{
    char buf[64];
    size_t n = 0;
    char *e;

    ws(j);
    while (j->p + n < j->end && n + 1 < sizeof(buf) && strchr("+-0123456789.eE", j->p[n]) &&
           j->p[n] != '\0') {
        buf[n] = j->p[n];
        n++;
    }
    buf[n] = '\0';
    *v = n ? strtod(buf, &e) : 0;
    if (n == 0 || *e != '\0' || !isfinite(*v))
        return jp_fail(j, "expected a number");
    j->p += n;
    return 0;
}

/* A literal word (true, false, null). */
static int jword(struct jp *j)
{
    static const char *const words[] = {"true", "false", "null"};

    ws(j);
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);

        if ((size_t)(j->end - j->p) >= n && strncmp(j->p, words[i], n) == 0) {
            j->p += n;
            return 0;
        }
    }
    return jp_fail(j, "expected a JSON value");
}

/* Calls fn(ctx, j, key) for each member of an object; fn reads the member's value. */
typedef int (*member_fn)(void *ctx, struct jp *j, const char *key);
static int jskip(struct jp *j);

/* Enter a container that opens with `open` (what: its name in errors): 1 when it is empty (closed
 * again), 0 to read its first entry, or an error. */
static int jopen(struct jp *j, char open, char close, const char *what)
{
    if (!eat(j, open))
        return jp_fail(j, what);
    if (++j->depth > JSON_MAX_DEPTH)
        return jp_fail(j, "nested too deeply");
    if (!eat(j, close))
        return 0;
    j->depth--;
    return 1;
}

/* Leave a container after its last entry. */
static int jclose(struct jp *j, char close, const char *what)
{
    if (!eat(j, close))
        return jp_fail(j, what);
    j->depth--;
    return 0;
}

static int jobject(struct jp *j, member_fn fn, void *ctx)
{
    char key[64];
    int rc = jopen(j, '{', '}', "expected an object");

    if (rc != 0)
        return rc > 0 ? 0 : rc;
    do {
        if ((rc = jstring(j, key, sizeof(key))) != 0)
            return rc;
        if (!eat(j, ':'))
            return jp_fail(j, "expected ':'");
        if ((rc = fn != NULL ? fn(ctx, j, key) : jskip(j)) != 0)
            return rc;
    } while (eat(j, ','));
    return jclose(j, '}', "expected ',' or '}'");
}

/* Calls fn(ctx, j) for each element of an array; fn reads the element. */
typedef int (*element_fn)(void *ctx, struct jp *j);

static int jarray(struct jp *j, element_fn fn, void *ctx)
{
    int rc = jopen(j, '[', ']', "expected an array");

    if (rc != 0)
        return rc > 0 ? 0 : rc;
    do {
        if ((rc = fn != NULL ? fn(ctx, j) : jskip(j)) != 0)
            return rc;
    } while (eat(j, ','));
    return jclose(j, ']', "expected ',' or ']'");
}

static int skip_element(void *ctx, struct jp *j)
{
    (void)ctx;
    return jskip(j);
}

static int jskip(struct jp *j)
{
    double v;

    ws(j);
    if (j->p >= j->end)
        return jp_fail(j, "unexpected end of file");
    switch (*j->p) {
    case '{':
        return jobject(j, NULL, NULL);
    case '[':
        return jarray(j, skip_element, NULL);
    case '"':
        return jstring(j, NULL, 0);
    case 't':
    case 'f':
    case 'n':
        return jword(j);
    default:
        return jnumber(j, &v);
    }
}

/* One trace event's fields (has: bit per field seen). */
struct event {
    char name[24], cat[16], ph[4];
    double pid, tid, ts, dur, iter, step;
    int has;
};
enum { HAS_PID = 1, HAS_TID = 2, HAS_TS = 4, HAS_DUR = 8, HAS_ITER = 16, HAS_STEP = 32 };

static int number_member(struct jp *j, double *v, int *has, int bit)
{
    ws(j);
    if (j->p < j->end && *j->p == 'n') /* null */
        return jword(j);
    *has |= bit;
    return jnumber(j, v);
}

/* A member an object's reader keeps: a string into buf[size], or (buf NULL) a number into *num,
 * with bit set in the object's has. */
struct member {
    const char *key;
    char *buf;
    size_t size;
    double *num;
    int bit;
};

/* Read key's value into the member of ms[0..n) that it names, or skip it. */
static int read_member(struct jp *j, const char *key, const struct member *ms, int n, int *has)
{
    for (int i = 0; i < n; i++)
        if (strcmp(key, ms[i].key) == 0)
            return ms[i].buf != NULL ? jstring(j, ms[i].buf, ms[i].size)
                                     : number_member(j, ms[i].num, has, ms[i].bit);
    return jskip(j);
}

static int args_member(void *ctx, struct jp *j, const char *key)
{
    struct event *e = ctx;
    const struct member ms[] = {{"iteration", NULL, 0, &e->iter, HAS_ITER},
                                {"step", NULL, 0, &e->step, HAS_STEP}};

    return read_member(j, key, ms, 2, &e->has);
}

static int event_member(void *ctx, struct jp *j, const char *key)
{
    struct event *e = ctx;
    const struct member ms[] = {
        {"name", e->name, sizeof(e->name), NULL, 0}, {"cat", e->cat, sizeof(e->cat), NULL, 0},
        {"ph", e->ph, sizeof(e->ph), NULL, 0},       {"pid", NULL, 0, &e->pid, HAS_PID},
        {"tid", NULL, 0, &e->tid, HAS_TID},          {"ts", NULL, 0, &e->ts, HAS_TS},
        {"dur", NULL, 0, &e->dur, HAS_DUR},
    };

    if (strcmp(key, "args") == 0) {
        ws(j);
        return j->p < j->end && *j->p == '{' ? jobject(j, args_member, e) : jskip(j);
    }
    return read_member(j, key, ms, 7, &e->has);
}

/* A trace event: a step or wait slice with its iteration and step becomes a raw span. */
static int event_element(void *ctx, struct jp *j)
{
    struct cs_step_trace *t = ctx;
    struct event e;
    struct cs_step_span s;
    int rc, want = HAS_PID | HAS_TID | HAS_TS | HAS_DUR | HAS_ITER | HAS_STEP;

    memset(&e, 0, sizeof(e));
    ws(j);
    if (j->p < j->end && *j->p != '{')
        return jskip(j);
    if ((rc = jobject(j, event_member, &e)) != 0)
        return rc;
    if (strcmp(e.ph, "X") != 0 || (strcmp(e.cat, "step") != 0 && strcmp(e.cat, "wait") != 0))
        return 0;
    if ((e.has & want) != want)
        return jp_fail(j, "a step or wait slice lacks pid, tid, ts, dur or args iteration and "
                          "step");
    if (e.step < 0) /* a wait outside any step */
        return 0;
    if (e.pid < 0 || e.tid < 0 || e.iter < 0 || e.pid > 1e6 || e.tid > 1e6 || e.iter > 1e9 ||
        e.step > 1e6 || e.dur < 0)
        return jp_fail(j, "a step slice's pid, tid, iteration, step or dur is out of range");
    /* microseconds of one collective: a day at most (a larger stamp is no clock's, and its
     * differences would overflow the comparison) */
    if (fabs(e.ts) > CS_TRACE_MAX_US || e.dur > CS_TRACE_MAX_US)
        return jp_fail(j, "a step slice's ts or dur is beyond a day (8.64e10 us)");
    memset(&s, 0, sizeof(s));
    s.rank = (int)e.pid;
    s.tb = (int)e.tid;
    s.iter = (int)e.iter;
    s.step = (int)e.step;
    s.t0_us = e.ts;
    s.t1_us = e.ts + e.dur;
    if (strcmp(e.cat, "step") == 0)
        snprintf(s.type, sizeof(s.type), "%s", e.name);
    return cs_step_trace_add(t, &s) == 0 ? 0 : jp_fail(j, "out of memory");
}

static int other_member(void *ctx, struct jp *j, const char *key)
{
    struct cs_step_trace *t = ctx;
    double v;
    int has = 0, rc;
    const struct member ms[] = {{"collective", t->coll, sizeof(t->coll), NULL, 0},
                                {"protocol", t->proto, sizeof(t->proto), NULL, 0},
                                {"source", t->source, sizeof(t->source), NULL, 0}};

    if (strcmp(key, "gpus") != 0 && strcmp(key, "size_bytes") != 0 &&
        strcmp(key, "iterations") != 0)
        return read_member(j, key, ms, 3, &has);
    if ((rc = number_member(j, &v, &has, 1)) != 0 || !has)
        return rc;
    if (v < 0 || v > 1e18)
        return jp_fail(j, "otherData value out of range");
    if (key[0] == 'g')
        t->gpus = (int)(v < 1e6 ? v : 1e6);
    else if (key[0] == 's')
        t->size_bytes = (long long)v;
    else
        t->iterations = (int)(v < 1e9 ? v : 1e9);
    return 0;
}

static int top_member(void *ctx, struct jp *j, const char *key)
{
    ws(j);
    if (strcmp(key, "traceEvents") == 0)
        return jarray(j, event_element, ctx);
    if (strcmp(key, "otherData") == 0 && j->p < j->end && *j->p == '{')
        return jobject(j, other_member, ctx);
    return jskip(j);
}

static int span_cmp(const void *a, const void *b)
{
    const struct cs_step_span *x = a, *y = b;
    const int kx[] = {x->rank, x->tb, x->iter, x->step}, ky[] = {y->rank, y->tb, y->iter, y->step};

    return cs_cmp_ints(kx, ky, 4);
}

/* Sort the raw spans, join those of one key, and start the clock at the first span. */
static void collapse(struct cs_step_trace *t)
{
    long n = 0;
    double t0 = INFINITY;

    qsort(t->spans, (size_t)t->n, sizeof(*t->spans), span_cmp);
    for (long i = 0; i < t->n; i++) {
        struct cs_step_span *s = &t->spans[i], *last = n ? &t->spans[n - 1] : NULL;

        if (last != NULL && span_cmp(last, s) == 0) {
            last->t0_us = s->t0_us < last->t0_us ? s->t0_us : last->t0_us;
            last->t1_us = s->t1_us > last->t1_us ? s->t1_us : last->t1_us;
            if (last->type[0] == '\0')
                memcpy(last->type, s->type, sizeof(s->type));
        } else {
            t->spans[n++] = *s;
        }
    }
    t->n = n;
    for (long i = 0; i < n; i++)
        t0 = t->spans[i].t0_us < t0 ? t->spans[i].t0_us : t0;
    for (long i = 0; i < n; i++) {
        t->spans[i].t0_us -= t0;
        t->spans[i].t1_us -= t0;
    }
}

int cs_step_trace_read(const char *path, struct cs_step_trace *t, struct cs_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    struct jp j;
    int rc;

    memset(t, 0, sizeof(*t));
    if ((rc = cs_file_read(path, CS_TRACE_MAX_BYTES, &buf, &len, err)) != 0)
        return rc;
    j = (struct jp){buf, buf, buf + len, path, err, 0};
    rc = jobject(&j, top_member, t);
    ws(&j);
    if (rc == 0 && j.p != j.end)
        rc = jp_fail(&j, "trailing content after the trace object");
    if (rc == 0 && t->n == 0)
        rc = cs_error_fail(err, CS_ERR_INVALID, path, 0,
                           "no step slice (category \"step\" with args iteration and step): not "
                           "a collsim or harness trace");
    free(buf);
    if (rc != 0) {
        cs_step_trace_free(t);
        return rc;
    }
    collapse(t);
    return 0;
}

/* --- comparison --- */

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double diff_of(const struct cs_trace_cmp_row *r)
{
    return fabs(r->b_dur_us - r->a_dur_us);
}

static int row_cmp(const void *a, const void *b)
{
    int c = cs_cmp_dbl(diff_of(b), diff_of(a)); /* largest first */

    return c ? c : span_cmp(a, b) /* same leading fields as a span */;
}

static double median(double *v, long n)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double span_of(const struct cs_step_trace *t)
{
    double end = 0;

    for (long i = 0; i < t->n; i++)
        end = t->spans[i].t1_us > end ? t->spans[i].t1_us : end;
    return end;
}

/* Statistics of the matched rows. */
static int cmp_stats(struct cs_trace_cmp *c)
{
    double *abs_d = malloc(((size_t)c->matched + 1) * sizeof(double));
    double *rel = malloc(((size_t)c->matched + 1) * sizeof(double));
    long nrel = 0;

    if (abs_d == NULL || rel == NULL) {
        free(abs_d);
        free(rel);
        return CS_ERR_NOMEM;
    }
    for (long i = 0; i < c->matched; i++) {
        const struct cs_trace_cmp_row *r = &c->rows[i];

        abs_d[i] = diff_of(r);
        c->max_abs_us = abs_d[i] > c->max_abs_us ? abs_d[i] : c->max_abs_us;
        c->a_busy_us += r->a_dur_us;
        c->b_busy_us += r->b_dur_us;
        if (r->a_dur_us > 0) {
            rel[nrel] = abs_d[i] / r->a_dur_us;
            c->max_rel = rel[nrel] > c->max_rel ? rel[nrel] : c->max_rel;
            nrel++;
        }
    }
    c->med_abs_us = median(abs_d, c->matched);
    c->med_rel = median(rel, nrel);
    free(abs_d);
    free(rel);
    qsort(c->rows, (size_t)c->matched, sizeof(*c->rows), row_cmp);
    return 0;
}

int cs_trace_compare(const struct cs_step_trace *a, const struct cs_step_trace *b,
                     struct cs_trace_cmp *out)
{
    long i = 0, k = 0, n = a->n < b->n ? a->n : b->n;

    memset(out, 0, sizeof(*out));
    out->rows = malloc(((size_t)n + 1) * sizeof(*out->rows));
    if (out->rows == NULL)
        return CS_ERR_NOMEM;
    while (i < a->n || k < b->n) {
        int c = i == a->n ? 1 : k == b->n ? -1 : span_cmp(&a->spans[i], &b->spans[k]);

        if (c < 0) {
            out->only_a++;
            i++;
        } else if (c > 0) {
            out->only_b++;
            k++;
        } else {
            const struct cs_step_span *x = &a->spans[i++], *y = &b->spans[k++];
            struct cs_trace_cmp_row *r = &out->rows[out->matched++];

            r->rank = x->rank;
            r->tb = x->tb;
            r->iter = x->iter;
            r->step = x->step;
            memcpy(r->type, x->type[0] ? x->type : y->type, sizeof(r->type));
            if (x->type[0] && y->type[0] && strcmp(x->type, y->type) != 0 &&
                out->type_diff++ == 0) {
                out->first_diff = *r;
                snprintf(out->first_diff_b, sizeof(out->first_diff_b), "%s", y->type);
            }
            r->a_start_us = x->t0_us;
            r->a_dur_us = x->t1_us - x->t0_us;
            r->b_start_us = y->t0_us;
            r->b_dur_us = y->t1_us - y->t0_us;
        }
    }
    out->a_span_us = span_of(a);
    out->b_span_us = span_of(b);
    if (cmp_stats(out) != 0) {
        cs_trace_cmp_free(out);
        return CS_ERR_NOMEM;
    }
    return 0;
}

void cs_trace_cmp_free(struct cs_trace_cmp *c)
{
    free(c->rows);
    memset(c, 0, sizeof(*c));
}

static double pct(double b, double a)
{
    return a > 0 ? 100 * (b - a) / a : 0;
}

void cs_trace_cmp_print(FILE *fp, const struct cs_trace_cmp *c, const char *a_name,
                        const char *b_name, int top)
{
    long n = top < 0 || top > c->matched ? c->matched : top;

    fprintf(fp, "# measured: %s\n# predicted: %s\n", a_name, b_name);
    fprintf(fp, "steps matched %ld; only measured %ld; only predicted %ld\n", c->matched, c->only_a,
            c->only_b);
    fprintf(fp,
            "span (first step start to last step end): measured %.3f us, predicted %.3f us "
            "(%+.1f%%)\n",
            c->a_span_us, c->b_span_us, pct(c->b_span_us, c->a_span_us));
    fprintf(fp, "busy (sum of matched step times): measured %.3f us, predicted %.3f us (%+.1f%%)\n",
            c->a_busy_us, c->b_busy_us, pct(c->b_busy_us, c->a_busy_us));
    fprintf(fp,
            "per step |predicted - measured|: median %.3f us, max %.3f us; relative median "
            "%.1f%%, max %.1f%%\n",
            c->med_abs_us, c->max_abs_us, 100 * c->med_rel, 100 * c->max_rel);
    if (n == 0)
        return;
    fprintf(fp, "%ld step%s with the largest differences:\n", n, n == 1 ? "" : "s");
    fprintf(fp, "%6s %5s %6s %5s %-6s %12s %12s %12s %12s %11s\n", "rank", "tb", "iter", "step",
            "type", "meas_start", "meas_us", "pred_start", "pred_us", "diff_us");
    for (long i = 0; i < n; i++) {
        const struct cs_trace_cmp_row *r = &c->rows[i];

        fprintf(fp, "%6d %5d %6d %5d %-6s %12.3f %12.3f %12.3f %12.3f %+11.3f\n", r->rank, r->tb,
                r->iter, r->step, r->type[0] ? r->type : "-", r->a_start_us, r->a_dur_us,
                r->b_start_us, r->b_dur_us, r->b_dur_us - r->a_dur_us);
    }
}

void cs_trace_cmp_csv(FILE *fp, const struct cs_trace_cmp *c)
{
    fprintf(fp, "rank,tb,iteration,step,type,measured_start_us,measured_us,predicted_start_us,"
                "predicted_us,diff_us\n");
    for (long i = 0; i < c->matched; i++) {
        const struct cs_trace_cmp_row *r = &c->rows[i];

        fprintf(fp, "%d,%d,%d,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f\n", r->rank, r->tb, r->iter, r->step,
                r->type, r->a_start_us, r->a_dur_us, r->b_start_us, r->b_dur_us,
                r->b_dur_us - r->a_dur_us);
    }
}
