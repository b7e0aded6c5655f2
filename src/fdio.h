/* fdio.h: whole-buffer reads and writes: on file descriptors (pipes between a parent and the
 * child that runs a simulation), of whole input files, and of output files that are replaced
 * only when complete. */
#ifndef CS_FDIO_H
#define CS_FDIO_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Write all len bytes, retrying on EINTR and short writes. 0, or -1 on error or a closed pipe. */
int cs_fd_write_all(int fd, const void *buf, size_t len);

/* Read exactly len bytes, retrying on EINTR and short reads. 0, or -1 on error or early EOF. */
int cs_fd_read_all(int fd, void *buf, size_t len);

/* Open path for reading as fopen(path, "r") does, but without blocking on a FIFO that no
 * process writes to (opened non-blocking, then set back to blocking reads: such a FIFO reads as
 * empty, where fopen waits for a writer forever). NULL with errno on failure. */
FILE *cs_fopen_read(const char *path);

/* Read the whole file at path ("-" is stdin, named "<stdin>" in messages) into a new buffer with
 * a NUL after its len bytes (free it). 0, or CS_ERR_IO ("cannot open: ...", "read error: ..."),
 * CS_ERR_INVALID when it holds more than max_bytes ("file is larger than N bytes"), or
 * CS_ERR_NOMEM; *buf and *len are written only on success. */
int cs_file_read(const char *path, long max_bytes, char **buf, size_t *len, struct cs_error *err);

/* An output being written (cs_outfile_open). What a path names decides how:
 * - "-": stdout, written in place and flushed, never closed (named "<stdout>" in messages);
 * - a regular file or a new path: a temporary file beside it (NAME.tmp.PID), renamed over it only
 *   when complete and closed without error, so readers see the old file or all of the new one;
 * - a symlink: followed; its final target is replaced as above and the link is kept (a link to
 *   a missing file is refused);
 * - a character or block device, a FIFO or a socket: written in place, never replaced or
 *   truncated (/dev/null stays a device);
 * - a directory: refused.
 * Temporary files are removed on failure and when SIGINT, SIGTERM or SIGHUP kills the process. */
struct cs_outfile {
    FILE *fp;     /* write here */
    char *name;   /* the path as given, or "<stdout>", for messages */
    char *target; /* the file the temporary file replaces; NULL when written in place */
    char *tmp;    /* the temporary file; NULL when written in place */
    int fd;       /* under fp (not stdout's) */
    int werrno;   /* errno of the first failed write, 0 when none failed */
};

/* The inputs of this run: cs_input_note records a regular file read (cs_file_read does, and so
 * do the schedule, props and case readers), and cs_outfile_open then refuses to replace it ("...:
 * cannot write: it is one of this command's inputs"); cs_input_forget lifts that for a file a
 * command rewrites on purpose (regress --update's baseline). */
void cs_input_note(const char *path);
void cs_input_forget(const char *path);

/* Open path for writing into out (see struct cs_outfile), which must stay where it is until it
 * is closed or discarded. 0, or CS_ERR_IO ("PATH: cannot write: is a directory", "...: symlink
 * to a missing file", "...: No such file or directory") or CS_ERR_NOMEM, with nothing to close. */
int cs_outfile_open(struct cs_outfile *out, const char *path, struct cs_error *err);

/* Finish an output: flush, check for write errors, close and (for a temporary file) rename it
 * over its target. Always releases out. 0, or CS_ERR_IO ("PATH: cannot write: No space left on
 * device") after removing the temporary file; the target is then unchanged. */
int cs_outfile_close(struct cs_outfile *out, struct cs_error *err);

/* Give up an output: close it and remove its temporary file, leaving the target unchanged. */
void cs_outfile_discard(struct cs_outfile *out);

/* Flush fp and report whether any write to it failed, naming it `name`. 0, or CS_ERR_IO
 * ("NAME: cannot write: ..."); the stream's error flag is then cleared, so that a failure is
 * reported once. For stdout at exit, and for streams that are not cs_outfiles. */
int cs_stream_check(FILE *fp, const char *name, struct cs_error *err);

/* Remove path (a file, or an empty directory) if SIGINT, SIGTERM or SIGHUP kills this process
 * before cs_cleanup_drop(path); paths added later are removed first, so a directory's files go
 * before it. The string must stay valid until then. 0, or CS_ERR_NOMEM when 4096 paths are held. */
int cs_cleanup_add(const char *path);

/* Stop removing path on a signal (the same pointer given to cs_cleanup_add). */
void cs_cleanup_drop(const char *path);

/* mkdtemp(tmpl), or mkstemps(tmpl, suffixlen) (a descriptor), and cs_cleanup_add(tmpl) with
 * SIGINT, SIGTERM and SIGHUP held between them, so that no signal leaves the new path behind.
 * -1 with errno set (ENOMEM when the path cannot be held: it is removed again). */
int cs_cleanup_mkdtemp(char *tmpl);
int cs_cleanup_mkstemps(char *tmpl, int suffixlen);

/* Hold SIGINT, SIGTERM and SIGHUP (a signal that comes meanwhile waits), and let them come again
 * (old: what cs_signals_hold saved). For a step that must not be cut in two, as a fork and the
 * recording of the child's pid. */
void cs_signals_hold(sigset_t *old);
void cs_signals_release(const sigset_t *old);

#endif
