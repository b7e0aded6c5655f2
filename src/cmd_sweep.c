/* cmd_sweep.c: `collsim sweep`: runs every point of a sweep file as `collsim platform` and
 * `collsim predict` child processes, in parallel, resumably, and joins the results in one CSV. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "spawn.h"
#include "sweep.h"
#include "table.h"

const char cmd_sweep_usage[] =
    "usage: collsim sweep SPEC [-j N] [-o OUT.csv] [--results DIR] [--quiet]\n"
    "       collsim sweep SPEC --point K --out FILE.csv\n"
    "       collsim sweep --list SPEC [--shard-dir DIR]\n"
    "       collsim sweep --merge OUT.csv SHARD.csv...\n"
    "\n"
    "Run a what-if sweep: SPEC (format in docs/sweep.md) names the axes (schedule file or\n"
    "generator and its parameters, protocol, platform family and its parameters, absolute or\n"
    "scaled link bandwidths and latencies) and the sizes. Every point of the Cartesian product\n"
    "runs 'collsim platform' and 'collsim predict' as child processes; the result is one CSV\n"
    "with a column per key (point first) and the columns of 'collsim predict --format csv'.\n"
    "\n"
    "  -j N            points run in parallel (default: the number of cores)\n"
    "  -o OUT.csv      write the joined CSV there (atomically) instead of stdout\n"
    "  --results DIR   one file per finished point (default: ./NAME.results for NAME.sweep).\n"
    "                  Running the same command again skips finished points: a killed sweep\n"
    "                  loses only the points that were running.\n"
    "  --point K --out FILE   run point K (0-based) alone and write its rows to FILE\n"
    "  --list          print one shell command per point (for GNU parallel or a Slurm array)\n"
    "  --shard-dir DIR where the listed commands write shard-K.csv (default: .)\n"
    "  --merge OUT.csv SHARD.csv...   join shards, ordered by point (OUT.csv - is stdout)\n"
    "  --quiet         no progress or summary on stderr\n"
    "\n"
    "Progress and an ETA go to stderr when it is a terminal. A point whose prediction\n"
    "deadlocks is a result (status deadlock), not a failure. Exit 2 when a point fails.\n";

#define PATH_LEN 4096
#define MAX_CHILD_ARGS 160 /* platform: 2 per key at most (CS_SWEEP_MAX_KEYS) and a few */

static int quiet;

/* --- small helpers ------------------------------------------------------------------------- */

static void resolve(const struct cs_sweep *sw, const char *val, char *buf, size_t len)
{
    if (val[0] == '/')
        snprintf(buf, len, "%s", val);
    else
        snprintf(buf, len, "%s/%s", sw->dir, val);
}

static const char *val_of(const struct cs_sweep *sw, const char **vals, const char *key)
{
    int i = cs_sweep_find_key(sw, key);

    return i < 0 || strcmp(vals[i], "-") == 0 ? NULL : vals[i];
}

/* The header of a sweep CSV: point, the keys, the prediction columns. */
static void write_header(const struct cs_sweep *sw, FILE *fp)
{
    fputs("point", fp);
    for (int i = 0; i < sw->nkeys; i++) {
        fputc(',', fp);
        cs_table_write_field(fp, sw->keys[i]);
    }
    fputs("," CS_TABLE_PREDICT_HEADER "\n", fp);
}

/* Write a file through a temporary name and a rename, so that readers see all of it or nothing. */
struct atomic_file {
    char path[PATH_LEN];
    char tmp[PATH_LEN + 32];
    FILE *fp;
};

static int atomic_open(struct atomic_file *af, const char *path)
{
    int fd;

    snprintf(af->path, sizeof(af->path), "%s", path);
    snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.%ld", path, (long)getpid());
    fd = open(af->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || (af->fp = fdopen(fd, "w")) == NULL) {
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "collsim: %s: cannot create: %s\n", af->tmp, strerror(errno));
        return -1;
    }
    return 0;
}

static int atomic_commit(struct atomic_file *af)
{
    int bad = fflush(af->fp) != 0 || ferror(af->fp) || fsync(fileno(af->fp)) != 0;

    if (fclose(af->fp) != 0)
        bad = 1;
    if (bad || rename(af->tmp, af->path) != 0) {
        fprintf(stderr, "collsim: %s: cannot write: %s\n", af->path, strerror(errno));
        unlink(af->tmp);
        return -1;
    }
    return 0;
}

static void atomic_abort(struct atomic_file *af)
{
    fclose(af->fp);
    unlink(af->tmp);
}

