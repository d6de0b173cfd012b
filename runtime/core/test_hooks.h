/* Test hooks of attnvk_kernel_options.test_flags (issue #17: not public API).
 * The field stays in attnvk.h, reserved, so the struct's layout is unchanged;
 * callers outside attnvk's own tests and `attnvk check --test-wrong-kernel`
 * leave it 0. */
#ifndef AVK_TEST_HOOKS_H
#define AVK_TEST_HOOKS_H

enum { ATTNVK_TEST_SKIP_LAST_KV_TILE = 1u << 0 }; /* skips the last KV tile: deliberately wrong */

#endif
