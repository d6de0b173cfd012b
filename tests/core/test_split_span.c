/* Split-KV over the keys a row block may see (#13): core's
 * avk_kernel_args_span and avk_kernel_args_split against a model of the
 * kernels' hooks (docs/kernel-contract.md) and of their avk_locate /
 * flash_work, which count the splits from the block's first visible tile.
 * Every visible tile of every row block lands in exactly one split, for every
 * window, alignment, causal / window_right, GQA packing, ragged length and
 * --split-kv; and the named shapes (no window, decode and prefill windows,
 * top-left vs bottom-right, windows past the cache) plan what they should. */
#include "core/kernel_args.h"
#include "core/split_plan.h"
#include "test_util.h"

#include <string.h>

/* the contract's hooks on the host (opencl/contract.cl, native/attn_contract.h) */
static int64_t row_pos(const avk_kernel_args *a, int64_t len, int64_t i)
{
    return (a->flags & AVK_FLAG_TOP_LEFT) ? i : i + len - (int64_t)a->seq_q;
}

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

static int64_t key_end(const avk_kernel_args *a, int64_t len, int64_t i)
{
    const int64_t pos = row_pos(a, len, i);
    int64_t end = len;
    if ((a->flags & AVK_FLAG_CAUSAL) && pos + 1 < end) end = pos + 1;
    if ((a->flags & AVK_FLAG_WINDOW) && a->window_right >= 0 && pos + a->window_right + 1 < end)
        end = pos + a->window_right + 1;
    return clamp64(end, 0, len);
}

static int64_t key_begin(const avk_kernel_args *a, int64_t len, int64_t i)
{
    if (!(a->flags & AVK_FLAG_WINDOW) || a->window_left < 0) return 0;
    return clamp64(row_pos(a, len, i) - a->window_left, 0, len);
}

/* OpenCL's avk_locate (native and Vulkan alike): tiles [*t0, *t1) of split s
 * of the row block of packed rows [r0, r_end) in a sequence of len keys */
static void locate(const avk_kernel_args *a, int64_t len, int64_t r0, int64_t r_end, int bc, int s, int64_t *t0,
                   int64_t *t1)
{
    const int64_t pack = a->pack, kv_end = key_end(a, len, (r_end - 1) / pack);
    const int64_t tiles = (kv_end + bc - 1) / bc, begin = key_begin(a, len, r0 / pack);
    const int64_t first = begin / bc < tiles ? begin / bc : tiles;
    if (a->splits > 1) {
        const int64_t per = a->split_keys / bc;
        *t0 = first + s * per < tiles ? first + s * per : tiles;
        *t1 = *t0 + per < tiles ? *t0 + per : tiles;
    } else {
        *t0 = first;
        *t1 = tiles;
    }
}

static attnvk_problem problem(int nq, int nk, int causal, int top_left, int left, int right)
{
    attnvk_problem p;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.heads = 8, p.kv_heads = 2, p.seq_q = nq, p.seq_kv = nk, p.head_dim = 64;
    p.dtype = ATTNVK_F16, p.causal = causal;
    p.align = top_left ? ATTNVK_ALIGN_TOP_LEFT : ATTNVK_ALIGN_BOTTOM_RIGHT;
    p.window = left >= 0 || right >= 0, p.window_left = left, p.window_right = right;
    return p;
}

/* Plans p (pack rows a block, row tile br, key tile bc, --split-kv req) and
 * walks every row block, every split and ragged length len: 1 when the
 * splits cover each block's visible tiles exactly once. *busy: the most
 * non-empty splits any block had. */
