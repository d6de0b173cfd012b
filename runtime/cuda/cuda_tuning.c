/* The CUDA backend's tuning table and the checks that keep a configuration
 * compilable: kernels are data, and this is where their numbers live. */
#include "cuda/cuda_kernels.h"
#include "core/native_flash.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/cache.h" /* avk_hash */
#include "core/split_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ANY = -1, PREFILL = 0, DECODE = 1 };
#define NV "NVIDIA"

/* vendor, architecture, device, dtype, Dk min..max, decode, variant, BR, BC,
 * threads (simt and tiled; mma derives it from BR and rows per warp), extra[0]:
 * tiled's lanes per row; extra[2]: mma's warps per row group (col_warps).
 * mma entries apply from sm_80 to f16/bf16 only (see usable()); everything
 * else falls back to the portable simt entries at the end. An entry the
 * problem's Dv (or Dk 40/72's lanes) does not fit is skipped like one the
 * device cannot run. */
static const avk_tuning cuda_table[] = {
    /* Hopper (sm_90), measured on the H100 (bench/results/cuda-h100-notes.md):
     * wgmma-ws where D is whole 128-byte rows (TMA, a producer warpgroup; session 23,
     * f16 N=4k, TFLOP/s against wgmma in one run: D=64 332 -> 384 at 192x128, D=128
     * 368 -> 486 at 128x128 (192 rows: 276), D=256 419 -> 551, MLA 192/128 358 -> 534;
     * block layouts too since session 30, whose producer warp walks the visible tiles;
     * wgmma at the row's tiles before); else 4 warps x 32 rows of mma.sync,
     * two CTAs per SM at 255 registers */
    /* rows that see different key ranges (windows, masks, patterns: extra[1]) take 2
     * warpgroups; block layouts' tile walk spills 3. Plain causal keeps 192 rows since its
     * blocks count back from the last row (avk_locate_at; session 38, s38c, H100 N=4k 351.8
     * TFLOP/s against 335.3 on 128, N=16k 425.5 against 376.2; before, s30d: 333.1 and 344.5) */
    /* 96-key tiles on 192 rows (session 38): S and P of a 128-key tile beside O and the overlap's
     * P V in flight asked 200 registers of the 160 three warpgroups have (ptxas: 108 bytes of
     * spills at 128 keys, none at 96); the feature cases keep 128x128 (extra[3]: their keys) */
    {NV, "sm_9", NULL, ANY, 64, 64, PREFILL, "wgmma-ws", 192, 96, 0, {0, 128, 0, 128}},
    /* extra[1]: rows per CTA where rows see different key ranges (causal, windows).
     * Until session 23 this row was wgmma 192x128 with extra[1] = 128 for those:
     * 2 warpgroups, no spills (3 spill at 168 registers) and a shorter diagonal.
     * H100 D=128 f16 H=16 (session 11): causal 8k 331 -> 380 TFLOP/s, 32k 400 ->
     * 434; window 4096 at 32k 349 -> 383. A mask too (its loads spill 3 warpgroups):
     * 8k not causal 207.9 -> 253.3 (session 13). Block layouts too (192 rows span two
     * 128-row blocks, and a CTA loads the union of their tiles), and dilation (3
     * warpgroups spill 460 bytes with its residue tests) */
    {NV, "sm_9", NULL, ANY, 128, 128, PREFILL, "wgmma-ws", 128, 128, 0, {0}},
    /* Dk 192 (MLA 192/128 at N=4k: 534 TFLOP/s, cuDNN 557, session 23): MLA's 192/128
     * keeps D=128's registers (Dv 128, 128 keys) in 2 warpgroups (3 would need 233 KiB); 192/192 takes 64-key
     * tiles (128x128 would need 241 KiB) */
    {NV, "sm_9", NULL, ANY, 192, 192, PREFILL, "wgmma-ws", 128, 128, 0, {0}},
    {NV, "sm_9", NULL, ANY, 192, 192, PREFILL, "wgmma-ws", 128, 64, 0, {0}},
    {NV, "sm_9", NULL, ANY, 256, 256, PREFILL, "wgmma-ws", 128, 64, 0, {0}},
    {NV, "sm_9", NULL, ANY, 32, 64, PREFILL, "mma32", 128, 64, 0, {0}},
    {NV, "sm_9", NULL, ANY, 72, 96, PREFILL, "mma32-qs", 128, 64, 0, {0}},
    {NV, "sm_9", NULL, ANY, 112, 112, PREFILL, "mma32-qs", 128, 32, 0, {0}}, /* 64 keys spill 140 bytes */
    {NV, "sm_9", NULL, ANY, 128, 128, PREFILL, "mma32-qs", 128, 64, 0, {0}},
    {NV, "sm_9", NULL, ANY, 160, 256, PREFILL, "mma16-qs", 64, 32, 0, {0}},
    /* Dv > 256 (512; MLA's 576/512): two warps a row group, each with 256 columns of O
     * (128 accumulator registers); 16-key tiles keep Q, two stages and the S exchange in 162 KiB */
    {NV, "sm_9", NULL, ANY, 512, 576, PREFILL, "mma16-qs", 64, 16, 0, {0, 0, 2}},
    {NV, "sm_9", NULL, ANY, 32, 128, DECODE, "mma16", 16, 32, 0, {0}},
    {NV, "sm_9", NULL, ANY, 160, 256, DECODE, "mma16-qs", 16, 32, 0, {0}},
    {NV, "sm_9", NULL, ANY, 512, 576, DECODE, "mma16-qs", 16, 16, 0, {0, 0, 4}},
    /* Ampere / Ada (sm_8x): 99-163 KiB of shared memory; not measured here,
     * tiles chosen so two CTAs fit an A100's 164 KiB */
    {NV, "sm_8", NULL, ANY, 32, 64, PREFILL, "mma32", 128, 64, 0, {0}},
    {NV, "sm_8", NULL, ANY, 72, 128, PREFILL, "mma32-qs", 128, 32, 0, {0}},
    {NV, "sm_8", NULL, ANY, 160, 256, PREFILL, "mma16-qs", 64, 32, 0, {0}},
    {NV, "sm_8", NULL, ANY, 32, 128, DECODE, "mma16", 16, 32, 0, {0}},
    {NV, "sm_8", NULL, ANY, 160, 256, DECODE, "mma16-qs", 16, 32, 0, {0}},
    /* any later NVIDIA architecture with mma.sync (Dk > 256 also on sm_8x: 64 rows
     * where 162 KiB fit, else 16) */
    {NV, NULL, NULL, ANY, 32, 128, PREFILL, "mma16", 64, 64, 0, {0}},
    {NV, NULL, NULL, ANY, 160, 256, PREFILL, "mma16-qs", 64, 32, 0, {0}},
    {NV, NULL, NULL, ANY, 512, 576, PREFILL, "mma16-qs", 64, 16, 0, {0, 0, 2}},
    {NV, NULL, NULL, ANY, 512, 576, ANY, "mma16-qs", 16, 16, 0, {0, 0, 4}},
    {NV, NULL, NULL, ANY, 32, 256, DECODE, "mma16-qs", 16, 32, 0, {0}},
    /* f32 (and anything the tensor-core entries cannot take): the register-tiled
     * kernel; extra[0] = lanes per row (a lane takes whole float4s of Dk and Dv).
     * Tiles from OpenCL's tiled-f32 on the H100 (same scheme: D=64 2 lanes x 2
     * rows, D=128 8 x 4 with 256 threads, D=256 16 x 4); Dk 72 takes 2 lanes,
     * Dk > 256 16 lanes x 1 row (576/512: 9 + 8 float4s a lane) */
    {NV, NULL, NULL, ANY, 32, 64, PREFILL, "tiled", 128, 16, 128, {2}},
    {NV, NULL, NULL, ANY, 72, 72, PREFILL, "tiled", 64, 16, 128, {2}},
    {NV, NULL, NULL, ANY, 80, 112, PREFILL, "tiled", 64, 16, 128, {4}},
    {NV, NULL, NULL, ANY, 128, 128, PREFILL, "tiled", 128, 16, 256, {8}},
    {NV, NULL, NULL, ANY, 160, 256, PREFILL, "tiled", 32, 8, 128, {16}},
    {NV, NULL, NULL, ANY, 512, 576, ANY, "tiled", 16, 8, 256, {16}},
    {NV, NULL, NULL, ANY, 32, 256, DECODE, "tiled", 16, 32, 64, {4}},
    {NV, NULL, NULL, ANY, 32, 256, DECODE, "tiled", 16, 32, 32, {2}}, /* Dk 40, 72 */
    /* portable f32 kernel: every dtype, every device */
    {NULL, NULL, NULL, ANY, 0, 0, ANY, "simt", 32, 32, 128, {0}},
    {NULL, NULL, NULL, ANY, 512, 576, ANY, "simt", 16, 16, 256, {0}},
    {NULL, NULL, NULL, ANY, 512, 576, ANY, "simt", 4, 8, 32, {0}}, /* 48 KiB devices */
    {NULL, NULL, NULL, ANY, 0, 0, DECODE, "simt", 16, 32, 128, {0}},
    {NULL, NULL, NULL, ANY, 160, 256, PREFILL, "simt", 16, 32, 128, {0}},
    {NULL, NULL, NULL, ANY, 160, 256, ANY, "simt", 16, 16, 128, {0}}, /* 64 KiB devices */
};

