/* plot.h: gnuplot scripts for prediction and sweep tables: time and bus bandwidth against size, one
 * series per variant, or a map of the fastest variant per (size, parameter value). */
#ifndef CS_PLOT_H
#define CS_PLOT_H

#include <stdio.h>

#include "error.h"
#include "table.h"

/* What to draw. */
struct cs_plot_opts {
    const char *metric;       /* "time", "busbw" or "both" (lines only; NULL: both) */
    const char *best;         /* an axis column: draw the fastest-variant map over it; or NULL */
    const char *const *where; /* "KEY=VALUE" filters: keep rows whose column KEY is VALUE */
    int nwhere;
    int busbw_log;        /* bus bandwidth on a logarithmic axis (else linear, from 0) */
    const char *title;    /* the figure's title; NULL: what the rows share (schedule, platform),
                             else the tables' names */
    const char *out;      /* the image gnuplot writes: SVG or PDF when it ends in .svg or .pdf,
                             else PNG */
    const char *write_to; /* where gnuplot writes it when not out itself (a temporary file that
                             replaces out once complete); NULL: out */
};

/* The points to draw, grouped into variants, and the options. Opaque. */
struct cs_plot;

/* Read a prediction or sweep CSV through csv.h, `#` lines skipped; "# KEY: VALUE" lines before
 * the header (KEY schedule, platform, protocol or gpus; or predict's "# collsim predict: S on P,
 * PROTO, N GPUs, TYPE") become columns of one value when the header lacks them. 0 and a new
 * table in *out (cs_table_free), or csv.h's errors. */
int cs_plot_read(const char *path, struct cs_table **out, struct cs_error *err);

/* Collect the rows of ntabs prediction or sweep tables (names[i] names tabs[i] in messages and
 * legends) that pass o->where, naming each variant after the axis columns that vary (several
 * plain prediction tables: after their names). Checks the columns, sizes, statuses, times and
 * bandwidths, and that a map (o->best) does not compare different GPU counts.
 * 0 and a new plot in *out (free with cs_plot_free), or CS_ERR_INVALID, CS_ERR_PARSE or
 * CS_ERR_NOMEM with a message in err. The plot keeps pointers to o's strings and to names. */
int cs_plot_new(const struct cs_table *const *tabs, const char *const *names, int ntabs,
                const struct cs_plot_opts *o, struct cs_plot **out, struct cs_error *err);
void cs_plot_free(struct cs_plot *p);

/* Write the gnuplot script, data inline. 0, or CS_ERR_IO when the stream fails. */
int cs_plot_write(const struct cs_plot *p, FILE *fp);

#endif
