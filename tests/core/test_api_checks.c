/* Argument checks of the public API: problem sizes that would overflow the
 * 32-bit indexing of the kernels, device specs that match nothing (also in
 * ATTNVK_VISIBLE_DEVICES), and implementation/variant names. */
#include "test_util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int count;

static void expect_status(attnvk_status got, attnvk_status want, const char *fragment, const char *what)
{
    int ok = got == want && (!fragment || strstr(attnvk_last_error(), fragment));
    EXPECT(ok, "%s: status %s, message '%s' (want %s, '%s')", what, attnvk_status_name(got), attnvk_last_error(),
           attnvk_status_name(want), fragment ? fragment : "");
    count += ok;
}

static attnvk_problem shape(int b, int h, int nq, int nk, int d)
{
    attnvk_problem p = {.batch = b, .heads = h, .kv_heads = h, .seq_q = nq, .seq_kv = nk, .head_dim = d};
    return p;
}

static void problem_limits(void)
{
    attnvk_problem p = shape(INT_MAX, INT_MAX, 1 << 30, 1 << 30, 1024); /* 2^92 elements: past int64 */
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "tensor too large", "B*H*N*D past int64");
    p = shape(1, 1, 1, INT_MAX, 1); /* Nk elements fit int32, but i + Nk - Nq would not */
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "sequence lengths", "Nk = 2^31-1");
    p = shape(1, 1, 1 << 30, 1, 1);
    expect_status(attnvk_problem_validate(&p), ATTNVK_OK, NULL, "Nq = 2^30 at D = 1");
    p = shape(2, 1, 1 << 30, 1, 1); /* 2^31 query elements */
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "2147483647 elements",
                  "2^31 query elements");
    p = shape(1, 1 << 16, 1 << 16, 1, 1); /* 2^32 query elements */
    expect_status(attnvk_problem_validate(&p), ATTNVK_ERROR_INVALID_ARGUMENT, "tensor too large", "2^32 elements");
}

static int has(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; ++i)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

static void names_and_specs(void)
{
    int ok = attnvk_api_compiled(ATTNVK_API_CPU) && has(attnvk_api_variants(ATTNVK_API_CPU), "reference-f64") &&
             has(attnvk_implementation_names(), "attnvk") && has(attnvk_implementation_names(), "cudnn");
    EXPECT(ok, "cpu is built, with its variant; the implementation names list attnvk and cudnn");
    count += ok;

    unsetenv("ATTNVK_VISIBLE_DEVICES");
    attnvk_context *ctx = NULL;
    expect_status(attnvk_context_create(&ctx), ATTNVK_OK, NULL, "context");
    if (!ctx) return;
    expect_status(attnvk_device_spec_check(ctx, "cpu"), ATTNVK_OK, NULL, "spec cpu");
    expect_status(attnvk_device_spec_check(ctx, "cpu:0,0"), ATTNVK_OK, NULL, "spec cpu:0,0");
    expect_status(attnvk_device_spec_check(ctx, ""), ATTNVK_ERROR_INVALID_ARGUMENT, "empty", "empty spec");
    expect_status(attnvk_device_spec_check(ctx, "cpu,,0"), ATTNVK_ERROR_INVALID_ARGUMENT, "empty item", "empty item");
    expect_status(attnvk_device_spec_check(ctx, "cpu:"), ATTNVK_ERROR_INVALID_ARGUMENT, "matches no device", "cpu:");
    expect_status(attnvk_device_spec_check(ctx, "cpu,no-such-gpu"), ATTNVK_ERROR_INVALID_ARGUMENT, "0=cpu:0",
                  "a name that matches nothing lists the devices");
    expect_status(attnvk_device_spec_check(ctx, "9999"), ATTNVK_ERROR_INVALID_ARGUMENT, "'9999'", "position 9999");

    int cpu = -1;
    attnvk_device *dev = NULL;
    if (attnvk_device_select(ctx, "cpu", &cpu, 1) == 1 && attnvk_device_open(ctx, cpu, &dev) == ATTNVK_OK) {
        attnvk_problem p = shape(1, 1, 4, 4, 8);
        attnvk_kernel *k = NULL;
        attnvk_kernel_options o = {.implementation = "bogus"};
        expect_status(attnvk_kernel_prepare(dev, &p, &o, &k, NULL), ATTNVK_ERROR_INVALID_ARGUMENT,
                      "unknown implementation 'bogus' (attnvk, cudnn", "unknown implementation");
        o = (attnvk_kernel_options){.variant = "wgmma"};
        expect_status(attnvk_kernel_prepare(dev, &p, &o, &k, NULL), ATTNVK_ERROR_UNSUPPORTED,
                      "cpu has no variant 'wgmma' (flash-f32, reference-f64)", "another API's variant");
        o = (attnvk_kernel_options){.tile_br = 1 << 20};
        expect_status(attnvk_kernel_prepare(dev, &p, &o, &k, NULL), ATTNVK_ERROR_INVALID_ARGUMENT, "0..4096",
                      "tile past 4096");
        o = (attnvk_kernel_options){.variant = "reference-f64"};
        expect_status(attnvk_kernel_prepare(dev, &p, &o, &k, NULL), ATTNVK_OK, NULL, "the cpu's own variant");
        attnvk_kernel_destroy(k);
        attnvk_device_close(dev);
    } else {
        EXPECT(0, "cannot open the cpu device: %s", attnvk_last_error());
    }
    attnvk_context_destroy(ctx);

    /* ATTNVK_VISIBLE_DEVICES: a typo must not hide every device silently */
    setenv("ATTNVK_VISIBLE_DEVICES", "no-such-gpu", 1);
    ctx = NULL;
    expect_status(attnvk_context_create(&ctx), ATTNVK_ERROR_INVALID_ARGUMENT,
                  "ATTNVK_VISIBLE_DEVICES: 'no-such-gpu' matches no device", "ATTNVK_VISIBLE_DEVICES=no-such-gpu");
    EXPECT(ctx == NULL, "no context on a bad ATTNVK_VISIBLE_DEVICES");
    attnvk_context_destroy(ctx);
    setenv("ATTNVK_VISIBLE_DEVICES", "cpu", 1);
    expect_status(attnvk_context_create(&ctx), ATTNVK_OK, NULL, "ATTNVK_VISIBLE_DEVICES=cpu");
    ok = ctx && attnvk_device_count(ctx) == 1 && attnvk_device_info_at(ctx, 0)->api == ATTNVK_API_CPU;
    EXPECT(ok, "ATTNVK_VISIBLE_DEVICES=cpu keeps the cpu device alone");
    count += ok;
    attnvk_context_destroy(ctx);
    unsetenv("ATTNVK_VISIBLE_DEVICES");
}

int main(void)
{
    problem_limits();
    names_and_specs();
    return avk_test_finish(count, 0);
}