/* Find `<prop id="KEY" value="V"/>` in a platform file written by `collsim platform`. */
static int read_prop(const char *path, const char *key, double *out)
{
    FILE *fp = fopen(path, "r");
    char line[1024], pat[256];
    int found = 0;

    if (fp == NULL)
        return -1;
    snprintf(pat, sizeof(pat), "<prop id=\"%s\" value=\"", key);
    while (!found && fgets(line, sizeof(line), fp) != NULL) {
        char *p = strstr(line, pat), *end;

        if (p == NULL)
            continue;
        p += strlen(pat);
        *out = strtod(p, &end);
        found = end != p && *end == '"';
    }
    fclose(fp);
    return found ? 0 : -1;
}

static void copy_file(const char *path, FILE *to)
{
    FILE *fp = fopen(path, "r");
    char buf[4096];
    size_t n;

    if (fp == NULL)
        return;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        fwrite(buf, 1, n, to);
    fclose(fp);
}

/* --- one point ------------------------------------------------------------------------------ */

struct argv_buf {
    char *v[MAX_CHILD_ARGS + 1];
    int n;
    char store[MAX_CHILD_ARGS][PATH_LEN + 64];
    int overflow;
};

static void arg(struct argv_buf *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(struct argv_buf *a, const char *fmt, ...)
{
    va_list ap;

    if (a->n >= MAX_CHILD_ARGS) {
        a->overflow = 1;
        return;
    }
    va_start(ap, fmt);
    if (vsnprintf(a->store[a->n], sizeof(a->store[0]), fmt, ap) >= (int)sizeof(a->store[0]))
        a->overflow = 1;
    va_end(ap);
    a->v[a->n] = a->store[a->n];
    a->v[++a->n] = NULL;
}

/* The `collsim platform` arguments of a point; scale.* keys become --set with the scaled family
 * value read from base (NULL: leave them out). */
static int platform_args(const struct cs_sweep *sw, const char **vals, const char *base,
                         const char *out, struct argv_buf *a)
{
    static const char *const opts[][2] = {{"platform.nodes", "--nodes"},
                                          {"platform.gpus_per_node", "--gpus-per-node"},
                                          {"platform.rows", "--rows"},
                                          {"platform.columns", "--columns"},
                                          {"platform.between", "--between"}};

    a->n = 0;
    a->overflow = 0;
    arg(a, "platform");
    arg(a, "%s", val_of(sw, vals, "platform.family"));
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        const char *v = val_of(sw, vals, opts[i][0]);

        if (v != NULL) {
            arg(a, "%s", opts[i][1]);
            arg(a, "%s", v);
        }
    }
    for (int i = 0; i < sw->nkeys; i++) {
        if (strcmp(vals[i], "-") == 0)
            continue;
        if (strncmp(sw->keys[i], "set.", 4) == 0) {
            arg(a, "--set");
            arg(a, "%s=%s", sw->keys[i] + 4, vals[i]);
        } else if (strncmp(sw->keys[i], "scale.", 6) == 0 && base != NULL) {
            double v;

            if (read_prop(base, sw->keys[i] + 6, &v) != 0) {
                fprintf(stderr, "collsim: %s: no property '%s' to scale\n", base, sw->keys[i] + 6);
                return -1;
            }
            arg(a, "--set");
            arg(a, "%s=%.17g", sw->keys[i] + 6, v * strtod(vals[i], NULL));
        }
    }
    arg(a, "-o");
    arg(a, "%s", out);
    return 0;
}

static int has_scale(const struct cs_sweep *sw)
{
    for (int i = 0; i < sw->nkeys; i++)
        if (strncmp(sw->keys[i], "scale.", 6) == 0)
            return 1; /* a point may leave it out: then the family file is read for nothing */
    return 0;
}

