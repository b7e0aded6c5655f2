/* check_tracecmp.c: per-step traces written, read back (the harness's layout and predict's, whose
 * call and wait slices join into one span per step) and compared; bad traces refused with their
 * line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "tracecmp.h"

/* Write text to a new temporary file; its path in path (64 bytes). */
static void write_tmp(char *path, const char *text)
{
    FILE *fp;
    int fd;

    strcpy(path, "/tmp/check_tracecmp.XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fp = fdopen(fd, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
}

/* A trace of ranks x tbs x iterations x steps spans, each step 1 + (rank + step) us long, one
 * after another on each tb from t = 100 us; durations scaled by scale. */
static void make_trace(struct cs_step_trace *t, int ranks, int tbs, int iters, int steps,
                       double scale)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->coll, sizeof(t->coll), "allreduce");
    snprintf(t->proto, sizeof(t->proto), "LL");
    snprintf(t->source, sizeof(t->source), "collsim-harness");
    t->gpus = ranks;
    t->iterations = iters;
    t->size_bytes = 1 << 20;
    for (int r = 0; r < ranks; r++)
        for (int b = 0; b < tbs; b++) {
            double now = 100;

            for (int i = 0; i < iters; i++)
                for (int s = 0; s < steps; s++) {
                    struct cs_step_span sp = {r, b, i, s, now, 0, "s"};

                    now += (1 + r + s) * scale;
                    sp.t1_us = now;
                    ck_assert_int_eq(cs_step_trace_add(t, &sp), 0);
                }
        }
}

