#include "cuda/cuda_loader.h"
#include "core/dynlib.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

/* Two-level stringification: the symbol after cuda.h's versioning macros. */
#define AVK_STR2(x) #x
#define AVK_STR(x) AVK_STR2(x)
#define AVK_CUDA_SYMBOL(fn) {AVK_STR(fn), (void **)&table.fn},

static avk_cuda_driver driver_table;
static avk_dynlib *driver_lib;
static int driver_tried;
static char driver_why[512];

static avk_nvrtc nvrtc_table;
static avk_dynlib *nvrtc_lib;
static int nvrtc_tried;
static char nvrtc_why[512];

static attnvk_status bind_driver(avk_dynlib *lib)
{
    avk_cuda_driver table;
    memset(&table, 0, sizeof table);
    const avk_symbol symbols[] = {AVK_CUDA_DRIVER_FUNCTIONS(AVK_CUDA_SYMBOL)};
    attnvk_status s = avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols));
    if (s == ATTNVK_OK) {
        snprintf(table.library, sizeof table.library, "%s", avk_dynlib_name(lib));
        driver_table = table;
    }
    return s;
}

static attnvk_status bind_nvrtc(avk_dynlib *lib)
{
    avk_nvrtc table;
    memset(&table, 0, sizeof table);
    const avk_symbol symbols[] = {AVK_NVRTC_FUNCTIONS(AVK_CUDA_SYMBOL)};
    attnvk_status s = avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols));
    if (s == ATTNVK_OK) {
        snprintf(table.library, sizeof table.library, "%s", avk_dynlib_name(lib));
        if (table.nvrtcVersion(&table.major, &table.minor) != NVRTC_SUCCESS) table.major = table.minor = 0;
        nvrtc_table = table;
    }
    return s;
}

const avk_cuda_driver *avk_cuda_driver_load(void)
{
    if (driver_lib) return &driver_table;
    if (driver_tried) {
        avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", driver_why);
        return NULL;
    }
    driver_tried = 1;
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    avk_dynlib *lib = avk_dynlib_open(names);
    if (lib && bind_driver(lib) != ATTNVK_OK) {
        avk_dynlib_close(lib);
        lib = NULL;
    }
    if (!lib) {
        snprintf(driver_why, sizeof driver_why, "%s", attnvk_last_error());
        return NULL;
    }
    driver_lib = lib;
    return &driver_table;
}

const avk_nvrtc *avk_nvrtc_load(void)
{
    if (nvrtc_lib) return &nvrtc_table;
    if (nvrtc_tried) {
        avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", nvrtc_why);
        return NULL;
    }
    nvrtc_tried = 1;
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                        "/usr/local/cuda/lib64/libnvrtc.so", NULL};
    avk_dynlib *lib = avk_dynlib_open(names);
    if (lib && bind_nvrtc(lib) != ATTNVK_OK) {
        avk_dynlib_close(lib);
        lib = NULL;
    }
    if (!lib) {
        snprintf(nvrtc_why, sizeof nvrtc_why, "%s", attnvk_last_error());
        return NULL;
    }
    nvrtc_lib = lib;
    return &nvrtc_table;
}

const char *avk_cuda_driver_reason(void) { return driver_why; }
const char *avk_nvrtc_reason(void) { return nvrtc_why; }

void avk_cuda_loader_unload(void)
{
    avk_dynlib_close(driver_lib);
    avk_dynlib_close(nvrtc_lib);
    driver_lib = nvrtc_lib = NULL;
    driver_tried = nvrtc_tried = 0;
    memset(&driver_table, 0, sizeof driver_table);
    memset(&nvrtc_table, 0, sizeof nvrtc_table);
}

const char *avk_cuda_result_text(const avk_cuda_driver *cu, CUresult r, char *buf, size_t n)
{
    const char *name = NULL, *text = NULL;
    if (cu && cu->cuGetErrorName) cu->cuGetErrorName(r, &name);
    if (cu && cu->cuGetErrorString) cu->cuGetErrorString(r, &text);
    if (name && text) snprintf(buf, n, "%s: %s", name, text);
    else snprintf(buf, n, "CUresult %d", (int)r);
    return buf;
}
