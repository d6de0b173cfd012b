/* `attnvk bench --cold`: each start a fresh process on its own kernel caches
 * (bench_cold.h says how and why). */
#include "bench_cold.h"

#include "bench_runner.h"
#include "bench_suites.h"
#include "bench_targets.h"
#include "bench_workload.h"
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char result_tag[] = "attnvk-cold-result ";

/* Every cache a start may fill, as a folder under <tmp>/cache and the variables that
 * point there. XDG_CACHE_HOME catches the drivers' defaults (~/.cache/mesa_shader_cache,
 * ~/.cache/pocl, ~/.cache/nvidia); the rest are their own settings. */
static const struct {
    const char *dir, *var;
} cache_vars[] = {
    {"attnvk", "ATTNVK_CACHE_DIR"},           /* attnvk's pipeline caches, program binaries, cubins */
    {"xdg", "XDG_CACHE_HOME"},
    {"mesa", "MESA_SHADER_CACHE_DIR"},        /* Mesa (lavapipe, RADV, ANV, NVK) */
    {"mesa", "MESA_GLSL_CACHE_DIR"},          /* its older name */
    {"pocl", "POCL_CACHE_DIR"},
    {"cuda", "CUDA_CACHE_PATH"},              /* the CUDA driver's JIT cache (~/.nv/ComputeCache), OpenCL on NVIDIA */
    {"nvidia", "__GL_SHADER_DISK_CACHE_PATH"}, /* NVIDIA's Vulkan pipeline cache */
    {"comgr", "AMD_COMGR_CACHE_DIR"},         /* ROCm's code-object cache */
};
enum { NCACHE_VARS = sizeof cache_vars / sizeof *cache_vars };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- folders ---- */

static double tree_total; /* nftw takes no context: one walk at a time */

static int add_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (flag == FTW_F && S_ISREG(st->st_mode)) tree_total += (double)st->st_size;
    return 0;
}

static double tree_bytes(const char *dir)
{
    tree_total = 0;
    nftw(dir, add_file, 16, FTW_PHYS);
    return tree_total;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* <TMPDIR>/attnvk-cold-XXXXXX with cache/<each folder>; 0 with the reason in err. */
static int make_root(char *root, size_t n, char *err, size_t en)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, n, "%s/attnvk-cold-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        snprintf(err, en, "cannot make a temporary folder %.200s: %s", root, strerror(errno));
        return 0;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/cache", root);
    int ok = mkdir(path, 0700) == 0;
    for (int i = 0; i < NCACHE_VARS && ok; ++i) {
        snprintf(path, sizeof path, "%s/cache/%s", root, cache_vars[i].dir);
        ok = mkdir(path, 0700) == 0 || errno == EEXIST;
    }
    if (!ok) {
        snprintf(err, en, "cannot make %.200s: %s", path, strerror(errno));
        remove_tree(root);
    }
    return ok;
}

/* ---- one start ---- */

static void last_line(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0]) snprintf(out, n, "%.250s", line);
    }
    fclose(f);
}

/* The environment with every cache variable pointing under root/cache (malloc'd array
 * of malloc'd strings, NULL-terminated); NULL when out of memory. */
static char **child_environment(const char *root)
{
    size_t n = 0;
    while (environ[n]) ++n;
    char **env = calloc(n + NCACHE_VARS + 1, sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        int ours = 0;
        for (int v = 0; v < NCACHE_VARS && !ours; ++v) {
            size_t len = strlen(cache_vars[v].var);
            ours = strncmp(environ[i], cache_vars[v].var, len) == 0 && environ[i][len] == '=';
        }
        if (!ours) env[k++] = strdup(environ[i]);
    }
    for (int v = 0; v < NCACHE_VARS; ++v) {
        size_t len = strlen(cache_vars[v].var) + strlen(root) + strlen(cache_vars[v].dir) + 16;
        if ((env[k] = malloc(len))) snprintf(env[k], len, "%s=%s/cache/%s", cache_vars[v].var, root, cache_vars[v].dir);
        ++k;
    }
    for (size_t i = 0; i < k; ++i)
        if (!env[i]) { /* a strdup failed */
            for (size_t j = 0; j < k; ++j) free(env[j]);
            free(env);
            return NULL;
        }
    return env;
}

static void free_strings(char **v)
{
    for (size_t i = 0; v && v[i]; ++i) free(v[i]);
    free(v);
}

static double json_ms(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : NAN;
}

