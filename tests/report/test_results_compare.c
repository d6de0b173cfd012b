/* Unit tests of the pieces behind compare/history/report: the regression rule,
 * the loader's errors, the filters, HTML escaping and the SVG charts. */
#include "report_buf.h"
#include "report_html.h"
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

/* make(), with "launches": n in the record (0: absent) */
static int make_launches(results_run *run, double median, int launches)
{
    char text[2048], err[256], with[2100];
    snprintf(text, sizeof text, doc_template, "\"u1\"", "550", "ok", median, median * 1.001, 1e-4);
    const char *stats = strstr(text, "\"stats\"");
    snprintf(with, sizeof with, "%.*s\"launches\":%d,%s", (int)(stats - text), text, launches, stats);
    return results_parse(launches ? with : text, "test", run, err, sizeof err);
}

static void test_launches(void)
{
    results_run a, b;
    compare_result r;
    EXPECT(make_launches(&a, 1.0, 0) == 0 && a.records[0].launches == 1); /* older files: one launch */
    EXPECT(make_launches(&b, 0.9, 8) == 0 && b.records[0].launches == 8);
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0 && r.row_count == 1);
    char out[4096] = "";
    FILE *f = fmemopen(out, sizeof out - 1, "w");
    EXPECT(f && compare_print(f, &r, COMPARE_TABLE, true) == 0);
    if (f) fclose(f);
    EXPECT(strstr(out, "launches 1 -> 8") != NULL); /* the note says the timing method changed */
    compare_free(&r);
    results_free(&b);
    results_run bad;
    EXPECT(make_launches(&bad, 1.0, 1001) == 2);
    results_free(&a);
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

    /* a different uuid is another device, even with the same name; with no uuid in common at
     * all (another card of the model), the name matches and the result says so */
    EXPECT(make(&b, "\"u2\"", "550", "ok", 1.0, 1e-4) == 0);
    EXPECT(compare_runs(&a, &b, 0.05, &r) == 0);
    EXPECT(r.row_count == 1 && r.matched == 1 && r.matched_by_name && !compare_failed(&r));
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

/* One record whose case, stats or top level carries `field` (a "key":value pair, or
 * "" for none); `drop` names a case key to leave out. */
static int parse_with(const char *case_field, const char *record_field, const char *drop, char *err, size_t n)
{
    static const char *keys[] = {"\"batch\":2", "\"heads\":4", "\"kv_heads\":4", "\"seq_q\":64", "\"seq_kv\":64",
                                 "\"head_dim\":64", "\"causal\":false", "\"dtype\":\"f16\"", "\"layout\":\"bhsd\""};
    char kase[512] = "\"name\":\"c\"";
    for (size_t i = 0; i < sizeof keys / sizeof *keys; ++i)
        if (!drop || !strstr(keys[i], drop)) snprintf(kase + strlen(kase), sizeof kase - strlen(kase), ",%s", keys[i]);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"format_version\":1,\"records\":[{\"implementation\":\"attnvk\",\"api\":\"cpu\",\"status\":\"ok\","
             "\"case\":{%s%s%s},\"stats\":{\"median_ms\":1.5,\"std_ms\":0.1}%s%s}]}",
             kase, case_field[0] ? "," : "", case_field, record_field[0] ? "," : "", record_field);
    results_run run;
    int rc = results_parse(text, "x.json", &run, err, n);
    if (rc == 0) results_free(&run);
    return rc;
}

static bool rejected(const char *case_field, const char *record_field, const char *drop, const char *message)
{
    char err[512] = "";
    int rc = parse_with(case_field, record_field, drop, err, sizeof err);
    bool ok = rc == 2 && strstr(err, message) && !strchr(err, '\n');
    if (!ok) printf("  expected exit 2 with \"%s\", got %d: %s\n", message, rc, err);
    return ok;
}

/* Malformed values are bad input with a one-line reason naming the value, never a
 * conversion or product out of range (what the fuzzer looks for under UBSan). */
