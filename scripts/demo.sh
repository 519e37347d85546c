#!/usr/bin/env bash
# Installs what is missing, builds a Release binary, runs the built-in
# default scenario (storm) and the same without retries, and draws their
# figures with gnuplot.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_npm
rs_need_packages "${RS_BUILD_PACKAGES[@]}" "${RS_PLOT_PACKAGES[@]}"
rs_build_release
echo "== retrystorm (the built-in 'storm' scenario)"
./build/retrystorm -o out/storm --plot
echo
echo "== the same with one attempt instead of three"
./build/retrystorm --set layer.app.attempts=1 -o out/storm-no-retries --plot | grep -E 'recover|ok  |exhausted|figures'
echo
echo "look at out/storm/load.png and out/storm-no-retries/load.png; CSVs beside them"
echo "for the live page, where every knob reruns the storm: ./build/retrystorm serve (then open http://127.0.0.1:8080/)"
