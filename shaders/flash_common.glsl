// Interface shared by every attnvk flash shader: bindings, push constants
// and the row/key ranges a workgroup owns. Included, never compiled alone.
#ifndef FLASH_COMMON_GLSL
#define FLASH_COMMON_GLSL

// Push constants (must match vk_params in runtime/vulkan/vk_kernel.h).
layout(push_constant) uniform Params {
    uint batch, heads, kv_group;          // kv_group = H / H_kv
    uint seq_q, seq_kv;
    uint q_stride_s, q_stride_h, q_stride_b;    // elements; D is contiguous
    uint kv_stride_s, kv_stride_h, kv_stride_b;
    float scale_log2;                     // scale * log2(e): softmax runs in base 2
    int causal_shift;                     // Nk - Nq: key j visible to row i iff j <= i + shift
    uint causal;
    uint q_begin, q_end;                  // query rows [q_begin, q_end) of every (b, h)
    uint flags;                           // FLAG_*
    uint n_splits, split_len;             // split-KV: keys per split (multiple of BC)
} pc;

const uint FLAG_WRITE_LSE = 1u;
const uint FLAG_SKIP_LAST_TILE = 2u;      // ATTNVK_TEST_SKIP_LAST_KV_TILE
const uint FLAG_SPLIT = 4u;               // write partials to the workspace

#define NEG_INF uintBitsToFloat(0xff800000u)
const float LN2 = 0.69314718055994530942;

// Which (batch, head, split, rows, keys) this workgroup owns; grid is
// x = query blocks of BR rows, y = heads, z = batch * n_splits.
struct Work {
    uint b, h, split;
    uint i0;          // first query row of the block
    uint q_base;      // element offset of row 0 of (b, h) in Q/O
    uint kv_base;     // element offset of key 0 of (b, kv head) in K/V
    uint kv_lo, kv_hi;
    uint ntiles;      // key tiles of BC keys to stream
};

Work flash_work(uint br, uint bc)
{
    Work w;
    w.h = gl_WorkGroupID.y;
    w.b = gl_WorkGroupID.z / pc.n_splits;
    w.split = gl_WorkGroupID.z % pc.n_splits;
    w.i0 = pc.q_begin + gl_WorkGroupID.x * br;
    uint g = w.h / pc.kv_group;
    w.q_base = w.b * pc.q_stride_b + w.h * pc.q_stride_h;
    w.kv_base = w.b * pc.kv_stride_b + g * pc.kv_stride_h;
    w.kv_lo = w.split * pc.split_len;
    w.kv_hi = min(pc.seq_kv, w.kv_lo + pc.split_len);
    if (pc.causal != 0u) {
        // the block's last real row sees keys up to last + shift
        int last_row = int(min(w.i0 + br, pc.q_end)) - 1;
        int limit = last_row + pc.causal_shift + 1;
        w.kv_hi = uint(clamp(limit, int(w.kv_lo), int(w.kv_hi)));
    }
    w.ntiles = w.kv_hi > w.kv_lo ? (w.kv_hi - w.kv_lo + bc - 1u) / bc : 0u;
    if ((pc.flags & FLAG_SKIP_LAST_TILE) != 0u && w.ntiles > 0u) w.ntiles -= 1u;
    return w;
}

// Last key index row i may see (inclusive), as int; huge when not causal.
int flash_row_limit(uint i)
{
    return pc.causal != 0u ? int(i) + pc.causal_shift : 0x7fffffff;
}

// Workspace row of (split, b, h, i) for split-KV partials: [split][b][h][q_end - q_begin].
uint flash_ws_row(uint split, uint b, uint h, uint i)
{
    uint rows = pc.q_end - pc.q_begin;
    return ((split * pc.batch + b) * pc.heads + h) * rows + (i - pc.q_begin);
}

// LSE is [B][H][Nq] f32.
uint flash_lse_index(uint b, uint h, uint i)
{
    return (b * pc.heads + h) * pc.seq_q + i;
}

#endif
