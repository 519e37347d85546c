#!/usr/bin/env bash
# Sweeps (and compare's replications): byte-identical results with -j 1 and -j 2, and when sharded four
# ways through GNU parallel and merged; tune's recommendation on a grid
# whose answer is known; run --reps; bad grids and shards.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
grid=(--set run.duration=80s --grid layer.app.attempts=1..3 --grid layer.app.timeout=200ms..800ms*2 --reps 3)
"$bin" sweep storm "${grid[@]}" -j 1 -o "$tmp/j1" --quiet > /dev/null || fail "sweep -j 1"
"$bin" sweep storm "${grid[@]}" -j 2 -o "$tmp/j2" --quiet > /dev/null || fail "sweep -j 2"
cmp -s "$tmp/j1/sweep.csv" "$tmp/j2/sweep.csv" || fail "-j 1 and -j 2 differ (sweep.csv)"
cmp -s "$tmp/j1/jobs.csv" "$tmp/j2/jobs.csv" || fail "-j 1 and -j 2 differ (jobs.csv)"
# compare runs a variant's replications on every core: the same bytes
# with -j 1 and -j 2 (every file, the variants' own directories included)
cmpv=(compare storm --set run.duration=90s --vary layer.app.attempts=1,3 --reps 5)
"$bin" "${cmpv[@]}" -j 1 -o "$tmp/c1" > /dev/null || fail "compare -j 1"
"$bin" "${cmpv[@]}" -j 2 -o "$tmp/c2" > /dev/null || fail "compare -j 2"
diff -r "$tmp/c1" "$tmp/c2" > "$tmp/cdiff" || fail "compare -j 1 and -j 2 differ: $(head -5 "$tmp/cdiff")"
[ "$(grep -c '^attempts=3,3,' "$tmp/c1/replications.csv")" = 5 ] || fail "compare: not 5 replications of attempts=3 in order"
[ "$(wc -l < "$tmp/j1/sweep.csv")" = 10 ] || fail "sweep.csv should have 9 points"
# The half-widths are Student's t at 95 % with n − 1 degrees of freedom
# over the sample standard deviation: recomputed here from the rows they
# summarise (t(0.975, 2) = 4.30265272975, t(0.975, 4) = 2.77644510520).
# hw_check FILE KEYCOL KEY ROWSFILE ROWKEYCOL METRIC T N
hw_check() {
  awk -F, -v key="$3" -v kc="$2" -v rkc="$5" -v m="$6" -v t="$7" -v n="$8" -v sum="$1" '
    FNR == 1 { for (i = 1; i <= NF; i++) col[FILENAME, $i] = i; next }
    FILENAME == sum && $col[FILENAME, kc] == key { got = $col[FILENAME, m "_hw"] }
    FILENAME != sum && $col[FILENAME, rkc] == key { x[k++] = $col[FILENAME, m] }
    END {
      if (k != n) { print "rows: " k " of " n; exit 1 }
      for (i = 0; i < k; i++) mean += x[i] / k
      for (i = 0; i < k; i++) ss += (x[i] - mean) ^ 2
      want = t * sqrt(ss / (k - 1)) / sqrt(k)
      if (want == 0 || (got - want) ^ 2 > (1e-6 * want) ^ 2) { print "hw " got ", Student t gives " want; exit 1 }
    }' "$1" "$4"
}
out=$(hw_check "$tmp/c1/summary.csv" variant attempts=3 "$tmp/c1/replications.csv" variant server_arrivals \
  2.77644510520 5) || fail "compare's server_arrivals_hw: $out"
out=$(hw_check "$tmp/j1/sweep.csv" point 5 "$tmp/j1/jobs.csv" point server_arrivals 4.30265272975 3) ||
  fail "sweep's server_arrivals_hw: $out"
grep -q wall_s "$tmp/j1/sweep.csv" && fail "sweep.csv holds wall-clock time"
if command -v parallel > /dev/null; then
  parallel --will-cite -j 4 "$bin" sweep storm "${grid[@]}" -j 1 --quiet --shard {}/4 -o "$tmp/shard{}" ::: 1 2 3 4 > /dev/null \
    || fail "sharded sweep through GNU parallel"
  "$bin" merge "$tmp"/shard1 "$tmp"/shard2 "$tmp"/shard3 "$tmp"/shard4 -o "$tmp/merged" > /dev/null || fail "merge"
  cmp -s "$tmp/merged/sweep.csv" "$tmp/j1/sweep.csv" || fail "merged shards differ from one machine"
  out=$("$bin" merge "$tmp"/shard1 "$tmp"/shard3 -o "$tmp/partial" 2>&1) && fail "merging half the shards succeeded"
  grep -q 'jobs are missing' <<<"$out" || fail "missing-shard message: $out"
