#!/usr/bin/env bash
# The Python package (python/, issue #17): pip-installs a copy of it into a
# --target folder against this build tree's libattnvk.so (Debian's pip,
# offline), checks the installed copy is what loads, then runs its pytest
# suite on every device here (CPU, lavapipe, PoCL).
# usage: test_python.sh BUILD_DIR SOURCE_DIR WORK_DIR   env: PYTHON
# exit 77 (skipped) without numpy/pytest, or with a sanitizer build (python3
# itself is not instrumented, so an ASan libattnvk.so cannot load into it).
set -euo pipefail
build=$1 src=$2 work=$3
py=${PYTHON:-/usr/bin/python3}
if [ "${ATTNVK_SANITIZE:-OFF}" = ON ]; then echo "SKIP: sanitizer build"; exit 77; fi
"$py" -c "import numpy, pytest" 2>/dev/null ||
  { echo "SKIP: $py lacks numpy or pytest (python3-numpy python3-pytest)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
cp -r "$src/python" "$work/src" # pip builds in place: keep the source tree clean
rm -rf "$work/src/build" "$work/src"/*.egg-info

echo "== pip install --target"
ATTNVK_BUILD_DIR=$build "$py" -m pip install -q --no-build-isolation --no-deps --no-index \
  --disable-pip-version-check --root-user-action=ignore --target "$work/site" "$work/src"

echo "== the installed package and library"
cd "$work" # not the source folder, so only the installed copy can be imported
loaded=$(PYTHONPATH=$work/site "$py" -c 'import attnvk; print(attnvk.__file__); print(attnvk.library_path())')
echo "$loaded"
grep -q "^$work/site/attnvk/__init__.py$" <<<"$loaded" || { echo "FAIL: not the installed package"; exit 1; }
grep -q "^$build/libattnvk.so" <<<"$loaded" || { echo "FAIL: not this build's libattnvk.so"; exit 1; }

echo "== from an install tree: cmake --install, pip install PREFIX/share/attnvk/python"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
"$py" -m pip install -q --no-build-isolation --no-deps --no-index --disable-pip-version-check \
  --root-user-action=ignore --target "$work/site-prefix" "$work/prefix/share/attnvk/python"
loaded=$(PYTHONPATH=$work/site-prefix "$py" -c 'import attnvk; print(attnvk.library_path())')
echo "$loaded"
grep -q "^$work/prefix/.*/libattnvk.so.0$" <<<"$loaded" || { echo "FAIL: not the installed library"; exit 1; }

echo "== pytest"
PYTHONPATH=$work/site "$py" -m pytest -q -p no:cacheprovider --durations=5 "$work/src/tests"
