// Row softmax of the unfused (cuBLAS) baseline, compiled at run time with NVRTC.
//
// S holds scale * Q.K^T in f32, one row of Nk scores per query row, rows in
// [B][H][Nq] order. Each block turns one row into probabilities P and writes
// them IN PLACE in the output type: P row r starts where S row r starts, so
// the second GEMM reads P with a row pitch of Nk f32 (2*Nk 16-bit elements).
// Causal is bottom-right aligned: query i sees keys j <= i + Nk - Nq; masked
// keys get P = 0 and a row that sees no key is all zeros (so O is zero).
//
// No headers: f16/bf16 conversion is one cvt instruction (bf16 needs sm_80+).

#ifndef AVK_SOFTMAX_THREADS
#define AVK_SOFTMAX_THREADS 256
#endif

#define AVK_WARPS (AVK_SOFTMAX_THREADS / 32)
#define AVK_NEG_INF __int_as_float(0xff800000)

struct avk_f32_out {
    typedef float type;
    static __device__ __forceinline__ float convert(float x) { return x; }
};
struct avk_f16_out {
    typedef unsigned short type;
    static __device__ __forceinline__ unsigned short convert(float x)
    {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
        return h;
    }
};
struct avk_bf16_out {
    typedef unsigned short type;
    static __device__ __forceinline__ unsigned short convert(float x)
    {
        unsigned short h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
        return h;
    }
};

// Max (is_max) or sum over the block; every thread gets the result.
template <bool is_max>
__device__ __forceinline__ float avk_block_reduce(float x, float *scratch)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, x, offset);
        x = is_max ? fmaxf(x, other) : x + other;
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) scratch[warp] = x;
    __syncthreads();
    x = lane < AVK_WARPS ? scratch[lane] : (is_max ? AVK_NEG_INF : 0.0f);
    for (int offset = 16; offset > 0; offset >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, x, offset);
        x = is_max ? fmaxf(x, other) : x + other;
    }
    __syncthreads(); // scratch is reused by the next reduction
    return x;
}

// cached_cols: the row is first copied to dynamic shared memory when
// Nk <= cached_cols (S is then read once); otherwise it is re-read.
template <class Out>
__device__ void avk_softmax_row(float *scores, int seq_q, int seq_kv, int causal, int cached_cols)
{
    extern __shared__ float row_cache[];
    __shared__ float scratch[AVK_WARPS];
    const long long row = blockIdx.x;
    const int i = (int)(row % seq_q);
    int visible = seq_kv;
    if (causal) {
        long long seen = (long long)i + seq_kv - seq_q + 1;
        visible = seen < 0 ? 0 : (seen > seq_kv ? seq_kv : (int)seen);
    }
    float *s = scores + row * seq_kv;
    typename Out::type *p = (typename Out::type *)s;
    const bool cached = seq_kv <= cached_cols;
    const float log2e = 1.4426950408889634f;

    float m = AVK_NEG_INF;
    for (int j = threadIdx.x; j < visible; j += AVK_SOFTMAX_THREADS) {
        float x = s[j];
        if (cached) row_cache[j] = x;
        m = fmaxf(m, x);
    }
    m = avk_block_reduce<true>(m, scratch);
    const float m2 = m * log2e;
    float l = 0.0f;
    for (int j = threadIdx.x; j < visible; j += AVK_SOFTMAX_THREADS)
        l += exp2f((cached ? row_cache[j] : s[j]) * log2e - m2);
    l = avk_block_reduce<false>(l, scratch); // ends with __syncthreads: S may be overwritten from here
    const float inv = visible > 0 ? 1.0f / l : 0.0f;

    if (cached || sizeof(typename Out::type) == sizeof(float)) {
        // each element is read (from the cache, or from the same f32 slot) before it is written
        for (int j = threadIdx.x; j < seq_kv; j += AVK_SOFTMAX_THREADS) {
            float e = j < visible ? exp2f((cached ? row_cache[j] : s[j]) * log2e - m2) * inv : 0.0f;
            p[j] = Out::convert(e);
        }
        return;
    }
    // 16-bit P over the f32 row, uncached: chunk by chunk, read, barrier, write.
    // Chunk c's P bytes cover S elements below (c+1)*threads / 2, all read already.
    for (int base = 0; base < seq_kv; base += AVK_SOFTMAX_THREADS) {
        const int j = base + threadIdx.x;
        float e = 0.0f;
        if (j < visible) e = exp2f(s[j] * log2e - m2) * inv;
        __syncthreads();
        if (j < seq_kv) p[j] = Out::convert(e);
    }
}

extern "C" __global__ void __launch_bounds__(AVK_SOFTMAX_THREADS)
    avk_softmax_f32(float *scores, int seq_q, int seq_kv, int causal, int cached_cols)
{
    avk_softmax_row<avk_f32_out>(scores, seq_q, seq_kv, causal, cached_cols);
}

extern "C" __global__ void __launch_bounds__(AVK_SOFTMAX_THREADS)
    avk_softmax_f16(float *scores, int seq_q, int seq_kv, int causal, int cached_cols)
{
    avk_softmax_row<avk_f16_out>(scores, seq_q, seq_kv, causal, cached_cols);
}

extern "C" __global__ void __launch_bounds__(AVK_SOFTMAX_THREADS)
    avk_softmax_bf16(float *scores, int seq_q, int seq_kv, int causal, int cached_cols)
{
    avk_softmax_row<avk_bf16_out>(scores, seq_q, seq_kv, causal, cached_cols);
}
