/* The HIP build, checked without an AMD GPU: every (arch, variant) code
 * object the tuning table needs is embedded, non-empty, an AMDGPU ELF for the
 * right gfx target, and holds the kernel of every configuration the table
 * selects there; the lookup picks the right object per gfx arch. The same
 * for the backward's "bwd" objects (issue #18): every instance's four
 * kernels, and a configuration within the LDS for every head dim; and the
 * "softmax" objects hold rocBLAS's backward row kernels beside the forward's. */
#include "test_util.h"
#include "hip/hip_kernels.h"
#include "hip/hip_merge.h"
#include "hip/hip_modules.h"
#include "hip/hip_rocblas.h"

#include "../../native/amd_fragments.h" /* the matrix scratch per wave */

#include <stdint.h>
#include <string.h>

static int passed;

/* failures are counted by EXPECT (avk_test_failures) */
#define CHECK(cond, ...)                  \
    do {                                  \
        int ok_ = (cond);                 \
        EXPECT(ok_, __VA_ARGS__);         \
        passed += ok_;                    \
    } while (0)

static uint64_t rd(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

/* EF_AMDGPU_MACH_* of the ELF header's e_flags (low byte). */
static unsigned elf_mach(const unsigned char *d) { return (unsigned)(rd(d + 0x30, 4) & 0xffu); }

static unsigned expected_mach(const char *arch)
{
    if (strcmp(arch, "gfx90a") == 0) return 0x3f;
    if (strcmp(arch, "gfx940") == 0) return 0x40;
    if (strcmp(arch, "gfx1030") == 0) return 0x36;
    return 0;
}

/* 1 when the ELF's symbol tables define `name`. */
static int elf_has_symbol(const unsigned char *d, size_t size, const char *name)
{
    uint64_t shoff = rd(d + 0x28, 8);
    unsigned shentsize = (unsigned)rd(d + 0x3a, 2), shnum = (unsigned)rd(d + 0x3c, 2);
    if (shoff + (uint64_t)shentsize * shnum > size) return 0;
    for (unsigned i = 0; i < shnum; ++i) {
        const unsigned char *sh = d + shoff + (uint64_t)i * shentsize;
        unsigned type = (unsigned)rd(sh + 4, 4);
        if (type != 2 /* SHT_SYMTAB */ && type != 11 /* SHT_DYNSYM */) continue;
        uint64_t off = rd(sh + 0x18, 8), sz = rd(sh + 0x20, 8), ent = rd(sh + 0x38, 8);
        unsigned link = (unsigned)rd(sh + 0x28, 4);
        if (link >= shnum || !ent || off + sz > size) continue;
        const unsigned char *strsh = d + shoff + (uint64_t)link * shentsize;
        uint64_t stroff = rd(strsh + 0x18, 8), strsz = rd(strsh + 0x20, 8);
        for (uint64_t s = 0; s + ent <= sz; s += ent) {
            uint64_t nm = rd(d + off + s, 4);
            if (nm < strsz && stroff + strsz <= size &&
                strncmp((const char *)d + stroff + nm, name, (size_t)(strsz - nm)) == 0)
                return 1;
        }
    }
    return 0;
}

static void check_objects(void)
{
    int count;
    const avk_tuning *table = avk_hip_tuning_table(&count);
    for (int a = 0; a < avk_hip_build_arch_count; ++a) {
        const char *arch = avk_hip_build_archs[a];
        int objects = 0;
        for (int i = 0; i < count; ++i) {
            int seen = 0;
            for (int j = 0; j < i; ++j) seen |= strcmp(table[j].variant, table[i].variant) == 0;
            avk_hip_config inst[64];
            int n = seen ? 0 : avk_hip_instances(arch, table[i].variant, inst, 64);
            if (n == 0) continue;
            ++objects;
            const avk_hip_code_object *co = avk_hip_find_code_object(arch, table[i].variant);
            CHECK(co != NULL, "%s/%s: code object embedded", arch, table[i].variant);
            if (!co) continue;
            size_t size = *co->size;
            CHECK(size > 0, "%s/%s: non-empty", arch, co->name);
            CHECK(avk_hip_is_amdgpu_elf(co->data, size), "%s/%s: ELF64 for EM_AMDGPU (224)", arch, co->name);
            if (size < 64) continue;
            CHECK(elf_mach(co->data) == expected_mach(arch), "%s/%s: e_flags mach 0x%x, want 0x%x", arch, co->name,
                  elf_mach(co->data), expected_mach(arch));
            int have = 0;
            for (int k = 0; k < n && k < 64; ++k) {
                char fwd[128], reduce[128];
                avk_hip_kernel_names(&inst[k], fwd, reduce, sizeof fwd);
                int ok = elf_has_symbol(co->data, size, fwd) &&
                         (!inst[k].split || elf_has_symbol(co->data, size, reduce));
                EXPECT(ok, "%s/%s lacks %s", arch, co->name, fwd);
                have += ok;
            }
            CHECK(have == n, "%s/%s: %d of %d kernel instances present", arch, co->name, have, n);
            printf("ok   %-8s %-9s %7zu bytes, %2d kernel instances\n", arch, co->name, size, n);
        }
        const avk_hip_code_object *sm = avk_hip_find_code_object(arch, "softmax");
        CHECK(sm && *sm->size > 0 && avk_hip_is_amdgpu_elf(sm->data, *sm->size) &&
                  elf_mach(sm->data) == expected_mach(arch) && elf_has_symbol(sm->data, *sm->size, "avk_softmax_rows_bf16"),
              "%s/softmax: embedded AMDGPU ELF with the softmax kernels", arch);
        /* ring attention's merge (native/ring_merge.cu): a kernel per dtype */
        const avk_hip_code_object *rm = avk_hip_find_code_object(arch, AVK_HIP_MERGE_OBJECT);
        int merge_kernels = 0;
        for (int k = 0; rm && *rm->size >= 64 && k < 3; ++k) merge_kernels += elf_has_symbol(rm->data, *rm->size, avk_hip_merge_kernels[k]);
        CHECK(rm && avk_hip_is_amdgpu_elf(rm->data, *rm->size) && elf_mach(rm->data) == expected_mach(arch) &&
                  merge_kernels == 3,
              "%s/%s: embedded AMDGPU ELF with the three merge kernels", arch, AVK_HIP_MERGE_OBJECT);
        /* rocBLAS's backward (hip_rocblas_backward.c) takes its kernels from the same object */
        static const char *const rocblas_bwd[] = {"avk_softmax_bwd_f32",     "avk_softmax_bwd_f16",
                                                  "avk_softmax_bwd_bf16",    "avk_softmax_bwd_f32_mod",
                                                  "avk_softmax_bwd_f16_mod", "avk_softmax_bwd_bf16_mod",
                                                  "avk_sink_grad",           "avk_convert_f16",
                                                  "avk_convert_bf16"};
        int have_bwd = 0;
        for (size_t i = 0; sm && i < sizeof rocblas_bwd / sizeof *rocblas_bwd; ++i)
            have_bwd += elf_has_symbol(sm->data, *sm->size, rocblas_bwd[i]);
        CHECK(have_bwd == (int)(sizeof rocblas_bwd / sizeof *rocblas_bwd),
              "%s/softmax: %d of the rocBLAS backward's %zu kernels", arch, have_bwd,
              sizeof rocblas_bwd / sizeof *rocblas_bwd);
        CHECK(objects > 0, "%s: the table uses some variant", arch);
    }
    /* nothing embedded the table does not use */
    for (int i = 0; i < avk_hip_code_object_count; ++i) {
        const avk_hip_code_object *co = &avk_hip_code_objects[i];
        avk_hip_config c;
        avk_native_bwd_config b;
        int used = strcmp(co->name, "softmax") == 0 || strcmp(co->name, AVK_HIP_MERGE_OBJECT) == 0 ||
                   avk_hip_instances(co->arch, co->name, &c, 1) > 0 ||
                   (strcmp(co->name, AVK_HIP_BWD_OBJECT) == 0 && avk_hip_bwd_instances(co->arch, &b, 1) > 0);
        CHECK(used, "%s/%s: embedded and used by the table", co->arch, co->name);
    }
}

/* The backward's objects: per gfx target, an AMDGPU ELF holding every kernel
 * of every instance (every dtype; the mma body's f16/bf16 where the target has
 * a matrix unit, whose six kernels include dK/dV with dQ's atomics). */
static void check_backward_objects(void)
{
    for (int a = 0; a < avk_hip_build_arch_count; ++a) {
        const char *arch = avk_hip_build_archs[a];
        avk_native_bwd_config inst[32];
        const int n = avk_hip_bwd_instances(arch, inst, 32);
        int dtypes = 0, mma = 0, f32 = 0, threads = 0;
        for (int i = 0; i < n && i < 32; ++i) {
            dtypes |= 1 << inst[i].dtype;
            mma += inst[i].mma;
            f32 += inst[i].dtype == ATTNVK_F32;
            const int t = inst[i].mma ? avk_native_bwd_threads_max(&inst[i]) : 0;
            threads = t > threads ? t : threads;
        }
        CHECK(n > 0 && n <= 32 && dtypes == 7, "%s: backward instances of every dtype (%d)", arch, n);
        /* the mma body for every f16/bf16 instance exactly where the forward's mma variants run */
        const int want_mma = avk_hip_arch_matrix(arch) ? n - f32 : 0;
        CHECK(mma == want_mma, "%s: %d of %d backward instances mma, want %d", arch, mma, n, want_mma);
        /* the object's matrix scratch is sized by its largest mma workgroup: every instance still fits */
        attnvk_device_info info;
        avk_hip_synthetic_device(arch, &info);
        const int wave = avk_hip_arch_wave(arch);
        for (int i = 0; i < n && i < 32; ++i) {
            if (!inst[i].mma) continue;
            const size_t lds = avk_native_bwd_smem_max(&inst[i]) +
                               (size_t)((threads + wave - 1) / wave) * AVK_SCRATCH_U16_PER_WAVE * 2;
            CHECK(lds <= (size_t)info.shared_memory_per_group, "%s/bwd: D=%d %s mma with the object's scratch: %zu B",
                  arch, inst[i].head_dim, attnvk_dtype_name(inst[i].dtype), lds);
        }
        const avk_hip_code_object *co = avk_hip_find_code_object(arch, AVK_HIP_BWD_OBJECT);
        CHECK(co && *co->size >= 64 && avk_hip_is_amdgpu_elf(co->data, *co->size) &&
                  elf_mach(co->data) == expected_mach(arch),
              "%s/bwd: embedded AMDGPU ELF for the target", arch);
        if (!co || *co->size < 64) continue;
        int have = 0, want = 0;
        for (int i = 0; i < n && i < 32; ++i)
            for (int k = 0; k < avk_native_bwd_kernel_count(&inst[i]); ++k, ++want) {
                char name[128];
                avk_hip_bwd_kernel_name(&inst[i], k, name, sizeof name);
                const int ok = elf_has_symbol(co->data, *co->size, name);
                EXPECT(ok, "%s/bwd lacks %s", arch, name);
                have += ok;
            }
        CHECK(have == want, "%s/bwd: %d of %d kernels present", arch, have, want);
        printf("ok   %-8s %-9s %7zu bytes, %2d instances (%d mma), %d kernels\n", arch, co->name, *co->size, n, mma,
               want);
    }
    /* every head dim the forward takes up to 256, within 64 KiB of LDS (the mma body's scratch
     * included) on wave64 MFMA (MI200, MI300X), wave32 WMMA and no matrix unit (gfx908 has no
     * bf16_1k); 512 refused */
    static const int dims[][2] = {{32, 32}, {40, 40}, {64, 64}, {72, 72}, {80, 80}, {96, 96}, {112, 112},
                                  {128, 128}, {192, 192}, {192, 128}, {256, 256}, {512, 512}};
    static const char *const archs[] = {"gfx90a", "gfx942", "gfx1100", "gfx1030", "gfx908"};
    for (size_t ai = 0; ai < sizeof archs / sizeof *archs; ++ai) {
        attnvk_device_info info;
        avk_hip_synthetic_device(archs[ai], &info);
        const int matrix = avk_hip_arch_matrix(archs[ai]) != 0, wave = avk_hip_arch_wave(archs[ai]);
        const avk_native_bwd_device dev = {"hip", matrix ? AVK_BWD_TENSOR_AMD : 0, 65536, wave,
                                           AVK_SCRATCH_U16_PER_WAVE * 2};
        for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i)
            for (int dt = ATTNVK_F32; dt <= ATTNVK_BF16; ++dt) {
                attnvk_problem p = {.batch = 1, .heads = 4, .kv_heads = 2, .seq_q = 300, .seq_kv = 300,
                                    .head_dim = dims[i][0], .head_dim_v = dims[i][1], .dtype = (attnvk_dtype)dt};
                avk_native_bwd_config c;
                const attnvk_status s = avk_hip_bwd_select(&info, &p, &c);
                if (dims[i][0] > 256) {
                    CHECK(s == ATTNVK_ERROR_UNSUPPORTED, "%s backward D=%d refused", archs[ai], dims[i][0]);
                    continue;
                }
                const int want_mma = matrix && dt != ATTNVK_F32 && dims[i][0] % 16 == 0 && dims[i][1] % 16 == 0;
                const size_t lds = avk_native_bwd_smem_max(&c) + avk_native_bwd_static_smem(&dev, &c);
                const int fits = s == ATTNVK_OK && c.mma == want_mma && lds <= 65536;
                const int shape = c.mma ? avk_native_bwd_threads(&c, AVK_BWD_DKDV) % wave == 0 &&
                                              avk_native_bwd_threads(&c, AVK_BWD_DQ) % wave == 0
                                        : (c.bc * c.head_dim) % c.threads == 0 &&
                                              (c.bc * c.head_dim_v) % c.threads == 0 &&
                                              (c.qb * c.head_dim) % c.threads == 0;
                CHECK(fits && shape, "%s backward D=%d/%d %s: %s %dx%d/%dx%d, %zu bytes of LDS", archs[ai], dims[i][0],
                      dims[i][1], attnvk_dtype_name(p.dtype), c.mma ? "mma" : "simt", c.bc, c.bq, c.qb, c.kb, lds);
            }
    }
}

