/* Ring attention (issue #19) against the float64 reference: the schedule's
 * arithmetic (chunks cover the sequence once, zigzag balances causal work),
 * then whole runs over 1-4 ranks through the host transport: causal and
 * not, GQA, uneven shards, windows, softcap, ALiBi, both layouts, f32 and f16, every
 * output poisoned with NaN and the inputs replaced between two runs (a stale
 * accumulator would show), and the refusals.
 *   test_ring            virtual ranks on the CPU device
 *   test_ring mixed      ranks on the CPU, Vulkan and OpenCL devices at once
 *   test_ring API [G|all] [every]  G virtual ranks (default 2) on API's first
 *                        device, or one rank on each of its devices (all, up
 *                        to 4, then repeated); every: all the cases, not a few */
#include "test_util.h"

#include "core/ring_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

static void tally(int ok) { ok ? ++passed : ++failed; }

/* ---- the schedule ---- */

static void plan_checks(void)
{
    for (int g = 1; g <= 8; g++)
        for (int zigzag = 0; zigzag < 2; zigzag++)
            for (int n = 2 * g; n < 2 * g + 19; n += 3) {
                avk_ring_plan plan;
                if (!avk_ring_plan_make(&plan, g, n, zigzag)) {
                    printf("FAIL plan g=%d n=%d zigzag=%d refused\n", g, n, zigzag);
                    tally(0);
                    continue;
                }
                int owner_count[64] = {0}, ok = plan.begin[plan.chunks] == n;
                long work_min = -1, work_max = 0;
                for (int r = 0; r < g; r++) {
                    int c[2], m = avk_ring_rank_chunks(&plan, r, c);
                    long work = 0; /* visible (query, key) pairs of the causal problem */
                    for (int i = 0; i < m; i++) {
                        owner_count[c[i]]++;
                        for (int t = plan.begin[c[i]]; t < plan.begin[c[i] + 1]; t++) work += t + 1;
                        int len = avk_ring_chunk_len(&plan, c[i]);
                        ok &= len == n / plan.chunks || len == n / plan.chunks + 1;
                    }
                    work_min = work_min < 0 || work < work_min ? work : work_min;
                    work_max = work > work_max ? work : work_max;
                }
                for (int c = 0; c < plan.chunks; c++) ok &= owner_count[c] == 1;
                /* zigzag: ranks' causal work differs by less than one chunk-row's worth per rank */
                if (zigzag && n % plan.chunks == 0) ok &= work_max - work_min <= (long)n;
                if (!ok) printf("FAIL plan g=%d n=%d zigzag=%d: chunks or balance (work %ld..%ld)\n", g, n, zigzag,
                                work_min, work_max);
                tally(ok);
            }
    avk_ring_plan plan;
    tally(!avk_ring_plan_make(&plan, 4, 7, 1) && !avk_ring_plan_make(&plan, 0, 8, 0) && !avk_ring_plan_make(&plan, 65, 200, 0));
    avk_ring_plan_make(&plan, 3, 30, 1); /* 6 chunks of 5 tokens */
    const avk_ring_rules causal = {.causal = 1}, none = {0};
    const avk_ring_rules window = {.causal = 1, .window = 1, .window_left = 7, .window_right = -1};
    const avk_ring_rules both = {.window = 1, .window_left = 0, .window_right = 5};
    tally(avk_ring_block(&plan, 2, 1, &causal) == AVK_RING_FULL && avk_ring_block(&plan, 1, 1, &causal) == AVK_RING_BOUNDED &&
          avk_ring_block(&plan, 1, 2, &causal) == AVK_RING_SKIP && avk_ring_block(&plan, 1, 2, &none) == AVK_RING_FULL &&
          avk_ring_block(&plan, 3, 1, &window) == AVK_RING_BOUNDED && /* rows 15..19 see keys 8.. of 5..9 */
          avk_ring_block(&plan, 4, 1, &window) == AVK_RING_SKIP &&    /* rows 20..24 see keys 13.. */
          avk_ring_block(&plan, 2, 1, &window) == AVK_RING_BOUNDED && avk_ring_block(&plan, 2, 3, &both) == AVK_RING_BOUNDED &&
          avk_ring_block(&plan, 2, 4, &both) == AVK_RING_SKIP && avk_ring_block(&plan, 2, 2, &both) == AVK_RING_BOUNDED &&
          avk_ring_offset(&plan, 3, 1) == 10 && avk_ring_source(&plan, 0, 1) == 2 && avk_ring_source(&plan, 2, 2) == 0);
    printf("%s the schedule's arithmetic\n", failed ? "FAIL" : "ok  ");
}

