/* attnvk — portable flash attention across Vulkan, OpenCL, CUDA and HIP.
 *
 * Semantics (every backend, the CPU reference and the tests share them):
 *   O[b,h,i,:] = softmax_j(scale * Q[b,h,i,:] . K[b,g,j,:]) V[b,g,j,:]
 *   - scale defaults to 1/sqrt(D) (pass scale = 0);
 *   - GQA/MQA: query head h reads kv head g = h / (H / H_kv);
 *   - causal is bottom-right aligned: key j is visible to query i iff
 *     j <= i + Nk - Nq (what KV-cache decode needs); a row that sees no key
 *     outputs zeros (and its log-sum-exp is -inf);
 *   - layouts: BHSD stores Q as [B][H][Nq][D], K/V as [B][H_kv][Nk][D];
 *     BSHD stores Q as [B][Nq][H][D], K/V as [B][Nk][H_kv][D]. O has Q's shape.
 *   - head dims: Q and K share D (= Dk, head_dim); V and O have Dv
 *     (head_dim_v, 0 meaning Dk), so O is [.., Nq, Dv]. Dv != Dk takes the
 *     pairs DeepSeek's MLA uses: 192/128 (prefill) and 576/512 (absorbed decode).
 *   - dtype is the storage and compute precision of Q, K, V and O on the
 *     device; softmax statistics are always kept in f32 or better.
 *   - KV caches (decode and prefill alike):
 *     - kv_format stores K and V quantized (attnvk_kv_format); Q and O keep
 *       dtype, and the kernel computes in dtype on the dequantized values.
 *     - page_size > 0 makes K and V paged: [num_pages][page_size][H_kv][D]
 *       rows, a block table int32 [B][max_pages] naming each sequence's
 *       pages in order, and seq_lens int32 [B] each sequence's key count
 *       (<= Nk, which bounds them). ragged = 1 takes seq_lens with a
 *       contiguous cache too. Causal stays bottom-right per sequence: key j
 *       is visible to query i of sequence b iff j <= i + seq_lens[b] - Nq.
 *       Table entries past a sequence's last page are never read.
 *
 * Ordering (runs, buffers, streams):
 *   - attnvk_kernel_run* are synchronous: they return when O (and LSE) are
 *     written. attnvk_buffer_write/read are synchronous too.
 *   - attnvk_kernel_run_async enqueues and returns. On the device's own
 *     queue (stream NULL) every later call on that device that touches the
 *     device (runs, buffer writes and reads, destroys) is ordered after it,
 *     as if the run had finished; attnvk_device_wait blocks until it has, and
 *     reports a failure the device met while running it. On a caller's CUDA/HIP
 *     stream or OpenCL queue the run is ordered with that stream's other
 *     work only: synchronize the stream (cuStreamSynchronize, clFinish, or
 *     more work on it) before the host or another stream reads O;
 *     attnvk_device_wait does not wait for it.
 *   - runs of one kernel use one split-KV workspace: two runs of the same
 *     kernel on different streams must not overlap.
 *   - wrapped buffers (attnvk_buffer_wrap) behave exactly like attnvk's own
 *     in every call; their memory stays the caller's, who keeps it alive
 *     (and does not write what a pending run reads) until the runs using it
 *     are complete.
 *   - the problem and option structs grow only at their end, and a new
 *     field's zero value keeps the old behaviour: fill them with
 *     attnvk_problem_init / attnvk_run_options_init or `= {...}` designated
 *     initializers, and rebuild against the header of the library you load.
 *
 * Every call returns an attnvk_status; attnvk_last_error() gives the
 * one-line message for the calling thread's last failure.
 */
#ifndef ATTNVK_H
#define ATTNVK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNVK_VERSION_STRING "0.1.0"

typedef enum attnvk_status {
    ATTNVK_OK = 0,
    ATTNVK_ERROR_INVALID_ARGUMENT, /* bad problem, option or handle */
    ATTNVK_ERROR_UNSUPPORTED,      /* valid, but this device/implementation can't run it */
    ATTNVK_ERROR_UNAVAILABLE,      /* library or device missing */
    ATTNVK_ERROR_OUT_OF_MEMORY,    /* host or device allocation failed */
    ATTNVK_ERROR_DEVICE_LOST,      /* driver reported a lost device / illegal access */
    ATTNVK_ERROR_COMPILE,          /* kernel build failed (the log is in the message) */
    ATTNVK_ERROR_IO,               /* file could not be read or written */
    ATTNVK_ERROR_BACKEND,          /* any other failure reported by the API */
} attnvk_status;

typedef enum attnvk_api {
    ATTNVK_API_CPU = 0,
    ATTNVK_API_VULKAN,
    ATTNVK_API_OPENCL,
    ATTNVK_API_CUDA,
    ATTNVK_API_HIP,
    ATTNVK_API_COUNT
} attnvk_api;

typedef enum attnvk_dtype { ATTNVK_F32 = 0, ATTNVK_F16, ATTNVK_BF16 } attnvk_dtype;
typedef enum attnvk_layout { ATTNVK_LAYOUT_BHSD = 0, ATTNVK_LAYOUT_BSHD } attnvk_layout;
/* How K and V are stored. A "row" is the D values of one (key, kv head).
 * Q8_0 and Q4_0 are ggml's blocks along D (bit-compatible with llama.cpp):
 * every 32 values are one f16 scale d and 32 int8 q (x = d * q), or d and 16
 * bytes of nibbles (values 0..15 in the low nibbles, 16..31 in the high
 * ones, x = d * (q - 8)). FP8 is OCP e4m3 with one f32 scale per kv head for
 * K and one for V (x = scale * e4m3), read from the kv_scales buffer. */
