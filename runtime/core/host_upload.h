/* The host paths' upload (host_run.c): n floats packed to dt in a new buffer of dev. */
#ifndef ATTNVK_CORE_HOST_UPLOAD_H
#define ATTNVK_CORE_HOST_UPLOAD_H

#include "attnvk/attnvk.h"

#include <stddef.h>

attnvk_status avk_upload_values(attnvk_device *dev, attnvk_dtype dt, const float *src, size_t n, attnvk_buffer **out);

#endif
