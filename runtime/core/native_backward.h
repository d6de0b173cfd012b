/* The host side of the native backward pass (native/attn_bwd.cu), shared by
 * the CUDA and HIP backends: the tile table, each kernel's threads and
 * shared memory, the compile-time defines, and the run (workspace, the four
 * launches in order, timing) over native_flash.h's driver table. The
 * backends keep how modules are compiled and loaded. */
#ifndef ATTNVK_NATIVE_BACKWARD_H
#define ATTNVK_NATIVE_BACKWARD_H

#include "core/native_flash.h"

#include <stddef.h>

/* mma: the tensor-core body (f16/bf16, Dk and Dv multiples of 16; 2: its
 * dK/dV kernels on Hopper's wgmma, Dk and Dv 64 or 128), else the f32 simt
 * body. bc keys per dK/dV CTA, bq query rows per tile of it, wn
 * warps sharing each 16-key group (mma); qb query rows per dQ CTA, kb keys
 * per tile of it; threads: the simt body's per CTA (mma derives them). */
typedef struct avk_native_bwd_config {
    attnvk_dtype dtype;
    int head_dim, head_dim_v;
    int mma;
    int bc, bq, wn;
    int qb, kb;
    int threads;
    int score_mod; /* AVK_MOD_* bits: AVK_SCORE_MOD (the backend sets it) */
} avk_native_bwd_config;

/* The mma body's matrix paths, as masks of which a table row serves: CUDA's
 * mma.sync, AMD's MFMA/WMMA through native/amd_matrix.h (its rows sized for
 * 64 KiB of LDS and whole wavefronts), and Hopper's wgmma (sm_90a: the dK/dV
 * kernels of native/attn_bwd_sm90.h, the dQ kernel mma.sync's). */
enum { AVK_BWD_TENSOR_MMA_SYNC = 1, AVK_BWD_TENSOR_AMD = 2, AVK_BWD_TENSOR_WGMMA = 4 };

/* What a device offers the table: the mma paths the backend has for it
 * (AVK_BWD_TENSOR_*, 0: the simt body only), the shared memory one CTA may
 * take (0: no limit), its hardware warp width (0: 32) and the static shared
 * memory an mma kernel adds per hardware warp (AMD's re-layout scratch). */
typedef struct avk_native_bwd_device {
    const char *api;
    int tensor;
    size_t smem_limit;
    int wave;
    size_t mma_static_per_wave;
} avk_native_bwd_device;

/* The table's first configuration for p whose kernels fit the device's
 * shared memory (their static scratch included); mma rows only of the
 * device's tensor paths, and on a wider wave only where each mma kernel is
 * whole waves. score_mod is left 0. UNSUPPORTED with the reason (head dims
 * past 256). */
attnvk_status avk_native_bwd_select_on(const avk_native_bwd_device *dev, const attnvk_problem *p,
                                       avk_native_bwd_config *cfg);
/* The kernels of a loaded configuration: every body's (the HIP code generator renames these per
 * instance), then the mma body's dK/dV that adds dQ by atomics (its default mode). */
enum {
    AVK_BWD_PRE, AVK_BWD_DKDV, AVK_BWD_DQ, AVK_BWD_SINKS, AVK_BWD_DQ_CONVERT, AVK_BWD_KERNELS,
    AVK_BWD_DKDV_DQ = AVK_BWD_KERNELS, AVK_BWD_ALL_KERNELS
};
extern const char *const avk_native_bwd_kernel_names[AVK_BWD_ALL_KERNELS]; /* "avk_bwd_pre", ... */
/* how many of them cfg's module holds */
int avk_native_bwd_kernel_count(const avk_native_bwd_config *c);
/* threads and dynamic shared memory of one of them (AVK_BWD_*) */
int avk_native_bwd_threads(const avk_native_bwd_config *c, int kernel);
size_t avk_native_bwd_smem(const avk_native_bwd_config *c, int kernel);
/* the most shared memory any of cfg's kernels takes */
size_t avk_native_bwd_smem_max(const avk_native_bwd_config *c);
/* the most threads of cfg's dK/dV and dQ kernels (the others take 256 and no matrix scratch) */
int avk_native_bwd_threads_max(const avk_native_bwd_config *c);
/* the static shared memory an mma kernel of cfg adds on dev (0 for the simt body) */
size_t avk_native_bwd_static_smem(const avk_native_bwd_device *dev, const avk_native_bwd_config *c);
/* "-DAVK_D=128 -DAVK_DV=128 ..." (space separated) for NVRTC, hipcc, hipRTC */
void avk_native_bwd_defines(const avk_native_bwd_config *c, char *out, size_t n);

/* What a run of c did, for attnvk_backward_options.info: variant bwd-wgmma, bwd-mma or bwd-simt,
 * tile_br the query rows of a dK/dV tile, tile_bc its keys, workgroup_size its threads; params
 * say where dQ came from (atomics in the dK/dV kernel, or the deterministic dQ kernel). */
void avk_native_bwd_describe(const avk_native_bwd_config *c, int atomic_dq, attnvk_kernel_info *info);

/* One backward run of nk's problem with the functions of cfg: D_i (and the
 * sink shares), dK/dV, dQ, d(sink), on the device's stream, timed; its f32
 * workspace allocated and freed around it. The mma body's default adds dQ by
 * atomics inside dK/dV (then converts it); the deterministic mode, and the
 * simt body always, run the dQ kernel, which owns its rows. Call inside
 * d->enter / leave. */
attnvk_status avk_native_backward(const avk_native_driver *d, void *ctx, const avk_native_kernel *nk,
                                  const avk_native_bwd_config *cfg, void *const functions[AVK_BWD_ALL_KERNELS],
                                  const avk_backward_dispatch *a, double *device_ms);

#endif
