/* Ring attention's device-to-device transports (NCCL on CUDA, RCCL on HIP):
 * what a backend offers in attnvk_backend.ring_comm. core/ring.c drives
 * them; without one it moves K/V through host memory itself. */
#ifndef ATTNVK_RING_COMM_H
#define ATTNVK_RING_COMM_H

#include "core/backend.h"

typedef struct avk_ring_comm avk_ring_comm; /* transport-defined */

/* One step's transfers: every rank r sends its `count` buffers
 * send[r * count + i] to rank (r + 1) % ranks, which receives them into
 * recv[((r + 1) % ranks) * count + i]; bytes[i] bytes each (<= both sizes). */
typedef struct avk_ring_shift {
    avk_bbuf *const *send;
    avk_bbuf *const *recv;
    const size_t *bytes;
    int count;
} avk_ring_shift;

typedef struct avk_ring_comm_ops {
    const char *name; /* "nccl", "rccl" */
    /* A communicator over devs[0..ranks-1], opened devices of this backend,
     * rank i on devs[i]. UNAVAILABLE with the reason when the library is
     * missing; UNSUPPORTED with the reason when it cannot serve these
     * devices (the core then uses host memory). */
    attnvk_status (*create)(avk_bdev *const *devs, int ranks, avk_ring_comm **out);
    /* Enqueues one step's transfers and returns. On each rank they start
     * after everything already enqueued on the device's own queue (the last
     * step's runs and merges, which read the receive buffers) and may run
     * beside what is enqueued there next (this step's runs, which only read
     * the send buffers). */
    attnvk_status (*shift)(avk_ring_comm *c, const avk_ring_shift *s);
    /* Orders each rank's own queue after the last shift's transfers: runs
     * enqueued next may read what it received. */
    attnvk_status (*join)(avk_ring_comm *c);
    /* Milliseconds the transfers of every shift since the last call took
     * (per shift the slowest rank's, summed), once the devices have been
     * waited on; resets the sum. -1 when the transport cannot time them. */
    double (*take_elapsed_ms)(avk_ring_comm *c);
    void (*destroy)(avk_ring_comm *c);
    /* The transport c actually uses, when create may pick another than
     * `name` (CUDA: "cuda-copy" for ranks sharing a GPU, which NCCL
     * refuses). May be NULL: `name`. */
    const char *(*name_of)(avk_ring_comm *c);
} avk_ring_comm_ops;

#endif
