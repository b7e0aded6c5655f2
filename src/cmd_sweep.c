/* cmd_sweep.c: `collsim sweep`: predicts every point of a sweep file in forked workers, in
 * parallel and resumably, and joins the results in one CSV; lists and merges shards. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "fdio.h"
#include "predict.h"
#include "progress.h"
#include "report.h"
#include "spawn.h"
#include "sweep.h"
#include "sweepcsv.h"
#include "sweeprun.h"
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
    "is predicted in a worker process (its platform written, its schedule read or generated);\n"
    "the result is one CSV with a column per key (point first) and the columns of\n"
    "'collsim predict --format csv'.\n"
    "\n"
    "  -j N            points run in parallel (default: the number of cores)\n"
    "  -o OUT.csv      write the joined CSV there instead of stdout (a file is replaced only\n"
    "                  when complete; a device or FIFO is written in place)\n"
    "  --results DIR   one file per finished point (default: ./NAME.results for NAME.sweep).\n"
    "                  Running the same command again skips finished points: a killed sweep\n"
    "                  loses only the points that were running; its leftovers are removed,\n"
    "                  only those its manifest DIR/.written lists. DIR must be new, empty or\n"
    "                  this sweep's (its sweep.sig).\n"
    "  --point K --out FILE   run point K (0-based) alone and write its rows to FILE, with\n"
    "                  a column npoints (the sweep's point count) after point\n"
    "  --list          print one shell command per point (for GNU parallel or a Slurm array)\n"
    "  --shard-dir DIR where the listed commands write shard-K.csv (default: .)\n"
    "  --merge OUT.csv SHARD.csv...   join shards, ordered by point (OUT.csv - is stdout);\n"
    "                  exit 2 naming the points missing (a shard's npoints column holds\n"
    "                  the sweep's point count, so points missing at the end count too)\n"
    "  --quiet         no progress or summary on stderr\n"
    "\n"
    "Progress and an ETA go to stderr: one updating line on a terminal, else a line every\n"
    "10 s (COLLSIM_PROGRESS_INTERVAL=SECONDS; 0: none). A point whose prediction\n"
    "deadlocks is a result (status deadlock), not a failure. Exit 2 when a point fails.\n";

#define PATH_LEN 4096

static int quiet;

/* --- files ---------------------------------------------------------------------------------- */

/* Open out for writing (see cs_outfile_open): 0, or an exit code after a message. */
static int open_output(struct cs_outfile *of, const char *out)
{
    struct cs_error err;

    cs_error_init(&err);
    if (cs_outfile_open(of, out, &err) == 0)
        return 0;
    cmd_print_error(&err);
    return CS_EXIT_USAGE;
}

/* Finish an output opened by open_output: 0, or an exit code after a message. */
static int close_output(struct cs_outfile *of)
{
    struct cs_error err;

    cs_error_init(&err);
    if (cs_outfile_close(of, &err) == 0)
        return 0;
    cmd_print_error(&err);
    return CS_EXIT_USAGE;
}

/* The results folder's manifest: a line per work directory or temporary point file a worker of a
 * sweep created there, appended (O_APPEND: whole lines from concurrent workers) once it exists.
 * Only what it lists is ever removed from the folder; removed when a run ends with every point. */
#define MANIFEST ".written"

static void manifest_note(const char *path)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    char mp[PATH_LEN + 16], line[PATH_LEN];
    int fd, n;

    snprintf(mp, sizeof(mp), "%.*s" MANIFEST, slash ? (int)(slash + 1 - path) : 0, path);
    n = snprintf(line, sizeof(line), "%s\n", name);
    if (n <= 0 || n >= (int)sizeof(line) || strchr(name, '\n') != NULL)
        return;
    if ((fd = open(mp, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
        return;
    if (write(fd, line, (size_t)n) != n) {
        /* a name not noted is left in the folder, never removed: nothing to undo */
    }
    close(fd);
}

/* Whether dir's manifest lists name. */
static int manifest_has(const char *dir, const char *name)
{
    char mp[PATH_LEN + 16], line[PATH_LEN + 2];
    FILE *fp;
    int found = 0;

    snprintf(mp, sizeof(mp), "%s/" MANIFEST, dir);
    if ((fp = cs_fopen_read(mp)) == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), fp) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        found = strcmp(line, name) == 0;
    }
    fclose(fp);
    return found;
}

