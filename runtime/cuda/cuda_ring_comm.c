/* Ring attention's transport on CUDA (core/ring_comm.h's contract).
 *
 * Every rank gets a comm stream of its own (non-blocking, in its device's
 * primary context), so transfers run beside the rank's next kernels on
 * attnvk's stream. A shift orders each comm stream after everything already
 * on the rank's attnvk stream (the `ready` event), moves the buffers, and
 * records an end event that join makes attnvk's stream wait on.
 *
 * Two ways to move them:
 * - "nccl": every rank on its own GPU. One process drives all GPUs, so the
 *   communicators come from ncclCommInitAll and every rank's send and recv
 *   goes into one ncclGroupStart/End (NCCL's single-thread multi-GPU rule).
 * - "cuda-copy": a GPU serves several ranks (NCCL refuses that) or there is
 *   one rank. The receiver's comm stream copies its predecessor's buffers;
 *   the sender's comm stream then waits for that copy, so each rank's end
 *   event covers both what it received and what was read from it, as an
 *   NCCL send/recv pair does.
 *
 * Only transfer_nccl and the loader are NCCL's; a HIP twin (RCCL) would
 * swap the driver calls and keep the rest. */
#include "cuda/cuda_ring_comm.h"
#include "cuda/cuda_internal.h"
#include "cuda/nccl_loader.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    /* shifts timed between two take_elapsed_ms calls before the oldest are
     * folded into a sum (the host then waits for them once) */
    RING_TIMED_SHIFTS_MAX = 1024,
    RING_TIMED_SHIFTS_FIRST = 8,
};

static const char ring_copy_name[] = "cuda-copy";

typedef struct ring_rank {
    avk_cuda_device *dev;
    avk_ccl_comm comm;   /* NULL on the copy transport */
    CUstream stream;     /* the comm stream */
    CUevent ready;       /* on dev->stream: what was enqueued before the shift */
    CUevent copied;      /* copy transport: the copy into this rank is done */
} ring_rank;

struct avk_ring_comm {
    const avk_ccl *ccl;  /* NULL: the copy transport */
    int ranks;
    ring_rank *rank;
    /* per timed shift and rank, [slot * ranks + r]: the transfers' bounds */
    CUevent *start, *end;
    int slots;           /* slots whose events exist */
    int timed;           /* slots used since the last take_elapsed_ms */
    int last;            /* the last shift's slot, -1 before the first */
    double folded_ms;    /* shifts folded in when the list was full */
    int untimed;         /* a shift failed half-way: its time is unknown */
};

static const avk_cuda_driver *driver_of(const avk_ring_comm *c) { return c->rank[0].dev->cu; }

static attnvk_status ccl_check(const avk_ccl *ccl, avk_ccl_result r, const char *what)
{
    if (r == AVK_CCL_SUCCESS) return ATTNVK_OK;
    return avk_fail(ATTNVK_ERROR_BACKEND, "%s: %s: %s", ccl->label, what, ccl->ncclGetErrorString(r));
}

/* ---- events of timed shifts ---- */

static attnvk_status create_slot_events(avk_ring_comm *c, int slot)
{
    attnvk_status s = ATTNVK_OK;
    for (int r = 0; r < c->ranks && s == ATTNVK_OK; ++r) {
        avk_cuda_device *dev = c->rank[r].dev;
        CUevent *start = &c->start[slot * c->ranks + r], *end = &c->end[slot * c->ranks + r];
        s = avk_cuda_push(dev);
        if (s != ATTNVK_OK) break;
        s = avk_cuda_check(dev, dev->cu->cuEventCreate(start, CU_EVENT_DEFAULT), "ring: cuEventCreate");
        if (s == ATTNVK_OK) s = avk_cuda_check(dev, dev->cu->cuEventCreate(end, CU_EVENT_DEFAULT), "ring: cuEventCreate");
        avk_cuda_pop(dev);
    }
    return s;
}

