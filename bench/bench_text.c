/* CSV (RFC 4180): one header line, one row per record, written as records finish; and --cold's
 * table (bench_cold.h). */
#include "bench_cold.h"
#include "bench_formats.h"
#include "text_layout.h"

#include <math.h>
#include <stdio.h>
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
               "bandwidth_fraction,tuning_source,pass,forward_median_ms,backward_median_ms,o_dtype,rel_l2_dequantized\n");
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
              p->head_dim, p->causal, bench_dtype_label(p), p->layout == ATTNVK_LAYOUT_BSHD ? "bshd" : "bhsd",
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
    char source[16];
    sb_puts(b, ",");
    csv_text(b, bench_tuning_source(r, source, sizeof source) ? source : "");
    sb_printf(b, ",%s,", bench_pass_name(r->pass));
    csv_number(b, r->have_pass_stats ? r->fwd_stats.median_ms : nan);
    sb_puts(b, ",");
    csv_number(b, r->have_pass_stats ? r->bwd_stats.median_ms : nan);
    /* O's dtype (dtype says fp8 for the FP8 forward) and, there, the checked error */
    sb_printf(b, ",%s,", attnvk_dtype_name(p->dtype));
    csv_number(b, r->rel_l2_dequantized);
    sb_puts(b, "\n");
}

/* ---- --cold: the cold-start table after the results (bench_cold.h) ---- */

enum { COLD_IMPL_W = 9, COLD_DEVICE_W = 17, COLD_DEVICE_COMPACT_W = 9, COLD_NUM_W = 9, COLD_CACHE_W = 10 };

static void cold_ms(char *out, size_t n, bool have, double v)
{
    if (!have || !isfinite(v)) snprintf(out, n, "-");
    else if (v < 10) snprintf(out, n, "%.2f", v);
    else if (v < 1000) snprintf(out, n, "%.1f", v);
    else snprintf(out, n, "%.0f", v);
}

/* "vulkan:0 llvmpipe": the API, index and the name's first word (past a vendor's), within room columns. */
static void cold_device(const bench_target *t, int room, char *out, size_t n)
{
    static const char *const vendor_words[] = {"NVIDIA ", "AMD ", "Intel(R) ", "Intel "};
    const char *name = t->info.name;
    for (size_t w = 0; w < sizeof vendor_words / sizeof *vendor_words; ++w)
        if (strncmp(name, vendor_words[w], strlen(vendor_words[w])) == 0) name += strlen(vendor_words[w]);
    int word = (int)strcspn(name, " (-");
    int len = snprintf(out, n, "%s:%d", attnvk_api_name(t->info.api), t->info.index);
    if (len >= 0 && len + 1 + word <= room && (size_t)(len + 1 + word) < n)
        snprintf(out + len, n - (size_t)len, " %.*s", word, name);
}

static void cold_cells(const bench_cold_result *c, char cells[8][24])
{
    const bench_cold_times *t[2] = {&c->cold, &c->warm};
    const bool have[2] = {c->have_cold, c->have_warm};
    for (int k = 0; k < 2; ++k) {
        cold_ms(cells[3 * k], 24, have[k], t[k]->prepare_ms);
        cold_ms(cells[3 * k + 1], 24, have[k], t[k]->first_dispatch_ms);
        cold_ms(cells[3 * k + 2], 24, have[k], t[k]->first_result_ms);
    }
    if (isfinite(c->cache_bytes)) bench_format_bytes(c->cache_bytes, cells[6], 24);
    else snprintf(cells[6], 24, "-");
    if (c->have_cold && c->have_warm && c->warm.first_result_ms > 0)
        snprintf(cells[7], 24, "%.1fx", c->cold.first_result_ms / c->warm.first_result_ms);
    else
        snprintf(cells[7], 24, "-");
}