/* ---- runs ---- */

typedef struct ring_case {
    const char *label;
    int ranks, batch, heads, kv_heads, seq, dim, causal;
    attnvk_dtype dtype;
    attnvk_layout layout;
    float softcap;
    int alibi;
    int contiguous;
    int window_left, window_right; /* both 0: no window */
} ring_case;

static void poison(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = NAN;
}

/* One upload + run + download with fresh inputs, checked against the reference. */
static int run_once(attnvk_ring *ring, const attnvk_problem *p, const float *slopes, uint64_t seed, const char *what)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed, &q, &k, &v);
    size_t rows = (size_t)p->batch * p->heads * p->seq_q;
    float *o = malloc(attnvk_o_elements(p) * sizeof(float)), *lse = malloc(rows * sizeof(float));
    float *ref_lse = malloc(rows * sizeof(float)), *ref_o = malloc(attnvk_o_elements(p) * sizeof(float));
    poison(o, attnvk_o_elements(p));
    poison(lse, rows);
    const attnvk_host_inputs in = {.q = q, .k = k, .v = v, .alibi_slopes = slopes};
    attnvk_ring_stats st = {0};
    attnvk_status s = attnvk_ring_upload(ring, &in);
    if (s == ATTNVK_OK) s = attnvk_ring_run(ring, 0, &st);
    if (s == ATTNVK_OK) s = attnvk_ring_download(ring, o, lse);
    int ok = s == ATTNVK_OK;
    if (!ok) printf("FAIL %s: %s: %s\n", what, attnvk_status_name(s), attnvk_last_error());
    if (ok) {
        attnvk_check c = attnvk_check_output_inputs(p, &in, o, NULL, 0);
        attnvk_reference_inputs(p, &in, ref_o, ref_lse);
        double lse_err = 0;
        size_t bad_lse = 0;
        for (size_t r = 0; r < rows; r++) {
            double e = fabs((double)lse[r] - ref_lse[r]) / fmax(1.0, fabs(ref_lse[r]));
            if (!(e <= (p->dtype == ATTNVK_F32 ? 1e-5 : 2e-3))) bad_lse++;
            if (e > lse_err) lse_err = e;
        }
        ok = c.passed && bad_lse == 0;
        printf("%s %s rel_l2 %.2e (tol %.0e) lse err %.1e, %d blocks in %d steps, %.1f ms\n", ok ? "ok  " : "FAIL", what,
               c.rel_l2, c.tolerance, lse_err, st.blocks, st.steps, st.total_ms);
    }
    free(q), free(k), free(v), free(o), free(lse), free(ref_lse), free(ref_o);
    return ok;
}

