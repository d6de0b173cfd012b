/* The CUDA vendor baselines, "cudnn" (fused SDPA) and "cublas" (unfused).
 *
 * Without a GPU (CI): the libraries load or report why not; the cuBLAS batching
 * plan is replayed on the CPU (column-major GEMMs, the softmax writing P in
 * place over S) and checked against the reference for every feature case;
 * native/softmax.cu compiles with NVRTC for sm_80 and sm_90a; every cuDNN
 * graph descriptor finalizes. With a CUDA device: both implementations run
 * the feature matrix against the reference (cuDNN may answer UNSUPPORTED,
 * with its reason, where its support surface ends); cuBLAS's materialised-P
 * backward runs tests/common/backward_cases.h (not ragged lengths, which its
 * softmax does not take) in f16, bf16 and f32, and twice bit-identically.
 * `test_cuda_vendor --perf` also times the large cases (median of runs);
 * `--perf-only` times them and skips everything else. */
#include "test_util.h"
#include "backward_cases.h"

#include "core/score_cases.h"
#include "cuda/cublas_unfused.h"
#include "cuda/cudnn_scores.h"
#include "cuda/cudnn_sdpa.h"
#include "cuda/cudnn_sdpa_bwd.h"
#include "cuda/cudnn_sdpa_fp8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void count(int ok)
{
    if (ok)
        ++passed;
    else
        ++failed;
}

/* ---- the cuBLAS plan replayed on the CPU ---- */

/* C (m x n, column-major) = alpha * op(A) . B; op(A) = A^T when trans_a. */
static void gemm(int trans_a, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                 float *c, int ldc)
{
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            float acc = 0;
            for (int l = 0; l < k; ++l) acc += (trans_a ? a[l + (size_t)i * lda] : a[i + (size_t)l * lda]) * b[l + (size_t)j * ldb];
            c[i + (size_t)j * ldc] = alpha * acc;
        }
}

/* What the softmax kernel does to row r of S: P (dtype) written over S. */
static void softmax_row_in_place(const attnvk_problem *p, float *scores, size_t r)
{
    int nk = p->seq_kv, i = (int)(r % (size_t)p->seq_q), visible = nk;
    if (p->causal) {
        long long seen = (long long)i + nk - p->seq_q + 1;
        visible = seen < 0 ? 0 : seen > nk ? nk : (int)seen;
    }
    float *s = scores + r * nk, m = -INFINITY, l = 0;
    float *tmp = malloc(sizeof(float) * (size_t)nk);
    for (int j = 0; j < visible; ++j) m = fmaxf(m, s[j]);
    for (int j = 0; j < visible; ++j) l += expf(s[j] - m);
    for (int j = 0; j < nk; ++j) tmp[j] = j < visible ? expf(s[j] - m) / l : 0.0f;
    attnvk_pack(p->dtype, tmp, s, (size_t)nk); /* P row r starts where S row r starts */
    free(tmp);
}

static int replay_plan(const attnvk_problem *p, const char *label, uint64_t seed)
{
    avk_unfused_plan plan;
    if (avk_unfused_plan_make(p, &plan) != ATTNVK_OK) {
        printf("FAIL plan %s: %s\n", label, attnvk_last_error());
        return 0;
    }
    float *q, *k, *v;
    avk_test_inputs(p, seed, &q, &k, &v);
    size_t no = attnvk_o_elements(p), es = attnvk_dtype_size(p->dtype), per_f32 = sizeof(float) / es;
    size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    float *scores = malloc(plan.scores_bytes), *o = malloc(no * sizeof(float)), *p_col = NULL;
    for (size_t i = 0; i < no; ++i) o[i] = NAN;
    const int nk = p->seq_kv, d = p->head_dim, dv = attnvk_problem_head_dim_v(p);
    for (int c = 0; c < plan.call_count; ++c) {
        const avk_unfused_call *call = &plan.calls[c];
        for (int b = 0; b < call->count; ++b)
            gemm(1, nk, plan.rows, d, attnvk_problem_scale(p), k + call->kv_offset + b * call->kv_stride, plan.ld_kv,
                 q + call->q_offset + b * call->q_stride, plan.ld_q, scores + call->s_offset + b * call->s_stride, nk);
    }
    for (size_t r = 0; r < rows; ++r) softmax_row_in_place(p, scores, r);
    /* GEMM 2 reads P (dtype) with pitch nk * per_f32 elements */
    p_col = malloc(sizeof(float) * (size_t)nk * plan.rows);
    float *o_tile = malloc(sizeof(float) * (size_t)dv * plan.rows);
    for (int c = 0; c < plan.call_count; ++c) {
        const avk_unfused_call *call = &plan.calls[c];
        for (int b = 0; b < call->count; ++b) {
            const unsigned char *pb = (const unsigned char *)scores + (call->s_offset + b * call->s_stride) * sizeof(float);
            for (int j = 0; j < plan.rows; ++j)
                attnvk_unpack(p->dtype, pb + (size_t)j * nk * per_f32 * es, p_col + (size_t)j * nk, (size_t)nk);
            gemm(0, dv, plan.rows, nk, 1.0f, v + call->v_offset + b * call->v_stride, plan.ld_v, p_col, nk, o_tile, dv);
            float *ob = o + call->o_offset + b * call->o_stride;
            for (int j = 0; j < plan.rows; ++j)
                memcpy(ob + (size_t)j * plan.ld_o, o_tile + (size_t)j * dv, sizeof(float) * dv);
        }
    }
    attnvk_round_to_dtype(p->dtype, o, no);
    attnvk_check chk = attnvk_check_output(p, q, k, v, o, NULL, 0);
    printf("%s plan %-28s %s B%d H%d/%d Nq%d Nk%d D%d/%d %s%s: %d call(s) x %d rows, rel_l2 %.2e\n",
           chk.passed ? "ok  " : "FAIL", label, attnvk_dtype_name(p->dtype), p->batch, p->heads, p->kv_heads, p->seq_q,
           p->seq_kv, p->head_dim, dv, p->layout == ATTNVK_LAYOUT_BHSD ? "bhsd" : "bshd", p->causal ? " causal" : "",
           plan.call_count, plan.rows, chk.rel_l2);
    free(q), free(k), free(v), free(o), free(scores), free(p_col), free(o_tile);
    avk_unfused_plan_free(&plan);
    return chk.passed;
}

