/* `attnvk help env`: every environment variable the library, the command and
 * the test programs read. tests/cli/test_cli.sh fails when the sources read one
 * that is missing here. */
#include "cli.h"

typedef struct env_var {
    const char *name, *effect, *unset; /* unset: what happens without it */
} env_var;

static const env_var user_vars[] = {
    {"ATTNVK_VISIBLE_DEVICES", "devices to show, a comma list of api, api:N, N (list position) or name substring; "
                               "an item that matches no device is an error (exit 2)", "every device"},
    {"ATTNVK_CACHE_DIR", "folder for compiled kernels (Vulkan pipeline caches, OpenCL binaries, cubins); 'off' "
                         "disables the cache", "$XDG_CACHE_HOME/attnvk, else ~/.cache/attnvk"},
    {"XDG_CACHE_HOME", "base folder of the default kernel cache", "~/.cache"},
    {"XDG_DATA_HOME", "base folder of the default history database (attnvk/history.db) and of the tuning files "
                      "(attnvk/tuning); absolute paths only",
     "~/.local/share"},
    {"ATTNVK_TUNING_DIR", "folder of the tuning files `attnvk tune` writes and every prepare reads before the built-in "
                          "tables (one JSON file per device)", "$XDG_DATA_HOME/attnvk/tuning, else ~/.local/share/attnvk/tuning"},
    {"ATTNVK_NO_TUNING", "1: ignore the tuning files (the built-in tables pick; `attnvk tune` always compares against them)",
     "tuning files are read"},
    {"HOME", "where ~ is, for the two defaults above", "no default cache; the history needs --db"},
    {"ATTNVK_MEASURE_BANDWIDTH", "0: `attnvk devices` and the bench show only cached read bandwidths, never measure",
     "measure once per device and driver"},
    {"ATTNVK_CPU_THREADS", "threads of the CPU device's kernels and the float64 reference (1..256; anything else is an error, exit 2)",
     "one per online CPU core"},
    {"ATTNVK_CPU_ISA", "the CPU kernel's vector code: avx512, avx2 or generic", "the widest the host runs"},
    {"ATTNVK_OPENBLAS_LIBRARY", "the OpenBLAS library the CPU baseline loads", "libopenblas.so.0"},
    {"ATTNVK_OPENCL_LIBRARY", "the OpenCL ICD loader to load", "libOpenCL.so.1"},
    {"ATTNVK_CLBLAST_LIBRARY", "the CLBlast library to load", "libclblast.so.1"},
    {"ATTNVK_VK_VALIDATION", "1: run Vulkan under VK_LAYER_KHRONOS_validation (it must be installed)", "off"},
    {"ATTNVK_VK_PROFILE", "intel-gen12, arm-mali, adreno, apple-moltenvk or small: Vulkan picks and builds kernels as on "
                          "that GPU, its limits clamped (never raised): shared memory 64/32/32/32/16 KiB, subgroup sizes "
                          "8-32/16/64-128/32/any (where the device has them), no subgroup ops on small, no f16 storage on "
                          "arm-mali and small, no matrix units; devices are named '[profile NAME]'; another name is an "
                          "error (exit 2)", "the device's own limits"},
    {"COLUMNS", "terminal width: below 120, bench and devices tables take their compact 80-column form",
     "120 (--compact: 80)"},
    {"TMPDIR", "where bench keeps its JSON when a --save fails and the current folder is not writable", "/tmp"},
};

/* Tuning and diagnosis aids (tools/h100, the perf programs): developer A/B knobs
 * over one configuration. Outputs are still checked, but timings taken with them
 * are not the tuned defaults; a device is tuned with `attnvk tune`. */
