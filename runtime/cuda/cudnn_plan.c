/* From a built cuDNN graph to something that runs (see cudnn_graph.h): the
 * operation graph, an execution plan from the engine heuristics and the
 * variant pack that binds device pointers. Shared by the SDPA forward
 * (cudnn_sdpa.c) and backward (cudnn_sdpa_bwd.c). */
#include "cuda/cudnn_graph.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

enum { MAX_ENGINE_CONFIGS = 16 };

attnvk_status avk_dnn_status_kind(cudnnStatus_t s)
{
    if (CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED) return ATTNVK_ERROR_UNSUPPORTED;
    if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
        s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        return ATTNVK_ERROR_OUT_OF_MEMORY;
    return ATTNVK_ERROR_BACKEND;
}

/* The engine's global index, for the record (-1 if cuDNN does not say). */
static int64_t engine_of(cudnnBackendDescriptor_t config)
{
    cudnnBackendDescriptor_t engine = NULL;
    int64_t n = 0, index = -1;
    if (avk_dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS)
        return -1;
    if (avk_dnn.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                         &engine) == CUDNN_STATUS_SUCCESS)
        avk_dnn.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index);
    avk_dnn.cudnnBackendDestroyDescriptor(engine);
    return index;
}

/* Engine configs from the heuristics in `mode`; the first one whose plan
 * finalizes wins (kept in b). Returns 1 with out->plan and out->engine set. */
static int plan_from_heuristics(avk_dnn_builder *b, cudnnHandle_t handle, cudnnBackendDescriptor_t op_graph,
                                cudnnBackendHeurMode_t mode, avk_dnn_plan *out, cudnnStatus_t *last)
{
    cudnnBackendDescriptor_t heur = avk_dnn_create(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics");
    avk_dnn_set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_graph, "heuristics");
    avk_dnn_set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics mode");
    avk_dnn_finalize(b, heur, "engine heuristics");
    if (!avk_dnn_builder_ok(b)) return 0;

    int64_t available = 0;
    *last = avk_dnn.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                             &available, NULL);
    if (*last != CUDNN_STATUS_SUCCESS || available <= 0) return 0;
    if (available > MAX_ENGINE_CONFIGS) available = MAX_ENGINE_CONFIGS;
    cudnnBackendDescriptor_t configs[MAX_ENGINE_CONFIGS] = {0};
    int64_t made = 0;
    for (; made < available; ++made)
        if (avk_dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &configs[made]) !=
            CUDNN_STATUS_SUCCESS)
            break;
    int64_t got = 0;
    *last = avk_dnn.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, made,
                                             &got, configs);
    int chosen = 0;
    for (int64_t i = 0; *last == CUDNN_STATUS_SUCCESS && i < got && i < made && !chosen; ++i) {
        cudnnBackendDescriptor_t plan = NULL;
        cudnnStatus_t s = avk_dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
        if (s == CUDNN_STATUS_SUCCESS)
            s = avk_dnn.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
        if (s == CUDNN_STATUS_SUCCESS)
            s = avk_dnn.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]);
        if (s == CUDNN_STATUS_SUCCESS) s = avk_dnn.cudnnBackendFinalize(plan);
        if (s == CUDNN_STATUS_SUCCESS && b->owned_count < AVK_DNN_MAX_DESCRIPTORS - 1) {
            out->engine = engine_of(configs[i]);
            b->owned[b->owned_count++] = configs[i];
            b->owned[b->owned_count++] = plan;
            configs[i] = NULL;
            out->plan = plan;
            chosen = 1;
        } else {
            if (plan) avk_dnn.cudnnBackendDestroyDescriptor(plan);
            *last = s == CUDNN_STATUS_SUCCESS ? CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND : s;
        }
    }
    for (int64_t i = 0; i < made; ++i)
        if (configs[i]) avk_dnn.cudnnBackendDestroyDescriptor(configs[i]);
    return chosen;
}