/* Feature cases plus BSHD GQA shapes that take each batching route, and
 * MLA's head dims (Dk != Dv) on each route. */
static int all_cases(attnvk_dtype dtype, attnvk_problem *out, const char **labels, int max)
{
    enum { EXTRA = 5 };
    int n = avk_test_feature_cases(dtype, out, labels, max - EXTRA);
    static const attnvk_problem extra[EXTRA] = {
        {.batch = 3, .heads = 6, .kv_heads = 2, .seq_q = 40, .seq_kv = 72, .head_dim = 64, .causal = 0, .scale = 0, .dtype = ATTNVK_F32, .layout = ATTNVK_LAYOUT_BSHD},  /* per head, batched over b */
        {.batch = 2, .heads = 8, .kv_heads = 4, .seq_q = 33, .seq_kv = 47, .head_dim = 32, .causal = 1, .scale = 0, .dtype = ATTNVK_F32, .layout = ATTNVK_LAYOUT_BSHD},  /* per (b, r), batched over g */
        {.batch = 2, .heads = 4, .kv_heads = 2, .seq_q = 21, .seq_kv = 35, .head_dim = 192, .head_dim_v = 128, .causal = 1, .dtype = ATTNVK_F32, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 3, .heads = 6, .kv_heads = 2, .seq_q = 9, .seq_kv = 30, .head_dim = 192, .head_dim_v = 128, .dtype = ATTNVK_F32, .layout = ATTNVK_LAYOUT_BSHD},
        {.batch = 2, .heads = 8, .kv_heads = 1, .seq_q = 1, .seq_kv = 40, .head_dim = 576, .head_dim_v = 512, .dtype = ATTNVK_F32, .layout = ATTNVK_LAYOUT_BSHD},
    };
    static const char *const extra_labels[EXTRA] = {"bshd GQA 6:2 per-head", "bshd GQA 8:4 per-(b,r)",
                                                    "dk192 dv128 causal bhsd", "dk192 dv128 bshd per-head",
                                                    "dk576 dv512 decode per-(b,r)"};
    for (int i = 0; i < EXTRA && n < max; ++i, ++n) {
        out[n] = extra[i];
        out[n].dtype = dtype;
        labels[n] = extra_labels[i];
    }
    return n;
}

/* ---- the cuDNN graph on the host ---- */

/* Operations the SDPA graph should have, counted from the problem as
 * cudnn-frontend lowers it (not from the graph code's own band logic). */
static int cudnn_expected_ops(const attnvk_problem *p)
{
    int ops = 10; /* bmm1, scale, max, sub, exp, sum, log, stats, div, bmm2 */
    const int right = p->causal || (p->window && p->window_right >= 0);
    const int bottom = p->align != ATTNVK_ALIGN_TOP_LEFT;
    if (p->softcap > 0) ops += 3; /* div, tanh, mul */
    if (p->mask) ops += 1;        /* add */
    if (p->alibi) ops += 5;       /* two indices, sub, mul, add */
    if (right) {
        const int bottom_form = bottom && !p->mask && !p->alibi;
        const int right_bound = p->causal ? 0 : p->window_right;
        const int shift = bottom_form ? right_bound : right_bound + (bottom ? p->seq_kv - p->seq_q : 0);
        ops += 4 + (bottom_form ? 2 : 0) + (shift != 0); /* indices, [+Nk, -Nq], [+shift], cmp, select */
    }
    if (p->window && p->window_left >= 0) ops += 5; /* indices, add, cmp, select */
    if (p->sinks) ops += 4;                          /* max with sink, sub, exp, add */
    return ops;
}

