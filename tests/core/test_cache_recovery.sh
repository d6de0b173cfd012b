#!/usr/bin/env bash
# Corrupted kernel caches on the real drivers (lavapipe's pipeline cache, PoCL's
# program binaries): after truncation, a bit flip or a header-less old-format
# file, `attnvk run --check` still runs, passes, and leaves a valid cache file
# (and no temporary) behind. A corrupted PoCL binary used to crash PoCL.
# Usage: ATTNVK=attnvk CACHE_TOOL=test_cache PYTHON=python3 test_cache_recovery.sh WORKDIR
set -u
attnvk=${ATTNVK:?set ATTNVK to the attnvk binary}
cache_tool=${CACHE_TOOL:?set CACHE_TOOL to the test_cache binary}
work=${1:?work dir}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work"
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
seed=${ATTNVK_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "test seed $seed (ATTNVK_TEST_SEED to replay)"
$python "$here/../cli/npy_tool.py" make "$work" 1 2 1 9 13 32 bhsd "$seed" || { echo "cannot make inputs"; exit 1; }

# run API CACHE_DIR LABEL: attnvk run --check must succeed and pass
run_checked() {
  local out
  if out=$(ATTNVK_CACHE_DIR=$2 "$attnvk" run --api "$1" --q "$work/q.npy" --k "$work/k.npy" --v "$work/v.npy" \
                                  --out "$work/o.npy" --check 2>&1) && printf '%s' "$out" | grep -q ": pass$"; then
    return 0
  fi
  bad "$3: run: $out"; return 1
}

# flip_byte FILE OFFSET: inverts one byte in place
flip_byte() {
  local byte; byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf '%03o' $((255 - byte)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

apis=0
for spec in vulkan:vkpipe opencl:ocl; do
  api=${spec%%:*} kind=${spec#*:}
  if ! ATTNVK_VISIBLE_DEVICES=$api "$attnvk" devices >/dev/null 2>&1; then echo "skip $api: no device"; continue; fi
  apis=$((apis + 1))
  cache="$work/cache-$api"
  run_checked "$api" "$cache" "$api cold" || continue
  files=("$cache/$kind"-*)
  if [ "${#files[@]}" != 1 ] || ! "$cache_tool" --verify "${files[0]}" > /dev/null; then
    bad "$api: cold run left ${files[*]}"; continue
  fi
  file=${files[0]}
  cp "$file" "$work/$api.good"
  size=$(stat -c %s "$file")
  for corruption in truncated bit-flipped old-format; do
    cp "$work/$api.good" "$file"
    case $corruption in
      truncated) truncate -s $((size / 2)) "$file" ;;
      bit-flipped) flip_byte "$file" $(( (size + 40) / 2 )) ;;
      old-format) tail -c +41 "$work/$api.good" > "$file" ;; # the payload alone, as before the header
    esac
    cp "$file" "$work/$api.$corruption"
    run_checked "$api" "$cache" "$api $corruption" || continue
    left=$(find "$cache" -type f | wc -l)
    if ! verdict=$("$cache_tool" --verify "$file"); then bad "$api $corruption: $verdict"
    elif cmp -s "$file" "$work/$api.$corruption"; then bad "$api $corruption: file not replaced"
    elif [ "$left" != 1 ]; then bad "$api $corruption: $left files in the cache folder: $(ls "$cache")"
    else ok "$api $corruption: runs, passes, $verdict"; fi
  done
done
echo "$passed passed, $failed failed"
[ "$apis" = 0 ] && exit 77
[ "$failed" = 0 ]
