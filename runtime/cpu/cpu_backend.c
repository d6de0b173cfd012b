/* The CPU "device": host memory, attnvk's own f32 flash attention as its
 * kernel (cpu_flash.c, variant flash-f32), the float64 reference as a
 * variant that is not timed by default (reference-f64), and OpenBLAS's
 * unfused attention as its vendor baseline (cpu_openblas.c), so the bench
 * and tests run the same way on a machine with no GPU at all. */
#include "core/backend.h"
#include "core/test_hooks.h"
#include "core/bandwidth.h"
#include "core/peak.h"
#ifdef ATTNVK_HAVE_CPU_PEAK
#include "cpu/cpu_peak.h"
#endif
#include "core/names.h"
#include "core/q_format.h"
#include "core/reference.h"
#include "core/ring_merge.h"
#include "cpu/cpu_flash.h"
#include "cpu/cpu_tuning.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct avk_bdev { int unused; };
struct avk_bbuf { size_t size; unsigned char *data; int borrowed; /* the caller's memory (wrap) */ };
enum cpu_kernel_kind { CPU_FLASH, CPU_REFERENCE, CPU_OPENBLAS };
struct avk_bkernel {
    attnvk_problem p;
    enum cpu_kernel_kind kind;
    int drop_keys; /* ATTNVK_TEST_SKIP_LAST_KV_TILE (attnvk's kernels; the baseline runs normally) */
    int rows, tile_bc; /* flash-f32's tiles (cpu_tuning.c) */
};

enum { CPU_TEST_TILE = 64 }; /* the "tile" the test-only wrong kernel skips */

static attnvk_status cpu_init(int *count)
{
    *count = 1;
    return ATTNVK_OK;
}

static void read_cpu_name(char *out, size_t n)
{
    snprintf(out, n, "host CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon += 2;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(out, n, "%s", colon);
            }
            break;
        }
    }
    fclose(f);
}

static attnvk_status cpu_describe(int device, attnvk_device_info *info)
{
    (void)device;
    read_cpu_name(info->name, sizeof info->name);
    snprintf(info->vendor, sizeof info->vendor, "attnvk");
    snprintf(info->driver_version, sizeof info->driver_version, "%s", ATTNVK_VERSION_STRING);
    snprintf(info->api_version, sizeof info->api_version, "host (%s)", avk_cpu_flash_isa());
    snprintf(info->architecture, sizeof info->architecture, "host");
    const attnvk_problem d128 = {.batch = 1, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096,
                                 .head_dim = 128, .dtype = ATTNVK_F32};
    int rows = AVK_CPU_ROWS, tile_bc = AVK_CPU_TILE_BC;
    avk_cpu_pick_tiles(&d128, &rows, &tile_bc); /* the table's, noted for `attnvk devices` */
    snprintf(info->default_variant, sizeof info->default_variant, "flash-f32");
    info->type = ATTNVK_DEVICE_CPU;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    info->compute_units = avk_cpu_threads();
    info->fp16 = 1; /* storage: converted to f32 for the arithmetic */
    info->bf16 = 1;
    return ATTNVK_OK;
}

static attnvk_status cpu_open(int device, avk_bdev **out)
{
    (void)device;
    *out = calloc(1, sizeof **out);
    return *out ? ATTNVK_OK : avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
}

static void cpu_close(avk_bdev *dev) { free(dev); }

static attnvk_status cpu_alloc(avk_bdev *dev, size_t bytes, avk_bbuf **out)
{
    (void)dev;
    avk_bbuf *b = calloc(1, sizeof *b);
    if (b) b->data = malloc(bytes);
    if (!b || !b->data) {
        free(b);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
    }
    b->size = bytes;
    *out = b;
    return ATTNVK_OK;
}

static void cpu_release(avk_bdev *dev, avk_bbuf *buf)
{
    (void)dev;
    if (buf && !buf->borrowed) free(buf->data);
    free(buf);
}

/* The CPU device's memory is host memory: handle is a host pointer. Its
 * kernels read f32 and int32 words in place, so the address is 4-aligned. */
enum { CPU_WRAP_ALIGNMENT = 4 };

static attnvk_status cpu_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out)
{
    (void)dev;
    unsigned char *data = (unsigned char *)ext->handle + ext->offset;
    if ((uintptr_t)data % CPU_WRAP_ALIGNMENT)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "buffer wrap: cpu address %p (handle + offset %zu) is not %d-byte aligned",
                        (void *)data, ext->offset, CPU_WRAP_ALIGNMENT);
    avk_bbuf *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    b->data = data;
    b->size = ext->bytes;
    b->borrowed = 1;
    *out = b;
    return ATTNVK_OK;
}

