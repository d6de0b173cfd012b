/* Device families for the tuning table: ATTNVK_VK_PROFILE=NAME clamps the probed
 * limits to those of a smaller (integrated or mobile) GPU, so the backend picks
 * and builds its variants as it would there; and the architecture name a real
 * device's family rows match (rdna2, rdna3, xe-lp, xe-hpg, xe2, mali, adreno, apple). */
#ifndef ATTNVK_VK_PROFILE_H
#define ATTNVK_VK_PROFILE_H

#include "vulkan/vk_internal.h"

/* What a profile allows; a device keeps its own limit where it is lower. */
typedef struct vk_profile {
    const char *name;
    const char *vendor, *architecture; /* the table rows it selects ("" vendor: the generic rows) */
    uint32_t shared_bytes;             /* maxComputeSharedMemorySize */
    uint32_t min_subgroup, max_subgroup;
    int subgroup_ops;                  /* shuffle, vote and arithmetic in compute shaders */
    int f16;                           /* shaderFloat16 and storageBuffer16BitAccess */
    int int64_atomics;                 /* attnvk's kernels use none: recorded, never clamped */
    const char *summary;               /* one line for `attnvk devices` and errors */
} vk_profile;

/* The profile ATTNVK_VK_PROFILE names (NULL when unset or empty), or
 * INVALID_ARGUMENT with the known names when it names none. */
attnvk_status vk_profile_selected(const vk_profile **out);
/* The profile by name, NULL when there is none (tests). */
const vk_profile *vk_profile_find(const char *name);
/* Clamps c's limits and features to p (never above the device's own) and notes
 * what the device could not follow in c->profile_note. Before fill_info. */
void vk_profile_clamp(vk_caps *c, const vk_profile *p);
/* After fill_info: the identity the tuning table sees (c->info's vendor,
 * architecture and name: the profile's, else the real device's architecture). */
void vk_profile_identify(vk_caps *c);
/* What describe() shows: the real name and vendor, marked with the profile. */
void vk_profile_display(const vk_caps *c, attnvk_device_info *info);

#endif
