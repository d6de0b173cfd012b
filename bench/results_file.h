/* Results files (format_version 1): what `attnvk bench` writes and what compare,
 * history and report read. The loader keeps only what the readers use; the raw
 * JSON text is what the history database stores. */
#ifndef ATTNVK_RESULTS_FILE_H
#define ATTNVK_RESULTS_FILE_H

#include "cold_start.h"

#include <stdbool.h>
#include <stddef.h>

#define RESULTS_FORMAT_VERSION 1

typedef enum result_status { RESULT_OK, RESULT_FAIL, RESULT_SKIPPED, RESULT_UNAVAILABLE } result_status;

typedef struct results_case {
    char name[128];
    long batch, heads, kv_heads, seq_q, seq_kv, head_dim; /* 1..RESULTS_MAX_SIZE */
    bool causal;
    char dtype[16], layout[16];
    double scale; /* NAN when absent */
    /* a sparse case's pattern, "" when dense: "dilated 2048,4096:1,2" or "block local:1 64x64" */
    char pattern[112];
} results_case;

typedef struct results_stats {
    bool present;
    double min_ms, median_ms, mean_ms, std_ms, p95_ms, p99_ms, cv; /* NAN when absent */
    /* From samples_ms (the writer keeps no p5): p5 and, where the file left it null, p95, by the
     * writer's linear interpolation and only from 20 samples on (as p95); max_ms, the largest
     * sample, and sample_count (0 without samples_ms). */
    double p5_ms, max_ms;
    int sample_count;
} results_stats;

typedef struct results_check {
    bool present;
    double rel_l2, max_abs, tolerance; /* NAN when absent */
    double rel_l2_dequantized;         /* the FP8 forward's checked error (rel_l2: vs its unquantized inputs); NAN: absent */
    bool passed;
} results_check;

/* The error `passed` judged: the FP8 forward's rel_l2_dequantized (its rel_l2 is mostly e4m3's
 * rounding of the inputs, ~5%, whatever the kernel does), else rel_l2. */
static inline double results_checked_rel_l2(const results_check *c)
{
    return c->rel_l2_dequantized == c->rel_l2_dequantized ? c->rel_l2_dequantized : c->rel_l2;
}

/* The record on its device's roofline (`roofline`; absent in older files). */
typedef struct results_roofline {
    bool present;
    double arithmetic_intensity;                             /* FLOP per byte of Q, K, V and O */
    double compute_peak_tflops, attainable_tflops, fraction; /* NAN without the device's peaks */
    char bound[16];                                          /* "memory", "compute" or "" */
    char compute_path[128];
} results_roofline;

typedef struct results_record {
    char implementation[32], api[16];
    char device_name[256], device_uuid[64] /* "" when the API has none */, group[256], driver_version[128];
    int device_index;
    results_case kase;
    result_status status;
    char reason[512], variant[64];
    results_stats stats;
    double flops, tflops, memory_bytes, speedup_vs_vendor; /* NAN when null or absent */
    int fused; /* the writer's "fused" flag: 1, 0, or -1 when absent */
    int launches; /* back-to-back launches per timed sample (1 when absent or null: files before --launches) */
    char vendor_reference[32];
    char pass[8];         /* "fwd" (also when absent), "bwd", "fwd+bwd": records of different passes never match */
    results_check check;
    int tile_br, tile_bc; /* the kernel's tile; 0 when null or absent */
    double gbytes_per_s;  /* NAN when null or absent */
    results_roofline roofline;
    bench_cold_result cold_start; /* `attnvk bench --cold` (cold_start.h); present false when absent */
    /* a sparse record against its dense partner (`vs_dense`); present false when absent or null */
    struct results_vs_dense {
        bool present;
        char dense_case[128];
        double dense_ms, speedup, memory_ratio; /* memory_ratio NAN when null */
    } vs_dense;
} results_record;

/* One entry of a device's `peak` record (`attnvk peak`): read, copy, fma_f32, fma_f16, matrix. */
typedef enum results_peak_field { PEAK_READ, PEAK_COPY, PEAK_FMA_F32, PEAK_FMA_F16, PEAK_MATRIX, PEAK_FIELD_COUNT } results_peak_field;
typedef struct results_peak_entry {
    double value; /* GB/s or GFLOP/s (unit); NAN when null */
    char unit[16], state[24], path[160], reason[256];
} results_peak_entry;

