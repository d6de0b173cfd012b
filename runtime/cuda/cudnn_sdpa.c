/* cuDNN fused attention through the backend graph API (see cudnn_sdpa.h).
 *
 * The operation graph is the one cudnn-frontend emits for an inference SDPA
 * node on cuDNN 9.x before its unified softmax/mask ops:
 *   S  = Q x K^T                      (matmul, f32 compute, K given as K^T strides)
 *   S1 = S * scale                    (pointwise MUL with a by-value scalar)
 *   score modifications and the visible band (cudnn_scores.c): softcap, mask
 *   as cuDNN's bias, ALiBi, causal/window bounds from generated indices: L
 *   M = max_j L (and the sink), E = exp(L - M), Z = sum_j E (+ exp(sink - M))
 *   stats = M + log Z, P = E / Z  (in the I/O type), O = P x V
 * cuDNN's runtime-fusion engines recognise this pattern as flash attention. */
#include "cuda/cudnn_sdpa.h"
#include "cuda/cudnn_scores.h"
#include "cuda/cudnn_sdpa_bwd.h"
#include "cuda/cudnn_sdpa_fp8.h"
#include "cuda/cublas_unfused.h" /* avk_softmax_module: the e4m3 O conversion */
#include "core/q_format.h"
#include "core/dynlib.h"
#include "core/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the library ---- */

#define AVK_DNN_SYMBOL(fn) {#fn, (void **)&table.fn},

static avk_dynlib *dnn_lib;
static int dnn_tried;
static char dnn_version[32];
static char dnn_why[512];

attnvk_status avk_cudnn_load(void)
{
    if (dnn_lib) return ATTNVK_OK;
    if (dnn_tried) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", dnn_why);
    dnn_tried = 1;
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so", NULL};
    avk_dynlib *lib = avk_dynlib_open(names);
    if (lib) {
        avk_dnn_api table;
        memset(&table, 0, sizeof table);
        const avk_symbol symbols[] = {AVK_CUDNN_FUNCTIONS(AVK_DNN_SYMBOL)};
        if (avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols)) != ATTNVK_OK) {
            avk_dynlib_close(lib);
            lib = NULL;
        } else {
            size_t v = table.cudnnGetVersion();
            if (v / 10000 != 9) {
                avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s is cuDNN %zu.%zu; the graph here is written for cuDNN 9",
                         avk_dynlib_name(lib), v / 10000, (v % 10000) / 100);
                avk_dynlib_close(lib);
                lib = NULL;
            } else {
                avk_dnn = table;
                avk_dnn_version_number = v;
                snprintf(dnn_version, sizeof dnn_version, "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
            }
        }
    }
    if (!lib) {
        snprintf(dnn_why, sizeof dnn_why, "%s", attnvk_last_error());
        return ATTNVK_ERROR_UNAVAILABLE;
    }
    dnn_lib = lib;
    return ATTNVK_OK;
}

const char *avk_cudnn_version_text(void) { return dnn_version; }

/* Adds the SDPA forward operations for p; v holds the by-value scalars'
 * host values. real_stats: stats (log-sum-exp) is a bound tensor instead of a
 * virtual one (some engines want it); o_e4m3: the FP8 graph writes O in e4m3. */