/* GQA-packed decode on tensor cores: the kernel and its tiles follow the
 * packed rows (pack * Nq), so every kv head's K/V is streamed by one row
 * block. Up to 16 rows of a quantized cache, mma-decode: one m-tile whose
 * keys key_warps warps split, kv_stages raw stages each; of an f16/bf16
 * cache, mma16 16x32. Above, mma16 with 64x64 tiles.
 * Measured on the H100 (B=8, H=32, H_kv=8, D=128, f16, Nk=64k unless said):
 * - f16 at Nk=16k: mma16 16x32 2645 GB/s; mma-decode 16x16 w4s3 2433,
 *   w8s2 2612, w2s2 2524 (one-warp CTAs already keep enough bytes in flight).
 * - q8_0: mma16 2.72 ms (dequantized tile in shared memory); mma-decode
 *   (per-value dequant) 16x16 w4s3 1.22, w8s3 1.07, w4s4 1.24, 16x32 w4s2 0.76;
 *   with codes in the fragments and scales in f32 (attn_decode.h), 16x32:
 *   w4s2 0.646, w8s2 0.590, w4s3 0.657, w2s3 0.785, w4s2 at 3 CTAs per SM
 *   (167 registers) 0.574. q4_0: w4s2 0.508, w8s2 0.487. f16: 0.758.
 * - Nq=16 (64 rows) at Nk=32k: 0.49 ms at 64x64, 0.54 at 64x32, 0.97 at 16x32.
 * - paged f16 (page 16, shuffled) at Nk=32k against contiguous: mma16 16x32
 *   1.326 vs 0.391 ms (each row waits on its own block-table load);
 *   mma-decode 16x32 w2s2 0.408 vs 0.402, w4s2 0.419 vs 0.397, w1s2 0.454
 *   vs 0.392 (one table read per key a tile ahead). Contiguous f16 stays on
 *   mma16: mma-decode w1s2 reads 2569 GB/s at 16k (mma16 2644), 2844 at 64k.
 * - Session 8 (warm clocks, back-to-back launches): quantized 16x32 w4s2 with
 *   9 splits (2 resident CTAs per SM in the split plan) against 5 (1 resident):
 *   q8_0 0.539 vs 0.571 ms, q4_0 0.433 vs 0.462; 16x16 with 9 splits is slower
 *   (q8_0 0.753). f16 at 16k: mma16 16x32 with 5 splits 0.200 ms, 9 0.206, 3 0.262. */
/* - Session 10, splits in whole waves (2 resident CTAs: 264 slots, 64 CTAs a
 *   split): Nq=16 64x64 at 32k 4 splits 0.401 ms, 8 0.408, 5 (one resident)
 *   0.489; f16 Nq=1 mma16 16x32 (5 fit an SM) 16k 8 splits 0.196 ms, 5 0.201,
 *   4 0.222; 64k 8 0.751, 5 0.756, 16 0.774, 4 0.850. */
/* - Session 14, quantized 16x32 w4s2 at 3 CTAs per SM (396 slots, 64 CTAs a
 *   split): the plan for 2 resident (9 splits, 1.45 waves) against whole waves
 *   of 3: q8_0 64k 0.493 ms with 9 splits, 0.411 with 6, 0.412 with 12; q4_0
 *   0.342 with 9, 0.308 with 12 (tools/h100/sweep-s14-vkq.txt). */
