#!/usr/bin/env bash
# attnvk compare on synthetic results pairs (data/, see gen_results.py): verdicts,
# exit codes, the regressed case named, formats, and one-line errors for bad input.
# Env: ATTNVK (the binary), DATA (tests/report/data), PYTHON. Arg: a scratch folder.
set -u
work=$1
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
check() {
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}
not() { ! "$@"; }
compare() {
    "$ATTNVK" compare "$@" >"$work/out" 2>"$work/err"
    rc=$?
}
has() { grep -Eq -- "$1" "$work/out"; }
one_line() { [ "$(wc -l <"$work/err")" = 1 ] && grep -q -- "$1" "$work/err"; }
base=$DATA/base.json

compare "$base" "$DATA/new_slow30.json"
check "30% slower: exit 1" [ "$rc" = 1 ]
check "30% slower: the case is named" has '^ *REGRESSION +attnvk +vulkan +NVIDIA H100 80GB HBM3 +fa-d128-n4096-b4-h16 '
check "30% slower: only that case" [ "$(grep -Ec '^ *REGRESSION ' "$work/out")" = 1 ]
check "15% faster: improvement" has '^ *improvement +attnvk +cuda .* fa-d64-n8192-b4-h16-causal '
check "both drivers shown" has '^ *vulkan +NVIDIA H100 80GB HBM3 +550\.54\.15 +560\.28\.03'
check "geomean per API and implementation" has '^ *vulkan +attnvk +NVIDIA H100 80GB HBM3 +24 +0\.9[0-9]+x +1 '
check "result line" has '^result: 1 regression, 0 new failures'
compare "$base" "$DATA/new_slow30.json" --threshold 40
check "30% slower under a 40% threshold: exit 0" [ "$rc" = 0 ]

compare "$base" "$DATA/new_noise.json" --all
check "1% slower with 3% spread: exit 0" [ "$rc" = 0 ]
check "1% slower with 3% spread: same" has '^ *same +attnvk +vulkan .* fa-d128-n2048-b4-h16 '
check "8% slower with 6% spread: within noise" has '^ *within noise +attnvk +cuda .* fa-d64-n2048-b4-h16 '
check "noise: no regression" not has '^ *REGRESSION '

compare "$base" "$DATA/new_fail.json"
check "turned fail: exit 1" [ "$rc" = 1 ]
check "turned fail: named with its reason" has '^ *NEW FAILURE +attnvk +vulkan .* fa-d64-n1024-b4-h16 .*ok -> fail: rel_l2 3\.1e-01'

compare "$base" "$DATA/new_accuracy.json"
check "rel_l2 grown 20x: exit 1" [ "$rc" = 1 ]
check "rel_l2 grown 20x: named" has '^ *ACCURACY +attnvk +cuda .* fa-d128-n1024-b4-h16 '

compare "$base" "$DATA/new_missing.json"
check "case missing: exit 0" [ "$rc" = 0 ]
check "case missing: reported" has '^ *missing +attnvk +cuda .* fa-d128-n8192-b4-h16-causal '
check "case new: reported" has '^ *new +attnvk +cuda .* fa-d256-n4096-b4-h16 '
check "missing counted" has '1 missing, 1 new'

compare "$base" "$base"
check "a run against itself: exit 0" [ "$rc" = 0 ]
check "a run against itself: all same" has ' 95 same, '

compare "$base" "$DATA/new_slow30.json" --device opencl
check "--device opencl: no regression there" [ "$rc" = 0 ]
compare "$base" "$DATA/new_slow30.json" --case 'fa-d128-n4096*' --device vulkan:h100
check "--case glob keeps the regression" [ "$rc" = 1 ]

compare "$base" "$DATA/new_slow30.json" -o md
check "markdown: exit 1" [ "$rc" = 1 ]
check "markdown: a table row" has '^\| REGRESSION \| attnvk \| vulkan \| NVIDIA H100 80GB HBM3 \| fa-d128-n4096-b4-h16 \|'
compare "$base" "$DATA/new_fail.json" -o json
check "json: exit 1" [ "$rc" = 1 ]
check "json: parses, says failed, names the case" "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
bad = [c for c in d["cases"] if c["verdict"] == "NEW FAILURE"]
assert d["failed"] is True and len(bad) == 1 and bad[0]["case"] == "fa-d64-n1024-b4-h16", bad
assert d["counts"]["same"] > 90 and d["drivers"][0]["new_driver"] == "560.28.03"
' "$work/out"

# two runs with no case in common (another GPU): nothing to compare is bad input, not "0 regressions"
"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["records"]:
    r["device_uuid"] = r["group"] = "0a0b0c0d-0000-4000-8000-000000000001"
    r["device_name"] = "NVIDIA A100-SXM4-80GB"
json.dump(d, open(sys.argv[2], "w"))
' "$base" "$work/other_gpu.json"
compare "$base" "$work/other_gpu.json"
check "no shared case: exit 2" [ "$rc" = 2 ]
check "no shared case: one line that says so" one_line 'base.json and .*other_gpu.json share no case (99 and 99 records'
check "no shared case: no verdict table" [ ! -s "$work/out" ]
# another card of the same model (the GPU machine lends a fresh card per lease): matched by name, said once
"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["records"]:
    r["device_uuid"] = r["group"] = "0a0b0c0d-0000-4000-8000-000000000002"
json.dump(d, open(sys.argv[2], "w"))
' "$base" "$work/other_card.json"
compare "$base" "$work/other_card.json"
check "same model, other card: exit 0" [ "$rc" = 0 ]
check "same model, other card: says so" has '^devices matched by name: a card only one run has'
check "same model, other card: rows compared" has '95 same, 0 missing, 0 new'
compare "$base" "$base"
check "one card: no by-name note" not has 'matched by name'
compare "$base" "$base" --case 'no-such-case*'
check "no case matches --case: exit 2" [ "$rc" = 2 ]
check "no case matches --case: one line" one_line 'share no case (0 and 0 records after --case no-such-case\*'

# a --device that names no device of either run: exit 2 with the devices there are
compare "$base" "$DATA/new_slow30.json" --device a100
check "unknown --device: exit 2" [ "$rc" = 2 ]
check "unknown --device: lists the devices" \
    one_line "no device matches --device 'a100' (devices in these runs: vulkan:NVIDIA H100 80GB HBM3, cuda:NVIDIA H100 80GB HBM3, opencl:cpu-haswell"

# bad input: exit 2 and one line that names the problem
compare "$base" "$work/no-such.json"
check "missing file: exit 2" [ "$rc" = 2 ]
check "missing file: one line" one_line 'no-such.json: No such file'
compare "$DATA/bad_json.json" "$base"
check "invalid JSON: exit 2" [ "$rc" = 2 ]
check "invalid JSON: one line" one_line 'bad_json.json: invalid JSON near line 1'
compare "$base" "$DATA/bad_version.json"
check "unknown format_version: exit 2" [ "$rc" = 2 ]
check "unknown format_version: one line" one_line 'bad_version.json: unknown format_version 2'
compare "$base"
check "one run: exit 2" [ "$rc" = 2 ]
compare "$base" "$base" --threshold lots
check "bad threshold: exit 2" [ "$rc" = 2 ]
compare "$base" "$base" -o xml
check "bad format: exit 2" [ "$rc" = 2 ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
