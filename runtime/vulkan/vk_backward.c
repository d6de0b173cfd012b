/* The Vulkan backward pass (issue #18): shaders/flash_bwd_*.comp, three passes
 * as the CUDA backward's (runtime/cuda/cuda_backward.c) in one submission:
 * pre (D_i and the LSE in log2 per row, the sink shares), dK/dV per key block
 * over the group's query heads, dQ per query block, then d(sink) summed in a
 * fixed order. No atomics by default: runs are bit-identical; the matrix body
 * may add dQ by f32 atomics in dK/dV instead (ATTNVK_VK_BWD_DQ=atomic), the dQ
 * pass then only casting that workspace to f16. dK/dV and dQ run the
 * portable body (f32 tiles in shared memory, no subgroup operations or matrix
 * units) or, in f16 where the device has cooperative matrices, the matrix body
 * (shaders/flash_bwd_cm_body.glsl). */
#include "vulkan/vk_backward.h"
#include "core/kv_cache.h" /* avk_problem_features */
#include "core/layout.h"   /* avk_head_dim_v */
#include "core/tuning.h"   /* avk_env_tiles */
#include "vulkan/vk_shaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* keep x stream pairs, largest first: the first whose shared memory fits the
 * device (lavapipe 32 KiB, NVIDIA 48 KiB, the Vulkan minimum 16 KiB: D 256 at 4 x 2). With a
 * workgroup of 128 a thread owns keep * D / 512 vec4s of dK and of dV (or dQ):
 * 4 at the usual picks (D 64: 32 keys, D 128: 16, D 256: 8). Not yet tuned on a GPU. */
static const struct {
    uint32_t keep, stream;
} tile_table[] = {{32, 32}, {32, 16}, {16, 16}, {16, 8}, {8, 8}, {8, 4}, {4, 4}, {4, 2}};

/* Every pass's workgroup: 128 is the least maxComputeWorkGroupInvocations (and
 * size x) Vulkan allows, so it fits everywhere; a power of two (the sink sum's tree). */
enum { BWD_WG = 128 };

/* flash_bwd_tiles.glsl's shared arrays for q_rows query rows and k_rows keys (dK/dV:
 * stream x keep, dQ: keep x stream): padded vec4 rows of Q/K (Dk) and dO/V (Dv), P and
 * dS, the rows' (LSE, D_i) */
static uint32_t tiles_shared(uint32_t q_rows, uint32_t k_rows, uint32_t dk, uint32_t dv)
{
    return (q_rows + k_rows) * (dk / 4 + 1 + dv / 4 + 1) * 16 + 2 * q_rows * (k_rows + 1) * 4 + q_rows * 8;
}

static attnvk_status portable_select(const vk_caps *c, const attnvk_problem *p, vk_bwd_tiles *out)
{
    const uint32_t dk = (uint32_t)p->head_dim, dv = (uint32_t)avk_head_dim_v(p);
    if (dk % 4 || dv % 4)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: the backward pass takes head dims that are multiples of 4 (got %u/%u)",
                        dk, dv);
    const uint32_t limit = c->props.limits.maxComputeSharedMemorySize;
    for (size_t i = 0; i < sizeof tile_table / sizeof *tile_table; ++i) {
        const uint32_t keep = tile_table[i].keep, stream = tile_table[i].stream;
        const uint32_t dkdv = tiles_shared(stream, keep, dk, dv), dq = tiles_shared(keep, stream, dk, dv);
        const uint32_t need = dkdv > dq ? dkdv : dq;
        if (need > limit) continue;
        *out = (vk_bwd_tiles){.body = VK_BWD_PORTABLE, .keep = keep, .stream = stream, .wg = BWD_WG, .dq_keep = keep,
                              .dq_stream = stream, .dq_wg = BWD_WG, .shared_bytes = need,
                              .unroll = c->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU};
        return ATTNVK_OK;
    }
    return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                    "vulkan: the backward pass's smallest tiles for head dims %u/%u need %u bytes of shared memory; the device has %u",
                    dk, dv, tiles_shared(4, 2, dk, dv), limit);
}

/* The matrix body's tiles by head dim (the larger of Dk, Dv), best first: subgroups a
 * workgroup (MS kept rows each) and streamed rows a tile, for dK/dV and for dQ; the first
 * whose workgroups and shared memory fit the device. H100, KHR, f16 B=4 N=4k H*D=2048,
 * backward TFLOP/s (bench/results/vulkan-2026-12-06-s32): D=64 both passes 8x32 74.2, 8x16
 * 62.8, 4x32 49.2, 2x32 49.5; dQ apart (dK/dV 8x32): 4x16 78.6, 8x16 69.5, 4x32 59.6;
 * D=128 both 4x16 91.9, 8x16 85.5, 4x32 70.9, 2x16 69.3; dQ apart (dK/dV 4x16): 8x16 89.9,
 * 2x16 83.2, 4x32 79.7, 2x32 53.6 (dK/dV keeps K, V, dK and dV in registers: wider tiles spill).
 * With dQ by atomics (`atomic`; dK/dV's tiles only), s34a: D=64 4x16 84.1 (the dQ pass's
 * 78.6 in the same call), 4x32 51.1; D=128 4x16 53.2 with K's matrices held in registers
 * (kept_x_shared 0): 48 ms in dK/dV against 9.2 + 6.2 for the two passes. Those were with P and
 * dS staged; with them in registers (s37) the D=64 dQ pass's 8x32 / 4x16 makes 103.7 against the
 * atomics' 83.2, so by_default applies to staged scores only (vk_bwd_select). */
