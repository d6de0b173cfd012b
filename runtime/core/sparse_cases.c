/* The sparse-pattern cases and their runner (see sparse_cases.h). */
#include "core/sparse_cases.h"

#include "core/cache_cases.h" /* avk_random_inputs */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int avk_sparse_cases(attnvk_dtype dtype, avk_sparse_case *out, int max)
{
    static const struct {
        const char *label;
        int b, h, hkv, nq, nk, d, causal;
        int bq, bk, lb, lh; /* block layout: sizes and broadcast (0: none) */
        double density;
        int empty_row;
        int groups; /* dilated */
        int seg[3], rate[3];
        float softcap;
        int recent; /* the first block column and the last `recent` */
    } cases[] = {
        {"random 30%", 2, 4, 2, 100, 100, 32, 0, 16, 16, 1, 1, 0.3, 0, 0, {0}, {0}, 0, 0},
        {"random, causal, per head", 1, 4, 4, 90, 90, 64, 1, 16, 32, 1, 4, 0.4, 0, 0, {0}, {0}, 0, 0},
        {"local band, partial blocks", 2, 2, 1, 77, 77, 32, 1, 10, 12, 2, 1, -1, 0, 0, {0}, {0}, 0, 0},
        {"empty block row, softcap", 1, 2, 2, 64, 64, 32, 0, 16, 8, 1, 1, 0.5, 1, 0, {0}, {0}, 20.f, 0},
        {"decode rows, GQA 4", 2, 8, 2, 4, 300, 64, 1, 4, 32, 1, 8, 0.35, 0, 0, {0}, {0}, 0, 0},
        /* blocks as large as GPU tiles: whole tiles skipped (not loaded) or wholly visible */
        {"random 20%, 64-blocks, causal", 1, 2, 1, 1000, 1000, 64, 1, 64, 64, 1, 2, 0.2, 0, 0, {0}, {0}, 0, 0},
        /* the bodies that skip hidden tiles search them a work-group's lanes at a time: 185 hidden
         * 64-key tiles between the sink and the recent blocks take a second round */
        {"sink and recent blocks, 12k keys", 1, 2, 1, 48, 12000, 64, 0, 16, 64, 1, 1, 0, 0, 0, {0}, {0}, 0, 2},
        {"dilated 2 groups", 1, 4, 2, 64, 64, 32, 0, 0, 0, 0, 0, 0, 0, 2, {16, 32}, {1, 2}, 0, 0},
        {"dilated long segments", 1, 4, 4, 600, 600, 64, 1, 0, 0, 0, 0, 0, 0, 2, {128, 256}, {1, 4}, 0, 0},
        {"dilated causal, N % s != 0", 2, 6, 3, 70, 70, 32, 1, 0, 0, 0, 0, 0, 0, 3, {8, 16, 32}, {1, 2, 4}, 0, 0},
        {"dilated one group, rate 3", 1, 2, 1, 50, 50, 64, 1, 0, 0, 0, 0, 0, 0, 1, {12}, {3}, 10.f, 0},
        /* the strided views' edges: a rate above its segment (classes past it hold no rows) and a
         * segment longer than the sequence */
        {"dilated rate above segment, segment past N", 1, 4, 2, 40, 40, 32, 1, 0, 0, 0, 0, 0, 0, 2, {6, 64}, {8, 3}, 0, 0},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases && n < max; ++i, ++n) {
        avk_sparse_case *c = &out[n];
        memset(c, 0, sizeof *c);
        attnvk_problem *p = &c->p;
        attnvk_problem_init(p);
        c->label = cases[i].label;
        c->density = cases[i].density;
        c->empty_row = cases[i].empty_row;
        c->recent = cases[i].recent;
        p->batch = cases[i].b, p->heads = cases[i].h, p->kv_heads = cases[i].hkv;
        p->seq_q = cases[i].nq, p->seq_kv = cases[i].nk, p->head_dim = cases[i].d, p->causal = cases[i].causal;
        p->dtype = dtype, p->softcap = cases[i].softcap;
        if (cases[i].bq) {
            p->block_sparse = 1, p->block_q = cases[i].bq, p->block_k = cases[i].bk;
            p->layout_batch = cases[i].lb, p->layout_heads = cases[i].lh;
        }
        p->dilated_groups = cases[i].groups;
        for (int g = 0; g < cases[i].groups; ++g)
            p->dilated_segment[g] = cases[i].seg[g], p->dilated_rate[g] = cases[i].rate[g];
    }
    return n;
}

