/* The results file: built with cJSON, rewritten atomically after every record. */
#include "bench_output.h"
#include "core/test_hooks.h"

#include "cli.h"
#include "cli_json.h"
#include "bench_formats.h"
#include "commands.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef ATTNVK_GIT_COMMIT
#define ATTNVK_GIT_COMMIT "unknown"
#endif

int bench_results_add(bench_results *res, bench_record *r)
{
    if (res->nrecords == res->capacity) {
        int cap = res->capacity ? res->capacity * 2 : 64;
        bench_record *grown = realloc(res->records, sizeof *grown * (size_t)cap);
        if (!grown) return -1;
        res->records = grown;
        res->capacity = cap;
    }
    res->records[res->nrecords++] = *r;
    r->samples_ms = NULL; /* now owned by the results */
    r->nsamples = 0;
    return 0;
}

void bench_results_free(bench_results *res)
{
    for (int i = 0; i < res->nrecords; ++i) bench_record_free(&res->records[i]);
    free(res->records);
    res->records = NULL;
    res->nrecords = res->capacity = 0;
}

static int same_case(const bench_case *a, const bench_case *b)
{
    return strcmp(a->name, b->name) == 0 && a->p.dtype == b->p.dtype && a->p.layout == b->p.layout;
}

static int is_sparse(const attnvk_problem *p) { return p->block_sparse || p->dilated_groups > 0; }

/* Whether dense is sparse's problem without its block layout or dilation. attnvk_problem holds
 * 4-byte scalars only (no padding), and every case is built from a zeroed one. */
static int dense_partner(const attnvk_problem *sparse, const attnvk_problem *dense)
{
    if (is_sparse(dense)) return 0;
    attnvk_problem plain = *sparse;
    plain.block_sparse = plain.block_q = plain.block_k = plain.layout_batch = plain.layout_heads = 0;
    plain.dilated_groups = 0;
    memset(plain.dilated_segment, 0, sizeof plain.dilated_segment);
    memset(plain.dilated_rate, 0, sizeof plain.dilated_rate);
    return memcmp(&plain, dense, sizeof plain) == 0;
}

static int timed_ok(const bench_record *r) { return r->status == BENCH_OK && r->have_stats && r->stats.median_ms > 0; }

/* vs_dense of every ok sparse record: its speedup and memory against its dense partner's record. */
static void link_dense(bench_results *res)
{
    for (int i = 0; i < res->nrecords; ++i) {
        bench_record *r = &res->records[i];
        r->have_dense = 0;
        if (!timed_ok(r) || !is_sparse(&r->c.p)) continue;
        const bench_record *d = NULL;
        for (int j = 0; j < res->nrecords && !d; ++j) {
            const bench_record *v = &res->records[j];
            if (timed_ok(v) && v->device_index == r->device_index && v->pass == r->pass &&
                strcmp(v->implementation, r->implementation) == 0 && dense_partner(&r->c.p, &v->c.p))
                d = v;
        }
        if (!d) continue;
        struct bench_vs_dense *x = &r->vs_dense;
        r->have_dense = 1;
        snprintf(x->dense_case, sizeof x->dense_case, "%s", d->c.name);
        x->dense_ms = d->stats.median_ms;
        x->speedup = d->stats.median_ms / r->stats.median_ms;
        x->dense_memory_bytes = d->memory_bytes;
        x->memory_ratio = d->memory_bytes > 0 && r->memory_bytes > 0 ? (double)r->memory_bytes / (double)d->memory_bytes
                                                                     : NAN;
    }
}

