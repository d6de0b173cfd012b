/* `attnvk bench` command line: parsed once, checked before anything runs. */
#ifndef ATTNVK_BENCH_OPTIONS_H
#define ATTNVK_BENCH_OPTIONS_H

#include "attnvk/attnvk.h"
#include "bench_record.h" /* bench_pass */
#include "sparse_pattern.h"

#include <stdint.h>

typedef enum bench_format { BENCH_FMT_TABLE = 0, BENCH_FMT_JSON, BENCH_FMT_CSV, BENCH_FMT_MD, BENCH_FMT_JSONL } bench_format;

enum { BENCH_MAX_LIST = 32, BENCH_BLOCK_SIZE = 64 }; /* BENCH_BLOCK_SIZE: --block-size default, both sides */

typedef struct bench_options {
    unsigned api_mask;           /* bit (1u << attnvk_api) per API asked for */
    int api_all;                 /* --api all (the default) */
    const char *api_text;        /* as given, for messages */
    const char *device;          /* --device SPEC, or NULL */
    const char *impls;           /* --impl LIST, or NULL for every listed implementation */
    const char *suite;           /* NULL with shape options */
    int shape_given;
    long batch, heads, kv_heads; /* kv_heads 0: = heads */
    long seq[BENCH_MAX_LIST];
    int nseq;
    long seq_kv;                 /* 0: = seq */
    long head_dim[BENCH_MAX_LIST];
    int nhead_dim;
    attnvk_dtype dtype;
    int dtype_given;
    attnvk_layout layout;
    int causal;
    long iters;                  /* 0: calibrated to min_time_s */
    double min_time_s;
    int min_time_given;
    long warmup;
    int warmup_given;
    double warmup_s;             /* --warmup-time: wall-time floor of a GPU's warm-up */
    long launches;               /* --launches: 0 auto */
    double cooldown_s;
    double max_time_s;           /* --max-time: the whole run's wall time (0: unbounded); what finished is kept */
    bench_format format;         /* -o: stdout and --out alike */
    int compact;                 /* --compact: the table in 80 columns */
    const char *out;
    uint64_t seed;
    const char *variant;
    int tile_br, tile_bc;
    long split_kv;
    attnvk_kv_format kv_format;  /* --kv-dtype */
    attnvk_kv_format q_format;   /* --q-dtype: fp8 is the FP8 forward (needs an fp8 cache, f16/bf16 O) */
    int kv_format_given, q_format_given;
    int dtype_fp8;               /* --dtype fp8: f16 O with --q-dtype fp8 --kv-dtype fp8 */
    long head_dim_v;             /* --head-dim-v: V and O's head dim on every case; 0: each case's D */
    /* score modifications and visibility applied to every case (attnvk_problem) */
    double softcap;
    int window, window_left, window_right;
    attnvk_causal_align align;
    int alibi, sinks, mask;      /* --alibi, --sinks random, --mask random (10% -inf) */
    /* sparse patterns (#20) on every case: --block-layout PATTERN (generated per
     * case) in --block-size blocks, --dilated (the segments and rates in dilated) */
    bench_block_pattern block_pattern;
    int block_q, block_k;        /* 0: not given (64x64 with --block-layout) */
    attnvk_problem dilated;      /* dilated_groups, dilated_segment, dilated_rate; the rest unused */
    long page_size;              /* --page-size: 0 none; else a paged twin of every case */
    long max_seq;                /* --max-seq: a suite's cases up to this Nq and Nk (0: all) */
    const char *case_filter;     /* --case: a suite's cases whose name contains it (NULL: all) */
    uint64_t max_memory;         /* 0: each device's own memory */
    unsigned test_flags;         /* --test-wrong-kernel */
    int save;                    /* --save: store the run in the history database */
    const char *db;              /* --db PATH (implies --save); NULL: the default database */
    bench_pass pass;             /* --pass fwd|bwd|fwd+bwd (fwd) */
    int cold;                    /* --cold: also the time to the first correct result on empty and warm
                                    kernel caches, each in a fresh process (bench_cold.h) */
    long cold_runs;              /* --cold-runs N: pairs of starts per record, medians reported (1) */
    long ring;                   /* --ring G / --gpus G: ring attention over G ranks (0: off) */
    const char *cold_child;      /* hidden --cold-child CASE:API:DEVICE:IMPL:NAME: be one such start */
    char command[2048];          /* the command line, for the results file */
} bench_options;

/* 0: parsed; -1: help printed (exit 0); else the exit code (a one-line error was printed). */
int bench_parse_options(int argc, char **argv, bench_options *o);

/* Shared by bench and run: --dtype fp8's shorthand and --q-dtype's rules, applied once
 * every option is read (the order does not matter); --q-dtype fp8 without --dtype writes
 * O in f16. 0, or a usage error printed (exit code). who: "bench" or "run". */
int bench_resolve_fp8(const char *who, int dtype_fp8, int dtype_given, attnvk_dtype *dtype, int q_format_given,
                      attnvk_kv_format *q_format, int kv_format_given, attnvk_kv_format *kv_format);

/* The settings' and the summary's dtype: "fp8" with fp8 queries, else the dtype's name. */
const char *bench_options_dtype_label(const bench_options *o, attnvk_dtype dtype);

/* Shared by bench and check: "all" or a comma list of API names -> mask. 1 on success. */
int bench_parse_api_list(const char *s, unsigned *mask, int *all);
/* Joins argv into out ("attnvk bench ..."). */
void bench_command_line(const char *prefix, int argc, char **argv, char *out, size_t n);

#endif
