/* What the Vulkan variant table (vk_variants.c) and the decode bodies' sizing
 * (vk_decode_config.c) share: the meaning of avk_tuning.extra[] and small
 * shape helpers; and the decode bodies' sizing itself. Internal. */
#ifndef ATTNVK_VK_CONFIG_UTIL_H
#define ATTNVK_VK_CONFIG_UTIL_H

#include "core/layout.h" /* avk_head_dim_v */
#include "vulkan/vk_variants.h"

/* avk_tuning.extra[] slots: scalar shaders' subgroup reductions; coopmat K/V
 * stages and S accumulator chains (0 = automatic); register-softmax variants:
 * Q in shared memory instead of registers; decode: lanes per key, keys per
 * step (0 = automatic), workgroups per compute unit for the split plan and
 * values of a row per lane (0 = a 16-byte load's); matrix decode: the fewest
 * packed rows it is picked for unless named, splits in whole waves (1) and
 * resident workgroups */
enum { X_SG_REDUCE = 0, X_KV_STAGES = 1, X_S_CHAINS = 2, X_Q_SHARED = 3, X_KEY_LANES = 0, X_KEYS_PER_STEP = 1, X_RESIDENT = 2,
       X_SLICE = 3, X_MIN_ROWS = 0, X_WHOLE_WAVES = 1 };

static inline int pow2(uint32_t x) { return x && !(x & (x - 1)); }

/* The matrix bodies pad Dk and Dv with zero columns to a multiple of this
 * (shaders/flash_coopmat_common.glsl's MAT_GRAIN), so D = 40 or 72 run there. */
enum { VK_MAT_GRAIN = 16 };
static inline uint32_t mat_pad(uint32_t d) { return (d + VK_MAT_GRAIN - 1) / VK_MAT_GRAIN * VK_MAT_GRAIN; }

/* Dk (Q, K and the Q.K product) and Dv (V, O and P.V). */
static inline uint32_t dim_k(const attnvk_problem *p) { return (uint32_t)p->head_dim; }
static inline uint32_t dim_v(const attnvk_problem *p) { return (uint32_t)avk_head_dim_v(p); }
static inline uint32_t dim_max(const attnvk_problem *p) { return dim_k(p) > dim_v(p) ? dim_k(p) : dim_v(p); }
static inline int divides_both(uint32_t x, uint32_t dk, uint32_t dv) { return dk % x == 0 && dv % x == 0; }

/* Registers per lane for each of Q and O in the decode body: the most it
 * accepts, and the most grown packed rows take (more spills on NVIDIA). */
enum { VK_DECODE_MAX_REGS = 128, VK_DECODE_GROWN_REGS = 64 };

/* The decode body's and the matrix decode body's derived sizes and limits
 * (vk_decode_config.c): "" when cfg can run, else why not. */
const char *vk_finish_decode_config(const vk_caps *c, const attnvk_problem *p, vk_config *cfg, const avk_tuning *e);
const char *vk_finish_decode_mma_config(const vk_caps *c, const attnvk_problem *p, vk_config *cfg, const avk_tuning *e);

#endif
