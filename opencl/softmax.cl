/* Row softmax for the unfused CLBlast baseline. S holds scale*Q.K^T for the
 * dispatched rows of a chunk of (b, h) pairs starting at bh_base
 * ([pairs][rows][Nk], f32); it becomes P in place, after attnvk.h's score
 * modifications (softcap, ALiBi, mask) and within the row's visible keys
 * (causal, window; i' bottom-right or top-left); keys at or past nk_loop are
 * masked too (the test-only "skip the last tile"). The sink, when given,
 * joins the max and the denominator. A row with no visible key and no sink
 * becomes zeros, LSE -inf. */
#ifndef AVK_SOFTMAX_WG
#define AVK_SOFTMAX_WG 256
#endif

enum { AVK_SM_ALIBI = 1, AVK_SM_SINKS = 2, AVK_SM_MASK = 4, AVK_SM_MASK_F16 = 8, AVK_SM_TOP_LEFT = 16 };

/* Row `row`'s position i' and its visible keys [*lo, *hi) (causal, window, keys before nk_loop). */
static long avk_sm_visible(int row, int Nq, int Nk, int nk_loop, int causal, int flags, int window_left,
                           int window_right, long *lo, long *hi)
{
    const long pos = (flags & AVK_SM_TOP_LEFT) ? row : (long)row + Nk - Nq; /* i' */
    long a = 0, e = nk_loop;
    if (causal) e = min(e, pos + 1);
    if (window_right >= 0) e = min(e, pos + window_right + 1);
    if (window_left >= 0) a = max(a, pos - window_left);
    e = max(e, 0L);
    *lo = min(a, e);
    *hi = e;
    return pos;
}

/* Softcap, then ALiBi, then the mask (attnvk.h's order); *dsdx: the softcap's derivative. */
static float avk_sm_modify(float x, long j, long pos, float slope, long m0, int flags, float softcap,
                           __global const float *mask, float *dsdx)
{
    *dsdx = 1.0f;
    if (softcap > 0.0f) {
        const float t = tanh(x / softcap);
        x = softcap * t;
        *dsdx = 1.0f - t * t;
    }
    if (flags & AVK_SM_ALIBI) x += slope * (float)(j - pos);
    if (flags & AVK_SM_MASK)
        x += (flags & AVK_SM_MASK_F16) ? vload_half(m0 + j, (__global const half *)mask) : mask[m0 + j];
    return x;
}

/* Sum (is_max 0) or max over the work-group; red is AVK_SOFTMAX_WG floats. */
static float avk_sm_reduce(float x, int is_max, __local float *red)
{
    const int lid = get_local_id(0);
    red[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = AVK_SOFTMAX_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] = is_max ? fmax(red[lid], red[lid + w]) : red[lid] + red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    x = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return x;
}

__kernel __attribute__((reqd_work_group_size(AVK_SOFTMAX_WG, 1, 1)))
void avk_softmax_rows(__global float *S, __global float *LSE, const int Nq, const int Nk, const int q_begin,
                      const int causal, const int nk_loop, const int write_lse, const int bh_base, const int heads,
                      const int flags, const int window_left, const int window_right, const float softcap,
                      __global const float *slopes, __global const float *sinks, __global const float *mask,
                      const long mask_b, const long mask_h)
{
    const int lid = get_local_id(0);
    const int r = get_group_id(1), bh = get_group_id(2);
    const int row = q_begin + r, b = (bh_base + bh) / heads, h = (bh_base + bh) % heads;
    __global float *srow = S + ((long)bh * get_num_groups(1) + r) * Nk;
    long lo, hi;
    const long pos = avk_sm_visible(row, Nq, Nk, nk_loop, causal, flags, window_left, window_right, &lo, &hi);
    const float slope = (flags & AVK_SM_ALIBI) ? slopes[h] : 0.0f;
    const long m0 = (long)b * mask_b + (long)h * mask_h + (long)row * Nk;
    __local float red[AVK_SOFTMAX_WG];

    float mx = (flags & AVK_SM_SINKS) ? sinks[h] : -INFINITY, unused;
    for (long j = lo + lid; j < hi; j += AVK_SOFTMAX_WG) {
        const float x = avk_sm_modify(srow[j], j, pos, slope, m0, flags, softcap, mask, &unused);
        srow[j] = x;
        mx = fmax(mx, x);
    }
    mx = avk_sm_reduce(mx, 1, red);

    const int any = mx != -INFINITY; /* else nothing visible (or all masked) and no sink */
    float sum = 0.0f;
    for (long j = lo + lid; any && j < hi; j += AVK_SOFTMAX_WG) sum += exp(srow[j] - mx);
    sum = avk_sm_reduce(sum, 0, red);
    if (any && (flags & AVK_SM_SINKS)) sum += exp(sinks[h] - mx);

    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (long j = lid; j < Nk; j += AVK_SOFTMAX_WG) srow[j] = j >= lo && j < hi && any ? exp(srow[j] - mx) * inv : 0.0f;
    if (write_lse && lid == 0) LSE[(long)(bh_base + bh) * Nq + row] = sum > 0.0f ? mx + log(sum) : -INFINITY;
}