/* Reads the child's result line; 1 with times filled, else 0 with the reason in err. */
static int parse_result(const char *output, bench_cold_times *t, char *err, size_t en)
{
    const char *line = strstr(output, result_tag);
    cJSON *o = line ? cJSON_Parse(line + strlen(result_tag)) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return 0;
    }
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(o, "reason");
    int ok = cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0;
    *t = (bench_cold_times){json_ms(o, "context_ms"), json_ms(o, "open_ms"), json_ms(o, "prepare_ms"),
                            json_ms(o, "first_dispatch_ms"), json_ms(o, "first_result_ms")};
    if (ok && !isfinite(t->first_result_ms)) ok = 0;
    if (!ok)
        snprintf(err, en, "%s: %s", cJSON_IsString(status) ? status->valuestring : "no status",
                 cJSON_IsString(reason) && reason->valuestring[0] ? reason->valuestring : "no reason given");
    cJSON_Delete(o);
    return ok ? 1 : -1;
}

/* One fresh process of this binary on root's caches; 1 with t filled, else 0 with err. */
static int start_once(const bench_cold_unit *u, const char *root, bench_cold_times *t, char *err, size_t en)
{
    char exe[4096], spec[256], log[4200];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        snprintf(err, en, "cannot find this program (/proc/self/exe): %s", strerror(errno));
        return 0;
    }
    exe[len] = '\0';
    snprintf(spec, sizeof spec, "%d:%s:%d:%s:%s", u->case_index, attnvk_api_name(u->api), u->device_index,
             u->implementation, u->case_name);
    snprintf(log, sizeof log, "%s/stderr.txt", root);
    char **argv = calloc((size_t)u->argc + 4, sizeof *argv);
    char **env = child_environment(root);
    int fds[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    int have_fa = 0, rc = 0;
    pid_t pid = -1;
    if (!argv || !env) {
        snprintf(err, en, "out of host memory");
        goto done;
    }
    argv[0] = "attnvk";
    for (int i = 0; i < u->argc; ++i) argv[1 + i] = u->argv[i];
    argv[u->argc + 1] = "--cold-child";
    argv[u->argc + 2] = spec;
    if (pipe(fds) != 0 || posix_spawn_file_actions_init(&fa) != 0) {
        snprintf(err, en, "cannot start a process: %s", strerror(errno));
        goto done;
    }
    have_fa = 1;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    int e = posix_spawn(&pid, exe, &fa, NULL, argv, env);
    close(fds[1]);
    fds[1] = -1;
    if (e != 0) {
        snprintf(err, en, "cannot start %.200s: %s", exe, strerror(e));
        goto done;
    }
    char out[16384];
    size_t used = 0;
    for (;;) {
        ssize_t got = read(fds[0], out + used, sizeof out - 1 - used);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        used += (size_t)got;
        if (used == sizeof out - 1) used = 0; /* far more than one result line: keep the end */
    }
    out[used] = '\0';
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char tail[300];
    rc = parse_result(out, t, err, en);
    if (rc == 0) {
        last_line(log, tail, sizeof tail);
        if (WIFSIGNALED(status))
            snprintf(err, en, "the start was killed by signal %d%s%.240s", WTERMSIG(status), tail[0] ? ": " : "", tail);
        else
            snprintf(err, en, "the start exited with status %d and no result%s%.240s", WEXITSTATUS(status),
                     tail[0] ? ": " : "", tail);
    }
    rc = rc > 0;
done:
    if (have_fa) posix_spawn_file_actions_destroy(&fa);
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    free(argv);
    free_strings(env);
    return rc;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const size_t time_fields[] = {
    offsetof(bench_cold_times, context_ms),        offsetof(bench_cold_times, open_ms),
    offsetof(bench_cold_times, prepare_ms),        offsetof(bench_cold_times, first_dispatch_ms),
    offsetof(bench_cold_times, first_result_ms),
};

/* Field-wise medians of n starts (NAN fields left out). */
static bench_cold_times median_times(const bench_cold_times *t, int n)
{
    bench_cold_times m;
    for (size_t f = 0; f < sizeof time_fields / sizeof *time_fields; ++f) {
        double v[BENCH_COLD_MAX_RUNS];
        int k = 0;
        for (int i = 0; i < n; ++i) {
            double x = *(const double *)((const char *)&t[i] + time_fields[f]);
            if (isfinite(x)) v[k++] = x;
        }
        qsort(v, (size_t)k, sizeof *v, by_value);
        *(double *)((char *)&m + time_fields[f]) = k == 0 ? NAN : k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    }
    return m;
}

static void measure_parts(const char *root, bench_cold_result *out)
{
    char path[4200];
    out->nparts = 0;
    out->cache_bytes = 0;
    for (int v = 0; v < NCACHE_VARS; ++v) {
        int seen = 0;
        for (int w = 0; w < v; ++w) seen |= strcmp(cache_vars[w].dir, cache_vars[v].dir) == 0;
        if (seen) continue;
        snprintf(path, sizeof path, "%s/cache/%s", root, cache_vars[v].dir);
        double bytes = tree_bytes(path);
        out->cache_bytes += bytes;
        if (bytes > 0 && out->nparts < BENCH_COLD_PARTS) {
            bench_cold_part *p = &out->parts[out->nparts++];
            snprintf(p->name, sizeof p->name, "%s", cache_vars[v].dir);
            p->bytes = bytes;
        }
    }
}

void bench_cold_measure(const bench_cold_unit *u, bench_cold_result *out)
{
    memset(out, 0, sizeof *out);
    out->present = true;
    out->cache_bytes = NAN;
    int runs = u->runs < 1 ? 1 : u->runs > BENCH_COLD_MAX_RUNS ? BENCH_COLD_MAX_RUNS : u->runs;
    bench_cold_times cold[BENCH_COLD_MAX_RUNS], warm[BENCH_COLD_MAX_RUNS];
    int ncold = 0, nwarm = 0;
    for (int i = 0; i < runs; ++i) {
        char root[4096], err[320] = "";
        if (!make_root(root, sizeof root, err, sizeof err)) {
            snprintf(out->error, sizeof out->error, "%s", err);
            break;
        }
        if (u->on_phase) u->on_phase(u->ctx, "cold start", 2 * i, 2 * runs);
        int cold_ok = start_once(u, root, &cold[ncold], err, sizeof err);
        if (cold_ok) {
            ++ncold;
            measure_parts(root, out); /* the same files each time: the last pair's */
            if (u->on_phase) u->on_phase(u->ctx, "warm start", 2 * i + 1, 2 * runs);
            if (start_once(u, root, &warm[nwarm], err, sizeof err)) ++nwarm;
            else if (!out->error[0]) snprintf(out->error, sizeof out->error, "warm start: %.300s", err);
        } else if (!out->error[0]) {
            snprintf(out->error, sizeof out->error, "cold start: %.300s", err);
        }
        remove_tree(root);
        if (!cold_ok) break; /* it will not go better next time */
    }
    out->runs = ncold > 0 ? ncold : 1;
    out->have_cold = ncold > 0;
    out->have_warm = nwarm > 0;
    out->cold = median_times(cold, ncold);
    out->warm = median_times(warm, nwarm);
}

/* ---- the child: one start ---- */

typedef struct child_clock {
    double prepare_begin, prepare_end, check_begin, dispatch_end;
} child_clock;

/* The runner reports its phases: "prepare" before attnvk_kernel_prepare, "allocation"
 * after it, "check" before the checked run (O poisoned, then dispatched), and again
 * (phase unchanged) when its first dispatch has completed. */
static void child_phase(void *ctx, const char *phase, long done, long expected)
{
    (void)done, (void)expected;
    child_clock *c = ctx;
    const double t = now_ms();
    if (strcmp(phase, "prepare") == 0) {
        if (isnan(c->prepare_begin)) c->prepare_begin = t;
    } else if (!isnan(c->prepare_begin) && isnan(c->prepare_end)) {
        c->prepare_end = t;
    }
    if (strcmp(phase, "check") == 0) {
        if (isnan(c->check_begin)) c->check_begin = t;
        else if (isnan(c->dispatch_end)) c->dispatch_end = t;
    }
}

/* ms to the microsecond (a start's wall time is not known better), or null */
static void add_ms(cJSON *o, const char *key, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, key, round(v * 1e3) / 1e3);
    else cJSON_AddNullToObject(o, key);
}

