/* NULL-terminated name lists (implementations, variants), shared by the core
 * and the command so that both check and print them the same way. */
#ifndef ATTNVK_NAMES_H
#define ATTNVK_NAMES_H

#include <stddef.h>

int avk_name_in(const char *const *names, const char *name);
/* "a, b, c" into out (truncated to n). */
void avk_join_names(const char *const *names, char *out, size_t n);

#endif
