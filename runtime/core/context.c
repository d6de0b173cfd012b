/* The API-neutral front: loads each backend once, lists and selects devices,
 * and checks every argument before a backend sees it. */
#include "core/api_objects.h"
#include "core/bandwidth.h"
#include "core/kv_cache.h"
#include "core/names.h"
#include "core/q_format.h"
#include "core/registry.h"
#include "core/tuning.h"
#include "core/kernel_tuning.h"
#include "core/user_tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct api_state {
    const attnvk_backend *backend;
    attnvk_status status;
    char reason[512];
} api_state;

enum { AVK_MAX_TILE = 4096, AVK_MAX_SPLIT_KV = 4096 };

struct attnvk_context {
    api_state apis[ATTNVK_API_COUNT];
    attnvk_device_info *devices;
    int device_count;
};

/* "api", "api:N", "N" (position in the whole list) or a name substring. */
static int spec_matches(const attnvk_context *ctx, int position, const char *spec)
{
    const attnvk_device_info *d = &ctx->devices[position];
    char api_part[32];
    const char *colon = strchr(spec, ':');
    attnvk_api api;
    if (colon && (size_t)(colon - spec) < sizeof api_part) {
        memcpy(api_part, spec, (size_t)(colon - spec));
        api_part[colon - spec] = '\0';
        if (attnvk_api_from_name(api_part, &api)) {
            char *end;
            long idx = strtol(colon + 1, &end, 10);
            if (*end == '\0' && end != colon + 1) return d->api == api && d->index == idx;
            return d->api == api && avk_contains_nocase(d->name, colon + 1);
        }
    }
    if (attnvk_api_from_name(spec, &api)) return d->api == api;
    char *end;
    long idx = strtol(spec, &end, 10);
    if (*spec && *end == '\0') return position == idx;
    return avk_contains_nocase(d->name, spec);
}

enum { SPEC_MAX = 512 };

static int matches_any(const attnvk_context *ctx, int position, const char *list)
{
    char buf[SPEC_MAX];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (spec_matches(ctx, position, tok)) return 1;
    return 0;
}

int attnvk_device_select(const attnvk_context *ctx, const char *spec, int *out, int max)
{
    int n = 0;
    for (int i = 0; i < ctx->device_count && n < max; ++i)
        if (!spec || !*spec || matches_any(ctx, i, spec)) out[n++] = i;
    return n;
}

/* "0=cpu:0 'name', 1=vulkan:0 'name', ..." (positions as specs count them). */
static void list_devices(const attnvk_context *ctx, char *out, size_t n)
{
    size_t len = (size_t)snprintf(out, n, "%s", ctx->device_count ? "" : "none");
    for (int i = 0; i < ctx->device_count && len < n; ++i) {
        const attnvk_device_info *d = &ctx->devices[i];
        len += (size_t)snprintf(out + len, n - len, "%s%d=%s:%d '%.40s'", i ? ", " : "", i, attnvk_api_name(d->api),
                                d->index, d->name);
    }
}

/* INVALID_ARGUMENT naming the first item of spec that matches no device (what
 * prefixes the message): a typo must not select nothing, or everything, silently. */
static attnvk_status check_spec(const attnvk_context *ctx, const char *what, const char *spec)
{
    if (!spec || !*spec) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%sis empty", what);
    if (strlen(spec) >= SPEC_MAX)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%sis longer than %d characters", what, SPEC_MAX - 1);
    if (spec[0] == ',' || spec[strlen(spec) - 1] == ',' || strstr(spec, ",,"))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s'%s' has an empty item", what, spec);
    char buf[SPEC_MAX];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = tok[strlen(tok) - 1] != ':'; /* "vulkan:" would match every vulkan device */
        for (int i = 0; found && i < ctx->device_count && found < 2; ++i) found += spec_matches(ctx, i, tok);
        if (found >= 2) continue;
        char api_part[32] = "";
        attnvk_api api;
        sscanf(tok, "%31[^:]", api_part);
        const char *why = "";
        if (attnvk_api_from_name(api_part, &api) && ctx->apis[api].status != ATTNVK_OK) why = ctx->apis[api].reason;
        if (*why)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "%s'%s' matches no device (%s unavailable: %s)", what, tok,
                            attnvk_api_name(api), why);
        char devices[1024];
        list_devices(ctx, devices, sizeof devices);
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "%s'%s' matches no device (name one by api, api:N, list position or name substring: %s)", what,
                        tok, devices);
    }
    return ATTNVK_OK;
}

