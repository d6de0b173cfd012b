/* The CUDA peak measurements (backend slot measure_peak, core/peak.h). */
#ifndef ATTNVK_CUDA_PEAK_H
#define ATTNVK_CUDA_PEAK_H

#include "core/backend.h"

#include <stddef.h>

/* NVRTC-compiles native/peak.cu for arch ("sm_80", "sm_90a"): a malloc'd cubin
 * (no GPU needed; the tests check it compiles). */
attnvk_status avk_cuda_peak_compile(const char *arch, void **cubin, size_t *size);
attnvk_status avk_cuda_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out);

#endif
