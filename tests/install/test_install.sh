#!/usr/bin/env bash
# Installs the build tree to a fresh prefix, then builds examples/hello_attnvk.c
# and examples/hello_attnvk.cpp against the installed tree with
# find_package(attnvk) (C: shared and static) and with pkg-config, and runs
# them; the collision client links -lvulkan -lOpenCL besides libattnvk (shared
# and static) and must run clean (issue #17).
# usage: test_install.sh BUILD_DIR SOURCE_DIR WORK_DIR
# env: CC, CXX, CMAKE_GENERATOR, CLIENT_FLAGS (the sanitizer flags of an ASan build)
set -euo pipefail
build=$1 src=$2 work=$3
cc=${CC:-cc}
cxx=${CXX:-c++}
command -v "$cxx" >/dev/null || { echo "FAIL: no C++ compiler '$cxx' (Debian: g++)"; exit 1; }
flags=(${CLIENT_FLAGS:-})
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
step() { echo "== $*"; }

step install
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(dirname "$(find "$prefix" -name libattnvk.so.0 | head -1)")
for f in include/attnvk/attnvk.h bin/attnvk; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
for f in libattnvk.so libattnvk.so.0 libattnvk.a cmake/attnvk/attnvkConfig.cmake \
         cmake/attnvk/attnvkConfigVersion.cmake pkgconfig/attnvk.pc; do
  [ -e "$libdir/$f" ] || { echo "FAIL: $libdir/$f not installed"; exit 1; }
done
"$prefix/bin/attnvk" --version | head -1
# nothing at run time comes from the source or build tree (kernels are embedded)
if grep -aq -- "$src/shaders\|$src/opencl/\|$src/native/" "$libdir/libattnvk.so.0"; then
  echo "FAIL: libattnvk.so names a file of the source tree"; exit 1
fi

# hello_attnvk on a device spec: 0 ok, 77 (no such device here) is fine too
run_hello() { # exe spec
  local rc=0
  "$1" "$2" >"$work/hello.log" 2>&1 || rc=$?
  tail -1 "$work/hello.log"
  [ $rc = 0 ] || [ $rc = 77 -a "$2" != cpu -a -n "$2" ] || { cat "$work/hello.log"; echo "FAIL: $1 $2 exit $rc"; exit 1; }
}

step "find_package(attnvk)"
cmake -S "$src/examples" -B "$work/examples" ${CMAKE_GENERATOR:+-G "$CMAKE_GENERATOR"} \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS="${flags[*]}" -DCMAKE_CXX_FLAGS="${flags[*]}" -DCMAKE_EXE_LINKER_FLAGS="${flags[*]}" \
  >"$work/examples.log"
cmake --build "$work/examples" >>"$work/examples.log"
# ldd's output whole, then grep: `ldd | grep -q` under pipefail fails when grep's early exit
# sends ldd SIGPIPE (the ASan build's longer list hit it in CI)
deps=$(ldd "$work/examples/hello_attnvk")
grep -q "$libdir/libattnvk.so.0" <<<"$deps" ||
  { echo "FAIL: hello_attnvk does not load the installed libattnvk.so.0"; echo "$deps"; exit 1; }
run_hello "$work/examples/hello_attnvk" cpu
run_hello "$work/examples/hello_attnvk_static" cpu
for spec in vulkan opencl; do run_hello "$work/examples/hello_attnvk" $spec; done
# C++ (sync and async runs): the first device, then lavapipe and PoCL
[ -x "$work/examples/hello_attnvk_cpp" ] || { echo "FAIL: hello_attnvk_cpp not built"; exit 1; }
run_hello "$work/examples/hello_attnvk_cpp" ""
for spec in vulkan opencl; do run_hello "$work/examples/hello_attnvk_cpp" $spec; done

skipped=0
if ! command -v pkg-config >/dev/null; then
  echo "SKIP: pkg-config not found: the pkg-config builds and the collision client"
  exit 77
fi
export PKG_CONFIG_PATH=$libdir/pkgconfig
step "pkg-config attnvk $(pkg-config --modversion attnvk)"
"$cc" "${flags[@]}" "$src/examples/hello_attnvk.c" $(pkg-config --cflags --libs attnvk) -Wl,-rpath,"$libdir" -lm \
  -o "$work/hello_pc"
run_hello "$work/hello_pc" cpu
"$cxx" "${flags[@]}" -std=c++11 -Wall -Wextra -Werror -pedantic "$src/examples/hello_attnvk.cpp" \
  $(pkg-config --cflags --libs attnvk) -Wl,-rpath,"$libdir" -o "$work/hello_pc_cpp"
run_hello "$work/hello_pc_cpp" ""

step "collision: -lvulkan -lOpenCL and libattnvk"
if [ -e /usr/include/vulkan/vulkan.h ] && [ -e /usr/include/CL/cl.h ]; then
  client=$src/tests/install/collision_client.c
  "$cc" "${flags[@]}" "$client" $(pkg-config --cflags --libs attnvk) -Wl,-rpath,"$libdir" -lvulkan -lOpenCL -lm \
    -o "$work/collision_shared"
  "$work/collision_shared"
  step "collision, static libattnvk.a"
  "$cc" "${flags[@]}" "$client" $(pkg-config --cflags attnvk) "$libdir/libattnvk.a" \
    $(pkg-config --static --libs-only-other --libs-only-l attnvk | sed 's/-lattnvk//') -lvulkan -lOpenCL -lm \
    -o "$work/collision_static"
  "$work/collision_static"
else
  echo "SKIP: Vulkan or OpenCL headers missing (libvulkan-dev, opencl-c-headers)"
  skipped=1
fi
[ $skipped = 0 ] || exit 77
echo "install ok"
