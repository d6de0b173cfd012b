/* The CUDA read-bandwidth kernel compiles with NVRTC (no GPU) for sm_80 and
 * sm_90a; on a GPU, the measured number is positive and cached: a second
 * lookup hits. Skips (and passes) the parts whose library is missing. */
#include "cuda/cuda_bandwidth.h"
#include "cuda/cuda_loader.h"
#include "test_util.h"

#include <stdlib.h>

int main(void)
{
    int passed = 0;
    if (!avk_nvrtc_load()) {
        printf("NVRTC unavailable (%s): compile check skipped\n", avk_nvrtc_reason());
    } else {
        const char *arches[] = {"sm_80", "sm_90a"};
        for (int i = 0; i < 2; ++i) {
            void *cubin = NULL;
            size_t size = 0;
            attnvk_status s = avk_cuda_bandwidth_compile(arches[i], &cubin, &size);
            EXPECT(s == ATTNVK_OK && size > 0, "%s: %s", arches[i], attnvk_last_error());
            printf("read-bandwidth kernel for %s: %zu-byte cubin\n", arches[i], size);
            free(cubin);
            passed += s == ATTNVK_OK;
        }
    }

    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return avk_test_finish(passed, avk_test_failures + 1);
    int dev_index = -1;
    if (attnvk_device_select(ctx, "cuda", &dev_index, 1) == 1) {
        attnvk_device *dev = NULL;
        EXPECT(attnvk_device_open(ctx, dev_index, &dev) == ATTNVK_OK, "open: %s", attnvk_last_error());
        double gbps = 0, again = 0;
        int cached = 0;
        if (dev) {
            attnvk_status s = attnvk_device_read_bandwidth(dev, 1, &gbps, &cached);
            EXPECT(s == ATTNVK_OK && gbps > 1.0, "measure: %s (%g GB/s)", attnvk_last_error(), gbps);
            printf("%s: %.1f GB/s read (%s)\n", attnvk_device_info_of(dev)->name, gbps,
                   cached ? "cached" : "measured");
            s = attnvk_device_read_bandwidth(dev, 0, &again, &cached);
            EXPECT(s == ATTNVK_OK && cached && again > 0.999 * gbps && again < 1.001 * gbps,
                   "second lookup hits the cache: %g vs %g", again, gbps);
            passed += s == ATTNVK_OK;
            attnvk_device_close(dev);
        }
    } else {
        printf("no CUDA device: measurement skipped\n");
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, avk_test_failures);
}
