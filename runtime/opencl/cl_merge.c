/* Ring attention's merge on an OpenCL device (opencl/ring_merge.cl): one
 * program per device holding a kernel per dtype, built on first use (its
 * binary cached on disk like every program), enqueued on the device's own
 * in-order queue after the runs before it and flushed, never waited for:
 * later runs, transfers and clFinish (backend.wait) come after it. */
#include "opencl/cl_merge.h"
#include "opencl/cl_program.h"

#include "core/error.h"

#include <stdio.h>

/* A work-group: MERGE_ROWS_PER_GROUP rows of MERGE_ROW_LANES work-items each. */
enum { MERGE_ROW_LANES = 32, MERGE_ROWS_PER_GROUP = 4 };

static int dtype_slot(attnvk_dtype dt) { return dt == ATTNVK_F16 ? 1 : dt == ATTNVK_BF16 ? 2 : 0; }

static attnvk_status merge_kernel(avk_bdev *dev, attnvk_dtype dt, cl_kernel *out)
{
    const int slot = dtype_slot(dt);
    if (!dev->merge[slot]) {
        static const char *const names[3] = {"avk_ring_merge_f32", "avk_ring_merge_f16", "avk_ring_merge_bf16"};
        char options[96];
        snprintf(options, sizeof options, "-DAVK_MERGE_LANES=%d -DAVK_MERGE_ROWS=%d", MERGE_ROW_LANES,
                 MERGE_ROWS_PER_GROUP);
        const avk_cl_source sources[] = {AVK_CL_SRC_RING_MERGE};
        cl_program prog;
        attnvk_status s = avk_cl_program(dev, sources, 1, options, &prog);
        if (s == ATTNVK_OK)
            s = avk_cl_kernel(dev, prog, names[slot], (size_t)MERGE_ROW_LANES * MERGE_ROWS_PER_GROUP, &dev->merge[slot]);
        if (s != ATTNVK_OK) return s;
    }
    *out = dev->merge[slot];
    return ATTNVK_OK;
}

void avk_cl_merge_release(avk_bdev *dev)
{
    for (int i = 0; i < 3; ++i)
        if (dev->merge[i]) avk_cl.ReleaseKernel(dev->merge[i]);
}

#define SET_ARG(kernel, idx, value)                                                          \
    do {                                                                                     \
        cl_int e_ = avk_cl.SetKernelArg((kernel), (cl_uint)(idx), sizeof(value), &(value)); \
        if (e_ != CL_SUCCESS) return avk_cl_fail(e_, "clSetKernelArg(ring merge)");          \
    } while (0)

attnvk_status avk_cl_merge(avk_bdev *dev, const avk_merge_args *a)
{
    if (dev->lost) return avk_cl_check_lost(dev);
    const unsigned long long rows = (unsigned long long)a->batch * a->heads * a->rows_per_head;
    if (rows == 0) return ATTNVK_OK;
    if (rows > UINT32_MAX)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "opencl: a merge of %llu rows exceeds 32-bit row indexing", rows);
    cl_kernel k;
    attnvk_status s = merge_kernel(dev, a->dtype, &k);
    if (s != ATTNVK_OK) return s;
    /* NULL: a NULL global pointer in the kernel */
    const cl_mem o_out = a->o_out ? a->o_out->mem : NULL;
    const cl_uint n_rows = (cl_uint)rows, dv = (cl_uint)a->dv, first = a->first != 0;
    SET_ARG(k, 0, a->o_part->mem);
    SET_ARG(k, 1, a->lse_part->mem);
    SET_ARG(k, 2, a->o_acc->mem);
    SET_ARG(k, 3, a->lse_acc->mem);
    SET_ARG(k, 4, o_out);
    SET_ARG(k, 5, n_rows);
    SET_ARG(k, 6, dv);
    SET_ARG(k, 7, first);
    const size_t local = (size_t)MERGE_ROW_LANES * MERGE_ROWS_PER_GROUP;
    const size_t global = (size_t)((rows + MERGE_ROWS_PER_GROUP - 1) / MERGE_ROWS_PER_GROUP) * local;
    cl_int err = avk_cl.EnqueueNDRangeKernel(dev->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    if (err != CL_SUCCESS) return avk_cl_fail(err, "enqueue ring merge");
    err = avk_cl.Flush(dev->queue); /* started, not waited for (like an async run) */
    return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clFlush (ring merge)");
}
