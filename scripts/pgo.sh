#!/usr/bin/env bash
# Profile-guided Release build of retrystorm (issue 17), in DIR (default
# build-pgo): builds it instrumented (-DRS_PGO=generate), trains it on every
# built-in scenario and on scripts/bench/mm1.ini (one run each, their own
# seeds, one thread: the profile is the same on every run, so is the
# binary), then rebuilds it in the same directory with the profile
# (-DRS_PGO=use). Results are the same bytes as a plain Release build's;
# only the speed differs (scripts/bench.sh --pgo measures both). Takes about
# a minute and a half on 2 cores.
# Usage: scripts/pgo.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_packages "${RS_BUILD_PACKAGES[@]}"
dir=$(realpath -m "${1:-build-pgo}")
prof=$dir/pgo-profile
# the profile directory holds only what an instrumented build wrote (.gcda
# files): anything else in it is not ours, and nothing is removed
if [ -d "$prof" ] && find "$prof" ! -type d ! -name '*.gcda' | grep -q .; then
  echo "pgo.sh: $prof holds files other than .gcda profiles; not removing them" >&2
  exit 1
fi
[ -d "$prof" ] && find "$prof" -type f -name '*.gcda' -delete
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DRS_PGO=generate \
  -DRS_PGO_DIR="$prof" > /dev/null
cmake --build "$dir" -j "$(nproc)" --target retrystorm > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# stderr to a file: on a terminal a run draws its progress, which would
# change the profile (and the binary) from one machine to another
for s in $("$dir/retrystorm" list | awk '{print $1}') scripts/bench/mm1.ini; do
  "$dir/retrystorm" run "$s" -o "$out/run" --quiet > /dev/null 2> "$out/err" ||
    { cat "$out/err" >&2; echo "pgo.sh: the training run of $s failed" >&2; exit 1; }
  rm -rf "$out/run"
done
n=0
[ -d "$prof" ] && n=$(find "$prof" -name '*.gcda' | wc -l)
[ "$n" -gt 0 ] || { echo "pgo.sh: the training wrote no profile under $prof" >&2; exit 1; }
cmake -S . -B "$dir" -DRS_PGO=use > /dev/null
cmake --build "$dir" -j "$(nproc)" --target retrystorm > /dev/null
echo "$dir/retrystorm: trained on $(($("$dir/retrystorm" list | wc -l) + 1)) scenarios ($n profiles)"
