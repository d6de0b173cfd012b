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

#include "core/kernel_args.h"
#include "core/sparse.h"
#include "core/sparse_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void tally(int ok) { ok ? ++passed : ++failed; }

static avk_sparse_case cases[AVK_SPARSE_CASES_MAX];
static int ncases;

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
static void reference_vs_rules(const avk_sparse_case *c, uint64_t seed)
{
    const attnvk_problem p = c->p;
    float *q, *k, *v;
    avk_test_inputs(&p, seed, &q, &k, &v);
    uint8_t *layout = avk_sparse_case_layout(c, seed + 7);
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

/* 2: a device's attnvk kernel on the pattern (its default variant, or o's), against the reference. */
static void device_case(attnvk_device *dev, const avk_sparse_case *c, const attnvk_kernel_options *o, uint64_t seed)
{
    const attnvk_problem *p = &c->p;
    const char *api = attnvk_api_name(attnvk_device_info_of(dev)->api);
    avk_score_result r;
    attnvk_status s = avk_sparse_case_run(dev, c, o, seed, &r);
    unsigned features = 0;
    attnvk_impl_info impls[8];
    int n = attnvk_device_implementations(dev, impls, 8);
    for (int i = 0; i < n; ++i)
        if (!strcmp(impls[i].name, "attnvk")) features = impls[i].features;
    const unsigned need = (p->block_sparse ? ATTNVK_FEATURE_BLOCK_SPARSE : 0) | (p->dilated_groups ? ATTNVK_FEATURE_DILATED : 0);
    if ((features & need) != need) {
        const int ok = s == ATTNVK_ERROR_UNSUPPORTED && (strstr(r.message, "block-sparse") || strstr(r.message, "dilated"));
        printf("%s %s refuses %s: %s\n", ok ? "ok  " : "FAIL", api, c->label, r.message);
        tally(ok);
    } else if (s != ATTNVK_OK) {
        printf("FAIL %s %s %s: %s: %s\n", api, c->label, r.shape, attnvk_status_name(s), r.message);
        tally(0);
    } else {
        printf("%s %s %s %s%s: %s rel_l2 %.2e (tol %.0e) lse err %.1e (%zu rows off)\n", r.check.passed ? "ok  " : "FAIL", api,
               c->label, r.shape, o && o->split_kv ? " split 3" : "", r.info.variant, r.check.rel_l2, r.check.tolerance,
               r.lse_err, r.lse_bad);
        tally(r.check.passed);
    }
}

/* 2b: the dilated views' grid (kernel_flags.h's AVK_FLAG_DILATED_VIEW, as flash_dilated_view /
 * avk_dilated_view enumerate it) covers every (head, row) exactly once, each active row in the view
 * of its own segment's active keys, for row tiles of 16 and 64 */
static void view_cover(const avk_sparse_case *c)
{
    const attnvk_problem *p = &c->p;
    const int n = p->seq_q, brs[2] = {16, 64};
    for (int t = 0; t < 2; ++t) {
        const int br = brs[t];
        const int64_t grid = avk_dilated_view_blocks(p, br);
        int bad = 0;
        for (int h = 0; h < p->heads && !bad; ++h) {
            const avk_dilation d = avk_dilation_of(p, h);
            int *seen = calloc((size_t)n, sizeof(int));
            const int blocks = ((d.segment < n ? d.segment : n) + d.rate - 1) / d.rate;
            const int per_class = (blocks + br - 1) / br;
            for (int64_t x = 0; x < grid; ++x) {
                const int64_t seg = x / ((int64_t)d.rate * per_class), cls = x / per_class % d.rate;
                if (seg >= (n + d.segment - 1) / d.segment) continue;
                const int seg0 = (int)seg * d.segment, len = n - seg0 < d.segment ? n - seg0 : d.segment;
                const int rows = len > cls ? (int)((len - cls + d.rate - 1) / d.rate) : 0;
                const int keys = cls == d.offset ? rows : 0;
                for (int r = (int)(x % per_class) * br; r < rows && r < (int)(x % per_class) * br + br; ++r) {
                    const int row = seg0 + (int)cls + r * d.rate;
                    ++seen[row];
                    /* the class o sees its segment's active keys, the others none */
                    if ((keys > 0) != avk_dilated_active(d, row) || (keys && seg0 + d.offset + (keys - 1) * d.rate >= seg0 + len))
                        bad = 1;
                }
            }
            for (int i = 0; i < n; ++i) bad |= seen[i] != 1;
            free(seen);
        }
        printf("%s dilated view grid covers every row once: %s, br %d (%lld blocks)\n", bad ? "FAIL" : "ok  ", c->label, br,
               (long long)grid);
        tally(!bad);
    }
}

/* 2c: a dilated kernel whose strided views take every row at once refuses a range of rows with one line */
static void view_row_range(attnvk_device *dev, const avk_sparse_case *c)
{
    const attnvk_problem *p = &c->p;
    attnvk_kernel *k = NULL;
    attnvk_buffer *q = NULL, *kv = NULL, *o = NULL;
    const size_t es = attnvk_dtype_size(p->dtype);
    attnvk_status s = attnvk_kernel_prepare(dev, p, NULL, &k, NULL);
    if (s == ATTNVK_OK) s = attnvk_buffer_create(dev, attnvk_q_elements(p) * es, &q);
    if (s == ATTNVK_OK) s = attnvk_buffer_create(dev, attnvk_kv_bytes(p), &kv);
    if (s == ATTNVK_OK) s = attnvk_buffer_create(dev, attnvk_o_elements(p) * es, &o);
    if (s == ATTNVK_OK) s = attnvk_kernel_run(k, q, kv, kv, o, NULL, 1, p->seq_q - 1, NULL);
    const char *msg = attnvk_last_error();
    const int ok = s == ATTNVK_ERROR_INVALID_ARGUMENT && strstr(msg, "all") && !strchr(msg, '\n');
    printf("%s %s refuses a dilated run of rows 1..%d: %s\n", ok ? "ok  " : "FAIL",
           attnvk_api_name(attnvk_device_info_of(dev)->api), p->seq_q - 1, msg);
    tally(ok);
    attnvk_buffer_destroy(q), attnvk_buffer_destroy(kv), attnvk_buffer_destroy(o);
    attnvk_kernel_destroy(k);
}

/* 3: bad shapes */
static void refusals(void)
{
    const avk_sparse_case *blk = &cases[0], *dil = NULL;
    for (int i = 0; i < ncases && !dil; ++i)
        if (!strcmp(cases[i].label, "dilated 2 groups")) dil = &cases[i];
    if (!dil) {
        printf("FAIL no 'dilated 2 groups' case for the refusals\n");
        tally(0);
        return;
    }
    struct {
        const char *label, *frag;
        attnvk_problem p;
    } bad[8];
    int n = 0;
    bad[n].label = "a layout batch of 3", bad[n].frag = "batch dimension", bad[n].p = blk->p;
    bad[n++].p.layout_batch = 3;
    bad[n].label = "a layout head count of 2 for 4 heads", bad[n].frag = "head dimension",
    bad[n].p = blk->p;
    bad[n++].p.layout_heads = 2;
    bad[n].label = "a block size of 0", bad[n].frag = "block size", bad[n].p = blk->p;
    bad[n++].p.block_k = 0;
    bad[n].label = "3 groups for 4 heads", bad[n].frag = "do not divide", bad[n].p = dil->p;
    bad[n++].p.dilated_groups = 3;
    bad[n].label = "a rate of 0", bad[n].frag = "rates must be", bad[n].p = dil->p;
    bad[n++].p.dilated_rate[1] = 0;
    bad[n].label = "dilated with Nq != Nk", bad[n].frag = "Nq = Nk", bad[n].p = dil->p;
    bad[n++].p.seq_kv = 80;
    bad[n].label = "9 dilated groups", bad[n].frag = "groups", bad[n].p = dil->p;
    bad[n++].p.dilated_groups = 9;
    bad[n].label = "dilated with a window", bad[n].frag = "not a window", bad[n].p = dil->p;
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
    ncases = avk_sparse_cases(ATTNVK_F32, cases, AVK_SPARSE_CASES_MAX);
    for (int i = 0; i < ncases; ++i) reference_vs_rules(&cases[i], seed + 31 * (uint64_t)i);
    refusals();
    for (int i = 0; i < ncases; ++i)
        if (cases[i].p.dilated_groups) view_cover(&cases[i]);
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    const attnvk_api apis[] = {ATTNVK_API_CPU, ATTNVK_API_VULKAN, ATTNVK_API_OPENCL, ATTNVK_API_CUDA, ATTNVK_API_HIP};
    for (size_t a = 0; a < sizeof apis / sizeof *apis; ++a) {
        const char *why;
        if (attnvk_api_status(ctx, apis[a], &why) != ATTNVK_OK) continue;
        attnvk_device *dev = avk_test_open_api(ctx, apis[a]);
        if (!dev) continue;
        const int f16 = attnvk_device_info_of(dev)->fp16;
        for (int dt = 0; dt < (f16 ? 2 : 1); ++dt) {
            avk_sparse_case typed[AVK_SPARSE_CASES_MAX];
            const int n = avk_sparse_cases(dt ? ATTNVK_F16 : ATTNVK_F32, typed, AVK_SPARSE_CASES_MAX);
            for (int i = 0; i < n; ++i) device_case(dev, &typed[i], NULL, seed + 101 * (uint64_t)i + (uint64_t)dt);
            /* dilated views' rows reach the split merge through the problem's own rows */
            const attnvk_kernel_options split3 = {.split_kv = 3};
            for (int i = 0; i < n; ++i)
                if (typed[i].p.dilated_groups) device_case(dev, &typed[i], &split3, seed + 101 * (uint64_t)i + 5);
            /* CUDA takes the views unless ATTNVK_CUDA_DILATED_VIEWS=0 */
            const char *cuda_views = getenv("ATTNVK_CUDA_DILATED_VIEWS");
            const int views = apis[a] == ATTNVK_API_VULKAN || apis[a] == ATTNVK_API_OPENCL ||
                              (apis[a] == ATTNVK_API_CUDA && !(cuda_views && !strcmp(cuda_views, "0")));
            if (!dt && views)
                for (int i = 0; i < n; ++i)
                    if (typed[i].p.dilated_groups) {
                        view_row_range(dev, &typed[i]);
                        break;
                    }
            /* the tensor-core bodies that skip hidden tiles (OpenCL's mma-f16, Vulkan's register-softmax
             * matrix bodies): their emulations run the same code on any device, Vulkan's where the
             * device has no matrices of its own (with them, the default variant above is that body) */
            const attnvk_kernel_options emu = {.variant = apis[a] == ATTNVK_API_OPENCL ? "mma-f16-emu" : "coopmat-rs-emu"};
            const int vk_emu = apis[a] == ATTNVK_API_VULKAN && !attnvk_device_info_of(dev)->cooperative_matrix;
            if (dt && (apis[a] == ATTNVK_API_OPENCL || vk_emu))
                for (int i = 0; i < n; ++i) device_case(dev, &typed[i], &emu, seed + 101 * (uint64_t)i + 7);
        }
        attnvk_device_close(dev);
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
