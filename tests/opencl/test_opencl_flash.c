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

/* One score case (or any problem: Dv, head dims) through a variant by name,
 * with split-KV as planned (0) or forced; fresh inputs, O poisoned, every
 * row against the reference. An emulation on a GPU may outgrow its local
 * memory (48 KiB on NVIDIA): refused with the reason there. */
static void run_score(attnvk_device *dev, const char *variant, const avk_score_case *c, int split, uint64_t seed)
{
    attnvk_kernel_options o = {.variant = variant, .split_kv = split};
    avk_score_result r;
    const attnvk_status s = avk_score_case_run(dev, c, &o, seed, &r);
    const int refusable = strstr(variant, "-emu") && attnvk_device_info_of(dev)->type != ATTNVK_DEVICE_CPU;
    const int ok = (s == ATTNVK_OK && r.check.passed) || (s == ATTNVK_ERROR_UNSUPPORTED && refusable);
    if (s == ATTNVK_ERROR_UNSUPPORTED && refusable)
        printf("skip %s %s %s: %s\n", variant, c->label, r.shape, r.message);
    else if (s == ATTNVK_OK)
        printf("%s %s %s %s: %s %dx%d split %d rel_l2 %.2e nonfinite %zu\n", ok ? "ok  " : "FAIL", variant, c->label,
               r.shape, r.info.variant, r.info.tile_br, r.info.tile_bc, r.info.split_kv, r.check.rel_l2,
               r.check.nonfinite);
    else
        printf("FAIL %s %s %s: %s\n", variant, c->label, r.shape, r.message);
    fflush(stdout);
    tally(ok);
}

/* The score cases as decode shapes for the decode bodies: Nq 1 or 4 with
 * 256 more keys and left windows 130 wider (so forced splits are several
 * tiles of the window's span) at D=64, top-left with Nq 16 (several row
 * blocks of packed rows; Nk 12 below it); the check's own decode case as it is. */
static int decode_score_cases(avk_score_case *sc, int max)
{
    const int n = avk_score_cases(ATTNVK_F16, sc, max);
    for (int i = 0; i < n; ++i) {
        attnvk_problem *p = &sc[i].p;
        if (avk_is_decode(p)) continue;
        if (p->align == ATTNVK_ALIGN_TOP_LEFT) {
            p->seq_kv = p->seq_q > p->seq_kv ? 12 : p->seq_kv;
            p->seq_q = 16;
            continue;
        }
        p->seq_q = i % 2 ? 4 : 1;
        p->seq_kv += 256;
        p->head_dim = 64; /* one program per feature set (the head dims have their own cases) */
        if (p->window && p->window_left >= 0) p->window_left += 130;
    }
    return n;
}

/* The score cases of `attnvk check` (softcap, windows, ALiBi, sinks, masks,
 * top-left) through the tensor-core bodies by name, as planned and with
 * split-KV forced (the sink then joins in the merge): the prefill shapes
 * through mma-f16, all of them made decode shapes through mma-decode. */
