/* The kernel contract's hooks for the native kernels (CUDA and HIP alike;
 * docs/kernel-contract.md): sequence lengths, visible key ranges, where a
 * K/V row lives (contiguous or paged) and how its bytes decode (the kv
 * format, AVK_KV_FORMAT), and first the storage type of AVK_DTYPE they
 * take. Included by attn_fwd.cu and attn_bwd.cu. */
/* No include guard: HIP builds several instances of attn_fwd.cu (and of
 * attn_bwd.cu) into one object, each in its own namespace with its own
 * AVK_DTYPE, and each needs these. */

/* ---- the storage type: avk_elem and its f32 conversions ---- */
#if AVK_DTYPE == 0
typedef float avk_elem;
AVK_DEVICE float avk_to_f32(avk_elem x) { return x; }
AVK_DEVICE avk_elem avk_from_f32(float x) { return x; }
#elif AVK_DTYPE == 1
typedef avk_u16 avk_elem;
AVK_DEVICE float avk_to_f32(avk_elem x) { return avk_f16_to_f32(x); }
AVK_DEVICE avk_elem avk_from_f32(float x) { return avk_f32_to_f16(x); }
#else
typedef avk_u16 avk_elem;
AVK_DEVICE float avk_to_f32(avk_elem x) { return avk_bf16_to_f32(x); }
AVK_DEVICE avk_elem avk_from_f32(float x) { return avk_f32_to_bf16(x); }
#endif

#ifndef AVK_KV_FORMAT
#define AVK_KV_FORMAT AVK_KV_DTYPE
#endif
#undef AVK_KV_ROW_BYTES
#undef AVK_KV_QUANT
/* bytes of one K/V row (D values) */
#if AVK_KV_FORMAT == AVK_KV_Q8_0
#define AVK_KV_ROW_BYTES (AVK_D / 32 * 34)
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
#define AVK_KV_ROW_BYTES (AVK_D / 32 * 18)
#elif AVK_KV_FORMAT == AVK_KV_FP8
#define AVK_KV_ROW_BYTES AVK_D
#else
#define AVK_KV_ROW_BYTES (AVK_D * (int)sizeof(avk_elem))
#endif
#define AVK_KV_QUANT (AVK_KV_FORMAT != AVK_KV_DTYPE)
/* V rows hold Dv values (AVK_DV); a Dv of its own comes only with K/V in the
 * problem's dtype (core refuses quantized or paged caches with Dk != Dv) */
#if AVK_DV != AVK_D && AVK_KV_QUANT
#error "a V head dim other than K's takes K/V in the problem's dtype"
#endif
#undef AVK_V_ROW_BYTES
#if AVK_DV == AVK_D
#define AVK_V_ROW_BYTES AVK_KV_ROW_BYTES
#else
#define AVK_V_ROW_BYTES (AVK_DV * (int)sizeof(avk_elem))
#endif

AVK_DEVICE bool avk_causal(const avk_attn_params &p) { return (p.flags & AVK_FLAG_CAUSAL) != 0; }

/* keys of sequence b */
AVK_DEVICE int avk_seq_len(const avk_attn_params &p, int b)
{
    if (!(p.flags & AVK_FLAG_SEQ_LENS)) return (int)p.seq_kv;
    const int n = ((const int *)p.seq_lens)[b];
    return n < 0 ? 0 : min(n, (int)p.seq_kv);
}

/* AVK_POS_OFFSET 1: the problem moves i' (its position_offset, ring attention's
 * blocks). Built in only then: reading it cost mma-decode a register (4-44
 * bytes of spills on sm_80/sm_90a). The host passes it (cuda_tuning.c); the
 * HIP build never does, and HIP declares no position offset. */
#ifndef AVK_POS_OFFSET
#define AVK_POS_OFFSET 0
#endif

/* i' of query i in a sequence of len keys: where causal masks, windows and ALiBi put it */
AVK_DEVICE int avk_row_pos(const avk_attn_params &p, int len, int i)
{
    return ((p.flags & AVK_FLAG_TOP_LEFT) ? i : i + len - (int)p.seq_q) + (AVK_POS_OFFSET ? p.pos_offset : 0);
}

