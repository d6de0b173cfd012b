/* The CLBlast baseline's materialised-P backward (issue #18) on OpenCL, f32,
 * against the float64 reference: the shared backward cases (GQA both layouts,
 * causal both alignments, windows, softcap, ALiBi, masks, sinks, Dk != Dv)
 * that CLBlast's forward runs (not ragged lengths), two runs bit-identical,
 * and f16 refused as the forward refuses it. */
#include "backward_cases.h"

enum { SKIP = 77 };

int main(void)
{
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    if (!dev) {
        attnvk_context_destroy(ctx);
        return SKIP;
    }
    attnvk_impl_info impls[8];
    const int n_impl = attnvk_device_implementations(dev, impls, 8);
    int available = 0;
    for (int i = 0; i < n_impl; ++i)
        if (!strcmp(impls[i].name, "clblast")) available = impls[i].available;
    if (!available) {
        printf("clblast unavailable here\n");
        attnvk_device_close(dev);
        attnvk_context_destroy(ctx);
        return SKIP;
    }
    const attnvk_kernel_options opts = {.implementation = "clblast"};
    bcase t[16];
    const int n = cases(t);
    int passed = 0, failed = 0;
    for (int i = 0; i < n; ++i) {
        if (t[i].p.ragged) continue; /* the unfused softmax takes no sequence lengths */
        run_case_opts(dev, &t[i], ATTNVK_F32, &opts, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    }
    deterministic_opts(dev, &opts, ATTNVK_F32, seed) ? ++passed : ++failed;
    /* f16 is refused by prepare, as the forward's */
    attnvk_problem half = t[0].p;
    half.dtype = ATTNVK_F16;
    attnvk_kernel *k = NULL;
    const attnvk_status s = attnvk_kernel_prepare(dev, &half, &opts, &k, NULL);
    const int refused = s == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "f32 only");
    printf("%s f16 refused: %s: %s\n", refused ? "ok  " : "FAIL", attnvk_status_name(s), attnvk_last_error());
    refused ? ++passed : ++failed;
    attnvk_kernel_destroy(k);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
