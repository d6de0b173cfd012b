// The kernel contract in GLSL (docs/kernel-contract.md): the push-constant
// block expanded from runtime/contract/kernel_args.def, the flags, the
// cache-table bindings and the hooks every attnvk flash body calls, so a
// feature (paged, ragged, GQA packing) is written here once. Included, never
// compiled alone.
#ifndef FLASH_COMMON_GLSL
#define FLASH_COMMON_GLSL

#include "contract/kernel_flags.h"

#define U32 uint
#define I32 int
#define F32 float
#define AVK_ARG(type, name) type name;
layout(push_constant) uniform Params {
#include "contract/kernel_args.def"
} pc;
#undef AVK_ARG

// Cache tables and score inputs: bound to a dummy buffer where the problem has
// none (never read then). The mask is read as words: f32, or f16 pairs.
layout(binding = 7) readonly buffer BlockTableB { int block_table[]; };
layout(binding = 8) readonly buffer SeqLensB { int seq_lens[]; };
layout(binding = 9) readonly buffer KvScalesB { float kv_scales[]; };
layout(binding = 10) readonly buffer AlibiSlopesB { float alibi_slopes[]; };
layout(binding = 11) readonly buffer SinksB { float sinks[]; };
layout(binding = 12) readonly buffer MaskB { uint mask_words[]; };

// Nonzero where the problem has windows, softcap, ALiBi, masks, sinks or top-left
// alignment (runtime/vulkan/vk_kernel.c): a plain problem's pipeline compiles
// without their code, so it keeps its registers and speed.
layout(constant_id = 15) const uint AVK_SCORES = 0u;
// Bit 2 of it (vk_kernel.c): the register-softmax prefill body stages each tile's f16 mask in
// shared memory (flash_coopmat_rs_body.glsl's MASK_SH)
const bool AVK_MASK_SHARED = (AVK_SCORES & 2u) != 0u;
// Bit 3: ... and takes ALiBi's key term in S's matrix products (AVK_ALIBI_MMA; no softcap)
const bool AVK_ALIBI_MMA = (AVK_SCORES & 4u) != 0u;
const uint AVK_SCORE_FLAGS = AVK_FLAG_TOP_LEFT | AVK_FLAG_WINDOW | AVK_FLAG_ALIBI | AVK_FLAG_SINKS | AVK_FLAG_MASK | AVK_FLAG_MASK_F16 |
                             AVK_FLAG_BLOCKS | AVK_FLAG_DILATED | AVK_FLAG_DILATED_VIEW;
// Bit 5 (16; vk_variants.c's hook_mods): the pipeline carries only the value modifications of
// bits 6-8 (32 softcap, 64 ALiBi, 128 mask), the problem's; the others' code, and the row inputs
// it would keep in registers, are left out. Without it: all three, each behind its runtime flag.
// pc.flags, with the score features' bits only in pipelines built for them
uint avk_flags()
{
    if (AVK_SCORES == 0u) return pc.flags & ~AVK_SCORE_FLAGS;
    uint dropped = 0u;
    if ((AVK_SCORES & 16u) != 0u) {
        if ((AVK_SCORES & 64u) == 0u) dropped |= AVK_FLAG_ALIBI;
        if ((AVK_SCORES & 128u) == 0u) dropped |= AVK_FLAG_MASK | AVK_FLAG_MASK_F16;
    }
    return pc.flags & ~dropped;
}
float avk_softcap() { return AVK_SCORES != 0u && ((AVK_SCORES & 16u) == 0u || (AVK_SCORES & 32u) != 0u) ? pc.softcap : 0.0; }

#define NEG_INF uintBitsToFloat(0xff800000u)
const float LN2 = 0.69314718055994530942;
const float LOG2E = 1.4426950408889634074;

uint avk_q_end() { return pc.q_begin + pc.q_count; }

// Keys of sequence b.
uint avk_seq_len(uint b)
{
    if ((pc.flags & AVK_FLAG_SEQ_LENS) == 0u) return pc.seq_kv;
    return uint(clamp(seq_lens[b], 0, int(pc.seq_kv)));
}

