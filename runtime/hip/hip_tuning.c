/* The HIP backend's tuning table and the rules that keep a configuration
 * compilable on AMD: kernels are data, and this is where their numbers live.
 * Every gfx target has 64 KiB of LDS per workgroup. */
#include "core/native_flash.h"
#include "core/split_plan.h"
#include "hip/hip_kernels.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

enum { ANY = -1, PREFILL = 0, DECODE = 1, AVK_HIP_DEFAULT_LDS = 65536 };
#define AMD "AMD"

const char *const avk_hip_build_archs[] = {"gfx90a", "gfx940", "gfx1030"};
const int avk_hip_build_arch_count = 3;

/* vendor, architecture, device, dtype, Dk min..max, decode, variant, BR, BC, threads.
 * mma entries need a matrix unit and f16/bf16 (usable()); BR = threads / 32 * 16.
 * Decode runs the simt kernel split over K/V (a 16-row mma tile would leave
 * half of a wave64 idle, and decode is bandwidth-bound anyway). Head dims past
 * 256 (512, MLA's 576/512) run simt: the mma body splits such an O over warps
 * only with CUDA's named barriers. */
static const avk_tuning hip_table[] = {
    /* CDNA2 (MI200) and CDNA3 (MI300): MFMA 16x16x16 */
    {AMD, "gfx90a", NULL, ANY, 32, 64, PREFILL, "mma16", 64, 64, 128, {0}},
    {AMD, "gfx90a", NULL, ANY, 72, 128, PREFILL, "mma16", 64, 32, 128, {0}},
    {AMD, "gfx90a", NULL, ANY, 160, 256, PREFILL, "mma16-qs", 32, 16, 64, {0}},
    {AMD, "gfx94", NULL, ANY, 32, 64, PREFILL, "mma16", 64, 64, 128, {0}},
    {AMD, "gfx94", NULL, ANY, 72, 128, PREFILL, "mma16", 64, 32, 128, {0}},
    {AMD, "gfx94", NULL, ANY, 160, 256, PREFILL, "mma16-qs", 32, 16, 64, {0}},
    /* RDNA3: WMMA 16x16x16 wave32 (no embedded objects: hipRTC at run time) */
    {AMD, "gfx11", NULL, ANY, 32, 64, PREFILL, "mma16", 64, 64, 128, {0}},
    {AMD, "gfx11", NULL, ANY, 72, 128, PREFILL, "mma16", 64, 32, 128, {0}},
    {AMD, "gfx11", NULL, ANY, 160, 256, PREFILL, "mma16-qs", 32, 16, 64, {0}},
    /* portable f32 kernel: every dtype, every target (gfx1030, gfx908, ...) */
    {NULL, NULL, NULL, ANY, 32, 128, PREFILL, "simt", 32, 32, 128, {0}},
    {NULL, NULL, NULL, ANY, 32, 128, DECODE, "simt", 16, 32, 128, {0}},
    {NULL, NULL, NULL, ANY, 160, 256, ANY, "simt", 16, 16, 64, {0}},
    {NULL, NULL, NULL, ANY, 512, 576, ANY, "simt", 8, 8, 64, {0}}, /* 54 KiB at 576/512 */
};

/* The rocBLAS baseline: softmax workgroup size, and the key tile the
 * deliberately wrong test kernel drops. */
static const avk_tuning rocblas_table[] = {
    {NULL, NULL, NULL, ANY, 0, 0, ANY, "gemm-softmax-gemm", 1, 64, 256, {0}},
};

const avk_tuning *avk_hip_tuning_table(int *count)
{
    *count = (int)(sizeof hip_table / sizeof *hip_table);
    return hip_table;
}

int avk_hip_arch_wave(const char *arch) { return strncmp(arch, "gfx9", 4) == 0 ? 64 : 32; }

int avk_hip_arch_matrix(const char *arch)
{
    if (strncmp(arch, "gfx90a", 6) == 0 || strcmp(arch, "gfx940") == 0 || strcmp(arch, "gfx941") == 0 ||
        strcmp(arch, "gfx942") == 0)
        return 1;
    if (strncmp(arch, "gfx110", 6) == 0) return 2;
    return 0; /* gfx908 has MFMA but no bf16_1k: the portable kernel */
}

void avk_hip_synthetic_device(const char *arch, attnvk_device_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "AMD %s", arch);
    snprintf(out->vendor, sizeof out->vendor, "AMD");
    snprintf(out->architecture, sizeof out->architecture, "%s", arch);
    out->vendor_id = 0x1002;
    out->subgroup_sizes[0] = avk_hip_arch_wave(arch);
    out->shared_memory_per_group = AVK_HIP_DEFAULT_LDS;
    out->fp16 = out->bf16 = 1;
    out->cooperative_matrix = avk_hip_arch_matrix(arch) != 0;
}

