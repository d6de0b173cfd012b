#!/usr/bin/env python3
"""`attnvk bench --pass bwd|fwd+bwd` end to end (issue #18): checked backward records on the cpu
API with FlashAttention's FLOP convention (2.5x the forward's, 3.5x for fwd+bwd), each gradient's
check in the JSON, forward/backward/total latency for fwd+bwd in the JSON, CSV and table, Vulkan's
(lavapipe) and OpenCL's (PoCL, attnvk's and CLBlast's) records checked or skipped as unsupported, decode
shapes skipped, and a bad --pass exiting 2 with one line.

usage: test_bench_backward.py ATTNVK SCHEMA WORKDIR"""
import csv
import io
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from bench_test_util import expect, finish, load_validator, run_attnvk, schema_valid  # noqa: E402

ATTNVK, SCHEMA_PATH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
# GQA and causal with Nq != Nk: dK and dV sum over a group's query heads
SMALL = ["--seq", "80", "--seq-kv", "96", "--heads", "4", "--kv-heads", "2", "--head-dim", "32", "--causal",
         "--iters", "3", "--warmup", "1"]
VALIDATOR = load_validator(SCHEMA_PATH)


def run(*args, timeout=240):
    return run_attnvk(ATTNVK, args, timeout, dict(os.environ))


def valid(doc, what):
    return schema_valid(VALIDATOR, doc, what)


def bench_json(name, *args):
    out = os.path.join(WORK, name + ".json")
    rc, stdout, stderr = run("bench", *args, "-o", "json", "--out", out)
    with open(out) as f:
        return rc, json.load(f), stderr


def record(doc, impl, api="cpu"):
    found = [r for r in doc["records"] if r["implementation"] == impl and r["api"] == api]
    return found[0] if found else None


def test_cpu_passes():
    rc, fwd, _ = bench_json("fwd", "--api", "cpu", "--dtype", "f32", *SMALL)
    base = record(fwd, "attnvk")["flops"]
    for pass_, factor, dtype in [("bwd", 2.5, "f32"), ("fwd+bwd", 3.5, "f32"), ("bwd", 2.5, "f16")]:
        what = f"--pass {pass_} {dtype}"
        rc, doc, stderr = bench_json(f"{pass_}-{dtype}".replace("+", "_"), "--api", "cpu", "--dtype", dtype,
                                     "--pass", pass_, *SMALL)
        valid(doc, what)
        r = record(doc, "attnvk")
        expect(rc == 0 and r and r["status"] == "ok", f"{what}: attnvk on cpu ok, exit {rc}: "
               f"{r and r['reason']} {stderr.strip()[-200:]}")
        if not r or r["status"] != "ok":
            continue
        expect(doc["settings"]["pass"] == pass_ and r["pass"] == pass_, f"{what}: pass in settings and record")
        expect(abs(r["flops"] - factor * base) <= 1e-9 * base, f"{what}: flops {r['flops']} = {factor} x {base}")
        g = r["grad_check"]
        tol = 1e-4 if dtype == "f32" else 1e-2
        grads = ["dq", "dk", "dv"] + (["o"] if pass_ == "fwd+bwd" else [])
        expect(all(k in g and g[k]["passed"] for k in grads) and ("o" in g) == (pass_ == "fwd+bwd"),
               f"{what}: grad_check has {grads}, each passed")
        expect(all(g[k]["tolerance"] == tol for k in ["dq", "dk", "dv"]), f"{what}: gradient tolerance {tol}")
        expect(r["check"] == g[g["worst"]] and all(g[k]["rows_checked"] > 0 for k in grads),
               f"{what}: check is the worst gradient's ({g['worst']}), rows counted")
        expect(r["tflops"] > 0 and r["gbytes_per_s"] > 0 and r["roofline"] is None, f"{what}: throughput, no roofline")
        k = r.get("backward_kernel") or {}
        expect(k.get("variant") == "bwd-flash-f32" and r["variant"] == "flash-f32",
               f"{what}: backward_kernel names the backward's kernel beside the forward's variant: {k}")
        if pass_ == "fwd+bwd":
            f, b, t = r["forward_stats"], r["backward_stats"], r["stats"]
            expect(f["median_ms"] > 0 and b["median_ms"] > 0 and t["median_ms"] > 0
                   and all(s >= 0 for s in r["samples_ms"]) and "std_ms" in f and "std_ms" in b,
                   f"{what}: forward, backward and total stats with their spread")
        else:
            expect("forward_stats" not in r, f"{what}: no forward_stats")
        o = record(doc, "openblas")
        expect(o is None or (o["status"] in ("skipped", "unavailable") and o["reason"]),
               f"{what}: openblas (no backward) skipped with a reason: {o and o['reason']}")