/* Whether name is what a killed run of this sweep leaves in its results folder: a work directory
 * ".point-N.XXXXXX" (mkdtemp's six characters) or a point file's temporary "point-N.csv.tmp.PID"
 * (or .PID.N, cs_outfile's). Nothing else there is the sweep's to remove. */
static int left_behind(const char *name, int *is_dir)
{
    const char *p = name;
    size_t n;

    *is_dir = strncmp(p, ".point-", 7) == 0;
    p += *is_dir ? 7 : strncmp(p, "point-", 6) == 0 ? 6 : 0;
    if (p == name || !isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    if (*is_dir)
        return *p == '.' && strlen(p + 1) == 6;
    if (strncmp(p, ".csv.tmp.", 9) != 0 || !isdigit((unsigned char)p[9]))
        return 0;
    n = strspn(p + 9, "0123456789.");
    return p[9 + n] == '\0';
}

/* Empty a directory: every plain entry (all: a work directory of this run), or only what killed
 * runs left behind: entries of their form (left_behind) that the folder's manifest lists, work
 * directories emptied and removed, temporary point files; then the manifest is cleared. An entry
 * is taken as what lstat says it is: a symbolic link is never followed, and a name of another
 * form, or one no worker noted, is left alone (collsim did not write it). */
static void clean_dir(const char *dir, int all)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[PATH_LEN + 256];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        int is_dir;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (lstat(p, &st) != 0)
            continue;
        if (all) {
            if (!S_ISDIR(st.st_mode))
                unlink(p);
        } else if (left_behind(e->d_name, &is_dir) && manifest_has(dir, e->d_name)) {
            if (is_dir && S_ISDIR(st.st_mode)) {
                clean_dir(p, 1);
                rmdir(p);
            } else if (!is_dir && S_ISREG(st.st_mode)) {
                unlink(p);
            }
        }
    }
    closedir(d);
    if (!all) {
        char mp[PATH_LEN + 16];

        snprintf(mp, sizeof(mp), "%s/" MANIFEST, dir);
        unlink(mp);
    }
}

/* --- one point ------------------------------------------------------------------------------ */

/* Predict point k and write its rows to out (cs_outfile_open), through a private work directory
 * beside it, or in $TMPDIR when out is a device or FIFO (for the point's platform file); a shard
 * (--point) carries the point count. Returns an exit code. */
static int run_point(const struct cs_sweep *sw, long k, const char *out, int shard)
{
    const char *slash = strrchr(out, '/'), *tmpdir = getenv("TMPDIR");
    char work[PATH_LEN], plat[PATH_LEN + 32], msg[2048];
    struct cs_outfile of;
    struct stat st;
    struct cs_error err;
    int rc, beside;

    /* out's directory part, if any, then the work directory's name; not in /dev for a device */
    beside = !(stat(out, &st) == 0 && !S_ISREG(st.st_mode));
    if (!beside)
        snprintf(work, sizeof(work), "%s/.point-%ld.XXXXXX",
                 tmpdir != NULL && tmpdir[0] == '/' ? tmpdir : "/tmp", k);
    else
        snprintf(work, sizeof(work), "%.*s.point-%ld.XXXXXX", slash ? (int)(slash + 1 - out) : 0,
                 out, k);
    /* a signal removes the platform file, then the directory */
    if (cs_cleanup_mkdtemp(work) != 0)
        return cmd_usage_error("%s: cannot create a work directory: %s", work, strerror(errno));
    if (beside && !shard)
        manifest_note(work); /* a pool's point: beside out is the results folder */
    snprintf(plat, sizeof(plat), "%s/platform.xml", work);
    if (cs_cleanup_add(plat) != 0)
        rc = cmd_usage_error("out of memory");
    else if ((rc = open_output(&of, out)) == 0 && of.tmp != NULL && !shard)
        manifest_note(of.tmp);
    cs_error_init(&err);
    if (rc == 0 && (shard ? cs_sweeprun_shard : cs_sweeprun_point)(sw, k, plat, of.fp, &err) != 0) {
        rc = cmd_usage_error("point %ld: %s", k, cs_error_format(&err, msg, sizeof(msg)));
        cs_outfile_discard(&of);
    } else if (rc == 0) {
        rc = close_output(&of);
    }
    clean_dir(work, 1);
    rmdir(work);
    cs_cleanup_drop(plat);
    cs_cleanup_drop(work);
    return rc;
}