typedef enum attnvk_kv_format {
    ATTNVK_KV_DTYPE = 0, /* the problem's dtype */
    ATTNVK_KV_Q8_0,
    ATTNVK_KV_Q4_0,
    ATTNVK_KV_FP8,
    ATTNVK_KV_FORMAT_COUNT
} attnvk_kv_format;
typedef enum attnvk_device_type {
    ATTNVK_DEVICE_OTHER = 0,
    ATTNVK_DEVICE_DISCRETE,
    ATTNVK_DEVICE_INTEGRATED,
    ATTNVK_DEVICE_CPU,
} attnvk_device_type;

/* Where query row i sits among a sequence's len keys, for causal masks,
 * windows and ALiBi: i' = i + len - Nq (bottom-right, the default, as in
 * decode) or i' = i (top-left, PyTorch's is_causal). */
typedef enum attnvk_causal_align { ATTNVK_ALIGN_BOTTOM_RIGHT = 0, ATTNVK_ALIGN_TOP_LEFT } attnvk_causal_align;

enum { ATTNVK_MAX_DILATED_GROUPS = 8 };

/* Attention with score modifications and visibility bounds, in this order:
 *   (i' is then moved by position_offset)
 *   s = scale * q_i . k_j; softcap > 0: s = softcap * tanh(s / softcap);
 *   alibi: s += slope[h] * (j - i'); mask: s += mask[b][h][i][j];
 *   key j visible iff (window_left < 0 or j >= i' - window_left) and
 *   (window_right < 0 or j <= i' + window_right) and (!causal or j <= i');
 *   p_ij = exp(s_ij - m) / (exp(sink_h - m) + sum_j exp(s_ij - m)), with
 *   m = max(sink_h, max_j s_ij) when sinks are given;
 *   a row with no visible key and no sink outputs zeros; the LSE includes the sink. */
typedef struct attnvk_problem {
    int batch;       /* B */
    int heads;       /* H, query heads */
    int kv_heads;    /* H_kv; H % H_kv == 0 */
    int seq_q;       /* Nq */
    int seq_kv;      /* Nk */
    int head_dim;    /* D */
    int causal;      /* bottom-right aligned */
    float scale;     /* 0 -> 1/sqrt(D) */
    attnvk_dtype dtype;
    attnvk_layout layout;     /* of Q and O, and of K and V unless paged */
    attnvk_kv_format kv_format;
    int page_size;            /* 0: contiguous K/V; else tokens per page */
    int num_pages;            /* paged: pages in K and in V */
    int max_pages;            /* paged: block table width */
    int ragged;               /* contiguous K/V with seq_lens (paged always has them) */
    attnvk_causal_align align; /* i' for causal, windows and ALiBi */
    int window;               /* 1: window_left / window_right bound each row's keys */
    int window_left, window_right; /* with window: keys i' - left .. i' + right; -1: unbounded that side */
    float softcap;            /* > 0: scores pass through softcap * tanh(s / softcap) */
    int alibi;                /* 1: s += slope[h] * (j - i'); slopes: f32 [H] input */
    int sinks;                /* 1: a sink logit per head (f32 [H] input) in every row's softmax */
    int mask;                 /* 1: an additive mask [mask_batch][mask_heads][Nq][Nk] input (-inf allowed) */
    int mask_batch, mask_heads; /* with mask: 1 or B, 1 or H (broadcast) */
    attnvk_dtype mask_dtype;  /* with mask: its storage on the device, f32 or f16 */
    int head_dim_v;           /* Dv of V and O; 0: = head_dim. Dv != head_dim: 192/128 or 576/512 (Dk/Dv),
                                 with a contiguous cache in the problem's dtype */
    int position_offset;      /* added to every row's i' (|offset| < 2^30): the query rows sit that many
                                 positions further along the keys, for causal masks, windows and ALiBi
                                 (ring attention's blocks: a query chunk against another chunk's keys);
                                 attnvk's kernels only (ATTNVK_FEATURE_POSITION_OFFSET) */
    /* Block-sparse attention: key j is visible to query i only where
     * L[b][h][i / block_q][j / block_k] != 0, on top of every other rule; L is
     * the block_layout input, uint8 [layout_batch][layout_heads][ceil(Nq /
     * block_q)][ceil(Nk / block_k)] with layout_batch 1 or B and layout_heads
     * 1 or H (broadcast). A row that sees no key outputs zeros, as always. */
    int block_sparse;
    int block_q, block_k;
    int layout_batch, layout_heads;
    /* LongNet's dilated attention (Nq = Nk): dilated_groups G > 0 splits the
     * heads into G consecutive groups (H % G == 0); group g has segment length
     * s = dilated_segment[g], rate r = dilated_rate[g] and offset o = g % r.
     * Position p is active iff (p % s) % r == o; an active query p sees exactly
     * the active keys j of its own segment (j / s == p / s; causal: j <= p),
     * with plain softmax over them; an inactive query outputs zeros (LSE -inf).
     * The last segment may be shorter. Combines with causal, softcap and GQA. */
    int dilated_groups;
    int dilated_segment[ATTNVK_MAX_DILATED_GROUPS];
    int dilated_rate[ATTNVK_MAX_DILATED_GROUPS];
    /* How Q is stored: ATTNVK_KV_DTYPE (the problem's dtype) or ATTNVK_KV_FP8,
     * OCP e4m3 bytes in Q's layout with one f32 scale per query head
     * (q = q_scales[h] * e4m3, the q_scales input). An fp8 Q needs an fp8 cache
     * (kv_format ATTNVK_KV_FP8) and dtype f16 or bf16, which is O's: that is
     * the FP8 forward (FlashAttention-3's: P is rounded to e4m3 for P V too). */
    attnvk_kv_format q_format;
} attnvk_problem;

enum { ATTNVK_UUID_SIZE = 16, ATTNVK_MAX_SUBGROUP_SIZES = 4 };

