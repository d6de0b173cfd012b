/* The OpenCL configurations devices we do not have would get (H100,
 * sub-groups of 8, 16 and 64, 32 KiB of local memory, no matrix units):
 * avk_cl_configure on described devices must pick a body that runs the
 * feature, fit local memory, and use shuffles only within a sub-group. Then
 * the portable shapes they chose run on this machine's device (PoCL in CI)
 * with local-memory reductions, against the reference. The backward's
 * tensor-core tiles on the H100's 48 KiB, overrides included, need no device. */
#include "test_util.h"

#include "core/error.h"
#include "core/kernel_args.h"
#include "opencl/cl_backward.h"
#include "opencl/cl_tuning.h"

#include <stdlib.h>
#include <string.h>

enum { SKIP = 77 };

static int passed, failed;

static void expect(int ok, const char *what)
{
    ok ? ++passed : ++failed;
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
}

typedef struct fake_device {
    const char *label, *vendor, *arch;
    int nvidia_cc, intel_subgroups, khr_shuffle, subgroup_size;
    uint64_t local_mem;
} fake_device;

static void describe(const fake_device *f, avk_cl_caps *caps, attnvk_device_info *info)
{
    memset(caps, 0, sizeof *caps);
    memset(info, 0, sizeof *info);
    snprintf(caps->name, sizeof caps->name, "%s", f->label);
    snprintf(caps->vendor, sizeof caps->vendor, "%s", f->vendor);
    caps->type = CL_DEVICE_TYPE_GPU;
    caps->is_nvidia = f->nvidia_cc > 0;
    caps->nv_cc_major = f->nvidia_cc / 10;
    caps->nv_cc_minor = f->nvidia_cc % 10;
    caps->intel_subgroups = f->intel_subgroups;
    caps->khr_subgroup_shuffle = f->khr_shuffle;
    caps->subgroup_size = f->subgroup_size;
    caps->local_mem = f->local_mem;
    caps->max_workgroup = 1024;
    caps->compute_units = 64;
    caps->global_mem = caps->max_alloc = 1ull << 34;
    snprintf(info->name, sizeof info->name, "%s", f->label);
    snprintf(info->vendor, sizeof info->vendor, "%s", f->vendor);
    snprintf(info->architecture, sizeof info->architecture, "%s", f->arch);
    info->compute_units = 64;
}

/* Local memory the tiled kernel declares (flash_tiled.cl) */
static uint64_t tiled_local_bytes(const avk_cl_config *c)
{
    uint64_t reduce = c->reduce == AVK_RED_LOCAL && c->ds > 1 ? (uint64_t)c->wg * c->tm * c->bc * 4 : 0;
    return (uint64_t)(c->async ? 4 : 2) * c->bc * c->head_dim * 4 + reduce;
}

static attnvk_problem decode_problem(attnvk_dtype dtype, int d, int nq, attnvk_kv_format kv)
{
    attnvk_problem p = {0};
    p.batch = 8, p.heads = 32, p.kv_heads = 8, p.seq_q = nq, p.seq_kv = 16384, p.head_dim = d;
    p.dtype = dtype, p.layout = ATTNVK_LAYOUT_BHSD, p.kv_format = kv;
    return p;
}

static avk_cl_config configure(const fake_device *f, const attnvk_problem *p, int *ok)
{
    avk_cl_caps caps;
    attnvk_device_info info;
    describe(f, &caps, &info);
    attnvk_kernel_options opts = {0};
    avk_cl_config cfg;
    *ok = avk_cl_configure(&caps, &info, p, &opts, avk_gqa_pack(p, p->seq_q, 0), &cfg) == ATTNVK_OK;
    if (!*ok) printf("     %s: %s\n", f->label, attnvk_last_error());
    avk_clear_error();
    return cfg;
}

/* The shapes chosen for described devices, collected to run here. */
typedef struct shape {
    char label[96];
    int d, wg, ds, tm, bc;
} shape;
static shape shapes[16];
static int nshapes;