static attnvk_status cpu_native(avk_bdev *dev, attnvk_native_handles *out)
{
    (void)dev;
    out->wrap_alignment = CPU_WRAP_ALIGNMENT;
    return ATTNVK_OK;
}

/* Runs finish before dispatch returns: nothing is ever pending. */
static attnvk_status cpu_wait(avk_bdev *dev)
{
    (void)dev;
    return ATTNVK_OK;
}

static attnvk_status cpu_upload(avk_bdev *dev, avk_bbuf *buf, size_t off, const void *src, size_t bytes)
{
    (void)dev;
    memcpy(buf->data + off, src, bytes);
    return ATTNVK_OK;
}

static attnvk_status cpu_download(avk_bdev *dev, avk_bbuf *buf, size_t off, void *dst, size_t bytes)
{
    (void)dev;
    memcpy(dst, buf->data + off, bytes);
    return ATTNVK_OK;
}

static int cpu_implementations(avk_bdev *dev, attnvk_impl_info *out, int max)
{
    (void)dev;
    const int n = 2; /* attnvk's kernel, the OpenBLAS baseline */
    if (max < 1) return n;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "attnvk");
    out->fused = 1;
    out->available = 1;
    out->features = ATTNVK_FEATURE_PAGED | ATTNVK_FEATURE_RAGGED | ATTNVK_FEATURE_KV_Q8_0 | ATTNVK_FEATURE_KV_Q4_0 |
                    ATTNVK_FEATURE_KV_FP8 | ATTNVK_FEATURE_SOFTCAP | ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_ALIBI |
                    ATTNVK_FEATURE_SINKS | ATTNVK_FEATURE_MASK | ATTNVK_FEATURE_TOP_LEFT | ATTNVK_FEATURE_HEAD_DIM_V |
                    ATTNVK_FEATURE_POSITION_OFFSET | ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED |
                    ATTNVK_FEATURE_Q_FP8; /* decoded to f32 first: the CPU checks the FP8 forward's plumbing */
    if (max < 2) return n;
    const char *why = "";
    memset(&out[1], 0, sizeof out[1]);
    snprintf(out[1].name, sizeof out[1].name, "openblas");
    out[1].fused = 0;
    out[1].available = avk_openblas_available(&why);
    /* its row softmax applies every score modification; P V runs over Dv */
    out[1].features = ATTNVK_FEATURE_RAGGED | ATTNVK_FEATURE_SOFTCAP | ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_ALIBI |
                      ATTNVK_FEATURE_SINKS | ATTNVK_FEATURE_MASK | ATTNVK_FEATURE_TOP_LEFT |
                      ATTNVK_FEATURE_HEAD_DIM_V | ATTNVK_FEATURE_POSITION_OFFSET | /* i' from core/layout.h */
                      ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED;   /* as a dense mask (core/sparse.h) */
    snprintf(out[1].reason, sizeof out[1].reason, "%s", why);
    return n;
}

static attnvk_status cpu_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                 avk_bkernel **out, attnvk_kernel_info *info)
{
    (void)dev;
    const char *impl = opts->implementation ? opts->implementation : "attnvk";
    enum cpu_kernel_kind kind = CPU_FLASH;
    if (strcmp(impl, "openblas") == 0) {
        const char *why = "";
        if (!avk_openblas_available(&why)) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "openblas unavailable: %s", why);
        if (opts->variant && strcmp(opts->variant, "sgemm") != 0)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "openblas has one variant, sgemm (got '%s')", opts->variant);
        attnvk_status s = avk_openblas_check(p);
        if (s != ATTNVK_OK) return s;
        kind = CPU_OPENBLAS;
    } else if (strcmp(impl, "attnvk") != 0) {
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the cpu API has no '%s' implementation (attnvk, openblas)", impl);
    } else if (opts->variant && strcmp(opts->variant, "reference-f64") == 0) {
        kind = CPU_REFERENCE;
    } else if (opts->variant && strcmp(opts->variant, "flash-f32") != 0) {
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown cpu variant '%s' (flash-f32, reference-f64)",
                        opts->variant);
    }
    int rows = 0, tile_bc = 0;
    if (kind == CPU_FLASH) {
        attnvk_status s = avk_cpu_pick_tiles(p, &rows, &tile_bc);
        if (s != ATTNVK_OK) return s;
    }
    avk_bkernel *k = calloc(1, sizeof *k);
    if (!k) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    k->p = *p;
    k->kind = kind;
    k->rows = rows;
    k->tile_bc = tile_bc;
    k->drop_keys = kind != CPU_OPENBLAS && (opts->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) ? CPU_TEST_TILE : 0;
    info->workgroup_size = 1;
    info->split_kv = 1;
    if (kind == CPU_FLASH) {
        const int group = p->heads / p->kv_heads, queries = group >= rows ? 1 : rows / group;
        snprintf(info->variant, sizeof info->variant, "flash-f32");
        info->tile_br = queries * group;
        info->tile_bc = tile_bc;
        snprintf(info->params, sizeof info->params, "threads=%d isa=%s", avk_cpu_threads(), avk_cpu_flash_isa());
    } else if (kind == CPU_REFERENCE) {
        snprintf(info->variant, sizeof info->variant, "reference-f64");
        info->tile_br = 1;
        info->tile_bc = p->seq_kv;
        snprintf(info->params, sizeof info->params, "threads=%d", avk_cpu_threads());
    } else {
        snprintf(info->implementation, sizeof info->implementation, "openblas");
        snprintf(info->variant, sizeof info->variant, "sgemm");
        info->tile_br = 0;
        info->tile_bc = p->seq_kv;
        snprintf(info->params, sizeof info->params, "%.200s", avk_openblas_config());
    }
    *out = k;
    return ATTNVK_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Float tensors from dtype storage: the reference works on f32 values. */