typedef struct attnvk_device_info {
    attnvk_api api;
    int index;                   /* within its API, after ATTNVK_VISIBLE_DEVICES */
    char name[256];
    char vendor[64];
    uint32_t vendor_id;          /* PCI vendor id where known (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel) */
    attnvk_device_type type;
    char driver_version[64];
    char api_version[64];
    char architecture[64];       /* e.g. sm_90, gfx90a; empty when unknown */
    uint64_t memory_bytes;
    int compute_units;
    int subgroup_sizes[ATTNVK_MAX_SUBGROUP_SIZES]; /* 0-terminated */
    uint64_t shared_memory_per_group;
    int max_workgroup_size;
    int fp16;                    /* f16 arithmetic + storage usable by attnvk kernels */
    int bf16;
    int cooperative_matrix;      /* tensor cores / matrix units reachable from this API */
    int has_uuid;
    uint8_t uuid[ATTNVK_UUID_SIZE];
    char default_variant[64];    /* what attnvk would pick for D=128 f16 (f32 if no fp16) */
} attnvk_device_info;

/* One way of computing attention on a device: attnvk's flash kernel
 * ("attnvk") or a vendor-native baseline ("cudnn", "cublas", "clblast"). */
/* What an implementation can run beyond plain attention (a bit set). */
enum {
    ATTNVK_FEATURE_PAGED = 1u << 0,   /* page_size > 0 */
    ATTNVK_FEATURE_RAGGED = 1u << 1,  /* seq_lens with a contiguous cache */
    ATTNVK_FEATURE_KV_Q8_0 = 1u << 2,
    ATTNVK_FEATURE_KV_Q4_0 = 1u << 3,
    ATTNVK_FEATURE_KV_FP8 = 1u << 4,
    ATTNVK_FEATURE_SOFTCAP = 1u << 5,
    ATTNVK_FEATURE_WINDOW = 1u << 6,
    ATTNVK_FEATURE_ALIBI = 1u << 7,
    ATTNVK_FEATURE_SINKS = 1u << 8,
    ATTNVK_FEATURE_MASK = 1u << 9,
    ATTNVK_FEATURE_TOP_LEFT = 1u << 10, /* top-left alignment where it matters (causal, window, ALiBi) */
    ATTNVK_FEATURE_HEAD_DIM_V = 1u << 11, /* V and O head dim differs from Q and K's (head_dim_v) */
    ATTNVK_FEATURE_POSITION_OFFSET = 1u << 12, /* position_offset != 0 where it matters (causal, window, ALiBi) */
    ATTNVK_FEATURE_BLOCK_SPARSE = 1u << 13, /* block_sparse: a block layout */
    ATTNVK_FEATURE_DILATED = 1u << 14,      /* dilated_groups > 0: LongNet's dilated attention */
    ATTNVK_FEATURE_Q_FP8 = 1u << 15,        /* q_format fp8: the FP8 forward (Q, K and V in e4m3) */
};
typedef struct attnvk_impl_info {
    char name[32];
    int fused;                   /* 1: O(N) memory; 0: materialises Nq x Nk scores */
    int available;
    char reason[256];            /* why not available */
    unsigned features;           /* ATTNVK_FEATURE_* */
} attnvk_impl_info;

typedef struct attnvk_kernel_options {
    const char *implementation;  /* NULL or "attnvk": the flash kernel */
    const char *variant;         /* NULL: picked from the device's tuning table */
    int tile_br, tile_bc;        /* 0: from the table */
    int split_kv;                /* 0: automatic; 1: never split; n > 1: n splits */
    int write_lse;               /* also write log-sum-exp per row (f32, [B][H][Nq]) */
    unsigned test_flags;         /* reserved for attnvk's own tests: leave 0 */
} attnvk_kernel_options;

typedef struct attnvk_kernel_info {
    char implementation[32];
    char variant[64];
    int tile_br, tile_bc;
    int workgroup_size;
    int split_kv;
    uint64_t workspace_bytes;    /* device memory beyond Q, K, V, O, LSE */
    char params[256];            /* further "key=value" details */
} attnvk_kernel_info;

typedef struct attnvk_context attnvk_context;
typedef struct attnvk_device attnvk_device;
typedef struct attnvk_buffer attnvk_buffer;
typedef struct attnvk_kernel attnvk_kernel;

/* ---- errors and names ---- */
const char *attnvk_last_error(void);
const char *attnvk_status_name(attnvk_status s);
const char *attnvk_api_name(attnvk_api api);          /* "cpu", "vulkan", ... */
int attnvk_api_from_name(const char *name, attnvk_api *out); /* 1 on success */
const char *attnvk_dtype_name(attnvk_dtype d);
int attnvk_dtype_from_name(const char *name, attnvk_dtype *out);
size_t attnvk_dtype_size(attnvk_dtype d);
const char *attnvk_device_type_name(attnvk_device_type t);
/* 1 when this build includes the API's backend (whether or not it loads here). */
int attnvk_api_compiled(attnvk_api api);
/* The variants of attnvk's kernel an API's backend knows (what
 * attnvk_kernel_options.variant may name there), NULL-terminated; empty when
 * the API is not compiled in. */
const char *const *attnvk_api_variants(attnvk_api api);
/* Every implementation name a backend may offer ("attnvk", "cudnn", ...),
 * NULL-terminated; attnvk_device_implementations says what a device offers. */
const char *const *attnvk_implementation_names(void);

/* ---- context: loads every compiled-in API once ---- */
attnvk_status attnvk_context_create(attnvk_context **out);
void attnvk_context_destroy(attnvk_context *ctx);
/* ATTNVK_OK when the API is usable; otherwise the reason it is not. */
attnvk_status attnvk_api_status(const attnvk_context *ctx, attnvk_api api, const char **reason);
int attnvk_device_count(const attnvk_context *ctx);   /* all APIs, visible devices */
const attnvk_device_info *attnvk_device_info_at(const attnvk_context *ctx, int i);
/* Finds devices by "api", "api:index", "index" (global) or a name substring
 * (case-insensitive). Fills up to max indices into out; returns the count. */