/* - Dk > 256 (512; DeepSeek MLA's absorbed decode, 576/512 with 128 heads on
 *   one kv head: 128 packed rows): Q stays in shared memory and the warps of a
 *   row group split O's columns (col_warps): 64 rows x 2 (254 registers, no
 *   spills, one CTA per SM), up to 16 rows x 4 (164 registers). Not measured. */
/* - Session 21, after the batched split merge (sweep-s21-decode.txt): mma16
 *   16x32 plans 3 resident in whole waves (396 slots), not the 4 that fit an
 *   SM (528): f16 16k 6 splits 0.192 ms against 8's 0.195 (cuDNN 0.183), 64k
 *   0.724 / 0.738 (0.698); B=1 128k 48 splits 0.197, 63 0.198, 32 0.220, 96
 *   0.247 (0.184). The plan for 3 gives 6 and 48. */
/* - Session 16: mma-decode's sm_90 bulk copies (attn_decode.h, ATTNVK_CUDA_DEFINES=
 *   -DAVK_DECODE_BULK=1, copy=bulk in the kernel info) lost to cp.async on the H100
 *   (f16 64k 0.746 -> 1.136 ms with one key warp, fp8 0.414 -> 0.576), so they are off.
 *   f16 64k: mma16 0.750 ms, mma-decode w1s2 0.746, cuDNN 0.701 (sweep-s16-bulk.txt). */
enum { KV_ANY, KV_QUANTIZED, KV_PAGED };
static const struct {
    int max_rows;
    int min_dim, max_dim; /* Dk */
    int kv; /* KV_QUANTIZED: quantized caches only; KV_PAGED: paged caches only */
    const char *variant;
    int br, bc, key_warps, kv_stages, min_ctas, resident, whole_waves, col_warps;
} packed_decode_tiles[] = {
    {16, 0, 256, KV_QUANTIZED, "mma-decode", 16, 32, 4, 2, 3, 3, 1, 0},
    {16, 0, 256, KV_PAGED, "mma-decode", 16, 32, 2, 2, 0, 0, 0, 0},
    {16, 0, 256, KV_ANY, "mma16", 16, 32, 0, 0, 0, 3, 1, 0},
    {1 << 30, 0, 256, KV_ANY, "mma16", 64, 64, 0, 0, 0, 2, 1, 0},
    {16, 257, 1 << 30, KV_ANY, "mma16-qs", 16, 16, 0, 0, 0, 2, 1, 4},
    {1 << 30, 257, 1 << 30, KV_ANY, "mma16-qs", 64, 16, 0, 0, 0, 1, 1, 2},
    {1 << 30, 257, 1 << 30, KV_ANY, "mma16-qs", 16, 16, 0, 0, 0, 2, 1, 4}, /* devices without 162 KiB */
};

static int packed_entry_fits(int kv, const attnvk_problem *p)
{
    return kv == KV_ANY || (kv == KV_QUANTIZED && p->kv_format != ATTNVK_KV_DTYPE) ||
           (kv == KV_PAGED && p->page_size > 0);
}

const avk_tuning *avk_cuda_tuning_table(int *count)
{
    *count = (int)(sizeof cuda_table / sizeof *cuda_table);
    return cuda_table;
}

/* mma-decode's warps and stages when no table entry names them */
enum { DEFAULT_KEY_WARPS = 4, DEFAULT_KV_STAGES = 2 };

int avk_cuda_parse_variant(const char *name, avk_cuda_config *cfg)
{
    cfg->wgmma = 0;
    cfg->tiled = 0;
    cfg->key_warps = 0;
    cfg->kv_stages = 0;
    cfg->col_warps = 0;
    cfg->fp8 = 0;
    if (strcmp(name, "mma-decode") == 0) {
        cfg->mma = 1;
        cfg->rows_per_warp = 16;
        cfg->qreg = 1;
        cfg->key_warps = DEFAULT_KEY_WARPS;
        cfg->kv_stages = DEFAULT_KV_STAGES;
    } else if (strcmp(name, "simt") == 0 || strcmp(name, "tiled") == 0) {
        cfg->tiled = name[0] == 't';
        cfg->mma = 0;
        cfg->rows_per_warp = 0;
        cfg->qreg = 0;
    } else if (strcmp(name, "wgmma") == 0 || strcmp(name, "wgmma-ws") == 0 || strcmp(name, "wgmma-fp8") == 0 ||
               strcmp(name, "wgmma-ws-fp8") == 0) {
        cfg->mma = 1;
        cfg->fp8 = strstr(name, "fp8") != NULL;
        cfg->wgmma = strncmp(name, "wgmma-ws", 8) == 0 ? 2 : 1;
        cfg->rows_per_warp = 16;
        cfg->qreg = 0;
    } else if (strncmp(name, "mma", 3) == 0) {
        int rows = 0;
        char suffix[8] = "";
        if (sscanf(name + 3, "%d%7s", &rows, suffix) < 1 || (rows != 16 && rows != 32)) return 0;
        if (suffix[0] && strcmp(suffix, "-qs") != 0) return 0;
        cfg->mma = 1;
        cfg->rows_per_warp = rows;
        cfg->qreg = suffix[0] == '\0';
    } else {
        return 0;
    }
    snprintf(cfg->variant, sizeof cfg->variant, "%s", name);
    return 1;
}

/* bytes of one K/V row as stored (see core/kv_cache.c) */
static size_t kv_row_bytes(const avk_cuda_config *c)
{
    attnvk_problem p = {.head_dim = c->head_dim, .dtype = c->dtype, .kv_format = c->kv_format};
    return attnvk_kv_row_bytes(&p);
}

static size_t pad16(int d) { return ((size_t)d + 15) / 16 * 16; }

