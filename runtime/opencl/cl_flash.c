/* attnvk's flash kernel on OpenCL: configuration, build, workspace, launch. */
#include "opencl/cl_kernels.h"
#include "core/test_hooks.h"
#include "opencl/cl_program.h"

#include "core/error.h"
#include "core/split_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

avk_cl_strides avk_cl_layout_strides(const attnvk_problem *p, int head_dim)
{
    avk_cl_strides s;
    const long long d = head_dim;
    if (p->layout == ATTNVK_LAYOUT_BHSD) {
        s.q_row = (int)d;
        s.kv_row = (int)d;
        s.q_head = (long long)p->seq_q * d;
        s.q_batch = s.q_head * p->heads;
        s.kv_head = (long long)p->seq_kv * d;
        s.kv_batch = s.kv_head * p->kv_heads;
    } else {
        s.q_row = (int)(p->heads * d);
        s.kv_row = (int)(p->kv_heads * d);
        s.q_head = d;
        s.q_batch = (long long)p->seq_q * s.q_row;
        s.kv_head = d;
        s.kv_batch = (long long)p->seq_kv * s.kv_row;
    }
    return s;
}

attnvk_status avk_cl_create_buffer(avk_bdev *dev, size_t bytes, const char *what, cl_mem *out)
{
    if (bytes > dev->caps.max_alloc)
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "%s: %zu bytes exceed the device's %llu-byte allocation limit", what,
                        bytes, (unsigned long long)dev->caps.max_alloc);
    cl_int err = CL_SUCCESS;
    cl_mem m = avk_cl.CreateBuffer(dev->context, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
    if (!m || err != CL_SUCCESS) {
        char msg[160];
        snprintf(msg, sizeof msg, "clCreateBuffer(%zu bytes) for %s", bytes, what);
        return avk_cl_fail(err ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, msg);
    }
    *out = m;
    return ATTNVK_OK;
}

static const char *reduce_name(int mode)
{
    switch (mode) {
    case AVK_RED_KHR: return "khr-subgroup";
    case AVK_RED_INTEL: return "intel-subgroup";
    case AVK_RED_NV: return "ptx-shfl";
    default: return "local";
    }
}

