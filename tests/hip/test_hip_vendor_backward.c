/* rocBLAS's materialised-P backward ("rocblas" implementation, issue #18;
 * hip_rocblas_backward.c) on an AMD GPU against the float64 reference, as
 * test_cuda_vendor.c checks cuBLAS's: the rocblas forward writes O and the
 * LSE, its backward reads them. The shared backward cases
 * (tests/common/backward_cases.h) but ragged lengths (the unfused softmax
 * takes none), in f32, f16 and bf16, the 16-bit ones again with
 * `deterministic` (rocBLAS's GEMMs without atomics), then two deterministic
 * runs bit-identical; and a shape whose scores cannot fit still refused by
 * prepare with the bytes. Fresh random inputs, gradients poisoned with NaN
 * first, rel-L2 per gradient within attnvk_backward_tolerance.
 * Exit 77 (skipped) without a HIP device or without rocBLAS: always so in
 * CI, where the backward's kernels are build-verified (test_hip_objects,
 * test_hip_rtc, test_hip_isa).
 * Run alone: build/tests/hip/test_hip_vendor_backward (ATTNVK_TEST_SEED=N
 * for other inputs); the last line is "N passed, M failed". */
#include "backward_cases.h"

enum { SKIP = 77 };

/* A valid shape whose scores (B*H*Nq*Nk f32) no device holds: UNSUPPORTED naming the bytes. */
static int huge_refused(attnvk_device *dev, const attnvk_kernel_options *o)
{
    attnvk_problem huge = shape(1, 64, 64, 131072, 131072, 128);
    huge.dtype = ATTNVK_F16;
    attnvk_kernel *k = NULL;
    const attnvk_status s = attnvk_kernel_prepare(dev, &huge, o, &k, NULL);
    const int ok = s == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "bytes");
    printf("%s rocblas huge scores refused: %s: %s\n", ok ? "ok  " : "FAIL", attnvk_status_name(s),
           attnvk_last_error());
    attnvk_kernel_destroy(k);
    return ok;
}

int main(void)
{
    (void)run_case, (void)deterministic; /* the shared header's runs of attnvk's own kernel */
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_HIP);
    if (!dev) {
        printf("skipped: no HIP device\n");
        attnvk_context_destroy(ctx);
        return SKIP;
    }
    if (!backward_impl_available(dev, "rocblas")) {
        attnvk_device_close(dev);
        attnvk_context_destroy(ctx);
        return SKIP;
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    if (info) printf("device: %s (%s)\n", info->name, info->architecture);
    const attnvk_kernel_options opts = {.implementation = "rocblas"};
    bcase t[32];
    int n = cases(t);
    /* beyond the shared list: a bench-like shape, and GQA in BSHD without causal */
    t[n] = (bcase){.label = "D128 causal Nq=Nk 256 (bench-like)", .p = shape(2, 4, 4, 256, 256, 128)};
    t[n++].p.causal = 1;
    t[n] = (bcase){.label = "D64 GQA 2 non-causal bshd", .p = shape(1, 4, 2, 128, 256, 64)};
    t[n++].p.layout = ATTNVK_LAYOUT_BSHD;
    int passed = 0, failed = 0;
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    for (int det = 0; det < 2; ++det) {
        backward_deterministic = det;
        for (int d = det; d < 3; ++d) /* deterministic: the 16-bit types */
            for (int i = 0; i < n; ++i) {
                if (t[i].p.ragged) continue; /* the unfused softmax takes no sequence lengths */
                const uint64_t s = seed + (det ? 37 : 31) * (uint64_t)i;
                run_case_opts(dev, &t[i], dtypes[d], &opts, s) ? ++passed : ++failed;
            }
    }
    backward_deterministic = 0;
    deterministic_opts(dev, &opts, ATTNVK_BF16, seed) ? ++passed : ++failed;
    huge_refused(dev, &opts) ? ++passed : ++failed;
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
