/* Run-time loading of vendor libraries: a missing library is a reason, not a crash. */
#ifndef ATTNVK_DYNLIB_H
#define ATTNVK_DYNLIB_H

#include "attnvk/attnvk.h"

typedef struct avk_dynlib avk_dynlib;

/* Tries each NULL-terminated candidate name; on failure returns NULL and
 * sets the last error to "cannot load <first name>: <dlerror>". */
avk_dynlib *avk_dynlib_open(const char *const *names);
void *avk_dynlib_sym(avk_dynlib *lib, const char *symbol);
const char *avk_dynlib_name(const avk_dynlib *lib);
void avk_dynlib_close(avk_dynlib *lib);

/* Resolves a table of symbols; on the first missing one sets the last error
 * and returns ATTNVK_ERROR_UNAVAILABLE. */
typedef struct avk_symbol { const char *name; void **slot; } avk_symbol;
attnvk_status avk_dynlib_bind(avk_dynlib *lib, const avk_symbol *symbols, int count);

#endif
