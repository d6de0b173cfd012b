/* The CUDA backward pass (issue #18) on a GPU against the float64 reference:
 * the CPU backward test's cases (tests/common/backward_cases.h) in f32, f16
 * and bf16, then a few of this backend's own (head dims that pick each body
 * of cuda_backward.c's table, several tiles each way), then two runs
 * bit-identical. Fresh random inputs, outputs poisoned with NaN first,
 * rel-L2 per gradient within attnvk_backward_tolerance (f32 1e-4, f16/bf16
 * 1e-2). Skipped (passes, says so) without a CUDA device.
 * Run alone: build/tests/cuda/test_cuda_backward (ATTNVK_TEST_SEED=N for
 * other inputs); the last line is "N passed, M failed". */
#include "backward_cases.h"

/* beyond the shared list: each body and tile shape of the table */
static int cuda_cases(bcase *t)
{
    int n = 0;
#define ADD(lbl, B, H, Hkv, Nq, Nk, D) (t[n] = (bcase){.label = lbl, .p = shape(B, H, Hkv, Nq, Nk, D)}, &t[n++].p)
    attnvk_problem *p;
    p = ADD("D32 GQA 2 several tiles", 2, 4, 2, 200, 170, 32);
    p = ADD("D80 causal+alibi", 1, 2, 1, 150, 150, 80), p->causal = 1, p->alibi = 1;
    p = ADD("D72 (simt body) causal", 1, 2, 2, 70, 90, 72), p->causal = 1;
    p = ADD("D128 GQA 4 window+mask bshd", 1, 8, 2, 257, 300, 128), p->window = 1, p->window_left = 64,
    p->window_right = 8, p->mask = 1, p->mask_batch = 1, p->mask_heads = 8, p->layout = ATTNVK_LAYOUT_BSHD;
    p = ADD("D256 MQA sinks+softcap", 1, 4, 1, 96, 130, 256), p->sinks = 1, p->softcap = 20;
#undef ADD
    return n;
}

int main(void)
{
    const int rc = device_backward_test(ATTNVK_API_CUDA, cuda_cases);
    printf("test_cuda_backward: %s\n", rc ? "FAIL" : "PASS");
    return rc;
}
