/* Checks the Vulkan tests run beyond the shared feature matrix. */
#ifndef ATTNVK_VK_TEST_CASES_H
#define ATTNVK_VK_TEST_CASES_H

#include "test_util.h"

/* Worst relative L2 seen per variant name, printed at the end. */
typedef struct vk_worst {
    char variant[64];
    double rel_l2;
    int cases;
} vk_worst;

typedef struct vk_tally {
    int passed, failed;
    vk_worst worst[12];
    int n_worst;
    uint64_t seed;
} vk_tally;

/* Runs p with opts; checks O (and the LSE against the reference when
 * check_lse). expect_pass = 0 inverts the verdict (deliberately wrong kernels). */
void vk_case(vk_tally *t, attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
             const char *label, int check_lse, int expect_pass);
/* Computes the rows in pieces through q_begin/q_count, checking rows outside
 * each piece stay untouched (poisoned). */
void vk_case_row_ranges(vk_tally *t, attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                        const char *label);
void vk_expect_status(vk_tally *t, attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                      attnvk_status want, const char *label);
void vk_print_worst(const vk_tally *t);

#endif
