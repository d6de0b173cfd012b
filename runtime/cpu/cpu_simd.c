/* The inner loops of cpu_simd.h, built once per instruction set and chosen
 * at run time: AVX-512 and AVX2+FMA on x86-64 (GCC target pragmas, picked
 * with __builtin_cpu_supports), and a portable body for every host. */
#include "cpu/cpu_simd.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a * b + c as one FMA: -std=c17 turns contraction off, these loops want it */
#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

/* the portable body: 4-float vectors (SSE2 on x86-64, NEON on arm64, scalar elsewhere) */
#define AVK_VW 4
#define AVK_NAME(x) x##_generic
#define AVK_ISA "generic"
#define AVK_CHAINS 8
#include "cpu/cpu_simd_body.h"
#undef AVK_VW
#undef AVK_NAME
#undef AVK_ISA
#undef AVK_CHAINS

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define AVK_X86 1

/* GCC takes target pragmas; clang (the fuzz build) its attribute pragma */
#if defined(__clang__)
#define AVK_TARGET_PUSH(isa) _Pragma("clang attribute push") AVK_TARGET_APPLY(isa)
#define AVK_TARGET_APPLY(isa) _Pragma(isa)
#define AVK_TARGET_POP _Pragma("clang attribute pop")
#define AVK_AVX2 "clang attribute (__attribute__((target(\"avx2,fma\"))), apply_to = function)"
#define AVK_AVX512 "clang attribute (__attribute__((target(\"avx512f,avx512dq,avx512vl,avx2,fma\"))), apply_to = function)"
#else
#define AVK_TARGET_PUSH(isa) _Pragma("GCC push_options") _Pragma(isa)
#define AVK_TARGET_POP _Pragma("GCC pop_options")
#define AVK_AVX2 "GCC target(\"avx2,fma\")"
#define AVK_AVX512 "GCC target(\"avx512f,avx512dq,avx512vl,avx2,fma\")"
#endif

AVK_TARGET_PUSH(AVK_AVX2)
#define AVK_VW 8
#define AVK_NAME(x) x##_avx2
#define AVK_ISA "avx2"
#define AVK_CHAINS 12 /* 16 ymm registers: 12 chains and the two constants */
#include "cpu/cpu_simd_body.h"
#undef AVK_VW
#undef AVK_NAME
#undef AVK_ISA
#undef AVK_CHAINS
AVK_TARGET_POP

AVK_TARGET_PUSH(AVK_AVX512)
#define AVK_VW 16
#define AVK_NAME(x) x##_avx512
#define AVK_ISA "avx512"
#define AVK_CHAINS 16
#include "cpu/cpu_simd_body.h"
#undef AVK_VW
#undef AVK_NAME
#undef AVK_ISA
#undef AVK_CHAINS
AVK_TARGET_POP
#endif

static const avk_cpu_simd *pick(void)
{
    const char *want = getenv("ATTNVK_CPU_ISA");
    if (want && strcmp(want, "generic") == 0) return &table_generic;
#ifdef AVK_X86
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                       __builtin_cpu_supports("avx512vl");
    if (avx512 && !(want && strcmp(want, "avx2") == 0)) return &table_avx512;
    if (avx2) return &table_avx2;
#endif
    return &table_generic;
}

const avk_cpu_simd *avk_cpu_simd_get(void)
{
    static const avk_cpu_simd *_Atomic chosen; /* benign race: every thread picks the same */
    const avk_cpu_simd *t = chosen;
    if (!t) chosen = t = pick();
    return t;
}
