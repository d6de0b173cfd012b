/* Test hooks of attnvk_kernel_options.test_flags (issue #17: not public API).
 * The field stays in attnvk.h, reserved, so the struct's layout is unchanged;
 * callers outside attnvk's own tests and `attnvk check --test-wrong-kernel`
 * leave it 0. */
#ifndef AVK_TEST_HOOKS_H
#define AVK_TEST_HOOKS_H

enum {
    ATTNVK_TEST_SKIP_LAST_KV_TILE = 1u << 0, /* skips the last KV tile: deliberately wrong */
    /* Vulkan coopmat-khr on a device without VK_KHR_cooperative_matrix (lavapipe): the
     * variant's host path (selection, KHR shape, sizes, specialization) over the same
     * body with emulated 8x8 matrices (coopmat-emu's SPIR-V and tile sizes) */
    ATTNVK_TEST_EMULATE_KHR_MATRICES = 1u << 1,
};

#endif
