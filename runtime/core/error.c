#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[2048];

attnvk_status avk_fail(attnvk_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    /* One line: build logs and driver messages may carry newlines. */
    for (char *c = last_error; *c; ++c)
        if (*c == '\n' || *c == '\r') *c = ' ';
    return status;
}

void avk_clear_error(void) { last_error[0] = '\0'; }

const char *attnvk_last_error(void) { return last_error; }

const char *attnvk_status_name(attnvk_status s)
{
    switch (s) {
    case ATTNVK_OK: return "ok";
    case ATTNVK_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case ATTNVK_ERROR_UNSUPPORTED: return "unsupported";
    case ATTNVK_ERROR_UNAVAILABLE: return "unavailable";
    case ATTNVK_ERROR_OUT_OF_MEMORY: return "out of memory";
    case ATTNVK_ERROR_DEVICE_LOST: return "device lost";
    case ATTNVK_ERROR_COMPILE: return "compile error";
    case ATTNVK_ERROR_IO: return "i/o error";
    case ATTNVK_ERROR_BACKEND: return "backend error";
    }
    return "unknown status";
}
