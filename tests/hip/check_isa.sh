#!/bin/bash
# Disassembles the embedded code objects: the mma variants must use MFMA on
# gfx90a/gfx940; gfx1030 (no matrix unit) must use none. Also compiles the
# WMMA side of amd_matrix.h for gfx1100 to assembly (Debian ships no gfx1100
# device library, so it is not linked; the table leaves gfx11 to hipRTC), and
# the backward's simt instances for gfx1100 the same way, and the rocBLAS
# baseline's row kernels (its backward's too).
# usage: check_isa.sh OBJDUMP HIPCC CODE_OBJECT_DIR NATIVE_DIR PROBE.hip WORK_DIR
objdump=$1 hipcc=$2 codir=$3 native=$4 probe=$5 work=$6
passed=0 failed=0
pass() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
count() { "$objdump" -d --mcpu="$1" "$2" | grep -c "$3"; }
mkdir -p "$work"
for arch in gfx90a gfx940; do
  for v in mma16 mma16-qs; do
    co=$codir/$arch-$v.co
    [ -f "$co" ] || { fail "$co missing"; continue; }
    n=$(count $arch "$co" "v_mfma_f32_16x16x16")
    kinds=$("$objdump" -d --mcpu=$arch "$co" | grep -o "v_mfma_[a-z0-9_]*" | sort -u | tr '\n' ' ')
    [ "$n" -gt 0 ] && pass "$arch/$v: $n MFMA instructions ($kinds)" || fail "$arch/$v: no v_mfma"
  done
  n=$(count $arch "$codir/$arch-simt.co" "v_mfma")
  [ "$n" -eq 0 ] && pass "$arch/simt: portable kernel, no MFMA" || fail "$arch/simt: $n v_mfma"
  # the backward (issue #18): the simt body on every target, all five kernels of each instance
  co=$codir/$arch-bwd.co
  n=$(count $arch "$co" "v_mfma")
  k=$("$objdump" -d --mcpu=$arch "$co" | grep -c "^[0-9a-f]* <avk_bwd_\(pre\|dkdv\|dq\|sinks\|dq_convert\)_\(mma\|simt\)_.*>:")
  [ "$n" -eq 0 ] && [ "$k" -gt 0 ] && [ $((k % 5)) -eq 0 ] && pass "$arch/bwd: $k backward kernels, no MFMA" ||
    fail "$arch/bwd: $k kernels, $n v_mfma"
done
# rocBLAS's backward (hip_rocblas_backward.c): its nine kernels in every target's softmax object
for arch in gfx90a gfx940 gfx1030; do
  k=$("$objdump" -d --mcpu=$arch "$codir/$arch-softmax.co" |
      grep -c "^[0-9a-f]* <avk_\(softmax_bwd_[a-z0-9_]*\|sink_grad\|convert_[a-z0-9]*\)>:")
  [ "$k" -eq 9 ] && pass "$arch/softmax: $k rocBLAS backward kernels" || fail "$arch/softmax: $k of 9 rocBLAS backward kernels"
done
for co in "$codir"/gfx1030-*.co; do
  n=$(count gfx1030 "$co" "v_mfma\|v_wmma")
  [ "$n" -eq 0 ] && pass "$(basename "$co"): no matrix instructions (gfx1030 has none)" || fail "$co: $n matrix instructions"
done
if "$hipcc" -x hip --cuda-device-only -S -nogpulib --offload-arch=gfx1100 -O3 -I"$native" "$probe" \
     -o "$work/wmma_probe.s" 2>"$work/wmma_probe.log"; then
  n=$(grep -c "v_wmma_f32_16x16x16" "$work/wmma_probe.s")
  [ "$n" -gt 0 ] && pass "gfx1100 probe: $n WMMA instructions" || fail "gfx1100 probe: no v_wmma"
else
  fail "gfx1100 probe does not compile: $(grep error "$work/wmma_probe.log" | head -5)"
fi
# the backward's instances for RDNA3 (hipRTC's at run time), to assembly as the probe
if "$hipcc" -x hip --cuda-device-only -S -nogpulib --offload-arch=gfx1100 -O3 -Wno-pass-failed -I"$native" \
     -I"$native/../runtime" "$codir/../gen/gfx1030-bwd.hip" -o "$work/bwd_gfx1100.s" 2>"$work/bwd_gfx1100.log"; then
  k=$(grep -c "^avk_bwd_[a-z_]*_simt_[^:]*:" "$work/bwd_gfx1100.s")
  [ "$k" -gt 0 ] && pass "gfx1100 backward: $k kernels" || fail "gfx1100 backward: no kernels in the assembly"
else
  fail "gfx1100 backward does not compile: $(grep error "$work/bwd_gfx1100.log" | head -5)"
fi
# the rocBLAS baseline's row kernels (forward and backward) for RDNA3 (hipRTC's at run time), to assembly
sm=$native/../runtime/hip/kernels/softmax_rows.hip
if "$hipcc" -x hip --cuda-device-only -S -nogpulib --offload-arch=gfx1100 -O3 -Wno-pass-failed "$sm" \
     -o "$work/softmax_gfx1100.s" 2>"$work/softmax_gfx1100.log"; then
  k=$(grep -c "^avk_\(softmax_rows\|softmax_bwd\)_[a-z0-9_]*:" "$work/softmax_gfx1100.s")
  [ "$k" -eq 12 ] && pass "gfx1100 softmax: $k row kernels (forward and backward)" || fail "gfx1100 softmax: $k of 12 row kernels"
else
  fail "gfx1100 softmax does not compile: $(grep error "$work/softmax_gfx1100.log" | head -5)"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
