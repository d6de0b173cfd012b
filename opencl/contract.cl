/* The kernel contract's hooks for attnvk's OpenCL kernels
 * (docs/kernel-contract.md): where a work-group works (packed GQA rows,
 * split-KV), sequence lengths and visible keys, where a K/V row lives
 * (contiguous or paged) and how its bytes decode (AVK_KV_FORMAT). The
 * program source starts with runtime/contract/kernel_flags.h and the
 * avk_kernel_args struct expanded from kernel_args.def (cl_program.c),
 * then common.cl, then this file. */
#ifndef AVK_KV_FORMAT
#define AVK_KV_FORMAT AVK_KV_DTYPE
#endif
#define AVK_KV_QUANT (AVK_KV_FORMAT != AVK_KV_DTYPE)
/* V and O's head dim (Dv); AVK_D is Q and K's (Dk) */
#ifndef AVK_DV
#define AVK_DV AVK_D
#endif
#if AVK_DV != AVK_D && AVK_KV_QUANT
#error "a V head dim other than K's takes K/V in the problem's dtype"
#endif
/* bytes of one V row (Dv values; quantized formats only with Dv = Dk) */
#if AVK_DV == AVK_D
#define AVK_V_ROW_BYTES AVK_KV_ROW_BYTES
#else
#define AVK_V_ROW_BYTES (AVK_DV * (int)sizeof(avk_elem))
#endif
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

/* Buffers in the contract's order, then the scalar arguments by value. K
 * and V are raw bytes in the kv format; unused buffers are any valid one. */
#define AVK_CONTRACT_ARGS(ELEM)                                                                              \
    __global const ELEM *Q, __global const uchar *K, __global const uchar *V, __global ELEM *O,              \
        __global float *LSE, __global float *part_O, __global float *part_LSE,                               \
        __global const int *block_table, __global const int *seq_lens, __global const float *kv_scales,     \
        __global const float *alibi_slopes, __global const float *sinks, __global const uchar *mask,         \
        const avk_kernel_args args

/* keys of sequence b */
inline int avk_seq_len(const avk_kernel_args *a, __global const int *seq_lens, int b)
{
    if (!(a->flags & AVK_FLAG_SEQ_LENS)) return (int)a->seq_kv;
    return clamp(seq_lens[b], 0, (int)a->seq_kv);
}

/* -DAVK_POS_OFFSET=1: the problem moves i' (its position_offset); built in only
 * then, as in the CUDA bodies (a register the tensor-core bodies keep) */
#ifndef AVK_POS_OFFSET
#define AVK_POS_OFFSET 0
#endif

/* i' of query i in a sequence of len keys: where causal masks, windows and ALiBi put it */
inline long avk_row_pos(const avk_kernel_args *a, int len, int i)
{
    return ((a->flags & AVK_FLAG_TOP_LEFT) ? (long)i : (long)i + len - (long)a->seq_q) + (AVK_POS_OFFSET ? a->pos_offset : 0);
}

/* exclusive end of the keys query i sees in a sequence of len keys (causal, window) */
inline int avk_key_end(const avk_kernel_args *a, int len, int i)
{
    const long pos = avk_row_pos(a, len, i);
    long end = len;
    if (a->flags & AVK_FLAG_CAUSAL) end = min(end, pos + 1);
    if ((a->flags & AVK_FLAG_WINDOW) && a->window_right >= 0) end = min(end, pos + a->window_right + 1);
    return (int)clamp(end, 0L, (long)len);
}

/* first key query i sees (the window's left side) */
inline int avk_key_begin(const avk_kernel_args *a, int len, int i)
{
    if (!(a->flags & AVK_FLAG_WINDOW) || a->window_left < 0) return 0;
    return (int)clamp(avk_row_pos(a, len, i) - a->window_left, 0L, (long)len);
}

