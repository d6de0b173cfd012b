/* The run-time path for gfx targets without an embedded object: the kernel
 * source and its headers, as the backend hands them to hipRTC, compile into
 * an AMDGPU code object holding the renamed kernels (here for
 * configurations no embedded object has), the backward's too, and the
 * rocBLAS baseline's row kernels (forward and backward). Needs no GPU;
 * skipped without hipRTC. */
#include "test_util.h"
#include "hip/hip_flash.h"
#include "hip/hip_kernels.h"
#include "hip/hip_merge.h"
#include "hip/hip_modules.h"
#include "hip/hip_rocblas.h"

#include <stdlib.h>
#include <string.h>

static int passed;

static int contains(const void *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; ++i)
        if (memcmp((const char *)hay + i, needle, m) == 0) return 1;
    return 0;
}

/* src compiled once for arch must hold every kernel of `symbols` (NULL-terminated) */
static void compile_symbols(const char *arch, const avk_hip_source *src, const char *const *symbols)
{
    void *code = NULL;
    size_t size = 0;
    attnvk_status s = avk_hip_rtc_compile(arch, src, &code, &size);
    int ok = s == ATTNVK_OK && avk_hip_is_amdgpu_elf(code, size);
    const char *missing = NULL;
    for (int i = 0; ok && symbols[i]; ++i)
        if (!contains(code, size, symbols[i])) ok = 0, missing = symbols[i];
    EXPECT(ok, "hipRTC %s for %s: %s%s", src->name, arch,
           s == ATTNVK_OK ? "no such kernel in the object: " : attnvk_last_error(), missing ? missing : "");
    for (int i = 0; ok && symbols[i]; ++i)
        printf("ok   hipRTC %-16s %-8s %7zu bytes, has %s\n", src->name, arch, size, symbols[i]);
    passed += ok;
    free(code);
}

static void compile_case(const char *arch, const avk_hip_source *src, const char *symbol)
{
    const char *const symbols[] = {symbol, NULL};
    compile_symbols(arch, src, symbols);
}

/* score_mod: built as the backend builds softcap, ALiBi and mask problems (AVK_SCORE_MOD);
 * dv: V and O's head dim (0: d); decode: the split-KV build */
static void flash_case(const char *arch, const char *variant, int br, int bc, attnvk_dtype dt, int d, int dv,
                       int decode, int score_mod)
{
    attnvk_device_info info;
    avk_hip_synthetic_device(arch, &info);
    attnvk_problem p = {.batch = 1, .heads = 4, .kv_heads = 4, .seq_q = decode ? 1 : 256, .seq_kv = 256, .head_dim = d,
                        .head_dim_v = dv, .dtype = dt, .layout = ATTNVK_LAYOUT_BSHD};
    attnvk_kernel_options o = {.variant = variant, .tile_br = br, .tile_bc = bc};
    avk_hip_config c;
    attnvk_status s = avk_hip_select(&info, &p, &o, decode, &c);
    EXPECT(s == ATTNVK_OK, "%s %s %dx%d: %s", arch, variant, br, bc, attnvk_last_error());
    if (s != ATTNVK_OK) return;
    passed++;
    c.score_mod = score_mod;
    char defines[320], opts[640], fwd[128], reduce[128];
    avk_hip_config_defines(&c, defines, sizeof defines);
    avk_hip_kernel_names(&c, fwd, reduce, sizeof fwd);
    snprintf(opts, sizeof opts, "%s -Davk_attn_fwd=%s -Davk_attn_reduce=%s", defines, fwd, reduce);
    avk_hip_config inst[64];
    int n = avk_hip_instances(arch, c.variant, inst, 64), embedded = 0;
    for (int i = 0; i < n && i < 64; ++i) embedded |= memcmp(&inst[i], &c, sizeof c) == 0;
    EXPECT(!embedded, "%s is not meant to be embedded", fwd);
    avk_hip_source src;
    avk_hip_flash_source(opts, &src);
    compile_case(arch, &src, fwd);
}

/* The backward (native/attn_bwd.cu) as hip_backward.c builds a configuration
 * no embedded object has (score mods: AVK_SCORE_MOD 7; Dk != Dv): every
 * kernel of it, in the body the arch's matrix unit gives (mma: MFMA through
 * amd_matrix.h; D=64 costs 15 s less than D=128. Debian's comgr crashes in
 * hiprtcCompileProgram for gfx940 and knows no gfx942: MI300's is hipcc's). */
