#!/usr/bin/env bash
# Lowers an attnvk OpenCL kernel to PTX with clang (nvptx64-nvidia-nvcl and
# tests/opencl/nv_shim.cl) and assembles it with ptxas for sm_90: checks the
# inline PTX and prints registers/spills. Usage: ptx_check.sh tiled|mma|decode -DAVK_D=128 ...
# (bwd: flash_bwd.cl, say -DAVK_D=128 -DAVK_F16=1 -DAVK_UNROLL=1 -DAVK_BWD_BC=16 -DAVK_BWD_BQ=16
#  -DAVK_BWD_QB=16 -DAVK_BWD_KB=16 -DAVK_BWD_WG=256; f32 softcap's tanh is not in nv_shim.cl;
#  bwd-mma: the same with -DAVK_BWD_MMA=1 -DAVK_F16=1 and BC = QB = 16 x warps, WG = 32 x warps)
# (decode: flash_decode.cl, say -DAVK_F16=1 -DAVK_ASYNC=1 -DAVK_KV_FORMAT=1 -DAVK_KEY_WARPS=4 -DAVK_STAGES=2 -DAVK_BC=16)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernels=$here/../../opencl
which=$1; shift
clang=${CLANG:-clang-15}
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $which in
  mma) files="$kernels/mma_ops.cl $kernels/flash_mma.cl" ;;
  decode) files="$kernels/mma_ops.cl $kernels/flash_decode.cl" ;;
  bwd-mma) files="$kernels/mma_ops.cl $kernels/flash_bwd.cl $kernels/flash_bwd_mma.cl" ;;
  *) files="$kernels/flash_$which.cl" ;;
esac
# shellcheck disable=SC2086
contract=$here/../../runtime/contract
# the program prelude cl_program.c builds: flags, then the argument struct from kernel_args.def
{
  cat "$here/nv_shim.cl" "$contract/kernel_flags.h"
  printf '\n#define U32 uint\n#define I32 int\n#define F32 float\ntypedef struct avk_kernel_args {\n#define AVK_ARG(type, name) type name;\n'
  cat "$contract/kernel_args.def"
  printf '\n#undef AVK_ARG\n} avk_kernel_args;\n'
  cat "$kernels/common.cl" "$kernels/contract.cl" $files
} > "$work/k.cl"
"$clang" -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target nvptx64-nvidia-nvcl -march=sm_80 ${OPT:--O3} \
  -S -o "$work/k.ptx" "$work/k.cl" ${CLANG_EXTRA:-} '-DAVK_ASM=__asm__ volatile' -DAVK_NATIVE_EXP=1 "$@"
sed -i 's/^\.target sm_80/.target sm_90/; s/^\.version .*/.version 8.0/' "$work/k.ptx"
[ -n "${PTX_OUT:-}" ] && cp "$work/k.ptx" "$PTX_OUT"
"$ptxas" -arch=sm_90 -v ${PTXAS_EXTRA:-} "$work/k.ptx" -o "$work/k.cubin"