int attnvk_device_select(const attnvk_context *ctx, const char *spec, int *out, int max);
/* ATTNVK_OK when spec is a non-empty comma list whose every item matches a
 * visible device; else ATTNVK_ERROR_INVALID_ARGUMENT with a one-line reason
 * naming the item and listing the visible devices. */
attnvk_status attnvk_device_spec_check(const attnvk_context *ctx, const char *spec);

/* ---- devices and buffers ---- */
attnvk_status attnvk_device_open(attnvk_context *ctx, int i, attnvk_device **out);
void attnvk_device_close(attnvk_device *dev);
const attnvk_device_info *attnvk_device_info_of(const attnvk_device *dev);
int attnvk_device_implementations(attnvk_device *dev, attnvk_impl_info *out, int max);
/* The device's achievable read bandwidth in GB/s (1e9 bytes/s), from a large
 * streaming read kernel, measured once and cached per API, device and driver.
 * allow_measure = 0 answers only from the cache (ATTNVK_ERROR_UNAVAILABLE on a
 * miss). *cached (may be NULL) says whether the value came from the cache.
 * ATTNVK_ERROR_UNSUPPORTED when the API cannot measure it. */
attnvk_status attnvk_device_read_bandwidth(attnvk_device *dev, int allow_measure, double *gbps, int *cached);
/* The cached read bandwidth of a listed device without opening it;
 * ATTNVK_ERROR_UNAVAILABLE when it has not been measured under this driver. */
attnvk_status attnvk_cached_read_bandwidth(const attnvk_device_info *info, double *gbps);

attnvk_status attnvk_buffer_create(attnvk_device *dev, size_t bytes, attnvk_buffer **out);
void attnvk_buffer_destroy(attnvk_buffer *buf);
attnvk_status attnvk_buffer_write(attnvk_buffer *buf, size_t offset, const void *src, size_t bytes);
attnvk_status attnvk_buffer_read(attnvk_buffer *buf, size_t offset, void *dst, size_t bytes);

/* ---- interop: caller-owned device memory and attnvk's native handles ---- */
/* Memory the caller allocated on the device's API, to wrap as an attnvk_buffer.
 * handle: CUDA: a CUdeviceptr cast to void *; HIP: a device pointer; OpenCL:
 * a cl_mem created on attnvk's cl_context; Vulkan: a VkBuffer created on
 * attnvk's VkDevice with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT (and TRANSFER_SRC
 * / TRANSFER_DST for attnvk_buffer_read / write); CPU: a host pointer.
 * The usable range is [offset, offset + bytes) of handle; Vulkan shaders read
 * whole 32-bit words, so a VkBuffer extends to offset + bytes rounded up to 4.
 * offset must be a multiple of attnvk_native_handles.wrap_alignment (on CUDA,
 * HIP and the CPU the address handle + offset must be). */
typedef struct attnvk_external_buffer {
    attnvk_api api;      /* must match the device's API */
    void *handle;        /* CUDA: CUdeviceptr cast to void*; HIP: device pointer; OpenCL: cl_mem; Vulkan: VkBuffer */
    void *memory;        /* Vulkan: the VkDeviceMemory bound to it (may be NULL); others NULL */
    size_t offset;       /* bytes from handle's start */
    size_t bytes;        /* usable size */
} attnvk_external_buffer;
/* Wraps ext as a buffer of dev: runs, attnvk_buffer_write/read and
 * attnvk_kernel_run* take it like one attnvk created. Mismatched API, a NULL
 * handle, memory set outside Vulkan, an offset misaligned for the backend,
 * bytes == 0 or a range past the cl_mem's size: INVALID_ARGUMENT with one
 * line. attnvk_buffer_destroy on a wrapped buffer frees attnvk's wrapper,
 * never the caller's memory (OpenCL: attnvk holds its own reference to the
 * cl_mem while wrapped). */
attnvk_status attnvk_buffer_wrap(attnvk_device *dev, const attnvk_external_buffer *ext, attnvk_buffer **out);

/* The API objects of an opened device, so a caller can create memory (and
 * streams) attnvk can use. Handles are the API's own, cast to void *; the
 * fields of other APIs are zero. They stay attnvk's: never destroy them, and
 * they are valid until attnvk_device_close. */
typedef struct attnvk_native_handles {
    attnvk_api api;
    size_t wrap_alignment;       /* attnvk_buffer_wrap's offset (address) alignment in bytes */
    /* Vulkan */
    void *vk_instance;           /* VkInstance */
    void *vk_physical_device;    /* VkPhysicalDevice */
    void *vk_device;             /* VkDevice */
    void *vk_queue;              /* VkQueue attnvk submits to (externally synchronized: not while attnvk runs) */
    uint32_t vk_queue_family;    /* its family index */
    /* OpenCL */
    void *cl_platform;           /* cl_platform_id */
    void *cl_context;            /* cl_context */
    void *cl_device;             /* cl_device_id */
    void *cl_queue;              /* cl_command_queue attnvk enqueues on (in order, profiling) */
    /* CUDA: every attnvk allocation and launch is in the device's primary context */
    int cuda_device;             /* CUdevice (an int: the device handle cuDeviceGet returns) */
    void *cuda_context;          /* CUcontext: the primary context (cuDevicePrimaryCtxRetain) */
    void *cuda_stream;           /* CUstream attnvk's own work goes on */
    /* HIP */
    int hip_device;              /* the HIP device ordinal (hipSetDevice) */
    void *hip_stream;            /* hipStream_t attnvk's own work goes on */
    /* CPU: handles are host pointers; nothing else */
} attnvk_native_handles;
attnvk_status attnvk_device_native(attnvk_device *dev, attnvk_native_handles *out);

