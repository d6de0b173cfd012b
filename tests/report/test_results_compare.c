/* Unit tests of the pieces behind compare/history/report: the regression rule,
 * the loader's errors, the filters, HTML escaping and the SVG charts. */
#include "report_buf.h"
#include "report_svg.h"
#include "results_compare.h"

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

static results_stats stats(double median, double std)
{
    return (results_stats){.present = true, .median_ms = median, .std_ms = std, .p95_ms = median + 1.645 * std,
                           .mean_ms = median, .min_ms = median - 2 * std, .p99_ms = median + 2.33 * std, .cv = std / median};
}

static void test_rule(void)
{
    results_stats base = stats(1.0, 0.01);
    results_stats slow30 = stats(1.30, 0.013), slow1 = stats(1.01, 0.03), slow8_noisy = stats(1.08, 0.065),
                  slow6_tight = stats(1.06, 0.004), slow4 = stats(1.04, 0.001);
    EXPECT(compare_is_slower(&base, &slow30, 0.05));
    EXPECT(!compare_is_slower(&base, &slow1, 0.05));
    EXPECT(!compare_is_slower(&base, &slow8_noisy, 0.05)); /* past the threshold, inside the spread */
    results_stats tight = stats(1.0, 0.002);
    EXPECT(compare_is_slower(&tight, &slow6_tight, 0.05));
    EXPECT(!compare_is_slower(&tight, &slow4, 0.05)); /* clearly apart, but under the threshold */
    EXPECT(compare_is_slower(&tight, &slow4, 0.03));
    results_stats noisy_base = stats(1.0, 0.2);
    EXPECT(!compare_is_slower(&noisy_base, &slow30, 0.05)); /* base too noisy to tell */
}

static const char *doc_template =
    "{\"format_version\":1,\"created\":\"2026-01-01T00:00:00Z\",\"records\":["
    "{\"implementation\":\"attnvk\",\"api\":\"vulkan\",\"device_name\":\"GPU A\",\"device_uuid\":%s,\"driver_version\":\"%s\","
    "\"case\":{\"name\":\"c1\",\"batch\":1,\"heads\":2,\"kv_heads\":2,\"seq_q\":64,\"seq_kv\":64,\"head_dim\":64,"
    "\"causal\":false,\"dtype\":\"f16\",\"layout\":\"bhsd\",\"scale\":0.125},\"status\":\"%s\","
    "\"stats\":{\"median_ms\":%g,\"std_ms\":0.001,\"p95_ms\":%g},\"check\":{\"rel_l2\":%g,\"tolerance\":0.005,\"passed\":true}}]}";

static int make(results_run *run, const char *uuid, const char *driver, const char *status, double median, double rel_l2)
{
    char text[2048], err[256];
    snprintf(text, sizeof text, doc_template, uuid, driver, status, median, median * 1.001, rel_l2);
    return results_parse(text, "test", run, err, sizeof err);
}

static void test_compare(void)
{
    results_run a, b;
    compare_result r;
    EXPECT(make(&a, "\"u1\"", "550", "ok", 1.0, 1e-4) == 0);
    EXPECT(make(&b, "\"u1\"", "560", "ok", 1.3, 1e-4) == 0);
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0);
    EXPECT(r.row_count == 1 && r.rows[0].verdict == VERDICT_REGRESSION && compare_failed(&r));
    EXPECT(r.driver_count == 1 && strcmp(r.drivers[0].base_driver, "550") == 0 && strcmp(r.drivers[0].next_driver, "560") == 0);
    EXPECT(r.summary_count == 1 && fabs(r.summaries[0].geomean_speedup - 1 / 1.3) < 1e-9);
    compare_free(&r);
    results_free(&b);

    /* a different uuid is another device, even with the same name */
    EXPECT(make(&b, "\"u2\"", "550", "ok", 1.0, 1e-4) == 0);
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0);
    EXPECT(r.row_count == 2 && r.counts[VERDICT_MISSING] == 1 && r.counts[VERDICT_NEW] == 1 && !compare_failed(&r));
    compare_free(&r);
    results_free(&b);

    /* no uuid on one side: the name decides */
    EXPECT(make(&b, "null", "560", "ok", 0.5, 1e-4) == 0);
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0);
    EXPECT(r.row_count == 1 && r.rows[0].verdict == VERDICT_IMPROVEMENT && !compare_failed(&r));
    compare_free(&r);
    results_free(&b);

    EXPECT(make(&b, "\"u1\"", "560", "fail", 1.0, 0.3) == 0);
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0);
    EXPECT(r.rows[0].verdict == VERDICT_NEW_FAILURE && compare_failed(&r));
    compare_free(&r);
    results_free(&b);

    EXPECT(make(&b, "\"u1\"", "560", "ok", 1.0, 2e-3) == 0); /* 20x the error, still under tolerance */
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0);
    EXPECT(r.rows[0].verdict == VERDICT_ACCURACY && compare_failed(&r));
    compare_free(&r);
    results_free(&b);

    EXPECT(make(&b, "\"u1\"", "560", "skipped", 1.0, 1e-4) == 0);
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0);
    EXPECT(r.rows[0].verdict == VERDICT_NO_LONGER_RUNS && !compare_failed(&r));
    compare_free(&r);
    results_free(&b);
    results_free(&a);
}

