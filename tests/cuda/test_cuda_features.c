/* The CUDA backend against the float64 CPU reference: the shared feature
 * matrix for f16, bf16 and f32, every variant, split-KV, LSE, query-row
 * ranges and the test-only skip-last-tile flag (which must be caught).
 * Without a CUDA device it says why and passes (nothing to run). */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static uint64_t seed;

static void count(int ok)
{
    if (ok) ++passed;
    else ++failed;
}

static void feature_matrix(attnvk_device *dev, attnvk_dtype dt, const attnvk_kernel_options *o, const char *tag,
                           int allow_unsupported)
{
    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(dt, cases, labels, 64);
    for (int i = 0; i < n; ++i) {
        char label[96];
        snprintf(label, sizeof label, "%s %s", tag, labels[i]);
        count(avk_test_run_case(dev, &cases[i], o, label, seed + (uint64_t)i, allow_unsupported));
    }
}

/* issue #13's head dims: equal 40, 72, 112, 192, 512 (prefill and decode) and
 * DeepSeek MLA's Dk/Dv 192/128 and 576/512 (GQA-packed decode, causal prefill) */
static int head_dim_cases(attnvk_dtype dt, attnvk_problem *out, const char **labels, int max)
{
    static const struct {
        const char *label;
        int b, h, hkv, nq, nk, dk, dv, causal, bshd;
    } c[] = {
        {"d40", 1, 4, 2, 70, 150, 40, 40, 0, 0},          {"d40 decode", 2, 8, 2, 1, 700, 40, 40, 0, 1},
        {"d72 causal", 1, 4, 4, 97, 97, 72, 72, 1, 1},    {"d72 decode", 2, 8, 8, 2, 500, 72, 72, 0, 0},
        {"d112", 2, 2, 1, 64, 200, 112, 112, 0, 0},       {"d112 decode", 1, 16, 4, 1, 900, 112, 112, 1, 0},
        {"d192 causal", 1, 2, 2, 150, 150, 192, 192, 1, 0}, {"d192 decode", 2, 4, 1, 1, 600, 192, 192, 0, 1},
        {"d512", 1, 2, 1, 40, 130, 512, 512, 0, 0},       {"d512 decode", 1, 8, 2, 1, 800, 512, 512, 1, 1},
        {"dk192 dv128 causal", 1, 4, 2, 200, 200, 192, 128, 1, 0},
        {"dk192 dv128 bshd Nq<Nk", 2, 4, 4, 50, 260, 192, 128, 1, 1},
        {"dk192 dv128 decode", 2, 8, 2, 1, 700, 192, 128, 0, 0},
        {"dk576 dv512 decode 128:1", 1, 128, 1, 1, 400, 576, 512, 0, 0},
        {"dk576 dv512 decode 8:2", 2, 8, 2, 2, 333, 576, 512, 1, 1},
        {"dk576 dv512 causal", 1, 2, 1, 80, 100, 576, 512, 1, 0},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof c / sizeof *c && n < max; ++i, ++n) {
        attnvk_problem p = {.batch = c[i].b, .heads = c[i].h, .kv_heads = c[i].hkv, .seq_q = c[i].nq,
                            .seq_kv = c[i].nk, .head_dim = c[i].dk, .head_dim_v = c[i].dv == c[i].dk ? 0 : c[i].dv,
                            .causal = c[i].causal, .dtype = dt,
                            .layout = c[i].bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD};
        out[n] = p;
        labels[n] = c[i].label;
    }
    return n;
}

static void head_dim_matrix(attnvk_device *dev, attnvk_dtype dt, const attnvk_kernel_options *o, const char *tag,
                            int allow_unsupported)
{
    attnvk_problem cases[32];
    const char *labels[32];
    int n = head_dim_cases(dt, cases, labels, 32);
    for (int i = 0; i < n; ++i) {
        char label[96];
        snprintf(label, sizeof label, "%s %s", tag, labels[i]);
        count(avk_test_run_case(dev, &cases[i], o, label, seed + 700 + (uint64_t)i, allow_unsupported));
    }
}