else
  echo "GNU parallel not found: sharding through it not tested"
fi
# tune: with 503 half the time, attempts 1..4 give amplification 1, 1.5,
# 1.75, 1.875 and ok share 0.5, 0.75, 0.875, 0.94; under amplification <= 1.6
# the best is 2 attempts.
printf '[run]\nduration = 60s\nbucket = 10s\n[load]\nrate = 200/s\n[server]\nworkers = 100\nservice = const(1ms)\nerror_503 = 0.5\n' > "$tmp/t.ini"
out=$("$bin" tune "$tmp/t.ini" --grid layer.client.attempts=1..4 --objective max:ok_share \
      --constraint 'amplification<=1.6' --reps 5 -o "$tmp/tune" 2>&1) || fail "tune: $out"
grep -q '^  recommended: attempts=2$' <<<"$out" || fail "tune picked another point: $out"
# the recommendation shows its objective and constraint with intervals and
# what it costs; the infeasible points are listed under the constraint
# they broke; rank 1 is on the Pareto front
grep -qE '^    ok_share +7[0-9]\.[0-9]+ % ± [0-9.]+ +objective \(max\)$' <<<"$out" || fail "no objective line: $out"
grep -qE '^    amplification +1\.[45][0-9]+ ± [0-9.]+ +constraint <= 1\.600$' <<<"$out" || fail "no constraint line: $out"
grep -qE '^    lat_p99 +[0-9.]+ ms' <<<"$out" || fail "no p99 with the recommendation: $out"
grep -qE '^    amplification <= 1\.600 broken by 2: attempts=3 \(1\.7[0-9]+ ± [0-9.]+\); attempts=4 \(1\.8[0-9]+' <<<"$out" \
  || fail "the infeasible points are not listed under their constraint: $out"
grep -qE '^ +1  attempts=2 .*\(Pareto\)$' <<<"$out" || fail "rank 1 is not on the Pareto front: $out"
awk -F, 'NR > 1 && $1 == 1 && $5 != 1 { bad = 1 } END { exit bad }' "$tmp/tune/tune.csv" || fail "tune.csv: rank 1 not pareto"
[ "$(grep -c '^[0-9]' "$tmp/tune/tune.csv")" = 2 ] || fail "tune.csv should rank the 2 feasible points"
out=$("$bin" tune "$tmp/t.ini" --grid layer.client.attempts=1..4 --objective max:ok_share \
      --constraint 'amplification<=0.5' --reps 3 -o "$tmp/tune0" 2>&1)
grep -q 'nothing is recommended' <<<"$out" || fail "an impossible constraint recommended something: $out"
grep -q 'amplification <= 0.500 broken by 4:' <<<"$out" || fail "the points an impossible constraint refused are not listed: $out"
# storm, over 20 replications: retries are what keeps it down, so the best
# number of attempts is 1, clearly (no tie); at a tenth of the load nothing
# fails, attempts make no difference: every point is tied with the best
# and a warning says why
out=$("$bin" tune storm --set run.duration=150s --grid layer.app.attempts=1..3 --objective max:ok_share \
      --reps 20 -o "$tmp/tune-storm" 2>&1) || fail "tune storm: $out"
grep -q '^  recommended: attempts=1$' <<<"$out" || fail "tune storm did not recommend 1 attempt: $out"
grep -q 'tied with it' <<<"$out" && fail "tune storm: a point tied with 1 attempt: $out"
grep -q 'warning:' <<<"$out" && fail "tune storm: a warning where attempts matter: $out"
out=$("$bin" tune storm --set run.duration=150s --set load.rate=100/s --grid layer.app.attempts=1..3 \
      --objective max:ok_share --reps 20 -o "$tmp/tune-calm" 2>&1) || fail "tune calm: $out"
grep -q 'tied with it: 2 points whose ok_share is the same' <<<"$out" || fail "tune calm: no tie flagged: $out"
grep -qE '^ +[23]= attempts=' <<<"$out" || fail "tune calm: the tied points are not marked: $out"
grep -q 'warning: layer.app.attempts makes no difference to ok_share' <<<"$out" || fail "tune calm: no warning: $out"
grep -q 'retries (almost) never happened' <<<"$out" || fail "tune calm: the warning does not say why: $out"
# run --reps
"$bin" run storm --set run.duration=80s --reps 4 -o "$tmp/reps" > "$tmp/reps.log" || fail "run --reps"
[ "$(wc -l < "$tmp/reps/replications.csv")" = 5 ] || fail "replications.csv rows"
head -1 "$tmp/reps/summary.csv" | grep -q '^scenario,reps,requests,requests_sd,requests_hw' || fail "summary.csv with --reps"
grep -q '±' "$tmp/reps.log" || fail "the human summary shows no half-widths"
# replication 0's row comes from the run that wrote its outputs, not from a
# second run: every row must equal what a sweep computes for the same jobs
# (the sweep's fourth column is the grid key)
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=3 --reps 4 -j 2 --quiet \
  -o "$tmp/reps-sweep" > /dev/null || fail "sweep of the same replications"
