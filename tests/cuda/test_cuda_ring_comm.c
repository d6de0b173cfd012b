/* The CUDA ring transport (cuda_ring_comm.c) through the backend's
 * ring_comm ops. Without a GPU: a missing libnccl makes create answer
 * UNAVAILABLE with one line, before any device is touched, and the
 * installed libnccl (if any) binds every symbol. On GPUs: G = min(devices, 4)
 * ranks on distinct GPUs (NCCL), two virtual ranks on GPU 0 (device copies)
 * and one rank; each rank's send buffers hold their own random bytes, two
 * shifts (the second sends what the first received, into the first's send
 * buffers) and every byte is checked, the tails past each transfer included.
 * Exits 77 (skipped) without a CUDA device once the host checks passed. */
#include "core/api_objects.h"
#include "cuda/cuda_internal.h"
#include "cuda/cuda_ring_comm.h"
#include "cuda/nccl_loader.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_RANKS = 4,
    MAX_BUFFERS = 3,
    TAIL_BYTES = 61,      /* past each transfer: must keep what it held */
    POISON_BYTE = 0xA5,   /* receive buffers before the first shift */
    SKIPPED = 77,
};

typedef struct ring_case {
    const char *label;
    int count;
    size_t bytes[MAX_BUFFERS];
} ring_case;

/* odd sizes, a byte, one empty transfer, and a MiB-sized one */
static const ring_case cases[] = {
    {"odd sizes", 3, {1, 4099, (1u << 20) + 3}},
    {"with an empty transfer", 2, {0, 65537}},
};

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fill_random(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)splitmix(&state);
}

/* ---- without a GPU ---- */

static int check_missing_library(void)
{
    static const char *const missing[] = {"libattnvk-test-no-such-nccl.so.2", NULL};
    avk_nccl_test_library_names(missing);
    /* two distinct GPUs want NCCL; these are never touched when it is missing */
    avk_cuda_device fake[2];
    memset(fake, 0, sizeof fake);
    fake[1].ordinal = 1;
    avk_bdev *devs[2] = {&fake[0], &fake[1]};
    avk_ring_comm *c = (avk_ring_comm *)&fake[0]; /* must come back NULL */
    attnvk_status s = avk_cuda_ring_comm.create(devs, 2, &c);
    const char *why = attnvk_last_error();
    EXPECT(s == ATTNVK_ERROR_UNAVAILABLE, "create without libnccl: %s (%s)", attnvk_status_name(s), why);
    EXPECT(c == NULL, "no communicator on failure");
    EXPECT(strncmp(why, "nccl: ", 6) == 0 && strstr(why, missing[0]) && !strchr(why, '\n'),
           "one line naming the library: \"%s\"", why);
    printf("without libnccl: %s\n", why);
    avk_nccl_test_library_names(NULL);
    return s == ATTNVK_ERROR_UNAVAILABLE;
}

static int check_installed_library(void)
{
    const avk_ccl *nc = avk_nccl_load();
    if (!nc) {
        printf("skip: no libnccl here (%s)\n", attnvk_last_error());
        return 1;
    }
    EXPECT(nc->version > 0, "ncclGetVersion: %d", nc->version);
    printf("%s binds: %s, version %d\n", nc->label, nc->library, nc->version);
    return nc->version > 0;
}

/* ---- on GPUs ---- */

typedef struct ring_buffers {
    attnvk_buffer *send[MAX_RANKS * MAX_BUFFERS], *recv[MAX_RANKS * MAX_BUFFERS];
    avk_bbuf *send_b[MAX_RANKS * MAX_BUFFERS], *recv_b[MAX_RANKS * MAX_BUFFERS];
    unsigned char *sent[MAX_RANKS * MAX_BUFFERS]; /* what each send buffer held first */
} ring_buffers;

static void free_buffers(ring_buffers *b, int n)
{
    for (int j = 0; j < n; ++j) {
        attnvk_buffer_destroy(b->send[j]);
        attnvk_buffer_destroy(b->recv[j]);
        free(b->sent[j]);
    }
}

