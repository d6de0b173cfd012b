#include "hip/hip_modules.h"
#include "core/cache.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { AVK_EM_AMDGPU = 224 };

int avk_hip_is_amdgpu_elf(const unsigned char *d, size_t n)
{
    if (n < 64 || d[0] != 0x7f || d[1] != 'E' || d[2] != 'L' || d[3] != 'F') return 0;
    if (d[4] != 2 /* ELFCLASS64 */ || d[5] != 1 /* little endian */) return 0;
    unsigned machine = (unsigned)d[18] | ((unsigned)d[19] << 8);
    return machine == AVK_EM_AMDGPU;
}

const avk_hip_code_object *avk_hip_find_code_object(const char *arch, const char *name)
{
    for (int i = 0; i < avk_hip_code_object_count; ++i) {
        const avk_hip_code_object *c = &avk_hip_code_objects[i];
        if (strcmp(c->arch, arch) == 0 && strcmp(c->name, name) == 0) return c;
    }
    return NULL;
}

/* Splits "a b c" into argv-style pointers into buf; returns the count. */
static int split_options(char *buf, const char **argv, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && n < max; tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    return n;
}

attnvk_status avk_hip_rtc_compile(const char *arch, const avk_hip_source *src, void **code, size_t *code_size)
{
    *code = NULL;
    *code_size = 0;
    const avk_hiprtc *rtc = avk_hiprtc_load();
    if (!rtc)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "no code object embedded for %s holds %s as configured, and hipRTC is unavailable (%s)",
                        arch, src->name, attnvk_last_error());
    hiprtcProgram prog;
    hiprtcResult r = rtc->hiprtcCreateProgram(&prog, src->text, src->name, src->header_count,
                                                (const char **)src->headers, (const char **)src->header_names);
    if (r != HIPRTC_SUCCESS)
        return avk_fail(ATTNVK_ERROR_COMPILE, "hiprtcCreateProgram: %s", rtc->hiprtcGetErrorString(r));
    char opts[1024], arch_opt[96];
    snprintf(opts, sizeof opts, "%s", src->defines ? src->defines : "");
    const char *argv[40];
    int argc = split_options(opts, argv, 38);
    snprintf(arch_opt, sizeof arch_opt, "--offload-arch=%s", arch);
    argv[argc++] = arch_opt;
    argv[argc++] = "-O3";
    r = rtc->hiprtcCompileProgram(prog, argc, argv);
    attnvk_status s = ATTNVK_OK;
    if (r != HIPRTC_SUCCESS) {
        size_t log_size = 0;
        rtc->hiprtcGetProgramLogSize(prog, &log_size);
        char *log = calloc(1, log_size + 1);
        if (log && log_size) rtc->hiprtcGetProgramLog(prog, log);
        s = avk_fail(ATTNVK_ERROR_COMPILE, "hipRTC failed on %s for %s: %s", src->name, arch,
                     log && *log ? log : rtc->hiprtcGetErrorString(r));
        free(log);
    } else if (rtc->hiprtcGetCodeSize(prog, code_size) != HIPRTC_SUCCESS || !(*code = malloc(*code_size)) ||
               rtc->hiprtcGetCode(prog, *code) != HIPRTC_SUCCESS) {
        free(*code);
        *code = NULL;
        s = avk_fail(ATTNVK_ERROR_COMPILE, "hipRTC produced no code for %s", src->name);
    }
    rtc->hiprtcDestroyProgram(&prog);
    return s;
}

static uint64_t rtc_cache_key(const avk_hip_device *dev, const avk_hip_source *src)
{
    uint64_t h = avk_hash_str(dev->info.architecture, 0x68697072u);
    h = avk_hash_str(dev->info.api_version, h);
    h = avk_hash_str(src->text, h);
    for (int i = 0; i < src->header_count; ++i) h = avk_hash_str(src->headers[i], h);
    return avk_hash_str(src->defines ? src->defines : "", h);
}

attnvk_status avk_hip_load_module(avk_hip_device *dev, const char *name, const avk_hip_source *src,
                                  hipModule_t *out, char *origin, size_t origin_size)
{
    const avk_hip_code_object *co = name ? avk_hip_find_code_object(dev->info.architecture, name) : NULL;
    if (co) {
        snprintf(origin, origin_size, "embedded %s/%s", co->arch, co->name);
        return avk_hip_check(dev, dev->hip->hipModuleLoadData(out, co->data), "hipModuleLoadData");
    }
    if (!src)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "no '%s' code object for %s is embedded", name ? name : "?",
                        dev->info.architecture);
    char path[1024];
    uint64_t key = rtc_cache_key(dev, src);
    int cached = avk_cache_path("hip", key, "co", path, sizeof path);
    size_t size = 0;
    void *code = cached ? avk_cache_load(path, key, &size) : NULL;
    snprintf(origin, origin_size, "%s", code ? "cache (hipRTC)" : "hipRTC");
    if (!code) {
        attnvk_status s = avk_hip_rtc_compile(dev->info.architecture, src, &code, &size);
        if (s != ATTNVK_OK) return s;
        if (cached) avk_cache_store(path, key, code, size);
    }
    attnvk_status s = avk_hip_check(dev, dev->hip->hipModuleLoadData(out, code), "hipModuleLoadData");
    free(code);
    return s;
}

attnvk_status avk_hip_get_function(avk_hip_device *dev, hipModule_t mod, const char *fn, hipFunction_t *out)
{
    char what[160];
    snprintf(what, sizeof what, "hipModuleGetFunction(%s)", fn);
    return avk_hip_check(dev, dev->hip->hipModuleGetFunction(out, mod, fn), what);
}