attnvk_status attnvk_device_spec_check(const attnvk_context *ctx, const char *spec)
{
    return check_spec(ctx, "", spec);
}

/* ATTNVK_VISIBLE_DEVICES: unset or empty shows everything; otherwise every
 * item must match a device, so a typo does not hide every device silently. */
static attnvk_status apply_visible_devices(attnvk_context *ctx)
{
    const char *visible = getenv("ATTNVK_VISIBLE_DEVICES");
    if (!visible || !*visible) return ATTNVK_OK;
    attnvk_status s = check_spec(ctx, "ATTNVK_VISIBLE_DEVICES: ", visible);
    if (s != ATTNVK_OK) return s;
    int kept = 0;
    for (int i = 0; i < ctx->device_count; ++i) {
        /* position specs refer to the unfiltered list */
        if (matches_any(ctx, i, visible)) ctx->devices[kept++] = ctx->devices[i];
    }
    ctx->device_count = kept;
    return ATTNVK_OK;
}

attnvk_status attnvk_context_create(attnvk_context **out)
{
    attnvk_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        api_state *s = &ctx->apis[a];
        const char *why = NULL;
        s->backend = avk_backend_for((attnvk_api)a, &why);
        int count = 0;
        if (!s->backend) {
            s->status = ATTNVK_ERROR_UNAVAILABLE;
            snprintf(s->reason, sizeof s->reason, "%s", why);
            continue;
        }
        avk_clear_error();
        s->status = s->backend->init(&count);
        if (s->status == ATTNVK_OK && count == 0) {
            s->status = ATTNVK_ERROR_UNAVAILABLE;
            snprintf(s->reason, sizeof s->reason, "no %s devices found", attnvk_api_name((attnvk_api)a));
        } else if (s->status != ATTNVK_OK) {
            snprintf(s->reason, sizeof s->reason, "%s", *attnvk_last_error() ? attnvk_last_error() : "init failed");
        }
        if (s->status == ATTNVK_ERROR_INVALID_ARGUMENT) { /* the user's setting is wrong (ATTNVK_VK_PROFILE): say so */
            attnvk_status bad = s->status;
            char reason[sizeof s->reason];
            snprintf(reason, sizeof reason, "%s", s->reason);
            attnvk_context_destroy(ctx);
            return avk_fail(bad, "%s", reason);
        }
        if (s->status != ATTNVK_OK) continue;
        attnvk_device_info *grown = realloc(ctx->devices, sizeof *grown * (size_t)(ctx->device_count + count));
        if (!grown) {
            attnvk_context_destroy(ctx);
            return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
        ctx->devices = grown;
        for (int i = 0; i < count; ++i) {
            attnvk_device_info info;
            memset(&info, 0, sizeof info);
            if (s->backend->describe(i, &info) != ATTNVK_OK) continue;
            info.api = (attnvk_api)a;
            info.index = i;
            ctx->devices[ctx->device_count++] = info;
        }
    }
    avk_clear_error();
    attnvk_status s = apply_visible_devices(ctx);
    if (s != ATTNVK_OK) {
        char why[2048];
        snprintf(why, sizeof why, "%s", attnvk_last_error());
        attnvk_context_destroy(ctx);
        return avk_fail(s, "%s", why);
    }
    *out = ctx;
    return ATTNVK_OK;
}

void attnvk_context_destroy(attnvk_context *ctx)
{
    if (!ctx) return;
    for (int a = 0; a < ATTNVK_API_COUNT; ++a)
        if (ctx->apis[a].backend && ctx->apis[a].status == ATTNVK_OK && ctx->apis[a].backend->shutdown)
            ctx->apis[a].backend->shutdown();
    free(ctx->devices);
    free(ctx);
}

