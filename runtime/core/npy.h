/* NumPy .npy files: little-endian float32/float16 (tensors), int32 (block
 * tables and lengths) or uint8/int8 (block-sparse layouts), C order, versions 1-3. */
#ifndef ATTNVK_NPY_H
#define ATTNVK_NPY_H

#include "attnvk/attnvk.h"

enum { AVK_NPY_MAX_DIMS = 8 };

typedef struct avk_npy {
    int ndim;
    int64_t shape[AVK_NPY_MAX_DIMS];
    int stored_float16; /* the file held float16 (converted on read) */
    size_t count;
    float *data;        /* malloc'd, converted to float32 (avk_npy_read) */
    int32_t *ints;      /* malloc'd int32 (avk_npy_read_int32) */
    uint8_t *bytes;     /* malloc'd uint8/int8 bytes as stored (avk_npy_read_bytes) */
} avk_npy;

/* Errors name the file and the problem: "Q.npy: truncated: ..." */
attnvk_status avk_npy_read(const char *path, avk_npy *out);
/* An int32 ('<i4') array into out->ints; any other dtype is an error naming
 * the file. what ("block table", "seq_lens") words the error. */
attnvk_status avk_npy_read_int32(const char *path, const char *what, avk_npy *out);
/* A uint8 ('|u1') or int8 ('|i1') array into out->bytes; any other dtype is an
 * error naming the file and what ("block layout"). */
attnvk_status avk_npy_read_bytes(const char *path, const char *what, avk_npy *out);
attnvk_status avk_npy_write(const char *path, const float *data, int ndim, const int64_t *shape);
void avk_npy_free(avk_npy *npy);

#endif
