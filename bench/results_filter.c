/* Device and case filters (--device SPEC, --case SPEC), shared by history, compare and report. */
#include "results_file.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0) return true;
    for (const char *p = haystack; *p; ++p)
        if (strncasecmp(p, needle, n) == 0) return true;
    return false;
}

static bool known_api(const char *s, size_t n)
{
    static const char *apis[] = {"cpu", "vulkan", "opencl", "cuda", "hip"};
    for (size_t i = 0; i < sizeof apis / sizeof *apis; ++i)
        if (strlen(apis[i]) == n && strncasecmp(s, apis[i], n) == 0) return true;
    return false;
}

bool results_device_matches(const char *spec, const char *api, const char *name, const char *uuid)
{
    if (!spec || !*spec) return true;
    const char *colon = strchr(spec, ':');
    const char *text = spec;
    if (colon && known_api(spec, (size_t)(colon - spec))) {
        if (strlen(api) != (size_t)(colon - spec) || strncasecmp(api, spec, (size_t)(colon - spec)) != 0) return false;
        text = colon + 1;
    } else if (known_api(spec, strlen(spec))) {
        return strcasecmp(api, spec) == 0; /* a bare API name: every device of it */
    }
    if (!*text) return true;
    if (uuid && *uuid && strncasecmp(uuid, text, strlen(text)) == 0) return true;
    return contains_nocase(name ? name : "", text);
}

bool results_case_matches(const char *spec, const char *case_name)
{
    if (!spec || !*spec) return true;
    if (strpbrk(spec, "*?[")) return fnmatch(spec, case_name, 0) == 0;
    return contains_nocase(case_name, spec);
}

void results_list_add(char *out, size_t n, const char *text)
{
    char item[320]; /* the entry as it will read: one line */
    snprintf(item, sizeof item, "%s", text);
    for (char *p = item; *p; ++p)
        if ((unsigned char)*p < 0x20) *p = '?';
    size_t len = strlen(out), k = strlen(item);
    if (k == 0 || n < 8 || (len >= 3 && strcmp(out + len - 3, "...") == 0)) return; /* nothing to add, or full already */
    for (const char *p = out; (p = strstr(p, item)); p += k) /* already listed (as a whole entry) */
        if ((p == out || (p - out >= 2 && p[-2] == ',' && p[-1] == ' ')) && (p[k] == ',' || p[k] == '\0')) return;
    if (len + (len ? 2 : 0) + k + 5 > n) { /* room for ", ..." at the end */
        snprintf(out + len, n - len, "%s...", len ? ", " : "");
        return;
    }
    snprintf(out + len, n - len, "%s%s", len ? ", " : "", item);
}

bool results_run_has_device(const results_run *run, const char *spec)
{
    for (int i = 0; i < run->record_count; ++i)
        if (results_device_matches(spec, run->records[i].api, run->records[i].device_name, run->records[i].device_uuid)) return true;
    return false;
}

void results_list_devices(const results_run *run, char *out, size_t n)
{
    for (int i = 0; i < run->record_count; ++i) {
        char item[300];
        snprintf(item, sizeof item, "%s:%s", run->records[i].api, run->records[i].device_name);
        results_list_add(out, n, item);
    }
}

void results_filter(results_run *run, bool (*keep)(const results_record *, void *), void *ctx)
{
    int kept = 0;
    for (int i = 0; i < run->record_count; ++i)
        if (keep(&run->records[i], ctx)) {
            if (kept != i) run->records[kept] = run->records[i];
            ++kept;
        }
    run->record_count = kept;
}