attnvk_status attnvk_api_status(const attnvk_context *ctx, attnvk_api api, const char **reason)
{
    if ((unsigned)api >= ATTNVK_API_COUNT) {
        if (reason) *reason = "unknown API";
        return ATTNVK_ERROR_INVALID_ARGUMENT;
    }
    if (reason) *reason = ctx->apis[api].status == ATTNVK_OK ? "" : ctx->apis[api].reason;
    return ctx->apis[api].status;
}

int attnvk_device_count(const attnvk_context *ctx) { return ctx->device_count; }

const attnvk_device_info *attnvk_device_info_at(const attnvk_context *ctx, int i)
{
    return (i >= 0 && i < ctx->device_count) ? &ctx->devices[i] : NULL;
}

attnvk_status attnvk_device_open(attnvk_context *ctx, int i, attnvk_device **out)
{
    if (i < 0 || i >= ctx->device_count)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "no device %d (%d visible)", i, ctx->device_count);
    attnvk_device *dev = calloc(1, sizeof *dev);
    if (!dev) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    dev->ctx = ctx;
    dev->info = ctx->devices[i];
    dev->backend = ctx->apis[dev->info.api].backend;
    attnvk_status s = dev->backend->open(dev->info.index, &dev->bdev);
    if (s != ATTNVK_OK) {
        free(dev);
        return s;
    }
    *out = dev;
    return ATTNVK_OK;
}

void attnvk_device_close(attnvk_device *dev)
{
    if (!dev) return;
    avk_device_settle(dev);
    dev->backend->close(dev->bdev);
    free(dev);
}

const attnvk_device_info *attnvk_device_info_of(const attnvk_device *dev) { return &dev->info; }

static attnvk_status measure_device_bandwidth(void *dev, double *gbps)
{
    attnvk_device *d = dev;
    return d->backend->read_bandwidth(d->bdev, gbps);
}

attnvk_status attnvk_cached_read_bandwidth(const attnvk_device_info *info, double *gbps)
{
    if (!info || !gbps) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "read bandwidth: NULL device info or output");
    return avk_bandwidth_lookup(info, 0, NULL, NULL, gbps, NULL);
}

attnvk_status attnvk_device_read_bandwidth(attnvk_device *dev, int allow_measure, double *gbps, int *cached)
{
    if (!dev || !gbps) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "read bandwidth: NULL device or output");
    return avk_bandwidth_lookup(&dev->info, allow_measure, dev->backend->read_bandwidth ? measure_device_bandwidth : NULL,
                                dev, gbps, cached);
}

int attnvk_device_implementations(attnvk_device *dev, attnvk_impl_info *out, int max)
{
    return dev->backend->implementations(dev->bdev, out, max);
}

attnvk_status attnvk_buffer_create(attnvk_device *dev, size_t bytes, attnvk_buffer **out)
{
    if (bytes == 0) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer size must be > 0");
    attnvk_buffer *buf = calloc(1, sizeof *buf);
    if (!buf) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    attnvk_status s = dev->backend->alloc(dev->bdev, bytes, &buf->bbuf);
    if (s != ATTNVK_OK) {
        free(buf);
        return s;
    }
    buf->dev = dev;
    buf->size = bytes;
    *out = buf;
    return ATTNVK_OK;
}

void attnvk_buffer_destroy(attnvk_buffer *buf)
{
    if (!buf) return;
    avk_device_settle(buf->dev); /* a pending run may still use it */
    buf->dev->backend->release(buf->dev->bdev, buf->bbuf);
    free(buf);
}

static attnvk_status check_range(const attnvk_buffer *buf, size_t offset, size_t bytes)
{
    if (offset > buf->size || bytes > buf->size - offset)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "range %zu+%zu outside a %zu-byte buffer", offset, bytes,
                        buf->size);
    return ATTNVK_OK;
}

