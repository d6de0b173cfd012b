/* f16/bf16 conversions and the seeded generator. */
#include "test_util.h"
#include "core/numeric.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

    /* the normal generator's shape: a million values against the normal's
     * interval masses, higher moments and its tail past the ziggurat's r */
    enum { M = 1 << 20 };
    float *z = malloc(M * sizeof(float)), *z1 = malloc(M * sizeof(float));
    uint16_t *hz = malloc(M * sizeof(uint16_t));
    attnvk_fill_random(z, M, 7);
    double m3 = 0, m4 = 0, within[4] = {0};
    long tail = 0;
    for (int i = 0; i < M; ++i) {
        double x = z[i], ax = fabs(x);
        m3 += x * x * x;
        m4 += x * x * x * x;
        for (int k = 0; k < 4; ++k) within[k] += ax < 0.5 * (k + 1);
        tail += ax > 3.442619855899;
    }
    static const double mass[4] = {0.382925, 0.682689, 0.866386, 0.954500}; /* P(|x| < 0.5, 1, 1.5, 2) */
    int shape = fabs(m3 / M) < 0.02 && fabs(m4 / M - 3) < 0.05;
    for (int k = 0; k < 4; ++k) shape &= fabs(within[k] / M - mass[k]) < 0.003;
    /* P(|x| > 3.4426) = 5.76e-4: about 604 of 2^20 */
    shape &= tail > 500 && tail < 710;
    EXPECT(shape, "normal shape: m3 %g m4 %g masses %g %g %g %g tail %ld", m3 / M, m4 / M, within[0] / M,
           within[1] / M, within[2] / M, within[3] / M, tail);
    passed += shape;

    /* the same values on 1 thread and on 5, and the dtype pass = fill, round, pack */
    setenv("ATTNVK_CPU_THREADS", "1", 1);
    avk_fill_random_dtype(ATTNVK_F16, z1, hz, M, 99);
    setenv("ATTNVK_CPU_THREADS", "5", 1);
    avk_fill_random_dtype(ATTNVK_F16, z, NULL, M, 99);
    int same_threads = memcmp(z, z1, M * sizeof(float)) == 0;
    attnvk_fill_random(z, M, 99);
    attnvk_round_to_dtype(ATTNVK_F16, z, M);
    int same_pass = memcmp(z, z1, M * sizeof(float)) == 0;
    for (int i = 0; i < M && same_pass; ++i) same_pass = hz[i] == attnvk_f32_to_f16(z[i]);
    EXPECT(same_threads, "same values on 1 and 5 threads");
    EXPECT(same_pass, "avk_fill_random_dtype = attnvk_fill_random + attnvk_round_to_dtype + attnvk_pack");
    passed += same_threads + same_pass;
    unsetenv("ATTNVK_CPU_THREADS");
    free(z);
    free(z1);
    free(hz);
    return avk_test_finish(passed, 0);
}
