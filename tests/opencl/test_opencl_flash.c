/* attnvk's OpenCL flash kernels against the float64 CPU reference: every
 * feature case for every variant the device runs (split-KV on and off),
 * tile overrides, LSE, query-row ranges, and the deliberately wrong kernel.
 * $ATTNVK_TEST_OPENCL_VARIANTS (comma list) narrows the variants
 * (local-32k: the 32 KiB local-memory configuration). */
#include "cl_checks.h"
#include "core/score_cases.h"
#include "core/split_plan.h" /* avk_is_decode */

#include <stdlib.h>
#include <string.h>

enum { SKIP = 77 };

static int passed, failed;
static void tally(int ok) { ok ? ++passed : ++failed; }

static int wanted(const char *variant)
{
    const char *list = getenv("ATTNVK_TEST_OPENCL_VARIANTS");
    if (!list || !*list) return 1;
    size_t n = strlen(variant);
    for (const char *p = strstr(list, variant); p; p = strstr(p + 1, variant))
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

static const attnvk_problem *find_case(const attnvk_problem *cases, const char **labels, int n, const char *label)
{
    for (int i = 0; i < n; ++i)
        if (!strcmp(labels[i], label)) return &cases[i];
    fprintf(stderr, "no feature case '%s'\n", label);
    exit(1);
}

static void run_variant(attnvk_device *dev, const char *variant, attnvk_dtype dtype, uint64_t seed)
{
    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(dtype, cases, labels, 64);
    attnvk_kernel_options opts = {.variant = variant};
    char label[96];
    printf("-- %s\n", variant);
    for (int i = 0; i < n; ++i) {
        tally(avk_test_run_case(dev, &cases[i], &opts, labels[i], seed + (uint64_t)i, 0));
        if (cases[i].seq_q <= 16) { /* decode: split-KV forced on and off */
            attnvk_kernel_options o = opts;
            o.split_kv = 1;
            snprintf(label, sizeof label, "%s, split off", labels[i]);
            tally(avk_test_run_case(dev, &cases[i], &o, label, seed + 100 + (uint64_t)i, 0));
            o.split_kv = 3;
            snprintf(label, sizeof label, "%s, split 3", labels[i]);
            tally(avk_test_run_case(dev, &cases[i], &o, label, seed + 200 + (uint64_t)i, 0));
        }
    }
    const attnvk_problem *odd = find_case(cases, labels, n, "odd lengths");
    const attnvk_problem *odd_causal = find_case(cases, labels, n, "odd lengths causal");
    const attnvk_problem *empty_rows = find_case(cases, labels, n, "causal Nq>Nk (empty rows)");
    const attnvk_problem *decode = find_case(cases, labels, n, "decode Nq=4 GQA");
    const attnvk_problem *gqa_bshd = find_case(cases, labels, n, "GQA 8:2 bshd causal");

    /* split-KV on a prefill shape, through the reduce kernel */
    attnvk_kernel_options o = opts;
    o.split_kv = 3;
    tally(avk_test_run_case(dev, odd_causal, &o, "prefill, split 3", seed + 300, 0));
    tally(avk_test_run_case(dev, gqa_bshd, &o, "GQA bshd, split 3", seed + 301, 0));

    /* tile overrides (each is its own program) */
    int mma = strncmp(variant, "mma", 3) == 0;
    o = opts;
    o.tile_br = 16;
    o.tile_bc = mma ? 32 : 8;
    tally(avk_test_run_case(dev, odd_causal, &o, "tile override", seed + 400, 0));
    o.tile_br = mma ? 48 : 24;
    o.tile_bc = 16;
    tally(avk_test_run_case(dev, gqa_bshd, &o, "tile override 2", seed + 401, 0));

    /* log-sum-exp, with and without split-KV */
    tally(avk_cl_check_lse(dev, odd_causal, &opts, "lse", seed + 500));
    tally(avk_cl_check_lse(dev, empty_rows, &opts, "lse, empty rows", seed + 501));
    o = opts;
    o.split_kv = 3;
    tally(avk_cl_check_lse(dev, decode, &o, "lse, decode split 3", seed + 502));
    tally(avk_cl_check_lse(dev, empty_rows, &o, "lse, empty rows split 3", seed + 503));

    /* query-row ranges leave other rows untouched (NaN) */
    tally(avk_cl_check_row_range(dev, odd_causal, &opts, 37, 50, "rows 37+50", seed + 600));
    tally(avk_cl_check_row_range(dev, gqa_bshd, &opts, 1, 17, "rows 1+17 bshd", seed + 601));
    tally(avk_cl_check_row_range(dev, decode, &o, 1, 2, "rows 1+2 split 3", seed + 602));

    /* the deliberately wrong kernel must be caught */
    tally(avk_cl_check_skip_tile_fails(dev, odd, &opts, "skip last kv tile", seed + 700));
    tally(avk_cl_check_skip_tile_fails(dev, decode, &o, "skip last kv tile, split", seed + 701));
}

/* The KV-cache cases every API passes (tests/common/test_cache.c): GQA
 * packing, paged and ragged caches, q8_0/q4_0/fp8; decode shapes also with
 * split-KV forced on. */
static void run_cache(attnvk_device *dev, const char *variant, attnvk_dtype dtype, uint64_t seed)
{
    avk_cache_case cases[32];
    int n = avk_test_cache_cases(dtype, cases, 32);
    attnvk_kernel_options opts = {.variant = variant};
    printf("-- %s, KV-cache cases\n", variant);
    for (int i = 0; i < n; ++i) {
        tally(avk_test_run_cache_case(dev, &cases[i], &opts, seed + (uint64_t)i, 0));
        if (cases[i].p.seq_q <= 16) {
            attnvk_kernel_options o = opts;
            o.split_kv = 3;
            avk_cache_case c = cases[i];
            char label[96];
            snprintf(label, sizeof label, "%s, split 3", c.label);
            c.label = label;
            tally(avk_test_run_cache_case(dev, &c, &o, seed + 100 + (uint64_t)i, 0));
        }
        if (cases[i].p.page_size == 16) { /* pages of a size that is no power of two: the division path */
            avk_cache_case c = cases[i];
            char label[96];
            snprintf(label, sizeof label, "%s, pages of 12", c.label);
            c.label = label;
            c.p.page_size = 12;
            tally(avk_test_run_cache_case(dev, &c, &opts, seed + 200 + (uint64_t)i, 0));
        }
    }
}

/* The score cases of `attnvk check` (softcap, windows, ALiBi, sinks, masks,
 * top-left) through the tensor-core prefill body by name, as planned and with
 * split-KV forced (the sink then joins in the merge); decode shapes are the
 * tiled and decode bodies' and are refused by name. */
static void run_scores(attnvk_device *dev, const char *variant, uint64_t seed)
{
    avk_score_case sc[16];
    const int n = avk_score_cases(ATTNVK_F16, sc, 16);
    for (int split = 0; split < 2; ++split)
        for (int i = 0; i < n; ++i) {
            if (avk_is_decode(&sc[i].p)) continue;
            attnvk_kernel_options o = {.variant = variant, .split_kv = split ? 3 : 0};
            avk_score_result r;
            const attnvk_status s = avk_score_case_run(dev, &sc[i], &o, seed + (uint64_t)(split * 100 + i), &r);
            const int ok = s == ATTNVK_OK && r.check.passed;
            if (s == ATTNVK_OK)
                printf("%s %s scores %s: split %d rel_l2 %.2e\n", ok ? "ok  " : "FAIL", variant, r.shape,
                       r.info.split_kv, r.check.rel_l2);
            else
                printf("FAIL %s scores %s: %s\n", variant, r.shape, r.message);
            tally(ok);
        }
}

/* The mma-decode body (flash_decode.cl; emulated on PoCL): every KV-cache
 * case at the table's shape (2 warps, 3 stages of 32 keys for the
 * emulation), decode cases also split and at other shapes (3 warps, 2
 * stages of 16 keys: an odd warp count, the shorter ring; 1 warp, 4 stages
 * of 32 keys, single-query cases); head dims above 128 must be refused. */
static void run_decode(attnvk_device *dev, const char *variant, uint64_t seed)
{
    avk_cache_case cases[32];
    int n = avk_test_cache_cases(ATTNVK_F16, cases, 32);
    attnvk_kernel_options opts = {.variant = variant};
    printf("-- %s, KV-cache cases\n", variant);
    /* a shape forced through ATTNVK_OPENCL_TUNE, or the emulation's, may outgrow a GPU's 48 KiB
     * of local memory (NVIDIA): refused with the reason there; on the CPU (PoCL) all must run */
    const int gpu = attnvk_device_info_of(dev)->type != ATTNVK_DEVICE_CPU;
    const int emulated = strstr(variant, "-emu") != NULL;
    static const char *const shapes[] = {NULL, "key_warps=3,stages=2,bc=16", "key_warps=1,stages=4,bc=32"};
    for (int pass = 0; pass < 3; ++pass) {
        if (pass) {
            setenv("ATTNVK_OPENCL_TUNE", shapes[pass], 1);
            printf("-- %s, %s: decode cases\n", variant, shapes[pass]);
        }
        for (int i = 0; i < n; ++i) {
            avk_cache_case c = cases[i];
            char label[96];
            if (pass && c.p.seq_q > (pass == 1 ? 16 : 1)) continue;
            if (c.p.head_dim > 128) {
                attnvk_problem wide = c.p;
                wide.page_size = 0; /* the refusal, not the paging, is under test */
                if (!pass)
                    tally(avk_cl_expect_status(dev, &wide, &opts, ATTNVK_ERROR_UNSUPPORTED, "up to 128",
                                               "mma-decode refuses D=256"));
                continue;
            }
            if (pass) {
                snprintf(label, sizeof label, "%s, %s", c.label, pass == 1 ? "w3s2" : "w1s4");
                c.label = label;
            }
            const int refusable = gpu && (pass || emulated);
            tally(avk_test_run_cache_case(dev, &c, &opts, seed + 50 * (uint64_t)pass + (uint64_t)i, refusable));
            if (!pass && c.p.seq_q <= 16) {
                attnvk_kernel_options o = opts;
                o.split_kv = 3;
                snprintf(label, sizeof label, "%s, split 3", c.label);
                c.label = label;
                tally(avk_test_run_cache_case(dev, &c, &o, seed + 100 + (uint64_t)i, refusable));
            }
        }
    }
    unsetenv("ATTNVK_OPENCL_TUNE");

    /* the warps' merge writes LSE (and split partials), row ranges, and the wrong kernel is caught */
    attnvk_problem fc[64];
    const char *fl[64];
    int nf = avk_test_feature_cases(ATTNVK_F16, fc, fl, 64);
    const attnvk_problem *decode = find_case(fc, fl, nf, "decode Nq=4 GQA");
    attnvk_kernel_options split = opts;
    split.split_kv = 3;
    if (gpu && emulated) return; /* the emulation's shape outgrows 48 KiB there: refused above */
    tally(avk_cl_check_lse(dev, decode, &opts, "lse, decode", seed + 300));
    tally(avk_cl_check_lse(dev, decode, &split, "lse, decode split 3", seed + 301));
    tally(avk_cl_check_lse(dev, find_case(fc, fl, nf, "causal Nq>Nk (empty rows)"), &opts, "lse, empty rows",
                           seed + 302));
    tally(avk_cl_check_row_range(dev, decode, &split, 1, 2, "rows 1+2 split 3", seed + 303));
    tally(avk_cl_check_skip_tile_fails(dev, decode, &opts, "skip last kv tile", seed + 304));
}

/* Devices with 32 KiB of local memory (configured through the test knob
 * ATTNVK_OPENCL_LOCAL_MEM on a second handle): the portable decode bodies
 * must shrink their key tiles, not refuse, and stay correct. */
static void run_small_local(attnvk_context *ctx, uint64_t seed)
{
    setenv("ATTNVK_OPENCL_LOCAL_MEM", "32768", 1);
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    unsetenv("ATTNVK_OPENCL_LOCAL_MEM");
    if (!dev) {
        tally(0);
        return;
    }
    /* a 64-key tile (as GPU table entries ask) must shrink to fit */
    setenv("ATTNVK_OPENCL_TUNE", "bc=64", 1);
    printf("-- 32 KiB local memory, 64-key tiles asked: decode KV-cache cases\n");
    static const struct { const char *variant; attnvk_dtype dtype; } variants[] = {{"tiled-f32", ATTNVK_F32},
                                                                                   {"tiled-f16", ATTNVK_F16}};
    for (size_t v = 0; v < sizeof variants / sizeof *variants; ++v) {
        avk_cache_case cases[32];
        int n = avk_test_cache_cases(variants[v].dtype, cases, 32);
        attnvk_kernel_options opts = {.variant = variants[v].variant};
        for (int i = 0; i < n; ++i)
            if (cases[i].p.seq_q == 1) tally(avk_test_run_cache_case(dev, &cases[i], &opts, seed + 50 * v + i, 0));
    }
    unsetenv("ATTNVK_OPENCL_TUNE");
    attnvk_device_close(dev);
}

/* The asynchronous tile pipeline (cp.async/ldmatrix on NVIDIA, the same
 * control flow with plain copies elsewhere) on the shapes that stress it. */
static void run_async(attnvk_device *dev, const char *variant, attnvk_dtype dtype, uint64_t seed)
{
    static const char *const subset[] = {"odd lengths", "odd lengths causal", "causal Nq>Nk (empty rows)",
                                         "GQA 8:2 bshd causal", "decode Nq=4 GQA", "D=80", "D=256 causal bshd"};
    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(dtype, cases, labels, 64);
    attnvk_kernel_options opts = {.variant = variant};
    char label[96];
    printf("-- %s, async tile pipeline\n", variant);
    setenv("ATTNVK_OPENCL_TUNE", "async=1", 1);
    for (size_t i = 0; i < sizeof subset / sizeof *subset; ++i) {
        const attnvk_problem *p = find_case(cases, labels, n, subset[i]);
        snprintf(label, sizeof label, "%s, async", subset[i]);
        tally(avk_test_run_case(dev, p, &opts, label, seed + i, 0));
    }
    attnvk_kernel_options split = opts;
    split.split_kv = 3;
    tally(avk_test_run_case(dev, find_case(cases, labels, n, "decode Nq=4 GQA"), &split, "decode split 3, async",
                            seed + 50, 0));
    tally(avk_cl_check_row_range(dev, find_case(cases, labels, n, "odd lengths causal"), &opts, 37, 50,
                                 "rows 37+50, async", seed + 51));
    /* paged rows and raw quantized rows through the async copies */
    avk_cache_case cc[32];
    int nc = avk_test_cache_cases(dtype, cc, 32);
    for (int i = 0; i < nc; ++i) {
        if (!cc[i].p.page_size && cc[i].p.kv_format == ATTNVK_KV_DTYPE) continue;
        char clabel[96];
        snprintf(clabel, sizeof clabel, "%s, async", cc[i].label);
        cc[i].label = clabel;
        tally(avk_test_run_cache_case(dev, &cc[i], &opts, seed + 60 + (uint64_t)i, 0));
    }
    unsetenv("ATTNVK_OPENCL_TUNE");
}

int main(void)
{
    uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("context: %s\n", attnvk_last_error());
        return 1;
    }
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    if (!dev) {
        attnvk_context_destroy(ctx);
        return SKIP;
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    printf("device: %s (%s, %s), default variant %s, tensor cores %s\n", info->name, info->vendor, info->api_version,
           info->default_variant, info->cooperative_matrix ? "yes (mma-f16)" : "no");
    static const struct { const char *variant; attnvk_dtype dtype; int needs_mma; } variants[] = {
        {"tiled-f32", ATTNVK_F32, 0},
        {"tiled-f16", ATTNVK_F16, 0},
        {"mma-f16", ATTNVK_F16, 1},
        {"mma-f16-emu", ATTNVK_F16, 0},
        {"mma-decode", ATTNVK_F16, 1},
        {"mma-decode-emu", ATTNVK_F16, 0},
    };
    for (size_t i = 0; i < sizeof variants / sizeof *variants; ++i) {
        if (!wanted(variants[i].variant)) continue;
        if (variants[i].needs_mma && !info->cooperative_matrix) {
            printf("-- %s: not on this device (needs NVIDIA compute capability >= 8.0)\n", variants[i].variant);
            continue;
        }
        if (!strncmp(variants[i].variant, "mma-f16", 7)) run_scores(dev, variants[i].variant, seed + 1000 * i + 900);
        if (!strncmp(variants[i].variant, "mma-decode", 10)) {
            run_decode(dev, variants[i].variant, seed + 1000 * i);
            continue;
        }
        run_variant(dev, variants[i].variant, variants[i].dtype, seed + 1000 * i);
        run_cache(dev, variants[i].variant, variants[i].dtype, seed + 1000 * i + 700);
        if (variants[i].dtype == ATTNVK_F32 || variants[i].needs_mma || !strcmp(variants[i].variant, "mma-f16-emu"))
            run_async(dev, variants[i].variant, variants[i].dtype, seed + 1000 * i + 500);
    }

    if (wanted("local-32k")) run_small_local(ctx, seed + 8000);

    /* defaults (no variant) pick from the tuning table */
    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(ATTNVK_F32, cases, labels, 64);
    attnvk_kernel_options none = {0};
    tally(avk_test_run_case(dev, &cases[0], &none, "table default f32", seed + 9000, 0));
    n = avk_test_feature_cases(ATTNVK_F16, cases, labels, 64);
    tally(avk_test_run_case(dev, &cases[n - 3], &none, "table default f16", seed + 9001, 0));

    /* what the backend refuses, with a reason */
    attnvk_problem p = cases[0];
    p.dtype = ATTNVK_BF16;
    tally(avk_cl_expect_status(dev, &p, &none, ATTNVK_ERROR_UNSUPPORTED, "bf16", "bf16 refused"));
    p.dtype = ATTNVK_F32;
    attnvk_kernel_options bad = {.variant = "no-such-variant"};
    tally(avk_cl_expect_status(dev, &p, &bad, ATTNVK_ERROR_INVALID_ARGUMENT, "has no variant 'no-such-variant'", "unknown variant"));
    bad.variant = "tiled-f16";
    tally(avk_cl_expect_status(dev, &p, &bad, ATTNVK_ERROR_INVALID_ARGUMENT, "runs f16", "variant/dtype mismatch"));
    p.head_dim = 30;
    tally(avk_cl_expect_status(dev, &p, &none, ATTNVK_ERROR_UNSUPPORTED, "multiple of 4", "head dim 30 refused"));
    if (!info->cooperative_matrix) {
        p = cases[0];
        bad.variant = "mma-f16";
        tally(avk_cl_expect_status(dev, &p, &bad, ATTNVK_ERROR_UNSUPPORTED, "compute capability", "mma-f16 refused"));
    }
    attnvk_kernel_options other = {.implementation = "cudnn"};
    tally(avk_cl_expect_status(dev, &cases[0], &other, ATTNVK_ERROR_UNAVAILABLE, "cudnn", "unknown implementation"));

    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
