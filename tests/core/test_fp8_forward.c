/* The FP8 forward's host side (issue #16): q_format's validation (one-line
 * errors), the feature bit and its name, Q's byte size and q_scales in
 * attnvk_kernel_run_tensors, the host convenience's encoding, and the CPU
 * device's fp8 forward (Q decoded with its per-head scales, then run as for an
 * fp8 cache) against the float64 reference on the dequantized inputs (tight:
 * the CPU computes exactly on the decoded values) and on the unquantized ones
 * (e4m3's rounding of Q, K and V: a few percent). Vulkan and OpenCL, which do
 * not declare the feature, answer UNSUPPORTED naming it. Fresh random inputs
 * each run (ATTNVK_TEST_SEED replays one), O poisoned before each run. */
#include "attnvk/attnvk.h"
#include "core/kv_build.h"
#include "core/kv_cache.h"
#include "core/q_format.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* e4m3 rounding of Q, K and V alone is worth ~4.6% rel-L2 on N(0,1) inputs (a float64 simulation) */
#define VS_UNQUANTIZED_BOUND 6e-2

static int passed, failed;

static void tally(int ok) { ok ? ++passed : ++failed; }

static int one_line(void) { return attnvk_last_error()[0] && !strchr(attnvk_last_error(), '\n'); }

static void expect_status(attnvk_status got, attnvk_status want, const char *fragment, const char *what)
{
    const int ok = got == want && (want == ATTNVK_OK || (one_line() && (!fragment || strstr(attnvk_last_error(), fragment))));
    EXPECT(ok, "%s: status %s, message '%s' (want %s, '%s')", what, attnvk_status_name(got), attnvk_last_error(),
           attnvk_status_name(want), fragment ? fragment : "");
    tally(ok);
}

static attnvk_problem fp8_problem(int B, int H, int Hkv, int Nq, int Nk, int D, int causal, attnvk_dtype o_dtype)
{
    attnvk_problem p = {.batch = B, .heads = H, .kv_heads = Hkv, .seq_q = Nq, .seq_kv = Nk, .head_dim = D,
                        .causal = causal, .dtype = o_dtype, .kv_format = ATTNVK_KV_FP8, .q_format = ATTNVK_KV_FP8};
    return p;
}

static void validation(void)
{
    attnvk_problem p = fp8_problem(1, 2, 2, 16, 16, 64, 0, ATTNVK_F16);
    expect_status(attnvk_problem_validate(&p), ATTNVK_OK, NULL, "fp8 forward, f16 O");
    p.dtype = ATTNVK_BF16;
    expect_status(attnvk_problem_validate(&p), ATTNVK_OK, NULL, "fp8 forward, bf16 O");
    p.dtype = ATTNVK_F32;
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "need dtype f16 or bf16", "f32 O");
    p = fp8_problem(1, 2, 2, 16, 16, 64, 0, ATTNVK_F16);
    p.kv_format = ATTNVK_KV_DTYPE;
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "need an fp8 K/V cache", "f16 cache");
    p.kv_format = ATTNVK_KV_Q8_0;
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "got kv format q8_0", "q8_0 cache");
    p = fp8_problem(1, 2, 2, 16, 16, 64, 0, ATTNVK_F16);
    p.q_format = ATTNVK_KV_Q4_0;
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "q format q4_0", "q4_0 queries");
    p.q_format = (attnvk_kv_format)7;
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "unknown q format 7", "q format 7");

    p = fp8_problem(2, 4, 2, 33, 40, 64, 1, ATTNVK_BF16);
    const unsigned f = avk_problem_features(&p);
    int ok = (f & ATTNVK_FEATURE_Q_FP8) && (f & ATTNVK_FEATURE_KV_FP8) &&
             strcmp(avk_feature_name(f), "fp8 queries (the FP8 forward)") == 0 &&
             avk_q_bytes(&p) == attnvk_q_elements(&p) && avk_forward_tolerance(&p) == 5e-2;
    p.q_format = ATTNVK_KV_DTYPE;
    ok = ok && !(avk_problem_features(&p) & ATTNVK_FEATURE_Q_FP8) && avk_q_bytes(&p) == 2 * attnvk_q_elements(&p) &&
         avk_forward_tolerance(&p) == attnvk_tolerance(ATTNVK_BF16);
    EXPECT(ok, "features, feature name, Q's bytes and the tolerance of fp8 queries");
    tally(ok);
}