static void test_loader_errors(void)
{
    results_run run;
    char err[256];
    EXPECT(results_parse("{\"format_version\":1,\"records\":[", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "x.json") && strstr(err, "invalid JSON"));
    EXPECT(results_parse("{\"format_version\":2,\"records\":[]}", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "unknown format_version 2"));
    EXPECT(results_parse("{\"records\":[]}", "x.json", &run, err, sizeof err) == 2);
    EXPECT(results_parse("{\"format_version\":1,\"records\":[{\"api\":\"cuda\"}]}", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "records[0]"));
    EXPECT(results_load_file("/nonexistent/r.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "/nonexistent/r.json"));
    EXPECT(results_parse("{\"format_version\":1,\"records\":[]}", "x.json", &run, err, sizeof err) == 0);
    EXPECT(run.record_count == 0);
    results_free(&run);
}

static void test_filters(void)
{
    EXPECT(results_device_matches("h100", "cuda", "NVIDIA H100 80GB HBM3", ""));
    EXPECT(results_device_matches("vulkan:H100", "vulkan", "NVIDIA H100", "8f0c"));
    EXPECT(!results_device_matches("cuda:H100", "vulkan", "NVIDIA H100", ""));
    EXPECT(results_device_matches("cuda", "cuda", "anything", ""));
    EXPECT(results_device_matches("8f0c2a", "vulkan", "GPU", "8f0c2a6e-1b4d"));
    EXPECT(!results_device_matches("a100", "cuda", "NVIDIA H100", "8f0c"));
    EXPECT(results_case_matches("fa-d128-*", "fa-d128-n4096"));
    EXPECT(!results_case_matches("fa-d64-*", "fa-d128-n4096"));
    EXPECT(results_case_matches("n4096", "fa-d128-n4096-b4"));
}

static void test_html(void)
{
    strbuf b = {0};
    sb_html(&b, "<script>alert('x')</script> & \"q\"\x01");
    EXPECT(b.data && strcmp(b.data, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;") == 0);
    sb_free(&b);

    const char *cats[] = {"<a&b>", "c"};
    chart_series series[] = {{"ours", "#4e79a7", false, false}, {"vendor <v>", "#f28e2b", true, true}};
    double values[] = {1.0, NAN, 3.0, 2.5};
    bar_chart c = {.title = "T <1>", .y_label = "TFLOP/s", .unit = "TFLOP/s", .category_count = 2, .categories = cats,
                   .series_count = 2, .series = series, .values = values, .refs = {1.5, NAN}, .ref_labels = {"ref", NULL}};
    svg_bar_chart(&b, &c);
    EXPECT(b.data && strstr(b.data, "<svg") && strstr(b.data, "</svg>") && !strstr(b.data, "<a&b>") && strstr(b.data, "&lt;a&amp;b&gt;"));
    EXPECT(b.data && strstr(b.data, "<pattern")); /* the vendor series is hatched */
    int bars = 0;
    for (const char *p = b.data; (p = strstr(p, "<title>")); ++p) ++bars;
    EXPECT(bars == 1 + 3); /* the chart's title and three bars: the NAN is left out */
    sb_free(&b);

    double x[] = {512, 1024, 2048}, y[] = {1, NAN, 4};
    line_series ls = {{"s", "#59a14f", false, false}, 3, x, y};
    line_chart lc = {.title = "L", .x_label = "N", .y_label = "bytes", .x_format = AXIS_LENGTH, .y_format = AXIS_BYTES,
                     .log_x = true, .log_y = true, .series_count = 1, .series = &ls};
    svg_line_chart(&b, &lc);
    EXPECT(b.data && strstr(b.data, "<polyline") && strstr(b.data, ">1k<") && strstr(b.data, ">2k<"));
    sb_free(&b);
}

int main(void)
{
    test_rule();
    test_compare();
    test_loader_errors();
    test_filters();
    test_html();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
