/* Sparse patterns on the command line (#20): `attnvk run`'s and `attnvk
 * bench`'s --block-size and --dilated, and the bench's generated block
 * layouts (--block-layout random:DENSITY | local:W | bigbird:W,G,R). */
#ifndef ATTNVK_SPARSE_PATTERN_H
#define ATTNVK_SPARSE_PATTERN_H

#include "attnvk/attnvk.h"

#include <stddef.h>
#include <stdint.h>

typedef enum bench_layout_kind {
    BENCH_LAYOUT_NONE = 0,
    BENCH_LAYOUT_RANDOM,  /* each block live with probability density */
    BENCH_LAYOUT_LOCAL,   /* the key blocks within window blocks of the diagonal */
    BENCH_LAYOUT_BIGBIRD, /* local + globals global row and column blocks + randoms random blocks per row */
} bench_layout_kind;

/* A block layout the bench generates from each case's seed. */
typedef struct bench_block_pattern {
    bench_layout_kind kind;
    double density;
    int window, globals, randoms;
} bench_block_pattern;

/* "random:0.1", "local:2", "bigbird:2,1,2" -> *out; 1 parsed, 0 not. */
int sparse_parse_pattern(const char *s, bench_block_pattern *out);
/* The pattern as parsed back ("random:0.1"), for records. */
void sparse_pattern_text(const bench_block_pattern *pat, char *out, size_t n);
/* "S0,S1,..:R0,R1,.." -> the problem's dilated_groups, segments and rates
 * (values 0 are kept: the problem's validation names them); 1 parsed, 0 not. */
int sparse_parse_dilated(const char *s, attnvk_problem *p);
/* The case name's suffix of a problem's patterns: "-bs64x64r0.1", "-bs64x64l2",
 * "-bs64x64bb2_1_2", "-dil2048_4096r1_2" (no ':' or ','); "" without. */
void sparse_name_suffix(const attnvk_problem *p, const bench_block_pattern *pat, char *out, size_t n);

/* Fills p's layout (attnvk_block_layout_bytes(p) bytes; p->layout_batch and
 * layout_heads 1) with pat, the same for the same seed. */
void sparse_fill_layout(const attnvk_problem *p, const bench_block_pattern *pat, uint64_t seed, uint8_t *layout);

#endif