void bench_results_link(bench_results *res)
{
    link_dense(res);
    for (int i = 0; i < res->nrecords; ++i) {
        bench_record *r = &res->records[i];
        r->speedup_vs_vendor = NAN;
        r->vendor_reference[0] = '\0';
        /* the float64 reference is the oracle, not a contender */
        if (r->status != BENCH_OK || !r->have_stats || strcmp(r->implementation, "reference") == 0) continue;
        const bench_record *best = NULL;
        for (int j = 0; j < res->nrecords; ++j) {
            const bench_record *v = &res->records[j];
            if (v->status != BENCH_OK || !v->have_stats || !bench_is_vendor(v->implementation)) continue;
            if (!same_case(&v->c, &r->c)) continue;
            if (strcmp(res->devices[v->device_index].group, res->devices[r->device_index].group) != 0) continue;
            /* a fused vendor kernel beats any unfused one as the reference */
            if (!best || (v->fused && !best->fused) ||
                (v->fused == best->fused && v->stats.median_ms < best->stats.median_ms))
                best = v;
        }
        if (!best || !(r->stats.median_ms > 0)) continue;
        r->speedup_vs_vendor = best->stats.median_ms / r->stats.median_ms;
        snprintf(r->vendor_reference, sizeof r->vendor_reference, "%s", best->implementation);
    }
}

/* ---- JSON ---- */

static void add_number_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += colon[1] == ' ' ? 2 : 1;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(out, n, "%s", colon);
            break;
        }
    }
    fclose(f);
}

static cJSON *host_json(void)
{
    cJSON *h = cJSON_CreateObject();
    struct utsname u;
    char os[400], cpu[256], host[256] = "unknown";
    if (uname(&u) == 0) snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    else snprintf(os, sizeof os, "unknown");
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    cpu_model(cpu, sizeof cpu);
    cJSON_AddStringToObject(h, "os", os);
    cJSON_AddStringToObject(h, "hostname", host);
    cJSON_AddStringToObject(h, "cpu", cpu);
    return h;
}

static const char *layout_name(attnvk_layout l) { return l == ATTNVK_LAYOUT_BSHD ? "bshd" : "bhsd"; }

static cJSON *settings_json(const bench_results *res)
{
    const bench_options *o = res->opts;
    cJSON *s = cJSON_CreateObject();
    if (res->suite) cJSON_AddStringToObject(s, "suite", res->suite);
    else cJSON_AddNullToObject(s, "suite");
    cJSON_AddStringToObject(s, "dtype", bench_options_dtype_label(o, res->dtype));
    if (o->q_format != ATTNVK_KV_DTYPE) cJSON_AddStringToObject(s, "o_dtype", attnvk_dtype_name(res->dtype));
    cJSON_AddStringToObject(s, "layout", layout_name(o->layout));
    cJSON_AddBoolToObject(s, "causal", o->causal);
    cJSON_AddNumberToObject(s, "warmup", (double)o->warmup);
    cJSON_AddNumberToObject(s, "warmup_s", o->warmup_s);
    if (o->launches) cJSON_AddNumberToObject(s, "launches", (double)o->launches);
    else cJSON_AddStringToObject(s, "launches", "auto");
    if (o->iters) cJSON_AddNumberToObject(s, "iters", (double)o->iters);
    else cJSON_AddNullToObject(s, "iters");
    if (o->iters) cJSON_AddNullToObject(s, "min_time_s");
    else cJSON_AddNumberToObject(s, "min_time_s", o->min_time_s);
    cJSON_AddNumberToObject(s, "cooldown_s", o->cooldown_s);
    cJSON_AddNumberToObject(s, "seed", (double)o->seed);
    if (o->max_memory) cJSON_AddNumberToObject(s, "max_memory_bytes", (double)o->max_memory);
    else cJSON_AddNullToObject(s, "max_memory_bytes");
    cJSON_AddStringToObject(s, "pass", bench_pass_name(o->pass));
    cJSON_AddBoolToObject(s, "test_wrong_kernel", (o->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) != 0);
    return s;
}

/* The same keys as `attnvk devices --json`, plus the group. */
static cJSON *device_json(const bench_target *t)
{
    cJSON *o = cli_device_json(&t->info);
    cJSON_AddStringToObject(o, "group", t->group);
    if (t->has_peak) cJSON_AddItemToObject(o, "peak", cli_peak_json(&t->peak));
    return o;
}