static int covers(const attnvk_problem *p, int pack, int br, int bc, int req, int64_t len, int *busy, int *planned)
{
    avk_kernel_args a;
    avk_kernel_args_fill(&a, p, 0, p->seq_q, pack, 0);
    const int splits = avk_kernel_args_split(&a, p, br, bc, 132, 1, 0, req);
    if (planned) *planned = splits;
    if (splits != (int)a.splits || (splits > 1 && a.split_keys % (unsigned)bc)) return 0;
    const int64_t rows = (int64_t)pack * p->seq_q;
    *busy = 0;
    for (int64_t r0 = 0; r0 < rows; r0 += br) {
        const int64_t r_end = r0 + br < rows ? r0 + br : rows;
        /* the tiles holding a key some row of the block sees */
        int64_t lo = INT64_MAX, hi = 0;
        for (int64_t r = r0; r < r_end; ++r) {
            const int64_t b = key_begin(&a, len, r / pack), e = key_end(&a, len, r / pack);
            if (b >= e) continue;
            if (b / bc < lo) lo = b / bc;
            if ((e + bc - 1) / bc > hi) hi = (e + bc - 1) / bc;
        }
        int64_t next = -1; /* the splits' ranges in order, back to back */
        int nonempty = 0, ok = 1;
        for (int s = 0; s < splits; ++s) {
            int64_t t0, t1;
            locate(&a, len, r0, r_end, bc, s, &t0, &t1);
            if (t0 >= t1) continue;
            ++nonempty;
            if (next >= 0 && t0 != next) ok = 0;
            if (next < 0 && lo != INT64_MAX && t0 > lo) ok = 0; /* the first visible tile read */
            next = t1;
        }
        if (lo != INT64_MAX && next < hi) ok = 0; /* the last one read */
        if (!ok) return 0;
        if (nonempty > *busy) *busy = nonempty;
    }
    return 1;
}

static int64_t span_of(const attnvk_problem *p, int pack, int br, int bc)
{
    avk_kernel_args a;
    avk_kernel_args_fill(&a, p, 0, p->seq_q, pack, 0);
    return avk_kernel_args_span(&a, br, bc);
}

static int expect_span(const attnvk_problem *p, int pack, int br, int bc, int64_t want, const char *what)
{
    const int64_t got = span_of(p, pack, br, bc);
    EXPECT(got == want, "%s: span %lld, want %lld", what, (long long)got, (long long)want);
    return got == want;
}