// i' of query i in a sequence of len keys: where causal masks, windows and ALiBi put it.
int avk_row_pos(uint len, uint i)
{
    return ((avk_flags() & AVK_FLAG_TOP_LEFT) != 0u ? int(i) : int(i) + int(len) - int(pc.seq_q)) + pc.pos_offset;
}

// Exclusive end of the keys query i of sequence b (len keys) sees (causal, window).
uint avk_key_end(uint len, uint i)
{
    if ((avk_flags() & (AVK_FLAG_CAUSAL | AVK_FLAG_WINDOW)) == 0u) return len;
    int pos = avk_row_pos(len, i), end = int(len);
    if ((pc.flags & AVK_FLAG_CAUSAL) != 0u) end = min(end, pos + 1);
    // a window that reaches past the sequence's end bounds nothing: no int overflow for huge windows
    if ((avk_flags() & AVK_FLAG_WINDOW) != 0u && pc.window_right >= 0 && pc.window_right < end - pos)
        end = min(end, pos + 1 + pc.window_right);
    return uint(clamp(end, 0, int(len)));
}

// First key query i sees (the window's left side), clamped into 0..len.
uint avk_key_begin(uint len, uint i)
{
    if ((avk_flags() & AVK_FLAG_WINDOW) == 0u || pc.window_left < 0) return 0u;
    int pos = avk_row_pos(len, i); // a window reaching before key 0 starts there: no int overflow
    return pc.window_left >= pos ? 0u : uint(min(pos - pc.window_left, int(len)));
}

// Element offset of query i's row in the mask ([b][h][i][j] with broadcast strides).
uint avk_mask_row(uint b, uint h, uint i) { return b * pc.mask_sb + h * pc.mask_sh + i * pc.seq_kv; }

// Sparse patterns (#20; kernel_flags.h), through the mask's binding: whether key j is
// visible to query i of (b, h) beside the contiguous rules.
bool avk_pattern_visible(uint b, uint h, uint i, uint j)
{
    if ((avk_flags() & AVK_FLAG_BLOCKS) != 0u) {
        uint bq = pc.pattern & 0xffffu, bk = pc.pattern >> 16u, cols = (pc.seq_kv + bk - 1u) / bk;
        uint e = b * pc.mask_sb + h * pc.mask_sh + (i / bq) * cols + j / bk; // a byte of the layout
        return ((mask_words[e >> 2u] >> (8u * (e & 3u))) & 0xffu) != 0u;
    }
    if ((avk_flags() & AVK_FLAG_DILATED) != 0u) {
        uint g = h / (pc.heads / pc.pattern), s = mask_words[2u * g], r = mask_words[2u * g + 1u], o = g % r;
        return (i % s) % r == o && (j % s) % r == o && i / s == j / s;
    }
    return true;
}
const uint AVK_PATTERNS = AVK_FLAG_BLOCKS | AVK_FLAG_DILATED;
// At most this many block-layout entries are read to find a tile hidden (a longer scan says
// "visible": the per-element test still hides what it must).
const uint AVK_PATTERN_SCAN = 64u;

// What the pattern shows queries [i0, i1] of (b, h) of keys [j0, j0 + n): none (HIDDEN: the
// matrix bodies neither load nor compute the tile), all of them (SHOWN, block layouts only: no
// per-element test) or some (PARTIAL, also when unsure: a scan longer than AVK_PATTERN_SCAN; a
// dilated row is bounded by its segment only).
const uint AVK_TILE_HIDDEN = 0u, AVK_TILE_PARTIAL = 1u, AVK_TILE_SHOWN = 2u;
uint avk_pattern_tile(uint b, uint h, uint i0, uint i1, uint j0, uint n)
{
    if ((avk_flags() & AVK_FLAG_BLOCKS) != 0u) {
        uint bq = pc.pattern & 0xffffu, bk = pc.pattern >> 16u, cols = (pc.seq_kv + bk - 1u) / bk;
        uint r0 = i0 / bq, r1 = i1 / bq, c0 = j0 / bk, c1 = min(j0 + n - 1u, pc.seq_kv - 1u) / bk;
        if ((r1 - r0 + 1u) * (c1 - c0 + 1u) > AVK_PATTERN_SCAN) return AVK_TILE_PARTIAL;
        bool any = false, all = true;
        for (uint r = r0; r <= r1; ++r)
            for (uint c = c0; c <= c1; ++c) {
                uint e = b * pc.mask_sb + h * pc.mask_sh + r * cols + c;
                bool on = ((mask_words[e >> 2u] >> (8u * (e & 3u))) & 0xffu) != 0u;
                any = any || on;
                all = all && on;
            }
        return all ? AVK_TILE_SHOWN : any ? AVK_TILE_PARTIAL : AVK_TILE_HIDDEN;
    }
    if ((avk_flags() & AVK_FLAG_DILATED) != 0u) {
        uint s = mask_words[2u * (h / (pc.heads / pc.pattern))];
        return j0 >= (i1 / s + 1u) * s || j0 + n <= i0 / s * s ? AVK_TILE_HIDDEN : AVK_TILE_PARTIAL;
    }
    return AVK_TILE_PARTIAL;
}

