/* The one seam between the API-neutral core and each GPU API.
 * A backend lives in runtime/<api>/, includes its vendor headers there only,
 * and exports one `const attnvk_backend avk_backend_<api>`. */
#ifndef ATTNVK_BACKEND_H
#define ATTNVK_BACKEND_H

#include "attnvk/attnvk.h"
#include "core/error.h"

typedef struct avk_bdev avk_bdev;       /* an opened device, backend-defined */
typedef struct avk_bbuf avk_bbuf;       /* a device buffer, backend-defined */
typedef struct avk_bkernel avk_bkernel; /* a prepared kernel, backend-defined */
struct avk_peak_sample;                 /* core/peak.h */
struct avk_tuning;                      /* core/tuning.h */

typedef struct avk_dispatch {
    avk_bbuf *q, *k, *v, *o;
    avk_bbuf *lse;        /* NULL unless the kernel was prepared with write_lse */
    avk_bbuf *block_table, *seq_lens, *kv_scales; /* NULL unless the problem needs them */
    int q_begin, q_count; /* query rows [q_begin, q_begin + q_count) of every (b, h) */
    int launches;         /* >= 1: the kernel runs this many times back to back, one wait */
    avk_bbuf *mask, *sinks, *alibi_slopes; /* NULL unless the problem asks for them */
    /* attnvk_kernel_run_async: enqueue and return without waiting (no time
     * is measured; launches is 1). stream: the caller's CUstream /
     * hipStream_t / cl_command_queue, NULL for the device's own queue (the
     * core passes NULL on Vulkan and the CPU). */
    int async;
    void *stream;
    avk_bbuf *block_layout; /* NULL unless the problem is block-sparse */
    avk_bbuf *q_scales;     /* f32 [H], NULL unless q_format is fp8 */
} avk_dispatch;

/* attnvk_kernel_backward's buffers: fwd as the forward's (lse always set, every
 * query row, launches 1, never async), then the gradients' (d_sinks NULL
 * unless the problem has sinks and the caller asked for it). */
typedef struct avk_backward_dispatch {
    avk_dispatch fwd;
    avk_bbuf *d_o, *dq, *dk, *dv, *d_sinks;
    int deterministic; /* no floating-point atomics: bit-identical runs */
    attnvk_kernel_info *info; /* never NULL, zeroed: the backend describes what ran there (or leaves it) */
} avk_backward_dispatch;

/* Ring attention's merge (core/ring.c): folds one block's partial result
 * into a rank's running (O, LSE) accumulator, row by row. A row is
 * r = (b * heads + h) * rows_per_head + i; there are batch * heads *
 * rows_per_head rows of dv values, contiguous (BHSD).
 *   lp = lse_part[r]
 *   first: acc = (o_part[r], lp)
 *   else:  m = max(lse_acc[r], lp); if m == -inf: acc = (0, -inf)
 *          else wa = exp(lse_acc[r] - m), wp = exp(lp - m),
 *          acc = ((o_acc[r] wa + o_part[r] wp) / (wa + wp), m + log(wa + wp))
 * o_acc and lse_acc (f32) are written with the merged values; o_out, when
 * not NULL, too (in dtype: the run's output, at the last block).
 * o_part holds the block's O in dtype (a kernel's output), lse_part its f32
 * LSE (-inf for a row with no visible key, whose o_part is zeros). */
typedef struct avk_merge_args {
    avk_bbuf *o_part, *lse_part;
    avk_bbuf *o_acc, *lse_acc;
    avk_bbuf *o_out;      /* NULL, or the merged O in dtype */
    attnvk_dtype dtype;
    int batch, heads, rows_per_head, dv;
    int first;
} avk_merge_args;

