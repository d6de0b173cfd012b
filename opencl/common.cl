/* Shared by attnvk's OpenCL kernels (prepended to each program).
 * Every shape and tuning constant arrives as a -D option from the host's
 * tuning table; the defaults below only keep the file self-describing. */
#ifndef AVK_D
#define AVK_D 64             /* head dimension */
#endif
#ifndef AVK_F16
#define AVK_F16 0            /* 1: Q/K/V/O stored as IEEE half */
#endif
#ifndef AVK_UNROLL
#define AVK_UNROLL 1         /* 0: no forced unrolling (CPU runtimes build far faster) */
#endif
/* Written before a loop: unrolls it fully unless AVK_UNROLL is 0. */
#if AVK_UNROLL
#define AVK_PRAGMA_UNROLL _Pragma("unroll")
#else
#define AVK_PRAGMA_UNROLL
#endif
/* For helpers a compiler might keep out of line: C99 `inline` alone leaves
 * no external definition, so an outlined call fails to link (NVIDIA's
 * "Unresolved extern function"); these are always inlined. */
#define AVK_INLINE inline __attribute__((always_inline))
#ifndef AVK_NATIVE_EXP
#define AVK_NATIVE_EXP 0     /* 1: native_exp2 (NVIDIA: ex2.approx, ~2 ulp) */
#endif

#define AVK_LN2 0.693147180559945309f
#define AVK_LOG2E 1.442695040888963407f

#if AVK_NATIVE_EXP
#define AVK_EXP2(x) native_exp2(x)
#else
#define AVK_EXP2(x) exp2(x)
#endif

/* Storage type of Q/K/V/O. Half pointers need no cl_khr_fp16: vload_half and
 * vstore_half are core OpenCL C, and all arithmetic stays in f32. */
#if AVK_F16
typedef half avk_elem;
#define AVK_LOAD4(p, i) vload_half4(0, (p) + (i))
#define AVK_STORE4(v, p, i) vstore_half4_rte((v), 0, (p) + (i))
#define AVK_STORE1(v, p, i) vstore_half_rte((v), (i), (p))
#else
typedef float avk_elem;
/* i is a multiple of 4 and every row starts 16-byte aligned (D % 4 == 0) */
#define AVK_LOAD4(p, i) (*(__global const float4 *)((p) + (i)))
#define AVK_STORE4(v, p, i) (*(__global float4 *)((p) + (i)) = (v))
#define AVK_STORE1(v, p, i) ((p)[i] = (v))
#endif

/* Reduction modes for lanes that share a row (a per-vendor switch). */
#define AVK_RED_LOCAL 1  /* local memory + barrier: works everywhere */
#define AVK_RED_KHR 2    /* cl_khr_subgroup_shuffle */
#define AVK_RED_INTEL 3  /* cl_intel_subgroups */
#define AVK_RED_NV 4     /* PTX shfl.sync (NVIDIA) */

#ifndef AVK_ASM
#define AVK_ASM asm volatile /* NVIDIA's OpenCL compiler takes inline PTX */
#endif

/* Asynchronous tile copies. 1: cp.async (PTX, sm_80+), which fills local
 * memory without passing through registers, so the next tile streams in
 * while this one is computed; 2: the same pipeline with plain copies, so
 * any device can test it. A local pointer cast to an integer is its address
 * in the shared window, which is what cp.async and ldmatrix take. */
#ifndef AVK_ASYNC
#define AVK_ASYNC 0
#endif
/* cp.async's L2 prefetch size (64, 128 or 256 bytes; 0: none; an A/B through
 * ATTNVK_OPENCL_BUILD_OPTIONS=-DAVK_CP_L2_PREFETCH=N). H100 decode, B=8 H=32/8
 * D=128 f16 64k (session 20): 0.747 -> 0.734 ms with 128 bytes. */
#ifndef AVK_CP_L2_PREFETCH
#define AVK_CP_L2_PREFETCH 128
#endif
#define AVK_STR_(x) #x
#define AVK_STR(x) AVK_STR_(x)
#if AVK_CP_L2_PREFETCH
#define AVK_CP_L2_HINT ".L2::" AVK_STR(AVK_CP_L2_PREFETCH) "B"
#else
#define AVK_CP_L2_HINT ""
#endif
#if AVK_ASYNC == 1
inline void avk_cp16(__local void *dst, __global const void *src, int valid)
{
    AVK_ASM("cp.async.cg.shared.global" AVK_CP_L2_HINT " [%0], [%1], 16, %2;" ::"r"((uint)(size_t)dst), "l"(src), "r"(valid ? 16 : 0)
            : "memory");
}
inline void avk_cp_commit(void) { AVK_ASM("cp.async.commit_group;" ::: "memory"); }
inline void avk_cp_wait_all(void) { AVK_ASM("cp.async.wait_group 0;" ::: "memory"); }
inline void avk_cp_wait_all_but_one(void) { AVK_ASM("cp.async.wait_group 1;" ::: "memory"); }
#elif AVK_ASYNC == 2
inline void avk_cp16(__local void *dst, __global const void *src, int valid)
{
    *(__local uint4 *)dst = valid ? *(__global const uint4 *)src : (uint4)(0u);
}
inline void avk_cp_commit(void) {}
inline void avk_cp_wait_all(void) {}
inline void avk_cp_wait_all_but_one(void) {}
#endif
