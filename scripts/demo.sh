#!/usr/bin/env bash
# Installs what is missing, builds a Release binary, runs the built-in
# default scenario (storm) and, with gnuplot, draws load over time.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_packages "${RS_BUILD_PACKAGES[@]}" gnuplot-nox
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$(nproc)" --target retrystorm > /dev/null
echo "== retrystorm (the built-in 'storm' scenario)"
./build/retrystorm -o out/storm
echo
echo "== the same with one attempt instead of three"
./build/retrystorm --set layer.app.attempts=1 -o out/storm-no-retries | grep -E 'recover|ok  |exhausted'
if command -v gnuplot > /dev/null; then
  gnuplot -e "dir='out/storm'; out='out/storm/load.png'" plots/load.gp
  gnuplot -e "dir='out/storm-no-retries'; out='out/storm-no-retries/load.png'" plots/load.gp
  echo
  echo "figures: out/storm/load.png, out/storm-no-retries/load.png"
else
  echo "gnuplot not found: no figures drawn"
fi
echo "CSV outputs: out/storm/ and out/storm-no-retries/"