static int parse_variant(const char *name, avk_hip_config *c)
{
    if (strcmp(name, "simt") == 0) {
        c->mma = c->qreg = 0;
    } else if (strcmp(name, "mma16") == 0 || strcmp(name, "mma16-qs") == 0) {
        c->mma = 1;
        c->qreg = name[5] == '\0';
    } else {
        return 0;
    }
    snprintf(c->variant, sizeof c->variant, "%s", name);
    return 1;
}

static int dim_v(const avk_hip_config *c) { return c->head_dim_v > 0 ? c->head_dim_v : c->head_dim; }

size_t avk_hip_config_dynamic_lds(const avk_hip_config *c)
{
    /* mirrors attn_mma.h and attn_fwd.cu: mma keeps Q + two stages of K (rows
     * of Dk in whole k-steps of 16) and of V (Dv) in 16-bit rows padded by 16
     * bytes; simt keeps f32 Q, K, V (Dv), S and three row vectors */
    size_t D = (size_t)c->head_dim, DV = (size_t)dim_v(c), br = (size_t)c->br, bc = (size_t)c->bc;
    if (c->mma) return (br + 2 * bc) * ((D + 15) / 16 * 16 + 8) * 2 + 2 * bc * ((DV + 15) / 16 * 16 + 8) * 2;
    return (br * (D + 1) + bc * (D + 1) + bc * (DV + 1) + br * (bc + 1) + 3 * br) * 4;
}

size_t avk_hip_config_static_lds(const avk_hip_config *c, int wave)
{
    enum { SCRATCH_BYTES_PER_WAVE = 2560 }; /* amd_fragments.h: AVK_SCRATCH_U16_PER_WAVE * 2 */
    return c->mma ? (size_t)((c->threads + wave - 1) / wave) * SCRATCH_BYTES_PER_WAVE : 0;
}


static attnvk_status check_config(const attnvk_device_info *info, avk_hip_config *c)
{
    const char *arch = info->architecture;
    const int wave = info->subgroup_sizes[0] ? info->subgroup_sizes[0] : avk_hip_arch_wave(arch);
    if (c->br < 1 || c->bc < 1) return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "hip: tiles must be positive");
    if (c->mma) {
        if (c->dtype == ATTNVK_F32)
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "hip: variant %s takes f16/bf16 (f32 runs 'simt')", c->variant);
        if (!avk_hip_arch_matrix(arch))
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                            "hip: variant %s needs MFMA (gfx90a, gfx94x) or WMMA (gfx11); %s has neither", c->variant,
                            arch);
        if (c->br % 16 || c->br / 16 * 32 % wave || c->br > 256)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "hip: %s needs tile_br a multiple of %d (whole wavefronts of 16-row warps), <= 256 "
                            "(got %d)",
                            c->variant, wave / 2, c->br);
        if (c->bc % 16 || c->bc > 256)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "hip: %s needs tile_bc a multiple of 16, <= 256 (got %d)",
                            c->variant, c->bc);
        if (c->head_dim > 256)
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                            "hip: %s takes head dims up to 256 (got %d; larger ones run simt)", c->variant,
                            c->head_dim);
        c->threads = c->br / 16 * 32;
    } else {
        if (c->threads <= 0) c->threads = 128;
        if (c->bc > c->threads || c->threads % c->bc || c->br % (c->threads / c->bc) || (c->br * dim_v(c)) % c->threads)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "hip: simt needs tile_bc dividing %d and tile_br a multiple of %d (got %dx%d)", c->threads,
                            c->threads / (c->bc <= c->threads && c->bc > 0 ? c->bc : 1), c->br, c->bc);
    }
    size_t lds = avk_hip_config_dynamic_lds(c) + avk_hip_config_static_lds(c, wave);
    size_t limit = info->shared_memory_per_group ? info->shared_memory_per_group : AVK_HIP_DEFAULT_LDS;
    if (lds > limit)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "hip: %s %dx%d at D=%d needs %zu bytes of LDS (device: %zu)",
                        c->variant, c->br, c->bc, c->head_dim, lds, limit);
    return ATTNVK_OK;
}

typedef struct usable_ctx {
    const attnvk_device_info *info;
    attnvk_dtype dtype;
    int head_dim, head_dim_v;
} usable_ctx;

static int usable(const avk_tuning *e, const void *ctx)
{
    const usable_ctx *u = ctx;
    avk_hip_config c;
    memset(&c, 0, sizeof c);
    if (!parse_variant(e->variant, &c)) return 0;
    c.dtype = u->dtype;
    c.head_dim = u->head_dim;
    c.head_dim_v = u->head_dim_v;
    c.br = e->tile_br;
    c.bc = e->tile_bc;
    c.threads = e->workgroup_size;
    return check_config(u->info, &c) == ATTNVK_OK;
}

