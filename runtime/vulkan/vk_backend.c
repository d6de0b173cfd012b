/* The Vulkan backend's vtable: the pieces live in vk_instance.c (init),
 * vk_describe.c, vk_device.c (devices, buffers), vk_kernel.c and vk_backward.c. */
#include "core/kv_cache.h" /* AVK_SCORE_FEATURES */
#include "vulkan/vk_internal.h"
#include "vulkan/vk_candidates.h"

#include <stdio.h>
#include <string.h>

attnvk_status avk_vk_init(int *count);
void avk_vk_shutdown(void);
attnvk_status avk_vk_open(int device, avk_bdev **out);
void avk_vk_close(avk_bdev *dev);
attnvk_status avk_vk_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out);
void avk_vk_release(avk_bdev *dev, avk_bbuf *buf);
attnvk_status avk_vk_upload(avk_bdev *dev, avk_bbuf *buf, size_t off, const void *src, size_t bytes);
attnvk_status avk_vk_download(avk_bdev *dev, avk_bbuf *buf, size_t off, void *dst, size_t bytes);
attnvk_status avk_vk_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                             avk_bkernel **out, attnvk_kernel_info *info);
attnvk_status avk_vk_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *device_ms);
void avk_vk_release_kernel(avk_bdev *dev, avk_bkernel *k);
attnvk_status avk_vk_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *device_ms);
attnvk_status avk_vk_read_bandwidth(avk_bdev *dev, double *gbps); /* vk_bandwidth.c */
attnvk_status avk_vk_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out); /* vk_peak.c */
attnvk_status avk_vk_merge(avk_bdev *dev, const avk_merge_args *a);                      /* vk_merge.c */

static int vk_implementations(avk_bdev *dev, attnvk_impl_info *out, int max)
{
    (void)dev;
    if (max < 1) return 1;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "attnvk");
    out->fused = 1;
    out->available = 1;
    /* every body reads K/V through the prelude's hooks (shaders/flash_common.glsl) */
    out->features = ATTNVK_FEATURE_PAGED | ATTNVK_FEATURE_RAGGED | ATTNVK_FEATURE_KV_Q8_0 | ATTNVK_FEATURE_KV_Q4_0 |
                    ATTNVK_FEATURE_KV_FP8 | /* quantized: the scalar and decode bodies (vk_variants.c routes them) */
                    AVK_SCORE_FEATURES |    /* softcap, windows, ALiBi, sinks, masks, top-left: every body */
                    ATTNVK_FEATURE_HEAD_DIM_V | /* Dk != Dv: every body (AVK_DV, specialization constant 14) */
                    ATTNVK_FEATURE_POSITION_OFFSET | /* the prelude's i' (ring attention's blocks) */
                    ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED; /* scalar and rs bodies (vk_variants.c) */
    return 1;
}

/* vk_variant_names in vk_variants.c; the -emu ones emulate cooperative matrices (tests) */
static const char *const vk_variants[] = {"scalar", "f16", "decode", "decode-nv-rs", "coopmat-nv", "coopmat-nv-rs",
                                          "coopmat-khr", "coopmat-khr-rs", "decode-khr-rs", "coopmat-emu", "coopmat-rs-emu",
                                          "decode-rs-emu", NULL};

const attnvk_backend avk_backend_vulkan = {
    .api = ATTNVK_API_VULKAN,
    .init = avk_vk_init,
    .describe = vk_describe,
    .open = avk_vk_open,
    .close = avk_vk_close,
    .alloc = avk_vk_alloc,
    .release = avk_vk_release,
    .upload = avk_vk_upload,
    .download = avk_vk_download,
    .implementations = vk_implementations,
    .prepare = avk_vk_prepare,
    .dispatch = avk_vk_dispatch,
    .release_kernel = avk_vk_release_kernel,
    .shutdown = avk_vk_shutdown,
    .variants = vk_variants,
    .read_bandwidth = avk_vk_read_bandwidth,
    .measure_peak = avk_vk_measure_peak,
    .wrap = avk_vk_wrap,
    .native = avk_vk_native,
    .wait = vk_wait_pending,
    .tuning_candidates = vk_tuning_candidates,
    .backward = avk_vk_backward, /* vk_backward.c */
    .merge = avk_vk_merge,
};