/* The record on its device's roofline; null before a result (no intensity). */
static void add_roofline(cJSON *o, const bench_record *r)
{
    if (!isfinite(r->arithmetic_intensity)) {
        cJSON_AddNullToObject(o, "roofline");
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "roofline");
    cJSON_AddNumberToObject(j, "arithmetic_intensity", r->arithmetic_intensity);
    if (r->bound) cJSON_AddStringToObject(j, "bound", r->bound);
    else cJSON_AddNullToObject(j, "bound");
    add_number_or_null(j, "compute_peak_tflops", r->compute_peak_tflops);
    if (r->compute_path[0]) cJSON_AddStringToObject(j, "compute_path", r->compute_path);
    add_number_or_null(j, "attainable_tflops", r->attainable_tflops);
    add_number_or_null(j, "fraction", r->roofline_fraction);
}

static cJSON *case_json(const bench_case *c)
{
    const attnvk_problem *p = &c->p;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddNumberToObject(o, "batch", p->batch);
    cJSON_AddNumberToObject(o, "heads", p->heads);
    cJSON_AddNumberToObject(o, "kv_heads", p->kv_heads);
    cJSON_AddNumberToObject(o, "seq_q", p->seq_q);
    cJSON_AddNumberToObject(o, "seq_kv", p->seq_kv);
    cJSON_AddNumberToObject(o, "head_dim", p->head_dim);
    /* V and O's head dim, where it differs from Q and K's */
    if (attnvk_problem_head_dim_v(p) != p->head_dim) cJSON_AddNumberToObject(o, "head_dim_v", attnvk_problem_head_dim_v(p));
    cJSON_AddBoolToObject(o, "causal", p->causal);
    cJSON_AddStringToObject(o, "dtype", bench_dtype_label(p)); /* "fp8": the FP8 forward, O in o_dtype */
    if (p->q_format != ATTNVK_KV_DTYPE) cJSON_AddStringToObject(o, "o_dtype", attnvk_dtype_name(p->dtype));
    cJSON_AddStringToObject(o, "layout", layout_name(p->layout));
    cJSON_AddNumberToObject(o, "scale", attnvk_problem_scale(p));
    cJSON_AddStringToObject(o, "kv_format", attnvk_kv_format_name(p->kv_format));
    if (p->q_format != ATTNVK_KV_DTYPE) cJSON_AddStringToObject(o, "q_format", attnvk_kv_format_name(p->q_format));
    cJSON_AddNumberToObject(o, "page_size", p->page_size);
    /* score modifications: present only where a case has them */
    if (p->softcap > 0) cJSON_AddNumberToObject(o, "softcap", p->softcap);
    if (p->window) {
        cJSON_AddNumberToObject(o, "window_left", p->window_left);
        cJSON_AddNumberToObject(o, "window_right", p->window_right);
    }
    if (p->align == ATTNVK_ALIGN_TOP_LEFT) cJSON_AddStringToObject(o, "causal_align", "top-left");
    if (p->alibi) cJSON_AddBoolToObject(o, "alibi", 1);
    if (p->sinks) cJSON_AddBoolToObject(o, "sinks", 1);
    if (p->mask) cJSON_AddStringToObject(o, "mask", "random");
    if (p->block_sparse) { /* the generated layout's pattern and block size */
        char pattern[64];
        sparse_pattern_text(&c->block_pattern, pattern, sizeof pattern);
        cJSON_AddStringToObject(o, "block_layout", pattern);
        cJSON_AddNumberToObject(o, "block_q", p->block_q);
        cJSON_AddNumberToObject(o, "block_k", p->block_k);
    }
    if (p->dilated_groups) {
        cJSON_AddItemToObject(o, "dilated_segments", cJSON_CreateIntArray(p->dilated_segment, p->dilated_groups));
        cJSON_AddItemToObject(o, "dilated_rates", cJSON_CreateIntArray(p->dilated_rate, p->dilated_groups));
    }
    if (c->note) cJSON_AddStringToObject(o, "note", c->note);
    return o;
}