static void run_case(attnvk_device *const *devs, const ring_case *c, uint64_t seed)
{
    attnvk_problem p;
    attnvk_problem_init(&p);
    p.batch = c->batch, p.heads = c->heads, p.kv_heads = c->kv_heads, p.seq_q = p.seq_kv = c->seq;
    p.head_dim = c->dim, p.causal = c->causal, p.dtype = c->dtype, p.layout = c->layout;
    p.softcap = c->softcap, p.alibi = c->alibi;
    if (c->window_left || c->window_right) p.window = 1, p.window_left = c->window_left, p.window_right = c->window_right;
    float slopes[64];
    if (c->alibi) attnvk_alibi_slopes(c->heads, slopes);
    attnvk_ring_options o;
    attnvk_ring_options_init(&o);
    o.contiguous = c->contiguous;
    attnvk_ring *ring = NULL;
    attnvk_status s = attnvk_ring_create(devs, c->ranks, &p, &o, &ring);
    char what[200];
    snprintf(what, sizeof what, "%s G=%d B=%d H=%d/%d N=%d D=%d%s %s %s", c->label, c->ranks, c->batch, c->heads,
             c->kv_heads, c->seq, c->dim, c->causal ? " causal" : "", attnvk_dtype_name(c->dtype),
             c->layout == ATTNVK_LAYOUT_BSHD ? "bshd" : "bhsd");
    int no_f16 = 0;
    for (int i = 0; i < c->ranks; i++) no_f16 |= !attnvk_device_info_of(devs[i])->fp16;
    if (s == ATTNVK_ERROR_UNSUPPORTED && c->dtype == ATTNVK_F16 && no_f16) {
        printf("skip %s: %s\n", what, attnvk_last_error());
        return;
    }
    if (s != ATTNVK_OK) {
        printf("FAIL %s: create: %s\n", what, attnvk_last_error());
        tally(0);
        return;
    }
    tally(run_once(ring, &p, c->alibi ? slopes : NULL, seed, what));
    tally(run_once(ring, &p, c->alibi ? slopes : NULL, seed + 1, "  again, new inputs"));
    attnvk_ring_stats st;
    s = attnvk_ring_run(ring, ATTNVK_RING_NO_TRANSFERS, &st);
    tally(s == ATTNVK_OK && st.transfer_ms == 0);
    attnvk_ring_destroy(ring);
}

static const ring_case cases[] = {
    {"plain", 2, 1, 2, 2, 64, 32, 0, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 0, 0, 0, 0},
    {"causal zigzag", 2, 2, 4, 4, 96, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 0, 0, 0, 0},
    {"causal, uneven", 3, 1, 6, 2, 61, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BSHD, 0, 0, 0, 0, 0},
    {"GQA, uneven", 4, 2, 8, 2, 45, 64, 0, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 0, 0, 0, 0},
    {"causal, 4 ranks", 4, 1, 4, 1, 37, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 0, 0, 0, 0},
    {"causal contiguous", 3, 1, 4, 2, 50, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 0, 1, 0, 0},
    {"softcap", 3, 1, 4, 2, 48, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 20.0f, 0, 0, 0, 0},
    {"ALiBi", 3, 1, 8, 4, 53, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BSHD, 0, 1, 0, 0, 0},
    {"ALiBi, not causal", 2, 1, 4, 4, 40, 32, 0, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 1, 0, 0, 0},
    {"one rank", 1, 1, 2, 1, 33, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 0, 0, 0, 0},
    {"window", 3, 1, 4, 2, 60, 32, 1, ATTNVK_F32, ATTNVK_LAYOUT_BHSD, 0, 0, 0, 9, -1},
    {"window both sides, ALiBi", 4, 1, 4, 4, 50, 32, 0, ATTNVK_F32, ATTNVK_LAYOUT_BSHD, 0, 1, 0, 6, 11},
    {"f16 causal", 3, 2, 4, 2, 70, 64, 1, ATTNVK_F16, ATTNVK_LAYOUT_BHSD, 0, 0, 0, 0, 0},
    {"f16 softcap ALiBi window", 2, 1, 4, 2, 41, 64, 1, ATTNVK_F16, ATTNVK_LAYOUT_BSHD, 30.0f, 1, 0, 15, -1},
};

/* ---- refusals: one line each ---- */

static void refused(const char *label, attnvk_status got, attnvk_status want, const char *frag)
{
    const char *msg = attnvk_last_error();
    int ok = got == want && strstr(msg, frag) && !strchr(msg, '\n');
    printf("%s refuses %s: %s: %s\n", ok ? "ok  " : "FAIL", label, attnvk_status_name(got), msg);
    tally(ok);
}

