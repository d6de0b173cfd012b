// Row softmax of the unfused (cuBLAS) baseline, compiled at run time with NVRTC,
// and the vendor rows' small conversions (f32 gradients, cuDNN's e4m3 O).
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
    static __device__ __forceinline__ float to_float(float x) { return x; }
};
struct avk_f16_out {
    typedef unsigned short type;
    static __device__ __forceinline__ unsigned short convert(float x)
    {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
        return h;
    }
    static __device__ __forceinline__ float to_float(unsigned short h)
    {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
        return f;
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
    static __device__ __forceinline__ float to_float(unsigned short h) { return __int_as_float((int)h << 16); }
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
// row's first mask element. dsdx (the backward's): the softcap's derivative.
static __device__ __forceinline__ float avk_modify(float x, int j, long long pos, float slope, long long mask_row,
                                                  const avk_score_mods &mod, float *dsdx = nullptr)
{
    if (mod.softcap > 0.0f) {
        const float t = tanhf(x / mod.softcap);
        x = mod.softcap * t;
        if (dsdx) *dsdx = 1.0f - t * t;
    }
    if (mod.flags & AVK_SM_ALIBI) x += slope * (float)(j - pos);
    if (mod.flags & AVK_SM_MASK)
        x += (mod.flags & AVK_SM_MASK_F16) ? avk_half_to_float(((const unsigned short *)mod.mask)[mask_row + j])
                                           : ((const float *)mod.mask)[mask_row + j];
    return x;
}

// Row i's position i' (bottom-right i + Nk - Nq, or top-left i) and its
// visible keys [*begin, *end): causal and the window around i'.
static __device__ __forceinline__ long long avk_visible_keys(int i, int seq_q, int seq_kv, int causal,
                                                             const avk_score_mods &mod, int *begin, int *end)
{
    const long long pos = (mod.flags & AVK_SM_TOP_LEFT) ? (long long)i : (long long)i + seq_kv - seq_q;
    long long lo = 0, hi = seq_kv;
    if (causal && pos + 1 < hi) hi = pos + 1;
    if (mod.window_right >= 0 && pos + mod.window_right + 1 < hi) hi = pos + mod.window_right + 1;
    if (mod.window_left >= 0 && pos - mod.window_left > lo) lo = pos - mod.window_left;
    if (hi < 0) hi = 0;
    if (lo > hi) lo = hi;
    *begin = (int)lo, *end = (int)hi;
    return pos;
}

// cached_cols: the row is first copied to dynamic shared memory when
// Nk <= cached_cols (S is then read once); otherwise it is re-read.
// Visible keys are [begin, end): causal and the window around i' (bottom-right
// i + Nk - Nq, or top-left i). Every pass gives element j to thread
// j % threads, so a thread only re-reads what it wrote itself.
// Mod: softcap, ALiBi or a mask change the scores; the first pass stores the
// modified score (in the cache, or over S) for the later passes.
// lse (null when not asked): the row's log-sum-exp, [B][H][Nq] like the rows.
template <class Out, bool Mod>
__device__ void avk_softmax_row(float *scores, int seq_q, int seq_kv, int causal, int cached_cols,
                                const avk_score_mods &mod, float *lse)
{
    extern __shared__ float row_cache[];
    __shared__ float scratch[AVK_WARPS];
    const long long row = blockIdx.x;
    const int i = (int)(row % seq_q);
    const int bh = (int)(row / seq_q), b = bh / mod.heads, h = bh % mod.heads;
    int begin, end;
    const long long pos = avk_visible_keys(i, seq_q, seq_kv, causal, mod, &begin, &end);
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
    if (lse && threadIdx.x == 0) lse[row] = any ? m + logf(l) : AVK_NEG_INF;

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
             const void *mask, long long mask_b, long long mask_h, float *lse)                                    \
    {                                                                                                             \
        const avk_score_mods mod = {heads,   flags, window_left, window_right, softcap, slopes, sinks, mask,     \
                                    mask_b, mask_h};                                                              \
        avk_softmax_row<out, mod_on>(scores, seq_q, seq_kv, causal, cached_cols, mod, lse);                      \
    }

AVK_SOFTMAX_ENTRY(avk_softmax_f32, avk_f32_out, false)
AVK_SOFTMAX_ENTRY(avk_softmax_f16, avk_f16_out, false)
AVK_SOFTMAX_ENTRY(avk_softmax_bf16, avk_bf16_out, false)
AVK_SOFTMAX_ENTRY(avk_softmax_f32_mod, avk_f32_out, true)
AVK_SOFTMAX_ENTRY(avk_softmax_f16_mod, avk_f16_out, true)
AVK_SOFTMAX_ENTRY(avk_softmax_bf16_mod, avk_bf16_out, true)

// ---- the backward (issue #18) ----
//
// One block per row of the [B][H][Nq][Nk] f32 scores S (scale * Q.K^T) and
// dP (dO.V^T): D_i = rowsum(dO * O) over the row's Dv values (O, dO in the
// problem's type Io at o_batch/o_head/o_row element strides), then over the
// visible keys P = exp(S' - LSE) (S' the modified score) and
// dS = P (dP - D_i) times the softcap's derivative; hidden keys get 0. P goes
// over S and dS over dP IN PLACE in type Io (16-bit: chunk by chunk, as the
// forward writes P), for the gradient GEMMs. With sinks, share[row] =
// exp(sink - LSE) D_i for d(sink).
template <class Io, bool Mod>
__device__ void avk_softmax_bwd_row(float *scores, float *dp, const float *lse, const typename Io::type *o,
                                    const typename Io::type *d_o, float *share, int seq_q, int seq_kv, int dv,
                                    long long o_batch, long long o_head, long long o_row, int causal,
                                    const avk_score_mods &mod)
{
    __shared__ float scratch[AVK_WARPS];
    const long long row = blockIdx.x;
    const int i = (int)(row % seq_q);
    const int bh = (int)(row / seq_q), b = bh / mod.heads, h = bh % mod.heads;
    const long long o0 = b * o_batch + h * o_head + i * o_row;
    float dot = 0.0f;
    for (int d = threadIdx.x; d < dv; d += AVK_SOFTMAX_THREADS) dot += Io::to_float(o[o0 + d]) * Io::to_float(d_o[o0 + d]);
    const float delta = avk_block_reduce<false>(dot, scratch), row_lse = lse[row];
    int begin, end;
    const long long pos = avk_visible_keys(i, seq_q, seq_kv, causal, mod, &begin, &end);
    float slope = 0.0f;
    long long mask_row = 0;
    if (Mod) {
        if (mod.flags & AVK_SM_ALIBI) slope = mod.slopes[h];
        mask_row = b * mod.mask_b + h * mod.mask_h + (long long)i * seq_kv;
    }
    const bool any = row_lse != AVK_NEG_INF; // else the forward's P row was all zeros
    float *s = scores + row * seq_kv, *g = dp + row * seq_kv;
    typename Io::type *p_out = (typename Io::type *)s, *ds_out = (typename Io::type *)g;
    // chunk by chunk: every thread reads its S and dP, barrier, then writes (16-bit outputs overlap
    // only f32 slots of this or earlier chunks)
    for (int base = 0; base < seq_kv; base += AVK_SOFTMAX_THREADS) {
        const int j = base + threadIdx.x;
        float p = 0.0f, ds = 0.0f;
        if (any && j >= begin && j < end) {
            float dsdx = 1.0f, x = s[j];
            if (Mod) x = avk_modify(x, j, pos, slope, mask_row, mod, &dsdx);
            p = expf(x - row_lse);
            ds = p * (g[j] - delta) * dsdx;
        }
        if (sizeof(typename Io::type) != sizeof(float)) __syncthreads();
        if (j < seq_kv) {
            p_out[j] = Io::convert(p);
            ds_out[j] = Io::convert(ds);
        }
    }
    if ((mod.flags & AVK_SM_SINKS) && threadIdx.x == 0) share[row] = any ? expf(mod.sinks[h] - row_lse) * delta : 0.0f;
}

#define AVK_SOFTMAX_BWD_ENTRY(name, io, mod_on)                                                                  \
    extern "C" __global__ void __launch_bounds__(AVK_SOFTMAX_THREADS)                                            \
        name(float *scores, float *dp, const float *lse, const io::type *o, const io::type *d_o, float *share,   \
             int seq_q, int seq_kv, int dv, long long o_batch, long long o_head, long long o_row, int causal,      \
             int heads, int flags, int window_left, int window_right, float softcap, const float *slopes,         \
             const float *sinks, const void *mask, long long mask_b, long long mask_h)                            \
    {                                                                                                             \
        const avk_score_mods mod = {heads,   flags, window_left, window_right, softcap, slopes, sinks, mask,     \
                                    mask_b, mask_h};                                                              \
        avk_softmax_bwd_row<io, mod_on>(scores, dp, lse, o, d_o, share, seq_q, seq_kv, dv, o_batch, o_head,      \
                                        o_row, causal, mod);                                                      \
    }

AVK_SOFTMAX_BWD_ENTRY(avk_softmax_bwd_f32, avk_f32_out, false)
AVK_SOFTMAX_BWD_ENTRY(avk_softmax_bwd_f16, avk_f16_out, false)
AVK_SOFTMAX_BWD_ENTRY(avk_softmax_bwd_bf16, avk_bf16_out, false)
AVK_SOFTMAX_BWD_ENTRY(avk_softmax_bwd_f32_mod, avk_f32_out, true)
AVK_SOFTMAX_BWD_ENTRY(avk_softmax_bwd_f16_mod, avk_f16_out, true)
AVK_SOFTMAX_BWD_ENTRY(avk_softmax_bwd_bf16_mod, avk_bf16_out, true)

// d(sink_h) = -sum over (b, i) of share: one block per head, a fixed order (bit-identical runs).
extern "C" __global__ void __launch_bounds__(AVK_SOFTMAX_THREADS)
    avk_sink_grad(const float *share, float *d_sinks, int batch, int heads, int seq_q)
{
    __shared__ float scratch[AVK_WARPS];
    const int h = blockIdx.x;
    float sum = 0.0f;
    for (long long n = threadIdx.x; n < (long long)batch * seq_q; n += AVK_SOFTMAX_THREADS)
        sum += share[((n / seq_q) * heads + h) * seq_q + n % seq_q];
    sum = avk_block_reduce<false>(sum, scratch);
    if (threadIdx.x == 0) d_sinks[h] = -sum;
}

// f32 gradients (the GEMMs' f32 outputs) to the problem's 16-bit type, n elements.
#define AVK_CONVERT_ENTRY(name, out)                                                                             \
    extern "C" __global__ void name(const float *src, out::type *dst, long long n)                               \
    {                                                                                                             \
        for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;                              \
             e += (long long)gridDim.x * blockDim.x)                                                             \
            dst[e] = out::convert(src[e]);                                                                       \
    }

AVK_CONVERT_ENTRY(avk_convert_f16, avk_f16_out)
AVK_CONVERT_ENTRY(avk_convert_bf16, avk_bf16_out)

// e4m3 (1 sign, 4 exponent bits biased by 7, 3 mantissa bits; S.1111.111 NaN) as f32, by its bits: any arch
static __device__ __forceinline__ float avk_e4m3_to_f32(unsigned char b)
{
    const int e = (b >> 3) & 15, m = b & 7;
    float v = e ? __int_as_float(((e + 120) << 23) | (m << 20)) : (float)m * __int_as_float((127 - 9) << 23);
    if (e == 15 && m == 7) v = __int_as_float(0x7fc00000);
    return (b & 0x80) ? -v : v;
}

// cuDNN's FP8 attention writes O in e4m3 on Hopper: O * scale in the problem's 16-bit type, n elements.
#define AVK_FP8_OUT_ENTRY(name, out)                                                                             \
    extern "C" __global__ void name(const unsigned char *src, out::type *dst, float scale, long long n)          \
    {                                                                                                             \
        for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;                              \
             e += (long long)gridDim.x * blockDim.x)                                                             \
            dst[e] = out::convert(avk_e4m3_to_f32(src[e]) * scale);                                              \
    }

AVK_FP8_OUT_ENTRY(avk_fp8_out_f16, avk_f16_out)
AVK_FP8_OUT_ENTRY(avk_fp8_out_bf16, avk_bf16_out)
