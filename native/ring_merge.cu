/* Ring attention's merge (runtime/core/backend.h, avk_merge_args), one source
 * for NVRTC (runtime/cuda/cuda_merge.c) and hipcc/hipRTC (runtime/hip/
 * hip_merge.c); no headers but HIP's runtime one. Folds one block's partial
 * (O, LSE) into the f32 accumulator (o_acc, lse_acc) with the arithmetic of
 * runtime/core/ring_merge.c; o_out (when not NULL) gets the merged O in the
 * dtype. A block holds AVK_MERGE_ROWS rows of AVK_MERGE_LANES threads each
 * (the host passes blockDim.x = lanes * rows). One kernel per dtype:
 * avk_ring_merge_f32, avk_ring_merge_f16, avk_ring_merge_bf16. */
#if defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define AVK_MERGE_HIP 1
#include <hip/hip_runtime.h>
#endif

#ifndef AVK_MERGE_LANES
#define AVK_MERGE_LANES 32
#endif
#ifndef AVK_MERGE_ROWS
#define AVK_MERGE_ROWS 4
#endif

typedef unsigned short avk_u16;
typedef unsigned int avk_u32;
typedef unsigned long long avk_u64;

#define AVK_MERGE_NEG_INF __uint_as_float(0xff800000u) /* neither RTC has <math.h>'s INFINITY */

struct avk_merge_f32 {
    static __device__ __forceinline__ float load(const void *p, avk_u64 i) { return ((const float *)p)[i]; }
    static __device__ __forceinline__ void store(void *p, avk_u64 i, float v) { ((float *)p)[i] = v; }
};

struct avk_merge_f16 {
    static __device__ __forceinline__ float load(const void *p, avk_u64 i)
    {
        const avk_u16 h = ((const avk_u16 *)p)[i];
#ifdef AVK_MERGE_HIP
        return (float)__builtin_bit_cast(_Float16, h);
#else
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
        return f;
#endif
    }
    static __device__ __forceinline__ void store(void *p, avk_u64 i, float v)
    {
        avk_u16 h;
#ifdef AVK_MERGE_HIP
        h = __builtin_bit_cast(avk_u16, (_Float16)v);
#else
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
#endif
        ((avk_u16 *)p)[i] = h;
    }
};

struct avk_merge_bf16 {
    static __device__ __forceinline__ float load(const void *p, avk_u64 i)
    {
        return __uint_as_float((avk_u32)((const avk_u16 *)p)[i] << 16);
    }
    /* round to nearest even; NaN stays NaN */
    static __device__ __forceinline__ void store(void *p, avk_u64 i, float v)
    {
        avk_u32 u = __float_as_uint(v);
        ((avk_u16 *)p)[i] = (u & 0x7fffffffu) > 0x7f800000u ? (avk_u16)((u >> 16) | 0x40u)
                                                              : (avk_u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
};

enum { AVK_MERGE_COPY, AVK_MERGE_ZERO, AVK_MERGE_BLEND }; /* first block; both LSEs -inf; weighted */

template <class Elem>
__device__ __forceinline__ void avk_ring_merge(const void *__restrict__ o_part, const float *__restrict__ lse_part,
                                               float *__restrict__ o_acc, float *__restrict__ lse_acc,
                                               void *__restrict__ o_out, avk_u32 rows, avk_u32 dv, avk_u32 first)
{
    const avk_u32 lane = threadIdx.x % AVK_MERGE_LANES;
    const avk_u64 r = (avk_u64)blockIdx.x * AVK_MERGE_ROWS + threadIdx.x / AVK_MERGE_LANES;
    const bool live = r < rows;
    /* the row's weights, from lse_acc as it was before this merge */
    int mode = AVK_MERGE_COPY;
    float wa = 0.0f, wp = 1.0f, inv = 1.0f, lse = AVK_MERGE_NEG_INF;
    if (live) {
        const float lp = lse_part[r];
        lse = lp;
        if (!first) {
            const float la = lse_acc[r], m = la > lp ? la : lp;
            if (m == AVK_MERGE_NEG_INF) {
                mode = AVK_MERGE_ZERO;
            } else {
                mode = AVK_MERGE_BLEND;
                wa = expf(la - m);
                wp = expf(lp - m);
                inv = 1.0f / (wa + wp);
                lse = m + logf(wa + wp);
            }
        }
        const avk_u64 begin = r * dv;
        for (avk_u64 e = begin + lane; e < begin + dv; e += AVK_MERGE_LANES) {
            const float x = Elem::load(o_part, e);
            const float a = mode == AVK_MERGE_COPY ? x : mode == AVK_MERGE_ZERO ? 0.0f : (o_acc[e] * wa + x * wp) * inv;
            o_acc[e] = a;
            if (o_out) Elem::store(o_out, e, a);
        }
    }
    /* every thread of the row has read lse_acc before it is rewritten */
    __syncthreads();
    if (live && lane == 0) lse_acc[r] = lse;
}

#define AVK_RING_MERGE_KERNEL(dtype)                                                                              \
    extern "C" __global__ void __launch_bounds__(AVK_MERGE_LANES * AVK_MERGE_ROWS) avk_ring_merge_##dtype(        \
        const void *o_part, const float *lse_part, float *o_acc, float *lse_acc, void *o_out, avk_u32 rows,       \
        avk_u32 dv, avk_u32 first)                                                                                \
    {                                                                                                             \
        avk_ring_merge<avk_merge_##dtype>(o_part, lse_part, o_acc, lse_acc, o_out, rows, dv, first);              \
    }

AVK_RING_MERGE_KERNEL(f32)
AVK_RING_MERGE_KERNEL(f16)
AVK_RING_MERGE_KERNEL(bf16)
