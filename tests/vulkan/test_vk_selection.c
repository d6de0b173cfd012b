/* The Vulkan variant selection on described devices, no device needed: an
 * NVIDIA H100 (Vulkan 1.4, NV and KHR cooperative matrices 16x16x16, the
 * register-softmax layout probe passed, 48 KiB shared memory, subgroups of
 * 32) and lavapipe (32 KiB, subgroups of 8, no matrix units), for issue #13's
 * head dims: MLA's Dk/Dv 192/128 and 576/512 and the equal dims 40, 72, 112,
 * 192 and 512. Each problem must get a variant whose shared memory fits, and
 * the H100's picks are the ones docs/kernel-contract.md names. The family rows
 * (RDNA2/3, Intel Xe-LP/Arc/Xe2, Mali, Adreno, Apple) and the ATTNVK_VK_PROFILE
 * profiles, clamped from a large described device, pick variants that fit their
 * shared memory and subgroup sizes (vk_selection_families.c). The backward
 * pass's tiles fit the H100, lavapipe and 16 KiB (vk_backward.c's table). */
#include "test_util.h"
#include "vulkan/vk_backward.h"
#include "vulkan/vk_khr_coopmat.h"
#include "vulkan/vk_variants.h"
#include "vk_selection_families.h"

#include <stdlib.h>
#include <string.h>

static vk_caps h100(void)
{
    vk_caps c;
    memset(&c, 0, sizeof c);
    snprintf(c.info.name, sizeof c.info.name, "NVIDIA H100 80GB HBM3");
    snprintf(c.info.vendor, sizeof c.info.vendor, "NVIDIA");
    c.props.vendorID = 0x10DE;
    c.props.limits.maxComputeSharedMemorySize = 48 * 1024;
    c.props.limits.maxComputeWorkGroupInvocations = 1024;
    c.props.limits.maxComputeWorkGroupSize[0] = 1024;
    c.subgroup_size = c.min_subgroup = c.max_subgroup = 32;
    c.subgroup_shuffle = c.subgroup_vote = c.subgroup_arith = 1;
    c.size_control = c.require_size_compute = c.full_subgroups = 1;
    c.shader_f16 = c.storage_16bit = c.vk_memory_model = 1;
    c.nv_coopmat = c.khr_coopmat_ext = c.khr_coopmat = 1;
    c.nv_m = c.nv_n = c.nv_k = c.khr_m = c.khr_n = c.khr_k = 16;
    c.rs_layout = c.rs_layout_khr = 1; /* both layout probes passed (the H100, driver 580) */
    c.compute_units = 132;
    c.atomic_f32_add = 1;
    return c;
}

static vk_caps lavapipe(void)
{
    vk_caps c;
    memset(&c, 0, sizeof c);
    snprintf(c.info.name, sizeof c.info.name, "llvmpipe (LLVM 15.0.6, 256 bits)");
    snprintf(c.info.vendor, sizeof c.info.vendor, "Mesa");
    snprintf(c.info.architecture, sizeof c.info.architecture, "llvmpipe");
    c.props.vendorID = 0x10005;
    c.props.limits.maxComputeSharedMemorySize = 32 * 1024;
    c.props.limits.maxComputeWorkGroupInvocations = 1024;
    c.props.limits.maxComputeWorkGroupSize[0] = 1024;
    c.subgroup_size = c.min_subgroup = c.max_subgroup = 8;
    c.subgroup_shuffle = c.subgroup_vote = c.subgroup_arith = 1;
    c.shader_f16 = c.storage_16bit = 1;
    c.compute_units = 2;
    c.atomic_f32_add = 1; /* Mesa 22.3's lavapipe has shaderBufferFloat32AtomicAdd */
    return c;
}

typedef struct pick_case {
    const char *label;
    int b, h, hkv, nq, nk, dk, dv, causal;
    const char *h100; /* the H100's variant for f16 */
} pick_case;

static const pick_case cases[] = {
    {"MLA prefill 192/128", 1, 128, 128, 4096, 4096, 192, 128, 1, "coopmat-nv"},
    {"MLA absorbed decode 576/512", 2, 128, 1, 1, 16384, 576, 512, 0, "f16"},
    {"MLA decode 192/128 GQA", 2, 8, 2, 1, 400, 192, 128, 0, "decode"},
    {"D=40 prefill", 4, 32, 8, 4096, 4096, 40, 40, 1, "coopmat-khr-rs"}, /* the rs body through KHR: faster there */
    {"D=72 prefill", 4, 32, 8, 4096, 4096, 72, 72, 0, "coopmat-khr-rs"},
    {"D=112 prefill", 4, 32, 8, 4096, 4096, 112, 112, 1, "coopmat-khr-rs"},
    {"D=128 prefill", 4, 16, 16, 4096, 4096, 128, 128, 1, "coopmat-khr-rs"},
    {"D=64 prefill", 4, 32, 32, 4096, 4096, 64, 64, 0, "coopmat-khr-rs"},
    {"D=192 prefill", 4, 16, 16, 4096, 4096, 192, 192, 1, "coopmat-nv"},
    {"D=512 prefill", 1, 8, 8, 2048, 2048, 512, 512, 1, "f16"},
    {"D=40 decode GQA 8", 8, 64, 8, 1, 8192, 40, 40, 0, "decode-nv-rs"}, /* 8 rows: NV */
    {"D=128 decode Nq=16 GQA 4", 8, 32, 8, 16, 32768, 128, 128, 0, "decode-khr-rs"}, /* 64 rows: KHR */
    {"D=72 decode GQA 4", 8, 32, 8, 1, 8192, 72, 72, 0, "f16"}, /* the decode body wants 2 rows at 36 values per lane */
    {"D=512 decode", 4, 8, 2, 1, 8192, 512, 512, 0, "f16"},
};

