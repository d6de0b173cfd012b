/* prepare: variant and sizes from the table, pipelines, split-KV workspace.
 * dispatch: one flash dispatch (plus the split-KV reduce), timed with
 * device timestamps. */
#include "core/kernel_args.h"
#include "core/test_hooks.h"
#include "core/kv_cache.h" /* avk_problem_features */
#include "core/layout.h"   /* avk_head_dim_v */
#include "vulkan/vk_backward.h"
#include "vulkan/vk_internal.h"
#include "vulkan/vk_shaders.h"
#include "vulkan/vk_variants.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct avk_bkernel {
    attnvk_problem p;
    vk_config cfg;
    VkPipeline main, reduce;
    avk_kernel_args args;  /* the contract's arguments as prepared (whole Nq); dispatch sets the rows */
    uint32_t n_splits;
    avk_bbuf *ws_o, *ws_ml;
};

/* The scalar body per storage type (f32, f16, bf16) and kv format (dtype, q8_0, q4_0, fp8);
 * on a device without subgroup shuffles the build that does not declare them. */
static spv_blob scalar_shader(attnvk_dtype dt, attnvk_kv_format kv, int shuffles)
{
    const spv_blob table[4][3] = {
        {SPV_BLOB(flash_scalar_f32), SPV_BLOB(flash_scalar_f16), SPV_BLOB(flash_scalar_bf16)},
        {SPV_BLOB(flash_scalar_f32_q8_0), SPV_BLOB(flash_scalar_f16_q8_0), SPV_BLOB(flash_scalar_bf16_q8_0)},
        {SPV_BLOB(flash_scalar_f32_q4_0), SPV_BLOB(flash_scalar_f16_q4_0), SPV_BLOB(flash_scalar_bf16_q4_0)},
        {SPV_BLOB(flash_scalar_f32_fp8), SPV_BLOB(flash_scalar_f16_fp8), SPV_BLOB(flash_scalar_bf16_fp8)},
    };
    const spv_blob no_shuffles[4][3] = {
        {SPV_BLOB(flash_scalar_f32_nosg), SPV_BLOB(flash_scalar_f16_nosg), SPV_BLOB(flash_scalar_bf16_nosg)},
        {SPV_BLOB(flash_scalar_f32_q8_0_nosg), SPV_BLOB(flash_scalar_f16_q8_0_nosg), SPV_BLOB(flash_scalar_bf16_q8_0_nosg)},
        {SPV_BLOB(flash_scalar_f32_q4_0_nosg), SPV_BLOB(flash_scalar_f16_q4_0_nosg), SPV_BLOB(flash_scalar_bf16_q4_0_nosg)},
        {SPV_BLOB(flash_scalar_f32_fp8_nosg), SPV_BLOB(flash_scalar_f16_fp8_nosg), SPV_BLOB(flash_scalar_bf16_fp8_nosg)},
    };
    int e = dt == ATTNVK_F16 ? 1 : dt == ATTNVK_BF16 ? 2 : 0, f = kv >= 0 && kv < 4 ? kv : 0;
    return shuffles ? table[f][e] : no_shuffles[f][e];
}

/* The decode body per storage type and kv format (half: f16 over a quantized cache, Q.K in f16 pairs). */
static spv_blob decode_shader(attnvk_dtype dt, attnvk_kv_format kv, int half)
{
    if (half && dt == ATTNVK_F16 && kv != ATTNVK_KV_DTYPE) {
        const spv_blob halves[3] = {SPV_BLOB(flash_decode_f16_q8_0_half), SPV_BLOB(flash_decode_f16_q4_0_half),
                                    SPV_BLOB(flash_decode_f16_fp8_half)};
        return halves[kv == ATTNVK_KV_Q4_0 ? 1 : kv == ATTNVK_KV_FP8 ? 2 : 0];
    }
    const spv_blob table[4][3] = {
        {SPV_BLOB(flash_decode_f32), SPV_BLOB(flash_decode_f16), SPV_BLOB(flash_decode_bf16)},
        {SPV_BLOB(flash_decode_f32_q8_0), SPV_BLOB(flash_decode_f16_q8_0), SPV_BLOB(flash_decode_bf16_q8_0)},
        {SPV_BLOB(flash_decode_f32_q4_0), SPV_BLOB(flash_decode_f16_q4_0), SPV_BLOB(flash_decode_bf16_q4_0)},
        {SPV_BLOB(flash_decode_f32_fp8), SPV_BLOB(flash_decode_f16_fp8), SPV_BLOB(flash_decode_bf16_fp8)},
    };
    int e = dt == ATTNVK_F16 ? 1 : dt == ATTNVK_BF16 ? 2 : 0;
    return table[kv >= 0 && kv < 4 ? kv : 0][e];
}

