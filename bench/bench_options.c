#include "bench_options.h"
#include "core/test_hooks.h"

#include "bench_suites.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char bench_usage[] =
    "usage: attnvk bench [--api vulkan|opencl|cuda|hip|cpu|all] [--device SPEC] [--impl LIST]\n"
    "                    [--suite NAME | --batch B --heads H --kv-heads HKV --seq LIST --seq-kv N --head-dim LIST]\n"
    "                    [--head-dim-v N]\n"
    "                    [--dtype f32|f16|bf16|fp8] [--q-dtype fp8|dtype] [--causal] [--layout bhsd|bshd]\n"
    "                    [-r N | --min-time S] [--warmup N] [--warmup-time S] [--launches N|auto]\n"
    "                    [--cooldown S] [--max-memory BYTES] [--max-time S]\n"
    "                    [-o table|md|csv|jsonl|json] [--out FILE] [--compact] [--save [--db PATH]] [--seed N]\n"
    "                    [--variant V] [--tile BRxBC] [--split-kv N] [--kv-dtype q8_0|q4_0|fp8] [--page-size N]\n"
    "                    [--pass fwd|bwd|fwd+bwd] [--cold [--cold-runs N]] [--ring G]\n"
    "                    [--block-layout PATTERN [--block-size BQxBK]] [--dilated S0,S1,..:R0,R1,..]\n"
    "Runs identical, seeded inputs through every implementation of every selected device, checks each\n"
    "output against the float64 CPU reference and times it with device timestamps.\n"
    "  --api LIST     APIs to run (comma list or 'all', the default). Under 'all' the cpu API (the reference\n"
    "                 itself, slow) runs only tiny cases (<= 0.27 GFLOP) when another device exists, and cases\n"
    "                 up to 69 GFLOP when it is the only one; name it (--api cpu) to run it on anything.\n"
    "  --device SPEC  'api', 'api:N', global index or name substring (comma list)\n"
    "  --impl LIST    implementations, e.g. attnvk,cudnn (default: every one the device lists)\n"
    "  --seq LIST     query (and key) lengths, e.g. 512,1k,4k; --seq-kv sets a different key length\n"
    "  --causal       causal masking (with --suite: only the suite's causal cases)\n"
    "  --max-seq N    with --suite: only the suite's cases whose Nq and Nk are at most N (e.g. 2k)\n"
    "  --case TEXT    with --suite: only the suite's cases whose name contains TEXT (e.g. decode)\n"
    "  -r N, --iters N  exactly N timed repetitions per implementation and case (else calibrated)\n"
    "  --min-time S   timing budget per implementation and case (suite default, 0.5 s; quick 0.05 s)\n"
    "  --warmup N     warm-up runs before timing (suite default; 3); 0 turns the warm-up off\n"
    "  --warmup-time S  on GPUs the warm-up also lasts at least S seconds of wall time (default 1): an idle\n"
    "                 GPU's clocks need busy time to come up (0 turns this off)\n"
    "  --launches N   back-to-back launches per timed sample, one wait (1..1000); 'auto' (the default) launches\n"
    "                 short kernels over one input set until a sample lasts about 2 ms, so the time is the\n"
    "                 kernel's, not the host's round trip or the driver's idle clocks; the record says how many\n"
    "  --max-memory B device memory a case may use (e.g. 8G); larger cases are skipped\n"
    "  -o FORMAT      the format of stdout and of --out alike: table (default), md, csv or jsonl print each\n"
    "                 row as its record finishes; json is one document, printed at the end\n"
    "  --out FILE     also write the results to FILE (rewritten whole after every record)\n"
    "  --compact      the table in 80 columns (also when COLUMNS or the terminal is narrower than 120)\n"
    "  --save         store the run in the results history (SQLite; $XDG_DATA_HOME/attnvk/history.db,\n"
    "                 or --db PATH); see attnvk history and attnvk compare --db\n"
    "  --variant, --tile, --split-kv apply to the attnvk kernel only.\n"
    "  --kv-dtype F   store K and V as q8_0, q4_0 (ggml blocks) or fp8 (e4m3, a scale per kv head), quantized on\n"
    "                 the host; checked against the reference on the dequantized K/V (quant_error: vs the inputs)\n"
    "  --q-dtype fp8  the FP8 forward: Q in e4m3 too (a scale per query head), with --kv-dtype fp8 and O in --dtype\n"
    "                 f16 or bf16; --dtype fp8 is --dtype f16 --q-dtype fp8 --kv-dtype fp8. Records say dtype fp8\n"
    "                 (o_dtype: O's); check.rel_l2 is against the unquantized inputs, rel_l2_dequantized against\n"
    "                 what the kernel read, which the 5e-2 tolerance judges (e4m3 rounding alone is ~5%)\n"
    "  --page-size N  also run every case through a paged KV cache of N-token pages in shuffled order\n"
    "  --softcap C, --window LEFT,RIGHT, --causal-align top-left|bottom-right, --alibi, --sinks random,\n"
    "  --mask random  score modifications on every case (as in attnvk run; the mask is [Nq,Nk] with 10% -inf,\n"
    "                 f16 for f16/bf16 cases); TFLOP/s count a window's visible pairs\n"
    "  --block-layout PATTERN  block-sparse attention on every case with a layout generated from the case's\n"
    "                 seed, [1,1,ceil(Nq/BQ),ceil(Nk/BK)] blocks (0 = skip): random:DENSITY each block live with\n"
    "                 probability DENSITY (0..1]; local:W the key blocks within W blocks of the diagonal (bottom-\n"
    "                 right aligned, as causal); bigbird:W,G,R local W, plus the first G row blocks and the\n"
    "                 first G key blocks whole (global), plus R seeded random key blocks per row. Other rules\n"
    "                 (causal, window) still apply; TFLOP/s count the visible pairs. The name says it\n"
    "                 (-bs64x64r0.1, -bs64x64l2, -bs64x64bb2_1_2)\n"
    "  --block-size BQxBK  the layout's block size (default 64x64)\n"
    "  --dilated S..:R..  LongNet dilated attention on every case (Nq = Nk): the heads in G equal groups, group\n"
    "                 g with segment length Sg and rate Rg (e.g. 2048,4096,8192:1,2,4); the name says it\n"
    "                 (-dil2048_4096_8192r1_2_4); TFLOP/s count the visible pairs\n"
    "  --head-dim-v N V and O's head dim on every case (Q and K keep --head-dim): N = D, or Dk/Dv 192/128 or\n"
    "                 576/512 (DeepSeek MLA); the name says it (-dv128); FLOPs count 2*(Dk+Dv) per pair\n"
    "  --pass P       fwd (the default), bwd (the backward pass: dQ, dK, dV checked against the float64\n"
    "                 reference, FLOPs 2.5x the forward's) or fwd+bwd (forward, backward and total latency);\n"
    "                 an implementation without a backward, decode shapes and paged/quantized caches are skipped\n"
    "  --cold         also the time to the first correct result on an empty kernel cache and on a warm one:\n"
    "                 per record, a fresh process on empty temporary caches (attnvk's and the drivers': Mesa,\n"
    "                 PoCL, CUDA, NVIDIA) times device open, prepare (compile, pipeline creation), the first\n"
    "                 dispatch and the checked result; a second one on the caches the first left; a cold-start\n"
    "                 table follows the results and each JSON record gets cold_start (not in csv)\n"
    "  --cold-runs N  with --cold: N pairs of starts per record (1..20, default 1), medians reported\n"
    "  --ring G       ring attention (context parallelism) over G ranks, --gpus G alike: the selected devices\n"
    "                 in order, repeated as virtual ranks when fewer than G; each case's sequence is split over\n"
    "                 them (zigzag when causal), K/V travel by NCCL between CUDA devices, else through host\n"
    "                 memory. Records: time, TFLOP/s in all and per rank, transfer time and the share the\n"
    "                 computation hid, strong and weak scaling against one device running the whole case and\n"
    "                 its N/G share, and O checked on sampled rows\n"
    "Ctrl-C (SIGINT) or SIGTERM stops after the current dispatch: the finished records are printed and\n"
    "in --out, exit status 130 (143 for SIGTERM).\n"
    "Exit status: 0 every case ran and passed (skipped/unavailable allowed), 1 a correctness or run failure,\n"
    "2 a usage error. Suites:\n";

