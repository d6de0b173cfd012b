/* Host logic of the CUDA backend, no GPU needed: variant names, tuning-table
 * lookup, tile checks, NVRTC options, cubin cache keys and the disk cache,
 * and that the backend says why it is unavailable. */
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_loader.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed;
#define CHECK(cond, ...)                  \
    do {                                  \
        int ok_ = (cond);                 \
        EXPECT(ok_, __VA_ARGS__);         \
        passed += ok_;                    \
    } while (0)

static attnvk_device_info fake_device(const char *arch)
{
    attnvk_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.name, sizeof info.name, "NVIDIA H100 80GB HBM3");
    snprintf(info.vendor, sizeof info.vendor, "NVIDIA");
    snprintf(info.architecture, sizeof info.architecture, "%s", arch);
    return info;
}

static attnvk_status pick(const char *arch, int cc, size_t smem, attnvk_dtype dt, int d, int decode,
                          const char *variant, int br, int bc, avk_cuda_config *c)
{
    attnvk_device_info info = fake_device(arch);
    attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = decode ? 1 : 1024, .seq_kv = 1024,
                        .head_dim = d, .dtype = dt};
    attnvk_kernel_options o = {.variant = variant, .tile_br = br, .tile_bc = bc};
    return avk_cuda_select(&info, cc, smem, &p, &o, decode, 1, c);
}

/* decode of one query row over a paged cache (page 16) */
static attnvk_status pick_paged(int d, attnvk_kv_format kv, const char *variant, avk_cuda_config *c)
{
    attnvk_device_info info = fake_device("sm_90");
    attnvk_problem p = {.batch = 1, .heads = 4, .kv_heads = 1, .seq_q = 1, .seq_kv = 1024, .head_dim = d,
                        .dtype = ATTNVK_F16, .kv_format = kv, .page_size = 16, .num_pages = 64, .max_pages = 64};
    attnvk_kernel_options o = {.variant = variant};
    return avk_cuda_select(&info, 9, 232448, &p, &o, 1, 4, c);
}

static int is(const avk_cuda_config *c, const char *variant, int br, int bc)
{
    return strcmp(c->variant, variant) == 0 && c->br == br && c->bc == bc;
}

static void test_variants(void)
{
    avk_cuda_config c;
    memset(&c, 0, sizeof c);
    CHECK(avk_cuda_parse_variant("mma16", &c) && c.mma && c.rows_per_warp == 16 && c.qreg, "mma16");
    CHECK(avk_cuda_parse_variant("mma32-qs", &c) && c.mma && c.rows_per_warp == 32 && !c.qreg, "mma32-qs");
    CHECK(avk_cuda_parse_variant("simt", &c) && !c.mma, "simt");
    CHECK(!avk_cuda_parse_variant("mma8", &c), "mma8 rejected");
    CHECK(!avk_cuda_parse_variant("mma16-x", &c), "mma16-x rejected");
    CHECK(avk_cuda_parse_variant("wgmma", &c) && c.mma && c.wgmma == 1, "wgmma");
    CHECK(avk_cuda_parse_variant("wgmma-ws", &c) && c.mma && c.wgmma == 2, "wgmma-ws");
    CHECK(avk_cuda_parse_variant("mma32", &c) && !c.wgmma, "mma32 is not wgmma");
    CHECK(!avk_cuda_parse_variant("wgmma2", &c), "wgmma2 rejected");
}