static void check_tiled(const fake_device *f, int d, int want_shuffle)
{
    char what[160];
    const attnvk_problem p = decode_problem(ATTNVK_F16, d, 1, ATTNVK_KV_Q8_0);
    int ok = 0;
    avk_cl_config c = configure(f, &p, &ok);
    const int shuffle = c.reduce == AVK_RED_INTEL || c.reduce == AVK_RED_KHR || c.reduce == AVK_RED_NV;
    snprintf(what, sizeof what, "%-28s D=%-3d q8_0 decode: %s %dx%d wg %d, %d lanes/row, reduce %d, %llu B local",
             f->label, d, c.variant, c.br, c.bc, c.wg, c.ds, c.reduce, (unsigned long long)tiled_local_bytes(&c));
    expect(ok && c.family == AVK_CL_TILED && tiled_local_bytes(&c) <= f->local_mem && shuffle == want_shuffle &&
               (!shuffle || c.reduce == AVK_RED_NV || c.ds <= f->subgroup_size),
           what);
    if (ok && nshapes < 16) {
        shape *s = &shapes[nshapes++];
        snprintf(s->label, sizeof s->label, "%s D=%d", f->label, d);
        s->d = d, s->wg = c.wg, s->ds = c.ds, s->tm = c.tm, s->bc = c.bc;
    }
}

static void check_h100(void)
{
    const fake_device h100 = {"NVIDIA H100 (described)", "NVIDIA Corporation", "sm_90", 90, 0, 0, 32, 48 * 1024};
    static const struct { int nq, br, bc; } packed[] = {{1, 16, 32}, {4, 16, 32}, {16, 64, 64}};
    char what[160];
    for (size_t i = 0; i < sizeof packed / sizeof *packed; ++i)
        for (int kv = ATTNVK_KV_DTYPE; kv <= ATTNVK_KV_FP8; ++kv) {
            const attnvk_problem p = decode_problem(ATTNVK_F16, 128, packed[i].nq, (attnvk_kv_format)kv);
            int ok = 0;
            avk_cl_config c = configure(&h100, &p, &ok);
            /* up to 16 packed rows: mma-decode, within 48 KiB */
            const int dec = packed[i].br == 16;
            const uint64_t local = c.key_warps ? avk_cl_decode_local_bytes(&c) : 0;
            snprintf(what, sizeof what, "H100 f16 decode Nq=%-2d kv=%-5s: %s %dx%d copy %d warps %d stages %d, %llu B",
                     packed[i].nq, attnvk_kv_format_name((attnvk_kv_format)kv), c.variant, c.br, c.bc, c.async,
                     c.key_warps, c.stages, (unsigned long long)local);
            expect(ok && c.family == AVK_CL_MMA && !c.emulate && c.br == packed[i].br && c.async == 1 &&
                       c.kv_format == kv && (dec ? c.key_warps >= 1 && local <= h100.local_mem
                                                 : c.key_warps == 0 && c.bc == packed[i].bc),
                   what);
        }
    /* named mma-decode on an f16 cache, and the D=256 quantized cache it cannot take */
    attnvk_problem f16 = decode_problem(ATTNVK_F16, 128, 1, ATTNVK_KV_DTYPE);
    avk_cl_caps caps;
    attnvk_device_info info;
    describe(&h100, &caps, &info);
    attnvk_kernel_options named = {.variant = "mma-decode"};
    avk_cl_config n;
    int ok = avk_cl_configure(&caps, &info, &f16, &named, 4, &n) == ATTNVK_OK;
    snprintf(what, sizeof what, "H100 f16 decode, mma-decode named: 16x%d warps %d stages %d, %llu B", n.bc,
             n.key_warps, n.stages, ok ? (unsigned long long)avk_cl_decode_local_bytes(&n) : 0ull);
    expect(ok && n.key_warps >= 1 && avk_cl_decode_local_bytes(&n) <= h100.local_mem, what);
    avk_clear_error();
    /* a named mma-f16 keeps its kernel (sweeps compare it), with the packed tiles */
    named.variant = "mma-f16";
    ok = avk_cl_configure(&caps, &info, &f16, &named, 4, &n) == ATTNVK_OK;
    snprintf(what, sizeof what, "H100 f16 decode, mma-f16 named: %s %dx%d warps %d", n.variant, n.br, n.bc, n.key_warps);
    expect(ok && n.key_warps == 0 && n.br == 16 && n.bc == 32, what);
    avk_clear_error();
    /* the sweep knob, out of range: refused with the reason */
    setenv("ATTNVK_OPENCL_TUNE", "key_warps=9", 1);
    const attnvk_problem q8 = decode_problem(ATTNVK_F16, 128, 1, ATTNVK_KV_Q8_0);
    named.variant = "mma-decode";
    ok = avk_cl_configure(&caps, &info, &q8, &named, 4, &n) == ATTNVK_ERROR_INVALID_ARGUMENT &&
         strstr(attnvk_last_error(), "1-8 key warps") != NULL;
    snprintf(what, sizeof what, "H100 mma-decode key_warps=9 refused: %s", attnvk_last_error());
    expect(ok, what);
    /* ... and leaves the other bodies alone */
    named.variant = "mma-f16";
    ok = avk_cl_configure(&caps, &info, &q8, &named, 4, &n) == ATTNVK_OK && n.key_warps == 0;
    expect(ok, "H100 mma-f16 ignores key_warps=9");
    unsetenv("ATTNVK_OPENCL_TUNE");
    avk_clear_error();
    const attnvk_problem wide = decode_problem(ATTNVK_F16, 256, 1, ATTNVK_KV_Q8_0);
    avk_cl_config c = configure(&h100, &wide, &ok);
    snprintf(what, sizeof what, "H100 q8_0 decode D=256: %s %dx%d (mma-decode stops at D=128)", c.variant, c.br, c.bc);
    expect(ok && c.family == AVK_CL_MMA && c.key_warps == 0, what);
    const attnvk_problem f32 = decode_problem(ATTNVK_F32, 128, 1, ATTNVK_KV_DTYPE);
    c = configure(&h100, &f32, &ok);
    snprintf(what, sizeof what, "H100 f32 decode: %s %dx%d reduce %d", c.variant, c.br, c.bc, c.reduce);
    expect(ok && c.family == AVK_CL_TILED && c.reduce == AVK_RED_NV, what);
}

