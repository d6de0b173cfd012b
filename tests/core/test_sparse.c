/* Sparse patterns (#20): block-sparse layouts and LongNet's dilated attention.
 *  1. The reference on each pattern equals the reference on the same problem
 *     made dense with an additive 0/-inf mask built here straight from the
 *     issue's rules (an independent formulation), O and LSE both;
 *     attnvk_flops_inputs counts the mask's visible pairs.
 *  2. Every device whose attnvk kernel declares the pattern (the CPU here)
 *     matches the float64 reference on fresh random inputs (O poisoned);
 *     the others refuse with the feature's name.
 *  3. Bad shapes: one-line INVALID_ARGUMENT each.
 * Cases: random layouts, a local band, with causal, partial last blocks, an
 * empty row of blocks, per-head and per-batch layouts, GQA; dilated with
 * several groups, causal on and off, N not a multiple of the segment, GQA. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void tally(int ok) { ok ? ++passed : ++failed; }

typedef struct sparse_case {
    const char *label;
    int b, h, hkv, n, d, causal;
    int bq, bk, lb, lh; /* block layout: sizes and broadcast (0: none) */
    double density;     /* random layout; < 0: a band of |density| blocks each side of the diagonal */
    int empty_row;      /* one row of blocks all zero */
    int groups;         /* dilated */
    int seg[3], rate[3];
    float softcap;
    int nq; /* query rows, 0: n (a decode shape's few rows against n keys) */
} sparse_case;

static const sparse_case cases[] = {
    {"random 30%", 2, 4, 2, 100, 32, 0, 16, 16, 1, 1, 0.3, 0, 0, {0}, {0}, 0, 0},
    {"random, causal, per head", 1, 4, 4, 90, 64, 1, 16, 32, 1, 4, 0.4, 0, 0, {0}, {0}, 0, 0},
    {"local band, partial blocks", 2, 2, 1, 77, 32, 1, 10, 12, 2, 1, -1, 0, 0, {0}, {0}, 0, 0},
    {"empty block row, softcap", 1, 2, 2, 64, 32, 0, 16, 8, 1, 1, 0.5, 1, 0, {0}, {0}, 20.f, 0},
    {"dilated 2 groups", 1, 4, 2, 64, 32, 0, 0, 0, 0, 0, 0, 0, 2, {16, 32}, {1, 2}, 0, 0},
    {"dilated causal, N % s != 0", 2, 6, 3, 70, 32, 1, 0, 0, 0, 0, 0, 0, 3, {8, 16, 32}, {1, 2, 4}, 0, 0},
    {"dilated one group, rate 3", 1, 2, 1, 50, 64, 1, 0, 0, 0, 0, 0, 0, 1, {12}, {3}, 10.f, 0},
    {"decode rows, GQA 4", 2, 8, 2, 300, 64, 1, 4, 32, 1, 8, 0.35, 0, 0, {0}, {0}, 0, 4},
};

static attnvk_problem make_problem(const sparse_case *c, attnvk_dtype dt)
{
    attnvk_problem p;
    attnvk_problem_init(&p);
    p.batch = c->b, p.heads = c->h, p.kv_heads = c->hkv, p.seq_q = c->nq ? c->nq : c->n, p.seq_kv = c->n;
    p.head_dim = c->d;
    p.causal = c->causal, p.dtype = dt, p.softcap = c->softcap;
    if (c->bq) {
        p.block_sparse = 1, p.block_q = c->bq, p.block_k = c->bk, p.layout_batch = c->lb, p.layout_heads = c->lh;
    }
    p.dilated_groups = c->groups;
    for (int g = 0; g < c->groups; ++g) p.dilated_segment[g] = c->seg[g], p.dilated_rate[g] = c->rate[g];
    return p;
}

/* A layout with the case's pattern, from seed. */
static uint8_t *make_layout(const attnvk_problem *p, const sparse_case *c, uint64_t seed)
{
    const size_t n = attnvk_block_layout_bytes(p);
    const int rows = (p->seq_q + p->block_q - 1) / p->block_q, cols = (p->seq_kv + p->block_k - 1) / p->block_k;
    uint8_t *l = malloc(n);
    float *u = malloc(sizeof(float) * n);
    attnvk_fill_random(u, n, seed);
    for (size_t e = 0; e < n; ++e) {
        const int r = (int)(e / (size_t)cols % (size_t)rows), col = (int)(e % (size_t)cols);
        if (c->density >= 0) /* a standard normal below its quantile: about density of the blocks */
            l[e] = 0.5 * erfc(-u[e] / sqrt(2.0)) < c->density ? (uint8_t)(1 + e % 200) : 0;
        else /* the band in token units: block r's rows against block col's keys */
            l[e] = abs(r * p->block_q / p->block_k - col) <= (int)-c->density;
        if (c->empty_row && r == rows / 2) l[e] = 0;
    }
    free(u);
    return l;
}

