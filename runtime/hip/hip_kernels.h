/* The native kernel on AMD: the HIP tuning table, the configurations it
 * selects, and the instances each (arch, variant) code object must contain.
 * Host logic only (no HIP headers): the build-time generator
 * (hip_codegen.c), the backend and the tests share it. */
#ifndef ATTNVK_HIP_KERNELS_H
#define ATTNVK_HIP_KERNELS_H

#include "attnvk/attnvk.h"
#include "core/native_backward.h"
#include "core/tuning.h"

#include <stddef.h>

/* Variants: "mma16"    the kernel's mma path (AVK_MMA=1, 16 rows per warp, Q
 *                      in registers) on MFMA (gfx90a/gfx94x) or WMMA (gfx11),
 *                      through amd_matrix.h
 *           "mma16-qs" the same, Q re-read from LDS (large D)
 *           "simt"     the portable f32 kernel (AVK_MMA=0): f32 anywhere, and
 *                      every dtype on targets without matrix units (gfx1030) */
typedef struct avk_hip_config {
    char variant[32];
    int mma, qreg;      /* rows per warp is 16 */
    attnvk_dtype dtype;
    int head_dim;       /* Dk: Q and K rows */
    int head_dim_v;     /* Dv: V and O rows (0: = head_dim) */
    int br, bc, threads;
    int split;          /* compiled to write split-KV partials (decode) */
    int score_mod;      /* AVK_MOD_* bits: AVK_SCORE_MOD (hipRTC; no embedded object has it) */
} avk_hip_config;

/* The gfx targets CI builds code objects for (runtime/hip/CMakeLists.txt). */
extern const char *const avk_hip_build_archs[];
extern const int avk_hip_build_arch_count;

const avk_tuning *avk_hip_tuning_table(int *count);

/* Wave size and matrix unit of a gfx architecture name. */
int avk_hip_arch_wave(const char *arch);
int avk_hip_arch_matrix(const char *arch); /* 1 MFMA, 2 WMMA, 0 none */

/* A device description as the table sees it, for an architecture only
 * (build-time generation and tests). */
void avk_hip_synthetic_device(const char *arch, attnvk_device_info *out);

/* LDS bytes a configuration needs: the kernel's tiles (dynamic) plus the
 * matrix re-layout scratch of the mma variants (static). */
size_t avk_hip_config_dynamic_lds(const avk_hip_config *c);
size_t avk_hip_config_static_lds(const avk_hip_config *c, int wave);

/* The configuration for p on the device: table entry, then the options'
 * variant and tiles. decode: Nq <= 16, run as split-KV. UNSUPPORTED /
 * INVALID_ARGUMENT with the reason. */
attnvk_status avk_hip_select(const attnvk_device_info *info, const attnvk_problem *p,
                             const attnvk_kernel_options *o, int decode, avk_hip_config *cfg);

/* Every configuration the table selects for arch whose variant is `variant`
 * (all head dims, dtypes, prefill/decode); fills up to max, returns the count. */
/* `attnvk tune`: the distinct configurations avk_hip_select accepts for p (backend.h's tuning_candidates). */
int avk_hip_tuning_candidates(const attnvk_device_info *info, const attnvk_problem *p, int decode,
                              struct avk_tuning *out, int max);
int avk_hip_instances(const char *arch, const char *variant, avk_hip_config *out, int max);

/* Kernel symbols of a configuration inside its code object. */
void avk_hip_kernel_names(const avk_hip_config *c, char *fwd, char *reduce, size_t n);
/* "-DAVK_D=128 -DAVK_DTYPE=1 ..." for hipcc/hipRTC. */
void avk_hip_config_defines(const avk_hip_config *c, char *out, size_t n);

/* What attnvk would pick for D=128 f16 prefill (f32 without fp16). */
void avk_hip_default_variant(const attnvk_device_info *info, char *out, size_t n);

/* The unfused baseline's numbers: softmax workgroup, test-skip tile. */
const avk_tuning *avk_hip_rocblas_tuning(const attnvk_device_info *info, const attnvk_problem *p);

/* ---- the backward pass (native/attn_bwd.cu; hip_bwd_table.c, hip_backward.c) ----
 * From the shared tile table under the device's LDS (the matrix scratch
 * included): the mma body (attn_bwd_mma.h through amd_matrix.h) for f16/bf16
 * where avk_hip_arch_matrix says MFMA or WMMA, the simt body otherwise. Each
 * gfx target's embedded "bwd" code object holds the instances below
 * (score_mod 0); every other configuration compiles with hipRTC. Kernels are
 * renamed per instance (avk_bwd_pre_mma_d128_f16_..., avk_bwd_dq_simt_...). */
#define AVK_HIP_BWD_OBJECT "bwd"
attnvk_status avk_hip_bwd_select(const attnvk_device_info *info, const attnvk_problem *p, avk_native_bwd_config *cfg);
int avk_hip_bwd_instances(const char *arch, avk_native_bwd_config *out, int max);
/* kernel: AVK_BWD_PRE ... (avk_native_bwd_kernel_count of them) */
void avk_hip_bwd_kernel_name(const avk_native_bwd_config *c, int kernel, char *out, size_t n);
/* the shared -D options, the mma body's AVK_THREADS (amd_matrix.h's scratch) and the kernels' renames
 * (-Davk_bwd_pre=...) */
void avk_hip_bwd_defines(const avk_native_bwd_config *c, char *out, size_t n);

#endif
