/* The Vulkan backward pass (issue #18) against the float64 reference: the
 * shared cases (tests/common/backward_cases.h: GQA/MQA, causal with Nq != Nk
 * both ways and both alignments, odd lengths, D 64/128/256, Dk 192/Dv 128,
 * windows, softcap, ALiBi, masks, sinks, ragged lengths) in f32, f16 and
 * bf16, a few of this backend's own (several tiles each way, head dims that
 * are not powers of two), then two runs bit-identical. Fresh random inputs,
 * outputs poisoned with NaN first, rel-L2 per gradient within
 * attnvk_backward_tolerance. Under ATTNVK_VK_VALIDATION=1 any validation
 * error fails. Skipped (passes, says so) without a Vulkan device.
 * The default is the shared list in f32 and a representative subset in f16
 * and bf16 (lavapipe compiles every pipeline); ATTNVK_TEST_BACKWARD_ALL=1
 * runs every case in every dtype. --matrix-emu runs the f16 matrix body over
 * emulated matrices instead (its own ctest: lavapipe compiles it slowly). The
 * last line is "N passed, M failed". */
#include "backward_cases.h"
#include "vulkan/vk_validation.h"

/* beyond the shared list: several tiles each way, odd head dims */
static int vulkan_cases(bcase *t)
{
    int n = 0;
#define ADD(lbl, B, H, Hkv, Nq, Nk, D) (t[n] = (bcase){.label = lbl, .p = shape(B, H, Hkv, Nq, Nk, D)}, &t[n++].p)
    attnvk_problem *p;
    p = ADD("D32 GQA 2 several tiles", 2, 4, 2, 200, 170, 32);
    p = ADD("D40 causal+alibi", 1, 2, 1, 75, 75, 40), p->causal = 1, p->alibi = 1;
    p = ADD("D128 GQA 4 window+mask bshd", 1, 8, 2, 97, 120, 128), p->window = 1, p->window_left = 40,
    p->window_right = 8, p->mask = 1, p->mask_batch = 1, p->mask_heads = 8, p->layout = ATTNVK_LAYOUT_BSHD;
#undef ADD
    return n;
}

/* The shared cases run in f16 and bf16 by default (indices into cases()): GQA
 * causal bshd, sinks+window+softcap MQA, Dk 192/Dv 128 (each new shape or
 * feature set is a pipeline lavapipe compiles: ~1 s; the 16-bit types share
 * everything but the loads and stores with f32). */
static const int half_subset[] = {1, 8, 9};

static int finish(int passed, int failed)
{
    if (avk_vk_validation_enabled()) {
        const unsigned errors = avk_vk_validation_errors();
        printf("%s validation errors: %u\n", errors ? "FAIL" : "ok  ", errors);
        errors ? ++failed : ++passed;
    }
    const int rc = avk_test_finish(passed, failed);
    printf("test_vulkan_backward: %s\n", rc ? "FAIL" : "PASS");
    return rc;
}

static int matrix_emulated(attnvk_device *dev, uint64_t seed);