/* ---- kernels ---- */
/* A zeroed problem with the defaults (every default is zero: scale 1/sqrt(D),
 * bottom-right causal alignment, contiguous K/V in dtype, Dv = D); fields
 * added to attnvk_problem later default to zero too. */
void attnvk_problem_init(attnvk_problem *p);
attnvk_status attnvk_problem_validate(const attnvk_problem *p); /* shape rules, one-line error */
float attnvk_problem_scale(const attnvk_problem *p);            /* effective scale, 1/sqrt(Dk) by default */
int attnvk_problem_head_dim_v(const attnvk_problem *p);         /* effective Dv (head_dim_v, or head_dim) */
size_t attnvk_q_elements(const attnvk_problem *p);              /* Q (= O when Dv = Dk) */
size_t attnvk_kv_elements(const attnvk_problem *p);             /* K (= V when Dv = Dk) */
size_t attnvk_v_elements(const attnvk_problem *p);              /* V: B*H_kv*Nk*Dv */
size_t attnvk_o_elements(const attnvk_problem *p);              /* O: B*H*Nq*Dv */
/* FLOPs by the FlashAttention convention: 2*B*H*Nq*Nk*(Dk+Dv), halved when
 * causal with Nq == Nk; otherwise (Nq != Nk, windows) the visible pairs are
 * counted exactly. */
double attnvk_problem_flops(const attnvk_problem *p);
/* Bytes of a block-sparse problem's layout (0 without one). */
size_t attnvk_block_layout_bytes(const attnvk_problem *p);

attnvk_status attnvk_kernel_prepare(attnvk_device *dev, const attnvk_problem *p,
                                    const attnvk_kernel_options *opts, /* may be NULL */
                                    attnvk_kernel **out, attnvk_kernel_info *info);
/* Runs once and waits; *device_ms is the kernel time from device timestamps.
 * lse may be NULL (unless write_lse was set). q_begin/q_count select a range of
 * query rows (0, 0 = all); rows outside it are left untouched. A dilated problem
 * on Vulkan and OpenCL runs all rows at once (its strided views): a range other
 * than all of them is INVALID_ARGUMENT there. */
attnvk_status attnvk_kernel_run(attnvk_kernel *k, attnvk_buffer *q, attnvk_buffer *kbuf,
                                attnvk_buffer *v, attnvk_buffer *o, attnvk_buffer *lse,
                                int q_begin, int q_count, double *device_ms);
void attnvk_kernel_destroy(attnvk_kernel *k);

/* Every buffer a run may read or write; the KV-cache extras are NULL unless
 * the problem needs them. */
typedef struct attnvk_tensors {
    attnvk_buffer *q, *k, *v, *o;
    attnvk_buffer *lse;          /* f32 [B][H][Nq] (when write_lse) */
    attnvk_buffer *block_table;  /* int32 [B][max_pages], paged */
    attnvk_buffer *seq_lens;     /* int32 [B], paged or ragged */
    attnvk_buffer *kv_scales;    /* f32 [2][H_kv]: K's then V's, FP8 */
    attnvk_buffer *mask;         /* mask_dtype [mask_batch][mask_heads][Nq][Nk], with mask */
    attnvk_buffer *sinks;        /* f32 [H], with sinks */
    attnvk_buffer *alibi_slopes; /* f32 [H], with alibi */
    attnvk_buffer *block_layout; /* uint8 [layout_batch][layout_heads][row blocks][key blocks], with block_sparse */
    attnvk_buffer *q_scales;     /* f32 [H]: Q's scale per query head, with q_format fp8 */
} attnvk_tensors;
/* attnvk_kernel_run for any problem. Lengths past Nk are clamped to Nk and
 * page indices into 0..num_pages-1, so bad table contents never fault. */
attnvk_status attnvk_kernel_run_tensors(attnvk_kernel *k, const attnvk_tensors *t, int q_begin, int q_count,
                                        double *device_ms);
/* attnvk_kernel_run_tensors `launches` times (1..ATTNVK_MAX_LAUNCHES) back to
 * back: one submission where the API allows, one wait; *mean_ms is the device
 * time per launch. A sub-millisecond kernel timed one launch per wait also
 * measures the host's gap and how the driver clocks an idle GPU; back-to-back
 * launches measure the kernel as a model's layers run it. */
#define ATTNVK_MAX_LAUNCHES 1000
attnvk_status attnvk_kernel_run_repeated(attnvk_kernel *k, const attnvk_tensors *t, int q_begin, int q_count,
                                         int launches, double *mean_ms);

/* ---- asynchronous runs (see "Ordering" at the top) ---- */
/* Options of attnvk_kernel_run_async. struct_size lets the struct grow:
 * attnvk_run_options_init sets it (and zeroes the rest). */
typedef struct attnvk_run_options {
    size_t struct_size;          /* sizeof(attnvk_run_options) */
    int q_begin, q_count;        /* query rows, as attnvk_kernel_run (0, 0: all) */
    /* NULL: the device's own queue. CUDA: a CUstream of the device's primary
     * context (CU_STREAM_LEGACY / CU_STREAM_PER_THREAD too); HIP: a
     * hipStream_t of the device; OpenCL: an in-order cl_command_queue on
     * attnvk's cl_context. Vulkan and the CPU take no stream. attnvk's
     * kernel only: a vendor baseline on a caller's stream is UNSUPPORTED. */
    void *stream;
} attnvk_run_options;
void attnvk_run_options_init(attnvk_run_options *o);
/* Enqueues one run of k on t and returns without waiting for it (Vulkan:
 * one submission and its fence; CUDA, HIP, OpenCL: the launches on the
 * stream; the CPU runs it before returning). opts may be NULL (all rows,
 * the device's queue). A failure found while enqueuing is returned here;
 * one met on the device by attnvk_device_wait or a later call. */
