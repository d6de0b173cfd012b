#!/usr/bin/env python3
"""`attnvk bench` over several devices and sparse patterns, end to end on the cpu API (and lavapipe,
PoCL where present): --ring G (issue #19) records with their ring object and summary lines, and
--block-layout / --dilated (issue #20) records with the pattern in the case's name and fields and
FLOPs of the visible pairs only; bad values exit 2 with one line; the dilated suites' cases, their
records' vs_dense and the report's sparse/dense crossover.

usage: test_bench_patterns.py ATTNVK SCHEMA WORKDIR"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from bench_test_util import expect, finish, load_validator, run_attnvk, schema_valid  # noqa: E402

ATTNVK, SCHEMA_PATH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
VALIDATOR = load_validator(SCHEMA_PATH)


def run(*args, timeout=240):
    return run_attnvk(ATTNVK, args, timeout, dict(os.environ))


def valid(doc, what):
    return schema_valid(VALIDATOR, doc, what)


def load(path):
    with open(path) as f:
        return json.load(f)


def test_ring():
    """--ring G: one record per case over G ranks (virtual ranks on the CPU here), O checked, the ring's
    measurements in JSON (schema) and a summary line after the table; what it cannot run is a usage error
    or a skipped record with the reason."""
    out = os.path.join(WORK, "ring.json")
    shape = ("--api", "cpu", "--seq", "96,130", "--heads", "4", "--kv-heads", "2", "--head-dim", "32", "--causal",
             "--dtype", "f32", "-r", "3", "--warmup", "0")
    rc, _, err = run("bench", *shape, "--ring", "3", "-o", "json", "--out", out)
    doc = load(out)
    valid(doc, "--ring 3 JSON")
    recs = doc["records"]
    ring = [r.get("ring") or {} for r in recs]
    expect(rc == 0 and len(recs) == 2 and all(r["status"] == "ok" and r["case"]["name"].endswith("-ring3")
                                              and r["check"]["passed"] for r in recs)
           and all(g.get("ranks") == 3 and g.get("rank_devices") == [0, 0, 0] and g.get("transport") == "host"
                   and g.get("transfer_ms", -1) >= 0 and g.get("strong_scaling", 0) > 0 and g.get("weak_scaling", 0) > 0
                   and g.get("single_device_ms", 0) > 0 for g in ring),
           f"--ring 3: exit {rc}, " + ", ".join(f"{r['case']['name']}:{r['status']}:{r.get('ring')}" for r in recs)
           + (f" {err.strip()!r}" if rc else ""))
    rc, stdout, _ = run("bench", *shape, "--ring", "2", "--gpus", "2")
    lines = [l for l in stdout.splitlines() if l.startswith("ring ")]
    expect(rc == 0 and len(lines) == 2 and "2 ranks (devices 0,0) over host" in lines[0],
           f"--ring 2: the table's summary lines: {lines}")
    rc, _, _ = run("bench", *shape, "--ring", "2", "--window", "8,0", "-o", "json", "--out", out)
    doc = load(out)
    expect(rc == 0 and all(r["status"] == "ok" and r["check"]["passed"] for r in doc["records"]),
           "--ring with a window: ok: " + "; ".join(f"{r['status']} {r['reason']}" for r in doc["records"]))
    rc, _, _ = run("bench", *shape, "--ring", "2", "--sinks", "random", "-o", "json", "--out", out)
    doc = load(out)
    expect(rc == 0 and all(r["status"] == "skipped" and "sinks" in r["reason"] for r in doc["records"]),
           "--ring with sinks: skipped with the reason: " + "; ".join(r["reason"] for r in doc["records"]))
    for bad in (["--ring", "0"], ["--ring", "65"], ["--gpus", "x"], ["--ring", "2", "--pass", "bwd"]):
        rc, _, err = run("bench", "--api", "cpu", *bad)
        expect(rc == 2 and len(err.strip().splitlines()) == 1, f"bench {' '.join(bad)}: exit {rc}: {err.strip()!r}")


def dilated_pairs(h, n, segs, rates, causal):
    """Visible (query, key) pairs of dilated attention (B = 1), from issue #20's rules."""
    total = 0
    for head in range(h):
        g = head // (h // len(segs))
        s, r = segs[g], rates[g]
        active = [p for p in range(n) if (p % s) % r == g % r]
        total += sum(1 for i in active for j in active if j // s == i // s and (not causal or j <= i))
    return total


def local_pairs(n, bs, w, causal):
    """Visible pairs of local:W on an N x N problem in bs x bs blocks (Nq = Nk: the diagonal is r = c)."""
    return sum(1 for i in range(n) for j in range(n)
               if abs(i // bs - j // bs) <= w and (not causal or j <= i))


def test_sparse_patterns():
    """--block-layout (random, local, bigbird) and --dilated on the CPU: ok records checked against the
    reference, the pattern in the case's name and fields (schema-valid), FLOPs of the visible pairs only;
    bad values are usage errors."""
    out = os.path.join(WORK, "sparse.json")
    n, h, d = 256, 2, 32
    base = ("--api", "cpu", "--impl", "attnvk", "--seq", str(n), "--heads", str(h), "--head-dim", str(d),
            "--dtype", "f32", "-r", "1", "--warmup", "0", "-o", "json", "--out", out)
    dense = 2.0 * (d + d) * h * n * n
    runs = [(["--block-layout", "random:0.25", "--block-size", "16x16"], "-bs16x16r0.25",
             {"block_layout": "random:0.25", "block_q": 16, "block_k": 16},
             lambda f: 0.25 - 0.07 < f / dense < 0.25 + 0.07),
            (["--causal", "--block-layout", "local:1", "--block-size", "32x32"], "-bs32x32l1",
             {"block_layout": "local:1", "block_q": 32, "block_k": 32},
             lambda f: f == 2.0 * (d + d) * h * local_pairs(n, 32, 1, True)),
            (["--block-layout", "bigbird:1,1,2", "--block-size", "16x16"], "-bs16x16bb1_1_2",
             {"block_layout": "bigbird:1,1,2", "block_q": 16, "block_k": 16},
             lambda f: 2.0 * (d + d) * h * local_pairs(n, 16, 1, False) < f < dense),
            (["--causal", "--dilated", "32,64:1,2"], "-dil32_64r1_2",
             {"dilated_segments": [32, 64], "dilated_rates": [1, 2]},
             lambda f: f == 2.0 * (d + d) * dilated_pairs(h, n, [32, 64], [1, 2], True))]
    for extra, suffix, fields, flops_ok in runs:
        rc, _, err = run("bench", *base, *extra)
        recs = load(out)["records"]
        valid(load(out), f"bench {' '.join(extra)} JSON")
        r = recs[0] if recs else {"case": {}, "status": None, "flops": None}
        c = r["case"]
        expect(rc == 0 and len(recs) == 1 and r["status"] == "ok" and r["check"]["passed"]
               and c["name"].endswith(suffix) and all(c.get(k) == v for k, v in fields.items())
               and flops_ok(r["flops"]),
               f"bench {' '.join(extra)}: exit {rc}, {c.get('name')} {r['status']}, flops {r['flops']} "
               f"(dense {dense:.0f}) {err.strip()!r}")
    # every API whose kernel has the pattern runs it (lavapipe's scalar body, PoCL's tiled one, where present)
    rc, _, _ = run("bench", "--api", "all", *base[2:], "--block-layout", "local:0")
    recs = load(out)["records"]
    expect(rc == 0 and recs and all(r["case"]["name"].endswith("-bs64x64l0") for r in recs)
           and all(r["status"] == "ok" and r["check"]["passed"] for r in recs),
           "every device runs a block layout: " + "; ".join(f"{r['api']}:{r['status']}:{r['reason']}" for r in recs))
    bad = [["--block-layout", "random:0"], ["--block-layout", "random:1.5"], ["--block-layout", "local:-1"],
           ["--block-layout", "bigbird:1,2"], ["--block-layout", "dense:1"], ["--block-layout", "local"],
           ["--block-size", "32x32"], ["--block-layout", "local:1", "--block-size", "0x4"],
           ["--dilated", "32,64:1"], ["--dilated", "32"], ["--dilated", "32:1,x"],
           ["--dilated", "32,64,96:1,1,1", "--heads", "4", "--seq", "64"], ["--dilated", "32:0", "--seq", "64"],
           ["--dilated", "32:1", "--seq", "64", "--seq-kv", "80"], ["--ring", "2", "--dilated", "32:1"]]
    for args in bad:
        rc, stdout, stderr = run("bench", "--api", "cpu", *args)
        lines = stderr.strip().splitlines()
        expect(rc == 2 and len(lines) == 1 and lines[0].startswith("attnvk: ") and stdout == "",
               f"bench {' '.join(args)}: exit 2 with one line: {lines[:1]}")


# issue #20's dilated suites: (lengths with their names, tokens per case, heads, head dims, ladders (first segment,
# groups): segments first*2^g, rates 2^g); every length runs its dense case, then the ladders that fit N
DILATED_RANGES = {
    "dilated": ([(1024, "1k"), (2048, "2k"), (4096, "4k"), (8192, "8k"), (12288, "12k"), (16384, "16k")], 49152, 12,
                [64, 128], [(512, 1), (512, 2), (512, 3), (2048, 1), (2048, 2), (2048, 3)]),
    "dilated-medium": ([(32768, "32k"), (49152, "49k"), (65536, "64k"), (98304, "98k"), (131072, "128k")], 1, 12,
                       [64, 128], [(2048, 1), (2048, 2), (2048, 3), (2048, 6)]),
    "dilated-long": ([(262144, "256k"), (393216, "384k"), (524288, "512k"), (786432, "768k"), (1048576, "1m")], 1, 12,
                     [64, 128], [(2048, 1), (2048, 2), (2048, 3), (2048, 6)]),
    "dilated-quick": ([(256, "256"), (512, "512")], 512, 6, [32], [(64, 1), (64, 2), (64, 3)]),
}


def dilated_expected(suite):
    """[(name, batch, heads, n, d, segments, rates, dense partner's name or None)] in the suite's order."""
    lengths, tokens, h, dims, ladders = DILATED_RANGES[suite]
    cases = []
    for n, label in lengths:
        for d in dims:
            b = max(1, tokens // n)
            dense = f"{suite}-d{d}-n{label}-b{b}-h{h}-causal"
            cases.append((dense, b, h, n, d, None, None, None))
            for first, groups in ladders:
                segs, rates = [first << g for g in range(groups)], [1 << g for g in range(groups)]
                if segs[-1] > n or h % groups:
                    continue
                name = f"{dense}-dil{'_'.join(map(str, segs))}r{'_'.join(map(str, rates))}"
                cases.append((name, b, h, n, d, segs, rates, dense))
    return cases


def listed(rec):
    c = rec["case"]
    v = rec.get("vs_dense")
    return (c["name"], c["batch"], c["heads"], c["seq_kv"], c["head_dim"], c.get("dilated_segments"),
            c.get("dilated_rates"), v and v["dense_case"])


def test_dilated_suites():
    """--suite dilated, dilated-medium, dilated-long: the cases (names, segments, rates, batch; each dense case
    before its dilated ones), listed without running them (--max-memory 1 skips every case before any work)."""
    for suite in ("dilated", "dilated-medium", "dilated-long"):
        out = os.path.join(WORK, f"{suite}-list.json")
        rc, _, err = run("bench", "--suite", suite, "--api", "cpu", "--impl", "attnvk", "--max-memory", "1",
                         "-o", "json", "--out", out)
        doc = load(out)
        recs = doc["records"]
        got = [listed(r)[:7] for r in recs]
        want = [w[:7] for w in dilated_expected(suite)]
        firsts = [g for g in got if g[0] not in [w[0] for w in want]] + [w for w in want if w[0] not in [g[0] for g in got]]
        expect(rc == 0 and got == want and all(r["case"]["causal"] and r["case"]["dtype"] == "f16" for r in recs)
               and all(r["status"] == "skipped" and ("vs_dense" in r) == bool(r["case"].get("dilated_segments"))
                       for r in recs),
               f"--suite {suite}: {len(got)} cases as expected ({len(want)}), dense before dilated; "
               f"differences {firsts[:3]} {err.strip()!r}")
        valid(doc, f"--suite {suite} (skipped) JSON")
    rc, _, _ = run("bench", "--suite", "dilated", "--api", "cpu", "--max-seq", "2k", "--max-memory", "1")
    expect(rc == 0, "--suite dilated --max-seq 2k: the 1k and 2k cases")


def test_dilated_vs_dense():
    """--suite dilated-quick on the CPU: every dilated record carries vs_dense against its dense partner of the
    same run (speedup = dense_ms / median, memory_ratio = memory_bytes / dense's); attnvk report prints one
    crossover line per family and the page has the table; the crossover is the smallest N from which the
    sparse case stays faster (checked on doctored medians)."""
    out = os.path.join(WORK, "dilated-quick.json")
    rc, _, err = run("bench", "--suite", "dilated-quick", "--api", "cpu", "--impl", "attnvk", "-o", "json",
                     "--out", out)
    doc = load(out)
    valid(doc, "--suite dilated-quick JSON")
    recs = doc["records"]
    by_name = {r["case"]["name"]: r for r in recs}
    want = dilated_expected("dilated-quick")
    expect(rc == 0 and [listed(r) for r in recs] == [w for w in want]
           and all(r["status"] == "ok" and r["check"]["passed"] for r in recs),
           f"--suite dilated-quick: exit {rc}, the cases with their dense partners, all ok: "
           + "; ".join(f"{r['case']['name']}:{r['status']}" for r in recs if r["status"] != "ok") + err.strip())
    bad = []
    for r in recs:
        v = r.get("vs_dense")
        if v is None:
            continue
        dense = by_name.get(v["dense_case"], {})
        ms = r["stats"]["median_ms"]
        if not (abs(v["speedup"] - v["dense_ms"] / ms) <= 1e-9 * v["speedup"]
                and dense.get("stats", {}).get("median_ms") == v["dense_ms"]
                and v["dense_memory_bytes"] == dense.get("memory_bytes")
                and abs(v["memory_ratio"] - r["memory_bytes"] / v["dense_memory_bytes"]) < 1e-12
                and "vs_dense" not in dense):
            bad.append(r["case"]["name"])
    expect(not bad, f"vs_dense: speedup = dense_ms / median, dense_ms and memory its partner's: wrong in {bad}")
    rc, stdout, _ = run("bench", "--suite", "dilated-quick", "--api", "cpu", "--impl", "attnvk", "--max-seq", "256")
    lines = [l for l in stdout.splitlines() if l.startswith("vs dense dilated-quick-d32-n256-b2-h6-causal-dil")]
    expect(rc == 0 and len(lines) == 3 and all(", attnvk cpu:0: " in l and "x (" in l for l in lines),
           f"the table's tail: a vs-dense line per dilated record: {lines}")
    page = os.path.join(WORK, "dilated-quick.html")
    rc, stdout, err = run("report", out, "--out", page)
    lines = [l for l in stdout.splitlines() if l.startswith("sparse/dense crossover, ")]
    with open(page) as f:
        html = f.read()
    expect(rc == 0 and len(lines) == 3 and all(" attnvk cpu " in l and ("sparse faster from N=" in l or
                                                                        "sparse not faster up to N=512" in l)
                                               for l in lines)
           and "<h3>Sparse/dense crossover</h3>" in html,
           f"attnvk report: one crossover line per ladder and the page's table: {lines} {err.strip()!r}")
    # doctored medians: 64r1 slower at 256, faster at 512 (crossover 512); 64_128r1_2 faster at both (256 or
    # below); 64_128_256r1_2_4 faster at 256 only (none: not faster at the largest N)
    plan = {"dil64r1": (2.0, 0.5), "dil64_128r1_2": (0.5, 0.25), "dil64_128_256r1_2_4": (0.5, 2.0)}
    for r in recs:
        v, name = r.get("vs_dense"), r["case"]["name"]
        if v:
            ratio = plan[name.rsplit("-", 1)[1]][0 if r["case"]["seq_kv"] == 256 else 1]
            r["stats"]["median_ms"] = v["dense_ms"] * ratio
            v["speedup"] = 1 / ratio
    doctored = os.path.join(WORK, "dilated-doctored.json")
    with open(doctored, "w") as f:
        json.dump(doc, f)
    rc, stdout, _ = run("report", doctored, "--out", page)
    got = sorted(l.split(": ", 2)[2] for l in stdout.splitlines() if l.startswith("sparse/dense crossover, "))
    expect(rc == 0 and len(got) == 3
           and any(l.startswith("dilated 64:1 D=32 B*N=512 H=6/6 causal f16: sparse faster from N=512 (2.00x there,")
                   for l in got)
           and any(l.startswith("dilated 64,128:1,2 D=32 B*N=512 H=6/6 causal f16: sparse faster from N=256 or below "
                                "(2.00x there, 4.00x at 512)") for l in got)
           and any(l.startswith("dilated 64,128,256:1,2,4 D=32 B*N=512 H=6/6 causal f16: sparse not faster up to "
                                "N=512 (0.50x there)") for l in got),
           f"the crossover on doctored medians: {got}")


for test in [test_ring, test_sparse_patterns, test_dilated_suites, test_dilated_vs_dense]:
    try:
        test()
    except Exception as e:  # a crash in one test is a failure, the others still run
        expect(False, f"{test.__name__} raised {type(e).__name__}: {e}")

finish()
