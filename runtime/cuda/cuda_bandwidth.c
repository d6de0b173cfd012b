/* Achievable read bandwidth of a CUDA device: a grid-stride stream of 16-byte
 * loads over a buffer far larger than L2 (1-2 GiB; the H100's L2 is 50 MB),
 * each block's XOR of what it read written out so no load is dropped; one
 * warm-up, then the best of several runs timed with events. */
#include "cuda/cuda_bandwidth.h"
#include "cuda/cuda_internal.h"
#include "cuda/cuda_kernels.h"

#include <stdio.h>
#include <stdlib.h>

static const char bandwidth_source[] =
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "avk_read_bandwidth(const uint4 *__restrict__ src, unsigned long long n, unsigned int *__restrict__ out)\n"
    "{\n"
    "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    unsigned int acc = 0u;\n"
    "    for (; i + 3ull * stride < n; i += 4ull * stride) { /* four loads in flight per thread */\n"
    "        uint4 a = __ldcs(src + i), b = __ldcs(src + i + stride);\n"
    "        uint4 c = __ldcs(src + i + 2ull * stride), d = __ldcs(src + i + 3ull * stride);\n"
    "        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;\n"
    "    }\n"
    "    for (; i < n; i += stride) { uint4 a = __ldcs(src + i); acc ^= a.x ^ a.y ^ a.z ^ a.w; }\n"
    "    for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);\n"
    "    __shared__ unsigned int warp_acc[8];\n"
    "    if ((threadIdx.x & 31u) == 0u) warp_acc[threadIdx.x >> 5] = acc;\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0u) {\n"
    "        unsigned int r = 0u;\n"
    "        for (unsigned int w = 0u; w < blockDim.x / 32u; ++w) r ^= warp_acc[w];\n"
    "        out[blockIdx.x] = r;\n"
    "    }\n"
    "}\n";

enum { BW_THREADS = 256, BW_BLOCKS_PER_SM = 8, BW_RUNS = 5 };

attnvk_status avk_cuda_bandwidth_compile(const char *arch, void **cubin, size_t *size)
{
    *cubin = NULL;
    *size = 0;
    const avk_nvrtc *rt = avk_nvrtc_load();
    if (!rt) return ATTNVK_ERROR_UNAVAILABLE;
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = {opt_arch};
    nvrtcProgram prog;
    nvrtcResult r = rt->nvrtcCreateProgram(&prog, bandwidth_source, "read_bandwidth.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) return avk_fail(ATTNVK_ERROR_COMPILE, "nvrtcCreateProgram: %s", rt->nvrtcGetErrorString(r));
    r = rt->nvrtcCompileProgram(prog, 1, opts);
    attnvk_status s = ATTNVK_OK;
    if (r != NVRTC_SUCCESS) {
        char log[1024] = "(no log)";
        size_t n = 0;
        if (rt->nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0 && n < sizeof log)
            rt->nvrtcGetProgramLog(prog, log);
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC %s for the read-bandwidth kernel (%s): %s",
                     rt->nvrtcGetErrorString(r), arch, log);
    } else if (rt->nvrtcGetCUBINSize(prog, size) != NVRTC_SUCCESS || *size == 0 || !(*cubin = malloc(*size)) ||
               rt->nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
        free(*cubin);
        *cubin = NULL;
        *size = 0;
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC produced no cubin for the read-bandwidth kernel (%s)", arch);
    }
    rt->nvrtcDestroyProgram(&prog);
    return s;
}

/* 2 GiB when free memory allows, else a quarter of what is free (at least 256 MiB). */
static size_t buffer_bytes(avk_cuda_device *dev)
{
    size_t free_bytes = 0, total = 0;
    if (dev->cu->cuMemGetInfo(&free_bytes, &total) != CUDA_SUCCESS) free_bytes = (size_t)1 << 30;
    size_t bytes = (size_t)2 << 30;
    if (bytes > free_bytes / 4) bytes = free_bytes / 4;
    if (bytes < ((size_t)256 << 20)) bytes = (size_t)256 << 20;
    return bytes & ~(size_t)0xffff;
}

static attnvk_status run_stream(avk_cuda_device *dev, CUfunction fn, double *gbps)
{
    size_t bytes = buffer_bytes(dev);
    unsigned blocks = (unsigned)(dev->sm_count > 0 ? dev->sm_count : 80) * BW_BLOCKS_PER_SM;
    CUdeviceptr src = 0, out = 0;
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&src, bytes), "cuMemAlloc(read-bandwidth buffer)");
    if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuMemAlloc(&out, blocks * sizeof(unsigned)), "cuMemAlloc");
    unsigned long long vectors = bytes / 16;
    void *params[] = {&src, &vectors, &out};
    double best_ms = 0;
    for (int run = 0; s == ATTNVK_OK && run <= BW_RUNS; ++run) { /* run 0 warms up */
        double ms = 0;
        s = avk_cuda_time_begin(dev);
        if (s == ATTNVK_OK)
            s = avk_cuda_check(dev, dev->cu->cuLaunchKernel(fn, blocks, 1, 1, BW_THREADS, 1, 1, 0, dev->stream, params, NULL),
                               "cuLaunchKernel(avk_read_bandwidth)");
        if (s == ATTNVK_OK) s = avk_cuda_time_end(dev, &ms);
        if (s == ATTNVK_OK && run > 0 && ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
    }
    if (out && !dev->lost) dev->cu->cuMemFree(out);
    if (src && !dev->lost) dev->cu->cuMemFree(src);
    if (s == ATTNVK_OK && best_ms <= 0) s = avk_fail(ATTNVK_ERROR_BACKEND, "read bandwidth: the events timed nothing");
    if (s == ATTNVK_OK) *gbps = (double)bytes / (best_ms * 1e-3) / 1e9;
    return s;
}

attnvk_status avk_cuda_read_bandwidth(avk_bdev *dev, double *gbps)
{
    char arch[16];
    avk_cuda_arch_name(dev->cc_major, dev->cc_minor, arch, sizeof arch);
    void *cubin = NULL;
    size_t size = 0;
    attnvk_status s = avk_cuda_bandwidth_compile(arch, &cubin, &size);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) {
        free(cubin);
        return s;
    }
    CUmodule module = NULL;
    CUfunction fn = NULL;
    s = avk_cuda_check(dev, dev->cu->cuModuleLoadData(&module, cubin), "cuModuleLoadData(read bandwidth)");
    free(cubin);
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuModuleGetFunction(&fn, module, "avk_read_bandwidth"), "cuModuleGetFunction");
    if (s == ATTNVK_OK) s = run_stream(dev, fn, gbps);
    if (module && !dev->lost) dev->cu->cuModuleUnload(module);
    avk_cuda_pop(dev);
    return s;
}
