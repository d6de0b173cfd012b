#include "opencl/cl_program.h"

#include "core/atomic_file.h"
#include "core/cache.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char avk_cl_src_kernel_flags[], avk_cl_src_kernel_args[], avk_cl_src_contract[];
extern const size_t avk_cl_src_kernel_flags_size, avk_cl_src_kernel_args_size, avk_cl_src_contract_size;
extern const unsigned char avk_cl_src_common[], avk_cl_src_flash_tiled[], avk_cl_src_mma_ops[], avk_cl_src_flash_mma[], avk_cl_src_flash_decode[],
    avk_cl_src_split_reduce[], avk_cl_src_softmax[], avk_cl_src_flash_bwd[],
    avk_cl_src_flash_bwd_mma[], avk_cl_src_ring_merge[];
extern const size_t avk_cl_src_common_size, avk_cl_src_flash_tiled_size, avk_cl_src_mma_ops_size, avk_cl_src_flash_mma_size, avk_cl_src_flash_decode_size,
    avk_cl_src_split_reduce_size, avk_cl_src_softmax_size, avk_cl_src_flash_bwd_size,
    avk_cl_src_flash_bwd_mma_size, avk_cl_src_ring_merge_size;

static void source_text(avk_cl_source s, const char **text, size_t *size)
{
    switch (s) {
    case AVK_CL_SRC_COMMON: *text = (const char *)avk_cl_src_common; *size = avk_cl_src_common_size; return;
    case AVK_CL_SRC_CONTRACT: *text = (const char *)avk_cl_src_contract; *size = avk_cl_src_contract_size; return;
    case AVK_CL_SRC_FLASH_TILED: *text = (const char *)avk_cl_src_flash_tiled; *size = avk_cl_src_flash_tiled_size; return;
    case AVK_CL_SRC_MMA_OPS: *text = (const char *)avk_cl_src_mma_ops; *size = avk_cl_src_mma_ops_size; return;
    case AVK_CL_SRC_FLASH_MMA: *text = (const char *)avk_cl_src_flash_mma; *size = avk_cl_src_flash_mma_size; return;
    case AVK_CL_SRC_FLASH_DECODE: *text = (const char *)avk_cl_src_flash_decode; *size = avk_cl_src_flash_decode_size; return;
    case AVK_CL_SRC_SPLIT_REDUCE: *text = (const char *)avk_cl_src_split_reduce; *size = avk_cl_src_split_reduce_size; return;
    case AVK_CL_SRC_SOFTMAX: *text = (const char *)avk_cl_src_softmax; *size = avk_cl_src_softmax_size; return;
    case AVK_CL_SRC_FLASH_BWD: *text = (const char *)avk_cl_src_flash_bwd; *size = avk_cl_src_flash_bwd_size; return;
    case AVK_CL_SRC_FLASH_BWD_MMA: *text = (const char *)avk_cl_src_flash_bwd_mma; *size = avk_cl_src_flash_bwd_mma_size; return;
    case AVK_CL_SRC_RING_MERGE: *text = (const char *)avk_cl_src_ring_merge; *size = avk_cl_src_ring_merge_size; return;
    case AVK_CL_SRC_COUNT: break;
    }
    *text = "";
    *size = 0;
}

/* What every program starts with: the contract's flags and its argument
 * struct, one list for the host (core/kernel_args.h) and the kernels. */
static const char args_begin[] = "\n#define U32 uint\n#define I32 int\n#define F32 float\n"
                                 "typedef struct avk_kernel_args {\n#define AVK_ARG(type, name) type name;\n";
static const char args_end[] = "\n#undef AVK_ARG\n} avk_kernel_args;\n";
enum { PRELUDE_PARTS = 4 };

static void prelude_text(int part, const char **text, size_t *size)
{
    switch (part) {
    case 0: *text = (const char *)avk_cl_src_kernel_flags; *size = avk_cl_src_kernel_flags_size; return;
    case 1: *text = args_begin; *size = sizeof args_begin - 1; return;
    case 2: *text = (const char *)avk_cl_src_kernel_args; *size = avk_cl_src_kernel_args_size; return;
    default: *text = args_end; *size = sizeof args_end - 1; return;
    }
}

