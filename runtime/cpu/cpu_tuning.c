/* The CPU device's tuning table and candidates (cpu/cpu_tuning.h). */
#include "cpu/cpu_tuning.h"

#include "core/error.h"
#include "core/split_plan.h"
#include "cpu/cpu_flash.h"
#include "cpu/cpu_simd.h"

#include <string.h>

/* vendor, architecture, device, dtype, D, decode, variant, query rows, key tile, workgroup (1: a thread) */
static const avk_tuning cpu_table[] = {
    /* any host: 128 keys a tile (Kt of D=128 f32 rows in L2), 128 GQA-packed query rows an item */
    {NULL, NULL, NULL, -1, 0, 0, -1, "flash-f32", AVK_CPU_ROWS, AVK_CPU_TILE_BC, 1, {0}},
};

static const attnvk_device_info host = {.vendor = "attnvk", .architecture = "host"};

/* the key tile is whole gemm micro-tiles of this host's vector code (64 columns with AVX-512) */
static int tiles_valid(const avk_tuning *e)
{
    const int nc = avk_cpu_simd_get()->nc;
    return e->tile_br >= 1 && e->tile_br <= 4096 && e->tile_bc >= nc && e->tile_bc <= AVK_CPU_MAX_TILE_BC &&
           e->tile_bc % nc == 0;
}

attnvk_status avk_cpu_pick_tiles(const attnvk_problem *p, int *rows, int *tile_bc)
{
    const avk_tuning *e = avk_tuning_explicit();
    if (e && (strcmp(e->variant, "flash-f32") != 0 || !tiles_valid(e)))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cpu: %s %dx%d is not a flash-f32 configuration here (rows 1..4096, keys a multiple of %d up to %d)",
                        e->variant, e->tile_br, e->tile_bc, avk_cpu_simd_get()->nc, AVK_CPU_MAX_TILE_BC);
    if (!e) {
        avk_tuning_query q = {&host, p->dtype, p->head_dim, avk_is_decode(p), NULL, NULL};
        e = avk_tuning_lookup(cpu_table, (int)(sizeof cpu_table / sizeof *cpu_table), &q);
    }
    *rows = e ? e->tile_br : AVK_CPU_ROWS;
    *tile_bc = e ? e->tile_bc : AVK_CPU_TILE_BC;
    avk_tuning_note(e);
    return ATTNVK_OK;
}

int avk_cpu_tuning_candidates(const attnvk_problem *p, avk_tuning *out, int max)
{
    avk_candidate_list list = {.out = out, .max = max};
    static const int rows[] = {16, 32, 64, 128, 256, 512}, keys[] = {32, 64, 128, 256, 512};
    for (size_t r = 0; r < sizeof rows / sizeof *rows; ++r)
        for (size_t k = 0; k < sizeof keys / sizeof *keys; ++k) {
            const avk_tuning e = {.dtype = (int)p->dtype, .decode = avk_is_decode(p), .variant = "flash-f32",
                                  .tile_br = rows[r], .tile_bc = keys[k], .workgroup_size = 1};
            if (tiles_valid(&e)) avk_candidate_add(&list, &e, (unsigned long long)rows[r] << 32 | (unsigned)keys[k]);
        }
    return list.count;
}
