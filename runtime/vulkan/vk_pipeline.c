/* Compute pipelines from embedded SPIR-V, specialised per variant and problem,
 * kept for the device's lifetime and backed by a VkPipelineCache persisted on
 * disk (core/cache.h), keyed by device UUID, cache UUID and driver version. */
#include "vulkan/vk_internal.h"
#include "core/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t device_key(const vk_caps *c)
{
    uint64_t h = avk_hash(c->uuid, VK_UUID_SIZE, 0x61747476);
    h = avk_hash(c->props.pipelineCacheUUID, VK_UUID_SIZE, h);
    h = avk_hash(&c->props.driverVersion, sizeof c->props.driverVersion, h);
    h = avk_hash(&c->props.vendorID, sizeof c->props.vendorID, h);
    return avk_hash(&c->props.deviceID, sizeof c->props.deviceID, h);
}

/* Only data this driver wrote for this device is handed back to it. */
static int header_matches(const vk_caps *c, const unsigned char *data, size_t size)
{
    VkPipelineCacheHeaderVersionOne h;
    if (size < sizeof h) return 0;
    memcpy(&h, data, sizeof h);
    return h.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && h.vendorID == c->props.vendorID &&
           h.deviceID == c->props.deviceID && memcmp(h.pipelineCacheUUID, c->props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

void vk_pipeline_cache_open(avk_bdev *dev)
{
    size_t size = 0;
    void *data = NULL;
    if (avk_cache_path("vkpipe", device_key(dev->caps), "bin", dev->cache_path, sizeof dev->cache_path)) {
        data = avk_cache_load(dev->cache_path, device_key(dev->caps), &size);
        if (data && !header_matches(dev->caps, data, size)) {
            free(data);
            data = NULL;
            size = 0;
        }
    } else {
        dev->cache_path[0] = '\0';
    }
    VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = size,
                                    .pInitialData = data};
    if (dev->vk.vkCreatePipelineCache(dev->device, &ci, NULL, &dev->pipeline_cache) != VK_SUCCESS && data) {
        ci.initialDataSize = 0; /* rejected data: start empty */
        ci.pInitialData = NULL;
        if (dev->vk.vkCreatePipelineCache(dev->device, &ci, NULL, &dev->pipeline_cache) != VK_SUCCESS)
            dev->pipeline_cache = VK_NULL_HANDLE;
    }
    free(data);
    avk_clear_error();
}

void vk_pipeline_cache_save(avk_bdev *dev)
{
    if (!dev->pipeline_cache || !dev->cache_dirty || !dev->cache_path[0]) return;
    size_t size = 0;
    if (dev->vk.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, NULL) != VK_SUCCESS || !size) return;
    void *data = malloc(size);
    if (data && dev->vk.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, data) == VK_SUCCESS)
        avk_cache_store(dev->cache_path, device_key(dev->caps), data, size);
    free(data);
    dev->cache_dirty = 0;
}

/* Register and memory statistics as the driver names them, abbreviated. */
static void capture_stats(avk_bdev *dev, VkPipeline pipeline, char *out, size_t n)
{
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipeline,
                                      .executableIndex = 0};
    VkPipelineExecutableStatisticKHR st[16];
    uint32_t count = 16;
    for (uint32_t i = 0; i < count; ++i) st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    out[0] = '\0';
    VkResult r = dev->vk.vkGetPipelineExecutableStatisticsKHR(dev->device, &ei, &count, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return;
    size_t len = 0;
    for (uint32_t i = 0; i < count && len + 24 < n; ++i) {
        char key[8];
        int k = 0;
        for (const char *c = st[i].name; *c && k < 7; ++c) /* initials: "Register Count" -> "RC" */
            if (c == st[i].name || c[-1] == ' ') key[k++] = *c;
        key[k] = '\0';
        long long v = st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR ? (long long)st[i].value.f64
                      : st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR ? (long long)st[i].value.i64
                                                                                           : (long long)st[i].value.u64;
        len += (size_t)snprintf(out + len, n - len, " %s=%lld", key, v);
    }
}

/* ATTNVK_VK_PIPELINE_IR=DIR (a tuning aid, with ATTNVK_VK_PIPELINE_STATS=1): whatever internal
 * representations the driver shows of each pipeline it builds (its compiler's IR or machine code),
 * one file each, DIR/NAME-KEY-I.txt; a line on stderr says how many there were. */
