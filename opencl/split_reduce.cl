/* Split-KV combine: each split wrote a normalised partial O and its
 * log-sum-exp at part_O[((split*B + b)*H + h)*Nq + i][Dv] (the contract's
 * layout); O = sum_s exp(lse_s - lse) O_s with lse = log sum_s exp(lse_s).
 * One work-item per (column, query row, batch*head). */
__kernel void avk_split_reduce(__global const float *part_O, __global const float *part_LSE, __global avk_elem *O,
                               __global float *LSE, __global const float *sinks, const avk_kernel_args args)
{
    const int d = get_global_id(0);
    const int i = (int)args.q_begin + (int)get_global_id(1);
    const int bh = get_global_id(2);
    if (d >= AVK_DV) return;
    const long row = (long)bh * args.seq_q + i;
    const long split_stride = (long)args.batch * args.heads * args.seq_q;
    const int b = bh / (int)args.heads, h = bh - b * (int)args.heads;
    /* a sink joins once, here: a logit with no value */
    const float sink = (args.flags & AVK_FLAG_SINKS) ? sinks[h] : -INFINITY;
    float mx = sink;
    for (int s = 0; s < (int)args.splits; ++s) mx = fmax(mx, part_LSE[s * split_stride + row]);
    float out = 0.0f, lse = -INFINITY;
    if (mx != -INFINITY) {
        float wsum = sink == -INFINITY ? 0.0f : exp(sink - mx), acc = 0.0f;
        for (int s = 0; s < (int)args.splits; ++s) {
            const float ls = part_LSE[s * split_stride + row];
            if (ls == -INFINITY) continue; /* an empty split */
            const float w = exp(ls - mx);
            wsum += w;
            acc = fma(w, part_O[(s * split_stride + row) * AVK_DV + d], acc);
        }
        out = acc / wsum;
        lse = mx + log(wsum);
    }
    /* Q's strides count whole Dk rows; O's rows hold Dv values */
    const long q_row = (long)b * args.q_sb + (long)h * args.q_sh + (long)i * args.q_ss;
    AVK_STORE1(out, O + q_row / AVK_D * AVK_DV, d);
    if ((args.flags & AVK_FLAG_WRITE_LSE) && d == 0) LSE[row] = lse;
}
