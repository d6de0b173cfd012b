/* cuDNN fused attention through the backend graph API (see cudnn_sdpa.h).
 *
 * The operation graph is the one cudnn-frontend emits for an inference SDPA
 * node on cuDNN 9.x before its unified softmax/mask ops:
 *   S  = Q x K^T                      (matmul, f32 compute, K given as K^T strides)
 *   S1 = S * scale                    (pointwise MUL with a by-value scalar)
 *   causal: row = genindex(S1, 2), col = genindex(S1, 3),
 *           keep = (row + Nk - Nq) >= col, S2 = select(S1, -inf, keep)
 *   M = max_j S2, E = exp(S2 - M), Z = sum_j E, stats = M + log Z
 *   P = E / Z  (in the I/O type), O = P x V
 * cuDNN's runtime-fusion engines recognise this pattern as flash attention. */
#include "cuda/cudnn_sdpa.h"
#include "core/dynlib.h"
#include "core/error.h"

#include <cudnn_graph.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the library ---- */

#define AVK_CUDNN_FUNCTIONS(X)     \
    X(cudnnGetVersion)             \
    X(cudnnGetErrorString)         \
    X(cudnnGetLastErrorString)     \
    X(cudnnCreate)                 \
    X(cudnnDestroy)                \
    X(cudnnSetStream)              \
    X(cudnnBackendCreateDescriptor) \
    X(cudnnBackendDestroyDescriptor) \
    X(cudnnBackendSetAttribute)    \
    X(cudnnBackendGetAttribute)    \
    X(cudnnBackendFinalize)        \
    X(cudnnBackendExecute)

#define AVK_DNN_MEMBER(fn) __typeof__(fn) *fn;
#define AVK_DNN_SYMBOL(fn) {#fn, (void **)&table.fn},

typedef struct dnn_api {
    AVK_CUDNN_FUNCTIONS(AVK_DNN_MEMBER)
} dnn_api;

static dnn_api dnn;
static avk_dynlib *dnn_lib;
static int dnn_tried;
static size_t dnn_version_number;
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
        dnn_api table;
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
                dnn = table;
                dnn_version_number = v;
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

/* "CUDNN_STATUS_NOT_SUPPORTED_SHAPE (cuDNN's own last message)" */
static const char *dnn_text(cudnnStatus_t s, char *buf, size_t n)
{
    char last[384] = "";
    dnn.cudnnGetLastErrorString(last, sizeof last);
    snprintf(buf, n, "%s%s%s%s", dnn.cudnnGetErrorString(s), last[0] ? " (" : "", last, last[0] ? ")" : "");
    return buf;
}

static attnvk_status dnn_status_kind(cudnnStatus_t s)
{
    switch (CUDNN_STATUS_CATEGORY(s)) {
    case CUDNN_STATUS_NOT_SUPPORTED: return ATTNVK_ERROR_UNSUPPORTED;
    default: break;
    }
    if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
        s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        return ATTNVK_ERROR_OUT_OF_MEMORY;
    return ATTNVK_ERROR_BACKEND;
}

/* ---- a graph builder: every descriptor it creates is kept for the plan's life ---- */

enum { MAX_DESCRIPTORS = 96, MAX_OPS = 24, MAX_ENGINE_CONFIGS = 16 };

/* Unique ids of the tensors the variant pack binds; virtual ones follow. */
enum {
    UID_Q = 1,
    UID_K,
    UID_V,
    UID_O,
    UID_SCALE,
    UID_NEG_INF,
    UID_SEQ_Q,
    UID_SEQ_KV,
    UID_STATS,
    UID_FIRST_VIRTUAL = 100
};

typedef struct builder {
    cudnnBackendDescriptor_t owned[MAX_DESCRIPTORS];
    int owned_count;
    cudnnBackendDescriptor_t ops[MAX_OPS];
    int op_count;
    int64_t next_uid;
    cudnnStatus_t status; /* first failure; later calls do nothing */
    char failed_at[96];
} builder;

