/* `attnvk peak` on a Vulkan device (core/peak.h): copy bandwidth
 * (shaders/peak_copy.comp), f32 and f16 FMA (peak_fma.comp) and the matrix
 * units through GL_NV_cooperative_matrix 16x16x16 f16 -> f32, the path of the
 * coopmat-nv bodies (peak_coopmat_nv.comp). Device timestamps, the iteration
 * count grown until one run takes avk_peak_target_ms, best of a few runs. */
#include "core/embedded.h"
#include "core/peak.h"
#include "vulkan/vk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_spv_peak_copy)
AVK_EMBEDDED(avk_spv_peak_fma_f32)
AVK_EMBEDDED(avk_spv_peak_fma_f16)
AVK_EMBEDDED(avk_spv_peak_coopmat_nv)

attnvk_status avk_vk_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out);

enum { LOCAL = 256, COOPMAT_LOCAL = 128, GROUPS_PER_CU = 8, GROUPS_UNKNOWN = 1024, CPU_GROUPS = 16 };

static int is_cpu(const avk_bdev *dev) { return dev->caps->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }

static uint32_t group_count(const avk_bdev *dev)
{
    const vk_caps *c = dev->caps;
    uint32_t groups = c->compute_units > 0 ? (uint32_t)c->compute_units * GROUPS_PER_CU : GROUPS_UNKNOWN;
    if (is_cpu(dev)) groups = CPU_GROUPS; /* a few per host thread */
    if (groups > c->props.limits.maxComputeWorkGroupCount[0]) groups = c->props.limits.maxComputeWorkGroupCount[0];
    return groups;
}

static attnvk_status pipeline(avk_bdev *dev, const unsigned char *spv, size_t size, const char *name,
                              const uint32_t *spec, uint32_t spec_count, uint32_t subgroup, VkPipeline *out)
{
    uint32_t *words = malloc(size); /* the embedded bytes need not be 4-byte aligned */
    if (!words) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(words, spv, size);
    attnvk_status s = vk_pipeline_get(dev, words, size, name, spec, spec_count, subgroup, out);
    free(words);
    return s;
}

typedef struct peak_run {
    avk_bdev *dev;
    VkPipeline pipeline;
    VkDescriptorSet set;
    uint32_t groups;
    uint32_t push[4]; /* push[0] is the iteration count where the kernel loops */
    int loops;
} peak_run;

static attnvk_status run_once(void *ctx, uint32_t iters, double *ms)
{
    peak_run *r = ctx;
    avk_bdev *dev = r->dev;
    if (r->loops) r->push[0] = iters;
    attnvk_status s = vk_begin_timed(dev);
    if (s != ATTNVK_OK) return s;
    VkCommandBuffer cmd = dev->cmd;
    dev->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, dev->pipeline_layout, 0, 1, &r->set, 0, NULL);
    dev->vk.vkCmdPushConstants(cmd, dev->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof r->push, r->push);
    dev->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipeline);
    dev->vk.vkCmdDispatch(cmd, r->groups, 1, 1);
    return vk_submit_timed(dev, ms);
}

/* bufs[0], bufs[1], bufs[3] as given (NULL: the dummy), the rest the dummy */
static attnvk_status bind(avk_bdev *dev, avk_bbuf *b0, avk_bbuf *b1, avk_bbuf *b3, VkDescriptorSet *set)
{
    avk_bbuf *bufs[VK_BINDINGS];
    for (int i = 0; i < VK_BINDINGS; ++i) bufs[i] = dev->dummy;
    if (b0) bufs[0] = b0;
    if (b1) bufs[1] = b1;
    if (b3) bufs[3] = b3;
    return vk_bind_storage_buffers(dev, bufs, set);
}

static attnvk_status fill(avk_bdev *dev, avk_bbuf *buf, uint32_t word)
{
    attnvk_status s = vk_begin(dev);
    if (s != ATTNVK_OK) return s;
    dev->vk.vkCmdFillBuffer(dev->cmd, buf->buffer, 0, VK_WHOLE_SIZE, word);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    dev->vk.vkCmdPipelineBarrier(dev->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                                 &mb, 0, NULL, 0, NULL);
    return vk_submit_wait(dev);
}

/* Two buffers of 512 MiB on a GPU (far past any L2), 64 MiB on a CPU device. */
static attnvk_status copy_peak(avk_bdev *dev, avk_peak_sample *out)
{
    const vk_caps *c = dev->caps;
    VkDeviceSize bytes = (VkDeviceSize)(is_cpu(dev) ? 64 : 512) << 20;
    if (bytes > c->props.limits.maxStorageBufferRange) bytes = c->props.limits.maxStorageBufferRange;
    if (c->device_local_bytes && bytes > c->device_local_bytes / 8) bytes = c->device_local_bytes / 8;
    bytes &= ~(VkDeviceSize)0xffff;
    uint32_t slice_lanes = is_cpu(dev) ? 1 : 0; /* as read_bandwidth.comp: contiguous slices on CPU devices */
    peak_run r = {.dev = dev, .groups = group_count(dev), .push = {(uint32_t)(bytes / 16)}};
    avk_bbuf *src = NULL, *dst = NULL;
    attnvk_status s = pipeline(dev, avk_spv_peak_copy, avk_spv_peak_copy_size, "peak_copy", &slice_lanes, 1, 0,
                               &r.pipeline);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, bytes, 0, &src);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, bytes, 0, &dst);
    if (s == ATTNVK_OK) s = fill(dev, src, 0x5a5a5a5au); /* never-written CPU memory is the shared zero page */
    if (s == ATTNVK_OK) s = fill(dev, dst, 0);
    if (s == ATTNVK_OK) s = bind(dev, src, dst, NULL, &r.set);
    uint32_t iters = 1;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(is_cpu(dev)), 1, &iters, &ms);
    if (s == ATTNVK_OK) out->value = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    vk_buffer_free(dev, src);
    vk_buffer_free(dev, dst);
    return s;
}

