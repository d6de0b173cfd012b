/* hello_attnvk: the smallest program built against an installed attnvk.
 * Lists the devices, runs a small causal GQA attention on one of them (the
 * CPU device unless a spec such as "vulkan", "opencl:0" or "cuda" is given)
 * and checks O against a naive softmax(scale * Q K^T) V computed here.
 *
 *   cc hello_attnvk.c $(pkg-config --cflags --libs attnvk) -lm -o hello_attnvk
 *
 * Exit: 0 ok, 1 failure, 77 when the spec names no device on this machine. */
#include <attnvk/attnvk.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 1, H = 4, HKV = 2, NQ = 37, NK = 45, D = 64 };

/* O[b,h,i,:] for BHSD f32 with bottom-right causal alignment, in double */
static void naive_attention(const float *q, const float *k, const float *v, float *o, float scale) {
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int g = h / (H / HKV);
            for (int i = 0; i < NQ; i++) {
                const float *qi = q + (((size_t)b * H + h) * NQ + i) * D;
                double s[NK], m = -INFINITY, sum = 0, acc[D] = {0};
                int visible = i + NK - NQ; /* keys 0..visible */
                for (int j = 0; j <= visible; j++) {
                    const float *kj = k + (((size_t)b * HKV + g) * NK + j) * D;
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += (double)qi[d] * kj[d];
                    s[j] = scale * dot;
                    if (s[j] > m) m = s[j];
                }
                for (int j = 0; j <= visible; j++) {
                    double p = exp(s[j] - m);
                    const float *vj = v + (((size_t)b * HKV + g) * NK + j) * D;
                    sum += p;
                    for (int d = 0; d < D; d++) acc[d] += p * vj[d];
                }
                float *oi = o + (((size_t)b * H + h) * NQ + i) * D;
                for (int d = 0; d < D; d++) oi[d] = (float)(acc[d] / sum);
            }
        }
}

static int fail(const char *what, attnvk_status s) {
    fprintf(stderr, "hello_attnvk: %s: %s: %s\n", what, attnvk_status_name(s), attnvk_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *spec = argc > 1 ? argv[1] : "cpu";
    attnvk_context *ctx = NULL;
    attnvk_status s = attnvk_context_create(&ctx);
    if (s != ATTNVK_OK) return fail("context", s);

    int n = attnvk_device_count(ctx);
    printf("attnvk %s: %d device(s)\n", ATTNVK_VERSION_STRING, n);
    for (int i = 0; i < n; i++) {
        const attnvk_device_info *di = attnvk_device_info_at(ctx, i);
        printf("  %d: %s:%d %s (%s)\n", i, attnvk_api_name(di->api), di->index, di->name,
               attnvk_device_type_name(di->type));
    }
    int pick;
    if (attnvk_device_select(ctx, spec, &pick, 1) < 1) {
        printf("no device matches \"%s\"\n", spec);
        attnvk_context_destroy(ctx);
        return 77;
    }

    attnvk_problem p = {.batch = B, .heads = H, .kv_heads = HKV, .seq_q = NQ, .seq_kv = NK, .head_dim = D,
                        .causal = 1, .dtype = ATTNVK_F32, .layout = ATTNVK_LAYOUT_BHSD};
    size_t nq = (size_t)B * H * NQ * D, nkv = (size_t)B * HKV * NK * D;
    float *q = malloc(nq * sizeof *q), *k = malloc(nkv * sizeof *k), *v = malloc(nkv * sizeof *v);
    float *o = malloc(nq * sizeof *o), *want = malloc(nq * sizeof *want);
    if (!q || !k || !v || !o || !want) return fail("malloc", ATTNVK_ERROR_OUT_OF_MEMORY);
    attnvk_fill_random(q, nq, 1);
    attnvk_fill_random(k, nkv, 2);
    attnvk_fill_random(v, nkv, 3);

    attnvk_device *dev = NULL;
    s = attnvk_device_open(ctx, pick, &dev);
    if (s != ATTNVK_OK) return fail("device_open", s);
    attnvk_kernel_info info;
    double ms = 0;
    s = attnvk_attention_host(dev, &p, NULL, q, k, v, o, NULL, &info, &ms);
    if (s != ATTNVK_OK) return fail("attention", s);

    naive_attention(q, k, v, want, attnvk_problem_scale(&p));
    double err = 0, ref = 0;
    for (size_t i = 0; i < nq; i++) {
        double d = (double)o[i] - want[i];
        err += d * d;
        ref += (double)want[i] * want[i];
    }
    double rel = sqrt(err / ref);
    int ok = rel <= 1e-5;
    printf("%s on %s (%s %s): rel L2 %.3g %s\n", ok ? "ok" : "FAILED", attnvk_device_info_of(dev)->name,
           info.implementation, info.variant, rel, ok ? "<= 1e-5" : "> 1e-5");

    attnvk_device_close(dev);
    attnvk_context_destroy(ctx);
    free(q), free(k), free(v), free(o), free(want);
    return ok ? 0 : 1;
}
