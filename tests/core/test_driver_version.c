/* The kernel-driver version recorded for CUDA and HIP devices: parsing of the
 * /proc and /sys texts, NVML through a fake library, and every fallback.
 * usage: test_driver_version FAKE_NVML.so FAKE_NVML_INIT_FAILS.so WORKDIR */
#include "core/driver_version.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static const char *proprietary =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n";
static const char *open_module =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
    "(dvs-builder@U16-I3-B15-4-3)  Thu Jul 10 19:42:59 UTC 2025\nGCC version:  gcc version 13.3.0\n";
static const char *arm_two_part = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  390.157  Release Build\n";

static int parses(const char *text, const char *want)
{
    char out[64] = "x";
    int ok = avk_nvidia_parse_proc_version(text, out, sizeof out);
    EXPECT(want ? ok && strcmp(out, want) == 0 : !ok && !out[0], "'%s' -> '%s' (want %s)", text, out, want ? want : "none");
    return want ? ok && strcmp(out, want) == 0 : !ok && !out[0];
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FAKE_NVML.so FAKE_NVML_INIT_FAILS.so WORKDIR\n", argv[0]);
        return 2;
    }
    const char *nvml_ok = argv[1], *nvml_fails = argv[2], *work = argv[3];
    int passed = 0;
    passed += parses(proprietary, "535.104.05");
    passed += parses(open_module, "580.159.04");
    passed += parses(arm_two_part, "390.157");
    passed += parses("GCC version:  gcc version 12.2.0\n", NULL);                  /* no NVRM line */
    passed += parses("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n", NULL);  /* no number */
    passed += parses("", NULL);

    char proc[512], missing[512], amd[512];
    snprintf(proc, sizeof proc, "%s/nvidia-version", work);
    snprintf(missing, sizeof missing, "%s/no-such-file", work);
    snprintf(amd, sizeof amd, "%s/amdgpu-version", work);
    write_file(proc, open_module);
    char out[64];

    /* NVML answers first; the CUDA API level (13.0) never appears */
    avk_driver_sources src = {nvml_ok, proc, NULL};
    int ok = avk_nvidia_driver_version(&src, out, sizeof out) && strcmp(out, "999.88.77") == 0;
    EXPECT(ok, "NVML first: '%s'", out);
    passed += ok;
    /* no NVML library: /proc */
    src.nvml_library = "/nonexistent/libnvidia-ml.so.1";
    ok = avk_nvidia_driver_version(&src, out, sizeof out) && strcmp(out, "580.159.04") == 0;
    EXPECT(ok, "NVML absent -> /proc: '%s'", out);
    passed += ok;
    /* NVML present but its init fails (no driver loaded): /proc */
    src.nvml_library = nvml_fails;
    ok = avk_nvidia_driver_version(&src, out, sizeof out) && strcmp(out, "580.159.04") == 0;
    EXPECT(ok, "NVML init fails -> /proc: '%s'", out);
    passed += ok;
    /* neither: not found, empty */
    src.nvidia_version_file = missing;
    ok = !avk_nvidia_driver_version(&src, out, sizeof out) && out[0] == '\0';
    EXPECT(ok, "no source -> not found: '%s'", out);
    passed += ok;

    /* amdgpu: the DKMS module's version, else the kernel release */
    ok = avk_amdgpu_parse_module_version("6.8.5\n", out, sizeof out) && strcmp(out, "6.8.5") == 0;
    EXPECT(ok, "amdgpu '6.8.5' -> '%s'", out);
    passed += ok;
    ok = !avk_amdgpu_parse_module_version("\n", out, sizeof out) && !avk_amdgpu_parse_module_version("a b\n", out, sizeof out);
    EXPECT(ok, "amdgpu: empty or several words are not a version");
    passed += ok;
    write_file(amd, "6.10.5\n");
    avk_driver_sources amd_src = {NULL, NULL, amd};
    avk_amdgpu_driver_version(&amd_src, out, sizeof out);
    ok = strcmp(out, "6.10.5") == 0;
    EXPECT(ok, "amdgpu file -> '%s'", out);
    passed += ok;
    amd_src.amdgpu_version_file = missing;
    avk_amdgpu_driver_version(&amd_src, out, sizeof out);
    ok = strncmp(out, "linux ", 6) == 0 && strlen(out) > 6;
    EXPECT(ok, "no amdgpu version file -> the kernel release: '%s'", out);
    passed += ok;
    return avk_test_finish(passed, 0);
}
