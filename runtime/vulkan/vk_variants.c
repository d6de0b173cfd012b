/* The Vulkan backend's tuning table and the checks that keep a variant on the
 * devices and shapes it can run (shared memory, workgroup and subgroup limits,
 * f16 and matrix-unit support). Kernels are data: sizes live here only. */
#include "core/kernel_args.h"
#include "core/kv_cache.h" /* avk_score_mod_bits */
#include "core/test_hooks.h"
#include "core/layout.h" /* avk_head_dim_v */
#include "core/split_plan.h"
#include "vulkan/vk_variants.h"
#include "vulkan/vk_config_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F32 ATTNVK_F32
#define F16 ATTNVK_F16
#define BF16 ATTNVK_BF16

/* vendor, architecture, device, dtype, D min, D max, decode, variant, Br, Bc, workgroup, extra.
 * Equal specificity: the first usable entry wins, so preferred entries come first. */
static const avk_tuning vk_table[] = {
    /* NVIDIA: tensor cores for f16 prefill; 48 KiB shared memory, subgroup 32. Measured
     * on H100 (bench/results/vulkan-h100-notes.md). Softmax in registers where the
     * layout probe passed: 8 subgroups, 32 rows each at D <= 64 (double-buffered K/V),
     * 16 rows each and 64-key tiles (one K/V buffer) at D <= 128. Through
     * VK_KHR_cooperative_matrix first (the NV SPIR-V rewritten, tools/spirv_nv2khr, P = f16(S)
     * as element moves the KHR layout probe checks): the H100's driver (580) runs the same
     * body 1.05-1.25x faster that way, every fa-grid case (session 16,
     * bench/results/scores-2026-11-27-s16): D=128 4k 169.3 (coopmat-khr) -> 204.9 TFLOP/s,
     * 16k 172.2 -> 214.8, causal 4k 148.2 -> 179.9; D=64 4k 191.0 (coopmat-nv-rs) -> 227.5 */
    {"NVIDIA", NULL, NULL, F16, 1, 64, 0, "coopmat-khr-rs", 256, 64, 256, {0, 2, 0, 0}},
    {"NVIDIA", NULL, NULL, F16, 65, 128, 0, "coopmat-khr-rs", 128, 64, 256, {0, 1, 0, 0}},
    {"NVIDIA", NULL, NULL, F16, 1, 64, 0, "coopmat-nv-rs", 256, 64, 256, {0, 2, 0, 0}},
    /* D=128 without the KHR rs layout: coopmat-nv's body through KHR (session 15, fa-grid,
     * B*N = 16k, H*D = 2048: 13-18% over coopmat-nv-rs in all 12 cases, 4k 147.1 -> 169.0
     * TFLOP/s, causal 131.2 -> 148.0, 16k 150.9 -> 172.2; the same body through NV 125.5 at 4k).
     * At D=64 coopmat-nv-rs stays (KHR 0.75-0.92x it, except causal N <= 1k); D 65..127 unmeasured */
    {"NVIDIA", NULL, NULL, F16, 128, 128, 0, "coopmat-khr", 128, 16, 128, {0, 1, 1}},
    {"NVIDIA", NULL, NULL, F16, 65, 128, 0, "coopmat-nv-rs", 128, 64, 256, {0, 1, 0, 0}},
    /* otherwise S/P through shared memory: 32 rows per subgroup and 16-key tiles win;
     * at D=128 the 255-register limit wants one S chain and one K/V stage */
    {"NVIDIA", NULL, NULL, F16, 1, 64, 0, "coopmat-nv", 128, 16, 128, {0, 2, 2}},
    {"NVIDIA", NULL, NULL, F16, 65, 128, 0, "coopmat-nv", 128, 16, 128, {0, 1, 1}},
    {"NVIDIA", NULL, NULL, F16, 129, 256, 0, "coopmat-nv", 64, 16, 128, {0, 1, 1}},
    /* the same body through VK_KHR_cooperative_matrix, coopmat-nv's sizes: when named, or
     * where a driver lists KHR matrices only (D=128 is above) */
    {"NVIDIA", NULL, NULL, F16, 1, 64, 0, "coopmat-khr", 128, 16, 128, {0, 2, 2}},
    {"NVIDIA", NULL, NULL, F16, 65, 127, 0, "coopmat-khr", 128, 16, 128, {0, 1, 1}},
    {"NVIDIA", NULL, NULL, F16, 129, 256, 0, "coopmat-khr", 64, 16, 128, {0, 1, 1}},
    /* decode, 16 values of a row per lane. The split plan fills 2 resident workgroups an SM
     * (255 registers x 128 lanes) in whole waves: H100 f16 (sweep-s21-decode.txt, after the
     * batched merge) 16k 4 splits 0.192 ms, 8 0.195, 16 (4 resident, not whole) 0.204; 64k 4
     * 0.731, 8 0.729, 17 0.783; B=1 128k 32 0.195, 64 0.204, 128 0.225 (cuDNN 0.183, 0.698, 0.184).
     * H100, f16 Nk=16k, warm clocks (session 8; session 7's sizes were timed on a cold
     * GPU): 16 lanes x 2 keys 2057 GB/s with 9 splits, 2371 with 18; 8 lanes x 2 keys
     * 2368 (9 splits); 16 x 1 1778, 16 x 4 2125, 32 x 2 2032, 8 x 4 1253; cuDNN 2905 */
    /* f16 Q/O decode on tensor cores where the layout probe passed, from 8 packed rows: Br
     * from the rows, subgroups as row groups x key groups sharing 64-key steps. H100
     * (session 9, bench/results/decode-2026-11-25-s9), B=8 H=32/8: Nq=1 (4 rows) f16 16k
     * 2122 GB/s here and 2617 in the decode body, 64k 2680 (8 splits) and 2739, q8_0 64k
     * 1.53 ms and 0.75 ms: fewer rows stay there. Nq=16 (64 rows) 32k 0.77 ms here, about
     * 5 ms in the decode body. The H100 runs 2 of these workgroups per SM and a partial last
     * wave is pure tail, so splits come in whole waves: 70b 4 splits (256 workgroups, one
     * wave) 2519 GB/s, 5 2179, 8 2451, 9 2232; 405b 8 splits 2613, 9 1964, 16 2552, 17 2208.
     * From 32 rows 8 subgroups (row groups x 2 key groups): Nq=16 0.592 ms, 0.699 with 4.
     * From 32 packed rows the KHR build of the same body (session 16, B=8 H=32/8, 32k): Nq=8
     * 0.474 -> 0.432 ms, Nq=16 0.579 -> 0.433 (1.12x Nq=1's 0.386); with 8-16 rows NV stays
     * (70b preset 0.423 against KHR's 0.432, 405b 0.823 / 0.841). */
    {"NVIDIA", NULL, NULL, F16, 16, 128, 1, "decode-khr-rs", 0, 0, 256, {32, 1, 2}},
    {"NVIDIA", NULL, NULL, F16, 16, 128, 1, "decode-nv-rs", 0, 0, 256, {32, 1, 2}},
    {"NVIDIA", NULL, NULL, F16, 16, 128, 1, "decode-nv-rs", 0, 0, 128, {8, 1, 2}},
    {"NVIDIA", NULL, NULL, F16, 16, 128, 1, "decode-khr-rs", 0, 0, 128, {8, 1, 2}},
    {"NVIDIA", NULL, NULL, -1, 1, 256, 1, "decode", 4, 64, 128, {0, 0, 2, 16}},
    {"NVIDIA", NULL, NULL, F16, 1, 256, 1, "f16", 4, 64, 128, {1}},
    {"NVIDIA", NULL, NULL, F16, 1, 128, -1, "f16", 16, 32, 128, {1}},
    /* Dk or Dv past 256 (D=512, MLA's 576/512): no matrix body holds O of 16 rows x 512
     * (256 registers a lane). The generic 4x8 scalar tile ran D=512 at 0.5 TFLOP/s and MLA
     * absorbed decode in 10.3 ms on the H100 (bench/results/scores-2026-11-26-s12); this
     * 16x16 f16 tile fits 48 KiB up to Dk=576 (39 KB; decode rows pack 16 to a workgroup):
     * D=512 B=4 H=16 N=4k 0.5 -> 4.2 TFLOP/s, MLA decode (B=2 H=128 Nk=16k) 10.3 -> 2.76 ms
     * (session 13, tools/h100/sweep-s13-mask.txt) */
    {"NVIDIA", NULL, NULL, F16, 257, 576, -1, "f16", 16, 16, 128, {1}},
    {"NVIDIA", NULL, NULL, -1, 1, 256, 1, "scalar", 4, 64, 128, {1}},
    {"NVIDIA", NULL, NULL, -1, 1, 128, -1, "scalar", 16, 32, 128, {1}},
    {"NVIDIA", NULL, NULL, -1, 129, 256, -1, "scalar", 8, 32, 128, {1}},
    /* AMD: wave32/64; matrix units (RDNA3 WMMA, CDNA MFMA) through the KHR extension */
    {"AMD", NULL, NULL, F16, 1, 128, 0, "coopmat-khr", 64, 32, 256, {0}},
    {"AMD", NULL, NULL, -1, 1, 256, 1, "decode", 4, 64, 128, {0}},
    {"AMD", NULL, NULL, F16, 1, 256, 1, "f16", 4, 64, 128, {1}},
    {"AMD", NULL, NULL, F16, 1, 128, -1, "f16", 32, 32, 256, {1}},
    {"AMD", NULL, NULL, -1, 1, 128, -1, "scalar", 32, 32, 256, {1}},
    /* Intel: subgroups of 8..32, often 64 KiB shared memory; XMX through KHR coopmat */
    {"Intel", NULL, NULL, F16, 1, 128, 0, "coopmat-khr", 64, 32, 128, {0}},
    {"Intel", NULL, NULL, F16, 1, 128, -1, "f16", 16, 32, 128, {0}},
    {"Intel", NULL, NULL, -1, 1, 128, -1, "scalar", 16, 32, 128, {0}},
    /* Qualcomm / ARM mobile GPUs: small shared memory, small workgroups */
    {"Qualcomm", NULL, NULL, F16, 1, 128, -1, "f16", 8, 32, 64, {0}},
    {"Qualcomm", NULL, NULL, -1, 1, 128, -1, "scalar", 8, 16, 64, {0}},
    {"ARM", NULL, NULL, F16, 1, 128, -1, "f16", 8, 32, 64, {0}},
    {"ARM", NULL, NULL, -1, 1, 128, -1, "scalar", 8, 16, 64, {0}},
    /* Device families, untuned: from documented limits, never timed on the hardware. Their
     * rows outrank the vendor's (architecture names from device names: vk_profile.c);
     * ATTNVK_VK_PROFILE selects the iGPU/mobile ones anywhere. Sizes checked against each
     * family's limits in tests/vulkan/test_vk_selection.c. */
    /* AMD RDNA3 (untuned: from documented limits): 64 KiB LDS a workgroup (RADV's
     * maxComputeSharedMemorySize), wave32/64, WMMA 16x16x16 f16 -> f32 through
     * VK_KHR_cooperative_matrix (gpuopen.com/learn/wmma_on_rdna3). 128 rows over 4 subgroups,
     * two 32-key K/V stages: 53 KB at D=128 */
    {"AMD", "rdna3", NULL, F16, 1, 128, 0, "coopmat-khr", 128, 32, 256, {0}},
    {"AMD", "rdna3", NULL, F16, 129, 256, 0, "coopmat-khr", 64, 32, 256, {0}},
    /* AMD RDNA2 and RDNA3 (untuned: from documented limits): no matrix units on RDNA2; 64 KiB
     * LDS holds twice the rows of the AMD defaults' 32 KiB-safe tiles */
    {"AMD", "rdna", NULL, -1, 1, 256, 1, "decode", 4, 64, 128, {0}},
    {"AMD", "rdna", NULL, F16, 1, 128, -1, "f16", 64, 32, 256, {1}},
    {"AMD", "rdna", NULL, F16, 129, 256, -1, "f16", 16, 32, 128, {1}},
    {"AMD", "rdna", NULL, -1, 1, 128, -1, "scalar", 32, 32, 256, {1}},
    {"AMD", "rdna", NULL, -1, 129, 256, -1, "scalar", 16, 32, 128, {1}},
    /* Intel Arc (Xe-HPG) and Xe2 (untuned: from documented limits): 64 KiB SLM a workgroup,
     * subgroups 8-32 (Xe2: 16-32; Intel's GPU occupancy calculator, MLIR's Xe2 uArch), XMX
     * through VK_KHR_cooperative_matrix where the driver lists a 16xNxK f16 -> f32 shape
     * (vk_khr_coopmat.c refuses others: then the f16 rows). 4 subgroups of 16 or 2 of 32 */
    {"Intel", "xe2", NULL, F16, 1, 128, 0, "coopmat-khr", 64, 32, 64, {0}},
    {"Intel", "xe-hpg", NULL, F16, 1, 128, 0, "coopmat-khr", 64, 32, 64, {0}},
    /* Intel Xe: gen12 Xe-LP iGPUs (no matrix units), Arc, Xe2 (untuned: from documented
     * limits): 64 KiB SLM, a row's 4 threads inside the smallest subgroup (8) */
    {"Intel", "xe", NULL, -1, 1, 256, 1, "decode", 4, 64, 128, {0}},
    {"Intel", "xe", NULL, F16, 1, 128, -1, "f16", 32, 32, 128, {1}},
    {"Intel", "xe", NULL, F16, 129, 256, -1, "f16", 16, 32, 128, {1}},
    {"Intel", "xe", NULL, -1, 1, 128, -1, "scalar", 32, 32, 128, {1}},
    {"Intel", "xe", NULL, -1, 129, 256, -1, "scalar", 16, 32, 128, {1}},
    /* ARM Mali Valhall (untuned: from documented limits): 32 KiB shared memory, warps of 16
     * (Arm's Mali GPU best practices guide), small workgroups; f16 only where the driver has
     * 16-bit storage (else f16 problems take the scalar body's packed-word f16 storage) */
    {"ARM", "mali", NULL, -1, 1, 256, 1, "decode", 4, 64, 64, {0}},
    {"ARM", "mali", NULL, F16, 1, 128, -1, "f16", 16, 32, 64, {1}},
    {"ARM", "mali", NULL, F16, 129, 256, -1, "f16", 8, 32, 64, {1}},
    {"ARM", "mali", NULL, -1, 1, 128, -1, "scalar", 16, 16, 64, {1}},
    {"ARM", "mali", NULL, -1, 129, 256, -1, "scalar", 8, 16, 64, {1}},
    /* Qualcomm Adreno (untuned: from documented limits): 32 KiB shared memory, waves of 64
     * or 128 (Qualcomm's llama.cpp OpenCL backend: wave 64 on every Adreno): workgroups of
     * 128, a multiple of either */
    {"Qualcomm", "adreno", NULL, -1, 1, 256, 1, "decode", 4, 64, 128, {0}},
    {"Qualcomm", "adreno", NULL, F16, 1, 128, -1, "f16", 16, 32, 128, {1}},
    {"Qualcomm", "adreno", NULL, F16, 129, 256, -1, "f16", 8, 32, 128, {1}},
    {"Qualcomm", "adreno", NULL, -1, 1, 128, -1, "scalar", 16, 16, 128, {1}},
    {"Qualcomm", "adreno", NULL, -1, 129, 256, -1, "scalar", 8, 16, 128, {1}},
    /* Apple GPUs through MoltenVK (untuned: from documented limits): 32 KiB threadgroup
     * memory (Metal's maxThreadgroupMemoryLength), SIMD groups of 32, no matrix units in Vulkan */
    {"Apple", "apple", NULL, -1, 1, 256, 1, "decode", 4, 64, 128, {0}},
    {"Apple", "apple", NULL, F16, 1, 128, -1, "f16", 16, 32, 128, {1}},
    {"Apple", "apple", NULL, F16, 129, 256, -1, "f16", 8, 32, 128, {1}},
    {"Apple", "apple", NULL, -1, 1, 128, -1, "scalar", 16, 32, 128, {1}},
    {"Apple", "apple", NULL, -1, 129, 256, -1, "scalar", 8, 16, 64, {1}},
    /* llvmpipe (lavapipe): 32 KiB shared memory, CPU SIMD lanes as subgroups */
    {NULL, NULL, "llvmpipe", F16, 1, 128, -1, "f16", 16, 32, 64, {1}},
    {NULL, NULL, "llvmpipe", -1, 1, 128, -1, "scalar", 16, 32, 64, {0}},
    /* any Vulkan 1.1 device */
    {NULL, NULL, NULL, F16, 1, 128, 0, "coopmat-khr", 64, 32, 128, {0}},
    {NULL, NULL, NULL, -1, 1, 256, 1, "decode", 4, 64, 128, {0}},
    {NULL, NULL, NULL, F16, 1, 256, 1, "f16", 4, 64, 128, {0}},
    {NULL, NULL, NULL, F16, 1, 128, -1, "f16", 16, 32, 128, {0}},
    {NULL, NULL, NULL, F16, 129, 256, -1, "f16", 8, 32, 64, {0}},
    {NULL, NULL, NULL, -1, 1, 256, 1, "scalar", 4, 32, 128, {0}},
    {NULL, NULL, NULL, -1, 1, 128, -1, "scalar", 16, 32, 128, {0}},
    {NULL, NULL, NULL, -1, 129, 256, -1, "scalar", 8, 16, 64, {0}},
    {NULL, NULL, NULL, -1, 257, 1024, -1, "scalar", 4, 8, 64, {0}},
    /* 16 KiB of shared memory (the Vulkan minimum; ATTNVK_VK_PROFILE=small, untuned): the
     * tiles above do not fit there (D=128: 8x16 is 13.4 KiB, D=256: 4x8 12.8, D=512: 2x4 12.4) */
    {NULL, NULL, NULL, -1, 1, 128, -1, "scalar", 8, 16, 64, {0}},
    {NULL, NULL, NULL, -1, 129, 256, -1, "scalar", 4, 8, 64, {0}},
    {NULL, NULL, NULL, -1, 257, 1024, -1, "scalar", 2, 4, 32, {0}},
    /* register softmax on NV tensor cores: only where the layout probe passed (decode: D > 128
     * with 2 subgroups, so a step's K/V fit 48 KiB) */
    {NULL, NULL, NULL, F16, 16, 256, 1, "decode-nv-rs", 0, 0, 64, {0}},
    {NULL, NULL, NULL, F16, 1, 128, 0, "coopmat-nv-rs", 64, 64, 128, {0, 0, 0, 0}},
    {NULL, NULL, NULL, F16, 129, 256, 0, "coopmat-nv-rs", 64, 16, 128, {0, 0, 0, 0}},
    {NULL, NULL, NULL, F16, 16, 256, 1, "decode-khr-rs", 0, 0, 64, {0}},
    {NULL, NULL, NULL, F16, 1, 128, 0, "coopmat-khr-rs", 64, 64, 128, {0, 0, 0, 0}},
    {NULL, NULL, NULL, F16, 129, 256, 0, "coopmat-khr-rs", 64, 16, 128, {0, 0, 0, 0}},
    /* test-only, never picked unless named: check the coopmat algorithms on lavapipe */
    {NULL, NULL, NULL, F16, 1, 256, -1, "coopmat-emu", 16, 16, 16, {0}},
    {NULL, NULL, NULL, F16, 1, 256, -1, "coopmat-rs-emu", 16, 16, 16, {0, 2, 0, 0}},
    {NULL, NULL, NULL, F16, 8, 256, -1, "decode-rs-emu", 0, 0, 32, {0}},
};