/* Issue #13's shapes on the H100 description: decode with a window, sinks
 * or softcap stays on the decode body (the features built in), MLA's
 * 192/128 prefill and the head dims mma holds (multiples of 16 up to 256)
 * on mma-f16, the rest (40, 72, 512, MLA's 576/512 decode) on tiled-f16
 * within 48 KiB. */
static void check_h100_scores(void)
{
    const fake_device h100 = {"NVIDIA H100 (described)", "NVIDIA Corporation", "sm_90", 90, 0, 0, 32, 48 * 1024};
    char what[240];
    int ok = 0;
    static const struct { const char *label; int window, sinks; float softcap; } dec[] = {
        {"window 4096", 1, 0, 0.f}, {"sinks", 0, 1, 0.f}, {"softcap 50", 0, 0, 50.f}};
    for (size_t i = 0; i < sizeof dec / sizeof *dec; ++i) {
        attnvk_problem p = decode_problem(ATTNVK_F16, 128, 1, ATTNVK_KV_DTYPE);
        p.seq_kv = 32768;
        p.window = dec[i].window, p.window_left = dec[i].window ? 4096 : -1, p.window_right = -1;
        p.sinks = dec[i].sinks, p.softcap = dec[i].softcap;
        const avk_cl_config c = configure(&h100, &p, &ok);
        snprintf(what, sizeof what, "H100 f16 decode B8 H32/8 D128 Nk32k %-10s: %s %dx%d warps %d, mods %d bounds %d",
                 dec[i].label, c.variant, c.br, c.bc, c.key_warps, c.score_mod, c.score_bounds);
        expect(ok && !strcmp(c.variant, "mma-decode") && c.score_mod == (dec[i].softcap > 0) &&
                   c.score_bounds == (dec[i].window || dec[i].sinks),
               what);
    }
    /* the plain decode keeps its program: no score options */
    {
        const attnvk_problem p = decode_problem(ATTNVK_F16, 128, 1, ATTNVK_KV_DTYPE);
        const avk_cl_config c = configure(&h100, &p, &ok);
        char opts[512];
        avk_cl_build_options(&c, opts, sizeof opts);
        const char *tail = strstr(opts, "-DAVK_KV_FORMAT");
        snprintf(what, sizeof what, "H100 plain decode options: ... %.160s", tail ? tail : opts);
        expect(ok && strstr(opts, "-DAVK_SCORE_MOD=0") && !strstr(opts, "SCORE_BOUNDS") && !strstr(opts, "AVK_DV"),
               what);
    }
    static const struct { const char *label; int h, hkv, nq, nk, dk, dv, causal; const char *want; } dims[] = {
        {"MLA prefill 192/128", 128, 128, 4096, 4096, 192, 128, 1, "mma-f16"},
        {"MLA decode 576/512", 128, 1, 1, 16384, 576, 512, 0, "tiled-f16"},
        {"MLA decode 192/128", 32, 8, 1, 16384, 192, 128, 0, "mma-decode"},
        {"prefill D=40", 32, 32, 4096, 4096, 40, 40, 1, "tiled-f16"},
        {"prefill D=72", 32, 32, 4096, 4096, 72, 72, 1, "tiled-f16"},
        {"prefill D=112", 32, 32, 4096, 4096, 112, 112, 1, "mma-f16"},
        {"prefill D=192", 32, 32, 4096, 4096, 192, 192, 1, "mma-f16"},
        {"prefill D=512", 32, 32, 4096, 4096, 512, 512, 1, "tiled-f16"},
    };
    for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i) {
        attnvk_problem p = decode_problem(ATTNVK_F16, dims[i].dk, dims[i].nq, ATTNVK_KV_DTYPE);
        p.batch = 2, p.heads = dims[i].h, p.kv_heads = dims[i].hkv, p.seq_kv = dims[i].nk, p.causal = dims[i].causal;
        p.head_dim_v = dims[i].dv == dims[i].dk ? 0 : dims[i].dv;
        const avk_cl_config c = configure(&h100, &p, &ok);
        const uint64_t local = c.key_warps ? avk_cl_decode_local_bytes(&c)
                               : c.family == AVK_CL_TILED
                                   ? (uint64_t)(c.async ? 2 : 1) * c.bc * (c.head_dim + c.head_dim_v) * 4 +
                                         (c.reduce == AVK_RED_LOCAL && c.ds > 1 ? (uint64_t)c.wg * c.tm * c.bc * 4 : 0)
                                   : 0;
        snprintf(what, sizeof what, "H100 f16 %-20s: %s %dx%d wg %d lanes/row %d, Dk %d Dv %d, %llu B local",
                 dims[i].label, c.variant, c.br, c.bc, c.wg, c.ds, c.head_dim, c.head_dim_v, (unsigned long long)local);
        expect(ok && !strcmp(c.variant, dims[i].want) && c.head_dim_v == dims[i].dv && local <= h100.local_mem, what);
    }
}

