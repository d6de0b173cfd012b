/* The Hopper forward's per-CTA timeline (native/sm90_timeline.h), written by the host
 * after a launch where ATTNVK_CUDA_TIMELINE names a file (cuda_timeline.c). */
#ifndef ATTNVK_CUDA_TIMELINE_H
#define ATTNVK_CUDA_TIMELINE_H

#include "cuda/cuda_internal.h"

/* ATTNVK_CUDA_TIMELINE's path, or NULL when unset */
const char *avk_cuda_timeline_path(void);
/* Waits for the stream and writes the records of fwd's launch over grid (items: the blocks a
 * persistent kernel's CTAs take, or the grid's count) to the path; INVALID_ARGUMENT when fwd
 * was not built with AVK_TIMELINE. */
attnvk_status avk_cuda_timeline_dump(avk_cuda_device *dev, CUstream stream, CUfunction fwd, const unsigned grid[3],
                                     unsigned items);

#endif
