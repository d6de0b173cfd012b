/* test_vulkan --profile-quick (vk_profile_quick.c). */
#ifndef ATTNVK_VK_PROFILE_QUICK_H
#define ATTNVK_VK_PROFILE_QUICK_H

#include "vk_test_cases.h"

/* Under ATTNVK_VK_PROFILE: the profile's picks checked and run, then the
 * feature, cache and score cases once, all through the default selection. */
void vk_profile_quick(vk_tally *t, attnvk_device *dev);

#endif