/* The backward's row step over all (b, h) pairs ([B*H][Nq][Nk], f32): S holds
 * scale*Q.K^T and dP dO.V^T. With D_i = rowsum(dO*O) and the forward's LSE,
 * P = exp(S' - LSE) over the visible keys (S' the modified score, as above)
 * goes over S and dS = P (dP - D_i) times the softcap's derivative over dP;
 * hidden keys get 0. o_batch/o_head/o_row: O's (and dO's) layout strides in
 * elements. With sinks, share[row] = exp(sink - LSE) D_i for d(sink). */
__kernel __attribute__((reqd_work_group_size(AVK_SOFTMAX_WG, 1, 1)))
void avk_softmax_bwd_rows(__global float *S, __global float *dP, __global const float *LSE,
                          __global const float *O, __global const float *dO, __global float *share, const int Nq,
                          const int Nk, const int Dv, const long o_batch, const long o_head, const long o_row,
                          const int causal, const int heads, const int flags, const int window_left,
                          const int window_right, const float softcap, __global const float *slopes,
                          __global const float *sinks, __global const float *mask, const long mask_b,
                          const long mask_h)
{
    const int lid = get_local_id(0);
    const int row = get_group_id(1), bh = get_group_id(2), b = bh / heads, h = bh % heads;
    const long ri = (long)bh * Nq + row;
    __global float *srow = S + ri * Nk, *dprow = dP + ri * Nk;
    __global const float *orow = O + b * o_batch + h * o_head + row * o_row, *dorow = dO + (orow - O);
    __local float red[AVK_SOFTMAX_WG];
    float dot = 0.0f;
    for (int d = lid; d < Dv; d += AVK_SOFTMAX_WG) dot += orow[d] * dorow[d];
    const float delta = avk_sm_reduce(dot, 0, red), lse = LSE[ri];

    long lo, hi;
    const long pos = avk_sm_visible(row, Nq, Nk, Nk, causal, flags, window_left, window_right, &lo, &hi);
    const float slope = (flags & AVK_SM_ALIBI) ? slopes[h] : 0.0f;
    const long m0 = (long)b * mask_b + (long)h * mask_h + (long)row * Nk;
    const int any = lse != -INFINITY; /* else the forward's P row was all zeros */
    for (long j = lid; j < Nk; j += AVK_SOFTMAX_WG) {
        float p = 0.0f, ds = 0.0f, dsdx;
        if (any && j >= lo && j < hi) {
            p = exp(avk_sm_modify(srow[j], j, pos, slope, m0, flags, softcap, mask, &dsdx) - lse);
            ds = p * (dprow[j] - delta) * dsdx;
        }
        srow[j] = p;
        dprow[j] = ds;
    }
    if ((flags & AVK_SM_SINKS) && lid == 0) share[ri] = any ? exp(sinks[h] - lse) * delta : 0.0f;
}

/* d(sink_h) = -sum over (b, i) of share, in a fixed order (bit-identical runs). */
__kernel __attribute__((reqd_work_group_size(AVK_SOFTMAX_WG, 1, 1)))
void avk_sink_grad(__global const float *share, __global float *d_sinks, const int batch, const int heads,
                   const int Nq)
{
    const int lid = get_local_id(0), h = get_group_id(1);
    __local float red[AVK_SOFTMAX_WG];
    float sum = 0.0f;
    for (long n = lid; n < (long)batch * Nq; n += AVK_SOFTMAX_WG)
        sum += share[((n / Nq) * heads + h) * Nq + n % Nq];
    sum = avk_sm_reduce(sum, 0, red);
    if (lid == 0) d_sinks[h] = -sum;
}

/* An (almost) empty command enqueued first, so the baseline's time spans
 * every kernel CLBlast enqueues in between. */
__kernel void avk_timestamp(__global float *sink, const int never)
{
    if (never) sink[0] = 0.0f;
}
