/* f16/bf16 conversion (round to nearest even), packing, seeded normal inputs. */
#include "core/numeric.h"
#include "core/parallel.h"
#include "attnvk/attnvk.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* Inf or NaN (NaN keeps a quiet payload bit) */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: Inf */
    if (absx < 0x38800000u) { /* subnormal half or zero */
        float a = bits_f32(absx);
        /* scale so the half subnormal unit (2^-24) becomes 1, round to nearest even */
        float scaled = a * 16777216.0f;
        uint32_t m = (uint32_t)nearbyintf(scaled);
        return (uint16_t)(sign | m);
    }
    /* rebias the exponent (127 -> 15), then round to nearest even without a branch:
     * + 0xfff + the kept lsb carries exactly past a half or a tie with an odd lsb
     * (a carry into the exponent is correct) */
    uint32_t r = absx - (112u << 23);
    r += 0xfffu + ((r >> 13) & 1u);
    return (uint16_t)(sign | (r >> 13));
}

static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        float v = (float)mant / 16777216.0f; /* mant * 2^-24 */
        return sign ? -v : v;
    }
    if (exp == 31) return bits_f32(sign | 0x7f800000u | (mant << 13));
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t attnvk_f32_to_f16(float f) { return f32_to_f16(f); }

float attnvk_f16_to_f32(uint16_t h) { return f16_to_f32(h); }

uint16_t attnvk_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)((x + rounding) >> 16);
}

float attnvk_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* Element-wise conversions run over the host's threads: the bench packs
 * gigabytes of K/V per implementation (a 128k-key decode case is 2^31 values). */
typedef struct convert_job {
    attnvk_dtype d;
    const void *src;
    void *dst;
} convert_job;

enum { CONVERT_MIN_ITEMS = 1 << 20 };

static void pack_slice(void *ctx, size_t begin, size_t end)
{
    const convert_job *j = ctx;
    const float *src = j->src;
    uint16_t *h = j->dst;
    switch (j->d) {
    case ATTNVK_F32: memcpy((float *)j->dst + begin, src + begin, (end - begin) * sizeof(float)); break;
    case ATTNVK_F16: for (size_t i = begin; i < end; ++i) h[i] = attnvk_f32_to_f16(src[i]); break;
    case ATTNVK_BF16: for (size_t i = begin; i < end; ++i) h[i] = attnvk_f32_to_bf16(src[i]); break;
    }
}

void attnvk_pack(attnvk_dtype d, const float *src, void *dst, size_t n)
{
    convert_job j = {d, src, dst};
    avk_parallel_for(n, CONVERT_MIN_ITEMS, 1, pack_slice, &j);
}

static void unpack_slice(void *ctx, size_t begin, size_t end)
{
    const convert_job *j = ctx;
    const uint16_t *h = j->src;
    float *dst = j->dst;
    switch (j->d) {
    case ATTNVK_F32: memcpy(dst + begin, (const float *)j->src + begin, (end - begin) * sizeof(float)); break;
    case ATTNVK_F16: for (size_t i = begin; i < end; ++i) dst[i] = attnvk_f16_to_f32(h[i]); break;
    case ATTNVK_BF16: for (size_t i = begin; i < end; ++i) dst[i] = attnvk_bf16_to_f32(h[i]); break;
    }
}

void attnvk_unpack(attnvk_dtype d, const void *src, float *dst, size_t n)
{
    convert_job j = {d, src, dst};
    avk_parallel_for(n, CONVERT_MIN_ITEMS, 1, unpack_slice, &j);
}

static void round_slice(void *ctx, size_t begin, size_t end)
{
    const convert_job *j = ctx;
    float *x = j->dst;
    switch (j->d) {
    case ATTNVK_F32: break;
    case ATTNVK_F16: for (size_t i = begin; i < end; ++i) x[i] = attnvk_f16_to_f32(attnvk_f32_to_f16(x[i])); break;
    case ATTNVK_BF16: for (size_t i = begin; i < end; ++i) x[i] = attnvk_bf16_to_f32(attnvk_f32_to_bf16(x[i])); break;
    }
}

void attnvk_round_to_dtype(attnvk_dtype d, float *x, size_t n)
{
    if (d == ATTNVK_F32) return;
    convert_job j = {d, x, x};
    avk_parallel_for(n, CONVERT_MIN_ITEMS, 1, round_slice, &j);
}