attnvk_status attnvk_kernel_run_async(attnvk_kernel *k, const attnvk_tensors *t, const attnvk_run_options *opts);
/* Waits until every run enqueued on dev's own queue has finished. */
attnvk_status attnvk_device_wait(attnvk_device *dev);

/* ---- the backward pass (training): gradients of O with respect to Q, K, V and the sinks ---- */
/* The backward pass's own buffers. dO has O's shape and the problem's
 * dtype; dQ, dK and dV are written in Q's, K's and V's shapes and dtype
 * (accumulated in f32 or better). d_sinks (f32 [H]) is written when the
 * problem has sinks (it may then be NULL to skip it). */
typedef struct attnvk_grad_tensors {
    attnvk_buffer *d_o;
    attnvk_buffer *dq, *dk, *dv;
    attnvk_buffer *d_sinks;
} attnvk_grad_tensors;
/* Options of attnvk_kernel_backward; attnvk_backward_options_init sets struct_size and zeroes the rest. */
typedef struct attnvk_backward_options {
    size_t struct_size;          /* sizeof(attnvk_backward_options) */
    int deterministic;           /* 1: no floating-point atomics: two runs give bit-identical gradients
                                    (the CPU always is) */
    attnvk_kernel_info *info;    /* out, when set: the backward's kernels, written on success
                                    (variant "" where the backend does not say) */
} attnvk_backward_options;
void attnvk_backward_options_init(attnvk_backward_options *o);
/* FlashAttention-2's backward pass of k's problem, synchronous: fwd holds the
 * forward's inputs (Q, K, V, and the mask, sinks, ALiBi slopes and seq_lens
 * the problem asks for), its O and its LSE (f32 [B][H][Nq], as a run with
 * write_lse writes it; required here whatever k's write_lse). With
 * P = softmax(scores) as in attnvk_problem: dV = P^T dO, dP = dO V^T,
 * D_i = rowsum(dO_i * O_i), dS = P * (dP - D), dQ = scale dS' K,
 * dK = scale dS'^T Q, where dS' is dS times the softcap's derivative
 * (1 - tanh^2); GQA sums dK and dV over a group's query heads; d_sinks[h] =
 * -sum over rows of P_sink * D_i. Paged and quantized caches are
 * UNSUPPORTED, as is an API or implementation without a backward pass yet
 * (the message names it). opts may be NULL; *device_ms may be NULL. */
attnvk_status attnvk_kernel_backward(attnvk_kernel *k, const attnvk_tensors *fwd, const attnvk_grad_tensors *grad,
                                     const attnvk_backward_options *opts, double *device_ms);

/* ---- KV caches on the host ---- */
const char *attnvk_kv_format_name(attnvk_kv_format f); /* "dtype", "q8_0", "q4_0", "fp8" */
int attnvk_kv_format_from_name(const char *name, attnvk_kv_format *out);
/* Bytes of one K or V row (D values) in the problem's kv format. */
size_t attnvk_kv_row_bytes(const attnvk_problem *p);
size_t attnvk_kv_rows(const attnvk_problem *p);       /* rows in K (= in V) */
size_t attnvk_kv_bytes(const attnvk_problem *p);      /* = rows * row bytes: K, and V when Dv = Dk */
size_t attnvk_v_bytes(const attnvk_problem *p);       /* V's bytes (rows of Dv values) */
/* Encodes n rows of D floats into the kv format (not ATTNVK_KV_DTYPE);
 * fp8 divides by scale first. decode is the exact inverse map (what the
 * kernel reads), into f32. */
void attnvk_kv_encode(attnvk_kv_format f, int head_dim, const float *src, void *dst, size_t rows, float scale);
void attnvk_kv_decode(attnvk_kv_format f, int head_dim, const void *src, float *dst, size_t rows, float scale);
/* fp8 scale for values whose largest magnitude is amax (amax / 448; 1 for 0). */
float attnvk_fp8_scale(float amax);
/* Checks host block table and lengths against the problem: one-line error
 * (INVALID_ARGUMENT) naming the first bad entry. table may be NULL unless paged. */
attnvk_status attnvk_kv_tables_check(const attnvk_problem *p, const int32_t *block_table, const int32_t *seq_lens);

/* Convenience: host f32 arrays in p->layout in, f32 O (and optional LSE) out;
 * converts to p->dtype, uploads, runs, downloads, frees. A contiguous
 * quantized cache (kv_format) and fp8 queries (q_format) are encoded here,
 * fp8 with one scale per kv head / query head from its largest magnitude; a
 * paged cache takes attnvk_kernel_run_tensors. attnvk_host_inputs is
 * declared with the reference below. */
typedef struct attnvk_host_inputs attnvk_host_inputs;
attnvk_status attnvk_attention_host_inputs(attnvk_device *dev, const attnvk_problem *p,
                                           const attnvk_kernel_options *opts, const attnvk_host_inputs *in,
                                           float *o, float *lse, attnvk_kernel_info *info, double *device_ms);
attnvk_status attnvk_attention_host(attnvk_device *dev, const attnvk_problem *p,
                                    const attnvk_kernel_options *opts,
                                    const float *q, const float *k, const float *v,
                                    float *o, float *lse, attnvk_kernel_info *info,
                                    double *device_ms);
/* Convenience for the backward pass: the forward on in (O and LSE out; lse
 * may be NULL), then attnvk_kernel_backward with g's dO, all as host f32
 * (converted to p->dtype and back); outputs poisoned before each run. */
