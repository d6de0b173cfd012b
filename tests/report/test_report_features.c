/* Unit tests of the report's roofline, error bars and CPU/GPU crossover: the crossover
 * computation on synthetic records, the reader's new fields (peaks, roofline, tiles, p5/p95
 * from samples_ms) and what the page renders from them. */
#include "report_buf.h"
#include "report_crossover.h"
#include "report_html.h"
#include "report_svg.h"
#include "results_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define EXPECT(cond)                                                                                                   \
    do {                                                                                                               \
        if (cond) ++passed;                                                                                            \
        else {                                                                                                         \
            ++failed;                                                                                                  \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                                     \
        }                                                                                                              \
    } while (0)

static bool near(double a, double b) { return fabs(a - b) <= 1e-7 * fmax(fabs(a), fabs(b)); } /* survives %.9g */

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) ++n;
    return n;
}

/* ---- the crossover on synthetic records ---- */

static results_case kcase(long n, long seq_q, bool causal)
{
    results_case k = {.batch = 1, .heads = 4, .kv_heads = 4, .seq_q = seq_q ? seq_q : n, .seq_kv = n, .head_dim = 64,
                      .causal = causal, .scale = 0.125};
    snprintf(k.name, sizeof k.name, "d64-n%ld-q%ld%s", n, k.seq_q, causal ? "-causal" : "");
    strcpy(k.dtype, "f32"), strcpy(k.layout, "bhsd");
    return k;
}

static results_record rec(const char *impl, const char *api, const char *device, results_case k, double median_ms)
{
    results_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.implementation, sizeof r.implementation, "%s", impl);
    snprintf(r.api, sizeof r.api, "%s", api);
    snprintf(r.device_name, sizeof r.device_name, "%s", device);
    snprintf(r.group, sizeof r.group, "%s", strcmp(api, "cpu") == 0 ? "host-cpu" : "gpu-uuid");
    r.kase = k;
    r.status = RESULT_OK;
    r.stats = (results_stats){.present = true, .median_ms = median_ms, .min_ms = median_ms, .p5_ms = NAN, .p95_ms = NAN};
    r.flops = 4.0 * k.batch * k.heads * k.seq_q * k.seq_kv * k.head_dim;
    r.tflops = r.flops / (median_ms * 1e-3) / 1e12;
    r.roofline.fraction = NAN;
    return r;
}

static const report_crossover *find(const report_crossovers *x, const char *api, long seq_q, bool causal)
{
    for (int i = 0; i < x->count; ++i)
        if (strcmp(x->items[i].gpu->api, api) == 0 && x->items[i].gpu->kase.seq_q == (seq_q ? seq_q : x->items[i].gpu->kase.seq_kv) &&
            x->items[i].gpu->kase.causal == causal)
            return &x->items[i];
    return NULL;
}

