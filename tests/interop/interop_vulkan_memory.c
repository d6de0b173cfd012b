/* Vulkan memory as an application makes it: a VkBuffer with host-visible
 * memory on attnvk's VkDevice (from attnvk_device_native), through the
 * Vulkan loader (-lvulkan) and vkGetDeviceProcAddr, filled through a mapping. */
#include "interop_memory.h"

#include <vulkan/vulkan.h>

#include <stdio.h>
#include <string.h>

typedef struct vk_fns {
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkMapMemory MapMemory;
    PFN_vkUnmapMemory UnmapMemory;
} vk_fns;

static vk_fns fns_of(VkDevice device)
{
    vk_fns f;
#define LOAD(name) f.name = (PFN_vk##name)vkGetDeviceProcAddr(device, "vk" #name)
    LOAD(CreateBuffer);
    LOAD(DestroyBuffer);
    LOAD(GetBufferMemoryRequirements);
    LOAD(AllocateMemory);
    LOAD(FreeMemory);
    LOAD(BindBufferMemory);
    LOAD(MapMemory);
    LOAD(UnmapMemory);
#undef LOAD
    return f;
}

static int vk_alloc(const attnvk_native_handles *nh, size_t bytes, ext_memory *m)
{
    VkDevice device = (VkDevice)nh->vk_device;
    VkPhysicalDevice phys = (VkPhysicalDevice)nh->vk_physical_device;
    const vk_fns f = fns_of(device);
    memset(m, 0, sizeof *m);
    m->native = nh;
    m->bytes = bytes;
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    if (f.CreateBuffer(device, &bi, NULL, &buffer) != VK_SUCCESS) {
        fprintf(stderr, "vkCreateBuffer failed\n");
        return 1;
    }
    VkMemoryRequirements req;
    f.GetBufferMemoryRequirements(device, buffer, &req);
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(phys, &props);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < props.memoryTypeCount && type == UINT32_MAX; ++i)
        if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) type = i;
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                               .memoryTypeIndex = type};
    if (type == UINT32_MAX || f.AllocateMemory(device, &ai, NULL, &memory) != VK_SUCCESS ||
        f.BindBufferMemory(device, buffer, memory, 0) != VK_SUCCESS ||
        f.MapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &m->host) != VK_SUCCESS) {
        fprintf(stderr, "no host-visible coherent memory for a %zu-byte VkBuffer\n", bytes);
        if (memory) f.FreeMemory(device, memory, NULL);
        f.DestroyBuffer(device, buffer, NULL);
        return 1;
    }
    m->handle = (void *)buffer;
    m->memory = (void *)memory;
    return 0;
}

/* Coherent memory: the mapping is the memory (attnvk's submissions are
 * finished when the test reads, by the ordering rules under test). */
static int vk_write(ext_memory *m, size_t offset, const void *src, size_t bytes)
{
    memcpy((unsigned char *)m->host + offset, src, bytes);
    return 0;
}

static int vk_read(ext_memory *m, size_t offset, void *dst, size_t bytes)
{
    memcpy(dst, (const unsigned char *)m->host + offset, bytes);
    return 0;
}

static void vk_release(ext_memory *m)
{
    VkDevice device = (VkDevice)m->native->vk_device;
    const vk_fns f = fns_of(device);
    f.UnmapMemory(device, (VkDeviceMemory)m->memory);
    f.DestroyBuffer(device, (VkBuffer)m->handle, NULL);
    f.FreeMemory(device, (VkDeviceMemory)m->memory, NULL);
}

const ext_provider interop_vulkan_memory = {
    .api = ATTNVK_API_VULKAN, .alloc = vk_alloc, .write = vk_write, .read = vk_read, .release = vk_release,
};
