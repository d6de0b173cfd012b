/* The OpenCL backward pass (issue #18, opencl/flash_bwd.cl) against the
 * float64 reference: the shared cases (tests/common/backward_cases.h: GQA/MQA,
 * causal Nq != Nk both alignments, odd lengths, D 64/128/256, Dk 192/Dv 128,
 * windows, softcap, ALiBi, masks, sinks, ragged) in f32 and f16 (the
 * backend has no bf16), a few of this backend's own (several tiles each
 * way, GQA with a window and mask in BSHD), then two runs
 * bit-identical. Fresh random inputs, outputs poisoned with NaN first, rel-L2
 * per gradient within attnvk_backward_tolerance. On PoCL the default runs
 * every shared case in f32 and a subset covering each score feature in f16
 * (D=64 and 128);
 * ATTNVK_TEST_BACKWARD_ALL=1 runs everything in both. Then the tensor-core
 * body (ATTNVK_OPENCL_BWD_MMA=emu: mma.sync emulated) on D=64 cases, two of
 * them with two tile buffers, and two runs of it bit-identical (D=128 too with _ALL). Exits 77 (skipped)
 * without an OpenCL device. The last line is "N passed, M failed". */
#include "backward_cases.h"

#include <stdlib.h>

enum { SKIP = 77 };

/* beyond the shared list: several key and query tiles, a head dim the work-group does not divide */
static int opencl_cases(bcase *t)
{
    int n = 0;
#define ADD(lbl, B, H, Hkv, Nq, Nk, D) (t[n] = (bcase){.label = lbl, .p = shape(B, H, Hkv, Nq, Nk, D)}, &t[n++].p)
    attnvk_problem *p;
    p = ADD("GQA 2 several tiles each way", 2, 4, 2, 100, 85, 64);
    /* 16 keys x 72 columns: the last round of each item's dK/dV elements is partial */
    p = ADD("D72 causal+alibi", 1, 2, 1, 75, 75, 72), p->causal = 1, p->alibi = 1;
    p = ADD("D128 GQA 4 window+mask bshd", 1, 8, 2, 67, 90, 128), p->window = 1, p->window_left = 24,
    p->window_right = 8, p->mask = 1, p->mask_batch = 1, p->mask_heads = 8, p->layout = ATTNVK_LAYOUT_BSHD;
#undef ADD
    return n;
}

/* the shared cases run in f16 by default: each score feature at least once,
 * at D=64 and 128 (f16 changes only loads and stores; every PoCL program
 * costs seconds to build, and D=256 and Dk 192/Dv 128 run in f32) */
static int f16_default(const char *label)
{
    static const char *const picked[] = {"GQA 4 causal Nq>Nk bshd", "top-left causal Nq>Nk D128",
                                         "window+softcap GQA 2",    "mask f16 broadcast+sinks causal",
                                         "ragged causal",           "alibi+mask per batch/head (-inf)"};
    for (size_t i = 0; i < sizeof picked / sizeof *picked; ++i)
        if (!strcmp(label, picked[i])) return 1;
    return 0;
}

/* the cases the emulated tensor-core body runs (f16): D=64 ones by default */
static int mma_emulated(const char *label, int all)
{
    /* CI's PoCL builds each program for seconds: three that cover GQA, bshd, masks, sinks and several tiles */
    static const char *const d64[] = {"GQA 4 causal Nq>Nk bshd", "mask f16 broadcast+sinks causal",
                                      "GQA 2 several tiles each way", "window+softcap GQA 2", "ragged causal"};
    const size_t d64_default = 3;
    static const char *const d128[] = {"top-left causal Nq>Nk D128", "D128 GQA 4 window+mask bshd"};
    for (size_t i = 0; i < (all ? sizeof d64 / sizeof *d64 : d64_default); ++i)
        if (!strcmp(label, d64[i])) return 1;
    for (size_t i = 0; all && i < sizeof d128 / sizeof *d128; ++i)
        if (!strcmp(label, d128[i])) return 1;
    return 0;
}

int main(void)
{
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    if (!dev) {
        printf("skipped: no OpenCL device\n");
        attnvk_context_destroy(ctx);
        return SKIP;
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    if (info) printf("device: %s\n", info->name);
    const int all = getenv("ATTNVK_TEST_BACKWARD_ALL") != NULL;
    bcase t[32];
    const int shared = cases(t);
    const int n = shared + opencl_cases(t + shared);
    int passed = 0, failed = 0;
    for (int i = 0; i < n; ++i) run_case(dev, &t[i], ATTNVK_F32, NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    for (int i = 0; i < n; ++i)
        if (all || (i < shared && f16_default(t[i].label)) || i == shared + 2)
            run_case(dev, &t[i], ATTNVK_F16, NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    /* the tensor-core body (flash_bwd_mma.cl) through mma_ops.cl's emulation:
     * D=64 by default (several key and query blocks among them), D=128 too with _ALL */
    setenv("ATTNVK_OPENCL_BWD_MMA", "emu", 1);
    printf("-- the tensor-core body, emulated (ATTNVK_OPENCL_BWD_MMA=emu)\n");
    for (int i = 0; i < n; ++i)
        if (mma_emulated(t[i].label, all))
            run_case(dev, &t[i], ATTNVK_F16, NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    /* two buffers of the streamed tiles: several tiles each way, and a causal walk that skips some */
    setenv("ATTNVK_OPENCL_BWD_TILES", "stages=2", 1);
    backward_expect_params = "stages=2";
    printf("-- two stages (ATTNVK_OPENCL_BWD_TILES=stages=2)\n");
    for (int i = 0; i < n; ++i)
        if (!strcmp(t[i].label, "GQA 2 several tiles each way") || !strcmp(t[i].label, "GQA 4 causal Nq>Nk bshd"))
            run_case(dev, &t[i], ATTNVK_F16, NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    unsetenv("ATTNVK_OPENCL_BWD_TILES");
    backward_expect_params = NULL;
    deterministic_dtype(dev, seed, ATTNVK_F16) ? ++passed : ++failed;
    unsetenv("ATTNVK_OPENCL_BWD_MMA");
    deterministic_dtype(dev, seed, ATTNVK_F16) ? ++passed : ++failed;
    if (all) deterministic_dtype(dev, seed, ATTNVK_F32) ? ++passed : ++failed;
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    const int rc = avk_test_finish(passed, failed);
    printf("test_opencl_backward: %s\n", rc ? "FAIL" : "PASS");
    return rc;
}
