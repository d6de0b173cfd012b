// The matrix decode body's direct K/V operands (flash_decode_mma_body.glsl,
// AVK_DIRECT_KV; its header says what they are): a quantized cache's rows
// loaded as aligned words (flash_kv_words.glsl) a tile ahead, and decoded in
// registers into the f16 B operands of S = Q.K^T and O += P.V, in NVIDIA's
// layout or, in the emulation (cm_layout_emu.glsl with 16x16 matrices), lane
// by lane. Uses the body's D, DV, Work and CM_* macros. Included once, by the
// body, never compiled alone.
#include "flash_kv_words.glsl"
// Parts of a K row a lane takes (q + 4 pp) and of a V row (g + 8 vp); at most 4 and 2
// (D <= 256: glslang sizes spec-sized arrays as 1 for its bounds checks)
const uint KPARTS = D / 64u, VPARTS = DV / 128u;
uvec4 k_wd[2][4], k_nx[2][4], v_wd[4][2], v_nx[4][2]; // this tile's words, the next tile's
uint k_ex[2][4], k_exn[2][4], v_ex[4][2], v_exn[4][2];

// The value of D at K position p (kperm) and at O column p (vperm).
uint kperm(uint p)
{
    uint t = p / 16u, kk = p % 16u;
    return words_dim((kk % 8u) / 2u + 4u * (t / 4u), 4u * (t % 4u) + (kk & 1u) + 2u * (kk / 8u));
}
uint vperm(uint p)
{
    uint nt = p / 16u, n = p % 16u;
    return words_dim(n % 8u + 8u * (nt / 8u), 2u * (nt % 8u) + n / 8u);
}

// Lane `lane`'s words of the tile at keys jt (into k_nx, v_nx): K rows jt + g, jt + g + 8, V rows
// jt + 2q + {0, 1, 8, 9}; keys past the range read row 0, and their V words are zero (no NaN can
// reach O).
void lane_words(Work w, uint jt, uint lane)
{
    uint g = lane / 4u, q = lane % 4u;
    [[unroll]] for (uint i = 0u; i < 2u; ++i) {
        uint j = jt + g + 8u * i;
        uint row = j < w.kv_hi ? avk_kv_row(w.b, w.g, j) : 0u;
        [[unroll]] for (uint pp = 0u; pp < KPARTS; ++pp) words_load(false, row, q + 4u * pp, k_nx[i][pp], k_exn[i][pp]);
    }
    [[unroll]] for (uint c = 0u; c < 4u; ++c) {
        uint j = jt + 2u * q + (c & 1u) + 8u * (c >> 1u);
        bool ok = j < w.kv_hi;
        uint row = ok ? avk_kv_row(w.b, w.g, j) : 0u;
        [[unroll]] for (uint vp = 0u; vp < VPARTS; ++vp) {
            words_load(true, row, g + 8u * vp, v_nx[c][vp], v_exn[c][vp]);
            if (!ok) {
                v_nx[c][vp] = uvec4(0u);
                v_exn[c][vp] = 0u;
            }
        }
    }
}

void words_advance()
{
    k_wd = k_nx;
    k_ex = k_exn;
    v_wd = v_nx;
    v_ex = v_exn;
}

// A part's scale as an f16 pair (fp8: kv head g's, the code unit included).
f16vec2 direct_scale(bool values, uvec4 wd, uint ex, uint part, uint g)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    return f16vec2(float16_t(avk_kv_run_scale(values, 0u, 0u, g)));
#else
    return f16vec2(float16_t(words_scale(wd, ex, part)));
#endif
}

