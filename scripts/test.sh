#!/usr/bin/env bash
# Installs what is missing, then builds twice and runs every test through
# ctest: a Release build with warnings as errors, and a build with
# AddressSanitizer + UndefinedBehaviorSanitizer (and the engine's
# self-checks) on; between them, a daily sample of the mutants of
# tests/mutants must each be killed (scripts/mutate.sh); then fuzzes the
# scenario parser and the readers of result directories for 60 s each with
# libFuzzer and runs a small scenario of each kind under valgrind. Exits
# non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_npm
rs_need_packages "${RS_BUILD_PACKAGES[@]}" "${RS_PLOT_PACKAGES[@]}" "${RS_TEST_PACKAGES[@]}"
jobs=$(nproc)

echo "== release build (warnings are errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DRS_WERROR=ON -DBUILD_TESTING=ON > /dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== mutation testing: a sample of tests/mutants, drawn by today's date (scripts/mutate.sh)"
# Each sampled mutant must make a test fail; the full list's score is in
# docs/validation.md. A failure names the mutants, to replay with scripts/mutate.sh NAME.
scripts/mutate.sh --sample 3

echo "== sanitizer build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_WERROR=ON -DRS_SANITIZE=ON -DBUILD_TESTING=ON > /dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
echo "== fuzzing the scenario parser and --set for 60 s (libFuzzer)"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_FUZZ=ON > /dev/null
cmake --build build-fuzz -j "$jobs" --target fuzz_scenario > /dev/null
# Says how a libFuzzer run failed, from the inputs it saved in build-fuzz/
# (a timeout is not a crash), and stops.
fuzz_failed() { # fuzz_failed LOG [CORPUS]
  # what the target said (before libFuzzer's stack trace), the end of the
  # log, and the saved inputs, so that a failure on CI can be replayed
  grep -v -E '^(#[0-9]|INFO:|MS:|    #)' "$1" | head -40
  tail -15 "$1"
  for f in build-fuzz/crash-* build-fuzz/leak-* build-fuzz/oom-* build-fuzz/timeout-*; do
    [ -e "$f" ] || continue
    echo "$f, $(wc -c < "$f") bytes, base64 (base64 -d > input):"
    head -c 8192 "$f" | base64 -w 100
  done
  if compgen -G 'build-fuzz/crash-*' > /dev/null || compgen -G 'build-fuzz/leak-*' > /dev/null ||
     compgen -G 'build-fuzz/oom-*' > /dev/null; then
    echo "the fuzzer found a crash (build-fuzz/crash-*, leak-* or oom-*): add the input to ${2:-tests/fuzz}/ and fix it"
  elif compgen -G 'build-fuzz/timeout-*' > /dev/null || grep -q 'libFuzzer: timeout' "$1"; then
    echo "timeout: an input ran past its limit (build-fuzz/timeout-*): a hang to fix, or, if it is" \
         "legitimately slow under the sanitizers, shrink it or keep it as tests/fuzz/slow-* (limit 120 s)"
  else
    echo "the fuzzer failed without saving an input: see $1"
  fi
  exit 1
}
rm -f build-fuzz/crash-* build-fuzz/leak-* build-fuzz/oom-* build-fuzz/timeout-* build-fuzz/slow-unit-*
# Inputs legitimately slow under the sanitizers (tests/fuzz/slow-*: millions
# of events) are replayed with their own limit, and left out of the corpus
# that is fuzzed with 10 s per input.
slow=(tests/fuzz/slow-*)
if [ -e "${slow[0]}" ] && ! ./build-fuzz/tests/fuzz_scenario -timeout=120 -artifact_prefix=build-fuzz/ \
       "${slow[@]}" > build-fuzz/fuzz-slow.log 2>&1; then
  fuzz_failed build-fuzz/fuzz-slow.log
fi
corpus=$(mktemp -d)
find tests/fuzz -maxdepth 1 -type f ! -name 'slow-*' -exec cp {} "$corpus"/ \;
if ! ./build-fuzz/tests/fuzz_scenario "$corpus" -max_total_time=60 -max_len=4096 -timeout=10 \
       -artifact_prefix=build-fuzz/ -print_final_stats=1 > build-fuzz/fuzz.log 2>&1; then
  fuzz_failed build-fuzz/fuzz.log
