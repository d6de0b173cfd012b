/* attnvk's native backward pass (FlashAttention-2's, issue #18) for NVRTC:
 * the gradients of runtime/core/reference_backward.c from the forward's O and
 * LSE, P recomputed per tile as exp2(S - LSE), nothing of size Nq x Nk kept.
 * The deterministic mode's kernels own what they write: bit-identical runs.
 *
 *   avk_bwd_pre    D_i = rowsum(dO_i * O_i) (f32) and, with sinks, the row's
 *                  share of d(sink): -exp(sink_h - LSE_i) * D_i
 *   avk_bwd_sinks  d(sink_h): the shares of head h summed in a fixed order
 *   avk_bwd_dkdv   a CTA per AVK_BWD_BC keys of one (b, kv head): over the
 *                  query heads of the group and their AVK_BWD_BQ-row tiles
 *                  that see those keys, dV += P^T dO, dK += dS^T Q
 *   avk_bwd_dq     a CTA per AVK_BWD_QB query rows of one (b, h): over the
 *                  AVK_BWD_KB-key tiles they see, dQ += dS K
 * The mma body's default replaces the last with avk_bwd_dkdv_dq, which adds
 * each key block's dS K to an f32 dQ by atomics, and avk_bwd_dq_convert;
 * the deterministic mode keeps avk_bwd_dq.
 * with dS = P (dP - D) times the softcap's derivative and dP = dO V^T; dK and
 * dQ take the softmax scale at the end. Scores go through the contract's hook
 * (avk_score_mod), so P is the forward's own.
 *
 * -D: AVK_D, AVK_DV, AVK_DTYPE, AVK_SCORE_MOD as the forward; AVK_BWD_MMA 2:
 * Hopper's wgmma for the dK/dV kernels (attn_bwd_sm90.h), 1:
 * mma.sync m16n8k16 (f16/bf16, Dk and Dv multiples of 16; warps own 16 keys
 * (dK/dV) or 16 query rows (dQ), AVK_BWD_WN warps share a key group, each with
 * its Dk/WN and Dv/WN columns of dK and dV), 0: f32 arithmetic in shared
 * memory (any dtype). Tiles from runtime/core/native_backward.c's table;
 * on HIP the mma body runs through amd_matrix.h (attn_bwd_mma.h). */
#include "attn_portability.h"
#include "attn_bwd_params.h"

#if !defined(AVK_D) || !defined(AVK_DTYPE) || !defined(AVK_BWD_BC) || !defined(AVK_BWD_BQ) || \
    !defined(AVK_BWD_QB) || !defined(AVK_BWD_KB)
#error "AVK_D, AVK_DTYPE and the AVK_BWD_* tiles must be defined"
#endif
#ifndef AVK_DV
#define AVK_DV AVK_D
#endif
#ifndef AVK_SCORE_MOD
#define AVK_SCORE_MOD 0
#endif
#ifndef AVK_BWD_MMA
#define AVK_BWD_MMA 0
#endif
#ifndef AVK_BWD_WN
#define AVK_BWD_WN 1
#endif
#define AVK_NEG_INF (-__int_as_float(0x7f800000))
#define AVK_POS_INF (__int_as_float(0x7f800000))
#define AVK_LOG2E 1.4426950408889634f

#include "attn_contract.h" /* the storage type (avk_elem) and the contract's hooks */

/* What attn_scores.h's hook needs of a CTA: one head (the host sets pack 1),
 * rows are query indices. */
struct avk_work {
    int b, h, g, r0, r_end, seq_len, kv_limit;
};
AVK_DEVICE int avk_row_key_end(const avk_attn_params &p, const avk_work &w, int R)
{
    return min(w.kv_limit, avk_key_end(p, w.seq_len, R));
}
AVK_DEVICE int avk_row_key_begin(const avk_attn_params &p, const avk_work &w, int R)
{
    return avk_key_begin(p, w.seq_len, R);
}
#include "attn_scores.h"

AVK_DEVICE avk_work avk_bwd_work(const avk_attn_params &p, int b, int h)
{
    avk_work w;
    w.b = b, w.h = h, w.g = h / (int)p.group, w.r0 = 0, w.r_end = (int)p.seq_q;
    w.seq_len = avk_seq_len(p, b);
    w.kv_limit = w.seq_len;
    return w;
}