typedef struct pick_case {
    const char *arch;
    attnvk_dtype dtype;
    int head_dim, seq_q;
    const char *variant;
    int br, bc;
    int embedded; /* the picked instance is in an embedded object */
} pick_case;

static void check_lookup(void)
{
    static const pick_case cases[] = {
        {"gfx90a", ATTNVK_F16, 128, 1024, "mma16", 64, 32, 1},
        {"gfx90a", ATTNVK_BF16, 64, 1024, "mma16", 64, 64, 1},
        {"gfx90a", ATTNVK_F16, 256, 1024, "mma16-qs", 32, 16, 1},
        {"gfx90a", ATTNVK_F32, 128, 1024, "simt", 32, 32, 1},
        {"gfx90a", ATTNVK_F16, 128, 1, "simt", 16, 32, 1},
        {"gfx940", ATTNVK_F16, 96, 512, "mma16", 64, 32, 1},
        {"gfx940", ATTNVK_BF16, 256, 512, "mma16-qs", 32, 16, 1},
        {"gfx1030", ATTNVK_F16, 128, 1024, "simt", 32, 32, 1},
        {"gfx1030", ATTNVK_BF16, 256, 1024, "simt", 16, 16, 1},
        {"gfx1030", ATTNVK_F32, 64, 8, "simt", 16, 32, 1},
        {"gfx942", ATTNVK_F16, 128, 1024, "mma16", 64, 32, 0},   /* MI300X: hipRTC */
        {"gfx1100", ATTNVK_F16, 128, 1024, "mma16", 64, 32, 0},  /* RDNA3 WMMA: hipRTC */
        {"gfx908", ATTNVK_F16, 128, 1024, "simt", 32, 32, 0},    /* MFMA without bf16_1k */
    };
    attnvk_kernel_options none;
    memset(&none, 0, sizeof none);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        const pick_case *t = &cases[i];
        attnvk_device_info info;
        avk_hip_synthetic_device(t->arch, &info);
        attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = t->seq_q, .seq_kv = 1024, .head_dim = t->head_dim, .causal = 0, .scale = 0, .dtype = t->dtype, .layout = ATTNVK_LAYOUT_BHSD};
        avk_hip_config c;
        int decode = p.seq_q <= 16;
        attnvk_status s = avk_hip_select(&info, &p, &none, decode, &c);
        CHECK(s == ATTNVK_OK && strcmp(c.variant, t->variant) == 0 && c.br == t->br && c.bc == t->bc &&
                  c.split == decode,
              "%s %s D=%d Nq=%d: picked %s %dx%d split=%d, want %s %dx%d", t->arch, attnvk_dtype_name(t->dtype),
              t->head_dim, t->seq_q, s == ATTNVK_OK ? c.variant : attnvk_last_error(), c.br, c.bc, c.split, t->variant,
              t->br, t->bc);
        const avk_hip_code_object *co = avk_hip_find_code_object(t->arch, c.variant);
        CHECK((co != NULL) == t->embedded && (!co || strcmp(co->arch, t->arch) == 0),
              "%s: %s object %s", t->arch, c.variant, t->embedded ? "embedded" : "left to hipRTC");
    }
    /* options override the table; rules are checked */
    attnvk_device_info info;
    avk_hip_synthetic_device("gfx1030", &info);
    attnvk_problem p = {.batch = 1, .heads = 8, .kv_heads = 8, .seq_q = 256, .seq_kv = 256, .head_dim = 128, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD};
    attnvk_kernel_options o = none;
    o.variant = "mma16";
    avk_hip_config c;
    CHECK(avk_hip_select(&info, &p, &o, 0, &c) == ATTNVK_ERROR_UNSUPPORTED, "mma16 on gfx1030 is unsupported");
    avk_hip_synthetic_device("gfx90a", &info);
    o.variant = "simt";
    o.tile_br = 64;
    CHECK(avk_hip_select(&info, &p, &o, 0, &c) == ATTNVK_ERROR_UNSUPPORTED, "simt 64x32 at D=128 exceeds 64 KiB LDS");
    o.tile_br = 16;
    CHECK(avk_hip_select(&info, &p, &o, 0, &c) == ATTNVK_OK && c.br == 16 && !c.mma, "simt 16x32 override");
    o.variant = "mma16";
    o.tile_br = 48;
    CHECK(avk_hip_select(&info, &p, &o, 0, &c) == ATTNVK_ERROR_INVALID_ARGUMENT,
          "mma16 tile_br 48 is not whole wave64s");
    p.dtype = ATTNVK_F32;
    o.tile_br = 0;
    CHECK(avk_hip_select(&info, &p, &o, 0, &c) == ATTNVK_ERROR_UNSUPPORTED, "mma16 takes no f32");
    p.head_dim = 48;
    CHECK(avk_hip_select(&info, &p, &none, 0, &c) == ATTNVK_ERROR_UNSUPPORTED, "head_dim 48 unsupported");

    char v[64];
    avk_hip_synthetic_device("gfx90a", &info);
    avk_hip_default_variant(&info, v, sizeof v);
    CHECK(strcmp(v, "mma16 64x32") == 0, "gfx90a default variant %s", v);
    avk_hip_synthetic_device("gfx1030", &info);
    avk_hip_default_variant(&info, v, sizeof v);
    CHECK(strcmp(v, "simt 32x32") == 0, "gfx1030 default variant %s", v);
}