static float *to_f32(attnvk_dtype dt, const avk_bbuf *b, size_t n)
{
    float *f = malloc(n * sizeof(float));
    if (f) attnvk_unpack(dt, b->data, f, n);
    return f;
}

/* K or V as the reference reads it: contiguous f32, whatever the cache's
 * paging and format (the same decode the GPU kernels do). */
static float *kv_to_f32(const attnvk_problem *p, const avk_dispatch *a, const avk_bbuf *b, int which)
{
    float *f = malloc((which ? attnvk_v_elements(p) : attnvk_kv_elements(p)) * sizeof(float));
    if (!f) return NULL;
    attnvk_status s = attnvk_kv_gather(p, b->data, a->block_table ? (const int32_t *)a->block_table->data : NULL,
                                       a->seq_lens ? (const int32_t *)a->seq_lens->data : NULL,
                                       a->kv_scales ? (const float *)a->kv_scales->data : NULL, which, f);
    if (s != ATTNVK_OK) {
        free(f);
        return NULL;
    }
    return f;
}

static attnvk_status run_once(avk_bkernel *k, const avk_dispatch *a, double *device_ms)
{
    const attnvk_problem *p = &k->p;
    size_t nq = attnvk_q_elements(p), no = attnvk_o_elements(p);
    double t0 = now_ms();
    float *q = malloc(nq * sizeof(float)), *kk = kv_to_f32(p, a, a->k, 0), *v = kv_to_f32(p, a, a->v, 1);
    float *o = to_f32(p->dtype, a->o, no); /* keeps rows outside the range */
    if (q) avk_q_decode(p, a->q->data, a->q_scales ? (const float *)a->q_scales->data : NULL, q);
    float *mask = p->mask ? to_f32(p->mask_dtype, a->mask,
                                   (size_t)p->mask_batch * p->mask_heads * p->seq_q * (size_t)p->seq_kv)
                          : NULL;
    size_t nrows = (size_t)p->batch * p->heads * (size_t)a->q_count;
    size_t *rows = malloc(sizeof(size_t) * nrows);
    attnvk_status s = ATTNVK_OK;
    if (!q || !kk || !v || !o || !rows || (p->mask && !mask)) {
        s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    } else {
        size_t r = 0;
        for (size_t bh = 0; bh < (size_t)p->batch * p->heads; ++bh)
            for (int i = a->q_begin; i < a->q_begin + a->q_count; ++i) rows[r++] = bh * p->seq_q + i;
        avk_reference_job job = {.p = p, .q = q, .k = kk, .v = v, .rows = rows, .nrows = nrows,
                                 .kv_lens = a->seq_lens ? (const int32_t *)a->seq_lens->data : NULL,
                                 .mask = mask, .sinks = a->sinks ? (const float *)a->sinks->data : NULL,
                                 .alibi_slopes = a->alibi_slopes ? (const float *)a->alibi_slopes->data : NULL,
                                 .block_layout = a->block_layout ? a->block_layout->data : NULL, .drop_keys = k->drop_keys, .out_f32 = o,
                                 .lse_f32 = a->lse ? (float *)a->lse->data : NULL};
        avk_reference_run(&job);
        attnvk_pack(p->dtype, o, a->o->data, no);
    }
    *device_ms = now_ms() - t0;
    free(q);
    free(kk);
    free(v);
    free(o);
    free(mask);
    free(rows);
    return s;
}

