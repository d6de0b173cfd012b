/* The score-modification cases and their runner (see score_cases.h). */
#include "core/score_cases.h"
#include "core/cache_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TL = 1, SOFTCAP = 2, WINDOW = 4, ALIBI = 8, SINKS = 16, MASK = 32, MASK_F16 = 64, MASK_FULL = 128 };

int avk_score_cases(attnvk_dtype dtype, avk_score_case *out, int max)
{
    static const struct {
        const char *label;
        int b, h, hkv, nq, nk, d, causal, what, left, right;
        float softcap;
        int split; /* the split-KV count the tests force (0: theirs) */
        int offset; /* position_offset: i' moved along the keys (ring attention's blocks) */
    } cases[] = {
        {"softcap window sinks", 2, 4, 2, 40, 70, 64, 1, SOFTCAP | WINDOW | SINKS, 16, -1, 5.f, 0, 0},
        {"mask alibi", 2, 4, 2, 33, 50, 64, 0, MASK | ALIBI, -1, -1, 0.f, 0, 0},
        {"mask per head f16", 2, 4, 4, 20, 37, 32, 1, MASK | MASK_F16 | MASK_FULL, -1, -1, 0.f, 0, 0},
        /* rows of whole 16-byte chunks over three 128-key tiles: CUDA's wgmma stages them in shared memory */
        {"mask f16 staged", 1, 2, 1, 40, 264, 128, 1, MASK | MASK_F16 | MASK_FULL, -1, -1, 0.f, 0, 0},
        {"top-left Nq>Nk", 1, 4, 1, 50, 20, 64, 1, TL, -1, -1, 0.f, 0, 0},
        {"top-left Nq<Nk window", 1, 4, 2, 20, 90, 64, 1, TL | WINDOW, 8, -1, 0.f, 0, 0},
        {"window both sides", 1, 2, 2, 64, 64, 128, 0, WINDOW | SINKS, 5, 3, 0.f, 0, 0},
        {"decode window sinks", 4, 8, 2, 1, 300, 64, 1, WINDOW | SINKS | SOFTCAP, 128, -1, 30.f, 0, 0},
        /* windows well inside a 1000-key cache, split over the keys a row block sees
         * (core's avk_kernel_args_span): every split inside the window */
        {"decode window inside", 1, 8, 2, 1, 1000, 64, 1, WINDOW | SINKS, 100, -1, 0.f, 5, 0},
        {"decode Nq4 window right", 2, 8, 2, 4, 1000, 64, 0, WINDOW, 100, 20, 0.f, 8, 0},
        {"top-left decode window right", 1, 8, 2, 4, 1000, 64, 0, TL | WINDOW, 100, 300, 0.f, 6, 0},
        {"top-left prefill window inside", 1, 2, 1, 300, 1000, 64, 1, TL | WINDOW | SINKS, 100, -1, 0.f, 7, 0},
        {"prefill window right inside", 1, 2, 2, 64, 1000, 64, 0, WINDOW, 100, 10, 0.f, 4, 0},
        /* position offsets: rows that see every key, none, or a window's middle */
        {"offset causal", 1, 4, 2, 40, 30, 64, 1, TL, -1, -1, 0.f, 0, 10},
        {"offset causal bottom-right", 2, 4, 4, 40, 60, 32, 1, 0, -1, -1, 0.f, 0, -5},
        {"offset window alibi", 1, 4, 2, 48, 64, 64, 1, TL | WINDOW | ALIBI, 12, -1, 0.f, 0, 25},
        {"offset window empty rows", 1, 2, 1, 40, 40, 64, 0, TL | WINDOW | ALIBI, 5, 3, 0.f, 0, -30},
        {"decode offset window", 2, 8, 2, 1, 300, 64, 1, WINDOW, 64, -1, 0.f, 3, -100},
        /* last: the tests take it as every feature at once */
        {"all of them", 2, 4, 2, 24, 48, 64, 1, SOFTCAP | WINDOW | ALIBI | SINKS | MASK, 12, -1, 20.f, 0, 0},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases && n < max; ++i, ++n) {
        avk_score_case *c = &out[n];
        memset(c, 0, sizeof *c);
        attnvk_problem *p = &c->p;
        const int what = cases[i].what;
        c->label = cases[i].label;
        c->split_kv = cases[i].split;
        p->batch = cases[i].b, p->heads = cases[i].h, p->kv_heads = cases[i].hkv;
        p->seq_q = cases[i].nq, p->seq_kv = cases[i].nk, p->head_dim = cases[i].d;
        p->causal = cases[i].causal;
        p->dtype = dtype;
        p->align = (what & TL) ? ATTNVK_ALIGN_TOP_LEFT : ATTNVK_ALIGN_BOTTOM_RIGHT;
        p->softcap = (what & SOFTCAP) ? cases[i].softcap : 0.f;
        p->window = (what & WINDOW) != 0;
        p->window_left = cases[i].left, p->window_right = cases[i].right;
        p->alibi = (what & ALIBI) != 0;
        p->sinks = (what & SINKS) != 0;
        p->mask = (what & MASK) != 0;
        p->mask_batch = (what & MASK_FULL) ? p->batch : 1;
        p->mask_heads = (what & MASK_FULL) ? p->heads : 1;
        p->mask_dtype = (what & MASK_F16) ? ATTNVK_F16 : ATTNVK_F32;
        p->position_offset = cases[i].offset;
    }
    return n;
}

