/* VK_KHR_cooperative_matrix declarations for Vulkan headers older than 1.3.255
 * (Debian 12 ships 1.3.239); values from the Vulkan registry. */
#ifndef ATTNVK_VK_KHR_COOPMAT_H
#define ATTNVK_VK_KHR_COOPMAT_H

#include <volk.h>

#define AVK_KHR_COOPMAT_EXTENSION "VK_KHR_cooperative_matrix"

#ifndef VK_KHR_cooperative_matrix
#define AVK_STYPE_COOPMAT_FEATURES_KHR ((VkStructureType)1000506000)
#define AVK_STYPE_COOPMAT_PROPERTIES_KHR ((VkStructureType)1000506001)
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
typedef VkPhysicalDeviceCooperativeMatrixFeaturesKHR avk_coopmat_features_khr;
typedef VkCooperativeMatrixPropertiesKHR avk_coopmat_properties_khr;
#endif
typedef VkResult(VKAPI_PTR *avk_get_coopmat_properties_khr)(VkPhysicalDevice, uint32_t *, avk_coopmat_properties_khr *);

#endif