/* The backward graph's operations (cudnn_sdpa_bwd.c, as cudnn-frontend's
 * composite backward lowers it): the forward's score modifications and band
 * (no softmax, no sink), then dO*O, its row sum, *1, bmm Q.K^T, scale, -stats,
 * exp, E^T, bmm dV, bmm dP, -D, *E, scale, dS^T, bmm dK, K view, bmm dQ
 * (+ identity from the f32 accumulator unless deterministic), and per-group
 * sums of dK and dV with GQA. */
static int cudnn_expected_backward_ops(const attnvk_problem *p, int deterministic)
{
    const int score_ops = cudnn_expected_ops(p) - 10 - (p->sinks ? 4 : 0);
    return score_ops + 18 - (deterministic ? 1 : 0) + (p->kv_heads < p->heads ? 2 : 0);
}

/* The backward of every problem whose forward cuDNN takes: its descriptors
 * finalize with the expected operations, both ways, or it is refused with a
 * one-line reason (softcap). */
static void cudnn_backward_graph(const attnvk_problem *p, const char *label)
{
    if (avk_cudnn_bwd_supports(p, 9, 0, 0) != ATTNVK_OK) {
        const char *why = attnvk_last_error();
        const int ok = *why && !strchr(why, '\n') && p->softcap > 0;
        printf("%s backward %-29s %s: refused: %s\n", ok ? "skip" : "FAIL", label, attnvk_dtype_name(p->dtype), why);
        if (!ok) count(0);
        return;
    }
    for (int det = 0; det < 2; ++det) {
        int ops = 0;
        attnvk_status s = avk_cudnn_bwd_check_descriptors(p, det, &ops);
        const int want = cudnn_expected_backward_ops(p, det), ok = s == ATTNVK_OK && ops == want;
        printf("%s backward %-29s %s%s: %d operations (expected %d)%s%s\n", ok ? "ok  " : "FAIL", label,
               attnvk_dtype_name(p->dtype), det ? " deterministic" : "", ops, want, s == ATTNVK_OK ? "" : ": ",
               s == ATTNVK_OK ? "" : attnvk_last_error());
        count(ok);
    }
}

/* What only the backward refuses, each in one line. */
static void cudnn_backward_refusals(void)
{
    attnvk_problem p = {.batch = 1, .heads = 4, .kv_heads = 4, .seq_q = 128, .seq_kv = 128, .head_dim = 128,
                        .causal = 1, .dtype = ATTNVK_F16};
    attnvk_status s = avk_cudnn_bwd_supports(&p, 9, 1, 0);
    EXPECT(s == ATTNVK_OK, "the backward takes causal D=128 deterministic on Hopper: %s", attnvk_last_error());
    count(s == ATTNVK_OK);
    struct {
        const char *what;
        int cc, deterministic, d_sinks, head_dim;
    } refused[] = {{"d(sinks)", 9, 0, 1, 128}, {"deterministic on Blackwell", 10, 1, 0, 128},
                   {"D=256 before Hopper", 8, 0, 0, 256}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
        attnvk_problem q = p;
        q.head_dim = refused[i].head_dim;
        s = avk_cudnn_bwd_supports(&q, refused[i].cc, refused[i].deterministic, refused[i].d_sinks);
        const int ok = s == ATTNVK_ERROR_UNSUPPORTED && *attnvk_last_error() && !strchr(attnvk_last_error(), '\n');
        printf("%s backward refuses %s: %s\n", ok ? "ok  " : "FAIL", refused[i].what, attnvk_last_error());
        count(ok);
    }
}

/* The band the graph writes, evaluated on every (i, j) the way cuDNN
 * evaluates it (int32 row/col, the left bound in f32), against attnvk's
 * visibility rule with i' from the alignment. */
static int cudnn_band_matches(const attnvk_problem *p, char *why, size_t n)
{
    const avk_dnn_band band = avk_dnn_band_of(p);
    const int offset = p->align == ATTNVK_ALIGN_TOP_LEFT ? 0 : p->seq_kv - p->seq_q;
    for (int i = 0; i < p->seq_q; ++i)
        for (int j = 0; j < p->seq_kv; ++j) {
            const int ip = i + offset;
            const int visible = (!p->window || p->window_left < 0 || j >= ip - p->window_left) &&
                                (!p->window || p->window_right < 0 || j <= ip + p->window_right) &&
                                (!p->causal || j <= ip);
            int kept = 1;
            if (band.right) {
                int32_t row = i;
                if (band.right_bottom) row = row + p->seq_kv - p->seq_q;
                kept = kept && row + band.right_shift >= j;
            }
            if (band.left) kept = kept && (float)j + band.left_bound > (float)i;
            if (kept != visible) {
                snprintf(why, n, "(i=%d, j=%d): graph keeps %d, attnvk sees %d", i, j, kept, visible);
                return 0;
            }
        }
    /* cuDNN's ALiBi adds slope * (j - i): attnvk's j - i' only where i' = i */
    if (p->alibi && offset != 0) {
        snprintf(why, n, "ALiBi with i' != i");
        return 0;
    }
    return 1;
}

