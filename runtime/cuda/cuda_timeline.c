/* ATTNVK_CUDA_TIMELINE=path: after each launch of the forward kernel built with
 * -DAVK_TIMELINE=1 (ATTNVK_CUDA_DEFINES), its per-CTA records (native/sm90_timeline.h)
 * replace the file at path, one line a CTA, so the file holds the run's last launch.
 * A diagnostic: it synchronizes the stream after every launch. tools/h100/timeline.py
 * reads the file. */
#include "cuda/cuda_timeline.h"
#include "core/atomic_file.h"
#include "core/error.h"

#include <stdlib.h>

enum { TL_MAX = 65536, TL_WORDS = 16 }; /* sm90_timeline.h's AVK_TL_MAX, AVK_TL_WORDS */

const char *avk_cuda_timeline_path(void)
{
    const char *path = getenv("ATTNVK_CUDA_TIMELINE");
    return path && *path ? path : NULL;
}

attnvk_status avk_cuda_timeline_dump(avk_cuda_device *dev, CUstream stream, CUfunction fwd, const unsigned grid[3],
                                     unsigned items)
{
    const char *path = avk_cuda_timeline_path();
    CUmodule module;
    CUdeviceptr records;
    size_t bytes = 0;
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuStreamSynchronize(stream), "cuStreamSynchronize(timeline)");
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_check(dev, dev->cu->cuFuncGetModule(&module, fwd), "cuFuncGetModule(timeline)");
    if (s != ATTNVK_OK) return s;
    if (dev->cu->cuModuleGetGlobal(&records, &bytes, module, "avk_timeline") != CUDA_SUCCESS)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "ATTNVK_CUDA_TIMELINE: the forward kernel has no timeline (build it with "
                        "ATTNVK_CUDA_DEFINES=-DAVK_TIMELINE=1; wgmma-ws only)");
    unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
    if (items > blocks) blocks = items;
    const size_t n = blocks < TL_MAX ? (size_t)blocks : TL_MAX;
    unsigned long long *host = malloc(n * TL_WORDS * sizeof *host);
    if (!host) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    s = avk_cuda_check(dev, dev->cu->cuMemcpyDtoH(host, records, n * TL_WORDS * sizeof *host), "cuMemcpyDtoH(timeline)");
    avk_atomic_file af;
    if (s == ATTNVK_OK) s = avk_atomic_open(&af, path);
    if (s == ATTNVK_OK) {
        fprintf(af.f, "# attnvk forward timeline: grid %u %u %u, %zu blocks recorded; words: sm<<32|tiles "
                      "globaltimer_ns clk_entry clk_q clk_first_s clk_loop_end clk_sync clk_end wait_k wait_v wait_turn "
                      "producer_wait_empty clk_o_staged clk_block_began clk_first_k_issued unused\n",
                grid[0], grid[1], grid[2], n);
        for (size_t i = 0; i < n; ++i) {
            const unsigned long long *r = host + i * TL_WORDS;
            fprintf(af.f, "%zu", i);
            for (int w = 0; w < TL_WORDS; ++w) fprintf(af.f, " %llu", r[w]);
            fputc('\n', af.f);
        }
        s = avk_atomic_commit(&af);
    }
    free(host);
    return s;
}
