/* Sizes and limits of the Vulkan decode bodies: the register decode body
 * (shaders/flash_decode.comp) and the matrix decode body
 * (shaders/flash_decode_mma_body.glsl, with its direct K/V operands), from the
 * table entry the variant table picked (vk_variants.c). */
#include "core/kernel_args.h" /* avk_gqa_pack */
#include "vulkan/vk_config_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Tuning aid: ATTNVK_VK_DECODE=lanes=L,keys=U,runs=R,slice=S,pages=P,spread=0,half=0,probe=N overrides the decode
 * body's lanes per key and keys per step (0 or absent: the table's, else automatic),
 * the values of a row per lane the lanes are chosen for (as the table's X_SLICE)
 * and how quantized K/V slices load: runs=2 (the default) as aligned words of the
 * row where the slice is 16 values (D a multiple of 64 for q8_0 and q4_0; fp8 as
 * one 16-byte load), else as runs; runs=1 as runs (a lane's 16 consecutive values,
 * realigned); runs=0 4 values at a time as before runs existed; pages=P stages at most P
 * block-table entries of a paged cache per workgroup (0: none; more keys read the table);
 * spread=0 keeps each lane group's softmax whole in every lane (no SPREAD); half=0 keeps Q.K in f32
 * over a quantized cache under f16 compute (no AVK_DECODE_HALF_QK); probe=1 times the loads alone and
 * probe=2 the arithmetic alone (wrong outputs: a diagnostic of what bounds the body). */
static void decode_env(uint32_t *lanes, uint32_t *keys, uint32_t *runs, uint32_t *slice, uint32_t *pages, uint32_t *spread,
                       uint32_t *half, uint32_t *probe)
{
    const char *v = getenv("ATTNVK_VK_DECODE");
    if (!v) return;
    const char *l = strstr(v, "lanes="), *k = strstr(v, "keys="), *r = strstr(v, "runs="), *s = strstr(v, "slice="),
               *pg = strstr(v, "pages="), *sp = strstr(v, "spread="), *h = strstr(v, "half="), *pr = strstr(v, "probe=");
    if (pr) *probe = atoi(pr + 6) == 1 ? 1u : atoi(pr + 6) == 2 ? 2u : 0u;
    if (sp) *spread = atoi(sp + 7) > 0;
    if (h) *half = atoi(h + 5) > 0;
    if (pg && atoi(pg + 6) >= 0 && atoi(pg + 6) <= 4096) *pages = (uint32_t)atoi(pg + 6);
    if (l && atoi(l + 6) > 0) *lanes = (uint32_t)atoi(l + 6);
    if (k && atoi(k + 5) > 0) *keys = (uint32_t)atoi(k + 5);
    if (r) *runs = atoi(r + 5) <= 0 ? 0 : atoi(r + 5) >= 2 ? 2 : 1;
    if (s && atoi(s + 6) > 0) *slice = (uint32_t)atoi(s + 6);
}

/* The decode body (shaders/flash_decode.comp): KEY_LANES lanes share a key,
 * each holding D / KEY_LANES values; the widest slice a 16-byte load fills
 * when nothing says otherwise. Q and O of BR rows live in registers. */
const char *vk_finish_decode_config(const vk_caps *c, const attnvk_problem *p, vk_config *cfg, const avk_tuning *e)
{
    static char why[160];
    /* lanes split Dk (Q, K) and Dv (V, O) alike: sizes follow the wider, both must divide */
    uint32_t D = dim_max(p), dk = dim_k(p), dv = dim_v(p);
    uint32_t min_sg = c->min_subgroup ? c->min_subgroup : c->subgroup_size;
    uint32_t max_sg = c->max_subgroup ? c->max_subgroup : c->subgroup_size;
    if (cfg->wg % max_sg || cfg->wg % min_sg) return "workgroup size must be a multiple of the subgroup sizes";
    /* one subgroup size across the dispatch: lane groups are numbered by subgroup */
    if (c->size_control && c->require_size_compute && min_sg != max_sg) cfg->required_subgroup = min_sg;
    cfg->subgroup = min_sg;
    uint32_t lanes = e->extra[X_KEY_LANES] > 0 ? (uint32_t)e->extra[X_KEY_LANES] : 0;
    uint32_t keys = e->extra[X_KEYS_PER_STEP] > 0 ? (uint32_t)e->extra[X_KEYS_PER_STEP] : 0;
    /* aligned words (runs 2) by default where they measured faster: H100 64k
     * (tools/h100/sweep-s14-vkq.txt) q4_0 0.838 -> 0.733 ms, fp8 0.784 -> 0.785;
     * q8_0 0.746 -> 0.877 (255 registers), so q8_0 keeps runs unless Q.K is in f16 pairs (below) */
    uint32_t runs = p->kv_format == ATTNVK_KV_Q8_0 ? 1 : 2, want_slice = e->extra[X_SLICE] > 0 ? (uint32_t)e->extra[X_SLICE] : 0;
    /* pages=N stages a paged cache's block-table entries for the workgroup's keys once in shared
     * memory (each key's row a shared load, not a global load its K/V loads wait on; 512 cover a
     * split of 8k keys at page 16). Off by default: on the H100 (B=8 H=32/8 D=128, 32k, page 16,
     * sweep-s15-vkpaged3 against vkaddr) q8_0 paged went 0.424 -> 2.471 ms with it, q4_0 2.471 ->
     * 2.067, fp8 0.464 -> 0.471, f16 0.406 -> 0.409 (contiguous 0.37-0.39): the driver's code for
     * this 255-register body swings between formats with small changes, staging or not. */
    /* Tried for the quantized targets (session 20, tools/h100/sweep-s20-decode*.txt, H100 64k) and left out:
     * tiles of raw rows copied through shared memory in 8- and 16-byte pieces, the lanes reading their
     * words there: q8_0 0.745 -> 1.001 ms, q4_0 0.732 -> 0.849, fp8 0.789 -> 1.135; half the packed rows
     * per workgroup (--tile 2x64, K/V decoded twice, 168 registers): q8_0 0.750 -> 1.108, f16 0.785 ->
     * 0.852. Nor is it the arithmetic alone (session 27, below: far fewer instructions a key gave 2.5-7.6%);
     * bytes in flight at 255 registers are the suspect left. */
    /* Q.K in f16 pairs (f16 compute over a quantized cache) for q8_0 and fp8: H100 64k (tools/h100/s27.sh,
     * bench/results/decode-2026-12-06-s27), with the spread softmax: fp8 0.686 -> 0.672 ms, q8_0 as aligned
     * words 0.680 (runs: 0.725 -> 0.866), q4_0 0.654 -> 0.667. Its registers let q8_0 take aligned words. */
    uint32_t pages = 0, spread = 1, half = p->kv_format != ATTNVK_KV_Q4_0, probe = 0;
    int half_ok = p->kv_format != ATTNVK_KV_DTYPE && p->dtype == ATTNVK_F16 && c->shader_f16;
    if (half_ok && p->kv_format == ATTNVK_KV_Q8_0) runs = 2;
    decode_env(&lanes, &keys, &runs, &want_slice, &pages, &spread, &half, &probe);
    cfg->probe = probe;
    /* the table's values per lane, where the rows' Q and O slices stay within the grown-tile budget */
    if (!lanes && want_slice && cfg->br * want_slice <= VK_DECODE_GROWN_REGS) {
        lanes = 1;
        while (lanes * 2 <= min_sg && divides_both(lanes * 2 * 4, dk, dv) && D / (lanes * 2) >= want_slice)
            lanes *= 2;
    }
    if (!lanes) { /* a 16-byte load per lane: 8 values of 16-bit storage, 4 otherwise */
        uint32_t vec = p->kv_format == ATTNVK_KV_DTYPE && p->dtype != ATTNVK_F32 ? 8 : 4;
        lanes = 1;
        while (lanes * 2 <= min_sg && divides_both(lanes * 2 * vec, dk, dv)) lanes *= 2;
        while (lanes * 2 <= min_sg && divides_both(lanes * 2 * 4, dk, dv) && D / lanes > 16) lanes *= 2;
    }
    if (!pow2(lanes) || lanes > min_sg || !divides_both(lanes * 4, dk, dv)) {
        snprintf(why, sizeof why, "decode: %u lanes per key must be a power of two <= the subgroup (%u) dividing Dk / 4 and Dv / 4",
                 lanes, min_sg);
        return why;
    }
    uint32_t slice = D / lanes;
    /* H100, f16 D=128, 16 lanes: 2 keys per step 2420 GB/s, 1 1852, 4 1762 (registers) */
    if (!keys) keys = slice <= 16 ? 2 : 1;
    if (keys > 4) return "decode: at most 4 keys per step";
    /* Q and O of every row in registers: at most 128 floats of each per lane */
    if (cfg->br * slice > VK_DECODE_MAX_REGS) {
        snprintf(why, sizeof why, "decode: %u rows x %u values per lane exceed the %d registers kept for Q (and O)",
                 cfg->br, slice, VK_DECODE_MAX_REGS);
        return why;
    }
    cfg->key_lanes = lanes;
    cfg->keys_per_step = keys;
    /* SPREAD (flash_decode.comp): a step's rows x keys scores, a power of two the body's 32 slots hold */
    cfg->spread = spread && pow2(cfg->br * keys) && cfg->br * keys <= 32;
    /* a run stays inside one 32-value block: slices of 4, 8 or 16 values (quantized caches have Dv = Dk; D=96's
     * slices of 12 straddled blocks and read the wrong scales before session 20);
     * aligned words (runs 2, shaders/flash_decode.comp's WORDS): slices of 16, q8_0 and q4_0 rows in
     * pairs of blocks, fewer loads (q8_0 5 aligned words a key for K and for V against 6 and
     * realigning shifts, q4_0 3 against 6, fp8 one 16-byte load against 4), the same arithmetic */
    int quant = p->kv_format != ATTNVK_KV_DTYPE && dk == dv;
    int words = quant && slice == 16 && (p->kv_format == ATTNVK_KV_FP8 || dk % 64 == 0);
    cfg->runs = !quant || !runs ? 0 : runs == 2 && words ? 2 : slice <= 16 && 32 % slice == 0 ? 1 : 0;
    /* Q.K in f16 pairs: f16 compute (bf16 Q may not fit f16), K's codes through words or runs */
    cfg->half_qk = half && half_ok && quant && cfg->runs != 0;
    cfg->resident = e->extra[X_RESIDENT] > 0 ? (uint32_t)e->extra[X_RESIDENT] : 1;
    /* a resident count the table names was measured: the plan fills it in whole waves, as a
     * partial last wave of this memory-bound body is pure tail (elsewhere: enough splits) */
    cfg->whole_waves = e->extra[X_RESIDENT] > 0;
    cfg->page_slots = p->page_size > 0 ? pages : 0;
    cfg->shared_bytes = 2 * (cfg->wg / min_sg) * cfg->br * 4 + cfg->br * (dv / 4) * 16 + cfg->page_slots * 4;
    return "";
}

/* Keys per workgroup step of the matrix decode body when the table leaves Bc 0:
 * 32 KiB of K and V in flight per step at D = 128 */
enum { VK_DECODE_MMA_STEP = 64 };

/* Whether the matrix decode body takes a quantized cache's K/V as register operands
 * (shaders/flash_decode_mma_body.glsl, AVK_DIRECT_KV): Dk = Dv a multiple of 128 up to 256, one
 * 16-row tile (a named tile only if it is that and a 16-key tile per subgroup: other tiles keep
 * the shared-memory tiles), NVIDIA's layout with its B operand probed (vk_rs_layout.c), or its emulation
 * (decode-rs-emu, 16x16 matrices: flash_decode_direct_emu.comp). On NVIDIA only when
 * ATTNVK_VK_DECODE_DIRECT=1: correct on the H100 but slower than the register decode body (B=8
 * H=32/8 D=128 64k, bench/results/decode-2026-12-05-s26: q8_0 1.021 ms against 0.737, q4_0 0.965
 * against 0.677, fp8 0.951 against 0.731); =0 keeps the shared-memory tiles in the emulation too. */
static uint32_t decode_direct_kv(const vk_caps *c, const attnvk_problem *p, const vk_config *cfg)
{
    const char *env = getenv("ATTNVK_VK_DECODE_DIRECT");
    int on = env && !strcmp(env, "1"), off = env && !strcmp(env, "0");
    uint32_t dk = dim_k(p), dv = dim_v(p);
    uint64_t rows = (uint64_t)avk_gqa_pack(p, p->seq_q, 0) * (uint64_t)p->seq_q;
    /* a named tile: one 16-row tile, and a step of one 16-key tile per subgroup (all are key groups) */
    int tile_fits = (!cfg->br || cfg->br == 16) && (!cfg->bc || (cfg->subgroup && cfg->bc == cfg->wg / cfg->subgroup * 16));
    if (off || p->kv_format == ATTNVK_KV_DTYPE || dk != dv || dk % 128 || dk > 256 || rows > 16 || !tile_fits || cfg->emulated)
        return 0;
    if (cfg->algo == VK_ALGO_DECODE_RS_EMU) return 1;
    return cfg->algo == VK_ALGO_DECODE_NV_RS && on && cfg->subgroup == 32 && c->rs_b_layout > 0;
}

/* The matrix decode body (shaders/flash_decode_mma_body.glsl): square MS
 * matrices; the subgroups form row groups (one MS-row tile each, as many as
 * the packed rows fill, up to all of them) x key groups. Br 0 takes it from
 * the packed rows, Bc 0 from VK_DECODE_MMA_STEP. Mirrors the body's shared
 * memory: the step's K and V (or the Q staging, or the key groups' O for the
 * merge) and a (max, sum) pair per row and key group; K rows of padded Dk, V
 * and O rows of padded Dv. */
const char *vk_finish_decode_mma_config(const vk_caps *c, const attnvk_problem *p, vk_config *cfg, const avk_tuning *e)
{
    static char why[160];
    /* A quantized cache, one 16-row tile: K/V operands straight from the cache into registers, a
     * 16-key tile per subgroup and step (decode_direct_kv; the emulation then takes 16x16 too) */
    cfg->direct_kv = decode_direct_kv(c, p, cfg);
    uint32_t dkp = mat_pad(dim_k(p)), dvp = mat_pad(dim_v(p)), sg = cfg->subgroup;
    uint32_t ms = !cfg->direct_kv && (cfg->algo == VK_ALGO_DECODE_RS_EMU || cfg->emulated) ? 8 : 16;
    cfg->mm = cfg->mn = cfg->mk = ms;
    if (c->size_control && c->require_size_compute && c->min_subgroup != c->max_subgroup) cfg->required_subgroup = sg;
    if (cfg->wg % sg || !pow2(cfg->wg / sg)) return "workgroup size must be a power-of-two number of subgroups";
    uint32_t nsg = cfg->wg / sg;
    if (!cfg->br) {
        uint64_t rows = (uint64_t)avk_gqa_pack(p, p->seq_q, 0) * (uint64_t)p->seq_q, groups = 1;
        while (groups < nsg && groups * ms < rows) groups *= 2;
        cfg->br = (uint32_t)groups * ms;
    }
    uint32_t tiles = cfg->br / ms, row_groups = tiles < nsg ? tiles : nsg;
    if (!tiles || cfg->br % ms || nsg % row_groups || tiles % row_groups) {
        snprintf(why, sizeof why, "tile Br must be a multiple of %u whose %u-row tiles split evenly with %u subgroups", ms, ms, nsg);
        return why;
    }
    cfg->key_groups = nsg / row_groups;
    if (cfg->direct_kv) {
        cfg->bc = ms; /* per key group */
        uint32_t q_words = cfg->br * (dkp / 8 + 1), o_words = cfg->br * dvp / 4;
        uint32_t merge = (cfg->key_groups - 1) * o_words, words = q_words > merge ? q_words : merge;
        if (words < o_words) words = o_words;
        cfg->shared_bytes = words * 16 + cfg->key_groups * cfg->br * 8;
        cfg->resident = e->extra[X_RESIDENT] > 0 ? (uint32_t)e->extra[X_RESIDENT] : 1;
        cfg->whole_waves = e->extra[X_WHOLE_WAVES] != 0;
        return "";
    }
    /* Bc is the workgroup's step: each key group takes Bc / key groups of its keys. Bc 0:
     * VK_DECODE_MMA_STEP keys, halved while the step's K/V outgrow shared memory */
    int automatic = cfg->bc == 0;
    if (automatic) cfg->bc = VK_DECODE_MMA_STEP > cfg->key_groups * ms ? VK_DECODE_MMA_STEP : cfg->key_groups * ms;
    if (cfg->bc % (cfg->key_groups * ms) || dkp % ms || dvp % ms) {
        snprintf(why, sizeof why, "tile Bc (keys per step) must be a multiple of %u x %u key groups, and the head dims of %u", ms,
                 cfg->key_groups, ms);
        return why;
    }
    for (;;) {
        uint32_t ks = dkp / 8 + 1, kv = cfg->bc * (ks + dvp / 8 + 1), q = cfg->br * ks;
        uint32_t merge = (cfg->key_groups - 1) * cfg->br * dvp / 4, words = kv > q ? kv : q;
        cfg->shared_bytes = (words > merge ? words : merge) * 16 + cfg->key_groups * cfg->br * 8;
        if (!automatic || cfg->shared_bytes <= c->props.limits.maxComputeSharedMemorySize ||
            cfg->bc == cfg->key_groups * ms)
            break;
        cfg->bc /= 2;
    }
    cfg->bc /= cfg->key_groups;
    cfg->resident = e->extra[X_RESIDENT] > 0 ? (uint32_t)e->extra[X_RESIDENT] : 1;
    cfg->whole_waves = e->extra[X_WHOLE_WAVES] != 0;
    return "";
}