/* exclusive end of the keys query i sees in a sequence of len keys (causal, window) */
AVK_DEVICE int avk_key_end(const avk_attn_params &p, int len, int i)
{
    if (!(p.flags & (AVK_FLAG_CAUSAL | AVK_FLAG_WINDOW))) return len;
    const long long pos = avk_row_pos(p, len, i);
    long long end = len;
    if (avk_causal(p)) end = min(end, pos + 1);
    if ((p.flags & AVK_FLAG_WINDOW) && p.window_right >= 0) end = min(end, pos + p.window_right + 1);
    return (int)max(0ll, end);
}

/* first key query i sees (the window's left side), clamped into 0..len */
AVK_DEVICE int avk_key_begin(const avk_attn_params &p, int len, int i)
{
    if (!(p.flags & AVK_FLAG_WINDOW) || p.window_left < 0) return 0;
    return (int)min((long long)len, max(0ll, (long long)avk_row_pos(p, len, i) - p.window_left));
}

/* ---- sparse patterns (#20; kernel_flags.h), through the mask's binding ----
 * Built in with AVK_SCORE_MOD's AVK_MOD_BLOCKS or AVK_MOD_DILATED (a build has one). The host runs them one head per
 * CTA (pack 1), so a CTA's rows share one head's pattern and their key bounds stay
 * monotone in the row, as the tile loops' skip tests assume. */

/* A dilated head's group: segment s, rate r, offset o = g mod r (LongNet). */
struct avk_dilation {
    int s, r, o;
};

AVK_DEVICE avk_dilation avk_dilation_of(const avk_attn_params &p, int h)
{
    const int *table = (const int *)p.mask; /* [groups][2]: segment, rate */
    const int g = h / ((int)p.heads / (int)p.pattern);
    avk_dilation d;
    d.s = table[2 * g];
    d.r = table[2 * g + 1];
    d.o = g % d.r;
    return d;
}

/* Keys [begin, end) of query i of head h narrowed to what its pattern allows as
 * a range: a dilated query's own segment (the residues are per element). */
AVK_DEVICE void avk_pattern_bounds(const avk_attn_params &p, int h, int i, int &begin, int &end)
{
#if AVK_SCORE_MOD & AVK_MOD_DILATED
    const int s = avk_dilation_of(p, h).s, seg0 = i / s * s;
    begin = max(begin, seg0);
    end = min(end, seg0 + s);
#else
    (void)p, (void)h, (void)i, (void)begin, (void)end;
#endif
}

/* The score modifications (attnvk.h's order after the scale: softcap, ALiBi,
 * mask) run per row of a tile in attn_fwd.cu's avk_score_mod, where the
 * accumulator layout is known. */

/* tanh for the softcap: f16/bf16 problems on NVIDIA take the one-instruction
 * approximation (sm_75+; relative error about 2^-11, far inside their
 * tolerance, as FlashAttention does); f32 problems and other targets the exact one. */
AVK_DEVICE float avk_tanh(float y)
{
#if defined(AVK_TARGET_CUDA) && AVK_DTYPE != 0 && __CUDA_ARCH__ >= 750
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(y));
    return r;
#else
    return tanhf(y);
#endif
}

/* tanh of a pair for the softcap: with AVK_SOFTCAP_F16X2=1 (ATTNVK_CUDA_DEFINES), f16/bf16
 * problems on NVIDIA sm_80+ take one tanh.approx.f16x2 for both (half the special-function
 * ops; its error near 1 is f16's 2^-11, as tanh.approx.f32's relative error). Off: on the
 * H100 (session 16, 8k D=128 causal, wgmma) it lost, 293.3 -> 279.4 TFLOP/s (plain 348.9):
 * the conversions cost more than the halved tanh saves. */
#ifndef AVK_SOFTCAP_F16X2
#define AVK_SOFTCAP_F16X2 0
#endif
AVK_DEVICE void avk_tanh2(float &a, float &b)
{
#if defined(AVK_TARGET_CUDA) && AVK_DTYPE != 0 && __CUDA_ARCH__ >= 800 && AVK_SOFTCAP_F16X2
    unsigned int h;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(b), "f"(a)); /* a in the low half */
    asm("tanh.approx.f16x2 %0, %0;" : "+r"(h));
    asm("{ .reg .f16 l, u; mov.b32 {l, u}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, u; }" : "=f"(a), "=f"(b) : "r"(h));
