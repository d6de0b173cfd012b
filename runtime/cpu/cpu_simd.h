/* The vector inner loops of the CPU device's kernels, one table per
 * instruction set: built for AVX-512 and AVX2+FMA beside a portable body
 * (GCC vector extensions) and picked at run time from what the host runs
 * (cpu_simd.c). The flash kernel (cpu_flash.c) and the OpenBLAS baseline's
 * softmax (cpu_openblas.c) call them. */
#ifndef ATTNVK_CPU_SIMD_H
#define ATTNVK_CPU_SIMD_H

#include <stddef.h>

enum { AVK_SIMD_ROWS = 4 }; /* rows of one gemm micro-tile */

typedef struct avk_cpu_simd {
    const char *isa; /* "avx512", "avx2", "generic" */
    int nc;          /* columns of one gemm micro-tile (4 vectors) */
    /* C[r][0..nc) = (accumulate ? C[r][0..nc) : 0) + sum_{k < kdim} A[r*lda + k] * B[k*ldb + 0..nc),
     * for the 4 rows r: every row of A, B and C is read or written */
    void (*gemm4)(const float *A, size_t lda, const float *B, size_t ldb, float *C, size_t ldc, int kdim,
                  int accumulate);
    /* x[i] = 2^(x[i] - m) for i < n (m finite, x[i] <= m or -inf); returns the sum */
    float (*exp2_sum)(float *x, int n, float m);
    /* the largest of x[0..n) (-inf for n = 0) */
    float (*max)(const float *x, int n);
    /* independent FMA chains for the peak measurement (cpu_peak.c): returns
     * a value that depends on every chain; each iteration is fma_flops flops */
    float (*fma_chains)(long long iterations, float a, float b);
    int fma_flops;
} avk_cpu_simd;

/* The widest table this host runs (ATTNVK_CPU_ISA=avx512|avx2|generic picks a narrower one). */
const avk_cpu_simd *avk_cpu_simd_get(void);

#endif