attnvk_status attnvk_buffer_write(attnvk_buffer *buf, size_t offset, const void *src, size_t bytes)
{
    attnvk_status s = check_range(buf, offset, bytes);
    if (s == ATTNVK_OK) s = avk_device_settle(buf->dev);
    return s != ATTNVK_OK ? s : buf->dev->backend->upload(buf->dev->bdev, buf->bbuf, offset, src, bytes);
}

attnvk_status attnvk_buffer_read(attnvk_buffer *buf, size_t offset, void *dst, size_t bytes)
{
    attnvk_status s = check_range(buf, offset, bytes);
    if (s == ATTNVK_OK) s = avk_device_settle(buf->dev);
    return s != ATTNVK_OK ? s : buf->dev->backend->download(buf->dev->bdev, buf->bbuf, offset, dst, bytes);
}

/* A name no backend knows is a typo (invalid); a variant of another API's
 * kernel is merely not runnable here (unsupported), so a bench over several
 * APIs skips it where it does not apply. */
static attnvk_status check_names(const attnvk_device *dev, const attnvk_kernel_options *opts)
{
    char names[512];
    if (opts->implementation && !avk_name_in(attnvk_implementation_names(), opts->implementation)) {
        avk_join_names(attnvk_implementation_names(), names, sizeof names);
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown implementation '%s' (%s)", opts->implementation, names);
    }
    int flash = !opts->implementation || strcmp(opts->implementation, "attnvk") == 0;
    const char *const *variants = attnvk_api_variants(dev->info.api);
    if (flash && opts->variant && !avk_name_in(variants, opts->variant)) {
        int elsewhere = 0;
        for (int a = 0; a < ATTNVK_API_COUNT && !elsewhere; ++a)
            elsewhere = avk_name_in(attnvk_api_variants((attnvk_api)a), opts->variant);
        avk_join_names(variants, names, sizeof names);
        return avk_fail(elsewhere ? ATTNVK_ERROR_UNSUPPORTED : ATTNVK_ERROR_INVALID_ARGUMENT,
                        "%s has no variant '%s' (%s)", attnvk_api_name(dev->info.api), opts->variant, names);
    }
    return ATTNVK_OK;
}

/* Refuses, once and here, what the chosen implementation does not declare. */
static attnvk_status check_features(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts)
{
    const unsigned need = avk_problem_features(p);
    if (!need) return ATTNVK_OK;
    const char *name = opts->implementation ? opts->implementation : "attnvk";
    attnvk_impl_info impls[16];
    int n = dev->backend->implementations(dev->bdev, impls, 16);
    for (int i = 0; i < n; ++i) {
        if (strcmp(impls[i].name, name) != 0) continue;
        const unsigned missing = need & ~impls[i].features;
        if (!missing) return ATTNVK_OK;
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s on %s does not support %s", name,
                        attnvk_api_name(dev->info.api), avk_feature_name(missing));
    }
    return ATTNVK_OK; /* not offered here: prepare says why */
}

/* Dilated attention's groups as the kernels read them (AVK_FLAG_DILATED): int32 (segment, rate) pairs. */
static attnvk_status upload_dilation(attnvk_kernel *k)
{
    int32_t table[2 * ATTNVK_MAX_DILATED_GROUPS];
    const attnvk_problem *p = &k->problem;
    for (int g = 0; g < p->dilated_groups; ++g) table[2 * g] = p->dilated_segment[g], table[2 * g + 1] = p->dilated_rate[g];
    const size_t bytes = sizeof(int32_t) * 2 * (size_t)p->dilated_groups;
    attnvk_status s = attnvk_buffer_create(k->dev, bytes, &k->dilation);
    return s == ATTNVK_OK ? attnvk_buffer_write(k->dilation, 0, table, bytes) : s;
}

/* The backend's prepare inside one pick (core/tuning.h): explicit, when non-NULL, is the
 * entry its chooser must use; the pick's source joins info->params as "tuning=...". */
