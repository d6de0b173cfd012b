/* Vulkan backend against the float64 CPU reference: the shared feature matrix
 * for every variant the device runs, issue #13's head dims (Dk != Dv, 40, 72,
 * 512), split-KV on/off, tile overrides, LSE,
 * q_begin/q_count, the deliberately wrong kernel, error statuses and the
 * on-disk pipeline cache, coopmat-khr's host path over emulated matrices
 * (with coopmat-emu). --quick runs a subset (used under validation);
 * --only VARIANT runs one variant's cases (GPU sessions); --skip VARIANT
 * (repeatable) leaves one out, so ctest can run the slow emulations beside
 * the rest; --dtype NAME keeps one dtype (the decode body under ASan);
 * --profile-quick runs the ATTNVK_VK_PROFILE subset (vk_profile_quick.c). */
#include "core/score_cases.h"
#include "test_util.h"
#include "vk_profile_quick.h"
#include "vk_test_cases.h"
#include "vulkan/vk_validation.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

typedef struct variant_dtype {
    const char *variant;
    attnvk_dtype dtype;
} variant_dtype;

static const variant_dtype all_variants[] = {
    {"scalar", ATTNVK_F32}, {"scalar", ATTNVK_F16}, {"scalar", ATTNVK_BF16},
    {"f16", ATTNVK_F16},    {"decode", ATTNVK_F32}, {"decode", ATTNVK_F16}, {"decode", ATTNVK_BF16},
    {"coopmat-nv", ATTNVK_F16}, {"coopmat-khr", ATTNVK_F16},
    {"coopmat-emu", ATTNVK_F16}, /* the coopmat algorithm with emulated matrices: slow, D <= 64 only */
    {"coopmat-nv-rs", ATTNVK_F16},
    {"coopmat-rs-emu", ATTNVK_F16}, /* register softmax with emulated matrices: every feature */
    {"decode-nv-rs", ATTNVK_F16},
    {"decode-rs-emu", ATTNVK_F16}, /* the matrix decode body with emulated matrices: every feature */
    {"coopmat-khr-rs", ATTNVK_F16}, /* coopmat-nv-rs and decode-nv-rs rewritten to KHR (devices with KHR matrices) */
    {"decode-khr-rs", ATTNVK_F16},
};

static int is_emulation(const variant_dtype *vd) { return strcmp(vd->variant, "coopmat-emu") == 0; }
static int is_decode_mma(const variant_dtype *vd) { return strncmp(vd->variant, "decode-", 7) == 0; }
static int is_rs(const variant_dtype *vd) { return strstr(vd->variant, "-rs") != NULL && !is_decode_mma(vd); }
/* the emulations of the register-softmax layouts: slow, every feature at D <= 64 (more where noted) */
static int is_rs_emulation(const variant_dtype *vd)
{
    return strcmp(vd->variant, "coopmat-rs-emu") == 0 || strcmp(vd->variant, "decode-rs-emu") == 0;
}

static attnvk_problem shape(int b, int h, int hkv, int nq, int nk, int d, int causal, attnvk_dtype dt, int bshd)
{
    attnvk_problem p = {.batch = b, .heads = h, .kv_heads = hkv, .seq_q = nq, .seq_kv = nk, .head_dim = d,
                        .causal = causal, .dtype = dt, .layout = bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD};
    return p;
}

static int runs_variant(attnvk_device *dev, const variant_dtype *vd)
{
    attnvk_problem p = shape(1, 1, 1, 64, 64, 64, 0, vd->dtype, 0);
    attnvk_kernel_options o = {.variant = vd->variant};
    attnvk_kernel *k = NULL;
    attnvk_status s = attnvk_kernel_prepare(dev, &p, &o, &k, NULL);
    attnvk_kernel_destroy(k);
    if (s != ATTNVK_OK) printf("skip variant %s %s: %s\n", vd->variant, attnvk_dtype_name(vd->dtype), attnvk_last_error());
    return s == ATTNVK_OK;
}

static void feature_matrix(vk_tally *t, attnvk_device *dev, const variant_dtype *vd, int quick)
{
    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(vd->dtype, cases, labels, 64);
    attnvk_kernel_options o = {.variant = vd->variant};
    for (int i = 0; i < n; ++i) {
        if (quick && i % 3) continue;
        if (is_emulation(vd) && (cases[i].head_dim > 64 || i % 2)) continue; /* slow emulation: a subset */
        if (is_rs_emulation(vd) && quick && cases[i].head_dim > 128) continue;
        if (vd->dtype == ATTNVK_BF16 && i % 2) continue;                     /* storage-only difference */
        char label[64];
        snprintf(label, sizeof label, "%s/%s %s", vd->variant, attnvk_dtype_name(vd->dtype), labels[i]);
        vk_case(t, dev, &cases[i], &o, label, 0, 1);
    }
}