static void test_loader_values(void)
{
    char err[512];
    results_run run;
    EXPECT(parse_with("", "", NULL, err, sizeof err) == 0);
    EXPECT(rejected("\"scale\":\"0.1\"", "", NULL, "x.json: records[0].case.scale must be a finite number > 0"));
    EXPECT(rejected("", "", "\"heads\"", "x.json: records[0].case.heads is missing"));
    EXPECT(rejected("", "", "\"causal\"", "records[0].case.causal is missing"));
    EXPECT(rejected("", "", "\"dtype\"", "records[0].case.dtype is missing"));
    EXPECT(rejected("", "\"device_index\":-1", NULL, "records[0].device_index must be an integer from 0 to 2147483647"));
    EXPECT(rejected("", "\"device_index\":1e300", NULL, "records[0].device_index must be an integer"));
    EXPECT(rejected("", "\"device_name\":5", NULL, "records[0].device_name must be a string"));
    EXPECT(rejected("", "\"fused\":1", NULL, "records[0].fused must be true or false"));
    EXPECT(results_parse("{\"format_version\":1,\"records\":[{\"implementation\":\"a\",\"api\":\"cpu\",\"status\":\"o\\nk\"}]}",
                         "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "records[0].status is unknown: \"o?k\"") && !strchr(err, '\n')); /* one line */
    EXPECT(rejected("", "\"check\":[]", NULL, "records[0].check must be an object"));
    EXPECT(rejected("", "\"check\":{\"rel_l2\":-1}", NULL, "records[0].check.rel_l2 must be a finite number >= 0"));
    EXPECT(rejected("", "\"tflops\":1e999", NULL, "records[0].tflops must be a finite number >= 0")); /* inf */
    EXPECT(rejected("", "\"memory_bytes\":-4096", NULL, "records[0].memory_bytes must be a finite number >= 0"));
    EXPECT(rejected("", "\"speedup_vs_vendor\":0", NULL, "records[0].speedup_vs_vendor must be a finite number > 0"));
    /* the sizes: the report multiplies them (B*Nq), so they stay within int like attnvk_problem */
    const char *bad_sizes[] = {"\"batch\":\"4\"", "\"batch\":0", "\"seq_q\":-5", "\"head_dim\":64.5", "\"batch\":4e18",
                               "\"seq_kv\":2147483648", "\"heads\":1e999", "\"kv_heads\":true", "\"seq_q\":-1e999"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; ++i) {
        char key[32];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(bad_sizes[i] + 1, '"') - bad_sizes[i] + 1), bad_sizes[i]);
        char message[96];
        snprintf(message, sizeof message, "records[0].case.%.*s must be an integer from 1 to 2147483647", (int)strlen(key) - 2, key + 1);
        EXPECT(rejected(bad_sizes[i], "", key, message));
    }
    EXPECT(parse_with("\"batch\":2147483647", "", "\"batch\"", err, sizeof err) == 0);
    /* the stats: times are finite and >= 0 */
    EXPECT(results_parse("{\"format_version\":1,\"records\":[{\"implementation\":\"a\",\"api\":\"cpu\",\"status\":\"ok\","
                         "\"case\":{\"batch\":1,\"heads\":1,\"kv_heads\":1,\"seq_q\":1,\"seq_kv\":1,\"head_dim\":32,"
                         "\"causal\":true,\"dtype\":\"f32\",\"layout\":\"bhsd\"},\"stats\":{\"median_ms\":-2}}]}",
                         "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "records[0].stats.median_ms must be a finite number >= 0"));
    /* structure */
    EXPECT(results_parse("{\"format_version\":1,\"records\":{}}", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "x.json: records must be an array"));
    EXPECT(results_parse("{\"format_version\":1,\"records\":[],\"devices\":[3]}", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "x.json: devices[0] is not an object"));
    EXPECT(results_parse("{\"format_version\":1,\"records\":[],\"host\":\"box\"}", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "x.json: host must be an object"));
    EXPECT(results_parse("{\"format_version\":1,\"records\":[],\"devices\":[{\"memory_bytes\":-1}]}", "x.json", &run, err,
                         sizeof err) == 2);
    EXPECT(strstr(err, "x.json: devices[0].memory_bytes must be a finite number >= 0"));
    EXPECT(results_parse("{\"format_version\":1,\"records\":[]} x", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "x.json: invalid JSON"));
    EXPECT(results_parse("", "x.json", &run, err, sizeof err) == 2);
    EXPECT(strstr(err, "x.json: invalid JSON near the start"));
    /* deep nesting: cJSON's limit, an error rather than a deep recursion */
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 64);
    if (deep) {
        int k = snprintf(deep, 64, "{\"format_version\":1,\"records\":");
        memset(deep + k, '[', depth);
        memset(deep + k + depth, ']', depth);
        strcpy(deep + k + 2 * depth, "}");
        EXPECT(results_parse(deep, "x.json", &run, err, sizeof err) == 2 && strstr(err, "invalid JSON"));
        free(deep);
    }
    /* a buffer of len bytes (the fuzz entry point): no NUL needed, and nothing but white space after the value */
    const char buffer[] = "{\"format_version\":1,\"records\":[]}\n {garbage";
    size_t len = strlen("{\"format_version\":1,\"records\":[]}\n ");
    EXPECT(results_parse_buffer(buffer, len, "x.json", &run, err, sizeof err) == 0);
    results_free(&run);
    EXPECT(results_parse_buffer(buffer, len + 1, "x.json", &run, err, sizeof err) == 2);
    const char with_nul[] = "{\"format_version\":1,\"records\":[]}\0{";
    EXPECT(results_parse_buffer(with_nul, sizeof with_nul - 1, "x.json", &run, err, sizeof err) == 2);
    EXPECT(results_parse_buffer(NULL, 0, "x.json", &run, err, sizeof err) == 2);
}