typedef struct attnvk_host_grads attnvk_host_grads;
attnvk_status attnvk_attention_backward_host(attnvk_device *dev, const attnvk_problem *p,
                                             const attnvk_kernel_options *opts, const attnvk_backward_options *bopts,
                                             const attnvk_host_inputs *in, const attnvk_host_grads *g, float *o,
                                             float *lse, attnvk_kernel_info *info, double *forward_ms,
                                             double *backward_ms);

/* ---- the CPU reference (float64 accumulation, multi-threaded) ---- */
/* Full output, O as f32 in p->layout; lse may be NULL. Q and K rows hold
 * head_dim values, V and O rows Dv (attnvk_problem_head_dim_v). */
void attnvk_reference(const attnvk_problem *p, const float *q, const float *k,
                      const float *v, float *o, float *lse);
/* Selected rows only: rows[r] = (b*H + h)*Nq + i; out is nrows x Dv doubles. */
void attnvk_reference_rows(const attnvk_problem *p, const float *q, const float *k,
                           const float *v, const size_t *rows, size_t nrows,
                           double *out, double *lse);
/* With per-sequence key counts (kv_lens [B], NULL = Nk for all): K and V are
 * contiguous f32 in p->layout with Nk keys, of which sequence b uses its
 * first kv_lens[b]; p's paging and kv format are ignored (gather and decode
 * the cache first: attnvk_kv_gather). */
void attnvk_reference_ragged(const attnvk_problem *p, const float *q, const float *k,
                             const float *v, const int32_t *kv_lens, float *o, float *lse);
/* Everything the reference reads, as host f32 (int32 lengths): Q, K, V in
 * p->layout (K and V contiguous with Nk keys: gather a cache first),
 * kv_lens [B] (NULL: Nk each), and the score inputs the problem asks for. */
struct attnvk_host_inputs {
    const float *q, *k, *v;
    const int32_t *kv_lens;
    const float *mask;           /* [mask_batch][mask_heads][Nq][Nk], with p->mask */
    const float *sinks;          /* [H], with p->sinks */
    const float *alibi_slopes;   /* [H], with p->alibi */
    const uint8_t *block_layout; /* with p->block_sparse (attnvk_problem) */
};
/* Full output of any problem: O as f32 in p->layout; lse may be NULL. */
void attnvk_reference_inputs(const attnvk_problem *p, const attnvk_host_inputs *in, float *o, float *lse);
/* FLOPs of exactly the visible (query, key) pairs, 2 (Dk + Dv) each, the
 * block layout's and sequence lengths' too (attnvk_problem_flops has no
 * inputs: it counts a block-sparse problem's pairs as dense). */
double attnvk_flops_inputs(const attnvk_problem *p, const attnvk_host_inputs *in);
/* Host gradients: d_o in (O's shape), the rest out as f32 in p->layout
 * (dq Q's shape, dk K's, dv V's, d_sinks [H] with sinks; d_sinks may be NULL). */
struct attnvk_host_grads {
    const float *d_o;
    float *dq, *dk, *dv;
    float *d_sinks;
};
/* The backward pass in float64 (the gradients' oracle): computes O and the
 * LSE itself from in, then g's outputs exactly by the formulas of
 * attnvk_kernel_backward, for every problem attnvk_reference_inputs takes.
 * Keys past a sequence's length get zero dK and dV. */
void attnvk_reference_backward(const attnvk_problem *p, const attnvk_host_inputs *in, const attnvk_host_grads *g);
/* ALiBi slopes as ggml makes them (max_bias 8): n = 2^floor(log2 H), m0 =
 * 2^(-8/n), m1 = 2^(-4/n); slope h = m0^(h+1) for h < n, else m1^(2(h-n)+1). */
void attnvk_alibi_slopes(int heads, float *out);
/* A paged or quantized cache as the reference reads it: K/V bytes in p's kv
 * format and paging into f32 [B][H_kv][Nk][D]-shaped in p->layout (keys past
 * a sequence's length are zero). kv_scales as in attnvk_tensors (fp8).
 * which: 0 K (D = head_dim), 1 V (D = Dv). */
attnvk_status attnvk_kv_gather(const attnvk_problem *p, const void *kv_bytes, const int32_t *block_table,
                               const int32_t *seq_lens, const float *kv_scales, int which, float *out);

/* ---- verification: one tolerance table by dtype ---- */
typedef struct attnvk_check {
    double rel_l2;      /* ||out - ref|| / ||ref|| over the checked rows */
    double max_abs;
    size_t nonfinite;   /* NaN/Inf in the output (never passes) */
    size_t rows_checked;
    double tolerance;
    int passed;
} attnvk_check;
double attnvk_tolerance(attnvk_dtype d); /* relative L2: f32 1e-5, f16/bf16 5e-3 */
/* the backward pass's, per gradient: relative L2 f32 1e-4, f16/bf16 1e-2 */
double attnvk_backward_tolerance(attnvk_dtype d);
/* d(sinks)' error against ref_ds (attnvk_reference_backward's): relative L2,
 * scaled by the larger of |ref_ds| and its terms' magnitude (sum over the rows
 * of P_sink * rowsum|dO * O|, from the reference forward), since that sum may
 * cancel far below its terms. NaN when ds holds NaN/Inf (never a pass). */
double attnvk_dsinks_error(const attnvk_problem *p, const attnvk_host_inputs *in, const float *d_o, const float *ds,
                           const float *ref_ds);
/* Compares o (f32, p->layout) with the reference at the given rows
 * (rows == NULL: every row). The tolerance is attnvk_tolerance(p->dtype),
 * or 5e-2 for fp8 queries (q_format fp8: the FP8 forward rounds P to e4m3
 * too), against q, k, v as the kernel read them (dequantized). */
attnvk_check attnvk_check_output(const attnvk_problem *p, const float *q, const float *k,
                                 const float *v, const float *o, const size_t *rows,
                                 size_t nrows);
