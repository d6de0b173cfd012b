/* The Vulkan backend's backward pass (vk_backward.c), behind the vtable's
 * `backward` (vk_kernel.c hands it the forward kernel's problem and arguments). */
#ifndef ATTNVK_VK_BACKWARD_H
#define ATTNVK_VK_BACKWARD_H

#include "core/kernel_args.h"
#include "vulkan/vk_internal.h"
#include "vulkan/vk_variants.h"

/* The dK/dV and dQ passes' body: the portable one (f32 tiles in shared memory) or
 * shaders/flash_bwd_cm_body.glsl on matrix units, through NV or KHR cooperative
 * matrices or (test-only) emulated ones. */
typedef enum { VK_BWD_PORTABLE, VK_BWD_MATRIX_NV, VK_BWD_MATRIX_KHR, VK_BWD_MATRIX_EMU } vk_bwd_body;

/* The tiles of the dK/dV and dQ passes: rows a workgroup owns (keep: keys,
 * or query rows) and rows of each tile it walks (stream), from the tables. */
typedef struct vk_bwd_tiles {
    vk_bwd_body body;
    uint32_t keep, stream, wg;          /* dK/dV */
    uint32_t dq_keep, dq_stream, dq_wg; /* dQ (the portable body: dK/dV's) */
    uint32_t shared_bytes;              /* the larger pass's */
    int unroll;             /* portable, GPUs: the builds whose inner loops the driver may unroll (CPU
                             * devices compile those slowly: llvmpipe 13 s a problem instead of 2) */
    uint32_t nsg, dq_nsg, subgroup, ms; /* matrix bodies: subgroups (MS kept rows each) of dK/dV and dQ, their
                                         * size, MS x MS x MS */
    uint32_t stages, dq_stages;         /* matrix bodies: 2 where the streamed tiles are double-buffered */
    int atomic_dq;                      /* matrix bodies: dK/dV adds dQ by f32 atomics, the dQ pass casts them */
    uint32_t kept_x_shared;             /* atomic_dq: K's A matrices read from shared memory per tile, not held */
    uint32_t reg_scores;                /* matrix bodies: P and dS in the accumulators (spec constant 8), not staged */
    uint32_t strips, dq_strips;         /* matrix bodies: MS-row strips a subgroup keeps (spec constant 9; > 1 with reg_scores) */
} vk_bwd_tiles;

/* The body and tiles for p after a forward built with fwd (its emulated
 * variants pick the emulated matrices): the matrix body where the device has
 * one and p suits it (f16, head dims multiples of 16 up to 128), else the
 * portable table's largest entry that fits. $ATTNVK_VK_BWD=portable keeps the
 * portable body, nv or khr takes that family only (UNSUPPORTED where the device
 * lacks it); $ATTNVK_VK_BWD_TILES ("nsg=N,stream=N[,dq_nsg=N,dq_stream=N,stages=1|2,kx=1|2,strips=1|2,dq_strips=1|2]")
 * sets the matrix tiles; $ATTNVK_VK_BWD_DQ=atomic has a matrix body's dK/dV add
 * dQ by f32 atomics (not with deterministic; UNSUPPORTED where the device lacks
 * them), kernel runs the dQ pass; unset, the table's row for the head dim decides
 * (atomics at D=64 where the device has them, not deterministic, no tiles override).
 * A matrix body computes P and dS in its accumulators where the device's
 * accumulator layout was probed to be the one the shader assumes (the emulation's
 * always), else through shared memory; $ATTNVK_VK_BWD_SCORES=staged|registers
 * picks (registers where the layout is not known: UNSUPPORTED with the reason).
 * INVALID_ARGUMENT for a bad value, with the reason. */
attnvk_status vk_bwd_select(const vk_caps *c, const attnvk_problem *p, const vk_config *fwd, int deterministic,
                            vk_bwd_tiles *out);

/* dQ, dK, dV (and d(sink)) of the forward that args (prepared for p with fwd)
 * ran, in one timed submission; bit-identical runs unless dQ is by atomics. */
attnvk_status vk_backward_run(avk_bdev *dev, const attnvk_problem *p, const avk_kernel_args *args, const vk_config *fwd,
                              const avk_backward_dispatch *a, double *device_ms);

#endif
