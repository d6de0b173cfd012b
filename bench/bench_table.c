/* The aligned table and its Markdown twin. A row says what a reader needs to
 * understand it: implementation, API and device, case, median ± std, throughput
 * with its unit, speedup against the vendor kernel, and the check; everything else
 * is in JSON and CSV. The table fits TEXT_WIDE columns, or TEXT_COMPACT, where the
 * case becomes a heading above its rows. */
#include "bench_formats.h"
#include "bench_ring.h"
#include "text_layout.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

enum {
    IMPL_W = 9,           /* "openblas", "reference" in old results */
    DEVICE_WIDE_W = 17,   /* "vulkan:0 llvmpipe" */
    DEVICE_COMPACT_W = 9, /* "opencl:0" */
    CASE_MAX_W = 37,      /* the quick suite's longest name */
    TIME_W = 15,          /* "1234.5 ± 123.4", "MEDIAN ± STD ms" */
    RATE_W = 13,          /* "4.87 GFLOP/s", "2.76 GB/s 13%" */
    VS_W = 14,            /* "0.52x openblas", "13.6x openblas" (3 digits) */
    COMPACT_INDENT = 2,   /* rows under their case heading */
};

static int is_compact(const bench_results *res) { return res->width < TEXT_WIDE; }

static void device_id(const bench_target *t, char *out, size_t n)
{
    snprintf(out, n, "%s:%d", attnvk_api_name(t->info.api), t->info.index);
}

/* The name without vendor words and parenthesised details, cut at a word or hyphen
 * to fit room columns: "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3". The devices
 * list above the table has the full name. */
static void short_name(const char *name, int room, char *out, size_t n)
{
    static const char *const vendor_words[] = {"NVIDIA ", "AMD ", "Intel(R) ", "Intel ", "GeForce ", "Radeon "};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    char *paren = strstr(buf, " (");
    if (paren) *paren = '\0';
    const char *s = buf;
    for (size_t w = 0; w < sizeof vendor_words / sizeof *vendor_words; ++w)
        if (strncmp(s, vendor_words[w], strlen(vendor_words[w])) == 0 && s[strlen(vendor_words[w])])
            s += strlen(vendor_words[w]);
    size_t len = strlen(s);
    if (room < 1) len = 0;
    else if ((int)len > room) {
        size_t cut = (size_t)room;
        while (cut > 0 && s[cut] != ' ' && s[cut] != '-') --cut;
        len = cut > 0 ? cut : (size_t)room;
    }
    snprintf(out, n, "%.*s", (int)len, s);
}

static void device_cell(const bench_target *t, int with_name, char *out, size_t n)
{
    char id[32], name[48];
    device_id(t, id, sizeof id);
    if (!with_name) {
        snprintf(out, n, "%s", id);
        return;
    }
    short_name(t->info.name, DEVICE_WIDE_W - (int)strlen(id) - 1, name, sizeof name);
    snprintf(out, n, "%s%s%s", id, name[0] ? " " : "", name);
}

/* A name longer than the column keeps its head and its last 8 characters. */
static void case_cell(const char *name, int width, char *out, size_t n)
{
    int len = (int)strlen(name);
    if (len <= width) snprintf(out, n, "%s", name);
    else snprintf(out, n, "%.*s~%s", width - 9, name, name + len - 8);
}

/* Median ± sample std in ms, to about four significant digits of the median. */
static void time_cell(const bench_record *r, char *out, size_t n)
{
    double m = r->stats.median_ms;
    int decimals = m > 0 ? 3 - (int)floor(log10(m)) : 4;
    if (decimals < 0) decimals = 0;
    if (decimals > 4) decimals = 4;
    if (r->nsamples >= 2) snprintf(out, n, "%.*f \xc2\xb1 %.*f", decimals, m, decimals, r->stats.std_ms);
    else snprintf(out, n, "%.*f", decimals, m);
}

/* Memory-bound rows: "812 GB/s 87%" (the % of the device's measured read
 * bandwidth, when known), "2.9 TB/s 86%" where GB/s would not fit the column. */
static void bandwidth_cell(const bench_record *r, char *out, size_t n)
{
    double g = r->gbytes_per_s, f = r->bandwidth_fraction;
    char pct[16] = "";
    if (isfinite(f)) snprintf(pct, sizeof pct, " %.0f%%", 100 * f);
    snprintf(out, n, g >= 100 ? "%.0f GB/s%s" : g >= 10 ? "%.1f GB/s%s" : "%.2f GB/s%s", g, pct);
    if ((int)strlen(out) > RATE_W && g >= 1000) snprintf(out, n, "%.1f TB/s%s", g / 1000, pct);
}

