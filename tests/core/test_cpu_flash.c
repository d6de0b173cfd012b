/* The CPU device's own kernels against the float64 reference (issue #14):
 * attnvk's f32 flash kernel (cpu/cpu_flash.c) on every feature and
 * combinations of them, in f32, f16 and bf16, on each instruction set this
 * host runs; the OpenBLAS unfused baseline (cpu/cpu_openblas.c) on a few
 * cases and its refusals; the host FMA peak. Fresh random inputs every run
 * (ATTNVK_TEST_SEED replays one), O and LSE poisoned with NaN before each
 * run, every row in the run's range checked (rel-L2 by dtype, NaN never
 * passes, LSE too), rows outside the range untouched. */
#include "attnvk/attnvk.h"
#include "core/kv_build.h"
#include "core/kv_cache.h"
#include "core/score_cases.h"
#include "cpu/cpu_flash.h"
#include "cpu/cpu_peak.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct tcase {
    const char *label;
    attnvk_problem p;
    int32_t lens[4]; /* seq_lens cycled over the batch (paged or ragged) */
    int nlens;
    int q_begin, q_count; /* 0, 0: every row */
} tcase;

enum { FLASH = 0, OPENBLAS = 1 };

static attnvk_problem shape(int B, int H, int Hkv, int Nq, int Nk, int D)
{
    attnvk_problem p = {.batch = B, .heads = H, .kv_heads = Hkv, .seq_q = Nq, .seq_kv = Nk, .head_dim = D};
    return p;
}

static void describe(const attnvk_problem *p, char *out, size_t n)
{
    snprintf(out, n, "B%d H%d/%d Nq%d Nk%d D%d/%d %s %s%s%s kv=%s page=%d%s%s%s%s%s", p->batch, p->heads,
             p->kv_heads, p->seq_q, p->seq_kv, p->head_dim, attnvk_problem_head_dim_v(p), attnvk_dtype_name(p->dtype),
             p->layout == ATTNVK_LAYOUT_BHSD ? "bhsd" : "bshd", p->causal ? " causal" : "",
             p->align == ATTNVK_ALIGN_TOP_LEFT ? " top-left" : "", attnvk_kv_format_name(p->kv_format), p->page_size,
             p->softcap > 0 ? " softcap" : "", p->window ? " window" : "", p->alibi ? " alibi" : "",
             p->sinks ? " sinks" : "", p->mask ? (p->mask_dtype == ATTNVK_F16 ? " mask-f16" : " mask") : "");
}

