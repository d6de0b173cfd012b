/* Ring attention's merge (runtime/core/backend.h, avk_merge_args): folds one
 * block's partial (O, LSE) into the f32 accumulator (o_acc, lse_acc), with
 * the arithmetic of runtime/core/ring_merge.c; o_out (when not NULL) gets the
 * merged O in the dtype. A work-group holds AVK_MERGE_ROWS rows of
 * AVK_MERGE_LANES work-items each (-D options from runtime/opencl/cl_merge.c).
 * f16 goes through vload_half/vstore_half and bf16 through 16-bit words, so
 * neither needs cl_khr_fp16. One kernel per dtype: avk_ring_merge_<dtype>. */
#ifndef AVK_MERGE_LANES
#define AVK_MERGE_LANES 32
#endif
#ifndef AVK_MERGE_ROWS
#define AVK_MERGE_ROWS 4
#endif

#define AVK_MERGE_COPY 0  /* first block: acc = part */
#define AVK_MERGE_ZERO 1  /* both LSEs -inf: acc = (0, -inf) */
#define AVK_MERGE_BLEND 2 /* weighted by exp(lse - max) */

inline float avk_merge_load_f32(__global const void *p, ulong i) { return ((__global const float *)p)[i]; }
inline void avk_merge_store_f32(__global void *p, ulong i, float v) { ((__global float *)p)[i] = v; }
inline float avk_merge_load_f16(__global const void *p, ulong i) { return vload_half(i, (__global const half *)p); }
inline void avk_merge_store_f16(__global void *p, ulong i, float v) { vstore_half_rte(v, i, (__global half *)p); }
inline float avk_merge_load_bf16(__global const void *p, ulong i)
{
    return as_float((uint)((__global const ushort *)p)[i] << 16);
}
/* round to nearest even; NaN stays NaN */
inline void avk_merge_store_bf16(__global void *p, ulong i, float v)
{
    uint u = as_uint(v);
    ushort r = (u & 0x7fffffffu) > 0x7f800000u ? (ushort)((u >> 16) | 0x40u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    ((__global ushort *)p)[i] = r;
}

#define AVK_RING_MERGE(dtype)                                                                                   \
    __kernel __attribute__((reqd_work_group_size(AVK_MERGE_LANES * AVK_MERGE_ROWS, 1, 1))) void               \
    avk_ring_merge_##dtype(__global const void *o_part, __global const float *lse_part, __global float *o_acc, \
                           __global float *lse_acc, __global void *o_out, uint rows, uint dv, uint first)      \
    {                                                                                                           \
        const uint lid = (uint)get_local_id(0), lane = lid % AVK_MERGE_LANES;                                   \
        const ulong r = (ulong)get_group_id(0) * AVK_MERGE_ROWS + lid / AVK_MERGE_LANES;                        \
        const int live = r < rows;                                                                              \
        /* the row's weights, from lse_acc as it was before this merge */                                       \
        int mode = AVK_MERGE_COPY;                                                                              \
        float wa = 0.0f, wp = 1.0f, inv = 1.0f, lse = -INFINITY;                                                \
        if (live) {                                                                                             \
            const float lp = lse_part[r];                                                                       \
            lse = lp;                                                                                           \
            if (!first) {                                                                                       \
                const float la = lse_acc[r], m = fmax(la, lp);                                                  \
                if (m == -INFINITY) {                                                                           \
                    mode = AVK_MERGE_ZERO;                                                                      \
                } else {                                                                                        \
                    mode = AVK_MERGE_BLEND;                                                                     \
                    wa = exp(la - m);                                                                           \
                    wp = exp(lp - m);                                                                           \
                    inv = 1.0f / (wa + wp);                                                                     \
                    lse = m + log(wa + wp);                                                                     \
                }                                                                                               \
            }                                                                                                   \
            const ulong begin = r * dv;                                                                         \
            for (ulong e = begin + lane; e < begin + dv; e += AVK_MERGE_LANES) {                                \
                const float x = avk_merge_load_##dtype(o_part, e);                                              \
                const float a = mode == AVK_MERGE_COPY ? x                                                      \
                                : mode == AVK_MERGE_ZERO ? 0.0f                                                 \
                                                         : (o_acc[e] * wa + x * wp) * inv;                      \
                o_acc[e] = a;                                                                                   \
                if (o_out) avk_merge_store_##dtype(o_out, e, a);                                                \
            }                                                                                                   \
        }                                                                                                       \
        /* every work-item of the row has read lse_acc before it is rewritten */                                \
        barrier(CLK_GLOBAL_MEM_FENCE);                                                                          \
        if (live && lane == 0) lse_acc[r] = lse;                                                                \
    }

AVK_RING_MERGE(f32)
AVK_RING_MERGE(f16)
AVK_RING_MERGE(bf16)
