/* The `attnvk peak` kernels (native/peak.cu) compile with hipRTC (no GPU):
 * MFMA on gfx90a, no matrix kernel on gfx1030 (the host reports "none").
 * Skipped without hipRTC. (This machine's hipRTC 5.2 crashes on gfx940 and has
 * no gfx11 device libraries; hipcc builds of peak.cu for those show v_mfma / v_wmma.) */
#include "hip/hip_modules.h"
#include "hip/hip_peak.h"
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
    struct { const char *arch, *matrix; } cases[] = {{"gfx90a", "avk_peak_mfma"}, {"gfx1030", NULL}};
    int passed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        avk_hip_source src;
        char *text = NULL;
        attnvk_status s = avk_hip_peak_source_text(&src, &text);
        void *code = NULL;
        size_t size = 0;
        if (s == ATTNVK_OK) s = avk_hip_rtc_compile(cases[i].arch, &src, &code, &size);
        free(text);
        if (s == ATTNVK_ERROR_UNSUPPORTED || s == ATTNVK_ERROR_UNAVAILABLE) {
            printf("skip: %s\n", attnvk_last_error());
            return avk_test_finish(1, 0);
        }
        EXPECT(s == ATTNVK_OK, "hipRTC peak.cu for %s: %s", cases[i].arch, attnvk_last_error());
        if (s != ATTNVK_OK) continue;
        int ok = contains(code, size, "avk_peak_copy") && contains(code, size, "avk_peak_fma_f16") &&
                 (cases[i].matrix ? contains(code, size, cases[i].matrix)
                                  : !contains(code, size, "avk_peak_mfma") && !contains(code, size, "avk_peak_wmma"));
        EXPECT(ok, "%s: kernels", cases[i].arch);
        printf("%s hipRTC peak.cu %-8s %7zu bytes, matrix kernel %s\n", ok ? "ok  " : "FAIL", cases[i].arch, size,
               cases[i].matrix ? cases[i].matrix : "none");
        passed += ok;
        free(code);
    }
    return avk_test_finish(passed, avk_test_failures);
}
