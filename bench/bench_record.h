/* What `attnvk bench` and `attnvk check` measure: one record per
 * (case, device, implementation), the unit every output format writes. */
#ifndef ATTNVK_BENCH_RECORD_H
#define ATTNVK_BENCH_RECORD_H

#include "attnvk/attnvk.h"
#include "cold_start.h"
#include "sparse_pattern.h"

#include <stdint.h>

typedef enum bench_status { BENCH_OK = 0, BENCH_FAIL, BENCH_SKIPPED, BENCH_UNAVAILABLE } bench_status;
const char *bench_status_name(bench_status s);

/* --pass: what a record times. bwd: attnvk_kernel_backward after one untimed forward
 * (O and LSE); fwd+bwd: the forward then the backward, each timed (bench_backward.h). */
typedef enum bench_pass { BENCH_PASS_FWD = 0, BENCH_PASS_BWD, BENCH_PASS_FWD_BWD } bench_pass;
const char *bench_pass_name(bench_pass p); /* "fwd", "bwd", "fwd+bwd" */

/* The gradients a backward record checks, in this order; O only with fwd+bwd. */
enum { BENCH_GRAD_DQ, BENCH_GRAD_DK, BENCH_GRAD_DV, BENCH_GRAD_O, BENCH_GRAD_COUNT };
const char *bench_grad_name(int g); /* "dq", "dk", "dv", "o" */

/* One workload: a named problem (dtype and layout already applied). */
typedef struct bench_case {
    char name[96];
    attnvk_problem p;
    const char *note; /* static text, e.g. why a shape is an approximation; may be NULL */
    bench_block_pattern block_pattern; /* how the workload generates p's block layout (p.block_sparse) */
} bench_case;

typedef struct bench_stats {
    double min_ms, median_ms, mean_ms, std_ms, p95_ms, p99_ms, cv;
} bench_stats;

