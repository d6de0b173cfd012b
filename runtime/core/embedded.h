/* Files embedded in the binary at build time (attnvk_embed_file in CMake):
 * each is a byte array NAME and its length NAME_size. */
#ifndef ATTNVK_CORE_EMBEDDED_H
#define ATTNVK_CORE_EMBEDDED_H

#include <stddef.h>

#define AVK_EMBEDDED(name)                 \
    extern const unsigned char name[];     \
    extern const size_t name##_size;

#endif
