#!/usr/bin/env bash
# The build folder is far over the device tool's 64 MiB carry limit: copy the
# binary and the GPU tests, stripped, into a slim folder to carry instead.
#     bash tools/h100/stage.sh [build] [build-h100]
# then run with carry [".gpu", "build-h100"] and BUILD=build-h100.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/${1:-build}
dst=$root/${2:-build-h100}
rm -rf "$dst"
mkdir -p "$dst/tests"
# every binary embeds the kernels (~8 MB each): STAGE names a subset when the tree plus the
# stage outgrow the carry limit (e.g. STAGE="attnvk libattnvk.so.0 tests/vulkan/test_vulkan")
all="attnvk tests/cuda/test_cuda_features tests/cuda/test_cuda_vendor tests/vulkan/test_vulkan
  tests/opencl/test_opencl_flash tests/opencl/test_opencl_clblast tests/interop/test_interop libattnvk.so.0"
for f in ${STAGE:-$all}; do
  [ -f "$src/$f" ] || { echo "stage: $src/$f is missing (build first)" >&2; exit 2; }
  mkdir -p "$dst/$(dirname "$f")"
  strip -o "$dst/$f" "$src/$f"
done
[ -f "$dst/libattnvk.so.0" ] && ln -sf libattnvk.so.0 "$dst/libattnvk.so" # the Python package and test_interop load it (LD_LIBRARY_PATH=$dst)
du -sh "$dst"