float avk_mask_value(uint e)
{
    uint word = mask_words[(avk_flags() & AVK_FLAG_MASK_F16) != 0u ? e >> 1u : e];
    if ((avk_flags() & AVK_FLAG_MASK_F16) == 0u) return uintBitsToFloat(word);
    return unpackHalf2x16((e & 1u) != 0u ? word >> 16u : word).x;
}

// Any per-element score modification (softcap, ALiBi, mask): bodies skip the hook without.
bool avk_score_mods() { return (avk_flags() & (AVK_FLAG_ALIBI | AVK_FLAG_MASK)) != 0u || avk_softcap() > 0.0; }

// The softcap, c tanh(x / c) for a natural-log score x = scale q.k, as the
// score hooks leave it: tanh(x / c), which one multiply per score by c log2(e)
// (avk_score_scale, in place of pc.scale_log2) turns into the log2 domain; the
// matrix bodies fold that multiply into the softmax's fused multiply-add, and
// add ALiBi and the mask in its units (avk_raw_unit).
float avk_score_scale() { return avk_softcap() > 0.0 ? pc.softcap * LOG2E : pc.scale_log2; }

// Scalar and decode bodies (which also run f32): the precise tanh, on s = the
// raw score times avk_score_pre() (what they scale by: scale_log2 without a
// softcap); the result is in log2 units. tanh's argument is clamped: some
// drivers' tanh gives NaN for large ones (inf / inf).
float avk_score_pre() { return avk_softcap() > 0.0 ? pc.scale_log2 * (LN2 / pc.softcap) : pc.scale_log2; }
float avk_softcap_log2(float s) { return pc.softcap * LOG2E * tanh(clamp(s, -15.0, 15.0)); }

// Score modifications (attnvk.h's order after the scale) on s = the raw score
// times avk_score_pre() for key j of a row at i' = pos, with the row's ALiBi
// slope and mask row; the result is in the log2 domain. Only for visible keys.
// The reference form of the hook: the bodies apply the same modifications as
// one uniform branch per feature over a straight run of their scores (see the
// helpers below).
float avk_score_mod(float s, uint j, int pos, float slope, uint mask_row)
{
    if (avk_softcap() > 0.0) s = avk_softcap_log2(s);
    if ((avk_flags() & AVK_FLAG_ALIBI) != 0u) s += slope * LOG2E * float(int(j) - pos);
    if ((avk_flags() & AVK_FLAG_MASK) != 0u) s += avk_mask_value(mask_row + j) * LOG2E;
    return s;
}

