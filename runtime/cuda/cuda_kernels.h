/* The native kernel's configurations: variant names, tuning-table lookup,
 * NVRTC options and compilation (with the on-disk cubin cache). Host logic
 * only, so it is unit-tested without a GPU (tests/cuda). */
#ifndef ATTNVK_CUDA_KERNELS_H
#define ATTNVK_CUDA_KERNELS_H

#include "attnvk/attnvk.h"
#include "core/native_backward.h"
#include "core/tuning.h"

#include <stddef.h>
#include <stdint.h>

/* Variants: "mma16"   tensor cores, 16 query rows per warp, Q in registers
 *           "mma16-qs" the same with Q re-read from shared memory; above Dv
 *                     256 col_warps warps share each 16-row group, each
 *                     holding its Dv / col_warps columns of O
 *           "mma32", "mma32-qs"  32 rows per warp (two m-tiles)
 *           "mma-decode" tensor cores, one 16-row m-tile shared by
 *                     key_warps warps that split the keys, each streaming
 *                     raw K/V through kv_stages stages (GQA-packed decode;
 *                     quantized caches dequantize in registers)
 *           "wgmma"   Hopper (sm_90a) warpgroup MMAs, 64 query rows per
 *                     warpgroup, swizzled shared-memory tiles (D 64/128/256)
 *           "tiled"   register-tiled f32 arithmetic (lanes of a row group split
 *                     D): f32 problems, and any dtype before sm_80
 *           "simt"    the simplest f32 kernel (any dtype, any target) */
typedef struct avk_cuda_config {
    char variant[32];
    int mma;            /* tensor-core kernel */
    int wgmma;          /* mma: the Hopper wgmma kernel */
    int tiled;          /* !mma: the register-tiled f32 kernel */
    int lanes_per_row;  /* tiled: lanes splitting D per row group */
    int rows_per_warp;  /* mma: 16 or 32 */
    int qreg;           /* mma: Q fragments kept in registers */
    int col_warps;      /* mma.sync bodies: warps sharing a row group, each with Dv / col_warps of O
                         * (AVK_WN; 0: 2 above Dv 256, else 1) */
    int key_warps;      /* mma-decode: warps splitting a CTA's keys (0: other variants) */
    int kv_stages;      /* mma-decode: raw K/V stages in flight per warp */
    int paged;          /* the paged cache's page size (0: contiguous), compiled in as AVK_PAGE_SIZE;
                         * mma-decode also builds with AVK_KV_PAGED (rows 8 bytes off 16 go to
                         * 16-byte aligned slots, attn_decode.h's ALIGNED_ROWS) */
    int min_ctas;       /* CTAs per SM the register budget must allow (__launch_bounds__; 0: 1) */
    int resident;       /* CTAs per SM the split planner fills the device with (0: 1) */
    int whole_waves;    /* splits in whole waves of SMs x resident (avk_split_request) */
    attnvk_dtype dtype;
    int head_dim;       /* Dk: Q and K rows */
    int head_dim_v;     /* Dv: V and O rows (0: = head_dim) */
    int br, bc;         /* query rows per CTA, keys per K/V tile */
    int threads;        /* per CTA */
    int split;          /* compiled to write split-KV partials */
    attnvk_kv_format kv_format; /* how K/V rows are stored (AVK_KV_FORMAT) */
    int contract;       /* the problem needs GQA packing, paging, seq_lens or a
                         * quantized cache: only the mma (not wgmma) and simt
                         * bodies implement those */
    int score_mod;      /* AVK_MOD_* bits (softcap, ALiBi, mask): AVK_SCORE_MOD (every body) */
    int pos_offset;     /* the problem moves i' (position_offset): AVK_POS_OFFSET, built only then */
    int dilated_view;   /* a dilated problem as strided views (AVK_DILATED_VIEW, no AVK_MOD_DILATED) */
    int fp8;            /* wgmma-fp8: the FP8 forward (AVK_FP8; Q, K, V e4m3, V transposed first) */
    int persistent;     /* wgmma-ws as a persistent kernel (AVK_PERSISTENT: a CTA an SM taking the blocks in
                         * turn, a second Q buffer; ATTNVK_CUDA_PERSISTENT=1 until measured) */
    int mask_tma;       /* wgmma-ws: an f16 mask's tiles by TMA into shared memory (AVK_MASK_TMA, a third tensor map) */
} avk_cuda_config;

/* Dv of a configuration (head_dim_v 0: Dk) */
static inline int avk_cuda_dim_v(const avk_cuda_config *c) { return c->head_dim_v > 0 ? c->head_dim_v : c->head_dim; }

/* attn_mma.h's warps per row group: the table's, else as many as keep O at
 * 128 accumulator registers a thread above Dv 256 (2; 4 with 32-row warps) */