/* The largest sizes the reader accepts, through every chart: B*Nq and friends stay in range. */
static void test_report_at_the_limits(void)
{
    static const char doc[] =
        "{\"format_version\":1,\"records\":["
        "{\"implementation\":\"attnvk\",\"api\":\"cuda\",\"device_name\":\"G\",\"status\":\"ok\",\"case\":{\"name\":\"a\","
        "\"batch\":2147483647,\"heads\":2147483647,\"kv_heads\":2147483647,\"seq_q\":2147483647,\"seq_kv\":2147483647,"
        "\"head_dim\":2147483647,\"causal\":false,\"dtype\":\"f16\",\"layout\":\"bhsd\"},\"stats\":{\"median_ms\":1e-300,"
        "\"std_ms\":1e300,\"p95_ms\":1.7e308},\"flops\":1.7e308,\"memory_bytes\":1.7e308,\"speedup_vs_vendor\":1e-300},"
        "{\"implementation\":\"attnvk\",\"api\":\"cuda\",\"device_name\":\"G\",\"status\":\"ok\",\"case\":{\"name\":\"b\","
        "\"batch\":1,\"heads\":2147483647,\"kv_heads\":2147483647,\"seq_q\":1,\"seq_kv\":1,"
        "\"head_dim\":2147483647,\"causal\":false,\"dtype\":\"f16\",\"layout\":\"bhsd\"},\"stats\":{\"median_ms\":1.7e308},"
        "\"tflops\":1.7e308,\"memory_bytes\":5e-324,\"speedup_vs_vendor\":1.7e308},"
        "{\"implementation\":\"cudnn\",\"api\":\"cuda\",\"device_name\":\"G\",\"status\":\"ok\",\"case\":{\"name\":\"b\","
        "\"batch\":1,\"heads\":2147483647,\"kv_heads\":2147483647,\"seq_q\":1,\"seq_kv\":1,"
        "\"head_dim\":2147483647,\"causal\":false,\"dtype\":\"f16\",\"layout\":\"bhsd\"},\"stats\":{\"median_ms\":0},"
        "\"tflops\":0,\"memory_bytes\":0}]}";
    results_run runs[2];
    char err[512];
    EXPECT(results_parse(doc, "max.json", &runs[0], err, sizeof err) == 0);
    EXPECT(results_parse(doc, "max2.json", &runs[1], err, sizeof err) == 0);
    if (runs[0].record_count != 3 || runs[1].record_count != 3) return;
    runs[1].records[0].stats.median_ms = 1.7e308; /* a ratio of 1.7e608 */
    strbuf page = {0};
    EXPECT(report_render(&page, runs, 2, 0.05) == 0 && page.data && strstr(page.data, "</html>"));
    sb_free(&page);
    compare_result r;
    EXPECT(compare_runs(&runs[0], &runs[1], 0.05, &r) == 0);
    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        EXPECT(compare_print(sink, &r, COMPARE_TABLE, true) == 0);
        EXPECT(compare_print(sink, &r, COMPARE_JSON, true) == 0);
        fclose(sink);
    }
    compare_free(&r);
    results_free(&runs[0]);
    results_free(&runs[1]);
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

static void test_lists(void)
{
    char list[40] = "";
    results_list_add(list, sizeof list, "pocl 3.1");
    results_list_add(list, sizeof list, "3.1"); /* a tail of an entry is not that entry */
    results_list_add(list, sizeof list, "pocl 3.1");
    results_list_add(list, sizeof list, ""); /* nothing to add */
    results_list_add(list, sizeof list, "a\nb");
    EXPECT(strcmp(list, "pocl 3.1, 3.1, a?b") == 0);
    results_list_add(list, sizeof list, "a long driver version string");
    EXPECT(strcmp(list, "pocl 3.1, 3.1, a?b, ...") == 0); /* full: says there is more */
    results_list_add(list, sizeof list, "x");
    EXPECT(strcmp(list, "pocl 3.1, 3.1, a?b, ...") == 0);
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
    line_series ls = {.style = {"s", "#59a14f", false, false}, .count = 3, .x = x, .y = y};
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
    test_launches();
    test_loader_errors();
    test_loader_values();
    test_report_at_the_limits();
    test_filters();
    test_lists();
    test_html();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