enum { DQ_PASS, DQ_ATOMIC, DQ_AUTO }; /* a row's dQ: its own pass or atomics; asked: either, the table's pick */
static const struct {
    uint32_t max_dim, nsg, stream, dq_nsg, dq_stream;
    int dq;                 /* DQ_ATOMIC rows are taken when asked for, or by default where `by_default` */
    uint32_t kept_x_shared; /* DQ_ATOMIC: K's matrices from shared memory (spec constant 7) */
    int by_default;         /* DQ_ATOMIC: the default where the device has the atomics (not deterministic) */
} matrix_table[] = {{64, 8, 32, 4, 16, DQ_PASS, 0, 0},   {64, 4, 32, 4, 16, DQ_PASS, 0, 0},
                    {64, 4, 16, 4, 16, DQ_PASS, 0, 0},   {128, 4, 16, 4, 16, DQ_PASS, 0, 0},
                    {128, 2, 16, 2, 16, DQ_PASS, 0, 0},  {64, 4, 16, 0, 0, DQ_ATOMIC, 0, 1},
                    {128, 4, 16, 0, 0, DQ_ATOMIC, 1, 0}, {128, 2, 16, 0, 0, DQ_ATOMIC, 1, 0}};

/* shaders/flash_bwd_cm_body.glsl's shared memory: the streamed X and Y rows per stage (or the
 * kept rows before the loop), two f32 staging areas of the kept rows, the streamed rows'
 * statistics per stage; with dQ by atomics, the kept K rows throughout. Kept rows: nsg
 * subgroups of `strips` MS-row strips. */
static uint32_t matrix_shared(uint32_t nsg, uint32_t strips, uint32_t stream, uint32_t stages, uint32_t ms, uint32_t dk,
                              uint32_t dv, int atomic)
{
    const uint32_t keep = nsg * strips * ms, xs = dk / 8 + 1, ys = dv / 8 + 1, ssw = (stream + 4) / 4;
    const uint32_t loop = stages * stream * (xs + ys) + 2 * keep * ssw, kept = keep * (xs > ys ? xs : ys);
    return ((loop > kept ? loop : kept) + (atomic ? keep * xs : 0)) * 16 + stages * stream * 8;
}

/* The matrix body's shape on c: 0 with the reason in why where c cannot run it */
static uint32_t matrix_shape(const vk_caps *c, vk_bwd_body body, char *why, size_t n)
{
    if (body == VK_BWD_MATRIX_EMU) return 8;
    const int nv = body == VK_BWD_MATRIX_NV;
    const int has = nv ? c->nv_coopmat : c->khr_coopmat;
    const uint32_t m = nv ? c->nv_m : c->khr_m, nn = nv ? c->nv_n : c->khr_n, k = nv ? c->nv_k : c->khr_k;
    if (!has) snprintf(why, n, "the device has no usable %s cooperative matrices", nv ? "NV" : "KHR");
    else if (m != 16 || nn != 16 || k != 16) snprintf(why, n, "its %s matrix shape is %ux%ux%u, not 16x16x16", nv ? "NV" : "KHR", m, nn, k);
    else return 16;
    return 0;
}

/* Whether nsg subgroups of `strips` kept strips and stream streamed rows suit c (subgroups of
 * c's size, MS-row matrices); else 0 with the reason in why */
static int matrix_tiles_fit(const vk_caps *c, uint32_t nsg, uint32_t strips, uint32_t stream, uint32_t stages, uint32_t ms,
                            uint32_t dk, uint32_t dv, int atomic, char *why, size_t n)
{
    const uint32_t sg = c->subgroup_size, lanes = sg / ms, need = matrix_shared(nsg, strips, stream, stages, ms, dk, dv, atomic);
    const VkPhysicalDeviceLimits *lim = &c->props.limits;
    if (stream % ms || (stream / lanes) % 8)
        snprintf(why, n, "a tile of %u streamed rows is not a multiple of %u (%u-row matrices, 8 columns a lane)", stream,
                 ms > 8 * lanes ? ms : 8 * lanes, ms);
    else if (nsg * sg > lim->maxComputeWorkGroupInvocations || nsg * sg > lim->maxComputeWorkGroupSize[0])
        snprintf(why, n, "%u subgroups of %u exceed the device's workgroup size", nsg, sg);
    else if (need > lim->maxComputeSharedMemorySize)
        snprintf(why, n, "%u subgroups (%u strip%s) x %u streamed rows (%u stage%s) need %u bytes of shared memory; the device has %u",
                 nsg, strips, strips > 1 ? "s" : "", stream, stages, stages > 1 ? "s" : "", need, lim->maxComputeSharedMemorySize);
    else
        return 1;
    return 0;
}

