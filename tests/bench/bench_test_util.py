"""What the bench's Python tests (test_bench.py, test_cold.py) share: the tally of checks, one
line each, running the attnvk binary, and the results schema's validator.

    expect(cond, "what")                  # "ok   what" or "FAIL what"; returns cond
    rc, out, err = run_attnvk(ATTNVK, ["bench", ...], 240, env_without_columns(TMPDIR=tmp))
    v = load_validator(SCHEMA_PATH)       # None, and a failed check, without python3-jsonschema
    finish()                              # "N passed, M failed"; exits 1 on any failure"""
import json
import os
import subprocess
import sys

tally = {"passed": 0, "failed": 0}


def expect(cond, what):
    tally["passed" if cond else "failed"] += 1
    print(f"{'ok  ' if cond else 'FAIL'} {what}")
    sys.stdout.flush()
    return cond


def finish():
    print(f"{tally['passed']} passed, {tally['failed']} failed")
    sys.exit(1 if tally["failed"] else 0)


def env_without_columns(**extra):
    """The environment without COLUMNS (table widths then come from the options alone), plus extra."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(extra)
    return env


def run_attnvk(attnvk, args, timeout, env=None):
    """attnvk with args: (exit status, stdout, stderr)."""
    p = subprocess.run([attnvk, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def load_validator(schema_path):
    try:
        import jsonschema
    except ImportError:
        expect(False, "python3-jsonschema is installed (tools/install-deps.sh)")
        return None
    with open(schema_path) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_valid(validator, doc, what):
    """doc against the results schema (load_validator): its first errors printed, one expectation."""
    errors = [] if validator is None else list(validator.iter_errors(doc))
    for e in errors[:5]:
        print(f"     schema: {'/'.join(map(str, e.absolute_path))}: {e.message}")
    return expect(validator is not None and not errors, f"{what}: validates against the schema")
