/* Achievable read bandwidth of an OpenCL device (opencl/read_bandwidth.cl):
 * one warm-up, then the best of several runs by profiling events. GPUs stream
 * up to 1 GiB (far past any L2); CPU devices (PoCL) 256 MiB, past the host's
 * last-level cache and still well under a second. */
#include "opencl/cl_bandwidth.h"
#include "core/embedded.h"
#include "opencl/cl_device.h"
#include "opencl/cl_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_cl_src_read_bandwidth)

enum { BW_RUNS = 5, BW_MAX_LOCAL = 256 };

static size_t buffer_bytes(const avk_cl_caps *caps)
{
    uint64_t bytes = (uint64_t)((caps->type & CL_DEVICE_TYPE_CPU) ? 256 : 1024) << 20;
    if (caps->max_alloc && bytes > caps->max_alloc) bytes = caps->max_alloc;
    if (caps->global_mem && bytes > caps->global_mem / 4) bytes = caps->global_mem / 4;
    return (size_t)bytes & ~(size_t)0xffff;
}

/* Writes the buffer once on CPU devices: never-written host memory is the
 * kernel's shared zero page, which would be read from cache, not from memory. */
static attnvk_status fill(avk_bdev *dev, cl_mem buf, size_t bytes)
{
    void *pattern = malloc(bytes);
    if (!pattern) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory for %zu bytes", bytes);
    memset(pattern, 0x5a, bytes);
    cl_int err = avk_cl.EnqueueWriteBuffer(dev->queue, buf, CL_TRUE, 0, bytes, pattern, 0, NULL, NULL);
    free(pattern);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clEnqueueWriteBuffer(read-bandwidth buffer)");
}

static attnvk_status build(avk_bdev *dev, int contiguous, cl_program *program, cl_kernel *kernel)
{
    const char *text = (const char *)avk_cl_src_read_bandwidth;
    size_t length = avk_cl_src_read_bandwidth_size;
    cl_int err = CL_SUCCESS;
    *program = avk_cl.CreateProgramWithSource(dev->context, 1, &text, &length, &err);
    if (!*program || err != CL_SUCCESS) return avk_cl_fail(err, "clCreateProgramWithSource(read bandwidth)");
    err = avk_cl.BuildProgram(*program, 1, &dev->device, contiguous ? "-DAVK_CONTIGUOUS" : "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[1024] = "";
        avk_cl.GetProgramBuildInfo(*program, dev->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        return avk_fail(ATTNVK_ERROR_COMPILE, "read-bandwidth kernel: clBuildProgram %s: %s", avk_cl_error_name(err),
                        log);
    }
    *kernel = avk_cl.CreateKernel(*program, "avk_read_bandwidth", &err);
    return *kernel && err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clCreateKernel(avk_read_bandwidth)");
}

static attnvk_status time_runs(avk_bdev *dev, cl_kernel kernel, size_t global, size_t local, double *best_ms)
{
    *best_ms = 0;
    for (int run = 0; run <= BW_RUNS; ++run) { /* run 0 warms up */
        cl_event ev = NULL;
        cl_int err = avk_cl.EnqueueNDRangeKernel(dev->queue, kernel, 1, NULL, &global, &local, 0, NULL, &ev);
        if (err != CL_SUCCESS) return avk_cl_fail(err, "clEnqueueNDRangeKernel(avk_read_bandwidth)");
        double ms = 0;
        attnvk_status s = avk_cl_wait_timed(dev, ev, ev, &ms);
        avk_cl.ReleaseEvent(ev);
        if (s != ATTNVK_OK) return s;
        if (run > 0 && ms > 0 && (*best_ms == 0 || ms < *best_ms)) *best_ms = ms;
    }
    return *best_ms > 0 ? ATTNVK_OK : avk_fail(ATTNVK_ERROR_BACKEND, "read bandwidth: the events timed nothing");
}

attnvk_status avk_cl_read_bandwidth(avk_bdev *dev, double *gbps)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    size_t bytes = buffer_bytes(&dev->caps);
    size_t local = dev->caps.max_workgroup < BW_MAX_LOCAL ? dev->caps.max_workgroup : BW_MAX_LOCAL;
    int is_cpu = (dev->caps.type & CL_DEVICE_TYPE_CPU) != 0;
    size_t groups = (size_t)(dev->caps.compute_units > 0 ? dev->caps.compute_units : 8) * (is_cpu ? 2 : 8);
    size_t global = groups * local;
    cl_program program = NULL;
    cl_kernel kernel = NULL;
    cl_mem src = NULL, out = NULL;
    attnvk_status s = build(dev, is_cpu, &program, &kernel);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, bytes, "read-bandwidth buffer", &src);
    if (s == ATTNVK_OK && is_cpu) s = fill(dev, src, bytes);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, groups * sizeof(cl_uint), "read-bandwidth output", &out);
    if (s == ATTNVK_OK) {
        cl_ulong vectors = bytes / 16;
        cl_int err = avk_cl.SetKernelArg(kernel, 0, sizeof src, &src);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(kernel, 1, sizeof vectors, &vectors);
        if (err == CL_SUCCESS) err = avk_cl.SetKernelArg(kernel, 2, sizeof out, &out);
        if (err != CL_SUCCESS) s = avk_cl_fail(err, "clSetKernelArg(avk_read_bandwidth)");
    }
    double best_ms = 0;
    if (s == ATTNVK_OK) s = time_runs(dev, kernel, global, local, &best_ms);
    if (s == ATTNVK_OK) *gbps = (double)bytes / (best_ms * 1e-3) / 1e9;
    if (out) avk_cl.ReleaseMemObject(out);
    if (src) avk_cl.ReleaseMemObject(src);
    if (kernel) avk_cl.ReleaseKernel(kernel);
    if (program) avk_cl.ReleaseProgram(program);
    return s;
}