/* Makes room for slot `slot` (== c->slots when new), growing the lists. */
static attnvk_status ensure_slot(avk_ring_comm *c, int slot)
{
    if (slot < c->slots) return ATTNVK_OK;
    int capacity = c->slots ? c->slots * 2 : RING_TIMED_SHIFTS_FIRST;
    if (capacity > RING_TIMED_SHIFTS_MAX) capacity = RING_TIMED_SHIFTS_MAX;
    const size_t count = (size_t)capacity * (size_t)c->ranks;
    CUevent *start = realloc(c->start, count * sizeof *start);
    if (start) c->start = start;
    CUevent *end = start ? realloc(c->end, count * sizeof *end) : NULL;
    if (end) c->end = end;
    if (!start || !end) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    const size_t old = (size_t)c->slots * (size_t)c->ranks;
    memset(c->start + old, 0, (count - old) * sizeof *start);
    memset(c->end + old, 0, (count - old) * sizeof *end);
    for (; c->slots < capacity; ++c->slots) {
        attnvk_status s = create_slot_events(c, c->slots);
        if (s != ATTNVK_OK) {
            ++c->slots; /* what was created is destroyed with the rest */
            return s;
        }
    }
    return ATTNVK_OK;
}

/* Sum over the first n slots of the slowest rank's time; waits for each
 * end event (already complete when the devices were waited on). -1 when
 * an event can't be read. */
static double measure_slots(avk_ring_comm *c, int n)
{
    double total = 0;
    for (int slot = 0; slot < n; ++slot) {
        double slowest = 0;
        for (int r = 0; r < c->ranks; ++r) {
            avk_cuda_device *dev = c->rank[r].dev;
            if (avk_cuda_push(dev) != ATTNVK_OK) return -1;
            CUevent start = c->start[slot * c->ranks + r], end = c->end[slot * c->ranks + r];
            float ms = 0;
            CUresult e = dev->cu->cuEventSynchronize(end);
            if (e == CUDA_SUCCESS) e = dev->cu->cuEventElapsedTime(&ms, start, end);
            avk_cuda_pop(dev);
            if (e != CUDA_SUCCESS) return -1;
            if (ms > slowest) slowest = ms;
        }
        total += slowest;
    }
    return total;
}

/* The slot the next shift records its bounds in. */
static attnvk_status next_slot(avk_ring_comm *c, int *slot)
{
    if (c->timed == RING_TIMED_SHIFTS_MAX) {
        const double ms = measure_slots(c, c->timed);
        if (ms < 0) c->untimed = 1;
        else c->folded_ms += ms;
        c->timed = 0;
    }
    attnvk_status s = ensure_slot(c, c->timed);
    if (s == ATTNVK_OK) *slot = c->timed++;
    return s;
}

/* ---- the two transfers ---- */

/* Every rank's send to its successor and receive from its predecessor, in
 * one group; NCCL changes the current device, so the context is restored. */
static attnvk_status transfer_nccl(avk_ring_comm *c, const avk_ring_shift *sh)
{
    const avk_ccl *ccl = c->ccl;
    const avk_cuda_driver *cu = driver_of(c);
    CUcontext saved = NULL;
    cu->cuCtxGetCurrent(&saved);
    attnvk_status s = ccl_check(ccl, ccl->ncclGroupStart(), "ncclGroupStart");
    if (s != ATTNVK_OK) return s;
    for (int r = 0; r < c->ranks && s == ATTNVK_OK; ++r) {
        const int next = (r + 1) % c->ranks, prev = (r + c->ranks - 1) % c->ranks;
        const ring_rank *rk = &c->rank[r];
        for (int i = 0; i < sh->count && s == ATTNVK_OK; ++i) {
            const size_t n = sh->bytes[i];
            if (!n) continue; /* the same on every rank: both sides skip it */
            const void *from = (const void *)(uintptr_t)avk_cuda_ptr(sh->send[r * sh->count + i]);
            void *into = (void *)(uintptr_t)avk_cuda_ptr(sh->recv[r * sh->count + i]);
            s = ccl_check(ccl, ccl->ncclSend(from, n, AVK_CCL_INT8, next, rk->comm, rk->stream), "ncclSend");
            if (s == ATTNVK_OK)
                s = ccl_check(ccl, ccl->ncclRecv(into, n, AVK_CCL_INT8, prev, rk->comm, rk->stream), "ncclRecv");
        }
    }
    /* closes the group even after a failed call: NCCL reports or drops it */
    attnvk_status end = ccl_check(ccl, ccl->ncclGroupEnd(), "ncclGroupEnd");
    cu->cuCtxSetCurrent(saved);
    return s != ATTNVK_OK ? s : end;
}

