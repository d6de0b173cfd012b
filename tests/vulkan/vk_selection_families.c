/* The tuning table's device-family rows (untuned: from documented limits) and the
 * ATTNVK_VK_PROFILE profiles on described devices, no device needed: each pick of
 * every head dim and dtype must fit the device's shared memory and subgroup sizes
 * (decode: workgroups whole subgroups of every size, lanes a key within the smallest;
 * shuffle reductions only where a row's threads fit the smallest subgroup), never use
 * subgroup ops, f16 storage or matrix units a profile lacks, and the default picks
 * (D=128 f16 and f32 prefill, GQA decode) are the expected ones. */
#include "test_util.h"
#include "vulkan/vk_profile.h"
#include "vulkan/vk_variants.h"

#include <string.h>

static vk_caps described(const char *name, const char *vendor, uint32_t vendor_id, uint32_t shared_kib, uint32_t min_sg,
                         uint32_t max_sg, uint32_t default_sg, int f16, int khr)
{
    vk_caps c;
    memset(&c, 0, sizeof c);
    snprintf(c.info.name, sizeof c.info.name, "%s", name);
    snprintf(c.info.vendor, sizeof c.info.vendor, "%s", vendor);
    c.props.vendorID = vendor_id;
    c.props.limits.maxComputeSharedMemorySize = shared_kib * 1024;
    c.props.limits.maxComputeWorkGroupInvocations = 1024;
    c.props.limits.maxComputeWorkGroupSize[0] = 1024;
    c.subgroup_size = default_sg, c.min_subgroup = min_sg, c.max_subgroup = max_sg;
    c.size_control = c.require_size_compute = c.full_subgroups = min_sg != max_sg;
    c.subgroup_shuffle = c.subgroup_vote = c.subgroup_arith = 1;
    c.shader_f16 = c.storage_16bit = c.vk_memory_model = f16;
    c.khr_coopmat_ext = c.khr_coopmat = khr;
    c.khr_m = c.khr_n = c.khr_k = khr ? 16 : 0;
    if (!khr) snprintf(c.khr_coopmat_why, sizeof c.khr_coopmat_why, "no usable VK_KHR_cooperative_matrix shape");
    c.rs_layout = -1;
    snprintf(c.rs_layout_why, sizeof c.rs_layout_why, "not NVIDIA");
    c.compute_units = 16;
    vk_profile_identify(&c); /* the family's architecture from the name, as vk_describe.c does */
    return c;
}

typedef struct family {
    const char *label;
    vk_caps caps;
    const char *f16_prefill, *f32_prefill, *decode; /* the expected default picks */
    int subgroup_ops, f16_storage;
} family;

/* Why cfg does not fit c ("" when it does). */
static const char *misfit(const vk_caps *c, const vk_config *cfg, const family *f)
{
    if (cfg->shared_bytes > c->props.limits.maxComputeSharedMemorySize) return "shared memory over the limit";
    if (cfg->algo == VK_ALGO_DECODE) {
        if (cfg->wg % c->max_subgroup || cfg->wg % c->min_subgroup) return "decode workgroup not whole subgroups";
        if (cfg->key_lanes > c->min_subgroup) return "decode lanes a key beyond the smallest subgroup";
        if (!f->subgroup_ops) return "decode needs subgroup shuffles";
    }
    if ((cfg->algo == VK_ALGO_SCALAR || cfg->algo == VK_ALGO_F16) && cfg->sg_reduce &&
        (cfg->wg / cfg->br > c->min_subgroup || !f->subgroup_ops))
        return "shuffle reductions where a row's threads do not fit a subgroup";
    if (cfg->algo == VK_ALGO_F16 && !f->f16_storage) return "f16 storage on a device without it";
    if (cfg->algo >= VK_ALGO_COOPMAT_NV && (cfg->wg % cfg->subgroup || !c->khr_coopmat)) return "matrix variant misfit";
    return "";
}

