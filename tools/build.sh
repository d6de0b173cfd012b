#!/usr/bin/env bash
# Configures and builds attnvk into DIR (default build/) with Ninja.
# Extra arguments go to cmake (e.g. -DATTNVK_SANITIZE=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
shift || true
case "$dir" in /*) ;; *) dir="$root/$dir" ;; esac
mkdir -p "$dir"
cmake -S "$root" -B "$dir" -G Ninja "$@" > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
grep "attnvk APIs" "$dir/configure.log" || true
ninja -C "$dir" -j "$(nproc)" > "$dir/build.log" 2>&1 || { tail -60 "$dir/build.log"; exit 1; }
echo "built $dir"
