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
/* <cache dir>/<kind>-<16 hex>.<ext>; returns 0 when caching is off. */
int avk_cache_path(const char *kind, uint64_t key, const char *ext, char *out, size_t n);
/* Whole-file read (malloc'd, caller frees) and atomic write (tmp + rename). */
void *avk_cache_load(const char *path, size_t *size);
int avk_cache_store(const char *path, const void *data, size_t size);

#endif