int main(void)
{
    int passed = 0, all = 1, cases = 0;
    static const int nks[] = {1, 7, 64, 200, 1000, 1013}, nqs[] = {1, 4, 16, 33, 150},
                     lefts[] = {-1, 0, 5, 61, 89, 100, 127, 5000},
                     rights[] = {-1, 0, 7, 300}, reqs[] = {0, 1, 3, 5, 8};
    for (size_t ik = 0; ik < sizeof nks / sizeof *nks; ++ik)
        for (size_t iq = 0; iq < sizeof nqs / sizeof *nqs; ++iq)
            for (size_t il = 0; il < sizeof lefts / sizeof *lefts; ++il)
                for (size_t ir = 0; ir < sizeof rights / sizeof *rights; ++ir)
                    for (int causal = 0; causal < 2; ++causal)
                        for (int tl = 0; tl < 2; ++tl)
                            for (int pack = 1; pack <= 4; pack *= 4)
                                for (int br = 16; br <= 64; br *= 4)
                                    for (int bc = 16; bc <= 64; bc *= 4)
                                        for (size_t is = 0; is < sizeof reqs / sizeof *reqs; ++is)
                                            for (int ragged = 0; ragged < 3; ++ragged) {
                                                attnvk_problem p = problem(nqs[iq], nks[ik], causal, tl, lefts[il],
                                                                           rights[ir]);
                                                const int64_t len = ragged == 2 ? nks[ik] * 2 / 3 : ragged ? nks[ik] - nks[ik] / 7 : nks[ik];
                                                int busy = 0;
                                                const int ok = covers(&p, pack, br, bc, reqs[is], len, &busy, NULL);
                                                if (!ok && all)
                                                    fprintf(stderr,
                                                            "not covered: Nq %d Nk %d len %lld causal %d top-left %d "
                                                            "window %d,%d pack %d br %d bc %d split %d\n",
                                                            nqs[iq], nks[ik], (long long)len, causal, tl, lefts[il],
                                                            rights[ir], pack, br, bc, reqs[is]);
                                                all &= ok;
                                                ++cases;
                                            }
    EXPECT(all, "every row block's visible tiles in exactly one split (%d plans)", cases);
    passed += all;

    /* no window: the whole cache */
    attnvk_problem p = problem(1, 32768, 1, 0, -1, -1);
    passed += expect_span(&p, 4, 16, 64, 32768, "no window");
    /* Mistral decode, bottom-right, W 4096: the query, the window, a tile */
    p = problem(1, 32768, 1, 0, 4096, -1);
    passed += expect_span(&p, 4, 16, 64, 1 + 4096 + 64, "decode window causal");
    p.causal = 0; /* bottom-right rows end at the cache's end either way */
    passed += expect_span(&p, 4, 16, 64, 1 + 4096 + 64, "decode window");
    p = problem(16, 32768, 1, 0, 4096, -1);
    passed += expect_span(&p, 4, 16, 64, 6 + 4096 + 64, "decode Nq 16 window, 4 queries a block");
    passed += expect_span(&p, 1, 64, 64, 16 + 4096 + 64, "decode Nq 16 window, Nq bounds the block");
    /* prefill: the block's queries bound it, top-left or bottom-right */
    p = problem(2000, 2000, 1, 0, 100, -1);
    passed += expect_span(&p, 1, 64, 64, 66 + 100 + 64, "prefill causal window");
    p.align = ATTNVK_ALIGN_TOP_LEFT;
    passed += expect_span(&p, 1, 64, 64, 66 + 100 + 64, "prefill causal window top-left");
    /* window_right instead of causal: the right side joins */
    p = problem(2000, 2000, 0, 1, 100, 50);
    passed += expect_span(&p, 1, 64, 64, 66 + 100 + 50 + 64, "prefill window both sides top-left");
    /* top-left without causal or window_right: a row sees to the end */
    p = problem(4, 1000, 0, 1, 100, -1);
    passed += expect_span(&p, 1, 16, 64, 1000, "top-left, no right side");
    /* top-left decode with Nq < Nk is a prefix of the cache: causal bounds it */
    p = problem(4, 1000, 1, 1, 100, -1);
    passed += expect_span(&p, 1, 16, 64, 4 + 100 + 64, "top-left causal");
    /* bottom-right caps the right side at the cache's end */
    p = problem(4, 1000, 0, 0, 100, 300);
    passed += expect_span(&p, 1, 16, 64, 4 + 100 + 64, "bottom-right window_right");
    /* a window at least the cache, or only a right side: the whole cache */
    p = problem(1, 1000, 1, 0, 1000, -1);
    passed += expect_span(&p, 1, 16, 64, 1000, "window = Nk");
    p = problem(1, 1000, 1, 0, 5000, -1);
    passed += expect_span(&p, 1, 16, 64, 1000, "window > Nk");
    p = problem(1, 1000, 0, 0, -1, 50);
    passed += expect_span(&p, 1, 16, 64, 1000, "right side only");

    /* --split-kv N divides the span, so a window well inside the cache keeps
     * every split (bar the slack's one) busy: Nk 1000, W 100, decode
     * bottom-right causal and with a right side, prefill top-left likewise */
    static const struct { int nq, causal, tl, right; const char *what; } windows[] = {
        {1, 1, 0, -1, "decode bottom-right causal"}, {4, 0, 0, 20, "decode Nq 4 bottom-right window_right"},
        {600, 1, 1, -1, "prefill top-left causal"}, {600, 0, 1, 30, "prefill top-left window_right"},
        {600, 1, 0, -1, "prefill bottom-right causal"}};
    for (size_t i = 0; i < sizeof windows / sizeof *windows; ++i)
        for (int req = 3; req <= 8; ++req) {
            p = problem(windows[i].nq, 1000, windows[i].causal, windows[i].tl, 100, windows[i].right);
            int busy = 0, planned = 0;
            const int ok = covers(&p, 1, 16, 16, req, 1000, &busy, &planned);
            EXPECT(ok && planned >= 3 && busy >= planned - 1, "W 100 %s split %d: covered %d, %d of %d splits busy",
                   windows[i].what, req, ok, busy, planned);
            passed += ok && planned >= 3 && busy >= planned - 1;
        }
    /* the split keys of Mistral's decode at --split-kv 4: 66 tiles of 64 -> 17 a split */
    p = problem(1, 32768, 1, 0, 4096, -1);
    avk_kernel_args a;
    avk_kernel_args_fill(&a, &p, 0, 1, 4, 0);
    const int splits = avk_kernel_args_split(&a, &p, 16, 64, 132, 1, 0, 4);
    EXPECT(splits == 4 && a.split_keys == 17 * 64 && (a.flags & AVK_FLAG_SPLIT), "Mistral decode split 4: %d x %u",
           splits, a.split_keys);
    passed += splits == 4 && a.split_keys == 17 * 64;
    /* automatic: 2 workgroups (8 heads, 4 a workgroup) fill 264 slots with as many splits as 2 tiles each allow (33) */
    avk_kernel_args_fill(&a, &p, 0, 1, 4, 0);
    const int automatic = avk_kernel_args_split(&a, &p, 16, 64, 132, 1, 0, 0);
    EXPECT(automatic == 33 && a.split_keys == 2 * 64, "Mistral decode automatic: %d x %u", automatic, a.split_keys);
    passed += automatic == 33;
    return avk_test_finish(passed, avk_test_failures);
}
