/* progress.c: progress lines with an ETA, on a terminal or in a log, timed by a given clock. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"
#include "progress.h"

static double monotonic_s(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cs_progress_init(struct cs_progress *p, FILE *fp, const char *label, const char *unit,
                      long total, int tty, double interval_s, cs_progress_clock_fn clock,
                      void *clock_ctx)
{
    memset(p, 0, sizeof(*p));
    p->label = label;
    p->unit = unit;
    p->total = total;
    p->tty = tty;
    p->interval_s = tty ? CS_PROGRESS_TTY_S : interval_s;
    /* a log with no interval gets no lines at all */
    p->fp = tty || interval_s > 0 ? fp : NULL;
    p->clock = clock != NULL ? clock : monotonic_s;
    p->clock_ctx = clock_ctx;
    p->t0_s = p->clock(clock_ctx);
    p->last_s = -1;
}

int cs_progress_start(struct cs_progress *p, const char *label, const char *unit, long total,
                      int quiet, struct cs_error *err)
{
    const char *env = getenv("COLLSIM_PROGRESS_INTERVAL");
    double interval = CS_PROGRESS_INTERVAL_S;
    int rc = 0;

    if (env != NULL && cs_parse_double(env, 0, 1e9, &interval) != 0) {
        rc = cs_error_fail(err, CS_ERR_PARSE, NULL, 0,
                           "COLLSIM_PROGRESS_INTERVAL: '%s' is not a number of seconds >= 0", env);
        quiet = 1;
    }
    cs_progress_init(p, quiet ? NULL : stderr, label, unit, total, isatty(STDERR_FILENO), interval,
                     NULL, NULL);
    return rc;
}

void cs_progress_skip(struct cs_progress *p, long n)
{
    p->skipped += n;
    p->done += n;
}

void cs_progress_duration(double s, char *buf, size_t len)
{
    long t = s > 0 ? (long)(s + 0.5) : 0;

    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void cs_progress_format(const struct cs_progress *p, double now_s, const char *extra, char *buf,
                        size_t len)
{
    char el[32], eta[32] = "?";
    double e = now_s - p->t0_s;
    long ran = p->done - p->skipped;

    cs_progress_duration(e, el, sizeof(el));
    /* the time per item of this run, times the items left */
    if (ran > 0)
        cs_progress_duration(e / (double)ran * (double)(p->total - p->done), eta, sizeof(eta));
    snprintf(buf, len, "%s: %ld/%ld %s (%ld%%), elapsed %s, ETA %s%s%s", p->label, p->done,
             p->total, p->unit, p->total > 0 ? p->done * 100 / p->total : 100, el, eta,
             extra != NULL ? ", " : "", extra != NULL ? extra : "");
}

int cs_progress_update(struct cs_progress *p, long done, const char *extra)
{
    char line[512];
    double now;

    p->done = done;
    if (p->fp == NULL)
        return 0;
    now = p->clock(p->clock_ctx);
    if (now - (p->last_s >= 0 ? p->last_s : p->t0_s) < p->interval_s && !(p->tty && p->last_s < 0))
        return 0;
    p->last_s = now;
    cs_progress_format(p, now, extra, line, sizeof(line));
    if (p->tty) {
        fprintf(p->fp, "\r%s\033[K", line);
        p->shown = 1;
    } else {
        fprintf(p->fp, "%s\n", line);
    }
    fflush(p->fp);
    return 1;
}

void cs_progress_clear(struct cs_progress *p)
{
    if (p->fp != NULL && p->tty && p->shown) {
        fputs("\r\033[K", p->fp);
        fflush(p->fp);
        p->shown = 0;
        p->last_s = -1; /* redraw at the next update */
    }
}

void cs_progress_end(struct cs_progress *p)
{
    if (p->fp != NULL && p->tty && p->shown) {
        fputc('\n', p->fp);
        fflush(p->fp);
        p->shown = 0;
    }
}