static const void *data_of(const avk_bbuf *b) { return b ? b->data : NULL; }

/* attnvk's flash kernel or the OpenBLAS baseline on the buffers, in place */
static attnvk_status run_job(avk_bkernel *k, const avk_dispatch *a, double *device_ms)
{
    avk_cpu_job job = {.p = &k->p, .q = a->q->data, .k = a->k->data, .v = a->v->data, .o = a->o->data,
                       .lse = a->lse ? (float *)a->lse->data : NULL,
                       .block_table = data_of(a->block_table), .seq_lens = data_of(a->seq_lens),
                       .kv_scales = data_of(a->kv_scales), .q_scales = data_of(a->q_scales),
                       .mask = data_of(a->mask), .sinks = data_of(a->sinks),
                       .alibi_slopes = data_of(a->alibi_slopes), .block_layout = data_of(a->block_layout),
                       .q_begin = a->q_begin, .q_count = a->q_count, .drop_keys = k->drop_keys,
                       .tile_bc = k->tile_bc, .rows = k->rows};
    double t0 = now_ms();
    attnvk_status s = k->kind == CPU_OPENBLAS ? avk_openblas_run(&job) : avk_cpu_flash_run(&job);
    *device_ms = now_ms() - t0;
    return s;
}

static attnvk_status cpu_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *device_ms)
{
    (void)dev;
    double total = 0, ms = 0;
    attnvk_status s = ATTNVK_OK;
    for (int i = 0; i < a->launches && s == ATTNVK_OK; ++i) {
        s = k->kind == CPU_REFERENCE ? run_once(k, a, &ms) : run_job(k, a, &ms);
        total += ms;
    }
    *device_ms = total / a->launches;
    return s;
}

/* reference-f64's backward: the float64 oracle on f32 copies (it recomputes O and the LSE itself) */
static attnvk_status reference_backward(avk_bkernel *k, const avk_backward_dispatch *a)
{
    const attnvk_problem *p = &k->p;
    const avk_dispatch *f = &a->fwd;
    const size_t nq = attnvk_q_elements(p), nk = attnvk_kv_elements(p), nv = attnvk_v_elements(p);
    const size_t no = attnvk_o_elements(p);
    const size_t nmask = p->mask ? (size_t)p->mask_batch * p->mask_heads * p->seq_q * (size_t)p->seq_kv : 0;
    float *q = to_f32(p->dtype, f->q, nq), *kk = to_f32(p->dtype, f->k, nk), *v = to_f32(p->dtype, f->v, nv);
    float *d_o = to_f32(p->dtype, a->d_o, no), *mask = p->mask ? to_f32(p->mask_dtype, f->mask, nmask) : NULL;
    float *dq = malloc(sizeof(float) * nq), *dk = malloc(sizeof(float) * nk), *dv = malloc(sizeof(float) * nv);
    attnvk_status s = ATTNVK_OK;
    if (!q || !kk || !v || !d_o || !dq || !dk || !dv || (p->mask && !mask)) {
        s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    } else {
        const attnvk_host_inputs in = {.q = q, .k = kk, .v = v, .mask = mask,
                                       .kv_lens = f->seq_lens ? (const int32_t *)f->seq_lens->data : NULL,
                                       .sinks = f->sinks ? (const float *)f->sinks->data : NULL,
                                       .alibi_slopes = f->alibi_slopes ? (const float *)f->alibi_slopes->data : NULL};
        const attnvk_host_grads g = {.d_o = d_o, .dq = dq, .dk = dk, .dv = dv,
                                     .d_sinks = a->d_sinks ? (float *)a->d_sinks->data : NULL};
        attnvk_reference_backward(p, &in, &g);
        attnvk_pack(p->dtype, dq, a->dq->data, nq);
        attnvk_pack(p->dtype, dk, a->dk->data, nk);
        attnvk_pack(p->dtype, dv, a->dv->data, nv);
    }
    float *all[] = {q, kk, v, d_o, mask, dq, dk, dv};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) free(all[i]);
    return s;
}