static void run_scores(attnvk_device *dev, const char *variant, uint64_t seed)
{
    avk_score_case sc[AVK_SCORE_CASES_MAX];
    const int decode_body = !strncmp(variant, "mma-decode", 10);
    const int n = decode_body ? decode_score_cases(sc, AVK_SCORE_CASES_MAX) : avk_score_cases(ATTNVK_F16, sc, AVK_SCORE_CASES_MAX);
    printf("-- %s, score cases\n", variant);
    for (int split = 0; split < 2; ++split)
        for (int i = 0; i < n; ++i)
            if (decode_body || !avk_is_decode(&sc[i].p))
                run_score(dev, variant, &sc[i], split ? (sc[i].split_kv ? sc[i].split_kv : 3) : 0,
                          seed + (uint64_t)(split * 100 + i));
    if (!decode_body) {
        /* the prefill body's A/B: the softcap's input scale per score (-DAVK_SOFTCAP_IN_Q=0), its softcap cases */
        printf("-- %s, softcap cases with AVK_SOFTCAP_IN_Q=0\n", variant);
        setenv("ATTNVK_OPENCL_BUILD_OPTIONS", "-DAVK_SOFTCAP_IN_Q=0", 1);
        for (int i = 0; i < n; ++i)
            if (!avk_is_decode(&sc[i].p) && sc[i].p.softcap > 0.0f) run_score(dev, variant, &sc[i], 0, seed + 300u + (uint64_t)i);
        unsetenv("ATTNVK_OPENCL_BUILD_OPTIONS");
        /* the A/B of ALiBi's key term in S's MMAs (AVK_ALIBI_MMA, without a softcap): the ALiBi cases with it */
        printf("-- %s, ALiBi cases with ATTNVK_OPENCL_ALIBI_MMA=1\n", variant);
        setenv("ATTNVK_OPENCL_ALIBI_MMA", "1", 1);
        for (int i = 0; i < n; ++i)
            if (!avk_is_decode(&sc[i].p) && sc[i].p.alibi && !(sc[i].p.softcap > 0.0f))
                run_score(dev, variant, &sc[i], 0, seed + 350u + (uint64_t)i);
        unsetenv("ATTNVK_OPENCL_ALIBI_MMA");
        /* the A/B of a hook built for the problem's modifications alone (AVK_HOOK_MODS): the cases that
         * carry two or three of them, with softcap, ALiBi and mask code all built in */
        printf("-- %s, mixed score cases with ATTNVK_OPENCL_HOOK_MODS=0\n", variant);
        setenv("ATTNVK_OPENCL_HOOK_MODS", "0", 1);
        for (int i = 0; i < n; ++i)
            if (!avk_is_decode(&sc[i].p) && (sc[i].p.softcap > 0.0f) + sc[i].p.alibi + sc[i].p.mask >= 2)
                run_score(dev, variant, &sc[i], 0, seed + 370u + (uint64_t)i);
        unsetenv("ATTNVK_OPENCL_HOOK_MODS");
        /* a mask the heads share over several row blocks, as launched (ATTNVK_MASK_HEADS_FIRST=0) and heads first */
        avk_score_case shared = avk_score_case_shared_mask(ATTNVK_F16);
        for (int heads_first = 0; heads_first < 2; ++heads_first) {
            if (heads_first) shared.label = "mask the heads share, heads first";
            else setenv("ATTNVK_MASK_HEADS_FIRST", "0", 1);
            run_score(dev, variant, &shared, 0, seed + 400u + (uint64_t)heads_first);
            unsetenv("ATTNVK_MASK_HEADS_FIRST");
        }
        return;
    }
    /* every feature at once on the decode body's cache paths: shuffled pages
     * with ragged lengths (f16, q8_0's block-scaled S) and fp8's folded scales */
    static const struct { const char *label; attnvk_kv_format kv; int page_size; } caches[] = {
        {"scores, paged f16", ATTNVK_KV_DTYPE, 16}, {"scores, paged q8_0", ATTNVK_KV_Q8_0, 32},
        {"scores, ragged fp8", ATTNVK_KV_FP8, 0}};
    static const int32_t lens[] = {300, 177, 1};
    const int gpu = attnvk_device_info_of(dev)->type != ATTNVK_DEVICE_CPU;
    for (size_t i = 0; i < sizeof caches / sizeof *caches && !(gpu && strstr(variant, "-emu")); ++i) {
        attnvk_problem p = sc[n - 1].p; /* "all of them": softcap, window, ALiBi, sinks, mask */
        p.batch = 3, p.heads = 8, p.seq_q = 4, p.seq_kv = 300, p.head_dim = 64, p.window_left = 140;
        p.mask_dtype = ATTNVK_F16, p.kv_format = caches[i].kv, p.page_size = caches[i].page_size, p.ragged = 1;
        for (int split = 0; split < 2; ++split) {
            attnvk_kernel_options o = {.variant = variant, .split_kv = split ? 3 : 0};
            tally(avk_cl_check_cache_scores(dev, &p, lens, 3, &o, caches[i].label, seed + 300 + 10 * i + split));
        }
    }
}

