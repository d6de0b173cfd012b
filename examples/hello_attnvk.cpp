// hello_attnvk.cpp: hello_attnvk.c in C++, built against an installed attnvk.
// Runs a small causal GQA attention on the first device (or the one a spec
// such as "vulkan", "opencl:0" or "cuda" names) through buffers and a
// prepared kernel, once synchronously and once with attnvk_kernel_run_async
// and attnvk_device_wait, and checks O against a naive softmax(scale Q K^T) V
// computed here.
//
//   c++ hello_attnvk.cpp $(pkg-config --cflags --libs attnvk) -o hello_attnvk_cpp
//
// Exit: 0 ok, 1 failure, 77 when the spec names no device on this machine.
#include <attnvk/attnvk.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int B = 1, H = 4, HKV = 2, NQ = 37, NK = 45, D = 64;

// Throws with attnvk's one-line message when a call fails.
void check(attnvk_status s, const char *what)
{
    if (s != ATTNVK_OK)
        throw std::runtime_error(std::string(what) + ": " + attnvk_status_name(s) + ": " + attnvk_last_error());
}

// attnvk's handles, closed in reverse order whatever happens.
struct context_deleter { void operator()(attnvk_context *c) const { attnvk_context_destroy(c); } };
struct device_deleter { void operator()(attnvk_device *d) const { attnvk_device_close(d); } };
struct buffer_deleter { void operator()(attnvk_buffer *b) const { attnvk_buffer_destroy(b); } };
struct kernel_deleter { void operator()(attnvk_kernel *k) const { attnvk_kernel_destroy(k); } };
using context_ptr = std::unique_ptr<attnvk_context, context_deleter>;
using device_ptr = std::unique_ptr<attnvk_device, device_deleter>;
using buffer_ptr = std::unique_ptr<attnvk_buffer, buffer_deleter>;
using kernel_ptr = std::unique_ptr<attnvk_kernel, kernel_deleter>;

buffer_ptr upload(attnvk_device *dev, const std::vector<float> &host)
{
    attnvk_buffer *b = nullptr;
    check(attnvk_buffer_create(dev, host.size() * sizeof(float), &b), "buffer_create");
    buffer_ptr owned(b);
    check(attnvk_buffer_write(b, 0, host.data(), host.size() * sizeof(float)), "buffer_write");
    return owned;
}

// O[b,h,i,:] for BHSD f32 with bottom-right causal alignment, in double.
std::vector<float> naive_attention(const std::vector<float> &q, const std::vector<float> &k,
                                   const std::vector<float> &v, float scale)
{
    std::vector<float> o(q.size());
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const int g = h / (H / HKV);
            for (int i = 0; i < NQ; i++) {
                const float *qi = &q[((static_cast<size_t>(b) * H + h) * NQ + i) * D];
                std::vector<double> s(NK), acc(D, 0.0);
                double m = -INFINITY, sum = 0;
                const int visible = i + NK - NQ; // keys 0..visible
                for (int j = 0; j <= visible; j++) {
                    const float *kj = &k[((static_cast<size_t>(b) * HKV + g) * NK + j) * D];
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += static_cast<double>(qi[d]) * kj[d];
                    s[j] = scale * dot;
                    if (s[j] > m) m = s[j];
                }
                for (int j = 0; j <= visible; j++) {
                    const double p = std::exp(s[j] - m);
                    const float *vj = &v[((static_cast<size_t>(b) * HKV + g) * NK + j) * D];
                    sum += p;
                    for (int d = 0; d < D; d++) acc[d] += p * vj[d];
                }
                float *oi = &o[((static_cast<size_t>(b) * H + h) * NQ + i) * D];
                for (int d = 0; d < D; d++) oi[d] = static_cast<float>(acc[d] / sum);
            }
        }
    return o;
}

double relative_l2(const std::vector<float> &got, const std::vector<float> &want)
{
    double err = 0, ref = 0;
    for (size_t i = 0; i < got.size(); i++) {
        const double d = static_cast<double>(got[i]) - want[i];
        err += d * d;
        ref += static_cast<double>(want[i]) * want[i];
    }
    return std::sqrt(err / ref); // NaN (a poisoned O left unwritten) never passes
}

int run(const char *spec)
{
    attnvk_context *c = nullptr;
    check(attnvk_context_create(&c), "context_create");
    context_ptr ctx(c);
    const int n = attnvk_device_count(c);
    std::printf("attnvk %s (C++): %d device(s)\n", ATTNVK_VERSION_STRING, n);
    int pick = 0;
    if (attnvk_device_select(c, spec, &pick, 1) < 1) {
        std::printf("no device matches \"%s\"\n", spec ? spec : "");
        return 77;
    }
    attnvk_device *d = nullptr;
    check(attnvk_device_open(c, pick, &d), "device_open");
    device_ptr dev(d);

    attnvk_problem p;
    attnvk_problem_init(&p);
    p.batch = B, p.heads = H, p.kv_heads = HKV, p.seq_q = NQ, p.seq_kv = NK, p.head_dim = D;
    p.causal = 1, p.dtype = ATTNVK_F32, p.layout = ATTNVK_LAYOUT_BHSD;
    std::vector<float> q(attnvk_q_elements(&p)), k(attnvk_kv_elements(&p)), v(attnvk_kv_elements(&p));
    attnvk_fill_random(q.data(), q.size(), 1);
    attnvk_fill_random(k.data(), k.size(), 2);
    attnvk_fill_random(v.data(), v.size(), 3);
    const std::vector<float> want = naive_attention(q, k, v, attnvk_problem_scale(&p));

    buffer_ptr bq = upload(d, q), bk = upload(d, k), bv = upload(d, v);
    std::vector<float> o(attnvk_o_elements(&p), NAN);
    buffer_ptr bo = upload(d, o); // poisoned: a row the kernel misses stays NaN

    attnvk_kernel *kr = nullptr;
    attnvk_kernel_info info{};
    check(attnvk_kernel_prepare(d, &p, nullptr, &kr, &info), "kernel_prepare");
    kernel_ptr kernel(kr);

    double ms = 0;
    check(attnvk_kernel_run(kr, bq.get(), bk.get(), bv.get(), bo.get(), nullptr, 0, 0, &ms), "kernel_run");
    check(attnvk_buffer_read(bo.get(), 0, o.data(), o.size() * sizeof(float)), "buffer_read");
    const double sync_rel = relative_l2(o, want);

    std::vector<float> poison(o.size(), NAN);
    check(attnvk_buffer_write(bo.get(), 0, poison.data(), poison.size() * sizeof(float)), "buffer_write");
    attnvk_tensors t{};
    t.q = bq.get(), t.k = bk.get(), t.v = bv.get(), t.o = bo.get();
    check(attnvk_kernel_run_async(kr, &t, nullptr), "kernel_run_async");
    check(attnvk_device_wait(d), "device_wait");
    check(attnvk_buffer_read(bo.get(), 0, o.data(), o.size() * sizeof(float)), "buffer_read");
    const double async_rel = relative_l2(o, want);

    const bool ok = sync_rel <= 1e-5 && async_rel <= 1e-5;
    std::printf("%s on %s (%s %s): rel L2 %.3g sync, %.3g async %s\n", ok ? "ok" : "FAILED",
                attnvk_device_info_of(d)->name, info.implementation, info.variant, sync_rel, async_rel,
                ok ? "<= 1e-5" : "> 1e-5");
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        return run(argc > 1 ? argv[1] : nullptr); // no spec: the first device
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hello_attnvk_cpp: %s\n", e.what());
        return 1;
    }
}
