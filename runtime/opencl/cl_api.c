#include "opencl/cl_api.h"

#include "core/dynlib.h"
#include "core/error.h"

#include <stdlib.h>

avk_cl_api avk_cl;
static avk_dynlib *cl_library;

attnvk_status avk_cl_load(void)
{
    if (cl_library) return ATTNVK_OK;
    const char *override = getenv("ATTNVK_OPENCL_LIBRARY");
    const char *const default_names[] = {"libOpenCL.so.1", "libOpenCL.so", NULL};
    const char *const override_names[] = {override, NULL};
    avk_dynlib *lib = avk_dynlib_open(override && *override ? override_names : default_names);
    if (!lib) return ATTNVK_ERROR_UNAVAILABLE; /* the reason is already set */
    avk_cl_api api;
    const avk_symbol symbols[] = {
        {"clGetPlatformIDs", (void **)&api.GetPlatformIDs},
        {"clGetPlatformInfo", (void **)&api.GetPlatformInfo},
        {"clGetDeviceIDs", (void **)&api.GetDeviceIDs},
        {"clGetDeviceInfo", (void **)&api.GetDeviceInfo},
        {"clCreateContext", (void **)&api.CreateContext},
        {"clReleaseContext", (void **)&api.ReleaseContext},
        {"clCreateCommandQueue", (void **)&api.CreateCommandQueue},
        {"clReleaseCommandQueue", (void **)&api.ReleaseCommandQueue},
        {"clCreateBuffer", (void **)&api.CreateBuffer},
        {"clReleaseMemObject", (void **)&api.ReleaseMemObject},
        {"clEnqueueWriteBuffer", (void **)&api.EnqueueWriteBuffer},
        {"clEnqueueReadBuffer", (void **)&api.EnqueueReadBuffer},
        {"clCreateProgramWithSource", (void **)&api.CreateProgramWithSource},
        {"clCreateProgramWithBinary", (void **)&api.CreateProgramWithBinary},
        {"clBuildProgram", (void **)&api.BuildProgram},
        {"clGetProgramBuildInfo", (void **)&api.GetProgramBuildInfo},
        {"clGetProgramInfo", (void **)&api.GetProgramInfo},
        {"clReleaseProgram", (void **)&api.ReleaseProgram},
        {"clCreateKernel", (void **)&api.CreateKernel},
        {"clReleaseKernel", (void **)&api.ReleaseKernel},
        {"clSetKernelArg", (void **)&api.SetKernelArg},
        {"clGetKernelWorkGroupInfo", (void **)&api.GetKernelWorkGroupInfo},
        {"clEnqueueNDRangeKernel", (void **)&api.EnqueueNDRangeKernel},
        {"clFinish", (void **)&api.Finish},
        {"clWaitForEvents", (void **)&api.WaitForEvents},
        {"clGetEventInfo", (void **)&api.GetEventInfo},
        {"clGetEventProfilingInfo", (void **)&api.GetEventProfilingInfo},
        {"clReleaseEvent", (void **)&api.ReleaseEvent},
        {"clCreateSubBuffer", (void **)&api.CreateSubBuffer},
        {"clRetainMemObject", (void **)&api.RetainMemObject},
        {"clGetMemObjectInfo", (void **)&api.GetMemObjectInfo},
        {"clGetCommandQueueInfo", (void **)&api.GetCommandQueueInfo},
        {"clFlush", (void **)&api.Flush},
    };
    attnvk_status s = avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols));
    if (s != ATTNVK_OK) {
        avk_dynlib_close(lib);
        return s;
    }
    avk_cl = api;
    cl_library = lib;
    return ATTNVK_OK;
}

void avk_cl_unload(void)
{
    avk_dynlib_close(cl_library);
    cl_library = NULL;
}

const char *avk_cl_error_name(cl_int err)
{
    switch (err) {
#define AVK_CL_ERR(name) case name: return #name;
    AVK_CL_ERR(CL_SUCCESS)
    AVK_CL_ERR(CL_DEVICE_NOT_FOUND)
    AVK_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    AVK_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    AVK_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    AVK_CL_ERR(CL_OUT_OF_RESOURCES)
    AVK_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    AVK_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    AVK_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    AVK_CL_ERR(CL_INVALID_VALUE)
    AVK_CL_ERR(CL_INVALID_DEVICE)
    AVK_CL_ERR(CL_INVALID_CONTEXT)
    AVK_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    AVK_CL_ERR(CL_INVALID_MEM_OBJECT)
    AVK_CL_ERR(CL_INVALID_BINARY)
    AVK_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    AVK_CL_ERR(CL_INVALID_PROGRAM)
    AVK_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    AVK_CL_ERR(CL_INVALID_KERNEL_NAME)
    AVK_CL_ERR(CL_INVALID_KERNEL)
    AVK_CL_ERR(CL_INVALID_ARG_INDEX)
    AVK_CL_ERR(CL_INVALID_ARG_VALUE)
    AVK_CL_ERR(CL_INVALID_ARG_SIZE)
    AVK_CL_ERR(CL_INVALID_KERNEL_ARGS)
    AVK_CL_ERR(CL_INVALID_WORK_DIMENSION)
    AVK_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    AVK_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    AVK_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    AVK_CL_ERR(CL_INVALID_EVENT)
    AVK_CL_ERR(CL_INVALID_OPERATION)
    AVK_CL_ERR(CL_INVALID_BUFFER_SIZE)
    AVK_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
#undef AVK_CL_ERR
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    case -9999: return "NVIDIA kernel execution failure";
    default: return "unknown OpenCL error";
    }
}

attnvk_status avk_cl_fail(cl_int err, const char *what)
{
    attnvk_status s = ATTNVK_ERROR_BACKEND;
    switch (err) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE: s = ATTNVK_ERROR_OUT_OF_MEMORY; break;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILER_NOT_AVAILABLE: s = ATTNVK_ERROR_COMPILE; break;
    case CL_DEVICE_NOT_AVAILABLE: s = ATTNVK_ERROR_DEVICE_LOST; break;
    default: break;
    }
    return avk_fail(s, "%s: %s (%d)", what, avk_cl_error_name(err), (int)err);
}
