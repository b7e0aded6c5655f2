/* memfd.h: for fuzz targets whose reader takes a path: the input goes into one in-memory file,
 * rewritten each run and read back through /proc/self/fd (fuzz_input_path). */
#ifndef CS_FUZZ_MEMFD_H
#define CS_FUZZ_MEMFD_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a file holding data[0..size), the same file each call; aborts when it cannot. */
static inline const char *fuzz_input_path(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    size_t done = 0;

    if (fd < 0) {
        fd = memfd_create("fuzz-input", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0)
        abort();
    while (done < size) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

        if (n <= 0)
            abort();
        done += (size_t)n;
    }
    return path;
}

#endif
