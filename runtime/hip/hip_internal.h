/* What the HIP backend's parts share: the opened device (runtime table,
 * stream, timing events), buffers, error mapping. */
#ifndef ATTNVK_HIP_INTERNAL_H
#define ATTNVK_HIP_INTERNAL_H

#include "core/backend.h"
#include "hip/hip_loader.h"

#include <stddef.h>

/* An opened HIP device. The backend's avk_bdev *is* this struct. */
typedef struct avk_bdev {
    const avk_hip *hip;       /* runtime table: hip->hipMalloc(...) */
    int ordinal;              /* HIP device ordinal */
    hipStream_t stream;       /* everything attnvk runs goes on this stream */
    hipEvent_t start, stop;   /* timing events on `stream` */
    int lost;                 /* a kernel faulted: the device is unusable */
    attnvk_device_info info;  /* as described to the core (architecture = "gfx90a") */
    void *rocblas;            /* rocBLAS state (hip_rocblas.c), NULL until first used */
    struct avk_hip_module *modules; /* code objects loaded on this device (hip_flash.c) */
    struct avk_hip_merge_module *merge;    /* ring attention's merge module (hip_merge.c), loaded on first use */
} avk_hip_device;

/* A device buffer: plain hipMalloc memory. */
struct avk_bbuf {
    void *ptr;
    size_t size;
    int borrowed;             /* the caller's memory (attnvk_buffer_wrap): never freed here */
};

/* Maps a hipError_t to a status with "<what>: <HIP error>": out of memory ->
 * OUT_OF_MEMORY; illegal address / launch failure -> DEVICE_LOST (and marks
 * dev lost); anything else -> BACKEND. dev may be NULL. */
attnvk_status avk_hip_check(avk_hip_device *dev, hipError_t e, const char *what);

/* Makes dev current on this thread (HIP's current device is per thread). */
attnvk_status avk_hip_use(avk_hip_device *dev);

/* Times `stream` work between two recorded events; used by every implementation. */
attnvk_status avk_hip_time_begin(avk_hip_device *dev);
attnvk_status avk_hip_time_end(avk_hip_device *dev, double *device_ms);

/* "gfx90a" from "gfx90a:sramecc+:xnack-" (the part code objects are built for). */
void avk_hip_arch_base(const char *gcn_arch_name, char *out, size_t n);

/* Matrix units the hardware has: 1 MFMA (gfx908/gfx90a/gfx94x/gfx95x), 2 WMMA (gfx11/gfx12), 0 none. */
int avk_hip_matrix_units(const char *arch);

#endif
