/* `attnvk peak` kernels, one source for NVRTC (runtime/cuda/cuda_peak.c) and
 * hipRTC (runtime/hip/hip_peak.c); no headers but HIP's runtime one.
 *
 *   avk_peak_copy      dst = src in 16-byte vectors, grid stride
 *   avk_peak_fma_f32   32 independent chains x = fma(x, m, c) per thread, 4
 *                      steps per loop trip: 128 FMAs a trip (m < 1: the values
 *                      settle, no denormals or infinities)
 *   avk_peak_fma_f16   the same count in packed halves (16 f16x2 chains)
 *   avk_peak_mma       CUDA sm_80+: mma.sync m16n8k16 f16 -> f32, 8 independent
 *                      accumulators per warp (the mma16/mma32 bodies' path)
 *   avk_peak_wgmma     CUDA sm_90a: wgmma.mma_async m64n256k16 f16 -> f32 with
 *                      both operands in shared memory, one warpgroup a block
 *                      (the Hopper body's path)
 *   avk_peak_mfma      HIP gfx908/gfx90a/gfx94x: v_mfma_f32_32x32x8f16
 *   avk_peak_wmma      HIP gfx11: v_wmma_f32_16x16x16_f16 (wave32)
 * A kernel a target lacks is not defined; the host asks for it and reports
 * "none" when it is missing. Every kernel writes what it computed so nothing
 * is dropped. */
#if defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define AVK_PEAK_HIP 1
#include <hip/hip_runtime.h>
#else
#define AVK_PEAK_CUDA 1
#endif

typedef unsigned int avk_u32;
typedef unsigned long long avk_u64;

extern "C" __global__ void __launch_bounds__(256)
avk_peak_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst, avk_u64 n)
{
    avk_u64 stride = (avk_u64)gridDim.x * blockDim.x;
    avk_u64 i = (avk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + stride < n; i += 2ull * stride) { /* two copies in flight per thread */
        uint4 a = src[i], b = src[i + stride];
        dst[i] = a;
        dst[i + stride] = b;
    }
    if (i < n) dst[i] = src[i];
}

extern "C" __global__ void __launch_bounds__(256) avk_peak_fma_f32(float *__restrict__ out, avk_u32 iters, float m,
                                                                   float c)
{
    float x[32];
#pragma unroll
    for (int j = 0; j < 32; ++j) x[j] = (float)(threadIdx.x & 15u) * 0.0625f + 0.03125f * (float)j;
    for (avk_u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int j = 0; j < 32; ++j) x[j] = fmaf(x[j], m, c);
    }
    float r = 0.0f;
#pragma unroll
    for (int j = 0; j < 32; ++j) r += x[j];
    out[(avk_u64)blockIdx.x * blockDim.x + threadIdx.x] = r;
}

#if AVK_PEAK_CUDA
__device__ __forceinline__ avk_u32 avk_peak_hfma2(avk_u32 x, avk_u32 m, avk_u32 c)
{
    avk_u32 r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(m), "r"(c));
    return r;
}
/* m and c as f16x2 bit patterns; the result is the xor of the chains' bits */
extern "C" __global__ void __launch_bounds__(256) avk_peak_fma_f16(avk_u32 *__restrict__ out, avk_u32 iters, avk_u32 m,
                                                                   avk_u32 c)
{
    avk_u32 x[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) x[j] = 0x38003800u + (threadIdx.x & 15u) + (avk_u32)j; /* about 0.5 */
    for (avk_u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int j = 0; j < 16; ++j) x[j] = avk_peak_hfma2(x[j], m, c);
    }
    avk_u32 r = 0;
#pragma unroll
    for (int j = 0; j < 16; ++j) r ^= x[j];
    out[(avk_u64)blockIdx.x * blockDim.x + threadIdx.x] = r;
}
#else
typedef _Float16 avk_peak_h2 __attribute__((ext_vector_type(2)));
extern "C" __global__ void __launch_bounds__(256) avk_peak_fma_f16(avk_u32 *__restrict__ out, avk_u32 iters, avk_u32 mb,
                                                                   avk_u32 cb)
{
#pragma clang fp contract(fast) /* x * m + c: one packed FMA (v_pk_fma_f16) */
    avk_peak_h2 m = __builtin_bit_cast(avk_peak_h2, mb), c = __builtin_bit_cast(avk_peak_h2, cb), x[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) x[j] = __builtin_bit_cast(avk_peak_h2, 0x38003800u + (threadIdx.x & 15u) + (avk_u32)j);
    for (avk_u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int j = 0; j < 16; ++j) x[j] = x[j] * m + c;
    }
    avk_u32 r = 0;
#pragma unroll
    for (int j = 0; j < 16; ++j) r ^= __builtin_bit_cast(avk_u32, x[j]);
    out[(avk_u64)blockIdx.x * blockDim.x + threadIdx.x] = r;
}
#endif