diff <(cut -d, -f4 --complement "$tmp/reps-sweep/jobs.csv") "$tmp/reps/replications.csv" > /dev/null ||
  fail "run --reps rows differ from a sweep's jobs: $(diff <(cut -d, -f4 --complement "$tmp/reps-sweep/jobs.csv") "$tmp/reps/replications.csv" | head -5)"
# bad input: exit 2 and a message naming the problem
expect2() { local pat=$1; shift; local out; out=$("$@" 2>&1); local rc=$?
  [ $rc = 2 ] && grep -q -- "$pat" <<<"$out" || fail "$* -> $rc: $out (wanted /$pat/)"; }
expect2 'the range does not end' "$bin" sweep storm --grid layer.app.attempts=5..1 -o "$tmp/x"
expect2 'empty value' "$bin" sweep storm --grid layer.app.backoff=none,,full -o "$tmp/x"
expect2 'KEY=V1,V2' "$bin" sweep storm --grid layer.app.attempts -o "$tmp/x"
expect2 "unknown key 'atempts'" "$bin" sweep storm --grid layer.app.atempts=1..2 -o "$tmp/x"
expect2 'K/N with 1 <= K <= N' "$bin" sweep storm --grid layer.app.attempts=1..2 --shard 5/4
expect2 'K/N with 1 <= K <= N' "$bin" sweep storm --grid layer.app.attempts=1..2 --shard 0/4
expect2 'max:METRIC or min:METRIC' "$bin" tune storm --grid layer.app.attempts=1..2 --objective ok_share
expect2 'METRIC<=VALUE' "$bin" tune storm --grid layer.app.attempts=1..2 --objective max:ok_share --constraint 'lat_p99<800ms'
# Every metric in every experiment (issue 31): a service's and a cache's
# columns in tune, sweep and --sort; the same summary schema from compare,
# sweep and run --reps; every replication of --reps 5000 in the statistics.
out=$("$bin" tune cascade --grid layer.edge-api.attempts=1..3 --objective min:db_utilization --reps 3 \
      -o "$tmp/tune-db" 2>&1) || fail "tune --objective min:db_utilization: $out"
grep -qE '^  recommended: edge-api\.attempts=[123]$' <<<"$out" || fail "tune on db_utilization recommends nothing: $out"
head -1 "$tmp/tune-db/tune.csv" | grep -q ',db_utilization,db_utilization_sd,db_utilization_hw,' || fail "tune.csv lacks db_utilization"
"$bin" sweep cache-flush --grid cache.objects.coalesce=true,false --reps 3 --sort max:objects_hit_ratio \
      -o "$tmp/sweep-cache" > "$tmp/sweep-cache.log" 2>&1 || fail "sweep cache-flush: $(cat "$tmp/sweep-cache.log")"
python3 - "$tmp/sweep-cache/sweep.csv" <<'PY' || fail "sweep.csv: objects_hit_ratio and its _hw"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, rows
for r in rows:
    assert 0 < float(r["objects_hit_ratio"]) <= 1 and float(r["objects_hit_ratio_hw"]) >= 0, r
    assert r["reps"] == "3", r
PY
grep -q 'objects_hit_ratio' "$tmp/sweep-cache.log" || fail "--sort max:objects_hit_ratio: the column is not shown"
out=$("$bin" sweep cache-flush --grid cache.objects.coalesce=true,false --sort max:objects_hit_ratioo -o "$tmp/nosort" 2>&1) \
  && fail "--sort with a misspelt column succeeded"