size_t avk_cuda_config_smem(const avk_cuda_config *c)
{
    size_t D = (size_t)c->head_dim, DV = (size_t)avk_cuda_dim_v(c);
    if (c->fp8) /* attn_sm90.h's AVK_FP8: Q (16-bit: O is staged over it), two stages of K and of V
                 * transposed, in bytes; a swizzled row is 128 bytes at least */
        return 1024u + (size_t)c->br * D * 2 +
               2u * ((size_t)c->bc * (D > 128 ? D : 128) + DV * ((size_t)c->bc > 128 ? (size_t)c->bc : 128)) +
               (c->wgmma == 2 ? 64u : 0u);
    if (c->wgmma) /* 1024-byte alignment slack, Q, two stages of K and V (swizzled, unpadded); wgmma-ws: the
                   * stages' four mbarriers each (full K, full V, K's and V's slots free) and the stages'
                   * tile slots (AVK_TILE_SLOTS); with mask_tma two f16 mask stages and their two mbarriers each */
        return 1024u + ((size_t)c->br * D * (c->persistent ? 2u : 1u) + 2u * (size_t)c->bc * (D + DV)) * 2 +
               (c->wgmma == 2 ? 80u : 0u) + (c->persistent == 2 ? 128u : 0u) + /* the persistent queue */
               (c->mask_tma ? 2u * (size_t)c->br * (size_t)c->bc * 2u + 32u : 0u);
    if (c->tiled) /* f32 K and V tiles (two stages for f32 storage: cp.async); Q and O live in registers */
        return (c->dtype == ATTNVK_F32 ? 2u : 1u) * (size_t)c->bc * (D + DV) * 4;
    if (c->key_warps) { /* Q, the stages' mbarriers, then per warp its raw K/V stages; the warps' merge reuses them */
        const size_t row = kv_row_bytes(c), stage_rows = (size_t)c->key_warps * (size_t)c->kv_stages * 2u * (size_t)c->bc;
        size_t rings = stage_rows * (row % 32 == 0 ? row + 16 : row); /* attn_decode.h's RAW_ROW */
        size_t merge = (size_t)c->key_warps * 16u * (D + 2) * 4;
        size_t bars = ((size_t)c->key_warps * (size_t)c->kv_stages * 8u + 15u) / 16u * 16u; /* attn_decode.h's BARS */
        const size_t q = 16u * (D + 8) * 2, bytes = q + bars + (rings > merge ? rings : merge);
        if (!c->paged || row % 16 != 8) return bytes;
        /* ALIGNED_ROWS: slots of the row + 8 bytes rounded to 16, Q in the last warp's last stage where
         * it fits (Q_IN_RING), two words a stage (ODD_BYTES); sized for either layout (bf16 over q8_0
         * and ATTNVK_CUDA_DEFINES=-DAVK_DECODE_ALIGNED_ROWS=0 copy rows as stored) */
        const size_t slot = (row + 8 + 15) / 16 * 16, slots = stage_rows * slot;
        const size_t odd = ((size_t)c->key_warps * (size_t)c->kv_stages * 8u + 15u) / 16u * 16u;
        const size_t aligned = (q <= 2 * (size_t)c->bc * slot ? 0 : q) + bars + odd + (slots > merge ? slots : merge);
        return aligned > bytes ? aligned : bytes;
    }
    if (c->mma) { /* attn_mma.h: Q + two stages of K (rows of Dk padded to k-steps, + 16 bytes) and V (Dv),
                   * two raw stages of a quantized K/V, the row groups' two partial-S buffers (col_warps > 1) */
        const size_t wn = (size_t)avk_cuda_col_warps(c), wm = (size_t)(c->rows_per_warp > 0 ? c->rows_per_warp / 16 : 1);
        const size_t row_groups = (size_t)c->br / (16u * wm);
        return ((size_t)c->br + 2u * (size_t)c->bc) * (pad16(c->head_dim) + 8) * 2 +
               2u * (size_t)c->bc * (pad16(avk_cuda_dim_v(c)) + 8) * 2 +
               (c->kv_format != ATTNVK_KV_DTYPE ? 4u * (size_t)c->bc * kv_row_bytes(c) : 0) +
               (wn > 1 ? row_groups * 2u * wn * wm * ((size_t)c->bc / 8) * 4u * 32u * 4u : 0);
    }
    return ((size_t)c->br * (D + 1) + (size_t)c->bc * (D + 1) + (size_t)c->bc * (DV + 1) +
            (size_t)c->br * (c->bc + 1) + 3u * c->br) * 4;
}

const char *avk_cuda_decode_copy(const avk_cuda_config *c, int cc_major, int paged)
{
    if (!c->key_warps) return NULL;
    const char *defs = getenv("ATTNVK_CUDA_DEFINES");
    if (cc_major < 9 || !defs || !strstr(defs, "AVK_DECODE_BULK=1")) return "cp.async"; /* off by default */
    const size_t row = kv_row_bytes(c);
    /* attn_decode.h's BULK_ROWS, and BULK_TILE (LINEAR_TILE: unpadded rows, whole 16-byte runs) */
    const int rows = row % 16 == 0;
    const int tile = !paged && row % 32 != 0 && ((size_t)c->bc * row) % 16 == 0 &&
                     !(defs && strstr(defs, "AVK_DECODE_LINEAR=0"));
    return rows || tile ? "bulk" : "cp.async";
}

int avk_cuda_resident(const avk_cuda_config *c, size_t smem_per_sm)
{
    int resident = c->resident > 0 ? c->resident : 1;
    /* each resident block also reserves 1 KiB of the SM's shared memory */
    size_t fit = smem_per_sm / (avk_cuda_config_smem(c) + 1024u);
    if (smem_per_sm > 0 && fit >= 1 && (size_t)resident > fit) resident = (int)fit;
    return resident;
}


static attnvk_status head_dims_unsupported(int dk, int dv)
{
    char dims[24] = "";
    if (dv != dk) snprintf(dims, sizeof dims, "s %d/%d", dk, dv);
    else snprintf(dims, sizeof dims, " %d", dk);
    return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                    "cuda: head dim%s not supported (32, 40, 64, 72, 80, 96, 112, 128, 192, 256, 512; Dk/Dv 192/128 "
                    "and 576/512)",
                    dims);
}

