#!/usr/bin/env python3
"""`attnvk bench --cold` end to end and `attnvk compare` on cold starts: a tiny case through
cpu, vulkan (lavapipe) and opencl (PoCL) with every record's cold_start checked (a fresh
process on empty caches costs more than one on the caches it left where compiling costs;
something is cached where something compiles; nothing is left in TMPDIR), the schema, the
cold-start table, bad option combinations (one line, exit 2), and compare on synthetic
results: a cold-start regression is flagged (exit 1), noise and small absolute changes are not.

usage: test_cold.py ATTNVK SCHEMA WORKDIR"""
import copy
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from bench_test_util import env_without_columns, expect, finish, load_validator, run_attnvk  # noqa: E402

ATTNVK, SCHEMA_PATH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
TMP = os.path.join(WORK, "tmp")  # the bench's TMPDIR: the starts' cache folders must not outlive it
os.makedirs(TMP)
TINY = ["--seq", "64", "--heads", "2", "--head-dim", "32", "--iters", "2", "--warmup", "0", "--warmup-time", "0"]


def run(*args, timeout=300):
    return run_attnvk(ATTNVK, args, timeout, env_without_columns(TMPDIR=TMP))


# ---- the bench: cpu, vulkan, opencl ----
out = os.path.join(WORK, "cold.json")
rc, stdout, stderr = run("bench", "--api", "cpu,vulkan,opencl", "--impl", "attnvk", *TINY, "--cold", "-o", "json",
                         "--out", out)
expect(rc == 0, f"bench --cold exits 0 (got {rc}: {stderr.strip()[-300:]})")
doc = json.load(open(out)) if os.path.exists(out) else {"records": []}
v = load_validator(SCHEMA_PATH)
if v:
    errors = sorted(v.iter_errors(doc), key=str)
    expect(not errors, "the results with cold_start follow the schema" + (f": {errors[0].message}" if errors else ""))
expect(json.loads(stdout) == doc, "-o json on stdout is the --out file, cold_start included")
ok = {r["api"]: r for r in doc["records"] if r["status"] == "ok"}
expect("cpu" in ok, f"the cpu record ran (apis ok: {sorted(ok)})")
for api, r in ok.items():
    c = r.get("cold_start")
    if not expect(c and c["cold"] and c["warm"] and c["runs"] == 1 and "error" not in c,
                  f"{api}: cold_start with a cold and a warm start ({c})"):
        continue
    for kind in ("cold", "warm"):
        t = c[kind]
        expect(all(isinstance(t[k], (int, float)) and t[k] >= 0 for k in
                   ("context_ms", "open_ms", "prepare_ms", "first_dispatch_ms", "first_result_ms")),
               f"{api} {kind}: every time is a number >= 0")
        expect(t["first_result_ms"] + 0.01 >= t["open_ms"] + t["prepare_ms"] + t["first_dispatch_ms"],
               f"{api} {kind}: first_result_ms ({t['first_result_ms']}) holds open, prepare and the dispatch")
    cold, warm = c["cold"], c["warm"]
    if api == "cpu":
        expect(c["cache_bytes"] == 0, f"cpu: nothing cached ({c['cache_bytes']} bytes)")
        continue
    # what compiling costs: OpenCL (PoCL) compiles in clBuildProgram, lavapipe at the first dispatch
    if api == "opencl":
        expect(cold["prepare_ms"] > warm["prepare_ms"],
               f"opencl: cold prepare {cold['prepare_ms']} ms > warm {warm['prepare_ms']} ms (program binary cached)")
    expect(cold["prepare_ms"] + cold["first_dispatch_ms"] > warm["prepare_ms"] + warm["first_dispatch_ms"],
           f"{api}: cold prepare + first dispatch ({cold['prepare_ms']} + {cold['first_dispatch_ms']} ms) > warm "
           f"({warm['prepare_ms']} + {warm['first_dispatch_ms']} ms)")
    expect(cold["first_result_ms"] > warm["first_result_ms"],
           f"{api}: cold first result {cold['first_result_ms']} ms > warm {warm['first_result_ms']} ms")
    parts = c.get("cache_parts", {})
    expect(c["cache_bytes"] > 0 and parts.get("attnvk", 0) > 0 and sum(parts.values()) == c["cache_bytes"],
           f"{api}: something cached, attnvk's own part included ({c['cache_bytes']} bytes: {parts})")
expect(not os.listdir(TMP), f"the starts' temporary cache folders are gone ({os.listdir(TMP)})")

rc, stdout, stderr = run("bench", "--api", "cpu", "--impl", "attnvk", *TINY, "--cold")
expect(rc == 0 and "cold start: a fresh process per start" in stdout and "EMPTY CACHES" in stdout and
       "custom-d32-n64-b1-h2" in stdout.split("cold start:")[-1] and
       max(len(line) for line in stdout.splitlines()) <= 120,
       "the table output ends with a cold-start table within 120 columns")
rc, stdout, stderr = run("bench", "--api", "cpu", "--impl", "attnvk", *TINY, "--cold", "-o", "jsonl")
recs = [json.loads(line) for line in stdout.splitlines() if line.strip()]
expect(rc == 0 and recs and all("cold_start" in r for r in recs if r["status"] == "ok"),
       "-o jsonl: each ok record has its cold_start")

for args, what in ((["--cold-runs", "2"], "--cold-runs without --cold"),
                   (["--cold", "-o", "csv"], "--cold with -o csv"),
                   (["--cold", "--cold-runs", "21"], "--cold-runs out of range")):
    rc, stdout, stderr = run("bench", "--api", "cpu", *TINY, *args)
    expect(rc == 2 and len(stderr.strip().splitlines()) == 1 and not stdout, f"{what}: one-line error, exit 2 "
           f"({rc}: {stderr.strip()})")

