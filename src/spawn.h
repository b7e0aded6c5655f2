/* spawn.h: child processes of collsim: forked workers that run a function in process (sweep
 * points, regress groups), never an exec of collsim; part of the program, not the library. */
#ifndef CS_SPAWN_H
#define CS_SPAWN_H

#include <sys/types.h>

/* Wait for pid. Returns its exit code (0..255), 128 + the signal number when a signal killed it,
 * or a negative CS_ERR_* when waiting failed. */
int cs_spawn_wait(pid_t pid);

/* Run fn(ctx) in a forked child of this process (no exec: the child shares the parent's code and
 * its state at the fork), with stdout and stderr redirected to out_path and err_path (created or
 * truncated; NULL keeps ours) and stdin from /dev/null; the child exits with fn's return value
 * (0..255) and is killed when the parent dies. The way commands run workers in parallel, and
 * keep SimGrid's one engine per process. Returns the child's pid, or a negative CS_ERR_*. */
pid_t cs_spawn_fn(int (*fn)(void *ctx), void *ctx, const char *out_path, const char *err_path);

/* Turn a wait(2) status into the code cs_spawn_wait returns. */
int cs_spawn_code(int wstatus);

#endif