/* One case's inputs: unquantized (normal), as stored (e4m3 Q and cache) and as the kernel reads them. */
typedef struct fp8_inputs {
    float *q, *k, *v;    /* unquantized */
    unsigned char *q8;   /* Q in e4m3 */
    float *q_scales;     /* [H] */
    avk_kv_host cache;   /* K and V in e4m3, kv_scales, paging */
    float *qd, *kd, *vd; /* dequantized */
    int32_t lens[8];
} fp8_inputs;

static void free_inputs(fp8_inputs *in)
{
    free(in->q), free(in->k), free(in->v), free(in->q8), free(in->q_scales);
    free(in->qd), free(in->kd), free(in->vd);
    avk_kv_host_free(&in->cache);
}

/* p: paging fields set from in->lens when p->page_size > 0. */
static int make_inputs(attnvk_problem *p, uint64_t seed, fp8_inputs *in)
{
    memset(in, 0, sizeof *in);
    for (int b = 0; b < p->batch && b < 8; ++b) in->lens[b] = p->seq_kv - (b * 37) % (p->seq_kv / 2 + 1);
    if (p->page_size > 0) {
        p->max_pages = (p->seq_kv + p->page_size - 1) / p->page_size;
        p->num_pages = avk_kv_pages_needed(p, in->lens);
    }
    const size_t nq = attnvk_q_elements(p), nkv = attnvk_kv_elements(p);
    avk_test_inputs(p, seed, &in->q, &in->k, &in->v);
    in->q8 = malloc(nq);
    in->q_scales = malloc(sizeof(float) * (size_t)p->heads);
    in->qd = malloc(sizeof(float) * nq);
    in->kd = malloc(sizeof(float) * nkv);
    in->vd = malloc(sizeof(float) * nkv);
    if (!in->q8 || !in->q_scales || !in->qd || !in->kd || !in->vd) return 0;
    avk_q_fp8_scales(p, in->q, in->q_scales);
    avk_q_encode(p, in->q, in->q_scales, in->q8);
    avk_q_decode(p, in->q8, in->q_scales, in->qd);
    return avk_kv_build(p, in->k, in->v, p->page_size > 0 ? in->lens : NULL, seed, &in->cache) == ATTNVK_OK &&
           avk_kv_host_decoded(p, &in->cache, in->kd, in->vd) == ATTNVK_OK;
}

static attnvk_status upload(attnvk_device *dev, const void *src, size_t bytes, attnvk_buffer **out)
{
    attnvk_status s = attnvk_buffer_create(dev, bytes ? bytes : 4, out);
    return s == ATTNVK_OK && src ? attnvk_buffer_write(*out, 0, src, bytes) : s;
}

