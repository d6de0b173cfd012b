/* f16/bf16 conversion (round to nearest even), packing, seeded normal inputs. */
#include "core/parallel.h"
#include "attnvk/attnvk.h"

#include <math.h>
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

uint16_t attnvk_f32_to_f16(float f)
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
    uint32_t exp = ((absx >> 23) - 112u) << 10;
    uint32_t mant = absx & 0x7fffffu;
    uint32_t h = exp | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; /* may carry into exponent: correct */
    return (uint16_t)(sign | h);
}

float attnvk_f16_to_f32(uint16_t h)
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

/* splitmix64 stream + Box-Muller: cheap, seeded, identical on every machine. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct random_job {
    float *x;
    size_t n;
    uint64_t s0;
} random_job;

/* Values [begin, end) (begin even): the splitmix64 state only advances by a
 * constant, so a slice starts from s0 + begin steps and the whole array is
 * the same on any number of threads. */
static void fill_random_slice(void *ctx, size_t begin, size_t end)
{
    const random_job *j = ctx;
    uint64_t s = j->s0 + (uint64_t)begin * 0x9e3779b97f4a7c15ull;
    const double two_pi = 6.283185307179586;
    for (size_t i = begin; i < end; i += 2) {
        double u1 = ((splitmix64(&s) >> 11) + 1.0) * (1.0 / 9007199254740993.0); /* (0, 1] */
        double u2 = (splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
        double r = sqrt(-2.0 * log(u1));
        j->x[i] = (float)(r * cos(two_pi * u2));
        if (i + 1 < j->n) j->x[i + 1] = (float)(r * sin(two_pi * u2));
    }
}

void attnvk_fill_random(float *x, size_t n, uint64_t seed)
{
    random_job j = {x, n, seed * 0x2545f4914f6cdd1dull + 1};
    avk_parallel_for(n, (size_t)1 << 18, 2, fill_random_slice, &j);
}
