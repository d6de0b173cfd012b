/* Achievable read bandwidth of a Vulkan device (shaders/read_bandwidth.comp):
 * one warm-up, then the best of several dispatches timed by device timestamps.
 * GPUs stream up to 1 GiB (far past any L2); CPU devices (lavapipe) up to
 * 256 MiB, past the host's last-level cache and still well under a second. */
#include "core/embedded.h"
#include "vulkan/vk_internal.h"

#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_spv_read_bandwidth)

attnvk_status avk_vk_read_bandwidth(avk_bdev *dev, double *gbps);

enum { BW_LOCAL = 256, BW_RUNS = 5, BW_GROUPS_PER_CU = 8, BW_GROUPS_UNKNOWN = 1024 };

static VkDeviceSize buffer_bytes(const vk_caps *c)
{
    VkDeviceSize bytes = (VkDeviceSize)(c->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 256 : 1024) << 20;
    if (bytes > c->props.limits.maxStorageBufferRange) bytes = c->props.limits.maxStorageBufferRange; /* lavapipe: 128 MiB */
    if (c->device_local_bytes && bytes > c->device_local_bytes / 4) bytes = c->device_local_bytes / 4;
    return bytes & ~(VkDeviceSize)0xffff;
}

/* One timed dispatch: device timestamps where the queue has them, else the wall clock. */
static attnvk_status timed_dispatch(avk_bdev *dev, VkPipeline pipeline, VkDescriptorSet set, uint32_t vectors,
                                    uint32_t groups, double *ms)
{
    attnvk_status s = vk_begin_timed(dev);
    if (s != ATTNVK_OK) return s;
    VkCommandBuffer cmd = dev->cmd;
    dev->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, dev->pipeline_layout, 0, 1, &set, 0, NULL);
    dev->vk.vkCmdPushConstants(cmd, dev->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof vectors, &vectors);
    dev->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    dev->vk.vkCmdDispatch(cmd, groups, 1, 1);
    return vk_submit_timed(dev, ms);
}

/* Writes the buffer once: a CPU driver's never-written memory is the kernel's
 * shared zero page, which would be read from cache, not from memory. */
static attnvk_status fill(avk_bdev *dev, avk_bbuf *buf)
{
    attnvk_status s = vk_begin(dev);
    if (s != ATTNVK_OK) return s;
    dev->vk.vkCmdFillBuffer(dev->cmd, buf->buffer, 0, VK_WHOLE_SIZE, 0x5a5a5a5au);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT};
    dev->vk.vkCmdPipelineBarrier(dev->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                                 &mb, 0, NULL, 0, NULL);
    return vk_submit_wait(dev);
}

attnvk_status avk_vk_read_bandwidth(avk_bdev *dev, double *gbps)
{
    const vk_caps *c = dev->caps;
    VkDeviceSize bytes = buffer_bytes(c);
    uint32_t vectors = (uint32_t)(bytes / 16);
    uint32_t groups = c->compute_units > 0 ? (uint32_t)c->compute_units * BW_GROUPS_PER_CU : BW_GROUPS_UNKNOWN;
    if (c->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) groups = 16; /* a few per host thread */
    if (groups > c->props.limits.maxComputeWorkGroupCount[0]) groups = c->props.limits.maxComputeWorkGroupCount[0];

    /* a copy: the embedded bytes need not be 4-byte aligned for SPIR-V words */
    uint32_t *words = malloc(avk_spv_read_bandwidth_size);
    if (!words) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(words, avk_spv_read_bandwidth, avk_spv_read_bandwidth_size);
    VkPipeline pipeline;
    /* spec constant 0, SLICE_LANES: on CPU devices each invocation streams its own contiguous slice
     * (lavapipe, 256 MiB: 0.8 GB/s with a grid stride, 2.5 with subgroup-wide slices, 5.3 with this) */
    uint32_t slice_lanes = c->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 1 : 0;
    attnvk_status s =
        vk_pipeline_get(dev, words, avk_spv_read_bandwidth_size, "read_bandwidth", &slice_lanes, 1, 0, &pipeline);
    free(words);
    avk_bbuf *src = NULL, *out = NULL;
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, bytes, 0, &src);
    if (s == ATTNVK_OK) s = fill(dev, src);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, groups * sizeof(uint32_t), 0, &out);
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (s == ATTNVK_OK) {
        avk_bbuf *bufs[VK_BINDINGS];
        for (int i = 0; i < VK_BINDINGS; ++i) bufs[i] = dev->dummy; /* every binding valid, only 0 and 1 read */
        bufs[0] = src;
        bufs[1] = out;
        s = vk_bind_storage_buffers(dev, bufs, &set);
    }
    double best_ms = 0;
    for (int run = 0; s == ATTNVK_OK && run <= BW_RUNS; ++run) { /* run 0 warms up */
        double ms = 0;
        s = timed_dispatch(dev, pipeline, set, vectors, groups, &ms);
        if (s == ATTNVK_OK && run > 0 && ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
    }
    if (s == ATTNVK_OK && best_ms <= 0) s = avk_fail(ATTNVK_ERROR_BACKEND, "read bandwidth: nothing was timed");
    if (s == ATTNVK_OK) *gbps = (double)bytes / (best_ms * 1e-3) / 1e9;
    vk_buffer_free(dev, src);
    vk_buffer_free(dev, out);
    return s;
}
