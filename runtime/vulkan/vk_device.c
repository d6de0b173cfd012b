/* Logical devices (one VolkDeviceTable each), device-local buffers and the
 * reused host-visible staging buffer that uploads and downloads go through. */
#include "vulkan/vk_internal.h"
#include "vulkan/vk_khr_coopmat.h"

#include <stdlib.h>
#include <string.h>

enum { STAGING_MAX = 64u << 20 }; /* larger transfers go through it in pieces */

static int find_memory_type(const avk_bdev *dev, uint32_t bits, VkMemoryPropertyFlags want, uint32_t *out)
{
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(dev->caps->phys, &mem);
    for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
        if ((bits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) {
            *out = i;
            return 1;
        }
    return 0;
}

attnvk_status vk_buffer_new(avk_bdev *dev, VkDeviceSize bytes, int host_visible, avk_bbuf **out)
{
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    b->size = bytes;
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = (bytes + 3) & ~(VkDeviceSize)3, /* shaders read words (an odd f16 mask's last half) */
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = dev->vk.vkCreateBuffer(dev->device, &bi, NULL, &b->buffer);
    if (r != VK_SUCCESS) {
        free(b);
        return vk_status(r, "vkCreateBuffer");
    }
    VkMemoryRequirements req;
    dev->vk.vkGetBufferMemoryRequirements(dev->device, b->buffer, &req);
    uint32_t type;
    VkMemoryPropertyFlags want = host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                              : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    if (!find_memory_type(dev, req.memoryTypeBits, want, &type) &&
        !(host_visible ? 0 : find_memory_type(dev, req.memoryTypeBits, 0, &type))) {
        vk_buffer_free(dev, b);
        return avk_fail(ATTNVK_ERROR_BACKEND, "vulkan: no %s memory type for a buffer",
                        host_visible ? "host-visible" : "device-local");
    }
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                               .memoryTypeIndex = type};
    r = dev->vk.vkAllocateMemory(dev->device, &ai, NULL, &b->memory);
    if (r == VK_SUCCESS) r = dev->vk.vkBindBufferMemory(dev->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && host_visible) r = dev->vk.vkMapMemory(dev->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) {
        vk_buffer_free(dev, b);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "vulkan: cannot allocate %llu bytes of %s memory: %s",
                            (unsigned long long)bytes, host_visible ? "host-visible" : "device", vk_result_name(r));
        return vk_status(r, "vkAllocateMemory");
    }
    *out = b;
    return ATTNVK_OK;
}

void vk_buffer_free(avk_bdev *dev, avk_bbuf *b)
{
    if (!b) return;
    if (b->borrowed) { /* the caller's buffer and memory */
        free(b);
        return;
    }
    if (b->mapped) dev->vk.vkUnmapMemory(dev->device, b->memory);
    if (b->buffer) dev->vk.vkDestroyBuffer(dev->device, b->buffer, NULL);
    if (b->memory) dev->vk.vkFreeMemory(dev->device, b->memory, NULL);
    free(b);
}

attnvk_status vk_begin(avk_bdev *dev)
{
    attnvk_status s = vk_wait_pending(dev);
    if (s != ATTNVK_OK) return s;
    VkResult r = dev->vk.vkResetCommandBuffer(dev->cmd, 0);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (r == VK_SUCCESS) r = dev->vk.vkBeginCommandBuffer(dev->cmd, &bi);
    return vk_status(r, "begin command buffer");
}

attnvk_status vk_submit_wait(avk_bdev *dev)
{
    VkResult r = dev->vk.vkEndCommandBuffer(dev->cmd);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &dev->cmd};
    if (r == VK_SUCCESS) r = dev->vk.vkResetFences(dev->device, 1, &dev->fence);
    if (r == VK_SUCCESS) r = dev->vk.vkQueueSubmit(dev->queue, 1, &si, dev->fence);
    /* generous: a hung dispatch becomes an error instead of a hang */
    if (r == VK_SUCCESS) r = dev->vk.vkWaitForFences(dev->device, 1, &dev->fence, VK_TRUE, 300ull * 1000000000ull);
    if (r == VK_TIMEOUT) return avk_fail(ATTNVK_ERROR_BACKEND, "vulkan: the GPU did not finish within 300 s");
    return vk_status(r, "queue submit");
}