/* Split-KV off, forced and automatic, on decode and prefill shapes. */
static void split_kv_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd)
{
    /* the emulations stay under ~40 key tiles per workgroup: lavapipe stops every loop
     * of an invocation after 65535 iterations in all (its infinite-loop guard), and the
     * emulated matrices' loops use that up on longer ones */
    attnvk_problem decode = is_emulation(vd) || is_rs_emulation(vd) ? shape(1, 4, 2, 1, 600, 64, 0, vd->dtype, 0)
                                                                    : shape(1, 4, 2, 1, 2049, 128, 0, vd->dtype, 0);
    attnvk_problem decode_causal = shape(2, 4, 1, 3, 700, 64, 1, vd->dtype, 1);
    attnvk_problem prefill = shape(1, 2, 2, 40, 300, 64, 1, vd->dtype, 0);
    const int splits[3] = {1, 3, 0};
    for (int i = 0; i < 3; ++i) {
        if (is_emulation(vd) && i == 2) continue;
        attnvk_kernel_options o = {.variant = vd->variant, .split_kv = splits[i], .write_lse = 1};
        char label[64];
        snprintf(label, sizeof label, "%s split_kv=%d decode", vd->variant, splits[i]);
        vk_case(t, dev, &decode, &o, label, 1, 1);
        snprintf(label, sizeof label, "%s split_kv=%d decode causal", vd->variant, splits[i]);
        vk_case(t, dev, &decode_causal, &o, label, 1, 1);
        snprintf(label, sizeof label, "%s split_kv=%d prefill", vd->variant, splits[i]);
        vk_case(t, dev, &prefill, &o, label, 1, 1);
    }
}

static void tile_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd)
{
    static const int scalar_tiles[][2] = {{8, 16}, {32, 32}, {4, 8}};
    static const int decode_tiles[][2] = {{8, 16}, {16, 32}, {4, 8}}; /* Q and O of its rows live in registers */
    static const int coopmat_tiles[][2] = {{64, 16}, {64, 64}, {128, 32}};
    static const int emu_tiles[][2] = {{16, 8}, {16, 32}, {16, 24}};
    static const int rs_emu_tiles[][2] = {{16, 8}, {32, 16}, {16, 24}}; /* 32 rows: two row tiles per subgroup */
    static const int rs_tiles[][2] = {{128, 16}, {128, 64}, {256, 32}}; /* NVIDIA's table: 8 subgroups */
    /* matrix decode (Bc keys per step): 1, 2 and 4 row groups, steps that split over the key
     * groups of 4 subgroups and of NVIDIA's 8 (which a named variant gets first) */
    static const int decode_mma_tiles[][2] = {{16, 128}, {32, 64}, {64, 32}};
    static const int decode_emu_tiles[][2] = {{8, 32}, {16, 16}, {32, 8}};
    int coopmat = strncmp(vd->variant, "coopmat", 7) == 0;
    for (int i = 0; i < 3; ++i) {
        if (is_emulation(vd) && i != 1) continue;
        const int *tile = strcmp(vd->variant, "decode-rs-emu") == 0 ? decode_emu_tiles[i]
                          : is_decode_mma(vd)                   ? decode_mma_tiles[i]
                          : is_rs_emulation(vd) ? rs_emu_tiles[i]
                          : is_rs(vd)         ? rs_tiles[i]
                          : is_emulation(vd)  ? emu_tiles[i]
                          : coopmat           ? coopmat_tiles[i]
                          : strcmp(vd->variant, "decode") == 0 ? decode_tiles[i]
                                              : scalar_tiles[i];
        attnvk_kernel_options o = {.variant = vd->variant, .tile_br = tile[0], .tile_bc = tile[1]};
        attnvk_problem p = shape(1, 2, 1, 75, 133, 64, i == 1, vd->dtype, i == 2);
        char label[64];
        snprintf(label, sizeof label, "%s tile %dx%d", vd->variant, o.tile_br, o.tile_bc);
        vk_case(t, dev, &p, &o, label, 0, 1);
    }
}

static void special_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd)
{
    char label[64];
    attnvk_kernel_options o = {.variant = vd->variant, .write_lse = 1};
    attnvk_problem lse_p = shape(1, 2, 1, 70, 40, 64, 1, vd->dtype, 0); /* causal Nq > Nk: rows with -inf LSE */
    snprintf(label, sizeof label, "%s write_lse empty rows", vd->variant);
    vk_case(t, dev, &lse_p, &o, label, 1, 1);
    attnvk_problem rows_p = shape(2, 3, 1, 90, 110, 64, 1, vd->dtype, 1);
    attnvk_kernel_options plain = {.variant = vd->variant};
    snprintf(label, sizeof label, "%s q_begin/q_count", vd->variant);
    vk_case_row_ranges(t, dev, &rows_p, &plain, label);
    attnvk_kernel_options wrong = {.variant = vd->variant, .test_flags = ATTNVK_TEST_SKIP_LAST_KV_TILE};
    attnvk_problem wrong_p = shape(1, 2, 2, 64, 200, 64, 0, vd->dtype, 0);
    snprintf(label, sizeof label, "%s SKIP_LAST_KV_TILE", vd->variant);
    vk_case(t, dev, &wrong_p, &wrong, label, 0, 0);
    /* a large scale spreads the scores so the running max keeps growing: rescaling paths */
    attnvk_problem spread = shape(1, 2, 2, 50, 300, 64, 0, vd->dtype, 1);
    spread.scale = 2.0f;
    snprintf(label, sizeof label, "%s scale=2 (max rescales)", vd->variant);
    vk_case(t, dev, &spread, &o, label, 1, 1);
}