static void test_crossover(void)
{
    static const long lengths[] = {128, 256, 512, 1024, 2048};
    results_record r[128];
    int n = 0;
    for (int i = 0; i < 5; ++i) {
        long len = lengths[i];
        double cpu_attnvk = 0.001 * len * len / 1000, cpu_blas = cpu_attnvk * (len >= 512 ? 0.8 : 1.2);
        results_case k = kcase(len, 0, false);
        r[n++] = rec("reference", "cpu", "Host CPU", k, 1e-6); /* the oracle: never a contender */
        r[n++] = rec("attnvk", "cpu", "Host CPU", k, cpu_attnvk);
        r[n++] = rec("openblas", "cpu", "Host CPU", k, cpu_blas);
        /* vulkan: a fixed 0.15 ms launch cost, 20x the CPU's rate: faster from 512 on */
        r[n++] = rec("attnvk", "vulkan", "Test GPU", k, 0.15 + cpu_attnvk / 20);
        /* opencl: never faster */
        r[n++] = rec("attnvk", "opencl", "Test GPU", k, cpu_blas * 3 + 0.1);
        /* cuda: faster already at 128 */
        r[n++] = rec("attnvk", "cuda", "Test GPU", k, cpu_blas / 10);
        /* hip: ahead at 256, behind at 512, ahead again from 1024 */
        r[n++] = rec("attnvk", "hip", "Test GPU", k, len == 256 || len >= 1024 ? fmin(cpu_attnvk, cpu_blas) / 2 : cpu_attnvk * 2);
        /* a vendor kernel on the GPU is no attnvk record */
        r[n++] = rec("cudnn", "cuda", "Test GPU", k, 1e-6);
    }
    /* a failed vulkan record at 4096 must not count; a 4096 case the CPU never ran is not compared */
    results_record failed_rec = rec("attnvk", "vulkan", "Test GPU", kcase(4096, 0, false), 1e-6);
    failed_rec.status = RESULT_FAIL;
    r[n++] = failed_rec;
    r[n++] = rec("attnvk", "cuda", "Test GPU", kcase(4096, 0, false), 1.0);
    /* a causal family of its own: vulkan faster from 1024 */
    for (int i = 2; i < 5; ++i) {
        results_case k = kcase(lengths[i], 0, true);
        r[n++] = rec("attnvk", "cpu", "Host CPU", k, 1.0);
        r[n++] = rec("attnvk", "vulkan", "Test GPU", k, lengths[i] >= 1024 ? 0.5 : 2.0);
    }
    /* decode: Nq = 1 against a growing cache, a family of its own (Nq stays) */
    for (int i = 0; i < 5; ++i) {
        results_case k = kcase(lengths[i] * 8, 1, false);
        r[n++] = rec("attnvk", "cpu", "Host CPU", k, 0.01 * (i + 1));
        r[n++] = rec("attnvk", "vulkan", "Test GPU", k, 0.025);
    }

    results_case causal512 = kcase(512, 0, true);
    EXPECT(report_same_family(&r[0].kase, &r[8].kase));     /* 128 and 256 */
    EXPECT(!report_same_family(&r[0].kase, &causal512));     /* causal is another family */
    results_case decode_a = kcase(1024, 1, false), decode_b = kcase(8192, 1, false), other_q = kcase(8192, 4, false);
    EXPECT(report_same_family(&decode_a, &decode_b));
    EXPECT(!report_same_family(&decode_a, &other_q) && !report_same_family(&decode_a, &r[0].kase));

    report_crossovers x;
    EXPECT(report_crossover_compute(r, n, &x) == 0);
    EXPECT(x.count == 6); /* square: vulkan, opencl, cuda, hip; causal: vulkan; decode: vulkan */

    const report_crossover *vk = find(&x, "vulkan", 0, false);
    EXPECT(vk && vk->point_count == 5 && vk->crossover_n == 512 && !vk->from_first && vk->stays_ahead);
    if (vk) {
        EXPECT(vk->points[0].n == 128 && vk->points[4].n == 2048);
        /* at 512 openblas is the CPU's best (0.8x attnvk's time), and the reference's 1 ns never is */
        EXPECT(strcmp(vk->points[2].cpu_impl, "openblas") == 0 && strcmp(vk->points[0].cpu_impl, "attnvk") == 0);
        double cpu512 = 0.001 * 512 * 512 / 1000 * 0.8, gpu512 = 0.15 + 0.001 * 512 * 512 / 1000 / 20;
        EXPECT(near(vk->speedup_at, cpu512 / gpu512));
        EXPECT(vk->speedup_last > vk->speedup_at);
        EXPECT(near(vk->points[2].cpu_tflops, 4.0 * 4 * 512 * 512 * 64 / (cpu512 * 1e-3) / 1e12));
    }
    const report_crossover *cl = find(&x, "opencl", 0, false);
    EXPECT(cl && cl->crossover_n == 0 && !cl->stays_ahead && isnan(cl->speedup_at) && cl->speedup_last < 1);
    const report_crossover *cu = find(&x, "cuda", 0, false);
    EXPECT(cu && cu->crossover_n == 128 && cu->from_first && cu->stays_ahead && cu->point_count == 5); /* 4096: no CPU */
    const report_crossover *hip = find(&x, "hip", 0, false);
    EXPECT(hip && hip->crossover_n == 256 && !hip->from_first && !hip->stays_ahead);
    const report_crossover *causal = find(&x, "vulkan", 0, true);
    EXPECT(causal && causal->point_count == 3 && causal->crossover_n == 1024 && causal->stays_ahead);
    const report_crossover *decode = find(&x, "vulkan", 1, false);
    EXPECT(decode && decode->point_count == 5 && decode->crossover_n == 4096); /* 0.025 ms < the CPU's 0.03 */
    report_crossover_free(&x);

    /* no CPU records, or no GPU ones: nothing */
    EXPECT(report_crossover_compute(r + 3, 1, &x) == 0 && x.count == 0 && x.items == NULL);
    EXPECT(report_crossover_compute(r, 3, &x) == 0 && x.count == 0);

    char len[32];
    report_length_text(2048, len, sizeof len); EXPECT(strcmp(len, "2k") == 0);
    report_length_text(3072, len, sizeof len); EXPECT(strcmp(len, "3k") == 0);
    report_length_text(1536, len, sizeof len); EXPECT(strcmp(len, "1.5k") == 0);
    report_length_text(1048576, len, sizeof len); EXPECT(strcmp(len, "1M") == 0);
    report_length_text(500, len, sizeof len); EXPECT(strcmp(len, "500") == 0);
}