static void refusals(attnvk_device *dev)
{
    attnvk_device *devs[2] = {dev, dev};
    attnvk_problem p;
    attnvk_problem_init(&p);
    p.batch = 1, p.heads = 2, p.kv_heads = 2, p.seq_q = p.seq_kv = 16, p.head_dim = 32;
    attnvk_ring *ring = NULL;
    attnvk_problem bad = p;
    bad.seq_kv = 20;
    refused("seq_q != seq_kv", attnvk_ring_create(devs, 2, &bad, NULL, &ring), ATTNVK_ERROR_UNSUPPORTED, "seq_kv");
    bad = p, bad.sinks = 1;
    refused("sinks", attnvk_ring_create(devs, 2, &bad, NULL, &ring), ATTNVK_ERROR_UNSUPPORTED, "sinks");
    bad = p, bad.dilated_groups = 1, bad.dilated_segment[0] = 8, bad.dilated_rate[0] = 2;
    refused("a dilated pattern", attnvk_ring_create(devs, 2, &bad, NULL, &ring), ATTNVK_ERROR_UNSUPPORTED, "patterns");
    bad = p, bad.seq_q = bad.seq_kv = 3, bad.causal = 1;
    refused("too few tokens", attnvk_ring_create(devs, 2, &bad, NULL, &ring), ATTNVK_ERROR_INVALID_ARGUMENT, "chunks");
    refused("0 ranks", attnvk_ring_create(devs, 0, &p, NULL, &ring), ATTNVK_ERROR_INVALID_ARGUMENT, "ranks");
    bad = p, bad.head_dim = 0;
    refused("a bad problem", attnvk_ring_create(devs, 2, &bad, NULL, &ring), ATTNVK_ERROR_INVALID_ARGUMENT, "");
    /* 4M tokens of 16 heads of 128: past one kernel's 2^31 - 1 elements, its 8 chunks are not */
    bad = p, bad.heads = bad.kv_heads = 16, bad.head_dim = 128, bad.seq_q = bad.seq_kv = 4 << 20, bad.causal = 1;
    refused("one kernel's limits", attnvk_problem_validate(&bad), ATTNVK_ERROR_INVALID_ARGUMENT, "too large");
    attnvk_status whole = attnvk_ring_validate(&bad, 4, NULL);
    printf("%s 4M tokens over 4 ranks: %s %s\n", whole == ATTNVK_OK ? "ok  " : "FAIL", attnvk_status_name(whole),
           whole == ATTNVK_OK ? "" : attnvk_last_error());
    tally(whole == ATTNVK_OK);
    refused("4M tokens over 2 ranks", attnvk_ring_validate(&bad, 2, NULL), ATTNVK_ERROR_INVALID_ARGUMENT,
            "a chunk of 1048576 tokens: tensor too large");
    attnvk_ring_options o;
    attnvk_ring_options_init(&o);
    o.contiguous = 1;
    refused("4M tokens on 4 contiguous ranks", attnvk_ring_validate(&bad, 4, &o), ATTNVK_ERROR_INVALID_ARGUMENT,
            "a chunk of 1048576 tokens");
    o.contiguous = 0;
    o.transport = ATTNVK_RING_DEVICE;
    refused("a device transport on the CPU", attnvk_ring_create(devs, 2, &p, &o, &ring), ATTNVK_ERROR_UNSUPPORTED,
            "no device transport");
    o.struct_size = 8;
    refused("struct_size 8", attnvk_ring_create(devs, 2, &p, &o, &ring), ATTNVK_ERROR_INVALID_ARGUMENT, "struct_size");
    if (attnvk_ring_create(devs, 2, &p, NULL, &ring) == ATTNVK_OK) {
        refused("a run before an upload", attnvk_ring_run(ring, 0, NULL), ATTNVK_ERROR_INVALID_ARGUMENT, "upload");
        refused("unknown flags", attnvk_ring_run(ring, 8, NULL), ATTNVK_ERROR_INVALID_ARGUMENT, "flags");
        const char *why = NULL, *name = attnvk_ring_transport_name(ring, &why);
        int b[2], e[2], b1[2], e1[2], n0 = attnvk_ring_shard(ring, 0, b, e), n1 = attnvk_ring_shard(ring, 1, b1, e1);
        b[1] = b1[0], e[1] = e1[0];
        int ok = !strcmp(name, "host") && why && strstr(why, "cpu") && n0 == 1 && n1 == 1 && b[0] == 0 && e[0] == 8 &&
                 b[1] == 8 && e[1] == 16 && attnvk_ring_shard(ring, 2, b1, e1) == 0;
        printf("%s transport %s (%s), shards [%d,%d) [%d,%d)\n", ok ? "ok  " : "FAIL", name, why ? why : "-", b[0], e[0],
               b[1], e[1]);
        tally(ok);
        attnvk_ring_destroy(ring);
    } else {
        tally(0);
    }
}

