/* The OpenCL backend: libOpenCL.so.1 through dlopen, every platform's
 * devices, kernels built per device at run time (see cl_flash.c) and the
 * CLBlast baseline (cl_clblast.c). */
#include "core/backend.h"
#include "core/kernel_args.h" /* avk_gqa_pack */
#include "core/kv_cache.h" /* AVK_SCORE_FEATURES */
#include "opencl/cl_bandwidth.h"
#include "opencl/cl_peak.h"
#include "opencl/cl_kernels.h"
#include "opencl/cl_merge.h"
#include "opencl/cl_program.h"
#include "opencl/cl_tuning.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static attnvk_status cl_init(int *count)
{
    *count = 0;
    attnvk_status s = avk_cl_load();
    if (s != ATTNVK_OK) return s;
    return avk_cl_enumerate(count);
}

static attnvk_status cl_describe(int device, attnvk_device_info *info)
{
    avk_cl_caps caps;
    cl_device_id id = avk_cl_device_at(device);
    avk_cl_query_caps(id, &caps);
    avk_cl_fill_info(&caps, id, info);
    return ATTNVK_OK;
}

static void cl_close(avk_bdev *dev)
{
    if (!dev) return;
    avk_cl_merge_release(dev);
    avk_cl_release_programs(dev);
    if (dev->queue) avk_cl.ReleaseCommandQueue(dev->queue);
    if (dev->context) avk_cl.ReleaseContext(dev->context);
    free(dev);
}

static attnvk_status cl_open(int device, avk_bdev **out)
{
    avk_bdev *dev = calloc(1, sizeof *dev);
    if (!dev) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    dev->index = device;
    dev->device = avk_cl_device_at(device);
    avk_cl_query_caps(dev->device, &dev->caps);
    avk_cl_fill_info(&dev->caps, dev->device, &dev->info);
    cl_int err = CL_SUCCESS;
    dev->context = avk_cl.CreateContext(NULL, 1, &dev->device, NULL, NULL, &err);
    if (!dev->context || err != CL_SUCCESS) {
        cl_close(dev);
        return avk_cl_fail(err, "clCreateContext");
    }
    dev->queue = avk_cl.CreateCommandQueue(dev->context, dev->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!dev->queue || err != CL_SUCCESS) {
        cl_close(dev);
        return avk_cl_fail(err, "clCreateCommandQueue (profiling)");
    }
    *out = dev;
    return ATTNVK_OK;
}

static attnvk_status cl_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = avk_cl_create_buffer(dev, bytes, "buffer", &b->mem);
    if (s != ATTNVK_OK) {
        free(b);
        return s;
    }
    b->size = bytes;
    *out = b;
    return ATTNVK_OK;
}

static void cl_release(avk_bdev *dev, avk_bbuf *buf)
{
    (void)dev;
    if (!buf) return;
    avk_cl.ReleaseMemObject(buf->mem);
    free(buf);
}

static attnvk_status cl_upload(avk_bdev *dev, avk_bbuf *buf, size_t off, const void *src, size_t bytes)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    cl_int err = avk_cl.EnqueueWriteBuffer(dev->queue, buf->mem, CL_TRUE, off, bytes, src, 0, NULL, NULL);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clEnqueueWriteBuffer");
}

static attnvk_status cl_download(avk_bdev *dev, avk_bbuf *buf, size_t off, void *dst, size_t bytes)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    cl_int err = avk_cl.EnqueueReadBuffer(dev->queue, buf->mem, CL_TRUE, off, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clEnqueueReadBuffer");
}

static int cl_implementations(avk_bdev *dev, attnvk_impl_info *out, int max)
{
    (void)dev;
    if (max >= 1) {
        memset(&out[0], 0, sizeof out[0]);
        strcpy(out[0].name, "attnvk");
        out[0].fused = 1;
        out[0].available = 1;
        /* every body (tiled, mma, mma-decode) runs them all through the contract's
         * hooks; a head dim a body cannot hold goes to the next (avk_cl_configure) */
        out[0].features = ATTNVK_FEATURE_PAGED | ATTNVK_FEATURE_RAGGED | ATTNVK_FEATURE_KV_Q8_0 |
                          ATTNVK_FEATURE_KV_Q4_0 | ATTNVK_FEATURE_KV_FP8 | AVK_SCORE_FEATURES |
                          ATTNVK_FEATURE_HEAD_DIM_V | ATTNVK_FEATURE_POSITION_OFFSET |
                          ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED; /* the tiled body (cl_tuning.c) */
    }
    if (max >= 2) {
        const char *why = "";
        memset(&out[1], 0, sizeof out[1]);
        strcpy(out[1].name, "clblast");
        out[1].fused = 0;
        out[1].available = avk_clblast_available(&why);
        /* the unfused softmax (opencl/softmax.cl) applies every score modification;
         * P V's GEMM takes V's own head dim */
        out[1].features = AVK_SCORE_FEATURES | ATTNVK_FEATURE_HEAD_DIM_V;
        strncpy(out[1].reason, why, sizeof out[1].reason - 1);
    }
    return 2;
}

