/* cuBLAS unfused attention: GEMM -> row softmax (NVRTC) -> GEMM (see cublas_unfused.h).
 *
 * cuBLAS is column-major: a row-major [rows][cols] matrix with pitch ld is a
 * column-major cols x rows matrix with the same ld. So per (b, h):
 *   S^T (Nk x rows) = K (as Dk x Nk, op T) . Q^T (Dk x rows)           GEMM 1
 *   O^T (Dv x rows) = V^T (Dv x Nk) . P^T (Nk x rows, pitch 4*Nk/es)   GEMM 2 */
#include "cuda/cublas_internal.h"
#include "core/cache.h"
#include "core/dynlib.h"
#include "core/error.h"
#include "core/kv_cache.h"
#include "core/split_plan.h"
#include "core/tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char avk_cuda_softmax_source[]; /* native/softmax.cu, embedded */
extern const size_t avk_cuda_softmax_source_size;

/* ---- the library ---- */

#define AVK_CUBLAS_FUNCTIONS(X)     \
    X(cublasCreate_v2)              \
    X(cublasDestroy_v2)             \
    X(cublasSetStream_v2)           \
    X(cublasGetProperty)            \
    X(cublasGetStatusString)        \
    X(cublasGemmStridedBatchedEx)

#define AVK_BLAS_MEMBER(fn) __typeof__(fn) *fn;
#define AVK_BLAS_SYMBOL(fn) {#fn, (void **)&table.fn},

typedef struct blas_api {
    AVK_CUBLAS_FUNCTIONS(AVK_BLAS_MEMBER)
} blas_api;

static blas_api blas;
static avk_dynlib *blas_lib;
static int blas_tried;
static char blas_version[32];
static char blas_why[512];

attnvk_status avk_cublas_load(void)
{
    if (blas_lib) return ATTNVK_OK;
    if (blas_tried) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", blas_why);
    blas_tried = 1;
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
    avk_dynlib *lib = avk_dynlib_open(names);
    if (lib) {
        blas_api table;
        memset(&table, 0, sizeof table);
        const avk_symbol symbols[] = {AVK_CUBLAS_FUNCTIONS(AVK_BLAS_SYMBOL)};
        if (avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols)) != ATTNVK_OK) {
            avk_dynlib_close(lib);
            lib = NULL;
        } else {
            int major = 0, minor = 0, patch = 0;
            table.cublasGetProperty(MAJOR_VERSION, &major);
            table.cublasGetProperty(MINOR_VERSION, &minor);
            table.cublasGetProperty(PATCH_LEVEL, &patch);
            snprintf(blas_version, sizeof blas_version, "%d.%d.%d", major, minor, patch);
            blas = table;
        }
    }
    if (!lib) {
        snprintf(blas_why, sizeof blas_why, "%s", attnvk_last_error());
        return ATTNVK_ERROR_UNAVAILABLE;
    }
    blas_lib = lib;
    return ATTNVK_OK;
}

const char *avk_cublas_version_text(void) { return blas_version; }

static attnvk_status blas_fail(cublasStatus_t s, const char *what)
{
    attnvk_status kind = s == CUBLAS_STATUS_ALLOC_FAILED    ? ATTNVK_ERROR_OUT_OF_MEMORY
                         : s == CUBLAS_STATUS_NOT_SUPPORTED ? ATTNVK_ERROR_UNSUPPORTED
                                                            : ATTNVK_ERROR_BACKEND;
    return avk_fail(kind, "%s: %s", what, blas.cublasGetStatusString(s));
}

attnvk_status avk_cublas_gemm(avk_cublas_unfused *k, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                              int kk, const float *alpha, const void *a, cudaDataType at, int lda, long long sa,
                              const void *b, cudaDataType bt, int ldb, long long sb, const float *beta, void *c,
                              cudaDataType ct, int ldc, long long sc, int count, const char *what)
{
    cublasStatus_t bs = blas.cublasGemmStridedBatchedEx(k->handle, ta, tb, m, n, kk, alpha, a, at, lda, sa, b, bt, ldb,
                                                        sb, beta, c, ct, ldc, sc, count, CUBLAS_COMPUTE_32F,
                                                        CUBLAS_GEMM_DEFAULT);
    return bs == CUBLAS_STATUS_SUCCESS ? ATTNVK_OK : blas_fail(bs, what);
}

