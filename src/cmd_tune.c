/* cmd_tune.c: `collsim tune`: from a sweep's predictions, the fastest schedule variant per size
 * range, written as a plan of MSCCL XML files with minBytes/maxBytes windows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "spawn.h"
#include "table.h"
#include "tune.h"
#include "xml.h"

const char cmd_tune_usage[] =
    "usage: collsim tune SWEEP.csv [--where KEY=VALUE]... [-o DIR] [--schedule-dir DIR]\n"
    "                    [--extend]\n"
    "\n"
    "From the predictions of a sweep (a CSV of 'collsim sweep'), pick for every size the\n"
    "fastest variant (the schedule columns: schedule or gen.*, and protocol) that does not\n"
    "deadlock, and join consecutive sizes with the same winner into size ranges. The other axis\n"
    "columns describe the platform and must hold one value: select one with --where.\n"
    "\n"
    "Prints the plan: each range's byte window, the sizes measured in it and its variant.\n"
    "  -o DIR          also write DIR/plan.txt and, per range, DIR/NN-VARIANT.xml: the schedule\n"
    "                  with minBytes/maxBytes set to the window (and outofplace when missing),\n"
    "                  numbered so that the MSCCL executor, which takes the first matching file\n"
    "                  in path order, selects them by size. Generator variants run 'collsim gen'.\n"
    "  --where K=V     keep only rows whose column K is V (repeatable)\n"
    "  --schedule-dir DIR  resolve relative 'schedule' values there (the sweep file's folder)\n"
    "  --extend        the first window starts at 0 bytes and the last has no upper limit\n"
    "                  (maxBytes 0), instead of stopping at the smallest and largest sizes\n"
    "                  measured\n";

#define MAX_WHERE 32
#define MAX_VARIANTS 4096
#define DESC_LEN 512

/* Columns that pick the schedule (the variant); the other axis columns describe the platform. */
static int is_variant_col(const char *c)
{
    return strcmp(c, "schedule") == 0 || strncmp(c, "gen.", 4) == 0 || strcmp(c, "protocol") == 0;
}

struct variant {
    long row; /* a row holding it, for its column values */
    char desc[DESC_LEN];
};

static void describe(const struct cs_table *t, long row, int ncols_axes, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (int c = 1; c < ncols_axes && n < len; c++) {
        const char *k = t->cols[c], *v = cs_table_get(t, row, c), *b;

        if (!is_variant_col(k) || strcmp(v, "-") == 0)
            continue;
        if (strcmp(k, "schedule") == 0) {
            size_t bl;

            b = strrchr(v, '/') ? strrchr(v, '/') + 1 : v;
            bl = strlen(b);
            if (bl > 4 && strcmp(b + bl - 4, ".xml") == 0)
                bl -= 4;
            n += (size_t)snprintf(buf + n, len - n, "%s%.*s", n ? " " : "", (int)bl, b);
        } else if (strcmp(k, "gen.algorithm") == 0 || strcmp(k, "protocol") == 0)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", v);
        else
            n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", k + 4, v);
    }
}

static void slug(const char *desc, char *buf, size_t len)
{
    size_t n = 0;

    for (const char *p = desc; *p && n + 1 < len; p++) {
        char c = *p;

        if (c == ' ')
            c = '-';
        else if (c == '=')
            continue;
        else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-'))
            c = '_';
        buf[n++] = c;
    }
    buf[n] = '\0';
}

