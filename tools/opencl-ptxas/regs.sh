#!/usr/bin/env bash
# Registers, spills and stack of attnvk's OpenCL programs as ptxas (sm_90) allocates them, built here
# with clang's NVPTX target instead of NVIDIA's OpenCL compiler: a proxy for the device's
# `-cl-nv-verbose`, close enough to compare two builds of one program (a define on or off).
#     bash tools/opencl-ptxas/regs.sh mma "-DAVK_D=128 ... -DAVK_SCORE_MOD=1 -DAVK_PATTERN_SEARCH=1" [KERNEL]
# PROGRAM: mma (forward), decode (mma-decode), bwd (backward, tensor cores); OPTIONS as the runtime's
# build options (ATTNVK_OPENCL_BUILD_LOG=1 prints them); KERNEL: report only this entry.
# Needs clang-15 and llvm-15 (Debian packages) and CUDA's ptxas. Files stay in $WORK (default /tmp/opencl-ptxas).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prog=${1:?program: mma, decode or bwd}; options=${2:?build options}; entry=${3:-}
work=${WORK:-/tmp/opencl-ptxas}; mkdir -p "$work"
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
case $prog in
  mma) sources="common contract mma_ops flash_mma split_reduce" ;;
  decode) sources="common contract mma_ops flash_decode split_reduce" ;;
  bwd) sources="common contract mma_ops flash_bwd flash_bwd_mma" ;;
  *) echo "regs.sh: unknown program '$prog' (mma, decode or bwd)" >&2; exit 2 ;;
esac
# the runtime's prelude (runtime/opencl/cl_program.c), then the sources; clang's inline PTX is __asm__
{
  cat "$root/runtime/contract/kernel_flags.h"
  printf '\n#define U32 uint\n#define I32 int\n#define F32 float\ntypedef struct avk_kernel_args {\n#define AVK_ARG(type, name) type name;\n'
  cat "$root/runtime/contract/kernel_args.def"
  printf '\n#undef AVK_ARG\n} avk_kernel_args;\n'
  for s in $sources; do cat "$root/opencl/$s.cl"; done
} | sed 's/#define AVK_ASM asm volatile/#define AVK_ASM __asm__ volatile/' > "$work/prog.cl"
cl="clang-15 -x cl -target nvptx64-nvidia-nvcl -Xclang -target-cpu -Xclang sm_86 -O3 -c -emit-llvm"
$cl -cl-std=CL1.2 -o "$work/shim.bc" "$root/tools/opencl-ptxas/shim.cl"
# -fgnu89-inline: plain `inline` functions get a body (C99 inline would leave calls to nothing)
# shellcheck disable=SC2086
$cl -Xclang -finclude-default-header -fgnu89-inline $options -o "$work/prog.bc" "$work/prog.cl"
llvm-link-15 "$work/prog.bc" "$work/shim.bc" -o "$work/linked.bc"
opt-15 -O3 "$work/linked.bc" -o "$work/opt.bc"
llc-15 -mcpu=sm_86 -O3 "$work/opt.bc" -o "$work/prog.ptx"
sed -i 's/^\.version .*/.version 8.0/; s/\.target sm_86.*/.target sm_90/' "$work/prog.ptx"
"$ptxas" -arch=sm_90 -v "$work/prog.ptx" -o "$work/prog.cubin" 2>&1 | awk -v want="$entry" '
  /Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2); next }
  /bytes stack frame/ { frame[name] = $0 }
  /Used [0-9]+ registers/ { if (want == "" || want == name) { sub(/^ *ptxas info *: */, "", $0); gsub(/^ +/, "", frame[name]);
                            printf "%-22s %s; %s\n", name, $0, frame[name] } }
  /fatal/ { print; bad = 1 } END { exit bad }'
