#!/usr/bin/env python3
"""`attnvk bench` and `attnvk check` end to end: the quick suite's JSON against the
documented schema, a deliberately wrong kernel caught as `fail` (exit 1), impossible
cases `skipped`/`unavailable` with reasons (at once, before any host work), exit codes
0/1/2, every format (table, md, csv, jsonl, json) on stdout and in --out alike, rows
printed as records finish, tables within 120/80 columns, the progress line on a
terminal, a run stopped by SIGINT, and a killed run that leaves a valid results file.

usage: test_bench.py ATTNVK SCHEMA WORKDIR"""
import csv
import fcntl
import io
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from bench_test_util import env_without_columns, expect, finish, load_validator, run_attnvk  # noqa: E402

ATTNVK, SCHEMA_PATH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
# a small custom case on the cpu API: exact, deterministic, fast
TINY = ["--api", "cpu", "--seq", "96", "--heads", "2", "--head-dim", "32", "--iters", "2", "--warmup", "0"]


def run(*args, timeout=240, env=None):
    return run_attnvk(ATTNVK, args, timeout, dict(os.environ, **(env or {})))


def run_plain(*args, timeout=240, columns=None):
    extra = {} if columns is None else {"COLUMNS": str(columns)}
    return run_attnvk(ATTNVK, args, timeout, env_without_columns(**extra))


def widest(text):
    return max((len(line) for line in text.splitlines()), default=0)


VALIDATOR = load_validator(SCHEMA_PATH)


def schema_errors(doc):
    if VALIDATOR is None:
        return ["no validator"]
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def valid(doc, what):
    errors = schema_errors(doc)
    for e in errors[:5]:
        print(f"     schema: {e}")
    return expect(not errors, f"{what}: validates against {os.path.basename(SCHEMA_PATH)}")


def load(path):
    with open(path) as f:
        return json.load(f)


def test_quick_suite():
    out = os.path.join(WORK, "quick.json")
    rc, stdout, stderr = run("bench", "--suite", "quick", "-o", "json", "--out", out, "--min-time", "0.02")
    doc = load(out)
    valid(doc, "quick suite JSON")
    recs = doc["records"]
    fails = [r for r in recs if r["status"] == "fail"]
    for r in fails:
        print(f"     fail: {r['api']} {r['implementation']} {r['case']['name']}: {r['reason']}")
    expect(rc == (1 if fails else 0), f"quick suite exit status {rc} matches {len(fails)} failed records")
    expect(json.loads(stdout) == doc, "quick suite: -o json prints the same document on stdout as in --out")
    cases = {r["case"]["name"]: r["case"]["dtype"] for r in recs}
    expect(len(cases) == 6 and sorted(cases.values()) == ["f16"] * 5 + ["f32"], f"quick suite: 5 f16 cases and 1 f32")
    # a CPU-only machine compares with a vendor kernel too: CLBlast (f32 only) on PoCL
    clblast_ok = [r for r in recs if r["implementation"] == "clblast" and r["status"] == "ok"]
    compared = [r for r in recs if r["implementation"] == "attnvk" and r["speedup_vs_vendor"] is not None]
    if any(r["implementation"] == "clblast" and "cannot load" not in r["reason"] for r in recs):
        expect(clblast_ok and compared and all(r["case"]["dtype"] == "f32" for r in clblast_ok),
               "quick suite: the f32 case compares attnvk with CLBlast: "
               + ", ".join(f"{r['api']} {r['speedup_vs_vendor']:.2f}x" for r in compared))
    else:
        print("     note: no CLBlast here: the quick suite's vendor comparison is not checked")
    # the cpu API: attnvk's own f32 flash kernel on every case, and the unfused OpenBLAS baseline
    # (f32 only: it skips the f16 cases, saying why); the float64 reference is the oracle, no record's label
    cpu = [r for r in recs if r["api"] == "cpu" and r["implementation"] == "attnvk"]
    expect(len(cpu) == len(cases) and {r["case"]["name"] for r in cpu} == set(cases)
           and all(r["status"] == "ok" and r["check"]["passed"] and r["variant"] == "flash-f32" and r["fused"]
                   for r in cpu),
           "cpu attnvk (flash-f32) runs every quick case and passes its check")
    blas = [r for r in recs if r["api"] == "cpu" and r["implementation"] == "openblas"]
    expect(len(blas) == len(cases) and {r["case"]["name"] for r in blas} == set(cases)
           and all(not r["fused"] for r in blas)
           and all(r["status"] == "ok" and r["check"]["passed"] and r["variant"] == "sgemm"
                   for r in blas if r["case"]["dtype"] == "f32")
           and all(r["status"] == "skipped" and "f32" in r["reason"] and r["stats"] is None
                   for r in blas if r["case"]["dtype"] != "f32"),
           "cpu openblas (sgemm) runs the f32 case and passes its check, skips the f16 cases with a reason: "
           + ", ".join(sorted({f"{r['case']['dtype']}:{r['status']}" for r in blas})))
    expect({r["implementation"] for r in recs if r["api"] == "cpu"} == {"attnvk", "openblas"}
           and all(r["implementation"] != "reference" and r["vendor_reference"] != "reference" for r in recs),
           "the cpu API's records are 'attnvk' and 'openblas'; no record says 'reference'")
    ok = [r for r in recs if r["status"] == "ok"]
    expect(all(r["tflops"] > 0 and r["stats"]["median_ms"] > 0 and len(r["samples_ms"]) >= 3 for r in ok),
           "ok records carry samples, stats and TFLOP/s")
    devices = doc["devices"]
    expect(all(0 <= r["device_index"] < len(devices) for r in recs), "device_index points into devices")
    expect(doc["settings"]["suite"] == "quick" and doc["format_version"] == 1, "settings and format_version")
    print(f"     quick suite: {len(recs)} records on {len(devices)} device(s): "
          + ", ".join(sorted({f"{r['api']}:{r['implementation']}:{r['status']}" for r in recs})))


