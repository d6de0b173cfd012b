/* Khronos validation (ATTNVK_VK_VALIDATION=1): messages go to stderr through
 * VK_EXT_debug_utils and errors are counted, so tests can fail on any. */
#ifndef ATTNVK_VK_VALIDATION_H
#define ATTNVK_VK_VALIDATION_H

int avk_vk_validation_enabled(void);
unsigned avk_vk_validation_errors(void);

#endif
