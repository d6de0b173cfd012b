// `attnvk peak` kernels (runtime/opencl/cl_peak.c), each program built on its
// own with one of: AVK_COPY (AVK_CONTIGUOUS on CPU devices, as
// read_bandwidth.cl), AVK_FMA (AVK_F16 for halves, needs cl_khr_fp16) or
// AVK_MMA (NVIDIA sm_80+: mma.sync m16n8k16 f16 -> f32 through inline PTX, the
// path of flash_mma.cl; AVK_ASM as in common.cl).
#ifndef AVK_ASM
#define AVK_ASM asm volatile /* NVIDIA's OpenCL compiler takes inline PTX */
#endif

#ifdef AVK_COPY
// dst = src in 16-byte vectors.
__kernel void avk_peak_copy(__global const uint4 *restrict src, __global uint4 *restrict dst, ulong n)
{
    ulong stride = get_global_size(0);
    ulong i = get_global_id(0);
#ifdef AVK_CONTIGUOUS
    ulong per = (n + stride - 1ul) / stride, end = min(i * per + per, n);
    for (ulong j = i * per; j < end; ++j) dst[j] = src[j];
#else
    for (; i + stride < n; i += 2ul * stride) { // two copies in flight per item
        uint4 a = src[i], b = src[i + stride];
        dst[i] = a;
        dst[i + stride] = b;
    }
    if (i < n) dst[i] = src[i];
#endif
}
#endif

#ifdef AVK_FMA
// 8 independent 4-wide chains x = fma(x, m, c) per item (m < 1: the values
// settle, no denormals or infinities), 4 steps per loop trip: 128 FMAs of
// 4-wide vectors per trip; one value per item is written so nothing is dropped.
#ifdef AVK_F16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half4 T;
typedef half S;
#else
typedef float4 T;
typedef float S;
#endif
#define STEP                                                                                                           \
    x0 = fma(x0, m, c);                                                                                                \
    x1 = fma(x1, m, c);                                                                                                \
    x2 = fma(x2, m, c);                                                                                                \
    x3 = fma(x3, m, c);                                                                                                \
    x4 = fma(x4, m, c);                                                                                                \
    x5 = fma(x5, m, c);                                                                                                \
    x6 = fma(x6, m, c);                                                                                                \
    x7 = fma(x7, m, c);
__kernel void avk_peak_fma(__global float *restrict out, uint iters, float mf, float cf)
{
    const T m = (T)((S)mf), c = (T)((S)cf);
    const S s = (S)(get_local_id(0) & 15u) * (S)0.0625f;
    T x0 = (T)(s), x1 = x0 + (T)((S)0.1f), x2 = x0 + (T)((S)0.2f), x3 = x0 + (T)((S)0.3f);
    T x4 = x0 + (T)((S)0.4f), x5 = x0 + (T)((S)0.5f), x6 = x0 + (T)((S)0.6f), x7 = x0 + (T)((S)0.7f);
    for (uint i = 0u; i < iters; ++i) {
        STEP STEP STEP STEP
    }
    T r = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    out[get_global_id(0)] = (float)(r.x + r.y + r.z + r.w);
}
#endif

#ifdef AVK_MMA
// Each warp keeps 8 independent m16n8 f32 accumulators and runs mma.sync
// m16n8k16 (4096 FLOPs) on them iters times; ab holds one lane's A and B
// fragments (6 words per lane).
inline void avk_peak_mma_step(float c[4], uint a0, uint a1, uint a2, uint a3, uint b0, uint b1)
{
    AVK_ASM("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void
avk_peak_mma(__global const uint *restrict ab, __global float *restrict out, uint iters)
{
    const uint lane = get_local_id(0) & 31u;
    const uint a0 = ab[lane * 6u], a1 = ab[lane * 6u + 1u], a2 = ab[lane * 6u + 2u], a3 = ab[lane * 6u + 3u];
    const uint b0 = ab[lane * 6u + 4u], b1 = ab[lane * 6u + 5u];
    float c[8][4];
    for (int j = 0; j < 8; ++j)
        for (int e = 0; e < 4; ++e) c[j][e] = 0.0f;
    for (uint i = 0u; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) avk_peak_mma_step(c[j], a0, a1, a2, a3, b0, b1);
    }
    float r = 0.0f;
    for (int j = 0; j < 8; ++j) r += (c[j][0] + c[j][1]) + (c[j][2] + c[j][3]);
    out[get_global_id(0)] = r;
}
#endif
