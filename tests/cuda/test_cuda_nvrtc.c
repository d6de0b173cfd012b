/* Compiles, with NVRTC and no GPU, every configuration the CUDA tuning table
 * can produce for sm_80 and sm_90a (each dtype, head dim, prefill/decode,
 * split-KV or not) plus every variant by name, and prints the compiler's
 * register and spill counts. Then the backward pass's (native/attn_bwd.cu):
 * its table's picks for f16, bf16 and f32 with and without score mods; its
 * tiled kernels may spill at most bwd_spill_budget bytes each. Skips (and passes) when NVRTC is missing.
 * Then ring attention's merge (native/ring_merge.cu) for both targets.
 * ATTNVK_TEST_JOBS sets the number of compile threads (default 2);
 * ATTNVK_TEST_CONTRACT_ALL=1 builds the contract matrix in every dtype on sm_80 too;
 * ATTNVK_TEST_VARIANT=NAME builds one variant's configurations alone;
 * ATTNVK_TEST_BACKWARD_ONLY=1 builds the backward's configurations alone. */
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_loader.h"
#include "cuda/cuda_merge.h"
#include "test_util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct target {
    const char *arch;          /* NVRTC architecture */
    const char *info_arch;     /* what describe() reports */
    int cc_major;
    size_t smem_optin;
} target;

typedef struct job {
    const target *t;
    avk_cuda_config cfg;
    int backward;            /* bcfg, not cfg */
    avk_native_bwd_config bcfg;
    int ok, registers, spill_bytes;
    double seconds;
    char error[512];
} job;

enum { MAX_JOBS = 512 };
static job jobs[MAX_JOBS];
static int job_count, next_job;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void add_job(const target *t, const avk_cuda_config *cfg)
{
    if (getenv("ATTNVK_TEST_BACKWARD_ONLY")) return; /* 1: the backward's builds alone (a quick look) */
    const char *only = getenv("ATTNVK_TEST_VARIANT"); /* one variant's builds alone */
    if (only && strcmp(only, cfg->variant) != 0) return;
    char a[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN], b[AVK_CUDA_MAX_OPTIONS][AVK_CUDA_OPTION_LEN];
    const char *oa[AVK_CUDA_MAX_OPTIONS], *ob[AVK_CUDA_MAX_OPTIONS];
    int na = avk_cuda_build_options(cfg, t->arch, a, oa);
    for (int j = 0; j < job_count; ++j) { /* the same options compile the same cubin */
        int nb = avk_cuda_build_options(&jobs[j].cfg, jobs[j].t->arch, b, ob);
        int same = na == nb;
        for (int i = 0; same && i < na; ++i) same = strcmp(oa[i], ob[i]) == 0;
        if (same) return;
    }
    if (job_count == MAX_JOBS) return;
    jobs[job_count].t = t;
    jobs[job_count].cfg = *cfg;
    ++job_count;
}

static void add_backward_job(const target *t, const avk_native_bwd_config *cfg)
{
    for (int j = 0; j < job_count; ++j)
        if (jobs[j].backward && jobs[j].t == t && !memcmp(&jobs[j].bcfg, cfg, sizeof *cfg)) return;
    if (job_count == MAX_JOBS) return;
    jobs[job_count].t = t;
    jobs[job_count].backward = 1;
    jobs[job_count].bcfg = *cfg;
    ++job_count;
}

/* "Used N registers" and "N bytes spill stores" of kernel fn in the ptxas log. */
/* VAR=value, a bad value, makes the sm_90 selection of a plain D=128 forward fail naming VAR */
static void expect_env_refused(const target *t, const attnvk_device_info *info, const char *var, const char *value)
{
    const attnvk_kernel_options none = {0};
    const attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128,
                              .dtype = ATTNVK_F16};
    avk_cuda_config c;
    setenv(var, value, 1);
    EXPECT(avk_cuda_select(info, 9, t->smem_optin, &p, &none, 0, 1, &c) == ATTNVK_ERROR_INVALID_ARGUMENT &&
               strstr(attnvk_last_error(), var),
           "%s: %s=%s is refused by name", t->arch, var, value);
    unsetenv(var);
}

static void parse_function(const char *log, const char *fn, int *registers, int *spill)
{
    char what[96];
    snprintf(what, sizeof what, "Function properties for %s\n", fn);
    *registers = *spill = -1;
    const char *f = strstr(log, what);
    if (!f) return;
    const char *sp = strstr(f, "bytes spill stores");
    if (sp) {
        const char *num = sp;
        while (num > f && num[-1] == ' ') --num;
        while (num > f && num[-1] >= '0' && num[-1] <= '9') --num;
        *spill = atoi(num);
    }
    const char *used = strstr(f, "Used ");
    if (used) *registers = atoi(used + 5);
}

/* ring attention's merge (native/ring_merge.cu) for arch: a cubin holding its three kernels */
static int merge_builds(const char *arch)
{
    void *cubin = NULL;
    size_t size = 0;
    attnvk_status s = avk_cuda_merge_compile(arch, 0, &cubin, &size);
    int kernels = 0;
    for (int k = 0; s == ATTNVK_OK && k < 3; ++k) {
        const size_t m = strlen(avk_cuda_merge_kernels[k]);
        for (size_t i = 0; i + m <= size; ++i)
            if (memcmp((const char *)cubin + i, avk_cuda_merge_kernels[k], m) == 0) {
                ++kernels;
                break;
            }
    }
    free(cubin);
    const int ok = s == ATTNVK_OK && kernels == 3;
    printf("%s %-6s ring merge: %zu-byte cubin, %d of 3 kernels%s%s\n", ok ? "ok  " : "FAIL", arch, size, kernels,
           s == ATTNVK_OK ? "" : ": ", s == ATTNVK_OK ? "" : attnvk_last_error());
    return ok;
}

/* A Hopper forward build under ATTNVK_CUDA_DEFINES=defines compiles, and its cubin holds sym (when
 * named) */
