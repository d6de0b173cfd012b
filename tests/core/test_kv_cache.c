/* KV-cache formats and paging on the host: exact decodes of known bytes,
 * quantization error bounds, fp8 code round trips, table checks, and every
 * cache case through the CPU device (the builder, gather and reference). */
#include "test_util.h"
#include "core/kv_build.h"
#include "core/kv_cache.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void known_bytes(void)
{
    /* q8_0: d = 0.5 (f16 0x3800), q = -3, 0, 7, ... */
    uint8_t q8[34] = {0x00, 0x38};
    q8[2] = (uint8_t)(int8_t)-3, q8[4] = 7, q8[33] = (uint8_t)(int8_t)-128;
    float out[32];
    attnvk_kv_decode(ATTNVK_KV_Q8_0, 32, q8, out, 1, 1.f);
    EXPECT(out[0] == -1.5f && out[1] == 0.f && out[2] == 3.5f && out[31] == -64.f, "q8_0 decode %g %g %g %g", out[0],
           out[1], out[2], out[31]);
    /* q4_0: d = 2 (0x4000); byte k holds value k (low) and k + 16 (high) */
    uint8_t q4[18] = {0x00, 0x40, 0x9f};
    attnvk_kv_decode(ATTNVK_KV_Q4_0, 32, q4, out, 1, 1.f);
    EXPECT(out[0] == 2.f * (15 - 8) && out[16] == 2.f * (9 - 8) && out[1] == -16.f, "q4_0 decode %g %g %g", out[0],
           out[16], out[1]);
    /* fp8 e4m3: 0x38 = 1, 0x7e = 448, 0x01 = 2^-9, 0xc0 = -2 */
    uint8_t f8[4] = {0x38, 0x7e, 0x01, 0xc0};
    float f[4];
    attnvk_kv_decode(ATTNVK_KV_FP8, 4, f8, f, 1, 2.f);
    EXPECT(f[0] == 2.f && f[1] == 896.f && f[2] == 2.f * 0x1p-9f && f[3] == -4.f, "fp8 decode %g %g %g %g", f[0], f[1],
           f[2], f[3]);
}

static void round_trips(void)
{
    /* every finite fp8 code decodes and re-encodes to itself */
    int bad = 0;
    for (int c = 0; c < 256; ++c) {
        if ((c & 0x7f) == 0x7f) continue;
        uint8_t in = (uint8_t)c, again;
        float x;
        attnvk_kv_decode(ATTNVK_KV_FP8, 1, &in, &x, 1, 1.f);
        attnvk_kv_encode(ATTNVK_KV_FP8, 1, &x, &again, 1, 1.f);
        if (again != in && !(x == 0 && (again & 0x7f) == 0)) ++bad;
    }
    EXPECT(bad == 0, "%d fp8 codes do not round-trip", bad);
    /* quantization error: half a step of each block's scale (q4_0: one step,
     * since its scale maps the largest magnitude to -8 and +8 clips to 7),
     * plus the scale's rounding to f16 (up to 2^-11 of it) times the largest
     * code: amax / 2048 for q8_0's 127, inside the 1% slack for q4_0's 8 */
    enum { D = 128 };
    float x[D], y[D];
    uint8_t buf[D * 2];
    attnvk_fill_random(x, D, 7);
    x[5] = 0;
    const attnvk_kv_format fmts[] = {ATTNVK_KV_Q8_0, ATTNVK_KV_Q4_0};
    for (int f = 0; f < 2; ++f) {
        attnvk_kv_encode(fmts[f], D, x, buf, 1, 1.f);
        attnvk_kv_decode(fmts[f], D, buf, y, 1, 1.f);
        for (int blk = 0; blk < D / 32; ++blk) {
            float amax = 0, err = 0;
            for (int k = 0; k < 32; ++k) amax = fmaxf(amax, fabsf(x[blk * 32 + k]));
            for (int k = 0; k < 32; ++k) err = fmaxf(err, fabsf(x[blk * 32 + k] - y[blk * 32 + k]));
            const float bound = f == 0 ? 0.5f * amax / 127 + amax / 2048 : amax / 8;
            EXPECT(err <= bound * 1.01f + 1e-6f, "%s block %d error %g > %g", attnvk_kv_format_name(fmts[f]), blk, err,
                   bound);
        }
    }
}

static void table_checks(void)
{
    attnvk_problem p = {.batch = 2, .heads = 4, .kv_heads = 2, .seq_q = 1, .seq_kv = 40, .head_dim = 64,
                        .dtype = ATTNVK_F16, .page_size = 16, .num_pages = 5, .max_pages = 3};
    EXPECT(attnvk_problem_validate(&p) == ATTNVK_OK, "%s", attnvk_last_error());
    int32_t table[6] = {0, 1, 2, 3, 4, -7}, lens[2] = {40, 17};
    EXPECT(attnvk_kv_tables_check(&p, table, lens) == ATTNVK_OK, "%s", attnvk_last_error());
    lens[1] = 33; /* needs a third page: -7 */
    EXPECT(attnvk_kv_tables_check(&p, table, lens) == ATTNVK_ERROR_INVALID_ARGUMENT &&
               strstr(attnvk_last_error(), "block_table[1][2] = -7"), "%s", attnvk_last_error());
    lens[1] = 41;
    EXPECT(attnvk_kv_tables_check(&p, table, lens) == ATTNVK_ERROR_INVALID_ARGUMENT, "len past Nk accepted");
    lens[1] = 49;
    EXPECT(attnvk_kv_tables_check(&p, table, lens) == ATTNVK_ERROR_INVALID_ARGUMENT &&
               strstr(attnvk_last_error(), "exceeds the block table"), "%s", attnvk_last_error());
    p.seq_kv = 49;
    EXPECT(attnvk_problem_validate(&p) == ATTNVK_ERROR_INVALID_ARGUMENT, "Nk past max_pages x page_size accepted");
    p.seq_kv = 40, p.kv_format = ATTNVK_KV_Q8_0, p.head_dim = 80;
    EXPECT(attnvk_problem_validate(&p) == ATTNVK_ERROR_INVALID_ARGUMENT, "q8_0 with D=80 accepted");
    p.head_dim = 64, p.kv_format = (attnvk_kv_format)9;
    EXPECT(attnvk_problem_validate(&p) == ATTNVK_ERROR_INVALID_ARGUMENT, "kv format 9 accepted");
    p.kv_format = ATTNVK_KV_DTYPE, p.page_size = 0;
    EXPECT(attnvk_problem_validate(&p) == ATTNVK_ERROR_INVALID_ARGUMENT, "num_pages without paging accepted");
    EXPECT(attnvk_kv_row_bytes(&(attnvk_problem){.head_dim = 128, .kv_format = ATTNVK_KV_Q4_0}) == 72, "q4_0 row");
    EXPECT(attnvk_kv_row_bytes(&(attnvk_problem){.head_dim = 128, .kv_format = ATTNVK_KV_Q8_0}) == 136, "q8_0 row");
}

int main(void)
{
    known_bytes();
    round_trips();
    table_checks();
    uint64_t seed = avk_test_seed();
    attnvk_context *ctx;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_CPU);
    int passed = 0, failed = 0;
    avk_cache_case cases[32];
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16};
    for (int t = 0; dev && t < 2; ++t) {
        int n = avk_test_cache_cases(dtypes[t], cases, 32);
        for (int i = 0; i < n; ++i) avk_test_run_cache_case(dev, &cases[i], NULL, seed + i, 0) ? ++passed : ++failed;
    }
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