#else
    a = avk_tanh(a);
    b = avk_tanh(b);
#endif
}

/* element offset of query i's row of head h in the mask ([b][h][i][j] with broadcast strides) */
AVK_DEVICE long long avk_mask_row(const avk_attn_params &p, int b, int h, int i)
{
    return (long long)b * p.mask_sb + (long long)h * p.mask_sh + (long long)i * p.seq_kv;
}

/* The sink of head h joins a finished row's softmax (m: its max in the scaled
 * log2 domain, l: its sum): m and l take it in, and the factor O must be
 * multiplied by is returned. Split partials leave it to the merge. */
AVK_DEVICE float avk_fold_sink(const avk_attn_params &p, int h, float &m, float &l)
{
#if AVK_SPLIT
    (void)p, (void)h, (void)m, (void)l;
    return 1.f;
#else
    if (!(p.flags & AVK_FLAG_SINKS)) return 1.f;
    const float sink = ((const float *)p.sinks)[h] * 1.4426950408889634f;
    const float mx = avk_max(m, sink), keep = l > 0.f ? avk_exp2(m - mx) : 0.f;
    l = l * keep + avk_exp2(sink - mx);
    m = mx;
    return keep;
#endif
}

/* A paged cache's page size, where the host compiled it in (AVK_PAGE_SIZE,
 * the config's page size): a key's page and slot are then a shift and a mask
 * (or a division by a constant), not a 32-bit division by a kernel argument
 * for every key; Vulkan's decode specializes it alike (constant 11). */
#ifndef AVK_PAGE_SIZE
#define AVK_PAGE_SIZE 0
#endif
AVK_DEVICE int avk_page_size(const avk_attn_params &p) { return AVK_PAGE_SIZE > 0 ? AVK_PAGE_SIZE : (int)p.page_size; }

/* the K/V row holding key j of (b, g): contiguous strides, or the block table
 * (indices clamped so bad table contents never fault) */
AVK_DEVICE long long avk_kv_row(const avk_attn_params &p, int b, int g, int j)
{
    if (p.page_size == 0) return (long long)b * p.kv_sb + (long long)g * p.kv_sh + (long long)j * p.kv_ss;
    const int ps = avk_page_size(p);
    int page = ((const int *)p.block_table)[(long long)b * p.max_pages + j / ps];
    page = min(max(page, 0), (int)p.num_pages - 1);
    return ((long long)page * ps + j % ps) * p.kv_heads + g;
}

/* fp8: the per-kv-head scale of K (which 0) or V (1); 1 for other formats */
AVK_DEVICE float avk_kv_scale(const avk_attn_params &p, int which, int g)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    return ((const float *)p.kv_scales)[which * (int)p.kv_heads + g];
#else
    (void)p, (void)which, (void)g;
    return 1.f;
#endif
}

/* e4m3 -> f32, exactly: its bits placed in an f16 are the value / 256 */
AVK_DEVICE float avk_fp8_to_f32(unsigned int c)
{
    const avk_u16 h = (avk_u16)(((c & 0x80u) << 8) | ((c & 0x7fu) << 7));
    return avk_f16_to_f32(h) * 256.f;
}

/* Value d of a K/V row in the kv format, as f32 (fp8 without its scale). */
AVK_DEVICE float avk_kv_value(const unsigned char *row, int d)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    const unsigned char *blk = row + (d / 32) * 34;
    const float scale = avk_f16_to_f32((avk_u16)(blk[0] | blk[1] << 8));
    return scale * (float)(signed char)blk[2 + d % 32];
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const unsigned char *blk = row + (d / 32) * 18;
    const float scale = avk_f16_to_f32((avk_u16)(blk[0] | blk[1] << 8));
    const int k = d % 32;
    const int q = k < 16 ? (blk[2 + k] & 15) : (blk[2 + k - 16] >> 4);
    return scale * (float)(q - 8);
#elif AVK_KV_FORMAT == AVK_KV_FP8
    return avk_fp8_to_f32(row[d]);
#else
    return avk_to_f32(((const avk_elem *)row)[d]);
#endif
}

/* Values d and d + 1 (d even) of a row of raw kv bytes, as f32 (fp8 without
 * its scale): two values per 16-bit read, the dequant of the decode body's
 * K fragments. Bit-exact with avk_kv_value. */