/* LSE from the kernel vs the reference's, including -inf for empty rows. */
static void lse_case(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts, const char *label)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed + 101, &q, &k, &v);
    size_t nq = attnvk_q_elements(p), nl = (size_t)p->batch * p->heads * p->seq_q;
    float *o = malloc(nq * sizeof *o), *lse = malloc(nl * sizeof *lse);
    float *ro = malloc(nq * sizeof *ro), *rl = malloc(nl * sizeof *rl);
    attnvk_kernel_info info;
    attnvk_status s = attnvk_attention_host(dev, p, opts, q, k, v, o, lse, &info, NULL);
    int ok = s == ATTNVK_OK;
    double worst = 0;
    if (ok) {
        attnvk_reference(p, q, k, v, ro, rl);
        attnvk_check c = attnvk_check_output(p, q, k, v, o, NULL, 0);
        ok = c.passed;
        double tol = p->dtype == ATTNVK_F32 ? 1e-5 : 2e-3;
        for (size_t i = 0; i < nl; ++i) {
            if (isinf(rl[i]) && rl[i] < 0) {
                if (!(isinf(lse[i]) && lse[i] < 0)) ok = 0, worst = INFINITY;
                continue;
            }
            double err = fabs((double)lse[i] - rl[i]) / fmax(1.0, fabs(rl[i]));
            if (!(err <= tol)) ok = 0;
            if (!(err <= worst)) worst = err;
        }
    }
    printf("%s %-40s %s split=%d lse max_rel %.2e%s%s\n", ok ? "ok  " : "FAIL", label,
           s == ATTNVK_OK ? info.variant : "-", s == ATTNVK_OK ? info.split_kv : 0, worst,
           s == ATTNVK_OK ? "" : ": ", s == ATTNVK_OK ? "" : attnvk_last_error());
    count(ok);
    free(q), free(k), free(v), free(o), free(lse), free(ro), free(rl);
}

static attnvk_status upload(attnvk_device *dev, attnvk_dtype dt, const float *x, size_t n, attnvk_buffer **b)
{
    size_t es = attnvk_dtype_size(dt);
    void *packed = malloc(n * es);
    attnvk_pack(dt, x, packed, n);
    attnvk_status s = attnvk_buffer_create(dev, n * es, b);
    if (s == ATTNVK_OK) s = attnvk_buffer_write(*b, 0, packed, n * es);
    free(packed);
    return s;
}

/* Two dispatches of disjoint query-row ranges fill O; a third range run on a
 * poisoned O must leave the rows outside it untouched (NaN). */
static void q_range_case(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                         const char *label)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed + 202, &q, &k, &v);
    size_t nq = attnvk_q_elements(p), es = attnvk_dtype_size(p->dtype);
    float *o = malloc(nq * sizeof *o), *nanf_ = malloc(nq * sizeof *nanf_);
    void *raw = malloc(nq * es);
    for (size_t i = 0; i < nq; ++i) nanf_[i] = NAN;
    attnvk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
    attnvk_kernel *kern = NULL;
    attnvk_status s = attnvk_kernel_prepare(dev, p, opts, &kern, NULL);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, q, nq, &bq);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, k, attnvk_kv_elements(p), &bk);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, v, attnvk_kv_elements(p), &bv);
    if (s == ATTNVK_OK) s = upload(dev, p->dtype, nanf_, nq, &bo);
    int split = p->seq_q / 3 + 1;
    if (s == ATTNVK_OK) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, 0, split, NULL);
    if (s == ATTNVK_OK) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, split, p->seq_q - split, NULL);
    if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, raw, nq * es);
    int ok = s == ATTNVK_OK;
    attnvk_check c = {0};
    if (ok) {
        attnvk_unpack(p->dtype, raw, o, nq);
        c = attnvk_check_output(p, q, k, v, o, NULL, 0);
        ok = c.passed;
    }
    /* now a middle range only, on a poisoned O */
    int lo = p->seq_q / 4, cnt = p->seq_q / 2;
    size_t outside_written = 0, inside_nan = 0;
    if (ok) {
        void *poison = malloc(nq * es);
        attnvk_pack(p->dtype, nanf_, poison, nq);
        s = attnvk_buffer_write(bo, 0, poison, nq * es);
        free(poison);
        if (s == ATTNVK_OK) s = attnvk_kernel_run(kern, bq, bk, bv, bo, NULL, lo, cnt, NULL);
        if (s == ATTNVK_OK) s = attnvk_buffer_read(bo, 0, raw, nq * es);
        if (s == ATTNVK_OK) {
            attnvk_unpack(p->dtype, raw, o, nq);
            for (int b = 0; b < p->batch; ++b)
                for (int h = 0; h < p->heads; ++h)
                    for (int i = 0; i < p->seq_q; ++i) {
                        size_t off = p->layout == ATTNVK_LAYOUT_BHSD
                                         ? (((size_t)b * p->heads + h) * p->seq_q + i) * p->head_dim
                                         : (((size_t)b * p->seq_q + i) * p->heads + h) * p->head_dim;
                        int inside = i >= lo && i < lo + cnt;
                        for (int d = 0; d < p->head_dim; ++d) {
                            if (inside && isnan(o[off + d])) ++inside_nan;
                            if (!inside && !isnan(o[off + d])) ++outside_written;
                        }
                    }
        }
        ok = s == ATTNVK_OK && outside_written == 0 && inside_nan == 0;
    }
    printf("%s %-40s rel_l2 %.2e, middle range: %zu written outside, %zu unwritten inside%s%s\n", ok ? "ok  " : "FAIL",
           label, c.rel_l2, outside_written, inside_nan, s == ATTNVK_OK ? "" : ": ",
           s == ATTNVK_OK ? "" : attnvk_last_error());
    count(ok);
    attnvk_kernel_destroy(kern);
    attnvk_buffer_destroy(bq), attnvk_buffer_destroy(bk), attnvk_buffer_destroy(bv), attnvk_buffer_destroy(bo);
    free(q), free(k), free(v), free(o), free(nanf_), free(raw);
}