static const avk_tuning *lookup(const attnvk_device_info *info, attnvk_dtype dtype, int head_dim, int head_dim_v,
                                int decode)
{
    usable_ctx u = {info, dtype, head_dim, head_dim_v};
    avk_tuning_query q = {info, dtype, head_dim, decode, usable, &u};
    int count;
    const avk_tuning *table = avk_hip_tuning_table(&count);
    return avk_tuning_lookup(table, count, &q);
}

/* Tiles for a variant named in the options but not chosen by the table. */
static void variant_defaults(avk_hip_config *c, int decode)
{
    if (!c->mma) {
        c->br = c->head_dim > 256 ? 8 : decode || c->head_dim > 128 ? 16 : 32;
        c->bc = c->head_dim > 256 ? 8 : c->head_dim > 128 ? 16 : 32;
        c->threads = c->head_dim > 128 ? 64 : 128;
    } else {
        c->br = c->head_dim > 128 ? 32 : 64;
        c->bc = c->head_dim > 128 ? 16 : c->head_dim > 64 ? 32 : 64;
    }
}

attnvk_status avk_hip_select(const attnvk_device_info *info, const attnvk_problem *p,
                             const attnvk_kernel_options *o, int decode, avk_hip_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    const int dv = p->head_dim_v > 0 ? p->head_dim_v : p->head_dim;
    if (!avk_native_head_dims(p->head_dim, dv)) {
        char dims[24];
        if (dv != p->head_dim) snprintf(dims, sizeof dims, "s %d/%d", p->head_dim, dv);
        else snprintf(dims, sizeof dims, " %d", p->head_dim);
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "hip: head dim%s not supported (32, 40, 64, 72, 80, 96, 112, 128, 192, 256, 512; Dk/Dv "
                        "192/128 and 576/512)",
                        dims);
    }
    cfg->dtype = p->dtype;
    cfg->head_dim = p->head_dim;
    cfg->head_dim_v = dv;
    /* a tuned file's entry or a tune candidate (core/tuning.h): exactly it, or why it cannot run */
    const avk_tuning *explicit_entry = o->variant ? NULL : avk_tuning_explicit();
    if (explicit_entry) {
        if (!parse_variant(explicit_entry->variant, cfg) ||
            (explicit_entry->dtype >= 0 && explicit_entry->dtype != (int)p->dtype))
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "hip: a %s entry cannot run this problem", explicit_entry->variant);
        cfg->br = explicit_entry->tile_br;
        cfg->bc = explicit_entry->tile_bc;
        cfg->threads = explicit_entry->workgroup_size;
        cfg->split = decode;
        attnvk_status s = check_config(info, cfg);
        if (s == ATTNVK_OK) avk_tuning_note(explicit_entry);
        return s;
    }
    const avk_tuning *e = lookup(info, p->dtype, p->head_dim, dv, decode);
    if (e) {
        parse_variant(e->variant, cfg);
        cfg->br = e->tile_br;
        cfg->bc = e->tile_bc;
        cfg->threads = e->workgroup_size;
    }
    if (o->variant && (!e || strcmp(o->variant, cfg->variant) != 0)) {
        if (!parse_variant(o->variant, cfg))
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "unknown hip variant '%s' (mma16, mma16-qs, simt)",
                            o->variant);
        variant_defaults(cfg, decode);
    } else if (!e) {
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "hip: no kernel configuration fits this device");
    }
    if (o->tile_br) cfg->br = o->tile_br;
    if (o->tile_bc) cfg->bc = o->tile_bc;
    cfg->split = decode;
    attnvk_status s = check_config(info, cfg);
    if (s == ATTNVK_OK) avk_tuning_note(e);
    return s;
}

/* `attnvk tune`'s candidates: rows, keys and threads of each body, kept where
 * avk_hip_select accepts them as an explicit entry */
