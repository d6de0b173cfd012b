/* The device half of the CUDA backend vtable (cuda_device.c). */
#ifndef ATTNVK_CUDA_DEVICE_H
#define ATTNVK_CUDA_DEVICE_H

#include "cuda/cuda_internal.h"

attnvk_status avk_cuda_init(int *count);
attnvk_status avk_cuda_describe(int ordinal, attnvk_device_info *info);
attnvk_status avk_cuda_open(int ordinal, avk_bdev **out);
void avk_cuda_close(avk_bdev *dev);
attnvk_status avk_cuda_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out);
void avk_cuda_release(avk_bdev *dev, avk_bbuf *buf);
attnvk_status avk_cuda_upload(avk_bdev *dev, avk_bbuf *buf, size_t off, const void *src, size_t bytes);
attnvk_status avk_cuda_download(avk_bdev *dev, avk_bbuf *buf, size_t off, void *dst, size_t bytes);

/* Interop and async runs: attnvk_buffer_wrap (16-byte aligned addresses),
 * attnvk_device_native, attnvk_device_wait (attnvk's stream), and the check
 * that a caller's stream is in the device's primary context. */
attnvk_status avk_cuda_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out);
attnvk_status avk_cuda_native(avk_bdev *dev, attnvk_native_handles *out);
attnvk_status avk_cuda_wait(avk_bdev *dev);
attnvk_status avk_cuda_check_stream(avk_bdev *dev, void *stream);

/* Unloads the native kernel modules of dev (its context is current). */
void avk_cuda_modules_release(avk_cuda_device *dev);

/* What attnvk would run for D=128 f16 (f32 without fp16) on this device (cuda_tuning.c). */
void avk_cuda_default_variant(const attnvk_device_info *info, char *out, size_t n);

#endif
