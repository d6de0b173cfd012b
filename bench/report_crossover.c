/* The CPU/GPU crossover of each case family (report_crossover.h). */
#include "report_crossover.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* B*Nq: both at most RESULTS_MAX_SIZE (results_parse checks), so the product fits. */
static long long tokens_of(const results_case *k) { return (long long)k->batch * (long long)k->seq_q; }

bool report_same_family(const results_case *a, const results_case *b)
{
    bool square_a = a->seq_q == a->seq_kv, square_b = b->seq_q == b->seq_kv;
    bool batch = a->batch == b->batch || tokens_of(a) == tokens_of(b);
    return batch && a->heads == b->heads && a->kv_heads == b->kv_heads && a->head_dim == b->head_dim &&
           a->causal == b->causal && strcmp(a->dtype, b->dtype) == 0 && strcmp(a->layout, b->layout) == 0 &&
           strcmp(a->pattern, b->pattern) == 0 && square_a == square_b && (square_a || a->seq_q == b->seq_q);
}

void report_length_text(long n, char *out, size_t size)
{
    if (n >= 1048576 && n % 1048576 == 0) snprintf(out, size, "%ldM", n / 1048576);
    else if (n >= 1024 && n % 1024 == 0) snprintf(out, size, "%ldk", n / 1024);
    else if (n >= 1024) snprintf(out, size, "%gk", (double)n / 1024.0);
    else snprintf(out, size, "%ld", n);
}

static bool timed(const results_record *r)
{
    return r->status == RESULT_OK && r->stats.present && isfinite(r->stats.median_ms) && r->stats.median_ms > 0;
}

static bool is_cpu(const results_record *r) { return strcmp(r->api, "cpu") == 0; }

/* The CPU device's contenders: every implementation of the cpu API but the float64 oracle. */
static bool cpu_contender(const results_record *r) { return is_cpu(r) && strcmp(r->implementation, "reference") != 0 && timed(r); }

static bool gpu_attnvk(const results_record *r) { return !is_cpu(r) && strcmp(r->implementation, "attnvk") == 0 && timed(r); }

/* The fastest CPU contender on exactly this case; NULL when none ran it. */
static const results_record *cpu_best(const results_record *records, int n, const results_case *k)
{
    const results_record *best = NULL;
    for (int i = 0; i < n; ++i) {
        const results_record *r = &records[i];
        if (cpu_contender(r) && results_same_case(&r->kase, k) && (!best || r->stats.median_ms < best->stats.median_ms)) best = r;
    }
    return best;
}

static void add_point(report_crossover *c, const results_record *gpu, const results_record *cpu)
{
    long n = gpu->kase.seq_kv;
    int at = 0;
    while (at < c->point_count && c->points[at].n < n) ++at;
    if ((at < c->point_count && c->points[at].n == n) || c->point_count == CROSSOVER_MAX_POINTS) return; /* the first wins */
    memmove(&c->points[at + 1], &c->points[at], sizeof c->points[0] * (size_t)(c->point_count - at));
    crossover_point *p = &c->points[at];
    memset(p, 0, sizeof *p);
    p->n = n;
    p->cpu_ms = cpu->stats.median_ms;
    p->gpu_ms = gpu->stats.median_ms;
    p->cpu_tflops = isfinite(cpu->flops) ? cpu->flops / (cpu->stats.median_ms * 1e-3) / 1e12 : cpu->tflops;
    snprintf(p->cpu_impl, sizeof p->cpu_impl, "%s", cpu->implementation);
    ++c->point_count;
}

static void settle(report_crossover *c)
{
    c->crossover_n = 0;
    c->from_first = c->stays_ahead = false;
    c->speedup_at = NAN;
    for (int i = 0; i < c->point_count; ++i) {
        const crossover_point *p = &c->points[i];
        if (p->gpu_ms < p->cpu_ms && c->crossover_n == 0) {
            c->crossover_n = p->n;
            c->from_first = i == 0;
            c->speedup_at = p->cpu_ms / p->gpu_ms;
            c->stays_ahead = true;
        } else if (c->crossover_n && !(p->gpu_ms < p->cpu_ms)) {
            c->stays_ahead = false;
        }
    }
    const crossover_point *last = &c->points[c->point_count - 1];
    c->speedup_last = last->cpu_ms / last->gpu_ms;
}

int report_crossover_compute(const results_record *records, int n, report_crossovers *out)
{
    out->items = NULL;
    out->count = 0;
    int cap = 0;
    for (int i = 0; i < n; ++i) cap += gpu_attnvk(&records[i]);
    if (cap == 0) return 0;
    report_crossover *items = calloc((size_t)cap, sizeof *items);
    if (!items) return -1;
    int count = 0;
    for (int i = 0; i < n; ++i) {
        const results_record *r = &records[i];
        if (!gpu_attnvk(r)) continue;
        int j = 0;
        while (j < count && !(strcmp(items[j].gpu->api, r->api) == 0 && results_same_device(items[j].gpu, r) &&
                              report_same_family(&items[j].gpu->kase, &r->kase)))
            ++j;
        if (j == count) items[count++].gpu = r;
        const results_record *cpu = cpu_best(records, n, &r->kase);
        if (cpu) add_point(&items[j], r, cpu);
    }
    int kept = 0;
    for (int j = 0; j < count; ++j) {
        if (items[j].point_count == 0) continue;
        settle(&items[j]);
        if (kept != j) items[kept] = items[j];
        ++kept;
    }
    if (kept == 0) {
        free(items);
        return 0;
    }
    out->items = items;
    out->count = kept;
    return 0;
}

void report_crossover_free(report_crossovers *c)
{
    free(c->items);
    c->items = NULL;
    c->count = 0;
}
