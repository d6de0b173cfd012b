/* The CPU device's kernels on host pointers: attnvk's flash attention
 * (cpu_flash.c) and the OpenBLAS unfused baseline (cpu_openblas.c). */
#ifndef ATTNVK_CPU_FLASH_H
#define ATTNVK_CPU_FLASH_H

#include "attnvk/attnvk.h"

#include <stdint.h>

/* One run: the buffers of attnvk_tensors as host memory (NULL where the
 * problem does not use them), query rows [q_begin, q_begin + q_count) of
 * every (b, h); rows outside are left untouched. */
typedef struct avk_cpu_job {
    const attnvk_problem *p;
    const void *q, *k, *v; /* Q in its q format; K and V in the kv format, paged or contiguous */
    void *o;               /* p->dtype */
    float *lse;            /* [B][H][Nq], or NULL */
    const int32_t *block_table, *seq_lens;
    const float *kv_scales;
    const float *q_scales; /* [H], fp8 queries only */
    const void *mask; /* p->mask_dtype */
    const float *sinks, *alibi_slopes;
    const uint8_t *block_layout; /* with block_sparse */
    int q_begin, q_count;
    int drop_keys; /* > 0: ignore the last drop_keys visible keys of each row (ATTNVK_TEST_SKIP_LAST_KV_TILE) */
    int tile_bc, rows; /* flash: keys per tile, query rows per work item (0: the defaults below) */
} avk_cpu_job;

/* Default tiles of the flash kernel (cpu_backend.c's table): key tile and the query
 * rows one work item packs; a tile_bc a multiple of the host's gemm micro-tile
 * (cpu_simd.h's nc) up to AVK_CPU_MAX_TILE_BC. */
enum { AVK_CPU_TILE_BC = 128, AVK_CPU_ROWS = 128, AVK_CPU_MAX_TILE_BC = 1024 };

/* Tiled online-softmax attention in f32 (every feature of the problem
 * struct), over avk_cpu_threads() threads; vectorised for the host. */
attnvk_status avk_cpu_flash_run(const avk_cpu_job *job);
/* "avx512", "avx2" or "generic": the inner loops this host runs */
const char *avk_cpu_flash_isa(void);

/* The backward pass (cpu_backward.c): fwd's q, k, v, o and lse are read (the
 * forward's O and LSE), with its seq_lens, mask, sinks and ALiBi slopes; every
 * query row. dO is in p->dtype; dQ, dK, dV are written whole in p->dtype,
 * d_sinks (f32 [H]) when non-NULL. */
typedef struct avk_cpu_backward_job {
    avk_cpu_job fwd;
    const void *d_o;
    void *dq, *dk, *dv;
    float *d_sinks;
} avk_cpu_backward_job;

/* Keys of one dK/dV work item and query rows of one dQ work item. */
enum { AVK_CPU_BWD_KEYS = 64, AVK_CPU_BWD_ROWS = 64 };

/* FlashAttention-2's backward in f32 over avk_cpu_threads() threads, with no
 * shared sums (dK/dV by key blocks, dQ by query blocks): bit-identical runs. */
attnvk_status avk_cpu_backward_run(const avk_cpu_backward_job *job);

/* The OpenBLAS unfused baseline: 1 if libopenblas.so.0 loads (else *why). */
int avk_openblas_available(const char **why);
/* "OpenBLAS 0.3.21 ..." (its config string), once loaded */
const char *avk_openblas_config(void);
/* UNSUPPORTED (with the reason) for what it cannot run: dtypes other than f32, paged or quantized caches. */
attnvk_status avk_openblas_check(const attnvk_problem *p);
/* S = Q K^T (sgemm), the row softmax with every score feature, O = P V
 * (sgemm), over row tiles so the scores stay bounded. */
attnvk_status avk_openblas_run(const avk_cpu_job *job);
void avk_openblas_unload(void);

#endif