/* ---- a results file with peaks and rooflines, through the reader and the page ---- */

static void samples(strbuf *b, double median, int n)
{
    sb_puts(b, "\"samples_ms\":[");
    for (int i = 0; i < n; ++i) sb_printf(b, "%s%.9g", i ? "," : "", median * (0.9 + 0.2 * i / (n - 1))); /* 0.9m .. 1.1m */
    sb_printf(b, "],\"stats\":{\"min_ms\":%.9g,\"median_ms\":%.9g,\"mean_ms\":%.9g,\"std_ms\":%.9g,\"p95_ms\":null,\"p99_ms\":null,"
                 "\"cv\":0.05},",
              median * 0.9, median, median, median * 0.05);
}

/* One record; gpu: the Vulkan device (1), else the CPU (0) or OpenCL (2). */
static void record_json(strbuf *b, const char *impl, const char *api, int dev, long len, double median, int nsamples, bool roofline)
{
    static const char *names[] = {"Host CPU", "Test GPU", "Test GPU"};
    double flops = 4.0 * 4 * len * len * 64, tf = flops / (median * 1e-3) / 1e12, bytes = 4.0 * 4 * len * 64 * 4;
    sb_printf(b, "{\"implementation\":\"%s\",\"api\":\"%s\",\"device_index\":%d,\"device_name\":\"%s\",\"device_uuid\":%s,"
                 "\"group\":\"%s\",\"driver_version\":\"1.0\",\"case\":{\"name\":\"d64-n%ld\",\"batch\":1,\"heads\":4,\"kv_heads\":4,"
                 "\"seq_q\":%ld,\"seq_kv\":%ld,\"head_dim\":64,\"causal\":false,\"dtype\":\"f32\",\"layout\":\"bhsd\",\"scale\":0.125},"
                 "\"status\":\"ok\",\"reason\":\"\",\"variant\":\"%s\",\"tile_br\":64,\"tile_bc\":32,",
              impl, api, dev, names[dev], dev ? "\"u-gpu\"" : "null", dev ? "u-gpu" : "host-cpu", len, len, len,
              strcmp(impl, "attnvk") == 0 ? (dev ? "tiled-x" : "flash-f32") : "sgemm");
    samples(b, median, nsamples);
    sb_printf(b, "\"flops\":%.9g,\"tflops\":%.9g,\"gbytes_per_s\":%.9g,\"memory_bytes\":%.0f,\"speedup_vs_vendor\":null,", flops, tf,
              bytes / (median * 1e-3) / 1e9, bytes);
    double ai = flops / bytes, attainable = fmin(dev ? 20.0 : 0.04, ai * (dev ? 100 : 20) / 1e3);
    if (roofline)
        sb_printf(b, "\"roofline\":{\"arithmetic_intensity\":%.9g,\"bound\":\"%s\",\"compute_peak_tflops\":%.9g,\"compute_path\":\"fma\","
                     "\"attainable_tflops\":%.9g,\"fraction\":%.9g},",
                  ai, attainable < (dev ? 20.0 : 0.04) ? "memory" : "compute", dev ? 20.0 : 0.04, attainable, tf / attainable);
    else sb_puts(b, "\"roofline\":null,");
    sb_puts(b, "\"check\":null}");
}