attnvk_status avk_cuda_config_check(avk_cuda_config *c, int cc_major, size_t smem_limit)
{
    const int dk = c->head_dim, dv = avk_cuda_dim_v(c);
    if (!avk_native_head_dims(dk, dv)) return head_dims_unsupported(dk, dv);
    if (c->br < 1 || c->bc < 1) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuda: tiles must be positive");
    if (c->contract && (c->wgmma || c->tiled))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuda: variant %s runs contiguous caches one head per CTA; GQA-packed decode, paged, ragged "
                        "and quantized caches run on mma16, mma16-qs, mma32, mma32-qs or simt",
                        c->variant);
    if (c->mma) {
        if (c->dtype == ATTNVK_F32)
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: variant %s takes f16/bf16 (f32 runs 'simt')", c->variant);
        if (cc_major < 8)
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: variant %s needs sm_80 or newer (mma.sync m16n8k16)",
                            c->variant);
        if (c->wgmma) {
            if (cc_major != 9)
                return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: variant wgmma needs sm_90 (Hopper: wgmma, sm_90a)");
            if (dk % 64 || dv % 64 || dk > 256)
                return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                                "cuda: variant wgmma takes head dims 64, 128, 192, 256 and 192/128 (got %d/%d)", dk, dv);
            if (c->br % 64 || c->br < 64 || c->br > 192 ||
                (c->bc != 64 && c->bc != 128 && c->bc != 256 && (c->bc != 96 || c->fp8)))
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                                "cuda: wgmma needs tile_br 64, 128 or 192 and tile_bc 64, 96 (not fp8), 128 or 256 "
                                "(got %dx%d)",
                                c->br, c->bc);
            if (c->fp8 && (dk != dv || dk == 192 || c->dtype == ATTNVK_F32 || c->dilated_view ||
                           c->score_mod))
                return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                                "cuda: the FP8 forward (wgmma-fp8) takes head dims 64, 128 and 256 with f16/bf16 O, "
                                "causal, windows and sinks (no softcap, ALiBi, masks, block layouts or dilation yet)");
            if (c->fp8 && c->wgmma == 2 && (dk % 128 || c->bc % 128))
                return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                                "cuda: wgmma-ws-fp8 loads 128-byte boxes: head dim and tile_bc multiples of 128 (got "
                                "D=%d, %d keys); wgmma-fp8 takes the others",
                                dk, c->bc);
            c->threads = (c->br / 64 + (c->wgmma == 2)) * 128; /* wgmma-ws: the producer's warpgroup */
        } else if (c->key_warps) {
            if (c->br != 16 || (c->bc != 16 && c->bc != 32))
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuda: mma-decode needs tile_br 16 and tile_bc 16 or 32 (got %dx%d)",
                                c->br, c->bc);
            if (dk > 128 || dk % 16 || dv != dk)
                return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                                "cuda: mma-decode takes one head dim, a multiple of 16 up to 128 (got %d/%d)", dk, dv);
            if (c->key_warps < 1 || c->key_warps > 8 || c->kv_stages < 2 || c->kv_stages > 4)
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                                "cuda: mma-decode needs 1-8 key warps and 2-4 stages (got %d, %d)", c->key_warps,
                                c->kv_stages);
        } else {
            const int wn = avk_cuda_col_warps(c), groups = c->rows_per_warp > 0 ? c->br / c->rows_per_warp : 0;
            if (c->br % c->rows_per_warp || groups * wn > 16 || (wn > 1 && groups > 15))
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                                "cuda: %s needs tile_br a multiple of %d, at most %d (got %d)", c->variant,
                                c->rows_per_warp, 16 / wn * c->rows_per_warp, c->br);
            if (wn != 1 && wn != 2 && wn != 4)
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuda: %s takes 1, 2 or 4 warps a row group (got %d)",
                                c->variant, wn);
            /* each warp: whole k-steps of Dk and n-tile pairs of Dv (both padded to 16) */
            if (pad16(dk) % (16u * (size_t)wn) || pad16(dv) % (16u * (size_t)wn))
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                                "cuda: %s cannot split head dims %d/%d over %d warps a row group", c->variant, dk, dv,
                                wn);
            c->col_warps = wn;
        }
        if (c->bc % 16 || c->bc > 256)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuda: %s needs tile_bc a multiple of 16, <= 256 (got %d)",
                            c->variant, c->bc);
        if (c->key_warps) c->threads = 32 * c->key_warps;
        else if (!c->wgmma) c->threads = c->br / c->rows_per_warp * 32 * avk_cuda_col_warps(c);
    } else if (c->tiled) {
        int ds = c->lanes_per_row;
        if (c->threads <= 0 || c->threads > 1024 || c->threads % 32)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuda: tiled needs 32..1024 threads in whole warps (got %d)",
                            c->threads);
        if (ds < 1 || ds > 32 || (ds & (ds - 1)) || dk % (4 * ds) || dv % (4 * ds))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "cuda: tiled lanes per row must be a power of two <= 32 dividing Dk/4 and Dv/4 (got %d, "
                            "D=%d/%d)",
                            ds, dk, dv);
        if (c->br % (c->threads / ds))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "cuda: tiled needs tile_br a multiple of %d (threads / lanes per row; got %d)",
                            c->threads / ds, c->br);
    } else {
        if (c->threads <= 0) c->threads = 128;
        if (c->bc > c->threads || c->threads % c->bc || c->br % (c->threads / c->bc) || (c->br * dv) % c->threads)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "cuda: simt needs tile_bc dividing %d and tile_br a multiple of %d (got %dx%d)",
                            c->threads, c->threads / (c->bc <= c->threads && c->bc > 0 ? c->bc : 1), c->br, c->bc);
    }
    size_t smem = avk_cuda_config_smem(c);
    if (smem_limit && smem > smem_limit)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuda: %s %dx%d at D=%d/%d needs %zu bytes of shared memory (device: %zu)", c->variant, c->br,
                        c->bc, dk, dv, smem, smem_limit);
    return ATTNVK_OK;
}

typedef struct usable_ctx {
    int cc_major;
    size_t smem_optin;
    attnvk_dtype dtype;
    int head_dim, head_dim_v;
    attnvk_kv_format kv_format;
    int contract, paged;
    const char *variant; /* only this variant's entries, or NULL for any */
} usable_ctx;

static int usable(const avk_tuning *e, const void *ctx)
{
    const usable_ctx *u = ctx;
    avk_cuda_config c;
    memset(&c, 0, sizeof c);
    if (u->variant && strcmp(u->variant, e->variant) != 0) return 0;
    if (!avk_cuda_parse_variant(e->variant, &c)) return 0;
    c.dtype = u->dtype;
    c.head_dim = u->head_dim;
    c.head_dim_v = u->head_dim_v;
    c.kv_format = u->kv_format;
    c.contract = u->contract;
    c.paged = u->paged;
    c.br = e->tile_br;
    c.bc = e->tile_bc;
    c.threads = e->workgroup_size;
    c.lanes_per_row = e->extra[0];
    if (c.key_warps && e->extra[0]) c.key_warps = e->extra[0], c.kv_stages = e->extra[1];
    if (c.mma && !c.wgmma && !c.key_warps) c.col_warps = e->extra[2];
    return avk_cuda_config_check(&c, u->cc_major, u->smem_optin) == ATTNVK_OK;
}

