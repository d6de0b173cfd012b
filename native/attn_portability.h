/* Portability layer for the native flash-attention kernel (attn_fwd.cu):
 * compiled by NVRTC/nvcc (CUDA) and by hipRTC/hipcc (HIP). No standard or
 * vendor headers: NVRTC is given only this file, and the kernel works on raw
 * 16-bit storage with explicit conversions.
 *
 * What a target provides:
 *   AVK_WARP            lanes per warp/wavefront
 *   avk_shfl_xor        butterfly shuffle of a float within a warp
 *   avk_any, avk_first_lane, avk_syncwarp  warp votes, warp barrier
 *   avk_launch_dependents / avk_wait_primary  programmatic dependent launch
 *                       (Hopper): the split-KV merge starts while the split
 *                       kernel finishes; no-ops where absent
 *   avk_exp2            fast 2^x (the kernel folds scale*log2(e) into S)
 *   avk_f16_to_f32 / avk_f32_to_f16, avk_bf16_to_f32 / avk_f32_to_bf16
 *   avk_smem_addr       32-bit shared-memory address of a generic pointer
 *   AVK_MMA_SM80        1 where mma.sync m16n8k16 + ldmatrix + cp.async exist;
 *                       then avk_mma_f16 / avk_mma_bf16 (and _zc: C = 0),
 *                       avk_ldmatrix_x4(_trans),
 *                       avk_pack_f16x2 / avk_pack_bf16x2, avk_cp_async16,
 *                       avk_cp_async_commit, AVK_CP_ASYNC_WAIT(n)
 *   AVK_BULK_SM90       1 on CUDA sm_90+: avk_bulk_copy (cp.async.bulk) and its
 *                       mbarrier (avk_mbar_init, _arrive_expect_tx, _wait);
 *                       never defined for HIP
 * The AMD side (gfx90a/gfx940/gfx1030) lives in amd_portability.h. */
#ifndef ATTNVK_ATTN_PORTABILITY_H
#define ATTNVK_ATTN_PORTABILITY_H

typedef unsigned short avk_u16;
typedef unsigned int avk_u32;
typedef unsigned long long avk_u64;

#define AVK_DEVICE __device__ __forceinline__
#define AVK_KERNEL extern "C" __global__

#if defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define AVK_TARGET_HIP 1
#include "amd_portability.h"
#else /* ---------------------------------------------------------------- CUDA */
#define AVK_TARGET_CUDA 1
#define AVK_WARP 32
#define AVK_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]

AVK_DEVICE float avk_shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
AVK_DEVICE bool avk_any(bool pred) { return __any_sync(0xffffffffu, pred) != 0; }
/* the lowest lane of the warp whose pred holds, or -1 */
AVK_DEVICE int avk_first_lane(bool pred) { return __ffs(__ballot_sync(0xffffffffu, pred)) - 1; }
/* bit i: lane i's pred */
AVK_DEVICE unsigned avk_vote_bits(bool pred) { return __ballot_sync(0xffffffffu, pred); }
AVK_DEVICE void avk_syncwarp(void) { __syncwarp(); }
AVK_DEVICE void avk_launch_dependents(void)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}
AVK_DEVICE void avk_wait_primary(void)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

AVK_DEVICE float avk_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

AVK_DEVICE float avk_f16_to_f32(avk_u16 h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

AVK_DEVICE avk_u16 avk_f32_to_f16(float f)
{
    avk_u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

AVK_DEVICE float avk_bf16_to_f32(avk_u16 h) { return __uint_as_float((avk_u32)h << 16); }

/* Round to nearest even; NaN stays NaN (works on every architecture). */
AVK_DEVICE avk_u16 avk_f32_to_bf16(float f)
{
    avk_u32 u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (avk_u16)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (avk_u16)(u >> 16);
}

AVK_DEVICE avk_u32 avk_smem_addr(const void *p) { return (avk_u32)__cvta_generic_to_shared(p); }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define AVK_MMA_SM80 1

/* D(16x8 f32) += A(16x16, row) * B(16x8, col); fragments as in the PTX ISA. */
AVK_DEVICE void avk_mma_f16(float d[4], const avk_u32 a[4], const avk_u32 b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

AVK_DEVICE void avk_mma_bf16(float d[4], const avk_u32 a[4], const avk_u32 b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* The same with C = 0 (the first k-step of a product): no zeroing moves. */
AVK_DEVICE void avk_mma_f16_zc(float d[4], const avk_u32 a[4], const avk_u32 b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.f));
}

AVK_DEVICE void avk_mma_bf16_zc(float d[4], const avk_u32 a[4], const avk_u32 b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.f));
}

