/* Ring attention's merge on an OpenCL device (opencl/ring_merge.cl). */
#ifndef ATTNVK_CL_MERGE_H
#define ATTNVK_CL_MERGE_H

#include "opencl/cl_device.h"

/* backend.h's merge: enqueued on the device's own queue and flushed, not waited for. */
attnvk_status avk_cl_merge(avk_bdev *dev, const avk_merge_args *a);
/* Releases the kernels a merge built (at close). */
void avk_cl_merge_release(avk_bdev *dev);

#endif
