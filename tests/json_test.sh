#!/usr/bin/env bash
# summary.json and --format json: every command that writes a summary table
# (run, run --reps, compare, sweep, merge, tune) writes summary.json beside
# it, valid against docs/summary.schema.json by a real validator (Debian's
# python3-jsonschema) and parsed by a real parser (Python's json), holding
# exactly the CSV's columns and values; --format json prints the same
# document on stdout and nothing else, the human summary going to stderr.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
src=$2
py=/usr/bin/python3
if ! "$py" -c 'import jsonschema' 2> /dev/null; then
  echo "python3-jsonschema is not installed (scripts/test.sh installs it): skipped"; exit 77
fi
schema="$src/docs/summary.schema.json"
# check DIR [SOURCE]: summary.json valid, and the same table as DIR/SOURCE
check() {
  local dir=$1 source=${2:-summary.csv}
  "$py" - "$schema" "$dir/summary.json" "$dir/$source" "$bin" <<'PY' || { fail "$dir/summary.json (see above)"; return 1; }
import csv, json, subprocess, sys
import jsonschema
schema, doc_path, csv_path, binary = sys.argv[1:5]
doc = json.load(open(doc_path))
jsonschema.validate(doc, json.load(open(schema)))
rows = list(csv.reader(open(csv_path)))
head, body = rows[0], rows[1:]
assert doc["columns"] == head, f"columns differ from {csv_path}'s header"
assert doc["source"] == csv_path.rsplit("/", 1)[1]
assert len(doc["rows"]) == len(body), f"{len(doc['rows'])} rows, the CSV {len(body)}"
units = {}
for line in subprocess.run([binary, "list", "metrics"], capture_output=True, text=True).stdout.splitlines()[1:]:
    f = line.split()
    if len(f) >= 2:
        units[f[0]] = f[1]
for r, (obj, fields) in enumerate(zip(doc["rows"], body)):
    assert list(obj) == head, f"row {r}: keys differ from the header"
    for k, v in zip(head, fields):
        j = obj[k]
        if k in ("scenario", "variant"):
            assert v == "" or j == v, f"row {r} {k}: a text column, {v!r} in the CSV, {j!r} in JSON"
        if "." in k:  # a grid key: numbers when every value is a JSON number, else the text
            assert j == v or (not isinstance(j, str) and float(v) == j), f"row {r} {k}: {v!r} in the CSV, {j!r} in JSON"
        if v == "":
            assert j is None, f"row {r} {k}: empty in the CSV, {j!r} in JSON"
        elif isinstance(j, str):
            assert j == v, f"row {r} {k}: {v!r} in the CSV, {j!r} in JSON"
            base = k[:-3] if k.endswith(("_hw", "_sd")) else k
            assert units.get(base, "name") == "name", f"row {r} {k}: metric of unit {units.get(base)} is a string: {j!r}"
        else:
            assert not isinstance(j, bool) and float(v) == j, f"row {r} {k}: {v!r} in the CSV, {j!r} in JSON"
PY
}
short=(--set run.duration=70s --set load.rate=100/s)
"$bin" run storm "${short[@]}" -o "$tmp/run" > /dev/null || fail "run"
check "$tmp/run"
# --format json: stdout is the document (parsed), the same as summary.json
# but for the wall-clock column; the human summary is on stderr
"$bin" run storm "${short[@]}" -o "$tmp/runj" --format json > "$tmp/runj.out" 2> "$tmp/runj.err" || fail "run --format json"
cmp -s "$tmp/runj.out" "$tmp/runj/summary.json" || fail "run --format json: stdout is not summary.json"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["command"]=="run" and d["scenario"]=="storm"' "$tmp/runj.out" \
  || fail "run --format json: not a run of storm"
grep -q 'requests' "$tmp/runj.err" || fail "run --format json: the human summary is not on stderr"
diff <(grep -v '"wall_s"' "$tmp/run/summary.json") <(grep -v '"wall_s"' "$tmp/runj.out") > /dev/null \
  || fail "the same run gives another summary.json (apart from wall_s)"
