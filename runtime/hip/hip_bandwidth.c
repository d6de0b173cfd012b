/* Achievable read bandwidth of a HIP device: a grid-stride stream of 16-byte
 * loads over up to 2 GiB (far past the L2 / Infinity Cache), each block's XOR
 * of what it read written out so no load is dropped; compiled by hipRTC (and
 * cached like any hipRTC module), one warm-up, then the best of several runs
 * timed with events. Build-verified here; measured only on an AMD GPU. */
#include "hip/hip_internal.h"
#include "hip/hip_modules.h"

#include <stdio.h>

attnvk_status avk_hip_read_bandwidth(avk_bdev *dev, double *gbps);

static const char bandwidth_source[] =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "avk_read_bandwidth(const uint4 *__restrict__ src, unsigned long long n, unsigned int *__restrict__ out)\n"
    "{\n"
    "    __shared__ unsigned int partial[256];\n"
    "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    unsigned int acc = 0u;\n"
    "    for (; i + 3ull * stride < n; i += 4ull * stride) {\n"
    "        uint4 a = src[i], b = src[i + stride], c = src[i + 2ull * stride], d = src[i + 3ull * stride];\n"
    "        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;\n"
    "    }\n"
    "    for (; i < n; i += stride) { uint4 a = src[i]; acc ^= a.x ^ a.y ^ a.z ^ a.w; }\n"
    "    partial[threadIdx.x] = acc;\n"
    "    __syncthreads();\n"
    "    for (unsigned int half = blockDim.x / 2u; half > 0u; half >>= 1) {\n"
    "        if (threadIdx.x < half) partial[threadIdx.x] ^= partial[threadIdx.x + half];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (threadIdx.x == 0u) out[blockIdx.x] = partial[0];\n"
    "}\n";

enum { BW_THREADS = 256, BW_BLOCKS_PER_CU = 8, BW_RUNS = 5 };

static size_t buffer_bytes(avk_hip_device *dev)
{
    size_t free_bytes = 0, total = 0;
    if (dev->hip->hipMemGetInfo(&free_bytes, &total) != hipSuccess) free_bytes = (size_t)1 << 30;
    size_t bytes = (size_t)2 << 30;
    if (bytes > free_bytes / 4) bytes = free_bytes / 4;
    if (bytes < ((size_t)256 << 20)) bytes = (size_t)256 << 20;
    return bytes & ~(size_t)0xffff;
}

static attnvk_status run_stream(avk_hip_device *dev, hipFunction_t fn, double *gbps)
{
    size_t bytes = buffer_bytes(dev);
    unsigned blocks = (unsigned)(dev->info.compute_units > 0 ? dev->info.compute_units : 64) * BW_BLOCKS_PER_CU;
    void *src = NULL, *out = NULL;
    attnvk_status s = avk_hip_check(dev, dev->hip->hipMalloc(&src, bytes), "hipMalloc(read-bandwidth buffer)");
    if (s == ATTNVK_OK) s = avk_hip_check(dev, dev->hip->hipMalloc(&out, blocks * sizeof(unsigned)), "hipMalloc");
    unsigned long long vectors = bytes / 16;
    void *params[] = {&src, &vectors, &out};
    double best_ms = 0;
    for (int run = 0; s == ATTNVK_OK && run <= BW_RUNS; ++run) { /* run 0 warms up */
        double ms = 0;
        s = avk_hip_time_begin(dev);
        if (s == ATTNVK_OK)
            s = avk_hip_check(dev,
                              dev->hip->hipModuleLaunchKernel(fn, blocks, 1, 1, BW_THREADS, 1, 1, 0, dev->stream, params,
                                                              NULL),
                              "hipModuleLaunchKernel(avk_read_bandwidth)");
        if (s == ATTNVK_OK) s = avk_hip_time_end(dev, &ms);
        if (s == ATTNVK_OK && run > 0 && ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
    }
    if (out && !dev->lost) dev->hip->hipFree(out);
    if (src && !dev->lost) dev->hip->hipFree(src);
    if (s == ATTNVK_OK && best_ms <= 0) s = avk_fail(ATTNVK_ERROR_BACKEND, "read bandwidth: the events timed nothing");
    if (s == ATTNVK_OK) *gbps = (double)bytes / (best_ms * 1e-3) / 1e9;
    return s;
}

attnvk_status avk_hip_read_bandwidth(avk_bdev *dev, double *gbps)
{
    attnvk_status s = avk_hip_use(dev);
    if (s != ATTNVK_OK) return s;
    avk_hip_source src = {.name = "read_bandwidth.hip", .text = bandwidth_source};
    hipModule_t module = NULL;
    hipFunction_t fn = NULL;
    char origin[64];
    s = avk_hip_load_module(dev, NULL, &src, &module, origin, sizeof origin);
    if (s == ATTNVK_OK) s = avk_hip_get_function(dev, module, "avk_read_bandwidth", &fn);
    if (s == ATTNVK_OK) s = run_stream(dev, fn, gbps);
    if (module && !dev->lost) dev->hip->hipModuleUnload(module);
    return s;
}