/* The softcap, c tanh(x / c) for a natural-log score x = scale q.k, as the
 * score hooks leave it: tanh(x / c), which one multiply per score by c
 * log2(e) (avk_score_unit, in place of scale log2(e)) turns into the log2
 * domain; ALiBi and the mask are added in that multiply's units. tanh is
 *  - f32 problems: OpenCL's tanh (f32 keeps its 1e-5);
 *  - f16 on NVIDIA, where the program already runs inline PTX (the
 *    unemulated tensor-core bodies, the tiled body's shfl.sync reductions):
 *    tanh.approx.f32, one MUFU op (relative error about 2^-11, far inside
 *    f16's tolerance), as the CUDA bodies do;
 *  - f16 elsewhere: 1 - 2 / (2^(2 y log2(e)) + 1), one exp2 and one
 *    reciprocal (2^.. -> inf gives 1, -> 0 gives -1: never NaN).
 * -DAVK_SOFTCAP_EXP2=1 (ATTNVK_OPENCL_BUILD_OPTIONS) takes the exp2 form on
 * NVIDIA too, =0 OpenCL's tanh elsewhere: the A/B of the two. */
#ifndef AVK_TANH_PTX
#if (defined(AVK_EMULATE) && !AVK_EMULATE) || (defined(AVK_REDUCE) && AVK_REDUCE == AVK_RED_NV)
#define AVK_TANH_PTX 1
#else
#define AVK_TANH_PTX 0
#endif
#endif
#ifndef AVK_SOFTCAP_EXP2
#define AVK_SOFTCAP_EXP2 (!AVK_TANH_PTX)
#endif
/* what avk_softcap_tanh's argument is tanh's times: 2 log2(e) for the exp2 form */
#if AVK_F16 && AVK_SOFTCAP_EXP2
#define AVK_TANH_PRE 2.8853900817779268f
#else
#define AVK_TANH_PRE 1.0f
#endif
/* tanh(y / AVK_TANH_PRE) */
AVK_INLINE float avk_softcap_tanh(float y)
{
#if !AVK_F16
    return tanh(y);
#elif AVK_SOFTCAP_EXP2
    return fma(-2.0f, 1.0f / (AVK_EXP2(y) + 1.0f), 1.0f);
#elif AVK_TANH_PTX
    float r;
    AVK_ASM("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(y));
    return r;
#else
    return tanh(y);
#endif
}
/* both of a pair: with -DAVK_SOFTCAP_F16X2=1 (ATTNVK_OPENCL_BUILD_OPTIONS) on NVIDIA's
 * inline-PTX path one tanh.approx.f16x2 for the two (half the special-function ops; the
 * error near 1 is f16's 2^-11, as tanh.approx.f32's). Off: on the H100 (session 16, 8k D=128
 * causal, mma-f16) 158.7 -> 155.7 TFLOP/s (plain 185.2). */
#ifndef AVK_SOFTCAP_F16X2
#define AVK_SOFTCAP_F16X2 0
#endif
AVK_INLINE void avk_softcap_tanh2(float *a, float *b)
{
#if AVK_F16 && !AVK_SOFTCAP_EXP2 && AVK_TANH_PTX && AVK_SOFTCAP_F16X2
    uint h;
    AVK_ASM("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(*b), "f"(*a)); /* a in the low half */
    AVK_ASM("tanh.approx.f16x2 %0, %0;" : "+r"(h));
    AVK_ASM("{ .reg .f16 l, u; mov.b32 {l, u}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, u; }"
            : "=f"(*a), "=f"(*b) : "r"(h));
#else
    *a = avk_softcap_tanh(*a);
    *b = avk_softcap_tanh(*b);
#endif
}
/* what a body's raw score (scale_log2 times it is the log2-domain score) is
 * multiplied by for avk_softcap_tanh: scale / c (times AVK_TANH_PRE) */
AVK_INLINE float avk_softcap_in(const avk_kernel_args *a, float scale_log2)
{
    return scale_log2 * (AVK_LN2 * AVK_TANH_PRE / a->softcap);
}
/* what turns the score hook's output into the log2 domain: scale_log2, or
 * with a softcap c * log2(e) (the hook then leaves tanh(x / c)) */
AVK_INLINE float avk_score_unit(const avk_kernel_args *a, float scale_log2)
{
    return a->softcap > 0.0f ? a->softcap * AVK_LOG2E : scale_log2;
}
/* what the scalar hook's input is the raw score times (the tiled body folds
 * it into Q): avk_softcap_in with a softcap, else scale_log2 */
AVK_INLINE float avk_score_pre(const avk_kernel_args *a, float scale_log2)
{
    return a->softcap > 0.0f ? avk_softcap_in(a, scale_log2) : scale_log2;
}

/* Score modifications (attnvk.h's order after the scale) for key j of a row
 * at i' = pos, head h, with that row's mask row (NULL-safe: only read with
 * AVK_FLAG_MASK), on s = avk_score_pre times the raw score; the result is in
 * the log2 domain (scale * log2(e) * q.k without modifications). */
inline float avk_score_mod(const avk_kernel_args *a, float s, int j, long pos, float slope, __global const uchar *mask,
                           long mask_row)
{
    const float log2e = 1.4426950408889634f;
    if (a->softcap > 0.0f) s = avk_softcap_tanh(s) * (a->softcap * log2e);
    if (a->flags & AVK_FLAG_ALIBI) s += slope * (float)(j - pos) * log2e;
    if (a->flags & AVK_FLAG_MASK)
        s += ((a->flags & AVK_FLAG_MASK_F16) ? vload_half(mask_row + j, (__global const half *)mask)
                                             : ((__global const float *)mask)[mask_row + j]) * log2e;
    return s;
}

/* Sparse patterns (#20; kernel_flags.h), through the mask's binding: whether
 * key j is visible to query i of (b, h) beside the contiguous rules. */
inline int avk_pattern_visible(const avk_kernel_args *a, __global const uchar *pattern, int b, int h, int i, int j)
{
    if (a->flags & AVK_FLAG_BLOCKS) {
        const int bq = (int)(a->pattern & 0xffffu), bk = (int)(a->pattern >> 16);
        const long cols = ((long)a->seq_kv + bk - 1) / bk;
        return pattern[(long)b * a->mask_sb + (long)h * a->mask_sh + (long)(i / bq) * cols + j / bk] != 0;
    }
    if (a->flags & AVK_FLAG_DILATED) {
        __global const int *groups = (__global const int *)pattern;
        const int g = h / ((int)a->heads / (int)a->pattern), s = groups[2 * g], r = groups[2 * g + 1], o = g % r;
        return (i % s) % r == o && (j % s) % r == o && i / s == j / s;
    }
    return 1;
}
#define AVK_PATTERNS (AVK_FLAG_BLOCKS | AVK_FLAG_DILATED)

/* At most this many block-layout entries are read to find a tile hidden (a longer
 * scan says "visible": the per-element test still hides what it must). */
#define AVK_PATTERN_SCAN 64

/* element offset of query i's row in the mask ([b][h][i][j] with broadcast strides) */
inline long avk_mask_row(const avk_kernel_args *a, int b, int h, int i)
{
    return (long)b * a->mask_sb + (long)h * a->mask_sh + (long)i * a->seq_kv;
}

#define AVK_SCORE_MODS (AVK_FLAG_ALIBI | AVK_FLAG_MASK)

/* Where one work-group works. Packed row R (GQA packing) is query R / pack
 * of head h + R % pack; with pack = 1 a row is a query index. */
typedef struct avk_work {
    int b, h, g, split; /* h: the first head of the group (grid y * pack); g: its kv head */
    int r0, r_end;      /* packed rows [r0, r_end) */
    int seq_len;        /* keys of this sequence */
    int kv_limit;       /* keys [0, kv_limit) exist (fewer only for the test-only skip) */
    int kv_end;         /* keys [0, kv_end) may be visible to some row */
    int kv_full;        /* keys [kv_full_begin, kv_full) are visible to every row: tiles within need no mask */
    int kv_begin;       /* no row sees keys below this (a window's left side) */
    int kv_full_begin;
    int t_begin, t_end; /* this split's K/V tiles */
    int view_base, view_step; /* a dilated view's row (key) t is the problem's view_base + t view_step */
} avk_work;

/* Dilated views (AVK_FLAG_DILATED_VIEW, kernel_flags.h), only in programs built
 * for sparse patterns (AVK_PATTERN_SEARCH): grid x names (segment, residue class, row block) of
 * the head's group; rows and keys become the class's view indices. */
#if defined(AVK_PATTERN_SEARCH) && AVK_PATTERN_SEARCH
#define AVK_VIEWS(a) (((a)->flags & AVK_FLAG_DILATED_VIEW) != 0)
#else
#define AVK_VIEWS(a) 0
#endif
inline void avk_dilated_view(const avk_kernel_args *a, __global const int *groups, avk_work *w, int br)
{
    const int grp = w->h / ((int)a->heads / (int)a->pattern), s = groups[2 * grp], r = groups[2 * grp + 1];
    const int n = (int)a->seq_q, blocks = ((min(s, n) + r - 1) / r + br - 1) / br; /* row blocks of a class */
    const int x = (int)get_group_id(0), seg = x / (r * blocks), cls = x / blocks % r;
    const int seg0 = seg < (int)(((long)n + s - 1) / s) ? seg * s : n; /* a smaller group's spare blocks: past the end */
    const int seg_len = min(s, n - seg0), rows = seg_len > cls ? (seg_len - cls + r - 1) / r : 0;
    w->view_base = seg0 + cls;
    w->view_step = r;
    w->r0 = x % blocks * br;
    w->r_end = max(w->r0, min(w->r0 + br, rows));
    /* the other classes are inactive rows (no keys: zeros); a block past the class's rows reads nothing */
    w->seq_len = cls == grp % r && w->r0 < rows ? rows : 0;
}

/* The problem's row (or key) of view index i: where its Q, K, V, O, LSE and partials live. */
inline long avk_view_row(const avk_kernel_args *a, const avk_work *w, int i)
{
    return AVK_VIEWS(a) ? (long)w->view_base + (long)i * w->view_step : (long)i;
}

inline avk_work avk_locate(const avk_kernel_args *a, __global const int *seq_lens, __global const void *pattern, int br, int bc)
{
    avk_work w;
    const int pack = (int)a->pack;
    int x = (int)get_group_id(0), y = (int)get_group_id(1);
    if (a->flags & AVK_FLAG_HEADS_FIRST) { /* kernel_flags.h: a row block's heads together */
        const int lin = x + y * (int)get_num_groups(0);
        x = lin / (int)get_num_groups(1), y = lin % (int)get_num_groups(1);
    }
    w.b = (int)get_group_id(2) / (int)a->splits;
    w.split = (int)get_group_id(2) % (int)a->splits;
    w.h = y * pack;
    w.g = w.h / (int)a->group;
    w.r0 = (int)a->q_begin * pack + x * br;
    w.r_end = min(w.r0 + br, (int)(a->q_begin + a->q_count) * pack);
    w.seq_len = avk_seq_len(a, seq_lens, w.b);
    w.view_base = 0, w.view_step = 1;
    if (AVK_VIEWS(a)) avk_dilated_view(a, (__global const int *)pattern, &w, br);
    w.kv_limit = (a->flags & AVK_FLAG_SKIP_LAST_TILE) ? (w.seq_len > 0 ? (w.seq_len - 1) / bc * bc : 0) : w.seq_len;
    w.kv_end = min(w.kv_limit, avk_key_end(a, w.seq_len, (w.r_end - 1) / pack));
    w.kv_full = min(w.kv_limit, avk_key_end(a, w.seq_len, w.r0 / pack));
    w.kv_begin = avk_key_begin(a, w.seq_len, w.r0 / pack);
    w.kv_full_begin = avk_key_begin(a, w.seq_len, (w.r_end - 1) / pack);
    const int tiles = (w.kv_end + bc - 1) / bc;
    /* tiles below every row's window are never loaded: the splits count from
     * the block's first visible tile (0 without a left window), as the host
     * plans them over the window's span (core's avk_kernel_args_span), not the whole cache */
    const int first = min(tiles, w.kv_begin / bc);
    if (a->splits > 1) {
        const int per_split = (int)a->split_keys / bc;
        w.t_begin = min(tiles, first + w.split * per_split);
        w.t_end = min(tiles, w.t_begin + per_split);
    } else {
        w.t_begin = first;
        w.t_end = tiles;
    }
    return w;
}

/* the first key packed row R sees */
inline int avk_row_key_begin(const avk_kernel_args *a, const avk_work *w, int R)
{
    return avk_key_begin(a, w->seq_len, R / (int)a->pack);
}

/* keys [0, end) packed row R sees */
inline int avk_row_key_end(const avk_kernel_args *a, const avk_work *w, int R)
{
    return min(w->kv_limit, avk_key_end(a, w->seq_len, R / (int)a->pack));
}

/* element offset of packed row R in Q and O */
inline long avk_q_row(const avk_kernel_args *a, const avk_work *w, int R)
{
    const int pack = (int)a->pack;
    return (long)w->b * a->q_sb + (long)(w->h + R % pack) * a->q_sh + avk_view_row(a, w, R / pack) * a->q_ss;
}

/* What the pattern shows the packed rows of w of keys [key0, key0 + n): none
 * (HIDDEN: the fast bodies neither load nor compute the tile), all of them
 * (SHOWN, block layouts only: no per-element test) or some (PARTIAL, also when
 * unsure: a scan longer than AVK_PATTERN_SCAN; a dilated row is bounded by its
 * segment only). A block layout's entries for the rows' heads and block rows
 * are scanned. */
enum { AVK_TILE_HIDDEN, AVK_TILE_PARTIAL, AVK_TILE_SHOWN };
AVK_INLINE int avk_pattern_tile(const avk_kernel_args *a, __global const uchar *pattern, const avk_work *w, int key0,
                                int n)
{
    const int pack = (int)a->pack, q0 = w->r0 / pack, q1 = (w->r_end - 1) / pack;
    const int rows_end = min(w->r_end, w->r0 + pack); /* one row of each head the work-group holds */
    if (a->flags & AVK_FLAG_BLOCKS) {
        const int bq = (int)(a->pattern & 0xffffu), bk = (int)(a->pattern >> 16);
        const long cols = ((long)a->seq_kv + bk - 1) / bk;
        const int c0 = key0 / bk, c1 = min(key0 + n - 1, (int)a->seq_kv - 1) / bk, b0 = q0 / bq, b1 = q1 / bq;
        if ((long)(rows_end - w->r0) * (b1 - b0 + 1) * (c1 - c0 + 1) > AVK_PATTERN_SCAN) return AVK_TILE_PARTIAL;
        int any = 0, all = 1;
        for (int R = w->r0; R < rows_end; ++R) {
            __global const uchar *head = pattern + (long)w->b * a->mask_sb + (long)(w->h + R % pack) * a->mask_sh;
            for (int br = b0; br <= b1; ++br)
                for (int c = c0; c <= c1; ++c) {
                    const int on = head[(long)br * cols + c] != 0;
                    any |= on;
                    all &= on;
                }
        }
        return all ? AVK_TILE_SHOWN : any ? AVK_TILE_PARTIAL : AVK_TILE_HIDDEN;
    }
    if (a->flags & AVK_FLAG_DILATED) {
        __global const int *groups = (__global const int *)pattern;
        for (int R = w->r0; R < rows_end; ++R) {
            const int g = (w->h + R % pack) / ((int)a->heads / (int)a->pattern), seg = groups[2 * g];
            if (key0 < (q1 / seg + 1) * seg && key0 + n > q0 / seg * seg) return AVK_TILE_PARTIAL;
        }
        return AVK_TILE_HIDDEN;
    }
    return AVK_TILE_PARTIAL;
}

/* The tile search of the bodies that skip hidden tiles. One lane walking the
 * tiles waited on the layout once per hidden tile (H100, 32k, 10% of 128x128
 * blocks: mma-f16 58.6 TFLOP/s against dense's 211), a search per visible
 * tile still once per visible tile (122). So the wg lanes classify a window
 * of AVK_WINDOW_PER_LANE * wg tiles at once into bits in local memory, and
 * searches inside the window read local memory only. bits:
 * 2 * AVK_WINDOW_WORDS(wg) words, visible tiles then those the layout shows
 * whole to every row (*shown: the found tile's, no per-element test), and
 * one word for avk_fill_window's minimum. *base: the window's first tile, -1
 * before the first. A window of 4 wg tiles covers a 32k row of 64-key tiles
 * at 128 lanes: one classification a work-group, where one of wg tiles took
 * four, each with its barriers and layout reads on the tile loop's path.
 *
 * avk_next_visible_tile (in the tile loop): the first tile after t some row
 * of w sees through the pattern, or w->t_end; t + 1 without a pattern.
 * avk_first_visible_tiles (before the loop): the first two. It may not put a
 * barrier under a branch: PoCL replicates the code after such a barrier, and
 * before the loop that is the whole loop (test_sparse's mma-f16-emu programs
 * took 280 s each to build, now ~2 s). Both are called by the whole
 * work-group in uniform control flow. */
#define AVK_WALK_STRIDES 4
/* The search's functions are AVK_INLINE: in clang's NVPTX build of mma-f16's pattern programs
 * (tools/opencl-ptxas, ptxas sm_90) avk_first_visible_tiles stayed a call whose pointer arguments put
 * the tile loop's state on a 192-byte stack; inlined, 254 registers and no stack (session 40). Whether
 * NVIDIA's own OpenCL compiler inlined them is not known. */
#ifndef AVK_WINDOW_PER_LANE
#define AVK_WINDOW_PER_LANE 4
#endif
#define AVK_WINDOW_WORDS(wg) (((wg) * AVK_WINDOW_PER_LANE + 31) / 32)
AVK_INLINE int avk_window_find(__local const uint *bits, int words, int base, int t, int *shown)
{
    if (base < 0 || t < base || t - base >= 32 * words) return -1;
    const int off = t - base;
    for (int wd = off / 32; wd < words; ++wd) {
        const uint m = bits[wd] & (wd == off / 32 ? 0xffffffffu << (off % 32) : 0xffffffffu);
        if (m) {
            const int bit = 31 - (int)clz(m & (0u - m)); /* its lowest set bit */
            *shown = (bits[words + wd] >> bit) & 1u;
            return base + wd * 32 + bit;
        }
    }
    return -1;
}

/* The window from the first tile at or after t that some row sees: each lane
 * walks its own stride of tiles (t + tid, + wg, ...; at most AVK_WALK_STRIDES
 * steps) to the first it sees, the earliest of those starts the window, and
 * the lanes classify it. No branch around its barriers. Returns the window's
 * first tile, or w->t_end when no tile from t on is visible; a walk that
 * finds nothing starts the window at its last (hidden) tile, visited though
 * its rows all mask to nothing: one wasted tile per AVK_WALK_STRIDES * wg. */
/* tiles [start, start + 32 words) into the cleared bits, lane tid taking tid, tid + wg, ...;
 * mark_start: the start's bit set whatever it holds (avk_fill_window's walk end) */
AVK_INLINE void avk_classify_window(const avk_kernel_args *a, __global const uchar *pattern, const avk_work *w,
                                    int start, int bc, __local uint *bits, int words, int mark_start, int tid, int wg)
{
    for (int idx = tid; idx < 32 * words; idx += wg) {
        const int tile = start + idx;
        const int cls = tile < w->t_end ? avk_pattern_tile(a, pattern, w, tile * bc, bc) : AVK_TILE_HIDDEN;
        if (cls != AVK_TILE_HIDDEN || (mark_start && idx == 0)) atomic_or(&bits[idx / 32], 1u << (idx % 32));
        if (cls == AVK_TILE_SHOWN) atomic_or(&bits[words + idx / 32], 1u << (idx % 32));
    }
}

AVK_INLINE int avk_fill_window(const avk_kernel_args *a, __global const uchar *pattern, const avk_work *w, int t,
                               int bc, __local uint *bits, int *base, int tid, int wg)
{
    const int words = AVK_WINDOW_WORDS(wg);
    barrier(CLK_LOCAL_MEM_FENCE); /* every lane is done reading the old window */
    for (int i = tid; i < 2 * words; i += wg) bits[i] = 0u;
    if (tid == 0) bits[2 * words] = (uint)w->t_end;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int walk_end = min(w->t_end, t + AVK_WALK_STRIDES * wg);
    int first = walk_end == w->t_end ? w->t_end : walk_end - 1;
    for (int tile = t + tid; tile < walk_end; tile += wg)
        if (avk_pattern_tile(a, pattern, w, tile * bc, bc) != AVK_TILE_HIDDEN) {
            first = min(first, tile);
            break;
        }
    atomic_min(&bits[2 * words], (uint)first);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int start = (int)bits[2 * words];
    avk_classify_window(a, pattern, w, start, bc, bits, words, 1, tid, wg); /* start: a hit or the walk's end */
    barrier(CLK_LOCAL_MEM_FENCE);
    *base = start;
    return min(start, w->t_end);
}

AVK_INLINE int avk_next_visible_tile(const avk_kernel_args *a, __global const uchar *pattern, const avk_work *w, int t,
                                     int bc, __local uint *bits, int *base, int *shown, int tid, int wg)
{
    *shown = 1;
#if AVK_PATTERN_SEARCH /* programs for a pattern only */
    if (!(a->flags & AVK_PATTERNS)) return t + 1;
    const int words = AVK_WINDOW_WORDS(wg);
    for (++t; t < w->t_end;) {
        if (*base < 0 || t < *base || t - *base >= 32 * words) { /* classify [t, t + 32 words) */
            barrier(CLK_LOCAL_MEM_FENCE); /* every lane is done reading the old window */
            for (int i = tid; i < 2 * words; i += wg) bits[i] = 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            avk_classify_window(a, pattern, w, t, bc, bits, words, 0, tid, wg);
            barrier(CLK_LOCAL_MEM_FENCE);
            *base = t;
        }
        const int found = avk_window_find(bits, words, *base, t, shown);
        if (found >= 0) return found;
        t = *base + 32 * words;
    }
    return w->t_end;
#else
    (void)a, (void)pattern, (void)w, (void)bc, (void)bits, (void)base, (void)tid, (void)wg;
    return t + 1;
#endif
}

/* The first two tiles of w to visit (*tile, *next, with their shown bits).
 * The fill runs unconditionally: PoCL replicates the code after a barrier
 * under a branch, and before the tile loop that is the whole loop. A window
 * holding one visible tile makes *next the tile after it, visited though
 * hidden (its rows mask to nothing): one wasted tile, no second fill here. */
AVK_INLINE void avk_first_visible_tiles(const avk_kernel_args *a, __global const uchar *pattern, const avk_work *w,
                                        int bc, __local uint *bits, int *base, int tid, int wg, int *tile,
                                        int *tile_shown, int *next, int *next_shown)
{
    *tile_shown = *next_shown = 1;
#if AVK_PATTERN_SEARCH
    const int words = AVK_WINDOW_WORDS(wg);
    *tile = avk_fill_window(a, pattern, w, w->t_begin, bc, bits, base, tid, wg);
    *tile_shown = bits[words] & 1u;
    const int found = *tile < w->t_end ? avk_window_find(bits, words, *base, *tile + 1, next_shown) : w->t_end;
    if (found < 0) *next_shown = 0;
    *next = found >= 0 ? found : min(*base + 32 * words, w->t_end);
#else
    (void)a, (void)pattern, (void)bc, (void)bits, (void)base, (void)tid, (void)wg;
    *tile = w->t_begin;
    *next = min(w->t_begin + 1, w->t_end);
#endif
}

/* element offset of packed row R in O: Q's strides are whole Dk rows, O's rows hold Dv */
inline long avk_o_row(const avk_kernel_args *a, const avk_work *w, int R)
{
#if AVK_DV == AVK_D
    return avk_q_row(a, w, R);
#else
    return avk_q_row(a, w, R) / AVK_D * AVK_DV;
#endif
}

/* index of packed row R in LSE and in one split's partials ([b][h][Nq]) */
inline long avk_lse_row(const avk_kernel_args *a, const avk_work *w, int R)
{
    const int pack = (int)a->pack;
    return ((long)w->b * a->heads + w->h + R % pack) * a->seq_q + avk_view_row(a, w, R / pack);
}

/* first partial row of this split: part_O[((split*B + b)*H + h)*Nq + i] */
inline long avk_split_base(const avk_kernel_args *a, const avk_work *w)
{
    return (long)w->split * a->batch * a->heads * a->seq_q;
}

/* The K/V row holding key j of (b, g): contiguous strides, or the block
 * table (clamped so bad table contents never fault). */
inline long avk_kv_row(const avk_kernel_args *a, __global const int *block_table, int b, int g, int j)
{
    if (a->page_size == 0) return (long)b * a->kv_sb + (long)g * a->kv_sh + (long)j * a->kv_ss;
    const uint ps = a->page_size;
    uint slot, in_page;
    if ((ps & (ps - 1u)) == 0u) { /* the usual power-of-two pages: shifts, not divisions, per key */
        slot = (uint)j >> popcount(ps - 1u);
        in_page = (uint)j & (ps - 1u);
    } else {
        slot = (uint)j / ps;
        in_page = (uint)j - slot * ps;
    }
    const int page = clamp(block_table[(long)b * a->max_pages + slot], 0, (int)a->num_pages - 1);
    return ((long)page * ps + in_page) * a->kv_heads + g;
}

/* The K/V row of a work-group's key j: through its dilated view where it has one. */
inline long avk_work_kv_row(const avk_kernel_args *a, __global const int *block_table, const avk_work *w, int j)
{
    return avk_kv_row(a, block_table, w->b, w->g, (int)avk_view_row(a, w, j));
}

/* fp8: the per-kv-head scale of K (which 0) or V (1); 1 for other formats */
inline float avk_kv_scale(const avk_kernel_args *a, __global const float *kv_scales, int which, int g)
{
#if AVK_KV_FORMAT == AVK_KV_FP8
    return kv_scales[which * (int)a->kv_heads + g];
#else
    return 1.0f;
#endif
}

/* e4m3 (bias 7, no infinities, 0x7f NaN) -> f32, as core/kv_cache.c decodes */
inline float avk_fp8_to_f32(uint c)
{
    const uint e = (c >> 3) & 15u, m = c & 7u;
    float v = e == 0 ? (float)m * 0x1p-9f : as_float(((e + 120u) << 23) | (m << 20));
    if (e == 15u && m == 7u) v = NAN;
    return (c & 0x80u) ? -v : v;
}

/* Values d0 .. d0+3 (d0 % 4 == 0) of the K/V row at r (address space AS),
 * decoded to f32 and multiplied by scale (fp8's; 1 otherwise). One body for
 * global rows (avk_kv_load4) and rows staged raw in local memory. */
#if AVK_KV_FORMAT == AVK_KV_Q8_0
#define AVK_KV_DECODE4(AS, r, d0, scale)                                                        \
    {                                                                                           \
        AS const uchar *blk_ = (r) + ((d0) / 32) * 34; /* f16 d, then 32 x int8 */              \
        const char4 q_ = as_char4(vload2(0, (AS const ushort *)(blk_ + 2 + (d0) % 32)));        \
        return convert_float4(q_) * vload_half(0, (AS const half *)blk_);                       \
    }
#elif AVK_KV_FORMAT == AVK_KV_Q4_0
/* byte k holds value k (low nibble) and value k + 16 (high nibble) */
#define AVK_KV_DECODE4(AS, r, d0, scale)                                                        \
    {                                                                                           \
        AS const uchar *blk_ = (r) + ((d0) / 32) * 18;                                          \
        const int k_ = (d0) % 32;                                                               \
        const uchar4 b_ = as_uchar4(vload2(0, (AS const ushort *)(blk_ + 2 + k_ % 16)));        \
        const uchar4 n_ = k_ < 16 ? (b_ & (uchar4)(15)) : (b_ >> (uchar4)(4));                 \
        return (convert_float4(n_) - 8.0f) * vload_half(0, (AS const half *)blk_);              \
    }
#elif AVK_KV_FORMAT == AVK_KV_FP8
#define AVK_KV_DECODE4(AS, r, d0, scale)                                                        \
    {                                                                                           \
        const uchar4 c_ = vload4(0, (r) + (d0));                                                \
        return (float4)(avk_fp8_to_f32(c_.x), avk_fp8_to_f32(c_.y), avk_fp8_to_f32(c_.z),       \
                        avk_fp8_to_f32(c_.w)) * (scale);                                        \
    }
#endif

inline float4 avk_kv_load4(__global const uchar *buf, long row, int d0, float scale)
{
    __global const uchar *r = buf + row * AVK_KV_ROW_BYTES;
#if AVK_KV_QUANT
    AVK_KV_DECODE4(__global, r, d0, scale)
#else
    (void)scale;
    return AVK_LOAD4((__global const avk_elem *)r, d0);
#endif
}

/* the same for V, whose rows hold Dv values */
inline float4 avk_v_load4(__global const uchar *buf, long row, int d0, float scale)
{
#if AVK_DV == AVK_D
    return avk_kv_load4(buf, row, d0, scale);
#else
    (void)scale;
    return AVK_LOAD4((__global const avk_elem *)(buf + row * AVK_V_ROW_BYTES), d0);
#endif
}

#if AVK_KV_QUANT
inline float4 avk_kv_load4_local(__local const uchar *r, int d0, float scale) AVK_KV_DECODE4(__local, r, d0, scale)
#endif

/* Values d0 .. d0+7 (d0 % 8 == 0) of a quantized K/V row as f32 (times
 * scale): the dequant step of the tensor-core kernel's tile loads. */
#if AVK_KV_QUANT
inline void avk_kv_load8(__global const uchar *buf, long row, int d0, float scale, float x[8])
{
    const float4 lo = avk_kv_load4(buf, row, d0, scale), hi = avk_kv_load4(buf, row, d0 + 4, scale);
    x[0] = lo.x, x[1] = lo.y, x[2] = lo.z, x[3] = lo.w;
    x[4] = hi.x, x[5] = hi.y, x[6] = hi.z, x[7] = hi.w;
}
#endif