// Lane `lane`'s 8 elements of K^T's k-step t (from k_wd), as f16 pairs: element 4i + c is key
// g + 8i at position 16t + 2q + (c & 1) + 8 (c >> 1).
void k_elems(uint t, uint lane, uint g, out f16vec2 x[4])
{
    uint pp = t / 4u, part = lane % 4u + 4u * pp;
    [[unroll]] for (uint i = 0u; i < 2u; ++i) {
        uvec2 f = words_f16(k_wd[i][pp], k_ex[i][pp], part, t % 4u, direct_scale(false, k_wd[i][pp], k_ex[i][pp], part, g));
        x[2u * i] = unpackFloat2x16(f.x);
        x[2u * i + 1u] = unpackFloat2x16(f.y);
    }
}

// Lane `lane`'s 8 elements of V's column tile nt (from v_wd), as f16 pairs: element 4h + c is
// key 2q + (c & 1) + 8 (c >> 1) at O column 16 nt + g + 8h.
void v_elems(uint nt, uint lane, uint g, out f16vec2 x[4])
{
    uint vp = nt / 8u, s0 = 2u * (nt % 8u), part = lane / 4u + 8u * vp;
    f16vec2 h[4];
    [[unroll]] for (uint c = 0u; c < 4u; ++c) {
        uvec2 f = words_f16(v_wd[c][vp], v_ex[c][vp], part, s0 / 4u, direct_scale(true, v_wd[c][vp], v_ex[c][vp], part, g));
        h[c] = unpackFloat2x16(s0 % 4u != 0u ? f.y : f.x); // slots s0, s0 + 1
    }
    x[0] = f16vec2(h[0].x, h[1].x);
    x[1] = f16vec2(h[2].x, h[3].x);
    x[2] = f16vec2(h[0].y, h[1].y);
    x[3] = f16vec2(h[2].y, h[3].y);
}

// Lane `lane`'s elements of K^T's k-step i (values false) or of V's column tile i.
void direct_elems(bool values, uint i, uint lane, uint g, out f16vec2 x[4])
{
    if (values) v_elems(i, lane, g, x);
    else k_elems(i, lane, g, x);
}

#ifndef CM_EMULATED
// The next tile's words are loaded a tile ahead, into registers.
void direct_load(Work w, uint jt, uint lane) { lane_words(w, jt, lane); }
void direct_advance() { words_advance(); }

// K^T's k-step i (values false) or V's column tile i as a B operand.
CM_B direct_operand(bool values, uint i, uint lane, uint g)
{
    f16vec2 x[4];
    direct_elems(values, i, lane, g, x);
    CM_B m;
    [[unroll]] for (uint e = 0u; e < 4u; ++e) {
        m[2u * e] = x[e].x;
        m[2u * e + 1u] = x[e].y;
    }
    return m;
}
#else
// The emulation (every invocation holds whole 16x16 matrices) builds each operand from the 32
// lanes of NVIDIA's layout in turn, with the same loads and decodes, each lane's element e
// placed at (k, n) = (2q + (e & 1) + 8 ((e >> 1) & 1), g + 8 (e >> 2)), where the probe found it
// (runtime/vulkan/vk_rs_layout.c); tile keys are remembered, and the words read again per lane.
Work emu_w;
uint emu_next, emu_cur;
void direct_load(Work w, uint jt, uint lane)
{
    emu_w = w;
    emu_next = jt;
}
void direct_advance() { emu_cur = emu_next; }

CM_B direct_operand(bool values, uint i, uint lane, uint g)
{
    CM_B m;
    for (uint l = 0u; l < 32u; ++l) {
        lane_words(emu_w, emu_cur, l);
        words_advance();
        f16vec2 x[4];
        direct_elems(values, i, l, g, x);
        for (uint e = 0u; e < 8u; ++e) {
            uint k = 2u * (l % 4u) + (e & 1u) + 8u * ((e >> 1u) & 1u), n = l / 4u + 8u * (e >> 2u);
            m.v[k * 16u + n] = float(x[e / 2u][e % 2u]);
        }
    }
    return m;
}
#endif

// f16 number e of Q (as bits)
uint q_half(uint e) { return (q_data[e / 8u][(e % 8u) / 2u] >> (16u * (e & 1u))) & 0xffffu; }
