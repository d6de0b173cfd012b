#include "cli.h"
#include "core/checked_math.h"
#include "core/names.h"

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
    if (errno || end == s) return 0;
    /* k/K and m/M suffixes for sequence lengths: 4k = 4096 */
    int64_t scaled, factors[2] = {v, 1};
    if (*end == 'k' || *end == 'K') factors[1] = 1024, ++end;
    else if (*end == 'm' || *end == 'M') factors[1] = 1024 * 1024, ++end;
    if (*end || !avk_checked_product(&scaled, 2, factors) || scaled < lo || scaled > hi) return 0;
    *out = (long)scaled;
    return 1;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    /* strtoull would take leading blanks and negate "-1" into 2^64-1 */
    if (!s || *s < '0' || *s > '9') return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return 0;
    *out = v;
    return 1;
}

int cli_list_well_formed(const char *s)
{
    if (!s || !*s || *s == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,")) return 0;
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

int cli_parse_window(const char *s, int *left, int *right)
{
    char *end;
    long l = strtol(s, &end, 10), r = 0;
    if (end == s || *end != ',') return 0;
    const char *rs = end + 1;
    r = strtol(rs, &end, 10);
    if (end == rs || *end || l < -1 || r < -1 || l > (1l << 30) || r > (1l << 30)) return 0;
    *left = (int)l;
    *right = (int)r;
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
    if (!cli_list_well_formed(s) || strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max || !cli_parse_int(tok, lo, hi, &out[n])) return 0;
        ++n;
    }
    return n;
}

int cli_check_impls(const char *cmd, const char *list)
{
    const char *const *known = attnvk_implementation_names();
    char names[256], buf[512];
    avk_join_names(known, names, sizeof names);
    if (!cli_list_well_formed(list) || strlen(list) >= sizeof buf)
        return cli_error(EXIT_USAGE, "%s: --impl wants a comma list of %s, got '%s'", cmd, names, list ? list : "");
    strcpy(buf, list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!avk_name_in(known, tok))
            return cli_error(EXIT_USAGE, "%s: unknown implementation '%s' (%s)", cmd, tok, names);
    return 0;
}

int cli_check_variant(const char *cmd, const char *variant, unsigned api_mask)
{
    char all[1024] = "";
    size_t len = 0;
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        const char *const *known = attnvk_api_variants((attnvk_api)a);
        if (!(api_mask & (1u << a)) || !known[0]) continue;
        if (avk_name_in(known, variant)) return 0;
        char names[512];
        avk_join_names(known, names, sizeof names);
        if (len < sizeof all)
            len += (size_t)snprintf(all + len, sizeof all - len, "%s%s: %s", len ? "; " : "", attnvk_api_name((attnvk_api)a),
                                    names);
    }
    if (!all[0]) return 0; /* no selected API is built in: the run says so */
    return cli_error(EXIT_USAGE, "%s: unknown variant '%s' (%s)", cmd, variant, all);
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

int cli_context_create(attnvk_context **out)
{
    *out = NULL;
    /* the reference library clamps what it reads; the command refuses garbage outright */
    const char *threads = getenv("ATTNVK_CPU_THREADS");
    long n;
    if (threads && !cli_parse_int(threads, 1, 256, &n))
        return cli_error(EXIT_USAGE, "ATTNVK_CPU_THREADS: '%s' is not an integer in 1..256", threads);
    attnvk_status s = attnvk_context_create(out);
    return s == ATTNVK_OK ? EXIT_OK : cli_error(cli_exit_for(s), "%s", attnvk_last_error());
}

int cli_check_device_spec(const attnvk_context *ctx, const char *cmd, const char *spec)
{
    if (!spec) return EXIT_OK;
    if (attnvk_device_spec_check(ctx, spec) != ATTNVK_OK)
        return cli_error(EXIT_USAGE, "%s: --device %s", cmd, attnvk_last_error());
    return EXIT_OK;
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
    if (device && (!*device || strchr(device, ',')))
        return cli_error(EXIT_USAGE, "run: --device names one device (an index or a name), got '%s'", device);
    if (api && device) snprintf(spec, sizeof spec, "%s:%s", api, device); /* index within the API, or name */
    else snprintf(spec, sizeof spec, "%s", api ? api : device ? device : "");
    int rc = device ? cli_check_device_spec(ctx, "run", spec) : EXIT_OK;
    if (rc) return rc;
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

#ifndef ATTNVK_GIT_COMMIT
#define ATTNVK_GIT_COMMIT "unknown"
#endif

void cli_version_text(char *out, size_t n)
{
    size_t len = (size_t)snprintf(out, n, "attnvk %s (commit %s, APIs built:", ATTNVK_VERSION_STRING, ATTNVK_GIT_COMMIT);
    for (int a = 0; a < ATTNVK_API_COUNT && len < n; ++a)
        if (attnvk_api_compiled((attnvk_api)a))
            len += (size_t)snprintf(out + len, n - len, " %s", attnvk_api_name((attnvk_api)a));
    if (len < n) snprintf(out + len, n - len, ")");
}