/* The KV-cache cases every API runs (tests/common/test_cache.c): GQA packing,
 * paged and ragged caches, quantized K/V (refused until a body decodes them),
 * once as planned and once with split-KV forced. */
static void cache_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd, int quick)
{
    avk_cache_case cc[32];
    int n = avk_test_cache_cases(vd->dtype, cc, 32);
    static const int splits[] = {0, 3, 0};
    /* pass 2: the decode tile of the NVIDIA/AMD tables (4x64), packed rows spread over row blocks */
    int scalar_body = strcmp(vd->variant, "scalar") == 0 || strcmp(vd->variant, "f16") == 0 ||
                      strcmp(vd->variant, "decode") == 0;
    for (int sp = 0; sp < (quick ? 1 : scalar_body ? 3 : 2); ++sp)
        for (int i = 0; i < n; ++i) {
            /* the emulated matrices run for minutes on lavapipe at D > 64; decode-rs-emu takes the
             * quantized caches its direct K/V operands serve (D a multiple of 128, <= 16 packed rows) */
            const attnvk_problem *cp = &cc[i].p;
            int direct = !strcmp(vd->variant, "decode-rs-emu") && cp->kv_format != ATTNVK_KV_DTYPE && cp->head_dim % 128 == 0 &&
                         (long)(cp->heads / cp->kv_heads) * cp->seq_q <= 16;
            if ((is_emulation(vd) || is_rs_emulation(vd)) && cp->head_dim > 64 && !direct) continue;
            attnvk_kernel_options o = {.variant = vd->variant, .split_kv = splits[sp]};
            if (sp == 2) o.tile_br = 4, o.tile_bc = 64;
            /* quantized K/V runs on the scalar variant only; the emulated bodies take D <= 64 only */
            int quant_body = strcmp(vd->variant, "scalar") == 0 || strcmp(vd->variant, "decode") == 0 || is_decode_mma(vd);
            int may_refuse = (cc[i].p.kv_format != ATTNVK_KV_DTYPE && !quant_body) ||
                             is_emulation(vd) || is_rs_emulation(vd) || sp == 2; /* 4x64 outgrows 32 KiB at D >= 128 */
            avk_test_run_cache_case(dev, &cc[i], &o, t->seed + 7000 + (uint64_t)(sp * 100 + i), may_refuse) ? ++t->passed
                                                                                                     : ++t->failed;
        }
}

/* The score cases of `attnvk check` (softcap, windows, ALiBi, sinks, masks,
 * top-left) through this variant by name, once as planned and once with
 * split-KV forced (3, or the case's own count; the sink then joins in the merge). The emulations run the
 * plan only (it splits their decode case already) and four of the cases (decode-rs-emu five): they are slow. */
static int emulated_score_case(const char *label, const char *variant)
{
    static const char *const kept[] = {"mask per head f16", "top-left Nq<Nk window", "decode window sinks",
                                       "all of them"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; ++i)
        if (!strcmp(label, kept[i])) return 1;
    /* a window inside the cache, split from its first tile: decode-nv-rs plans with its own
     * step; the prefill emulations share flash_work with the bodies that run it unemulated */
    return !strcmp(label, "decode window inside") && !strcmp(variant, "decode-rs-emu");
}

/* A last pass (register-softmax prefill bodies): the cases with a softcap again, as planned, under
 * ATTNVK_VK_SOFTCAP_IN_Q=1 (Q staged with the softcap's input scale: the A/B). */