static void build_sdpa(avk_dnn_builder *b, const attnvk_problem *p, avk_dnn_score_values *v, int real_stats,
                       int o_e4m3)
{
    if (avk_q_is_fp8(p)) {
        avk_dnn_build_sdpa_fp8(b, p, v, real_stats, o_e4m3);
        return;
    }
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const cudnnDataType_t io = avk_dnn_io_type(p->dtype);
    int64_t B = p->batch, H = p->heads, Hkv = p->kv_heads, Nq = p->seq_q, Nk = p->seq_kv;
    const int64_t Dk = p->head_dim, Dv = attnvk_problem_head_dim_v(p);

    const avk_dnn_shape kt = avk_dnn_transposed(avk_dnn_layout_shape(p, Hkv, Nk, Dk)); /* K as K^T */

    cudnnBackendDescriptor_t q = avk_dnn_tensor(b, "Q", AVK_DNN_UID_Q, io, avk_dnn_layout_shape(p, H, Nq, Dk), false);
    cudnnBackendDescriptor_t k = avk_dnn_tensor(b, "K^T", AVK_DNN_UID_K, io, kt, false);
    cudnnBackendDescriptor_t vt = avk_dnn_tensor(b, "V", AVK_DNN_UID_V, io, avk_dnn_layout_shape(p, Hkv, Nk, Dv), false);
    cudnnBackendDescriptor_t o = avk_dnn_tensor(b, "O", AVK_DNN_UID_O, io, avk_dnn_layout_shape(p, H, Nq, Dv), false);
    cudnnBackendDescriptor_t scale = avk_dnn_scalar(b, "scale", AVK_DNN_UID_SCALE, f32, &v->scale);

    avk_dnn_shape scores = avk_dnn_dense(B, H, Nq, Nk);
    cudnnBackendDescriptor_t s = avk_dnn_virtual(b, "S", f32, scores);
    avk_dnn_matmul(b, "bmm1 Q.K^T", q, k, s);
    cudnnBackendDescriptor_t scaled = avk_dnn_virtual(b, "S*scale", f32, scores);
    avk_dnn_pointwise(b, "attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s, scale, NULL, scaled);
    cudnnBackendDescriptor_t logits = avk_dnn_score_mods(b, p, v, scaled);
    cudnnBackendDescriptor_t prob = avk_dnn_softmax(b, p, logits, real_stats, io);
    avk_dnn_matmul(b, "bmm2 P.V", prob, vt, o);
}

/* ---- support surface ---- */

/* The one place that refuses a problem, with cuDNN's reason. The limits
 * are the ones cudnn-frontend's SDPA support surface checks for f16/bf16 on
 * the composite (pre-9.21) graph this file builds. */
attnvk_status avk_cudnn_sdpa_supports(const attnvk_problem *p, int cc_major)
{
    const size_t version = avk_dnn_version_number; /* 0: not loaded (the test's host checks) */
    const avk_dnn_band band = avk_dnn_band_of(p);
    const int bottom_right = band.right && band.right_bottom;
    if (avk_q_is_fp8(p) || p->kv_format == ATTNVK_KV_FP8) return avk_cudnn_fp8_supports(p, cc_major, version);
    if (p->kv_format != ATTNVK_KV_DTYPE)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN fused attention reads K and V in the problem's dtype (or all of "
                                                  "Q, K and V in fp8), not %s",
                        attnvk_kv_format_name(p->kv_format));
    if (cc_major && cc_major < 8)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN fused attention needs compute capability 8.0 or newer");
    if (p->dtype == ATTNVK_F32)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN fused attention takes f16 or bf16 (f32 is outside its SDPA support surface)");
    const int dv = attnvk_problem_head_dim_v(p);
    if (p->head_dim % 8 != 0 || p->head_dim > 256 || dv % 8 != 0 || dv > 256) {
        if (dv == p->head_dim)
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                            "cuDNN fused attention needs a head dim that is a multiple of 8 and <= 256 (D=%d)",
                            p->head_dim);
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN fused attention needs Q/K and V/O head dims that are multiples of 8 and <= 256 "
                        "(Dk=%d, Dv=%d)",
                        p->head_dim, dv);
    }
    /* the support matrix lists Dk != Dv (d_qk 192, d_vo 128) for Hopper and newer only */
    if (dv != p->head_dim && cc_major && cc_major < 9)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN fused attention takes Q/K and V/O head dims that differ (Dk=%d, Dv=%d) on Hopper and "
                        "newer",
                        p->head_dim, dv);
    if (p->softcap > 0 && (p->causal || band.right || band.left || p->alibi))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN takes a logit softcap only as its score modifier, which excludes causal masks, "
                        "windows and ALiBi");
    if (p->softcap > 0 && version && version < 90400)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %s predates score modifiers such as softcap (9.4)",
                        dnn_version);
    if (p->alibi && !(p->causal && (p->align == ATTNVK_ALIGN_TOP_LEFT || p->seq_q == p->seq_kv)))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN takes ALiBi only with a causal mask whose diagonal is top-left (i' = i: top-left "
                        "alignment or Nq == Nk)");
    if (p->sinks && version && version < 91300)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %s predates attention sinks (9.13)", dnn_version);
    if (p->sinks && p->seq_q == 1)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN has no decode (Nq = 1) path with attention sinks");
    if (band.left && p->seq_q > p->seq_kv)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's sliding windows need Nq <= Nk without per-batch padding (Nq=%d, Nk=%d)", p->seq_q,
                        p->seq_kv);
    if (band.left && version && version < 91002 && (!band.right || p->mask))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN %s takes a window only beside a causal or right bound and without a mask (9.10.2 "
                        "lifts that)",
                        dnn_version);
    if (band.left && !band.right && version == 91400 && p->seq_kv > 1024)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN 9.14.0 has a known bug with non-causal windows and Nk > 1024 (fixed in 9.14.1)");
    if (band.left && bottom_right && cc_major == 9 && version && version <= 90900 && p->seq_q == p->seq_kv)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN %s on Hopper does not take a window with a bottom-right diagonal and Nq == Nk (9.10 "
                        "does)",
                        dnn_version);
    if (band.right && p->seq_q == 1 && version && version <= 90900)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %s has no decode (Nq = 1) path with masking (9.10 has)",
                        dnn_version);
    /* rows before Nq - Nk would see no key (and a top-left shift would go negative) */
    if (band.right && p->align != ATTNVK_ALIGN_TOP_LEFT && p->seq_q > p->seq_kv)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's bottom-right causal mask does not support Nq > Nk without per-batch padding "
                        "(Nq=%d, Nk=%d)",
                        p->seq_q, p->seq_kv);
    if (bottom_right && version && version < 90300)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %s predates bottom-right causal masks (9.3)", dnn_version);
    if (bottom_right && version && version < 90600 && (p->seq_q % 64 || p->seq_kv % 64))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN %s supports bottom-right causal only for lengths that are multiples of 64",
                        dnn_version);
    if (bottom_right && band.left && version && version < 90600 && p->seq_q != p->seq_kv)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN %s takes a window with a bottom-right diagonal only for Nq == Nk (9.6 lifts that)",
                        dnn_version);
    return ATTNVK_OK;
}