static void peak_entry(strbuf *b, const char *key, double v, const char *unit, const char *path, const char *reason, bool last)
{
    if (v > 0) sb_printf(b, "\"%s\":{\"value\":%g,\"unit\":\"%s\",\"state\":\"cached\",\"path\":\"%s\"}", key, v, unit, path);
    else sb_printf(b, "\"%s\":{\"value\":null,\"unit\":\"%s\",\"state\":\"none\",\"path\":\"none\",\"reason\":\"%s\"}", key, unit, reason);
    sb_puts(b, last ? "}" : ",");
}

static char *results_doc(void)
{
    strbuf b = {0};
    sb_puts(&b, "{\"format_version\":1,\"created\":\"2026-01-01T00:00:00Z\",\"devices\":[");
    sb_puts(&b, "{\"api\":\"cpu\",\"index\":0,\"name\":\"Host CPU\",\"type\":\"cpu\",\"group\":\"host-cpu\",\"peak\":{");
    peak_entry(&b, "read", 20, "GB/s", "", "", false), peak_entry(&b, "copy", 18, "GB/s", "", "", false);
    peak_entry(&b, "fma_f32", 40, "GFLOP/s", "host FMA", "", false);
    peak_entry(&b, "fma_f16", 0, "GFLOP/s", "", "the CPU device computes in f32", false);
    peak_entry(&b, "matrix", 0, "GFLOP/s", "", "no matrix path <none>", true);
    sb_puts(&b, "},{\"api\":\"vulkan\",\"index\":0,\"name\":\"Test GPU\",\"type\":\"discrete\",\"uuid\":\"u-gpu\",\"group\":\"u-gpu\",\"peak\":{");
    peak_entry(&b, "read", 100, "GB/s", "", "", false), peak_entry(&b, "copy", 180, "GB/s", "", "", false);
    peak_entry(&b, "fma_f32", 20000, "GFLOP/s", "vec4 fma", "", false), peak_entry(&b, "fma_f16", 40000, "GFLOP/s", "f16vec4 fma", "", false);
    peak_entry(&b, "matrix", 200000, "GFLOP/s", "VK_NV_cooperative_matrix 16x16x16 f16->f32", "", true);
    sb_puts(&b, "},{\"api\":\"opencl\",\"index\":0,\"name\":\"Test GPU\",\"type\":\"discrete\",\"uuid\":\"u-gpu\",\"group\":\"u-gpu\"}],"
                "\"records\":[");
    static const long lengths[] = {256, 512, 1024, 2048};
    for (int i = 0; i < 4; ++i) {
        long len = lengths[i];
        double cpu = 4.0 * 4 * len * len * 64 / 30e9 * 1e3; /* 30 GFLOP/s */
        if (i) sb_puts(&b, ",");
        record_json(&b, "attnvk", "cpu", 0, len, cpu, 25, true), sb_puts(&b, ",");
        record_json(&b, "openblas", "cpu", 0, len, cpu * 1.1, 25, true), sb_puts(&b, ",");
        record_json(&b, "attnvk", "vulkan", 1, len, 3.0 + cpu / 1000, 25, true), sb_puts(&b, ",");
        record_json(&b, "attnvk", "opencl", 2, len, cpu * 2, 5, false);
    }
    sb_puts(&b, "]}");
    return b.data;
}