/* ATTNVK_* variable `name` set to a bad `value` makes the H100 description's configure refuse p,
 * naming the variable. */
static void expect_env_refused(const fake_device *dev, const attnvk_problem *p, const char *name, const char *value)
{
    setenv(name, value, 1);
    avk_cl_caps caps;
    attnvk_device_info info;
    describe(dev, &caps, &info);
    const attnvk_kernel_options none = {0};
    avk_cl_config c;
    const int refused = avk_cl_configure(&caps, &info, p, &none, 1, &c) == ATTNVK_ERROR_INVALID_ARGUMENT &&
                        strstr(attnvk_last_error(), name) != NULL;
    char what[256];
    snprintf(what, sizeof what, "H100 %s=%s refused: %s", name, value, attnvk_last_error());
    expect(refused, what);
    unsetenv(name);
    avk_clear_error();
}

/* Issue #13's mask on the H100 description: an f16 mask whose rows are whole 16-byte chunks
 * rides mma-f16's async copies into local memory (-DAVK_MASK_LOCAL=1) within 48 KiB, at D = 64,
 * 128 and 256; not for Nk = 8191, an f32 mask, or with ATTNVK_OPENCL_MASK_LOCAL=0, and a bad
 * value is refused naming the variable. */
static void check_h100_mask_local(void)
{
    const fake_device h100 = {"NVIDIA H100 (described)", "NVIDIA Corporation", "sm_90", 90, 0, 0, 32, 48 * 1024};
    static const struct { int d, nk, f32, env_off, want; } cases[] = {
        {128, 8192, 0, 0, 1}, {64, 4096, 0, 0, 1}, {256, 8192, 0, 0, 1},
        {128, 8191, 0, 0, 0}, {128, 8192, 1, 0, 0}, {128, 8192, 0, 1, 0}};
    char what[200], opts[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        attnvk_problem p = {.batch = 2, .heads = 16, .kv_heads = 16, .seq_q = 8192, .seq_kv = cases[i].nk,
                            .head_dim = cases[i].d, .dtype = ATTNVK_F16, .causal = 1, .mask = 1, .mask_batch = 1,
                            .mask_heads = 1, .mask_dtype = cases[i].f32 ? ATTNVK_F32 : ATTNVK_F16};
        if (cases[i].env_off) setenv("ATTNVK_OPENCL_MASK_LOCAL", "0", 1);
        int ok = 0;
        const avk_cl_config c = configure(&h100, &p, &ok);
        unsetenv("ATTNVK_OPENCL_MASK_LOCAL");
        avk_cl_build_options(&c, opts, sizeof opts);
        snprintf(what, sizeof what, "H100 f16 D=%d Nk=%d %s mask%s: %s %dx%d, mask in local memory %d", cases[i].d,
                 cases[i].nk, cases[i].f32 ? "f32" : "f16", cases[i].env_off ? " (ATTNVK_OPENCL_MASK_LOCAL=0)" : "",
                 c.variant, c.br, c.bc, c.mask_local);
        expect(ok && !strcmp(c.variant, "mma-f16") && c.async == 1 && c.mask_local == cases[i].want &&
                   (strstr(opts, "-DAVK_MASK_LOCAL=1") != NULL) == cases[i].want,
               what);
    }
    /* ATTNVK_OPENCL_ALIBI_MMA=1: ALiBi's key term in S's MMAs (-DAVK_ALIBI_MMA=1) without a softcap;
     * with one, per score; unset, per score */
    for (int softcap = 0; softcap < 3; ++softcap) {
        if (softcap < 2) setenv("ATTNVK_OPENCL_ALIBI_MMA", "1", 1);
        attnvk_problem p = {.batch = 2, .heads = 16, .kv_heads = 16, .seq_q = 8192, .seq_kv = 8192, .head_dim = 128,
                            .dtype = ATTNVK_F16, .causal = 1, .alibi = 1, .softcap = softcap == 1 ? 30.0f : 0.0f};
        int ok = 0;
        const avk_cl_config c = configure(&h100, &p, &ok);
        unsetenv("ATTNVK_OPENCL_ALIBI_MMA");
        avk_cl_build_options(&c, opts, sizeof opts);
        snprintf(what, sizeof what, "H100 f16 D=128 ALiBi%s%s: %s, ALiBi in the MMAs %d", softcap == 1 ? " softcap 30" : "",
                 softcap == 2 ? " (default)" : "", c.variant, c.alibi_mma);
        expect(ok && c.alibi_mma == (softcap == 0) && (strstr(opts, "-DAVK_ALIBI_MMA=1") != NULL) == (softcap == 0), what);
    }
    const attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 1024, .seq_kv = 1024, .head_dim = 128,
                              .dtype = ATTNVK_F16, .mask = 1, .mask_batch = 1, .mask_heads = 1, .mask_dtype = ATTNVK_F16};
    expect_env_refused(&h100, &p, "ATTNVK_OPENCL_MASK_LOCAL", "2");
}

