/* Unfused attention on rocBLAS: two strided-batched GEMMs around a row
 * softmax. Materialises Nq x Nk scores per head, so its workspace is checked
 * against free device memory before anything is allocated. The backward:
 * hip_rocblas_backward.c. */
#include "hip/hip_rocblas_internal.h"
#include "core/test_hooks.h"
#include "hip/hip_kernels.h"
#include "hip/hip_modules.h"
#include "core/dynlib.h"
#include "core/kv_cache.h"
#include "core/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char avk_hip_softmax_source[];

static const char *const rocblas_names[] = {"librocblas.so.5", "librocblas.so.4", "librocblas.so.3",
                                            "librocblas.so.0", "librocblas.so", NULL};

static avk_rocblas_api api;
static avk_dynlib *lib;
static int tried;
static char why[512];

static const avk_rocblas_api *load_rocblas(void)
{
    if (lib) return &api;
    if (tried) {
        avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", why);
        return NULL;
    }
    tried = 1;
    avk_dynlib *l = avk_dynlib_open(rocblas_names);
    if (l) {
        const avk_symbol symbols[] = {
            {"rocblas_create_handle", (void **)&api.create_handle},
            {"rocblas_destroy_handle", (void **)&api.destroy_handle},
            {"rocblas_set_stream", (void **)&api.set_stream},
            {"rocblas_gemm_strided_batched_ex", (void **)&api.gemm},
        };
        if (avk_dynlib_bind(l, symbols, (int)(sizeof symbols / sizeof *symbols)) == ATTNVK_OK) {
            *(void **)&api.status_to_string = avk_dynlib_sym(l, "rocblas_status_to_string");
            *(void **)&api.get_atomics_mode = avk_dynlib_sym(l, "rocblas_get_atomics_mode");
            *(void **)&api.set_atomics_mode = avk_dynlib_sym(l, "rocblas_set_atomics_mode");
            lib = l;
            return &api;
        }
    }
    snprintf(why, sizeof why, "%s", attnvk_last_error());
    avk_dynlib_close(l);
    return NULL;
}

void avk_hip_rocblas_unload(void)
{
    avk_dynlib_close(lib);
    lib = NULL;
    tried = 0;
}

typedef struct device_state {
    rocblas_handle handle;
} device_state;

void avk_hip_rocblas_close(avk_hip_device *dev)
{
    device_state *st = dev->rocblas;
    if (st && st->handle && lib) api.destroy_handle(st->handle);
    free(st);
    dev->rocblas = NULL;
}

static attnvk_status rocblas_check(rocblas_status r, const char *what)
{
    if (r == rocblas_status_success) return ATTNVK_OK;
    const char *text = api.status_to_string ? api.status_to_string(r) : NULL;
    if (r == rocblas_status_memory_error)
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: %s", what, text ? text : "rocblas_status_memory_error");
    return avk_fail(ATTNVK_ERROR_BACKEND, "%s: rocblas status %d%s%s", what, (int)r, text ? " " : "", text ? text : "");
}

const avk_rocblas_api *avk_hip_rocblas_api(void) { return &api; }

attnvk_status avk_hip_rocblas_check(rocblas_status r, const char *what) { return rocblas_check(r, what); }

static attnvk_status device_handle(avk_hip_device *dev, rocblas_handle *out)
{
    if (!load_rocblas()) return ATTNVK_ERROR_UNAVAILABLE;
    if (!dev->rocblas) {
        device_state *st = calloc(1, sizeof *st);
        if (!st) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
        attnvk_status s = avk_hip_use(dev);
        if (s == ATTNVK_OK) s = rocblas_check(api.create_handle(&st->handle), "rocblas_create_handle");
        if (s == ATTNVK_OK) s = rocblas_check(api.set_stream(st->handle, dev->stream), "rocblas_set_stream");
        if (s != ATTNVK_OK) {
            if (st->handle) api.destroy_handle(st->handle);
            free(st);
            return s;
        }
        dev->rocblas = st;
    }
    *out = ((device_state *)dev->rocblas)->handle;
    return ATTNVK_OK;
}

void avk_hip_rocblas_describe(avk_hip_device *dev, attnvk_impl_info *out)
{
    (void)dev;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "rocblas");
    out->fused = 0;
    out->available = load_rocblas() != NULL;
    /* its row softmax (kernels/softmax_rows.hip) applies them all; P.V and O take Dv */
    out->features = AVK_SCORE_FEATURES | ATTNVK_FEATURE_HEAD_DIM_V;
    if (!out->available) snprintf(out->reason, sizeof out->reason, "%.255s", why);
}

