/* check_fdio.c: whole-buffer pipe transfers, whole-file reads and error records. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
    const struct test_case tests[] = {
        {test_pipe_round_trip, 1},
        {test_file_read, 1},
        {test_error_fail, 1},
        {NULL, 0},
    };

    return test_run("fdio", 0, tests, NULL);
}
