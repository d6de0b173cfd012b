/* What each physical device offers: properties, features and limits probed
 * once at init (vk_caps), and the attnvk_device_info built from them. */
#include "vulkan/vk_internal.h"
#include "vulkan/vk_khr_coopmat.h"
#include "vulkan/vk_profile.h"
#include "vulkan/vk_variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vk_has_extension(VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS || !n) return 0;
    VkExtensionProperties *e = calloc(n, sizeof *e);
    int found = 0;
    if (e && vkEnumerateDeviceExtensionProperties(phys, NULL, &n, e) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; ++i) found = strcmp(e[i].extensionName, name) == 0;
    free(e);
    return found;
}

static const char *vendor_name(uint32_t id)
{
    switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x1022: return "AMD";
    case 0x8086: return "Intel";
    case 0x5143: return "Qualcomm";
    case 0x13B5: return "ARM";
    case 0x1010: return "Imagination";
    case 0x106B: return "Apple";
    case 0x14E4: return "Broadcom";
    case 0x10005: return "Mesa";
    default: return "unknown";
    }
}

/* NVIDIA packs 10.8.8.6 bits; Intel's Windows driver 18.14; others use the API packing. */
static void driver_version_text(const vk_caps *c, VkDriverId driver_id, const char *driver_name, char *out, size_t n)
{
    uint32_t v = c->props.driverVersion;
    char num[40];
    if (c->props.vendorID == 0x10DE)
        snprintf(num, sizeof num, "%u.%u.%02u", v >> 22, (v >> 14) & 0xffu, (v >> 6) & 0xffu);
    else if (driver_id == VK_DRIVER_ID_INTEL_PROPRIETARY_WINDOWS)
        snprintf(num, sizeof num, "%u.%u", v >> 14, v & 0x3fffu);
    else
        snprintf(num, sizeof num, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
    snprintf(out, n, "%s", num);
    size_t len = strlen(out);
    if (driver_name && *driver_name && len + 4 < n) { /* "num (driver)", the name cut to fit */
        strcat(out, " (");
        strncat(out, driver_name, n - len - 4);
        strcat(out, ")");
    }
}

static void pick_queue(vk_caps *c)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &n, NULL);
    VkQueueFamilyProperties *q = n ? calloc(n, sizeof *q) : NULL;
    c->queue_family = UINT32_MAX;
    if (!q) return;
    vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &n, q);
    for (int pass = 0; pass < 2 && c->queue_family == UINT32_MAX; ++pass)
        for (uint32_t i = 0; i < n; ++i) {
            if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || !q[i].queueCount) continue;
            if (pass == 0 && q[i].timestampValidBits == 0) continue; /* prefer a queue with timestamps */
            c->queue_family = i;
            c->timestamp_valid_bits = q[i].timestampValidBits;
            break;
        }
    free(q);
}

static void pick_nv_shape(vk_caps *c)
{
    if (!vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) return;
    uint32_t n = 0;
    if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(c->phys, &n, NULL) != VK_SUCCESS || !n) return;
    VkCooperativeMatrixPropertiesNV *m = calloc(n, sizeof *m);
    if (!m) return;
    for (uint32_t i = 0; i < n; ++i) m[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(c->phys, &n, m) == VK_SUCCESS) {
        for (uint32_t i = 0; i < n; ++i) {
            const VkCooperativeMatrixPropertiesNV *p = &m[i];
            if (p->AType != VK_COMPONENT_TYPE_FLOAT16_NV || p->BType != VK_COMPONENT_TYPE_FLOAT16_NV ||
                p->CType != VK_COMPONENT_TYPE_FLOAT32_NV || p->DType != VK_COMPONENT_TYPE_FLOAT32_NV ||
                p->scope != VK_SCOPE_SUBGROUP_NV || p->MSize != 16 || p->KSize % 8 || p->NSize % 8)
                continue;
            /* prefer 16x16x16, then any 16xNx16 */
            int better = !c->nv_coopmat || (p->NSize == 16 && p->KSize == 16);
            if (better) {
                c->nv_coopmat = 1;
                c->nv_m = p->MSize;
                c->nv_n = p->NSize;
                c->nv_k = p->KSize;
            }
        }
    }
    free(m);
}

