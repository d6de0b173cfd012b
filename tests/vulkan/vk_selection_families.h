/* test_vk_selection: the family rows and the ATTNVK_VK_PROFILE profiles (vk_selection_families.c). */
#ifndef ATTNVK_VK_SELECTION_FAMILIES_H
#define ATTNVK_VK_SELECTION_FAMILIES_H

/* Returns the checks passed; failures count through EXPECT. */
int check_families(void);

#endif