/* Tiles for a variant named in the options that the table has no usable
 * entry of for this device and shape (the check then says what is wrong). */
static void variant_defaults(avk_cuda_config *c, int decode)
{
    if (c->tiled) {
        c->lanes_per_row = 4;
        c->threads = 128;
        c->br = 32;
        c->bc = 16;
    } else if (!c->mma) {
        c->br = 32;
        c->bc = 32;
        c->threads = 128;
    } else if (c->key_warps) {
        c->br = 16;
        c->bc = 32;
    } else if (c->wgmma) {
        c->br = 128;
        c->bc = c->head_dim > 128 ? 64 : 128;
    } else {
        c->br = c->rows_per_warp == 32 ? 128 : 64;
        c->bc = c->head_dim > 256 ? 16 : c->head_dim > 128 ? 32 : 64;
    }
    if (decode && !c->tiled && !c->key_warps) c->br = c->wgmma ? 64 : c->mma ? c->rows_per_warp : 16;
}

static void take_entry(const avk_tuning *e, avk_cuda_config *cfg)
{
    avk_cuda_parse_variant(e->variant, cfg);
    cfg->br = e->tile_br;
    cfg->bc = e->tile_bc;
    cfg->threads = e->workgroup_size;
    cfg->lanes_per_row = e->extra[0];
    if (cfg->key_warps && e->extra[0]) cfg->key_warps = e->extra[0], cfg->kv_stages = e->extra[1];
    if (cfg->mma && !cfg->wgmma && !cfg->key_warps) cfg->col_warps = e->extra[2];
}

/* Developer knob for sweeps: $ATTNVK_CUDA_TUNE "key_warps=N,stages=M,min_ctas=C" over
 * the mma-decode configuration (either may be left out). */
static attnvk_status tune_from_env(avk_cuda_config *cfg)
{
    const char *env = getenv("ATTNVK_CUDA_TUNE");
    if (!env || !*env || !cfg->key_warps) return ATTNVK_OK;
    char copy[128];
    snprintf(copy, sizeof copy, "%s", env);
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int value = 0, used = 0;
        if (sscanf(tok, "key_warps=%d%n", &value, &used) == 1 && !tok[used]) cfg->key_warps = value;
        else if (sscanf(tok, "stages=%d%n", &value, &used) == 1 && !tok[used]) cfg->kv_stages = value;
        else if (sscanf(tok, "min_ctas=%d%n", &value, &used) == 1 && !tok[used] && value >= 0 && value <= 32)
            cfg->min_ctas = value;
        else
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "ATTNVK_CUDA_TUNE: '%s' is not key_warps=N, stages=N or min_ctas=N", tok);
    }
    return ATTNVK_OK;
}

/* A dilated problem as strided views (attn_fwd.cu's avk_dilated_view: a rate-r group
 * does its visible work, not r^2 times it through a per-element test) where the body
 * addresses rows through the CTA's strides: wgmma-ws reads K/V through TMA descriptors
 * of fixed strides, so it gives way to wgmma unless named; mma-decode finds key rows
 * one by one (avk_kv_row) and keeps the test. On by default since session 29 (H100: every
 * checked record passed; 1M's six-group ladder 491 -> 10.0 ms at D=128); ATTNVK_CUDA_DILATED_VIEWS=0
 * keeps the per-element test, for comparisons. */
static void choose_dilated_view(const attnvk_problem *p, const attnvk_kernel_options *o, avk_cuda_config *cfg)
{
    const char *env = getenv("ATTNVK_CUDA_DILATED_VIEWS");
    if (!p->dilated_groups || (env && strcmp(env, "0") == 0) || cfg->key_warps) return;
    if (cfg->wgmma == 2) {
        if (o->variant) return;
        avk_cuda_parse_variant("wgmma", cfg);
    }
    cfg->dilated_view = 1;
    cfg->score_mod &= ~(int)AVK_MOD_DILATED;
}

/* The FP8 forward's tiles (wgmma-fp8, attn_sm90.h's AVK_FP8): two consumer warpgroups of 64
 * query rows, and key tiles that keep S and O within a warpgroup's registers, as the 16-bit
 * wgmma table has them */
static const struct {
    int head_dim;
    const char *variant;
    int br, bc;
} fp8_tiles[] = {{64, "wgmma-fp8", 128, 128}, {128, "wgmma-ws-fp8", 128, 128}, {256, "wgmma-fp8", 128, 64}};

static attnvk_status select_fp8(int cc_major, size_t smem_optin, const attnvk_problem *p,
                                const attnvk_kernel_options *o, int pack, avk_cuda_config *cfg)
{
    if (o->variant && strcmp(o->variant, "wgmma-fp8") != 0 && strcmp(o->variant, "wgmma-ws-fp8") != 0)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: fp8 queries run on wgmma-fp8 or wgmma-ws-fp8 only (asked for %s)",
                        o->variant);
    if (p->page_size > 0 || p->ragged || pack > 1)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuda: the FP8 forward takes a contiguous cache of Nk keys, one query head per CTA (no paging, "
                        "seq_lens or GQA packing yet)");
    const char *variant = "wgmma-fp8";
    cfg->br = 128;
    cfg->bc = 128;
    for (size_t i = 0; i < sizeof fp8_tiles / sizeof *fp8_tiles; ++i)
        if (fp8_tiles[i].head_dim == p->head_dim)
            variant = fp8_tiles[i].variant, cfg->br = fp8_tiles[i].br, cfg->bc = fp8_tiles[i].bc;
    if (o->variant && strcmp(o->variant, variant) != 0) variant = o->variant, cfg->bc = p->head_dim > 128 ? 64 : 128;
    avk_cuda_parse_variant(variant, cfg);
    cfg->kv_format = ATTNVK_KV_DTYPE; /* the body reads e4m3 rows itself */
    cfg->contract = 0;
    if (o->tile_br) cfg->br = o->tile_br;
    if (o->tile_bc) cfg->bc = o->tile_bc;
    return avk_cuda_config_check(cfg, cc_major, smem_optin);
}

