#!/usr/bin/env bash
# Benchmark: events per second and peak memory (max RSS) of a Release build
# (and, for the short runs, of the profile-guided build of scripts/pgo.sh,
# interleaved with it) on the million-customer M/M/1 of issue 17
# (scripts/bench/mm1.ini), on the default scenario, on a large open-loop
# scenario (100,000 clients,
# 20,000 requests/s, 600 s, and at half the length to show that memory does
# not grow with run length), and on the fleet of a million closed-loop
# clients (10 minutes with and without breakers and budgets, and the full
# simulated hour); then instructions per event and a sweep on one and two
# threads, and what Run costs on the live page for each built-in. Takes
# about ten minutes. Not a test: nothing here passes or
# fails on speed.
#
# The table is also written as CSV, out/bench/bench.csv (scenario, events,
# wall_s of the simulation, process_s of the whole process, events_per_s,
# max_rss_mb, instructions_per_event where callgrind measured it), and
# with --readme the performance table of docs/performance.md (between the
# bench:begin and bench:end markers; the README's before the manual moved to
# docs/) is regenerated from it, not typed by hand.
set -euo pipefail
readme=0
[ "${1:-}" = --readme ] && readme=1
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_npm
rs_need_packages "${RS_BUILD_PACKAGES[@]}" time bc valgrind curl
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF > /dev/null
cmake --build build-bench -j "$(nproc)" > /dev/null
bin=build-bench/retrystorm
# the profile-guided build beside it (scripts/pgo.sh: trained on the built-ins)
scripts/pgo.sh build-bench-pgo > /dev/null
pgo=build-bench-pgo/retrystorm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv="$tmp/bench.csv"
echo "scenario,events,wall_s,process_s,events_per_s,max_rss_mb,instructions_per_event" > "$csv"
printf '%-28s %12s %9s %9s %12s %10s %8s\n' scenario events wall_s process_s Mevents/s maxRSS_MB instr/ev
summary_field() { awk -F, -v c="$2" 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h[c]}' "$1/summary.csv"; }
# Instructions per event of one run under callgrind (counts, not time:
# stable whatever else the machine does), start-up and outputs included.
ipe_of() { # scenario [--set ...]
  rm -rf "$tmp/cg-out"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" run "$@" -o "$tmp/cg-out" > /dev/null 2> "$tmp/cg.log"
  local ir
  ir=$(grep -oE 'Collected : [0-9]+' "$tmp/cg.log" | grep -oE '[0-9]+')
  echo $((ir / $(summary_field "$tmp/cg-out" events)))
}
# median VALUES...: the median (the mean of the middle two for an even count)
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
# bench NAME REPS [--pgo] [--ipe] SCENARIO [--set ...]: REPS runs of the
# Release build (and with --pgo, of the profile-guided one, each run of one
# followed by one of the other), the median of each: simulation time and
# whole-process time; max RSS of one more run. A row per build; instructions per event
# (--ipe) are the Release build's, counted once.
bench() {
  local name=$1 reps=$2 ipe='' builds=("$bin"); shift 2
  if [ "$1" = --pgo ]; then shift; builds+=("$pgo"); fi
  if [ "$1" = --ipe ]; then shift; ipe=$(ipe_of "$@"); fi
  local -A walls procs rsss
  local b events
  for _ in $(seq "$reps"); do
    for b in "${builds[@]}"; do
      # the whole process by bash's time (fork, exec, run, exit: no
      # wrapper's own start-up in it, as with GNU time, whose %e also has
      # two decimals only); max RSS by GNU time in a run of its own
      rm -rf "$tmp/out"
      local TIMEFORMAT=%3R
      { time "$b" run "$@" -o "$tmp/out" > /dev/null; } 2> "$tmp/proc" ||
        { cat "$tmp/proc" >&2; echo "bench.sh: $b run $* failed" >&2; exit 1; }
      events=$(summary_field "$tmp/out" events)
      walls[$b]+=" $(summary_field "$tmp/out" wall_s)"
      procs[$b]+=" $(tail -1 "$tmp/proc")"
      if [ -z "${rsss[$b]:-}" ]; then
        rm -rf "$tmp/out"
        /usr/bin/time -f '%M' -o "$tmp/rss" "$b" run "$@" -o "$tmp/out" > /dev/null
        rsss[$b]=$(cat "$tmp/rss")
      fi
    done
  done
  for b in "${builds[@]}"; do
    local label=$name wall proc rss eps
    [ "$b" = "$pgo" ] && label="$name (PGO)"
    # shellcheck disable=SC2086 # the lists are space-separated numbers
    wall=$(median ${walls[$b]}) proc=$(median ${procs[$b]}) rss=${rsss[$b]}
    eps=$(echo "$events / $wall" | bc -l)
    rss=$(echo "$rss / 1024" | bc -l)
    printf '%-28s %12d %9.3f %9.3f %12.2f %10.1f %8s\n' "$label" "$events" "$wall" "$proc" \
      "$(echo "$eps / 1000000" | bc -l)" "$rss" "${ipe:--}"
    local ipe_col=
    if [ "$b" = "$bin" ]; then ipe_col=$ipe; fi
    printf '%s,%d,%.3f,%.3f,%.0f,%.1f,%s\n' "$label" "$events" "$wall" "$proc" "$eps" "$rss" \
      "$ipe_col" >> "$csv"
  done
}
# Wall time on a shared virtual machine varies from run to run (by half,
# at times, with where the host puts memory): short runs take the median
# of several, the builds interleaved so that both see the same machine.
# Cimba's benchmark (issue 17): 1,000,000 M/M/1 customers, lambda 0.9, mu 1
bench "mm1-1M-customers" 9 --pgo --ipe scripts/bench/mm1.ini
bench storm 9 --pgo --ipe storm
bench large-open-600s 1 scenarios/large-open.ini
bench large-open-300s 1 scenarios/large-open.ini --set run.duration=300s
bench fleet-1M-clients-10min 1 scenarios/fleet.ini --set run.duration=10m \
  --set phase.brownout.start=5m --set phase.brownout.end=6m
