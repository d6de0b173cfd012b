/* Shared pieces of the `attnvk` command: errors, option parsing, device choice. */
#ifndef ATTNVK_CLI_H
#define ATTNVK_CLI_H

#include "attnvk/attnvk.h"

#include <stdint.h>
#include <stdio.h>

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;
} cli_command;

/* "attnvk: <message>" on stderr, one line; returns code. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict number parsing: the whole string, within [lo, hi]. 1 on success.
 * Integers take a k/m suffix (x1024, x1024^2); a product past int64 fails. */
int cli_parse_int(const char *s, long lo, long hi, long *out);
/* Digits only, 0..2^64-1 (seeds). */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_double(const char *s, double lo, double hi, double *out);
/* "BRxBC" -> two ints. */
int cli_parse_tile(const char *s, int *br, int *bc);
/* "LEFT,RIGHT", each an integer in -1..2^30 (-1: unbounded): 1 on success. */
int cli_parse_window(const char *s, int *left, int *right);
/* Comma-separated positive ints; returns the count (0 on error). */
int cli_parse_int_list(const char *s, long lo, long hi, long *out, int max);
/* A non-empty comma list without empty items (",a", "a,,b", "a," are not). */
int cli_list_well_formed(const char *s);

/* Name checks that need no device; each returns 0 or prints one line naming
 * the bad name with every valid one, and returns EXIT_USAGE. cmd prefixes it. */
int cli_check_impls(const char *cmd, const char *list);
/* The variant must be one that some API of api_mask (built in) knows. */
int cli_check_variant(const char *cmd, const char *variant, unsigned api_mask);

/* attnvk_context_create; 0, or the exit code after printing why (2 for a bad
 * ATTNVK_VISIBLE_DEVICES, 1 otherwise). */
int cli_context_create(attnvk_context **out);
/* Every item of a --device spec must match a visible device (NULL: no spec). */
int cli_check_device_spec(const attnvk_context *ctx, const char *cmd, const char *spec);

/* Picks one device for --api/--device (either may be NULL) and opens it.
 * On failure prints the reason and returns the exit code to use (non-zero). */
int cli_open_device(attnvk_context *ctx, const char *api, const char *device, attnvk_device **out);

/* Exit code for a library status: bad input (2) or a failure (1). */
int cli_exit_for(attnvk_status s);

/* Matches "--name" or "--name=value"; fills *value from the next argv or after '='.
 * Returns 1 when matched, -1 when matched but the value is missing. */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);

/* The uuid as 8-4-4-4-12 hex, or "" when the API has none. */
void cli_format_uuid(const attnvk_device_info *d, char *out, size_t n);

/* "attnvk 0.1.0 (commit abc123, APIs built: cpu vulkan ...)" for --version. */
void cli_version_text(char *out, size_t n);
/* `attnvk help env`: every environment variable attnvk reads, one line each. */
void cli_print_env_help(FILE *f);

#endif