def test_text_formats():
    rc, out, _ = run("bench", "--api", "cpu", "--dtype", "f32", "--pass", "fwd+bwd", *SMALL)
    expect(rc == 0 and "pass fwd+bwd" in out and "fwd " in out and " + bwd " in out,
           "table: the run says its pass, a fwd + bwd line under the row")
    rc, out, _ = run("bench", "--api", "cpu", "--dtype", "f32", "--pass", "fwd+bwd", "-o", "csv", *SMALL)
    rows = list(csv.DictReader(io.StringIO(out)))
    ours = [r for r in rows if r["implementation"] == "attnvk"]
    expect(rc == 0 and ours and ours[0]["pass"] == "fwd+bwd" and float(ours[0]["forward_median_ms"]) > 0
           and float(ours[0]["backward_median_ms"]) > 0, "csv: pass, forward and backward medians")


def api_bench(api, pass_):
    """--pass pass_ on one API, validated; None (with a note) where the API has no device here."""
    rc, doc, stderr = bench_json(api, "--api", api, "--dtype", "f32", "--pass", pass_, *SMALL)
    if not doc["devices"]:
        print(f"note: no {api} device here; skipping its --pass {pass_} check")
        return None
    valid(doc, f"--pass {pass_} on {api}")
    return rc, doc, stderr


def test_vulkan_passes():
    got = api_bench("vulkan", "fwd+bwd")
    if got is None:
        return
    rc, doc, stderr = got
    r = record(doc, "attnvk", "vulkan")
    expect(rc == 0 and r and r["status"] == "ok", f"vulkan attnvk fwd+bwd ok, exit {rc}: {r and r['reason']} "
           f"{stderr.strip()[-200:]}")
    g = r["grad_check"] if r and r["status"] == "ok" else {}
    expect(all(k in g and g[k]["passed"] for k in ["dq", "dk", "dv", "o"]), "vulkan: grad_check dq, dk, dv, o passed")
    k = (r or {}).get("backward_kernel") or {}
    expect(k.get("variant", "").startswith("bwd-portable") and k.get("tile_bc", 0) > 0 and k.get("workgroup_size", 0) > 0,
           f"vulkan: backward_kernel says the body, its tiles and workgroup: {k}")


def test_opencl_records():
    got = api_bench("opencl", "bwd")
    if got is None:
        return
    rc, doc, _ = got
    for r in doc["records"]:
        if r["api"] == "opencl" and r["implementation"] == "attnvk":  # has one (opencl/flash_bwd.cl)
            expect(r["status"] == "ok" and r["check"] is not None and r["check"]["passed"],
                   f"opencl attnvk: checked ok: {r['status']} {r['reason']}")
            k = r.get("backward_kernel") or {}
            expect(k.get("variant", "").startswith("bwd-") and "qb=" in k.get("params", ""),
                   f"opencl attnvk: backward_kernel with its tiles: {k}")
        elif r["status"] == "ok":  # CLBlast's unfused backward where it runs (f32): checked
            expect(r["check"] is not None and r["check"]["passed"], f"{r['api']} {r['implementation']}: ok and checked")
        else:
            expect(r["status"] == "skipped" and r["reason"].startswith("unsupported: ") and r["check"] is None,
                   f"{r['api']} {r['implementation']}: skipped, unsupported: {r['reason']}")
    expect(rc == 0, f"ok and skipped records exit 0 (got {rc})")


def test_skips_and_usage():
    rc, doc, _ = bench_json("decode", "--api", "cpu", "--pass", "bwd", "--dtype", "f32", "--seq", "1",
                            "--seq-kv", "256", "--heads", "2", "--head-dim", "32", "--iters", "2")
    r = record(doc, "attnvk")
    expect(rc == 0 and r and r["status"] == "skipped" and "decode" in r["reason"], f"decode shape skipped: {r and r['reason']}")
    for args in [["--pass", "backward"], ["--pass"], ["--pass", "bwd", "--cold"]]:
        rc, stdout, stderr = run("bench", "--api", "cpu", *args)
        lines = stderr.strip().splitlines()
        expect(rc == 2 and len(lines) == 1 and lines[0].startswith("attnvk: ") and stdout == "",
               f"bench {' '.join(args)}: exit 2 with one line: {lines[:1]}")


for test in [test_cpu_passes, test_text_formats, test_vulkan_passes, test_opencl_records, test_skips_and_usage]:
    try:
        test()
    except Exception as e:  # a crash in one test is a failure, the others still run
        expect(False, f"{test.__name__} raised {type(e).__name__}: {e}")

finish()
