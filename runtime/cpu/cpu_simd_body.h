/* One instruction set's inner loops (cpu_simd.h), included by cpu_simd.c
 * once per target with AVK_VW (floats per vector), AVK_NAME(x) (a suffix per
 * target) and AVK_CHAINS (FMA chains of the peak loop) defined. GCC vector
 * extensions: the same code becomes zmm, ymm, xmm or NEON registers. */

typedef float AVK_NAME(vf) __attribute__((vector_size(AVK_VW * 4)));
typedef float AVK_NAME(vfu) __attribute__((vector_size(AVK_VW * 4), aligned(4)));
typedef int32_t AVK_NAME(vi) __attribute__((vector_size(AVK_VW * 4)));
#define VF AVK_NAME(vf)
#define VFU AVK_NAME(vfu)
#define VI AVK_NAME(vi)
#define LOAD(p) ((VF)(*(const VFU *)(p)))
#define STORE(p, x) (*(VFU *)(p) = (x))

static void AVK_NAME(gemm4)(const float *restrict A, size_t lda, const float *restrict B, size_t ldb,
                            float *restrict C, size_t ldc, int kdim, int accumulate)
{
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * lda, *a3 = A + 3 * lda;
    VF c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33;
    if (accumulate) {
#define LD_ROW(r)                                                                                                   \
    c##r##0 = LOAD(C + r * ldc), c##r##1 = LOAD(C + r * ldc + AVK_VW), c##r##2 = LOAD(C + r * ldc + 2 * AVK_VW),   \
    c##r##3 = LOAD(C + r * ldc + 3 * AVK_VW)
        LD_ROW(0);
        LD_ROW(1);
        LD_ROW(2);
        LD_ROW(3);
#undef LD_ROW
    } else {
        const VF z = {0};
        c00 = c01 = c02 = c03 = c10 = c11 = c12 = c13 = z;
        c20 = c21 = c22 = c23 = c30 = c31 = c32 = c33 = z;
    }
    for (int k = 0; k < kdim; ++k) {
        const float *b = B + (size_t)k * ldb;
        const VF b0 = LOAD(b), b1 = LOAD(b + AVK_VW), b2 = LOAD(b + 2 * AVK_VW), b3 = LOAD(b + 3 * AVK_VW);
        float x = a0[k];
        c00 += x * b0, c01 += x * b1, c02 += x * b2, c03 += x * b3;
        x = a1[k];
        c10 += x * b0, c11 += x * b1, c12 += x * b2, c13 += x * b3;
        x = a2[k];
        c20 += x * b0, c21 += x * b1, c22 += x * b2, c23 += x * b3;
        x = a3[k];
        c30 += x * b0, c31 += x * b1, c32 += x * b2, c33 += x * b3;
    }
#define ST_ROW(r)                                                                                                   \
    STORE(C + r * ldc, c##r##0), STORE(C + r * ldc + AVK_VW, c##r##1), STORE(C + r * ldc + 2 * AVK_VW, c##r##2),  \
        STORE(C + r * ldc + 3 * AVK_VW, c##r##3)
    ST_ROW(0);
    ST_ROW(1);
    ST_ROW(2);
    ST_ROW(3);
#undef ST_ROW
}

/* 2^x for x <= 0 (or -inf): 2^round(x) from the exponent bits times a degree-6
 * polynomial on [-1/2, 1/2] (Cephes' exp2f, ~1e-7 relative); below -127: 0 */
static inline VF AVK_NAME(exp2v)(VF x)
{
    const VF lo = (VF){0} - 127.0f;
    const VI below = x < lo;
    x = (VF)(((VI)x & ~below) | ((VI)lo & below));
    const VI n = __builtin_convertvector(x - 0.5f, VI); /* toward zero: ceil(x - 1/2) */
    const VF f = x - __builtin_convertvector(n, VF);   /* (-1/2, 1/2] */
    VF p = 1.535336188319500e-4f * f + 1.339887440266574e-3f;
    p = p * f + 9.618437357674640e-3f;
    p = p * f + 5.550332471162809e-2f;
    p = p * f + 2.402264791363012e-1f;
    p = p * f + 6.931472028550421e-1f;
    p = p * f + 1.0f;
    const VI e = (n + 127) << 23; /* n = -127: 0 */
    return p * (VF)e;
}

static float AVK_NAME(hsum)(VF v)
{
    float s = 0;
    for (int i = 0; i < AVK_VW; ++i) s += v[i];
    return s;
}

static float AVK_NAME(exp2_sum)(float *x, int n, float m)
{
    VF acc = {0};
    int i = 0;
    for (; i + AVK_VW <= n; i += AVK_VW) {
        const VF e = AVK_NAME(exp2v)(LOAD(x + i) - m);
        STORE(x + i, e);
        acc += e;
    }
    if (i < n) { /* the tail through a padded vector */
        VF t = (VF){0} - INFINITY;
        for (int k = 0; i + k < n; ++k) t[k] = x[i + k] - m;
        const VF e = AVK_NAME(exp2v)(t);
        for (int k = 0; i + k < n; ++k) x[i + k] = e[k];
        acc += e;
    }
    return AVK_NAME(hsum)(acc);
}

static float AVK_NAME(max)(const float *x, int n)
{
    VF mv = (VF){0} - INFINITY;
    int i = 0;
    for (; i + AVK_VW <= n; i += AVK_VW) {
        const VF v = LOAD(x + i);
        const VI gt = v > mv;
        mv = (VF)(((VI)v & gt) | ((VI)mv & ~gt));
    }
    float m = -INFINITY;
    for (int k = 0; k < AVK_VW; ++k) m = mv[k] > m ? mv[k] : m;
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

/* AVK_CHAINS independent x = x * a + b chains of vectors: the FMA unit's throughput.
 * The loops are unrolled so the chains live in registers: rolled, GCC kept them in a
 * stack array, and each FMA waited on a store and a load (the peak read 55-94 GFLOP/s
 * on a 2-core VM whose flash kernel ran at 178, and 297 on a 16-core host whose ran at 586). */
static float AVK_NAME(fma_chains)(long long iterations, float a, float b)
{
    VF c[AVK_CHAINS];
    const VF va = (VF){0} + a, vb = (VF){0} + b;
#pragma GCC unroll 16
    for (int i = 0; i < AVK_CHAINS; ++i) c[i] = (VF){0} + (float)i;
    for (long long it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
        for (int i = 0; i < AVK_CHAINS; ++i) c[i] = c[i] * va + vb;
    }
    VF s = {0};
#pragma GCC unroll 16
    for (int i = 0; i < AVK_CHAINS; ++i) s += c[i];
    return AVK_NAME(hsum)(s);
}

static const avk_cpu_simd AVK_NAME(table) = {
    .isa = AVK_ISA,
    .nc = 4 * AVK_VW,
    .gemm4 = AVK_NAME(gemm4),
    .exp2_sum = AVK_NAME(exp2_sum),
    .max = AVK_NAME(max),
    .fma_chains = AVK_NAME(fma_chains),
    .fma_flops = 2 * AVK_VW * AVK_CHAINS,
};

#undef VF
#undef VFU
#undef VI
#undef LOAD
#undef STORE
