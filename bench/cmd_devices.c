/* `attnvk devices [--json]`: every (API, device) pair, its measured read bandwidth,
 * its cached peaks (`attnvk peak` measures them), and why missing APIs are missing. */
#include "core/kernel_tuning.h"
#include "core/user_tuning.h"
#include "cli.h"
#include "cli_json.h"
#include "commands.h"
#include "core/peak.h"
#include "text_layout.h"

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

/* Each device's read bandwidth: measured once per device and driver (core/bandwidth.h),
 * then read from the cache; with measuring off only cached numbers show. */
typedef struct device_bandwidth {
    double gbps; /* 0: unknown */
    int cached;
    char why[160]; /* when unknown */
    int has_peak;  /* `attnvk peak` cached a record (shown, never measured here: it takes seconds) */
    avk_peak peak;
    /* the default pick (D=128, f16 or f32 prefill) and where it comes from: the device's
     * tuning file (attnvk tune) before the built-in table */
    char pick[64];
    const char *pick_source; /* "tuned", "table", "default" or "" */
    char tuning_file[512];   /* avk_user_tuning_status */
    int tuning_entries;
} device_bandwidth;

static void default_pick(const attnvk_context *ctx, int i, device_bandwidth *bw)
{
    const attnvk_device_info *d = attnvk_device_info_at(ctx, i);
    const attnvk_problem d128 = {.batch = 1, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128,
                                 .dtype = d->fp16 ? ATTNVK_F16 : ATTNVK_F32};
    avk_tuned_entry tuned;
    avk_user_tuning_status(d, bw->tuning_file, sizeof bw->tuning_file, &bw->tuning_entries);
    if (avk_user_tuning_find(d, &d128, &tuned)) {
        snprintf(bw->pick, sizeof bw->pick, "%s %dx%d", tuned.variant, tuned.tile_br, tuned.tile_bc);
        bw->pick_source = avk_pick_source_name(AVK_PICK_TUNED);
    } else {
        snprintf(bw->pick, sizeof bw->pick, "%s", d->default_variant);
        bw->pick_source = avk_pick_source_name(avk_device_default_source(ctx, i));
    }
}

static device_bandwidth *read_bandwidths(attnvk_context *ctx, int measure)
{
    int n = attnvk_device_count(ctx);
    device_bandwidth *bw = calloc((size_t)(n > 0 ? n : 1), sizeof *bw);
    for (int i = 0; bw && i < n; ++i) {
        bw[i].has_peak = avk_peak_cached(attnvk_device_info_at(ctx, i), &bw[i].peak) == ATTNVK_OK;
        default_pick(ctx, i, &bw[i]);
        if (attnvk_cached_read_bandwidth(attnvk_device_info_at(ctx, i), &bw[i].gbps) == ATTNVK_OK) {
            bw[i].cached = 1; /* no need to open the device */
            continue;
        }
        attnvk_device *dev = NULL;
        attnvk_status s = measure ? attnvk_device_open(ctx, i, &dev) : ATTNVK_ERROR_UNAVAILABLE;
        if (s == ATTNVK_OK) s = attnvk_device_read_bandwidth(dev, measure, &bw[i].gbps, &bw[i].cached);
        if (s != ATTNVK_OK) {
            bw[i].gbps = 0;
            snprintf(bw[i].why, sizeof bw[i].why, "%s", s == ATTNVK_ERROR_UNAVAILABLE && !measure ? "not measured yet"
                                                                                              : attnvk_last_error());
        }
        if (dev) attnvk_device_close(dev);
    }
    return bw;
}

static int print_json(const attnvk_context *ctx, const device_bandwidth *bw)
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
    for (int i = 0; i < attnvk_device_count(ctx); ++i) {
        cJSON *d = cli_device_json(attnvk_device_info_at(ctx, i));
        if (bw[i].gbps > 0) cJSON_AddNumberToObject(d, "read_bandwidth_gbps", bw[i].gbps);
        else cJSON_AddNullToObject(d, "read_bandwidth_gbps");
        if (bw[i].has_peak) cJSON_AddItemToObject(d, "peak", cli_peak_json(&bw[i].peak));
        cJSON_ReplaceItemInObject(d, "default_variant", cJSON_CreateString(bw[i].pick));
        if (bw[i].pick_source[0]) cJSON_AddStringToObject(d, "default_variant_source", bw[i].pick_source);
        else cJSON_AddNullToObject(d, "default_variant_source");
        cJSON_AddStringToObject(d, "tuning_file", bw[i].tuning_file);
        cJSON_AddNumberToObject(d, "tuning_entries", bw[i].tuning_entries);
        cJSON_AddItemToArray(devs, d);
    }
    char *text = cJSON_Print(root);
    int ok = text && puts(text) >= 0;
    free(text);
    cJSON_Delete(root);
    return ok ? EXIT_OK : EXIT_FAILED;
}

/* One row of the main facts per device, its name last (in 80 columns: on the next line), then
 * the rest as labelled details on indented lines. Nothing is cut: long driver strings wrap. */
