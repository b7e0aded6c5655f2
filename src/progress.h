/* progress.h: progress and an ETA on stderr for the long commands (predict, sweep, regress,
 * validate): one updating line on a terminal, else a line every few seconds. */
#ifndef CS_PROGRESS_H
#define CS_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Seconds since some fixed start, never decreasing (CLOCK_MONOTONIC unless a test fakes it). */
typedef double (*cs_progress_clock_fn)(void *ctx);

/* Seconds between lines when stderr is not a terminal, unless COLLSIM_PROGRESS_INTERVAL says. */
#define CS_PROGRESS_INTERVAL_S 10.0
/* Seconds between refreshes of the terminal line. */
#define CS_PROGRESS_TTY_S 1.0

/* The progress of one command over `total` items (points, sizes, groups, cases). */
struct cs_progress {
    FILE *fp;          /* where the lines go; NULL: off (--quiet) */
    const char *label; /* "sweep", "predict", ... */
    const char *unit;  /* "points", "sizes", ... */
    int tty;           /* one line rewritten in place ("\r"), else whole lines */
    double interval_s; /* at least this long between two lines or refreshes */
    cs_progress_clock_fn clock;
    void *clock_ctx;
    double t0_s, last_s;       /* the start, and the last line (-1: none yet) */
    long total, done, skipped; /* skipped: done before this run (a resumed sweep), not timed */
    int shown;                 /* a terminal line is on screen */
};

/* Start p over total items, printing to fp (NULL: never prints). tty: refresh one line every
 * CS_PROGRESS_TTY_S, else print a line every interval_s (<= 0: never). clock NULL: the monotonic
 * clock. */
void cs_progress_init(struct cs_progress *p, FILE *fp, const char *label, const char *unit,
                      long total, int tty, double interval_s, cs_progress_clock_fn clock,
                      void *clock_ctx);

/* cs_progress_init for a command: stderr unless quiet, tty when stderr is a terminal, the
 * interval from the COLLSIM_PROGRESS_INTERVAL environment variable (seconds; 0 turns the lines
 * off where stderr is not a terminal) or CS_PROGRESS_INTERVAL_S. 0, or CS_ERR_PARSE with err set
 * when the variable is not a number of seconds >= 0 (p is then quiet). */
int cs_progress_start(struct cs_progress *p, const char *label, const char *unit, long total,
                      int quiet, struct cs_error *err);

/* Count n items as done by an earlier run (they count as done but not towards the ETA). */
void cs_progress_skip(struct cs_progress *p, long n);

/* Write the progress text into buf: "LABEL: D/T UNIT (P%), elapsed M:SS, ETA M:SS[, EXTRA]"
 * (ETA ? until an item of this run is done). now_s on p's clock. */
void cs_progress_format(const struct cs_progress *p, double now_s, const char *extra, char *buf,
                        size_t len);

/* Record that done items are finished (0 <= done <= total) and print the progress when due: on a
 * terminal once CS_PROGRESS_TTY_S has passed since the last refresh, elsewhere once interval_s
 * has passed since the start or the last line. extra (may be NULL) ends the line. Returns 1 when
 * it printed. */
int cs_progress_update(struct cs_progress *p, long done, const char *extra);

/* Take the terminal line off the screen before other output goes to the same terminal (a no-op
 * elsewhere); the next update draws it again. */
void cs_progress_clear(struct cs_progress *p);

/* The end: end the terminal line with a newline (a no-op elsewhere). */
void cs_progress_end(struct cs_progress *p);

/* Format a duration in seconds as M:SS or H:MM:SS. */
void cs_progress_duration(double s, char *buf, size_t len);

#endif
