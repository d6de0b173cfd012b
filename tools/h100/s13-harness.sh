#!/usr/bin/env bash
# Session 13 on the H100 (#14): how long the decode and long suites take at default settings,
# with each record's arrival time (jsonl streamed), so the harness's own costs show.
set -u
source .gpu/gpu-env.sh
export ATTNVK_CACHE_DIR=/tmp/attnvk-cache
B=${BUILD:-build-h100}
mkdir -p "$OUT"
# the devices' peaks first, so every record carries its roofline
[ "${PEAK:-1}" = 1 ] && $B/attnvk peak --api cuda,vulkan,opencl,cpu --json "$OUT/peak.json" > "$OUT/peak.log" 2>&1
IFS=';' read -r -a runs <<< "${RUNS:-decode|--suite decode --api cuda,vulkan,opencl}"
for run in "${runs[@]}"; do
  name=${run%%|*}; args=${run#*|}
  start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  timeout ${SUITE_TIMEOUT:-240} $B/attnvk bench $args -o jsonl 2> "$OUT/$name.err" | while IFS= read -r line; do
    printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$OUT/$name.jsonl"
  end=$EPOCHREALTIME
  echo "== $name: $(python3 -c "print(round($end - $start, 1))") s wall, $(wc -l < "$OUT/$name.jsonl") records"
  python3 - "$OUT/$name.jsonl" "$start" <<'PY'
import json, sys
start = float(sys.argv[2])
prev = 0.0
for line in open(sys.argv[1]):
    t, rec = line.split(" ", 1)
    t = float(t) - start
    try: r = json.loads(rec)
    except Exception: continue
    if "case" not in r: continue
    st = r.get("stats") or {}
    print(f"{t:7.1f} (+{t - prev:5.1f}) {r['case']['name'][:40]:40s} {r['api']:7s} {r['implementation']:8s} {r['status']:8s} "
          f"n={len(r.get('samples_ms') or [])} med={st.get('median_ms', 0) or 0:.3f}")
    prev = t
PY
done
