/* The suites are data: one row per case. Names encode the shape so a results
 * file stays readable without this table. */
#include "bench_suites.h"
#include "bench_suite_dilated.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* name, B, H, H_kv, Nq, Nk, D, causal, note. A name with a dtype in it ("-f32-") runs in that dtype. */
static const bench_suite_case quick_cases[] = {
    {"quick-d64-n256-b1-h4", 1, 4, 4, 256, 256, 64, 0, NULL, NULL},
    /* every machine gets a vendor comparison: CLBlast (f32 only) runs on any OpenCL device, PoCL included */
    {"quick-f32-d64-n256-b1-h4", 1, 4, 4, 256, 256, 64, 0, "f32, so CLBlast's unfused baseline runs beside attnvk", NULL},
    {"quick-d128-n384-b1-h2-causal", 1, 2, 2, 384, 384, 128, 1, NULL, NULL},
    {"quick-d64-nq200-nk333-b1-h8-kv2", 1, 8, 2, 200, 333, 64, 0, "odd lengths, GQA 8:2", NULL},
    {"quick-d32-nq64-nk256-b2-h2-kv1-causal", 2, 2, 1, 64, 256, 32, 1, "MQA, causal with Nq < Nk", NULL},
    {"quick-decode-d128-nk2048-b1-h8-kv2", 1, 8, 2, 1, 2048, 128, 0, "decode, GQA 8:2", NULL},
};

static const bench_suite_case production_cases[] = {
    {"prod-d128-n1024-b8-h32", 8, 32, 32, 1024, 1024, 128, 0, NULL, NULL},
    {"prod-d128-n1024-b8-h32-causal", 8, 32, 32, 1024, 1024, 128, 1, NULL, NULL},
    {"prod-d128-n2048-b4-h32", 4, 32, 32, 2048, 2048, 128, 0, NULL, NULL},
    {"prod-d128-n2048-b4-h32-causal", 4, 32, 32, 2048, 2048, 128, 1, NULL, NULL},
    {"prod-d128-n4096-b2-h32-kv8-causal", 2, 32, 8, 4096, 4096, 128, 1, "GQA 4:1", NULL},
    {"prod-d128-n8192-b1-h32-kv8-causal", 1, 32, 8, 8192, 8192, 128, 1, "GQA 4:1", NULL},
    {"prod-d128-n16384-b1-h32-kv8", 1, 32, 8, 16384, 16384, 128, 0, "GQA 4:1", NULL},
    {"prod-d128-n16384-b1-h32-kv8-causal", 1, 32, 8, 16384, 16384, 128, 1, "GQA 4:1", NULL},
    {"prod-d64-n4096-b2-h32-causal", 2, 32, 32, 4096, 4096, 64, 1, NULL, NULL},
    {"prod-d256-n2048-b2-h16-causal", 2, 16, 16, 2048, 2048, 256, 1, NULL, NULL},
    {"prod-d128-nq1024-nk8192-b2-h16", 2, 16, 16, 1024, 8192, 128, 0, "cross attention", NULL},
};

/* H is lowered as N grows so each tensor stays under 2^31 elements. */
static const bench_suite_case long_cases[] = {
    {"long-d128-n32k-b1-h32-kv8-causal", 1, 32, 8, 32768, 32768, 128, 1, NULL, NULL},
    {"long-d128-n64k-b1-h32-kv8-causal", 1, 32, 8, 65536, 65536, 128, 1, NULL, NULL},
    {"long-d128-n128k-b1-h16-kv8-causal", 1, 16, 8, 131072, 131072, 128, 1, NULL, NULL},
    {"long-d128-n256k-b1-h8-kv8-causal", 1, 8, 8, 262144, 262144, 128, 1, NULL, NULL},
    {"long-d128-n512k-b1-h8-kv8-causal", 1, 8, 8, 524288, 524288, 128, 1, NULL, NULL},
    {"long-d128-n1m-b1-h8-kv8-causal", 1, 8, 8, 1048576, 1048576, 128, 1, NULL, NULL},
};

