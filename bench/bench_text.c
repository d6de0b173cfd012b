/* CSV (RFC 4180): one header line, one row per record, written as records finish. */
#include "bench_formats.h"

#include <math.h>
#include <string.h>

static void csv_text(strbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        sb_puts(b, s);
        return;
    }
    sb_puts(b, "\"");
    for (; *s; ++s) {
        if (*s == '"') sb_puts(b, "\"\"");
        else sb_printf(b, "%c", *s);
    }
    sb_puts(b, "\"");
}

/* null is an empty field */
static void csv_number(strbuf *b, double v)
{
    if (isfinite(v)) sb_printf(b, "%.9g", v);
}

void bench_csv_head(strbuf *b)
{
    sb_puts(b, "implementation,fused,api,device_index,device_name,group,case,batch,heads,kv_heads,seq_q,seq_kv,"
               "head_dim,causal,dtype,layout,status,reason,variant,tile_br,tile_bc,median_ms,min_ms,mean_ms,std_ms,"
               "p95_ms,p99_ms,cv,samples,tflops,tokens_per_s,gbytes_per_s,peak_fraction,memory_bytes,rel_l2,max_abs,"
               "tolerance,passed,speedup_vs_vendor,vendor_reference,kv_format,page_size,read_bandwidth_gbps,"
               "bandwidth_fraction\n");
}

void bench_csv_row(strbuf *b, const bench_results *res, int i)
{
    const bench_record *r = &res->records[i];
    const bench_target *d = &res->devices[r->device_index];
    const attnvk_problem *p = &r->c.p;
    const bench_stats *s = &r->stats;
    double nan = NAN;
    csv_text(b, r->implementation);
    sb_printf(b, ",%d,%s,%d,", r->fused, attnvk_api_name(d->info.api), r->device_index);
    csv_text(b, d->info.name);
    sb_puts(b, ",");
    csv_text(b, d->group);
    sb_puts(b, ",");
    csv_text(b, r->c.name);
    sb_printf(b, ",%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,", p->batch, p->heads, p->kv_heads, p->seq_q, p->seq_kv,
              p->head_dim, p->causal, attnvk_dtype_name(p->dtype), p->layout == ATTNVK_LAYOUT_BSHD ? "bshd" : "bhsd",
              bench_status_name(r->status));
    csv_text(b, r->status == BENCH_OK ? "" : r->reason);
    sb_puts(b, ",");
    if (r->have_kernel) {
        csv_text(b, r->kernel.variant);
        sb_printf(b, ",%d,%d", r->kernel.tile_br, r->kernel.tile_bc);
    } else {
        sb_puts(b, ",,");
    }
    const double stats[] = {s->median_ms, s->min_ms, s->mean_ms, s->std_ms, s->p95_ms, s->p99_ms, s->cv};
    for (int k = 0; k < 7; ++k) sb_puts(b, ","), csv_number(b, r->have_stats ? stats[k] : nan);
    sb_printf(b, ",%d", r->nsamples);
    const double derived[] = {r->tflops, r->tokens_per_s, r->gbytes_per_s, r->peak_fraction,
                              r->memory_bytes ? (double)r->memory_bytes : nan};
    for (int k = 0; k < 5; ++k) sb_puts(b, ","), csv_number(b, derived[k]);
    const double check[] = {r->check.rel_l2, r->check.max_abs, r->check.tolerance};
    for (int k = 0; k < 3; ++k) sb_puts(b, ","), csv_number(b, r->have_check ? check[k] : nan);
    sb_printf(b, ",%s,", r->have_check ? (r->check.passed ? "true" : "false") : "");
    csv_number(b, r->speedup_vs_vendor);
    sb_puts(b, ",");
    csv_text(b, r->vendor_reference);
    /* appended columns: readers by position keep working */
    sb_printf(b, ",%s,%d,", attnvk_kv_format_name(p->kv_format), p->page_size);
    const int memory_bound = bench_memory_bound(p);
    csv_number(b, memory_bound ? r->read_bandwidth_gbps : nan);
    sb_puts(b, ",");
    csv_number(b, memory_bound ? r->bandwidth_fraction : nan);
    sb_puts(b, "\n");
}