int main(int argc, char **argv)
{
    const int matrix_emu = argc > 1 && !strcmp(argv[1], "--matrix-emu");
    if (argc > 1 && !matrix_emu) {
        fprintf(stderr, "test_vulkan_backward: unknown argument '%s' (--matrix-emu)\n", argv[1]);
        return 2;
    }
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_VULKAN);
    if (!dev) {
        printf("skipped: no Vulkan device\n");
        attnvk_context_destroy(ctx);
        return avk_test_finish(0, 0);
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    if (info) printf("device: %s (%s), validation %s\n", info->name, info->architecture, avk_vk_validation_enabled() ? "on" : "off");
    if (matrix_emu) {
        const int rc = matrix_emulated(dev, seed);
        attnvk_context_destroy(ctx);
        return rc;
    }
    bcase t[32];
    const int shared = cases(t), n = shared + vulkan_cases(t + shared);
    const int all = getenv("ATTNVK_TEST_BACKWARD_ALL") != NULL;
    int passed = 0, failed = 0;
    for (int i = 0; i < n; ++i) run_case(dev, &t[i], ATTNVK_F32, NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    const attnvk_dtype halves[] = {ATTNVK_F16, ATTNVK_BF16};
    for (int d = 0; d < 2; ++d) {
        const int count = all ? n : (int)(sizeof half_subset / sizeof *half_subset);
        for (int c = 0; c < count; ++c) {
            const int i = all ? c : half_subset[c];
            run_case(dev, &t[i], halves[d], NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
        }
    }
    deterministic(dev, seed) ? ++passed : ++failed;
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return finish(passed, failed);
}

/* --matrix-emu: the matrix body (f16) through the emulated matrices that coopmat-emu's
 * forward picks, each case checked to have run it: the shared cases whose head dims it
 * takes (multiples of 16 up to 128; four pipelines, ~10 s each on lavapipe), several
 * tiles each way, with the dQ pass (ATTNVK_VK_BWD_DQ=kernel), P and dS in the accumulators
 * (two cases staged through shared memory, two with two strips a subgroup); a subset again with dQ by
 * atomics (ATTNVK_VK_BWD_DQ=atomic), D=64 by default (the dQ pass; atomics with P and dS staged),
 * then two runs bit-identical */
static int matrix_emulated(attnvk_device *dev, uint64_t seed)
{
    bcase t[32];
    const int shared = cases(t);
    t[shared] = (bcase){.label = "D64 GQA 2 several tiles", .p = shape(2, 4, 2, 200, 170, 64)};
    static const int subset[] = {0, 1, 2, 5, 6, 7, 8, 10};
    int passed = 0, failed = 0;
    backward_expect_variant = "bwd-coopmat-emu";
    /* the dQ pass by name (D=64's default with P and dS staged is dQ by atomics where the device has them) */
    setenv("ATTNVK_VK_BWD_DQ", "kernel", 1);
    backward_expect_params = " pass_ms="; /* each pass's device time, for tuning */
    for (size_t c = 0; c < sizeof subset / sizeof *subset; ++c) {
        const int i = subset[c];
        run_case(dev, &t[i], ATTNVK_F16, "coopmat-emu", seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    }
    run_case(dev, &t[shared], ATTNVK_F16, "coopmat-emu", seed + 7) ? ++passed : ++failed;
    /* P and dS staged through shared memory (ATTNVK_VK_BWD_SCORES=staged: where a device's
     * accumulator layout is not the probed one); the rest keep them in the accumulators */
    setenv("ATTNVK_VK_BWD_SCORES", "staged", 1);
    backward_expect_params = "scores=staged";
    run_case(dev, &t[5], ATTNVK_F16, "coopmat-emu", seed + 23) ? ++passed : ++failed;
    setenv("ATTNVK_VK_BWD_DQ", "atomic", 1);
    run_case(dev, &t[shared], ATTNVK_F16, "coopmat-emu", seed + 29) ? ++passed : ++failed;
    setenv("ATTNVK_VK_BWD_DQ", "kernel", 1);
    unsetenv("ATTNVK_VK_BWD_SCORES");
    /* two strips a subgroup (ATTNVK_VK_BWD_TILES strips=2: each streamed matrix load serves both) */
    setenv("ATTNVK_VK_BWD_TILES", "nsg=2,stream=16,dq_nsg=2,dq_stream=16,strips=2,dq_strips=2", 1);
    backward_expect_params = " strips=2";
    run_case(dev, &t[8], ATTNVK_F16, "coopmat-emu", seed + 31) ? ++passed : ++failed;
    setenv("ATTNVK_VK_BWD_DQ", "atomic", 1);
    run_case(dev, &t[2], ATTNVK_F16, "coopmat-emu", seed + 37) ? ++passed : ++failed;
    setenv("ATTNVK_VK_BWD_DQ", "kernel", 1);
    unsetenv("ATTNVK_VK_BWD_TILES");
    backward_expect_params = "scores=registers";
    /* the double-buffered tiles (ATTNVK_VK_BWD_TILES stages=2: not a default anywhere yet) */
    setenv("ATTNVK_VK_BWD_TILES", "nsg=4,stream=16,dq_nsg=4,dq_stream=16,stages=2", 1);
    run_case(dev, &t[shared], ATTNVK_F16, "coopmat-emu", seed + 11) ? ++passed : ++failed;
    unsetenv("ATTNVK_VK_BWD_TILES");
    /* dQ by atomics inside dK/dV (ATTNVK_VK_BWD_DQ=atomic): layouts, GQA/MQA, D128, the score
     * mods, ragged keys, several tiles; the deterministic mode still runs the dQ pass */
    setenv("ATTNVK_VK_BWD_DQ", "atomic", 1);
    backward_expect_params = "dq=atomic";
    static const int atomic_subset[] = {1, 2, 8, 10};
    for (size_t c = 0; c < sizeof atomic_subset / sizeof *atomic_subset; ++c) {
        const int i = atomic_subset[c];
        run_case(dev, &t[i], ATTNVK_F16, "coopmat-emu", seed + 41 * (uint64_t)i) ? ++passed : ++failed;
    }
    run_case(dev, &t[shared], ATTNVK_F16, "coopmat-emu", seed + 13) ? ++passed : ++failed;
    unsetenv("ATTNVK_VK_BWD_DQ"); /* the defaults at D=64: the dQ pass with P and dS in registers, */
    backward_expect_params = "dq=kernel";
    run_case(dev, &t[shared], ATTNVK_F16, "coopmat-emu", seed + 19) ? ++passed : ++failed;
    setenv("ATTNVK_VK_BWD_SCORES", "staged", 1); /* the table's atomic row with them staged */
    backward_expect_params = "dq=atomic";
    run_case(dev, &t[shared], ATTNVK_F16, "coopmat-emu", seed + 43) ? ++passed : ++failed;
    unsetenv("ATTNVK_VK_BWD_SCORES");
    setenv("ATTNVK_VK_BWD_DQ", "atomic", 1);
    backward_deterministic = 1, backward_expect_params = "dq=kernel";
    run_case(dev, &t[shared], ATTNVK_F16, "coopmat-emu", seed + 17) ? ++passed : ++failed;
    backward_deterministic = 0, backward_expect_params = NULL;
    backward_expect_variant = NULL;
    const attnvk_kernel_options emu = {.variant = "coopmat-emu"};
    deterministic_opts(dev, &emu, ATTNVK_F16, seed) ? ++passed : ++failed; /* atomics asked for, determinism wins */
    unsetenv("ATTNVK_VK_BWD_DQ");
    attnvk_device_close(dev);
    return finish(passed, failed);
}