static attnvk_status copy_into(const ring_rank *src, const ring_rank *dst, const avk_ring_shift *sh, int from_rank,
                               int to_rank)
{
    avk_cuda_device *dev = dst->dev;
    attnvk_status s = ATTNVK_OK;
    if (src != dst) /* its send buffers are ready too */
        s = avk_cuda_check(dev, dev->cu->cuStreamWaitEvent(dst->stream, src->ready, 0), "ring: cuStreamWaitEvent");
    for (int i = 0; i < sh->count && s == ATTNVK_OK; ++i) {
        const size_t n = sh->bytes[i];
        if (!n) continue;
        const CUdeviceptr from = avk_cuda_ptr(sh->send[from_rank * sh->count + i]);
        const CUdeviceptr into = avk_cuda_ptr(sh->recv[to_rank * sh->count + i]);
        CUresult e = src->dev->context == dev->context
                         ? dev->cu->cuMemcpyDtoDAsync(into, from, n, dst->stream)
                         : dev->cu->cuMemcpyPeerAsync(into, dev->context, from, src->dev->context, n, dst->stream);
        s = avk_cuda_check(dev, e, "ring: device copy");
    }
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuEventRecord(dst->copied, dst->stream), "ring: cuEventRecord");
    return s;
}

static attnvk_status transfer_copy(avk_ring_comm *c, const avk_ring_shift *sh)
{
    attnvk_status s = ATTNVK_OK;
    for (int r = 0; r < c->ranks && s == ATTNVK_OK; ++r) {
        const int next = (r + 1) % c->ranks;
        ring_rank *dst = &c->rank[next];
        s = avk_cuda_push(dst->dev);
        if (s != ATTNVK_OK) break;
        s = copy_into(&c->rank[r], dst, sh, r, next);
        avk_cuda_pop(dst->dev);
    }
    /* each sender's stream waits for the copy that read its buffers */
    for (int r = 0; r < c->ranks && s == ATTNVK_OK && c->ranks > 1; ++r) {
        ring_rank *rk = &c->rank[r];
        s = avk_cuda_push(rk->dev);
        if (s != ATTNVK_OK) break;
        s = avk_cuda_check(rk->dev, rk->dev->cu->cuStreamWaitEvent(rk->stream, c->rank[(r + 1) % c->ranks].copied, 0),
                           "ring: cuStreamWaitEvent");
        avk_cuda_pop(rk->dev);
    }
    return s;
}

/* ---- the ops ---- */

static attnvk_status check_shift(const avk_ring_comm *c, const avk_ring_shift *sh)
{
    if (!sh || sh->count < 0 || (sh->count && (!sh->send || !sh->recv || !sh->bytes)))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring shift: missing buffers");
    for (int r = 0; r < c->ranks; ++r)
        for (int i = 0; i < sh->count; ++i) {
            const avk_bbuf *from = sh->send[r * sh->count + i], *into = sh->recv[r * sh->count + i];
            if (!from || !into || sh->bytes[i] > from->size || sh->bytes[i] > into->size)
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                                "ring shift: rank %d buffer %d: %zu bytes exceed its send or receive buffer", r, i,
                                sh->bytes[i]);
        }
    return ATTNVK_OK;
}

/* Rank r's comm stream starts after its attnvk stream's work so far. */
static attnvk_status begin_rank(avk_ring_comm *c, int r, int slot)
{
    ring_rank *rk = &c->rank[r];
    avk_cuda_device *dev = rk->dev;
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_check(dev, dev->cu->cuEventRecord(rk->ready, dev->stream), "ring: cuEventRecord");
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuStreamWaitEvent(rk->stream, rk->ready, 0), "ring: cuStreamWaitEvent");
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, dev->cu->cuEventRecord(c->start[slot * c->ranks + r], rk->stream), "ring: cuEventRecord");
    avk_cuda_pop(dev);
    return s;
}