// The matrix bodies apply the modifications in raw units (q.k before the
// scale), so their softmax keeps its one fused multiply-add by
// avk_score_scale(). A natural-log logit (ALiBi's slope * (j - i'), a mask
// value) in those units:
float avk_raw_unit() { return LOG2E / avk_score_scale(); }
// The matrix bodies' softcap: S = avk_softcap_tanh(S * avk_softcap_raw_in()).
// GLSL's tanh (argument clamped, as above), or with AVK_SOFTCAP_EXP2 (spec
// constant 13, set by vk_variants.c unless ATTNVK_VK_SOFTCAP_EXP2=0) 1 - 2 / (2^y' + 1),
// y' = 2 log2(e) y: one exp2 and one reciprocal, never NaN (2^y' -> inf gives
// 1, -> 0 gives -1), absolute error ~1e-7 (the matrix bodies run f16 data).
// 2 (ATTNVK_VK_SOFTCAP_EXP2=2, an A/B): tanh of f16 pairs where the layout has f16 math
// (cm_score_mods.glsl), GLSL's tanh elsewhere.
// Bit 4 (ATTNVK_VK_SOFTCAP_IN_Q=1, an A/B): the register-softmax prefill body multiplies the
// softcap's input scale into Q as it stages Q (flash_coopmat_rs_body.glsl), not into every score.
layout(constant_id = 13) const uint AVK_SOFTCAP_EXP2 = 0u;
const uint AVK_SOFTCAP_FORM = AVK_SOFTCAP_EXP2 & 3u;
const bool AVK_SOFTCAP_IN_Q = (AVK_SOFTCAP_EXP2 & 4u) != 0u;
float avk_softcap_raw_in() { return pc.scale_log2 * ((AVK_SOFTCAP_FORM == 1u ? 2.0 : LN2) / pc.softcap); }
float avk_softcap_tanh(float y)
{
    if (AVK_SOFTCAP_FORM == 1u) return fma(-2.0, 1.0 / (exp2(y) + 1.0), 1.0);
    return tanh(clamp(y, -15.0, 15.0));
}

// Whether the f16 mask values of a row's keys first + 2k, first + 2k + 1 share a
// word in every row (uniform: strides, row length and first even).
bool avk_mask_pairs(uint first)
{
    return (avk_flags() & AVK_FLAG_MASK_F16) != 0u && ((pc.seq_kv | pc.mask_sb | pc.mask_sh | first) & 1u) == 0u;
}
// Mask elements e (even, f16) and e + 1 from one word.
vec2 avk_mask_pair(uint e) { return unpackHalf2x16(mask_words[e >> 1u]); }
// Mask element e, f16 (the caller's uniform branch on AVK_FLAG_MASK_F16) or f32.
float avk_mask_f16(uint e) { return unpackHalf2x16((e & 1u) != 0u ? mask_words[e >> 1u] >> 16u : mask_words[e >> 1u]).x; }
float avk_mask_f32(uint e) { return uintBitsToFloat(mask_words[e]); }

// The sink of head h as a base-2 logit, -inf without sinks.
float avk_sink_log2(uint h) { return (avk_flags() & AVK_FLAG_SINKS) != 0u ? sinks[h] * LOG2E : NEG_INF; }

// Index of the K/V row (D values) holding key j of (b, kv head g); j < avk_seq_len(b).
// 0: a contiguous cache, 1: a paged one, 2: decided by pc.page_size (runtime/vulkan/
// vk_kernel.c builds the decode body for a paged cache with 1, everything else with 2).
// H100 decode, q8_0 page 16 at 32k, with both in one pipeline: 2.43 ms paged against
// 0.379 contiguous (bshd rows, the same stride: 0.389); with 1, 0.424.
layout(constant_id = 12) const uint AVK_PAGED = 2u;
// A paged cache's page size where the pipeline is built for one problem's (constant 11: the
// decode body's paged pipelines, vk_kernel.c), else 0 and pc.page_size: key j's page and slot
// are then a multiply and shifts the driver derives from the constant, not a 32-bit division
// (a long integer sequence on GPUs) by every lane for every key.
layout(constant_id = 11) const uint AVK_PAGE_SIZE = 0u;
uint avk_page_size() { return AVK_PAGE_SIZE != 0u ? AVK_PAGE_SIZE : pc.page_size; }
uint avk_kv_row(uint b, uint g, uint j)
{
    if (AVK_PAGED == 0u || (AVK_PAGED == 2u && pc.page_size == 0u)) return b * pc.kv_sb + g * pc.kv_sh + j * pc.kv_ss;
    uint ps = avk_page_size();
    int page = block_table[b * pc.max_pages + j / ps];
    uint p = uint(clamp(page, 0, int(pc.num_pages) - 1));
    return (p * ps + j % ps) * pc.kv_heads + g;
}

