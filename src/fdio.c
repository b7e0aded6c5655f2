/* fdio.c: whole-buffer reads and writes on file descriptors, whole-file reads, and output files
 * replaced only when complete. */
#define _GNU_SOURCE /* fopencookie */
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Move all len bytes between fd and buf, in the direction `writing` says, retrying on EINTR and
 * short transfers. 0, or -1 on error, a closed pipe or an early EOF. */
static int transfer(int fd, char *buf, size_t len, int writing)
{
    while (len > 0) {
        ssize_t n = writing ? write(fd, buf, len) : read(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int cs_fd_write_all(int fd, const void *buf, size_t len)
{
    return transfer(fd, (char *)buf, len, 1);
}

int cs_fd_read_all(int fd, void *buf, size_t len)
{
    return transfer(fd, buf, len, 0);
}

/* Read fp to its end, or to just past max bytes, into a new NUL-terminated buffer. */
static int read_stream(FILE *fp, size_t max, char **buf, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);

    if (b == NULL)
        return CS_ERR_NOMEM;
    for (;;) {
        size_t got;

        if (n == cap) {
            char *nb;

            if (cap > max)
                break;
            cap *= 2;
            if ((nb = realloc(b, cap + 1)) == NULL) {
                free(b);
                return CS_ERR_NOMEM;
            }
            b = nb;
        }
        got = fread(b + n, 1, cap - n, fp);
        n += got;
        if (got == 0 && ferror(fp)) {
            free(b);
            return CS_ERR_IO;
        }
        if (got == 0)
            break;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

/* --- the inputs of this run, which no output may replace ---------------------------------------
 */

#define MAX_INPUTS 256
static struct input {
    dev_t dev;
    ino_t ino;
} inputs[MAX_INPUTS], written[MAX_INPUTS];
static int ninputs, nwritten;

/* What this run wrote itself (a platform written, then read back) is no input of it. */
static void note_written(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return;
    if (nwritten == MAX_INPUTS)
        nwritten = 0; /* the oldest go first: a long fit writes the same few files again */
    written[nwritten++] = (struct input){st.st_dev, st.st_ino};
}

void cs_input_note(const char *path)
{
    struct stat st;

    if (path == NULL || strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    for (int i = 0; i < nwritten; i++)
        if (written[i].dev == st.st_dev && written[i].ino == st.st_ino)
            return;
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino)
            return;
    if (ninputs < MAX_INPUTS)
        inputs[ninputs++] = (struct input){st.st_dev, st.st_ino};
}

void cs_input_forget(const char *path)
{
    struct stat st;

    if (path == NULL || stat(path, &st) != 0)
        return;
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino)
            inputs[i--] = inputs[--ninputs];
}

/* Whether st is a file this run read (cs_input_note). */
static int is_input(const struct stat *st)
{
    for (int i = 0; i < ninputs; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
            return 1;
    return 0;
}

FILE *cs_fopen_read(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), fl, e;
    FILE *fp;

    if (fd < 0)
        return NULL;
    if ((fl = fcntl(fd, F_GETFL)) >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 &&
        (fp = fdopen(fd, "rb")) != NULL)
        return fp;
    e = errno;
    close(fd);
    errno = e;
    return NULL;
}

int cs_file_read(const char *path, long max_bytes, char **buf, size_t *len, struct cs_error *err)
{
    int is_stdin = strcmp(path, "-") == 0, rc;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *fp = is_stdin ? stdin : cs_fopen_read(path);
    char *b;
    size_t n;

    if (fp == NULL)
        return cs_error_fail(err, CS_ERR_IO, name, 0, "cannot open: %s", strerror(errno));
    if (!is_stdin)
        cs_input_note(path);
    errno = 0;
    rc = read_stream(fp, (size_t)max_bytes, &b, &n);
    if (rc == CS_ERR_IO)
        cs_error_set(err, name, 0, "read error: %s", strerror(errno ? errno : EIO));
    if (!is_stdin)
        fclose(fp);
    if (rc != 0)
        return rc;
    if (n > (size_t)max_bytes) {
        free(b);
        return cs_error_fail(err, CS_ERR_INVALID, name, 0, "file is larger than %ld bytes",
                             max_bytes);
    }
    *buf = b;
    *len = n;
    return 0;
}

/* --- removal of temporary files on a signal -------------------------------------------------- */

#define CLEANUP_MAX 4096

/* A stack of paths to remove, each with the process that added it: a forked child inherits its
 * parent's entries but must not remove them. Changed only with the signals below blocked. */
static const char *volatile cleanup_paths[CLEANUP_MAX];
static volatile pid_t cleanup_pids[CLEANUP_MAX];
static volatile int cleanup_n;

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIGNALS (int)(sizeof(cleanup_signals) / sizeof(cleanup_signals[0]))
static struct sigaction cleanup_old[NSIGNALS];

/* Remove this process's paths, newest first, then do what the signal did before: the previous
 * handler, or the default action (the process dies of the signal, as it would have). */
static void on_signal(int sig, siginfo_t *info, void *ctx)
{
    pid_t self = getpid();
    int saved = errno;

    for (int i = cleanup_n - 1; i >= 0; i--)
        if (cleanup_pids[i] == self && unlink(cleanup_paths[i]) != 0)
            rmdir(cleanup_paths[i]);
    for (int k = 0; k < NSIGNALS; k++) {
        const struct sigaction *old = &cleanup_old[k];

        if (cleanup_signals[k] != sig)
            continue;
        if (old->sa_flags & SA_SIGINFO) {
            old->sa_sigaction(sig, info, ctx);
        } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
            old->sa_handler(sig);
        } else {
            /* the signal stays blocked until this handler returns, then kills the process */
            signal(sig, SIG_DFL);
            raise(sig);
        }
    }
    errno = saved;
}

static void block_signals(sigset_t *old)
{
    sigset_t set;

    sigemptyset(&set);
    for (int k = 0; k < NSIGNALS; k++)
        sigaddset(&set, cleanup_signals[k]);
    sigprocmask(SIG_BLOCK, &set, old);
}

/* Install on_signal for the signals this process does not ignore, where another handler has
 * taken its place since (or in the parent this process was forked from): that one is chained. */
static void install_handler(void)
{
    struct sigaction sa, cur;

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NSIGNALS; k++)
        sigaddset(&sa.sa_mask, cleanup_signals[k]);
    for (int k = 0; k < NSIGNALS; k++) {
        if (sigaction(cleanup_signals[k], NULL, &cur) != 0 || cur.sa_handler == SIG_IGN ||
            ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal))
            continue;
        cleanup_old[k] = cur;
        sigaction(cleanup_signals[k], &sa, NULL);
    }
}