static attnvk_status end_rank(avk_ring_comm *c, int r, int slot)
{
    ring_rank *rk = &c->rank[r];
    attnvk_status s = avk_cuda_push(rk->dev);
    if (s != ATTNVK_OK) return s;
    s = avk_cuda_check(rk->dev, rk->dev->cu->cuEventRecord(c->end[slot * c->ranks + r], rk->stream),
                       "ring: cuEventRecord");
    avk_cuda_pop(rk->dev);
    return s;
}

static attnvk_status ring_shift(avk_ring_comm *c, const avk_ring_shift *sh)
{
    attnvk_status s = check_shift(c, sh);
    int slot = 0;
    if (s == ATTNVK_OK) s = next_slot(c, &slot);
    for (int r = 0; r < c->ranks && s == ATTNVK_OK; ++r) s = begin_rank(c, r, slot);
    if (s == ATTNVK_OK) s = c->ccl ? transfer_nccl(c, sh) : transfer_copy(c, sh);
    for (int r = 0; r < c->ranks && s == ATTNVK_OK; ++r) s = end_rank(c, r, slot);
    if (s == ATTNVK_OK) c->last = slot;
    else c->untimed = 1;
    return s;
}

static attnvk_status ring_join(avk_ring_comm *c)
{
    if (c->last < 0) return ATTNVK_OK;
    attnvk_status s = ATTNVK_OK;
    for (int r = 0; r < c->ranks && s == ATTNVK_OK; ++r) {
        avk_cuda_device *dev = c->rank[r].dev;
        s = avk_cuda_push(dev);
        if (s != ATTNVK_OK) break;
        s = avk_cuda_check(dev, dev->cu->cuStreamWaitEvent(dev->stream, c->end[c->last * c->ranks + r], 0),
                           "ring: cuStreamWaitEvent");
        avk_cuda_pop(dev);
    }
    return s;
}

static double ring_take_elapsed_ms(avk_ring_comm *c)
{
    const double ms = measure_slots(c, c->timed);
    const double total = c->untimed || ms < 0 ? -1 : c->folded_ms + ms;
    c->timed = 0;
    c->folded_ms = 0;
    c->untimed = 0;
    return total;
}

static const char *ring_name_of(avk_ring_comm *c) { return c->ccl ? c->ccl->label : ring_copy_name; }

static void ring_destroy(avk_ring_comm *c)
{
    if (!c) return;
    for (int r = 0; r < c->ranks; ++r) /* nothing of ours still runs when the comms go */
        if (c->rank[r].stream && avk_cuda_push(c->rank[r].dev) == ATTNVK_OK) {
            c->rank[r].dev->cu->cuStreamSynchronize(c->rank[r].stream);
            avk_cuda_pop(c->rank[r].dev);
        }
    if (c->ccl) {
        CUcontext saved = NULL;
        driver_of(c)->cuCtxGetCurrent(&saved);
        for (int r = 0; r < c->ranks; ++r)
            if (c->rank[r].comm) c->ccl->ncclCommDestroy(c->rank[r].comm);
        driver_of(c)->cuCtxSetCurrent(saved);
    }
    for (int r = 0; r < c->ranks; ++r) {
        ring_rank *rk = &c->rank[r];
        if (avk_cuda_push(rk->dev) != ATTNVK_OK) continue; /* a lost context keeps them */
        const avk_cuda_driver *cu = rk->dev->cu;
        for (int slot = 0; slot < c->slots; ++slot) {
            if (c->start[slot * c->ranks + r]) cu->cuEventDestroy(c->start[slot * c->ranks + r]);
            if (c->end[slot * c->ranks + r]) cu->cuEventDestroy(c->end[slot * c->ranks + r]);
        }
        if (rk->ready) cu->cuEventDestroy(rk->ready);
        if (rk->copied) cu->cuEventDestroy(rk->copied);
        if (rk->stream) cu->cuStreamDestroy(rk->stream);
        avk_cuda_pop(rk->dev);
    }
    free(c->start);
    free(c->end);
    free(c->rank);
    free(c);
}

