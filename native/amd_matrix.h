/* The kernel's matrix contract (attn_portability.h, AVK_MMA_SM80: mma.sync
 * m16n8k16 with f32 accumulate, ldmatrix(.trans), cp.async) on AMD matrix
 * units. Targets:
 *   gfx90a, gfx940..942  MFMA v_mfma_f32_16x16x16{f16,bf16_1k}, wave64
 *   gfx1100..1103        WMMA v_wmma_f32_16x16x16_{f16,bf16}, wave32
 *   others (gfx1030...)  no matrix unit: AVK_MMA_SM80 stays undefined and the
 *                        host picks the kernel's portable path (AVK_MMA=0).
 *
 * Fragments keep the NVIDIA per-lane layout the kernel relies on (P goes from
 * the accumulator straight into the A operand, the mask reads row/column per
 * lane), so each avk_mma re-lays its operands through a small per-wave LDS
 * scratch into the AMD operand layout (index maps in amd_fragments.h) and
 * the product back. On wave64 one MFMA pair serves both 32-lane warps of the
 * wavefront: D_w = A_w x [B_0 | B_1], keeping columns of B_w. ldmatrix is a
 * shuffle of row addresses plus LDS loads; cp.async is a synchronous copy, so
 * commit/wait are no-ops (the kernel's __syncthreads still order the tiles).
 * A matrix instruction needs the whole wavefront's registers: when only part
 * of it reaches avk_mma (a warp of a wave64 skipping a tile on its own), the
 * active warps multiply from the scratch with plain FMAs instead. */
#ifndef ATTNVK_AMD_MATRIX_H
#define ATTNVK_AMD_MATRIX_H

#include "amd_fragments.h"

#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define AVK_AMD_MFMA 1
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__)
#define AVK_AMD_WMMA 1
#endif

#if defined(AVK_AMD_MFMA) || defined(AVK_AMD_WMMA)
#define AVK_MMA_SM80 1

typedef float avk_f32x4 __attribute__((ext_vector_type(4)));
typedef float avk_f32x8 __attribute__((ext_vector_type(8)));
typedef _Float16 avk_f16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 avk_f16x16 __attribute__((ext_vector_type(16)));
typedef short avk_i16x4 __attribute__((ext_vector_type(4)));
typedef short avk_i16x16 __attribute__((ext_vector_type(16)));
typedef avk_u32 avk_u32x2 __attribute__((ext_vector_type(2)));
typedef avk_u32 avk_u32x4 __attribute__((ext_vector_type(4)));
typedef avk_u32 avk_u32x8 __attribute__((ext_vector_type(8)));

/* waves per workgroup: the kernel's AVK_THREADS when known */
#ifdef AVK_THREADS
#define AVK_AMD_WAVES ((AVK_THREADS + AVK_WARP - 1) / AVK_WARP)
#else
#define AVK_AMD_WAVES (1024 / AVK_WARP)
#endif
/* LDS the re-layout adds to the kernel's own, in bytes (the host budgets it) */
#define AVK_AMD_SCRATCH_BYTES (AVK_AMD_WAVES * AVK_SCRATCH_U16_PER_WAVE * 2)

AVK_DEVICE avk_u16 *avk_amd_scratch(void)
{
    __shared__ __attribute__((aligned(16))) avk_u16 scratch[AVK_AMD_WAVES][AVK_SCRATCH_U16_PER_WAVE];
    return scratch[threadIdx.x / AVK_WARP];
}

/* LDS operations of one wavefront complete in order; this only keeps the
 * compiler from moving them across the exchange. */
AVK_DEVICE void avk_amd_wave_sync(void) { avk_syncwarp(); }

/* Stores this lane's NVIDIA A (4 regs) and B (2 regs) of its 32-lane warp. */
AVK_DEVICE void avk_amd_put_operands(avk_u16 *s, int warp, int l, const avk_u32 a[4], const avk_u32 b[2])
{
#pragma unroll
    for (int r = 0; r < 4; ++r) /* register r = elements 2r (low half) and 2r+1, adjacent k */
        *(avk_u32 *)&s[avk_scratch_a(warp, avk_nv_a_row(l, 2 * r), avk_nv_a_col(l, 2 * r))] = a[r];
#pragma unroll
    for (int r = 0; r < 2; ++r)
        *(avk_u32 *)&s[avk_scratch_b(warp, avk_nv_b_n(l, 2 * r), avk_nv_b_k(l, 2 * r))] = b[r];
}

/* Adds (ZC: stores) this warp's f32 16x8 product from the scratch into d (NVIDIA C layout). */
template <int ZC>
AVK_DEVICE void avk_amd_take_product(const avk_u16 *s, int warp, int l, float d[4])
{
    const float *sd = (const float *)(s + AVK_SCRATCH_D);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const float x = sd[avk_scratch_d(warp, avk_nv_c_row(l, e), avk_nv_c_col(l, e))];
        d[e] = ZC ? x : d[e] + x;
    }
}