/* A point run by a forked worker (cs_spawn_fn). */
struct point_job {
    const struct cs_sweep *sw;
    long k;
    const char *out;
    const sigset_t *mask; /* the signal mask to run with (the parent holds the stop signals) */
};

static int point_main(void *ctx)
{
    const struct point_job *job = ctx;

    cs_signals_release(job->mask);
    return run_point(job->sw, job->k, job->out, 0);
}

/* --- joining point files -------------------------------------------------------------------- */

static void say_repeat(void *ctx, long point, int first, int file)
{
    char *const *files = ctx;

    if (!quiet)
        fprintf(stderr, "collsim: point %ld: in %s and %s (same rows, kept once)\n", point,
                files[first], files[file]);
}

/* Write t to out ("-": stdout) through cs_outfile_open. 0, or an exit code. */
static int write_table(const struct cs_table *t, const char *out)
{
    struct cs_outfile of;

    if (open_output(&of, out) != 0)
        return CS_EXIT_USAGE;
    cs_table_write(t, of.fp); /* a failed write fails the close */
    return close_output(&of);
}

/* For merged shards: exit 2 naming the points missing among those the shards' npoints column
 * counts (or, in shards without it, below the last point), else 0. */
static int check_missing(const struct cs_table *t, const struct cs_sweepcsv_join *info)
{
    char list[512];
    long n = cs_sweepcsv_missing(t, info->total, list, sizeof(list));
    long last = info->total >= 0 ? info->total - 1 : info->max_point;

    if (n > 0)
        return cmd_usage_error("sweep --merge: %ld of points 0..%ld missing: %s", n, last, list);
    if (info->total < 0 && !quiet)
        fprintf(stderr,
                "collsim: warning: shards without an npoints column (written by an older "
                "collsim): points after %ld cannot be checked\n",
                info->max_point);
    return 0;
}

/* Join sweep CSVs (point files or shards) into out ("-": stdout), ordered by point (see
 * cs_sweepcsv_join). shards: refuse missing points (check_missing). An exit code. */
static int merge_files(char **files, int nfiles, const char *out, int shards)
{
    struct cs_table **tabs = calloc((size_t)nfiles, sizeof(*tabs)), *t = NULL;
    struct cs_sweepcsv_join info;
    struct cs_error err;
    int rc = tabs ? 0 : CS_ERR_NOMEM;

    cs_error_init(&err);
    for (int f = 0; rc == 0 && f < nfiles; f++)
        rc = cs_table_read(files[f], &tabs[f], &err);
    if (rc == 0)
        rc = cs_sweepcsv_join(tabs, (const char *const *)files, nfiles, say_repeat, files, &t,
                              &info, &err);
    for (int f = 0; tabs != NULL && f < nfiles; f++)
        cs_table_free(tabs[f]);
    free(tabs);
    if (rc != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if ((rc = shards ? check_missing(t, &info) : 0) == 0)
        rc = write_table(t, out);
    cs_table_free(t);
    if (rc != 0)
        return rc;
    if (!quiet) {
        fprintf(stderr, "collsim: %ld points, %ld rows", info.npoints, info.nrows);
        if (info.ndeadlock)
            fprintf(stderr, ", %ld deadlocked or hung", info.ndeadlock);
        fputc('\n', stderr);
    }
    return CS_EXIT_OK;
}

/* --- the whole sweep ------------------------------------------------------------------------ */

/* A folder without a sweep's signature becomes a results folder only when it is new or empty
 * (its lock aside): nothing there was written by a sweep. 0, or 1 after a message naming an entry.
 */
static int foreign_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = 0;

    while (d != NULL && rc == 0 && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, ".lock") != 0 && strcmp(e->d_name, MANIFEST) != 0) {
            cmd_usage_error("%s holds %s, and no sweep.sig: it is not a sweep's results folder "
                            "(a sweep writes into a new or empty one); give another --results",
                            dir, e->d_name);
            rc = 1;
        }
    if (d != NULL)
        closedir(d);
    return rc;
}

/* The finished points of dir that read the file of key = val: removed, to be run again (their
 * rows were made from what the file held before). The count removed. */
