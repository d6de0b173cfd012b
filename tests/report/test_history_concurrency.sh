#!/usr/bin/env bash
# Concurrent first writers of a history database, with the CPU loaded: every round,
# WRITERS imports race to create the same database while a reader lists it. Every
# writer must succeed and land whole; the reader sees either no database yet or a
# usable one, never an error. Rounds alternate how the database starts out: absent,
# an empty file, and a stored history left in rollback-journal (non-WAL) mode.
# Env: ATTNVK, DATA, PYTHON; ROUNDS (default 200), WRITERS (default 6). Arg: a scratch folder.
set -u
work=$1
rounds=${ROUNDS:-200}
writers=${WRITERS:-6}
rm -rf "$work" && mkdir -p "$work"

# a small run (3 records): the race is in opening the database, not in the rows
small=$work/small.json
"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["records"] = d["records"][:3]
json.dump(d, open(sys.argv[2], "w"))
' "$DATA/base.json" "$small" || exit 1
# a stored history switched back to rollback-journal mode, copied into place for some rounds
template=$work/template.db
"$ATTNVK" history --db "$template" --import "$small" >/dev/null || exit 1
"$PYTHON" -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("pragma journal_mode=delete").fetchone()[0] == "delete"
' "$template" || exit 1

# busy loops on every core: writers get preempted inside their critical windows. Each
# loop also ends by itself once this script is gone (killed by a ctest timeout, say).
load_pids=()
for _ in $(seq 1 "$(nproc)"); do
    (while kill -0 "$$" 2>/dev/null; do :; done) &
    load_pids+=($!)
done
stop_load() { kill "${load_pids[@]}" 2>/dev/null; wait "${load_pids[@]}" 2>/dev/null; }
trap stop_load EXIT
trap 'exit 1' TERM INT HUP

failures=0
start=$SECONDS
for round in $(seq 1 "$rounds"); do
    dir=$work/r$round
    mkdir "$dir"
    db=$dir/history.db
    case $((round % 3)) in
    1) ;;                       # no file yet
    2) : >"$db" ;;              # an empty file (what an interrupted first open leaves)
    0) cp "$template" "$db" ;;  # one run stored, journal_mode=delete
    esac
    pids=()
    for w in $(seq 1 "$writers"); do
        "$ATTNVK" history --db "$db" --import "$small" >"$dir/w$w.out" 2>"$dir/w$w.err" &
        pids+=($!)
    done
    "$ATTNVK" history --db "$db" >"$dir/reader.out" 2>"$dir/reader.err"
    reader_rc=$?
    bad=0
    for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
    if [ "$bad" != 0 ]; then
        failures=$((failures + 1))
        echo "FAIL: round $round: $bad of $writers writers failed: $(cat "$dir"/w*.err | sort | uniq -c | tr '\n' ' ')"
    fi
    if ! { [ "$reader_rc" = 0 ] || { [ "$reader_rc" = 2 ] && grep -q '^attnvk: no history database at' "$dir/reader.err"; }; }; then
        failures=$((failures + 1))
        echo "FAIL: round $round: the reader: exit $reader_rc: $(cat "$dir/reader.err")"
    fi
done
elapsed=$((SECONDS - start))
stop_load
trap - EXIT

# every database as SQLite itself sees it: all runs whole, WAL mode, intact
"$PYTHON" - "$work" "$rounds" "$writers" <<'EOF' || failures=$((failures + 1))
import sqlite3, sys
work, rounds, writers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = 0
for r in range(1, rounds + 1):
    c = sqlite3.connect("%s/r%d/history.db" % (work, r))
    runs = c.execute("select count(*) from runs").fetchone()[0]
    records = c.execute("select count(*) from records").fetchone()[0]
    mode = c.execute("pragma journal_mode").fetchone()[0]
    ok = c.execute("pragma integrity_check").fetchone()[0]
    want = writers + (1 if r % 3 == 0 else 0)
    if (runs, records, mode, ok) != (want, 3 * want, "wal", "ok"):
        bad += 1
        print("FAIL: round %d: %d runs, %d records, journal_mode %s, integrity %s (want %d runs, %d records, wal, ok)"
              % (r, runs, records, mode, ok, want, 3 * want))
    c.close()
sys.exit(1 if bad else 0)
EOF

echo "$rounds rounds of $writers concurrent writers and a reader, $(nproc) busy loops: ${elapsed}s"
if [ "$failures" = 0 ]; then
    echo "1 passed, 0 failed"
    exit 0
fi
echo "0 passed, 1 failed ($failures problems)"
exit 1
