/* The OpenCL backward pass (issue #18): opencl/flash_bwd.cl's kernels, their
 * tile table and build options, and the run behind attnvk_kernel_backward:
 * D_i (and the sink shares), dK/dV, dQ, d(sink), in that order on the
 * device's in-order queue, timed by its profiling events. Deterministic by
 * construction (no atomics), so `deterministic` needs nothing more. */
#include "opencl/cl_backward.h"
#include "opencl/cl_kernels.h"
#include "opencl/cl_program.h"

#include "core/error.h"
#include "core/tuning.h" /* avk_env_tiles */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tiles by the largest head dim (Dk or Dv), tried in order: the first whose
 * local memory (f32 rows + 1 of Q, dO, K, V tiles, P and dS) fits the
 * device. The first entry of each range fits 48 KiB (NVIDIA's static local
 * memory), the second 32 KiB. Not yet tuned on a GPU. */
static const struct {
    int max_dim, bc, bq, qb, kb, wg;
} bwd_table[] = {
    {64, 32, 32, 32, 32, 256},  {64, 16, 16, 16, 16, 256},  {128, 16, 16, 16, 16, 256},
    {128, 8, 8, 8, 8, 128},     {256, 8, 8, 8, 8, 256},     {256, 4, 4, 4, 4, 128},
};

/* The tensor-core body (flash_bwd_mma.cl; the default where mma.sync exists,
 * $ATTNVK_OPENCL_BWD_MMA=0 turns it off): warps of 16 keys (dK/dV) or 16 query rows (dQ),
 * inner tiles of `inner` query rows (dK/dV) and `dq_inner` keys (dQ), copied by cp.async into
 * `stages` buffers (2: the next tile lands while this one is computed). f16 rows + 8 halves;
 * every entry fits 48 KiB. H100, f16 B=4 N=4k H*D=2048, TFLOP/s. cp.async, one buffer
 * (bench/results/backward-2026-12-06-s34, s34a): D=128 2 warps 32/32 71.4, 4 16/16 67.5,
 * 2 16/32 65.7; two buffers 2 16/16 62.9; D=64 4 32/32 58.1, two buffers 57.7 (32/32), 49.5
 * (32/16); s34b (another call): D=128 2 32/16 73.0, 2 32/32 70.9, 1 32/32 63.4, 1 64/64 38.2;
 * D=64 4 32/32 57.6, 2 32/32 56.0, 4 32/64 52.0, 4 64/64 46.0, 8 32/32 40.5. Synchronous copies
 * before (vulkan-2026-12-06-s32, s32g): D=128 2 32/32 59.1, 2 16/16 57.9, 2 16/32 54.4, 4 16/16
 * 51.6; D=64 4 32/32 49.6, 4 32/64 48.0, 8 32/16 41.0, 8 32/32 36.9. */
static const struct {
    int max_dim, warps, inner, dq_inner, stages;
} bwd_mma_table[] = {{64, 4, 32, 32, 1}, {128, 2, 32, 16, 1}, {128, 4, 16, 16, 1}};

size_t avk_cl_bwd_local_bytes(const avk_cl_bwd_config *c, int dq)
{
    if (c->mma) {
        const size_t row = ((size_t)c->head_dim + 8 + (size_t)c->head_dim_v + 8) * 2, warps = (size_t)c->wg / 32;
        const size_t outer = (size_t)(dq ? c->qb : c->bc), inner = (size_t)(dq ? c->kb : c->bq);
        const size_t emulation = c->mma == 2 ? warps * (256 + 128 + 32) * sizeof(float) : 0;
        const size_t stats = 2 * (dq ? outer : inner * (size_t)c->stages) * sizeof(float); /* LSE and D_i */
        return (outer + inner * (size_t)c->stages) * row + stats + emulation;
    }
    const size_t row = (size_t)c->head_dim + 1 + (size_t)c->head_dim_v + 1; /* a Q/K row and its dO/V row */
    if (dq) return ((size_t)(c->qb + c->kb) * row + (size_t)c->qb * (c->kb + 1) + 2 * (size_t)c->qb) * sizeof(float);
    return ((size_t)(c->bc + c->bq) * row + 2 * (size_t)c->bq * (c->bc + 1) + 2 * (size_t)c->bq) * sizeof(float);
}

