/* fdio.c: whole-buffer reads and writes on file descriptors. */
#include "fdio.h"

#include <errno.h>
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
