/* Row softmax for the unfused rocBLAS baseline: P = softmax(S) per query row,
 * S in f32 (already scaled by the first GEMM), P in the problem's dtype.
 * Bottom-right causal masking, the row range of the dispatch, optional LSE,
 * and the test flag's key limit are applied here. One workgroup per row. */
#ifndef __HIPCC_RTC__
#include <hip/hip_runtime.h>
#endif

#ifndef AVK_SOFTMAX_THREADS
#define AVK_SOFTMAX_THREADS 256
#endif

typedef unsigned short avk_u16;
#define AVK_NEG_INF (-__builtin_huge_valf()) /* hipRTC has no <math.h> INFINITY */

struct avk_store_f32 {
    static __device__ void put(void *p, long long i, float v) { ((float *)p)[i] = v; }
};
struct avk_store_f16 {
    static __device__ void put(void *p, long long i, float v) { ((_Float16 *)p)[i] = (_Float16)v; }
};
struct avk_store_bf16 {
    /* round to nearest even; NaN stays NaN */
    static __device__ void put(void *p, long long i, float v)
    {
        unsigned u = __float_as_uint(v);
        avk_u16 r = (u & 0x7fffffffu) > 0x7f800000u ? (avk_u16)((u >> 16) | 0x40u)
                                                     : (avk_u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        ((avk_u16 *)p)[i] = r;
    }
};

__device__ float avk_block_reduce(float v, float *scratch, bool is_max)
{
    for (int m = warpSize / 2; m > 0; m /= 2) {
        float o = __shfl_xor(v, m, warpSize);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    const int warps = (blockDim.x + warpSize - 1) / warpSize;
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = scratch[0];
    for (int w = 1; w < warps; ++w) r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
    return r;
}

/* rows = B*H*q_count; row r is query q_begin + r % q_count of head r / q_count.
 * key_limit < Nk drops the keys from there on (the deliberately wrong test kernel). */
template <typename Store>
__device__ void avk_softmax_rows(const float *s, void *p, float *lse, int q_count, int q_begin, int seq_q,
                                 int seq_kv, int causal, int key_limit)
{
    __shared__ float scratch[64];
    const long long r = blockIdx.x;
    const int bh = (int)(r / q_count), i = q_begin + (int)(r % q_count);
    long long visible = seq_kv;
    if (causal) {
        visible = (long long)i + seq_kv - seq_q + 1;
        visible = visible < 0 ? 0 : (visible > seq_kv ? seq_kv : visible);
    }
    if (visible > key_limit) visible = key_limit;
    const float *row = s + r * seq_kv;
    const long long out = r * seq_kv;
    float m = AVK_NEG_INF;
    for (int j = threadIdx.x; j < visible; j += blockDim.x) m = fmaxf(m, row[j]);
    m = avk_block_reduce(m, scratch, true);
    float sum = 0.f;
    for (int j = threadIdx.x; j < visible; j += blockDim.x) sum += expf(row[j] - m);
    sum = avk_block_reduce(sum, scratch, false);
    const float inv = visible > 0 ? 1.f / sum : 0.f;
    for (int j = threadIdx.x; j < seq_kv; j += blockDim.x)
        Store::put(p, out + j, j < visible ? expf(row[j] - m) * inv : 0.f);
    if (lse && threadIdx.x == 0) lse[(long long)bh * seq_q + i] = visible > 0 ? m + logf(sum) : AVK_NEG_INF;
}

#define AVK_SOFTMAX_KERNEL(suffix, store)                                                                     \
    extern "C" __global__ __launch_bounds__(AVK_SOFTMAX_THREADS) void avk_softmax_rows_##suffix(             \
        const float *s, void *p, float *lse, int q_count, int q_begin, int seq_q, int seq_kv, int causal,     \
        int key_limit)                                                                                        \
    {                                                                                                         \
        avk_softmax_rows<store>(s, p, lse, q_count, q_begin, seq_q, seq_kv, causal, key_limit);               \
    }

AVK_SOFTMAX_KERNEL(f32, avk_store_f32)
AVK_SOFTMAX_KERNEL(f16, avk_store_f16)
AVK_SOFTMAX_KERNEL(bf16, avk_store_bf16)