fi
grep -E 'stat::number_of_executed_units' build-fuzz/fuzz.log || true
rm -rf "$corpus"

echo "== fuzzing the readers of result directories (merge, --resume) for 60 s (libFuzzer)"
cmake --build build-fuzz -j "$jobs" --target fuzz_readers > /dev/null
rm -f build-fuzz/crash-* build-fuzz/leak-* build-fuzz/oom-* build-fuzz/timeout-* build-fuzz/slow-unit-*
corpus=$(mktemp -d)
cp tests/fuzz-readers/* "$corpus"/
# halt_on_error: the fuzz build only logs undefined behaviour otherwise
if ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./build-fuzz/tests/fuzz_readers "$corpus" \
       -max_total_time=60 -max_len=16384 -timeout=10 -artifact_prefix=build-fuzz/ \
       -print_final_stats=1 > build-fuzz/fuzz-readers.log 2>&1; then
  fuzz_failed build-fuzz/fuzz-readers.log tests/fuzz-readers
fi
grep -E 'stat::number_of_executed_units' build-fuzz/fuzz-readers.log || true
rm -rf "$corpus"

echo "== valgrind: a small scenario of each kind"
vg=(valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect)
vtmp=$(mktemp -d)
"${vg[@]}" ./build/retrystorm run storm --set run.duration=70s --set load.rate=100/s -o "$vtmp/a"
"${vg[@]}" ./build/retrystorm run payments-safe --set run.duration=400s --set load.rate=5/s -o "$vtmp/b"
"${vg[@]}" ./build/retrystorm run outage-breaker --set run.duration=100s --set load.rate=50/s -o "$vtmp/c"
"${vg[@]}" ./build/retrystorm run herd --set run.duration=35s --set load.clients=100 -o "$vtmp/d"
"${vg[@]}" ./build/retrystorm run aws-occ --set load.clients=20 -o "$vtmp/e"
"${vg[@]}" ./build/retrystorm run layers-27 --set run.duration=70s --set load.rate=20/s -o "$vtmp/f"
"${vg[@]}" ./build/retrystorm run storm-budget --set run.duration=70s --set load.rate=100/s -o "$vtmp/g"
"${vg[@]}" ./build/retrystorm compare retry-after --set run.duration=40s --vary layer.app.retry_after=honor,ignore -o "$vtmp/h"
"${vg[@]}" ./build/retrystorm sweep storm --set run.duration=70s --set load.rate=100/s \
  --grid layer.app.attempts=1..2 --reps 2 -j 2 --quiet -o "$vtmp/i"
# Instructions per event, counted by callgrind (not time: the same on any
# load), against the baselines in tests/perf/: more than 15 % above one is a
# regression to explain (and the baseline to update with the reason). storm
# is the small hot path; fleet-100k (100,000 closed-loop clients, each with
# a breaker and a budget) goes through the calendar, the far heap and the
# prefetching of large runs.
perf_check() { # name baseline-file scenario [--set ...]
  local name=$1 file=$2; shift 2
  valgrind --tool=callgrind --callgrind-out-file="$vtmp/cg-$name" ./build/retrystorm run "$@" \
    -o "$vtmp/perf-$name" > /dev/null 2> "$vtmp/cg-$name.log"
  local ir ev base ipe
  ir=$(grep -oE 'Collected : [0-9]+' "$vtmp/cg-$name.log" | grep -oE '[0-9]+')
  ev=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} NR==2{print $h["events"]}' "$vtmp/perf-$name/summary.csv")
  base=$(cat "tests/perf/$file")
  ipe=$((ir / ev))
  echo "== instructions per event on $name: $ipe (baseline $base, limit +15 %)"
  if [ "$ipe" -gt $((base * 115 / 100)) ]; then
    echo "instructions per event on $name regressed by more than 15 %"
    exit 1
  fi
}
perf_check storm-90s storm-90s-instructions-per-event storm --set run.duration=90s
perf_check fleet-100k fleet-100k-60s-instructions-per-event scenarios/fleet.ini \
  --set run.duration=60s --set run.bucket=1s --set load.clients=100000 --set server.workers=200 \
  --set phase.brownout.start=30s --set phase.brownout.end=40s
rm -rf "$vtmp"
echo "all tests passed"
