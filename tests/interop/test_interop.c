/* Interop and async runs through the public API only (issue #17), linked
 * against libattnvk.so like any application:
 *   - memory the application allocates on attnvk's own device objects
 *     (attnvk_device_native) is wrapped at non-zero offsets, filled with fresh
 *     random inputs through the application's API, O poisoned with NaN, and
 *     attention on it is checked against the float64 reference at the
 *     dtype's tolerance: synchronous, async + attnvk_device_wait, two async
 *     runs read back with no wait (ordering), and on the application's own
 *     queue/stream where the API has one;
 *   - attnvk_buffer_write/read on wrapped buffers go to the same bytes;
 *   - destroying a wrapper leaves the application's memory intact;
 *   - bad wraps and bad run options are one-line INVALID_ARGUMENT errors.
 * usage: test_interop cpu|vulkan|opencl|cuda   (exit 77: no such device here) */
#include "interop_memory.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures, passes;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond) {                                                               \
            ++passes;                                                             \
        } else {                                                                  \
            ++failures;                                                           \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

/* ---- the CPU device: host memory ---- */
static int cpu_alloc(const attnvk_native_handles *nh, size_t bytes, ext_memory *m)
{
    memset(m, 0, sizeof *m);
    m->native = nh;
    m->bytes = bytes;
    m->host = m->handle = aligned_alloc(64, (bytes + 63) / 64 * 64);
    return m->host == NULL;
}
static int cpu_write(ext_memory *m, size_t off, const void *src, size_t n) { return !memcpy((char *)m->host + off, src, n); }
static int cpu_read(ext_memory *m, size_t off, void *dst, size_t n) { return !memcpy(dst, (char *)m->host + off, n); }
static void cpu_release(ext_memory *m) { free(m->host); }
const ext_provider interop_cpu_memory = {
    .api = ATTNVK_API_CPU, .alloc = cpu_alloc, .write = cpu_write, .read = cpu_read, .release = cpu_release,
};

static const ext_provider *provider_for(attnvk_api api)
{
    switch (api) {
    case ATTNVK_API_CPU: return &interop_cpu_memory;
#ifdef INTEROP_HAVE_VULKAN
    case ATTNVK_API_VULKAN: return &interop_vulkan_memory;
#endif
#ifdef INTEROP_HAVE_OPENCL
    case ATTNVK_API_OPENCL: return &interop_opencl_memory;
#endif
#ifdef INTEROP_HAVE_CUDA
    case ATTNVK_API_CUDA: return &interop_cuda_memory;
#endif
    default: return NULL;
    }
}

/* ---- one problem on wrapped memory ---- */
enum { T_Q, T_K, T_V, T_O, T_COUNT };
static const char *const tensor_names[T_COUNT] = {"Q", "K", "V", "O"};

typedef struct fixture {
    attnvk_device *dev;
    const ext_provider *pv;
    const attnvk_native_handles *nh;
    attnvk_problem p;
    ext_memory mem;              /* one allocation holds Q, K, V and O */
    size_t offset[T_COUNT], bytes[T_COUNT];
    attnvk_buffer *buf[T_COUNT];
    float *q, *k, *v;            /* host inputs, rounded to the dtype */
    float *o;                    /* the output read back, as f32 */
    void *packed;                /* staging for dtype bytes */
} fixture;

static size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static attnvk_status wrap(fixture *f, size_t offset, size_t bytes, attnvk_buffer **out)
{
    const attnvk_external_buffer ext = {.api = f->pv->api, .handle = f->mem.handle, .memory = f->mem.memory,
                                        .offset = offset, .bytes = bytes};
    return attnvk_buffer_wrap(f->dev, &ext, out);
}

static int write_tensor(fixture *f, int t, const float *src, size_t n)
{
    attnvk_pack(f->p.dtype, src, f->packed, n);
    return f->pv->write(&f->mem, f->offset[t], f->packed, f->bytes[t]);
}

/* O as the application sees it (its own API), unpacked into f->o. */
static int read_output(fixture *f)
{
    if (f->pv->read(&f->mem, f->offset[T_O], f->packed, f->bytes[T_O])) return 1;
    attnvk_unpack(f->p.dtype, f->packed, f->o, attnvk_o_elements(&f->p));
    return 0;
}

static void poison_output(fixture *f)
{
    const size_t n = attnvk_o_elements(&f->p);
    for (size_t i = 0; i < n; ++i) f->o[i] = NAN;
    CHECK(write_tensor(f, T_O, f->o, n) == 0, "poisoning O");
}

static void check_output(fixture *f, const char *what)
{
    CHECK(read_output(f) == 0, "%s: reading O", what);
    attnvk_check c = attnvk_check_output(&f->p, f->q, f->k, f->v, f->o, NULL, 0);
    printf("%s %s %s: rel_l2 %.3g (tolerance %.0e)%s\n", c.passed ? "ok" : "FAIL",
           attnvk_api_name(f->pv->api), what, c.rel_l2, c.tolerance, c.nonfinite ? " NaN/Inf in O" : "");
    CHECK(c.passed, "%s: rel_l2 %g, %zu non-finite", what, c.rel_l2, c.nonfinite);
}

static int setup(fixture *f, attnvk_dtype dtype, uint64_t seed)
{
    attnvk_problem_init(&f->p);
    f->p.batch = 2, f->p.heads = 4, f->p.kv_heads = 2, f->p.seq_q = 19, f->p.seq_kv = 45, f->p.head_dim = 64;
    f->p.causal = 1, f->p.dtype = dtype;
    const size_t es = attnvk_dtype_size(dtype), nq = attnvk_q_elements(&f->p), nkv = attnvk_kv_elements(&f->p);
    f->bytes[T_Q] = f->bytes[T_O] = nq * es;
    f->bytes[T_K] = f->bytes[T_V] = nkv * es;
    /* every tensor at a non-zero aligned offset, with a gap before it */
    const size_t align = f->nh->wrap_alignment > 16 ? f->nh->wrap_alignment : 16;
    size_t at = align;
    for (int t = 0; t < T_COUNT; ++t) {
        f->offset[t] = at;
        at = round_up(at + f->bytes[t], align) + align;
    }
    f->q = malloc(nq * sizeof(float)), f->k = malloc(nkv * sizeof(float)), f->v = malloc(nkv * sizeof(float));
    f->o = malloc(nq * sizeof(float)), f->packed = malloc((nq > nkv ? nq : nkv) * es);
    if (!f->q || !f->k || !f->v || !f->o || !f->packed || f->pv->alloc(f->nh, at, &f->mem)) return 1;
    attnvk_fill_random(f->q, nq, seed);
    attnvk_fill_random(f->k, nkv, seed + 1);
    attnvk_fill_random(f->v, nkv, seed + 2);
    attnvk_round_to_dtype(dtype, f->q, nq);
    attnvk_round_to_dtype(dtype, f->k, nkv);
    attnvk_round_to_dtype(dtype, f->v, nkv);
    for (int t = 0; t < T_COUNT; ++t) {
        attnvk_status s = wrap(f, f->offset[t], f->bytes[t], &f->buf[t]);
        CHECK(s == ATTNVK_OK, "wrapping %s: %s", tensor_names[t], attnvk_last_error());
        if (s != ATTNVK_OK) return 1;
    }
    /* K and V through the application's API; Q through attnvk_buffer_write on the wrapper */
    attnvk_pack(dtype, f->q, f->packed, nq);
    CHECK(attnvk_buffer_write(f->buf[T_Q], 0, f->packed, f->bytes[T_Q]) == ATTNVK_OK, "attnvk_buffer_write(Q): %s",
          attnvk_last_error());
    return write_tensor(f, T_K, f->k, nkv) || write_tensor(f, T_V, f->v, nkv);
}

static void teardown(fixture *f)
{
    for (int t = 0; t < T_COUNT; ++t) attnvk_buffer_destroy(f->buf[t]);
    if (f->mem.handle) f->pv->release(&f->mem);
    free(f->q), free(f->k), free(f->v), free(f->o), free(f->packed);
}

static void run_cases(fixture *f, attnvk_kernel *k, const char *dtype)
{
    char what[96];
    const attnvk_tensors t = {.q = f->buf[T_Q], .k = f->buf[T_K], .v = f->buf[T_V], .o = f->buf[T_O]};

    poison_output(f);
    attnvk_status s = attnvk_kernel_run_tensors(k, &t, 0, 0, NULL);
    CHECK(s == ATTNVK_OK, "run: %s", attnvk_last_error());
    snprintf(what, sizeof what, "%s wrapped, synchronous", dtype);
    check_output(f, what);
    /* attnvk_buffer_read on the wrapper sees the bytes the application does */
    void *via_attnvk = malloc(f->bytes[T_O]);
    CHECK(via_attnvk && attnvk_buffer_read(f->buf[T_O], 0, via_attnvk, f->bytes[T_O]) == ATTNVK_OK &&
              f->pv->read(&f->mem, f->offset[T_O], f->packed, f->bytes[T_O]) == 0 &&
              memcmp(via_attnvk, f->packed, f->bytes[T_O]) == 0,
          "attnvk_buffer_read of wrapped O differs from the memory: %s", attnvk_last_error());
    free(via_attnvk);

    poison_output(f);
    s = attnvk_kernel_run_async(k, &t, NULL);
    CHECK(s == ATTNVK_OK, "async run: %s", attnvk_last_error());
    s = attnvk_device_wait(f->dev);
    CHECK(s == ATTNVK_OK, "device wait: %s", attnvk_last_error());
    snprintf(what, sizeof what, "%s wrapped, async + wait", dtype);
    check_output(f, what);

    /* two runs in flight (rows split between them), then attnvk_buffer_read with no wait:
     * ordered after both by the device's queue */
    poison_output(f);
    attnvk_run_options ro;
    attnvk_run_options_init(&ro);
    ro.q_begin = 0, ro.q_count = 7;
    CHECK(attnvk_kernel_run_async(k, &t, &ro) == ATTNVK_OK, "async run, rows 0..6: %s", attnvk_last_error());
    ro.q_begin = 7, ro.q_count = f->p.seq_q - 7;
    CHECK(attnvk_kernel_run_async(k, &t, &ro) == ATTNVK_OK, "async run, rows 7..: %s", attnvk_last_error());
    CHECK(attnvk_buffer_read(f->buf[T_O], 0, f->packed, f->bytes[T_O]) == ATTNVK_OK, "read after async: %s",
          attnvk_last_error());
    snprintf(what, sizeof what, "%s wrapped, two async runs, read without wait", dtype);
    check_output(f, what);

    if (f->pv->stream_create) {
        void *stream = f->pv->stream_create(f->nh);
        CHECK(stream != NULL, "creating the application's stream/queue");
        if (stream) {
            poison_output(f);
            attnvk_run_options_init(&ro);
            ro.stream = stream;
            s = attnvk_kernel_run_async(k, &t, &ro);
            CHECK(s == ATTNVK_OK, "async run on the application's stream: %s", attnvk_last_error());
            CHECK(f->pv->stream_sync(f->nh, stream) == 0, "synchronizing the application's stream");
            snprintf(what, sizeof what, "%s wrapped, async on the application's %s", dtype,
                     f->pv->api == ATTNVK_API_OPENCL ? "cl_command_queue" : "stream");
            check_output(f, what);
            f->pv->stream_destroy(f->nh, stream);
        }
    }
}

/* Destroying a wrapper leaves the application's memory (and its contents) alone. */
static void check_destroy_keeps_memory(fixture *f)
{
    unsigned char *before = malloc(f->bytes[T_O]);
    CHECK(before && f->pv->read(&f->mem, f->offset[T_O], before, f->bytes[T_O]) == 0, "reading O");
    attnvk_buffer_destroy(f->buf[T_O]);
    f->buf[T_O] = NULL;
    CHECK(f->pv->read(&f->mem, f->offset[T_O], f->packed, f->bytes[T_O]) == 0 &&
              memcmp(before, f->packed, f->bytes[T_O]) == 0,
          "O changed or became unreadable after attnvk_buffer_destroy of its wrapper");
    free(before);
    if (f->pv->references) {
        for (int t = 0; t < T_COUNT; ++t) {
            attnvk_buffer_destroy(f->buf[t]);
            f->buf[t] = NULL;
        }
        CHECK(f->pv->references(&f->mem) == 1, "the application's cl_mem holds %d references after every wrapper "
              "is destroyed (want 1: its own)", f->pv->references(&f->mem));
    }
}

/* ---- bad inputs: one line, INVALID_ARGUMENT ---- */
static void expect_invalid(attnvk_status s, const char *what)
{
    const char *msg = attnvk_last_error();
    CHECK(s == ATTNVK_ERROR_INVALID_ARGUMENT && *msg && !strchr(msg, '\n'), "%s: %s '%s'", what,
          attnvk_status_name(s), msg);
    if (s == ATTNVK_ERROR_INVALID_ARGUMENT) printf("ok   rejected %s: %s\n", what, msg);
}

static void check_bad_inputs(fixture *f, attnvk_kernel *k)
{
    attnvk_buffer *b = NULL;
    const attnvk_api api = f->pv->api;
    attnvk_external_buffer ext = {.api = api, .handle = f->mem.handle, .memory = f->mem.memory, .offset = 0,
                                  .bytes = 64};
    ext.api = api == ATTNVK_API_CPU ? ATTNVK_API_VULKAN : ATTNVK_API_CPU;
    expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "another API's memory");
    ext.api = ATTNVK_API_COUNT;
    expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "an unknown API");
    ext.api = api;
    ext.handle = NULL;
    expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "a NULL handle");
    ext.handle = f->mem.handle;
    ext.bytes = 0;
    expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "bytes == 0");
    ext.bytes = 64;
    if (f->nh->wrap_alignment > 1) {
        ext.offset = f->nh->wrap_alignment / 2;
        expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "a misaligned offset");
        ext.offset = 0;
    }
    ext.offset = SIZE_MAX - 8;
    expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "an offset that overflows");
    ext.offset = 0;
    if (api != ATTNVK_API_VULKAN) {
        ext.memory = &ext;
        expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "memory outside Vulkan");
        ext.memory = NULL;
    }
    if (api == ATTNVK_API_OPENCL) {
        ext.bytes = f->mem.bytes + 1;
        expect_invalid(attnvk_buffer_wrap(f->dev, &ext, &b), "a range past the cl_mem");
        ext.bytes = 64;
    }
    expect_invalid(attnvk_buffer_wrap(f->dev, NULL, &b), "a NULL external buffer");

    const attnvk_tensors t = {.q = f->buf[T_Q], .k = f->buf[T_K], .v = f->buf[T_V], .o = f->buf[T_O]};
    attnvk_run_options ro;
    attnvk_run_options_init(&ro);
    ro.struct_size = 0;
    expect_invalid(attnvk_kernel_run_async(k, &t, &ro), "run options without struct_size");
    if (api == ATTNVK_API_CPU || api == ATTNVK_API_VULKAN) {
        attnvk_run_options_init(&ro);
        ro.stream = &ro;
        expect_invalid(attnvk_kernel_run_async(k, &t, &ro), "a stream on an API without streams");
    }
    attnvk_run_options_init(&ro);
    ro.q_begin = f->p.seq_q;
    ro.q_count = 1;
    expect_invalid(attnvk_kernel_run_async(k, &t, &ro), "async rows outside Nq");
}