/* Graph variants beyond the score cases: each path of the score subgraph. */
static int cudnn_graph_variants(attnvk_dtype dtype, attnvk_problem *out, const char **labels, int max)
{
    static const struct {
        const char *label;
        int nq, nk, causal, top_left, left, right, alibi, sinks, mask, mask_f16, full_mask;
        float softcap;
    } v[] = {
        {"softcap mask sinks", 40, 70, 0, 0, -1, -1, 0, 1, 1, 0, 0, 30.f},
        {"alibi causal Nq=Nk window mask", 64, 64, 1, 0, 16, -1, 1, 0, 1, 0, 1, 0.f},
        {"alibi top-left Nq<Nk sinks", 30, 80, 1, 1, -1, -1, 1, 1, 0, 0, 0, 0.f},
        {"window left mask Nq<Nk", 30, 80, 0, 0, 7, -1, 0, 0, 1, 1, 0, 0.f},
        {"window right mask Nq<Nk", 30, 80, 0, 0, -1, 4, 0, 0, 1, 0, 0, 0.f},
        {"causal sinks Nq<Nk", 30, 80, 1, 0, -1, -1, 0, 1, 0, 0, 0, 0.f},
        {"window 0,0 top-left", 48, 48, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0.f},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof v / sizeof *v && n < max; ++i, ++n) {
        attnvk_problem p = {.batch = 2, .heads = 4, .kv_heads = 2, .seq_q = v[i].nq, .seq_kv = v[i].nk,
                            .head_dim = 64, .causal = v[i].causal, .dtype = dtype, .layout = ATTNVK_LAYOUT_BSHD};
        p.align = v[i].top_left ? ATTNVK_ALIGN_TOP_LEFT : ATTNVK_ALIGN_BOTTOM_RIGHT;
        p.window = v[i].left >= 0 || v[i].right >= 0;
        p.window_left = v[i].left, p.window_right = v[i].right;
        p.alibi = v[i].alibi, p.sinks = v[i].sinks, p.softcap = v[i].softcap;
        p.mask = v[i].mask, p.mask_dtype = v[i].mask_f16 ? ATTNVK_F16 : ATTNVK_F32;
        p.mask_batch = v[i].full_mask ? p.batch : 1, p.mask_heads = v[i].full_mask ? p.heads : 1;
        out[n] = p;
        labels[n] = v[i].label;
    }
    return n;
}

/* Every score problem cuDNN accepts builds and finalizes its descriptors with
 * the operations cudnn-frontend would emit and a band equal to attnvk's; the
 * rest are refused with a reason. */
static void cudnn_score_graphs(attnvk_dtype dtype)
{
    attnvk_problem problems[32];
    const char *labels[32];
    avk_score_case sc[AVK_SCORE_CASES_MAX];
    int n = 0, m = avk_score_cases(dtype, sc, AVK_SCORE_CASES_MAX);
    for (int i = 0; i < m && n < 32; ++i, ++n) problems[n] = sc[i].p, labels[n] = sc[i].label;
    n += cudnn_graph_variants(dtype, problems + n, labels + n, 32 - n);
    for (int i = 0; i < n; ++i) {
        const attnvk_problem *p = &problems[i];
        if (avk_cudnn_sdpa_supports(p, 9) != ATTNVK_OK) {
            const char *why = attnvk_last_error();
            printf("%s graph %-32s %s: refused: %s\n", *why ? "skip" : "FAIL", labels[i], attnvk_dtype_name(dtype),
                   why);
            if (!*why) count(0);
            continue;
        }
        char why[128] = "";
        const int band_ok = cudnn_band_matches(p, why, sizeof why);
        int ops = 0;
        attnvk_status s = avk_cudnn_sdpa_check_descriptors(p, 9, &ops);
        const int ok = band_ok && s == ATTNVK_OK && ops == cudnn_expected_ops(p);
        printf("%s graph %-32s %s: %d operations (expected %d)%s%s%s\n", ok ? "ok  " : "FAIL", labels[i],
               attnvk_dtype_name(dtype), ops, cudnn_expected_ops(p), band_ok ? "" : ", band ", why,
               s == ATTNVK_OK ? "" : attnvk_last_error());
        count(ok);
        cudnn_backward_graph(p, labels[i]);
    }
}

