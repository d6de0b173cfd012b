#include "bench_targets.h"

#include "cli.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_group_id(const attnvk_device_info *d, char *out, size_t n)
{
    if (d->type == ATTNVK_DEVICE_CPU) {
        snprintf(out, n, "host-cpu");
        return;
    }
    if (d->has_uuid) {
        cli_format_uuid(d, out, n);
        return;
    }
    size_t len = (size_t)snprintf(out, n, "name:");
    int dash = 1;
    for (const char *c = d->name; *c && len + 1 < n; ++c) {
        if (isalnum((unsigned char)*c)) {
            out[len++] = (char)tolower((unsigned char)*c);
            dash = 0;
        } else if (!dash) {
            out[len++] = '-';
            dash = 1;
        }
    }
    if (dash && len > 5) --len;
    out[len] = '\0';
}

static int in_list(const char *list, const char *name)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (strcmp(tok, name) == 0) return 1;
    return 0;
}

static void list_impls(bench_target *t, const char *impl_list)
{
    attnvk_impl_info all[BENCH_MAX_IMPLS];
    int n = t->dev ? attnvk_device_implementations(t->dev, all, BENCH_MAX_IMPLS) : 0;
    if (n > BENCH_MAX_IMPLS) n = BENCH_MAX_IMPLS;
    if (!t->dev) { /* keep attnvk's row so the failure to open shows */
        memset(&all[0], 0, sizeof all[0]);
        snprintf(all[0].name, sizeof all[0].name, "attnvk");
        all[0].fused = 1;
        snprintf(all[0].reason, sizeof all[0].reason, "cannot open device: %.200s", t->open_error);
        n = 1;
    }
    t->nimpls = 0;
    for (int i = 0; i < n; ++i)
        if (!impl_list || in_list(impl_list, all[i].name)) t->impls[t->nimpls++] = all[i];
}

static int offers(const bench_target *t, const char *name)
{
    for (int i = 0; i < t->nimpls; ++i)
        if (strcmp(t->impls[i].name, name) == 0) return 1;
    return 0;
}

/* A name asked for that no selected device offers becomes an unavailable
 * entry on every device, so the results say so; one offered somewhere only
 * appears where it is offered. */
static void add_missing(bench_target *t, int n, const char *impl_list)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", impl_list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int anywhere = 0;
        for (int d = 0; d < n; ++d) anywhere |= offers(&t[d], tok);
        for (int d = 0; d < n && !anywhere; ++d) {
            if (t[d].nimpls == BENCH_MAX_IMPLS) continue;
            attnvk_impl_info *x = &t[d].impls[t[d].nimpls++];
            memset(x, 0, sizeof *x);
            snprintf(x->name, sizeof x->name, "%s", tok);
            snprintf(x->reason, sizeof x->reason, "no selected device offers '%s'", tok);
        }
    }
}

int bench_targets_open(attnvk_context *ctx, unsigned api_mask, const char *device_spec, const char *impl_list,
                       bench_target *out, int max)
{
    int idx[BENCH_MAX_DEVICES];
    int found = attnvk_device_select(ctx, device_spec, idx, BENCH_MAX_DEVICES);
    int n = 0;
    for (int i = 0; i < found && n < max; ++i) {
        const attnvk_device_info *info = attnvk_device_info_at(ctx, idx[i]);
        if (!(api_mask & (1u << info->api))) continue;
        bench_target *t = &out[n++];
        memset(t, 0, sizeof *t);
        t->info = *info;
        bench_group_id(info, t->group, sizeof t->group);
        cli_format_uuid(info, t->uuid, sizeof t->uuid);
        if (attnvk_device_open(ctx, idx[i], &t->dev) != ATTNVK_OK) {
            t->dev = NULL;
            snprintf(t->open_error, sizeof t->open_error, "%s", attnvk_last_error());
        }
        list_impls(t, impl_list);
        t->has_peak = avk_peak_cached(info, &t->peak) == ATTNVK_OK;
    }
    if (impl_list) add_missing(out, n, impl_list);
    return n;
}

double bench_target_read_bandwidth(bench_target *t)
{
    if (!t->read_bandwidth_asked && t->dev && !t->lost) {
        t->read_bandwidth_asked = 1;
        const char *env = getenv("ATTNVK_MEASURE_BANDWIDTH");
        double gbps = 0;
        if (attnvk_device_read_bandwidth(t->dev, !(env && strcmp(env, "0") == 0), &gbps, NULL) == ATTNVK_OK)
            t->read_bandwidth_gbps = gbps;
    }
    return t->read_bandwidth_gbps;
}

void bench_targets_close(bench_target *t, int n)
{
    for (int i = 0; i < n; ++i) {
        attnvk_device_close(t[i].dev);
        t[i].dev = NULL;
    }
}

/* One physical device per group, across the APIs that reach it. */
static struct {
    char group[96];
    double ms;
} busy[BENCH_MAX_DEVICES];
static int nbusy;

double bench_group_last_busy_ms(const char *group)
{
    for (int i = 0; i < nbusy; ++i)
        if (strcmp(busy[i].group, group) == 0) return busy[i].ms;
    return -1;
}

void bench_group_mark_busy(const char *group, double now_ms)
{
    int i = 0;
    while (i < nbusy && strcmp(busy[i].group, group) != 0) ++i;
    if (i == nbusy) {
        if (nbusy == BENCH_MAX_DEVICES) return;
        snprintf(busy[nbusy++].group, sizeof busy[0].group, "%s", group);
    }
    busy[i].ms = now_ms;
}