/* The stored inputs through attnvk_kernel_run_tensors, O poisoned; o: f32 in Q's layout. */
static attnvk_status run_tensors(attnvk_device *dev, const attnvk_problem *p, const fp8_inputs *in,
                                 const attnvk_kernel_options *opts, int q_begin, int q_count, float *o,
                                 attnvk_kernel_info *info)
{
    const size_t no = attnvk_o_elements(p), es = attnvk_dtype_size(p->dtype);
    unsigned char *raw = malloc(no * es);
    if (!raw) return ATTNVK_ERROR_OUT_OF_MEMORY;
    memset(raw, 0xff, no * es); /* NaN in f16 and bf16: rows left unwritten show */
    attnvk_tensors t = {0};
    attnvk_kernel *kern = NULL;
    attnvk_status s = attnvk_kernel_prepare(dev, p, opts, &kern, info);
    if (s == ATTNVK_OK) s = upload(dev, in->q8, avk_q_bytes(p), &t.q);
    if (s == ATTNVK_OK) s = upload(dev, in->cache.k, attnvk_kv_bytes(p), &t.k);
    if (s == ATTNVK_OK) s = upload(dev, in->cache.v, attnvk_v_bytes(p), &t.v);
    if (s == ATTNVK_OK) s = upload(dev, raw, no * es, &t.o);
    if (s == ATTNVK_OK) s = upload(dev, in->cache.kv_scales, sizeof(float) * 2 * (size_t)p->kv_heads, &t.kv_scales);
    if (s == ATTNVK_OK) s = upload(dev, in->q_scales, sizeof(float) * (size_t)p->heads, &t.q_scales);
    if (s == ATTNVK_OK && p->page_size > 0)
        s = upload(dev, in->cache.block_table, sizeof(int32_t) * (size_t)p->batch * p->max_pages, &t.block_table);
    if (s == ATTNVK_OK && p->page_size > 0) s = upload(dev, in->cache.seq_lens, sizeof(int32_t) * p->batch, &t.seq_lens);
    if (s == ATTNVK_OK) s = attnvk_kernel_run_tensors(kern, &t, q_begin, q_count, NULL);
    if (s == ATTNVK_OK) s = attnvk_buffer_read(t.o, 0, raw, no * es);
    if (s == ATTNVK_OK) attnvk_unpack(p->dtype, raw, o, no);
    attnvk_kernel_destroy(kern);
    attnvk_buffer *all[] = {t.q, t.k, t.v, t.o, t.kv_scales, t.q_scales, t.block_table, t.seq_lens};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) attnvk_buffer_destroy(all[i]);
    free(raw);
    return s;
}

typedef struct fp8_case {
    const char *label;
    int B, H, Hkv, Nq, Nk, D, causal;
    attnvk_layout layout;
    int page_size;
} fp8_case;

static const fp8_case cases[] = {
    {"d128", 1, 4, 4, 128, 128, 128, 0, ATTNVK_LAYOUT_BHSD, 0},
    {"d128-causal", 2, 2, 2, 256, 256, 128, 1, ATTNVK_LAYOUT_BHSD, 0},
    {"gqa-causal", 1, 8, 2, 130, 200, 128, 1, ATTNVK_LAYOUT_BSHD, 0},
    {"n-not-128", 2, 2, 1, 77, 333, 128, 0, ATTNVK_LAYOUT_BHSD, 0},
    {"d64", 1, 4, 4, 100, 100, 64, 1, ATTNVK_LAYOUT_BSHD, 0},
    {"d256", 1, 2, 1, 64, 96, 256, 1, ATTNVK_LAYOUT_BHSD, 0},
    {"decode-gqa", 3, 8, 2, 1, 300, 128, 0, ATTNVK_LAYOUT_BHSD, 0},
    {"paged16", 2, 4, 2, 40, 150, 64, 1, ATTNVK_LAYOUT_BHSD, 16},
};

/* O against the float64 reference on the dequantized inputs (what the kernel read) and on the unquantized ones */
static void errors(const attnvk_problem *p, const fp8_inputs *in, const float *o, attnvk_check *dequantized,
                   attnvk_check *unquantized)
{
    const int32_t *lens = p->page_size > 0 ? in->lens : NULL;
    const attnvk_host_inputs read = {.q = in->qd, .k = in->kd, .v = in->vd, .kv_lens = lens};
    const attnvk_host_inputs given = {.q = in->q, .k = in->k, .v = in->v, .kv_lens = lens};
    *dequantized = attnvk_check_output_inputs(p, &read, o, NULL, 0);
    *unquantized = attnvk_check_output_inputs(p, &given, o, NULL, 0);
}

