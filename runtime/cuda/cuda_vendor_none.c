/* Stand-in while runtime/cuda/cuda_vendor.c (the baselines) does not exist:
 * no vendor implementations. CMake compiles exactly one of the two. */
#include "cuda/cuda_vendor.h"

int avk_cuda_vendor_implementations(avk_cuda_device *dev, attnvk_impl_info *out, int max)
{
    (void)dev;
    (void)out;
    (void)max;
    return 0;
}

attnvk_status avk_cuda_vendor_prepare(avk_cuda_device *dev, const attnvk_problem *p,
                                      const attnvk_kernel_options *o, void **vendor_kernel,
                                      attnvk_kernel_info *info)
{
    (void)dev;
    (void)p;
    (void)vendor_kernel;
    (void)info;
    return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the cuda API has no '%s' implementation in this build",
                    o->implementation ? o->implementation : "");
}

attnvk_status avk_cuda_vendor_enqueue(avk_cuda_device *dev, void *vendor_kernel, const avk_dispatch *a)
{
    (void)dev;
    (void)vendor_kernel;
    (void)a;
    return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "no vendor implementations in this build");
}

attnvk_status avk_cuda_vendor_backward(avk_cuda_device *dev, void *vendor_kernel, const avk_backward_dispatch *a)
{
    (void)dev;
    (void)vendor_kernel;
    (void)a;
    return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "no vendor implementations in this build");
}

void avk_cuda_vendor_release(avk_cuda_device *dev, void *vendor_kernel)
{
    (void)dev;
    (void)vendor_kernel;
}