/* The rules, spelled from the issue: the additive mask [B][H][N][N] of a pattern. */
static float *rules_mask(const attnvk_problem *p, const uint8_t *layout)
{
    const int NQ = p->seq_q, NK = p->seq_kv, H = p->heads;
    float *m = malloc(sizeof(float) * (size_t)p->batch * H * NQ * NK);
    for (int b = 0; b < p->batch; ++b)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < NQ; ++i)
                for (int j = 0; j < NK; ++j) {
                    int visible = 1;
                    if (p->block_sparse) {
                        const int rows = (NQ + p->block_q - 1) / p->block_q, cols = (NK + p->block_k - 1) / p->block_k;
                        const int lb = p->layout_batch > 1 ? b : 0, lh = p->layout_heads > 1 ? h : 0;
                        visible = layout[(((size_t)lb * p->layout_heads + lh) * rows + i / p->block_q) * cols +
                                         j / p->block_k] != 0;
                    }
                    if (p->dilated_groups) {
                        const int g = h / (H / p->dilated_groups), s = p->dilated_segment[g], r = p->dilated_rate[g];
                        const int o = g % r, active_i = (i % s) % r == o, active_j = (j % s) % r == o;
                        visible = visible && active_i && active_j && i / s == j / s;
                    }
                    m[(((size_t)b * H + h) * NQ + i) * NK + j] = visible ? 0.0f : -INFINITY;
                }
    return m;
}