/* Issue #13's score hook on the H100 description carries the problem's modifications alone
 * (-DAVK_HOOK_MODS=<AVK_MOD_* bits>): softcap 1, ALiBi 2, softcap and mask 5, none on a plain
 * problem; ATTNVK_OPENCL_HOOK_MODS=0 builds all three (no -D); a bad value is refused by name. */
static void check_h100_hook_mods(void)
{
    const fake_device h100 = {"NVIDIA H100 (described)", "NVIDIA Corporation", "sm_90", 90, 0, 0, 32, 48 * 1024};
    static const struct { int softcap, alibi, mask, env_off, want; } cases[] = { /* want: the bits, 0 for no -D */
        {1, 0, 0, 0, 1}, {0, 1, 0, 0, 2}, {1, 0, 1, 0, 5}, {0, 0, 0, 0, 0}, {1, 1, 1, 0, 7}, {1, 0, 0, 1, 0}};
    char what[256], opts[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        attnvk_problem p = {.batch = 2, .heads = 16, .kv_heads = 16, .seq_q = 8192, .seq_kv = 8192, .head_dim = 128,
                            .dtype = ATTNVK_F16, .causal = 1, .softcap = cases[i].softcap ? 30.0f : 0.0f,
                            .alibi = cases[i].alibi, .mask = cases[i].mask, .mask_batch = 1, .mask_heads = 1,
                            .mask_dtype = ATTNVK_F16};
        if (cases[i].env_off) setenv("ATTNVK_OPENCL_HOOK_MODS", "0", 1);
        int ok = 0;
        const avk_cl_config c = configure(&h100, &p, &ok);
        unsetenv("ATTNVK_OPENCL_HOOK_MODS");
        avk_cl_build_options(&c, opts, sizeof opts);
        const char *got = strstr(opts, "-DAVK_HOOK_MODS=");
        snprintf(what, sizeof what, "H100 f16 D=128 softcap %d ALiBi %d mask %d%s: %s, %.20s", cases[i].softcap,
                 cases[i].alibi, cases[i].mask, cases[i].env_off ? " (ATTNVK_OPENCL_HOOK_MODS=0)" : "", c.variant,
                 got ? got : "(no AVK_HOOK_MODS)");
        expect(ok && !strcmp(c.variant, "mma-f16") && (got ? atoi(got + strlen("-DAVK_HOOK_MODS=")) : 0) == cases[i].want,
               what);
    }
    const attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 1024, .seq_kv = 1024, .head_dim = 128,
                              .dtype = ATTNVK_F16, .softcap = 30.0f};
    expect_env_refused(&h100, &p, "ATTNVK_OPENCL_HOOK_MODS", "x");
}