static int check_device(const char *device, const vk_caps *c, int is_h100)
{
    int passed = 0;
    const attnvk_dtype dtypes[] = {ATTNVK_F16, ATTNVK_F32};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i)
        for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; ++d) {
            const pick_case *pc = &cases[i];
            attnvk_problem p = {.batch = pc->b, .heads = pc->h, .kv_heads = pc->hkv, .seq_q = pc->nq, .seq_kv = pc->nk,
                                .head_dim = pc->dk, .head_dim_v = pc->dv, .causal = pc->causal, .dtype = dtypes[d]};
            attnvk_kernel_options o = {0};
            vk_config cfg;
            attnvk_status s = vk_choose_config(c, &p, &o, &cfg);
            EXPECT(s == ATTNVK_OK, "%s %s %s: %s", device, pc->label, attnvk_dtype_name(p.dtype), attnvk_last_error());
            if (s != ATTNVK_OK) continue;
            printf("%-8s %-28s %s: %s %ux%u workgroup %u, %u bytes of shared memory\n", device, pc->label,
                   attnvk_dtype_name(p.dtype), cfg.variant, cfg.br, cfg.bc, cfg.wg, cfg.shared_bytes);
            EXPECT(cfg.shared_bytes <= c->props.limits.maxComputeSharedMemorySize, "%s %s: %u bytes of shared memory",
                   device, pc->label, cfg.shared_bytes);
            int ok = cfg.shared_bytes <= c->props.limits.maxComputeSharedMemorySize;
            if (is_h100 && p.dtype == ATTNVK_F16) {
                EXPECT(strcmp(cfg.variant, pc->h100) == 0, "H100 %s: %s, expected %s", pc->label, cfg.variant, pc->h100);
                ok = ok && strcmp(cfg.variant, pc->h100) == 0;
            }
            passed += ok;
        }
    return passed;
}

/* coopmat-khr on the H100: the shape from its VkCooperativeMatrixPropertiesKHR list,
 * the variant by name (coopmat-nv's sizes), picked where a driver lists KHR matrices
 * only; refused on lavapipe with the probe's reason. */
static int check_khr(void)
{
    int passed = 0;
#define KHR_SHAPE(m, n, k, a, c, r) {.sType = AVK_STYPE_COOPMAT_PROPERTIES_KHR, .MSize = m, .NSize = n, .KSize = k, \
                                     .AType = (VkComponentTypeNV)(a), .BType = (VkComponentTypeNV)(a), .CType = (VkComponentTypeNV)(c), .ResultType = (VkComponentTypeNV)(r), .scope = (VkScopeNV)AVK_KHR_SCOPE_SUBGROUP}
    const int h = AVK_KHR_COMPONENT_F16, f = AVK_KHR_COMPONENT_F32, s8 = 3, s32 = 5; /* VkComponentTypeKHR */
    const avk_coopmat_properties_khr listed[] = {KHR_SHAPE(16, 8, 16, h, h, h),    KHR_SHAPE(16, 8, 8, h, f, f),
                                                 KHR_SHAPE(16, 16, 16, h, h, h),   KHR_SHAPE(16, 16, 16, h, f, f),
                                                 KHR_SHAPE(16, 8, 32, s8, s32, s32)};
    uint32_t m = 0, n = 0, k = 0;
    int found = vk_khr_pick_shape(listed, 5, &m, &n, &k);
    EXPECT(found && m == 16 && n == 16 && k == 16, "H100 KHR shape %ux%ux%u", m, n, k);
    passed += found && m == 16 && n == 16 && k == 16;
    found = vk_khr_pick_shape(listed, 3, &m, &n, &k); /* 16x8x8 is the only f32 accumulator there */
    EXPECT(found && n == 8 && k == 8, "KHR shape without 16x16x16: %ux%ux%u", m, n, k);
    passed += found && n == 8 && k == 8;
    EXPECT(!vk_khr_pick_shape(listed + 2, 1, &m, &n, &k), "an f16 accumulator was taken");
    passed += !vk_khr_pick_shape(listed + 2, 1, &m, &n, &k);

    vk_caps c = h100();
    attnvk_problem p = {.batch = 4, .heads = 32, .kv_heads = 8, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128,
                        .causal = 1, .dtype = ATTNVK_F16};
    attnvk_kernel_options named = {.variant = "coopmat-khr"};
    vk_config cfg;
    attnvk_status st = vk_choose_config(&c, &p, &named, &cfg);
    int ok = st == ATTNVK_OK && cfg.algo == VK_ALGO_COOPMAT_KHR && cfg.br == 128 && cfg.bc == 16 && cfg.mm == 16 &&
             cfg.mn == 16 && cfg.mk == 16 && cfg.subgroup == 32 && cfg.shared_bytes <= 48 * 1024 && !cfg.emulated;
    EXPECT(ok, "H100 coopmat-khr named: %s", st == ATTNVK_OK ? cfg.variant : attnvk_last_error());
    passed += ok;
    c.nv_coopmat = 0, c.rs_layout = -1; /* a driver that lists KHR matrices only */
    st = vk_choose_config(&c, &p, &(attnvk_kernel_options){0}, &cfg);
    ok = st == ATTNVK_OK && !strcmp(cfg.variant, "coopmat-khr-rs");
    EXPECT(ok, "H100 without NV matrices picks %s", st == ATTNVK_OK ? cfg.variant : attnvk_last_error());
    passed += ok;
    c.rs_layout_khr = -1; /* ... and whose KHR layout differs: P and S through shared memory */
    st = vk_choose_config(&c, &p, &(attnvk_kernel_options){0}, &cfg);
    ok = st == ATTNVK_OK && !strcmp(cfg.variant, "coopmat-khr");
    EXPECT(ok, "H100 without NV matrices or the KHR rs layout picks %s", st == ATTNVK_OK ? cfg.variant : attnvk_last_error());
    passed += ok;

    vk_caps lp = lavapipe();
    snprintf(lp.khr_coopmat_why, sizeof lp.khr_coopmat_why, "the device does not expose VK_KHR_cooperative_matrix");
    st = vk_choose_config(&lp, &p, &named, &cfg);
    ok = st == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "does not expose VK_KHR_cooperative_matrix");
    EXPECT(ok, "lavapipe coopmat-khr: %s", attnvk_last_error());
    return passed + ok;
}