static attnvk_status create_rank(ring_rank *rk)
{
    avk_cuda_device *dev = rk->dev;
    attnvk_status s = avk_cuda_push(dev);
    if (s != ATTNVK_OK) return s;
    const avk_cuda_driver *cu = dev->cu;
    s = avk_cuda_check(dev, cu->cuStreamCreate(&rk->stream, CU_STREAM_NON_BLOCKING), "ring: cuStreamCreate");
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, cu->cuEventCreate(&rk->ready, CU_EVENT_DISABLE_TIMING), "ring: cuEventCreate");
    if (s == ATTNVK_OK)
        s = avk_cuda_check(dev, cu->cuEventCreate(&rk->copied, CU_EVENT_DISABLE_TIMING), "ring: cuEventCreate");
    avk_cuda_pop(dev);
    return s;
}

static int gpus_distinct(avk_bdev *const *devs, int ranks)
{
    for (int a = 0; a < ranks; ++a)
        for (int b = a + 1; b < ranks; ++b)
            if (devs[a]->ordinal == devs[b]->ordinal) return 0;
    return 1;
}

static attnvk_status init_nccl(avk_ring_comm *c)
{
    int *ordinals = malloc((size_t)c->ranks * sizeof *ordinals);
    avk_ccl_comm *comms = calloc((size_t)c->ranks, sizeof *comms);
    if (!ordinals || !comms) {
        free(ordinals);
        free(comms);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    char list[160] = "";
    for (int r = 0; r < c->ranks; ++r) {
        ordinals[r] = c->rank[r].dev->ordinal;
        const size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%d", r ? "," : "", ordinals[r]);
    }
    const avk_cuda_driver *cu = driver_of(c);
    CUcontext saved = NULL;
    cu->cuCtxGetCurrent(&saved);
    const avk_ccl_result e = c->ccl->ncclCommInitAll(comms, c->ranks, ordinals);
    cu->cuCtxSetCurrent(saved);
    attnvk_status s = ATTNVK_OK;
    if (e == AVK_CCL_SUCCESS)
        for (int r = 0; r < c->ranks; ++r) c->rank[r].comm = comms[r];
    else
        s = avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s: ncclCommInitAll over CUDA devices %s: %s", c->ccl->label, list,
                     c->ccl->ncclGetErrorString(e));
    free(ordinals);
    free(comms);
    return s;
}

static attnvk_status ring_create(avk_bdev *const *devs, int ranks, avk_ring_comm **out)
{
    if (!devs || ranks < 1 || !out) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ring comm: no ranks");
    *out = NULL;
    /* NCCL first: missing, nothing of the devices was touched */
    const avk_ccl *ccl = NULL;
    if (ranks > 1 && gpus_distinct(devs, ranks)) {
        ccl = avk_nccl_load();
        if (!ccl) return ATTNVK_ERROR_UNAVAILABLE; /* "nccl: cannot load ..." is set */
    }
    avk_ring_comm *c = calloc(1, sizeof *c);
    ring_rank *rank = calloc((size_t)ranks, sizeof *rank);
    if (!c || !rank) {
        free(c);
        free(rank);
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    c->ccl = ccl;
    c->ranks = ranks;
    c->rank = rank;
    c->last = -1;
    attnvk_status s = ATTNVK_OK;
    for (int r = 0; r < ranks && s == ATTNVK_OK; ++r) {
        rank[r].dev = devs[r];
        s = create_rank(&rank[r]);
    }
    if (s == ATTNVK_OK && ccl) s = init_nccl(c);
    if (s != ATTNVK_OK) {
        for (int r = 0; r < ranks; ++r) rank[r].dev = devs[r]; /* destroy visits every rank */
        ring_destroy(c);
        return s;
    }
    *out = c;
    return ATTNVK_OK;
}

const avk_ring_comm_ops avk_cuda_ring_comm = {
    .name = "nccl",
    .create = ring_create,
    .shift = ring_shift,
    .join = ring_join,
    .take_elapsed_ms = ring_take_elapsed_ms,
    .destroy = ring_destroy,
    .name_of = ring_name_of,
};
