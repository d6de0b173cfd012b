/* The OpenCL entry points attnvk uses, resolved from libOpenCL.so.1 at run
 * time: the CL headers supply types only, so nothing links against OpenCL. */
#ifndef ATTNVK_CL_API_H
#define ATTNVK_CL_API_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include "attnvk/attnvk.h"

/* Vendor queries not in every cl_ext.h (values from the Khronos registry). */
#define AVK_CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define AVK_CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define AVK_CL_DEVICE_WARP_SIZE_NV 0x4003
#define AVK_CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#define AVK_CL_DEVICE_SUB_GROUP_SIZES_INTEL 0x4108
#define AVK_CL_DEVICE_UUID_KHR 0x106A

typedef struct avk_cl_api {
    cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
    cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
    cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
    cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *, cl_int *);
    cl_int (*ReleaseContext)(cl_context);
    cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
    cl_int (*ReleaseCommandQueue)(cl_command_queue);
    cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
    cl_int (*ReleaseMemObject)(cl_mem);
    cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                                 const cl_event *, cl_event *);
    cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                                const cl_event *, cl_event *);
    cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
    cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *, const size_t *,
                                          const unsigned char **, cl_int *, cl_int *);
    cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
                           void(CL_CALLBACK *)(cl_program, void *), void *);
    cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *);
    cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
    cl_int (*ReleaseProgram)(cl_program);
    cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
    cl_int (*ReleaseKernel)(cl_kernel);
    cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
    cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *);
    cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                                   const size_t *, cl_uint, const cl_event *, cl_event *);
    cl_int (*Finish)(cl_command_queue);
    cl_int (*WaitForEvents)(cl_uint, const cl_event *);
    cl_int (*GetEventInfo)(cl_event, cl_event_info, size_t, void *, size_t *);
    cl_int (*GetEventProfilingInfo)(cl_event, cl_profiling_info, size_t, void *, size_t *);
    cl_int (*ReleaseEvent)(cl_event);
    /* interop and async runs (cl_interop.c) */
    cl_mem (*CreateSubBuffer)(cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *);
    cl_int (*RetainMemObject)(cl_mem);
    cl_int (*GetMemObjectInfo)(cl_mem, cl_mem_info, size_t, void *, size_t *);
    cl_int (*GetCommandQueueInfo)(cl_command_queue, cl_command_queue_info, size_t, void *, size_t *);
    cl_int (*Flush)(cl_command_queue);
} avk_cl_api;

/* Loaded once by the backend's init; NULL members never escape a failed load. */
extern avk_cl_api avk_cl;

/* dlopens the ICD loader ($ATTNVK_OPENCL_LIBRARY overrides the name, for
 * tests) and resolves every entry point; UNAVAILABLE with the reason. */
attnvk_status avk_cl_load(void);
void avk_cl_unload(void);

const char *avk_cl_error_name(cl_int err);
/* Turns an OpenCL error into a status with a one-line message:
 * allocation failures -> OUT_OF_MEMORY, build failures -> COMPILE. */
attnvk_status avk_cl_fail(cl_int err, const char *what);

#endif