/* ---- the softmax kernel: tuning, NVRTC, cubin cache ---- */

/* extra[0]: longest row cached in dynamic shared memory (48 KiB of f32 needs no opt-in). */
static const avk_tuning softmax_tuning[] = {
    {"nvidia", NULL, NULL, -1, 0, 0, -1, "softmax-rows", 1, 0, 256, {12288, 0, 0, 0}},
    {NULL, NULL, NULL, -1, 0, 0, -1, "softmax-rows", 1, 0, 256, {12288, 0, 0, 0}},
};

/* The _mod entries modify each score (softcap, ALiBi, mask); the plain ones
 * read nothing but S and still bound the keys and take the sink. */
static const char *softmax_entry(attnvk_dtype d, int mod)
{
    static const char *const names[2][3] = {{"avk_softmax_f32", "avk_softmax_f16", "avk_softmax_bf16"},
                                            {"avk_softmax_f32_mod", "avk_softmax_f16_mod", "avk_softmax_bf16_mod"}};
    return names[mod != 0][d == ATTNVK_F16 ? 1 : d == ATTNVK_BF16 ? 2 : 0];
}

/* native/softmax.cu's AVK_SM_* flags (opencl/softmax.cl's values) */
enum { SM_ALIBI = 1, SM_SINKS = 2, SM_MASK = 4, SM_MASK_F16 = 8, SM_TOP_LEFT = 16 };

int avk_cublas_softmax_flags(const attnvk_problem *p)
{
    return (p->alibi ? SM_ALIBI : 0) | (p->sinks ? SM_SINKS : 0) | (p->mask ? SM_MASK : 0) |
           (p->mask && p->mask_dtype == ATTNVK_F16 ? SM_MASK_F16 : 0) |
           (p->align == ATTNVK_ALIGN_TOP_LEFT ? SM_TOP_LEFT : 0);
}

