/* The FP8 forward's helpers (attn_sm90.h with AVK_FP8, included after its tile enum): P as
 * e4m3 A fragments, and V transposed into the workspace before the attention grid (e4m3 wgmma
 * reads B K-major only). */
#if AVK_FP8
/* four f32 as e4m3 bytes, a in the low byte (cvt's first source fills the high one) */
AVK_DEVICE avk_u32 avk_e4m3x4(float a, float b, float c, float d)
{
    unsigned short lo, hi;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(b), "f"(a));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(d), "f"(c));
    return (avk_u32)lo | (avk_u32)hi << 16;
}

/* P (f32, accumulator layout) as the e4m3 A fragment of k-step kk (32 keys, n-tiles 4kk..4kk+3) */
template <int NS_>
AVK_DEVICE void avk_pack_p_e4m3(const float (&s)[1][NS_][4], int kk, avk_u32 (&pa)[4])
{
    const int n = 4 * kk;
    pa[0] = avk_e4m3x4(s[0][n][0], s[0][n][1], s[0][n + 1][0], s[0][n + 1][1]);
    pa[1] = avk_e4m3x4(s[0][n][2], s[0][n][3], s[0][n + 1][2], s[0][n + 1][3]);
    pa[2] = avk_e4m3x4(s[0][n + 2][0], s[0][n + 2][1], s[0][n + 3][0], s[0][n + 3][1]);
    pa[3] = avk_e4m3x4(s[0][n + 2][2], s[0][n + 2][3], s[0][n + 3][2], s[0][n + 3][3]);
}

/* V's 64-key block (blockIdx.x) of kv head blockIdx.y, batch blockIdx.z into Vt:
 * Dv rows of AVK_FP8_VT_KEYS(Nk) bytes, zeros past Nk; slot 4c + i of each 16
 * holds key 2c + (i & 1) + 8 (i >> 1), the order avk_pack_p_e4m3 gives P's keys. */
AVK_KERNEL void __launch_bounds__(256) avk_fp8_v_transpose(const avk_attn_params p)
{
    __shared__ __align__(16) unsigned char tile[64][DV + 16];
    const int key0 = (int)blockIdx.x * 64, g = (int)blockIdx.y, b = (int)blockIdx.z;
    const unsigned char *V = (const unsigned char *)p.v;
    for (int c = threadIdx.x; c < 64 * DV / 16; c += 256) {
        const int r = c / (DV / 16), k = c % (DV / 16);
        uint4 x = make_uint4(0u, 0u, 0u, 0u);
        if (key0 + r < (int)p.seq_kv) x = *(const uint4 *)(V + avk_kv_row(p, b, g, key0 + r) * DV + k * 16);
        *(uint4 *)&tile[r][k * 16] = x;
    }
    __syncthreads();
    const unsigned long long nkp = AVK_FP8_VT_KEYS(p.seq_kv);
    unsigned char *vt = (unsigned char *)p.vt + ((unsigned long long)b * p.kv_heads + g) * DV * nkp;
    for (int c = threadIdx.x; c < DV * 4; c += 256) {
        const int d = c / 4, k16 = c % 4 * 16;
        avk_u32 slot[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            slot[q] = 0u;
#pragma unroll
            for (int i = 0; i < 4; ++i) slot[q] |= (avk_u32)tile[k16 + 2 * q + (i & 1) + 8 * (i >> 1)][d] << (8 * i);
        }
        *(uint4 *)(vt + d * nkp + key0 + k16) = make_uint4(slot[0], slot[1], slot[2], slot[3]);
    }
}
#endif