/* FLOP/s with the unit chosen per row, so a CPU's GFLOP/s reads as plainly as a GPU's TFLOP/s;
 * memory-bound (decode) rows in GB/s instead. */
static void rate_cell(const bench_record *r, char *out, size_t n)
{
    if (bench_memory_bound(&r->c.p) && isfinite(r->gbytes_per_s)) {
        bandwidth_cell(r, out, n);
        return;
    }
    double v = r->tflops * 1e12;
    const char *unit = "TFLOP/s";
    if (v < 1e6) v /= 1e3, unit = "kFLOP/s";
    else if (v < 1e9) v /= 1e6, unit = "MFLOP/s";
    else if (v < 1e12) v /= 1e9, unit = "GFLOP/s";
    else v /= 1e12;
    snprintf(out, n, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, unit);
}

static void speedup_cell(const bench_record *r, char *out, size_t n)
{
    double s = r->speedup_vs_vendor;
    if (!isfinite(s)) snprintf(out, n, "-");
    else snprintf(out, n, s >= 100 ? "%.0fx %s" : s >= 10 ? "%.1fx %s" : "%.2fx %s", s, r->vendor_reference);
}

/* "2.1e-4": the relative L2 error in a few columns. */
static void short_sci(double v, char *out, size_t n)
{
    if (v == 0) {
        snprintf(out, n, "0");
        return;
    }
    char buf[24];
    snprintf(buf, sizeof buf, "%.1e", v);
    char *e = strchr(buf, 'e');
    if (!e) {
        snprintf(out, n, "%s", buf);
        return;
    }
    char sign = e[1] == '-' ? '-' : '\0';
    const char *digits = e + 2;
    while (*digits == '0' && digits[1]) ++digits;
    *e = '\0';
    snprintf(out, n, "%se%s%s", buf, sign ? "-" : "", digits);
}

/* the backward's names its worst gradient: "ok 2.1e-3 dk"; the FP8 forward gives the checked
 * error (vs the dequantized inputs), then the one vs the unquantized inputs: "ok 1.6e-3 (inputs 5.3e-2)" */
static void check_cell(const bench_record *r, char *out, size_t n)
{
    char rel[48], inputs[48];
    short_sci(isnan(r->rel_l2_dequantized) ? r->check.rel_l2 : r->rel_l2_dequantized, rel, sizeof rel);
    if (r->have_grad) {
        snprintf(out, n, "ok %s %s", rel, bench_grad_name(r->worst_grad));
    } else if (!isnan(r->rel_l2_dequantized)) {
        short_sci(r->check.rel_l2, inputs, sizeof inputs);
        snprintf(out, n, "ok %s (inputs %s)", rel, inputs);
    } else {
        snprintf(out, n, "ok %s", rel);
    }
}

/* fwd+bwd: "fwd 1.234 ± 0.010 + bwd 2.345 ± 0.020 ms" */
static void split_cell(const bench_record *r, char *out, size_t n)
{
    bench_record f = *r, b = *r;
    f.stats = r->fwd_stats;
    b.stats = r->bwd_stats;
    char fc[48], bc[48];
    time_cell(&f, fc, sizeof fc);
    time_cell(&b, bc, sizeof bc);
    snprintf(out, n, "fwd %s + bwd %s ms", fc, bc);
}

static const char *status_word(bench_status s) { return s == BENCH_FAIL ? "FAIL" : bench_status_name(s); }

static int case_width(const bench_results *res)
{
    int w = 4;
    for (int c = 0; c < res->ncases; ++c) {
        int n = (int)strlen(res->cases[c].name);
        if (n > w) w = n;
    }
    return w < CASE_MAX_W ? w : CASE_MAX_W;
}

