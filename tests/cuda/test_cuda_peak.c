/* The `attnvk peak` kernels (native/peak.cu) compile with NVRTC (no GPU) for
 * sm_80 (mma.sync) and sm_90a (wgmma too) and hold every kernel the backend
 * asks for; on a GPU, each peak is positive and the matrix path is named.
 * Skips (and passes) the parts whose library is missing. */
#include "core/peak.h"
#include "cuda/cuda_loader.h"
#include "cuda/cuda_peak.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static int contains(const void *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; ++i)
        if (memcmp((const char *)hay + i, needle, m) == 0) return 1;
    return 0;
}

int main(void)
{
    int passed = 0;
    if (!avk_nvrtc_load()) {
        printf("NVRTC unavailable (%s): compile check skipped\n", avk_nvrtc_reason());
    } else {
        const char *arches[] = {"sm_80", "sm_90a"};
        const char *kernels[] = {"avk_peak_copy", "avk_peak_fma_f32", "avk_peak_fma_f16", "avk_peak_mma", "avk_peak_wgmma"};
        for (int i = 0; i < 2; ++i) {
            void *cubin = NULL;
            size_t size = 0;
            attnvk_status s = avk_cuda_peak_compile(arches[i], &cubin, &size);
            EXPECT(s == ATTNVK_OK && size > 0, "%s: %s", arches[i], attnvk_last_error());
            for (int k = 0; s == ATTNVK_OK && k < 5; ++k)
                EXPECT(contains(cubin, size, kernels[k]), "%s: no %s", arches[i], kernels[k]);
            /* the sm_90a wgmma kernel has a body (HGMMA), sm_80's is empty */
            printf("peak kernels for %s: %zu-byte cubin\n", arches[i], size);
            free(cubin);
            passed += s == ATTNVK_OK;
        }
    }

    setenv("ATTNVK_CACHE_DIR", "peak_cuda", 1);
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return avk_test_finish(passed, avk_test_failures + 1);
    int dev_index = -1;
    if (attnvk_device_select(ctx, "cuda", &dev_index, 1) == 1) {
        avk_peak p;
        attnvk_status s = avk_peak_lookup(ctx, dev_index, AVK_PEAK_REMEASURE, &p);
        EXPECT(s == ATTNVK_OK, "lookup: %s", attnvk_last_error());
        for (int f = 0; s == ATTNVK_OK && f < AVK_PEAK_FIELD_COUNT; ++f) {
            const avk_peak_entry *e = &p.e[f];
            EXPECT(e->status == ATTNVK_OK && e->value > 0, "%s: %s", avk_peak_field_name((avk_peak_field)f), e->note);
            printf("%-8s %12.1f %s  %s\n", avk_peak_field_name((avk_peak_field)f), e->value,
                   avk_peak_field_unit((avk_peak_field)f), e->path);
        }
        passed += s == ATTNVK_OK;
    } else {
        printf("no CUDA device: measurement skipped\n");
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, avk_test_failures);
}