static const struct {
    const char *name;
    vk_algo algo;
} vk_variant_names[] = {
    {"scalar", VK_ALGO_SCALAR},
    {"f16", VK_ALGO_F16},
    {"decode", VK_ALGO_DECODE},
    {"coopmat-nv", VK_ALGO_COOPMAT_NV},
    {"coopmat-khr", VK_ALGO_COOPMAT_KHR},
    {"coopmat-emu", VK_ALGO_COOPMAT_EMU},
    {"coopmat-nv-rs", VK_ALGO_COOPMAT_NV_RS},
    {"coopmat-rs-emu", VK_ALGO_COOPMAT_RS_EMU},
    {"decode-nv-rs", VK_ALGO_DECODE_NV_RS},
    {"decode-rs-emu", VK_ALGO_DECODE_RS_EMU},
    {"coopmat-khr-rs", VK_ALGO_COOPMAT_KHR_RS},
    {"decode-khr-rs", VK_ALGO_DECODE_KHR_RS},
};

static int algo_of(const char *name, vk_algo *out)
{
    for (size_t i = 0; i < sizeof vk_variant_names / sizeof *vk_variant_names; ++i)
        if (strcmp(vk_variant_names[i].name, name) == 0) {
            *out = vk_variant_names[i].algo;
            return 1;
        }
    return 0;
}

