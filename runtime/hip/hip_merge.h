/* Ring attention's merge on a HIP device (native/ring_merge.cu, hip_merge.c). */
#ifndef ATTNVK_HIP_MERGE_H
#define ATTNVK_HIP_MERGE_H

#include "hip/hip_modules.h"

/* backend.h's merge: launched on the device's own stream (the one async runs
 * use), returning without waiting. */
attnvk_status avk_hip_merge(avk_bdev *dev, const avk_merge_args *a);
/* Unloads the merge's module (at close). */
void avk_hip_merge_release(avk_hip_device *dev);
/* The source as hipRTC takes it where no object is embedded (the caller frees *text). */
attnvk_status avk_hip_merge_source(avk_hip_source *src, char **text);

/* The embedded code objects' name (one per gfx target) and the kernels they hold, by dtype (f32, f16, bf16). */
#define AVK_HIP_MERGE_OBJECT "ring_merge"
extern const char *const avk_hip_merge_kernels[3];

#endif