static void builder_init(builder *b)
{
    memset(b, 0, sizeof *b);
    b->next_uid = UID_FIRST_VIRTUAL;
    b->status = CUDNN_STATUS_SUCCESS;
}

static void builder_free(builder *b)
{
    for (int i = b->owned_count - 1; i >= 0; --i)
        if (b->owned[i]) dnn.cudnnBackendDestroyDescriptor(b->owned[i]);
    b->owned_count = 0;
    b->op_count = 0;
}

static int builder_ok(const builder *b) { return b->status == CUDNN_STATUS_SUCCESS; }

static void note_failure(builder *b, cudnnStatus_t s, const char *what)
{
    if (!builder_ok(b) || s == CUDNN_STATUS_SUCCESS) return;
    b->status = s;
    snprintf(b->failed_at, sizeof b->failed_at, "%s", what);
}

static cudnnBackendDescriptor_t create(builder *b, cudnnBackendDescriptorType_t type, const char *what)
{
    if (!builder_ok(b)) return NULL;
    if (b->owned_count == MAX_DESCRIPTORS) {
        note_failure(b, CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, "too many descriptors");
        return NULL;
    }
    cudnnBackendDescriptor_t d = NULL;
    note_failure(b, dnn.cudnnBackendCreateDescriptor(type, &d), what);
    if (!builder_ok(b)) return NULL;
    b->owned[b->owned_count++] = d;
    return d;
}

static void set(builder *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count, const void *value, const char *what)
{
    if (!builder_ok(b)) return;
    note_failure(b, dnn.cudnnBackendSetAttribute(d, name, type, count, value), what);
}

static void finalize(builder *b, cudnnBackendDescriptor_t d, const char *what)
{
    if (!builder_ok(b)) return;
    note_failure(b, dnn.cudnnBackendFinalize(d), what);
}

static void add_op(builder *b, cudnnBackendDescriptor_t op)
{
    if (!builder_ok(b)) return;
    if (b->op_count == MAX_OPS) {
        note_failure(b, CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, "too many operations");
        return;
    }
    b->ops[b->op_count++] = op;
}

typedef struct shape4 {
    int64_t dims[4], strides[4];
} shape4;

/* Dense [d0][d1][d2][d3] strides. */
static shape4 dense(int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    shape4 s = {{d0, d1, d2, d3}, {d1 * d2 * d3, d2 * d3, d3, 1}};
    return s;
}

/* uid 0 = a fresh virtual id. */
static cudnnBackendDescriptor_t tensor(builder *b, const char *name, int64_t uid, cudnnDataType_t type, shape4 shape,
                                       bool is_virtual, bool by_value)
{
    cudnnBackendDescriptor_t t = create(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, name);
    int64_t id = uid ? uid : b->next_uid++;
    int64_t alignment = 16;
    set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, name);
    set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, shape.dims, name);
    set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, shape.strides, name);
    set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id, name);
    set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, name);
    if (is_virtual) set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, name);
    if (by_value) set(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, name);
    finalize(b, t, name);
    return t;
}

static cudnnBackendDescriptor_t scalar(builder *b, const char *name, int64_t uid, cudnnDataType_t type)
{
    shape4 one = {{1, 1, 1, 1}, {1, 1, 1, 1}};
    return tensor(b, name, uid, type, one, false, true);
}

/* y = mode(x, in_b, in_t); in_b/in_t may be NULL; axis < 0: not set. */
static void pointwise(builder *b, const char *name, cudnnPointwiseMode_t mode, cudnnDataType_t precision,
                      int64_t axis, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t in_b,
                      cudnnBackendDescriptor_t in_t, cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t pw = create(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, name);
    set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, name);
    set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, name);
    if (axis >= 0) set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, name);
    finalize(b, pw, name);
    cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, name);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, name);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, name);
    if (in_b) set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_b, name);
    if (in_t) set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_t, name);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, name);
    finalize(b, op, name);
    add_op(b, op);
}