attnvk_status vk_submit_async(avk_bdev *dev)
{
    VkResult r = dev->vk.vkEndCommandBuffer(dev->cmd);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &dev->cmd};
    if (r == VK_SUCCESS) r = dev->vk.vkResetFences(dev->device, 1, &dev->fence);
    if (r == VK_SUCCESS) r = dev->vk.vkQueueSubmit(dev->queue, 1, &si, dev->fence);
    if (r == VK_SUCCESS) dev->pending = 1;
    return vk_status(r, "queue submit (async)");
}

attnvk_status vk_wait_pending(avk_bdev *dev)
{
    if (!dev->pending) return ATTNVK_OK;
    dev->pending = 0;
    VkResult r = dev->vk.vkWaitForFences(dev->device, 1, &dev->fence, VK_TRUE, 300ull * 1000000000ull);
    if (r == VK_TIMEOUT) return avk_fail(ATTNVK_ERROR_BACKEND, "vulkan: the GPU did not finish an async run within 300 s");
    return vk_status(r, "waiting for an async run");
}

static attnvk_status ensure_staging(avk_bdev *dev, size_t bytes)
{
    size_t want = bytes < STAGING_MAX ? bytes : STAGING_MAX;
    if (dev->staging && dev->staging->size >= want) return ATTNVK_OK;
    vk_buffer_free(dev, dev->staging);
    dev->staging = NULL;
    return vk_buffer_new(dev, want < 65536 ? 65536 : want, 1, &dev->staging);
}

static attnvk_status transfer(avk_bdev *dev, avk_bbuf *buf, size_t off, void *host, size_t bytes, int upload)
{
    attnvk_status s = ensure_staging(dev, bytes);
    for (size_t done = 0; s == ATTNVK_OK && done < bytes;) {
        size_t n = bytes - done < dev->staging->size ? bytes - done : dev->staging->size;
        if (upload) memcpy(dev->staging->mapped, (const unsigned char *)host + done, n);
        s = vk_begin(dev);
        if (s != ATTNVK_OK) break;
        const VkDeviceSize at = buf->offset + off + done; /* wrapped buffers start at their offset */
        VkBufferCopy region = {.srcOffset = upload ? 0 : at, .dstOffset = upload ? at : 0, .size = n};
        if (upload) dev->vk.vkCmdCopyBuffer(dev->cmd, dev->staging->buffer, buf->buffer, 1, &region);
        else dev->vk.vkCmdCopyBuffer(dev->cmd, buf->buffer, dev->staging->buffer, 1, &region);
        s = vk_submit_wait(dev);
        if (s == ATTNVK_OK && !upload) memcpy((unsigned char *)host + done, dev->staging->mapped, n);
        done += n;
    }
    return s;
}

static attnvk_status vk_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out) { return vk_buffer_new(dev, bytes, 0, out); }
static void vk_release(avk_bdev *dev, avk_bbuf *buf) { vk_buffer_free(dev, buf); }
static attnvk_status vk_upload(avk_bdev *dev, avk_bbuf *buf, size_t off, const void *src, size_t bytes)
{
    return transfer(dev, buf, off, (void *)src, bytes, 1);
}
static attnvk_status vk_download(avk_bdev *dev, avk_bbuf *buf, size_t off, void *dst, size_t bytes)
{
    return transfer(dev, buf, off, dst, bytes, 0);
}

