/* JSON pieces shared by `attnvk devices --json` and the bench's results file. */
#include "cli.h"
#include "cli_json.h"

cJSON *cli_device_json(const attnvk_device_info *d)
{
    cJSON *o = cJSON_CreateObject();
    char uuid[40];
    cli_format_uuid(d, uuid, sizeof uuid);
    cJSON_AddStringToObject(o, "api", attnvk_api_name(d->api));
    cJSON_AddNumberToObject(o, "index", d->index);
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "vendor", d->vendor);
    cJSON_AddNumberToObject(o, "vendor_id", d->vendor_id);
    cJSON_AddStringToObject(o, "type", attnvk_device_type_name(d->type));
    cJSON_AddStringToObject(o, "driver_version", d->driver_version);
    cJSON_AddStringToObject(o, "api_version", d->api_version);
    cJSON_AddStringToObject(o, "architecture", d->architecture);
    cJSON_AddNumberToObject(o, "memory_bytes", (double)d->memory_bytes);
    cJSON_AddNumberToObject(o, "compute_units", d->compute_units);
    cJSON *sg = cJSON_AddArrayToObject(o, "subgroup_sizes");
    for (int i = 0; i < ATTNVK_MAX_SUBGROUP_SIZES && d->subgroup_sizes[i]; ++i)
        cJSON_AddItemToArray(sg, cJSON_CreateNumber(d->subgroup_sizes[i]));
    cJSON_AddNumberToObject(o, "shared_memory_per_group", (double)d->shared_memory_per_group);
    cJSON_AddNumberToObject(o, "max_workgroup_size", d->max_workgroup_size);
    cJSON_AddBoolToObject(o, "fp16", d->fp16);
    cJSON_AddBoolToObject(o, "bf16", d->bf16);
    cJSON_AddBoolToObject(o, "cooperative_matrix", d->cooperative_matrix);
    if (d->has_uuid) cJSON_AddStringToObject(o, "uuid", uuid);
    else cJSON_AddNullToObject(o, "uuid");
    cJSON_AddStringToObject(o, "default_variant", d->default_variant);
    return o;
}
