/* Ring attention's merge (backend.h's merge, avk_merge_args) on every device
 * of the CPU, Vulkan, OpenCL, CUDA and HIP APIs against the host merge
 * (avk_ring_merge_host) on the same fresh random inputs: f32/f16/bf16, a
 * first merge with and without o_out, then merges folded in back to back
 * without a wait (each must see the one before), rows whose LSE is -inf in the block, in the accumulator and in
 * both, Dv 64, 128, 80 and an odd 33 (16-bit words shared by two rows), rows
 * per head that are not a multiple of anything. Device outputs are poisoned
 * with NaN first; NaN never passes. An API without a device is skipped. */
#include "core/api_objects.h"
#include "core/ring_merge.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* tolerances, relative to max(1, |host|): the f32 accumulator, and O in each dtype after unpacking */
static const double acc_tol = 1e-6;
static double out_tol(attnvk_dtype dt) { return dt == ATTNVK_F32 ? 1e-5 : dt == ATTNVK_F16 ? 1e-3 : 1e-2; }

enum { MAX_DEVICES = 8, BLOCKS = 3 }; /* blocks merged per sequence: the first, then two folded in */

typedef struct merge_shape {
    int batch, heads, rows_per_head, dv;
} merge_shape;

static const merge_shape shapes[] = {{1, 3, 37, 64}, {2, 2, 19, 128}, {1, 4, 13, 80}, {2, 3, 7, 33}};

/* One block's partial result as a kernel writes it: O in the dtype (zeros where the row saw no key), f32 LSE. */
typedef struct block {
    float *o;        /* unpacked, for the host merge */
    void *o_packed;
    float *lse;
} block;

static size_t rows_of(const merge_shape *s) { return (size_t)s->batch * s->heads * s->rows_per_head; }

/* Rows with no visible key: block 0 every 5th row (from a seeded offset), block 1 every 3rd,
 * block 2 every 4th, so some rows are -inf in the accumulator, some in the block, some in both. */
static void make_block(const merge_shape *s, attnvk_dtype dt, int index, uint64_t seed, block *b)
{
    const size_t rows = rows_of(s), n = rows * (size_t)s->dv;
    b->o = malloc(n * sizeof(float));
    b->o_packed = malloc(n * attnvk_dtype_size(dt));
    b->lse = malloc(rows * sizeof(float));
    attnvk_fill_random(b->o, n, seed);
    attnvk_fill_random(b->lse, rows, seed ^ 0x9e3779b97f4a7c15ull);
    static const int empty_every[BLOCKS] = {5, 3, 4};
    const size_t offset = (size_t)(seed % (uint64_t)empty_every[index]);
    for (size_t r = 0; r < rows; ++r) {
        b->lse[r] *= 4.0f; /* weights from about e^-20 to 1 */
        if ((r + offset) % (size_t)empty_every[index] == 0) {
            b->lse[r] = -INFINITY;
            memset(b->o + r * (size_t)s->dv, 0, (size_t)s->dv * sizeof(float));
        }
    }
    attnvk_round_to_dtype(dt, b->o, n);
    attnvk_pack(dt, b->o, b->o_packed, n);
}

static void free_block(block *b)
{
    free(b->o);
    free(b->o_packed);
    free(b->lse);
}

/* 1 when every value matches the host's: -inf and +inf exactly, finite ones within tol * max(1, |host|). */
static int close_enough(const float *dev, const float *host, size_t n, double tol, const char *what, const char *label)
{
    for (size_t i = 0; i < n; ++i) {
        const double d = dev[i], h = host[i];
        const int ok = isinf(h) ? d == h : isfinite(d) && fabs(d - h) <= tol * fmax(1.0, fabs(h));
        if (!ok) {
            fprintf(stderr, "%s: %s[%zu] = %.9g, host %.9g\n", label, what, i, d, h);
            return 0;
        }
    }
    return 1;
}

typedef struct device_buffers {
    attnvk_buffer *o_part[BLOCKS], *lse_part[BLOCKS], *o_acc, *lse_acc, *o_out;
} device_buffers;

static void destroy_buffers(device_buffers *b)
{
    for (int i = 0; i < BLOCKS; ++i) {
        attnvk_buffer_destroy(b->o_part[i]);
        attnvk_buffer_destroy(b->lse_part[i]);
    }
    attnvk_buffer_destroy(b->o_acc);
    attnvk_buffer_destroy(b->lse_acc);
    attnvk_buffer_destroy(b->o_out);
}

