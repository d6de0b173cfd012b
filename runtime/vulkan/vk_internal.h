/* Internals of the Vulkan backend, shared by its files only. Vulkan entry
 * points come from volk: instance-level through volk's globals, device-level
 * through each device's VolkDeviceTable so several GPUs can be open at once. */
#ifndef ATTNVK_VK_INTERNAL_H
#define ATTNVK_VK_INTERNAL_H

#include "core/backend.h"

#include <volk.h>

#include <stdint.h>

/* What a physical device offers attnvk's kernels; filled once at init. */
typedef struct vk_caps {
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    uint32_t queue_family;
    uint32_t timestamp_valid_bits;     /* 0: no timestamps on that queue */
    uint8_t uuid[VK_UUID_SIZE];
    int has_uuid;
    char driver_info[128];
    uint64_t device_local_bytes;
    int compute_units;                 /* 0 when the API does not say */
    /* subgroups */
    uint32_t subgroup_size, min_subgroup, max_subgroup;
    int subgroup_shuffle, subgroup_vote, subgroup_arith;
    int size_control;                  /* VK_EXT_subgroup_size_control usable for compute */
    int size_control_ext;              /* enable the extension (pre-1.3 devices) */
    int full_subgroups;                /* computeFullSubgroups */
    int require_size_compute;          /* requiredSubgroupSizeStages has compute */
    /* 16-bit types */
    int shader_f16, storage_16bit;
    int ext_f16_int8, ext_16bit_storage; /* extensions to enable (pre-1.2 / pre-1.1) */
    /* matrix units */
    int vk_memory_model, ext_memory_model;
    int nv_coopmat;                    /* f16 x f16 -> f32 shape found */
    uint32_t nv_m, nv_n, nv_k;
    int khr_coopmat_ext;               /* the device has VK_KHR_cooperative_matrix */
    int khr_coopmat;                   /* ... its feature, compute support and a usable f16 -> f32 shape */
    uint32_t khr_m, khr_n, khr_k;
    char khr_coopmat_why[192];         /* why not, when the variant cannot run */
    int bf16_ext;                      /* VK_KHR_shader_bfloat16 present */
    int ext_sm_builtins, ext_amd_core;
    int pipeline_stats;                /* VK_KHR_pipeline_executable_properties (tuning aid) */
    int vk_mm_device_scope;            /* vulkanMemoryModelDeviceScope (enabled with the memory model) */
    int atomic_f32_add;                /* VK_EXT_shader_atomic_float's shaderBufferFloat32AtomicAdd (the backward's dQ),
                                        * and Device-scope atomics allowed beside the memory model */
    int rs_layout;                     /* coopmat-nv-rs layout probe: 0 not run, 1 matches, -1 not usable */
    char rs_layout_why[192];           /* why not, when -1 */
    int rs_b_layout;                   /* the same probe's B operand built in registers (decode-nv-rs's direct K/V) */
    char rs_b_layout_why[192];
    int rs_layout_khr;                 /* the same through VK_KHR_cooperative_matrix (coopmat-khr-rs, decode-khr-rs) */
    char rs_layout_khr_why[192];
    attnvk_device_info info;           /* what describe() reports (default_variant aside) */
    /* ATTNVK_VK_PROFILE (vk_profile.c): the limits above clamped to a smaller GPU's, info's
     * vendor/architecture/name the profile's (what the tuning table matches) */
    const struct vk_profile *profile;  /* NULL: the device's own limits */
    char real_name[256], real_vendor[64], real_architecture[64];
    char profile_note[160];            /* what the device could not follow (subgroup sizes) */
} vk_caps;

/* Backend-wide state (one VkInstance per process). */
typedef struct vk_state {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    int validation;
    vk_caps *devices;
    int device_count;
} vk_state;

extern vk_state avk_vk;

/* A loaded pipeline, kept for the device's lifetime. */
typedef struct vk_pipeline_entry {
    uint64_t key;
    VkPipeline pipeline;
    char stats[96];                    /* " regs=.. ..." with ATTNVK_VK_PIPELINE_STATS=1, else "" */
} vk_pipeline_entry;

/* bindings: the contract's buffers (docs/kernel-contract.md), Q .. kv_scales, alibi_slopes, sinks, mask */
enum { VK_BINDINGS = 13 };
/* descriptor sets one submission may use (the pool's maxSets, vk_device.c): the backward's four passes */
enum { VK_MAX_SETS = 4 };

struct avk_bdev {
    const vk_caps *caps;
    VkDevice device;
    struct VolkDeviceTable vk;
    VkQueue queue;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkQueryPool timestamps;            /* VK_NULL_HANDLE without timestamp support */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipeline_layout;
    VkDescriptorPool descriptor_pool;
    VkPipelineCache pipeline_cache;
    char cache_path[1024];             /* empty: on-disk caching off */
    int cache_dirty;
    vk_pipeline_entry *pipelines;      /* grows: a long-lived device meets many shapes */
    int pipeline_count, pipeline_capacity;
    avk_bbuf *staging;                 /* host-visible, reused by upload/download */
    avk_bbuf *dummy;                   /* bound where a kernel has no LSE/workspace */
    uint32_t device_local_type, host_type;
    int pending;                       /* an async run's submission (cmd, descriptor set, fence) is in flight */
};