static attnvk_device *open_first(attnvk_context *ctx, const char *api_name)
{
    attnvk_api api;
    if (!attnvk_api_from_name(api_name, &api)) return NULL;
    return avk_test_open_api(ctx, api);
}

int main(int argc, char **argv)
{
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *devs[4] = {0};
    const char *mode = argc > 1 ? argv[1] : "cpu";
    int ranks_max = 4;
    if (!strcmp(mode, "mixed")) { /* one rank per API present, then the CPU again */
        const char *apis[] = {"cpu", "vulkan", "opencl"};
        int n = 0;
        for (int i = 0; i < 3; i++)
            if ((devs[n] = open_first(ctx, apis[i]))) n++;
        if (n < 2) {
            printf("skip: fewer than two APIs have a device\n");
            return 77;
        }
        for (; n < 4; n++) devs[n] = devs[0];
        for (int i = 0; i < 4; i++)
            printf("rank %d: %s %s\n", i, attnvk_api_name(attnvk_device_info_of(devs[i])->api),
                   attnvk_device_info_of(devs[i])->name);
    } else if (argc > 2 && !strcmp(argv[2], "all")) { /* one rank per device of the API */
        attnvk_api api;
        int idx[4], n = attnvk_api_from_name(mode, &api) ? attnvk_device_select(ctx, mode, idx, 4) : 0;
        for (int i = 0; i < n; i++)
            if (attnvk_device_open(ctx, idx[i], &devs[i]) != ATTNVK_OK) {
                printf("FAIL cannot open %s device %d: %s\n", mode, i, attnvk_last_error());
                return 1;
            }
        if (n == 0) {
            printf("skip: no %s device\n", mode);
            return 77;
        }
        for (int i = n; i < 4; i++) devs[i] = devs[i % n];
        ranks_max = n;
        printf("%d %s devices, one rank each\n", n, mode);
    } else {
        attnvk_device *dev = open_first(ctx, mode);
        if (!dev) return !strcmp(mode, "cpu") ? 1 : 77;
        ranks_max = argc > 2 ? atoi(argv[2]) : !strcmp(mode, "cpu") ? 4 : 2;
        for (int i = 0; i < 4; i++) devs[i] = dev;
    }
    const int every = !strcmp(mode, "cpu") || (argc > 3 && !strcmp(argv[3], "every"));
    if (!strcmp(mode, "cpu")) {
        plan_checks();
        refusals(devs[0]);
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ring_case c = cases[i];
        if (c.ranks > ranks_max) c.ranks = ranks_max;
        if (!every && i % 3 != 1 && i != sizeof cases / sizeof *cases - 1) continue; /* a few elsewhere */
        run_case(devs, &c, seed + 17 * i);
    }
    for (int i = 0; i < 4; i++) { /* each distinct device once */
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= devs[j] == devs[i];
        if (!seen) attnvk_device_close(devs[i]);
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
