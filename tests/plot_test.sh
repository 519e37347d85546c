#!/usr/bin/env bash
# Plots and compare: every plot script runs on small real outputs and writes
# a non-empty PNG and SVG; compare writes its combined files with a variant
# column. Skipped (exit 77, reported as skipped by ctest) without gnuplot.
set -uo pipefail
bin=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v gnuplot > /dev/null; then
  echo "gnuplot not found: plot tests skipped"
  exit 77
fi
fails=0
check() { # files that must exist and be non-empty
  for f in "$@"; do
    [ -s "$f" ] || { echo "FAIL: $f missing or empty"; fails=$((fails + 1)); }
  done
}
"$bin" run storm --set run.duration=90s -o "$tmp/run" --plot > "$tmp/run.log" || { cat "$tmp/run.log"; exit 1; }
for fig in load queue latency cdf attempts; do check "$tmp/run/$fig.png" "$tmp/run/$fig.svg"; done
grep -q '<svg' "$tmp/run/load.svg" || { echo "FAIL: load.svg is not SVG"; fails=$((fails + 1)); }
head -c 8 "$tmp/run/load.png" | grep -q PNG || { echo "FAIL: load.png is not PNG"; fails=$((fails + 1)); }
"$bin" compare storm --set run.duration=90s --vary layer.app.attempts=1,3 -o "$tmp/cmp" --plot > "$tmp/cmp.log" || { cat "$tmp/cmp.log"; exit 1; }
check "$tmp/cmp/compare.png" "$tmp/cmp/compare.svg" "$tmp/cmp/summary.csv" "$tmp/cmp/timeseries.csv" \
      "$tmp/cmp/attempts=1/summary.csv" "$tmp/cmp/attempts=3/summary.csv"
head -1 "$tmp/cmp/summary.csv" | grep -q '^variant,layer.app.attempts,scenario,' || { echo "FAIL: summary.csv header"; fails=$((fails + 1)); }
[ "$(wc -l < "$tmp/cmp/summary.csv")" = 3 ] || { echo "FAIL: summary.csv rows"; fails=$((fails + 1)); }
"$bin" compare aws-occ --vary layer.app.backoff=none,full --vary load.clients=10,20 --reps 2 -o "$tmp/occ" --plot > "$tmp/occ.log" || { cat "$tmp/occ.log"; exit 1; }
check "$tmp/occ/occ.png" "$tmp/occ/occ.svg" "$tmp/occ/replications.csv"
[ "$(wc -l < "$tmp/occ/replications.csv")" = 9 ] || { echo "FAIL: replications.csv rows"; fails=$((fails + 1)); }
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=1..2 --grid layer.app.timeout=100ms,200ms \
  --reps 2 -o "$tmp/sweep" --quiet --plot > "$tmp/sweep.log" || { cat "$tmp/sweep.log"; exit 1; }
for m in ok_share amplification lat_p99; do check "$tmp/sweep/sweep_$m.png" "$tmp/sweep/sweep_$m.svg"; done
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=1..3 --reps 2 -o "$tmp/sweep1" --quiet --plot > /dev/null
check "$tmp/sweep1/sweep_ok_share.png"
# plot on a directory with nothing to draw is a clear error
"$bin" plot "$tmp" > "$tmp/empty.log" 2>&1 && { echo "FAIL: plot on an empty directory succeeded"; fails=$((fails + 1)); }
grep -q 'no retrystorm output to plot' "$tmp/empty.log" || { echo "FAIL: message"; cat "$tmp/empty.log"; fails=$((fails + 1)); }
ls -a "$tmp/run" "$tmp/cmp" | grep -q '\.tmp' && { echo "FAIL: temporary files left"; fails=$((fails + 1)); }
echo "$fails failure(s)"
[ "$fails" = 0 ]