grep -q "did you mean 'objects_hit_ratio'" <<<"$out" || fail "--sort misspelt: $out"
[ ! -e "$tmp/nosort" ] || fail "a refused --sort wrote its directory"
"$bin" run storm --set run.duration=70s --reps 2 -o "$tmp/schema-run" > /dev/null || fail "run --reps 2"
"$bin" sweep storm --set run.duration=70s --grid layer.app.attempts=3 --reps 2 -o "$tmp/schema-sweep" > /dev/null || fail "sweep"
"$bin" compare storm --set run.duration=70s --vary layer.app.attempts=3 --reps 2 -o "$tmp/schema-compare" > /dev/null || fail "compare"
from_reps() { head -1 "$1" | sed 's/^.*,reps,/reps,/'; }
r=$(from_reps "$tmp/schema-run/summary.csv")
[ "$r" = "$(from_reps "$tmp/schema-sweep/sweep.csv")" ] || fail "sweep.csv's columns from reps on differ from run --reps'"
[ "$r" = "$(from_reps "$tmp/schema-compare/summary.csv")" ] || fail "compare's summary.csv columns from reps on differ from run --reps'"
grep -q ',amplification_sd,amplification_hw,' <<<"$r" || fail "the schema lacks NAME_sd and NAME_hw"
cmp -s <(tail -n +2 "$tmp/schema-run/summary.csv" | cut -d, -f2-) <(tail -n +2 "$tmp/schema-sweep/sweep.csv" | cut -d, -f3-) \
  || fail "run --reps and a one-point sweep of the same replications differ"
# tune.csv: the feasible points by rank, then the infeasible in grid order,
# each with feasible, pareto, tied, score and every column of the sweep
"$bin" tune storm --set run.duration=70s --grid load.rate=100/s,2000/s,150/s,3000/s --objective max:ok_share \
  --constraint 'ok_share >= 0.99' -o "$tmp/tune5" > /dev/null 2>&1 || fail "tune with two infeasible points"
python3 - "$tmp/tune5/tune.csv" <<'PY' || fail "tune.csv: the order of ranked and infeasible points, or its columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["rank"], r["point"], r["feasible"]) for r in rows] == [("1", "0", "1"), ("2", "2", "1"), ("", "1", "0"), ("", "3", "0")], rows
assert rows[0]["pareto"] == "1" and rows[2]["score"] == "" and float(rows[0]["score"]) == float(rows[0]["ok_share"])
assert all(k in rows[0] for k in ("app_retries", "app_retries_sd", "app_retries_hw", "peak_rate_1s_hw"))
PY
# experiment.csv records its columns (format 2): a directory of format 1, or
# with other columns, is refused with a message, never misread
cp -r "$tmp/schema-sweep" "$tmp/fmt1" && sed -i '/^format,/d' "$tmp/fmt1/experiment.csv"
out=$("$bin" sweep storm --set run.duration=70s --grid layer.app.attempts=3 --reps 2 --resume -o "$tmp/fmt1" 2>&1) \
  && fail "--resume of a format 1 directory succeeded"
grep -q 'experiment.csv:3: written in format 1, which does not record its columns' <<<"$out" || fail "--resume of a format 1 directory: $out"
out=$("$bin" merge "$tmp/fmt1" -o "$tmp/fmt1-merged" 2>&1) && fail "merge of a format 1 directory succeeded"
grep -q 'written in format 1' <<<"$out" || fail "merge of a format 1 directory: $out"
cp -r "$tmp/schema-sweep" "$tmp/cols" && sed -i 's/^column,app_retries,count$/column,app_retry,count/' "$tmp/cols/experiment.csv"
out=$("$bin" sweep storm --set run.duration=70s --grid layer.app.attempts=3 --reps 2 --resume -o "$tmp/cols" 2>&1) \
  && fail "--resume with other columns succeeded"
grep -q 'holds another experiment: the columns differ' <<<"$out" || fail "--resume with other columns: $out"
out=$("$bin" merge "$tmp/cols" -o "$tmp/cols-merged" 2>&1) && fail "merge with a header that is not experiment.csv's succeeded"
grep -q 'jobs.csv:1: not the jobs.csv header of this experiment' <<<"$out" || fail "merge with other columns: $out"
"$bin" run "$(dirname "$0")/golden/small.ini" --set run.duration=3s --set run.warmup=0s --set phase.spike.start=1s \
  --set phase.spike.end=2s --set phase.brownout.start=2s --set phase.brownout.end=2500ms --reps 5000 \
  -o "$tmp/reps5000" > /dev/null || fail "run --reps 5000"
python3 - "$tmp/reps5000" <<'PY' || fail "--reps 5000 does not use every replication"
import csv, statistics, sys
d = sys.argv[1]
reps = list(csv.DictReader(open(d + "/replications.csv")))
s = next(csv.DictReader(open(d + "/summary.csv")))
assert len(reps) == 5000 and s["reps"] == "5000", (len(reps), s["reps"])
x = [float(r["requests"]) for r in reps]
assert abs(float(s["requests"]) - statistics.fmean(x)) <= 1e-8 * statistics.fmean(x), (s["requests"], statistics.fmean(x))
assert abs(float(s["requests_sd"]) - statistics.stdev(x)) <= 1e-6 * statistics.stdev(x), (s["requests_sd"], statistics.stdev(x))
PY

finish