/* The CPU's flash-f32 and reference-f64 on every case in f16 and bf16 O: exact arithmetic on the
 * decoded values, so within O's own rounding (the dtype's tolerance) of the dequantized reference */
static void cpu_cases(attnvk_device *cpu, uint64_t seed)
{
    static const char *const variants[] = {"flash-f32", "reference-f64"};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c)
        for (int dt = 0; dt < 2; ++dt)
            for (int var = 0; var < 2; ++var) {
                const fp8_case *fc = &cases[c];
                attnvk_problem p = fp8_problem(fc->B, fc->H, fc->Hkv, fc->Nq, fc->Nk, fc->D, fc->causal,
                                               dt ? ATTNVK_BF16 : ATTNVK_F16);
                p.layout = fc->layout;
                p.page_size = fc->page_size;
                fp8_inputs in;
                const uint64_t s = seed + c * 7 + (uint64_t)dt;
                float *o = malloc(sizeof(float) * attnvk_o_elements(&p));
                int ok = make_inputs(&p, s, &in) && o;
                const attnvk_kernel_options opts = {.variant = variants[var]};
                attnvk_kernel_info info;
                attnvk_status st = ok ? run_tensors(cpu, &p, &in, &opts, 0, 0, o, &info) : ATTNVK_ERROR_OUT_OF_MEMORY;
                attnvk_check dq = {0}, uq = {0};
                if (st == ATTNVK_OK) errors(&p, &in, o, &dq, &uq);
                const double tight = attnvk_tolerance(p.dtype);
                ok = st == ATTNVK_OK && dq.nonfinite == 0 && dq.rel_l2 <= tight && uq.rel_l2 <= VS_UNQUANTIZED_BOUND &&
                     uq.rel_l2 > dq.rel_l2;
                printf("%s %-12s %-13s %s: rel_l2 vs dequantized %.2e (bound %.0e), vs unquantized %.2e (bound %.0e)%s%s\n",
                       ok ? "ok  " : "FAIL", fc->label, variants[var], attnvk_dtype_name(p.dtype), dq.rel_l2, tight,
                       uq.rel_l2, VS_UNQUANTIZED_BOUND, st == ATTNVK_OK ? "" : ": ",
                       st == ATTNVK_OK ? "" : attnvk_last_error());
                tally(ok);
                free(o);
                free_inputs(&in);
            }
}

/* A query-row range: the rows inside checked, the rows outside left as poisoned */
static void cpu_row_range(attnvk_device *cpu, uint64_t seed)
{
    attnvk_problem p = fp8_problem(2, 4, 2, 100, 120, 64, 1, ATTNVK_F16);
    fp8_inputs in;
    const size_t no = attnvk_o_elements(&p);
    float *o = malloc(sizeof(float) * no);
    int ok = make_inputs(&p, seed ^ 0x7a9e, &in) && o;
    attnvk_kernel_info info;
    const attnvk_kernel_options opts = {0};
    ok = ok && run_tensors(cpu, &p, &in, &opts, 30, 41, o, &info) == ATTNVK_OK;
    size_t bad = 0;
    double diff2 = 0, ref2 = 0;
    float *ref = malloc(sizeof(float) * no);
    if (ok && ref) {
        attnvk_reference(&p, in.qd, in.kd, in.vd, ref, NULL);
        for (int b = 0; b < p.batch; ++b)
            for (int h = 0; h < p.heads; ++h)
                for (int i = 0; i < p.seq_q; ++i)
                    for (int d = 0; d < p.head_dim; ++d) {
                        const size_t e = (((size_t)b * p.heads + h) * p.seq_q + i) * p.head_dim + d;
                        if (i < 30 || i >= 71) bad += !isnan(o[e]);
                        else diff2 += ((double)o[e] - ref[e]) * ((double)o[e] - ref[e]), ref2 += (double)ref[e] * ref[e];
                    }
    }
    const double rel = ref2 > 0 ? sqrt(diff2 / ref2) : INFINITY;
    ok = ok && ref && bad == 0 && rel <= attnvk_tolerance(p.dtype);
    printf("%s rows 30..70 of 100: rel_l2 vs dequantized %.2e, %zu values outside the range written\n",
           ok ? "ok  " : "FAIL", rel, bad);
    tally(ok);
    free(ref);
    free(o);
    free_inputs(&in);
}

