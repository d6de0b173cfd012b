#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("attnvk: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int cli_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return 0;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    /* accept k/K and m/M suffixes for sequence lengths: 4k = 4096 */
    if (*end == 'k' || *end == 'K') v *= 1024, ++end;
    else if (*end == 'm' || *end == 'M') v *= 1024 * 1024, ++end;
    if (errno || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s) return 0;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi)) return 0;
    *out = v;
    return 1;
}

int cli_parse_tile(const char *s, int *br, int *bc)
{
    char buf[64];
    if (!s || strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    char *x = strchr(buf, 'x');
    if (!x) return 0;
    *x = '\0';
    long a, b;
    if (!cli_parse_int(buf, 1, 4096, &a) || !cli_parse_int(x + 1, 1, 4096, &b)) return 0;
    *br = (int)a;
    *bc = (int)b;
    return 1;
}

int cli_parse_int_list(const char *s, long lo, long hi, long *out, int max)
{
    char buf[512];
    if (!s || strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max || !cli_parse_int(tok, lo, hi, &out[n])) return 0;
        ++n;
    }
    return n;
}

int cli_option(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

int cli_exit_for(attnvk_status s)
{
    return (s == ATTNVK_ERROR_INVALID_ARGUMENT || s == ATTNVK_ERROR_UNSUPPORTED) ? EXIT_USAGE : EXIT_FAILED;
}

int cli_open_device(attnvk_context *ctx, const char *api, const char *device, attnvk_device **out)
{
    char spec[300];
    attnvk_api a = ATTNVK_API_CPU;
    if (api) {
        if (!attnvk_api_from_name(api, &a))
            return cli_error(EXIT_USAGE, "unknown API '%s' (cpu, vulkan, opencl, cuda, hip)", api);
        const char *reason;
        if (attnvk_api_status(ctx, a, &reason) != ATTNVK_OK)
            return cli_error(EXIT_FAILED, "%s unavailable: %s", api, reason);
    }
    if (api && device) {
        char *end;
        strtol(device, &end, 10);
        snprintf(spec, sizeof spec, "%s:%s", api, device); /* index within the API, or name */
        (void)end;
    } else if (api) {
        snprintf(spec, sizeof spec, "%s", api);
    } else {
        snprintf(spec, sizeof spec, "%s", device ? device : "");
    }
    int found[1];
    if (attnvk_device_select(ctx, spec, found, 1) < 1)
        return cli_error(EXIT_USAGE, "no visible device matches '%s'", spec);
    attnvk_status s = attnvk_device_open(ctx, found[0], out);
    if (s != ATTNVK_OK) return cli_error(EXIT_FAILED, "cannot open device: %s", attnvk_last_error());
    return EXIT_OK;
}

void cli_format_uuid(const attnvk_device_info *d, char *out, size_t n)
{
    if (!d->has_uuid) {
        if (n) out[0] = '\0';
        return;
    }
    const uint8_t *u = d->uuid;
    snprintf(out, n, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}