/* "suite quick, 6 cases, f16 (f32: quick-f32-...), layout bhsd, min-time 0.05 s, seed 1" */
static void run_summary(const bench_results *res, strbuf *b)
{
    const bench_options *o = res->opts;
    if (res->suite) sb_printf(b, "suite %s, ", res->suite);
    const char *label = bench_options_dtype_label(o, res->dtype); /* "fp8": the FP8 forward */
    sb_printf(b, "%d %scase%s, %s", res->ncases, res->suite ? "" : "custom ", res->ncases == 1 ? "" : "s", label);
    if (o->q_format != ATTNVK_KV_DTYPE) sb_printf(b, " (O %s)", attnvk_dtype_name(res->dtype));
    int others = 0;
    for (int c = 0; c < res->ncases; ++c) {
        const char *own = bench_dtype_label(&res->cases[c].p);
        if (strcmp(own, label) == 0 && res->cases[c].p.dtype == res->dtype) continue;
        sb_printf(b, "%s%s: %s", others++ ? ", " : " (", own, res->cases[c].name);
    }
    if (others) sb_puts(b, ")");
    sb_printf(b, ", layout %s, ", o->layout == ATTNVK_LAYOUT_BSHD ? "bshd" : "bhsd");
    if (o->iters) sb_printf(b, "%ld repetitions", o->iters);
    else sb_printf(b, "min-time %g s", o->min_time_s);
    sb_printf(b, ", seed %llu", (unsigned long long)o->seed);
    if (o->pass != BENCH_PASS_FWD) sb_printf(b, ", pass %s", bench_pass_name(o->pass));
}

static void device_description(const bench_target *t, strbuf *b)
{
    if (t->info.api == ATTNVK_API_CPU) {
        sb_printf(b, "%s: the host CPU (attnvk's f32 flash kernel, OpenBLAS unfused; checks against the float64 reference)",
                  t->info.name);
        return;
    }
    sb_printf(b, "%s (%s, %s), driver %s", t->info.name, t->info.vendor, attnvk_device_type_name(t->info.type),
              t->info.driver_version);
}

static void counts_summary(const bench_results *res, strbuf *b)
{
    int n[4] = {0};
    for (int i = 0; i < res->nrecords; ++i) ++n[res->records[i].status];
    sb_printf(b, "%d record%s: %d ok, %d failed, %d skipped, %d unavailable", res->nrecords,
              res->nrecords == 1 ? "" : "s", n[BENCH_OK], n[BENCH_FAIL], n[BENCH_SKIPPED], n[BENCH_UNAVAILABLE]);
    if (res->stopped_by == SIGALRM)
        sb_printf(b, "; --max-time reached after %d of %d", res->nrecords, res->planned);
    else if (res->stopped_by)
        sb_printf(b, "; stopped by %s after %d of %d", res->stopped_by == SIGINT ? "SIGINT" : "SIGTERM", res->nrecords,
                  res->planned);
}

static const char column_key[] =
    "MEDIAN \xc2\xb1 STD: device time of one run in ms and its sample standard deviation; THROUGHPUT: "
    "4*B*H*Nq*Nk*D FLOP (halved for causal) / median, except for decode (Nq <= 16): bytes of Q, K, V and O / "
    "median in GB/s, and its % of the device's measured read bandwidth (attnvk devices); VS VENDOR: the median of the fastest vendor kernel on "
    "the same device / this median (> 1: faster); CHECK: relative L2 error against the float64 reference "
    "(dtype fp8, the FP8 forward: on the dequantized inputs, the checked one, then on the unquantized inputs). "
    "--pass bwd: the backward's time, 2.5x the forward's FLOP, CHECK the worst of dQ, dK, dV; fwd+bwd: "
    "the total, 3.5x, the forward's and backward's times on the line below.";

/* Wraps the text built in tmp, then empties it. */
static void flush_wrapped(strbuf *b, strbuf *tmp, int col, int indent, int width)
{
    text_wrap(b, tmp->data ? tmp->data : "", col, indent, width);
    sb_free(tmp);
    tmp->failed = b->failed = b->failed || tmp->failed;
}

/* ---- table ---- */

