/* The backward pass's test cases (issue #18), shared by every device's
 * backward test (tests/core/test_cpu_backward.c, tests/cuda/test_cuda_backward.c,
 * tests/hip/test_hip_backward.c):
 * fresh random inputs, attnvk_attention_backward_host (every output poisoned
 * with NaN first) against attnvk_reference_backward, rel-L2 of dQ, dK, dV and
 * d(sinks) (attnvk_dsinks_error) each within attnvk_backward_tolerance (NaN never passes), over
 * GQA/MQA, causal with Nq != Nk both ways and both alignments, odd lengths,
 * D 64/128/256, Dk 192/Dv 128, windows, softcap, ALiBi, masks, sinks and
 * ragged lengths; and two runs bit-identical. Static functions: one
 * includer per program. */
#ifndef ATTNVK_TEST_BACKWARD_CASES_H
#define ATTNVK_TEST_BACKWARD_CASES_H

#include "attnvk/attnvk.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct bcase {
    const char *label;
    attnvk_problem p;
    int32_t lens[2]; /* ragged: cycled over the batch */
} bcase;

typedef struct grads {
    float *q, *k, *v, *d_o, *mask, *sinks, *slopes, *o, *dq, *dk, *dv, *ds;
    int32_t lens[8];
} grads;

static attnvk_problem shape(int B, int H, int Hkv, int Nq, int Nk, int D)
{
    return (attnvk_problem){.batch = B, .heads = H, .kv_heads = Hkv, .seq_q = Nq, .seq_kv = Nk, .head_dim = D};
}

static int make_inputs(const attnvk_problem *p, const bcase *c, uint64_t seed, grads *g)
{
    memset(g, 0, sizeof *g);
    avk_test_inputs(p, seed, &g->q, &g->k, &g->v);
    const size_t no = attnvk_o_elements(p), H = (size_t)p->heads;
    const size_t nmask = p->mask ? (size_t)p->mask_batch * p->mask_heads * p->seq_q * (size_t)p->seq_kv : 1;
    g->d_o = malloc(sizeof(float) * no), g->o = malloc(sizeof(float) * no), g->mask = malloc(sizeof(float) * nmask);
    g->sinks = malloc(sizeof(float) * H), g->slopes = malloc(sizeof(float) * H), g->ds = malloc(sizeof(float) * H);
    g->dq = malloc(sizeof(float) * attnvk_q_elements(p)), g->dk = malloc(sizeof(float) * attnvk_kv_elements(p));
    g->dv = malloc(sizeof(float) * attnvk_v_elements(p));
    if (!g->d_o || !g->o || !g->mask || !g->sinks || !g->slopes || !g->ds || !g->dq || !g->dk || !g->dv) return 0;
    attnvk_fill_random(g->d_o, no, seed ^ 0x644f);
    attnvk_round_to_dtype(p->dtype, g->d_o, no);
    attnvk_fill_random(g->mask, nmask, seed ^ 0x6d61736bu);
    for (size_t i = 3; p->mask && i < nmask; i += 10) g->mask[i] = -INFINITY; /* 10% masked out */
    attnvk_round_to_dtype(p->mask ? p->mask_dtype : ATTNVK_F32, g->mask, nmask);
    attnvk_fill_random(g->sinks, H, seed ^ 0x73696e6bu);
    attnvk_alibi_slopes(p->heads, g->slopes);
    for (int b = 0; b < p->batch && b < 8; ++b) g->lens[b] = c->lens[b % 2];
    return 1;
}

static void free_inputs(grads *g)
{
    float *all[] = {g->q, g->k, g->v, g->d_o, g->mask, g->sinks, g->slopes, g->o, g->dq, g->dk, g->dv, g->ds};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) free(all[i]);
}

static attnvk_host_inputs inputs_of(const attnvk_problem *p, const grads *g)
{
    return (attnvk_host_inputs){.q = g->q, .k = g->k, .v = g->v, .kv_lens = p->ragged ? g->lens : NULL,
                                .mask = p->mask ? g->mask : NULL, .sinks = p->sinks ? g->sinks : NULL,
                                .alibi_slopes = p->alibi ? g->slopes : NULL};
}

