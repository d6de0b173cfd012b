/* VK_KHR_cooperative_matrix declarations for Vulkan headers older than 1.3.255
 * (Debian 12 ships 1.3.239); values from the Vulkan registry. */
#ifndef ATTNVK_VK_KHR_COOPMAT_H
#define ATTNVK_VK_KHR_COOPMAT_H

#include <volk.h>

#define AVK_KHR_COOPMAT_EXTENSION "VK_KHR_cooperative_matrix"
/* VkComponentTypeKHR and VkScopeKHR values (the NV enums' values, which KHR kept) */
enum { AVK_KHR_COMPONENT_F16 = 0, AVK_KHR_COMPONENT_F32 = 1, AVK_KHR_SCOPE_SUBGROUP = 3 };

#ifndef VK_KHR_cooperative_matrix
#define AVK_STYPE_COOPMAT_FEATURES_KHR ((VkStructureType)1000506000)
#define AVK_STYPE_COOPMAT_PROPERTIES_KHR ((VkStructureType)1000506001)
#define AVK_STYPE_COOPMAT_DEVICE_PROPERTIES_KHR ((VkStructureType)1000506002)
typedef struct avk_coopmat_device_properties_khr {
    VkStructureType sType;
    void *pNext;
    VkShaderStageFlags cooperativeMatrixSupportedStages;
} avk_coopmat_device_properties_khr;
typedef struct avk_coopmat_features_khr {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} avk_coopmat_features_khr;
typedef struct avk_coopmat_properties_khr {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    VkComponentTypeNV AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeNV scope;
} avk_coopmat_properties_khr;
#else
#define AVK_STYPE_COOPMAT_FEATURES_KHR VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR
#define AVK_STYPE_COOPMAT_PROPERTIES_KHR VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR
#define AVK_STYPE_COOPMAT_DEVICE_PROPERTIES_KHR VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR
typedef VkPhysicalDeviceCooperativeMatrixPropertiesKHR avk_coopmat_device_properties_khr;
typedef VkPhysicalDeviceCooperativeMatrixFeaturesKHR avk_coopmat_features_khr;
typedef VkCooperativeMatrixPropertiesKHR avk_coopmat_properties_khr;
#endif
typedef VkResult(VKAPI_PTR *avk_get_coopmat_properties_khr)(VkPhysicalDevice, uint32_t *, avk_coopmat_properties_khr *);

/* vk_khr_coopmat.c. The shape coopmat-khr runs among a device's list: f16 x f16 ->
 * f32, subgroup scope, M = 16, N and K multiples of 8, 16x16x16 first (the H100
 * lists it beside f16 -> f16 and integer shapes). 1 with *m, *n, *k; 0 if none. */
int vk_khr_pick_shape(const avk_coopmat_properties_khr *list, uint32_t count, uint32_t *m, uint32_t *n, uint32_t *k);

#endif