typedef struct results_device {
    char api[16], name[256], vendor[64], driver_version[128], api_version[64], uuid[64], group[256];
    int index;
    double memory_bytes;
    char type[16];        /* "discrete", "integrated", "cpu", ... ("" when absent) */
    bool has_peak;        /* the file carries the device's cached peaks */
    results_peak_entry peak[PEAK_FIELD_COUNT];
} results_device;

/* "read", "copy", "fma_f32", "fma_f16", "matrix": the keys of a device's peak object. */
const char *results_peak_field_name(results_peak_field f);

typedef struct results_run {
    char label[512]; /* the file path or "run #ID": names the run in messages */
    int format_version;
    char attnvk_version[32], git_commit[64], created[64];
    char host_os[128], hostname[128], cpu[256], command[1024];
    char suite[64], dtype[16], layout[16];
    results_device *devices;
    int device_count;
    results_record *records;
    int record_count;
} results_run;

/* What the reader accepts: case sizes are what attnvk_problem holds (int), so a product
 * of two fits a long long; far more records than any suite has. */
#define RESULTS_MAX_SIZE 2147483647L
#define RESULTS_MAX_RECORDS 1000000

/* Parses results JSON: len bytes of text (no NUL needed; only white space may follow the
 * value). 0 on success; otherwise 2 (bad input: invalid JSON, a required field missing, a
 * value of the wrong type or out of range — sizes 1..RESULTS_MAX_SIZE, times and counts
 * finite and >= 0) or 1 (out of memory), with a one-line reason naming `label` and the
 * value ("x.json: records[3].case.batch must be ...") in err. out is freed on failure. */
int results_parse_buffer(const char *text, size_t len, const char *label, results_run *out, char *err, size_t err_size);
/* The same for a NUL-terminated string. */
int results_parse(const char *text, const char *label, results_run *out, char *err, size_t err_size);
/* Reads a whole file (NUL-terminated, caller frees); NULL with the reason in err. */
char *results_read_file(const char *path, char *err, size_t err_size);
/* results_read_file + results_parse; a missing file is bad input (2). */
int results_load_file(const char *path, results_run *out, char *err, size_t err_size);
void results_free(results_run *run);
/* Writes results JSON that could not be stored elsewhere to a new file,
 * ./attnvk-unsaved-<UTC time>-<pid>.json, else the same name in $TMPDIR (or /tmp).
 * 0 with its path in `path`; -1 with the reason in `path` when neither is writable. */
int results_keep_unsaved(const char *json, char *path, size_t n);

const char *result_status_name(result_status s);
bool results_same_case(const results_case *a, const results_case *b);
/* uuid when both records have one, else the device name; never the driver version. */
bool results_same_device(const results_record *a, const results_record *b);
bool results_same_key(const results_record *a, const results_record *b); /* impl, api, device, case */
/* The case name, or a description built from its fields when it has none. */
void results_case_label(const results_case *c, char *out, size_t n);
/* cudnn, cublas, clblast, rocblas: the vendor's kernels. */
bool results_is_vendor_native(const char *implementation);
/* Unfused baselines (GEMM + softmax + GEMM) keep the full score matrix in memory:
 * the record's "fused" flag when it has one, else cublas, clblast, rocblas. */
bool results_is_unfused(const results_record *r);

/* Filters, shared by history, compare and report.
 * Device SPEC: [API:]TEXT — TEXT is a case-insensitive substring of the device
 * name, or a prefix of its uuid; an empty TEXT matches every device of API.
 * Case SPEC: a glob (fnmatch) on the case name when it has * ? or [, else a substring. */
bool results_device_matches(const char *spec, const char *api, const char *name, const char *uuid);
bool results_case_matches(const char *spec, const char *case_name);
/* Whether any record's device matches spec. */
bool results_run_has_device(const results_run *run, const char *spec);
/* Appends "API:NAME" of every device with records to a ", "-separated list (a valid
 * --device SPEC each), for the message that says which devices there are. */
void results_list_devices(const results_run *run, char *out, size_t n);
/* Appends item to a ", "-separated list unless listed already; ends it with "..." when full. */
void results_list_add(char *out, size_t n, const char *item);
/* Keeps the records for which keep() is true (in order). */
void results_filter(results_run *run, bool (*keep)(const results_record *, void *), void *ctx);

#endif
