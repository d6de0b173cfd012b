/* The reference's score modifications and visibility bounds (issue #13)
 * against a second, literal reading of attnvk.h's definition: a full score
 * matrix per (b, h), visibility decided key by key, the sink added to the
 * softmax as one more logit. Random combinations of softcap, windows, ALiBi,
 * sinks, masks (with -inf and broadcasting), both alignments, ragged lengths,
 * Nq above and below Nk, V head dims other than K's (DeepSeek MLA's pairs and
 * small unequal ones); then the validation errors, the ALiBi slopes, the
 * feature bits core refuses by and the visible-pair FLOPs. */
#include "attnvk/attnvk.h"
#include "core/kv_cache.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    attnvk_problem p;
    float *q, *k, *v, *mask, *sinks, *slopes;
    int32_t *lens;
} scored_case;

/* element d of row (b, head, s) in a tensor of `heads` heads, `seq` rows of `dim` values */
static size_t at(const attnvk_problem *p, int b, int head, int s, int d, int heads, int seq, int dim)
{
    return p->layout == ATTNVK_LAYOUT_BHSD ? (((size_t)b * heads + head) * seq + s) * dim + d
                                           : (((size_t)b * seq + s) * heads + head) * dim + d;
}

static int dim_v(const attnvk_problem *p) { return p->head_dim_v > 0 ? p->head_dim_v : p->head_dim; }

static size_t q_at(const attnvk_problem *p, int b, int h, int i, int d)
{
    return at(p, b, h, i, d, p->heads, p->seq_q, p->head_dim);
}

static size_t kv_at(const attnvk_problem *p, int b, int g, int j, int d)
{
    return at(p, b, g, j, d, p->kv_heads, p->seq_kv, p->head_dim);
}

static size_t v_at(const attnvk_problem *p, int b, int g, int j, int d)
{
    return at(p, b, g, j, d, p->kv_heads, p->seq_kv, dim_v(p));
}

static size_t o_at(const attnvk_problem *p, int b, int h, int i, int d)
{
    return at(p, b, h, i, d, p->heads, p->seq_q, dim_v(p));
}

/* attnvk.h's definition, step by step, for every row; o in p's layout, lse [B][H][Nq] */
static void literal(const scored_case *c, double *o, double *lse)
{
    const attnvk_problem *p = &c->p;
    const int Nq = p->seq_q, Nk = p->seq_kv, D = p->head_dim;
    const double scale = attnvk_problem_scale(p);
    double *s = malloc(sizeof(double) * Nk);
    int *visible = malloc(sizeof(int) * Nk);
    for (int b = 0; b < p->batch; ++b)
        for (int h = 0; h < p->heads; ++h)
            for (int i = 0; i < Nq; ++i) {
                const int g = h / (p->heads / p->kv_heads);
                const int len = c->lens ? c->lens[b] : Nk;
                const long long ip = p->align == ATTNVK_ALIGN_TOP_LEFT ? i : (long long)i + len - Nq;
                double m = p->sinks ? c->sinks[h] : -INFINITY;
                for (int j = 0; j < Nk; ++j) {
                    visible[j] = j < len;
                    if (p->window && p->window_left >= 0 && j < ip - p->window_left) visible[j] = 0;
                    if (p->window && p->window_right >= 0 && j > ip + p->window_right) visible[j] = 0;
                    if (p->causal && j > ip) visible[j] = 0;
                    if (!visible[j]) continue;
                    double x = 0;
                    for (int d = 0; d < D; ++d) x += (double)c->q[q_at(p, b, h, i, d)] * c->k[kv_at(p, b, g, j, d)];
                    x *= scale;
                    if (p->softcap > 0) x = p->softcap * tanh(x / p->softcap);
                    if (p->alibi) x += c->slopes[h] * (double)(j - ip);
                    if (p->mask) {
                        const int mb = p->mask_batch == 1 ? 0 : b, mh = p->mask_heads == 1 ? 0 : h;
                        x += c->mask[(((size_t)mb * p->mask_heads + mh) * Nq + i) * Nk + j];
                    }
                    s[j] = x;
                    if (x > m) m = x;
                }
                double denom = 0;
                if (m != -INFINITY) {
                    if (p->sinks) denom += exp(c->sinks[h] - m);
                    for (int j = 0; j < Nk; ++j)
                        if (visible[j]) denom += exp(s[j] - m);
                }
                for (int d = 0; d < dim_v(p); ++d) {
                    double acc = 0;
                    if (denom > 0)
                        for (int j = 0; j < Nk; ++j)
                            if (visible[j]) acc += exp(s[j] - m) / denom * c->v[v_at(p, b, g, j, d)];
                    o[o_at(p, b, h, i, d)] = acc;
                }
                lse[((size_t)b * p->heads + h) * Nq + i] = denom > 0 ? m + log(denom) : -INFINITY;
            }
    free(s);
    free(visible);
}