bench fleet-1M-plain-10min 1 scenarios/fleet.ini --set run.duration=10m \
  --set phase.brownout.start=5m --set phase.brownout.end=6m \
  --set layer.client.breaker=none --set layer.client.budget=none
# The issue's scale target: one simulated hour of a million clients (with
# the 5-minute brownout of scenarios/fleet.ini), on one core.
bench fleet-1M-clients-1h 1 scenarios/fleet.ini
# the fleet scaled down to 100,000 clients for 60 s: the run scripts/test.sh
# counts instructions on (tests/perf/)
bench fleet-100k-60s 3 --pgo --ipe scenarios/fleet.ini --set run.duration=60s --set run.bucket=1s \
  --set load.clients=100000 --set server.workers=200 --set phase.brownout.start=30s \
  --set phase.brownout.end=40s
# cascade (edge -> api -> db, 3 attempts at every tier) scaled 40x: 100,000
# clients at 20,000 requests/s, every capacity x40 (issue 13's target)
bench cascade-100k-20k/s 3 cascade --set load.clients=100000 --set load.rate=20000/s \
  --set service.db.workers=400 --set service.api.workers=80000 --set service.edge.workers=80000
# cache-flush scaled 20x: 20,000 requests/s over 10,000,000 Zipf keys (the
# largest key space; 250 MB of cache state), db x20, coalescing on
bench cache-flush-20k/s-10M-keys 1 cache-flush --set load.rate=20000/s --set load.clients=100000 \
  --set load.keys=10000000 --set service.db.workers=80 --set cache.objects.coalesce=true

# Sweeps scale with cores: a 64-job sweep (16 points × 4 replications) of
# storm, 120 simulated seconds each, on one thread and on two.
echo
sweep() {
  local start end
  start=$(date +%s.%N)
  "$bin" sweep storm --set run.duration=120s --grid layer.app.attempts=1..4 \
    --grid layer.app.timeout=100ms..800ms*2 --reps 4 -j "$1" --quiet -o "$tmp/sweep-j$1" > /dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
t1=$(sweep 1)
t2=$(sweep 2)
cmp -s "$tmp/sweep-j1/sweep.csv" "$tmp/sweep-j2/sweep.csv" && same=identical || same=DIFFERENT
printf 'sweep of 64 jobs: -j 1 %.2f s, -j 2 %.2f s: %.2fx faster (results %s)\n' "$t1" "$t2" \
  "$(echo "$t1 / $t2" | bc -l)" "$same"

# The live page: what Run costs on the server (simulation and answer) for
# every built-in, through `retrystorm serve` on a free port; the page then
# draws in a few tens of milliseconds.
echo
"$bin" serve --port 0 > "$tmp/serve.log" 2>&1 &
serve_pid=$!
url=
for _ in $(seq 100); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/' "$tmp/serve.log" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
slowest=0
for s in $("$bin" list | awk '{print $1}'); do
  t=$(curl -s -o /dev/null -w '%{time_total}' --data-urlencode "scenario=$s" "${url}api/run")
  printf 'serve: Run of %-18s %6.3f s\n' "$s" "$t"
  if [ "$(echo "$t > $slowest" | bc -l)" = 1 ]; then slowest=$t; fi
done
kill "$serve_pid"
wait "$serve_pid" || true
printf 'serve: the slowest Run of a built-in took %.3f s\n' "$slowest"

mkdir -p out/bench
cp "$csv" out/bench/bench.csv
echo "the table as CSV: out/bench/bench.csv"
if [ "$readme" = 1 ]; then
  # docs/performance.md's table between its markers, from the CSV (nothing else touched)
  awk -F, -v cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" '
    function commas(x,   s) { s = x ""; while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); return s }
    NR == FNR { if (FNR > 1) row[++n] = $0; next }
    /<!-- bench:begin -->/ {
      print; print ""
      print "| run | events | simulation | whole process | events/s | max RSS | instructions/event |"
      print "|---|---|---|---|---|---|---|"
      for (i = 1; i <= n; i++) {
        split(row[i], f, ",")
        printf "| %s | %s | %.3f s | %.3f s | %.1f M | %.1f MB | %s |\n", f[1], commas(f[2]), f[3], f[4], f[5] / 1e6, f[6], f[7] == "" ? "-" : commas(f[7])
      }
      print ""; print "(`scripts/bench.sh --readme` on " cpu ", one core per run; the median of 9 runs for the first rows, (PGO) the profile-guided build of `scripts/pgo.sh`.)"
      print ""; skip = 1; next }
    /<!-- bench:end -->/ { skip = 0 }
    !skip' out/bench/bench.csv docs/performance.md > "$tmp/performance.md"
  cat "$tmp/performance.md" > docs/performance.md
  echo "docs/performance.md: the performance table regenerated"
fi
