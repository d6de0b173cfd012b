/* HIP devices: loading the runtime, describing and opening devices, buffers,
 * error mapping and event timing. Kernels are in hip_flash.c / hip_rocblas.c. */
#include "core/driver_version.h"
#include "hip/hip_device.h"
#include "hip/hip_flash.h"
#include "hip/hip_kernels.h"
#include "hip/hip_merge.h"
#include "hip/hip_rocblas.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const avk_hip *hip;

attnvk_status avk_hip_check(avk_hip_device *dev, hipError_t e, const char *what)
{
    if (e == hipSuccess) return ATTNVK_OK;
    char text[256];
    avk_hip_error_text(hip, e, text, sizeof text);
    switch (e) {
    case hipErrorOutOfMemory:
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: %s", what, text);
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
        if (dev) dev->lost = 1;
        return avk_fail(ATTNVK_ERROR_DEVICE_LOST,
                        "%s: %s (the HIP device is now unusable; close it and restart the process)", what, text);
    default:
        return avk_fail(ATTNVK_ERROR_BACKEND, "%s: %s", what, text);
    }
}

attnvk_status avk_hip_use(avk_hip_device *dev)
{
    if (dev->lost)
        return avk_fail(ATTNVK_ERROR_DEVICE_LOST, "HIP device %d was lost earlier (kernel fault); it is unusable",
                        dev->ordinal);
    return avk_hip_check(dev, dev->hip->hipSetDevice(dev->ordinal), "hipSetDevice");
}

attnvk_status avk_hip_time_begin(avk_hip_device *dev)
{
    return avk_hip_check(dev, dev->hip->hipEventRecord(dev->start, dev->stream), "hipEventRecord");
}

attnvk_status avk_hip_time_end(avk_hip_device *dev, double *device_ms)
{
    attnvk_status s = avk_hip_check(dev, dev->hip->hipEventRecord(dev->stop, dev->stream), "hipEventRecord");
    if (s == ATTNVK_OK) s = avk_hip_check(dev, dev->hip->hipEventSynchronize(dev->stop), "kernel execution");
    float ms = 0;
    if (s == ATTNVK_OK)
        s = avk_hip_check(dev, dev->hip->hipEventElapsedTime(&ms, dev->start, dev->stop), "hipEventElapsedTime");
    if (device_ms) *device_ms = s == ATTNVK_OK ? ms : 0;
    return s;
}

void avk_hip_arch_base(const char *gcn_arch_name, char *out, size_t n)
{
    size_t len = strcspn(gcn_arch_name, ":");
    if (len >= n) len = n - 1;
    memcpy(out, gcn_arch_name, len);
    out[len] = '\0';
}

int avk_hip_matrix_units(const char *arch)
{
    if (strncmp(arch, "gfx908", 6) == 0 || strncmp(arch, "gfx90a", 6) == 0 || strncmp(arch, "gfx94", 5) == 0 ||
        strncmp(arch, "gfx95", 5) == 0)
        return 1;
    if (strncmp(arch, "gfx11", 5) == 0 || strncmp(arch, "gfx12", 5) == 0) return 2;
    return 0;
}

attnvk_status avk_hip_init(int *count)
{
    *count = 0;
    hip = avk_hip_load();
    if (!hip) return ATTNVK_ERROR_UNAVAILABLE;
    char text[256];
    hipError_t e = hip->hipInit(0);
    /* hipInit reports a missing GPU as an invalid device; the count says it plainly */
    int n = 0;
    hipError_t ec = hip->hipGetDeviceCount(&n);
    if (ec != hipSuccess)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "no AMD GPU: hipGetDeviceCount failed: %s%s",
                        avk_hip_error_text(hip, ec, text, sizeof text),
                        e != hipSuccess ? " (no /dev/kfd or ROCm-capable GPU)" : "");
    if (n == 0) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the HIP runtime (%s) reports no devices", hip->library);
    *count = n;
    return ATTNVK_OK;
}