/* cuDNN's FP8 forward (cudnn_sdpa_fp8.c): the 16-bit graph's operations and eight more (descale
 * Q and K, amax S, scale S, descale S and V, amax O, scale O), and its refusals */
static void cudnn_fp8_graphs(void)
{
    /* cc 9: O in e4m3 (cuDNN 9.19 writes f16 O from FP8 inputs on Blackwell only), cc 10: f16/bf16 O */
    for (int cc = 9; cc <= 10; ++cc)
        for (int causal = 0; causal <= 1; ++causal)
            for (int dt = ATTNVK_F16; dt <= ATTNVK_BF16; ++dt) {
                attnvk_problem p = {.batch = 2, .heads = 8, .kv_heads = 2, .seq_q = 256, .seq_kv = 256, .head_dim = 128,
                                    .dtype = (attnvk_dtype)dt, .causal = causal, .q_format = ATTNVK_KV_FP8,
                                    .kv_format = ATTNVK_KV_FP8};
                attnvk_problem p16 = p;
                p16.q_format = p16.kv_format = ATTNVK_KV_DTYPE;
                int ops = 0;
                attnvk_status s = avk_cudnn_sdpa_supports(&p, cc);
                if (s == ATTNVK_OK) s = avk_cudnn_sdpa_check_descriptors(&p, cc, &ops);
                const int ok = s == ATTNVK_OK && ops == cudnn_expected_ops(&p16) + 8;
                printf("%s graph fp8 sm_%d0 (O %s) %-6s %s: %d operations (expected %d)%s%s\n", ok ? "ok  " : "FAIL", cc,
                       avk_cudnn_fp8_o_in_e4m3(cc) ? "e4m3" : attnvk_dtype_name(p.dtype), causal ? "causal" : "",
                       attnvk_dtype_name(p.dtype), ops, cudnn_expected_ops(&p16) + 8, s == ATTNVK_OK ? "" : ": ",
                       s == ATTNVK_OK ? "" : attnvk_last_error());
                count(ok);
            }
    struct {
        const char *what;
        attnvk_problem p;
        int cc;
    } refused[] = {
        {"an fp8 cache under f16 queries",
         {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16,
          .kv_format = ATTNVK_KV_FP8},
         9},
        {"Ampere",
         {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16,
          .q_format = ATTNVK_KV_FP8, .kv_format = ATTNVK_KV_FP8},
         8},
        {"a softcap",
         {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16,
          .q_format = ATTNVK_KV_FP8, .kv_format = ATTNVK_KV_FP8, .softcap = 30.0f},
         9},
        {"a window",
         {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16,
          .q_format = ATTNVK_KV_FP8, .kv_format = ATTNVK_KV_FP8, .window = 1, .window_left = 16, .window_right = 0},
         9},
        {"q8_0",
         {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16,
          .kv_format = ATTNVK_KV_Q8_0},
         9},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
        attnvk_status s = avk_cudnn_sdpa_supports(&refused[i].p, refused[i].cc);
        EXPECT(s == ATTNVK_ERROR_UNSUPPORTED && *attnvk_last_error(), "cuDNN must refuse %s with a reason",
               refused[i].what);
        printf("%s refuse %s: %s\n", s == ATTNVK_ERROR_UNSUPPORTED ? "ok  " : "FAIL", refused[i].what,
               attnvk_last_error());
        count(s == ATTNVK_ERROR_UNSUPPORTED);
    }
}

