#include "core/split_plan.h"

/* Automatic splits fill the device this many times over (times the
 * workgroups a unit holds at once), so the tail of an uneven wave costs
 * little; more splits only add combine traffic. Whole-wave plans fill one. */
static const int64_t waves_to_fill = 2;
/* Each split streams at least this many key tiles: shorter splits spend more on
 * their (O, LSE) partials and the combine than they save. */
static const int64_t min_tiles_per_split = 2;
/* The combine reads every partial of a row: bound its cost. */
static const int64_t max_splits = 256;
/* Whole-wave plans: last waves this much less full than the fullest count as full. */
static const double whole_wave_slack = 0.05;
/* Compute units assumed when a driver does not report them. */
static const int64_t unknown_compute_units = 32;

int avk_is_decode(const attnvk_problem *p) { return p->seq_q <= AVK_DECODE_MAX_ROWS; }

avk_split_plan avk_plan_split_kv(const avk_split_request *r)
{
    avk_split_plan plan = {1, 1};
    int64_t tile = r->kv_tile > 0 ? r->kv_tile : 1;
    int64_t tiles = r->kv_len > 0 ? (r->kv_len + tile - 1) / tile : 0;
    if (tiles <= 0) return plan; /* no keys: one split writes the empty rows */
    int64_t splits = 1;
    if (r->requested > 1) {
        splits = r->requested;
    } else if (r->requested == 0 && r->decode) {
        int64_t units = r->compute_units > 0 ? r->compute_units : unknown_compute_units;
        int64_t groups = r->workgroups > 0 ? r->workgroups : 1;
        /* whole-wave plans fill one wave: past the resident count the device streams at its rate
         * already, and more splits only add partials. H100, B=64 Nk=8k (512 workgroups a split,
         * 396 slots; bench/results/decode-2026-11-27-s21): CUDA mma16 1 split 0.735 ms, 2 0.751
         * (its 3 resident are where the bandwidth saturates; 5 fit an SM); OpenCL's q8_0
         * mma-decode, whose 3 are all that fit, 1 split 0.484, 2 0.469 */
        int64_t target = (r->whole_waves ? 1 : waves_to_fill) * units * (r->resident > 1 ? r->resident : 1);
        splits = (target + groups - 1) / groups;
        int64_t most = tiles / min_tiles_per_split;
        if (splits > most) splits = most;
        if (splits > max_splits) splits = max_splits;
        if (r->whole_waves) {
            /* the fewest splits, up to the planned count, whose last wave is about as full as
             * the fullest (fewer splits: less combine traffic). H100, 64 workgroups a split,
             * 264 slots: 4 splits beat 8 on CUDA, OpenCL and Vulkan alike
             * (bench/results/decode-2026-11-25-s10) */
            int64_t slots = units * (r->resident > 1 ? r->resident : 1), best = splits;
            double best_fill = 0.0;
            for (int pass = 0; pass < 2; ++pass)
                for (int64_t s = splits; s >= 1; --s) {
                    int64_t total = groups * s, waves = (total + slots - 1) / slots;
                    double fill = (double)total / (double)(waves * slots);
                    /* a single wave that leaves slots empty streams below the device's rate for its
                     * whole length, not just in a tail: it counts only as the planned count's
                     * fallback. H100, CUDA mma16, MHA decode B=8 H=32 Nk=16k (256 workgroups a
                     * split, 396 slots; tools/h100/s24c.sh): 1 split 0.832 ms, 2 0.734 (cuDNN 0.697) */
                    if (s < splits && waves == 1 && (double)total < (1.0 - whole_wave_slack) * (double)slots) continue;
                    if (pass == 0 && fill > best_fill) best_fill = fill;
                    if (pass == 1 && fill >= best_fill - whole_wave_slack) best = s;
                }
            splits = best;
        }
    }
    if (splits > tiles) splits = tiles;
    if (splits < 1) splits = 1;
    int64_t per = (tiles + splits - 1) / splits;
    plan.tiles_per_split = (int)per;
    plan.splits = (int)((tiles + per - 1) / per); /* no empty trailing split */
    return plan;
}
