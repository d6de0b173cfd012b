#!/usr/bin/env bash
# The SQLite results history: import, list, compare stored runs (--run, --driver),
# concurrent writers, and writers interrupted before COMMIT (exit, kill -9).
# Env: ATTNVK, DATA, PYTHON. Arg: a scratch folder.
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
avk() {
    "$ATTNVK" "$@" >"$work/out" 2>"$work/err"
    rc=$?
}
has() { grep -Eq -- "$1" "$work/out"; }
# runs and records as SQLite itself sees them (not through attnvk)
counts() { "$PYTHON" -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("select count(*) from runs").fetchone()[0], c.execute("select count(*) from records").fetchone()[0])
' "$1"; }
db=$work/history.db

avk history --db "$db"
check "no database yet: exit 2" [ "$rc" = 2 ]
check "no database yet: says so" grep -q "no history database at $db" "$work/err"

avk history --db "$db" --import "$DATA/base.json"
check "import base: exit 0" [ "$rc" = 0 ]
check "import base: run 1" has "stored .*base.json as run 1 in $db"
avk history --db "$db" --import "$DATA/new_slow30.json"
check "import new: run 2" has "as run 2 in"
avk history --db "$db" --import "$DATA/bad_version.json"
check "import of a bad file: exit 2" [ "$rc" = 2 ]
check "round trip: 2 runs, 198 records" [ "$(counts "$db")" = "2 198" ]

avk history --db "$db"
check "history: exit 0" [ "$rc" = 0 ]
check "history: run 1 with device, APIs, driver, commit, count" has '^1 +2026-11-20T09:00:00Z +NVIDIA H100 80GB HBM3 +vulkan,cuda +550\.54\.15 +a1b2c3d4e5f6 +96$'
check "history: run 2 with the new driver" has '^2 +2026-11-21T09:00:00Z +NVIDIA H100 80GB HBM3 +vulkan,cuda +560\.28\.03 +a1b2c3d4e5f6 +96$'
check "history: second device of a run" has '^ +cpu-haswell-Intel\(R\) Xeon\(R\) CPU @ 2\.20GHz +opencl +pocl 3\.1 +3$'
check "history: total" has '^2 runs in '
avk history --db "$db" --device opencl --case n1024
check "history --device --case: filtered count" has '^1 +.*opencl +pocl 3\.1 +a1b2c3d4e5f6 +1$'
avk history --db "$db" --device a100
check "history --device matching no stored device: exit 2" [ "$rc" = 2 ]
check "history --device matching no stored device: lists them" \
    grep -q "no stored device matches 'a100' (devices: cuda:NVIDIA H100 80GB HBM3, opencl:cpu-haswell.*, vulkan:NVIDIA H100 80GB HBM3)$" "$work/err"
avk history --db "$db" --device cuda --case no-such-case
check "history --case matching nothing: 0 runs" has '^0 runs in '

avk compare --db "$db" --run 1 --run 2
check "compare --run 1 --run 2: exit 1" [ "$rc" = 1 ]
check "compare --run: names the case" has '^ *REGRESSION +attnvk +vulkan .* fa-d128-n4096-b4-h16 '
check "compare --run: drivers" has '^ *cuda +NVIDIA H100 80GB HBM3 +550\.54\.15 +560\.28\.03'
avk compare --db "$db" --driver 550.54.15 --driver 560.28.03
check "compare --driver: exit 1" [ "$rc" = 1 ]
check "compare --driver: names the case" has '^ *REGRESSION +attnvk +vulkan .* fa-d128-n4096-b4-h16 '
check "compare --driver: only that driver's records" not has 'opencl'
avk compare --db "$db" --driver 550.54.15 --driver 560.28.03 --device cuda
check "compare --driver --device cuda: exit 0" [ "$rc" = 0 ]
avk compare --db "$db" --run 1 "$DATA/new_fail.json"
check "compare a stored run with a file: exit 1" [ "$rc" = 1 ]
avk compare --db "$db" --run 1 --run 1
check "compare a run with itself: exit 0" [ "$rc" = 0 ]
avk compare --db "$db" --run 1 --run 9
check "compare --run unknown: exit 2" [ "$rc" = 2 ]
avk compare --db "$db" --driver 550.54.15 --driver 999.9
check "compare --driver unknown: exit 2" [ "$rc" = 2 ]
check "compare --driver unknown: one line" [ "$(wc -l <"$work/err")" = 1 ]
check "compare --driver unknown: lists the stored driver versions" \
    grep -q "no run with driver version '999.9' (stored driver versions: 550.54.15, 560.28.03, pocl 3.1)$" "$work/err"
