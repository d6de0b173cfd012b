#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int avk_test_failures = 0;

uint64_t avk_test_seed(void)
{
    const char *env = getenv("ATTNVK_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    fprintf(stderr, "test seed %llu (ATTNVK_TEST_SEED to replay)\n", (unsigned long long)seed);
    return seed;
}

void avk_test_inputs(const attnvk_problem *p, uint64_t seed, float **q, float **k, float **v)
{
    if (!avk_random_inputs(p, seed, q, k, v)) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
}

int avk_test_run_case(attnvk_device *dev, const attnvk_problem *p, const attnvk_kernel_options *opts,
                      const char *label, uint64_t seed, int allow_unsupported)
{
    float *q, *k, *v;
    avk_test_inputs(p, seed, &q, &k, &v);
    size_t nq = attnvk_q_elements(p);
    float *o = malloc(nq * sizeof(float));
    attnvk_kernel_info info;
    memset(&info, 0, sizeof info);
    char shape[160];
    snprintf(shape, sizeof shape, "B%d H%d/%d Nq%d Nk%d D%d %s %s%s", p->batch, p->heads, p->kv_heads, p->seq_q,
             p->seq_kv, p->head_dim, attnvk_dtype_name(p->dtype), p->layout == ATTNVK_LAYOUT_BHSD ? "bhsd" : "bshd",
             p->causal ? " causal" : "");
    double ms = 0;
    attnvk_status s = attnvk_attention_host(dev, p, opts, q, k, v, o, NULL, &info, &ms);
    int ok;
    if (s == ATTNVK_ERROR_UNSUPPORTED && allow_unsupported) {
        printf("skip %-28s %s: %s\n", label, shape, attnvk_last_error());
        ok = 1;
    } else if (s != ATTNVK_OK) {
        printf("FAIL %-28s %s: %s: %s\n", label, shape, attnvk_status_name(s), attnvk_last_error());
        ok = 0;
    } else {
        attnvk_check c = attnvk_check_output(p, q, k, v, o, NULL, 0);
        ok = c.passed;
        printf("%s %-28s %s: %s %dx%d rel_l2 %.2e max_abs %.2e nonfinite %zu\n", ok ? "ok  " : "FAIL", label, shape,
               info.variant, info.tile_br, info.tile_bc, c.rel_l2, c.max_abs, c.nonfinite);
    }
    fflush(stdout);
    free(q);
    free(k);
    free(v);
    free(o);
    return ok;
}

int avk_test_feature_cases(attnvk_dtype dtype, attnvk_problem *out, const char **labels, int max)
{
    /* B, H, Hkv, Nq, Nk, D, causal, layout */
    static const struct { const char *label; int b, h, hkv, nq, nk, d, causal, bshd; } cases[] = {
        {"basic", 2, 4, 4, 64, 64, 64, 0, 0},
        {"odd lengths", 1, 2, 2, 77, 131, 64, 0, 0},
        {"odd lengths causal", 1, 2, 2, 131, 131, 64, 1, 0},
        {"causal Nq<Nk", 1, 2, 2, 37, 200, 64, 1, 0},
        {"causal Nq<Nk bshd", 1, 2, 1, 45, 190, 32, 1, 1},
        {"causal Nq>Nk (empty rows)", 1, 1, 1, 70, 40, 32, 1, 0},
        {"GQA 8:2", 1, 8, 2, 33, 97, 64, 0, 0},
        {"GQA 8:2 bshd causal", 2, 8, 2, 50, 50, 64, 1, 1},
        {"MQA", 1, 4, 1, 29, 150, 64, 0, 0},
        {"decode Nq=1 Nk=2049", 1, 4, 2, 1, 2049, 128, 0, 0},
        {"decode Nq=1 causal bshd", 2, 4, 1, 1, 700, 64, 1, 1},
        {"decode Nq=4 GQA", 1, 8, 2, 4, 1500, 128, 1, 0},
        {"D=32", 1, 2, 2, 65, 65, 32, 0, 0},
        {"D=80", 1, 2, 2, 70, 90, 80, 0, 0},
        {"D=96 causal", 1, 2, 1, 96, 96, 96, 1, 0},
        {"D=128 bshd", 1, 2, 2, 60, 130, 128, 0, 1},
        {"D=256", 1, 2, 2, 40, 100, 256, 0, 0},
        {"D=256 causal bshd", 1, 2, 2, 33, 33, 256, 1, 1},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases && n < max; ++i, ++n) {
        attnvk_problem *p = &out[n];
        memset(p, 0, sizeof *p);
        p->batch = cases[i].b;
        p->heads = cases[i].h;
        p->kv_heads = cases[i].hkv;
        p->seq_q = cases[i].nq;
        p->seq_kv = cases[i].nk;
        p->head_dim = cases[i].d;
        p->causal = cases[i].causal;
        p->layout = cases[i].bshd ? ATTNVK_LAYOUT_BSHD : ATTNVK_LAYOUT_BHSD;
        p->dtype = dtype;
        labels[n] = cases[i].label;
    }
    return n;
}

attnvk_device *avk_test_open_api(attnvk_context *ctx, attnvk_api api)
{
    const char *reason;
    if (attnvk_api_status(ctx, api, &reason) != ATTNVK_OK) {
        printf("%s unavailable: %s\n", attnvk_api_name(api), reason);
        return NULL;
    }
    int idx[1];
    if (attnvk_device_select(ctx, attnvk_api_name(api), idx, 1) < 1) {
        printf("%s: no visible device\n", attnvk_api_name(api));
        return NULL;
    }
    attnvk_device *dev = NULL;
    if (attnvk_device_open(ctx, idx[0], &dev) != ATTNVK_OK) {
        printf("%s: cannot open device: %s\n", attnvk_api_name(api), attnvk_last_error());
        return NULL;
    }
    return dev;
}

int avk_test_finish(int passed, int failed)
{
    failed += avk_test_failures;
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
