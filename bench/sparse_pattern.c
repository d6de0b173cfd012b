/* Sparse patterns on the command line (sparse_pattern.h). */
#include "sparse_pattern.h"

#include "bench_workload.h" /* bench_mix64 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { PATTERN_MAX_BLOCKS = 1 << 20 }; /* a window, global or random count beyond any layout */

static const char *const kind_names[] = {"", "random", "local", "bigbird"};

/* The name's letters per kind: -bs64x64r0.1, -bs64x64l2, -bs64x64bb2_1_2 */
static const char *const kind_tags[] = {"", "r", "l", "bb"};

int sparse_parse_pattern(const char *s, bench_block_pattern *out)
{
    memset(out, 0, sizeof *out);
    const char *colon = s ? strchr(s, ':') : NULL;
    if (!colon) return 0;
    const size_t len = (size_t)(colon - s);
    int kind = BENCH_LAYOUT_NONE;
    for (int k = BENCH_LAYOUT_RANDOM; k <= BENCH_LAYOUT_BIGBIRD; ++k)
        if (strlen(kind_names[k]) == len && strncmp(s, kind_names[k], len) == 0) kind = k;
    const char *args = colon + 1;
    long v[3];
    switch (kind) {
    case BENCH_LAYOUT_RANDOM:
        if (!cli_parse_double(args, 1e-9, 1.0, &out->density)) return 0;
        break;
    case BENCH_LAYOUT_LOCAL:
        if (!cli_parse_int(args, 0, PATTERN_MAX_BLOCKS, &v[0])) return 0;
        out->window = (int)v[0];
        break;
    case BENCH_LAYOUT_BIGBIRD:
        if (cli_parse_int_list(args, 0, PATTERN_MAX_BLOCKS, v, 3) != 3) return 0;
        out->window = (int)v[0], out->globals = (int)v[1], out->randoms = (int)v[2];
        break;
    default: return 0;
    }
    out->kind = (bench_layout_kind)kind;
    return 1;
}

void sparse_pattern_text(const bench_block_pattern *pat, char *out, size_t n)
{
    switch (pat->kind) {
    case BENCH_LAYOUT_RANDOM: snprintf(out, n, "random:%g", pat->density); return;
    case BENCH_LAYOUT_LOCAL: snprintf(out, n, "local:%d", pat->window); return;
    case BENCH_LAYOUT_BIGBIRD: snprintf(out, n, "bigbird:%d,%d,%d", pat->window, pat->globals, pat->randoms); return;
    case BENCH_LAYOUT_NONE: break;
    }
    snprintf(out, n, "%s", "");
}

int sparse_parse_dilated(const char *s, attnvk_problem *p)
{
    char buf[256];
    const char *colon = s ? strchr(s, ':') : NULL;
    if (!colon || strlen(s) >= sizeof buf) return 0;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    long seg[ATTNVK_MAX_DILATED_GROUPS], rate[ATTNVK_MAX_DILATED_GROUPS];
    const int ns = cli_parse_int_list(buf, 0, 1l << 30, seg, ATTNVK_MAX_DILATED_GROUPS);
    const int nr = cli_parse_int_list(colon + 1, 0, 1l << 30, rate, ATTNVK_MAX_DILATED_GROUPS);
    if (!ns || ns != nr) return 0;
    p->dilated_groups = ns;
    for (int g = 0; g < ns; ++g) p->dilated_segment[g] = (int)seg[g], p->dilated_rate[g] = (int)rate[g];
    return 1;
}

/* "_"-joined integers into out at *len */
static void append_list(char *out, size_t n, size_t *len, const int *v, int count)
{
    for (int i = 0; i < count && *len < n; ++i)
        *len += (size_t)snprintf(out + *len, n - *len, "%s%d", i ? "_" : "", v[i]);
}

void sparse_name_suffix(const attnvk_problem *p, const bench_block_pattern *pat, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (p->block_sparse && pat && pat->kind != BENCH_LAYOUT_NONE) {
        len += (size_t)snprintf(out, n, "-bs%dx%d%s", p->block_q, p->block_k, kind_tags[pat->kind]);
        if (pat->kind == BENCH_LAYOUT_RANDOM && len < n) len += (size_t)snprintf(out + len, n - len, "%g", pat->density);
        const int bigbird[3] = {pat->window, pat->globals, pat->randoms};
        if (pat->kind != BENCH_LAYOUT_RANDOM) append_list(out, n, &len, bigbird, pat->kind == BENCH_LAYOUT_LOCAL ? 1 : 3);
    }
    if (p->dilated_groups && len < n) {
        len += (size_t)snprintf(out + len, n - len, "-dil");
        append_list(out, n, &len, p->dilated_segment, p->dilated_groups);
        if (len < n) len += (size_t)snprintf(out + len, n - len, "r");
        append_list(out, n, &len, p->dilated_rate, p->dilated_groups);
    }
}

/* A uniform double in [0, 1) from a counter. */
static double uniform(uint64_t seed, uint64_t counter)
{
    return (double)(bench_mix64(seed + counter * 0xd1b54a32d192ed03ull) >> 11) * 0x1.0p-53;
}

/* Key block holding key position pos (bottom-right aligned, may be < 0). */
static long key_block(long pos, int bk) { return (long)floor((double)pos / bk); }

void sparse_fill_layout(const attnvk_problem *p, const bench_block_pattern *pat, uint64_t seed, uint8_t *layout)
{
    const long rows = (p->seq_q + p->block_q - 1) / p->block_q, cols = (p->seq_kv + p->block_k - 1) / p->block_k;
    const long shift = (long)p->seq_kv - p->seq_q; /* query i sits at key position i + Nk - Nq, as causal does */
    for (long r = 0; r < rows; ++r) {
        uint8_t *row = layout + (size_t)r * (size_t)cols;
        const long first = r * p->block_q, last = (first + p->block_q < p->seq_q ? first + p->block_q : p->seq_q) - 1;
        const long lo = key_block(first + shift, p->block_k) - pat->window;
        const long hi = key_block(last + shift, p->block_k) + pat->window;
        for (long c = 0; c < cols; ++c) {
            if (pat->kind == BENCH_LAYOUT_RANDOM) row[c] = uniform(seed, (uint64_t)(r * cols + c)) < pat->density;
            else row[c] = (c >= lo && c <= hi) || r < pat->globals || c < pat->globals; /* local: globals is 0 */
        }
        for (int k = 0; k < pat->randoms; ++k) /* bigbird's random blocks: a seeded key block each */
            row[bench_mix64(seed ^ bench_mix64((uint64_t)(r * pat->randoms + k))) % (uint64_t)cols] = 1;
    }
}