static void test_reader(const results_run *run)
{
    EXPECT(run->device_count == 3 && run->record_count == 16);
    const results_device *cpu = &run->devices[0], *vk = &run->devices[1], *cl = &run->devices[2];
    EXPECT(cpu->has_peak && vk->has_peak && !cl->has_peak);
    EXPECT(strcmp(cpu->type, "cpu") == 0 && strcmp(vk->type, "discrete") == 0);
    EXPECT(near(vk->peak[PEAK_READ].value, 100) && near(vk->peak[PEAK_MATRIX].value, 200000));
    EXPECT(strcmp(vk->peak[PEAK_MATRIX].path, "VK_NV_cooperative_matrix 16x16x16 f16->f32") == 0);
    EXPECT(isnan(cpu->peak[PEAK_MATRIX].value) && strcmp(cpu->peak[PEAK_MATRIX].state, "none") == 0 &&
           strcmp(cpu->peak[PEAK_MATRIX].reason, "no matrix path <none>") == 0);
    EXPECT(strcmp(results_peak_field_name(PEAK_FMA_F16), "fma_f16") == 0);
    const results_record *r = &run->records[2]; /* attnvk vulkan 256 */
    EXPECT(strcmp(r->api, "vulkan") == 0 && r->tile_br == 64 && r->tile_bc == 32);
    EXPECT(r->roofline.present && near(r->roofline.arithmetic_intensity, 64.0) && strcmp(r->roofline.bound, "memory") == 0);
    EXPECT(strcmp(r->roofline.compute_path, "fma") == 0 && near(r->roofline.compute_peak_tflops, 20.0));
    EXPECT(isfinite(r->gbytes_per_s) && r->gbytes_per_s > 0);
    /* 25 samples from 0.9 to 1.1 of the median: p5 = 0.91, p95 = 1.09 (the writer left p95 null) */
    double m = r->stats.median_ms;
    EXPECT(r->stats.sample_count == 25 && near(r->stats.p5_ms, 0.91 * m) && near(r->stats.p95_ms, 1.09 * m) && near(r->stats.max_ms, 1.1 * m));
    const results_record *few = &run->records[3]; /* opencl: 5 samples, no roofline */
    EXPECT(few->stats.sample_count == 5 && isnan(few->stats.p5_ms) && isnan(few->stats.p95_ms) && near(few->stats.max_ms, 1.1 * few->stats.median_ms));
    EXPECT(!few->roofline.present);
}

static void test_page(const results_run *run)
{
    strbuf page = {0};
    EXPECT(report_render(&page, run, 1, 0.05) == 0);
    const char *h = page.data ? page.data : "";
    /* rooflines: the CPU's and the Vulkan device's; OpenCL has no peaks and says so */
    EXPECT(count(h, "<figure class=\"roofline\">") == 2);
    EXPECT(strstr(h, "Roofline \xe2\x80\x94 Test GPU (vulkan)") && strstr(h, "Roofline \xe2\x80\x94 Host CPU (cpu)"));
    EXPECT(count(h, "class=\"bandwidth\"") == 2);
    EXPECT(count(h, "class=\"roof\"") == 4); /* GPU: matrix, f16 FMA, f32 FMA; CPU: f32 FMA */
    EXPECT(strstr(h, "matrix 200 TFLOP/s (VK_NV_cooperative_matrix 16x16x16 f16-&gt;f32)") != NULL);
    EXPECT(strstr(h, "f16 FMA 40 TFLOP/s (f16vec4 fma)") && strstr(h, "f32 FMA 20 TFLOP/s (vec4 fma)"));
    EXPECT(strstr(h, "read 100 GB/s") && strstr(h, "read 20 GB/s") && strstr(h, "f32 FMA 40 GFLOP/s (host FMA)"));
    EXPECT(strstr(h, "No roofline for Test GPU (opencl): the run carries no cached peaks") != NULL);
    EXPECT(strstr(h, "no matrix path &lt;none&gt;") != NULL); /* the peaks table, escaped */
    /* every record of a device with peaks is on its roofline, with variant, tile, intensity and bound */
    EXPECT(count(h, "variant tiled-x, tile 64x32\n64 FLOP/B") == 1);
    EXPECT(count(h, ": variant flash-f32, tile 64x32\n") == 4 && count(h, ": variant sgemm, tile 64x32\n") == 4);
    EXPECT(strstr(h, "memory-bound: attainable") != NULL);
    /* error bars: p5-p95 where 20 samples or more, min-max below; in bars and lines alike */
    EXPECT(count(h, "<g class=\"errorbars\"") >= 3);
    EXPECT(strstr(h, "p5\xe2\x80\x93p95 ") && strstr(h, "min\xe2\x80\x93max ") && strstr(h, "(25 samples)") && strstr(h, "(5 samples)"));
    EXPECT(strstr(h, "variant tiled-x \xc2\xb7 tile 64x32 \xc2\xb7 p5\xe2\x80\x93p95") != NULL);
    /* the CPU group stays below 1 TFLOP/s: GFLOP/s; the GPU group: TFLOP/s */
    EXPECT(strstr(h, "Throughput per case (GFLOP/s, median") && strstr(h, "Throughput per case (TFLOP/s, median"));
    /* the crossover: vulkan from 512 (3 ms + 0.1% of the CPU's time), opencl never */
    EXPECT(strstr(h, "<table class=\"crossover\">") != NULL);
    EXPECT(strstr(h, "<td><b>512</b></td>") && strstr(h, "<td><b>none up to 2k</b></td>"));
    EXPECT(strstr(h, ">vulkan &gt; CPU from N=512</text>") != NULL); /* marked on the scaling chart */
    /* the summary per API and implementation, and the records' tiles */
    EXPECT(strstr(h, "<table class=\"summary\">") && strstr(h, "<td>64x32</td>"));
    EXPECT(count(h, "<tr><td>Test GPU</td><td>vulkan</td><td>attnvk</td><td class=\"num\">4 / 4</td>") == 1);
    sb_free(&page);
}