avk_score_case avk_score_case_shared_mask(attnvk_dtype dtype)
{
    avk_score_case c;
    memset(&c, 0, sizeof c);
    c.label = "mask the heads share, row blocks";
    attnvk_problem *p = &c.p;
    p->batch = 2, p->heads = 4, p->kv_heads = 2, p->seq_q = 200, p->seq_kv = 230, p->head_dim = 64, p->causal = 1;
    p->dtype = dtype, p->align = ATTNVK_ALIGN_BOTTOM_RIGHT, p->alibi = 1;
    p->mask = 1, p->mask_batch = 1, p->mask_heads = 1, p->mask_dtype = dtype == ATTNVK_F32 ? ATTNVK_F32 : ATTNVK_F16;
    return c;
}

static void describe(const attnvk_problem *p, char *out, size_t n)
{
    int len = snprintf(out, n, "B%d H%d/%d Nq%d Nk%d D%d %s%s%s", p->batch, p->heads, p->kv_heads, p->seq_q,
                       p->seq_kv, p->head_dim, attnvk_dtype_name(p->dtype), p->causal ? " causal" : "",
                       p->align == ATTNVK_ALIGN_TOP_LEFT ? " top-left" : "");
    if (p->softcap > 0 && len < (int)n) len += snprintf(out + len, n - len, " softcap=%g", p->softcap);
    if (p->window && len < (int)n) len += snprintf(out + len, n - len, " window=%d,%d", p->window_left, p->window_right);
    if (p->alibi && len < (int)n) len += snprintf(out + len, n - len, " alibi");
    if (p->sinks && len < (int)n) len += snprintf(out + len, n - len, " sinks");
    if (p->position_offset && len < (int)n) len += snprintf(out + len, n - len, " offset=%d", p->position_offset);
    if (p->mask && len < (int)n)
        snprintf(out + len, n - len, " mask=%dx%d %s", p->mask_batch, p->mask_heads, attnvk_dtype_name(p->mask_dtype));
}

attnvk_status avk_score_case_run(attnvk_device *dev, const avk_score_case *c, const attnvk_kernel_options *opts,
                                 uint64_t seed, avk_score_result *r)
{
    const attnvk_problem *p = &c->p;
    memset(r, 0, sizeof *r);
    describe(p, r->shape, sizeof r->shape);
    float *q = NULL, *k = NULL, *v = NULL, *mask = NULL, *sinks = NULL, *slopes = NULL, *o = NULL;
    const size_t nmask = p->mask ? (size_t)p->mask_batch * p->mask_heads * p->seq_q * (size_t)p->seq_kv : 0;
    int ok = avk_random_inputs(p, seed, &q, &k, &v);
    o = malloc(sizeof(float) * attnvk_o_elements(p));
    mask = malloc(sizeof(float) * (nmask + 1));
    sinks = malloc(sizeof(float) * p->heads);
    slopes = malloc(sizeof(float) * p->heads);
    attnvk_status s = ATTNVK_OK;
    if (!ok || !o || !mask || !sinks || !slopes) {
        s = ATTNVK_ERROR_OUT_OF_MEMORY;
        snprintf(r->message, sizeof r->message, "out of host memory");
    } else {
        attnvk_fill_random(mask, nmask, seed ^ 0x6d61736bu);
        uint64_t st = seed | 1;
        for (size_t i = 0; i < nmask; ++i) { /* 10% -inf, the rest as the mask's dtype holds it */
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            if ((st >> 33) % 10 == 0) mask[i] = -INFINITY;
        }
        attnvk_round_to_dtype(p->mask_dtype, mask, nmask);
        attnvk_fill_random(sinks, (size_t)p->heads, seed ^ 0x73696e6bu);
        attnvk_alibi_slopes(p->heads, slopes);
        attnvk_host_inputs in = {.q = q, .k = k, .v = v, .mask = p->mask ? mask : NULL,
                                 .sinks = p->sinks ? sinks : NULL, .alibi_slopes = p->alibi ? slopes : NULL};
        double ms = 0;
        s = attnvk_attention_host_inputs(dev, p, opts, &in, o, NULL, &r->info, &ms);
        if (s == ATTNVK_OK) r->check = attnvk_check_output_inputs(p, &in, o, NULL, 0);
        else snprintf(r->message, sizeof r->message, "%s", attnvk_last_error());
    }
    free(q), free(k), free(v), free(mask), free(sinks), free(slopes), free(o);
    return s;
}
