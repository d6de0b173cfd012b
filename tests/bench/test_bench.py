#!/usr/bin/env python3
"""`attnvk bench` and `attnvk check` end to end: the quick suite's JSON against the
documented schema, a deliberately wrong kernel caught as `fail` (exit 1), impossible
cases `skipped`/`unavailable` with reasons, exit codes 0/1/2, CSV and Markdown that
parse, and a killed run that leaves a valid results file.

usage: test_bench.py ATTNVK SCHEMA WORKDIR"""
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

ATTNVK, SCHEMA_PATH, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
passed = failed = 0
# a small custom case on the cpu API: exact, deterministic, fast
TINY = ["--api", "cpu", "--seq", "96", "--heads", "2", "--head-dim", "32", "--iters", "2", "--warmup", "0"]


def expect(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {what}")
    else:
        failed += 1
        print(f"FAIL {what}")
    sys.stdout.flush()
    return cond


def run(*args, timeout=240):
    p = subprocess.run([ATTNVK, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def no_columns_env():
    """The environment without COLUMNS: widths then come from the options alone."""
    return {k: v for k, v in os.environ.items() if k != "COLUMNS"}


def run_plain(*args, timeout=240, columns=None):
    env = no_columns_env()
    if columns is not None:
        env["COLUMNS"] = str(columns)
    p = subprocess.run([ATTNVK, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def widest(text):
    return max((len(line) for line in text.splitlines()), default=0)


def load_validator():
    try:
        import jsonschema
    except ImportError:
        expect(False, "python3-jsonschema is installed (tools/install-deps.sh)")
        return None
    with open(SCHEMA_PATH) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


VALIDATOR = load_validator()


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
    expect(stdout.splitlines()[0].split()[:5] == ["API", "DEVICE", "IMPL", "CASE", "STATUS"],
           "quick suite prints the table on stdout when --out is given")
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
    cpu = [r for r in recs if r["api"] == "cpu"]
    expect(len(cpu) == len(cases) and all(r["status"] == "ok" and r["check"]["passed"] for r in cpu),
           "cpu reference runs every quick case and passes its check")
    expect(all(r["implementation"] == "reference" for r in cpu)
           and all(r["implementation"] != "reference" for r in recs if r["api"] != "cpu"),
           "the cpu API's records are labelled 'reference', no other")
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
    r = doc["records"][0]
    expect(r["status"] == "fail" and not r["check"]["passed"] and r["check"]["rel_l2"] > r["check"]["tolerance"],
           "the wrong kernel is caught as fail by the check")
    expect(r["tflops"] is None and "wrong result" in r["reason"], "a failed record's time is not a result")
    expect(doc["settings"]["test_wrong_kernel"] is True, "the results file says the wrong kernel was on")
    # every compiled-in API's kernel honours the flag; vendor baselines run normally
    out = os.path.join(WORK, "wrong_all.json")
    rc, _, _ = run("bench", "--api", "all", "--seq", "96", "--heads", "2", "--head-dim", "32", "--dtype", "f32",
                   "--iters", "2", "--warmup", "0", "--test-wrong-kernel", "-o", "json", "--out", out)
    recs = load(out)["records"]
    ours = [r for r in recs if r["implementation"] in ("attnvk", "reference") and r["status"] != "skipped"]
    vendor = [r for r in recs if r["implementation"] not in ("attnvk", "reference")]
    expect(rc == 1 and ours and all(r["status"] == "fail" for r in ours)
           and all(r["status"] != "fail" for r in vendor),
           "wrong kernel caught on every API: " + ", ".join(f"{r['api']}:{r['implementation']}:{r['status']}"
                                                            for r in recs))
    rc, stdout, _ = run("check", "--api", "cpu", "--dtype", "f32", "--test-wrong-kernel")
    last = stdout.strip().splitlines()[-1]
    expect(rc == 1 and re.fullmatch(r"0 passed, [1-9]\d* failed, 0 skipped", last) is not None,
           f"check catches the wrong kernel: '{last}', exit {rc}")


def test_skipped_and_unavailable():
    out = os.path.join(WORK, "skip.json")
    rc, _, _ = run("bench", "--api", "cpu", "--seq", "2k", "--heads", "4", "--head-dim", "64",
                   "--max-memory", "1M", "--impl", "reference,nosuchlib", "-o", "json", "--out", out)
    expect(rc == 0, f"skipped/unavailable cases alone exit 0 (got {rc})")
    doc = load(out)
    valid(doc, "skipped/unavailable JSON")
    by_impl = {r["implementation"]: r for r in doc["records"]}
    a, n = by_impl.get("reference"), by_impl.get("nosuchlib")
    expect(a is not None and a["status"] == "skipped" and "memory" in a["reason"] and a["stats"] is None,
           f"a case too large for the device memory is skipped: {a and a['reason']}")
    expect(n is not None and n["status"] == "unavailable" and "nosuchlib" in n["reason"],
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
    shape = ["--api", "cpu", "--seq", "64", "--heads", "2", "--head-dim", "32", "--warmup", "0"]
    out = os.path.join(WORK, "r5.json")
    rc, _, _ = run("bench", *shape, "-r", "5", "-o", "json", "--out", out)
    doc = load(out)
    r = doc["records"][0]
    expect(rc == 0 and len(r["samples_ms"]) == 5 and doc["settings"]["iters"] == 5,
           f"variance: -r 5 runs exactly 5 repetitions (exit {rc})")
    expect(r["stats"]["p95_ms"] is None and r["stats"]["p99_ms"] is None and r["stats"]["std_ms"] >= 0,
           "variance: p95/p99 are null from 5 samples, std is a number")
    valid(doc, "variance -r 5 JSON")
    rc, _, _ = run("bench", *shape, "-r", "25", "-o", "json", "--out", out)
    st = load(out)["records"][0]["stats"]
    expect(rc == 0 and st["p95_ms"] >= st["median_ms"] and st["p99_ms"] >= st["p95_ms"],
           "variance: p95/p99 are numbers from 25 samples")
    rc, stdout, _ = run("bench", *shape, "-r", "5", "-o", "csv")
    row = next(csv.DictReader(io.StringIO(stdout)))
    expect(rc == 0 and row["samples"] == "5" and row["p95_ms"] == "" and row["p99_ms"] == ""
           and float(row["std_ms"]) >= 0, "variance: CSV leaves p95/p99 empty from 5 samples")
    rc, _, stderr = run("bench", *shape, "-r", "3", "--min-time", "1")
    expect(rc == 2 and "-r" in stderr, f"variance: -r with --min-time is refused: {stderr.strip()}")


def test_exit_codes():
    bad = [["--seq", "0"], ["--tile", "64"], ["-o", "xml"], ["--suite", "nope"], ["--suite", "quick", "--seq", "64"],
           ["--iters", "3", "--min-time", "1"], ["--bogus"], ["--api", "metal"], ["--dtype", "f8"],
           ["--heads", "6", "--kv-heads", "4"], ["--seq"], ["--out", os.path.join(WORK, "no", "such", "dir.json")]]
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
    expect(rc == 0 and re.fullmatch(r"[1-9]\d* passed, 0 failed, \d+ skipped", last) is not None,
           f"check --api cpu passes: '{last}'")


def test_csv_md():
    two = ["--api", "cpu", "--seq", "64,128", "--heads", "2", "--head-dim", "32", "--iters", "2", "--warmup", "0"]
    rc, stdout, _ = run("bench", *two, "-o", "csv")
    rows = list(csv.DictReader(io.StringIO(stdout)))
    expect(rc == 0 and len(rows) == 2 and all(r["status"] == "ok" for r in rows), "CSV: one row per record")
    numeric = ["median_ms", "tflops", "rel_l2", "seq_q", "tolerance"]
    expect(all(float(r[k]) >= 0 for r in rows for k in numeric), "CSV: numeric columns parse")
    expect({r["case"] for r in rows} == {"custom-d32-n64-b1-h2", "custom-d32-n128-b1-h2"}, "CSV: case names")
    out = os.path.join(WORK, "two.csv")
    rc, stdout, _ = run("bench", *two, "-o", "csv", "--out", out)
    with open(out, newline="") as f:
        expect(len(list(csv.DictReader(f))) == 2 and stdout.startswith("API"), "CSV --out file parses, table on stdout")
    rc, stdout, _ = run("bench", *two, "-o", "md")
    lines = stdout.strip().splitlines()
    cells = [len(re.split(r"(?<!\\)\|", line)) for line in lines]
    expect(rc == 0 and len(lines) == 4 and all(l.startswith("|") and l.endswith("|") for l in lines)
           and len(set(cells)) == 1 and re.fullmatch(r"\|(-+:?\|)+", lines[1].replace("---:", "---")) is not None,
           "Markdown: header, separator and 2 rows with equal cell counts")


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
             test_variance, test_exit_codes, test_csv_md, test_devices_layout, test_interrupted]:
    try:
        test()
    except Exception as e:  # a crash in one test is a failure, the others still run
        expect(False, f"{test.__name__} raised {type(e).__name__}: {e}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
