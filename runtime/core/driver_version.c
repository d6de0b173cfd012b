#include "core/driver_version.h"
#include "core/dynlib.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

const avk_driver_sources avk_driver_sources_system = {
    .nvml_library = "libnvidia-ml.so.1",
    .nvidia_version_file = "/proc/driver/nvidia/version",
    .amdgpu_version_file = "/sys/module/amdgpu/version",
};

/* The first n-1 bytes of a small text file, NUL-terminated; 0 when unreadable. */
static int read_text(const char *path, char *out, size_t n)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return 0;
    size_t got = fread(out, 1, n - 1, f);
    fclose(f);
    out[got] = '\0';
    return got > 0;
}

/* digits and dots, starting with a digit, with at least one dot: 580.159.04 */
static int is_version(const char *s, size_t len)
{
    if (len == 0 || !isdigit((unsigned char)s[0])) return 0;
    int dots = 0;
    for (size_t i = 0; i < len; ++i) {
        if (s[i] == '.') ++dots;
        else if (!isdigit((unsigned char)s[i])) return 0;
    }
    return dots > 0 && s[len - 1] != '.';
}

static int copy_token(const char *s, size_t len, char *out, size_t n)
{
    if (len >= n) return 0;
    memcpy(out, s, len);
    out[len] = '\0';
    return 1;
}

int avk_nvidia_parse_proc_version(const char *text, char *out, size_t n)
{
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." or
     * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..." */
    if (n) out[0] = '\0';
    const char *line = strstr(text, "NVRM version:");
    if (!line) return 0;
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    for (const char *p = line + strlen("NVRM version:"); p < end;) {
        while (p < end && isspace((unsigned char)*p)) ++p;
        const char *tok = p;
        while (p < end && !isspace((unsigned char)*p)) ++p;
        if (is_version(tok, (size_t)(p - tok))) return copy_token(tok, (size_t)(p - tok), out, n);
    }
    return 0;
}

typedef int (*nvml_void_fn)(void);
typedef int (*nvml_version_fn)(char *version, unsigned int length);

/* NVML's own prototypes (nvml.h is not needed for three calls); 0 = NVML_SUCCESS. */
static int nvml_driver_version(const char *library, char *out, size_t n)
{
    const char *const names[] = {library, NULL};
    avk_dynlib *lib = library ? avk_dynlib_open(names) : NULL;
    if (!lib) return 0;
    nvml_void_fn init = (nvml_void_fn)avk_dynlib_sym(lib, "nvmlInit_v2");
    nvml_void_fn shutdown = (nvml_void_fn)avk_dynlib_sym(lib, "nvmlShutdown");
    nvml_version_fn version = (nvml_version_fn)avk_dynlib_sym(lib, "nvmlSystemGetDriverVersion");
    char buf[96] = ""; /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80 */
    int ok = 0;
    if (init && shutdown && version && init() == 0) {
        ok = version(buf, sizeof buf) == 0 && is_version(buf, strnlen(buf, sizeof buf - 1));
        shutdown();
    }
    avk_dynlib_close(lib);
    return ok && copy_token(buf, strlen(buf), out, n);
}

int avk_nvidia_driver_version(const avk_driver_sources *src, char *out, size_t n)
{
    char text[1024];
    if (nvml_driver_version(src->nvml_library, out, n)) return 1;
    if (read_text(src->nvidia_version_file, text, sizeof text) && avk_nvidia_parse_proc_version(text, out, n))
        return 1;
    if (n) out[0] = '\0';
    return 0;
}

int avk_amdgpu_parse_module_version(const char *text, char *out, size_t n)
{
    /* one line, e.g. "6.8.5\n" */
    if (n) out[0] = '\0';
    while (isspace((unsigned char)*text)) ++text;
    size_t len = 0;
    while (text[len] && !isspace((unsigned char)text[len])) ++len;
    for (const char *p = text + len; *p; ++p)
        if (!isspace((unsigned char)*p)) return 0; /* more than one word: not a version file */
    return len > 0 && isdigit((unsigned char)text[0]) && copy_token(text, len, out, n);
}

void avk_amdgpu_driver_version(const avk_driver_sources *src, char *out, size_t n)
{
    char text[256];
    if (read_text(src->amdgpu_version_file, text, sizeof text) && avk_amdgpu_parse_module_version(text, out, n))
        return;
    struct utsname u;
    if (uname(&u) == 0) snprintf(out, n, "linux %s", u.release);
    else snprintf(out, n, "unknown");
}
