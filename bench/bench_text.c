/* The aligned table (stdout), CSV and Markdown renderings of the results. */
#include "bench_output.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *data;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->data && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? t->cap : 4096) * 2 + (size_t)n;
        char *grown = realloc(t->data, cap);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
}

static char *finish(text *t)
{
    if (!t->data && !t->failed) put(t, "%s", "");
    if (t->failed) {
        free(t->data);
        return NULL;
    }
    return t->data;
}

static void number(char *out, size_t n, double v, const char *fmt)
{
    if (isfinite(v)) snprintf(out, n, fmt, v);
    else snprintf(out, n, "-");
}

/* ---- table ---- */

char *bench_render_table(const bench_results *res)
{
    text t = {0};
    int case_w = 4;
    for (int i = 0; i < res->nrecords; ++i) {
        int n = (int)strlen(res->records[i].c.name);
        if (n > case_w) case_w = n;
    }
    if (case_w > 48) case_w = 48;
    put(&t, "%-7s %-28s %-8s %-*s %-11s %10s %8s %8s %9s %s\n", "API", "DEVICE", "IMPL", case_w, "CASE", "STATUS",
        "MEDIAN_MS", "TFLOP/S", "SPEEDUP", "REL_L2", "VARIANT");
    for (int i = 0; i < res->nrecords; ++i) {
        const bench_record *r = &res->records[i];
        const bench_target *d = &res->devices[r->device_index];
        char median[32], tflops[32], speedup[32], rel[32];
        number(median, sizeof median, r->have_stats ? r->stats.median_ms : NAN, "%.3f");
        number(tflops, sizeof tflops, r->tflops, "%.3g");
        number(speedup, sizeof speedup, r->speedup_vs_vendor, "%.2fx");
        number(rel, sizeof rel, r->have_check ? r->check.rel_l2 : NAN, "%.2e");
        put(&t, "%-7s %-28.28s %-8s %-*.*s %-11s %10s %8s %8s %9s %s", attnvk_api_name(d->info.api), d->info.name,
            r->implementation, case_w, case_w, r->c.name, bench_status_name(r->status), median, tflops, speedup, rel,
            r->have_kernel ? r->kernel.variant : "-");
        if (r->status != BENCH_OK) put(&t, "  (%s)", r->reason);
        put(&t, "\n");
    }
    return finish(&t);
}

/* ---- CSV (RFC 4180) ---- */

static void csv_text(text *t, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        put(t, "%s", s);
        return;
    }
    put(t, "\"");
    for (; *s; ++s) {
        if (*s == '"') put(t, "\"\"");
        else put(t, "%c", *s);
    }
    put(t, "\"");
}

static void csv_number(text *t, double v)
{
    if (isfinite(v)) put(t, "%.9g", v);
}

char *bench_render_csv(const bench_results *res)
{
    static const char *const header =
        "implementation,fused,api,device_index,device_name,group,case,batch,heads,kv_heads,seq_q,seq_kv,head_dim,"
        "causal,dtype,layout,status,reason,variant,tile_br,tile_bc,median_ms,min_ms,mean_ms,std_ms,p95_ms,p99_ms,cv,"
        "samples,tflops,tokens_per_s,gbytes_per_s,peak_fraction,memory_bytes,rel_l2,max_abs,tolerance,passed,"
        "speedup_vs_vendor,vendor_reference\n";
    text t = {0};
    put(&t, "%s", header);
    for (int i = 0; i < res->nrecords; ++i) {
        const bench_record *r = &res->records[i];
        const bench_target *d = &res->devices[r->device_index];
        const attnvk_problem *p = &r->c.p;
        const bench_stats *s = &r->stats;
        double nan = NAN;
        csv_text(&t, r->implementation);
        put(&t, ",%d,%s,%d,", r->fused, attnvk_api_name(d->info.api), r->device_index);
        csv_text(&t, d->info.name);
        put(&t, ",");
        csv_text(&t, d->group);
        put(&t, ",");
        csv_text(&t, r->c.name);
        put(&t, ",%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,", p->batch, p->heads, p->kv_heads, p->seq_q, p->seq_kv,
            p->head_dim, p->causal, attnvk_dtype_name(p->dtype), p->layout == ATTNVK_LAYOUT_BSHD ? "bshd" : "bhsd",
            bench_status_name(r->status));
        csv_text(&t, r->status == BENCH_OK ? "" : r->reason);
        put(&t, ",");
        if (r->have_kernel) {
            csv_text(&t, r->kernel.variant);
            put(&t, ",%d,%d", r->kernel.tile_br, r->kernel.tile_bc);
        } else {
            put(&t, ",,");
        }
        const double stats[] = {s->median_ms, s->min_ms, s->mean_ms, s->std_ms, s->p95_ms, s->p99_ms, s->cv};
        for (int k = 0; k < 7; ++k) put(&t, ","), csv_number(&t, r->have_stats ? stats[k] : nan);
        put(&t, ",%d", r->nsamples);
        const double derived[] = {r->tflops, r->tokens_per_s, r->gbytes_per_s, r->peak_fraction,
                                  r->memory_bytes ? (double)r->memory_bytes : nan};
        for (int k = 0; k < 5; ++k) put(&t, ","), csv_number(&t, derived[k]);
        const double check[] = {r->check.rel_l2, r->check.max_abs, r->check.tolerance};
        for (int k = 0; k < 3; ++k) put(&t, ","), csv_number(&t, r->have_check ? check[k] : nan);
        put(&t, ",%s,", r->have_check ? (r->check.passed ? "true" : "false") : "");
        csv_number(&t, r->speedup_vs_vendor);
        put(&t, ",");
        csv_text(&t, r->vendor_reference);
        put(&t, "\n");
    }
    return finish(&t);
}

/* ---- Markdown ---- */

static void md_text(text *t, const char *s)
{
    for (; *s; ++s) {
        if (*s == '|') put(t, "\\|");
        else if (*s == '\n' || *s == '\r') put(t, " ");
        else put(t, "%c", *s);
    }
}

char *bench_render_md(const bench_results *res)
{
    text t = {0};
    put(&t, "| API | Device | Impl | Case | dtype | Status | Median ms | TFLOP/s | Speedup | rel L2 | Variant | Reason |\n");
    put(&t, "|---|---|---|---|---|---|---:|---:|---:|---:|---|---|\n");
    for (int i = 0; i < res->nrecords; ++i) {
        const bench_record *r = &res->records[i];
        const bench_target *d = &res->devices[r->device_index];
        char median[32], tflops[32], speedup[32], rel[32];
        number(median, sizeof median, r->have_stats ? r->stats.median_ms : NAN, "%.3f");
        number(tflops, sizeof tflops, r->tflops, "%.3g");
        number(speedup, sizeof speedup, r->speedup_vs_vendor, "%.2fx");
        number(rel, sizeof rel, r->have_check ? r->check.rel_l2 : NAN, "%.2e");
        put(&t, "| %s | ", attnvk_api_name(d->info.api));
        md_text(&t, d->info.name);
        put(&t, " | ");
        md_text(&t, r->implementation);
        put(&t, " | ");
        md_text(&t, r->c.name);
        put(&t, " | %s | %s | %s | %s | %s | %s | ", attnvk_dtype_name(r->c.p.dtype), bench_status_name(r->status),
            median, tflops, speedup, rel);
        md_text(&t, r->have_kernel ? r->kernel.variant : "-");
        put(&t, " | ");
        md_text(&t, r->status == BENCH_OK ? "" : r->reason);
        put(&t, " |\n");
    }
    return finish(&t);
}