static const char *variant_name(vk_algo algo)
{
    for (size_t i = 0; i < sizeof vk_variant_names / sizeof *vk_variant_names; ++i)
        if (vk_variant_names[i].algo == algo) return vk_variant_names[i].name;
    return "scalar";
}

/* Why c cannot run algo on p at all ("" when it can). */
static const char *algo_blocker(const vk_caps *c, vk_algo algo, const attnvk_problem *p)
{
    if (algo != VK_ALGO_SCALAR && !vk_algo_is_rs(algo) && (p->block_sparse || p->dilated_groups))
        return "sparse patterns (block layouts, dilation) run on the scalar and register-softmax matrix variants only, so far";
    if (algo != VK_ALGO_SCALAR && algo != VK_ALGO_DECODE && !vk_algo_is_decode_mma(algo) && p->kv_format != ATTNVK_KV_DTYPE)
        return "quantized K/V (q8_0, q4_0, fp8) runs on the scalar and decode variants only";
    /* Dk and Dv alike: 16-byte vectors of 4 values (scalar, f16, decode), 8 halves (matrix bodies) */
    int by4 = dim_k(p) % 4 == 0 && dim_v(p) % 4 == 0, by8 = dim_k(p) % 8 == 0 && dim_v(p) % 8 == 0;
    switch (algo) {
    case VK_ALGO_DECODE:
        if (!by4) return "head dims must be multiples of 4";
        if (!c->subgroup_shuffle) return "needs subgroup shuffles in compute shaders";
        return "";
    case VK_ALGO_SCALAR:
        if (!by4) return "head dims must be multiples of 4";
        return "";
    case VK_ALGO_F16:
        if (p->dtype != ATTNVK_F16) return "the f16 variant runs f16 problems only";
        if (!c->shader_f16 || !c->storage_16bit) return "needs shaderFloat16 and storageBuffer16BitAccess";
        if (!by4) return "head dims must be multiples of 4";
        return "";
    case VK_ALGO_COOPMAT_NV:
    case VK_ALGO_COOPMAT_KHR:
    case VK_ALGO_COOPMAT_EMU:
        if (p->dtype != ATTNVK_F16) return "cooperative-matrix variants run f16 problems only";
        if (algo == VK_ALGO_COOPMAT_NV && !c->nv_coopmat)
            return "needs VK_NV_cooperative_matrix with a 16xNx16 f16->f32 subgroup shape";
        if (algo == VK_ALGO_COOPMAT_KHR && !c->khr_coopmat) /* the probe's reason (vk_khr_coopmat.c) */
            return c->khr_coopmat_why[0] ? c->khr_coopmat_why
                                         : "needs VK_KHR_cooperative_matrix with a 16xNxK f16->f32 subgroup shape";
        if (!c->subgroup_shuffle || !c->subgroup_vote) return "needs subgroup shuffle and vote in compute shaders";
        if (!by8) return "head dims must be multiples of 8";
        return "";
    case VK_ALGO_COOPMAT_NV_RS:
    case VK_ALGO_COOPMAT_RS_EMU:
    case VK_ALGO_DECODE_NV_RS:
    case VK_ALGO_DECODE_RS_EMU:
    case VK_ALGO_COOPMAT_KHR_RS:
    case VK_ALGO_DECODE_KHR_RS: {
        int nv = algo == VK_ALGO_COOPMAT_NV_RS || algo == VK_ALGO_DECODE_NV_RS;
        int khr = algo == VK_ALGO_COOPMAT_KHR_RS || algo == VK_ALGO_DECODE_KHR_RS;
        if (p->dtype != ATTNVK_F16) return "cooperative-matrix variants run f16 problems only";
        if (nv) {
            if (!vk_rs_layout_applies(c))
                return "needs VK_NV_cooperative_matrix with a 16x16x16 f16->f32 subgroup shape, subgroups of 32, "
                       "subgroup shuffle and vote";
            if (c->rs_layout == 0) return "the accumulator layout was not probed on this device";
            if (c->rs_layout < 0) return c->rs_layout_why[0] ? c->rs_layout_why : "the accumulator layout differs";
        }
        if (khr) { /* the probe rewritten to KHR (vk_rs_layout.c) */
            if (!c->khr_coopmat && c->khr_coopmat_why[0]) return c->khr_coopmat_why;
            if (c->rs_layout_khr < 0) return c->rs_layout_khr_why[0] ? c->rs_layout_khr_why : "the KHR accumulator layout differs";
            if (!c->rs_layout_khr && !vk_rs_layout_applies_khr(c)) /* passed: runs where it applies (or emulated) */
                return "needs VK_KHR_cooperative_matrix with a 16x16x16 f16->f32 subgroup shape, subgroups of 32, "
                       "subgroup shuffle and vote";
            if (c->rs_layout_khr == 0) return "the KHR accumulator layout was not probed on this device";
        }
        if (!c->subgroup_vote) return "needs subgroup vote in compute shaders";
        if (algo == VK_ALGO_DECODE_RS_EMU && !c->shader_f16) return "needs shaderFloat16";
        if (!by8) return "head dims must be multiples of 8";
        /* quantized tiles are decoded whole blocks at a time: no zero columns */
        if (p->kv_format != ATTNVK_KV_DTYPE && dim_k(p) % VK_MAT_GRAIN)
            return "quantized K/V on the matrix decode body needs a head dim that is a multiple of 16";
        return "";
    }
    }
    return "unknown variant";
}

