#include "attnvk/attnvk.h"
#include "core/names.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const api_names[ATTNVK_API_COUNT] = {"cpu", "vulkan", "opencl", "cuda", "hip"};

const char *attnvk_api_name(attnvk_api api)
{
    return (unsigned)api < ATTNVK_API_COUNT ? api_names[api] : "unknown";
}

int attnvk_api_from_name(const char *name, attnvk_api *out)
{
    for (int i = 0; i < ATTNVK_API_COUNT; ++i)
        if (name && strcasecmp(name, api_names[i]) == 0) {
            *out = (attnvk_api)i;
            return 1;
        }
    return 0;
}

const char *attnvk_dtype_name(attnvk_dtype d)
{
    switch (d) {
    case ATTNVK_F32: return "f32";
    case ATTNVK_F16: return "f16";
    case ATTNVK_BF16: return "bf16";
    }
    return "unknown";
}

int attnvk_dtype_from_name(const char *name, attnvk_dtype *out)
{
    static const attnvk_dtype all[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    for (int i = 0; i < 3; ++i)
        if (name && strcasecmp(name, attnvk_dtype_name(all[i])) == 0) {
            *out = all[i];
            return 1;
        }
    return 0;
}

const char *attnvk_device_type_name(attnvk_device_type t)
{
    switch (t) {
    case ATTNVK_DEVICE_DISCRETE: return "discrete";
    case ATTNVK_DEVICE_INTEGRATED: return "integrated";
    case ATTNVK_DEVICE_CPU: return "cpu";
    case ATTNVK_DEVICE_OTHER: break;
    }
    return "other";
}

/* A backend that adds an implementation adds its name here, so that --impl
 * can tell a typo from a library this machine lacks. */
const char *const *attnvk_implementation_names(void)
{
    static const char *const names[] = {"attnvk", "cudnn", "cublas", "clblast", "rocblas", "openblas", NULL};
    return names;
}

int avk_name_in(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; ++i)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

void avk_join_names(const char *const *names, char *out, size_t n)
{
    size_t len = 0;
    if (n) out[0] = '\0';
    for (int i = 0; names[i] && len < n; ++i)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", names[i]);
}
