#!/usr/bin/env python3
"""The FP8 forward (issue #16) through `attnvk bench`, `attnvk check` and `attnvk compare`, end to end
on the cpu API (lavapipe and PoCL, where present, skip it naming the feature): records say dtype fp8
with O's dtype, check both errors (rel_l2 against the unquantized inputs, rel_l2_dequantized against
what the kernel read, the one the 5e-2 tolerance judges), validate against the schema, and the CSV,
the table and compare's accuracy verdict read the same numbers.

usage: test_bench_fp8.py ATTNVK SCHEMA WORKDIR"""
import csv
import io
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from bench_test_util import env_without_columns, expect, finish, load_validator, run_attnvk, schema_valid  # noqa: E402

ATTNVK, SCHEMA_PATH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
VALIDATOR = load_validator(SCHEMA_PATH)
FEATURE = "does not support fp8 queries (the FP8 forward)"
SEED = os.environ.get("ATTNVK_TEST_SEED", str(int.from_bytes(os.urandom(4), "little")))
print(f"test seed {SEED} (ATTNVK_TEST_SEED to replay)")


def run(*args, timeout=240):
    return run_attnvk(ATTNVK, args, timeout, env_without_columns())


def load(path):
    with open(path) as f:
        return json.load(f)


SHAPE = ("--seq", "130", "--heads", "4", "--kv-heads", "2", "--head-dim", "64", "--causal", "-r", "2", "--warmup", "0",
         "--seed", SEED)


def fp8_record_ok(r, o_dtype):
    """An ok FP8-forward record of the cpu's attnvk kernel: its labels and both errors."""
    c, k = r["case"], r["check"] or {}
    return (c["dtype"] == "fp8" and c.get("o_dtype") == o_dtype and c.get("q_format") == "fp8"
            and c["kv_format"] == "fp8" and c["name"].endswith("-fp8-qfp8") and r["status"] == "ok"
            and k.get("passed") is True and k.get("tolerance") == 0.05 and k.get("nonfinite") == 0
            # the CPU computes exactly on the decoded values: O's own rounding against what it read
            and 0 <= k.get("rel_l2_dequantized", 1) <= 5e-3
            # e4m3's rounding of Q, K and V against the unquantized inputs: a few percent, reported, not gated
            and 1e-2 < k.get("rel_l2", 0) < 8e-2 and r.get("quant_error") == k["rel_l2"]
            and r["flops"] == 4 * 1 * 4 * 130 * 130 * 64 / 2)


def test_records():
    """--dtype fp8 (f16 O) and --dtype bf16 --q-dtype fp8 --kv-dtype fp8 (bf16 O) on the cpu, plus
    every other API here: implementations without the feature skip, naming it."""
    for flags, o_dtype in ((("--dtype", "fp8"), "f16"),
                           (("--dtype", "bf16", "--q-dtype", "fp8", "--kv-dtype", "fp8"), "bf16")):
        out = os.path.join(WORK, f"fp8-{o_dtype}.json")
        rc, _, err = run("bench", "--api", "cpu,vulkan,opencl", *SHAPE, *flags, "-o", "json", "--out", out)
        doc = load(out)
        schema_valid(VALIDATOR, doc, f"bench {' '.join(flags)} JSON")
        recs = doc["records"]
        ours = [r for r in recs if r["api"] == "cpu" and r["implementation"] == "attnvk"]
        others = [r for r in recs if not (r["api"] == "cpu" and r["implementation"] == "attnvk")]
        expect(rc == 0 and len(ours) == 1 and fp8_record_ok(ours[0], o_dtype)
               and doc["settings"]["dtype"] == "fp8" and doc["settings"].get("o_dtype") == o_dtype,
               f"bench {' '.join(flags)}: exit {rc}, the cpu record: {ours[0]['case'] if ours else None} "
               f"check {ours[0]['check'] if ours else None}" + (f" {err.strip()!r}" if rc else ""))
        # (a device without bf16 says so first; a missing library is unavailable before any problem)
        expect(others and all(r["status"] == "unavailable" or (r["status"] == "skipped" and (
            FEATURE in r["reason"] or "no bf16 support" in r["reason"])) for r in others)
               and any(FEATURE in r["reason"] for r in others),
               f"bench {' '.join(flags)}: the rest skipped naming the feature: "
               + "; ".join(f"{r['api']} {r['implementation']}: {r['status']} {r['reason']}" for r in others))


def test_csv_and_table():
    """The CSV's dtype says fp8, o_dtype O's, rel_l2_dequantized the checked error; the table's CHECK
    gives the checked error, then the one against the inputs."""
    rc, out, _ = run("bench", "--api", "cpu", "--impl", "attnvk", *SHAPE, "--dtype", "fp8", "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    row = rows[0] if rows else {}
    expect(rc == 0 and len(rows) == 1 and row["dtype"] == "fp8" and row["o_dtype"] == "f16"
           and row["kv_format"] == "fp8" and float(row["rel_l2_dequantized"]) <= 5e-3
           and float(row["rel_l2"]) > 1e-2 and row["passed"] == "true",
           f"csv: exit {rc}, {row}")
    rc, out, _ = run("bench", "--api", "cpu", "--impl", "attnvk", *SHAPE, "--dtype", "fp8")
    lines = [l for l in out.splitlines() if l.startswith("attnvk ") and " cpu:0 " in l]
    expect(rc == 0 and "1 custom case, fp8 (O f16)" in out and len(lines) == 1 and " (inputs " in lines[0],
           f"table: exit {rc}: {lines}")


def test_check():
    """`attnvk check --api cpu --dtype bf16`: the FP8 forward's cases pass on attnvk's kernel and are
    skipped, naming the feature, on the OpenBLAS baseline."""
    rc, out, err = run("check", "--api", "cpu", "--dtype", "bf16", "--seed", SEED, timeout=600)
    lines = [l for l in out.splitlines() if " fp8-" in l]
    ours = [l for l in lines if " attnvk " in l]
    blas = [l for l in lines if " openblas " in l]
    expect(rc == 0 and len(ours) == 6 and all(l.startswith("ok ") and "fp8>bf16" in l and "rel_l2_dequantized" in l
                                              for l in ours)
           and len(blas) == 6 and all(l.startswith("skip") and FEATURE in l for l in blas),
           f"check: exit {rc}, fp8 lines {lines}" + (f" {err.strip()!r}" if rc else ""))


def test_compare():
    """compare judges the FP8 forward's accuracy on rel_l2_dequantized: a kernel error grown 20x is a
    regression although rel_l2 (vs the inputs, e4m3's rounding) barely moves."""
    base = load(os.path.join(WORK, "fp8-f16.json"))
    worse = json.loads(json.dumps(base))
    for r in worse["records"]:
        if r["status"] == "ok":
            r["check"]["rel_l2_dequantized"] *= 20
            r["check"]["rel_l2"] *= 1.01
    paths = [os.path.join(WORK, n) for n in ("base.json", "worse.json")]
    for p, d in zip(paths, (base, worse)):
        with open(p, "w") as f:
            json.dump(d, f)
    rc, out, _ = run("compare", *paths)
    expect(rc == 1 and "rel_l2" in out and "(20x)" in out, f"compare: exit {rc}: {out.strip()[-400:]!r}")
    rc, _, _ = run("compare", paths[0], paths[0])
    expect(rc == 0, f"compare against itself: exit {rc}")


for test in [test_records, test_csv_and_table, test_check, test_compare]:
    try:
        test()
    except Exception as e:  # a crash in one test is a failure, the others still run
        expect(False, f"{test.__name__} raised {type(e).__name__}: {e}")

finish()