/* Tuning aid (vk_perf sweeps): a 0/1/2 override from the environment, else -1. */
static int env_choice(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "0") || !strcmp(v, "1") || !strcmp(v, "2")) ? atoi(v) : -1;
}

/* Register-softmax variants: square MS matrices, any rows per subgroup that is a
 * multiple of MS; mirrors the shared memory of shaders/flash_coopmat_rs_body.glsl:
 * [Q (q_shared)] | K x stages | V x stages, or the Q staging passes (Q in registers),
 * Q and K rows of padded Dk, V rows of padded Dv. */
static const char *finish_rs_config(const vk_caps *c, const attnvk_problem *p, vk_config *cfg, const avk_tuning *e)
{
    uint32_t dkp = mat_pad(dim_k(p)), dvp = mat_pad(dim_v(p));
    static char why[160];
    uint32_t ms = cfg->algo == VK_ALGO_COOPMAT_RS_EMU || cfg->emulated ? 8 : 16, sg = cfg->subgroup;
    cfg->mm = cfg->mn = cfg->mk = ms;
    if (c->size_control && c->require_size_compute && c->min_subgroup != c->max_subgroup) cfg->required_subgroup = sg;
    if (cfg->wg % sg) return "workgroup size must be a multiple of the subgroup size";
    uint32_t nsg = cfg->wg / sg;
    if (cfg->br % nsg || (cfg->br / nsg) % ms) {
        snprintf(why, sizeof why, "rows per subgroup (Br / %u subgroups) must be a multiple of %u", nsg, ms);
        return why;
    }
    if (cfg->bc % ms || dkp % ms || dvp % ms) {
        snprintf(why, sizeof why, "tile Bc and the padded head dims must be multiples of %u", ms);
        return why;
    }
    int q_env = env_choice("ATTNVK_VK_Q_SHARED"), stages_env = env_choice("ATTNVK_VK_KV_STAGES");
    cfg->q_shared = q_env >= 0 ? (q_env != 0) : e->extra[X_Q_SHARED] != 0;
    uint32_t max_stages = stages_env >= 1 ? (uint32_t)stages_env : e->extra[X_KV_STAGES] == 1 ? 1 : 2;
    uint32_t ks = dkp / 8 + 1, vs = dvp / 8 + 1, q_stage = cfg->q_shared ? 0 : cfg->br * ((dkp % 32 == 0 ? 32 : 16) / 8 + 1);
    /* with alibi_mma (vk_choose_config), ALiBi's A matrix and Bc key rows of ms columns after the rest */
    const uint32_t alibi_words = cfg->alibi_mma ? (ms + cfg->bc) * (ms / 8) : 0;
    for (cfg->kv_stages = max_stages; cfg->kv_stages >= 1; --cfg->kv_stages) { /* two stages whenever they fit */
        uint32_t loop = (cfg->q_shared ? cfg->br * ks : 0) + cfg->kv_stages * cfg->bc * (ks + vs);
        cfg->shared_bytes = ((loop > q_stage ? loop : q_stage) + alibi_words) * 16;
        if (cfg->shared_bytes <= c->props.limits.maxComputeSharedMemorySize || cfg->kv_stages == 1) break;
    }
    cfg->s_chains = 1;
    cfg->sg_reduce = 0;
    return "";
}