/* 1 when every lane of the wavefront is executing (EXEC all ones). */
AVK_DEVICE bool avk_amd_whole_wave(void)
{
    const unsigned long long active = __ballot(1);
    return AVK_WARP == 64 ? active == ~0ull : (active & 0xffffffffull) == 0xffffffffull;
}

/* The warp's product straight from its scratch operands, lane by lane: the
 * rare path of a partly active wavefront. */
template <int BF16, int ZC>
AVK_DEVICE void avk_amd_mma_lanes(const avk_u16 *s, int warp, int l, float d[4])
{
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const int row = avk_nv_c_row(l, e), col = avk_nv_c_col(l, e);
        float x = 0.f;
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            const avk_u16 av = s[avk_scratch_a(warp, row, k)], bv = s[avk_scratch_b(warp, col, k)];
            x += BF16 ? avk_bf16_to_f32(av) * avk_bf16_to_f32(bv) : avk_f16_to_f32(av) * avk_f16_to_f32(bv);
        }
        d[e] = ZC ? x : d[e] + x;
    }
}

#if defined(AVK_AMD_MFMA)
template <int BF16, int ZC>
AVK_DEVICE void avk_amd_mma(float d[4], const avk_u32 a[4], const avk_u32 b[2])
{
    avk_u16 *s = avk_amd_scratch();
    const int lane = threadIdx.x % 64, warp = lane / 32, l = lane % 32;
    avk_amd_put_operands(s, warp, l, a, b);
    avk_amd_wave_sync();
    if (!avk_amd_whole_wave()) {
        avk_amd_mma_lanes<BF16, ZC>(s, warp, l, d);
        avk_amd_wave_sync();
        return;
    }
    const int k0 = avk_mfma_k0(lane), n = avk_mfma_b_col(lane);
    const avk_u32x2 a0 = *(const avk_u32x2 *)&s[avk_scratch_a(0, avk_mfma_a_row(lane), k0)];
    const avk_u32x2 a1 = *(const avk_u32x2 *)&s[avk_scratch_a(1, avk_mfma_a_row(lane), k0)];
    const avk_u32x2 bn = *(const avk_u32x2 *)&s[avk_scratch_b(n / 8, n % 8, k0)];
    const avk_f32x4 zero = {0.f, 0.f, 0.f, 0.f};
    avk_f32x4 d0, d1;
    if (BF16) {
        d0 = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(avk_i16x4, a0),
                                                       __builtin_bit_cast(avk_i16x4, bn), zero, 0, 0, 0);
        d1 = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(avk_i16x4, a1),
                                                       __builtin_bit_cast(avk_i16x4, bn), zero, 0, 0, 0);
    } else {
        d0 = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(avk_f16x4, a0),
                                                   __builtin_bit_cast(avk_f16x4, bn), zero, 0, 0, 0);
        d1 = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(avk_f16x4, a1),
                                                   __builtin_bit_cast(avk_f16x4, bn), zero, 0, 0, 0);
    }
    /* columns 0..7 of D_0 are warp 0's A_0 B_0, columns 8..15 of D_1 warp 1's A_1 B_1 */
    const int col = avk_mfma_d_col(lane), owner = col / 8;
    const avk_f32x4 mine = owner == 0 ? d0 : d1;
    float *sd = (float *)(s + AVK_SCRATCH_D);
#pragma unroll
    for (int j = 0; j < 4; ++j) sd[avk_scratch_d(owner, avk_mfma_d_row(lane, j), col % 8)] = mine[j];
    avk_amd_wave_sync();
    avk_amd_take_product<ZC>(s, warp, l, d);
    avk_amd_wave_sync();
}
#else /* WMMA, wave32: the warp is the wavefront */
template <int BF16, int ZC>
AVK_DEVICE void avk_amd_mma(float d[4], const avk_u32 a[4], const avk_u32 b[2])
{
    avk_u16 *s = avk_amd_scratch();
    const int lane = threadIdx.x % 32;
    avk_amd_put_operands(s, 0, lane, a, b);
    avk_amd_wave_sync();
    if (!avk_amd_whole_wave()) {
        avk_amd_mma_lanes<BF16, ZC>(s, 0, lane, d);
        avk_amd_wave_sync();
        return;
    }
    const avk_u32x8 av = *(const avk_u32x8 *)&s[avk_scratch_a(0, avk_wmma_a_row(lane), 0)];
    const int n = avk_wmma_b_col(lane);
    avk_u32x8 bv = {0, 0, 0, 0, 0, 0, 0, 0}; /* columns 8..15 of B are zero */
    if (n < 8) bv = *(const avk_u32x8 *)&s[avk_scratch_b(0, n, 0)];
    const avk_f32x8 zero = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    avk_f32x8 dv;
    if (BF16)
        dv = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(__builtin_bit_cast(avk_i16x16, av),
                                                         __builtin_bit_cast(avk_i16x16, bv), zero);
    else
        dv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(__builtin_bit_cast(avk_f16x16, av),
                                                        __builtin_bit_cast(avk_f16x16, bv), zero);
    const int col = avk_wmma_d_col(lane);
    float *sd = (float *)(s + AVK_SCRATCH_D);
    if (col < 8) {
#pragma unroll
        for (int j = 0; j < 8; ++j) sd[avk_scratch_d(0, avk_wmma_d_row(lane, j), col)] = dv[j];
    }
    avk_amd_wave_sync();
    avk_amd_take_product<ZC>(s, 0, lane, d);
    avk_amd_wave_sync();
}
#endif