/* The seeded normal generator: value i comes from splitmix64's output at
 * counter i (a rare rejection draws more from a stream keyed by that output),
 * so any slicing of [0, n) over any number of threads gives the same array.
 * Normals by the ziggurat (Marsaglia & Tsang; Doornik's ZIGNOR form: 128
 * layers, the layer from the low 7 bits and the abscissa from the top 53 of
 * one draw, so the two are independent): ~99% of values cost one draw, a
 * multiply and a compare, against a log, a sqrt and a sin/cos pair a value
 * pair for Box-Muller. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

enum { ZIG_LAYERS = 128 };
static const double zig_r = 3.442619855899, zig_v = 9.91256303526217e-3; /* the tail's start, a layer's area */
static double zig_x[ZIG_LAYERS + 1], zig_ratio[ZIG_LAYERS];
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_init(void)
{
    double f = exp(-0.5 * zig_r * zig_r);
    zig_x[0] = zig_v / f; /* the base layer: a box of area v holding the tail too */
    zig_x[1] = zig_r;
    zig_x[ZIG_LAYERS] = 0;
    for (int i = 2; i < ZIG_LAYERS; ++i) {
        zig_x[i] = sqrt(-2 * log(zig_v / zig_x[i - 1] + f));
        f = exp(-0.5 * zig_x[i] * zig_x[i]);
    }
    for (int i = 0; i < ZIG_LAYERS; ++i) zig_ratio[i] = zig_x[i + 1] / zig_x[i];
}

static double uniform_open0(uint64_t *s) { return ((splitmix64(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0); } /* (0, 1] */

static double normal_slow(uint64_t h, double u, unsigned layer)
{
    uint64_t s = h ^ 0x6a09e667f3bcc909ull; /* this value's own stream for the extra draws */
    for (;;) {
        if (layer == 0) { /* the tail past r */
            double x, y;
            do {
                x = log(uniform_open0(&s)) / zig_r;
                y = log(uniform_open0(&s));
            } while (-2 * y < x * x);
            return u < 0 ? x - zig_r : zig_r - x;
        }
        double x = u * zig_x[layer]; /* in the layer's wedge: accept under the density */
        double f0 = exp(-0.5 * (zig_x[layer] * zig_x[layer] - x * x));
        double f1 = exp(-0.5 * (zig_x[layer + 1] * zig_x[layer + 1] - x * x));
        if (f0 + uniform_open0(&s) * (f1 - f0) < 1.0) return x;
        h = splitmix64(&s);
        layer = (unsigned)(h & (ZIG_LAYERS - 1));
        u = (double)(h >> 11) * (1.0 / 4503599627370496.0) - 1.0; /* [-1, 1) */
        if (fabs(u) < zig_ratio[layer]) return u * zig_x[layer];
    }
}

static inline float normal_at(uint64_t s0, size_t i)
{
    uint64_t s = s0 + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    uint64_t h = splitmix64(&s);
    unsigned layer = (unsigned)(h & (ZIG_LAYERS - 1));
    double u = (double)(h >> 11) * (1.0 / 4503599627370496.0) - 1.0; /* [-1, 1) */
    if (fabs(u) < zig_ratio[layer]) return (float)(u * zig_x[layer]);
    return (float)normal_slow(h, u, layer);
}

typedef struct random_job {
    attnvk_dtype d;
    float *x;
    void *packed;
    uint64_t s0;
} random_job;

/* Values [begin, end): generated, rounded to the dtype, and packed, in one pass. */
static void fill_random_slice(void *ctx, size_t begin, size_t end)
{
    const random_job *j = ctx;
    float *x = j->x;
    uint16_t *h = j->packed;
    switch (j->d) {
    case ATTNVK_F32:
        for (size_t i = begin; i < end; ++i) x[i] = normal_at(j->s0, i);
        if (j->packed) memcpy((float *)j->packed + begin, x + begin, (end - begin) * sizeof(float));
        break;
    case ATTNVK_F16:
        for (size_t i = begin; i < end; ++i) {
            uint16_t v = f32_to_f16(normal_at(j->s0, i));
            x[i] = f16_to_f32(v);
            if (h) h[i] = v;
        }
        break;
    case ATTNVK_BF16:
        for (size_t i = begin; i < end; ++i) {
            uint16_t v = attnvk_f32_to_bf16(normal_at(j->s0, i));
            x[i] = attnvk_bf16_to_f32(v);
            if (h) h[i] = v;
        }
        break;
    }
}

void avk_fill_random_dtype(attnvk_dtype d, float *x, void *packed, size_t n, uint64_t seed)
{
    pthread_once(&zig_once, zig_init);
    random_job j = {d, x, packed, seed * 0x2545f4914f6cdd1dull + 1};
    avk_parallel_for(n, (size_t)1 << 16, 1, fill_random_slice, &j);
}

void attnvk_fill_random(float *x, size_t n, uint64_t seed) { avk_fill_random_dtype(ATTNVK_F32, x, NULL, n, seed); }