static void test_lookup(void)
{
    const size_t h100 = 232448, a100 = 166912, t4 = 65536;
    avk_cuda_config c;
    /* wgmma-ws: 2 consumer warpgroups and the producer's */
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, NULL, 0, 0, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 128, 128) &&
              c.threads == 384 && avk_cuda_config_smem(&c) <= h100,
          "H100 f16 D=128 -> wgmma-ws 128x128, got %s %dx%d", c.variant, c.br, c.bc);
    {
        /* rows that see different key ranges (causal, windows) take the same 2 warpgroups;
         * a block layout runs wgmma-ws too (its producer warp walks the visible tiles) */
        attnvk_device_info info = fake_device("sm_90");
        attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 1024, .seq_kv = 1024, .head_dim = 128,
                            .dtype = ATTNVK_F16, .causal = 1};
        attnvk_kernel_options o = {0};
        CHECK(avk_cuda_select(&info, 9, h100, &p, &o, 0, 1, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 128, 128) &&
                  c.threads == 384,
              "H100 f16 D=128 causal -> wgmma-ws 128x128, got %s %dx%d", c.variant, c.br, c.bc);
        p.causal = 0, p.window = 1, p.window_left = 100, p.window_right = -1;
        CHECK(avk_cuda_select(&info, 9, h100, &p, &o, 0, 1, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 128, 128),
              "H100 f16 D=128 windowed -> wgmma-ws 128x128, got %s %dx%d", c.variant, c.br, c.bc);
        p.window = 0, p.block_sparse = 1, p.block_q = p.block_k = 64, p.layout_batch = p.layout_heads = 1;
        CHECK(avk_cuda_select(&info, 9, h100, &p, &o, 0, 1, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 128, 128) &&
                  c.threads == 384,
              "H100 f16 D=128 block layout -> wgmma-ws 128x128, got %s %dx%d", c.variant, c.br, c.bc);
        p.head_dim = 64; /* its 192-row entry: a block layout takes 2 warpgroups (extra[1]) */
        CHECK(avk_cuda_select(&info, 9, h100, &p, &o, 0, 1, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 128, 128) &&
                  c.threads == 384,
              "H100 f16 D=64 block layout -> wgmma-ws 128x128, got %s %dx%d", c.variant, c.br, c.bc);
        p.block_sparse = 0, p.causal = 1; /* plain causal at D=64 keeps 3 warpgroups (blocks counted from the end) */
        CHECK(avk_cuda_select(&info, 9, h100, &p, &o, 0, 1, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 192, 96) &&
                  c.threads == 512,
              "H100 f16 D=64 causal -> wgmma-ws 192x96, got %s %dx%d", c.variant, c.br, c.bc);
        p.window = 1, p.window_left = 256; /* a window: 2 warpgroups */
        CHECK(avk_cuda_select(&info, 9, h100, &p, &o, 0, 1, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 128, 128) &&
                  c.threads == 384,
              "H100 f16 D=64 causal window -> wgmma-ws 128x128, got %s %dx%d", c.variant, c.br, c.bc);
        p.window = 0, p.window_left = -1;
        p.head_dim = 128, p.block_sparse = 1, p.causal = 0, o.variant = "wgmma";
        CHECK(avk_cuda_select(&info, 9, h100, &p, &o, 0, 1, &c) == ATTNVK_OK && is(&c, "wgmma", 128, 128) &&
                  c.threads == 256,
              "H100 wgmma named for a block layout: 128x128, got %s %dx%d", c.variant, c.br, c.bc);
    }
    CHECK(pick("sm_90", 9, h100, ATTNVK_BF16, 64, 0, NULL, 0, 0, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 192, 96) &&
              c.threads == 512,
          "H100 bf16 D=64 -> wgmma-ws 192x96, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 256, 0, NULL, 0, 0, &c) == ATTNVK_OK && strcmp(c.variant, "wgmma-ws") == 0 &&
              avk_cuda_config_smem(&c) <= h100,
          "H100 D=256 -> wgmma-ws, got %s", c.variant);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 96, 0, NULL, 0, 0, &c) == ATTNVK_OK && is(&c, "mma32-qs", 128, 64),
          "H100 D=96 (not whole 128-byte rows) -> mma32-qs 128x64, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, "wgmma", 64, 0, &c) == ATTNVK_OK && is(&c, "wgmma", 64, 128) &&
              c.threads == 128,
          "wgmma 64 rows = 1 warpgroup, got %s %dx%d %d threads", c.variant, c.br, c.bc, c.threads);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, "wgmma", 96, 0, &c) == ATTNVK_ERROR_INVALID_ARGUMENT,
          "wgmma tile_br 96 rejected");
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 80, 0, "wgmma", 0, 0, &c) == ATTNVK_ERROR_UNSUPPORTED,
          "wgmma D=80 unsupported");
    CHECK(pick("sm_86", 8, 101376, ATTNVK_F16, 128, 0, "wgmma", 0, 0, &c) == ATTNVK_ERROR_UNSUPPORTED &&
              strstr(attnvk_last_error(), "sm_90"),
          "wgmma before Hopper unsupported: %s", attnvk_last_error());
    CHECK(pick("sm_120", 12, 101376, ATTNVK_F16, 128, 0, "wgmma", 0, 0, &c) == ATTNVK_ERROR_UNSUPPORTED,
          "wgmma after Hopper unsupported (sm_100+ has no wgmma)");
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 1, NULL, 0, 0, &c) == ATTNVK_OK && is(&c, "mma16", 16, 32),
          "H100 decode -> mma16 16x32, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_paged(128, ATTNVK_KV_DTYPE, NULL, &c) == ATTNVK_OK && is(&c, "mma-decode", 16, 32) &&
              c.key_warps == 2 && c.kv_stages == 2,
          "H100 paged f16 decode -> mma-decode 16x32 w2s2, got %s %dx%d w%d s%d", c.variant, c.br, c.bc, c.key_warps,
          c.kv_stages);
    CHECK(pick_paged(256, ATTNVK_KV_DTYPE, NULL, &c) == ATTNVK_OK && is(&c, "mma16", 16, 32),
          "H100 paged f16 decode at D=256 (past mma-decode) -> mma16 16x32, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_paged(128, ATTNVK_KV_Q8_0, NULL, &c) == ATTNVK_OK && is(&c, "mma-decode", 16, 32) && c.key_warps == 4,
          "H100 paged q8_0 decode -> mma-decode 16x32 w4, got %s %dx%d w%d", c.variant, c.br, c.bc, c.key_warps);
    /* the bulk-copy marker (attn_decode.h's BULK_ROWS / BULK_TILE, asked for) and the stages' mbarriers in shared memory */
    CHECK(pick_paged(128, ATTNVK_KV_DTYPE, NULL, &c) == ATTNVK_OK && strcmp(avk_cuda_decode_copy(&c, 9, 1), "cp.async") == 0,
          "paged f16 mma-decode: cp.async unless bulk copies are asked for");
    setenv("ATTNVK_CUDA_DEFINES", "-DAVK_DECODE_BULK=1", 1);
    CHECK(pick_paged(128, ATTNVK_KV_DTYPE, NULL, &c) == ATTNVK_OK && strcmp(avk_cuda_decode_copy(&c, 9, 1), "bulk") == 0 &&
              strcmp(avk_cuda_decode_copy(&c, 8, 1), "cp.async") == 0 &&
              avk_cuda_config_smem(&c) == 16 * 136 * 2 + 32 + 2 * 2 * 2 * 32 * 272,
          "paged f16 mma-decode: copy=bulk on sm_90 only, %zu bytes of shared memory", avk_cuda_config_smem(&c));
    CHECK(pick_paged(128, ATTNVK_KV_Q8_0, NULL, &c) == ATTNVK_OK && strcmp(avk_cuda_decode_copy(&c, 9, 1), "cp.async") == 0 &&
              strcmp(avk_cuda_decode_copy(&c, 9, 0), "bulk") == 0,
          "q8_0 mma-decode: 136-byte rows copy in bulk only as a contiguous tile");
    unsetenv("ATTNVK_CUDA_DEFINES");
    /* paged q8_0 / q4_0 at D=128: mma-decode builds with AVK_KV_PAGED (rows in 16-byte aligned
     * slots, Q in a stage), sized for either layout; q8_0 keeps 3 CTAs an H100 SM, as contiguous */
    {
        static const struct {
            attnvk_kv_format kv;
            size_t slots, as_stored; /* attn_decode.h: bars + words + slots (Q_IN_RING); Q + bars + rows as stored */
        } paged[] = {{ATTNVK_KV_Q8_0, 64 + 64 + 4 * 2 * 2 * 32 * 144, 16 * 136 * 2 + 64 + 4 * 2 * 2 * 32 * 136},
                     {ATTNVK_KV_Q4_0, 64 + 64 + 4 * 2 * 2 * 32 * 80, 16 * 136 * 2 + 64 + 4 * 2 * 2 * 32 * 72}};
        for (size_t i = 0; i < sizeof paged / sizeof *paged; ++i) {
            CHECK(pick_paged(128, paged[i].kv, NULL, &c) == ATTNVK_OK && c.key_warps == 4 && c.kv_stages == 2 && c.paged,
                  "paged %s: mma-decode w4s2, paged", attnvk_kv_format_name(paged[i].kv));
            const size_t want = paged[i].slots > paged[i].as_stored ? paged[i].slots : paged[i].as_stored;
            CHECK(avk_cuda_config_smem(&c) == want, "paged %s mma-decode: %zu bytes of shared memory, want %zu",
                  attnvk_kv_format_name(paged[i].kv), avk_cuda_config_smem(&c), want);
            char opt[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN];
            const char *ov[AVK_CUDA_MAX_OPTIONS];
            int n = avk_cuda_build_options(&c, "sm_90a", opt, ov), flagged = 0, sized = 0;
            for (int k = 0; k < n; ++k) {
                flagged |= strcmp(ov[k], "-DAVK_KV_PAGED=1") == 0;
                sized |= strcmp(ov[k], "-DAVK_PAGE_SIZE=16") == 0;
            }
            c.paged = 0;
            int m = avk_cuda_build_options(&c, "sm_90a", opt, ov), unflagged = 1;
            for (int k = 0; k < m; ++k) unflagged &= strncmp(ov[k], "-DAVK_KV_PAGED", 14) != 0 && strncmp(ov[k], "-DAVK_PAGE_SIZE", 15) != 0;
            CHECK(flagged && sized && unflagged, "-DAVK_KV_PAGED=1 -DAVK_PAGE_SIZE=16 on paged mma-decode builds only");
        }
        CHECK(pick_paged(128, ATTNVK_KV_Q8_0, NULL, &c) == ATTNVK_OK && avk_cuda_resident(&c, 233472) == 3,
              "paged q8_0 mma-decode: 3 CTAs an H100 SM, got %d", avk_cuda_resident(&c, 233472));
    }
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 1, NULL, 0, 0, &c) == ATTNVK_OK && !avk_cuda_decode_copy(&c, 9, 0),
          "mma16 has no copy marker");
    CHECK(pick_paged(128, ATTNVK_KV_DTYPE, "mma16", &c) == ATTNVK_OK && is(&c, "mma16", 16, 32),
          "a named mma16 keeps its kernel on paged decode, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F32, 128, 0, NULL, 0, 0, &c) == ATTNVK_OK && is(&c, "tiled", 128, 16) &&
              c.threads == 256 && c.lanes_per_row == 8 && avk_cuda_config_smem(&c) == 2 * 2 * 16 * 128 * 4,
          "f32 -> tiled 128x16, 256 threads, 8 lanes per row, got %s %dx%d %d %d", c.variant, c.br, c.bc, c.threads,
          c.lanes_per_row);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F32, 80, 0, NULL, 0, 0, &c) == ATTNVK_OK && strcmp(c.variant, "tiled") == 0,
          "f32 D=80 -> tiled, got %s", c.variant);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F32, 256, 1, NULL, 0, 0, &c) == ATTNVK_OK && is(&c, "tiled", 16, 32),
          "f32 decode -> tiled 16x32, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F32, 64, 0, "simt", 0, 0, &c) == ATTNVK_OK && !c.tiled && !c.mma,
          "simt by name, got %s", c.variant);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 96, 0, "tiled", 0, 0, &c) == ATTNVK_OK && is(&c, "tiled", 64, 16) &&
              c.lanes_per_row == 4,
          "tiled by name takes the table's tiles, got %s %dx%d %d", c.variant, c.br, c.bc, c.lanes_per_row);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F32, 128, 0, "tiled", 100, 0, &c) == ATTNVK_ERROR_INVALID_ARGUMENT,
          "tiled tile_br 100 rejected (not a multiple of threads / lanes per row)");
    CHECK(pick("sm_86", 8, 101376, ATTNVK_F16, 128, 0, NULL, 0, 0, &c) == ATTNVK_OK && c.mma,
          "sm_86 -> tensor cores, got %s", c.variant);
    CHECK(pick("sm_75", 7, t4, ATTNVK_F16, 128, 0, NULL, 0, 0, &c) == ATTNVK_OK && strcmp(c.variant, "tiled") == 0,
          "sm_75 f16 -> tiled f32 arithmetic (no mma.sync m16n8k16 path), got %s", c.variant);
    CHECK(pick("sm_75", 7, t4, ATTNVK_F32, 256, 0, NULL, 0, 0, &c) == ATTNVK_OK && avk_cuda_config_smem(&c) <= t4,
          "sm_75 D=256 fits 64 KiB, got %s %dx%d (%zu bytes)", c.variant, c.br, c.bc, avk_cuda_config_smem(&c));
    CHECK(pick("sm_120", 12, 101376, ATTNVK_F16, 64, 0, NULL, 0, 0, &c) == ATTNVK_OK && c.mma,
          "newer NVIDIA architectures get the mma path, got %s", c.variant);
    /* the options override the table */
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, "mma16", 0, 0, &c) == ATTNVK_OK && is(&c, "mma16", 64, 64) &&
              c.threads == 128,
          "variant override, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 96, 0, NULL, 64, 32, &c) == ATTNVK_OK && is(&c, "mma32-qs", 64, 32),
          "tile override, got %dx%d", c.br, c.bc);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, "mma32", 48, 0, &c) == ATTNVK_ERROR_INVALID_ARGUMENT,
          "tile_br 48 rejected for 32-row warps");
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 96, 0, NULL, 0, 24, &c) == ATTNVK_ERROR_INVALID_ARGUMENT,
          "tile_bc 24 rejected");
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, NULL, 0, 96, &c) == ATTNVK_OK && is(&c, "wgmma-ws", 128, 96),
          "wgmma tile_bc 96 taken (16-bit), got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, NULL, 0, 80, &c) == ATTNVK_ERROR_INVALID_ARGUMENT,
          "wgmma tile_bc 80 rejected");
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 128, 0, "flash3", 0, 0, &c) == ATTNVK_ERROR_INVALID_ARGUMENT &&
              strstr(attnvk_last_error(), "flash3"),
          "unknown variant named in the error: %s", attnvk_last_error());
    CHECK(pick("sm_90", 9, h100, ATTNVK_F32, 128, 0, "mma16", 0, 0, &c) == ATTNVK_ERROR_UNSUPPORTED,
          "mma with f32 unsupported");
    CHECK(pick("sm_75", 7, t4, ATTNVK_F16, 128, 0, "mma16", 0, 0, &c) == ATTNVK_ERROR_UNSUPPORTED,
          "mma before sm_80 unsupported");
    CHECK(pick("sm_90", 9, h100, ATTNVK_F16, 48, 0, NULL, 0, 0, &c) == ATTNVK_ERROR_UNSUPPORTED, "D=48 unsupported");
    CHECK(pick("sm_80", 8, a100, ATTNVK_F16, 256, 0, "mma16", 256, 256, &c) == ATTNVK_ERROR_UNSUPPORTED &&
              strstr(attnvk_last_error(), "shared memory"),
          "too much shared memory: %s", attnvk_last_error());
}