static void run_dtype(attnvk_device *dev, const ext_provider *pv, const attnvk_native_handles *nh, attnvk_dtype dt,
                      uint64_t seed, int with_bad_inputs)
{
    fixture f = {.dev = dev, .pv = pv, .nh = nh};
    if (setup(&f, dt, seed)) {
        CHECK(0, "setting up %s memory", attnvk_dtype_name(dt));
        teardown(&f);
        return;
    }
    attnvk_kernel *k = NULL;
    attnvk_kernel_info info;
    attnvk_status s = attnvk_kernel_prepare(dev, &f.p, NULL, &k, &info);
    if (s == ATTNVK_ERROR_UNSUPPORTED) {
        printf("skip %s %s: %s\n", attnvk_api_name(pv->api), attnvk_dtype_name(dt), attnvk_last_error());
    } else {
        CHECK(s == ATTNVK_OK, "prepare %s: %s", attnvk_dtype_name(dt), attnvk_last_error());
        if (s == ATTNVK_OK) {
            printf("%s %s: %s %s\n", attnvk_api_name(pv->api), attnvk_dtype_name(dt), info.implementation, info.variant);
            run_cases(&f, k, attnvk_dtype_name(dt));
            if (with_bad_inputs) check_bad_inputs(&f, k);
            check_destroy_keeps_memory(&f);
        }
    }
    attnvk_kernel_destroy(k);
    teardown(&f);
}