static attnvk_status prepare_picked(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                    const avk_tuning *explicit_entry, avk_pick_source explicit_source,
                                    attnvk_kernel **out, attnvk_kernel_info *info)
{
    attnvk_status s = attnvk_problem_validate(p);
    if (s != ATTNVK_OK) return s;
    /* the kernels size shared memory and grids from these in 32-bit math */
    if (opts->tile_br < 0 || opts->tile_bc < 0 || opts->split_kv < 0 || opts->tile_br > AVK_MAX_TILE ||
        opts->tile_bc > AVK_MAX_TILE || opts->split_kv > AVK_MAX_SPLIT_KV)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "tile sizes must be in 0..%d and the split count in 0..%d",
                        AVK_MAX_TILE, AVK_MAX_SPLIT_KV);
    s = check_names(dev, opts);
    if (s == ATTNVK_OK) s = check_features(dev, p, opts);
    if (s != ATTNVK_OK) return s;
    if (p->block_sparse && p->mask && dev->info.api != ATTNVK_API_CPU) /* the kernels read both through one binding */
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "attnvk on %s does not take a mask and a block layout together",
                        attnvk_api_name(dev->info.api));
    attnvk_kernel_info local_info;
    if (!info) info = &local_info;
    memset(info, 0, sizeof *info);
    attnvk_kernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    avk_pick_begin(explicit_entry, explicit_source);
    s = dev->backend->prepare(dev->bdev, p, opts, &k->bkernel, info);
    avk_pick_source source = avk_pick_end();
    if (s != ATTNVK_OK) {
        free(k);
        return s;
    }
    if (!info->implementation[0])
        snprintf(info->implementation, sizeof info->implementation, "%s",
                 opts->implementation ? opts->implementation : "attnvk");
    if (source != AVK_PICK_NONE && !explicit_entry && (opts->variant || opts->tile_br || opts->tile_bc))
        source = AVK_PICK_OPTION;
    size_t len = strlen(info->params);
    if (source != AVK_PICK_NONE && len + 16 < sizeof info->params)
        snprintf(info->params + len, sizeof info->params - len, "%stuning=%s", len ? " " : "", avk_pick_source_name(source));
    k->dev = dev;
    k->problem = *p;
    k->write_lse = opts->write_lse;
    s = p->dilated_groups ? upload_dilation(k) : ATTNVK_OK;
    if (s != ATTNVK_OK) {
        attnvk_kernel_destroy(k);
        return s;
    }
    *out = k;
    return ATTNVK_OK;
}

attnvk_status attnvk_kernel_prepare(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                    attnvk_kernel **out, attnvk_kernel_info *info)
{
    attnvk_kernel_options defaults = {0};
    if (!opts) opts = &defaults;
    /* attnvk's kernel with nothing named: the user's tuning file (attnvk tune) before the table */
    const int flash = !opts->implementation || strcmp(opts->implementation, "attnvk") == 0;
    avk_tuned_entry tuned;
    if (flash && !opts->variant && !opts->tile_br && !opts->tile_bc && attnvk_problem_validate(p) == ATTNVK_OK &&
        avk_user_tuning_find(&dev->info, p, &tuned)) {
        avk_tuning entry;
        avk_tuned_as_tuning(&tuned, &entry);
        attnvk_kernel_options with_split = *opts;
        if (!with_split.split_kv) with_split.split_kv = tuned.split_kv;
        attnvk_status s = prepare_picked(dev, p, &with_split, &entry, AVK_PICK_TUNED, out, info);
        /* an entry this shape or build cannot run gives way to the table (the source says so) */
        if (s == ATTNVK_OK || s == ATTNVK_ERROR_OUT_OF_MEMORY || s == ATTNVK_ERROR_DEVICE_LOST) return s;
        avk_clear_error();
    }
    return prepare_picked(dev, p, opts, NULL, AVK_PICK_NONE, out, info);
}

