/* `attnvk run`: attention on .npy files through one chosen API. */
#include "cli.h"
#include "cmd_args.h"
#include "bench_options.h" /* bench_resolve_fp8 */
#include "core/atomic_file.h"
#include "core/npy.h"
#include "run_cache.h"
#include "run_grads.h"
#include "run_scores.h"
#include "sparse_pattern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char run_usage[] =
    "usage: attnvk run --api API [--device N|NAME] --q Q.npy --k K.npy --v V.npy --out O.npy\n"
    "                  [--causal] [--scale S] [--dtype f32|f16|bf16|fp8] [--layout bhsd|bshd]\n"
    "                  [--impl NAME] [--variant NAME] [--tile BRxBC] [--split-kv N] [--lse LSE.npy] [--check]\n"
    "                  [--block-table T.npy --seq-lens L.npy] [--kv-dtype q8_0|q4_0|fp8] [--q-dtype fp8|dtype]\n"
    "                  [--mask M.npy] [--window LEFT,RIGHT] [--causal-align top-left|bottom-right]\n"
    "                  [--alibi | --alibi-slopes S.npy] [--softcap C] [--sinks S.npy]\n"
    "                  [--block-layout L.npy --block-size BQxBK] [--dilated S0,S1,..:R0,R1,..]\n"
    "                  [--grad-out dO.npy [--out-dq DQ.npy] [--out-dk DK.npy] [--out-dv DV.npy]\n"
    "                   [--out-dsinks DS.npy] [--deterministic]]\n"
    "Shapes: bhsd Q [B,H,Nq,D], K/V [B,Hkv,Nk,D]; bshd Q [B,Nq,H,D], K/V [B,Nk,Hkv,D]. V's last\n"
    "dimension gives Dv (V and O): D itself, or Dk/Dv 192/128 and 576/512 (contiguous K/V).\n"
    "Paged: K/V are pages [num_pages,page_size,Hkv,D], the block table int32 [B,max_pages] names each\n"
    "sequence's pages in order, seq_lens int32 [B] its key count (Nk = the longest).\n"
    "--kv-dtype stores K/V quantized (encoded here from the f32/f16 values given). --q-dtype fp8 (with\n"
    "--kv-dtype fp8 and --dtype f16 or bf16, O's dtype) is the FP8 forward: Q in e4m3 too, a scale per query\n"
    "head from its largest magnitude (O in f16 unless --dtype bf16); --dtype fp8 is --dtype f16 --q-dtype fp8\n"
    "--kv-dtype fp8.\n"
    "Scores: s = scale*q.k, softcap*tanh(s/softcap), + slope[h]*(j-i'), + mask; key j is visible in the\n"
    "window i'-LEFT .. i'+RIGHT (-1: unbounded) and, causal, up to i' (i' = i + Nk - Nq bottom-right,\n"
    "or i top-left); sinks [H] join each row's softmax. The mask is f32 or f16, [Nq,Nk] or [1|B,1|H,Nq,Nk].\n"
    "Block-sparse: L (uint8 or int8, [ceil(Nq/BQ),ceil(Nk/BK)] or [1|B,1|H,ceil(Nq/BQ),ceil(Nk/BK)]) lets\n"
    "query i see key j only where L[b,h,i/BQ,j/BK] != 0, on top of the other rules. Dilated (LongNet, Nq = Nk):\n"
    "the heads form G equal groups, group g with segment Sg and rate Rg; position p is active iff\n"
    "(p mod Sg) mod Rg = g mod Rg, and an active query sees the active keys of its own segment.\n"
    "O is written as float32 with Q's shape (last dimension Dv). --check compares with the float64 CPU reference\n"
    "(on the cache and fp8 queries as the kernel reads them: gathered and decoded; fp8 queries' tolerance 5e-2).\n"
    "Backward pass (contiguous K/V): --grad-out is dO, O's shape; after the forward, dQ, dK and dV are written\n"
    "as float32 in Q's, K's and V's shapes (d(sinks) [H]); --check compares them with the float64 reference\n"
    "(rel-L2 f32 1e-4, f16/bf16 1e-2). --deterministic asks for bit-identical runs (no float atomics).";

