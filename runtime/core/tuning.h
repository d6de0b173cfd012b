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

/* Where the flash kernel's configuration came from (bench records, `attnvk devices`):
 * an explicit --variant/--tile ("option"), the user's tuning file ("tuned", written by
 * `attnvk tune`), a vendor/architecture/device entry of the built-in table ("table") or
 * one of its catch-all entries ("default"). NONE: nothing was picked (vendor kernels). */
typedef enum avk_pick_source {
    AVK_PICK_NONE = 0,
    AVK_PICK_DEFAULT,
    AVK_PICK_TABLE,
    AVK_PICK_TUNED,
    AVK_PICK_OPTION,
} avk_pick_source;
const char *avk_pick_source_name(avk_pick_source s); /* "", "default", "table", "tuned", "option" */

/* One prepare's pick, per thread (core/tuning_pick.c). The core opens it around a
 * backend's prepare (or describe) and may install an explicit entry: a tuned file's, or
 * a candidate `attnvk tune` times. A backend's chooser then uses avk_tuning_explicit()
 * instead of its table when non-NULL (and no variant is named), failing with the reason
 * when the entry cannot run, and reports the entry its configuration came from with
 * avk_tuning_note(). */
void avk_pick_begin(const avk_tuning *explicit_entry, avk_pick_source explicit_source);
/* The source of the noted entry (the explicit one's, or table/default by specificity);
 * NONE when nothing was noted. Closes the pick. */
avk_pick_source avk_pick_end(void);
/* 1 with the entry the last closed pick on this thread noted (a table's, or the explicit
 * one): what `attnvk tune` times as the table's own configuration. */
int avk_pick_last(avk_tuning *out);
const avk_tuning *avk_tuning_explicit(void);
void avk_tuning_note(const avk_tuning *used);

/* Building a backend's candidate list (backend.h's tuning_candidates): grid points that
 * resolve to the same configuration count once; key hashes the resolved configuration. */
enum { AVK_MAX_CANDIDATES = 1024 };
typedef struct avk_candidate_list {
    avk_tuning *out;
    int max, count;
    unsigned long long keys[AVK_MAX_CANDIDATES];
} avk_candidate_list;
void avk_candidate_add(avk_candidate_list *l, const avk_tuning *e, unsigned long long key);

/* A grid of candidate entries around base: axis i lists the values of tile_br, tile_bc,
 * workgroup_size, extra[0..3] (i = 0..6); an empty axis keeps base's value. */
typedef struct avk_tuning_grid {
    avk_tuning base;
    const int *axis[7];
    int len[7];
} avk_tuning_grid;
/* Calls fn on every point of the grid. */
void avk_tuning_grid_each(const avk_tuning_grid *g, void (*fn)(const avk_tuning *e, void *ctx), void *ctx);
enum { AVK_AXIS_BR = 0, AVK_AXIS_BC, AVK_AXIS_WG, AVK_AXIS_X0, AVK_AXIS_X1, AVK_AXIS_X2, AVK_AXIS_X3 };
/* AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32, 64): the values live until the enclosing block ends */
#define AVK_GRID_AXIS(g, i, ...)                                                                                     \
    ((g)->axis[i] = (const int[]){__VA_ARGS__}, (g)->len[i] = (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)))

/* Tuning aids' "key=N,key=N" strings ($name: the backward's tile overrides, an ATTNVK_ literal at
 * every call site, which `attnvk help env` lists): each key one of keys[0..n), its N in 1..256
 * goes to values[i]; 1 when $name is unset or empty or every token parses (values untouched
 * where not named), 0 on a bad token. */
int avk_env_tiles(const char *name, const char *const *keys, int n, int *values);

/* An on/off knob ($name: an ATTNVK_ literal at every call site): *on = 0 or 1 as set, unset where
 * unset or empty; anything else fails INVALID_ARGUMENT naming the variable and its value. */
attnvk_status avk_env_switch(const char *name, int unset, int *on);

#endif