static int child_report(const char *status, const char *reason, const bench_cold_times *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", status);
    cJSON_AddStringToObject(o, "reason", reason);
    add_ms(o, "context_ms", t->context_ms);
    add_ms(o, "open_ms", t->open_ms);
    add_ms(o, "prepare_ms", t->prepare_ms);
    add_ms(o, "first_dispatch_ms", t->first_dispatch_ms);
    add_ms(o, "first_result_ms", t->first_result_ms);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (text) printf("%s%s\n", result_tag, text);
    cJSON_free(text);
    fflush(stdout);
    return strcmp(status, "ok") == 0 ? EXIT_OK : EXIT_FAILED;
}

int bench_cold_child(const bench_options *o, const bench_case *cases, int ncases)
{
    bench_cold_times t = {NAN, NAN, NAN, NAN, NAN};
    int ci = -1, dev_index = -1, used = 0;
    char api_name[32] = "", impl_name[64] = "";
    if (sscanf(o->cold_child, "%d:%31[^:]:%d:%63[^:]:%n", &ci, api_name, &dev_index, impl_name, &used) != 4 ||
        used == 0 || ci < 0 || ci >= ncases || strcmp(o->cold_child + used, cases[ci].name) != 0)
        return child_report("error", "--cold-child names no case of this command line", &t);
    const bench_case *c = &cases[ci];
    bench_workload w;
    if (bench_workload_create_pattern(&c->p, &c->block_pattern, bench_case_seed(o->seed, c->name),
                                      bench_workload_wants_full(&c->p), &w) != ATTNVK_OK)
        return child_report("skipped", attnvk_last_error(), &t);
    attnvk_context *ctx = NULL;
    attnvk_device *dev = NULL;
    double t0 = now_ms();
    attnvk_status s = attnvk_context_create(&ctx);
    t.context_ms = now_ms() - t0;
    char spec[64], why[512] = "";
    snprintf(spec, sizeof spec, "%s:%d", api_name, dev_index);
    int idx = -1;
    if (s != ATTNVK_OK) snprintf(why, sizeof why, "%s", attnvk_last_error());
    else if (attnvk_device_select(ctx, spec, &idx, 1) != 1) snprintf(why, sizeof why, "no device %s", spec);
    const double open_begin = now_ms();
    if (!why[0] && attnvk_device_open(ctx, idx, &dev) != ATTNVK_OK)
        snprintf(why, sizeof why, "%s", attnvk_last_error());
    t.open_ms = now_ms() - open_begin;
    bench_target *target = why[0] ? NULL : calloc(1, sizeof *target);
    const attnvk_impl_info *impl = NULL;
    if (target) {
        target->dev = dev;
        target->info = *attnvk_device_info_of(dev);
        bench_group_id(&target->info, target->group, sizeof target->group);
        target->nimpls = attnvk_device_implementations(dev, target->impls, BENCH_MAX_IMPLS);
        if (target->nimpls > BENCH_MAX_IMPLS) target->nimpls = BENCH_MAX_IMPLS;
        for (int i = 0; i < target->nimpls && !impl; ++i)
            if (strcmp(target->impls[i].name, impl_name) == 0) impl = &target->impls[i];
        if (!impl) snprintf(why, sizeof why, "the device offers no implementation '%s'", impl_name);
    } else if (!why[0]) {
        snprintf(why, sizeof why, "out of host memory");
    }
    const char *status = "error";
    if (impl) {
        const bench_suite *suite = o->suite ? bench_suite_find(o->suite) : NULL;
        child_clock clock = {NAN, NAN, NAN, NAN};
        bench_run_config cfg = {
            .timed = 0, .variant = o->variant, .tile_br = o->tile_br, .tile_bc = o->tile_bc, .split_kv = o->split_kv,
            .test_flags = o->test_flags, .max_memory = o->max_memory,
            .fused_only_suite = suite && suite->fused_only ? suite->name : NULL,
            .on_progress = child_phase, .progress_ctx = &clock,
        };
        bench_record r;
        bench_record_init(&r, impl->name, impl->fused, 0, c);
        bench_run(target, impl, &w, &cfg, &r);
        /* listing the implementations (which may load a vendor library) is not this one's start */
        t.first_result_ms = t.open_ms + (now_ms() - clock.prepare_begin);
        t.prepare_ms = clock.prepare_end - clock.prepare_begin;
        t.first_dispatch_ms = clock.dispatch_end - clock.check_begin;
        status = bench_status_name(r.status);
        snprintf(why, sizeof why, "%s", r.status == BENCH_OK ? "" : r.reason);
        if (r.status != BENCH_OK) t.first_result_ms = NAN;
        bench_record_free(&r);
    }
    attnvk_device_close(dev); /* Vulkan writes its pipeline cache here */
    attnvk_context_destroy(ctx);
    free(target);
    bench_workload_destroy(&w);
    return child_report(status, why, &t);
}