/* Device extensions and features the variants need, where the device has them. */
static attnvk_status create_device(avk_bdev *dev)
{
    const vk_caps *c = dev->caps;
    const char *exts[8];
    uint32_t n_ext = 0;
    if (c->size_control_ext) exts[n_ext++] = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
    if (c->ext_f16_int8) exts[n_ext++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    if (c->ext_memory_model) exts[n_ext++] = VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME;
    if (c->nv_coopmat) exts[n_ext++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (c->khr_coopmat) exts[n_ext++] = AVK_KHR_COOPMAT_EXTENSION;
    if (c->pipeline_stats) exts[n_ext++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    if (c->atomic_f32_add) exts[n_ext++] = VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME;

    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .storageBuffer16BitAccess = c->storage_16bit};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
                                                     .shaderFloat16 = c->shader_f16};
    VkPhysicalDeviceVulkanMemoryModelFeatures vmm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES,
                                                     .vulkanMemoryModel = c->vk_memory_model,
                                                     .vulkanMemoryModelDeviceScope = c->vk_mm_device_scope};
    VkPhysicalDeviceSubgroupSizeControlFeaturesEXT sgc = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT,
        .subgroupSizeControl = c->require_size_compute, .computeFullSubgroups = c->full_subgroups};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV nvcm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                        .cooperativeMatrix = VK_TRUE};
    avk_coopmat_features_khr khrcm = {.sType = AVK_STYPE_COOPMAT_FEATURES_KHR, .cooperativeMatrix = VK_TRUE};
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
        .pipelineExecutableInfo = VK_TRUE};
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
                                                       .shaderBufferFloat32AtomicAdd = VK_TRUE};
    void *chain = &s16;
    if (c->shader_f16) { f16.pNext = chain; chain = &f16; }
    if (c->vk_memory_model) { vmm.pNext = chain; chain = &vmm; }
    if (c->size_control) { sgc.pNext = chain; chain = &sgc; }
    if (c->nv_coopmat) { nvcm.pNext = chain; chain = &nvcm; }
    if (c->khr_coopmat) { khrcm.pNext = chain; chain = &khrcm; }
    if (c->pipeline_stats) { pep.pNext = chain; chain = &pep; }
    if (c->atomic_f32_add) { af.pNext = chain; chain = &af; }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = c->queue_family,
                                  .queueCount = 1, .pQueuePriorities = &priority};
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = chain, .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi, .enabledExtensionCount = n_ext, .ppEnabledExtensionNames = exts};
    VkResult r = vkCreateDevice(c->phys, &di, NULL, &dev->device);
    if (r != VK_SUCCESS) return vk_status(r, "vkCreateDevice");
    volkLoadDeviceTable(&dev->vk, dev->device);
    dev->vk.vkGetDeviceQueue(dev->device, c->queue_family, 0, &dev->queue);
    return ATTNVK_OK;
}

static attnvk_status create_objects(avk_bdev *dev)
{
    const vk_caps *c = dev->caps;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = c->queue_family};
    VkResult r = dev->vk.vkCreateCommandPool(dev->device, &pi, NULL, &dev->cmd_pool);
    VkCommandBufferAllocateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = dev->cmd_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    if (r == VK_SUCCESS) r = dev->vk.vkAllocateCommandBuffers(dev->device, &ci, &dev->cmd);
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (r == VK_SUCCESS) r = dev->vk.vkCreateFence(dev->device, &fi, NULL, &dev->fence);
    if (r == VK_SUCCESS && c->timestamp_valid_bits) {
        VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                    .queryCount = VK_STAMP_FIRST_MARK + VK_STAMP_MARKS};
        r = dev->vk.vkCreateQueryPool(dev->device, &qi, NULL, &dev->timestamps);
    }
    VkDescriptorSetLayoutBinding bindings[VK_BINDINGS];
    for (uint32_t i = 0; i < VK_BINDINGS; ++i)
        bindings[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                     .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = VK_BINDINGS, .pBindings = bindings};
    if (r == VK_SUCCESS) r = dev->vk.vkCreateDescriptorSetLayout(dev->device, &li, NULL, &dev->set_layout);
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 128};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &dev->set_layout, .pushConstantRangeCount = 1,
                                      .pPushConstantRanges = &range};
    if (r == VK_SUCCESS) r = dev->vk.vkCreatePipelineLayout(dev->device, &pli, NULL, &dev->pipeline_layout);
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = VK_MAX_SETS * VK_BINDINGS};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = VK_MAX_SETS,
                                      .poolSizeCount = 1, .pPoolSizes = &size};
    if (r == VK_SUCCESS) r = dev->vk.vkCreateDescriptorPool(dev->device, &dpi, NULL, &dev->descriptor_pool);
    if (r != VK_SUCCESS) return vk_status(r, "creating device objects");
    return vk_buffer_new(dev, 256, 0, &dev->dummy);
}