static unsigned rnd(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(*state >> 33);
}

static float *random_floats(size_t n, uint64_t seed)
{
    float *x = malloc(sizeof(float) * (n ? n : 1));
    attnvk_fill_random(x, n, seed);
    return x;
}

static void make_case(scored_case *c, uint64_t seed, int combo)
{
    uint64_t st = seed;
    memset(c, 0, sizeof *c);
    attnvk_problem *p = &c->p;
    p->batch = 1 + rnd(&st) % 2;
    p->kv_heads = 1 + rnd(&st) % 2;
    p->heads = p->kv_heads * (1 + rnd(&st) % 3);
    p->seq_q = 1 + rnd(&st) % 9;
    p->seq_kv = 1 + rnd(&st) % 13;
    p->head_dim = 4 + 4 * (rnd(&st) % 3);
    p->dtype = ATTNVK_F32;
    p->layout = rnd(&st) % 2 ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD;
    p->causal = combo & 1;
    p->align = (combo >> 1) & 1 ? ATTNVK_ALIGN_TOP_LEFT : ATTNVK_ALIGN_BOTTOM_RIGHT;
    if ((combo >> 2) & 1) {
        p->window = 1;
        p->window_left = (int)(rnd(&st) % 6) - 1;
        p->window_right = (int)(rnd(&st) % 6) - 1;
    }
    if ((combo >> 3) & 1) p->softcap = 0.5f + (float)(rnd(&st) % 4);
    p->alibi = (combo >> 4) & 1;
    p->sinks = (combo >> 5) & 1;
    p->mask = (combo >> 6) & 1;
    p->scale = 0.7f;
    if (p->mask) {
        p->mask_batch = rnd(&st) % 2 ? p->batch : 1;
        p->mask_heads = rnd(&st) % 2 ? p->heads : 1;
        size_t n = (size_t)p->mask_batch * p->mask_heads * p->seq_q * p->seq_kv;
        c->mask = random_floats(n, seed + 1);
        for (size_t e = 0; e < n; ++e)
            if (rnd(&st) % 4 == 0) c->mask[e] = -INFINITY; /* some rows end up fully masked */
    }
    if (p->sinks) c->sinks = random_floats((size_t)p->heads, seed + 2);
    if (p->alibi) {
        c->slopes = malloc(sizeof(float) * p->heads);
        attnvk_alibi_slopes(p->heads, c->slopes);
    }
    if (rnd(&st) % 2) { /* ragged: lengths 0 .. Nk */
        p->ragged = 1;
        c->lens = malloc(sizeof(int32_t) * p->batch);
        for (int b = 0; b < p->batch; ++b) c->lens[b] = (int32_t)(rnd(&st) % (unsigned)(p->seq_kv + 1));
    }
    if (rnd(&st) % 3 == 0) /* V and O narrower or wider than Q and K (the reference takes any pair) */
        p->head_dim_v = p->head_dim == 4 ? 8 : p->head_dim - 4;
    c->q = random_floats(attnvk_q_elements(p), seed + 3);
    c->k = random_floats(attnvk_kv_elements(p), seed + 4);
    c->v = random_floats(attnvk_v_elements(p), seed + 5);
}

