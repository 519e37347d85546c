#!/usr/bin/env bash
# Plots and compare: every plot script runs on small real outputs and writes
# a non-empty PNG and SVG; compare writes its combined files with a variant
# column. Skipped (exit 77, reported as skipped by ctest) without gnuplot.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if ! command -v gnuplot > /dev/null; then
  echo "gnuplot not found: plot tests skipped"
  exit 77
fi
check() { # files that must exist and be non-empty
  for f in "$@"; do
    [ -s "$f" ] || fail "$f missing or empty"
  done
}
"$bin" run storm --set run.duration=90s -o "$tmp/run" --plot > "$tmp/run.log" || { cat "$tmp/run.log"; exit 1; }
for fig in load queue latency cdf attempts; do check "$tmp/run/$fig.png" "$tmp/run/$fig.svg"; done
grep -q '<svg' "$tmp/run/load.svg" || fail "load.svg is not SVG"
head -c 8 "$tmp/run/load.png" | grep -q PNG || fail "load.png is not PNG"
"$bin" compare storm --set run.duration=90s --vary layer.app.attempts=1,3 -o "$tmp/cmp" --plot > "$tmp/cmp.log" || { cat "$tmp/cmp.log"; exit 1; }
check "$tmp/cmp/compare.png" "$tmp/cmp/compare.svg" "$tmp/cmp/summary.csv" "$tmp/cmp/timeseries.csv" \
      "$tmp/cmp/attempts=1/summary.csv" "$tmp/cmp/attempts=3/summary.csv"
head -1 "$tmp/cmp/summary.csv" | grep -q '^variant,layer.app.attempts,scenario,' || fail "summary.csv header"
[ "$(wc -l < "$tmp/cmp/summary.csv")" = 3 ] || fail "summary.csv rows"
"$bin" compare aws-occ --vary layer.app.backoff=none,full --vary load.clients=10,20 --reps 2 -o "$tmp/occ" --plot > "$tmp/occ.log" || { cat "$tmp/occ.log"; exit 1; }
check "$tmp/occ/occ.png" "$tmp/occ/occ.svg" "$tmp/occ/replications.csv"
[ "$(wc -l < "$tmp/occ/replications.csv")" = 9 ] || fail "replications.csv rows"
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=1..2 --grid layer.app.timeout=100ms,200ms \
  --reps 2 -o "$tmp/sweep" --quiet --plot > "$tmp/sweep.log" || { cat "$tmp/sweep.log"; exit 1; }
for m in ok_share amplification lat_p99; do check "$tmp/sweep/sweep_$m.png" "$tmp/sweep/sweep_$m.svg"; done
"$bin" sweep storm --set run.duration=80s --grid layer.app.attempts=1..3 --reps 2 -o "$tmp/sweep1" --quiet --plot > /dev/null
check "$tmp/sweep1/sweep_ok_share.png"
# plot on a directory with nothing to draw is a clear error
"$bin" plot "$tmp" > "$tmp/empty.log" 2>&1 && fail "plot on an empty directory succeeded"
grep -q 'no retrystorm output to plot' "$tmp/empty.log" || { echo "FAIL: message"; cat "$tmp/empty.log"; fails=$((fails + 1)); }
ls -a "$tmp/run" "$tmp/cmp" | grep -q '\.tmp' && fail "temporary files left"
finish
