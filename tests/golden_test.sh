#!/usr/bin/env bash
# Golden outputs: runs each tests/golden/NAME.ini and compares every output
# file, byte for byte, with tests/golden/NAME/ (summary.csv and summary.json
# without their wall-clock column wall_s). RS_UPDATE_GOLDEN=1 rewrites the expected files.
set -euo pipefail
bin=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
strip_wall() { # drop the last column (wall_s) of summary.csv
  sed 's/,[^,]*$//' "$1"
}
for ini in "$dir"/*.ini; do
  name=$(basename "$ini" .ini)
  "$bin" run "$ini" -o "$tmp/$name" > /dev/null
  strip_wall "$tmp/$name/summary.csv" > "$tmp/$name/summary.nowall"
  rm "$tmp/$name/summary.csv"
  sed -E 's/, "wall_s": [0-9.eE+-]+//' "$tmp/$name/summary.json" > "$tmp/$name/summary.json.nowall"
  rm "$tmp/$name/summary.json"
  # scenario.ini names its source path, which depends on the checkout
  sed -i '1d' "$tmp/$name/scenario.ini"
  if [ "${RS_UPDATE_GOLDEN:-0}" = 1 ]; then
    rm -rf "${dir:?}/$name" && cp -r "$tmp/$name" "$dir/$name"
    echo "updated $dir/$name"
    continue
  fi
  for f in "$dir/$name"/*; do
    if ! cmp -s "$f" "$tmp/$name/$(basename "$f")"; then
      echo "golden mismatch: $name/$(basename "$f")"
      diff "$f" "$tmp/$name/$(basename "$f")" | head -20 || true # (diff fails, and head may cut it off)
      status=1
    fi
  done
  [ "$(ls "$dir/$name" | wc -l)" = "$(ls "$tmp/$name" | wc -l)" ] || { echo "golden: file sets differ for $name"; status=1; }
done
exit $status