attnvk_status avk_cl_flash_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                   avk_bkernel *k, attnvk_kernel_info *info)
{
    avk_cl_config *cfg = &k->cfg;
    const int pack = avk_gqa_pack(p, p->seq_q, 0);
    attnvk_status s = avk_cl_configure(&dev->caps, &dev->info, p, opts, pack, cfg);
    if (s != ATTNVK_OK) return s;
    /* the contract's arguments; core plans the splits from this kernel's tiles */
    avk_kernel_args_fill(&k->args, p, 0, p->seq_q, pack, opts->write_lse);
    /* the bodies that take dilation (tiled, mma: cl_tuning.c) run its strided views */
    avk_kernel_args_dilated_view(&k->args, p);
    if (opts->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) k->args.flags |= AVK_FLAG_SKIP_LAST_TILE;
    /* mma-decode: a work-group's warps take key_warps tiles per round; a split is whole rounds */
    const int round = cfg->bc * (cfg->key_warps > 0 ? cfg->key_warps : 1);
    /* core plans the splits over the keys a row block may see (avk_kernel_args_span) */
    cfg->split = avk_kernel_args_split(&k->args, p, cfg->br, round, (int)dev->caps.compute_units, cfg->resident,
                                       cfg->whole_waves, opts->split_kv);
    char options[512];
    avk_cl_build_options(cfg, options, sizeof options);
    const avk_cl_source tiled[] = {AVK_CL_SRC_COMMON, AVK_CL_SRC_CONTRACT, AVK_CL_SRC_FLASH_TILED,
                                   AVK_CL_SRC_SPLIT_REDUCE};
    const avk_cl_source mma[] = {AVK_CL_SRC_COMMON, AVK_CL_SRC_CONTRACT, AVK_CL_SRC_MMA_OPS, AVK_CL_SRC_FLASH_MMA,
                                 AVK_CL_SRC_SPLIT_REDUCE};
    const avk_cl_source decode[] = {AVK_CL_SRC_COMMON, AVK_CL_SRC_CONTRACT, AVK_CL_SRC_MMA_OPS, AVK_CL_SRC_FLASH_DECODE,
                                    AVK_CL_SRC_SPLIT_REDUCE};
    cl_program prog;
    if (cfg->family == AVK_CL_TILED) s = avk_cl_program(dev, tiled, 4, options, &prog);
    else s = avk_cl_program(dev, cfg->key_warps ? decode : mma, 5, options, &prog);
    if (s != ATTNVK_OK) return s;
    const char *entry = cfg->family == AVK_CL_TILED ? "avk_flash_tiled"
                        : cfg->key_warps            ? "avk_flash_decode"
                                                    : "avk_flash_mma";
    s = avk_cl_kernel(dev, prog, entry, (size_t)cfg->wg, &k->main);
    if (s != ATTNVK_OK) return s;
    s = avk_cl_create_buffer(dev, 4, "placeholder", &k->dummy);
    if (s != ATTNVK_OK) return s;
    uint64_t workspace = 0;
    if (cfg->split > 1) {
        s = avk_cl_kernel(dev, prog, "avk_split_reduce", 32, &k->reduce);
        const size_t rows = (size_t)cfg->split * p->batch * p->heads * p->seq_q;
        const size_t dv = (size_t)attnvk_problem_head_dim_v(p); /* partial O rows are O's */
        if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, rows * dv * sizeof(float), "split-KV partial O", &k->opart);
        if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, rows * sizeof(float), "split-KV partial LSE", &k->lsepart);
        if (s != ATTNVK_OK) return s;
        workspace = (uint64_t)rows * (dv + 1) * sizeof(float);
    }
    snprintf(info->variant, sizeof info->variant, "%s", cfg->variant);
    info->tile_br = cfg->br;
    info->tile_bc = cfg->bc;
    info->workgroup_size = cfg->wg;
    info->split_kv = cfg->split;
    info->workspace_bytes = workspace;
    if (cfg->family == AVK_CL_TILED)
        snprintf(info->params, sizeof info->params,
                 "lanes_per_row=%d rows_per_lane=%d reduce=%s exp2=%s copy=%s pack=%d split_keys=%u kv=%s%s", cfg->ds,
                 cfg->tm, reduce_name(cfg->reduce), cfg->native_exp ? "native" : "full",
                 cfg->async == 1 ? "cp.async" : cfg->async == 2 ? "async-emulated" : "sync", pack, k->args.split_keys,
                 attnvk_kv_format_name(p->kv_format), dev->caps.khr_fp16 ? " cl_khr_fp16=1" : "");
    else if (cfg->key_warps)
        snprintf(info->params, sizeof info->params,
                 "key_warps=%d stages=%d maxreg=%d mma=m16n8k16%s exp2=%s copy=%s pack=%d split_keys=%u kv=%s%s",
                 cfg->key_warps, cfg->stages, cfg->max_registers, cfg->emulate ? " (emulated)" : " (ptx)", cfg->native_exp ? "native" : "full",
                 cfg->emulate ? "emulated" : "cp.async ring", pack, k->args.split_keys,
                 attnvk_kv_format_name(p->kv_format), p->kv_format != ATTNVK_KV_DTYPE ? " fragments=codes" : "");
    else
        snprintf(info->params, sizeof info->params, "warps=%d mma=m16n8k16%s exp2=%s copy=%s pack=%d split_keys=%u kv=%s",
                 cfg->br / 16, cfg->emulate ? " (emulated)" : " (ptx)", cfg->native_exp ? "native" : "full",
                 cfg->async == 1 ? "cp.async+ldmatrix" : cfg->async == 2 ? "async-emulated" : "sync", pack,
                 k->args.split_keys, attnvk_kv_format_name(p->kv_format));
    return ATTNVK_OK;
}

#define SET_ARG(kernel, idx, value)                                                          \
    do {                                                                                     \
        cl_int e_ = avk_cl.SetKernelArg((kernel), (cl_uint)(idx), sizeof(value), &(value)); \
        if (e_ != CL_SUCCESS) return avk_cl_fail(e_, "clSetKernelArg");                    \
    } while (0)