attnvk_status avk_cudnn_sdpa_check_descriptors(const attnvk_problem *p, int cc_major, int *ops)
{
    attnvk_status s = avk_cudnn_load();
    if (s != ATTNVK_OK) return s;
    avk_dnn_builder b;
    avk_dnn_score_values values;
    avk_dnn_score_values_init(p, &values);
    avk_dnn_builder_init(&b, AVK_DNN_UID_FIRST_FREE);
    build_sdpa(&b, p, &values, 0, avk_q_is_fp8(p) && avk_cudnn_fp8_o_in_e4m3(cc_major));
    if (ops) *ops = b.op_count;
    if (!avk_dnn_builder_ok(&b)) {
        char text[512];
        s = avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN descriptor '%s': %s", b.failed_at,
                     avk_dnn_text(b.status, text, sizeof text));
    }
    avk_dnn_builder_free(&b);
    return s;
}

/* ---- the prepared kernel ---- */

/* Device tensors in the variant pack: Q, K, V, O, then the score inputs. */
enum { BOUND_Q, BOUND_K, BOUND_V, BOUND_O, BOUND_MASK, BOUND_SINKS, BOUND_ALIBI, BOUND_COUNT };
static const int64_t bound_uids[BOUND_COUNT] = {AVK_DNN_UID_Q,    AVK_DNN_UID_K,     AVK_DNN_UID_V,
                                                AVK_DNN_UID_O,    AVK_DNN_UID_MASK,  AVK_DNN_UID_SINKS,
                                                AVK_DNN_UID_ALIBI_SLOPES};

struct avk_cudnn_sdpa {
    cudnnHandle_t handle;
    avk_dnn_builder graph;                     /* tensors, operations, graph, plan: alive while the plan is */
    cudnnBackendDescriptor_t plan;
    cudnnBackendDescriptor_t variant_pack;
    CUdeviceptr bound[BOUND_COUNT];    /* the device tensors the variant pack was built for */
    CUdeviceptr workspace, stats;
    CUdeviceptr fp8_slots;      /* fp8: the graph's descales, scales and amaxes (AVK_DNN_FP8_SLOTS f32) */
    CUdeviceptr fp8_scales[2];  /* fp8: the q_scales and kv_scales the slots were written from */
    int o_e4m3;                 /* fp8 on Hopper: the graph writes O (e4m3) to o8, fp8_out converts it */
    CUdeviceptr o8;
    float o8_descale;
    CUmodule helpers;
    CUfunction fp8_out;
    int64_t workspace_bytes;
    int real_stats;
    int has_mask, has_sinks, has_alibi; /* score inputs the graph reads */
    avk_dnn_score_values values;       /* by-value scalars: read from here at execute */
    int64_t engine;
    attnvk_problem problem;
    avk_cudnn_bwd *backward[2]; /* built at the first backward, [deterministic] */
};