/* The matrix decode body per kv format: NVIDIA's layout (0), the emulation (1),
 * NVIDIA's layout through KHR matrices (2). */
static spv_blob decode_mma_shader(int which, attnvk_kv_format kv)
{
    const spv_blob table[4][3] = {
        {SPV_BLOB(flash_decode_nv_rs), SPV_BLOB(flash_decode_rs_emu), SPV_BLOB(flash_decode_khr_rs)},
        {SPV_BLOB(flash_decode_nv_rs_q8_0), SPV_BLOB(flash_decode_rs_emu_q8_0), SPV_BLOB(flash_decode_khr_rs_q8_0)},
        {SPV_BLOB(flash_decode_nv_rs_q4_0), SPV_BLOB(flash_decode_rs_emu_q4_0), SPV_BLOB(flash_decode_khr_rs_q4_0)},
        {SPV_BLOB(flash_decode_nv_rs_fp8), SPV_BLOB(flash_decode_rs_emu_fp8), SPV_BLOB(flash_decode_khr_rs_fp8)},
    };
    return table[kv >= 0 && kv < 4 ? kv : 0][which];
}

static spv_blob main_shader(const vk_config *cfg, attnvk_dtype dt, attnvk_kv_format kv, int shuffles)
{
    switch (cfg->algo) {
    case VK_ALGO_DECODE_NV_RS:
        if (cfg->direct_kv) { /* quantized only (vk_variants.c) */
            const spv_blob direct[3] = {SPV_BLOB(flash_decode_nv_direct_q8_0), SPV_BLOB(flash_decode_nv_direct_q4_0),
                                        SPV_BLOB(flash_decode_nv_direct_fp8)};
            return direct[kv == ATTNVK_KV_Q4_0 ? 1 : kv == ATTNVK_KV_FP8 ? 2 : 0];
        }
        return decode_mma_shader(0, kv);
    case VK_ALGO_DECODE_RS_EMU:
        if (cfg->direct_kv) {
            const spv_blob direct[3] = {SPV_BLOB(flash_decode_direct_emu_q8_0), SPV_BLOB(flash_decode_direct_emu_q4_0),
                                        SPV_BLOB(flash_decode_direct_emu_fp8)};
            return direct[kv == ATTNVK_KV_Q4_0 ? 1 : kv == ATTNVK_KV_FP8 ? 2 : 0];
        }
        return decode_mma_shader(1, kv);
    case VK_ALGO_DECODE_KHR_RS: return decode_mma_shader(cfg->emulated ? 1 : 2, kv); /* the test hook: the emulation */
    case VK_ALGO_DECODE: return decode_shader(dt, kv, (int)cfg->half_qk);
    case VK_ALGO_F16:
        if (!shuffles) return (spv_blob){avk_spv_flash_f16_nosg, avk_spv_flash_f16_nosg_size, "flash_f16_nosg"};
        return (spv_blob){avk_spv_flash_f16, avk_spv_flash_f16_size, "flash_f16"};
    case VK_ALGO_COOPMAT_NV: return (spv_blob){avk_spv_flash_coopmat_nv, avk_spv_flash_coopmat_nv_size, "flash_coopmat_nv"};
    case VK_ALGO_COOPMAT_EMU:
        return (spv_blob){avk_spv_flash_coopmat_emu, avk_spv_flash_coopmat_emu_size, "flash_coopmat_emu"};
    case VK_ALGO_COOPMAT_NV_RS:
        return (spv_blob){avk_spv_flash_coopmat_nv_rs, avk_spv_flash_coopmat_nv_rs_size, "flash_coopmat_nv_rs"};
    case VK_ALGO_COOPMAT_RS_EMU:
        return (spv_blob){avk_spv_flash_coopmat_rs_emu, avk_spv_flash_coopmat_rs_emu_size, "flash_coopmat_rs_emu"};
    case VK_ALGO_COOPMAT_KHR_RS:
        if (cfg->emulated)
            return (spv_blob){avk_spv_flash_coopmat_rs_emu, avk_spv_flash_coopmat_rs_emu_size, "flash_coopmat_rs_emu"};
        return (spv_blob){avk_spv_flash_coopmat_khr_rs, avk_spv_flash_coopmat_khr_rs_size, "flash_coopmat_khr_rs"};
    case VK_ALGO_COOPMAT_KHR: /* the test hook's emulation runs the same body with emulated matrices */
        if (cfg->emulated) return (spv_blob){avk_spv_flash_coopmat_emu, avk_spv_flash_coopmat_emu_size, "flash_coopmat_emu"};
        return (spv_blob){avk_spv_flash_coopmat_khr, avk_spv_flash_coopmat_khr_size, "flash_coopmat_khr"};
    default: break;
    }
    return scalar_shader(dt, kv, shuffles);
}

