/* The HIP backend's vtable: attnvk's flash kernel (hip_flash.c) and its
 * backward pass (hip_backward.c), and the unfused rocBLAS baseline
 * (hip_rocblas.c, its backward hip_rocblas_backward.c). Devices and
 * buffers: hip_device.c. */
#include "hip/hip_backward.h"
#include "hip/hip_device.h"
#include "hip/hip_flash.h"
#include "hip/hip_rocblas.h"
#include "hip/hip_kernels.h"
#include "hip/hip_merge.h"
#include "core/split_plan.h" /* avk_is_decode */

attnvk_status avk_hip_read_bandwidth(avk_bdev *dev, double *gbps); /* hip_bandwidth.c */
attnvk_status avk_hip_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out); /* hip_peak.c */

#include <stdlib.h>
#include <string.h>

struct avk_bkernel {
    avk_hip_flash_kernel *flash;     /* one of the two */
    avk_hip_rocblas_kernel *rocblas;
    avk_hip_bwd *bwd;                /* the flash kernel's backward, once asked for */
};

static int hip_implementations(avk_bdev *dev, attnvk_impl_info *out, int max)
{
    if (max >= 1) avk_hip_flash_describe(dev, &out[0]);
    if (max >= 2) avk_hip_rocblas_describe(dev, &out[1]);
    return 2;
}

static attnvk_status hip_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                 avk_bkernel **out, attnvk_kernel_info *info)
{
    const char *impl = o->implementation ? o->implementation : "attnvk";
    if (strcmp(impl, "attnvk") != 0 && strcmp(impl, "rocblas") != 0)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the hip API has no '%s' implementation (attnvk, rocblas)", impl);
    avk_bkernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = strcmp(impl, "rocblas") == 0 ? avk_hip_rocblas_prepare(dev, p, o, &k->rocblas, info)
                                                   : avk_hip_flash_prepare(dev, p, o, &k->flash, info);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    *out = k;
    return ATTNVK_OK;
}

static attnvk_status hip_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *device_ms)
{
    if (k->rocblas && a->stream)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "rocblas runs on attnvk's stream only (no caller's hipStream_t)");
    /* an async rocblas run completes before returning: allowed */
    return k->rocblas ? avk_hip_rocblas_dispatch(dev, k->rocblas, a, device_ms)
                      : avk_hip_flash_dispatch(dev, k->flash, a, device_ms);
}

static void hip_release_kernel(avk_bdev *dev, avk_bkernel *k)
{
    if (!k) return;
    if (k->rocblas) avk_hip_rocblas_release(dev, k->rocblas);
    avk_hip_backward_release(dev, k->bwd);
    if (k->flash) avk_hip_flash_release(dev, k->flash);
    free(k);
}

/* attnvk_kernel_backward: attnvk's kernel (hip_backward.c), or rocBLAS's unfused one (hip_rocblas_backward.c) */
static attnvk_status hip_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *device_ms)
{
    if (k->rocblas) return avk_hip_rocblas_backward(dev, k->rocblas, a, device_ms);
    return avk_hip_backward(dev, avk_hip_flash_native(k->flash), &k->bwd, a, device_ms);
}

/* what parse_variant in hip_tuning.c accepts */
static const char *const hip_variants[] = {"mma16", "mma16-qs", "simt", NULL};

/* `attnvk tune`: configurations of attnvk's kernel for p (hip/hip_tuning.c) */
static int hip_tuning_candidates(avk_bdev *dev, const attnvk_problem *p, avk_tuning *out, int max)
{
    return avk_hip_tuning_candidates(&dev->info, p, avk_is_decode(p), out, max);
}

const attnvk_backend avk_backend_hip = {
    .api = ATTNVK_API_HIP,
    .init = avk_hip_init,
    .describe = avk_hip_describe,
    .open = avk_hip_open,
    .close = avk_hip_close,
    .alloc = avk_hip_alloc,
    .release = avk_hip_release,
    .upload = avk_hip_upload,
    .download = avk_hip_download,
    .implementations = hip_implementations,
    .prepare = hip_prepare,
    .dispatch = hip_dispatch,
    .backward = hip_backward,
    .release_kernel = hip_release_kernel,
    .shutdown = avk_hip_shutdown,
    .variants = hip_variants,
    .read_bandwidth = avk_hip_read_bandwidth,
    .measure_peak = avk_hip_measure_peak,
    .wrap = avk_hip_wrap,
    .native = avk_hip_native,
    .wait = avk_hip_wait,
    .tuning_candidates = hip_tuning_candidates,
    .merge = avk_hip_merge,
};