static int check_family(const family *f)
{
    const vk_caps *c = &f->caps;
    int passed = 0;
    const int dims[][2] = {{32, 32}, {40, 40}, {64, 64}, {72, 72}, {80, 80}, {96, 96}, {112, 112}, {128, 128},
                           {192, 128}, {192, 192}, {256, 256}, {512, 512}, {576, 512}};
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    for (size_t d = 0; d < sizeof dims / sizeof *dims; ++d)
        for (size_t t = 0; t < 3; ++t)
            for (int decode = 0; decode < 2; ++decode) {
                attnvk_problem p = {.batch = 4, .heads = 32, .kv_heads = 8, .seq_q = decode ? 1 : 2048, .seq_kv = 4096,
                                    .head_dim = dims[d][0], .head_dim_v = dims[d][1], .causal = !decode, .dtype = dtypes[t]};
                vk_config cfg;
                attnvk_status s = vk_choose_config(c, &p, &(attnvk_kernel_options){0}, &cfg);
                /* 16 KiB holds no tile of 576/512 rows (the generic 2x4 needs 12.4 KiB at 512 only) */
                int too_wide = c->props.limits.maxComputeSharedMemorySize < 20 * 1024 && dims[d][0] > 512;
                if (s != ATTNVK_OK && too_wide) continue;
                EXPECT(s == ATTNVK_OK, "%s D=%d/%d %s %s: %s", f->label, dims[d][0], dims[d][1],
                       attnvk_dtype_name(p.dtype), decode ? "decode" : "prefill", attnvk_last_error());
                if (s != ATTNVK_OK) continue;
                const char *why = misfit(c, &cfg, f);
                EXPECT(!*why, "%s D=%d/%d %s %s: %s %ux%u wg %u (%u bytes): %s", f->label, dims[d][0], dims[d][1],
                       attnvk_dtype_name(p.dtype), decode ? "decode" : "prefill", cfg.variant, cfg.br, cfg.bc, cfg.wg,
                       cfg.shared_bytes, why);
                passed += !*why;
            }
    /* the default picks: D=128 prefill in f16 and f32, GQA decode in f16 */
    const struct {
        int decode;
        attnvk_dtype dtype;
        const char *want;
    } picks[] = {{0, ATTNVK_F16, f->f16_prefill}, {0, ATTNVK_F32, f->f32_prefill}, {1, ATTNVK_F16, f->decode}};
    for (size_t i = 0; i < 3; ++i) {
        attnvk_problem p = {.batch = 4, .heads = 32, .kv_heads = 8, .seq_q = picks[i].decode ? 1 : 4096, .seq_kv = 4096,
                            .head_dim = 128, .causal = !picks[i].decode, .dtype = picks[i].dtype};
        vk_config cfg;
        attnvk_status s = vk_choose_config(c, &p, &(attnvk_kernel_options){0}, &cfg);
        int ok = s == ATTNVK_OK && !strcmp(cfg.variant, picks[i].want);
        EXPECT(ok, "%s D=128 %s %s: %s, expected %s", f->label, attnvk_dtype_name(p.dtype),
               picks[i].decode ? "decode" : "prefill", s == ATTNVK_OK ? cfg.variant : attnvk_last_error(), picks[i].want);
        if (s == ATTNVK_OK)
            printf("%-28s %-8s %-7s D=128: %s %ux%u workgroup %u, %u bytes of %u shared, subgroups %u-%u\n", f->label,
                   picks[i].decode ? "decode" : "prefill", attnvk_dtype_name(p.dtype), cfg.variant, cfg.br, cfg.bc, cfg.wg,
                   cfg.shared_bytes, c->props.limits.maxComputeSharedMemorySize, c->min_subgroup, c->max_subgroup);
        passed += ok;
    }
    return passed;
}

/* A large device the profiles clamp: 64 KiB, subgroups 8-128, fp16, KHR matrices. */
static family profiled(const char *profile, const char *f16_prefill, const char *f32_prefill, const char *decode)
{
    const vk_profile *p = vk_profile_find(profile);
    family f = {profile, described("Big described GPU", "Mesa", 0x10005, 64, 8, 128, 32, 1, 1), f16_prefill, f32_prefill,
                decode, p && p->subgroup_ops, p && p->f16};
    EXPECT(p != NULL, "profile %s", profile);
    vk_profile_clamp(&f.caps, p);
    vk_profile_identify(&f.caps);
    return f;
}

int check_families(void)
{
    const family families[] = {
        /* RADV names; RDNA3 with WMMA through VK_KHR_cooperative_matrix 16x16x16 */
        {"RX 7900 XTX (RDNA3)", described("AMD Radeon RX 7900 XTX (RADV NAVI31)", "AMD", 0x1002, 64, 32, 64, 64, 1, 1),
         "coopmat-khr", "scalar", "decode", 1, 1},
        {"RX 6800 XT (RDNA2)", described("AMD Radeon RX 6800 XT (RADV NAVI21)", "AMD", 0x1002, 64, 32, 64, 64, 1, 0), "f16",
         "scalar", "decode", 1, 1},
        {"Iris Xe (Xe-LP)", described("Intel(R) Iris(R) Xe Graphics (TGL GT2)", "Intel", 0x8086, 64, 8, 32, 32, 1, 0), "f16",
         "scalar", "decode", 1, 1},
        /* Arc A770 as ANV lists it (8-row XMX shapes, which the KHR probe refuses: the f16 rows);
         * B580 with a 16x16x16 KHR shape: the Xe2 coopmat-khr row as a driver listing one takes it */
        {"Arc A770 (Xe-HPG)", described("Intel(R) Arc(tm) A770 Graphics (DG2)", "Intel", 0x8086, 64, 8, 32, 32, 1, 0), "f16",
         "scalar", "decode", 1, 1},
        {"Arc B580 (Xe2)", described("Intel(R) Arc(tm) B580 Graphics (BMG G21)", "Intel", 0x8086, 64, 16, 32, 32, 1, 1),
         "coopmat-khr", "scalar", "decode", 1, 1},
        {"Mali-G710", described("Mali-G710", "ARM", 0x13B5, 32, 16, 16, 16, 1, 0), "f16", "scalar", "decode", 1, 1},
        {"Adreno 740", described("Adreno (TM) 740", "Qualcomm", 0x5143, 32, 64, 128, 64, 1, 0), "f16", "scalar", "decode",
         1, 1},
        {"Apple M2 (MoltenVK)", described("Apple M2", "Apple", 0x106B, 32, 32, 32, 32, 1, 0), "f16", "scalar", "decode", 1, 1},
        profiled("intel-gen12", "f16", "scalar", "decode"),
        profiled("arm-mali", "scalar", "scalar", "decode"),
        profiled("adreno", "f16", "scalar", "decode"),
        profiled("apple-moltenvk", "f16", "scalar", "decode"),
        profiled("small", "scalar", "scalar", "scalar"),
    };
    int passed = 0;
    for (size_t i = 0; i < sizeof families / sizeof *families; ++i) passed += check_family(&families[i]);
    return passed;
}