static void reduction(builder *b, const char *name, cudnnReduceTensorOp_t reduce, cudnnBackendDescriptor_t x,
                      cudnnBackendDescriptor_t y)
{
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t rd = create(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, name);
    set(b, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce, name);
    set(b, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, name);
    finalize(b, rd, name);
    cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, name);
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, name);
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, name);
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, name);
    finalize(b, op, name);
    add_op(b, op);
}

static void matmul(builder *b, const char *name, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t bm,
                   cudnnBackendDescriptor_t c)
{
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm = create(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR, name);
    set(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, name);
    finalize(b, mm, name);
    cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bm, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, name);
    finalize(b, op, name);
    add_op(b, op);
}

/* Q/O ([B][H][S][D] logical) in either layout; heads/seq are those of the tensor. */
static shape4 layout_shape(const attnvk_problem *p, int64_t heads, int64_t seq)
{
    int64_t B = p->batch, D = p->head_dim;
    shape4 s = {{B, heads, seq, D}, {0, 0, 0, 1}};
    if (p->layout == ATTNVK_LAYOUT_BHSD) {
        s.strides[0] = heads * seq * D;
        s.strides[1] = seq * D;
        s.strides[2] = D;
    } else {
        s.strides[0] = seq * heads * D;
        s.strides[1] = D;
        s.strides[2] = heads * D;
    }
    return s;
}

