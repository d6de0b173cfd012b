/* Run-time loading of the HIP runtime (libamdhip64) and hipRTC: the HIP
 * headers give the types only; nothing links against ROCm libraries.
 *
 * Members are named like the API functions, so code reads
 * `hip->hipMalloc(&p, n)`. Optional entry points (absent in older or newer
 * runtimes) are NULL when missing. */
#ifndef ATTNVK_HIP_LOADER_H
#define ATTNVK_HIP_LOADER_H

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif

#include "attnvk/attnvk.h"

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

/* Entry points the backend cannot do without. */
#define AVK_HIP_REQUIRED_FUNCTIONS(X) \
    X(hipInit)                        \
    X(hipDriverGetVersion)            \
    X(hipRuntimeGetVersion)           \
    X(hipGetErrorName)                \
    X(hipGetErrorString)              \
    X(hipGetDeviceCount)              \
    X(hipSetDevice)                   \
    X(hipDeviceGet)                   \
    X(hipDeviceGetAttribute)          \
    X(hipDeviceSynchronize)           \
    X(hipMemGetInfo)                  \
    X(hipMalloc)                      \
    X(hipFree)                        \
    X(hipMemcpyHtoD)                  \
    X(hipMemcpyDtoH)                  \
    X(hipMemsetD8)                    \
    X(hipStreamCreate)                \
    X(hipStreamDestroy)               \
    X(hipStreamSynchronize)           \
    X(hipEventCreate)                 \
    X(hipEventDestroy)                \
    X(hipEventRecord)                 \
    X(hipEventSynchronize)            \
    X(hipEventElapsedTime)            \
    X(hipModuleLoadData)              \
    X(hipModuleUnload)                \
    X(hipModuleGetFunction)           \
    X(hipModuleLaunchKernel)

/* hipRTC: inside libamdhip64 up to ROCm 5, its own libhiprtc from ROCm 6. */
#define AVK_HIPRTC_FUNCTIONS(X)  \
    X(hiprtcGetErrorString)      \
    X(hiprtcCreateProgram)       \
    X(hiprtcDestroyProgram)      \
    X(hiprtcCompileProgram)      \
    X(hiprtcGetProgramLogSize)   \
    X(hiprtcGetProgramLog)       \
    X(hiprtcGetCodeSize)         \
    X(hiprtcGetCode)

#define AVK_HIP_MEMBER(fn) __typeof__(fn) *fn;

typedef struct avk_hip {
    AVK_HIP_REQUIRED_FUNCTIONS(AVK_HIP_MEMBER)
    /* ROCm 6 renamed the 5.x-layout entry point hipGetDevicePropertiesR0000;
     * both fill the hipDeviceProp_t of the headers used here. */
    __typeof__(hipGetDeviceProperties) *getDeviceProperties;
    __typeof__(hipDeviceGetUuid) *hipDeviceGetUuid;             /* optional */
    char library[128];
} avk_hip;

typedef struct avk_hiprtc {
    AVK_HIPRTC_FUNCTIONS(AVK_HIP_MEMBER)
    char library[128];
} avk_hiprtc;

/* Loaded once per process and kept; NULL with the reason set (avk_fail,
 * ATTNVK_ERROR_UNAVAILABLE), e.g. "cannot load libamdhip64.so.5: ...".
 * Does not call hipInit. Not thread-safe on first call. */
const avk_hip *avk_hip_load(void);
/* hipRTC, NULL (with the reason) when the runtime has none. */
const avk_hiprtc *avk_hiprtc_load(void);
void avk_hip_loader_unload(void);

/* "hipErrorOutOfMemory: out of memory" for e, never NULL. */
const char *avk_hip_error_text(const avk_hip *hip, hipError_t e, char *buf, size_t n);

#endif