attnvk_status avk_dnn_make_plan(avk_dnn_builder *b, cudnnHandle_t handle, const char *what, avk_dnn_plan *out)
{
    char text[512];
    memset(out, 0, sizeof *out);
    cudnnBackendDescriptor_t op_graph = avk_dnn_create(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    avk_dnn_set(b, op_graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "operation graph");
    avk_dnn_set(b, op_graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, b->op_count, b->ops,
                "operation graph");
    avk_dnn_finalize(b, op_graph, "operation graph");
    if (!avk_dnn_builder_ok(b))
        return avk_fail(avk_dnn_status_kind(b->status) == ATTNVK_ERROR_UNSUPPORTED ? ATTNVK_ERROR_UNSUPPORTED
                                                                                   : ATTNVK_ERROR_BACKEND,
                        "cuDNN %zu.%zu rejects the %s: %s", avk_dnn_version_number / 10000,
                        avk_dnn_version_number % 10000 / 100, what, avk_dnn_text(b->status, text, sizeof text));

    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    if (!plan_from_heuristics(b, handle, op_graph, CUDNN_HEUR_MODE_A, out, &last) &&
        !plan_from_heuristics(b, handle, op_graph, CUDNN_HEUR_MODE_FALLBACK, out, &last)) {
        cudnnStatus_t why = avk_dnn_builder_ok(b) ? last : b->status;
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %zu.%zu has no engine for the %s: %s",
                        avk_dnn_version_number / 10000, avk_dnn_version_number % 10000 / 100, what,
                        avk_dnn_text(why, text, sizeof text));
    }
    int64_t n = 0;
    cudnnStatus_t s = avk_dnn.cudnnBackendGetAttribute(out->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                       CUDNN_TYPE_INT64, 1, &n, &out->workspace_bytes);
    if (s != CUDNN_STATUS_SUCCESS)
        return avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN plan workspace size: %s", avk_dnn_text(s, text, sizeof text));
    return ATTNVK_OK;
}

attnvk_status avk_dnn_make_variant_pack(const avk_dnn_builder *b, const int64_t *uids, void *const *data, int n,
                                        void *workspace, cudnnBackendDescriptor_t *pack)
{
    int64_t all_uids[AVK_DNN_MAX_BOUND + AVK_DNN_MAX_BY_VALUE];
    void *all_data[AVK_DNN_MAX_BOUND + AVK_DNN_MAX_BY_VALUE];
    if (n > AVK_DNN_MAX_BOUND)
        return avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN variant pack: %d device tensors (at most %d)", n,
                        AVK_DNN_MAX_BOUND);
    int count = 0;
    for (int i = 0; i < n; ++i) all_uids[count] = uids[i], all_data[count++] = data[i];
    for (int i = 0; i < b->by_value_count; ++i)
        all_uids[count] = b->by_value_uids[i], all_data[count++] = b->by_value_data[i];
    cudnnBackendDescriptor_t made = NULL;
    cudnnStatus_t s = avk_dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &made);
    if (s == CUDNN_STATUS_SUCCESS)
        s = avk_dnn.cudnnBackendSetAttribute(made, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, count,
                                             all_uids);
    if (s == CUDNN_STATUS_SUCCESS)
        s = avk_dnn.cudnnBackendSetAttribute(made, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, count,
                                             all_data);
    if (s == CUDNN_STATUS_SUCCESS)
        s = avk_dnn.cudnnBackendSetAttribute(made, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                             &workspace);
    if (s == CUDNN_STATUS_SUCCESS) s = avk_dnn.cudnnBackendFinalize(made);
    if (s != CUDNN_STATUS_SUCCESS) {
        char text[512];
        if (made) avk_dnn.cudnnBackendDestroyDescriptor(made);
        return avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN variant pack: %s", avk_dnn_text(s, text, sizeof text));
    }
    if (*pack) avk_dnn.cudnnBackendDestroyDescriptor(*pack);
    *pack = made;
    return ATTNVK_OK;
}