/* coopmat-khr-rs and decode-khr-rs named: the NV rs rows' sizes on the H100, and
 * refused with the probe's reason (or the missing extension's) elsewhere. */
static int check_khr_rs(void)
{
    int passed = 0;
    vk_caps c = h100();
    attnvk_problem prefill = {.batch = 4, .heads = 16, .kv_heads = 16, .seq_q = 4096, .seq_kv = 4096, .head_dim = 128,
                              .dtype = ATTNVK_F16};
    attnvk_problem decode = {.batch = 8, .heads = 32, .kv_heads = 8, .seq_q = 16, .seq_kv = 32768, .head_dim = 128,
                             .dtype = ATTNVK_F16};
    const struct {
        const char *khr, *nv;
        attnvk_problem *p;
        int dim;
    } pairs[] = {{"coopmat-khr-rs", "coopmat-nv-rs", &prefill, 128}, {"coopmat-khr-rs", "coopmat-nv-rs", &prefill, 64},
                 {"decode-khr-rs", "decode-nv-rs", &decode, 128}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; ++i) {
        pairs[i].p->head_dim = pairs[i].dim;
        vk_config k, n;
        attnvk_status sk = vk_choose_config(&c, pairs[i].p, &(attnvk_kernel_options){.variant = pairs[i].khr}, &k);
        attnvk_status sn = vk_choose_config(&c, pairs[i].p, &(attnvk_kernel_options){.variant = pairs[i].nv}, &n);
        int ok = sk == ATTNVK_OK && sn == ATTNVK_OK && !strcmp(k.variant, pairs[i].khr) && k.br == n.br && k.bc == n.bc &&
                 k.wg == n.wg && k.mm == 16 && k.kv_stages == n.kv_stages && k.key_groups == n.key_groups && !k.emulated;
        EXPECT(ok, "H100 %s D=%d named: %ux%u wg %u vs %s's %ux%u wg %u", pairs[i].khr, pairs[i].dim, k.br, k.bc, k.wg,
               pairs[i].nv, n.br, n.bc, n.wg);
        passed += ok;
    }
    prefill.head_dim = 128;
    attnvk_kernel_options named = {.variant = "coopmat-khr-rs"};
    vk_config cfg;
    c.rs_layout_khr = -1;
    snprintf(c.rs_layout_khr_why, sizeof c.rs_layout_khr_why, "coopmat-khr-rs/decode-khr-rs: accumulator layout differs");
    int ok = vk_choose_config(&c, &prefill, &named, &cfg) == ATTNVK_ERROR_UNSUPPORTED &&
             strstr(attnvk_last_error(), "coopmat-khr-rs/decode-khr-rs: accumulator layout differs");
    EXPECT(ok, "H100 coopmat-khr-rs after a failed KHR probe: %s", attnvk_last_error());
    passed += ok;
    c.rs_layout_khr = 0;
    ok = vk_choose_config(&c, &decode, &(attnvk_kernel_options){.variant = "decode-khr-rs"}, &cfg) == ATTNVK_ERROR_UNSUPPORTED &&
         strstr(attnvk_last_error(), "not probed");
    EXPECT(ok, "H100 decode-khr-rs before the KHR probe: %s", attnvk_last_error());
    passed += ok;
    vk_caps lp = lavapipe();
    snprintf(lp.khr_coopmat_why, sizeof lp.khr_coopmat_why, "the device does not expose VK_KHR_cooperative_matrix");
    ok = vk_choose_config(&lp, &prefill, &named, &cfg) == ATTNVK_ERROR_UNSUPPORTED &&
         strstr(attnvk_last_error(), "does not expose VK_KHR_cooperative_matrix");
    EXPECT(ok, "lavapipe coopmat-khr-rs: %s", attnvk_last_error());
    return passed + ok;
}

