/* The AMD side of attn_portability.h (hipcc / hipRTC, gfx9 CDNA and RDNA):
 * the basic primitives here, the matrix-instruction contract in amd_matrix.h.
 *
 * Wavefronts are 64 lanes on gfx9 (gfx90a, gfx940) and 32 on gfx10/gfx11 as
 * compiled here; AVK_WARP is the hardware width. A kernel written for 32-lane
 * warps still works on wave64: two of its warps share a wavefront, and
 * shuffles with width 32 stay inside each half. */
#ifndef ATTNVK_AMD_PORTABILITY_H
#define ATTNVK_AMD_PORTABILITY_H

#if !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

#ifdef __AMDGCN_WAVEFRONT_SIZE
#define AVK_WARP __AMDGCN_WAVEFRONT_SIZE
#else
#define AVK_WARP 64
#endif

#define AVK_DYNAMIC_SMEM(name) extern __shared__ __attribute__((aligned(16))) unsigned char name[]

/* LDS pointers as 32-bit addresses, the way the kernel passes shared memory around */
typedef __attribute__((address_space(3))) avk_u32 avk_lds_u32;
typedef __attribute__((address_space(3))) avk_u16 avk_lds_u16;

AVK_DEVICE float avk_shfl_xor(float v, int mask) { return __shfl_xor(v, mask, AVK_WARP); }

/* Vote over the whole wavefront: on wave64 that is both 32-lane warps of a
 * kernel written for 32, a superset of "any lane of my warp", which is what a
 * branch made uniform by the vote needs. */
AVK_DEVICE bool avk_any(bool pred) { return __any(pred) != 0; }
/* The lowest 32-lane warp lane whose pred holds, or -1: on wave64 the vote spans
 * both warps, which callers make agree (they test the same lane % 32 values). */
AVK_DEVICE int avk_first_lane(bool pred)
{
    const unsigned long long m = __ballot(pred);
    return m ? (__ffsll((unsigned long long)m) - 1) % 32 : -1;
}
/* bit i: 32-lane warp lane i's pred (on wave64 the upper warp, whose lanes test
 * the same lane % 32 values, agrees) */
AVK_DEVICE unsigned avk_vote_bits(bool pred) { return (unsigned)(__ballot(pred) & 0xffffffffull); }

/* A warp never spans wavefronts and a wavefront runs in lockstep with its LDS
 * operations in order: only the compiler must not move memory across this. */
AVK_DEVICE void avk_syncwarp(void)
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
    __builtin_amdgcn_wave_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}
AVK_DEVICE void avk_launch_dependents(void) {}
AVK_DEVICE void avk_wait_primary(void) {}

AVK_DEVICE float avk_exp2(float x) { return exp2f(x); }

AVK_DEVICE float avk_f16_to_f32(avk_u16 h) { return (float)__builtin_bit_cast(_Float16, h); }

AVK_DEVICE avk_u16 avk_f32_to_f16(float f) { return __builtin_bit_cast(avk_u16, (_Float16)f); }

AVK_DEVICE float avk_bf16_to_f32(avk_u16 h) { return __uint_as_float((avk_u32)h << 16); }

/* Round to nearest even; NaN stays NaN. */
AVK_DEVICE avk_u16 avk_f32_to_bf16(float f)
{
    avk_u32 u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (avk_u16)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (avk_u16)(u >> 16);
}

AVK_DEVICE avk_u32 avk_smem_addr(const void *p)
{
    return (avk_u32)(unsigned long long)(const __attribute__((address_space(3))) void *)p;
}

#include "amd_matrix.h"

#endif
