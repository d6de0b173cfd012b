/* `attnvk peak` on an OpenCL device (core/peak.h, opencl/peak.cl): copy
 * bandwidth, f32 and f16 (cl_khr_fp16) FMA, and on NVIDIA sm_80+ the tensor
 * cores through inline-PTX mma.sync m16n8k16, the path of the mma-f16 and
 * mma-decode bodies. Profiling events, the iteration count grown until one
 * run takes avk_peak_target_ms, best of a few runs. */
#include "opencl/cl_peak.h"
#include "core/embedded.h"
#include "core/peak.h"
#include "opencl/cl_device.h"
#include "opencl/cl_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_cl_src_peak)

enum { MAX_LOCAL = 256, MMA_LOCAL = 128, MMA_GROUPS_PER_CU = 8 };

static int is_cpu(const avk_bdev *dev) { return (dev->caps.type & CL_DEVICE_TYPE_CPU) != 0; }

typedef struct peak_kernel {
    cl_program program;
    cl_kernel kernel;
} peak_kernel;

static void release(peak_kernel *k)
{
    if (k->kernel) avk_cl.ReleaseKernel(k->kernel);
    if (k->program) avk_cl.ReleaseProgram(k->program);
}

static attnvk_status build(avk_bdev *dev, const char *options, const char *name, peak_kernel *k)
{
    const char *text = (const char *)avk_cl_src_peak;
    size_t length = avk_cl_src_peak_size;
    cl_int err = CL_SUCCESS;
    k->program = avk_cl.CreateProgramWithSource(dev->context, 1, &text, &length, &err);
    if (!k->program || err != CL_SUCCESS) return avk_cl_fail(err, "clCreateProgramWithSource(peak)");
    err = avk_cl.BuildProgram(k->program, 1, &dev->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[1024] = "";
        avk_cl.GetProgramBuildInfo(k->program, dev->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        return avk_fail(ATTNVK_ERROR_COMPILE, "peak kernel %s (%s): clBuildProgram %s: %s", name, options,
                        avk_cl_error_name(err), log);
    }
    k->kernel = avk_cl.CreateKernel(k->program, name, &err);
    return k->kernel && err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clCreateKernel(peak)");
}

typedef struct peak_run {
    avk_bdev *dev;
    cl_kernel kernel;
    size_t global, local;
    int iters_arg; /* the argument index of the loop count, -1: none */
} peak_run;

static attnvk_status run_once(void *ctx, uint32_t iters, double *ms)
{
    peak_run *r = ctx;
    if (r->iters_arg >= 0) {
        cl_uint n = iters;
        cl_int err = avk_cl.SetKernelArg(r->kernel, (cl_uint)r->iters_arg, sizeof n, &n);
        if (err != CL_SUCCESS) return avk_cl_fail(err, "clSetKernelArg(peak iterations)");
    }
    cl_event ev = NULL;
    cl_int err = avk_cl.EnqueueNDRangeKernel(r->dev->queue, r->kernel, 1, NULL, &r->global, &r->local, 0, NULL, &ev);
    if (err != CL_SUCCESS) return avk_cl_fail(err, "clEnqueueNDRangeKernel(peak)");
    attnvk_status s = avk_cl_wait_timed(r->dev, ev, ev, ms);
    avk_cl.ReleaseEvent(ev);
    return s;
}

static size_t local_size(const avk_bdev *dev)
{
    return dev->caps.max_workgroup < MAX_LOCAL ? dev->caps.max_workgroup : MAX_LOCAL;
}

static size_t group_count(const avk_bdev *dev)
{
    return (size_t)(dev->caps.compute_units > 0 ? dev->caps.compute_units : 8) * (is_cpu(dev) ? 2 : 8);
}

static attnvk_status fill(avk_bdev *dev, cl_mem buf, size_t bytes, unsigned char byte)
{
    void *pattern = malloc(bytes);
    if (!pattern) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for %zu bytes", bytes);
    memset(pattern, byte, bytes);
    cl_int err = avk_cl.EnqueueWriteBuffer(dev->queue, buf, CL_TRUE, 0, bytes, pattern, 0, NULL, NULL);
    free(pattern);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clEnqueueWriteBuffer(peak buffer)");
}

/* Two buffers of 512 MiB on a GPU (far past any L2), 64 MiB on a CPU device. */
static attnvk_status copy_peak(avk_bdev *dev, avk_peak_sample *out)
{
    uint64_t bytes = (uint64_t)(is_cpu(dev) ? 64 : 512) << 20;
    if (dev->caps.max_alloc && bytes > dev->caps.max_alloc) bytes = dev->caps.max_alloc;
    if (dev->caps.global_mem && bytes > dev->caps.global_mem / 8) bytes = dev->caps.global_mem / 8;
    bytes &= ~(uint64_t)0xffff;
    peak_kernel k = {0};
    cl_mem src = NULL, dst = NULL;
    peak_run r = {.dev = dev, .local = local_size(dev), .iters_arg = -1};
    r.global = group_count(dev) * r.local;
    attnvk_status s = build(dev, is_cpu(dev) ? "-DAVK_COPY -DAVK_CONTIGUOUS" : "-DAVK_COPY", "avk_peak_copy", &k);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, bytes, "peak copy source", &src);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, bytes, "peak copy destination", &dst);
    /* written once: never-written CPU memory is the shared zero page */
    if (s == ATTNVK_OK && is_cpu(dev)) s = fill(dev, src, bytes, 0x5a);
    if (s == ATTNVK_OK && is_cpu(dev)) s = fill(dev, dst, bytes, 0);
    if (s == ATTNVK_OK) {
        cl_ulong vectors = bytes / 16;
        cl_int err = avk_cl.SetKernelArg(k.kernel, 0, sizeof src, &src);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(k.kernel, 1, sizeof dst, &dst);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(k.kernel, 2, sizeof vectors, &vectors);
        if (err != CL_SUCCESS) s = avk_cl_fail(err, "clSetKernelArg(avk_peak_copy)");
    }
    r.kernel = k.kernel;
    uint32_t iters = 1;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(is_cpu(dev)), 1, &iters, &ms);
    if (s == ATTNVK_OK) out->value = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    if (dst) avk_cl.ReleaseMemObject(dst);
    if (src) avk_cl.ReleaseMemObject(src);
    release(&k);
    return s;
}