/* Issue #13's mask staged in the K buffer (AVK_MASK_SHARED) on the H100: D=128's one K buffer
 * holds a 128 x 64 f16 tile; not D=64's two buffers, Nk = 8191, an f32 mask, or with
 * ATTNVK_VK_MASK_SHARED=0; a bad value is refused naming the variable. */
static int check_mask_shared(void)
{
    int passed = 0;
    vk_caps c = h100();
    static const struct { int d, nk, f32, env_off, want; } cases[] = {
        {128, 8192, 0, 0, 1}, {64, 4096, 0, 0, 0}, {128, 8191, 0, 0, 0}, {128, 8192, 1, 0, 0}, {128, 8192, 0, 1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        attnvk_problem p = {.batch = 2, .heads = 16, .kv_heads = 16, .seq_q = 8192, .seq_kv = cases[i].nk,
                            .head_dim = cases[i].d, .dtype = ATTNVK_F16, .causal = 1, .mask = 1, .mask_batch = 1,
                            .mask_heads = 1, .mask_dtype = cases[i].f32 ? ATTNVK_F32 : ATTNVK_F16};
        if (cases[i].env_off) setenv("ATTNVK_VK_MASK_SHARED", "0", 1);
        vk_config cfg;
        attnvk_status s = vk_choose_config(&c, &p, &(attnvk_kernel_options){0}, &cfg);
        unsetenv("ATTNVK_VK_MASK_SHARED");
        int ok = s == ATTNVK_OK && vk_algo_is_rs(cfg.algo) && (int)cfg.mask_shared == cases[i].want;
        EXPECT(ok, "H100 D=%d Nk=%d %s mask%s: %s %ux%u kv_stages %u, mask staged %u (want %d)", cases[i].d, cases[i].nk,
               cases[i].f32 ? "f32" : "f16", cases[i].env_off ? " (ATTNVK_VK_MASK_SHARED=0)" : "",
               s == ATTNVK_OK ? cfg.variant : attnvk_last_error(), cfg.br, cfg.bc, cfg.kv_stages, cfg.mask_shared,
               cases[i].want);
        passed += ok;
    }
    /* ALiBi's key term in S's products (AVK_ALIBI_MMA) without a softcap, at D = 64 and 128 */
    for (int i = 0; i < 3; ++i) {
        attnvk_problem p = {.batch = 2, .heads = 16, .kv_heads = 16, .seq_q = 8192, .seq_kv = 8192,
                            .head_dim = i == 1 ? 64 : 128, .dtype = ATTNVK_F16, .causal = 1, .alibi = 1,
                            .softcap = i == 2 ? 30.0f : 0.0f};
        vk_config cfg;
        attnvk_status s = vk_choose_config(&c, &p, &(attnvk_kernel_options){0}, &cfg);
        int ok = s == ATTNVK_OK && vk_algo_is_rs(cfg.algo) && (int)cfg.alibi_mma == (i != 2) &&
                 cfg.shared_bytes <= c.props.limits.maxComputeSharedMemorySize;
        EXPECT(ok, "H100 D=%d ALiBi%s: %s, ALiBi in S %u, %u bytes shared", p.head_dim, i == 2 ? " softcap" : "",
               s == ATTNVK_OK ? cfg.variant : attnvk_last_error(), cfg.alibi_mma, cfg.shared_bytes);
        passed += ok;
    }
    /* the pipeline built for the problem's value modifications alone (AVK_SCORES' bits 16 | 32 softcap |
     * 64 ALiBi | 128 mask); none on a plain problem or with ATTNVK_VK_HOOK_MODS=0 */
    static const struct { int softcap, alibi, mask, env_off; unsigned want; } hooks[] = {
        {1, 0, 0, 0, 48u}, {0, 1, 0, 0, 80u}, {1, 0, 1, 0, 176u}, {1, 1, 1, 0, 240u}, {0, 0, 0, 0, 0u}, {1, 0, 0, 1, 0u}};
    for (size_t i = 0; i < sizeof hooks / sizeof *hooks; ++i) {
        attnvk_problem p = {.batch = 2, .heads = 16, .kv_heads = 16, .seq_q = 8192, .seq_kv = 8192, .head_dim = 128,
                            .dtype = ATTNVK_F16, .causal = 1, .softcap = hooks[i].softcap ? 30.0f : 0.0f,
                            .alibi = hooks[i].alibi, .mask = hooks[i].mask, .mask_batch = 1, .mask_heads = 1,
                            .mask_dtype = ATTNVK_F16};
        if (hooks[i].env_off) setenv("ATTNVK_VK_HOOK_MODS", "0", 1);
        vk_config cfg;
        attnvk_status s = vk_choose_config(&c, &p, &(attnvk_kernel_options){0}, &cfg);
        unsetenv("ATTNVK_VK_HOOK_MODS");
        int ok = s == ATTNVK_OK && vk_algo_is_rs(cfg.algo) && cfg.hook_mods == hooks[i].want;
        EXPECT(ok, "H100 D=128 softcap %d ALiBi %d mask %d%s: %s, hook bits %u (want %u)", hooks[i].softcap,
               hooks[i].alibi, hooks[i].mask, hooks[i].env_off ? " (ATTNVK_VK_HOOK_MODS=0)" : "",
               s == ATTNVK_OK ? cfg.variant : attnvk_last_error(), cfg.hook_mods, hooks[i].want);
        passed += ok;
    }
    setenv("ATTNVK_VK_MASK_SHARED", "2", 1);
    attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 1024, .seq_kv = 1024, .head_dim = 128,
                        .dtype = ATTNVK_F16, .mask = 1, .mask_batch = 1, .mask_heads = 1, .mask_dtype = ATTNVK_F16};
    vk_config cfg;
    int ok = vk_choose_config(&c, &p, &(attnvk_kernel_options){0}, &cfg) == ATTNVK_ERROR_INVALID_ARGUMENT &&
             strstr(attnvk_last_error(), "ATTNVK_VK_MASK_SHARED") != NULL;
    unsetenv("ATTNVK_VK_MASK_SHARED");
    EXPECT(ok, "H100 ATTNVK_VK_MASK_SHARED=2 refused: %s", attnvk_last_error());
    return passed + ok;
}