AVK_DEVICE void avk_kv_pair(const unsigned char *row, int d, float &x0, float &x1)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    const unsigned char *blk = row + (d / 32) * 34;
    const float scale = avk_f16_to_f32(*(const avk_u16 *)blk);
    const avk_u16 q = *(const avk_u16 *)(blk + 2 + d % 32);
    x0 = scale * (float)(signed char)(q & 0xff);
    x1 = scale * (float)(signed char)(q >> 8);
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const unsigned char *blk = row + (d / 32) * 18;
    const float scale = avk_f16_to_f32(*(const avk_u16 *)blk);
    const int k = d % 32, shift = k < 16 ? 0 : 4;
    const avk_u16 q = *(const avk_u16 *)(blk + 2 + k % 16);
    x0 = scale * (float)((int)((q >> shift) & 15) - 8);
    x1 = scale * (float)((int)((q >> (8 + shift)) & 15) - 8);
#elif AVK_KV_FORMAT == AVK_KV_FP8
    const avk_u16 q = *(const avk_u16 *)(row + d);
    x0 = avk_fp8_to_f32(q & 0xffu);
    x1 = avk_fp8_to_f32(q >> 8);
#else
    x0 = avk_to_f32(((const avk_elem *)row)[d]);
    x1 = avk_to_f32(((const avk_elem *)row)[d + 1]);
#endif
}

/* ---- raw codes for the f16 decode kernel (attn_decode.h) ----
 * A quantized value is code * scale. The codes (q8_0's int8, q4_0's nibble
 * - 8, e4m3 / 256) are exact in f16, so the kernel turns two codes into an
 * f16x2 with integer tricks, multiplies by the tensor cores unscaled, and
 * applies the per-block scales to S (K) and to P (V) in f32 instead.
 * AVK_KV_BLOCK_SCALED: a scale per 32-value block of a row (q8_0, q4_0);
 * AVK_KV_CODE_UNIT: what a code of 1 is worth (e4m3 codes are value / 256). */
#undef AVK_KV_BLOCK_SCALED
#undef AVK_KV_CODE_UNIT
#define AVK_KV_BLOCK_SCALED (AVK_KV_FORMAT == AVK_KV_Q8_0 || AVK_KV_FORMAT == AVK_KV_Q4_0)
#define AVK_KV_CODE_UNIT (AVK_KV_FORMAT == AVK_KV_FP8 ? 256.f : 1.f)

/* the scale of the 32-value block holding value d of a row (1 without blocks) */
AVK_DEVICE float avk_kv_block_scale(const unsigned char *row, int d)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    return avk_f16_to_f32(*(const avk_u16 *)(row + (d / 32) * 34));
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    return avk_f16_to_f32(*(const avk_u16 *)(row + (d / 32) * 18));
#else
    (void)row, (void)d;
    return 1.f;
#endif
}

/* the raw byte of value d of a row, and the code bits in it (byte, or one nibble) */
AVK_DEVICE avk_u32 avk_kv_code(const unsigned char *row, int d)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    return row[(d / 32) * 34 + 2 + d % 32];
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const int k = d % 32;
    return (avk_u32)(row[(d / 32) * 18 + 2 + k % 16] >> (k < 16 ? 0 : 4)) & 15u;
#else
    return row[d];
#endif
}

#if defined(AVK_TARGET_CUDA) && AVK_DTYPE == 1
/* two codes (lo, hi: 8 bits each, q4_0 already a nibble) as an f16x2 of their values */
AVK_DEVICE avk_u32 avk_kv_codes_f16x2(avk_u32 lo, avk_u32 hi)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    /* e4m3 bits placed in an f16 (sign to bit 15, exponent and mantissa
     * from bit 7) read as value / 256: exact, subnormals included */
    const avk_u32 x = lo | hi << 16;
    return ((x & 0x007f007fu) << 7) | ((x & 0x00800080u) << 8);
#else
    /* 1024 + u as an f16 is 0x6400 | u for u < 1024; subtracting the bias exactly */
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    const avk_u32 x = ((lo ^ 0x80u) | (hi ^ 0x80u) << 16) | 0x64006400u, bias = 0x64806480u; /* 1152: int8 + 128 */
#else
    const avk_u32 x = (lo | hi << 16) | 0x64006400u, bias = 0x64086408u; /* 1032: nibble - 8 */
