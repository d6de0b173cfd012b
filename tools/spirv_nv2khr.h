/* Rewrites a SPIR-V module that uses SPV_NV_cooperative_matrix into one that
 * uses SPV_KHR_cooperative_matrix (docs/spirv-nv2khr.md): Debian 12's
 * glslang compiles GL_NV_cooperative_matrix but not GL_KHR_cooperative_matrix,
 * so the coopmat-khr variant is the coopmat-nv SPIR-V, rewritten at build time. */
#ifndef ATTNVK_SPIRV_NV2KHR_H
#define ATTNVK_SPIRV_NV2KHR_H

#include <stddef.h>
#include <stdint.h>

/* SPIR-V numbers both sides use (SPIR-V registry: SPV_NV_cooperative_matrix,
 * SPV_KHR_cooperative_matrix). */
enum {
    SPV_MAGIC = 0x07230203,
    SPV_OP_TYPE_COOPMAT_NV = 5358,
    SPV_OP_COOPMAT_LOAD_NV = 5359,
    SPV_OP_COOPMAT_STORE_NV = 5360,
    SPV_OP_COOPMAT_MULADD_NV = 5361,
    SPV_OP_COOPMAT_LENGTH_NV = 5362,
    SPV_OP_TYPE_COOPMAT_KHR = 4456,
    SPV_OP_COOPMAT_LOAD_KHR = 4457,
    SPV_OP_COOPMAT_STORE_KHR = 4458,
    SPV_OP_COOPMAT_MULADD_KHR = 4459,
    SPV_OP_COOPMAT_LENGTH_KHR = 4460,
    SPV_CAP_COOPMAT_NV = 5357,
    SPV_CAP_COOPMAT_KHR = 6022,
};

/* Cooperative Matrix Use of OpTypeCooperativeMatrixKHR. */
enum { SPV_USE_A = 0, SPV_USE_B = 1, SPV_USE_ACC = 2, SPV_USES = 3 };

/* Rewrites in[0..n) into a new module (*out, *out_n words, malloc'd). Returns 0,
 * or -1 with a one-line reason in err: not SPIR-V, truncated, or a use of NV
 * cooperative matrices this rewriter does not handle. */
int avk_spirv_nv2khr(const uint32_t *in, size_t n, uint32_t **out, size_t *out_n, char *err, size_t err_size);

/* A conversion whose operand is an accumulator and whose result an A or B
 * operand (the register-softmax bodies' P = f16(S)) has no KHR equivalent:
 * KHR conversions keep the Use. With acc_to_a_elements set, it becomes a
 * same-Use conversion and that many element moves per lane into an undefined
 * A (or B) matrix, A element i taking accumulator element acc_to_a_order[i]
 * (NULL: i). Correct only where the implementation's element order agrees:
 * the layout probe checks it on the device. 0: such a conversion is refused. */
enum { SPV_ACC_TO_A_MAX = 64 };
typedef struct avk_nv2khr_options {
    uint32_t acc_to_a_elements;
    const uint8_t *acc_to_a_order;
} avk_nv2khr_options;

int avk_spirv_nv2khr_with(const uint32_t *in, size_t n, const avk_nv2khr_options *opts, uint32_t **out, size_t *out_n,
                          char *err, size_t err_size);

#endif
