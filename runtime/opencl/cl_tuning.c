/* Kernels are data: tile sizes, work-group sizes, the reduction mode and the
 * variant come from this one table (vendor -> architecture -> device ->
 * default), overridable by the kernel options. */
#include "opencl/cl_tuning.h"

#include "core/error.h"
#include "contract/kernel_flags.h" /* AVK_MOD_* */
#include "core/kv_cache.h" /* avk_problem_features */
#include "core/layout.h"   /* avk_head_dim_v */
#include "core/split_plan.h" /* avk_is_decode */
#include "core/tuning.h"
#include "core/cache.h" /* avk_hash */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* extra[] per family -- tiled: {max head-dim columns per lane, reduction,
 * rows per lane, flags}; mma and mma-emu: {register cap, 0, 0, flags};
 * mma-decode and mma-decode-emu: {register cap, key warps, stages, flags}. */
enum { FLAG_NATIVE_EXP = 1, FLAG_NO_UNROLL = 2, FLAG_OPT_DISABLE = 4, FLAG_ASYNC = 8 };

static const avk_tuning cl_table[] = {
    /* vendor, architecture, device, dtype, D min..max, decode, family, Br, Bc, WG, extra */
    /* any device: shuffles where the device has them, else local memory */
    {NULL, NULL, NULL, -1, 0, 0, 0, "tiled", 0, 16, 128, {32, AVK_RED_AUTO, 2, 0}},
    {NULL, NULL, NULL, -1, 0, 0, 1, "tiled", 0, 32, 64, {32, AVK_RED_AUTO, 1, 0}},
    /* mma data flow on portable code: tests only, never picked by default */
    {NULL, NULL, NULL, ATTNVK_F16, 0, 0, -1, "mma-emu", 32, 16, 0, {0, 0, 0, FLAG_NO_UNROLL | FLAG_OPT_DISABLE}},
    /* mma-decode's data flow on portable code: 2 warps, 3 stages (ring wrap-around, warp merge) */
    {NULL, NULL, NULL, ATTNVK_F16, 0, 0, -1, "mma-decode-emu", 16, 32, 0, {0, 2, 3, FLAG_NO_UNROLL | FLAG_OPT_DISABLE}},
    /* CPU runtimes (PoCL): LLVM builds at run time, so small unrolled bodies */
    {NULL, "cpu", NULL, -1, 0, 0, -1, "tiled", 0, 8, 64, {32, AVK_RED_LOCAL, 1, FLAG_NO_UNROLL}},
    /* NVIDIA: tensor cores (cc >= 8) for f16; shuffles through PTX for the rest.
     * H100 (OpenCL 3.0, driver 580), N=4096 B=4 H=16 unless noted, TFLOP/s:
     * mma 64x64 D=128: 218 with cp.async+ldmatrix (105 without); D=64 197; D=256 (64x32) 215 */
    {"nvidia", NULL, NULL, ATTNVK_F16, 1, 128, 0, "mma", 64, 64, 0, {0, 0, 0, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    {"nvidia", NULL, NULL, ATTNVK_F16, 1, 128, 1, "mma", 16, 64, 0, {0, 0, 0, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    {"nvidia", NULL, NULL, ATTNVK_F16, 129, 256, -1, "mma", 64, 32, 0, {0, 0, 0, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    /* mma-decode (flash_decode.cl): picked by packed_decode below, or by name
     * (2 warps x 2 stages of 16 keys: 34 KiB for f16 D=128, within 48). 168
     * registers: 3 work-groups of 4 warps per SM (ptxas, sm_90, D=128 4 warps
     * uncapped: q8_0 247, f16 228, q4_0 223, fp8 173; at 168 q8_0 spills 108 B) */
    {"nvidia", NULL, NULL, ATTNVK_F16, 0, 0, -1, "mma-decode", 16, 16, 0, {168, 2, 2, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    /* tiled f32 (lanes per row from the column cap, rows per lane, cp.async tiles):
     * D=64: 2 lanes x 2 rows 35.2 (4 x 4: 32.2); D=128: 8 x 4, 256 items 29.9 (128 items 28.9,
     * 8 x 2 25.1, 4 x 2 26.6, no cp.async -7%); D=256: 16 x 4, 8-key tiles 26.4 */
    {"nvidia", NULL, NULL, -1, 1, 64, 0, "tiled", 0, 16, 128, {32, AVK_RED_NV, 2, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    {"nvidia", NULL, NULL, -1, 65, 96, 0, "tiled", 0, 16, 128, {24, AVK_RED_NV, 2, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    {"nvidia", NULL, NULL, -1, 97, 128, 0, "tiled", 0, 16, 256, {16, AVK_RED_NV, 4, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    {"nvidia", NULL, NULL, -1, 129, 256, 0, "tiled", 0, 8, 128, {16, AVK_RED_NV, 4, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    {"nvidia", NULL, NULL, -1, 0, 0, 1, "tiled", 0, 32, 64, {32, AVK_RED_NV, 1, FLAG_NATIVE_EXP | FLAG_ASYNC}},
    /* Intel GPUs: sub-group shuffles */
    {"intel", NULL, NULL, -1, 0, 0, -1, "tiled", 0, 16, 128, {16, AVK_RED_INTEL, 2, 0}},
    /* AMD: wave64, local-memory reductions unless the runtime has khr shuffles */
    {"advanced micro devices", NULL, NULL, -1, 0, 0, -1, "tiled", 0, 16, 256, {16, AVK_RED_AUTO, 2, 0}},
};
enum { CL_TABLE_SIZE = sizeof cl_table / sizeof *cl_table };

typedef struct usable_ctx {
    const avk_cl_caps *caps;
    const char *family; /* NULL: any but the emulation */
} usable_ctx;

static int entry_usable(const avk_tuning *e, const void *ctx_)
{
    const usable_ctx *ctx = ctx_;
    /* by default only tiled and mma: the emulations are for tests, and
     * mma-decode is chosen by packed_decode (or named) */
    if (ctx->family ? strcmp(e->variant, ctx->family) != 0
                    : strcmp(e->variant, "tiled") != 0 && strcmp(e->variant, "mma") != 0)
        return 0;
    if ((strcmp(e->variant, "mma") == 0 || strcmp(e->variant, "mma-decode") == 0) && !avk_cl_has_mma(ctx->caps)) return 0;
    if (strcmp(e->variant, "tiled") == 0) {
        if (e->extra[1] == AVK_RED_NV && !ctx->caps->is_nvidia) return 0;
        if (e->extra[1] == AVK_RED_INTEL && !ctx->caps->intel_subgroups) return 0;
        if (e->extra[1] == AVK_RED_KHR && !ctx->caps->khr_subgroup_shuffle) return 0;
    }
    return 1;
}

static const avk_tuning *lookup(const avk_cl_caps *caps, const attnvk_device_info *info, attnvk_dtype dtype,
                                int head_dim, int decode, const char *family)
{
    usable_ctx ctx = {caps, family};
    avk_tuning_query q = {info, dtype, head_dim, decode, entry_usable, &ctx};
    return avk_tuning_lookup(cl_table, CL_TABLE_SIZE, &q);
}

const char *avk_cl_default_variant(const avk_cl_caps *caps, const attnvk_device_info *info)
{
    const avk_tuning *e = lookup(caps, info, ATTNVK_F16, 128, 0, NULL);
    if (e) avk_tuning_note(e);
    return e && strcmp(e->variant, "mma") == 0 ? "mma-f16" : "tiled-f16";
}

/* ATTNVK_OPENCL_TUNE="ds=8,tm=2,wg=128,bc=16,reduce=1,maxreg=168" (and for
 * mma-decode "key_warps=4,stages=3,bc=32"): a developer knob for tuning
 * sweeps; it wins over the table, not the options. */
static void apply_tune_env(avk_cl_config *cfg, int *tm_fixed)
{
    const char *env = getenv("ATTNVK_OPENCL_TUNE");
    if (!env || !*env) return;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", env);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = '\0';
        int v = atoi(eq + 1);
        if (!strcmp(tok, "ds")) cfg->ds = v;
        else if (!strcmp(tok, "tm")) *tm_fixed = v;
        else if (!strcmp(tok, "wg")) cfg->wg = v;
        else if (!strcmp(tok, "bc")) cfg->bc = v;
        else if (!strcmp(tok, "br")) cfg->br = v;
        else if (!strcmp(tok, "reduce")) cfg->reduce = v;
        else if (!strcmp(tok, "maxreg")) cfg->max_registers = v;
        else if (!strcmp(tok, "nativeexp")) cfg->native_exp = v;
        else if (!strcmp(tok, "unroll")) cfg->unroll = v;
        else if (!strcmp(tok, "async")) cfg->async = v;
        else if (!strcmp(tok, "key_warps")) cfg->key_warps = v;
        else if (!strcmp(tok, "stages")) cfg->stages = v;
    }
}

/* Smallest power-of-two split of Dk and Dv whose lanes hold at most max_td
 * columns of either in whole float4s; failing that, the widest split that
 * divides both. */
static int pick_ds(int d, int dv, int max_td)
{
    int widest = 1;
    const int wider = d > dv ? d : dv;
    for (int ds = 1; ds <= 32; ds *= 2) {
        if (d % (4 * ds) || dv % (4 * ds)) continue;
        widest = ds;
        if (wider / ds <= max_td) return ds;
    }
    return widest;
}

static int resolve_reduce(const avk_cl_caps *caps, int mode)
{
    if (mode != AVK_RED_AUTO) return mode;
    if (caps->is_nvidia) return AVK_RED_NV;
    if (caps->intel_subgroups) return AVK_RED_INTEL;
    if (caps->khr_subgroup_shuffle) return AVK_RED_KHR;
    return AVK_RED_LOCAL;
}

static attnvk_status configure_tiled(const avk_cl_caps *caps, const avk_tuning *e, const attnvk_problem *p,
                                     const attnvk_kernel_options *opts, avk_cl_config *cfg)
{
    const int d = p->head_dim, dv = cfg->head_dim_v;
    if (d % 4 || dv % 4)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the OpenCL kernels need a head dim that is a multiple of 4 (got %d)",
                        d % 4 ? d : dv);
    int tm_fixed = 0;
    cfg->ds = pick_ds(d, dv, e->extra[0] > 0 ? e->extra[0] : 32);
    cfg->wg = e->workgroup_size;
    cfg->bc = e->tile_bc;
    cfg->reduce = e->extra[1];
    cfg->native_exp = (e->extra[3] & FLAG_NATIVE_EXP) != 0;
    cfg->unroll = !(e->extra[3] & FLAG_NO_UNROLL);
    cfg->async = (e->extra[3] & FLAG_ASYNC) != 0;
    apply_tune_env(cfg, &tm_fixed);
    cfg->key_warps = cfg->stages = 0;
    if (cfg->ds < 1 || d % (4 * cfg->ds) || dv % (4 * cfg->ds))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "tiled: %d lanes per row do not split D=%d and Dv=%d into float4s",
                        cfg->ds, d, dv);
    if (cfg->wg < cfg->ds || cfg->wg % cfg->ds)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "tiled: work-group %d is not a multiple of %d lanes per row",
                        cfg->wg, cfg->ds);
    const int tm_table = tm_fixed > 0 ? tm_fixed : (e->extra[2] > 0 ? e->extra[2] : 1);
    int br = opts->tile_br ? opts->tile_br : (cfg->br ? cfg->br : tm_table * (cfg->wg / cfg->ds));
    /* rows per lane: the table's, else the nearest that gives exactly br rows */
    static const int order[] = {0, -1, -2, -3, 1, 2, 3, 4, 5, 6};
    const size_t max_wg = caps->max_workgroup ? caps->max_workgroup : 256;
    int tm = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order && !tm; ++i) {
        int cand = tm_table + order[i];
        if (cand < 1 || cand > 8 || br % cand) continue;
        size_t wg = (size_t)(br / cand) * cfg->ds;
        if (wg <= max_wg && wg <= 1024) tm = cand;
    }
    if (!tm)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "tiled: tile_br %d does not fit a work-group for D=%d (%d lanes per row, at most %zu items)", br,
                        d, cfg->ds, max_wg);
    cfg->tm = tm;
    cfg->wg = (br / tm) * cfg->ds;
    cfg->br = br;
    if (opts->tile_bc) cfg->bc = opts->tile_bc;
    if (cfg->bc < 1 || cfg->bc > 256)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "tiled: tile_bc must be 1..256 (got %d)", cfg->bc);
    cfg->reduce = cfg->ds > 1 ? resolve_reduce(caps, cfg->reduce) : AVK_RED_LOCAL;
    if (cfg->reduce == AVK_RED_NV && (!caps->is_nvidia || (cfg->wg > 32 && cfg->wg % 32)))
        cfg->reduce = AVK_RED_LOCAL;
    if ((cfg->reduce == AVK_RED_INTEL && !caps->intel_subgroups) ||
        (cfg->reduce == AVK_RED_KHR && !caps->khr_subgroup_shuffle))
        cfg->reduce = AVK_RED_LOCAL;
    /* shuffles reach only lanes of one sub-group: the ds lanes of a row must
     * fit one of a size the device reports (8, 16, 32, 64); else local memory */
    if ((cfg->reduce == AVK_RED_INTEL || cfg->reduce == AVK_RED_KHR) &&
        (caps->subgroup_size <= 0 || cfg->ds > caps->subgroup_size))
        cfg->reduce = AVK_RED_LOCAL;
    /* async copies move f32 rows as they are: not for f16 storage */
    cfg->async = cfg->async && !cfg->f16 && cfg->kv_format == ATTNVK_KV_DTYPE ? (avk_cl_has_mma(caps) ? 1 : 2) : 0;
    /* small local memories (32 KiB): halve the table's key tile until it
     * fits (a tile the options name is kept, and refused below if too big);
     * a tile is K's Dk and V's Dv columns of bc keys, in f32 */
    const uint64_t kv_cols = (uint64_t)d + (uint64_t)dv;
    for (;;) {
        uint64_t reduce = cfg->reduce == AVK_RED_LOCAL && cfg->ds > 1 ? (uint64_t)cfg->wg * cfg->tm * cfg->bc * 4 : 0;
        if (opts->tile_bc || cfg->bc <= 4 || (uint64_t)cfg->bc * kv_cols * 4 + reduce <= caps->local_mem) break;
        cfg->bc /= 2;
    }
    uint64_t reduce_bytes = cfg->reduce == AVK_RED_LOCAL && cfg->ds > 1 ? (uint64_t)cfg->wg * cfg->tm * cfg->bc * 4 : 0;
    if (cfg->async && (uint64_t)2 * cfg->bc * kv_cols * 4 + reduce_bytes > caps->local_mem) cfg->async = 0;
    uint64_t local = (uint64_t)(cfg->async ? 2 : 1) * cfg->bc * kv_cols * 4 + reduce_bytes;
    if (local > caps->local_mem)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "tiled %dx%d at D=%d needs %llu bytes of local memory, device has %llu",
                        cfg->br, cfg->bc, d, (unsigned long long)local, (unsigned long long)caps->local_mem);
    snprintf(cfg->variant, sizeof cfg->variant, "tiled-%s", cfg->f16 ? "f16" : "f32");
    return ATTNVK_OK;
}

/* bytes of one K/V row of D values in a quantized format (contract.cl) */
static uint64_t kv_row_bytes(int kv_format, int d)
{
    switch (kv_format) {
    case ATTNVK_KV_Q8_0: return (uint64_t)d / 32 * 34;
    case ATTNVK_KV_Q4_0: return (uint64_t)d / 32 * 18;
    default: return (uint64_t)d;
    }
}

static attnvk_status configure_mma(const avk_cl_caps *caps, const avk_tuning *e, const attnvk_problem *p,
                                   const attnvk_kernel_options *opts, avk_cl_config *cfg)
{
    const int d = p->head_dim, dv = cfg->head_dim_v;
    if (!cfg->f16) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the mma variant runs f16 data only");
    if (d % 16 || dv % 16)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the mma variant needs D %% 16 == 0 (got %d)", d % 16 ? d : dv);
    /* a warp's Q fragments and O accumulators stay in registers */
    if (d > 256 || dv > 256)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the mma variant takes head dims up to 256 (got %d/%d)", d, dv);
    int tm_unused = 0;
    cfg->br = e->tile_br;
    cfg->bc = e->tile_bc;
    cfg->max_registers = e->extra[0];
    cfg->native_exp = (e->extra[3] & FLAG_NATIVE_EXP) != 0;
    cfg->unroll = !(e->extra[3] & FLAG_NO_UNROLL) && !cfg->emulate;
    /* CPU runtimes only: NVIDIA's compiler then leaves C99 `inline` helpers
     * undefined ("Unresolved extern function"), as seen on the H100 */
    cfg->opt_disable = (e->extra[3] & FLAG_OPT_DISABLE) && (caps->type & CL_DEVICE_TYPE_CPU);
    cfg->async = (e->extra[3] & FLAG_ASYNC) != 0;
    apply_tune_env(cfg, &tm_unused);
    cfg->key_warps = cfg->stages = 0; /* mma-decode knobs: not this body */
    if (opts->tile_br) cfg->br = opts->tile_br;
    if (opts->tile_bc) cfg->bc = opts->tile_bc;
    if (cfg->br < 16 || cfg->br > 256 || cfg->br % 16)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mma: tile_br must be a multiple of 16 in 16..256 (got %d)", cfg->br);
    if (cfg->bc < 16 || cfg->bc > 256 || cfg->bc % 16)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mma: tile_bc must be a multiple of 16 in 16..256 (got %d)", cfg->bc);
    cfg->wg = cfg->br / 16 * 32;
    cfg->ds = cfg->tm = 1;
    if ((size_t)cfg->wg > (caps->max_workgroup ? caps->max_workgroup : 256))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mma: %d warps exceed the device's work-group limit", cfg->br / 16);
    /* async: cp.async + ldmatrix in PTX, or emulated along with the mma;
     * quantized caches: raw K and V tiles plus one decoded f16 tile */
    cfg->async = cfg->async ? (cfg->emulate ? 2 : 1) : 0;
    /* flash_mma.cl's tiles: K of Dk columns, V (transposed in the sync path) of Dv */
    int kw = d / 2 + (24 - (d / 2) % 16) % 16, vw = cfg->bc / 2 + (24 - (cfg->bc / 2) % 16) % 16;
    const uint64_t raw_tile = ((uint64_t)cfg->bc * kv_row_bytes(cfg->kv_format, d) + 15) / 16 * 16;
    uint64_t local = !cfg->async ? (uint64_t)cfg->bc * kw * 4 + (uint64_t)dv * vw * 4
                     : cfg->kv_format != ATTNVK_KV_DTYPE ? 2 * raw_tile + (uint64_t)cfg->bc * (d + 8) * 2
                                                         : (uint64_t)cfg->bc * (d + 8 + dv + 8) * 2;
    if (cfg->async) local += (uint64_t)2 * cfg->bc * 4; /* the K/V rows of two tiles (mma_ops.cl avk_read_rows) */
    if (cfg->emulate) local += (uint64_t)(cfg->br / 16) * (256 + 128) * 4 + (uint64_t)cfg->wg * 4;
    if (local > caps->local_mem)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "mma %dx%d at D=%d needs %llu bytes of local memory, device has %llu",
                        cfg->br, cfg->bc, d, (unsigned long long)local, (unsigned long long)caps->local_mem);
    /* an f16 mask whose rows are whole 16-byte chunks (Nk % 8 == 0) rides the async copies: its
     * tile [br][bc + 8 halves] and the rows' offsets, where they fit beside K and V */
    const uint64_t mask_tile = (uint64_t)cfg->br * (cfg->bc + 8) * 2 + (uint64_t)cfg->br * 8;
    int mask_on, alibi_on;
    attnvk_status s = avk_env_switch("ATTNVK_OPENCL_MASK_LOCAL", 1, &mask_on);
    if (s == ATTNVK_OK) s = avk_env_switch("ATTNVK_OPENCL_ALIBI_MMA", 0, &alibi_on);
    if (s != ATTNVK_OK) return s;
    cfg->mask_local = mask_on && cfg->async && p->mask && p->mask_dtype == ATTNVK_F16 && p->seq_kv % 8 == 0 &&
                      !cfg->patterns && local + mask_tile <= caps->local_mem;
    /* ALiBi without a softcap: ATTNVK_OPENCL_ALIBI_MMA=1 takes its key term as one more k-step of
     * S's MMAs and its row term once a tile (flash_mma.cl's AVK_ALIBI_MMA), an A/B: H100 (s43c, D=128
     * 8k causal) 167.9 / 166.9 TFLOP/s per score, 166.3 / 166.3 with it (the MMAs cost what the
     * multiply-adds did) */
    cfg->alibi_mma = alibi_on && p->alibi && !(p->softcap > 0.0f);
    snprintf(cfg->variant, sizeof cfg->variant, cfg->emulate ? "mma-f16-emu" : "mma-f16");
    return ATTNVK_OK;
}

/* mma-decode: local memory of flash_decode.cl (its rings, or the warps'
 * merge that reuses them, plus the emulation's scratch) */
uint64_t avk_cl_decode_local_bytes(const avk_cl_config *c)
{
    const int dv = c->head_dim_v > 0 ? c->head_dim_v : c->head_dim;
    const uint64_t row = c->kv_format != ATTNVK_KV_DTYPE ? kv_row_bytes(c->kv_format, c->head_dim) : (uint64_t)c->head_dim * 2;
    const uint64_t raw_row = row % 32 == 0 ? row + 16 : row; /* DEC_RAW_ROW */
    const uint64_t row_v = (uint64_t)dv * 2; /* V rows of Dv values (f16 caches only), padded alike */
    const uint64_t raw_row_v = dv == c->head_dim ? raw_row : row_v % 32 == 0 ? row_v + 16 : row_v;
    const uint64_t rings = (uint64_t)c->key_warps * c->stages * c->bc * (raw_row + raw_row_v);
    const uint64_t merge = (uint64_t)c->key_warps * 16 * (dv + 2) * 4;
    uint64_t local = rings > merge ? rings : merge; /* both multiples of 16: the kernel's uint4 array */
    if (c->emulate) local += (uint64_t)c->key_warps * (256 + 128) * 4 + (uint64_t)c->wg * 8;
    return local;
}

static attnvk_status configure_decode(const avk_cl_caps *caps, const avk_tuning *e, const attnvk_problem *p,
                                      const attnvk_kernel_options *opts, avk_cl_config *cfg)
{
    const int d = p->head_dim, dv = cfg->head_dim_v;
    if (!cfg->f16) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the mma-decode variant runs f16 data only");
    /* Q's fragments (Dk) and O's accumulators (Dv) live in registers: equal
     * head dims up to 128, and MLA's 192/128 */
    if (d % 16 || dv % 16 || dv > 128 || d > 192)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "mma-decode takes head dims that are multiples of 16 up to 128 (K's up to 192; got %d/%d)", d,
                        dv);
    int tm_unused = 0;
    cfg->br = 16;
    cfg->bc = e->tile_bc;
    cfg->key_warps = e->extra[1] > 0 ? e->extra[1] : 4;
    cfg->stages = e->extra[2] > 0 ? e->extra[2] : 2;
    cfg->max_registers = e->extra[0];
    cfg->native_exp = (e->extra[3] & FLAG_NATIVE_EXP) != 0;
    cfg->unroll = !(e->extra[3] & FLAG_NO_UNROLL) && !cfg->emulate;
    cfg->opt_disable = (e->extra[3] & FLAG_OPT_DISABLE) && (caps->type & CL_DEVICE_TYPE_CPU);
    apply_tune_env(cfg, &tm_unused);
    if (opts->tile_br) cfg->br = opts->tile_br;
    if (opts->tile_bc) cfg->bc = opts->tile_bc;
    if (cfg->br != 16 || (cfg->bc != 16 && cfg->bc != 32))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mma-decode needs tile_br 16 and tile_bc 16 or 32 (got %dx%d)",
                        cfg->br, cfg->bc);
    if (cfg->key_warps < 1 || cfg->key_warps > 8 || cfg->stages < 2 || cfg->stages > 6)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mma-decode needs 1-8 key warps and 2-6 stages (got %d, %d)",
                        cfg->key_warps, cfg->stages);
    cfg->wg = 32 * cfg->key_warps;
    cfg->ds = cfg->tm = 1;
    cfg->async = cfg->emulate ? 2 : 1;
    if ((size_t)cfg->wg > (caps->max_workgroup ? caps->max_workgroup : 256))
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "mma-decode: %d warps exceed the device's work-group limit",
                        cfg->key_warps);
    const uint64_t local = avk_cl_decode_local_bytes(cfg);
    if (local > caps->local_mem)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "mma-decode 16x%d, %d warps x %d stages at D=%d (%s) needs %llu bytes of local memory, device "
                        "has %llu",
                        cfg->bc, cfg->key_warps, cfg->stages, d, attnvk_kv_format_name(p->kv_format),
                        (unsigned long long)local, (unsigned long long)caps->local_mem);
    snprintf(cfg->variant, sizeof cfg->variant, cfg->emulate ? "mma-decode-emu" : "mma-decode");
    return ATTNVK_OK;
}

static attnvk_status configure_tensor(const avk_cl_caps *caps, const avk_tuning *e, const attnvk_problem *p,
                                      const attnvk_kernel_options *opts, avk_cl_config *cfg)
{
    cfg->family = AVK_CL_MMA;
    cfg->emulate = !strcmp(e->variant, "mma-emu") || !strcmp(e->variant, "mma-decode-emu");
    return !strncmp(e->variant, "mma-decode", 10) ? configure_decode(caps, e, p, opts, cfg)
                                                   : configure_mma(caps, e, p, opts, cfg);
}

/* Decode with GQA packing: the row tile follows the packed rows (pack * Nq),
 * not Nq, so a kv head's whole group shares each K/V tile. The first entry
 * that fits the rows and the kv format, and whose kernel builds on the
 * device, wins; a variant named in the options keeps its kernel and takes
 * the tiles of its entries. Local memory caps mma-decode at 48 KiB on
 * NVIDIA (no opt-in from OpenCL): q8_0 D=128 rows are 136 bytes, so 4 warps
 * x 2 stages fit 16-key tiles; q4_0's 72-byte rows fit 32. An f16 cache
 * takes one warp with two 32-key stages: CUDA's mma16 16x32 (2832 GB/s,
 * 0.93x cuDNN) is that pipeline, K and V of the next tile in flight during
 * the whole tile, where mma-f16 copies K and V single-buffered, between
 * barriers. 4 warps x 168 registers: 3 work-groups per SM; one warp needs no cap.
 * H100 (B=8, H=32, H_kv=8, D=128, Nq=1, bench/results/decode-2026-11-24): f16
 * at Nk=16k mma-decode 1x2 2603 GB/s (mma-f16 16x32 2395; cuDNN 2833); q8_0 at
 * 64k 0.564 ms with 5 splits, 0.468 with 10 (resident 2 plans 9), q4_0 0.419,
 * fp8 0.438; paged f16 (16, shuffled) 0.395 ms vs 0.387 contiguous. Session 10,
 * Nq=16 at 32k (64 rows, mma-f16 64x64, 2 work-groups per SM): 4 splits
 * 0.424 ms, 8 0.434, 5 (one resident, not whole waves) 0.600. Session 14, the
 * quantized entries planned for 3 resident in whole waves (396 slots): q4_0 64k
 * 0.372 ms with 9 splits (2 resident), 0.335 with 12 (sweep-s14-vkq). Sessions 20
 * and 21, whole waves: q4_0 64k 0.318 ms with 4 splits (2 resident) against 6's 0.338-0.340
 * (3 resident); q8_0 keeps 3 (6 splits 0.467, 4 0.487; sweep-s20-splits, sweep-s21-decode). */
static const struct {
    int max_rows;
    int kv_format; /* -1: any */
    int packed_only; /* 1: GQA-packed rows only (pack > 1) */
    const char *family;
    int br, bc, key_warps, stages;
    int max_registers; /* -1: the tuning entry's */
    int resident;      /* work-groups per SM the split plan fills: 168 registers x 4 warps run 3 */
    int whole_waves;   /* splits in whole waves (a partial last wave is pure tail) */
} packed_decode[] = {
    {16, ATTNVK_KV_Q8_0, 0, "mma-decode", 16, 16, 4, 2, 168, 3, 1},
    {16, ATTNVK_KV_Q4_0, 0, "mma-decode", 16, 32, 4, 2, 168, 2, 1},
    {16, ATTNVK_KV_FP8, 0, "mma-decode", 16, 16, 4, 2, 168, 3, 1},
    {16, ATTNVK_KV_DTYPE, 1, "mma-decode", 16, 32, 1, 2, 0, 1, 0},
    {16, -1, 1, "mma", 16, 32, 0, 0, -1, 1, 0},
    {1 << 30, -1, 1, "mma", 64, 64, 0, 0, -1, 2, 1},
};

/* 1 when a packed_decode entry configured cfg */
static int route_packed_decode(const avk_cl_caps *caps, const attnvk_device_info *info, const attnvk_problem *p,
                               const attnvk_kernel_options *opts, int pack, const char *family, avk_cl_config *cfg)
{
    const int64_t rows = (int64_t)pack * p->seq_q;
    for (size_t i = 0; i < sizeof packed_decode / sizeof *packed_decode; ++i) {
        const int fmt = packed_decode[i].kv_format;
        if (rows > packed_decode[i].max_rows || (fmt >= 0 && fmt != (int)p->kv_format)) continue;
        if ((packed_decode[i].packed_only && pack <= 1) || (family && strcmp(family, packed_decode[i].family))) continue;
        const avk_tuning *e = lookup(caps, info, p->dtype, p->head_dim, 1, packed_decode[i].family);
        if (!e) continue;
        avk_tuning packed = *e;
        packed.tile_br = packed_decode[i].br;
        packed.tile_bc = packed_decode[i].bc;
        if (packed_decode[i].key_warps) {
            packed.extra[1] = packed_decode[i].key_warps;
            packed.extra[2] = packed_decode[i].stages;
        }
        if (packed_decode[i].max_registers >= 0) packed.extra[0] = packed_decode[i].max_registers;
        avk_cl_config trial = *cfg;
        if (configure_tensor(caps, &packed, p, opts, &trial) == ATTNVK_OK) {
            avk_tuning_note(e);
            *cfg = trial;
            cfg->resident = packed_decode[i].resident;
            cfg->whole_waves = packed_decode[i].whole_waves;
            return 1;
        }
        avk_clear_error(); /* say D=256 for mma-decode: the next entry */
    }
    return 0;
}

/* A tuned file's entry or a tune candidate (core/tuning.h): exactly that configuration
 * (no packed-decode routing), or why it cannot run. */
static attnvk_status configure_explicit(const avk_cl_caps *caps, const attnvk_device_info *info,
                                        const attnvk_problem *p, const attnvk_kernel_options *opts,
                                        const avk_tuning *e, avk_cl_config *cfg)
{
    const usable_ctx ctx = {caps, e->variant};
    const int tensor = !strcmp(e->variant, "mma") || !strcmp(e->variant, "mma-decode");
    if ((!tensor && strcmp(e->variant, "tiled")) || !entry_usable(e, &ctx) || (e->dtype >= 0 && e->dtype != (int)p->dtype))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "opencl: a %s %s entry cannot run on %s", e->variant,
                        attnvk_dtype_name(p->dtype), info->name);
    if (tensor && !cfg->f16) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "opencl: %s runs f16 data only", e->variant);
    attnvk_status s;
    if (tensor) {
        s = configure_tensor(caps, e, p, opts, cfg);
    } else {
        cfg->family = AVK_CL_TILED;
        s = configure_tiled(caps, e, p, opts, cfg);
    }
    if (s == ATTNVK_OK) avk_tuning_note(e);
    return s;
}

