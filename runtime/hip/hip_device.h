/* HIP devices: the vtable entries that don't involve kernels. */
#ifndef ATTNVK_HIP_DEVICE_H
#define ATTNVK_HIP_DEVICE_H

#include "hip/hip_internal.h"

attnvk_status avk_hip_init(int *count);
attnvk_status avk_hip_describe(int ordinal, attnvk_device_info *info);
attnvk_status avk_hip_open(int ordinal, avk_bdev **out);
void avk_hip_close(avk_bdev *dev);
attnvk_status avk_hip_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out);
void avk_hip_release(avk_bdev *dev, avk_bbuf *buf);
attnvk_status avk_hip_upload(avk_bdev *dev, avk_bbuf *buf, size_t offset, const void *src, size_t bytes);
attnvk_status avk_hip_download(avk_bdev *dev, avk_bbuf *buf, size_t offset, void *dst, size_t bytes);
void avk_hip_shutdown(void);
/* Interop and async runs: attnvk_buffer_wrap (16-byte aligned addresses),
 * attnvk_device_native, attnvk_device_wait (attnvk's stream). */
attnvk_status avk_hip_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out);
attnvk_status avk_hip_native(avk_bdev *dev, attnvk_native_handles *out);
attnvk_status avk_hip_wait(avk_bdev *dev);

#endif