"$bin" run storm "${short[@]}" --reps 3 -j 2 -o "$tmp/reps" --format json > "$tmp/reps.out" 2> /dev/null || fail "run --reps"
check "$tmp/reps"
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]; assert r["reps"]==3 and r["ok_share_hw"]>=0' "$tmp/reps.out" \
  || fail "run --reps --format json: no reps or ok_share_hw"
"$bin" compare storm "${short[@]}" --vary layer.app.attempts=1,3 -o "$tmp/cmp" --format json > "$tmp/cmp.out" 2> /dev/null || fail "compare"
check "$tmp/cmp"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [r["variant"] for r in d["rows"]]==["attempts=1","attempts=3"]' "$tmp/cmp.out" \
  || fail "compare --format json: not the two variants"
# A numeric column with an empty cell stays numeric: one variant recovers
# (recovery_s a number), the other does not (empty, null)
"$bin" compare storm --set run.duration=120s --vary layer.app.attempts=1,4 -o "$tmp/cmpr" --format json \
  > "$tmp/cmpr.out" 2> /dev/null || fail "compare (recovery)"
check "$tmp/cmpr"
"$py" -c 'import json,sys; v=[r["recovery_s"] for r in json.load(open(sys.argv[1]))["rows"]]; assert isinstance(v[0],(int,float)) and v[1] is None, v' \
  "$tmp/cmpr.out" || fail "compare --format json: recovery_s should be a number, then null"
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..3 --reps 2 -j 2 --quiet -o "$tmp/sweep" --format json > "$tmp/sweep.out" || fail "sweep"
check "$tmp/sweep" sweep.csv
cmp -s "$tmp/sweep.out" "$tmp/sweep/summary.json" || fail "sweep --format json: stdout is not summary.json"
# numeric grid values are JSON numbers (1, 2, 3); values with a unit stay text
"$py" -c 'import json,sys; v=[r["layer.app.attempts"] for r in json.load(open(sys.argv[1]))["rows"]]; assert v==[1,2,3] and all(type(x) is int for x in v), v' \
  "$tmp/sweep.out" || fail "sweep --format json: numeric grid values are not numbers"
"$bin" sweep storm "${short[@]}" --grid layer.app.timeout=50ms,100ms --quiet -o "$tmp/sweepu" > /dev/null || fail "sweep (units)"
check "$tmp/sweepu" sweep.csv
"$py" -c 'import json,sys; v=[r["layer.app.timeout"] for r in json.load(open(sys.argv[1]))["rows"]]; assert v==["50ms","100ms"], v' \
  "$tmp/sweepu/summary.json" || fail "sweep: grid values with a unit should stay text"
for k in 1 2; do
  "$bin" sweep storm "${short[@]}" --grid layer.app.attempts=1..3 --shard $k/2 --quiet -o "$tmp/shard$k" > /dev/null || fail "shard $k"
  [ -e "$tmp/shard$k/summary.json" ] && fail "a shard wrote summary.json (its jobs.csv is not a summary)"
done
"$bin" merge "$tmp/shard1" "$tmp/shard2" -o "$tmp/merged" > /dev/null || fail "merge"
check "$tmp/merged" sweep.csv
# shards are read back as hostile: a grid value edited to hold a byte that
# is not UTF-8 reaches summary.json as U+FFFD (valid UTF-8), the rest kept
for k in 1 2; do
  cp -r "$tmp/shard$k" "$tmp/edited$k"
  sed -i 's/^point,1,2$/point,1,2\xff/' "$tmp/edited$k/experiment.csv"
  sed -i 's/^\([0-9]*\),1,\([0-9]*\),2,/\1,1,\2,2\xff,/' "$tmp/edited$k/jobs.csv"