attnvk_status avk_kernel_prepare_explicit(attnvk_device *dev, const attnvk_problem *p,
                                          const attnvk_kernel_options *opts, const avk_tuning *entry,
                                          attnvk_kernel **out, attnvk_kernel_info *info)
{
    if (opts->variant || opts->tile_br || opts->tile_bc || (opts->implementation && strcmp(opts->implementation, "attnvk")))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "an explicit configuration is attnvk's kernel with no variant or tile named");
    return prepare_picked(dev, p, opts, entry, AVK_PICK_OPTION, out, info);
}

int avk_device_tuning_candidates(attnvk_device *dev, const attnvk_problem *p, avk_tuning *out, int max)
{
    if (!dev->backend->tuning_candidates || attnvk_problem_validate(p) != ATTNVK_OK) return 0;
    return dev->backend->tuning_candidates(dev->bdev, p, out, max);
}

avk_pick_source avk_device_default_source(const attnvk_context *ctx, int i)
{
    const attnvk_device_info *d = attnvk_device_info_at(ctx, i);
    if (!d) return AVK_PICK_NONE;
    attnvk_device_info again;
    memset(&again, 0, sizeof again);
    avk_pick_begin(NULL, AVK_PICK_NONE);
    attnvk_status s = ctx->apis[d->api].backend->describe(d->index, &again); /* describe picks the default variant */
    avk_pick_source source = avk_pick_end();
    avk_clear_error();
    return s == ATTNVK_OK ? source : AVK_PICK_NONE;
}

attnvk_status attnvk_kernel_run(attnvk_kernel *k, attnvk_buffer *q, attnvk_buffer *kb, attnvk_buffer *v,
                                attnvk_buffer *o, attnvk_buffer *lse, int q_begin, int q_count, double *device_ms)
{
    const attnvk_tensors t = {.q = q, .k = kb, .v = v, .o = o, .lse = lse};
    return attnvk_kernel_run_tensors(k, &t, q_begin, q_count, device_ms);
}

static attnvk_status need_buffer(const attnvk_buffer *b, size_t bytes, const char *what)
{
    if (!b) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "this problem needs a %s buffer (%zu bytes)", what, bytes);
    if (b->size < bytes)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "the %s buffer holds %zu bytes; it needs %zu", what, b->size,
                        bytes);
    return ATTNVK_OK;
}

attnvk_status attnvk_kernel_run_tensors(attnvk_kernel *k, const attnvk_tensors *t, int q_begin, int q_count,
                                        double *device_ms)
{
    return attnvk_kernel_run_repeated(k, t, q_begin, q_count, 1, device_ms);
}

attnvk_status attnvk_kernel_run_repeated(attnvk_kernel *k, const attnvk_tensors *t, int q_begin, int q_count,
                                         int launches, double *mean_ms)
{
    avk_dispatch args;
    attnvk_status s = avk_dispatch_fill(k, t, q_begin, q_count, launches, &args);
    if (s == ATTNVK_OK) s = avk_device_settle(k->dev);
    if (s != ATTNVK_OK) return s;
    double ms = 0;
    s = k->dev->backend->dispatch(k->dev->bdev, k->bkernel, &args, &ms);
    if (mean_ms) *mean_ms = ms;
    return s;
}