/* Runs c through the flash kernel or OpenBLAS on host buffers and checks it; 1 on pass. */
static int run_direct(const tcase *c, attnvk_dtype dtype, int impl, uint64_t seed)
{
    attnvk_problem p = c->p;
    p.dtype = dtype;
    int32_t lens[64];
    for (int b = 0; b < p.batch && b < 64; ++b) lens[b] = c->nlens ? c->lens[b % c->nlens] : p.seq_kv;
    const int has_lens = avk_problem_has_seq_lens(&p);
    if (p.page_size > 0) {
        p.max_pages = (p.seq_kv + p.page_size - 1) / p.page_size;
        p.num_pages = avk_kv_pages_needed(&p, lens);
    }
    char desc[256];
    describe(&p, desc, sizeof desc);
    const char *who = impl == FLASH ? "flash" : "openblas";
    if (attnvk_problem_validate(&p) != ATTNVK_OK) {
        printf("FAIL %-8s %-34s %s: invalid problem: %s\n", who, c->label, desc, attnvk_last_error());
        return 0;
    }
    const int Dv = attnvk_problem_head_dim_v(&p);
    const size_t nq = attnvk_q_elements(&p), no = attnvk_o_elements(&p), es = attnvk_dtype_size(dtype);
    const size_t nlse = (size_t)p.batch * p.heads * p.seq_q;
    const size_t nmask = p.mask ? (size_t)p.mask_batch * p.mask_heads * p.seq_q * (size_t)p.seq_kv : 0;
    float *q, *k, *v;
    avk_test_inputs(&p, seed, &q, &k, &v);
    float *kd = malloc(sizeof(float) * (attnvk_kv_elements(&p) + 1)), *vd = malloc(sizeof(float) * (attnvk_v_elements(&p) + 1));
    float *o = malloc(sizeof(float) * no), *oref = malloc(sizeof(float) * no), *lse = malloc(sizeof(float) * nlse);
    float *lseref = malloc(sizeof(float) * nlse), *mask = malloc(sizeof(float) * (nmask + 1));
    float *sinks = malloc(sizeof(float) * p.heads), *slopes = malloc(sizeof(float) * p.heads);
    void *qbuf = malloc(nq * es), *obuf = malloc(no * es), *maskbuf = malloc((nmask + 1) * sizeof(float));
    avk_kv_host kv;
    memset(&kv, 0, sizeof kv);
    int ok = kd && vd && o && oref && lse && lseref && mask && sinks && slopes && qbuf && obuf && maskbuf &&
             avk_kv_build(&p, k, v, has_lens ? lens : NULL, seed, &kv) == ATTNVK_OK &&
             avk_kv_host_decoded(&p, &kv, kd, vd) == ATTNVK_OK;
    if (!ok) {
        printf("FAIL %-8s %-34s %s: setup: %s\n", who, c->label, desc, attnvk_last_error());
        goto done;
    }
    attnvk_fill_random(mask, nmask, seed ^ 0x6d61736bu);
    uint64_t st = seed | 1;
    for (size_t i = 0; i < nmask; ++i) { /* 10% -inf */
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        if ((st >> 33) % 10 == 0) mask[i] = -INFINITY;
    }
    attnvk_round_to_dtype(p.mask_dtype, mask, nmask);
    if (p.mask) attnvk_pack(p.mask_dtype, mask, maskbuf, nmask);
    attnvk_fill_random(sinks, (size_t)p.heads, seed ^ 0x73696e6bu);
    attnvk_alibi_slopes(p.heads, slopes);
    attnvk_pack(dtype, q, qbuf, nq);
    memset(obuf, 0xff, no * es); /* NaN in f32, f16 and bf16 */
    for (size_t i = 0; i < nlse; ++i) lse[i] = NAN;
    const int q_begin = c->q_count ? c->q_begin : 0, q_count = c->q_count ? c->q_count : p.seq_q;
    avk_cpu_job job = {.p = &p, .q = qbuf, .k = kv.k, .v = kv.v, .o = obuf, .lse = lse,
                       .block_table = kv.block_table, .seq_lens = kv.seq_lens, .kv_scales = kv.kv_scales,
                       .mask = p.mask ? maskbuf : NULL, .sinks = p.sinks ? sinks : NULL,
                       .alibi_slopes = p.alibi ? slopes : NULL, .q_begin = q_begin, .q_count = q_count};
    attnvk_status s = impl == FLASH ? avk_cpu_flash_run(&job) : avk_openblas_run(&job);
    if (s != ATTNVK_OK) {
        printf("FAIL %-8s %-34s %s: %s: %s\n", who, c->label, desc, attnvk_status_name(s), attnvk_last_error());
        ok = 0;
        goto done;
    }
    attnvk_unpack(dtype, obuf, o, no);
    attnvk_host_inputs in = {.q = q, .k = kd, .v = vd, .kv_lens = has_lens ? lens : NULL,
                             .mask = p.mask ? mask : NULL, .sinks = p.sinks ? sinks : NULL,
                             .alibi_slopes = p.alibi ? slopes : NULL};
    attnvk_reference_inputs(&p, &in, oref, lseref);
    double num = 0, den = 0, lse_err = 0;
    size_t nonfinite = 0, touched = 0, lse_bad = 0;
    for (int b = 0; b < p.batch; ++b)
        for (int h = 0; h < p.heads; ++h)
            for (int i = 0; i < p.seq_q; ++i) {
                const int inside = i >= q_begin && i < q_begin + q_count;
                const size_t li = ((size_t)b * p.heads + h) * p.seq_q + i;
                for (int d = 0; d < Dv; ++d) {
                    const size_t e = p.layout == ATTNVK_LAYOUT_BHSD ? li * Dv + d
                                                                     : (((size_t)b * p.seq_q + i) * p.heads + h) * Dv + d;
                    if (!inside) {
                        touched += !isnan(o[e]);
                        continue;
                    }
                    if (!isfinite(o[e])) ++nonfinite;
                    num += ((double)o[e] - oref[e]) * ((double)o[e] - oref[e]);
                    den += (double)oref[e] * oref[e];
                }
                if (!inside) {
                    touched += !isnan(lse[li]);
                } else if (isinf(lseref[li]) || isinf(lse[li])) {
                    lse_bad += lse[li] != lseref[li];
                } else {
                    const double err = fabs((double)lse[li] - lseref[li]) / (1.0 + fabs((double)lseref[li]));
                    lse_bad += !(err <= 1e-4); /* NaN fails */
                    if (err > lse_err) lse_err = err;
                }
            }
    const double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    ok = nonfinite == 0 && touched == 0 && lse_bad == 0 && rel <= attnvk_tolerance(dtype);
    printf("%s %-8s %-34s %s: rel_l2 %.2e lse %.1e nonfinite %zu lse_bad %zu outside_written %zu\n",
           ok ? "ok  " : "FAIL", who, c->label, desc, rel, lse_err, nonfinite, lse_bad, touched);
done:
    fflush(stdout);
    avk_kv_host_free(&kv);
    free(q), free(k), free(v), free(kd), free(vd), free(o), free(oref), free(lse), free(lseref), free(mask);
    free(sinks), free(slopes), free(qbuf), free(obuf), free(maskbuf);
    return ok;
}