static void format_hip_version(int v, char *out, size_t n)
{
    /* HIP_VERSION = major * 10^7 + minor * 10^5 + patch */
    snprintf(out, n, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

attnvk_status avk_hip_describe(int ordinal, attnvk_device_info *info)
{
    hipDeviceProp_t props;
    memset(&props, 0, sizeof props);
    attnvk_status s = avk_hip_check(NULL, hip->getDeviceProperties(&props, ordinal), "hipGetDeviceProperties");
    if (s != ATTNVK_OK) return s;
    snprintf(info->name, sizeof info->name, "%s", props.name);
    snprintf(info->vendor, sizeof info->vendor, "AMD");
    info->vendor_id = 0x1002;
    info->type = props.integrated ? ATTNVK_DEVICE_INTEGRATED : ATTNVK_DEVICE_DISCRETE;
    int version = 0;
    char text[32];
    /* the amdgpu kernel driver; hipDriverGetVersion is the HIP API level, like the runtime's */
    avk_amdgpu_driver_version(&avk_driver_sources_system, info->driver_version, sizeof info->driver_version);
    if (hip->hipRuntimeGetVersion(&version) == hipSuccess) {
        format_hip_version(version, text, sizeof text);
        snprintf(info->api_version, sizeof info->api_version, "HIP %.16s (%.40s)", text, hip->library);
    }
    avk_hip_arch_base(props.gcnArchName, info->architecture, sizeof info->architecture);
    info->memory_bytes = props.totalGlobalMem;
    info->compute_units = props.multiProcessorCount;
    info->subgroup_sizes[0] = props.warpSize; /* 64 on CDNA/GCN, 32 on RDNA */
    info->shared_memory_per_group = props.sharedMemPerBlock;
    info->max_workgroup_size = props.maxThreadsPerBlock;
    info->fp16 = 1; /* every gfx9+ target has packed f16 */
    info->bf16 = 1; /* bf16 is converted in registers; MFMA/WMMA take it natively */
    info->cooperative_matrix = avk_hip_matrix_units(info->architecture) != 0;
    if (hip->hipDeviceGetUuid) {
        hipUUID uuid;
        hipDevice_t d = 0;
        if (hip->hipDeviceGet(&d, ordinal) == hipSuccess && hip->hipDeviceGetUuid(&uuid, d) == hipSuccess) {
            memcpy(info->uuid, uuid.bytes, ATTNVK_UUID_SIZE);
            info->has_uuid = 1;
        }
    }
    avk_hip_default_variant(info, info->default_variant, sizeof info->default_variant);
    return ATTNVK_OK;
}

attnvk_status avk_hip_open(int ordinal, avk_bdev **out)
{
    avk_hip_device *dev = calloc(1, sizeof *dev);
    if (!dev) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    dev->hip = hip;
    dev->ordinal = ordinal;
    attnvk_status s = avk_hip_describe(ordinal, &dev->info);
    if (s == ATTNVK_OK) s = avk_hip_use(dev);
    if (s == ATTNVK_OK) s = avk_hip_check(dev, hip->hipStreamCreate(&dev->stream), "hipStreamCreate");
    if (s == ATTNVK_OK) s = avk_hip_check(dev, hip->hipEventCreate(&dev->start), "hipEventCreate");
    if (s == ATTNVK_OK) s = avk_hip_check(dev, hip->hipEventCreate(&dev->stop), "hipEventCreate");
    if (s != ATTNVK_OK) {
        avk_hip_close(dev);
        return s;
    }
    *out = dev;
    return ATTNVK_OK;
}

void avk_hip_close(avk_bdev *dev)
{
    if (!dev) return;
    if (!dev->lost) hip->hipSetDevice(dev->ordinal);
    avk_hip_rocblas_close(dev);
    avk_hip_flash_close(dev);
    avk_hip_merge_release(dev);
    if (dev->stop) hip->hipEventDestroy(dev->stop);
    if (dev->start) hip->hipEventDestroy(dev->start);
    if (dev->stream) hip->hipStreamDestroy(dev->stream);
    free(dev);
}

attnvk_status avk_hip_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out)
{
    attnvk_status s = avk_hip_use(dev);
    if (s != ATTNVK_OK) return s;
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    char what[64];
    snprintf(what, sizeof what, "hipMalloc(%zu bytes)", bytes);
    s = avk_hip_check(dev, hip->hipMalloc(&b->ptr, bytes), what);
    if (s != ATTNVK_OK) {
        free(b);
        return s;
    }
    b->size = bytes;
    *out = b;
    return ATTNVK_OK;
}

void avk_hip_release(avk_bdev *dev, avk_bbuf *buf)
{
    if (!buf) return;
    if (!buf->borrowed && !dev->lost && hip->hipSetDevice(dev->ordinal) == hipSuccess) hip->hipFree(buf->ptr);
    free(buf);
}

attnvk_status avk_hip_upload(avk_bdev *dev, avk_bbuf *buf, size_t offset, const void *src, size_t bytes)
{
    attnvk_status s = avk_hip_use(dev);
    if (s != ATTNVK_OK) return s;
    return avk_hip_check(dev, hip->hipMemcpyHtoD((char *)buf->ptr + offset, (void *)src, bytes), "hipMemcpyHtoD");
}

attnvk_status avk_hip_download(avk_bdev *dev, avk_bbuf *buf, size_t offset, void *dst, size_t bytes)
{
    attnvk_status s = avk_hip_use(dev);
    if (s != ATTNVK_OK) return s;
    return avk_hip_check(dev, hip->hipMemcpyDtoH(dst, (char *)buf->ptr + offset, bytes), "hipMemcpyDtoH");
}

/* The native kernels load 16 bytes at a time. */
enum { HIP_WRAP_ALIGNMENT = 16 };

attnvk_status avk_hip_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out)
{
    (void)dev;
    char *ptr = (char *)ext->handle + ext->offset;
    if ((uintptr_t)ptr % HIP_WRAP_ALIGNMENT)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: hip address %p (handle + offset %zu) is not %d-byte aligned",
                        (void *)ptr, ext->offset, HIP_WRAP_ALIGNMENT);
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    b->ptr = ptr;
    b->size = ext->bytes;
    b->borrowed = 1;
    *out = b;
    return ATTNVK_OK;
}

attnvk_status avk_hip_native(avk_bdev *dev, attnvk_native_handles *out)
{
    out->wrap_alignment = HIP_WRAP_ALIGNMENT;
    out->hip_device = dev->ordinal;
    out->hip_stream = (void *)dev->stream;
    return ATTNVK_OK;
}

attnvk_status avk_hip_wait(avk_bdev *dev)
{
    attnvk_status s = avk_hip_use(dev);
    return s != ATTNVK_OK ? s : avk_hip_check(dev, hip->hipStreamSynchronize(dev->stream), "async run");
}

void avk_hip_shutdown(void)
{
    avk_hip_rocblas_unload();
    avk_hip_loader_unload();
    hip = NULL;
}