attnvk_status avk_dispatch_fill(const attnvk_kernel *k, const attnvk_tensors *t, int q_begin, int q_count,
                                int launches, avk_dispatch *out)
{
    if (!k || !t) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "no kernel or tensors given");
    if (launches < 1 || launches > ATTNVK_MAX_LAUNCHES)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "launches %d outside 1..%d", launches, ATTNVK_MAX_LAUNCHES);
    const attnvk_problem *p = &k->problem;
    /* fp8 queries are one byte an element; O keeps the dtype */
    size_t q_bytes = avk_q_bytes(p), o_bytes = attnvk_o_elements(p) * attnvk_dtype_size(p->dtype),
           kv_bytes = attnvk_kv_bytes(p), v_bytes = attnvk_v_bytes(p);
    if (!t->q || !t->k || !t->v || !t->o)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "Q, K, V and O buffers are required");
    if (t->q->size < q_bytes || t->o->size < o_bytes)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "Q/O buffers need %zu/%zu bytes", q_bytes, o_bytes);
    if (t->k->size < kv_bytes || t->v->size < v_bytes)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "K/V buffers need %zu/%zu bytes", kv_bytes, v_bytes);
    if (k->write_lse && (!t->lse || t->lse->size < (size_t)p->batch * p->heads * p->seq_q * sizeof(float)))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "kernel writes LSE: an LSE buffer of B*H*Nq floats is required");
    attnvk_status s = ATTNVK_OK;
    if (p->page_size > 0)
        s = need_buffer(t->block_table, (size_t)p->batch * p->max_pages * sizeof(int32_t), "block table");
    if (s == ATTNVK_OK && avk_problem_has_seq_lens(p))
        s = need_buffer(t->seq_lens, (size_t)p->batch * sizeof(int32_t), "seq_lens");
    if (s == ATTNVK_OK && p->kv_format == ATTNVK_KV_FP8)
        s = need_buffer(t->kv_scales, 2 * (size_t)p->kv_heads * sizeof(float), "kv scales");
    if (s == ATTNVK_OK && avk_q_is_fp8(p)) s = need_buffer(t->q_scales, (size_t)p->heads * sizeof(float), "q scales");
    if (s == ATTNVK_OK && p->mask)
        s = need_buffer(t->mask,
                        (size_t)p->mask_batch * p->mask_heads * p->seq_q * p->seq_kv * attnvk_dtype_size(p->mask_dtype),
                        "mask");
    if (s == ATTNVK_OK && p->sinks) s = need_buffer(t->sinks, (size_t)p->heads * sizeof(float), "sinks");
    if (s == ATTNVK_OK && p->alibi) s = need_buffer(t->alibi_slopes, (size_t)p->heads * sizeof(float), "ALiBi slopes");
    if (s == ATTNVK_OK && p->block_sparse) s = need_buffer(t->block_layout, attnvk_block_layout_bytes(p), "block layout");
    if (s != ATTNVK_OK) return s;
    if (q_count == 0 && q_begin == 0) q_count = p->seq_q;
    if (q_begin < 0 || q_count < 1 || q_begin > p->seq_q - q_count)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "query rows %d+%d outside 0..%d", q_begin, q_count, p->seq_q);
    const attnvk_buffer *all[] = {t->q,        t->k,         t->v,    t->o,     t->lse,          t->block_table,
                                  t->seq_lens, t->kv_scales, t->mask, t->sinks, t->alibi_slopes, t->block_layout,
                                  t->q_scales};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (all[i] && all[i]->dev != k->dev)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer belongs to another device");
#define BBUF(x) ((x) ? (x)->bbuf : NULL)
    avk_dispatch args = {t->q->bbuf, t->k->bbuf, t->v->bbuf, t->o->bbuf, k->write_lse ? BBUF(t->lse) : NULL,
                         p->page_size > 0 ? BBUF(t->block_table) : NULL,
                         avk_problem_has_seq_lens(p) ? BBUF(t->seq_lens) : NULL,
                         p->kv_format == ATTNVK_KV_FP8 ? BBUF(t->kv_scales) : NULL, q_begin, q_count, launches,
                         /* a sparse pattern takes the mask's binding (prepare refused a mask beside a layout) */
                         p->mask ? BBUF(t->mask) : p->block_sparse ? BBUF(t->block_layout) : BBUF(k->dilation),
                         p->sinks ? BBUF(t->sinks) : NULL,
                         p->alibi ? BBUF(t->alibi_slopes) : NULL, 0, NULL, p->block_sparse ? BBUF(t->block_layout) : NULL,
                         avk_q_is_fp8(p) ? BBUF(t->q_scales) : NULL};
#undef BBUF
    *out = args;
    return ATTNVK_OK;
}

void attnvk_kernel_destroy(attnvk_kernel *k)
{
    if (!k) return;
    avk_device_settle(k->dev); /* its workspace may be in use */
    if (k->bkernel) k->dev->backend->release_kernel(k->dev->bdev, k->bkernel);
    attnvk_buffer_destroy(k->dilation);
    free(k);
}