static cJSON *stats_json(const bench_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "min_ms", s->min_ms);
    cJSON_AddNumberToObject(o, "median_ms", s->median_ms);
    cJSON_AddNumberToObject(o, "mean_ms", s->mean_ms);
    cJSON_AddNumberToObject(o, "std_ms", s->std_ms);
    add_number_or_null(o, "p95_ms", s->p95_ms); /* null below 20 samples */
    add_number_or_null(o, "p99_ms", s->p99_ms);
    cJSON_AddNumberToObject(o, "cv", s->cv);
    return o;
}

static cJSON *check_json(const attnvk_check *c)
{
    cJSON *o = cJSON_CreateObject();
    add_number_or_null(o, "rel_l2", c->rel_l2);
    add_number_or_null(o, "max_abs", c->max_abs);
    cJSON_AddNumberToObject(o, "tolerance", c->tolerance);
    cJSON_AddNumberToObject(o, "rows_checked", (double)c->rows_checked);
    cJSON_AddNumberToObject(o, "nonfinite", (double)c->nonfinite);
    cJSON_AddBoolToObject(o, "passed", c->passed);
    return o;
}

/* --cold (bench_cold.h): ms to the microsecond, as the starts report them */
static void add_ms_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, round(v * 1e3) / 1e3);
    else cJSON_AddNullToObject(o, key);
}

static cJSON *cold_times_json(bool have, const bench_cold_times *t)
{
    if (!have) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    add_ms_or_null(o, "context_ms", t->context_ms);
    add_ms_or_null(o, "open_ms", t->open_ms);
    add_ms_or_null(o, "prepare_ms", t->prepare_ms);
    add_ms_or_null(o, "first_dispatch_ms", t->first_dispatch_ms);
    add_ms_or_null(o, "first_result_ms", t->first_result_ms);
    return o;
}

/* --ring: the ranks and what the record measured beside its samples (bench_ring.h). */
static cJSON *ring_json(const struct bench_ring_result *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ranks", g->ranks);
    cJSON *devs = cJSON_AddArrayToObject(o, "rank_devices");
    for (int i = 0; i < g->ranks; ++i) cJSON_AddItemToArray(devs, cJSON_CreateNumber(g->rank_device[i]));
    cJSON_AddStringToObject(o, "transport", g->transport);
    const struct { const char *key; double v; } numbers[] = {
        {"transfer_ms", g->transfer_ms},         {"compute_only_ms", g->compute_only_ms},
        {"hidden_fraction", g->hidden_fraction}, {"tflops_per_rank", g->tflops_per_rank},
        {"single_device_ms", g->single_ms},      {"share_device_ms", g->shard_ms},
        {"strong_scaling", g->strong_scaling},   {"weak_scaling", g->weak_scaling}};
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; ++i) add_number_or_null(o, numbers[i].key, numbers[i].v);
    const struct { const char *key, *text; } notes[] = {{"transport_note", g->transport_note},
                                                        {"baseline_note", g->baseline_note}};
    for (size_t i = 0; i < sizeof notes / sizeof *notes; ++i) {
        if (notes[i].text[0]) cJSON_AddStringToObject(o, notes[i].key, notes[i].text);
        else cJSON_AddNullToObject(o, notes[i].key);
    }
    return o;
}

static cJSON *cold_start_json(const bench_cold_result *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "cold", cold_times_json(c->have_cold, &c->cold));
    cJSON_AddItemToObject(o, "warm", cold_times_json(c->have_warm, &c->warm));
    add_ms_or_null(o, "cache_bytes", c->cache_bytes);
    if (c->nparts > 0) {
        cJSON *parts = cJSON_AddObjectToObject(o, "cache_parts");
        for (int i = 0; i < c->nparts; ++i) cJSON_AddNumberToObject(parts, c->parts[i].name, c->parts[i].bytes);
    }
    cJSON_AddNumberToObject(o, "runs", c->runs > 0 ? c->runs : 1);
    if (c->error[0]) cJSON_AddStringToObject(o, "error", c->error);
    return o;
}