/* issue #13's head dims: what the H100 (and an A100) picks, and what is refused */
static attnvk_status pick_dims(const char *arch, int cc, size_t smem, attnvk_dtype dt, int dk, int dv, int heads,
                               int kv_heads, int seq_q, int causal, const char *variant, avk_cuda_config *c)
{
    attnvk_device_info info = fake_device(arch);
    attnvk_problem p = {.batch = 2, .heads = heads, .kv_heads = kv_heads, .seq_q = seq_q, .seq_kv = 4096,
                        .head_dim = dk, .head_dim_v = dv, .dtype = dt, .causal = causal};
    attnvk_kernel_options o = {.variant = variant};
    const int decode = seq_q <= 16, pack = decode ? heads / kv_heads : 1;
    return avk_cuda_select(&info, cc, smem, &p, &o, decode, pack, c);
}

static void test_head_dims(void)
{
    const size_t h100 = 232448, a100 = 166912;
    avk_cuda_config c;
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 192, 128, 128, 128, 4096, 1, NULL, &c) == ATTNVK_OK &&
              is(&c, "wgmma-ws", 128, 128) && c.head_dim_v == 128 && avk_cuda_config_smem(&c) <= h100,
          "H100 MLA prefill 192/128 -> wgmma-ws 128x128, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_BF16, 192, 192, 8, 8, 4096, 0, NULL, &c) == ATTNVK_OK &&
              is(&c, "wgmma-ws", 128, 64) && avk_cuda_config_smem(&c) <= h100,
          "H100 D=192 -> wgmma-ws 128x64 (128x128 does not fit), got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 576, 512, 128, 1, 1, 0, NULL, &c) == ATTNVK_OK &&
              is(&c, "mma16-qs", 64, 16) && c.col_warps == 2 && c.threads == 256 && avk_cuda_config_smem(&c) <= h100,
          "H100 MLA decode 576/512 (128 packed rows) -> mma16-qs 64x16, 2 warps a row group, got %s %dx%d %d",
          c.variant, c.br, c.bc, c.col_warps);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 576, 512, 8, 2, 1, 0, NULL, &c) == ATTNVK_OK &&
              is(&c, "mma16-qs", 16, 16) && c.col_warps == 4 && c.threads == 128,
          "576/512 decode of 4 packed rows -> mma16-qs 16x16, 4 warps, got %s %dx%d %d", c.variant, c.br, c.bc,
          c.col_warps);
    CHECK(pick_dims("sm_80", 8, a100, ATTNVK_BF16, 576, 512, 2, 1, 40, 1, NULL, &c) == ATTNVK_OK &&
              is(&c, "mma16-qs", 64, 16) && avk_cuda_config_smem(&c) <= a100,
          "A100 576/512 prefill fits, got %s %dx%d (%zu bytes)", c.variant, c.br, c.bc, avk_cuda_config_smem(&c));
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 512, 512, 8, 8, 4096, 0, NULL, &c) == ATTNVK_OK &&
              is(&c, "mma16-qs", 64, 16) && c.col_warps == 2,
          "H100 D=512 prefill -> mma16-qs 64x16 over 2 warps, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 40, 40, 8, 8, 4096, 0, NULL, &c) == ATTNVK_OK && is(&c, "mma32", 128, 64),
          "H100 D=40 -> mma32 (zero-padded k-steps), got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 72, 72, 8, 8, 4096, 0, NULL, &c) == ATTNVK_OK &&
              is(&c, "mma32-qs", 128, 64),
          "H100 D=72 -> mma32-qs, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 112, 112, 8, 8, 4096, 0, NULL, &c) == ATTNVK_OK &&
              is(&c, "mma32-qs", 128, 32),
          "H100 D=112 -> mma32-qs 128x32, got %s %dx%d", c.variant, c.br, c.bc);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F32, 72, 72, 8, 8, 4096, 0, NULL, &c) == ATTNVK_OK && c.tiled &&
              c.lanes_per_row == 2,
          "f32 D=72 -> tiled, 2 lanes a row (72/4 = 18 float4 columns), got %s %d", c.variant, c.lanes_per_row);
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F32, 576, 512, 4, 4, 1, 0, NULL, &c) == ATTNVK_OK && c.tiled &&
              c.lanes_per_row == 16,
          "f32 576/512 decode -> tiled, 16 lanes, got %s %d", c.variant, c.lanes_per_row);
    /* named bodies that cannot take the dims are refused with the reason, never run */
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 576, 512, 8, 8, 4096, 0, "wgmma", &c) == ATTNVK_ERROR_UNSUPPORTED,
          "wgmma 576/512 refused");
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 72, 72, 8, 8, 4096, 0, "wgmma", &c) == ATTNVK_ERROR_UNSUPPORTED,
          "wgmma D=72 refused");
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 192, 128, 8, 2, 1, 0, "mma-decode", &c) == ATTNVK_ERROR_UNSUPPORTED,
          "mma-decode 192/128 refused");
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 576, 576, 8, 8, 64, 0, NULL, &c) == ATTNVK_ERROR_UNSUPPORTED &&
              strstr(attnvk_last_error(), "576/512") && !strchr(attnvk_last_error(), '\n'),
          "D=576 alone refused in one line: %s", attnvk_last_error());
    CHECK(pick_dims("sm_90", 9, h100, ATTNVK_F16, 256, 128, 8, 8, 64, 0, NULL, &c) == ATTNVK_ERROR_UNSUPPORTED,
          "256/128 refused");
    /* options carry Dv and the warps a row group */
    pick_dims("sm_90", 9, h100, ATTNVK_F16, 576, 512, 128, 1, 1, 0, NULL, &c);
    char s[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN];
    const char *o[AVK_CUDA_MAX_OPTIONS];
    int n = avk_cuda_build_options(&c, "sm_90a", s, o), dv = 0, wn = 0;
    for (int i = 0; i < n; ++i) {
        dv |= strcmp(o[i], "-DAVK_DV=512") == 0;
        wn |= strcmp(o[i], "-DAVK_WN=2") == 0;
    }
    CHECK(dv && wn, "576/512 builds with -DAVK_DV=512 -DAVK_WN=2");
}