static void score_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd, int quick)
{
    avk_score_case sc[AVK_SCORE_CASES_MAX];
    int n = avk_score_cases(vd->dtype, sc, AVK_SCORE_CASES_MAX);
    int slow = is_emulation(vd) || is_rs_emulation(vd);
    const int passes = quick || slow ? 1 : 2;
    for (int sp = 0; sp < passes + (is_rs(vd) && !quick); ++sp)
        for (int i = 0; i < n; ++i) {
            /* minutes on lavapipe: the emulations take the cases that together reach every
             * feature and path (f16 per-head masks, top-left with a window, decode, all at once) */
            if (slow && !emulated_score_case(sc[i].label, vd->variant)) continue;
            const int in_q = sp == passes;
            if (in_q && sc[i].p.softcap <= 0.0f) continue;
            if (in_q) setenv("ATTNVK_VK_SOFTCAP_IN_Q", "1", 1);
            attnvk_kernel_options o = {.variant = vd->variant,
                                       .split_kv = sp && !in_q ? (sc[i].split_kv ? sc[i].split_kv : 3) : 0};
            avk_score_result r;
            attnvk_status s = avk_score_case_run(dev, &sc[i], &o, t->seed + 9000 + (uint64_t)(sp * 100 + i), &r);
            unsetenv("ATTNVK_VK_SOFTCAP_IN_Q");
            int ok = s == ATTNVK_OK && r.check.passed;
            if (s == ATTNVK_OK)
                printf("%s %s scores %s%s: split %d rel_l2 %.2e nonfinite %zu\n", ok ? "ok  " : "FAIL", vd->variant,
                       r.shape, in_q ? " (softcap in Q)" : "", r.info.split_kv, r.check.rel_l2, r.check.nonfinite);
            else printf("FAIL %s scores %s: %s\n", vd->variant, r.shape, r.message);
            ok ? ++t->passed : ++t->failed;
        }
    /* the register-softmax prefill with one K buffer stages an f16 mask whose rows are whole 16-byte
     * chunks in it (AVK_MASK_SHARED; the H100's D=128 row): per head over three row blocks and 17 key
     * tiles, and shared by the heads with ALiBi (bf16 left to f16's) */
    if (is_rs(vd) && !quick && vd->dtype == ATTNVK_F16) {
        avk_score_case staged[2] = {sc[0], avk_score_case_shared_mask(vd->dtype)};
        for (int i = 0; i < n; ++i)
            if (!strcmp(sc[i].label, "mask f16 staged")) staged[0] = sc[i];
        staged[1].p.seq_kv = 232;
        setenv("ATTNVK_VK_KV_STAGES", "1", 1);
        for (int i = 0; i < 2; ++i) {
            attnvk_kernel_options o = {.variant = vd->variant};
            avk_score_result r;
            attnvk_status s = avk_score_case_run(dev, &staged[i], &o, t->seed + 9400 + (uint64_t)i, &r);
            int ok = s == ATTNVK_OK && r.check.passed && strstr(r.info.params, "mask_shared=1") != NULL;
            printf("%s %s scores %s (one K buffer, mask staged): %s rel_l2 %.2e\n", ok ? "ok  " : "FAIL", vd->variant,
                   r.shape, s == ATTNVK_OK ? r.info.params : r.message, s == ATTNVK_OK ? r.check.rel_l2 : 0.0);
            ok ? ++t->passed : ++t->failed;
        }
        unsetenv("ATTNVK_VK_KV_STAGES");
    }
    /* a mask the heads share over several row blocks, the grid walked as launched and heads first
     * (the default; ATTNVK_MASK_HEADS_FIRST=0 walks it as launched): through the prefill bodies (the decode
     * bodies share flash_work; their pipelines take minutes on lavapipe), bf16 left to f16's */
    const int prefill_body = !is_emulation(vd) && !is_decode_mma(vd) && strcmp(vd->variant, "decode") != 0;
    for (int heads_first = 0; heads_first < 2 && !quick && prefill_body && vd->dtype != ATTNVK_BF16; ++heads_first) {
        const avk_score_case shared = avk_score_case_shared_mask(vd->dtype);
        if (!heads_first) setenv("ATTNVK_MASK_HEADS_FIRST", "0", 1);
        attnvk_kernel_options o = {.variant = vd->variant};
        avk_score_result r;
        attnvk_status s = avk_score_case_run(dev, &shared, &o, t->seed + 9500 + (uint64_t)heads_first, &r);
        unsetenv("ATTNVK_MASK_HEADS_FIRST");
        int ok = s == ATTNVK_OK && r.check.passed;
        printf("%s %s scores %s%s: %s rel_l2 %.2e\n", ok ? "ok  " : "FAIL", vd->variant, r.shape,
               heads_first ? " (heads first)" : "", s == ATTNVK_OK ? "ran" : r.message, s == ATTNVK_OK ? r.check.rel_l2 : 0.0);
        ok ? ++t->passed : ++t->failed;
    }
}

/* Issue #13's head dims through this variant by name: Dk != Dv (DeepSeek
 * MLA's 192/128 and 576/512; split-KV forced where the partials and the merge
 * carry Dv) and the equal dims 40, 72 and 512. Each shape is a pipeline of its
 * own, so each variant takes the few that reach its code: the scalar bodies
 * the widest rows (shared memory at 576/512 and 512), the emulations one
 * pipeline each (a cold lavapipe compile costs them 10-20 s) on the path the
 * H100's selection puts on their body (test_vk_selection.c): zero columns at
 * D = 40. Matrix units on real devices take every case up to Dk = 256. */
typedef struct head_dim_case {
    const char *label;
    int b, h, hkv, nq, nk, dk, dv, causal, bshd, split; /* split_kv: 0 planned, 1 off, 3 forced */
    int br, bc;           /* a tile (0: the table's) */
    const char *variants; /* the lavapipe variants/dtypes that run it */
} head_dim_case;

