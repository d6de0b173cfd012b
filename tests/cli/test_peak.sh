#!/usr/bin/env bash
# `attnvk peak` on the CPU-emulated devices (CPU, lavapipe, PoCL): positive
# finite numbers, matrix path "none" with a reason where there are no matrix
# units, a cache hit on the second run, a corrupt cache file measured again,
# and exit status 2 with one line for bad options.
# Usage: ATTNVK=path/to/attnvk test_peak.sh WORKDIR
set -u
attnvk=${ATTNVK:?set ATTNVK to the attnvk binary}
work=${1:?work dir}
python=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work"
export ATTNVK_CACHE_DIR=$work/cache
unset ATTNVK_VISIBLE_DEVICES
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

apis=cpu,vulkan,opencl
# check.py FILE EXPECT: every listed device's fields, EXPECT "measured" or "cached" for what was measured
cat > "$work/check.py" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
want = sys.argv[2]
errors, seen = [], set()
for d in doc["devices"]:
    name = "%s:%d %s" % (d["api"], d["index"], d["name"])
    seen.add(d["api"])
    p = d.get("peak")
    if p is None:
        errors.append("%s: no peak (%s)" % (name, d.get("peak_error")))
        continue
    required = ["read", "copy"] + (["fma_f32"] if d["api"] != "cpu" else [])
    for f in ["read", "copy", "fma_f32", "fma_f16", "matrix"]:
        e = p[f]
        if e["state"] in ("measured", "cached"):
            v = e["value"]
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                errors.append("%s %s: value %r" % (name, f, v))
            if e["state"] != want:
                errors.append("%s %s: %s, expected %s" % (name, f, e["state"], want))
        elif f in required:
            errors.append("%s %s: %s (%s)" % (name, f, e["state"], e.get("reason")))
        elif e["state"] == "failed":
            errors.append("%s %s failed: %s" % (name, f, e.get("reason")))
        elif not e.get("reason"):
            errors.append("%s %s: %s without a reason" % (name, f, e["state"]))
    m = p["matrix"]
    if d["type"] == "cpu" and (m["state"] != "none" or m.get("path") != "none" or not m.get("reason")):
        errors.append("%s: matrix should be 'none' with a reason on a CPU device: %r" % (name, m))
    fmt = lambda f: "%.1f" % p[f]["value"] if p[f]["value"] else p[f]["state"]
    print("%-32.32s read %s, copy %s GB/s; FMA f32 %s, f16 %s GFLOP/s; matrix %s" % (
        name, fmt("read"), fmt("copy"), fmt("fma_f32"), fmt("fma_f16"), m.get("path", m["state"])))
for api in ("cpu", "vulkan", "opencl"):
    if api not in seen:
        errors.append("no %s device" % api)
print("\n".join(errors))
sys.exit(1 if errors else 0)
PY

start=$(date +%s)
if "$attnvk" peak --api $apis --json "$work/first.json" > "$work/first.txt" 2>&1; then
  if res=$("$python" "$work/check.py" "$work/first.json" measured); then ok "first run measures: $(echo; echo "$res")"
  else bad "first run: $res"; fi
else bad "first run exit $?: $(cat "$work/first.txt")"; fi
cat "$work/first.txt"
echo "first run: $(( $(date +%s) - start )) s"

if "$attnvk" peak --api $apis --no-measure --json "$work/second.json" > "$work/second.txt" 2>&1 &&
   res=$("$python" "$work/check.py" "$work/second.json" cached); then ok "second run reads the cache"
else bad "second run: $(cat "$work/second.txt") $res"; fi
grep -q "cached" "$work/second.txt" && ! grep -q "measured" "$work/second.txt" && ok "the table says cached" ||
  bad "the table: $(cat "$work/second.txt")"

# a corrupt record (one byte of the payload changed) is measured again and stored
n=0
for f in "$ATTNVK_CACHE_DIR"/peak-*.txt; do
  [ -f "$f" ] || continue
  printf '#' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") - 3 )) conv=notrunc status=none
  n=$((n + 1))
done
[ "$n" -ge 3 ] && ok "corrupted $n peak records" || bad "expected 3 peak records, found $n"
if "$attnvk" peak --api $apis --no-measure --json "$work/corrupt.json" > "$work/corrupt.txt" 2>&1 &&
   "$python" -c "