static void cold_md(strbuf *b, const bench_results *res)
{
    sb_puts(b, "\n### Cold start\n\nA fresh process per start, ms of wall time; result: device open to the checked "
               "result; cache: what the cold start left in empty kernel caches.\n\n"
               "| case | implementation | device | cold prepare | cold dispatch | cold result | warm prepare | "
               "warm dispatch | warm result | cold/warm | cache |\n"
               "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < res->nrecords; ++i) {
        const bench_record *r = &res->records[i];
        if (!r->cold_start.present) continue;
        char device[64], cells[8][24];
        cold_device(&res->devices[r->device_index], 40, device, sizeof device);
        cold_cells(&r->cold_start, cells);
        sb_printf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->c.name, r->implementation, device,
                  cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[7], cells[6]);
    }
    for (int i = 0; i < res->nrecords; ++i) {
        const bench_record *r = &res->records[i];
        if (r->cold_start.present && r->cold_start.error[0])
            sb_printf(b, "\n%s %s on %s: %s\n", r->c.name, r->implementation, res->devices[r->device_index].info.name,
                      r->cold_start.error);
    }
}

void bench_cold_table(strbuf *b, const bench_results *res, bench_format f)
{
    int any = 0;
    for (int i = 0; i < res->nrecords; ++i) any |= res->records[i].cold_start.present;
    if (!any || (f != BENCH_FMT_TABLE && f != BENCH_FMT_MD)) return;
    if (f == BENCH_FMT_MD) {
        cold_md(b, res);
        return;
    }
    const int compact = res->width < TEXT_WIDE, dev_w = compact ? COLD_DEVICE_COMPACT_W : COLD_DEVICE_W;
    /* compact: result times and the cache only */
    static const char *const wide_heads[] = {"PREPARE", "DISPATCH", "RESULT", "PREPARE", "DISPATCH", "RESULT"};
    sb_puts(b, "\ncold start: a fresh process per start, ms of wall time (result: device open to the checked result);\n"
               "cache: what the cold start left in empty kernel caches (attnvk's and the drivers')\n");
    text_pad(b, "", 2 + COLD_IMPL_W + 2 + dev_w, 0);
    if (compact) {
        sb_puts(b, " "), text_pad(b, "COLD", COLD_NUM_W, 1);
        sb_puts(b, " "), text_pad(b, "WARM", COLD_NUM_W, 1);
    } else {
        sb_puts(b, " ------- EMPTY CACHES -------- --------- WARM CACHES -------");
    }
    sb_puts(b, "\n");
    text_pad(b, "  IMPL", 2 + COLD_IMPL_W, 0);
    sb_puts(b, "  ");
    text_pad(b, "DEVICE", dev_w, 0);
    for (int k = 0; k < 6; ++k)
        if (!compact || k % 3 == 2) sb_puts(b, " "), text_pad(b, compact ? "RESULT" : wide_heads[k], COLD_NUM_W, 1);
    if (!compact) sb_puts(b, " "), text_pad(b, "COLD/WARM", COLD_NUM_W, 1);
    sb_puts(b, " "), text_pad(b, "CACHE", COLD_CACHE_W, 1);
    sb_puts(b, "\n");
    const char *last_case = "";
    for (int i = 0; i < res->nrecords; ++i) {
        const bench_record *r = &res->records[i];
        const bench_cold_result *c = &r->cold_start;
        if (!c->present) continue;
        if (strcmp(r->c.name, last_case) != 0) sb_printf(b, "%s\n", r->c.name);
        last_case = r->c.name;
        char device[64], cells[8][24];
        cold_device(&res->devices[r->device_index], dev_w, device, sizeof device);
        cold_cells(c, cells);
        sb_puts(b, "  ");
        text_pad(b, r->implementation, COLD_IMPL_W, 0);
        sb_puts(b, "  ");
        text_pad(b, device, dev_w, 0);
        for (int k = 0; k < 6; ++k)
            if (!compact || k % 3 == 2) sb_puts(b, " "), text_pad(b, cells[k], COLD_NUM_W, 1);
        if (!compact) sb_puts(b, " "), text_pad(b, cells[7], COLD_NUM_W, 1);
        sb_puts(b, " "), text_pad(b, cells[6], COLD_CACHE_W, 1);
        sb_puts(b, "\n");
        if (c->error[0]) {
            sb_puts(b, "    ");
            text_wrap(b, c->error, 4, 6, res->width);
        }
    }
}