static double rel_l2(const float *x, const float *ref, size_t n, size_t *nonfinite)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(x[i])) ++*nonfinite;
        num += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* run_case's backward mode: 1 asks for the deterministic one (a backend's default may use atomics) */
static int backward_deterministic;
/* when set, run_case fails unless the backward's kernel (attnvk_backward_options.info's
 * variant) starts with it: a test of one body must not pass on a fallback */
static const char *backward_expect_variant;
/* ... and unless its params (attnvk_kernel_info) contain this, e.g. "dq=atomic" */
static const char *backward_expect_params;

/* One case in one dtype on dev with the kernel opts choose (NULL: the device's default); 1 on pass. */
static int run_case_opts(attnvk_device *dev, const bcase *c, attnvk_dtype dtype, const attnvk_kernel_options *opts,
                         uint64_t seed)
{
    const char *variant = opts ? (opts->implementation ? opts->implementation : opts->variant) : NULL;
    attnvk_problem p = c->p;
    p.dtype = dtype;
    grads g, ref;
    int ok = make_inputs(&p, c, seed, &g);
    memset(&ref, 0, sizeof ref);
    const size_t nq = attnvk_q_elements(&p), nk = attnvk_kv_elements(&p), nv = attnvk_v_elements(&p);
    ref.dq = malloc(sizeof(float) * nq), ref.dk = malloc(sizeof(float) * nk), ref.dv = malloc(sizeof(float) * nv);
    ref.ds = malloc(sizeof(float) * (size_t)p.heads);
    if (!ok || !ref.dq || !ref.dk || !ref.dv || !ref.ds) {
        printf("FAIL %s: out of host memory\n", c->label);
        return 0;
    }
    const attnvk_host_inputs in = inputs_of(&p, &g);
    const attnvk_host_grads out = {.d_o = g.d_o, .dq = g.dq, .dk = g.dk, .dv = g.dv, .d_sinks = g.ds};
    const attnvk_host_grads want = {.d_o = g.d_o, .dq = ref.dq, .dk = ref.dk, .dv = ref.dv, .d_sinks = ref.ds};
    attnvk_backward_options bopts;
    attnvk_backward_options_init(&bopts);
    bopts.deterministic = backward_deterministic;
    attnvk_kernel_info binfo;
    memset(&binfo, 0, sizeof binfo);
    bopts.info = &binfo;
    double fwd_ms = 0, bwd_ms = 0;
    float *lse = malloc(sizeof(float) * (size_t)p.batch * p.heads * p.seq_q);
    attnvk_status s = lse ? attnvk_attention_backward_host(dev, &p, opts, &bopts, &in, &out, g.o, lse, NULL, &fwd_ms, &bwd_ms)
                          : ATTNVK_ERROR_OUT_OF_MEMORY;
    if (s != ATTNVK_OK) {
        printf("FAIL %-34s %s: %s: %s\n", c->label, attnvk_dtype_name(dtype), attnvk_status_name(s), attnvk_last_error());
        ok = 0;
    } else {
        attnvk_reference_backward(&p, &in, &want);
        size_t bad = 0;
        const double eq = rel_l2(g.dq, ref.dq, nq, &bad), ek = rel_l2(g.dk, ref.dk, nk, &bad);
        const double ev = rel_l2(g.dv, ref.dv, nv, &bad);
        const double es = p.sinks ? attnvk_dsinks_error(&p, &in, g.d_o, g.ds, ref.ds) : 0; /* NaN fails */
        const double tol = attnvk_backward_tolerance(dtype);
        const int body_ok = (!backward_expect_variant ||
                             !strncmp(binfo.variant, backward_expect_variant, strlen(backward_expect_variant))) &&
                            (!backward_expect_params || strstr(binfo.params, backward_expect_params));
        ok = bad == 0 && eq <= tol && ek <= tol && ev <= tol && es <= tol && body_ok;
        printf("%s %-34s %-4s %s%s: dq %.1e dk %.1e dv %.1e dsinks %.1e nonfinite %zu (%.1f ms, %s)\n", ok ? "ok  " : "FAIL",
               c->label, attnvk_dtype_name(dtype), variant ? variant : "default",
               backward_deterministic ? " deterministic" : "", eq, ek, ev, es, bad, bwd_ms,
               binfo.variant[0] ? binfo.variant : "backward unnamed");
    }
    fflush(stdout);
    free_inputs(&g);
    free(ref.dq), free(ref.dk), free(ref.dv), free(ref.ds), free(lse);
    return ok;
}

