/* The command lines of `attnvk run` and `attnvk check`, parsed apart from the
 * work they start, so tests/fuzz can call the parsers over and over: they
 * allocate nothing, keep no state, never exit, and point into argv.
 * Each returns 0 (parsed), -1 (help printed: exit 0) or the exit code after
 * printing a one-line error. (`attnvk bench`: bench_parse_options.) */
#ifndef ATTNVK_CMD_ARGS_H
#define ATTNVK_CMD_ARGS_H

#include "attnvk/attnvk.h"

#include <stdint.h>

typedef struct run_args {
    const char *api, *device, *q, *k, *v, *out, *lse, *impl, *variant;
    const char *block_table, *seq_lens; /* paged K/V: both or neither */
    attnvk_kv_format kv_format;         /* --kv-dtype: quantized on the host */
    attnvk_kv_format q_format;          /* --q-dtype fp8: the FP8 forward, Q quantized on the host too */
    int causal, check, tile_br, tile_bc, split_kv;
    double scale;
    attnvk_dtype dtype;
    int dtype_given, dtype_fp8, kv_format_given, q_format_given; /* --dtype fp8: f16 O, fp8 Q, K and V */
    attnvk_layout layout;
    /* score modifications and visibility (attnvk_problem) */
    const char *mask, *sinks, *alibi_slopes; /* .npy files */
    int alibi;                               /* --alibi: ggml's slopes */
    double softcap;
    int window, window_left, window_right;
    attnvk_causal_align align;
    /* sparse patterns (#20): a block layout .npy in BQxBK blocks; dilated
     * attention's groups, segments and rates (in dilated; the rest unused) */
    const char *block_layout;
    int block_q, block_k;
    attnvk_problem dilated;
    /* the backward pass: dO in, gradients out (at least one with grad_out) */
    const char *grad_out, *out_dq, *out_dk, *out_dv, *out_dsinks;
    int deterministic;
} run_args;

int run_parse_args(int argc, char **argv, run_args *a);

typedef struct check_args {
    unsigned api_mask;
    int api_all;
    const char *device, *impls;
    const char *variant; /* attnvk's kernel variant, or NULL: the one each device picks */
    attnvk_dtype dtypes[3];
    int ndtypes;
    uint64_t seed;
    unsigned test_flags;
} check_args;

int check_parse_args(int argc, char **argv, check_args *a);

#endif
