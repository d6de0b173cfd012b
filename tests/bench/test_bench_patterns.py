#!/usr/bin/env python3
"""`attnvk bench` over several devices and sparse patterns, end to end on the cpu API (and lavapipe,
PoCL where present): --ring G (issue #19) records with their ring object and summary lines, and
--block-layout / --dilated (issue #20) records with the pattern in the case's name and fields and
FLOPs of the visible pairs only; bad values exit 2 with one line.

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


for test in [test_ring, test_sparse_patterns]:
    try:
        test()
    except Exception as e:  # a crash in one test is a failure, the others still run
        expect(False, f"{test.__name__} raised {type(e).__name__}: {e}")

finish()