import json, sys
d = json.load(open(sys.argv[1]))['devices']
sys.exit(0 if all(x['peak']['copy']['state'] == 'not measured' for x in d) else 1)" "$work/corrupt.json"; then
  ok "a corrupt record is not read"
else bad "corrupt record read: $(cat "$work/corrupt.txt")"; fi
if "$attnvk" peak --api $apis --json "$work/third.json" > "$work/third.txt" 2>&1 &&
   "$python" -c "
import json, sys
d = json.load(open(sys.argv[1]))['devices']
sys.exit(0 if all(x['peak']['copy']['state'] == 'measured' and x['peak']['read']['state'] == 'cached' for x in d) else 1)" \
     "$work/third.json"; then
  ok "a corrupt record is measured again (read bandwidth stays cached)"
else bad "recovery: $(cat "$work/third.txt")"; fi

# `attnvk devices` shows the cached peaks
if "$attnvk" devices --no-measure --json > "$work/devices.json" 2>&1 &&
   "$python" -c "
import json, sys
d = json.load(open(sys.argv[1]))['devices']
sys.exit(0 if all(x.get('peak', {}).get('copy', {}).get('value') for x in d) else 1)" "$work/devices.json"; then
  ok "attnvk devices shows the cached peaks"
else bad "devices: $(head -c 600 "$work/devices.json")"; fi

# the bench places each record on the cached roofline: a prefill case (compute-bound on a
# CPU at D=64) and a decode one (memory-bound), with the devices' peaks in the results
if "$attnvk" bench --api cpu --impl attnvk --dtype f32 --seq 256 --heads 2 --head-dim 64 --min-time 0.01 \
     -o json --out "$work/prefill.json" > /dev/null 2>&1 &&
   "$attnvk" bench --api cpu --impl attnvk --dtype f32 --seq 1 --seq-kv 4096 --heads 8 --head-dim 128 --min-time 0.01 \
     -o json --out "$work/decode.json" > /dev/null 2>&1 &&
   "$python" - "$work/prefill.json" "$work/decode.json" > "$work/roofline.txt" 2>&1 <<'PY'
import json, math, sys
for f, bound in zip(sys.argv[1:], ["compute", "memory"]):
    doc = json.load(open(f))
    assert doc["devices"][0]["peak"]["fma_f32"]["value"] > 0, "the devices section carries the peaks"
    r = doc["records"][0]
    roof = r["roofline"]
    peak = doc["devices"][0]["peak"]
    ai = r["flops"] / (r["gbytes_per_s"] * 1e9 * r["stats"]["median_ms"] * 1e-3)
    assert math.isclose(roof["arithmetic_intensity"], ai, rel_tol=1e-6), (roof, ai)
    assert roof["bound"] == bound, (f, roof)
    assert math.isclose(roof["compute_peak_tflops"], peak["fma_f32"]["value"] / 1e3, rel_tol=1e-9), roof
    want = min(peak["fma_f32"]["value"], ai * peak["read"]["value"]) / 1e3
    assert math.isclose(roof["attainable_tflops"], want, rel_tol=1e-9), (roof, want)
    assert math.isclose(roof["fraction"], r["tflops"] / want, rel_tol=1e-9), roof
    assert math.isclose(r["peak_fraction"], r["tflops"] / roof["compute_peak_tflops"], rel_tol=1e-9)
    print(f, roof)
PY
then ok "bench records sit on the cached roofline: $(tr '\n' ' ' < "$work/roofline.txt" | cut -c1-300)"
else bad "roofline: $(cat "$work/roofline.txt")"; fi

# bad options: one line, exit 2
while IFS='|' read -r args; do
  # shellcheck disable=SC2086
  "$attnvk" peak $args > "$work/out" 2> "$work/err"
  rc=$?
  lines=$(wc -l < "$work/err")
  if [ "$rc" = 2 ] && [ "$lines" = 1 ]; then ok "peak $args -> 2: $(cat "$work/err")"
  else bad "peak $args -> $rc, $lines lines: $(cat "$work/err")"; fi
done <<'BAD'
--api bogus
--api cpu,,vulkan
--api
--device
--device nosuchdevice
--json
--bogus
--remeasure --no-measure
extra
BAD

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