/* Load (or generate) the schedule of a variant. */
static struct cs_sched *variant_sched(const struct cs_table *t, long row, int ncols_axes,
                                      const char *sched_dir, const char *tmp)
{
    int cs = cs_table_find_col(t, "schedule"), cp = cs_table_find_col(t, "protocol");
    const char *proto = cp >= 0 && cp < ncols_axes ? cs_table_get(t, row, cp) : NULL;
    struct cs_sched *s;
    char path[4096];

    if (proto != NULL && strcmp(proto, "-") == 0)
        proto = NULL;
    if (cs >= 0 && cs < ncols_axes) {
        const char *v = cs_table_get(t, row, cs);

        if (v[0] == '/')
            snprintf(path, sizeof(path), "%s", v);
        else
            snprintf(path, sizeof(path), "%s/%s", sched_dir, v);
        if ((s = cmd_load_sched(path)) == NULL)
            return NULL;
    } else {
        char *args[64], store[64][256];
        int n = 0, code;

        args[n++] = "gen";
        for (int c = 1; c < ncols_axes && n < 58; c++) {
            const char *k = t->cols[c], *v = cs_table_get(t, row, c);

            if (strncmp(k, "gen.", 4) != 0 || strcmp(v, "-") == 0)
                continue;
            if (strcmp(k, "gen.algorithm") == 0) {
                snprintf(store[n], sizeof(store[n]), "%s", v);
                args[n] = store[n];
                n++;
            } else if (strcmp(k, "gen.compat") == 0) {
                if (strcmp(v, "1") == 0)
                    args[n++] = "--msccl-tools-compat";
            } else {
                snprintf(store[n], sizeof(store[n]), "--%s", k + 4);
                args[n] = store[n];
                n++;
                snprintf(store[n], sizeof(store[n]), "%s", v);
                args[n] = store[n];
                n++;
            }
        }
        if (proto != NULL) {
            args[n++] = "--protocol";
            snprintf(store[n], sizeof(store[n]), "%s", proto);
            args[n] = store[n];
            n++;
        }
        args[n++] = "-o";
        args[n++] = (char *)tmp;
        args[n] = NULL;
        if ((code = cs_spawn_run(args, NULL, NULL)) != 0) {
            fprintf(stderr, "collsim: 'collsim gen' exited with %d\n", code);
            return NULL;
        }
        s = cmd_load_sched(tmp);
        unlink(tmp);
        if (s == NULL)
            return NULL;
    }
    if (proto != NULL)
        s->proto = cs_proto_parse(proto);
    return s;
}

static void print_plan(FILE *fp, const char *csv, const char *platform,
                       const struct cs_tune_range *r, int nr, const struct variant *v,
                       char (*files)[DESC_LEN], int extend)
{
    fprintf(fp, "# collsim tune %s: the fastest variant per size range%s%s\n", csv,
            *platform ? " on " : "", platform);
    fprintf(fp, "# min_bytes/max_bytes: the window written into each schedule (inclusive; 0 as "
                "max_bytes: no limit)\n");
    fprintf(fp, "%12s %12s  %-25s  %-40s %s\n", "min_bytes", "max_bytes", "measured sizes",
            "variant", "file");
    for (int i = 0; i < nr; i++) {
        char meas[64];
        long long lo = r[i].min_bytes, hi = r[i].max_bytes;

        if (extend && i == 0)
            lo = 0;
        if (extend && i == nr - 1)
            hi = 0;
        snprintf(meas, sizeof(meas), "%lld..%lld", r[i].first_size, r[i].last_size);
        fprintf(fp, "%12lld %12lld  %-25s  %-40s %s\n", lo, hi, meas, v[r[i].variant].desc,
                files ? files[i] : "-");
    }
}