/* The same with per-sequence key counts (see attnvk_reference_ragged). */
attnvk_check attnvk_check_output_ragged(const attnvk_problem *p, const float *q, const float *k,
                                        const float *v, const int32_t *kv_lens, const float *o,
                                        const size_t *rows, size_t nrows);
/* The same for any problem (attnvk_host_inputs: lengths, mask, sinks, ALiBi). */
attnvk_check attnvk_check_output_inputs(const attnvk_problem *p, const attnvk_host_inputs *in, const float *o,
                                        const size_t *rows, size_t nrows);

/* ---- ring attention: one sequence across several devices (context parallelism) ---- */
/* The sequence's N tokens are cut into chunks; each rank (a device) keeps
 * its chunks of Q, computes them against every rank's K and V chunks as
 * those travel once around the ring, and merges the partial (O, LSE) pairs
 * exactly. Causal runs are load-balanced (zigzag): with G ranks the
 * sequence is cut into 2G chunks and rank r holds chunks r and 2G-1-r;
 * otherwise rank r holds chunk r of G. Chunks differ by at most one token.
 * The problem is self-attention of one sequence length (seq_q == seq_kv),
 * contiguous K/V in the problem's dtype; GQA, windows, softcap and ALiBi
 * are supported (each block runs at its chunks' position offset, and blocks
 * no row of which sees a key are skipped); masks, sinks and Dv != D are
 * UNSUPPORTED for now. Block kernels need ATTNVK_FEATURE_POSITION_OFFSET
 * where ALiBi or a bound cuts through them: attnvk's kernel has it.
 * Ranks may repeat a device (virtual ranks) and mix APIs. */
typedef enum attnvk_ring_transport {
    ATTNVK_RING_AUTO = 0, /* the backend's own (NCCL between CUDA devices) where it serves every rank, else host */
    ATTNVK_RING_HOST,     /* K/V through host memory: any devices, no overlap with compute */
    ATTNVK_RING_DEVICE,   /* the backend's own transport, or UNAVAILABLE / UNSUPPORTED with the reason */
} attnvk_ring_transport;
typedef struct attnvk_ring_options {
    size_t struct_size;              /* sizeof(attnvk_ring_options): attnvk_ring_options_init sets it */
    attnvk_ring_transport transport;
    int contiguous;                  /* 1: causal runs keep rank r on chunk r of G (no zigzag) */
    attnvk_kernel_options kernel;    /* for each block's kernel (write_lse is always on) */
} attnvk_ring_options;
void attnvk_ring_options_init(attnvk_ring_options *o);
typedef struct attnvk_ring attnvk_ring;
/* A ring over devs[0..ranks-1] (1..64 ranks) for problem p, whose whole
 * sequence it splits. Buffers are allocated at creation. */
attnvk_status attnvk_ring_create(attnvk_device *const *devs, int ranks, const attnvk_problem *p,
                                 const attnvk_ring_options *opts, attnvk_ring **out);
void attnvk_ring_destroy(attnvk_ring *r);
/* What attnvk_ring_create checks of p before it touches a device: the problem's rules, what the ring
 * supports, and that each rank's chunks fit one kernel (the whole sequence may be past one GPU's limits). */
attnvk_status attnvk_ring_validate(const attnvk_problem *p, int ranks, const attnvk_ring_options *opts);
/* The token ranges rank `rank` holds, [begin[i], end[i]) in its order; returns their count (1 or 2). */
int attnvk_ring_shard(const attnvk_ring *r, int rank, int begin[2], int end[2]);
/* The transport in use ("host", "nccl", ...) and, where AUTO fell back to host, why. */
const char *attnvk_ring_transport_name(const attnvk_ring *r, const char **fallback_reason);
/* Scatters the whole sequence's inputs (host f32 in p->layout; ALiBi slopes
 * when the problem has them; kv_lens must be NULL) to the ranks. */
attnvk_status attnvk_ring_upload(attnvk_ring *r, const attnvk_host_inputs *in);
typedef struct attnvk_ring_stats {
    double total_ms;         /* wall time of the run, every rank finished */
    double transfer_ms;      /* time the K/V transfers took (each step's slowest rank, summed); -1: unknown */
    int steps;               /* ring steps (= ranks) */
    int blocks;              /* attention blocks run, all ranks */
} attnvk_ring_stats;
/* Flags of attnvk_ring_run. NO_TRANSFERS is for timing alone: K and V stay
 * where they are, so O is not the attention's (the bench's compute-only run,
 * from which it tells how much of the transfers the computation hid). */
enum { ATTNVK_RING_NO_TRANSFERS = 1u << 0 };
/* One run on the uploaded inputs; synchronous. stats may be NULL. */
attnvk_status attnvk_ring_run(attnvk_ring *r, unsigned flags, attnvk_ring_stats *stats);
/* Gathers O (f32 in p->layout) and, when lse is not NULL, the LSE (f32 [B][H][N]). */
attnvk_status attnvk_ring_download(attnvk_ring *r, float *o, float *lse);

/* ---- numeric helpers ---- */
uint16_t attnvk_f32_to_f16(float f);
float attnvk_f16_to_f32(uint16_t h);
uint16_t attnvk_f32_to_bf16(float f);
float attnvk_bf16_to_f32(uint16_t h);
/* Converts n floats to dtype storage (dst holds n * dtype_size bytes) and back. */
void attnvk_pack(attnvk_dtype d, const float *src, void *dst, size_t n);
void attnvk_unpack(attnvk_dtype d, const void *src, float *dst, size_t n);
/* Rounds in place to what dtype can hold (so the reference sees the same inputs). */
void attnvk_round_to_dtype(attnvk_dtype d, float *x, size_t n);
/* Seeded standard-normal generator shared by tests and the bench. */
void attnvk_fill_random(float *x, size_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
