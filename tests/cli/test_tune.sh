#!/usr/bin/env bash
# `attnvk tune` on the CPU device, lavapipe and PoCL: one tiny case with a small
# budget writes a tuning file into a temporary XDG_DATA_HOME; the next bench of
# that shape reports source "tuned" and runs the tuned configuration; an injected
# wrong candidate is rejected; a corrupted file is ignored with a warning (the
# table picks); ATTNVK_NO_TUNING=1 ignores the file; bad input exits 2.
# Usage: ATTNVK=path/to/attnvk PYTHON=python3 test_tune.sh WORKDIR
set -u
attnvk=${ATTNVK:?set ATTNVK to the attnvk binary}
work=${1:?work dir}
python=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work"
export XDG_DATA_HOME="$work/data" ATTNVK_CACHE_DIR="$work/cache"
unset ATTNVK_TUNING_DIR ATTNVK_NO_TUNING
tuning="$XDG_DATA_HOME/attnvk/tuning"
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

case=quick-f32-d64-n256-b1-h4
shape=(--impl attnvk --batch 1 --heads 4 --seq 256 --head-dim 64 --dtype f32 -r 2 --warmup 0 --warmup-time 0 -o json)

# the attnvk record's tuning_source, variant, tile_br and tile_bc; and the file's entry
record() { "$python" -c '
import json, sys
r = [r for r in json.load(open(sys.argv[1]))["records"] if r["implementation"] == "attnvk"][0]
print(r["status"], r.get("tuning_source"), r["variant"], r["tile_br"], r["tile_bc"])' "$1"; }
entry() { "$python" -c '
import json, sys
text = open(sys.argv[1]).read()
assert text.startswith("{\"checksum\": \"xxh64:")
e = json.loads(text)["entries"][0]
print(e["variant"], e["tile_br"], e["tile_bc"])' "$1"; }

for api in cpu vulkan opencl; do
  if ! "$attnvk" devices --no-measure --json 2>/dev/null | "$python" -c "
import json, sys; sys.exit(0 if any(d['api'] == '$api' for d in json.load(sys.stdin)['devices']) else 1)"; then
    echo "skip $api: no device"; skipped=$((skipped + 1)); continue
  fi
  log="$work/tune-$api.log"
  start=$(date +%s.%N)
  # PoCL compiles each new program for seconds: there only the table's own configuration
  max=8; [ "$api" = opencl ] && max=1
  "$attnvk" tune --api "$api" --case "$case" --budget 3 --min-time 0.005 --max-candidates "$max" --test-wrong-candidate \
    > "$log" 2>&1
  rc=$?
  secs=$("$python" -c "import time; print(f'{time.time() - $start:.1f}')")
  file=$(ls "$tuning"/"$api"-*.json 2>/dev/null | head -1)
  if [ "$rc" = 0 ] && [ -n "$file" ] && grep -q "^ wrote " "$log"; then ok "$api: tune wrote $(basename "$file") in ${secs} s"
  else bad "$api: tune rc=$rc, file '${file}': $(tail -5 "$log")"; continue; fi
  if grep -q "injected .* rejected: " "$log"; then ok "$api: the injected wrong candidate was rejected"
  else bad "$api: injected candidate not rejected: $(grep injected "$log")"; fi
  read -r want_variant want_br want_bc < <(entry "$file") || { bad "$api: the file does not parse"; continue; }

  "$attnvk" bench --api "$api" "${shape[@]}" --out "$work/tuned-$api.json" > /dev/null 2> "$work/tuned-$api.err"
  read -r status source variant br bc < <(record "$work/tuned-$api.json")
  # OpenCL reports "tiled-f32" for the "tiled" entry and derives Br from its rows per lane
  if [ "$status" = ok ] && [ "$source" = tuned ] && [ "${variant#"$want_variant"}" != "$variant" ] && [ "$bc" = "$want_bc" ] &&
     { [ "$api" = opencl ] || [ "$api" = cpu ] || [ "$br" = "$want_br" ]; }; then
    ok "$api: bench uses the tuned $variant ${br}x${bc} (source tuned)"
  else bad "$api: bench $status source=$source $variant ${br}x${bc}, file $want_variant ${want_br}x${want_bc}"; fi

  ATTNVK_NO_TUNING=1 "$attnvk" bench --api "$api" "${shape[@]}" --out "$work/off-$api.json" > /dev/null 2>&1
  read -r status source _ < <(record "$work/off-$api.json")
  if [ "$status" = ok ] && { [ "$source" = table ] || [ "$source" = default ]; }; then ok "$api: ATTNVK_NO_TUNING=1 takes the table ($source)"
  else bad "$api: ATTNVK_NO_TUNING=1: $status source=$source"; fi

  # one changed digit: the checksum no longer matches
  sed -i '3s/"api": "/"api": "x/' "$file"
  "$attnvk" bench --api "$api" "${shape[@]}" --out "$work/corrupt-$api.json" > /dev/null 2> "$work/corrupt-$api.err"
  rc=$?
  read -r status source _ < <(record "$work/corrupt-$api.json")
  if [ "$rc" = 0 ] && [ "$status" = ok ] && [ "$source" != tuned ] &&
     grep -q "attnvk: warning: tuning file ignored: .*checksum mismatch" "$work/corrupt-$api.err"; then
    ok "$api: a corrupted file is ignored with a warning ($source)"
  else bad "$api: corrupted file: rc=$rc $status source=$source, stderr: $(head -3 "$work/corrupt-$api.err")"; fi
done

# bad input: one line on stderr, exit 2, before any device work
while read -r what args; do
  # shellcheck disable=SC2086
  out=$("$attnvk" tune $args 2>&1 >/dev/null); rc=$?
  if [ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; then ok "tune $what: exit 2: $out"
  else bad "tune $what: rc=$rc: $out"; fi
done <<'BAD'
unknown-api     --api nope
unknown-case    --case no-such-case
unknown-suite   --suite no-such-suite
case-and-suite  --case quick-d64-n256-b1-h4 --suite quick
budget-zero     --budget 0
budget-negative --budget -5
budget-garbage  --budget soon
max-candidates  --max-candidates 0
unknown-option  --fast
BAD

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