unsigned long long avk_hip_rocblas_workspace_bytes(const attnvk_problem *p)
{
    unsigned long long pairs = (unsigned long long)p->batch * p->heads * p->seq_q * p->seq_kv;
    return pairs * (sizeof(float) + attnvk_dtype_size(p->dtype));
}

void avk_hip_rocblas_softmax_source(const char *defines, avk_hip_source *out)
{
    const avk_hip_source src = {"softmax_rows.hip", (const char *)avk_hip_softmax_source, defines, NULL, NULL, 0};
    *out = src;
}

/* kernels/softmax_rows.hip's AVK_SM_* flags (opencl/softmax.cl's values) */
enum { SM_ALIBI = 1, SM_SINKS = 2, SM_MASK = 4, SM_MASK_F16 = 8, SM_TOP_LEFT = 16 };

int avk_hip_rocblas_softmax_flags(const attnvk_problem *p)
{
    return (p->alibi ? SM_ALIBI : 0) | (p->sinks ? SM_SINKS : 0) | (p->mask ? SM_MASK : 0) |
           (p->mask && p->mask_dtype == ATTNVK_F16 ? SM_MASK_F16 : 0) |
           (p->align == ATTNVK_ALIGN_TOP_LEFT ? SM_TOP_LEFT : 0);
}

rocblas_datatype avk_hip_rocblas_type(attnvk_dtype d)
{
    if (d == ATTNVK_F16) return rocblas_datatype_f16_r;
    return d == ATTNVK_BF16 ? rocblas_datatype_bf16_r : rocblas_datatype_f32_r;
}

void avk_hip_rocblas_release(avk_hip_device *dev, avk_hip_rocblas_kernel *k)
{
    if (!k) return;
    if (!dev->lost && dev->hip->hipSetDevice(dev->ordinal) == hipSuccess) {
        avk_hip_rocblas_backward_free(dev, k);
        if (k->scores) dev->hip->hipFree(k->scores);
        if (k->probs) dev->hip->hipFree(k->probs);
        if (k->module) dev->hip->hipModuleUnload(k->module);
    }
    free(k);
}

static attnvk_status alloc_workspace(avk_hip_device *dev, avk_hip_rocblas_kernel *k, unsigned long long need)
{
    const attnvk_problem *p = &k->p;
    size_t free_bytes = 0, total = 0;
    attnvk_status s = avk_hip_check(dev, dev->hip->hipMemGetInfo(&free_bytes, &total), "hipMemGetInfo");
    if (s != ATTNVK_OK) return s;
    if (need > free_bytes)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "rocblas (unfused) needs %llu bytes of workspace for the %d x %d scores of %d heads; "
                        "%zu bytes are free",
                        need, p->seq_q, p->seq_kv, p->batch * p->heads, free_bytes);
    size_t pairs = (size_t)p->batch * p->heads * p->seq_q * p->seq_kv;
    if (dev->hip->hipMalloc(&k->scores, pairs * sizeof(float)) != hipSuccess ||
        dev->hip->hipMalloc(&k->probs, pairs * attnvk_dtype_size(p->dtype)) != hipSuccess)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "rocblas (unfused) needs %llu bytes of workspace; hipMalloc failed",
                        need);
    return ATTNVK_OK;
}