static void test_options_and_keys(void)
{
    avk_cuda_config c;
    pick("sm_90", 9, 232448, ATTNVK_F16, 128, 0, NULL, 0, 0, &c);
    char s[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN];
    const char *o[AVK_CUDA_MAX_OPTIONS];
    int n = avk_cuda_build_options(&c, "sm_90a", s, o);
    int arch = 0, dim = 0, br = 0;
    for (int i = 0; i < n; ++i) {
        arch |= strcmp(o[i], "--gpu-architecture=sm_90a") == 0;
        dim |= strcmp(o[i], "-DAVK_D=128") == 0;
        br |= strcmp(o[i], "-DAVK_BR=128") == 0;
    }
    CHECK(arch && dim && br, "NVRTC options carry arch, D and tiles");

    char name[16];
    avk_cuda_arch_name(9, 0, name, sizeof name);
    CHECK(strcmp(name, "sm_90a") == 0, "Hopper compiles for sm_90a, got %s", name);
    avk_cuda_arch_name(8, 6, name, sizeof name);
    CHECK(strcmp(name, "sm_86") == 0, "sm_86, got %s", name);
    avk_cuda_arch_name(12, 0, name, sizeof name);
    CHECK(strcmp(name, "sm_120") == 0, "sm_120, got %s", name);

    uint64_t k0 = avk_cuda_cache_key(&c, "sm_90a", 13000, 13000);
    CHECK(k0 == avk_cuda_cache_key(&c, "sm_90a", 13000, 13000), "cache key is stable");
    CHECK(k0 != avk_cuda_cache_key(&c, "sm_90a", 12080, 13000), "driver version in the key");
    CHECK(k0 != avk_cuda_cache_key(&c, "sm_90a", 13000, 12080), "NVRTC version in the key");
    CHECK(k0 != avk_cuda_cache_key(&c, "sm_80", 13000, 13000), "architecture in the key");
    avk_cuda_config d = c;
    d.bc = 32;
    CHECK(k0 != avk_cuda_cache_key(&d, "sm_90a", 13000, 13000), "tiles in the key");
    d = c;
    d.dtype = ATTNVK_BF16;
    CHECK(k0 != avk_cuda_cache_key(&d, "sm_90a", 13000, 13000), "dtype in the key");
    d = c;
    d.split = 1;
    CHECK(k0 != avk_cuda_cache_key(&d, "sm_90a", 13000, 13000), "split-KV in the key");
    d = c;
    d.tiled = 1;
    d.lanes_per_row = 4;
    CHECK(k0 != avk_cuda_cache_key(&d, "sm_90a", 13000, 13000), "tiled in the key");
    d = c;
    d.wgmma = !d.wgmma;
    CHECK(k0 != avk_cuda_cache_key(&d, "sm_90a", 13000, 13000), "wgmma in the key");
}

