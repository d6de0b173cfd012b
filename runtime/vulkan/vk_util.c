/* VkResult -> attnvk_status with a one-line message, descriptor binding, timed submits. */
#include "vulkan/vk_internal.h"

#include <time.h>

const char *vk_result_name(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    case VK_PIPELINE_COMPILE_REQUIRED: return "VK_PIPELINE_COMPILE_REQUIRED";
    default: return "VkResult error";
    }
}

attnvk_status vk_status(VkResult r, const char *what)
{
    switch (r) {
    case VK_SUCCESS: return ATTNVK_OK;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "vulkan: %s: %s", what, vk_result_name(r));
    case VK_ERROR_DEVICE_LOST: return avk_fail(ATTNVK_ERROR_DEVICE_LOST, "vulkan: %s: device lost", what);
    case VK_ERROR_INVALID_SHADER_NV:
        return avk_fail(ATTNVK_ERROR_COMPILE, "vulkan: %s: the driver rejected the shader", what);
    default: return avk_fail(ATTNVK_ERROR_BACKEND, "vulkan: %s: %s (%d)", what, vk_result_name(r), (int)r);
    }
}

/* Allocates count descriptor sets (up to VK_MAX_SETS; the pool is reset first:
 * one submission at a time) and points set i's VK_BINDINGS storage-buffer
 * bindings at bufs[i]. */
attnvk_status vk_bind_storage_sets(avk_bdev *dev, uint32_t count, avk_bbuf *const (*bufs)[VK_BINDINGS], VkDescriptorSet *sets)
{
    attnvk_status s = vk_wait_pending(dev); /* an async run's set is in use until it finishes */
    if (s != ATTNVK_OK) return s;
    if (count > VK_MAX_SETS) return avk_fail(ATTNVK_ERROR_BACKEND, "vulkan: %u descriptor sets asked, the pool has %d", count, VK_MAX_SETS);
    const VkDeviceSize max_range = dev->caps->props.limits.maxStorageBufferRange;
    VkResult r = dev->vk.vkResetDescriptorPool(dev->device, dev->descriptor_pool, 0);
    VkDescriptorSetLayout layouts[VK_MAX_SETS];
    for (uint32_t i = 0; i < count; ++i) layouts[i] = dev->set_layout;
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = dev->descriptor_pool, .descriptorSetCount = count,
                                      .pSetLayouts = layouts};
    if (r == VK_SUCCESS) r = dev->vk.vkAllocateDescriptorSets(dev->device, &ai, sets);
    if (r != VK_SUCCESS) return vk_status(r, "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo bi[VK_MAX_SETS * VK_BINDINGS];
    VkWriteDescriptorSet w[VK_MAX_SETS * VK_BINDINGS];
    for (uint32_t n = 0; n < count * VK_BINDINGS; ++n) {
        const uint32_t set = n / VK_BINDINGS, i = n % VK_BINDINGS;
        const avk_bbuf *b = bufs[set][i];
        /* a wrapped buffer: its range, in whole words (shaders read words), within the device's limit */
        VkDeviceSize range = (b->size + 3) & ~(VkDeviceSize)3;
        if (range > max_range) range = max_range;
        bi[n] = (VkDescriptorBufferInfo){.buffer = b->buffer, .offset = b->offset, .range = b->borrowed ? range : VK_WHOLE_SIZE};
        w[n] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = sets[set], .dstBinding = i,
                                      .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &bi[n]};
    }
    dev->vk.vkUpdateDescriptorSets(dev->device, count * VK_BINDINGS, w, 0, NULL);
    return ATTNVK_OK;
}

/* The device's one descriptor set of a dispatch. */
attnvk_status vk_bind_storage_buffers(avk_bdev *dev, avk_bbuf *const bufs[VK_BINDINGS], VkDescriptorSet *set)
{
    return vk_bind_storage_sets(dev, 1, (avk_bbuf *const (*)[VK_BINDINGS])bufs, set);
}

/* Opens the command buffer with a start timestamp (where the queue has them). */
attnvk_status vk_begin_timed(avk_bdev *dev)
{
    attnvk_status s = vk_begin(dev);
    if (s == ATTNVK_OK && dev->timestamps) {
        dev->vk.vkCmdResetQueryPool(dev->cmd, dev->timestamps, 0, 2);
        dev->vk.vkCmdWriteTimestamp(dev->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, dev->timestamps, 0);
    }
    return s;
}

static double host_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void vk_stamp_reset_marks(avk_bdev *dev)
{
    if (dev->timestamps) dev->vk.vkCmdResetQueryPool(dev->cmd, dev->timestamps, VK_STAMP_FIRST_MARK, VK_STAMP_MARKS);
}

void vk_stamp_mark(avk_bdev *dev, uint32_t i)
{
    if (dev->timestamps && i < VK_STAMP_MARKS)
        dev->vk.vkCmdWriteTimestamp(dev->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, dev->timestamps, VK_STAMP_FIRST_MARK + i);
}

attnvk_status vk_stamp_ms(avk_bdev *dev, uint32_t n, double *ms)
{
    for (uint32_t i = 0; i < n; ++i) ms[i] = 0;
    if (!dev->timestamps || n == 0 || n > VK_STAMP_MARKS) return ATTNVK_OK;
    uint64_t ts[VK_STAMP_FIRST_MARK + VK_STAMP_MARKS], start = 0;
    VkResult r = dev->vk.vkGetQueryPoolResults(dev->device, dev->timestamps, 0, 1, sizeof start, &start, sizeof start,
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r == VK_SUCCESS)
        r = dev->vk.vkGetQueryPoolResults(dev->device, dev->timestamps, VK_STAMP_FIRST_MARK, n, n * sizeof ts[0], ts,
                                          sizeof ts[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return vk_status(r, "vkGetQueryPoolResults");
    const uint32_t bits = dev->caps->timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    for (uint32_t i = 0; i < n; ++i) {
        ms[i] = (double)((ts[i] - start) & mask) * dev->caps->props.limits.timestampPeriod / 1e6;
        start = ts[i];
    }
    return ATTNVK_OK;
}

/* Ends the timestamp, submits and waits: *ms is the device time between the
 * timestamps, or the host's wall time where the queue has none. */
attnvk_status vk_submit_timed(avk_bdev *dev, double *ms)
{
    if (dev->timestamps) dev->vk.vkCmdWriteTimestamp(dev->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, dev->timestamps, 1);
    double t0 = host_ms();
    attnvk_status s = vk_submit_wait(dev);
    *ms = host_ms() - t0;
    if (s != ATTNVK_OK || !dev->timestamps) return s;
    uint64_t ts[2];
    VkResult r = dev->vk.vkGetQueryPoolResults(dev->device, dev->timestamps, 0, 2, sizeof ts, ts, sizeof ts[0],
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return vk_status(r, "vkGetQueryPoolResults");
    uint32_t bits = dev->caps->timestamp_valid_bits;
    uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    *ms = (double)((ts[1] - ts[0]) & mask) * dev->caps->props.limits.timestampPeriod / 1e6;
    return ATTNVK_OK;
}
