/* Vulkan interop: a caller's VkBuffer (on attnvk's VkDevice) as a buffer, and
 * the handles a caller needs to make one. A wrapped buffer binds at its
 * offset with its own range (vk_bind_storage_buffers) and copies from and to
 * it at that offset (vk_device.c's transfers). */
#include "vulkan/vk_internal.h"

#include <stdlib.h>

attnvk_status avk_vk_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out)
{
    const VkDeviceSize align = dev->caps->props.limits.minStorageBufferOffsetAlignment;
    if (align > 1 && ext->offset % align)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "buffer wrap: vulkan offset %zu is not a multiple of minStorageBufferOffsetAlignment %llu",
                        ext->offset, (unsigned long long)align);
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    b->buffer = (VkBuffer)ext->handle;
    b->memory = (VkDeviceMemory)ext->memory; /* kept for reference only: never mapped or freed */
    b->offset = ext->offset;
    b->size = ext->bytes;
    b->borrowed = 1;
    *out = b;
    return ATTNVK_OK;
}

attnvk_status avk_vk_native(avk_bdev *dev, attnvk_native_handles *out)
{
    const VkDeviceSize align = dev->caps->props.limits.minStorageBufferOffsetAlignment;
    out->wrap_alignment = align > 1 ? (size_t)align : 1;
    out->vk_instance = (void *)avk_vk.instance;
    out->vk_physical_device = (void *)dev->caps->phys;
    out->vk_device = (void *)dev->device;
    out->vk_queue = (void *)dev->queue;
    out->vk_queue_family = dev->caps->queue_family;
    return ATTNVK_OK;
}