struct avk_bbuf {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped;                      /* host-visible buffers only */
    VkDeviceSize offset;               /* where the data starts in buffer (wrapped buffers) */
    int borrowed;                      /* the caller's VkBuffer (attnvk_buffer_wrap): never destroyed here */
};

/* vk_util.c */
attnvk_status vk_status(VkResult r, const char *what);
attnvk_status vk_bind_storage_buffers(avk_bdev *dev, avk_bbuf *const bufs[VK_BINDINGS], VkDescriptorSet *set);
attnvk_status vk_bind_storage_sets(avk_bdev *dev, uint32_t count, avk_bbuf *const (*bufs)[VK_BINDINGS], VkDescriptorSet *sets);
const char *vk_result_name(VkResult r);

/* vk_device.c */
attnvk_status vk_buffer_new(avk_bdev *dev, VkDeviceSize bytes, int host_visible, avk_bbuf **out);
void vk_buffer_free(avk_bdev *dev, avk_bbuf *buf);
/* vk_begin first waits for a pending async submission (the device has one
 * command buffer and one descriptor pool). */
attnvk_status vk_begin(avk_bdev *dev);
attnvk_status vk_submit_wait(avk_bdev *dev);
/* Ends and submits the command buffer with the fence, without waiting
 * (attnvk_kernel_run_async); vk_wait_pending waits for it. */
attnvk_status vk_submit_async(avk_bdev *dev);
attnvk_status vk_wait_pending(avk_bdev *dev);
/* vk_begin with a start timestamp; vk_submit_timed ends it, submits, waits and
 * gives the device time (the wall time where the queue has no timestamps). */
attnvk_status vk_begin_timed(avk_bdev *dev);
attnvk_status vk_submit_timed(avk_bdev *dev, double *ms);
/* Marks VK_STAMP_FIRST_MARK + i of the timed command buffer (after vk_begin_timed; i <
 * VK_STAMP_MARKS; no-op without timestamps): a pass's end, read by vk_stamp_ms after
 * vk_submit_timed. */
enum { VK_STAMP_FIRST_MARK = 2, VK_STAMP_MARKS = 4 };
void vk_stamp_reset_marks(avk_bdev *dev);
void vk_stamp_mark(avk_bdev *dev, uint32_t i);
/* ms[i]: the device time from the previous mark (the start for mark 0) to mark i, for marks
 * 0..n-1; 0 where the queue has no timestamps */
attnvk_status vk_stamp_ms(avk_bdev *dev, uint32_t n, double *ms);

/* vk_kernel.c: a pipeline of an embedded body with the constants every body shares past
 * its own n (Dv, the score features 0/1; K/V contiguous), no required subgroup size */
attnvk_status vk_build_body(avk_bdev *dev, const unsigned char *code, size_t size, const char *name, const uint32_t *spec,
                            uint32_t n, uint32_t dv, int scores, VkPipeline *out);

/* vk_khr_coopmat.c: fills khr_coopmat, the shape, or khr_coopmat_why */
void vk_khr_probe(vk_caps *caps, int feature_on);

/* vk_interop.c: attnvk_buffer_wrap and attnvk_device_native */
attnvk_status avk_vk_wrap(avk_bdev *dev, const attnvk_external_buffer *ext, avk_bbuf **out);
attnvk_status avk_vk_native(avk_bdev *dev, attnvk_native_handles *out);

/* vk_describe.c */
attnvk_status vk_probe_caps(VkPhysicalDevice phys, vk_caps *caps);
attnvk_status vk_describe(int device, attnvk_device_info *info);
int vk_has_extension(VkPhysicalDevice phys, const char *name);

/* vk_device.c, also used by vk_describe.c to run the layout probe */
attnvk_status avk_vk_open(int device, avk_bdev **out);
void avk_vk_close(avk_bdev *dev);

/* vk_rs_layout.c: whether coopmat-nv-rs can apply here at all (NV 16x16x16, subgroups of 32),
 * the same for coopmat-khr-rs and decode-khr-rs (KHR 16x16x16), and the probe that checks
 * the accumulator layout through each extension (once per device; verdicts in caps) */
int vk_rs_layout_applies(const vk_caps *c);
int vk_rs_layout_applies_khr(const vk_caps *c);
void vk_rs_layout_probe(avk_bdev *dev, vk_caps *caps);

/* vk_pipeline.c */
attnvk_status vk_pipeline_get(avk_bdev *dev, const uint32_t *code, size_t code_size, const char *name,
                              const uint32_t *spec, uint32_t spec_count, uint32_t required_subgroup,
                              VkPipeline *out);
void vk_pipeline_cache_open(avk_bdev *dev);
void vk_pipeline_cache_save(avk_bdev *dev);
/* The driver's statistics for a pipeline (registers, spills...) when captured, else "". */
const char *vk_pipeline_stats(const avk_bdev *dev, VkPipeline pipeline);

#endif
