/* The re-layout amd_matrix.h does around each AMD matrix instruction,
 * simulated on the host with the same index maps (native/amd_fragments.h):
 * NVIDIA m16n8k16 fragments of the two 32-lane warps of a wave64 -> LDS
 * scratch -> MFMA 16x16x16 operands -> products -> scratch -> NVIDIA
 * accumulators must equal A_w x B_w for each warp; likewise for WMMA on a
 * wave32, and for the lane-by-lane path of a partly active wave64 (one warp
 * skipped the call). Also: the NVIDIA maps are bijections and the scratch regions
 * don't overlap. (What the hardware does with the operands is the ISA's
 * documented layout; it can only be run on an AMD GPU.) */
#include "test_util.h"
#include "../../native/amd_fragments.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int passed;
#define CHECK(cond, ...)          \
    do {                          \
        int ok_ = (cond);         \
        EXPECT(ok_, __VA_ARGS__); \
        passed += ok_;            \
    } while (0)

enum { SCRATCH = AVK_SCRATCH_U16_PER_WAVE };

/* the scratch holds 16-bit values; here every u16 slot is a float cell,
 * and an f32 of the D area spans two slots (only the first is used) */
static float scratch[SCRATCH];
static float *d_area(int index) { return &scratch[AVK_SCRATCH_D + 2 * index]; }

static void check_maps(void)
{
    int a_seen[16][16] = {{0}}, b_seen[16][8] = {{0}}, c_seen[16][8] = {{0}};
    for (int l = 0; l < 32; ++l) {
        for (int e = 0; e < 8; ++e) a_seen[avk_nv_a_row(l, e)][avk_nv_a_col(l, e)]++;
        for (int e = 0; e < 4; ++e) b_seen[avk_nv_b_k(l, e)][avk_nv_b_n(l, e)]++;
        for (int e = 0; e < 4; ++e) c_seen[avk_nv_c_row(l, e)][avk_nv_c_col(l, e)]++;
    }
    int ok = 1;
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) ok &= a_seen[i][j] == 1 && (j >= 8 || (b_seen[i][j] == 1 && c_seen[i][j] == 1));
    CHECK(ok, "m16n8k16 A, B, C maps cover each element once");
    /* PTX ISA spot checks: lane 5 = group 1, thread 1 */
    CHECK(avk_nv_a_row(5, 0) == 1 && avk_nv_a_col(5, 0) == 2 && avk_nv_a_row(5, 2) == 9 && avk_nv_a_col(5, 4) == 10,
          "A fragment of lane 5");
    CHECK(avk_nv_b_k(5, 0) == 2 && avk_nv_b_k(5, 3) == 11 && avk_nv_b_n(5, 0) == 1, "B fragment of lane 5");
    CHECK(avk_nv_c_row(5, 2) == 9 && avk_nv_c_col(5, 1) == 3, "C fragment of lane 5");
    int mfma_seen[16][16] = {{0}}, wmma_seen[16][16] = {{0}};
    for (int l = 0; l < 64; ++l)
        for (int j = 0; j < 4; ++j) mfma_seen[avk_mfma_d_row(l, j)][avk_mfma_d_col(l)]++;
    for (int l = 0; l < 32; ++l)
        for (int j = 0; j < 8; ++j) wmma_seen[avk_wmma_d_row(l, j)][avk_wmma_d_col(l)]++;
    ok = 1;
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) ok &= mfma_seen[i][j] == 1 && wmma_seen[i][j] == 1;
    CHECK(ok, "MFMA and WMMA D maps cover each element once");
    /* regions: A [0, 512), B [512, 768), D [768, 768 + 2 * 256) */
    int owner[SCRATCH];
    memset(owner, 0, sizeof owner);
    int overlap = 0;
    for (int w = 0; w < 2; ++w)
        for (int r = 0; r < 16; ++r)
            for (int k = 0; k < 16; ++k) {
                overlap |= owner[avk_scratch_a(w, r, k)]++;
                if (r < 8) overlap |= owner[avk_scratch_b(w, r, k)]++;
                if (k < 8) {
                    int s = AVK_SCRATCH_D + 2 * avk_scratch_d(w, r, k);
                    overlap |= s + 1 >= SCRATCH || owner[s]++ || owner[s + 1]++;
                }
            }
    CHECK(!overlap, "scratch regions are disjoint and inside %d u16", SCRATCH);
}

static void fill(float *m, int n, unsigned *state)
{
    for (int i = 0; i < n; ++i) {
        *state = *state * 1103515245u + 12345u;
        m[i] = (float)((int)(*state >> 16) % 9 - 4); /* small integers: exact products */
    }
}

/* wave = 64: MFMA path (two warps); wave = 32: WMMA path (one warp);
 * active_warp >= 0: only that warp of a wave64 is active (lane-by-lane path). */