/* $ATTNVK_OPENCL_BWD_TILES "warps=N,inner=N,dq_inner=N,stages=N" (any of them) over the
 * tensor-core entry (sweeps; dQ's inner tile apart from dK/dV's); 0 on a bad string */
static int mma_tiles_override(int t[4])
{
    static const char *const keys[4] = {"warps", "inner", "dq_inner", "stages"};
    return avk_env_tiles("ATTNVK_OPENCL_BWD_TILES", keys, 4, t) && t[0] <= 16 && t[1] % 16 == 0 && t[2] % 16 == 0 &&
           (t[3] == 1 || t[3] == 2);
}

/* the tensor-core entry for cfg's head dims, if one applies and fits; -1 on a bad override, -2 on
 * an override that fits no entry (*need: the smallest local memory it asked for) */
static int select_mma(uint64_t local_mem, size_t max_wg, avk_cl_bwd_config *cfg, size_t *need)
{
    const int dk = cfg->head_dim, dv = cfg->head_dim_v, dmax = dk > dv ? dk : dv;
    const char *env = getenv("ATTNVK_OPENCL_BWD_TILES");
    const int overridden = env && *env;
    *need = 0;
    if (!cfg->f16 || dk % 16 || dv % 16) return 0;
    for (size_t i = 0; i < sizeof bwd_mma_table / sizeof *bwd_mma_table; ++i) {
        int t[4] = {bwd_mma_table[i].warps, bwd_mma_table[i].inner, bwd_mma_table[i].dq_inner, bwd_mma_table[i].stages};
        if (dmax > bwd_mma_table[i].max_dim) continue;
        if (!mma_tiles_override(t)) return -1;
        if ((size_t)t[0] * 32 > max_wg) continue;
        cfg->wg = t[0] * 32;
        cfg->bc = cfg->qb = t[0] * 16;
        cfg->bq = t[1], cfg->kb = t[2], cfg->stages = t[3];
        const size_t a = avk_cl_bwd_local_bytes(cfg, 0), b = avk_cl_bwd_local_bytes(cfg, 1), most = a > b ? a : b;
        if (most <= local_mem) return 1;
        if (!*need || most < *need) *need = most;
    }
    /* a sweep's tiles that do not fit are an error, not the portable body's timing under their name */
    return overridden && *need ? -2 : 0;
}

attnvk_status avk_cl_bwd_select(uint64_t local_mem, size_t max_wg, int gpu, int mma, const attnvk_problem *p,
                                avk_cl_bwd_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    if (p->dtype != ATTNVK_F32 && p->dtype != ATTNVK_F16)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "opencl: the backward pass takes f32 or f16 (as the forward), not %s",
                        attnvk_dtype_name(p->dtype));
    cfg->head_dim = p->head_dim;
    cfg->head_dim_v = attnvk_problem_head_dim_v(p);
    cfg->f16 = p->dtype == ATTNVK_F16;
    cfg->unroll = gpu; /* CPU runtimes (PoCL) build far faster without forced unrolling */
    cfg->mma = mma;
    size_t need = 0;
    const int picked = mma ? select_mma(local_mem, max_wg, cfg, &need) : 0;
    if (picked == -2)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "ATTNVK_OPENCL_BWD_TILES: '%s' needs %zu bytes of local memory; the device has %llu",
                        getenv("ATTNVK_OPENCL_BWD_TILES"), need, (unsigned long long)local_mem);
    if (picked < 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT,
                        "ATTNVK_OPENCL_BWD_TILES: '%s' is not \"warps=N,inner=N,dq_inner=N,stages=N\" (warps 1..16, tiles "
                        "multiples of 16, stages 1 or 2)",
                        getenv("ATTNVK_OPENCL_BWD_TILES"));
    if (picked) return ATTNVK_OK;
    cfg->mma = 0;
    const int dmax = cfg->head_dim > cfg->head_dim_v ? cfg->head_dim : cfg->head_dim_v;
    for (size_t i = 0; i < sizeof bwd_table / sizeof *bwd_table; ++i) {
        if (dmax > bwd_table[i].max_dim || (size_t)bwd_table[i].wg > max_wg) continue;
        cfg->bc = bwd_table[i].bc, cfg->bq = bwd_table[i].bq, cfg->qb = bwd_table[i].qb, cfg->kb = bwd_table[i].kb;
        cfg->wg = bwd_table[i].wg;
        const size_t a = avk_cl_bwd_local_bytes(cfg, 0), b = avk_cl_bwd_local_bytes(cfg, 1);
        if ((a > b ? a : b) <= local_mem) return ATTNVK_OK;
    }
    return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                    "opencl: the backward pass takes head dims up to 256 (got %d/%d) whose tiles fit the device's "
                    "%llu bytes of local memory",
                    cfg->head_dim, cfg->head_dim_v, (unsigned long long)local_mem);
}

