/* Split-KV planning in core: every split holds at least one key tile, the
 * splits cover every tile exactly once, and the automatic plan fills the device
 * without tiny splits. Exhaustive over small shapes, plus the shapes we ship. */
#include "core/split_plan.h"
#include "test_util.h"

static int covers(const avk_split_request *r, avk_split_plan p)
{
    int64_t tiles = r->kv_len > 0 ? (r->kv_len + r->kv_tile - 1) / r->kv_tile : 0;
    if (p.splits < 1 || p.tiles_per_split < 1) return 0;
    if (tiles == 0) return p.splits == 1;
    /* splits * per >= tiles, and no split (the last included) is empty */
    return (int64_t)p.splits * p.tiles_per_split >= tiles && (int64_t)(p.splits - 1) * p.tiles_per_split < tiles;
}

/* 1 when the plan for r has want splits; else an expectation failure naming what */
static int expect_splits(avk_split_request r, int want, const char *what)
{
    avk_split_plan p = avk_plan_split_kv(&r);
    EXPECT(p.splits == want, "%s: %d splits, want %d", what, p.splits, want);
    return p.splits == want;
}

int main(void)
{
    int passed = 0;
    int all_cover = 1, none_over_request = 1, auto_min_tiles = 1, off_is_one = 1, prefill_is_one = 1;
    for (int64_t kv = 0; kv <= 700; kv += 7)
        for (int tile = 16; tile <= 128; tile *= 2)
            for (int64_t groups = 1; groups <= 300; groups += 23)
                for (int cu = 0; cu <= 132; cu += 33)
                    for (int req = 0; req <= 9; ++req)
                        for (int decode = 0; decode < 2; ++decode) {
                            avk_split_request r = {kv, tile, groups, cu, req, decode, (int)(groups % 4), (int)(groups % 3 == 0)};
                            avk_split_plan p = avk_plan_split_kv(&r);
                            int64_t tiles = (kv + tile - 1) / tile;
                            all_cover &= covers(&r, p);
                            if (req > 1 && p.splits > req) none_over_request = 0;
                            if (req == 0 && decode && p.splits > 1 && p.tiles_per_split < 2) auto_min_tiles = 0;
                            if (req == 1 && p.splits != 1) off_is_one = 0;
                            if (req == 0 && !decode && p.splits != 1) prefill_is_one = 0;
                            (void)tiles;
                        }
    EXPECT(all_cover, "splits cover every tile once, none empty");
    EXPECT(none_over_request, "never more splits than --split-kv asked");
    EXPECT(auto_min_tiles, "automatic splits hold at least two tiles");
    EXPECT(off_is_one, "--split-kv 1 never splits");
    EXPECT(prefill_is_one, "prefill shapes are not split automatically");
    passed += all_cover + none_over_request + auto_min_tiles + off_is_one + prefill_is_one;

    /* H100 decode, B=8 H=32 Nq=1, one row block per head: 256 workgroups against
     * 132 SMs already fill two waves minus a little -> 2 splits */
    avk_split_request h100 = {65536, 32, 8 * 32, 132, 0, 1, 1, 0};
    avk_split_plan p = avk_plan_split_kv(&h100);
    EXPECT(p.splits == 2 && p.tiles_per_split == 1024, "H100 decode B=8 H=32: %d x %d", p.splits, p.tiles_per_split);
    passed += p.splits == 2;
    /* one sequence, 8 heads: 8 workgroups -> 33 splits to fill 264 slots */
    avk_split_request single = {65536, 32, 8, 132, 0, 1, 1, 0};
    p = avk_plan_split_kv(&single);
    EXPECT(p.splits == 33, "B=1 H=8 decode: %d splits", p.splits);
    passed += p.splits == 33;
    /* a short cache caps the splits at two tiles each */
    avk_split_request short_kv = {200, 32, 1, 132, 0, 1, 1, 0};
    p = avk_plan_split_kv(&short_kv);
    EXPECT(p.splits == 3 && p.tiles_per_split == 3, "Nk=200 tile 32: %d x %d", p.splits, p.tiles_per_split);
    passed += p.splits == 3;
    /* GQA-packed decode (64 workgroups) of a kernel an SM runs 2 of at once: 528 slots -> 9 splits */
    passed += expect_splits((avk_split_request){65536, 32, 64, 132, 0, 1, 2, 0}, 9, "64 workgroups, 2 resident per SM");
    /* the same in whole waves (a kernel whose partial last wave is pure tail): of 1..9 splits,
     * 4 (256 workgroups in one wave of 264) and 8 (512 in two) fill their last wave best;
     * the fewer wins */
    passed += expect_splits((avk_split_request){65536, 32, 64, 132, 0, 1, 2, 1}, 4, "64 workgroups, 2 resident, whole waves");
    /* 32 workgroups (405b at B=4): 8 splits, one wave of 256 */
    passed += expect_splits((avk_split_request){131072, 64, 32, 132, 0, 1, 2, 1}, 8, "32 workgroups, 2 resident, whole waves");
    /* 4 resident (528 slots): 33 splits fill a wave exactly, 16 to 97%: close enough, fewer */
    passed += expect_splits((avk_split_request){131072, 64, 32, 132, 0, 1, 4, 1}, 16, "32 workgroups, 4 resident, whole waves");
    /* 3 resident (396 slots; CUDA's and OpenCL's quantized mma-decode): 6 splits (384) and
     * 12 (768 in two) fill 97%; the fewer */
    passed += expect_splits((avk_split_request){65536, 32, 64, 132, 0, 1, 3, 1}, 6, "64 workgroups, 3 resident, whole waves");
    /* 300 workgroups: one split already fills a wave of 264; more only add partials (whole-wave
     * plans fill one wave: H100, CUDA mma16 at B=64 Nk=8k, 512 workgroups over 396 slots,
     * 1 split 0.735 ms against 2's 0.751, bench/results/decode-2026-11-27-s21) */
    passed += expect_splits((avk_split_request){65536, 32, 300, 132, 0, 1, 2, 1}, 1, "300 workgroups, whole waves");
    /* 256 workgroups (MHA decode, B=8 H=32), 3 resident (396 slots): one split leaves a third of
     * the slots empty for its whole length; two fill the first wave (H100 CUDA mma16 at 16k:
     * 1 split 0.832 ms, 2 0.734) */
    passed += expect_splits((avk_split_request){16384, 32, 256, 132, 0, 1, 3, 1}, 2, "256 workgroups, 3 resident, whole waves");
    /* the combine's bound */
    avk_split_request huge = {1 << 24, 16, 1, 4096, 0, 1, 1, 0};
    p = avk_plan_split_kv(&huge);
    EXPECT(p.splits == 256, "split cap: %d", p.splits);
    passed += p.splits == 256;
    /* an explicit request larger than the tiles */
    avk_split_request asked = {100, 64, 1, 8, 9, 0, 1, 0};
    p = avk_plan_split_kv(&asked);
    EXPECT(p.splits == 2 && p.tiles_per_split == 1, "--split-kv 9 over 2 tiles: %d x %d", p.splits, p.tiles_per_split);
    passed += p.splits == 2;
    attnvk_problem dec = {.seq_q = 16}, pre = {.seq_q = 17};
    EXPECT(avk_is_decode(&dec) && !avk_is_decode(&pre), "decode is Nq <= %d", AVK_DECODE_MAX_ROWS);
    passed += avk_is_decode(&dec) && !avk_is_decode(&pre);
    return avk_test_finish(passed, avk_test_failures);
}