static void backward_case(const char *arch, attnvk_dtype dt, int d, int dv, int want_mma)
{
    attnvk_device_info info;
    avk_hip_synthetic_device(arch, &info);
    attnvk_problem p = {.batch = 1, .heads = 4, .kv_heads = 2, .seq_q = 256, .seq_kv = 256, .head_dim = d,
                        .head_dim_v = dv, .dtype = dt};
    avk_native_bwd_config c;
    attnvk_status s = avk_hip_bwd_select(&info, &p, &c);
    EXPECT(s == ATTNVK_OK && c.mma == want_mma, "%s backward D=%d/%d: %s, %s body", arch, d, dv,
           s == ATTNVK_OK ? "selected" : attnvk_last_error(), c.mma ? "mma" : "simt");
    if (s != ATTNVK_OK || c.mma != want_mma) return;
    passed++;
    c.score_mod = 7;
    char defines[1024], names[AVK_BWD_ALL_KERNELS][128];
    const char *symbols[AVK_BWD_ALL_KERNELS + 1] = {NULL};
    avk_hip_bwd_defines(&c, defines, sizeof defines);
    for (int k = 0; k < avk_native_bwd_kernel_count(&c); ++k) {
        avk_hip_bwd_kernel_name(&c, k, names[k], sizeof names[k]);
        symbols[k] = names[k];
    }
    avk_hip_source src;
    avk_hip_backward_source(defines, &src);
    compile_symbols(arch, &src, symbols);
}

int main(void)
{
    if (!avk_hiprtc_load()) {
        printf("skip: %s\n", attnvk_last_error());
        return avk_test_finish(0, 0);
    }
    flash_case("gfx90a", "mma16", 64, 16, ATTNVK_BF16, 128, 0, 0, 0); /* MFMA, a tile the table does not use */
    flash_case("gfx1030", "simt", 16, 32, ATTNVK_F16, 64, 0, 0, 0);   /* portable, prefill with decode tiles */
    /* The sanitizer build (ATTNVK_TEST_HOST_PATHS=1) takes each host path once: the
     * cases below differ only in the kernels' macros, and hipRTC's compiler (not our
     * host C) takes twice as long there. */
    const int host_paths_only = getenv("ATTNVK_TEST_HOST_PATHS") != NULL;
    if (!host_paths_only) {
        flash_case("gfx90a", "mma16", 64, 64, ATTNVK_F16, 64, 0, 0, 1 | 8); /* softcap and block layouts (AVK_MOD_BLOCKS) */
        /* issue #13's Dk != Dv (hipRTC only: no embedded object has them; about 8 s
         * each): MLA's 192/128 on MFMA, 576/512 split-KV decode on simt */
        flash_case("gfx90a", "mma16", 0, 0, ATTNVK_F16, 192, 128, 0, 0);
        flash_case("gfx90a", "simt", 0, 0, ATTNVK_F16, 576, 512, 1, 0);
        backward_case("gfx1030", ATTNVK_BF16, 192, 128, 0);
    }
    backward_case("gfx90a", ATTNVK_BF16, 64, 64, 1);
    avk_hip_source src;
    avk_hip_rocblas_softmax_source("-DAVK_SOFTMAX_THREADS=128", &src);
    /* the forward's row softmax and rocBLAS's backward kernels (hip_rocblas_backward.c) from one source */
    const char *const wave64[] = {"avk_softmax_rows_f16", "avk_softmax_bwd_f16", "avk_softmax_bwd_f32_mod",
                                  "avk_sink_grad", "avk_convert_f16", NULL};
    const char *const wave32[] = {"avk_softmax_rows_bf16_mod", /* softcap, ALiBi, masks */
                                  "avk_softmax_bwd_bf16_mod", "avk_sink_grad", "avk_convert_bf16", NULL};
    compile_symbols("gfx90a", &src, wave64);
    compile_symbols("gfx1030", &src, wave32);
    /* ring attention's merge (native/ring_merge.cu), as hip_merge.c hands it to hipRTC */
    char *merge_text = NULL;
    if (avk_hip_merge_source(&src, &merge_text) == ATTNVK_OK) {
        compile_case("gfx90a", &src, avk_hip_merge_kernels[2]);
        compile_case("gfx1030", &src, avk_hip_merge_kernels[1]);
    }
    free(merge_text);
    return avk_test_finish(passed, 0);
}
