// Row softmax of the unfused (cuBLAS) baseline, compiled at run time with NVRTC.
//
// S holds scale * Q.K^T in f32, one row of Nk scores per query row, rows in
// [B][H][Nq] order. Each block turns one row into probabilities P and writes
// them IN PLACE in the output type: P row r starts where S row r starts, so
// the second GEMM reads P with a row pitch of Nk f32 (2*Nk 16-bit elements).
// attnvk.h's score modifications apply here (softcap, ALiBi, mask; the
// visible keys of causal and windows around i', bottom-right or top-left;
// the sink in the max and the denominator): hidden keys get P = 0 and a row
// with no visible key and no sink is all zeros (so O is zero).
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

// The host's flags (the values of opencl/softmax.cl's AVK_SM_*).
enum { AVK_SM_ALIBI = 1, AVK_SM_SINKS = 2, AVK_SM_MASK = 4, AVK_SM_MASK_F16 = 8, AVK_SM_TOP_LEFT = 16 };

// attnvk.h's score modifications for one problem; absent inputs are null.
struct avk_score_mods {
    int heads, flags, window_left, window_right; // window bounds -1 when unbounded (or no window)
    float softcap;                               // > 0: softcap * tanh(s / softcap)
    const float *slopes, *sinks;                 // [H]
    const void *mask;                            // f32 or f16 (AVK_SM_MASK_F16)
    long long mask_b, mask_h;                    // elements; 0 where the mask broadcasts
};