static char *build_log(avk_bdev *dev, cl_program prog)
{
    size_t n = 0;
    if (avk_cl.GetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return NULL;
    char *log = calloc(1, n + 1);
    if (log && avk_cl.GetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
        free(log);
        return NULL;
    }
    return log;
}

/* The log as one line: the first errors matter, the rest is truncated. */
static attnvk_status fail_with_log(cl_int err, const char *options, const char *log)
{
    char line[1536];
    size_t j = 0;
    for (const char *p = log ? log : ""; *p && j + 4 < sizeof line; ++p) {
        if (*p == '\n') {
            if (j && line[j - 1] != ' ') { line[j++] = ' '; line[j++] = '|'; line[j++] = ' '; }
        } else if (*p != '\r') {
            line[j++] = *p;
        }
    }
    line[j] = '\0';
    return avk_fail(ATTNVK_ERROR_COMPILE, "OpenCL build failed (%s, options \"%s\"): %s", avk_cl_error_name(err), options,
                    j ? line : "no build log");
}

static void maybe_print_log(avk_bdev *dev, cl_program prog, const char *options, int from_cache)
{
    const char *want = getenv("ATTNVK_OPENCL_BUILD_LOG");
    if (!want || strcmp(want, "1") != 0) return;
    char *log = build_log(dev, prog);
    fprintf(stderr, "[attnvk opencl] build%s \"%s\":\n%s\n", from_cache ? " (cached binary)" : "", options,
            log && *log ? log : "(empty log)");
    free(log);
}

static cl_program from_binary(avk_bdev *dev, const char *path, uint64_t key, const char *options)
{
    size_t size = 0;
    unsigned char *bin = avk_cache_load(path, key, &size);
    if (!bin) return NULL;
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    const unsigned char *bins[1] = {bin};
    cl_program prog = avk_cl.CreateProgramWithBinary(dev->context, 1, &dev->device, &size, bins, &status, &err);
    free(bin);
    if (!prog || err != CL_SUCCESS || status != CL_SUCCESS) {
        if (prog) avk_cl.ReleaseProgram(prog);
        return NULL;
    }
    if (avk_cl.BuildProgram(prog, 1, &dev->device, options, NULL, NULL) != CL_SUCCESS) {
        avk_cl.ReleaseProgram(prog); /* stale or foreign binary: rebuild from source */
        return NULL;
    }
    return prog;
}

static void store_binary(avk_bdev *dev, cl_program prog, const char *path, uint64_t key)
{
    size_t size = 0;
    if (avk_cl.GetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || !size) return;
    unsigned char *bin = malloc(size);
    unsigned char *bins[1] = {bin};
    if (bin && avk_cl.GetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS)
        avk_cache_store(path, key, bin, size);
    /* $ATTNVK_OPENCL_DUMP_DIR: keep a readable copy (PTX on NVIDIA) for inspection */
    const char *dump = getenv("ATTNVK_OPENCL_DUMP_DIR");
    if (bin && dump && *dump) {
        char dpath[2200];
        const char *slash = strrchr(path, '/');
        snprintf(dpath, sizeof dpath, "%s/%s", dump, slash ? slash + 1 : path);
        if (avk_atomic_write(dpath, bin, size) != ATTNVK_OK) { /* the bare binary, no cache header */
            fprintf(stderr, "[attnvk opencl] ATTNVK_OPENCL_DUMP_DIR: %s\n", attnvk_last_error());
            avk_clear_error();
        }
    }
    (void)dev;
    free(bin);
}

attnvk_status avk_cl_program(avk_bdev *dev, const avk_cl_source *sources, int count, const char *options,
                             cl_program *out)
{
    char full_options[1024];
    const char *extra = getenv("ATTNVK_OPENCL_BUILD_OPTIONS");
    snprintf(full_options, sizeof full_options, "%s%s%s", options, extra && *extra ? " " : "", extra ? extra : "");
    const char *texts[8 + PRELUDE_PARTS];
    size_t sizes[8 + PRELUDE_PARTS];
    if (count > 8) count = 8;
    uint64_t key = avk_hash_str(full_options, 0x6f70656e636cull);
    key = avk_hash_str(dev->caps.name, key);
    key = avk_hash_str(dev->caps.driver, key);
    key = avk_hash_str(dev->caps.version, key);
    for (int i = 0; i < PRELUDE_PARTS; ++i) prelude_text(i, &texts[i], &sizes[i]);
    for (int i = 0; i < count; ++i) source_text(sources[i], &texts[PRELUDE_PARTS + i], &sizes[PRELUDE_PARTS + i]);
    count += PRELUDE_PARTS;
    for (int i = 0; i < count; ++i) key = avk_hash(texts[i], sizes[i], key);
    for (int i = 0; i < dev->program_count; ++i)
        if (dev->programs[i].key == key) {
            *out = dev->programs[i].program;
            return ATTNVK_OK;
        }

    char path[1100];
    int cached = avk_cache_path("ocl", key, "bin", path, sizeof path);
    cl_program prog = cached ? from_binary(dev, path, key, full_options) : NULL;
    int from_cache = prog != NULL;
    if (!prog) {
        cl_int err = CL_SUCCESS;
        prog = avk_cl.CreateProgramWithSource(dev->context, (cl_uint)count, texts, sizes, &err);
        if (!prog || err != CL_SUCCESS) return avk_cl_fail(err, "clCreateProgramWithSource");
        err = avk_cl.BuildProgram(prog, 1, &dev->device, full_options, NULL, NULL);
        if (err != CL_SUCCESS) {
            char *log = build_log(dev, prog);
            attnvk_status s = fail_with_log(err, full_options, log);
            free(log);
            avk_cl.ReleaseProgram(prog);
            return s;
        }
        if (cached) store_binary(dev, prog, path, key);
    }
    maybe_print_log(dev, prog, full_options, from_cache);
    if (dev->program_count == AVK_CL_MAX_PROGRAMS) { /* full: forget the oldest */
        avk_cl.ReleaseProgram(dev->programs[0].program);
        memmove(dev->programs, dev->programs + 1, sizeof dev->programs[0] * (AVK_CL_MAX_PROGRAMS - 1));
        --dev->program_count;
    }
    dev->programs[dev->program_count].key = key;
    dev->programs[dev->program_count].program = prog;
    ++dev->program_count;
    *out = prog;
    return ATTNVK_OK;
}

void avk_cl_release_programs(avk_bdev *dev)
{
    for (int i = 0; i < dev->program_count; ++i) avk_cl.ReleaseProgram(dev->programs[i].program);
    dev->program_count = 0;
}

attnvk_status avk_cl_kernel(avk_bdev *dev, cl_program program, const char *name, size_t wg, cl_kernel *out)
{
    cl_int err = CL_SUCCESS;
    cl_kernel k = avk_cl.CreateKernel(program, name, &err);
    if (!k || err != CL_SUCCESS) return avk_cl_fail(err, name);
    size_t max_wg = 0;
    if (avk_cl.GetKernelWorkGroupInfo(k, dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL) ==
            CL_SUCCESS &&
        max_wg && wg > max_wg) {
        avk_cl.ReleaseKernel(k);
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "%s needs %zu work-items per group; the device allows %zu for it (registers or local memory)",
                        name, wg, max_wg);
    }
    *out = k;
    return ATTNVK_OK;
}
