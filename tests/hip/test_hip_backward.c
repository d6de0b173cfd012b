/* The HIP backward pass (issue #18) on an AMD GPU against the float64
 * reference: the shared cases (tests/common/backward_cases.h) in f32, f16 and
 * bf16, then head dims that pick each row of the shared tile table under 64
 * KiB of LDS (hip_bwd_table.c): the mma body's AMD rows for f16/bf16 where
 * the GPU has MFMA or WMMA (test_hip_objects checks that pick), the simt
 * rows for f32 and elsewhere; then two runs bit-identical (the mma body's
 * deterministic mode: no dQ atomics). Fresh random inputs, outputs poisoned
 * with NaN first, rel-L2 per gradient within attnvk_backward_tolerance.
 * Skipped (passes, says so) without an AMD GPU, which is always so in CI:
 * there the backward is build-verified (test_hip_objects, test_hip_isa,
 * test_hip_rtc).
 * Run alone: build/tests/hip/test_hip_backward (ATTNVK_TEST_SEED=N for other
 * inputs); the last line is "N passed, M failed". */
#include "backward_cases.h"

/* beyond the shared list: each row the 64 KiB LDS leaves (simt tiles; mma's for f16/bf16 on matrix units) */
static int hip_cases(bcase *t)
{
    int n = 0;
#define ADD(lbl, B, H, Hkv, Nq, Nk, D) (t[n] = (bcase){.label = lbl, .p = shape(B, H, Hkv, Nq, Nk, D)}, &t[n++].p)
    attnvk_problem *p;
    p = ADD("D72 (simt 32x32) causal", 1, 2, 2, 70, 90, 72), p->causal = 1;
    p = ADD("D112 (simt 32x16, mma 32x32) GQA 2", 1, 4, 2, 97, 130, 112);
    p = ADD("D80 (mma 32x32) causal+alibi tiles", 1, 2, 1, 150, 150, 80), p->causal = 1, p->alibi = 1;
    p = ADD("D256 (simt 16x8, mma 16x16 w4) MQA sinks+softcap", 1, 4, 1, 96, 130, 256), p->sinks = 1,
    p->softcap = 20;
#undef ADD
    return n;
}

int main(void) { return device_backward_test(ATTNVK_API_HIP, hip_cases); }
