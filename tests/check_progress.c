/* check_progress.c: progress lines and their ETA, timed by a fake clock. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "runner.h"

/* A clock the test moves by hand. */
static double fake_now;

static double fake_clock(void *ctx)
{
    (void)ctx;
    return fake_now;
}

/* What p wrote to its stream so far. */
struct capture {
    char *text;
    size_t len;
    FILE *fp;
};

static void capture_open(struct capture *c)
{
    c->text = NULL;
    c->fp = open_memstream(&c->text, &c->len);
    ck_assert_ptr_nonnull(c->fp);
}

static const char *capture_text(struct capture *c)
{
    fflush(c->fp);
    return c->text;
}

static void capture_close(struct capture *c)
{
    fclose(c->fp);
    free(c->text);
}

START_TEST(duration)
{
    char b[32];

    cs_progress_duration(0, b, sizeof(b));
    ck_assert_str_eq(b, "0:00");
    cs_progress_duration(59.6, b, sizeof(b));
    ck_assert_str_eq(b, "1:00");
    cs_progress_duration(3725, b, sizeof(b));
    ck_assert_str_eq(b, "1:02:05");
    cs_progress_duration(-3, b, sizeof(b));
    ck_assert_str_eq(b, "0:00");
}
END_TEST

/* The ETA is the time per item of this run times the items left; ? before the first. */
START_TEST(format)
{
    struct cs_progress p;
    char b[256];

    fake_now = 100;
    cs_progress_init(&p, NULL, "sweep", "points", 10, 0, 5, fake_clock, NULL);
    cs_progress_format(&p, 100, NULL, b, sizeof(b));
    ck_assert_str_eq(b, "sweep: 0/10 points (0%), elapsed 0:00, ETA ?");
    p.done = 4;
    cs_progress_format(&p, 140, "2 running", b, sizeof(b));
    ck_assert_str_eq(b, "sweep: 4/10 points (40%), elapsed 0:40, ETA 1:00, 2 running");
    /* 6 points done by an earlier run: only this run's 2 time the other 2 */
    cs_progress_init(&p, NULL, "sweep", "points", 10, 0, 5, fake_clock, NULL);
    cs_progress_skip(&p, 6);
    p.done = 8;
    cs_progress_format(&p, 130, NULL, b, sizeof(b));
    ck_assert_str_eq(b, "sweep: 8/10 points (80%), elapsed 0:30, ETA 0:30");
    cs_progress_init(&p, NULL, "validate", "cases", 0, 0, 5, fake_clock, NULL);
    cs_progress_format(&p, 100, NULL, b, sizeof(b));
    ck_assert_str_eq(b, "validate: 0/0 cases (100%), elapsed 0:00, ETA ?");
}
END_TEST

/* Not a terminal: a whole line once the interval has passed since the start or the last line,
 * however many items finish in between. */
START_TEST(log_lines)
{
    struct cs_progress p;
    struct capture c;

    capture_open(&c);
    fake_now = 0;
    cs_progress_init(&p, c.fp, "predict", "sizes", 100, 0, 5, fake_clock, NULL);
    for (int k = 1; k <= 100; k++) {
        fake_now = k * 0.25; /* a size every quarter second: 25 s in all */
        cs_progress_update(&p, k, NULL);
    }
    cs_progress_end(&p);
    ck_assert_str_eq(capture_text(&c), "predict: 20/100 sizes (20%), elapsed 0:05, ETA 0:20\n"
                                       "predict: 40/100 sizes (40%), elapsed 0:10, ETA 0:15\n"
                                       "predict: 60/100 sizes (60%), elapsed 0:15, ETA 0:10\n"
                                       "predict: 80/100 sizes (80%), elapsed 0:20, ETA 0:05\n"
                                       "predict: 100/100 sizes (100%), elapsed 0:25, ETA 0:00\n");
    capture_close(&c);
}
END_TEST