int cs_cleanup_add(const char *path)
{
    sigset_t old;
    int rc = 0;

    block_signals(&old);
    install_handler();
    if (cleanup_n == CLEANUP_MAX) {
        rc = CS_ERR_NOMEM;
    } else {
        cleanup_paths[cleanup_n] = path;
        cleanup_pids[cleanup_n] = getpid();
        cleanup_n++;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void cs_cleanup_drop(const char *path)
{
    sigset_t old;
    pid_t self = getpid();

    block_signals(&old);
    for (int i = cleanup_n - 1; i >= 0; i--) {
        if (cleanup_paths[i] != path || cleanup_pids[i] != self)
            continue;
        for (int j = i; j + 1 < cleanup_n; j++) {
            cleanup_paths[j] = cleanup_paths[j + 1];
            cleanup_pids[j] = cleanup_pids[j + 1];
        }
        cleanup_n--;
        break;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

int cs_cleanup_mkdtemp(char *tmpl)
{
    sigset_t old;
    int rc = 0;

    block_signals(&old);
    if (mkdtemp(tmpl) == NULL) {
        rc = -1;
    } else if (cs_cleanup_add(tmpl) != 0) {
        rmdir(tmpl);
        errno = ENOMEM;
        rc = -1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int cs_cleanup_mkstemps(char *tmpl, int suffixlen)
{
    sigset_t old;
    int fd;

    block_signals(&old);
    if ((fd = mkstemps(tmpl, suffixlen)) >= 0 && cs_cleanup_add(tmpl) != 0) {
        close(fd);
        unlink(tmpl);
        errno = ENOMEM;
        fd = -1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return fd;
}

void cs_signals_hold(sigset_t *old)
{
    block_signals(old);
}

void cs_signals_release(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

/* --- output files ----------------------------------------------------------------------------- */

/* fopencookie's write for an output: all n bytes to out->fd, remembering why a write failed. */
static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
    struct cs_outfile *out = cookie;

    if (cs_fd_write_all(out->fd, buf, n) == 0)
        return (ssize_t)n;
    if (out->werrno == 0)
        out->werrno = errno ? errno : EIO;
    return -1;
}

static int cookie_close(void *cookie)
{
    struct cs_outfile *out = cookie;

    if (close(out->fd) == 0)
        return 0;
    if (out->werrno == 0)
        out->werrno = errno;
    return -1;
}

/* A write error's reason: errno of the failed call, or of the first failed write. */
static const char *write_error(const struct cs_outfile *out, int bad)
{
    if (out->werrno != 0)
        return strerror(out->werrno);
    return bad > 0 ? strerror(bad) : "write error";
}

/* Free what out holds, after its stream is closed. */
static void release(struct cs_outfile *out)
{
    if (out->tmp != NULL)
        cs_cleanup_drop(out->tmp);
    free(out->name);
    free(out->target);
    free(out->tmp);
    memset(out, 0, sizeof(*out));
}

/* Create out->tmp beside out->target: NAME.tmp.PID, or NAME.tmp.PID.N when the process already
 * writes one there. Keeps the mode of a file it will replace (st, or NULL for a new file). A
 * descriptor, or -1 with errno set. */
static int create_temp(struct cs_outfile *out, const struct stat *st)
{
    size_t len = strlen(out->target) + 48;
    int fd = -1;

    if ((out->tmp = malloc(len)) == NULL)
        return -1;
    for (int n = 0; n < 100 && fd < 0; n++) {
        if (n == 0)
            snprintf(out->tmp, len, "%s.tmp.%ld", out->target, (long)getpid());
        else
            snprintf(out->tmp, len, "%s.tmp.%ld.%d", out->target, (long)getpid(), n);
        if (cs_cleanup_add(out->tmp) != 0) {
            errno = ENOMEM;
            break;
        }
        fd = open(out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0)
            cs_cleanup_drop(out->tmp);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        free(out->tmp);
        out->tmp = NULL;
        return -1;
    }
    if (st != NULL)
        (void)fchmod(fd, st->st_mode & 07777); /* best effort: the umask's mode otherwise */
    return fd;
}

int cs_outfile_open(struct cs_outfile *out, const char *path, struct cs_error *err)
{
    int to_stdout = strcmp(path, "-") == 0, fd = -1, rc;
    struct stat st;
    const char *why = NULL;

    memset(out, 0, sizeof(*out));
    if (path[0] == '\0') /* as -o "": no file to name in the message */
        return cs_error_fail(err, CS_ERR_IO, NULL, 0, "cannot write: the output path is empty");
    if ((out->name = strdup(to_stdout ? "<stdout>" : path)) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, path, 0, "out of memory");
    if (to_stdout) {
        out->fp = stdout;
        return 0;
    }
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        /* /dev/stdout on a pipe links to "pipe:[N]", no path: what it opens is still there */
        if ((out->target = realpath(path, NULL)) == NULL && errno == ENOENT) {
            if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
                out->target = strdup(path);
            else
                why = "symlink to a missing file";
        }
    } else {
        out->target = strdup(path);
    }
    if (why == NULL && out->target == NULL) {
        why = strerror(errno);
    } else if (why == NULL && stat(out->target, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            why = "is a directory";
        else if (S_ISREG(st.st_mode) && is_input(&st))
            why = "it is one of this command's inputs (give another output)";
        else if (S_ISREG(st.st_mode))
            fd = create_temp(out, &st);
        else /* a device, FIFO or socket: written in place, never replaced or truncated */
            fd = open(out->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    } else if (why == NULL && errno == ENOENT) {
        fd = create_temp(out, NULL);
    }
    if (why == NULL && fd < 0)
        why = strerror(errno);
    if (why == NULL) {
        cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};

        out->fd = fd;
        if ((out->fp = fopencookie(out, "w", io)) == NULL)
            why = strerror(errno);
    }
    if (why == NULL)
        return 0;
    rc = cs_error_fail(err, CS_ERR_IO, path, 0, "cannot write: %s", why);
    if (fd >= 0)
        close(fd);
    if (out->tmp != NULL)
        unlink(out->tmp);
    release(out);
    return rc;
}

int cs_outfile_close(struct cs_outfile *out, struct cs_error *err)
{
    int bad = 0, rc = 0;

    if (out->fp == stdout) {
        rc = cs_stream_check(stdout, out->name, err);
        release(out);
        return rc;
    }
    errno = 0;
    if (fflush(out->fp) != 0)
        bad = errno ? errno : -1;
    else if (ferror(out->fp))
        bad = -1;
    /* a temporary file must be on disk before it replaces the old one */
    if (bad == 0 && out->tmp != NULL && fsync(out->fd) != 0)
        bad = errno;
    if (fclose(out->fp) != 0 && bad == 0)
        bad = errno ? errno : -1;
    if (bad == 0 && out->tmp != NULL && rename(out->tmp, out->target) != 0)
        bad = errno;
    if (bad == 0 && out->target != NULL)
        note_written(out->target);
    if (bad != 0) {
        rc = cs_error_fail(err, CS_ERR_IO, out->name, 0, "cannot write: %s", write_error(out, bad));
        if (out->tmp != NULL)
            unlink(out->tmp);
    }
    release(out);
    return rc;
}

void cs_outfile_discard(struct cs_outfile *out)
{
    if (out->fp != NULL && out->fp != stdout)
        fclose(out->fp);
    if (out->tmp != NULL)
        unlink(out->tmp);
    release(out);
}

int cs_stream_check(FILE *fp, const char *name, struct cs_error *err)
{
    int bad = 0;

    errno = 0;
    if (fflush(fp) != 0)
        bad = errno ? errno : -1;
    else if (ferror(fp))
        bad = -1;
    if (bad == 0)
        return 0;
    clearerr(fp);
    return cs_error_fail(err, CS_ERR_IO, name, 0, "cannot write: %s",
                         bad > 0 ? strerror(bad) : "write error");
}