/* What one merge step does: which block, first or folded in, o_out written or not. */
typedef struct step {
    int block, first, out;
} step;

/* Runs the steps on the device and on the host, then compares the accumulator and O.
 * Returns 1 on pass. */
static int run_sequence(attnvk_device *dev, const merge_shape *s, attnvk_dtype dt, const step *steps,
                        int n_steps, uint64_t seed, const char *label)
{
    const size_t rows = rows_of(s), n = rows * (size_t)s->dv, esize = attnvk_dtype_size(dt);
    block blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; ++i) make_block(s, dt, i, seed + 17u * (uint64_t)i, &blocks[i]);

    /* the host: accumulator poisoned too, so a step that reads what it should not shows */
    float *acc = malloc(n * sizeof(float)), *lse = malloc(rows * sizeof(float));
    void *out = malloc(n * esize);
    float *nan_rows = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) nan_rows[i] = NAN;
    memcpy(acc, nan_rows, n * sizeof(float));
    memcpy(lse, nan_rows, rows * sizeof(float));
    attnvk_pack(dt, nan_rows, out, n);
    for (int i = 0; i < n_steps; ++i) {
        const block *b = &blocks[steps[i].block];
        const avk_host_merge m = {.o_part = b->o_packed, .lse_part = b->lse, .o_acc = acc, .lse_acc = lse,
                                  .o_out = steps[i].out ? out : NULL, .dtype = dt, .batch = s->batch, .heads = s->heads,
                                  .rows_per_head = s->rows_per_head, .dv = s->dv, .first = steps[i].first};
        avk_ring_merge_host(&m);
    }

    /* the device: inputs uploaded, outputs poisoned, every step enqueued without a wait */
    device_buffers db = {0};
    attnvk_status st = ATTNVK_OK;
    for (int i = 0; i < BLOCKS && st == ATTNVK_OK; ++i) {
        st = attnvk_buffer_create(dev, n * esize, &db.o_part[i]);
        if (st == ATTNVK_OK) st = attnvk_buffer_write(db.o_part[i], 0, blocks[i].o_packed, n * esize);
        if (st == ATTNVK_OK) st = attnvk_buffer_create(dev, rows * sizeof(float), &db.lse_part[i]);
        if (st == ATTNVK_OK) st = attnvk_buffer_write(db.lse_part[i], 0, blocks[i].lse, rows * sizeof(float));
    }
    void *nan_packed = malloc(n * esize);
    attnvk_pack(dt, nan_rows, nan_packed, n);
    if (st == ATTNVK_OK) st = attnvk_buffer_create(dev, n * sizeof(float), &db.o_acc);
    if (st == ATTNVK_OK) st = attnvk_buffer_write(db.o_acc, 0, nan_rows, n * sizeof(float));
    if (st == ATTNVK_OK) st = attnvk_buffer_create(dev, rows * sizeof(float), &db.lse_acc);
    if (st == ATTNVK_OK) st = attnvk_buffer_write(db.lse_acc, 0, nan_rows, rows * sizeof(float));
    if (st == ATTNVK_OK) st = attnvk_buffer_create(dev, n * esize, &db.o_out);
    if (st == ATTNVK_OK) st = attnvk_buffer_write(db.o_out, 0, nan_packed, n * esize);
    for (int i = 0; i < n_steps && st == ATTNVK_OK; ++i) {
        const int k = steps[i].block;
        const avk_merge_args a = {.o_part = db.o_part[k]->bbuf, .lse_part = db.lse_part[k]->bbuf,
                                  .o_acc = db.o_acc->bbuf, .lse_acc = db.lse_acc->bbuf,
                                  .o_out = steps[i].out ? db.o_out->bbuf : NULL,
                                  .dtype = dt, .batch = s->batch,
                                  .heads = s->heads, .rows_per_head = s->rows_per_head, .dv = s->dv,
                                  .first = steps[i].first};
        st = dev->backend->merge(dev->bdev, &a);
        dev->async_pending = 1; /* as the ring's core marks it: reads settle first */
    }
    float *dev_acc = malloc(n * sizeof(float)), *dev_lse = malloc(rows * sizeof(float));
    float *dev_out = malloc(n * sizeof(float)), *host_out = malloc(n * sizeof(float));
    void *dev_out_packed = malloc(n * esize);
    if (st == ATTNVK_OK) st = attnvk_buffer_read(db.o_acc, 0, dev_acc, n * sizeof(float));
    if (st == ATTNVK_OK) st = attnvk_buffer_read(db.lse_acc, 0, dev_lse, rows * sizeof(float));
    if (st == ATTNVK_OK) st = attnvk_buffer_read(db.o_out, 0, dev_out_packed, n * esize);
    int ok = st == ATTNVK_OK;
    if (!ok) fprintf(stderr, "%s: %s\n", label, attnvk_last_error());
    if (ok) {
        attnvk_unpack(dt, dev_out_packed, dev_out, n);
        attnvk_unpack(dt, out, host_out, n);
        ok = close_enough(dev_acc, acc, n, acc_tol, "o_acc", label);
        ok = close_enough(dev_lse, lse, rows, acc_tol, "lse_acc", label) && ok;
        ok = close_enough(dev_out, host_out, n, out_tol(dt), "o_out", label) && ok;
    }
    printf("%s %s\n", ok ? "ok  " : "FAIL", label);

    destroy_buffers(&db);
    for (int i = 0; i < BLOCKS; ++i) free_block(&blocks[i]);
    free(acc);
    free(lse);
    free(out);
    free(nan_rows);
    free(nan_packed);
    free(dev_acc);
    free(dev_lse);
    free(dev_out);
    free(host_out);
    free(dev_out_packed);
    return ok;
}