static void vk_close(avk_bdev *dev);

static attnvk_status vk_open(int device, avk_bdev **out)
{
    if (device < 0 || device >= avk_vk.device_count)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "vulkan: no device %d", device);
    avk_bdev *dev = calloc(1, sizeof *dev);
    if (!dev) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    dev->caps = &avk_vk.devices[device];
    attnvk_status s = create_device(dev);
    if (s == ATTNVK_OK) s = create_objects(dev);
    if (s != ATTNVK_OK) {
        vk_close(dev);
        return s;
    }
    vk_pipeline_cache_open(dev);
    vk_rs_layout_probe(dev, &avk_vk.devices[device]); /* once per device: may coopmat-nv-rs run here? */
    *out = dev;
    return ATTNVK_OK;
}

static void vk_close(avk_bdev *dev)
{
    if (!dev) return;
    if (dev->device) {
        dev->vk.vkDeviceWaitIdle(dev->device);
        vk_pipeline_cache_save(dev);
        for (int i = 0; i < dev->pipeline_count; ++i) dev->vk.vkDestroyPipeline(dev->device, dev->pipelines[i].pipeline, NULL);
        free(dev->pipelines);
        if (dev->pipeline_cache) dev->vk.vkDestroyPipelineCache(dev->device, dev->pipeline_cache, NULL);
        vk_buffer_free(dev, dev->staging);
        vk_buffer_free(dev, dev->dummy);
        if (dev->descriptor_pool) dev->vk.vkDestroyDescriptorPool(dev->device, dev->descriptor_pool, NULL);
        if (dev->pipeline_layout) dev->vk.vkDestroyPipelineLayout(dev->device, dev->pipeline_layout, NULL);
        if (dev->set_layout) dev->vk.vkDestroyDescriptorSetLayout(dev->device, dev->set_layout, NULL);
        if (dev->timestamps) dev->vk.vkDestroyQueryPool(dev->device, dev->timestamps, NULL);
        if (dev->fence) dev->vk.vkDestroyFence(dev->device, dev->fence, NULL);
        if (dev->cmd_pool) dev->vk.vkDestroyCommandPool(dev->device, dev->cmd_pool, NULL);
        dev->vk.vkDestroyDevice(dev->device, NULL);
    }
    free(dev);
}

/* gathered in vk_backend.c */
attnvk_status avk_vk_open(int device, avk_bdev **out) { return vk_open(device, out); }
void avk_vk_close(avk_bdev *dev) { vk_close(dev); }
attnvk_status avk_vk_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out) { return vk_alloc(dev, bytes, out); }
void avk_vk_release(avk_bdev *dev, avk_bbuf *buf) { vk_release(dev, buf); }
attnvk_status avk_vk_upload(avk_bdev *dev, avk_bbuf *buf, size_t off, const void *src, size_t bytes)
{
    return vk_upload(dev, buf, off, src, bytes);
}
attnvk_status avk_vk_download(avk_bdev *dev, avk_bbuf *buf, size_t off, void *dst, size_t bytes)
{
    return vk_download(dev, buf, off, dst, bytes);
}