/* Four 8x8 b16 matrices; lane l gives the row address of matrix l/8. */
AVK_DEVICE void avk_ldmatrix_x4(avk_u32 r[4], avk_u32 addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

AVK_DEVICE void avk_ldmatrix_x4_trans(avk_u32 r[4], avk_u32 addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* lo goes to the low 16 bits (the lower column of a fragment pair). */
AVK_DEVICE avk_u32 avk_pack_f16x2(float lo, float hi)
{
    avk_u32 r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

AVK_DEVICE avk_u32 avk_pack_bf16x2(float lo, float hi)
{
    avk_u32 r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

/* 16-byte global->shared copy; src_bytes < 16 zero-fills the rest (edges).
 * AVK_CP_L2_PREFETCH (64, 128 or 256; 0: none) asks L2 to fetch that many
 * bytes around each copy (ATTNVK_CUDA_DEFINES=-DAVK_CP_L2_PREFETCH=N for an
 * A/B). H100 decode, B=8 H=32/8 D=128 f16 (session 20, sweep-s20-decode2):
 * 64k 0.749 -> 0.738 ms with 128 bytes (256: 0.740), 32k 0.379 -> 0.375. */
#ifndef AVK_CP_L2_PREFETCH
#define AVK_CP_L2_PREFETCH 128
#endif
#if AVK_CP_L2_PREFETCH
#define AVK_PTX_L2_BYTES_(n) ".L2::" #n "B"
#define AVK_PTX_L2_BYTES(n) AVK_PTX_L2_BYTES_(n)
#define AVK_CP_L2_HINT AVK_PTX_L2_BYTES(AVK_CP_L2_PREFETCH)
#else
#define AVK_CP_L2_HINT ""
#endif
AVK_DEVICE void avk_cp_async16(avk_u32 smem, const void *gmem, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global" AVK_CP_L2_HINT " [%0], [%1], 16, %2;" ::"r"(smem), "l"(gmem),
                 "r"(src_bytes));
}

/* 8- and 4-byte copies (cp.async.ca): raw rows of quantized K/V are only
 * 8- or 4-byte aligned (a q8_0 row of D=128 is 136 bytes) */
AVK_DEVICE void avk_cp_async8(avk_u32 smem, const void *gmem, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(smem), "l"(gmem), "r"(src_bytes));
}
AVK_DEVICE void avk_cp_async4(avk_u32 smem, const void *gmem, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem), "l"(gmem), "r"(src_bytes));
}

AVK_DEVICE void avk_cp_async_commit(void) { asm volatile("cp.async.commit_group;"); }
#define AVK_CP_ASYNC_WAIT(n) asm volatile("cp.async.wait_group %0;" ::"n"(n))

#endif /* sm_80 */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* Hopper's bulk copies (cp.async.bulk: the TMA unit, 1-D, no tensor map): one
 * instruction moves a run of bytes (size, both addresses multiples of 16) and
 * counts them off the transaction count of an mbarrier in shared memory. */
#define AVK_BULK_SM90 1

/* count arrivals complete a phase (with its expected bytes landed) */
AVK_DEVICE void avk_mbar_init(avk_u32 bar, avk_u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
/* makes initialized barriers visible to the async proxy (the bulk copies) */
AVK_DEVICE void avk_mbar_init_fence(void) { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

/* one arrival that also expects bytes more before the phase completes */
AVK_DEVICE void avk_mbar_arrive_expect_tx(avk_u32 bar, avk_u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

/* waits (acquire: the landed bytes are visible) until the phase of parity completes */
AVK_DEVICE void avk_mbar_wait(avk_u32 bar, avk_u32 parity)
{
    avk_u32 done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

/* global -> shared, completing bytes on bar (a CTA's own shared address is a cluster address) */
AVK_DEVICE void avk_bulk_copy(avk_u32 smem, const void *gmem, avk_u32 bytes, avk_u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem),
                 "l"(gmem), "r"(bytes), "r"(bar)
                 : "memory");
}
#endif /* sm_90 */
#endif /* CUDA */

AVK_DEVICE float avk_max(float a, float b) { return a > b ? a : b; }

#endif