int avk_hip_tuning_candidates(const attnvk_device_info *info, const attnvk_problem *p, int decode, avk_tuning *out,
                              int max)
{
    static const struct { const char *variant; int mma; } bodies[] = {{"mma16", 1}, {"mma16-qs", 1}, {"simt", 0}};
    static const int mma_rows[] = {32, 64, 128}, simt_rows[] = {8, 16, 32}, keys[] = {8, 16, 32, 64}, threads[] = {64, 128};
    const attnvk_kernel_options none = {0};
    avk_candidate_list list = {.out = out, .max = max};
    for (size_t v = 0; v < sizeof bodies / sizeof *bodies; ++v)
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 4; ++k)
                for (int t = 0; t < (bodies[v].mma ? 1 : 2); ++t) {
                    const avk_tuning e = {.dtype = (int)p->dtype, .decode = decode, .variant = bodies[v].variant,
                                          .tile_br = bodies[v].mma ? mma_rows[r] : simt_rows[r], .tile_bc = keys[k],
                                          .workgroup_size = threads[t]};
                    avk_hip_config c;
                    avk_pick_begin(&e, AVK_PICK_OPTION);
                    attnvk_status s = avk_hip_select(info, p, &none, decode, &c);
                    avk_pick_end();
                    avk_clear_error();
                    if (s == ATTNVK_OK) /* the resolved body, tiles and threads, once */
                        avk_candidate_add(&list, &e, (unsigned long long)v << 48 | (unsigned long long)c.br << 32 |
                                                         (unsigned long long)c.bc << 16 | (unsigned)c.threads);
                }
    return list.count;
}

int avk_hip_instances(const char *arch, const char *variant, avk_hip_config *out, int max)
{
    static const int dims[] = {32, 64, 80, 96, 128, 256};
    attnvk_device_info info;
    avk_hip_synthetic_device(arch, &info);
    attnvk_kernel_options none;
    memset(&none, 0, sizeof none);
    int n = 0;
    for (int decode = 0; decode < 2; ++decode)
        for (int dt = ATTNVK_F32; dt <= ATTNVK_BF16; ++dt)
            for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i) {
                attnvk_problem p;
                memset(&p, 0, sizeof p);
                p.head_dim = dims[i];
                p.dtype = (attnvk_dtype)dt;
                avk_hip_config c;
                if (avk_hip_select(&info, &p, &none, decode, &c) != ATTNVK_OK || strcmp(c.variant, variant) != 0)
                    continue;
                if (n < max) out[n] = c;
                ++n;
            }
    return n;
}

static const char *dtype_tag(attnvk_dtype d) { return d == ATTNVK_F32 ? "f32" : d == ATTNVK_F16 ? "f16" : "bf16"; }

void avk_hip_kernel_names(const avk_hip_config *c, char *fwd, char *reduce, size_t n)
{
    char tag[96], mod[16] = "";
    if (c->score_mod) snprintf(mod, sizeof mod, "_mod%d", c->score_mod);
    char dims[24]; /* d<Dk>, or d<Dk>v<Dv> */
    if (dim_v(c) != c->head_dim) snprintf(dims, sizeof dims, "d%dv%d", c->head_dim, dim_v(c));
    else snprintf(dims, sizeof dims, "d%d", c->head_dim);
    snprintf(tag, sizeof tag, "%s_%s_%s_%dx%d_t%d%s%s", c->mma ? (c->qreg ? "mma" : "mmaqs") : "simt", dims,
             dtype_tag(c->dtype), c->br, c->bc, c->threads, c->split ? "_split" : "", mod);
    if (fwd) snprintf(fwd, n, "avk_attn_fwd_%s", tag);
    if (reduce) snprintf(reduce, n, "avk_attn_reduce_%s", tag);
}

void avk_hip_config_defines(const avk_hip_config *c, char *out, size_t n)
{
    snprintf(out, n, "-DAVK_D=%d -DAVK_DV=%d -DAVK_DTYPE=%d -DAVK_BR=%d -DAVK_BC=%d -DAVK_THREADS=%d -DAVK_MMA=%d "
             "-DAVK_WM=%d -DAVK_QREG=%d -DAVK_SPLIT=%d -DAVK_SCORE_MOD=%d",
             c->head_dim, dim_v(c), (int)c->dtype, c->br, c->bc, c->threads, c->mma, c->mma ? 1 : 0, c->qreg, c->split,
             c->score_mod);
}

void avk_hip_default_variant(const attnvk_device_info *info, char *out, size_t n)
{
    attnvk_problem p;
    memset(&p, 0, sizeof p);
    p.head_dim = 128;
    p.dtype = info->fp16 ? ATTNVK_F16 : ATTNVK_F32;
    attnvk_kernel_options none;
    memset(&none, 0, sizeof none);
    avk_hip_config c;
    if (avk_hip_select(info, &p, &none, 0, &c) == ATTNVK_OK)
        snprintf(out, n, "%s %dx%d", c.variant, c.br, c.bc);
    else
        snprintf(out, n, "-");
}

const avk_tuning *avk_hip_rocblas_tuning(const attnvk_device_info *info, const attnvk_problem *p)
{
    avk_tuning_query q = {info, p->dtype, p->head_dim, avk_is_decode(p), NULL, NULL};
    return avk_tuning_lookup(rocblas_table, (int)(sizeof rocblas_table / sizeof *rocblas_table), &q);
}