/* $ATTNVK_VK_BWD_TILES "nsg=N,stream=N,dq_nsg=N,dq_stream=N,stages=1|2,kx=1|2,strips=1|2,dq_strips=1|2"
 * (any of them) over the matrix table's pick (sweeps; kx, where dQ by atomics takes K's A
 * matrices: 1 registers, 2 shared memory; strips, MS-row strips a subgroup keeps); 0 on a bad string */
enum { TILE_KEYS = 8 };
static int matrix_tiles_override(uint32_t t[TILE_KEYS])
{
    static const char *const keys[TILE_KEYS] = {"nsg", "stream", "dq_nsg", "dq_stream", "stages", "kx", "strips", "dq_strips"};
    int v[TILE_KEYS];
    for (int k = 0; k < TILE_KEYS; ++k) v[k] = (int)t[k];
    if (!avk_env_tiles("ATTNVK_VK_BWD_TILES", keys, TILE_KEYS, v) || v[4] > 2 || v[5] > 2 || v[6] > 2 || v[7] > 2) return 0;
    for (int k = 0; k < TILE_KEYS; ++k) t[k] = (uint32_t)v[k];
    return 1;
}

/* The matrix body's tiles for body on c (dq: DQ_PASS, DQ_ATOMIC or DQ_AUTO, see dq_mode); ATTNVK_OK
 * with out->body left PORTABLE where p does not suit it; a failure with the reason where named
 * and the device lacks it, or where the tiles' override does not fit */
static attnvk_status matrix_select(const vk_caps *c, const attnvk_problem *p, vk_bwd_body body, int named, int dq,
                                   vk_bwd_tiles *out)
{
    const uint32_t dk = (uint32_t)p->head_dim, dv = (uint32_t)avk_head_dim_v(p), dim = dk > dv ? dk : dv;
    const char *name = body == VK_BWD_MATRIX_NV ? "nv" : body == VK_BWD_MATRIX_KHR ? "khr" : "emulated";
    char why[160] = "";
    const uint32_t ms = matrix_shape(c, body, why, sizeof why), sg = c->subgroup_size;
    if (!ms) {
    } else if (p->dtype != ATTNVK_F16) {
        snprintf(why, sizeof why, "it takes f16 (got %s)", attnvk_dtype_name(p->dtype));
    } else if (dk % 16 || dv % 16 || dim > 128) {
        snprintf(why, sizeof why, "it takes head dims that are multiples of 16 up to 128 (got %u/%u)", dk, dv);
    } else if (sg < ms || sg % ms) {
        snprintf(why, sizeof why, "subgroups of %u lanes do not split %u-row matrices", sg, ms);
    } else {
        const int overridden = getenv("ATTNVK_VK_BWD_TILES") && *getenv("ATTNVK_VK_BWD_TILES");
        for (size_t i = 0; i < sizeof matrix_table / sizeof *matrix_table; ++i) {
            /* DQ_AUTO takes the atomic rows marked by_default (the caller falls back to the dQ pass) */
            const int row_atomic = matrix_table[i].dq == DQ_ATOMIC;
            if (dim > matrix_table[i].max_dim || row_atomic != (dq != DQ_PASS) || (dq == DQ_AUTO && !matrix_table[i].by_default))
                continue;
            uint32_t t[TILE_KEYS] = {matrix_table[i].nsg,    matrix_table[i].stream,
                                     matrix_table[i].dq_nsg, matrix_table[i].dq_stream,
                                     0,                      matrix_table[i].kept_x_shared ? 2u : 1u,
                                     1,                      1};
            if (!matrix_tiles_override(t))
                return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                                "ATTNVK_VK_BWD_TILES: '%s' is not \"nsg=N,stream=N,dq_nsg=N,dq_stream=N,stages=1|2,kx=1|2,"
                                "strips=1|2,dq_strips=1|2\" (any of them, 1..256 each)",
                                getenv("ATTNVK_VK_BWD_TILES"));
            /* one stage unless told (stages=2): double-buffered tiles measured slower on the H100 (s32h,
             * D=128 59.5 against 91.8 TFLOP/s; D=64's dQ 71.6 against 78.7: more registers held across
             * the work, fewer workgroups an SM) */
            const uint32_t stages = t[4] ? t[4] : 1;
            const uint32_t st[2] = {
                matrix_tiles_fit(c, t[0], t[6], t[1], stages, ms, dk, dv, row_atomic, why, sizeof why) ? stages : 0,
                row_atomic || matrix_tiles_fit(c, t[2], t[7], t[3], stages, ms, dk, dv, 0, why, sizeof why) ? stages : 0};
            if (st[0] && st[1]) {
                const uint32_t a = matrix_shared(t[0], t[6], t[1], st[0], ms, dk, dv, row_atomic);
                const uint32_t b = row_atomic ? 0 : matrix_shared(t[2], t[7], t[3], st[1], ms, dk, dv, 0);
                *out = (vk_bwd_tiles){.body = body, .keep = t[0] * t[6] * ms, .stream = t[1], .wg = t[0] * sg,
                                      .dq_keep = t[2] * t[7] * ms, .dq_stream = t[3], .dq_wg = t[2] * sg,
                                      .shared_bytes = a > b ? a : b, .nsg = t[0], .dq_nsg = t[2], .subgroup = sg, .ms = ms,
                                      .stages = st[0], .dq_stages = st[1], .atomic_dq = row_atomic,
                                      .kept_x_shared = row_atomic && t[5] == 2, .strips = t[6], .dq_strips = t[7]};
                return ATTNVK_OK;
            }
            if (overridden) /* an override that does not fit is an error, not a fallback */
                return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: the backward's %s matrix body cannot run: %s", name, why);
        }
    }
    /* a named family the device lacks is an error; a problem it does not suit runs the portable body */
    if (named && !ms) return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: the backward's %s matrix body cannot run: %s", name, why);
    out->body = VK_BWD_PORTABLE;
    return ATTNVK_OK;
}