static void release_memory(avk_cuda_device *dev, avk_cudnn_sdpa *k)
{
    if (k->workspace) dev->cu->cuMemFree(k->workspace);
    if (k->stats) dev->cu->cuMemFree(k->stats);
    if (k->fp8_slots) dev->cu->cuMemFree(k->fp8_slots);
    if (k->o8) dev->cu->cuMemFree(k->o8);
    k->workspace = k->stats = k->fp8_slots = k->o8 = 0;
}

/* One attempt: graph (virtual or bound stats), heuristics, plan. */
static attnvk_status try_build(avk_cuda_device *dev, avk_cudnn_sdpa *k, const attnvk_problem *p, int real_stats)
{
    char text[512];
    avk_dnn_builder *b = &k->graph;
    avk_dnn_builder_init(b, AVK_DNN_UID_FIRST_FREE);
    k->real_stats = real_stats;
    build_sdpa(b, p, &k->values, real_stats, k->o_e4m3);
    if (!avk_dnn_builder_ok(b))
        return avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN descriptor '%s': %s", b->failed_at,
                        avk_dnn_text(b->status, text, sizeof text));
    avk_dnn_plan plan;
    attnvk_status made = avk_dnn_make_plan(b, k->handle, "SDPA graph", &plan);
    if (made != ATTNVK_OK) return made;
    k->plan = plan.plan, k->engine = plan.engine, k->workspace_bytes = plan.workspace_bytes;
    if (k->workspace_bytes > 0) {
        attnvk_status st = avk_cuda_check(dev, dev->cu->cuMemAlloc(&k->workspace, (size_t)k->workspace_bytes),
                                          "cuDNN workspace");
        if (st != ATTNVK_OK) return st;
    }
    if (real_stats) {
        size_t bytes = (size_t)p->batch * p->heads * p->seq_q * sizeof(float);
        attnvk_status st = avk_cuda_check(dev, dev->cu->cuMemAlloc(&k->stats, bytes), "cuDNN softmax stats");
        if (st != ATTNVK_OK) return st;
    }
    if (avk_q_is_fp8(p)) {
        attnvk_status st = avk_cuda_check(dev, dev->cu->cuMemAlloc(&k->fp8_slots, sizeof(float) * AVK_DNN_FP8_SLOTS),
                                          "cuDNN fp8 scales");
        if (st != ATTNVK_OK) return st;
    }
    if (k->o_e4m3) {
        attnvk_status st = avk_cuda_check(dev, dev->cu->cuMemAlloc(&k->o8, attnvk_o_elements(p)), "cuDNN fp8 O (e4m3)");
        if (st == ATTNVK_OK && !k->helpers) st = avk_softmax_module(dev, 256, &k->helpers);
        if (st == ATTNVK_OK)
            st = avk_cuda_check(dev,
                                dev->cu->cuModuleGetFunction(&k->fp8_out, k->helpers,
                                                             p->dtype == ATTNVK_BF16 ? "avk_fp8_out_bf16" : "avk_fp8_out_f16"),
                                "avk_fp8_out");
        if (st != ATTNVK_OK) return st;
    }
    return ATTNVK_OK;
}

void avk_cudnn_sdpa_release(avk_cuda_device *dev, avk_cudnn_sdpa *k)
{
    if (!k) return;
    if (avk_cuda_push(dev) == ATTNVK_OK) {
        release_memory(dev, k);
        for (int i = 0; i < 2; ++i) avk_cudnn_bwd_release(dev, k->backward[i]);
        if (k->helpers && !dev->lost) dev->cu->cuModuleUnload(k->helpers);
        if (k->variant_pack) avk_dnn.cudnnBackendDestroyDescriptor(k->variant_pack);
        avk_dnn_builder_free(&k->graph);
        if (k->handle) avk_dnn.cudnnDestroy(k->handle);
        avk_cuda_pop(dev);
    }
    free(k);
}