static attnvk_status fma_peak(avk_bdev *dev, int f16, avk_peak_sample *out)
{
    if (f16 && !dev->caps.khr_fp16)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s has no cl_khr_fp16", dev->caps.name);
    snprintf(out->path, sizeof out->path, "%s", f16 ? "half4 fma" : "float4 fma");
    peak_kernel k = {0};
    cl_mem res = NULL;
    peak_run r = {.dev = dev, .local = local_size(dev), .iters_arg = 1};
    r.global = group_count(dev) * r.local;
    attnvk_status s = build(dev, f16 ? "-DAVK_FMA -DAVK_F16" : "-DAVK_FMA", "avk_peak_fma", &k);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, r.global * sizeof(float), "peak FMA output", &res);
    if (s == ATTNVK_OK) {
        cl_float m = 0.5f, c = 0.25f; /* x = x * 0.5 + 0.25 settles at 0.5 */
        cl_uint n = 1;
        cl_int err = avk_cl.SetKernelArg(k.kernel, 0, sizeof res, &res);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(k.kernel, 1, sizeof n, &n);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(k.kernel, 2, sizeof m, &m);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(k.kernel, 3, sizeof c, &c);
        if (err != CL_SUCCESS) s = avk_cl_fail(err, "clSetKernelArg(avk_peak_fma)");
    }
    r.kernel = k.kernel;
    uint32_t iters = is_cpu(dev) ? 4 : 64;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(is_cpu(dev)), 1u << 24, &iters, &ms);
    /* a loop trip: 4 steps x 8 chains x 4 lanes of FMA, 2 FLOPs each */
    if (s == ATTNVK_OK) out->value = (double)r.global * iters * 4 * 8 * 4 * 2 / (ms * 1e-3) / 1e9;
    if (res) avk_cl.ReleaseMemObject(res);
    release(&k);
    return s;
}

static attnvk_status matrix_peak(avk_bdev *dev, avk_peak_sample *out)
{
    snprintf(out->path, sizeof out->path, "none");
    if (!avk_cl_has_mma(&dev->caps))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: OpenCL reaches matrix units only through inline-PTX mma.sync on "
                        "NVIDIA sm_80+", dev->caps.name);
    snprintf(out->path, sizeof out->path, "inline-PTX mma.sync m16n8k16 f16->f32");
    peak_kernel k = {0};
    cl_mem ab = NULL, res = NULL;
    peak_run r = {.dev = dev, .local = MMA_LOCAL, .iters_arg = 2};
    r.global = (size_t)(dev->caps.compute_units > 0 ? dev->caps.compute_units : 80) * MMA_GROUPS_PER_CU * MMA_LOCAL;
    attnvk_status s = build(dev, "-DAVK_MMA", "avk_peak_mma", &k);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, 32 * 6 * sizeof(cl_uint), "peak MMA operands", &ab);
    if (s == ATTNVK_OK) s = fill(dev, ab, 32 * 6 * sizeof(cl_uint), 0x3c); /* f16 0x3c3c, about 1.06 */
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, r.global * sizeof(float), "peak MMA output", &res);
    if (s == ATTNVK_OK) {
        cl_uint n = 1;
        cl_int err = avk_cl.SetKernelArg(k.kernel, 0, sizeof ab, &ab);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(k.kernel, 1, sizeof res, &res);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(k.kernel, 2, sizeof n, &n);
        if (err != CL_SUCCESS) s = avk_cl_fail(err, "clSetKernelArg(avk_peak_mma)");
    }
    r.kernel = k.kernel;
    uint32_t iters = 64;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(0), 1u << 24, &iters, &ms);
    /* a loop trip: 8 mma.sync m16n8k16 per warp, 2 FLOPs per MAC */
    if (s == ATTNVK_OK) out->value = (double)(r.global / 32) * iters * 8 * 16 * 8 * 16 * 2 / (ms * 1e-3) / 1e9;
    if (res) avk_cl.ReleaseMemObject(res);
    if (ab) avk_cl.ReleaseMemObject(ab);
    release(&k);
    return s;
}

attnvk_status avk_cl_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    switch (kind) {
    case AVK_PEAK_COPY: return copy_peak(dev, out);
    case AVK_PEAK_FMA_F32: return fma_peak(dev, 0, out);
    case AVK_PEAK_FMA_F16: return fma_peak(dev, 1, out);
    case AVK_PEAK_MATRIX: return matrix_peak(dev, out);
    default: return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown peak kind %d", kind);
    }
}