/* The backward's tensor-core tiles on an H100 (48 KiB of local memory): the table's rows, an
 * override that fits (two stages), one that fits no row (an error naming the bytes, not the
 * portable body under the sweep's name) and a malformed one. */
static void check_backward_tiles(void)
{
    attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16};
    attnvk_problem q = p;
    q.head_dim = 64;
    const uint64_t local = 48 * 1024;
    avk_cl_bwd_config c;
    expect(avk_cl_bwd_select(local, 1024, 1, 1, &p, &c) == ATTNVK_OK && c.mma == 1 && c.wg == 64 && c.bq == 32 &&
               c.kb == 16 && c.stages == 1,
           "backward D=128: 2 warps, inner 32, dQ inner 16, one buffer");
    expect(avk_cl_bwd_select(local, 1024, 1, 1, &q, &c) == ATTNVK_OK && c.mma == 1 && c.wg == 128 && c.bq == 32 &&
               c.kb == 32,
           "backward D=64: 4 warps, 32/32");
    setenv("ATTNVK_OPENCL_BWD_TILES", "stages=2,inner=16,dq_inner=16", 1);
    expect(avk_cl_bwd_select(local, 1024, 1, 1, &p, &c) == ATTNVK_OK && c.mma == 1 && c.stages == 2 &&
               avk_cl_bwd_local_bytes(&c, 0) <= local && avk_cl_bwd_local_bytes(&c, 1) <= local,
           "backward D=128, two buffers of 16 rows: fits");
    setenv("ATTNVK_OPENCL_BWD_TILES", "warps=4,inner=16,dq_inner=32", 1);
    expect(avk_cl_bwd_select(local, 1024, 1, 1, &p, &c) == ATTNVK_ERROR_UNSUPPORTED &&
               strstr(attnvk_last_error(), "bytes of local memory") && strstr(attnvk_last_error(), "warps=4"),
           "backward D=128, warps=4 with a 32-key dQ tile: too big, an error");
    setenv("ATTNVK_OPENCL_BWD_TILES", "stages=3", 1);
    expect(avk_cl_bwd_select(local, 1024, 1, 1, &p, &c) == ATTNVK_ERROR_INVALID_ARGUMENT, "backward stages=3: refused");
    unsetenv("ATTNVK_OPENCL_BWD_TILES");
}

