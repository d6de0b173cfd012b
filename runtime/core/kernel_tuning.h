/* What `attnvk tune` and `attnvk devices` need from the core beyond the public
 * API: a backend's candidate configurations, a kernel prepared with one of them,
 * and where a device's default pick comes from (core/tuning.h's sources). */
#ifndef ATTNVK_KERNEL_TUNING_H
#define ATTNVK_KERNEL_TUNING_H

#include "attnvk/attnvk.h"
#include "core/tuning.h"

/* The configurations of attnvk's kernel the device's backend accepts for p
 * (its own checks: shared memory, workgroup and subgroup limits, features),
 * up to max of them, distinct; 0 when the backend offers none. Variant names
 * point to static strings. */
int avk_device_tuning_candidates(attnvk_device *dev, const attnvk_problem *p, avk_tuning *out, int max);
/* attnvk_kernel_prepare with entry instead of the tuning file and the table
 * (opts may set split_kv, write_lse and test_flags only); the params say "tuning=option". */
attnvk_status avk_kernel_prepare_explicit(attnvk_device *dev, const attnvk_problem *p,
                                          const attnvk_kernel_options *opts, const avk_tuning *entry,
                                          attnvk_kernel **out, attnvk_kernel_info *info);
/* Where device i's default_variant came from: table or default (the user's file
 * is not consulted: see avk_user_tuning_find). */
avk_pick_source avk_device_default_source(const attnvk_context *ctx, int i);

#endif
