/* KV-cache test cases shared by every API's tests (see test_util.h): the
 * table and runner live in core/cache_cases.c, where `attnvk check` uses
 * them too. */
#include "test_util.h"

#include <stdio.h>

int avk_test_cache_cases(attnvk_dtype dtype, avk_cache_case *out, int max) { return avk_cache_cases(dtype, out, max); }

int avk_test_run_cache_case(attnvk_device *dev, const avk_cache_case *c, const attnvk_kernel_options *opts,
                            uint64_t seed, int allow_unsupported)
{
    avk_cache_result r;
    attnvk_status s = avk_cache_case_run(dev, c, opts, seed, &r);
    int ok = 0;
    if (s == ATTNVK_ERROR_UNSUPPORTED && allow_unsupported) {
        printf("skip %-28s %s: %s\n", c->label, r.shape, r.message);
        ok = 1;
    } else if (s != ATTNVK_OK) {
        printf("FAIL %-28s %s: %s: %s\n", c->label, r.shape, attnvk_status_name(s), r.message);
    } else {
        ok = r.check.passed;
        printf("%s %-28s %s: %s %dx%d split %d rel_l2 %.2e max_abs %.2e nonfinite %zu\n", ok ? "ok  " : "FAIL",
               c->label, r.shape, r.info.variant, r.info.tile_br, r.info.tile_bc, r.info.split_kv, r.check.rel_l2,
               r.check.max_abs, r.check.nonfinite);
    }
    fflush(stdout);
    return ok;
}
