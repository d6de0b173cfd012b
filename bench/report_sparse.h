/* Where a sparse pattern overtakes dense attention (issue #20): for each family of
 * sparse cases (equal but for the sequence length, report_same_family, the pattern
 * included) and each implementation, API and device, the records' vs_dense points
 * (the sparse median against the dense partner's of the same run) and the crossover:
 * the smallest N from which the sparse case is faster at every larger N measured. */
#ifndef ATTNVK_REPORT_SPARSE_H
#define ATTNVK_REPORT_SPARSE_H

#include "report_buf.h"
#include "report_crossover.h"
#include "results_file.h"

typedef struct sparse_point {
    long n;                   /* Nk */
    double sparse_ms, dense_ms;
    double memory_ratio;      /* sparse / dense memory_bytes; NAN unknown */
} sparse_point;

typedef struct sparse_crossover {
    const results_record *first; /* the family's first sparse record: implementation, api, device, case */
    int point_count;             /* ascending N */
    sparse_point points[CROSSOVER_MAX_POINTS];
    long crossover_n;            /* 0: the sparse case is not faster at the largest N */
    bool from_first;             /* faster already at the smallest N (the crossover lies at or below it) */
    bool batch_moves;            /* B changes with N (B·N stays) */
    double speedup_at, speedup_last; /* dense_ms / sparse_ms at crossover_n (NAN without) and at the largest N */
} sparse_crossover;

typedef struct sparse_crossovers {
    sparse_crossover *items;
    int count;
} sparse_crossovers;

/* Every family of records[0..n) with an ok record carrying vs_dense, in the order of
 * their first records. 0, or -1 when out of memory. */
int report_sparse_compute(const results_record *records, int n, sparse_crossovers *out);
void report_sparse_free(sparse_crossovers *x);

/* One line of text (no newline): "attnvk cuda NVIDIA H100: dilated 2048,4096:1,2 D=64 B*N=48k
 * H=12/12 causal f16: sparse faster from N=4k (1.8x there, 21x at 1M)". */
void report_sparse_line(const sparse_crossover *x, char *out, size_t n);
/* The HTML table of the crossovers; nothing when there are none. */
void report_sparse_table(strbuf *o, const sparse_crossovers *xo);

#endif
