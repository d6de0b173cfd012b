/* Kernel variants of the Vulkan backend and the per-vendor table that picks
 * one (with tile and workgroup sizes) for a device and problem. */
#ifndef ATTNVK_VK_VARIANTS_H
#define ATTNVK_VK_VARIANTS_H

#include "vulkan/vk_internal.h"
#include "core/tuning.h"

typedef enum vk_algo {
    VK_ALGO_SCALAR = 0,   /* f32 arithmetic, f32/f16/bf16 storage: any Vulkan 1.1 device */
    VK_ALGO_F16,          /* f16 storage and dot products, f32 softmax statistics */
    VK_ALGO_DECODE,       /* decode body: packed rows, keys over subgroups, subgroup sums (any matrix-less device) */
    VK_ALGO_COOPMAT_NV,   /* tensor cores through VK_NV_cooperative_matrix */
    VK_ALGO_COOPMAT_KHR,  /* matrix units through VK_KHR_cooperative_matrix (coopmat-nv's SPIR-V, rewritten) */
    VK_ALGO_COOPMAT_EMU,  /* test-only: the coopmat algorithm with emulated 8x8 matrices */
    VK_ALGO_COOPMAT_NV_RS, /* tensor cores, softmax in registers (NVIDIA's accumulator layout, probed) */
    VK_ALGO_COOPMAT_RS_EMU, /* test-only: the register-softmax algorithm with emulated 8x8 matrices */
    VK_ALGO_DECODE_NV_RS,  /* decode on tensor cores: packed rows, key groups, quantized tiles decoded to f16 */
    VK_ALGO_DECODE_RS_EMU, /* test-only: that decode body with emulated 8x8 matrices */
    VK_ALGO_COOPMAT_KHR_RS, /* coopmat-nv-rs's SPIR-V rewritten to VK_KHR_cooperative_matrix (KHR layout probed) */
    VK_ALGO_DECODE_KHR_RS,  /* decode-nv-rs's SPIR-V rewritten likewise */
} vk_algo;

/* The register-softmax variants (shaders/flash_coopmat_rs_body.glsl). */
static inline int vk_algo_is_rs(vk_algo a)
{
    return a == VK_ALGO_COOPMAT_NV_RS || a == VK_ALGO_COOPMAT_RS_EMU || a == VK_ALGO_COOPMAT_KHR_RS;
}
/* The matrix decode body (shaders/flash_decode_mma_body.glsl). */
static inline int vk_algo_is_decode_mma(vk_algo a)
{
    return a == VK_ALGO_DECODE_NV_RS || a == VK_ALGO_DECODE_RS_EMU || a == VK_ALGO_DECODE_KHR_RS;
}
/* The bodies that map packed GQA rows one by one (the others keep one head per workgroup). */
static inline int vk_algo_packs_rows(vk_algo a) { return a <= VK_ALGO_DECODE || vk_algo_is_decode_mma(a); }

/* Everything a pipeline is specialised with. */
typedef struct vk_config {
    const char *variant;
    vk_algo algo;
    uint32_t br, bc, wg;          /* query rows, keys per tile, workgroup size */
    uint32_t subgroup;            /* subgroup size the shader assumes */
    uint32_t sg_reduce;           /* scalar shaders: row reductions by subgroup shuffles */
    uint32_t mm, mn, mk;          /* matrix-unit shape (coopmat variants) */
    uint32_t kv_stages;           /* coopmat variants: 2 = double-buffered K/V tiles */
    uint32_t s_chains;            /* coopmat variants: independent accumulators per S tile */
    uint32_t q_shared;            /* register-softmax variants: Q read from shared memory, not registers */
    uint32_t mask_shared;         /* register-softmax prefill: an f16 mask's tiles staged in the K buffer (AVK_MASK_SHARED) */
    uint32_t alibi_mma;           /* register-softmax prefill: ALiBi's key term in S's products (AVK_ALIBI_MMA; no softcap) */
    uint32_t hook_mods;           /* real matrices: AVK_SCORES' bits 16 | 32 softcap | 64 ALiBi | 128 mask, the pipeline
                                   * built for the problem's value modifications alone (flash_common.glsl's avk_flags) */
    uint32_t key_lanes;           /* decode: lanes that share a key (a slice of D each) */
    uint32_t keys_per_step;       /* decode: keys each lane group loads together (1..4) */
    uint32_t page_slots;          /* decode, paged K/V: block-table entries a workgroup stages in shared memory (0: none) */
    uint32_t runs;                /* decode, quantized K/V: 1 a lane's slice loads as one run (avk_kv_code_byte), 2 as aligned words */
    uint32_t spread;              /* decode: a lane group's softmax spread over its lanes (flash_decode.comp's SPREAD) */
    uint32_t half_qk;             /* decode, f16 over a quantized cache: Q.K in f16 pairs (AVK_DECODE_HALF_QK) */
    uint32_t probe;               /* decode: a timing aid, loads (1) or arithmetic (2) alone (flash_decode.comp's PROBE) */
    uint32_t resident;            /* workgroups a compute unit runs at once, for the split plan (0: unknown) */
    uint32_t whole_waves;         /* split plan in whole waves of compute units x resident */
    uint32_t key_groups;          /* matrix decode: subgroups that take different keys (bc keys each per step) */
    uint32_t direct_kv;           /* matrix decode, quantized cache: K/V operands built in registers (AVK_DIRECT_KV) */
    uint32_t required_subgroup;   /* 0, or a size to request through subgroup size control */
    uint32_t kv_addressing;       /* 1: a paged cache (the decode body is built for it: constant 12, AVK_PAGED), 0 contiguous, 2 either (ATTNVK_VK_KV_ADDRESSING=2) */
    uint32_t softcap_exp2;        /* matrix bodies: the softcap's tanh as 1 - 2 / (exp2 + 1) (1), GLSL's tanh (0), of f16 pairs (2); | 4: Q takes its input scale (ATTNVK_VK_SOFTCAP_IN_Q=1) */
    uint32_t shared_bytes;
    uint32_t emulated;            /* a KHR variant under ATTNVK_TEST_EMULATE_KHR_MATRICES: its -emu body */
} vk_config;


/* Picks the variant and sizes for p on c, honouring opts (variant, tiles).
 * UNSUPPORTED / INVALID_ARGUMENT with a reason when it cannot. */
attnvk_status vk_choose_config(const vk_caps *c, const attnvk_problem *p, const attnvk_kernel_options *opts,
                               vk_config *cfg);
/* "variant BRxBC" for D=128 f16 (f32 without fp16). */
void vk_default_variant(const vk_caps *c, char *out, size_t n);

#endif