/* Separate K and V head dims (MLA's 192/128 and 576/512) and the equal head
 * dims 40, 72, 112, 192 and 512, each through the bodies the selection
 * gives it (on PoCL, and on NVIDIA: `runs`; a program per head dim, so each
 * runs where its code differs), decode and Dv shapes also split; the
 * tensor-core bodies refuse what they cannot hold, by name. */
enum { TF32 = 1, TF16 = 2, MMA = 4, DEC = 8 };
static void run_head_dims(attnvk_device *dev, const char *variant, attnvk_dtype dtype, uint64_t seed)
{
    static const struct {
        const char *label;
        int b, h, hkv, nq, nk, dk, dv, causal, bshd, window_left, sinks, runs;
    } dims[] = {
        {"dk192-dv128 causal", 1, 2, 2, 70, 70, 192, 128, 1, 0, -1, 0, TF32 | MMA},
        {"dk192-dv128 window sinks", 1, 4, 2, 50, 90, 192, 128, 1, 1, 16, 1, TF32 | MMA},
        {"dk192-dv128 decode gqa", 2, 8, 2, 1, 400, 192, 128, 0, 1, -1, 0, TF32 | DEC},
        {"dk576-dv512 decode gqa", 2, 8, 2, 1, 300, 576, 512, 1, 0, -1, 0, TF32 | TF16},
        {"dk576-dv512 prefill", 1, 2, 1, 24, 40, 576, 512, 1, 0, -1, 0, TF32},
        {"d40", 1, 2, 2, 33, 77, 40, 40, 0, 0, -1, 0, TF16},
        {"d72 causal bshd", 1, 4, 2, 50, 50, 72, 72, 1, 1, -1, 0, TF32},
        {"d112 gqa", 1, 4, 2, 45, 100, 112, 112, 0, 0, -1, 0, MMA},
        {"d112 decode gqa", 1, 8, 2, 4, 300, 112, 112, 1, 0, -1, 0, DEC},
        {"d192 causal", 1, 2, 2, 64, 64, 192, 192, 1, 0, -1, 0, MMA},
        {"d512", 1, 2, 1, 20, 70, 512, 512, 0, 0, -1, 0, TF32},
    };
    const int body = !strncmp(variant, "mma-f16", 7) ? MMA : !strncmp(variant, "mma-decode", 10) ? DEC
                     : dtype == ATTNVK_F32                 ? TF32
                                                           : TF16;
    printf("-- %s, head dims\n", variant);
    for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i) {
        avk_score_case c = {.label = dims[i].label};
        attnvk_problem *p = &c.p;
        p->batch = dims[i].b, p->heads = dims[i].h, p->kv_heads = dims[i].hkv;
        p->seq_q = dims[i].nq, p->seq_kv = dims[i].nk, p->causal = dims[i].causal;
        p->head_dim = dims[i].dk, p->head_dim_v = dims[i].dv == dims[i].dk ? 0 : dims[i].dv;
        p->layout = dims[i].bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD;
        p->dtype = dtype;
        p->window = dims[i].window_left >= 0, p->window_left = dims[i].window_left, p->window_right = -1;
        p->sinks = dims[i].sinks;
        const int dv = dims[i].dv, decode = avk_is_decode(p);
        /* mma: k-steps of 16, Q and O in registers up to 256; mma-decode: O up to 128 columns, Q's up to 192 */
        const int holds = body == MMA   ? !decode && p->head_dim % 16 == 0 && p->head_dim <= 256 && dv <= 256
                          : body == DEC ? decode && p->head_dim % 16 == 0 && p->head_dim <= 192 && dv <= 128
                                        : 1;
        if (!holds && (body == MMA ? !decode : body == DEC && decode)) {
            attnvk_kernel_options o = {.variant = variant};
            char what[96];
            snprintf(what, sizeof what, "%s refused", dims[i].label);
            tally(avk_cl_expect_status(dev, p, &o, ATTNVK_ERROR_UNSUPPORTED, NULL, what));
        }
        if (!holds || !(dims[i].runs & body)) continue;
        run_score(dev, variant, &c, 0, seed + i);
        if (decode || p->head_dim_v) run_score(dev, variant, &c, 3, seed + 50 + i); /* partials of Dv columns */
        if (p->head_dim_v && !decode && !p->window && !p->sinks) { /* O's rows of Dv: other rows stay NaN */
            attnvk_kernel_options o = {.variant = variant};
            char what[96];
            snprintf(what, sizeof what, "%s, rows", dims[i].label);
            tally(avk_cl_check_row_range(dev, p, &o, 3, 15, what, seed + 90 + i));
        }
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

static const avk_score_case *find_score_case(const avk_score_case *sc, int n, const char *label)
{
    for (int i = 0; i < n; ++i)
        if (!strcmp(sc[i].label, label)) return &sc[i];
    fprintf(stderr, "no score case '%s'\n", label);
    exit(1);
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
    /* V tiles of their own width through the async copies (MLA prefill's, with a window and sinks) */
    avk_score_case dv = {.label = "dk192-dv128 window sinks, async",
                         .p = *find_case(cases, labels, n, "odd lengths causal")};
    dv.p.head_dim = 192, dv.p.head_dim_v = 128;
    dv.p.window = 1, dv.p.window_left = 40, dv.p.window_right = -1, dv.p.sinks = 1;
    run_score(dev, variant, &dv, 0, seed + 52);
    /* f16 masks through the async copies: rows of whole 16-byte chunks come into local memory with
     * K (AVK_MASK_LOCAL: per head, shared over row blocks with ALiBi, GQA rows packed four queries
     * deep), and Nk = 37 reads them from global memory; each against ATTNVK_OPENCL_MASK_LOCAL=0 */
    if (dtype == ATTNVK_F16) { /* the f16 bodies' */
        avk_score_case sc[AVK_SCORE_CASES_MAX];
        const int ns = avk_score_cases(ATTNVK_F16, sc, AVK_SCORE_CASES_MAX);
        avk_score_case masks[4] = {*find_score_case(sc, ns, "mask f16 staged"), *find_score_case(sc, ns, "mask per head f16"),
                                   avk_score_case_shared_mask(ATTNVK_F16), avk_score_case_shared_mask(ATTNVK_F16)};
        masks[2].label = "mask the heads share, Nk 232", masks[2].p.seq_kv = 232;
        masks[3].label = "mask decode Nq=4 GQA 4:1", masks[3].p.seq_q = 4, masks[3].p.heads = 8, masks[3].p.seq_kv = 136;
        for (int off = 0; off < 2; ++off) {
            if (off) setenv("ATTNVK_OPENCL_MASK_LOCAL", "0", 1);
            for (int i = 0; i < 4; ++i) {
                avk_score_case m = masks[i];
                char mlabel[96];
                snprintf(mlabel, sizeof mlabel, "%s, async%s", m.label, off ? ", ATTNVK_OPENCL_MASK_LOCAL=0" : "");
                m.label = mlabel;
                run_score(dev, variant, &m, 0, seed + 70 + (uint64_t)(10 * off + i));
            }
            unsetenv("ATTNVK_OPENCL_MASK_LOCAL");
        }
    }
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
        if (!strncmp(variants[i].variant, "mma", 3)) run_scores(dev, variants[i].variant, seed + 1000 * i + 900);
        run_head_dims(dev, variants[i].variant, variants[i].dtype, seed + 1000 * i + 800);
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