static void host_checks(uint64_t seed)
{
    attnvk_problem cases[32];
    const char *labels[32];
    attnvk_dtype dtypes[] = {ATTNVK_F16, ATTNVK_BF16, ATTNVK_F32};
    for (int t = 0; t < 3; ++t) {
        int n = all_cases(dtypes[t], cases, labels, 32);
        for (int i = 0; i < n; ++i) count(replay_plan(&cases[i], labels[i], seed + (uint64_t)i));
    }

    /* the softmax kernel compiles for the GPUs that matter */
    const char *arches[] = {"80", "90a"};
    for (int a = 0; a < 2; ++a) {
        size_t bytes = 0;
        attnvk_status s = avk_softmax_compile_check(arches[a], &bytes);
        if (s == ATTNVK_ERROR_UNAVAILABLE) {
            printf("skip NVRTC softmax.cu sm_%s: %s\n", arches[a], attnvk_last_error());
            continue;
        }
        printf("%s NVRTC softmax.cu sm_%s: %s (%zu-byte cubin)\n", s == ATTNVK_OK ? "ok  " : "FAIL", arches[a],
               s == ATTNVK_OK ? "compiled" : attnvk_last_error(), bytes);
        count(s == ATTNVK_OK);
    }

    /* MLA: 192/128 is inside cuDNN's surface on Hopper, 576/512 and 192/128 before Hopper are refused in one line */
    attnvk_problem mla = {.batch = 1, .heads = 4, .kv_heads = 4, .seq_q = 64, .seq_kv = 64, .head_dim = 192,
                          .head_dim_v = 128, .causal = 1, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BSHD};
    attnvk_status s = avk_cudnn_sdpa_supports(&mla, 9);
    EXPECT(s == ATTNVK_OK, "cuDNN takes Dk=192, Dv=128 on Hopper: %s", attnvk_last_error());
    count(s == ATTNVK_OK);
    s = avk_cudnn_sdpa_supports(&mla, 8);
    count(s == ATTNVK_ERROR_UNSUPPORTED && !strchr(attnvk_last_error(), '\n'));
    mla.head_dim = 576, mla.head_dim_v = 512, mla.seq_q = 1;
    s = avk_cudnn_sdpa_supports(&mla, 9);
    EXPECT(s == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "Dv=512") && !strchr(attnvk_last_error(), '\n'),
           "cuDNN refuses 576/512 in one line: %s", attnvk_last_error());
    count(s == ATTNVK_ERROR_UNSUPPORTED);

    cudnn_backward_refusals();

    /* the libraries: loaded, or a one-line reason */
    attnvk_status blas = avk_cublas_load();
    printf("cublas: %s\n", blas == ATTNVK_OK ? avk_cublas_version_text() : attnvk_last_error());
    attnvk_status dnn = avk_cudnn_load();
    printf("cudnn: %s\n", dnn == ATTNVK_OK ? avk_cudnn_version_text() : attnvk_last_error());
    if (dnn != ATTNVK_OK) return;
    for (int t = 0; t < 2; ++t) {
        int n = all_cases(dtypes[t], cases, labels, 32);
        for (int i = 0; i < n; ++i) {
            if (avk_cudnn_sdpa_supports(&cases[i], 9) != ATTNVK_OK) {
                printf("skip graph %-28s %s: %s\n", labels[i], attnvk_dtype_name(dtypes[t]), attnvk_last_error());
                continue;
            }
            int ops = 0;
            attnvk_status s = avk_cudnn_sdpa_check_descriptors(&cases[i], 9, &ops);
            int ok = s == ATTNVK_OK && ops == (cases[i].causal ? 16 : 10);
            printf("%s graph %-28s %s: %d operations%s%s\n", ok ? "ok  " : "FAIL", labels[i],
                   attnvk_dtype_name(dtypes[t]), ops, s == ATTNVK_OK ? "" : ": ", s == ATTNVK_OK ? "" : attnvk_last_error());
            count(ok);
        }
    }
    for (int t = 0; t < 2; ++t) cudnn_score_graphs(dtypes[t]);
    cudnn_fp8_graphs();
    attnvk_problem f32 = cases[0];
    f32.dtype = ATTNVK_F32;
    s = avk_cudnn_sdpa_supports(&f32, 9);
    EXPECT(s == ATTNVK_ERROR_UNSUPPORTED && *attnvk_last_error(), "cuDNN must refuse f32 with a reason");
    count(s == ATTNVK_ERROR_UNSUPPORTED);
}

/* ---- on a CUDA device ---- */

/* cuBLAS's backward (issue #18) against the float64 reference */
static void backward_checks(attnvk_device *dev, uint64_t seed)
{
    const attnvk_kernel_options o = {.implementation = "cublas"};
    const attnvk_dtype dtypes[] = {ATTNVK_F16, ATTNVK_BF16, ATTNVK_F32};
    bcase bt[16];
    const int nb = cases(bt);
    for (int t = 0; t < 3; ++t)
        for (int i = 0; i < nb; ++i)
            if (!bt[i].p.ragged) count(run_case_opts(dev, &bt[i], dtypes[t], &o, seed + 700 + 31 * (uint64_t)i));
    count(deterministic_opts(dev, &o, ATTNVK_BF16, seed + 701));
}