/* DeepSeek MLA's shapes with the score features: prefill 192/128, absorbed decode 576/512 (GQA) */
static void make_mla_case(scored_case *c, uint64_t seed, int decode)
{
    memset(c, 0, sizeof *c);
    attnvk_problem *p = &c->p;
    p->batch = 2, p->dtype = ATTNVK_F32, p->causal = 1;
    if (decode) {
        p->heads = 8, p->kv_heads = 2, p->seq_q = 1, p->seq_kv = 23, p->head_dim = 576, p->head_dim_v = 512;
        p->window = 1, p->window_left = 9, p->window_right = -1, p->sinks = 1, p->softcap = 20.f;
    } else {
        p->heads = 4, p->kv_heads = 2, p->seq_q = 9, p->seq_kv = 14, p->head_dim = 192, p->head_dim_v = 128;
        p->layout = ATTNVK_LAYOUT_BSHD, p->align = ATTNVK_ALIGN_TOP_LEFT;
        p->window = 1, p->window_left = 4, p->window_right = 1, p->alibi = 1, p->mask = 1;
        p->mask_batch = 1, p->mask_heads = p->heads;
        size_t n = (size_t)p->heads * p->seq_q * p->seq_kv;
        c->mask = random_floats(n, seed + 1);
        c->mask[3] = -INFINITY;
        c->slopes = malloc(sizeof(float) * p->heads);
        attnvk_alibi_slopes(p->heads, c->slopes);
    }
    if (p->sinks) c->sinks = random_floats((size_t)p->heads, seed + 2);
    c->q = random_floats(attnvk_q_elements(p), seed + 3);
    c->k = random_floats(attnvk_kv_elements(p), seed + 4);
    c->v = random_floats(attnvk_v_elements(p), seed + 5);
}

static void free_case(scored_case *c)
{
    free(c->q), free(c->k), free(c->v), free(c->mask), free(c->sinks), free(c->slopes), free(c->lens);
}

/* worst |reference - literal| over O and the LSE of one case; -1 on a mismatch in infinities */
static double compare(const scored_case *c)
{
    const attnvk_problem *p = &c->p;
    size_t no = attnvk_o_elements(p), nl = (size_t)p->batch * p->heads * p->seq_q;
    float *o = malloc(sizeof(float) * no), *lse = malloc(sizeof(float) * nl);
    double *o_lit = malloc(sizeof(double) * no), *lse_lit = malloc(sizeof(double) * nl);
    attnvk_host_inputs in = {.q = c->q, .k = c->k, .v = c->v, .kv_lens = c->lens, .mask = c->mask, .sinks = c->sinks, .alibi_slopes = c->slopes};
    attnvk_reference_inputs(p, &in, o, lse);
    literal(c, o_lit, lse_lit);
    double worst = 0;
    for (size_t e = 0; e < no; ++e) {
        double d = fabs(o[e] - o_lit[e]);
        if (!(d <= worst)) worst = d; /* NaN propagates */
    }
    for (size_t e = 0; e < nl && worst >= 0; ++e) {
        if (isinf(lse_lit[e]) || isinf(lse[e])) {
            if (!(isinf(lse_lit[e]) && isinf(lse[e]))) worst = -1;
            continue;
        }
        double d = fabs(lse[e] - lse_lit[e]);
        if (!(d <= worst)) worst = d;
    }
    free(o), free(lse), free(o_lit), free(lse_lit);
    return worst;
}

static int refuses(attnvk_problem p, const char *needle)
{
    attnvk_status s = attnvk_problem_validate(&p);
    return s == ATTNVK_ERROR_INVALID_ARGUMENT && strstr(attnvk_last_error(), needle) != NULL;
}

