/* Split-KV combine: each split wrote a normalised partial O and its
 * log-sum-exp; O = sum_s exp(lse_s - lse) O_s with lse = log sum_s exp(lse_s).
 * One work-item per (column, row, batch*head). */
__kernel void avk_split_reduce(__global const float *Opart, __global const float *LSEpart,
                               __global avk_elem *O, __global float *LSE,
                               const int Nq, const int H, const int n_split,
                               const int q_row_stride, const long q_batch_stride, const long q_head_stride,
                               const int q_begin, const int write_lse)
{
    const int d = get_global_id(0);
    const int row = q_begin + (int)get_global_id(1);
    const int bh = get_global_id(2);
    const int n_bh = get_global_size(2);
    if (d >= AVK_D) return;
    float mx = -INFINITY;
    for (int s = 0; s < n_split; ++s) mx = fmax(mx, LSEpart[((long)s * n_bh + bh) * Nq + row]);
    float out = 0.0f, lse = -INFINITY;
    if (mx != -INFINITY) {
        float wsum = 0.0f, acc = 0.0f;
        for (int s = 0; s < n_split; ++s) {
            const long r = (long)s * n_bh + bh;
            const float w = exp(LSEpart[r * Nq + row] - mx);
            wsum += w;
            acc = fma(w, Opart[(r * Nq + row) * AVK_D + d], acc);
        }
        out = acc / wsum;
        lse = mx + log(wsum);
    }
    const int b = bh / H, h = bh - b * H;
    AVK_STORE1(out, O + b * q_batch_stride + h * q_head_stride + row * q_row_stride, d);
    if (write_lse && d == 0) LSE[(long)bh * Nq + row] = lse;
}