static void device_checks(attnvk_device *dev, uint64_t seed)
{
    attnvk_impl_info impls[8];
    int n = attnvk_device_implementations(dev, impls, 8);
    int have_cudnn = 0, have_cublas = 0;
    for (int i = 0; i < n && i < 8; ++i) {
        printf("implementation %-8s fused=%d %s%s\n", impls[i].name, impls[i].fused,
               impls[i].available ? "available" : "unavailable: ", impls[i].available ? "" : impls[i].reason);
        if (!strcmp(impls[i].name, "cudnn")) have_cudnn = impls[i].available;
        if (!strcmp(impls[i].name, "cublas")) have_cublas = impls[i].available;
    }
    attnvk_problem cases[32];
    const char *labels[32];
    const attnvk_dtype dtypes[] = {ATTNVK_F16, ATTNVK_BF16, ATTNVK_F32};
    for (int t = 0; t < 3; ++t) {
        int m = all_cases(dtypes[t], cases, labels, 32);
        for (int i = 0; i < m; ++i) {
            char label[64];
            if (have_cublas) {
                attnvk_kernel_options o = {.implementation = "cublas"};
                snprintf(label, sizeof label, "cublas %s", labels[i]);
                count(avk_test_run_case(dev, &cases[i], &o, label, seed + (uint64_t)i, 0));
            }
            if (have_cudnn) {
                attnvk_kernel_options o = {.implementation = "cudnn"};
                snprintf(label, sizeof label, "cudnn %s", labels[i]);
                /* UNSUPPORTED (f32, causal Nq > Nk, ...) is a skip with cuDNN's reason */
                count(avk_test_run_case(dev, &cases[i], &o, label, seed + (uint64_t)i, 1));
            }
        }
    }
    for (int t = 0; t < 2 && have_cudnn; ++t) {
        /* the score cases of `attnvk check`: ok, or UNSUPPORTED with cuDNN's reason */
        avk_score_case sc[AVK_SCORE_CASES_MAX];
        int m = avk_score_cases(dtypes[t], sc, AVK_SCORE_CASES_MAX);
        for (int i = 0; i < m; ++i) {
            attnvk_kernel_options o = {.implementation = "cudnn"};
            avk_score_result r;
            attnvk_status s = avk_score_case_run(dev, &sc[i], &o, seed + 500 + (uint64_t)i, &r);
            if (s == ATTNVK_ERROR_UNSUPPORTED) {
                printf("skip cudnn scores %s: %s\n", r.shape, r.message);
                continue;
            }
            int ok = s == ATTNVK_OK && r.check.passed;
            if (s == ATTNVK_OK)
                printf("%s cudnn scores %s: %s rel_l2 %.2e nonfinite %zu\n", ok ? "ok  " : "FAIL", r.shape,
                       r.info.variant, r.check.rel_l2, r.check.nonfinite);
            else
                printf("FAIL cudnn scores %s: %s\n", r.shape, r.message);
            count(ok);
        }
    }
    if (have_cublas) backward_checks(dev, seed);
    if (have_cublas) {
        /* valid shape whose 4.4 TB of scores can't fit: UNSUPPORTED with the bytes, never a crash */
        attnvk_problem huge = {.batch = 1, .heads = 64, .kv_heads = 64, .seq_q = 131072, .seq_kv = 131072, .head_dim = 128, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD};
        attnvk_kernel_options o = {.implementation = "cublas"};
        attnvk_kernel *k = NULL;
        attnvk_status s = attnvk_kernel_prepare(dev, &huge, &o, &k, NULL);
        printf("%s cublas huge scores: %s: %s\n", s == ATTNVK_ERROR_UNSUPPORTED ? "ok  " : "FAIL",
               attnvk_status_name(s), attnvk_last_error());
        count(s == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "bytes"));
        attnvk_kernel_destroy(k);
    }
}

/* ---- timing (--perf): median device time of the large cases ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Times one prepared implementation on uploaded inputs and checks 64 sampled rows. */
static void perf_impl(attnvk_device *dev, const char *impl, const attnvk_problem *p, const float *q, const float *k,
                      const float *v, attnvk_buffer *const io[4], uint64_t seed)
{
    size_t nq = attnvk_q_elements(p), es = attnvk_dtype_size(p->dtype);
    attnvk_kernel *kern = NULL;
    attnvk_kernel_info info;
    attnvk_kernel_options opts = {.implementation = impl};
    attnvk_status s = attnvk_kernel_prepare(dev, p, &opts, &kern, &info);
    enum { WARMUP = 3, RUNS = 15 };
    double times[RUNS];
    for (int r = 0; s == ATTNVK_OK && r < WARMUP + RUNS; ++r) {
        double ms = 0;
        s = attnvk_kernel_run(kern, io[0], io[1], io[2], io[3], NULL, 0, 0, &ms);
        if (r >= WARMUP) times[r - WARMUP] = ms;
    }
    char shape[96];
    snprintf(shape, sizeof shape, "B%d H%d/%d N%d D%d %s %s%s", p->batch, p->heads, p->kv_heads, p->seq_q,
             p->head_dim, attnvk_dtype_name(p->dtype), p->layout == ATTNVK_LAYOUT_BHSD ? "bhsd" : "bshd",
             p->causal ? " causal" : "");
    void *packed = malloc(nq * es);
    float *o = malloc(nq * sizeof(float));
    if (s == ATTNVK_OK) s = attnvk_buffer_read(io[3], 0, packed, nq * es);
    if (s != ATTNVK_OK) {
        printf("%s perf %-7s %s: %s: %s\n", s == ATTNVK_ERROR_UNSUPPORTED ? "skip" : "FAIL", impl, shape,
               attnvk_status_name(s), attnvk_last_error());
        count(s == ATTNVK_ERROR_UNSUPPORTED);
    } else {
        attnvk_unpack(p->dtype, packed, o, nq);
        size_t rows[64], total = (size_t)p->batch * p->heads * p->seq_q;
        for (int i = 0; i < 64; ++i) rows[i] = (size_t)(((uint64_t)i * 2654435761u + seed) % total);
        attnvk_check c = attnvk_check_output(p, q, k, v, o, rows, 64);
        qsort(times, RUNS, sizeof *times, cmp_double);
        double ms = times[RUNS / 2];
        printf("%s perf %-7s %-34s %9.3f ms %7.1f TFLOP/s  rel_l2 %.2e  workspace %llu B  %s\n",
               c.passed ? "ok  " : "FAIL", impl, shape, ms, attnvk_problem_flops(p) / (ms * 1e-3) / 1e12, c.rel_l2,
               (unsigned long long)info.workspace_bytes, info.variant);
        count(c.passed);
    }
    fflush(stdout);
    attnvk_kernel_destroy(kern);
    free(packed), free(o);
}

