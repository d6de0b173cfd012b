#!/usr/bin/env bash
# Session 8: the NVIDIA Vulkan driver runs a freshly built pipeline slowly for
# a while and then fast, in one process (alone-again in vk_alone.sh: cv 57%),
# while any later process that finds the pipeline in the driver's shader cache
# runs fast at once. This times 3000 back-to-back-free samples from a fresh
# driver cache (__GL_SHADER_DISK_CACHE_PATH) and attnvk cache, then again with
# each cache kept, and prints when the samples turn fast.
set -u
out=${OUT:-/tmp/vk-tier}; mkdir -p "$out"
source .gpu/gpu-env.sh
avk=./${BUILD:-build}/attnvk
case_args="--api vulkan --impl attnvk --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype f16 --seq 1 --seq-kv 16384 --warmup 0 --launches 1"
cat > "$out/series.py" <<'PY'
import json, sys
name, path, wall = sys.argv[1], sys.argv[2], float(sys.argv[3])
r = json.load(open(path))["records"][0]
s = r.get("samples_ms") or []
if not s: print(f"{name:16s} {r['status']} {r.get('reason','')}"); sys.exit()
lo = min(s); slow = [i for i, x in enumerate(s) if x > 2 * lo]
last_slow = slow[-1] if slow else -1
print(f"{name:16s} n={len(s)} min={lo:.3f} first5={[round(x,3) for x in s[:5]]} slow={len(slow)} "
      f"last_slow_index={last_slow} device_ms_until_fast={sum(s[:last_slow+1]):.0f} wall_s={wall:.1f} "
      f"median={sorted(s)[len(s)//2]:.3f} check={r['check']['rel_l2']:.1e}")
PY
one() { # name, driver cache dir, attnvk cache dir, samples
  local t0=$(date +%s.%N)
  __GL_SHADER_DISK_CACHE_PATH=$2 ATTNVK_CACHE_DIR=$3 $avk bench $case_args -r $4 -o json --out "$out/$1.json" >/dev/null 2>"$out/$1.err"
  local t1=$(date +%s.%N)
  python3 "$out/series.py" "$1" "$out/$1.json" "$(echo "$t1 - $t0" | bc)" | tee -a "$out/tier.txt"
}
d1=$(mktemp -d) a1=$(mktemp -d)
one fresh-both "$d1" "$a1" 3000
one kept-both "$d1" "$a1" 300
d2=$(mktemp -d)
one fresh-driver "$d2" "$a1" 3000
a2=$(mktemp -d)
one fresh-attnvk "$d1" "$a2" 300
d3=$(mktemp -d) a3=$(mktemp -d)
one fresh-both-2 "$d3" "$a3" 6000
ls -la "$d1" | head
