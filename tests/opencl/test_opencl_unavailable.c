/* Missing pieces are reasons, not crashes. Run by ctest with the
 * environment each mode needs:
 *   no-library   ATTNVK_OPENCL_LIBRARY=/nonexistent/...  -> opencl unavailable
 *   no-platform  OCL_ICD_VENDORS=/nonexistent-dir        -> opencl unavailable
 *   no-clblast   ATTNVK_CLBLAST_LIBRARY=/nonexistent/... -> clblast listed, unavailable */
#include "test_util.h"

#include <string.h>

enum { SKIP = 77 };

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    attnvk_context *ctx = NULL;
    if (attnvk_context_create(&ctx) != ATTNVK_OK) {
        printf("FAIL context: %s\n", attnvk_last_error());
        return avk_test_finish(0, 1);
    }
    const char *reason = "";
    attnvk_status s = attnvk_api_status(ctx, ATTNVK_API_OPENCL, &reason);
    int passed = 0, failed = 0, ok;
    if (!strcmp(mode, "no-library") || !strcmp(mode, "no-platform")) {
        const char *want = !strcmp(mode, "no-library") ? "cannot load" : "no OpenCL platforms";
        ok = s == ATTNVK_ERROR_UNAVAILABLE && strstr(reason, want) != NULL;
        printf("%s opencl %s: %s: %s\n", ok ? "ok  " : "FAIL", mode, attnvk_status_name(s), reason);
        ok ? ++passed : ++failed;
        int idx[4];
        ok = attnvk_device_select(ctx, "opencl", idx, 4) == 0;
        printf("%s no opencl devices listed\n", ok ? "ok  " : "FAIL");
        ok ? ++passed : ++failed;
    } else if (!strcmp(mode, "no-clblast")) {
        attnvk_device *dev = avk_test_open_api(ctx, ATTNVK_API_OPENCL);
        if (!dev) {
            attnvk_context_destroy(ctx);
            return SKIP;
        }
        attnvk_impl_info impls[8];
        int n = attnvk_device_implementations(dev, impls, 8);
        ok = 0;
        for (int i = 0; i < n; ++i)
            if (!strcmp(impls[i].name, "clblast"))
                ok = !impls[i].available && impls[i].fused == 0 && strstr(impls[i].reason, "cannot load");
        printf("%s clblast listed as unavailable with a reason\n", ok ? "ok  " : "FAIL");
        ok ? ++passed : ++failed;
        attnvk_problem p = {.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 8, .seq_kv = 8, .head_dim = 16};
        attnvk_kernel_options opts = {.implementation = "clblast"};
        attnvk_kernel *k = NULL;
        s = attnvk_kernel_prepare(dev, &p, &opts, &k, NULL);
        ok = s == ATTNVK_ERROR_UNAVAILABLE;
        printf("%s prepare clblast -> %s: %s\n", ok ? "ok  " : "FAIL", attnvk_status_name(s), attnvk_last_error());
        ok ? ++passed : ++failed;
        attnvk_kernel_destroy(k);
        attnvk_device_close(dev);
    } else {
        printf("usage: test_opencl_unavailable no-library|no-platform|no-clblast\n");
        ++failed;
    }
    attnvk_context_destroy(ctx);
    return avk_test_finish(passed, failed);
}