attnvk_status avk_cl_configure(const avk_cl_caps *caps, const attnvk_device_info *info, const attnvk_problem *p,
                               const attnvk_kernel_options *opts, int pack, avk_cl_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kv_format = (int)p->kv_format;
    if (p->dtype == ATTNVK_BF16) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the OpenCL backend has no bf16 kernels");
    cfg->head_dim = p->head_dim;
    cfg->head_dim_v = avk_head_dim_v(p);
    cfg->f16 = p->dtype == ATTNVK_F16;
    const char *family = NULL;
    if (opts->variant) {
        static const struct { const char *name, *family; int f16, emulate; } names[] = {
            {"tiled-f32", "tiled", 0, 0},         {"tiled-f16", "tiled", 1, 0},
            {"mma-f16", "mma", 1, 0},             {"mma-f16-emu", "mma-emu", 1, 1},
            {"mma-decode", "mma-decode", 1, 0}, {"mma-decode-emu", "mma-decode-emu", 1, 1}};
        for (size_t i = 0; i < sizeof names / sizeof *names && !family; ++i) {
            if (strcmp(opts->variant, names[i].name)) continue;
            if (names[i].f16 != cfg->f16)
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "variant %s runs %s data; the problem is %s",
                                opts->variant, names[i].f16 ? "f16" : "f32", attnvk_dtype_name(p->dtype));
            family = names[i].family;
            cfg->emulate = names[i].emulate;
        }
        if (!family)
            return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                            "unknown OpenCL variant '%s' (tiled-f32, tiled-f16, mma-f16, mma-f16-emu, mma-decode, "
                            "mma-decode-emu)",
                            opts->variant);
        if ((!strcmp(family, "mma") || !strcmp(family, "mma-decode")) && !avk_cl_has_mma(caps))
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "%s needs an NVIDIA GPU of compute capability >= 8.0",
                            opts->variant);
    }
    const avk_tuning *explicit_entry = opts->variant ? NULL : avk_tuning_explicit();
    /* every body runs the score features through the contract's hooks (the
     * value modifications and, in decode, a left window's masks and the sinks
     * built in only where the problem has them) and separate Dk/Dv; a body
     * refuses head dims it cannot hold and the next one is tried */
    const int decode = avk_is_decode(p);
    const unsigned features = avk_problem_features(p);
    /* sparse patterns (#20): the tiled body tests them per score, mma-f16 also skips the tiles no row
     * of a work-group sees (contract.cl's avk_next_visible_tile); the decode bodies not yet */
    if (features & (ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED)) {
        if (family && strcmp(family, "tiled") && strcmp(family, "mma") && strcmp(family, "mma-emu"))
            return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                            "%s does not take sparse patterns yet (tiled-f32, tiled-f16, mma-f16 do)", opts->variant);
        if (!family && decode) family = "tiled";
    }
    cfg->score_mod = (features & (AVK_SCORE_MOD_FEATURES | ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED)) != 0;
    cfg->score_bounds = (features & (ATTNVK_FEATURE_WINDOW | ATTNVK_FEATURE_SINKS)) != 0;
    cfg->patterns = (features & (ATTNVK_FEATURE_BLOCK_SPARSE | ATTNVK_FEATURE_DILATED)) != 0;
    cfg->score_hooks = (int)(avk_score_mod_bits(p) & (AVK_MOD_SOFTCAP | AVK_MOD_ALIBI | AVK_MOD_MASK));
    attnvk_status hs = avk_env_switch("ATTNVK_OPENCL_HOOK_MODS", 1, &cfg->hook_mods_only);
    if (hs != ATTNVK_OK) return hs;
    cfg->pos_offset = (features & ATTNVK_FEATURE_POSITION_OFFSET) != 0;
    if (explicit_entry) return configure_explicit(caps, info, p, opts, explicit_entry, cfg);
    /* the table's head-dim ranges bound the wider of K and V's rows */
    const int dims = p->head_dim > cfg->head_dim_v ? p->head_dim : cfg->head_dim_v;
    const avk_tuning *e = lookup(caps, info, p->dtype, dims, decode, family);
    if (!e && !family) e = lookup(caps, info, p->dtype, dims, decode, "tiled");
    if (!e) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "no OpenCL tuning entry fits this device and problem");
    /* mma's k-steps and paired n-tiles are 16 wide: other head dims go to
     * tiled, unless --variant asked for mma (then configure_mma refuses them) */
    if (!family && !strcmp(e->variant, "mma") && (p->head_dim % 16 || cfg->head_dim_v % 16))
        e = lookup(caps, info, p->dtype, dims, decode, "tiled");
    attnvk_status s;
    if (!strcmp(e->variant, "tiled")) {
        cfg->family = AVK_CL_TILED;
        s = configure_tiled(caps, e, p, opts, cfg);
    } else {
        const int emulated = !strcmp(e->variant, "mma-emu") || !strcmp(e->variant, "mma-decode-emu");
        if (decode && !emulated && route_packed_decode(caps, info, p, opts, pack, family, cfg)) return ATTNVK_OK;
        s = configure_tensor(caps, e, p, opts, cfg);
    }
    if (s == ATTNVK_OK) avk_tuning_note(e);
    return s;
}

