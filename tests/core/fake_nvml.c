/* A stand-in for libnvidia-ml.so.1 with the three calls attnvk makes, so the
 * NVML path of core/driver_version.c is tested without a GPU. Built twice:
 * FAKE_NVML_INIT_FAILS makes nvmlInit_v2 fail like a driver-less machine. */
#include <stdio.h>

int nvmlInit_v2(void)
{
#ifdef FAKE_NVML_INIT_FAILS
    return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
#else
    return 0;
#endif
}

int nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    snprintf(version, length, "%s", "999.88.77");
    return 0;
}

int nvmlShutdown(void) { return 0; }
