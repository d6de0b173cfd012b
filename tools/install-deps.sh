#!/usr/bin/env bash
# Installs (idempotently) everything attnvk's build and tests need on Debian 12.
# Runs as root; with ATTNVK_SKIP_HIP=1 the HIP toolchain is left out.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3 python3-numpy python3-jsonschema
  glslang-tools libvulkan-dev libvulkan-volk-dev vulkan-validationlayers
  mesa-vulkan-drivers pocl-opencl-icd ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers
  libclblast-dev libcjson-dev libsqlite3-dev zlib1g-dev
  libopenblas0   # the CPU device's vendor baseline (loaded at run time)
  clang libclang-rt-14-dev   # tools/fuzz.sh: libFuzzer with ASan+UBSan
  python3-pip python3-setuptools python3-wheel python3-pytest   # python/: pip install, its tests
)
if [ "${ATTNVK_SKIP_HIP:-0}" != 1 ]; then
  packages+=(hipcc libamdhip64-dev rocm-device-libs)
fi
if [ "${ATTNVK_WITH_CHROMIUM:-0}" = 1 ]; then
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