static int build_with_defines(const char *defines, const avk_cuda_config *cfg, const char *label, const char *sym)
{
    setenv("ATTNVK_CUDA_DEFINES", defines, 1);
    void *cubin = NULL;
    size_t size = 0;
    attnvk_status s = avk_cuda_compile(cfg, "sm_90a", 0, NULL, &cubin, &size, NULL, NULL, 0);
    int found = !sym;
    for (size_t i = 0; s == ATTNVK_OK && sym && i + strlen(sym) + 1 <= size && !found; ++i)
        found = !memcmp((const char *)cubin + i, sym, strlen(sym) + 1);
    printf("%s sm_90a %s: %zu-byte cubin%s%s%s\n", s == ATTNVK_OK && found ? "ok  " : "FAIL", label, size,
           s == ATTNVK_OK && !found ? ", no " : "", s == ATTNVK_OK && !found ? sym : "", s == ATTNVK_OK ? "" : attnvk_last_error());
    free(cubin);
    unsetenv("ATTNVK_CUDA_DEFINES");
    return s == ATTNVK_OK && found;
}

/* The Hopper forward's timeline build (ATTNVK_CUDA_DEFINES=-DAVK_TIMELINE=1; ATTNVK_CUDA_TIMELINE
 * reads its records): the block-layout build (the producer's tile slots) and the persistent one
 * compile, and the cubin holds the records' symbol the host looks up. The softcap's scale per
 * score (-DAVK_SOFTCAP_Q_PRESCALE=0, f16 with softcap and ALiBi: the A/B against the default), a
 * mask without the overlap (-DAVK_MASK_OVERLAP=0), a mask from global memory with it (the A/B of
 * the default mask by TMA), a mask by TMA (mask_tma, at D=128 and D=64 with a softcap) and D=64
 * 192x96 without the epilogue's consumer barrier (-DAVK_WS_EPILOGUE_SYNC=0, the A/B) compile. */
static int define_builds(void)
{
    int ok = 1;
    for (int persistent = 0; persistent <= 2; persistent += 2) {
        const avk_cuda_config cfg = {.variant = "wgmma-ws", .head_dim = 128, .dtype = ATTNVK_F16, .br = 128, .bc = 128,
                                     .threads = 384, .mma = 1, .wgmma = 2, .rows_per_warp = 16,
                                     .score_mod = AVK_MOD_BLOCKS, .persistent = persistent, .kv_stages = 2};
        ok &= build_with_defines("-DAVK_TIMELINE=1", &cfg,
                                 persistent ? "timeline build (block layout, persistent 2)" : "timeline build (block layout)",
                                 "avk_timeline");
    }
    const avk_cuda_config soft = {.variant = "wgmma-ws", .head_dim = 128, .dtype = ATTNVK_F16, .br = 128, .bc = 128,
                                  .threads = 384, .mma = 1, .wgmma = 2, .rows_per_warp = 16,
                                  .score_mod = AVK_MOD_SOFTCAP | AVK_MOD_ALIBI, .kv_stages = 2};
    ok &= build_with_defines("-DAVK_SOFTCAP_Q_PRESCALE=0", &soft, "softcap scale per score (f16, softcap and ALiBi)", NULL);
    const avk_cuda_config mask = {.variant = "wgmma-ws", .head_dim = 128, .dtype = ATTNVK_F16, .br = 128, .bc = 128,
                                  .threads = 384, .mma = 1, .wgmma = 2, .rows_per_warp = 16, .score_mod = AVK_MOD_MASK,
                                  .kv_stages = 2};
    ok &= build_with_defines("-DAVK_MASK_OVERLAP=0", &mask, "a mask without the overlap (f16)", NULL);
    ok &= build_with_defines("", &mask, "a mask from global memory with the overlap (f16, ATTNVK_CUDA_MASK_TMA=0)", NULL);
    const avk_cuda_config d64c = {.variant = "wgmma-ws", .head_dim = 64, .dtype = ATTNVK_F16, .br = 192, .bc = 96,
                                  .threads = 512, .mma = 1, .wgmma = 2, .rows_per_warp = 16, .kv_stages = 2};
    ok &= build_with_defines("-DAVK_WS_EPILOGUE_SYNC=0", &d64c, "no consumer barrier before the epilogue (f16, D=64 192x96)",
                             NULL);
    for (int d = 64; d <= 128; d += 64) {
        const avk_cuda_config tma = {.variant = "wgmma-ws", .head_dim = d, .dtype = ATTNVK_F16, .br = 128, .bc = 128,
                                     .threads = 384, .mma = 1, .wgmma = 2, .rows_per_warp = 16,
                                     .score_mod = AVK_MOD_MASK | (d == 64 ? AVK_MOD_SOFTCAP : 0), .kv_stages = 2,
                                     .mask_tma = 1};
        ok &= build_with_defines("", &tma, d == 64 ? "a mask by TMA (f16, D=64, softcap)" : "a mask by TMA (f16, D=128)", NULL);
    }
    return ok;
}

static void parse_resources(const char *log, int *registers, int *spill)
{
    parse_function(log, "avk_attn_fwd", registers, spill);
}

/* The backward's spill budget (bytes, any one of its tiled kernels). The D=128 mma row's 16 x 64
 * tiles of S^T and dP^T spill 8-32 bytes on sm_80/sm_90a (255 registers) and are still the
 * fastest measured (H100, f16 N=4k: bq 64 7.57 ms, bq 32 without spills 8.74); a larger
 * spill is a table row that no longer fits. */
enum { bwd_spill_budget = 32 };

/* the backward's tiled kernels (dK/dV, dQ, and the mma body's dK/dV with dQ's atomics): the
 * largest register count and spill */
