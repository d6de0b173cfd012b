/* The CPU device's backward pass (issue #18) against the float64 reference:
 * attnvk_attention_backward_host (forward with LSE, then attnvk_kernel_backward,
 * every output poisoned with NaN first) on fresh random inputs, dQ, dK, dV and
 * d(sinks) each within attnvk_backward_tolerance (rel-L2; NaN never passes),
 * over GQA/MQA, causal with Nq != Nk both ways and both alignments, odd
 * lengths, D 64/128/256, Dk 192/Dv 128, windows, softcap, ALiBi, masks,
 * sinks and ragged lengths, in f32, f16 and bf16. Then: two runs are
 * bit-identical; the oracle's own variant; the refusals (UNSUPPORTED or
 * INVALID_ARGUMENT with one line), including a GPU API without a backward.
 * The cases live in tests/common/backward_cases.h (the GPU tests' too). */
#include "backward_cases.h"

/* A refusal: status want and a one-line message holding frag. */
static int refused(const char *label, attnvk_status got, attnvk_status want, const char *frag)
{
    const char *msg = attnvk_last_error();
    const int ok = got == want && strstr(msg, frag) && !strchr(msg, '\n');
    printf("%s refuses %s: %s: %s\n", ok ? "ok  " : "FAIL", label, attnvk_status_name(got), msg);
    return ok;
}

/* Bad buffers and options through attnvk_kernel_backward itself. */
static int refusals(attnvk_device *dev, int *passed)
{
    int failed = 0;
    attnvk_problem p = shape(1, 2, 1, 8, 8, 16);
    attnvk_kernel *k = NULL;
    attnvk_buffer *b[9] = {0};
    const size_t sizes[9] = {2048, 1024, 1024, 2048, 64, 2048, 2048, 1024, 1024}; /* q k v o lse dO dq dk dv (f32) */
    int ok = attnvk_kernel_prepare(dev, &p, NULL, &k, NULL) == ATTNVK_OK;
    for (int i = 0; i < 9 && ok; ++i) ok = attnvk_buffer_create(dev, sizes[i], &b[i]) == ATTNVK_OK;
    if (!ok) {
        printf("FAIL refusal setup: %s\n", attnvk_last_error());
        return 1;
    }
    attnvk_tensors t = {.q = b[0], .k = b[1], .v = b[2], .o = b[3], .lse = b[4]};
    attnvk_grad_tensors g = {.d_o = b[5], .dq = b[6], .dk = b[7], .dv = b[8]};
    int r;
    r = refused("a small dO", attnvk_kernel_backward(k, &t, &(attnvk_grad_tensors){.d_o = b[4], .dq = b[6], .dk = b[7], .dv = b[8]}, NULL, NULL),
                ATTNVK_ERROR_INVALID_ARGUMENT, "dO buffer holds");
    r ? ++*passed : ++failed;
    t.lse = NULL;
    r = refused("no LSE", attnvk_kernel_backward(k, &t, &g, NULL, NULL), ATTNVK_ERROR_INVALID_ARGUMENT, "LSE");
    r ? ++*passed : ++failed;
    t.lse = b[4];
    attnvk_backward_options bad = {.struct_size = 0};
    r = refused("struct_size 0", attnvk_kernel_backward(k, &t, &g, &bad, NULL), ATTNVK_ERROR_INVALID_ARGUMENT, "struct_size");
    r ? ++*passed : ++failed;
    r = refused("missing dQ", attnvk_kernel_backward(k, &t, &(attnvk_grad_tensors){.d_o = b[5], .dk = b[7], .dv = b[8]}, NULL, NULL),
                ATTNVK_ERROR_INVALID_ARGUMENT, "dQ");
    r ? ++*passed : ++failed;
    attnvk_kernel_destroy(k);
    k = NULL;
    /* OpenBLAS is a forward baseline only */
    attnvk_kernel_options blas = {.implementation = "openblas"};
    if (attnvk_kernel_prepare(dev, &p, &blas, &k, NULL) == ATTNVK_OK) {
        r = refused("openblas", attnvk_kernel_backward(k, &t, &g, NULL, NULL), ATTNVK_ERROR_UNSUPPORTED, "no backward pass");
        r ? ++*passed : ++failed;
        attnvk_kernel_destroy(k);
    }
    /* a paged cache */
    attnvk_problem paged = p;
    paged.page_size = 4, paged.num_pages = 2, paged.max_pages = 2;
    if (attnvk_kernel_prepare(dev, &paged, NULL, &k, NULL) == ATTNVK_OK) {
        r = refused("a paged cache", attnvk_kernel_backward(k, &t, &g, NULL, NULL), ATTNVK_ERROR_UNSUPPORTED, "paged");
        r ? ++*passed : ++failed;
        attnvk_kernel_destroy(k);
    }
    for (int i = 0; i < 9; ++i) attnvk_buffer_destroy(b[i]);
    return failed;
}

int main(void)
{
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_CPU);
    if (!dev) return 1;
    bcase t[16];
    const int n = cases(t);
    int passed = 0, failed = 0;
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    for (int d = 0; d < 3; ++d)
        for (int i = 0; i < n; ++i) run_case(dev, &t[i], dtypes[d], NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    run_case(dev, &t[8], ATTNVK_F32, "reference-f64", seed) ? ++passed : ++failed;
    deterministic(dev, seed) ? ++passed : ++failed;
    failed += refusals(dev, &passed);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed + avk_test_failures);
}
