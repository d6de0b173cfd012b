/* Where a GPU API overtakes the CPU: for each case family (cases equal but for the
 * sequence length) and each (GPU API, device) with attnvk records, the smallest
 * sequence length at which attnvk's record on that API is faster than the best
 * record of the CPU device (API "cpu": attnvk's flash-f32 kernel, the openblas
 * baseline; never the float64 reference, which is the oracle, not a contender). */
#ifndef ATTNVK_REPORT_CROSSOVER_H
#define ATTNVK_REPORT_CROSSOVER_H

#include "results_file.h"

#include <stdbool.h>

enum { CROSSOVER_MAX_POINTS = 64 };

/* Cases of one family: equal but for the sequence length. N is Nk; where Nq = Nk both
 * move, else Nq stays (decode). The batch may move too where B·Nq stays (the FlashAttention
 * papers' grid, the fa-grid suite). A sparse pattern (results_case.pattern) stays too. */
bool report_same_family(const results_case *a, const results_case *b);

typedef struct crossover_point {
    long n;                 /* Nk */
    double cpu_ms, gpu_ms;  /* the CPU's best median, attnvk's median on the GPU API */
    double cpu_tflops;      /* the CPU's best throughput at n (from flops and cpu_ms) */
    char cpu_impl[32];      /* which CPU implementation was the best at n */
} crossover_point;

typedef struct report_crossover {
    const results_record *gpu;   /* attnvk's first record of the family on the API: api, device, case */
    int point_count;             /* lengths measured on both sides, ascending */
    crossover_point points[CROSSOVER_MAX_POINTS];
    long crossover_n;            /* the smallest N where the GPU API is faster; 0: at none */
    bool from_first;             /* faster already at the smallest N compared (the crossover lies at or below it) */
    bool stays_ahead;            /* faster at every compared N from crossover_n up */
    double speedup_at;           /* cpu_ms / gpu_ms at crossover_n (NAN when none) */
    double speedup_last;         /* at the largest N compared */
} report_crossover;

typedef struct report_crossovers {
    report_crossover *items;
    int count;
} report_crossovers;

/* Every (family, GPU API and device) of records[0..n) with at least one length measured
 * on both sides, in the order of the families' first records. 0, or -1 when out of memory.
 * Records that did not finish ok or carry no median are left out. */
int report_crossover_compute(const results_record *records, int n, report_crossovers *out);
void report_crossover_free(report_crossovers *c);

/* "2k" / "512" / "1M": a sequence length as the charts' axes write it. */
void report_length_text(long n, char *out, size_t size);

#endif