static attnvk_status nvrtc_compile(const char *arch, int threads, void **cubin, size_t *size)
{
    const avk_nvrtc *rtc = avk_nvrtc_load();
    if (!rtc) return ATTNVK_ERROR_UNAVAILABLE;
    char opt_arch[48], opt_threads[48];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=sm_%s", arch);
    snprintf(opt_threads, sizeof opt_threads, "-DAVK_SOFTMAX_THREADS=%d", threads);
    const char *opts[] = {opt_arch, opt_threads};
    nvrtcProgram prog = NULL;
    nvrtcResult r = rtc->nvrtcCreateProgram(&prog, (const char *)avk_cuda_softmax_source, "softmax.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) return avk_fail(ATTNVK_ERROR_COMPILE, "nvrtcCreateProgram: %s", rtc->nvrtcGetErrorString(r));
    r = rtc->nvrtcCompileProgram(prog, 2, opts);
    if (r != NVRTC_SUCCESS) {
        size_t log_size = 0;
        char log[2048] = "";
        if (rtc->nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
            char *full = malloc(log_size);
            if (full && rtc->nvrtcGetProgramLog(prog, full) == NVRTC_SUCCESS) snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        for (char *c = log; *c; ++c)
            if (*c == '\n') *c = ' ';
        rtc->nvrtcDestroyProgram(&prog);
        return avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC softmax.cu for sm_%s: %s: %s", arch, rtc->nvrtcGetErrorString(r),
                        log);
    }
    *size = 0;
    r = rtc->nvrtcGetCUBINSize(prog, size);
    *cubin = r == NVRTC_SUCCESS && *size ? malloc(*size) : NULL;
    if (*cubin) r = rtc->nvrtcGetCUBIN(prog, *cubin);
    rtc->nvrtcDestroyProgram(&prog);
    if (!*cubin || r != NVRTC_SUCCESS) {
        free(*cubin);
        *cubin = NULL;
        return avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC softmax.cu: no cubin for sm_%s", arch);
    }
    return ATTNVK_OK;
}

/* 1 when the cubin's string tables name the entry (the name and its NUL). */
static int cubin_has(const void *cubin, size_t size, const char *name)
{
    const size_t n = strlen(name) + 1;
    for (size_t i = 0; i + n <= size; ++i)
        if (memcmp((const char *)cubin + i, name, n) == 0) return 1;
    return 0;
}

attnvk_status avk_softmax_compile_check(const char *arch, size_t *cubin_bytes)
{
    void *cubin = NULL;
    size_t size = 0;
    attnvk_status s = nvrtc_compile(arch, softmax_tuning[0].workgroup_size, &cubin, &size);
    /* the forward's and the backward's entries (cublas_backward.c) */
    const char *names[24];
    int n = 0;
    for (int mod = 0; mod < 2; ++mod)
        for (int d = ATTNVK_F32; d <= ATTNVK_BF16; ++d) {
            names[n++] = softmax_entry((attnvk_dtype)d, mod);
            names[n++] = avk_cublas_bwd_entry((attnvk_dtype)d, mod);
        }
    names[n++] = "avk_sink_grad", names[n++] = "avk_convert_f16", names[n++] = "avk_convert_bf16";
    names[n++] = "avk_fp8_out_f16", names[n++] = "avk_fp8_out_bf16";
    for (int i = 0; i < n && s == ATTNVK_OK; ++i)
        if (!cubin_has(cubin, size, names[i]))
            s = avk_fail(ATTNVK_ERROR_COMPILE, "NVRTC softmax.cu for sm_%s: no %s in the cubin", arch, names[i]);
    free(cubin);
    if (cubin_bytes) *cubin_bytes = size;
    return s;
}

/* Loads the softmax module for dev: from the cubin cache (keyed by source,
 * options, NVRTC and driver versions) or compiled now and stored. */
attnvk_status avk_softmax_module(avk_cuda_device *dev, int threads, CUmodule *module)
{
    const avk_nvrtc *rtc = avk_nvrtc_load();
    if (!rtc) return ATTNVK_ERROR_UNAVAILABLE;
    char arch[16], identity[160];
    snprintf(arch, sizeof arch, "%d%d", dev->cc_major, dev->cc_minor);
    snprintf(identity, sizeof identity, "sm_%s threads=%d nvrtc=%d.%d driver=%d", arch, threads, rtc->major,
             rtc->minor, dev->driver_version);
    uint64_t key = avk_hash_str(identity, avk_hash(avk_cuda_softmax_source, avk_cuda_softmax_source_size, 0));
    char path[1024];
    int cached = avk_cache_path("cuda-softmax", key, "cubin", path, sizeof path);
    size_t size = 0;
    void *cubin = cached ? avk_cache_load(path, key, &size) : NULL;
    if (cubin && dev->cu->cuModuleLoadData(module, cubin) == CUDA_SUCCESS) {
        free(cubin);
        return ATTNVK_OK;
    }
    free(cubin); /* missing or stale: compile */
    attnvk_status s = nvrtc_compile(arch, threads, &cubin, &size);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_check(dev, dev->cu->cuModuleLoadData(module, cubin), "cuModuleLoadData(softmax)");
    if (s == ATTNVK_OK && cached) avk_cache_store(path, key, cubin, size);
    free(cubin);
    return s;
}

/* ---- the prepared kernel ---- */

void avk_cublas_unfused_release(avk_cuda_device *dev, avk_cublas_unfused *k)
{
    if (!k) return;
    if (avk_cuda_push(dev) == ATTNVK_OK) {
        CUdeviceptr mems[] = {k->scores, k->bwd_dp, k->bwd_share, k->bwd_grads};
        for (size_t i = 0; i < sizeof mems / sizeof *mems; ++i)
            if (mems[i]) dev->cu->cuMemFree(mems[i]);
        if (k->module) dev->cu->cuModuleUnload(k->module);
        if (k->handle) blas.cublasDestroy_v2(k->handle);
        avk_cuda_pop(dev);
    }
    avk_unfused_plan_free(&k->plan);
    free(k);
}

/* The scores must fit next to what is allocated already, with headroom for cuBLAS. */
static attnvk_status reserve_scores(avk_cuda_device *dev, avk_cublas_unfused *k)
{
    const uint64_t need = k->plan.scores_bytes, headroom = 64ull << 20;
    size_t free_bytes = 0, total = 0;
    attnvk_status s = avk_cuda_check(dev, dev->cu->cuMemGetInfo(&free_bytes, &total), "cuMemGetInfo");
    if (s != ATTNVK_OK) return s;
    if (need + headroom > free_bytes || need > SIZE_MAX)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuBLAS unfused needs %llu bytes of f32 scores (B*H*Nq*Nk*4) but only %llu bytes of device "
                        "memory are free",
                        (unsigned long long)need, (unsigned long long)free_bytes);
    CUresult r = dev->cu->cuMemAlloc(&k->scores, (size_t)need);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuBLAS unfused could not allocate its %llu-byte scores workspace",
                        (unsigned long long)need);
    return avk_cuda_check(dev, r, "cuMemAlloc(scores)");
}

