/* Row softmax for the unfused rocBLAS baseline: P = softmax(S) per query row,
 * S in f32 (already scaled by the first GEMM), P in the problem's dtype.
 * attnvk.h's score modifications (softcap, ALiBi, mask), the visible keys
 * (causal, window; i' bottom-right or top-left), the sink in the max and the
 * denominator, the row range of the dispatch, optional LSE (with the sink)
 * and the test flag's key limit are applied here. One workgroup per row; a
 * row with no visible key and no sink becomes zeros, LSE -inf. */
#ifndef __HIPCC_RTC__
#include <hip/hip_runtime.h>
#endif

#ifndef AVK_SOFTMAX_THREADS
#define AVK_SOFTMAX_THREADS 256
#endif

typedef unsigned short avk_u16;
#define AVK_NEG_INF (-__builtin_huge_valf()) /* hipRTC has no <math.h> INFINITY */

/* put: store one value in the type; get (the backward's O and dO): load one */
struct avk_store_f32 {
    static const int bytes = 4;
    static __device__ void put(void *p, long long i, float v) { ((float *)p)[i] = v; }
    static __device__ float get(const void *p, long long i) { return ((const float *)p)[i]; }
};
struct avk_store_f16 {
    static const int bytes = 2;
    static __device__ void put(void *p, long long i, float v) { ((_Float16 *)p)[i] = (_Float16)v; }
    static __device__ float get(const void *p, long long i) { return (float)((const _Float16 *)p)[i]; }
};
struct avk_store_bf16 {
    static const int bytes = 2;
    /* round to nearest even; NaN stays NaN */
    static __device__ void put(void *p, long long i, float v)
    {
        unsigned u = __float_as_uint(v);
        avk_u16 r = (u & 0x7fffffffu) > 0x7f800000u ? (avk_u16)((u >> 16) | 0x40u)
                                                     : (avk_u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        ((avk_u16 *)p)[i] = r;
    }
    static __device__ float get(const void *p, long long i)
    {
        return __uint_as_float((unsigned)((const avk_u16 *)p)[i] << 16);
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

/* The host's flags (the values of opencl/softmax.cl's AVK_SM_*). */
enum { AVK_SM_ALIBI = 1, AVK_SM_SINKS = 2, AVK_SM_MASK = 4, AVK_SM_MASK_F16 = 8, AVK_SM_TOP_LEFT = 16 };

/* attnvk.h's score modifications for one problem; absent inputs are null. */
struct avk_score_mods {
    int heads, flags, window_left, window_right; /* window bounds -1 when unbounded (or no window) */
    float softcap;                               /* > 0: softcap * tanh(s / softcap) */
    const float *slopes, *sinks;                 /* [H] */
    const void *mask;                            /* f32 or f16 (AVK_SM_MASK_F16) */
    long long mask_b, mask_h;                    /* elements; 0 where the mask broadcasts */
};

/* Softcap, then ALiBi, then the mask, in attnvk.h's order. mask_row: the
 * row's first mask element. dsdx (the backward's): the softcap's derivative. */
__device__ inline float avk_modify(float x, int j, long long pos, float slope, long long mask_row,
                                   const avk_score_mods &mod, float *dsdx = nullptr)
{
    if (mod.softcap > 0.f) {
        const float t = tanhf(x / mod.softcap);
        x = mod.softcap * t;
        if (dsdx) *dsdx = 1.f - t * t;
    }
    if (mod.flags & AVK_SM_ALIBI) x += slope * (float)(j - pos);
    if (mod.flags & AVK_SM_MASK)
        x += (mod.flags & AVK_SM_MASK_F16) ? (float)((const _Float16 *)mod.mask)[mask_row + j]
                                           : ((const float *)mod.mask)[mask_row + j];
    return x;
}

/* Row i's position i' (bottom-right i + Nk - Nq, or top-left i) and its
 * visible keys [*begin, *end): causal and the window around i', none from
 * key_limit on. */
__device__ inline long long avk_visible_keys(int i, int seq_q, int seq_kv, int causal, int key_limit,
                                             const avk_score_mods &mod, int *begin, int *end)
{
    const long long pos = (mod.flags & AVK_SM_TOP_LEFT) ? (long long)i : (long long)i + seq_kv - seq_q;
    long long lo = 0, hi = key_limit < seq_kv ? key_limit : seq_kv;
    if (causal && pos + 1 < hi) hi = pos + 1;
    if (mod.window_right >= 0 && pos + mod.window_right + 1 < hi) hi = pos + mod.window_right + 1;
    if (mod.window_left >= 0 && pos - mod.window_left > lo) lo = pos - mod.window_left;
    if (hi < 0) hi = 0;
    if (lo > hi) lo = hi;
    *begin = (int)lo, *end = (int)hi;
    return pos;
}

/* rows = B*H*q_count; row r is query q_begin + r % q_count of head r / q_count.
 * key_limit < Nk drops the keys from there on (the deliberately wrong test kernel).
 * Visible keys are [begin, end). Every pass gives key j to thread j % blockDim.x,
 * so a thread only re-reads scores it wrote itself.
 * Mod: softcap, ALiBi or a mask change the scores; the first pass stores the
 * modified score over S (the workspace) for the later passes. */
template <typename Store, bool Mod>
__device__ void avk_softmax_rows(float *s, void *p, float *lse, int q_count, int q_begin, int seq_q, int seq_kv,
                                 int causal, int key_limit, const avk_score_mods &mod)
{
    __shared__ float scratch[64];
    const long long r = blockIdx.x;
    const int bh = (int)(r / q_count), i = q_begin + (int)(r % q_count);
    const int b = bh / mod.heads, h = bh % mod.heads;
    int begin, end;
    const long long pos = avk_visible_keys(i, seq_q, seq_kv, causal, key_limit, mod, &begin, &end);
    const int step = (int)blockDim.x;
    const int first = begin - begin % step + (int)threadIdx.x;
    float *row = s + r * seq_kv;
    const long long out = r * seq_kv;
    const float sink = (mod.flags & AVK_SM_SINKS) ? mod.sinks[h] : AVK_NEG_INF;
    float slope = 0.f;
    long long mask_row = 0;
    if (Mod) {
        if (mod.flags & AVK_SM_ALIBI) slope = mod.slopes[h];
        mask_row = b * mod.mask_b + h * mod.mask_h + (long long)i * seq_kv;
    }

    float m = AVK_NEG_INF;
    for (int j = first; j < end; j += step) {
        if (j < begin) continue;
        float x = row[j];
        if (Mod) {
            x = avk_modify(x, j, pos, slope, mask_row, mod);
            row[j] = x;
        }
        m = fmaxf(m, x);
    }
    m = fmaxf(avk_block_reduce(m, scratch, true), sink);
    const bool any = m != AVK_NEG_INF; /* else no visible key (or all masked) and no sink */
    float sum = 0.f;
    for (int j = first; any && j < end; j += step)
        if (j >= begin) sum += expf(row[j] - m);
    sum = avk_block_reduce(sum, scratch, false);
    if (any && (mod.flags & AVK_SM_SINKS)) sum += expf(sink - m);
    const float inv = any ? 1.f / sum : 0.f;
    for (int j = threadIdx.x; j < seq_kv; j += step)
        Store::put(p, out + j, any && j >= begin && j < end ? expf(row[j] - m) * inv : 0.f);
    if (lse && threadIdx.x == 0) lse[(long long)bh * seq_q + i] = any ? m + logf(sum) : AVK_NEG_INF;
}

/* One entry per output type, plain or with score modifications (the host
 * picks _mod when softcap, ALiBi or a mask is on); windows, top-left and
 * sinks cost nothing per key and run in both. */
#define AVK_SOFTMAX_KERNEL(name, store, mod_on)                                                               \
    extern "C" __global__ __launch_bounds__(AVK_SOFTMAX_THREADS) void name(                                  \
        float *s, void *p, float *lse, int q_count, int q_begin, int seq_q, int seq_kv, int causal,           \
        int key_limit, int heads, int flags, int window_left, int window_right, float softcap,                \
        const float *slopes, const float *sinks, const void *mask, long long mask_b, long long mask_h)        \
    {                                                                                                         \
        const avk_score_mods mod = {heads,  flags, window_left, window_right, softcap, slopes, sinks, mask,  \
                                    mask_b, mask_h};                                                          \
        avk_softmax_rows<store, mod_on>(s, p, lse, q_count, q_begin, seq_q, seq_kv, causal, key_limit, mod);  \
    }

AVK_SOFTMAX_KERNEL(avk_softmax_rows_f32, avk_store_f32, false)
AVK_SOFTMAX_KERNEL(avk_softmax_rows_f16, avk_store_f16, false)
AVK_SOFTMAX_KERNEL(avk_softmax_rows_bf16, avk_store_bf16, false)
AVK_SOFTMAX_KERNEL(avk_softmax_rows_f32_mod, avk_store_f32, true)
AVK_SOFTMAX_KERNEL(avk_softmax_rows_f16_mod, avk_store_f16, true)
AVK_SOFTMAX_KERNEL(avk_softmax_rows_bf16_mod, avk_store_bf16, true)

/* ---- the backward (issue #18; hip_rocblas_backward.c) ----
 *
 * One workgroup per row of the [B][H][Nq][Nk] f32 scores S (scale * Q.K^T)
 * and dP (dO.V^T): D_i = rowsum(dO * O) over the row's Dv values (O, dO in
 * the problem's type at o_batch/o_head/o_row element strides), then over the
 * visible keys P = exp(S' - LSE) (S' the modified score) and
 * dS = P (dP - D_i) times the softcap's derivative; hidden keys get 0. P goes
 * over S and dS over dP IN PLACE in the problem's type, for the gradient
 * GEMMs (16-bit: chunk by chunk, every read of a chunk before a barrier and
 * its writes, which cover only f32 slots of that chunk or earlier ones).
 * With sinks, share[row] = exp(sink - LSE) D_i for d(sink). */
template <typename Io, bool Mod>
__device__ void avk_softmax_bwd_row(float *scores, float *dp, const float *lse, const void *o, const void *d_o,
                                    float *share, int seq_q, int seq_kv, int dv, long long o_batch, long long o_head,
                                    long long o_row, int causal, const avk_score_mods &mod)
{
    __shared__ float scratch[64];
    const long long row = blockIdx.x;
    const int i = (int)(row % seq_q);
    const int bh = (int)(row / seq_q), b = bh / mod.heads, h = bh % mod.heads;
    const long long o0 = b * o_batch + h * o_head + i * o_row;
    float dot = 0.f;
    for (int d = threadIdx.x; d < dv; d += blockDim.x) dot += Io::get(o, o0 + d) * Io::get(d_o, o0 + d);
    const float delta = avk_block_reduce(dot, scratch, false), row_lse = lse[row];
    int begin, end;
    const long long pos = avk_visible_keys(i, seq_q, seq_kv, causal, seq_kv, mod, &begin, &end);
    float slope = 0.f;
    long long mask_row = 0;
    if (Mod) {
        if (mod.flags & AVK_SM_ALIBI) slope = mod.slopes[h];
        mask_row = b * mod.mask_b + h * mod.mask_h + (long long)i * seq_kv;
    }
    const bool any = row_lse != AVK_NEG_INF; /* else the forward's P row was all zeros */
    float *s = scores + row * seq_kv, *g = dp + row * seq_kv;
    for (int base = 0; base < seq_kv; base += blockDim.x) {
        const int j = base + (int)threadIdx.x;
        float p = 0.f, ds = 0.f;
        if (any && j >= begin && j < end) {
            float dsdx = 1.f, x = s[j];
            if (Mod) x = avk_modify(x, j, pos, slope, mask_row, mod, &dsdx);
            p = expf(x - row_lse);
            ds = p * (g[j] - delta) * dsdx;
        }
        if (Io::bytes != 4) __syncthreads();
        if (j < seq_kv) {
            Io::put(s, j, p);
            Io::put(g, j, ds);
        }
    }
    if ((mod.flags & AVK_SM_SINKS) && threadIdx.x == 0) share[row] = any ? expf(mod.sinks[h] - row_lse) * delta : 0.f;
}

/* One entry per type, plain or with score modifications (as the forward's). */
#define AVK_SOFTMAX_BWD_KERNEL(name, io, mod_on)                                                              \
    extern "C" __global__ __launch_bounds__(AVK_SOFTMAX_THREADS) void name(                                  \
        float *scores, float *dp, const float *lse, const void *o, const void *d_o, float *share, int seq_q,   \
        int seq_kv, int dv, long long o_batch, long long o_head, long long o_row, int causal, int heads,       \
        int flags, int window_left, int window_right, float softcap, const float *slopes, const float *sinks,  \
        const void *mask, long long mask_b, long long mask_h)                                                 \
    {                                                                                                         \
        const avk_score_mods mod = {heads,  flags, window_left, window_right, softcap, slopes, sinks, mask,  \
                                    mask_b, mask_h};                                                          \
        avk_softmax_bwd_row<io, mod_on>(scores, dp, lse, o, d_o, share, seq_q, seq_kv, dv, o_batch, o_head,  \
                                        o_row, causal, mod);                                                  \
    }

AVK_SOFTMAX_BWD_KERNEL(avk_softmax_bwd_f32, avk_store_f32, false)
AVK_SOFTMAX_BWD_KERNEL(avk_softmax_bwd_f16, avk_store_f16, false)
AVK_SOFTMAX_BWD_KERNEL(avk_softmax_bwd_bf16, avk_store_bf16, false)
AVK_SOFTMAX_BWD_KERNEL(avk_softmax_bwd_f32_mod, avk_store_f32, true)
AVK_SOFTMAX_BWD_KERNEL(avk_softmax_bwd_f16_mod, avk_store_f16, true)
AVK_SOFTMAX_BWD_KERNEL(avk_softmax_bwd_bf16_mod, avk_store_bf16, true)

/* d(sink_h) = -sum over (b, i) of share: one workgroup per head, a fixed
 * order (bit-identical runs). */
extern "C" __global__ __launch_bounds__(AVK_SOFTMAX_THREADS) void avk_sink_grad(const float *share, float *d_sinks,
                                                                                int batch, int heads, int seq_q)
{
    __shared__ float scratch[64];
    const int h = blockIdx.x;
    float sum = 0.f;
    for (long long n = threadIdx.x; n < (long long)batch * seq_q; n += blockDim.x)
        sum += share[((n / seq_q) * heads + h) * seq_q + n % seq_q];
    sum = avk_block_reduce(sum, scratch, false);
    if (threadIdx.x == 0) d_sinks[h] = -sum;
}

/* f32 gradients (the GEMMs' outputs) into the problem's 16-bit type, n elements. */
#define AVK_CONVERT_KERNEL(name, store)                                                                       \
    extern "C" __global__ void name(const float *src, void *dst, long long n)                                \
    {                                                                                                         \
        for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;                          \
             e += (long long)gridDim.x * blockDim.x)                                                          \
            store::put(dst, e, src[e]);                                                                       \
    }

AVK_CONVERT_KERNEL(avk_convert_f16, avk_store_f16)
AVK_CONVERT_KERNEL(avk_convert_bf16, avk_store_bf16)
