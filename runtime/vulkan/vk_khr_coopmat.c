/* VK_KHR_cooperative_matrix: whether the coopmat-khr variant can run on a
 * device (the extension, its feature, compute-stage support and a shape the
 * body takes), and why not, for the status a caller gets. */
#include "vulkan/vk_internal.h"
#include "vulkan/vk_khr_coopmat.h"

#include <stdio.h>
#include <stdlib.h>

int vk_khr_pick_shape(const avk_coopmat_properties_khr *list, uint32_t count, uint32_t *m, uint32_t *n, uint32_t *k)
{
    int found = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const avk_coopmat_properties_khr *p = &list[i];
        if ((int)p->AType != AVK_KHR_COMPONENT_F16 || (int)p->BType != AVK_KHR_COMPONENT_F16 ||
            (int)p->CType != AVK_KHR_COMPONENT_F32 || (int)p->ResultType != AVK_KHR_COMPONENT_F32 ||
            (int)p->scope != AVK_KHR_SCOPE_SUBGROUP || p->MSize != 16 || !p->NSize || !p->KSize || p->NSize % 8 ||
            p->KSize % 8)
            continue;
        if (!found || (p->NSize == 16 && p->KSize == 16)) {
            *m = p->MSize, *n = p->NSize, *k = p->KSize;
            found = 1;
        }
    }
    return found;
}

/* Fills c->khr_coopmat and the shape, or c->khr_coopmat_why. feature_on: the
 * device's cooperativeMatrix feature (probed with the others). */
void vk_khr_probe(vk_caps *c, int feature_on)
{
    c->khr_coopmat = 0;
    if (!c->khr_coopmat_ext) {
        snprintf(c->khr_coopmat_why, sizeof c->khr_coopmat_why, "the device does not expose VK_KHR_cooperative_matrix");
        return;
    }
    if (!feature_on || !c->vk_memory_model || !c->storage_16bit || !c->shader_f16) {
        snprintf(c->khr_coopmat_why, sizeof c->khr_coopmat_why,
                 "VK_KHR_cooperative_matrix needs the features cooperativeMatrix, vulkanMemoryModel, shaderFloat16 and "
                 "storageBuffer16BitAccess (%d %d %d %d)", feature_on != 0, c->vk_memory_model, c->shader_f16,
                 c->storage_16bit);
        return;
    }
    avk_coopmat_device_properties_khr stages = {.sType = AVK_STYPE_COOPMAT_DEVICE_PROPERTIES_KHR};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &stages};
    vkGetPhysicalDeviceProperties2(c->phys, &p2);
    if (!(stages.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)) {
        snprintf(c->khr_coopmat_why, sizeof c->khr_coopmat_why, "VK_KHR_cooperative_matrix is not supported in compute shaders");
        return;
    }
    avk_get_coopmat_properties_khr get = (avk_get_coopmat_properties_khr)vkGetInstanceProcAddr(
        avk_vk.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    uint32_t n = 0;
    if (!get || get(c->phys, &n, NULL) != VK_SUCCESS || !n) {
        snprintf(c->khr_coopmat_why, sizeof c->khr_coopmat_why,
                 "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR lists no shapes");
        return;
    }
    avk_coopmat_properties_khr *list = calloc(n, sizeof *list);
    if (!list) return;
    for (uint32_t i = 0; i < n; ++i) list[i].sType = AVK_STYPE_COOPMAT_PROPERTIES_KHR;
    if (get(c->phys, &n, list) == VK_SUCCESS) c->khr_coopmat = vk_khr_pick_shape(list, n, &c->khr_m, &c->khr_n, &c->khr_k);
    free(list);
    if (!c->khr_coopmat)
        snprintf(c->khr_coopmat_why, sizeof c->khr_coopmat_why,
                 "none of the %u VK_KHR_cooperative_matrix shapes is 16xNxK f16 x f16 -> f32 at subgroup scope "
                 "(N, K multiples of 8)", n);
}
