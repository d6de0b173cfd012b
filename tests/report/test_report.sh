#!/usr/bin/env bash
# attnvk report: one self-contained HTML page with SVG charts, escaped text, and a
# headless Chromium screenshot that is not blank and shows the charts.
# Env: ATTNVK, DATA, PYTHON, PNG_CHECK, optional CHROMIUM. Arg: a scratch folder.
# Without chromium: exit 77 (skipped) locally, a loud failure in CI (CI=true).
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
html=$work/report.html

"$ATTNVK" report "$DATA/base.json" "$DATA/new_slow30.json" --out "$html" >"$work/out" 2>"$work/err"
check "report: exit 0" [ $? = 0 ]
check "report: says where" grep -q "wrote $html (2 runs)" "$work/out"

# -o is the format (html); -o FILE.html still names the file; anything else is refused
"$ATTNVK" report "$DATA/base.json" -o "$work/compat.html" >"$work/out" 2>"$work/err"
check "-o FILE.html: exit 0" [ $? = 0 ]
check "-o FILE.html: written there" grep -q '</html>' "$work/compat.html"
"$ATTNVK" report "$DATA/base.json" -o html --out "$work/format.html" >"$work/out" 2>"$work/err"
check "-o html --out FILE: exit 0" [ $? = 0 ]
check "-o html --out FILE: written there" grep -q '</html>' "$work/format.html"
(cd "$work" && "$ATTNVK" report "$DATA/base.json" -o pdf) >"$work/out" 2>"$work/err" # a wrong -o writes nothing anywhere
check "-o pdf: exit 2" [ $? = 2 ]
check "-o pdf: one line naming it" eval '[ "$(wc -l <"$work/err")" = 1 ] && grep -q "unknown format .pdf." "$work/err"'
check "-o pdf: no file named pdf" [ ! -e "$work/pdf" ]
"$ATTNVK" report "$DATA/base.json" -o "$work/report.htm" >"$work/out" 2>"$work/err"
check "-o FILE.htm: exit 2 (a format, not a file)" [ $? = 2 ]
check "-o FILE.htm: nothing written" [ ! -e "$work/report.htm" ]
"$ATTNVK" report "$DATA/base.json" --out "$work/no/such/folder/r.html" >"$work/out" 2>"$work/err"
check "--out in a missing folder: exit 2" [ $? = 2 ]
check "--out in a missing folder: one line naming it" \
    eval '[ "$(wc -l <"$work/err")" = 1 ] && grep -q "$work/no/such/folder/r.html" "$work/err"'

# a write that fails half-way (file size limit) leaves the old report whole and no temporary file
printf 'the previous report\n' >"$work/kept.html"
(trap '' XFSZ && ulimit -f 16 && exec "$ATTNVK" report "$DATA/base.json" "$DATA/new_slow30.json" -o "$work/kept.html") \
    >"$work/out" 2>"$work/err"
check "report past the file size limit: exit 1" [ $? = 1 ]
check "report past the file size limit: one line naming the file" \
    eval '[ "$(wc -l <"$work/err")" = 1 ] && grep -q "$work/kept.html: write failed" "$work/err"'
check "report past the file size limit: the previous report is whole" [ "$(cat "$work/kept.html")" = "the previous report" ]
check "report past the file size limit: no temporary file left" [ "$(ls "$work" | grep -c '^kept\.html')" = 1 ]