static inline int avk_cuda_col_warps(const avk_cuda_config *c)
{
    if (c->col_warps > 0) return c->col_warps;
    return avk_cuda_dim_v(c) <= 256 ? 1 : c->rows_per_warp == 32 ? 4 : 2;
}

/* Fills the variant fields of cfg from a name; 0 for an unknown name. */
int avk_cuda_parse_variant(const char *name, avk_cuda_config *cfg);

/* Derives threads and checks every tile rule and the shared-memory limit
 * (smem_limit 0: unchecked). UNSUPPORTED / INVALID_ARGUMENT with the reason. */
attnvk_status avk_cuda_config_check(avk_cuda_config *cfg, int cc_major, size_t smem_limit);
size_t avk_cuda_config_smem(const avk_cuda_config *cfg);
/* CTAs per SM for the split plan: the config's resident, as many as the SM's shared memory holds */
int avk_cuda_resident(const avk_cuda_config *cfg, size_t smem_per_sm);

/* How mma-decode brings full K/V tiles (attn_decode.h's choice, for the kernel
 * info): "bulk" (cp.async.bulk on sm_90+: rows a multiple of 16 bytes, or a
 * contiguous cache's tile as one run), else "cp.async"; NULL for other variants. */
const char *avk_cuda_decode_copy(const avk_cuda_config *cfg, int cc_major, int paged);

/* The tuning table (vendor -> architecture -> device -> default). */
const avk_tuning *avk_cuda_tuning_table(int *count);

/* What the device runs for p: the table's entry (skipping entries the device
 * can't run, and bodies that lack a feature p needs), then the options'
 * variant and tiles. decode: split-KV shape; pack: GQA packing planned. */
attnvk_status avk_cuda_select(const attnvk_device_info *info, int cc_major, size_t smem_optin,
                              const attnvk_problem *p, const attnvk_kernel_options *o, int decode, int pack,
                              avk_cuda_config *cfg);
/* `attnvk tune`: the distinct configurations avk_cuda_select accepts for p as an
 * explicit entry (backend.h's tuning_candidates). */
int avk_cuda_tuning_candidates(const attnvk_device_info *info, int cc_major, size_t smem_optin,
                               const attnvk_problem *p, int decode, int pack, struct avk_tuning *out, int max);

/* NVRTC architecture for a compute capability: sm_90a on Hopper (wgmma-capable
 * target), sm_XY elsewhere. */
void avk_cuda_arch_name(int cc_major, int cc_minor, char *out, size_t n);

/* NVRTC options for cfg; returns the count. storage holds the strings.
 * $ATTNVK_CUDA_DEFINES ("-DNAME=V ...") adds kernel defines for tuning sweeps. */
enum { AVK_CUDA_MAX_OPTIONS = 32, AVK_CUDA_OPTION_LEN = 64 };
int avk_cuda_build_options(const avk_cuda_config *cfg, const char *arch,
                           char storage[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], const char **opts);

/* Cache key of a cubin: kernel source and headers, options, NVRTC and driver version. */
uint64_t avk_cuda_cache_key(const avk_cuda_config *cfg, const char *arch, int driver_version, int nvrtc_version);

/* Compiles cfg for arch into a cubin (malloc'd), through the on-disk cache
 * unless ATTNVK_CACHE_DIR=off. extra_option (may be NULL) is appended, e.g.
 * "--ptxas-options=-v"; log (may be NULL) receives the build log.
 * COMPILE with the log on failure; UNAVAILABLE without NVRTC. */
attnvk_status avk_cuda_compile(const avk_cuda_config *cfg, const char *arch, int driver_version,
                               const char *extra_option, void **cubin, size_t *size, int *from_cache,
                               char *log, size_t log_size);

/* ---- the backward pass (native/attn_bwd.cu; runtime/cuda/cuda_backward.c) ----
 * The tile table and configuration: core/native_backward.h; the mma body
 * needs sm_80+. */
/* The shared table's configuration for p on a device of compute capability
 * cc_major with smem_optin bytes of shared memory, with p's score mods;
 * UNSUPPORTED with the reason (head dims past 256). */
attnvk_status avk_cuda_bwd_select(int cc_major, size_t smem_optin, const attnvk_problem *p, avk_native_bwd_config *cfg);
/* Developer knob for tuning sweeps, the forward's and the backward's: appends $ATTNVK_CUDA_DEFINES's
 * -D (and -U) options to s[0..n) (so the cache key takes them too); the new count. */
int avk_cuda_extra_defines(char storage[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], int n);
int avk_cuda_bwd_options(const avk_native_bwd_config *c, const char *arch,
                         char storage[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], const char **opts);
/* avk_cuda_compile for the backward's program */
attnvk_status avk_cuda_compile_backward(const avk_native_bwd_config *cfg, const char *arch, int driver_version,
                                        const char *extra_option, void **cubin, size_t *size, int *from_cache,
                                        char *log, size_t log_size);

#endif
