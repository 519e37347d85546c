#!/usr/bin/env bash
# Sweeps: byte-identical results with -j 1 and -j 2, and when sharded four
# ways through GNU parallel and merged; tune's recommendation on a grid
# whose answer is known; run --reps; bad grids and shards.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
grid=(--set run.duration=80s --grid layer.app.attempts=1..3 --grid layer.app.timeout=200ms..800ms*2 --reps 3)
"$bin" sweep storm "${grid[@]}" -j 1 -o "$tmp/j1" --quiet > /dev/null || fail "sweep -j 1"
"$bin" sweep storm "${grid[@]}" -j 2 -o "$tmp/j2" --quiet > /dev/null || fail "sweep -j 2"
cmp -s "$tmp/j1/sweep.csv" "$tmp/j2/sweep.csv" || fail "-j 1 and -j 2 differ (sweep.csv)"
cmp -s "$tmp/j1/jobs.csv" "$tmp/j2/jobs.csv" || fail "-j 1 and -j 2 differ (jobs.csv)"
[ "$(wc -l < "$tmp/j1/sweep.csv")" = 10 ] || fail "sweep.csv should have 9 points"
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
grep -q 'best:  layer.client.attempts=2 ' <<<"$out" || fail "tune picked another point: $out"
[ "$(grep -c '^[0-9]' "$tmp/tune/tune.csv")" = 2 ] || fail "tune.csv should rank the 2 feasible points"
out=$("$bin" tune "$tmp/t.ini" --grid layer.client.attempts=1..4 --objective max:ok_share \
      --constraint 'amplification<=0.5' --reps 3 -o "$tmp/tune0" 2>&1)
grep -q 'nothing is recommended' <<<"$out" || fail "an impossible constraint recommended something: $out"
# run --reps
"$bin" run storm --set run.duration=80s --reps 4 -o "$tmp/reps" > "$tmp/reps.log" || fail "run --reps"
[ "$(wc -l < "$tmp/reps/replications.csv")" = 5 ] || fail "replications.csv rows"
head -1 "$tmp/reps/summary.csv" | grep -q '^reps,requests,requests_sd,requests_hw' || fail "summary.csv with --reps"
grep -q '±' "$tmp/reps.log" || fail "the human summary shows no half-widths"
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
finish