static void cl_release_kernel(avk_bdev *dev, avk_bkernel *k)
{
    (void)dev;
    if (!k) return;
    if (k->main) avk_cl.ReleaseKernel(k->main);
    if (k->reduce) avk_cl.ReleaseKernel(k->reduce);
    if (k->timestamp) avk_cl.ReleaseKernel(k->timestamp);
    if (k->bwd_rows) avk_cl.ReleaseKernel(k->bwd_rows);
    if (k->bwd_sinks) avk_cl.ReleaseKernel(k->bwd_sinks);
    avk_cl_backward_release(k->bwd);
    cl_mem mems[] = {k->opart, k->lsepart, k->scores, k->dummy, k->bwd_scores, k->bwd_dp, k->bwd_share};
    for (size_t i = 0; i < sizeof mems / sizeof *mems; ++i)
        if (mems[i]) avk_cl.ReleaseMemObject(mems[i]);
    free(k);
}

static attnvk_status cl_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                avk_bkernel **out, attnvk_kernel_info *info)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    const char *impl = opts->implementation ? opts->implementation : "attnvk";
    int clblast = strcmp(impl, "clblast") == 0;
    if (!clblast && strcmp(impl, "attnvk") != 0)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the opencl API has no '%s' implementation (attnvk, clblast)", impl);
    avk_bkernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    k->p = *p;
    k->write_lse = opts->write_lse;
    attnvk_status s = clblast ? avk_clblast_prepare(dev, p, opts, k, info) : avk_cl_flash_prepare(dev, p, opts, k, info);
    if (s != ATTNVK_OK) {
        cl_release_kernel(dev, k);
        return s;
    }
    *out = k;
    return ATTNVK_OK;
}

static attnvk_status cl_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *ms)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    if (k->is_clblast && a->stream)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "clblast runs on attnvk's queue only (no caller's cl_command_queue)");
    /* an async clblast run completes before returning: allowed */
    return k->is_clblast ? avk_clblast_dispatch(dev, k, a, ms) : avk_cl_flash_dispatch(dev, k, a, ms);
}

/* attnvk_kernel_backward: attnvk's kernel (cl_backward.c), or CLBlast's unfused one (cl_clblast_backward.c) */
static attnvk_status cl_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *ms)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    if (k->is_clblast) return avk_clblast_backward(dev, k, a, ms);
    return avk_cl_backward(dev, k, &k->bwd, a, ms);
}

static void cl_shutdown(void)
{
    avk_clblast_unload();
    avk_cl_forget_devices();
    /* libOpenCL stays loaded: ICDs register atexit handlers in the process */
}

/* the names avk_cl_configure accepts; the -emu ones emulate mma.sync (tests) */
static const char *const cl_variants[] = {"tiled-f32",  "tiled-f16",      "mma-f16", "mma-f16-emu",
                                          "mma-decode", "mma-decode-emu", NULL};

/* `attnvk tune`: configurations of attnvk's kernel for p (opencl/cl_tuning.c) */
static int cl_tuning_candidates(avk_bdev *dev, const attnvk_problem *p, avk_tuning *out, int max)
{
    return avk_cl_tuning_candidates(&dev->caps, &dev->info, p, avk_gqa_pack(p, p->seq_q, 0), out, max);
}

const attnvk_backend avk_backend_opencl = {
    .api = ATTNVK_API_OPENCL,
    .init = cl_init,
    .describe = cl_describe,
    .open = cl_open,
    .close = cl_close,
    .alloc = cl_alloc,
    .release = cl_release,
    .upload = cl_upload,
    .download = cl_download,
    .implementations = cl_implementations,
    .prepare = cl_prepare,
    .dispatch = cl_dispatch,
    .release_kernel = cl_release_kernel,
    .shutdown = cl_shutdown,
    .variants = cl_variants,
    .read_bandwidth = avk_cl_read_bandwidth,
    .measure_peak = avk_cl_measure_peak,
    .wrap = avk_cl_wrap,
    .native = avk_cl_native,
    .wait = avk_cl_wait,
    .tuning_candidates = cl_tuning_candidates,
    .backward = cl_backward,
    .merge = avk_cl_merge,
};