/* The deliberately wrong kernel must be caught by the reference check. */
static void skip_tile_case(attnvk_device *dev, const attnvk_problem *p, const char *variant, const char *label)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed + 303, &q, &k, &v);
    float *o = malloc(attnvk_q_elements(p) * sizeof *o);
    attnvk_kernel_options opts = {.variant = variant, .test_flags = ATTNVK_TEST_SKIP_LAST_KV_TILE};
    attnvk_kernel_info info;
    attnvk_status s = attnvk_attention_host(dev, p, &opts, q, k, v, o, NULL, &info, NULL);
    attnvk_check c = {0};
    if (s == ATTNVK_OK) c = attnvk_check_output(p, q, k, v, o, NULL, 0);
    int ok = s == ATTNVK_OK && !c.passed;
    printf("%s %-40s %s: check %s (rel_l2 %.2e)%s%s\n", ok ? "ok  " : "FAIL", label, s == ATTNVK_OK ? info.variant : "-",
           c.passed ? "passed (should not)" : "failed as intended", c.rel_l2, s == ATTNVK_OK ? "" : ": ",
           s == ATTNVK_OK ? "" : attnvk_last_error());
    count(ok);
    free(q), free(k), free(v), free(o);
}

int main(void)
{
    seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("context: %s\n", attnvk_last_error());
        return 1;
    }
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_CUDA);
    if (!dev) { /* no GPU here: nothing to run (test_cuda_host checks the reason) */
        attnvk_context_destroy(ctx);
        return avk_test_finish(0, 0);
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    printf("device: %s (%s), default %s\n", info->name, info->architecture, info->default_variant);

    attnvk_kernel_options defaults = {0};
    feature_matrix(dev, ATTNVK_F16, &defaults, "f16", 0);
    feature_matrix(dev, ATTNVK_BF16, &defaults, "bf16", 0);
    feature_matrix(dev, ATTNVK_F32, &defaults, "f32", 0);

    /* KV caches (#12): GQA packing, paged + ragged, q8_0 / q4_0 / fp8, every
     * dtype, the table's choice and the bodies that implement the contract */
    {
        avk_cache_case cc[32];
        static const char *const contract_variants[] = {NULL, "mma16", "mma32-qs", "mma-decode", "simt"};
        for (int dt = ATTNVK_F32; dt <= ATTNVK_BF16; ++dt)
            for (size_t v = 0; v < sizeof contract_variants / sizeof *contract_variants; ++v) {
                if (dt == ATTNVK_F32 && contract_variants[v] && strcmp(contract_variants[v], "simt") != 0) continue;
                attnvk_kernel_options o = {.variant = contract_variants[v]};
                int n = avk_test_cache_cases((attnvk_dtype)dt, cc, 32);
                for (int i = 0; i < n; ++i) {
                    /* mma-decode takes D <= 128 (every shape, every kv format; decode is what it is for) */
                    if (o.variant && strcmp(o.variant, "mma-decode") == 0 && cc[i].p.head_dim > 128) continue;
                    avk_test_run_cache_case(dev, &cc[i], &o, seed + 1000 + i, 0) ? ++passed : ++failed;
                }
            }
    }

    /* paged q8_0 / q4_0 at D=128 (136- and 72-byte rows, 8 bytes off 16 every other row: mma-decode's
     * aligned slots, attn_decode.h's ALIGNED_ROWS): pages of 16 and 17 keys, even and odd kv heads
     * (rows of one tile at one or both offsets), ragged lengths (partial tiles, empty sequences) */
    {
        static const struct {
            const char *label;
            int b, h, hkv, nq, nk, page;
            attnvk_kv_format fmt;
            int32_t lens[5];
        } slots[] = {
            {"paged 16 q8_0 D128 hkv2 ragged", 5, 8, 2, 1, 700, 16, ATTNVK_KV_Q8_0, {0, 1, 31, 33, 700}},
            {"paged 17 q8_0 D128 hkv1 Nq2", 4, 8, 1, 2, 600, 17, ATTNVK_KV_Q8_0, {17, 16, 600, 259, 0}},
            {"paged 16 q4_0 D128 hkv3 ragged", 3, 12, 3, 1, 650, 16, ATTNVK_KV_Q4_0, {650, 2, 100, 0, 0}},
            {"paged 17 q4_0 D128 hkv2 ragged", 4, 8, 2, 1, 500, 17, ATTNVK_KV_Q4_0, {1, 34, 500, 35, 0}},
        };
        static const char *const slot_variants[] = {NULL, "mma-decode"};
        for (int dt = ATTNVK_F16; dt <= ATTNVK_BF16; ++dt)
            for (size_t v = 0; v < sizeof slot_variants / sizeof *slot_variants; ++v)
                for (size_t i = 0; i < sizeof slots / sizeof *slots; ++i) {
                    avk_cache_case c = {.label = slots[i].label, .nlens = slots[i].b};
                    attnvk_problem p = {.batch = slots[i].b, .heads = slots[i].h, .kv_heads = slots[i].hkv,
                                        .seq_q = slots[i].nq, .seq_kv = slots[i].nk, .head_dim = 128,
                                        .dtype = (attnvk_dtype)dt, .page_size = slots[i].page, .kv_format = slots[i].fmt};
                    c.p = p;
                    memcpy(c.lens, slots[i].lens, sizeof slots[i].lens);
                    attnvk_kernel_options o = {.variant = slot_variants[v]};
                    avk_test_run_cache_case(dev, &c, &o, seed + 2000 + i, 0) ? ++passed : ++failed;
                }
    }

    static const char *const variants[] = {"wgmma", "mma16", "mma16-qs", "mma32", "mma32-qs", "tiled", "simt"};
    for (size_t i = 0; i < sizeof variants / sizeof *variants; ++i) {
        attnvk_kernel_options o = {.variant = variants[i]};
        char tag[32];
        snprintf(tag, sizeof tag, "f16 %s", variants[i]);
        feature_matrix(dev, ATTNVK_F16, &o, tag, 1);
    }
    /* issue #13's head dims: the table's picks in every dtype, each body by name
     * (refusing, with the reason, what it cannot take), split partials of Dv */
    head_dim_matrix(dev, ATTNVK_F16, &defaults, "f16", 0);
    head_dim_matrix(dev, ATTNVK_BF16, &defaults, "bf16", 0);
    head_dim_matrix(dev, ATTNVK_F32, &defaults, "f32", 0);
    for (size_t i = 0; i < sizeof variants / sizeof *variants; ++i) {
        attnvk_kernel_options o = {.variant = variants[i]};
        const attnvk_dtype dt = strcmp(variants[i], "wgmma") ? ATTNVK_F16 : ATTNVK_BF16;
        char tag[32];
        snprintf(tag, sizeof tag, "%s %s", attnvk_dtype_name(dt), variants[i]);
        head_dim_matrix(dev, dt, &o, tag, 1);
    }
    {
        attnvk_kernel_options split3 = {.split_kv = 3};
        head_dim_matrix(dev, ATTNVK_F16, &split3, "f16 split_kv=3", 0);
        attnvk_problem mla = {.batch = 1, .heads = 16, .kv_heads = 1, .seq_q = 1, .seq_kv = 2000, .head_dim = 576,
                              .head_dim_v = 512, .dtype = ATTNVK_F16};
        lse_case(dev, &mla, &defaults, "lse f16 576/512 decode");
    }

    /* other tiles than the table's */
    static const struct {
        const char *variant;
        int br, bc;
        attnvk_dtype dtype;
    } tiles[] = {{"mma16", 64, 32, ATTNVK_F16},  {"mma16", 128, 128, ATTNVK_F16}, {"mma16", 32, 16, ATTNVK_F16},
                 {"mma16", 128, 64, ATTNVK_F16}, {"wgmma", 64, 64, ATTNVK_F16},   {"wgmma", 192, 128, ATTNVK_BF16},
                 {"wgmma", 128, 256, ATTNVK_F16}, {"wgmma", 128, 64, ATTNVK_BF16}, {"tiled", 64, 16, ATTNVK_F32},
                 {"tiled", 128, 8, ATTNVK_F32},  {"simt", 32, 32, ATTNVK_F32}};
    for (size_t i = 0; i < sizeof tiles / sizeof *tiles; ++i) {
        attnvk_kernel_options o = {.variant = tiles[i].variant, .tile_br = tiles[i].br, .tile_bc = tiles[i].bc};
        char tag[48];
        snprintf(tag, sizeof tag, "%s %s %dx%d", attnvk_dtype_name(tiles[i].dtype), tiles[i].variant, tiles[i].br,
                 tiles[i].bc);
        feature_matrix(dev, tiles[i].dtype, &o, tag, 1);
    }
    /* split-KV forced on prefill shapes, and never on decode shapes */
    attnvk_kernel_options split3 = {.split_kv = 3}, nosplit = {.split_kv = 1};
    feature_matrix(dev, ATTNVK_F16, &split3, "f16 split_kv=3", 0);
    feature_matrix(dev, ATTNVK_F32, &split3, "f32 split_kv=3", 0);
    feature_matrix(dev, ATTNVK_BF16, &nosplit, "bf16 split_kv=1", 0);

    /* LSE: plain, split-KV, empty rows (causal Nq > Nk) */
    attnvk_problem lp = {.batch = 2, .heads = 4, .kv_heads = 2, .seq_q = 100, .seq_kv = 300, .head_dim = 64,
                         .causal = 1, .dtype = ATTNVK_F16};
    lse_case(dev, &lp, &defaults, "lse f16 causal GQA");
    lse_case(dev, &lp, &split3, "lse f16 causal split_kv=3");
    lp.dtype = ATTNVK_F32;
    lse_case(dev, &lp, &defaults, "lse f32 causal");
    attnvk_problem empty = {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 90, .seq_kv = 40, .head_dim = 128,
                            .causal = 1, .dtype = ATTNVK_BF16};
    lse_case(dev, &empty, &defaults, "lse bf16 empty rows");
    attnvk_problem dec = {.batch = 2, .heads = 8, .kv_heads = 2, .seq_q = 3, .seq_kv = 3000, .head_dim = 128,
                          .dtype = ATTNVK_F16};
    lse_case(dev, &dec, &defaults, "lse f16 decode (auto split)");

    /* query-row ranges */
    attnvk_problem rp = {.batch = 2, .heads = 3, .kv_heads = 1, .seq_q = 300, .seq_kv = 333, .head_dim = 64,
                         .causal = 1, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BSHD};
    q_range_case(dev, &rp, &defaults, "q ranges f16 causal bshd");
    rp.dtype = ATTNVK_F32;
    q_range_case(dev, &rp, &defaults, "q ranges f32 causal bshd");
    rp.dtype = ATTNVK_BF16;
    rp.seq_q = 12;
    q_range_case(dev, &rp, &defaults, "q ranges bf16 decode split");

    /* the wrong kernel is caught */
    attnvk_problem sp = {.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 64, .seq_kv = 300, .head_dim = 64,
                         .dtype = ATTNVK_F16};
    skip_tile_case(dev, &sp, NULL, "skip last tile f16");
    sp.dtype = ATTNVK_F32;
    skip_tile_case(dev, &sp, NULL, "skip last tile f32");
    sp.dtype = ATTNVK_BF16;
    sp.seq_q = 1;
    skip_tile_case(dev, &sp, NULL, "skip last tile bf16 decode");

    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