avk compare --db "$db" --driver 550.54.15 --driver 560.28.03 --device a100
check "compare --driver --device unknown: exit 2" [ "$rc" = 2 ]
check "compare --driver --device unknown: lists the stored devices" grep -q "no stored device matches 'a100' (devices: cuda:" "$work/err"
avk compare --db "$db" --driver "pocl 3.1" --driver 560.28.03
check "compare --driver of two devices with no case in common: exit 2" [ "$rc" = 2 ]
check "compare --driver of two devices with no case in common: says so" \
    grep -q "run #2 (driver pocl 3.1) and run #2 (driver 560.28.03) share no case (3 and 96 records" "$work/err"

avk report --db "$db" --run 1 --run 2 --out "$work/stored.html"
check "report from stored runs: exit 0" [ "$rc" = 0 ]
check "report from stored runs: the comparison" grep -q 'Comparison: run #1 .* run #2' "$work/stored.html"

XDG_DATA_HOME=$work/xdg avk history --import "$DATA/base.json"
check "default store under XDG_DATA_HOME" [ -f "$work/xdg/attnvk/history.db" ]
HOME=$work/home XDG_DATA_HOME= avk history --import "$DATA/base.json"
check "default store under ~/.local/share" [ -f "$work/home/.local/share/attnvk/history.db" ]

# concurrent writers: every run lands whole
cdb=$work/concurrent.db
pids=()
for i in 1 2 3 4 5 6; do
    "$ATTNVK" history --db "$cdb" --import "$DATA/new_noise.json" >"$work/writer$i.out" 2>&1 &
    pids+=($!)
done
writers_ok=0
for p in "${pids[@]}"; do wait "$p" && writers_ok=$((writers_ok + 1)); done
check "6 concurrent writers all succeed" [ "$writers_ok" = 6 ]
check "6 concurrent writers: 6 runs, 594 records" [ "$(counts "$cdb")" = "6 594" ]
avk history --db "$cdb" --check
check "concurrent: integrity check" [ "$rc" = 0 ]
avk history --db "$cdb"
check "concurrent: history lists 6 runs" has '^6 runs in '

# a writer that exits before COMMIT leaves no trace
ATTNVK_HISTORY_TEST_HOOK=exit-before-commit avk history --db "$db" --import "$DATA/new_fail.json"
check "exit before commit: the hook fired" [ "$rc" = 86 ]
check "exit before commit: no partial run" [ "$(counts "$db")" = "2 198" ]
avk history --db "$db" --check
check "exit before commit: integrity check" [ "$rc" = 0 ]

# a writer killed (-9) inside its transaction, while others read
ATTNVK_HISTORY_TEST_HOOK=pause-before-commit "$ATTNVK" history --db "$db" --import "$DATA/new_fail.json" \
    >"$work/paused.out" 2>"$work/paused.err" &
writer=$!
for _ in $(seq 1 300); do grep -q "paused before commit" "$work/paused.err" && break; sleep 0.1; done
check "paused writer reached its COMMIT" grep -q "paused before commit" "$work/paused.err"
avk history --db "$db"
check "a reader during the open transaction: exit 0" [ "$rc" = 0 ]
check "a reader during the open transaction: 2 runs" has '^2 runs in '
kill -9 "$writer"
wait "$writer" 2>/dev/null
check "killed writer: no partial run" [ "$(counts "$db")" = "2 198" ]
avk history --db "$db" --check
check "killed writer: integrity check" [ "$rc" = 0 ]
avk history --db "$db" --import "$DATA/new_fail.json"
check "after the kill, the next write works" [ "$rc" = 0 ]
check "after the kill, the next run is 3" has "as run 3 in"
check "after the kill: 3 runs, 297 records" [ "$(counts "$db")" = "3 297" ]

# `attnvk bench --save --db` stores what the bench measured
saved=$work/saved.db
"$ATTNVK" bench --api cpu --impl attnvk --seq 64 --heads 2 --head-dim 32 --min-time 0.01 --save --db "$saved" >"$work/out" 2>"$work/err"
rc=$?
check "bench --save: exit 0" [ "$rc" = 0 ]
check "bench --save: says where" grep -q "saved as run #1 in $saved" "$work/err"
check "bench --save: one run, one record" [ "$(counts "$saved")" = "1 1" ]
avk history --db "$saved"
check "bench --save: history lists it" has "custom-d32-n64|1 run in"

# a results path is a path, whatever its first character
cp "$DATA/base.json" "$work/{run}.json"
(cd "$work" && "$ATTNVK" history --db brace.db --import '{run}.json') >"$work/out" 2>"$work/err"
check "import '{run}.json': a path, not JSON text" [ "$?" = 0 ]
check "import '{run}.json': stored" [ "$(counts "$work/brace.db")" = "1 99" ]