static const bench_suite_case decode_cases[] = {
    {"decode-d128-nk1k-b8-h32-kv8", 8, 32, 8, 1, 1024, 128, 0, NULL, NULL},
    {"decode-d128-nk4k-b8-h32-kv8", 8, 32, 8, 1, 4096, 128, 0, NULL, NULL},
    {"decode-d128-nk16k-b8-h32-kv8", 8, 32, 8, 1, 16384, 128, 0, NULL, NULL},
    {"decode-d128-nk32k-b8-h32-kv8", 8, 32, 8, 1, 32768, 128, 0, NULL, NULL},
    {"decode-d128-nk64k-b8-h32-kv8", 8, 32, 8, 1, 65536, 128, 0, NULL, NULL},
    {"decode-d128-nk128k-b8-h32-kv8", 8, 32, 8, 1, 131072, 128, 0, NULL, NULL},
    {"decode-d128-nk128k-b1-h32-kv8", 1, 32, 8, 1, 131072, 128, 0, "single sequence: split-KV territory", NULL},
    {"decode-d128-nk8k-b64-h32-kv8", 64, 32, 8, 1, 8192, 128, 0, "large serving batch", NULL},
};

/* Model presets' score modifications. A sliding window of W tokens sees the
 * W keys up to its own (window_left W - 1, as Mistral's and Gemma's configs
 * count it); local layers carry the window, global ones do not. */
static const bench_case_model gemma2_global = {.softcap = 50.0f};
static const bench_case_model gemma2_local = {.softcap = 50.0f, .window = 1, .window_left = 4095, .window_right = -1};
static const bench_case_model gemma3_local = {.window = 1, .window_left = 1023, .window_right = -1};
static const bench_case_model mistral_window = {.window = 1, .window_left = 4095, .window_right = -1};
static const bench_case_model gptoss_global = {.sinks = 1};
static const bench_case_model gptoss_local = {.window = 1, .window_left = 127, .window_right = -1, .sinks = 1};
static const bench_case_model bloom_alibi = {.alibi = 1};
/* DeepSeek-V3's MLA: prefill with Dk 192 (128 + 64 rope) and Dv 128 per head;
 * absorbed decode reads one 576-wide latent (512 + 64 rope) shared by the heads */
static const bench_case_model deepseek_mla = {.head_dim_v = 128};
static const bench_case_model deepseek_absorbed = {.head_dim_v = 512};

static const bench_suite_case model_cases[] = {
    {"llama3-8b-prefill-n8k", 1, 32, 8, 8192, 8192, 128, 1, "Llama-3 8B: 32 q heads, 8 kv heads, D=128", NULL},
    {"llama3-8b-decode-nk8k-b16", 16, 32, 8, 1, 8192, 128, 0, "Llama-3 8B", NULL},
    {"llama3-70b-prefill-n8k", 1, 64, 8, 8192, 8192, 128, 1, "Llama-3 70B: 64 q heads, 8 kv heads", NULL},
    {"llama3-70b-decode-nk32k-b8", 8, 64, 8, 1, 32768, 128, 0, "Llama-3 70B", NULL},
    {"llama3-405b-prefill-n8k", 1, 128, 8, 8192, 8192, 128, 1, "Llama-3 405B: 128 q heads, 8 kv heads", NULL},
    {"llama3-405b-decode-nk128k-b4", 4, 128, 8, 1, 131072, 128, 0, "Llama-3 405B", NULL},
    {"deepseek-v3-prefill-n4k-dk192-dv128", 1, 128, 128, 4096, 4096, 192, 1, "DeepSeek-V3 MLA prefill: Dk 192, Dv 128",
     &deepseek_mla},
    {"deepseek-v3-decode-nk16k-b2-dk576-dv512", 2, 128, 1, 1, 16384, 576, 0,
     "DeepSeek-V3 absorbed MLA decode: one 576-wide latent for 128 heads, Dv 512", &deepseek_absorbed},
    {"gemma2-9b-global-prefill-n8k", 1, 16, 8, 8192, 8192, 256, 1, "Gemma-2 9B global layers: softcap 50, D=256",
     &gemma2_global},
    {"gemma2-9b-local-prefill-n8k", 1, 16, 8, 8192, 8192, 256, 1, "Gemma-2 9B local layers: softcap 50, window 4096",
     &gemma2_local},
    {"gemma2-9b-local-decode-nk8k-b8", 8, 16, 8, 1, 8192, 256, 0, "Gemma-2 9B local layers", &gemma2_local},
    {"gemma3-27b-local-prefill-n16k", 1, 32, 16, 16384, 16384, 128, 1, "Gemma-3 27B local layers: window 1024",
     &gemma3_local},
    {"gemma3-27b-local-decode-nk32k-b8", 8, 32, 16, 1, 32768, 128, 0, "Gemma-3 27B local layers", &gemma3_local},
    {"mistral-7b-prefill-n16k", 1, 32, 8, 16384, 16384, 128, 1, "Mistral 7B: window 4096", &mistral_window},
    {"mistral-7b-decode-nk32k-b8", 8, 32, 8, 1, 32768, 128, 0, "Mistral 7B: window 4096", &mistral_window},
    {"gpt-oss-120b-global-prefill-n8k", 1, 64, 8, 8192, 8192, 64, 1, "gpt-oss-120b global layers: sinks, D=64",
     &gptoss_global},
    {"gpt-oss-120b-local-prefill-n8k", 1, 64, 8, 8192, 8192, 64, 1, "gpt-oss-120b local layers: sinks, window 128",
     &gptoss_local},
    {"gpt-oss-120b-local-decode-nk32k-b8", 8, 64, 8, 1, 32768, 64, 0, "gpt-oss-120b local layers", &gptoss_local},
    {"bloom-176b-prefill-n2k", 1, 112, 112, 2048, 2048, 128, 1, "BLOOM 176B: ALiBi, 112 heads", &bloom_alibi},
    {"bloom-176b-decode-nk4k-b8", 8, 112, 112, 1, 4096, 128, 0, "BLOOM 176B: ALiBi", &bloom_alibi},
    {"llama3-8b-decode-nk1m", 1, 32, 8, 1, 1048576, 128, 0, "1M-token context, Llama-3 8B heads", NULL},
    {"llama3-8b-prefill-nq4k-nk1m", 1, 32, 8, 4096, 1048576, 128, 1,
     "last 4K-token chunk of a 1M-token prompt, Llama-3 8B heads", NULL},
};