static const head_dim_case head_dim_table[] = {
    {"Dk/Dv 192/128 causal", 1, 4, 2, 33, 70, 192, 128, 1, 1, 0, 0, 0, "scalar/f32 f16/f16 decode/f32"},
    {"Dk/Dv 576/512 decode split", 2, 8, 1, 1, 90, 576, 512, 0, 0, 3, 0, 0, "scalar/f32 scalar/f16"},
    /* the f16 body's tile for D > 256 on NVIDIA is 16x16 (48 KiB); 8x16 fits lavapipe's 32 */
    {"Dk/Dv 576/512 decode split 8x16", 2, 8, 1, 1, 90, 576, 512, 0, 0, 3, 8, 16, "f16/f16"},
    {"Dk/Dv 192/128 decode GQA split", 1, 8, 2, 1, 150, 192, 128, 1, 0, 3, 0, 0, "decode/f32 decode/f16"},
    {"D=40 causal", 1, 2, 1, 30, 50, 40, 40, 1, 0, 0, 0, 0, "f16/f16 coopmat-rs-emu/f16"},
    {"D=40 causal split", 1, 2, 1, 30, 50, 40, 40, 1, 0, 3, 0, 0, "coopmat-rs-emu/f16"},
    {"D=40 decode GQA 8", 1, 16, 2, 1, 200, 40, 40, 0, 1, 1, 0, 0, "decode-rs-emu/f16"},
    {"D=40 decode GQA 8 split", 1, 16, 2, 1, 200, 40, 40, 0, 1, 3, 0, 0, "decode-rs-emu/f16"},
    {"D=72 decode GQA bshd", 1, 8, 2, 2, 90, 72, 72, 1, 1, 0, 0, 0, "f16/f16"},
    {"D=512", 1, 2, 1, 20, 45, 512, 512, 0, 0, 0, 0, 0, "scalar/f32"},
    {"D=512 8x16", 1, 2, 1, 20, 45, 512, 512, 1, 1, 0, 8, 16, "f16/f16"},
};

static int emulated_variant(const char *name) { return strstr(name, "-emu") != NULL; }

static int head_dim_case_runs(const head_dim_case *hc, const variant_dtype *vd, int quick)
{
    /* real matrix units: every case their tables cover (D <= 256) */
    int matrix = (!emulated_variant(vd->variant) && strncmp(vd->variant, "coopmat", 7) == 0) || !strcmp(vd->variant, "decode-nv-rs") ||
                 !strcmp(vd->variant, "decode-khr-rs");
    if (matrix) return !quick && hc->dk <= 256;
    char key[48];
    snprintf(key, sizeof key, "%s/%s", vd->variant, attnvk_dtype_name(vd->dtype));
    const char *at = strstr(hc->variants, key);
    size_t n = strlen(key);
    int listed = at && (at[n] == ' ' || at[n] == '\0');
    /* under validation (quick): the widest rows only, where shared memory is tightest */
    return listed && (!quick || hc->dk == 576);
}

static void head_dim_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd, int quick)
{
    for (size_t i = 0; i < sizeof head_dim_table / sizeof *head_dim_table; ++i) {
        const head_dim_case *hc = &head_dim_table[i];
        if (!head_dim_case_runs(hc, vd, quick)) continue;
        attnvk_problem p = shape(hc->b, hc->h, hc->hkv, hc->nq, hc->nk, hc->dk, hc->causal, vd->dtype, hc->bshd);
        p.head_dim_v = hc->dv;
        attnvk_kernel_options o = {.variant = vd->variant, .split_kv = hc->split, .write_lse = 1, .tile_br = hc->br,
                                   .tile_bc = hc->bc};
        char label[64];
        snprintf(label, sizeof label, "%s %s", vd->variant, hc->label);
        vk_case(t, dev, &p, &o, label, 1, 1);
        /* O's rows are Dv apart: the pieces of a q_begin/q_count run land where they should */
        if (i == 0 && !quick) {
            attnvk_kernel_options plain = {.variant = vd->variant};
            snprintf(label, sizeof label, "%s %s q_begin/q_count", vd->variant, hc->label);
            vk_case_row_ranges(t, dev, &p, &plain, label);
        }
    }
}

/* Register-softmax variants under each shared-memory arrangement (K/V stages,
 * Q in registers or shared memory) the tuning aids can select. */
static void rs_config_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd)
{
    static const char *combos[][2] = {{"1", "0"}, {"1", "1"}, {"2", "1"}, {"2", "0"}}; /* stages, Q shared */
    attnvk_problem cases[] = {
        shape(1, 2, 2, 131, 131, 64, 1, vd->dtype, 0), shape(2, 8, 2, 50, 77, 64, 1, vd->dtype, 1),
        shape(1, 2, 1, 70, 90, 80, 0, vd->dtype, 0),   shape(1, 2, 2, 40, 100, 128, 0, vd->dtype, 1),
    };
    /* each arrangement is a pipeline of its own, which lavapipe takes ~10 s to build for the
     * emulation: there D = 64 and 80 only (80 has the odd Q staging passes) */
    size_t n_cases = is_rs_emulation(vd) ? 3 : sizeof cases / sizeof *cases;
    for (size_t c = 0; c < sizeof combos / sizeof *combos; ++c) {
        setenv("ATTNVK_VK_KV_STAGES", combos[c][0], 1);
        setenv("ATTNVK_VK_Q_SHARED", combos[c][1], 1);
        for (size_t i = 0; i < n_cases; ++i) {
            /* 128 x 16 fits every arrangement up to D = 128 in 48 KiB (Q in shared memory: 34 KiB) */
            int tile_br = is_rs_emulation(vd) ? 0 : 128, tile_bc = is_rs_emulation(vd) ? 0 : 16;
            attnvk_kernel_options o = {.variant = vd->variant, .write_lse = 1, .tile_br = tile_br, .tile_bc = tile_bc};
            char label[64];
            snprintf(label, sizeof label, "%s stages=%s q_shared=%s", vd->variant, combos[c][0], combos[c][1]);
            vk_case(t, dev, &cases[i], &o, label, 1, 1);
        }
    }
    unsetenv("ATTNVK_VK_KV_STAGES");
    unsetenv("ATTNVK_VK_Q_SHARED");
}