/* Whether body keeps P and dS in its accumulators (REG_SCORES) on c, into *on. It does where the
 * probe saw the accumulator layout that shaders/cm_layout_nv.glsl assumes (NV, or its KHR
 * rewrite; the emulation has its own), unless $ATTNVK_VK_BWD_SCORES=staged; =registers where the
 * layout is not known is UNSUPPORTED with the probe's reason. H100, KHR, f16 B=4 N=4k H*D=2048
 * (bench/results/backward-2026-12-07-s37): D=128 106.0 TFLOP/s against 91.6 staged, causal 98.4;
 * D=64 with the dQ pass 103.7 (dQ by atomics 83.2, staged 84.7). */
enum { REG_SCORES_BY_DEFAULT = 1 };
static attnvk_status reg_scores(const vk_caps *c, vk_bwd_body body, uint32_t *on)
{
    const char *env = getenv("ATTNVK_VK_BWD_SCORES");
    if (env && *env && strcmp(env, "staged") != 0 && strcmp(env, "registers") != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ATTNVK_VK_BWD_SCORES: unknown mode '%s' (registers, staged)", env);
    const int nv = body == VK_BWD_MATRIX_NV, probed = body == VK_BWD_MATRIX_EMU || (nv ? c->rs_layout : c->rs_layout_khr) > 0;
    *on = 0;
    if (env && !strcmp(env, "staged")) return ATTNVK_OK;
    if (probed) *on = (env && *env) || body == VK_BWD_MATRIX_EMU || REG_SCORES_BY_DEFAULT;
    else if (env && *env) {
        const char *why = nv ? c->rs_layout_why : c->rs_layout_khr_why;
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "ATTNVK_VK_BWD_SCORES=registers: the %s accumulator layout is not known here%s%s",
                        nv ? "NV" : "KHR", *why ? ": " : "", why);
    }
    return ATTNVK_OK;
}

/* $ATTNVK_VK_BWD_DQ into *mode: unset, DQ_AUTO (the table's atomic rows marked by_default where
 * the device has the atomics and no tiles override is set, else the dQ pass); kernel or
 * deterministic runs, DQ_PASS; atomic, DQ_ATOMIC; a failure for a bad value or, asked for,
 * atomics the device lacks */
static attnvk_status dq_mode(const vk_caps *c, int deterministic, int *mode)
{
    const char *env = getenv("ATTNVK_VK_BWD_DQ");
    *mode = DQ_PASS;
    if (env && *env && strcmp(env, "kernel") != 0 && strcmp(env, "atomic") != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ATTNVK_VK_BWD_DQ: unknown dQ mode '%s' (atomic, kernel)", env);
    if (deterministic || (env && !strcmp(env, "kernel"))) return ATTNVK_OK; /* bit-identical runs: the dQ pass */
    if (!env || !*env) { /* a tiles override (a sweep) names its mode: unnamed, the dQ pass's tiles */
        const char *tiles = getenv("ATTNVK_VK_BWD_TILES");
        if (c->atomic_f32_add && !(tiles && *tiles)) *mode = DQ_AUTO;
        return ATTNVK_OK;
    }
    if (!c->atomic_f32_add)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "ATTNVK_VK_BWD_DQ=atomic: the device lacks VK_EXT_shader_atomic_float's shaderBufferFloat32AtomicAdd");
    *mode = DQ_ATOMIC;
    return ATTNVK_OK;
}