/* Fills the derived fields and checks every limit; "" when cfg can run. */
static const char *finish_config(const vk_caps *c, const attnvk_problem *p, vk_config *cfg, const avk_tuning *e)
{
    const VkPhysicalDeviceLimits *lim = &c->props.limits;
    uint32_t D = dim_k(p), dkp = mat_pad(dim_k(p)), dvp = mat_pad(dim_v(p));
    static char why[160];
    if (((!cfg->br || !cfg->bc) && !vk_algo_is_decode_mma(cfg->algo)) || !cfg->wg) return "tile and workgroup sizes must be > 0";
    if (cfg->wg > lim->maxComputeWorkGroupInvocations || cfg->wg > lim->maxComputeWorkGroupSize[0]) {
        snprintf(why, sizeof why, "workgroup of %u exceeds the device limit %u", cfg->wg,
                 lim->maxComputeWorkGroupInvocations);
        return why;
    }
    cfg->subgroup = c->subgroup_size;
    cfg->required_subgroup = 0;
    if (cfg->algo == VK_ALGO_DECODE) {
        const char *decode_why = vk_finish_decode_config(c, p, cfg, e);
        if (*decode_why) return decode_why;
    } else if (cfg->algo == VK_ALGO_SCALAR || cfg->algo == VK_ALGO_F16) {
        if (cfg->wg % cfg->br || !pow2(cfg->wg / cfg->br))
            return "workgroup size / tile Br must be a power of two (threads per query row)";
        /* shaders/flash_scalar.comp: Q tile of Dk rows, one K-or-V tile of the wider rows, P, reductions */
        uint32_t tpr = cfg->wg / cfg->br, elem = cfg->algo == VK_ALGO_F16 ? 8u : 16u;
        cfg->sg_reduce = e->extra[X_SG_REDUCE] && c->subgroup_shuffle && tpr <= c->min_subgroup;
        cfg->shared_bytes = (cfg->br * (D / 4 + 1) + cfg->bc * (dim_max(p) / 4 + 1)) * elem + cfg->br * (cfg->bc + 1) * 4 +
                            2 * cfg->br * tpr * 4;
    } else if (vk_algo_is_decode_mma(cfg->algo)) {
        const char *mma_why = vk_finish_decode_mma_config(c, p, cfg, e);
        if (*mma_why) return mma_why;
    } else if (vk_algo_is_rs(cfg->algo)) {
        const char *rs_why = finish_rs_config(c, p, cfg, e);
        if (*rs_why) return rs_why;
    } else {
        int emu = cfg->algo == VK_ALGO_COOPMAT_EMU; /* the emulation's matrices are 8x8 */
        cfg->mm = emu ? 8 : cfg->algo == VK_ALGO_COOPMAT_NV ? c->nv_m : c->khr_m;
        cfg->mn = emu ? 8 : cfg->algo == VK_ALGO_COOPMAT_NV ? c->nv_n : c->khr_n;
        cfg->mk = emu ? 8 : cfg->algo == VK_ALGO_COOPMAT_NV ? c->nv_k : c->khr_k;
        uint32_t sg = cfg->subgroup;
        if (c->size_control && c->require_size_compute && c->min_subgroup != c->max_subgroup) cfg->required_subgroup = sg;
        if (cfg->wg % sg) return "workgroup size must be a multiple of the subgroup size";
        uint32_t nsg = cfg->wg / sg;
        if (cfg->br % nsg) return "tile Br must split evenly over the subgroups";
        uint32_t rs = cfg->br / nsg;
        if (rs % cfg->mm || sg % rs || !pow2(sg / rs)) {
            snprintf(why, sizeof why, "rows per subgroup (Br / subgroups = %u) must be a multiple of %u dividing %u",
                     rs, cfg->mm, sg);
            return why;
        }
        uint32_t lpr = sg / rs;
        if (cfg->bc % cfg->mn || cfg->bc % cfg->mk || (cfg->bc / lpr) % 8) {
            snprintf(why, sizeof why, "tile Bc must be a multiple of %u, %u and %u", cfg->mn, cfg->mk, 8 * lpr);
            return why;
        }
        if (dkp % cfg->mk || dvp % cfg->mn) return "padded head dims must be multiples of the matrix shape";
        /* mirrors shaders/flash_coopmat_body.glsl: (K | V) x stages | per-subgroup staging,
         * or Q passes; two K/V stages (one barrier per tile) whenever they fit. K rows of
         * padded Dk, V rows of padded Dv */
        uint32_t ks = dkp / 8 + 1, vs = dvp / 8 + 1, ssw = (cfg->bc + 4) / 4, qsw = (dkp % 32 == 0 ? 32 : 16) / 8 + 1;
        uint32_t q_words = cfg->br * qsw;
        const char *stages_env = getenv("ATTNVK_VK_KV_STAGES"); /* tuning aid */
        uint32_t max_stages = stages_env && atoi(stages_env) == 1 ? 1 : e->extra[X_KV_STAGES] == 1 ? 1 : 2;
        if (stages_env && atoi(stages_env) == 2) max_stages = 2;
        for (cfg->kv_stages = max_stages; cfg->kv_stages >= 1; --cfg->kv_stages) {
            uint32_t loop_words = cfg->bc * (ks + vs) * cfg->kv_stages + cfg->br * ssw;
            cfg->shared_bytes = (loop_words > q_words ? loop_words : q_words) * 16;
            if (cfg->shared_bytes <= lim->maxComputeSharedMemorySize || cfg->kv_stages == 1) break;
        }
        const char *chains_env = getenv("ATTNVK_VK_S_CHAINS"); /* tuning aid */
        cfg->s_chains = chains_env && atoi(chains_env) >= 1 && atoi(chains_env) <= 2 ? (uint32_t)atoi(chains_env)
                        : e->extra[X_S_CHAINS] >= 1 && e->extra[X_S_CHAINS] <= 2 ? (uint32_t)e->extra[X_S_CHAINS]
                        : dkp / cfg->mk >= 4                                      ? 2
                                                                                  : 1;
        cfg->sg_reduce = 0;
    }
    if (cfg->shared_bytes > lim->maxComputeSharedMemorySize) {
        snprintf(why, sizeof why, "%s %ux%u at D=%u needs %u bytes of shared memory (device: %u)", cfg->variant,
                 cfg->br, cfg->bc, D, cfg->shared_bytes, lim->maxComputeSharedMemorySize);
        return why;
    }
    return "";
}

