#include "opencl/cl_device.h"
#include "opencl/cl_tuning.h"

#include "core/error.h"
#include "core/tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PLATFORMS = 16, MAX_DEVICES = 64 };
static cl_device_id device_list[MAX_DEVICES];
static int device_list_count;

int avk_cl_device_count(void) { return device_list_count; }
cl_device_id avk_cl_device_at(int index) { return device_list[index]; }
void avk_cl_forget_devices(void) { device_list_count = 0; }

attnvk_status avk_cl_enumerate(int *count)
{
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint nplat = 0;
    cl_int err = avk_cl.GetPlatformIDs(MAX_PLATFORMS, platforms, &nplat);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && nplat == 0))
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "no OpenCL platforms: the ICD loader found no vendor driver "
                                                  "(check /etc/OpenCL/vendors or OCL_ICD_VENDORS)");
    if (err != CL_SUCCESS) {
        avk_cl_fail(err, "clGetPlatformIDs");
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "clGetPlatformIDs failed: %s (%d)", avk_cl_error_name(err), (int)err);
    }
    device_list_count = 0;
    for (cl_uint p = 0; p < nplat && p < MAX_PLATFORMS; ++p) {
        cl_uint n = 0;
        cl_device_id ids[MAX_DEVICES];
        if (avk_cl.GetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &n) != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < n && device_list_count < MAX_DEVICES; ++i) device_list[device_list_count++] = ids[i];
    }
    *count = device_list_count;
    return ATTNVK_OK;
}