/* The backward's matrix body: f16 with head dims multiples of 16 up to 128 on a device with
 * 16x16x16 matrices (KHR before NV; the forward's emulated variant takes the emulation; the
 * table's first tiles that fit),
 * the portable body otherwise; $ATTNVK_VK_BWD names one (refused with the reason where it
 * cannot run), $ATTNVK_VK_BWD_TILES overrides the tiles, bad values refused. */
static int check_backward_matrix(void)
{
    vk_caps h = h100(), l = lavapipe(), nv_only = h100(), small = h100();
    nv_only.khr_coopmat = 0;
    small.props.limits.maxComputeSharedMemorySize = 32 * 1024;
    const vk_config emulated = {.algo = VK_ALGO_COOPMAT_EMU};
    static const struct {
        const char *device, *env_body, *env_tiles;
        int emulated, dk, dv;
        attnvk_dtype dtype;
        attnvk_status want;
        vk_bwd_body body;
        uint32_t keep, stream, wg;
    } want[] = {
        {"H100", NULL, NULL, 0, 128, 128, ATTNVK_F16, ATTNVK_OK, VK_BWD_MATRIX_KHR, 64, 16, 128},
        {"H100", NULL, NULL, 0, 64, 64, ATTNVK_F16, ATTNVK_OK, VK_BWD_MATRIX_KHR, 128, 32, 256}, /* registers: the dQ pass */
        {"H100", NULL, NULL, 0, 64, 64, ATTNVK_BF16, ATTNVK_OK, VK_BWD_PORTABLE, 32, 32, 128},
        {"H100", NULL, NULL, 0, 256, 256, ATTNVK_F16, ATTNVK_OK, VK_BWD_PORTABLE, 8, 8, 128},
        {"H100", NULL, NULL, 0, 72, 72, ATTNVK_F16, ATTNVK_OK, VK_BWD_PORTABLE, 32, 32, 128},
        {"NV only", NULL, NULL, 0, 128, 128, ATTNVK_F16, ATTNVK_OK, VK_BWD_MATRIX_NV, 64, 16, 128},
        {"32 KiB", NULL, NULL, 0, 64, 64, ATTNVK_F16, ATTNVK_OK, VK_BWD_MATRIX_KHR, 64, 32, 128},
        {"H100", "portable", NULL, 0, 128, 128, ATTNVK_F16, ATTNVK_OK, VK_BWD_PORTABLE, 16, 16, 128},
        {"H100", "nv", "nsg=8,stream=16", 0, 128, 128, ATTNVK_F16, ATTNVK_OK, VK_BWD_MATRIX_NV, 128, 16, 256},
        {"lavapipe", NULL, NULL, 0, 64, 64, ATTNVK_F16, ATTNVK_OK, VK_BWD_PORTABLE, 32, 16, 128},
        {"lavapipe", NULL, NULL, 1, 64, 64, ATTNVK_F16, ATTNVK_OK, VK_BWD_MATRIX_EMU, 64, 32, 64},
        {"lavapipe", NULL, NULL, 1, 128, 128, ATTNVK_F16, ATTNVK_OK, VK_BWD_MATRIX_EMU, 32, 16, 32},
        {"lavapipe", "nv", NULL, 0, 64, 64, ATTNVK_F16, ATTNVK_ERROR_UNSUPPORTED, VK_BWD_PORTABLE, 0, 0, 0},
        {"H100", "fast", NULL, 0, 64, 64, ATTNVK_F16, ATTNVK_ERROR_INVALID_ARGUMENT, VK_BWD_PORTABLE, 0, 0, 0},
        {"H100", NULL, "nsg=4,stream=24", 0, 64, 64, ATTNVK_F16, ATTNVK_ERROR_UNSUPPORTED, VK_BWD_PORTABLE, 0, 0, 0},
        {"H100", NULL, "nsg=16,stream=64", 0, 128, 128, ATTNVK_F16, ATTNVK_ERROR_UNSUPPORTED, VK_BWD_PORTABLE, 0, 0, 0},
        {"H100", NULL, "rows=4", 0, 64, 64, ATTNVK_F16, ATTNVK_ERROR_INVALID_ARGUMENT, VK_BWD_PORTABLE, 0, 0, 0},
    };
    int passed = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; ++i) {
        const char *d = want[i].device;
        const vk_caps *c = d[0] == 'H' ? &h : d[0] == 'l' ? &l : d[0] == 'N' ? &nv_only : &small;
        attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 64, .seq_kv = 64, .head_dim = want[i].dk,
                            .head_dim_v = want[i].dv, .dtype = want[i].dtype};
        if (want[i].env_body) setenv("ATTNVK_VK_BWD", want[i].env_body, 1);
        if (want[i].env_tiles) setenv("ATTNVK_VK_BWD_TILES", want[i].env_tiles, 1);
        vk_bwd_tiles t = {0};
        const attnvk_status s = vk_bwd_select(c, &p, want[i].emulated ? &emulated : NULL, 0, &t);
        unsetenv("ATTNVK_VK_BWD");
        unsetenv("ATTNVK_VK_BWD_TILES");
        const int ok = s == want[i].want && (s != ATTNVK_OK || (t.body == want[i].body && t.keep == want[i].keep &&
                                                               t.stream == want[i].stream && t.wg == want[i].wg &&
                                                               t.shared_bytes <= c->props.limits.maxComputeSharedMemorySize));
        EXPECT(ok, "backward body %zu on %s (%s, %s) %s %d/%d: status %s body %d %ux%u wg %u (%s)", i, want[i].device,
               want[i].env_body ? want[i].env_body : "-", want[i].env_tiles ? want[i].env_tiles : "-",
               attnvk_dtype_name(want[i].dtype), want[i].dk, want[i].dv, attnvk_status_name(s), (int)t.body, t.keep, t.stream,
               t.wg, s == ATTNVK_OK ? "" : attnvk_last_error());
        passed += ok;
    }
    /* dQ's tiles apart from dK/dV's */
    attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16};
    setenv("ATTNVK_VK_BWD_TILES", "dq_nsg=2,dq_stream=32", 1);
    vk_bwd_tiles t = {0};
    const attnvk_status s = vk_bwd_select(&h, &p, NULL, 0, &t);
    unsetenv("ATTNVK_VK_BWD_TILES");
    const int ok = s == ATTNVK_OK && t.keep == 64 && t.stream == 16 && t.wg == 128 && t.dq_keep == 32 && t.dq_stream == 32 &&
                   t.dq_wg == 64 && t.dq_nsg == 2;
    EXPECT(ok, "backward dQ tiles apart: %s %ux%u wg %u, dQ %ux%u wg %u", attnvk_status_name(s), t.keep, t.stream, t.wg,
           t.dq_keep, t.dq_stream, t.dq_wg);
    /* one stage unless told; stages=2 where both passes' second stage fits, refused where not
     * (D=64's dK/dV, 8 x 32: 46 KiB in one) */
    vk_bwd_tiles a = {0}, b = {0}, c = {0};
    attnvk_problem q = p;
    q.head_dim = 64;
    int staged = vk_bwd_select(&h, &p, NULL, 0, &a) == ATTNVK_OK && a.stages == 1 && a.dq_stages == 1;
    setenv("ATTNVK_VK_BWD_TILES", "stages=2", 1);
    staged = staged && vk_bwd_select(&h, &p, NULL, 0, &b) == ATTNVK_OK && b.stages == 2 && b.dq_stages == 2 &&
             b.shared_bytes <= 48 * 1024 && vk_bwd_select(&h, &q, NULL, 0, &c) == ATTNVK_ERROR_UNSUPPORTED;
    unsetenv("ATTNVK_VK_BWD_TILES");
    EXPECT(staged, "backward stages: D=128 %u/%u, told 2: %u/%u, D=64 told 2 refused", a.stages, a.dq_stages, b.stages,
           b.dq_stages);
    return passed + ok + staged;
}