/* element offsets of row i of (b, h) in Q/dQ and O/dO, of key j of (b, g) in K/dK and V/dV */
AVK_DEVICE long long avk_bwd_q(const avk_attn_params &p, int b, int h, int i)
{
    return (long long)b * p.q_sb + (long long)h * p.q_sh + (long long)i * p.q_ss;
}
AVK_DEVICE long long avk_bwd_o(const avk_attn_params &p, int b, int h, int i)
{
    return avk_bwd_q(p, b, h, i) / AVK_D * AVK_DV;
}
AVK_DEVICE long long avk_bwd_kv_row(const avk_attn_params &p, int b, int g, int j)
{
    return (long long)b * p.kv_sb + (long long)g * p.kv_sh + (long long)j * p.kv_ss;
}
AVK_DEVICE long long avk_bwd_row(const avk_attn_params &p, int b, int h, int i)
{
    return ((long long)b * p.heads + h) * p.seq_q + i;
}

/* The LSE in the log2 domain; a row without keys (-inf) becomes +inf, so
 * every P of it is exp2(-inf) = 0, as the reference's zero gradients. */
AVK_DEVICE float avk_bwd_lse2_of(float l) { return l == AVK_NEG_INF ? AVK_POS_INF : l * AVK_LOG2E; }
AVK_DEVICE float avk_bwd_lse2(const avk_bwd_params &a, long long row) { return avk_bwd_lse2_of(((const float *)a.f.lse)[row]); }

/* The multiply that avk_score_mod's softcap does (tanh(x * it)), for dS's chain rule. */
AVK_DEVICE float avk_bwd_cap_in(const avk_attn_params &p)
{
#if AVK_SCORE_MOD & AVK_MOD_SOFTCAP
    return p.scale_log2 * (0.69314718055994530942f / p.softcap);
#else
    (void)p;
    return 0.f;
#endif
}

/* One score's P and dS from its raw q.k (x, before the hook: the softcap's
 * derivative 1 - t^2 needs t = tanh of it), the hook's output (y), dP. */
AVK_DEVICE void avk_bwd_grad(float x, float y, float dp, float sc, float lse2, float delta, float cap_in, float &prob,
                             float &ds)
{
    prob = avk_exp2(y * sc - lse2);
    float dsdx = 1.f;
#if AVK_SCORE_MOD & AVK_MOD_SOFTCAP
    const float t = avk_tanh(x * cap_in);
    dsdx = 1.f - t * t;
#else
    (void)x, (void)cap_in;
#endif
    ds = prob == 0.f ? 0.f : prob * (dp - delta) * dsdx;
}

/* Where dQ's f32 sums (the atomics' a.dq_acc) keep row i, column d of (b, h). The wgmma body adds
 * each 64 x 64 block of a query tile by bulk reductions from its MMA's fragment order, so its
 * sums keep that order: [B][H][ceil(Nq / 64)][Dk / 64] blocks of 4096 floats, accumulator e of
 * column group n of lane l of warp w (rows w * 16 + l / 4 (+ 8: e >= 2), columns n * 8 + l % 4 *
 * 2 + e % 2) at (n * 128 + w * 32 + l) * 4 + e (AVK_BWD_DQ_WARP=1, a bulk reduction a warp: at
 * ((w * 8 + n) * 32 + l) * 4 + e, a warp's 4 KiB apart); the others keep [B][H][Nq][Dk]. */
#ifndef AVK_BWD_DQ_WARP
#define AVK_BWD_DQ_WARP 0
#endif
AVK_DEVICE long long avk_bwd_dq_acc_at(const avk_attn_params &p, int b, int h, int i, int d)
{
#if AVK_BWD_MMA == 2
    const long long tiles = ((long long)p.seq_q + 63) / 64;
    const long long block = (((long long)b * p.heads + h) * tiles + i / 64) * (AVK_D / 64) + d / 64;
    const int r = i % 64, c = d % 64, w = r / 16, l = r % 8 * 4 + c % 8 / 2, n = c / 8, e = r % 16 / 8 * 2 + c % 2;
    return block * 4096 + (AVK_BWD_DQ_WARP ? (w * 8 + n) * 32 + l : n * 128 + w * 32 + l) * 4 + e;
#else
    return avk_bwd_row(p, b, h, i) * AVK_D + d;
#endif
}

