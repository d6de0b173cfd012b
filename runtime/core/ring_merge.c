#include "core/ring_merge.h"

#include <math.h>
#include <stdlib.h>

enum { MERGE_ROW_MAX = 1024 }; /* Dv up to 576 (MLA) fits a row buffer on the stack */

void avk_ring_merge_host(const avk_host_merge *m)
{
    size_t rows = (size_t)m->batch * m->heads * m->rows_per_head, dv = (size_t)m->dv;
    size_t esize = attnvk_dtype_size(m->dtype);
    float part[MERGE_ROW_MAX];
    float *row = dv <= MERGE_ROW_MAX ? part : malloc(dv * sizeof(float));
    if (!row) abort(); /* Dv is bounded by the problem's validation; never reached */
    for (size_t r = 0; r < rows; r++) {
        float lp = m->lse_part[r];
        float *acc = m->o_acc + r * dv;
        attnvk_unpack(m->dtype, (const unsigned char *)m->o_part + r * dv * esize, row, dv);
        if (m->first) {
            for (size_t d = 0; d < dv; d++) acc[d] = row[d];
            m->lse_acc[r] = lp;
        } else {
            float la = m->lse_acc[r], mx = la > lp ? la : lp;
            if (mx == -INFINITY) {
                for (size_t d = 0; d < dv; d++) acc[d] = 0.0f;
                m->lse_acc[r] = -INFINITY;
            } else {
                float wa = expf(la - mx), wp = expf(lp - mx), inv = 1.0f / (wa + wp);
                for (size_t d = 0; d < dv; d++) acc[d] = (acc[d] * wa + row[d] * wp) * inv;
                m->lse_acc[r] = mx + logf(wa + wp);
            }
        }
        if (m->o_out) attnvk_pack(m->dtype, acc, (unsigned char *)m->o_out + r * dv * esize, dv);
    }
    if (row != part) free(row);
}