static double max_rel(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; ++i) {
        if (isinf(a[i]) && isinf(b[i]) && a[i] == b[i]) continue;
        const double e = fabs((double)a[i] - b[i]) / fmax(1.0, fabs((double)b[i]));
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

/* 1: the reference against the masked dense reference, and the FLOP count. */
static void reference_vs_rules(const sparse_case *c, uint64_t seed)
{
    attnvk_problem p = make_problem(c, ATTNVK_F32);
    float *q, *k, *v;
    avk_test_inputs(&p, seed, &q, &k, &v);
    uint8_t *layout = p.block_sparse ? make_layout(&p, c, seed + 7) : NULL;
    float *mask = rules_mask(&p, layout);
    const size_t no = attnvk_o_elements(&p), nl = (size_t)p.batch * p.heads * p.seq_q;
    float *o = malloc(sizeof(float) * no), *lse = malloc(sizeof(float) * nl);
    float *o_ref = malloc(sizeof(float) * no), *lse_ref = malloc(sizeof(float) * nl);
    const attnvk_host_inputs in = {.q = q, .k = k, .v = v, .block_layout = layout};
    attnvk_reference_inputs(&p, &in, o, lse);
    attnvk_problem dense = p;
    dense.block_sparse = 0, dense.dilated_groups = 0;
    dense.mask = 1, dense.mask_batch = p.batch, dense.mask_heads = p.heads, dense.mask_dtype = ATTNVK_F32;
    const attnvk_host_inputs din = {.q = q, .k = k, .v = v, .mask = mask};
    attnvk_reference_inputs(&dense, &din, o_ref, lse_ref);
    double pairs = 0;
    for (int b = 0; b < p.batch; ++b)
        for (int h = 0; h < p.heads; ++h)
            for (int i = 0; i < p.seq_q; ++i)
                for (int j = 0; j <= (p.causal ? i + p.seq_kv - p.seq_q : p.seq_kv - 1); ++j)
                    pairs += mask[(((size_t)b * p.heads + h) * p.seq_q + i) * p.seq_kv + j] == 0.0f;
    const double flops = attnvk_flops_inputs(&p, &in), want = pairs * 2.0 * (p.head_dim * 2);
    const double eo = max_rel(o, o_ref, no), el = max_rel(lse, lse_ref, nl);
    const int ok = eo <= 1e-6 && el <= 1e-6 && flops == want &&
                   (p.block_sparse || attnvk_problem_flops(&p) == want);
    printf("%s reference = dense with the rules' mask: %s (O %.1e, LSE %.1e, %.0f visible pairs, flops %s)\n",
           ok ? "ok  " : "FAIL", c->label, eo, el, pairs, flops == want ? "exact" : "wrong");
    tally(ok);
    free(q), free(k), free(v), free(layout), free(mask), free(o), free(lse), free(o_ref), free(lse_ref);
}

/* 2: a device's attnvk kernel on the pattern, against the reference. */
static void device_case(attnvk_device *dev, const sparse_case *c, attnvk_dtype dt, uint64_t seed)
{
    attnvk_problem p = make_problem(c, dt);
    float *q, *k, *v;
    avk_test_inputs(&p, seed, &q, &k, &v);
    uint8_t *layout = p.block_sparse ? make_layout(&p, c, seed + 7) : NULL;
    const attnvk_host_inputs in = {.q = q, .k = k, .v = v, .block_layout = layout};
    const size_t no = attnvk_o_elements(&p);
    float *o = malloc(sizeof(float) * no);
    for (size_t i = 0; i < no; ++i) o[i] = NAN;
    attnvk_kernel_info info;
    const char *api = attnvk_api_name(attnvk_device_info_of(dev)->api);
    attnvk_status s = attnvk_attention_host_inputs(dev, &p, NULL, &in, o, NULL, &info, NULL);
    unsigned features = 0;
    attnvk_impl_info impls[8];
    int n = attnvk_device_implementations(dev, impls, 8);
    for (int i = 0; i < n; ++i)
        if (!strcmp(impls[i].name, "attnvk")) features = impls[i].features;
    const unsigned need = (p.block_sparse ? ATTNVK_FEATURE_BLOCK_SPARSE : 0) | (p.dilated_groups ? ATTNVK_FEATURE_DILATED : 0);
    if ((features & need) != need) {
        const char *msg = attnvk_last_error();
        const int ok = s == ATTNVK_ERROR_UNSUPPORTED && (strstr(msg, "block-sparse") || strstr(msg, "dilated"));
        printf("%s %s refuses %s: %s\n", ok ? "ok  " : "FAIL", api, c->label, msg);
        tally(ok);
    } else if (s != ATTNVK_OK) {
        printf("FAIL %s %s %s: %s: %s\n", api, c->label, attnvk_dtype_name(dt), attnvk_status_name(s), attnvk_last_error());
        tally(0);
    } else {
        attnvk_check chk = attnvk_check_output_inputs(&p, &in, o, NULL, 0);
        printf("%s %s %s %s: %s rel_l2 %.2e (tol %.0e)\n", chk.passed ? "ok  " : "FAIL", api, c->label,
               attnvk_dtype_name(dt), info.variant, chk.rel_l2, chk.tolerance);
        tally(chk.passed);
    }
    free(q), free(k), free(v), free(layout), free(o);
}

/* 3: bad shapes */
static void refusals(void)
{
    const sparse_case *blk = &cases[0], *dil = &cases[4];
    struct {
        const char *label, *frag;
        attnvk_problem p;
    } bad[8];
    int n = 0;
    bad[n].label = "a layout batch of 3", bad[n].frag = "batch dimension", bad[n].p = make_problem(blk, ATTNVK_F32);
    bad[n++].p.layout_batch = 3;
    bad[n].label = "a layout head count of 2 for 4 heads", bad[n].frag = "head dimension",
    bad[n].p = make_problem(blk, ATTNVK_F32);
    bad[n++].p.layout_heads = 2;
    bad[n].label = "a block size of 0", bad[n].frag = "block size", bad[n].p = make_problem(blk, ATTNVK_F32);
    bad[n++].p.block_k = 0;
    bad[n].label = "3 groups for 4 heads", bad[n].frag = "do not divide", bad[n].p = make_problem(dil, ATTNVK_F32);
    bad[n++].p.dilated_groups = 3;
    bad[n].label = "a rate of 0", bad[n].frag = "rates must be", bad[n].p = make_problem(dil, ATTNVK_F32);
    bad[n++].p.dilated_rate[1] = 0;
    bad[n].label = "dilated with Nq != Nk", bad[n].frag = "Nq = Nk", bad[n].p = make_problem(dil, ATTNVK_F32);
    bad[n++].p.seq_kv = 80;
    bad[n].label = "9 dilated groups", bad[n].frag = "groups", bad[n].p = make_problem(dil, ATTNVK_F32);
    bad[n++].p.dilated_groups = 9;
    bad[n].label = "dilated with a window", bad[n].frag = "not a window", bad[n].p = make_problem(dil, ATTNVK_F32);
    bad[n].p.window = 1, bad[n++].p.window_left = 4;
    for (int i = 0; i < n; ++i) {
        attnvk_status s = attnvk_problem_validate(&bad[i].p);
        const char *msg = attnvk_last_error();
        const int ok = s == ATTNVK_ERROR_INVALID_ARGUMENT && strstr(msg, bad[i].frag) && !strchr(msg, '\n');
        printf("%s refuses %s: %s\n", ok ? "ok  " : "FAIL", bad[i].label, msg);
        tally(ok);
    }
}

int main(void)
{
    const uint64_t seed = avk_test_seed();
    const size_t ncases = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < ncases; ++i) reference_vs_rules(&cases[i], seed + 31 * i);
    refusals();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    const attnvk_api apis[] = {ATTNVK_API_CPU, ATTNVK_API_VULKAN, ATTNVK_API_OPENCL, ATTNVK_API_CUDA, ATTNVK_API_HIP};
    for (size_t a = 0; a < sizeof apis / sizeof *apis; ++a) {
        const char *why;
        if (attnvk_api_status(ctx, apis[a], &why) != ATTNVK_OK) continue;
        attnvk_device *dev = avk_test_open_api(ctx, apis[a]);
        if (!dev) continue;
        const int f16 = attnvk_device_info_of(dev)->fp16;
        for (size_t i = 0; i < ncases; ++i) {
            device_case(dev, &cases[i], ATTNVK_F32, seed + 101 * i);
            if (f16) device_case(dev, &cases[i], ATTNVK_F16, seed + 101 * i + 1);
        }
        attnvk_device_close(dev);
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