attnvk_status avk_cudnn_sdpa_prepare(avk_cuda_device *dev, const attnvk_problem *p, avk_cudnn_sdpa **out,
                                     attnvk_kernel_info *info)
{
    attnvk_status s = avk_cudnn_load();
    if (s == ATTNVK_OK) s = avk_cudnn_sdpa_supports(p, dev->cc_major);
    if (s != ATTNVK_OK) return s;
    avk_cudnn_sdpa *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    avk_dnn_score_values_init(p, &k->values);
    k->problem = *p;
    k->has_mask = p->mask;
    k->has_sinks = p->sinks;
    k->has_alibi = p->alibi;
    k->o_e4m3 = avk_q_is_fp8(p) && avk_cudnn_fp8_o_in_e4m3(dev->cc_major);
    s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    char text[512];
    cudnnStatus_t ds = avk_dnn.cudnnCreate(&k->handle);
    if (ds == CUDNN_STATUS_SUCCESS) ds = avk_dnn.cudnnSetStream(k->handle, (cudaStream_t)dev->stream);
    if (ds != CUDNN_STATUS_SUCCESS)
        s = avk_fail(ds == CUDNN_STATUS_NOT_INITIALIZED ? ATTNVK_ERROR_UNAVAILABLE : avk_dnn_status_kind(ds),
                     "cudnnCreate: %s", avk_dnn_text(ds, text, sizeof text));
    if (s == ATTNVK_OK) {
        s = try_build(dev, k, p, 0);
        if (s == ATTNVK_ERROR_UNSUPPORTED) {
            /* some engines only take the pattern with a bound stats tensor */
            char first[512];
            snprintf(first, sizeof first, "%s", attnvk_last_error());
            release_memory(dev, k);
            avk_dnn_builder_free(&k->graph);
            k->plan = NULL;
            s = try_build(dev, k, p, 1);
            if (s == ATTNVK_ERROR_UNSUPPORTED) s = avk_fail(s, "%s", first);
        }
    }
    avk_cuda_pop(dev);
    if (s != ATTNVK_OK) {
        avk_cudnn_sdpa_release(dev, k);
        return s;
    }
    if (info) {
        snprintf(info->variant, sizeof info->variant, "cudnn-%s-engine%lld", dnn_version, (long long)k->engine);
        info->workspace_bytes = (uint64_t)k->workspace_bytes + (k->stats ? (uint64_t)p->batch * p->heads * p->seq_q * 4u : 0u);
        snprintf(info->params, sizeof info->params, "engine=%lld stats=%s heuristics=A%s", (long long)k->engine,
                 k->real_stats ? "bound" : "virtual", k->o_e4m3 ? " o=e4m3+convert" : "");
    }
    *out = k;
    return ATTNVK_OK;
}

/* ptrs: BOUND_COUNT device pointers, 0 for a score input the problem lacks. */
static attnvk_status bind_variant_pack(avk_cudnn_sdpa *k, const CUdeviceptr ptrs[BOUND_COUNT])
{
    const avk_dnn_builder *b = &k->graph;
    int64_t uids[BOUND_COUNT + 1 + AVK_DNN_FP8_SLOTS];
    void *data[BOUND_COUNT + 1 + AVK_DNN_FP8_SLOTS];
    int n = 0;
    for (int i = 0; i < BOUND_COUNT; ++i) {
        if (i > BOUND_O && !ptrs[i]) continue;
        uids[n] = bound_uids[i];
        data[n++] = (void *)(uintptr_t)ptrs[i];
    }
    if (k->real_stats) {
        uids[n] = AVK_DNN_UID_STATS;
        data[n++] = (void *)(uintptr_t)k->stats;
    }
    for (int i = 0; k->fp8_slots && i < AVK_DNN_FP8_SLOTS; ++i) {
        uids[n] = AVK_DNN_UID_FP8_FIRST + i;
        data[n++] = (void *)(uintptr_t)(k->fp8_slots + sizeof(float) * (size_t)i);
    }
    attnvk_status s = avk_dnn_make_variant_pack(b, uids, data, n, (void *)(uintptr_t)k->workspace, &k->variant_pack);
    if (s != ATTNVK_OK) return s;
    memcpy(k->bound, ptrs, sizeof k->bound);
    return ATTNVK_OK;
}