static cudnnDataType_t io_type(attnvk_dtype d)
{
    return d == ATTNVK_F16 ? CUDNN_DATA_HALF : d == ATTNVK_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

/* Adds the SDPA forward operations for p. real_stats: stats (log-sum-exp) is
 * a bound tensor instead of a virtual one (some engines want it). */
static void build_sdpa(builder *b, const attnvk_problem *p, int real_stats)
{
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32, boolean = CUDNN_DATA_BOOLEAN;
    const cudnnDataType_t io = io_type(p->dtype);
    int64_t B = p->batch, H = p->heads, Hkv = p->kv_heads, Nq = p->seq_q, Nk = p->seq_kv, D = p->head_dim;

    shape4 kt = layout_shape(p, Hkv, Nk); /* K as K^T: swap the last two dims and strides */
    int64_t swap = kt.dims[2];
    kt.dims[2] = kt.dims[3];
    kt.dims[3] = swap;
    swap = kt.strides[2];
    kt.strides[2] = kt.strides[3];
    kt.strides[3] = swap;
    (void)D;

    cudnnBackendDescriptor_t q = tensor(b, "Q", UID_Q, io, layout_shape(p, H, Nq), false, false);
    cudnnBackendDescriptor_t k = tensor(b, "K^T", UID_K, io, kt, false, false);
    cudnnBackendDescriptor_t v = tensor(b, "V", UID_V, io, layout_shape(p, Hkv, Nk), false, false);
    cudnnBackendDescriptor_t o = tensor(b, "O", UID_O, io, layout_shape(p, H, Nq), false, false);
    cudnnBackendDescriptor_t scale = scalar(b, "scale", UID_SCALE, f32);

    shape4 scores = dense(B, H, Nq, Nk), per_row = dense(B, H, Nq, 1);
    cudnnBackendDescriptor_t s = tensor(b, "S", 0, f32, scores, true, false);
    matmul(b, "bmm1 Q.K^T", q, k, s);
    cudnnBackendDescriptor_t scaled = tensor(b, "S*scale", 0, f32, scores, true, false);
    pointwise(b, "attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s, scale, NULL, scaled);
    cudnnBackendDescriptor_t logits = scaled;

    if (p->causal) {
        /* keep (i, j) iff i + Nk - Nq >= j: bottom-right aligned diagonal */
        cudnnBackendDescriptor_t seq_q = scalar(b, "seq_q", UID_SEQ_Q, i32);
        cudnnBackendDescriptor_t seq_kv = scalar(b, "seq_kv", UID_SEQ_KV, i32);
        cudnnBackendDescriptor_t neg_inf = scalar(b, "-inf", UID_NEG_INF, f32);
        cudnnBackendDescriptor_t row = tensor(b, "row", 0, i32, scores, true, false);
        cudnnBackendDescriptor_t col = tensor(b, "col", 0, i32, scores, true, false);
        cudnnBackendDescriptor_t row_plus = tensor(b, "row+Nk", 0, i32, scores, true, false);
        cudnnBackendDescriptor_t diag = tensor(b, "row+Nk-Nq", 0, i32, scores, true, false);
        cudnnBackendDescriptor_t keep = tensor(b, "keep", 0, boolean, scores, true, false);
        cudnnBackendDescriptor_t masked = tensor(b, "S masked", 0, f32, scores, true, false);
        pointwise(b, "gen_row_index", CUDNN_POINTWISE_GEN_INDEX, f32, 2, scaled, NULL, NULL, row);
        pointwise(b, "gen_col_index", CUDNN_POINTWISE_GEN_INDEX, f32, 3, scaled, NULL, NULL, col);
        pointwise(b, "row+skv", CUDNN_POINTWISE_ADD, i32, 3, row, seq_kv, NULL, row_plus);
        pointwise(b, "row+skv-sq", CUDNN_POINTWISE_SUB, i32, 3, row_plus, seq_q, NULL, diag);
        pointwise(b, "diag>=col", CUDNN_POINTWISE_CMP_GE, boolean, -1, diag, col, NULL, keep);
        pointwise(b, "causal select", CUDNN_POINTWISE_BINARY_SELECT, f32, -1, scaled, neg_inf, keep, masked);
        logits = masked;
    }

    cudnnBackendDescriptor_t max = tensor(b, "M", 0, f32, per_row, true, false);
    cudnnBackendDescriptor_t centered = tensor(b, "S-M", 0, f32, scores, true, false);
    cudnnBackendDescriptor_t e = tensor(b, "exp(S-M)", 0, f32, scores, true, false);
    cudnnBackendDescriptor_t sum = tensor(b, "Z", 0, f32, per_row, true, false);
    cudnnBackendDescriptor_t log_sum = tensor(b, "log Z", 0, f32, per_row, true, false);
    cudnnBackendDescriptor_t stats =
        tensor(b, "stats", real_stats ? UID_STATS : 0, f32, per_row, !real_stats, false);
    cudnnBackendDescriptor_t prob = tensor(b, "P", 0, io, scores, true, false);
    reduction(b, "softmax max", CUDNN_REDUCE_TENSOR_MAX, logits, max);
    pointwise(b, "softmax sub", CUDNN_POINTWISE_SUB, f32, -1, logits, max, NULL, centered);
    pointwise(b, "softmax exp", CUDNN_POINTWISE_EXP, f32, -1, centered, NULL, NULL, e);
    reduction(b, "softmax sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
    pointwise(b, "softmax log", CUDNN_POINTWISE_LOG, f32, -1, sum, NULL, NULL, log_sum);
    pointwise(b, "softmax stats", CUDNN_POINTWISE_ADD, f32, -1, max, log_sum, NULL, stats);
    pointwise(b, "softmax div", CUDNN_POINTWISE_DIV, f32, -1, e, sum, NULL, prob);
    matmul(b, "bmm2 P.V", prob, v, o);
}

/* ---- support surface ---- */

attnvk_status avk_cudnn_sdpa_supports(const attnvk_problem *p, int cc_major)
{
    if (cc_major && cc_major < 8)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN fused attention needs compute capability 8.0 or newer");
    if (p->dtype == ATTNVK_F32)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN fused attention takes f16 or bf16 (f32 is outside its SDPA support surface)");
    if (p->head_dim % 8 != 0 || p->head_dim > 256)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN fused attention needs a head dim that is a multiple of 8 and <= 256 (D=%d)",
                        p->head_dim);
    if (p->causal && p->seq_q > p->seq_kv)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN's bottom-right causal mask does not support Nq > Nk without per-batch padding "
                        "(Nq=%d, Nk=%d)",
                        p->seq_q, p->seq_kv);
    if (p->causal && dnn_version_number && dnn_version_number < 90300)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %s predates bottom-right causal masks (9.3)", dnn_version);
    if (p->causal && dnn_version_number && dnn_version_number < 90600 && (p->seq_q % 64 || p->seq_kv % 64))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "cuDNN %s supports bottom-right causal only for lengths that are multiples of 64",
                        dnn_version);
    return ATTNVK_OK;
}

