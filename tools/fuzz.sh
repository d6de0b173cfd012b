#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) and runs each for SECONDS
# (default 60): first every seed in tests/fuzz/corpus/<name> (the regression inputs),
# then new inputs. A crash, leak, UB report or timeout fails the run and leaves the
# input in build-fuzz/artifacts/. Longer by hand: tools/fuzz.sh 3600 npy
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(npy results options)
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac
for n in "${names[@]}"; do
  [ -f "$root/tests/fuzz/fuzz_$n.c" ] || { echo "fuzz.sh: no harness '$n' (npy, results, options)" >&2; exit 2; }
done

dir="$root/build-fuzz"
# The harnesses need no GPU API: leave them out for a quick build.
built=$(CC=clang bash "$root/tools/build.sh" "$dir" -DATTNVK_FUZZ=ON -DATTNVK_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVK_VULKAN=OFF -DATTNVK_OPENCL=OFF -DATTNVK_CUDA=OFF -DATTNVK_HIP=OFF) ||
  { echo "$built"; exit 1; }

# extra seed folders beside the committed corpus: the report tests' results files
extra_seeds() { [ "$1" = results ] && echo "$root/tests/report/data"; true; }

mkdir -p "$dir/artifacts"
pids=()
for n in "${names[@]}"; do
  work="$dir/corpus/$n"
  mkdir -p "$work"
  # -close_fd_mask=3 silences the program's own messages; libFuzzer still reports on its own stderr
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$dir/tests/fuzz/fuzz_$n" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$n-" \
    "$work" "$root/tests/fuzz/corpus/$n" $(extra_seeds "$n") > "$dir/fuzz_$n.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!names[@]}"; do
  n=${names[$i]}
  if wait "${pids[$i]}"; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/fuzz_$n.log" | grep -o '[0-9]*$' || echo '?')
    echo "fuzz $n: ok, $runs inputs in ${seconds}s"
  else
    failed=$((failed + 1))
    echo "fuzz $n: FAILED (log $dir/fuzz_$n.log):"
    grep -A40 -m1 -E 'ERROR: |runtime error:|==[0-9]+==' "$dir/fuzz_$n.log" | head -60
  fi
done
echo "$(( ${#names[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