typedef struct attnvk_backend {
    attnvk_api api;
    /* Loads the API's library (dlopen/volk) and counts its devices. On failure
     * returns ATTNVK_ERROR_UNAVAILABLE with the reason via avk_set_error. */
    attnvk_status (*init)(int *device_count);
    /* Fills everything but api/index (the core sets those). */
    attnvk_status (*describe)(int device, attnvk_device_info *info);
    attnvk_status (*open)(int device, avk_bdev **out);
    void (*close)(avk_bdev *dev);

    attnvk_status (*alloc)(avk_bdev *dev, size_t bytes, avk_bbuf **out);
    void (*release)(avk_bdev *dev, avk_bbuf *buf);
    attnvk_status (*upload)(avk_bdev *dev, avk_bbuf *buf, size_t offset, const void *src, size_t bytes);
    attnvk_status (*download)(avk_bdev *dev, avk_bbuf *buf, size_t offset, void *dst, size_t bytes);

    /* attnvk's flash kernel first ("attnvk"), then vendor baselines, each
     * with the ATTNVK_FEATURE_* bits it runs (the core refuses the rest
     * before prepare is called). */
    int (*implementations)(avk_bdev *dev, attnvk_impl_info *out, int max);
    /* Compiles (or fetches from cache) what the problem needs. The problem is
     * already validated; options are never NULL. UNSUPPORTED for shapes the
     * implementation can't run, with the reason. */
    attnvk_status (*prepare)(avk_bdev *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                             avk_bkernel **out, attnvk_kernel_info *info);
    /* Runs args->launches times back to back (one submission where the API
     * allows: no host round trip between launches), waits once, and returns
     * the device-timestamp time per launch in ms. */
    attnvk_status (*dispatch)(avk_bdev *dev, avk_bkernel *k, const avk_dispatch *args, double *device_ms);
    void (*release_kernel)(avk_bdev *dev, avk_bkernel *k);
    void (*shutdown)(void); /* may be NULL */
    /* The variant names prepare accepts for attnvk's kernel, NULL-terminated
     * (the core answers "this API has no such variant" for any other name). */
    const char *const *variants;
    /* Measures the device's achievable read bandwidth (a streaming read of a
     * buffer much larger than the last-level cache), in 1e9 bytes/s. May be
     * NULL; the core caches the answer per device and driver (core/bandwidth.h). */
    attnvk_status (*read_bandwidth)(avk_bdev *dev, double *gbps);
    /* Measures one peak (`attnvk peak`): kind is an avk_peak_kind of core/peak.h
     * (copy bandwidth, f32/f16 FMA, matrix units), the result in *out; OK, or
     * UNSUPPORTED with the reason where the device has no way to run it. Warms
     * up, takes the best of a few runs, each well under a second. May be NULL;
     * the core caches the answers per device and driver (core/peak.h). */
    attnvk_status (*measure_peak)(avk_bdev *dev, int kind, struct avk_peak_sample *out);

    /* Interop (attnvk_buffer_wrap): a buffer over the caller's memory. The
     * core has checked the API, a non-NULL handle, memory NULL outside
     * Vulkan, bytes > 0 and that offset + bytes does not overflow; the backend
     * checks alignment (INVALID_ARGUMENT, one line) and whatever its API lets
     * it verify. release() of a wrapped buffer frees the wrapper only. */
    attnvk_status (*wrap)(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out);
    /* Fills the API's handles and wrap_alignment (the core zeroed *out and set api). */
    attnvk_status (*native)(avk_bdev *dev, attnvk_native_handles *out);
    /* Waits for every async dispatch on the device's own queue; a failure
     * the device met while running one is returned here. */
    attnvk_status (*wait)(avk_bdev *dev);
    /* `attnvk tune`: the distinct configurations (avk_tuning entries, variant names static)
     * of attnvk's kernel its chooser accepts for p on dev as an explicit entry, i.e. that
     * pass the same checks as the table's (core/tuning.h); up to max written, the count
     * returned. May be NULL: nothing to tune. */
    int (*tuning_candidates)(avk_bdev *dev, const attnvk_problem *p, struct avk_tuning *out, int max);
    /* attnvk_kernel_backward on a kernel prepare made: dQ, dK, dV (and d(sink))
     * written whole, synchronously; *device_ms its time. The core has checked
     * the buffers and refused paged or quantized caches. May be NULL: the
     * core answers UNSUPPORTED ("the <api> backend has no backward pass yet");
     * an implementation without one (a vendor baseline) answers UNSUPPORTED itself. */
    attnvk_status (*backward)(avk_bdev *dev, avk_bkernel *k, const avk_backward_dispatch *args, double *device_ms);
    /* Ring attention's merge (avk_merge_args), enqueued on the device's own
     * queue after the runs before it, like an async dispatch (the CPU runs it
     * at once). May be NULL: the core merges on the host. */
    attnvk_status (*merge)(avk_bdev *dev, const avk_merge_args *args);
    /* Ring attention's device-to-device transport among ranks that are all
     * devices of this backend (NCCL on CUDA, RCCL on HIP). May be NULL: the
     * core moves K/V through host memory. See core/ring_comm.h. */
    const struct avk_ring_comm_ops *ring_comm;
} attnvk_backend;

#endif