static void build_options(const avk_cl_bwd_config *c, char *out, size_t n)
{
    snprintf(out, n,
             "-cl-std=CL1.2 -DAVK_D=%d -DAVK_DV=%d -DAVK_F16=%d -DAVK_UNROLL=%d -DAVK_BWD_BC=%d -DAVK_BWD_BQ=%d "
             "-DAVK_BWD_QB=%d -DAVK_BWD_KB=%d -DAVK_BWD_WG=%d -DAVK_BWD_STAGES=%d%s",
             c->head_dim, c->head_dim_v, c->f16, c->unroll, c->bc, c->bq, c->qb, c->kb, c->wg, c->stages,
             c->mma == 1   ? " -DAVK_BWD_MMA=1 -DAVK_EMULATE=0 -DAVK_ASYNC=1"
             : c->mma == 2 ? " -DAVK_BWD_MMA=1 -DAVK_EMULATE=1 -DAVK_ASYNC=2"
                           : "");
}

/* $ATTNVK_OPENCL_BWD_MMA: unset, mma.sync through inline PTX where the device has it (NVIDIA
 * cc >= 8.0; f16, head dims up to 128: H100 D=128 N=4k 41.9 ms against the portable body's
 * 291.7), else the portable body; 0, the portable body; 1, mma.sync; emu, the same emulated */
static attnvk_status mma_choice(const avk_cl_caps *caps, int *mma)
{
    const char *v = getenv("ATTNVK_OPENCL_BWD_MMA");
    *mma = 0;
    if (!v || !*v) {
        *mma = avk_cl_has_mma(caps) ? 1 : 0;
        return ATTNVK_OK;
    }
    if (!strcmp(v, "0")) return ATTNVK_OK;
    if (!strcmp(v, "emu")) *mma = 2;
    else if (!strcmp(v, "1")) *mma = 1;
    else return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "ATTNVK_OPENCL_BWD_MMA=%s: expected 0, 1 or emu", v);
    if (*mma == 1 && !avk_cl_has_mma(caps))
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "ATTNVK_OPENCL_BWD_MMA=1 needs mma.sync (NVIDIA, compute capability 8.0 or newer); emu emulates it");
    return ATTNVK_OK;
}

/* ---- the run ---- */

struct avk_cl_bwd {
    avk_cl_bwd_config cfg;
    cl_kernel pre, sinks, dkdv, dq;
};

void avk_cl_backward_release(avk_cl_bwd *b)
{
    if (!b) return;
    cl_kernel all[] = {b->pre, b->sinks, b->dkdv, b->dq};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i)
        if (all[i]) avk_cl.ReleaseKernel(all[i]);
    free(b);
}

