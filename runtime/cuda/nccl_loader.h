/* Run-time loading of NCCL (libnccl.so.2) for ring attention's transport
 * (cuda_ring_comm.c). Nothing links against it and nccl.h is not needed:
 * the few types below follow NCCL's stable C ABI, which RCCL (librccl)
 * exports too under the same symbol names, with hipStream_t for the stream;
 * hence `void *stream` and a table that a HIP transport can reuse with
 * RCCL's library names.
 *
 * Each member is named exactly like the API function: `nc->ncclSend(...)`. */
#ifndef ATTNVK_NCCL_LOADER_H
#define ATTNVK_NCCL_LOADER_H

#include "attnvk/attnvk.h"

#include <stddef.h>

typedef struct avk_ccl_comm_s *avk_ccl_comm; /* ncclComm_t */
typedef int avk_ccl_result;                  /* ncclResult_t */
typedef int avk_ccl_datatype;                /* ncclDataType_t */

enum {
    AVK_CCL_SUCCESS = 0, /* ncclSuccess */
    AVK_CCL_INT8 = 0,    /* ncclInt8 (= ncclChar): transfers counted in bytes */
};

#define AVK_CCL_FUNCTIONS(X)                                                                           \
    X(avk_ccl_result, ncclGetVersion, (int *version))                                                \
    X(const char *, ncclGetErrorString, (avk_ccl_result result))                                     \
    X(avk_ccl_result, ncclCommInitAll, (avk_ccl_comm * comms, int ndev, const int *devlist))         \
    X(avk_ccl_result, ncclCommDestroy, (avk_ccl_comm comm))                                           \
    X(avk_ccl_result, ncclGroupStart, (void))                                                         \
    X(avk_ccl_result, ncclGroupEnd, (void))                                                           \
    X(avk_ccl_result, ncclSend,                                                                       \
      (const void *sendbuff, size_t count, avk_ccl_datatype type, int peer, avk_ccl_comm comm, void *stream)) \
    X(avk_ccl_result, ncclRecv,                                                                       \
      (void *recvbuff, size_t count, avk_ccl_datatype type, int peer, avk_ccl_comm comm, void *stream))

#define AVK_CCL_MEMBER(ret, fn, params) ret(*fn) params;

typedef struct avk_ccl {
    AVK_CCL_FUNCTIONS(AVK_CCL_MEMBER)
    const char *label;  /* "nccl" */
    char library[128];  /* the file actually loaded */
    int version;        /* ncclGetVersion, e.g. 22703 for 2.27.3 */
} avk_ccl;

/* Loaded once per process and kept; NULL with ATTNVK_ERROR_UNAVAILABLE and
 * the one-line reason "nccl: cannot load libnccl.so.2: <dlerror>" set.
 * Not thread-safe on first call. */
const avk_ccl *avk_nccl_load(void);
/* Closes the library (process shutdown; the table becomes invalid). */
void avk_nccl_unload(void);

/* Test hook (not API): the candidate file names tried next, NULL-terminated
 * (NULL: the defaults); unloads what was loaded. Lets a test see the
 * missing-library path on a machine that has NCCL. */
void avk_nccl_test_library_names(const char *const *names);

#endif