typedef struct usable_ctx {
    const vk_caps *caps;
    const attnvk_problem *p;
    const char *variant; /* requested, or NULL */
} usable_ctx;

static int entry_usable(const avk_tuning *e, const void *vctx)
{
    const usable_ctx *u = vctx;
    vk_algo algo;
    if (!algo_of(e->variant, &algo)) return 0;
    if (u->variant && strcmp(u->variant, e->variant) != 0) return 0;
    /* only when asked for: the emulations */
    if (!u->variant && (algo == VK_ALGO_COOPMAT_EMU || algo == VK_ALGO_COOPMAT_RS_EMU || algo == VK_ALGO_DECODE_RS_EMU))
        return 0;
    if (*algo_blocker(u->caps, algo, u->p)) return 0;
    if (!u->variant && vk_algo_is_decode_mma(algo) &&
        (int64_t)avk_gqa_pack(u->p, u->p->seq_q, 0) * u->p->seq_q < e->extra[X_MIN_ROWS])
        return 0; /* too few packed rows: the decode body is faster */
    vk_config cfg = {.variant = e->variant, .algo = algo, .br = (uint32_t)e->tile_br, .bc = (uint32_t)e->tile_bc,
                     .wg = (uint32_t)e->workgroup_size};
    return *finish_config(u->caps, u->p, &cfg, e) == '\0';
}

/* Default sizes for a variant when the table has no usable entry for it here. */
static const avk_tuning *fallback_entry(const char *variant)
{
    for (int i = (int)(sizeof vk_table / sizeof *vk_table) - 1; i >= 0; --i)
        if (!vk_table[i].vendor && !vk_table[i].device && strcmp(vk_table[i].variant, variant) == 0) return &vk_table[i];
    return NULL;
}

/* Packed decode rows (GQA): the scalar bodies' row tile grows to cover a kv
 * head's pack * Nq rows (up to VK_PACKED_ROWS_MAX), so each K/V tile is read
 * once per kv head rather than once per row block; the largest tile that fits
 * the device wins, else the table's own. The decode body's tile also shrinks
 * to the packed rows (the power of two that holds them): its rows are register
 * arrays that every key updates, padding rows too. H100, gemma3-27b local
 * decode (2 packed rows, window 1024, tools/h100/s24.sh): 0.060 ms at the
 * table's 4 rows, 0.048 at 2. */
