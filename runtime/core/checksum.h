/* A strong, fast 64-bit checksum for data read back from disk (kernel caches).
 * avk_hash (FNV-1a, core/cache.h) stays the key hash: short inputs, no avalanche
 * needed; a checksum must catch truncation and bit flips anywhere in megabytes. */
#ifndef ATTNVK_CHECKSUM_H
#define ATTNVK_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* XXH64 as specified by the xxHash format (doc/xxhash_spec.md), little-endian lanes:
 * the same value `xxhsum -H1` prints, so a file can be checked by hand. */
uint64_t avk_xxh64(const void *data, size_t n, uint64_t seed);

#endif