attnvk_status avk_cublas_unfused_prepare(avk_cuda_device *dev, const attnvk_problem *p, avk_cublas_unfused **out,
                                         attnvk_kernel_info *info)
{
    attnvk_status s = avk_cublas_load();
    if (s != ATTNVK_OK) return s;
    if (p->dtype == ATTNVK_BF16 && dev->cc_major < 8)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "bf16 needs compute capability 8.0 or newer");
    avk_cublas_unfused *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    k->problem = *p;
    k->scale = attnvk_problem_scale(p);
    k->score_mod = (avk_problem_features(p) & AVK_SCORE_MOD_FEATURES) != 0;
    avk_tuning_query query = {&dev->info, p->dtype, p->head_dim, avk_is_decode(p), NULL, NULL};
    const avk_tuning *t = avk_tuning_lookup(softmax_tuning, (int)(sizeof softmax_tuning / sizeof *softmax_tuning),
                                            &query);
    k->threads = t->workgroup_size;
    k->cached_cols = p->seq_kv <= t->extra[0] ? p->seq_kv : 0;
    s = avk_unfused_plan_make(p, &k->plan);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) {
        avk_unfused_plan_free(&k->plan);
        free(k);
        return s;
    }
    s = reserve_scores(dev, k);
    if (s == ATTNVK_OK) {
        cublasStatus_t bs = blas.cublasCreate_v2(&k->handle);
        if (bs == CUBLAS_STATUS_SUCCESS) bs = blas.cublasSetStream_v2(k->handle, (cudaStream_t)dev->stream);
        if (bs != CUBLAS_STATUS_SUCCESS) s = blas_fail(bs, "cublasCreate");
    }
    if (s == ATTNVK_OK) s = avk_softmax_module(dev, k->threads, &k->module);
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev,
                           dev->cu->cuModuleGetFunction(&k->softmax, k->module, softmax_entry(p->dtype, k->score_mod)),
                           "cuModuleGetFunction(softmax)");
    avk_cuda_pop(dev);
    if (s != ATTNVK_OK) {
        avk_cublas_unfused_release(dev, k);
        return s;
    }
    if (info) {
        snprintf(info->variant, sizeof info->variant, "cublas-%s-gemm-softmax-gemm", blas_version);
        info->workgroup_size = k->threads;
        info->workspace_bytes = k->plan.scores_bytes;
        snprintf(info->params, sizeof info->params,
                 "gemm_calls=%d rows_per_gemm=%d softmax_threads=%d cached_cols=%d score_mod=%d",
                 2 * k->plan.call_count, k->plan.rows, k->threads, k->cached_cols, k->score_mod);
    }
    *out = k;
    return ATTNVK_OK;
}