static int simulate(int wave, int active_warp, unsigned seed)
{
    const int warps = wave / 32;
    float A[2][16][16], B[2][16][8], acc[2][32][4];
    fill(&A[0][0][0], 2 * 256, &seed);
    fill(&B[0][0][0], 2 * 128, &seed);
    fill(&acc[0][0][0], 2 * 128, &seed); /* D += A B onto existing accumulators */
    float expect[2][32][4];
    for (int w = 0; w < warps; ++w)
        for (int l = 0; l < 32; ++l)
            for (int e = 0; e < 4; ++e) {
                float s = acc[w][l][e];
                for (int k = 0; k < 16; ++k) s += A[w][avk_nv_c_row(l, e)][k] * B[w][k][avk_nv_c_col(l, e)];
                expect[w][l][e] = s;
            }
    for (int i = 0; i < SCRATCH; ++i) scratch[i] = NAN; /* LDS garbage */
    /* 1. each lane stores its NVIDIA fragments (avk_amd_put_operands) */
    for (int lane = 0; lane < wave; ++lane) {
        int w = lane / 32, l = lane % 32;
        if (active_warp >= 0 && w != active_warp) continue;
        for (int e = 0; e < 8; ++e) {
            int r = avk_nv_a_row(l, e), c = avk_nv_a_col(l, e);
            scratch[avk_scratch_a(w, r, c)] = A[w][r][c];
        }
        for (int e = 0; e < 4; ++e)
            scratch[avk_scratch_b(w, avk_nv_b_n(l, e), avk_nv_b_k(l, e))] = B[w][avk_nv_b_k(l, e)][avk_nv_b_n(l, e)];
    }
    /* 2. operands per the ISA layout, the instruction, the product back */
    if (active_warp >= 0) { /* avk_amd_mma_lanes: each lane its 4 outputs from its warp's scratch */
        int ok = 1;
        for (int l = 0; l < 32; ++l)
            for (int e = 0; e < 4; ++e) {
                int row = avk_nv_c_row(l, e), col = avk_nv_c_col(l, e);
                float x = 0;
                for (int k = 0; k < 16; ++k)
                    x += scratch[avk_scratch_a(active_warp, row, k)] * scratch[avk_scratch_b(active_warp, col, k)];
                ok &= acc[active_warp][l][e] + x == expect[active_warp][l][e];
            }
        return ok;
    }
    if (wave == 64) {
        float a_op[2][64][4], b_op[64][4];
        for (int lane = 0; lane < 64; ++lane) {
            int k0 = avk_mfma_k0(lane), n = avk_mfma_b_col(lane);
            for (int j = 0; j < 4; ++j) {
                a_op[0][lane][j] = scratch[avk_scratch_a(0, avk_mfma_a_row(lane), k0 + j)];
                a_op[1][lane][j] = scratch[avk_scratch_a(1, avk_mfma_a_row(lane), k0 + j)];
                b_op[lane][j] = scratch[avk_scratch_b(n / 8, n % 8, k0 + j)];
            }
        }
        for (int lane = 0; lane < 64; ++lane) { /* D_m[i][n] = sum_k A_m[i][k] B'[k][n] */
            int col = avk_mfma_d_col(lane), owner = col / 8;
            for (int j = 0; j < 4; ++j) {
                int row = avk_mfma_d_row(lane, j);
                float s = 0;
                for (int src = 0; src < 64; ++src) /* lanes holding row `row` of A and column `col` of B */
                    if (avk_mfma_a_row(src) == row)
                        for (int q = 0; q < 64; ++q)
                            if (avk_mfma_b_col(q) == col && avk_mfma_k0(q) == avk_mfma_k0(src))
                                for (int t = 0; t < 4; ++t) s += a_op[owner][src][t] * b_op[q][t];
                *d_area(avk_scratch_d(owner, row, col % 8)) = s;
            }
        }
    } else {
        float a_op[32][16], b_op[32][16];
        for (int lane = 0; lane < 32; ++lane)
            for (int k = 0; k < 16; ++k) {
                a_op[lane][k] = scratch[avk_scratch_a(0, avk_wmma_a_row(lane), k)];
                int n = avk_wmma_b_col(lane);
                b_op[lane][k] = n < 8 ? scratch[avk_scratch_b(0, n, k)] : 0.f;
            }
        for (int lane = 0; lane < 32; ++lane) {
            int col = avk_wmma_d_col(lane);
            if (col >= 8) continue;
            for (int j = 0; j < 8; ++j) {
                int row = avk_wmma_d_row(lane, j);
                float s = 0;
                for (int k = 0; k < 16; ++k) s += a_op[row][k] * b_op[col][k]; /* lanes row / col (< 16) */
                *d_area(avk_scratch_d(0, row, col)) = s;
            }
        }
    }
    /* 3. each lane adds its NVIDIA accumulator elements (avk_amd_take_product) */
    int ok = 1;
    for (int lane = 0; lane < wave; ++lane) {
        int w = lane / 32, l = lane % 32;
        for (int e = 0; e < 4; ++e) {
            float got = acc[w][l][e] + *d_area(avk_scratch_d(w, avk_nv_c_row(l, e), avk_nv_c_col(l, e)));
            ok &= got == expect[w][l][e];
        }
    }
    return ok;
}

int main(void)
{
    check_maps();
    unsigned seed = (unsigned)avk_test_seed();
    int ok64 = 1, ok32 = 1, ok_part = 1;
    for (int i = 0; i < 20; ++i) {
        ok64 &= simulate(64, -1, seed + (unsigned)i);
        ok32 &= simulate(32, -1, seed + 100u + (unsigned)i);
        ok_part &= simulate(64, i % 2, seed + 200u + (unsigned)i);
    }
    CHECK(ok64, "MFMA path: both warps of a wave64 get A_w B_w + C");
    CHECK(ok32, "WMMA path: the wave32 warp gets A B + C");
    CHECK(ok_part, "partly active wave64: the active warp gets A_w B_w + C, the idle warp's scratch unread");
    return avk_test_finish(passed, 0);
}