static spv_blob reduce_shader(attnvk_dtype dt)
{
    if (dt == ATTNVK_F16) return (spv_blob){avk_spv_split_reduce_f16, avk_spv_split_reduce_f16_size, "split_reduce_f16"};
    if (dt == ATTNVK_BF16)
        return (spv_blob){avk_spv_split_reduce_bf16, avk_spv_split_reduce_bf16_size, "split_reduce_bf16"};
    return (spv_blob){avk_spv_split_reduce_f32, avk_spv_split_reduce_f32_size, "split_reduce_f32"};
}

/* Specialization constants of every shader (flash_common.glsl): 13 is
 * AVK_SOFTCAP_EXP2 (the matrix bodies' softcap form, an A/B aid; set only with
 * AVK_SCORES), 14 is Dv (AVK_DV: V and O rows; constant 2 stays Dk), 15 is
 * AVK_SCORES, 1 where the problem has windows, softcap, ALiBi, masks, sinks or
 * top-left alignment, so a plain problem's pipeline is compiled without their
 * code (| 2: an f16 mask staged in shared memory, | 4: ALiBi's key term in S's
 * products; vk_variants.c's mask_shared and alibi_mma; | 16 with 32 softcap, 64 ALiBi,
 * 128 mask: only those modifications built in, its hook_mods). */
enum { SPEC_PAGE_SIZE = 11, SPEC_PAGED = 12, SPEC_SOFTCAP_EXP2 = 13, SPEC_DV = 14, SPEC_SCORES = 15 };
/* The constants past a body's own that every body shares: Dv, the score features
 * (1, 2 with the softcap's exp2 form), whether K/V come through a block table and,
 * for a pipeline built for the block table alone, its page size (11: AVK_PAGE_SIZE). */
typedef struct spec_tail {
    uint32_t dv;
    int scores;
    uint32_t paged;     /* AVK_PAGED: 1 the block table only, 2 either */
    uint32_t page_size; /* AVK_PAGE_SIZE: with paged 1, the problem's; 0 reads the push constant */
    uint32_t score_bits;  /* AVK_SCORES' bits past 1: 2 the rs prefill body stages an f16 mask (AVK_MASK_SHARED),
                           * 4 it takes ALiBi's key term in S's products (AVK_ALIBI_MMA) */
} spec_tail;