attnvk_status avk_cudnn_sdpa_check_descriptors(const attnvk_problem *p, int *ops)
{
    attnvk_status s = avk_cudnn_load();
    if (s != ATTNVK_OK) return s;
    builder b;
    builder_init(&b);
    build_sdpa(&b, p, 0);
    if (ops) *ops = b.op_count;
    if (!builder_ok(&b)) {
        char text[512];
        s = avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN descriptor '%s': %s", b.failed_at, dnn_text(b.status, text, sizeof text));
    }
    builder_free(&b);
    return s;
}

/* ---- the prepared kernel ---- */

struct avk_cudnn_sdpa {
    cudnnHandle_t handle;
    builder graph;                     /* tensors, operations, graph, plan: alive while the plan is */
    cudnnBackendDescriptor_t plan;
    cudnnBackendDescriptor_t variant_pack;
    CUdeviceptr bound[4];              /* Q, K, V, O the variant pack was built for */
    CUdeviceptr workspace, stats;
    int64_t workspace_bytes;
    int real_stats, causal;
    float scale, neg_inf;              /* by-value scalars: read from here at execute */
    int32_t seq_q, seq_kv;
    int64_t engine;
};

static void release_memory(avk_cuda_device *dev, avk_cudnn_sdpa *k)
{
    if (k->workspace) dev->cu->cuMemFree(k->workspace);
    if (k->stats) dev->cu->cuMemFree(k->stats);
    k->workspace = k->stats = 0;
}

/* Engine configs from the heuristics in `mode`; the first one whose plan
 * finalizes wins. Returns 1 with k->plan set. */
static int plan_from_heuristics(avk_cudnn_sdpa *k, cudnnBackendDescriptor_t op_graph, cudnnBackendHeurMode_t mode,
                                cudnnStatus_t *last)
{
    builder *b = &k->graph;
    cudnnBackendDescriptor_t heur = create(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics");
    set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_graph, "heuristics");
    set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics mode");
    finalize(b, heur, "engine heuristics");
    if (!builder_ok(b)) return 0;

    int64_t available = 0;
    *last = dnn.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                         &available, NULL);
    if (*last != CUDNN_STATUS_SUCCESS || available <= 0) return 0;
    if (available > MAX_ENGINE_CONFIGS) available = MAX_ENGINE_CONFIGS;
    cudnnBackendDescriptor_t configs[MAX_ENGINE_CONFIGS] = {0};
    int64_t made = 0;
    for (; made < available; ++made)
        if (dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &configs[made]) !=
            CUDNN_STATUS_SUCCESS)
            break;
    int64_t got = 0;
    *last = dnn.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, made,
                                         &got, configs);
    int chosen = -1;
    for (int64_t i = 0; *last == CUDNN_STATUS_SUCCESS && i < got && i < made && chosen < 0; ++i) {
        cudnnBackendDescriptor_t plan = NULL;
        cudnnStatus_t s = dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
        if (s == CUDNN_STATUS_SUCCESS)
            s = dnn.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &k->handle);
        if (s == CUDNN_STATUS_SUCCESS)
            s = dnn.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]);
        if (s == CUDNN_STATUS_SUCCESS) s = dnn.cudnnBackendFinalize(plan);
        if (s == CUDNN_STATUS_SUCCESS && b->owned_count < MAX_DESCRIPTORS - 1) {
            b->owned[b->owned_count++] = configs[i];
            b->owned[b->owned_count++] = plan;
            configs[i] = NULL;
            k->plan = plan;
            chosen = (int)i;
        } else {
            if (plan) dnn.cudnnBackendDestroyDescriptor(plan);
            *last = s == CUDNN_STATUS_SUCCESS ? CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND : s;
        }
    }
    /* which engine ran, for the record */
    if (chosen >= 0) {
        cudnnBackendDescriptor_t engine = NULL, cfg = b->owned[b->owned_count - 2];
        int64_t n = 0;
        k->engine = -1;
        if (dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) == CUDNN_STATUS_SUCCESS) {
            if (dnn.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                             &engine) == CUDNN_STATUS_SUCCESS)
                dnn.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                             &k->engine);
            dnn.cudnnBackendDestroyDescriptor(engine);
        }
    }
    for (int64_t i = 0; i < made; ++i)
        if (configs[i]) dnn.cudnnBackendDestroyDescriptor(configs[i]);
    return chosen >= 0;
}

