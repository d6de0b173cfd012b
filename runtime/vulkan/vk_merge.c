/* Ring attention's merge on a Vulkan device (shaders/ring_merge.comp): one
 * dispatch in its own submission, submitted like an async run (the device's
 * fence, vk_submit_async) so the host does not wait; the next submission
 * (vk_begin) and backend.wait wait for it, which orders every later run,
 * upload and download after it. */
#include "vulkan/vk_internal.h"
#include "vulkan/vk_shaders.h"

#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_spv_ring_merge_f32)
AVK_EMBEDDED(avk_spv_ring_merge_f16)
AVK_EMBEDDED(avk_spv_ring_merge_bf16)

attnvk_status avk_vk_merge(avk_bdev *dev, const avk_merge_args *a);

/* A workgroup: MERGE_GROUP_THREADS invocations over MERGE_ROWS_PER_GROUP rows
 * (specialization constants 0 and 1 of ring_merge.comp). The rows come in
 * pairs, so a group's values start on a 32-bit word and no word of f16/bf16
 * values is shared by two groups (odd Dv). */
enum { MERGE_GROUP_THREADS = 128, MERGE_ROWS_PER_GROUP = 4 };
_Static_assert(MERGE_ROWS_PER_GROUP % 2 == 0, "a group's 16-bit values start on a word");

/* ring_merge.comp's bindings (the rest are bound to the device's placeholder) */
enum { BIND_O_PART, BIND_LSE_PART, BIND_O_ACC, BIND_LSE_ACC, BIND_O_OUT };

/* ring_merge.comp's push constants, in its order */
typedef struct merge_constants {
    uint32_t rows, dv, first, has_out;
} merge_constants;

static spv_blob merge_shader(attnvk_dtype dt)
{
    if (dt == ATTNVK_F16) return (spv_blob)SPV_BLOB(ring_merge_f16);
    if (dt == ATTNVK_BF16) return (spv_blob)SPV_BLOB(ring_merge_bf16);
    return (spv_blob)SPV_BLOB(ring_merge_f32);
}

/* The dtype's pipeline, built once per device (vk_pipeline_get keeps it until close). */
static attnvk_status merge_pipeline(avk_bdev *dev, attnvk_dtype dt, VkPipeline *out)
{
    const spv_blob b = merge_shader(dt);
    /* SPIR-V is read as words: hand the driver an aligned copy */
    uint32_t *words = malloc(b.size);
    if (!words) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(words, b.code, b.size);
    const uint32_t spec[2] = {MERGE_GROUP_THREADS, MERGE_ROWS_PER_GROUP};
    attnvk_status s = vk_pipeline_get(dev, words, b.size, b.name, spec, 2, 0, out);
    free(words);
    return s;
}

attnvk_status avk_vk_merge(avk_bdev *dev, const avk_merge_args *a)
{
    const VkPhysicalDeviceLimits *lim = &dev->caps->props.limits;
    const uint64_t rows = (uint64_t)a->batch * a->heads * a->rows_per_head;
    if (rows == 0) return ATTNVK_OK;
    if (rows * (uint64_t)a->dv > UINT32_MAX)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: a merge of %llu rows of %d values exceeds 32-bit indexing",
                        (unsigned long long)rows, a->dv);
    const uint64_t groups = (rows + MERGE_ROWS_PER_GROUP - 1) / MERGE_ROWS_PER_GROUP;
    const uint32_t gx = groups < lim->maxComputeWorkGroupCount[0] ? (uint32_t)groups : lim->maxComputeWorkGroupCount[0];
    const uint64_t gy = (groups + gx - 1) / gx;
    if (gy > lim->maxComputeWorkGroupCount[1])
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: a merge of %llu rows exceeds the device's workgroup counts",
                        (unsigned long long)rows);
    VkPipeline pipeline;
    attnvk_status s = merge_pipeline(dev, a->dtype, &pipeline);
    if (s != ATTNVK_OK) return s;
    avk_bbuf *bufs[VK_BINDINGS];
    for (int i = 0; i < VK_BINDINGS; ++i) bufs[i] = dev->dummy;
    bufs[BIND_O_PART] = a->o_part;
    bufs[BIND_LSE_PART] = a->lse_part;
    bufs[BIND_O_ACC] = a->o_acc;
    bufs[BIND_LSE_ACC] = a->lse_acc;
    if (a->o_out) bufs[BIND_O_OUT] = a->o_out;
    VkDescriptorSet set;
    s = vk_bind_storage_buffers(dev, bufs, &set); /* waits for a pending submission first */
    if (s == ATTNVK_OK) s = vk_begin(dev);
    if (s != ATTNVK_OK) return s;
    const merge_constants pc = {.rows = (uint32_t)rows, .dv = (uint32_t)a->dv, .first = a->first != 0,
                                .has_out = a->o_out != NULL};
    VkCommandBuffer cmd = dev->cmd;
    /* what earlier submissions wrote (a run's O and LSE, uploads) before the merge reads it */
    const VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                    .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                    .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
    dev->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, dev->pipeline_layout, 0, 1, &set, 0, NULL);
    dev->vk.vkCmdPushConstants(cmd, dev->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    dev->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    dev->vk.vkCmdDispatch(cmd, gx, (uint32_t)gy, 1);
    /* the accumulator and O visible to later runs, transfers and the host (wrapped buffers) */
    const VkMemoryBarrier done = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                                   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT};
    dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                     VK_PIPELINE_STAGE_HOST_BIT,
                                 0, 1, &done, 0, NULL, 0, NULL);
    return vk_submit_async(dev); /* the fence: vk_wait_pending (backend.wait, the next vk_begin) */
}