int bench_parse_api_list(const char *s, unsigned *mask, int *all)
{
    char buf[128];
    if (!cli_list_well_formed(s) || strlen(s) >= sizeof buf) return 0;
    *mask = 0;
    *all = 0;
    if (strcmp(s, "all") == 0) {
        *mask = (1u << ATTNVK_API_COUNT) - 1;
        *all = 1;
        return 1;
    }
    strcpy(buf, s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        attnvk_api api;
        if (!attnvk_api_from_name(tok, &api)) return 0;
        *mask |= 1u << api;
    }
    return *mask != 0;
}

int bench_resolve_fp8(const char *who, int dtype_fp8, int dtype_given, attnvk_dtype *dtype, int q_format_given,
                      attnvk_kv_format *q_format, int kv_format_given, attnvk_kv_format *kv_format)
{
    if (dtype_fp8) { /* the shorthand: f16 O, fp8 Q, K and V */
        if (q_format_given && *q_format != ATTNVK_KV_FP8)
            return cli_error(EXIT_USAGE, "%s: --dtype fp8 stores Q in fp8: drop --q-dtype dtype", who);
        if (kv_format_given && *kv_format != ATTNVK_KV_FP8)
            return cli_error(EXIT_USAGE, "%s: --dtype fp8 stores K and V in fp8: drop --kv-dtype %s", who,
                             attnvk_kv_format_name(*kv_format));
        *dtype = ATTNVK_F16, *q_format = *kv_format = ATTNVK_KV_FP8;
        return 0;
    }
    if (*q_format != ATTNVK_KV_FP8) return 0;
    if (*kv_format != ATTNVK_KV_FP8)
        return cli_error(EXIT_USAGE, "%s: --q-dtype fp8 (the FP8 forward) needs an fp8 K/V cache: add --kv-dtype fp8", who);
    if (dtype_given && *dtype == ATTNVK_F32)
        return cli_error(EXIT_USAGE, "%s: --q-dtype fp8 (the FP8 forward) writes O in f16 or bf16, not f32", who);
    if (!dtype_given) *dtype = ATTNVK_F16; /* run's default is f32, which the FP8 forward cannot write */
    return 0;
}