# --save checks the database before any case runs: a read-only file or folder is exit 2,
# one line naming the path, and nothing measured. Root writes anyway: as root, those runs
# are made as nobody, with the binary and the folders in a scratch folder under /tmp that
# nobody can reach (the build tree may sit in a home folder nobody may not enter).
if [ "$(id -u)" = 0 ]; then
    nob=$(mktemp -d /tmp/attnvk-history-test.XXXXXX)
    trap 'chmod -R u+w "$nob"; rm -rf "$nob"' EXIT
    chmod 755 "$nob"
    cp "$ATTNVK" "$nob/attnvk"
    unprivileged_attnvk() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$nob/attnvk" "$@"; }
else
    nob=$work/unprivileged
    mkdir -p "$nob"
    unprivileged_attnvk() { "$ATTNVK" "$@"; }
fi
tiny_bench=(bench --api cpu --impl attnvk --seq 64 --heads 2 --head-dim 32 --min-time 0.01)
save_as_nobody() {
    ATTNVK_CACHE_DIR=off unprivileged_attnvk "${tiny_bench[@]}" --save --db "$1" >"$work/out" 2>"$work/err"
    rc=$?
}
ro=$nob/readonly
mkdir -p "$ro/file" "$ro/folder"
chmod 777 "$ro/file"
"$ATTNVK" history --db "$ro/file/history.db" --import "$DATA/base.json" >/dev/null
chmod 444 "$ro/file/history.db"
save_as_nobody "$ro/file/history.db"
check "--save to a read-only database: exit 2" [ "$rc" = 2 ]
check "--save to a read-only database: one line naming it" \
    eval '[ "$(wc -l <"$work/err")" = 1 ] && grep -q "^attnvk: bench: --save: .*$ro/file/history.db" "$work/err"'
check "--save to a read-only database: no case ran" [ ! -s "$work/out" ]
check "--save to a read-only database: unchanged" [ "$(counts "$ro/file/history.db")" = "1 99" ]
"$ATTNVK" history --db "$ro/folder/history.db" --import "$DATA/base.json" >/dev/null
chmod 666 "$ro/folder/history.db"
chmod 555 "$ro/folder"
save_as_nobody "$ro/folder/history.db"
check "--save into a read-only folder: exit 2" [ "$rc" = 2 ]
check "--save into a read-only folder: one line naming the path and the folder" \
    eval '[ "$(wc -l <"$work/err")" = 1 ] && grep -q "^attnvk: bench: --save: .*$ro/folder/history.db.*folder" "$work/err"'
check "--save into a read-only folder: no case ran" [ ! -s "$work/out" ]
save_as_nobody "$ro/folder/new/history.db"
check "--save into a new folder of a read-only one: exit 2" [ "$rc" = 2 ]
chmod 755 "$ro/folder"

# a save that fails anyway at the end keeps the measured JSON in a file, and says where
keep=$work/keep
mkdir -p "$keep"
(cd "$keep" && ATTNVK_HISTORY_TEST_HOOK=fail-commit "$ATTNVK" "${tiny_bench[@]}" --save --db "$keep/history.db") \
    >"$work/out" 2>"$work/err"
check "failed save: exit 1" [ "$?" = 1 ]
kept=$(sed -n 's/.*the results are kept in \([^ ]*\) .*/\1/p' "$work/err")
check "failed save: one line that says why and where the results are" \
    eval '[ "$(grep -c "^attnvk: bench: cannot save to the history: .*fail.*; the results are kept in" "$work/err")" = 1 ] && [ "$(dirname "$kept")" = "$keep" ]'
check "failed save: nothing stored" [ "$(counts "$keep/history.db")" = "0 0" ]
avk history --db "$keep/history.db" --import "$kept"
check "failed save: the kept file imports" [ "$rc" = 0 ]
check "failed save: the kept file holds the run" [ "$(counts "$keep/history.db")" = "1 1" ]
# the current folder not writable: $TMPDIR
nkeep=$nob/keep
mkdir -p "$nkeep/ro" "$nkeep/tmp"
chmod 555 "$nkeep/ro"
chmod 777 "$nkeep/tmp" "$nkeep"
(cd "$nkeep/ro" && ATTNVK_CACHE_DIR=off ATTNVK_HISTORY_TEST_HOOK=fail-commit TMPDIR=$nkeep/tmp \
    unprivileged_attnvk "${tiny_bench[@]}" --save --db "$nkeep/history.db") >"$work/out" 2>"$work/err"
check "failed save, read-only current folder: exit 1" [ "$?" = 1 ]
check "failed save, read-only current folder: kept in \$TMPDIR" grep -q "the results are kept in $nkeep/tmp/attnvk-unsaved-" "$work/err"
check "failed save, read-only current folder: the file is there" eval 'ls "$nkeep"/tmp/attnvk-unsaved-*.json >/dev/null'
chmod 755 "$nkeep/ro"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