void bench_table_head(strbuf *b, const bench_results *res)
{
    strbuf tmp = {0};
    sb_puts(&tmp, "attnvk bench: ");
    run_summary(res, &tmp);
    flush_wrapped(b, &tmp, 0, 2, res->width);
    sb_puts(b, "devices:\n");
    for (int d = 0; d < res->ndevices; ++d) {
        char id[48];
        device_id(&res->devices[d], id, sizeof id);
        sb_puts(b, "  ");
        text_pad(b, id, DEVICE_COMPACT_W, 0);
        sb_puts(b, " ");
        device_description(&res->devices[d], &tmp);
        flush_wrapped(b, &tmp, 3 + DEVICE_COMPACT_W, 3 + DEVICE_COMPACT_W, res->width);
    }
    if (is_compact(res)) {
        sb_puts(b, "  ");
        text_pad(b, "IMPL", IMPL_W, 0);
        sb_puts(b, " ");
        text_pad(b, "DEVICE", DEVICE_COMPACT_W, 0);
    } else {
        text_pad(b, "IMPL", IMPL_W, 0);
        sb_puts(b, " ");
        text_pad(b, "DEVICE", DEVICE_WIDE_W, 0);
        sb_puts(b, " ");
        text_pad(b, "CASE", case_width(res), 0);
    }
    sb_puts(b, " ");
    text_pad(b, "MEDIAN \xc2\xb1 STD ms", TIME_W, 1);
    sb_puts(b, " ");
    text_pad(b, "THROUGHPUT", RATE_W, 1);
    sb_puts(b, " ");
    text_pad(b, "VS VENDOR", VS_W, 0);
    sb_puts(b, " CHECK\n");
}

void bench_table_row(strbuf *b, const bench_results *res, int i)
{
    const bench_record *r = &res->records[i];
    const bench_target *t = &res->devices[r->device_index];
    int compact = is_compact(res), col;
    char dev[96], cell[160];
    if (compact) {
        if (i == 0 || strcmp(res->records[i - 1].c.name, r->c.name) != 0) text_wrap(b, r->c.name, 0, 2, res->width);
        sb_puts(b, "  ");
        text_pad(b, r->implementation, IMPL_W, 0);
        sb_puts(b, " ");
        device_cell(t, 0, dev, sizeof dev);
        text_pad(b, dev, DEVICE_COMPACT_W, 0);
        col = COMPACT_INDENT + IMPL_W + 1 + DEVICE_COMPACT_W + 1;
    } else {
        int cw = case_width(res);
        text_pad(b, r->implementation, IMPL_W, 0);
        sb_puts(b, " ");
        device_cell(t, 1, dev, sizeof dev);
        text_pad(b, dev, DEVICE_WIDE_W, 0);
        sb_puts(b, " ");
        case_cell(r->c.name, cw, cell, sizeof cell);
        text_pad(b, cell, cw, 0);
        col = IMPL_W + 1 + DEVICE_WIDE_W + 1 + cw + 1;
    }
    sb_puts(b, " ");
    if (r->status != BENCH_OK || !r->have_stats) {
        strbuf tmp = {0};
        sb_printf(&tmp, "%s: %s", status_word(r->status), r->reason[0] ? r->reason : "no samples");
        flush_wrapped(b, &tmp, col, col, res->width);
        return;
    }
    time_cell(r, cell, sizeof cell);
    text_pad(b, cell, TIME_W, 1);
    sb_puts(b, " ");
    rate_cell(r, cell, sizeof cell);
    text_pad(b, cell, RATE_W, 1);
    sb_puts(b, " ");
    speedup_cell(r, cell, sizeof cell);
    text_pad(b, cell, VS_W, 0);
    sb_puts(b, " ");
    check_cell(r, cell, sizeof cell);
    sb_printf(b, "%s\n", cell);
    if (r->have_pass_stats) {
        split_cell(r, cell, sizeof cell);
        text_pad(b, "", col, 0);
        sb_printf(b, "%s\n", cell);
    }
}

/* A sparse record against its dense partner (vs_dense): one line, 0 when it has none. */
static int dense_line(strbuf *b, const bench_results *res, const bench_record *r)
{
    if (!r->have_dense) return 0;
    const struct bench_vs_dense *x = &r->vs_dense;
    const attnvk_device_info *d = &res->devices[r->device_index].info;
    sb_printf(b, "vs dense %s, %s %s:%d: %.2fx (%.3f ms, dense %.3f ms)", r->c.name, r->implementation,
              attnvk_api_name(d->api), d->index, x->speedup, r->stats.median_ms, x->dense_ms);
    if (isfinite(x->memory_ratio)) sb_printf(b, ", memory %.2fx", x->memory_ratio);
    return 1;
}

void bench_table_tail(strbuf *b, const bench_results *res)
{
    strbuf tmp = {0};
    counts_summary(res, &tmp);
    flush_wrapped(b, &tmp, 0, 2, res->width);
    for (int i = 0; i < res->nrecords; ++i)
        if (bench_ring_line(&tmp, &res->records[i])) flush_wrapped(b, &tmp, 0, 2, res->width);
    for (int i = 0; i < res->nrecords; ++i)
        if (dense_line(&tmp, res, &res->records[i])) flush_wrapped(b, &tmp, 0, 2, res->width);
    text_wrap(b, column_key, 0, 2, res->width);
}