static attnvk_status fma_peak(avk_bdev *dev, int f16, avk_peak_sample *out)
{
    if (f16 && !dev->caps->shader_f16)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s has no shaderFloat16", dev->caps->props.deviceName);
    peak_run r = {.dev = dev, .groups = group_count(dev), .loops = 1};
    float mc[2] = {0.5f, 0.25f}; /* x = x * 0.5 + 0.25 settles at 0.5 */
    memcpy(&r.push[1], mc, sizeof mc);
    VkDeviceSize bytes = (VkDeviceSize)r.groups * LOCAL * sizeof(float);
    avk_bbuf *res = NULL;
    attnvk_status s = f16 ? pipeline(dev, avk_spv_peak_fma_f16, avk_spv_peak_fma_f16_size, "peak_fma_f16", NULL, 0, 0,
                                     &r.pipeline)
                          : pipeline(dev, avk_spv_peak_fma_f32, avk_spv_peak_fma_f32_size, "peak_fma_f32", NULL, 0, 0,
                                     &r.pipeline);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, bytes, 0, &res);
    if (s == ATTNVK_OK) s = bind(dev, NULL, NULL, res, &r.set);
    uint32_t iters = is_cpu(dev) ? 4 : 64;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(is_cpu(dev)), 1u << 24, &iters, &ms);
    /* a loop trip: 4 steps x 8 chains x 4 lanes of FMA, 2 FLOPs each */
    if (s == ATTNVK_OK) out->value = (double)r.groups * LOCAL * iters * 4 * 8 * 4 * 2 / (ms * 1e-3) / 1e9;
    snprintf(out->path, sizeof out->path, "%s", f16 ? "f16vec4 fma" : "vec4 fma");
    vk_buffer_free(dev, res);
    return s;
}

static attnvk_status matrix_peak(avk_bdev *dev, avk_peak_sample *out)
{
    const vk_caps *c = dev->caps;
    snprintf(out->path, sizeof out->path, "none");
    if (!c->nv_coopmat && !c->khr_coopmat_ext)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s has no cooperative matrices (VK_NV/KHR_cooperative_matrix)",
                        c->props.deviceName);
    if (!c->nv_coopmat)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s has only VK_KHR_cooperative_matrix; the matrix "
                        "peak kernel is measured through VK_NV_cooperative_matrix only", c->props.deviceName);
    if (!(c->nv_m == 16 && c->nv_n == 16 && c->nv_k == 16) || c->subgroup_size != 32)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: NV cooperative matrix shape %ux%ux%u, subgroup %u (the peak "
                        "kernel needs 16x16x16 and 32)", c->props.deviceName, c->nv_m, c->nv_n, c->nv_k,
                        c->subgroup_size);
    snprintf(out->path, sizeof out->path, "VK_NV_cooperative_matrix 16x16x16 f16->f32");
    peak_run r = {.dev = dev, .groups = group_count(dev), .loops = 1};
    uint32_t subgroups = r.groups * (COOPMAT_LOCAL / 32);
    avk_bbuf *ab = NULL, *res = NULL;
    attnvk_status s = pipeline(dev, avk_spv_peak_coopmat_nv, avk_spv_peak_coopmat_nv_size, "peak_coopmat_nv", NULL, 0,
                               c->size_control ? 32 : 0, &r.pipeline);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, 2 * 16 * 16 * 2, 0, &ab);
    if (s == ATTNVK_OK) s = fill(dev, ab, 0x3c003c00u); /* f16 1.0 everywhere */
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, (VkDeviceSize)subgroups * 256 * sizeof(float), 0, &res);
    if (s == ATTNVK_OK) s = bind(dev, ab, NULL, res, &r.set);
    uint32_t iters = 64;
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_peak_time(run_once, &r, avk_peak_target_ms(is_cpu(dev)), 1u << 24, &iters, &ms);
    /* a loop trip: 8 MMAs of 16x16x16, 2 FLOPs per MAC */
    if (s == ATTNVK_OK) out->value = (double)subgroups * iters * 8 * 16 * 16 * 16 * 2 / (ms * 1e-3) / 1e9;
    vk_buffer_free(dev, ab);
    vk_buffer_free(dev, res);
    return s;
}

attnvk_status avk_vk_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out)
{
    switch (kind) {
    case AVK_PEAK_COPY: return copy_peak(dev, out);
    case AVK_PEAK_FMA_F32: return fma_peak(dev, 0, out);
    case AVK_PEAK_FMA_F16: return fma_peak(dev, 1, out);
    case AVK_PEAK_MATRIX: return matrix_peak(dev, out);
    default: return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown peak kind %d", kind);
    }
}
