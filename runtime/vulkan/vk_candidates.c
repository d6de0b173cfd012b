/* The Vulkan configurations `attnvk tune` times: a grid per variant over the
 * table's knobs (tiles, workgroup, extra[]: scalar reductions, coopmat K/V
 * stages and S chains, register-softmax Q placement, decode lanes and keys per
 * step, matrix decode waves), each kept only where vk_choose_config accepts it
 * as an explicit entry -- the very checks the table's entries pass. */
#include "vulkan/vk_candidates.h"
#include "vulkan/vk_variants.h"

#include "core/cache.h" /* avk_hash */
#include "core/error.h"
#include "core/split_plan.h"

#include <string.h>

typedef struct grid_ctx {
    const vk_caps *caps;
    const attnvk_problem *p;
    avk_candidate_list *list;
} grid_ctx;

static void try_entry(const avk_tuning *e, void *vctx)
{
    grid_ctx *g = vctx;
    const attnvk_kernel_options none = {0};
    vk_config cfg;
    avk_pick_begin(e, AVK_PICK_OPTION);
    attnvk_status s = vk_choose_config(g->caps, g->p, &none, &cfg);
    avk_pick_end();
    avk_clear_error();
    if (s == ATTNVK_OK) avk_candidate_add(g->list, e, avk_hash(&cfg, sizeof cfg, 0)); /* same pipeline, once */
}

int vk_tuning_candidates(avk_bdev *dev, const attnvk_problem *p, avk_tuning *out, int max)
{
    avk_candidate_list list = {.out = out, .max = max};
    grid_ctx ctx = {dev->caps, p, &list};
    const int decode = avk_is_decode(p), f16 = p->dtype == ATTNVK_F16;
    const avk_tuning base = {.dtype = (int)p->dtype, .decode = decode};
    avk_tuning_grid g;
    /* scalar bodies: rows, keys, threads (a power of two per row), subgroup reductions */
    for (int f = 0; f < 2; ++f) {
        if (f && !f16) continue;
        g = (avk_tuning_grid){.base = base};
        g.base.variant = f ? "f16" : "scalar";
        AVK_GRID_AXIS(&g, AVK_AXIS_BR, 4, 8, 16, 32, 64);
        AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32, 64);
        AVK_GRID_AXIS(&g, AVK_AXIS_WG, 32, 64, 128, 256);
        AVK_GRID_AXIS(&g, AVK_AXIS_X0, 0, 1);
        avk_tuning_grid_each(&g, try_entry, &ctx);
    }
    if (decode) { /* the decode body: packed rows, lanes per key (0 automatic), keys per step, residency */
        g = (avk_tuning_grid){.base = base};
        g.base.variant = "decode";
        AVK_GRID_AXIS(&g, AVK_AXIS_BR, 1, 2, 4, 8, 16);
        AVK_GRID_AXIS(&g, AVK_AXIS_BC, 32, 64);
        AVK_GRID_AXIS(&g, AVK_AXIS_WG, 64, 128, 256);
        AVK_GRID_AXIS(&g, AVK_AXIS_X0, 0, 8, 16);
        AVK_GRID_AXIS(&g, AVK_AXIS_X1, 0, 1, 2);
        AVK_GRID_AXIS(&g, AVK_AXIS_X2, 0, 4);
        avk_tuning_grid_each(&g, try_entry, &ctx);
    }
    if (f16) {
        /* matrix bodies through either extension: K/V stages, S chains */
        static const char *const coopmat[] = {"coopmat-nv", "coopmat-khr"};
        for (int v = 0; v < 2; ++v) {
            g = (avk_tuning_grid){.base = base};
            g.base.variant = coopmat[v];
            AVK_GRID_AXIS(&g, AVK_AXIS_BR, 32, 64, 128, 256);
            AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32, 64);
            AVK_GRID_AXIS(&g, AVK_AXIS_WG, 64, 128, 256);
            AVK_GRID_AXIS(&g, AVK_AXIS_X1, 1, 2);
            AVK_GRID_AXIS(&g, AVK_AXIS_X2, 1, 2);
            avk_tuning_grid_each(&g, try_entry, &ctx);
        }
        /* register softmax through either extension: K/V stages, Q in shared memory */
        static const char *const rs[] = {"coopmat-nv-rs", "coopmat-khr-rs"}, *const decode_rs[] = {"decode-nv-rs", "decode-khr-rs"};
        for (int v = 0; v < 2; ++v) {
            g = (avk_tuning_grid){.base = base};
            g.base.variant = rs[v];
            AVK_GRID_AXIS(&g, AVK_AXIS_BR, 64, 128, 256);
            AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32, 64);
            AVK_GRID_AXIS(&g, AVK_AXIS_WG, 128, 256);
            AVK_GRID_AXIS(&g, AVK_AXIS_X1, 1, 2);
            AVK_GRID_AXIS(&g, AVK_AXIS_X3, 0, 1);
            avk_tuning_grid_each(&g, try_entry, &ctx);
            if (!decode) continue;
            g = (avk_tuning_grid){.base = base}; /* matrix decode: tiles from the rows; subgroups, waves, residency */
            g.base.variant = decode_rs[v];
            AVK_GRID_AXIS(&g, AVK_AXIS_WG, 64, 128, 256);
            AVK_GRID_AXIS(&g, AVK_AXIS_X1, 0, 1);
            AVK_GRID_AXIS(&g, AVK_AXIS_X2, 1, 2);
            avk_tuning_grid_each(&g, try_entry, &ctx);
        }
    }
    return list.count;
}