static void dump_ir(avk_bdev *dev, VkPipeline pipeline, const char *name, uint64_t key)
{
    const char *dir = getenv("ATTNVK_VK_PIPELINE_IR");
    if (!dir || !*dir) return;
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipeline,
                                      .executableIndex = 0};
    uint32_t count = 0;
    VkResult r = dev->vk.vkGetPipelineExecutableInternalRepresentationsKHR(dev->device, &ei, &count, NULL);
    fprintf(stderr, "attnvk: pipeline %s: %u internal representations (%s)\n", name, count, vk_result_name(r));
    if (r != VK_SUCCESS || !count) return;
    VkPipelineExecutableInternalRepresentationKHR *ir = calloc(count, sizeof *ir);
    if (!ir) return;
    for (uint32_t i = 0; i < count; ++i) ir[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
    r = dev->vk.vkGetPipelineExecutableInternalRepresentationsKHR(dev->device, &ei, &count, ir);
    for (uint32_t i = 0; i < count && (r == VK_SUCCESS || r == VK_INCOMPLETE); ++i) ir[i].pData = malloc(ir[i].dataSize);
    if (r == VK_SUCCESS || r == VK_INCOMPLETE) r = dev->vk.vkGetPipelineExecutableInternalRepresentationsKHR(dev->device, &ei, &count, ir);
    for (uint32_t i = 0; i < count; ++i) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s-%016llx-%u.txt", dir, name, (unsigned long long)key, i);
        FILE *f = ir[i].pData && (r == VK_SUCCESS || r == VK_INCOMPLETE) ? fopen(path, "wb") : NULL;
        if (f) {
            fprintf(f, "# %s: %s%s\n", ir[i].name, ir[i].description, ir[i].isText ? "" : " (binary)");
            fwrite(ir[i].pData, 1, ir[i].isText && ir[i].dataSize ? strnlen(ir[i].pData, ir[i].dataSize) : ir[i].dataSize, f);
            fclose(f);
        }
        free(ir[i].pData);
    }
    free(ir);
}

const char *vk_pipeline_stats(const avk_bdev *dev, VkPipeline pipeline)
{
    for (int i = 0; i < dev->pipeline_count; ++i)
        if (dev->pipelines[i].pipeline == pipeline) return dev->pipelines[i].stats;
    return "";
}

attnvk_status vk_pipeline_get(avk_bdev *dev, const uint32_t *code, size_t code_size, const char *name,
                              const uint32_t *spec, uint32_t spec_count, uint32_t required_subgroup, VkPipeline *out)
{
    uint64_t key = avk_hash_str(name, 0);
    key = avk_hash(spec, spec_count * sizeof *spec, key);
    key = avk_hash(&required_subgroup, sizeof required_subgroup, key);
    for (int i = 0; i < dev->pipeline_count; ++i)
        if (dev->pipelines[i].key == key) {
            *out = dev->pipelines[i].pipeline;
            return ATTNVK_OK;
        }
    if (dev->pipeline_count == dev->pipeline_capacity) {
        const int capacity = dev->pipeline_capacity ? 2 * dev->pipeline_capacity : 64;
        vk_pipeline_entry *grown = realloc(dev->pipelines, (size_t)capacity * sizeof *grown);
        if (!grown) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "vulkan: out of host memory for pipeline %s", name);
        dev->pipelines = grown;
        dev->pipeline_capacity = capacity;
    }

    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = code_size,
                                   .pCode = code};
    VkShaderModule module;
    VkResult r = dev->vk.vkCreateShaderModule(dev->device, &mi, NULL, &module);
    if (r != VK_SUCCESS) return vk_status(r, "vkCreateShaderModule");
    VkSpecializationMapEntry entries[16];
    for (uint32_t i = 0; i < spec_count && i < 16; ++i)
        entries[i] = (VkSpecializationMapEntry){.constantID = i, .offset = i * 4, .size = 4};
    VkSpecializationInfo si = {.mapEntryCount = spec_count, .pMapEntries = entries, .dataSize = spec_count * 4,
                               .pData = spec};
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT req = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO_EXT,
        .requiredSubgroupSize = required_subgroup};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = dev->caps->pipeline_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
                                                 (getenv("ATTNVK_VK_PIPELINE_IR") ? VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR : 0)
                                           : 0,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .pNext = required_subgroup ? &req : NULL,
                  .flags = required_subgroup && dev->caps->full_subgroups
                               ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT_EXT : 0,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main",
                  .pSpecializationInfo = &si},
        .layout = dev->pipeline_layout};
    VkPipeline pipeline;
    r = dev->vk.vkCreateComputePipelines(dev->device, dev->pipeline_cache, 1, &ci, NULL, &pipeline);
    dev->vk.vkDestroyShaderModule(dev->device, module, NULL);
    if (r != VK_SUCCESS) {
        if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY) return vk_status(r, name);
        return avk_fail(ATTNVK_ERROR_COMPILE, "vulkan: the driver could not build pipeline %s: %s", name,
                        vk_result_name(r));
    }
    vk_pipeline_entry *entry = &dev->pipelines[dev->pipeline_count++];
    *entry = (vk_pipeline_entry){.key = key, .pipeline = pipeline};
    if (dev->caps->pipeline_stats) capture_stats(dev, pipeline, entry->stats, sizeof entry->stats);
    if (dev->caps->pipeline_stats) dump_ir(dev, pipeline, name, key);
    dev->cache_dirty = 1;
    *out = pipeline;
    return ATTNVK_OK;
}