/* One attempt: graph (virtual or bound stats), heuristics, plan. */
static attnvk_status try_build(avk_cuda_device *dev, avk_cudnn_sdpa *k, const attnvk_problem *p, int real_stats)
{
    char text[512];
    builder *b = &k->graph;
    builder_init(b);
    k->real_stats = real_stats;
    build_sdpa(b, p, real_stats);
    if (!builder_ok(b))
        return avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN descriptor '%s': %s", b->failed_at,
                        dnn_text(b->status, text, sizeof text));
    cudnnBackendDescriptor_t op_graph = create(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    set(b, op_graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &k->handle, "operation graph");
    set(b, op_graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, b->op_count, b->ops,
        "operation graph");
    finalize(b, op_graph, "operation graph");
    if (!builder_ok(b))
        return avk_fail(dnn_status_kind(b->status) == ATTNVK_ERROR_UNSUPPORTED ? ATTNVK_ERROR_UNSUPPORTED
                                                                                  : ATTNVK_ERROR_BACKEND,
                        "cuDNN %s rejects the SDPA graph: %s", dnn_version, dnn_text(b->status, text, sizeof text));

    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    if (!plan_from_heuristics(k, op_graph, CUDNN_HEUR_MODE_A, &last) &&
        !plan_from_heuristics(k, op_graph, CUDNN_HEUR_MODE_FALLBACK, &last)) {
        cudnnStatus_t why = builder_ok(b) ? last : b->status;
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "cuDNN %s has no engine for this SDPA graph: %s", dnn_version,
                        dnn_text(why, text, sizeof text));
    }
    int64_t n = 0;
    cudnnStatus_t s = dnn.cudnnBackendGetAttribute(k->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                   CUDNN_TYPE_INT64, 1, &n, &k->workspace_bytes);
    if (s != CUDNN_STATUS_SUCCESS)
        return avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN plan workspace size: %s", dnn_text(s, text, sizeof text));
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
    return ATTNVK_OK;
}