/* D(16x8 f32) += A(16x16, row) * B(16x8, col); fragments as in the PTX ISA.
 * _zc: D = A * B (C = 0). */
AVK_DEVICE void avk_mma_f16(float d[4], const avk_u32 a[4], const avk_u32 b[2]) { avk_amd_mma<0, 0>(d, a, b); }
AVK_DEVICE void avk_mma_bf16(float d[4], const avk_u32 a[4], const avk_u32 b[2]) { avk_amd_mma<1, 0>(d, a, b); }
AVK_DEVICE void avk_mma_f16_zc(float d[4], const avk_u32 a[4], const avk_u32 b[2]) { avk_amd_mma<0, 1>(d, a, b); }
AVK_DEVICE void avk_mma_bf16_zc(float d[4], const avk_u32 a[4], const avk_u32 b[2]) { avk_amd_mma<1, 1>(d, a, b); }

/* Four 8x8 b16 matrices; lane l of each 32-lane warp gives the row address
 * of matrix l/8; lane l receives row l/4, columns 2(l%4), 2(l%4)+1. */
AVK_DEVICE void avk_ldmatrix_x4(avk_u32 r[4], avk_u32 addr)
{
    const int l = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const avk_u32 row = (avk_u32)__shfl((int)addr, 8 * i + l / 4, 32);
        r[i] = *(const avk_lds_u32 *)(unsigned long long)(row + 4 * (l % 4));
    }
}

/* Transposed: lane l receives M[2(l%4)][l/4] (low) and M[2(l%4)+1][l/4]. */
AVK_DEVICE void avk_ldmatrix_x4_trans(avk_u32 r[4], avk_u32 addr)
{
    const int l = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const avk_u32 row0 = (avk_u32)__shfl((int)addr, 8 * i + 2 * (l % 4), 32);
        const avk_u32 row1 = (avk_u32)__shfl((int)addr, 8 * i + 2 * (l % 4) + 1, 32);
        const avk_u32 lo = *(const avk_lds_u16 *)(unsigned long long)(row0 + 2 * (l / 4));
        const avk_u32 hi = *(const avk_lds_u16 *)(unsigned long long)(row1 + 2 * (l / 4));
        r[i] = lo | (hi << 16);
    }
}

/* lo goes to the low 16 bits (the lower column of a fragment pair). */
AVK_DEVICE avk_u32 avk_pack_f16x2(float lo, float hi)
{
    return (avk_u32)avk_f32_to_f16(lo) | ((avk_u32)avk_f32_to_f16(hi) << 16);
}

AVK_DEVICE avk_u32 avk_pack_bf16x2(float lo, float hi)
{
    return (avk_u32)avk_f32_to_bf16(lo) | ((avk_u32)avk_f32_to_bf16(hi) << 16);
}

/* 16-byte global->LDS copy, done now; src_bytes < 16 zero-fills the rest. */
AVK_DEVICE void avk_cp_async16(avk_u32 smem, const void *gmem, int src_bytes)
{
    avk_u32x4 v = {0u, 0u, 0u, 0u};
    if (src_bytes >= 16) {
        v = *(const avk_u32x4 *)gmem;
    } else {
        const unsigned char *g = (const unsigned char *)gmem;
        avk_u32 w[4] = {0u, 0u, 0u, 0u};
        for (int i = 0; i < src_bytes; ++i) w[i / 4] |= (avk_u32)g[i] << (8 * (i % 4));
        v.x = w[0], v.y = w[1], v.z = w[2], v.w = w[3];
    }
    *(__attribute__((address_space(3))) avk_u32x4 *)(unsigned long long)smem = v;
}

AVK_DEVICE void avk_cp_async_commit(void) {}
#define AVK_CP_ASYNC_WAIT(n) ((void)(n))

#endif /* MFMA or WMMA */
#endif