/* A first merge writing o_out; a first merge without it, two folded in (the first of them writes
 * o_out, the last does not, so o_out must keep the middle step's result). */
static const step only_first[] = {{0, 1, 1}};
static const step folded[] = {{0, 1, 0}, {1, 0, 1}, {2, 0, 0}};

int main(void)
{
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("no context: %s\n", attnvk_last_error());
        return 1;
    }
    int passed = 0, failed = 0, devices = 0;
    /* CUDA and HIP where a GPU is present (skipped here) */
    const attnvk_api apis[] = {ATTNVK_API_CPU, ATTNVK_API_VULKAN, ATTNVK_API_OPENCL, ATTNVK_API_CUDA, ATTNVK_API_HIP};
    for (size_t ai = 0; ai < sizeof apis / sizeof *apis; ++ai) {
        const char *reason = NULL;
        if (attnvk_api_status(ctx, apis[ai], &reason) != ATTNVK_OK) {
            printf("skip %s: %s\n", attnvk_api_name(apis[ai]), reason);
            continue;
        }
        int idx[MAX_DEVICES];
        const int count = attnvk_device_select(ctx, attnvk_api_name(apis[ai]), idx, MAX_DEVICES);
        for (int di = 0; di < count; ++di) {
            attnvk_device *dev = NULL;
            if (attnvk_device_open(ctx, idx[di], &dev) != ATTNVK_OK) {
                EXPECT(0, "%s device %d: %s", attnvk_api_name(apis[ai]), di, attnvk_last_error());
                continue;
            }
            ++devices;
            const char *name = attnvk_device_info_of(dev)->name;
            EXPECT(dev->backend->merge != NULL, "%s has no device merge", attnvk_api_name(apis[ai]));
            /* every backend's merge reads 16-bit values through words or bit operations: every dtype, every device */
            for (int dt = ATTNVK_F32; dev->backend->merge && dt <= ATTNVK_BF16; ++dt) {
                for (size_t si = 0; si < sizeof shapes / sizeof *shapes; ++si)
                    for (int first_only = 0; first_only < 2; ++first_only) {
                        const merge_shape *s = &shapes[si];
                        char label[256];
                        snprintf(label, sizeof label, "%s (%.64s) %s B=%d H=%d rows=%d Dv=%d %s",
                                 attnvk_api_name(apis[ai]), name, attnvk_dtype_name((attnvk_dtype)dt), s->batch,
                                 s->heads, s->rows_per_head, s->dv, first_only ? "first+out" : "first,fold+out,fold");
                        const uint64_t case_seed = seed + 1000003u * (uint64_t)(si * 2 + (size_t)first_only) + (uint64_t)dt;
                        const int ok = run_sequence(dev, s, (attnvk_dtype)dt, first_only ? only_first : folded,
                                                    first_only ? 1 : 3, case_seed, label);
                        passed += ok;
                        failed += !ok;
                    }
            }
            attnvk_device_close(dev);
        }
    }
    attnvk_context_destroy(ctx);
    if (devices == 0) {
        printf("no device to merge on\n");
        return 77;
    }
    return avk_test_finish(passed, failed);
}