/* The generator spec of a point: ALGO:key=value,...,protocol=P. */
static void gen_spec(const struct cs_sweep *sw, const char **vals, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%s:", val_of(sw, vals, "gen.algorithm"));
    const char *sep = "";
    const char *proto = val_of(sw, vals, "protocol");

    for (int i = 0; i < sw->nkeys && n < len; i++) {
        const char *k = sw->keys[i];

        if (strncmp(k, "gen.", 4) != 0 || strcmp(k, "gen.algorithm") == 0)
            continue;
        if (strcmp(vals[i], "-") == 0 ||
            (strcmp(k, "gen.compat") == 0 && strcmp(vals[i], "0") == 0))
            continue;
        n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", sep, k + 4, vals[i]);
        sep = ",";
    }
    if (proto != NULL && n < len)
        snprintf(buf + n, len - n, "%sprotocol=%s", sep, proto);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[PATH_LEN + 256];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Run point k: platform, then one predict per size item; write its rows to out atomically.
 * Returns an exit code. */
static int run_point(const struct cs_sweep *sw, long k, const char *out)
{
    const char *vals[CS_SWEEP_MAX_KEYS];
    char work[PATH_LEN], plat[PATH_LEN + 32], base[PATH_LEN + 32], pred[PATH_LEN + 32];
    char sched[PATH_LEN], spec[1024], perr[PATH_LEN + 32], *slash;
    static struct argv_buf a;
    struct atomic_file af;
    const char *proto, *dtype;
    int rc = CS_EXIT_USAGE, code;

    cs_sweep_point(sw, k, vals);
    snprintf(work, sizeof(work), "%s", out);
    slash = strrchr(work, '/');
    snprintf(slash ? slash + 1 : work, sizeof(work) - (size_t)(slash ? slash + 1 - work : 0),
             ".point-%ld.XXXXXX", k);
    if (mkdtemp(work) == NULL) {
        fprintf(stderr, "collsim: %s: cannot create a work directory: %s\n", work, strerror(errno));
        return CS_EXIT_USAGE;
    }
    /* the platform */
    if (val_of(sw, vals, "platform") != NULL) {
        resolve(sw, val_of(sw, vals, "platform"), plat, sizeof(plat));
    } else {
        snprintf(plat, sizeof(plat), "%s/platform.xml", work);
        if (has_scale(sw)) {
            snprintf(base, sizeof(base), "%s/family.xml", work);
            platform_args(sw, vals, NULL, base, &a);
            if (a.overflow) {
                fprintf(stderr, "collsim: point %ld: 'collsim platform' arguments too long\n", k);
                goto done;
            }
            if ((code = cs_spawn_run(a.v, NULL, NULL)) != 0) {
                fprintf(stderr, "collsim: point %ld: 'collsim platform' exited with %d\n", k, code);
                goto done;
            }
            if (platform_args(sw, vals, base, plat, &a) != 0)
                goto done;
        } else {
            platform_args(sw, vals, NULL, plat, &a);
        }
        if (a.overflow) {
            fprintf(stderr, "collsim: point %ld: 'collsim platform' arguments too long\n", k);
            goto done;
        }
        if ((code = cs_spawn_run(a.v, NULL, NULL)) != 0) {
            fprintf(stderr, "collsim: point %ld: 'collsim platform' exited with %d\n", k, code);
            goto done;
        }
    }
    proto = val_of(sw, vals, "protocol");
    dtype = val_of(sw, vals, "dtype");
    if (atomic_open(&af, out) != 0)
        goto done;
    write_header(sw, af.fp);
    for (int z = 0; z < sw->nsizes; z++) {
        struct cs_table *t = NULL;
        struct cs_error err;

        a.n = 0;
        a.overflow = 0;
        arg(&a, "predict");
        if (val_of(sw, vals, "schedule") != NULL) {
            resolve(sw, val_of(sw, vals, "schedule"), sched, sizeof(sched));
            arg(&a, "%s", sched);
        } else {
            gen_spec(sw, vals, spec, sizeof(spec));
            arg(&a, "--gen");
            arg(&a, "%s", spec);
        }
        arg(&a, "--platform");
        arg(&a, "%s", plat);
        if (proto != NULL) {
            arg(&a, "--protocol");
            arg(&a, "%s", proto);
        }
        if (dtype != NULL) {
            arg(&a, "-d");
            arg(&a, "%s", dtype);
        }
        arg(&a, "-b");
        arg(&a, "%lld", sw->sizes[z].min_bytes);
        arg(&a, "-e");
        arg(&a, "%lld", sw->sizes[z].max_bytes);
        arg(&a, "-f");
        arg(&a, "%g", sw->sizes[z].factor);
        arg(&a, "--format");
        arg(&a, "csv");
        snprintf(pred, sizeof(pred), "%s/predict-%d.csv", work, z);
        snprintf(perr, sizeof(perr), "%s/predict-%d.err", work, z);
        if (a.overflow) {
            fprintf(stderr, "collsim: point %ld: 'collsim predict' arguments too long\n", k);
            atomic_abort(&af);
            goto done;
        }
        code = cs_spawn_run(a.v, pred, perr);
        /* 1 is a prediction that deadlocked at some size: a result, with its rows (the
         * wait-for report on its stderr is dropped: `collsim predict` shows it) */
        if (code != 0 && code != 1) {
            fprintf(stderr, "collsim: point %ld: 'collsim predict' exited with %d:\n", k, code);
            copy_file(perr, stderr);
            atomic_abort(&af);
            goto done;
        }
        cs_error_init(&err);
        if (cs_table_read(pred, &t, &err) != 0) {
            cmd_print_error(&err);
            atomic_abort(&af);
            goto done;
        }
        if (t->ncols != CS_TABLE_PREDICT_NCOLS || cs_table_find_col(t, "size_bytes") != 0 ||
            cs_table_find_col(t, "status") != 6) {
            fprintf(stderr, "collsim: point %ld: predict wrote an unexpected header\n", k);
            cs_table_free(t);
            atomic_abort(&af);
            goto done;
        }
        for (long r = 0; r < t->nrows; r++) {
            fprintf(af.fp, "%ld", k);
            for (int i = 0; i < sw->nkeys; i++) {
                fputc(',', af.fp);
                cs_table_write_field(af.fp, vals[i]);
            }
            for (int c = 0; c < t->ncols; c++) {
                fputc(',', af.fp);
                cs_table_write_field(af.fp, cs_table_get(t, r, c));
            }
            fputc('\n', af.fp);
        }
        cs_table_free(t);
    }
    if (atomic_commit(&af) == 0)
        rc = CS_EXIT_OK;
done:
    remove_dir(work);
    return rc;
}

/* --- joining point files -------------------------------------------------------------------- */

static int is_sweep_header(const struct cs_table *t)
{
    static const char *const pc[] = {"size_bytes", "count",      "type",  "time_us",
                                     "algbw_GBps", "busbw_GBps", "status"};

    if (t->ncols < 1 + CS_TABLE_PREDICT_NCOLS || strcmp(t->cols[0], "point") != 0)
        return 0;
    for (int i = 0; i < CS_TABLE_PREDICT_NCOLS; i++)
        if (strcmp(t->cols[t->ncols - CS_TABLE_PREDICT_NCOLS + i], pc[i]) != 0)
            return 0;
    return 1;
}

struct row_ref {
    long point;
    int file;
    long row;
};

static int cmp_row_ref(const void *a, const void *b)
{
    const struct row_ref *x = a, *y = b;

    if (x->point != y->point)
        return x->point < y->point ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int parse_point(const char *s, long *out)
{
    char *end;

    errno = 0;
    *out = strtol(s, &end, 10);
    return end != s && *end == '\0' && errno == 0 && *out >= 0 ? 0 : -1;
}

/* Join sweep CSVs (point files or shards) into out ("-": stdout), ordered by point. A point found
 * in several files must have identical rows there; it is written once. Returns an exit code. */
static int merge_files(char **files, int nfiles, const char *out, long expect_points)
{
    struct cs_table **tabs = calloc((size_t)nfiles, sizeof(*tabs));
    struct row_ref *refs = NULL;
    long nrefs = 0, cap = 0, npoints = 0, maxp = -1, deadlocks = 0;
    int rc = CS_EXIT_USAGE;
    struct atomic_file af;
    FILE *fp = stdout;

    if (tabs == NULL)
        return CS_EXIT_USAGE;
    for (int f = 0; f < nfiles; f++) {
        struct cs_error err;

        cs_error_init(&err);
        if (cs_table_read(files[f], &tabs[f], &err) != 0) {
            cmd_print_error(&err);
            goto done;
        }
        if (!is_sweep_header(tabs[f])) {
            fprintf(stderr, "collsim: %s: not a sweep CSV (header must be point,...,%s)\n",
                    files[f], CS_TABLE_PREDICT_HEADER);
            goto done;
        }
        if (f > 0) {
            int same = tabs[f]->ncols == tabs[0]->ncols;

            for (int c = 0; same && c < tabs[0]->ncols; c++)
                same = strcmp(tabs[f]->cols[c], tabs[0]->cols[c]) == 0;
            if (!same) {
                fprintf(stderr, "collsim: %s: header differs from %s's\n", files[f], files[0]);
                goto done;
            }
        }
        for (long r = 0; r < tabs[f]->nrows; r++) {
            long p;

            if (parse_point(cs_table_get(tabs[f], r, 0), &p) != 0) {
                fprintf(stderr, "collsim: %s:%d: bad point number '%s'\n", files[f],
                        tabs[f]->lines[r], cs_table_get(tabs[f], r, 0));
                goto done;
            }
            if (nrefs == cap) {
                struct row_ref *nr = realloc(refs, sizeof(*refs) * (size_t)(cap = cap * 2 + 256));

                if (nr == NULL)
                    goto done;
                refs = nr;
            }
            refs[nrefs++] = (struct row_ref){p, f, r};
            if (p > maxp)
                maxp = p;
        }
    }
    qsort(refs, (size_t)nrefs, sizeof(*refs), cmp_row_ref);
    /* the file that owns each point: the first; others must repeat it exactly */
    for (long i = 0; i < nrefs;) {
        long j = i, p = refs[i].point;
        int f0 = refs[i].file;
        long n0 = 0;

        while (j < nrefs && refs[j].point == p)
            j++;
        for (long x = i; x < j; x++)
            n0 += refs[x].file == f0;
        for (long x = i; x < j;) {
            int f = refs[x].file;
            long y = x;

            while (y < j && refs[y].file == f)
                y++;
            if (f != f0) {
                int same = y - x == n0;

                for (long m = 0; same && m < n0; m++)
                    for (int c = 0; same && c < tabs[0]->ncols; c++)
                        same = strcmp(cs_table_get(tabs[f], refs[x + m].row, c),
                                      cs_table_get(tabs[f0], refs[i + m].row, c)) == 0;
                if (!same) {
                    fprintf(stderr, "collsim: point %ld: %s and %s disagree\n", p, files[f0],
                            files[f]);
                    goto done;
                }
                if (!quiet)
                    fprintf(stderr, "collsim: point %ld: in %s and %s (same rows, kept once)\n", p,
                            files[f0], files[f]);
                for (long m = x; m < y; m++)
                    refs[m].file = -1; /* duplicate: skip */
            }
            x = y;
        }
        npoints++;
        i = j;
    }
    if (strcmp(out, "-") != 0) {
        if (atomic_open(&af, out) != 0)
            goto done;
        fp = af.fp;
    }
    cs_table_write(&(struct cs_table){.ncols = tabs[0]->ncols, .cols = tabs[0]->cols}, fp);
    for (long i = 0; i < nrefs; i++) {
        const struct cs_table *t;

        if (refs[i].file < 0)
            continue;
        t = tabs[refs[i].file];
        for (int c = 0; c < t->ncols; c++) {
            if (c)
                fputc(',', fp);
            cs_table_write_field(fp, cs_table_get(t, refs[i].row, c));
        }
        fputc('\n', fp);
        deadlocks += strcmp(cs_table_get(t, refs[i].row, t->ncols - 1), "deadlock") == 0;
    }
    if (fp != stdout) {
        if (atomic_commit(&af) != 0)
            goto done;
    } else if (fflush(stdout) != 0) {
        goto done;
    }
    if (!quiet) {
        fprintf(stderr, "collsim: %ld points, %ld rows", npoints, nrefs);
        if (deadlocks)
            fprintf(stderr, ", %ld deadlocked", deadlocks);
        fputc('\n', stderr);
    }
    if (expect_points < 0 && maxp + 1 != npoints)
        fprintf(stderr, "collsim: warning: %ld of points 0..%ld missing\n", maxp + 1 - npoints,
                maxp);
    rc = CS_EXIT_OK;
done:
    for (int f = 0; f < nfiles; f++)
        cs_table_free(tabs[f]);
    free(tabs);
    free(refs);
    return rc;
}

/* --- the whole sweep ------------------------------------------------------------------------ */

/* Whether a point file holds point k of this sweep: the header and every row's axis values. */
static int point_file_matches(const struct cs_sweep *sw, long k, const char *path)
{
    struct cs_table *t = NULL;
    struct cs_error err;
    const char *vals[CS_SWEEP_MAX_KEYS];
    char ks[32];
    int ok;

    cs_error_init(&err);
    if (cs_table_read(path, &t, &err) != 0)
        return 0;
    cs_sweep_point(sw, k, vals);
    snprintf(ks, sizeof(ks), "%ld", k);
    ok = is_sweep_header(t) && t->ncols == 1 + sw->nkeys + CS_TABLE_PREDICT_NCOLS && t->nrows > 0;
    for (int i = 0; ok && i < sw->nkeys; i++)
        ok = strcmp(t->cols[1 + i], sw->keys[i]) == 0;
    for (long r = 0; ok && r < t->nrows; r++) {
        ok = strcmp(cs_table_get(t, r, 0), ks) == 0;
        for (int i = 0; ok && i < sw->nkeys; i++)
            ok = strcmp(cs_table_get(t, r, 1 + i), vals[i]) == 0;
    }
    cs_table_free(t);
    return ok;
}

/* The signature of what a results directory holds: the CSV header and the sizes. */
static void signature(const struct cs_sweep *sw, char *buf, size_t len)
{
    FILE *fp = fmemopen(buf, len, "w");

    if (fp == NULL) {
        buf[0] = '\0';
        return;
    }
    write_header(sw, fp);
    fputs("sizes", fp);
    for (int z = 0; z < sw->nsizes; z++)
        fprintf(fp, " %lld..%lldx%g", sw->sizes[z].min_bytes, sw->sizes[z].max_bytes,
                sw->sizes[z].factor);
    fputc('\n', fp);
    fclose(fp);
}

static int check_signature(const struct cs_sweep *sw, const char *dir)
{
    char want[8192], have[8192] = "", path[PATH_LEN + 16];
    FILE *fp;
    size_t n;

    signature(sw, want, sizeof(want));
    snprintf(path, sizeof(path), "%s/sweep.sig", dir);
    if ((fp = fopen(path, "r")) != NULL) {
        n = fread(have, 1, sizeof(have) - 1, fp);
        have[n] = '\0';
        fclose(fp);
        if (strcmp(have, want) != 0) {
            fprintf(stderr,
                    "collsim: %s holds results of a sweep with other keys or sizes; give another "
                    "--results directory or remove it\n",
                    dir);
            return -1;
        }
        return 0;
    }
    if ((fp = fopen(path, "w")) == NULL || fputs(want, fp) < 0 || fclose(fp) != 0) {
        fprintf(stderr, "collsim: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Remove what killed runs left behind: work directories and temporary files. */
static void clean_stale(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[PATH_LEN + 256];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (strncmp(e->d_name, ".point-", 7) == 0)
            remove_dir(p);
        else if (strstr(e->d_name, ".tmp.") != NULL)
            unlink(p);
    }
    closedir(d);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fmt_duration(double s, char *buf, size_t len)
{
    long t = (long)(s + 0.5);

    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static void progress(long done, long total, long run_done, int running, long failed, double t0)
{
    char el[32], eta[32] = "?";
    double e = now_s() - t0;

    fmt_duration(e, el, sizeof(el));
    if (run_done > 0)
        fmt_duration(e / (double)run_done * (double)(total - done), eta, sizeof(eta));
    fprintf(stderr, "\rsweep: %ld/%ld points (%ld%%), %d running, %ld failed, elapsed %s, ETA %s  ",
            done, total, total ? done * 100 / total : 100, running, failed, el, eta);
    fflush(stderr);
}

static int run_sweep(const struct cs_sweep *sw, const char *spec, const char *dir, int jobs,
                     const char *out)
{
    char path[PATH_LEN + 64], lockp[PATH_LEN + 16];
    long n = sw->npoints, done = 0, run_done = 0, failed = 0, next = 0;
    pid_t *pids = calloc((size_t)jobs, sizeof(pid_t));
    long *slot_point = calloc((size_t)jobs, sizeof(long));
    char *state = calloc((size_t)n, 1); /* 0 pending, 1 done, 2 failed */
    int running = 0, lockfd, tty = isatty(STDERR_FILENO) && !quiet, rc;
    double t0 = now_s();
    char **files;

    if (pids == NULL || slot_point == NULL || state == NULL) {
        free(pids), free(slot_point), free(state);
        return CS_EXIT_USAGE;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "collsim: %s: cannot create: %s\n", dir, strerror(errno));
        free(pids), free(slot_point), free(state);
        return CS_EXIT_USAGE;
    }
    /* One sweep per results directory. The lock is inherited by the children on purpose: while
     * any of them still runs (its parent was killed), a new sweep may not start here. */
    snprintf(lockp, sizeof(lockp), "%s/.lock", dir);
    if ((lockfd = open(lockp, O_RDWR | O_CREAT, 0644)) < 0 ||
        flock(lockfd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr, "collsim: %s: %s\n", dir,
                lockfd < 0 ? strerror(errno) : "another sweep is running in this directory");
        free(pids), free(slot_point), free(state);
        return CS_EXIT_USAGE;
    }
    if (check_signature(sw, dir) != 0) {
        rc = CS_EXIT_USAGE;
        goto out;
    }
    clean_stale(dir);
    for (long k = 0; k < n; k++) {
        snprintf(path, sizeof(path), "%s/point-%ld.csv", dir, k);
        if (access(path, F_OK) != 0)
            continue;
        if (!point_file_matches(sw, k, path)) {
            fprintf(stderr,
                    "collsim: %s does not hold point %ld of %s; give another --results "
                    "directory or remove it\n",
                    path, k, spec);
            rc = CS_EXIT_USAGE;
            goto out;
        }
        state[k] = 1;
        done++;
    }
    if (!quiet && done > 0)
        fprintf(stderr, "collsim: %s: %ld of %ld points already done\n", dir, done, n);
    for (;;) {
        while (running < jobs && next < n) {
            char ks[32];
            char *args[] = {"sweep", (char *)spec, "--point", ks, "--out", path, "--quiet", NULL};
            int s = 0;
            pid_t pid;

            if (state[next] != 0) {
                next++;
                continue;
            }
            snprintf(ks, sizeof(ks), "%ld", next);
            snprintf(path, sizeof(path), "%s/point-%ld.csv", dir, next);
            while (pids[s] != 0)
                s++;
            if ((pid = cs_spawn_start(args, NULL, NULL)) < 0) {
                fprintf(stderr, "collsim: cannot start a child process: %s\n", strerror(errno));
                state[next++] = 2;
                failed++;
                continue;
            }
            pids[s] = pid;
            slot_point[s] = next++;
            running++;
        }
        if (tty)
            progress(done, n, run_done, running, failed, t0);
        if (running == 0)
            break;
        {
            int st;
            pid_t pid;

            if (tty) {
                /* on a terminal, refresh the elapsed time and ETA while points run */
                double last = now_s();

                while ((pid = waitpid(-1, &st, WNOHANG)) == 0) {
                    struct timespec ts = {0, 200 * 1000 * 1000};

                    nanosleep(&ts, NULL);
                    if (now_s() - last >= 1.0) {
                        progress(done, n, run_done, running, failed, t0);
                        last = now_s();
                    }
                }
            } else {
                pid = waitpid(-1, &st, 0);
            }
            if (pid < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            for (int s = 0; s < jobs; s++)
                if (pids[s] == pid) {
                    long k = slot_point[s];

                    pids[s] = 0;
                    running--;
                    if (cs_spawn_code(st) == 0) {
                        state[k] = 1;
                        done++;
                        run_done++;
                    } else {
                        state[k] = 2;
                        failed++;
                        if (tty)
                            fputc('\n', stderr);
                        fprintf(stderr, "collsim: point %ld failed (exit %d)\n", k,
                                cs_spawn_code(st));
                    }
                }
        }
    }
    if (tty)
        fputc('\n', stderr);
    if (failed > 0) {
        fprintf(stderr,
                "collsim: %ld of %ld points failed; the others are kept in %s: fix the cause and "
                "run the same command again to finish\n",
                failed, n, dir);
        rc = CS_EXIT_USAGE;
        goto out;
    }
    if ((files = calloc((size_t)n, sizeof(char *))) == NULL) {
        rc = CS_EXIT_USAGE;
        goto out;
    }
    rc = CS_EXIT_OK;
    for (long k = 0; k < n && rc == CS_EXIT_OK; k++) {
        snprintf(path, sizeof(path), "%s/point-%ld.csv", dir, k);
        if ((files[k] = strdup(path)) == NULL)
            rc = CS_EXIT_USAGE;
    }
    if (rc == CS_EXIT_OK)
        rc = merge_files(files, (int)n, out, n);
    for (long k = 0; k < n; k++)
        free(files[k]);
    free(files);
out:
    close(lockfd);
    free(pids);
    free(slot_point);
    free(state);
    return rc;
}

/* --- listing commands for other machines ---------------------------------------------------- */

static void put_quoted(const char *s)
{
    int plain = *s != '\0';

    for (const char *c = s; *c && plain; c++)
        plain = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:+,@%",
                       *c) != NULL;
    if (plain) {
        fputs(s, stdout);
        return;
    }
    putchar('\'');
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*s);
    }
    putchar('\'');
}

static int list_points(const struct cs_sweep *sw, const char *spec, const char *shard_dir)
{
    char exe[PATH_LEN], abs[PATH_MAX], shard[PATH_LEN + 64];

    if (cs_spawn_exe(exe, sizeof(exe)) != 0 || realpath(spec, abs) == NULL) {
        fprintf(stderr, "collsim: %s: %s\n", spec, strerror(errno));
        return CS_EXIT_USAGE;
    }
    for (long k = 0; k < sw->npoints; k++) {
        put_quoted(exe);
        fputs(" sweep ", stdout);
        put_quoted(abs);
        printf(" --point %ld --out ", k);
        if (strcmp(shard_dir, ".") == 0)
            snprintf(shard, sizeof(shard), "shard-%ld.csv", k);
        else
            snprintf(shard, sizeof(shard), "%s/shard-%ld.csv", shard_dir, k);
        put_quoted(shard);
        putchar('\n');
    }
    return fflush(stdout) == 0 ? CS_EXIT_OK : CS_EXIT_USAGE;
}

/* --- command line --------------------------------------------------------------------------- */

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;

    errno = 0;
    *out = strtol(s, &end, 10);
    return end != s && *end == '\0' && errno == 0 && *out >= lo && *out <= hi ? 0 : -1;
}

int cmd_sweep(int argc, char **argv)
{
    const char *spec = NULL, *out = "-", *results = NULL, *point_out = NULL, *shard_dir = ".";
    long point = -1, jobs = sysconf(_SC_NPROCESSORS_ONLN);
    int list = 0, rc;
    struct cs_sweep *sw = NULL;
    struct cs_error err;
    char dirbuf[PATH_LEN];

    quiet = 0;
    if (argc >= 2 && strcmp(argv[1], "--merge") == 0) {
        int i = 2;

        for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
            if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
                quiet = 1;
            else
                return cmd_usage_error("sweep --merge: unknown option '%s'", argv[i]);
        }
        if (argc - i < 2)
            return cmd_usage_error("usage: collsim sweep --merge OUT.csv SHARD.csv...");
        return merge_files(argv + i + 1, argc - i - 1, argv[i], -1);
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;

        if (strcmp(a, "--list") == 0) {
            list = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if ((strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0) && has_next) {
            if (parse_long(argv[++i], 1, 1024, &jobs) != 0)
                return cmd_usage_error("sweep: -j takes a number of processes in 1..1024");
        } else if (strncmp(a, "-j", 2) == 0 && a[2] != '\0') {
            if (parse_long(a + 2, 1, 1024, &jobs) != 0)
                return cmd_usage_error("sweep: -j takes a number of processes in 1..1024");
        } else if (strcmp(a, "-o") == 0 && has_next) {
            out = argv[++i];
        } else if (strcmp(a, "--results") == 0 && has_next) {
            results = argv[++i];
        } else if (strcmp(a, "--point") == 0 && has_next) {
            if (parse_long(argv[++i], 0, CS_SWEEP_MAX_POINTS, &point) != 0)
                return cmd_usage_error("sweep: --point takes a point number");
        } else if (strcmp(a, "--out") == 0 && has_next) {
            point_out = argv[++i];
        } else if (strcmp(a, "--shard-dir") == 0 && has_next) {
            shard_dir = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            return cmd_usage_error("sweep: unknown option or missing value '%s'; see 'collsim "
                                   "help sweep'",
                                   a);
        } else if (spec == NULL) {
            spec = a;
        } else {
            return cmd_usage_error("sweep: one sweep file only ('%s' and '%s')", spec, a);
        }
    }
    if (spec == NULL)
        return cmd_usage_error("sweep: no sweep file; see 'collsim help sweep'");
    if ((point >= 0) != (point_out != NULL))
        return cmd_usage_error("sweep: --point K and --out FILE go together");
    if (jobs < 1)
        jobs = 1;
    cs_error_init(&err);
    if (cs_sweep_read(spec, &sw, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    /* files named in the sweep must exist before anything runs */
    for (int i = 0; i < sw->nkeys; i++) {
        if (strcmp(sw->keys[i], "schedule") != 0 && strcmp(sw->keys[i], "platform") != 0)
            continue;
        for (int x = 0; x < sw->naxes; x++)
            for (int j = 0; j < sw->axes[x].nkeys; j++) {
                if (sw->axes[x].keys[j] != i)
                    continue;
                for (int v = 0; v < sw->axes[x].nvals; v++) {
                    char p[PATH_LEN];

                    resolve(sw, sw->axes[x].vals[v * sw->axes[x].nkeys + j], p, sizeof(p));
                    if (access(p, R_OK) != 0) {
                        fprintf(stderr, "collsim: %s:%d: %s '%s': %s\n", spec, sw->axes[x].line,
                                sw->keys[i], p, strerror(errno));
                        cs_sweep_free(sw);
                        return CS_EXIT_USAGE;
                    }
                }
            }
    }
    if (list) {
        rc = list_points(sw, spec, shard_dir);
    } else if (point >= 0) {
        if (point >= sw->npoints) {
            rc = cmd_usage_error("sweep: %s has %ld points (0..%ld); no point %ld", spec,
                                 sw->npoints, sw->npoints - 1, point);
        } else {
            rc = run_point(sw, point, point_out);
        }
    } else {
        if (results == NULL) {
            const char *b = strrchr(spec, '/');
            char *dot;

            snprintf(dirbuf, sizeof(dirbuf), "%s", b ? b + 1 : spec);
            if ((dot = strrchr(dirbuf, '.')) != NULL && dot != dirbuf)
                *dot = '\0';
            strncat(dirbuf, ".results", sizeof(dirbuf) - strlen(dirbuf) - 1);
            results = dirbuf;
        }
        rc = run_sweep(sw, spec, results, (int)jobs, out);
    }
    cs_sweep_free(sw);
    return rc;
}
