/* The HIP peak measurements (backend slot measure_peak, core/peak.h). */
#ifndef ATTNVK_HIP_PEAK_H
#define ATTNVK_HIP_PEAK_H

#include "core/backend.h"
#include "hip/hip_modules.h"

/* native/peak.cu as hipRTC takes it: fills src, *text is malloc'd (the caller
 * frees it after compiling). The tests compile it with avk_hip_rtc_compile. */
attnvk_status avk_hip_peak_source_text(avk_hip_source *src, char **text);
attnvk_status avk_hip_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out);

#endif