# ---- compare on synthetic results ----


def record(impl, api, cold_ms, warm_ms, cache=1000, median=1.0):
    r = {"implementation": impl, "api": api, "device_index": 0, "device_name": "dev " + api, "device_uuid": None,
         "group": "g", "driver_version": "1", "status": "ok", "reason": "",
         "case": {"name": "c1", "batch": 1, "heads": 2, "kv_heads": 2, "seq_q": 64, "seq_kv": 64, "head_dim": 32,
                  "causal": False, "dtype": "f16", "layout": "bhsd", "scale": 0.17677669529663687},
         "stats": {"min_ms": median, "median_ms": median, "mean_ms": median, "std_ms": 0.0, "p95_ms": None,
                   "p99_ms": None, "cv": 0.0},
         "flops": 1.0, "tflops": 1e-12, "speedup_vs_vendor": None, "vendor_reference": None,
         "check": {"rel_l2": 1e-4, "max_abs": 1e-4, "tolerance": 0.01, "rows_checked": 1, "nonfinite": 0,
                   "passed": True}}
    if cold_ms is not None or warm_ms is not None:
        start = lambda ms: None if ms is None else {"prepare_ms": ms / 2, "first_dispatch_ms": 1.0,
                                                    "first_result_ms": ms}
        r["cold_start"] = {"cold": start(cold_ms), "warm": start(warm_ms), "cache_bytes": cache, "runs": 1}
    return r


def results(*recs):
    return {"format_version": 1, "attnvk_version": "0", "git_commit": "x", "created": "2026-01-01T00:00:00Z",
            "records": list(recs)}


def compare(base, new, *args):
    paths = []
    for name, d in (("base.json", base), ("new.json", new)):
        paths.append(os.path.join(WORK, name))
        with open(paths[-1], "w") as f:
            json.dump(d, f)
    return run("compare", *paths, *args)


base = results(record("attnvk", "vulkan", 400.0, 30.0), record("attnvk", "opencl", 3000.0, 25.0),
               record("attnvk", "cpu", 10.0, 9.0, cache=0))
rc, stdout, _ = compare(base, base)
expect(rc == 0 and "cold start: 0 regressions in 3 records" in stdout, "compare: equal cold starts pass (exit 0)")

new = copy.deepcopy(base)
new["records"][1]["cold_start"]["cold"]["first_result_ms"] = 6000.0  # opencl cold start doubled
rc, stdout, _ = compare(base, new)
cold_rows = [line for line in stdout.split("cold start (")[-1].splitlines() if line.startswith("  REGRESSION ")]
expect(rc == 1 and len(cold_rows) == 1 and "opencl" in cold_rows[0] and "3000 -> 6000" in cold_rows[0] and
       "cold start: 1 regression in 3 records" in stdout,
       "compare: a doubled cold start is a cold-start regression (exit 1, named in the table)")
rc, stdout, _ = compare(base, new, "-o", "json")
j = json.loads(stdout)
rows = {c["api"]: c for c in j["cases"]}
expect(rc == 1 and j["failed"] and j["cold_start_regressions"] == 1 and j["regressions"] == 0 and
       rows["opencl"]["cold_start"]["verdict"] == "REGRESSION" and rows["opencl"]["cold_start"]["cold_ratio"] == 2 and
       rows["vulkan"]["cold_start"]["verdict"] == "same",
       "compare -o json: cold_start_regressions 1, the row's cold_start verdict and ratio")

new = copy.deepcopy(base)
new["records"][0]["cold_start"]["warm"]["first_result_ms"] = 60.0  # vulkan warm start doubled, +30 ms
new["records"][2]["cold_start"]["cold"]["first_result_ms"] = 25.0  # cpu: 2.5x but only +15 ms
rc, stdout, _ = compare(base, new)
expect(rc == 1 and "cold start: 1 regression in 3 records" in stdout,
       "compare: a warm start grown 2x and 30 ms regresses; 2.5x but 15 ms (under the 20 ms floor) does not")

new = copy.deepcopy(base)
new["records"][1]["cold_start"]["cold"]["first_result_ms"] = 3600.0  # +20%: under the 25% cold-start threshold
rc, stdout, _ = compare(base, new)
expect(rc == 0, "compare: a cold start 20% slower stays within the cold-start threshold (max(5%, 25%))")
rc, stdout, _ = compare(base, new, "--threshold", "10")
expect(rc == 0, "compare --threshold 10: the cold-start threshold stays 25%")

new = copy.deepcopy(base)
new["records"][0]["cold_start"]["warm"] = None
new["records"][0]["cold_start"]["error"] = "warm start: killed by signal 11"
rc, stdout, _ = compare(base, new)
expect(rc == 1 and "no result" in stdout, "compare: a start that no longer reaches a result is a regression")

new = copy.deepcopy(base)
for r in new["records"]:
    r["cold_start"]["cold"]["first_result_ms"] /= 3
rc, stdout, _ = compare(base, new)
expect(rc == 0 and "improvement" in stdout, "compare: faster cold starts are improvements (exit 0)")

plain = results(*(dict((k, v) for k, v in r.items() if k != "cold_start") for r in base["records"]))
rc, stdout, _ = compare(plain, new)
expect(rc == 0 and "cold start" not in stdout, "compare: a base without cold_start compares on speed alone")

bad = copy.deepcopy(base)
bad["records"][1]["cold_start"]["cold"]["first_result_ms"] = "slow"
rc, stdout, stderr = compare(base, bad)
expect(rc == 2 and len(stderr.strip().splitlines()) == 1 and "records[1].cold_start.cold" in stderr,
       f"compare: a malformed cold_start is bad input, one line naming it, exit 2 ({stderr.strip()})")

finish()
