/* fdio.h: whole-buffer reads and writes: on file descriptors (pipes between a parent and the
 * child that runs a simulation) and of whole input files. */
#ifndef CS_FDIO_H
#define CS_FDIO_H

#include <stddef.h>

#include "error.h"

/* Write all len bytes, retrying on EINTR and short writes. 0, or -1 on error or a closed pipe. */
int cs_fd_write_all(int fd, const void *buf, size_t len);

/* Read exactly len bytes, retrying on EINTR and short reads. 0, or -1 on error or early EOF. */
int cs_fd_read_all(int fd, void *buf, size_t len);

/* Read the whole file at path ("-" is stdin, named "<stdin>" in messages) into a new buffer with
 * a NUL after its len bytes (free it). 0, or CS_ERR_IO ("cannot open: ...", "read error: ..."),
 * CS_ERR_INVALID when it holds more than max_bytes ("file is larger than N bytes"), or
 * CS_ERR_NOMEM; *buf and *len are written only on success. */
int cs_file_read(const char *path, long max_bytes, char **buf, size_t *len, struct cs_error *err);

#endif