static void parse_backward(const char *log, int mma, int *registers, int *spill)
{
    static const char *const kernels[] = {"avk_bwd_dkdv", "avk_bwd_dq", "avk_bwd_dkdv_dq"};
    *registers = *spill = 0;
    for (int i = 0; i < (mma ? 3 : 2); ++i) {
        int r, s;
        parse_function(log, kernels[i], &r, &s);
        if (r < 0 || s < 0) {
            *registers = *spill = -1;
            return;
        }
        *registers = r > *registers ? r : *registers;
        *spill = s > *spill ? s : *spill;
    }
}

static void *worker(void *arg)
{
    (void)arg;
    static char log[1 << 16];
    static _Thread_local char *mine;
    if (!mine) mine = malloc(sizeof log);
    for (;;) {
        pthread_mutex_lock(&lock);
        int i = next_job++;
        pthread_mutex_unlock(&lock);
        if (i >= job_count) break;
        job *j = &jobs[i];
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        void *cubin = NULL;
        size_t size = 0;
        attnvk_status s = j->backward
            ? avk_cuda_compile_backward(&j->bcfg, j->t->arch, 0, "--ptxas-options=-v", &cubin, &size, NULL, mine, sizeof log)
            : avk_cuda_compile(&j->cfg, j->t->arch, 0, "--ptxas-options=-v", &cubin, &size, NULL, mine, sizeof log);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        j->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        j->ok = s == ATTNVK_OK && size > 0;
        if (!j->ok) snprintf(j->error, sizeof j->error, "%s", attnvk_last_error());
        if (j->backward) parse_backward(mine, j->bcfg.mma, &j->registers, &j->spill_bytes);
        else parse_resources(mine, &j->registers, &j->spill_bytes);
        free(cubin);
    }
    free(mine);
    mine = NULL;
    return NULL;
}