/* Truncates long strings (PoCL's version string runs past 64 bytes). */
static void query_string(cl_device_id dev, cl_device_info what, char *out, size_t n)
{
    char buf[1024] = "";
    if (avk_cl.GetDeviceInfo(dev, what, sizeof buf - 1, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
    buf[sizeof buf - 1] = '\0';
    snprintf(out, n, "%s", buf);
}

static uint64_t query_u64(cl_device_id dev, cl_device_info what)
{
    cl_ulong v = 0;
    return avk_cl.GetDeviceInfo(dev, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

static unsigned query_uint(cl_device_id dev, cl_device_info what)
{
    cl_uint v = 0;
    return avk_cl.GetDeviceInfo(dev, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

/* Whole-word match in the space-separated extension list. */
static int has_extension(const char *list, const char *ext)
{
    size_t n = strlen(ext);
    for (const char *p = strstr(list, ext); p; p = strstr(p + 1, ext))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

void avk_cl_query_caps(cl_device_id dev, avk_cl_caps *c)
{
    memset(c, 0, sizeof *c);
    query_string(dev, CL_DEVICE_NAME, c->name, sizeof c->name);
    query_string(dev, CL_DEVICE_VENDOR, c->vendor, sizeof c->vendor);
    query_string(dev, CL_DRIVER_VERSION, c->driver, sizeof c->driver);
    query_string(dev, CL_DEVICE_VERSION, c->version, sizeof c->version);
    c->vendor_id = query_uint(dev, CL_DEVICE_VENDOR_ID);
    cl_device_type type = 0;
    avk_cl.GetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    c->type = type;
    c->global_mem = query_u64(dev, CL_DEVICE_GLOBAL_MEM_SIZE);
    c->max_alloc = query_u64(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    c->local_mem = query_u64(dev, CL_DEVICE_LOCAL_MEM_SIZE);
    c->compute_units = (int)query_uint(dev, CL_DEVICE_MAX_COMPUTE_UNITS);
    size_t wg = 0;
    avk_cl.GetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    c->max_workgroup = wg;

    size_t ext_size = 0;
    char *ext = NULL;
    if (avk_cl.GetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_size) == CL_SUCCESS && ext_size)
        ext = calloc(1, ext_size + 1);
    if (ext && avk_cl.GetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, ext_size, ext, NULL) != CL_SUCCESS) ext[0] = '\0';
    const char *e = ext ? ext : "";
    c->khr_fp16 = has_extension(e, "cl_khr_fp16");
    c->khr_subgroup_shuffle = has_extension(e, "cl_khr_subgroup_shuffle") && has_extension(e, "cl_khr_subgroups");
    c->intel_subgroups = has_extension(e, "cl_intel_subgroups");
    c->is_nvidia = c->vendor_id == 0x10de || avk_contains_nocase(c->vendor, "nvidia");
    c->is_amd = c->vendor_id == 0x1002 || avk_contains_nocase(c->vendor, "advanced micro devices");
    c->is_intel = (c->vendor_id == 0x8086 && !(type & CL_DEVICE_TYPE_CPU)) || avk_contains_nocase(c->vendor, "intel");
    if (has_extension(e, "cl_nv_device_attribute_query")) {
        c->nv_cc_major = (int)query_uint(dev, AVK_CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
        c->nv_cc_minor = (int)query_uint(dev, AVK_CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
        c->subgroup_size = (int)query_uint(dev, AVK_CL_DEVICE_WARP_SIZE_NV);
    } else if (has_extension(e, "cl_amd_device_attribute_query")) {
        c->subgroup_size = (int)query_uint(dev, AVK_CL_DEVICE_WAVEFRONT_WIDTH_AMD);
    } else if (has_extension(e, "cl_intel_required_subgroup_size")) {
        size_t sizes[8] = {0};
        if (avk_cl.GetDeviceInfo(dev, AVK_CL_DEVICE_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes, NULL) == CL_SUCCESS)
            c->subgroup_size = (int)sizes[0];
    }
    free(ext);

    /* test knob: configure as for a device with this much local memory (32768: many mobile GPUs) */
    const char *local_limit = getenv("ATTNVK_OPENCL_LOCAL_MEM");
    if (local_limit && *local_limit) {
        uint64_t cap = strtoull(local_limit, NULL, 10);
        if (cap && cap < c->local_mem) c->local_mem = cap;
    }
    const char *limit = getenv("ATTNVK_OPENCL_MEM_LIMIT");
    if (limit && *limit) {
        uint64_t cap = strtoull(limit, NULL, 10);
        if (cap && cap < c->global_mem) c->global_mem = cap;
        if (cap && cap < c->max_alloc) c->max_alloc = cap;
    }
}

int avk_cl_has_mma(const avk_cl_caps *c) { return c->is_nvidia && c->nv_cc_major >= 8; }

void avk_cl_fill_info(const avk_cl_caps *c, cl_device_id dev, attnvk_device_info *info)
{
    snprintf(info->name, sizeof info->name, "%s", c->name);
    snprintf(info->vendor, sizeof info->vendor, "%s", c->vendor);
    info->vendor_id = c->vendor_id;
    info->type = (c->type & CL_DEVICE_TYPE_CPU)   ? ATTNVK_DEVICE_CPU
                 : (c->type & CL_DEVICE_TYPE_GPU) ? ATTNVK_DEVICE_DISCRETE
                                                  : ATTNVK_DEVICE_OTHER;
    cl_bool unified = CL_FALSE;
    if (info->type == ATTNVK_DEVICE_DISCRETE &&
        avk_cl.GetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) == CL_SUCCESS &&
        unified)
        info->type = ATTNVK_DEVICE_INTEGRATED;
    snprintf(info->driver_version, sizeof info->driver_version, "%s", c->driver);
    snprintf(info->api_version, sizeof info->api_version, "%s", c->version);
    if (c->nv_cc_major) snprintf(info->architecture, sizeof info->architecture, "sm_%d%d", c->nv_cc_major, c->nv_cc_minor);
    else if (c->is_amd && strncmp(c->name, "gfx", 3) == 0)
        snprintf(info->architecture, sizeof info->architecture, "%.60s", c->name);
    else if (c->type & CL_DEVICE_TYPE_CPU) snprintf(info->architecture, sizeof info->architecture, "cpu");
    info->memory_bytes = c->global_mem;
    info->compute_units = c->compute_units;
    if (c->subgroup_size > 0) info->subgroup_sizes[0] = c->subgroup_size;
    info->shared_memory_per_group = c->local_mem;
    info->max_workgroup_size = (int)c->max_workgroup;
    /* f16 storage goes through vload_half/vstore_half (core OpenCL C), and the
     * mma variant converts in registers, so no device needs cl_khr_fp16. */
    info->fp16 = 1;
    info->bf16 = 0;
    info->cooperative_matrix = avk_cl_has_mma(c);
    unsigned char uuid[ATTNVK_UUID_SIZE];
    if (avk_cl.GetDeviceInfo(dev, AVK_CL_DEVICE_UUID_KHR, sizeof uuid, uuid, NULL) == CL_SUCCESS) {
        memcpy(info->uuid, uuid, sizeof uuid);
        info->has_uuid = 1;
    }
    snprintf(info->default_variant, sizeof info->default_variant, "%s", avk_cl_default_variant(c, info));
}

/* NVIDIA reports a faulting kernel (illegal or misaligned address) as -9999
 * from the event query, or as a negative execution status. */
static attnvk_status event_status(avk_bdev *dev, cl_event ev)
{
    cl_int st = CL_COMPLETE;
    cl_int err = avk_cl.GetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (err == CL_SUCCESS && st >= 0) return ATTNVK_OK;
    cl_int code = err != CL_SUCCESS ? err : st;
    dev->lost = 1;
    snprintf(dev->lost_reason, sizeof dev->lost_reason, "a kernel failed on the device: %s (%d)%s",
             avk_cl_error_name(code), (int)code,
             code == -9999 || code == CL_OUT_OF_RESOURCES ? " (NVIDIA: illegal or misaligned address)" : "");
    return avk_fail(ATTNVK_ERROR_DEVICE_LOST, "%s", dev->lost_reason);
}

attnvk_status avk_cl_check_lost(const avk_bdev *dev)
{
    return dev->lost ? avk_fail(ATTNVK_ERROR_DEVICE_LOST, "device lost earlier: %s", dev->lost_reason) : ATTNVK_OK;
}

attnvk_status avk_cl_wait_timed(avk_bdev *dev, cl_event first, cl_event last, double *ms)
{
    avk_cl.WaitForEvents(1, &last);
    attnvk_status s = event_status(dev, last);
    if (s == ATTNVK_OK) s = event_status(dev, first);
    if (s != ATTNVK_OK) return s;
    const cl_int err = avk_cl_events_ms(first, last, ms);
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clGetEventProfilingInfo");
}

cl_int avk_cl_events_ms(cl_event first, cl_event last, double *ms)
{
    cl_ulong t0 = 0, t1 = 0;
    cl_int err = avk_cl.GetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    if (err == CL_SUCCESS) err = avk_cl.GetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    *ms = err == CL_SUCCESS && t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
    return err;
}