attnvk_status vk_bwd_select(const vk_caps *c, const attnvk_problem *p, const vk_config *fwd, int deterministic,
                            vk_bwd_tiles *out)
{
    /* $ATTNVK_VK_BWD names a body (A/B runs); else the forward's emulated variants take the
     * emulated matrices (lavapipe's tests of the matrix body), KHR before NV elsewhere (the H100:
     * 91.9 against 76.2 TFLOP/s at D=128, 49.3 against 43.9 at D=64, s32c) */
    const char *env = getenv("ATTNVK_VK_BWD");
    vk_bwd_body want[2] = {VK_BWD_MATRIX_KHR, VK_BWD_MATRIX_NV};
    int n = 2, named = 0;
    if (env && *env) {
        if (!strcmp(env, "portable")) n = 0;
        else if (!strcmp(env, "nv") || !strcmp(env, "khr"))
            want[0] = !strcmp(env, "nv") ? VK_BWD_MATRIX_NV : VK_BWD_MATRIX_KHR, n = 1, named = 1;
        else return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ATTNVK_VK_BWD: unknown body '%s' (portable, nv, khr)", env);
    } else if (fwd && (fwd->emulated || fwd->algo == VK_ALGO_COOPMAT_EMU || fwd->algo == VK_ALGO_COOPMAT_RS_EMU)) {
        want[0] = VK_BWD_MATRIX_EMU, n = 1;
    }
    int mode = DQ_PASS;
    const attnvk_status as = dq_mode(c, deterministic, &mode);
    if (as != ATTNVK_OK) return as;
    for (int i = 0; i < n; ++i) {
        out->body = VK_BWD_PORTABLE;
        /* with P and dS in registers the dQ pass beats dQ by atomics (D=64 103.7 against 83.2):
         * unasked, the atomic rows are for the staged scores */
        uint32_t regs = 0;
        const int m = mode == DQ_AUTO && reg_scores(c, want[i], &regs) == ATTNVK_OK && regs ? DQ_PASS : mode;
        avk_clear_error();
        attnvk_status s = matrix_select(c, p, want[i], named, m, out);
        if (s == ATTNVK_OK && out->body == VK_BWD_PORTABLE && m == DQ_AUTO) /* no default atomic row: the dQ pass */
            s = matrix_select(c, p, want[i], named, DQ_PASS, out);
        if (s == ATTNVK_OK && out->body != VK_BWD_PORTABLE) s = reg_scores(c, out->body, &out->reg_scores);
        if (s == ATTNVK_OK && out->body != VK_BWD_PORTABLE && (out->strips > 1 || out->dq_strips > 1) && !out->reg_scores)
            s = avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                         "ATTNVK_VK_BWD_TILES: strips of more than one take P and dS in registers (ATTNVK_VK_BWD_SCORES=registers)");
        if (s != ATTNVK_OK || out->body != VK_BWD_PORTABLE) return s;
    }
    return portable_select(c, p, out);
}

/* with atomic_dq, PASS_DQ casts the workspace dK/dV added dQ into */
enum { PASS_PRE, PASS_DKDV, PASS_DQ, PASS_SINKS, PASSES };
_Static_assert((int)PASSES <= (int)VK_STAMP_MARKS, "a timestamp mark per pass");