const char *bench_options_dtype_label(const bench_options *o, attnvk_dtype dtype)
{
    return o->q_format == ATTNVK_KV_FP8 ? "fp8" : attnvk_dtype_name(dtype);
}

void bench_command_line(const char *prefix, int argc, char **argv, char *out, size_t n)
{
    size_t len = (size_t)snprintf(out, n, "%s", prefix);
    for (int i = 1; i < argc && len < n; ++i) len += (size_t)snprintf(out + len, n - len, " %s", argv[i]);
}

/* 123, 64K, 8M, 16G (binary units). */
static int parse_bytes(const char *s, uint64_t *out)
{
    if (!s || !*s) return 0;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    double unit = 1;
    if (*end == 'k' || *end == 'K') unit = 1024.0, ++end;
    else if (*end == 'm' || *end == 'M') unit = 1048576.0, ++end;
    else if (*end == 'g' || *end == 'G') unit = 1073741824.0, ++end;
    else if (*end == 't' || *end == 'T') unit = 1099511627776.0, ++end;
    if (*end == 'B' || *end == 'b') ++end;
    if (errno || *end || !(v > 0) || v * unit > 1.8e19) return 0;
    *out = (uint64_t)(v * unit);
    return *out > 0;
}

static int parse_seed(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-') return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return 0;
    *out = v;
    return 1;
}

typedef enum opt_id {
    OPT_API, OPT_DEVICE, OPT_IMPL, OPT_SUITE, OPT_BATCH, OPT_HEADS, OPT_KV_HEADS, OPT_SEQ, OPT_SEQ_KV,
    OPT_HEAD_DIM, OPT_DTYPE, OPT_LAYOUT, OPT_ITERS, OPT_REPETITIONS, OPT_MIN_TIME, OPT_WARMUP, OPT_WARMUP_TIME, OPT_LAUNCHES, OPT_COOLDOWN, OPT_MAX_TIME, OPT_FORMAT,
    OPT_FORMAT_LONG, OPT_OUT, OPT_SEED, OPT_VARIANT, OPT_TILE, OPT_SPLIT_KV, OPT_MAX_MEMORY, OPT_DB, OPT_KV_DTYPE,
    OPT_PAGE_SIZE, OPT_SOFTCAP, OPT_WINDOW, OPT_CAUSAL_ALIGN, OPT_MASK, OPT_SINKS, OPT_HEAD_DIM_V, OPT_COLD_RUNS,
    OPT_COLD_CHILD, OPT_MAX_SEQ, OPT_CASE, OPT_PASS, OPT_RING, OPT_GPUS, OPT_BLOCK_LAYOUT, OPT_BLOCK_SIZE, OPT_DILATED,
    OPT_Q_DTYPE, OPT_COUNT
} opt_id;