static void add_int_or_null(cJSON *o, const char *key, int have, double v)
{
    if (have) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

/* A sparse record against its dense partner; null when either has no time. */
static cJSON *vs_dense_json(const bench_record *r)
{
    if (!r->have_dense) return cJSON_CreateNull();
    const struct bench_vs_dense *x = &r->vs_dense;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "dense_case", x->dense_case);
    cJSON_AddNumberToObject(o, "dense_ms", x->dense_ms);
    cJSON_AddNumberToObject(o, "speedup", x->speedup);
    add_int_or_null(o, "dense_memory_bytes", x->dense_memory_bytes > 0, (double)x->dense_memory_bytes);
    add_number_or_null(o, "memory_ratio", x->memory_ratio);
    return o;
}

static cJSON *record_json(const bench_results *res, const bench_record *r)
{
    const bench_target *t = &res->devices[r->device_index];
    const attnvk_kernel_info *k = &r->kernel;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "implementation", r->implementation);
    cJSON_AddBoolToObject(o, "fused", r->fused);
    cJSON_AddStringToObject(o, "api", attnvk_api_name(t->info.api));
    cJSON_AddNumberToObject(o, "device_index", r->device_index);
    cJSON_AddStringToObject(o, "device_name", t->info.name);
    if (t->info.has_uuid) cJSON_AddStringToObject(o, "device_uuid", t->uuid);
    else cJSON_AddNullToObject(o, "device_uuid");
    cJSON_AddStringToObject(o, "group", t->group);
    cJSON_AddStringToObject(o, "driver_version", t->info.driver_version);
    cJSON_AddStringToObject(o, "api_version", t->info.api_version);
    cJSON_AddItemToObject(o, "case", case_json(&r->c));
    cJSON_AddStringToObject(o, "status", bench_status_name(r->status));
    cJSON_AddStringToObject(o, "reason", r->status == BENCH_OK ? "" : r->reason);
    if (r->have_kernel) cJSON_AddStringToObject(o, "variant", k->variant);
    else cJSON_AddNullToObject(o, "variant");
    add_int_or_null(o, "tile_br", r->have_kernel, k->tile_br);
    add_int_or_null(o, "tile_bc", r->have_kernel, k->tile_bc);
    add_int_or_null(o, "workgroup_size", r->have_kernel, k->workgroup_size);
    add_int_or_null(o, "split_kv", r->have_kernel, k->split_kv);
    if (r->have_kernel) cJSON_AddStringToObject(o, "params", k->params);
    else cJSON_AddNullToObject(o, "params");
    char source[16];
    if (bench_tuning_source(r, source, sizeof source)) cJSON_AddStringToObject(o, "tuning_source", source);
    else cJSON_AddNullToObject(o, "tuning_source");
    if (r->nsamples > 0) {
        cJSON *s = cJSON_AddArrayToObject(o, "samples_ms");
        for (int i = 0; i < r->nsamples; ++i) cJSON_AddItemToArray(s, cJSON_CreateNumber(r->samples_ms[i]));
    } else {
        cJSON_AddNullToObject(o, "samples_ms");
    }
    if (r->have_stats) cJSON_AddItemToObject(o, "stats", stats_json(&r->stats));
    else cJSON_AddNullToObject(o, "stats");
    cJSON_AddNumberToObject(o, "flops", r->flops);
    add_number_or_null(o, "tflops", r->tflops);
    add_number_or_null(o, "tokens_per_s", r->tokens_per_s);
    add_number_or_null(o, "gbytes_per_s", r->gbytes_per_s);
    add_number_or_null(o, "peak_fraction", r->peak_fraction);
    add_roofline(o, r);
    if (bench_memory_bound(&r->c.p)) {
        add_number_or_null(o, "read_bandwidth_gbps", r->read_bandwidth_gbps);
        add_number_or_null(o, "bandwidth_fraction", r->bandwidth_fraction);
    }
    add_int_or_null(o, "memory_bytes", r->memory_bytes > 0, (double)r->memory_bytes);
    if (r->have_check) {
        cJSON *c = check_json(&r->check);
        /* the FP8 forward: rel_l2 is against the unquantized inputs, passed judges this one */
        if (!isnan(r->rel_l2_dequantized)) cJSON_AddNumberToObject(c, "rel_l2_dequantized", r->rel_l2_dequantized);
        cJSON_AddItemToObject(o, "check", c);
    } else {
        cJSON_AddNullToObject(o, "check");
    }
    cJSON_AddStringToObject(o, "pass", bench_pass_name(r->pass));
    if (r->have_grad) { /* the backward's check of each gradient; `check` is the worst one's */
        cJSON *g = cJSON_AddObjectToObject(o, "grad_check");
        cJSON_AddStringToObject(g, "worst", bench_grad_name(r->worst_grad));
        for (int i = 0; i < BENCH_GRAD_COUNT; ++i)
            if (r->have_grad & (1u << i)) cJSON_AddItemToObject(g, bench_grad_name(i), check_json(&r->grad_check[i]));
    }
    if (r->have_bwd_kernel) { /* what the backward ran (variant, tile_br, ...: the forward's kernel) */
        const attnvk_kernel_info *b = &r->bwd_kernel;
        cJSON *k = cJSON_AddObjectToObject(o, "backward_kernel");
        cJSON_AddStringToObject(k, "implementation", b->implementation);
        cJSON_AddStringToObject(k, "variant", b->variant);
        add_int_or_null(k, "tile_br", b->tile_br > 0, b->tile_br);
        add_int_or_null(k, "tile_bc", b->tile_bc > 0, b->tile_bc);
        add_int_or_null(k, "workgroup_size", b->workgroup_size > 0, b->workgroup_size);
        cJSON_AddStringToObject(k, "params", b->params);
    }
    if (r->have_pass_stats) { /* fwd+bwd: stats and samples_ms are their sums */
        cJSON_AddItemToObject(o, "forward_stats", stats_json(&r->fwd_stats));
        cJSON_AddItemToObject(o, "backward_stats", stats_json(&r->bwd_stats));
    }
    add_int_or_null(o, "chunks", r->chunks > 0, r->chunks);
    add_int_or_null(o, "input_sets", r->input_sets > 0, r->input_sets);
    add_int_or_null(o, "warmup_runs", r->have_stats, r->warmup_runs);
    add_int_or_null(o, "launches", r->have_stats, r->launches);
    add_number_or_null(o, "speedup_vs_vendor", r->speedup_vs_vendor);
    if (!isnan(r->quant_error)) cJSON_AddNumberToObject(o, "quant_error", r->quant_error);
    if (r->vendor_reference[0]) cJSON_AddStringToObject(o, "vendor_reference", r->vendor_reference);
    else cJSON_AddNullToObject(o, "vendor_reference");
    if (r->cold_start.present) cJSON_AddItemToObject(o, "cold_start", cold_start_json(&r->cold_start));
    if (r->have_ring) cJSON_AddItemToObject(o, "ring", ring_json(&r->ring));
    if (is_sparse(&r->c.p)) cJSON_AddItemToObject(o, "vs_dense", vs_dense_json(r));
    return o;
}

