/* cmd_predict.c: `collsim predict`: completion time of a schedule per buffer size, like nccl-tests.
 *
 * Sizes that are not a multiple of nchunksperloop x the type size are rounded up to the next
 * multiple (the executor would refuse them; the rounded size is what is simulated and printed),
 * and sizes that round to the same value are simulated once. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "plan.h"
#include "platform.h"
#include "replay.h"
#include "stats.h"
#include "timeline.h"
#include "trace.h"
#if defined(__has_include)
#if __has_include("gen.h")
#include "gen.h"
#define HAVE_GEN 1
#endif
#endif

const char cmd_predict_usage[] =
    "usage: collsim predict SCHEDULE.xml|--gen SPEC --platform FILE [--protocol LL|LL128|Simple]\n"
    "                       [-b MIN] [-e MAX] [-f FACTOR] [-d float|half|bfloat16|double]\n"
    "                       [--format table|csv|json] [--set KEY=VALUE ...] [--verbose]\n"
    "                       [--trace FILE.json] [--stats] [--max-events N]\n"
    "\n"
    "Replay the schedule on the platform (SimGrid) for buffer sizes MIN, MIN*FACTOR, ... up to\n"
    "MAX (bytes of the whole buffer as nccl-tests prints them; suffixes K, M, G; defaults 1K,\n"
    "1G, 2) and print the predicted time, algbw and busbw (nccl-tests factors) and a status:\n"
    "ok, or deadlock when the 8-slot FIFO credits or the flags never let it finish; then the\n"
    "first deadlock's wait-for report. Sizes are rounded up to a multiple of nchunksperloop x\n"
    "the type size. --protocol overrides the schedule's; --set overrides platform parameters.\n"
    "CSV header: size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status.\n"
    "--trace FILE.json writes a Chrome/Perfetto trace (open it in ui.perfetto.dev or\n"
    "chrome://tracing) of the largest size: a process per GPU, a track per threadblock, a\n"
    "slice per primitive call with its waits, flow arrows from sends to receives, link\n"
    "utilisation counters; microseconds of simulated time. --stats prints, for the largest size,\n"
    "bytes and utilisation per link, busy and waiting time per threadblock, and the critical\n"
    "path (after the table; on stderr with --format csv or json). Both record at most\n"
    "--max-events events (default 1000000) and fail with exit 2 beyond: trace one size with\n"
    "-b S -e S.\n"
    "Exit status: 0 all sizes finish, 1 some size deadlocks, 2 bad input (including a platform\n"
    "with fewer GPUs than the schedule).\n";

enum fmt { FMT_TABLE = 1, FMT_CSV, FMT_JSON };

/* "8", "128M", "1G": bytes with binary K, M, G suffixes as nccl-tests reads them. */
static int parse_size(const char *s, long long *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || v < 0 || errno)
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        v *= 1024LL, end++;
        break;
    case 'M':
        v *= 1024LL * 1024, end++;
        break;
    case 'G':
        v *= 1024LL * 1024 * 1024, end++;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || v <= 0 || v > (1LL << 40))
        return -1;
    *out = v;
    return 0;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if (*s == '\n')
            printf("\\n");
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

struct row {
    long long size;
    struct cs_replay_result res;
};