static int make_buffers(attnvk_device *const *devs, int ranks, const ring_case *rc, uint64_t seed, ring_buffers *b)
{
    memset(b, 0, sizeof *b);
    for (int r = 0; r < ranks; ++r)
        for (int i = 0; i < rc->count; ++i) {
            const int j = r * rc->count + i;
            const size_t size = rc->bytes[i] + TAIL_BYTES;
            b->sent[j] = malloc(size);
            unsigned char *poison = malloc(size);
            int ok = b->sent[j] && poison && attnvk_buffer_create(devs[r], size, &b->send[j]) == ATTNVK_OK &&
                     attnvk_buffer_create(devs[r], size, &b->recv[j]) == ATTNVK_OK;
            if (ok) {
                fill_random(b->sent[j], size, seed + (uint64_t)j * 7919u);
                memset(poison, POISON_BYTE, size);
                ok = attnvk_buffer_write(b->send[j], 0, b->sent[j], size) == ATTNVK_OK &&
                     attnvk_buffer_write(b->recv[j], 0, poison, size) == ATTNVK_OK;
            }
            free(poison);
            EXPECT(ok, "buffers of rank %d: %s", r, attnvk_last_error());
            if (!ok) return 0;
            b->send_b[j] = b->send[j]->bbuf;
            b->recv_b[j] = b->recv[j]->bbuf;
        }
    return 1;
}

/* Reads buf and compares [0, n) with want and [n, n + TAIL) with tail. */
static int check_bytes(attnvk_buffer *buf, size_t n, const unsigned char *want, const unsigned char *tail,
                       const char *what)
{
    unsigned char *got = malloc(n + TAIL_BYTES);
    int ok = got && attnvk_buffer_read(buf, 0, got, n + TAIL_BYTES) == ATTNVK_OK;
    size_t bad = n + TAIL_BYTES;
    for (size_t k = 0; ok && k < n + TAIL_BYTES; ++k)
        if (got[k] != (k < n ? want[k] : tail[k - n])) {
            bad = k;
            ok = 0;
        }
    EXPECT(ok, "%s: first wrong byte %zu of %zu (+%d tail): %s", what, bad, n, TAIL_BYTES, attnvk_last_error());
    free(got);
    return ok;
}

static int run_case(const avk_ring_comm_ops *ops, avk_ring_comm *c, attnvk_device *const *devs, int ranks,
                    const ring_case *rc, uint64_t seed)
{
    ring_buffers b;
    const int n = ranks * rc->count;
    if (!make_buffers(devs, ranks, rc, seed, &b)) {
        free_buffers(&b, n);
        return 0;
    }
    /* shift 1: send -> recv; shift 2 forwards what arrived: recv -> send */
    const avk_ring_shift first = {b.send_b, b.recv_b, rc->bytes, rc->count};
    const avk_ring_shift second = {b.recv_b, b.send_b, rc->bytes, rc->count};
    attnvk_status s = ops->shift(c, &first);
    if (s == ATTNVK_OK) s = ops->join(c);
    if (s == ATTNVK_OK) s = ops->shift(c, &second);
    if (s == ATTNVK_OK) s = ops->join(c);
    for (int r = 0; r < ranks && s == ATTNVK_OK; ++r) s = attnvk_device_wait(devs[r]);
    EXPECT(s == ATTNVK_OK, "%s: shift/join/wait: %s", rc->label, attnvk_last_error());
    int ok = s == ATTNVK_OK;
    unsigned char poison[TAIL_BYTES];
    memset(poison, POISON_BYTE, sizeof poison);
    for (int r = 0; r < ranks && ok; ++r)
        for (int i = 0; i < rc->count && ok; ++i) {
            const int j = r * rc->count + i;
            const int prev = ((r + ranks - 1) % ranks) * rc->count + i;
            const int prev2 = ((r + 2 * ranks - 2) % ranks) * rc->count + i;
            const size_t bytes = rc->bytes[i];
            char what[96];
            snprintf(what, sizeof what, "%s: rank %d buffer %d (%zu bytes) after shift 1", rc->label, r, i, bytes);
            ok = check_bytes(b.recv[j], bytes, b.sent[prev], poison, what);
            snprintf(what, sizeof what, "%s: rank %d buffer %d (%zu bytes) after shift 2", rc->label, r, i, bytes);
            ok = ok && check_bytes(b.send[j], bytes, b.sent[prev2], b.sent[j] + bytes, what);
        }
    const double ms = ops->take_elapsed_ms(c);
    EXPECT(ms >= 0, "%s: take_elapsed_ms %g", rc->label, ms);
    const double again = ops->take_elapsed_ms(c);
    EXPECT(again == 0, "%s: take_elapsed_ms resets: %g", rc->label, again);
    printf("%s %s: %d ranks, 2 shifts in %.3f ms\n", ok && ms >= 0 && again == 0 ? "ok" : "FAIL", rc->label,
           ranks, ms);
    free_buffers(&b, n);
    return ok && ms >= 0 && again == 0;
}