static cJSON *document_json(const bench_results *res)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "format_version", BENCH_FORMAT_VERSION);
    cJSON_AddStringToObject(root, "attnvk_version", ATTNVK_VERSION_STRING);
    cJSON_AddStringToObject(root, "git_commit", ATTNVK_GIT_COMMIT);
    cJSON_AddStringToObject(root, "created", res->created);
    cJSON_AddItemToObject(root, "host", host_json());
    cJSON_AddStringToObject(root, "command", res->opts->command);
    cJSON_AddItemToObject(root, "settings", settings_json(res));
    cJSON *apis = cJSON_AddArrayToObject(root, "apis");
    for (int a = 0; a < ATTNVK_API_COUNT; ++a) {
        const char *reason = "";
        attnvk_status s = res->ctx ? attnvk_api_status(res->ctx, (attnvk_api)a, &reason) : ATTNVK_ERROR_UNAVAILABLE;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "api", attnvk_api_name((attnvk_api)a));
        cJSON_AddStringToObject(o, "status", s == ATTNVK_OK ? "available" : "unavailable");
        if (s != ATTNVK_OK) cJSON_AddStringToObject(o, "reason", reason ? reason : "");
        cJSON_AddItemToArray(apis, o);
    }
    cJSON *devs = cJSON_AddArrayToObject(root, "devices");
    for (int i = 0; i < res->ndevices; ++i) cJSON_AddItemToArray(devs, device_json(&res->devices[i]));
    cJSON *recs = cJSON_AddArrayToObject(root, "records");
    for (int i = 0; i < res->nrecords; ++i) cJSON_AddItemToArray(recs, record_json(res, &res->records[i]));
    return root;
}

