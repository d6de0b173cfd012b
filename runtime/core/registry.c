/* One line per API: adding an API is a folder plus a line here. */
#include "core/registry.h"

extern const attnvk_backend avk_backend_cpu;
#ifdef ATTNVK_HAVE_VULKAN
extern const attnvk_backend avk_backend_vulkan;
#endif
#ifdef ATTNVK_HAVE_OPENCL
extern const attnvk_backend avk_backend_opencl;
#endif
#ifdef ATTNVK_HAVE_CUDA
extern const attnvk_backend avk_backend_cuda;
#endif
#ifdef ATTNVK_HAVE_HIP
extern const attnvk_backend avk_backend_hip;
#endif

const attnvk_backend *avk_backend_for(attnvk_api api, const char **why_missing)
{
    *why_missing = NULL;
    switch (api) {
    case ATTNVK_API_CPU: return &avk_backend_cpu;
#ifdef ATTNVK_HAVE_VULKAN
    case ATTNVK_API_VULKAN: return &avk_backend_vulkan;
#else
    case ATTNVK_API_VULKAN: *why_missing = "built without Vulkan (ATTNVK_VULKAN=OFF or volk/glslang not found)"; return NULL;
#endif
#ifdef ATTNVK_HAVE_OPENCL
    case ATTNVK_API_OPENCL: return &avk_backend_opencl;
#else
    case ATTNVK_API_OPENCL: *why_missing = "built without OpenCL (ATTNVK_OPENCL=OFF or CL headers not found)"; return NULL;
#endif
#ifdef ATTNVK_HAVE_CUDA
    case ATTNVK_API_CUDA: return &avk_backend_cuda;
#else
    case ATTNVK_API_CUDA: *why_missing = "built without CUDA (ATTNVK_CUDA=OFF or CUDA toolkit not found)"; return NULL;
#endif
#ifdef ATTNVK_HAVE_HIP
    case ATTNVK_API_HIP: return &avk_backend_hip;
#else
    case ATTNVK_API_HIP: *why_missing = "built without HIP (ATTNVK_HIP=OFF or hipcc not found)"; return NULL;
#endif
    case ATTNVK_API_COUNT: break;
    }
    *why_missing = "unknown API";
    return NULL;
}

int attnvk_api_compiled(attnvk_api api)
{
    const char *why;
    return avk_backend_for(api, &why) != NULL;
}

const char *const *attnvk_api_variants(attnvk_api api)
{
    static const char *const none[] = {NULL};
    const char *why;
    const attnvk_backend *b = avk_backend_for(api, &why);
    return b && b->variants ? b->variants : none;
}
