/* `attnvk peak`: what each device measured it can do through each API
 * (clpeak/vkpeak style): read and copy bandwidth, f32 and f16 FMA throughput,
 * and the matrix units through the path attnvk's own kernels use there.
 * Measured once per (API, device, driver) and cached (core/peak.h). */
#include "bench_options.h"
#include "cli.h"
#include "cli_json.h"
#include "commands.h"
#include "core/peak.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: attnvk peak [--api vulkan|opencl|cuda|hip|cpu|all] [--device SPEC] [--remeasure] [--no-measure]\n"
    "                   [--json FILE]\n"
    "Measures each device through each API: read and copy bandwidth (GB/s; copy counts bytes read plus bytes\n"
    "written), f32 and f16 FMA throughput, and the matrix units through the path attnvk's kernels use there\n"
    "(Vulkan NV cooperative matrix, OpenCL inline-PTX mma.sync on NVIDIA, CUDA mma.sync / wgmma, HIP MFMA/WMMA;\n"
    "'none' with the reason elsewhere). Each number is the best of a few runs after a warm-up, measured once\n"
    "per device and driver and cached ($ATTNVK_CACHE_DIR); read bandwidth is the one `attnvk devices` shows.\n"
    "  --api LIST     APIs to measure (comma list or 'all', the default)\n"
    "  --device SPEC  devices: api, api:N, N (as `attnvk devices` numbers them) or a name substring, comma list\n"
    "  --remeasure    ignore the cache: measure everything again and store it\n"
    "  --no-measure   show cached numbers only\n"
    "  --json FILE    also write the table as JSON to FILE ('-': standard output instead of the table)\n"
    "Exit status: 0 when every device was measured (a missing path is not a failure), 1 when a measurement\n"
    "failed, 2 for bad options.";

typedef struct peak_args {
    unsigned api_mask;
    int api_all;
    const char *api_text, *device, *json;
    unsigned flags;
} peak_args;

static int parse_args(int argc, char **argv, peak_args *a)
{
    bench_parse_api_list("all", &a->api_mask, &a->api_all);
    a->api_text = "all";
    a->flags = AVK_PEAK_MEASURE;
    for (int i = 1; i < argc; ++i) {
        const char *val = NULL;
        int m;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts(usage_text);
            return -1;
        } else if (strcmp(argv[i], "--remeasure") == 0) {
            a->flags |= AVK_PEAK_REMEASURE;
        } else if (strcmp(argv[i], "--no-measure") == 0) {
            a->flags &= ~(unsigned)AVK_PEAK_MEASURE;
        } else if ((m = cli_option(argc, argv, &i, "--api", &val)) != 0) {
            if (m < 0) return cli_error(EXIT_USAGE, "peak: --api needs a value");
            if (!bench_parse_api_list(val, &a->api_mask, &a->api_all))
                return cli_error(EXIT_USAGE, "peak: --api wants 'all' or a list of cpu, vulkan, opencl, cuda, hip, got '%s'",
                                 val);
            a->api_text = val;
        } else if ((m = cli_option(argc, argv, &i, "--device", &val)) != 0) {
            if (m < 0) return cli_error(EXIT_USAGE, "peak: --device needs a value");
            if (!cli_list_well_formed(val))
                return cli_error(EXIT_USAGE, "peak: --device wants a comma list of api, api:N, N or name, got '%s'", val);
            a->device = val;
        } else if ((m = cli_option(argc, argv, &i, "--json", &val)) != 0) {
            if (m < 0 || !val[0]) return cli_error(EXIT_USAGE, "peak: --json needs a file name");
            a->json = val;
        } else {
            return cli_error(EXIT_USAGE, "peak: unknown option '%s' (see attnvk peak --help)", argv[i]);
        }
    }
    if ((a->flags & AVK_PEAK_REMEASURE) && !(a->flags & AVK_PEAK_MEASURE))
        return cli_error(EXIT_USAGE, "peak: --remeasure and --no-measure contradict each other");
    return 0;
}

static const char *const labels[AVK_PEAK_FIELD_COUNT] = {"read bandwidth", "copy bandwidth", "f32 FMA", "f16 FMA",
                                                         "matrix f16->f32"};