static void test_svg(void)
{
    const char *cats[] = {"a", "b"};
    chart_series s[2] = {{.label = "one", .color = "#4e79a7"}, {.label = "two", .color = "#f28e2b"}};
    double v[4] = {1, 2, NAN, 4}, lo[4] = {0.9, NAN, 1, 3.5}, hi[4] = {1.2, NAN, 2, 4.4};
    const char *notes[4] = {"n<1>", NULL, NULL, "n4"};
    bar_chart c = {.title = "t", .y_label = "y", .unit = "u", .category_count = 2, .categories = cats, .series_count = 2,
                   .series = s, .values = v, .refs = {NAN, NAN}, .err_lo = lo, .err_hi = hi, .notes = notes};
    strbuf b = {0};
    svg_bar_chart(&b, &c);
    EXPECT(b.data && count(b.data, "<g class=\"errorbars\"") == 1);
    const char *eb = b.data ? strstr(b.data, "<g class=\"errorbars\"") : NULL;
    EXPECT(eb && count(eb, "<path ") == 2); /* value NAN or bounds NAN: no bar */
    EXPECT(b.data && strstr(b.data, "\nn&lt;1&gt;</title>") && strstr(b.data, "\nn4</title>"));
    sb_free(&b);
    /* the axis reaches the top of the highest error bar */
    double one[1] = {10}, top[1] = {31}, bottom[1] = {5};
    bar_chart d = {.title = "t", .y_label = "y", .category_count = 1, .categories = cats, .series_count = 1, .series = s,
                   .values = one, .refs = {NAN, NAN}, .err_lo = bottom, .err_hi = top};
    svg_bar_chart(&b, &d);
    EXPECT(b.data && strstr(b.data, ">35</text>") != NULL);
    sb_free(&b);
    /* a roofline with nothing to bound it draws nothing */
    roofline_chart r = {.title = "r", .slope = 0};
    svg_roofline_chart(&b, &r);
    EXPECT(b.len == 0);
    sb_free(&b);
}

int main(void)
{
    test_crossover();
    char *doc = results_doc(), err[512] = "";
    results_run run;
    int rc = doc ? results_parse(doc, "synthetic", &run, err, sizeof err) : 1;
    if (rc) printf("parse: %s\n", err);
    EXPECT(rc == 0);
    if (rc == 0) {
        test_reader(&run);
        test_page(&run);
        results_free(&run);
    }
    free(doc);
    /* a bad samples_ms is bad input, named */
    EXPECT(results_parse("{\"format_version\":1,\"records\":[{\"implementation\":\"a\",\"api\":\"b\",\"status\":\"ok\",\"case\":"
                         "{\"batch\":1,\"heads\":1,\"kv_heads\":1,\"seq_q\":1,\"seq_kv\":1,\"head_dim\":1,\"causal\":false,"
                         "\"dtype\":\"f32\",\"layout\":\"bhsd\"},\"samples_ms\":[1,\"x\"]}]}",
                         "bad", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "records[0].samples_ms must hold finite numbers >= 0") != NULL);
    test_svg();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