int main(void)
{
    static const fake_device devices[] = {
        /* label, vendor, architecture, nvidia cc, intel sub-groups, khr shuffle, sub-group size, local memory */
        {"Intel GPU, sub-group 8", "Intel(R) Corporation", "", 0, 1, 1, 8, 64 * 1024},
        {"Intel GPU, sub-group 16", "Intel(R) Corporation", "", 0, 1, 1, 16, 64 * 1024},
        {"AMD GPU, wave64", "Advanced Micro Devices, Inc.", "gfx90a", 0, 0, 1, 64, 64 * 1024},
        {"GPU, no sub-group size", "Example", "", 0, 0, 1, 0, 48 * 1024},
        {"GPU, 32 KiB local memory", "Example", "", 0, 0, 0, 0, 32 * 1024},
    };
    check_h100();
    check_h100_scores();
    check_h100_mask_local();
    check_h100_hook_mods();
    check_backward_tiles();
    /* shuffles where a row's lanes fit a reported sub-group, else local memory */
    check_tiled(&devices[0], 128, 1);
    check_tiled(&devices[0], 256, 0);
    check_tiled(&devices[1], 256, 1);
    check_tiled(&devices[2], 128, 1);
    check_tiled(&devices[3], 128, 0);
    check_tiled(&devices[4], 128, 0);
    check_tiled(&devices[4], 256, 0);

    /* the shapes those devices chose, on this machine's device with
     * local-memory reductions (the sub-group-free path every device has) */
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) return 1;
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    if (dev) {
        avk_cache_case cases[32];
        uint64_t seed = avk_test_seed();
        for (int s = 0; s < nshapes; ++s) {
            char tune[128];
            snprintf(tune, sizeof tune, "ds=%d,wg=%d,tm=%d,bc=%d,reduce=%d", shapes[s].ds, shapes[s].wg, shapes[s].tm,
                     shapes[s].bc, AVK_RED_LOCAL);
            setenv("ATTNVK_OPENCL_TUNE", tune, 1);
            printf("-- %s: %s\n", shapes[s].label, tune);
            for (int dt = 0; dt < 2; ++dt) {
                const attnvk_dtype dtype = dt ? ATTNVK_F16 : ATTNVK_F32;
                attnvk_kernel_options opts = {.variant = dt ? "tiled-f16" : "tiled-f32"};
                int n = avk_test_cache_cases(dtype, cases, 32);
                for (int i = 0; i < n; ++i)
                    if (cases[i].p.seq_q == 1 && cases[i].p.head_dim == shapes[s].d &&
                        (dt == 0 || cases[i].p.kv_format != ATTNVK_KV_DTYPE))
                        avk_test_run_cache_case(dev, &cases[i], &opts, seed + (uint64_t)(100 * s + i), 0) ? ++passed
                                                                                                       : ++failed;
            }
        }
        unsetenv("ATTNVK_OPENCL_TUNE");
        attnvk_device_close(dev);
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