/* every feature and combinations of them */
static int flash_cases(tcase *t, int max)
{
    int n = 0;
#define ADD(lbl) (t[n] = (tcase){.label = lbl}, &t[n++])
    tcase *c;
    c = ADD("plain");
    c->p = shape(2, 4, 4, 100, 150, 64);
    c = ADD("causal bshd Nq=3");
    c->p = shape(2, 2, 1, 3, 70, 64), c->p.causal = 1, c->p.layout = ATTNVK_LAYOUT_BSHD;
    c = ADD("causal 1000 D128 (many tiles)");
    c->p = shape(1, 2, 1, 1000, 1000, 128), c->p.causal = 1;
    c = ADD("D40 and odd lengths");
    c->p = shape(1, 3, 3, 37, 131, 40);
    c = ADD("D72 causal bshd");
    c->p = shape(2, 2, 2, 45, 45, 72), c->p.causal = 1, c->p.layout = ATTNVK_LAYOUT_BSHD;
    c = ADD("D256 Nq<Nk causal");
    c->p = shape(1, 2, 2, 20, 260, 256), c->p.causal = 1;
    c = ADD("softcap+window+sinks causal");
    c->p = shape(2, 4, 2, 70, 130, 64), c->p.causal = 1, c->p.softcap = 10, c->p.window = 1, c->p.window_left = 24,
    c->p.window_right = -1, c->p.sinks = 1;
    c = ADD("mask+alibi (batch-broadcast f32)");
    c->p = shape(2, 4, 2, 33, 77, 64), c->p.alibi = 1, c->p.mask = 1, c->p.mask_batch = 1, c->p.mask_heads = 4,
    c->p.mask_dtype = ATTNVK_F32;
    c = ADD("mask f16 [Nq,Nk]+alibi causal bshd");
    c->p = shape(2, 4, 4, 50, 64, 32), c->p.causal = 1, c->p.alibi = 1, c->p.mask = 1, c->p.mask_batch = 1,
    c->p.mask_heads = 1, c->p.mask_dtype = ATTNVK_F16, c->p.layout = ATTNVK_LAYOUT_BSHD;
    c = ADD("mask per batch+head f32 sinks");
    c->p = shape(2, 2, 1, 17, 40, 64), c->p.mask = 1, c->p.mask_batch = 2, c->p.mask_heads = 2,
    c->p.mask_dtype = ATTNVK_F32, c->p.sinks = 1;
    c = ADD("Dk192/Dv128 causal (MLA)");
    c->p = shape(1, 4, 2, 90, 90, 192), c->p.head_dim_v = 128, c->p.causal = 1;
    c = ADD("Dk576/Dv512 decode (MLA)");
    c->p = shape(1, 8, 1, 1, 150, 576), c->p.head_dim_v = 512;
    c = ADD("top-left causal Nq>Nk");
    c->p = shape(1, 2, 1, 150, 60, 64), c->p.causal = 1, c->p.align = ATTNVK_ALIGN_TOP_LEFT;
    c = ADD("top-left causal Nq<Nk window+alibi");
    c->p = shape(1, 2, 2, 40, 200, 64), c->p.causal = 1, c->p.align = ATTNVK_ALIGN_TOP_LEFT, c->p.window = 1,
    c->p.window_left = 16, c->p.window_right = 4, c->p.alibi = 1;
    c = ADD("window both sides no causal");
    c->p = shape(1, 2, 2, 64, 64, 128), c->p.window = 1, c->p.window_left = 5, c->p.window_right = 3;
    c = ADD("GQA 1 causal");
    c->p = shape(1, 6, 6, 37, 129, 64), c->p.causal = 1;
    c = ADD("GQA 5 causal");
    c->p = shape(2, 10, 2, 37, 129, 64), c->p.causal = 1;
    c = ADD("GQA 8 causal bshd");
    c->p = shape(1, 16, 2, 37, 129, 64), c->p.causal = 1, c->p.layout = ATTNVK_LAYOUT_BSHD;
    c = ADD("GQA 128 decode");
    c->p = shape(1, 128, 1, 1, 77, 64);
    c = ADD("decode Nq=1 ragged 0/1/333");
    c->p = shape(3, 8, 2, 1, 333, 128), c->p.causal = 1, c->p.ragged = 1, c->lens[0] = 0, c->lens[1] = 1,
    c->lens[2] = 333, c->nlens = 3;
    c = ADD("paged 16 ragged incl 0 causal");
    c->p = shape(4, 4, 2, 5, 100, 64), c->p.causal = 1, c->p.page_size = 16, c->lens[0] = 0, c->lens[1] = 17,
    c->lens[2] = 100, c->lens[3] = 64, c->nlens = 4;
    c = ADD("paged 32 q8_0 prefill causal");
    c->p = shape(2, 8, 2, 20, 150, 128), c->p.causal = 1, c->p.page_size = 32, c->p.kv_format = ATTNVK_KV_Q8_0,
    c->lens[0] = 150, c->lens[1] = 71, c->nlens = 2;
    c = ADD("q4_0 decode");
    c->p = shape(2, 8, 1, 1, 300, 64), c->p.kv_format = ATTNVK_KV_Q4_0;
    c = ADD("q4_0 paged 7 ragged prefill bshd");
    c->p = shape(2, 4, 4, 9, 60, 32), c->p.page_size = 7, c->p.kv_format = ATTNVK_KV_Q4_0, c->lens[0] = 60,
    c->lens[1] = 0, c->nlens = 2, c->p.causal = 1;
    c = ADD("fp8 paged 16 GQA8 decode window+sinks");
    c->p = shape(3, 16, 2, 1, 200, 128), c->p.page_size = 16, c->p.kv_format = ATTNVK_KV_FP8, c->p.window = 1,
    c->p.window_left = 50, c->p.window_right = -1, c->p.sinks = 1, c->lens[0] = 200, c->lens[1] = 3,
    c->lens[2] = 129, c->nlens = 3;
    c = ADD("fp8 contiguous prefill softcap");
    c->p = shape(1, 4, 2, 64, 130, 64), c->p.kv_format = ATTNVK_KV_FP8, c->p.softcap = 20, c->p.causal = 1;
    c = ADD("row range q 10..40");
    c->p = shape(2, 4, 2, 64, 96, 64), c->p.causal = 1, c->q_begin = 10, c->q_count = 30;
    c = ADD("all of them, ragged bshd");
    c->p = shape(2, 4, 2, 24, 48, 64), c->p.causal = 1, c->p.softcap = 20, c->p.window = 1, c->p.window_left = 12,
    c->p.window_right = -1, c->p.alibi = 1, c->p.sinks = 1, c->p.mask = 1, c->p.mask_batch = 1, c->p.mask_heads = 1,
    c->p.mask_dtype = ATTNVK_F32, c->p.layout = ATTNVK_LAYOUT_BSHD, c->p.ragged = 1, c->lens[0] = 48,
    c->lens[1] = 30, c->nlens = 2;
    c = ADD("fully masked rows (window past len)");
    c->p = shape(2, 2, 2, 30, 40, 64), c->p.ragged = 1, c->p.window = 1, c->p.window_left = 2,
    c->p.window_right = -1, c->p.causal = 1, c->lens[0] = 5, c->lens[1] = 40, c->nlens = 2, c->p.sinks = 1;
#undef ADD
    (void)max;
    return n;
}