/* ATTNVK_VK_BWD_DQ=atomic: dK/dV adds dQ where the device has f32 atomics and the run is not
 * deterministic; its tiles (the table's atomic rows) keep K in shared memory too, D=128's
 * reads K's matrices from there (kx=2); a bad value and a device without the atomics are
 * refused with the reason. */
static int check_backward_atomic_dq(void)
{
    vk_caps h = h100(), bare = h100();
    bare.atomic_f32_add = 0;
    attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16};
    attnvk_problem q = p;
    q.head_dim = 64;
    vk_bwd_tiles a = {0}, b = {0}, c = {0}, d = {0};
    /* unasked: D=128 the dQ pass; D=64 the dQ pass with P and dS in registers (the default where
     * the layout is known), atomics (the table's by_default row) with them staged, not without
     * the atomics, not deterministic, not under a tiles override (sweeps name the mode) */
    int ok = vk_bwd_select(&h, &p, NULL, 0, &a) == ATTNVK_OK && !a.atomic_dq;
    ok = ok && vk_bwd_select(&h, &q, NULL, 0, &b) == ATTNVK_OK && !b.atomic_dq && b.reg_scores && b.keep == 128 &&
         b.stream == 32;
    setenv("ATTNVK_VK_BWD_SCORES", "staged", 1);
    ok = ok && vk_bwd_select(&h, &q, NULL, 0, &b) == ATTNVK_OK && b.atomic_dq && b.keep == 64 && b.stream == 16;
    ok = ok && vk_bwd_select(&bare, &q, NULL, 0, &b) == ATTNVK_OK && !b.atomic_dq && b.keep == 128 && b.stream == 32;
    ok = ok && vk_bwd_select(&h, &q, NULL, 1, &b) == ATTNVK_OK && !b.atomic_dq;
    setenv("ATTNVK_VK_BWD_TILES", "stream=32", 1);
    ok = ok && vk_bwd_select(&h, &q, NULL, 0, &b) == ATTNVK_OK && !b.atomic_dq && b.keep == 128 && b.stream == 32;
    unsetenv("ATTNVK_VK_BWD_TILES");
    unsetenv("ATTNVK_VK_BWD_SCORES");
    setenv("ATTNVK_VK_BWD_DQ", "kernel", 1);
    ok = ok && vk_bwd_select(&h, &q, NULL, 0, &b) == ATTNVK_OK && !b.atomic_dq && b.keep == 128;
    setenv("ATTNVK_VK_BWD_DQ", "atomic", 1);
    ok = ok && vk_bwd_select(&h, &p, NULL, 0, &a) == ATTNVK_OK && a.atomic_dq && a.body == VK_BWD_MATRIX_KHR &&
         a.keep == 64 && a.stream == 16 && a.kept_x_shared && a.shared_bytes <= 48 * 1024;
    ok = ok && vk_bwd_select(&h, &q, NULL, 0, &b) == ATTNVK_OK && b.atomic_dq && b.keep == 64 && b.stream == 16 &&
         !b.kept_x_shared && b.shared_bytes <= 48 * 1024;
    ok = ok && vk_bwd_select(&h, &p, NULL, 1, &c) == ATTNVK_OK && !c.atomic_dq; /* deterministic */
    ok = ok && vk_bwd_select(&bare, &p, NULL, 0, &d) == ATTNVK_ERROR_UNSUPPORTED &&
         strstr(attnvk_last_error(), "shaderBufferFloat32AtomicAdd");
    setenv("ATTNVK_VK_BWD_DQ", "sometimes", 1);
    ok = ok && vk_bwd_select(&h, &p, NULL, 0, &d) == ATTNVK_ERROR_INVALID_ARGUMENT && strstr(attnvk_last_error(), "sometimes");
    unsetenv("ATTNVK_VK_BWD_DQ");
    EXPECT(ok, "backward dQ by atomics: D=128 %d %ux%u %u B, D=64 %d %ux%u %u B, deterministic %d (%s)", a.atomic_dq, a.keep,
           a.stream, a.shared_bytes, b.atomic_dq, b.keep, b.stream, b.shared_bytes, c.atomic_dq, attnvk_last_error());
    return ok;
}