attnvk_status avk_hip_rocblas_prepare(avk_hip_device *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                      avk_hip_rocblas_kernel **out, attnvk_kernel_info *info)
{
    if (o->variant && strcmp(o->variant, "gemm-softmax-gemm") != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown rocblas variant '%s' (only gemm-softmax-gemm)",
                        o->variant);
    rocblas_handle handle = NULL;
    attnvk_status s = device_handle(dev, &handle);
    if (s != ATTNVK_OK) return s;
    const avk_tuning *t = avk_hip_rocblas_tuning(&dev->info, p);
    if (!t) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "no rocblas tuning entry for %s", dev->info.architecture);
    avk_hip_rocblas_kernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    k->p = *p;
    k->handle = handle;
    k->softmax_threads = t->workgroup_size;
    int tile = t->tile_bc;
    k->key_limit = (o->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) ? (p->seq_kv - 1) / tile * tile : p->seq_kv;
    unsigned long long need = avk_hip_rocblas_workspace_bytes(p);
    if ((unsigned long long)p->batch * p->heads * p->seq_q * (unsigned)k->softmax_threads > 0xffffffffull) {
        free(k);
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "rocblas (unfused): %d x %d query rows exceed one softmax launch",
                        p->batch * p->heads, p->seq_q);
    }
    char origin[96], defines[64];
    snprintf(defines, sizeof defines, "-DAVK_SOFTMAX_THREADS=%d", k->softmax_threads);
    avk_hip_source src;
    avk_hip_rocblas_softmax_source(defines, &src);
    /* the _mod entries modify each score; the plain ones read nothing but S */
    static const char *const fn[2][3] = {{"avk_softmax_rows_f32", "avk_softmax_rows_f16", "avk_softmax_rows_bf16"},
                                         {"avk_softmax_rows_f32_mod", "avk_softmax_rows_f16_mod",
                                          "avk_softmax_rows_bf16_mod"}};
    k->score_mod = (avk_problem_features(p) & AVK_SCORE_MOD_FEATURES) != 0;
    s = avk_hip_use(dev);
    if (s == ATTNVK_OK) s = avk_hip_load_module(dev, "softmax", &src, &k->module, origin, sizeof origin);
    if (s == ATTNVK_OK) s = avk_hip_get_function(dev, k->module, fn[k->score_mod][p->dtype], &k->softmax);
    if (s == ATTNVK_OK) s = alloc_workspace(dev, k, need);
    if (s != ATTNVK_OK) {
        avk_hip_rocblas_release(dev, k);
        return s;
    }
    snprintf(info->implementation, sizeof info->implementation, "rocblas");
    snprintf(info->variant, sizeof info->variant, "gemm-softmax-gemm");
    info->tile_br = 1;
    info->tile_bc = p->seq_kv;
    info->workgroup_size = k->softmax_threads;
    info->split_kv = 1;
    info->workspace_bytes = need;
    snprintf(info->params, sizeof info->params,
             "gemm=rocblas_gemm_strided_batched_ex compute=f32 softmax=%s score_mod=%d", origin, k->score_mod);
    *out = k;
    return ATTNVK_OK;
}

/* One GEMM call covers `batch` heads whose operands sit at fixed strides
 * (Q and K rows of Dk, V and O rows of Dv). */
typedef struct head_batch {
    int calls, batch; /* calls x batch = B x H */
    long long q_stride, kv_stride, o_stride, v_stride;
    int q_ld, kv_ld, o_ld, v_ld;
} head_batch;

/* MHA in BHSD: one call over all B*H heads. MHA in BSHD: a call per batch.
 * GQA/MQA: a call per (b, kv head), its query heads sharing one K/V (stride 0). */
static head_batch plan_heads(const attnvk_problem *p)
{
    const int D = p->head_dim, Dv = attnvk_problem_head_dim_v(p), G = p->heads / p->kv_heads;
    const int bhsd = p->layout == ATTNVK_LAYOUT_BHSD;
    head_batch hb;
    hb.q_ld = bhsd ? D : p->heads * D;
    hb.kv_ld = bhsd ? D : p->kv_heads * D;
    hb.o_ld = bhsd ? Dv : p->heads * Dv;
    hb.v_ld = bhsd ? Dv : p->kv_heads * Dv;
    hb.q_stride = bhsd ? (long long)p->seq_q * D : D;
    hb.o_stride = bhsd ? (long long)p->seq_q * Dv : Dv;
    if (G == 1) {
        hb.calls = bhsd ? 1 : p->batch;
        hb.batch = bhsd ? p->batch * p->heads : p->heads;
        hb.kv_stride = bhsd ? (long long)p->seq_kv * D : D;
        hb.v_stride = bhsd ? (long long)p->seq_kv * Dv : Dv;
    } else {
        hb.calls = p->batch * p->kv_heads;
        hb.batch = G;
        hb.kv_stride = hb.v_stride = 0;
    }
    return hb;
}

