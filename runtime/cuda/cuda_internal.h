/* What the CUDA backend shares with the vendor baselines (cuda_vendor.h):
 * the opened device (driver table, primary context, stream) and buffers. */
#ifndef ATTNVK_CUDA_INTERNAL_H
#define ATTNVK_CUDA_INTERNAL_H

#include "core/backend.h"
#include "cuda/cuda_loader.h"

#include <stddef.h>

/* An opened CUDA device. The backend's avk_bdev *is* this struct. */
typedef struct avk_bdev {
    const avk_cuda_driver *cu;  /* loader table: cu->cuMemAlloc(...) */
    CUdevice device;
    int ordinal;                /* CUDA device ordinal */
    CUcontext context;          /* the PRIMARY context (shared with cuDNN/cuBLAS) */
    CUstream stream;            /* everything attnvk runs goes on this stream */
    CUevent start, stop;        /* timing events on `stream` */
    int cc_major, cc_minor;     /* compute capability */
    int sm_count;
    size_t smem_optin;          /* max dynamic shared memory per block (opt-in) */
    size_t smem_per_sm;         /* shared memory an SM holds, for all its resident blocks */
    int driver_version;         /* cuDriverGetVersion, e.g. 13000 */
    int lost;                   /* an illegal access happened: the context is unusable */
    attnvk_device_info info;    /* as described to the core */
    void *vendor;               /* the baselines' per-device state (cuda_vendor.c owns it) */
    struct avk_cuda_module *modules; /* loaded native kernels (cuda_backend.c) */
    struct avk_cuda_merge_module *merge;    /* ring attention's merge module (cuda_merge.c), loaded on first use */
} avk_cuda_device;

/* A device buffer: plain cuMemAlloc memory in the primary context. */
struct avk_bbuf {
    CUdeviceptr ptr;
    size_t size;
    int borrowed;               /* the caller's memory (attnvk_buffer_wrap): never freed here */
};

static inline CUdeviceptr avk_cuda_ptr(const avk_bbuf *b) { return b ? b->ptr : 0; }

/* Makes dev's primary context current on this thread (push) / restores (pop).
 * Every entry point that calls the driver brackets its work with these. */
attnvk_status avk_cuda_push(avk_cuda_device *dev);
void avk_cuda_pop(avk_cuda_device *dev);

/* Maps a CUresult to a status with a one-line message "<what>: <CUDA error>":
 * OUT_OF_MEMORY -> ATTNVK_ERROR_OUT_OF_MEMORY; ILLEGAL_ADDRESS, LAUNCH_FAILED
 * and the other sticky errors -> ATTNVK_ERROR_DEVICE_LOST (and marks dev lost:
 * its context can't be used again); anything else -> ATTNVK_ERROR_BACKEND.
 * dev may be NULL. Returns ATTNVK_OK for CUDA_SUCCESS. */
attnvk_status avk_cuda_check(avk_cuda_device *dev, CUresult r, const char *what);

/* Times `stream` work between two recorded events; used by every implementation. */
attnvk_status avk_cuda_time_begin(avk_cuda_device *dev);
attnvk_status avk_cuda_time_end(avk_cuda_device *dev, double *device_ms);

#endif