enum { VK_PACKED_ROWS_MAX = 32 };
static void fit_packed_rows(const vk_caps *c, const attnvk_problem *p, vk_config *cfg, const avk_tuning *e)
{
    if (!avk_is_decode(p) || cfg->algo > VK_ALGO_DECODE) return;
    /* the decode body keeps each row's Q and O slices in registers (vk_finish_decode_config bounds them) */
    uint32_t cap = cfg->algo != VK_ALGO_DECODE ? VK_PACKED_ROWS_MAX : 16;
    uint32_t rows = (uint32_t)(avk_gqa_pack(p, p->seq_q, 0) * p->seq_q), want = cfg->br;
    if (cfg->algo == VK_ALGO_DECODE && rows < cfg->br) {
        uint32_t fit = 1;
        while (fit < rows) fit *= 2;
        vk_config shrunk = *cfg;
        shrunk.br = fit;
        if (fit < cfg->br && *finish_config(c, p, &shrunk, e) == '\0') *cfg = shrunk;
        return;
    }
    while (want < rows && want < cap) want *= 2;
    for (; want > cfg->br; want /= 2) {
        vk_config grown = *cfg;
        grown.br = want;
        if (grown.algo != VK_ALGO_DECODE && grown.br > grown.wg) grown.wg = grown.br;
        if (grown.algo != VK_ALGO_DECODE && !pow2(grown.wg / grown.br)) continue;
        if (*finish_config(c, p, &grown, e) == '\0' &&
            (grown.algo != VK_ALGO_DECODE || grown.br * dim_max(p) / grown.key_lanes <= VK_DECODE_GROWN_REGS)) {
            *cfg = grown;
            return;
        }
    }
}

