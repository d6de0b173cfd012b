/* The OpenCL read-bandwidth measurement (backend slot read_bandwidth). */
#ifndef ATTNVK_CL_BANDWIDTH_H
#define ATTNVK_CL_BANDWIDTH_H

#include "core/backend.h"

attnvk_status avk_cl_read_bandwidth(avk_bdev *dev, double *gbps);

#endif
