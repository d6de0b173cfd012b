/* The cuDNN library table and a small builder for backend graphs: every
 * descriptor it creates is kept (and destroyed) with it, the first failure is
 * remembered and later calls do nothing, so graph code reads as a list of
 * operations. Private to cudnn_*.c. */
#ifndef ATTNVK_CUDNN_GRAPH_H
#define ATTNVK_CUDNN_GRAPH_H

#include "cuda/cuda_internal.h"

#include <cudnn_graph.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

typedef struct avk_dnn_api {
    AVK_CUDNN_FUNCTIONS(AVK_DNN_MEMBER)
} avk_dnn_api;

/* Filled by avk_cudnn_load (cudnn_sdpa.c); valid once it returned ATTNVK_OK. */
extern avk_dnn_api avk_dnn;
/* e.g. 91900 for 9.19.0; 0 before the library is loaded. */
extern size_t avk_dnn_version_number;

/* "CUDNN_STATUS_NOT_SUPPORTED_SHAPE (cuDNN's own last message)" */
const char *avk_dnn_text(cudnnStatus_t s, char *buf, size_t n);

/* the backward graph with every score input needs about 45 operations */
enum { AVK_DNN_MAX_DESCRIPTORS = 256, AVK_DNN_MAX_OPS = 64, AVK_DNN_MAX_BY_VALUE = 16, AVK_DNN_MAX_BOUND = 16 };

typedef struct avk_dnn_builder {
    cudnnBackendDescriptor_t owned[AVK_DNN_MAX_DESCRIPTORS];
    int owned_count;
    cudnnBackendDescriptor_t ops[AVK_DNN_MAX_OPS];
    int op_count;
    int64_t next_uid;
    /* by-value scalars: the variant pack passes each uid's host value */
    int64_t by_value_uids[AVK_DNN_MAX_BY_VALUE];
    void *by_value_data[AVK_DNN_MAX_BY_VALUE];
    int by_value_count;
    cudnnStatus_t status; /* first failure; later calls do nothing */
    char failed_at[96];
} avk_dnn_builder;

/* first_virtual_uid: where fresh uids start (above every fixed one). */
void avk_dnn_builder_init(avk_dnn_builder *b, int64_t first_virtual_uid);
void avk_dnn_builder_free(avk_dnn_builder *b);
int avk_dnn_builder_ok(const avk_dnn_builder *b);
void avk_dnn_note_failure(avk_dnn_builder *b, cudnnStatus_t s, const char *what);

cudnnBackendDescriptor_t avk_dnn_create(avk_dnn_builder *b, cudnnBackendDescriptorType_t type, const char *what);
void avk_dnn_set(avk_dnn_builder *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                 cudnnBackendAttributeType_t type, int64_t count, const void *value, const char *what);
void avk_dnn_finalize(avk_dnn_builder *b, cudnnBackendDescriptor_t d, const char *what);

typedef struct avk_dnn_shape {
    int64_t dims[4], strides[4];
} avk_dnn_shape;

/* Dense [d0][d1][d2][d3] strides. */
avk_dnn_shape avk_dnn_dense(int64_t d0, int64_t d1, int64_t d2, int64_t d3);

/* uid 0 = a fresh id. */
cudnnBackendDescriptor_t avk_dnn_tensor(avk_dnn_builder *b, const char *name, int64_t uid, cudnnDataType_t type,
                                        avk_dnn_shape shape, bool is_virtual);
/* A virtual [B][H][Nq][Nk]-like intermediate of the given shape. */
cudnnBackendDescriptor_t avk_dnn_virtual(avk_dnn_builder *b, const char *name, cudnnDataType_t type,
                                         avk_dnn_shape shape);
/* A by-value [1,1,1,1] scalar whose value the variant pack reads from *value
 * at execute (value must outlive the plan; NULL: the caller binds uid itself). */
cudnnBackendDescriptor_t avk_dnn_scalar(avk_dnn_builder *b, const char *name, int64_t uid, cudnnDataType_t type,
                                        void *value);

/* y = mode(x, in_b, in_t); in_b/in_t may be NULL; axis < 0: not set. */
void avk_dnn_pointwise(avk_dnn_builder *b, const char *name, cudnnPointwiseMode_t mode, cudnnDataType_t precision,
                       int64_t axis, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t in_b,
                       cudnnBackendDescriptor_t in_t, cudnnBackendDescriptor_t y);
void avk_dnn_reduction(avk_dnn_builder *b, const char *name, cudnnReduceTensorOp_t reduce,
                       cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);
void avk_dnn_matmul(avk_dnn_builder *b, const char *name, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t bm,
                    cudnnBackendDescriptor_t c);
/* y views x's data with y's dims, strides and type (a transpose, or P in the I/O type). */
void avk_dnn_reshape(avk_dnn_builder *b, const char *name, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);

/* ---- cudnn_plan.c: from a built graph to a run ---- */

/* NOT_SUPPORTED* -> UNSUPPORTED, allocation failures -> OUT_OF_MEMORY, else BACKEND. */
attnvk_status avk_dnn_status_kind(cudnnStatus_t s);

typedef struct avk_dnn_plan {
    cudnnBackendDescriptor_t plan; /* owned by the builder */
    int64_t engine;                /* cuDNN's global engine index, for the record */
    int64_t workspace_bytes;
} avk_dnn_plan;

/* The operation graph of b's operations on handle, then the first engine
 * config of the heuristics (mode A, then fallback) whose plan finalizes.
 * UNSUPPORTED with cuDNN's message when none does; `what` names the graph. */
attnvk_status avk_dnn_make_plan(avk_dnn_builder *b, cudnnHandle_t handle, const char *what, avk_dnn_plan *out);

/* A variant pack of n device tensors (uids[i] -> data[i]) and b's by-value
 * scalars; replaces (and destroys) *pack on success. */
attnvk_status avk_dnn_make_variant_pack(const avk_dnn_builder *b, const int64_t *uids, void *const *data, int n,
                                        void *workspace, cudnnBackendDescriptor_t *pack);

#endif
