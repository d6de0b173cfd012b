/* Vendor-library baseline: unfused attention = CLBlast batched GEMM
 * (S = scale Q K^T over Dk), attnvk's row softmax (opencl/softmax.cl), CLBlast
 * batched GEMM (O = P V over Dv). libclblast.so.1 is loaded at run time. The (b, h)
 * pairs run in chunks whose score matrices fit the device and CLBlast's
 * 32-bit indexing; cases where one pair alone cannot are UNSUPPORTED. */
#include "opencl/cl_kernels.h"
#include "core/test_hooks.h"
#include "opencl/cl_program.h"

#include "core/dynlib.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From clblast_c.h (CLBlast 1.5); declared here so the header is optional. */
enum { CLBLAST_ROW_MAJOR = 101, CLBLAST_NO_TRANS = 111, CLBLAST_TRANS = 112, CLBLAST_SUCCESS = 0 };
typedef int (*clblast_sgemm_batched_fn)(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
                                        const float *alphas, cl_mem a, const size_t *a_offsets, size_t a_ld,
                                        cl_mem b, const size_t *b_offsets, size_t b_ld, const float *betas, cl_mem c,
                                        const size_t *c_offsets, size_t c_ld, size_t batch_count,
                                        cl_command_queue *queue, cl_event *event);

static avk_dynlib *clblast_lib;
static clblast_sgemm_batched_fn clblast_sgemm_batched;
static int clblast_tried;
static char clblast_reason[256];

enum { SOFTMAX_WG = 128, SKIPPED_TILE = 64 };
/* the largest score buffer CLBlast indexes correctly (2^31 elements worked on
 * the H100, 2^32 faulted); $ATTNVK_CLBLAST_MAX_ELEMENTS lowers it (tests use
 * it to exercise chunking on small cases) */
#define CLBLAST_MAX_ELEMENTS (1ull << 31)

uint64_t avk_clblast_max_elements(void)
{
    const char *env = getenv("ATTNVK_CLBLAST_MAX_ELEMENTS");
    unsigned long long v = env ? strtoull(env, NULL, 10) : 0;
    return v > 0 && v < CLBLAST_MAX_ELEMENTS ? v : CLBLAST_MAX_ELEMENTS;
}

int avk_clblast_available(const char **reason)
{
    if (!clblast_tried) {
        clblast_tried = 1;
        const char *override = getenv("ATTNVK_CLBLAST_LIBRARY");
        const char *const default_names[] = {"libclblast.so.1", "libclblast.so", NULL};
        const char *const override_names[] = {override, NULL};
        clblast_lib = avk_dynlib_open(override && *override ? override_names : default_names);
        if (clblast_lib) {
            const avk_symbol sym[] = {{"CLBlastSgemmBatched", (void **)&clblast_sgemm_batched}};
            if (avk_dynlib_bind(clblast_lib, sym, 1) != ATTNVK_OK) {
                avk_dynlib_close(clblast_lib);
                clblast_lib = NULL;
            }
        }
        if (!clblast_lib) snprintf(clblast_reason, sizeof clblast_reason, "%s", attnvk_last_error());
    }
    if (reason) *reason = clblast_lib ? "" : clblast_reason;
    return clblast_lib != NULL;
}

void avk_clblast_unload(void)
{
    avk_dynlib_close(clblast_lib);
    clblast_lib = NULL;
    clblast_sgemm_batched = NULL;
    clblast_tried = 0;
}

/* A dead queue (NVIDIA's answer to a faulting kernel inside CLBlast) loses
 * the device for good: remembered, so later calls say so instead of failing
 * in unrelated ways. */
static attnvk_status clblast_fail(avk_bdev *dev, int code, const char *what)
{
    if (code == CL_INVALID_COMMAND_QUEUE || code == -9999) {
        dev->lost = 1;
        snprintf(dev->lost_reason, sizeof dev->lost_reason, "CLBlast %s failed with status %d (queue lost)", what,
                 code);
        return avk_fail(ATTNVK_ERROR_DEVICE_LOST, "%s", dev->lost_reason);
    }
    if (code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES || code == CL_OUT_OF_HOST_MEMORY)
        return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "CLBlast %s: out of device memory (%d)", what, code);
    if (code == -11) return avk_fail(ATTNVK_ERROR_COMPILE, "CLBlast %s: its kernels failed to build (-11)", what);
    return avk_fail(ATTNVK_ERROR_BACKEND, "CLBlast %s failed with status %d", what, code);
}