/* P and dS in the accumulators (REG_SCORES): unasked, where the family's layout probe passed
 * (and the emulation); staged when told; told registers where the layout is not known, refused
 * with the probe's reason; a bad value refused by name. */
static int check_backward_scores(void)
{
    vk_caps h = h100(), moved = h100(), lav = lavapipe();
    moved.rs_layout_khr = -1;
    snprintf(moved.rs_layout_khr_why, sizeof moved.rs_layout_khr_why, "coopmat-khr-rs: the layout differs");
    attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 64, .seq_kv = 64, .head_dim = 128, .dtype = ATTNVK_F16};
    const vk_config emulated = {.algo = VK_ALGO_COOPMAT_EMU};
    vk_bwd_tiles a = {0}, b = {0}, c = {0}, d = {0}, e = {0};
    /* unasked: where the layout is known (the H100's KHR), not where it moved */
    int ok = vk_bwd_select(&h, &p, NULL, 0, &a) == ATTNVK_OK && a.body == VK_BWD_MATRIX_KHR && a.reg_scores == 1;
    ok = ok && vk_bwd_select(&moved, &p, NULL, 0, &b) == ATTNVK_OK && b.body == VK_BWD_MATRIX_KHR && b.reg_scores == 0;
    ok = ok && vk_bwd_select(&lav, &p, &emulated, 0, &c) == ATTNVK_OK && c.body == VK_BWD_MATRIX_EMU && c.reg_scores == 1;
    setenv("ATTNVK_VK_BWD_SCORES", "registers", 1);
    ok = ok && vk_bwd_select(&h, &p, NULL, 0, &a) == ATTNVK_OK && a.body == VK_BWD_MATRIX_KHR && a.reg_scores == 1;
    setenv("ATTNVK_VK_BWD_SCORES", "staged", 1);
    ok = ok && vk_bwd_select(&moved, &p, NULL, 0, &b) == ATTNVK_OK && b.body == VK_BWD_MATRIX_KHR && b.reg_scores == 0;
    setenv("ATTNVK_VK_BWD_SCORES", "registers", 1);
    setenv("ATTNVK_VK_BWD", "nv", 1);
    ok = ok && vk_bwd_select(&moved, &p, NULL, 0, &d) == ATTNVK_OK && d.body == VK_BWD_MATRIX_NV && d.reg_scores == 1;
    unsetenv("ATTNVK_VK_BWD");
    setenv("ATTNVK_VK_BWD_SCORES", "staged", 1);
    ok = ok && vk_bwd_select(&h, &p, NULL, 0, &e) == ATTNVK_OK && e.reg_scores == 0 &&
         vk_bwd_select(&lav, &p, &emulated, 0, &e) == ATTNVK_OK && e.reg_scores == 0;
    setenv("ATTNVK_VK_BWD_SCORES", "registers", 1);
    ok = ok && vk_bwd_select(&moved, &p, NULL, 0, &e) == ATTNVK_ERROR_UNSUPPORTED &&
         strstr(attnvk_last_error(), "the layout differs") != NULL;
    /* two strips a subgroup: with registers only */
    setenv("ATTNVK_VK_BWD_TILES", "strips=2,dq_strips=2", 1);
    ok = ok && vk_bwd_select(&h, &p, NULL, 0, &e) == ATTNVK_OK && e.strips == 2 && e.dq_strips == 2 && e.keep == 128 &&
         e.wg == 128 && e.shared_bytes <= 48 * 1024;
    setenv("ATTNVK_VK_BWD_SCORES", "staged", 1);
    ok = ok && vk_bwd_select(&h, &p, NULL, 0, &e) == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "strips");
    unsetenv("ATTNVK_VK_BWD_TILES");
    setenv("ATTNVK_VK_BWD_SCORES", "fast", 1);
    ok = ok && vk_bwd_select(&h, &p, NULL, 0, &e) == ATTNVK_ERROR_INVALID_ARGUMENT && strstr(attnvk_last_error(), "'fast'");
    unsetenv("ATTNVK_VK_BWD_SCORES");
    EXPECT(ok, "backward scores in registers: H100 %u, KHR layout moved %u, emulated %u, NV %u (%s)", a.reg_scores,
           b.reg_scores, c.reg_scores, d.reg_scores, attnvk_last_error());
    return ok;
}

