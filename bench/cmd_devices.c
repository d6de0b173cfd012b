/* `attnvk devices [--json]`: every (API, device) pair, and why missing APIs are missing. */
#include "cli.h"
#include "cli_json.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static void subgroups_text(const attnvk_device_info *d, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < ATTNVK_MAX_SUBGROUP_SIZES && d->subgroup_sizes[i] && len < n; ++i)
        len += (size_t)snprintf(out + len, n - len, "%s%d", i ? "," : "", d->subgroup_sizes[i]);
    if (!out[0]) snprintf(out, n, "-");
}

static int print_json(const attnvk_context *ctx)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "attnvk_version", ATTNVK_VERSION_STRING);
    cJSON *apis = cJSON_AddArrayToObject(root, "apis");
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        const char *reason;
        attnvk_status s = attnvk_api_status(ctx, (attnvk_api)a, &reason);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "api", attnvk_api_name((attnvk_api)a));
        cJSON_AddStringToObject(o, "status", s == ATTNVK_OK ? "available" : "unavailable");
        if (s != ATTNVK_OK) cJSON_AddStringToObject(o, "reason", reason);
        cJSON_AddItemToArray(apis, o);
    }
    cJSON *devs = cJSON_AddArrayToObject(root, "devices");
    for (int i = 0; i < attnvk_device_count(ctx); ++i) cJSON_AddItemToArray(devs, cli_device_json(attnvk_device_info_at(ctx, i)));
    char *text = cJSON_Print(root);
    int ok = text && puts(text) >= 0;
    free(text);
    cJSON_Delete(root);
    return ok ? EXIT_OK : EXIT_FAILED;
}

static void print_table(const attnvk_context *ctx)
{
    printf("%-3s %-7s %-3s %-36s %-10s %-9s %-22s %-14s %9s %4s %-7s %7s %-12s %-22s %s\n", "#", "API", "IDX", "NAME",
           "VENDOR", "TYPE", "DRIVER", "API VERSION", "MEMORY", "CU", "SUBGRP", "SHARED", "FP16/BF16/MM", "DEFAULT VARIANT",
           "UUID");
    for (int i = 0; i < attnvk_device_count(ctx); ++i) {
        const attnvk_device_info *d = attnvk_device_info_at(ctx, i);
        char sg[32], uuid[40], mem[32], shared[32], feats[16];
        subgroups_text(d, sg, sizeof sg);
        cli_format_uuid(d, uuid, sizeof uuid);
        snprintf(mem, sizeof mem, "%.1f GiB", d->memory_bytes / 1073741824.0);
        snprintf(shared, sizeof shared, "%llu K", (unsigned long long)(d->shared_memory_per_group / 1024));
        snprintf(feats, sizeof feats, "%s/%s/%s", d->fp16 ? "y" : "n", d->bf16 ? "y" : "n", d->cooperative_matrix ? "y" : "n");
        printf("%-3d %-7s %-3d %-36.36s %-10.10s %-9s %-22.22s %-14.14s %9s %4d %-7s %7s %-12s %-22.22s %s\n", i,
               attnvk_api_name(d->api), d->index, d->name, d->vendor, attnvk_device_type_name(d->type),
               d->driver_version, d->api_version, mem, d->compute_units, sg, shared, feats, d->default_variant,
               d->has_uuid ? uuid : "-");
    }
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        const char *reason;
        if (attnvk_api_status(ctx, (attnvk_api)a, &reason) != ATTNVK_OK)
            printf("%-7s unavailable: %s\n", attnvk_api_name((attnvk_api)a), reason);
    }
}

int cmd_devices(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts("usage: attnvk devices [--json]\n"
                 "Lists every device of every API; ATTNVK_VISIBLE_DEVICES (e.g. 'vulkan:0,cuda') filters them.");
            return EXIT_OK;
        } else return cli_error(EXIT_USAGE, "devices: unknown option '%s'", argv[i]);
    }
    attnvk_context *ctx;
    int rc = cli_context_create(&ctx);
    if (rc) return rc;
    if (json) rc = print_json(ctx);
    else print_table(ctx);
    attnvk_context_destroy(ctx);
    return rc;
}