/* unroll: dK/dV and dQ with their inner loops left to the driver (vk_bwd_tiles) */
static spv_blob pass_shader(int pass, attnvk_dtype dt, const vk_bwd_tiles *t)
{
    const spv_blob matrix[3][3] = {
        {SPV_BLOB(flash_bwd_cm_dkdv_nv), SPV_BLOB(flash_bwd_cm_dq_nv), SPV_BLOB(flash_bwd_cm_dkdv_atomic_nv)},
        {SPV_BLOB(flash_bwd_cm_dkdv_khr), SPV_BLOB(flash_bwd_cm_dq_khr), SPV_BLOB(flash_bwd_cm_dkdv_atomic_khr)},
        {SPV_BLOB(flash_bwd_cm_dkdv_emu), SPV_BLOB(flash_bwd_cm_dq_emu), SPV_BLOB(flash_bwd_cm_dkdv_atomic_emu)},
    };
    const spv_blob cast = SPV_BLOB(flash_bwd_dq_cast);
    if (t->atomic_dq && pass == PASS_DQ) return cast;
    if (t->body != VK_BWD_PORTABLE && (pass == PASS_DKDV || pass == PASS_DQ))
        return matrix[t->body - VK_BWD_MATRIX_NV][pass == PASS_DQ ? 1 : t->atomic_dq ? 2 : 0];
    const int unroll = t->unroll;
    const spv_blob table[5][3] = {
        {SPV_BLOB(flash_bwd_pre_f32), SPV_BLOB(flash_bwd_pre_f16), SPV_BLOB(flash_bwd_pre_bf16)},
        {SPV_BLOB(flash_bwd_dkdv_f32), SPV_BLOB(flash_bwd_dkdv_f16), SPV_BLOB(flash_bwd_dkdv_bf16)},
        {SPV_BLOB(flash_bwd_dq_f32), SPV_BLOB(flash_bwd_dq_f16), SPV_BLOB(flash_bwd_dq_bf16)},
        {SPV_BLOB(flash_bwd_dkdv_f32_unroll), SPV_BLOB(flash_bwd_dkdv_f16_unroll), SPV_BLOB(flash_bwd_dkdv_bf16_unroll)},
        {SPV_BLOB(flash_bwd_dq_f32_unroll), SPV_BLOB(flash_bwd_dq_f16_unroll), SPV_BLOB(flash_bwd_dq_bf16_unroll)},
    };
    const spv_blob sinks = SPV_BLOB(flash_bwd_sinks);
    if (pass == PASS_SINKS) return sinks;
    const int row = unroll && (pass == PASS_DKDV || pass == PASS_DQ) ? pass + 2 : pass;
    return table[row][dt == ATTNVK_F16 ? 1 : dt == ATTNVK_BF16 ? 2 : 0];
}

/* the four pipelines (the device keeps them: a second call finds them built) */
static attnvk_status pipelines(avk_bdev *dev, const attnvk_problem *p, const vk_bwd_tiles *t, VkPipeline out[PASSES])
{
    const uint32_t dk = (uint32_t)p->head_dim, dv = (uint32_t)avk_head_dim_v(p);
    const int scores = (avk_problem_features(p) & AVK_SCORE_FEATURES) != 0;
    attnvk_status s = ATTNVK_OK;
    for (int pass = 0; pass < PASSES && s == ATTNVK_OK; ++pass) {
        const int tiled = pass == PASS_DKDV || (pass == PASS_DQ && !t->atomic_dq), dq = pass == PASS_DQ;
        const int matrix = tiled && t->body != VK_BWD_PORTABLE;
        /* pre and sinks: workgroups of BWD_WG; portable: keep, stream, D, workgroup; matrix
         * (flash_bwd_cm_body.glsl): subgroups, stream, D, workgroup, subgroup size, MS, stages, K's
         * matrices from shared memory, P and dS in registers, strips a subgroup */
        const uint32_t keep = dq ? t->dq_keep : t->keep, stream = dq ? t->dq_stream : t->stream;
        const uint32_t spec[10] = {matrix ? (dq ? t->dq_nsg : t->nsg) : tiled ? keep : 0, tiled ? stream : 0, dk,
                                   tiled ? (dq ? t->dq_wg : t->wg) : BWD_WG, t->subgroup, t->ms, dq ? t->dq_stages : t->stages,
                                   dq ? 0 : t->kept_x_shared, t->reg_scores, dq ? t->dq_strips : t->strips};
        const spv_blob b = pass_shader(pass, p->dtype, t);
        s = vk_build_body(dev, b.code, b.size, b.name, spec, matrix ? 10 : 4, dv, scores, out + pass);
    }
    return s;
}

/* Bindings 0..6 per pass (the shaders' own), 7..12 the contract's score inputs (flash_common.glsl);
 * dq_acc (dQ by atomics) at dK/dV's 9, the K/V scales' (a plain K/V here), and the cast's 0. */
static void pass_bindings(avk_bdev *dev, const avk_backward_dispatch *a, avk_bbuf *stats, avk_bbuf *share,
                          avk_bbuf *dq_acc, avk_bbuf *bufs[PASSES][VK_BINDINGS])
{
    const avk_dispatch *f = &a->fwd;
    avk_bbuf *const dummy = dev->dummy;
    for (int pass = 0; pass < PASSES; ++pass) {
        avk_bbuf **b = bufs[pass];
        for (int i = 0; i < VK_BINDINGS; ++i) b[i] = dummy;
        b[8] = f->seq_lens ? f->seq_lens : dummy;
        b[10] = f->alibi_slopes ? f->alibi_slopes : dummy;
        b[11] = f->sinks ? f->sinks : dummy;
        b[12] = f->mask ? f->mask : dummy;
    }
    avk_bbuf **pre = bufs[PASS_PRE], **dkdv = bufs[PASS_DKDV], **dq = bufs[PASS_DQ], **sinks = bufs[PASS_SINKS];
    pre[0] = f->o, pre[1] = a->d_o, pre[2] = share ? share : dummy, pre[4] = f->lse, pre[5] = stats;
    avk_bbuf *const tiles[5] = {f->q, f->k, f->v, a->d_o, stats}; /* flash_bwd_tiles.glsl */
    memcpy(dkdv, tiles, sizeof tiles);
    memcpy(dq, tiles, sizeof tiles);
    dkdv[5] = a->dk, dkdv[6] = a->dv, dq[5] = a->dq;
    if (dq_acc) {
        dkdv[9] = dq_acc;
        for (int i = 0; i < VK_BINDINGS; ++i) dq[i] = i == 0 ? dq_acc : i == 1 ? a->dq : dummy;
    }
    sinks[0] = share ? share : dummy, sinks[1] = a->d_sinks ? a->d_sinks : dummy;
}