static attnvk_status run_gemms(avk_hip_rocblas_kernel *k, const avk_dispatch *a, int pass)
{
    const attnvk_problem *p = &k->p;
    const head_batch hb = plan_heads(p);
    const size_t es = attnvk_dtype_size(p->dtype);
    const int heads_per_call = hb.batch, G = p->heads / p->kv_heads, D = p->head_dim, Dv = attnvk_problem_head_dim_v(p);
    const long long s_stride = (long long)a->q_count * p->seq_kv;
    const rocblas_datatype dt = avk_hip_rocblas_type(p->dtype);
    const float scale = attnvk_problem_scale(p), one = 1.f, zero = 0.f;
    for (int c = 0; c < hb.calls; ++c) {
        int first = c * heads_per_call; /* flat b*H + h of the call's first head */
        int b = first / p->heads, h = first % p->heads;
        const char *q = (const char *)a->q->ptr + avk_q_offset(p, b, h, a->q_begin) * es;
        const char *kk = (const char *)a->k->ptr + avk_kv_offset(p, b, h / G, 0) * es;
        const char *v = (const char *)a->v->ptr + avk_v_offset(p, b, h / G, 0) * es;
        char *o = (char *)a->o->ptr + avk_o_offset(p, b, h, a->q_begin) * es;
        float *s = (float *)k->scores + (long long)first * s_stride;
        char *prob = (char *)k->probs + (size_t)first * (size_t)s_stride * es;
        rocblas_status r;
        if (pass == 0) /* column-major S^T (Nk x rows) = K (Nk x D) . Q^T: scores row-major, scaled */
            r = api.gemm(k->handle, rocblas_operation_transpose, rocblas_operation_none, p->seq_kv, a->q_count, D,
                         &scale, kk, dt, hb.kv_ld, hb.kv_stride, q, dt, hb.q_ld, hb.q_stride, &zero, s,
                         rocblas_datatype_f32_r, p->seq_kv, s_stride, s, rocblas_datatype_f32_r, p->seq_kv, s_stride,
                         hb.batch, rocblas_datatype_f32_r, rocblas_gemm_algo_standard, 0, 0);
        else /* column-major O^T (Dv x rows) = V^T (Dv x Nk) . P^T */
            r = api.gemm(k->handle, rocblas_operation_none, rocblas_operation_none, Dv, a->q_count, p->seq_kv, &one,
                         v, dt, hb.v_ld, hb.v_stride, prob, dt, p->seq_kv, s_stride, &zero, o, dt, hb.o_ld,
                         hb.o_stride, o, dt, hb.o_ld, hb.o_stride, hb.batch, rocblas_datatype_f32_r,
                         rocblas_gemm_algo_standard, 0, 0);
        attnvk_status st = rocblas_check(r, pass == 0 ? "rocblas_gemm_strided_batched_ex (Q.K^T)"
                                                      : "rocblas_gemm_strided_batched_ex (P.V)");
        if (st != ATTNVK_OK) return st;
    }
    return ATTNVK_OK;
}

/* One launch: S = Q K^T, the softmax, O = P V. */
static attnvk_status launch(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_dispatch *a)
{
    const attnvk_problem *p = &k->p;
    attnvk_status s = run_gemms(k, a, 0);
    if (s == ATTNVK_OK) {
        void *lse = a->lse ? a->lse->ptr : NULL;
        int q_count = a->q_count, q_begin = a->q_begin, seq_q = p->seq_q, seq_kv = p->seq_kv;
        int causal = p->causal, key_limit = k->key_limit;
        /* attnvk.h's score modifications; absent inputs are null pointers */
        const int has_window = (avk_problem_features(p) & ATTNVK_FEATURE_WINDOW) != 0;
        int heads = p->heads, window_left = has_window ? p->window_left : -1,
            window_right = has_window ? p->window_right : -1;
        int flags = avk_hip_rocblas_softmax_flags(p);
        float softcap = p->softcap;
        void *slopes = a->alibi_slopes ? a->alibi_slopes->ptr : NULL, *sinks = a->sinks ? a->sinks->ptr : NULL,
             *mask = a->mask ? a->mask->ptr : NULL;
        if ((p->alibi && !slopes) || (p->sinks && !sinks) || (p->mask && !mask))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "rocblas (unfused): the problem's ALiBi slopes, sinks or mask buffer is missing");
        const long long mask_pair = (long long)p->seq_q * p->seq_kv;
        long long mask_b = p->mask && p->mask_batch > 1 ? mask_pair * p->mask_heads : 0,
                  mask_h = p->mask && p->mask_heads > 1 ? mask_pair : 0;
        void *args[] = {&k->scores, &k->probs, &lse,  &q_count,     &q_begin,      &seq_q,   &seq_kv,
                        &causal,    &key_limit, &heads, &flags,       &window_left, &window_right, &softcap,
                        &slopes,    &sinks,     &mask,  &mask_b,      &mask_h};
        unsigned rows = (unsigned)p->batch * (unsigned)p->heads * (unsigned)q_count;
        s = avk_hip_check(dev,
                          dev->hip->hipModuleLaunchKernel(k->softmax, rows, 1, 1, (unsigned)k->softmax_threads, 1, 1,
                                                          0, dev->stream, args, NULL),
                          "hipModuleLaunchKernel(softmax)");
    }
    if (s == ATTNVK_OK) s = run_gemms(k, a, 1);
    return s;
}

attnvk_status avk_hip_rocblas_dispatch(avk_hip_device *dev, avk_hip_rocblas_kernel *k, const avk_dispatch *a,
                                       double *device_ms)
{
    attnvk_status s = avk_hip_use(dev);
    if (s == ATTNVK_OK) s = avk_hip_time_begin(dev);
    for (int i = 0; i < a->launches && s == ATTNVK_OK; ++i) s = launch(dev, k, a);
    double ms = 0;
    if (s == ATTNVK_OK) s = avk_hip_time_end(dev, &ms);
    *device_ms = ms / a->launches;
    return s;
}