static const char *const option_names[OPT_COUNT] = {
    "--api", "--device", "--impl", "--suite", "--batch", "--heads", "--kv-heads", "--seq", "--seq-kv",
    "--head-dim", "--dtype", "--layout", "--iters", "-r", "--min-time", "--warmup", "--warmup-time", "--launches", "--cooldown", "--max-time", "-o",
    "--format", "--out", "--seed", "--variant", "--tile", "--split-kv", "--max-memory", "--db", "--kv-dtype",
    "--page-size", "--softcap", "--window", "--causal-align", "--mask", "--sinks", "--head-dim-v", "--cold-runs",
    "--cold-child", "--max-seq", "--case", "--pass", "--ring", "--gpus", "--block-layout", "--block-size", "--dilated",
    "--q-dtype"};

static int bad(const char *opt, const char *want, const char *val)
{
    return cli_error(EXIT_USAGE, "bench: %s wants %s, got '%s'", opt, want, val);
}

/* One valued option; returns 0 or an exit code. */
static int apply_option(bench_options *o, opt_id id, const char *val)
{
    const char *name = option_names[id];
    long n;
    switch (id) {
    case OPT_API:
        if (!bench_parse_api_list(val, &o->api_mask, &o->api_all))
            return bad(name, "'all' or a comma list of cpu, vulkan, opencl, cuda, hip", val);
        o->api_text = val;
        return 0;
    case OPT_DEVICE:
        if (!cli_list_well_formed(val)) return bad(name, "a comma list of api, api:N, N or name substrings", val);
        o->device = val;
        return 0;
    case OPT_IMPL: {
        int rc = cli_check_impls("bench", val);
        if (rc) return rc;
        o->impls = val;
        return 0;
    }
    case OPT_SUITE:
        if (!bench_suite_find(val))
            return cli_error(EXIT_USAGE, "bench: unknown suite '%s' (quick, production, long, decode, models, fa-grid)",
                             val);
        o->suite = val;
        return 0;
    case OPT_BATCH:
    case OPT_HEADS:
    case OPT_KV_HEADS:
    case OPT_SEQ_KV:
        if (!cli_parse_int(val, 1, id == OPT_SEQ_KV ? (1l << 24) : (1l << 20), &n))
            return bad(name, "a positive integer", val);
        if (id == OPT_BATCH) o->batch = n;
        else if (id == OPT_HEADS) o->heads = n;
        else if (id == OPT_KV_HEADS) o->kv_heads = n;
        else o->seq_kv = n;
        o->shape_given = 1;
        return 0;
    case OPT_SEQ:
        if (!(o->nseq = cli_parse_int_list(val, 1, 1l << 24, o->seq, BENCH_MAX_LIST)))
            return bad(name, "a comma list of lengths in 1..16m like 512,1k,4k", val);
        o->shape_given = 1;
        return 0;
    case OPT_HEAD_DIM:
        if (!(o->nhead_dim = cli_parse_int_list(val, 1, 1024, o->head_dim, BENCH_MAX_LIST)))
            return bad(name, "a comma list of head dims in 1..1024", val);
        o->shape_given = 1;
        return 0;
    case OPT_DTYPE:
        o->dtype_fp8 = strcmp(val, "fp8") == 0; /* resolved after the loop (bench_resolve_fp8) */
        if (!o->dtype_fp8 && !attnvk_dtype_from_name(val, &o->dtype)) return bad(name, "f32, f16, bf16 or fp8", val);
        o->dtype_given = 1;
        return 0;
    case OPT_Q_DTYPE:
        if (strcmp(val, "fp8") == 0) o->q_format = ATTNVK_KV_FP8;
        else if (strcmp(val, "dtype") == 0) o->q_format = ATTNVK_KV_DTYPE;
        else return bad(name, "fp8 or dtype", val);
        o->q_format_given = 1;
        return 0;
    case OPT_LAYOUT:
        if (strcmp(val, "bhsd") == 0) o->layout = ATTNVK_LAYOUT_BHSD;
        else if (strcmp(val, "bshd") == 0) o->layout = ATTNVK_LAYOUT_BSHD;
        else return bad(name, "bhsd or bshd", val);
        return 0;
    case OPT_ITERS:
    case OPT_REPETITIONS:
        if (!cli_parse_int(val, 1, 1000000, &o->iters)) return bad(name, "an integer in 1..1000000", val);
        return 0;
    case OPT_MIN_TIME:
        if (!cli_parse_double(val, 1e-4, 3600, &o->min_time_s)) return bad(name, "seconds in 0.0001..3600", val);
        o->min_time_given = 1;
        return 0;
    case OPT_WARMUP:
        if (!cli_parse_int(val, 0, 10000, &o->warmup)) return bad(name, "an integer in 0..10000", val);
        o->warmup_given = 1;
        return 0;
    case OPT_WARMUP_TIME:
        if (!cli_parse_double(val, 0, 60, &o->warmup_s)) return bad(name, "seconds in 0..60", val);
        return 0;
    case OPT_LAUNCHES:
        if (strcmp(val, "auto") == 0) o->launches = 0;
        else if (!cli_parse_int(val, 1, ATTNVK_MAX_LAUNCHES, &o->launches))
            return bad(name, "'auto' or an integer in 1..1000", val);
        return 0;
    case OPT_COOLDOWN:
        if (!cli_parse_double(val, 0, 3600, &o->cooldown_s)) return bad(name, "seconds in 0..3600", val);
        return 0;
    case OPT_MAX_TIME:
        if (!cli_parse_double(val, 0.001, 1e6, &o->max_time_s) || !(o->max_time_s > 0))
            return bad(name, "seconds in 0.001..1000000", val);
        return 0;
    case OPT_FORMAT:
    case OPT_FORMAT_LONG: {
        static const char *const formats[] = {"table", "json", "csv", "md", "jsonl"};
        for (int f = 0; f < 5; ++f)
            if (strcmp(val, formats[f]) == 0) {
                o->format = (bench_format)f;
                return 0;
            }
        return bad(name, "table, md, csv, jsonl or json", val);
    }
    case OPT_OUT:
        if (!*val) return bad(name, "a file name", val);
        o->out = val;
        return 0;
    case OPT_SEED:
        if (!parse_seed(val, &o->seed)) return bad(name, "a non-negative integer", val);
        return 0;
    case OPT_VARIANT: o->variant = val; return 0;
    case OPT_TILE:
        if (!cli_parse_tile(val, &o->tile_br, &o->tile_bc)) return bad(name, "BRxBC, e.g. 64x64", val);
        return 0;
    case OPT_SPLIT_KV:
        if (!cli_parse_int(val, 1, 4096, &o->split_kv)) return bad(name, "an integer in 1..4096", val);
        return 0;
    case OPT_MAX_MEMORY:
        if (!parse_bytes(val, &o->max_memory)) return bad(name, "a size like 512M or 8G", val);
        return 0;
    case OPT_KV_DTYPE:
        if (!attnvk_kv_format_from_name(val, &o->kv_format))
            return cli_error(EXIT_USAGE, "bench: unknown kv dtype '%s' (dtype, q8_0, q4_0, fp8)", val);
        o->kv_format_given = 1;
        return 0;
    case OPT_PAGE_SIZE:
        if (!cli_parse_int(val, 1, 4096, &o->page_size)) return bad(name, "an integer in 1..4096", val);
        return 0;
    case OPT_HEAD_DIM_V:
        if (!cli_parse_int(val, 1, 1024, &o->head_dim_v)) return bad(name, "an integer in 1..1024", val);
        return 0;
    case OPT_SOFTCAP:
        if (!cli_parse_double(val, 1e-30, 1e30, &o->softcap)) return bad(name, "a positive number", val);
        return 0;
    case OPT_WINDOW:
        if (!cli_parse_window(val, &o->window_left, &o->window_right))
            return bad(name, "LEFT,RIGHT (integers >= -1; -1 unbounded)", val);
        o->window = 1;
        return 0;
    case OPT_CAUSAL_ALIGN:
        if (strcmp(val, "top-left") && strcmp(val, "bottom-right")) return bad(name, "top-left or bottom-right", val);
        o->align = val[0] == 't' ? ATTNVK_ALIGN_TOP_LEFT : ATTNVK_ALIGN_BOTTOM_RIGHT;
        return 0;
    case OPT_MASK:
    case OPT_SINKS:
        if (strcmp(val, "random")) return bad(name, "'random' (the bench generates its inputs)", val);
        *(id == OPT_MASK ? &o->mask : &o->sinks) = 1;
        return 0;
    case OPT_COLD_RUNS:
        if (!cli_parse_int(val, 1, 20, &o->cold_runs)) return bad(name, "an integer in 1..20", val);
        return 0;
    case OPT_COLD_CHILD: /* hidden: one start of `--cold` (bench_cold.c runs it) */
        if (!*val) return bad(name, "CASE:API:DEVICE:IMPL:NAME", val);
        o->cold_child = val;
        return 0;
    case OPT_DB:
        if (!*val) return bad(name, "a database file name", val);
        o->db = val;
        o->save = 1;
        return 0;
    case OPT_CASE:
        if (!*val) return bad(name, "part of a case name (e.g. decode)", val);
        o->case_filter = val;
        return 0;
    case OPT_MAX_SEQ:
        if (!cli_parse_int_list(val, 1, 1l << 24, &n, 1)) return bad(name, "a length in 1..16m like 2k", val);
        o->max_seq = n;
        return 0;
    case OPT_PASS:
        for (int p = BENCH_PASS_FWD; p <= BENCH_PASS_FWD_BWD; ++p)
            if (strcmp(val, bench_pass_name((bench_pass)p)) == 0) {
                o->pass = (bench_pass)p;
                return 0;
            }
        return bad(name, "fwd, bwd or fwd+bwd", val);
    case OPT_RING:
    case OPT_GPUS:
        if (!cli_parse_int(val, 1, 64, &o->ring)) return bad(name, "a rank count in 1..64", val);
        return 0;
    case OPT_BLOCK_LAYOUT:
        if (!sparse_parse_pattern(val, &o->block_pattern))
            return bad(name, "random:DENSITY (0..1], local:W or bigbird:W,G,R (block counts >= 0)", val);
        return 0;
    case OPT_BLOCK_SIZE:
        if (!cli_parse_tile(val, &o->block_q, &o->block_k)) return bad(name, "BQxBK, e.g. 64x64", val);
        return 0;
    case OPT_DILATED:
        if (!sparse_parse_dilated(val, &o->dilated))
            return bad(name, "segments:rates, two comma lists of equal length (at most 8), e.g. 2048,4096:1,2", val);
        return 0;
    case OPT_COUNT: break;
    }
    return cli_error(EXIT_USAGE, "bench: internal option error");
}