/* One communicator over devs; 1 when it passed (or NCCL is missing: skipped). */
static int run_ring(attnvk_device *const *devs, int ranks, const char *want_name, uint64_t seed)
{
    const avk_ring_comm_ops *ops = devs[0]->backend->ring_comm;
    EXPECT(ops == &avk_cuda_ring_comm, "the CUDA backend offers its ring transport");
    if (ops != &avk_cuda_ring_comm) return 0;
    avk_bdev *bdevs[MAX_RANKS];
    for (int r = 0; r < ranks; ++r) bdevs[r] = devs[r]->bdev;
    avk_ring_comm *c = NULL;
    attnvk_status s = ops->create(bdevs, ranks, &c);
    if (s == ATTNVK_ERROR_UNAVAILABLE) {
        printf("skip %s over %d ranks: %s\n", want_name, ranks, attnvk_last_error());
        return 1;
    }
    EXPECT(s == ATTNVK_OK, "create over %d ranks: %s", ranks, attnvk_last_error());
    if (s != ATTNVK_OK) return 0;
    const char *name = ops->name_of ? ops->name_of(c) : ops->name;
    printf("transport over %d ranks: %s\n", ranks, name);
    int ok = strcmp(name, want_name) == 0;
    EXPECT(ok, "transport %s, expected %s", name, want_name);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k)
        ok &= run_case(ops, c, devs, ranks, &cases[k], seed + k * 1000003u);
    ops->destroy(c);
    return ok;
}

static void close_all(attnvk_device **devs, int n)
{
    for (int r = 0; r < n; ++r) attnvk_device_close(devs[r]);
}

/* Opens devices `indices` as ranks and runs the ring; 1 when it passed. */
static int ring_over(attnvk_context *ctx, const int *indices, int ranks, const char *want_name, uint64_t seed)
{
    attnvk_device *devs[MAX_RANKS] = {0};
    int opened = 0;
    for (; opened < ranks; ++opened)
        if (attnvk_device_open(ctx, indices[opened], &devs[opened]) != ATTNVK_OK) break;
    EXPECT(opened == ranks, "open device %d: %s", indices[opened < ranks ? opened : 0], attnvk_last_error());
    const int ok = opened == ranks && run_ring(devs, ranks, want_name, seed);
    close_all(devs, opened);
    return ok;
}

int main(void)
{
    int passed = 0;
    passed += check_missing_library();
    passed += check_installed_library();

    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return avk_test_finish(passed, avk_test_failures + 1);
    int gpus[MAX_RANKS];
    const int g = attnvk_device_select(ctx, "cuda", gpus, MAX_RANKS);
    if (g < 1) {
        printf("no CUDA device: transfers skipped\n");
        attnvk_context_destroy(ctx);
        if (avk_test_failures) return avk_test_finish(passed, avk_test_failures);
        return SKIPPED;
    }
    const uint64_t seed = avk_test_seed();
    if (g > 1) passed += ring_over(ctx, gpus, g, "nccl", seed);
    const int virtual_ranks[2] = {gpus[0], gpus[0]};
    passed += ring_over(ctx, virtual_ranks, 2, "cuda-copy", seed + 1);
    passed += ring_over(ctx, gpus, 1, "cuda-copy", seed + 2);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, avk_test_failures);
}