/* A cubin compiled once is served from the disk cache the second time. */
static void test_disk_cache(void)
{
    if (!avk_nvrtc_load()) {
        printf("skip disk cache: %s\n", attnvk_last_error());
        return;
    }
    char dir[] = "/tmp/attnvk-cuda-cache-XXXXXX";
    if (!mkdtemp(dir)) {
        EXPECT(0, "mkdtemp failed");
        return;
    }
    setenv("ATTNVK_CACHE_DIR", dir, 1);
    avk_cuda_config c;
    pick("sm_90", 9, 232448, ATTNVK_F16, 32, 1, "mma16", 0, 0, &c);
    void *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int hit_a = -1, hit_b = -1;
    attnvk_status sa = avk_cuda_compile(&c, "sm_90a", 13000, NULL, &a, &na, &hit_a, NULL, 0);
    attnvk_status sb = avk_cuda_compile(&c, "sm_90a", 13000, NULL, &b, &nb, &hit_b, NULL, 0);
    CHECK(sa == ATTNVK_OK && sb == ATTNVK_OK && hit_a == 0 && hit_b == 1 && na == nb && na > 0 && !memcmp(a, b, na),
          "compile then cache hit (%d %d, hits %d %d): %s", sa, sb, hit_a, hit_b, attnvk_last_error());
    free(a);
    free(b);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    unsetenv("ATTNVK_CACHE_DIR");
}