static attnvk_status load(avk_bdev *dev, const attnvk_problem *p, avk_cl_bwd **out)
{
    avk_cl_bwd *b = calloc(1, sizeof *b);
    if (!b) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    const int gpu = (dev->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    int mma = 0;
    attnvk_status s = mma_choice(&dev->caps, &mma);
    if (s == ATTNVK_OK) s = avk_cl_bwd_select(dev->caps.local_mem, dev->caps.max_workgroup, gpu, mma, p, &b->cfg);
    char options[384];
    build_options(&b->cfg, options, sizeof options);
    const avk_cl_source simt[] = {AVK_CL_SRC_COMMON, AVK_CL_SRC_CONTRACT, AVK_CL_SRC_FLASH_BWD};
    const avk_cl_source tensor[] = {AVK_CL_SRC_COMMON, AVK_CL_SRC_CONTRACT, AVK_CL_SRC_MMA_OPS, AVK_CL_SRC_FLASH_BWD,
                                    AVK_CL_SRC_FLASH_BWD_MMA};
    cl_program prog = NULL;
    if (s == ATTNVK_OK) s = b->cfg.mma ? avk_cl_program(dev, tensor, 5, options, &prog) : avk_cl_program(dev, simt, 3, options, &prog);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_bwd_pre", 64, &b->pre);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_bwd_sinks", (size_t)b->cfg.wg, &b->sinks);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_bwd_dkdv", (size_t)b->cfg.wg, &b->dkdv);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_bwd_dq", (size_t)b->cfg.wg, &b->dq);
    if (s != ATTNVK_OK) {
        avk_cl_backward_release(b);
        return s;
    }
    *out = b;
    return ATTNVK_OK;
}