int cmd_tune(int argc, char **argv)
{
    const char *csv = NULL, *outdir = NULL, *sched_dir = ".";
    const char *where[MAX_WHERE];
    int nwhere = 0, extend = 0, rc = CS_EXIT_USAGE, ncols_axes, c_size, c_time, c_status;
    int nvar = 0, nr = 0;
    struct cs_table *t = NULL;
    struct cs_error err;
    struct variant *var = NULL;
    struct cs_tune_obs *obs = NULL;
    struct cs_tune_range *ranges = NULL;
    long nobs = 0;
    char platform[2048] = "", (*files)[DESC_LEN] = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--where") == 0 && i + 1 < argc) {
            if (nwhere == MAX_WHERE || strchr(argv[i + 1], '=') == NULL)
                return cmd_usage_error("tune: --where takes KEY=VALUE (at most %d)", MAX_WHERE);
            where[nwhere++] = argv[++i];
        } else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
            outdir = argv[++i];
        } else if (strcmp(a, "--schedule-dir") == 0 && i + 1 < argc) {
            sched_dir = argv[++i];
        } else if (strcmp(a, "--extend") == 0) {
            extend = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cmd_usage_error("tune: unknown option or missing value '%s'; see 'collsim "
                                   "help tune'",
                                   a);
        } else if (csv == NULL) {
            csv = a;
        } else {
            return cmd_usage_error("tune: one CSV only");
        }
    }
    if (csv == NULL)
        return cmd_usage_error("tune: no sweep CSV; see 'collsim help tune'");
    cs_error_init(&err);
    if (cs_table_read(csv, &t, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    c_size = cs_table_find_col(t, "size_bytes");
    c_time = cs_table_find_col(t, "time_us");
    c_status = cs_table_find_col(t, "status");
    if (c_size < 1 || c_time < 0 || c_status < 0 || strcmp(t->cols[0], "point") != 0) {
        fprintf(stderr, "collsim: %s: not a sweep CSV (point, axis columns, then %s)\n", csv,
                CS_TABLE_PREDICT_HEADER);
        goto done;
    }
    ncols_axes = c_size;
    /* filters */
    for (int w = 0; w < nwhere; w++) {
        const char *eq = strchr(where[w], '=');
        char key[256];
        int c;

        snprintf(key, sizeof(key), "%.*s", (int)(eq - where[w]), where[w]);
        if ((c = cs_table_find_col(t, key)) < 0 || c >= ncols_axes) {
            fprintf(stderr, "collsim: --where %s: %s has no axis column '%s'\n", where[w], csv,
                    key);
            goto done;
        }
    }
    /* the rows kept, their variants, and one platform */
    if ((var = calloc(MAX_VARIANTS, sizeof(*var))) == NULL ||
        (obs = calloc((size_t)t->nrows + 1, sizeof(*obs))) == NULL)
        goto done;
    {
        long first = -1;

        for (long r = 0; r < t->nrows; r++) {
            int keep = 1, v;
            char d[DESC_LEN], *end;

            for (int w = 0; w < nwhere && keep; w++) {
                const char *eq = strchr(where[w], '=');
                char key[256];

                snprintf(key, sizeof(key), "%.*s", (int)(eq - where[w]), where[w]);
                keep = strcmp(cs_table_get(t, r, cs_table_find_col(t, key)), eq + 1) == 0;
            }
            if (!keep)
                continue;
            if (first < 0)
                first = r;
            for (int c = 1; c < ncols_axes; c++)
                if (!is_variant_col(t->cols[c]) &&
                    strcmp(cs_table_get(t, r, c), cs_table_get(t, first, c)) != 0) {
                    fprintf(stderr,
                            "collsim: %s: more than one platform ('%s' is %s on line %d, %s on "
                            "line %d); pick one with --where %s=VALUE\n",
                            csv, t->cols[c], cs_table_get(t, first, c), t->lines[first],
                            cs_table_get(t, r, c), t->lines[r], t->cols[c]);
                    goto done;
                }
            describe(t, r, ncols_axes, d, sizeof(d));
            for (v = 0; v < nvar && strcmp(var[v].desc, d) != 0; v++)
                ;
            if (v == nvar) {
                if (nvar == MAX_VARIANTS) {
                    fprintf(stderr, "collsim: %s: more than %d variants\n", csv, MAX_VARIANTS);
                    goto done;
                }
                var[nvar].row = r;
                snprintf(var[nvar].desc, sizeof(var[nvar].desc), "%s", d);
                nvar++;
            }
            obs[nobs].variant = v;
            obs[nobs].size_bytes = strtoll(cs_table_get(t, r, c_size), &end, 10);
            if (*end != '\0' || end == cs_table_get(t, r, c_size)) {
                fprintf(stderr, "collsim: %s:%d: bad size_bytes '%s'\n", csv, t->lines[r],
                        cs_table_get(t, r, c_size));
                goto done;
            }
            obs[nobs].ok = strcmp(cs_table_get(t, r, c_status), "ok") == 0;
            obs[nobs].time_us = strtod(cs_table_get(t, r, c_time), &end);
            if (obs[nobs].ok && (*end != '\0' || end == cs_table_get(t, r, c_time))) {
                fprintf(stderr, "collsim: %s:%d: bad time_us '%s'\n", csv, t->lines[r],
                        cs_table_get(t, r, c_time));
                goto done;
            }
            nobs++;
        }
        if (first < 0) {
            fprintf(stderr, "collsim: %s: no rows%s\n", csv, nwhere ? " match --where" : "");
            goto done;
        }
        for (int c = 1; c < ncols_axes; c++)
            if (!is_variant_col(t->cols[c])) {
                size_t n = strlen(platform);

                snprintf(platform + n, sizeof(platform) - n, "%s%s=%s", n ? " " : "", t->cols[c],
                         cs_table_get(t, first, c));
            }
    }
    /* predict rounds sizes up to a multiple of each schedule's chunk count: variants measured at
     * different sizes are not compared with each other there */
    {
        long uneven = 0;

        for (long i = 0; i < nobs; i++) {
            int n = 0;

            for (long j = 0; j < nobs; j++)
                n += obs[j].size_bytes == obs[i].size_bytes;
            uneven += n < nvar;
        }
        if (uneven > 0)
            fprintf(stderr,
                    "collsim: warning: %s: %ld predictions are at sizes not every variant "
                    "was predicted at (predict rounds sizes to each schedule's chunk multiple); "
                    "they compete only with the variants predicted there\n",
                    csv, uneven);
    }
    cs_error_init(&err);
    if (cs_tune_ranges(obs, nobs, &ranges, &nr, &err) != 0) {
        fprintf(stderr, "collsim: %s: %s\n", csv, err.msg);
        goto done;
    }
    if (outdir != NULL) {
        char tmp[4096], path[4096 + DESC_LEN];
        FILE *fp;

        if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "collsim: %s: cannot create: %s\n", outdir, strerror(errno));
            goto done;
        }
        if ((files = calloc((size_t)nr, sizeof(*files))) == NULL)
            goto done;
        snprintf(tmp, sizeof(tmp), "%s/.gen.%ld.xml", outdir, (long)getpid());
        for (int i = 0; i < nr; i++) {
            struct cs_sched *s =
                variant_sched(t, var[ranges[i].variant].row, ncols_axes, sched_dir, tmp);
            char sl[DESC_LEN];

            if (s == NULL)
                goto done;
            s->has_min_bytes = s->has_max_bytes = 1;
            s->min_bytes = extend && i == 0 ? 0 : ranges[i].min_bytes;
            s->max_bytes = extend && i == nr - 1 ? 0 : ranges[i].max_bytes;
            if (!s->has_outofplace) {
                /* the executor requires it; Azure msccl-tools writes the complement of inplace */
                s->has_outofplace = 1;
                s->outofplace = !s->inplace;
            }
            slug(var[ranges[i].variant].desc, sl, sizeof(sl));
            /* the executor takes the first matching file in path order: number them */
            snprintf(files[i], sizeof(files[i]), "%02d-%.200s.xml", i, sl);
            snprintf(path, sizeof(path), "%s/%s", outdir, files[i]);
            cs_error_init(&err);
            rc = cs_sched_write_xml_file(s, path, &err);
            cs_sched_free(s);
            if (rc != 0) {
                cmd_print_error(&err);
                rc = CS_EXIT_USAGE;
                goto done;
            }
        }
        snprintf(path, sizeof(path), "%s/plan.txt", outdir);
        if ((fp = fopen(path, "w")) == NULL) {
            fprintf(stderr, "collsim: %s: %s\n", path, strerror(errno));
            rc = CS_EXIT_USAGE;
            goto done;
        }
        print_plan(fp, csv, platform, ranges, nr, var, files, extend);
        if (fclose(fp) != 0) {
            fprintf(stderr, "collsim: %s: cannot write\n", path);
            rc = CS_EXIT_USAGE;
            goto done;
        }
    }
    print_plan(stdout, csv, platform, ranges, nr, var, files, extend);
    rc = CS_EXIT_OK;
done:
    free(files);
    free(ranges);
    free(obs);
    free(var);
    cs_table_free(t);
    return rc;
}