/* One case in one dtype on dev (variant NULL: the device's default kernel); 1 on pass. */
static inline int run_case(attnvk_device *dev, const bcase *c, attnvk_dtype dtype, const char *variant, uint64_t seed)
{
    const attnvk_kernel_options opts = {.variant = variant};
    return run_case_opts(dev, c, dtype, &opts, seed);
}

static int cases(bcase *t)
{
    int n = 0;
#define ADD(lbl, B, H, Hkv, Nq, Nk, D) (t[n] = (bcase){.label = lbl, .p = shape(B, H, Hkv, Nq, Nk, D)}, &t[n++].p)
    attnvk_problem *p;
    p = ADD("GQA 1 causal Nq<Nk odd", 1, 3, 3, 37, 129, 64), p->causal = 1;
    p = ADD("GQA 4 causal Nq>Nk bshd", 2, 8, 2, 129, 37, 64), p->causal = 1, p->layout = ATTNVK_LAYOUT_BSHD;
    p = ADD("MQA D128", 1, 4, 1, 64, 100, 128);
    p = ADD("top-left causal Nq>Nk D128", 1, 2, 1, 90, 50, 128), p->causal = 1, p->align = ATTNVK_ALIGN_TOP_LEFT;
    p = ADD("D256 causal", 1, 2, 2, 40, 70, 256), p->causal = 1;
    p = ADD("window+softcap GQA 2", 1, 4, 2, 70, 70, 64), p->window = 1, p->window_left = 20, p->window_right = 5,
    p->softcap = 5;
    p = ADD("alibi+mask per batch/head (-inf)", 2, 4, 2, 33, 77, 64), p->alibi = 1, p->mask = 1, p->mask_batch = 2,
    p->mask_heads = 4;
    p = ADD("mask f16 broadcast+sinks causal", 2, 2, 1, 45, 60, 64), p->mask = 1, p->mask_batch = 1,
    p->mask_heads = 1, p->mask_dtype = ATTNVK_F16, p->sinks = 1, p->causal = 1;
    p = ADD("sinks+window+softcap causal MQA", 1, 4, 1, 50, 90, 64), p->sinks = 1, p->window = 1,
    p->window_left = 16, p->window_right = -1, p->softcap = 8, p->causal = 1;
    p = ADD("Dk192/Dv128 causal", 1, 2, 1, 40, 40, 192), p->head_dim_v = 128, p->causal = 1;
    p = ADD("ragged causal", 2, 2, 1, 20, 80, 64), p->ragged = 1, p->causal = 1;
    t[n - 1].lens[0] = 53, t[n - 1].lens[1] = 80;
#undef ADD
    return n;
}

