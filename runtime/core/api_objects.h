/* The public handles' insides, shared by the core files that implement the
 * API (context.c: devices, buffers, kernels; interop.c: wrapped buffers,
 * native handles, async runs). */
#ifndef ATTNVK_API_OBJECTS_H
#define ATTNVK_API_OBJECTS_H

#include "core/backend.h"

struct attnvk_device {
    attnvk_context *ctx;
    const attnvk_backend *backend;
    avk_bdev *bdev;
    attnvk_device_info info;
    int async_pending;          /* an async run on the device's own queue may still run */
};

struct attnvk_buffer {
    attnvk_device *dev;
    avk_bbuf *bbuf;
    size_t size;
    int wrapped;                /* over the caller's memory (attnvk_buffer_wrap) */
};

struct attnvk_kernel {
    attnvk_device *dev;
    avk_bkernel *bkernel;
    attnvk_problem problem;
    int write_lse;
    attnvk_buffer *dilation; /* dilated problems: the groups' (segment, rate) pairs on the device */
};

/* Checks t against k's problem and fills the backend's arguments (context.c). */
attnvk_status avk_dispatch_fill(const attnvk_kernel *k, const attnvk_tensors *t, int q_begin, int q_count,
                                int launches, avk_dispatch *out);

/* Before anything else touches the device: waits for pending async runs. */
attnvk_status avk_device_settle(attnvk_device *dev);

#endif
