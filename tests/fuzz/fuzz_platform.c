/* fuzz_platform.c: libFuzzer target for the SimGrid platform reader, fed through a memfd. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cs_platform_read takes a path: the input goes into one in-memory file, rewritten each run and
 * read back through /proc/self/fd. */
static int input_fd = -1;
static char input_path[64];

static int write_input(const uint8_t *data, size_t size)
{
    size_t done = 0;

    if (input_fd < 0) {
        input_fd = memfd_create("fuzz-platform", 0);
        if (input_fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(input_path, sizeof(input_path), "/proc/self/fd/%d", input_fd);
    }
    if (ftruncate(input_fd, 0) != 0)
        return -1;
    while (done < size) {
        ssize_t n = pwrite(input_fd, data + done, size - done, (off_t)done);

        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_platform *plat = NULL;
    struct cs_error err;

    if (write_input(data, size) != 0)
        abort();
    cs_error_init(&err);
    if (cs_platform_read(input_path, &plat, &err) == 0)
        cs_platform_free(plat);
    return 0;
}