int main(void)
{
    const avk_nvrtc *rt = avk_nvrtc_load();
    if (!rt) {
        printf("skipped: NVRTC unavailable: %s\n", attnvk_last_error());
        return avk_test_finish(0, 0);
    }
    printf("NVRTC %d.%d (%s)\n", rt->major, rt->minor, rt->library);
    static const target targets[] = {
        {"sm_80", "sm_80", 8, 166912},
        {"sm_90a", "sm_90", 9, 232448},
    };
    static const int dims[] = {32, 64, 80, 96, 128, 256};
    static const char *const variants[] = {"mma16", "mma16-qs", "mma32", "mma32-qs", "simt"};
    for (size_t ti = 0; ti < sizeof targets / sizeof *targets; ++ti) {
        const target *t = &targets[ti];
        attnvk_device_info info;
        memset(&info, 0, sizeof info);
        snprintf(info.name, sizeof info.name, "NVIDIA test device");
        snprintf(info.vendor, sizeof info.vendor, "NVIDIA");
        snprintf(info.architecture, sizeof info.architecture, "%s", t->info_arch);
        for (int dt = ATTNVK_F32; dt <= ATTNVK_BF16; ++dt)
            for (size_t di = 0; di < sizeof dims / sizeof *dims; ++di)
                for (int mode = 0; mode < 3; ++mode) { /* prefill, decode, decode with split-KV */
                    attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = mode ? 1 : 512,
                                        .seq_kv = 512, .head_dim = dims[di], .dtype = (attnvk_dtype)dt};
                    attnvk_kernel_options o = {0};
                    avk_cuda_config cfg;
                    if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, mode > 0, 1, &cfg) != ATTNVK_OK) {
                        EXPECT(0, "%s: no configuration for D=%d %s: %s", t->arch, dims[di],
                               attnvk_dtype_name((attnvk_dtype)dt), attnvk_last_error());
                        continue;
                    }
                    cfg.split = mode == 2;
                    add_job(t, &cfg);
                }
        /* the kernel contract's features: GQA-packed decode (split and not) and
         * prefill, each kv format, over a paged cache (paging and packing are
         * run-time arguments; the kv format is compiled in) */
        static const int contract_dims[] = {32, 64, 128, 256};
        /* sm_80 builds the same bodies from the same source: f16 there (its register
         * counts and spills), every dtype on sm_90a (the GPU we measure); about 100 s
         * less on CI's 2 cores. ATTNVK_TEST_CONTRACT_ALL=1 builds every dtype on both. */
        const int contract_all = getenv("ATTNVK_TEST_CONTRACT_ALL") != NULL;
        for (int dt = ATTNVK_F32; dt <= ATTNVK_BF16; ++dt)
            for (size_t di = 0; di < sizeof contract_dims / sizeof *contract_dims; ++di)
                for (int f = ATTNVK_KV_DTYPE; f < ATTNVK_KV_FORMAT_COUNT; ++f)
                    for (int mode = 0; mode < 3; ++mode) {
                        if (!contract_all && t->cc_major != 9 && dt != ATTNVK_F16) continue;
                        attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 2,
                                            .seq_q = mode == 2 ? 16 : mode ? 4 : 512, /* packed rows 16 and 64 */
                                            .seq_kv = 512, .head_dim = contract_dims[di], .dtype = (attnvk_dtype)dt,
                                            .kv_format = (attnvk_kv_format)f, .page_size = 16, .num_pages = 32,
                                            .max_pages = 32};
                        attnvk_kernel_options o = {0};
                        avk_cuda_config cfg;
                        if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, mode > 0, mode ? 4 : 1, &cfg) !=
                            ATTNVK_OK) {
                            EXPECT(0, "%s: no contract configuration for D=%d %s kv=%s: %s", t->arch, contract_dims[di],
                                   attnvk_dtype_name((attnvk_dtype)dt), attnvk_kv_format_name((attnvk_kv_format)f),
                                   attnvk_last_error());
                            continue;
                        }
                        /* 16 packed rows (mma-decode for paged or quantized caches): split for the
                         * quantized formats, whole for the dtype's; 64 rows: split */
                        cfg.split = mode == 2 || (mode == 1 && f != ATTNVK_KV_DTYPE);
                        add_job(t, &cfg);
                    }
        /* the builds above are paged (mma-decode: AVK_KV_PAGED, q8_0 / q4_0 rows of D=128 in aligned
         * slots); f16 mma-decode over contiguous q8_0 / q4_0 at D=128 builds its linear tile path */
        for (int f = ATTNVK_KV_Q8_0; f <= ATTNVK_KV_Q4_0; ++f) {
            attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 2, .seq_q = 4, .seq_kv = 512, .head_dim = 128,
                                .dtype = ATTNVK_F16, .kv_format = (attnvk_kv_format)f};
            attnvk_kernel_options o = {0};
            avk_cuda_config cfg;
            if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, 1, 4, &cfg) != ATTNVK_OK || !cfg.key_warps) {
                EXPECT(0, "%s: contiguous kv=%s decode is not mma-decode: %s", t->arch,
                       attnvk_kv_format_name((attnvk_kv_format)f), attnvk_last_error());
                continue;
            }
            cfg.split = 1;
            add_job(t, &cfg);
        }
        /* score modifications (softcap, ALiBi, masks: AVK_SCORE_MOD) in every body, once each:
         * wgmma on sm_90a, the rest on sm_80 (the same source) */
        static const struct {
            const char *variant;
            attnvk_dtype dtype;
            attnvk_kv_format kv;
            int decode;
        } scored[] = {{"wgmma", ATTNVK_F16, ATTNVK_KV_DTYPE, 0}, {"mma16", ATTNVK_BF16, ATTNVK_KV_DTYPE, 0},
                      {"mma-decode", ATTNVK_F16, ATTNVK_KV_Q8_0, 1}, {"tiled", ATTNVK_F32, ATTNVK_KV_DTYPE, 0},
                      {"simt", ATTNVK_F16, ATTNVK_KV_FP8, 1}};
        for (size_t v = 0; v < sizeof scored / sizeof *scored; ++v) {
            if ((strcmp(scored[v].variant, "wgmma") == 0) != (t->cc_major == 9)) continue;
            attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 2, .seq_q = scored[v].decode ? 1 : 512,
                                .seq_kv = 512, .head_dim = 128, .dtype = scored[v].dtype, .kv_format = scored[v].kv,
                                .softcap = 30.0f, .alibi = 1};
            attnvk_kernel_options o = {.variant = scored[v].variant};
            avk_cuda_config cfg;
            if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, scored[v].decode, 1, &cfg) != ATTNVK_OK) {
                EXPECT(0, "%s: scored %s: %s", t->arch, scored[v].variant, attnvk_last_error());
                continue;
            }
            EXPECT(cfg.score_mod, "%s: a softcap problem builds %s with AVK_SCORE_MOD", t->arch, scored[v].variant);
            cfg.split = scored[v].decode;
            add_job(t, &cfg);
            /* sparse patterns (#20) in every body, as the selection builds them: block layouts
             * (tile skipping in the key loop) and dilation (segment bounds, residues per element;
             * Nq = Nk, never a decode shape) */
            for (int dilated = 0; dilated <= !scored[v].decode; ++dilated) {
                attnvk_problem sp = p;
                sp.softcap = 0.0f, sp.alibi = 0;
                if (dilated) sp.dilated_groups = 1, sp.dilated_segment[0] = 256, sp.dilated_rate[0] = 2;
                else sp.block_sparse = 1, sp.block_q = sp.block_k = 64, sp.layout_batch = sp.layout_heads = 1;
                avk_cuda_config sparse;
                setenv("ATTNVK_CUDA_DILATED_VIEWS", "0", 1); /* the per-element form (views follow) */
                const attnvk_status ss = avk_cuda_select(&info, t->cc_major, t->smem_optin, &sp, &o, scored[v].decode, 1, &sparse);
                unsetenv("ATTNVK_CUDA_DILATED_VIEWS");
                if (ss != ATTNVK_OK) {
                    EXPECT(0, "%s: sparse %s: %s", t->arch, scored[v].variant, attnvk_last_error());
                    continue;
                }
                EXPECT((unsigned)sparse.score_mod == (dilated ? AVK_MOD_DILATED : AVK_MOD_BLOCKS), "%s: %s builds pattern bits %d",
                       t->arch, scored[v].variant, sparse.score_mod);
                sparse.split = scored[v].decode;
                add_job(t, &sparse);
                if (!dilated) continue;
                /* the same body with the dilation as strided views (AVK_DILATED_VIEW, no per-element test),
                 * split as a view's keys may be */
                avk_cuda_config view;
                attnvk_status vs = avk_cuda_select(&info, t->cc_major, t->smem_optin, &sp, &o, 0, 1, &view);
                EXPECT(vs == ATTNVK_OK && view.dilated_view && view.score_mod == 0, "%s: %s takes dilated views (%s)", t->arch,
                       scored[v].variant, vs == ATTNVK_OK ? "no view build" : attnvk_last_error());
                if (vs != ATTNVK_OK) continue;
                view.split = 1;
                add_job(t, &view);
            }
        }
        /* views by default on sm_90: wgmma-ws (TMA descriptors of fixed strides) gives way to wgmma */
        if (t->cc_major == 9) {
            attnvk_problem dp = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128,
                                 .dtype = ATTNVK_F16, .causal = 1, .dilated_groups = 2, .dilated_segment = {1024, 2048},
                                 .dilated_rate = {1, 2}};
            const attnvk_kernel_options none = {0};
            avk_cuda_config plain, view;
            setenv("ATTNVK_CUDA_DILATED_VIEWS", "0", 1);
            attnvk_status ps = avk_cuda_select(&info, 9, t->smem_optin, &dp, &none, 0, 1, &plain);
            unsetenv("ATTNVK_CUDA_DILATED_VIEWS");
            attnvk_status vs = avk_cuda_select(&info, 9, t->smem_optin, &dp, &none, 0, 1, &view);
            EXPECT(ps == ATTNVK_OK && !plain.dilated_view && plain.score_mod == AVK_MOD_DILATED,
                   "%s: dilated with ATTNVK_CUDA_DILATED_VIEWS=0 keeps the per-element test", t->arch);
            EXPECT(vs == ATTNVK_OK && view.dilated_view && view.wgmma == 1 && strcmp(view.variant, "wgmma") == 0,
                   "%s: dilated views run on wgmma, got %s (wgmma=%d)", t->arch, vs == ATTNVK_OK ? view.variant : "-", view.wgmma);
            if (vs == ATTNVK_OK) add_job(t, &view);
            /* simt finds each key's row itself (avk_work_kv_row) */
            const attnvk_kernel_options simt = {.variant = "simt"};
            vs = avk_cuda_select(&info, 9, t->smem_optin, &dp, &simt, 0, 1, &view);
            EXPECT(vs == ATTNVK_OK && view.dilated_view, "%s: simt takes dilated views", t->arch);
            if (vs == ATTNVK_OK) add_job(t, &view);
            /* block layouts by default on sm_90: wgmma-ws, its producer warp walking the visible tiles
             * (D = 64 takes 2 warpgroups there), causal and not */
            for (int d = 64; d <= 128; d *= 2) {
                attnvk_problem bp = {.batch = 1, .heads = 8, .kv_heads = 2, .seq_q = 4096, .seq_kv = 4096,
                                     .head_dim = d, .dtype = ATTNVK_BF16, .causal = d == 64, .block_sparse = 1,
                                     .block_q = 128, .block_k = 128, .layout_batch = 1, .layout_heads = 1};
                avk_cuda_config blocks;
                attnvk_status bs = avk_cuda_select(&info, 9, t->smem_optin, &bp, &none, 0, 1, &blocks);
                EXPECT(bs == ATTNVK_OK && blocks.wgmma == 2 && blocks.br == 128 && blocks.score_mod == AVK_MOD_BLOCKS,
                       "%s: D=%d block layouts run on wgmma-ws 128 rows, got %s %d rows", t->arch, d,
                       bs == ATTNVK_OK ? blocks.variant : attnvk_last_error(), blocks.br);
                if (bs == ATTNVK_OK) add_job(t, &blocks);
            }
            /* ATTNVK_CUDA_PERSISTENT=1: wgmma-ws as a persistent kernel (a second Q buffer) where it
             * fits: D = 64 (causal, three warpgroups), 128 (dense and a block layout); not D = 256 */
            setenv("ATTNVK_CUDA_PERSISTENT", "1", 1);
            for (int d = 64; d <= 256; d *= 2) {
                attnvk_problem pp = {.batch = 2, .heads = 8, .kv_heads = 8, .seq_q = 4096, .seq_kv = 4096,
                                     .head_dim = d, .dtype = ATTNVK_F16, .causal = d == 64,
                                     .block_sparse = d == 128, .block_q = 128, .block_k = 128, .layout_batch = 1,
                                     .layout_heads = 1};
                avk_cuda_config pc;
                attnvk_status s = avk_cuda_select(&info, 9, t->smem_optin, &pp, &none, 0, 1, &pc);
                EXPECT(s == ATTNVK_OK && pc.wgmma == 2 && pc.persistent == (d < 256),
                       "%s: D=%d persistent %d on %s (want %d)", t->arch, d, s == ATTNVK_OK ? pc.persistent : -1,
                       s == ATTNVK_OK ? pc.variant : attnvk_last_error(), d < 256);
                if (s == ATTNVK_OK && pc.persistent) add_job(t, &pc);
            }
            setenv("ATTNVK_CUDA_PERSISTENT", "2", 1); /* the counter's form: the block layout */
            {
                attnvk_problem pp = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 4096, .seq_kv = 4096,
                                     .head_dim = 128, .dtype = ATTNVK_F16, .block_sparse = 1, .block_q = 128,
                                     .block_k = 128, .layout_batch = 1, .layout_heads = 1};
                avk_cuda_config pc;
                attnvk_status s = avk_cuda_select(&info, 9, t->smem_optin, &pp, &none, 0, 1, &pc);
                EXPECT(s == ATTNVK_OK && pc.persistent == 2, "%s: ATTNVK_CUDA_PERSISTENT=2 builds persistent 2 (got %d)",
                       t->arch, s == ATTNVK_OK ? pc.persistent : -1);
                if (s == ATTNVK_OK) add_job(t, &pc);
            }
            expect_env_refused(t, &info, "ATTNVK_CUDA_PERSISTENT", "3");
            /* an f16 mask's tiles by TMA by default where Nk is a multiple of 8 (16-byte row strides);
             * not for Nk = 4097, an f32 mask, or with ATTNVK_CUDA_MASK_TMA=0 (the A/B) */
            for (int c = 0; c < 4; ++c) {
                attnvk_problem mp = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 4096, .seq_kv = c == 1 ? 4097 : 4096,
                                     .head_dim = 128, .dtype = ATTNVK_F16, .causal = 1, .mask = 1, .mask_batch = 1,
                                     .mask_heads = 1, .mask_dtype = c == 2 ? ATTNVK_F32 : ATTNVK_F16};
                if (c == 3) setenv("ATTNVK_CUDA_MASK_TMA", "0", 1);
                avk_cuda_config mc;
                attnvk_status s = avk_cuda_select(&info, 9, t->smem_optin, &mp, &none, 0, 1, &mc);
                unsetenv("ATTNVK_CUDA_MASK_TMA");
                EXPECT(s == ATTNVK_OK && mc.wgmma == 2 && mc.mask_tma == (c == 0),
                       "%s: mask case %d: wgmma-ws with mask_tma %d (want %d)", t->arch, c, s == ATTNVK_OK ? mc.mask_tma : -1,
                       c == 0);
            }
            expect_env_refused(t, &info, "ATTNVK_CUDA_MASK_TMA", "2");
        }
        /* the FP8 forward (wgmma-fp8) on sm_90a at D = 64, 128, 256, f16 and bf16 O, split or not;
         * refused on sm_80, for softcap, and where a 16-bit problem names it */
        {
            const attnvk_kernel_options none = {0}, named = {.variant = "wgmma-fp8"};
            for (int d = 64; d <= 256; d *= 2)
                for (int dt = ATTNVK_F16; dt <= ATTNVK_BF16; ++dt) {
                    attnvk_problem fp = {.batch = 1, .heads = 8, .kv_heads = 2, .seq_q = 4096, .seq_kv = 4096,
                                         .head_dim = d, .dtype = (attnvk_dtype)dt, .causal = 1,
                                         .kv_format = ATTNVK_KV_FP8, .q_format = ATTNVK_KV_FP8};
                    avk_cuda_config fc;
                    attnvk_status fs = avk_cuda_select(&info, t->cc_major, t->smem_optin, &fp, &none, 0, 1, &fc);
                    if (t->cc_major != 9) {
                        EXPECT(fs == ATTNVK_ERROR_UNSUPPORTED, "%s: the FP8 forward is refused (got %s)", t->arch,
                               attnvk_status_name(fs));
                        continue;
                    }
                    /* D=128: the producer's TMA ring (wgmma-ws-fp8); the others cp.async (wgmma-fp8) */
                    EXPECT(fs == ATTNVK_OK && fc.fp8 && !fc.contract &&
                               strcmp(fc.variant, d == 128 ? "wgmma-ws-fp8" : "wgmma-fp8") == 0,
                           "%s: D=%d fp8 queries select %s", t->arch, d, fs == ATTNVK_OK ? fc.variant : attnvk_last_error());
                    if (fs != ATTNVK_OK) continue;
                    for (int split = 0; split <= 1; ++split) {
                        fc.split = split;
                        add_job(t, &fc);
                    }
                    const attnvk_kernel_options other = {.variant = d == 128 ? "wgmma-fp8" : "wgmma-ws-fp8"};
                    attnvk_status os = avk_cuda_select(&info, t->cc_major, t->smem_optin, &fp, &other, 0, 1, &fc);
                    EXPECT(d == 128 ? os == ATTNVK_OK : os == ATTNVK_ERROR_UNSUPPORTED, "%s: D=%d names %s: %s", t->arch,
                           d, other.variant, attnvk_status_name(os));
                    if (os == ATTNVK_OK) add_job(t, &fc);
                    fp.softcap = 30.f;
                    EXPECT(avk_cuda_select(&info, t->cc_major, t->smem_optin, &fp, &none, 0, 1, &fc) ==
                               ATTNVK_ERROR_UNSUPPORTED,
                           "%s: the FP8 forward refuses softcap", t->arch);
                }
            attnvk_problem plain16 = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 1024, .seq_kv = 1024,
                                      .head_dim = 128, .dtype = ATTNVK_F16};
            avk_cuda_config pc;
            EXPECT(avk_cuda_select(&info, t->cc_major, t->smem_optin, &plain16, &named, 0, 1, &pc) ==
                       ATTNVK_ERROR_UNSUPPORTED,
                   "%s: wgmma-fp8 named for f16 queries is refused", t->arch);
        }
        /* mma-decode's rings on sm_90a (attn_decode.h): f16 one key warp, bf16 16-key tiles with
         * 4 warps x 4 stages, fp8's 128-byte rows (the sweeps' configurations; the bulk copies
         * these were written for, off by default, ran on the H100 in session 16) */
        static const struct {
            attnvk_dtype dtype;
            attnvk_kv_format kv;
            int bc, key_warps, stages;
        } bulk[] = {{ATTNVK_F16, ATTNVK_KV_DTYPE, 32, 1, 2}, {ATTNVK_BF16, ATTNVK_KV_DTYPE, 16, 4, 4},
                    {ATTNVK_F16, ATTNVK_KV_FP8, 32, 4, 3}};
        for (size_t v = 0; v < sizeof bulk / sizeof *bulk && t->cc_major == 9; ++v) {
            attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 2, .seq_q = 1, .seq_kv = 512, .head_dim = 128,
                                .dtype = bulk[v].dtype, .kv_format = bulk[v].kv};
            attnvk_kernel_options o = {.variant = "mma-decode", .tile_br = 16, .tile_bc = bulk[v].bc};
            avk_cuda_config cfg;
            if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, 1, 4, &cfg) != ATTNVK_OK) {
                EXPECT(0, "%s: mma-decode bulk case %zu: %s", t->arch, v, attnvk_last_error());
                continue;
            }
            cfg.key_warps = bulk[v].key_warps;
            cfg.kv_stages = bulk[v].stages;
            EXPECT(avk_cuda_config_check(&cfg, t->cc_major, t->smem_optin) == ATTNVK_OK, "%s: bulk case %zu: %s",
                   t->arch, v, attnvk_last_error());
            cfg.split = 1;
            add_job(t, &cfg);
        }
        /* issue #13's head dims, a few builds that reach each new path (about 25 s on 2 cores):
         * Dk != Dv on wgmma, mma16 and the portable bodies; O split over warps (Dv 512: 2 and 4
         * warps a row group, split and not); zero-padded k-steps (Dk 40, 72; and a quantized
         * cache's dequantized tile); Dk 112's tiles. The table picks each configuration. */
        static const struct {
            int cc_major; /* the target it builds for */
            attnvk_dtype dtype;
            int dk, dv, heads, kv_heads, seq_q;
            attnvk_kv_format kv;
            int split;
        } dims_cases[] = {
            {9, ATTNVK_F16, 192, 128, 8, 8, 512, ATTNVK_KV_DTYPE, 0},  /* wgmma: MLA prefill */
            {9, ATTNVK_BF16, 192, 192, 8, 8, 512, ATTNVK_KV_DTYPE, 0}, /* wgmma: P V in 64-column blocks */
            {9, ATTNVK_F16, 576, 512, 128, 1, 1, ATTNVK_KV_DTYPE, 1},  /* MLA absorbed decode: 64 rows x 2 warps */
            {9, ATTNVK_BF16, 512, 512, 8, 8, 512, ATTNVK_KV_DTYPE, 0}, /* Dv 512 prefill: staged O over 2 warps */
            {9, ATTNVK_F16, 512, 512, 8, 2, 1, ATTNVK_KV_DTYPE, 1},    /* 16 rows x 4 warps */
            {9, ATTNVK_F16, 112, 112, 8, 8, 512, ATTNVK_KV_DTYPE, 0},
            {8, ATTNVK_F16, 40, 40, 8, 8, 512, ATTNVK_KV_DTYPE, 0},    /* mma32, Q in registers */
            {8, ATTNVK_BF16, 72, 72, 8, 8, 512, ATTNVK_KV_DTYPE, 0},   /* mma32-qs */
            {8, ATTNVK_F16, 72, 72, 8, 2, 1, ATTNVK_KV_FP8, 1},        /* mma16, dequantized padded tile */
            {8, ATTNVK_F16, 192, 128, 8, 8, 512, ATTNVK_KV_DTYPE, 0},  /* mma16-qs */
            {8, ATTNVK_F32, 192, 128, 8, 8, 512, ATTNVK_KV_DTYPE, 0},  /* tiled */
            {8, ATTNVK_F16, 576, 512, 8, 8, 1, ATTNVK_KV_DTYPE, 1},    /* named simt below */
        };
        for (size_t i = 0; i < sizeof dims_cases / sizeof *dims_cases; ++i) {
            if (dims_cases[i].cc_major != t->cc_major) continue;
            attnvk_problem p = {.batch = 1, .heads = dims_cases[i].heads, .kv_heads = dims_cases[i].kv_heads,
                                .seq_q = dims_cases[i].seq_q, .seq_kv = 512, .head_dim = dims_cases[i].dk,
                                .head_dim_v = dims_cases[i].dv, .dtype = dims_cases[i].dtype, .kv_format = dims_cases[i].kv,
                                .page_size = dims_cases[i].kv != ATTNVK_KV_DTYPE ? 16 : 0, .num_pages = 32, .max_pages = 32};
            const int decode = p.seq_q == 1, pack = decode ? p.heads / p.kv_heads : 1;
            attnvk_kernel_options o = {.variant = i + 1 == sizeof dims_cases / sizeof *dims_cases ? "simt" : NULL};
            avk_cuda_config cfg;
            if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, decode, pack, &cfg) != ATTNVK_OK) {
                EXPECT(0, "%s: no configuration for D=%d/%d %s: %s", t->arch, p.head_dim, p.head_dim_v,
                       attnvk_dtype_name(p.dtype), attnvk_last_error());
                continue;
            }
            cfg.split = dims_cases[i].split;
            add_job(t, &cfg);
        }
        /* wgmma-ws (issue #16: TMA, a producer warpgroup, setmaxnreg): D 64, 128 and 256,
         * f16 and bf16, causal with softcap and ALiBi, split-KV; sm_90a only */
        static const struct {
            int d;
            attnvk_dtype dtype;
            int mods, split;
        } ws_cases[] = {{64, ATTNVK_F16, 0, 0}, {128, ATTNVK_F16, 0, 0}, {128, ATTNVK_BF16, 1, 0}, {128, ATTNVK_F16, 1, 0},
                        {128, ATTNVK_F16, 0, 1}, {256, ATTNVK_BF16, 0, 0}};
        for (size_t v = 0; v < sizeof ws_cases / sizeof *ws_cases && t->cc_major == 9; ++v) {
            attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 2, .seq_q = 512, .seq_kv = 512,
                                .head_dim = ws_cases[v].d, .dtype = ws_cases[v].dtype, .causal = 1};
            if (ws_cases[v].mods) p.softcap = 30.0f, p.alibi = 1;
            attnvk_kernel_options o = {.variant = "wgmma-ws"};
            avk_cuda_config cfg;
            if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, 0, 1, &cfg) != ATTNVK_OK) {
                EXPECT(0, "%s: wgmma-ws D=%d: %s", t->arch, ws_cases[v].d, attnvk_last_error());
                continue;
            }
            EXPECT(cfg.wgmma == 2 && cfg.threads == (cfg.br / 64 + 1) * 128, "%s: wgmma-ws %dx%d: %d threads", t->arch,
                   cfg.br, cfg.bc, cfg.threads);
            cfg.split = ws_cases[v].split;
            add_job(t, &cfg);
        }
        for (size_t v = 0; v < sizeof variants / sizeof *variants; ++v) {
            attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 512, .seq_kv = 512, .head_dim = 128,
                                .dtype = strcmp(variants[v], "simt") ? ATTNVK_F16 : ATTNVK_BF16};
            attnvk_kernel_options o = {.variant = variants[v]};
            avk_cuda_config cfg;
            if (avk_cuda_select(&info, t->cc_major, t->smem_optin, &p, &o, 0, 1, &cfg) == ATTNVK_OK) add_job(t, &cfg);
            else EXPECT(0, "%s: variant %s: %s", t->arch, variants[v], attnvk_last_error());
        }
    }

    /* the backward pass: what its table picks (GQA and the masks without score mods
     * are runtime arguments: the same builds) */
    /* CI builds the cases of `on` (1: sm_80, 2: sm_90a): each tile-table row and body once, the
     * largest register counts on sm_90a, the wgmma dK/dV kernels there at D=64 and 128 (22 builds took
     * 270 s on 2 cores);
     * ATTNVK_TEST_BACKWARD_ALL=1 builds every case for both targets */
    static const struct {
        attnvk_dtype dtype;
        int dk, dv, mods, on;
    } bwd_cases[] = {
        {ATTNVK_F16, 64, 64, 0, 3},   {ATTNVK_F16, 128, 128, 0, 2}, {ATTNVK_F16, 256, 256, 0, 0},
        {ATTNVK_BF16, 192, 128, 0, 0}, {ATTNVK_F16, 64, 64, 1, 0},  {ATTNVK_BF16, 128, 128, 1, 3},
        {ATTNVK_BF16, 256, 256, 1, 2}, {ATTNVK_F16, 72, 72, 0, 2},  /* Dk 72: the simt body */
        {ATTNVK_F32, 64, 64, 0, 0},   {ATTNVK_F32, 128, 128, 1, 1}, {ATTNVK_F32, 256, 256, 0, 2},
    };
    const int all_backward = getenv("ATTNVK_TEST_BACKWARD_ALL") != NULL;
    for (size_t ti = 0; ti < sizeof targets / sizeof *targets; ++ti)
        for (size_t i = 0; i < sizeof bwd_cases / sizeof *bwd_cases; ++i) {
            if (!all_backward && !(bwd_cases[i].on & (1 << ti))) continue;
            attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 2, .seq_q = 512, .seq_kv = 512,
                                .head_dim = bwd_cases[i].dk, .head_dim_v = bwd_cases[i].dv, .dtype = bwd_cases[i].dtype};
            if (bwd_cases[i].mods) p.softcap = 30.0f, p.alibi = 1, p.mask = 1, p.mask_batch = p.mask_heads = 1;
            avk_native_bwd_config cfg;
            if (avk_cuda_bwd_select(targets[ti].cc_major, targets[ti].smem_optin, &p, &cfg) != ATTNVK_OK) {
                EXPECT(0, "%s: no backward configuration for D=%d/%d %s: %s", targets[ti].arch, p.head_dim,
                       p.head_dim_v, attnvk_dtype_name(p.dtype), attnvk_last_error());
                continue;
            }
            /* mma.sync, or on sm_90a the wgmma dK/dV kernels where Dk and Dv are 64 or 128 */
            const int tensor = p.dtype != ATTNVK_F32 && p.head_dim % 16 == 0;
            const int wgmma = tensor && targets[ti].cc_major == 9 && p.head_dim % 64 == 0 && p.head_dim_v % 64 == 0 &&
                              p.head_dim <= 128 && p.head_dim_v <= 128;
            EXPECT(cfg.mma == (wgmma ? 2 : tensor), "%s: backward D=%d %s: mma %d", targets[ti].arch, p.head_dim,
                   attnvk_dtype_name(p.dtype), cfg.mma);
            EXPECT(!bwd_cases[i].mods || cfg.score_mod == 7, "%s: backward score mods %d", targets[ti].arch,
                   cfg.score_mod);
            add_backward_job(&targets[ti], &cfg);
        }
    {
        attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 8, .seq_kv = 8, .head_dim = 512,
                            .dtype = ATTNVK_F16};
        avk_native_bwd_config cfg;
        EXPECT(avk_cuda_bwd_select(9, 232448, &p, &cfg) == ATTNVK_ERROR_UNSUPPORTED, "backward D=512 is refused");
    }

    const char *env = getenv("ATTNVK_TEST_JOBS");
    int threads = env ? atoi(env) : 2;
    if (threads < 1) threads = 1;
    if (threads > 16) threads = 16;
    pthread_t tids[16];
    for (int i = 0; i < threads; ++i) pthread_create(&tids[i], NULL, worker, NULL);
    for (int i = 0; i < threads; ++i) pthread_join(tids[i], NULL);

    int passed = 0, failed = 0;
    for (int i = 0; i < job_count; ++i) {
        const job *j = &jobs[i];
        if (j->backward) {
            const avk_native_bwd_config *b = &j->bcfg;
            printf("%s %-6s backward %-5s D=%d/%d %-4s dkdv %dx%d wn=%d dq %dx%d mods=%d regs=%d spill=%d (%.1f s)%s%s\n",
                   j->ok && j->spill_bytes <= bwd_spill_budget ? "ok  " : "FAIL", j->t->arch, b->mma == 2 ? "wgmma" : b->mma ? "mma" : "simt", b->head_dim,
                   b->head_dim_v, attnvk_dtype_name(b->dtype), b->bc, b->bq, b->wn, b->qb, b->kb, b->score_mod,
                   j->registers, j->spill_bytes, j->seconds, j->ok ? "" : ": ", j->error);
            if (j->ok && j->spill_bytes >= 0 && j->spill_bytes <= bwd_spill_budget) ++passed;
            else ++failed;
            continue;
        }
        const avk_cuda_config *c = &j->cfg;
        char dims[16];
        snprintf(dims, sizeof dims, "%d/%d", c->head_dim, c->head_dim_v > 0 ? c->head_dim_v : c->head_dim);
        printf("%s %-6s %-10s %3dx%-3d D=%-7s %-4s kv=%-4s%s threads=%-3d split=%d regs=%d spill=%d (%.1f s)%s%s\n",
               j->ok ? "ok  " : "FAIL", j->t->arch, c->variant, c->br, c->bc, dims, attnvk_dtype_name(c->dtype),
               attnvk_kv_format_name(c->kv_format), c->key_warps && c->paged ? " paged" : "", c->threads, c->split,
               j->registers, j->spill_bytes, j->seconds, j->ok ? "" : ": ", j->error);
        /* the decode body's register budget holds its rings' bookkeeping (bulk copies: mbarrier phases) */
        const int spilled = j->ok && c->key_warps && j->spill_bytes > 0;
        if (spilled) printf("FAIL: mma-decode spills %d bytes\n", j->spill_bytes);
        if (j->ok && !spilled) ++passed;
        else ++failed;
    }
    setenv("ATTNVK_CACHE_DIR", "off", 1); /* compiled, not fetched */
    for (size_t ti = 0; ti < sizeof targets / sizeof *targets; ++ti) {
        if (merge_builds(targets[ti].arch)) ++passed;
        else ++failed;
    }
    if (define_builds()) ++passed;
    else ++failed;
    return avk_test_finish(passed, failed);
}
