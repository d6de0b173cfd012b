/* Kernels are data: every backend keeps one table of tuning entries and looks
 * it up the way CLBlast's database does: vendor -> architecture -> device ->
 * default. The most specific matching entry wins; among equals, the first. */
#ifndef ATTNVK_TUNING_H
#define ATTNVK_TUNING_H

#include "attnvk/attnvk.h"

typedef struct avk_tuning {
    const char *vendor;       /* substring of device vendor, case-insensitive; NULL = any */
    const char *architecture; /* substring of info.architecture; NULL = any */
    const char *device;       /* substring of device name; NULL = any */
    int dtype;                /* attnvk_dtype, or -1 = any */
    int head_dim_min, head_dim_max; /* inclusive; 0,0 = any */
    int decode;               /* 1: entry for small Nq (split-KV), 0: prefill, -1: any */
    const char *variant;      /* backend-defined variant name */
    int tile_br, tile_bc;     /* query rows, key rows per tile */
    int workgroup_size;
    int extra[4];             /* backend-defined (vector width, warps, stages, ...) */
} avk_tuning;

typedef struct avk_tuning_query {
    const attnvk_device_info *device;
    attnvk_dtype dtype;
    int head_dim;
    int decode;
    /* Entries the device cannot run (needs fp16, coopmat, too much shared
     * memory...) are skipped when this returns 0. May be NULL. */
    int (*usable)(const avk_tuning *entry, const void *ctx);
    const void *ctx;
} avk_tuning_query;

/* NULL when nothing matches (a table should end with catch-all defaults). */
const avk_tuning *avk_tuning_lookup(const avk_tuning *table, int count, const avk_tuning_query *q);

int avk_contains_nocase(const char *haystack, const char *needle);

#endif
