/* OpenCL devices as the backend sees them: what each one can do (queried once)
 * and the opened state (context, profiling queue, built programs). */
#ifndef ATTNVK_CL_DEVICE_H
#define ATTNVK_CL_DEVICE_H

#include "core/backend.h"
#include "opencl/cl_api.h"

#include <stddef.h>
#include <stdint.h>

typedef struct avk_cl_caps {
    char name[256], vendor[64], driver[64], version[64];
    uint32_t vendor_id;
    cl_device_type type;
    int is_nvidia, is_intel, is_amd;
    int nv_cc_major, nv_cc_minor; /* 0 unless cl_nv_device_attribute_query */
    int khr_fp16, khr_subgroup_shuffle, intel_subgroups;
    int subgroup_size;            /* warp/wavefront/SIMD width where queryable, else 0 */
    uint64_t global_mem, max_alloc, local_mem;
    size_t max_workgroup;
    int compute_units;
} avk_cl_caps;

/* Programs built on an opened device, by a hash of source and options. */
enum { AVK_CL_MAX_PROGRAMS = 64 };

struct avk_bdev {
    int index;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue; /* in order, CL_QUEUE_PROFILING_ENABLE */
    avk_cl_caps caps;
    attnvk_device_info info; /* what describe() reports, for tuning lookups */
    /* A failed kernel leaves NVIDIA's context unusable (every later call
     * fails, often as CL_OUT_OF_RESOURCES): remembered, reported as lost. */
    int lost;
    char lost_reason[256];
    struct { uint64_t key; cl_program program; } programs[AVK_CL_MAX_PROGRAMS];
    int program_count;
    cl_kernel merge[3];      /* ring_merge.cl's kernels per dtype (cl_merge.c), built on first use */
};

struct avk_bbuf {
    cl_mem mem;
    size_t size;
};

int avk_cl_device_count(void);
cl_device_id avk_cl_device_at(int index);
attnvk_status avk_cl_enumerate(int *count);
void avk_cl_forget_devices(void);

/* Queries everything attnvk needs about a device. $ATTNVK_OPENCL_MEM_LIMIT
 * (bytes) caps global and single-allocation memory, to test 'does not fit'. */
void avk_cl_query_caps(cl_device_id dev, avk_cl_caps *caps);
void avk_cl_fill_info(const avk_cl_caps *caps, cl_device_id dev, attnvk_device_info *info);

/* NVIDIA compute capability >= 8.0: mma.sync m16n8k16 reachable through inline PTX. */
int avk_cl_has_mma(const avk_cl_caps *caps);

/* Waits for the events and returns end(last) - start(first) in ms. A failed
 * command marks the device lost (DEVICE_LOST from then on). */
attnvk_status avk_cl_wait_timed(avk_bdev *dev, cl_event first, cl_event last, double *ms);
/* ms from first's start to last's end by the events' profiling (finished events); 0 on success */
cl_int avk_cl_events_ms(cl_event first, cl_event last, double *ms);
/* DEVICE_LOST with the first failure's reason once the device is lost, else OK. */
attnvk_status avk_cl_check_lost(const avk_bdev *dev);

/* cl_interop.c: attnvk_buffer_wrap, attnvk_device_native, attnvk_device_wait,
 * and the queue a run goes on (the caller's, checked: attnvk's context, in order). */
attnvk_status avk_cl_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out);
attnvk_status avk_cl_native(avk_bdev *dev, attnvk_native_handles *out);
attnvk_status avk_cl_wait(avk_bdev *dev);
attnvk_status avk_cl_run_queue(avk_bdev *dev, const avk_dispatch *a, cl_command_queue *queue);

#endif