/* The backward pass's tiles (vk_backward.c's table): the largest pair that fits each
 * device's shared memory, the Vulkan minimum of 16 KiB included, and head dims that are
 * not multiples of 4 refused. */
static int check_backward_tiles(void)
{
    vk_caps h = h100(), l = lavapipe(), small = lavapipe();
    small.props.limits.maxComputeSharedMemorySize = 16 * 1024;
    static const struct {
        const char *device;
        int dk, dv;
        uint32_t keep, stream;
    } want[] = {{"H100", 64, 64, 32, 32},     {"H100", 128, 128, 16, 16},    {"H100", 256, 256, 8, 8},
                {"H100", 192, 128, 16, 16},   {"lavapipe", 64, 64, 32, 16},  {"lavapipe", 128, 128, 16, 8},
                {"lavapipe", 256, 256, 8, 4}, {"lavapipe", 192, 128, 16, 8}, {"16 KiB", 256, 256, 4, 2}};
    int passed = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; ++i) {
        const vk_caps *c = want[i].device[0] == 'H' ? &h : want[i].device[0] == 'l' ? &l : &small;
        attnvk_problem p = {.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 64, .seq_kv = 64, .head_dim = want[i].dk,
                            .head_dim_v = want[i].dv, .dtype = ATTNVK_F32};
        vk_bwd_tiles t;
        const int ok = vk_bwd_select(c, &p, NULL, 0, &t) == ATTNVK_OK && t.body == VK_BWD_PORTABLE && t.keep == want[i].keep &&
                       t.stream == want[i].stream && t.shared_bytes <= c->props.limits.maxComputeSharedMemorySize;
        EXPECT(ok, "backward tiles on %s at %d/%d: %ux%u (want %ux%u), %u bytes: %s", want[i].device, want[i].dk,
               want[i].dv, t.keep, t.stream, want[i].keep, want[i].stream, t.shared_bytes, attnvk_last_error());
        passed += ok;
    }
    attnvk_problem odd = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 8, .seq_kv = 8, .head_dim = 30, .dtype = ATTNVK_F32};
    vk_bwd_tiles t;
    const int refused = vk_bwd_select(&l, &odd, NULL, 0, &t) == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "multiples of 4");
    EXPECT(refused, "backward at D=30 refused: %s", attnvk_last_error());
    return passed + refused + check_backward_matrix();
}

int main(void)
{
    vk_caps a = h100(), b = lavapipe();
    int passed = check_device("H100", &a, 1);
    passed += check_device("lavapipe", &b, 0);
    /* a matrix body named for a head dim that is not a multiple of 8 is refused with the reason */
    attnvk_problem odd = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 64, .seq_kv = 64, .head_dim = 36, .dtype = ATTNVK_F16};
    attnvk_kernel_options named = {.variant = "coopmat-nv-rs"};
    vk_config cfg;
    int refused = vk_choose_config(&a, &odd, &named, &cfg) == ATTNVK_ERROR_UNSUPPORTED && strstr(attnvk_last_error(), "multiples of 8");
    EXPECT(refused, "coopmat-nv-rs at D=36: %s", attnvk_last_error());
    passed += refused;
    passed += check_khr();
    passed += check_families();
    passed += check_khr_rs();
    passed += check_mask_shared();
    passed += check_backward_tiles();
    passed += check_backward_atomic_dq();
    passed += check_backward_scores();
    return avk_test_finish(passed, 0);
}
