/* OpenCL memory as an application makes it: clCreateBuffer on attnvk's
 * cl_context (from attnvk_device_native), written and read on a queue of the
 * application's own, which also serves as the caller's queue of async runs. */
#define CL_TARGET_OPENCL_VERSION 120
#include "interop_memory.h"

#include <CL/cl.h>

#include <stdio.h>
#include <string.h>

static cl_command_queue make_queue(const attnvk_native_handles *nh)
{
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        clCreateCommandQueue((cl_context)nh->cl_context, (cl_device_id)nh->cl_device, 0, &err);
    if (err != CL_SUCCESS) fprintf(stderr, "clCreateCommandQueue: %d\n", err);
    return err == CL_SUCCESS ? q : NULL;
}

static int cl_alloc(const attnvk_native_handles *nh, size_t bytes, ext_memory *m)
{
    memset(m, 0, sizeof *m);
    m->native = nh;
    m->bytes = bytes;
    cl_int err = CL_SUCCESS;
    m->handle = clCreateBuffer((cl_context)nh->cl_context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) fprintf(stderr, "clCreateBuffer(%zu bytes): %d\n", bytes, err);
    m->host = make_queue(nh); /* the application's queue for its transfers */
    return err != CL_SUCCESS || !m->host;
}

static int cl_write(ext_memory *m, size_t offset, const void *src, size_t bytes)
{
    cl_int err = clEnqueueWriteBuffer((cl_command_queue)m->host, (cl_mem)m->handle, CL_TRUE, offset, bytes, src, 0,
                                      NULL, NULL);
    if (err != CL_SUCCESS) fprintf(stderr, "clEnqueueWriteBuffer: %d\n", err);
    return err != CL_SUCCESS;
}

static int cl_read(ext_memory *m, size_t offset, void *dst, size_t bytes)
{
    cl_int err = clEnqueueReadBuffer((cl_command_queue)m->host, (cl_mem)m->handle, CL_TRUE, offset, bytes, dst, 0,
                                     NULL, NULL);
    if (err != CL_SUCCESS) fprintf(stderr, "clEnqueueReadBuffer: %d\n", err);
    return err != CL_SUCCESS;
}

static void cl_release(ext_memory *m)
{
    if (m->handle) clReleaseMemObject((cl_mem)m->handle);
    if (m->host) clReleaseCommandQueue((cl_command_queue)m->host);
}

static void *cl_stream_create(const attnvk_native_handles *nh) { return make_queue(nh); }

static int cl_stream_sync(const attnvk_native_handles *nh, void *stream)
{
    (void)nh;
    return clFinish((cl_command_queue)stream) != CL_SUCCESS;
}

static void cl_stream_destroy(const attnvk_native_handles *nh, void *stream)
{
    (void)nh;
    clReleaseCommandQueue((cl_command_queue)stream);
}

static int cl_references(ext_memory *m)
{
    cl_uint n = 0;
    return clGetMemObjectInfo((cl_mem)m->handle, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL) == CL_SUCCESS ? (int)n : -1;
}

const ext_provider interop_opencl_memory = {
    .api = ATTNVK_API_OPENCL, .alloc = cl_alloc, .write = cl_write, .read = cl_read, .release = cl_release,
    .stream_create = cl_stream_create, .stream_sync = cl_stream_sync, .stream_destroy = cl_stream_destroy,
    .references = cl_references,
};