static __device__ __forceinline__ float avk_half_to_float(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// Softcap, then ALiBi, then the mask, in attnvk.h's order. mask_row: the
// row's first mask element.
static __device__ __forceinline__ float avk_modify(float x, int j, long long pos, float slope, long long mask_row,
                                                  const avk_score_mods &mod)
{
    if (mod.softcap > 0.0f) x = mod.softcap * tanhf(x / mod.softcap);
    if (mod.flags & AVK_SM_ALIBI) x += slope * (float)(j - pos);
    if (mod.flags & AVK_SM_MASK)
        x += (mod.flags & AVK_SM_MASK_F16) ? avk_half_to_float(((const unsigned short *)mod.mask)[mask_row + j])
                                           : ((const float *)mod.mask)[mask_row + j];
    return x;
}

// cached_cols: the row is first copied to dynamic shared memory when
// Nk <= cached_cols (S is then read once); otherwise it is re-read.
// Visible keys are [begin, end): causal and the window around i' (bottom-right
// i + Nk - Nq, or top-left i). Every pass gives element j to thread
// j % threads, so a thread only re-reads what it wrote itself.
// Mod: softcap, ALiBi or a mask change the scores; the first pass stores the
// modified score (in the cache, or over S) for the later passes.
template <class Out, bool Mod>
__device__ void avk_softmax_row(float *scores, int seq_q, int seq_kv, int causal, int cached_cols,
                                const avk_score_mods &mod)
{
    extern __shared__ float row_cache[];
    __shared__ float scratch[AVK_WARPS];
    const long long row = blockIdx.x;
    const int i = (int)(row % seq_q);
    const int bh = (int)(row / seq_q), b = bh / mod.heads, h = bh % mod.heads;
    const long long pos = (mod.flags & AVK_SM_TOP_LEFT) ? (long long)i : (long long)i + seq_kv - seq_q;
    long long lo = 0, hi = seq_kv;
    if (causal && pos + 1 < hi) hi = pos + 1;
    if (mod.window_right >= 0 && pos + mod.window_right + 1 < hi) hi = pos + mod.window_right + 1;
    if (mod.window_left >= 0 && pos - mod.window_left > lo) lo = pos - mod.window_left;
    if (hi < 0) hi = 0;
    if (lo > hi) lo = hi;
    const int begin = (int)lo, end = (int)hi;
    const int first = begin - begin % AVK_SOFTMAX_THREADS + (int)threadIdx.x;
    float *s = scores + row * seq_kv;
    typename Out::type *p = (typename Out::type *)s;
    const bool cached = seq_kv <= cached_cols;
    const float log2e = 1.4426950408889634f;
    const float sink = (mod.flags & AVK_SM_SINKS) ? mod.sinks[h] : AVK_NEG_INF;
    float slope = 0.0f;
    long long mask_row = 0;
    if (Mod) {
        if (mod.flags & AVK_SM_ALIBI) slope = mod.slopes[h];
        mask_row = b * mod.mask_b + h * mod.mask_h + (long long)i * seq_kv;
    }

    float m = AVK_NEG_INF;
    for (int j = first; j < end; j += AVK_SOFTMAX_THREADS) {
        if (j < begin) continue;
        float x = s[j];
        if (Mod) {
            x = avk_modify(x, j, pos, slope, mask_row, mod);
            if (!cached) s[j] = x;
        }
        if (cached) row_cache[j] = x;
        m = fmaxf(m, x);
    }
    m = fmaxf(avk_block_reduce<true>(m, scratch), sink);
    // -inf: no visible key (or all masked) and no sink, so P is all zero
    const bool any = m != AVK_NEG_INF;
    const float m2 = any ? m * log2e : 0.0f;
    float l = 0.0f;
    for (int j = first; any && j < end; j += AVK_SOFTMAX_THREADS)
        if (j >= begin) l += exp2f((cached ? row_cache[j] : s[j]) * log2e - m2);
    l = avk_block_reduce<false>(l, scratch); // ends with __syncthreads: S may be overwritten from here
    if (any && (mod.flags & AVK_SM_SINKS)) l += exp2f(sink * log2e - m2);
    const float inv = any ? 1.0f / l : 0.0f;

    if (cached || sizeof(typename Out::type) == sizeof(float)) {
        // each element is read (from the cache, or from the same f32 slot) before it is written
        for (int j = threadIdx.x; j < seq_kv; j += AVK_SOFTMAX_THREADS) {
            float e = any && j >= begin && j < end ? exp2f((cached ? row_cache[j] : s[j]) * log2e - m2) * inv : 0.0f;
            p[j] = Out::convert(e);
        }
        return;
    }
    // 16-bit P over the f32 row, uncached: chunk by chunk, read, barrier, write.
    // Chunk c's P bytes cover S elements below (c+1)*threads / 2, all read already.
    for (int base = 0; base < seq_kv; base += AVK_SOFTMAX_THREADS) {
        const int j = base + threadIdx.x;
        float e = 0.0f;
        if (any && j >= begin && j < end) e = exp2f(s[j] * log2e - m2) * inv;
        __syncthreads();
        if (j < seq_kv) p[j] = Out::convert(e);
    }
}

// One entry per output type, plain or with score modifications (the host
// picks _mod when softcap, ALiBi or a mask is on); windows, top-left and
// sinks cost nothing per element and run in both.
#define AVK_SOFTMAX_ENTRY(name, out, mod_on)                                                                     \
    extern "C" __global__ void __launch_bounds__(AVK_SOFTMAX_THREADS)                                            \
        name(float *scores, int seq_q, int seq_kv, int causal, int cached_cols, int heads, int flags,             \
             int window_left, int window_right, float softcap, const float *slopes, const float *sinks,           \
             const void *mask, long long mask_b, long long mask_h)                                                \
    {                                                                                                             \
        const avk_score_mods mod = {heads,   flags, window_left, window_right, softcap, slopes, sinks, mask,     \
                                    mask_b, mask_h};                                                              \
        avk_softmax_row<out, mod_on>(scores, seq_q, seq_kv, causal, cached_cols, mod);                           \
    }

AVK_SOFTMAX_ENTRY(avk_softmax_f32, avk_f32_out, false)
AVK_SOFTMAX_ENTRY(avk_softmax_f16, avk_f16_out, false)
AVK_SOFTMAX_ENTRY(avk_softmax_bf16, avk_bf16_out, false)
AVK_SOFTMAX_ENTRY(avk_softmax_f32_mod, avk_f32_out, true)
AVK_SOFTMAX_ENTRY(avk_softmax_f16_mod, avk_f16_out, true)
AVK_SOFTMAX_ENTRY(avk_softmax_bf16_mod, avk_bf16_out, true)