/* ATTNVK_CUDA_PERSISTENT=1|2: wgmma-ws (16-bit) as a persistent kernel (attn_sm90.h's AVK_PERSISTENT:
 * 1 deals the blocks in rounds, 2 takes them from a counter) where its second Q buffer fits. Off:
 * correct on the H100 but 5-17% slower than the grid of one CTA a block in every case measured
 * (bench/results/hopper-2026-12-07-s37; its builds spill where the default does not). */
static attnvk_status choose_persistent(avk_cuda_config *cfg, size_t smem_optin)
{
    const char *env = getenv("ATTNVK_CUDA_PERSISTENT");
    if (!env || !*env || strcmp(env, "0") == 0) return ATTNVK_OK;
    if (strcmp(env, "1") != 0 && strcmp(env, "2") != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ATTNVK_CUDA_PERSISTENT: '%s' is not 0, 1 or 2", env);
    if (cfg->wgmma != 2 || cfg->fp8) return ATTNVK_OK;
    cfg->persistent = env[0] - '0';
    if (smem_optin && avk_cuda_config_smem(cfg) > smem_optin) cfg->persistent = 0;
    return ATTNVK_OK;
}

/* wgmma-ws with an f16 mask: its tiles come by TMA into shared memory beside K's and V's
 * (attn_sm90.h's AVK_MASK_TMA) where the mask's rows make a 2-D tensor map (Nk a multiple of 8:
 * 16-byte row strides), a row is one head's (no GQA packing), the overlap runs (384 or 512
 * threads) and the two mask stages fit. H100 (s43, f16 D=128 N=8k causal, random mask): 330 ->
 * 456 TFLOP/s against plain 529; D=64 190 -> 273. ATTNVK_CUDA_MASK_TMA=0 turns it off (the A/B). */
static attnvk_status choose_mask_tma(const attnvk_problem *p, int pack, avk_cuda_config *cfg, size_t smem_optin)
{
    int on;
    const attnvk_status s = avk_env_switch("ATTNVK_CUDA_MASK_TMA", 1, &on);
    if (s != ATTNVK_OK || !on) return s;
    const int pattern = (avk_problem_features(p) & (ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED)) != 0;
    if (cfg->wgmma != 2 || cfg->fp8 || cfg->persistent || cfg->dilated_view || !p->mask || p->mask_dtype != ATTNVK_F16 ||
        pattern || pack != 1 || p->seq_kv % 8 != 0 || cfg->bc % 64 != 0 || (cfg->threads != 384 && cfg->threads != 512))
        return ATTNVK_OK;
    cfg->mask_tma = 1;
    if (smem_optin && avk_cuda_config_smem(cfg) > smem_optin) cfg->mask_tma = 0;
    return ATTNVK_OK;
}

attnvk_status avk_cuda_select(const attnvk_device_info *info, int cc_major, size_t smem_optin,
                              const attnvk_problem *p, const attnvk_kernel_options *o, int decode, int pack,
                              avk_cuda_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    const int contract = pack > 1 || p->page_size > 0 || p->ragged || p->kv_format != ATTNVK_KV_DTYPE;
    const int dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim;
    usable_ctx u = {cc_major, smem_optin, p->dtype, p->head_dim, dv, p->kv_format, contract, (int)p->page_size, NULL};
    avk_tuning_query q = {info, p->dtype, p->head_dim, decode, usable, &u};
    int count;
    const avk_tuning *table = avk_cuda_tuning_table(&count);
    if (!avk_native_head_dims(p->head_dim, dv)) return head_dims_unsupported(p->head_dim, dv);
    const avk_tuning *e = avk_tuning_lookup(table, count, &q);
    cfg->dtype = p->dtype;
    cfg->head_dim = p->head_dim;
    cfg->head_dim_v = dv;
    cfg->kv_format = p->kv_format;
    cfg->contract = contract;
    cfg->paged = (int)p->page_size;
    cfg->score_mod = (int)avk_score_mod_bits(p);
    cfg->pos_offset = (avk_problem_features(p) & ATTNVK_FEATURE_POSITION_OFFSET) != 0;
    if (p->q_format == ATTNVK_KV_FP8) return select_fp8(cc_major, smem_optin, p, o, pack, cfg);
    if (o->variant && strstr(o->variant, "fp8"))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: %s runs the FP8 forward only (q_format fp8)", o->variant);
    /* a tuned file's entry or a tune candidate (core/tuning.h): exactly it, or why it cannot run */
    const avk_tuning *explicit_entry = o->variant ? NULL : avk_tuning_explicit();
    if (explicit_entry) {
        if (!avk_cuda_parse_variant(explicit_entry->variant, cfg) ||
            (explicit_entry->dtype >= 0 && explicit_entry->dtype != (int)p->dtype))
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: a %s entry cannot run this %s problem", explicit_entry->variant,
                            attnvk_dtype_name(p->dtype));
        take_entry(explicit_entry, cfg);
        choose_dilated_view(p, o, cfg);
        attnvk_status s = tune_from_env(cfg);
        if (s == ATTNVK_OK) s = avk_cuda_config_check(cfg, cc_major, smem_optin);
        if (s == ATTNVK_OK) s = choose_persistent(cfg, smem_optin);
        if (s == ATTNVK_OK) s = choose_mask_tma(p, pack, cfg, smem_optin);
        if (s == ATTNVK_OK) avk_tuning_note(explicit_entry);
        return s;
    }
    if (e) {
        take_entry(e, cfg);
        if (cfg->wgmma && e->extra[1] &&
            (avk_problem_features(p) & (ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_MASK | ATTNVK_FEATURE_BLOCK_SPARSE |
                                        ATTNVK_FEATURE_DILATED))) {
            cfg->br = e->extra[1];
            if (e->extra[3]) cfg->bc = e->extra[3];
        }
    }
    if (o->variant && (!e || strcmp(o->variant, cfg->variant) != 0)) {
        if (!avk_cuda_parse_variant(o->variant, cfg))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "unknown cuda variant '%s' (wgmma, wgmma-ws, wgmma-fp8, wgmma-ws-fp8, mma16, mma16-qs, mma32, mma32-qs, mma-decode, tiled, simt)", o->variant);
        /* the table's tiles for the named variant where it has them */
        u.variant = o->variant;
        const avk_tuning *named = avk_tuning_lookup(table, count, &q);
        if (named) take_entry(named, cfg);
        else variant_defaults(cfg, decode);
    } else if (!e) {
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuda: no kernel configuration fits this device");
    }
    if (decode && cfg->mma && !cfg->wgmma && cfg->rows_per_warp == 16)
        for (size_t i = 0; i < sizeof packed_decode_tiles / sizeof *packed_decode_tiles; ++i)
            if ((int64_t)pack * p->seq_q <= packed_decode_tiles[i].max_rows &&
                p->head_dim >= packed_decode_tiles[i].min_dim && p->head_dim <= packed_decode_tiles[i].max_dim &&
                packed_entry_fits(packed_decode_tiles[i].kv, p)) {
                /* a variant named in the options keeps its kernel; only its tiles follow the rows */
                if (o->variant && strcmp(o->variant, packed_decode_tiles[i].variant) != 0) continue;
                avk_cuda_config packed = *cfg;
                avk_cuda_parse_variant(packed_decode_tiles[i].variant, &packed);
                packed.br = packed_decode_tiles[i].br;
                packed.bc = packed_decode_tiles[i].bc;
                packed.resident = packed_decode_tiles[i].resident;
                packed.whole_waves = packed_decode_tiles[i].whole_waves;
                packed.col_warps = packed_decode_tiles[i].col_warps;
                if (packed.key_warps) {
                    packed.key_warps = packed_decode_tiles[i].key_warps;
                    packed.kv_stages = packed_decode_tiles[i].kv_stages;
                    packed.min_ctas = packed_decode_tiles[i].min_ctas;
                }
                /* an entry this problem or device does not fit (mma-decode past D=128) gives way to the next */
                if (avk_cuda_config_check(&packed, cc_major, smem_optin) != ATTNVK_OK) continue;
                *cfg = packed;
                break;
            }
    if (o->tile_br) cfg->br = o->tile_br;
    if (o->tile_bc) cfg->bc = o->tile_bc;
    choose_dilated_view(p, o, cfg);
    attnvk_status s = tune_from_env(cfg);
    if (s == ATTNVK_OK) s = avk_cuda_config_check(cfg, cc_major, smem_optin);
    if (s == ATTNVK_OK) s = choose_persistent(cfg, smem_optin);
    if (s == ATTNVK_OK) s = choose_mask_tma(p, pack, cfg, smem_optin);
    if (s == ATTNVK_OK) avk_tuning_note(e);
    return s;
}

