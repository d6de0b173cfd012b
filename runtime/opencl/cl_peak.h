/* The OpenCL peak measurements (backend slot measure_peak, core/peak.h). */
#ifndef ATTNVK_CL_PEAK_H
#define ATTNVK_CL_PEAK_H

#include "core/backend.h"

attnvk_status avk_cl_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out);

#endif
