/* Compiles amd_matrix.h's m16n8k16 contract alone (no device library needed)
 * for a target the tuning table leaves to hipRTC, e.g. gfx1100 (WMMA). */
#define AVK_THREADS 64
#include "attn_portability.h"

#ifndef AVK_MMA_SM80
#error "this target has no matrix unit in amd_matrix.h"
#endif

AVK_KERNEL void avk_matrix_probe(const avk_u32 *a, const avk_u32 *b, float *d)
{
    AVK_DYNAMIC_SMEM(smem);
    const int t = threadIdx.x;
    ((avk_u32 *)smem)[t] = a[t];
    __syncthreads();
    avk_u32 af[4], bf[4];
    avk_ldmatrix_x4(af, avk_smem_addr(smem) + (avk_u32)(t % 16) * 16);
    avk_ldmatrix_x4_trans(bf, avk_smem_addr(smem) + (avk_u32)(t % 16) * 16);
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    avk_mma_f16(acc, af, bf);
    avk_mma_bf16(acc, af, b + 2 * t);
    for (int e = 0; e < 4; ++e) d[4 * t + e] = acc[e];
}