/* ---- `attnvk tune`'s candidates: grids over the table's knobs, kept where the
 * configuration check accepts them ---- */

typedef struct grid_ctx {
    const attnvk_device_info *info;
    int cc_major;
    size_t smem_optin;
    const attnvk_problem *p;
    int decode, pack;
    avk_candidate_list *list;
} grid_ctx;

static void try_entry(const avk_tuning *e, void *vctx)
{
    grid_ctx *g = vctx;
    const attnvk_kernel_options none = {0};
    avk_cuda_config cfg;
    avk_pick_begin(e, AVK_PICK_OPTION);
    attnvk_status s = avk_cuda_select(g->info, g->cc_major, g->smem_optin, g->p, &none, g->decode, g->pack, &cfg);
    avk_pick_end();
    avk_clear_error();
    if (s == ATTNVK_OK) avk_candidate_add(g->list, e, avk_hash(&cfg, sizeof cfg, 0)); /* one build each */
}

int avk_cuda_tuning_candidates(const attnvk_device_info *info, int cc_major, size_t smem_optin,
                               const attnvk_problem *p, int decode, int pack, avk_tuning *out, int max)
{
    avk_candidate_list list = {.out = out, .max = max};
    grid_ctx ctx = {info, cc_major, smem_optin, p, decode, pack, &list};
    const avk_tuning base = {.dtype = (int)p->dtype, .decode = avk_is_decode(p)};
    avk_tuning_grid g = {.base = base};
    g.base.variant = "wgmma"; /* warpgroups of 64 rows; key tiles */
    AVK_GRID_AXIS(&g, AVK_AXIS_BR, 64, 128, 192);
    AVK_GRID_AXIS(&g, AVK_AXIS_BC, 64, 128);
    avk_tuning_grid_each(&g, try_entry, &ctx);
    static const char *const mma[] = {"mma16", "mma16-qs", "mma32", "mma32-qs"};
    for (int v = 0; v < 4; ++v) { /* rows, keys, warps a row group */
        g = (avk_tuning_grid){.base = base};
        g.base.variant = mma[v];
        AVK_GRID_AXIS(&g, AVK_AXIS_BR, 16, 32, 64, 128, 256);
        AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32, 64, 128);
        AVK_GRID_AXIS(&g, AVK_AXIS_X2, 0, 2, 4);
        avk_tuning_grid_each(&g, try_entry, &ctx);
    }
    if (decode) { /* keys per tile, key warps, stages */
        g = (avk_tuning_grid){.base = base};
        g.base.variant = "mma-decode";
        g.base.tile_br = 16;
        AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32);
        AVK_GRID_AXIS(&g, AVK_AXIS_X0, 1, 2, 4, 8);
        AVK_GRID_AXIS(&g, AVK_AXIS_X1, 2, 3, 4);
        avk_tuning_grid_each(&g, try_entry, &ctx);
    }
    g = (avk_tuning_grid){.base = base}; /* register-tiled f32: rows, keys, threads, lanes per row */
    g.base.variant = "tiled";
    AVK_GRID_AXIS(&g, AVK_AXIS_BR, 16, 32, 64, 128);
    AVK_GRID_AXIS(&g, AVK_AXIS_BC, 8, 16, 32);
    AVK_GRID_AXIS(&g, AVK_AXIS_WG, 64, 128, 256);
    AVK_GRID_AXIS(&g, AVK_AXIS_X0, 1, 2, 4, 8, 16);
    avk_tuning_grid_each(&g, try_entry, &ctx);
    g = (avk_tuning_grid){.base = base};
    g.base.variant = "simt";
    AVK_GRID_AXIS(&g, AVK_AXIS_BR, 16, 32, 64);
    AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32);
    AVK_GRID_AXIS(&g, AVK_AXIS_WG, 64, 128, 256);
    avk_tuning_grid_each(&g, try_entry, &ctx);
    return list.count;
}