def test_wrong_kernel():
    out = os.path.join(WORK, "wrong.json")
    rc, stdout, _ = run("bench", *TINY, "--test-wrong-kernel", "-o", "json", "--out", out)
    expect(rc == 1, f"a deliberately wrong kernel exits 1 (got {rc})")
    doc = load(out)
    valid(doc, "wrong-kernel JSON")
    # the cpu API's own kernel (attnvk flash-f32); its OpenBLAS baseline skips this f16 case
    r = next((r for r in doc["records"] if r["implementation"] == "attnvk"), None)
    expect(r is not None and r["status"] == "fail" and not r["check"]["passed"]
           and r["check"]["rel_l2"] > r["check"]["tolerance"],
           "the wrong kernel is caught as fail by the check")
    expect(r is not None and r["tflops"] is None and "wrong result" in r["reason"],
           "a failed record's time is not a result")
    expect(all(r["status"] != "fail" for r in doc["records"] if r["implementation"] != "attnvk"),
           "the wrong kernel fails attnvk's record only: "
           + ", ".join(f"{r['implementation']}:{r['status']}" for r in doc["records"]))
    expect(doc["settings"]["test_wrong_kernel"] is True, "the results file says the wrong kernel was on")
    # every compiled-in API's kernel honours the flag (the cpu API's flash-f32 too); vendor baselines
    # (OpenBLAS on the cpu API) run normally
    out = os.path.join(WORK, "wrong_all.json")
    rc, _, _ = run("bench", "--api", "all", "--seq", "96", "--heads", "2", "--head-dim", "32", "--dtype", "f32",
                   "--iters", "2", "--warmup", "0", "--test-wrong-kernel", "-o", "json", "--out", out)
    recs = load(out)["records"]
    ours = [r for r in recs if r["implementation"] == "attnvk" and r["status"] != "skipped"]
    vendor = [r for r in recs if r["implementation"] != "attnvk"]
    status = {(r["api"], r["implementation"]): r["status"] for r in recs}
    expect(rc == 1 and ours and all(r["status"] == "fail" for r in ours)
           and all(r["status"] != "fail" for r in vendor)
           and status.get(("cpu", "attnvk")) == "fail" and status.get(("cpu", "openblas")) == "ok",
           "wrong kernel caught on every API: " + ", ".join(f"{r['api']}:{r['implementation']}:{r['status']}"
                                                            for r in recs))
    # check: every line of attnvk's kernel fails; the OpenBLAS baseline ignores the flag and passes
    rc, stdout, _ = run("check", "--api", "cpu", "--dtype", "f32", "--test-wrong-kernel")
    lines = stdout.strip().splitlines()
    last = lines[-1]
    case_lines = [line.split() for line in lines if re.match(r"(ok|FAIL|skip) +cpu:0 ", line)]
    ours = [f[0] for f in case_lines if f[2] == "attnvk"]
    blas = [f[0] for f in case_lines if f[2] == "openblas"]
    expect(rc == 1 and ours and all(t == "FAIL" for t in ours) and blas and all(t == "ok" for t in blas)
           and len(ours) + len(blas) == len(case_lines)
           and last == f"{len(blas)} passed, {len(ours)} failed, 0 skipped",
           f"check catches the wrong kernel: attnvk {len(ours)} lines {sorted(set(ours))}, openblas {len(blas)} "
           f"lines {sorted(set(blas))}: '{last}', exit {rc}")


def test_skipped_and_unavailable():
    out = os.path.join(WORK, "skip.json")
    rc, _, _ = run("bench", "--api", "cpu", "--seq", "2k", "--heads", "4", "--head-dim", "64",
                   "--max-memory", "1M", "--impl", "attnvk,cudnn", "-o", "json", "--out", out)
    expect(rc == 0, f"skipped/unavailable cases alone exit 0 (got {rc})")
    doc = load(out)
    valid(doc, "skipped/unavailable JSON")
    by_impl = {r["implementation"]: r for r in doc["records"]}
    a, n = by_impl.get("attnvk"), by_impl.get("cudnn")
    expect(a is not None and a["status"] == "skipped" and "memory" in a["reason"] and a["stats"] is None,
           f"a case too large for the device memory is skipped: {a and a['reason']}")
    expect(n is not None and n["status"] == "unavailable" and "cudnn" in n["reason"],
           f"an implementation the device lacks is unavailable: {n and n['reason']}")


