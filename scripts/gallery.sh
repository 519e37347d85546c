#!/usr/bin/env bash
# Regenerates the gallery of docs/experiments.md: runs every gallery scenario (and the
# comparisons that go with them) with --plot under out/gallery/, and copies
# one figure of each to plots/gallery/NAME.png, and the fingerprint of the
# data each was drawn from to plots/gallery/DATA.sha256. The list is
# scripts/gallery-list.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
rs_need_npm
rs_need_packages "${RS_BUILD_PACKAGES[@]}" "${RS_PLOT_PACKAGES[@]}"
rs_build_release
bin=./build/retrystorm
out=out/gallery
mkdir -p plots/gallery
. scripts/gallery-list.sh
sums=plots/gallery/DATA.sha256
: > "$sums.tmp"
draw() { # run|compare name figure [args...]
  local kind=$1 name=$2 fig=$3; shift 3
  "$bin" "$kind" "$name" -o "$out/$name" --plot "$@" > /dev/null
  cp "$out/$name/$fig.png" "plots/gallery/$name.png"
  printf '%s  %s\n' "$(gallery_fingerprint "$out/$name")" "$name" >> "$sums.tmp"
  echo "plots/gallery/$name.png"
}
gallery_each draw
# what each figure was drawn from: tests/gallery_test.sh fails when a run
# of the same commands gives other data (the figure is stale)
mv "$sums.tmp" "$sums"
