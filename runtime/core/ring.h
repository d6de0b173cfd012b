/* Ring attention's state, shared by core/ring.c (create, transports),
 * ring_io.c (scatter and gather) and ring_run.c (the schedule). */
#ifndef ATTNVK_RING_INTERNAL_H
#define ATTNVK_RING_INTERNAL_H

#include "attnvk/attnvk.h"
#include "core/ring_comm.h"
#include "core/ring_plan.h"

enum {
    RING_KV_SETS = 3, /* the rank's own K/V (kept for the next run), and two that the others' take turns in */
    RING_SLOTS = 2,   /* chunks per rank: 2 with zigzag */
    /* distinct blocks per rank: each own chunk against each chunk of the sequence at most */
    RING_KERNELS = RING_SLOTS * AVK_RING_MAX_CHUNKS,
};

typedef struct ring_kernel {
    int lq, lk, offset, bounded;
    attnvk_kernel *k;
} ring_kernel;

typedef struct ring_rank {
    attnvk_device *dev;
    int n, chunk[RING_SLOTS]; /* its chunks, in its order */
    int device_merge;         /* the backend merges on the device; else the host does */
    attnvk_buffer *q[RING_SLOTS], *o[RING_SLOTS];
    attnvk_buffer *o_part[RING_SLOTS], *lse_part[RING_SLOTS]; /* a block's output */
    attnvk_buffer *acc_o[RING_SLOTS], *acc_lse[RING_SLOTS];   /* f32, device merge */
    float *host_acc_o[RING_SLOTS], *host_acc_lse[RING_SLOTS]; /* host merge */
    attnvk_buffer *k[RING_KV_SETS][RING_SLOTS], *v[RING_KV_SETS][RING_SLOTS];
    attnvk_buffer *slopes; /* ALiBi */
    ring_kernel kernels[RING_KERNELS];
    int nkernels;
} ring_rank;

/* The K/V set step s reads: the own one first, then the two travelling ones in turn. */
static inline int ring_kv_set(int step) { return step == 0 ? 0 : 1 + (step - 1) % 2; }

struct attnvk_ring {
    attnvk_problem p; /* the whole sequence's */
    attnvk_ring_options opts;
    avk_ring_plan plan;
    int ranks;
    ring_rank *rank;
    int max_chunk;
    size_t kv_slot_bytes; /* one chunk of K (or V) at max_chunk tokens, in dtype */
    const avk_ring_comm_ops *comm_ops;
    avk_ring_comm *comm;  /* NULL: host transport */
    char transport[32];
    char fallback[256];   /* why AUTO took the host */
    int uploaded;
    void *staging;        /* host: one K/V chunk, or one Q/O chunk in dtype */
    float *staging_f32, *staging_lse;
};

/* Moves every rank's K/V set `from` into the next rank's set `to` (ring.c);
 * the host transport adds its wall time to *host_ms. */
attnvk_status avk_ring_shift_kv(attnvk_ring *r, int from, int to, double *host_ms);
double avk_ring_now_ms(void);

#endif
