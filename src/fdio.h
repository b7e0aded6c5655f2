/* fdio.h: whole-buffer reads and writes on file descriptors (pipes between a parent and the
 * child that runs a simulation). */
#ifndef CS_FDIO_H
#define CS_FDIO_H

#include <stddef.h>

/* Write all len bytes, retrying on EINTR and short writes. 0, or -1 on error or a closed pipe. */
int cs_fd_write_all(int fd, const void *buf, size_t len);

/* Read exactly len bytes, retrying on EINTR and short reads. 0, or -1 on error or early EOF. */
int cs_fd_read_all(int fd, void *buf, size_t len);

#endif
