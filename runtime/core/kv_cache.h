/* KV-cache shapes shared by the core and the backends: quantized row sizes,
 * paging, and the checks problem validation runs. */
#ifndef ATTNVK_KV_CACHE_H
#define ATTNVK_KV_CACHE_H

#include "attnvk/attnvk.h"

enum {
    AVK_QBLOCK = 32,          /* values per q8_0 / q4_0 block */
    AVK_Q8_0_BLOCK_BYTES = 34, /* f16 d + 32 int8 */
    AVK_Q4_0_BLOCK_BYTES = 18, /* f16 d + 16 bytes of nibbles */
    AVK_MAX_PAGE_SIZE = 4096,
};
#define AVK_FP8_MAX 448.0f /* largest finite e4m3 */

/* Paged, quantized and ragged rules (called by attnvk_problem_validate). */
attnvk_status avk_kv_cache_validate(const attnvk_problem *p);
/* The ATTNVK_FEATURE_* bits a problem needs. */
unsigned avk_problem_features(const attnvk_problem *p);
/* The score modifications and visibility bounds among them (#13). */
#define AVK_SCORE_FEATURES                                                                                     \
    (ATTNVK_FEATURE_SOFTCAP | ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_ALIBI | ATTNVK_FEATURE_SINKS |             \
     ATTNVK_FEATURE_MASK | ATTNVK_FEATURE_TOP_LEFT)
/* Those that change a score's value (the rest only bound the visible keys or join the epilogue). */
#define AVK_SCORE_MOD_FEATURES (ATTNVK_FEATURE_SOFTCAP | ATTNVK_FEATURE_ALIBI | ATTNVK_FEATURE_MASK)
/* The AVK_MOD_* bits (contract/kernel_flags.h) of the problem's score
 * modifications: the AVK_SCORE_MOD a kernel for it is built with. */
unsigned avk_score_mod_bits(const attnvk_problem *p);
/* "paged KV cache", "q8_0 KV cache", ... for the first bit of missing. */
const char *avk_feature_name(unsigned missing);
/* 1 when the problem reads seq_lens. */
static inline int avk_problem_has_seq_lens(const attnvk_problem *p) { return p->page_size > 0 || p->ragged; }

/* Index of the K/V row holding key j of (b, g), as the kernels compute it
 * (the contract's avk_kv_row): contiguous in the layout, or through the block
 * table with the page clamped to the cache. */
size_t avk_kv_row_index(const attnvk_problem *p, const int32_t *table, int b, int g, int j);

#endif
