/* CUDA devices: loading the driver, describing and opening devices, buffers,
 * error mapping and event timing. Kernels are in cuda_backend.c. */
#include "cuda/cuda_internal.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_merge.h"
#include "core/driver_version.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const avk_cuda_driver *cu;
static int device_count;
/* the kernel driver (580.159.04), once per process: cuDriverGetVersion gives only the CUDA API level */
static char kernel_driver[64];

attnvk_status avk_cuda_check(avk_cuda_device *dev, CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return ATTNVK_OK;
    char text[256];
    avk_cuda_result_text(cu, r, text, sizeof text);
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: %s", what, text);
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        if (dev) dev->lost = 1;
        return avk_fail(ATTNVK_ERROR_DEVICE_LOST,
                        "%s: %s (the CUDA context is now unusable; close the device and restart the process)",
                        what, text);
    default:
        return avk_fail(ATTNVK_ERROR_BACKEND, "%s: %s", what, text);
    }
}

attnvk_status avk_cuda_push(avk_cuda_device *dev)
{
    if (dev->lost)
        return avk_fail(ATTNVK_ERROR_DEVICE_LOST,
                        "CUDA device %d was lost earlier (illegal access); its context is unusable", dev->ordinal);
    return avk_cuda_check(dev, dev->cu->cuCtxPushCurrent(dev->context), "cuCtxPushCurrent");
}

void avk_cuda_pop(avk_cuda_device *dev)
{
    CUcontext popped;
    dev->cu->cuCtxPopCurrent(&popped);
}

attnvk_status avk_cuda_time_begin(avk_cuda_device *dev)
{
    return avk_cuda_check(dev, dev->cu->cuEventRecord(dev->start, dev->stream), "cuEventRecord");
}

attnvk_status avk_cuda_time_end(avk_cuda_device *dev, double *device_ms)
{
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuEventRecord(dev->stop, dev->stream), "cuEventRecord");
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuEventSynchronize(dev->stop), "kernel execution");
    float ms = 0;
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuEventElapsedTime(&ms, dev->start, dev->stop), "cuEventElapsedTime");
    if (device_ms) *device_ms = s == ATTNVK_OK ? ms : 0;
    return s;
}

attnvk_status avk_cuda_init(int *count)
{
    *count = 0;
    cu = avk_cuda_driver_load();
    if (!cu) return ATTNVK_ERROR_UNAVAILABLE;
    CUresult r = cu->cuInit(0);
    if (r != CUDA_SUCCESS) {
        char text[256];
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "cuInit failed: %s", avk_cuda_result_text(cu, r, text, sizeof text));
    }
    r = cu->cuDeviceGetCount(&device_count);
    if (r != CUDA_SUCCESS) {
        char text[256];
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "cuDeviceGetCount failed: %s",
                        avk_cuda_result_text(cu, r, text, sizeof text));
    }
    if (device_count == 0) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the CUDA driver reports no devices");
    if (!kernel_driver[0] && !avk_nvidia_driver_version(&avk_driver_sources_system, kernel_driver, sizeof kernel_driver))
        snprintf(kernel_driver, sizeof kernel_driver, "unknown"); /* neither NVML nor /proc/driver/nvidia */
    *count = device_count;
    return ATTNVK_OK;
}

static int attribute(CUdevice d, CUdevice_attribute a)
{
    int v = 0;
    return cu->cuDeviceGetAttribute(&v, a, d) == CUDA_SUCCESS ? v : 0;
}