typedef struct bench_record {
    char implementation[32];
    int fused;
    int device_index;            /* into the results' device list */
    bench_case c;
    bench_status status;
    char reason[512];            /* empty when ok */

    double quant_error;          /* quantized K/V: output rel-L2 vs the reference on the unquantized inputs, else NAN */
    /* fp8 queries (the FP8 forward): rel-L2 vs the reference on the dequantized Q, K and V, the
     * one check.passed judges (check.rel_l2 is then the one vs the unquantized inputs); else NAN */
    double rel_l2_dequantized;
    int have_kernel;             /* prepare succeeded: kernel describes what ran */
    attnvk_kernel_info kernel;
    int have_bwd_kernel;         /* bwd, fwd+bwd: the backward said what ran (attnvk_backward_options.info) */
    attnvk_kernel_info bwd_kernel;

    double *samples_ms;          /* malloc'd; one sample = the sum of its chunk dispatches */
    int nsamples;
    int have_stats;
    bench_stats stats;

    double flops;
    double tflops, tokens_per_s, gbytes_per_s, peak_fraction; /* NAN: null (not a result) */
    /* memory-bound cases (bench_memory_bound): the device's measured read bandwidth
     * and gbytes_per_s as a fraction of it; NAN: null */
    double read_bandwidth_gbps, bandwidth_fraction;
    /* the roofline, from the device's measured peaks (`attnvk peak`; NAN/NULL when
     * none are cached): FLOPs per byte of Q, K, V and O, the bound that applies
     * there, what the device can reach at that intensity, and tflops against it */
    double arithmetic_intensity, attainable_tflops, roofline_fraction, compute_peak_tflops;
    const char *bound;           /* "compute" or "memory"; NULL without peaks */
    char compute_path[64];       /* the compute peak's path ("wgmma m64n256k16 f16->f32", "fma.rn.f32") */
    uint64_t memory_bytes;       /* Q+K+V+O(+LSE)+workspace of one input set; 0 unknown */

    int have_check;
    attnvk_check check;          /* bwd, fwd+bwd: the worst of grad_check (highest rel_l2 / tolerance) */

    bench_pass pass;
    /* bwd, fwd+bwd: each gradient's check (have_grad bit g: BENCH_GRAD_*), the worst one's index */
    unsigned have_grad;
    attnvk_check grad_check[BENCH_GRAD_COUNT];
    int worst_grad;
    /* fwd+bwd: the forward's and the backward's own samples' stats (samples_ms and stats: their sums) */
    int have_pass_stats;
    bench_stats fwd_stats, bwd_stats;

    int chunks;                  /* dispatches per sample (q_begin/q_count split) */
    int input_sets;              /* rotated copies of Q, K, V, O */
    int warmup_runs;
    int launches;                /* back-to-back launches per timed sample */
    int interrupted;             /* a stop request cut it short: not a finished record */

    /* filled when the results are linked (bench_results_link) */
    double speedup_vs_vendor;    /* NAN: none */
    char vendor_reference[32];
    /* a sparse case (block layout or dilation): the dense record of the same problem without its
     * pattern, implementation, device and pass in this run (have_dense 0: none ran ok) */
    int have_dense;
    struct bench_vs_dense {
        char dense_case[96];
        double dense_ms;            /* the dense record's median */
        double speedup;             /* dense_ms / this record's median */
        uint64_t dense_memory_bytes; /* 0: unknown */
        double memory_ratio;        /* memory_bytes / dense_memory_bytes; NAN: unknown */
    } vs_dense;

    bench_cold_result cold_start; /* --cold (bench_cold.h): present on ok records; written as cold_start */

    /* --ring G (bench_ring.h): the ring's ranks and what the record measured beside its own samples;
     * NAN: not measured */
    int have_ring;
    struct bench_ring_result {
        int ranks;
        int rank_device[64];      /* each rank's device, into the results' device list */
        char transport[32];       /* "host", "nccl", ... */
        char transport_note[192]; /* why the host transport was used, or "" */
        double transfer_ms;       /* median of the samples' K/V transfer time */
        double compute_only_ms;   /* median of the same schedule without transfers */
        double hidden_fraction;   /* of the transfer time, the share the computation hid */
        double single_ms;         /* one device (rank 0's) running the whole case */
        double shard_ms;          /* one device running an N/G share of it */
        double strong_scaling;    /* single_ms / (G * median) */
        double weak_scaling;      /* TFLOP/s per rank / the N/G share's TFLOP/s on one device */
        double tflops_per_rank;
        char baseline_note[192];  /* why a baseline is missing, or "" */
    } ring;
} bench_record;

/* Zeroed record of a case on a device, every result null (NAN). */
void bench_record_init(bench_record *r, const char *impl, int fused, int device_index, const bench_case *c);
/* Marks the record with status and a one-line reason. */
void bench_record_set(bench_record *r, bench_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void bench_record_free(bench_record *r);

/* Where attnvk's kernel configuration came from: "tuned", "table", "default" or "option",
 * from the kernel params' tuning= (core/tuning.h); NULL when the record has none. */
const char *bench_tuning_source(const bench_record *r, char *out, size_t n);

/* A vendor library's implementation: neither attnvk's kernel nor the cpu reference. */
int bench_is_vendor(const char *implementation);

/* "512 B", "64.0 MiB", "1.50 GiB". */
void bench_format_bytes(double bytes, char *out, size_t n);

/* Decode (Nq <= 16 query rows): bound by reading K and V, so rated in GB/s
 * against the device's measured read bandwidth rather than in FLOP/s. */
int bench_memory_bound(const attnvk_problem *p);

/* Bytes of Q, K, V (read) and O (written) once. */
double bench_io_bytes(const attnvk_problem *p);

/* The problem's dtype as records name it: "fp8" for the FP8 forward (fp8 Q, K and V), else its dtype. */
const char *bench_dtype_label(const attnvk_problem *p);

#endif