static int openblas_cases(tcase *t)
{
    int n = 0;
    t[n++] = (tcase){.label = "plain", .p = shape(2, 4, 4, 100, 150, 64)};
    t[n] = (tcase){.label = "causal GQA 4 bshd", .p = shape(1, 8, 2, 130, 130, 128)};
    t[n].p.causal = 1, t[n++].p.layout = ATTNVK_LAYOUT_BSHD;
    t[n] = (tcase){.label = "softcap+window+sinks+mask+alibi", .p = shape(2, 4, 2, 40, 70, 64)};
    t[n].p.causal = 1, t[n].p.softcap = 15, t[n].p.window = 1, t[n].p.window_left = 20, t[n].p.window_right = -1;
    t[n].p.sinks = 1, t[n].p.alibi = 1, t[n].p.mask = 1, t[n].p.mask_batch = 2, t[n].p.mask_heads = 1;
    t[n++].p.mask_dtype = ATTNVK_F16;
    t[n] = (tcase){.label = "Dk192/Dv128 causal", .p = shape(1, 2, 1, 70, 70, 192)};
    t[n].p.head_dim_v = 128, t[n++].p.causal = 1;
    t[n] = (tcase){.label = "top-left Nq>Nk ragged incl 0", .p = shape(3, 2, 2, 50, 30, 64)};
    t[n].p.causal = 1, t[n].p.align = ATTNVK_ALIGN_TOP_LEFT, t[n].p.ragged = 1;
    t[n].lens[0] = 30, t[n].lens[1] = 0, t[n].lens[2] = 11, t[n++].nlens = 3;
    t[n++] = (tcase){.label = "decode Nq=1", .p = shape(2, 8, 1, 1, 500, 128)};
    t[n] = (tcase){.label = "row range", .p = shape(1, 2, 2, 64, 64, 64), .q_begin = 7, .q_count = 20};
    t[n++].p.causal = 1;
    return n;
}