static void check_unavailable(void)
{
    attnvk_context *ctx = NULL;
    CHECK(attnvk_context_create(&ctx) == ATTNVK_OK, "context");
    if (!ctx) return;
    const char *reason = NULL;
    attnvk_status s = attnvk_api_status(ctx, ATTNVK_API_HIP, &reason);
    if (s == ATTNVK_OK) {
        printf("note: an AMD GPU is present; the unavailable check does not apply\n");
    } else {
        CHECK(s == ATTNVK_ERROR_UNAVAILABLE && reason && strlen(reason) > 10,
              "hip unavailable with a reason (%s: %s)", attnvk_status_name(s), reason ? reason : "(null)");
        printf("ok   hip unavailable: %s\n", reason);
        int hip_devices = 0;
        for (int i = 0; i < attnvk_device_count(ctx); ++i)
            hip_devices += attnvk_device_info_at(ctx, i)->api == ATTNVK_API_HIP;
        CHECK(hip_devices == 0, "no hip devices listed");
    }
    attnvk_context_destroy(ctx);

    /* rocBLAS unfused workspace: f32 scores + dtype probabilities per pair */
    attnvk_problem p = {.batch = 2, .heads = 4, .kv_heads = 4, .seq_q = 100, .seq_kv = 300, .head_dim = 64, .causal = 0, .scale = 0, .dtype = ATTNVK_F16, .layout = ATTNVK_LAYOUT_BHSD};
    CHECK(avk_hip_rocblas_workspace_bytes(&p) == 2ull * 4 * 100 * 300 * 6, "rocblas workspace bytes");
    /* without librocblas the baseline is listed, unavailable, with the reason */
    avk_hip_device none;
    memset(&none, 0, sizeof none);
    attnvk_impl_info impl;
    avk_hip_rocblas_describe(&none, &impl);
    if (impl.available) {
        printf("note: librocblas is installed; its unavailable check does not apply\n");
    } else {
        CHECK(strcmp(impl.name, "rocblas") == 0 && !impl.fused && strstr(impl.reason, "librocblas"),
              "rocblas unavailable: %s", impl.reason);
        printf("ok   rocblas unavailable: %s\n", impl.reason);
    }
}

int main(void)
{
    check_objects();
    check_backward_objects();
    check_lookup();
    check_unavailable();
    return avk_test_finish(passed, 0);
}