static const env_var developer_vars[] = {
    {"ATTNVK_VK_WORKGROUP", "Vulkan workgroup size instead of the tuning table's", "the table"},
    {"ATTNVK_VK_Q_SHARED", "0/1: Vulkan cooperative-matrix kernels keep Q in registers (0) or shared memory (1)",
     "the table"},
    {"ATTNVK_VK_KV_STAGES", "1/2: K/V shared-memory stages of the Vulkan cooperative-matrix kernels", "the table"},
    {"ATTNVK_VK_S_CHAINS", "1/2: independent S accumulation chains in the Vulkan cooperative-matrix kernels",
     "the table"},
    {"ATTNVK_VK_DECODE", "lanes=L,keys=U,runs=R,slice=S,spread=0,half=0,probe=N: lanes sharing a key, keys per step, quantized loads (2 aligned words, 1 runs, 0 4-value loads), values per lane of the Vulkan decode body; spread=0 keeps each lane's whole softmax, half=0 Q.K in f32 over quantized caches; probe=1 times its loads alone, probe=2 its arithmetic alone (wrong outputs, a diagnostic)",
     "the table"},
    {"ATTNVK_VK_DECODE_DIRECT", "1: the Vulkan matrix decode body (decode-nv-rs) takes a quantized cache's K/V as operands built in registers, not through shared memory (D 128 or 256, up to 16 packed rows); 0 keeps shared memory in its emulation too",
     "on in decode-rs-emu; off on NVIDIA, where the H100 measured it 30-43% slower than the decode body"},
    {"ATTNVK_VK_KV_ADDRESSING", "2: the Vulkan decode body's pipeline for a paged cache carries both K/V addressings (contiguous and paged), decided at run time, as every other body's does (A/B)",
     "paged only"},
    {"ATTNVK_VK_SOFTCAP_EXP2", "the Vulkan matrix kernels' softcap tanh: 0 GLSL's tanh, 1 as 1 - 2/(2^y + 1) (one exp2, one reciprocal), 2 GLSL's tanh of f16 pairs (A/B)",
     "2 on NVIDIA's register-softmax bodies, else 1"},
    {"ATTNVK_MASK_HEADS_FIRST", "0: for a mask the heads share, Vulkan's and OpenCL's forward grids run as launched, not a row block's heads together (whose mask rows come from L2 once read; CUDA always walks so; A/B)",
     "1"},
    {"ATTNVK_VK_ALIBI_MMA", "0: the Vulkan register-softmax prefill adds ALiBi to every element (the A/B) instead of its key "
     "term as one more k-step of S and its row term once a tile (ALiBi without a softcap)", "1"},
    {"ATTNVK_VK_MASK_SHARED", "0: the Vulkan register-softmax prefill reads an f16 mask's pairs from global memory in every lane "
     "(the A/B) instead of staging each tile's mask in its K buffer (one K buffer, Nk a multiple of 8)", "1"},
    {"ATTNVK_VK_SOFTCAP_IN_Q", "1: the Vulkan register-softmax prefill bodies stage Q times the softcap's input scale, one multiply a score less (A/B; +0.5% on the H100)",
     "0"},
    {"ATTNVK_VK_BWD", "the Vulkan backward's dK/dV and dQ body: portable, nv or khr (its matrix body through that family of cooperative matrices; f16, head dims multiples of 16 up to 128, other problems run the portable one)",
     "the matrix body through KHR, else NV, where the device has 16x16x16 f16 matrices"},
    {"ATTNVK_VK_BWD_TILES", "nsg=,stream=,dq_nsg=,dq_stream=,stages=,kx= over the Vulkan backward matrix body's tiles: subgroups a workgroup (16 kept rows each) and streamed rows a tile of dK/dV and of dQ, 2 stages: double-buffered tiles, kx=1|2: with dQ by atomics, K's matrices held in registers or read from shared memory per tile (sweeps)",
     "the table's"},
    {"ATTNVK_VK_BWD_SCORES", "the Vulkan backward matrix body's S and dP: registers (P and dS computed in the matrix accumulators; needs the accumulator layout the device's probe checks) or staged (through shared memory)",
     "registers where the probe passed (and on the emulated matrices), else staged"},
    {"ATTNVK_VK_BWD_DQ", "the Vulkan backward matrix body's dQ: atomic (dK/dV adds it by f32 atomics, VK_EXT_shader_atomic_float; no dQ pass; not with --deterministic) or kernel (the dQ pass, bit-identical runs); unset: the dQ pass with P and dS in registers; with them staged, the tile table's choice by head dim (atomics at D=64 where the device has them)",
     "the table's choice"},
    {"ATTNVK_VK_PIPELINE_STATS", "1: add the driver's pipeline statistics (registers, spills) to the kernel params",
     "off"},
    {"ATTNVK_VK_PIPELINE_IR", "DIR (with ATTNVK_VK_PIPELINE_STATS=1): write whatever internal representations the driver shows of each Vulkan pipeline it builds (its IR or machine code) to DIR, a file each",
     "off"},
    {"ATTNVK_VK_RS_PROBE_DUMP", "any value: print what the coopmat-nv-rs accumulator-layout probe found", "off"},
    {"ATTNVK_VK_RS_FORCE", "1: use coopmat-nv-rs where the layout probe disagrees (diagnosis only)", "off"},
    {"ATTNVK_CUDA_TUNE", "key_warps=,stages=,min_ctas= over the CUDA mma-decode configuration (sweeps)", "none"},
    {"ATTNVK_CUDA_BWD_TILES", "bc=,bq=,wn=,qb=,kb= over the CUDA backward's tile table (sweeps)", "none"},
    {"ATTNVK_CUDA_BWD_WGMMA", "0: the CUDA backward's dK/dV on mma.sync on Hopper too (default: wgmma where Dk, Dv are 64 or 128)",
     "1"},
    {"ATTNVK_CUDA_DEFINES", "extra -D/-U options for NVRTC (forward and backward), space-separated (part of the cache key); "
     "e.g. -DAVK_SOFTCAP_Q_PRESCALE=1: the Hopper forward (f16) takes the softcap's input scale into Q's tile (A/B)",
     "none"},
    {"ATTNVK_CUDA_MASK_TMA", "0: the Hopper forward (wgmma-ws) reads an f16 mask from global memory in its consumers (the A/B) "
     "instead of its tiles by TMA into shared memory, added through ldmatrix (where Nk is a multiple of 8 and the stages fit)",
     "1"},
    {"ATTNVK_CUDA_PERSISTENT", "1|2: the Hopper forward (wgmma-ws) as a persistent kernel, a CTA an SM taking the blocks "
     "dealt in rounds (1) or from a counter as it comes free (2); slower on the H100 so far (an experiment)", "0"},
    {"ATTNVK_CUDA_TIMELINE", "path: after each launch of a Hopper forward built with ATTNVK_CUDA_DEFINES=-DAVK_TIMELINE=1, "
     "its per-CTA phase clocks replace this file (tools/h100/timeline.py reads it; synchronizes every launch)", "off"},
    {"ATTNVK_CUDA_DILATED_VIEWS", "0: dilated problems on CUDA through the per-element test instead of strided views", "views"},
    {"ATTNVK_OPENCL_TUNE", "ds=,tm=,wg=,bc=,br=,reduce=,maxreg=,nativeexp= over the OpenCL tuning table", "none"},
    {"ATTNVK_OPENCL_MASK_LOCAL", "0: the OpenCL mma-f16 prefill reads an f16 mask from global memory in every lane (the A/B) "
     "instead of copying its tiles into local memory with K and V (async pipeline, Nk a multiple of 8)", "1"},
    {"ATTNVK_OPENCL_ALIBI_MMA", "1: the OpenCL mma-f16 prefill takes ALiBi's key term in S's MMAs (one more k-step) and its "
     "row term once a tile, rather than a multiply-add a score (ALiBi without a softcap; an A/B, even on the H100)", "0"},
    {"ATTNVK_VK_HOOK_MODS", "0: Vulkan pipelines on real matrices carry softcap, ALiBi and mask code, each behind its runtime "
     "flag, rather than the problem's modifications alone (the A/B)", "1"},
    {"ATTNVK_OPENCL_HOOK_MODS", "0: the OpenCL tensor-core bodies' score hook carries softcap, ALiBi and mask code, each behind its "
     "runtime flag, rather than the problem's modifications alone (the A/B)", "1"},
    {"ATTNVK_OPENCL_BUILD_OPTIONS", "appended to the OpenCL build options (e.g. -cl-nv-verbose; -DAVK_SOFTCAP_EXP2=1|0: softcap's tanh as one exp2 and one reciprocal, or OpenCL's tanh, in f16 programs; "
     "-DAVK_SOFTCAP_IN_Q=1: mma-f16 takes the softcap's input scale into its Q fragments, A/B)", "none"},
    {"ATTNVK_OPENCL_BUILD_LOG", "1: print every OpenCL build log on stderr", "off"},
    {"ATTNVK_OPENCL_DUMP_DIR", "folder that gets a copy of every OpenCL program binary (PTX on NVIDIA)", "none"},
    {"ATTNVK_OPENCL_LOCAL_MEM", "bytes: configure OpenCL kernels as for a device with this much local memory (tests)", "the device's"},
    {"ATTNVK_OPENCL_MEM_LIMIT", "bytes: caps the memory attnvk assumes an OpenCL device has", "the device's"},
    {"ATTNVK_OPENCL_BWD_TILES", "warps=,inner=,dq_inner=,stages= over the OpenCL backward's mma.sync tiles: warps a work-group (16 keys or query rows each), the inner tile of dK/dV and of dQ, buffers of the streamed tiles (1 or 2) (sweeps)",
     "the table's"},
    {"ATTNVK_OPENCL_BWD_MMA", "0, 1 or emu: the OpenCL backward's portable body, its mma.sync body (inline PTX, "
                              "NVIDIA cc >= 8.0; f16 with head dims up to 128), or the same emulated (any device)",
     "mma.sync where the device has it"},
    {"ATTNVK_CLBLAST_MAX_ELEMENTS", "the most score elements one CLBlast call may index, below 2^31", "2^31"},
};

