/* XXH64, written from the algorithm's description: four accumulators over
 * 32-byte stripes, then the tail in 8-, 4- and 1-byte steps, then an avalanche. */
#include "core/checksum.h"

static const uint64_t prime1 = 0x9E3779B185EBCA87ull;
static const uint64_t prime2 = 0xC2B2AE3D27D4EB4Full;
static const uint64_t prime3 = 0x165667B19E3779F9ull;
static const uint64_t prime4 = 0x85EBCA77C2B2AE63ull;
static const uint64_t prime5 = 0x27D4EB2F165667C5ull;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* Explicit little-endian loads: the checksum of a file must not depend on the host. */
static uint64_t load64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

static uint64_t load32(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static uint64_t round64(uint64_t acc, uint64_t lane) { return rotl(acc + lane * prime2, 31) * prime1; }

static uint64_t merge(uint64_t acc, uint64_t lane_acc) { return (acc ^ round64(0, lane_acc)) * prime1 + prime4; }

uint64_t avk_xxh64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    const unsigned char *end = p + n;
    uint64_t acc;
    if (n >= 32) {
        uint64_t v1 = seed + prime1 + prime2, v2 = seed + prime2, v3 = seed, v4 = seed - prime1;
        for (; end - p >= 32; p += 32) {
            v1 = round64(v1, load64(p));
            v2 = round64(v2, load64(p + 8));
            v3 = round64(v3, load64(p + 16));
            v4 = round64(v4, load64(p + 24));
        }
        acc = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        acc = merge(acc, v1);
        acc = merge(acc, v2);
        acc = merge(acc, v3);
        acc = merge(acc, v4);
    } else {
        acc = seed + prime5;
    }
    acc += (uint64_t)n;
    for (; end - p >= 8; p += 8) acc = rotl(acc ^ round64(0, load64(p)), 27) * prime1 + prime4;
    if (end - p >= 4) {
        acc = rotl(acc ^ load32(p) * prime1, 23) * prime2 + prime3;
        p += 4;
    }
    for (; p < end; ++p) acc = rotl(acc ^ *p * prime5, 11) * prime1;
    acc ^= acc >> 33;
    acc *= prime2;
    acc ^= acc >> 29;
    acc *= prime3;
    acc ^= acc >> 32;
    return acc;
}