attnvk_status avk_clblast_sgemm(avk_bdev *dev, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                const float *alphas, cl_mem a, const size_t *a_offsets, size_t lda, cl_mem b,
                                const size_t *b_offsets, size_t ldb, const float *betas, cl_mem c,
                                const size_t *c_offsets, size_t ldc, size_t count, const char *what)
{
    const int code = clblast_sgemm_batched(CLBLAST_ROW_MAJOR, trans_a ? CLBLAST_TRANS : CLBLAST_NO_TRANS,
                                           trans_b ? CLBLAST_TRANS : CLBLAST_NO_TRANS, m, n, k, alphas, a, a_offsets,
                                           lda, b, b_offsets, ldb, betas, c, c_offsets, ldc, count, &dev->queue, NULL);
    return code == CLBLAST_SUCCESS ? ATTNVK_OK : clblast_fail(dev, code, what);
}

attnvk_status avk_clblast_prepare(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                                  avk_bkernel *k, attnvk_kernel_info *info)
{
    const char *why;
    if (!avk_clblast_available(&why)) return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "clblast unavailable: %s", why);
    if (p->dtype != ATTNVK_F32)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "the clblast baseline runs f32 only (SgemmBatched)");
    if (opts->variant && strcmp(opts->variant, "sgemm-batched") != 0)
        return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "clblast has one variant, sgemm-batched (got '%s')", opts->variant);
    /* Per chunk of (b, h) pairs: their score matrices S, plus what CLBlast may
     * allocate for padded copies of its operands (as large as S for the first
     * GEMM's output): 2x S counted, beside Q/K/V/O. */
    const uint64_t nbh = (uint64_t)p->batch * p->heads;
    const uint64_t pair_elements = (uint64_t)p->seq_q * p->seq_kv, pair_bytes = pair_elements * sizeof(float);
    const uint64_t io_bytes =
        (uint64_t)(attnvk_q_elements(p) + attnvk_o_elements(p) + attnvk_kv_elements(p) + attnvk_v_elements(p)) *
        sizeof(float);
    /* CLBlast's kernels index with 32-bit ints: past 2^31 elements in one
     * score buffer its batched GEMM faults (seen on the H100 at B*H=64 x
     * 8192^2) and takes the queue with it. */
    const uint64_t max_elements = avk_clblast_max_elements();
    if (pair_elements > max_elements)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "too large for CLBlast's 32-bit indexing: one (b, h) score matrix of %dx%d holds %llu "
                        "elements (limit %llu)",
                        p->seq_q, p->seq_kv, (unsigned long long)pair_elements, (unsigned long long)max_elements);
    uint64_t chunk = nbh < max_elements / pair_elements ? nbh : max_elements / pair_elements;
    if (chunk * pair_bytes > dev->caps.max_alloc) chunk = dev->caps.max_alloc / pair_bytes;
    const uint64_t mem_for_scores = dev->caps.global_mem > io_bytes ? dev->caps.global_mem - io_bytes : 0;
    if (2 * chunk * pair_bytes > mem_for_scores) chunk = mem_for_scores / (2 * pair_bytes);
    if (chunk < 1)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED,
                        "does not fit: clblast needs %llu bytes for one (b, h) pair (a %dx%d score matrix, twice for "
                        "CLBlast's temporaries) plus %llu for Q/K/V/O; device allows %llu per allocation, %llu in all",
                        (unsigned long long)(2 * pair_bytes), p->seq_q, p->seq_kv, (unsigned long long)io_bytes,
                        (unsigned long long)dev->caps.max_alloc, (unsigned long long)dev->caps.global_mem);
    const uint64_t s_bytes = chunk * pair_bytes;
    char options[128];
    snprintf(options, sizeof options, "-cl-std=CL1.2 -DAVK_SOFTMAX_WG=%d", SOFTMAX_WG);
    const avk_cl_source sources[] = {AVK_CL_SRC_SOFTMAX};
    cl_program prog;
    attnvk_status s = avk_cl_program(dev, sources, 1, options, &prog);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_softmax_rows", SOFTMAX_WG, &k->main);
    if (s == ATTNVK_OK) s = avk_cl_kernel(dev, prog, "avk_timestamp", 1, &k->timestamp);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, 4, "placeholder", &k->dummy);
    if (s == ATTNVK_OK) s = avk_cl_create_buffer(dev, (size_t)s_bytes, "clblast score matrices", &k->scores);
    if (s != ATTNVK_OK) return s;
    k->is_clblast = 1;
    k->chunk_heads = (int)chunk;
    k->nk_loop = p->seq_kv;
    if (opts->test_flags & ATTNVK_TEST_SKIP_LAST_KV_TILE) k->nk_loop = ((p->seq_kv - 1) / SKIPPED_TILE) * SKIPPED_TILE;
    snprintf(info->implementation, sizeof info->implementation, "clblast");
    snprintf(info->variant, sizeof info->variant, "sgemm-batched");
    info->tile_br = 1;
    info->tile_bc = p->seq_kv;
    info->workgroup_size = SOFTMAX_WG;
    info->split_kv = 1;
    info->workspace_bytes = s_bytes;
    snprintf(info->params, sizeof info->params, "gemm=CLBlastSgemmBatched softmax_wg=%d batch=%d chunk=%d",
             SOFTMAX_WG, p->batch * p->heads, k->chunk_heads);
    return ATTNVK_OK;
}