static attnvk_status build(avk_bdev *dev, spv_blob b, const uint32_t *spec, uint32_t n, const spec_tail *t,
                           uint32_t req_sg, VkPipeline *out)
{
    uint32_t all[SPEC_SCORES + 1] = {0}; /* ids the shader lacks are ignored */
    memcpy(all, spec, (n < SPEC_PAGE_SIZE ? n : SPEC_PAGE_SIZE) * sizeof *spec);
    all[SPEC_PAGE_SIZE] = t->paged == 1u ? t->page_size : 0u;
    all[SPEC_PAGED] = t->paged;
    all[SPEC_SOFTCAP_EXP2] = t->scores > 1 ? (uint32_t)t->scores - 1u : 0u; /* 1 exp2 form, 2 f16 pairs */
    all[SPEC_DV] = t->dv;
    all[SPEC_SCORES] = t->scores != 0 ? 1u | t->score_bits : 0u;
    /* SPIR-V is read as words: hand the driver an aligned copy */
    uint32_t *words = malloc(b.size);
    if (!words) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(words, b.code, b.size);
    attnvk_status s = vk_pipeline_get(dev, words, b.size, b.name, all, SPEC_SCORES + 1, req_sg, out);
    free(words);
    return s;
}

attnvk_status vk_build_body(avk_bdev *dev, const unsigned char *code, size_t size, const char *name, const uint32_t *spec,
                            uint32_t n, uint32_t dv, int scores, VkPipeline *out)
{
    const spec_tail t = {.dv = dv, .scores = scores, .paged = 0};
    return build(dev, (spv_blob){code, size, name}, spec, n, &t, 0, out);
}

