// Quantized K/V rows as "aligned words" (q8_0, q4_0, fp8), for the bodies
// that give each lane 16 values of a row as whole words, with no realigning
// shifts: flash_decode.comp (RUNS == 2) and the matrix decode body's
// register operands (flash_decode_mma_body.glsl, AVK_DIRECT_KV). A row's D
// values form D / 16 "parts" of 16; part p's 16 values are slots 0..15, and
// words_dim maps (part, slot) to the value of D it holds, a permutation of D
// that the bodies apply to Q and O alike.
//
// q8_0 (q4_0) rows are pairs of 34-byte (18-byte) blocks A, B: 17 (9) words,
// A's scale in word 0's low half, B's in word 2 * WNW's high half, whose low
// half holds A's last codes. Part q of a pair's four (q = part % 4) is WNW
// words at q * WNW (+ 1 from q = 2), all codes of one block: q = 0, 1 of A,
// 2, 3 of B; its extra word is word 2 * WNW (q = 0: A's last codes, which
// replace the scale in its word 0; q = 2, 3: B's scale) or word 0 (q = 1:
// A's scale). fp8: part p is the 16 bytes at 16 p, one 16-byte load.
// Needs D (Dk = Dv) and the kv format's bindings (flash_common.glsl). Included
// only with a quantized AVK_KV_FORMAT.
#ifndef FLASH_KV_WORDS_GLSL
#define FLASH_KV_WORDS_GLSL
#if AVK_KV_FORMAT != AVK_KV_DTYPE
#if AVK_KV_FORMAT == AVK_KV_Q8_0
const uint WNW = 4u, WBLOCK = 34u; // code words per lane, bytes per block
#else
const uint WNW = 2u, WBLOCK = 18u; // q4_0 (fp8 does not use them)
#endif
const uint WPAIR = 4u * WNW + 1u;   // words per pair of blocks
#if AVK_KV_FORMAT == AVK_KV_FP8
layout(binding = 1) readonly buffer KQuadsB { uvec4 k_quads[]; };
layout(binding = 2) readonly buffer VQuadsB { uvec4 v_quads[]; };
#endif

// The lane's words of a K or V row (WORDS): code words and the extra word.
void words_load(bool values, uint row, uint part, out uvec4 wd, out uint extra)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    uint idx = row * (D / 16u) + part; // 16 values of a row of D bytes
    wd = values ? v_quads[idx] : k_quads[idx];
    extra = 0u;
#else
    uint q = part % 4u, base = row * (D / 64u * WPAIR) + part / 4u * WPAIR;
    uint w0 = base + q * WNW + (q >= 2u ? 1u : 0u);
    wd.x = avk_kv_word(values, w0);
    wd.y = avk_kv_word(values, w0 + 1u);
    wd.z = WNW > 2u ? avk_kv_word(values, w0 + 2u) : 0u;
    wd.w = WNW > 2u ? avk_kv_word(values, w0 + 3u) : 0u;
    extra = avk_kv_word(values, base + (q == 1u ? 0u : 2u * WNW));
#endif
}

// The value of D (Dk = Dv) in slot s (0..15) of lane `part` (WORDS).
uint words_dim(uint part, uint s)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    return part * 16u + s;
#else
    uint q = part % 4u, h = 0u;
#if AVK_KV_FORMAT == AVK_KV_Q4_0
    h = s / 8u; // a word's high nibbles hold values 16 on
    s %= 8u;
#endif
    uint i = s / 4u, c = s % 4u;
    uint x = q * 4u * WNW + (q >= 2u ? 4u : 0u) + 4u * i + c; // byte of the pair
    if (q == 0u && i == 0u && c < 2u) x = 8u * WNW + c;       // from the extra word
    uint blk = x >= WBLOCK ? 1u : 0u;
    return part / 4u * 64u + blk * 32u + (x - 2u - blk * WBLOCK) + 16u * h;
#endif
}

// The scale of part `part`'s 16 codes (q8_0, q4_0), from its words.
float words_scale(uvec4 wd, uint extra, uint part)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    return 1.0;
#else
    uint q = part % 4u, sw = q == 0u ? wd.x : extra;
    return unpackHalf2x16(q >= 2u ? sw >> 16u : sw).x;
#endif
}

#ifdef AVK_KV_F16_MATH
// Slots 4k .. 4k+3 of a part as two f16 pairs (slots 4k, 4k+1 and 4k+2, 4k+3),
// times scale2 (avk_kv_codes4_f16).
uvec2 words_f16(uvec4 wd, uint extra, uint part, uint k, f16vec2 scale2)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    return avk_kv_codes4_f16(wd[k], 0u, scale2);
#else
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    uint c = wd[k];
#else
    uint c = wd[k % 2u]; // slots 8 on: the high nibbles of the same words
#endif
    if (k % WNW == 0u && part % 4u == 0u) c = (c & 0xffff0000u) | (extra & 0xffffu); // A's last codes
    return avk_kv_codes4_f16(c, k >= 2u && AVK_KV_FORMAT == AVK_KV_Q4_0 ? 16u : 0u, scale2);
#endif
}
#endif
#endif
#endif