void avk_cudnn_sdpa_release(avk_cuda_device *dev, avk_cudnn_sdpa *k)
{
    if (!k) return;
    if (avk_cuda_push(dev) == ATTNVK_OK) {
        release_memory(dev, k);
        if (k->variant_pack) dnn.cudnnBackendDestroyDescriptor(k->variant_pack);
        builder_free(&k->graph);
        if (k->handle) dnn.cudnnDestroy(k->handle);
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
    k->scale = attnvk_problem_scale(p);
    k->neg_inf = dnn_version_number >= 91000 ? -INFINITY : -3.402823466e38f; /* as cudnn-frontend does */
    k->seq_q = p->seq_q;
    k->seq_kv = p->seq_kv;
    k->causal = p->causal;
    s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    char text[512];
    cudnnStatus_t ds = dnn.cudnnCreate(&k->handle);
    if (ds == CUDNN_STATUS_SUCCESS) ds = dnn.cudnnSetStream(k->handle, (cudaStream_t)dev->stream);
    if (ds != CUDNN_STATUS_SUCCESS)
        s = avk_fail(ds == CUDNN_STATUS_NOT_INITIALIZED ? ATTNVK_ERROR_UNAVAILABLE : dnn_status_kind(ds),
                     "cudnnCreate: %s", dnn_text(ds, text, sizeof text));
    if (s == ATTNVK_OK) {
        s = try_build(dev, k, p, 0);
        if (s == ATTNVK_ERROR_UNSUPPORTED) {
            /* some engines only take the pattern with a bound stats tensor */
            char first[512];
            snprintf(first, sizeof first, "%s", attnvk_last_error());
            release_memory(dev, k);
            builder_free(&k->graph);
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
        snprintf(info->params, sizeof info->params, "engine=%lld stats=%s heuristics=A", (long long)k->engine,
                 k->real_stats ? "bound" : "virtual");
    }
    *out = k;
    return ATTNVK_OK;
}

static attnvk_status bind_variant_pack(avk_cudnn_sdpa *k, const CUdeviceptr ptrs[4])
{
    int64_t uids[9];
    void *data[9];
    int n = 0;
    for (int i = 0; i < 4; ++i) {
        uids[n] = UID_Q + i;
        data[n++] = (void *)(uintptr_t)ptrs[i];
    }
    uids[n] = UID_SCALE;
    data[n++] = &k->scale;
    if (k->causal) {
        uids[n] = UID_NEG_INF;
        data[n++] = &k->neg_inf;
        uids[n] = UID_SEQ_Q;
        data[n++] = &k->seq_q;
        uids[n] = UID_SEQ_KV;
        data[n++] = &k->seq_kv;
    }
    if (k->real_stats) {
        uids[n] = UID_STATS;
        data[n++] = (void *)(uintptr_t)k->stats;
    }
    void *workspace = (void *)(uintptr_t)k->workspace;
    cudnnBackendDescriptor_t pack = NULL;
    cudnnStatus_t s = dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, data);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    if (s == CUDNN_STATUS_SUCCESS) s = dnn.cudnnBackendFinalize(pack);
    if (s != CUDNN_STATUS_SUCCESS) {
        char text[512];
        if (pack) dnn.cudnnBackendDestroyDescriptor(pack);
        return avk_fail(ATTNVK_ERROR_BACKEND, "cuDNN variant pack: %s", dnn_text(s, text, sizeof text));
    }
    if (k->variant_pack) dnn.cudnnBackendDestroyDescriptor(k->variant_pack);
    k->variant_pack = pack;
    memcpy(k->bound, ptrs, sizeof k->bound);
    return ATTNVK_OK;
}

attnvk_status avk_cudnn_sdpa_enqueue(avk_cuda_device *dev, avk_cudnn_sdpa *k, const avk_dispatch *a)
{
    (void)dev;
    const CUdeviceptr ptrs[4] = {avk_cuda_ptr(a->q), avk_cuda_ptr(a->k), avk_cuda_ptr(a->v), avk_cuda_ptr(a->o)};
    if (!k->variant_pack || memcmp(ptrs, k->bound, sizeof ptrs) != 0) {
        attnvk_status s = bind_variant_pack(k, ptrs);
        if (s != ATTNVK_OK) return s;
    }
    cudnnStatus_t s = dnn.cudnnBackendExecute(k->handle, k->plan, k->variant_pack);
    if (s != CUDNN_STATUS_SUCCESS) {
        char text[512];
        return avk_fail(dnn_status_kind(s), "cudnnBackendExecute: %s", dnn_text(s, text, sizeof text));
    }
    return ATTNVK_OK;
}
