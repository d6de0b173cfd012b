/* The vendor baselines behind cuda_vendor.h: "cudnn" (fused SDPA through the
 * cuDNN graph API) and "cublas" (unfused GEMM-softmax-GEMM). Each prepared
 * vendor kernel is a tagged object owning its library handle and plan. */
#include "cuda/cuda_vendor.h"
#include "cuda/cublas_unfused.h"
#include "cuda/cudnn_sdpa.h"
#include "core/kv_cache.h" /* AVK_SCORE_FEATURES */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum vendor_kind { VENDOR_CUDNN, VENDOR_CUBLAS } vendor_kind;

typedef struct vendor_object {
    vendor_kind kind;
    union {
        avk_cudnn_sdpa *cudnn;
        avk_cublas_unfused *cublas;
    } impl;
} vendor_object;

static void describe(attnvk_impl_info *info, const char *name, int fused, attnvk_status loaded)
{
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", name);
    info->fused = fused;
    info->available = loaded == ATTNVK_OK;
    if (!info->available) snprintf(info->reason, sizeof info->reason, "%s", attnvk_last_error());
}

int avk_cuda_vendor_implementations(avk_cuda_device *dev, attnvk_impl_info *out, int max)
{
    attnvk_impl_info all[2];
    attnvk_status dnn = avk_cudnn_load();
    describe(&all[0], "cudnn", 1, dnn);
    /* the graph expresses each of them and separate Dk/Dv, and the FP8 forward (Q, K and V in e4m3,
     * cudnn_sdpa_fp8.c); avk_cudnn_sdpa_supports refuses the combinations cuDNN lacks (576/512, an fp8
     * cache under 16-bit queries) */
    all[0].features = AVK_SCORE_FEATURES | ATTNVK_FEATURE_HEAD_DIM_V | ATTNVK_FEATURE_Q_FP8 | ATTNVK_FEATURE_KV_FP8;
    if (dnn == ATTNVK_OK && dev && dev->cc_major < 8) {
        all[0].available = 0;
        snprintf(all[0].reason, sizeof all[0].reason, "cuDNN fused attention needs compute capability 8.0 or newer");
    }
    describe(&all[1], "cublas", 0, avk_cublas_load());
    /* its row softmax (native/softmax.cu) applies them all; P.V and O take Dv */
    all[1].features = AVK_SCORE_FEATURES | ATTNVK_FEATURE_HEAD_DIM_V;
    int n = (int)(sizeof all / sizeof *all);
    for (int i = 0; i < n && i < max; ++i) out[i] = all[i];
    return n;
}

attnvk_status avk_cuda_vendor_prepare(avk_cuda_device *dev, const attnvk_problem *p, const attnvk_kernel_options *o,
                                      void **vendor_kernel, attnvk_kernel_info *info)
{
    const char *name = o->implementation ? o->implementation : "";
    int is_cudnn = strcmp(name, "cudnn") == 0, is_cublas = strcmp(name, "cublas") == 0;
    if (!is_cudnn && !is_cublas)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the cuda API has no '%s' implementation (attnvk, cudnn, cublas)",
                        name);
    /* cuDNN's graph keeps no LSE (cuBLAS's softmax writes it); the test flag is for attnvk's kernel */
    if (o->write_lse && is_cudnn)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: the vendor baseline does not write the log-sum-exp", name);
    if (o->test_flags)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: test flags apply to attnvk's kernel only", name);
    if (o->variant || o->tile_br || o->tile_bc || o->split_kv > 1)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: variant/tile/split options apply to attnvk's kernel only",
                        name);
    vendor_object *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s;
    if (is_cudnn) {
        k->kind = VENDOR_CUDNN;
        s = avk_cudnn_sdpa_prepare(dev, p, &k->impl.cudnn, info);
    } else {
        k->kind = VENDOR_CUBLAS;
        s = avk_cublas_unfused_prepare(dev, p, &k->impl.cublas, info);
    }
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    if (info) snprintf(info->implementation, sizeof info->implementation, "%s", name);
    *vendor_kernel = k;
    return ATTNVK_OK;
}

attnvk_status avk_cuda_vendor_enqueue(avk_cuda_device *dev, void *vendor_kernel, const avk_dispatch *a)
{
    vendor_object *vk = vendor_kernel;
    if (!vk) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "no vendor kernel");
    if (vk->kind == VENDOR_CUDNN) return avk_cudnn_sdpa_enqueue(dev, vk->impl.cudnn, a);
    return avk_cublas_unfused_enqueue(dev, vk->impl.cublas, a);
}

attnvk_status avk_cuda_vendor_backward(avk_cuda_device *dev, void *vendor_kernel, const avk_backward_dispatch *a)
{
    vendor_object *vk = vendor_kernel;
    if (!vk) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "no vendor kernel");
    /* issue #18's baselines: cuDNN's SDPA backward graph, cuBLAS's materialised-P backward */
    if (vk->kind == VENDOR_CUDNN) return avk_cudnn_sdpa_backward(dev, vk->impl.cudnn, a);
    return avk_cublas_unfused_backward(dev, vk->impl.cublas, a);
}

void avk_cuda_vendor_release(avk_cuda_device *dev, void *vendor_kernel)
{
    vendor_object *vk = vendor_kernel;
    if (!vk) return;
    if (vk->kind == VENDOR_CUDNN)
        avk_cudnn_sdpa_release(dev, vk->impl.cudnn);
    else
        avk_cublas_unfused_release(dev, vk->impl.cublas);
    free(vk);
}
