/* Split-KV (flash-decoding) planning, one policy for every API: backends supply
 * numbers (key count, key tile, workgroups, compute units), not copies of policy. */
#ifndef ATTNVK_SPLIT_PLAN_H
#define ATTNVK_SPLIT_PLAN_H

#include "attnvk/attnvk.h"

#include <stdint.h>

/* Nq up to this is a decode shape: few row blocks, so the keys are split across
 * workgroups, and tuning tables pick their decode entries. */
enum { AVK_DECODE_MAX_ROWS = 16 };

int avk_is_decode(const attnvk_problem *p);

typedef struct avk_split_request {
    int64_t kv_len;      /* keys each row block may read (the kernel's key limit) */
    int kv_tile;         /* keys per tile: a split is a whole number of tiles */
    int64_t workgroups;  /* workgroups without splitting (row blocks x heads x batch) */
    int compute_units;   /* of the device; 0 when unknown */
    int requested;       /* --split-kv: 0 automatic, 1 never, N exactly N (capped by the tiles) */
    int decode;          /* automatic splitting applies to decode shapes only */
    int resident;        /* workgroups of this kernel one unit runs at once (occupancy); 0 = 1 */
    int whole_waves;     /* automatic splits round down to whole waves of units x resident (a kernel
                            whose every workgroup streams alike, so a partial last wave is pure tail);
                            of about equally full last waves, the fewest splits */
} avk_split_request;

typedef struct avk_split_plan {
    int splits;          /* >= 1; every split holds at least one tile */
    int tiles_per_split; /* the last split may hold fewer */
} avk_split_plan;

avk_split_plan avk_plan_split_kv(const avk_split_request *r);

#endif
