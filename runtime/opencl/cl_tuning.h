/* The OpenCL backend's tuning table and how a problem plus options become
 * one kernel configuration (and thus one set of -D build options). */
#ifndef ATTNVK_CL_TUNING_H
#define ATTNVK_CL_TUNING_H

#include "opencl/cl_device.h"
#include "core/tuning.h"

typedef enum avk_cl_family {
    AVK_CL_TILED = 0, /* portable f32-arithmetic kernel, f32 or f16 storage */
    AVK_CL_MMA,       /* NVIDIA tensor cores through inline PTX (f16) */
} avk_cl_family;

/* Mirrors opencl/common.cl */
enum { AVK_RED_AUTO = 0, AVK_RED_LOCAL = 1, AVK_RED_KHR = 2, AVK_RED_INTEL = 3, AVK_RED_NV = 4 };

typedef struct avk_cl_config {
    avk_cl_family family;
    char variant[64];
    int emulate;      /* mma data flow on portable code (tests) */
    int head_dim, f16;
    int head_dim_v;   /* V and O's (-DAVK_DV); head_dim is Q and K's */
    int br, bc, wg;
    int ds, tm;       /* tiled: lanes per row, rows per lane */
    int reduce;       /* tiled: AVK_RED_* */
    int native_exp;
    int unroll;       /* 0: no forced unrolling (CPU runtimes compile much faster) */
    int async;        /* 1: cp.async tile pipeline (NVIDIA sm_80+), 2: same pipeline, plain copies */
    int opt_disable;  /* -cl-opt-disable: the test-only emulation builds in a third of the time */
    int max_registers; /* NVIDIA: -cl-nv-maxrregcount, 0 = compiler's choice */
    int kv_format;    /* attnvk_kv_format of K/V: -DAVK_KV_FORMAT */
    int split;        /* split-KV partitions, as core planned them (1 = none) */
    int resident;     /* work-groups an SM/CU runs at once, for the split plan (0: unknown) */
    int whole_waves;  /* splits in whole waves of CUs x resident (avk_split_request) */
    int key_warps;    /* mma-decode (flash_decode.cl): warps sharing one 16-row tile, splitting its keys; 0 otherwise */
    int stages;       /* mma-decode: raw K/V stages in each warp's cp.async ring */
    int score_mod;    /* mma, mma-decode: softcap, ALiBi or a mask compiled in (-DAVK_SCORE_MOD) */
    int score_bounds; /* mma-decode: a window's left masks and the sinks compiled in (-DAVK_SCORE_BOUNDS) */
    int patterns;     /* mma: a sparse pattern's tile search compiled in (-DAVK_PATTERN_SEARCH) */
    int score_hooks;  /* the AVK_MOD_SOFTCAP / _ALIBI / _MASK bits of the problem: the mma bodies' score hook
                       * carries those (-DAVK_HOOK_MODS; none: AVK_PATTERN_ONLY with a pattern) */
    int hook_mods_only; /* the hook built for those alone (ATTNVK_OPENCL_HOOK_MODS=0: all three, the A/B) */
    int pos_offset;   /* the problem moves i' (position_offset): -DAVK_POS_OFFSET=1, built only then */
    int mask_local;   /* mma (async): an f16 mask's tiles copied into local memory (-DAVK_MASK_LOCAL=1) */
    int alibi_mma;    /* mma: ALiBi (no softcap) with its key term in S's MMAs (-DAVK_ALIBI_MMA=1) */
} avk_cl_config;

/* Picks and validates a configuration for rows packed pack query heads at
 * a time (GQA packing; tiles follow pack * Nq for decode); UNSUPPORTED /
 * INVALID_ARGUMENT with the reason when the device or the options cannot
 * have one. Splits are planned by core afterwards (cl_flash.c). */
attnvk_status avk_cl_configure(const avk_cl_caps *caps, const attnvk_device_info *info, const attnvk_problem *p,
                               const attnvk_kernel_options *opts, int pack, avk_cl_config *cfg);
/* The -D options for cfg (one program per distinct string). */
void avk_cl_build_options(const avk_cl_config *cfg, char *out, size_t n);
/* Local memory the mma-decode body (flash_decode.cl) declares for cfg. */
uint64_t avk_cl_decode_local_bytes(const avk_cl_config *cfg);
const char *avk_cl_default_variant(const avk_cl_caps *caps, const attnvk_device_info *info);
/* `attnvk tune`: the distinct configurations avk_cl_configure accepts for p (backend.h's tuning_candidates). */
int avk_cl_tuning_candidates(const avk_cl_caps *caps, const attnvk_device_info *info, const attnvk_problem *p,
                             int pack, avk_tuning *out, int max);

#endif