int main(void)
{
    int passed = 0;
    /* every combination of the 7 switches, 6 random shapes each */
    int bad = 0, zero_rows = 0;
    for (int combo = 0; combo < 128; ++combo)
        for (int rep = 0; rep < 6; ++rep) {
            scored_case c;
            make_case(&c, 1000u * (uint64_t)combo + rep, combo);
            double worst = compare(&c);
            if (!(worst >= 0 && worst < 1e-5)) {
                if (bad++ < 5)
                    EXPECT(0, "combo %d rep %d (B%d H%d/%d Nq%d Nk%d D%d window %d:%d,%d softcap %g): worst %g", combo,
                           rep, c.p.batch, c.p.heads, c.p.kv_heads, c.p.seq_q, c.p.seq_kv, c.p.head_dim, c.p.window,
                           c.p.window_left, c.p.window_right, c.p.softcap, worst);
            }
            free_case(&c);
        }
    EXPECT(bad == 0, "%d of 768 cases differ from the literal definition", bad);
    passed += bad == 0;

    /* MLA's pairs, valid problems, through the reference and attnvk_check_output_inputs */
    for (int decode = 0; decode < 2; ++decode) {
        scored_case c;
        const uint64_t seed = avk_test_seed() + 77u * (uint64_t)decode;
        make_mla_case(&c, seed, decode);
        const double worst = compare(&c);
        int ok = attnvk_problem_validate(&c.p) == ATTNVK_OK && worst >= 0 && worst < 1e-5;
        float *o = malloc(sizeof(float) * attnvk_o_elements(&c.p));
        attnvk_host_inputs in = {.q = c.q, .k = c.k, .v = c.v, .mask = c.mask, .sinks = c.sinks, .alibi_slopes = c.slopes};
        attnvk_reference_inputs(&c.p, &in, o, NULL);
        const attnvk_check chk = attnvk_check_output_inputs(&c.p, &in, o, NULL, 0);
        ok &= chk.passed; /* O rounded to f32 against float64 */
        EXPECT(ok, "Dk %d / Dv %d vs the literal definition: worst %g, self-check rel_l2 %g (%s)", c.p.head_dim,
               c.p.head_dim_v, worst, chk.rel_l2, attnvk_last_error());
        passed += ok;
        free(o);
        free_case(&c);
    }

    /* a fully hidden row with a sink: zeros and LSE = the sink; the next row sees its key */
    {
        attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 3, .seq_kv = 1, .head_dim = 4,
                            .causal = 1, .sinks = 1};
        float q[12], k[4], v[4], sink = 0.25f, o[12], lse[3];
        attnvk_fill_random(q, 12, 11);
        attnvk_fill_random(k, 4, 12);
        attnvk_fill_random(v, 4, 13);
        attnvk_host_inputs in = {.q = q, .k = k, .v = v, .sinks = &sink};
        attnvk_reference_inputs(&p, &in, o, lse);
        int ok = lse[0] == sink && lse[1] == sink && lse[2] > sink; /* rows 0, 1: i' < 0 */
        for (int d = 0; d < 8; ++d) ok &= o[d] == 0.f;
        ok &= o[8] != 0.f;
        zero_rows = ok;
    }
    EXPECT(zero_rows, "a row with only a sink: zeros, LSE = sink");
    passed += zero_rows;

    /* ggml's ALiBi slopes: H=8 halves from 1/2; H=12 adds 2^-0.5, 2^-1.5, ... */
    float sl[12];
    attnvk_alibi_slopes(8, sl);
    int slopes_ok = fabsf(sl[0] - 0.5f) < 1e-7f && fabsf(sl[7] - 1.0f / 256) < 1e-9f;
    attnvk_alibi_slopes(12, sl);
    slopes_ok &= fabsf(sl[7] - 1.0f / 256) < 1e-9f && fabsf(sl[8] - (float)pow(2, -0.5)) < 1e-7f &&
                 fabsf(sl[9] - (float)pow(2, -1.5)) < 1e-7f;
    EXPECT(slopes_ok, "ALiBi slopes %g %g %g", sl[0], sl[8], sl[9]);
    passed += slopes_ok;

    /* validation: one line naming the problem */
    attnvk_problem base = {.batch = 2, .heads = 4, .kv_heads = 2, .seq_q = 8, .seq_kv = 8, .head_dim = 16};
    attnvk_problem w = base;
    w.window = 1, w.window_left = -2, w.window_right = 4;
    attnvk_problem m = base;
    m.mask = 1, m.mask_batch = 3, m.mask_heads = 1;
    attnvk_problem mh = base;
    mh.mask = 1, mh.mask_batch = 1, mh.mask_heads = 2;
    attnvk_problem md = base;
    md.mask = 1, md.mask_batch = 2, md.mask_heads = 4, md.mask_dtype = ATTNVK_BF16;
    attnvk_problem sc = base;
    sc.softcap = -1;
    attnvk_problem al = base;
    al.align = (attnvk_causal_align)7;
    int refused = refuses(w, "window sides") && refuses(m, "mask batch dimension 3") &&
                  refuses(mh, "mask head dimension 2") && refuses(md, "mask dtype") && refuses(sc, "softcap") &&
                  refuses(al, "causal alignment");
    EXPECT(refused, "bad windows, masks, softcaps and alignments refused: last error %s", attnvk_last_error());
    passed += refused;

    /* head dims: MLA's unequal pairs pass, others are refused naming both dims */
    attnvk_problem dv = base;
    dv.head_dim = 192, dv.head_dim_v = 128;
    int dims_ok = attnvk_problem_validate(&dv) == ATTNVK_OK;
    dv.head_dim = 576, dv.head_dim_v = 512;
    dims_ok &= attnvk_problem_validate(&dv) == ATTNVK_OK;
    dv.head_dim_v = 576; /* equal: the usual rules */
    dims_ok &= attnvk_problem_validate(&dv) == ATTNVK_OK;
    dv.head_dim = 128, dv.head_dim_v = 192; /* reversed */
    dims_ok &= refuses(dv, "Dk=128 (Q, K) and Dv=192");
    dv.head_dim = 128, dv.head_dim_v = 64;
    dims_ok &= refuses(dv, "Dk=128 (Q, K) and Dv=64") && strchr(attnvk_last_error(), '\n') == NULL;
    dv.head_dim_v = -3;
    dims_ok &= refuses(dv, "V head dim must be > 0");
    dv.head_dim = 192, dv.head_dim_v = 128, dv.kv_format = ATTNVK_KV_Q8_0;
    dims_ok &= refuses(dv, "contiguous K/V cache");
    dv.kv_format = ATTNVK_KV_DTYPE, dv.page_size = 16, dv.num_pages = 2, dv.max_pages = 1;
    dims_ok &= refuses(dv, "not paged or quantized");
    EXPECT(dims_ok, "Dk/Dv pairs: last error %s", attnvk_last_error());
    passed += dims_ok;

    /* the feature bits core refuses unsupported work by */
    attnvk_problem f = base;
    f.window = 1, f.window_left = -1, f.window_right = -1; /* unbounded both sides: no window */
    int bits = avk_problem_features(&f) == 0;
    f.window_left = 4, f.softcap = 30, f.sinks = 1, f.align = ATTNVK_ALIGN_TOP_LEFT;
    bits &= avk_problem_features(&f) ==
            (ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_SOFTCAP | ATTNVK_FEATURE_SINKS | ATTNVK_FEATURE_TOP_LEFT);
    f = base;
    f.align = ATTNVK_ALIGN_TOP_LEFT; /* not causal, no window, no ALiBi: the alignment changes nothing */
    bits &= avk_problem_features(&f) == 0;
    f = base;
    f.head_dim_v = f.head_dim; /* equal, spelled out: no feature */
    bits &= avk_problem_features(&f) == 0;
    f.head_dim = 192, f.head_dim_v = 128;
    bits &= avk_problem_features(&f) == ATTNVK_FEATURE_HEAD_DIM_V &&
            strcmp(avk_feature_name(ATTNVK_FEATURE_HEAD_DIM_V), "different K and V head dims") == 0;
    EXPECT(bits, "feature bits");
    passed += bits;

    /* FLOPs count visible pairs: Nq = Nk = 8, window 2 to the left, causal: 1+2+3*6 = 21 pairs a row set */
    attnvk_problem fl = base;
    fl.causal = 1, fl.window = 1, fl.window_left = 2, fl.window_right = -1;
    double want = 4.0 * 16 * 2 * 4 * 21;
    int flops_ok = fabs(attnvk_problem_flops(&fl) - want) < 1e-6;
    EXPECT(flops_ok, "windowed FLOPs %g, want %g", attnvk_problem_flops(&fl), want);
    passed += flops_ok;

    /* FLOPs and element counts with Dv != Dk: 2*(Dk+Dv) per pair; V and O hold Dv */
    attnvk_problem mla = {.batch = 2, .heads = 4, .kv_heads = 1, .seq_q = 8, .seq_kv = 8, .head_dim = 192,
                          .head_dim_v = 128, .causal = 1};
    /* causal with Nq = Nk: half of the 64 pairs, the FlashAttention convention */
    int counts_ok = fabs(attnvk_problem_flops(&mla) - 2.0 * (192 + 128) * 2 * 4 * 64 / 2) < 1e-6 &&
                    attnvk_q_elements(&mla) == 2u * 4 * 8 * 192 && attnvk_o_elements(&mla) == 2u * 4 * 8 * 128 &&
                    attnvk_kv_elements(&mla) == 2u * 8 * 192 && attnvk_v_elements(&mla) == 2u * 8 * 128 &&
                    attnvk_v_bytes(&mla) == 2u * 8 * 128 * 4 && attnvk_problem_head_dim_v(&mla) == 128;
    EXPECT(counts_ok, "Dk 192 / Dv 128 FLOPs %g and element counts", attnvk_problem_flops(&mla));
    passed += counts_ok;
    return avk_test_finish(passed, avk_test_failures);
}
