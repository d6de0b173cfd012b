/* Thread-local last error: one line, set where the failure is understood. */
#ifndef ATTNVK_ERROR_H
#define ATTNVK_ERROR_H

#include "attnvk/attnvk.h"

#if defined(__GNUC__)
#define AVK_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AVK_PRINTF(a, b)
#endif

/* Records the message and returns status, so callers can `return avk_fail(...)`. */
attnvk_status avk_fail(attnvk_status status, const char *fmt, ...) AVK_PRINTF(2, 3);
void avk_clear_error(void);

#endif
