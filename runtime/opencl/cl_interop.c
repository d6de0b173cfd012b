/* OpenCL interop: a caller's cl_mem (on attnvk's cl_context) as a buffer, the
 * handles a caller needs to make one, and the queue an async run goes on.
 * attnvk holds its own reference to a wrapped cl_mem (the caller's at offset
 * 0, else a sub-buffer of the range), so cl_release frees it like any other. */
#include "opencl/cl_device.h"

#include <stdlib.h>

static cl_uint base_align_bytes(const avk_bdev *dev)
{
    cl_uint bits = 0;
    if (avk_cl.GetDeviceInfo(dev->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL) != CL_SUCCESS)
        bits = 1024; /* the largest the spec's types need: 128 bytes */
    return bits / 8 ? bits / 8 : 1;
}

attnvk_status avk_cl_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    cl_mem mem = (cl_mem)ext->handle, parent = NULL;
    cl_context context = NULL;
    size_t size = 0;
    cl_int err = avk_cl.GetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof context, &context, NULL);
    if (err == CL_SUCCESS) err = avk_cl.GetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err == CL_SUCCESS) err = avk_cl.GetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL);
    if (err != CL_SUCCESS)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: the opencl handle is not a cl_mem (%s)",
                        avk_cl_error_name(err));
    if (context != dev->context)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "buffer wrap: the cl_mem belongs to another cl_context (use attnvk_device_native's cl_context)");
    if (ext->offset + ext->bytes > size)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: range %zu+%zu outside the %zu-byte cl_mem",
                        ext->offset, ext->bytes, size);
    const cl_uint align = base_align_bytes(dev);
    if (ext->offset % align)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "buffer wrap: opencl offset %zu is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes)",
                        ext->offset, align);
    if (ext->offset && parent)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "buffer wrap: the cl_mem is a sub-buffer; OpenCL makes no sub-buffer of it (wrap its parent "
                        "at the offset)");
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (ext->offset == 0) {
        err = avk_cl.RetainMemObject(mem);
        b->mem = mem;
    } else {
        const cl_buffer_region region = {.origin = ext->offset, .size = ext->bytes};
        b->mem = avk_cl.CreateSubBuffer(mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    }
    if (err != CL_SUCCESS || !b->mem) {
        free(b);
        return avk_cl_fail(err, ext->offset ? "clCreateSubBuffer (buffer wrap)" : "clRetainMemObject (buffer wrap)");
    }
    b->size = ext->bytes;
    *out = b;
    return ATTNVK_OK;
}

attnvk_status avk_cl_native(avk_bdev *dev, attnvk_native_handles *out)
{
    cl_platform_id platform = NULL;
    avk_cl.GetDeviceInfo(dev->device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    out->wrap_alignment = base_align_bytes(dev);
    out->cl_platform = (void *)platform;
    out->cl_context = (void *)dev->context;
    out->cl_device = (void *)dev->device;
    out->cl_queue = (void *)dev->queue;
    return ATTNVK_OK;
}

attnvk_status avk_cl_wait(avk_bdev *dev)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    cl_int err = avk_cl.Finish(dev->queue);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clFinish (waiting for async runs)");
}

attnvk_status avk_cl_run_queue(avk_bdev *dev, const avk_dispatch *a, cl_command_queue *queue)
{
    *queue = dev->queue;
    if (!a->stream) return ATTNVK_OK;
    cl_command_queue q = (cl_command_queue)a->stream;
    cl_context context = NULL;
    cl_command_queue_properties props = 0;
    cl_int err = avk_cl.GetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof context, &context, NULL);
    if (err == CL_SUCCESS) err = avk_cl.GetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (err != CL_SUCCESS)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "run options: the stream is not a cl_command_queue (%s)",
                        avk_cl_error_name(err));
    if (context != dev->context)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "run options: the cl_command_queue belongs to another cl_context (use attnvk_device_native's)");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "run options: the cl_command_queue is out of order (a run's kernels need an in-order queue)");
    *queue = q;
    return ATTNVK_OK;
}