#if AVK_PEAK_CUDA
/* 128 threads, 4 warps; ab: 6 words of A and B fragments per lane */
extern "C" __global__ void __launch_bounds__(128) avk_peak_mma(const avk_u32 *__restrict__ ab, float *__restrict__ out,
                                                               avk_u32 iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const avk_u32 lane = threadIdx.x & 31u;
    const avk_u32 a0 = ab[lane * 6u], a1 = ab[lane * 6u + 1u], a2 = ab[lane * 6u + 2u], a3 = ab[lane * 6u + 3u];
    const avk_u32 b0 = ab[lane * 6u + 4u], b1 = ab[lane * 6u + 5u];
    float c[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) c[j][e] = 0.0f;
    for (avk_u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                         "{%0,%1,%2,%3};"
                         : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float r = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) r += (c[j][0] + c[j][1]) + (c[j][2] + c[j][3]);
    out[(avk_u64)blockIdx.x * blockDim.x + threadIdx.x] = r;
#endif
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* no-swizzle K-major descriptor: start, leading and stride byte offsets in 16-byte units */
__device__ __forceinline__ avk_u64 avk_peak_desc(avk_u32 addr, avk_u32 lbo, avk_u32 sbo)
{
    return (avk_u64)((addr & 0x3ffffu) >> 4) | (avk_u64)((lbo >> 4) & 0x3fffu) << 16 |
           (avk_u64)((sbo >> 4) & 0x3fffu) << 32;
}
#define AVK_PEAK_WGMMA_REGS                                                                                            \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "  \
    "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "   \
    "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, "   \
    "%68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, "   \
    "%90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "   \
    "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define AVK_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                  "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void avk_peak_wgmma_n256(float *d, avk_u64 a, avk_u64 b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " AVK_PEAK_WGMMA_REGS ", %128, %129, 1, 1, 1, 0, 0;"
                 : AVK_D8(0), AVK_D8(8), AVK_D8(16), AVK_D8(24), AVK_D8(32), AVK_D8(40), AVK_D8(48), AVK_D8(56),
                   AVK_D8(64), AVK_D8(72), AVK_D8(80), AVK_D8(88), AVK_D8(96), AVK_D8(104), AVK_D8(112), AVK_D8(120)
                 : "l"(a), "l"(b));
}
#endif

/* 128 threads (one warpgroup); A 64x16 and B 256x16 f16 in shared memory (no
 * swizzle: 8x8 core matrices, 128 bytes apart along K, 256 along M/N) */
extern "C" __global__ void __launch_bounds__(128) avk_peak_wgmma(float *__restrict__ out, avk_u32 iters)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) avk_u32 tiles[(64 + 256) * 16 / 2];
    for (avk_u32 i = threadIdx.x; i < sizeof tiles / sizeof tiles[0]; i += blockDim.x) tiles[i] = 0x3c003c00u; /* 1.0 */
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const avk_u32 base = (avk_u32)__cvta_generic_to_shared(tiles);
    const avk_u64 a = avk_peak_desc(base, 128, 256), b = avk_peak_desc(base + 64 * 16 * 2, 128, 256);
    float d[128];
#pragma unroll
    for (int j = 0; j < 128; ++j) d[j] = 0.0f;
    for (avk_u32 i = 0; i < iters; ++i) {
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int k = 0; k < 8; ++k) avk_peak_wgmma_n256(d, a, b);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
    float r = 0.0f;
#pragma unroll
    for (int j = 0; j < 128; ++j) r += d[j];
    out[(avk_u64)blockIdx.x * blockDim.x + threadIdx.x] = r;
#endif
}
#endif /* AVK_PEAK_CUDA */

#if AVK_PEAK_HIP && (defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) ||      \
                     defined(__gfx942__))
typedef _Float16 avk_peak_h4 __attribute__((ext_vector_type(4)));
typedef float avk_peak_f16x __attribute__((ext_vector_type(16)));
/* 256 threads, 4 wavefronts of 64; 4 independent 32x32 accumulators per wavefront */
extern "C" __global__ void __launch_bounds__(256) avk_peak_mfma(const avk_u32 *__restrict__ ab, float *__restrict__ out,
                                                                avk_u32 iters)
{
    const avk_u32 lane = threadIdx.x & 63u;
    const avk_peak_h4 a = __builtin_bit_cast(avk_peak_h4, ((const avk_u64 *)ab)[lane]);
    const avk_peak_h4 b = __builtin_bit_cast(avk_peak_h4, ((const avk_u64 *)ab)[64 + lane]);
    avk_peak_f16x c0 = {}, c1 = {}, c2 = {}, c3 = {};
    for (avk_u32 i = 0; i < iters; ++i) {
        c0 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c0, 0, 0, 0);
        c1 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c1, 0, 0, 0);
        c2 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c2, 0, 0, 0);
        c3 = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c3, 0, 0, 0);
    }
    float r = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; ++j) r += (c0[j] + c1[j]) + (c2[j] + c3[j]);
    out[(avk_u64)blockIdx.x * blockDim.x + threadIdx.x] = r;
}
#endif

#if AVK_PEAK_HIP && (defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__))
typedef _Float16 avk_peak_h16 __attribute__((ext_vector_type(16)));
typedef float avk_peak_f8 __attribute__((ext_vector_type(8)));
/* 256 threads, 8 waves of 32 (wave32); 8 independent 16x16 accumulators per wave */
extern "C" __global__ void __launch_bounds__(256) avk_peak_wmma(const avk_u32 *__restrict__ ab, float *__restrict__ out,
                                                                avk_u32 iters)
{
    const avk_u32 lane = threadIdx.x & 31u;
    avk_peak_h16 a, b;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        a[j] = (_Float16)(float)(ab[lane] & 7u);
        b[j] = (_Float16)(float)(ab[32 + lane] & 7u);
    }
    avk_peak_f8 c[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) c[j] = avk_peak_f8{};
    for (avk_u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) c[j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c[j]);
    }
    float r = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 8; ++e) r += c[j][e];
    out[(avk_u64)blockIdx.x * blockDim.x + threadIdx.x] = r;
}
#endif