attnvk_status avk_cudnn_sdpa_enqueue(avk_cuda_device *dev, avk_cudnn_sdpa *k, const avk_dispatch *a)
{
    if ((k->has_mask && !a->mask) || (k->has_sinks && !a->sinks) || (k->has_alibi && !a->alibi_slopes))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuDNN SDPA: a score input of the problem has no buffer");
    if (k->fp8_slots) { /* the slots follow the problem's scales: read once per pair of buffers */
        if (!a->q_scales || !a->kv_scales)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "cuDNN FP8 SDPA: the q_scales or kv_scales buffer is missing");
        const CUdeviceptr qs = avk_cuda_ptr(a->q_scales), kvs = avk_cuda_ptr(a->kv_scales);
        if (qs != k->fp8_scales[0] || kvs != k->fp8_scales[1]) {
            attnvk_status s = avk_cudnn_fp8_bind_scales(dev, &k->problem, qs, kvs, k->fp8_slots, k->o_e4m3, &k->o8_descale);
            if (s != ATTNVK_OK) return s;
            k->fp8_scales[0] = qs, k->fp8_scales[1] = kvs;
        }
    }
    const CUdeviceptr ptrs[BOUND_COUNT] = {avk_cuda_ptr(a->q),
                                           avk_cuda_ptr(a->k),
                                           avk_cuda_ptr(a->v),
                                           k->o_e4m3 ? k->o8 : avk_cuda_ptr(a->o),
                                           k->has_mask ? avk_cuda_ptr(a->mask) : 0,
                                           k->has_sinks ? avk_cuda_ptr(a->sinks) : 0,
                                           k->has_alibi ? avk_cuda_ptr(a->alibi_slopes) : 0};
    if (!k->variant_pack || memcmp(ptrs, k->bound, sizeof ptrs) != 0) {
        attnvk_status s = bind_variant_pack(k, ptrs);
        if (s != ATTNVK_OK) return s;
    }
    cudnnStatus_t s = avk_dnn.cudnnBackendExecute(k->handle, k->plan, k->variant_pack);
    if (s != CUDNN_STATUS_SUCCESS) {
        char text[512];
        return avk_fail(avk_dnn_status_kind(s), "cudnnBackendExecute: %s", avk_dnn_text(s, text, sizeof text));
    }
    if (k->o_e4m3) { /* O in the problem's dtype, on the stream after the graph (timed with it) */
        CUdeviceptr src = k->o8, dst = avk_cuda_ptr(a->o);
        long long n = (long long)attnvk_o_elements(&k->problem);
        float scale = k->o8_descale;
        void *args[] = {&src, &dst, &scale, &n};
        const long long blocks = (n + 255) / 256;
        return avk_cuda_check(dev,
                              dev->cu->cuLaunchKernel(k->fp8_out, (unsigned)(blocks < 65535 ? blocks : 65535), 1, 1, 256, 1,
                                                      1, 0, dev->stream, args, NULL),
                              "cuLaunchKernel(avk_fp8_out)");
    }
    return ATTNVK_OK;
}

attnvk_status avk_cudnn_sdpa_backward(avk_cuda_device *dev, avk_cudnn_sdpa *k, const avk_backward_dispatch *a)
{
    const int det = a->deterministic != 0;
    attnvk_status s = avk_cudnn_bwd_supports(&k->problem, dev->cc_major, det, a->d_sinks != NULL);
    if (s == ATTNVK_OK && !k->backward[det]) s = avk_cudnn_bwd_prepare(dev, k->handle, &k->problem, det, &k->backward[det]);
    if (s == ATTNVK_OK) s = avk_cudnn_bwd_run(dev, k->handle, k->backward[det], a);
    if (s == ATTNVK_OK) {
        snprintf(a->info->implementation, sizeof a->info->implementation, "cudnn");
        snprintf(a->info->variant, sizeof a->info->variant, "cudnn-%s-bwd%s", dnn_version, det ? "-deterministic" : "");
    }
    return s;
}