/* ===================== D_i and d(sink): both paths ===================== */
/* a warp per row of [B][H][Nq] */
AVK_KERNEL void __launch_bounds__(256) avk_bwd_pre(const avk_bwd_params a)
{
    const avk_attn_params &p = a.f;
    const long long rows = (long long)p.batch * p.heads * p.seq_q;
    const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const int i = (int)(row % p.seq_q), h = (int)(row / p.seq_q % p.heads), b = (int)(row / p.seq_q / p.heads);
    const long long o = avk_bwd_o(p, b, h, i);
    const avk_elem *O = (const avk_elem *)p.o + o, *dO = (const avk_elem *)a.d_o + o;
    float sum = 0.f;
    for (int d = lane; d < AVK_DV; d += 32) sum += avk_to_f32(O[d]) * avk_to_f32(dO[d]);
    if (a.dq_acc) { /* the atomics' dQ sums start at 0 */
#if AVK_BWD_MMA == 2 /* (b, h)'s blocks as rows of Dk, the last row's warp the padding's too */
        const long long padded = ((long long)p.seq_q + 63) / 64 * 64, at = ((long long)b * p.heads + h) * padded;
        const long long end = i + 1 == (int)p.seq_q ? padded : i + 1;
        for (long long e = (at + i) * AVK_D + lane; e < (at + end) * AVK_D; e += 32) ((float *)a.dq_acc)[e] = 0.f;
#else
        for (int d = lane; d < AVK_D; d += 32) ((float *)a.dq_acc)[row * AVK_D + d] = 0.f;
#endif
    }
    for (int m = 16; m > 0; m /= 2) sum += avk_shfl_xor(sum, m);
    if (lane == 0) {
        ((float *)a.delta)[row] = sum;
        const float lse = ((const float *)p.lse)[row];
        if (p.flags & AVK_FLAG_SINKS)
            ((float *)a.sink_share)[row] =
                lse == AVK_NEG_INF ? 0.f : -avk_exp2((((const float *)p.sinks)[h] - lse) * AVK_LOG2E) * sum;
    }
}

/* a CTA of 256 per head: strided partial sums, then a fixed tree */
AVK_KERNEL void __launch_bounds__(256) avk_bwd_sinks(const avk_bwd_params a)
{
    __shared__ float part[256];
    const avk_attn_params &p = a.f;
    const int h = blockIdx.x, n = (int)(p.batch * p.seq_q);
    float sum = 0.f;
    for (int r = threadIdx.x; r < n; r += 256)
        sum += ((const float *)a.sink_share)[avk_bwd_row(p, r / (int)p.seq_q, h, r % (int)p.seq_q)];
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) ((float *)a.d_sinks)[h] = part[0];
}

/* dQ from the atomics' f32 sums (a.dq_acc, [B][H][Nq][Dk]): scaled, in the problem's dtype and layout */
AVK_KERNEL void __launch_bounds__(256) avk_bwd_dq_convert(const avk_bwd_params a)
{
    const avk_attn_params &p = a.f;
    const long long n = (long long)p.batch * p.heads * p.seq_q * AVK_D;
    const float scale = p.scale_log2 / AVK_LOG2E;
    for (long long e = (long long)blockIdx.x * 256 + threadIdx.x; e < n; e += (long long)gridDim.x * 256) {
        const long long row = e / AVK_D;
        const int i = (int)(row % p.seq_q), h = (int)(row / p.seq_q % p.heads), b = (int)(row / p.seq_q / p.heads);
        const int d = (int)(e % AVK_D);
        ((avk_elem *)a.dq)[avk_bwd_q(p, b, h, i) + d] =
            avk_from_f32(((const float *)a.dq_acc)[avk_bwd_dq_acc_at(p, b, h, i, d)] * scale);
    }
}

/* Rows [i0, i1) see none of keys [k0, k1): visible ranges only grow with i. */
AVK_DEVICE bool avk_bwd_disjoint(const avk_attn_params &p, const avk_work &w, int i0, int i1, int k0, int k1)
{
    return avk_row_key_end(p, w, i1 - 1) <= k0 || avk_row_key_begin(p, w, i0) >= k1;
}

#if AVK_BWD_MMA
#include "attn_bwd_mma.h"
#if AVK_BWD_MMA == 2
#include "attn_bwd_sm90.h" /* its dK/dV kernels on wgmma; the dQ kernel stays mma.sync's */
#endif
#else
#include "attn_bwd_simt.h"
#endif