/* B*N = 16k tokens and H*D = 2048, as in the FlashAttention papers' figures. */
#define FA(d, n, b, h)                                                                     \
    {"fa-d" #d "-n" #n "-b" #b "-h" #h, b, h, h, n, n, d, 0, NULL, NULL},                  \
    {"fa-d" #d "-n" #n "-b" #b "-h" #h "-causal", b, h, h, n, n, d, 1, NULL, NULL}
static const bench_suite_case fa_grid_cases[] = {
    FA(64, 512, 32, 32),  FA(64, 1024, 16, 32),  FA(64, 2048, 8, 32),
    FA(64, 4096, 4, 32),  FA(64, 8192, 2, 32),   FA(64, 16384, 1, 32),
    FA(128, 512, 32, 16), FA(128, 1024, 16, 16), FA(128, 2048, 8, 16),
    FA(128, 4096, 4, 16), FA(128, 8192, 2, 16),  FA(128, 16384, 1, 16),
};
#undef FA

#define COUNT(a) (int)(sizeof a / sizeof *a)
static const bench_suite suites[] = {
    {"quick", "small shapes for CI and a first look (< 1 minute on a CPU-only machine)", ATTNVK_F16, 0.05, 1, 0,
     quick_cases, COUNT(quick_cases), NULL},
    {"production", "prefill at 1K-16K tokens, GQA, causal, D 64/128/256, cross attention", ATTNVK_F16, 0.5, 3, 0,
     production_cases, COUNT(production_cases), NULL},
    {"long", "32K-1M tokens, flash kernels only", ATTNVK_F16, 0.5, 1, 1, long_cases, COUNT(long_cases), NULL},
    {"decode", "Nq=1 against a 1K-128K KV cache, GQA", ATTNVK_F16, 0.5, 3, 0, decode_cases, COUNT(decode_cases), NULL},
    {"models",
     "Llama-3, Gemma-2/3, Mistral, gpt-oss, BLOOM, DeepSeek-V3 MLA (as they attend), a 1M context",
     ATTNVK_F16, 0.5, 3, 0,
     model_cases, COUNT(model_cases), NULL},
    {"fa-grid", "B*N = 16K tokens, H*D = 2048, D 64/128, causal on/off, N 512-16K", ATTNVK_F16, 0.5, 3, 0,
     fa_grid_cases, COUNT(fa_grid_cases), NULL},
    /* issue #20's ranges (bench_suite_dilated.h); the longer ones leave out the unfused baselines */
    {"dilated", "LongNet dilated attention beside dense causal flash, N 1K-16K, D 64/128", ATTNVK_F16, 0.5, 3, 0,
     NULL, 0, bench_dilated_cases},
    {"dilated-medium", "the dilated suite at N 32K-128K", ATTNVK_F16, 0.5, 1, 1, NULL, 0, bench_dilated_cases},
    {"dilated-long", "the dilated suite at N 256K-1M", ATTNVK_F16, 0.5, 1, 1, NULL, 0, bench_dilated_cases},
    {"dilated-quick", "the dilated suite at N 256-512 with small segments, for CI (seconds on a CPU)", ATTNVK_F16,
     0.05, 1, 0, NULL, 0, bench_dilated_cases},
};

/* The correctness sweep: shapes, GQA, MQA, causal incl. Nq<Nk and empty rows,
 * decode, odd lengths, several KV tiles, D 32..512, both layouts. */
static const struct check_case {
    const char *name;
    int b, h, hkv, nq, nk, d, causal, bshd;
} check_cases[] = {
    {"basic", 2, 4, 4, 64, 64, 64, 0, 0},
    {"basic-bshd", 2, 4, 4, 64, 64, 64, 0, 1},
    {"odd-lengths", 1, 2, 2, 77, 131, 64, 0, 0},
    {"odd-lengths-causal", 1, 2, 2, 131, 131, 64, 1, 0},
    {"causal-nq<nk", 1, 2, 2, 37, 200, 64, 1, 0},
    {"causal-nq<nk-bshd", 1, 2, 1, 45, 190, 32, 1, 1},
    {"causal-nq>nk-empty-rows", 1, 1, 1, 70, 40, 32, 1, 0},
    /* a whole row block (up to 256 rows) of empty rows: a CTA with no key tile */
    {"causal-nq>nk-empty-block", 1, 2, 2, 300, 40, 64, 1, 0},
    {"many-kv-tiles-causal", 1, 2, 2, 300, 520, 64, 1, 0},
    {"gqa-8:2", 1, 8, 2, 33, 97, 64, 0, 0},
    {"gqa-8:2-causal-bshd", 2, 8, 2, 50, 50, 64, 1, 1},
    {"mqa", 1, 4, 1, 29, 150, 64, 0, 0},
    {"mqa-causal-bshd", 1, 4, 1, 40, 90, 128, 1, 1},
    {"decode-nq1-nk2049", 1, 4, 2, 1, 2049, 128, 0, 0},
    {"decode-nq1-causal-bshd", 2, 4, 1, 1, 700, 64, 1, 1},
    {"decode-nq4-gqa-causal", 1, 8, 2, 4, 1500, 128, 1, 0},
    {"d32", 1, 2, 2, 65, 65, 32, 0, 0},
    {"d80", 1, 2, 2, 70, 90, 80, 0, 0},
    {"d96-causal", 1, 2, 1, 96, 96, 96, 1, 0},
    {"d128-bshd", 1, 2, 2, 60, 130, 128, 0, 1},
    {"d256", 1, 2, 2, 40, 100, 256, 0, 0},
    {"d256-causal-bshd", 1, 2, 2, 33, 33, 256, 1, 1},
    /* the rest of issue #13's equal head dims: not multiples of 16 (40, 72),
     * of 32 (112), or beyond 256 (512) */
    {"d40", 1, 2, 2, 33, 77, 40, 0, 0},
    {"d72-causal-bshd", 1, 4, 2, 50, 50, 72, 1, 1},
    {"d112-gqa", 1, 4, 2, 45, 100, 112, 0, 0},
    {"d192-causal", 1, 2, 2, 64, 64, 192, 1, 0},
    {"d512", 1, 2, 1, 20, 70, 512, 0, 0},
    {"decode-d72-gqa", 1, 8, 2, 1, 600, 72, 0, 0},
    {"decode-d512-causal-bshd", 1, 4, 1, 2, 300, 512, 1, 1},
};

/* V head dims other than Q and K's (DeepSeek MLA's pairs), alone and with a
 * left window (window_left >= 0; -1: none) and sinks; implementations that
 * lack the feature skip them, naming it. */
static const struct head_dim_check_case {
    const char *name;
    int b, h, hkv, nq, nk, dk, dv, causal, bshd, window_left, sinks;
} head_dim_check_cases[] = {
    {"dk192-dv128-causal", 1, 2, 2, 70, 70, 192, 128, 1, 0, -1, 0},
    {"dk576-dv512-decode-gqa", 2, 8, 2, 1, 300, 576, 512, 1, 0, -1, 0},
    {"dk192-dv128-window-sinks", 1, 4, 2, 50, 90, 192, 128, 1, 1, 16, 1},
    {"dk192-dv128-decode-gqa-bshd", 2, 8, 2, 1, 400, 192, 128, 0, 1, -1, 0},
    {"dk576-dv512-prefill-causal", 1, 2, 1, 24, 40, 576, 512, 1, 0, -1, 0},
};

/* The FP8 forward (issue #16): fp8 Q, K and V, O in the sweep's f16 or bf16; implementations
 * that do not declare fp8 queries skip them, naming the feature. */
static const struct check_case fp8_check_cases[] = {
    {"fp8-d128", 1, 4, 4, 128, 128, 128, 0, 0},
    {"fp8-d128-causal", 1, 2, 2, 256, 256, 128, 1, 0},
    {"fp8-gqa-8:2-causal-bshd", 1, 8, 2, 96, 160, 128, 1, 1},
    {"fp8-n-not-128", 1, 2, 1, 200, 333, 128, 0, 0},
    {"fp8-d64-causal", 2, 4, 4, 130, 130, 64, 1, 0},
    {"fp8-d256-causal", 1, 2, 1, 100, 150, 256, 1, 0},
};

const bench_suite *bench_suite_find(const char *name)
{
    for (int i = 0; i < COUNT(suites); ++i)
        if (strcmp(suites[i].name, name) == 0) return &suites[i];
    return NULL;
}

/* A generated suite's size is what its generator makes (-1: out of memory). */
static int suite_size(const bench_suite *s)
{
    if (!s->generate) return s->ncases;
    bench_case *cases = NULL;
    int n = s->generate(s->name, s->dtype, &cases);
    free(cases);
    return n;
}

void bench_suite_print_list(FILE *f)
{
    for (int i = 0; i < COUNT(suites); ++i)
        fprintf(f, "  %-14s %3d cases: %s\n", suites[i].name, suite_size(&suites[i]), suites[i].summary);
}

static void fill_problem(attnvk_problem *p, int b, int h, int hkv, int nq, int nk, int d, int causal,
                         attnvk_dtype dtype, attnvk_layout layout)
{
    memset(p, 0, sizeof *p);
    p->batch = b;
    p->heads = h;
    p->kv_heads = hkv;
    p->seq_q = nq;
    p->seq_kv = nk;
    p->head_dim = d;
    p->causal = causal;
    p->dtype = dtype;
    p->layout = layout;
}

/* A dtype between dashes in a case name ("quick-f32-d64-..."). */
/* A ring splits the sequence: the kernel limits bind each rank's chunks, not the whole.
 * What the ring does not support yet (sinks, masks, ...) is no usage error: its
 * records say so as skipped. */
static attnvk_status validate_case(const bench_options *o, const attnvk_problem *p)
{
    if (o->ring <= 0) return attnvk_problem_validate(p);
    const attnvk_status s = attnvk_ring_validate(p, (int)o->ring, NULL);
    return s == ATTNVK_ERROR_UNSUPPORTED ? ATTNVK_OK : s;
}

static int named_dtype(const char *name, attnvk_dtype *out)
{
    static const char *const tokens[] = {"-f32-", "-f16-", "-bf16-"};
    static const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    for (int i = 0; i < 3; ++i)
        if (strstr(name, tokens[i])) {
            *out = dtypes[i];
            return 1;
        }
    return 0;
}

/* A table row as a case in dtype, BHSD, with its preset's score modifications. */
static void table_case(const bench_suite_case *c, attnvk_dtype dtype, bench_case *bc)
{
    memset(bc, 0, sizeof *bc);
    snprintf(bc->name, sizeof bc->name, "%s", c->name);
    fill_problem(&bc->p, c->batch, c->heads, c->kv_heads, c->seq_q, c->seq_kv, c->head_dim, c->causal, dtype,
                 ATTNVK_LAYOUT_BHSD);
    bc->note = c->note;
    if (c->model) {
        bc->p.softcap = c->model->softcap;
        bc->p.window = c->model->window;
        bc->p.window_left = c->model->window_left;
        bc->p.window_right = c->model->window_right;
        bc->p.alibi = c->model->alibi;
        bc->p.sinks = c->model->sinks;
        bc->p.head_dim_v = c->model->head_dim_v;
    }
}

static int suite_cases(const bench_options *o, const bench_suite *s, bench_case **out)
{
    bench_case *made = NULL;
    const int total = s->generate ? s->generate(s->name, s->dtype, &made) : s->ncases;
    bench_case *cases = total >= 0 ? calloc((size_t)total + 1, sizeof *cases) : NULL;
    if (!cases) {
        free(made);
        return cli_error(EXIT_FAILED, "out of host memory"), -1;
    }
    int n = 0;
    for (int i = 0; i < total; ++i) {
        bench_case c;
        if (made) c = made[i];
        else table_case(&s->cases[i], s->dtype, &c);
        if (o->causal && !c.p.causal) continue; /* --causal keeps the suite's causal cases */
        if (o->max_seq && (c.p.seq_q > o->max_seq || c.p.seq_kv > o->max_seq)) continue;
        if (o->case_filter && !strstr(c.name, o->case_filter)) continue;
        attnvk_dtype dtype = o->dtype_given ? o->dtype : s->dtype;
        attnvk_dtype fixed;
        if (named_dtype(c.name, &fixed)) { /* a case named for its dtype keeps it; --dtype keeps the matching ones */
            if (o->dtype_given && fixed != o->dtype) continue;
            dtype = fixed;
        }
        if (o->q_format == ATTNVK_KV_FP8 && dtype == ATTNVK_F32) continue; /* the FP8 forward writes f16/bf16 O */
        c.p.dtype = dtype;
        c.p.layout = o->layout;
        cases[n++] = c;
    }
    free(made);
    *out = cases;
    return n;
}

static int shape_cases(const bench_options *o, bench_case **out)
{
    static const long default_seq = 1024, default_dim = 128;
    const long *seqs = o->nseq ? o->seq : &default_seq, *dims = o->nhead_dim ? o->head_dim : &default_dim;
    int nseq = o->nseq ? o->nseq : 1, ndim = o->nhead_dim ? o->nhead_dim : 1;
    bench_case *cases = calloc((size_t)(nseq * ndim), sizeof *cases);
    if (!cases) return cli_error(EXIT_FAILED, "out of host memory"), -1;
    int b = (int)(o->batch ? o->batch : 1), h = (int)(o->heads ? o->heads : 16);
    int hkv = (int)(o->kv_heads ? o->kv_heads : h);
    int n = 0;
    for (int si = 0; si < nseq; ++si)
        for (int di = 0; di < ndim; ++di) {
            bench_case *bc = &cases[n++];
            int nq = (int)seqs[si], nk = (int)(o->seq_kv ? o->seq_kv : seqs[si]), d = (int)dims[di];
            fill_problem(&bc->p, b, h, hkv, nq, nk, d, o->causal, o->dtype, o->layout);
            char kv[32] = "", lens[48];
            if (hkv != h) snprintf(kv, sizeof kv, "-kv%d", hkv);
            if (nk != nq) snprintf(lens, sizeof lens, "nq%d-nk%d", nq, nk);
            else snprintf(lens, sizeof lens, "n%d", nq);
            if (snprintf(bc->name, sizeof bc->name, "custom-d%d-%s-b%d-h%d%s%s", d, lens, b, h, kv,
                         o->causal ? "-causal" : "") >= (int)sizeof bc->name) {
                free(cases);
                return cli_error(EXIT_USAGE, "bench: the case name for D=%d, %s is too long", d, lens), -1;
            }
            if (validate_case(o, &bc->p) != ATTNVK_OK) {
                free(cases);
                return cli_error(EXIT_USAGE, "bench: %s", attnvk_last_error()), -1;
            }
        }
    *out = cases;
    return n;
}

int bench_find_case(const bench_options *o, const char *name, bench_case *out)
{
    for (int i = 0; i < COUNT(suites); ++i) {
        bench_case *cases = NULL;
        int n = suite_cases(o, &suites[i], &cases), found = 0;
        for (int c = 0; c < n && !found; ++c)
            if (strcmp(cases[c].name, name) == 0) *out = cases[c], found = 1;
        free(cases);
        if (n < 0) return -1;
        if (found) return 1;
    }
    return 0;
}

/* --kv-dtype renames and requantizes every case (--q-dtype fp8 its Q too: "-fp8-qfp8");
 * --page-size adds a paged twin of each (every sequence full, its pages shuffled by the workload). */
static int kv_cache_cases(const bench_options *o, bench_case **cases, int n)
{
    if (n <= 0 || (!o->kv_format && !o->page_size)) return n;
    const int twins = o->page_size ? 2 : 1;
    bench_case *all = calloc((size_t)n * twins, sizeof *all);
    if (!all) {
        free(*cases);
        *cases = NULL; /* the caller frees what *cases holds */
        return cli_error(EXIT_FAILED, "out of host memory"), -1;
    }
    for (int i = 0; i < n; ++i)
        for (int t = 0; t < twins; ++t) {
            bench_case *c = &all[i * twins + t];
            *c = (*cases)[i];
            char suffix[48] = "";
            if (o->kv_format) {
                c->p.kv_format = o->kv_format;
                snprintf(suffix, sizeof suffix, "-%s", attnvk_kv_format_name(o->kv_format));
            }
            if (o->q_format) {
                c->p.q_format = o->q_format;
                snprintf(suffix + strlen(suffix), sizeof suffix - strlen(suffix), "-q%s", attnvk_kv_format_name(o->q_format));
            }
            if (t == 1) {
                c->p.page_size = (int)o->page_size;
                c->p.max_pages = (int)((c->p.seq_kv + o->page_size - 1) / o->page_size);
                c->p.num_pages = c->p.batch * c->p.max_pages;
                snprintf(suffix + strlen(suffix), sizeof suffix - strlen(suffix), "-page%ld", o->page_size);
            }
            int rc = 0;
            if (snprintf(c->name, sizeof c->name, "%s%s", (*cases)[i].name, suffix) >= (int)sizeof c->name)
                rc = cli_error(EXIT_USAGE, "bench: case name %s%s is too long", (*cases)[i].name, suffix);
            else if (validate_case(o, &c->p) != ATTNVK_OK)
                rc = cli_error(EXIT_USAGE, "bench: %s: %s", c->name, attnvk_last_error());
            if (rc) {
                free(all);
                free(*cases);
                *cases = NULL;
                return -1;
            }
        }
    free(*cases);
    *cases = all;
    return n * twins;
}

/* --block-layout (in --block-size blocks) and --dilated: the problem's fields
 * (the workload generates the layout from the case's pattern). */
static void sparse_case(const bench_options *o, bench_case *c)
{
    attnvk_problem *p = &c->p;
    if (o->block_pattern.kind != BENCH_LAYOUT_NONE) {
        p->block_sparse = 1, p->block_q = o->block_q, p->block_k = o->block_k;
        p->layout_batch = p->layout_heads = 1;
        c->block_pattern = o->block_pattern;
    }
    if (!o->dilated.dilated_groups) return; /* a suite's own dilation stays */
    p->dilated_groups = o->dilated.dilated_groups;
    for (int g = 0; g < p->dilated_groups; ++g)
        p->dilated_segment[g] = o->dilated.dilated_segment[g], p->dilated_rate[g] = o->dilated.dilated_rate[g];
}

/* --softcap, --window, --causal-align, --alibi, --sinks, --mask, --block-layout
 * and --dilated apply to every case; the name says which
 * ("-softcap50-w4096_-1-tl-alibi-sinks-mask-bs64x64r0.1-dil2048r1"). */
static int score_cases(const bench_options *o, bench_case **all, int n)
{
    bench_case *cases = n > 0 ? *all : NULL;
    const int sparse = o->block_pattern.kind != BENCH_LAYOUT_NONE || o->dilated.dilated_groups;
    if (n <= 0 || !(o->softcap > 0 || o->window || o->align || o->alibi || o->sinks || o->mask || sparse)) return n;
    for (int i = 0; i < n; ++i) {
        bench_case *c = &cases[i];
        attnvk_problem *p = &c->p; /* the options add to a preset's own modifications */
        if (o->softcap > 0) p->softcap = (float)o->softcap;
        if (o->window) p->window = 1, p->window_left = o->window_left, p->window_right = o->window_right;
        if (o->align) p->align = o->align;
        p->alibi |= o->alibi, p->sinks |= o->sinks;
        if (o->mask) {
            p->mask = 1;
            p->mask_batch = p->mask_heads = 1;
            p->mask_dtype = p->dtype == ATTNVK_F32 ? ATTNVK_F32 : ATTNVK_F16;
        }
        sparse_case(o, c);
        char suffix[192] = "";
        size_t len = 0;
        if (o->softcap > 0) len += (size_t)snprintf(suffix + len, sizeof suffix - len, "-softcap%g", o->softcap);
        if (o->window && len < sizeof suffix)
            len += (size_t)snprintf(suffix + len, sizeof suffix - len, "-w%d_%d", o->window_left, o->window_right);
        if (o->align && len < sizeof suffix) len += (size_t)snprintf(suffix + len, sizeof suffix - len, "-tl");
        if (o->alibi && len < sizeof suffix) len += (size_t)snprintf(suffix + len, sizeof suffix - len, "-alibi");
        if (o->sinks && len < sizeof suffix) len += (size_t)snprintf(suffix + len, sizeof suffix - len, "-sinks");
        if (o->mask && len < sizeof suffix) len += (size_t)snprintf(suffix + len, sizeof suffix - len, "-mask");
        if (len < sizeof suffix) sparse_name_suffix(p, &c->block_pattern, suffix + len, sizeof suffix - len);
        char base[sizeof c->name];
        snprintf(base, sizeof base, "%s", c->name);
        int rc = 0;
        if (snprintf(c->name, sizeof c->name, "%s%s", base, suffix) >= (int)sizeof c->name)
            rc = cli_error(EXIT_USAGE, "bench: case name %s%s is too long", base, suffix);
        else if (validate_case(o, p) != ATTNVK_OK)
            rc = cli_error(EXIT_USAGE, "bench: %s: %s", c->name, attnvk_last_error());
        if (rc) {
            free(*all);
            *all = NULL; /* the caller frees what *all holds */
            return -1;
        }
    }
    return n;
}

/* --head-dim-v applies to every case whose D it differs from; the name says it ("-dv128"). */
static int head_dim_v_cases(const bench_options *o, bench_case **all, int n)
{
    bench_case *cases = n > 0 ? *all : NULL;
    if (n <= 0 || !o->head_dim_v) return n;
    for (int i = 0; i < n; ++i) {
        bench_case *c = &cases[i];
        if (o->head_dim_v == c->p.head_dim) continue;
        c->p.head_dim_v = (int)o->head_dim_v;
        char base[sizeof c->name];
        snprintf(base, sizeof base, "%s", c->name);
        int rc = 0;
        if (snprintf(c->name, sizeof c->name, "%s-dv%ld", base, o->head_dim_v) >= (int)sizeof c->name)
            rc = cli_error(EXIT_USAGE, "bench: case name %s-dv%ld is too long", base, o->head_dim_v);
        else if (validate_case(o, &c->p) != ATTNVK_OK)
            rc = cli_error(EXIT_USAGE, "bench: %s: %s", c->name, attnvk_last_error());
        if (rc) {
            free(*all);
            *all = NULL; /* the caller frees what *all holds */
            return -1;
        }
    }
    return n;
}

int bench_build_cases(const bench_options *o, bench_case **out)
{
    int n;
    if (!o->suite) n = shape_cases(o, out);
    else {
        const bench_suite *s = bench_suite_find(o->suite);
        n = s ? suite_cases(o, s, out) : -1;
    }
    n = head_dim_v_cases(o, out, n);
    n = kv_cache_cases(o, out, n);
    return score_cases(o, out, n);
}

int bench_check_cases(attnvk_dtype dtype, bench_case *out, int max)
{
    int n = 0;
    for (int i = 0; i < COUNT(check_cases) && n < max; ++i, ++n) {
        const struct check_case *c = &check_cases[i];
        snprintf(out[n].name, sizeof out[n].name, "%s", c->name);
        fill_problem(&out[n].p, c->b, c->h, c->hkv, c->nq, c->nk, c->d, c->causal, dtype,
                     c->bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD);
        out[n].note = NULL;
    }
    for (int i = 0; i < COUNT(head_dim_check_cases) && n < max; ++i, ++n) {
        const struct head_dim_check_case *c = &head_dim_check_cases[i];
        attnvk_problem *p = &out[n].p;
        snprintf(out[n].name, sizeof out[n].name, "%s", c->name);
        fill_problem(p, c->b, c->h, c->hkv, c->nq, c->nk, c->dk, c->causal, dtype,
                     c->bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD);
        p->head_dim_v = c->dv;
        p->window = c->window_left >= 0;
        p->window_left = c->window_left, p->window_right = -1;
        p->sinks = c->sinks;
        out[n].note = NULL;
    }
    for (int i = 0; dtype != ATTNVK_F32 && i < COUNT(fp8_check_cases) && n < max; ++i, ++n) {
        const struct check_case *c = &fp8_check_cases[i];
        snprintf(out[n].name, sizeof out[n].name, "%s", c->name);
        fill_problem(&out[n].p, c->b, c->h, c->hkv, c->nq, c->nk, c->d, c->causal, dtype,
                     c->bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD);
        out[n].p.q_format = out[n].p.kv_format = ATTNVK_KV_FP8;
        out[n].note = NULL;
    }
    return n;
}