/* the public path: the device's default kernel is flash-f32; reference-f64 stays selectable; the wrong kernel fails */
static int device_checks(attnvk_device *dev, uint64_t seed, int *failed)
{
    int passed = 0;
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    attnvk_kernel_options flash = {.variant = "flash-f32"};
    for (int d = 0; d < 3; ++d) {
        attnvk_problem cases[64];
        const char *labels[64];
        int n = avk_test_feature_cases(dtypes[d], cases, labels, 64);
        for (int i = 0; i < n; ++i) {
            const int ok = avk_test_run_case(dev, &cases[i], NULL, labels[i], seed + (uint64_t)i, 0);
            passed += ok, *failed += !ok;
        }
        avk_score_case sc[32];
        n = avk_score_cases(dtypes[d], sc, 32);
        for (int i = 0; i < n; ++i) {
            avk_score_result r;
            attnvk_status s = avk_score_case_run(dev, &sc[i], &flash, seed + 100 + (uint64_t)i, &r);
            const int ok = s == ATTNVK_OK && r.check.passed && strcmp(r.info.variant, "flash-f32") == 0;
            printf("%s score  %-30s %s: %s rel_l2 %.2e %s\n", ok ? "ok  " : "FAIL", sc[i].label, r.shape,
                   r.info.variant, r.check.rel_l2, r.message);
            passed += ok, *failed += !ok;
        }
        avk_cache_case cc[64];
        n = avk_cache_cases(dtypes[d], cc, 64);
        for (int i = 0; i < n; ++i) {
            avk_cache_result r;
            attnvk_status s = avk_cache_case_run(dev, &cc[i], &flash, seed + 200 + (uint64_t)i, &r);
            const int ok = s == ATTNVK_OK && r.check.passed;
            printf("%s cache  %-30s %s: rel_l2 %.2e %s\n", ok ? "ok  " : "FAIL", cc[i].label, r.shape,
                   r.check.rel_l2, r.message);
            passed += ok, *failed += !ok;
        }
    }
    /* defaults and names */
    attnvk_problem p = shape(1, 2, 2, 16, 200, 32);
    p.dtype = ATTNVK_F32;
    attnvk_kernel *k = NULL;
    attnvk_kernel_info info;
    int ok = attnvk_kernel_prepare(dev, &p, NULL, &k, &info) == ATTNVK_OK && strcmp(info.implementation, "attnvk") == 0 &&
             strcmp(info.variant, "flash-f32") == 0 && strcmp(attnvk_device_info_of(dev)->default_variant, "flash-f32") == 0;
    EXPECT(ok, "the cpu device's default kernel is attnvk flash-f32 (got %s %s)", info.implementation, info.variant);
    attnvk_kernel_destroy(k);
    passed += ok;
    attnvk_kernel_options ref = {.variant = "reference-f64"};
    k = NULL;
    ok = attnvk_kernel_prepare(dev, &p, &ref, &k, &info) == ATTNVK_OK && strcmp(info.variant, "reference-f64") == 0;
    EXPECT(ok, "reference-f64 stays selectable");
    attnvk_kernel_destroy(k);
    passed += ok;
    /* the deliberately wrong kernel (skips the last 64 visible keys of every row) is caught */
    attnvk_kernel_options wrong = {.test_flags = ATTNVK_TEST_SKIP_LAST_KV_TILE};
    float *q, *kk, *v;
    avk_test_inputs(&p, seed, &q, &kk, &v);
    float *o = malloc(attnvk_o_elements(&p) * sizeof(float));
    ok = o && attnvk_attention_host(dev, &p, &wrong, q, kk, v, o, NULL, &info, NULL) == ATTNVK_OK &&
         strcmp(info.variant, "flash-f32") == 0;
    attnvk_check c = ok ? attnvk_check_output(&p, q, kk, v, o, NULL, 0) : (attnvk_check){0};
    ok = ok && !c.passed && c.rel_l2 > 1e-2;
    EXPECT(ok, "ATTNVK_TEST_SKIP_LAST_KV_TILE makes flash-f32 wrong (rel %g)", c.rel_l2);
    passed += ok;
    free(q), free(kk), free(v), free(o);
    return passed;
}