/* attnvk_kernel_backward: flash-f32's backward (cpu_backward.c, always deterministic) or the oracle's */
static attnvk_status cpu_backward(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *a, double *device_ms)
{
    (void)dev;
    if (k->kind == CPU_OPENBLAS)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "openblas on cpu has no backward pass (attnvk's kernel has)");
    const avk_dispatch *f = &a->fwd;
    double t0 = now_ms();
    attnvk_status s;
    if (k->kind == CPU_REFERENCE) {
        s = reference_backward(k, a);
    } else {
        const avk_cpu_backward_job job = {
            .fwd = {.p = &k->p, .q = f->q->data, .k = f->k->data, .v = f->v->data, .o = f->o->data,
                    .lse = (float *)f->lse->data, .seq_lens = data_of(f->seq_lens), .mask = data_of(f->mask),
                    .sinks = data_of(f->sinks), .alibi_slopes = data_of(f->alibi_slopes), .q_begin = 0,
                    .q_count = k->p.seq_q},
            .d_o = a->d_o->data, .dq = a->dq->data, .dk = a->dk->data, .dv = a->dv->data,
            .d_sinks = a->d_sinks ? (float *)a->d_sinks->data : NULL};
        s = avk_cpu_backward_run(&job);
    }
    *device_ms = now_ms() - t0;
    snprintf(a->info->implementation, sizeof a->info->implementation, "%s", k->kind == CPU_REFERENCE ? "reference" : "attnvk");
    snprintf(a->info->variant, sizeof a->info->variant, "%s", k->kind == CPU_REFERENCE ? "bwd-float64" : "bwd-flash-f32");
    return s;
}

static void cpu_release_kernel(avk_bdev *dev, avk_bkernel *k)
{
    (void)dev;
    free(k);
}

/* 256 MiB: past any host's last-level cache, and read 5 times in well under a second. */
static attnvk_status cpu_read_bandwidth(avk_bdev *dev, double *gbps)
{
    (void)dev;
    return avk_host_read_bandwidth((size_t)256 << 20, gbps);
}

/* `attnvk peak` on the host (core/peak.h): a threaded memcpy for copy bandwidth,
 * cpu/cpu_peak.c's FMA loop for f32 when it is built in; no f16 or matrix path. */
static attnvk_status cpu_measure_peak(avk_bdev *dev, int kind, struct avk_peak_sample *out)
{
    (void)dev;
    switch (kind) {
    case AVK_PEAK_COPY:
        return avk_host_copy_bandwidth((size_t)128 << 20, &out->value);
    case AVK_PEAK_FMA_F32:
#ifdef ATTNVK_HAVE_CPU_PEAK
        snprintf(out->path, sizeof out->path, "host FMA");
        return avk_host_fma_peak(&out->value);
#else
        return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "the host FMA measurement (cpu/cpu_peak.c) is not built in");
#endif
    case AVK_PEAK_FMA_F16:
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the CPU device computes in f32 (f16 is storage only)");
    case AVK_PEAK_MATRIX:
        snprintf(out->path, sizeof out->path, "none");
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the CPU device has no matrix path (its kernels run f32 vector FMAs)");
    default:
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown peak kind %d", kind);
    }
}

static void cpu_shutdown(void) { avk_openblas_unload(); }

static int cpu_tuning_candidates(avk_bdev *dev, const attnvk_problem *p, avk_tuning *out, int max)
{
    (void)dev;
    return avk_cpu_tuning_candidates(p, out, max);
}

/* flash-f32: attnvk's kernel (the default); reference-f64: the oracle itself */
static const char *const cpu_variants[] = {"flash-f32", "reference-f64", NULL};

static attnvk_status cpu_merge(avk_bdev *dev, const avk_merge_args *a)
{
    (void)dev;
    const avk_host_merge m = {.o_part = a->o_part->data, .lse_part = (const float *)a->lse_part->data,
                              .o_acc = (float *)a->o_acc->data, .lse_acc = (float *)a->lse_acc->data,
                              .o_out = a->o_out ? a->o_out->data : NULL,
                              .dtype = a->dtype, .batch = a->batch, .heads = a->heads,
                              .rows_per_head = a->rows_per_head, .dv = a->dv, .first = a->first};
    avk_ring_merge_host(&m);
    return ATTNVK_OK;
}

const attnvk_backend avk_backend_cpu = {
    .api = ATTNVK_API_CPU,
    .init = cpu_init,
    .describe = cpu_describe,
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_upload,
    .download = cpu_download,
    .implementations = cpu_implementations,
    .prepare = cpu_prepare,
    .dispatch = cpu_dispatch,
    .release_kernel = cpu_release_kernel,
    .shutdown = cpu_shutdown,
    .variants = cpu_variants,
    .read_bandwidth = cpu_read_bandwidth,
    .measure_peak = cpu_measure_peak,
    .wrap = cpu_wrap,
    .native = cpu_native,
    .wait = cpu_wait,
    .tuning_candidates = cpu_tuning_candidates,
    .backward = cpu_backward,
    .merge = cpu_merge,
};
