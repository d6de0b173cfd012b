/* libFuzzer: the .npy reader (runtime/core/npy.c) on arbitrary bytes, through a
 * memfd so the real path-based reader, with its size checks, is what runs. */
#include "core/npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* What a reader that accepted the bytes must have seen: a header ending in '\n' at
 * its declared length, then exactly count elements and nothing after them. A reader
 * that starts inside the header text returns wrong data with status OK (issue #11). */
static void check_accepted(const uint8_t *data, size_t size, const avk_npy *npy)
{
    if (size < 10) abort();
    size_t prefix = data[6] == 1 ? 10 : 12;
    size_t header_len = data[6] == 1 ? (size_t)(data[8] | data[9] << 8)
                                     : (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
                                           (size_t)data[11] << 24;
    size_t element = npy->stored_float16 ? 2 : 4;
    if (size < prefix + header_len || data[prefix + header_len - 1] != '\n') abort();
    if (size - prefix - header_len != npy->count * element) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz.npy", 0);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    avk_npy npy;
    if (avk_npy_read(path, &npy) == ATTNVK_OK) {
        check_accepted(data, size, &npy);
        /* a file that parses must be exactly its header plus count elements */
        volatile float sum = 0;
        for (size_t i = 0; i < npy.count; ++i) sum += npy.data[i];
        (void)sum;
        avk_npy_free(&npy);
    }
    close(fd);
    return 0;
}
