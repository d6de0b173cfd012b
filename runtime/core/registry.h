#ifndef ATTNVK_REGISTRY_H
#define ATTNVK_REGISTRY_H

#include "core/backend.h"

/* The backend compiled in for an API, or NULL with why it is missing. */
const attnvk_backend *avk_backend_for(attnvk_api api, const char **why_missing);

#endif