int cmd_predict(int argc, char **argv)
{
    const char *sched_path = NULL, *plat_path = NULL, *gen_spec = NULL, *dtype = "float";
    long long minb = 1024, maxb = 1024LL * 1024 * 1024, factor = 2;
    enum cs_proto proto = 0;
    enum fmt fmt = FMT_TABLE;
    struct cs_replay_opts opts = {0};
    struct cs_sched *sched = NULL;
    struct cs_platform *plat = NULL;
    struct cs_error err;
    struct row *rows = NULL;
    int nrows = 0, type_bytes, rc = CS_EXIT_USAGE, ndead = 0, progress;
    char *sets[64];
    int nsets = 0, want_stats = 0;
    const char *trace_path = NULL;
    long long max_events = CS_TL_DEFAULT_MAX_EVENTS;
    struct cs_timeline tl;
    struct cs_plan *tplan = NULL; /* the plan of the recorded (largest) size */

    cs_error_init(&err);
    cs_timeline_init(&tl, max_events);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            opts.verbose = 1;
            continue;
        }
        if (strcmp(a, "--stats") == 0) {
            want_stats = 1;
            continue;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (sched_path != NULL)
                return cmd_usage_error("predict takes one schedule; '%s' is extra", a);
            sched_path = a;
            continue;
        }
        if (v == NULL)
            return cmd_usage_error("%s needs a value; see 'collsim help predict'", a);
        i++;
        if (strcmp(a, "--platform") == 0 || strcmp(a, "-p") == 0) {
            plat_path = v;
        } else if (strcmp(a, "--gen") == 0) {
            gen_spec = v;
        } else if (strcmp(a, "--protocol") == 0) {
            proto = cs_proto_parse(v);
            if (proto == 0)
                return cmd_usage_error("--protocol takes LL, LL128 or Simple, not '%s'", v);
        } else if (strcmp(a, "-b") == 0 || strcmp(a, "--minbytes") == 0) {
            if (parse_size(v, &minb) != 0)
                return cmd_usage_error("%s: bad size '%s' (e.g. 8, 64K, 128M, 1G)", a, v);
        } else if (strcmp(a, "-e") == 0 || strcmp(a, "--maxbytes") == 0) {
            if (parse_size(v, &maxb) != 0)
                return cmd_usage_error("%s: bad size '%s' (e.g. 8, 64K, 128M, 1G)", a, v);
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--stepfactor") == 0) {
            char *end;

            factor = strtoll(v, &end, 10);
            if (end == v || *end || factor < 2 || factor > 1024)
                return cmd_usage_error("-f takes an integer factor from 2 to 1024, not '%s'", v);
        } else if (strcmp(a, "-d") == 0 || strcmp(a, "--datatype") == 0) {
            dtype = v;
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(v, "table") == 0)
                fmt = FMT_TABLE;
            else if (strcmp(v, "csv") == 0)
                fmt = FMT_CSV;
            else if (strcmp(v, "json") == 0)
                fmt = FMT_JSON;
            else
                return cmd_usage_error("--format takes table, csv or json, not '%s'", v);
        } else if (strcmp(a, "--trace") == 0) {
            trace_path = v;
        } else if (strcmp(a, "--max-events") == 0) {
            char *end;

            errno = 0;
            max_events = strtoll(v, &end, 10);
            if (end == v || *end || errno || max_events < 1 || max_events > 1000000000LL)
                return cmd_usage_error("--max-events takes a count from 1 to 1e9, not '%s'", v);
        } else if (strcmp(a, "--set") == 0) {
            if (nsets == 64)
                return cmd_usage_error("too many --set options");
            sets[nsets++] = (char *)v;
        } else {
            return cmd_usage_error("unknown option '%s'; see 'collsim help predict'", a);
        }
    }
    type_bytes = cs_dtype_bytes(dtype);
    if (type_bytes == 0 || (strcmp(dtype, "float") && strcmp(dtype, "half") &&
                            strcmp(dtype, "bfloat16") && strcmp(dtype, "double")))
        return cmd_usage_error("-d takes float, half, bfloat16 or double, not '%s'", dtype);
    if ((sched_path == NULL) == (gen_spec == NULL))
        return cmd_usage_error("predict takes a SCHEDULE.xml or --gen SPEC (one of them)");
    if (plat_path == NULL)
        return cmd_usage_error("predict needs --platform FILE (see platforms/ or 'collsim "
                               "platform')");
    if (minb > maxb)
        return cmd_usage_error("-b %lld is larger than -e %lld", minb, maxb);
    if (gen_spec != NULL) {
#ifdef HAVE_GEN
        if (cs_gen_from_spec(gen_spec, &sched, &err) != 0) {
            cmd_print_error(&err);
            return CS_EXIT_USAGE;
        }
#else
        return cmd_usage_error("--gen: this collsim was built without the schedule generators; "
                               "write the schedule to a file and pass it instead");
#endif
    } else {
        sched = cmd_load_sched(sched_path);
        if (sched == NULL)
            return CS_EXIT_USAGE;
    }
    if (cs_platform_read(plat_path, &plat, &err) != 0) {
        cmd_print_error(&err);
        goto out;
    }
    for (int k = 0; k < nsets; k++) {
        char kv[256], *eq;

        snprintf(kv, sizeof(kv), "%s", sets[k]);
        eq = strchr(kv, '=');
        if (eq == NULL) {
            rc = cmd_usage_error("--set takes KEY=VALUE, not '%s'", sets[k]);
            goto out;
        }
        *eq = '\0';
        if (cs_params_set(&plat->params, kv, eq + 1, &err) != 0) {
            cmd_print_error(&err);
            goto out;
        }
    }
    if (sched->ngpus > plat->ngpus) {
        rc = cmd_usage_error("%s: the schedule needs %d GPUs but the platform has %d", plat_path,
                             sched->ngpus, plat->ngpus);
        goto out;
    }
    if (proto == 0)
        proto = sched->proto;

    /* The sizes, nccl-tests style, rounded to what the executor accepts. */
    {
        int cap = 0;

        for (long long s = minb; s <= maxb; s = s * factor) {
            long long r = cs_plan_round_size(sched, s, type_bytes);

            if (r != s && nrows == 0 && fmt == FMT_TABLE)
                fprintf(stderr,
                        "collsim: sizes are rounded up to multiples of nchunksperloop (%d) x %d "
                        "bytes\n",
                        sched->nchunksperloop, type_bytes);
            if (nrows > 0 && rows[nrows - 1].size == r)
                continue;
            if (nrows == cap) {
                struct row *nr;

                cap = cap ? 2 * cap : 32;
                nr = realloc(rows, (size_t)cap * sizeof(*rows));
                if (nr == NULL) {
                    fprintf(stderr, "collsim: out of memory\n");
                    goto out;
                }
                rows = nr;
            }
            memset(&rows[nrows], 0, sizeof(rows[nrows]));
            rows[nrows++].size = r;
            if (s > maxb / factor)
                break;
        }
    }
    progress = isatty(2) && !opts.verbose;
    cs_timeline_init(&tl, max_events);
    for (int k = 0; k < nrows; k++) {
        struct cs_plan *plan = NULL;

        /* --trace and --stats record the largest size only. */
        opts.timeline = (trace_path != NULL || want_stats) && k == nrows - 1 ? &tl : NULL;
        if (progress)
            fprintf(stderr, "\rcollsim: predicting %d/%d (%lld bytes)...", k + 1, nrows,
                    rows[k].size);
        if (cs_plan_build(sched, rows[k].size, type_bytes, proto, &plan, &err) != 0 ||
            cs_replay_run(plan, plat, &opts, &rows[k].res, &err) != 0) {
            if (progress)
                fputc('\n', stderr);
            cmd_print_error(&err);
            cs_plan_free(plan);
            nrows = k;
            goto out;
        }
        if (opts.verbose)
            fprintf(stderr, "collsim: %lld bytes: %d iterations, maxAllowedCount %d, %lld calls, "
                    "%lld transfers, %.3f s wall, %ld KiB peak RSS, %s\n",
                    rows[k].size, plan->niter, plan->max_allowed, rows[k].res.ncalls,
                    rows[k].res.ntransfers, rows[k].res.wall_s, rows[k].res.maxrss_kb,
                    rows[k].res.status == CS_REPLAY_OK ? "ok" : "deadlock");
        ndead += rows[k].res.status == CS_REPLAY_DEADLOCK;
        if (opts.timeline != NULL)
            tplan = plan;
        else
            cs_plan_free(plan);
    }
    if (progress)
        fprintf(stderr, "\r%60s\r", "");

    {
        const char *src = gen_spec ? gen_spec : sched_path;
        double bf = cs_busbw_factor(sched->coll, sched->ngpus);

        if (fmt == FMT_TABLE) {
            printf("# collsim predict: %s on %s, %s, %d GPUs, %s\n", src, plat_path,
                   cs_proto_name(proto), sched->ngpus, cs_coll_name(sched->coll));
            printf("#%11s %12s %8s %10s %11s %11s  %s\n", "size", "count", "type", "time(us)",
                   "algbw(GB/s)", "busbw(GB/s)", "status");
        } else if (fmt == FMT_CSV) {
            printf("size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status\n");
        } else {
            printf("{\"schedule\": ");
            json_str(src);
            printf(", \"platform\": ");
            json_str(plat_path);
            printf(", \"protocol\": \"%s\", \"collective\": \"%s\", \"gpus\": %d, \"results\": [",
                   cs_proto_name(proto), cs_coll_name(sched->coll), sched->ngpus);
        }
        for (int k = 0; k < nrows; k++) {
            const struct cs_replay_result *r = &rows[k].res;
            long long count = rows[k].size / type_bytes;
            int ok = r->status == CS_REPLAY_OK;
            double us = r->time_s * 1e6, algbw = ok ? rows[k].size / r->time_s / 1e9 : 0;

            if (fmt == FMT_TABLE) {
                if (ok)
                    printf(" %11lld %12lld %8s %10.2f %11.2f %11.2f  ok\n", rows[k].size, count,
                           dtype, us, algbw, algbw * bf);
                else
                    printf(" %11lld %12lld %8s %10s %11s %11s  deadlock\n", rows[k].size, count,
                           dtype, "-", "-", "-");
            } else if (fmt == FMT_CSV) {
                if (ok)
                    printf("%lld,%lld,%s,%.6f,%.6f,%.6f,ok\n", rows[k].size, count, dtype, us,
                           algbw, algbw * bf);
                else
                    printf("%lld,%lld,%s,,,,deadlock\n", rows[k].size, count, dtype);
            } else {
                printf("%s\n  {\"size_bytes\": %lld, \"count\": %lld, \"type\": \"%s\", ",
                       k ? "," : "", rows[k].size, count, dtype);
                if (ok)
                    printf("\"time_us\": %.6f, \"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f, "
                           "\"status\": \"ok\"}",
                           us, algbw, algbw * bf);
                else {
                    printf("\"time_us\": null, \"algbw_GBps\": null, \"busbw_GBps\": null, "
                           "\"status\": \"deadlock\", \"report\": ");
                    json_str(r->report ? r->report : "");
                    printf("}");
                }
            }
        }
        if (fmt == FMT_JSON)
            printf("\n]}\n");
        /* The first deadlock's report: the others are the same schedule at larger sizes. */
        for (int k = 0; k < nrows && fmt != FMT_JSON; k++)
            if (rows[k].res.status == CS_REPLAY_DEADLOCK) {
                FILE *fp = fmt == FMT_TABLE ? stdout : stderr;
                const char *p = rows[k].res.report ? rows[k].res.report : "";

                fprintf(fp, "# at %lld bytes:\n", rows[k].size);
                while (*p) {
                    const char *nl = strchr(p, '\n');
                    int n = nl ? (int)(nl - p) : (int)strlen(p);

                    fprintf(fp, "#   %.*s\n", n, p);
                    p += n + (nl != NULL);
                }
                break;
            }
    }
    rc = ndead ? CS_EXIT_NEGATIVE : CS_EXIT_OK;
    if (tplan != NULL && tl.truncated) {
        fprintf(stderr,
                "collsim: --trace/--stats: the replay at %lld bytes has more than %lld events; "
                "choose a smaller size with -b/-e or raise --max-events\n",
                rows[nrows - 1].size, max_events);
        rc = CS_EXIT_USAGE;
    } else if (tplan != NULL) {
        if (trace_path != NULL) {
            FILE *fp = fopen(trace_path, "w");
            int wrc = fp ? cs_trace_write(fp, tplan, &tl) : CS_ERR_IO;

            if (fp != NULL && fclose(fp) != 0 && wrc == 0)
                wrc = CS_ERR_IO;
            if (wrc != 0) {
                fprintf(stderr, "collsim: %s: cannot write the trace (%s)\n", trace_path,
                        fp ? cs_error_name(wrc) : strerror(errno));
                rc = CS_EXIT_USAGE;
            } else if (fmt == FMT_TABLE) {
                printf("# trace of %lld bytes written to %s (%lld events)\n", rows[nrows - 1].size,
                       trace_path, tl.nevents);
            }
        }
        if (want_stats) {
            /* After the table on stdout; on stderr when stdout is CSV or JSON. */
            FILE *fp = fmt == FMT_TABLE ? stdout : stderr;

            fprintf(fp, "\n# statistics at %lld bytes\n", rows[nrows - 1].size);
            if (cs_stats_write(fp, tplan, &tl, 40) != 0) {
                fprintf(stderr, "collsim: --stats: cannot write the statistics\n");
                rc = CS_EXIT_USAGE;
            }
        }
    }
out:
    cs_plan_free(tplan);
    cs_timeline_cleanup(&tl);
    for (int k = 0; k < nrows; k++)
        cs_replay_result_cleanup(&rows[k].res);
    free(rows);
    cs_platform_free(plat);
    cs_sched_free(sched);
    return rc;
}