attnvk_status vk_choose_config(const vk_caps *c, const attnvk_problem *p, const attnvk_kernel_options *opts,
                               vk_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    /* The matrix bodies' softcap takes tanh as 1 - 2 / (2^y + 1) (one exp2, one reciprocal;
     * flash_common.glsl's AVK_SOFTCAP_EXP2) rather than GLSL's tanh, slower on the H100 (8k D=128
     * f16 coopmat-nv-rs, plain 128.2 / 148.5 TFLOP/s causal / not: exp2 form 109.3 / 126.0, tanh
     * 99.1 / 114.2; tools/h100/sweep-s14-softcap.txt). ATTNVK_VK_SOFTCAP_EXP2=0 takes tanh (A/B). */
    const int softcap_form = env_choice("ATTNVK_VK_SOFTCAP_EXP2"); /* 2: tanh of f16 pairs; unset: below */
    /* the decode body's pipeline for a paged cache carries only its addressing (flash_common.glsl's
     * avk_kv_row, vk_kernel.c); ATTNVK_VK_KV_ADDRESSING=2 builds both into it, as every other body has (A/B) */
    const int addressing = env_choice("ATTNVK_VK_KV_ADDRESSING");
    cfg->kv_addressing = addressing == 2 ? 2u : p->page_size > 0;
    vk_algo algo = VK_ALGO_SCALAR;
    /* test hook: a KHR variant's host path on a device without KHR matrices, over the
     * emulated 8x8 matrices (the emulation's shape stands for the KHR properties' one)
     * and its -emu body's table sizes, which fit where the emulation runs */
    vk_caps emulated_caps;
    const char *emu_body = !opts->variant                          ? NULL
                           : !strcmp(opts->variant, "coopmat-khr")    ? "coopmat-emu"
                           : !strcmp(opts->variant, "coopmat-khr-rs") ? "coopmat-rs-emu"
                           : !strcmp(opts->variant, "decode-khr-rs")  ? "decode-rs-emu"
                                                                      : NULL;
    int emulate = (opts->test_flags & ATTNVK_TEST_EMULATE_KHR_MATRICES) && emu_body && !c->khr_coopmat;
    if (emulate) {
        emulated_caps = *c;
        emulated_caps.khr_coopmat = 1;
        emulated_caps.khr_m = emulated_caps.khr_n = emulated_caps.khr_k = 8;
        emulated_caps.rs_layout_khr = 1; /* the emulation's layout is its own */
        c = &emulated_caps;
    }
    const char *table_variant = emulate ? emu_body : opts->variant;
    if (opts->variant && !algo_of(opts->variant, &algo))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "vulkan: unknown variant '%s' (scalar, f16, decode, decode-nv-rs, decode-khr-rs, coopmat-nv, "
                        "coopmat-nv-rs, coopmat-khr, coopmat-khr-rs)",
                        opts->variant);
    if (opts->variant && *algo_blocker(c, algo, p))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: variant %s on %s: %s", opts->variant, c->info.name,
                        algo_blocker(c, algo, p));
    usable_ctx u = {c, p, table_variant};
    avk_tuning_query q = {.device = &c->info, .dtype = p->dtype, .head_dim = p->head_dim,
                          .decode = avk_is_decode(p), .usable = entry_usable, .ctx = &u};
    /* a tuned file's entry or a tune candidate (core/tuning.h): that one, or the reason it cannot run */
    const avk_tuning *explicit_entry = opts->variant ? NULL : avk_tuning_explicit();
    if (explicit_entry && (!algo_of(explicit_entry->variant, &algo) || *algo_blocker(c, algo, p) ||
                           (explicit_entry->dtype >= 0 && explicit_entry->dtype != (int)p->dtype)))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: variant %s cannot run this %s problem on %s%s%s",
                        explicit_entry->variant, attnvk_dtype_name(p->dtype), c->info.name,
                        algo_of(explicit_entry->variant, &algo) && *algo_blocker(c, algo, p) ? ": " : "",
                        algo_of(explicit_entry->variant, &algo) ? algo_blocker(c, algo, p) : "");
    const avk_tuning *e = explicit_entry ? explicit_entry
                                         : avk_tuning_lookup(vk_table, (int)(sizeof vk_table / sizeof *vk_table), &q);
    if (!e && opts->variant) { /* a named variant on the other kind of shape (prefill-only, or decode-only) */
        q.decode = !q.decode;
        e = avk_tuning_lookup(vk_table, (int)(sizeof vk_table / sizeof *vk_table), &q);
    }
    if (!e && opts->variant && (opts->tile_br || opts->tile_bc)) e = fallback_entry(table_variant);
    if (!e) {
        char dv[16] = ""; /* "/Dv" where it differs */
        if (dim_v(p) != dim_k(p)) snprintf(dv, sizeof dv, "/%u", dim_v(p));
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: no %s configuration fits %s for D=%d%s %s",
                        opts->variant ? opts->variant : "kernel", c->info.name, p->head_dim, dv, attnvk_dtype_name(p->dtype));
    }
    algo_of(e->variant, &algo);
    cfg->variant = variant_name(algo); /* static: an explicit entry's name lives only through prepare */
    cfg->algo = algo;
    if (emulate) { /* the name as the table spells it: cfg outlives opts */
        algo_of(opts->variant, &algo);
        for (size_t i = 0; i < sizeof vk_variant_names / sizeof *vk_variant_names; ++i)
            if (vk_variant_names[i].algo == algo) cfg->variant = vk_variant_names[i].name;
        cfg->algo = algo;
        cfg->emulated = 1;
    }
    cfg->br = opts->tile_br ? (uint32_t)opts->tile_br : (uint32_t)e->tile_br;
    cfg->bc = opts->tile_bc ? (uint32_t)opts->tile_bc : (uint32_t)e->tile_bc;
    cfg->wg = (uint32_t)e->workgroup_size;
    /* tuning aid (vk_perf sweeps): ATTNVK_VK_WORKGROUP overrides the table's workgroup size */
    const char *wg_env = getenv("ATTNVK_VK_WORKGROUP");
    if (wg_env && atoi(wg_env) > 0) cfg->wg = (uint32_t)atoi(wg_env);
    /* a larger Br than the workgroup has threads: grow the workgroup (scalar shaders) */
    if ((algo == VK_ALGO_SCALAR || algo == VK_ALGO_F16) && cfg->br > cfg->wg) cfg->wg = cfg->br;
    if (!opts->tile_br && !explicit_entry) fit_packed_rows(c, p, cfg, e); /* an explicit Br is the one timed */
    int alibi_on, mask_on, hook_on;
    attnvk_status sw = avk_env_switch("ATTNVK_VK_ALIBI_MMA", 1, &alibi_on);
    if (sw == ATTNVK_OK) sw = avk_env_switch("ATTNVK_VK_MASK_SHARED", 1, &mask_on);
    if (sw == ATTNVK_OK) sw = avk_env_switch("ATTNVK_VK_HOOK_MODS", 1, &hook_on);
    if (sw != ATTNVK_OK) return sw;
    /* ALiBi without a softcap on a register-softmax prefill body: its key term as one more k-step
     * of S (flash_coopmat_rs_body.glsl's AVK_ALIBI_MMA; finish_rs_config sizes its matrices).
     * H100 (s43c, D=128 8k causal): 165.8 -> 167.6 TFLOP/s. ATTNVK_VK_ALIBI_MMA=0: one multiply-add
     * an element (the A/B) */
    cfg->alibi_mma = alibi_on && vk_algo_is_rs(algo) && p->alibi && !(p->softcap > 0.0f);
    const char *why = finish_config(c, p, cfg, e);
    if (*why)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: %s %ux%u (workgroup %u) on %s: %s", cfg->variant, cfg->br,
                        cfg->bc, cfg->wg, c->info.name, why);
    /* the softcap's tanh on NVIDIA's register-softmax bodies (NV and KHR): of f16 pairs (GLSL's
     * f16vec2 tanh, half the special-function ops), H100 8k D=128 causal, coopmat-khr-rs: plain
     * 175.3 TFLOP/s, exp2 form 145.7, pairs 152.9 (session 16, sweep-s16-softcap); the exp2
     * form elsewhere (the emulations keep what CI checks) */
    const int pairs = (algo == VK_ALGO_COOPMAT_NV_RS || algo == VK_ALGO_COOPMAT_KHR_RS || algo == VK_ALGO_DECODE_NV_RS ||
                       algo == VK_ALGO_DECODE_KHR_RS) && !cfg->emulated;
    cfg->softcap_exp2 = softcap_form >= 0 ? (uint32_t)softcap_form : pairs ? 2u : 1u;
    /* ATTNVK_VK_SOFTCAP_IN_Q=1: the register-softmax prefill bodies take the softcap's input scale
     * into Q as they stage it, one multiply a score less (bit 4 of flash_common.glsl's
     * AVK_SOFTCAP_EXP2). H100 (s42a, D=128 8k causal softcap 30): 155.0 / 155.0 -> 155.8 / 155.7;
     * off by default: a local CI run with it on timed vulkan_backward_matrix_emu out (600 s; the cause
     * was not pinned down: lavapipe compiling pipelines its cache lacked), not worth half a percent */
    if (env_choice("ATTNVK_VK_SOFTCAP_IN_Q") == 1 && vk_algo_is_rs(algo)) cfg->softcap_exp2 |= 4u;
    /* an f16 mask whose rows are whole 16-byte chunks (Nk % 8 == 0) on a register-softmax prefill
     * body with one K buffer: each tile's mask is staged in that buffer once S is done with it
     * (flash_coopmat_rs_body.glsl's MASK_SH; its XOR swizzle wants Bc / 8 a power of two, and the
     * buffer of Bc padded Dk rows must hold Br x Bc halves). ATTNVK_VK_MASK_SHARED=0: each lane's
     * pairs from global memory (the A/B) */
    const uint32_t mask_chunks = cfg->bc / 8, k_row = mat_pad(dim_k(p)) / 8 + 1; /* uvec4 */
    cfg->mask_shared = mask_on && vk_algo_is_rs(algo) && cfg->kv_stages == 1 && p->mask && p->mask_dtype == ATTNVK_F16 &&
                       p->seq_kv % 8 == 0 && mask_chunks && !(mask_chunks & (mask_chunks - 1)) &&
                       cfg->bc * k_row >= cfg->br * mask_chunks;
    /* the pipeline carries only the problem's value modifications (flash_common.glsl's avk_flags: the
     * others' code and row inputs left out, as OpenCL's AVK_HOOK_MODS; there, H100 D=128 softcap alone
     * 238 registers by ptxas against 255 with all three). Real matrices only: on lavapipe every feature
     * set would be a pipeline of its own to compile. ATTNVK_VK_HOOK_MODS=0: all three (the A/B) */
    const unsigned mods = avk_score_mod_bits(p) & (AVK_MOD_SOFTCAP | AVK_MOD_ALIBI | AVK_MOD_MASK);
    cfg->hook_mods = hook_on && mods && cfg->algo >= VK_ALGO_COOPMAT_NV && !cfg->emulated
                         ? 16u | (mods & AVK_MOD_SOFTCAP ? 32u : 0u) | (mods & AVK_MOD_ALIBI ? 64u : 0u) |
                               (mods & AVK_MOD_MASK ? 128u : 0u)
                         : 0u;
    avk_tuning_note(e);
    return ATTNVK_OK;
}

void vk_default_variant(const vk_caps *c, char *out, size_t n)
{
    attnvk_problem p = {.batch = 1, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128,
                        .dtype = (c->shader_f16 && c->storage_16bit) ? ATTNVK_F16 : ATTNVK_F32};
    attnvk_kernel_options o = {0};
    vk_config cfg;
    if (vk_choose_config(c, &p, &o, &cfg) == ATTNVK_OK) snprintf(out, n, "%s %ux%u", cfg.variant, cfg.br, cfg.bc);
    else snprintf(out, n, "none");
    avk_clear_error();
}
