/* spawn.c: child processes of collsim: forked workers that run a function in process. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "spawn.h"

int cs_spawn_code(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return CS_ERR_IO;
}

int cs_spawn_wait(pid_t pid)
{
    int st;

    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return CS_ERR_IO;
    return cs_spawn_code(st);
}

pid_t cs_spawn_fn(int (*fn)(void *ctx), void *ctx, const char *out_path, const char *err_path)
{
    pid_t parent = getpid(), pid = CS_ERR_IO;
    int fd_out = -1, fd_err = -1, fd_in, rc;

    if (out_path != NULL &&
        (fd_out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return CS_ERR_IO;
    if (err_path == NULL ||
        (fd_err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0) {
        fflush(NULL);
        pid = fork();
    }
    if (pid == 0) {
        /* Die with the parent; if it is already gone, do not start. */
        if ((fd_out >= 0 && dup2(fd_out, STDOUT_FILENO) < 0) ||
            (fd_err >= 0 && dup2(fd_err, STDERR_FILENO) < 0) ||
            prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        if ((fd_in = open("/dev/null", O_RDONLY)) >= 0)
            dup2(fd_in, STDIN_FILENO);
        rc = fn(ctx);
        fflush(NULL);
        _exit(rc & 0xff);
    }
    if (fd_out >= 0)
        close(fd_out);
    if (fd_err >= 0)
        close(fd_err);
    return pid < 0 ? CS_ERR_IO : pid;
}