/* "1234.5 GB/s", "12.34 TFLOP/s", "845.2 GFLOP/s" */
static void value_text(avk_peak_field f, double v, char *out, size_t n)
{
    if (f == AVK_PEAK_FIELD_READ || f == AVK_PEAK_FIELD_COPY) snprintf(out, n, "%.1f GB/s", v);
    else if (v >= 1000) snprintf(out, n, "%.2f TFLOP/s", v / 1000);
    else snprintf(out, n, "%.1f GFLOP/s", v);
}

/* A failure (not "none", not "not measured yet"): the run exits 1. */
static int failed(const avk_peak_entry *e)
{
    return e->status != ATTNVK_OK && e->status != ATTNVK_ERROR_UNSUPPORTED && e->status != ATTNVK_ERROR_UNAVAILABLE;
}

static void print_device(int i, const attnvk_device_info *d, const avk_peak *p, const char *open_error)
{
    printf("%2d  %s:%d  %s  (driver %s)\n", i, attnvk_api_name(d->api), d->index, d->name, d->driver_version);
    if (open_error) {
        printf("    cannot open the device: %s\n", open_error);
        return;
    }
    for (int f = 0; f < AVK_PEAK_FIELD_COUNT; ++f) {
        const avk_peak_entry *e = &p->e[f];
        char value[48];
        if (e->status == ATTNVK_OK) {
            value_text((avk_peak_field)f, e->value, value, sizeof value);
            printf("    %-16s %16s  %-8s %s\n", labels[f], value, e->cached ? "cached" : "measured", e->path);
        } else if (e->status == ATTNVK_ERROR_UNSUPPORTED) {
            printf("    %-16s %16s  %-8s %s\n", labels[f], "none", "", e->note);
        } else {
            printf("    %-16s %16s  %-8s %s\n", labels[f], "-", failed(e) ? "FAILED" : "", e->note);
        }
    }
}

static const char *entry_state(const avk_peak_entry *e)
{
    if (e->status == ATTNVK_OK) return e->cached ? "cached" : "measured";
    if (e->status == ATTNVK_ERROR_UNSUPPORTED) return "none";
    return failed(e) ? "failed" : "not measured";
}

/* {"read": {"value": 12.3, "unit": "GB/s", "state": "cached", "path": "", "reason": ""}, ...} */
cJSON *cli_peak_json(const avk_peak *p)
{
    cJSON *o = cJSON_CreateObject();
    for (int f = 0; f < AVK_PEAK_FIELD_COUNT; ++f) {
        const avk_peak_entry *e = &p->e[f];
        cJSON *x = cJSON_AddObjectToObject(o, avk_peak_field_name((avk_peak_field)f));
        if (e->status == ATTNVK_OK) cJSON_AddNumberToObject(x, "value", e->value);
        else cJSON_AddNullToObject(x, "value");
        cJSON_AddStringToObject(x, "unit", avk_peak_field_unit((avk_peak_field)f));
        cJSON_AddStringToObject(x, "state", entry_state(e));
        if (e->path[0]) cJSON_AddStringToObject(x, "path", e->path);
        if (e->status != ATTNVK_OK) cJSON_AddStringToObject(x, "reason", e->note);
    }
    return o;
}

void cli_peak_summary(const avk_peak *p, char *out, size_t n)
{
    static const char *const short_labels[AVK_PEAK_FIELD_COUNT] = {"read", "copy", "f32 FMA", "f16 FMA", "matrix"};
    size_t len = 0;
    out[0] = '\0';
    for (int f = AVK_PEAK_FIELD_COPY; f < AVK_PEAK_FIELD_COUNT && len < n; ++f) {
        const avk_peak_entry *e = &p->e[f];
        char value[48];
        if (e->status == ATTNVK_OK) value_text((avk_peak_field)f, e->value, value, sizeof value);
        else snprintf(value, sizeof value, "%s", e->status == ATTNVK_ERROR_UNSUPPORTED ? "none" : "-");
        int w = snprintf(out + len, n - len, "%s%s %s", len ? ", " : "", short_labels[f], value);
        if (w < 0) break;
        len += (size_t)w;
        if (f == AVK_PEAK_FIELD_MATRIX && e->status == ATTNVK_OK && e->path[0] && len < n)
            len += (size_t)snprintf(out + len, n - len, " (%s)", e->path);
    }
}