cudaDataType avk_cublas_type(attnvk_dtype d)
{
    return d == ATTNVK_F16 ? CUDA_R_16F : d == ATTNVK_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

attnvk_status avk_cublas_unfused_enqueue(avk_cuda_device *dev, avk_cublas_unfused *k, const avk_dispatch *a)
{
    const CUdeviceptr q = avk_cuda_ptr(a->q), kb = avk_cuda_ptr(a->k), v = avk_cuda_ptr(a->v), o = avk_cuda_ptr(a->o);
    const attnvk_problem *p = &k->problem;
    const avk_unfused_plan *plan = &k->plan;
    const size_t es = attnvk_dtype_size(p->dtype);
    const cudaDataType io = avk_cublas_type(p->dtype);
    const int per_f32 = (int)(sizeof(float) / es); /* P elements per S element: P's pitch is Nk f32 */
    const float one = 1.0f, zero = 0.0f;
    const char *base_q = (const char *)(uintptr_t)q, *base_k = (const char *)(uintptr_t)kb;
    const char *base_v = (const char *)(uintptr_t)v;
    char *base_o = (char *)(uintptr_t)o, *base_s = (char *)(uintptr_t)k->scores;

    for (int i = 0; i < plan->call_count; ++i) {
        const avk_unfused_call *c = &plan->calls[i];
        cublasStatus_t bs = blas.cublasGemmStridedBatchedEx(
            k->handle, CUBLAS_OP_T, CUBLAS_OP_N, p->seq_kv, plan->rows, p->head_dim, &k->scale,
            base_k + c->kv_offset * es, io, plan->ld_kv, c->kv_stride, base_q + c->q_offset * es, io, plan->ld_q,
            c->q_stride, &zero, base_s + c->s_offset * sizeof(float), CUDA_R_32F, p->seq_kv, c->s_stride, c->count,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (bs != CUBLAS_STATUS_SUCCESS) return blas_fail(bs, "cublasGemmStridedBatchedEx (S = Q.K^T)");
    }

    unsigned rows = (unsigned)((size_t)p->batch * p->heads * p->seq_q);
    int seq_q = p->seq_q, seq_kv = p->seq_kv, causal = p->causal, cached = k->cached_cols;
    /* attnvk.h's score modifications; absent inputs are null pointers */
    const int has_window = (avk_problem_features(p) & ATTNVK_FEATURE_WINDOW) != 0;
    int heads = p->heads, flags = avk_cublas_softmax_flags(p), window_left = has_window ? p->window_left : -1,
        window_right = has_window ? p->window_right : -1;
    float softcap = p->softcap;
    CUdeviceptr slopes = avk_cuda_ptr(a->alibi_slopes), sinks = avk_cuda_ptr(a->sinks), mask = avk_cuda_ptr(a->mask);
    if ((p->alibi && !slopes) || (p->sinks && !sinks) || (p->mask && !mask))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuBLAS unfused: the problem's ALiBi slopes, sinks or mask "
                                                       "buffer is missing");
    const long long mask_pair = (long long)p->seq_q * p->seq_kv;
    long long mask_b = p->mask && p->mask_batch > 1 ? mask_pair * p->mask_heads : 0,
              mask_h = p->mask && p->mask_heads > 1 ? mask_pair : 0;
    CUdeviceptr lse = avk_cuda_ptr(a->lse); /* 0: not asked */
    void *args[] = {&k->scores, &seq_q,   &seq_kv, &causal, &cached, &heads,  &flags, &window_left,
                    &window_right, &softcap, &slopes, &sinks, &mask,   &mask_b, &mask_h, &lse};
    unsigned smem = (unsigned)((size_t)cached * sizeof(float));
    attnvk_status s = avk_cuda_check(dev,
                                     dev->cu->cuLaunchKernel(k->softmax, rows, 1, 1, (unsigned)k->threads, 1, 1, smem,
                                                             dev->stream, args, NULL),
                                     "cuLaunchKernel(softmax)");
    if (s != ATTNVK_OK) return s;

    for (int i = 0; i < plan->call_count; ++i) {
        const avk_unfused_call *c = &plan->calls[i];
        cublasStatus_t bs = blas.cublasGemmStridedBatchedEx(
            k->handle, CUBLAS_OP_N, CUBLAS_OP_N, attnvk_problem_head_dim_v(p), plan->rows, p->seq_kv, &one,
            base_v + c->v_offset * es, io, plan->ld_v, c->v_stride, base_s + c->s_offset * sizeof(float), io,
            p->seq_kv * per_f32, c->s_stride * per_f32, &zero, base_o + c->o_offset * es, io, plan->ld_o, c->o_stride,
            c->count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (bs != CUBLAS_STATUS_SUCCESS) return blas_fail(bs, "cublasGemmStridedBatchedEx (O = P.V)");
    }
    return ATTNVK_OK;
}
