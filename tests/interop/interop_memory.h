/* Caller-owned device memory for the interop test (issue #17): each API's
 * provider allocates memory the way a framework would, on the objects
 * attnvk_device_native hands out, fills and reads it through its own API, and
 * makes a stream/queue of the device for async runs. The test then wraps the
 * memory with attnvk_buffer_wrap. Providers use the public header only. */
#ifndef ATTNVK_INTEROP_MEMORY_H
#define ATTNVK_INTEROP_MEMORY_H

#include <attnvk/attnvk.h>

#include <stddef.h>

typedef struct ext_memory {
    size_t bytes;
    void *handle;  /* what attnvk_external_buffer.handle takes */
    void *memory;  /* Vulkan: the VkDeviceMemory */
    void *host;    /* CPU: the allocation; Vulkan: the mapping */
    const attnvk_native_handles *native;
} ext_memory;

typedef struct ext_provider {
    attnvk_api api;
    /* 0 on success; on failure the provider prints why */
    int (*alloc)(const attnvk_native_handles *nh, size_t bytes, ext_memory *m);
    int (*write)(ext_memory *m, size_t offset, const void *src, size_t bytes);
    int (*read)(ext_memory *m, size_t offset, void *dst, size_t bytes);
    void (*release)(ext_memory *m);
    /* May be NULL: a stream/queue on the device for attnvk_run_options.stream. */
    void *(*stream_create)(const attnvk_native_handles *nh);
    int (*stream_sync)(const attnvk_native_handles *nh, void *stream);
    void (*stream_destroy)(const attnvk_native_handles *nh, void *stream);
    /* May be NULL: references the API counts on the memory (OpenCL), to check
     * that destroying a wrapper drops attnvk's own. */
    int (*references)(ext_memory *m);
} ext_provider;

extern const ext_provider interop_cpu_memory;
#ifdef INTEROP_HAVE_VULKAN
extern const ext_provider interop_vulkan_memory;
#endif
#ifdef INTEROP_HAVE_OPENCL
extern const ext_provider interop_opencl_memory;
#endif
#ifdef INTEROP_HAVE_CUDA
extern const ext_provider interop_cuda_memory; /* tests/cuda/interop_cuda_memory.c */
#endif

#endif
