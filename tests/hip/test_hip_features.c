/* The HIP backend against the float64 CPU reference, on an AMD GPU: the
 * shared feature matrix for f16, bf16 and f32 (attnvk's kernel, each
 * variant, forced split-KV) and the rocBLAS baseline, plus the test-only
 * skip-last-tile flag, which must be caught. Without an AMD GPU it prints
 * why and passes: there is nothing to run (test_hip_objects checks the reason). */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static int passed, failed;
static uint64_t seed;

static void feature_matrix(attnvk_device *dev, attnvk_dtype dt, const attnvk_kernel_options *o, const char *tag,
                           int allow_unsupported)
{
    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(dt, cases, labels, 64);
    for (int i = 0; i < n; ++i) {
        char label[96];
        snprintf(label, sizeof label, "%s %s", tag, labels[i]);
        if (avk_test_run_case(dev, &cases[i], o, label, seed + (uint64_t)i, allow_unsupported)) ++passed;
        else ++failed;
    }
}

static void skip_tile_case(attnvk_device *dev, const char *impl)
{
    attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 96, .seq_kv = 200, .head_dim = 64, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD};
    float *q, *k, *v;
    avk_test_inputs(&p, seed + 303, &q, &k, &v);
    float *o = malloc(attnvk_q_elements(&p) * sizeof *o);
    attnvk_kernel_options opts = {.implementation = impl, .test_flags = ATTNVK_TEST_SKIP_LAST_KV_TILE};
    attnvk_status s = attnvk_attention_host(dev, &p, &opts, q, k, v, o, NULL, NULL, NULL);
    attnvk_check c = {0};
    if (s == ATTNVK_OK) c = attnvk_check_output(&p, q, k, v, o, NULL, 0);
    int ok = s == ATTNVK_OK && !c.passed;
    printf("%s %s skip-last-tile: check %s (rel_l2 %.2e)\n", ok ? "ok  " : "FAIL", impl,
           c.passed ? "passed (should not)" : "failed as intended", c.rel_l2);
    if (ok) ++passed;
    else ++failed;
    free(q), free(k), free(v), free(o);
}

int main(void)
{
    seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("context: %s\n", attnvk_last_error());
        return 1;
    }
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_HIP);
    if (!dev) {
        const char *reason = "";
        attnvk_api_status(ctx, ATTNVK_API_HIP, &reason);
        printf("skip: no HIP device (%s)\n", reason);
        attnvk_context_destroy(ctx);
        return avk_test_finish(0, 0);
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    printf("device: %s (%s), default %s\n", info->name, info->architecture, info->default_variant);
    attnvk_kernel_options defaults = {0};
    feature_matrix(dev, ATTNVK_F16, &defaults, "f16", 0);
    feature_matrix(dev, ATTNVK_BF16, &defaults, "bf16", 0);
    feature_matrix(dev, ATTNVK_F32, &defaults, "f32", 0);
    static const char *const variants[] = {"mma16", "mma16-qs", "simt"};
    for (size_t i = 0; i < sizeof variants / sizeof *variants; ++i) {
        attnvk_kernel_options o = {.variant = variants[i]};
        char tag[32];
        snprintf(tag, sizeof tag, "bf16 %s", variants[i]);
        feature_matrix(dev, ATTNVK_BF16, &o, tag, 1);
    }
    attnvk_kernel_options split3 = {.split_kv = 3};
    feature_matrix(dev, ATTNVK_F16, &split3, "f16 split_kv=3", 1);
    attnvk_kernel_options rocblas = {.implementation = "rocblas"};
    feature_matrix(dev, ATTNVK_F16, &rocblas, "rocblas f16", 1);
    feature_matrix(dev, ATTNVK_F32, &rocblas, "rocblas f32", 1);
    skip_tile_case(dev, "attnvk");
    attnvk_impl_info impls[4];
    int n = attnvk_device_implementations(dev, impls, 4);
    if (n > 1 && impls[1].available) skip_tile_case(dev, "rocblas");
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