done
"$bin" merge "$tmp/edited1" "$tmp/edited2" -o "$tmp/edited" > /dev/null || fail "merge of edited shards"
grep -q $'2\xff' "$tmp/edited/sweep.csv" || fail "the edited shards' byte is not in sweep.csv: the test edits nothing"
"$py" - "$tmp/edited/summary.json" <<'PY' || fail "summary.json of edited shards is not valid UTF-8 with U+FFFD (see above)"
import json, sys
doc = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))
values = [r["layer.app.attempts"] for r in doc["rows"]]
assert values == ["1", "2\ufffd", "3"], values
PY
"$bin" tune storm "${short[@]}" --grid layer.app.attempts=1..2 --objective max:ok_share -o "$tmp/tune" --format json > "$tmp/tune.out" 2> /dev/null || fail "tune"
check "$tmp/tune" tune.csv
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["rows"][0]["rank"]==1' "$tmp/tune.out" || fail "tune --format json: no rank 1 first"
expect 2 "--format jsn: expected text or json; did you mean 'json'" -- "$bin" run storm --format jsn -o "$tmp/refused"
# tune with constraints: infeasible points (rank null), a metric named as
# objective and constraint (one pair of columns), an objective without a
# value anywhere (empty cells, never nan or inf)
"$bin" tune storm "${short[@]}" --grid layer.app.attempts=1..3 --objective max:ok_share --constraint 'ok_share >= 0.1' \
  --constraint 'lat_p99 <= 40ms' --reps 2 -o "$tmp/tune2" > /dev/null 2>&1 || fail "tune with constraints"
check "$tmp/tune2" tune.csv
# one feasible point and one not: rank 1, then null (a column of numbers
# with an empty cell stays numbers)
"$bin" tune storm --set run.duration=70s --grid load.rate=100/s,2000/s --objective max:ok_share \
  --constraint 'ok_share >= 0.99' -o "$tmp/tune4" > /dev/null 2>&1 || fail "tune with one infeasible point"
check "$tmp/tune4" tune.csv
"$py" -c 'import json,sys; v=[r["rank"] for r in json.load(open(sys.argv[1]))["rows"]]; assert v==[1,None], v' \
  "$tmp/tune4/summary.json" || fail "tune: rank should be 1, then null"
"$bin" tune storm "${short[@]}" --grid layer.app.attempts=1,2 --objective min:recovery_s -o "$tmp/tune3" > "$tmp/tune3.out" 2>&1 || fail "tune min:recovery_s"
check "$tmp/tune3" tune.csv
grep -qiE 'nan|inf' "$tmp/tune3/tune.csv" && fail "tune.csv holds nan or inf: $(cat "$tmp/tune3/tune.csv")"
grep -q 'nothing is recommended' "$tmp/tune3.out" || fail "tune recommended a point without a value: $(cat "$tmp/tune3.out")"
# a column is typed as a whole: a scenario named 1e5 and grid values 01 and 2 stay text
"$bin" run storm "${short[@]}" --set run.name=1e5 -o "$tmp/named" > /dev/null || fail "run named 1e5"
check "$tmp/named"
"$bin" sweep storm "${short[@]}" --grid layer.app.attempts=01,2 --quiet -o "$tmp/zero" > /dev/null || fail "sweep 01,2"
check "$tmp/zero" sweep.csv
# stdout that cannot be written is a failure, not a silent success; a
# shard has no summary to print
if [ -w /dev/full ]; then
  "$bin" run storm "${short[@]}" -o "$tmp/full" --format json > /dev/full 2> "$tmp/full.err" && fail "--format json into /dev/full exited 0"
  grep -q 'cannot write summary.json to standard output' "$tmp/full.err" || fail "no message for a full stdout: $(cat "$tmp/full.err")"
fi
expect 2 "--format json with --shard: a shard has no summary" -- "$bin" sweep storm --grid layer.app.attempts=1,2 --shard 1/2 --format json -o "$tmp/refused"
# The validator and the checks can fail: a document with a wrong version,
# and one whose value differs from its CSV, are refused.
mkdir -p "$tmp/bad" && cp "$tmp/run/summary.csv" "$tmp/bad/"
sed 's/"version": 2/"version": "2"/' "$tmp/run/summary.json" > "$tmp/bad/summary.json"
( check "$tmp/bad" ) > /dev/null 2>&1 && fail "a version given as a string passed the schema"
sed 's/"seed": 1,/"seed": 2,/' "$tmp/run/summary.json" > "$tmp/bad/summary.json"
( check "$tmp/bad" ) > /dev/null 2>&1 && fail "a seed that differs from summary.csv's passed"
finish