uint8_t *avk_sparse_case_layout(const avk_sparse_case *c, uint64_t seed)
{
    const attnvk_problem *p = &c->p;
    const size_t n = attnvk_block_layout_bytes(p);
    if (!n) return NULL;
    const int rows = (p->seq_q + p->block_q - 1) / p->block_q, cols = (p->seq_kv + p->block_k - 1) / p->block_k;
    uint8_t *l = malloc(n);
    float *u = malloc(sizeof(float) * n);
    if (!l || !u) {
        free(l), free(u);
        return NULL;
    }
    attnvk_fill_random(u, n, seed);
    for (size_t e = 0; e < n; ++e) {
        const int r = (int)(e / (size_t)cols % (size_t)rows), col = (int)(e % (size_t)cols);
        if (c->recent > 0)
            l[e] = col == 0 || col >= cols - c->recent;
        else if (c->density >= 0) /* a standard normal below its quantile: about density of the blocks */
            l[e] = 0.5 * erfc(-u[e] / sqrt(2.0)) < c->density ? (uint8_t)(1 + e % 200) : 0;
        else /* the band in token units: block r's rows against block col's keys */
            l[e] = abs(r * p->block_q / p->block_k - col) <= (int)-c->density;
        if (c->empty_row && r == rows / 2) l[e] = 0;
    }
    free(u);
    return l;
}

static void describe(const attnvk_problem *p, char *out, size_t n)
{
    int len = snprintf(out, n, "B%d H%d/%d Nq%d Nk%d D%d %s%s", p->batch, p->heads, p->kv_heads, p->seq_q, p->seq_kv,
                       p->head_dim, attnvk_dtype_name(p->dtype), p->causal ? " causal" : "");
    if (p->block_sparse && len < (int)n)
        len += snprintf(out + len, n - len, " blocks=%dx%d layout=%dx%d", p->block_q, p->block_k, p->layout_batch,
                        p->layout_heads);
    for (int g = 0; g < p->dilated_groups && len < (int)n; ++g)
        len += snprintf(out + len, n - len, "%s%d/%d", g ? "," : " dilated=", p->dilated_segment[g], p->dilated_rate[g]);
}

attnvk_status avk_sparse_case_run(attnvk_device *dev, const avk_sparse_case *c, const attnvk_kernel_options *opts,
                                  uint64_t seed, avk_score_result *r)
{
    const attnvk_problem *p = &c->p;
    memset(r, 0, sizeof *r);
    describe(p, r->shape, sizeof r->shape);
    float *q = NULL, *k = NULL, *v = NULL;
    const size_t no = attnvk_o_elements(p), rows = (size_t)p->batch * p->heads * p->seq_q;
    float *o = malloc(sizeof(float) * no), *o_ref = malloc(sizeof(float) * no);
    float *lse = malloc(sizeof(float) * rows), *lse_ref = malloc(sizeof(float) * rows);
    uint8_t *layout = p->block_sparse ? avk_sparse_case_layout(c, seed ^ 0x6c61796fu) : NULL;
    attnvk_status s = ATTNVK_OK;
    if (!avk_random_inputs(p, seed, &q, &k, &v) || !o || !o_ref || !lse || !lse_ref || (p->block_sparse && !layout)) {
        s = ATTNVK_ERROR_OUT_OF_MEMORY;
        snprintf(r->message, sizeof r->message, "out of host memory");
    } else {
        const attnvk_host_inputs in = {.q = q, .k = k, .v = v, .block_layout = layout};
        for (size_t i = 0; i < rows; ++i) lse[i] = NAN; /* poisoned: every row's LSE must be written */
        s = attnvk_attention_host_inputs(dev, p, opts, &in, o, lse, &r->info, NULL);
        if (s == ATTNVK_OK) {
            r->check = attnvk_check_output_inputs(p, &in, o, NULL, 0);
            /* LSE too: a row with no visible key (-inf) must say so, the rest agree to the dtype's tolerance */
            attnvk_reference_inputs(p, &in, o_ref, lse_ref);
            for (size_t i = 0; i < rows; ++i) {
                const double e = isinf(lse_ref[i]) ? (lse[i] == lse_ref[i] ? 0.0 : INFINITY)
                                                   : fabs((double)lse[i] - lse_ref[i]) / fmax(1.0, fabs(lse_ref[i]));
                if (!(e <= (p->dtype == ATTNVK_F32 ? 1e-5 : 2e-3))) ++r->lse_bad;
                if (!(e <= r->lse_err)) r->lse_err = e;
            }
            if (r->lse_bad) r->check.passed = 0;
        } else {
            snprintf(r->message, sizeof r->message, "%s", attnvk_last_error());
        }
    }
    free(q), free(k), free(v), free(o), free(o_ref), free(lse), free(lse_ref), free(layout);
    return s;
}
