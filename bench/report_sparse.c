/* The sparse/dense crossover of each family of sparse cases (report_sparse.h). */
#include "report_sparse.h"
#include "report_tables.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_dense(const results_record *r)
{
    return r->status == RESULT_OK && r->vs_dense.present && r->stats.present && r->stats.median_ms > 0 &&
           r->vs_dense.dense_ms > 0 && r->kase.pattern[0];
}

static bool same_series(const results_record *a, const results_record *b)
{
    return strcmp(a->implementation, b->implementation) == 0 && strcmp(a->api, b->api) == 0 &&
           strcmp(a->pass, b->pass) == 0 && results_same_device(a, b) && report_same_family(&a->kase, &b->kase);
}

static void add_point(sparse_crossover *x, const results_record *r)
{
    long n = r->kase.seq_kv;
    int at = 0;
    while (at < x->point_count && x->points[at].n < n) ++at;
    if ((at < x->point_count && x->points[at].n == n) || x->point_count == CROSSOVER_MAX_POINTS) return; /* the first wins */
    memmove(&x->points[at + 1], &x->points[at], sizeof x->points[0] * (size_t)(x->point_count - at));
    x->points[at] = (sparse_point){n, r->stats.median_ms, r->vs_dense.dense_ms, r->vs_dense.memory_ratio};
    ++x->point_count;
    x->batch_moves |= r->kase.batch != x->first->kase.batch;
}

/* From the largest N down: the sparse case stays faster down to crossover_n. */
static void settle(sparse_crossover *x)
{
    x->crossover_n = 0;
    x->from_first = false;
    x->speedup_at = NAN;
    int from = x->point_count;
    while (from > 0 && x->points[from - 1].sparse_ms < x->points[from - 1].dense_ms) --from;
    const sparse_point *last = &x->points[x->point_count - 1];
    x->speedup_last = last->dense_ms / last->sparse_ms;
    if (from == x->point_count) return;
    x->crossover_n = x->points[from].n;
    x->from_first = from == 0;
    x->speedup_at = x->points[from].dense_ms / x->points[from].sparse_ms;
}

int report_sparse_compute(const results_record *records, int n, sparse_crossovers *out)
{
    out->items = NULL;
    out->count = 0;
    int cap = 0;
    for (int i = 0; i < n; ++i) cap += has_dense(&records[i]);
    if (cap == 0) return 0;
    sparse_crossover *items = calloc((size_t)cap, sizeof *items);
    if (!items) return -1;
    int count = 0;
    for (int i = 0; i < n; ++i) {
        const results_record *r = &records[i];
        if (!has_dense(r)) continue;
        int j = 0;
        while (j < count && !same_series(items[j].first, r)) ++j;
        if (j == count) items[count++].first = r;
        add_point(&items[j], r);
    }
    for (int j = 0; j < count; ++j) settle(&items[j]);
    out->items = items;
    out->count = count;
    return 0;
}

void report_sparse_free(sparse_crossovers *x)
{
    free(x->items);
    x->items = NULL;
    x->count = 0;
}

static void family_text(const sparse_crossover *x, char *out, size_t n)
{
    const results_case *k = &x->first->kase;
    char batch[48], tokens[32];
    report_length_text(k->batch * k->seq_q, tokens, sizeof tokens);
    if (x->batch_moves) snprintf(batch, sizeof batch, "B*N=%s", tokens);
    else snprintf(batch, sizeof batch, "B=%ld", k->batch);
    snprintf(out, n, "%s D=%ld %s H=%ld/%ld %s%s", k->pattern, k->head_dim, batch, k->heads, k->kv_heads,
             k->causal ? "causal " : "", k->dtype);
}

/* "from N=4k (1.83x there" or "at or below N=256 (" or "not faster up to 16k (". */
static void verdict_text(const sparse_crossover *x, char *out, size_t n)
{
    char at[32], last[32];
    report_length_text(x->points[x->point_count - 1].n, last, sizeof last);
    if (x->crossover_n == 0) {
        snprintf(out, n, "not faster up to N=%s (%.2fx there)", last, x->speedup_last);
        return;
    }
    report_length_text(x->crossover_n, at, sizeof at);
    snprintf(out, n, "faster from N=%s%s (%.2fx there, %.2fx at %s)", at, x->from_first ? " or below" : "",
             x->speedup_at, x->speedup_last, last);
}

void report_sparse_line(const sparse_crossover *x, char *out, size_t n)
{
    char family[256], verdict[128];
    family_text(x, family, sizeof family);
    verdict_text(x, verdict, sizeof verdict);
    snprintf(out, n, "%s %s %s: %s: sparse %s", x->first->implementation, x->first->api, x->first->device_name, family,
             verdict);
}

void report_sparse_table(strbuf *o, const sparse_crossovers *xo)
{
    if (xo->count == 0) return;
    static const char *heads[] = {"family", "impl", "API", "device", "N compared", "crossover N", "speedup there",
                                  "speedup at largest N", "memory vs dense at largest N"};
    sb_puts(o, "<h3>Sparse/dense crossover</h3>\n<table class=\"crossover\">");
    report_header_row(o, heads, 9);
    for (int i = 0; i < xo->count; ++i) {
        const sparse_crossover *x = &xo->items[i];
        char family[256], first[32], last[32], range[96], at[64];
        family_text(x, family, sizeof family);
        report_length_text(x->points[0].n, first, sizeof first);
        report_length_text(x->points[x->point_count - 1].n, last, sizeof last);
        snprintf(range, sizeof range, "%s \xe2\x80\x93 %s (%d)", first, last, x->point_count);
        if (x->crossover_n > 0) {
            report_length_text(x->crossover_n, at, sizeof at);
            if (x->from_first) snprintf(at + strlen(at), sizeof at - strlen(at), " or below");
        } else {
            snprintf(at, sizeof at, "none up to %s", last);
        }
        sb_printf(o, "<tr class=\"%s\">", x->crossover_n > 0 ? "crosses" : "never");
        report_cell(o, family), report_cell(o, x->first->implementation), report_cell(o, x->first->api);
        report_cell(o, x->first->device_name), report_cell(o, range);
        sb_puts(o, "<td><b>"), sb_html(o, at), sb_puts(o, "</b></td>");
        report_num_cell(o, "%.2f\xc3\x97", x->speedup_at);
        report_num_cell(o, "%.2f\xc3\x97", x->speedup_last);
        report_num_cell(o, "%.2f\xc3\x97", x->points[x->point_count - 1].memory_ratio);
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n<p class=\"sub\">For each family of sparse cases (a block layout or a dilation, equal but for "
               "the sequence length N = Nk) and implementation: its median against the dense record of the same shape "
               "in the same run (the records' vs_dense). Crossover: the smallest N from which the sparse case is faster "
               "at every larger N measured. Memory: device bytes of the sparse case over the dense one's.</p>\n");
}