static long drop_points_of(const struct cs_sweep *sw, const char *dir, const char *key,
                           const char *val)
{
    const char *vals[CS_SWEEP_MAX_KEYS], *v;
    char path[PATH_LEN + 32];
    long n = 0;

    for (long k = 0; k < sw->npoints; k++) {
        if (cs_sweep_point(sw, k, vals) != 0 || (v = cs_sweep_value(sw, vals, key)) == NULL ||
            strcmp(v, val) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/point-%ld.csv", dir, k);
        n += unlink(path) == 0;
    }
    return n;
}

/* Whether dir holds results of this sweep: its sweep.sig (the CSV header and the sizes, written
 * by the first run) must match; after them it lists each schedule and platform file by content
 * (FNV-1a), and the finished points that read a file changed since are removed, to run again.
 * 0, or an exit code after a message. */
static int check_signature(const struct cs_sweep *sw, const char *dir)
{
    char *want = NULL, *have = NULL, path[PATH_LEN + 16];
    size_t wlen = 0, hlen = 0, head;
    FILE *fp = open_memstream(&want, &wlen);
    struct cs_outfile of;
    struct cs_error e;
    long dropped = 0;
    int same;

    if (fp == NULL)
        return cmd_usage_error("out of memory");
    cs_sweeprun_header(sw, fp);
    fputs("sizes", fp);
    for (int z = 0; z < sw->nsizes; z++)
        fprintf(fp, " %lld..%lldx%g", sw->sizes[z].min_bytes, sw->sizes[z].max_bytes,
                sw->sizes[z].factor);
    fputc('\n', fp);
    fflush(fp);
    head = wlen; /* what must match; the file lines after it say which points to run again */
    for (int a = 0; a < sw->naxes; a++)
        for (int j = 0; j < sw->axes[a].nkeys; j++) {
            const char *key = sw->keys[sw->axes[a].keys[j]];

            if (strcmp(key, "schedule") != 0 && strcmp(key, "platform") != 0)
                continue;
            for (int v = 0; v < sw->axes[a].nvals; v++) {
                const char *val = sw->axes[a].vals[v * sw->axes[a].nkeys + j];
                char file[PATH_LEN], hex[17];
                struct stat st;

                cs_error_init(&e);
                if (strcmp(val, "-") == 0 || cs_sweep_path(sw, val, file, sizeof(file)) != 0)
                    continue;
                /* a FIFO or device reads once: it is not hashed, its points never dropped */
                if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
                    snprintf(hex, sizeof(hex), "-");
                else if (cs_predict_file_hash(file, hex, &e) != 0)
                    snprintf(hex, sizeof(hex), "-");
                fprintf(fp, "file %s %s %s\n", key, val, hex);
            }
        }
    if (fclose(fp) != 0 || want == NULL) {
        free(want);
        return cmd_usage_error("out of memory");
    }
    snprintf(path, sizeof(path), "%s/sweep.sig", dir);
    if ((fp = cs_fopen_read(path)) == NULL && foreign_entries(dir) != 0) {
        free(want);
        return CS_EXIT_USAGE;
    }
    if (fp != NULL) {
        /* read as the sweep's own state, not as an input (it is rewritten below) */
        FILE *hm = open_memstream(&have, &hlen);
        char buf[8192];
        size_t got;

        while (hm != NULL && (got = fread(buf, 1, sizeof(buf), fp)) > 0)
            fwrite(buf, 1, got, hm);
        fclose(fp);
        if (hm == NULL || fclose(hm) != 0 || have == NULL) {
            free(want);
            return cmd_usage_error("out of memory");
        }
        if (hlen < head || memcmp(have, want, head) != 0 ||
            (hlen > head && strncmp(have + head, "file ", 5) != 0)) {
            free(have);
            free(want);
            return cmd_usage_error("%s holds results of a sweep with other keys or sizes; give "
                                   "another --results directory or remove it",
                                   dir);
        }
        /* each file line of this run against the first run's: a file whose content changed
         * (or that the first run did not list) drops the finished points that read it */
        for (const char *l = want + head; *l != '\0';) {
            const char *end = strchr(l, '\n'), *hash, *h;
            size_t kl, ll;

            end = end ? end : l + strlen(l);
            ll = (size_t)(end - l);
            for (hash = end; hash > l && hash[-1] != ' ';)
                hash--;
            kl = (size_t)(hash - l); /* "file KEY VAL " */
            for (h = have + head; *h != '\0' && strncmp(h, l, kl) != 0;) {
                const char *n = strchr(h, '\n');

                h = n ? n + 1 : h + strlen(h);
            }
            if (*hash != '-' &&
                (*h == '\0' || strncmp(h, l, ll) != 0 || (h[ll] != '\n' && h[ll] != '\0'))) {
                char key[64], val[PATH_LEN];

                if (sscanf(l, "file %63s %4095s", key, val) == 2)
                    dropped += drop_points_of(sw, dir, key, val);
            }
            l = *end ? end + 1 : end;
        }
        same = hlen == wlen && memcmp(have, want, wlen) == 0;
        free(have);
        if (dropped > 0)
            fprintf(stderr,
                    "collsim: sweep: %ld finished point%s read a schedule or platform that has "
                    "changed since: %s run again\n",
                    dropped, dropped == 1 ? "" : "s", dropped == 1 ? "it is" : "they are");
        if (same) {
            free(want);
            return 0;
        }
    }
    if (open_output(&of, path) != 0) {
        free(want);
        return CS_EXIT_USAGE;
    }
    fwrite(want, 1, wlen, of.fp); /* a failed write fails the close */
    free(want);
    return close_output(&of);
}

/* A worker slot: the pid running a point, 0 when free. */
struct slot {
    pid_t pid;
    long point;
};

/* The points of a sweep being run into a results directory by jobs workers at a time. */
struct pool {
    const struct cs_sweep *sw;
    const char *dir;
    int jobs, running;
    long n, done, failed, next;
    struct slot *slots; /* one per worker */
    char *done_before;  /* per point: whether an earlier run finished it */
    struct cs_progress prog;
};

/* Show the progress when it is due. */
static void progress(struct pool *p)
{
    char extra[64];

    snprintf(extra, sizeof(extra), "%d running, %ld failed", p->running, p->failed);
    cs_progress_update(&p->prog, p->done, extra);
}

static void point_path(const struct pool *p, long k, char *buf, size_t len)
{
    snprintf(buf, len, "%s/point-%ld.csv", p->dir, k);
}

/* Mark the points whose files a killed or finished run left. 0, or an exit code when a file there
 * holds something else. */
static int find_done(struct pool *p, const char *spec)
{
    char path[PATH_LEN + 64];
    struct cs_error err;

    cs_error_init(&err);
    for (long k = 0; k < p->n; k++) {
        struct cs_table *t = NULL;
        int ok;

        point_path(p, k, path, sizeof(path));
        if (access(path, F_OK) != 0)
            continue;
        ok = cs_table_read(path, &t, &err) == 0 && cs_sweepcsv_check_point(p->sw, k, t) == 0;
        cs_table_free(t);
        if (!ok)
            return cmd_usage_error("%s does not hold point %ld of %s; give another --results "
                                   "directory or remove it",
                                   path, k, spec);
        p->done_before[k] = 1;
        p->done++;
        cs_progress_skip(&p->prog, 1);
    }
    if (!quiet && p->done > 0)
        fprintf(stderr, "collsim: %s: %ld of %ld points already done\n", p->dir, p->done, p->n);
    return 0;
}

/* Start pending points while a slot is free. */
static void start_points(struct pool *p)
{
    char path[PATH_LEN + 64];

    while (p->running < p->jobs && p->next < p->n) {
        struct point_job job = {p->sw, p->next, path, NULL};
        sigset_t mask;
        int s = 0;
        pid_t pid;

        if (p->done_before[p->next]) {
            p->next++;
            continue;
        }
        point_path(p, p->next, path, sizeof(path));
        while (p->slots[s].pid != 0)
            s++;
        /* a stop signal waits until the worker's pid is in its slot, for on_stop to stop it */
        cs_signals_hold(&mask);
        job.mask = &mask;
        if ((pid = cs_spawn_fn(point_main, &job, NULL, NULL)) < 0) {
            cs_signals_release(&mask);
            fprintf(stderr, "collsim: cannot start a worker process: %s\n", strerror(errno));
            p->next++;
            p->failed++;
            continue;
        }
        p->slots[s].pid = pid;
        p->slots[s].point = p->next++;
        p->running++;
        cs_signals_release(&mask);
    }
}

/* Wait for a worker; unless --quiet, show the progress meanwhile when it is due. */
static pid_t wait_worker(struct pool *p, int *st)
{
    pid_t pid;

    if (p->prog.fp == NULL)
        return waitpid(-1, st, 0);
    while ((pid = waitpid(-1, st, WNOHANG)) == 0) {
        struct timespec ts = {0, 200 * 1000 * 1000};

        nanosleep(&ts, NULL);
        progress(p);
    }
    return pid;
}

/* Record how the worker pid ended. */
static void finish_worker(struct pool *p, pid_t pid, int st)
{
    for (int s = 0; s < p->jobs; s++) {
        long k = p->slots[s].point;

        if (p->slots[s].pid != pid)
            continue;
        p->slots[s].pid = 0;
        p->running--;
        if (cs_spawn_code(st) == 0) {
            p->done++;
            continue;
        }
        p->failed++;
        cs_progress_clear(&p->prog);
        fprintf(stderr, "collsim: point %ld failed (exit %d)\n", k, cs_spawn_code(st));
    }
}

/* Run every pending point, jobs at a time. */
static void run_points(struct pool *p)
{
    for (;;) {
        int st;
        pid_t pid;

        start_points(p);
        progress(p);
        if (p->running == 0)
            break;
        pid = wait_worker(p, &st);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        finish_worker(p, pid, st);
    }
    cs_progress_end(&p->prog);
}

/* The running sweep's worker slots, for on_stop. */
static struct slot *volatile stop_slots;
static volatile int stop_nslots;
static volatile pid_t stop_parent;

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (int)(sizeof(stop_signals) / sizeof(stop_signals[0]))

/* SIGINT, SIGTERM or SIGHUP to the sweep: stop its workers with SIGTERM, so that each removes its
 * temporary files and work directory (cs_cleanup_add) instead of dying of SIGKILL with its parent,
 * wait for them, then die of the signal. A worker that inherited this handler just dies. */
static void on_stop(int sig)
{
    if (getpid() == stop_parent && stop_slots != NULL) {
        for (int s = 0; s < stop_nslots; s++)
            if (stop_slots[s].pid > 0)
                kill(stop_slots[s].pid, SIGTERM);
        for (int s = 0; s < stop_nslots; s++)
            if (stop_slots[s].pid > 0)
                waitpid(stop_slots[s].pid, NULL, 0);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Install on_stop for p's workers (stop: 1), or put back the handlers it replaced (0). */
static void catch_stop(struct pool *p, int stop, struct sigaction *old)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NSTOP; k++)
        sigaddset(&sa.sa_mask, stop_signals[k]);
    if (stop) {
        stop_parent = getpid();
        stop_nslots = p->jobs;
        stop_slots = p->slots;
    }
    for (int k = 0; k < NSTOP; k++) {
        if (stop && sigaction(stop_signals[k], NULL, &old[k]) == 0 && old[k].sa_handler != SIG_IGN)
            sigaction(stop_signals[k], &sa, NULL);
        else if (!stop && old[k].sa_handler != SIG_IGN)
            sigaction(stop_signals[k], &old[k], NULL);
    }
    if (!stop)
        stop_slots = NULL;
}

/* Join the point files of a finished sweep into out. Returns an exit code. */
static int join_points(const struct pool *p, const char *out)
{
    size_t len = strlen(p->dir) + 32;
    char **files = calloc((size_t)p->n, sizeof(char *)), *paths = malloc((size_t)p->n * len);
    int rc = CS_EXIT_USAGE;

    if (files != NULL && paths != NULL) {
        for (long k = 0; k < p->n; k++) {
            files[k] = paths + (size_t)k * len;
            point_path(p, k, files[k], len);
        }
        rc = merge_files(files, (int)p->n, out, 0);
    }
    free(files);
    free(paths);
    return rc;
}

/* Lock a results directory (created if needed) for this sweep: one sweep per directory. The lock
 * is inherited by the workers on purpose: while any of them still runs (its parent was killed),
 * a new sweep may not start here. The lock's descriptor, or -1 after a message. */
static int lock_results(const char *dir)
{
    char lockp[PATH_LEN + 16];
    int fd;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "collsim: %s: cannot create: %s\n", dir, strerror(errno));
        return -1;
    }
    snprintf(lockp, sizeof(lockp), "%s/.lock", dir);
    if ((fd = open(lockp, O_RDWR | O_CREAT, 0644)) < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr, "collsim: %s: %s\n", dir,
                fd < 0 ? strerror(errno) : "another sweep is running in this directory");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int run_sweep(const struct cs_sweep *sw, const char *spec, const char *dir, int jobs,
                     const char *out)
{
    struct pool p = {.sw = sw, .dir = dir, .jobs = jobs, .n = sw->npoints};
    struct cs_error err;
    int lockfd, rc = CS_EXIT_USAGE;

    cs_error_init(&err);
    p.slots = calloc((size_t)jobs, sizeof(*p.slots));
    p.done_before = calloc((size_t)p.n, 1);
    if (cs_progress_start(&p.prog, "sweep", "points", p.n, quiet, &err) != 0) {
        cmd_print_error(&err);
        goto out;
    }
    if (p.slots == NULL || p.done_before == NULL || (lockfd = lock_results(dir)) < 0)
        goto out;
    if (check_signature(sw, dir) == 0) {
        clean_dir(dir, 0);
        if (find_done(&p, spec) == 0) {
            struct sigaction old[NSTOP];

            catch_stop(&p, 1, old);
            run_points(&p);
            catch_stop(&p, 0, old);
            if (p.running == 0) { /* every worker gone, each having removed what it wrote */
                char mp[PATH_LEN + 16];

                snprintf(mp, sizeof(mp), "%s/" MANIFEST, dir);
                unlink(mp);
            }
            if (p.failed > 0)
                fprintf(stderr,
                        "collsim: %ld of %ld points failed; the others are kept in %s: fix the "
                        "cause and run the same command again to finish\n",
                        p.failed, p.n, dir);
            else
                rc = join_points(&p, out);
        }
    }
    close(lockfd);
out:
    free(p.slots);
    free(p.done_before);
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
    char exe[PATH_MAX], abs[PATH_MAX], shard[PATH_LEN + 64];

    /* the listed commands run this very binary */
    if (realpath("/proc/self/exe", exe) == NULL || realpath(spec, abs) == NULL)
        return cmd_usage_error("%s: %s", spec, strerror(errno));
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

struct sweep_args {
    const char *spec, *out, *results, *point_out, *shard_dir;
    long long point, jobs;
    int list, merge;
};

enum { OPT_LIST = 256, OPT_RESULTS, OPT_POINT, OPT_OUT, OPT_SHARD_DIR, OPT_MERGE };

static const struct option sweep_opts[] = {
    {"jobs", required_argument, NULL, 'j'},
    {"quiet", no_argument, NULL, 'q'},
    {"list", no_argument, NULL, OPT_LIST},
    {"results", required_argument, NULL, OPT_RESULTS},
    {"point", required_argument, NULL, OPT_POINT},
    {"out", required_argument, NULL, OPT_OUT},
    {"shard-dir", required_argument, NULL, OPT_SHARD_DIR},
    {"merge", no_argument, NULL, OPT_MERGE},
    {NULL, 0, NULL, 0},
};

static int jobs_given; /* -j on the command line */

/* One option into a; 0, or an exit code. */
static int take_option(void *ctx, int c, const char *v)
{
    struct sweep_args *a = ctx;

    if (c == 'j') {
        jobs_given = 1;
        return cmd_opt_ll("-j", v, 1, 1024, &a->jobs, "a number of processes in 1..1024");
    }
    if (c == OPT_POINT)
        return cmd_opt_ll("--point", v, 0, CS_SWEEP_MAX_POINTS, &a->point, "a point number");
    if (c == 'q')
        quiet = 1;
    else if (c == 'o')
        a->out = v;
    else if (c == OPT_LIST)
        a->list = 1;
    else if (c == OPT_RESULTS)
        a->results = v;
    else if (c == OPT_OUT)
        a->point_out = v;
    else if (c == OPT_SHARD_DIR)
        a->shard_dir = v;
    else if (c == OPT_MERGE)
        a->merge = 1;
    else
        return CS_EXIT_USAGE;
    return 0;
}

/* Options, then the sweep file (or, with --merge, the output and the shards from optind). */
static int parse_args(int argc, char **argv, struct sweep_args *a)
{
    int rc;

    memset(a, 0, sizeof(*a));
    a->out = "-";
    a->shard_dir = ".";
    a->point = -1;
    a->jobs = sysconf(_SC_NPROCESSORS_ONLN);
    quiet = jobs_given = 0;
    if ((rc = cmd_getopts(argc, argv, "j:qo:", sweep_opts, take_option, a)) != 0)
        return rc;
    if (a->merge)
        return argc - optind < 2
                   ? cmd_usage_error("usage: collsim sweep --merge OUT.csv SHARD.csv...")
                   : 0;
    if (optind == argc)
        return cmd_usage_error("sweep: no sweep file; see 'collsim help sweep'");
    if (argc - optind > 1)
        return cmd_usage_error("sweep: one sweep file only ('%s' and '%s')", argv[optind],
                               argv[optind + 1]);
    a->spec = argv[optind];
    if ((a->point >= 0) != (a->point_out != NULL))
        return cmd_usage_error("sweep: --point K and --out FILE go together");
    if (a->point >= 0 && (strcmp(a->out, "-") != 0 || a->results != NULL || jobs_given || a->list))
        return cmd_usage_error("sweep: --point K --out FILE runs one point into FILE; -o, "
                               "--results, -j and --list are for the whole sweep");
    if (a->jobs < 1)
        a->jobs = 1;
    return 0;
}

/* Files named in the sweep must exist before anything runs. 0, or an exit code. */
static int check_files(const struct cs_sweep *sw, const char *spec)
{
    for (int x = 0; x < sw->naxes; x++)
        for (int j = 0; j < sw->axes[x].nkeys; j++) {
            const char *key = sw->keys[sw->axes[x].keys[j]];

            if (strcmp(key, "schedule") != 0 && strcmp(key, "platform") != 0)
                continue;
            for (int v = 0; v < sw->axes[x].nvals; v++) {
                char p[PATH_LEN];

                cs_sweep_path(sw, sw->axes[x].vals[v * sw->axes[x].nkeys + j], p, sizeof(p));
                if (access(p, R_OK) != 0)
                    return cmd_usage_error("%s:%d: %s '%s': %s", spec, sw->axes[x].line, key, p,
                                           strerror(errno));
            }
        }
    return 0;
}

/* Every point's platform keys, before any point runs: a key that does not apply to its family
 * (or an unknown family) fails the sweep once, not once per point. */
static int check_platform_keys(const struct cs_sweep *sw)
{
    const char *vals[CS_SWEEP_MAX_KEYS];

    if (cs_sweep_find_key(sw, "platform.family") < 0)
        return 0;
    for (long k = 0; k < sw->npoints; k++) {
        struct cs_platform_spec spec;
        struct cs_params params;
        struct cs_error err;

        cs_error_init(&err);
        if (cs_sweep_point(sw, k, vals) != 0 ||
            cs_sweeprun_platform(sw, vals, &spec, &params, &err) != 0) {
            char buf[2048];

            fprintf(stderr, "collsim: %s (point %ld; no point was run)\n",
                    cs_error_format(&err, buf, sizeof(buf)), k);
            return CS_EXIT_USAGE;
        }
    }
    return 0;
}

/* ./NAME.results for a sweep file NAME.sweep. */
static void default_results(const char *spec, char *buf, size_t len)
{
    const char *b = strrchr(spec, '/');
    char *dot;

    snprintf(buf, len, "%s", b ? b + 1 : spec);
    if ((dot = strrchr(buf, '.')) != NULL && dot != buf)
        *dot = '\0';
    strncat(buf, ".results", len - strlen(buf) - 1);
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_args a;
    struct cs_sweep *sw = NULL;
    struct cs_error err;
    char dirbuf[PATH_LEN];
    int rc = parse_args(argc, argv, &a);

    if (rc != 0)
        return rc;
    if (a.merge)
        return merge_files(argv + optind + 1, argc - optind - 1, argv[optind], 1);
    cs_error_init(&err);
    if (cs_sweep_read(a.spec, &sw, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    if (check_files(sw, a.spec) != 0 || check_platform_keys(sw) != 0) {
        rc = CS_EXIT_USAGE;
    } else if (a.list) {
        rc = list_points(sw, a.spec, a.shard_dir);
    } else if (a.point >= sw->npoints) {
        rc = cmd_usage_error("sweep: %s has %ld points (0..%ld); no point %lld", a.spec,
                             sw->npoints, sw->npoints - 1, a.point);
    } else if (a.point >= 0) {
        rc = run_point(sw, (long)a.point, a.point_out, 1);
    } else {
        if (a.results == NULL)
            default_results(a.spec, dirbuf, sizeof(dirbuf));
        rc = run_sweep(sw, a.spec, a.results ? a.results : dirbuf, (int)a.jobs, a.out);
    }
    cs_sweep_free(sw);
    return rc;
}
