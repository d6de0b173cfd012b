/* Measured read bandwidth, cached on disk per API, device and driver, so a
 * device is measured once (the kernel streams 1-2 GiB) and every later bench
 * or `attnvk devices` reads the number back. */
#ifndef ATTNVK_BANDWIDTH_H
#define ATTNVK_BANDWIDTH_H

#include "attnvk/attnvk.h"

#include <stdint.h>

/* Runs the measurement; ATTNVK_OK with a positive *gbps or a failure status. */
typedef attnvk_status (*avk_bandwidth_measure_fn)(void *ctx, double *gbps);

/* A per-device cache key for a measurement named `what` (bump method_version
 * when the measuring kernels change): API, device name, UUID, driver and API
 * version. A new driver gets a new key, so it is measured again. Shared with
 * the peak record (core/peak.h). */
uint64_t avk_device_cache_key(const char *what, uint64_t method_version, const attnvk_device_info *info);
/* The read bandwidth's key: avk_device_cache_key("attnvk-read-bandwidth", ...). */
uint64_t avk_bandwidth_key(const attnvk_device_info *info);

/* The cached value for the device when the cache has a valid one (*cached = 1);
 * else measures (unless allow_measure is 0: ATTNVK_ERROR_UNAVAILABLE) and
 * stores it (*cached = 0). A corrupt cache file fails its checksum, is removed
 * by avk_cache_load, and the device is measured and stored again. */
attnvk_status avk_bandwidth_lookup(const attnvk_device_info *info, int allow_measure,
                                   avk_bandwidth_measure_fn measure, void *ctx, double *gbps, int *cached);

/* Stores a measured value (a re-measurement: `attnvk peak --remeasure`); a
 * failed store is not an error. */
void avk_bandwidth_store(const attnvk_device_info *info, double gbps);

/* A streaming read over `bytes` of host memory with all threads; the CPU
 * backend's measurement, kept well under a second. */
attnvk_status avk_host_read_bandwidth(size_t bytes, double *gbps);
/* The same with a copy of `bytes` into a second buffer (memcpy per thread), in
 * GB/s of bytes read plus bytes written: the CPU device's copy peak (core/peak.h). */
attnvk_status avk_host_copy_bandwidth(size_t bytes, double *gbps);

#endif
