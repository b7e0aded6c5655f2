/* check_fdio.c: whole-buffer pipe transfers, whole-file reads, error records and output files
 * replaced only when complete. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "runner.h"

START_TEST(test_pipe_round_trip)
{
    int fds[2], status;
    char out[300000], in[300000];
    pid_t pid;

    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)(i * 7);
    ck_assert_int_eq(pipe(fds), 0);
    if ((pid = fork()) == 0) {
        close(fds[0]);
        _exit(cs_fd_write_all(fds[1], out, sizeof(out)) == 0 ? 0 : 1);
    }
    close(fds[1]);
    ck_assert_int_eq(cs_fd_read_all(fds[0], in, sizeof(in)), 0);
    ck_assert(memcmp(in, out, sizeof(in)) == 0);
    /* the writer has closed its end: one more byte is an early EOF */
    ck_assert_int_eq(cs_fd_read_all(fds[0], in, 1), -1);
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(test_error_fail)
{
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_error_fail(&err, CS_ERR_INVALID, "a.xml", 3, "bad %s", "step"),
                     CS_ERR_INVALID);
    ck_assert_str_eq(err.file, "a.xml");
    ck_assert_int_eq(err.line, 3);
    ck_assert_str_eq(err.msg, "bad step");
    /* the first failure wins; a NULL record only returns the code */
    ck_assert_int_eq(cs_error_fail(&err, CS_ERR_IO, "b", 1, "later"), CS_ERR_IO);
    ck_assert_str_eq(err.msg, "bad step");
    ck_assert_int_eq(cs_error_fail(NULL, CS_ERR_NOMEM, "", 0, "x"), CS_ERR_NOMEM);
}
END_TEST

