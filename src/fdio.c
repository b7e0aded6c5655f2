/* fdio.c: whole-buffer reads and writes on file descriptors, and whole-file reads. */
#include "fdio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int cs_file_read(const char *path, long max_bytes, char **buf, size_t *len, struct cs_error *err)
{
    int is_stdin = strcmp(path, "-") == 0, rc;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *fp = is_stdin ? stdin : fopen(path, "rb");
    char *b;
    size_t n;

    if (fp == NULL)
        return cs_error_fail(err, CS_ERR_IO, name, 0, "cannot open: %s", strerror(errno));
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
