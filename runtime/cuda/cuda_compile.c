/* NVRTC compilation of the embedded native kernel into a cubin for the
 * device's exact architecture, cached on disk (core/cache.h). */
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_loader.h"
#include "core/cache.h"
#include "core/embedded.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Embedded at build time: the kernel source and the headers it includes. */
AVK_EMBEDDED(avk_cuda_kernel_source)
AVK_EMBEDDED(avk_cuda_portability_source)
AVK_EMBEDDED(avk_cuda_params_source)
AVK_EMBEDDED(avk_cuda_args_source)
AVK_EMBEDDED(avk_cuda_flags_source)
AVK_EMBEDDED(avk_cuda_contract_source)
AVK_EMBEDDED(avk_cuda_scores_source)
AVK_EMBEDDED(avk_cuda_sm90_source)
AVK_EMBEDDED(avk_cuda_wgmma_source)
AVK_EMBEDDED(avk_cuda_sm90_common_source)
AVK_EMBEDDED(avk_cuda_sm90_fp8_source)
AVK_EMBEDDED(avk_cuda_sm90_schedule_source)
AVK_EMBEDDED(avk_cuda_sm90_timeline_source)
AVK_EMBEDDED(avk_cuda_sm90_tma_source)
AVK_EMBEDDED(avk_cuda_sm90_consumer_source)
AVK_EMBEDDED(avk_cuda_tiled_source)
AVK_EMBEDDED(avk_cuda_decode_source)
AVK_EMBEDDED(avk_cuda_mma_source)
AVK_EMBEDDED(avk_cuda_bwd_source)
AVK_EMBEDDED(avk_cuda_bwd_params_source)
AVK_EMBEDDED(avk_cuda_bwd_mma_source)
AVK_EMBEDDED(avk_cuda_bwd_simt_source)
AVK_EMBEDDED(avk_cuda_bwd_sm90_source)

/* The headers attn_fwd.cu includes, by the names it includes them by. */
static const struct {
    const char *name;
    const unsigned char *text;
    const size_t *size;
} kernel_headers[] = {
    {"attn_portability.h", avk_cuda_portability_source, &avk_cuda_portability_source_size},
    {"attn_params.h", avk_cuda_params_source, &avk_cuda_params_source_size},
    {"contract/kernel_args.def", avk_cuda_args_source, &avk_cuda_args_source_size},
    {"contract/kernel_flags.h", avk_cuda_flags_source, &avk_cuda_flags_source_size},
    {"attn_contract.h", avk_cuda_contract_source, &avk_cuda_contract_source_size},
    {"attn_scores.h", avk_cuda_scores_source, &avk_cuda_scores_source_size},
    {"attn_sm90.h", avk_cuda_sm90_source, &avk_cuda_sm90_source_size},
    {"sm90_wgmma_ops.h", avk_cuda_wgmma_source, &avk_cuda_wgmma_source_size},
    {"sm90_common.h", avk_cuda_sm90_common_source, &avk_cuda_sm90_common_source_size},
    {"sm90_fp8.h", avk_cuda_sm90_fp8_source, &avk_cuda_sm90_fp8_source_size},
    {"sm90_schedule.h", avk_cuda_sm90_schedule_source, &avk_cuda_sm90_schedule_source_size},
    {"sm90_timeline.h", avk_cuda_sm90_timeline_source, &avk_cuda_sm90_timeline_source_size},
    {"sm90_tma.h", avk_cuda_sm90_tma_source, &avk_cuda_sm90_tma_source_size},
    {"sm90_consumer.h", avk_cuda_sm90_consumer_source, &avk_cuda_sm90_consumer_source_size},
    {"attn_tiled.h", avk_cuda_tiled_source, &avk_cuda_tiled_source_size},
    {"attn_decode.h", avk_cuda_decode_source, &avk_cuda_decode_source_size},
    {"attn_mma.h", avk_cuda_mma_source, &avk_cuda_mma_source_size},
    /* the backward's (attn_bwd.cu) */
    {"attn_bwd_params.h", avk_cuda_bwd_params_source, &avk_cuda_bwd_params_source_size},
    {"attn_bwd_mma.h", avk_cuda_bwd_mma_source, &avk_cuda_bwd_mma_source_size},
    {"attn_bwd_simt.h", avk_cuda_bwd_simt_source, &avk_cuda_bwd_simt_source_size},
    {"attn_bwd_sm90.h", avk_cuda_bwd_sm90_source, &avk_cuda_bwd_sm90_source_size},
};
enum { KERNEL_HEADERS = sizeof kernel_headers / sizeof *kernel_headers };

/* The cache key of a program: its source, every header, the options, the versions. */
static uint64_t program_key(const unsigned char *src, size_t size, const char *const *opts, int n, int driver_version,
                            int nvrtc_version)
{
    uint64_t h = avk_hash(src, size, 0x6375646121ull);
    for (int i = 0; i < KERNEL_HEADERS; ++i) h = avk_hash(kernel_headers[i].text, *kernel_headers[i].size, h);
    for (int i = 0; i < n; ++i) h = avk_hash(opts[i], strlen(opts[i]) + 1, h);
    int versions[2] = {driver_version, nvrtc_version};
    return avk_hash(versions, sizeof versions, h);
}

uint64_t avk_cuda_cache_key(const avk_cuda_config *cfg, const char *arch, int driver_version, int nvrtc_version)
{
    char storage[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN];
    const char *opts[AVK_CUDA_MAX_OPTIONS];
    int n = avk_cuda_build_options(cfg, arch, storage, opts);
    return program_key(avk_cuda_kernel_source, avk_cuda_kernel_source_size, opts, n, driver_version, nvrtc_version);
}