static void device_text(strbuf *b, int i, const attnvk_device_info *d, const device_bandwidth *bw, int width)
{
    char id[48], mem[32], row[160];
    snprintf(id, sizeof id, "%s:%d", attnvk_api_name(d->api), d->index);
    snprintf(mem, sizeof mem, "%.1f GiB", d->memory_bytes / 1073741824.0);
    snprintf(row, sizeof row, "%2d  %-9s %-10s %9s %4d  %-4s %-4s %-6s", i, id, attnvk_device_type_name(d->type), mem,
             d->compute_units, d->fp16 ? "yes" : "no", d->bf16 ? "yes" : "no", d->cooperative_matrix ? "yes" : "no");
    if (width < TEXT_WIDE) /* the name goes below: no padding at the end of the line */
        for (size_t n = strlen(row); n > 0 && row[n - 1] == ' '; --n) row[n - 1] = '\0';
    sb_puts(b, row);
    if (width >= TEXT_WIDE) {
        sb_puts(b, " ");
        text_wrap(b, d->name, (int)strlen(row) + 1, (int)strlen(row) + 1, width);
    } else {
        sb_puts(b, "\n    ");
        text_wrap(b, d->name, 4, 4, width);
    }
    char sg[32], uuid[40];
    subgroups_text(d, sg, sizeof sg);
    cli_format_uuid(d, uuid, sizeof uuid);
    strbuf details = {0};
    sb_printf(&details, "vendor %s", d->vendor);
    if (d->vendor_id) sb_printf(&details, " (0x%04x)", d->vendor_id);
    sb_printf(&details, ", driver %s, API %s", d->driver_version, d->api_version);
    if (d->architecture[0]) sb_printf(&details, ", architecture %s", d->architecture);
    sb_printf(&details, ", subgroups %s, shared memory %llu KiB per workgroup, max workgroup %d, default variant %s%s%s%s, "
                        "uuid %s",
              sg, (unsigned long long)(d->shared_memory_per_group / 1024), d->max_workgroup_size, bw->pick,
              bw->pick_source[0] ? " (" : "", bw->pick_source, bw->pick_source[0] ? ")" : "", d->has_uuid ? uuid : "none");
    sb_printf(&details, ", tuning file %s", bw->tuning_file);
    if (bw->gbps > 0) sb_printf(&details, ", read bandwidth %.1f GB/s (%s)", bw->gbps, bw->cached ? "cached" : "measured now");
    else sb_printf(&details, ", read bandwidth unknown (%s)", bw->why);
    if (bw->has_peak) {
        char peaks[320];
        cli_peak_summary(&bw->peak, peaks, sizeof peaks);
        sb_printf(&details, ", peaks (attnvk peak): %s", peaks);
    }
    sb_puts(b, "    ");
    text_wrap(b, details.data ? details.data : "", 4, 4, width);
    b->failed = b->failed || details.failed;
    sb_free(&details);
}

static int print_table(const attnvk_context *ctx, const device_bandwidth *bw, int width)
{
    strbuf b = {0};
    sb_printf(&b, " #  DEVICE    TYPE          MEMORY   CU  FP16 BF16 MATRIX%s\n", width >= TEXT_WIDE ? " NAME" : "");
    for (int i = 0; i < attnvk_device_count(ctx); ++i) device_text(&b, i, attnvk_device_info_at(ctx, i), &bw[i], width);
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        const char *reason;
        if (attnvk_api_status(ctx, (attnvk_api)a, &reason) == ATTNVK_OK) continue;
        strbuf line = {0};
        sb_printf(&line, "%s unavailable: %s", attnvk_api_name((attnvk_api)a), reason);
        text_wrap(&b, line.data ? line.data : "", 0, 4, width);
        sb_free(&line);
    }
    int ok = !b.failed && b.data && fputs(b.data, stdout) >= 0;
    sb_free(&b);
    return ok ? EXIT_OK : cli_error(EXIT_FAILED, "devices: out of host memory");
}

int cmd_devices(int argc, char **argv)
{
    int json = 0, compact = 0;
    const char *measure_env = getenv("ATTNVK_MEASURE_BANDWIDTH");
    int measure = !(measure_env && strcmp(measure_env, "0") == 0);
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--compact") == 0) compact = 1;
        else if (strcmp(argv[i], "--no-measure") == 0) measure = 0;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts("usage: attnvk devices [--json] [--compact] [--no-measure]\n"
                 "Lists every device of every API; ATTNVK_VISIBLE_DEVICES (e.g. 'vulkan:0,cuda') filters them.\n"
                 "Each device's read bandwidth is measured once (a streaming read kernel, about a second) and\n"
                 "cached per device and driver; --no-measure (or ATTNVK_MEASURE_BANDWIDTH=0) shows cached ones only.\n"
                 "Peaks (copy bandwidth, FMA, matrix units) show when `attnvk peak` has measured them.\n"
                 "The table fits 120 columns, 80 with --compact or on a narrower terminal (COLUMNS).");
            return EXIT_OK;
        } else return cli_error(EXIT_USAGE, "devices: unknown option '%s'", argv[i]);
    }
    attnvk_context *ctx;
    int rc = cli_context_create(&ctx);
    if (rc) return rc;
    device_bandwidth *bw = read_bandwidths(ctx, measure);
    if (!bw) rc = cli_error(EXIT_FAILED, "devices: out of host memory");
    else rc = json ? print_json(ctx, bw) : print_table(ctx, bw, text_table_width(compact));
    free(bw);
    attnvk_context_destroy(ctx);
    return rc;
}