/* cJSON's text plus a newline, from the allocator the caller frees with. */
static void put_json(strbuf *b, cJSON *item, int formatted)
{
    char *text = item ? (formatted ? cJSON_Print(item) : cJSON_PrintUnformatted(item)) : NULL;
    if (text) sb_printf(b, "%s\n", text);
    else b->failed = true;
    cJSON_free(text);
    cJSON_Delete(item);
}

/* The strbuf's text as a malloc'd string ("" when empty), or NULL when an allocation failed. */
static char *take(strbuf *b)
{
    if (!b->failed && !b->data) sb_puts(b, "");
    if (b->failed) {
        sb_free(b);
        return NULL;
    }
    return b->data;
}

char *bench_render_head(const bench_results *res, bench_format f)
{
    strbuf b = {0};
    if (f == BENCH_FMT_TABLE) bench_table_head(&b, res);
    else if (f == BENCH_FMT_MD) bench_md_head(&b, res);
    else if (f == BENCH_FMT_CSV) bench_csv_head(&b);
    return take(&b);
}

char *bench_render_row(const bench_results *res, int i, bench_format f)
{
    strbuf b = {0};
    if (f == BENCH_FMT_TABLE) bench_table_row(&b, res, i);
    else if (f == BENCH_FMT_MD) bench_md_row(&b, res, i);
    else if (f == BENCH_FMT_CSV) bench_csv_row(&b, res, i);
    else if (f == BENCH_FMT_JSONL) put_json(&b, record_json(res, &res->records[i]), 0);
    return take(&b);
}

char *bench_render_tail(const bench_results *res, bench_format f)
{
    strbuf b = {0};
    if (f == BENCH_FMT_TABLE) bench_table_tail(&b, res);
    else if (f == BENCH_FMT_MD) bench_md_tail(&b, res);
    else if (f == BENCH_FMT_JSON) put_json(&b, document_json(res), 1);
    return take(&b);
}

char *bench_render(const bench_results *res, bench_format f, int final)
{
    strbuf b = {0};
    int with_tail = final || f == BENCH_FMT_JSON; /* the one document is whole at every step */
    for (int i = -1; i < res->nrecords + with_tail && !b.failed; ++i) {
        char *part = i < 0 ? bench_render_head(res, f)
                   : i < res->nrecords ? bench_render_row(res, i, f)
                                       : bench_render_tail(res, f);
        if (part) sb_puts(&b, part);
        else b.failed = true;
        free(part);
    }
    return take(&b);
}
