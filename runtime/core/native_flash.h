/* The host side of the native flash kernels (native/attn_fwd.cu), shared by
 * the CUDA and HIP backends: split-KV planning, the grid, the partials'
 * workspace, the kernel's one argument and the launches, over a small
 * driver function table each backend fills. The backends keep only what
 * differs: their tuning tables, how modules are compiled and loaded, and
 * the driver calls themselves. */
#ifndef ATTNVK_NATIVE_FLASH_H
#define ATTNVK_NATIVE_FLASH_H

#include "core/backend.h"
#include "core/kernel_args.h"

#include <stddef.h>

struct avk_attn_params;     /* native/attn_params.h: the kernels' one argument */
struct avk_native_kernel;
#define AVK_MAX_TENSOR_MAPS 3 /* descriptors a forward kernel takes after its argument */

/* One API's driver, as the native host layer calls it. ctx is the backend's
 * device; functions are module handles (CUfunction, hipFunction_t). */
typedef struct avk_native_driver {
    const char *api;  /* "cuda", "hip": error messages */
    attnvk_status (*enter)(void *ctx); /* make the device current */
    void (*leave)(void *ctx);
    attnvk_status (*alloc)(void *ctx, size_t bytes, unsigned long long *addr);
    void (*free)(void *ctx, unsigned long long addr);
    /* early: the grid may launch while the stream's previous grid finishes
     * and waits for it in the kernel (programmatic dependent launch), where
     * the device has it */
    /* stream: the caller's (async runs), NULL for the device's own; name: the kernel's, for errors */
    attnvk_status (*launch)(void *ctx, void *stream, void *function, const unsigned grid[3], unsigned threads,
                            size_t smem, void **args, int early, const char *name);
    attnvk_status (*time_begin)(void *ctx);
    attnvk_status (*time_end)(void *ctx, double *device_ms);
    unsigned long long (*address)(const avk_bbuf *b); /* 0 for NULL */
    /* NULL where no kernel takes them: k->tensor_maps descriptors (128 bytes, 64-byte
     * aligned) the forward kernel takes after P, for P's buffers (CUDA's TMA tensor maps) */
    attnvk_status (*tensor_maps)(void *ctx, const struct avk_native_kernel *k, const struct avk_attn_params *P,
                                 unsigned char (*maps)[128]);
    /* bytes (a few) of device memory set to zero; NULL where no kernel keeps a counter */
    attnvk_status (*zero)(void *ctx, unsigned long long addr, size_t bytes);
} avk_native_driver;

/* What a backend's tuning picked, in the layer's terms. */
typedef struct avk_native_shape {
    int br, threads;       /* packed query rows and threads of a CTA */
    int split_round;       /* keys a split is a whole number of (the key tile, times key warps) */
    int resident;          /* CTAs an SM holds, for whole-wave split plans (1: don't care) */
    int whole_waves;       /* plan splits in whole waves of compute units x resident */
    int compute_units;
    size_t smem;           /* dynamic shared memory of the attention kernel */
    int dilated_view;      /* a dilated problem runs as strided views (the build has AVK_DILATED_VIEW) */
    int persistent;        /* the kernel takes the grid's blocks in turn (AVK_PERSISTENT): compute_units x
                            * resident CTAs launch; 2: from a counter in device memory (sched) */
} avk_native_shape;

/* A prepared native kernel: the problem, its planned arguments, the two
 * functions and the split-KV partials. */
typedef struct avk_native_kernel {
    attnvk_problem p;
    int tensor_maps;      /* descriptors the forward kernel takes after P (AVK_MAX_TENSOR_MAPS at most) */
    int tensor_map_rows;  /* their boxes' rows: the key tile */
    avk_kernel_args args; /* the contract's scalars; q_begin/q_count set per dispatch */
    avk_native_shape shape;
    int splits;
    int split_build;      /* the kernel writes partials and the merge runs (even for one split) */
    void *fwd, *reduce;
    unsigned long long workspace; /* partial O (f32 [splits][B][H][Nq][Dv]) then partial LSE */
    size_t part_o_bytes;
    /* the FP8 forward: a kernel that writes V transposed (AVK_FP8_VT_KEYS keys a row) into vt
     * before each run, since e4m3 MMAs read B K-major only; NULL elsewhere */
    void *v_transpose;
    unsigned long long vt;
    size_t vt_bytes;
    unsigned long long sched; /* AVK_PERSISTENT=2: the blocks' counter (a u32 the kernel leaves at zero) */
} avk_native_kernel;

/* 1 when the native bodies take Q/K head dim dk and V/O head dim dv: the
 * equal ones of issue #13's list, and DeepSeek MLA's pairs. (Inline: HIP's
 * build-time code-object lister links the tuning table without core.) */
static inline int avk_native_head_dims(int dk, int dv)
{
    static const int equal[] = {32, 40, 64, 72, 80, 96, 112, 128, 192, 256, 512};
    if (dk != dv) return (dk == 192 && dv == 128) || (dk == 576 && dv == 512);
    for (size_t i = 0; i < sizeof equal / sizeof *equal; ++i)
        if (dk == equal[i]) return 1;
    return 0;
}

/* Fills k's arguments and plans its splits (o->split_kv overrides); refuses
 * grids past 65535 in y or z. force_split: the build writes partials even
 * for one split (HIP's decode objects). Sets k->split_build. */
attnvk_status avk_native_plan(const avk_native_driver *d, avk_native_kernel *k, const attnvk_problem *p,
                              const attnvk_kernel_options *o, int pack, const avk_native_shape *shape,
                              int force_split);

/* Allocates the partials where the build splits (call inside enter/leave). */
attnvk_status avk_native_alloc_workspace(const avk_native_driver *d, void *ctx, avk_native_kernel *k);

/* The kernel info fields the layer knows: tiles, threads, splits, workspace. */
void avk_native_describe(const avk_native_kernel *k, int bc, attnvk_kernel_info *info);

/* a->launches back-to-back runs, timed; the merge follows each split run.
 * a->async: launched on a->stream (NULL: the device's), neither timed nor waited for. */
attnvk_status avk_native_dispatch(const avk_native_driver *d, void *ctx, const avk_native_kernel *k,
                                  const avk_dispatch *a, double *device_ms);

/* Frees the partials (the device must not be lost). */
void avk_native_release(const avk_native_driver *d, void *ctx, avk_native_kernel *k);

#endif
