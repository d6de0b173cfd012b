/* The element layout coopmat-nv-rs assumes for a 16x16 f32 NV cooperative
 * matrix (shaders/flash_coopmat_nv_rs.comp), and the check of what
 * shaders/coopmat_nv_layout_probe.comp wrote on a device against it.
 * No Vulkan types: the check is unit-tested without a device. */
#ifndef ATTNVK_VK_RS_LAYOUT_H
#define ATTNVK_VK_RS_LAYOUT_H

#include <stddef.h>

enum {
    VK_RS_LANES = 32,                              /* subgroup size the layout is for */
    VK_RS_LEN = 8,                                 /* elements per lane of a 16x16 f32 matrix */
    VK_RS_PROBE_CAP = 64,                          /* elements per lane the probe records */
    /* the probe's output, in floats (coopMatStoreNV wants 16-byte aligned offsets: the product first) */
    VK_RS_PROBE_PRODUCT = 0,                       /* f16(m) x I, 16 x 16 row-major */
    VK_RS_PROBE_LENGTH = 256,                      /* m.length() */
    VK_RS_PROBE_ELEMS = 260,                       /* [lane * VK_RS_PROBE_CAP + i]: element i of lane */
    /* an f16 A operand loaded with (r, c) = r*16 + c: times I, and its first VK_RS_LEN elements per
     * lane (shown by ATTNVK_VK_RS_PROBE_DUMP: the order a KHR build's element moves must follow) */
    VK_RS_PROBE_A_PRODUCT = 2320,
    VK_RS_PROBE_A_ELEMS = 2576,
    /* NV only: I x an f16 B operand whose element i of lane was set to lane * 8 + i (16 x 16 row-major) */
    VK_RS_PROBE_B_PRODUCT = VK_RS_PROBE_A_ELEMS + VK_RS_LANES * VK_RS_PROBE_CAP,
    VK_RS_PROBE_FLOATS = VK_RS_PROBE_B_PRODUCT + 256
};

/* Row and column of element e of lane (the assumed layout). */
void vk_rs_layout_position(unsigned lane, unsigned e, unsigned *row, unsigned *col);

/* The probe's output on a device whose layout is the assumed one (tests). */
void vk_rs_layout_expected(float *probe);

/* 1 when the probe's output matches the assumed layout; else 0 and `why`
 * says where it differs ("coopmat-nv-rs: accumulator layout differs ...").
 * _for: the variants named (the KHR probe's "coopmat-khr-rs/decode-khr-rs"). */
int vk_rs_layout_check(const float *probe, char *why, size_t why_size);
int vk_rs_layout_check_for(const char *variants, const float *probe, char *why, size_t why_size);

/* The (k, n) element e of lane holds in an f16 B operand the matrix decode body builds in
 * registers (shaders/flash_decode_mma_body.glsl, AVK_DIRECT_KV): k = C's column, n = C's row. */
void vk_rs_layout_b_position(unsigned lane, unsigned e, unsigned *k, unsigned *n);

/* 1 when the probe's B product matches vk_rs_layout_b_position; else 0 and `why`. */
int vk_rs_layout_check_b(const float *probe, char *why, size_t why_size);

#endif
