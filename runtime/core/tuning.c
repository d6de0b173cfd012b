#include "core/tuning.h"
#include "core/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int avk_contains_nocase(const char *haystack, const char *needle)
{
    if (!needle || !*needle) return 1;
    if (!haystack) return 0;
    size_t n = strlen(needle);
    for (const char *h = haystack; *h; ++h) {
        size_t i = 0;
        while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) ++i;
        if (i == n) return 1;
    }
    return 0;
}

static int specificity(const avk_tuning *e)
{
    /* device beats architecture beats vendor; shape filters break ties */
    return (e->device ? 8 : 0) + (e->architecture ? 4 : 0) + (e->vendor ? 2 : 0) +
           ((e->head_dim_max || e->dtype >= 0 || e->decode >= 0) ? 1 : 0);
}

const avk_tuning *avk_tuning_lookup(const avk_tuning *table, int count, const avk_tuning_query *q)
{
    const avk_tuning *best = NULL;
    int best_score = -1;
    for (int i = 0; i < count; ++i) {
        const avk_tuning *e = &table[i];
        if (e->vendor && !avk_contains_nocase(q->device->vendor, e->vendor)) continue;
        if (e->architecture && !avk_contains_nocase(q->device->architecture, e->architecture)) continue;
        if (e->device && !avk_contains_nocase(q->device->name, e->device)) continue;
        if (e->dtype >= 0 && e->dtype != (int)q->dtype) continue;
        if (e->head_dim_max && (q->head_dim < e->head_dim_min || q->head_dim > e->head_dim_max)) continue;
        if (e->decode >= 0 && e->decode != q->decode) continue;
        if (q->usable && !q->usable(e, q->ctx)) continue;
        int s = specificity(e);
        if (s > best_score) {
            best = e;
            best_score = s;
        }
    }
    return best;
}

int avk_env_tiles(const char *name, const char *const *keys, int n, int *values)
{
    const char *env = getenv(name);
    if (!env || !*env) return 1;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v = 0, k = 0;
        char key[16];
        if (sscanf(tok, "%15[a-z_]=%d", key, &v) != 2 || v <= 0 || v > 256) return 0;
        while (k < n && strcmp(key, keys[k])) ++k;
        if (k == n) return 0;
        values[k] = v;
    }
    return 1;
}

attnvk_status avk_env_switch(const char *name, int unset, int *on)
{
    const char *env = getenv(name);
    *on = unset;
    if (!env || !*env) return ATTNVK_OK;
    if (strcmp(env, "0") != 0 && strcmp(env, "1") != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s: '%s' is not 0 or 1", name, env);
    *on = env[0] == '1';
    return ATTNVK_OK;
}