// K/V in a quantized format (AVK_KV_FORMAT, a build define): bindings 1 and 2
// are read as uint words and decoded exactly as runtime/core/kv_cache.c does.
#ifndef AVK_KV_FORMAT
#define AVK_KV_FORMAT AVK_KV_DTYPE
#endif
#if AVK_KV_FORMAT != AVK_KV_DTYPE
layout(binding = 1) readonly buffer KWordsB { uint k_words[]; };
layout(binding = 2) readonly buffer VWordsB { uint v_words[]; };

// What a code of 1 is worth: e4m3 codes decode as value / 256 (avk_kv_codes4).
const float AVK_KV_CODE_UNIT = AVK_KV_FORMAT == AVK_KV_FP8 ? 256.0 : 1.0;

uint avk_kv_word(bool values, uint i) { return values ? v_words[i] : k_words[i]; }

#if AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0
const uint AVK_KV_BLOCK_BYTES = AVK_KV_FORMAT == AVK_KV_Q8_0 ? 34u : 18u;
// First byte (the f16 scale) of the 32-value block holding value d0 of row `row`.
uint avk_kv_block_byte(uint row, uint d0, uint D)
{
    return row * (D / 32u * AVK_KV_BLOCK_BYTES) + (d0 / 32u) * AVK_KV_BLOCK_BYTES;
}
// The f16 scale of a block starting at byte blk, from the word holding it.
float avk_kv_block_scale(uint scale_word, uint blk)
{
    return unpackHalf2x16((blk & 2u) != 0u ? scale_word >> 16u : scale_word).x;
}
#endif

// Byte of value d0 of K/V row `row` (d0 a multiple of 4; q4_0: the byte holding
// it, whose low nibble serves d0 % 32 < 16).
uint avk_kv_code_byte(uint row, uint d0, uint D)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0
    return avk_kv_block_byte(row, d0, D) + 2u + (AVK_KV_FORMAT == AVK_KV_Q8_0 ? d0 % 32u : d0 % 16u);
#else
    return row * D + d0;
#endif
}

// Values d0 .. d0+3, unscaled (fp8: / 256), from the word holding their bytes (realigned).
vec4 avk_kv_codes4(uint c, uint d0)
{
    // integer tricks, not int -> float conversions (a quarter of the FMA rate on
    // NVIDIA): a byte u in the low mantissa bits of 2^23 reads as 2^23 + u
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    uvec4 u = (uvec4(c ^ 0x80808080u) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu; // int8 + 128
    return uintBitsToFloat(u | 0x4b000000u) - 8388736.0;
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    uvec4 u = (uvec4(c >> ((d0 % 32u) >= 16u ? 4u : 0u)) >> uvec4(0u, 8u, 16u, 24u)) & 15u;
    return uintBitsToFloat(u | 0x4b000000u) - 8388616.0; // nibble - 8
#else
    // e4m3 bits placed in an f16 (sign to bit 15, exponent and mantissa from
    // bit 7) read as value / 256, subnormals included (AVK_KV_CODE_UNIT)
    uint lo = (c & 0xffu) | ((c & 0xff00u) << 8u), hi = ((c >> 16u) & 0xffu) | ((c >> 8u) & 0xff0000u);
    uvec2 h = ((uvec2(lo, hi) & 0x007f007fu) << 7u) | ((uvec2(lo, hi) & 0x00800080u) << 8u);
    return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
#endif
}

#ifdef AVK_KV_F16_MATH
// Values d0 .. d0+3 times scale2 (fp8: the scale x AVK_KV_CODE_UNIT), as two
// f16 pairs, for bodies that store f16: the codes go straight into f16 bits
// and the scale is one f16 multiply, with no f32 -> f16 conversion (an eighth
// of the FMA rate on NVIDIA). Bit-identical to packing avk_kv_codes4 * scale
// for q8_0 and q4_0 (one rounding of an exact product either way).
uvec2 avk_kv_codes4_f16(uint c, uint d0, f16vec2 scale2)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0
    // a code u in the low mantissa of f16 1024 reads as 1024 + u (ulp 1 there)
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    uint u = c ^ 0x80808080u, m = 0xffu; // int8 + 128
    const float16_t bias = float16_t(1152.0);
#else
    uint u = c >> ((d0 % 32u) >= 16u ? 4u : 0u), m = 0xfu; // nibble; value - 8
    const float16_t bias = float16_t(1032.0);
#endif
    uint lo = (u & m) | ((u << 8u) & (m << 16u)), hi = ((u >> 16u) & m) | ((u >> 8u) & (m << 16u));
    f16vec2 a = unpackFloat2x16(lo | 0x64006400u) - bias, b = unpackFloat2x16(hi | 0x64006400u) - bias;
#else
    uint lo = (c & 0xffu) | ((c & 0xff00u) << 8u), hi = ((c >> 16u) & 0xffu) | ((c >> 8u) & 0xff0000u);
    uvec2 h = ((uvec2(lo, hi) & 0x007f007fu) << 7u) | ((uvec2(lo, hi) & 0x00800080u) << 8u);
    f16vec2 a = unpackFloat2x16(h.x), b = unpackFloat2x16(h.y);
#endif
    return uvec2(packFloat2x16(a * scale2), packFloat2x16(b * scale2));
}
#endif