START_TEST(test_file_read)
{
    char path[] = "/tmp/check_fdio.XXXXXX", *buf = NULL;
    int fd = mkstemp(path);
    size_t len = 0;
    struct cs_error err;
    static char big[200000];

    ck_assert_int_ge(fd, 0);
    memset(big, 'x', sizeof(big));
    ck_assert_int_eq(cs_fd_write_all(fd, big, sizeof(big)), 0);
    close(fd);
    cs_error_init(&err);
    ck_assert_int_eq(cs_file_read(path, sizeof(big), &buf, &len, &err), 0);
    ck_assert_uint_eq(len, sizeof(big));
    ck_assert_int_eq(buf[len], '\0');
    ck_assert_int_eq(buf[len - 1], 'x');
    free(buf);
    buf = NULL;
    ck_assert_int_eq(cs_file_read(path, sizeof(big) - 1, &buf, &len, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(buf);
    ck_assert_msg(strstr(err.msg, "file is larger than 199999 bytes") != NULL, "%s", err.msg);
    ck_assert_str_eq(err.file, path);
    unlink(path);
    cs_error_init(&err);
    ck_assert_int_eq(cs_file_read(path, 10, &buf, &len, &err), CS_ERR_IO);
    ck_assert_msg(strstr(err.msg, "cannot open") != NULL, "%s", err.msg);
    cs_error_init(&err);
    ck_assert_int_eq(cs_file_read("/tmp", 10, &buf, &len, &err), CS_ERR_IO);
    ck_assert_msg(strstr(err.msg, "read error") != NULL, "%s", err.msg);
    ck_assert_ptr_null(buf);
}
END_TEST

/* A new directory for one test's files (removed by remove_dir). */
static void make_dir(char *dir)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* The number of entries in dir, and (when name is not NULL) the first one that is not keep. */
static int count_entries(const char *dir, const char *keep, char *name, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        if (name != NULL && (keep == NULL || strcmp(e->d_name, keep) != 0))
            snprintf(name, len, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

static void remove_dir(const char *dir)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The whole content of path, in buf. */
static void slurp(const char *path, char *buf, size_t len)
{
    FILE *fp = fopen(path, "r");
    size_t n;

    ck_assert_ptr_nonnull(fp);
    n = fread(buf, 1, len - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

/* Write text to path through an outfile; the close's result. */
static int write_out(const char *path, const char *text, struct cs_error *err)
{
    struct cs_outfile out;
    int rc;

    cs_error_init(err);
    if ((rc = cs_outfile_open(&out, path, err)) != 0)
        return rc;
    fputs(text, out.fp);
    return cs_outfile_close(&out, err);
}

START_TEST(test_outfile_regular)
{
    char dir[] = "/tmp/check_fdio.XXXXXX", path[256], buf[64];
    struct cs_outfile out;
    struct cs_error err;
    struct stat st;

    make_dir(dir);
    snprintf(path, sizeof(path), "%s/out.csv", dir);
    /* a new path, then a replaced file that keeps its mode */
    ck_assert_int_eq(write_out(path, "one\n", &err), 0);
    slurp(path, buf, sizeof(buf));
    ck_assert_str_eq(buf, "one\n");
    ck_assert_int_eq(chmod(path, 0640), 0);
    ck_assert_int_eq(write_out(path, "two\n", &err), 0);
    slurp(path, buf, sizeof(buf));
    ck_assert_str_eq(buf, "two\n");
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    ck_assert_int_eq(count_entries(dir, NULL, NULL, 0), 1);
    /* until closed, the old file is whole; a discarded output leaves it and no temporary file */
    cs_error_init(&err);
    ck_assert_int_eq(cs_outfile_open(&out, path, &err), 0);
    ck_assert_ptr_nonnull(out.tmp);
    fputs("three\n", out.fp);
    fflush(out.fp);
    slurp(path, buf, sizeof(buf));
    ck_assert_str_eq(buf, "two\n");
    cs_outfile_discard(&out);
    slurp(path, buf, sizeof(buf));
    ck_assert_str_eq(buf, "two\n");
    ck_assert_int_eq(count_entries(dir, NULL, NULL, 0), 1);
    remove_dir(dir);
}
END_TEST

START_TEST(test_outfile_failed_close)
{
    char dir[] = "/tmp/check_fdio.XXXXXX", path[256], left[256] = "";
    struct cs_outfile out;
    struct cs_error err;

    make_dir(dir);
    snprintf(path, sizeof(path), "%s/out.csv", dir);
    cs_error_init(&err);
    ck_assert_int_eq(cs_outfile_open(&out, path, &err), 0);
    fputs("rows\n", out.fp);
    /* the target turns into a directory meanwhile: the rename fails, the temporary file goes */
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(cs_outfile_close(&out, &err), CS_ERR_IO);
    ck_assert_str_eq(err.file, path);
    ck_assert_msg(strstr(err.msg, "cannot write") != NULL, "%s", err.msg);
    ck_assert_int_eq(count_entries(dir, "out.csv", left, sizeof(left)), 1);
    remove_dir(dir);
}
END_TEST

START_TEST(test_outfile_refused)
{
    char dir[] = "/tmp/check_fdio.XXXXXX", path[256], link[256];
    struct cs_outfile out;
    struct cs_error err;

    make_dir(dir);
    cs_error_init(&err);
    ck_assert_int_eq(cs_outfile_open(&out, dir, &err), CS_ERR_IO);
    ck_assert_msg(strstr(err.msg, "is a directory") != NULL, "%s", err.msg);
    ck_assert_str_eq(err.file, dir);
    snprintf(link, sizeof(link), "%s/dangling", dir);
    ck_assert_int_eq(symlink("no/such/file", link), 0);
    cs_error_init(&err);
    ck_assert_int_eq(cs_outfile_open(&out, link, &err), CS_ERR_IO);
    ck_assert_msg(strstr(err.msg, "symlink to a missing file") != NULL, "%s", err.msg);
    snprintf(path, sizeof(path), "%s/no/such/dir/out.csv", dir);
    cs_error_init(&err);
    ck_assert_int_eq(cs_outfile_open(&out, path, &err), CS_ERR_IO);
    ck_assert_msg(strstr(err.msg, "No such file or directory") != NULL, "%s", err.msg);
    ck_assert_int_eq(count_entries(dir, NULL, NULL, 0), 1);
    remove_dir(dir);
}
END_TEST

START_TEST(test_outfile_symlink)
{
    char dir[] = "/tmp/check_fdio.XXXXXX", sub[256], target[300], link[256], buf[64];
    struct cs_error err;
    struct stat st;

    make_dir(dir);
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    snprintf(target, sizeof(target), "%s/real.csv", sub);
    snprintf(link, sizeof(link), "%s/link.csv", dir);
    ck_assert_int_eq(write_out(target, "old\n", &err), 0);
    ck_assert_int_eq(symlink("sub/real.csv", link), 0);
    /* the link stays a link; its target gets the new content; no temporary file is left */
    ck_assert_int_eq(write_out(link, "new\n", &err), 0);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    slurp(target, buf, sizeof(buf));
    ck_assert_str_eq(buf, "new\n");
    ck_assert_int_eq(count_entries(sub, NULL, NULL, 0), 1);
    ck_assert_int_eq(count_entries(dir, NULL, NULL, 0), 2);
    remove_dir(dir);
}
END_TEST

START_TEST(test_outfile_devices)
{
    struct cs_outfile out;
    struct cs_error err;
    struct stat st;

    /* /dev/null is written in place and stays a device (replacing it needs root: run as root) */
    ck_assert_int_eq(write_out("/dev/null", "nothing\n", &err), 0);
    ck_assert_int_eq(stat("/dev/null", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    /* /dev/full fails at the close, with the reason */
    ck_assert_int_eq(write_out("/dev/full", "x\n", &err), CS_ERR_IO);
    ck_assert_str_eq(err.file, "/dev/full");
    ck_assert_msg(strstr(err.msg, "No space left on device") != NULL, "%s", err.msg);
    ck_assert_int_eq(stat("/dev/full", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    /* a write error in the middle of a large output is remembered */
    cs_error_init(&err);
    ck_assert_int_eq(cs_outfile_open(&out, "/dev/full", &err), 0);
    for (int i = 0; i < 100000; i++)
        fputs("0123456789\n", out.fp);
    ck_assert_int_eq(cs_outfile_close(&out, &err), CS_ERR_IO);
    ck_assert_msg(strstr(err.msg, "No space left on device") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(test_outfile_fifo)
{
    char dir[] = "/tmp/check_fdio.XXXXXX", fifo[256], buf[64] = "";
    struct cs_error err;
    struct stat st;
    int fd, status;
    ssize_t n;
    pid_t pid;

    make_dir(dir);
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    if ((pid = fork()) == 0)
        _exit(write_out(fifo, "through\n", &err) == 0 ? 0 : 1);
    ck_assert_int_ge(fd = open(fifo, O_RDONLY), 0);
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    ck_assert_int_eq(n, 8);
    ck_assert_str_eq(buf, "through\n");
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(lstat(fifo, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert_int_eq(count_entries(dir, NULL, NULL, 0), 1);
    remove_dir(dir);
}
END_TEST

/* A child that opens an output (and a work directory with a file, via cs_cleanup_add) and is
 * killed by sig before closing it leaves nothing behind, and dies of sig. */
START_TEST(test_outfile_signal)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    char dir[] = "/tmp/check_fdio.XXXXXX", path[256], work[256], file[256];
    int status;
    pid_t pid;

    make_dir(dir);
    snprintf(path, sizeof(path), "%s/out.csv", dir);
    snprintf(work, sizeof(work), "%s/work", dir);
    snprintf(file, sizeof(file), "%s/work/platform.xml", dir);
    if ((pid = fork()) == 0) {
        struct cs_outfile out;
        struct cs_error err;
        FILE *fp;

        /* as in collsim: no handler inherited from Check's runner */
        for (int k = 0; k < 3; k++)
            signal(sigs[k], SIG_DFL);
        cs_error_init(&err);
        if (mkdir(work, 0755) != 0 || cs_cleanup_add(work) != 0 || cs_cleanup_add(file) != 0 ||
            (fp = fopen(file, "w")) == NULL || fclose(fp) != 0 ||
            cs_outfile_open(&out, path, &err) != 0)
            _exit(3);
        fputs("half a row", out.fp);
        fflush(out.fp);
        raise(sigs[_i]);
        _exit(4);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == sigs[_i], "status %d", status);
    ck_assert_int_eq(count_entries(dir, NULL, NULL, 0), 0);
    remove_dir(dir);
}
END_TEST

static void exit_7(int sig)
{
    (void)sig;
    _exit(7);
}

/* A handler installed after the first output (as sweep's for its workers) is chained: the next
 * output puts the cleanup back in front of it, and a signal runs both. */
START_TEST(test_outfile_signal_chained)
{
    char dir[] = "/tmp/check_fdio.XXXXXX", first[256], second[256];
    int status;
    pid_t pid;

    make_dir(dir);
    snprintf(first, sizeof(first), "%s/first.csv", dir);
    snprintf(second, sizeof(second), "%s/second.csv", dir);
    if ((pid = fork()) == 0) {
        struct cs_outfile a, b;
        struct cs_error err;

        signal(SIGTERM, SIG_DFL);
        cs_error_init(&err);
        if (cs_outfile_open(&a, first, &err) != 0)
            _exit(3);
        signal(SIGTERM, exit_7);
        if (cs_outfile_open(&b, second, &err) != 0)
            _exit(3);
        raise(SIGTERM);
        _exit(4);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %d", status);
    ck_assert_int_eq(count_entries(dir, NULL, NULL, 0), 0);
    remove_dir(dir);
}
END_TEST

START_TEST(test_stream_check)
{
    FILE *fp = fopen("/dev/full", "w");
    struct cs_error err;

    ck_assert_ptr_nonnull(fp);
    cs_error_init(&err);
    fputs("x", fp);
    ck_assert_int_eq(cs_stream_check(fp, "<stdout>", &err), CS_ERR_IO);
    ck_assert_str_eq(err.file, "<stdout>");
    ck_assert_msg(strstr(err.msg, "cannot write") != NULL, "%s", err.msg);
    /* reported once */
    ck_assert_int_eq(cs_stream_check(fp, "<stdout>", NULL), 0);
    fclose(fp);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_pipe_round_trip, 1},
        {test_file_read, 1},
        {test_error_fail, 1},
        {test_outfile_regular, 1},
        {test_outfile_failed_close, 1},
        {test_outfile_refused, 1},
        {test_outfile_symlink, 1},
        {test_outfile_devices, 1},
        {test_outfile_fifo, 1},
        {test_outfile_signal, 3},
        {test_outfile_signal_chained, 1},
        {test_stream_check, 1},
        {NULL, 0},
    };

    return test_run("fdio", 0, tests, NULL);
}
