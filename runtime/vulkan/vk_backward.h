/* The Vulkan backend's backward pass (vk_backward.c), behind the vtable's
 * `backward` (vk_kernel.c hands it the forward kernel's problem and arguments). */
#ifndef ATTNVK_VK_BACKWARD_H
#define ATTNVK_VK_BACKWARD_H

#include "core/kernel_args.h"
#include "vulkan/vk_internal.h"

/* The tiles of the dK/dV and dQ passes: rows a workgroup owns (keep: keys,
 * or query rows) and rows of each tile it walks (stream), from the table. */
typedef struct vk_bwd_tiles {
    uint32_t keep, stream, wg;
    uint32_t shared_bytes;
    int unroll; /* GPUs: the dK/dV and dQ builds whose inner loops the driver may unroll (CPU devices
                 * compile those slowly: llvmpipe 13 s a problem instead of 2) */
} vk_bwd_tiles;

/* The largest table entry whose shared memory fits the device; UNSUPPORTED with the reason. */
attnvk_status vk_bwd_select(const vk_caps *c, const attnvk_problem *p, vk_bwd_tiles *out);

/* dQ, dK, dV (and d(sink)) of the forward that args (prepared for p) ran, in
 * one timed submission; deterministic always (no atomics). */
attnvk_status vk_backward_run(avk_bdev *dev, const attnvk_problem *p, const avk_kernel_args *args,
                              const avk_backward_dispatch *a, double *device_ms);

#endif
