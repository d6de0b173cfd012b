/* Builds a KV cache on the host the way an inference engine holds one:
 * quantized to the problem's kv format, and for a paged problem spread over
 * pages in shuffled order, with garbage in the block table past each
 * sequence's last page (kernels must never read it). Used by the CLI's
 * bench, `check` and every API's tests, so all of them exercise the same
 * caches. */
#ifndef ATTNVK_KV_BUILD_H
#define ATTNVK_KV_BUILD_H

#include "attnvk/attnvk.h"

#include <stdint.h>

typedef struct avk_kv_host {
    void *k, *v;            /* attnvk_kv_bytes(p) each */
    size_t bytes;
    int32_t *block_table;   /* [B][max_pages] when paged, else NULL */
    int32_t *seq_lens;      /* [B] when the problem has them, else NULL */
    float *kv_scales;       /* [2][H_kv] for fp8, else NULL */
} avk_kv_host;

/* Pages a paged problem needs for these lengths (each sequence its own). */
int avk_kv_pages_needed(const attnvk_problem *p, const int32_t *seq_lens);

/* p: a validated problem whose paging fields (num_pages, max_pages) are
 * already set (avk_kv_pages_needed gives num_pages). k and v: contiguous f32
 * in p->layout with Nk keys; seq_lens: [B] or NULL (= Nk each). seed shuffles
 * the pages. On success the caller frees with avk_kv_host_free. */
attnvk_status avk_kv_build(const attnvk_problem *p, const float *k, const float *v, const int32_t *seq_lens,
                           uint64_t seed, avk_kv_host *out);
/* The same with fp8_one_scale: an fp8 cache gets one scale for K and one for V
 * (avk_fp8_one_scale), still stored per kv head. */
attnvk_status avk_kv_build_scaled(const attnvk_problem *p, const float *k, const float *v, const int32_t *seq_lens,
                                  uint64_t seed, int fp8_one_scale, avk_kv_host *out);
void avk_kv_host_free(avk_kv_host *h);

/* The K and V the kernel sees (decoded, zero past each length), contiguous
 * f32 in p->layout: what the reference must be given. */
attnvk_status avk_kv_host_decoded(const attnvk_problem *p, const avk_kv_host *h, float *k, float *v);

#endif