/* The decode body's loads of quantized K/V (ATTNVK_VK_DECODE, runtime/vulkan/vk_variants.c):
 * the quantized cache cases (q8_0, q4_0, fp8; contiguous and paged; D 64, 128, 256) under
 * each mode, planned and with split-KV forced. slice=16 gives D=64 four lanes a key on
 * lavapipe's subgroups of 8, so aligned words (runs=2) reach one block pair a row there, and
 * lanes=4 does the same where grown packed rows keep the table's lanes (q4_0 with 5 heads a kv
 * head; it refuses D=256: 64 values a lane); each case says which mode ran, and a case that
 * should take aligned words (by default q4_0 and fp8; with runs=2 q8_0 too) must say runs=2.
 * pages=3 (off by default; with runs=0, CI time): a paged cache's workgroups stage their block-table entries
 * where 3 hold their keys (split 3 of up to 100 keys) and read the table where they do not (one split).
 * spread=0,half=0: each lane's whole softmax and Q.K in f32 (the defaults spread it, and f16 problems
 * take Q.K in f16 pairs). */
static void decode_quant_cases(vk_tally *t, attnvk_device *dev, const variant_dtype *vd)
{
    /* the defaults (aligned words for q4_0 and fp8, runs for q8_0; one key a step past 16
     * values a lane) run in the decode cases elsewhere */
    static const char *modes[] = {"runs=1", "runs=0,pages=3", "runs=2", "slice=16,runs=1", "slice=16,runs=2",
                                  "slice=16,keys=4", "lanes=4", "spread=0,half=0"};
    avk_cache_case cc[32];
    int n = avk_test_cache_cases(vd->dtype, cc, 32);
    for (size_t m = 0; m < sizeof modes / sizeof *modes; ++m) {
        setenv("ATTNVK_VK_DECODE", modes[m], 1);
        for (int i = 0; i < n; ++i) {
            if (cc[i].p.kv_format == ATTNVK_KV_DTYPE) continue;
            for (int sp = 0; sp < 2; ++sp) {
                attnvk_kernel_options o = {.variant = vd->variant, .split_kv = sp ? 3 : 0};
                avk_cache_result r;
                attnvk_status s = avk_cache_case_run(dev, &cc[i], &o, t->seed + 11000 + (uint64_t)(m * 100 + i * 2 + sp), &r);
                if (s == ATTNVK_ERROR_UNSUPPORTED && !strcmp(modes[m], "lanes=4") && cc[i].p.head_dim > 128) {
                    printf("skip decode [%s] %s %s: %s\n", modes[m], cc[i].label, r.shape, r.message);
                    continue;
                }
                int ok = s == ATTNVK_OK && r.check.passed;
                /* aligned words wherever a lane holds 16 values: by default (q8_0 keeps runs) or asked */
                int want_words = strstr(modes[m], "runs=2") ||
                                 (!strstr(modes[m], "runs=") && cc[i].p.kv_format != ATTNVK_KV_Q8_0);
                if (ok && want_words) {
                    const char *lanes = strstr(r.info.params, "key_lanes=");
                    int slice16 = lanes && atoi(lanes + 10) > 0 && cc[i].p.head_dim / atoi(lanes + 10) == 16;
                    int words = slice16 && (cc[i].p.kv_format == ATTNVK_KV_FP8 || cc[i].p.head_dim % 64 == 0);
                    ok = !words || strstr(r.info.params, "runs=2") != NULL;
                }
                if (s == ATTNVK_OK)
                    printf("%s %s [%s] %-26s %s: split %d rel_l2 %.2e (%s)\n", ok ? "ok  " : "FAIL", vd->variant, modes[m],
                           cc[i].label, r.shape, r.info.split_kv, r.check.rel_l2, r.info.params);
                else printf("FAIL %s [%s] %s %s: %s\n", vd->variant, modes[m], cc[i].label, r.shape, r.message);
                ok ? ++t->passed : ++t->failed;
            }
        }
    }
    unsetenv("ATTNVK_VK_DECODE");
}

/* coopmat-khr on a device without KHR cooperative matrices (lavapipe): refused with
 * the reason, and its host path (named selection, the KHR shape, sizes, specialization,
 * split-KV) run over the same body with emulated matrices through the test hook
 * ATTNVK_TEST_EMULATE_KHR_MATRICES. The shapes and tiles repeat coopmat-emu's tile,
 * split and rescale cases, so their pipelines are built already (seconds, not minutes). */
