#include "hip/hip_loader.h"
#include "core/dynlib.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

#define AVK_HIP_SYMBOL(fn) {#fn, (void **)&table.fn},

static const char *const hip_names[] = {"libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so", NULL};
static const char *const hiprtc_names[] = {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so", NULL};

static avk_hip hip_table;
static avk_dynlib *hip_lib;
static int hip_tried;
static char hip_why[512];

static avk_hiprtc rtc_table;
static avk_dynlib *rtc_lib; /* NULL when hipRTC lives in libamdhip64 */
static int rtc_tried, rtc_ok;
static char rtc_why[512];

static attnvk_status bind_hip(avk_dynlib *lib)
{
    avk_hip table;
    memset(&table, 0, sizeof table);
    const avk_symbol symbols[] = {AVK_HIP_REQUIRED_FUNCTIONS(AVK_HIP_SYMBOL)};
    attnvk_status s = avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols));
    if (s != ATTNVK_OK) return s;
    void *props = avk_dynlib_sym(lib, "hipGetDevicePropertiesR0000");
    if (!props) props = avk_dynlib_sym(lib, "hipGetDeviceProperties");
    if (!props)
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s lacks symbol hipGetDeviceProperties", avk_dynlib_name(lib));
    *(void **)&table.getDeviceProperties = props;
    *(void **)&table.hipDeviceGetUuid = avk_dynlib_sym(lib, "hipDeviceGetUuid");
    snprintf(table.library, sizeof table.library, "%s", avk_dynlib_name(lib));
    hip_table = table;
    return ATTNVK_OK;
}

const avk_hip *avk_hip_load(void)
{
    if (hip_lib) return &hip_table;
    if (hip_tried) {
        avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", hip_why);
        return NULL;
    }
    hip_tried = 1;
    avk_dynlib *lib = avk_dynlib_open(hip_names);
    if (lib && bind_hip(lib) == ATTNVK_OK) {
        hip_lib = lib;
        return &hip_table;
    }
    snprintf(hip_why, sizeof hip_why, "%s", attnvk_last_error());
    avk_dynlib_close(lib);
    return NULL;
}

static attnvk_status bind_rtc(avk_dynlib *lib)
{
    avk_hiprtc table;
    memset(&table, 0, sizeof table);
    const avk_symbol symbols[] = {AVK_HIPRTC_FUNCTIONS(AVK_HIP_SYMBOL)};
    attnvk_status s = avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols));
    if (s == ATTNVK_OK) {
        snprintf(table.library, sizeof table.library, "%s", avk_dynlib_name(lib));
        rtc_table = table;
    }
    return s;
}

const avk_hiprtc *avk_hiprtc_load(void)
{
    if (rtc_ok) return &rtc_table;
    if (rtc_tried) {
        avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", rtc_why);
        return NULL;
    }
    rtc_tried = 1;
    if (!avk_hip_load()) {
        snprintf(rtc_why, sizeof rtc_why, "%s", attnvk_last_error());
        return NULL;
    }
    if (bind_rtc(hip_lib) == ATTNVK_OK) { /* ROCm 5: hipRTC inside libamdhip64 */
        rtc_ok = 1;
        return &rtc_table;
    }
    avk_dynlib *lib = avk_dynlib_open(hiprtc_names);
    if (lib && bind_rtc(lib) == ATTNVK_OK) {
        rtc_lib = lib;
        rtc_ok = 1;
        return &rtc_table;
    }
    snprintf(rtc_why, sizeof rtc_why, "%s", attnvk_last_error());
    avk_dynlib_close(lib);
    return NULL;
}

void avk_hip_loader_unload(void)
{
    avk_dynlib_close(rtc_lib);
    avk_dynlib_close(hip_lib);
    rtc_lib = hip_lib = NULL;
    rtc_ok = rtc_tried = hip_tried = 0;
}

const char *avk_hip_error_text(const avk_hip *hip, hipError_t e, char *buf, size_t n)
{
    const char *name = hip ? hip->hipGetErrorName(e) : NULL;
    const char *text = hip ? hip->hipGetErrorString(e) : NULL;
    if (!name && !text)
        snprintf(buf, n, "HIP error %d", (int)e);
    else if (!text || (name && strcmp(name, text) == 0)) /* HIP 5 returns the name as the text */
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "%s: %s", name ? name : "hipError", text);
    return buf;
}
