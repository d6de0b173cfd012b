/* Row softmax for the unfused CLBlast baseline. S holds scale*Q.K^T for the
 * dispatched rows of a chunk of (b, h) pairs starting at bh_base
 * ([pairs][rows][Nk], f32); it becomes P in place. Bottom-right
 * causal mask; keys at or past nk_loop are masked too (the test-only
 * "skip the last tile"). A row that sees no key becomes zeros, LSE -inf. */
#ifndef AVK_SOFTMAX_WG
#define AVK_SOFTMAX_WG 256
#endif

__kernel __attribute__((reqd_work_group_size(AVK_SOFTMAX_WG, 1, 1)))
void avk_softmax_rows(__global float *S, __global float *LSE, const int Nq, const int Nk, const int q_begin,
                      const int causal, const int nk_loop, const int write_lse, const int bh_base)
{
    const int lid = get_local_id(0);
    const int r = get_group_id(1), bh = get_group_id(2);
    const int row = q_begin + r;
    __global float *srow = S + ((long)bh * get_num_groups(1) + r) * Nk;
    const int visible = causal ? clamp(row + Nk - Nq + 1, 0, nk_loop) : nk_loop;
    __local float red[AVK_SOFTMAX_WG];

    float mx = -INFINITY;
    for (int j = lid; j < visible; j += AVK_SOFTMAX_WG) mx = fmax(mx, srow[j]);
    red[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = AVK_SOFTMAX_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] = fmax(red[lid], red[lid + w]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    mx = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);

    float sum = 0.0f;
    for (int j = lid; j < visible; j += AVK_SOFTMAX_WG) sum += exp(srow[j] - mx);
    red[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = AVK_SOFTMAX_WG / 2; w > 0; w >>= 1) {
        if (lid < w) red[lid] += red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    sum = red[0];

    const float inv = visible > 0 ? 1.0f / sum : 0.0f;
    for (int j = lid; j < Nk; j += AVK_SOFTMAX_WG) srow[j] = j < visible ? exp(srow[j] - mx) * inv : 0.0f;
    if (write_lse && lid == 0) LSE[(long)(bh_base + bh) * Nq + row] = visible > 0 ? mx + log(sum) : -INFINITY;
}

/* An (almost) empty command enqueued first, so the baseline's time spans
 * every kernel CLBlast enqueues in between. */
__kernel void avk_timestamp(__global float *sink, const int never)
{
    if (never) sink[0] = 0.0f;
}