/* Slow items: a line at each one past the interval, none in a quick command. */
START_TEST(log_slow_and_quick)
{
    struct cs_progress p;
    struct capture c;

    capture_open(&c);
    fake_now = 0;
    cs_progress_init(&p, c.fp, "regress", "groups", 3, 0, 5, fake_clock, NULL);
    fake_now = 4.9;
    ck_assert_int_eq(cs_progress_update(&p, 1, NULL), 0);
    fake_now = 30;
    ck_assert_int_eq(cs_progress_update(&p, 2, "1 failed"), 1);
    fake_now = 31;
    ck_assert_int_eq(cs_progress_update(&p, 3, NULL), 0);
    ck_assert_str_eq(capture_text(&c),
                     "regress: 2/3 groups (66%), elapsed 0:30, ETA 0:15, 1 failed\n");
    capture_close(&c);
}
END_TEST

/* An interval of 0 in a log, or no stream (--quiet): nothing at all. */
START_TEST(off)
{
    struct cs_progress p;
    struct capture c;

    capture_open(&c);
    fake_now = 0;
    cs_progress_init(&p, c.fp, "sweep", "points", 2, 0, 0, fake_clock, NULL);
    fake_now = 100;
    ck_assert_int_eq(cs_progress_update(&p, 1, NULL), 0);
    cs_progress_init(&p, NULL, "sweep", "points", 2, 1, 5, fake_clock, NULL);
    ck_assert_int_eq(cs_progress_update(&p, 1, NULL), 0);
    cs_progress_clear(&p);
    cs_progress_end(&p);
    ck_assert_uint_eq(strlen(capture_text(&c)), 0);
    capture_close(&c);
}
END_TEST

/* A terminal: one line rewritten in place, drawn at once and refreshed each second at most;
 * cleared for other output and ended with a newline. */
START_TEST(terminal)
{
    struct cs_progress p;
    struct capture c;

    capture_open(&c);
    fake_now = 0;
    cs_progress_init(&p, c.fp, "sweep", "points", 4, 1, 60, fake_clock, NULL);
    ck_assert_int_eq(cs_progress_update(&p, 0, NULL), 1);
    fake_now = 0.5;
    ck_assert_int_eq(cs_progress_update(&p, 1, NULL), 0);
    fake_now = 1.0;
    ck_assert_int_eq(cs_progress_update(&p, 2, NULL), 1);
    cs_progress_clear(&p);
    fake_now = 1.1;
    ck_assert_int_eq(cs_progress_update(&p, 2, NULL), 1); /* redrawn after the clear */
    cs_progress_end(&p);
    cs_progress_end(&p); /* once */
    ck_assert_str_eq(capture_text(&c), "\rsweep: 0/4 points (0%), elapsed 0:00, ETA ?\033[K"
                                       "\rsweep: 2/4 points (50%), elapsed 0:01, ETA 0:01\033[K"
                                       "\r\033[K"
                                       "\rsweep: 2/4 points (50%), elapsed 0:01, ETA 0:01\033[K"
                                       "\n");
    capture_close(&c);
}
END_TEST

/* COLLSIM_PROGRESS_INTERVAL: seconds, or refused. */
START_TEST(environment)
{
    struct cs_progress p;
    struct cs_error err;

    cs_error_init(&err);
    setenv("COLLSIM_PROGRESS_INTERVAL", "2.5", 1);
    ck_assert_int_eq(cs_progress_start(&p, "x", "items", 1, 0, &err), 0);
    if (!p.tty)
        ck_assert(p.interval_s == 2.5);
    ck_assert_ptr_eq(p.fp, stderr);
    ck_assert_int_eq(cs_progress_start(&p, "x", "items", 1, 1, &err), 0);
    ck_assert_ptr_null(p.fp);
    setenv("COLLSIM_PROGRESS_INTERVAL", "soon", 1);
    ck_assert_int_eq(cs_progress_start(&p, "x", "items", 1, 0, &err), CS_ERR_PARSE);
    ck_assert_ptr_null(p.fp);
    ck_assert_str_eq(err.msg, "COLLSIM_PROGRESS_INTERVAL: 'soon' is not a number of seconds >= 0");
    unsetenv("COLLSIM_PROGRESS_INTERVAL");
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {duration, 1}, {format, 1},   {log_lines, 1},   {log_slow_and_quick, 1},
        {off, 1},      {terminal, 1}, {environment, 1}, {NULL, 0},
    };

    return test_run("progress", 0, tests, NULL);
}