attnvk_status avk_cuda_describe(int ordinal, attnvk_device_info *info)
{
    CUdevice d;
    attnvk_status s = avk_cuda_check(NULL, cu->cuDeviceGet(&d, ordinal), "cuDeviceGet");
    if (s != ATTNVK_OK) return s;
    cu->cuDeviceGetName(info->name, (int)sizeof info->name, d);
    snprintf(info->vendor, sizeof info->vendor, "NVIDIA");
    info->vendor_id = 0x10de;
    info->type = attribute(d, CU_DEVICE_ATTRIBUTE_INTEGRATED) ? ATTNVK_DEVICE_INTEGRATED : ATTNVK_DEVICE_DISCRETE;
    int version = 0;
    cu->cuDriverGetVersion(&version);
    snprintf(info->driver_version, sizeof info->driver_version, "%s", kernel_driver);
    snprintf(info->api_version, sizeof info->api_version, "CUDA %d.%d", version / 1000, version % 1000 / 10);
    int major = attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int minor = attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    snprintf(info->architecture, sizeof info->architecture, "sm_%d%d", major, minor);
    size_t mem = 0;
    if (cu->cuDeviceTotalMem(&mem, d) == CUDA_SUCCESS) info->memory_bytes = mem;
    info->compute_units = attribute(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info->subgroup_sizes[0] = attribute(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    info->shared_memory_per_group = (uint64_t)attribute(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    info->max_workgroup_size = attribute(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    info->fp16 = major > 5 || (major == 5 && minor >= 3);
    info->bf16 = major >= 8;            /* bf16 mma.sync */
    info->cooperative_matrix = major >= 7; /* tensor cores; attnvk's mma path needs sm_80 */
    CUuuid uuid;
    if (cu->cuDeviceGetUuid(&uuid, d) == CUDA_SUCCESS) {
        memcpy(info->uuid, uuid.bytes, ATTNVK_UUID_SIZE);
        info->has_uuid = 1;
    }
    avk_cuda_default_variant(info, info->default_variant, sizeof info->default_variant);
    return ATTNVK_OK;
}

static void destroy_device(avk_cuda_device *dev)
{
    if (dev->context) {
        int current = !dev->lost && cu->cuCtxPushCurrent(dev->context) == CUDA_SUCCESS;
        avk_cuda_modules_release(dev); /* unloads only while the context is usable */
        avk_cuda_merge_release(dev);
        if (current) {
            if (dev->start) cu->cuEventDestroy(dev->start);
            if (dev->stop) cu->cuEventDestroy(dev->stop);
            if (dev->stream) cu->cuStreamDestroy(dev->stream);
            avk_cuda_pop(dev);
        }
        cu->cuDevicePrimaryCtxRelease(dev->device);
    }
    free(dev);
}

attnvk_status avk_cuda_open(int ordinal, avk_bdev **out)
{
    avk_cuda_device *dev = calloc(1, sizeof *dev);
    if (!dev) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    dev->cu = cu;
    dev->ordinal = ordinal;
    attnvk_status s = avk_cuda_check(NULL, cu->cuDeviceGet(&dev->device, ordinal), "cuDeviceGet");
    if (s == ATTNVK_OK)
        s = avk_cuda_check(NULL, cu->cuDevicePrimaryCtxRetain(&dev->context, dev->device), "cuDevicePrimaryCtxRetain");
    if (s != ATTNVK_OK) {
        dev->context = NULL;
        destroy_device(dev);
        return s;
    }
    s = avk_cuda_push(dev);
    if (s == ATTNVK_OK) {
        s = avk_cuda_check(dev, cu->cuStreamCreate(&dev->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        if (s == ATTNVK_OK) s = avk_cuda_check(dev, cu->cuEventCreate(&dev->start, CU_EVENT_DEFAULT), "cuEventCreate");
        if (s == ATTNVK_OK) s = avk_cuda_check(dev, cu->cuEventCreate(&dev->stop, CU_EVENT_DEFAULT), "cuEventCreate");
        avk_cuda_pop(dev);
    }
    if (s == ATTNVK_OK) s = avk_cuda_describe(ordinal, &dev->info);
    if (s != ATTNVK_OK) {
        destroy_device(dev);
        return s;
    }
    dev->cc_major = attribute(dev->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    dev->cc_minor = attribute(dev->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    dev->sm_count = attribute(dev->device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    dev->smem_optin = (size_t)attribute(dev->device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    dev->smem_per_sm = (size_t)attribute(dev->device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    cu->cuDriverGetVersion(&dev->driver_version);
    *out = dev;
    return ATTNVK_OK;
}

void avk_cuda_close(avk_bdev *dev)
{
    if (dev) destroy_device(dev);
}

attnvk_status avk_cuda_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out)
{
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = avk_cuda_push(dev);
    if (s == ATTNVK_OK) {
        CUresult r = cu->cuMemAlloc(&b->ptr, bytes);
        avk_cuda_pop(dev);
        if (r != CUDA_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "cuMemAlloc(%zu bytes)", bytes);
            s = avk_cuda_check(dev, r, what);
        }
    }
    if (s != ATTNVK_OK) {
        free(b);
        return s;
    }
    b->size = bytes;
    *out = b;
    return ATTNVK_OK;
}

void avk_cuda_release(avk_bdev *dev, avk_bbuf *buf)
{
    if (!buf) return;
    if (!buf->borrowed && !dev->lost && avk_cuda_push(dev) == ATTNVK_OK) {
        cu->cuMemFree(buf->ptr);
        avk_cuda_pop(dev);
    }
    free(buf);
}

attnvk_status avk_cuda_upload(avk_bdev *dev, avk_bbuf *buf, size_t off, const void *src, size_t bytes)
{
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_check(dev, cu->cuMemcpyHtoDAsync(buf->ptr + off, src, bytes, dev->stream), "cuMemcpyHtoDAsync");
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, cu->cuStreamSynchronize(dev->stream), "upload");
    avk_cuda_pop(dev);
    return s;
}

attnvk_status avk_cuda_download(avk_bdev *dev, avk_bbuf *buf, size_t off, void *dst, size_t bytes)
{
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_check(dev, cu->cuMemcpyDtoHAsync(dst, buf->ptr + off, bytes, dev->stream), "cuMemcpyDtoHAsync");
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, cu->cuStreamSynchronize(dev->stream), "download");
    avk_cuda_pop(dev);
    return s;
}

/* The native kernels load 16 bytes at a time (cp.async, vector loads). */
enum { CUDA_WRAP_ALIGNMENT = 16 };

attnvk_status avk_cuda_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out)
{
    (void)dev;
    const CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)ext->handle + ext->offset;
    if (ptr % CUDA_WRAP_ALIGNMENT)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "buffer wrap: cuda address 0x%llx (handle + offset %zu) is not %d-byte aligned",
                        (unsigned long long)ptr, ext->offset, CUDA_WRAP_ALIGNMENT);
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    b->ptr = ptr;
    b->size = ext->bytes;
    b->borrowed = 1;
    *out = b;
    return ATTNVK_OK;
}

attnvk_status avk_cuda_native(avk_bdev *dev, attnvk_native_handles *out)
{
    out->wrap_alignment = CUDA_WRAP_ALIGNMENT;
    out->cuda_device = (int)dev->device;
    out->cuda_context = (void *)dev->context;
    out->cuda_stream = (void *)dev->stream;
    return ATTNVK_OK;
}

attnvk_status avk_cuda_wait(avk_bdev *dev)
{
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_check(dev, cu->cuStreamSynchronize(dev->stream), "async run");
    avk_cuda_pop(dev);
    return s;
}

attnvk_status avk_cuda_check_stream(avk_bdev *dev, void *stream)
{
    if (!stream) return ATTNVK_OK;
    attnvk_status s = avk_cuda_push(dev); /* CU_STREAM_LEGACY / PER_THREAD answer the current context */
    if (s != ATTNVK_OK) return s;
    CUcontext ctx = NULL;
    CUresult r = cu->cuStreamGetCtx((CUstream)stream, &ctx);
    avk_cuda_pop(dev);
    if (r != CUDA_SUCCESS) return avk_cuda_check(dev, r, "run options: cuStreamGetCtx(stream)");
    if (ctx != dev->context)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "run options: the CUstream is not in the device's primary context (attnvk_device_native's "
                        "cuda_context)");
    return ATTNVK_OK;
}