int main(void)
{
    const uint64_t seed = avk_test_seed();
    int passed = 0, failed = 0;
    static tcase cases[64], blas[16];
    const int n = flash_cases(cases, 64), nb = openblas_cases(blas);
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};

    /* the widest instruction set, then the narrower ones this host runs (ATTNVK_CPU_ISA is read once) */
    printf("cpu kernel isa: %s\n", avk_cpu_flash_isa());
    for (int d = 0; d < 3; ++d)
        for (int i = 0; i < n; ++i) {
            const int ok = run_direct(&cases[i], dtypes[d], FLASH, seed + (uint64_t)(d * 1000 + i));
            passed += ok, failed += !ok;
        }

    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) == ATTNVK_OK) {
        attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_CPU);
        if (dev) {
            passed += device_checks(dev, seed, &failed);
            attnvk_device_close(dev);
        } else {
            ++failed;
        }
        attnvk_context_destroy(ctx);
    } else {
        EXPECT(0, "context: %s", attnvk_last_error());
    }

    /* OpenBLAS: runs when libopenblas.so.0 loads, else says why; f16 and paged caches are refused */
    const char *why = "";
    if (avk_openblas_available(&why)) {
        printf("openblas: %s\n", avk_openblas_config());
        for (int i = 0; i < nb; ++i) {
            const int ok = run_direct(&blas[i], ATTNVK_F32, OPENBLAS, seed + 5000 + (uint64_t)i);
            passed += ok, failed += !ok;
        }
        attnvk_problem p = shape(1, 2, 2, 8, 8, 64);
        p.dtype = ATTNVK_F16;
        int ok = avk_openblas_check(&p) == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "f32 only");
        p.dtype = ATTNVK_F32, p.page_size = 16, p.num_pages = 1, p.max_pages = 1;
        ok = ok && avk_openblas_check(&p) == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "paged");
        EXPECT(ok, "openblas refuses f16 and paged caches with the reason");
        passed += ok;
    } else {
        printf("skip openblas: %s\n", why);
    }
    /* a missing library is a reason, not a failure */
    avk_openblas_unload();
    setenv("ATTNVK_OPENBLAS_LIBRARY", "/nonexistent/libopenblas.so.0", 1);
    int ok = !avk_openblas_available(&why) && strstr(why, "cannot load") != NULL;
    avk_cpu_job job = {.p = &blas[0].p, .q_count = 1};
    ok = ok && avk_openblas_run(&job) == ATTNVK_ERROR_UNAVAILABLE;
    EXPECT(ok, "a missing OpenBLAS is unavailable with the reason (%s)", why);
    passed += ok;
    unsetenv("ATTNVK_OPENBLAS_LIBRARY");
    avk_openblas_unload();

    double gflops = 0;
    ok = avk_host_fma_peak(&gflops) == ATTNVK_OK && gflops > 0.1;
    printf("host f32 FMA peak: %.1f GFLOP/s (%s)\n", gflops, avk_cpu_flash_isa());
    EXPECT(ok, "avk_host_fma_peak: %s", attnvk_last_error());
    passed += ok;
    return avk_test_finish(passed, failed);
}