static void test_backend_status(void)
{
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        EXPECT(0, "context: %s", attnvk_last_error());
        return;
    }
    const char *reason = NULL;
    attnvk_status s = attnvk_api_status(ctx, ATTNVK_API_CUDA, &reason);
    if (s != ATTNVK_OK) {
        printf("cuda unavailable: %s\n", reason);
        CHECK(s == ATTNVK_ERROR_UNAVAILABLE && reason && *reason, "unavailable with a reason");
    } else {
        int idx[4];
        int n = attnvk_device_select(ctx, "cuda", idx, 4);
        CHECK(n > 0, "cuda devices listed");
        for (int i = 0; i < n; ++i) {
            const attnvk_device_info *d = attnvk_device_info_at(ctx, idx[i]);
            printf("cuda device %d: %s %s, %d SMs, default %s\n", i, d->name, d->architecture, d->compute_units,
                   d->default_variant);
            CHECK(d->vendor_id == 0x10de && strncmp(d->architecture, "sm_", 3) == 0 && d->default_variant[0] &&
                      d->subgroup_sizes[0] == 32 && d->memory_bytes > 0,
                  "device %d described", i);
        }
    }
    attnvk_context_destroy(ctx);
}

int main(void)
{
    test_variants();
    test_lookup();
    test_head_dims();
    test_options_and_keys();
    test_disk_cache();
    test_backend_status();
    return avk_test_finish(passed, 0);
}
