/* f16/bf16 conversions and the seeded generator. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

int main(void)
{
    int passed = 0;
    /* exact round trips for every finite half */
    int exact = 1;
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        if ((h & 0x7c00u) == 0x7c00u) continue; /* inf/nan */
        float f = attnvk_f16_to_f32((uint16_t)h);
        if (attnvk_f32_to_f16(f) != (uint16_t)h && !(f == 0 && (h & 0x7fffu) == 0)) exact = 0;
    }
    EXPECT(exact, "every finite f16 round-trips");
    passed += exact;
    EXPECT(attnvk_f32_to_f16(1.0f) == 0x3c00u, "1.0 -> 0x3c00");
    EXPECT(attnvk_f32_to_f16(65504.0f) == 0x7bffu, "max half");
    EXPECT(attnvk_f32_to_f16(65520.0f) == 0x7c00u, "overflow rounds to inf");
    EXPECT(attnvk_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00u, "tie rounds to even (down)");
    EXPECT(attnvk_f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02u, "tie rounds to even (up)");
    EXPECT(attnvk_f32_to_f16(5.96046448e-8f) == 0x0001u, "smallest subnormal");
    EXPECT(isnan(attnvk_f16_to_f32(attnvk_f32_to_f16(NAN))), "NaN stays NaN");
    EXPECT(attnvk_f32_to_bf16(1.0f) == 0x3f80u, "bf16 1.0");
    EXPECT(attnvk_bf16_to_f32(attnvk_f32_to_bf16(3.140625f)) == 3.140625f, "bf16 exact value");
    EXPECT(isnan(attnvk_bf16_to_f32(attnvk_f32_to_bf16(NAN))), "bf16 NaN");
    passed += 10;

    /* the generator: seeded, normal-ish, no zeros or constants */
    enum { N = 100000 };
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    attnvk_fill_random(a, N, 42);
    attnvk_fill_random(b, N, 42);
    double mean = 0, var = 0;
    int same = 1, zeros = 0;
    for (int i = 0; i < N; ++i) {
        same &= a[i] == b[i];
        zeros += a[i] == 0;
        mean += a[i];
    }
    mean /= N;
    for (int i = 0; i < N; ++i) var += (a[i] - mean) * (a[i] - mean);
    var /= N;
    EXPECT(same, "same seed, same numbers");
    EXPECT(zeros == 0, "no zeros (%d)", zeros);
    EXPECT(fabs(mean) < 0.02 && fabs(var - 1) < 0.03, "standard normal: mean %g var %g", mean, var);
    attnvk_fill_random(b, N, 43);
    EXPECT(a[0] != b[0] || a[1] != b[1], "different seeds differ");
    passed += 4;
    free(a);
    free(b);
    return avk_test_finish(passed, 0);
}