def test_too_large_skips_at_once():
    """A case far too large for the device is skipped before any host input or reference is
    built (it used to take a minute and gigabytes of host memory just to end `skipped`)."""
    out = os.path.join(WORK, "too_large.json")
    start = time.time()
    try:
        rc, _, stderr = run("bench", "--api", "all", "--seq-kv", "16M", "--heads", "1", "--head-dim", "32",
                            "--max-memory", "64M", "-o", "json", "--out", out, timeout=20)
    except subprocess.TimeoutExpired:
        expect(False, "too_large_skips_at_once: a case over --max-memory ends within 20 s")
        return
    elapsed = time.time() - start
    recs = load(out)["records"]
    expect(rc == 0 and recs and all(r["status"] in ("skipped", "unavailable") for r in recs)
           and all("--max-memory allows 64.0 MiB" in r["reason"] for r in recs if r["status"] == "skipped"),
           f"too_large_skips_at_once: every record skipped for memory, exit {rc}")
    expect(elapsed < 10, f"too_large_skips_at_once: over --max-memory, skipped in {elapsed:.1f} s (< 10 s)")
    devices = json.loads(run("devices", "--json")[1])["devices"]
    if any(d["api"] == "vulkan" for d in devices):
        # within the device's memory but over its largest buffer (Vulkan's maxStorageBufferRange):
        # found at kernel prepare, still before the inputs
        start = time.time()
        rc, _, _ = run("bench", "--api", "vulkan", "--seq-kv", "2M", "--heads", "1", "--head-dim", "128",
                       "-o", "json", "--out", out, timeout=60)
        elapsed = time.time() - start
        r = load(out)["records"][0]
        expect(rc == 0 and r["status"] == "skipped" and "maxStorageBufferRange" in r["reason"] and elapsed < 5,
               f"too_large_skips_at_once: over a buffer limit, skipped in {elapsed:.1f} s: {r['reason']}")