// Values d0 .. d0+3 (d0 a multiple of 4) of K/V row `row` of kv head g, in
// two halves so a body can issue the loads early and decode later: raw holds
// the words (two code words, the scale's word) and, in w, the byte shift, the
// scale's half and the value's q4_0 half.
uvec4 avk_kv_raw4(bool values, uint row, uint d0, uint D)
{
    uint off = avk_kv_code_byte(row, d0, D);
#if AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0
    uint blk = avk_kv_block_byte(row, d0, D);
    uint scale_word = avk_kv_word(values, blk >> 2u);
    uint meta = (off & 3u) | ((blk & 2u) << 7u) | ((d0 % 32u) >= 16u ? 1u << 9u : 0u);
#else
    uint scale_word = 0u, meta = 0u; // fp8: 4-byte aligned, D and d0 being multiples of 4
#endif
    uint wi = off >> 2u;
    // the next word only when the bytes straddle (never past the buffer's end)
    return uvec4(avk_kv_word(values, wi), (off & 3u) == 0u ? 0u : avk_kv_word(values, wi + 1u), scale_word, meta);
}

vec4 avk_kv_decode4(bool values, uvec4 raw, uint g)
{
    uint sh = (raw.w & 3u) * 8u;
    uint q = sh == 0u ? raw.x : (raw.x >> sh) | (raw.y << (32u - sh));
    vec4 codes = avk_kv_codes4(q, (raw.w >> 9u) * 16u); // bit 9: q4_0's high nibbles
#if AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0
    return avk_kv_block_scale(raw.z, (raw.w >> 7u) & 2u) * codes;
#else
    return codes * (kv_scales[(values ? pc.kv_heads : 0u) + g] * AVK_KV_CODE_UNIT);
#endif
}

vec4 avk_kv_load4(bool values, uint row, uint d0, uint g, uint D)
{
    return avk_kv_decode4(values, avk_kv_raw4(values, row, d0, D), g);
}

// Runs of codes, for a body that loads a lane's whole slice of a row at once
// and applies the scale to a dot product or a probability instead of to every
// value. A run is n values d0 .. d0+n-1 (n in 4, 8, 16, n | d0) inside one
// 32-value block: n consecutive bytes from avk_kv_code_byte (q4_0: one nibble
// of each), which may start 2 bytes into a word, decoded by avk_kv_codes4.

// The word holding the f16 scale of value d0's block (q8_0, q4_0; fp8: 0, unused).
uint avk_kv_scale_word(bool values, uint row, uint d0, uint D)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0
    return avk_kv_word(values, avk_kv_block_byte(row, d0, D) >> 2u);
#else
    return 0u;
#endif
}

// The scale of the run starting at code_byte (its block's; fp8: kv head g's).
float avk_kv_run_scale(bool values, uint scale_word, uint code_byte, uint g)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0
    // the block starts 2 + a multiple of 4 bytes before the run
    return avk_kv_block_scale(scale_word, code_byte - 2u);
