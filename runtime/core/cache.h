/* On-disk kernel cache (pipeline caches, program binaries, cubins), keyed by
 * a hash of device identity, driver version, source and options. */
#ifndef ATTNVK_CACHE_H
#define ATTNVK_CACHE_H

#include <stddef.h>
#include <stdint.h>

uint64_t avk_hash(const void *data, size_t n, uint64_t seed); /* FNV-1a 64 */
uint64_t avk_hash_str(const char *s, uint64_t seed);

/* $ATTNVK_CACHE_DIR, else $XDG_CACHE_HOME/attnvk, else ~/.cache/attnvk.
 * ATTNVK_CACHE_DIR=off disables caching (returns 0). Creates it. */
int avk_cache_dir(char *out, size_t n);
/* mkdir -p: 0, or -1 with errno */
int avk_make_dirs(const char *path);
/* <cache dir>/<kind>-<16 hex>.<ext>; returns 0 when caching is off. */
int avk_cache_path(const char *kind, uint64_t key, const char *ext, char *out, size_t n);
/* A cache file is a header (magic, format version, payload length, the key, an XXH64
 * of the payload seeded with the key) and the payload; drivers only ever see a payload
 * whose header and checksum matched, since a corrupted binary can crash them.
 *
 * avk_cache_load: the payload (malloc'd, caller frees), or NULL when the file is
 * missing or does not verify (truncated, overwritten, another key's file renamed
 * here, an older format); a file that does not verify is removed, so the caller
 * rebuilds and stores a fresh one. */
void *avk_cache_load(const char *path, uint64_t key, size_t *size);
/* Header + payload through core/atomic_file.h (temp file, fsync, rename), so a crash
 * or a full disk leaves the old file or none, never a prefix. 1 on success; a failed
 * store is not an error for the caller (the next run compiles again). */
int avk_cache_store(const char *path, uint64_t key, const void *data, size_t size);

#endif
