/* The unfused CLBlast baseline (batched SGEMM, attnvk softmax, batched
 * SGEMM) against the float64 CPU reference, and its 'does not fit' path. */
#include "cl_checks.h"

#include <stdlib.h>
#include <string.h>

enum { SKIP = 77 };

static int passed, failed;
static void tally(int ok) { ok ? ++passed : ++failed; }

int main(void)
{
    uint64_t seed = avk_test_seed();
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("context: %s\n", attnvk_last_error());
        return 1;
    }
    attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    if (!dev) {
        attnvk_context_destroy(ctx);
        return SKIP;
    }
    attnvk_impl_info impls[8];
    int n_impl = attnvk_device_implementations(dev, impls, 8);
    const attnvk_impl_info *clblast = NULL;
    for (int i = 0; i < n_impl; ++i) {
        printf("implementation %s fused=%d available=%d %s\n", impls[i].name, impls[i].fused, impls[i].available,
               impls[i].reason);
        if (!strcmp(impls[i].name, "clblast")) clblast = &impls[i];
    }
    tally(clblast && clblast->fused == 0);
    if (!clblast || !clblast->available) {
        printf("clblast unavailable here: %s\n", clblast ? clblast->reason : "not listed");
        attnvk_device_close(dev);
        attnvk_context_destroy(ctx);
        return clblast ? SKIP : avk_test_finish(passed, failed + 1);
    }

    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(ATTNVK_F32, cases, labels, 64);
    attnvk_kernel_options opts = {.implementation = "clblast"};
    for (int i = 0; i < n; ++i) tally(avk_test_run_case(dev, &cases[i], &opts, labels[i], seed + (uint64_t)i, 0));
    tally(avk_cl_check_lse(dev, &cases[2], &opts, "lse", seed + 100));
    tally(avk_cl_check_lse(dev, &cases[5], &opts, "lse, empty rows", seed + 101));
    tally(avk_cl_check_row_range(dev, &cases[2], &opts, 37, 50, "rows 37+50", seed + 102));
    tally(avk_cl_check_row_range(dev, &cases[7], &opts, 1, 17, "rows 1+17 bshd", seed + 103));
    tally(avk_cl_check_skip_tile_fails(dev, &cases[1], &opts, "skip last kv tile", seed + 104));
    /* V's own head dim (MLA's 192/128 and 576/512): P V's GEMM and O's rows over Dv */
    attnvk_problem mla = cases[7]; /* GQA 8:2 bshd causal */
    mla.head_dim = 192, mla.head_dim_v = 128;
    tally(avk_test_run_case(dev, &mla, &opts, "dk192-dv128 bshd causal", seed + 105, 0));
    tally(avk_cl_check_row_range(dev, &mla, &opts, 1, 17, "dk192-dv128 rows 1+17", seed + 106));
    mla = cases[9]; /* decode Nq=1 Nk=2049 */
    mla.head_dim = 576, mla.head_dim_v = 512;
    tally(avk_test_run_case(dev, &mla, &opts, "dk576-dv512 decode", seed + 107, 0));

    attnvk_kernel_info info;
    attnvk_kernel *k = NULL;
    if (attnvk_kernel_prepare(dev, &cases[0], &opts, &k, &info) == ATTNVK_OK) {
        uint64_t want = (uint64_t)cases[0].batch * cases[0].heads * cases[0].seq_q * cases[0].seq_kv * 4;
        int ok = !strcmp(info.implementation, "clblast") && info.workspace_bytes == want;
        printf("%s workspace_bytes %llu (B*H*Nq*Nk*4 = %llu)\n", ok ? "ok  " : "FAIL",
               (unsigned long long)info.workspace_bytes, (unsigned long long)want);
        tally(ok);
        attnvk_kernel_destroy(k);
    } else {
        tally(0);
    }
    attnvk_problem f16 = cases[0];
    f16.dtype = ATTNVK_F16;
    tally(avk_cl_expect_status(dev, &f16, &opts, ATTNVK_ERROR_UNSUPPORTED, "f32 only", "f16 refused"));

    /* does not fit: a device limited to 1 MiB (re-opened so the limit applies) */
    attnvk_device_close(dev);
    setenv("ATTNVK_OPENCL_MEM_LIMIT", "1048576", 1);
    dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    attnvk_problem big = cases[0];
    big.seq_q = big.seq_kv = 512; /* 2*4*512*512*4 = 8 MiB of scores */
    tally(dev && avk_cl_expect_status(dev, &big, &opts, ATTNVK_ERROR_UNSUPPORTED, "does not fit", "does not fit"));
    /* past 2^31 score elements CLBlast's 32-bit indexing faults (seen on the
     * H100): refused before anything is allocated, not a crash */
    unsetenv("ATTNVK_OPENCL_MEM_LIMIT");
    attnvk_device_close(dev);
    dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
    big.batch = 64, big.heads = 32, big.kv_heads = 32, big.seq_q = 65536, big.seq_kv = 65536, big.head_dim = 8;
    tally(dev && avk_cl_expect_status(dev, &big, &opts, ATTNVK_ERROR_UNSUPPORTED, "32-bit indexing", "huge Nq*Nk"));
    big.batch = 1, big.heads = 1, big.kv_heads = 1, big.seq_q = 46341, big.seq_kv = 46341; /* 2^31 + 4633 */
    tally(dev && avk_cl_expect_status(dev, &big, &opts, ATTNVK_ERROR_UNSUPPORTED, "32-bit indexing", "just past 2^31"));

    /* Chunked passes: (b, h) pairs beyond the index limit run a chunk at a
     * time. A lowered limit makes the feature cases chunk (3 pairs of score
     * matrices per pass where they fit; cases where one pair alone does not
     * are refused, which the run treats as a skip). */
    {
        const attnvk_problem *c2 = &cases[6]; /* GQA 8:2: 8 pairs, 3 + 3 + 2 */
        char limit[32];
        snprintf(limit, sizeof limit, "%llu", 3ull * c2->seq_q * c2->seq_kv);
        setenv("ATTNVK_CLBLAST_MAX_ELEMENTS", limit, 1);
        attnvk_kernel *ck = NULL;
        int ok = dev && attnvk_kernel_prepare(dev, c2, &opts, &ck, &info) == ATTNVK_OK &&
                 info.workspace_bytes == 3ull * c2->seq_q * c2->seq_kv * 4 && strstr(info.params, "chunk=3");
        printf("%s chunked: workspace %llu bytes, %s (B*H=%d)\n", ok ? "ok  " : "FAIL",
               (unsigned long long)info.workspace_bytes, info.params, c2->batch * c2->heads);
        tally(ok);
        attnvk_kernel_destroy(ck);
        for (int i = 0; i < n; ++i) {
            char label[96];
            snprintf(label, sizeof label, "chunked %s", labels[i]);
            tally(avk_test_run_case(dev, &cases[i], &opts, label, seed + 200 + (uint64_t)i, 1));
        }
        tally(avk_cl_check_lse(dev, c2, &opts, "chunked lse", seed + 300));
        tally(avk_cl_check_row_range(dev, c2, &opts, 10, 17, "chunked rows 10+17", seed + 301));
        unsetenv("ATTNVK_CLBLAST_MAX_ELEMENTS");
    }
    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