/* ---- Markdown ---- */

static void md_text(strbuf *b, const char *s)
{
    for (; *s; ++s) {
        if (*s == '|') sb_puts(b, "\\|");
        else if (*s == '\n' || *s == '\r') sb_puts(b, " ");
        else sb_printf(b, "%c", *s);
    }
}

/* The footnote number of records[i]'s reason: distinct reasons of the records that are
 * not ok, numbered from 1 in order of first appearance (0 for an ok record). */
static int footnote_of(const bench_results *res, int i)
{
    if (res->records[i].status == BENCH_OK) return 0;
    int n = 0;
    for (int j = 0; j <= i; ++j) {
        const bench_record *r = &res->records[j];
        if (r->status == BENCH_OK) continue;
        int first = 1;
        for (int k = 0; k < j && first; ++k)
            first = res->records[k].status == BENCH_OK || strcmp(res->records[k].reason, r->reason) != 0;
        if (first) ++n;
        if (strcmp(r->reason, res->records[i].reason) == 0) return n; /* j is the first with i's reason */
    }
    return n;
}

void bench_md_head(strbuf *b, const bench_results *res)
{
    sb_puts(b, "**attnvk bench**: ");
    strbuf tmp = {0};
    run_summary(res, &tmp);
    md_text(b, tmp.data ? tmp.data : "");
    sb_free(&tmp);
    sb_puts(b, "\n\n");
    for (int d = 0; d < res->ndevices; ++d) {
        char id[48];
        device_id(&res->devices[d], id, sizeof id);
        sb_printf(b, "- `%s`: ", id);
        device_description(&res->devices[d], &tmp);
        md_text(b, tmp.data ? tmp.data : "");
        sb_free(&tmp);
        sb_puts(b, "\n");
    }
    sb_puts(b, "\n| Impl | Device | Case | Median \xc2\xb1 std (ms) | Throughput | vs vendor | Check |\n"
               "|---|---|---|---:|---:|---|---|\n");
}

void bench_md_row(strbuf *b, const bench_results *res, int i)
{
    const bench_record *r = &res->records[i];
    char dev[96], cell[160];
    device_cell(&res->devices[r->device_index], 0, dev, sizeof dev);
    sb_puts(b, "| ");
    md_text(b, r->implementation);
    sb_printf(b, " | %s | ", dev);
    md_text(b, r->c.name);
    if (r->status != BENCH_OK) {
        sb_printf(b, " | - | - | - | %s [^%d] |\n", status_word(r->status), footnote_of(res, i));
        return;
    }
    if (!r->have_stats) {
        sb_puts(b, " | - | - | - | ok |\n");
        return;
    }
    time_cell(r, cell, sizeof cell);
    sb_printf(b, " | %s", cell);
    if (r->have_pass_stats) {
        split_cell(r, cell, sizeof cell);
        sb_printf(b, " (%s)", cell);
    }
    sb_puts(b, " | ");
    rate_cell(r, cell, sizeof cell);
    sb_printf(b, "%s | ", cell);
    speedup_cell(r, cell, sizeof cell);
    sb_printf(b, "%s | ", cell);
    check_cell(r, cell, sizeof cell);
    sb_printf(b, "%s |\n", cell);
}

void bench_md_tail(strbuf *b, const bench_results *res)
{
    sb_puts(b, "\n");
    for (int i = 0; i < res->nrecords; ++i)
        if (bench_ring_line(b, &res->records[i])) sb_puts(b, "\n\n");
    int last = 0;
    for (int i = 0; i < res->nrecords; ++i) {
        int n = footnote_of(res, i);
        if (n <= last) continue; /* footnotes appear in number order */
        sb_printf(b, "[^%d]: ", n);
        md_text(b, res->records[i].reason[0] ? res->records[i].reason : "no samples");
        sb_puts(b, "\n");
        last = n;
    }
    if (last) sb_puts(b, "\n");
    strbuf tmp = {0};
    counts_summary(res, &tmp);
    md_text(b, tmp.data ? tmp.data : "");
    sb_free(&tmp);
    sb_printf(b, ".\n\n%s\n", column_key);
}
