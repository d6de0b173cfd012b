/* Run-time loading of the CUDA driver API (libcuda.so.1) and NVRTC: cuda.h and
 * nvrtc.h give the types only; nothing links against CUDA libraries.
 *
 * Each entry point is a member named exactly like the API function, so code
 * reads `cu->cuMemAlloc(&p, n)`. cuda.h maps several names to versioned
 * symbols (cuMemAlloc -> cuMemAlloc_v2); the member and the dlsym'd symbol
 * follow the same macro, so they always agree. */
#ifndef ATTNVK_CUDA_LOADER_H
#define ATTNVK_CUDA_LOADER_H

#include "attnvk/attnvk.h"

#include <cuda.h>
#include <nvrtc.h>

/* Driver API functions attnvk (and the vendor baselines) call. */
#define AVK_CUDA_DRIVER_FUNCTIONS(X) \
    X(cuInit)                        \
    X(cuDriverGetVersion)            \
    X(cuGetErrorName)                \
    X(cuGetErrorString)              \
    X(cuDeviceGetCount)              \
    X(cuDeviceGet)                   \
    X(cuDeviceGetName)               \
    X(cuDeviceGetAttribute)          \
    X(cuDeviceTotalMem)              \
    X(cuDeviceGetUuid)               \
    X(cuDevicePrimaryCtxRetain)      \
    X(cuDevicePrimaryCtxRelease)     \
    X(cuCtxPushCurrent)              \
    X(cuCtxPopCurrent)               \
    X(cuCtxSetCurrent)               \
    X(cuCtxGetCurrent)               \
    X(cuCtxSynchronize)              \
    X(cuStreamCreate)                \
    X(cuStreamDestroy)               \
    X(cuStreamSynchronize)           \
    X(cuStreamGetCtx)                \
    X(cuStreamWaitEvent)             \
    X(cuEventCreate)                 \
    X(cuEventDestroy)                \
    X(cuEventRecord)                 \
    X(cuEventSynchronize)            \
    X(cuEventElapsedTime)            \
    X(cuMemAlloc)                    \
    X(cuMemFree)                     \
    X(cuMemGetInfo)                  \
    X(cuMemcpyHtoD)                  \
    X(cuMemcpyDtoH)                  \
    X(cuMemcpyHtoDAsync)             \
    X(cuMemcpyDtoHAsync)             \
    X(cuMemcpyDtoDAsync)             \
    X(cuMemcpyPeerAsync)             \
    X(cuMemsetD8Async)               \
    X(cuModuleLoadData)              \
    X(cuModuleUnload)                \
    X(cuModuleGetFunction)           \
    X(cuModuleGetGlobal) /* the timeline build's records (cuda_timeline.c) */ \
    X(cuFuncGetModule) /* CUDA 11.0+ */ \
    X(cuFuncSetAttribute)            \
    X(cuFuncGetAttribute)            \
    X(cuLaunchKernel)                \
    X(cuLaunchKernelEx) /* CUDA 11.8+: programmatic dependent launch */ \
    X(cuTensorMapEncodeTiled) /* CUDA 12.0+: wgmma-ws's TMA descriptors */

#define AVK_NVRTC_FUNCTIONS(X)   \
    X(nvrtcVersion)              \
    X(nvrtcGetErrorString)       \
    X(nvrtcCreateProgram)        \
    X(nvrtcDestroyProgram)       \
    X(nvrtcCompileProgram)       \
    X(nvrtcGetProgramLogSize)    \
    X(nvrtcGetProgramLog)        \
    X(nvrtcGetCUBINSize)         \
    X(nvrtcGetCUBIN)             \
    X(nvrtcGetPTXSize)           \
    X(nvrtcGetPTX)

#define AVK_CUDA_MEMBER(fn) __typeof__(fn) *fn;

typedef struct avk_cuda_driver {
    AVK_CUDA_DRIVER_FUNCTIONS(AVK_CUDA_MEMBER)
    char library[128]; /* the file actually loaded */
} avk_cuda_driver;

typedef struct avk_nvrtc {
    AVK_NVRTC_FUNCTIONS(AVK_CUDA_MEMBER)
    char library[128];
    int major, minor;
} avk_nvrtc;

/* Loaded once per process and kept; NULL with the reason set (avk_fail,
 * ATTNVK_ERROR_UNAVAILABLE), e.g. "cannot load libcuda.so.1: ...".
 * The driver loader does not call cuInit. Not thread-safe on first call. */
const avk_cuda_driver *avk_cuda_driver_load(void);
const avk_nvrtc *avk_nvrtc_load(void);
/* The reason the last load failed ("" when it succeeded or was not tried). */
const char *avk_cuda_driver_reason(void);
const char *avk_nvrtc_reason(void);
/* Closes both libraries (process shutdown; pointers handed out become invalid). */
void avk_cuda_loader_unload(void);

/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for r, never NULL. */
const char *avk_cuda_result_text(const avk_cuda_driver *cu, CUresult r, char *buf, size_t n);

#endif