/* attnvk_kernel_run_tensors' checks of fp8 queries' buffers: one line each */
static void run_checks(attnvk_device *cpu, uint64_t seed)
{
    attnvk_problem p = fp8_problem(1, 4, 2, 32, 48, 64, 0, ATTNVK_F16);
    fp8_inputs in;
    attnvk_kernel *kern = NULL;
    attnvk_tensors t = {0};
    const size_t nq = attnvk_q_elements(&p);
    attnvk_buffer *short_q = NULL, *short_scales = NULL;
    int ok = make_inputs(&p, seed ^ 0xc4ec, &in) && attnvk_kernel_prepare(cpu, &p, NULL, &kern, NULL) == ATTNVK_OK &&
             upload(cpu, in.q8, nq, &t.q) == ATTNVK_OK && upload(cpu, in.cache.k, attnvk_kv_bytes(&p), &t.k) == ATTNVK_OK &&
             upload(cpu, in.cache.v, attnvk_v_bytes(&p), &t.v) == ATTNVK_OK &&
             upload(cpu, NULL, attnvk_o_elements(&p) * 2, &t.o) == ATTNVK_OK &&
             upload(cpu, in.cache.kv_scales, sizeof(float) * 2 * p.kv_heads, &t.kv_scales) == ATTNVK_OK &&
             upload(cpu, NULL, nq - 1, &short_q) == ATTNVK_OK &&
             upload(cpu, in.q_scales, sizeof(float) * (p.heads - 1), &short_scales) == ATTNVK_OK;
    EXPECT(ok, "setup: %s", attnvk_last_error());
    if (ok) {
        expect_status(attnvk_kernel_run_tensors(kern, &t, 0, 0, NULL), ATTNVK_ERROR_INVALID_ARGUMENT,
                      "needs a q scales buffer (16 bytes)", "no q_scales");
        t.q_scales = short_scales;
        expect_status(attnvk_kernel_run_tensors(kern, &t, 0, 0, NULL), ATTNVK_ERROR_INVALID_ARGUMENT,
                      "the q scales buffer holds 12 bytes; it needs 16", "short q_scales");
        attnvk_buffer *q = t.q;
        t.q = short_q;
        expect_status(attnvk_kernel_run_tensors(kern, &t, 0, 0, NULL), ATTNVK_ERROR_INVALID_ARGUMENT,
                      "Q/O buffers need 8192/16384 bytes", "Q one byte short (fp8: a byte an element)");
        t.q = q;
        attnvk_buffer_destroy(short_scales);
        short_scales = NULL;
        ok = upload(cpu, in.q_scales, sizeof(float) * p.heads, &t.q_scales) == ATTNVK_OK;
        expect_status(ok ? attnvk_kernel_run_tensors(kern, &t, 0, 0, NULL) : ATTNVK_ERROR_OUT_OF_MEMORY, ATTNVK_OK,
                      NULL, "exact sizes");
    }
    attnvk_kernel_destroy(kern);
    attnvk_buffer *all[] = {t.q, t.k, t.v, t.o, t.kv_scales, t.q_scales, short_q, short_scales};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) attnvk_buffer_destroy(all[i]);
    free_inputs(&in);
}