static void perf_case(attnvk_device *dev, const attnvk_problem *p, uint64_t seed)
{
    size_t n[4] = {attnvk_q_elements(p), attnvk_kv_elements(p), attnvk_kv_elements(p), attnvk_q_elements(p)};
    size_t es = attnvk_dtype_size(p->dtype);
    float *in[3];
    avk_test_inputs(p, seed, &in[0], &in[1], &in[2]);
    void *packed = malloc(n[0] > n[1] ? n[0] * es : n[1] * es);
    attnvk_buffer *io[4] = {NULL, NULL, NULL, NULL};
    attnvk_status s = ATTNVK_OK;
    for (int t = 0; t < 4 && s == ATTNVK_OK; ++t) {
        s = attnvk_buffer_create(dev, n[t] * es, &io[t]);
        if (s == ATTNVK_OK && t < 3) {
            attnvk_pack(p->dtype, in[t], packed, n[t]);
            s = attnvk_buffer_write(io[t], 0, packed, n[t] * es);
        }
    }
    if (s != ATTNVK_OK) {
        printf("FAIL perf inputs: %s\n", attnvk_last_error());
        count(0);
    } else {
        perf_impl(dev, "cudnn", p, in[0], in[1], in[2], io, seed);
        perf_impl(dev, "cublas", p, in[0], in[1], in[2], io, seed);
    }
    for (int t = 0; t < 4; ++t) attnvk_buffer_destroy(io[t]);
    free(in[0]), free(in[1]), free(in[2]), free(packed);
}

static void perf(attnvk_device *dev, uint64_t seed)
{
    /* B*N = 16k tokens, H*D = 2048 (the anchors' shapes), then layout/GQA/bf16 variants */
    static const attnvk_problem big[] = {
        {.batch = 4, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 4, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128, .causal = 1, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 4, .heads = 32, .kv_heads = 32, .seq_q = 4096, .seq_kv = 4096, .head_dim = 64, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 4, .heads = 32, .kv_heads = 32, .seq_q = 4096, .seq_kv = 4096, .head_dim = 64, .causal = 1, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 16, .heads = 16, .kv_heads = 16, .seq_q = 1024, .seq_kv = 1024, .head_dim = 128, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 2, .heads = 16, .kv_heads = 16, .seq_q = 8192, .seq_kv = 8192, .head_dim = 128, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 4, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128, .causal = 0, .scale = 0, .dtype = ATTNVK_BF16, .layout = ATTNVK_LAYOUT_BHSD},
        {.batch = 4, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BSHD},
        {.batch = 4, .heads = 16, .kv_heads = 4, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128, .causal = 1, .scale = 0, .dtype = ATTNVK_BF16, .layout = ATTNVK_LAYOUT_BSHD},
    };
    for (size_t i = 0; i < sizeof big / sizeof *big; ++i) perf_case(dev, &big[i], seed + i);
}

int main(int argc, char **argv)
{
    int perf_only = argc > 1 && !strcmp(argv[1], "--perf-only");
    int want_perf = perf_only || (argc > 1 && !strcmp(argv[1], "--perf"));
    uint64_t seed = avk_test_seed();
    if (!perf_only) host_checks(seed);

    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("FAIL context: %s\n", attnvk_last_error());
        return avk_test_finish(passed, failed + 1);
    }
    const char *reason = NULL;
    if (attnvk_api_status(ctx, ATTNVK_API_CUDA, &reason) != ATTNVK_OK) {
        /* no GPU here: the baselines are simply not offered */
        printf("cuda unavailable (cudnn, cublas not offered): %s\n", reason);
        EXPECT(reason && *reason, "an unavailable API must say why");
    } else {
        attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_CUDA);
        if (!dev) {
            ++failed;
        } else {
            if (!perf_only) device_checks(dev, seed);
            if (want_perf) perf(dev, seed);
            attnvk_device_close(dev);
        }
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
