/* cmd_tracediff.c: `collsim tracediff`: a measured trace (the harness's) against a predicted one
 * (predict --trace), step by step. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "fdio.h"
#include "tracecmp.h"

const char cmd_tracediff_usage[] =
    "usage: collsim tracediff MEASURED.json PREDICTED.json [--top N] [--csv FILE]\n"
    "\n"
    "Lay a measured trace beside a predicted one, step by step. MEASURED is what the\n"
    "calibration harness writes with per-step timestamps (collsim-harness --trace-size: a\n"
    "slice per threadblock, loop iteration and step, from its dependency wait to its last call,\n"
    "%globaltimer); PREDICTED is `collsim predict ... --trace FILE` of the same schedule and\n"
    "size, on a platform of the measured machine (for the harness's virtual ranks: `collsim\n"
    "platform virtual --gpu G --ranks N`). A predicted step is the union of its call and wait\n"
    "slices. Each trace's clock starts at its first step, so the two compare whatever their\n"
    "origins. Steps are matched by (rank, threadblock, iteration, step).\n"
    "Prints the steps matched and unmatched, each trace's span and busy time, the median and\n"
    "largest per-step |predicted - measured| (absolute and relative), then the N steps that\n"
    "differ most (--top, default 10; 0 for none).\n"
    "  --csv FILE   every matched step: rank,tb,iteration,step,type,measured_start_us,\n"
    "               measured_us,predicted_start_us,predicted_us,diff_us (- for stdout)\n"
    "Exit 0; 2 when a trace cannot be read (FILE:LINE) or holds no step, or when the two are\n"
    "of different runs: another collective, GPU count or size (otherData, where both say), or\n"
    "a matched step whose type differs (another schedule).\n";

/* Whether a and b are traces of one run, where both say (otherData): its collective, GPUs and
 * size. 0, or CS_EXIT_USAGE after saying how they differ. */
static int same_run(const struct cs_step_trace *a, const struct cs_step_trace *b,
                    const char *a_path, const char *b_path)
{
    const char *what = NULL;
    char va[64] = "", vb[64] = "";

    if (a->coll[0] && b->coll[0] && strcmp(a->coll, b->coll) != 0) {
        what = "collective";
        snprintf(va, sizeof(va), "%s", a->coll);
        snprintf(vb, sizeof(vb), "%s", b->coll);
    } else if (a->gpus > 0 && b->gpus > 0 && a->gpus != b->gpus) {
        what = "gpus";
        snprintf(va, sizeof(va), "%d", a->gpus);
        snprintf(vb, sizeof(vb), "%d", b->gpus);
    } else if (a->size_bytes > 0 && b->size_bytes > 0 && a->size_bytes != b->size_bytes) {
        what = "size_bytes";
        snprintf(va, sizeof(va), "%lld", a->size_bytes);
        snprintf(vb, sizeof(vb), "%lld", b->size_bytes);
    }
    if (what == NULL)
        return 0;
    fprintf(stderr, "collsim: %s and %s are traces of two runs: %s %s and %s (otherData)\n", a_path,
            b_path, what, va, vb);
    return CS_EXIT_USAGE;
}

/* Read both traces, compare, print; 0 or an exit status. */
static int run(const char *a_path, const char *b_path, int top, const char *csv)
{
    struct cs_step_trace a, b;
    struct cs_trace_cmp c;
    struct cs_error err;
    struct cs_outfile out;
    int rc = CS_EXIT_USAGE;

    cs_error_init(&err);
    if (cs_step_trace_read(a_path, &a, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if (cs_step_trace_read(b_path, &b, &err) != 0) {
        cmd_print_error(&err);
        cs_step_trace_free(&a);
        return CS_EXIT_USAGE;
    }
    if (same_run(&a, &b, a_path, b_path) != 0) {
        ;
    } else if (cs_trace_compare(&a, &b, &c) != 0) {
        fprintf(stderr, "collsim: out of memory\n");
    } else if (c.type_diff > 0) {
        fprintf(stderr,
                "collsim: %s and %s are traces of two schedules: %ld matched steps differ in "
                "type, the first rank %d tb %d iteration %d step %d (%s, then %s)\n",
                a_path, b_path, c.type_diff, c.first_diff.rank, c.first_diff.tb, c.first_diff.iter,
                c.first_diff.step, c.first_diff.type, c.first_diff_b);
        cs_trace_cmp_free(&c);
    } else {
        cs_trace_cmp_print(stdout, &c, a_path, b_path, top);
        rc = CS_EXIT_OK;
        if (csv != NULL && cs_outfile_open(&out, csv, &err) == 0) {
            cs_trace_cmp_csv(out.fp, &c);
            if (cs_outfile_close(&out, &err) != 0)
                rc = CS_EXIT_USAGE;
        } else if (csv != NULL) {
            rc = CS_EXIT_USAGE;
        }
        if (rc != CS_EXIT_OK)
            cmd_print_error(&err);
        cs_trace_cmp_free(&c);
    }
    cs_step_trace_free(&a);
    cs_step_trace_free(&b);
    return rc;
}

int cmd_tracediff(int argc, char **argv)
{
    const char *csv = NULL;
    int c, started = 0, top = 10;
    struct cmd_opts t;

    cmd_opts_init(&t, "top=t: csv=c:");
    while ((c = cmd_getopt(argc, argv, "", t.opt, &started)) != -1) {
        if (c == 'c')
            csv = optarg;
        else if (c != 't' ||
                 cmd_opt_int("--top", optarg, 0, 1000000000, &top, "a number from 0 to 1e9") != 0)
            return CS_EXIT_USAGE;
    }
    if (argc - optind != 2)
        return cmd_usage_error("tracediff takes two trace files; see 'collsim help tracediff'");
    return run(argv[optind], argv[optind + 1], top, csv);
}