static void copy_log(const avk_nvrtc *rt, nvrtcProgram prog, char *log, size_t log_size, char **full)
{
    size_t n = 0;
    *full = NULL;
    if (rt->nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0) return;
    *full = malloc(n + 1);
    if (!*full) return;
    if (rt->nvrtcGetProgramLog(prog, *full) != NVRTC_SUCCESS) (*full)[0] = '\0';
    (*full)[n] = '\0';
    if (log && log_size) snprintf(log, log_size, "%s", *full);
}

/* One program (the forward's or the backward's source, name its file name)
 * with options opts[0..n) through the cache; what (a short description) for
 * the error message. */
static attnvk_status compile_program(const unsigned char *src, size_t src_size, const char *name, const char **opts,
                                     int n, const char *what, const char *arch, int driver_version,
                                     const char *extra_option, void **cubin, size_t *size, int *from_cache, char *log,
                                     size_t log_size)
{
    *cubin = NULL;
    *size = 0;
    if (from_cache) *from_cache = 0;
    if (log && log_size) log[0] = '\0';
    const avk_nvrtc *rt = avk_nvrtc_load();
    if (!rt) return ATTNVK_ERROR_UNAVAILABLE;

    char path[1024];
    uint64_t key = program_key(src, src_size, opts, n, driver_version, rt->major * 1000 + rt->minor * 10);
    int cached = !extra_option && avk_cache_path("cuda", key, "cubin", path, sizeof path);
    if (cached) {
        *cubin = avk_cache_load(path, key, size);
        if (*cubin) {
            if (from_cache) *from_cache = 1;
            return ATTNVK_OK;
        }
    }
    if (extra_option) opts[n++] = extra_option;

    const char *headers[KERNEL_HEADERS], *header_names[KERNEL_HEADERS];
    for (int i = 0; i < KERNEL_HEADERS; ++i) {
        headers[i] = (const char *)kernel_headers[i].text;
        header_names[i] = kernel_headers[i].name;
    }
    nvrtcProgram prog;
    nvrtcResult r = rt->nvrtcCreateProgram(&prog, (const char *)src, name, KERNEL_HEADERS, headers, header_names);
    if (r != NVRTC_SUCCESS)
        return avk_fail(ATTNVK_ERROR_COMPILE, "nvrtcCreateProgram: %s", rt->nvrtcGetErrorString(r));
    r = rt->nvrtcCompileProgram(prog, n, opts);
    char *full_log = NULL;
    copy_log(rt, prog, log, log_size, &full_log);
    attnvk_status s = ATTNVK_OK;
    if (r != NVRTC_SUCCESS) {
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC %s for %s (%s): %s", rt->nvrtcGetErrorString(r), arch, what,
                     full_log ? full_log : "(no log)");
    } else if (rt->nvrtcGetCUBINSize(prog, size) != NVRTC_SUCCESS || *size == 0 || !(*cubin = malloc(*size))) {
        s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC produced no cubin for %s (is '%s' a real architecture?)", arch, arch);
    } else if (rt->nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
        s = avk_fail(ATTNVK_ERROR_COMPILE, "nvrtcGetCUBIN failed for %s", arch);
    }
    free(full_log);
    rt->nvrtcDestroyProgram(&prog);
    if (s != ATTNVK_OK) {
        free(*cubin);
        *cubin = NULL;
        *size = 0;
        return s;
    }
    if (cached) avk_cache_store(path, key, *cubin, *size);
    return ATTNVK_OK;
}

attnvk_status avk_cuda_compile(const avk_cuda_config *cfg, const char *arch, int driver_version,
                               const char *extra_option, void **cubin, size_t *size, int *from_cache,
                               char *log, size_t log_size)
{
    char storage[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN];
    const char *opts[AVK_CUDA_MAX_OPTIONS + 1];
    int n = avk_cuda_build_options(cfg, arch, storage, opts);
    char what[96];
    snprintf(what, sizeof what, "%s %dx%d D=%d/%d %s", cfg->variant, cfg->br, cfg->bc, cfg->head_dim,
             cfg->head_dim_v > 0 ? cfg->head_dim_v : cfg->head_dim, attnvk_dtype_name(cfg->dtype));
    return compile_program(avk_cuda_kernel_source, avk_cuda_kernel_source_size, "attn_fwd.cu", opts, n, what, arch,
                           driver_version, extra_option, cubin, size, from_cache, log, log_size);
}

attnvk_status avk_cuda_compile_backward(const avk_native_bwd_config *cfg, const char *arch, int driver_version,
                                        const char *extra_option, void **cubin, size_t *size, int *from_cache,
                                        char *log, size_t log_size)
{
    char storage[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN];
    const char *opts[AVK_CUDA_MAX_OPTIONS + 1];
    int n = avk_cuda_bwd_options(cfg, arch, storage, opts);
    char what[96];
    snprintf(what, sizeof what, "backward %s D=%d/%d %s", cfg->mma ? "mma" : "simt", cfg->head_dim, cfg->head_dim_v,
             attnvk_dtype_name(cfg->dtype));
    return compile_program(avk_cuda_bwd_source, avk_cuda_bwd_source_size, "attn_bwd.cu", opts, n, what, arch,
                           driver_version, extra_option, cubin, size, from_cache, log, log_size);
}