int run_parse_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; ++i) {
        const char *val = NULL;
        int m;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts(run_usage);
            return -1;
        }
        if (strcmp(argv[i], "--causal") == 0) { a->causal = 1; continue; }
        if (strcmp(argv[i], "--check") == 0) { a->check = 1; continue; }
        if (strcmp(argv[i], "--alibi") == 0) { a->alibi = 1; continue; }
        if (strcmp(argv[i], "--deterministic") == 0) { a->deterministic = 1; continue; }
        static const char *const names[] = {"--api", "--device", "--q", "--k", "--v", "--out", "--lse",
                                            "--impl", "--variant", "--scale", "--dtype", "--layout", "--tile",
                                            "--split-kv", "--block-table", "--seq-lens", "--kv-dtype",
                                            "--mask", "--sinks", "--alibi-slopes", "--window", "--causal-align",
                                            "--softcap", "--grad-out", "--out-dq", "--out-dk", "--out-dv",
                                            "--out-dsinks", "--block-layout", "--block-size", "--dilated",
                                            "--q-dtype"};
        int which = -1;
        for (int n = 0; n < (int)(sizeof names / sizeof *names) && which < 0; ++n) {
            m = cli_option(argc, argv, &i, names[n], &val);
            if (m < 0) return cli_error(EXIT_USAGE, "run: %s needs a value", names[n]);
            if (m > 0) which = n;
        }
        if (which < 0) return cli_error(EXIT_USAGE, "run: unknown option '%s' (see attnvk run --help)", argv[i]);
        const char **slots[] = {&a->api, &a->device, &a->q, &a->k, &a->v, &a->out, &a->lse, &a->impl, &a->variant};
        if (which < 9) {
            if (!*val) return cli_error(EXIT_USAGE, "run: %s wants a value, got ''", names[which]);
            *slots[which] = val;
            continue;
        }
        if (which == 9 && !cli_parse_double(val, 1e-30, 1e30, &a->scale))
            return cli_error(EXIT_USAGE, "run: --scale must be a positive number, got '%s'", val);
        if (which == 10) { /* fp8: resolved after the loop (bench_resolve_fp8) */
            a->dtype_given = 1;
            a->dtype_fp8 = strcmp(val, "fp8") == 0;
            if (!a->dtype_fp8 && !attnvk_dtype_from_name(val, &a->dtype))
                return cli_error(EXIT_USAGE, "run: unsupported dtype '%s' (f32, f16, bf16, fp8)", val);
        }
        if (which == 11) {
            if (strcmp(val, "bhsd") == 0) a->layout = ATTNVK_LAYOUT_BHSD;
            else if (strcmp(val, "bshd") == 0) a->layout = ATTNVK_LAYOUT_BSHD;
            else return cli_error(EXIT_USAGE, "run: unknown layout '%s' (bhsd, bshd)", val);
        }
        if (which == 12 && !cli_parse_tile(val, &a->tile_br, &a->tile_bc))
            return cli_error(EXIT_USAGE, "run: --tile wants BRxBC, e.g. 64x64, got '%s'", val);
        if (which == 14 || which == 15) {
            if (!*val) return cli_error(EXIT_USAGE, "run: %s wants a value, got ''", names[which]);
            *(which == 14 ? &a->block_table : &a->seq_lens) = val;
        }
        if (which == 16 && (!attnvk_kv_format_from_name(val, &a->kv_format)))
            return cli_error(EXIT_USAGE, "run: unknown kv dtype '%s' (q8_0, q4_0, fp8)", val);
        a->kv_format_given |= which == 16;
        if (which == 31) {
            if (strcmp(val, "fp8") == 0) a->q_format = ATTNVK_KV_FP8;
            else if (strcmp(val, "dtype") == 0) a->q_format = ATTNVK_KV_DTYPE;
            else return cli_error(EXIT_USAGE, "run: --q-dtype wants fp8 or dtype, got '%s'", val);
            a->q_format_given = 1;
            continue;
        }
        if (which >= 17 && which <= 19) {
            if (!*val) return cli_error(EXIT_USAGE, "run: %s wants a file, got ''", names[which]);
            *(which == 17 ? &a->mask : which == 18 ? &a->sinks : &a->alibi_slopes) = val;
        }
        if (which == 20) {
            if (!cli_parse_window(val, &a->window_left, &a->window_right))
                return cli_error(EXIT_USAGE, "run: --window wants LEFT,RIGHT (integers >= -1; -1 unbounded), got '%s'",
                                 val);
            a->window = 1;
        }
        if (which == 21) {
            if (strcmp(val, "top-left") == 0) a->align = ATTNVK_ALIGN_TOP_LEFT;
            else if (strcmp(val, "bottom-right") == 0) a->align = ATTNVK_ALIGN_BOTTOM_RIGHT;
            else return cli_error(EXIT_USAGE, "run: --causal-align wants top-left or bottom-right, got '%s'", val);
        }
        if (which == 22 && !cli_parse_double(val, 1e-30, 1e30, &a->softcap))
            return cli_error(EXIT_USAGE, "run: --softcap must be a positive number, got '%s'", val);
        if (which == 28) {
            if (!*val) return cli_error(EXIT_USAGE, "run: --block-layout wants a file, got ''");
            a->block_layout = val;
            continue;
        }
        if (which == 29) {
            if (!cli_parse_tile(val, &a->block_q, &a->block_k))
                return cli_error(EXIT_USAGE, "run: --block-size wants BQxBK (each 1..4096), e.g. 64x64, got '%s'", val);
            continue;
        }
        if (which == 30) {
            if (!sparse_parse_dilated(val, &a->dilated))
                return cli_error(EXIT_USAGE, "run: --dilated wants S0,S1,..:R0,R1,.. (segments:rates, equal counts, "
                                             "at most %d), e.g. 2048,4096:1,2, got '%s'", ATTNVK_MAX_DILATED_GROUPS, val);
            continue;
        }
        if (which >= 23) {
            const char **grad_slots[] = {&a->grad_out, &a->out_dq, &a->out_dk, &a->out_dv, &a->out_dsinks};
            if (!*val) return cli_error(EXIT_USAGE, "run: %s wants a file, got ''", names[which]);
            *grad_slots[which - 23] = val;
        }
        long sk;
        if (which == 13) {
            if (!cli_parse_int(val, 1, 4096, &sk))
                return cli_error(EXIT_USAGE, "run: --split-kv wants 1..4096, got '%s'", val);
            a->split_kv = (int)sk;
        }
    }
    int fp8 = bench_resolve_fp8("run", a->dtype_fp8, a->dtype_given, &a->dtype, a->q_format_given, &a->q_format,
                                a->kv_format_given, &a->kv_format);
    if (fp8) return fp8;
    attnvk_api api;
    if (!a->api) return cli_error(EXIT_USAGE, "run: --api is required");
    if (!attnvk_api_from_name(a->api, &api))
        return cli_error(EXIT_USAGE, "run: unknown API '%s' (cpu, vulkan, opencl, cuda, hip)", a->api);
    if (a->impl) {
        if (strchr(a->impl, ',')) return cli_error(EXIT_USAGE, "run: --impl names one implementation, got '%s'", a->impl);
        int rc = cli_check_impls("run", a->impl);
        if (rc) return rc;
    }
    if (a->variant && (!a->impl || strcmp(a->impl, "attnvk") == 0)) {
        int rc = cli_check_variant("run", a->variant, 1u << api);
        if (rc) return rc;
    }
    if (!a->q || !a->k || !a->v) return cli_error(EXIT_USAGE, "run: --q, --k and --v are required");
    if (!a->out) return cli_error(EXIT_USAGE, "run: --out is required");
    if (a->alibi && a->alibi_slopes)
        return cli_error(EXIT_USAGE, "run: --alibi makes ggml's slopes; --alibi-slopes reads them: give one");
    if (run_uses_cache(a) && (a->mask || a->sinks || a->alibi || a->alibi_slopes))
        return cli_error(EXIT_USAGE, "run: --mask, --sinks and ALiBi take a contiguous f32/f16 K/V here "
                                     "(not yet with --block-table or --kv-dtype)");
    if (!a->block_layout != !a->block_q)
        return cli_error(EXIT_USAGE, "run: %s", a->block_layout ? "--block-layout needs --block-size BQxBK"
                                                                : "--block-size sizes the blocks of --block-layout: give it too");
    if (run_uses_cache(a) && (a->block_layout || a->dilated.dilated_groups))
        return cli_error(EXIT_USAGE, "run: --block-layout and --dilated take a contiguous f32/f16 K/V here "
                                     "(not --block-table or --kv-dtype)");
    if (!a->block_table != !a->seq_lens)
        return cli_error(EXIT_USAGE, "run: %s needs %s too (a paged cache takes both)",
                         a->block_table ? "--block-table" : "--seq-lens", a->block_table ? "--seq-lens" : "--block-table");
    const char *grad_flag = a->out_dq ? "--out-dq" : a->out_dk ? "--out-dk" : a->out_dv ? "--out-dv"
                          : a->out_dsinks ? "--out-dsinks" : a->deterministic ? "--deterministic" : NULL;
    if (grad_flag && !a->grad_out)
        return cli_error(EXIT_USAGE, "run: %s belongs to the backward pass: give --grad-out dO.npy too", grad_flag);
    if (a->grad_out && !a->out_dq && !a->out_dk && !a->out_dv && !a->out_dsinks)
        return cli_error(EXIT_USAGE, "run: --grad-out needs an output: --out-dq, --out-dk, --out-dv or --out-dsinks");
    if (a->grad_out && run_uses_cache(a))
        return cli_error(EXIT_USAGE, "run: the backward pass (--grad-out) takes a contiguous K/V "
                                     "(not --block-table or --kv-dtype)");
    if (a->out_dsinks && !a->sinks) return cli_error(EXIT_USAGE, "run: --out-dsinks needs --sinks");
    /* before the inputs are read and the kernel runs, not after */
    if (avk_check_writable(a->out) != ATTNVK_OK) return cli_error(EXIT_USAGE, "run: --out %s", attnvk_last_error());
    if (a->lse && avk_check_writable(a->lse) != ATTNVK_OK)
        return cli_error(EXIT_USAGE, "run: --lse %s", attnvk_last_error());
    const char *grad_outputs[] = {a->out_dq, a->out_dk, a->out_dv, a->out_dsinks};
    static const char *const grad_names[] = {"--out-dq", "--out-dk", "--out-dv", "--out-dsinks"};
    for (int g = 0; g < 4; ++g)
        if (grad_outputs[g] && avk_check_writable(grad_outputs[g]) != ATTNVK_OK)
            return cli_error(EXIT_USAGE, "run: %s %s", grad_names[g], attnvk_last_error());
    return 0;
}