static uint32_t ceil_div(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

static void release_kernel(avk_bdev *dev, avk_bkernel *k)
{
    if (!k) return;
    vk_buffer_free(dev, k->ws_o);
    vk_buffer_free(dev, k->ws_ml);
    free(k); /* pipelines belong to the device */
}

static attnvk_status prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                             avk_bkernel **out, attnvk_kernel_info *info)
{
    const vk_caps *c = dev->caps;
    if (opts->implementation && strcmp(opts->implementation, "attnvk") != 0)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the vulkan API has no '%s' implementation", opts->implementation);
    size_t es = attnvk_dtype_size(p->dtype);
    uint64_t q_bytes = attnvk_q_elements(p) * es, kv_bytes = (uint64_t)attnvk_kv_rows(p) * attnvk_kv_row_bytes(p);
    uint64_t range = c->props.limits.maxStorageBufferRange;
    if (q_bytes > range || kv_bytes > range)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: tensors of %llu / %llu bytes exceed maxStorageBufferRange %llu",
                        (unsigned long long)q_bytes, (unsigned long long)kv_bytes, (unsigned long long)range);
    avk_bkernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    k->p = *p;
    attnvk_status s = vk_choose_config(c, p, opts, &k->cfg);
    const vk_config *cfg = &k->cfg;
    if (s == ATTNVK_OK) {
        /* GQA packing in the scalar and decode bodies (their rows are mapped one by one); the
         * prefill matrix bodies keep one head per workgroup */
        int pack = vk_algo_packs_rows(cfg->algo) ? avk_gqa_pack(p, p->seq_q, 0) : 1;
        avk_kernel_args_fill(&k->args, p, 0, p->seq_q, pack, opts->write_lse);
        /* the bodies that take dilation (scalar, register softmax: vk_variants.c) run its strided views */
        avk_kernel_args_dilated_view(&k->args, p);
        if (opts->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) k->args.flags |= AVK_FLAG_SKIP_LAST_TILE;
        /* the matrix decode body steps over key_groups tiles at once */
        uint32_t step = vk_algo_is_decode_mma(cfg->algo) ? cfg->bc * cfg->key_groups : cfg->bc;
        k->n_splits = (uint32_t)avk_kernel_args_split(&k->args, p, (int)cfg->br, (int)step, c->compute_units,
                                                      (int)cfg->resident, (int)cfg->whole_waves, opts->split_kv);
    }
    uint32_t D = (uint32_t)p->head_dim, DV = (uint32_t)avk_head_dim_v(p); /* Dk at constant 2, Dv at SPEC_DV */
    /* 2: with the softcap's exp2 form, 3: its f16 pairs (ATTNVK_VK_SOFTCAP_EXP2) */
    const unsigned scored = AVK_SCORE_FEATURES | ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED;
    const int scores = (avk_problem_features(p) & scored) != 0 ? 1 + (int)cfg->softcap_exp2 : 0;
    /* constant 12: the decode body of a paged cache is built for the block table alone (H100, q8_0
     * page 16 at 32k: 2.43 -> 0.424 ms); every other pipeline decides by pc.page_size, so paged and
     * contiguous problems share it (half the pipelines to compile: lavapipe takes seconds each) */
    const uint32_t paged = cfg->algo == VK_ALGO_DECODE && cfg->kv_addressing == 1 ? 1u : 2u;
    /* with it, constant 11: the page size. H100, B=8 H=32/8 D=128 32k, page 16 shuffled, paged / contiguous
     * (tools/h100/s24f.sh, two rounds): q8_0 1.11-1.15 -> 1.02-1.05, q4_0 1.13 -> 1.01-1.02, fp8 1.12 -> 1.00,
     * f16 1.06 either way */
    const spec_tail tail = {.dv = DV, .scores = scores, .paged = paged, .page_size = (uint32_t)p->page_size,
                            .score_bits = s == ATTNVK_OK ? (cfg->mask_shared ? 2u : 0u) | (cfg->alibi_mma ? 4u : 0u) | cfg->hook_mods : 0u};
    if (s == ATTNVK_OK) {
        spv_blob body = main_shader(cfg, p->dtype, p->kv_format, c->subgroup_shuffle);
        if (vk_algo_is_decode_mma(cfg->algo)) {
            uint32_t spec[7] = {cfg->br, cfg->bc, D, cfg->wg, cfg->subgroup, cfg->mm, cfg->key_groups};
            s = build(dev, body, spec, 7, &tail, cfg->required_subgroup, &k->main);
        } else if (cfg->algo >= VK_ALGO_COOPMAT_NV) { /* constant 9: S chains, or Q in shared memory (rs) */
            uint32_t spec[10] = {cfg->br, cfg->bc, D,       cfg->wg,        cfg->subgroup,
                                 cfg->mm, cfg->mn, cfg->mk, cfg->kv_stages, vk_algo_is_rs(cfg->algo) ? cfg->q_shared : cfg->s_chains};
            s = build(dev, body, spec, 10, &tail, cfg->required_subgroup, &k->main);
        } else if (cfg->algo == VK_ALGO_DECODE) {
            uint32_t spec[11] = {cfg->br,   cfg->bc,         D,           cfg->wg,    cfg->wg / cfg->subgroup, cfg->key_lanes,
                                 cfg->keys_per_step, cfg->runs, cfg->page_slots, cfg->spread, cfg->probe};
            s = build(dev, body, spec, 11, &tail, cfg->required_subgroup, &k->main);
        } else {
            uint32_t spec[6] = {cfg->br, cfg->bc, D, cfg->wg, cfg->subgroup, cfg->sg_reduce};
            s = build(dev, body, spec, 6, &tail, 0, &k->main);
        }
    }
    if (s == ATTNVK_OK && k->n_splits > 1) {
        uint32_t spec[3] = {0, 0, D};
        s = build(dev, reduce_shader(p->dtype), spec, 3, &tail, 0, &k->reduce);
        uint64_t rows = (uint64_t)k->n_splits * p->batch * p->heads * p->seq_q;
        if (s == ATTNVK_OK) s = vk_buffer_new(dev, rows * DV * 4, 0, &k->ws_o); /* partial O rows are O's (Dv) */
        if (s == ATTNVK_OK) s = vk_buffer_new(dev, rows * 8, 0, &k->ws_ml);
    }
    if (s != ATTNVK_OK) {
        release_kernel(dev, k);
        return s;
    }
    snprintf(info->implementation, sizeof info->implementation, "attnvk");
    snprintf(info->variant, sizeof info->variant, "%s", cfg->variant);
    info->tile_br = (int)cfg->br;
    info->tile_bc = (int)(vk_algo_is_decode_mma(cfg->algo) ? cfg->bc * cfg->key_groups : cfg->bc); /* the step */
    info->workgroup_size = (int)cfg->wg;
    info->split_kv = (int)k->n_splits;
    info->workspace_bytes = k->ws_o ? k->ws_o->size + k->ws_ml->size : 0;
    if (vk_algo_is_decode_mma(cfg->algo))
        snprintf(info->params, sizeof info->params, "subgroup=%u mma=%ux%ux%u key_groups=%u%s pack=%u shared=%u split_len=%u%s",
                 cfg->subgroup, cfg->mm, cfg->mm, cfg->mm, cfg->key_groups, cfg->direct_kv ? " direct_kv=1" : "", k->args.pack,
                 cfg->shared_bytes,
                 k->args.split_keys, vk_pipeline_stats(dev, k->main));
    else if (vk_algo_is_rs(cfg->algo))
        snprintf(info->params, sizeof info->params, "subgroup=%u mma=%ux%ux%u kv_stages=%u q_shared=%u%s%s shared=%u split_len=%u%s",
                 cfg->subgroup, cfg->mm, cfg->mn, cfg->mk, cfg->kv_stages, cfg->q_shared,
                 tail.score_bits & 2u ? " mask_shared=1" : "", tail.score_bits & 4u ? " alibi_mma=1" : "", cfg->shared_bytes,
                 k->args.split_keys,
                 vk_pipeline_stats(dev, k->main));
    else if (cfg->algo >= VK_ALGO_COOPMAT_NV)
        snprintf(info->params, sizeof info->params, "subgroup=%u mma=%ux%ux%u%s kv_stages=%u s_chains=%u shared=%u split_len=%u%s",
                 cfg->subgroup, cfg->mm, cfg->mn, cfg->mk, cfg->emulated ? " matrices=emulated" : "", cfg->kv_stages,
                 cfg->s_chains, cfg->shared_bytes, k->args.split_keys, vk_pipeline_stats(dev, k->main));
    else if (cfg->algo == VK_ALGO_DECODE)
        snprintf(info->params, sizeof info->params, "subgroup=%u key_lanes=%u keys_per_step=%u runs=%u spread=%u half_qk=%u%s pack=%u shared=%u split_len=%u%s",
                 cfg->subgroup, cfg->key_lanes, cfg->keys_per_step, cfg->runs, cfg->spread, cfg->half_qk,
                 cfg->probe == 1 ? " probe=loads" : cfg->probe == 2 ? " probe=arithmetic" : "", k->args.pack, cfg->shared_bytes, k->args.split_keys,
                 vk_pipeline_stats(dev, k->main));
    else
        snprintf(info->params, sizeof info->params, "subgroup=%u sg_reduce=%u pack=%u shared=%u split_len=%u%s",
                 cfg->subgroup, cfg->sg_reduce, k->args.pack, cfg->shared_bytes, k->args.split_keys, vk_pipeline_stats(dev, k->main));
    *out = k;
    return ATTNVK_OK;
}

