/* Where each element of a matrix fragment lives, per lane: the NVIDIA
 * mma.sync m16n8k16 fragments the kernel is written against, and the AMD
 * matrix-instruction operands they are re-laid into (amd_matrix.h).
 * Plain C/C++ so the host tests can check the index maps (tests/hip). */
#ifndef ATTNVK_AMD_FRAGMENTS_H
#define ATTNVK_AMD_FRAGMENTS_H

#if defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__HIP__)
#define AVK_LAYOUT_FN static __host__ __device__ inline
#else
#define AVK_LAYOUT_FN static inline
#endif

/* ---- mma.sync m16n8k16 (lane 0..31 of a 32-lane warp), per the PTX ISA ---- */
/* A (16x16, row-major): element e = 0..7 is half e%2 of register e/2. */
AVK_LAYOUT_FN int avk_nv_a_row(int lane, int e) { return lane / 4 + 8 * ((e / 2) % 2); }
AVK_LAYOUT_FN int avk_nv_a_col(int lane, int e) { return 2 * (lane % 4) + e % 2 + 8 * (e / 4); }
/* B (16x8, k x n): element e = 0..3 is half e%2 of register e/2. */
AVK_LAYOUT_FN int avk_nv_b_k(int lane, int e) { return 2 * (lane % 4) + e % 2 + 8 * (e / 2); }
AVK_LAYOUT_FN int avk_nv_b_n(int lane, int e) { (void)e; return lane / 4; }
/* C/D (16x8, f32): element e = 0..3. */
AVK_LAYOUT_FN int avk_nv_c_row(int lane, int e) { return lane / 4 + 8 * (e / 2); }
AVK_LAYOUT_FN int avk_nv_c_col(int lane, int e) { return 2 * (lane % 4) + e % 2; }

/* ---- v_mfma_f32_16x16x16{f16,bf16_1k} (lane 0..63 of a wave64), CDNA ISA ---- */
/* A: lane holds 4 consecutive k of one row; B: 4 consecutive k of one column. */
AVK_LAYOUT_FN int avk_mfma_a_row(int lane) { return lane % 16; }
AVK_LAYOUT_FN int avk_mfma_k0(int lane) { return 4 * (lane / 16); }
AVK_LAYOUT_FN int avk_mfma_b_col(int lane) { return lane % 16; }
/* D: element j = 0..3 of the lane. */
AVK_LAYOUT_FN int avk_mfma_d_row(int lane, int j) { return 4 * (lane / 16) + j; }
AVK_LAYOUT_FN int avk_mfma_d_col(int lane) { return lane % 16; }

/* ---- v_wmma_f32_16x16x16_{f16,bf16} wave32 (lane 0..31), RDNA3 ISA ---- */
/* A: lane holds all 16 k of row lane%16; B: all 16 k of column lane%16
 * (lanes 16..31 repeat lanes 0..15). D: element j = 0..7. */
AVK_LAYOUT_FN int avk_wmma_a_row(int lane) { return lane % 16; }
AVK_LAYOUT_FN int avk_wmma_b_col(int lane) { return lane % 16; }
AVK_LAYOUT_FN int avk_wmma_d_row(int lane, int j) { return 2 * j + lane / 16; }
AVK_LAYOUT_FN int avk_wmma_d_col(int lane) { return lane % 16; }

/* ---- the per-wave scratch the re-layout goes through (in 16-bit units) ----
 * Each 32-lane warp w of the wave stores its A as [16 rows][16 k], its B
 * as [8 n][16 k] (k contiguous, as both AMD operands read it) and receives
 * its D as f32 [16 rows][8 cols]. */
enum {
    AVK_SCRATCH_A = 0,                    /* u16 offset of warp 0's A; warp w at + w * 256 */
    AVK_SCRATCH_B = 2 * 256,              /* warp w at + w * 128 */
    AVK_SCRATCH_D = 2 * 256 + 2 * 128,    /* f32 [2][16][8]: 2 * 128 floats = 512 u16 */
    AVK_SCRATCH_U16_PER_WAVE = 2 * 256 + 2 * 128 + 2 * 2 * 128,
};
AVK_LAYOUT_FN int avk_scratch_a(int warp, int row, int k) { return AVK_SCRATCH_A + warp * 256 + row * 16 + k; }
AVK_LAYOUT_FN int avk_scratch_b(int warp, int n, int k) { return AVK_SCRATCH_B + warp * 128 + n * 16 + k; }
/* in f32 units from the start of the D area */
AVK_LAYOUT_FN int avk_scratch_d(int warp, int row, int col) { return warp * 128 + row * 8 + col; }

#endif
