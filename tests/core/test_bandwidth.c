/* The measured-bandwidth cache (core/bandwidth.h): a device is measured once
 * per driver; another driver is measured again; a corrupt file is measured
 * again and rewritten; with measuring off a miss is a clear error. Plus the
 * host measurement the CPU backend uses. */
#include "test_util.h"
#include "core/bandwidth.h"
#include "core/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_meter {
    int calls;
    double value;
} fake_meter;

static attnvk_status fake_measure(void *ctx, double *gbps)
{
    fake_meter *m = ctx;
    ++m->calls;
    *gbps = m->value;
    return ATTNVK_OK;
}

/* Starts from no cache file for info (a rerun finds the last run's). */
static void forget(const attnvk_device_info *info)
{
    char path[1024];
    if (avk_cache_path("bandwidth", avk_bandwidth_key(info), "txt", path, sizeof path)) remove(path);
}

static void corrupt(const char *path)
{
    FILE *f = fopen(path, "r+b");
    if (!f) return;
    fseek(f, -3, SEEK_END); /* inside the payload: the checksum no longer matches */
    fputc('9', f);
    fclose(f);
}

int main(void)
{
    setenv("ATTNVK_CACHE_DIR", "bandwidth_unit", 1);
    attnvk_device_info a = {.api = ATTNVK_API_VULKAN, .has_uuid = 1};
    snprintf(a.name, sizeof a.name, "Fake GPU");
    snprintf(a.driver_version, sizeof a.driver_version, "1.0.0");
    a.uuid[0] = 7;
    char path[1024];
    avk_cache_path("bandwidth", avk_bandwidth_key(&a), "txt", path, sizeof path);
    forget(&a);

    fake_meter m = {0, 812.5};
    double g = 0;
    int cached = -1;
    EXPECT(avk_bandwidth_lookup(&a, 0, fake_measure, &m, &g, &cached) == ATTNVK_ERROR_UNAVAILABLE,
           "a miss with measuring off is UNAVAILABLE");
    EXPECT(m.calls == 0, "measuring off never measures (%d calls)", m.calls);

    EXPECT(avk_bandwidth_lookup(&a, 1, fake_measure, &m, &g, &cached) == ATTNVK_OK, "first lookup measures");
    EXPECT(m.calls == 1 && g == 812.5 && cached == 0, "measured once: calls %d, %g GB/s, cached %d", m.calls, g, cached);

    m.value = 1.0; /* a second measurement would show */
    EXPECT(avk_bandwidth_lookup(&a, 0, fake_measure, &m, &g, &cached) == ATTNVK_OK, "second lookup hits");
    EXPECT(m.calls == 1 && g == 812.5 && cached == 1, "hit: calls %d, %g GB/s, cached %d", m.calls, g, cached);

    attnvk_device_info b = a; /* the same device under a new driver */
    snprintf(b.driver_version, sizeof b.driver_version, "1.0.1");
    forget(&b);
    EXPECT(avk_bandwidth_key(&a) != avk_bandwidth_key(&b), "the driver is part of the key");
    m.value = 700.0;
    EXPECT(avk_bandwidth_lookup(&b, 1, fake_measure, &m, &g, &cached) == ATTNVK_OK, "new driver");
    EXPECT(m.calls == 2 && g == 700.0 && cached == 0, "new driver measured: calls %d, %g, cached %d", m.calls, g,
           cached);
    attnvk_device_info c = a; /* another device of the same name */
    c.uuid[0] = 8;
    EXPECT(avk_bandwidth_key(&a) != avk_bandwidth_key(&c), "the UUID is part of the key");

    corrupt(path);
    m.value = 640.0;
    EXPECT(avk_bandwidth_lookup(&a, 1, fake_measure, &m, &g, &cached) == ATTNVK_OK, "corrupt file");
    EXPECT(m.calls == 3 && g == 640.0 && cached == 0, "corrupt file measured again: calls %d, %g", m.calls, g);
    EXPECT(avk_bandwidth_lookup(&a, 0, fake_measure, &m, &g, &cached) == ATTNVK_OK && g == 640.0 && cached == 1,
           "the rewritten file hits: %g, cached %d", g, cached);
    double public_gbps = 0;
    EXPECT(attnvk_cached_read_bandwidth(&a, &public_gbps) == ATTNVK_OK && public_gbps == 640.0,
           "attnvk_cached_read_bandwidth reads the same cache without a device: %g", public_gbps);

    m.value = -1.0; /* a broken measurement is an error, never cached */
    attnvk_device_info d = a;
    snprintf(d.driver_version, sizeof d.driver_version, "2");
    forget(&d);
    EXPECT(avk_bandwidth_lookup(&d, 1, fake_measure, &m, &g, &cached) != ATTNVK_OK, "negative GB/s refused");
    EXPECT(avk_bandwidth_lookup(&d, 0, fake_measure, &m, &g, &cached) == ATTNVK_ERROR_UNAVAILABLE,
           "nothing stored for it");
    EXPECT(avk_bandwidth_lookup(&d, 1, NULL, NULL, &g, &cached) == ATTNVK_ERROR_UNSUPPORTED,
           "no measuring function: UNSUPPORTED");

    double host = 0;
    EXPECT(avk_host_read_bandwidth((size_t)64 << 20, &host) == ATTNVK_OK && host > 0.1 && host < 1e5,
           "host read bandwidth %g GB/s", host);
    printf("host read bandwidth (64 MiB): %.1f GB/s\n", host);
    return avk_test_finish(1, avk_test_failures);
}