/* Written and read back: the same spans, sorted, the clock from the first span; otherData kept. */
START_TEST(round_trip)
{
    struct cs_step_trace t, back;
    struct cs_error err;
    char path[64];
    FILE *fp;
    int fd;

    make_trace(&t, 2, 3, 2, 4, 1);
    strcpy(path, "/tmp/check_tracecmp.XXXXXX");
    fd = mkstemp(path);
    fp = fdopen(fd, "w");
    ck_assert_int_eq(cs_step_trace_write(fp, &t), 0);
    fclose(fp);
    cs_error_init(&err);
    ck_assert_msg(cs_step_trace_read(path, &back, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(back.n, t.n);
    ck_assert_str_eq(back.coll, "allreduce");
    ck_assert_str_eq(back.source, "collsim-harness");
    ck_assert_int_eq(back.gpus, 2);
    ck_assert_int_eq(back.iterations, 2);
    ck_assert_int_eq(back.size_bytes, 1 << 20);
    for (long i = 0; i < t.n; i++) {
        ck_assert_int_eq(back.spans[i].rank, t.spans[i].rank);
        ck_assert_int_eq(back.spans[i].step, t.spans[i].step);
        ck_assert_double_eq_tol(back.spans[i].t0_us, t.spans[i].t0_us - 100, 1e-6);
        ck_assert_double_eq_tol(back.spans[i].t1_us, t.spans[i].t1_us - 100, 1e-6);
        ck_assert_str_eq(back.spans[i].type, "s");
    }
    cs_step_trace_free(&t);
    cs_step_trace_free(&back);
    unlink(path);
}
END_TEST

/* predict --trace's layout: a step's wait and call slices join into one span; slices of other
 * categories, waits outside a step and metadata are ignored. */
START_TEST(predicted_union)
{
    static const char text[] =
        "{\"otherData\":{\"collective\":\"all\\u0067ather\",\"protocol\":\"Simple\",\"gpus\":2,"
        "\"source\":\"h\\u00e9 \\ud83d\\ude00\\nx\","
        "\"size_bytes\":4096,\"iterations\":1,\"status\":\"ok\",\"predicted_us\":null},"
        "\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"gpu "
        "0\"}},\n"
        "{\"name\":\"launch + deploy\",\"cat\":\"launch\",\"ph\":\"X\",\"pid\":2,\"tid\":0,"
        "\"ts\":0,\"dur\":8.4},\n"
        "{\"name\":\"wait flag\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":10,"
        "\"dur\":2,\"args\":{\"iteration\":0,\"step\":1,\"ended_by\":\"gpu 0 tb 0\"}},\n"
        "{\"name\":\"r\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":12,\"dur\":1,"
        "\"args\":{\"recv_peer\":0,\"bytes\":64,\"iteration\":0,\"step\":1,\"call\":0,\"chunks\":1}"
        "},\n"
        "{\"name\":\"r\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":13,\"dur\":2.5,"
        "\"args\":{\"iteration\":0,\"step\":1,\"call\":1}},\n"
        "{\"name\":\"s\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":9,\"dur\":1,"
        "\"args\":{\"iteration\":0,\"step\":0}},\n"
        "{\"name\":\"wait data\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":20,"
        "\"dur\":1,\"args\":{\"iteration\":0,\"step\":-1}},\n"
        "{\"name\":\"unit\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":4294967296,\"pid\":0,\"tid\":0,"
        "\"ts\":9.5},\n"
        "{\"name\":\"link x\",\"ph\":\"C\",\"pid\":2,\"tid\":0,\"ts\":0,\"args\":{\"utilisation\":"
        "1e-3}}\n]}\n";
    struct cs_step_trace t;
    struct cs_error err;
    char path[64];

    write_tmp(path, text);
    cs_error_init(&err);
    ck_assert_msg(cs_step_trace_read(path, &t, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(t.n, 2);
    ck_assert_str_eq(t.coll, "allgather");
    ck_assert_str_eq(t.source, "h\xc3\xa9 \xf0\x9f\x98\x80?x"); /* \u escapes as UTF-8 */
    /* rank 0 step 0 at 9 .. 10; rank 1 step 1 from its wait at 10 to its last call's end 15.5 */
    ck_assert_int_eq(t.spans[0].rank, 0);
    ck_assert_double_eq_tol(t.spans[0].t0_us, 0, 1e-12);
    ck_assert_double_eq_tol(t.spans[0].t1_us, 1, 1e-12);
    ck_assert_int_eq(t.spans[1].rank, 1);
    ck_assert_int_eq(t.spans[1].step, 1);
    ck_assert_double_eq_tol(t.spans[1].t0_us, 1, 1e-12);
    ck_assert_double_eq_tol(t.spans[1].t1_us, 6.5, 1e-12);
    ck_assert_str_eq(t.spans[1].type, "r");
    cs_step_trace_free(&t);
    unlink(path);
}
END_TEST

/* Measured steps 25% longer than predicted: every matched step differs by exactly a fifth of its
 * measured time; spans missing on either side are counted. */
START_TEST(compare_scaled)
{
    struct cs_step_trace meas, pred;
    struct cs_trace_cmp c;

    make_trace(&meas, 2, 2, 3, 3, 1.25);
    make_trace(&pred, 2, 2, 3, 3, 1);
    /* one measured step lost, one predicted rank-2 step extra */
    meas.spans[meas.n - 1].step = 99;
    {
        struct cs_step_span extra = {2, 0, 0, 0, 0, 1, "s"};

        ck_assert_int_eq(cs_step_trace_add(&pred, &extra), 0);
    }
    ck_assert_int_eq(cs_trace_compare(&meas, &pred, &c), 0);
    ck_assert_int_eq(c.matched, 2 * 2 * 3 * 3 - 1);
    ck_assert_int_eq(c.only_a, 1);
    ck_assert_int_eq(c.only_b, 2);
    ck_assert_double_eq_tol(c.med_rel, 0.2, 1e-12);
    ck_assert_double_eq_tol(c.max_rel, 0.2, 1e-12);
    /* the largest step: rank 1, step 2: 4 us predicted, 5 measured */
    ck_assert_double_eq_tol(c.max_abs_us, 1, 1e-12);
    ck_assert_double_eq_tol(c.rows[0].b_dur_us - c.rows[0].a_dur_us, -1, 1e-12);
    ck_assert_double_eq_tol(c.b_busy_us / c.a_busy_us, 0.8, 1e-12);
    cs_trace_cmp_free(&c);
    cs_step_trace_free(&meas);
    cs_step_trace_free(&pred);
}
END_TEST

/* Bad traces: CS_ERR_INVALID with the file and the line of the problem. */
START_TEST(bad_traces)
{
    static const struct {
        const char *text, *msg;
        int line;
    } cases[] = {
        {"{\"traceEvents\":[\n{\"name\":\"s\",\"cat\":\"step\",\"ph\":\"X\"\n", "expected", 3},
        {"{\"traceEvents\":[\n{\"cat\":\"step\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1}]}",
         "lacks pid, tid, ts, dur", 2},
        {"{\"traceEvents\":[]}", "no step slice", 0},
        {"{\"traceEvents\":[\n{\"cat\":\"step\",\"ph\":\"X\",\"pid\":-1,\"tid\":0,\"ts\":1,"
         "\"dur\":1,\"args\":{\"iteration\":0,\"step\":0}}]}",
         "out of range", 2},
        {"{\"traceEvents\":[]} x", "trailing content", 1},
        {"[1,2]", "expected an object", 1},
        {"{\"a\":\"\\q\"}", "bad escape", 1},
        {"{\"a\":\"\\udc00\"}", "bad \\u escape", 1},  /* a low surrogate alone */
        {"{\"a\":\"\\ud83dx\"}", "bad \\u escape", 1}, /* a high one without its pair */
        {"{\"a\":\"\\u12g4\"}", "bad \\u escape", 1},
        {"{\"traceEvents\":[{\"ts\":1e999}]}", "expected a number", 1},
    };
    struct cs_step_trace t;
    struct cs_error err;
    char path[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        write_tmp(path, cases[i].text);
        cs_error_init(&err);
        ck_assert_int_eq(cs_step_trace_read(path, &t, &err), CS_ERR_INVALID);
        ck_assert_msg(strstr(err.msg, cases[i].msg) != NULL, "case %zu: %s", i, err.msg);
        ck_assert_int_eq(err.line, cases[i].line);
        ck_assert_str_eq(err.file, path);
        unlink(path);
    }
    /* deep nesting stops at the depth limit, not the stack */
    {
        char deep[400] = "{\"x\":";

        for (int k = 0; k < 100; k++)
            strcat(deep, "[");
        write_tmp(path, deep);
        cs_error_init(&err);
        ck_assert_int_eq(cs_step_trace_read(path, &t, &err), CS_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(err.msg, "nested too deeply"));
        unlink(path);
    }
    cs_error_init(&err);
    ck_assert_int_eq(cs_step_trace_read("/nonexistent/trace.json", &t, &err), CS_ERR_IO);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {round_trip, 1}, {predicted_union, 1}, {compare_scaled, 1}, {bad_traces, 1}, {NULL, 0},
    };

    return test_run("tracecmp", 0, tests, NULL);
}
