/* The dilated-attention suites (issue #20): LongNet's configurations beside
 * dense causal flash attention of the same shape, over the seed suites'
 * ranges. Each length runs its dense case first, then every configuration that
 * fits it, so a dilated record finds its dense partner already measured
 * (the records' vs_dense, bench_results_link). */
#include "bench_suite_dilated.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LongNet's ladder: segment lengths first·2^g and dilation rates 2^g for
 * g = 0..groups-1 (e.g. first 2048, 3 groups: 2048,4096,8192:1,2,4). */
typedef struct dilated_ladder {
    int first_segment, groups;
} dilated_ladder;

typedef struct dilated_length {
    int n;
    const char *label; /* as the issue names the range's lengths */
} dilated_length;

typedef struct dilated_range {
    const char *suite;
    const dilated_length *lengths;
    int nlengths;
    long tokens;          /* B = tokens / N (at least 1): B·N stays, as in the FlashAttention papers' grid */
    int heads;            /* a multiple of every ladder's group count */
    const int *head_dims; /* each length runs every head dim */
    int nhead_dims;
    const dilated_ladder *ladders;
    int nladders;
} dilated_range;

#define COUNT(a) (int)(sizeof a / sizeof *a)

/* H = 12 (LongNet's base models' heads) divides into 1, 2, 3, 4 or 6 groups; H·D = 768 or 1536. */
enum { DILATED_HEADS = 12, DILATED_TINY_HEADS = 6 };
static const int head_dims[] = {64, 128};
static const int tiny_head_dims[] = {32};

static const dilated_length production_lengths[] = {{1024, "1k"}, {2048, "2k"},   {4096, "4k"},
                                                    {8192, "8k"}, {12288, "12k"}, {16384, "16k"}};
static const dilated_length medium_lengths[] = {{32768, "32k"}, {49152, "49k"}, {65536, "64k"}, {98304, "98k"},
                                                {131072, "128k"}};
static const dilated_length long_lengths[] = {{262144, "256k"}, {393216, "384k"}, {524288, "512k"},
                                              {786432, "768k"}, {1048576, "1m"}};
static const dilated_length tiny_lengths[] = {{256, "256"}, {512, "512"}};

/* below 8K the 2048 ladders leave little, so production also runs ladders from 512 */
static const dilated_ladder production_ladders[] = {{512, 1}, {512, 2}, {512, 3}, {2048, 1}, {2048, 2}, {2048, 3}};
/* from 64K on, the six-group ladder up to 65536-token segments (rate 32) */
static const dilated_ladder long_ladders[] = {{2048, 1}, {2048, 2}, {2048, 3}, {2048, 6}};
static const dilated_ladder tiny_ladders[] = {{64, 1}, {64, 2}, {64, 3}};

/* 48K tokens per case in production: a whole batch at every length (1K x 48 ... 16K x 3) */
static const dilated_range ranges[] = {
    {"dilated", production_lengths, COUNT(production_lengths), 49152, DILATED_HEADS, head_dims, COUNT(head_dims),
     production_ladders, COUNT(production_ladders)},
    {"dilated-medium", medium_lengths, COUNT(medium_lengths), 1, DILATED_HEADS, head_dims, COUNT(head_dims),
     long_ladders, COUNT(long_ladders)},
    {"dilated-long", long_lengths, COUNT(long_lengths), 1, DILATED_HEADS, head_dims, COUNT(head_dims), long_ladders,
     COUNT(long_ladders)},
    {"dilated-quick", tiny_lengths, COUNT(tiny_lengths), 512, DILATED_TINY_HEADS, tiny_head_dims,
     COUNT(tiny_head_dims), tiny_ladders, COUNT(tiny_ladders)},
};

static const dilated_range *range_of(const char *suite)
{
    for (int i = 0; i < COUNT(ranges); ++i)
        if (strcmp(ranges[i].suite, suite) == 0) return &ranges[i];
    return NULL;
}

static int ladder_longest(const dilated_ladder *l) { return l->first_segment << (l->groups - 1); }

/* The dense causal case of one length and head dim (dtype and layout: the caller's). */
static void dense_case(const dilated_range *r, const dilated_length *len, int d, attnvk_dtype dtype, bench_case *c)
{
    memset(c, 0, sizeof *c);
    long b = r->tokens / len->n;
    attnvk_problem *p = &c->p;
    p->batch = b > 1 ? (int)b : 1;
    p->heads = p->kv_heads = r->heads;
    p->seq_q = p->seq_kv = len->n;
    p->head_dim = d;
    p->causal = 1;
    p->dtype = dtype;
    p->layout = ATTNVK_LAYOUT_BHSD;
    snprintf(c->name, sizeof c->name, "%s-d%d-n%s-b%d-h%d-causal", r->suite, d, len->label, p->batch, p->heads);
    c->note = "dense causal flash attention: the dilated cases' partner";
}

static void dilated_case(const bench_case *dense, const dilated_ladder *l, bench_case *c)
{
    *c = *dense;
    attnvk_problem *p = &c->p;
    p->dilated_groups = l->groups;
    for (int g = 0; g < l->groups; ++g) p->dilated_segment[g] = l->first_segment << g, p->dilated_rate[g] = 1 << g;
    char suffix[64];
    sparse_name_suffix(p, NULL, suffix, sizeof suffix);
    /* the longest name ("dilated-medium-d128-n128k-b1-h12-causal-dil2048_..._65536r1_..._32") fits */
    size_t base = strlen(c->name);
    snprintf(c->name + base, sizeof c->name - base, "%s", suffix);
    c->note = "LongNet dilated attention: segments w·2^g, rates 2^g";
}

int bench_dilated_cases(const char *suite, attnvk_dtype dtype, bench_case **out)
{
    const dilated_range *r = range_of(suite);
    *out = NULL;
    if (!r) return 0;
    int max = r->nlengths * r->nhead_dims * (1 + r->nladders);
    bench_case *cases = calloc((size_t)max, sizeof *cases);
    if (!cases) return -1;
    int n = 0;
    for (int li = 0; li < r->nlengths; ++li)
        for (int di = 0; di < r->nhead_dims; ++di) {
            const dilated_length *len = &r->lengths[li];
            bench_case *dense = &cases[n++];
            dense_case(r, len, r->head_dims[di], dtype, dense);
            for (int k = 0; k < r->nladders; ++k) {
                const dilated_ladder *l = &r->ladders[k];
                if (ladder_longest(l) > len->n || r->heads % l->groups != 0) continue; /* segments never exceed N */
                dilated_case(dense, l, &cases[n++]);
            }
        }
    *out = cases;
    return n;
}