static uint32_t ceil_div(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

attnvk_status vk_backward_run(avk_bdev *dev, const attnvk_problem *p, const avk_kernel_args *fwd_args, const vk_config *fwd,
                              const avk_backward_dispatch *a, double *device_ms)
{
    const VkPhysicalDeviceLimits *lim = &dev->caps->props.limits;
    vk_bwd_tiles t;
    attnvk_status s = vk_bwd_select(dev->caps, p, fwd, a->deterministic, &t);
    if (s != ATTNVK_OK) return s;
    /* grids: pre rows over x and y; dK/dV (key blocks, kv heads, batch); dQ (query blocks, heads,
     * batch), or its cast (8 values of a row a thread) over x and y as pre's */
    const uint64_t rows = (uint64_t)p->batch * p->heads * p->seq_q;
    const uint32_t max_x = lim->maxComputeWorkGroupCount[0];
    const uint32_t row_groups = ceil_div(rows, BWD_WG), pre_x = row_groups < max_x ? row_groups : max_x;
    const uint32_t cast_groups = ceil_div(rows * (uint64_t)(p->head_dim / 8), BWD_WG);
    const uint32_t cast_x = cast_groups < max_x ? cast_groups : max_x;
    /* with dQ by atomics the table's row has no dQ tiles (dq_keep 0): the cast's grid instead */
    const uint32_t dq_grid[3] = {t.atomic_dq ? cast_x : ceil_div((uint64_t)p->seq_q, t.dq_keep),
                                 t.atomic_dq ? ceil_div(cast_groups, cast_x ? cast_x : 1) : (uint32_t)p->heads,
                                 t.atomic_dq ? 1 : (uint32_t)p->batch};
    uint32_t grid[PASSES][3] = {{pre_x, ceil_div(row_groups, pre_x ? pre_x : 1), 1},
                                {ceil_div((uint64_t)p->seq_kv, t.keep), (uint32_t)p->kv_heads, (uint32_t)p->batch},
                                {dq_grid[0], dq_grid[1], dq_grid[2]},
                                {(uint32_t)p->heads, 1, 1}};
    for (int pass = 0; pass < PASSES && s == ATTNVK_OK; ++pass)
        for (int d = 0; d < 3; ++d)
            if (grid[pass][d] > lim->maxComputeWorkGroupCount[d])
                s = avk_fail(ATTNVK_ERROR_UNSUPPORTED, "vulkan: the backward pass's grid %ux%ux%u exceeds the device's workgroup counts",
                             grid[pass][0], grid[pass][1], grid[pass][2]);
    VkPipeline pipe[PASSES];
    if (s == ATTNVK_OK) s = pipelines(dev, p, &t, pipe);
    if (s != ATTNVK_OK) return s;
    /* every query row, one head per workgroup, one split: the forward's packing and splits do not apply */
    avk_kernel_args pc = *fwd_args;
    pc.pack = 1, pc.q_begin = 0, pc.q_count = (U32)p->seq_q, pc.splits = 1;
    pc.flags &= ~(U32)(AVK_FLAG_SPLIT | AVK_FLAG_SKIP_LAST_TILE | AVK_FLAG_WRITE_LSE);
    /* workspace: (LSE log2, D_i) per row; the sink shares with sinks */
    avk_bbuf *stats = NULL, *share = NULL, *dq_acc = NULL;
    double pass_ms[PASSES] = {0}; /* each pass's device time (the bench's records show it: tuning) */
    s = vk_buffer_new(dev, (rows ? rows : 1) * 8, 0, &stats);
    if (s == ATTNVK_OK && a->d_sinks) s = vk_buffer_new(dev, (rows ? rows : 1) * 4, 0, &share);
    /* dQ by atomics: f32 in Q's element order, zeroed below */
    if (s == ATTNVK_OK && t.atomic_dq) s = vk_buffer_new(dev, (attnvk_q_elements(p) ? attnvk_q_elements(p) : 1) * 4, 0, &dq_acc);
    avk_bbuf *bufs[PASSES][VK_BINDINGS];
    VkDescriptorSet sets[PASSES];
    if (s == ATTNVK_OK) {
        pass_bindings(dev, a, stats, share, dq_acc, bufs);
        s = vk_bind_storage_sets(dev, PASSES, (avk_bbuf *const (*)[VK_BINDINGS])bufs, sets);
    }
    if (s == ATTNVK_OK) s = vk_begin_timed(dev);
    if (s == ATTNVK_OK) {
        VkCommandBuffer cmd = dev->cmd;
        const VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                    .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
        dev->vk.vkCmdPushConstants(cmd, dev->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
        if (dq_acc) { /* zeroed before dK/dV adds into it */
            dev->vk.vkCmdFillBuffer(cmd, dq_acc->buffer, 0, VK_WHOLE_SIZE, 0);
            const VkMemoryBarrier zeroed = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                            .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
            dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &zeroed, 0,
                                         NULL, 0, NULL);
        }
        vk_stamp_reset_marks(dev);
        for (int pass = 0; pass < PASSES; ++pass) {
            const int skipped = (pass == PASS_SINKS && !a->d_sinks) || grid[pass][0] == 0 || grid[pass][1] == 0 ||
                                grid[pass][2] == 0;
            if (skipped) {
                vk_stamp_mark(dev, (uint32_t)pass); /* every mark written: the reads wait for all */
                continue;
            }
            if (pass > 0) /* the stats and sink shares of the pre pass are written */
                dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                             0, 1, &mb, 0, NULL, 0, NULL);
            dev->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe[pass]);
            dev->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, dev->pipeline_layout, 0, 1, &sets[pass], 0,
                                            NULL);
            dev->vk.vkCmdDispatch(cmd, grid[pass][0], grid[pass][1], grid[pass][2]);
            vk_stamp_mark(dev, (uint32_t)pass);
        }
        /* the gradients visible to the host and to later transfers (downloads, wrapped buffers) */
        const VkMemoryBarrier done = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                      .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT};
        dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                     VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &done, 0, NULL, 0,
                                     NULL);
        double ms = 0;
        s = vk_submit_timed(dev, &ms);
        if (s == ATTNVK_OK && device_ms) *device_ms = ms;
        if (s == ATTNVK_OK) s = vk_stamp_ms(dev, PASSES, pass_ms);
    }
    if (s == ATTNVK_OK) { /* each workgroup keeps `keep` rows and streams `stream` a step */
        static const char *const names[] = {"bwd-portable", "bwd-coopmat-nv", "bwd-coopmat-khr", "bwd-coopmat-emu"};
        snprintf(a->info->implementation, sizeof a->info->implementation, "attnvk");
        snprintf(a->info->variant, sizeof a->info->variant, "%s%s", names[t.body], t.unroll ? "-unroll" : "");
        a->info->tile_br = (int)t.stream, a->info->tile_bc = (int)t.keep, a->info->workgroup_size = (int)t.wg;
        a->info->split_kv = 1;
        if (t.body == VK_BWD_PORTABLE)
            snprintf(a->info->params, sizeof a->info->params, "dq=kernel shared_bytes=%u", t.shared_bytes);
        else if (t.atomic_dq)
            snprintf(a->info->params, sizeof a->info->params,
                     "dq=atomic nsg=%u strips=%u stream=%u stages=%u kx=%u ms=%u subgroup=%u shared_bytes=%u", t.nsg, t.strips,
                     t.stream, t.stages, t.kept_x_shared ? 2u : 1u, t.ms, t.subgroup, t.shared_bytes);
        else
            snprintf(a->info->params, sizeof a->info->params,
                     "dq=kernel nsg=%u strips=%u stream=%u stages=%u dq_nsg=%u dq_strips=%u dq_stream=%u dq_stages=%u ms=%u "
                     "subgroup=%u shared_bytes=%u",
                     t.nsg, t.strips, t.stream, t.stages, t.dq_nsg, t.dq_strips, t.dq_stream, t.dq_stages, t.ms, t.subgroup,
                     t.shared_bytes);
        const size_t used = strlen(a->info->params);
        snprintf(a->info->params + used, sizeof a->info->params - used, "%s pass_ms=%.3f/%.3f/%.3f/%.3f",
                 t.body == VK_BWD_PORTABLE ? "" : t.reg_scores ? " scores=registers" : " scores=staged", pass_ms[PASS_PRE],
                 pass_ms[PASS_DKDV], pass_ms[PASS_DQ], pass_ms[PASS_SINKS]);
        const size_t with_times = strlen(a->info->params);
        if (*vk_pipeline_stats(dev, pipe[PASS_DKDV])) /* ATTNVK_VK_PIPELINE_STATS=1: the dK/dV pass's registers, spills */
            snprintf(a->info->params + with_times, sizeof a->info->params - with_times, " dkdv:%s",
                     vk_pipeline_stats(dev, pipe[PASS_DKDV]));
    }
    vk_buffer_free(dev, stats);
    vk_buffer_free(dev, share);
    vk_buffer_free(dev, dq_acc);
    return s;
}