#endif
    avk_u32 r;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(bias));
    return r;
#endif
}

/* Quads (AVK_DECODE_QUADS in attn_decode.h): which value of a 32-value block
 * byte e of column g's quad is, and the quad: the four codes of block t of
 * a row (byte codes 4g .. 4g+3; q4_0 the two nibbles of bytes 2g, 2g+1), one
 * per byte, in one or two loads instead of one per value. */
AVK_DEVICE int avk_kv_quad_value(int g, int e)
{
#if AVK_KV_FORMAT == AVK_KV_Q4_0
    return 2 * g + (e & 1) + (e & 2) * 8;
#else
    return 4 * g + e;
#endif
}

AVK_DEVICE avk_u32 avk_kv_code_quad(const unsigned char *row, int t, int g)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    /* odd blocks' codes start 4-byte aligned (rows are 8-byte aligned), even blocks' 2-byte */
    if (((t * 34 + 2) & 3) == 0) return *(const avk_u32 *)(row + t * 34 + 2 + 4 * g);
    const avk_u16 *q = (const avk_u16 *)(row + t * 34 + 2 + 4 * g);
    return (avk_u32)q[0] | (avk_u32)q[1] << 16;
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const avk_u32 q = *(const avk_u16 *)(row + t * 18 + 2 + 2 * g);
    return (q & 0x0f0fu) | (q & 0xf0f0u) << 12; /* low nibbles to bytes 0, 1; high to 2, 3 */
#else
    return *(const avk_u32 *)(row + t * 32 + 4 * g);
#endif
}

/* values d, d + 1 (d even) of a row as an f16x2 of their codes */
AVK_DEVICE avk_u32 avk_kv_code_pair(const unsigned char *row, int d)
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    const avk_u32 q = *(const avk_u16 *)(row + (d / 32) * 34 + 2 + d % 32);
    return avk_kv_codes_f16x2(q & 0xffu, q >> 8);
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const int k = d % 32;
    const avk_u32 q = (avk_u32)*(const avk_u16 *)(row + (d / 32) * 18 + 2 + k % 16) >> (k < 16 ? 0 : 4);
    return avk_kv_codes_f16x2(q & 15u, (q >> 8) & 15u);
#else
    const avk_u32 q = *(const avk_u16 *)(row + d);
    return avk_kv_codes_f16x2(q & 0xffu, q >> 8);
#endif
}
#endif

/* Eight consecutive values d0 .. d0+7 (d0 % 8 == 0) of a row of raw kv bytes
 * in shared or global memory, as f32 (fp8 without its scale): the dequant
 * step of the tensor-core kernel's quantized tile loads. */
AVK_DEVICE void avk_kv_value8(const unsigned char *row, int d0, float (&x)[8])
{
#if AVK_KV_FORMAT == AVK_KV_Q8_0
    const unsigned char *blk = row + (d0 / 32) * 34;
    const float scale = avk_f16_to_f32(*(const avk_u16 *)blk);
    const avk_u16 *q = (const avk_u16 *)(blk + 2 + d0 % 32); /* 2-byte aligned */
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        x[2 * e] = scale * (float)(signed char)(q[e] & 0xff);
        x[2 * e + 1] = scale * (float)(signed char)(q[e] >> 8);
    }
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
    const unsigned char *blk = row + (d0 / 32) * 18;
    const float scale = avk_f16_to_f32(*(const avk_u16 *)blk);
    const int k = d0 % 32, shift = k < 16 ? 0 : 4;
    const avk_u16 *q = (const avk_u16 *)(blk + 2 + k % 16);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        x[2 * e] = scale * (float)((int)((q[e] >> shift) & 15) - 8);
        x[2 * e + 1] = scale * (float)((int)((q[e] >> (8 + shift)) & 15) - 8);
    }
#elif AVK_KV_FORMAT == AVK_KV_FP8
    const avk_u32 *q = (const avk_u32 *)(row + d0);
#pragma unroll
    for (int e = 0; e < 8; ++e) x[e] = avk_fp8_to_f32((q[e / 4] >> (8 * (e % 4))) & 0xffu);
#else
#pragma unroll
    for (int e = 0; e < 8; ++e) x[e] = avk_to_f32(((const avk_elem *)row)[d0 + e]);
#endif
}