static int write_json(const char *file, cJSON *root)
{
    char *text = cJSON_Print(root);
    if (!text) return cli_error(EXIT_FAILED, "peak: out of host memory");
    int ok;
    if (strcmp(file, "-") == 0) ok = puts(text) >= 0;
    else {
        FILE *f = fopen(file, "w");
        ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
        if (f && fclose(f) != 0) ok = 0;
    }
    free(text);
    return ok ? EXIT_OK : cli_error(EXIT_FAILED, "peak: cannot write %s", file);
}

int cmd_peak(int argc, char **argv)
{
    peak_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    attnvk_context *ctx;
    rc = cli_context_create(&ctx);
    if (rc) return rc;
    rc = cli_check_device_spec(ctx, "peak", a.device);
    if (rc) {
        attnvk_context_destroy(ctx);
        return rc;
    }
    int n = attnvk_device_count(ctx), *chosen = calloc((size_t)(n > 0 ? n : 1), sizeof *chosen);
    if (!chosen) {
        attnvk_context_destroy(ctx);
        return cli_error(EXIT_FAILED, "peak: out of host memory");
    }
    if (a.device) {
        int *sel = calloc((size_t)(n > 0 ? n : 1), sizeof *sel);
        int k = sel ? attnvk_device_select(ctx, a.device, sel, n) : 0;
        for (int j = 0; j < k; ++j) chosen[sel[j]] = 1;
        free(sel);
    } else {
        for (int i = 0; i < n; ++i) chosen[i] = 1;
    }
    int to_stdout = a.json && strcmp(a.json, "-") == 0, shown = 0, bad = 0;
    cJSON *root = a.json ? cJSON_CreateObject() : NULL, *devs = NULL;
    if (root) {
        cJSON_AddStringToObject(root, "attnvk_version", ATTNVK_VERSION_STRING);
        devs = cJSON_AddArrayToObject(root, "devices");
    }
    for (int i = 0; i < n; ++i) {
        const attnvk_device_info *d = attnvk_device_info_at(ctx, i);
        if (!chosen[i] || !(a.api_mask & (1u << d->api))) continue;
        ++shown;
        avk_peak p;
        attnvk_status s = avk_peak_lookup(ctx, i, a.flags, &p);
        const char *open_error = s == ATTNVK_OK ? NULL : attnvk_last_error();
        if (!to_stdout) print_device(i, d, &p, open_error);
        bad |= s != ATTNVK_OK;
        for (int f = 0; s == ATTNVK_OK && f < AVK_PEAK_FIELD_COUNT; ++f) bad |= failed(&p.e[f]);
        if (devs) {
            cJSON *dj = cli_device_json(d);
            if (s == ATTNVK_OK) cJSON_AddItemToObject(dj, "peak", cli_peak_json(&p));
            else cJSON_AddStringToObject(dj, "peak_error", open_error);
            cJSON_AddItemToArray(devs, dj);
        }
    }
    free(chosen);
    for (int api = 0; api < ATTNVK_API_COUNT; ++api) { /* why a named API shows nothing */
        const char *reason;
        if ((a.api_mask & (1u << api)) && attnvk_api_status(ctx, (attnvk_api)api, &reason) != ATTNVK_OK && !to_stdout &&
            !a.api_all)
            printf("%s unavailable: %s\n", attnvk_api_name((attnvk_api)api), reason);
    }
    attnvk_context_destroy(ctx);
    if (root) {
        int jrc = write_json(a.json, root);
        cJSON_Delete(root);
        if (jrc) return jrc;
    }
    if (!shown)
        return cli_error(a.device ? EXIT_USAGE : EXIT_FAILED, "peak: no visible device matches --api %s%s%s", a.api_text,
                         a.device ? " --device " : "", a.device ? a.device : "");
    return bad ? EXIT_FAILED : EXIT_OK;
}