/* The prepared arguments with this dispatch's rows. */
static avk_kernel_args dispatch_args(const avk_bkernel *k, const avk_dispatch *a)
{
    avk_kernel_args args = k->args;
    args.q_begin = (U32)a->q_begin;
    args.q_count = (U32)a->q_count;
    if (!a->lse) args.flags &= ~(U32)AVK_FLAG_WRITE_LSE;
    return args;
}

static attnvk_status bind_buffers(avk_bdev *dev, const avk_bkernel *k, const avk_dispatch *a, VkDescriptorSet *set)
{
    avk_bbuf *const bufs[VK_BINDINGS] = {a->q, a->k, a->v, a->o, a->lse ? a->lse : dev->dummy,
                                         k->ws_o ? k->ws_o : dev->dummy, k->ws_ml ? k->ws_ml : dev->dummy,
                                         a->block_table ? a->block_table : dev->dummy,
                                         a->seq_lens ? a->seq_lens : dev->dummy,
                                         a->kv_scales ? a->kv_scales : dev->dummy,
                                         a->alibi_slopes ? a->alibi_slopes : dev->dummy,
                                         a->sinks ? a->sinks : dev->dummy,
                                         a->mask ? a->mask : dev->dummy};
    return vk_bind_storage_buffers(dev, bufs, set);
}