/* sets kernel f's arguments: n buffers, then the contract's arguments */
static attnvk_status set_args(cl_kernel f, const cl_mem *mems, int n, const avk_kernel_args *args, const char *name)
{
    for (int i = 0; i < n; ++i) {
        const cl_int e = avk_cl.SetKernelArg(f, (cl_uint)i, sizeof(cl_mem), &mems[i]);
        if (e != CL_SUCCESS) return avk_cl_fail(e, name);
    }
    const cl_int e = avk_cl.SetKernelArg(f, (cl_uint)n, sizeof *args, args);
    return e == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(e, name);
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* the forward's arguments for the backward: one head per work-group, every query row, one split */
static avk_kernel_args backward_args(const avk_bkernel *k)
{
    avk_kernel_args args = k->args;
    args.pack = 1, args.q_begin = 0, args.q_count = (U32)k->p.seq_q, args.splits = 1;
    args.flags &= ~(AVK_FLAG_SPLIT | AVK_FLAG_SKIP_LAST_TILE | AVK_FLAG_WRITE_LSE);
    return args;
}

enum { PASSES = 4 }; /* pre, dK/dV, dQ, d(sink) */

static attnvk_status run(avk_bdev *dev, avk_bkernel *k, const avk_cl_bwd *b, const avk_backward_dispatch *a,
                         cl_mem delta, cl_mem share, double *ms, double pass_ms[PASSES])
{
    const attnvk_problem *p = &k->p;
    const avk_cl_bwd_config *c = &b->cfg;
    const avk_dispatch *f = &a->fwd;
    const avk_kernel_args args = backward_args(k);
    const cl_mem none = k->dummy;
    const cl_mem lens = f->seq_lens ? f->seq_lens->mem : none, slopes = f->alibi_slopes ? f->alibi_slopes->mem : none;
    const cl_mem mask = f->mask ? f->mask->mem : none, sinks = f->sinks ? f->sinks->mem : none;
    const cl_mem d_sinks = a->d_sinks ? a->d_sinks->mem : none;
    const cl_mem pre[] = {f->o->mem, a->d_o->mem, f->lse->mem, sinks, delta, share};
    const cl_mem dkdv[] = {f->q->mem, f->k->mem, f->v->mem, a->d_o->mem, f->lse->mem, delta, lens, slopes, mask,
                           a->dk->mem, a->dv->mem};
    const cl_mem dq[] = {f->q->mem, f->k->mem, f->v->mem, a->d_o->mem, f->lse->mem, delta, lens, slopes, mask,
                         a->dq->mem};
    const cl_mem sink_sum[] = {share, d_sinks};
    attnvk_status s = set_args(b->pre, pre, 6, &args, "avk_bwd_pre arguments");
    if (s == ATTNVK_OK) s = set_args(b->dkdv, dkdv, 11, &args, "avk_bwd_dkdv arguments");
    if (s == ATTNVK_OK) s = set_args(b->dq, dq, 10, &args, "avk_bwd_dq arguments");
    if (s == ATTNVK_OK) s = set_args(b->sinks, sink_sum, 2, &args, "avk_bwd_sinks arguments");
    if (s != ATTNVK_OK) return s;

    const size_t wg = (size_t)c->wg, rows = (size_t)p->batch * p->heads * p->seq_q;
    const struct {
        cl_kernel kernel;
        size_t global[3], local[3];
        int wanted;
        const char *what;
    } passes[] = {
        {b->pre, {round_up(rows, 64), 1, 1}, {64, 1, 1}, rows > 0, "enqueue avk_bwd_pre"},
        {b->dkdv, {round_up((size_t)p->seq_kv, (size_t)c->bc) / c->bc * wg, (size_t)p->kv_heads, (size_t)p->batch},
         {wg, 1, 1}, p->seq_kv > 0, "enqueue avk_bwd_dkdv"},
        {b->dq, {round_up((size_t)p->seq_q, (size_t)c->qb) / c->qb * wg, (size_t)p->heads, (size_t)p->batch},
         {wg, 1, 1}, p->seq_q > 0, "enqueue avk_bwd_dq"},
        {b->sinks, {(size_t)p->heads * wg, 1, 1}, {wg, 1, 1}, a->d_sinks != NULL, "enqueue avk_bwd_sinks"},
    };
    cl_event events[PASSES] = {NULL};
    int which[PASSES], n = 0;
    for (size_t i = 0; i < sizeof passes / sizeof *passes && s == ATTNVK_OK; ++i) {
        if (!passes[i].wanted) continue;
        const cl_int err = avk_cl.EnqueueNDRangeKernel(dev->queue, passes[i].kernel, 3, NULL, passes[i].global,
                                                       passes[i].local, 0, NULL, &events[n]);
        if (err != CL_SUCCESS) s = avk_cl_fail(err, passes[i].what);
        else which[n++] = (int)i;
    }
    if (s == ATTNVK_OK && n > 0) s = avk_cl_wait_timed(dev, events[0], events[n - 1], ms);
    else avk_cl.Finish(dev->queue);
    for (int i = 0; s == ATTNVK_OK && i < n; ++i) /* each pass's device time (0 where profiling has none) */
        avk_cl_events_ms(events[i], events[i], &pass_ms[which[i]]);
    for (int i = 0; i < n; ++i) avk_cl.ReleaseEvent(events[i]);
    return s;
}

attnvk_status avk_cl_backward(avk_bdev *dev, avk_bkernel *k, avk_cl_bwd **bwd, const avk_backward_dispatch *a, double *ms)
{
    attnvk_status s = *bwd ? ATTNVK_OK : load(dev, &k->p, bwd);
    if (s != ATTNVK_OK) return s;
    const size_t rows = (size_t)k->p.batch * k->p.heads * k->p.seq_q;
    cl_mem delta = NULL, share = NULL; /* f32 [B][H][Nq]: D_i, and the sink shares */
    s = avk_cl_create_buffer(dev, rows * sizeof(float), "backward D_i", &delta);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, rows * sizeof(float), "backward sink shares", &share);
    double pass_ms[PASSES] = {0}; /* each pass's device time (the bench's records show it: tuning) */
    if (s == ATTNVK_OK) s = run(dev, k, *bwd, a, delta, share, ms, pass_ms);
    if (delta) avk_cl.ReleaseMemObject(delta);
    if (share) avk_cl.ReleaseMemObject(share);
    const avk_cl_bwd_config *c = &(*bwd)->cfg;
    snprintf(a->info->implementation, sizeof a->info->implementation, "attnvk");
    snprintf(a->info->variant, sizeof a->info->variant, "bwd-%s", c->mma == 1 ? "mma" : c->mma ? "mma-emu" : "portable");
    a->info->tile_br = c->bq, a->info->tile_bc = c->bc, a->info->workgroup_size = c->wg, a->info->split_kv = 1;
    snprintf(a->info->params, sizeof a->info->params,
             "dq=kernel qb=%d kb=%d stages=%d unroll=%d pass_ms=%.3f/%.3f/%.3f/%.3f", c->qb, c->kb, c->stages, c->unroll,
             pass_ms[0], pass_ms[1], pass_ms[2], pass_ms[3]);
    return s;
}
