/* The version of the GPU kernel driver: what changes when a driver is updated,
 * and what results are matched by (attnvk compare --driver). The CUDA and HIP
 * API versions only say which API level the driver implements, so they are
 * kept apart, in attnvk_device_info.api_version. */
#ifndef ATTNVK_DRIVER_VERSION_H
#define ATTNVK_DRIVER_VERSION_H

#include <stddef.h>

/* Where to look; tests point these at fixtures. NULL skips a source. */
typedef struct avk_driver_sources {
    const char *nvml_library;        /* libnvidia-ml.so.1 */
    const char *nvidia_version_file; /* /proc/driver/nvidia/version */
    const char *amdgpu_version_file; /* /sys/module/amdgpu/version */
} avk_driver_sources;

extern const avk_driver_sources avk_driver_sources_system;

/* "580.159.04": NVML's nvmlSystemGetDriverVersion (loaded at run time), else
 * the NVRM line of the /proc file. 1 when found; 0 with out = "". */
int avk_nvidia_driver_version(const avk_driver_sources *src, char *out, size_t n);
/* The version in the text of /proc/driver/nvidia/version; 1 when found. */
int avk_nvidia_parse_proc_version(const char *text, char *out, size_t n);

/* The amdgpu module's version (out-of-tree DKMS builds have one), else the
 * kernel release as "linux 6.1.0-27-amd64": the in-tree amdgpu is the kernel's. */
void avk_amdgpu_driver_version(const avk_driver_sources *src, char *out, size_t n);
/* The version in the text of /sys/module/amdgpu/version; 1 when found. */
int avk_amdgpu_parse_module_version(const char *text, char *out, size_t n);

#endif
