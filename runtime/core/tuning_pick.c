/* The per-prepare pick record of core/tuning.h: which entry a backend's chooser
 * used, and the explicit entry (tuned file, tune candidate) it must use instead
 * of its table. Thread-local: devices may be prepared on several threads. */
#include "core/tuning.h"

#include <stddef.h>

static _Thread_local const avk_tuning *explicit_entry;
static _Thread_local avk_pick_source explicit_source;
static _Thread_local const avk_tuning *noted;
static _Thread_local int noted_any;
static _Thread_local avk_tuning last_entry; /* the last closed pick's noted entry (avk_pick_last) */
static _Thread_local int have_last;

const char *avk_pick_source_name(avk_pick_source s)
{
    switch (s) {
    case AVK_PICK_DEFAULT: return "default";
    case AVK_PICK_TABLE: return "table";
    case AVK_PICK_TUNED: return "tuned";
    case AVK_PICK_OPTION: return "option";
    default: return "";
    }
}

void avk_pick_begin(const avk_tuning *entry, avk_pick_source source)
{
    explicit_entry = entry;
    explicit_source = source;
    noted = NULL;
    noted_any = 0;
}

avk_pick_source avk_pick_end(void)
{
    avk_pick_source s = AVK_PICK_NONE;
    if (noted_any && noted && noted == explicit_entry) s = explicit_source;
    /* a vendor, architecture or device filter is what someone measured; the rest are catch-alls */
    else if (noted_any && noted) s = (noted->vendor || noted->architecture || noted->device) ? AVK_PICK_TABLE : AVK_PICK_DEFAULT;
    else if (noted_any) s = AVK_PICK_DEFAULT; /* the backend's built-in sizes, no table entry */
    have_last = noted_any && noted;
    if (have_last) last_entry = *noted; /* variant names are static strings */
    explicit_entry = NULL;
    noted = NULL;
    noted_any = 0;
    return s;
}

int avk_pick_last(avk_tuning *out)
{
    if (have_last) *out = last_entry;
    return have_last;
}

const avk_tuning *avk_tuning_explicit(void) { return explicit_entry; }

void avk_tuning_note(const avk_tuning *used)
{
    noted = used;
    noted_any = 1;
}

void avk_candidate_add(avk_candidate_list *l, const avk_tuning *e, unsigned long long key)
{
    int n = l->count < l->max ? l->count : l->max;
    if (n >= AVK_MAX_CANDIDATES) return;
    for (int i = 0; i < n; ++i)
        if (l->keys[i] == key) return;
    l->keys[n] = key;
    l->out[n] = *e;
    l->count = n + 1;
}

void avk_tuning_grid_each(const avk_tuning_grid *g, void (*fn)(const avk_tuning *e, void *ctx), void *ctx)
{
    int idx[7] = {0};
    for (;;) {
        avk_tuning e = g->base;
        int *fields[7] = {&e.tile_br, &e.tile_bc, &e.workgroup_size, &e.extra[0], &e.extra[1], &e.extra[2], &e.extra[3]};
        for (int a = 0; a < 7; ++a)
            if (g->len[a] > 0) *fields[a] = g->axis[a][idx[a]];
        fn(&e, ctx);
        int a = 0; /* odometer over the non-empty axes */
        while (a < 7 && (g->len[a] <= 0 || ++idx[a] == g->len[a])) {
            if (g->len[a] > 0) idx[a] = 0;
            ++a;
        }
        if (a == 7) return;
    }
}