int main(int argc, char **argv)
{
    attnvk_api api;
    if (argc != 2 || !attnvk_api_from_name(argv[1], &api)) {
        fprintf(stderr, "usage: test_interop cpu|vulkan|opencl|cuda\n");
        return 2;
    }
    const ext_provider *pv = provider_for(api);
    if (!pv) {
        printf("SKIP: this test has no %s memory provider (headers or library missing at build time)\n", argv[1]);
        return 77;
    }
    const char *env = getenv("ATTNVK_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("seed %llu (ATTNVK_TEST_SEED replays)\n", (unsigned long long)seed);
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        fprintf(stderr, "context: %s\n", attnvk_last_error());
        return 1;
    }
    int pick = -1;
    if (attnvk_device_select(ctx, argv[1], &pick, 1) < 1) {
        const char *why = "";
        attnvk_api_status(ctx, api, &why);
        printf("SKIP: no %s device (%s)\n", argv[1], why);
        attnvk_context_destroy(ctx);
        return 77;
    }
    attnvk_device *dev = NULL;
    attnvk_native_handles nh;
    if (attnvk_device_open(ctx, pick, &dev) != ATTNVK_OK || attnvk_device_native(dev, &nh) != ATTNVK_OK) {
        fprintf(stderr, "open/native: %s\n", attnvk_last_error());
        attnvk_context_destroy(ctx);
        return 1;
    }
    printf("%s: %s, wrap alignment %zu\n", argv[1], attnvk_device_info_of(dev)->name, nh.wrap_alignment);
    CHECK(nh.api == api && nh.wrap_alignment >= 1, "native handles: api %d, alignment %zu", nh.api, nh.wrap_alignment);
    if (api == ATTNVK_API_VULKAN)
        CHECK(nh.vk_instance && nh.vk_physical_device && nh.vk_device && nh.vk_queue, "Vulkan handles missing");
    if (api == ATTNVK_API_OPENCL)
        CHECK(nh.cl_platform && nh.cl_context && nh.cl_device && nh.cl_queue, "OpenCL handles missing");
    if (api == ATTNVK_API_CUDA) CHECK(nh.cuda_context && nh.cuda_stream, "CUDA handles missing");

    run_dtype(dev, pv, &nh, ATTNVK_F32, seed, 1);
    run_dtype(dev, pv, &nh, ATTNVK_F16, seed + 10, 0);

    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