static attnvk_status dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *device_ms)
{
    const VkPhysicalDeviceLimits *lim = &dev->caps->props.limits;
    avk_kernel_args pc = dispatch_args(k, a);
    attnvk_status rows = avk_dilated_view_rows(&pc, &k->p, a->q_begin, a->q_count);
    if (rows != ATTNVK_OK) return rows;
    const int64_t blocks = avk_grid_row_blocks(&pc, &k->p, a->q_count, (int)k->cfg.br);
    uint32_t gx = blocks > UINT32_MAX ? UINT32_MAX : (uint32_t)blocks, gy = (uint32_t)k->p.heads / pc.pack,
             gz = (uint32_t)k->p.batch * k->n_splits;
    if (gx > lim->maxComputeWorkGroupCount[0] || gy > lim->maxComputeWorkGroupCount[1] ||
        gz > lim->maxComputeWorkGroupCount[2])
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: grid %ux%ux%u exceeds the device's workgroup counts (use q_count)",
                        gx, gy, gz);
    VkDescriptorSet set;
    attnvk_status s = bind_buffers(dev, k, a, &set);
    if (s == ATTNVK_OK) s = vk_begin_timed(dev);
    if (s != ATTNVK_OK) return s;
    VkCommandBuffer cmd = dev->cmd;
    dev->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, dev->pipeline_layout, 0, 1, &set, 0, NULL);
    dev->vk.vkCmdPushConstants(cmd, dev->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    uint32_t rx = 1, ry = 1;
    if (k->n_splits > 1) {
        uint64_t threads = (uint64_t)k->p.batch * k->p.heads * (uint64_t)a->q_count * (uint64_t)(avk_head_dim_v(&k->p) / 4);
        uint32_t groups = ceil_div(threads, 64);
        rx = groups < lim->maxComputeWorkGroupCount[0] ? groups : lim->maxComputeWorkGroupCount[0];
        ry = ceil_div(groups, rx);
    }
    /* between the split pass and its reduce, and between launches (O and the workspace are rewritten) */
    const VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    for (int i = 0; i < a->launches; ++i) {
        if (i > 0)
            dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                         0, 1, &mb, 0, NULL, 0, NULL);
        dev->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->main);
        dev->vk.vkCmdDispatch(cmd, gx, gy, gz);
        if (k->n_splits > 1) {
            dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                         0, 1, &mb, 0, NULL, 0, NULL);
            dev->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->reduce);
            dev->vk.vkCmdDispatch(cmd, rx, ry, 1);
        }
    }
    /* O and LSE visible to the host and to later transfers: a wrapped buffer may be read through the
     * caller's mapping once the fence has signalled */
    const VkMemoryBarrier done = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT};
    dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &done, 0, NULL, 0,
                                 NULL);
    if (a->async) return vk_submit_async(dev); /* the fence: vk_wait_pending, attnvk_device_wait */
    attnvk_status st = vk_submit_timed(dev, device_ms);
    if (st == ATTNVK_OK) *device_ms /= a->launches;
    return st;
}

/* gathered in vk_backend.c */
attnvk_status avk_vk_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                             avk_bkernel **out, attnvk_kernel_info *info)
{
    return prepare(dev, p, opts, out, info);
}
attnvk_status avk_vk_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *device_ms)
{
    return dispatch(dev, k, a, device_ms);
}
void avk_vk_release_kernel(avk_bdev *dev, avk_bkernel *k) { release_kernel(dev, k); }
attnvk_status avk_vk_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *device_ms)
{
    return vk_backward_run(dev, &k->p, &k->args, &k->cfg, a, device_ms);
}