static void khr_emulated_cases(vk_tally *t, attnvk_device *dev)
{
    attnvk_problem tile_p = shape(1, 2, 1, 75, 133, 64, 1, ATTNVK_F16, 0);
    attnvk_kernel_options named = {.variant = "coopmat-khr"};
    attnvk_kernel *k = NULL;
    attnvk_status s = attnvk_kernel_prepare(dev, &tile_p, &named, &k, NULL);
    attnvk_kernel_destroy(k);
    if (s == ATTNVK_OK) return; /* a device with KHR matrices runs the variant itself */
    int why = s == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "VK_KHR_cooperative_matrix");
    printf("%s coopmat-khr refused: %s\n", why ? "ok  " : "FAIL", attnvk_last_error());
    why ? ++t->passed : ++t->failed;

    const unsigned hook = ATTNVK_TEST_EMULATE_KHR_MATRICES;
    attnvk_kernel_options tiled = {.variant = "coopmat-khr", .tile_br = 16, .tile_bc = 32, .test_flags = hook};
    attnvk_kernel_info info;
    memset(&info, 0, sizeof info);
    s = attnvk_kernel_prepare(dev, &tile_p, &tiled, &k, &info);
    attnvk_kernel_destroy(k);
    int routed = s == ATTNVK_OK && !strcmp(info.variant, "coopmat-khr") && strstr(info.params, "matrices=emulated");
    printf("%s coopmat-khr emulated: %s %s\n", routed ? "ok  " : "FAIL", info.variant, s == ATTNVK_OK ? info.params : attnvk_last_error());
    routed ? ++t->passed : ++t->failed;
    if (!routed) return;
    vk_case(t, dev, &tile_p, &tiled, "coopmat-khr (emulated) tile 16x32", 0, 1);
    attnvk_problem decode = shape(1, 4, 2, 1, 600, 64, 0, ATTNVK_F16, 0);
    attnvk_kernel_options split = {.variant = "coopmat-khr", .split_kv = 3, .write_lse = 1, .test_flags = hook};
    vk_case(t, dev, &decode, &split, "coopmat-khr (emulated) split_kv=3 decode", 1, 1);
    attnvk_problem spread = shape(1, 2, 2, 50, 300, 64, 0, ATTNVK_F16, 1);
    spread.scale = 2.0f;
    attnvk_kernel_options lse = {.variant = "coopmat-khr", .write_lse = 1, .test_flags = hook};
    vk_case(t, dev, &spread, &lse, "coopmat-khr (emulated) scale=2", 1, 1);
}

/* coopmat-khr-rs or decode-khr-rs (khr) on a device without KHR matrices: refused with the
 * reason, and its host path (named selection, KHR probe verdict, sizes, split-KV) run over
 * the -emu body through ATTNVK_TEST_EMULATE_KHR_MATRICES, on split_kv_cases' shapes, whose
 * pipelines the -emu variant has just built. */
static void khr_rs_emulated_cases(vk_tally *t, attnvk_device *dev, const char *khr)
{
    attnvk_problem decode = shape(1, 4, 2, 1, 600, 64, 0, ATTNVK_F16, 0), prefill = shape(1, 2, 2, 40, 300, 64, 1, ATTNVK_F16, 0);
    attnvk_kernel_options named = {.variant = khr};
    attnvk_kernel *k = NULL;
    attnvk_status s = attnvk_kernel_prepare(dev, &decode, &named, &k, NULL);
    attnvk_kernel_destroy(k);
    if (s == ATTNVK_OK) return; /* a device with KHR matrices runs the variant itself */
    int why = s == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "VK_KHR_cooperative_matrix");
    printf("%s %s refused: %s\n", why ? "ok  " : "FAIL", khr, attnvk_last_error());
    why ? ++t->passed : ++t->failed;

    const unsigned hook = ATTNVK_TEST_EMULATE_KHR_MATRICES;
    attnvk_kernel_options split = {.variant = khr, .split_kv = 3, .write_lse = 1, .test_flags = hook};
    attnvk_kernel_info info;
    memset(&info, 0, sizeof info);
    s = attnvk_kernel_prepare(dev, &decode, &split, &k, &info);
    attnvk_kernel_destroy(k);
    int routed = s == ATTNVK_OK && !strcmp(info.variant, khr) && strstr(info.params, "mma=8x8x8");
    printf("%s %s emulated: %s %s\n", routed ? "ok  " : "FAIL", khr, info.variant, s == ATTNVK_OK ? info.params : attnvk_last_error());
    routed ? ++t->passed : ++t->failed;
    if (!routed) return;
    char label[64];
    snprintf(label, sizeof label, "%s (emulated) split_kv=3 decode", khr);
    vk_case(t, dev, &decode, &split, label, 1, 1);
    attnvk_kernel_options whole = {.variant = khr, .split_kv = 1, .write_lse = 1, .test_flags = hook};
    snprintf(label, sizeof label, "%s (emulated) causal prefill", khr);
    vk_case(t, dev, &prefill, &whole, label, 1, 1);
}

