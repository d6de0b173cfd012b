/* `attnvk tune`'s candidates on Vulkan (backend.h's tuning_candidates). */
#ifndef ATTNVK_VK_CANDIDATES_H
#define ATTNVK_VK_CANDIDATES_H

#include "vulkan/vk_internal.h"
#include "core/tuning.h"

int vk_tuning_candidates(avk_bdev *dev, const attnvk_problem *p, avk_tuning *out, int max);

#endif