#else
    return kv_scales[(values ? pc.kv_heads : 0u) + g] * AVK_KV_CODE_UNIT;
#endif
}
#endif

// Which (batch, head group, split, rows, keys) this workgroup owns; grid is
// x = row blocks of BR packed rows, y = head groups H / pack, z = B * splits.
struct Work {
    uint b, y, split, g;
    uint r0;          // first packed row of the block
    uint rows;        // packed rows of (b, y): pack * q_count
    uint len;         // keys of sequence b
    uint h, i0;       // with pack = 1: the head, and the block's first query
    uint q_base;      // with pack = 1: element offset of row 0 of (b, h) in Q/O
    uint kv_lo, kv_hi; // keys this workgroup streams: its split, cut to what some row sees
    uint ntiles;      // key tiles of BC keys to stream
    uint q_end;       // with pack = 1: the end of the rows (a dilated view's own)
    uint view_base, view_step; // a dilated view's row t is the problem's row view_base + t view_step
};

// Head (x) and query (y) of packed row r of a workgroup at grid y.
uvec2 avk_q_row(Work w, uint r) { return uvec2(w.y * pc.pack + r % pc.pack, pc.q_begin + r / pc.pack); }

// Element offset of row (h, i) of sequence b in Q (Dk contiguous).
uint avk_q_offset(uint b, uvec2 hi) { return b * pc.q_sb + hi.x * pc.q_sh + hi.y * pc.q_ss; }

// Separate K and V head dims (docs/kernel-contract.md): a body's D (constant
// 2) is Dk, the width of Q and K rows and of Q.K; AVK_DV is Dv, the width of
// V and O rows, P.V, the split partials and the merge. 0 (the default) is Dk,
// and the Dv == Dk branches below fold away at pipeline build.
layout(constant_id = 14) const uint AVK_DV_SPEC = 0u;
#define AVK_DV (AVK_DV_SPEC != 0u ? AVK_DV_SPEC : D)

// O's element offset of the row whose Q row starts at element q_row: Q's
// strides are whole Dk rows, so O's row is q_row / dk * dv.
uint avk_o_from_q(uint q_row, uint dk, uint dv) { return dk == dv ? q_row : q_row / dk * dv; }

// A dilated view (AVK_FLAG_DILATED_VIEW, kernel_flags.h): grid x names (segment, residue
// class, row block) of the head's group; rows and keys become the class's view indices.
void flash_dilated_view(inout Work w, uint br)
{
    uint grp = w.h / (pc.heads / pc.pattern), s = mask_words[2u * grp], r = mask_words[2u * grp + 1u];
    uint n = pc.seq_q, blocks = ((min(s, n) + r - 1u) / r + br - 1u) / br; // row blocks of a class
    uint seg = gl_WorkGroupID.x / (r * blocks), cls = gl_WorkGroupID.x / blocks % r;
    uint seg0 = seg < (n + s - 1u) / s ? seg * s : n; // a smaller group's spare blocks: past the end
    uint seg_len = min(s, n - seg0);
    uint rows = seg_len > cls ? (seg_len - cls + r - 1u) / r : 0u;
    w.view_base = seg0 + cls;
    w.view_step = r;
    w.r0 = gl_WorkGroupID.x % blocks * br;
    w.i0 = w.r0;
    w.rows = rows;
    w.q_end = rows;
    // the other classes are inactive rows (no keys: zeros); a block past the class's rows reads nothing
    w.len = cls == grp % r && w.r0 < rows ? rows : 0u;
}

// The problem's row (or key) of view index i: where its Q, K, V, O, LSE and partials live.
uint flash_row(Work w, uint i) { return (avk_flags() & AVK_FLAG_DILATED_VIEW) != 0u ? w.view_base + i * w.view_step : i; }

// K/V row of key j, and Q's element offset of row (h, i), through a dilated view.
uint flash_kv_row(Work w, uint j) { return avk_kv_row(w.b, w.g, flash_row(w, j)); }
uint flash_q_offset(Work w, uvec2 hi) { return avk_q_offset(w.b, uvec2(hi.x, flash_row(w, hi.y))); }