/* Reads the three tensors and derives the problem from their shapes. */
int run_problem_from_options(const run_args *a, attnvk_problem *p)
{
    p->causal = a->causal;
    p->scale = (float)a->scale;
    p->dtype = a->dtype;
    p->layout = a->layout;
    p->kv_format = a->kv_format;
    p->q_format = a->q_format;
    p->softcap = (float)a->softcap;
    p->window = a->window;
    p->window_left = a->window_left;
    p->window_right = a->window_right;
    p->align = a->align;
    p->alibi = a->alibi || a->alibi_slopes;
    p->sinks = a->sinks != NULL;
    p->dilated_groups = a->dilated.dilated_groups;
    for (int g = 0; g < p->dilated_groups; ++g)
        p->dilated_segment[g] = a->dilated.dilated_segment[g], p->dilated_rate[g] = a->dilated.dilated_rate[g];
    if (p->heads % p->kv_heads)
        return cli_error(EXIT_USAGE, "shape mismatch: Q heads (%d) is not a multiple of K/V heads (%d)", p->heads,
                         p->kv_heads);
    return 0;
}

static int load_problem(const run_args *a, avk_npy t[3], attnvk_problem *p)
{
    const char *paths[3] = {a->q, a->k, a->v};
    for (int i = 0; i < 3; ++i)
        if (avk_npy_read(paths[i], &t[i]) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    for (int i = 0; i < 3; ++i)
        if (t[i].ndim != 4)
            return cli_error(EXIT_USAGE, "%s: expected 4 dimensions (%s), got %d", paths[i],
                             a->layout == ATTNVK_LAYOUT_BHSD ? "B,H,S,D" : "B,S,H,D", t[i].ndim);
    for (int d = 0; d < 3; ++d) /* the last one is Dv, V's head dim */
        if (t[1].shape[d] != t[2].shape[d]) return cli_error(EXIT_USAGE, "shape mismatch: K and V differ in dimension %d", d);
    int s_axis = a->layout == ATTNVK_LAYOUT_BHSD ? 2 : 1, h_axis = a->layout == ATTNVK_LAYOUT_BHSD ? 1 : 2;
    for (int i = 0; i < 3; ++i)
        for (int d = 0; d < 4; ++d)
            if (t[i].shape[d] < 1 || t[i].shape[d] > (1ll << 30))
                return cli_error(EXIT_USAGE, "%s: dimension %d is %lld (must be 1..2^30)", paths[i], d,
                                 (long long)t[i].shape[d]);
    if (t[0].shape[0] != t[1].shape[0])
        return cli_error(EXIT_USAGE, "shape mismatch: batch %lld in Q, %lld in K/V", (long long)t[0].shape[0],
                         (long long)t[1].shape[0]);
    if (t[0].shape[3] != t[1].shape[3])
        return cli_error(EXIT_USAGE, "shape mismatch: head dim %lld in Q, %lld in K", (long long)t[0].shape[3],
                         (long long)t[1].shape[3]);
    memset(p, 0, sizeof *p);
    p->batch = (int)t[0].shape[0];
    p->heads = (int)t[0].shape[h_axis];
    p->seq_q = (int)t[0].shape[s_axis];
    p->kv_heads = (int)t[1].shape[h_axis];
    p->seq_kv = (int)t[1].shape[s_axis];
    p->head_dim = (int)t[0].shape[3];
    p->head_dim_v = t[2].shape[3] != t[0].shape[3] ? (int)t[2].shape[3] : 0; /* validation checks the pair */
    int rc = run_problem_from_options(a, p);
    if (rc) return rc;
    if (attnvk_problem_validate(p) != ATTNVK_OK) return cli_error(EXIT_USAGE, "%s", attnvk_last_error());
    return 0;
}

static void count_nonfinite(const float *x, size_t n, size_t *nan, size_t *inf)
{
    *nan = *inf = 0;
    for (size_t i = 0; i < n; ++i) {
        if (isnan(x[i])) ++*nan;
        else if (isinf(x[i])) ++*inf;
    }
}

/* Attention of NaN/Inf inputs is undefined: the output (and any --check) would
 * say nothing useful, so the input is refused, naming the tensor. Rounds the
 * inputs to the compute dtype, where a large finite value can become Inf. */
static int prepare_inputs(const run_args *a, const attnvk_problem *p, avk_npy t[3])
{
    static const char *const tensor[3] = {"Q", "K", "V"};
    const char *paths[3] = {a->q, a->k, a->v};
    size_t nan, inf;
    for (int i = 0; i < 3; ++i) {
        count_nonfinite(t[i].data, t[i].count, &nan, &inf);
        if (nan || inf)
            return cli_error(EXIT_USAGE, "run: %s (%s) holds %zu NaN and %zu Inf of %zu values; inputs must be finite",
                             tensor[i], paths[i], nan, inf, t[i].count);
    }
    /* the reference and the device see the same (rounded) inputs */
    for (int i = 0; i < 3; ++i) {
        attnvk_round_to_dtype(p->dtype, t[i].data, t[i].count);
        count_nonfinite(t[i].data, t[i].count, &nan, &inf);
        if (inf)
            return cli_error(EXIT_USAGE, "run: %s (%s) has %zu values beyond the range of %s (they round to Inf); "
                             "use --dtype f32", tensor[i], paths[i], inf, attnvk_dtype_name(p->dtype));
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = run_parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    avk_npy t[3] = {{0}}, tables[2] = {{0}};
    run_scores scores = {.made_slopes = NULL};
    run_grads grads;
    memset(&grads, 0, sizeof grads);
    attnvk_problem p;
    attnvk_context *ctx = NULL;
    attnvk_device *dev = NULL;
    float *o = NULL, *lse = NULL;
    rc = a.block_table ? run_load_paged(&a, t, tables, &p) : load_problem(&a, t, &p);
    if (rc == 0) rc = run_load_scores(&a, &p, &scores);
    if (rc == 0) rc = prepare_inputs(&a, &p, t);
    if (rc == 0 && a.grad_out) rc = run_grads_load(&a, &p, t, &grads);
    if (rc == 0) rc = cli_context_create(&ctx);
    if (rc) goto done;
    rc = cli_open_device(ctx, a.api, a.device, &dev);
    if (rc) goto done;
    size_t nrows = (size_t)p.batch * p.heads * p.seq_q;
    o = malloc(attnvk_o_elements(&p) * sizeof(float));
    lse = a.lse ? malloc(nrows * sizeof(float)) : NULL;
    if (!o || (a.lse && !lse)) {
        rc = cli_error(EXIT_FAILED, "out of host memory");
        goto done;
    }
    attnvk_kernel_options opts = {.implementation = a.impl, .variant = a.variant, .tile_br = a.tile_br,
                                  .tile_bc = a.tile_bc, .split_kv = a.split_kv};
    attnvk_kernel_info info;
    double ms = 0;
    attnvk_check c = {0};
    attnvk_host_inputs in = {.q = t[0].data, .k = t[1].data, .v = t[2].data};
    run_scores_inputs(&scores, &in);
    attnvk_status s = a.grad_out
        ? run_grads_compute(dev, &p, &opts, a.deterministic, &in, &grads, o, lse, &info, &ms)
        : run_uses_cache(&a)
        ? run_cache_attention(dev, &p, &opts, t, tables, o, lse, &info, &ms, a.check ? &c : NULL)
        : attnvk_attention_host_inputs(dev, &p, &opts, &in, o, lse, &info, &ms);
    if (s != ATTNVK_OK) {
        rc = cli_error(cli_exit_for(s), "%s: %s", attnvk_status_name(s), attnvk_last_error());
        goto done;
    }
    int64_t o_shape[4] = {t[0].shape[0], t[0].shape[1], t[0].shape[2], attnvk_problem_head_dim_v(&p)};
    if (avk_npy_write(a.out, o, 4, o_shape) != ATTNVK_OK) {
        rc = cli_error(EXIT_FAILED, "%s", attnvk_last_error());
        goto done;
    }
    if (a.lse) {
        int64_t lse_shape[3] = {p.batch, p.heads, p.seq_q};
        if (avk_npy_write(a.lse, lse, 3, lse_shape) != ATTNVK_OK) {
            rc = cli_error(EXIT_FAILED, "%s", attnvk_last_error());
            goto done;
        }
    }
    const attnvk_device_info *d = attnvk_device_info_of(dev);
    printf("%s %s on %s: variant %s tile %dx%d, %.3f ms", info.implementation, attnvk_api_name(d->api), d->name,
           info.variant, info.tile_br, info.tile_bc, ms);
    if (a.check) {
        if (!run_uses_cache(&a)) c = attnvk_check_output_inputs(&p, &in, o, NULL, 0);
        printf(", rel_l2 %.3e max_abs %.3e (tolerance %.0e): %s", c.rel_l2, c.max_abs, c.tolerance,
               c.passed ? "pass" : "FAIL");
        if (!c.passed) rc = EXIT_FAILED;
    }
    if (a.grad_out) {
        const int grc = run_grads_finish(&a, &p, t, &in, &grads);
        if (grc) rc = grc;
    }
    printf("\n");
done:
    for (int i = 0; i < 3; ++i) avk_npy_free(&t[i]);
    for (int i = 0; i < 2; ++i) avk_npy_free(&tables[i]);
    run_scores_free(&scores);
    run_grads_free(&grads);
    free(o);
    free(lse);
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return rc;
}