/* Two runs of one case in dtype with opts' kernel: every gradient bit-identical. */
static int deterministic_opts(attnvk_device *dev, const attnvk_kernel_options *opts, attnvk_dtype dtype, uint64_t seed)
{
    attnvk_problem p = shape(2, 8, 2, 150, 140, 64);
    p.causal = 1, p.sinks = 1, p.dtype = dtype;
    const bcase c = {.label = "determinism", .p = p};
    grads a, b;
    int ok = make_inputs(&p, &c, seed, &a) && make_inputs(&p, &c, seed, &b);
    attnvk_backward_options bopts;
    attnvk_backward_options_init(&bopts);
    bopts.deterministic = 1;
    const attnvk_host_inputs ina = inputs_of(&p, &a), inb = inputs_of(&p, &b);
    const attnvk_host_grads ga = {.d_o = a.d_o, .dq = a.dq, .dk = a.dk, .dv = a.dv, .d_sinks = a.ds};
    const attnvk_host_grads gb = {.d_o = b.d_o, .dq = b.dq, .dk = b.dk, .dv = b.dv, .d_sinks = b.ds};
    ok = ok && attnvk_attention_backward_host(dev, &p, opts, &bopts, &ina, &ga, a.o, NULL, NULL, NULL, NULL) == ATTNVK_OK &&
         attnvk_attention_backward_host(dev, &p, opts, &bopts, &inb, &gb, b.o, NULL, NULL, NULL, NULL) == ATTNVK_OK;
    ok = ok && !memcmp(a.dq, b.dq, sizeof(float) * attnvk_q_elements(&p)) &&
         !memcmp(a.dk, b.dk, sizeof(float) * attnvk_kv_elements(&p)) &&
         !memcmp(a.dv, b.dv, sizeof(float) * attnvk_v_elements(&p)) && !memcmp(a.ds, b.ds, sizeof(float) * 8);
    printf("%s two runs bit-identical (%s causal sinks GQA 4)\n", ok ? "ok  " : "FAIL", attnvk_dtype_name(dtype));
    free_inputs(&a);
    free_inputs(&b);
    return ok;
}

/* the same with the device's default kernel, in dtype or in bf16 (devices that take it) */
static inline int deterministic_dtype(attnvk_device *dev, uint64_t seed, attnvk_dtype dtype)
{
    return deterministic_opts(dev, NULL, dtype, seed);
}
static inline int deterministic(attnvk_device *dev, uint64_t seed) { return deterministic_dtype(dev, seed, ATTNVK_BF16); }

/* A GPU backend's whole test: on api's first device, the shared cases and the
 * backend's own (extra fills its list, returns the count) in f32, f16 and
 * bf16, then determinism; skipped (passes, says so) without such a device.
 * The status avk_test_finish returns. (inline: the CPU test has its own main.) */
static inline int device_backward_test(attnvk_api api, int (*extra)(bcase *t))
{
    const uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, api);
    if (!dev) {
        printf("skipped: no %s device\n", attnvk_api_name(api));
        attnvk_context_destroy(ctx);
        return avk_test_finish(0, 0);
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    if (info) printf("device: %s (%s)\n", info->name, info->architecture);
    bcase t[32];
    int n = cases(t);
    n += extra(t + n);
    int passed = 0, failed = 0;
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    for (int d = 0; d < 3; ++d)
        for (int i = 0; i < n; ++i) run_case(dev, &t[i], dtypes[d], NULL, seed + 31 * (uint64_t)i) ? ++passed : ++failed;
    /* a default that may use atomics (the tensor-core bodies' dQ) has a deterministic mode beside it */
    backward_deterministic = 1;
    for (int d = 1; d < 3; ++d)
        for (int i = 0; i < n; ++i) run_case(dev, &t[i], dtypes[d], NULL, seed + 37 * (uint64_t)i) ? ++passed : ++failed;
    backward_deterministic = 0;
    deterministic(dev, seed) ? ++passed : ++failed;
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}

/* Whether dev offers implementation `name` and it loads; prints why not ("skipped: ..."). */
static inline int backward_impl_available(attnvk_device *dev, const char *name)
{
    attnvk_impl_info impls[8];
    const int n = attnvk_device_implementations(dev, impls, 8);
    for (int i = 0; i < n && i < 8; ++i)
        if (!strcmp(impls[i].name, name)) {
            if (!impls[i].available) printf("skipped: %s unavailable: %s\n", name, impls[i].reason);
            return impls[i].available;
        }
    printf("skipped: this build has no %s implementation\n", name);
    return 0;
}

#endif
