/* Split-KV combine: each split wrote a normalised partial O and its
 * log-sum-exp at part_O[((split*B + b)*H + h)*Nq + i][Dv] (the contract's
 * layout); O = sum_s exp(lse_s - lse) O_s with lse = log sum_s exp(lse_s).
 * One work-item per (column, query row, batch*head). */
#ifndef AVK_MERGE_BATCH
#define AVK_MERGE_BATCH 8
#endif
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
    /* the splits AVK_MERGE_BATCH at a time, every load of a batch issued before any
     * is used and the running max moved once per batch (a loop that waited on
     * each split's LSE before loading its O took two round trips a split) */
    float mx = sink, wsum = sink == -INFINITY ? 0.0f : 1.0f, acc = 0.0f;
    for (int s0 = 0; s0 < (int)args.splits; s0 += AVK_MERGE_BATCH) {
        float ls[AVK_MERGE_BATCH], ov[AVK_MERGE_BATCH];
#pragma unroll
        for (int k = 0; k < AVK_MERGE_BATCH; ++k) {
            /* past the last split: its row again, masked below (no branch around the loads) */
            const int in = s0 + k < (int)args.splits;
            const long s = in ? s0 + k : (long)args.splits - 1;
            ls[k] = in ? part_LSE[s * split_stride + row] : -INFINITY;
            ov[k] = part_O[(s * split_stride + row) * AVK_DV + d];
        }
        float batch_max = mx;
#pragma unroll
        for (int k = 0; k < AVK_MERGE_BATCH; ++k) batch_max = fmax(batch_max, ls[k]);
        if (batch_max == -INFINITY) continue; /* only empty splits so far */
        const float keep = exp(mx - batch_max); /* 0 while mx is -inf */
        wsum *= keep;
        acc *= keep;
#pragma unroll
        for (int k = 0; k < AVK_MERGE_BATCH; ++k) {
            /* an empty split's O may hold anything: selected away, never multiplied */
            const float w = ls[k] == -INFINITY ? 0.0f : exp(ls[k] - batch_max);
            wsum += w;
            acc = w > 0.0f ? fma(w, ov[k], acc) : acc;
        }
        mx = batch_max;
    }
    const float out = wsum > 0.0f ? acc / wsum : 0.0f;
    const float lse = wsum > 0.0f ? mx + log(wsum) : -INFINITY;
    /* Q's strides count whole Dk rows; O's rows hold Dv values */
    const long q_row = (long)b * args.q_sb + (long)h * args.q_sh + (long)i * args.q_ss;
    AVK_STORE1(out, O + q_row / AVK_D * AVK_DV, d);
    if ((args.flags & AVK_FLAG_WRITE_LSE) && d == 0) LSE[row] = lse;
}
