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
    const long pos = (flags & AVK_SM_TOP_LEFT) ? row : (long)row + Nk - Nq; /* i' */
    long lo = 0, hi = nk_loop;
    if (causal) hi = min(hi, pos + 1);
    if (window_right >= 0) hi = min(hi, pos + window_right + 1);
    if (window_left >= 0) lo = max(lo, pos - window_left);
    hi = max(hi, 0L);
    lo = min(lo, hi);
    const float slope = (flags & AVK_SM_ALIBI) ? slopes[h] : 0.0f;
    const long m0 = (long)b * mask_b + (long)h * mask_h + (long)row * Nk;
    __local float red[AVK_SOFTMAX_WG];

    float mx = (flags & AVK_SM_SINKS) ? sinks[h] : -INFINITY;
    for (long j = lo + lid; j < hi; j += AVK_SOFTMAX_WG) {
        float x = srow[j];
        if (softcap > 0.0f) x = softcap * tanh(x / softcap);
        if (flags & AVK_SM_ALIBI) x += slope * (float)(j - pos);
        if (flags & AVK_SM_MASK)
            x += (flags & AVK_SM_MASK_F16) ? vload_half(m0 + j, (__global const half *)mask) : mask[m0 + j];
        srow[j] = x;
        mx = fmax(mx, x);
    }
    red[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = AVK_SOFTMAX_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] = fmax(red[lid], red[lid + w]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    mx = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);

    const int any = mx != -INFINITY; /* else nothing visible (or all masked) and no sink */
    float sum = 0.0f;
    for (long j = lo + lid; any && j < hi; j += AVK_SOFTMAX_WG) sum += exp(srow[j] - mx);
    red[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = AVK_SOFTMAX_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] += red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    sum = red[0];
    if (any && (flags & AVK_SM_SINKS)) sum += exp(sinks[h] - mx);

    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (long j = lid; j < Nk; j += AVK_SOFTMAX_WG) srow[j] = j >= lo && j < hi && any ? exp(srow[j] - mx) * inv : 0.0f;
    if (write_lse && lid == 0) LSE[(long)(bh_base + bh) * Nq + row] = sum > 0.0f ? mx + log(sum) : -INFINITY;
}

/* An (almost) empty command enqueued first, so the baseline's time spans
 * every kernel CLBlast enqueues in between. */
__kernel void avk_timestamp(__global float *sink, const int never)
{
    if (never) sink[0] = 0.0f;
}