static void status_cases(vk_tally *t, attnvk_device *dev)
{
    attnvk_problem p = shape(1, 1, 1, 64, 64, 64, 0, ATTNVK_F32, 0);
    attnvk_kernel_options o = {.variant = "no-such-variant"};
    vk_expect_status(t, dev, &p, &o, ATTNVK_ERROR_INVALID_ARGUMENT, "unknown variant");
    attnvk_kernel_options big = {.variant = "scalar", .tile_br = 256, .tile_bc = 1024};
    vk_expect_status(t, dev, &p, &big, ATTNVK_ERROR_UNSUPPORTED, "tiles beyond shared memory");
    attnvk_kernel_options f16_on_f32 = {.variant = "f16"};
    vk_expect_status(t, dev, &p, &f16_on_f32, ATTNVK_ERROR_UNSUPPORTED, "f16 variant on f32 problem");
    attnvk_kernel_options impl = {.implementation = "cudnn"};
    vk_expect_status(t, dev, &p, &impl, ATTNVK_ERROR_UNAVAILABLE, "foreign implementation");
    attnvk_problem packed = shape(1, 8, 2, 1, 64, 64, 0, ATTNVK_F16, 0);
    attnvk_kernel_options thin = {.variant = "decode-rs-emu", .tile_br = 4, .tile_bc = 64};
    vk_expect_status(t, dev, &packed, &thin, ATTNVK_ERROR_UNSUPPORTED, "matrix decode Br below one matrix");
    attnvk_kernel_options odd_step = {.variant = "decode-rs-emu", .tile_br = 8, .tile_bc = 12};
    vk_expect_status(t, dev, &packed, &odd_step, ATTNVK_ERROR_UNSUPPORTED, "matrix decode step not in matrices");
    attnvk_problem odd = shape(1, 1, 1, 8, 8, 6, 0, ATTNVK_F32, 0);
    vk_expect_status(t, dev, &odd, NULL, ATTNVK_ERROR_UNSUPPORTED, "head dim 6");
}

static int cache_files(void)
{
    const char *dir = getenv("ATTNVK_CACHE_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strncmp(e->d_name, "vkpipe-", 7) == 0;
    if (d) closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int quick = 0, profile_quick = 0, nskip = 0;
    const char *only = NULL, *only_dtype = NULL, *skip[8];
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--profile-quick") == 0) profile_quick = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--skip") == 0 && i + 1 < argc && nskip < 8) skip[nskip++] = argv[++i];
        else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) only_dtype = argv[++i];
        else {
            fprintf(stderr, "test_vulkan: unknown argument '%s' (--quick, --profile-quick, --only VARIANT, --skip VARIANT, --dtype f32|f16|bf16)\n", argv[i]);
            return 2;
        }
    }
    vk_tally t = {0};
    t.seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("context: %s\n", attnvk_last_error());
        return avk_test_finish(0, 1);
    }
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_VULKAN);
    if (!dev) {
        attnvk_context_destroy(ctx);
        return avk_test_finish(0, 0);
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    printf("device: %s (%s, driver %s, %s), default variant %s, validation %s\n", info->name, info->vendor,
           info->driver_version, info->api_version, info->default_variant, avk_vk_validation_enabled() ? "on" : "off");
    if (profile_quick) vk_profile_quick(&t, dev);
    for (size_t i = 0; i < sizeof all_variants / sizeof *all_variants && !profile_quick; ++i) {
        const variant_dtype *vd = &all_variants[i];
        if (only && strcmp(only, vd->variant) != 0) continue;
        if (only_dtype && strcmp(only_dtype, attnvk_dtype_name(vd->dtype)) != 0) continue;
        int skipped = 0;
        for (int k = 0; k < nskip; ++k) skipped |= strcmp(skip[k], vd->variant) == 0;
        if (skipped) continue;
        if (!runs_variant(dev, vd)) continue;
        feature_matrix(&t, dev, vd, quick);
        cache_cases(&t, dev, vd, quick);
        score_cases(&t, dev, vd, quick);
        head_dim_cases(&t, dev, vd, quick);
        if (vd->dtype == ATTNVK_BF16) continue; /* storage-only difference from scalar/f16 */
        split_kv_cases(&t, dev, vd);
        if (quick) continue;
        tile_cases(&t, dev, vd);
        special_cases(&t, dev, vd);
        if (is_rs(vd)) rs_config_cases(&t, dev, vd);
        if (!strcmp(vd->variant, "decode")) decode_quant_cases(&t, dev, vd);
        if (is_emulation(vd)) khr_emulated_cases(&t, dev); /* after coopmat-emu's: its pipelines serve */
        if (is_rs_emulation(vd)) khr_rs_emulated_cases(&t, dev, is_decode_mma(vd) ? "decode-khr-rs" : "coopmat-khr-rs");
    }
    if (!profile_quick) status_cases(&t, dev);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    if (getenv("ATTNVK_CACHE_DIR")) {
        int files = cache_files();
        printf("%s pipeline cache on disk: %d file(s)\n", files ? "ok  " : "FAIL", files);
        files ? ++t.passed : ++t.failed;
    }
    unsigned errors = avk_vk_validation_errors();
    if (avk_vk_validation_enabled()) {
        printf("%s validation errors: %u\n", errors ? "FAIL" : "ok  ", errors);
        errors ? ++t.failed : ++t.passed;
    }
    vk_print_worst(&t);
    return avk_test_finish(t.passed, t.failed);
}