static void probe_properties(vk_caps *c, uint32_t api)
{
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &id};
    VkPhysicalDeviceSubgroupSizeControlPropertiesEXT sgc = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceShaderCorePropertiesAMD amd = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    void *chain = &sg;
    int has_sgc = api >= VK_API_VERSION_1_3 || vk_has_extension(c->phys, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    int has_drv = api >= VK_API_VERSION_1_2 || vk_has_extension(c->phys, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    c->ext_sm_builtins = vk_has_extension(c->phys, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
    c->ext_amd_core = vk_has_extension(c->phys, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
    if (has_sgc) { sgc.pNext = chain; chain = &sgc; }
    if (has_drv) { drv.pNext = chain; chain = &drv; }
    if (c->ext_sm_builtins) { sm.pNext = chain; chain = &sm; }
    if (c->ext_amd_core) { amd.pNext = chain; chain = &amd; }
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = chain};
    vkGetPhysicalDeviceProperties2(c->phys, &p2);

    memcpy(c->uuid, id.deviceUUID, VK_UUID_SIZE);
    c->has_uuid = 1;
    c->subgroup_size = sg.subgroupSize;
    c->min_subgroup = c->max_subgroup = sg.subgroupSize;
    int compute = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
    c->subgroup_shuffle = compute && (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
    c->subgroup_vote = compute && (sg.supportedOperations & VK_SUBGROUP_FEATURE_VOTE_BIT);
    c->subgroup_arith = compute && (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
    if (has_sgc && sgc.minSubgroupSize && sgc.maxSubgroupSize) {
        c->min_subgroup = sgc.minSubgroupSize;
        c->max_subgroup = sgc.maxSubgroupSize;
        c->require_size_compute = (sgc.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
        c->size_control = 1;
        c->size_control_ext = api < VK_API_VERSION_1_3;
    }
    if (has_drv) {
        if (snprintf(c->driver_info, sizeof c->driver_info, "%s", drv.driverName) >= (int)sizeof c->driver_info)
            c->driver_info[sizeof c->driver_info - 1] = '\0';
        c->info.vendor_id = c->props.vendorID;
        /* driverInfo says more (e.g. "Mesa 22.3.6") unless it repeats the number */
        char num[64];
        driver_version_text(c, drv.driverID, NULL, num, sizeof num);
        const char *extra = drv.driverInfo[0] && strcmp(drv.driverInfo, num) != 0 ? drv.driverInfo : drv.driverName;
        driver_version_text(c, drv.driverID, extra, c->info.driver_version, sizeof c->info.driver_version);
    } else {
        driver_version_text(c, (VkDriverId)0, NULL, c->info.driver_version, sizeof c->info.driver_version);
    }
    if (c->ext_sm_builtins) c->compute_units = (int)sm.shaderSMCount;
    else if (c->ext_amd_core)
        c->compute_units = (int)(amd.shaderEngineCount * amd.shaderArraysPerEngineCount * amd.computeUnitsPerShaderArray);
}

static void probe_features(vk_caps *c, uint32_t api)
{
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDeviceVulkanMemoryModelFeatures vmm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    VkPhysicalDeviceSubgroupSizeControlFeaturesEXT sgc = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV nvcm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    avk_coopmat_features_khr khrcm = {.sType = AVK_STYPE_COOPMAT_FEATURES_KHR};
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    void *chain = &s16;
    int has_f16 = api >= VK_API_VERSION_1_2 || vk_has_extension(c->phys, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    int has_vmm = api >= VK_API_VERSION_1_2 || vk_has_extension(c->phys, VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
    int has_nv = vk_has_extension(c->phys, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    c->khr_coopmat_ext = vk_has_extension(c->phys, AVK_KHR_COOPMAT_EXTENSION);
    c->bf16_ext = vk_has_extension(c->phys, "VK_KHR_shader_bfloat16");
    const char *stats_env = getenv("ATTNVK_VK_PIPELINE_STATS");
    c->pipeline_stats = stats_env && strcmp(stats_env, "1") == 0 &&
                        vk_has_extension(c->phys, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    if (has_f16) { f16.pNext = chain; chain = &f16; }
    if (has_vmm) { vmm.pNext = chain; chain = &vmm; }
    if (c->size_control) { sgc.pNext = chain; chain = &sgc; }
    if (has_nv) { nvcm.pNext = chain; chain = &nvcm; }
    if (c->khr_coopmat_ext) { khrcm.pNext = chain; chain = &khrcm; }
    const int has_af = vk_has_extension(c->phys, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    if (has_af) { af.pNext = chain; chain = &af; }
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = chain};
    vkGetPhysicalDeviceFeatures2(c->phys, &f2);
    c->storage_16bit = s16.storageBuffer16BitAccess;
    c->shader_f16 = has_f16 && f16.shaderFloat16;
    c->ext_f16_int8 = c->shader_f16 && api < VK_API_VERSION_1_2;
    c->vk_memory_model = has_vmm && vmm.vulkanMemoryModel;
    c->ext_memory_model = c->vk_memory_model && api < VK_API_VERSION_1_2;
    c->full_subgroups = c->size_control && sgc.computeFullSubgroups;
    c->vk_mm_device_scope = c->vk_memory_model && vmm.vulkanMemoryModelDeviceScope;
    /* shaders outside the memory model (the emulation's) add at Device scope, which an
     * enabled memory model allows only with its device scope */
    c->atomic_f32_add = has_af && af.shaderBufferFloat32AtomicAdd && (!c->vk_memory_model || c->vk_mm_device_scope);
    if (c->size_control && !sgc.subgroupSizeControl) c->require_size_compute = 0;
    if (has_nv && nvcm.cooperativeMatrix && c->vk_memory_model && c->storage_16bit && c->shader_f16) pick_nv_shape(c);
    vk_khr_probe(c, khrcm.cooperativeMatrix);
}

static void fill_info(vk_caps *c)
{
    attnvk_device_info *d = &c->info;
    uint32_t api = c->props.apiVersion;
    snprintf(d->name, sizeof d->name, "%s", c->props.deviceName);
    snprintf(d->vendor, sizeof d->vendor, "%s", vendor_name(c->props.vendorID));
    d->vendor_id = c->props.vendorID;
    switch (c->props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: d->type = ATTNVK_DEVICE_DISCRETE; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: d->type = ATTNVK_DEVICE_INTEGRATED; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: d->type = ATTNVK_DEVICE_CPU; break;
    default: d->type = ATTNVK_DEVICE_OTHER; break;
    }
    snprintf(d->api_version, sizeof d->api_version, "Vulkan %u.%u.%u", VK_API_VERSION_MAJOR(api),
             VK_API_VERSION_MINOR(api), VK_API_VERSION_PATCH(api));
    if (avk_contains_nocase(c->props.deviceName, "llvmpipe")) snprintf(d->architecture, sizeof d->architecture, "llvmpipe");
    d->memory_bytes = c->device_local_bytes;
    d->compute_units = c->compute_units;
    int k = 0;
    for (uint32_t s = c->min_subgroup; s && s <= c->max_subgroup && k < ATTNVK_MAX_SUBGROUP_SIZES - 1; s *= 2)
        d->subgroup_sizes[k++] = (int)s;
    d->shared_memory_per_group = c->props.limits.maxComputeSharedMemorySize;
    d->max_workgroup_size = (int)c->props.limits.maxComputeWorkGroupInvocations;
    d->fp16 = c->shader_f16 && c->storage_16bit;
    d->bf16 = 1; /* bf16 storage with f32 arithmetic (the scalar variant): no device feature needed */
    d->cooperative_matrix = c->nv_coopmat || c->khr_coopmat;
    d->has_uuid = c->has_uuid;
    memcpy(d->uuid, c->uuid, ATTNVK_UUID_SIZE);
}

attnvk_status vk_probe_caps(VkPhysicalDevice phys, vk_caps *c)
{
    c->phys = phys;
    vkGetPhysicalDeviceProperties(phys, &c->props);
    uint32_t api = c->props.apiVersion;
    if (api < VK_API_VERSION_1_1) return ATTNVK_ERROR_UNSUPPORTED;
    pick_queue(c);
    if (c->queue_family == UINT32_MAX) return ATTNVK_ERROR_UNSUPPORTED;
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(phys, &mem);
    for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
        if ((mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && mem.memoryHeaps[i].size > c->device_local_bytes)
            c->device_local_bytes = mem.memoryHeaps[i].size;
    probe_properties(c, api);
    probe_features(c, api);
    vk_profile_clamp(c, c->profile); /* ATTNVK_VK_PROFILE, set by vk_init: a smaller GPU's limits */
    fill_info(c);
    vk_profile_identify(c);
    return ATTNVK_OK;
}

attnvk_status vk_describe(int device, attnvk_device_info *info)
{
    if (device < 0 || device >= avk_vk.device_count)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "vulkan: no device %d", device);
    vk_caps *c = &avk_vk.devices[device];
    if (vk_rs_layout_applies(c) && !c->rs_layout) { /* the default pick depends on the layout probe */
        avk_bdev *dev = NULL;
        if (avk_vk_open(device, &dev) == ATTNVK_OK) avk_vk_close(dev);
        if (!c->rs_layout) {
            snprintf(c->rs_layout_why, sizeof c->rs_layout_why, "coopmat-nv-rs: no device for the layout probe: %s",
                     attnvk_last_error());
            c->rs_layout = -1;
        }
        avk_clear_error();
    }
    *info = c->info;
    vk_default_variant(c, info->default_variant, sizeof info->default_variant);
    vk_profile_display(c, info);
    return ATTNVK_OK;
}