Work flash_work(uint br, uint bc)
{
    Work w;
    uvec2 xy = gl_WorkGroupID.xy;
    if ((pc.flags & AVK_FLAG_HEADS_FIRST) != 0u) { // kernel_flags.h: a row block's heads together
        uint lin = xy.x + xy.y * gl_NumWorkGroups.x;
        xy = uvec2(lin / gl_NumWorkGroups.y, lin % gl_NumWorkGroups.y);
    }
    w.y = xy.y;
    w.b = gl_WorkGroupID.z / pc.splits;
    w.split = gl_WorkGroupID.z % pc.splits;
    w.h = w.y * pc.pack;
    w.g = w.h / pc.group;
    w.r0 = xy.x * br;
    w.rows = pc.pack * pc.q_count;
    w.i0 = pc.q_begin + w.r0;
    w.q_base = w.b * pc.q_sb + w.h * pc.q_sh;
    w.len = avk_seq_len(w.b);
    w.q_end = avk_q_end();
    w.view_base = 0u;
    w.view_step = 1u;
    if ((avk_flags() & AVK_FLAG_DILATED_VIEW) != 0u) flash_dilated_view(w, br);
    // the block's first row sees the fewest keys below: tiles under every row's
    // window are never read, and the splits count from the block's first visible
    // tile (0 without a left window), as core plans them over the keys a block
    // may see (avk_kernel_args_span), not the whole cache. kv_lo stays a multiple of bc.
    uint first = 0u;
    if ((avk_flags() & AVK_FLAG_WINDOW) != 0u) first = avk_key_begin(w.len, avk_q_row(w, w.r0).y) / bc * bc;
    w.kv_lo = first + w.split * pc.split_keys;
    w.kv_hi = min(w.len, w.kv_lo + pc.split_keys);
    // the block's last real row sees the most keys
    uint last = avk_q_row(w, min(w.r0 + br, w.rows) - 1u).y;
    w.kv_hi = min(w.kv_hi, avk_key_end(w.len, last));
    w.ntiles = w.kv_hi > w.kv_lo ? (w.kv_hi - w.kv_lo + bc - 1u) / bc : 0u;
    if ((pc.flags & AVK_FLAG_SKIP_LAST_TILE) != 0u && w.ntiles > 0u) w.ntiles -= 1u;
    return w;
}

// Last key index query i may see (inclusive), as int; -1 when none.
int flash_row_limit(Work w, uint i) { return int(avk_key_end(w.len, i)) - 1; }

// First key index query i may see.
uint flash_row_begin(Work w, uint i) { return avk_key_begin(w.len, i); }

// First key the block's last row sees (BR packed rows from r0): below it, a
// window's left side needs per-element masks.
uint flash_block_begin(Work w, uint br) { return avk_key_begin(w.len, avk_q_row(w, min(w.r0 + br, w.rows) - 1u).y); }

// For the matrix bodies' edge tiles in pipelines without score features
// (AVK_SCORES 0): one element s (raw q.k) of S for key j of a row that sees
// keys [begin, end) (end 0 for a row past the end), -inf where invisible.
// With AVK_SCORES the bodies apply the features and visibility as runs
// (cm_score_mods.glsl, flash_coopmat_body.glsl).
float flash_score_elem(float s, Work w, uint j, uint begin, uint end)
{
    if (j >= w.kv_hi || j >= end || j < begin) return NEG_INF;
    return s;
}

// Partials row of (split, b, h, i): [split][b][h][q_count].
uint flash_ws_row(uint split, uint b, uint h, uint i)
{
    return ((split * pc.batch + b) * pc.heads + h) * pc.q_count + (i - pc.q_begin);
}

// LSE is [B][H][Nq] f32.
uint flash_lse_index(uint b, uint h, uint i) { return (b * pc.heads + h) * pc.seq_q + i; }

// Natural-log LSE from base-2 running max and sum; -inf for no key.
float flash_lse(float m, float l) { return l > 0.0 ? (m + log2(l)) * LN2 : NEG_INF; }

#endif