def test_variance():
    """-r N is a fixed repetition count; p95/p99 are null (JSON) or empty (CSV) below 20 samples."""
    # f32: the cpu API's own kernel (attnvk) and its OpenBLAS baseline both run
    shape = ["--api", "cpu", "--seq", "64", "--heads", "2", "--head-dim", "32", "--warmup", "0", "--dtype", "f32"]
    out = os.path.join(WORK, "r5.json")
    rc, _, _ = run("bench", *shape, "-r", "5", "-o", "json", "--out", out)
    doc = load(out)
    recs = doc["records"]
    expect(rc == 0 and sorted(r["implementation"] for r in recs) == ["attnvk", "openblas"]
           and all(r["status"] == "ok" and len(r["samples_ms"]) == 5 for r in recs) and doc["settings"]["iters"] == 5,
           f"variance: -r 5 runs exactly 5 repetitions of attnvk and of openblas (exit {rc})")
    expect(recs and all(r["stats"]["p95_ms"] is None and r["stats"]["p99_ms"] is None and r["stats"]["std_ms"] >= 0
                        for r in recs),
           "variance: p95/p99 are null from 5 samples, std is a number")
    valid(doc, "variance -r 5 JSON")
    rc, _, _ = run("bench", *shape, "-r", "25", "-o", "json", "--out", out)
    sts = [r["stats"] for r in load(out)["records"]]
    expect(rc == 0 and len(sts) == 2
           and all(st["p95_ms"] >= st["median_ms"] and st["p99_ms"] >= st["p95_ms"] for st in sts),
           "variance: p95/p99 are numbers from 25 samples")
    rc, stdout, _ = run("bench", *shape, "-r", "5", "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(stdout)))
    expect(rc == 0 and len(rows) == 2
           and all(row["samples"] == "5" and row["p95_ms"] == "" and row["p99_ms"] == ""
                   and float(row["std_ms"]) >= 0 for row in rows),
           "variance: CSV leaves p95/p99 empty from 5 samples")
    rc, _, stderr = run("bench", *shape, "-r", "3", "--min-time", "1")
    expect(rc == 2 and "-r" in stderr, f"variance: -r with --min-time is refused: {stderr.strip()}")


def test_exit_codes():
    bad = [["--seq", "0"], ["--tile", "64"], ["-o", "xml"], ["--suite", "nope"], ["--suite", "quick", "--seq", "64"],
           ["--iters", "3", "--min-time", "1"], ["--bogus"], ["--api", "metal"], ["--dtype", "f8"],
           ["--heads", "6", "--kv-heads", "4"], ["--seq"], ["--out", os.path.join(WORK, "no", "such", "dir.json")],
           ["--launches", "0"], ["--launches", "1001"], ["--launches", "many"], ["--warmup-time", "-1"],
           ["--warmup-time", "61"]]
    for args in bad:
        rc, stdout, stderr = run("bench", *args)
        lines = stderr.strip().splitlines()
        expect(rc == 2 and len(lines) == 1 and lines[0].startswith("attnvk: ") and stdout == "",
               f"bench {' '.join(args)}: exit 2 with one line: {lines[:1]}")
    rc, _, stderr = run("check", "--dtype", "f64")
    expect(rc == 2 and len(stderr.strip().splitlines()) == 1, "check --dtype f64: exit 2")
    rc, stdout, _ = run("bench", "--help")
    expect(rc == 0 and "fa-grid" in stdout and "quick" in stdout, "bench --help lists the suites, exit 0")
    rc, _, _ = run("bench", *TINY)
    expect(rc == 0, f"a passing run exits 0 (got {rc})")
    rc, stdout, _ = run("check", "--api", "cpu", "--dtype", "f16")
    last = stdout.strip().splitlines()[-1]
    # attnvk's kernel passes every case; the OpenBLAS baseline (f32 only) skips them, saying why
    # (the FP8 forward's cases: that it lacks fp8 queries, the first reason the core finds)
    case_lines = [line for line in stdout.splitlines() if re.match(r"(ok|FAIL|skip) +cpu:0 ", line)]
    expect(rc == 0 and re.fullmatch(r"[1-9]\d* passed, 0 failed, \d+ skipped", last) is not None
           and all(line.startswith("ok ") for line in case_lines if line.split()[2] == "attnvk")
           and all(line.startswith("skip ") and ("f32 only" in line or " fp8-" in line and "fp8 queries" in line)
                   for line in case_lines if line.split()[2] == "openblas")
           and {line.split()[2] for line in case_lines} == {"attnvk", "openblas"},
           f"check --api cpu passes: '{last}'")


def test_csv_md():
    # f32: 2 cases x (attnvk, the OpenBLAS baseline), every record runs
    two = ["--api", "cpu", "--seq", "64,128", "--heads", "2", "--head-dim", "32", "--iters", "2", "--warmup", "0",
           "--dtype", "f32"]
    rc, stdout, _ = run("bench", *two, "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(stdout)))
    expect(rc == 0 and len(rows) == 4 and all(r["status"] == "ok" for r in rows)
           and sorted((r["implementation"], r["variant"]) for r in rows)
           == [("attnvk", "flash-f32")] * 2 + [("openblas", "sgemm")] * 2, "CSV: one row per record")
    numeric = ["median_ms", "tflops", "rel_l2", "seq_q", "tolerance"]
    expect(rows and all(float(r[k]) >= 0 for r in rows for k in numeric), "CSV: numeric columns parse")
    expect({r["case"] for r in rows} == {"custom-d32-n64-b1-h2", "custom-d32-n128-b1-h2"}, "CSV: case names")
    rc, stdout, _ = run("bench", *two, "-o", "md")
    lines = [line for line in stdout.splitlines() if line.startswith("|")]
    cells = [len(re.split(r"(?<!\\)\|", line)) for line in lines]
    expect(rc == 0 and len(lines) == 6 and all(l.startswith("|") and l.endswith("|") for l in lines)
           and len(set(cells)) == 1 and re.fullmatch(r"\|(-+:?\|)+", lines[1].replace("---:", "---")) is not None,
           "Markdown: header, separator and 4 rows with equal cell counts")
    expect(all(re.search(r"\| [\d.]+ ± [\d.]+ \|", line) for line in lines[2:]), "Markdown: median ± std")
    rc, stdout, _ = run("bench", "--api", "cpu", "--seq", "64", "--heads", "2", "--head-dim", "32", "-r", "2",
                        "--warmup", "0", "--max-memory", "1K", "--impl", "attnvk,cudnn", "-o", "md")
    notes = re.findall(r"^\[\^(\d+)\]: (.+)$", stdout, re.M)
    rows = [line for line in stdout.splitlines() if line.startswith("| ") and "[^" in line]
    expect(rc == 0 and len(rows) == 2 and len(notes) == 2 and widest("\n".join(rows)) <= 120
           and any("--max-memory" in n for _, n in notes) and any("cudnn" in n for _, n in notes),
           "Markdown: reasons of rows that did not run are footnotes, the rows stay narrow")



def test_format_everywhere():
    """-o is the format of stdout and of --out alike; jsonl is one record per line."""
    # f32: 2 cases x (attnvk, the OpenBLAS baseline), every record runs
    two = ["--api", "cpu", "--seq", "64,96", "--heads", "2", "--head-dim", "32", "-r", "2", "--warmup", "0",
           "--dtype", "f32"]
    for fmt in ["table", "md", "csv", "jsonl", "json"]:
        out = os.path.join(WORK, f"everywhere.{fmt}")
        rc, stdout, _ = run("bench", *two, "-o", fmt, "--out", out)
        with open(out) as f:
            text = f.read()
        expect(rc == 0 and stdout == text, f"format_everywhere: -o {fmt} --out: stdout and the file are the same text")
    lines = text.splitlines()
    rc, stdout, _ = run("bench", *two, "-o", "jsonl")
    recs = [json.loads(line) for line in stdout.splitlines()]
    expect(rc == 0 and len(recs) == 4 and all(r["stats"] for r in recs)
           and [r["case"]["name"] for r in recs] == ["custom-d32-n64-b1-h2"] * 2 + ["custom-d32-n96-b1-h2"] * 2
           and all(sorted(r["implementation"] for r in recs[i:i + 2]) == ["attnvk", "openblas"] for i in (0, 2)),
           "format_everywhere: jsonl holds one JSON record per line")
    doc = json.loads(text)
    expect(len(lines) > 10 and len(doc["records"]) == 4
           and sorted(r["implementation"] for r in doc["records"]) == ["attnvk", "attnvk", "openblas", "openblas"],
           "format_everywhere: json is one document")
    rc, stdout, stderr = run("bench", *two, "-o", "csv", "--out", os.path.join(WORK, "x.csv"))
    expect(rc == 0 and stdout.startswith("implementation,"), "format_everywhere: -o csv --out prints CSV, not a table")


def first_row_before_exit(fmt, row_pattern):
    """Starts a run of 2 timed records of the cpu API's slow float64 variant (reference-f64, 25 fixed
    repetitions each, about 0.3 s and 0.5 s: a slower machine only makes them longer; the OpenBLAS
    baseline's f16 records are skipped at once), reads stdout until the first timed record's row;
    returns (the process was still running then, the row)."""
    p = subprocess.Popen([ATTNVK, "bench", "--api", "cpu", "--seq", "384,512", "--heads", "2", "--head-dim", "32",
                          "--variant", "reference-f64", "-r", "25", "--warmup", "0", "-o", fmt], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env_without_columns())
    row, running = None, False
    for line in p.stdout:
        if re.match(row_pattern, line):
            row, running = line, p.poll() is None
            break
    rest, stderr = p.communicate(timeout=60)
    return running and p.returncode == 0 and "ETA" not in stderr, row


def test_rows_as_they_finish():
    """Without a terminal, every streaming format prints each row when its record finishes."""
    for fmt, pattern in [("table", r"attnvk +cpu:0 "), ("md", r"\| attnvk \| cpu:0 \|"), ("csv", "attnvk,"),
                         ("jsonl", r'\{"implementation":"attnvk"')]:
        ok, row = first_row_before_exit(fmt, pattern)
        expect(ok, f"rows_as_they_finish: -o {fmt}: the first row is out while the run goes on: {row and row[:60]!r}")


def test_table_widths():
    """Tables fit 120 columns, 80 with --compact or a narrower COLUMNS, for every suite."""
    suites = ["quick", "production", "long", "decode", "models", "fa-grid"]
    for suite in suites:
        # --max-memory 1K: every record is decided at once, with the longest lines (wrapped reasons)
        base = ["bench", "--suite", suite, "--max-memory", "1K"]
        rc, wide, _ = run_plain(*base)
        rc2, compact, _ = run_plain(*base, "--compact")
        rc3, narrow, _ = run_plain(*base, columns=100)
        rc4, md, _ = run_plain(*base, "-o", "md")
        md_rows = [line for line in md.splitlines() if line.startswith("|")]
        n = len(json.loads(run_plain(*base, "-o", "json")[1])["records"])
        expect(rc == rc2 == rc3 == rc4 == 0 and f"{n} records:" in wide and f"{n} records:" in compact
               and widest(wide) <= 120 and widest(compact) <= 80 and widest(narrow) <= 80
               and widest("\n".join(md_rows)) <= 120 and len(md_rows) == n + 2,
               f"table_widths: suite {suite}, {n} records: {widest(wide)} columns, --compact {widest(compact)}, "
               f"COLUMNS=100 {widest(narrow)}, md rows {widest(chr(10).join(md_rows))}")
    # rows that ran, with the quick suite's longest case name
    rc, wide, _ = run_plain("bench", "--suite", "quick", "-r", "2", "--warmup", "0")
    rc2, compact, _ = run_plain("bench", "--suite", "quick", "-r", "2", "--warmup", "0", "--compact")
    ok_rows = [line for line in wide.splitlines() if re.search(r" ok \d", line)]
    expect(rc == rc2 == 0 and len(ok_rows) >= 6 and widest(wide) <= 120 and widest(compact) <= 80
           and "quick-d32-nq64-nk256-b2-h2-kv1-causal" in wide,
           f"table_widths: the quick suite's rows that ran: {widest(wide)} columns, --compact {widest(compact)}")
    rc, stdout, _ = run_plain("bench", "--help")
    expect(rc == 0 and widest(stdout) <= 120, f"table_widths: bench --help fits 120 columns ({widest(stdout)})")


def test_devices_layout():
    """`attnvk devices` fits 120 columns (80 with --compact or COLUMNS=80) and cuts no field."""
    devices = json.loads(run("devices", "--json")[1])["devices"]
    for args, columns, limit in [([], None, 120), (["--compact"], None, 80), ([], 80, 80)]:
        rc, text, _ = run_plain("devices", *args, columns=columns)
        flat = " ".join(text.split())
        fields = [str(d[k]) for d in devices for k in ("name", "driver_version", "api_version", "default_variant")]
        fields += [d["uuid"] for d in devices if d["uuid"]]
        missing = [f for f in fields if " ".join(f.split()) not in flat]
        expect(rc == 0 and widest(text) <= limit and not missing,
               f"devices_layout: {' '.join(args) or 'default'}{' COLUMNS=80' if columns else ''}: {len(devices)} "
               f"devices in {widest(text)} columns (<= {limit}), every field whole (missing: {missing[:2]})")


def test_cpu_labels_and_units():
    """The cpu API's rows say 'attnvk' (its flash-f32 kernel) and 'openblas' (the vendor baseline, sgemm) in
    every format, 'reference' nowhere; slow devices read in GFLOP/s, not 0.00x TFLOP/s."""
    one = ["--api", "cpu", "--seq", "64", "--heads", "2", "--head-dim", "32", "-r", "3", "--warmup", "0",
           "--dtype", "f32"]
    rc, table, _ = run_plain("bench", *one)
    rows = {m.group(1): line for line in table.splitlines() for m in [re.match(r"(\w+) +cpu:\d", line)] if m}
    for impl in ("attnvk", "openblas"):
        row = rows.get(impl, "")
        m = re.search(r" ([\d.]+) ([kMGT])FLOP/s ", row)
        expect(rc == 0 and " cpu:0 " in row and m is not None and float(m.group(1)) >= 1 and m.group(2) != "T"
               and re.search(r" ok [\d.e-]+$", row) is not None,
               f"cpu_labels_and_units: table row {row.strip()!r}")
        expect(re.search(r" [\d.]+ \xb1 [\d.]+ ", row) is not None,
               f"cpu_labels_and_units: the {impl} row shows median \xb1 std")
    expect(sorted(rows) == ["attnvk", "openblas"], f"cpu_labels_and_units: the table's rows are {sorted(rows)}")
    rc, text, _ = run_plain("bench", *one, "-o", "md")
    md_rows = [line for line in text.splitlines() if line.startswith("| ") and " cpu:0 " in line]
    expect(rc == 0 and len(md_rows) == 2 and any(line.startswith("| attnvk | cpu:0 |") for line in md_rows)
           and any(line.startswith("| openblas | cpu:0 |") for line in md_rows)
           and not any(re.search(r"\breference\b", line) for line in md_rows),
           "cpu_labels_and_units: -o md labels the cpu rows 'attnvk' and 'openblas'")
    rc, text, _ = run_plain("bench", *one, "-o", "csv")
    csv_rows = list(csv.DictReader(io.StringIO(text)))
    expect(rc == 0 and sorted((r["implementation"], r["variant"], r["fused"]) for r in csv_rows)
           == [("attnvk", "flash-f32", "1"), ("openblas", "sgemm", "0")]
           and not any(v == "reference" for r in csv_rows for v in r.values()),
           "cpu_labels_and_units: -o csv labels the cpu rows 'attnvk' (flash-f32) and 'openblas' (sgemm)")
    rc, text, _ = run_plain("bench", *one, "-o", "jsonl")
    recs = [json.loads(line) for line in text.splitlines()]
    expect(rc == 0 and re.search(r'^\{"implementation":"attnvk"', text, re.M) is not None
           and re.search(r'^\{"implementation":"openblas"', text, re.M) is not None
           and sorted((r["implementation"], r["variant"]) for r in recs) == [("attnvk", "flash-f32"),
                                                                             ("openblas", "sgemm")]
           and all(r["vendor_reference"] == "openblas" for r in recs),
           "cpu_labels_and_units: -o jsonl labels the cpu records 'attnvk' and 'openblas', compared with openblas")


def test_decode_bandwidth():
    """Decode (Nq <= 16) records carry the device's measured read bandwidth and the fraction of it
    reached; the table shows "GB/s x%" there; with measuring off and nothing cached, both are null.
    f32: attnvk's records and the OpenBLAS baseline's alike."""
    case = ["--api", "cpu", "--seq", "1,64", "--seq-kv", "512", "--heads", "2", "--head-dim", "32", "-r", "3",
            "--warmup", "0", "--dtype", "f32"]
    out = os.path.join(WORK, "decode.json")
    env = {"ATTNVK_CACHE_DIR": os.path.join(WORK, "bandwidth-cache")}
    rc, table, _ = run("bench", *case, "--out", out, "-o", "json", env=env)
    doc = load(out)
    valid(doc, "decode bandwidth JSON")
    dec = [r for r in doc["records"] if r["case"]["seq_q"] == 1]
    pre = [r for r in doc["records"] if r["case"]["seq_q"] == 64]
    expect(rc == 0 and sorted(r["implementation"] for r in dec) == ["attnvk", "openblas"]
           and all(r["status"] == "ok" for r in dec)
           and all(r["read_bandwidth_gbps"] > 0 and r["bandwidth_fraction"] > 0 for r in dec)
           and all(abs(r["bandwidth_fraction"] * r["read_bandwidth_gbps"] - r["gbytes_per_s"]) < 1e-6 * r["gbytes_per_s"]
                   for r in dec),
           "decode records carry read_bandwidth_gbps and bandwidth_fraction = gbytes_per_s / it: "
           + ", ".join(f"{r['implementation']} {r['bandwidth_fraction']}" for r in dec))
    expect(len(pre) == 2 and all("read_bandwidth_gbps" not in r and "bandwidth_fraction" not in r for r in pre),
           "prefill records carry no bandwidth fields")
    rc, text, _ = run("bench", *case, "-o", "csv", env=env)
    rows = list(csv.DictReader(io.StringIO(text)))
    dec_rows = [r for r in rows if r["seq_q"] == "1"]
    pre_rows = [r for r in rows if r["seq_q"] == "64"]
    expect(rc == 0 and len(rows) == 4 and len(dec_rows) == 2 and len(pre_rows) == 2
           and all(float(r["read_bandwidth_gbps"]) > 0 and float(r["bandwidth_fraction"]) > 0 for r in dec_rows)
           and all(r["read_bandwidth_gbps"] == "" and r["bandwidth_fraction"] == "" for r in pre_rows)
           and all(r["kv_format"] == "dtype" and r["page_size"] == "0" for r in rows),
           "CSV: kv_format, page_size, and the bandwidth columns on the decode rows only")
    rc, table, _ = run("bench", *case, env=env)
    rows = [line for line in table.splitlines() if re.match(r"(attnvk|openblas) +cpu:0 ", line)]
    dec_rows = [line for line in rows if "-nq1-" in line]
    pre_rows = [line for line in rows if "-nq64-" in line]
    expect(len(rows) == 4 and len(dec_rows) == 2 and all(re.search(r" [\d.]+ GB/s \d+% ", line) for line in dec_rows)
           and len(pre_rows) == 2 and all("FLOP/s" in line for line in pre_rows),
           f"the table rates decode in GB/s with the % of measured: {dec_rows[:1]!r}")
    env = {"ATTNVK_CACHE_DIR": os.path.join(WORK, "bandwidth-cache-empty"), "ATTNVK_MEASURE_BANDWIDTH": "0"}
    rc, _, _ = run("bench", *case, "--out", out, "-o", "json", env=env)
    doc = load(out)
    valid(doc, "decode bandwidth JSON, measuring off")
    dec = [r for r in doc["records"] if r["case"]["seq_q"] == 1]
    expect(rc == 0 and len(dec) == 2 and all(r["status"] == "ok" for r in dec)
           and all(r["read_bandwidth_gbps"] is None and r["bandwidth_fraction"] is None for r in dec),
           "ATTNVK_MEASURE_BANDWIDTH=0 with an empty cache: the bandwidth fields are null")


def test_launches():
    """--launches N times N back-to-back launches per sample on every API (split-KV decode: the
    reduce and the next launch share the workspace); the output they leave is checked as well.
    auto stays at one launch where input sets rotate (small cases)."""
    out = os.path.join(WORK, "launches.json")
    rc, _, _ = run("bench", "--api", "all", "--seq", "1", "--seq-kv", "2048", "--heads", "4", "--kv-heads", "2",
                   "--head-dim", "32", "--dtype", "f32", "--split-kv", "3", "--launches", "3", "-r", "2",
                   "--warmup", "0", "-o", "json", "--out", out)
    doc = load(out)
    valid(doc, "--launches 3 JSON")
    ran = [r for r in doc["records"] if r["status"] not in ("skipped", "unavailable")]
    expect(rc == 0 and ran and all(r["status"] == "ok" and r["launches"] == 3 for r in ran)
           and doc["settings"]["launches"] == 3,
           "--launches 3: " + ", ".join(f"{r['api']}:{r['implementation']}:{r['status']}:{r.get('launches')}"
                                        for r in doc["records"]))
    # f32: attnvk's kernel and the OpenBLAS baseline both run
    rc, _, _ = run("bench", *TINY, "--dtype", "f32", "-o", "json", "--out", out)
    doc = load(out)
    expect(rc == 0 and doc["settings"]["launches"] == "auto"
           and sorted(r["implementation"] for r in doc["records"]) == ["attnvk", "openblas"]
           and all(r["status"] == "ok" and r["launches"] == 1 and r["input_sets"] > 1 for r in doc["records"]),
           "--launches auto: one launch per sample where input sets rotate: "
           + ", ".join(f"{r['implementation']}:{r['status']}:{r.get('launches')}:{r.get('input_sets')}"
                       for r in doc["records"]))


def test_interrupt():
    """SIGINT stops after the current dispatch: the finished rows and the summary are printed,
    --out holds them as a valid file, stderr says where, exit 130."""
    out = os.path.join(WORK, "sigint.json")
    if os.path.exists(out):
        os.remove(out)
    args = ["bench", "--api", "cpu", "--suite", "quick", "--min-time", "0.5", "-o", "json", "--out", out]
    p = subprocess.Popen([ATTNVK, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline, seen = time.time() + 60, 0
    while time.time() < deadline and p.poll() is None and seen < 1:
        try:
            seen = len(load(out)["records"])
        except (OSError, ValueError):
            seen = 0
        time.sleep(0.02)
    still_running = p.poll() is None
    start = time.time()
    p.send_signal(signal.SIGINT)
    try:
        stdout, stderr = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    stopped_in = time.time() - start
    doc = load(out)
    n = len(doc["records"])
    expect(still_running and p.returncode == 130 and 1 <= n < 6,
           f"interrupt: SIGINT after {seen} record(s): exit {p.returncode} in {stopped_in:.1f} s, {n} in the file")
    valid(doc, "interrupt: the stopped run's JSON")
    expect(stdout and json.loads(stdout)["records"] == doc["records"], "interrupt: stdout has the same document")
    expect(f"stopped by SIGINT: {n} of" in stderr and out in stderr, f"interrupt: stderr says where: {stderr.strip()!r}")
    # the table: rows, then the summary saying it was stopped
    p = subprocess.Popen([ATTNVK, "bench", "--api", "cpu", "--suite", "quick", "--min-time", "0.5"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_without_columns())
    first = ""
    for line in p.stdout:
        if re.match(r"attnvk +cpu:0 ", line):  # the first timed row (the OpenBLAS baseline skips the f16 cases)
            first = line
            break
    p.send_signal(signal.SIGINT)
    rest, _ = p.communicate(timeout=30)
    expect(first and p.returncode == 130 and re.search(r"^\d+ records?: .* stopped by SIGINT after \d+ of \d+", rest, re.M),
           f"interrupt: the table ends with the summary of what finished (exit {p.returncode})")


class Screen:
    """Just enough of a terminal: 80 columns, CR, LF, erase-to-end-of-line, autowrap."""

    def __init__(self, cols):
        self.cols, self.lines, self.line, self.x = cols, [], [], 0

    def feed(self, text):
        i = 0
        while i < len(text):
            ch = text[i]
            if text.startswith("\x1b[K", i):
                del self.line[self.x:]
                i += 3
                continue
            if ch == "\r":
                self.x = 0
            elif ch == "\n":
                self.lines.append("".join(self.line))
                self.line, self.x = [], 0
            else:
                if self.x == self.cols:  # autowrap
                    self.lines.append("".join(self.line))
                    self.line, self.x = [], 0
                if self.x < len(self.line):
                    self.line[self.x] = ch
                else:
                    self.line.append(ch)
                self.x += 1
            i += 1

    def final(self):
        return self.lines + ["".join(self.line)]


def run_on_terminal(args, cols=80, timeout=60):
    """Runs attnvk with stdout and stderr on one pseudo-terminal of cols columns; returns (rc, the bytes shown)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    env = dict(env_without_columns(), COLUMNS=str(cols))
    p = subprocess.Popen([ATTNVK, *args], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks, deadline = [], time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            if p.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    try:
        rc = p.wait(timeout=max(1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    return rc, b"".join(chunks).decode("utf-8", "replace")


def test_progress():
    """On a terminal: a progress line that advances within a record, fits 80 columns and leaves
    no debris; its ETA leaves out records skipped up front."""
    # 3 cases x (OpenBLAS, attnvk): Nq 8192 and 4096 are skipped at once (--max-memory), and so is
    # OpenBLAS on Nq 512 (f16), then attnvk's slow float64 variant (reference-f64: the flash-f32
    # kernel takes milliseconds) runs 512 for 12 repetitions (about 2 s);
    # the long case names make a progress line wider than 80 columns unless it is cut
    rc, shown = run_on_terminal(["bench", "--api", "cpu", "--seq", "8192,4096,512", "--seq-kv", "4096", "--heads", "2",
                                 "--kv-heads", "1", "--head-dim", "32", "--causal", "-r", "12", "--warmup", "0",
                                 "--max-memory", "1M", "--variant", "reference-f64"])
    segments = [s.replace("\x1b[K", "") for s in re.split(r"\r\n|\r|\n", shown)]
    bars = [s for s in segments if s.startswith("[") and " ETA " in s]
    timing = {m.group(1) for s in bars for m in [re.search(r"timing (\d+/\d+)", s)] if m}
    expect(rc == 0 and bars and max(len(s) for s in bars) <= 79,
           f"progress: {len(bars)} progress lines, the widest {max((len(s) for s in bars), default=0)} columns (<= 79)")
    expect(len(timing) >= 5, f"progress: advances within the record ({len(timing)} distinct 'timing k/n')")
    etas = []
    for s in bars:
        m = re.search(r"\] 5/6 ETA (\d+)s", s)
        if m:
            etas.append(int(m.group(1)))
    expect(etas and max(etas) >= 1,
           f"progress: the ETA of the one record that runs is not shrunk by the five skipped ones: {sorted(set(etas))}")
    screen = Screen(80)
    screen.feed(shown)
    debris = [line for line in screen.final() if " ETA " in line]
    expect(not debris, f"progress: no progress debris left on an 80-column screen: {debris[:1]}")
    final = screen.final()
    expect(sum(line.startswith("  openblas  cpu:0     skipped") for line in final) == 3
           and sum(line.startswith("  attnvk    cpu:0") for line in final) == 3
           and any(re.match(r"  attnvk    cpu:0 .* ok ", line) for line in final),
           "progress: the rows are on the screen (compact table at 80 columns)")

def test_max_time():
    """--max-time bounds the whole run: the records that finished are kept (stdout and --out), the
    one it cut short is dropped, stderr says so, and the exit status is the run's own (0)."""
    out = os.path.join(WORK, "max_time.json")
    if os.path.exists(out):
        os.remove(out)
    start = time.time()
    # Records of at least 1.5 s each (CPU runs have no warm-up time): 6 need 9 s or more, so a 6 s bound cuts
    # the run short, and it still holds the first one under ASan on a loaded 2-core machine (about 3 s)
    rc, stdout, stderr = run("bench", "--api", "cpu", "--impl", "attnvk", "--suite", "quick", "--variant", "reference-f64",
                             "--min-time", "1.5", "--max-time", "6", "-o", "json", "--out", out, timeout=60)
    took = time.time() - start
    doc = load(out) if os.path.exists(out) else {"records": []}
    n = len(doc["records"])
    expect(rc == 0 and 1 <= n < 6 and took < 30, f"max_time: exit {rc} after {took:.1f} s with {n} of 6 records")
    valid(doc, "max_time: the bounded run's JSON")
    expect(all(r["status"] in ("ok", "skipped") for r in doc["records"]) and json.loads(stdout)["records"] == doc["records"],
           "max_time: every kept record finished; stdout has the same document")
    expect(f"--max-time 6 s reached: {n} of" in stderr, f"max_time: stderr says so: {stderr.strip()!r}")
    rc, _, stderr = run("bench", "--api", "cpu", "--max-time", "0")
    expect(rc == 2 and "--max-time" in stderr and len(stderr.strip().splitlines()) == 1,
           f"max_time: --max-time 0 is a usage error: {rc} {stderr.strip()!r}")


def test_interrupted():
    out = os.path.join(WORK, "interrupted.json")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.Popen([ATTNVK, "bench", "--api", "cpu", "--suite", "quick", "--min-time", "0.5", "-o", "json",
                          "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, seen = time.time() + 60, 0
    while time.time() < deadline and p.poll() is None:
        try:
            seen = len(load(out)["records"])
        except (OSError, ValueError):
            seen = 0
        if seen >= 1:
            break
        time.sleep(0.02)
    still_running = p.poll() is None
    p.send_signal(signal.SIGKILL)
    p.wait()
    doc = load(out)
    expect(still_running and 1 <= len(doc["records"]) < 5,
           f"killed after {seen} record(s): the file holds {len(doc['records'])} finished record(s)")
    valid(doc, "interrupted run's JSON")


for test in [test_quick_suite, test_wrong_kernel, test_skipped_and_unavailable, test_too_large_skips_at_once,
             test_variance, test_exit_codes, test_csv_md, test_format_everywhere, test_rows_as_they_finish,
             test_table_widths, test_devices_layout, test_cpu_labels_and_units, test_decode_bandwidth, test_launches, test_interrupt, test_max_time, test_progress, test_interrupted]:
    try:
        test()
    except Exception as e:  # a crash in one test is a failure, the others still run
        expect(False, f"{test.__name__} raised {type(e).__name__}: {e}")

finish()