# self-contained: nothing fetched (the svg xmlns is a name, not a fetch)
check "no scripts, links, images, imports or remote urls" \
    not grep -Eiq '<script|<link|<img|<iframe|@import|src=|href=|url\((["'\'']?)(https?:|//)' "$html"
check "inline CSS" grep -q '<style>' "$html"
# text from the JSON is escaped: the hostname and a skip reason carry < > & " '
check "hostname escaped" grep -q 'gpu-box&lt;1&gt;&amp;co' "$html"
check "hostname never raw" not grep -q 'gpu-box<1>' "$html"
check "reason escaped" grep -q 'workspace needs &lt;32 GiB&gt; of scores &amp; &quot;probabilities&quot; &gt; free &#39;memory&#39;' "$html"
check "reason never raw" not grep -q '<32 GiB>' "$html"

# the charts: 1 comparison + per run: bars (H100 TFLOP/s and speedup, CPU GFLOP/s), lines (H100 4 scaling +
# memory for D=64 and D=128, CPU scaling + memory)
check "charts: 23 svg elements, each with bars or lines" "$PYTHON" -c '
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg.*?</svg>", page, re.S)
assert len(svgs) == 23, len(svgs)
lines = [s for s in svgs if s.count("<polyline") >= 1]
bars = [s for s in svgs if "<polyline" not in s and len(re.findall(r"<rect [^>]*><title>", s)) >= 3]
assert len(bars) == 7 and len(lines) == 16, (len(bars), len(lines))
for s in svgs:  # axes with units, a legend
    assert "</text>" in s and ("FLOP/s" in s or "memory" in s or "ratio" in s or "speedup" in s), s[:200]
assert page.count("<figcaption>Device: <b>NVIDIA H100 80GB HBM3</b> \u00b7 driver vulkan 560.28.03, cuda 560.28.03") >= 8
assert page.count("hatched bars: the vendor-native kernel") == 2
assert "fa-d128-n4096-b4-h16 attnvk/vulkan" in page  # the regression labelled in the ratio chart
# memory for every head dim; the PoCL CPU (below 1 TFLOP/s) in GFLOP/s, the H100 in TFLOP/s
assert page.count("<title>Memory, flash vs unfused \u2014 D=64 B=4") == 2 and page.count("<title>Memory, flash vs unfused \u2014 D=128 B=4") == 2
assert page.count("<title>Throughput per case (GFLOP/s") == 2 and page.count("<title>Throughput per case (TFLOP/s") == 2
# error bars (15 samples each: min-max) with the variant and tile in the tooltips
assert page.count("<g class=\"errorbars\"") >= 10, page.count("<g class=\"errorbars\"")
assert "variant fa2-coopmat \u00b7 tile 64x64 \u00b7 min\u2013max " in page
# no peaks in these files, no CPU device: said, not drawn
assert page.count("No roofline: the run carries no cached peaks for NVIDIA H100 80GB HBM3 (vulkan), NVIDIA H100 80GB HBM3 (cuda)") == 2
assert "class=\"roofline\"" not in page
assert page.count("No CPU/GPU crossover: the run has no ok record of the CPU device") == 2
# the geometric-mean summary: one row per device, API and implementation
assert page.count("<table class=\"summary\">") == 2 and page.count("<td>cudnn</td><td class=\"num\">24 / 24</td>") == 2
' "$html"

# a real run with cached peaks (the CPU device, lavapipe, PoCL: data/cpu_gpu_f32.json): a roofline per device
# with every record on it, the crossover table, GFLOP/s, memory for D=64 and D=128
roof=$work/roofline.html
"$ATTNVK" report "$DATA/cpu_gpu_f32.json" --out "$roof" >"$work/out" 2>"$work/err"
check "roofline report: exit 0" [ $? = 0 ]
check "roofline report: rooflines, crossover, error bars, tiles" "$PYTHON" -c '
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
run = json.load(open(sys.argv[2]))
figs = re.findall(r"<figure class=\"roofline\">.*?</figure>", page, re.S)
assert len(figs) == 3, len(figs)  # cpu, vulkan, opencl
for dev, fig in zip(run["devices"], figs):
    assert "Roofline \u2014 %s (%s)" % (dev["name"], dev["api"]) in fig, dev["name"]
    assert fig.count("class=\"bandwidth\"") == 1
    roofs = [k for k in ("matrix", "fma_f16", "fma_f32") if dev["peak"][k]["value"]]
    assert fig.count("class=\"roof\"") == len(roofs), (dev["api"], roofs)
    assert ">read %.3g GB/s</text>" % dev["peak"]["read"]["value"] in fig
    assert ">f32 FMA %.3g GFLOP/s (%s)</text>" % (dev["peak"]["fma_f32"]["value"], dev["peak"]["fma_f32"]["path"]) in fig
    ok = [r for r in run["records"] if r["status"] == "ok" and r["api"] == dev["api"]]
    points = re.findall(r"<g class=\"points\">(.*?)</g>", fig, re.S)[0]
    assert points.count("<title>") == len(ok), (points.count("<title>"), len(ok))
    for r in ok:  # each record at its intensity, with variant and tile
        tip = "%s \u2014 %s \u00b7 %s: variant %s, tile %dx%d\n%.3g FLOP/B" % (r["case"]["name"], r["implementation"], r["api"],
              r["variant"], r["tile_br"], r["tile_bc"], r["roofline"]["arithmetic_intensity"])
        assert tip in points, tip
assert "<table class=\"peaks\">" in page
assert page.count("<table class=\"crossover\">") == 1
rows = re.findall(r"<tr class=\"(crosses|never)\">", page)
assert len(rows) == 4, rows  # D=64 and D=128 on vulkan and opencl
assert "Throughput per case (GFLOP/s" in page and "TFLOP/s (median" not in page
assert "Memory, flash vs unfused \u2014 D=64" in page and "Memory, flash vs unfused \u2014 D=128" in page
assert page.count("<g class=\"errorbars\"") >= 3 and "\u00b7 p5\u2013p95 " in page and "(20 samples)" in page
assert re.search(r"<td>[0-9]+x[0-9]+</td>", page)  # the tile column
' "$roof" "$DATA/cpu_gpu_f32.json"

# sizes out of range are bad input, never an overflow in the charts (B*Nq under UBSan)
"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["records"][5]["case"]["batch"] = 4 * 10**18
json.dump(d, open(sys.argv[2], "w"))
' "$DATA/base.json" "$work/huge_batch.json"
"$ATTNVK" report "$work/huge_batch.json" --out "$work/huge.html" >"$work/out" 2>"$work/err"
check "batch 4e18: exit 2" [ $? = 2 ]
check "batch 4e18: one line naming the value" \
    eval '[ "$(wc -l <"$work/err")" = 1 ] && grep -q "huge_batch.json: records\[5\]\.case\.batch must be an integer from 1 to 2147483647" "$work/err"'
check "batch 4e18: no report" [ ! -e "$work/huge.html" ]

"$ATTNVK" report "$DATA/base.json" "$work/none.json" --out "$work/x.html" 2>"$work/err"
check "missing input: exit 2" [ $? = 2 ]
"$ATTNVK" report 2>"$work/err"
check "no input: exit 2" [ $? = 2 ]

# CHROMIUM overrides the browser (CHROMIUM= simulates a machine without one)
# the checker itself rejects a blank page
"$PYTHON" -c '
import struct, sys, zlib
w, h = 300, 200
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
rows = b"".join(b"\0" + b"\xff" * (3 * w) for _ in range(h))
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                             + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
' "$work/blank.png"
"$PNG_CHECK" "$work/blank.png" --min-colors 200 --min-ink 10 --color 4e79a7:3000 >"$work/blank.out" 2>&1
check "png_check rejects a blank page" [ $? = 1 ]

browser=${CHROMIUM-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$browser" ]; then
    echo "$pass passed, $fail failed (chromium not installed: screenshot not checked)"
    if [ "${CI:-}" = true ]; then
        echo "FAIL: chromium is required in CI (tools/install-deps.sh with ATTNVK_WITH_CHROMIUM=1)"
        exit 1
    fi
    [ "$fail" = 0 ] || exit 1
    exit 77
fi
png=$work/report.png
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d)" --screenshot="$png" --window-size=1400,3600 "file://$html" >"$work/chromium.log" 2>&1
check "chromium wrote a screenshot" [ -s "$png" ]
# not blank; the series colours (attnvk vulkan/cuda, cudnn, cublas) and the verdict colours
# (regression red, improvement green) are painted, in separate chart regions down the page
"$PNG_CHECK" "$png" --min-colors 200 --min-ink 10 \
    --color 4e79a7:3000 --color f28e2b:3000 --color 59a14f:2000 --color e15759:1000 \
    --color d62728:300 --color 2ca02c:150 \
    --regions 4e79a7,f28e2b,59a14f,e15759,d62728,2ca02c:6 >"$work/png_check.out" 2>&1
check "screenshot shows the charts" [ $? = 0 ]
cat "$work/png_check.out"
# the rooflines and the crossover table render too: CPU series (openblas, attnvk), lavapipe, PoCL
png=$work/roofline.png
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d)" --screenshot="$png" --window-size=1400,3000 "file://$roof" >"$work/chromium.log" 2>&1
check "chromium wrote the roofline screenshot" [ -s "$png" ]
"$PNG_CHECK" "$png" --min-colors 200 --min-ink 8 --color 4e79a7:1000 --color f28e2b:1000 --color 59a14f:300 \
    --regions 4e79a7,f28e2b,59a14f:3 >"$work/png_check.out" 2>&1
check "roofline screenshot shows the charts" [ $? = 0 ]
cat "$work/png_check.out"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