/* attnvk_attention_host encodes Q (a scale per query head) and the cache (a scale per kv head) itself */
static void host_convenience(attnvk_device *cpu, uint64_t seed)
{
    attnvk_problem p = fp8_problem(2, 4, 2, 70, 90, 128, 1, ATTNVK_BF16);
    fp8_inputs in;
    float *o = malloc(sizeof(float) * attnvk_o_elements(&p));
    int ok = make_inputs(&p, seed ^ 0x4057, &in) && o; /* the same scales: from each head's largest magnitude */
    attnvk_status s = ok ? attnvk_attention_host(cpu, &p, NULL, in.q, in.k, in.v, o, NULL, NULL, NULL)
                         : ATTNVK_ERROR_OUT_OF_MEMORY;
    attnvk_check dq = {0}, uq = {0};
    if (s == ATTNVK_OK) errors(&p, &in, o, &dq, &uq);
    ok = s == ATTNVK_OK && dq.nonfinite == 0 && dq.rel_l2 <= attnvk_tolerance(p.dtype) &&
         uq.rel_l2 <= VS_UNQUANTIZED_BOUND;
    printf("%s attnvk_attention_host: rel_l2 vs dequantized %.2e, vs unquantized %.2e%s%s\n", ok ? "ok  " : "FAIL",
           dq.rel_l2, uq.rel_l2, s == ATTNVK_OK ? "" : ": ", s == ATTNVK_OK ? "" : attnvk_last_error());
    tally(ok);
    /* a paged cache still takes attnvk_kernel_run_tensors */
    p.page_size = 16;
    p.max_pages = (p.seq_kv + 15) / 16;
    p.num_pages = p.batch * p.max_pages;
    expect_status(attnvk_attention_host(cpu, &p, NULL, in.q, in.k, in.v, o, NULL, NULL, NULL),
                  ATTNVK_ERROR_INVALID_ARGUMENT, "attnvk_kernel_run_tensors", "host convenience, paged");
    free(o);
    free_inputs(&in);
}

/* Every implementation that does not declare fp8 queries refuses them once, naming the feature */
static void refusals(attnvk_context *ctx, attnvk_api api)
{
    attnvk_device *dev = avk_test_open_api(ctx, api);
    if (!dev) {
        printf("skip %s: no device\n", attnvk_api_name(api));
        return;
    }
    attnvk_problem p = fp8_problem(1, 2, 2, 64, 64, 128, 1, ATTNVK_F16);
    attnvk_impl_info impls[16];
    const int n = attnvk_device_implementations(dev, impls, 16);
    for (int i = 0; i < n && i < 16; ++i) {
        if (impls[i].features & ATTNVK_FEATURE_Q_FP8) continue;
        const attnvk_kernel_options opts = {.implementation = impls[i].name};
        attnvk_kernel *k = NULL;
        char what[96];
        snprintf(what, sizeof what, "%.31s on %.16s", impls[i].name, attnvk_api_name(api));
        expect_status(attnvk_kernel_prepare(dev, &p, &opts, &k, NULL), ATTNVK_ERROR_UNSUPPORTED,
                      "does not support fp8 queries (the FP8 forward)", what);
        printf("%s %s: %s\n", k ? "FAIL" : "ok  ", what, attnvk_last_error());
        attnvk_kernel_destroy(k);
    }
    attnvk_device_close(dev);
}

int main(void)
{
    const uint64_t seed = avk_test_seed();
    validation();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("FAIL context: %s\n", attnvk_last_error());
        return avk_test_finish(passed, failed + 1);
    }
    attnvk_device *cpu = avk_test_open_api(ctx, ATTNVK_API_CPU);
    if (cpu) {
        cpu_cases(cpu, seed);
        cpu_row_range(cpu, seed);
        run_checks(cpu, seed);
        host_convenience(cpu, seed);
        attnvk_device_close(cpu);
    } else {
        ++failed;
    }
    refusals(ctx, ATTNVK_API_CPU); /* openblas */
    refusals(ctx, ATTNVK_API_VULKAN);
    refusals(ctx, ATTNVK_API_OPENCL);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