attnvk_status avk_cl_flash_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *ms)
{
    const attnvk_problem *p = &k->p;
    const avk_cl_config *cfg = &k->cfg;
    const cl_mem lse = a->lse ? a->lse->mem : k->dummy;
    const cl_mem opart = k->opart ? k->opart : k->dummy, lsepart = k->lsepart ? k->lsepart : k->dummy;
    const cl_mem table = a->block_table ? a->block_table->mem : k->dummy;
    const cl_mem lens = a->seq_lens ? a->seq_lens->mem : k->dummy;
    const cl_mem scales = a->kv_scales ? a->kv_scales->mem : k->dummy;
    avk_kernel_args args = k->args;
    args.q_begin = (U32)a->q_begin;
    args.q_count = (U32)a->q_count;
    args.flags = (args.flags & ~AVK_FLAG_WRITE_LSE) | (a->lse ? AVK_FLAG_WRITE_LSE : 0u);
    const cl_mem slopes = a->alibi_slopes ? a->alibi_slopes->mem : k->dummy;
    const cl_mem sinks = a->sinks ? a->sinks->mem : k->dummy, mask = a->mask ? a->mask->mem : k->dummy;
    const cl_mem buffers[] = {a->q->mem, a->k->mem, a->v->mem, a->o->mem, lse, opart, lsepart, table, lens, scales,
                              slopes, sinks, mask};
    cl_kernel m = k->main;
    for (size_t i = 0; i < sizeof buffers / sizeof *buffers; ++i) SET_ARG(m, i, buffers[i]);
    SET_ARG(m, sizeof buffers / sizeof *buffers, args);
    const int pack = (int)args.pack, splits = (int)args.splits;
    attnvk_status rows = avk_dilated_view_rows(&args, p, a->q_begin, a->q_count);
    if (rows != ATTNVK_OK) return rows;
    const size_t blocks = (size_t)avk_grid_row_blocks(&args, p, a->q_count, cfg->br);
    const size_t global[3] = {blocks * cfg->wg, (size_t)(p->heads / pack), (size_t)p->batch * splits};
    const size_t local[3] = {(size_t)cfg->wg, 1, 1};
    cl_kernel r = k->reduce;
    if (splits > 1) {
        SET_ARG(r, 0, opart);
        SET_ARG(r, 1, lsepart);
        SET_ARG(r, 2, a->o->mem);
        SET_ARG(r, 3, lse);
        SET_ARG(r, 4, sinks);
        SET_ARG(r, 5, args);
    }
    const size_t rglobal[3] = {(size_t)(attnvk_problem_head_dim_v(p) + 31) / 32 * 32, (size_t)a->q_count,
                               (size_t)p->batch * p->heads};
    const size_t rlocal[3] = {32, 1, 1};
    cl_command_queue queue;
    attnvk_status qs = avk_cl_run_queue(dev, a, &queue); /* attnvk's, or the caller's (async) */
    if (qs != ATTNVK_OK) return qs;
    cl_event first = NULL, last = NULL;
    for (int i = 0; i < a->launches; ++i) {
        /* events from the first launch's kernel and the last launch's last kernel only (none when async) */
        cl_event *begin = i == 0 && !a->async ? &first : NULL, *end = i == a->launches - 1 && !a->async ? &last : NULL;
        cl_int err = avk_cl.EnqueueNDRangeKernel(queue, m, 3, NULL, global, local, 0, NULL,
                                                 splits > 1 ? begin : (begin ? begin : end));
        if (err == CL_SUCCESS && splits > 1)
            err = avk_cl.EnqueueNDRangeKernel(queue, r, 3, NULL, rglobal, rlocal, 0, NULL, end);
        if (err != CL_SUCCESS) {
            avk_cl.Finish(queue);
            if (first) avk_cl.ReleaseEvent(first);
            if (last) avk_cl.ReleaseEvent(last);
            return avk_cl_fail(err, splits > 1 ? "enqueue flash kernel or split-KV reduce" : "enqueue flash kernel");
        }
    }
    if (a->async) { /* started, not waited for: attnvk_device_wait (or the caller's clFinish) */
        cl_int err = avk_cl.Flush(queue);
        return err == CL_SUCCESS ? ATTNVK_OK : avk_cl_fail(err, "clFlush (async run)");
    }
    attnvk_status s = avk_cl_wait_timed(dev, first, last ? last : first, ms);
    if (s == ATTNVK_OK) *ms /= a->launches;
    avk_cl.ReleaseEvent(first);
    if (last) avk_cl.ReleaseEvent(last);
    return s;
}
