#include "bench_record.h"
#include "core/layout.h"
#include "core/q_format.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bench_status_name(bench_status s)
{
    switch (s) {
    case BENCH_OK: return "ok";
    case BENCH_FAIL: return "fail";
    case BENCH_SKIPPED: return "skipped";
    case BENCH_UNAVAILABLE: return "unavailable";
    }
    return "unknown";
}

void bench_record_init(bench_record *r, const char *impl, int fused, int device_index, const bench_case *c)
{
    memset(r, 0, sizeof *r);
    snprintf(r->implementation, sizeof r->implementation, "%s", impl);
    r->fused = fused;
    r->device_index = device_index;
    r->c = *c;
    r->status = BENCH_OK;
    r->flops = attnvk_problem_flops(&c->p);
    r->tflops = r->tokens_per_s = r->gbytes_per_s = r->peak_fraction = NAN;
    r->speedup_vs_vendor = NAN;
    r->quant_error = r->rel_l2_dequantized = NAN;
    r->read_bandwidth_gbps = r->bandwidth_fraction = NAN;
    r->arithmetic_intensity = r->attainable_tflops = r->roofline_fraction = r->compute_peak_tflops = NAN;
    r->bound = NULL;
    r->compute_path[0] = '\0';
}

const char *bench_pass_name(bench_pass p)
{
    return p == BENCH_PASS_BWD ? "bwd" : p == BENCH_PASS_FWD_BWD ? "fwd+bwd" : "fwd";
}

const char *bench_grad_name(int g)
{
    static const char *const names[BENCH_GRAD_COUNT] = {"dq", "dk", "dv", "o"};
    return g >= 0 && g < BENCH_GRAD_COUNT ? names[g] : "?";
}

int bench_memory_bound(const attnvk_problem *p) { return p->seq_q <= 16; }

void bench_record_set(bench_record *r, bench_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->status = s;
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

void bench_record_free(bench_record *r)
{
    free(r->samples_ms);
    r->samples_ms = NULL;
    r->nsamples = 0;
}

int bench_is_vendor(const char *implementation)
{
    return strcmp(implementation, "attnvk") != 0 && strcmp(implementation, "reference") != 0;
}

void bench_format_bytes(double bytes, char *out, size_t n)
{
    if (bytes < 1024) snprintf(out, n, "%.0f B", bytes);
    else if (bytes < 1048576.0) snprintf(out, n, "%.1f KiB", bytes / 1024);
    else if (bytes < 1073741824.0) snprintf(out, n, "%.1f MiB", bytes / 1048576.0);
    else snprintf(out, n, "%.2f GiB", bytes / 1073741824.0);
}

/* Bytes a kernel must move at least: Q and O, K and V as stored (quantized
 * rows, every page), and the tables of a paged cache. */
/* The share of a contiguous cache's keys some query row sees: windows (and
 * top-left causal with Nq < Nk) leave the rest unread, so GB/s counts only
 * the visible keys, as TFLOP/s counts only visible pairs. Consecutive rows'
 * ranges overlap or touch, so their union is one range. */
static double visible_key_share(const attnvk_problem *p)
{
    if (p->page_size > 0 || p->ragged) return 1.0; /* per-sequence lengths: the whole cache stays the measure */
    int first = p->seq_kv, end = 0;
    for (int i = 0; i < p->seq_q; ++i) {
        int lo, hi;
        avk_visible_range(p, i, p->seq_kv, &lo, &hi);
        if (hi <= lo) continue;
        if (lo < first) first = lo;
        if (hi > end) end = hi;
    }
    return end > first ? (double)(end - first) / p->seq_kv : 0.0;
}

const char *bench_dtype_label(const attnvk_problem *p)
{
    return avk_q_is_fp8(p) && p->kv_format == ATTNVK_KV_FP8 ? "fp8" : attnvk_dtype_name(p->dtype);
}

double bench_io_bytes(const attnvk_problem *p)
{
    const double es = (double)attnvk_dtype_size(p->dtype), share = visible_key_share(p);
    const double tables = p->page_size > 0 ? 4.0 * p->batch * (p->max_pages + 1.0) : 0;
    const double mask = p->mask ? (double)attnvk_dtype_size(p->mask_dtype) * p->mask_batch * p->mask_heads *
                                      p->seq_q * p->seq_kv * share
                                : 0;
    return (double)avk_q_bytes(p) + es * (double)attnvk_o_elements(p) + /* fp8 queries: a byte an element */
           ((double)attnvk_kv_bytes(p) + (double)attnvk_v_bytes(p)) * share + tables + mask +
           (double)attnvk_block_layout_bytes(p);
}

const char *bench_tuning_source(const bench_record *r, char *out, size_t n)
{
    if (!r->have_kernel || n == 0) return NULL;
    const char *params = r->kernel.params, *t = strstr(params, "tuning=");
    while (t && t != params && t[-1] != ' ') t = strstr(t + 1, "tuning="); /* a whole key */
    if (!t) return NULL;
    t += strlen("tuning=");
    size_t len = strcspn(t, " ");
    snprintf(out, n, "%.*s", (int)len, t);
    return out;
}
