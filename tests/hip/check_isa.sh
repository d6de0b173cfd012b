#!/bin/bash
# Disassembles the embedded code objects: the mma variants must use MFMA on
# gfx90a/gfx940; gfx1030 (no matrix unit) must use none. The backward's object
# the same per kernel: its mma body's dK/dV and dQ kernels MFMA, its simt
# body's none. Also compiles the WMMA side of amd_matrix.h for gfx1100 to
# assembly (Debian ships no gfx1100 device library, so it is not linked; the
# table leaves gfx11 to hipRTC), and the backward's gfx1100 instances (the
# code generator's, WMMA for f16/bf16) the same way, and the rocBLAS
# baseline's row kernels (its backward's too).
# usage: check_isa.sh OBJDUMP HIPCC CODE_OBJECT_DIR NATIVE_DIR PROBE.hip WORK_DIR CODEGEN
objdump=$1 hipcc=$2 codir=$3 native=$4 probe=$5 work=$6 codegen=$7
passed=0 failed=0
pass() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
count() { "$objdump" -d --mcpu="$1" "$2" | grep -c "$3"; }
mkdir -p "$work"
# the backward's kernels in a disassembly (stdin): "kind body count" per kernel, count the lines matching $1
bwd_kernels() {
  awk -v pat="$1" '
    /^[0-9a-f]+ <avk_bwd_[a-z_]*_(mma|simt)_[^>]*>:$/ {
      name = substr($2, 2, length($2) - 3); body = name ~ /_mma_/ ? "mma" : "simt"
      kind = name; sub(/^avk_bwd_/, "", kind); sub(/_(mma|simt)_.*/, "", kind)
      order[++n] = name; kinds[name] = kind; bodies[name] = body; hits[name] = 0; next }
    n && $0 ~ pat { hits[order[n]]++ }
    END { for (i = 1; i <= n; ++i) print kinds[order[i]], bodies[order[i]], hits[order[i]] }'
}
# "mma simt bad": kernels of each body, and those whose matrix instructions are wrong (the mma
# body's dkdv, dq and dkdv_dq must have some, everything else none)
bwd_verdict() {
  awk '{ if ($2 == "mma") mma++; else simt++
         want = $2 == "mma" && ($1 == "dkdv" || $1 == "dq" || $1 == "dkdv_dq")
         if ((want && $3 == 0) || (!want && $3 > 0)) bad++ }
       END { print mma + 0, simt + 0, bad + 0 }' "$1"
}
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
  # the backward (issue #18): per kernel, "kernel body matrix-instructions"
  co=$codir/$arch-bwd.co
  "$objdump" -d --mcpu=$arch "$co" | bwd_kernels v_mfma >"$work/$arch-bwd.kernels"
  read -r mma simt bad <<<"$(bwd_verdict "$work/$arch-bwd.kernels")"
  [ "$mma" -gt 0 ] && [ $((mma % 6)) -eq 0 ] && [ $((simt % 5)) -eq 0 ] && [ "$bad" -eq 0 ] &&
    pass "$arch/bwd: $mma mma kernels (MFMA in every dK/dV and dQ), $simt simt kernels (none)" ||
    fail "$arch/bwd: $mma mma, $simt simt kernels, $bad with matrix instructions where not expected (or none)"
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
# the backward's instances for RDNA3 (hipRTC's at run time: WMMA for f16/bf16), to assembly as the
# probe: the code generator's first instance of each body (all of them take about 2 minutes)
if "$codegen" gfx1100 bwd "$work/gfx1100-bwd-all.hip" &&
   awk '/^\/\* -DAVK_D=/ { body = $0 ~ /AVK_BWD_MMA=1/; keep = !seen[body]++ } !started && /^\/\* -DAVK_D=/ { started = 1 }
        !started || keep' "$work/gfx1100-bwd-all.hip" >"$work/gfx1100-bwd.hip" &&
   "$hipcc" -x hip --cuda-device-only -S -nogpulib --offload-arch=gfx1100 -O3 -Wno-pass-failed -I"$native" \
     -I"$native/../runtime" "$work/gfx1100-bwd.hip" -o "$work/bwd_gfx1100.s" 2>"$work/bwd_gfx1100.log"; then
  # the assembly labels kernels "name: ; @name" where the disassembly says "<name>:"
  sed 's/^\(avk_bwd_[a-z0-9_]*\):.*$/0 <\1>:/' "$work/bwd_gfx1100.s" | bwd_kernels v_wmma >"$work/gfx1100-bwd.kernels"
  read -r mma simt bad <<<"$(bwd_verdict "$work/gfx1100-bwd.kernels")"
  [ "$mma" -eq 6 ] && [ "$simt" -eq 5 ] && [ "$bad" -eq 0 ] &&
    pass "gfx1100 backward: $mma mma kernels (WMMA in every dK/dV and dQ), $simt simt kernels" ||
    fail "gfx1100 backward: $mma mma, $simt simt kernels, $bad with matrix instructions where not expected (or none)"
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