void avk_cl_build_options(const avk_cl_config *cfg, char *out, size_t n)
{
    int len;
    if (cfg->family == AVK_CL_TILED)
        len = snprintf(out, n, "-cl-std=CL1.2 -DAVK_D=%d -DAVK_DV=%d -DAVK_F16=%d -DAVK_NATIVE_EXP=%d -DAVK_UNROLL=%d "
                               "-DAVK_ASYNC=%d -DAVK_WG=%d -DAVK_DS=%d -DAVK_TM=%d -DAVK_BC=%d -DAVK_REDUCE=%d "
                               "-DAVK_KV_FORMAT=%d",
                       cfg->head_dim, cfg->head_dim_v > 0 ? cfg->head_dim_v : cfg->head_dim, cfg->f16, cfg->native_exp,
                       cfg->unroll, cfg->async, cfg->wg, cfg->ds, cfg->tm, cfg->bc, cfg->reduce, cfg->kv_format);
    else
        len = snprintf(out, n, "-cl-std=CL1.2 -DAVK_D=%d -DAVK_F16=1 -DAVK_NATIVE_EXP=%d -DAVK_UNROLL=%d -DAVK_ASYNC=%d "
                               "-DAVK_NW=%d -DAVK_BC=%d -DAVK_EMULATE=%d -DAVK_KV_FORMAT=%d -DAVK_KEY_WARPS=%d "
                               "-DAVK_STAGES=%d -DAVK_SCORE_MOD=%d",
                       cfg->head_dim, cfg->native_exp, cfg->unroll, cfg->async,
                       cfg->key_warps ? cfg->key_warps : cfg->br / 16, cfg->bc, cfg->emulate, cfg->kv_format,
                       cfg->key_warps, cfg->stages, cfg->score_mod);
    /* only where they differ from the defaults, so plain programs keep their options (and cache keys) */
    if (cfg->family != AVK_CL_TILED && cfg->head_dim_v > 0 && cfg->head_dim_v != cfg->head_dim && len > 0 &&
        (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, " -DAVK_DV=%d", cfg->head_dim_v);
    if (cfg->key_warps && cfg->score_bounds && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, " -DAVK_SCORE_BOUNDS=1");
    if (cfg->pos_offset && len > 0 && (size_t)len < n) len += snprintf(out + len, n - (size_t)len, " -DAVK_POS_OFFSET=1");
    if (cfg->mask_local && len > 0 && (size_t)len < n) len += snprintf(out + len, n - (size_t)len, " -DAVK_MASK_LOCAL=1");
    if (cfg->alibi_mma && len > 0 && (size_t)len < n) len += snprintf(out + len, n - (size_t)len, " -DAVK_ALIBI_MMA=1");
    /* the tile search's barriers in loops slow PoCL's compiler: only programs that take a pattern carry them */
    if (cfg->patterns && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, " -DAVK_PATTERN_SEARCH=1");
    /* a pattern alone: the mma bodies leave out the score hook's softcap, ALiBi and mask (their row
     * inputs held registers through the tile loop) */
    if (cfg->family != AVK_CL_TILED && cfg->patterns && !cfg->score_hooks && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, " -DAVK_PATTERN_ONLY=1");
    /* and the hook carries only the problem's modifications (mma_ops.cl's AVK_HOOK_MODS): H100 D=128 mma-f16,
     * ptxas on clang's PTX (tools/opencl-ptxas), softcap alone 238 registers against 255 with all three */
    if (cfg->family != AVK_CL_TILED && cfg->score_hooks && cfg->hook_mods_only && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, " -DAVK_HOOK_MODS=%d", cfg->score_hooks);
    if (cfg->max_registers > 0 && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, " -cl-nv-maxrregcount=%d", cfg->max_registers);
    if (cfg->opt_disable && len > 0 && (size_t)len < n) snprintf(out + len, n - (size_t)len, " -cl-opt-disable");
}

/* ---- `attnvk tune`'s candidates: grids over the table's knobs, kept where the
 * configuration checks above accept them ---- */

typedef struct grid_ctx {
    const avk_cl_caps *caps;
    const attnvk_device_info *info;
    const attnvk_problem *p;
    int pack;
    avk_candidate_list *list;
} grid_ctx;

static void try_entry(const avk_tuning *e, void *vctx)
{
    grid_ctx *g = vctx;
    const attnvk_kernel_options none = {0};
    avk_cl_config cfg;
    avk_pick_begin(e, AVK_PICK_OPTION);
    attnvk_status s = avk_cl_configure(g->caps, g->info, g->p, &none, g->pack, &cfg);
    avk_pick_end();
    avk_clear_error();
    if (s == ATTNVK_OK) avk_candidate_add(g->list, e, avk_hash(&cfg, sizeof cfg, 0)); /* one program each */
}

int avk_cl_tuning_candidates(const avk_cl_caps *caps, const attnvk_device_info *info, const attnvk_problem *p,
                             int pack, avk_tuning *out, int max)
{
    avk_candidate_list list = {.out = out, .max = max};
    grid_ctx ctx = {caps, info, p, pack, &list};
    const int decode = avk_is_decode(p);
    avk_tuning_grid g = {.base = {.dtype = (int)p->dtype, .decode = decode, .variant = "tiled"}};
    /* tiled: keys per tile, work-group, columns per lane, reduction, rows per lane, code flags */
    AVK_GRID_AXIS(&g, AVK_AXIS_BC, 8, 16, 32, 64);
    AVK_GRID_AXIS(&g, AVK_AXIS_WG, 32, 64, 128, 256);
    AVK_GRID_AXIS(&g, AVK_AXIS_X0, 8, 16, 32);
    AVK_GRID_AXIS(&g, AVK_AXIS_X1, AVK_RED_AUTO, AVK_RED_LOCAL);
    AVK_GRID_AXIS(&g, AVK_AXIS_X2, 1, 2, 4);
    AVK_GRID_AXIS(&g, AVK_AXIS_X3, 0, FLAG_NO_UNROLL, FLAG_NATIVE_EXP | FLAG_ASYNC);
    avk_tuning_grid_each(&g, try_entry, &ctx);
    if (p->dtype == ATTNVK_F16 && avk_cl_has_mma(caps)) {
        g = (avk_tuning_grid){.base = {.dtype = (int)p->dtype, .decode = decode, .variant = "mma"}};
        AVK_GRID_AXIS(&g, AVK_AXIS_BR, 16, 32, 64, 128);
        AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32, 64);
        AVK_GRID_AXIS(&g, AVK_AXIS_X0, 0, 168, 255);
        AVK_GRID_AXIS(&g, AVK_AXIS_X3, FLAG_NATIVE_EXP | FLAG_ASYNC, FLAG_NATIVE_EXP);
        avk_tuning_grid_each(&g, try_entry, &ctx);
        if (decode) { /* keys per tile, register cap, key warps, stages */
            g = (avk_tuning_grid){.base = {.dtype = (int)p->dtype, .decode = 1, .variant = "mma-decode", .tile_br = 16}};
            AVK_GRID_AXIS(&g, AVK_AXIS_BC, 16, 32);
            AVK_GRID_AXIS(&g, AVK_AXIS_X0, 0, 168);
            AVK_GRID_AXIS(&g, AVK_AXIS_X1, 1, 2, 4, 8);
            AVK_GRID_AXIS(&g, AVK_AXIS_X2, 2, 3, 4);
            AVK_GRID_AXIS(&g, AVK_AXIS_X3, FLAG_NATIVE_EXP | FLAG_ASYNC);
            avk_tuning_grid_each(&g, try_entry, &ctx);
        }
    }
    return list.count;
}
