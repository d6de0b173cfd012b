/* CUDA memory as an application makes it (for tests/interop/test_interop.c):
 * cuMemAlloc in the device's primary context (attnvk_device_native's
 * cuda_context), cuMemcpy to fill and read it, and a stream of that context
 * for async runs. libcuda.so.1 is opened at run time, so the test builds and
 * skips on a machine without the driver; the few types are declared here. */
#include "interop_memory.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int cu_result;
typedef unsigned long long cu_ptr;
typedef void *cu_context;
typedef void *cu_stream;

static struct {
    void *lib;
    cu_result (*MemAlloc)(cu_ptr *, size_t);
    cu_result (*MemFree)(cu_ptr);
    cu_result (*MemcpyHtoD)(cu_ptr, const void *, size_t);
    cu_result (*MemcpyDtoH)(void *, cu_ptr, size_t);
    cu_result (*CtxPushCurrent)(cu_context);
    cu_result (*CtxPopCurrent)(cu_context *);
    cu_result (*StreamCreate)(cu_stream *, unsigned);
    cu_result (*StreamSynchronize)(cu_stream);
    cu_result (*StreamDestroy)(cu_stream);
} cu;

static int load(void)
{
    if (cu.lib) return 0;
    cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu.lib) {
        fprintf(stderr, "cannot load libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    const struct { const char *name; void **fn; } syms[] = {
        {"cuMemAlloc_v2", (void **)&cu.MemAlloc},           {"cuMemFree_v2", (void **)&cu.MemFree},
        {"cuMemcpyHtoD_v2", (void **)&cu.MemcpyHtoD},       {"cuMemcpyDtoH_v2", (void **)&cu.MemcpyDtoH},
        {"cuCtxPushCurrent_v2", (void **)&cu.CtxPushCurrent}, {"cuCtxPopCurrent_v2", (void **)&cu.CtxPopCurrent},
        {"cuStreamCreate", (void **)&cu.StreamCreate},      {"cuStreamSynchronize", (void **)&cu.StreamSynchronize},
        {"cuStreamDestroy_v2", (void **)&cu.StreamDestroy},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; ++i)
        if (!(*syms[i].fn = dlsym(cu.lib, syms[i].name))) {
            fprintf(stderr, "libcuda.so.1 lacks %s\n", syms[i].name);
            return 1;
        }
    return 0;
}

/* Runs call in attnvk's primary context; prints and returns 1 on a CUDA error. */
#define IN_CONTEXT(nh, what, call)                                                 \
    do {                                                                           \
        cu_context popped_;                                                        \
        cu_result r_ = cu.CtxPushCurrent((cu_context)(nh)->cuda_context);          \
        if (r_ == 0) {                                                             \
            r_ = (call);                                                           \
            cu.CtxPopCurrent(&popped_);                                            \
        }                                                                          \
        if (r_ != 0) {                                                             \
            fprintf(stderr, "%s: CUDA error %d\n", what, r_);                      \
            return 1;                                                              \
        }                                                                          \
    } while (0)

static int cuda_alloc(const attnvk_native_handles *nh, size_t bytes, ext_memory *m)
{
    memset(m, 0, sizeof *m);
    m->native = nh;
    m->bytes = bytes;
    if (load()) return 1;
    cu_ptr p = 0;
    IN_CONTEXT(nh, "cuMemAlloc", cu.MemAlloc(&p, bytes));
    m->handle = (void *)(size_t)p;
    return 0;
}

static int cuda_write(ext_memory *m, size_t offset, const void *src, size_t bytes)
{
    IN_CONTEXT(m->native, "cuMemcpyHtoD", cu.MemcpyHtoD((cu_ptr)(size_t)m->handle + offset, src, bytes));
    return 0;
}

static int cuda_read(ext_memory *m, size_t offset, void *dst, size_t bytes)
{
    IN_CONTEXT(m->native, "cuMemcpyDtoH", cu.MemcpyDtoH(dst, (cu_ptr)(size_t)m->handle + offset, bytes));
    return 0;
}

static int free_in_context(ext_memory *m)
{
    IN_CONTEXT(m->native, "cuMemFree", cu.MemFree((cu_ptr)(size_t)m->handle));
    return 0;
}

static void cuda_release(ext_memory *m)
{
    if (m->handle) free_in_context(m);
}

static int create_in_context(const attnvk_native_handles *nh, cu_stream *s)
{
    IN_CONTEXT(nh, "cuStreamCreate", cu.StreamCreate(s, 1 /* CU_STREAM_NON_BLOCKING */));
    return 0;
}

static void *cuda_stream_create(const attnvk_native_handles *nh)
{
    cu_stream s = NULL;
    return load() || create_in_context(nh, &s) ? NULL : s;
}

static int cuda_stream_sync(const attnvk_native_handles *nh, void *stream)
{
    IN_CONTEXT(nh, "cuStreamSynchronize", cu.StreamSynchronize(stream));
    return 0;
}

static int destroy_in_context(const attnvk_native_handles *nh, void *stream)
{
    IN_CONTEXT(nh, "cuStreamDestroy", cu.StreamDestroy(stream));
    return 0;
}

static void cuda_stream_destroy(const attnvk_native_handles *nh, void *stream) { destroy_in_context(nh, stream); }

const ext_provider interop_cuda_memory = {
    .api = ATTNVK_API_CUDA, .alloc = cuda_alloc, .write = cuda_write, .read = cuda_read, .release = cuda_release,
    .stream_create = cuda_stream_create, .stream_sync = cuda_stream_sync, .stream_destroy = cuda_stream_destroy,
};