static const env_var test_vars[] = {
    {"ATTNVK_TEST_SEED", "seed of the test programs' random inputs (each prints its seed)", "the clock"},
    {"ATTNVK_TEST_JOBS", "threads of test_cuda_nvrtc (1..16)", "2"},
    {"ATTNVK_TEST_BACKWARD_ALL",
     "set: test_cuda_nvrtc builds every backward configuration for both targets; test_vulkan_backward runs every "
     "case in f16 and bf16 too, test_opencl_backward every case in f32 and f16",
     "CI's 8; f32 all, a subset in f16/bf16"},
    {"ATTNVK_TEST_BACKWARD_ONLY", "set: test_cuda_nvrtc builds the backward's configurations alone", "unset"},
    {"ATTNVK_TEST_VARIANT", "a CUDA variant: test_cuda_nvrtc builds that variant's forward configurations alone", "unset"},
    {"ATTNVK_TEST_CONTRACT_ALL", "set: test_cuda_nvrtc builds the kernel contract's matrix in every dtype on sm_80 too",
     "f16 on sm_80, every dtype on sm_90a"},
    {"ATTNVK_TEST_HOST_PATHS", "set: test_hip_rtc compiles one case per host path (the sanitizer build sets it)", "unset"},
    {"ATTNVK_TEST_OPENCL_VARIANTS", "comma list: the OpenCL variants test_opencl_flash runs", "all"},
    {"ATTNVK_HISTORY_TEST_HOOK", "exit-before-commit, pause-before-commit or fail-commit: stops or fails a "
                                 "history save at its COMMIT (tests/report)", "unset"},
};

static void print_group(FILE *f, const char *title, const env_var *v, size_t n)
{
    fprintf(f, "%s\n", title);
    for (size_t i = 0; i < n; ++i) fprintf(f, "  %-28s %s (default: %s)\n", v[i].name, v[i].effect, v[i].unset);
}

void cli_print_env_help(FILE *f)
{
    print_group(f, "Environment variables read by attnvk:", user_vars, sizeof user_vars / sizeof *user_vars);
    print_group(f, "Developer A/B knobs and diagnosis aids (to tune a device, run attnvk tune; outputs are still checked):",
                developer_vars, sizeof developer_vars / sizeof *developer_vars);
    print_group(f, "Read by the test programs only:", test_vars, sizeof test_vars / sizeof *test_vars);
}
