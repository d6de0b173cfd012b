/* Interop and asynchronous runs (issue #17): caller-owned memory wrapped as
 * buffers, the native handles of an opened device, runs that return without
 * waiting (on the device's queue or a caller's stream) and the wait. The
 * checks every API shares live here; each backend checks its alignment. */
#include "core/api_objects.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

attnvk_status attnvk_buffer_wrap(attnvk_device *dev, const attnvk_external_buffer *ext, attnvk_buffer **out)
{
    if (!dev || !ext || !out) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: NULL device, buffer or output");
    const char *api = attnvk_api_name(dev->info.api);
    if (ext->api != dev->info.api)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: the external buffer is %s memory; the device is %s",
                        (unsigned)ext->api < ATTNVK_API_COUNT ? attnvk_api_name(ext->api) : "unknown-API", api);
    if (!ext->handle) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: NULL %s handle", api);
    if (ext->memory && dev->info.api != ATTNVK_API_VULKAN)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: memory is Vulkan's VkDeviceMemory (NULL for %s)", api);
    if (ext->bytes == 0) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: bytes must be > 0");
    if (ext->offset > SIZE_MAX - ext->bytes)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: offset %zu + %zu bytes overflows", ext->offset,
                        ext->bytes);
    if (!dev->backend->wrap)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "buffer wrap: the %s backend cannot wrap external memory", api);
    attnvk_buffer *buf = calloc(1, sizeof *buf);
    if (!buf) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = dev->backend->wrap(dev->bdev, ext, &buf->bbuf);
    if (s != ATTNVK_OK) {
        free(buf);
        return s;
    }
    buf->dev = dev;
    buf->size = ext->bytes;
    buf->wrapped = 1;
    *out = buf;
    return ATTNVK_OK;
}

attnvk_status attnvk_device_native(attnvk_device *dev, attnvk_native_handles *out)
{
    if (!dev || !out) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "device native: NULL device or output");
    memset(out, 0, sizeof *out);
    out->api = dev->info.api;
    if (!dev->backend->native)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "device native: the %s backend has no native handles",
                        attnvk_api_name(dev->info.api));
    return dev->backend->native(dev->bdev, out);
}

void attnvk_run_options_init(attnvk_run_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
}

/* The options as this library knows them, whatever size the caller's header had. */
static attnvk_status read_run_options(const attnvk_run_options *in, attnvk_run_options *o)
{
    attnvk_run_options_init(o);
    if (!in) return ATTNVK_OK;
    if (in->struct_size < offsetof(attnvk_run_options, stream) + sizeof in->stream)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "run options: struct_size %zu is too small (call attnvk_run_options_init)", in->struct_size);
    memcpy(o, in, in->struct_size < sizeof *o ? in->struct_size : sizeof *o);
    return ATTNVK_OK;
}

attnvk_status attnvk_kernel_run_async(attnvk_kernel *k, const attnvk_tensors *t, const attnvk_run_options *opts)
{
    attnvk_run_options o;
    attnvk_status s = read_run_options(opts, &o);
    if (s != ATTNVK_OK) return s;
    if (!k) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "no kernel or tensors given");
    const attnvk_api api = k->dev->info.api;
    if (o.stream && api != ATTNVK_API_CUDA && api != ATTNVK_API_HIP && api != ATTNVK_API_OPENCL)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "run options: %s takes no stream (only cuda, hip and opencl do)",
                        attnvk_api_name(api));
    avk_dispatch args;
    s = avk_dispatch_fill(k, t, o.q_begin, o.q_count, 1, &args);
    if (s != ATTNVK_OK) return s;
    args.async = 1;
    args.stream = o.stream;
    double ms = 0;
    s = k->dev->backend->dispatch(k->dev->bdev, k->bkernel, &args, &ms);
    if (s == ATTNVK_OK && !o.stream) k->dev->async_pending = 1;
    return s;
}

attnvk_status attnvk_device_wait(attnvk_device *dev)
{
    if (!dev) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "device wait: NULL device");
    attnvk_status s = dev->backend->wait ? dev->backend->wait(dev->bdev) : ATTNVK_OK;
    dev->async_pending = 0;
    return s;
}

attnvk_status avk_device_settle(attnvk_device *dev)
{
    return dev && dev->async_pending ? attnvk_device_wait(dev) : ATTNVK_OK;
}