int bench_parse_options(int argc, char **argv, bench_options *o)
{
    memset(o, 0, sizeof *o);
    o->api_mask = (1u << ATTNVK_API_COUNT) - 1;
    o->api_all = 1;
    o->api_text = "all";
    o->dtype = ATTNVK_F16;
    o->seed = 1;
    o->warmup_s = 1.0;
    bench_command_line("attnvk bench", argc, argv, o->command, sizeof o->command);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(bench_usage, stdout);
            bench_suite_print_list(stdout);
            return -1;
        }
        if (strcmp(a, "--causal") == 0) { o->causal = 1; continue; }
        if (strcmp(a, "--save") == 0) { o->save = 1; continue; }
        if (strcmp(a, "--compact") == 0) { o->compact = 1; continue; }
        if (strcmp(a, "--alibi") == 0) { o->alibi = 1; continue; }
        if (strcmp(a, "--cold") == 0) { o->cold = 1; continue; }
        /* hidden: a deliberately wrong kernel, so tests can show the check catches it */
        if (strcmp(a, "--test-wrong-kernel") == 0) { o->test_flags |= ATTNVK_TEST_SKIP_LAST_KV_TILE; continue; }
        int matched = 0;
        for (int id = 0; id < OPT_COUNT && !matched; ++id) {
            const char *val = NULL;
            int m = cli_option(argc, argv, &i, option_names[id], &val);
            if (m < 0) return cli_error(EXIT_USAGE, "bench: %s needs a value", option_names[id]);
            if (m == 0) continue;
            matched = 1;
            int rc = apply_option(o, (opt_id)id, val);
            if (rc) return rc;
        }
        if (!matched) return cli_error(EXIT_USAGE, "bench: unknown option '%s' (see attnvk bench --help)", a);
    }
    int rc = bench_resolve_fp8("bench", o->dtype_fp8, o->dtype_given, &o->dtype, o->q_format_given, &o->q_format,
                               o->kv_format_given, &o->kv_format);
    if (rc) return rc;
    if (o->suite && o->shape_given)
        return cli_error(EXIT_USAGE, "bench: --suite and shape options (--seq, --heads, ...) are exclusive");
    if (o->max_seq && !o->suite) return cli_error(EXIT_USAGE, "bench: --max-seq filters a --suite's cases (give --seq for a custom shape)");
    if (o->case_filter && !o->suite) return cli_error(EXIT_USAGE, "bench: --case filters a --suite's cases (give --seq for a custom shape)");
    if (o->iters && o->min_time_given) return cli_error(EXIT_USAGE, "bench: use either --iters (-r) or --min-time");
    if (o->cold_runs && !o->cold) return cli_error(EXIT_USAGE, "bench: --cold-runs needs --cold");
    if (o->cold && o->format == BENCH_FMT_CSV && !o->cold_child)
        return cli_error(EXIT_USAGE, "bench: --cold adds a table (-o table, md) or cold_start (-o json, jsonl); "
                                     "csv has no column for it");
    if (o->cold && !o->cold_runs) o->cold_runs = 1;
    if (o->cold && o->pass != BENCH_PASS_FWD)
        return cli_error(EXIT_USAGE, "bench: --cold times the forward's first result; drop --pass %s",
                         bench_pass_name(o->pass));
    if (o->ring && (o->pass != BENCH_PASS_FWD || o->cold || o->page_size || o->kv_format != ATTNVK_KV_DTYPE))
        return cli_error(EXIT_USAGE, "bench: --ring runs the forward on a contiguous cache in the problem's dtype; "
                                     "drop --pass, --cold, --page-size and --kv-dtype%s",
                         o->q_format != ATTNVK_KV_DTYPE ? " (--dtype fp8 and --q-dtype fp8 quantize it)" : "");
    if (o->block_q && o->block_pattern.kind == BENCH_LAYOUT_NONE)
        return cli_error(EXIT_USAGE, "bench: --block-size sizes the blocks of --block-layout: give --block-layout too");
    if (o->block_pattern.kind != BENCH_LAYOUT_NONE && !o->block_q) o->block_q = o->block_k = BENCH_BLOCK_SIZE;
    if (o->ring && (o->block_pattern.kind != BENCH_LAYOUT_NONE || o->dilated.dilated_groups))
        return cli_error(EXIT_USAGE, "bench: --ring runs dense attention; drop --block-layout and --dilated");
    if (o->variant) {
        int rc = cli_check_variant("bench", o->variant, o->api_mask);
        if (rc) return rc;
    }
    if (!o->suite && !o->shape_given) o->suite = "quick";
    if (o->heads && o->kv_heads && o->heads % o->kv_heads)
        return cli_error(EXIT_USAGE, "bench: --heads %ld is not a multiple of --kv-heads %ld", o->heads, o->kv_heads);
    if (!o->heads && o->kv_heads && 16 % o->kv_heads)
        return cli_error(EXIT_USAGE, "bench: --kv-heads %ld does not divide the default 16 heads", o->kv_heads);
    const bench_suite *s = o->suite ? bench_suite_find(o->suite) : NULL;
    if (!o->min_time_given) o->min_time_s = s ? s->min_time_s : 0.5;
    if (!o->warmup_given) o->warmup = s ? s->warmup : 3;
    return 0;
}
