/* The cuDNN backend-graph builder (see cudnn_graph.h). */
#include "cuda/cudnn_graph.h"

#include <stdio.h>
#include <string.h>

avk_dnn_api avk_dnn;
size_t avk_dnn_version_number;

const char *avk_dnn_text(cudnnStatus_t s, char *buf, size_t n)
{
    char last[384] = "";
    avk_dnn.cudnnGetLastErrorString(last, sizeof last);
    snprintf(buf, n, "%s%s%s%s", avk_dnn.cudnnGetErrorString(s), last[0] ? " (" : "", last, last[0] ? ")" : "");
    /* cuDNN's last-error text spans lines; a reason is one line */
    for (char *c = buf; *c; ++c)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
    return buf;
}

void avk_dnn_builder_init(avk_dnn_builder *b, int64_t first_virtual_uid)
{
    memset(b, 0, sizeof *b);
    b->next_uid = first_virtual_uid;
    b->status = CUDNN_STATUS_SUCCESS;
}

void avk_dnn_builder_free(avk_dnn_builder *b)
{
    for (int i = b->owned_count - 1; i >= 0; --i)
        if (b->owned[i]) avk_dnn.cudnnBackendDestroyDescriptor(b->owned[i]);
    b->owned_count = 0;
    b->op_count = 0;
    b->by_value_count = 0;
}

int avk_dnn_builder_ok(const avk_dnn_builder *b) { return b->status == CUDNN_STATUS_SUCCESS; }

void avk_dnn_note_failure(avk_dnn_builder *b, cudnnStatus_t s, const char *what)
{
    if (!avk_dnn_builder_ok(b) || s == CUDNN_STATUS_SUCCESS) return;
    b->status = s;
    snprintf(b->failed_at, sizeof b->failed_at, "%s", what);
}

cudnnBackendDescriptor_t avk_dnn_create(avk_dnn_builder *b, cudnnBackendDescriptorType_t type, const char *what)
{
    if (!avk_dnn_builder_ok(b)) return NULL;
    if (b->owned_count == AVK_DNN_MAX_DESCRIPTORS) {
        avk_dnn_note_failure(b, CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, "too many descriptors");
        return NULL;
    }
    cudnnBackendDescriptor_t d = NULL;
    avk_dnn_note_failure(b, avk_dnn.cudnnBackendCreateDescriptor(type, &d), what);
    if (!avk_dnn_builder_ok(b)) return NULL;
    b->owned[b->owned_count++] = d;
    return d;
}

void avk_dnn_set(avk_dnn_builder *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                 cudnnBackendAttributeType_t type, int64_t count, const void *value, const char *what)
{
    if (!avk_dnn_builder_ok(b)) return;
    avk_dnn_note_failure(b, avk_dnn.cudnnBackendSetAttribute(d, name, type, count, value), what);
}

void avk_dnn_finalize(avk_dnn_builder *b, cudnnBackendDescriptor_t d, const char *what)
{
    if (!avk_dnn_builder_ok(b)) return;
    avk_dnn_note_failure(b, avk_dnn.cudnnBackendFinalize(d), what);
}

static void add_op(avk_dnn_builder *b, cudnnBackendDescriptor_t op)
{
    if (!avk_dnn_builder_ok(b)) return;
    if (b->op_count == AVK_DNN_MAX_OPS) {
        avk_dnn_note_failure(b, CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, "too many operations");
        return;
    }
    b->ops[b->op_count++] = op;
}

avk_dnn_shape avk_dnn_dense(int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    avk_dnn_shape s = {{d0, d1, d2, d3}, {d1 * d2 * d3, d2 * d3, d3, 1}};
    return s;
}

static cudnnBackendDescriptor_t make_tensor(avk_dnn_builder *b, const char *name, int64_t uid, cudnnDataType_t type,
                                            avk_dnn_shape shape, bool is_virtual, bool by_value, int64_t *id_out)
{
    cudnnBackendDescriptor_t t = avk_dnn_create(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, name);
    int64_t id = uid ? uid : b->next_uid++;
    int64_t alignment = 16;
    avk_dnn_set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, name);
    avk_dnn_set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, shape.dims, name);
    avk_dnn_set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, shape.strides, name);
    avk_dnn_set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id, name);
    avk_dnn_set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, name);
    if (is_virtual) avk_dnn_set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, name);
    if (by_value) avk_dnn_set(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, name);
    avk_dnn_finalize(b, t, name);
    if (id_out) *id_out = id;
    return t;
}

cudnnBackendDescriptor_t avk_dnn_tensor(avk_dnn_builder *b, const char *name, int64_t uid, cudnnDataType_t type,
                                        avk_dnn_shape shape, bool is_virtual)
{
    return make_tensor(b, name, uid, type, shape, is_virtual, false, NULL);
}

cudnnBackendDescriptor_t avk_dnn_virtual(avk_dnn_builder *b, const char *name, cudnnDataType_t type,
                                         avk_dnn_shape shape)
{
    return make_tensor(b, name, 0, type, shape, true, false, NULL);
}

cudnnBackendDescriptor_t avk_dnn_scalar(avk_dnn_builder *b, const char *name, int64_t uid, cudnnDataType_t type,
                                        void *value)
{
    avk_dnn_shape one = {{1, 1, 1, 1}, {1, 1, 1, 1}};
    int64_t id = 0;
    cudnnBackendDescriptor_t t = make_tensor(b, name, uid, type, one, false, true, &id);
    if (value && avk_dnn_builder_ok(b)) {
        if (b->by_value_count == AVK_DNN_MAX_BY_VALUE) {
            avk_dnn_note_failure(b, CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, "too many by-value scalars");
        } else {
            b->by_value_uids[b->by_value_count] = id;
            b->by_value_data[b->by_value_count++] = value;
        }
    }
    return t;
}

void avk_dnn_pointwise(avk_dnn_builder *b, const char *name, cudnnPointwiseMode_t mode, cudnnDataType_t precision,
                       int64_t axis, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t in_b,
                       cudnnBackendDescriptor_t in_t, cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t pw = avk_dnn_create(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, name);
    avk_dnn_set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, name);
    avk_dnn_set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, name);
    if (axis >= 0) avk_dnn_set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, name);
    avk_dnn_finalize(b, pw, name);
    cudnnBackendDescriptor_t op = avk_dnn_create(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, name);
    if (in_b) avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_b, name);
    if (in_t) avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_t, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, name);
    avk_dnn_finalize(b, op, name);
    add_op(b, op);
}

void avk_dnn_reduction(avk_dnn_builder *b, const char *name, cudnnReduceTensorOp_t reduce,
                       cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t rd = avk_dnn_create(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, name);
    avk_dnn_set(b, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce, name);
    avk_dnn_set(b, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, name);
    avk_dnn_finalize(b, rd, name);
    cudnnBackendDescriptor_t op = avk_dnn_create(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, name);
    avk_dnn_finalize(b, op, name);
    add_op(b, op);
}

void avk_dnn_matmul(avk_dnn_builder *b, const char *name, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t bm,
                    cudnnBackendDescriptor_t c)
{
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm = avk_dnn_create(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR, name);
    avk_dnn_set(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, name);
    avk_dnn_finalize(b, mm, name);
    cudnnBackendDescriptor_t op = avk_dnn_create(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bm, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, name);
    avk_dnn_finalize(b, op, name);
    add_op(b, op);
}

void avk_dnn_reshape(avk_dnn_builder *b, const char *name, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t op = avk_dnn_create(b, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, name);
    avk_dnn_set(b, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, name);
    avk_dnn_finalize(b, op, name);
    add_op(b, op);
}