#define SET_ARG(kernel, idx, value)                                                          \
    do {                                                                                     \
        cl_int e_ = avk_cl.SetKernelArg((kernel), (cl_uint)(idx), sizeof(value), &(value)); \
        if (e_ != CL_SUCCESS) {                                                              \
            s = avk_cl_fail(e_, "clSetKernelArg");                                           \
            goto done;                                                                       \
        }                                                                                    \
    } while (0)

attnvk_status avk_clblast_dispatch(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *a, double *ms)
{
    const attnvk_problem *p = &k->p;
    /* Q and K rows hold Dk values, V and O rows Dv */
    const avk_cl_strides st = avk_cl_layout_strides(p, p->head_dim);
    const avk_cl_strides sv = avk_cl_layout_strides(p, attnvk_problem_head_dim_v(p));
    const size_t nbh = (size_t)p->batch * p->heads, rows = (size_t)a->q_count, nk = (size_t)p->seq_kv;
    const size_t d = (size_t)p->head_dim, dv = (size_t)attnvk_problem_head_dim_v(p);
    const size_t group = (size_t)(p->heads / p->kv_heads);
    size_t *off = malloc(sizeof(size_t) * nbh * 5);
    float *coef = malloc(sizeof(float) * nbh * 3); /* alphas of Q K^T, betas, alphas of P V */
    cl_event first = NULL, last = NULL;
    attnvk_status s = ATTNVK_OK;
    if (!off || !coef) {
        s = avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    size_t *q_off = off, *kv_off = off + nbh, *s_off = off + 2 * nbh, *v_off = off + 3 * nbh, *o_off = off + 4 * nbh;
    const float scale = attnvk_problem_scale(p);
    for (size_t bh = 0; bh < nbh; ++bh) {
        const size_t b = bh / (size_t)p->heads, h = bh % (size_t)p->heads, g = h / group;
        q_off[bh] = (size_t)(b * st.q_batch + h * st.q_head) + (size_t)a->q_begin * (size_t)st.q_row;
        kv_off[bh] = (size_t)(b * st.kv_batch + g * st.kv_head);
        v_off[bh] = (size_t)(b * sv.kv_batch + g * sv.kv_head);
        o_off[bh] = (size_t)(b * sv.q_batch + h * sv.q_head) + (size_t)a->q_begin * (size_t)sv.q_row;
        s_off[bh] = (bh % (size_t)k->chunk_heads) * rows * nk; /* within the chunk's score buffer */
        coef[bh] = scale;
        coef[nbh + bh] = 0.0f;
        coef[2 * nbh + bh] = 1.0f;
    }
    /* a marker kernel first, so the time covers whatever CLBlast enqueues */
    const cl_int never = 0;
    SET_ARG(k->timestamp, 0, k->dummy);
    SET_ARG(k->timestamp, 1, never);
    const size_t one = 1;
    cl_int err = avk_cl.EnqueueNDRangeKernel(dev->queue, k->timestamp, 1, NULL, &one, &one, 0, NULL, &first);
    if (err != CL_SUCCESS) {
        s = avk_cl_fail(err, "enqueue timestamp kernel");
        goto done;
    }
    const cl_int nq = p->seq_q, nk_i = p->seq_kv, q_begin = a->q_begin, causal = p->causal, nk_loop = k->nk_loop;
    const cl_int write_lse = a->lse != NULL;
    const cl_mem lse = a->lse ? a->lse->mem : k->dummy;
    SET_ARG(k->main, 0, k->scores);
    SET_ARG(k->main, 1, lse);
    SET_ARG(k->main, 2, nq);
    SET_ARG(k->main, 3, nk_i);
    SET_ARG(k->main, 4, q_begin);
    SET_ARG(k->main, 5, causal);
    SET_ARG(k->main, 6, nk_loop);
    SET_ARG(k->main, 7, write_lse);
    {
        /* attnvk.h's score modifications; absent inputs are null buffers */
        const cl_int heads = p->heads, window_left = p->window ? p->window_left : -1,
                     window_right = p->window ? p->window_right : -1;
        const cl_int flags = (p->alibi ? 1 : 0) | (p->sinks ? 2 : 0) | (p->mask ? 4 : 0) |
                             (p->mask && p->mask_dtype == ATTNVK_F16 ? 8 : 0) |
                             (p->align == ATTNVK_ALIGN_TOP_LEFT ? 16 : 0);
        const cl_float softcap = p->softcap;
        const cl_mem slopes = a->alibi_slopes ? a->alibi_slopes->mem : NULL, sinks = a->sinks ? a->sinks->mem : NULL,
                     mask = a->mask ? a->mask->mem : NULL;
        const cl_long mask_pair = (cl_long)p->seq_q * p->seq_kv;
        const cl_long mask_b = p->mask && p->mask_batch > 1 ? mask_pair * p->mask_heads : 0,
                      mask_h = p->mask && p->mask_heads > 1 ? mask_pair : 0;
        SET_ARG(k->main, 9, heads);
        SET_ARG(k->main, 10, flags);
        SET_ARG(k->main, 11, window_left);
        SET_ARG(k->main, 12, window_right);
        SET_ARG(k->main, 13, softcap);
        SET_ARG(k->main, 14, slopes);
        SET_ARG(k->main, 15, sinks);
        SET_ARG(k->main, 16, mask);
        SET_ARG(k->main, 17, mask_b);
        SET_ARG(k->main, 18, mask_h);
    }
    for (int rep = 0; rep < a->launches; ++rep) {
        for (size_t c0 = 0; c0 < nbh; c0 += (size_t)k->chunk_heads) {
            const size_t cn = nbh - c0 < (size_t)k->chunk_heads ? nbh - c0 : (size_t)k->chunk_heads;
            /* S = scale Q K^T: rows x Nk per (b, h), K shared by the heads of a group */
            int code = clblast_sgemm_batched(CLBLAST_ROW_MAJOR, CLBLAST_NO_TRANS, CLBLAST_TRANS, rows, nk, d,
                                             coef + c0, a->q->mem, q_off + c0, (size_t)st.q_row, a->k->mem, kv_off + c0,
                                             (size_t)st.kv_row, coef + nbh + c0, k->scores, s_off + c0, nk, cn,
                                             &dev->queue, NULL);
            if (code != CLBLAST_SUCCESS) {
                s = clblast_fail(dev, code, "SgemmBatched (Q K^T)");
                goto done;
            }
            const cl_int bh_base = (cl_int)c0;
            SET_ARG(k->main, 8, bh_base);
            const size_t global[3] = {SOFTMAX_WG, rows, cn}, local[3] = {SOFTMAX_WG, 1, 1};
            err = avk_cl.EnqueueNDRangeKernel(dev->queue, k->main, 3, NULL, global, local, 0, NULL, NULL);
            if (err != CL_SUCCESS) {
                s = avk_cl_fail(err, "enqueue softmax");
                goto done;
            }
            /* O = P V, written straight into O's layout */
            const int final = rep == a->launches - 1 && c0 + cn == nbh;
            code = clblast_sgemm_batched(CLBLAST_ROW_MAJOR, CLBLAST_NO_TRANS, CLBLAST_NO_TRANS, rows, dv, nk,
                                         coef + 2 * nbh + c0, k->scores, s_off + c0, nk, a->v->mem, v_off + c0,
                                         (size_t)sv.kv_row, coef + nbh + c0, a->o->mem, o_off + c0, (size_t)sv.q_row,
                                         cn, &dev->queue, final ? &last : NULL);
            if (code != CLBLAST_SUCCESS) {
                s = clblast_fail(dev, code, "SgemmBatched (P V)");
                goto done;
            }
        }
    }
    s = avk_cl_wait_timed(dev, first, last, ms);
    if (s == ATTNVK_OK) *ms /= a->launches;
done:
    if (first || last) avk_cl.Finish(dev->queue);
    if (first) avk_cl.ReleaseEvent(first);
    if (last) avk_cl.ReleaseEvent(last);
    free(off);
    free(coef);
    return s;
}
